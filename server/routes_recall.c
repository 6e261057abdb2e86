/*
 * routes_recall.c: POST /v1/recall. The body is parsed by the library's one
 * query parser (remem_query_parse, shared with MCP, the CLI and Python),
 * every namespace it names is checked for read before a handle is taken,
 * the handle warm for the first namespace runs it, and the engine renders
 * the result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "serverInt.h"

/* The body is parsed before a handle is taken, so that the handle can be
 * the one warm for the first namespace named. */
void h_recall(request *rq, reply *rp) {
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
