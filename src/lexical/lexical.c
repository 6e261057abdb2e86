/*
 * lexical.c: the inverted index behind remem's lexical lane, and BM25
 * top-k over it.
 *
 * WHAT IT IS FOR. A recall asks "which memories share the most telling
 * words with this query?" next to "which are nearest in meaning?". SQLite
 * FTS5 answered the first by scoring every document that holds any query
 * word, about a microsecond each: fine for a few hundred matches, slow when
 * a namespace has 100,000 memories and the query holds a common word.
 * Here the engine keeps, beside the vectors of a namespace, a posting list
 * per term (the documents holding it, in id order, with the term's count in
 * each), every document's length and its distinct terms (the forward
 * lists, which make removal and update possible without the text), and
 * the collection's statistics: N, the total length, and df, which is just
 * a posting list's length. Postings are two plain arrays per term (uint32
 * ids, uint16 counts): 6 bytes a posting, read sequentially, no decoding;
 * with the forward lists and the dictionary about 13 bytes a posting, 220
 * a chat-sized document (bench/README.md). Delta codes would save perhaps
 * 3 of those 13 bytes and cost a decode in the inner loop and a re-encode
 * on every removal in the middle of a list. A namespace's load goes
 * through lex_add_many: a batch's postings are grouped by term first (a
 * counting sort), so each list's tail is written once per batch instead of
 * once per document, which is where building spends its cache misses.
 *
 * WHY DOCUMENT-AT-A-TIME MAXSCORE. Exhaustive scoring reads every posting
 * of every query term. But the top 10 can only contain documents that
 * score above the 10th best seen so far (the threshold). Each term has an
 * upper bound: the most it can add to any document's score (its idf times
 * the BM25 fraction at its largest count and shortest document). Sort the
 * query's terms by bound; the terms whose bounds, added together, stay
 * below the threshold are "non-essential": a document holding only them
 * cannot enter. So candidates are drawn only from the essential terms'
 * lists (usually the rare terms once the threshold has risen), walked
 * together in document order; for each candidate the non-essential lists
 * are only probed (a galloping search forward, never a scan), from the
 * largest bound down, and the probing stops as soon as the score so far
 * plus the bounds left cannot reach the threshold. Common words, whose idf
 * is small, become non-essential after a few dozen candidates, and their
 * long lists are then skipped over rather than read. Document-at-a-time
 * also needs no accumulator per document: a search never allocates.
 * A query of one common word has nothing to prune against, though: its
 * only term is essential. So a dense term (in at least 1 document of 16)
 * also keeps bounds per range of 128 document ids, and before scoring a
 * candidate the search adds up every term's bound over the candidate's
 * range; when that is below the threshold, the whole range is skipped.
 * Block-max WAND would do more of this, with pivots and per-block bounds
 * for every list; on chat turns, where most counts are 1, term bounds do
 * most of the work, and MaxScore is the simpler of the two to keep exact.
 *
 * AND WHEN NOT. Document at a time, every candidate costs a look at every
 * essential cursor, so a long query (a pasted passage: 64 terms, many of
 * middling df) pays that look tens of times per candidate while the
 * threshold rises too slowly to prune. Term at a time costs one add per
 * posting into an accumulator, with no per-candidate work besides the
 * final selection. lex_search_with scores queries of LEX_BY_TERM_MIN_TERMS
 * distinct terms or more that way, into the caller's lex_scratch (kept
 * between searches and left all zeroes, so a search neither allocates nor
 * clears N doubles); on LoCoMo-composed memories a 64-term query went from
 * 13.3 to 4 ms at 100k, and questions from 0.27 to 0.20 ms at 10k.
 *
 * THE TRICKY PARTS.
 *  - Bounds after changes. A term's bound rests on two numbers kept with
 *    its list: the largest count in it and the shortest document holding
 *    it, each with how many postings reach it. A removal that takes the
 *    last posting reaching one recomputes it from the list (rare: it needs
 *    the one holder of the extreme to leave). The bounds are so always
 *    exact, never stale and loose after removals, and never too small
 *    after additions. idf and avgdl change with every write, so the bound
 *    itself is computed per query from those two numbers. Block bounds
 *    are kept the same way per range of ids, recomputed from the range's
 *    postings when an extreme leaves; they are optional (a term that can
 *    not get the memory for them simply has none), so keeping them never
 *    makes a change fail.
 *  - Row moves. A removal moves the last document (the highest id, hence
 *    at the end of each of its lists) into the hole: each of its postings
 *    is re-inserted at the hole's place in its list (a memmove); lists stay
 *    sorted by id without a second numbering of documents. The moved
 *    posting joins the block bounds of its new range and leaves those of
 *    its old one.
 *  - Ties and rounding. Equal scores come lower id first. Documents are
 *    visited in increasing id, so a later document with a score equal to
 *    the current k-th loses the tie and can be skipped; but a bound is
 *    computed by other additions than the score it bounds, so a document is
 *    pruned only when its bound is below the threshold by more than a
 *    relative 1e-12 (far beyond rounding error, far below any real gap).
 *    A document's score is always summed in the query's own term order, so
 *    the pruned and the exhaustive search give the same bits.
 *  - Long queries are cut to their 64 rarest distinct terms, found in one
 *    pass with no allocation; a megabyte of repeated words costs one
 *    dictionary look-up per word.
 */
#include "lexical/lexical.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* Block bounds: for terms held by at least 1 in 16 documents (and
 * BLOCK_MIN_DF), the largest count and shortest document in each range of
 * 128 document ids. Ranges of ids, not of list positions: an insertion in
 * the middle of a list then changes one block, not every block after it. */
#define BLOCK_SHIFT  7
#define BLOCK_MIN_DF 256

typedef struct block {
    uint32_t max_tf; /* 0: no posting in the range */
    uint32_t min_dl;
} block;

/* One term: its spelling (in the arena) and its posting list, in one
 * 64-byte cache line (the array of them is aligned so): a look-up and the
 * posting that follows it then miss the cache once, not twice. */
typedef struct plist {
    uint32_t *docs;  /* ascending document ids */
    uint16_t *tfs;   /* counts, parallel to docs */
    block *blocks;   /* NULL, or bounds per 128 ids (n_blocks of them) */
    uint32_t n, cap; /* postings (df) and room */
    uint32_t max_tf; /* largest count in the list, and how many reach it */
    uint32_t n_max_tf;
    uint32_t min_dl; /* shortest document in the list, and how many have it */
    uint32_t n_min_dl;
    uint32_t n_blocks;
    uint32_t len; /* of the spelling */
    uint32_t str; /* offset of the spelling in the arena */
} plist;

_Static_assert(sizeof(plist) <= 64, "a term fits one cache line");

struct lex_index {
    /* dictionary: open addressing; a slot holds the term's hash (high 32
     * bits) and its id + 1 (low 32; 0 = empty), so a probe reads the
     * term only when the hashes agree */
    uint64_t *slots;
    size_t slot_cap;
    plist *terms;
    size_t n_terms, terms_cap;
    char *arena;
    size_t arena_len, arena_cap;
    /* documents */
    uint32_t *dl;   /* length of each document */
    uint32_t **fwd; /* each document's distinct term ids: [count, ids...] */
    size_t n_docs, docs_cap;
    uint64_t total_len;
    size_t n_postings;
    size_t fwd_bytes; /* forward lists, as the heap holds them (util_heap_bytes) */
    size_t n_docs_loaded; /* lex_load: documents whose forward list is set */
    /* lex_load with borrow: posting lists and forward lists inside
     * [borrow_lo, borrow_hi) are the caller's buffer, never freed or
     * reallocated (a list that grows moves to memory of its own). */
    uintptr_t borrow_lo, borrow_hi;
    /* Or the index's own slab (lex_add_many into an empty index: a
     * namespace's load): every posting list of that batch in one block,
     * borrowed as above, so a small namespace costs one allocation for
     * its lists rather than two per term. */
    void *slab;
    size_t slab_bytes;
};

static int borrowed(const lex_index *ix, const void *p) {
    return (uintptr_t)p >= ix->borrow_lo && (uintptr_t)p < ix->borrow_hi;
}

static void lex_release(const lex_index *ix, void *p) {
    if (!borrowed(ix, p)) free(p);
}

static double bound_scale = 1.0;

void lex_set_bound_scale(double scale) { bound_scale = scale; }

/* ---- dictionary ---- */

static uint32_t term_hash(const char *s, size_t len) { return (uint32_t)util_hash64(s, len); }

static long dict_find(const lex_index *ix, const char *s, size_t len, uint32_t h) {
    if (!ix->slot_cap) return -1;
    size_t mask = ix->slot_cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        uint64_t v = ix->slots[i];
        if (!v) return -1;
        if ((uint32_t)(v >> 32) != h) continue;
        const plist *t = &ix->terms[(uint32_t)v - 1];
        if (t->len == len && memcmp(ix->arena + t->str, s, len) == 0)
            return (long)((uint32_t)v - 1);
    }
}

/* The slots rehashed into a table of cap (a power of two). */
static int dict_rehash(lex_index *ix, size_t cap) {
    uint64_t *slots = calloc(cap, sizeof *slots);
    if (!slots) return LEX_ENOMEM;
    for (size_t j = 0; j < ix->slot_cap; j++) {
        uint64_t v = ix->slots[j];
        if (!v) continue;
        size_t i = (uint32_t)(v >> 32) & (cap - 1);
        while (slots[i]) i = (i + 1) & (cap - 1);
        slots[i] = v;
    }
    free(ix->slots);
    ix->slots = slots;
    ix->slot_cap = cap;
    return LEX_OK;
}

static int dict_grow(lex_index *ix) {
    /* Small first (a namespace of one memory has a dozen terms), then
     * doubling: an index costs what it holds. */
    return dict_rehash(ix, ix->slot_cap ? ix->slot_cap * 2 : 16);
}

/* Room for up to n terms of bytes spellings in an empty dictionary, at
 * once instead of by doubling (a namespace's load knows its term count:
 * an upper bound of its distinct terms; lex_trim gives back the rest).
 * Room it cannot get is left to the doubling. */
static void dict_reserve(lex_index *ix, size_t n, size_t bytes) {
    if (ix->n_terms || ix->slot_cap || n > UINT32_MAX / 4) return;
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    uint64_t *slots = calloc(cap, sizeof *slots);
    plist *terms = aligned_alloc(64, (n ? n : 1) * sizeof *terms);
    char *arena = malloc(bytes ? bytes : 1);
    if (!slots || !terms || !arena) {
        free(slots);
        free(terms);
        free(arena);
        return;
    }
    free(ix->slots);
    free(ix->terms);
    free(ix->arena);
    ix->slots = slots;
    ix->slot_cap = cap;
    ix->terms = terms;
    ix->terms_cap = n;
    ix->arena = arena;
    ix->arena_cap = bytes ? bytes : 1;
}

/* The id of term s, added (with an empty list) when new; -1 when out of
 * memory. An unused term costs its spelling and one plist. */
static long dict_intern(lex_index *ix, const char *s, size_t len) {
    uint32_t h = term_hash(s, len);
    long t = dict_find(ix, s, len, h);
    if (t >= 0) return t;
    if (ix->n_terms >= UINT32_MAX - 1) return -1;
    if ((ix->n_terms + 1) * 2 > ix->slot_cap && dict_grow(ix)) return -1;
    if (ix->n_terms == ix->terms_cap) {
        size_t cap = ix->terms_cap ? ix->terms_cap * 2 : 8;
        plist *terms = aligned_alloc(64, cap * sizeof *terms);
        if (!terms) return -1;
        if (ix->n_terms) memcpy(terms, ix->terms, ix->n_terms * sizeof *terms);
        free(ix->terms);
        ix->terms = terms;
        ix->terms_cap = cap;
    }
    if (ix->arena_len + len > UINT32_MAX) return -1; /* 4 GB of distinct spellings */
    if (ix->arena_len + len > ix->arena_cap) {
        size_t cap = ix->arena_cap ? ix->arena_cap : 128;
        while (cap < ix->arena_len + len) cap *= 2;
        char *arena = realloc(ix->arena, cap);
        if (!arena) return -1;
        ix->arena = arena;
        ix->arena_cap = cap;
    }
    memcpy(ix->arena + ix->arena_len, s, len);
    plist *p = &ix->terms[ix->n_terms];
    memset(p, 0, sizeof *p);
    p->min_dl = UINT32_MAX;
    p->len = (uint32_t)len;
    p->str = (uint32_t)ix->arena_len;
    ix->arena_len += len;
    size_t i = h & (ix->slot_cap - 1);
    while (ix->slots[i]) i = (i + 1) & (ix->slot_cap - 1);
    ix->slots[i] = (uint64_t)h << 32 | ((uint32_t)ix->n_terms + 1);
    return (long)ix->n_terms++;
}

/* ---- posting lists ---- */

static int plist_reserve(const lex_index *ix, plist *p, size_t need) {
    if (need <= p->cap) return LEX_OK;
    size_t cap = p->cap ? p->cap : 4;
    while (cap < need) cap = cap < 1024 ? cap * 2 : cap + cap / 2;
    if (p->docs && borrowed(ix, p->docs)) { /* out of the caller's buffer */
        uint32_t *docs = malloc(cap * sizeof *docs);
        uint16_t *tfs = malloc(cap * sizeof *tfs);
        if (!docs || !tfs) {
            free(docs);
            free(tfs);
            return LEX_ENOMEM;
        }
        memcpy(docs, p->docs, p->n * sizeof *docs);
        memcpy(tfs, p->tfs, p->n * sizeof *tfs);
        p->docs = docs;
        p->tfs = tfs;
        p->cap = (uint32_t)cap;
        return LEX_OK;
    }
    uint32_t *docs = realloc(p->docs, cap * sizeof *docs);
    if (!docs) return LEX_ENOMEM;
    p->docs = docs;
    uint16_t *tfs = realloc(p->tfs, cap * sizeof *tfs);
    if (!tfs) return LEX_ENOMEM;
    p->tfs = tfs;
    p->cap = (uint32_t)cap;
    return LEX_OK;
}

/* First position in p whose id is >= doc (among the first n). */
static uint32_t lower_bound(const uint32_t *docs, uint32_t n, uint32_t doc) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (docs[mid] < doc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Recompute p's bounds from its postings (after the last holder of an
 * extreme left). */
static void plist_rebound(const lex_index *ix, plist *p) {
    p->max_tf = 0;
    p->n_max_tf = 0;
    p->min_dl = UINT32_MAX;
    p->n_min_dl = 0;
    for (uint32_t j = 0; j < p->n; j++) {
        uint32_t tf = p->tfs[j], dl = ix->dl[p->docs[j]];
        if (tf > p->max_tf) p->max_tf = tf, p->n_max_tf = 0;
        if (tf == p->max_tf) p->n_max_tf++;
        if (dl < p->min_dl) p->min_dl = dl, p->n_min_dl = 0;
        if (dl == p->min_dl) p->n_min_dl++;
    }
}

static void bounds_add(plist *p, uint32_t tf, uint32_t dl) {
    if (tf > p->max_tf) p->max_tf = tf, p->n_max_tf = 0;
    if (tf == p->max_tf) p->n_max_tf++;
    if (dl < p->min_dl) p->min_dl = dl, p->n_min_dl = 0;
    if (dl == p->min_dl) p->n_min_dl++;
}

/* ---- block bounds (optional: dropped rather than failing) ---- */

static void blocks_drop(plist *p) {
    free(p->blocks);
    p->blocks = NULL;
    p->n_blocks = 0;
}

static void block_absorb(block *b, uint32_t tf, uint32_t dl) {
    if (tf > b->max_tf) b->max_tf = tf;
    if (dl < b->min_dl) b->min_dl = dl;
}

/* Blocks for ids below docs (and some room); dropped when out of memory. */
static void blocks_cover(plist *p, size_t docs) {
    size_t need = (docs + (1u << BLOCK_SHIFT) - 1) >> BLOCK_SHIFT;
    if (!p->blocks || need <= p->n_blocks) return;
    size_t cap = need + need / 2 + 4;
    block *b = realloc(p->blocks, cap * sizeof *b);
    if (!b) {
        blocks_drop(p);
        return;
    }
    for (size_t i = p->n_blocks; i < cap; i++) b[i] = (block){0, UINT32_MAX};
    p->blocks = b;
    p->n_blocks = (uint32_t)cap;
}

static void blocks_build(const lex_index *ix, plist *p) {
    p->blocks = calloc(1, sizeof *p->blocks);
    if (!p->blocks) return;
    p->n_blocks = 0;
    blocks_cover(p, ix->n_docs);
    for (uint32_t j = 0; p->blocks && j < p->n; j++)
        block_absorb(&p->blocks[p->docs[j] >> BLOCK_SHIFT], p->tfs[j], ix->dl[p->docs[j]]);
}

/* Block b from the postings in its id range (after its extreme left). */
static void block_recompute(const lex_index *ix, plist *p, uint32_t b) {
    uint64_t from = (uint64_t)b << BLOCK_SHIFT, to = from + (1u << BLOCK_SHIFT);
    uint32_t lo = lower_bound(p->docs, p->n, (uint32_t)from);
    block x = {0, UINT32_MAX};
    for (uint32_t j = lo; j < p->n && p->docs[j] < to; j++)
        block_absorb(&x, p->tfs[j], ix->dl[p->docs[j]]);
    p->blocks[b] = x;
}

/* Posting (doc, tf, dl) left block doc's range. */
static void block_leave(const lex_index *ix, plist *p, uint32_t doc, uint32_t tf, uint32_t dl) {
    if (!p->blocks) return;
    block *b = &p->blocks[doc >> BLOCK_SHIFT];
    if (tf >= b->max_tf || dl <= b->min_dl) block_recompute(ix, p, doc >> BLOCK_SHIFT);
}

/* Posting (doc, tf, dl) came in: keep, start or drop the blocks. */
static void block_enter(const lex_index *ix, plist *p, uint32_t doc, uint32_t tf, uint32_t dl) {
    if (p->blocks && (size_t)p->n * 64 < ix->n_docs) blocks_drop(p);
    if (p->blocks) {
        blocks_cover(p, (size_t)doc + 1);
        if (p->blocks) block_absorb(&p->blocks[doc >> BLOCK_SHIFT], tf, dl);
    } else if (p->n >= BLOCK_MIN_DF && (size_t)p->n * 16 >= ix->n_docs) {
        blocks_build(ix, p);
    }
}

/* Insert (doc, tf) in order; room must have been reserved. */
static void plist_insert(const lex_index *ix, plist *p, uint32_t doc, uint32_t tf, uint32_t dl) {
    uint32_t at = (p->n && p->docs[p->n - 1] < doc) ? p->n : lower_bound(p->docs, p->n, doc);
    memmove(p->docs + at + 1, p->docs + at, (p->n - at) * sizeof *p->docs);
    memmove(p->tfs + at + 1, p->tfs + at, (p->n - at) * sizeof *p->tfs);
    p->docs[at] = doc;
    p->tfs[at] = (uint16_t)tf;
    p->n++;
    bounds_add(p, tf, dl);
    block_enter(ix, p, doc, tf, dl);
}

/* Remove doc's posting (doc has length dl and is in the list). */
static void plist_delete(lex_index *ix, plist *p, uint32_t doc, uint32_t dl) {
    uint32_t at = lower_bound(p->docs, p->n, doc);
    uint32_t tf = p->tfs[at];
    memmove(p->docs + at, p->docs + at + 1, (p->n - at - 1) * sizeof *p->docs);
    memmove(p->tfs + at, p->tfs + at + 1, (p->n - at - 1) * sizeof *p->tfs);
    p->n--;
    block_leave(ix, p, doc, tf, dl);
    if (p->n == 0) {
        p->max_tf = p->n_max_tf = p->n_min_dl = 0;
        p->min_dl = UINT32_MAX;
        return;
    }
    int stale = (tf == p->max_tf && --p->n_max_tf == 0);
    stale |= (dl == p->min_dl && --p->n_min_dl == 0);
    if (stale) plist_rebound(ix, p);
}

/* A term that left the collection gives its list's memory back (not
 * inside plist_delete: lex_set empties lists it has reserved room in). */
static void plist_release_if_empty(const lex_index *ix, plist *p) {
    if (p->n || !p->cap) return;
    blocks_drop(p);
    lex_release(ix, p->docs);
    lex_release(ix, p->tfs);
    p->docs = NULL;
    p->tfs = NULL;
    p->cap = 0;
}

/* ---- documents ---- */

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Chat-sized documents: an insertion sort beats qsort's calls. */
static void sort_ids(uint32_t *v, size_t n) {
    if (n > 48) {
        qsort(v, n, sizeof *v, cmp_u32);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        uint32_t x = v[i];
        size_t j = i;
        while (j > 0 && v[j - 1] > x) v[j] = v[j - 1], j--;
        v[j] = x;
    }
}

enum { LOCAL_TERMS = 256 }; /* documents up to this need no scratch malloc */

/* The distinct term ids of terms[0..n) (interned) as a forward list
 * [count, ids ascending...] in *fwd, and their counts in *tf (parallel to
 * the ids; malloc'd). Room is reserved in each term's list for one more
 * posting, so the commit that follows cannot fail. */
static int analyse_doc(lex_index *ix, const char *const *terms, size_t n, uint32_t **fwd_out,
                       uint32_t *tf_local, uint32_t **tf_out) {
    uint32_t local[LOCAL_TERMS];
    uint32_t *ids = n <= LOCAL_TERMS ? local : malloc(n * sizeof *ids);
    if (!ids) return LEX_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        long t = dict_intern(ix, terms[i], strlen(terms[i]));
        if (t < 0) {
            if (ids != local) free(ids);
            return LEX_ENOMEM;
        }
        ids[i] = (uint32_t)t;
    }
    sort_ids(ids, n);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || ids[i] != ids[i - 1]) u++;
    uint32_t *fwd = malloc((u + 1) * sizeof *fwd);
    uint32_t *tf = u <= LOCAL_TERMS ? tf_local : malloc(u * sizeof *tf);
    if (!fwd || !tf) {
        if (ids != local) free(ids);
        free(fwd);
        if (tf != tf_local) free(tf);
        return LEX_ENOMEM;
    }
    fwd[0] = (uint32_t)u;
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || ids[i] != ids[i - 1]) {
            fwd[1 + j] = ids[i];
            tf[j++] = 0;
        }
        if (tf[j - 1] < LEX_MAX_TF) tf[j - 1]++;
    }
    if (ids != local) free(ids);
    for (size_t i = 0; i < u; i++) {
        plist *p = &ix->terms[fwd[1 + i]];
        if (plist_reserve(ix, p, (size_t)p->n + 1)) {
            free(fwd);
            if (tf != tf_local) free(tf);
            return LEX_ENOMEM;
        }
    }
    *fwd_out = fwd;
    *tf_out = tf;
    return LEX_OK;
}

static int check_terms(const char *const *terms, size_t n) {
    if (n > UINT32_MAX || (n && !terms)) return LEX_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!terms[i]) return LEX_EINVAL;
    return LEX_OK;
}

/* Postings of doc (its forward list fwd, counts tf, length dl) go in. */
static void doc_link(lex_index *ix, uint32_t doc, const uint32_t *fwd, const uint32_t *tf,
                     uint32_t dl) {
    for (uint32_t i = 0; i < fwd[0]; i++) plist_insert(ix, &ix->terms[fwd[1 + i]], doc, tf[i], dl);
    ix->n_postings += fwd[0];
    ix->total_len += dl;
    ix->fwd_bytes += util_heap_bytes((fwd[0] + 1) * sizeof *fwd);
}

/* And out; the caller frees the forward list, returned, and then releases
 * the lists left empty (release_empty). */
static uint32_t *doc_unlink(lex_index *ix, uint32_t doc) {
    uint32_t *fwd = ix->fwd[doc];
    for (uint32_t i = 0; i < fwd[0]; i++)
        plist_delete(ix, &ix->terms[fwd[1 + i]], doc, ix->dl[doc]);
    ix->n_postings -= fwd[0];
    ix->total_len -= ix->dl[doc];
    ix->fwd_bytes -= util_heap_bytes((fwd[0] + 1) * sizeof *fwd);
    ix->fwd[doc] = NULL;
    return fwd;
}

static void release_empty(lex_index *ix, uint32_t *old_fwd) {
    for (uint32_t i = 0; i < old_fwd[0]; i++)
        plist_release_if_empty(ix, &ix->terms[old_fwd[1 + i]]);
    lex_release(ix, old_fwd);
}

lex_index *lex_new(void) { return calloc(1, sizeof(lex_index)); }

void lex_free(lex_index *ix) {
    if (!ix) return;
    for (size_t t = 0; t < ix->n_terms; t++) {
        lex_release(ix, ix->terms[t].docs);
        lex_release(ix, ix->terms[t].tfs);
        free(ix->terms[t].blocks);
    }
    for (size_t d = 0; d < ix->n_docs; d++) lex_release(ix, ix->fwd[d]);
    free(ix->slab);
    free(ix->slots);
    free(ix->terms);
    free(ix->arena);
    free(ix->dl);
    free(ix->fwd);
    free(ix);
}

size_t lex_count(const lex_index *ix) { return ix->n_docs; }
uint64_t lex_total_length(const lex_index *ix) { return ix->total_len; }
size_t lex_postings(const lex_index *ix) { return ix->n_postings; }

uint32_t lex_doc_length(const lex_index *ix, uint32_t doc) {
    return doc < ix->n_docs ? ix->dl[doc] : 0;
}

uint32_t lex_df(const lex_index *ix, const char *term) {
    size_t len = strlen(term);
    long t = dict_find(ix, term, len, term_hash(term, len));
    return t < 0 ? 0 : ix->terms[t].n;
}

size_t lex_memory_bytes(const lex_index *ix) {
    size_t b = util_heap_bytes(sizeof *ix) + util_heap_bytes(ix->slot_cap * sizeof *ix->slots) +
               util_heap_bytes(ix->terms_cap * sizeof *ix->terms) + util_heap_bytes(ix->arena_cap) +
               util_heap_bytes(ix->docs_cap * sizeof *ix->dl) +
               util_heap_bytes(ix->docs_cap * sizeof *ix->fwd);
    b += ix->fwd_bytes; /* the forward lists, counted as they come and go */
    b += util_heap_bytes(ix->slab_bytes);
    for (size_t t = 0; t < ix->n_terms; t++) {
        const plist *p = &ix->terms[t];
        if (!p->docs || borrowed(ix, p->docs)) continue;
        b += util_heap_bytes((size_t)p->cap * sizeof(uint32_t)) +
             util_heap_bytes((size_t)p->cap * sizeof(uint16_t)) +
             util_heap_bytes((size_t)p->n_blocks * sizeof(block));
    }
    return b;
}

int lex_reserve(lex_index *ix, size_t docs) {
    if (docs <= ix->docs_cap) return LEX_OK;
    if (docs > UINT32_MAX) return LEX_ENOMEM;
    uint32_t *dl = realloc(ix->dl, docs * sizeof *dl);
    if (!dl) return LEX_ENOMEM;
    ix->dl = dl;
    uint32_t **fwd = realloc(ix->fwd, docs * sizeof *fwd);
    if (!fwd) return LEX_ENOMEM;
    ix->fwd = fwd;
    ix->docs_cap = docs;
    return LEX_OK;
}

/* The term array and the spellings down to what they hold, when that
 * frees a block's worth (a small namespace's dictionary grew by doubling:
 * up to half of it empty, 64 bytes a term). A failed shrink keeps the
 * larger block. */
static void dict_trim(lex_index *ix) {
    /* Slots for the terms there are (a load reserved for its term count),
     * at the load dict_intern keeps: at most half full. */
    size_t cap = ix->slot_cap;
    while (cap > 16 && cap / 2 >= 2 * (ix->n_terms + 1)) cap /= 2;
    if (cap != ix->slot_cap) dict_rehash(ix, cap); /* failing, keeps the larger */
    if (ix->n_terms && (ix->terms_cap - ix->n_terms) * sizeof *ix->terms >= 1024) {
        plist *terms = aligned_alloc(64, ix->n_terms * sizeof *terms);
        if (terms) {
            memcpy(terms, ix->terms, ix->n_terms * sizeof *terms);
            free(ix->terms);
            ix->terms = terms;
            ix->terms_cap = ix->n_terms;
        }
    }
    if (ix->arena_len && ix->arena_cap - ix->arena_len >= 64) { /* shrinks in place */
        char *arena = realloc(ix->arena, ix->arena_len);
        if (arena) {
            ix->arena = arena;
            ix->arena_cap = ix->arena_len;
        }
    }
}

void lex_trim(lex_index *ix) {
    dict_trim(ix);
    for (size_t t = 0; t < ix->n_terms; t++) {
        plist *p = &ix->terms[t];
        if (p->cap == p->n || p->n == 0 || borrowed(ix, p->docs)) continue;
        /* A shrink the allocator would give the same blocks for (most
         * lists of a small namespace: a few postings in the smallest
         * chunk) only costs two calls. */
        if (util_heap_bytes(p->cap * sizeof *p->docs) == util_heap_bytes(p->n * sizeof *p->docs) &&
            util_heap_bytes(p->cap * sizeof *p->tfs) == util_heap_bytes(p->n * sizeof *p->tfs))
            continue;
        /* A failed shrink keeps the larger block, which is still valid. */
        uint32_t *docs = realloc(p->docs, p->n * sizeof *docs);
        if (!docs) continue;
        p->docs = docs;
        uint16_t *tfs = realloc(p->tfs, p->n * sizeof *tfs);
        if (!tfs) continue;
        p->tfs = tfs;
        p->cap = p->n;
    }
}

int lex_add(lex_index *ix, uint32_t doc, const char *const *terms, size_t n) {
    if (doc != ix->n_docs || check_terms(terms, n)) return LEX_EINVAL;
    if (ix->n_docs == ix->docs_cap && lex_reserve(ix, ix->docs_cap ? ix->docs_cap * 2 : 4))
        return LEX_ENOMEM;
    uint32_t *fwd, *tf, tf_local[LOCAL_TERMS];
    int rc = analyse_doc(ix, terms, n, &fwd, tf_local, &tf);
    if (rc) return rc;
    ix->dl[doc] = (uint32_t)n;
    ix->fwd[doc] = fwd;
    ix->n_docs++;
    doc_link(ix, doc, fwd, tf, (uint32_t)n);
    if (tf != tf_local) free(tf);
    return LEX_OK;
}

/* lex_add_many's scratch, freed in one place. */
typedef struct bulk {
    uint32_t *ids;   /* every term's id, then per document its distinct ids */
    uint32_t *tfs;   /* per document, the counts of its distinct ids */
    uint32_t **fwd;  /* per document, its forward list */
    uint32_t *count; /* per term, the new postings */
    uint32_t *pairs; /* (doc, tf) per new posting, grouped by term */
} bulk;

static void bulk_free(bulk *b, size_t docs, int keep_fwd) {
    if (b->fwd && !keep_fwd)
        for (size_t i = 0; i < docs; i++) free(b->fwd[i]);
    free(b->ids);
    free(b->tfs);
    free(b->fwd);
    free(b->count);
    free(b->pairs);
}

/* The documents' forward lists and counts (b->fwd, b->tfs at each
 * document's offset); room reserved in every list. */
/* The first batch into an empty index with nothing borrowed: room for
 * every list's count[t] postings in one slab (ix->slab), borrowed. 1 when
 * done; 0 to reserve list by list (not that case, or out of memory). */
static int slab_fill(lex_index *ix, const uint32_t *count) {
    if (ix->n_docs || ix->borrow_hi || ix->slab) return 0;
    size_t total = 0;
    for (size_t t = 0; t < ix->n_terms; t++) {
        if (count[t] && (ix->terms[t].docs || ix->terms[t].n)) return 0;
        total += count[t];
    }
    if (!total) return 0;
    size_t bytes = total * (sizeof(uint32_t) + sizeof(uint16_t));
    char *slab = malloc(bytes);
    if (!slab) return 0;
    uint32_t *docs = (uint32_t *)slab;
    uint16_t *tfs = (uint16_t *)(slab + total * sizeof(uint32_t));
    for (size_t t = 0, at = 0; t < ix->n_terms; t++) {
        if (!count[t]) continue;
        plist *p = &ix->terms[t];
        p->docs = docs + at;
        p->tfs = tfs + at;
        p->cap = count[t];
        at += count[t];
    }
    ix->slab = slab;
    ix->slab_bytes = bytes;
    ix->borrow_lo = (uintptr_t)slab;
    ix->borrow_hi = (uintptr_t)slab + bytes;
    return 1;
}

static int bulk_analyse(lex_index *ix, bulk *b, const char *const *terms, const uint32_t *lens,
                        size_t count, size_t total) {
    for (size_t i = 0; i < total; i++) {
        long t = dict_intern(ix, terms[i], strlen(terms[i]));
        if (t < 0) return LEX_ENOMEM;
        b->ids[i] = (uint32_t)t;
    }
    if (!(b->count = calloc(ix->n_terms ? ix->n_terms : 1, sizeof *b->count))) return LEX_ENOMEM;
    for (size_t d = 0, at = 0; d < count; at += lens[d], d++) {
        uint32_t *ids = b->ids + at, *tf = b->tfs + at;
        sort_ids(ids, lens[d]);
        size_t u = 0;
        for (size_t i = 0; i < lens[d]; i++) {
            if (i == 0 || ids[i] != ids[i - 1]) {
                ids[u] = ids[i]; /* u <= i: in place */
                tf[u++] = 0;
            }
            if (tf[u - 1] < LEX_MAX_TF) tf[u - 1]++;
        }
        if (!(b->fwd[d] = malloc((u + 1) * sizeof **b->fwd))) return LEX_ENOMEM;
        b->fwd[d][0] = (uint32_t)u;
        memcpy(b->fwd[d] + 1, ids, u * sizeof *ids);
        for (size_t i = 0; i < u; i++) b->count[ids[i]]++;
    }
    if (slab_fill(ix, b->count)) return LEX_OK;
    for (size_t t = 0; t < ix->n_terms; t++)
        if (b->count[t] && plist_reserve(ix, &ix->terms[t], (size_t)ix->terms[t].n + b->count[t]))
            return LEX_ENOMEM;
    return LEX_OK;
}

int lex_add_many(lex_index *ix, uint32_t first, const char *const *terms, const uint32_t *lens,
                 size_t count) {
    if (first != ix->n_docs || count > UINT32_MAX - (size_t)first || (count && !lens))
        return LEX_EINVAL;
    size_t total = 0;
    for (size_t d = 0; d < count; d++) total += lens[d];
    if (check_terms(terms, total)) return LEX_EINVAL;
    if (!count) return LEX_OK;
    /* A load: the dictionary sized once, its spellings at 8 bytes a term
     * (stems are shorter; the arena still grows if they are not). */
    if (!ix->n_terms) dict_reserve(ix, total, total * 8);
    size_t need = ix->n_docs + count;
    if (need > ix->docs_cap && lex_reserve(ix, need > ix->docs_cap * 2 ? need : ix->docs_cap * 2))
        return LEX_ENOMEM;
    bulk b = {0};
    b.ids = malloc((total ? total : 1) * sizeof *b.ids);
    b.tfs = malloc((total ? total : 1) * sizeof *b.tfs);
    b.fwd = calloc(count, sizeof *b.fwd);
    int rc =
        (!b.ids || !b.tfs || !b.fwd) ? LEX_ENOMEM : bulk_analyse(ix, &b, terms, lens, count, total);
    /* Each new posting's (doc, tf) in its term's run (a counting sort). */
    size_t distinct = 0;
    for (size_t d = 0; !rc && d < count; d++) distinct += b.fwd[d][0];
    if (!rc && !(b.pairs = malloc((distinct ? distinct : 1) * 2 * sizeof *b.pairs)))
        rc = LEX_ENOMEM;
    if (rc) {
        bulk_free(&b, count, 0);
        return rc;
    }
    size_t run = 0; /* count[t] becomes the start of t's run */
    for (size_t t = 0; t < ix->n_terms; t++) {
        uint32_t c = b.count[t];
        b.count[t] = (uint32_t)run;
        run += c;
    }
    for (size_t d = 0, at = 0; d < count; at += lens[d], d++) {
        uint32_t doc = first + (uint32_t)d, *fwd = b.fwd[d];
        ix->dl[doc] = lens[d];
        ix->fwd[doc] = fwd;
        ix->total_len += lens[d];
        ix->n_postings += fwd[0];
        ix->fwd_bytes += util_heap_bytes((fwd[0] + 1) * sizeof *fwd);
        for (uint32_t i = 0; i < fwd[0]; i++) {
            uint32_t *pair = b.pairs + 2 * (size_t)b.count[fwd[1 + i]]++;
            pair[0] = doc;
            pair[1] = b.tfs[at + i];
        }
    }
    ix->n_docs += count;
    /* Term by term: each list's tail is written in one go. The new ids are
     * above every old one, so each run goes at the end, in order. */
    run = 0;
    for (size_t t = 0; t < ix->n_terms; t++) {
        for (; run < b.count[t]; run++) {
            plist *p = &ix->terms[t];
            uint32_t doc = b.pairs[2 * run], tf = b.pairs[2 * run + 1];
            p->docs[p->n] = doc;
            p->tfs[p->n++] = (uint16_t)tf;
            bounds_add(p, tf, ix->dl[doc]);
            block_enter(ix, p, doc, tf, ix->dl[doc]);
        }
    }
    bulk_free(&b, count, 1);
    return LEX_OK;
}

int lex_set(lex_index *ix, uint32_t doc, const char *const *terms, size_t n) {
    if (doc >= ix->n_docs || check_terms(terms, n)) return LEX_EINVAL;
    uint32_t *fwd, *tf, tf_local[LOCAL_TERMS];
    int rc = analyse_doc(ix, terms, n, &fwd, tf_local, &tf);
    if (rc) return rc;
    uint32_t *old = doc_unlink(ix, doc);
    ix->dl[doc] = (uint32_t)n;
    ix->fwd[doc] = fwd;
    doc_link(ix, doc, fwd, tf, (uint32_t)n);
    if (tf != tf_local) free(tf);
    release_empty(ix, old);
    return LEX_OK;
}

int lex_swap_remove(lex_index *ix, uint32_t doc) {
    if (doc >= ix->n_docs) return LEX_EINVAL;
    uint32_t last = (uint32_t)ix->n_docs - 1;
    release_empty(ix, doc_unlink(ix, doc));
    if (doc != last) {
        /* last is the highest id, so it ends each of its lists: take it
         * from there and put it back at doc's place, same count. */
        uint32_t *fwd = ix->fwd[last];
        for (uint32_t i = 0; i < fwd[0]; i++) {
            plist *p = &ix->terms[fwd[1 + i]];
            uint16_t tf = p->tfs[p->n - 1];
            uint32_t at = lower_bound(p->docs, p->n - 1, doc);
            memmove(p->docs + at + 1, p->docs + at, (p->n - 1 - at) * sizeof *p->docs);
            memmove(p->tfs + at + 1, p->tfs + at, (p->n - 1 - at) * sizeof *p->tfs);
            p->docs[at] = doc;
            p->tfs[at] = tf;
            if (p->blocks) {
                block_absorb(&p->blocks[doc >> BLOCK_SHIFT], tf, ix->dl[last]);
                block_leave(ix, p, last, tf, ix->dl[last]);
            }
        }
        ix->fwd[doc] = fwd;
        ix->dl[doc] = ix->dl[last];
        ix->fwd[last] = NULL;
    }
    ix->n_docs--;
    return LEX_OK;
}

/* ---- saving and loading (lex_save, lex_load) ----
 * The layout, every number native-endian, each part starting on 8 bytes:
 *   lex_file_head  counts: terms, documents, postings, spelling bytes
 *   arena          the spellings, back to back
 *   lex_file_term  per term: its list's length, bounds, spelling, and
 *                  whether it had block bounds (rebuilt, not saved)
 *   dl             per document: its length (uint32)
 *   fwd            per document: [count, term ids ascending] (uint32)
 *   docs           every term's posting ids in turn (uint32)
 *   tfs            and counts (uint16)
 * Each array lands in its final buffer with one memcpy per list; only the
 * hash table of spellings is rebuilt (a hash per term). */

typedef struct lex_file_head {
    uint64_t n_terms, n_docs, n_postings, arena_len;
} lex_file_head;

typedef struct lex_file_term {
    uint32_t n, max_tf, n_max_tf, min_dl, n_min_dl, len, str, has_blocks;
} lex_file_term;

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Zeros after a part of n bytes, up to the next multiple of 8. */
static int save_pad(lex_write_fn write, void *ctx, size_t n) {
    static const char zeros[8];
    return pad8(n) != n ? write(ctx, zeros, pad8(n) - n) : 0;
}

static int save_part(lex_write_fn write, void *ctx, const void *p, size_t n) {
    int rc = n ? write(ctx, p, n) : 0;
    return rc ? rc : save_pad(write, ctx, n);
}

int lex_save(const lex_index *ix, lex_write_fn write, void *ctx) {
    lex_file_head h = {ix->n_terms, ix->n_docs, ix->n_postings, ix->arena_len};
    int rc = save_part(write, ctx, &h, sizeof h);
    if (!rc) rc = save_part(write, ctx, ix->arena, ix->arena_len);
    for (size_t t = 0; !rc && t < ix->n_terms; t++) {
        const plist *p = &ix->terms[t];
        lex_file_term ft = {p->n,        p->max_tf, p->n_max_tf, p->min_dl,
                            p->n_min_dl, p->len,    p->str,      p->blocks != NULL};
        rc = write(ctx, &ft, sizeof ft);
    }
    if (!rc) rc = save_part(write, ctx, ix->dl, ix->n_docs * sizeof *ix->dl);
    for (size_t d = 0; !rc && d < ix->n_docs; d++)
        rc = write(ctx, ix->fwd[d], (ix->fwd[d][0] + 1) * sizeof **ix->fwd);
    if (!rc) rc = save_pad(write, ctx, (ix->n_docs + ix->n_postings) * sizeof(uint32_t));
    for (size_t t = 0; !rc && t < ix->n_terms; t++)
        if (ix->terms[t].n) rc = write(ctx, ix->terms[t].docs, ix->terms[t].n * sizeof(uint32_t));
    if (!rc) rc = save_pad(write, ctx, ix->n_postings * sizeof(uint32_t));
    for (size_t t = 0; !rc && t < ix->n_terms; t++)
        if (ix->terms[t].n) rc = write(ctx, ix->terms[t].tfs, ix->terms[t].n * sizeof(uint16_t));
    if (!rc) rc = save_pad(write, ctx, ix->n_postings * sizeof(uint16_t));
    return rc;
}

/* A cursor over lex_load's buffer: take(n) gives the next n bytes (padded
 * to 8) or NULL when the buffer is too short. */
typedef struct lex_reader {
    const unsigned char *p;
    size_t left;
} lex_reader;

static const void *take(lex_reader *r, size_t n) {
    if (n > SIZE_MAX - 8 || pad8(n) > r->left) return NULL;
    const void *at = r->p;
    r->p += pad8(n);
    r->left -= pad8(n);
    return at;
}

/* The terms' fixed part and spellings, and the dictionary rebuilt. */
static int load_terms(lex_index *ix, const lex_file_term *ft, uint64_t n_docs,
                      uint64_t n_postings) {
    uint64_t sum = 0;
    for (size_t t = 0; t < ix->n_terms; t++) {
        const lex_file_term *f = &ft[t];
        if ((uint64_t)f->str + f->len > ix->arena_len || f->n > n_docs ||
            (f->n &&
             (f->n_max_tf == 0 || f->n_min_dl == 0 || f->n_max_tf > f->n || f->n_min_dl > f->n)))
            return LEX_EINVAL;
        sum += f->n;
        plist *p = &ix->terms[t];
        *p = (plist){.n = f->n,
                     .max_tf = f->max_tf,
                     .n_max_tf = f->n_max_tf,
                     .min_dl = f->min_dl,
                     .n_min_dl = f->n_min_dl,
                     .len = f->len,
                     .str = f->str};
        uint32_t h = term_hash(ix->arena + f->str, f->len);
        size_t i = h & (ix->slot_cap - 1);
        while (ix->slots[i]) i = (i + 1) & (ix->slot_cap - 1);
        ix->slots[i] = (uint64_t)h << 32 | ((uint32_t)t + 1);
    }
    return sum == n_postings ? LEX_OK : LEX_EINVAL;
}

/* The documents' lengths and forward lists; each id below n_terms, each
 * list ascending, and every term held by as many documents as its list
 * has postings. */
static int load_docs(lex_index *ix, const uint32_t *dl, const uint32_t *fwd, size_t fwd_len) {
    uint32_t *held = calloc(ix->n_terms ? ix->n_terms : 1, sizeof *held);
    if (!held) return LEX_ENOMEM;
    memcpy(ix->dl, dl, ix->n_docs * sizeof *dl);
    size_t at = 0;
    int rc = LEX_OK;
    for (size_t d = 0; d < ix->n_docs && !rc; d++) {
        uint32_t u = at < fwd_len ? fwd[at] : 0;
        if (at >= fwd_len || u > fwd_len - at - 1 || u > dl[d]) {
            rc = LEX_EINVAL;
            break;
        }
        for (uint32_t i = 0; i < u && !rc; i++) {
            uint32_t t = fwd[at + 1 + i];
            if (t >= ix->n_terms || (i && t <= fwd[at + i]))
                rc = LEX_EINVAL;
            else
                held[t]++;
        }
        if (rc) break;
        if (ix->borrow_hi) {
            ix->fwd[d] = (uint32_t *)(fwd + at);
        } else {
            if (!(ix->fwd[d] = malloc(((size_t)u + 1) * sizeof **ix->fwd))) {
                rc = LEX_ENOMEM;
                break;
            }
            memcpy(ix->fwd[d], fwd + at, ((size_t)u + 1) * sizeof *fwd);
        }
        ix->fwd_bytes += util_heap_bytes(((size_t)u + 1) * sizeof *fwd);
        ix->total_len += dl[d];
        ix->n_docs_loaded = d + 1;
        at += (size_t)u + 1;
    }
    for (size_t t = 0; !rc && t < ix->n_terms; t++)
        if (held[t] != ix->terms[t].n) rc = LEX_EINVAL;
    if (!rc && at != fwd_len) rc = LEX_EINVAL;
    free(held);
    return rc;
}

/* Each term's postings into their own arrays: ids ascending below n_docs,
 * counts at least 1; then the block bounds of the terms that had them. */
static int load_postings(lex_index *ix, const uint32_t *docs, const uint16_t *tfs) {
    size_t at = 0;
    for (size_t t = 0; t < ix->n_terms; t++) {
        plist *p = &ix->terms[t];
        uint32_t n = p->n;
        p->n = 0; /* until its arrays are in place (lex_free frees by cap) */
        if (!n) continue;
        for (uint32_t j = 0; j < n; j++)
            if (docs[at + j] >= ix->n_docs || (j && docs[at + j] <= docs[at + j - 1]) ||
                !tfs[at + j])
                return LEX_EINVAL;
        if (ix->borrow_hi) {
            p->docs = (uint32_t *)(docs + at);
            p->tfs = (uint16_t *)(tfs + at);
        } else {
            if (!(p->docs = malloc(n * sizeof *p->docs)) ||
                !(p->tfs = malloc(n * sizeof *p->tfs))) {
                free(p->docs);
                p->docs = NULL;
                return LEX_ENOMEM;
            }
            memcpy(p->docs, docs + at, n * sizeof *docs);
            memcpy(p->tfs, tfs + at, n * sizeof *tfs);
        }
        p->n = p->cap = n;
        at += n;
    }
    return LEX_OK;
}

/* Every document's forward list and the posting lists name the same
 * (term, document) pairs: walking the documents in order, each term of
 * document d must be the next posting of that term's list, and every list
 * must be used up. Removal and update rely on it (they find a document's
 * postings through its forward list). */
static int check_links(const lex_index *ix) {
    uint32_t *next = calloc(ix->n_terms ? ix->n_terms : 1, sizeof *next);
    if (!next) return LEX_ENOMEM;
    int rc = LEX_OK;
    for (size_t d = 0; d < ix->n_docs && !rc; d++) {
        const uint32_t *fwd = ix->fwd[d];
        for (uint32_t i = 0; i < fwd[0]; i++) {
            const plist *p = &ix->terms[fwd[1 + i]];
            uint32_t at = next[fwd[1 + i]]++;
            if (at >= p->n || p->docs[at] != d) {
                rc = LEX_EINVAL;
                break;
            }
        }
    }
    for (size_t t = 0; t < ix->n_terms && !rc; t++)
        if (next[t] != ix->terms[t].n) rc = LEX_EINVAL;
    free(next);
    return rc;
}

int lex_load(void *buf, size_t len, int borrow, lex_index **out) {
    *out = NULL;
    if ((uintptr_t)buf % 8) return LEX_EINVAL;
    lex_reader r = {buf, len};
    const lex_file_head *h = take(&r, sizeof *h);
    if (!h || h->n_terms >= UINT32_MAX - 1 || h->n_docs > UINT32_MAX || h->arena_len > UINT32_MAX ||
        h->n_postings > (uint64_t)SIZE_MAX / 8 || h->n_terms > len / sizeof(lex_file_term) ||
        h->n_docs > len / 4 || h->n_postings > len / 4)
        return LEX_EINVAL;
    const char *arena = take(&r, h->arena_len);
    const lex_file_term *ft = take(&r, h->n_terms * sizeof *ft);
    const uint32_t *dl = take(&r, h->n_docs * sizeof *dl);
    size_t fwd_len = h->n_docs + h->n_postings;
    const uint32_t *fwd = take(&r, fwd_len * sizeof *fwd);
    const uint32_t *docs = take(&r, h->n_postings * sizeof *docs);
    const uint16_t *tfs = take(&r, h->n_postings * sizeof *tfs);
    if (!arena || !ft || !dl || !fwd || !docs || !tfs || r.left) return LEX_EINVAL;
    lex_index *ix = lex_new();
    if (!ix) return LEX_ENOMEM;
    if (borrow) {
        ix->borrow_lo = (uintptr_t)buf;
        ix->borrow_hi = (uintptr_t)buf + len;
    }
    size_t slots = 1024;
    while (slots < (h->n_terms + 1) * 2) slots *= 2;
    size_t terms_cap = h->n_terms > 1024 ? h->n_terms : 1024;
    ix->slots = calloc(slots, sizeof *ix->slots);
    ix->terms = aligned_alloc(64, terms_cap * sizeof *ix->terms);
    ix->arena = malloc(h->arena_len > 16384 ? h->arena_len : 16384);
    int rc = (!ix->slots || !ix->terms || !ix->arena) ? LEX_ENOMEM : LEX_OK;
    if (!rc) {
        ix->slot_cap = slots;
        ix->terms_cap = terms_cap;
        ix->arena_cap = h->arena_len > 16384 ? h->arena_len : 16384;
        ix->arena_len = h->arena_len;
        memcpy(ix->arena, arena, h->arena_len);
        ix->n_terms = h->n_terms;
        rc = load_terms(ix, ft, h->n_docs, h->n_postings);
        if (rc) ix->n_terms = 0; /* their lists are not set: nothing to free */
    }
    if (!rc) rc = lex_reserve(ix, h->n_docs ? h->n_docs : 1);
    if (!rc) {
        ix->n_docs = h->n_docs; /* fwd[d] for d >= n_docs_loaded is not set */
        rc = load_docs(ix, dl, fwd, fwd_len);
    }
    if (!rc) rc = load_postings(ix, docs, tfs);
    if (!rc) rc = check_links(ix);
    if (rc) {
        ix->n_docs = ix->n_docs_loaded;
        lex_free(ix);
        return rc;
    }
    ix->n_postings = h->n_postings;
    for (size_t t = 0; t < ix->n_terms; t++)
        if (ft[t].has_blocks && ix->terms[t].n) blocks_build(ix, &ix->terms[t]);
    *out = ix;
    return LEX_OK;
}

/* ---- queries ---- */

typedef struct qterm {
    const plist *p;
    double idf, ub;
    uint32_t qi;    /* position among the kept terms, in query order */
    uint32_t pos;   /* cursor into p */
    uint32_t order; /* input position of its first occurrence */
} qterm;

/* The query's distinct known terms, at most LEX_MAX_QUERY_TERMS of them
 * (the rarest; among equal df the earliest), into q in query order; returns
 * how many. */
enum { SEEN_SLOTS = 2048 };

/* Put term id t in the set of terms already decided; 1 when it was there.
 * When the set is half full it takes no more (*full), and the caller
 * checks the kept terms instead. */
static int seen_before(uint32_t *seen, size_t *n_seen, int *full, uint32_t t) {
    size_t i = (t * 0x9E3779B1u) >> 21; /* 11 bits: SEEN_SLOTS */
    for (; seen[i]; i = (i + 1) & (SEEN_SLOTS - 1))
        if (seen[i] == t + 1) return 1;
    if (*n_seen >= SEEN_SLOTS / 2) {
        *full = 1;
        return 0;
    }
    seen[i] = t + 1;
    ++*n_seen;
    return 0;
}

static size_t resolve_query(const lex_index *ix, const char *const *terms, size_t n, qterm *q) {
    size_t m = 0;
    long prev = -1;
    size_t worst = 0; /* when m is full: the kept term to drop first */
    /* A term met again was decided when first met: kept (a repeat), or
     * left out as too common, which a later meeting cannot change. */
    uint32_t seen[SEEN_SLOTS];
    memset(seen, 0, sizeof seen);
    size_t n_seen = 0;
    int full = 0;
    for (size_t i = 0; i < n; i++) {
        if (!terms[i]) continue;
        size_t len = strlen(terms[i]);
        long t = dict_find(ix, terms[i], len, term_hash(terms[i], len));
        if (t < 0 || t == prev || ix->terms[t].n == 0) continue;
        prev = t;
        if (seen_before(seen, &n_seen, &full, (uint32_t)t)) continue;
        const plist *p = &ix->terms[t];
        size_t j = 0;
        if (full)
            while (j < m && q[j].p != p) j++;
        else
            j = m;
        if (j < m) continue;
        if (m == LEX_MAX_QUERY_TERMS) {
            /* Full: a rarer term replaces the most common kept one. */
            if (p->n >= q[worst].p->n) continue;
            j = worst;
        } else {
            j = m++;
        }
        q[j].p = p;
        q[j].order = (uint32_t)(i < UINT32_MAX ? i : UINT32_MAX);
        if (m == LEX_MAX_QUERY_TERMS) {
            worst = 0;
            for (size_t w = 1; w < m; w++)
                if (q[w].p->n > q[worst].p->n ||
                    (q[w].p->n == q[worst].p->n && q[w].order > q[worst].order))
                    worst = w;
        }
    }
    /* Query order (a replacement may have put a later term earlier). */
    for (size_t a = 1; a < m; a++) {
        qterm x = q[a];
        size_t b = a;
        while (b > 0 && q[b - 1].order > x.order) q[b] = q[b - 1], b--;
        q[b] = x;
    }
    for (size_t a = 0; a < m; a++) q[a].qi = (uint32_t)a;
    return m;
}

/* One term's share of a document's score: the expression lexical.h gives. */
static inline double term_score(double idf, double tf, double dl, double avgdl) {
    return idf * (tf * (LEX_K1 + 1)) / (tf + LEX_K1 * (1 - LEX_B + LEX_B * dl / avgdl));
}

static void prepare_terms(const lex_index *ix, qterm *q, size_t m, double avgdl) {
    double N = (double)ix->n_docs;
    for (size_t i = 0; i < m; i++) {
        double df = (double)q[i].p->n;
        q[i].idf = log(1.0 + (N - df + 0.5) / (df + 0.5));
        q[i].ub = term_score(q[i].idf, q[i].p->max_tf, q[i].p->min_dl, avgdl) * bound_scale;
        q[i].pos = 0;
    }
}

static int allowed(const uint64_t *allow, uint32_t d) {
    return !allow || (allow[d >> 6] >> (d & 63)) & 1;
}

/* a ranks before b: higher score, then lower id. */
static int better(double sa, uint32_t da, double sb, uint32_t db) {
    return sa > sb || (sa == sb && da < db);
}

/* out[0..h) is a heap with the worst hit at the root. */
static void sift_down(lex_hit *h, size_t n, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, w = i;
        if (l < n && better(h[w].score, h[w].doc, h[l].score, h[l].doc)) w = l;
        if (r < n && better(h[w].score, h[w].doc, h[r].score, h[r].doc)) w = r;
        if (w == i) return;
        lex_hit t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

static void sift_up(lex_hit *h, size_t i) {
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!better(h[parent].score, h[parent].doc, h[i].score, h[i].doc)) return;
        lex_hit t = h[i];
        h[i] = h[parent];
        h[parent] = t;
        i = parent;
    }
}

/* Offer a hit to the heap of the best k; 1 when it went in. */
static int heap_offer(lex_hit *h, size_t *n, size_t k, uint32_t doc, double score) {
    if (*n < k) {
        h[*n] = (lex_hit){doc, score};
        sift_up(h, (*n)++);
        return 1;
    }
    if (!better(score, doc, h[0].score, h[0].doc)) return 0;
    h[0] = (lex_hit){doc, score};
    sift_down(h, *n, 0);
    return 1;
}

static int cmp_hit(const void *a, const void *b) {
    const lex_hit *x = a, *y = b;
    if (better(x->score, x->doc, y->score, y->doc)) return -1;
    return better(y->score, y->doc, x->score, x->doc);
}

/* First position >= from in p whose id is >= doc: gallop, then bisect. */
static uint32_t seek(const plist *p, uint32_t from, uint32_t doc) {
    if (from >= p->n || p->docs[from] >= doc) return from;
    uint32_t step = 1, lo = from, hi = from + 1;
    while (hi < p->n && p->docs[hi] < doc) {
        lo = hi;
        step *= 2;
        hi = p->n - hi > step ? hi + step : p->n;
    }
    /* docs[lo] < doc; docs[hi] >= doc or hi == n */
    return lo + 1 + lower_bound(p->docs + lo + 1, hi - lo - 1, doc);
}

/* By bound, smallest first (ties by query order). An insertion sort of at
 * most 64: glibc's qsort may call malloc, and lex_search never does. */
static void sort_by_bound(qterm *q, size_t m) {
    for (size_t a = 1; a < m; a++) {
        qterm x = q[a];
        size_t b = a;
        while (b > 0 && (q[b - 1].ub > x.ub || (q[b - 1].ub == x.ub && q[b - 1].qi > x.qi)))
            q[b] = q[b - 1], b--;
        q[b] = x;
    }
}

/* The heap of hits (worst at the root) into best-first order, in place. */
static void heap_sort(lex_hit *h, size_t n) {
    for (; n > 1; n--) {
        lex_hit t = h[0];
        h[0] = h[n - 1];
        h[n - 1] = t;
        sift_down(h, n - 1, 0);
    }
}

/* The most term t can add to a document with an id in block b. */
static double block_bound(const qterm *t, uint32_t b, double avgdl) {
    const plist *p = t->p;
    if (!p->blocks) return t->ub;
    if (b >= p->n_blocks || !p->blocks[b].max_tf) return 0;
    return term_score(t->idf, p->blocks[b].max_tf, p->blocks[b].min_dl, avgdl) * bound_scale;
}

/* The pruning threshold from the k-th score: a bit below it, so that
 * rounding in a bound never prunes a document that ties or beats it. */
static double prune_below(double kth) { return kth - kth * 1e-12; }

size_t lex_search_traced(const lex_index *ix, const char *const *terms, size_t n, size_t k,
                         const uint64_t *allow, lex_hit *out, lex_trace *trace) {
    qterm q[LEX_MAX_QUERY_TERMS];
    lex_trace tr = {0};
    size_t m = (k && ix->n_docs && terms) ? resolve_query(ix, terms, n, q) : 0;
    size_t h = 0;
    if (m == 0) goto done;
    double avgdl = (double)ix->total_len / (double)ix->n_docs;
    prepare_terms(ix, q, m, avgdl);
    sort_by_bound(q, m);
    double prefix[LEX_MAX_QUERY_TERMS], contrib[LEX_MAX_QUERY_TERMS];
    for (size_t i = 0; i < m; i++) {
        prefix[i] = (i ? prefix[i - 1] : 0) + q[i].ub;
        tr.postings += q[i].p->n;
    }
    tr.terms = m;
    size_t e = 0; /* q[0..e) are non-essential */
    double floor = -INFINITY;
    int use_blocks = 0;
    for (size_t i = 0; i < m; i++) use_blocks |= q[i].p->blocks != NULL;
    uint32_t cur_block = UINT32_MAX; /* the block whose bound is in block_sum */
    double block_sum = 0;
    for (;;) {
        uint32_t d = UINT32_MAX;
        for (size_t i = e; i < m; i++)
            if (q[i].pos < q[i].p->n && q[i].p->docs[q[i].pos] < d) d = q[i].p->docs[q[i].pos];
        if (d == UINT32_MAX) break;
        if (use_blocks && floor > -INFINITY) {
            /* No document of d's block can enter: skip the whole block. */
            uint32_t b = d >> BLOCK_SHIFT;
            if (b != cur_block) {
                cur_block = b;
                block_sum = 0;
                for (size_t i = 0; i < m; i++) block_sum += block_bound(&q[i], b, avgdl);
            }
            if (block_sum < floor) {
                uint64_t next = ((uint64_t)b + 1) << BLOCK_SHIFT;
                if (next > UINT32_MAX) break;
                for (size_t i = e; i < m; i++) q[i].pos = seek(q[i].p, q[i].pos, (uint32_t)next);
                continue;
            }
        }
        uint64_t mask = 0;
        double part = 0;
        int ok = allowed(allow, d);
        for (size_t i = e; i < m; i++) {
            qterm *t = &q[i];
            if (t->pos < t->p->n && t->p->docs[t->pos] == d) {
                if (ok) {
                    double c = term_score(t->idf, t->p->tfs[t->pos], ix->dl[d], avgdl);
                    contrib[t->qi] = c;
                    mask |= 1ULL << t->qi;
                    part += c;
                }
                t->pos++;
            }
        }
        if (!ok) continue;
        size_t i = e;
        while (i > 0) {
            if (part + prefix[i - 1] < floor) break;
            qterm *t = &q[--i];
            t->pos = seek(t->p, t->pos, d);
            if (t->pos < t->p->n && t->p->docs[t->pos] == d) {
                double c = term_score(t->idf, t->p->tfs[t->pos], ix->dl[d], avgdl);
                contrib[t->qi] = c;
                mask |= 1ULL << t->qi;
                part += c;
            }
        }
        if (i > 0) continue; /* pruned: cannot reach the k-th */
        tr.scored++;
        double score = 0;
        for (uint64_t b = mask; b; b &= b - 1) score += contrib[__builtin_ctzll(b)];
        if (!heap_offer(out, &h, k, d, score) || h < k) continue;
        floor = prune_below(out[0].score);
        while (e < m && prefix[e] < floor) e++;
        if (e == m) break; /* no document left can enter */
    }
    heap_sort(out, h);
done:
    if (trace) *trace = tr;
    return h;
}

size_t lex_search(const lex_index *ix, const char *const *terms, size_t n, size_t k,
                  const uint64_t *allow, lex_hit *out) {
    return lex_search_traced(ix, terms, n, k, allow, out, NULL);
}

/* ---- term at a time, into a kept accumulator ---- */

struct lex_scratch {
    double *acc;       /* acc[d]: d's sum so far; all 0 between searches */
    uint32_t *touched; /* the documents with acc[d] != 0, in first-touch order */
    size_t cap;
    size_t kept; /* lex_search_kept: touched[0..kept) hold their sums */
};

lex_scratch *lex_scratch_new(void) { return calloc(1, sizeof(lex_scratch)); }

void lex_scratch_free(lex_scratch *s) {
    if (!s) return;
    free(s->acc);
    free(s->touched);
    free(s);
}

size_t lex_scratch_bytes(const lex_scratch *s) {
    return s ? sizeof *s + s->cap * (sizeof *s->acc + sizeof *s->touched) : 0;
}

static int scratch_fit(lex_scratch *s, size_t docs) {
    if (docs <= s->cap) return 0;
    size_t cap = docs + docs / 8 + 64;
    /* calloc: the accumulator's invariant is all zeroes */
    double *acc = calloc(cap, sizeof *acc);
    uint32_t *touched = malloc(cap * sizeof *touched);
    if (!acc || !touched) {
        free(acc);
        free(touched);
        return -1;
    }
    free(s->acc);
    free(s->touched);
    s->acc = acc;
    s->touched = touched;
    s->cap = cap;
    return 0;
}

/* Every posting of q[0..m) (in query order: each document's sum is added
 * in the order lex_search and lex_search_exhaustive add it), then the best
 * k of the touched documents; the accumulator is left all zeroes. */
static size_t by_term(const lex_index *ix, qterm *q, size_t m, size_t k, const uint64_t *allow,
                      lex_hit *out, lex_scratch *s, double avgdl, lex_trace *tr, int keep) {
    double *acc = s->acc;
    uint32_t *touched = s->touched;
    size_t n_touched = 0;
    for (size_t i = 0; i < m; i++) {
        const plist *p = q[i].p;
        double idf = q[i].idf;
        for (uint32_t j = 0; j < p->n; j++) {
            uint32_t d = p->docs[j];
            if (!allowed(allow, d)) continue;
            if (acc[d] == 0) touched[n_touched++] = d;
            acc[d] += term_score(idf, p->tfs[j], ix->dl[d], avgdl);
        }
    }
    size_t h = 0;
    for (size_t i = 0; i < n_touched; i++) {
        uint32_t d = touched[i];
        heap_offer(out, &h, k, d, acc[d]);
        if (!keep) acc[d] = 0;
    }
    heap_sort(out, h);
    s->kept = keep ? n_touched : 0;
    tr->scored = n_touched;
    tr->by_term = 1;
    return h;
}

size_t lex_search_with(const lex_index *ix, const char *const *terms, size_t n, size_t k,
                       const uint64_t *allow, lex_hit *out, lex_scratch *s, lex_trace *trace) {
    if (!s || s->kept || !k || !ix->n_docs || !terms)
        return lex_search_traced(ix, terms, n, k, allow, out, trace);
    qterm q[LEX_MAX_QUERY_TERMS];
    size_t m = resolve_query(ix, terms, n, q);
    if (m < LEX_BY_TERM_MIN_TERMS || scratch_fit(s, ix->n_docs))
        return lex_search_traced(ix, terms, n, k, allow, out, trace);
    lex_trace tr = {0};
    tr.terms = m;
    for (size_t i = 0; i < m; i++) tr.postings += q[i].p->n;
    double avgdl = (double)ix->total_len / (double)ix->n_docs;
    prepare_terms(ix, q, m, avgdl);
    size_t h = by_term(ix, q, m, k, allow, out, s, avgdl, &tr, 0);
    if (trace) *trace = tr;
    return h;
}

long lex_search_weighted(const lex_index *ix, const char *const *terms, const double *weights,
                         size_t n, size_t k, const uint64_t *allow, lex_hit *out,
                         lex_scratch *s) {
    qterm q[LEX_MAX_QUERY_TERMS];
    size_t m = (k && ix->n_docs && terms && s) ? resolve_query(ix, terms, n, q) : 0;
    if (m == 0) return 0;
    if (s->kept || scratch_fit(s, ix->n_docs)) return -1;
    double avgdl = (double)ix->total_len / (double)ix->n_docs;
    prepare_terms(ix, q, m, avgdl);
    /* A term's weight is that of its first occurrence (q.order). */
    for (size_t i = 0; i < m; i++) q[i].idf *= weights[q[i].order];
    lex_trace tr = {0};
    return (long)by_term(ix, q, m, k, allow, out, s, avgdl, &tr, 0);
}

long lex_search_kept(const lex_index *ix, const char *const *terms, const double *weights,
                     size_t n, size_t k, const uint64_t *allow, lex_hit *out, lex_scratch *s) {
    qterm q[LEX_MAX_QUERY_TERMS];
    if (!s || s->kept) return -1;
    size_t m = (k && ix->n_docs && terms) ? resolve_query(ix, terms, n, q) : 0;
    if (m == 0) return 0;
    if ((!weights && m < LEX_BY_TERM_MIN_TERMS) || scratch_fit(s, ix->n_docs)) return -1;
    double avgdl = (double)ix->total_len / (double)ix->n_docs;
    prepare_terms(ix, q, m, avgdl);
    for (size_t i = 0; weights && i < m; i++) q[i].idf *= weights[q[i].order];
    lex_trace tr = {0};
    return (long)by_term(ix, q, m, k, allow, out, s, avgdl, &tr, 1);
}

void lex_scratch_sums(const lex_scratch *s, const uint32_t *docs, size_t m, double *scores) {
    for (size_t j = 0; j < m; j++) scores[j] = docs[j] < s->cap ? s->acc[docs[j]] : 0;
}

void lex_scratch_release(lex_scratch *s) {
    if (!s) return;
    for (size_t i = 0; i < s->kept; i++) s->acc[s->touched[i]] = 0;
    s->kept = 0;
}

size_t lex_doc_terms(const lex_index *ix, uint32_t doc, const char **out, uint32_t *lens,
                     uint32_t *dfs, size_t max) {
    if (doc >= ix->n_docs || !ix->fwd[doc]) return 0;
    const uint32_t *f = ix->fwd[doc];
    size_t n = f[0] < max ? f[0] : max;
    for (size_t i = 0; i < n; i++) {
        const plist *p = &ix->terms[f[1 + i]];
        out[i] = ix->arena + p->str;
        lens[i] = p->len;
        if (dfs) dfs[i] = p->n;
    }
    return n;
}

/* The first of docs[lo..n) at or above doc (n when none): galloping from
 * lo, so that ascending targets cost a few steps each. */
static uint32_t gallop(const uint32_t *docs, uint32_t lo, uint32_t n, uint32_t doc) {
    uint32_t step = 1, hi = lo;
    while (hi < n && docs[hi] < doc) lo = hi + 1, hi += step, step *= 2;
    if (hi > n) hi = n;
    return lo + lower_bound(docs + lo, hi - lo, doc);
}

/* Lists within this factor of each other's length are intersected by a
 * plain merge: a look-up per element (galloping) costs a mispredicted
 * branch per step, a merge step is cheap and mostly predicted. */
enum { MERGE_RATIO = 16 };

/* Term p's share of each of docs[0..m) that holds it, into scores[]: two
 * ascending lists of similar length merged, else the shorter walked and
 * looked up in the other (docs unsorted: each looked up in p). */
static void score_term(const lex_index *ix, const plist *p, double idf, double avgdl,
                       const uint32_t *docs, size_t m, int ascending, double *scores) {
    if (ascending && p->n <= MERGE_RATIO * m && m <= MERGE_RATIO * (size_t)p->n) {
        for (size_t i = 0, j = 0; i < p->n && j < m;) {
            uint32_t a = p->docs[i], d = docs[j];
            if (a == d) scores[j] += term_score(idf, p->tfs[i], ix->dl[d], avgdl);
            i += a <= d;
            j += d <= a;
        }
        return;
    }
    if (ascending && p->n < m) { /* ascending: m fits in 32 bits */
        uint32_t lo = 0, n = (uint32_t)m;
        for (uint32_t i = 0; i < p->n && lo < n; i++) {
            lo = gallop(docs, lo, n, p->docs[i]);
            if (lo < n && docs[lo] == p->docs[i])
                scores[lo] += term_score(idf, p->tfs[i], ix->dl[docs[lo]], avgdl);
        }
        return;
    }
    uint32_t lo = 0, prev = 0;
    for (size_t j = 0; j < m; j++) {
        uint32_t d = docs[j];
        if (d >= ix->n_docs) continue;
        if (d < prev) lo = 0;
        prev = d;
        uint32_t at = gallop(p->docs, lo, p->n, d);
        lo = at;
        if (at < p->n && p->docs[at] == d)
            scores[j] += term_score(idf, p->tfs[at], ix->dl[d], avgdl);
    }
}

int lex_score_docs(const lex_index *ix, const char *const *terms, const double *weights, size_t n,
                   const uint32_t *docs, size_t m, double *scores) {
    qterm q[LEX_MAX_QUERY_TERMS];
    size_t nq = (ix->n_docs && terms) ? resolve_query(ix, terms, n, q) : 0;
    for (size_t j = 0; j < m; j++) scores[j] = 0;
    if (nq == 0 || m == 0) return 0;
    /* Strictly ascending and all in the index: either list may be walked. */
    int ascending = m <= UINT32_MAX && docs[m - 1] < ix->n_docs;
    for (size_t j = 1; ascending && j < m; j++) ascending = docs[j - 1] < docs[j];
    double avgdl = (double)ix->total_len / (double)ix->n_docs;
    prepare_terms(ix, q, nq, avgdl);
    for (size_t i = 0; i < nq; i++) {
        double idf = q[i].idf * (weights ? weights[q[i].order] : 1.0);
        score_term(ix, q[i].p, idf, avgdl, docs, m, ascending, scores);
    }
    return 0;
}

long lex_search_exhaustive(const lex_index *ix, const char *const *terms, size_t n, size_t k,
                           const uint64_t *allow, lex_hit *out) {
    qterm q[LEX_MAX_QUERY_TERMS];
    size_t m = (k && ix->n_docs && terms) ? resolve_query(ix, terms, n, q) : 0;
    if (m == 0) return 0;
    double avgdl = (double)ix->total_len / (double)ix->n_docs;
    prepare_terms(ix, q, m, avgdl);
    double *acc = calloc(ix->n_docs, sizeof *acc);
    uint32_t *touched = malloc(ix->n_docs * sizeof *touched);
    if (!acc || !touched) {
        free(acc);
        free(touched);
        return -1;
    }
    size_t n_touched = 0;
    /* Term at a time in query order: each document's sum is then added in
     * the same order as lex_search adds it. */
    for (size_t i = 0; i < m; i++) {
        const plist *p = q[i].p;
        for (uint32_t j = 0; j < p->n; j++) {
            uint32_t d = p->docs[j];
            if (!allowed(allow, d)) continue;
            if (acc[d] == 0) touched[n_touched++] = d;
            acc[d] += term_score(q[i].idf, p->tfs[j], ix->dl[d], avgdl);
        }
    }
    size_t h = 0;
    for (size_t i = 0; i < n_touched; i++) heap_offer(out, &h, k, touched[i], acc[touched[i]]);
    qsort(out, h, sizeof *out, cmp_hit);
    free(acc);
    free(touched);
    return (long)h;
}
