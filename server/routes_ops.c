/*
 * routes_ops.c: POST /v1/<operation>: every library operation (remem_ops():
 * rating, reflection, decisions, lessons, episodes, pruning...) on one
 * handler. The body is the operation's arguments as they are, checked by
 * the library against the operation's schema (the same check the CLI, MCP
 * and Python get). Access: the key needs the operation's right ("read",
 * "write" or "admin") over the namespace named by "ns", and an admin key
 * over every namespace when the operation names none. The call is a
 * remote one (REMEM_CALL_REMOTE): an argument naming a path on this
 * machine ("x-local": archive_location, store) is refused with 400. The
 * answer is the library's JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "serverInt.h"

static unsigned right_of(const char *word) {
    if (!strcmp(word, "read")) return SERVE_READ;
    if (!strcmp(word, "write")) return SERVE_WRITE;
    /* An operation whose answer shows stored content needs both. */
    if (!strcmp(word, "read+write")) return SERVE_READ | SERVE_WRITE;
    return SERVE_ADMIN;
}

void h_op(request *rq, reply *rp) {
    const remem_op_info *op = remem_op_find(rq->id);
    if (!op) {
        reply_error(rp, 404, "REMEM_ENOTFOUND", "no operation called \"%s\"", rq->id);
        return;
    }
    json_t *args = body_object(rq, rp);
    if (!args) return;
    json_t *jns = json_object_get(args, "ns");
    const char *ns = json_string_value(jns);
    if (jns && !ns) {
        reply_error(rp, 400, "REMEM_EINVAL", "%s: ns: expected a string", op->name);
        json_decref(args);
        return;
    }
    if (ns ? !allowed(rq, rp, ns, right_of(op->right))
           : !allowed_all(rq, rp, right_of(op->right) | SERVE_ADMIN, op->name)) {
        json_decref(args);
        return;
    }
    /* A background ingest: answered 202 once its job is stored, finished
     * by the ingest thread (ingest_runner.c); refused while the queue is
     * full, before anything is written. */
    int background = !strcmp(op->name, "ingest") && json_is_true(json_object_get(args, "background"));
    if (background && ingest_runner_full(&rq->srv->ingest)) {
        reply_error(rp, 503, "REMEM_EBUSY",
                    "ingest: %d background jobs are waiting (--ingest-queue): try again later",
                    rq->srv->ingest.limit);
        rp->retry_after = 5;
        json_decref(args);
        return;
    }
    char err[512];
    remem *db = pool_get(&rq->srv->pool, ns, err, sizeof err);
    if (!db) {
        reply_error(rp, 503, "REMEM_EBUSY", "%s", err);
        json_decref(args);
        return;
    }
    char *out = NULL;
    int rc = remem_call_ex(db, op->name, rq->body ? rq->body : "", rq->body_len, REMEM_CALL_REMOTE,
                           &out);
    int pending = !rc && background && out && strstr(out, "\"status\":\"pending\"");
    if (rc)
        reply_remem_error(rp, db, rc);
    else
        reply_text(rp, pending ? 202 : 200, out, remem_free, "application/json");
    if (pending) ingest_runner_wake(&rq->srv->ingest);
    pool_put(&rq->srv->pool, db, ns);
    json_decref(args); /* ns points into it */
}

/* GET /v1/operations: the table, with each schema as JSON. */
void h_ops_list(reply *rp) {
    size_t n;
    const remem_op_info *ops = remem_ops(&n);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *schema = json_loads(ops[i].schema, 0, NULL);
        json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:o}", "name", ops[i].name, "right",
                                             ops[i].right, "summary", ops[i].summary, "schema",
                                             schema ? schema : json_object()));
    }
    reply_json(rp, 200, json_pack("{s:o}", "operations", arr));
}
