/*
 * check.c: `check` and `repair` (seed 003 failure mode 4, memory store
 * corruption). check asks the store for its own consistency check
 * (SQLite's integrity_check) and then reads every memory's vector against
 * its namespace: the model recorded for the namespace, the dimension, and
 * values that are finite and not all zero. repair re-embeds, with the
 * handle's embedder, every vector that fails, when the handle embeds with
 * the namespace's model (otherwise `remem reindex` is the way), and says
 * what it could not mend.
 *
 * There is no full-text index on disk to check: schema 3 dropped the FTS5
 * table, and the lexical lane's index is built in memory from the rows
 * when a namespace is loaded, so it is rebuilt on every load.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maintenance/maintenance.h"

#define LIST_MAX 1000

typedef struct ns_check {
    char model[128];
    int dim;
    int64_t rows, pending, bad;
    json_t *bad_list; /* [{"id","problem"}], at most LIST_MAX */
    int64_t *bad_rowids;
    size_t nb, cap;
    int oom;
} ns_check;

static const char *vector_problem(const ns_check *c, const store_row *r, char *buf, size_t cap) {
    if (!r->m.vector) return NULL; /* pending, counted apart */
    if (!r->m.model || strcmp(r->m.model, c->model)) {
        snprintf(buf, cap, "model %s, the namespace's is %s", r->m.model ? r->m.model : "(none)",
                 c->model[0] ? c->model : "(none)");
        return buf;
    }
    if (r->m.dim != c->dim) {
        snprintf(buf, cap, "dimension %d, the namespace's is %d", r->m.dim, c->dim);
        return buf;
    }
    double norm = 0;
    for (int i = 0; i < r->m.dim; i++) {
        float v;
        memcpy(&v, (const char *)r->m.vector + (size_t)i * sizeof v, sizeof v);
        if (!isfinite(v)) {
            snprintf(buf, cap, "value %d is not a finite number", i);
            return buf;
        }
        norm += (double)v * v;
    }
    if (norm == 0) {
        snprintf(buf, cap, "all zeros");
        return buf;
    }
    return NULL;
}

static int check_row(void *ctx, const store_row *r) {
    ns_check *c = ctx;
    char buf[200];
    c->rows++;
    if (!r->m.vector) {
        c->pending++;
        return 0;
    }
    const char *why = vector_problem(c, r, buf, sizeof buf);
    if (!why) return 0;
    c->bad++;
    if (json_array_size(c->bad_list) < LIST_MAX)
        json_array_append_new(c->bad_list, json_pack("{s:s,s:s}", "id", r->m.id, "problem", why));
    if (c->nb == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 64;
        int64_t *p = realloc(c->bad_rowids, nc * sizeof *p);
        if (!p) return REMEM_ENOMEM;
        c->bad_rowids = p;
        c->cap = nc;
    }
    c->bad_rowids[c->nb++] = r->rowid;
    return 0;
}

static int add_problem(void *ctx, const char *problem) {
    if (json_array_size(ctx) < LIST_MAX) json_array_append_new(ctx, json_string(problem));
    return 0;
}

static int add_ns(void *ctx, const store_ns *n) {
    json_array_append_new(ctx, json_string(n->ns));
    return 0;
}

/* Re-embed the failing vectors of one namespace (repair). */
static int mend(remem *db, const char *ns, ns_check *c, int64_t *fixed, json_t *left) {
    if (!c->nb) return REMEM_OK;
    if (c->model[0] && strcmp(c->model, db->emb->model_id)) {
        json_array_append_new(left, json_pack("{s:s,s:I,s:s}", "ns", ns, "vectors",
                                              (json_int_t)c->nb, "why",
                                              "this handle embeds with another model: "
                                              "run remem reindex --ns NS"));
        return REMEM_OK;
    }
    int rc = REMEM_OK;
    for (size_t i = 0; !rc && i < c->nb; i++) {
        store_row r;
        if ((rc = store_get_rowid(db->st, c->bad_rowids[i], 0, &r))) {
            if (rc == REMEM_ENOTFOUND)
                rc = REMEM_OK;
            else
                eng_store_fail(db, rc);
            continue;
        }
        float *vec = malloc((size_t)db->emb->dim * sizeof *vec);
        char err[512] = "";
        if (!vec)
            rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        else if ((rc = db->emb->embed(db->emb, (const char *const *)&r.m.text, 1, vec, err,
                                      sizeof err)))
            eng_fail(db, rc, "repair: embedding %s failed: %s", r.m.id, err);
        if (!rc && !(rc = store_begin(db->st))) {
            txn x = {0};
            if ((rc = store_set_vector(db->st, r.rowid, db->emb->model_id, vec, db->emb->dim)) ||
                (rc = store_history_add(db->st, ns, r.m.id, util_now_ms(), "repair", "repair", NULL,
                                        NULL)))
                eng_store_fail(db, rc);
            if (!rc) rc = eng_set_model(db, ns);
            if (!rc) rc = eng_txn_row(db, &x, ns, r.rowid);
            rc = eng_txn_end(db, &x, rc);
            if (!rc) (*fixed)++;
        } else if (!rc) {
            eng_store_fail(db, rc);
        }
        free(vec);
        store_row_clear(&r);
    }
    return rc;
}

static int run(remem *db, json_t *args, int repair, json_t **result) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    if (repair && db->opt.read_only)
        return eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    json_t *problems = json_array(), *names = json_array(), *per = json_array(),
           *left = json_array();
    const char *only = op_str(args, "ns", NULL);
    rc = store_integrity(db->st, add_problem, problems);
    if (rc) eng_store_fail(db, rc);
    if (!rc && only)
        json_array_append_new(names, json_string(only));
    else if (!rc && (rc = store_namespaces(db->st, add_ns, names)))
        eng_store_fail(db, rc);
    int64_t bad = 0, pending = 0, fixed = 0;
    size_t i;
    json_t *v;
    json_array_foreach(names, i, v) {
        if (rc) break;
        const char *ns = json_string_value(v);
        ns_check c = {.bad_list = json_array()};
        int r = store_ns_info(db->st, ns, c.model, sizeof c.model, &c.dim, NULL, NULL);
        if (r && r != REMEM_ENOTFOUND) rc = eng_store_fail(db, r);
        if (!rc && (rc = store_scan(db->st, ns, 1, check_row, &c))) {
            if (rc == REMEM_ENOMEM) {
                eng_fail(db, rc, "out of memory");
            } else {
                /* A damaged file stops the scan: that is a finding of
                 * the check, not a failure of it. */
                char msg[700];
                snprintf(msg, sizeof msg, "namespace %s: reading its memories failed: %s", ns,
                         store_errmsg(db->st));
                json_array_append_new(problems, json_string(msg));
                rc = REMEM_OK;
            }
        }
        if (!rc && repair) rc = mend(db, ns, &c, &fixed, left);
        bad += c.bad;
        pending += c.pending;
        json_array_append_new(per, json_pack("{s:s,s:s,s:i,s:I,s:I,s:I,s:o}", "ns", ns, "model",
                                             c.model, "dim", c.dim, "memories", (json_int_t)c.rows,
                                             "pendingEmbeddings", (json_int_t)c.pending,
                                             "badVectors", (json_int_t)c.bad, "bad", c.bad_list));
        free(c.bad_rowids);
    }
    json_decref(names);
    if (rc) {
        json_decref(problems);
        json_decref(per);
        json_decref(left);
        return rc;
    }
    size_t np = json_array_size(problems);
    int ok = np == 0 && (repair ? bad == fixed : bad == 0);
    char text[400];
    if (repair)
        snprintf(text, sizeof text, "%lld vector%s re-embedded, %lld left; store integrity: %s%s",
                 (long long)fixed, fixed == 1 ? "" : "s", (long long)(bad - fixed),
                 np ? "DAMAGED" : "ok",
                 np ? " (repair cannot mend the file itself: restore a backup, or export what "
                      "reads and import it into a new store)"
                    : "");
    else
        snprintf(text, sizeof text, "%s: store integrity %s, %lld bad vector%s, %lld pending",
                 ok ? "ok" : "PROBLEMS", np ? "DAMAGED" : "ok", (long long)bad, bad == 1 ? "" : "s",
                 (long long)pending);
    *result = json_pack(
        "{s:b,s:o,s:o,s:I,s:I,s:s,s:s}", "ok", ok, "integrity", problems, "namespaces", per,
        "badVectors", (json_int_t)bad, "pendingEmbeddings", (json_int_t)pending, "lexicalIndex",
        "in memory, rebuilt from the rows on load (no full-text table on disk since "
        "schema 3)",
        "text", text);
    if (repair) {
        json_object_set_new(*result, "repaired", json_integer(fixed));
        json_object_set_new(*result, "notRepaired", left);
    } else {
        json_decref(left);
    }
    return REMEM_OK;
}

static int op_check(remem *db, json_t *args, json_t **result) { return run(db, args, 0, result); }
static int op_repair(remem *db, json_t *args, json_t **result) { return run(db, args, 1, result); }

#define S_CHECK_NS                                                                      \
    "{\"type\":\"object\",\"properties\":{\"ns\":{\"type\":\"string\",\"minLength\":1," \
    "\"description\":\"only this namespace's vectors (the store's integrity is always " \
    "checked)\"}}}"

const engine_op check_ops[] = {
    {{"check", "admin",
      "Check the store: its files' integrity, and every vector's model, dimension and values "
      "against its namespace.",
      S_CHECK_NS, REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "admin"},
     op_check},
    {{"repair", "admin",
      "Re-embed every vector that check finds bad (with the handle's embedder, when it is the "
      "namespace's model), and report what cannot be mended.",
      S_CHECK_NS, REMEM_OP_DESTRUCTIVE, "admin"},
     op_repair},
};
const size_t check_ops_n = sizeof check_ops / sizeof check_ops[0];
