/*
 * routes_ops.c: every route that runs a library operation: POST
 * /v1/<operation> (the body is the arguments as they are) and the REST
 * routes of the route table that name one (route_table.c:
 * POST /v1/namespaces/{ns}/memories is memory.add with "ns" from the
 * path). One path for all of them: the arguments are assembled (path
 * captures, then the body or the query string typed by the operation's
 * schema, then the route's fixed ones), the key's right is checked once
 * on every namespace they name (allowed / allowed_all), and the library
 * checks and runs the call, so a REST route and the operation take and
 * refuse the same arguments with the same message. The call is a remote
 * one (remem_call_ex with REMEM_CALL_REMOTE): an argument naming a path on
 * this machine ("x-local": archive_location, store) is refused with 400.
 * A background ingest is answered 202 once its job is stored and finished
 * by the ingest thread (ingest_runner.c).
 *
 * What stays here is what only HTTP has: the status of an add (201, or 202
 * for a key that may write but not read, which is told "accepted" and no
 * id it did not give: docs/server.md "Write answers"), a batch error's
 * "index", and the namespace list filtered to the key.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "serverInt.h"

static unsigned right_of(const char *word) {
    if (!strcmp(word, "read")) return SERVE_READ;
    if (!strcmp(word, "write")) return SERVE_WRITE;
    /* An operation whose answer shows stored content needs both. */
    if (!strcmp(word, "read+write")) return SERVE_READ | SERVE_WRITE;
    return SERVE_ADMIN;
}

/* ---- query strings ---- */

static const char *first_type(json_t *ps) {
    json_t *t = json_object_get(ps, "type");
    if (json_is_array(t)) t = json_array_get(t, 0);
    return json_is_string(t) ? json_string_value(t) : "string";
}

/* One query-string value as the property's type reads it; NULL when it
 * cannot be (the message in err). */
static json_t *typed(json_t *ps, const char *name, const char *v, char *err, size_t cap) {
    const char *t = first_type(ps);
    if (!strcmp(t, "integer") || !strcmp(t, "number")) {
        char *end;
        errno = 0;
        double x = strtod(v, &end);
        if (!*v || *end || errno || !isfinite(x))
            return snprintf(err, cap, "%s: \"%s\" is not a number", name, v), NULL;
        return x == floor(x) && fabs(x) < 9e15 ? json_integer((json_int_t)x) : json_real(x);
    }
    if (!strcmp(t, "boolean")) {
        if (!*v || !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes")) return json_true();
        if (!strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "no")) return json_false();
        return snprintf(err, cap, "%s must be true or false", name), NULL;
    }
    if (!strcmp(t, "array")) { /* a comma list */
        json_t *arr = json_array();
        char *copy = strdup(v);
        for (char *tok = copy, *next; tok && *tok; tok = next) {
            next = strchr(tok, ',');
            if (next) *next++ = '\0';
            if (*tok) json_array_append_new(arr, json_string(tok));
        }
        free(copy);
        return arr;
    }
    if (!strcmp(t, "object")) {
        json_error_t je;
        json_t *o = json_loads(v, JSON_DECODE_ANY, &je);
        if (!o) snprintf(err, cap, "%s: not JSON: %s", name, je.text);
        return o;
    }
    return json_string(v);
}

typedef struct query_ctx {
    json_t *props, *args;
    char err[512];
} query_ctx;

static enum MHD_Result one_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *value) {
    (void)kind;
    query_ctx *q = cls;
    if (q->err[0]) return MHD_NO;
    json_t *ps = json_object_get(q->props, key);
    /* the value arrives still percent-encoded (request_arg decodes alike) */
    char *text = strdup(value ? value : "");
    if (!text) return MHD_NO;
    for (char *p = text; *p; p++)
        if (*p == '+') *p = ' ';
    MHD_http_unescape(text);
    /* an unknown name goes through as text: the library names it */
    json_t *v = ps ? typed(ps, key, text, q->err, sizeof q->err) : json_string(text);
    free(text);
    if (!v) return MHD_NO;
    json_object_set_new(q->args, key, v);
    return MHD_YES;
}

json_t *query_args(request *rq, reply *rp, const remem_op_info *op) {
    json_t *schema = json_loads(op->schema, 0, NULL);
    query_ctx q = {json_object_get(schema, "properties"), json_object(), ""};
    MHD_get_connection_values(rq->conn, MHD_GET_ARGUMENT_KIND, one_arg, &q);
    json_decref(schema);
    if (q.err[0]) {
        reply_error(rp, 400, "REMEM_EINVAL", "%s: %s", op->name, q.err);
        json_decref(q.args);
        return NULL;
    }
    return q.args;
}

/* ---- assembling the arguments ---- */

/* Set a path capture as an argument; a body naming another value is
 * refused. 1, or 0 with a 400. */
static int from_path(json_t *args, const char *key, const char *v, reply *rp, const char *op) {
    if (!v) return 1;
    json_t *had = json_object_get(args, key);
    if (had && !(json_is_string(had) && !strcmp(json_string_value(had), v))) {
        reply_error(rp, 400, "REMEM_EINVAL", "%s: %s: the body says %s but the path says \"%s\"",
                    op, key, json_is_string(had) ? json_string_value(had) : "another value", v);
        return 0;
    }
    json_object_set_new(args, key, json_string(v));
    return 1;
}

static json_t *route_args(request *rq, reply *rp, const route *r, const remem_op_info *op) {
    json_t *args = NULL;
    if (r->flags & RF_QUERY)
        args = query_args(rq, rp, op);
    else if ((r->flags & RF_BODY) || rq->body_len > 0)
        args = body_object(rq, rp);
    else
        args = json_object();
    if (!args) return NULL;
    if (!from_path(args, "ns", rq->ns, rp, op->name) ||
        !from_path(args, "id", r == &server_routes[R_OP] ? NULL : rq->id, rp, op->name)) {
        json_decref(args);
        return NULL;
    }
    json_t *fixed = r->fixed ? json_loads(r->fixed, 0, NULL) : NULL;
    if (fixed) json_object_update(args, fixed);
    json_decref(fixed);
    /* an update over HTTP names who made it: the key */
    if (!strcmp(op->name, "memory.update") && !json_object_get(args, "actor"))
        json_object_set_new(args, "actor", json_string(rq->key ? rq->key->name : "http"));
    return args;
}

/* ---- access ---- */

/* The namespaces the arguments name: "ns" (recall also "namespaces"), a
 * name or a list. NULL when none; *bad, and why in the library's words
 * for the same mistake, when one is not a string. */
static json_t *named_namespaces(json_t *args, int *bad, char *why, size_t cap) {
    json_t *out = json_array();
    static const char *const keys[] = {"ns", "namespaces"};
    *bad = 0;
    for (size_t k = 0; k < 2; k++) {
        json_t *v = json_object_get(args, keys[k]);
        if (json_is_string(v)) json_array_append(out, v);
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
            if (json_is_string(e)) {
                json_array_append(out, e);
            } else if (!*bad) {
                *bad = 1;
                snprintf(why, cap, "%s: item %zu must be a non-empty string", keys[k], i);
            }
        }
        if (!*bad && v && !json_is_string(v) && !json_is_array(v) && !json_is_null(v)) {
            *bad = 1;
            snprintf(why, cap, "%s: must be a name or a list of names", keys[k]);
        }
    }
    if (!json_array_size(out)) json_decref(out), out = NULL;
    return out;
}

/* 1 when the key may run op with args; else a 403 (or 400) is in rp. */
static int may_run(request *rq, reply *rp, const route *r, const remem_op_info *op, json_t *args,
                   json_t *nss) {
    unsigned right = right_of(op->right);
    if (json_is_true(json_object_get(args, "purge"))) right = SERVE_ADMIN;
    if (r->flags & RF_VISIBLE) return 1; /* the answer is filtered instead */
    /* Store-wide (no namespace named): the right on exactly "*", and admin
     * too unless the operation only reads (recall, stats, export of every
     * namespace a read key on "*" may read anyway). MCP decides alike
     * (mcp/tools.c may_run). */
    if (!nss)
        return allowed_all(rq, rp, (op->hints & REMEM_OP_READ_ONLY) ? right : right | SERVE_ADMIN,
                           r == &server_routes[R_OP] ? op->name : r->tmpl);
    size_t i;
    json_t *e;
    json_array_foreach(nss, i, e) if (!allowed(rq, rp, json_string_value(e), right)) return 0;
    return 1;
}

/* ---- the answer ---- */

/* A key that may write ns but not read it: an add answers "accepted" and
 * only the ids the caller gave (docs/server.md, "Write answers"). */
static void blind_answer(json_t *args, json_t *res) {
    if (json_object_get(res, "ids")) {
        json_t *given = json_object_get(args, "memories"), *ids = json_array();
        size_t i;
        json_t *m;
        json_array_foreach(given, i, m) {
            json_t *id = json_object_get(m, "id");
            json_array_append(ids, json_is_string(id) ? id : json_null());
        }
        json_object_set_new(res, "ids", ids);
        return;
    }
    json_object_set_new(res, "outcome", json_string("accepted"));
    json_t *id = json_object_get(args, "id");
    if (json_is_string(id))
        json_object_set(res, "id", id);
    else
        json_object_del(res, "id");
}

static void reply_answer(request *rq, reply *rp, const route *r, json_t *args, const char *ns,
                         char *out) {
    if (!(r->flags & (RF_ADDS | RF_VISIBLE)) && !r->unwrap) {
        /* nothing to change in it (recall's hits, say): the engine's text
         * is the body as it is, without a parse and a second writing */
        reply_text(rp, 200, out, remem_free, "application/json");
        return;
    }
    json_t *res = json_loads(out, 0, NULL);
    remem_free(out);
    if (!res) {
        reply_error(rp, 500, "REMEM_ENOMEM", "out of memory");
        return;
    }
    int status = 200;
    const char *outcome = json_string_value(json_object_get(res, "outcome"));
    if ((r->flags & RF_ADDS) && !(outcome && !strcmp(outcome, "dropped"))) {
        int added = json_integer_value(json_object_get(res, "count")) > 0 ||
                    (outcome && !strcmp(outcome, "added"));
        status = added ? 201 : 200;
        if (!key_allows(rq->key, ns, SERVE_READ) && (added || outcome)) {
            blind_answer(args, res);
            status = 202;
        }
    }
    if (r->flags & RF_VISIBLE) { /* the namespaces the key may read */
        json_t *list = json_object_get(res, "namespaces"), *out_list = json_array();
        size_t i;
        json_t *e;
        json_array_foreach(list, i, e) {
            const char *n = json_string_value(json_object_get(e, "ns"));
            if (n && key_allows(rq->key, n, SERVE_READ)) json_array_append(out_list, e);
        }
        json_object_set_new(res, "namespaces", out_list);
    }
    json_t *body = r->unwrap ? json_incref(json_object_get(res, r->unwrap)) : json_incref(res);
    json_decref(res);
    reply_json(rp, status, body);
}

/* A failure; a batch's names the memory at fault ("index"). */
static void reply_failure(reply *rp, remem *db, int rc) {
    const char *msg = remem_errmsg(db);
    const char *at = msg ? strstr(msg, "memories[") : NULL;
    long index = at ? strtol(at + 9, NULL, 10) : -1;
    reply_error_at(rp, http_status_for(rc), remem_status_name(rc), index, "%s",
                   msg && *msg ? msg : remem_strerror(rc));
}

/* ---- the handlers ---- */

static void run_op(request *rq, reply *rp, const route *r, const remem_op_info *op);

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run op for the route, counted under the operation's name (/metrics). */
static void run(request *rq, reply *rp, const route *r, const remem_op_info *op) {
    double t0 = seconds_now();
    run_op(rq, rp, r, op);
    metrics_op(op->name, rp->status, seconds_now() - t0);
}

/* `clear` with a pattern (seed 004's clear_memories() of every agent) by a
 * key scoped to some namespaces: it clears the namespaces the pattern and
 * the key's own patterns both match, so the key needs its admin right on
 * them, not on "*". Returns 1 when args were so narrowed. */
static int clear_within_key(request *rq, const remem_op_info *op, json_t *args) {
    const char *ns = json_string_value(json_object_get(args, "ns"));
    const api_key *k = rq->key;
    if (!k || k->all_namespaces || strcmp(op->name, "clear") || !ns || !strpbrk(ns, "*?["))
        return 0;
    if ((k->rights & SERVE_ADMIN) != SERVE_ADMIN) return 0;
    json_t *pats = json_array();
    for (size_t i = 0; i < k->n_patterns; i++)
        json_array_append_new(pats, json_string(k->patterns[i]));
    return json_object_set_new(args, "within", pats) == 0;
}

static void run_op(request *rq, reply *rp, const route *r, const remem_op_info *op) {
    json_t *args = route_args(rq, rp, r, op);
    if (!args) return;
    if (!strcmp(op->name, "clear")) json_object_del(args, "within"); /* the server's to set */
    int bad = 0;
    int narrowed = clear_within_key(rq, op, args);
    char why[160] = "";
    json_t *nss = narrowed ? NULL : named_namespaces(args, &bad, why, sizeof why);
    char err[512];
    remem *db = NULL;
    const char *ns = nss       ? json_string_value(json_array_get(nss, 0))
                     : narrowed ? json_string_value(json_object_get(args, "ns"))
                                : NULL;
    int background =
        !strcmp(op->name, "ingest") && json_is_true(json_object_get(args, "background"));
    if (bad)
        reply_error(rp, 400, "REMEM_EINVAL", "%s: %s", op->name, why);
    else if (!narrowed && !may_run(rq, rp, r, op, args, nss))
        ;
    else if (background && ingest_runner_full(&rq->srv->ingest)) {
        /* refused before anything is written */
        reply_error(rp, 503, "REMEM_EBUSY",
                    "ingest: %d background jobs are waiting (--ingest-queue): try again later",
                    rq->srv->ingest.limit);
        rp->retry_after = 5;
    } else if (!(db = pool_get(&rq->srv->pool, ns, err, sizeof err)))
        reply_error(rp, 503, "REMEM_EBUSY", "%s", err);
    else {
        char *text = json_dumps(args, JSON_COMPACT), *out = NULL;
        int rc = text ? remem_call_ex(db, op->name, text, strlen(text), REMEM_CALL_REMOTE, &out)
                      : REMEM_ENOMEM;
        free(text);
        int pending = !rc && background && out && strstr(out, "\"status\":\"pending\"");
        if (rc)
            reply_failure(rp, db, rc);
        else
            reply_answer(rq, rp, r, args, ns, out);
        if (pending) {
            rp->status = 202;
            ingest_runner_wake(&rq->srv->ingest);
        }
        pool_put(&rq->srv->pool, db, ns);
    }
    json_decref(nss);
    json_decref(args);
}

void h_route_op(request *rq, reply *rp) {
    const route *r = &server_routes[rq->route];
    const remem_op_info *op = remem_op_find(r->op);
    if (!op) {
        reply_error(rp, 500, "REMEM_EINVAL", "no operation called \"%s\"", r->op);
        return;
    }
    run(rq, rp, r, op);
}

void h_op(request *rq, reply *rp) {
    const remem_op_info *op = remem_op_find(rq->id);
    if (!op) {
        reply_error(rp, 404, "REMEM_ENOTFOUND", "no operation called \"%s\"", rq->id);
        return;
    }
    run(rq, rp, &server_routes[R_OP], op);
}

/* GET /v1/operations: the table, with each schema as JSON. */
void h_ops_list(reply *rp) {
    size_t n;
    const remem_op_info *ops = remem_ops(&n);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *schema = json_loads(ops[i].schema, 0, NULL);
        unsigned h = ops[i].hints;
        json_array_append_new(
            arr, json_pack("{s:s,s:s,s:s,s:o,s:s?,s:{s:b,s:b,s:b}}", "name", ops[i].name, "right",
                           ops[i].right, "summary", ops[i].summary, "schema",
                           schema ? schema : json_object(), "group", ops[i].group, "hints",
                           "read_only", (h & REMEM_OP_READ_ONLY) != 0, "destructive",
                           (h & REMEM_OP_DESTRUCTIVE) != 0, "idempotent",
                           (h & REMEM_OP_IDEMPOTENT) != 0));
    }
    reply_json(rp, 200, json_pack("{s:o}", "operations", arr));
}
