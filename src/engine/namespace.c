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
#include "text/wordnet.h"
#include "engine/ops.h"
#include "score/score.h"
#include "util/util.h"

/* ---- history, stats, namespaces, clear ----
 * The store hands back rows and counts; they are rendered here, with
 * jansson, into the JSON texts the faces print. */

/* A JSON value stored as text; an unparsable one is kept as a string. */
static json_t *json_or_null(const char *t) {
    if (!t) return json_null();
    json_t *j = json_loads(t, JSON_DECODE_ANY, NULL);
    return j ? j : json_string(t);
}

typedef struct history_ctx {
    remem *db;
    const char *ns, *id;
    json_t *arr;
    char first_ns[512];
} history_ctx;

static int history_row(void *vctx, const store_history_row *h) {
    history_ctx *c = vctx;
    if (!c->ns) {
        if (!c->first_ns[0])
            snprintf(c->first_ns, sizeof c->first_ns, "%s", h->ns);
        else if (strcmp(c->first_ns, h->ns) != 0)
            return eng_fail(c->db, REMEM_EAMBIGUOUS,
                            "id %.200s has history in several namespaces; name one", c->id);
    }
    char at[40];
    util_format_time(h->at, at, sizeof at);
    json_t *o = json_object();
    json_object_set_new(o, "seq", json_integer(h->seq));
    json_object_set_new(o, "ns", json_string(h->ns));
    json_object_set_new(o, "id", json_string(c->id));
    json_object_set_new(o, "at", json_string(at));
    json_object_set_new(o, "op", json_string(h->op));
    json_object_set_new(o, "actor", h->actor ? json_string(h->actor) : json_null());
    json_object_set_new(o, "before", json_or_null(h->before));
    json_object_set_new(o, "after", json_or_null(h->after));
    json_array_append_new(c->arr, o);
    return 0;
}

int remem_history(remem *db, const char *ns, const char *id, char **json) {
    *json = NULL;
    int rc = eng_need_open(db);
    if (rc) return rc;
    if (!id || !*id) return eng_fail(db, REMEM_EINVAL, "no id given");
    history_ctx c = {.db = db, .ns = ns, .id = id, .arr = json_array()};
    if (!c.arr) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    rc = store_history(db->st, ns, id, history_row, &c);
    if (rc && rc != REMEM_EAMBIGUOUS) eng_store_fail(db, rc);
    if (!rc && json_array_size(c.arr) == 0)
        rc = eng_fail(db, REMEM_ENOTFOUND, "no history for %s%s%.200s", ns ? ns : "", ns ? "/" : "",
                      id);
    if (!rc && !(*json = json_dumps(c.arr, JSON_COMPACT | JSON_REAL_PRECISION(7))))
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    json_decref(c.arr);
    return rc;
}

/* The stats' by_kind, by_tier and by_model objects. */
static int stats_count(void *ctx, enum store_group g, const char *key, int64_t n) {
    json_t **groups = ctx;
    json_object_set_new(groups[g], key, json_integer(n));
    return 0;
}

static int stats_namespace(void *ctx, const store_ns *n) {
    json_object_set_new(ctx, n->ns, json_integer(n->rows));
    return 0;
}

/* What the handle holds in memory for ns, when it has loaded it (a
 * recall did): rows, and the bytes of the vectors and of the lexical
 * index, in all and per memory. Nothing when ns is not loaded: stats
 * never load a namespace. */
static void cache_stats(remem *db, const char *ns, json_t *o) {
    ns_cache *c = cache_peek(db, ns);
    if (!c) return;
    json_t *m = json_object();
    size_t lex = lex_memory_bytes(c->lex), vec = c->n * (size_t)c->dim * sizeof(float);
    json_object_set_new(m, "rows", json_integer((json_int_t)c->n));
    json_object_set_new(m, "vector_bytes", json_integer((json_int_t)vec));
    json_object_set_new(m, "lexical_bytes", json_integer((json_int_t)lex));
    json_object_set_new(m, "lexical_postings", json_integer((json_int_t)lex_postings(c->lex)));
    if (c->n)
        json_object_set_new(m, "lexical_bytes_per_memory", json_real((double)lex / (double)c->n));
    /* Where the cache came from (src/engine/cache_snap.c) and what the
     * load cost: a snapshot (and the version it was at, before catching
     * up) or a scan of the store. */
    json_object_set_new(m, "source", json_string(c->from_snapshot ? "snapshot" : "scan"));
    if (c->from_snapshot)
        json_object_set_new(m, "snapshot_version", json_integer((json_int_t)c->snap_version));
    json_object_set_new(m, "load_ms", json_real(c->load_ms));
    /* The entity index (cache_ent.c): 0 until a recall has used it. */
    json_object_set_new(m, "entity_bytes", json_integer((json_int_t)cache_ent_bytes(c)));
    json_object_set_new(m, "bytes", json_integer((json_int_t)cache_bytes(c)));
    cache_put(db, c);
    json_object_set_new(o, "cache", m);
}

/* Count key in a group object. */
static void count_key(json_t *g, const char *key) {
    json_t *n = json_object_get(g, key ? key : "");
    json_object_set_new(g, key ? key : "", json_integer(n ? json_integer_value(n) + 1 : 1));
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The group counts in key order, as the store's GROUP BY ... ORDER BY 1
 * gives them, into fn. */
static int sorted_counts(json_t *g, enum store_group which, store_count_fn fn, void *ctx) {
    size_t n = json_object_size(g), i = 0;
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    if (!keys) return REMEM_ENOMEM;
    const char *k;
    json_t *v;
    json_object_foreach(g, k, v) keys[i++] = k;
    qsort(keys, n, sizeof *keys, cmp_str);
    int rc = 0;
    for (i = 0; !rc && i < n; i++)
        rc = fn(ctx, which, keys[i], json_integer_value(json_object_get(g, keys[i])));
    free(keys);
    return rc;
}

/* The summary of a loaded namespace from its cache (caught up with the
 * store first), which holds every row: one pass in memory instead of four
 * store scans that read every row and its vector (seconds for a namespace
 * of 100,000 memories, which the inspector's namespaces view asks for).
 * *done is 0 when the namespace is not loaded: stats never load one. */
static int stats_cached(remem *db, const char *ns, int64_t now, store_summary *sum,
                        store_count_fn fn, void *ctx, int *done) {
    *done = 0;
    ns_cache *c = cache_peek(db, ns);
    if (!c) return REMEM_OK;
    cache_put(db, c);
    int rc = REMEM_OK;
    if (!(c = cache_get(db, ns, &rc)) || rc) return rc; /* empty: the store answers */
    json_t *g[3] = {json_object(), json_object(), json_object()};
    memset(sum, 0, sizeof *sum);
    sum->file_bytes = -1;
    double importance = 0;
    for (size_t i = 0; i < c->n; i++) {
        const remem_memory *m = &c->rows[i].m;
        if (!sum->memories || m->created_at < sum->oldest) sum->oldest = m->created_at;
        if (!sum->memories || m->created_at > sum->newest) sum->newest = m->created_at;
        sum->memories++;
        sum->invalidated += m->invalidated_at > 0;
        sum->expired += m->expires_at > 0 && m->expires_at <= now;
        sum->duplicates_folded += m->duplicate_count;
        importance += m->importance;
        count_key(g[STORE_BY_KIND], m->kind);
        count_key(g[STORE_BY_TIER], m->tier);
        count_key(g[STORE_BY_MODEL], m->model);
    }
    cache_put(db, c);
    sum->mean_importance = sum->memories ? importance / (double)sum->memories : 0;
    for (int k = 0; !rc && k < 3; k++) rc = sorted_counts(g[k], (enum store_group)k, fn, ctx);
    for (int k = 0; k < 3; k++) json_decref(g[k]);
    *done = 1;
    return rc;
}

int remem_stats(remem *db, const char *ns, char **json) {
    *json = NULL;
    int rc = eng_need_open(db);
    if (rc) return rc;
    if (ns && (rc = eng_check_str(db, "namespace", ns, 256))) return rc; /* "": none */
    store_summary sum;
    json_t *groups[3] = {json_object(), json_object(), json_object()};
    json_t *o = json_object(), *per = NULL;
    int done = 0;
    if (ns) rc = stats_cached(db, ns, util_now_ms(), &sum, stats_count, groups, &done);
    if (!rc && !done) rc = store_stats(db->st, ns, util_now_ms(), &sum, stats_count, groups);
    if (!rc && !ns) {
        per = json_object();
        rc = store_namespaces(db->st, stats_namespace, per);
    }
    if (rc) {
        eng_store_fail(db, rc);
        goto out;
    }
    json_object_set_new(o, "memories", json_integer(sum.memories));
    json_object_set_new(o, "invalidated", json_integer(sum.invalidated));
    json_object_set_new(o, "expired", json_integer(sum.expired));
    json_object_set_new(o, "duplicates_folded", json_integer(sum.duplicates_folded));
    json_object_set_new(o, "mean_importance", json_real(sum.mean_importance));
    if (sum.memories > 0) {
        char t[40];
        util_format_time(sum.oldest, t, sizeof t);
        json_object_set_new(o, "oldest", json_string(t));
        util_format_time(sum.newest, t, sizeof t);
        json_object_set_new(o, "newest", json_string(t));
    }
    json_object_set_new(o, "by_kind", groups[STORE_BY_KIND]);
    json_object_set_new(o, "by_tier", groups[STORE_BY_TIER]);
    /* Rows without a model are those stored while the embedder was down
     * (src/engine/pending.c): the retry queue's length. */
    json_t *nomodel = json_object_get(groups[STORE_BY_MODEL], "");
    json_object_set_new(o, "pending_embeddings",
                        json_integer(nomodel ? json_integer_value(nomodel) : 0));
    json_object_set_new(o, "by_model", groups[STORE_BY_MODEL]);
    groups[0] = groups[1] = groups[2] = NULL;
    if (!ns) {
        json_object_set_new(o, "by_namespace", per);
        per = NULL;
        json_object_set_new(o, "path", json_string(store_path(db->st)));
        /* The process's namespace caches (cache_share.c): shared by every
         * handle, under one budget. */
        json_object_set_new(o, "cache", cache_stats_json());
        /* The lexical lane's WordNet expansion (src/text/wordnet.h): off
         * when the files are missing, and said so here. */
        json_t *wn = json_object();
        json_object_set_new(wn, "available", json_boolean(wn_available()));
        json_object_set_new(wn, "dir", json_string(wn_dir()));
        json_object_set_new(o, "wordnet", wn);
        if (sum.file_bytes >= 0) json_object_set_new(o, "file_bytes", json_integer(sum.file_bytes));
    } else {
        json_object_set_new(o, "ns", json_string(ns));
        cache_stats(db, ns, o);
#define ENGINE_STATS_CALL(f) \
    if (!rc) rc = f(db, ns, o);
        ENGINE_STATS_HOOKS(ENGINE_STATS_CALL)
#undef ENGINE_STATS_CALL
        if (rc) goto out;
    }
    json_t *e = json_object();
    json_object_set_new(e, "name", json_string(db->emb->name));
    json_object_set_new(e, "model", json_string(db->emb->model_id));
    json_object_set_new(e, "dim", json_integer(db->emb->dim));
    json_object_set_new(o, "embedder", e);
    if (!(*json = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6))))
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
out:
    for (int i = 0; i < 3; i++) json_decref(groups[i]);
    json_decref(per);
    json_decref(o);
    return rc;
}

static int namespace_json(void *ctx, const store_ns *n) {
    json_t *o = json_object();
    json_object_set_new(o, "ns", json_string(n->ns));
    json_object_set_new(o, "count", json_integer(n->rows));
    json_object_set_new(o, "model", json_string(n->model));
    json_object_set_new(o, "dim", json_integer(n->dim));
    json_array_append_new(ctx, o);
    return 0;
}

int remem_namespaces(remem *db, char **json) {
    *json = NULL;
    int rc = eng_need_open(db);
    if (rc) return rc;
    json_t *arr = json_array();
    if (!arr) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    rc = store_namespaces(db->st, namespace_json, arr);
    if (rc)
        eng_store_fail(db, rc);
    else if (!(*json = json_dumps(arr, JSON_COMPACT)))
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    json_decref(arr);
    return rc;
}

int remem_clear(remem *db, const char *ns, int64_t *deleted) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    if ((rc = eng_check_str(db, "namespace", ns, 256))) return rc;
    if (eng_memory_off(db, ns)) { /* accepted, dropped */
        if (deleted) *deleted = 0;
        return REMEM_OK;
    }
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

/* The names of every namespace (a NULL-terminated malloc'd list). */
typedef struct names {
    char **v;
    size_t n, cap;
} names;

static int collect_name(void *ctx, const store_ns *n) {
    names *l = ctx;
    if (l->n + 1 >= l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v) return REMEM_ENOMEM;
        l->v = v;
        l->cap = cap;
    }
    if (!(l->v[l->n] = strdup(n->ns))) return REMEM_ENOMEM;
    l->v[++l->n] = NULL;
    return 0;
}

int remem_reindex(remem *db, const char *ns, remem_progress_fn progress, void *ctx) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    if (db->opt.read_only) return eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    if (ns && (rc = eng_check_str(db, "namespace", ns, 256))) return rc;
    if (ns) return reindex_ns(db, ns, progress, ctx);
    /* The names first: reindexing writes, which must not happen while the
     * store is still listing. */
    names l = {0};
    rc = store_namespaces(db->st, collect_name, &l);
    if (rc == REMEM_ENOMEM)
        eng_fail(db, rc, "out of memory");
    else if (rc)
        eng_store_fail(db, rc);
    for (size_t i = 0; !rc && i < l.n; i++) rc = reindex_ns(db, l.v[i], progress, ctx);
    for (size_t i = 0; i < l.n; i++) free(l.v[i]);
    free(l.v);
    return rc;
}
