/*
 * bench_lexical.c: BM25 top-10 with the lexical index's pruned search
 * (lex_search, document-at-a-time MaxScore) against its exhaustive scorer
 * (lex_search_exhaustive: every posting of every query term scored, as
 * FTS5 does), side by side in this process on the same queries.
 *
 * Data, made at run time from a fixed seed: a vocabulary of 30,000 made-up
 * words (2 to 11 letters), word frequencies Zipfian (s = 1, so the commonest
 * word is about 9% of all text, as "the" is in English), documents of 8 to
 * 30 words (chat turns). Queries of 1 to 8 words drawn from the same
 * distribution, so they hold common words as real ones do. For 10k and
 * 100k documents it prints: build time (lex_add per document, and
 * lex_add_many in batches of 4096), bytes per document and per posting
 * (lex_memory_bytes), and per query length p50 / p99 of both scorers, their
 * ratio, documents fully scored against postings read by the exhaustive
 * scorer, and whether every answer agreed (same documents, order and score
 * bits; any difference fails the run). p50 and p99 are wall-clock
 * times, cpu99 the p99 of the thread's CPU time (what a query costs when
 * no other process takes the core away in the middle of it). Then
 * one-word queries of the 20 commonest words (the worst case: nothing to
 * prune against), queries of 1-8 words with half the documents allowed,
 * the same with k = 50 (the candidates the engine's lexical lane asks
 * for), and a 1 MB query of repeated words.
 *
 *   build/bench/bench_lexical [--quick]   (--quick: fewer queries)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lexical/lexical.h"

enum { VOCAB = 30000, K = 10, K_ENGINE = 50, MAX_QLEN = 8, LOAD_BATCH = 4096 };

static size_t k_now = K; /* k of the queries being run */

static uint64_t rng_state = 20261122;

static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_unit(void) { return ((rng_next() >> 11) + 0.5) * 0x1p-53; }

static char *words[VOCAB];
static double cdf[VOCAB];

static void make_vocabulary(void) {
    static const char letters[] = "etaoinshrdlcumwfgypbvkjxqz";
    for (int i = 0; i < VOCAB; i++) {
        char w[16];
        size_t len = 2 + (size_t)(rng_next() % 10);
        for (size_t j = 0; j < len; j++) {
            double u = rng_unit(); /* common letters more often */
            w[j] = letters[(size_t)(u * u * 26)];
        }
        /* A suffix from the rank keeps every word distinct. */
        snprintf(w + len, sizeof w - len, "%x", i);
        words[i] = strdup(w);
    }
    double sum = 0;
    for (int i = 0; i < VOCAB; i++) sum += 1.0 / (i + 1);
    double acc = 0;
    for (int i = 0; i < VOCAB; i++) cdf[i] = (acc += 1.0 / (i + 1) / sum);
}

static const char *zipf_word(void) {
    double u = rng_unit();
    size_t lo = 0, hi = VOCAB - 1;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cdf[mid] < u)
            lo = mid + 1;
        else
            hi = mid;
    }
    return words[lo];
}

static double clock_ms(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static double now_ms(void) { return clock_ms(CLOCK_MONOTONIC); }
/* CPU time of this process: on a shared machine, what a build costs
 * without the waits for a core. */
static double cpu_ms(void) { return clock_ms(CLOCK_PROCESS_CPUTIME_ID); }
static double thread_ms(void) { return clock_ms(CLOCK_THREAD_CPUTIME_ID); }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p) {
    qsort(v, n, sizeof *v, cmp_double);
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i];
}

static int same(const lex_hit *a, size_t na, const lex_hit *b, long nb) {
    if (nb < 0 || (size_t)nb != na) return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i].doc != b[i].doc || a[i].score != b[i].score) return 0;
    return 1;
}

/* Queries of qlen words (qlen 0: 1 to 8 at random; -1: one of the 20
 * commonest words, the worst case) through both scorers,
 * alternating; one line of figures. Returns the number of disagreements. */
static size_t run_queries(const lex_index *ix, int qlen, size_t nq, const uint64_t *allow,
                          const char *label) {
    double *tp = malloc(nq * sizeof *tp), *te = malloc(nq * sizeof *te);
    double *cp = malloc(nq * sizeof *cp), *ce = malloc(nq * sizeof *ce);
    size_t bad = 0;
    double scored = 0, postings = 0;
    for (size_t i = 0; i < nq; i++) {
        const char *q[MAX_QLEN];
        int n = qlen > 0 ? qlen : qlen < 0 ? 1 : 1 + (int)(rng_next() % MAX_QLEN);
        for (int j = 0; j < n; j++) q[j] = qlen < 0 ? words[rng_next() % 20] : zipf_word();
        lex_hit a[K_ENGINE], b[K_ENGINE];
        lex_trace tr;
        double t0 = now_ms(), c0 = thread_ms();
        size_t na = lex_search_traced(ix, q, (size_t)n, k_now, allow, a, &tr);
        double t1 = now_ms(), c1 = thread_ms();
        long nb = lex_search_exhaustive(ix, q, (size_t)n, k_now, allow, b);
        double t2 = now_ms(), c2 = thread_ms();
        tp[i] = t1 - t0;
        te[i] = t2 - t1;
        cp[i] = c1 - c0;
        ce[i] = c2 - c1;
        scored += (double)tr.scored;
        postings += (double)tr.postings;
        if (!same(a, na, b, nb)) bad++;
    }
    double p50 = pct(tp, nq, 0.5), p99 = pct(tp, nq, 0.99), pc99 = pct(cp, nq, 0.99);
    double e50 = pct(te, nq, 0.5), e99 = pct(te, nq, 0.99), ec99 = pct(ce, nq, 0.99);
    printf("%-14s %5zu | %6.3f %6.3f %6.3f | %6.3f %6.3f %6.3f | %5.1fx | %7.0f %8.0f | %s\n",
           label, nq, p50, p99, pc99, e50, e99, ec99, e50 / (p50 > 0 ? p50 : 1e-9),
           scored / (double)nq, postings / (double)nq, bad ? "DIFFER" : "100%");
    free(tp);
    free(te);
    free(cp);
    free(ce);
    return bad;
}

static size_t run_size(size_t n_docs, size_t nq) {
    /* The documents' words first, so that the build times only the index. */
    const char **all = malloc(n_docs * 30 * sizeof *all);
    uint32_t *lens = malloc(n_docs * sizeof *lens);
    size_t terms = 0;
    for (size_t d = 0; d < n_docs; d++) {
        lens[d] = (uint32_t)(8 + rng_next() % 23);
        for (size_t j = 0; j < lens[d]; j++) all[terms++] = zipf_word();
    }
    /* One document at a time (as the engine's own writes come), then in
     * batches (as a namespace loads); the second index is the one queried. */
    lex_index *ix = lex_new();
    double a0 = now_ms(), b0 = cpu_ms();
    if (!ix || lex_reserve(ix, n_docs)) return 1;
    for (size_t d = 0, at = 0; d < n_docs; at += lens[d], d++)
        if (lex_add(ix, (uint32_t)d, all + at, lens[d])) return 1;
    double a1 = now_ms(), b1 = cpu_ms();
    lex_free(ix);
    ix = lex_new();
    double t0 = now_ms(), c0 = cpu_ms();
    if (!ix || lex_reserve(ix, n_docs)) return 1;
    for (size_t d = 0, at = 0; d < n_docs; d += LOAD_BATCH) {
        size_t count = n_docs - d < LOAD_BATCH ? n_docs - d : LOAD_BATCH, batch_terms = 0;
        for (size_t i = 0; i < count; i++) batch_terms += lens[d + i];
        if (lex_add_many(ix, (uint32_t)d, all + at, lens + d, count)) return 1;
        at += batch_terms;
    }
    double t1 = now_ms(), c1 = cpu_ms();
    size_t untrimmed = lex_memory_bytes(ix);
    lex_trim(ix);
    double t2 = now_ms(), c2 = cpu_ms();
    size_t bytes = lex_memory_bytes(ix);
    free(all);
    free(lens);
    printf("\n%zu documents, %zu terms (%.1f per document), %zu postings\n", n_docs, terms,
           (double)terms / (double)n_docs, lex_postings(ix));
    printf("build, lex_add of each document: %.0f ms wall, %.0f ms CPU (%.2f us per document)\n",
           a1 - a0, b1 - b0, (b1 - b0) * 1e3 / (double)n_docs);
    printf("build, lex_add_many of %d at a time: %.0f ms wall, %.0f ms CPU (%.2f us per "
           "document); lex_trim: %.1f ms wall, %.1f ms CPU\n"
           "memory: %.1f MB before trim, %.1f MB after: %.0f bytes per document, %.1f per "
           "posting\n",
           LOAD_BATCH, t1 - t0, c1 - c0, (c1 - c0) * 1e3 / (double)n_docs, t2 - t1, c2 - c1,
           untrimmed / 1e6, bytes / 1e6, (double)bytes / (double)n_docs,
           (double)bytes / (double)lex_postings(ix));
    printf("%-14s %5s | %-20s | %-20s | %6s | %-16s | %s\n", "query", "qs", "pruned p50 p99 cpu99",
           "exhaus p50 p99 cpu99", "ratio", "scored postings", "agree");
    size_t bad = 0;
    for (int qlen = 1; qlen <= MAX_QLEN; qlen++) {
        char label[32];
        snprintf(label, sizeof label, "%d word%s", qlen, qlen > 1 ? "s" : "");
        bad += run_queries(ix, qlen, nq, NULL, label);
    }
    bad += run_queries(ix, -1, nq / 4, NULL, "top-20 word");
    size_t words64 = (n_docs + 63) / 64;
    uint64_t *half = calloc(words64, sizeof *half);
    for (size_t i = 0; i < words64; i++) half[i] = rng_next();
    bad += run_queries(ix, 0, nq, half, "1-8, 50% allow");
    k_now = K_ENGINE; /* what the engine's lexical lane asks for */
    bad += run_queries(ix, 0, nq, NULL, "1-8, k = 50");
    k_now = K;
    free(half);

    /* A megabyte of query: a 200-word passage repeated. */
    size_t big = (1 << 20) / 7;
    const char **q = malloc(big * sizeof *q);
    const char *passage[200];
    for (int j = 0; j < 200; j++) passage[j] = zipf_word();
    size_t chars = 0;
    for (size_t i = 0; i < big; i++) {
        q[i] = passage[i % 200];
        chars += strlen(q[i]) + 1;
    }
    lex_hit a[K];
    double best = 1e9;
    for (int r = 0; r < 5; r++) {
        double s = now_ms();
        lex_search(ix, q, big, K, NULL, a);
        double e = now_ms() - s;
        if (e < best) best = e;
    }
    printf("1 MB query (%zu words, %.2f MB of text, a 200-word passage repeated): %.2f ms "
           "(best of 5)\n",
           big, chars / 1048576.0, best);
    free(q);
    lex_free(ix);
    return bad;
}

int main(int argc, char **argv) {
    int quick = (argc > 1 && strcmp(argv[1], "--quick") == 0) || getenv("REMEM_BENCH_QUICK");
    make_vocabulary();
    printf("lexical index: BM25 top-%d, pruned (MaxScore) against exhaustive, one thread; times "
           "in ms\n",
           K);
    printf("vocabulary %d words, Zipf s = 1; documents of 8-30 words; queries of 1-8 words\n",
           VOCAB);
    size_t bad = run_size(10000, quick ? 300 : 2000);
    bad += run_size(100000, quick ? 100 : 1000);
    for (int i = 0; i < VOCAB; i++) free(words[i]);
    if (bad) {
        printf("FAILED: %zu answers differ from the exhaustive scorer\n", bad);
        return 1;
    }
    return 0;
}
