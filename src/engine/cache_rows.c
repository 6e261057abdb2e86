/*
 * cache_rows.c: the storage of a namespace cache (engine.h, ns_cache): its
 * allocation and release, room for more rows in every per-row array and in
 * the two indexes, each row's strings, and the rowid -> row map. What
 * fills a cache lives elsewhere: a scan and the catch-up from history in
 * cache.c, a snapshot in cache_snap.c; both build on these calls, which
 * call neither of them (so the two never call each other in a circle).
 */
#include <assert.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine/engine.h"

static size_t hash_rowid(int64_t k, size_t cap) {
    assert(cap && (cap & (cap - 1)) == 0); /* the probes mask with cap - 1 */
    uint64_t x = (uint64_t)k * 0x9E3779B97F4A7C15ULL;
    return (size_t)(x >> 17) & (cap - 1);
}

/* Rehash into at least min_cap slots (and at least 4 per live row):
 * rehashing also drops tombstones. It starts at 8 slots, so that a
 * namespace of a few rows pays a few words for its map. */
static int map_grow(ns_cache *c, size_t min_cap) {
    size_t cap = 8;
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
int cache_map_put(ns_cache *c, int64_t rowid, uint32_t idx) {
    assert(rowid > 0); /* 0 and -1 are the empty and deleted keys */
    size_t at = map_slot(c, rowid);
    if (at != (size_t)-1) {
        c->map_vals[at] = idx;
        return 0;
    }
    if ((c->map_used + 1) * 2 > c->map_cap && map_grow(c, 0)) return -1;
    assert(c->map_used < c->map_cap); /* so the probe below ends */
    size_t h = hash_rowid(rowid, c->map_cap);
    while (c->map_keys[h] > 0) h = (h + 1) & (c->map_cap - 1);
    if (c->map_keys[h] == 0) c->map_used++;
    c->map_keys[h] = rowid;
    c->map_vals[h] = idx;
    return 0;
}

void cache_map_forget(ns_cache *c, int64_t rowid) {
    size_t h = map_slot(c, rowid);
    if (h != (size_t)-1) c->map_keys[h] = -1; /* a tombstone: probes go on past it */
}

long cache_find(const ns_cache *c, int64_t rowid) {
    size_t h = map_slot(c, rowid);
    return h == (size_t)-1 ? -1 : (long)c->map_vals[h];
}

/* The row's strings, packed by pack_row, or part of the slab a snapshot
 * was read into (freed with the cache). */
void cache_release_row(ns_cache *c, store_row *r) {
    uintptr_t at = (uintptr_t)r->m.id, slab = (uintptr_t)c->slab;
    if (r->m.id && (!c->slab || at < slab || at >= slab + c->slab_len)) {
        c->str_bytes -= util_heap_bytes(malloc_usable_size((char *)r->m.id));
        free((char *)r->m.id);
    }
    memset(r, 0, sizeof *r);
}

void cache_destroy(ns_cache *c) {
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) {
        cache_release_row(c, &c->rows[i]);
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
    lex_free(c->lex); /* before the map its lists may lie in */
    lex_free(c->ent);
    pthread_mutex_destroy(&c->ent_lock);
    if (c->map_base) munmap(c->map_base, c->map_len);
    pthread_rwlock_destroy(&c->lock);
    pthread_mutex_destroy(&c->allow_lock);
    free(c->ns);
    free(c);
}

/* Each array as the heap holds it (util_heap_bytes); the rows' strings
 * as pack_row and cache_release_row count them (str_bytes); a
 * snapshot's map by its length (the slab and the lists in it). Parsed
 * metadata (cache_meta) is left out: it is made lazily, by readers. */
size_t cache_ent_bytes(const ns_cache *c) {
    pthread_mutex_t *m = (pthread_mutex_t *)&c->ent_lock;
    pthread_mutex_lock(m);
    size_t b = c->ent ? lex_memory_bytes(c->ent) : 0;
    pthread_mutex_unlock(m);
    return b;
}

size_t cache_bytes(const ns_cache *c) {
    size_t b = util_heap_bytes(sizeof *c) + util_heap_bytes(strlen(c->ns) + 1);
    b += util_heap_bytes(c->cap * sizeof *c->rows) + util_heap_bytes(c->cap * sizeof *c->meta) +
         util_heap_bytes(c->cap * sizeof *c->tier);
    b += util_heap_bytes(c->map_cap * sizeof *c->map_keys) +
         util_heap_bytes(c->map_cap * sizeof *c->map_vals);
    b += flat_memory_bytes(c->ix) + lex_memory_bytes(c->lex) + c->str_bytes + c->map_len;
    b += cache_ent_bytes(c);
    /* The kept bitmap changes under readers (recall.c get_allow). */
    pthread_mutex_t *allow_lock = (pthread_mutex_t *)&c->allow_lock;
    pthread_mutex_lock(allow_lock);
    if (c->allow_bits)
        b += util_heap_bytes((c->n + 63) / 64 * sizeof(uint64_t)) +
             util_heap_bytes(strlen(c->allow_key) + 1);
    pthread_mutex_unlock(allow_lock);
    return b;
}

int cache_reserve(ns_cache *c, size_t cap) {
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
    if (lex_reserve(c->lex, cap)) return -1;
    if (c->map_cap < cap * 2 && map_grow(c, cap * 2)) return -1;
    return 0;
}

ns_cache *cache_new(remem *db, const char *ns, int dim) {
    ns_cache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    /* Writers first: a write's catch-up (cache_apply) must not starve
     * behind a stream of overlapping recalls. No thread read-locks a
     * cache it already holds (cache_share.c), which this kind requires. */
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&c->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    pthread_mutex_init(&c->allow_lock, NULL);
    pthread_mutex_init(&c->ent_lock, NULL);
    if (!(c->ns = strdup(ns)) || !(c->ix = flat_new(dim)) || !(c->lex = lex_new())) {
        cache_destroy(c);
        return NULL;
    }
    c->dim = dim;
    c->stem = db->stem;
    return c;
}
