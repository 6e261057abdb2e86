/*
 * fuzz_serve.c: libFuzzer target for the parsers of remem serve that see
 * bytes from outside before anything else does: the route matcher (raw
 * paths with percent-escapes and custom verbs), the keys file loader, and
 * the recall body reader. The first input byte picks one, the rest is its
 * input. Each must either accept with sane results or refuse cleanly:
 *
 *   route    a route id with its captures decoded (no NUL inside), or
 *            -404 / -405 (with an Allow list) / -400;
 *   keys     a table whose every key has a name, patterns and rights, or
 *            -1 with a reason;
 *   recall   a query naming at least one namespace and a text or vector,
 *            or a refusal with a message (remem_query_parse).
 *
 * server/ belongs to the remem binary, not to the library, so its files are
 * compiled in here directly, with stand-ins for what the matched handlers
 * would call (never reached: only the parsers run).
 */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../server/keys.c"
#include "../server/reply.c"
#include "../server/route_table.c"
#include "../server/routes.c"
#include "../server/routes_admin.c"
#include "../server/routes_namespaces.c"
#include "../server/routes_ops.c"

/* Stand-ins for the rest of the server (unused by the parsers). */
int pool_init(handle_pool *p, const char *uri, const remem_options *opt, int cap, char *err,
              size_t errcap) {
    (void)p, (void)uri, (void)opt, (void)cap, (void)err, (void)errcap;
    return -1;
}
remem *pool_get(handle_pool *p, const char *ns, char *err, size_t errcap) {
    (void)p, (void)ns;
    snprintf(err, errcap, "no store in the fuzzer");
    return NULL;
}
void pool_put(handle_pool *p, remem *db, const char *ns) { (void)p, (void)db, (void)ns; }
void server_export(request *rq, reply *rp, const char *ns, int vectors) {
    (void)rq, (void)ns, (void)vectors;
    reply_error(rp, 500, "REMEM_EIO", "no export in the fuzzer");
}
void server_mcp(request *rq, reply *rp) {
    (void)rq;
    reply_error(rp, 500, "REMEM_EIO", "no mcp in the fuzzer");
}
char *metrics_render(const server *srv, json_t *namespaces) {
    (void)srv, (void)namespaces;
    return NULL;
}
const char *openapi_document(size_t *len) {
    *len = 2;
    return "{}";
}
void h_ui(request *rq, reply *rp) {
    (void)rq;
    reply_error(rp, 404, "REMEM_ENOROUTE", "no inspector in the fuzzer");
}
void metrics_op(const char *op, int status, double seconds) { (void)op, (void)status, (void)seconds; }
int ingest_runner_full(ingest_runner *r) { (void)r; return 0; }
void ingest_runner_wake(ingest_runner *r) { (void)r; }

static void fuzz_route(const uint8_t *data, size_t size) {
    static const char *const methods[] = {"GET", "POST", "PATCH", "DELETE", "PUT"};
    if (size < 1) return;
    const char *method = methods[data[0] % 5];
    char *path = strndup((const char *)data + 1, size - 1);
    char *ns = NULL, *id = NULL, allow[192];
    int r = route_match(method, path, &ns, &id, allow, sizeof allow);
    if (r >= 0) {
        assert(r < R_COUNT);
        assert(!strcmp(server_routes[r].method, method));
        assert(!!strstr(server_routes[r].tmpl, "{ns}") == !!ns);
        if (ns) assert(*ns);
        if (id) assert(*id);
    } else {
        assert(r == -404 || r == -405 || r == -400);
        assert(!ns && !id);
        if (r == -405 || r == -400) assert(allow[0]);
    }
    free(ns);
    free(id);
    free(path);
}

static void fuzz_keys(const uint8_t *data, size_t size) {
    int fd = memfd_create("keys", 0);
    if (fd < 0) return;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return;
    }
    char path[64], err[512];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    key_table t;
    if (keys_load(path, &t, err, sizeof err) == 0) {
        for (size_t i = 0; i < t.n; i++) {
            assert(t.keys[i].name && t.keys[i].n_patterns > 0);
            assert(t.keys[i].rights && !(t.keys[i].rights & ~15u));
            key_allows(&t.keys[i], "a:b", SERVE_READ);
        }
        keys_find(&t, "secret");
        keys_free(&t);
    } else {
        assert(err[0]);
    }
    close(fd);
}

/* The recall handler hands the body to the library's query parser
 * (remem_query_parse; fuzz_query.c fuzzes it on its own too). */
static void fuzz_recall(const uint8_t *data, size_t size) {
    remem_query_json *p = NULL;
    char err[512];
    if (remem_query_parse((const char *)data, size, &p, err, sizeof err) == REMEM_OK) {
        const remem_query *q = remem_query_json_get(p);
        assert(q->n_namespaces > 0 && q->namespaces[0]);
        assert(q->text || (q->vector && q->dim > 0));
        remem_query_json_free(p);
    } else {
        assert(p == NULL && err[0]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    switch (data[0] % 3) {
    case 0: fuzz_route(data + 1, size - 1); break;
    case 1: fuzz_keys(data + 1, size - 1); break;
    default: fuzz_recall(data + 1, size - 1); break;
    }
    return 0;
}
