/*
 * cache.c: the in-memory copy of each namespace that vector search and the
 * filters run over. A namespace is loaded on its first use (one scan of its
 * rows, vectors straight into a flat index) and then kept in step:
 *   - our own writes are applied row by row (cache_apply), using the
 *     namespace version the store's triggers bump, so that a cache that
 *     missed a change is dropped instead of patched wrongly;
 *   - another process's writes show up as a changed PRAGMA data_version;
 *     then every cached namespace's version is compared, and a stale one
 *     catches up by re-reading just the memories named in the history rows
 *     written since the last one it saw (a clear, a reindex or a large
 *     change drops it instead, to be reloaded on its next use). A server
 *     with a handle per thread thus pays for a write once per handle, not a
 *     reload of the namespace.
 * Queries never read vectors from BLOBs.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

static size_t hash_rowid(int64_t k, size_t cap) {
    uint64_t x = (uint64_t)k * 0x9E3779B97F4A7C15ULL;
    return (size_t)(x >> 17) & (cap - 1);
}

/* Rehash into at least min_cap slots (and at least 4 per live row):
 * rehashing also drops tombstones. */
static int map_grow(ns_cache *c, size_t min_cap) {
    size_t cap = 1024;
    while (cap < (c->n + 1) * 4 || cap < min_cap) cap *= 2;
    int64_t *keys = calloc(cap, sizeof *keys);
    uint32_t *vals = malloc(cap * sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < c->map_cap; i++) {
        if (c->map_keys[i] <= 0) continue;
        size_t h = hash_rowid(c->map_keys[i], cap);
        while (keys[h]) h = (h + 1) & (cap - 1);
        keys[h] = c->map_keys[i];
        vals[h] = c->map_vals[i];
    }
    free(c->map_keys);
    free(c->map_vals);
    c->map_keys = keys;
    c->map_vals = vals;
    c->map_cap = cap;
    c->map_used = c->n;
    return 0;
}

static size_t map_slot(const ns_cache *c, int64_t rowid) {
    if (!c->map_cap) return (size_t)-1;
    size_t h = hash_rowid(rowid, c->map_cap);
    while (c->map_keys[h] != 0) {
        if (c->map_keys[h] == rowid) return h;
        h = (h + 1) & (c->map_cap - 1);
    }
    return (size_t)-1;
}

/* Keys: 0 empty, -1 deleted (tombstone), > 0 rowid. map_used counts live
 * keys and tombstones, so probing always finds an empty slot. */
static int map_put(ns_cache *c, int64_t rowid, uint32_t idx) {
    size_t at = map_slot(c, rowid);
    if (at != (size_t)-1) {
        c->map_vals[at] = idx;
        return 0;
    }
    if ((c->map_used + 1) * 2 > c->map_cap && map_grow(c, 0)) return -1;
    size_t h = hash_rowid(rowid, c->map_cap);
    while (c->map_keys[h] > 0) h = (h + 1) & (c->map_cap - 1);
    if (c->map_keys[h] == 0) c->map_used++;
    c->map_keys[h] = rowid;
    c->map_vals[h] = idx;
    return 0;
}

long cache_find(const ns_cache *c, int64_t rowid) {
    size_t h = map_slot(c, rowid);
    return h == (size_t)-1 ? -1 : (long)c->map_vals[h];
}

const json_t *cache_meta(ns_cache *c, size_t i) {
    if (!c->meta[i] && c->rows[i].m.metadata) {
        c->meta[i] = json_loads(c->rows[i].m.metadata, 0, NULL);
        if (c->meta[i] && !json_is_object(c->meta[i])) {
            json_decref(c->meta[i]);
            c->meta[i] = json_object(); /* never parse it again */
        }
    }
    return c->meta[i];
}

int cache_tier_code(const char *t) {
    if (!strcmp(t, "static")) return 0;
    if (!strcmp(t, "short")) return 1;
    if (!strcmp(t, "long")) return 2;
    if (!strcmp(t, "archived")) return 3;
    return 4;
}

static void cache_free(ns_cache *c) {
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) {
        store_row_clear(&c->rows[i]);
        json_decref(c->meta[i]);
    }
    free(c->rows);
    free(c->meta);
    free(c->tier);
    free(c->allow_key);
    free(c->allow_bits);
    free(c->map_keys);
    free(c->map_vals);
    flat_free(c->ix);
    free(c->ns);
    free(c);
}

/* Move the row fields (strings included) of src into the cache row. */
static void take_row(store_row *dst, store_row *src) {
    *dst = *src;
    free(dst->vec);
    dst->vec = NULL;
    dst->m.vector = NULL;
    memset(src, 0, sizeof *src);
}

/* Room for cap rows in every per-row array, the index and the map. */
static int reserve(ns_cache *c, size_t cap) {
    if (cap <= c->cap) return 0;
    store_row *rows = realloc(c->rows, cap * sizeof *rows);
    if (!rows) return -1;
    c->rows = rows;
    json_t **meta = realloc(c->meta, cap * sizeof *meta);
    if (!meta) return -1;
    c->meta = meta;
    uint8_t *tier = realloc(c->tier, cap * sizeof *tier);
    if (!tier) return -1;
    c->tier = tier;
    c->cap = cap;
    if (flat_reserve(c->ix, cap)) return -1;
    if (c->map_cap < cap * 2 && map_grow(c, cap * 2)) return -1;
    return 0;
}

static int append_row(ns_cache *c, store_row *r, const float *vec) {
    if (c->n == c->cap && reserve(c, c->cap ? c->cap * 2 : 256)) return -1;
    if (flat_append(c->ix, vec) < 0) return -1;
    if (map_put(c, r->rowid, (uint32_t)c->n)) {
        flat_swap_remove(c->ix, c->n);
        return -1;
    }
    take_row(&c->rows[c->n], r);
    c->meta[c->n] = NULL;
    c->tier[c->n] = (uint8_t)cache_tier_code(c->rows[c->n].m.tier);
    c->n++;
    return 0;
}

static void remove_at(ns_cache *c, size_t i) {
    size_t h = map_slot(c, c->rows[i].rowid);
    if (h != (size_t)-1) c->map_keys[h] = -1;
    store_row_clear(&c->rows[i]);
    json_decref(c->meta[i]);
    size_t last = c->n - 1;
    flat_swap_remove(c->ix, i);
    if (i != last) {
        c->rows[i] = c->rows[last];
        c->meta[i] = c->meta[last];
        c->tier[i] = c->tier[last];
        map_put(c, c->rows[i].rowid, (uint32_t)i);
    }
    c->n--;
}

typedef struct load_ctx {
    ns_cache *c;
    float *zero;
} load_ctx;

static int load_row(void *vctx, const store_row *r) {
    load_ctx *lc = vctx;
    store_row copy = *r;
    /* The scan frees its row after us: take our own copies of the strings. */
    copy.m.ns = strdup(r->m.ns);
    copy.m.id = strdup(r->m.id);
    copy.m.kind = strdup(r->m.kind);
    copy.m.tier = strdup(r->m.tier);
    copy.m.text = strdup(r->m.text);
    copy.m.superseded_by = r->m.superseded_by ? strdup(r->m.superseded_by) : NULL;
    copy.m.metadata = r->m.metadata ? strdup(r->m.metadata) : NULL;
    copy.m.links = r->m.links ? strdup(r->m.links) : NULL;
    copy.m.model = r->m.model ? strdup(r->m.model) : NULL;
    copy.vec = NULL;
    const float *v = r->m.vector && r->m.dim == lc->c->dim ? r->m.vector : lc->zero;
    if (!copy.m.ns || !copy.m.id || !copy.m.kind || !copy.m.tier || !copy.m.text ||
        append_row(lc->c, &copy, v)) {
        store_row_clear(&copy);
        return REMEM_ENOMEM;
    }
    return 0;
}

static ns_cache *load(remem *db, const char *ns, int *rc) {
    char model[128];
    int dim;
    int64_t version, rows, hist_seq = 0;
    /* The history position first: changes that land during the scan are
     * then re-applied by the next catch-up, which is harmless. */
    *rc = store_history_max(db->st, ns, &hist_seq);
    if (*rc) {
        eng_store_fail(db, *rc);
        return NULL;
    }
    *rc = store_ns_info(db->st, ns, model, sizeof model, &dim, &version, &rows);
    if (*rc == REMEM_ENOTFOUND || (*rc == REMEM_OK && rows == 0)) {
        *rc = REMEM_OK;
        return NULL;
    }
    if (*rc) {
        eng_store_fail(db, *rc);
        return NULL;
    }
    if (dim <= 0) dim = db->emb ? db->emb->dim : 1;
    ns_cache *c = calloc(1, sizeof *c);
    load_ctx lc = {c, calloc((size_t)dim, sizeof(float))};
    if (!c || !lc.zero || !(c->ns = strdup(ns)) || !(c->ix = flat_new(dim))) {
        free(lc.zero);
        cache_free(c);
        *rc = eng_fail(db, REMEM_ENOMEM, "out of memory loading namespace %s", ns);
        return NULL;
    }
    c->dim = dim;
    c->version = version;
    c->hist_seq = hist_seq;
    /* Size everything once: growing by doubling would copy (and have the
     * kernel zero) the vectors several times over. */
    if (reserve(c, (size_t)rows + rows / 8 + 16)) {
        free(lc.zero);
        cache_free(c);
        *rc = eng_fail(db, REMEM_ENOMEM, "out of memory loading namespace %s", ns);
        return NULL;
    }
    *rc = store_scan(db->st, ns, 1, load_row, &lc);
    free(lc.zero);
    if (*rc) {
        if (*rc == REMEM_ENOMEM) eng_fail(db, *rc, "out of memory loading namespace %s", ns);
        else eng_store_fail(db, *rc);
        cache_free(c);
        return NULL;
    }
    c->next = db->caches;
    db->caches = c;
    return c;
}

static ns_cache **find_link(remem *db, const char *ns) {
    for (ns_cache **p = &db->caches; *p; p = &(*p)->next)
        if (strcmp((*p)->ns, ns) == 0) return p;
    return NULL;
}

void cache_drop(remem *db, const char *ns) {
    ns_cache **p = find_link(db, ns);
    if (!p) return;
    ns_cache *c = *p;
    *p = c->next;
    cache_free(c);
}

void cache_free_all(remem *db) {
    while (db->caches) {
        ns_cache *c = db->caches;
        db->caches = c->next;
        cache_free(c);
    }
}

/* Bring row (re-read from the store) into the cache; 0 or -1 to drop. */
static int upsert_row(ns_cache *c, store_row *r) {
    if (r->vec && r->m.dim != c->dim) return -1;
    long at = cache_find(c, r->rowid);
    if (at >= 0) {
        if (r->vec) flat_set(c->ix, (size_t)at, r->vec);
        store_row_clear(&c->rows[at]);
        json_decref(c->meta[at]);
        c->meta[at] = NULL;
        take_row(&c->rows[at], r);
        c->tier[at] = (uint8_t)cache_tier_code(c->rows[at].m.tier);
        return 0;
    }
    float *zero = r->vec ? NULL : calloc((size_t)c->dim, sizeof(float));
    const float *v = r->vec ? r->vec : zero;
    float *keep = r->vec;
    r->vec = NULL;
    int bad = !v || append_row(c, r, v);
    free(keep);
    free(zero);
    return bad ? -1 : 0;
}

static void remove_id(ns_cache *c, const char *id) {
    for (size_t i = c->n; i-- > 0;)
        if (strcmp(c->rows[i].m.id, id) == 0) remove_at(c, i);
}

typedef struct catchup {
    char **ids;
    unsigned char *deleted;
    size_t n, cap, limit;
    int drop;
} catchup;

static int on_history(void *vctx, const char *id, const char *op) {
    catchup *u = vctx;
    if (strcmp(id, "*") == 0 || u->n >= u->limit) {
        u->drop = 1; /* a clear or reindex, or too much: reload instead */
        return 1;
    }
    if (u->n == u->cap) {
        size_t cap = u->cap ? u->cap * 2 : 16;
        char **ids = realloc(u->ids, cap * sizeof *ids);
        if (!ids) return REMEM_ENOMEM;
        u->ids = ids;
        unsigned char *del = realloc(u->deleted, cap);
        if (!del) return REMEM_ENOMEM;
        u->deleted = del;
        u->cap = cap;
    }
    if (!(u->ids[u->n] = strdup(id))) return REMEM_ENOMEM;
    u->deleted[u->n++] = strcmp(op, "delete") == 0;
    return 0;
}

/* Catch c up with the store. 0, or -1 when it must be dropped instead. */
static int cache_refresh(remem *db, ns_cache *c) {
    int64_t version = -1, seq = c->hist_seq;
    /* The version first: a write landing after it is caught next time. */
    if (store_ns_info(db->st, c->ns, NULL, 0, NULL, &version, NULL)) return -1;
    if (version == c->version) return 0;
    catchup u = {0};
    u.limit = c->n / 4 > 256 ? c->n / 4 : 256;
    int rc = store_history_since(db->st, c->ns, c->hist_seq, on_history, &u, &seq);
    int bad = (rc && !u.drop) || u.drop;
    for (size_t i = 0; !bad && i < u.n; i++) {
        /* A purge and a re-add of the same id: the old row goes first. */
        if (u.deleted[i]) remove_id(c, u.ids[i]);
        store_row r;
        int f = store_find(db->st, c->ns, u.ids[i], 1, &r);
        if (f == REMEM_ENOTFOUND) {
            remove_id(c, u.ids[i]);
            continue;
        }
        if (f || upsert_row(c, &r)) {
            if (!f) store_row_clear(&r);
            bad = 1;
        }
    }
    for (size_t i = 0; i < u.n; i++) free(u.ids[i]);
    free(u.ids);
    free(u.deleted);
    if (bad) return -1;
    c->version = version;
    c->hist_seq = seq;
    return 0;
}

void cache_check_external(remem *db) {
    if (!db->caches || !store_changed(db->st)) return;
    ns_cache **p = &db->caches;
    while (*p) {
        if (cache_refresh(db, *p)) {
            ns_cache *c = *p;
            *p = c->next;
            cache_free(c);
        } else {
            p = &(*p)->next;
        }
    }
}

ns_cache *cache_get(remem *db, const char *ns, int *rc) {
    *rc = REMEM_OK;
    ns_cache **p = find_link(db, ns);
    if (p) return *p;
    return load(db, ns, rc);
}

void cache_apply(remem *db, const char *ns, int64_t before, int64_t after,
                 int64_t hist_seq, const int64_t *rowids, size_t n) {
    ns_cache **p = find_link(db, ns);
    if (!p) return;
    ns_cache *c = *p;
    if (c->version != before) {
        /* Another process wrote to ns before us: the history has both. */
        if (cache_refresh(db, c)) cache_drop(db, ns);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        long at = cache_find(c, rowids[i]);
        store_row r;
        int rc = store_get_rowid(db->st, rowids[i], 1, &r);
        if (rc == REMEM_ENOTFOUND) {
            if (at >= 0) remove_at(c, (size_t)at);
            continue;
        }
        if (rc || upsert_row(c, &r)) {
            if (!rc) store_row_clear(&r);
            cache_drop(db, ns);
            return;
        }
    }
    c->version = after;
    c->hist_seq = hist_seq;
}
