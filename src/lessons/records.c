/*
 * records.c: how src/lessons/ reads and writes its memories.
 *
 * Reading lists the valid memories of one kind from the namespace's cache
 * (the copy the engine keeps in step with the store, other processes'
 * writes included), copying each out (optionally only those a filter
 * keeps, and their vectors) with an id index, so that an operation's
 * lookups are hash lookups, not scans.
 *
 * Writing is a batch of records applied in one store transaction: new
 * records are embedded before it begins (an embedder never runs under the
 * store's write lock), and a change to an existing record is a function
 * applied inside the transaction to the record as stored then. The store
 * serialises writers of a namespace (SQLite's write lock, PostgreSQL's
 * per-namespace advisory lock), so a counter incremented there is never
 * lost to a concurrent writer, and a status is changed from the state it
 * has at that moment. Only the metadata an operation changes is written
 * back: the row's other fields (tier, importance, text, vector) stay as
 * stored, so a PATCH or an archive in between is kept.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/hooks.h"
#include "lessons/lessons.h"

void lsn_list_free(lsn_list *l) {
    if (!l) return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].id);
        free(l->v[i].text);
        json_decref(l->v[i].meta);
    }
    free(l->v);
    json_decref(l->index);
    l->v = NULL;
    l->index = NULL;
    l->n = 0;
}

static int rec_cmp(const void *a, const void *b) {
    const lsn_rec *x = a, *y = b;
    if (x->created_at != y->created_at) return x->created_at < y->created_at ? -1 : 1;
    return strcmp(x->id, y->id);
}

static int is_of(const remem_memory *m, const char *kind) {
    return m->kind && !strcmp(m->kind, kind) && !m->invalidated_at;
}

/* Copy row i of c into r (its vector when asked and stored). */
static int copy_rec(ns_cache *c, size_t i, const json_t *meta, const lsn_list_opts *o,
                    lsn_rec *r) {
    const remem_memory *m = &c->rows[i].m;
    int borrow = o && o->borrow;
    r->id = strdup(m->id);
    r->text = strdup(m->text ? m->text : "");
    r->meta = !meta ? json_object() : borrow ? json_incref((json_t *)meta) : json_deep_copy(meta);
    r->created_at = m->created_at;
    r->updated_at = m->updated_at;
    r->archived = m->tier && !strcmp(m->tier, "archived");
    if (o && o->sim_to && m->model && *m->model && c->ix && i < flat_count(c->ix)) {
        r->sim = flat_dot(o->sim_to, flat_row(c->ix, i), c->dim);
        r->has_sim = 1;
    }
    return r->id && r->text && r->meta ? 0 : -1;
}

static int build_index(lsn_list *l) {
    if (!(l->index = json_object())) return -1;
    for (size_t i = 0; i < l->n; i++)
        if (json_object_set_new(l->index, l->v[i].id, json_integer((json_int_t)i))) return -1;
    return 0;
}

int lsn_list_where(remem *db, const char *ns, const char *kind, const lsn_list_opts *o,
                   lsn_list *out) {
    memset(out, 0, sizeof *out);
    int rc = eng_need_open(db);
    if (rc) return rc;
    ns_cache *c = cache_get(db, ns, &rc);
    if (!c) return rc;
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) n += is_of(&c->rows[i].m, kind);
    if (n && !(out->v = calloc(n, sizeof *out->v))) {
        cache_put(db, c);
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    out->borrowed = o && o->borrow;
    for (size_t i = 0; i < c->n; i++) {
        if (!is_of(&c->rows[i].m, kind)) continue;
        const json_t *meta = cache_meta(c, i);
        if (o && o->keep && !o->keep(meta, o->ctx)) continue;
        if (copy_rec(c, i, meta, o, &out->v[out->n++])) {
            cache_put(db, c);
            lsn_list_free(out);
            return eng_fail(db, REMEM_ENOMEM, "out of memory");
        }
    }
    /* The cache is shared with other threads, which may change or evict it
     * once it is released: what the list keeps is its own (a borrowed
     * metadata object is a reference, kept alive by its count). */
    cache_put(db, c);
    /* Rows in the cache are not in rowid order after removals: sort them
     * by creation, then id, to list them in the order written. */
    if (out->n > 1 && !(o && o->any_order)) qsort(out->v, out->n, sizeof *out->v, rec_cmp);
    if (build_index(out)) {
        lsn_list_free(out);
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    return REMEM_OK;
}

int lsn_list_kind(remem *db, const char *ns, const char *kind, lsn_list *out) {
    return lsn_list_where(db, ns, kind, NULL, out);
}

lsn_rec *lsn_find(lsn_list *l, const char *id) {
    json_t *at = id && l->index ? json_object_get(l->index, id) : NULL;
    return at ? &l->v[json_integer_value(at)] : NULL;
}

json_t *lsn_set_of(const json_t *a) {
    json_t *set = json_object();
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e) {
        if (set && json_is_string(e)) json_object_set_new(set, json_string_value(e), json_true());
    }
    return set;
}

void lsn_unite(json_t *into, const json_t *from, json_t *set) {
    size_t i;
    json_t *e;
    json_array_foreach(from, i, e) {
        const char *s = json_string_value(e);
        if (!s || !*s || json_object_get(set, s)) continue;
        json_array_append(into, e);
        json_object_set_new(set, s, json_true());
    }
}

/* ---- the write batch ---- */

static void write_free(lsn_write *w) {
    free(w->ns);
    free(w->id);
    free(w->kind);
    free(w->text);
    free(w->exists_msg);
    json_decref(w->meta_new);
}

void lsn_batch_free(lsn_batch *b) {
    for (size_t i = 0; i < b->n; i++) write_free(&b->w[i]);
    free(b->w);
    memset(b, 0, sizeof *b);
}

int lsn_batch_change(lsn_batch *b, const char *ns, const char *id, const char *kind,
                     const char *text, const json_t *meta_new, lsn_change_fn fn, void *ctx) {
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 8;
        lsn_write *v = realloc(b->w, cap * sizeof *v);
        if (!v) return REMEM_ENOMEM;
        b->w = v;
        b->cap = cap;
    }
    lsn_write *w = &b->w[b->n];
    memset(w, 0, sizeof *w);
    w->ns = strdup(ns);
    w->id = strdup(id);
    w->kind = strdup(kind);
    w->text = strdup(text && *text ? text : kind);
    w->meta_new = meta_new ? json_deep_copy(meta_new) : NULL;
    w->fn = fn;
    w->ctx = ctx;
    if (!w->ns || !w->id || !w->kind || !w->text || (meta_new && !w->meta_new)) {
        write_free(w);
        return REMEM_ENOMEM;
    }
    b->n++;
    return REMEM_OK;
}

int lsn_batch_put(lsn_batch *b, const char *ns, const char *id, const char *kind, const char *text,
                  const json_t *meta) {
    return lsn_batch_change(b, ns, id, kind, text, meta, NULL, NULL);
}

int lsn_batch_unique(lsn_batch *b, const char *msg) {
    if (!b->n || !(b->w[b->n - 1].exists_msg = strdup(msg))) return REMEM_ENOMEM;
    return REMEM_OK;
}

/* The new record w as a memory to insert (strings borrowed; *meta_text
 * is its rendered metadata, to free). */
static int new_memory(lsn_write *w, remem_memory *m, char **meta_text) {
    remem_memory_init(m);
    m->ns = w->ns;
    m->id = w->id;
    m->kind = w->kind;
    m->text = w->text;
    *meta_text = json_dumps(w->meta_new, JSON_COMPACT | JSON_SORT_KEYS);
    m->metadata = *meta_text;
    return *meta_text ? REMEM_OK : REMEM_ENOMEM;
}

/* Insert the new record w (its function applied to its metadata now,
 * after the batch's earlier writes), with its vector (NULL: pending). */
static int insert_new(remem *db, txn *x, lsn_write *w, const float *vec, int64_t now) {
    const char *actor = NULL;
    int r = w->fn ? w->fn(w->ctx, w->meta_new, -1, &actor) : 0;
    if (r < 0) return eng_fail(db, r, "out of memory");
    remem_memory m;
    char *mt = NULL;
    int rc = new_memory(w, &m, &mt);
    if (rc)
        rc = eng_fail(db, rc, "out of memory");
    else
        rc = eng_add_in_txn(db, x, &m, vec, now, NULL, 0, NULL);
    free(mt);
    return rc;
}

/* Write back the stored row old with its metadata changed to meta: every
 * other field (tier, importance, text, vector, access record) as stored. */
static int write_changed(remem *db, txn *x, store_row *old, const json_t *meta, const char *actor,
                         int64_t now) {
    char *mt = json_dumps(meta, JSON_COMPACT | JSON_SORT_KEYS);
    char *norm = util_normalize_text(old->m.text ? old->m.text : "");
    int rc = REMEM_OK;
    if (!mt || !norm) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    remem_memory m = old->m;
    m.metadata = mt;
    m.updated_at = now;
    m.vector = old->vec;
    if (!rc && (rc = store_replace(db->st, old->rowid, &m, norm, util_hash64(norm, strlen(norm)))))
        eng_store_fail(db, rc);
    if (!rc) rc = eng_history(db, &old->m, &m, "update", actor, now);
    if (!rc) rc = eng_txn_row(db, x, m.ns, old->rowid);
    free(mt);
    free(norm);
    return rc;
}

/* Apply the change w to its row as stored now. */
static int change_stored(remem *db, txn *x, lsn_write *w, store_row *old, int64_t now) {
    json_error_t e;
    json_t *meta = old->m.metadata ? json_loads(old->m.metadata, 0, &e) : json_object();
    if (!json_is_object(meta)) {
        json_decref(meta);
        meta = json_object();
    }
    if (!meta) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    const char *actor = NULL;
    int archived = old->m.tier && !strcmp(old->m.tier, "archived");
    int r = w->fn(w->ctx, meta, archived, &actor), rc = REMEM_OK;
    if (r < 0)
        rc = eng_fail(db, r, "out of memory");
    else if (r > 0)
        rc = write_changed(db, x, old, meta, actor, now);
    json_decref(meta);
    return rc;
}

/* One queued write, inside the transaction. */
static int apply_write(remem *db, txn *x, lsn_write *w, const float *vec, int64_t now) {
    int rc = REMEM_OK;
    if (!eng_txn_ns(db, x, w->ns, &rc)) return rc; /* the version before it */
    store_row old;
    rc = store_find(db->st, w->ns, w->id, 1, &old);
    if (rc == REMEM_ENOTFOUND) return w->meta_new ? insert_new(db, x, w, vec, now) : REMEM_OK;
    if (rc) return eng_store_fail(db, rc);
    if (w->exists_msg)
        rc = eng_fail(db, REMEM_EINVAL, "%s", w->exists_msg);
    else if (old.m.invalidated_at || !w->fn)
        /* A replaced record, or a record put under a taken id: upsert. */
        rc = w->meta_new ? insert_new(db, x, w, vec, now) : REMEM_OK;
    else
        rc = change_stored(db, x, w, &old, now);
    store_row_clear(&old);
    return rc;
}

/* Check and embed the batch's new records before any lock is taken:
 * vecs[i] is record i's vector (all of them NULL when the embedder is
 * down: the rows are written pending, as remem_add does). */
static int embed_new(remem *db, lsn_batch *b, float **vecs, int *pending) {
    int dim = db->emb->dim, rc = REMEM_OK;
    size_t nn = 0;
    const char **texts = calloc(b->n + 1, sizeof *texts);
    *vecs = malloc((b->n + 1) * (size_t)dim * sizeof **vecs);
    if (!texts || !*vecs) {
        free(texts);
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; !rc && i < b->n; i++) {
        if (!b->w[i].meta_new) continue;
        remem_memory m;
        char *mt = NULL;
        rc = new_memory(&b->w[i], &m, &mt);
        if (rc) rc = eng_fail(db, rc, "out of memory");
        if (!rc) rc = eng_validate(db, &m);
        if (!rc) rc = eng_hooks_check_add(db, &m);
        free(mt);
        texts[nn++] = b->w[i].text;
    }
    if (!rc && nn) rc = eng_embed_for_add(db, texts, nn, *vecs, pending);
    free(texts);
    return rc;
}

/* The batch's hook, once its namespace is locked: a read of the first
 * write's row takes PostgreSQL's namespace lock (SQLite's write lock is
 * held since the transaction began). */
static int run_inside(remem *db, lsn_batch *b) {
    store_row r;
    int rc = store_find(db->st, b->w[0].ns, b->w[0].id, 0, &r);
    if (rc == REMEM_OK) store_row_clear(&r);
    if (rc && rc != REMEM_ENOTFOUND) return eng_store_fail(db, rc);
    return b->inside(db, b, b->inside_ctx);
}

int lsn_batch_commit(remem *db, lsn_batch *b) {
    float *vecs = NULL;
    int pending = 0, inserted = 0, rc = REMEM_OK;
    if (!b->n) goto out;
    if (db->opt.read_only) {
        rc = eng_fail(db, REMEM_EINVAL, "the store is open read-only");
        goto out;
    }
    if ((rc = embed_new(db, b, &vecs, &pending))) goto out;
    int64_t now = util_now_ms();
    if ((rc = store_begin(db->st))) {
        eng_store_fail(db, rc);
        goto out;
    }
    txn x = {0};
    if (b->inside) rc = run_inside(db, b);
    size_t k = 0;
    for (size_t i = 0; !rc && i < b->n; i++) {
        const float *v = NULL;
        if (b->w[i].meta_new) {
            v = pending ? NULL : vecs + k++ * (size_t)db->emb->dim;
            inserted = 1;
        }
        rc = apply_write(db, &x, &b->w[i], v, now);
    }
    rc = eng_txn_end(db, &x, rc);
    if (!rc && pending) db->pending_hint = 1;
    if (!rc && inserted) eng_hooks_after_add(db, b->w[0].ns);
out:
    free(vecs);
    lsn_batch_free(b);
    return rc;
}

void lsn_new_id(const char *prefix, char buf[40]) {
    char id[27];
    util_new_id(util_now_ms(), id);
    snprintf(buf, 40, "%s%s", prefix, id);
}

json_t *lsn_time_json(int64_t ms) {
    char t[40];
    remem_format_time(ms, t, sizeof t);
    return json_string(t);
}

const char *lsn_s(const json_t *o, const char *key) {
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

const char *lsn_str(const json_t *o, const char *key, const char *def) {
    const char *s = lsn_s(o, key);
    return s ? s : def;
}

double lsn_d(const json_t *o, const char *key, double def) {
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : def;
}

int64_t lsn_i(const json_t *o, const char *key, int64_t def) {
    json_t *v = json_object_get(o, key);
    if (json_is_integer(v)) return (int64_t)json_integer_value(v);
    if (json_is_real(v)) return (int64_t)json_real_value(v);
    return def;
}

int lsn_has(const json_t *a, const char *s) {
    size_t i;
    json_t *e;
    if (!s) return 0;
    json_array_foreach(a, i, e) if (json_is_string(e) && !strcmp(json_string_value(e), s)) return 1;
    return 0;
}

double lsn_reliability(const json_t *lesson, int transfer) {
    double h = (double)lsn_i(lesson, transfer ? "transfer_helpful_count" : "helpful_count", 0);
    double x = (double)lsn_i(lesson, transfer ? "transfer_harmful_count" : "harmful_count", 0);
    return (h + 1.0) / (h + x + 2.0);
}
