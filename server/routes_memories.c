/*
 * routes_memories.c: the routes on single memories: add, batch add, get,
 * update (PATCH), forget (DELETE), invalidate, history, and find by id
 * across namespaces. Bodies go through the engine's JSONL line parser, so
 * that HTTP bodies, imports and exports share one shape, and memories come
 * back in the engine's rendering (remem_memory_to_json).
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "serverInt.h"

/* ------------------------------------------------------------------ */
/* Writing                                                             */
/* ------------------------------------------------------------------ */

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

void h_add(request *rq, reply *rp, remem *db) {
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
    if (key_allows(rq->key, rq->ns, SERVE_READ))
        reply_write(rp, outcome == REMEM_ADDED ? 201 : 200, "add", rq->ns, id, outcome, NULL);
    else /* write alone: neither the status nor the id may tell a duplicate */
        reply_write(rp, 202, "add", rq->ns, m.id, outcome == REMEM_DROPPED ? outcome : 0, NULL);
done:
    remem_free_line(holder);
}

void h_batch(request *rq, reply *rp, remem *db) {
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
    if (remem_memory_off(db, rq->ns)) { /* accepted and dropped: no ids */
        json_t *none = json_array();
        for (size_t i = 0; i < n; i++) json_array_append_new(none, json_null());
        reply_json(rp, 200,
                   json_pack("{s:o,s:i,s:s,s:s}", "ids", none, "count", 0, "outcome", "dropped",
                             "memory", "off"));
        goto done;
    }
    /* Without read, an id the caller did not give could be a duplicate's:
     * only the caller's own ids come back (null for the others). */
    int blind = !key_allows(rq->key, rq->ns, SERVE_READ);
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(out, !blind     ? json_string(ids + i * id_cap)
                                   : ms[i].id ? json_string(ms[i].id)
                                              : json_null());
    reply_json(rp, blind ? 202 : 201, json_pack("{s:o,s:I}", "ids", out, "count", (json_int_t)n));
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

void h_get(request *rq, reply *rp, remem *db) {
    if (allowed(rq, rp, rq->ns, SERVE_READ)) reply_memory(rp, db, rq->ns, rq->id, 200);
}

/* A JSON value as text for a patch field; null becomes empty. */
static char *patch_json(json_t *v, const char *empty) {
    return json_is_null(v) ? strdup(empty) : json_dumps(v, JSON_COMPACT);
}

void h_patch(request *rq, reply *rp, remem *db) {
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
        reply_write(rp, 200, "update", rq->ns, rq->id,
                    remem_memory_off(db, rq->ns) ? REMEM_DROPPED : 0, NULL);
done:
    free(metadata);
    free(links);
    json_decref(o);
}

void h_delete(request *rq, reply *rp, remem *db) {
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
        reply_write(rp, 200, "forget", rq->ns, rq->id,
                    remem_memory_off(db, rq->ns) ? REMEM_DROPPED : purge, NULL);
}

void h_invalidate(request *rq, reply *rp, remem *db) {
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
        reply_write(rp, 200, "invalidate", rq->ns, rq->id,
                    remem_memory_off(db, rq->ns) ? REMEM_DROPPED : 0, json_string_value(sup));
done:
    json_decref(o);
}

void h_clear(request *rq, reply *rp, remem *db) {
    if (!allowed(rq, rp, rq->ns, SERVE_ADMIN)) return;
    int64_t deleted = 0;
    int rc = remem_clear(db, rq->ns, &deleted);
    if (rc != REMEM_OK)
        reply_remem_error(rp, db, rc);
    else if (remem_memory_off(db, rq->ns))
        reply_json(rp, 200,
                   json_pack("{s:s,s:i,s:s,s:s}", "ns", rq->ns, "deleted", 0, "outcome", "dropped",
                             "memory", "off"));
    else
        reply_json(rp, 200, json_pack("{s:s,s:I}", "ns", rq->ns, "deleted", (json_int_t)deleted));
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */

void h_history(request *rq, reply *rp, remem *db) {
    if (!allowed(rq, rp, rq->ns, SERVE_READ)) return;
    char *json = NULL;
    int rc = remem_history(db, rq->ns, rq->id, &json);
    if (rc != REMEM_OK)
        reply_remem_error(rp, db, rc);
    else
        reply_text(rp, 200, json, remem_free, "application/json");
}
void h_find_id(request *rq, reply *rp, remem *db) {
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
