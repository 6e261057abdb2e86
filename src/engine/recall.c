/*
 * recall.c: the retrieval pipeline (DESIGN.md, "Retrieval").
 *
 *   1. Candidates, per namespace: the vector lane (exact top-N over the
 *      namespace's cached vectors, with the filter, tiers, validity and TTL
 *      folded into an allow bitmap before the scan) and the lexical lane
 *      (BM25 top-N over each namespace's own lexical index, with the same
 *      allow bitmap, the best N of all namespaces kept). Lexical-only candidates get their cosine computed
 *      from the cache, so every candidate has every signal.
 *      Profiles with an entity lane (`default`) add the memories that share
 *      the query's rarer entities (cache_ent.c's index), the stream
 *      neighbours of the best lexical hits, and then score every candidate
 *      by every lane (complete_scores): BM25 for those the lexical lane did
 *      not rank, and the entity component (the query's entities, and at
 *      w_hop those of the 5 best lexical hits: the multi-hop step).
 *      docs/retrieval.md measures each.
 *      A query with its own `now` is a replay: memories created after it
 *      are left out of both lanes.
 *   2. Components and score (score.c), thresholds, kind boost.
 *   3. Ordering (tier priority first when the profile says so), top-k, and
 *      the results copied out so they outlive the caches.
 *   4. Touch: accessed_at and access_count of the returned memories, in one
 *      small transaction, unless the query says no_touch. Touching is best
 *      effort: a busy store does not fail a read.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "engine/telemetry_glue.h"
#include "filter/filter.h"
#include "score/score.h"
#include "util/util.h"

#define MAX_K 1000

typedef struct cand_ref {
    ns_cache *c;
    size_t row;
    unsigned lanes;
    double sim, bm25;
    double ent; /* BM25 of its entity keys for the query's (entity lane) */
} cand_ref;

/* The candidates, each (cache, row) once: v in the order the lanes found
 * them, and an open-addressed table over v (slot: 1 + the entry's index,
 * 0 empty) so that a lane finds the entry of one of its hits in a probe
 * or two, with no sorting of the pool per lane. */
typedef struct pool {
    cand_ref *v;
    size_t n, cap;
    size_t rows; /* the caches' rows in all: no pool holds more */
    uint32_t *slot;
    size_t slots; /* a power of two, at least twice cap */
} pool;

static size_t pool_hash(const ns_cache *c, size_t row, size_t slots) {
    uint64_t h =
        (uint64_t)(uintptr_t)c * 0x9E3779B97F4A7C15ULL ^ (uint64_t)row * 0xC2B2AE3D27D4EB4FULL;
    return (size_t)(h ^ h >> 29) & (slots - 1);
}

/* The slot of (c, row): its entry's, or the empty one where it would go. */
static size_t pool_slot(const pool *p, const ns_cache *c, size_t row) {
    size_t h = pool_hash(c, row, p->slots);
    for (uint32_t s; (s = p->slot[h]) != 0; h = (h + 1) & (p->slots - 1))
        if (p->v[s - 1].row == row && p->v[s - 1].c == c) break;
    return h;
}

static cand_ref *pool_find(const pool *p, const ns_cache *c, size_t row) {
    if (!p->slots) return NULL;
    uint32_t s = p->slot[pool_slot(p, c, row)];
    return s ? &p->v[s - 1] : NULL;
}

static int pool_grow(pool *p) {
    size_t cap = p->cap ? p->cap * 2 : 256; /* `default` gathers about 200 */
    /* A recall over small namespaces sizes the pool by what they hold. */
    if (!p->cap)
        for (cap = 8; cap < 256 && cap < p->rows;) cap *= 2; /* slots stay a power of two */
    uint32_t *slot = calloc(cap * 2, sizeof *slot);
    cand_ref *v = slot ? realloc(p->v, cap * sizeof *v) : NULL;
    if (!v) {
        free(slot);
        return -1;
    }
    p->v = v;
    p->cap = cap;
    free(p->slot);
    p->slot = slot;
    p->slots = cap * 2;
    for (size_t i = 0; i < p->n; i++) p->slot[pool_slot(p, v[i].c, v[i].row)] = (uint32_t)i + 1;
    return 0;
}

/* The entry of (c, row), added (no lanes, no similarity yet) when it is
 * not there; NULL when out of memory. The pointer holds until the next
 * pool_put. */
static cand_ref *pool_put(pool *p, ns_cache *c, size_t row) {
    cand_ref *f = pool_find(p, c, row);
    if (f) return f;
    if (p->n == p->cap && pool_grow(p)) return NULL;
    cand_ref *r = &p->v[p->n];
    memset(r, 0, sizeof *r);
    r->c = c;
    r->row = row;
    r->sim = NAN;
    p->slot[pool_slot(p, c, row)] = (uint32_t)++p->n;
    /* Its row is read when it is scored, long after: asked for now, it is
     * there by then instead of a miss per candidate (rows lie far apart). */
    const char *at = (const char *)&c->rows[row];
    __builtin_prefetch(at);
    __builtin_prefetch(at + 64);
    __builtin_prefetch(at + sizeof c->rows[row] - 1);
    return r;
}

static void pool_free(pool *p) {
    free(p->v);
    free(p->slot);
}

/* Tiers in priority order. */
typedef struct tierset {
    char names[4][16];
    int n;
    int rank_of_code[5]; /* by cache_tier_code; -1: not wanted */
} tierset;

static int parse_tiers(remem *db, const char *list, tierset *t) {
    t->n = 0;
    if (!list || !*list) list = "static,short,long";
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        char name[16];
        if (len == 0 || len >= sizeof name)
            return eng_fail(db, REMEM_EINVAL, "bad tier list \"%s\"", list);
        memcpy(name, p, len);
        name[len] = '\0';
        if (strcmp(name, "static") && strcmp(name, "short") && strcmp(name, "long") &&
            strcmp(name, "archived"))
            return eng_fail(db, REMEM_EINVAL, "unknown tier \"%s\" (static, short, long, archived)",
                            name);
        if (t->n < 4) snprintf(t->names[t->n++], sizeof t->names[0], "%s", name);
        for (int c = 0; c < 5; c++) t->rank_of_code[c] = -1;
        for (int r = t->n - 1; r >= 0; r--) t->rank_of_code[cache_tier_code(t->names[r])] = r;
        p += len;
        if (*p == ',') p++;
    }
    return REMEM_OK;
}

static int tier_rank(const tierset *t, const char *tier) {
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->names[i], tier) == 0) return i;
    return -1;
}

typedef struct query_ctx {
    remem *db;
    const remem_query *q;
    profile p;
    filter *f, *pf; /* the query's filter and the profile's */
    tierset tiers;
    int64_t now;
    float *qv;
    /* What the lanes read of the query text: its first
     * REMEM_QUERY_HEAD_MAX bytes (text_own when that is a copy). */
    const char *text;
    char *text_own;
    size_t n_cand;
    pool pool;
    ns_cache **caches; /* pinned; read-locked while `locked` */
    uint64_t **allow;
    size_t n_caches;
    int locked;
    size_t lex_found;
    /* The lanes' query terms (qterms.c), kept to score every candidate
     * (complete_scores); each namespace's entity index (NULL: none). */
    qterms lexq, entq;
    int expanded; /* lexq holds WordNet's terms beyond the query's own */
    int lex_kept; /* the handle's lex scratch holds the lexical sums */
    double lex_floor, hop_floor;
    size_t *seeds, n_seeds; /* pool entries: the hop's seeds not in the vector lane */
    lex_index **ents;
    unsigned char *allow_owned;
    int64_t built_from, built_until;
    /* Scratch on the stack for the common sizes, so that a recall of one
     * namespace with a usual embedder and k allocates almost nothing. */
    float qv_local[1024];
    ns_cache *caches_local[8];
    uint64_t *allow_local[8];
    unsigned char owned_local[8];
} query_ctx;

/* Up to n elements of size bytes: local when they fit in local_bytes, else
 * from malloc (zeroed either way). */
static void *scratch(void *local, size_t local_bytes, size_t n, size_t size) {
    if (n <= local_bytes / size) {
        memset(local, 0, n * size);
        return local;
    }
    return calloc(n ? n : 1, size);
}

static void scratch_free(void *p, void *local) {
    if (p != local) free(p);
}

/* A query that names its `now` is a replay at that time: it sees only the
 * memories that existed then (created_at <= now), in every profile and
 * even with include_invalid (which brings back what was hidden, not what
 * was not written yet). A query on the clock sees every memory, so that a
 * clock a little behind another writer's never hides a fresh write. */
static int replaying(const query_ctx *x) { return x->q->now != 0; }

static int row_allowed(query_ctx *x, ns_cache *c, size_t i) {
    const remem_memory *m = &c->rows[i].m;
    if (x->tiers.rank_of_code[c->tier[i]] < 0) return 0;
    if (replaying(x) && m->created_at > x->now) return 0;
    if (!x->q->include_invalid) {
        if (m->invalidated_at) return 0;
        if (m->expires_at && m->expires_at <= x->now) return 0;
    }
    /* Bookkeeping records (list.c) only when the filter asks by kind. */
    if (eng_internal_kind(m->kind) && !filter_uses_kind(x->f) && !filter_uses_kind(x->pf))
        return 0;
    if (!x->f && !x->pf) return 1;
    filter_record r = {.id = m->id,
                       .ns = m->ns,
                       .kind = m->kind,
                       .tier = m->tier,
                       .text = m->text,
                       .importance = m->importance,
                       .created_at = m->created_at,
                       .updated_at = m->updated_at,
                       .accessed_at = m->accessed_at,
                       .expires_at = m->expires_at,
                       .access_count = m->access_count,
                       .duplicate_count = m->duplicate_count,
                       .metadata = NULL};
    if ((x->f && filter_uses_metadata(x->f)) || (x->pf && filter_uses_metadata(x->pf)))
        r.metadata = cache_meta(c, i);
    return (!x->f || filter_match(x->f, &r)) && (!x->pf || filter_match(x->pf, &r));
}

static uint64_t *build_allow(query_ctx *x, ns_cache *c, size_t *allowed) {
    size_t words = (c->n + 63) / 64;
    uint64_t *bits = calloc(words ? words : 1, sizeof *bits);
    if (!bits) return NULL;
    size_t count = 0;
    int64_t from = INT64_MIN, until = INT64_MAX;
    int replay = replaying(x);
    for (size_t i = 0; i < c->n; i++) {
        /* The span of `now` over which this bitmap holds: no TTL runs out
         * and, in a replay, no memory comes into existence inside it. */
        int64_t e = c->rows[i].m.expires_at, cr = c->rows[i].m.created_at;
        if (e) {
            if (e <= x->now && e > from) from = e;
            if (e > x->now && e < until) until = e;
        }
        if (replay) {
            if (cr <= x->now && cr > from) from = cr;
            if (cr > x->now && cr < until) until = cr;
        }
        if (row_allowed(x, c, i)) {
            bits[i >> 6] |= 1ULL << (i & 63);
            count++;
        }
    }
    *allowed = count;
    x->built_from = from;
    x->built_until = until;
    return bits;
}

/* What decides the allow bitmap besides the rows and `now`; NULL when it
 * must not be kept (a filter on access fields, which reads change without
 * a new version). */
static char *allow_key(query_ctx *x) {
    const char *f = x->q->filter ? x->q->filter : "";
    if (strstr(f, "accessed_at") || strstr(f, "access_count")) return NULL;
    const char *parts[3] = {f, x->p.filter, x->p.tiers};
    size_t lens[3], total = 0;
    for (int i = 0; i < 3; i++) total += lens[i] = strlen(parts[i]);
    char *key = malloc(total + 6);
    if (!key) return NULL;
    char *p = key;
    for (int i = 0; i < 3; i++) {
        memcpy(p, parts[i], lens[i]);
        p += lens[i];
        *p++ = '\x1f';
    }
    *p++ = x->q->include_invalid ? '1' : '0';
    *p++ = replaying(x) ? 'r' : 'c';
    *p = '\0';
    return key;
}

/* A copy of the n bits words of src (NULL: out of memory). */
static uint64_t *copy_bits(const uint64_t *src, size_t words) {
    uint64_t *b = malloc((words ? words : 1) * sizeof *b);
    if (b && words) memcpy(b, src, words * sizeof *b);
    return b;
}

/* The allow bitmap of c for this query: a copy of the one kept in c when
 * it still holds, else a new one (a copy kept in c when it can be). The
 * cache is shared by readers in parallel (cache_share.c), so the kept one
 * is only touched under c->allow_lock and each query scans its own; the
 * copy is a few words per 64 rows, next to a scan of their vectors. The
 * caller frees it (*owned = 1). */
static uint64_t *get_allow(query_ctx *x, ns_cache *c, size_t *allowed, int *owned) {
    char *key = allow_key(x);
    size_t words = (c->n + 63) / 64;
    uint64_t *bits = NULL;
    *owned = 1;
    pthread_mutex_lock(&c->allow_lock);
    if (key && c->allow_bits && c->allow_key && strcmp(key, c->allow_key) == 0 &&
        c->allow_version == c->version && x->now >= c->allow_from && x->now < c->allow_until) {
        bits = copy_bits(c->allow_bits, words);
        *allowed = c->allow_count;
    }
    pthread_mutex_unlock(&c->allow_lock);
    if (bits || !(bits = build_allow(x, c, allowed)) || !key) {
        free(key);
        return bits;
    }
    uint64_t *keep = copy_bits(bits, words);
    pthread_mutex_lock(&c->allow_lock);
    free(c->allow_key);
    free(c->allow_bits);
    c->allow_key = keep ? key : NULL;
    c->allow_bits = keep;
    c->allow_count = *allowed;
    c->allow_version = c->version;
    c->allow_from = x->built_from;
    c->allow_until = x->built_until;
    pthread_mutex_unlock(&c->allow_lock);
    if (!keep) free(key);
    return bits;
}

/* ---- the lexical lane ---- */

/* The best lexical hits whose entities the entity lane follows, and the
 * most keys taken from each. */
enum { HOP_SEEDS = 5, HOP_KEYS = 32 };

/* One namespace's lexical hit, for the merge across namespaces. */
typedef struct lex_ref {
    size_t cache; /* index into x->caches */
    lex_hit hit;
} lex_ref;

static int cmp_lex_ref(const void *a, const void *b) {
    const lex_ref *x = a, *y = b;
    if (x->hit.score != y->hit.score) return x->hit.score > y->hit.score ? -1 : 1;
    if (x->cache != y->cache) return x->cache < y->cache ? -1 : 1;
    return x->hit.doc < y->hit.doc ? -1 : x->hit.doc > y->hit.doc;
}

/* BM25 candidates from each namespace's own lexical index (cache.c keeps
 * it beside the vectors), over the query's terms as the one analyser
 * makes them (lex_search_with drops repeats and keeps the 64 rarest;
 * with three terms or more it scores term at a time into the handle's
 * accumulator, else it walks the lists with pruning), with the
 * vector lane's allow bitmaps; the best n_cand of all namespaces join the
 * pool. Each namespace scores with its own statistics (N, df, avgdl).
 * With a WordNet expansion (qterms.c) the added terms count w_expand of
 * the query's own (lex_search_weighted). With one namespace the search
 * keeps every touched memory's sum in the accumulator (lex_search_kept),
 * so that complete_scores reads the BM25 of the other lanes' candidates
 * instead of scoring them again. */
static long lexical_search(query_ctx *x, size_t j, lex_hit *hits) {
    const qterms *q = &x->lexq;
    lex_index *lex = x->caches[j]->lex;
    long nh = -1;
    if (x->n_caches == 1 && x->db->lexs) {
        nh = lex_search_kept(lex, q->v, x->expanded ? q->w : NULL, x->expanded ? q->n : q->own,
                             x->n_cand, x->allow[j], hits, x->db->lexs);
        x->lex_kept = nh >= 0;
    }
    if (nh < 0 && x->expanded && x->db->lexs)
        nh = lex_search_weighted(lex, q->v, q->w, q->n, x->n_cand, x->allow[j], hits, x->db->lexs);
    if (nh < 0) /* no expansion, or no room for its accumulator */
        nh = (long)lex_search_with(lex, q->v, q->own, x->n_cand, x->allow[j], hits, x->db->lexs,
                                   NULL);
    return nh;
}

static int lexical_lane(query_ctx *x) {
    qterms *q = &x->lexq;
    lex_ref *refs = NULL;
    lex_hit *hits = NULL;
    int rc = REMEM_OK;
    if (qterms_lexical(x->db, x->text, x->p.w_expand, q) < 0) goto oom;
    if (q->n == 0) goto out;
    x->expanded = q->n > q->own;
    /* Without it (out of memory) lex_search_with walks the lists instead. */
    if (!x->db->lexs) x->db->lexs = lex_scratch_new();
    if (!(hits = malloc(x->n_cand * sizeof *hits))) goto oom;
    if (!(refs = malloc(x->n_caches * x->n_cand * sizeof *refs))) goto oom;
    size_t found = 0;
    for (size_t j = 0; j < x->n_caches; j++) {
        long nh = lexical_search(x, j, hits);
        for (long h = 0; h < nh; h++) refs[found++] = (lex_ref){j, hits[h]};
    }
    if (x->n_caches > 1) qsort(refs, found, sizeof *refs, cmp_lex_ref);
    if (found > x->n_cand) found = x->n_cand;
    /* The scores of the best few hits, which pull in their neighbours
     * and whose entities the entity lane follows. */
    size_t b = found < (size_t)x->p.neighbours ? found : (size_t)x->p.neighbours;
    x->lex_floor = b ? refs[b - 1].hit.score : INFINITY;
    b = found < HOP_SEEDS ? found : HOP_SEEDS;
    x->hop_floor = b ? refs[b - 1].hit.score : INFINITY;
    if (!(x->seeds = malloc((found ? found : 1) * sizeof *x->seeds))) goto oom;
    for (size_t i = 0; i < found; i++) {
        cand_ref *r = pool_put(&x->pool, x->caches[refs[i].cache], refs[i].hit.doc);
        if (!r) goto oom;
        /* the seeds of the hop that the vector lane did not bring, in
         * rank order (hop_keys) */
        if (!(r->lanes & 1) && refs[i].hit.score >= x->hop_floor)
            x->seeds[x->n_seeds++] = (size_t)(r - x->pool.v);
        r->lanes |= 2;
        r->bm25 = refs[i].hit.score;
    }
    x->lex_found = found;
    goto out;
oom:
    rc = eng_fail(x->db, REMEM_ENOMEM, "out of memory");
out:
    free(refs);
    free(hits);
    return rc;
}

/* ---- the entity lane ---- */

/* An entity held by more than this share of a namespace's memories
 * (a speaker's name in a conversation) still scores every candidate, but
 * brings no candidates of its own: its list would be most of the
 * namespace, and the best of it by BM25 are merely the shortest. */
#define ENTITY_LANE_MAX_SHARE 0.05


/* Append to q the keys of seed r (a best lexical hit) held by its
 * namespace's entity index, only those rare in its namespace (as the
 * index holds them: no analysis again). 0, or -1 out of memory. */
static int seed_keys(query_ctx *x, qterms *q, const cand_ref *r) {
    size_t j = 0;
    while (x->caches[j] != r->c) j++;
    const lex_index *ent = x->ents[j];
    if (!ent) return 0;
    const char *sp[HOP_KEYS];
    uint32_t len[HOP_KEYS], df[HOP_KEYS];
    size_t nk = lex_doc_terms(ent, (uint32_t)r->row, sp, len, df, HOP_KEYS);
    for (size_t k = 0; k < nk; k++) {
        if (df[k] > ENTITY_LANE_MAX_SHARE * (double)lex_count(ent)) continue;
        if (q->n == q->cap) {
            size_t cap = q->cap ? q->cap * 2 : 16;
            size_t *o = realloc(q->offs, cap * sizeof *o);
            if (!o) return -1;
            q->offs = o;
            q->cap = cap;
        }
        size_t at = q->buf.len;
        sb_append(&q->buf, sp[k], len[k]);
        sb_append(&q->buf, "", 1);
        if (q->buf.oom) return -1;
        q->offs[q->n++] = at;
    }
    return 0;
}

/* Append to q the entity keys of the best HOP_SEEDS lexical hits, for
 * questions whose answer lies in a memory that shares no word with the
 * question but an entity with one that does. The seeds in pool order
 * (those of the vector lane first), then the others in rank order: the
 * order of the keys is that of their sums (lex_score_docs). 0, or -1 out
 * of memory. */
static int hop_keys(query_ctx *x, qterms *q, double w_hop) {
    for (size_t i = 0; i < x->pool.n; i++) {
        const cand_ref *r = &x->pool.v[i];
        if ((r->lanes & 3) == 3 && r->bm25 >= x->hop_floor && seed_keys(x, q, r)) return -1;
    }
    for (size_t i = 0; i < x->n_seeds; i++)
        if (seed_keys(x, q, &x->pool.v[x->seeds[i]])) return -1;
    /* The buffer may have moved: every pointer is made again. */
    const char **v = realloc(q->v, (q->n ? q->n : 1) * sizeof *v);
    if (v) q->v = v;
    double *w = v ? realloc(q->w, q->n * sizeof *w) : NULL;
    if (!w) return -1;
    q->w = w;
    for (size_t i = 0; i < q->n; i++) {
        q->v[i] = q->buf.data + q->offs[i];
        q->w[i] = i < q->own ? 1.0 : w_hop;
    }
    return 0;
}

/* The memories that share the query's rarer entities (names, places,
 * dates, numbers: src/text/entities.h), by BM25 over each namespace's
 * entity index (cache_ent.c), with the vector lane's allow bitmaps: the
 * best n_cand of each namespace join the pool. It runs before the
 * lexical lane, which may keep its sums in the handle's accumulator
 * (lex_search_kept) until every candidate is scored. The keys of the hop
 * (hop_keys, once the lexical lane has ranked) bring no candidates of
 * their own, they only score them (complete_scores): searching with them
 * too measured no better on LoCoMo and cost a fifth of a recall. */
static int entity_lane(query_ctx *x) {
    qterms *q = &x->entq;
    lex_hit *hits = NULL;
    const char **rare = NULL;
    double *rw = NULL;
    int rc = REMEM_OK;
    if (q->n == 0) goto out; /* the query's entities: recall_one, before the loads */
    if (!(x->ents = calloc(x->n_caches, sizeof *x->ents))) goto oom;
    for (size_t j = 0; j < x->n_caches; j++) {
        int built = 0;
        x->ents[j] = cache_entities(x->caches[j], &built);
        if (built) cache_account(x->db, x->caches[j]); /* its bytes join the budget */
    }
    if (!x->db->lexs) x->db->lexs = lex_scratch_new();
    if (!(hits = malloc(x->n_cand * sizeof *hits)) || !(rare = malloc(q->n * sizeof *rare)) ||
        !(rw = malloc(q->n * sizeof *rw)))
        goto oom;
    for (size_t j = 0; j < x->n_caches; j++) {
        ns_cache *c = x->caches[j];
        lex_index *ent = x->ents[j];
        if (!ent) continue; /* out of memory: no lane here */
        size_t nr = 0;
        for (size_t i = 0; i < q->own; i++)
            if (lex_df(ent, q->v[i]) <= ENTITY_LANE_MAX_SHARE * (double)lex_count(ent))
                rw[nr] = q->w[i], rare[nr++] = q->v[i];
        long nh = nr ? lex_search_weighted(ent, rare, rw, nr, x->n_cand, x->allow[j], hits,
                                           x->db->lexs)
                     : 0;
        for (long h = 0; h < nh; h++) {
            cand_ref *r = pool_put(&x->pool, c, hits[h].doc);
            if (!r) goto oom;
            r->lanes |= 4;
        }
    }
    goto out;
oom:
    rc = eng_fail(x->db, REMEM_ENOMEM, "out of memory");
out:
    free(rare);
    free(rw);
    free(hits);
    return rc;
}

/* ---- the stream neighbours of the lexical hits ---- */

/* The row of c holding the memory written just before (d = -1) or after
 * (d = 1) the one at row, or -1. Rows mostly lie in the order they were
 * written, so the adjacent row is looked at first (it is near in memory),
 * and the cache's map of rowids asked only when it is not the one. */
static long stream_row(const ns_cache *c, size_t row, int d) {
    int64_t want = c->rows[row].rowid + d;
    size_t near = row + (size_t)(ptrdiff_t)d;
    if ((d > 0 || row > 0) && near < c->n && c->rows[near].rowid == want) return (long)near;
    return cache_find(c, want);
}

static int allowed_row(const uint64_t *allow, size_t row) { return (allow[row >> 6] >> (row & 63)) & 1; }

/* The memories written just before and after each of the best lexical
 * hits in its namespace join the pool (lanes bit 3), so that the context
 * term (score_add_context) can lift the answer that follows a question
 * even when the answer shares no word with the query. */
static size_t cache_index(const query_ctx *x, const ns_cache *c) {
    size_t j = 0;
    while (x->caches[j] != c) j++;
    return j;
}

static int pull_neighbours(query_ctx *x) {
    size_t n0 = x->pool.n;
    for (size_t i = 0; i < n0; i++) {
        cand_ref r0 = x->pool.v[i];
        if (!(r0.lanes & 2) || !(r0.bm25 > 0) || r0.bm25 < x->lex_floor) continue;
        size_t j = cache_index(x, r0.c);
        for (int d = -1; d <= 1; d += 2) {
            long row = stream_row(r0.c, r0.row, d);
            if (row < 0 || !allowed_row(x->allow[j], (size_t)row)) continue;
            if (pool_find(&x->pool, r0.c, (size_t)row)) continue; /* a candidate already */
            cand_ref *r = pool_put(&x->pool, r0.c, (size_t)row);
            if (!r) return eng_fail(x->db, REMEM_ENOMEM, "out of memory");
            r->lanes = 8;
        }
    }
    return REMEM_OK;
}

/* The hop (hop_keys), once the lexical lane has ranked its best hits. */
static int entity_hop(query_ctx *x) {
    if (!x->ents || x->p.w_hop <= 0) return REMEM_OK;
    return hop_keys(x, &x->entq, x->p.w_hop) ? eng_fail(x->db, REMEM_ENOMEM, "out of memory")
                                              : REMEM_OK;
}

/* ---- every candidate scored by every lane ---- */

/* Each candidate of namespace j that the lexical lane did not rank gets
 * its BM25 all the same (the score the lane would have given it: the sum
 * it kept, lex_scratch_sums, or lex_score_docs), and every candidate its
 * entity score, so that no signal is missing for want of a place in
 * another lane's top n_cand. */

/* The pool's candidates of cache j by row ascending: their rows into
 * docs[], pool positions into at[]; how many. bits (room for the largest
 * cache's rows) marks them, so no sort is needed. */
static size_t rows_of(query_ctx *x, size_t j, uint64_t *bits, uint32_t *docs, size_t *at) {
    const ns_cache *c = x->caches[j];
    size_t words = (c->n + 63) / 64, m = 0;
    memset(bits, 0, words * sizeof *bits);
    for (size_t i = 0; i < x->pool.n; i++)
        if (x->pool.v[i].c == c) bits[x->pool.v[i].row >> 6] |= 1ULL << (x->pool.v[i].row & 63);
    for (size_t w = 0; w < words; w++)
        for (uint64_t b = bits[w]; b; b &= b - 1) {
            size_t row = w * 64 + (size_t)__builtin_ctzll(b);
            docs[m] = (uint32_t)row;
            at[m++] = (size_t)(pool_find(&x->pool, c, row) - x->pool.v);
        }
    return m;
}

static void lexical_scores(query_ctx *x, size_t j, const uint32_t *docs, size_t m, double *sc) {
    if (x->lex_kept)
        lex_scratch_sums(x->db->lexs, docs, m, sc);
    else
        lex_score_docs(x->caches[j]->lex, x->lexq.v, x->expanded ? x->lexq.w : NULL,
                       x->expanded ? x->lexq.n : x->lexq.own, docs, m, sc);
}

static int complete_scores(query_ctx *x) {
    size_t n = x->pool.n ? x->pool.n : 1, words = 1;
    for (size_t j = 0; j < x->n_caches; j++)
        if ((x->caches[j]->n + 63) / 64 > words) words = (x->caches[j]->n + 63) / 64;
    uint32_t *docs = malloc(n * sizeof *docs), *lex_docs = malloc(n * sizeof *lex_docs);
    double *sc = malloc(n * sizeof *sc);
    size_t *at = malloc(n * sizeof *at), *lex_at = malloc(n * sizeof *lex_at);
    uint64_t *bits = malloc(words * sizeof *bits);
    int rc = docs && lex_docs && sc && at && lex_at && bits ? 0 : -1;
    for (size_t j = 0; j < x->n_caches && !rc; j++) {
        /* All of cache j's candidates by row, then those the lexical
         * lane did not rank, in the same order. */
        size_t all = rows_of(x, j, bits, docs, at), m = 0;
        for (size_t i = 0; x->lexq.n && i < all; i++)
            if (!(x->pool.v[at[i]].lanes & 2)) lex_docs[m] = docs[i], lex_at[m++] = at[i];
        if (m) {
            lexical_scores(x, j, lex_docs, m, sc);
            for (size_t i = 0; i < m; i++) x->pool.v[lex_at[i]].bm25 = sc[i];
        }
        if (!x->ents || !x->ents[j]) continue;
        lex_score_docs(x->ents[j], x->entq.v, x->entq.w, x->entq.n, docs, all, sc);
        for (size_t i = 0; i < all; i++) x->pool.v[at[i]].ent = sc[i];
    }
    free(docs);
    free(lex_docs);
    free(sc);
    free(at);
    free(lex_at);
    free(bits);
    return rc ? eng_fail(x->db, REMEM_ENOMEM, "out of memory") : REMEM_OK;
}

/* ---- the vector signal of the other lanes' candidates ---- */

/* How many candidates ahead fill_sims asks for a vector. */
enum { SIM_AHEAD = 2 };

static void prefetch_vector(const cand_ref *r) {
    const char *v = (const char *)flat_row(r->c->ix, r->row);
    size_t bytes = (size_t)r->c->dim * sizeof(float);
    for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(v + o);
}

/* The cosine of every candidate the vector lane did not rank. Their
 * vectors lie far apart (a row each, KBs apart), so each is asked for
 * SIM_AHEAD candidates before it is read: the reads overlap instead of
 * waiting one after another. */
static void fill_sims(query_ctx *x) {
    cand_ref *v = x->pool.v;
    size_t n = x->pool.n;
    for (size_t i = 0; i < n && i < SIM_AHEAD; i++)
        if (isnan(v[i].sim)) prefetch_vector(&v[i]);
    for (size_t i = 0; i < n; i++) {
        if (i + SIM_AHEAD < n && isnan(v[i + SIM_AHEAD].sim)) prefetch_vector(&v[i + SIM_AHEAD]);
        if (isnan(v[i].sim))
            v[i].sim = flat_dot(x->qv, flat_row(v[i].c->ix, v[i].row), v[i].c->dim);
    }
}

/* ---- results ---- */

/* A result is one allocation: the remem_result, its hits, and the strings
 * of their memories (copied so that they outlive the caches), so that
 * handing back k hits costs one malloc instead of ten per hit. */
typedef struct result_impl {
    remem_result pub;
    char *next; /* where the next string goes */
    /* Only when explaining (eng_recall_explain): the near misses follow
     * the n hits in pub.hits, and each of the n + n_near has its row in ex;
     * profile is the effective profile's JSON (malloc'd). */
    size_t n_near;
    struct explain_row {
        double part[6]; /* candidate.part */
        int missed;     /* a near miss: enum missed */
    } *ex;
    char *profile, *formula;
} result_impl;

/* Why a candidate was not returned (recall.explain's near misses). */
enum missed { MISSED_NOT = 0, MISSED_RANK, MISSED_MIN_SIMILARITY, MISSED_MIN_SCORE };

static size_t str_bytes(const char *s) { return s ? strlen(s) + 1 : 0; }

static const char *keep(result_impl *r, const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = memcpy(r->next, s, n);
    r->next += n;
    return d;
}

void remem_result_free(remem_result *pub) {
    if (!pub) return;
    result_impl *r = (result_impl *)pub;
    free(r->profile);
    free(r->formula);
    free(pub);
}

typedef struct ranked {
    candidate c;
    cand_ref *ref;
    int tier;
    int missed; /* enum missed: a threshold left it out */
} ranked;

static int cmp_ranked(const void *a, const void *b) {
    const ranked *x = a, *y = b;
    if (x->tier != y->tier) return x->tier < y->tier ? -1 : 1;
    if (x->c.score != y->c.score) return x->c.score > y->c.score ? -1 : 1;
    double sx = isnan(x->c.sim) ? -2 : x->c.sim, sy = isnan(y->c.sim) ? -2 : y->c.sim;
    if (sx != sy) return sx > sy ? -1 : 1;
    int64_t rx = x->ref->c->rows[x->ref->row].rowid, ry = y->ref->c->rows[y->ref->row].rowid;
    return rx > ry ? -1 : rx < ry; /* newer first */
}

/* The best k of rk[0..n) first, best first (cmp_ranked); the rest after,
 * in no order. For a small k, k passes of selection: what a full sort of
 * the whole pool (hundreds of entries of a hundred bytes each, moved
 * about by qsort) cost for ten hits was a tenth of a `default` recall. */
static void order_top(ranked *rk, size_t n, size_t k) {
    if (n < 2) return;
    if (k > 32 || k * 4 >= n) {
        qsort(rk, n, sizeof *rk, cmp_ranked);
        return;
    }
    for (size_t i = 0; i < k; i++) {
        size_t best = i;
        for (size_t j = i + 1; j < n; j++)
            if (cmp_ranked(&rk[j], &rk[best]) < 0) best = j;
        if (best != i) {
            ranked t = rk[i];
            rk[i] = rk[best];
            rk[best] = t;
        }
    }
}

/* ---- the context step's neighbours ---- */

/* Each candidate's stream neighbours among the candidates: nb[i] the one
 * written just before it in its namespace (rowid - 1), nb[n + i] the one
 * just after (rowid + 1), -1 when not a candidate. rk[0..n) hold each
 * (namespace, rowid) once; a small table over their positions (whose rows
 * were read already) finds each neighbour in a probe or two, where the
 * cache's own map of rowids would cost a miss per look. Returns nonzero
 * when out of memory. */
typedef struct stream_pos {
    uintptr_t cache; /* the candidate's namespace cache */
    int64_t rowid;
} stream_pos;

static size_t stream_slot(const stream_pos *p, const uint32_t *slot, size_t mask, uintptr_t c,
                          int64_t rowid) {
    uint64_t h = (uint64_t)c * 0x9E3779B97F4A7C15ULL ^ (uint64_t)rowid * 0xC2B2AE3D27D4EB4FULL;
    size_t at = (size_t)(h ^ h >> 29) & mask;
    for (uint32_t s; (s = slot[at]) != 0; at = (at + 1) & mask)
        if (p[s - 1].rowid == rowid && p[s - 1].cache == c) break;
    return at;
}

static int stream_neighbours(const ranked *rk, size_t n, long *nb) {
    size_t slots = 16;
    while (slots < 2 * n) slots *= 2;
    stream_pos *p = malloc((n ? n : 1) * sizeof *p);
    uint32_t *slot = calloc(slots, sizeof *slot);
    if (!p || !slot) {
        free(p);
        free(slot);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const cand_ref *r = rk[i].ref;
        p[i] = (stream_pos){(uintptr_t)r->c, r->c->rows[r->row].rowid};
        slot[stream_slot(p, slot, slots - 1, p[i].cache, p[i].rowid)] = (uint32_t)i + 1;
    }
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < 2; d++) {
            int64_t want = p[i].rowid + (d ? 1 : -1);
            uint32_t s = slot[stream_slot(p, slot, slots - 1, p[i].cache, want)];
            nb[d * n + i] = s ? (long)s - 1 : -1;
        }
    free(p);
    free(slot);
    return 0;
}

static size_t memory_bytes(const remem_memory *m) {
    return str_bytes(m->ns) + str_bytes(m->id) + str_bytes(m->kind) + str_bytes(m->tier) +
           str_bytes(m->text) + str_bytes(m->superseded_by) + str_bytes(m->metadata) +
           str_bytes(m->links) + str_bytes(m->model);
}

static void copy_memory(result_impl *r, remem_memory *dst, const remem_memory *src) {
    *dst = *src;
    dst->size = sizeof *dst; /* a caller may hand it back (remem_memory_to_json) */
    dst->vector = NULL;
    dst->dim = 0;
    dst->ns = keep(r, src->ns);
    dst->id = keep(r, src->id);
    dst->kind = keep(r, src->kind);
    dst->tier = keep(r, src->tier);
    dst->text = keep(r, src->text);
    dst->superseded_by = keep(r, src->superseded_by);
    dst->metadata = keep(r, src->metadata);
    dst->links = keep(r, src->links);
    dst->model = keep(r, src->model);
}

static double elapsed_ms(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/* The answer when memory is off for every namespace of the query: no hits,
 * by choice (seed 004's --no-memory), and the result says so. */
static int memory_off_result(remem *db, const remem_query *q, const struct timespec *t0,
                             remem_result **out) {
    const char *name = q->profile ? q->profile : eng_policy(db, q->namespaces[0])->profile;
    if (!name) name = "default";
    result_impl *res = calloc(1, sizeof *res + str_bytes(name));
    if (!res) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    res->pub.hits = (remem_hit *)(res + 1);
    res->next = (char *)(res + 1);
    res->pub.profile = keep(res, name);
    res->pub.now = q->now ? q->now : util_now_ms();
    res->pub.memory_off = 1;
    res->pub.took_ms = elapsed_ms(t0);
    *out = &res->pub;
    return REMEM_OK;
}

static int check_query(remem *db, const remem_query *q) {
    if (!q) return eng_fail(db, REMEM_EINVAL, "no query given");
    if (!q->namespaces || q->n_namespaces == 0)
        return eng_fail(db, REMEM_EINVAL, "a query names at least one namespace");
    for (size_t i = 0; i < q->n_namespaces; i++)
        if (!q->namespaces[i] || !*q->namespaces[i])
            return eng_fail(db, REMEM_EINVAL, "namespace %zu of the query is empty", i);
    if ((!q->text || !*q->text) && !q->vector)
        return eng_fail(db, REMEM_EINVAL, "a query needs text or a vector");
    size_t text_len = q->text ? strlen(q->text) : 0;
    if (text_len > REMEM_QUERY_TEXT_MAX)
        return eng_fail(db, REMEM_EINVAL, "query text is %zu bytes; the limit is %d", text_len,
                        REMEM_QUERY_TEXT_MAX);
    if (q->vector && q->dim != db->emb->dim)
        return eng_fail(db, REMEM_EDIM,
                        "query vector has %d dimensions; the %s embedder (%s) makes %d", q->dim,
                        db->emb->name, db->emb->model_id, db->emb->dim);
    /* The numeric overrides: the rules and messages of the JSON parser. */
    char err[256];
    int rc = eng_query_check(q, err, sizeof err);
    return rc ? eng_fail(db, rc, "%s", err) : REMEM_OK;
}

/* REMEM_RECALL_EXPAND, REMEM_RECALL_ENTITY, REMEM_RECALL_HOP (numbers in
 * [0, 1000]) and REMEM_RECALL_NEIGHBOURS (a count), when set, replace
 * every profile's w_expand, w_entity, w_hop and neighbours (0: off): for
 * measuring what each adds (the ablation in docs/retrieval.md). Read once
 * per process; a value that does not parse is ignored. */
static double env_val[4] = {NAN, NAN, NAN, NAN};
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void read_switches(void) {
    static const char *const names[4] = {"REMEM_RECALL_EXPAND", "REMEM_RECALL_ENTITY",
                                         "REMEM_RECALL_HOP", "REMEM_RECALL_NEIGHBOURS"};
    for (int i = 0; i < 4; i++) {
        const char *v = getenv(names[i]);
        char *end;
        double w = v && *v ? strtod(v, &end) : NAN;
        if (v && *v && !*end && w >= 0 && w <= 1000) env_val[i] = w;
    }
}

static void recall_switches(profile *p) {
    pthread_once(&env_once, read_switches);
    if (!isnan(env_val[0])) p->w_expand = env_val[0];
    if (!isnan(env_val[1])) p->w_entity = env_val[1];
    if (!isnan(env_val[2])) p->w_hop = env_val[2];
    if (!isnan(env_val[3])) p->neighbours = (int)env_val[3];
}

static int prepare(query_ctx *x) {
    remem *db = x->db;
    const remem_query *q = x->q;
    int rc;
    if (profile_get(q->profile, &x->p)) {
        strbuf names;
        sb_init(&names);
        for (const char *const *n = profile_names(); *n; n++)
            sb_printf(&names, "%s%s", n == profile_names() ? "" : ", ", *n);
        rc = eng_fail(db, REMEM_EPROFILE, "unknown profile \"%.64s\" (known: %s)", q->profile,
                      names.data ? names.data : "");
        sb_free(&names);
        return rc;
    }
    profile_apply_query(&x->p, q);
    recall_switches(&x->p);
    if (!q->text || !*q->text) x->p.lexical_lane = x->p.w_entity = 0;
    /* The entity lane and the neighbours go with the lexical lane's weight:
     * a query that weighs words at 0 (eng_similar's relevance-only one,
     * an ablation of the vector alone) ranks by what it asked. */
    if (!x->p.lexical_lane || x->p.w_lexical == 0) x->p.w_expand = x->p.w_entity = 0;
    if (x->p.w_lexical == 0) x->p.neighbours = 0;
    x->text = q->text;
    if (q->text && strlen(q->text) > REMEM_QUERY_HEAD_MAX) {
        /* A long query: its head, cut where a character starts. */
        size_t len = REMEM_QUERY_HEAD_MAX;
        while (len > 0 && ((unsigned char)q->text[len] & 0xC0) == 0x80) len--;
        if (!(x->text = x->text_own = strndup(q->text, len)))
            return eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    if ((rc = parse_tiers(db, x->p.tiers, &x->tiers))) return rc;
    char err[512];
    if (q->filter && *q->filter &&
        filter_parse(q->filter, strlen(q->filter), &x->f, err, sizeof err))
        return eng_fail(db, REMEM_EFILTER, "filter: %s", err);
    if (x->p.filter[0] && filter_parse(x->p.filter, strlen(x->p.filter), &x->pf, err, sizeof err))
        return eng_fail(db, REMEM_EFILTER, "profile filter: %s", err);
    x->now = q->now ? q->now : util_now_ms();
    int k = x->p.k > 0 ? x->p.k : 10;
    x->p.k = k;
    x->n_cand = x->p.candidates > 0         ? (size_t)x->p.candidates
                : x->p.candidates_per_k > 0 ? (size_t)(k * x->p.candidates_per_k)
                                            : (size_t)(k * 5 > 50 ? k * 5 : 50);
    int dim = db->emb->dim;
    x->qv = scratch(x->qv_local, sizeof x->qv_local, (size_t)dim, sizeof *x->qv);
    if (!x->qv) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    if (q->vector) {
        double s = 0;
        for (int i = 0; i < dim; i++) s += (double)q->vector[i] * q->vector[i];
        double inv = s > 0 ? 1.0 / sqrt(s) : 0;
        for (int i = 0; i < dim; i++) x->qv[i] = (float)(q->vector[i] * inv);
    } else {
        /* While a remote embedder is down the query vector is zero: the
         * lexical lane still answers (pending.c). */
        if ((rc = eng_embed_query(db, x->text, x->qv))) return rc;
    }
    return REMEM_OK;
}

/* ns's namespace row (model, version, rows); and, where the store reads
 * a namespace in one call and ns is not cached, its cache from that same
 * read in *pre (not shared yet; NULL when none): a recall of an uncached
 * namespace is then one read of the store, not three. REMEM_ENOTFOUND
 * (not reported) when ns was never written. */
static int read_namespace(remem *db, const char *ns, char *model, size_t cap, int64_t *version,
                          int64_t *rows, ns_cache **pre) {
    *pre = NULL;
    if (store_has_load(db->st) && !cache_has(db, ns)) {
        int rc;
        *pre = cache_load_read(db, ns, model, cap, version, rows, &rc);
        return rc;
    }
    int r = store_ns_info(db->st, ns, model, cap, NULL, version, rows);
    return r && r != REMEM_ENOTFOUND ? eng_store_fail(db, r) : r;
}

/* The namespaces of the query to read, in query order (no repeats, none
 * never written), each checked to hold the handle's model; their
 * versions and row counts in version[] and rows[], and the caches read
 * with them in pre[] (read_namespace). *m gets the count. */
static int pick_namespaces(query_ctx *x, const char **names, int64_t *version, int64_t *rows,
                           ns_cache **pre, size_t *m) {
    remem *db = x->db;
    const remem_query *q = x->q;
    *m = 0;
    for (size_t i = 0; i < q->n_namespaces; i++) {
        const char *ns = q->namespaces[i];
        int dup = 0;
        for (size_t j = 0; j < i; j++) dup |= strcmp(q->namespaces[j], ns) == 0;
        if (dup) continue;
        char model[128] = "";
        int r = read_namespace(db, ns, model, sizeof model, &version[*m], &rows[*m], &pre[*m]);
        if (r == REMEM_ENOTFOUND) continue;
        if (r) return r;
        names[(*m)++] = ns;
        if (model[0] && strcmp(model, db->emb->model_id) != 0)
            return eng_fail(db, REMEM_EMODEL,
                            "namespace %s holds vectors of model %s; this handle embeds with "
                            "%s. Open it with the same embedder, or run `remem reindex --ns %s`",
                            ns, model, db->emb->model_id, ns);
    }
    return REMEM_OK;
}

/* The caches of names[0..m), pinned and read-locked, got in name order
 * (cache_share.c: a thread holding several read locks takes them in one
 * order, so locks never wait in a circle), then kept in x->caches in
 * query order. */
static int get_caches(query_ctx *x, const char **names, const int64_t *version,
                      const int64_t *rows, ns_cache **pre, size_t m) {
    size_t order_local[8];
    ns_cache *got_local[8];
    size_t *order = scratch(order_local, sizeof order_local, m, sizeof *order);
    ns_cache **got = scratch(got_local, sizeof got_local, m, sizeof *got);
    if (!order || !got) {
        scratch_free(order, order_local);
        scratch_free(got, got_local);
        return eng_fail(x->db, REMEM_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < m; i++) {
        size_t j = i;
        for (; j > 0 && strcmp(names[order[j - 1]], names[i]) > 0; j--) order[j] = order[j - 1];
        order[j] = i;
    }
    int rc = REMEM_OK;
    for (size_t i = 0; i < m && !rc; i++) {
        size_t at = order[i];
        if (pre[at])
            got[at] = cache_get_loaded(x->db, pre[at], &rc);
        else
            got[at] = cache_get_known(x->db, names[at], version[at], rows[at], &rc);
        pre[at] = NULL;
    }
    x->locked = 1;
    for (size_t i = 0; i < m; i++)
        if (got[i]) x->caches[x->n_caches++] = got[i];
    scratch_free(order, order_local);
    scratch_free(got, got_local);
    return rc;
}

/* Gather every namespace's cache and run the vector lane over it. */
static int vector_lane(query_ctx *x) {
    remem *db = x->db;
    size_t nns = x->q->n_namespaces;
    x->caches = scratch(x->caches_local, sizeof x->caches_local, nns, sizeof *x->caches);
    x->allow = scratch(x->allow_local, sizeof x->allow_local, nns, sizeof *x->allow);
    x->allow_owned = scratch(x->owned_local, sizeof x->owned_local, nns, 1);
    const char *names_local[8];
    int64_t ver_local[8], rows_local[8];
    ns_cache *pre_local[8];
    const char **names = scratch(names_local, sizeof names_local, nns, sizeof *names);
    ns_cache **pre = scratch(pre_local, sizeof pre_local, nns, sizeof *pre);
    int64_t *version = scratch(ver_local, sizeof ver_local, nns, sizeof *version);
    int64_t *rows = scratch(rows_local, sizeof rows_local, nns, sizeof *rows);
    flat_hit hits_local[256];
    flat_hit *hits = scratch(hits_local, sizeof hits_local, x->n_cand, sizeof *hits);
    int rc = REMEM_OK;
    size_t m = 0;
    if (!x->caches || !x->allow || !x->allow_owned || !hits || !names || !version || !rows ||
        !pre)
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    else
        memset(pre, 0, nns * sizeof *pre);
    /* The namespaces' versions and any loads read one snapshot of the
     * store, under one lock (SQLite: one shared lock, not one a query). */
    if (!rc) rc = store_read_begin(db->st);
    if (!rc) rc = pick_namespaces(x, names, version, rows, pre, &m);
    if (!rc) rc = get_caches(x, names, version, rows, pre, m);
    store_read_end(db->st);
    for (size_t j = 0; pre && j < m; j++) cache_destroy(pre[j]); /* those a failure left */
    for (size_t j = 0; j < x->n_caches && !rc; j++) x->pool.rows += x->caches[j]->n;
    for (size_t j = 0; j < x->n_caches && !rc; j++) {
        ns_cache *c = x->caches[j];
        size_t allowed = 0;
        int owned = 1;
        uint64_t *bits = get_allow(x, c, &allowed, &owned);
        if (!bits) {
            rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
            break;
        }
        x->allow_owned[j] = (unsigned char)owned;
        x->allow[j] = bits;
        if (allowed == 0) continue;
        size_t nh = flat_search(c->ix, x->qv, bits, x->n_cand, hits);
        for (size_t h = 0; h < nh; h++) {
            cand_ref *r2 = pool_put(&x->pool, c, hits[h].row);
            if (!r2) {
                rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
                break;
            }
            r2->lanes = 1;
            r2->sim = hits[h].sim;
        }
    }
    scratch_free(hits, hits_local);
    scratch_free(names, names_local);
    scratch_free(version, ver_local);
    scratch_free(rows, rows_local);
    scratch_free(pre, pre_local);
    return rc;
}

/* Let every cache's read lock go (keeping the pins). */
static void unlock_caches(query_ctx *x) {
    if (!x->locked) return;
    for (size_t j = 0; j < x->n_caches; j++) cache_unlock(x->caches[j]);
    x->locked = 0;
}

/* Touch the returned memories in the store, then in the caches. The read
 * locks go first: a cache's write lock is taken here, and a thread never
 * waits for one while it holds others (cache_share.c). */
static void touch(query_ctx *x, ranked *top, size_t n) {
    remem *db = x->db;
    if (n == 0 || db->opt.read_only) return;
    int64_t *ids = malloc(2 * n * sizeof *ids);
    if (!ids) return;
    for (size_t i = 0; i < n; i++) ids[i] = top[i].ref->c->rows[top[i].ref->row].rowid;
    unlock_caches(x);
    int ok = 0;
    if (store_begin(db->st) == REMEM_OK) {
        ok = store_touch(db->st, ids, n, x->now) == REMEM_OK && store_commit(db->st) == REMEM_OK;
        if (!ok) store_rollback(db->st);
    }
    for (size_t j = 0; ok && j < x->n_caches; j++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (top[i].ref->c == x->caches[j]) ids[n + m++] = ids[i];
        if (m) cache_touch(x->caches[j], ids + n, m, x->now);
    }
    free(ids);
}

/* Keep the parts and the effective profile of the k hits and of the near
 * best candidates left out (rk: the kept ones ranked, then those the
 * thresholds cut, ranked). 0, or -1 out of memory. */
static int keep_explain(result_impl *res, const profile *p, const ranked *rk, size_t k,
                        size_t near) {
    res->n_near = near;
    res->profile = profile_to_json(p);
    res->formula = profile_formula(p);
    if (!res->profile || !res->formula) return -1;
    for (size_t i = 0; i < k + near; i++) {
        memcpy(res->ex[i].part, rk[i].c.part, sizeof rk[i].c.part);
        res->ex[i].missed = i < k ? MISSED_NOT : rk[i].missed ? rk[i].missed : MISSED_RANK;
    }
    return 0;
}

static int recall_one(remem *db, const remem_query *in, int explain, size_t near,
                      remem_result **out) {
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    *out = NULL;
    if (!db) return REMEM_EINVAL;
    if (!db->st || !db->emb) return eng_fail(db, REMEM_EINVAL, "the store is not open");
    eng_ok(db);
    remem_query qq; /* the caller's query at the library's size (STRUCT SIZES) */
    int rc = eng_take_query(db, in, &qq);
    if (rc) return rc;
    const remem_query *q = &qq;
    rc = check_query(db, q);
    if (rc) return rc;
    /* Memory off: its namespaces are left out (all of them: no hits). */
    size_t n_off = 0;
    for (size_t i = 0; i < qq.n_namespaces; i++) n_off += eng_memory_off(db, qq.namespaces[i]) != 0;
    if (n_off == qq.n_namespaces) return memory_off_result(db, q, &t0, out);
    const char **on_ns = NULL;
    if (n_off) {
        if (!(on_ns = malloc(qq.n_namespaces * sizeof *on_ns)))
            return eng_fail(db, REMEM_ENOMEM, "out of memory");
        size_t j = 0;
        for (size_t i = 0; i < qq.n_namespaces; i++)
            if (!eng_memory_off(db, qq.namespaces[i])) on_ns[j++] = qq.namespaces[i];
        qq.namespaces = on_ns;
        qq.n_namespaces = j;
    }
    /* What the query leaves open, its namespace's policy fills in. */
    json_t *pol_hold = NULL;
    if ((rc = eng_query_policy(db, &qq, &pol_hold))) {
        free(on_ns);
        return rc;
    }
    query_ctx x;
    memset(&x, 0, sizeof x);
    x.db = db;
    x.q = q;
    ranked *rk = NULL;
    result_impl *res = NULL;
    if ((rc = prepare(&x))) goto out;
    /* The query's entities before the loads: a namespace loaded for a
     * query that has some reads its entity keys in the same scan as its
     * terms (cache.c), for the entity lane to come. */
    if (x.p.w_entity > 0 && qterms_entities(x.text, &x.entq) < 0) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto out;
    }
    db->load_entities = x.entq.n > 0;
    rc = vector_lane(&x); /* loads the namespaces not in the cache */
    db->load_entities = 0;
    if (rc) goto out;
    if (x.p.w_entity > 0 && x.n_caches > 0 && (rc = entity_lane(&x))) goto out;
    if (x.p.lexical_lane && x.n_caches > 0 && (rc = lexical_lane(&x))) goto out;
    if ((rc = entity_hop(&x))) goto out;
    if (x.p.neighbours > 0 && x.lex_found && (rc = pull_neighbours(&x))) goto out;
    if ((x.lexq.n || x.ents) && (rc = complete_scores(&x))) goto out;
    if (x.lex_kept) lex_scratch_release(db->lexs);
    x.lex_kept = 0;
    rk = calloc(x.pool.n ? x.pool.n : 1, sizeof *rk);
    if (!rk) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto out;
    }
    fill_sims(&x);
    size_t n = 0;
    for (size_t i = 0; i < x.pool.n; i++) {
        cand_ref *r = &x.pool.v[i];
        const remem_memory *m = &r->c->rows[r->row].m;
        rk[n].ref = r;
        rk[n].c.sim = r->sim;
        rk[n].c.bm25 = r->bm25;
        rk[n].c.ent = r->ent;
        rk[n].c.importance = m->importance;
        rk[n].c.last_access = m->accessed_at ? m->accessed_at : m->created_at;
        /* Static memories (identity, world rules) never decay (seed 001):
         * their recency is that of a memory accessed right now. */
        if (r->c->tier[r->row] == 0) rk[n].c.last_access = x.now;
        rk[n].c.boosted = x.p.boost_kind[0] && strcmp(m->kind, x.p.boost_kind) == 0;
        /* marked by the write path (rate.c) when the kind's default stood in */
        rk[n].c.unrated = x.p.unrated_relevance_only && m->metadata &&
                          strstr(m->metadata, "\"fallback\":\"kind_default\"") != NULL;
        rk[n].tier = x.p.tier_priority ? tier_rank(&x.tiers, m->tier) : 0;
        n++;
    }
    candidate *cs = malloc((n ? n : 1) * sizeof *cs);
    if (!cs) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) cs[i] = rk[i].c;
    if (score_candidates(&x.p, x.now, cs, n)) {
        free(cs);
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto out;
    }
    if (x.p.w_context != 0 && n > 0) {
        /* A candidate's stream neighbours: the memories written just before
         * and after it in its namespace (adjacent rowids). */
        long *nb = malloc(2 * n * sizeof *nb);
        if (!nb) {
            free(cs);
            rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
            goto out;
        }
        if (stream_neighbours(rk, n, nb)) {
            free(nb);
            free(cs);
            rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
            goto out;
        }
        int ctx_rc = score_add_context(&x.p, cs, n, nb, nb + n);
        free(nb);
        if (ctx_rc) {
            free(cs);
            rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
            goto out;
        }
    }
    /* The kept candidates first, ranked; then (for the near misses) those a
     * threshold cut, ranked too. */
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        rk[i].c = cs[i];
        rk[i].missed = !isinf(x.p.min_similarity) && !(cs[i].sim >= x.p.min_similarity)
                           ? MISSED_MIN_SIMILARITY
                       : !isinf(x.p.min_score) && !(cs[i].score >= x.p.min_score)
                           ? MISSED_MIN_SCORE
                           : MISSED_NOT;
        if (!rk[i].missed) {
            ranked t = rk[kept];
            rk[kept++] = rk[i];
            rk[i] = t;
        }
    }
    free(cs);
    size_t k = kept < (size_t)x.p.k ? kept : (size_t)x.p.k;
    if (explain) { /* every kept candidate in order: the near misses follow the hits */
        if (kept > 1) qsort(rk, kept, sizeof *rk, cmp_ranked);
        if (n - kept > 1) qsort(rk + kept, n - kept, sizeof *rk, cmp_ranked);
    } else {
        order_top(rk, kept, k);
    }
    if (!explain || near > n - k) near = explain ? n - k : 0;
    size_t bytes = sizeof *res +
                   (k + near) * (sizeof(remem_hit) + sizeof *res->ex + sizeof(double)) +
                   str_bytes(x.p.name);
    for (size_t i = 0; i < k + near; i++)
        bytes += memory_bytes(&rk[i].ref->c->rows[rk[i].ref->row].m);
    res = calloc(1, bytes);
    if (!res) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto out;
    }
    res->pub.hits = (remem_hit *)(res + 1);
    res->ex = (struct explain_row *)(res->pub.hits + k + near);
    double *entity = (double *)(res->ex + k + near);
    res->next = (char *)(entity + k + near);
    if (x.p.w_entity > 0) res->pub.entity = entity;
    for (size_t i = 0; i < k + near; i++) {
        remem_hit *h = &res->pub.hits[i];
        copy_memory(res, &h->mem, &rk[i].ref->c->rows[rk[i].ref->row].m);
        h->score = rk[i].c.score;
        h->relevance = rk[i].c.relevance;
        h->similarity = rk[i].c.sim;
        h->lexical = rk[i].c.lexical;
        h->bm25 = rk[i].c.bm25;
        h->recency = rk[i].c.recency;
        h->importance = rk[i].c.importance;
        h->lanes = rk[i].ref->lanes;
        h->context = rk[i].c.context;
        entity[i] = rk[i].c.entity;
    }
    res->pub.n = k;
    if (explain && keep_explain(res, &x.p, rk, k, near)) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto out;
    }
    res->pub.profile = keep(res, x.p.name);
    res->pub.now = x.now;
    res->pub.candidates = n;
    res->pub.memory_off = n_off ? 2 : 0;
    if (!q->no_touch) touch(&x, rk, k);
    res->pub.took_ms = elapsed_ms(&t0);
    *out = &res->pub;
    res = NULL;
out:
    remem_result_free(res ? &res->pub : NULL);
    free(rk);
    unlock_caches(&x);
    for (size_t j = 0; j < x.n_caches; j++) {
        if (x.allow_owned[j]) free(x.allow[j]);
        cache_unpin(db, x.caches[j]);
    }
    scratch_free(x.allow, x.allow_local);
    scratch_free(x.allow_owned, x.owned_local);
    scratch_free(x.caches, x.caches_local);
    if (x.lex_kept) lex_scratch_release(db->lexs);
    pool_free(&x.pool);
    free(x.seeds);
    scratch_free(x.qv, x.qv_local);
    free(x.text_own);
    qterms_free(&x.lexq);
    qterms_free(&x.entq);
    free(x.ents);
    filter_free(x.f);
    filter_free(x.pf);
    json_decref(pol_hold);
    free(on_ns);
    return rc;
}

/* remem_recall with its span (remem.recall: namespaces, k, profile, hit
 * count, took) and the recall latency histogram, which is kept whether or
 * not spans are exported (the server's /metrics shows it). */
int remem_recall(remem *db, const remem_query *in, remem_result **out) {
    tm_span *s = tm_span_start("remem.recall", TM_KIND_INTERNAL);
    int rc = recall_one(db, in, 0, 0, out);
    if (!rc && *out)
        tm_observe("remem.recall.duration", "ms", "Time of remem_recall, query to ranked hits.",
                   (*out)->took_ms);
    if (!s) return rc;
    if (in) {
        tm_span_str(s, "remem.namespace", in->n_namespaces ? in->namespaces[0] : "default");
        if (in->n_namespaces > 1) tm_span_int(s, "remem.namespaces", (int64_t)in->n_namespaces);
        tm_span_int(s, "remem.k", in->k);
    }
    if (!rc && *out) {
        tm_span_str(s, "remem.profile", (*out)->profile);
        tm_span_int(s, "remem.hits", (int64_t)(*out)->n);
        tm_span_dbl(s, "remem.took_ms", (*out)->took_ms);
    }
    eng_tm_status(db, s, rc);
    tm_span_end(s);
    return rc;
}

/* Parse (query.c), recall and render in one call: what a face or a
 * binding that speaks JSON needs. It lives here, not in query.c, so that
 * the parser never calls up into recall. */
int remem_recall_json(remem *db, const char *json, size_t len, char **result_json) {
    if (result_json) *result_json = NULL;
    if (!db) return REMEM_EINVAL;
    if (!result_json) return eng_fail(db, REMEM_EINVAL, "no place for the result");
    char err[512];
    remem_query_json *p = NULL;
    int rc = remem_query_parse(json, len, &p, err, sizeof err);
    if (rc) return eng_fail(db, rc, "%s", err);
    remem_result *res = NULL;
    rc = remem_recall(db, remem_query_json_get(p), &res);
    if (rc == REMEM_OK && !(*result_json = remem_result_to_json(res)))
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    remem_result_free(res);
    remem_query_json_free(p);
    return rc;
}

/* The relevance-only recall that consolidate and ingest use to find a text's
 * near neighbours: one namespace, no touch, no namespace yet = no hits. */
int eng_similar(remem *db, const char *const *ns, const char *text, int k, double min_sim,
                const char *filter, remem_result **out) {
    remem_query q;
    remem_query_init(&q);
    q.text = text;
    q.namespaces = (const char **)ns;
    q.n_namespaces = 1;
    q.k = k;
    q.w_relevance = 1;
    q.w_lexical = q.w_recency = q.w_importance = q.w_context = 0;
    q.min_similarity = min_sim;
    q.filter = filter;
    q.no_touch = 1;
    *out = NULL;
    int rc = remem_recall(db, &q, out);
    if (rc == REMEM_ENOTFOUND) return eng_ok(db), REMEM_OK; /* no namespace yet */
    return rc;
}

/* ---- recall.explain ---- */

static const char *const part_names[6] = {"relevance", "lexical", "recency", "importance",
                                          "context",   "entity"};
static const char *const missed_names[] = {"", "rank", "min_similarity", "min_score"};

/* One hit as JSON with its "parts" (what each component put into the
 * score) and, for a near miss, why it was left out. NULL: out of memory. */
static json_t *explained_hit(const result_impl *r, size_t i) {
    char *text = remem_hit_to_json(&r->pub.hits[i]);
    json_t *h = text ? json_loads(text, 0, NULL) : NULL;
    remem_free(text);
    if (!h || !r->ex) return h;
    json_t *parts = json_object();
    for (int j = 0; j < 6; j++) json_object_set_new(parts, part_names[j], json_real(r->ex[i].part[j]));
    json_object_set_new(h, "parts", parts);
    if (r->ex[i].missed) json_object_set_new(h, "missed", json_string(missed_names[r->ex[i].missed]));
    return h;
}

/* The answer of recall.explain from an explained result. */
static json_t *explain_json(const result_impl *r) {
    char *text = remem_result_to_json(&r->pub);
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;
    remem_free(text);
    if (!o) return NULL;
    json_t *hits = json_array(), *near = json_array();
    for (size_t i = 0; i < r->pub.n + r->n_near; i++)
        json_array_append_new(i < r->pub.n ? hits : near, explained_hit(r, i));
    json_object_set_new(o, "hits", hits);
    json_object_set_new(o, "near_misses", near);
    json_t *prof = r->profile ? json_loads(r->profile, 0, NULL) : NULL;
    json_object_set_new(o, "settings", prof ? prof : json_null());
    json_object_set_new(o, "formula", r->formula ? json_string(r->formula) : json_null());
    return o;
}

int eng_recall_explain(remem *db, const remem_query *q, size_t near, json_t **out) {
    remem_result *res = NULL;
    *out = NULL;
    int rc = recall_one(db, q, 1, near, &res);
    if (rc) return rc;
    *out = explain_json((result_impl *)res);
    remem_result_free(res);
    return *out ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}
