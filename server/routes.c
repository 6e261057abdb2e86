/*
 * routes.c: the HTTP API of remem serve, one handler per route, each a thin
 * translation: check the caller's rights on the namespaces it names, turn
 * the JSON body into a remem call on a pooled handle, turn the result into
 * JSON. The engine's own renderings (remem_memory_to_json and friends) and
 * its JSONL line parser are used wherever they fit, so a memory looks the
 * same over HTTP, on the command line, in exports and over MCP.
 *
 * Paths are matched raw (still percent-encoded) and their captures decoded
 * afterwards, so that a namespace may hold '/' (as %2F) or ':' and a custom
 * verb (":batch", ":invalidate") is told from an id by the raw text. The
 * route table is the one list of what the server answers; docs/openapi.json
 * must describe exactly these (tests/e2e/serve_openapi.sh checks it).
 *
 * Tenant rule: a handler refuses (403) before touching the store whenever
 * the key may not use a namespace the request names; store-wide views
 * (namespace lists, metrics) are filtered to the key's namespaces, and the
 * store-wide stats and export need a key that covers "*".
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../mcp/mcp.h"
#include "serverInt.h"

const route server_routes[R_COUNT] = {
    [R_HEALTHZ] = {"GET", "/healthz", RF_PUBLIC},
    [R_METRICS] = {"GET", "/metrics", 0},
    [R_OPENAPI] = {"GET", "/openapi.json", RF_PUBLIC},
    [R_MCP_POST] = {"POST", "/mcp", RF_BODY},
    [R_MCP_GET] = {"GET", "/mcp", 0},
    [R_MCP_DELETE] = {"DELETE", "/mcp", 0},
    [R_PROFILES] = {"GET", "/v1/profiles", 0},
    [R_PROFILE] = {"GET", "/v1/profiles/{name}", 0},
    [R_EMBED] = {"POST", "/v1/embed", RF_BODY},
    [R_NS_LIST] = {"GET", "/v1/namespaces", 0},
    [R_NS_CLEAR] = {"DELETE", "/v1/namespaces/{ns}", 0},
    [R_NS_STATS] = {"GET", "/v1/namespaces/{ns}/stats", 0},
    [R_STATS] = {"GET", "/v1/stats", 0},
    [R_ADD] = {"POST", "/v1/namespaces/{ns}/memories", RF_BODY},
    [R_BATCH] = {"POST", "/v1/namespaces/{ns}/memories:batch", RF_BODY},
    [R_MEM_GET] = {"GET", "/v1/namespaces/{ns}/memories/{id}", 0},
    [R_MEM_PATCH] = {"PATCH", "/v1/namespaces/{ns}/memories/{id}", RF_BODY},
    [R_MEM_DELETE] = {"DELETE", "/v1/namespaces/{ns}/memories/{id}", 0},
    [R_INVALIDATE] = {"POST", "/v1/namespaces/{ns}/memories/{id}:invalidate", RF_BODY_OPTIONAL},
    [R_HISTORY] = {"GET", "/v1/namespaces/{ns}/memories/{id}/history", 0},
    [R_EXPORT_NS] = {"GET", "/v1/namespaces/{ns}/export", 0},
    [R_EXPORT_ALL] = {"GET", "/v1/export", 0},
    [R_RECALL] = {"POST", "/v1/recall", RF_BODY},
    [R_FIND_ID] = {"GET", "/v1/memories/{id}", 0},
};

/* ------------------------------------------------------------------ */
/* Matching                                                            */
/* ------------------------------------------------------------------ */

/* A capture, percent-decoded. NULL when it decodes to an embedded NUL or
 * memory ran out. */
static char *decode_capture(const char *raw, size_t len) {
    char *s = strndup(raw, len);
    if (!s) return NULL;
    size_t n = MHD_http_unescape(s);
    if (n != strlen(s) || n == 0) {
        free(s);
        return NULL;
    }
    return s;
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
        if ((rns && !(*ns = decode_capture(rns, nsl))) ||
            (rid && !(*id = decode_capture(rid, idl)))) {
            free(*ns);
            *ns = NULL;
            return -400;
        }
        return r;
    }
    return found;
}

/* ------------------------------------------------------------------ */
/* Replies                                                             */
/* ------------------------------------------------------------------ */

int http_status_for(int rc) {
    switch (rc) {
    case REMEM_OK: return 200;
    case REMEM_EINVAL:
    case REMEM_EFILTER:
    case REMEM_EPROFILE:
    case REMEM_EDIM:
    case REMEM_EPARSE: return 400;
    case REMEM_ENOTFOUND: return 404;
    case REMEM_EMODEL:
    case REMEM_EAMBIGUOUS: return 409;
    case REMEM_EBUSY: return 503;
    default: return 500;
    }
}

void reply_text(reply *rp, int status, char *text, void (*free_fn)(void *),
                const char *content_type) {
    if (rp->free_body) rp->free_body(rp->body);
    rp->status = status;
    rp->body = text;
    rp->len = text ? strlen(text) : 0;
    rp->free_body = free_fn;
    rp->content_type = content_type;
    if (!text) { /* out of memory while rendering */
        static char oom[] = "{\"error\":{\"code\":\"REMEM_ENOMEM\",\"message\":\"out of memory\"}}";
        rp->status = 500;
        rp->body = oom;
        rp->len = sizeof oom - 1;
        rp->free_body = NULL;
        rp->content_type = "application/json";
    }
}

void reply_json(reply *rp, int status, json_t *obj) {
    char *text = obj ? json_dumps(obj, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    json_decref(obj);
    reply_text(rp, status, text, free, "application/json");
}

static void reply_error_v(reply *rp, int status, const char *code, json_t *extra, const char *fmt,
                          va_list ap) {
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    json_t *err = json_pack("{s:s,s:s}", "code", code, "message", msg);
    if (err && extra) json_object_update(err, extra);
    json_decref(extra);
    reply_json(rp, status, json_pack("{s:o}", "error", err));
}

void reply_error(reply *rp, int status, const char *code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    reply_error_v(rp, status, code, NULL, fmt, ap);
    va_end(ap);
}

/* An error about one element of a batch: the body also carries "index". */
static void reply_error_at(reply *rp, int status, const char *code, long index, const char *fmt,
                           ...) __attribute__((format(printf, 5, 6)));
static void reply_error_at(reply *rp, int status, const char *code, long index, const char *fmt,
                           ...) {
    va_list ap;
    va_start(ap, fmt);
    reply_error_v(rp, status, code,
                  index >= 0 ? json_pack("{s:I}", "index", (json_int_t)index) : NULL, fmt, ap);
    va_end(ap);
}

void reply_remem_error(reply *rp, remem *db, int rc) {
    const char *msg = remem_errmsg(db);
    reply_error(rp, http_status_for(rc), remem_status_name(rc), "%s",
                msg && *msg ? msg : remem_strerror(rc));
}

static const char *right_word(unsigned right) {
    return right == SERVE_ADMIN ? "administer" : right == SERVE_WRITE ? "write" : "read";
}

/* 1 if the caller may use ns that way; else a 403 is in rp. */
static int allowed(request *rq, reply *rp, const char *ns, unsigned right) {
    if (key_allows(rq->key, ns, right)) return 1;
    reply_error(rp, 403, "REMEM_EFORBIDDEN", "key \"%s\" may not %s namespace \"%s\"",
                rq->key->name, right_word(right), ns);
    return 0;
}

static int allowed_all(request *rq, reply *rp, unsigned right, const char *what) {
    if (key_allows_all(rq->key, right)) return 1;
    reply_error(rp, 403, "REMEM_EFORBIDDEN",
                "key \"%s\" is limited to some namespaces; %s needs a key for "
                "\"*\"",
                rq->key->name, what);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Bodies                                                              */
/* ------------------------------------------------------------------ */

/* The body as a JSON object, or NULL with a 400 in rp. */
static json_t *body_object(request *rq, reply *rp) {
    if (rq->body_len == 0) {
        reply_error(rp, 400, "REMEM_EPARSE", "a JSON object body is required");
        return NULL;
    }
    json_error_t je;
    json_t *o = json_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, &je);
    if (!o) {
        reply_error(rp, 400, "REMEM_EPARSE", "malformed JSON at line %d, column %d: %s", je.line,
                    je.column, je.text);
        return NULL;
    }
    if (!json_is_object(o)) {
        reply_error(rp, 400, "REMEM_EPARSE", "the body must be a JSON object");
        json_decref(o);
        return NULL;
    }
    return o;
}

/* 1 if every field of o is in known (NULL-terminated); else a 400. */
static int known_fields(json_t *o, const char *const *known, reply *rp, const char *where) {
    const char *field;
    json_t *v;
    json_object_foreach(o, field, v) {
        const char *const *k = known;
        while (*k && strcmp(*k, field) != 0) k++;
        if (!*k) {
            reply_error(rp, 400, "REMEM_EINVAL", "%s: unknown field \"%s\"", where, field);
            return 0;
        }
    }
    return 1;
}

/* A time field: integer ms, or a string remem_parse_time reads, or null
 * (0). 1 on success, else a 400. */
static int time_field(json_t *v, const char *name, int64_t *ms, reply *rp) {
    if (!v || json_is_null(v)) {
        *ms = 0;
        return 1;
    }
    if (json_is_integer(v)) {
        *ms = json_integer_value(v);
        return 1;
    }
    if (json_is_string(v) && remem_parse_time(json_string_value(v), ms) == 0) return 1;
    reply_error(rp, 400, "REMEM_EPARSE", "\"%s\" must be milliseconds or an ISO 8601 time", name);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */
/* ------------------------------------------------------------------ */

static const char *outcome_name(int outcome) {
    return outcome == REMEM_UPSERTED    ? "upserted"
           : outcome == REMEM_DUPLICATE ? "duplicate"
                                        : "added";
}

/* Parse one memory object (its text) with the engine's line parser, so that
 * HTTP bodies, imports and exports share one shape; the memory must belong
 * to the path's namespace. */
static int parse_memory(remem *db, request *rq, reply *rp, const char *text, size_t len,
                        remem_memory *m, remem_line **holder, long index) {
    remem_memory_init(m);
    int rc = remem_parse_line(db, text, len, rq->ns, m, holder);
    char where[48] = "";
    if (index >= 0) snprintf(where, sizeof where, "memories[%ld]: ", index);
    if (rc != REMEM_OK) {
        const char *msg = remem_errmsg(db);
        reply_error_at(rp, http_status_for(rc), remem_status_name(rc), index, "%s%s", where,
                       msg && *msg ? msg : remem_strerror(rc));
        return 0;
    }
    if (m->ns && strcmp(m->ns, rq->ns) != 0) {
        reply_error_at(rp, 400, "REMEM_EINVAL", index,
                       "%sthe memory names namespace \"%s\" but the path says "
                       "\"%s\"",
                       where, m->ns, rq->ns);
        return 0;
    }
    m->ns = rq->ns;
    return 1;
}

/* The fields of a memory in a body (the engine's line parser also accepts
 * the read-only fields of an export line; over HTTP a typo is an error). */
static const char *const memory_fields[] = {"id",       "ns",         "text",       "kind",
                                            "tier",     "importance", "created_at", "expires_at",
                                            "metadata", "links",      "vector",     NULL};

static void h_add(request *rq, reply *rp, remem *db) {
    if (!allowed(rq, rp, rq->ns, SERVE_WRITE)) return;
    json_t *o = body_object(rq, rp);
    if (!o) return;
    int known = known_fields(o, memory_fields, rp, "memory");
    json_decref(o);
    if (!known) return;
    remem_memory m;
    remem_line *holder = NULL;
    if (!parse_memory(db, rq, rp, rq->body, rq->body_len, &m, &holder, -1)) goto done;
    char id[1024];
    int outcome = 0;
    int rc = remem_add(db, &m, id, sizeof id, &outcome);
    if (rc != REMEM_OK) {
        reply_remem_error(rp, db, rc);
        goto done;
    }
    reply_json(
        rp, outcome == REMEM_ADDED ? 201 : 200,
        json_pack("{s:s,s:s,s:s}", "id", id, "ns", rq->ns, "outcome", outcome_name(outcome)));
done:
    remem_free_line(holder);
}

static void h_batch(request *rq, reply *rp, remem *db) {
    if (!allowed(rq, rp, rq->ns, SERVE_WRITE)) return;
    json_t *o = body_object(rq, rp);
    if (!o) return;
    static const char *const known[] = {"memories", NULL};
    json_t *arr = json_object_get(o, "memories");
    size_t n = json_array_size(arr);
    remem_memory *ms = NULL;
    remem_line **holders = NULL;
    char *ids = NULL;
    const size_t id_cap = 256;
    if (!known_fields(o, known, rp, "batch")) goto done;
    if (!json_is_array(arr)) {
        reply_error(rp, 400, "REMEM_EINVAL", "expected {\"memories\": [{\"text\": ...}, ...]}");
        goto done;
    }
    if (n == 0) {
        reply_json(rp, 200, json_pack("{s:[],s:i}", "ids", "count", 0));
        goto done;
    }
    ms = calloc(n, sizeof *ms);
    holders = calloc(n, sizeof *holders);
    ids = calloc(n, id_cap);
    if (!ms || !holders || !ids) {
        reply_error(rp, 500, "REMEM_ENOMEM", "out of memory for %zu memories", n);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(arr, i);
        if (!json_is_object(e)) {
            reply_error_at(rp, 400, "REMEM_EPARSE", (long)i, "memories[%zu] is not an object", i);
            goto done;
        }
        char where[48];
        snprintf(where, sizeof where, "memories[%zu]", i);
        if (!known_fields(e, memory_fields, rp, where)) goto done;
        char *text = json_dumps(e, JSON_COMPACT);
        int ok = text && parse_memory(db, rq, rp, text, strlen(text), &ms[i], &holders[i], (long)i);
        free(text);
        if (!ok) {
            if (!text) reply_error(rp, 500, "REMEM_ENOMEM", "out of memory");
            goto done;
        }
    }
    long failed = -1;
    int rc = remem_add_batch(db, ms, n, ids, id_cap, &failed);
    if (rc != REMEM_OK) {
        const char *msg = remem_errmsg(db);
        reply_error_at(rp, http_status_for(rc), remem_status_name(rc), failed, "%s",
                       msg && *msg ? msg : remem_strerror(rc));
        goto done;
    }
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(out, json_string(ids + i * id_cap));
    reply_json(rp, 201, json_pack("{s:o,s:I}", "ids", out, "count", (json_int_t)n));
done:
    if (holders)
        for (size_t i = 0; i < n; i++) remem_free_line(holders[i]);
    free(holders);
    free(ms);
    free(ids);
    json_decref(o);
}

/* The memory (ns, id) as the reply, with the given status. */
static void reply_memory(reply *rp, remem *db, const char *ns, const char *id, int status) {
    remem_record *rec = NULL;
    int rc = remem_get(db, ns, id, &rec);
    if (rc != REMEM_OK) {
        reply_remem_error(rp, db, rc);
        return;
    }
    reply_text(rp, status, remem_memory_to_json(remem_record_memory(rec)), remem_free,
               "application/json");
    remem_record_free(rec);
}

static void h_get(request *rq, reply *rp, remem *db) {
    if (allowed(rq, rp, rq->ns, SERVE_READ)) reply_memory(rp, db, rq->ns, rq->id, 200);
}

/* A JSON value as text for a patch field; null becomes empty. */
static char *patch_json(json_t *v, const char *empty) {
    return json_is_null(v) ? strdup(empty) : json_dumps(v, JSON_COMPACT);
}

static void h_patch(request *rq, reply *rp, remem *db) {
    if (!allowed(rq, rp, rq->ns, SERVE_WRITE)) return;
    json_t *o = body_object(rq, rp);
    if (!o) return;
    static const char *const known[] = {"text",       "kind",  "tier",  "importance", "metadata",
                                        "expires_at", "links", "actor", NULL};
    char *metadata = NULL, *links = NULL;
    remem_patch p;
    remem_patch_init(&p);
    if (!known_fields(o, known, rp, "update")) goto done;
    json_t *v;
    static const struct {
        const char *name;
        unsigned bit;
        size_t offset;
    } strings[] = {{"text", REMEM_SET_TEXT, offsetof(remem_patch, text)},
                   {"kind", REMEM_SET_KIND, offsetof(remem_patch, kind)},
                   {"tier", REMEM_SET_TIER, offsetof(remem_patch, tier)},
                   {"actor", 0, offsetof(remem_patch, actor)}};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) {
        if (!(v = json_object_get(o, strings[i].name))) continue;
        if (!json_is_string(v)) {
            reply_error(rp, 400, "REMEM_EINVAL", "\"%s\" must be a string", strings[i].name);
            goto done;
        }
        *(const char **)((char *)&p + strings[i].offset) = json_string_value(v);
        p.fields |= strings[i].bit;
    }
    if ((v = json_object_get(o, "importance"))) {
        if (!json_is_number(v)) {
            reply_error(rp, 400, "REMEM_EINVAL", "\"importance\" must be a number");
            goto done;
        }
        p.importance = json_number_value(v);
        p.fields |= REMEM_SET_IMPORTANCE;
    }
    if ((v = json_object_get(o, "metadata"))) {
        if (!json_is_object(v) && !json_is_null(v)) {
            reply_error(rp, 400, "REMEM_EINVAL",
                        "\"metadata\" must be an object (or null to empty it)");
            goto done;
        }
        p.metadata = metadata = patch_json(v, "{}");
        p.fields |= REMEM_SET_METADATA;
    }
    if ((v = json_object_get(o, "links"))) {
        if (!json_is_array(v) && !json_is_null(v)) {
            reply_error(rp, 400, "REMEM_EINVAL", "\"links\" must be an array of ids (or null)");
            goto done;
        }
        p.links = links = patch_json(v, "[]");
        p.fields |= REMEM_SET_LINKS;
    }
    if ((v = json_object_get(o, "expires_at"))) {
        if (!time_field(v, "expires_at", &p.expires_at, rp)) goto done;
        p.fields |= REMEM_SET_EXPIRES;
    }
    if (!p.fields) {
        reply_error(rp, 400, "REMEM_EINVAL",
                    "nothing to update: give text, kind, tier, importance, "
                    "metadata, expires_at or links");
        goto done;
    }
    if (!p.actor) p.actor = rq->key ? rq->key->name : "http";
    int rc = remem_update(db, rq->ns, rq->id, &p);
    if (rc != REMEM_OK)
        reply_remem_error(rp, db, rc);
    else
        reply_memory(rp, db, rq->ns, rq->id, 200);
done:
    free(metadata);
    free(links);
    json_decref(o);
}

static void h_delete(request *rq, reply *rp, remem *db) {
    int purge = request_flag(rq, "purge", 0);
    if (purge < 0) {
        reply_error(rp, 400, "REMEM_EINVAL", "purge must be true or false");
        return;
    }
    if (!allowed(rq, rp, rq->ns, purge ? SERVE_ADMIN : SERVE_WRITE)) return;
    int rc = remem_forget(db, rq->ns, rq->id, purge);
    if (rc != REMEM_OK)
        reply_remem_error(rp, db, rc);
    else
        reply_json(rp, 200,
                   json_pack("{s:s,s:s,s:b}", "id", rq->id, "ns", rq->ns, "purged", purge));
}

static void h_invalidate(request *rq, reply *rp, remem *db) {
    if (!allowed(rq, rp, rq->ns, SERVE_WRITE)) return;
    json_t *o = NULL;
    if (rq->body_len > 0 && !(o = body_object(rq, rp))) return;
    static const char *const known[] = {"superseded_by", "reason", NULL};
    if (o && !known_fields(o, known, rp, "invalidate")) goto done;
    json_t *sup = json_object_get(o, "superseded_by");
    json_t *why = json_object_get(o, "reason");
    if ((sup && !json_is_string(sup) && !json_is_null(sup)) ||
        (why && !json_is_string(why) && !json_is_null(why))) {
        reply_error(rp, 400, "REMEM_EINVAL", "\"superseded_by\" and \"reason\" must be strings");
        goto done;
    }
    int rc = remem_invalidate(db, rq->ns, rq->id, json_string_value(sup), json_string_value(why));
    if (rc != REMEM_OK)
        reply_remem_error(rp, db, rc);
    else
        reply_memory(rp, db, rq->ns, rq->id, 200);
done:
    json_decref(o);
}

static void h_clear(request *rq, reply *rp, remem *db) {
    if (!allowed(rq, rp, rq->ns, SERVE_ADMIN)) return;
    int64_t deleted = 0;
    int rc = remem_clear(db, rq->ns, &deleted);
    if (rc != REMEM_OK)
        reply_remem_error(rp, db, rc);
    else
        reply_json(rp, 200, json_pack("{s:s,s:I}", "ns", rq->ns, "deleted", (json_int_t)deleted));
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */

static void h_history(request *rq, reply *rp, remem *db) {
    if (!allowed(rq, rp, rq->ns, SERVE_READ)) return;
    char *json = NULL;
    int rc = remem_history(db, rq->ns, rq->id, &json);
    if (rc != REMEM_OK)
        reply_remem_error(rp, db, rc);
    else
        reply_text(rp, 200, json, remem_free, "application/json");
}

/* remem_namespaces' array, filtered to what key may read; NULL with rp set
 * on failure. */
static json_t *visible_namespaces(request *rq, reply *rp, remem *db) {
    char *text = NULL;
    int rc = remem_namespaces(db, &text);
    if (rc != REMEM_OK) {
        reply_remem_error(rp, db, rc);
        return NULL;
    }
    json_t *all = json_loads(text, 0, NULL);
    remem_free(text);
    if (!json_is_array(all)) {
        json_decref(all);
        reply_error(rp, 500, "REMEM_ECORRUPT", "namespaces: unreadable list");
        return NULL;
    }
    json_t *out = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(all, i, e) {
        const char *ns = json_string_value(json_object_get(e, "ns"));
        if (ns && key_allows(rq->key, ns, SERVE_READ)) json_array_append(out, e);
    }
    json_decref(all);
    return out;
}

static void h_namespaces(request *rq, reply *rp, remem *db) {
    json_t *list = visible_namespaces(rq, rp, db);
    if (list) reply_json(rp, 200, json_pack("{s:o}", "namespaces", list));
}

static void h_stats(request *rq, reply *rp, remem *db, const char *ns) {
    if (ns ? !allowed(rq, rp, ns, SERVE_READ)
           : !allowed_all(rq, rp, SERVE_READ,
                          "the store-wide /v1/stats (ask "
                          "/v1/namespaces/{ns}/stats)"))
        return;
    char *json = NULL;
    int rc = remem_stats(db, ns, &json);
    if (rc != REMEM_OK)
        reply_remem_error(rp, db, rc);
    else
        reply_text(rp, 200, json, remem_free, "application/json");
}

static void h_find_id(request *rq, reply *rp, remem *db) {
    if (key_allows_all(rq->key, SERVE_READ)) {
        reply_memory(rp, db, NULL, rq->id, 200);
        return;
    }
    /* A scoped key looks only in its own namespaces, so that neither the
     * answer nor an "ambiguous" error reveals another tenant's ids. */
    json_t *list = visible_namespaces(rq, rp, db);
    if (!list) return;
    const char *found = NULL;
    int hits = 0;
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) {
        const char *ns = json_string_value(json_object_get(e, "ns"));
        remem_record *rec = NULL;
        if (remem_get(db, ns, rq->id, &rec) == REMEM_OK) {
            found = ns;
            hits++;
        }
        remem_record_free(rec);
    }
    if (hits == 1)
        reply_memory(rp, db, found, rq->id, 200);
    else if (hits == 0)
        reply_error(rp, 404, "REMEM_ENOTFOUND", "no memory %s in the namespaces of key \"%s\"",
                    rq->id, rq->key->name);
    else
        reply_error(rp, 409, "REMEM_EAMBIGUOUS",
                    "id %s exists in %d namespaces; name one: "
                    "/v1/namespaces/{ns}/memories/{id}",
                    rq->id, hits);
    json_decref(list);
}

static void h_export(request *rq, reply *rp) {
    int vectors = request_flag(rq, "vectors", 0);
    if (vectors < 0) {
        reply_error(rp, 400, "REMEM_EINVAL", "vectors must be true or false");
        return;
    }
    if (rq->ns ? !allowed(rq, rp, rq->ns, SERVE_READ)
               : !allowed_all(rq, rp, SERVE_READ,
                              "the store-wide /v1/export (ask "
                              "/v1/namespaces/{ns}/export)"))
        return;
    server_export(rq, rp, rq->ns, vectors);
}

/* The body is parsed by the library's one query parser (remem_query_parse,
 * shared with MCP and the CLI) before a handle is taken, so that the handle
 * can be the one warm for the first namespace named. */
static void h_recall(request *rq, reply *rp) {
    char err[512];
    remem_query_json *pq = NULL;
    remem *db = NULL;
    remem_result *res = NULL;
    int rc = remem_query_parse(rq->body ? rq->body : "", rq->body_len, &pq, err, sizeof err);
    if (rc) {
        reply_error(rp, http_status_for(rc), remem_status_name(rc), "%s", err);
        return;
    }
    const remem_query *q = remem_query_json_get(pq);
    for (size_t i = 0; i < q->n_namespaces; i++)
        if (!allowed(rq, rp, q->namespaces[i], SERVE_READ)) goto done;
    if (!(db = pool_get(&rq->srv->pool, q->namespaces[0], err, sizeof err))) {
        reply_error(rp, 503, "REMEM_EBUSY", "%s", err);
        goto done;
    }
    rc = remem_recall(db, q, &res);
    if (rc != REMEM_OK)
        reply_remem_error(rp, db, rc);
    else
        reply_text(rp, 200, remem_result_to_json(res), remem_free, "application/json");
    remem_result_free(res);
    pool_put(&rq->srv->pool, db, q->namespaces[0]);
done:
    remem_query_json_free(pq);
}

/* ------------------------------------------------------------------ */
/* Everything else                                                     */
/* ------------------------------------------------------------------ */

static void h_profiles(reply *rp) {
    json_t *arr = json_array();
    for (const char *const *p = remem_profiles(); *p; p++) {
        char *def = remem_profile_json(*p);
        json_t *d = def ? json_loads(def, 0, NULL) : NULL;
        remem_free(def);
        json_array_append_new(arr, json_pack("{s:s,s:o*}", "name", *p, "definition", d));
    }
    reply_json(rp, 200, json_pack("{s:o}", "profiles", arr));
}

static void h_profile(request *rq, reply *rp) {
    char *def = remem_profile_json(rq->id);
    if (!def) {
        reply_error(rp, 404, "REMEM_EPROFILE", "unknown profile \"%s\"", rq->id);
        return;
    }
    reply_text(rp, 200, def, remem_free, "application/json");
}

static void h_embed(request *rq, reply *rp, remem *db) {
    json_t *o = body_object(rq, rp);
    if (!o) return;
    static const char *const known[] = {"texts", NULL};
    json_t *texts = json_object_get(o, "texts");
    size_t n = json_array_size(texts);
    int dim = remem_embedder_dim(db);
    const char **in = NULL;
    float *out = NULL;
    if (!known_fields(o, known, rp, "embed")) goto done;
    if (!json_is_array(texts) || n == 0) {
        reply_error(rp, 400, "REMEM_EINVAL", "expected {\"texts\": [\"...\", ...]}");
        goto done;
    }
    in = calloc(n, sizeof *in);
    out = malloc(n * (size_t)dim * sizeof *out);
    if (!in || !out) {
        reply_error(rp, 500, "REMEM_ENOMEM", "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        if (!(in[i] = json_string_value(json_array_get(texts, i)))) {
            reply_error(rp, 400, "REMEM_EINVAL", "\"texts\"[%zu] is not a string", i);
            goto done;
        }
    int rc = remem_embed(db, in, n, out);
    if (rc != REMEM_OK) {
        reply_remem_error(rp, db, rc);
        goto done;
    }
    json_t *vecs = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array();
        for (int j = 0; j < dim; j++)
            json_array_append_new(v, json_real(out[i * (size_t)dim + (size_t)j]));
        json_array_append_new(vecs, v);
    }
    reply_json(rp, 200,
               json_pack("{s:s,s:s,s:i,s:o}", "embedder", remem_embedder_name(db), "model",
                         remem_embedder_model(db), "dim", dim, "vectors", vecs));
done:
    free(in);
    free(out);
    json_decref(o);
}

static void h_metrics(request *rq, reply *rp, remem *db) {
    json_t *list = visible_namespaces(rq, rp, db);
    if (!list) return;
    reply_text(rp, 200, metrics_render(rq->srv, list), free,
               "text/plain; version=0.0.4; charset=utf-8");
    json_decref(list);
}

static void h_healthz(request *rq, reply *rp) {
    reply_json(rp, 200,
               json_pack("{s:s,s:s,s:I}", "status", "ok", "version", REMEM_VERSION, "uptime_ms",
                         (json_int_t)(remem_now() - rq->srv->started_ms)));
}

static void h_openapi(reply *rp) {
    size_t len;
    const char *doc = openapi_document(&len);
    rp->status = 200;
    rp->body = (char *)doc;
    rp->len = len;
    rp->free_body = NULL;
    rp->content_type = "application/json";
}

/* Handlers that need no store handle, or take their own. */
static int handle_without_db(request *rq, reply *rp) {
    switch (rq->route) {
    case R_HEALTHZ: h_healthz(rq, rp); return 1;
    case R_OPENAPI: h_openapi(rp); return 1;
    case R_PROFILES: h_profiles(rp); return 1;
    case R_PROFILE: h_profile(rq, rp); return 1;
    case R_RECALL: h_recall(rq, rp); return 1;
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
    case R_NS_LIST: h_namespaces(rq, rp, db); break;
    case R_NS_CLEAR: h_clear(rq, rp, db); break;
    case R_NS_STATS: h_stats(rq, rp, db, rq->ns); break;
    case R_STATS: h_stats(rq, rp, db, NULL); break;
    case R_ADD: h_add(rq, rp, db); break;
    case R_BATCH: h_batch(rq, rp, db); break;
    case R_MEM_GET: h_get(rq, rp, db); break;
    case R_MEM_PATCH: h_patch(rq, rp, db); break;
    case R_MEM_DELETE: h_delete(rq, rp, db); break;
    case R_INVALIDATE: h_invalidate(rq, rp, db); break;
    case R_HISTORY: h_history(rq, rp, db); break;
    case R_FIND_ID: h_find_id(rq, rp, db); break;
    default: reply_error(rp, 500, "REMEM_EINVAL", "no handler for this route");
    }
    pool_put(&rq->srv->pool, db, rq->ns);
}
