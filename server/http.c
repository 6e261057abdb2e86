/*
 * http.c: remem serve's life on libmicrohttpd. The daemon runs its own
 * thread pool (epoll per thread); each request goes through:
 *
 *   1. headers  (first call)  draining? framed one way (one Content-Length
 *               or Transfer-Encoding, one Host)? route known? method
 *               allowed? Host and Origin loopback-only without keys; the
 *               bearer key;
 *               Content-Type and Content-Length of a body. Any refusal is
 *               answered right here, before a byte of the body is read.
 *   2. body     (upload calls) copied up to --max-body; past it, dropped
 *               and counted (413 at the end; the connection is cut when a
 *               client keeps sending far past the limit).
 *   3. handler  (last call)   the connection is suspended and the request
 *               queued for a worker (work.c), which runs routes*.c on a
 *               pooled handle, keeps the reply and resumes the
 *               connection; the next call queues that reply. So an I/O
 *               thread never waits on a handler: a quick request is never
 *               stuck behind a slow one (an LLM call) that happened to
 *               share its thread. The queue is bounded: when full, 503
 *               with Retry-After, at once. Only the routes that touch no
 *               store (health, the API description, profiles) run inline.
 *   4. done     (completion)  metrics, free, in-flight count down.
 *
 * Shutdown: SIGINT/SIGTERM are blocked in every thread and taken by the
 * main thread with sigwait. Then the listening socket is closed (quiesce),
 * requests arriving on kept-alive connections get 503 with
 * "Connection: close", and the ones in flight finish (up to --grace; a
 * second signal cuts it short) before the daemon stops and every handle is
 * closed. Past the grace the requests still queued get 503, the LLM and
 * embedder calls under way are cut (remem_interrupt: they answer 504), and
 * a handler still running a moment later is left behind: the process
 * ends with _exit(1) (its handle cannot be closed under it). A request's
 * write is committed before its reply is queued, so a 2xx always means
 * durable.
 *
 * Export streaming is in export.c, the /mcp transport in mcp_route.c, the
 * route table in route_table.c, dispatch in routes.c: this file calls down
 * into them, never the other way.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "../mcp/mcp.h"
#include "serverInt.h"

/* Past the grace: how long the cut requests get to answer. */
#define DRAIN_CUT_MS     2500
/* While draining, an open connection with no request for this long is let
 * go (closed by the daemon's stop). */
#define DRAIN_IDLE_MS    500
/* Bodies from this size up are followed by heap_release once done. */
#define TRIM_AFTER_BYTES (256 * 1024)
/* A client still sending this far past --max-body is cut off. */
#define BODY_DROP_FACTOR 4

void serve_config_init(serve_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    remem_options_init(&cfg->opt);
    cfg->db_path = "./remem.db";
    cfg->listen = SERVE_DEFAULT_LISTEN;
    cfg->max_body = SERVE_DEFAULT_MAX_BODY;
    cfg->timeout_s = SERVE_DEFAULT_TIMEOUT_S;
    cfg->max_connections = SERVE_DEFAULT_MAX_CONNECTIONS;
    cfg->queue = SERVE_DEFAULT_QUEUE;
    cfg->grace_s = SERVE_DEFAULT_GRACE_S;
    cfg->llm_deadline_s = SERVE_DEFAULT_LLM_DEADLINE_S;
    cfg->maintain_every_hours = -1;
}

/* The thread that waits for SIGINT and SIGTERM (serve's sigwait), and the
 * handler that sends it a signal another thread received. pthread_kill is
 * async-signal-safe. */
static pthread_t g_main_thread;
static void forward_to_main(int sig) { pthread_kill(g_main_thread, sig); }

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Paths are matched raw (routes.c decodes captures itself), so the daemon
 * must not decode them first; query values are decoded by request_arg. */
static size_t keep_escaped(void *cls, struct MHD_Connection *c, char *s) {
    (void)cls, (void)c;
    return strlen(s);
}

/* ------------------------------------------------------------------ */
/* Replies                                                             */
/* ------------------------------------------------------------------ */

static void reply_init(reply *rp) {
    memset(rp, 0, sizeof *rp);
    rp->pipe_fd = -1;
}

static void reply_release(reply *rp) {
    if (rp->free_body) rp->free_body(rp->body);
    if (rp->pipe_fd >= 0) close(rp->pipe_fd);
    reply_init(rp);
}

/* Hand rp to the daemon (which then owns body or pipe). */
static enum MHD_Result send_reply(request *rq, reply *rp) {
    struct MHD_Response *resp;
    if (rp->pipe_fd >= 0) {
        resp = MHD_create_response_from_pipe(rp->pipe_fd);
    } else if (!rp->free_body) {
        resp = MHD_create_response_from_buffer(rp->len, rp->body, MHD_RESPMEM_PERSISTENT);
    } else {
        resp = MHD_create_response_from_buffer_with_free_callback(rp->len, rp->body, rp->free_body);
    }
    if (!resp) {
        reply_release(rp);
        return MHD_NO;
    }
    rp->pipe_fd = -1; /* the response owns them now */
    rp->free_body = NULL;
    if (rp->content_type && (rp->len || rp->status < 300))
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, rp->content_type);
    if (rp->allow[0]) MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, rp->allow);
    if (rp->session[0]) MHD_add_response_header(resp, "Mcp-Session-Id", rp->session);
    if (rp->bearer_challenge)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"remem\"");
    if (rp->retry_after > 0) {
        char secs[16];
        snprintf(secs, sizeof secs, "%d", rp->retry_after);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, secs);
    }
    if (atomic_load(&rq->srv->draining) || rq->too_large || rq->bad_framing)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ok = MHD_queue_response(rq->conn, (unsigned)rp->status, resp);
    MHD_destroy_response(resp);
    rq->responded = 1;
    rq->status = rp->status;
    return ok;
}

/* ------------------------------------------------------------------ */
/* Admission: everything decided from the headers alone                */
/* ------------------------------------------------------------------ */

/* "localhost", "127.x.y.z", "::1", "[::1]", optionally with ":port". */
static int is_loopback_host(const char *h) {
    char host[256];
    if (*h == '[') {
        const char *end = strchr(h, ']');
        if (!end || (size_t)(end - h - 1) >= sizeof host) return 0;
        memcpy(host, h + 1, (size_t)(end - h - 1));
        host[end - h - 1] = 0;
    } else {
        size_t n = strcspn(h, ":");
        if (n >= sizeof host) return 0;
        memcpy(host, h, n);
        host[n] = 0;
    }
    if (!strcasecmp(host, "localhost")) return 1;
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, host, &a4) == 1) return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, host, &a6) == 1) return IN6_IS_ADDR_LOOPBACK(&a6);
    return 0;
}

/* Without keys, anything that can reach the loopback port is trusted; a web
 * page must not become such a thing through DNS rebinding or a cross-site
 * request, so the Host and any Origin must name the loopback too. */
static int loopback_browser_check(request *rq, reply *rp) {
    const char *host = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    const char *origin = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Origin");
    if (host && !is_loopback_host(host)) {
        reply_error(rp, 403, "REMEM_EFORBIDDEN",
                    "Host \"%s\" refused: without --keys the server answers "
                    "only to loopback names",
                    host);
        return 0;
    }
    if (origin) {
        const char *h = strstr(origin, "://");
        if (!h || !is_loopback_host(h + 3)) {
            reply_error(rp, 403, "REMEM_EFORBIDDEN",
                        "Origin \"%s\" refused: without --keys only loopback "
                        "origins may call the server",
                        origin);
            return 0;
        }
    }
    return 1;
}

static int authenticate(request *rq, reply *rp) {
    const char *auth =
        MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    rp->bearer_challenge = 1;
    if (!auth || strncasecmp(auth, "Bearer ", 7) != 0) {
        reply_error(rp, 401, "REMEM_EAUTH",
                    "this server needs a key: send \"Authorization: Bearer "
                    "SECRET\"");
        return 0;
    }
    const char *secret = auth + 7;
    while (*secret == ' ') secret++;
    if (!(rq->key = keys_find(&rq->srv->keys, secret))) {
        reply_error(rp, 401, "REMEM_EAUTH", "unknown key");
        return 0;
    }
    rp->bearer_challenge = 0;
    return 1;
}

/* Is the media type application/json (parameters such as charset ok)? */
static int is_json_type(const char *ct) {
    if (!ct) return 0;
    while (*ct == ' ') ct++;
    size_t n = strlen("application/json");
    return strncasecmp(ct, "application/json", n) == 0 &&
           (ct[n] == 0 || ct[n] == ';' || ct[n] == ' ');
}

static int check_body_headers(request *rq, reply *rp, unsigned flags) {
    unsigned long long length = rq->content_length;
    if (!rq->has_body || !(flags & (RF_BODY | RF_BODY_OPTIONAL))) return 1;
    const char *ct =
        MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!is_json_type(ct)) {
        reply_error(rp, 415, "REMEM_EMEDIA",
                    "send the body as Content-Type: application/json (got %s)", ct ? ct : "none");
        return 0;
    }
    if (length > rq->srv->cfg.max_body) {
        reply_error(rp, 413, "REMEM_ETOOLARGE",
                    "body of %llu bytes is over the limit of %zu (--max-body)", length,
                    rq->srv->cfg.max_body);
        return 0;
    }
    return 1;
}

static void note_body(request *rq) {
    const char *cl =
        MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *te =
        MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    rq->content_length = cl ? strtoull(cl, NULL, 10) : 0;
    rq->has_body = rq->content_length > 0 || te != NULL;
}

/* Answer a refusal only after reading the body? A reply sent while the
 * client is still sending, followed by a close with unread bytes, turns
 * into a TCP reset that can destroy the reply before the client reads it.
 * So a body of sane size is read and dropped first. Not when the client
 * asked "Expect: 100-continue" (it waits for our answer before sending),
 * nor for a body too big to be worth reading. */
static int should_defer(const request *rq) {
    const char *expect =
        MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_EXPECT);
    return rq->has_body && !(expect && !strcasecmp(expect, "100-continue")) &&
           rq->content_length <= BODY_DROP_FACTOR * rq->srv->cfg.max_body;
}

/* Counts of the headers that frame a request, as sent (repeats included). */
typedef struct framing {
    int content_length, transfer_encoding, host;
    const char *first_cl;
    int cl_differs;
} framing;

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value) {
    framing *f = cls;
    (void)kind;
    if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
        if (f->content_length++ == 0)
            f->first_cl = value;
        else if (!value || !f->first_cl || strcmp(value, f->first_cl) != 0)
            f->cl_differs = 1;
    } else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
        f->transfer_encoding++;
    } else if (!strcasecmp(key, MHD_HTTP_HEADER_HOST)) {
        f->host++;
    }
    return MHD_YES;
}

/* Refuse a request whose framing two parties could read differently (a
 * proxy in front taking one Content-Length, libmicrohttpd the other, is how
 * a second request gets smuggled in the body of the first): Content-Length
 * repeated, Content-Length beside Transfer-Encoding, Transfer-Encoding
 * repeated; and an HTTP/1.1 request without exactly one Host (RFC 9112
 * 3.2). libmicrohttpd keeps every header line, so repeats are visible. */
static int framing_ok(request *rq, const char *version, reply *rp) {
    framing f = {0};
    MHD_get_connection_values(rq->conn, MHD_HEADER_KIND, count_framing, &f);
    if (f.content_length > 1) {
        reply_error(rp, 400, "REMEM_EINVAL",
                    "Content-Length sent %d times%s: a request must be framed one way",
                    f.content_length, f.cl_differs ? " with different values" : "");
        return 0;
    }
    if (f.content_length && f.transfer_encoding) {
        reply_error(rp, 400, "REMEM_EINVAL",
                    "Content-Length and Transfer-Encoding together: a request must be framed "
                    "one way");
        return 0;
    }
    if (f.transfer_encoding > 1) {
        reply_error(rp, 400, "REMEM_EINVAL", "Transfer-Encoding sent %d times",
                    f.transfer_encoding);
        return 0;
    }
    if (version && !strcmp(version, MHD_HTTP_VERSION_1_1) && f.host == 0) {
        reply_error(rp, 400, "REMEM_EINVAL", "an HTTP/1.1 request needs a Host header");
        return 0;
    }
    if (f.host > 1) {
        reply_error(rp, 400, "REMEM_EINVAL", "Host sent %d times: a request has one", f.host);
        return 0;
    }
    return 1;
}

/* 1 to go on reading the body; 0 with the refusal in rp. */
static int admit(request *rq, const char *url, const char *method, const char *version, reply *rp) {
    server *srv = rq->srv;
    if (atomic_load(&srv->draining)) {
        reply_error(rp, 503, "REMEM_ESHUTDOWN", "the server is shutting down");
        return 0;
    }
    if (!framing_ok(rq, version, rp)) {
        rq->bad_framing = 1;
        return 0;
    }
    /* HEAD is GET without the body (libmicrohttpd drops it). */
    int r = route_match(strcmp(method, "HEAD") ? method : "GET", url, &rq->ns, &rq->id, rp->allow,
                        sizeof rp->allow);
    if (r == -405) {
        reply_error(rp, 405, "REMEM_EMETHOD", "%s is not allowed on %s (allowed: %s)", method, url,
                    rp->allow);
        return 0;
    }
    if (r == -400) {
        char why[sizeof rp->allow];
        snprintf(why, sizeof why, "%s", rp->allow);
        rp->allow[0] = 0;
        reply_error(rp, 400, "REMEM_EINVAL", "%s (nothing was done)", why);
        return 0;
    }
    rp->allow[0] = 0;
    if (r < 0) {
        reply_error(rp, 404, "REMEM_ENOROUTE", "no route %s %s (see /openapi.json)", method, url);
        return 0;
    }
    rq->route = r;
    unsigned flags = server_routes[r].flags;
    if (!srv->keys_on && !loopback_browser_check(rq, rp)) return 0;
    if (srv->keys_on && !(flags & RF_PUBLIC) && !authenticate(rq, rp)) return 0;
    return check_body_headers(rq, rp, flags);
}

/* Keep the body under the limit; 0 when the client should be cut off. */
static int take_body(request *rq, const char *data, size_t n) {
    size_t max = rq->srv->cfg.max_body;
    if (rq->too_large || rq->body_len + n > max) {
        rq->too_large = 1;
        free(rq->body);
        rq->body = NULL;
        rq->body_dropped += n + rq->body_len;
        rq->body_len = 0;
        return rq->body_dropped <= BODY_DROP_FACTOR * max;
    }
    if (rq->body_len + n + 1 > rq->body_cap) {
        size_t cap = rq->body_cap ? rq->body_cap : 4096;
        while (cap < rq->body_len + n + 1) cap *= 2;
        char *b = realloc(rq->body, cap);
        if (!b) return 0;
        rq->body = b;
        rq->body_cap = cap;
    }
    memcpy(rq->body + rq->body_len, data, n);
    rq->body_len += n;
    rq->body[rq->body_len] = 0;
    return 1;
}

/* ------------------------------------------------------------------ */
/* Handing the work to the workers (work.c)                            */
/* ------------------------------------------------------------------ */

/* Routes cheap enough to answer on the I/O thread: no store, no model. */
static int runs_inline(int route) {
    return route == R_HEALTHZ || route == R_OPENAPI || route == R_PROFILES || route == R_PROFILE ||
           route == R_OPS_LIST || route == R_UI || route == R_UI_ASSET;
}

/* The worker's reply becomes the one the next call sends; the connection
 * goes back to its I/O thread. rq may be freed as soon as this returns. */
static void finish_work(request *rq) {
    rq->deferred = rq->work_reply;
    rq->work_reply = NULL;
    rq->handed = 0;
    MHD_resume_connection(rq->conn);
}

/* A worker's job (work_pool.run). */
static void run_request(request *rq) {
    route_handle(rq, rq->work_reply);
    finish_work(rq);
}

/* Answer a request taken back from the queue at shutdown, or refused by
 * a full queue: it never reached a handler, so nothing of it was done. */
static void refuse_queued(request *rq, int shutting_down) {
    if (shutting_down)
        reply_error(rq->work_reply, 503, "REMEM_ESHUTDOWN",
                    "the server is shutting down: this request was not started (nothing of it "
                    "was done)");
    else
        reply_error(rq->work_reply, 503, "REMEM_EBUSY",
                    "%d requests are waiting for a worker (--queue): this one was not started "
                    "(nothing of it was done); retry shortly",
                    rq->srv->work.max_queued);
    rq->work_reply->retry_after = shutting_down ? 0 : 1;
    finish_work(rq);
}

/* Suspend the connection and queue rq for a worker. */
static enum MHD_Result hand_to_worker(request *rq) {
    reply rp;
    if (!(rq->work_reply = malloc(sizeof *rq->work_reply))) {
        reply_init(&rp);
        reply_error(&rp, 500, "REMEM_ENOMEM", "out of memory");
        return send_reply(rq, &rp);
    }
    reply_init(rq->work_reply);
    rq->handed = 1;
    /* Suspended before it is queued: a worker may resume it at once. */
    MHD_suspend_connection(rq->conn);
    if (work_submit(&rq->srv->work, rq) != 0) refuse_queued(rq, atomic_load(&rq->srv->draining));
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls) {
    server *srv = cls;
    request *rq = *con_cls;
    reply rp;
    if (!rq) {
        if (!(rq = calloc(1, sizeof *rq))) return MHD_NO;
        rq->srv = srv;
        rq->conn = conn;
        rq->route = R_UNMATCHED;
        rq->t0_ns = now_ns();
        atomic_fetch_add(&srv->in_flight, 1);
        atomic_store(&srv->last_request_ms, remem_now());
        *con_cls = rq;
        note_body(rq);
        reply_init(&rp);
        if (admit(rq, url, method, version, &rp)) return MHD_YES;
        /* A badly framed body is not read: where it ends is the question. */
        if (!rq->bad_framing && should_defer(rq) && (rq->deferred = malloc(sizeof rp))) {
            *rq->deferred = rp;
            return MHD_YES;
        }
        return send_reply(rq, &rp);
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        /* A body after a refusal, or one the route does not take, is read
         * and dropped (within the same bound as an oversized one). */
        if (rq->responded || rq->deferred || rq->route >= R_COUNT ||
            !(server_routes[rq->route].flags & (RF_BODY | RF_BODY_OPTIONAL))) {
            rq->body_dropped += n;
            return rq->body_dropped <= BODY_DROP_FACTOR * srv->cfg.max_body ? MHD_YES : MHD_NO;
        }
        return take_body(rq, upload_data, n) ? MHD_YES : MHD_NO;
    }
    if (rq->responded || rq->handed) return MHD_YES;
    if (rq->deferred) {
        rp = *rq->deferred;
        free(rq->deferred);
        rq->deferred = NULL;
        return send_reply(rq, &rp);
    }
    reply_init(&rp);
    if (rq->too_large)
        reply_error(&rp, 413, "REMEM_ETOOLARGE", "body over the limit of %zu bytes (--max-body)",
                    srv->cfg.max_body);
    else if (!runs_inline(rq->route))
        return hand_to_worker(rq);
    else
        route_handle(rq, &rp);
    return send_reply(rq, &rp);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)conn, (void)toe;
    server *srv = cls;
    request *rq = *con_cls;
    if (!rq) return;
    metrics_record(rq->route, rq->status, (now_ns() - rq->t0_ns) / 1e9);
    if (rq->deferred) reply_release(rq->deferred);
    free(rq->deferred);
    if (rq->work_reply) reply_release(rq->work_reply);
    free(rq->work_reply);
    free(rq->ns);
    free(rq->id);
    /* A large body or reply leaves freed pages in the allocator's arenas:
     * give them back now (a 1 MiB embed request used to leave the process
     * 1.6 GB larger). */
    int trim = rq->trim || rq->body_cap > TRIM_AFTER_BYTES;
    free(rq->body);
    free(rq);
    *con_cls = NULL;
    atomic_fetch_sub(&srv->in_flight, 1);
    if (trim) heap_release();
}

/* Open connections, so that a drain can wait for them to be answered. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_ctx,
                          enum MHD_ConnectionNotificationCode code) {
    server *srv = cls;
    (void)conn, (void)socket_ctx;
    if (code == MHD_CONNECTION_NOTIFY_STARTED)
        atomic_fetch_add(&srv->connections, 1);
    else if (code == MHD_CONNECTION_NOTIFY_CLOSED)
        atomic_fetch_sub(&srv->connections, 1);
}

static void mhd_log(void *cls, const char *fmt, va_list ap) {
    (void)cls;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    size_t n = strlen(line);
    while (n && line[n - 1] == '\n') line[--n] = 0;
    fprintf(stderr, "remem serve: %s\n", line);
}

/* ------------------------------------------------------------------ */
/* Listening address                                                   */
/* ------------------------------------------------------------------ */

typedef struct listen_addr {
    struct sockaddr_storage sa;
    int v6;
    int loopback;
} listen_addr;

/* "HOST:PORT", "[V6]:PORT" or ":PORT"/"PORT" (loopback). */
static int parse_listen(const char *spec, listen_addr *out, char *err, size_t errcap) {
    char host[256] = "127.0.0.1";
    const char *port;
    if (spec[0] == '[') {
        const char *end = strchr(spec, ']');
        if (!end || end[1] != ':' || (size_t)(end - spec - 1) >= sizeof host) {
            snprintf(err, errcap, "--listen %s: expected [ADDR]:PORT", spec);
            return -1;
        }
        memcpy(host, spec + 1, (size_t)(end - spec - 1));
        host[end - spec - 1] = 0;
        port = end + 2;
    } else if (strchr(spec, ':')) {
        const char *colon = strrchr(spec, ':');
        if ((size_t)(colon - spec) >= sizeof host) {
            snprintf(err, errcap, "--listen %s: host too long", spec);
            return -1;
        }
        if (colon > spec) {
            memcpy(host, spec, (size_t)(colon - spec));
            host[colon - spec] = 0;
        }
        port = colon + 1;
    } else {
        port = spec;
    }
    char *end;
    long p = strtol(port, &end, 10);
    if (!*port || *end || p < 0 || p > 65535) {
        snprintf(err, errcap, "--listen %s: bad port \"%s\"", spec, port);
        return -1;
    }
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0) {
        snprintf(err, errcap, "--listen %s: %s", spec, gai_strerror(gai));
        return -1;
    }
    memset(out, 0, sizeof *out);
    memcpy(&out->sa, res->ai_addr, res->ai_addrlen);
    out->v6 = res->ai_family == AF_INET6;
    freeaddrinfo(res);
    if (out->v6) {
        struct in6_addr *a = &((struct sockaddr_in6 *)&out->sa)->sin6_addr;
        out->loopback =
            IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
    } else {
        uint32_t a = ntohl(((struct sockaddr_in *)&out->sa)->sin_addr.s_addr);
        out->loopback = (a >> 24) == 127;
    }
    return 0;
}

static void format_addr(const listen_addr *la, int port, char *buf, size_t cap) {
    char host[INET6_ADDRSTRLEN] = "?";
    if (la->v6) {
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&la->sa)->sin6_addr, host, sizeof host);
        snprintf(buf, cap, "[%s]:%d", host, port);
    } else {
        inet_ntop(AF_INET, &((struct sockaddr_in *)&la->sa)->sin_addr, host, sizeof host);
        snprintf(buf, cap, "%s:%d", host, port);
    }
}

/* ------------------------------------------------------------------ */
/* Running                                                             */
/* ------------------------------------------------------------------ */

static int default_threads(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    /* Twice the cores: a thread waiting on a durable commit should not
     * leave a core idle. */
    int n = cores > 0 ? 2 * (int)cores : 4;
    return n < 4 ? 4 : n > 64 ? 64 : n;
}

static void print_banner(const server *srv, FILE *out, const listen_addr *la, remem *db) {
    const char *auth = srv->keys_on ? " -H \"Authorization: Bearer $REMEM_KEY\"" : "";
    if (!srv->cfg.quiet) {
        char shown[1024];
        fprintf(out, "remem serve: store %s, embedder %s (%s), %d threads, up to %d workers\n",
                shown_uri(srv->cfg.db_path, shown, sizeof shown), remem_embedder_name(db),
                remem_embedder_model(db), srv->cfg.threads, srv->cfg.workers);
        if (srv->keys_on)
            fprintf(out, "remem serve: %zu API keys from %s\n", srv->keys.n, srv->cfg.keys_path);
        else
            fprintf(out, "remem serve: no --keys file: listening on loopback "
                         "only, every local caller may do everything\n");
        if (srv->cfg.opt.config_path)
            fprintf(out, "remem serve: configuration from %s\n", srv->cfg.opt.config_path);
        if (srv->cfg.opt.no_memory)
            fprintf(out, "remem serve: memory is off (--no-memory): recall finds nothing, "
                         "writes are dropped\n");
        if (!la->loopback && srv->keys_on)
            fprintf(out, "remem serve: reachable from other hosts; keys "
                         "required on every route but /healthz, "
                         "/openapi.json and the inspector's page /ui\n");
    }
    fprintf(out, "listening on http://%s\n", srv->addr);
    if (!srv->cfg.quiet) {
        fprintf(out,
                "try: curl -s http://%s/v1/namespaces/demo/memories -H "
                "'Content-Type: application/json'%s -d '{\"text\":\"the "
                "kettle is in the left cupboard\"}'\n",
                srv->addr, auth);
        fprintf(out,
                "then: curl -s http://%s/v1/recall -H 'Content-Type: "
                "application/json'%s -d '{\"namespaces\":[\"demo\"],\"text\":"
                "\"where is the kettle?\"}'\n",
                srv->addr, auth);
        if (!srv->cfg.no_ui)
            fprintf(out, "look: http://%s/ui in a browser (the inspector%s)\n", srv->addr,
                    srv->keys_on ? "; type a key into it" : "");
    }
    fflush(out);
}

/* Wait for SIGINT or SIGTERM; meanwhile, every TRIM_EVERY_S, let the
 * allocator give free pages back (heap_tick: glibc's trim; jemalloc does
 * it from its own thread). */
#define TRIM_EVERY_S 5
static int wait_for_signal(const sigset_t *signals) {
    struct timespec tick = {TRIM_EVERY_S, 0};
    for (;;) {
        int sig = sigtimedwait(signals, NULL, &tick);
        if (sig > 0) return sig;
        heap_tick();
    }
}

/* Wait until the requests in flight are answered and the open connections
 * have gone (or stayed idle DRAIN_IDLE_MS: a request arriving on one gets
 * its 503 with Connection: close, which stopping the daemon under it would
 * drop), up to deadline. 1 when a second signal came first. */
static int wait_drained(server *srv, const sigset_t *signals, int64_t deadline) {
    struct timespec tick = {0, 10 * 1000 * 1000};
    while (remem_now() < deadline &&
           (atomic_load(&srv->in_flight) > 0 ||
            (atomic_load(&srv->connections) > 0 &&
             remem_now() - atomic_load(&srv->last_request_ms) < DRAIN_IDLE_MS))) {
        if (sigtimedwait(signals, NULL, &tick) > 0) return 1;
    }
    return 0;
}

/* The grace is over (or a second signal came): answer the requests still
 * queued with 503, cut the LLM and embedder calls under way (their
 * handlers answer 504), and give them DRAIN_CUT_MS to answer. Returns how
 * many handlers are still running after that. */
static int cut_work(server *srv) {
    work_stats ws;
    work_counts(&srv->work, &ws);
    fprintf(stderr,
            "remem serve: %d requests still running and %d queued: cutting them (queued ones get "
            "503, LLM and embedder calls under way are stopped)\n",
            ws.running, ws.queued);
    for (request *rq = work_take_queued(&srv->work), *next; rq; rq = next) {
        next = rq->next;
        refuse_queued(rq, 1);
    }
    pool_interrupt(&srv->pool);
    rater_interrupt(&srv->rater);
    struct timespec tick = {0, 10 * 1000 * 1000};
    int64_t until = remem_now() + DRAIN_CUT_MS;
    for (;;) {
        work_counts(&srv->work, &ws);
        if (remem_now() >= until || (ws.running == 0 && atomic_load(&srv->in_flight) == 0))
            return ws.running;
        nanosleep(&tick, NULL);
    }
}

/* Stop accepting, let the requests in flight finish, stop the daemon.
 * 0: all of them finished; 1: some were cut; -1: a handler is still
 * running (the daemon is left as it is: see serve_run). */
static int drain_and_stop(server *srv, const sigset_t *signals) {
    atomic_store(&srv->draining, 1);
    MHD_socket lfd = MHD_quiesce_daemon(srv->daemon);
    if (lfd != MHD_INVALID_SOCKET) close(lfd);
    srv->grace_end_ms = remem_now() + (int64_t)srv->cfg.grace_s * 1000;
    int rc = 0;
    if (wait_drained(srv, signals, srv->grace_end_ms))
        fprintf(stderr, "remem serve: second signal, not waiting for %d requests in flight\n",
                atomic_load(&srv->in_flight));
    if (atomic_load(&srv->in_flight) > 0) {
        rc = 1;
        if (cut_work(srv) > 0) return -1;
    }
    MHD_stop_daemon(srv->daemon);
    srv->daemon = NULL;
    /* Export threads end once their pipe is closed; wait for their handles. */
    struct timespec tick = {0, 10 * 1000 * 1000};
    while (atomic_load(&srv->exports) > 0) nanosleep(&tick, NULL);
    return rc;
}

/* Handlers stuck past the grace and the cut: end the process now, with
 * what can be flushed flushed. Their handles are in use and cannot be
 * closed; what they committed is in the store, what they had not is not. */
static void abandon(server *srv, FILE *out) {
    work_stats ws;
    work_counts(&srv->work, &ws);
    if (ws.running > 0)
        fprintf(stderr,
                "remem serve: %d requests still running after the grace and the cut: exiting "
                "without them (their clients get no answer; what they committed is stored)\n",
                ws.running);
    else
        fprintf(stderr, "remem serve: exiting without the background work under way "
                        "(maintenance or auto-rating; what it committed is stored)\n");
    remem_telemetry_flush(); /* the spans queued (bounded by the export timeout) */
    fflush(out);
    fflush(NULL);
    _exit(1);
}

/* The listening socket, bound here rather than by libmicrohttpd so that a
 * failure names the address and the reason ("127.0.0.1:8077 is already in
 * use") instead of "Failed to bind to port 0". -1 with err filled. */
static int listen_socket(const listen_addr *la, char *err, size_t errcap) {
    char where[160];
    struct sockaddr_in *in4 = (struct sockaddr_in *)&la->sa;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&la->sa;
    format_addr(la, ntohs(la->v6 ? in6->sin6_port : in4->sin_port), where, sizeof where);
    /* Non-blocking, as libmicrohttpd makes the sockets it opens itself:
     * every thread of the pool polls this socket, and with a blocking one
     * the threads that lose the race for a connection sit in accept()
     * instead of serving their requests (HTTP recall p50 0.22 -> 0.30 ms). */
    int fd = socket(la->v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd < 0) {
        snprintf(err, errcap, "cannot listen on %s: %s", where, strerror(errno));
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (la->v6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    socklen_t len = la->v6 ? sizeof *in6 : sizeof *in4;
    if (bind(fd, (const struct sockaddr *)&la->sa, len) != 0 || listen(fd, 1024) != 0) {
        int e = errno;
        close(fd);
        if (e == EADDRINUSE)
            snprintf(err, errcap,
                     "%s is already in use (another server on that port?): stop it or "
                     "choose another --listen",
                     where);
        else if (e == EACCES)
            snprintf(err, errcap, "cannot listen on %s: permission denied (ports below 1024?)",
                     where);
        else
            snprintf(err, errcap, "cannot listen on %s: %s", where, strerror(e));
        return -1;
    }
    return fd;
}

static struct MHD_Daemon *start_daemon(server *srv, const listen_addr *la, int fd) {
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
                     MHD_USE_ERROR_LOG |
                     MHD_ALLOW_SUSPEND_RESUME; /* the workers' hand-off (work.c) */
    if (la->v6) flags |= MHD_USE_IPv6;
    return MHD_start_daemon(flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_EXTERNAL_LOGGER,
                            mhd_log, NULL, /* first, to see all */
                            MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd, MHD_OPTION_THREAD_POOL_SIZE,
                            (unsigned)srv->cfg.threads, MHD_OPTION_CONNECTION_LIMIT,
                            (unsigned)srv->cfg.max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
                            (unsigned)srv->cfg.timeout_s, MHD_OPTION_NOTIFY_COMPLETED, on_completed,
                            srv, MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
                            MHD_OPTION_UNESCAPE_CALLBACK, keep_escaped, NULL, MHD_OPTION_END);
}

/* serve.ui: false in the configuration turns the inspector off as
 * --no-ui does (read on one of the pool's handles). */
static void ui_setting(server *srv) {
    char err[256];
    remem *db = srv->cfg.no_ui ? NULL : pool_get(&srv->pool, NULL, err, sizeof err);
    if (!db) return;
    const char *ui = remem_setting(db, "serve.ui");
    if (ui && !strcmp(ui, "false")) srv->cfg.no_ui = 1;
    pool_put(&srv->pool, db, NULL);
}

int serve_run(const serve_config *cfg, FILE *out) {
    server *srv = calloc(1, sizeof *srv);
    if (!srv) {
        fprintf(stderr, "remem: out of memory\n");
        return 1;
    }
    srv->cfg = *cfg;
    if (srv->cfg.threads <= 0) srv->cfg.threads = default_threads();
    if (srv->cfg.max_body == 0) srv->cfg.max_body = SERVE_DEFAULT_MAX_BODY;
    if (srv->cfg.timeout_s <= 0) srv->cfg.timeout_s = SERVE_DEFAULT_TIMEOUT_S;
    if (srv->cfg.max_connections <= 0) srv->cfg.max_connections = SERVE_DEFAULT_MAX_CONNECTIONS;
    /* libmicrohttpd splits the connection limit among its threads: no
     * thread may be left with none. */
    if (srv->cfg.threads > srv->cfg.max_connections) srv->cfg.threads = srv->cfg.max_connections;
    if (srv->cfg.workers <= 0) srv->cfg.workers = 4 * srv->cfg.threads;
    if (srv->cfg.workers < srv->cfg.threads) srv->cfg.workers = srv->cfg.threads;
    if (srv->cfg.queue <= 0) srv->cfg.queue = SERVE_DEFAULT_QUEUE;
    if (srv->cfg.grace_s <= 0) srv->cfg.grace_s = SERVE_DEFAULT_GRACE_S;
    if (srv->cfg.llm_deadline_s < 0) srv->cfg.llm_deadline_s = SERVE_DEFAULT_LLM_DEADLINE_S;
    srv->max_exports = srv->cfg.threads;
    srv->started_ms = remem_now();
    heap_setup(); /* the allocator's policy (heap.c) */
    char err[1024];
    int rc = 1, pool_ready = 0;
    listen_addr la;
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    /* Threads started before this point (OpenBLAS starts its own when the
     * library loads) do not block the signals; one that receives SIGINT
     * hands it to this thread instead of taking the default action, which
     * would end the process without draining. */
    g_main_thread = pthread_self();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_to_main;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* Block them before any thread starts (the auto-rater, the store's
     * connections, libmicrohttpd's pool, maintenance, telemetry): threads
     * inherit the mask, so the signals come only to sigwait below. A
     * thread started earlier would take a SIGINT with its default action
     * and end the process without draining. */
    pthread_sigmask(SIG_BLOCK, &signals, NULL);

    if (parse_listen(cfg->listen, &la, err, sizeof err) != 0) goto fail;
    if (cfg->keys_path) {
        if (keys_load(cfg->keys_path, &srv->keys, err, sizeof err) != 0) goto fail;
        srv->keys_on = 1;
    } else if (!la.loopback) {
        snprintf(err, sizeof err,
                 "--listen %s is not a loopback address: without --keys FILE "
                 "anyone could read and change every memory; give a keys "
                 "file (remem serve --help) or listen on 127.0.0.1",
                 cfg->listen);
        goto fail;
    }
    /* The auto-rater first: every pooled handle hands it the adds that a
     * namespace's auto_rate policy wants rated, so adds answer at once. */
    if (rater_start(&srv->rater, cfg->db_path, &cfg->opt) != 0) {
        snprintf(err, sizeof err, "cannot start the auto-rate thread");
        goto fail;
    }
    int64_t deadline_ms = (int64_t)srv->cfg.llm_deadline_s * 1000;
    pthread_mutex_lock(&srv->rater.mu);
    srv->rater.deadline_ms = deadline_ms;
    pthread_mutex_unlock(&srv->rater.mu);
    /* A handle per worker, and per export stream. */
    if (pool_init(&srv->pool, cfg->db_path, &cfg->opt, srv->cfg.workers + srv->max_exports, err,
                  sizeof err) != 0)
        goto fail;
    pool_ready = 1;
    pool_rate_later(&srv->pool, rater_enqueue, &srv->rater);
    pool_deadline(&srv->pool, deadline_ms);
    if (work_init(&srv->work, srv->cfg.threads, srv->cfg.workers, srv->cfg.queue, run_request) ||
        work_start(&srv->work)) {
        snprintf(err, sizeof err, "cannot start the worker threads");
        goto fail;
    }
    /* Background ingests: its first look resumes what a previous run left. */
    if (ingest_runner_start(&srv->ingest, cfg->db_path, &cfg->opt, cfg->ingest_queue,
                            (int)deadline_ms) != 0) {
        snprintf(err, sizeof err, "cannot start the ingest thread");
        goto fail;
    }
    if (server_mcp_groups(srv, err, sizeof err)) goto fail;
    ui_setting(srv);

    /* A client gone mid-export must not kill us. */
    signal(SIGPIPE, SIG_IGN);
    int lfd = listen_socket(&la, err, sizeof err);
    if (lfd < 0) goto fail;
    if (!(srv->daemon = start_daemon(srv, &la, lfd))) {
        close(lfd);
        snprintf(err, sizeof err, "cannot listen on %s: %s", cfg->listen,
                 errno ? strerror(errno) : "libmicrohttpd refused the options");
        goto fail;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    format_addr(&la, info ? info->port : 0, srv->addr, sizeof srv->addr);
    remem *db = pool_get(&srv->pool, NULL, err, sizeof err);
    print_banner(srv, out, &la, db);
    pool_put(&srv->pool, db, NULL);
    if (serve_maint_start(&srv->cfg, srv->cfg.quiet ? NULL : out, err, sizeof err)) goto fail;

    int sig = wait_for_signal(&signals);
    if (!srv->cfg.quiet)
        fprintf(out, "remem serve: %s: finishing %d requests in flight\n",
                sig == SIGINT ? "SIGINT" : "SIGTERM", atomic_load(&srv->in_flight));
    fflush(out);
    serve_maint_cut(); /* it may finish its chore during the drain */
    /* A background ingest under way is cut (its job stays pending and the
     * next start finishes it): it is nobody's request in flight. */
    ingest_runner_stop(&srv->ingest);
    int drained = drain_and_stop(srv, &signals);
    if (drained >= 0 && serve_maint_stop(DRAIN_CUT_MS) != 0) drained = -1;
    /* A rating under way may use what is left of the grace. */
    int64_t left = srv->grace_end_ms - remem_now();
    if (drained >= 0 && rater_stop(&srv->rater, left > 0 ? (int)left : 0, DRAIN_CUT_MS) != 0)
        drained = -1;
    if (drained < 0) abandon(srv, out);
    work_stop(&srv->work, DRAIN_CUT_MS);
    if (!srv->cfg.quiet)
        fprintf(out, "remem serve: stopped%s\n",
                drained ? " (requests still in flight at the end of the grace were cut)" : "");
    fflush(out);
    if (pool_ready) pool_close(&srv->pool);
    keys_free(&srv->keys);
    free(srv);
    return drained ? 1 : 0;
fail:
    serve_maint_stop(DRAIN_CUT_MS);
    if (rc != 0) fprintf(stderr, "remem: %s\n", err);
    if (srv->daemon) MHD_stop_daemon(srv->daemon);
    work_stop(&srv->work, DRAIN_CUT_MS);
    ingest_runner_stop(&srv->ingest);
    if (pool_ready) pool_close(&srv->pool);
    rater_stop(&srv->rater, 0, DRAIN_CUT_MS);
    keys_free(&srv->keys);
    free(srv);
    return rc;
}
