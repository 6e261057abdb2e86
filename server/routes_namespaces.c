/*
 * routes_namespaces.c: the two store routes that are not a plain
 * operation call: the streamed export (GET .../export, its arguments read
 * by the export operation's schema, its lines streamed through a pipe by
 * export.c rather than gathered into one answer) and GET /v1/memories/{id},
 * which looks for an id only in the namespaces the key may read, so that
 * neither the answer nor an "ambiguous" error reveals another tenant's ids.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "serverInt.h"

void h_export(request *rq, reply *rp) {
    const remem_op_info *op = remem_op_find("export");
    json_t *args = op ? query_args(rq, rp, op) : NULL;
    if (!args) {
        if (!op) reply_error(rp, 500, "REMEM_EINVAL", "no operation called \"export\"");
        return;
    }
    const char *k;
    json_t *v;
    json_object_foreach(args, k, v) if (strcmp(k, "vectors")) {
        reply_error(rp, 400, "REMEM_EINVAL", "export: %s: unknown argument", k);
        json_decref(args);
        return;
    }
    int vectors = json_is_true(json_object_get(args, "vectors"));
    json_decref(args);
    if (rq->ns ? !allowed(rq, rp, rq->ns, SERVE_READ)
               : !allowed_all(rq, rp, SERVE_READ,
                              "the store-wide /v1/export (ask "
                              "/v1/namespaces/{ns}/export)"))
        return;
    server_export(rq, rp, rq->ns, vectors);
}

/* The memory (ns, id) as the reply. */
static void reply_memory(reply *rp, remem *db, const char *ns, const char *id) {
    remem_record *rec = NULL;
    int rc = remem_get(db, ns, id, &rec);
    if (rc != REMEM_OK) {
        reply_remem_error(rp, db, rc);
        return;
    }
    reply_text(rp, 200, remem_memory_to_json(remem_record_memory(rec)), remem_free,
               "application/json");
    remem_record_free(rec);
}

void h_find_id(request *rq, reply *rp, remem *db) {
    if (key_allows_all(rq->key, SERVE_READ)) {
        reply_memory(rp, db, NULL, rq->id);
        return;
    }
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
        reply_memory(rp, db, found, rq->id);
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
