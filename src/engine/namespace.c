/*
 * namespace.c: calls over whole namespaces: history of an id, stats,
 * the list of namespaces, clear, export and reindex.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "score/score.h"
#include "util/util.h"

/* ---- history, stats, namespaces, clear ---- */

int remem_history(remem *db, const char *ns, const char *id, char **json) {
    *json = NULL;
    int rc = eng_need_open(db);
    if (rc) return rc;
    if (!id || !*id) return eng_fail(db, REMEM_EINVAL, "no id given");
    rc = store_history_json(db->st, ns, id, json);
    return rc ? eng_store_fail(db, rc) : REMEM_OK;
}

int remem_stats(remem *db, const char *ns, char **json) {
    *json = NULL;
    int rc = eng_need_open(db);
    if (rc) return rc;
    rc = store_stats_json(db->st, ns, util_now_ms(), json);
    if (rc) return eng_store_fail(db, rc);
    json_t *o = json_loads(*json, 0, NULL);
    if (o) {
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(db->emb->name));
        json_object_set_new(e, "model", json_string(db->emb->model_id));
        json_object_set_new(e, "dim", json_integer(db->emb->dim));
        json_object_set_new(o, "embedder", e);
        char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
        json_decref(o);
        if (s) {
            free(*json);
            *json = s;
        }
    }
    return REMEM_OK;
}

int remem_namespaces(remem *db, char **json) {
    *json = NULL;
    int rc = eng_need_open(db);
    if (rc) return rc;
    rc = store_namespaces_json(db->st, json);
    return rc ? eng_store_fail(db, rc) : REMEM_OK;
}

int remem_clear(remem *db, const char *ns, int64_t *deleted) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    if ((rc = eng_check_str(db, "namespace", ns, 256))) return rc;
    if (db->opt.read_only) return eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    if ((rc = store_begin(db->st))) return eng_store_fail(db, rc);
    int64_t n = 0;
    rc = store_clear(db->st, ns, &n);
    if (rc) eng_store_fail(db, rc);
    char after[64];
    snprintf(after, sizeof after, "{\"deleted\":%lld}", (long long)n);
    rc = eng_end_ns_change(db, ns, "clear", after, rc);
    if (!rc && deleted) *deleted = n;
    return rc;
}

/* ---- export ---- */

typedef struct export_ctx {
    remem_write_fn write;
    void *ctx;
    int with_vectors;
    int64_t count;
    int failed;
} export_ctx;

static int export_row(void *vctx, const store_row *r) {
    export_ctx *e = vctx;
    json_t *o = eng_memory_json(&r->m, e->with_vectors);
    char *s = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(9)) : NULL;
    json_decref(o);
    if (!s) return REMEM_ENOMEM;
    size_t len = strlen(s);
    s[len] = '\n'; /* json_dumps leaves room: replace NUL, write len+1 */
    int stop = e->write(e->ctx, s, len + 1);
    free(s);
    if (stop) {
        e->failed = 1;
        return REMEM_EIO;
    }
    e->count++;
    return 0;
}

int remem_export(remem *db, const char *ns, int with_vectors, remem_write_fn write, void *ctx,
                 int64_t *count) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    export_ctx e = {write, ctx, with_vectors, 0, 0};
    rc = store_scan(db->st, ns, with_vectors, export_row, &e);
    if (count) *count = e.count;
    if (rc == REMEM_EIO && e.failed) return eng_fail(db, rc, "export: the writer stopped");
    if (rc == REMEM_ENOMEM) return eng_fail(db, rc, "out of memory");
    return rc ? eng_store_fail(db, rc) : REMEM_OK;
}

/* ---- reindex ---- */

typedef struct reindex_ctx {
    int64_t *rowids;
    char **texts;
    size_t n, cap;
} reindex_ctx;

static int collect_row(void *vctx, const store_row *r) {
    reindex_ctx *c = vctx;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        int64_t *ids = realloc(c->rowids, cap * sizeof *ids);
        if (!ids) return REMEM_ENOMEM;
        c->rowids = ids;
        char **t = realloc(c->texts, cap * sizeof *t);
        if (!t) return REMEM_ENOMEM;
        c->texts = t;
        c->cap = cap;
    }
    if (!(c->texts[c->n] = strdup(r->m.text))) return REMEM_ENOMEM;
    c->rowids[c->n++] = r->rowid;
    return 0;
}

static int reindex_ns(remem *db, const char *ns, remem_progress_fn progress, void *pctx) {
    reindex_ctx c = {0};
    int rc = store_scan(db->st, ns, 0, collect_row, &c);
    if (rc) {
        if (rc == REMEM_ENOMEM)
            eng_fail(db, rc, "out of memory");
        else
            eng_store_fail(db, rc);
        goto out;
    }
    int dim = db->emb->dim;
    float *vecs = malloc((c.n ? c.n : 1) * (size_t)dim * sizeof *vecs);
    if (!vecs) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory for %zu vectors", c.n);
        goto out;
    }
    /* Embed everything first, then write it all in one transaction: a
     * namespace is never left half in one model and half in another. */
    const size_t batch = 256;
    for (size_t i = 0; i < c.n && !rc; i += batch) {
        size_t m = c.n - i < batch ? c.n - i : batch;
        char err[512] = "";
        rc = db->emb->embed(db->emb, (const char *const *)c.texts + i, m, vecs + i * dim, err,
                            sizeof err);
        if (rc) eng_fail(db, rc, "%s", err[0] ? err : remem_strerror(rc));
        if (progress) progress(pctx, (int64_t)(i + m), (int64_t)c.n);
    }
    if (!rc && (rc = store_begin(db->st)))
        eng_store_fail(db, rc);
    else if (!rc) {
        for (size_t i = 0; i < c.n && !rc; i++) {
            rc = store_set_vector(db->st, c.rowids[i], db->emb->model_id, vecs + i * dim, dim);
            if (rc) eng_store_fail(db, rc);
        }
        if (!rc) {
            rc = store_ns_set_model(db->st, ns, db->emb->model_id, dim);
            if (rc) eng_store_fail(db, rc);
        }
        char after[256];
        snprintf(after, sizeof after, "{\"model\":\"%.200s\",\"memories\":%zu}", db->emb->model_id,
                 c.n);
        rc = eng_end_ns_change(db, ns, "reindex", after, rc);
    }
    free(vecs);
out:
    for (size_t i = 0; i < c.n; i++) free(c.texts[i]);
    free(c.texts);
    free(c.rowids);
    return rc;
}

int remem_reindex(remem *db, const char *ns, remem_progress_fn progress, void *ctx) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    if (db->opt.read_only) return eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    if (ns) return reindex_ns(db, ns, progress, ctx);
    char *json = NULL;
    if ((rc = remem_namespaces(db, &json))) return rc;
    json_t *arr = json_loads(json, 0, NULL);
    free(json);
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o) {
        if ((rc = reindex_ns(db, json_string_value(json_object_get(o, "ns")), progress, ctx)))
            break;
    }
    json_decref(arr);
    return rc;
}
