/*
 * reply.c: what every route handler shares: replies in the one JSON error
 * shape ({"error":{"code","message"}}), the HTTP status of each remem
 * status, the access checks (403 before the store is touched), and the
 * readers of JSON bodies and their fields (a 400 naming the field).
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "serverInt.h"

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
    case REMEM_EUNSUPPORTED: return 501; /* e.g. planning with no LLM configured */
    case REMEM_ELLM: return 502;         /* the LLM behind remem failed */
    case REMEM_ETIMEOUT: return 504;     /* the LLM did not answer in time (--llm-deadline) */
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
void reply_error_at(reply *rp, int status, const char *code, long index, const char *fmt, ...) {
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
    return right == SERVE_ADMIN                  ? "administer"
           : right == SERVE_WRITE                ? "write"
           : right == (SERVE_READ | SERVE_WRITE) ? "read and write"
                                                 : "read";
}

/* 1 if the caller may use ns that way; else a 403 is in rp. */
int allowed(request *rq, reply *rp, const char *ns, unsigned right) {
    if (key_allows(rq->key, ns, right)) return 1;
    reply_error(rp, 403, "REMEM_EFORBIDDEN", "key \"%s\" may not %s namespace \"%s\"",
                rq->key->name, right_word(right), ns);
    return 0;
}

int allowed_all(request *rq, reply *rp, unsigned right, const char *what) {
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
json_t *body_object(request *rq, reply *rp) {
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
int known_fields(json_t *o, const char *const *known, reply *rp, const char *where) {
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

/* ---- query strings ---- */

char *request_arg(const request *rq, const char *name) {
    const char *raw = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, name);
    if (!raw) return NULL;
    char *s = strdup(raw);
    if (!s) return NULL;
    for (char *p = s; *p; p++)
        if (*p == '+') *p = ' ';
    MHD_http_unescape(s);
    return s;
}

int request_flag(const request *rq, const char *name, int dflt) {
    char *v = request_arg(rq, name);
    if (!v) return dflt;
    int r = -1;
    if (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes") || !*v)
        r = 1;
    else if (!strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "no"))
        r = 0;
    free(v);
    return r;
}

/* remem_namespaces' array, filtered to what key may read; NULL with rp set
 * on failure. */
json_t *visible_namespaces(request *rq, reply *rp, remem *db) {
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
