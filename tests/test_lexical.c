/*
 * test_lexical.c: the lexical index (src/lexical/) against a model.
 *
 * The model keeps the documents as plain arrays of term strings, in the
 * same row order as the index (mirroring each swap-remove), and scores a
 * query by brute force from them alone: counts each term in each document,
 * df by scanning the documents, then BM25 as lexical.h defines it. The
 * index's pruned top-k (and its exhaustive scorer) must give the same
 * documents, in the same order, with the same scores, on random
 * collections after random sequences of adds, updates and removals, for k
 * from 1 to 100, with and without an allow bitmap. Scaling the index's
 * upper bounds down (lex_set_bound_scale) must make the comparison fail:
 * the test can see a pruning bug.
 */
#include <stdint.h>
#include <time.h>

#include "lexical/lexical.h"
#include "test.h"

/* ---- random numbers (fixed seeds) ---- */

static uint64_t rng_state = 12345;

static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t rng_below(size_t n) { return n ? (size_t)(rng_next() % n) : 0; }
static double rng_unit(void) { return (rng_next() >> 11) * 0x1p-53; }

/* ---- vocabulary ---- */

enum { VOCAB = 400 };
static char vocab[VOCAB][16];

static void init_vocab(void) {
    for (int i = 0; i < VOCAB; i++) snprintf(vocab[i], sizeof vocab[i], "w%d", i);
}

/* A word from the first v, skewed towards the first ones (common words). */
static const char *word(size_t v) {
    double u = rng_unit();
    return vocab[(size_t)(u * u * u * (double)v)];
}

/* ---- the model ---- */

typedef struct mdoc {
    const char **t;
    size_t n;
} mdoc;

typedef struct model {
    mdoc *d;
    size_t n, cap;
} model;

static void model_free(model *m) {
    for (size_t i = 0; i < m->n; i++) free(m->d[i].t);
    free(m->d);
    memset(m, 0, sizeof *m);
}

static const char **copy_terms(const char **t, size_t n) {
    const char **c = malloc((n ? n : 1) * sizeof *c);
    memcpy(c, t, n * sizeof *c);
    return c;
}

static void model_add(model *m, const char **t, size_t n) {
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->d = realloc(m->d, m->cap * sizeof *m->d);
    }
    m->d[m->n++] = (mdoc){copy_terms(t, n), n};
}

static void model_set(model *m, size_t i, const char **t, size_t n) {
    free(m->d[i].t);
    m->d[i] = (mdoc){copy_terms(t, n), n};
}

static void model_remove(model *m, size_t i) {
    free(m->d[i].t);
    m->d[i] = m->d[m->n - 1];
    m->n--;
}

static size_t count_in(const mdoc *d, const char *term) {
    size_t c = 0;
    for (size_t j = 0; j < d->n; j++) c += strcmp(d->t[j], term) == 0;
    return c;
}

typedef struct kterm {
    const char *s;
    size_t df, order;
} kterm;

static int by_df_then_order(const void *a, const void *b) {
    const kterm *x = a, *y = b;
    if (x->df != y->df) return x->df < y->df ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int by_order(const void *a, const void *b) {
    const kterm *x = a, *y = b;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int by_rank(const void *a, const void *b) {
    const lex_hit *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->doc < y->doc ? -1 : x->doc > y->doc;
}

/* BM25 by brute force over the model's documents, as lexical.h states it. */
static size_t model_search(const model *m, const char **q, size_t nq, size_t k,
                           const uint64_t *allow, lex_hit *out) {
    kterm *kt = malloc((nq ? nq : 1) * sizeof *kt);
    size_t nk = 0;
    for (size_t i = 0; i < nq; i++) {
        int seen = 0;
        for (size_t j = 0; j < nk && !seen; j++) seen = strcmp(kt[j].s, q[i]) == 0;
        if (seen) continue;
        size_t df = 0;
        for (size_t d = 0; d < m->n; d++) df += count_in(&m->d[d], q[i]) > 0;
        if (df) kt[nk++] = (kterm){q[i], df, i};
    }
    if (nk > LEX_MAX_QUERY_TERMS) {
        qsort(kt, nk, sizeof *kt, by_df_then_order);
        nk = LEX_MAX_QUERY_TERMS;
        qsort(kt, nk, sizeof *kt, by_order);
    }
    double N = (double)m->n, total = 0;
    for (size_t d = 0; d < m->n; d++) total += (double)m->d[d].n;
    double avgdl = m->n ? total / N : 0;
    lex_hit *all = malloc((m->n ? m->n : 1) * sizeof *all);
    size_t na = 0;
    for (size_t d = 0; d < m->n; d++) {
        if (allow && !((allow[d >> 6] >> (d & 63)) & 1)) continue;
        double score = 0, dl = (double)m->d[d].n;
        int hit = 0;
        for (size_t j = 0; j < nk; j++) {
            size_t c = count_in(&m->d[d], kt[j].s);
            if (!c) continue;
            double tf = (double)(c > 65535 ? 65535 : c), df = (double)kt[j].df;
            double idf = log(1.0 + (N - df + 0.5) / (df + 0.5));
            score += idf * (tf * (1.2 + 1)) / (tf + 1.2 * (1 - LEX_B + LEX_B * dl / avgdl));
            hit = 1;
        }
        if (hit) all[na++] = (lex_hit){(uint32_t)d, score};
    }
    qsort(all, na, sizeof *all, by_rank);
    size_t h = na < k ? na : k;
    memcpy(out, all, h * sizeof *out);
    free(all);
    free(kt);
    return h;
}

/* ---- comparing ---- */

static int same_hits(const lex_hit *a, size_t na, const lex_hit *b, size_t nb) {
    if (na != nb) return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i].doc != b[i].doc || !(fabs(a[i].score - b[i].score) <= 1e-9)) return 0;
    return 1;
}

static size_t mismatches;
/* One accumulator for every query of the run, as an engine handle keeps
 * one: each search must leave it as it found it (all zeroes), through
 * index growth and shrinking. */
static lex_scratch *scratch;
static size_t by_term_searches;

/* One query three ways: the index's pruned search, its exhaustive scorer,
 * and the model. Failures are counted (the bound-scale test expects some). */
static void compare_query(const lex_index *ix, const model *m, const char **q, size_t nq, size_t k,
                          const uint64_t *allow, int expect_equal) {
    lex_hit *a = calloc(k, sizeof *a), *b = calloc(k, sizeof *b), *c = calloc(k, sizeof *c);
    size_t na = lex_search(ix, q, nq, k, allow, a);
    long nb = lex_search_exhaustive(ix, q, nq, k, allow, b);
    size_t nc = model_search(m, q, nq, k, allow, c);
    int ok = same_hits(a, na, c, nc);
    if (!ok) mismatches++;
    if (expect_equal) {
        CHECK(ok);
        CHECK(nb >= 0 && same_hits(b, (size_t)nb, c, nc));
        /* lex_search_with: whichever way it chooses, the exhaustive
         * scorer's hits to the bit. */
        lex_hit *w = calloc(k, sizeof *w);
        lex_trace tr;
        size_t nw = lex_search_with(ix, q, nq, k, allow, w, scratch, &tr);
        int same = nb >= 0 && nw == (size_t)nb;
        for (size_t i = 0; same && i < nw; i++)
            same = w[i].doc == b[i].doc && w[i].score == b[i].score;
        CHECK(same);
        by_term_searches += tr.by_term;
        CHECK(tr.by_term == (tr.terms >= LEX_BY_TERM_MIN_TERMS));
        free(w);
        if (!ok && mismatches < 3) {
            fprintf(stderr, "  k=%zu nq=%zu allow=%s: search %zu hits, model %zu\n", k, nq,
                    allow ? "yes" : "no", na, nc);
            for (size_t i = 0; i < (na > nc ? na : nc) && i < 12; i++)
                fprintf(stderr, "    %2zu: %5u %.17g | %5u %.17g\n", i, i < na ? a[i].doc : 0,
                        i < na ? a[i].score : 0, i < nc ? c[i].doc : 0, i < nc ? c[i].score : 0);
        }
    }
    free(a);
    free(b);
    free(c);
}

/* The index's statistics against the model's. */
static void compare_stats(const lex_index *ix, const model *m, size_t v) {
    CHECK_INT(lex_count(ix), m->n);
    uint64_t total = 0;
    size_t postings = 0;
    for (size_t d = 0; d < m->n; d++) {
        total += m->d[d].n;
        CHECK_INT(lex_doc_length(ix, (uint32_t)d), m->d[d].n);
    }
    CHECK_INT(lex_total_length(ix), total);
    for (size_t w = 0; w < v; w++) {
        size_t df = 0;
        for (size_t d = 0; d < m->n; d++) df += count_in(&m->d[d], vocab[w]) > 0;
        CHECK_INT(lex_df(ix, vocab[w]), df);
        postings += df;
    }
    CHECK_INT(lex_postings(ix), postings);
}

static size_t random_doc(const char **t, size_t v, size_t max_len) {
    size_t n = rng_below(max_len + 1);
    for (size_t i = 0; i < n; i++) t[i] = word(v);
    return n;
}

static size_t random_query(const char **t, size_t v) {
    size_t n = 1 + rng_below(rng_below(4) == 0 ? 12 : 5);
    for (size_t i = 0; i < n; i++) t[i] = rng_below(10) == 0 ? "unknown" : word(v);
    if (n > 2 && rng_below(3) == 0) t[n - 1] = t[0]; /* a repeated term */
    return n;
}

static uint64_t *random_allow(size_t n) {
    size_t words = (n + 63) / 64;
    uint64_t *bits = calloc(words ? words : 1, sizeof *bits);
    double density = rng_unit();
    for (size_t i = 0; i < n; i++)
        if (rng_unit() < density) bits[i >> 6] |= 1ULL << (i & 63);
    return bits;
}

/* count random documents through lex_add_many, into the model too. */
static void add_batch(lex_index *ix, model *m, size_t v, size_t count) {
    const char **all = calloc(count * 30, sizeof *all);
    uint32_t *lens = calloc(count, sizeof *lens);
    size_t total = 0;
    for (size_t d = 0; d < count; d++) {
        lens[d] = (uint32_t)random_doc(all + total, v, 30);
        total += lens[d];
    }
    CHECK_INT(lex_add_many(ix, (uint32_t)m->n, all, lens, count), LEX_OK);
    for (size_t d = 0, at = 0; d < count; at += lens[d], d++) model_add(m, all + at, lens[d]);
    free(all);
    free(lens);
}

/* lex_save into one malloc'd buffer. */
typedef struct saved {
    unsigned char *p;
    size_t n, cap;
} saved;

static int save_to(void *ctx, const void *bytes, size_t n) {
    saved *b = ctx;
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, bytes, n);
    b->n += n;
    return 0;
}

/* When set, run_random replaces its index every few bursts by a saved and
 * loaded copy (lex_save, lex_load; alternately copied and borrowed), and
 * carries on changing and querying the copy. */
static int reload_indexes;

static lex_index *reload(lex_index *ix, saved *keep, int borrow) {
    saved b = {0};
    CHECK_INT(lex_save(ix, save_to, &b), 0);
    lex_free(ix);
    free(keep->p); /* what the old index borrowed, now free */
    *keep = (saved){0};
    lex_index *out = NULL;
    CHECK_INT(lex_load(b.p, b.n, borrow, &out), LEX_OK);
    if (borrow)
        *keep = b;
    else
        free(b.p);
    return out;
}

/* Random adds, updates and removals on collections of a few vocabulary
 * sizes, with queries checked after each burst of changes. */
static void run_random(int rounds, int expect_equal) {
    static const size_t vsizes[] = {3, 12, 60, 400};
    const char *t[64], *q[16];
    for (int r = 0; r < rounds; r++) {
        size_t v = vsizes[r % 4];
        lex_index *ix = lex_new();
        model m = {0};
        saved keep = {0};
        size_t target = 20 + rng_below(rng_below(2) ? 60 : 500);
        for (int burst = 0; burst < 8; burst++) {
            if (reload_indexes && burst % 3 == 1) ix = reload(ix, &keep, burst % 2);
            size_t ops = 1 + rng_below(target);
            for (size_t o = 0; o < ops; o++) {
                size_t op = rng_below(10);
                if (op < 6 && m.n < target * 2 && rng_below(6) == 0) {
                    add_batch(ix, &m, v, 1 + rng_below(40));
                } else if (m.n == 0 || (op < 6 && m.n < target * 2)) {
                    size_t n = random_doc(t, v, 30);
                    CHECK_INT(lex_add(ix, (uint32_t)m.n, t, n), LEX_OK);
                    model_add(&m, t, n);
                } else if (op < 8) {
                    size_t i = rng_below(m.n), n = random_doc(t, v, 30);
                    CHECK_INT(lex_set(ix, (uint32_t)i, t, n), LEX_OK);
                    model_set(&m, i, t, n);
                } else {
                    size_t i = rng_below(m.n);
                    CHECK_INT(lex_swap_remove(ix, (uint32_t)i), LEX_OK);
                    model_remove(&m, i);
                }
            }
            if (burst == 3) lex_trim(ix); /* and the next burst grows lists again */
            if (expect_equal && burst % 4 == 0) compare_stats(ix, &m, v);
            for (int qn = 0; qn < 12; qn++) {
                size_t nq = random_query(q, v);
                size_t k = qn % 3 == 0 ? 1 + rng_below(100) : 1 + rng_below(12);
                uint64_t *allow = rng_below(2) ? random_allow(m.n) : NULL;
                compare_query(ix, &m, q, nq, k, allow, expect_equal);
                free(allow);
            }
        }
        lex_free(ix);
        free(keep.p);
        model_free(&m);
    }
}

static void test_random_collections(void) {
    mismatches = 0;
    run_random(24, 1);
    CHECK_INT(mismatches, 0);
}

/* The same on indexes saved and loaded again (the engine's snapshots):
 * the loaded copy answers as the model, and keeps doing so as documents
 * are added, replaced and removed, in lists that lie in the caller's
 * buffer or that had to move out of it. */
static void test_save_and_load(void) {
    mismatches = 0;
    reload_indexes = 1;
    run_random(16, 1);
    reload_indexes = 0;
    CHECK_INT(mismatches, 0);
}

/* A damaged buffer is refused or, where the damage is only in numbers the
 * checks cannot tell (a count, a bound, a spelling), gives an index that
 * may rank wrongly but never reads or writes outside its memory (run under
 * AddressSanitizer): searched, then emptied document by document. */
static void test_damaged_saves(void) {
    lex_index *ix = lex_new();
    model m = {0};
    add_batch(ix, &m, 60, 300);
    saved b = {0};
    CHECK_INT(lex_save(ix, save_to, &b), 0);
    lex_free(ix);
    model_free(&m);
    unsigned char *copy = malloc(b.n);
    size_t refused = 0;
    const char *q[16];
    for (int trial = 0; trial < 300; trial++) {
        memcpy(copy, b.p, b.n);
        size_t len = b.n;
        if (trial % 10 == 0)
            len = rng_below(b.n) & ~(size_t)7; /* truncated */
        else
            copy[rng_below(b.n)] ^= (unsigned char)(1 + rng_below(255));
        lex_index *got = NULL;
        int rc = lex_load(copy, len, trial % 2, &got);
        CHECK(rc == LEX_OK || rc == LEX_EINVAL);
        if (rc != LEX_OK) {
            CHECK(got == NULL);
            refused++;
            continue;
        }
        lex_hit hits[20];
        for (int qn = 0; qn < 5; qn++) lex_search(got, q, random_query(q, 60), 20, NULL, hits);
        while (lex_count(got)) CHECK_INT(lex_swap_remove(got, 0), LEX_OK);
        lex_free(got);
    }
    CHECK(refused >= 30); /* at least every truncation */
    lex_index *none = NULL;
    CHECK_INT(lex_load(b.p + 1, b.n - 1, 0, &none), LEX_EINVAL); /* misaligned */
    free(copy);
    free(b.p);
}

/* Found by fuzz_lexload: posting lists whose counts, order and ids are
 * all plausible but that name other documents than the forward lists do
 * (d0 holds "a" and d1 "b", the lists say the opposite). A removal then
 * looked for a posting that was not there. Refused on loading. */
static void test_load_refuses_crossed_lists(void) {
    lex_index *ix = lex_new();
    const char *a[] = {"a"}, *b[] = {"b"};
    CHECK_INT(lex_add(ix, 0, a, 1), LEX_OK);
    CHECK_INT(lex_add(ix, 1, b, 1), LEX_OK);
    saved s = {0};
    CHECK_INT(lex_save(ix, save_to, &s), 0);
    lex_free(ix);
    /* head 32, spellings "ab" padded to 8, 2 terms of 32, lengths 8,
     * forward lists [1,0] [1,1] 16: the postings start at 128. */
    CHECK_INT(s.n, 128 + 8 + 8);
    uint32_t *docs = (uint32_t *)(s.p + 128);
    CHECK(docs[0] == 0 && docs[1] == 1);
    lex_index *got = NULL;
    CHECK_INT(lex_load(s.p, s.n, 0, &got), LEX_OK); /* as saved: fine */
    lex_free(got);
    docs[0] = 1;
    docs[1] = 0;
    got = NULL;
    CHECK_INT(lex_load(s.p, s.n, 0, &got), LEX_EINVAL);
    CHECK(got == NULL);
    free(s.p);
}

/* A pruning bug must show: with every bound at half its value the search
 * skips documents that belong in the top k. */
static void test_broken_bounds_are_caught(void) {
    mismatches = 0;
    lex_set_bound_scale(0.5);
    run_random(8, 0);
    lex_set_bound_scale(1.0);
    CHECK(mismatches > 0);
    fprintf(stderr, "  (bounds halved: %zu mismatching queries)\n", mismatches);
}

/* The bounds stay exact (not merely valid) as the documents holding the
 * extremes leave: after removing every document but the plain ones, the
 * search still prunes. */
static void test_pruning_prunes(void) {
    lex_index *ix = lex_new();
    model m = {0};
    const char *t[8];
    for (int d = 0; d < 3000; d++) {
        size_t n = 0;
        t[n++] = "common";
        t[n++] = vocab[d % 50];
        if (d < 200 && d % 10 == 7) t[n++] = "rare";      /* 20, early */
        if (d < 10) t[n++] = "common", t[n++] = "common"; /* tf 3 at the start */
        CHECK_INT(lex_add(ix, (uint32_t)d, t, n), LEX_OK);
        model_add(&m, t, n);
    }
    const char *q[] = {"common", "rare"};
    lex_hit hits[10];
    lex_trace tr;
    size_t h = lex_search_traced(ix, q, 2, 10, NULL, hits, &tr);
    CHECK_INT(h, 10);
    CHECK_INT(tr.terms, 2);
    CHECK_INT(tr.postings, 3000 + 20);
    CHECK(tr.scored < 200);
    compare_query(ix, &m, q, 2, 10, NULL, 1);
    fprintf(stderr, "  (%zu of %zu documents scored)\n", tr.scored, tr.postings);
    /* Remove the tf-3 documents (ids 9 down to 0; each removal moves the
     * last document in): the bound of "common" comes down to tf 1. */
    for (int d = 9; d >= 0; d--) {
        CHECK_INT(lex_swap_remove(ix, (uint32_t)d), LEX_OK);
        model_remove(&m, (size_t)d);
    }
    compare_query(ix, &m, q, 2, 10, NULL, 1);
    h = lex_search_traced(ix, q, 2, 10, NULL, hits, &tr);
    CHECK_INT(h, 10);
    CHECK(tr.scored < 200);
    fprintf(stderr, "  (after removals: %zu of %zu documents scored)\n", tr.scored, tr.postings);
    lex_free(ix);
    model_free(&m);
}

/* Block bounds follow a moved document: the best document (tf 5) moves
 * from the end into a block of weak ones, which a stale block bound would
 * let the search skip. */
static void test_block_bounds_follow_moves(void) {
    lex_index *ix = lex_new();
    model m = {0};
    const char *t[24];
    for (int d = 0; d < 1000; d++) {
        size_t n = 0, tf = d < 128 ? 2 : d == 999 ? 5 : 1, len = d < 128 || d == 999 ? 10 : 20;
        for (size_t i = 0; i < tf; i++) t[n++] = "dense";
        for (; n < len; n++) t[n] = vocab[100 + (d + n) % 200];
        CHECK_INT(lex_add(ix, (uint32_t)d, t, n), LEX_OK);
        model_add(&m, t, n);
    }
    CHECK_INT(lex_swap_remove(ix, 500), LEX_OK);
    model_remove(&m, 500);
    const char *q[] = {"dense"};
    lex_hit hits[10];
    CHECK_INT(lex_search(ix, q, 1, 10, NULL, hits), 10);
    CHECK_INT(hits[0].doc, 500);
    compare_query(ix, &m, q, 1, 10, NULL, 1);
    /* and an update in place that makes a weak document the best */
    for (size_t i = 0; i < 6; i++) t[i] = "dense";
    CHECK_INT(lex_set(ix, 700, t, 6), LEX_OK);
    model_set(&m, 700, t, 6);
    compare_query(ix, &m, q, 1, 10, NULL, 1);
    CHECK_INT(lex_search(ix, q, 1, 10, NULL, hits), 10);
    CHECK_INT(hits[0].doc, 700);
    lex_free(ix);
    model_free(&m);
}

static void test_empty_and_unknown(void) {
    lex_index *ix = lex_new();
    const char *q[] = {"a", "b"};
    lex_hit hits[4];
    CHECK_INT(lex_search(ix, q, 2, 4, NULL, hits), 0);
    CHECK_INT(lex_search_exhaustive(ix, q, 2, 4, NULL, hits), 0);
    CHECK_INT(lex_swap_remove(ix, 0), LEX_EINVAL);
    CHECK_INT(lex_count(ix), 0);
    const char *d0[] = {"x", "y"}, *d1[] = {"y", "z"};
    CHECK_INT(lex_add(ix, 0, d0, 2), LEX_OK);
    CHECK_INT(lex_add(ix, 1, d1, 2), LEX_OK);
    CHECK_INT(lex_add(ix, 2, NULL, 0), LEX_OK); /* an empty document */
    CHECK_INT(lex_search(ix, q, 2, 4, NULL, hits), 0);
    CHECK_INT(lex_search(ix, q, 0, 4, NULL, hits), 0);
    CHECK_INT(lex_search(ix, d0, 2, 0, NULL, hits), 0);
    /* allow none, allow all */
    uint64_t none = 0, all = ~0ULL;
    CHECK_INT(lex_search(ix, d0, 2, 4, &none, hits), 0);
    CHECK_INT(lex_search(ix, d0, 2, 4, &all, hits), 2);
    CHECK_INT(hits[0].doc, 0);
    CHECK_INT(hits[1].doc, 1);
    CHECK(hits[0].score > hits[1].score);
    lex_free(ix);
    lex_free(NULL);
}

static void test_bad_input_changes_nothing(void) {
    lex_index *ix = lex_new();
    const char *d[] = {"a", "b", "a"}, *bad[] = {"a", NULL};
    CHECK_INT(lex_add(ix, 1, d, 3), LEX_EINVAL); /* not the next id */
    CHECK_INT(lex_add(ix, 0, bad, 2), LEX_EINVAL);
    CHECK_INT(lex_add(ix, 0, NULL, 2), LEX_EINVAL);
    CHECK_INT(lex_count(ix), 0);
    CHECK_INT(lex_add(ix, 0, d, 3), LEX_OK);
    CHECK_INT(lex_set(ix, 1, d, 3), LEX_EINVAL);
    CHECK_INT(lex_set(ix, 0, bad, 2), LEX_EINVAL);
    CHECK_INT(lex_swap_remove(ix, 1), LEX_EINVAL);
    uint32_t lens[] = {3, 2};
    const char *many[] = {"a", "b", "a", "a", NULL};
    CHECK_INT(lex_add_many(ix, 0, many, lens, 2), LEX_EINVAL); /* not the next id */
    CHECK_INT(lex_add_many(ix, 1, many, lens, 2), LEX_EINVAL); /* a NULL term */
    CHECK_INT(lex_add_many(ix, 1, many, NULL, 2), LEX_EINVAL); /* no lengths */
    CHECK_INT(lex_add_many(ix, 1, many, lens, 0), LEX_OK);     /* nothing */
    CHECK_INT(lex_count(ix), 1);
    CHECK_INT(lex_df(ix, "a"), 1);
    CHECK_INT(lex_doc_length(ix, 0), 3);
    CHECK_INT(lex_postings(ix), 2);
    lex_free(ix);
}

/* A term in every document still scores (idf > 0) and still ranks. */
static void test_term_in_every_doc(void) {
    lex_index *ix = lex_new();
    model m = {0};
    const char *t[40];
    for (int d = 0; d < 500; d++) {
        size_t n = 1 + rng_below(30);
        for (size_t i = 0; i < n; i++) t[i] = i == 0 ? "everywhere" : word(60);
        if (rng_below(4) == 0) t[n++] = "everywhere";
        CHECK_INT(lex_add(ix, (uint32_t)d, t, n), LEX_OK);
        model_add(&m, t, n);
    }
    CHECK_INT(lex_df(ix, "everywhere"), 500);
    const char *q[] = {"everywhere"};
    lex_hit hits[100];
    CHECK_INT(lex_search(ix, q, 1, 100, NULL, hits), 100);
    CHECK(hits[99].score > 0);
    for (size_t k = 1; k <= 100; k += 9) compare_query(ix, &m, q, 1, k, NULL, 1);
    const char *q2[] = {"everywhere", "w3", "w1"};
    for (size_t k = 1; k <= 100; k += 11) compare_query(ix, &m, q2, 3, k, NULL, 1);
    lex_free(ix);
    model_free(&m);
}

/* Very long documents: lengths past 65535 and counts clamped at it. */
static void test_long_documents(void) {
    lex_index *ix = lex_new();
    model m = {0};
    size_t big = 70000;
    const char **t = malloc((big + 10) * sizeof *t);
    for (size_t i = 0; i < big; i++) t[i] = i % 7 == 0 ? "w1" : "w2";
    for (size_t i = big; i < big + 10; i++) t[i] = "w3";
    CHECK_INT(lex_add(ix, 0, t, big + 10), LEX_OK);
    model_add(&m, t, big + 10);
    for (size_t i = 0; i < big; i++) t[i] = "w2"; /* tf 70000: clamped */
    CHECK_INT(lex_add(ix, 1, t, big), LEX_OK);
    model_add(&m, t, big);
    const char *s[5];
    for (int d = 2; d < 200; d++) {
        size_t n = random_doc(s, 12, 5);
        CHECK_INT(lex_add(ix, (uint32_t)d, s, n), LEX_OK);
        model_add(&m, s, n);
    }
    CHECK_INT(lex_doc_length(ix, 0), big + 10);
    const char *q[] = {"w2", "w3", "w1"};
    for (size_t k = 1; k <= 100; k += 33) compare_query(ix, &m, q, 3, k, NULL, 1);
    CHECK_INT(lex_swap_remove(ix, 0), LEX_OK);
    model_remove(&m, 0);
    for (size_t k = 1; k <= 100; k += 33) compare_query(ix, &m, q, 3, k, NULL, 1);
    free(t);
    lex_free(ix);
    model_free(&m);
}

/* More than LEX_MAX_QUERY_TERMS distinct terms: the rarest are kept. */
static void test_query_cap(void) {
    lex_index *ix = lex_new();
    model m = {0};
    const char *t[40];
    for (int d = 0; d < 600; d++) {
        size_t n = random_doc(t, VOCAB, 30);
        CHECK_INT(lex_add(ix, (uint32_t)d, t, n), LEX_OK);
        model_add(&m, t, n);
    }
    const char *q[300];
    for (int r = 0; r < 20; r++) {
        size_t nq = 70 + rng_below(200);
        for (size_t i = 0; i < nq; i++) q[i] = vocab[rng_below(VOCAB)];
        compare_query(ix, &m, q, nq, 1 + rng_below(100), NULL, 1);
    }
    lex_trace tr;
    lex_hit hits[10];
    for (size_t i = 0; i < 300; i++) q[i] = vocab[i];
    lex_search_traced(ix, q, 300, 10, NULL, hits, &tr);
    CHECK_INT(tr.terms, LEX_MAX_QUERY_TERMS);
    lex_free(ix);
    model_free(&m);
}

/* More distinct known query terms than the search's set of seen terms
 * holds (1024), each met twice: in the second round the kept terms must
 * be recognised as repeats, not kept twice. Term i is in 1 + i / 40
 * documents, and the query goes from the commonest term to the rarest, so
 * that every kept term is rarer than the worst kept when met again. */
static void test_query_of_many_known_terms(void) {
    enum { WORDS = 1200, DOCS = 1000 };
    static char names[WORDS][16];
    model m = {0};
    const char **docs[DOCS];
    size_t len[DOCS] = {0}, cap = 64;
    for (int d = 0; d < DOCS; d++) docs[d] = malloc(cap * sizeof **docs);
    for (int i = 0; i < WORDS; i++) {
        snprintf(names[i], sizeof names[i], "v%d", i);
        for (int j = 0; j < 1 + i / 40; j++) {
            size_t d = (size_t)(i * 7 + j * 13) % DOCS;
            if (len[d] < cap) docs[d][len[d]++] = names[i];
        }
    }
    lex_index *ix = lex_new();
    for (int d = 0; d < DOCS; d++) {
        CHECK_INT(lex_add(ix, (uint32_t)d, docs[d], len[d]), LEX_OK);
        model_add(&m, docs[d], len[d]);
        free(docs[d]);
    }
    size_t nq = 2 * WORDS;
    const char **q = malloc(nq * sizeof *q);
    for (size_t i = 0; i < nq; i++) q[i] = names[WORDS - 1 - i % WORDS];
    compare_query(ix, &m, q, nq, 10, NULL, 1);
    compare_query(ix, &m, q, nq, 100, NULL, 1);
    for (size_t i = nq - 1; i > 0; i--) { /* and shuffled */
        size_t j = rng_below(i + 1);
        const char *x = q[i];
        q[i] = q[j];
        q[j] = x;
    }
    compare_query(ix, &m, q, nq, 10, NULL, 1);
    free(q);
    lex_free(ix);
    model_free(&m);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A megabyte of repeated query words answers fast, and as its distinct
 * words do. */
static void test_megabyte_query(void) {
    lex_index *ix = lex_new();
    const char *t[40];
    for (int d = 0; d < 20000; d++) {
        size_t n = random_doc(t, VOCAB, 30);
        CHECK_INT(lex_add(ix, (uint32_t)d, t, n), LEX_OK);
    }
    static const char *words[] = {"w1", "w17", "w250", "nothing", "w3", "w90"};
    size_t nq = (1 << 20) / 4; /* about 1 MB of text: 3 bytes and a space a word */
    const char **q = malloc(nq * sizeof *q);
    for (size_t i = 0; i < nq; i++) q[i] = words[i % 6];
    lex_hit a[10], b[10];
    double t0 = now_ms();
    size_t na = lex_search(ix, q, nq, 10, NULL, a);
    double ms = now_ms() - t0;
    size_t nb = lex_search(ix, words, 6, 10, NULL, b);
    CHECK(same_hits(a, na, b, nb));
    CHECK_INT(na, 10);
    fprintf(stderr, "  (1 MB query, %zu words: %.2f ms)\n", nq, ms);
    CHECK(ms < 100); /* about 5 ms optimised; generous for sanitizers */
    /* A megabyte of distinct words, most unknown. */
    char *buf = malloc(nq * 8);
    for (size_t i = 0; i < nq; i++) {
        snprintf(buf + i * 8, 8, "w%zu", i);
        q[i] = buf + i * 8;
    }
    t0 = now_ms();
    na = lex_search(ix, q, nq, 10, NULL, a);
    ms = now_ms() - t0;
    CHECK_INT(na, 10);
    fprintf(stderr, "  (1 MB query of distinct words: %.2f ms)\n", ms);
    CHECK(ms < 200);
    free(buf);
    free(q);
    lex_free(ix);
}

static void test_memory_reported(void) {
    lex_index *ix = lex_new();
    size_t empty = lex_memory_bytes(ix);
    const char *t[40];
    for (int d = 0; d < 5000; d++) {
        size_t n = random_doc(t, VOCAB, 30);
        CHECK_INT(lex_add(ix, (uint32_t)d, t, n), LEX_OK);
    }
    size_t full = lex_memory_bytes(ix);
    CHECK(full > empty + lex_postings(ix) * 6);
    lex_trim(ix);
    size_t trimmed = lex_memory_bytes(ix);
    CHECK(trimmed < full);
    /* postings (6 bytes) and forward lists (4 bytes) at least */
    CHECK(trimmed > empty + lex_postings(ix) * 10);
    while (lex_count(ix)) CHECK_INT(lex_swap_remove(ix, 0), LEX_OK);
    CHECK_INT(lex_postings(ix), 0);
    CHECK_INT(lex_total_length(ix), 0);
    CHECK(lex_memory_bytes(ix) < full);
    lex_free(ix);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    init_vocab();
    scratch = lex_scratch_new();
    RUN(test_empty_and_unknown);
    RUN(test_bad_input_changes_nothing);
    RUN(test_random_collections);
    RUN(test_save_and_load);
    RUN(test_damaged_saves);
    RUN(test_load_refuses_crossed_lists);
    RUN(test_broken_bounds_are_caught);
    RUN(test_pruning_prunes);
    RUN(test_block_bounds_follow_moves);
    RUN(test_term_in_every_doc);
    RUN(test_long_documents);
    RUN(test_query_cap);
    RUN(test_query_of_many_known_terms);
    RUN(test_megabyte_query);
    RUN(test_memory_reported);
    /* the term-at-a-time path ran, on many queries */
    CHECK(by_term_searches > 100);
    CHECK(lex_scratch_bytes(scratch) > 0);
    lex_scratch_free(scratch);
    return TEST_EXIT();
}
