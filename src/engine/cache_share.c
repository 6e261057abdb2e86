/*
 * cache_share.c: the namespace caches as one process-wide resource. Every
 * handle of the process opened on the same store (a server's threads, an
 * application's several handles) finds its namespaces on the same shelf:
 * one cache per (store, namespace), never a copy per handle, and all of
 * them under one byte budget with least-recently-used eviction of whole
 * namespaces.
 *
 * THE REGISTRY. A hash table of caches keyed by (shelf, namespace), an LRU
 * list and the byte total, under one mutex that is held only for lookups
 * and bookkeeping, never across a load, a store read or a scan. A shelf is
 * a store's identity: its random id when it has one (a SQLite file), else
 * its URI (a PostgreSQL database), else the handle alone (":memory:", a
 * store no other handle can open).
 *
 * LOCKING. A cache is pinned (pins > 0: never evicted, never freed) from
 * cache_get to cache_put, and meanwhile held under its read lock: readers
 * of one namespace run in parallel. A change (our own write's rows, a
 * catch-up with another handle's or process's writes) takes the write
 * lock, which goes first (writer-preferring, so that a stream of recalls
 * cannot starve it); a recall's touch only stores two counters atomically
 * under the read lock. A thread that holds several read locks got them in
 * name order, never read-locks one twice, and waits for a write lock only
 * on a name after those it holds, so locks never wait in a circle.
 *
 * FRESHNESS. cache_get reads the namespace's version from the store (one
 * indexed read, the one recall makes anyway) and, when the cache is behind,
 * catches it up from the history under the write lock (cache_refresh), or
 * drops it and loads again. Writes from other threads, handles and
 * processes are thus seen whether the namespace stayed cached or was
 * evicted and loaded again.
 *
 * THE BUDGET. Each cache is counted by what it allocates (cache_bytes: the
 * arrays at capacity, the strings, the indexes, the maps), recounted after
 * each change. When a load or a change brings the total over the budget,
 * unpinned caches are evicted from the least recently used end until it
 * fits; a pinned one waits for its last cache_put. The budget is the
 * process's: remem_options.cache_mb or the config's cache.max_mb (the last
 * handle opened with one sets it), else a quarter of physical memory with
 * a floor of 64 MB. REMEM_CACHE_SHARE=0 in the environment when a handle
 * opens gives that handle a shelf of its own (still under the budget).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "telemetry/telemetry.h"

#define BUDGET_FLOOR (64u << 20)

struct cache_shelf {
    char *key;
    int handles;
    struct cache_shelf *next;
};

static struct {
    pthread_mutex_t lock;
    cache_shelf *shelves;
    ns_cache **slots; /* chains through ns_cache.next */
    size_t cap, count;
    ns_cache lru; /* sentinel: lru.lru_next is the most recent */
    size_t bytes, budget;
    uint64_t loads, hits, misses, evictions;
    uint64_t oversized; /* loads of a namespace larger than the whole budget */
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void lru_init(void) {
    if (!g.lru.lru_next) g.lru.lru_next = g.lru.lru_prev = &g.lru;
}

static void lru_unlink(ns_cache *c) {
    c->lru_prev->lru_next = c->lru_next;
    c->lru_next->lru_prev = c->lru_prev;
    c->lru_prev = c->lru_next = NULL;
}

static void lru_front(ns_cache *c) {
    if (c->lru_next) lru_unlink(c);
    c->lru_next = g.lru.lru_next;
    c->lru_prev = &g.lru;
    g.lru.lru_next->lru_prev = c;
    g.lru.lru_next = c;
}

size_t cache_default_budget(void) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t phys = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
    return phys / 4 > BUDGET_FLOOR ? phys / 4 : BUDGET_FLOOR;
}

static size_t budget(void) { return g.budget ? g.budget : cache_default_budget(); }

void cache_set_budget(size_t bytes) {
    pthread_mutex_lock(&g.lock);
    g.budget = bytes;
    pthread_mutex_unlock(&g.lock);
}

static size_t slot_of(const void *shelf, const char *ns, size_t cap) {
    uint64_t h = util_hash64(ns, strlen(ns)) ^ ((uint64_t)(uintptr_t)shelf * 0x9E3779B97F4A7C15ULL);
    return (size_t)(h & (cap - 1));
}

static ns_cache *table_find(const void *shelf, const char *ns) {
    if (!g.cap) return NULL;
    for (ns_cache *c = g.slots[slot_of(shelf, ns, g.cap)]; c; c = c->next)
        if (c->shelf == shelf && strcmp(c->ns, ns) == 0) return c;
    return NULL;
}

/* 0, or -1 when out of memory (the table keeps its size: chains grow). */
static int table_grow(void) {
    size_t cap = g.cap ? g.cap * 2 : 64;
    ns_cache **slots = calloc(cap, sizeof *slots);
    if (!slots) return -1;
    for (size_t i = 0; i < g.cap; i++)
        for (ns_cache *c = g.slots[i], *nx; c; c = nx) {
            nx = c->next;
            size_t s = slot_of(c->shelf, c->ns, cap);
            c->next = slots[s];
            slots[s] = c;
        }
    free(g.slots);
    g.slots = slots;
    g.cap = cap;
    return 0;
}

static int table_add(ns_cache *c) {
    if ((g.count + 1) * 2 > g.cap && table_grow() && !g.cap) return -1;
    size_t s = slot_of(c->shelf, c->ns, g.cap);
    c->next = g.slots[s];
    g.slots[s] = c;
    g.count++;
    lru_front(c);
    c->bytes = cache_bytes(c);
    g.bytes += c->bytes;
    return 0;
}

/* Out of the table (it stays alive while pinned: `dead` frees it at the
 * last unpin). */
static void table_remove(ns_cache *c) {
    ns_cache **p = &g.slots[slot_of(c->shelf, c->ns, g.cap)];
    while (*p != c) p = &(*p)->next;
    *p = c->next;
    c->next = NULL;
    g.count--;
    lru_unlink(c);
    g.bytes -= c->bytes;
    c->bytes = 0;
    c->dead = 1;
}

/* The counters (/metrics, OTLP): what a load or an eviction adds. */
static void publish(uint64_t loads, uint64_t evictions, uint64_t oversized) {
    tm_count("remem.cache.loads", "{load}", "Namespaces loaded into the cache.", (double)loads);
    tm_count("remem.cache.evictions", "{eviction}",
             "Namespaces evicted to keep the cache in its budget.", (double)evictions);
    tm_count("remem.cache.oversized_loads", "{load}",
             "Loads of a namespace larger than the whole cache budget: it pushes every "
             "other namespace out while in use, and is loaded again by its next recall.",
             (double)oversized);
}

/* The gauges (/metrics, OTLP), read from the totals whenever the metrics
 * are read (tm_add_collector), so that they are never behind the totals
 * and no change of them pays for telemetry. The counters are registered
 * here too: every series exists from the first read. */
static void collect(void) {
    pthread_mutex_lock(&g.lock);
    double bytes = (double)g.bytes, count = (double)g.count, b = (double)budget();
    double ratio = g.hits + g.misses ? (double)g.hits / (double)(g.hits + g.misses) : 0;
    pthread_mutex_unlock(&g.lock);
    tm_gauge("remem.cache.bytes", "By", "Bytes the namespace caches of the process hold.", bytes);
    tm_gauge("remem.cache.budget", "By", "The namespace caches' byte budget.", b);
    tm_gauge("remem.cache.namespaces", "{namespace}", "Namespaces cached in the process.", count);
    tm_gauge("remem.cache.hit_ratio", "1", "Cache lookups that found the namespace loaded.",
             ratio);
    publish(0, 0, 0);
}

/* Unpinned caches from the LRU end until the total fits; they are chained
 * on *gone (through next) for the caller to free outside the lock. */
static size_t evict_locked(ns_cache **gone) {
    size_t n = 0, limit = budget();
    for (ns_cache *c = g.lru.lru_prev; c != &g.lru && g.bytes > limit;) {
        ns_cache *prev = c->lru_prev;
        if (!c->pins) {
            table_remove(c);
            c->next = *gone;
            *gone = c;
            n++;
        }
        c = prev;
    }
    g.evictions += n;
    return n;
}

static void free_chain(ns_cache *c) {
    while (c) {
        ns_cache *nx = c->next;
        cache_destroy(c);
        c = nx;
    }
}

/* Recount c after a change (the caller holds its write lock and a pin;
 * the lock order is always a cache's lock, then the registry's). */
static void recount(ns_cache *c);

void cache_account(remem *db, ns_cache *c) {
    (void)db;
    recount(c);
}

static void recount(ns_cache *c) {
    size_t b = cache_bytes(c);
    ns_cache *gone = NULL;
    size_t ev = 0;
    pthread_mutex_lock(&g.lock);
    if (!c->dead) {
        g.bytes += b - c->bytes;
        c->bytes = b;
        if (g.bytes > budget()) ev = evict_locked(&gone);
    }
    pthread_mutex_unlock(&g.lock);
    free_chain(gone);
    if (ev) publish(0, ev, 0);
}

/* ---- shelves ---- */

static int shelf_key(remem *db, char *key, size_t cap) {
    char uid[64], home[1024];
    if (store_cache_home(db->st, uid, sizeof uid, home, sizeof home) == REMEM_OK)
        return snprintf(key, cap, "id:%s", uid) < (int)cap ? 0 : -1;
    const char *p = db->st->path;
    if (!p[0] || strcmp(p, ":memory:") == 0) return -1; /* only this handle sees it */
    return snprintf(key, cap, "uri:%s", db->uri) < (int)cap ? 0 : -1;
}

int cache_attach(remem *db) {
    char key[1200];
    /* REMEM_CACHE_SHARE=0: this handle keeps caches of its own (a check
     * against a cache nobody else touched, or an escape hatch). */
    const char *share_env = getenv("REMEM_CACHE_SHARE");
    int shared = !(share_env && !strcmp(share_env, "0")) && shelf_key(db, key, sizeof key) == 0;
    if (!shared) snprintf(key, sizeof key, "handle:%p", (void *)db);
    pthread_mutex_lock(&g.lock);
    lru_init();
    cache_shelf *s = NULL;
    for (s = shared ? g.shelves : NULL; s && strcmp(s->key, key); s = s->next) {
    }
    if (!s && (s = calloc(1, sizeof *s)) && !(s->key = strdup(key))) {
        free(s);
        s = NULL;
    } else if (s && !s->handles && !s->next && g.shelves != s) {
        s->next = g.shelves;
        g.shelves = s;
    }
    if (s) s->handles++;
    pthread_mutex_unlock(&g.lock);
    db->shelf = s;
    /* The figures on /metrics and OTLP from the first handle on, before
     * the first load. */
    tm_add_collector(collect);
    return s ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

void cache_detach(remem *db) {
    cache_shelf *s = db->shelf;
    if (!s) return;
    ns_cache *gone = NULL;
    pthread_mutex_lock(&g.lock);
    if (--s->handles == 0) {
        for (size_t i = 0; i < g.cap; i++)
            for (ns_cache *c = g.slots[i], *nx; c; c = nx) {
                nx = c->next;
                if (c->shelf != s) continue;
                table_remove(c); /* no handle of the store is left: none pins it */
                c->next = gone;
                gone = c;
            }
        cache_shelf **p = &g.shelves;
        while (*p != s) p = &(*p)->next;
        *p = s->next;
        free(s->key);
        free(s);
    }
    pthread_mutex_unlock(&g.lock);
    free_chain(gone);
    db->shelf = NULL;
}

/* ---- pins and locks ---- */

void cache_unlock(ns_cache *c) {
    if (c) pthread_rwlock_unlock(&c->lock);
}

void cache_unpin(remem *db, ns_cache *c) {
    (void)db;
    if (!c) return;
    ns_cache *gone = NULL;
    size_t ev = 0;
    pthread_mutex_lock(&g.lock);
    int free_it = --c->pins == 0 && c->dead;
    if (!free_it && g.bytes > budget()) ev = evict_locked(&gone);
    pthread_mutex_unlock(&g.lock);
    if (free_it) cache_destroy(c);
    free_chain(gone);
    if (ev) publish(0, ev, 0);
}

void cache_put(remem *db, ns_cache *c) {
    cache_unlock(c);
    cache_unpin(db, c);
}

/* The cache of ns pinned (NULL: not loaded); a lookup for a read
 * (count) is a hit or a miss. */
static ns_cache *pin(remem *db, const char *ns, int count) {
    pthread_mutex_lock(&g.lock);
    ns_cache *c = table_find(db->shelf, ns);
    if (c) {
        c->pins++;
        lru_front(c);
    }
    if (count) {
        g.hits += c != NULL;
        g.misses += c == NULL;
    }
    pthread_mutex_unlock(&g.lock);
    return c;
}

/* Drop c from the registry (a failed catch-up or change); the caller's
 * pin keeps it alive until cache_unpin. */
static void kill(ns_cache *c) {
    pthread_mutex_lock(&g.lock);
    if (!c->dead) table_remove(c);
    pthread_mutex_unlock(&g.lock);
}

/* Share a cache just loaded: pinned, in the table (or, when another
 * thread loaded the namespace meanwhile, that one instead). */
static ns_cache *share(remem *db, ns_cache *c) {
    ns_cache *gone = NULL, *mine = c;
    size_t ev = 0;
    c->shelf = db->shelf;
    pthread_mutex_lock(&g.lock);
    ns_cache *had = table_find(db->shelf, c->ns);
    if (had && had->version < c->version) { /* ours is newer: it replaces that one */
        table_remove(had);
        if (!had->pins) {
            had->next = gone;
            gone = had;
        }
        had = NULL;
    }
    if (had) {
        c = had;
    } else if (table_add(c)) {
        pthread_mutex_unlock(&g.lock);
        cache_destroy(c);
        return NULL;
    }
    c->pins++;
    g.loads += !had;
    /* Alone over the budget: while pinned it pushes every other cache
     * out, it is evicted at its last unpin and loaded again by the next
     * recall. Counted, for an operator to raise the budget. */
    int over = !had && c->bytes > budget();
    g.oversized += (uint64_t)over;
    if (g.bytes > budget()) ev = evict_locked(&gone);
    pthread_mutex_unlock(&g.lock);
    if (had) cache_destroy(mine);
    free_chain(gone);
    publish(!had, ev, (uint64_t)over);
    return c;
}

ns_cache *cache_peek(remem *db, const char *ns) {
    ns_cache *c = pin(db, ns, 0);
    if (c) pthread_rwlock_rdlock(&c->lock);
    return c;
}

int cache_has(remem *db, const char *ns) {
    pthread_mutex_lock(&g.lock);
    int has = table_find(db->shelf, ns) != NULL;
    pthread_mutex_unlock(&g.lock);
    return has;
}

ns_cache *cache_get_loaded(remem *db, ns_cache *c, int *rc) {
    *rc = REMEM_OK;
    pthread_mutex_lock(&g.lock);
    g.misses++; /* as pin counts the miss of a load cache_get_known makes */
    pthread_mutex_unlock(&g.lock);
    if (!(c = share(db, c))) { /* c is gone with its name */
        *rc = eng_fail(db, REMEM_ENOMEM, "out of memory sharing a namespace's cache");
        return NULL;
    }
    pthread_rwlock_rdlock(&c->lock);
    return c;
}

ns_cache *cache_get(remem *db, const char *ns, int *rc) {
    int64_t version = 0, rows = 0;
    int r = store_ns_info(db->st, ns, NULL, 0, NULL, &version, &rows);
    if (r && r != REMEM_ENOTFOUND) {
        *rc = eng_store_fail(db, r);
        return NULL;
    }
    return cache_get_known(db, ns, version, rows, rc);
}

ns_cache *cache_get_known(remem *db, const char *ns, int64_t version, int64_t rows, int *rc) {
    *rc = REMEM_OK;
    if (rows == 0) {
        cache_drop(db, ns); /* cleared: whatever is cached is stale */
        return NULL;
    }
    ns_cache *c = pin(db, ns, 1);
    if (c) {
        pthread_rwlock_rdlock(&c->lock);
        if (c->version >= version && !c->dead) return c;
        /* Behind the store: catch up under the write lock (unless another
         * thread did meanwhile), then read. */
        pthread_rwlock_unlock(&c->lock);
        pthread_rwlock_wrlock(&c->lock);
        c->stem = db->stem;
        int bad = c->dead || (c->version < version && cache_refresh(db, c, NULL, 0));
        if (bad)
            kill(c);
        else
            recount(c);
        pthread_rwlock_unlock(&c->lock);
        if (!bad) {
            pthread_rwlock_rdlock(&c->lock);
            if (!c->dead) return c;
            pthread_rwlock_unlock(&c->lock);
        }
        cache_unpin(db, c);
    }
    c = cache_load(db, ns, rc);
    if (!c) return NULL;
    if (!(c = share(db, c))) {
        *rc = eng_fail(db, REMEM_ENOMEM, "out of memory loading namespace %s", ns);
        return NULL;
    }
    pthread_rwlock_rdlock(&c->lock);
    return c;
}

/* A touch changes two counters of rows that stay where they are: under
 * the read lock, with atomic stores, so that a stream of recalls of one
 * namespace never waits for its own touches (a reader sees the old or the
 * new value, as it would across two recalls). */
void cache_touch(ns_cache *c, const int64_t *rowids, size_t n, int64_t now) {
    pthread_rwlock_rdlock(&c->lock);
    for (size_t i = 0; i < n; i++) {
        long at = cache_find(c, rowids[i]);
        if (at < 0) continue;
        __atomic_store_n(&c->rows[at].m.accessed_at, now, __ATOMIC_RELAXED);
        __atomic_fetch_add(&c->rows[at].m.access_count, 1, __ATOMIC_RELAXED);
    }
    pthread_rwlock_unlock(&c->lock);
}

void cache_apply(remem *db, const char *ns, int64_t before, int64_t after, int64_t hist_seq,
                 const int64_t *rowids, size_t n) {
    ns_cache *c = pin(db, ns, 0);
    if (!c) return;
    pthread_rwlock_wrlock(&c->lock);
    c->stem = db->stem;
    if (!c->dead && cache_apply_rows(db, c, before, after, hist_seq, rowids, n))
        kill(c);
    else
        recount(c);
    pthread_rwlock_unlock(&c->lock);
    cache_unpin(db, c);
}

void cache_drop(remem *db, const char *ns) {
    pthread_mutex_lock(&g.lock);
    ns_cache *c = table_find(db->shelf, ns), *gone = NULL;
    if (c) {
        table_remove(c);
        if (!c->pins) gone = c;
    }
    pthread_mutex_unlock(&g.lock);
    cache_destroy(gone);
}

void cache_each(remem *db, void (*fn)(remem *db, const ns_cache *c, void *ctx), void *ctx) {
    /* The names first (the table may change while fn runs), then each
     * cache looked up again. */
    char **names = NULL;
    size_t n = 0;
    pthread_mutex_lock(&g.lock);
    if (g.count) names = calloc(g.count, sizeof *names);
    for (size_t i = 0; names && i < g.cap; i++)
        for (ns_cache *c = g.slots[i]; c; c = c->next)
            if (c->shelf == db->shelf) names[n++] = strdup(c->ns);
    pthread_mutex_unlock(&g.lock);
    for (size_t i = 0; i < n; i++) {
        ns_cache *c = names[i] ? cache_peek(db, names[i]) : NULL;
        if (c) fn(db, c, ctx);
        cache_put(db, c);
        free(names[i]);
    }
    free(names);
}

json_t *cache_stats_json(void) {
    pthread_mutex_lock(&g.lock);
    uint64_t look = g.hits + g.misses;
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "bytes",
                          (json_int_t)g.bytes, "budget", (json_int_t)budget(), "namespaces",
                          (json_int_t)g.count, "loads", (json_int_t)g.loads, "hits",
                          (json_int_t)g.hits, "misses", (json_int_t)g.misses, "evictions",
                          (json_int_t)g.evictions, "oversized_loads", (json_int_t)g.oversized,
                          "hit_ratio", look ? (double)g.hits / (double)look : 0.0);
    pthread_mutex_unlock(&g.lock);
    return o;
}

/* ---- snapshots of every cache (handle.c, at close) ---- */

/* Here rather than in cache_snap.c, which the load path (cache.c) calls:
 * the walk over the shared caches is this file's, and calls point one way
 * (cache_share.c -> cache.c -> cache_snap.c). */
static void save_big(remem *db, const ns_cache *c, void *ctx) {
    if (c->n >= *(const size_t *)ctx) snap_save(db, c, 0);
}

void snap_save_all(remem *db) {
    if (!snap_enabled() || db->opt.read_only) return;
    size_t min = snap_min_rows();
    cache_each(db, save_big, &min);
}
