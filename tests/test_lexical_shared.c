/*
 * test_lexical_shared.c: the lexical index's paths for scoring documents
 * another lane found (what the `default` profile's recall uses to give
 * every candidate its BM25), against the plain scorer as a brute-force
 * reference (lex_search_exhaustive with k = every document), on random
 * indexes whose terms range from a few postings to most documents:
 *   - lex_search_kept gives lex_search_with's (or lex_search_weighted's)
 *     hits bit for bit, and lex_scratch_sums then gives every allowed
 *     document the reference's score (0 when it holds no query term);
 *     after lex_scratch_release the scratch serves a search again, and
 *     while it holds sums it serves no other search;
 *   - lex_score_docs gives the reference's scores for any set of
 *     documents, ascending (either list walked) or not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexical/lexical.h"
#include "test.h"

static unsigned long long seed = 0x9E3779B97F4A7C15ULL;
static uint32_t rnd(uint32_t n) {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return (uint32_t)(seed % n);
}

static const char *const vocab[] = {"alpha",  "bravo", "charlie", "delta",  "echo",   "foxtrot",
                                    "golf",   "hotel", "india",   "juliet", "kilo",   "lima",
                                    "mike",   "nov",   "oscar",   "papa",   "quebec", "romeo",
                                    "sierra", "tango", "uniform", "victor", "whisky", "xray"};
#define VOCAB (sizeof vocab / sizeof *vocab)

enum { DOCS = 700 };

/* A word: the first few most of the time (long lists), the rest rarely. */
static const char *word(void) { return vocab[rnd(4) ? rnd(4) : rnd(VOCAB)]; }

static lex_index *random_index(void) {
    lex_index *ix = lex_new();
    for (uint32_t d = 0; ix && d < DOCS; d++) {
        const char *t[16];
        size_t n = 1 + rnd(16);
        for (size_t i = 0; i < n; i++) t[i] = word();
        CHECK_INT(lex_add(ix, d, t, n), LEX_OK);
    }
    return ix;
}

/* ref[d]: the reference's score of every allowed document (0: none). */
static void reference(const lex_index *ix, const char *const *q, size_t n, const uint64_t *allow,
                      double *ref) {
    static lex_hit all[DOCS];
    for (uint32_t d = 0; d < DOCS; d++) ref[d] = 0;
    long h = lex_search_exhaustive(ix, q, n, DOCS, allow, all);
    CHECK(h >= 0);
    for (long i = 0; i < h; i++) ref[all[i].doc] = all[i].score;
}

static int is_allowed(const uint64_t *allow, uint32_t d) { return (allow[d >> 6] >> (d & 63)) & 1; }

static void random_query(const char **q, size_t *n) {
    *n = 1 + rnd(7);
    for (size_t i = 0; i < *n; i++) q[i] = rnd(3) ? vocab[rnd(VOCAB)] : word();
}

static void random_allow(uint64_t *allow, size_t words) {
    for (size_t i = 0; i < words; i++)
        allow[i] = rnd(5) ? ~0ULL : ((uint64_t)rnd(1u << 31) << 33) ^ rnd(1u << 31);
}

static void test_kept_sums(void) {
    lex_index *ix = random_index();
    lex_scratch *s = lex_scratch_new();
    CHECK(ix && s);
    if (!ix || !s) return;
    int kept_some = 0;
    for (int round = 0; round < 200; round++) {
        const char *q[8];
        size_t n;
        random_query(q, &n);
        uint64_t allow[(DOCS + 63) / 64];
        random_allow(allow, sizeof allow / sizeof *allow);
        double w[8], ref[DOCS];
        int weighted = rnd(2);
        for (size_t i = 0; i < n; i++) w[i] = weighted ? (1 + rnd(10)) / 10.0 : 1;
        lex_hit a[DOCS], b[DOCS];
        size_t k = 1 + rnd(60);
        long na = weighted ? lex_search_weighted(ix, q, w, n, k, allow, a, s)
                           : (long)lex_search_with(ix, q, n, k, allow, a, s, NULL);
        long nb = lex_search_kept(ix, q, weighted ? w : NULL, n, k, allow, b, s);
        if (nb < 0) { /* declined: a short unweighted query, nothing kept */
            CHECK(!weighted);
            CHECK(lex_search_with(ix, q, n, k, allow, b, s, NULL) == (size_t)na);
            continue;
        }
        kept_some++;
        CHECK_INT(nb, na);
        for (long i = 0; i < na && i < nb; i++) {
            CHECK_INT(a[i].doc, b[i].doc);
            CHECK(a[i].score == b[i].score);
        }
        /* while it holds sums, the scratch serves no other search */
        if (nb > 0) {
            CHECK(lex_search_kept(ix, q, w, n, k, allow, a, s) == -1);
            CHECK(lex_search_weighted(ix, q, w, n, k, allow, a, s) == -1);
        }
        /* every allowed document's sum, in a random order */
        if (weighted) {
            /* the reference of a weighted query: lex_score_docs over all,
             * itself checked against the unweighted reference below */
            uint32_t all[DOCS];
            for (uint32_t d = 0; d < DOCS; d++) all[d] = d;
            lex_score_docs(ix, q, w, n, all, DOCS, ref);
        } else {
            reference(ix, q, n, allow, ref);
        }
        uint32_t docs[DOCS];
        double got[DOCS];
        size_t m = 0;
        for (uint32_t d = 0; d < DOCS; d++)
            if (is_allowed(allow, d) && rnd(2)) docs[m++] = d;
        for (size_t i = m; i > 1; i--) {
            uint32_t j = rnd((uint32_t)i), t = docs[i - 1];
            docs[i - 1] = docs[j];
            docs[j] = t;
        }
        lex_scratch_sums(s, docs, m, got);
        for (size_t i = 0; i < m; i++) CHECK(got[i] == ref[docs[i]]);
        lex_scratch_release(s);
        /* released: every sum is back to 0, and searches run again */
        lex_scratch_sums(s, docs, m, got);
        for (size_t i = 0; i < m; i++) CHECK(got[i] == 0);
        CHECK(lex_search_weighted(ix, q, w, n, k, allow, a, s) >= 0);
    }
    CHECK(kept_some > 50);
    lex_scratch_free(s);
    lex_free(ix);
}

static void test_score_docs(void) {
    lex_index *ix = random_index();
    CHECK(ix != NULL);
    if (!ix) return;
    for (int round = 0; round < 300; round++) {
        const char *q[8];
        size_t n;
        random_query(q, &n);
        double ref[DOCS];
        reference(ix, q, n, NULL, ref);
        /* a random subset, from a handful (each term's list longer: docs
         * looked up in it) to most (rare terms' lists walked instead) */
        uint32_t docs[DOCS + 2];
        double got[DOCS + 2];
        size_t m = 0;
        uint32_t keep = 1 + rnd(100);
        for (uint32_t d = 0; d < DOCS; d++)
            if (rnd(100) < keep) docs[m++] = d;
        int shuffled = rnd(3) == 0;
        for (size_t i = m; shuffled && i > 1; i--) {
            uint32_t j = rnd((uint32_t)i), t = docs[i - 1];
            docs[i - 1] = docs[j];
            docs[j] = t;
        }
        if (rnd(4) == 0) docs[m++] = DOCS + 5; /* not in the index: 0 */
        CHECK_INT(lex_score_docs(ix, q, NULL, n, docs, m, got), 0);
        for (size_t i = 0; i < m; i++) CHECK(got[i] == (docs[i] < DOCS ? ref[docs[i]] : 0));
    }
    lex_free(ix);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_kept_sums);
    RUN(test_score_docs);
    return TEST_EXIT();
}
