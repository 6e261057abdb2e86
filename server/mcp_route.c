/*
 * mcp_route.c: the /mcp route, MCP's streamable HTTP transport around
 * mcp_handle: JSON responses (no SSE stream: GET answers 405 as the
 * transport allows), sessions issued at initialize and checked on later
 * requests.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include "../mcp/mcp.h"
#include "serverInt.h"

#define MCP_SESSIONS 1024

/* Sessions carry no protocol state (mcp_handle keeps none); they tie a
 * client's requests to the key that initialised them, and let a client end
 * them. The table is bounded: the least recently used session goes. */
static struct {
    char id[33];
    const api_key *key;
    int64_t used_ms;
} sessions[MCP_SESSIONS];
static pthread_mutex_t sessions_mu = PTHREAD_MUTEX_INITIALIZER;

static void session_new(const api_key *key, char out[33]) {
    unsigned char raw[16];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
        for (size_t i = 0; i < sizeof raw; i++) raw[i] = (unsigned char)rand();
    for (int i = 0; i < 16; i++) sprintf(out + 2 * i, "%02x", raw[i]);
    pthread_mutex_lock(&sessions_mu);
    int slot = 0;
    for (int i = 1; i < MCP_SESSIONS; i++)
        if (sessions[i].used_ms < sessions[slot].used_ms) slot = i;
    memcpy(sessions[slot].id, out, 33);
    sessions[slot].key = key;
    sessions[slot].used_ms = remem_now();
    pthread_mutex_unlock(&sessions_mu);
}

/* 1 if id is a live session of key (touching it); with drop, end it. */
static int session_check(const char *id, const api_key *key, int drop) {
    int found = 0;
    pthread_mutex_lock(&sessions_mu);
    for (int i = 0; i < MCP_SESSIONS; i++)
        if (sessions[i].used_ms && !strcmp(sessions[i].id, id) && sessions[i].key == key) {
            found = 1;
            if (drop)
                memset(&sessions[i], 0, sizeof sessions[i]);
            else
                sessions[i].used_ms = remem_now();
            break;
        }
    pthread_mutex_unlock(&sessions_mu);
    return found;
}

static int mcp_allowed(void *ctx, const char *ns, int right) {
    return key_allows(ctx, ns, (unsigned)right);
}

/* Is this message (or a batch holding one) an initialize request? */
static int is_initialize(json_t *msg) {
    if (json_is_array(msg)) {
        size_t i;
        json_t *m;
        json_array_foreach(msg, i, m) if (is_initialize(m)) return 1;
        return 0;
    }
    const char *method = json_string_value(json_object_get(msg, "method"));
    return method && !strcmp(method, "initialize");
}

static int known_protocol_version(const char *v) {
    static const char *const versions[] = {"2025-06-18", "2025-03-26", "2024-11-05"};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
        if (!strcmp(v, versions[i])) return 1;
    return 0;
}

static void mcp_http_error(reply *rp, int status, int code, const char *msg) {
    reply_json(rp, status,
               json_pack("{s:s,s:n,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", "error", "code", code,
                         "message", msg));
}

void server_mcp(request *rq, reply *rp) {
    const char *sid = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Mcp-Session-Id");
    const char *ver =
        MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "MCP-Protocol-Version");
    if (rq->route == R_MCP_GET) {
        snprintf(rp->allow, sizeof rp->allow, "POST, DELETE");
        reply_error(rp, 405, "REMEM_EMETHOD",
                    "this server offers no SSE stream; POST JSON-RPC messages");
        return;
    }
    if (rq->route == R_MCP_DELETE) {
        if (!sid)
            reply_error(rp, 400, "REMEM_EINVAL", "Mcp-Session-Id header required");
        else if (!session_check(sid, rq->key, 1))
            reply_error(rp, 404, "REMEM_ENOTFOUND", "no such MCP session");
        else
            rp->status = 204;
        return;
    }
    if (ver && !known_protocol_version(ver)) {
        mcp_http_error(rp, 400, -32600, "unsupported MCP-Protocol-Version");
        return;
    }
    json_t *msg = json_loadb(rq->body, rq->body_len, 0, NULL);
    int parsed = msg != NULL, init = parsed && is_initialize(msg);
    json_decref(msg);
    if (!init && sid && !session_check(sid, rq->key, 0)) {
        mcp_http_error(rp, 404, -32001, "unknown or expired MCP session: initialize again");
        return;
    }
    char err[512];
    remem *db = pool_get(&rq->srv->pool, NULL, err, sizeof err);
    if (!db) {
        mcp_http_error(rp, 503, -32603, err);
        return;
    }
    mcp_access acc = {mcp_allowed, (void *)rq->key};
    char *out =
        mcp_handle_groups(db, rq->body ? rq->body : "", rq->body_len,
                          rq->srv->keys_on ? &acc : NULL, rq->srv->mcp_groups);
    pool_put(&rq->srv->pool, db, NULL);
    if (!out) {
        rp->status = 202; /* only notifications or responses came */
        return;
    }
    /* A message that was not JSON at all is refused at the HTTP level too,
     * with mcp_handle's parse error as the body. */
    reply_text(rp, parsed ? 200 : 400, out, free, "application/json");
    if (init) session_new(rq->key, rp->session);
}

int server_mcp_groups(struct server *srv, char *err, size_t cap) {
    const char *tools = srv->cfg.mcp_tools;
    char why[256];
    remem *db = NULL;
    if (!tools && (db = pool_get(&srv->pool, NULL, err, cap))) tools = remem_setting(db, "mcp.tools");
    int rc = mcp_groups_parse(tools, &srv->mcp_groups, why, sizeof why);
    if (db) pool_put(&srv->pool, db, NULL);
    if (rc) snprintf(err, cap, "%s: %s", srv->cfg.mcp_tools ? "--tools" : "config mcp.tools", why);
    return rc;
}
