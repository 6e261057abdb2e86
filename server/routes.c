/*
 * routes.c: the HTTP API of remem serve: the route table (the one list of
 * what the server answers), the path matcher and the dispatch to the
 * handlers, which live by resource:
 *
 *   routes_ops.c         every route that names an operation (the REST
 *                        routes over memories, recall, stats, namespaces,
 *                        clear, and POST /v1/<operation>)
 *   routes_namespaces.c  export (streamed) and find by id
 *   routes_admin.c       health, metrics, the API description, profiles,
 *                        embed
 *   reply.c              what they share: JSON replies and errors, access
 *                        checks, body readers
 *
 * Paths are matched raw (still percent-encoded) and their captures decoded
 * afterwards, so that a namespace may hold '/' (as %2F) or ':' and a custom
 * verb (":batch", ":invalidate") is told from an id by the raw text.
 * docs/openapi.json must describe exactly these routes
 * (tests/e2e/serve_openapi.sh checks it).
 *
 * Tenant rule: a handler refuses (403) before touching the store whenever
 * the key may not use a namespace the request names; store-wide views
 * (namespace lists, metrics) are filtered to the key's namespaces, and the
 * store-wide stats and export need a key that covers "*".
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "serverInt.h"

/* ------------------------------------------------------------------ */
/* Matching                                                            */
/* ------------------------------------------------------------------ */

/* Is s valid UTF-8 (no overlong forms, no surrogates, nothing past
 * U+10FFFF)? A namespace or id is stored and listed as text: invalid bytes
 * would be written and then vanish from every JSON view. */
static int utf8_ok(const unsigned char *s) {
    while (*s) {
        unsigned c = *s++;
        int more;
        unsigned min, cp;
        if (c < 0x80) continue;
        if ((c & 0xE0) == 0xC0)
            more = 1, min = 0x80, cp = c & 0x1F;
        else if ((c & 0xF0) == 0xE0)
            more = 2, min = 0x800, cp = c & 0x0F;
        else if ((c & 0xF8) == 0xF0)
            more = 3, min = 0x10000, cp = c & 0x07;
        else
            return 0;
        while (more--) {
            if ((*s & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (*s++ & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    }
    return 1;
}

static int hex_digit(char c) {
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* A capture, percent-decoded into *out (malloc'd). NULL on success, else
 * what is wrong with it (*out NULL): a '%' not followed by two hex digits,
 * an encoded NUL, bytes that are not UTF-8. */
static const char *decode_capture(const char *raw, size_t len, char **out) {
    *out = NULL;
    for (size_t i = 0; i < len; i++)
        if (raw[i] == '%' && (i + 2 >= len || !hex_digit(raw[i + 1]) || !hex_digit(raw[i + 2])))
            return "bad percent-encoding (a '%' must be followed by two hex digits)";
    char *s = strndup(raw, len);
    if (!s) return "out of memory";
    size_t n = MHD_http_unescape(s);
    if (n != strlen(s) || n == 0) {
        free(s);
        return n == 0 ? "empty" : "an encoded NUL (%00)";
    }
    if (!utf8_ok((const unsigned char *)s)) {
        free(s);
        return "not valid UTF-8";
    }
    *out = s;
    return NULL;
}

/* Does the raw path match tmpl? Sets the raw captures (pointers into path). */
static int path_matches(const char *tmpl, const char *path, const char **ns, size_t *ns_len,
                        const char **id, size_t *id_len) {
    *ns = *id = NULL;
    for (;;) {
        if (*tmpl != '/' || *path != '/') return 0;
        tmpl++, path++;
        size_t tl = strcspn(tmpl, "/"), pl = strcspn(path, "/");
        if (*tmpl == '{') {
            const char *close = memchr(tmpl, '}', tl);
            size_t suffix = tl - (size_t)(close + 1 - tmpl);
            if (pl <= suffix || memcmp(path + pl - suffix, close + 1, suffix)) return 0;
            if (strncmp(tmpl, "{ns}", 4) == 0)
                *ns = path, *ns_len = pl - suffix;
            else
                *id = path, *id_len = pl - suffix;
        } else if (tl != pl || memcmp(tmpl, path, tl) != 0) {
            return 0;
        }
        tmpl += tl, path += pl;
        if (!*tmpl || !*path) return !*tmpl && !*path;
    }
}

int route_match(const char *method, const char *path, char **ns, char **id, char *allow,
                size_t allowcap) {
    int found = -404;
    *ns = *id = NULL;
    allow[0] = 0;
    for (int r = 0; r < R_COUNT; r++) {
        const char *rns, *rid;
        if (r == R_OP) continue;
        size_t nsl = 0, idl = 0;
        if (!path_matches(server_routes[r].tmpl, path, &rns, &nsl, &rid, &idl)) continue;
        if (strcmp(server_routes[r].method, method) != 0) {
            size_t used = strlen(allow);
            if (!strstr(allow, server_routes[r].method))
                snprintf(allow + used, allowcap - used, "%s%s", used ? ", " : "",
                         server_routes[r].method);
            found = -405;
            continue;
        }
        const char *why = NULL, *what = NULL;
        if (rns && (why = decode_capture(rns, nsl, ns)))
            what = "namespace";
        else if (rid && (why = decode_capture(rid, idl, id)))
            what = "id";
        if (why) {
            free(*ns);
            *ns = NULL;
            snprintf(allow, allowcap, "the %s in the path: %s", what, why);
            return -400;
        }
        return r;
    }
    /* A library operation: /v1/a/b is "a.b" when remem_ops() has it (also
     * where a route of another method has the path: POST /v1/stats). */
    if ((found == -404 || (found == -405 && !strcmp(method, "POST"))) &&
        !strncmp(path, "/v1/", 4) && path[4]) {
        char name[128];
        size_t n = strlen(path + 4);
        if (n < sizeof name && !strpbrk(path + 4, "%.")) {
            memcpy(name, path + 4, n + 1);
            for (char *p = name; *p; p++)
                if (*p == '/') *p = '.';
            if (remem_op_find(name)) {
                if (strcmp(method, "POST")) {
                    snprintf(allow, allowcap, "POST");
                    return -405;
                }
                *id = strdup(name);
                return *id ? R_OP : -404;
            }
        }
    }
    return found;
}

/* Handlers that need no store handle, or take their own. */
static int handle_without_db(request *rq, reply *rp) {
    if (rq->route < R_COUNT && server_routes[rq->route].op) {
        h_route_op(rq, rp); /* an operation takes its handle itself */
        return 1;
    }
    switch (rq->route) {
    case R_HEALTHZ: h_healthz(rq, rp); return 1;
    case R_OPENAPI: h_openapi(rp); return 1;
    case R_PROFILES: h_profiles(rp); return 1;
    case R_PROFILE: h_profile(rq, rp); return 1;
    case R_OP: h_op(rq, rp); return 1;
    case R_OPS_LIST: h_ops_list(rp); return 1;
    case R_UI:
    case R_UI_ASSET: h_ui(rq, rp); return 1;
    case R_EXPORT_NS:
    case R_EXPORT_ALL: h_export(rq, rp); return 1;
    case R_MCP_POST:
    case R_MCP_GET:
    case R_MCP_DELETE: server_mcp(rq, rp); return 1;
    default: return 0;
    }
}

void route_handle(request *rq, reply *rp) {
    if (handle_without_db(rq, rp)) return;
    char err[512];
    remem *db = pool_get(&rq->srv->pool, rq->ns, err, sizeof err);
    if (!db) {
        reply_error(rp, 503, "REMEM_EBUSY", "%s", err);
        return;
    }
    switch (rq->route) {
    case R_METRICS: h_metrics(rq, rp, db); break;
    case R_EMBED: h_embed(rq, rp, db); break;
    case R_FIND_ID: h_find_id(rq, rp, db); break;
    default: reply_error(rp, 500, "REMEM_EINVAL", "no handler for this route");
    }
    pool_put(&rq->srv->pool, db, rq->ns);
}
