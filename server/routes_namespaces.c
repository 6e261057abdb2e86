/*
 * routes_namespaces.c: the routes on namespaces and the store as a whole:
 * the namespace list (filtered to what the key may read), stats, clearing
 * a namespace, and the streamed export.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "serverInt.h"

void h_namespaces(request *rq, reply *rp, remem *db) {
    json_t *list = visible_namespaces(rq, rp, db);
    if (list) reply_json(rp, 200, json_pack("{s:o}", "namespaces", list));
}

void h_stats(request *rq, reply *rp, remem *db, const char *ns) {
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

void h_export(request *rq, reply *rp) {
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
