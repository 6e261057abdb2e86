/*
 * bench_flat.c: latency of the exact flat index (src/index/flat.h) against
 * its own scalar reference, run side by side in this process, and against
 * the memory-bandwidth floor measured in the same run.
 *
 * Data: clustered unit vectors of 384 dimensions (a mixture of 2000 gaussian
 * centres sharing a common direction, as sentence embeddings do), fixed
 * seed; queries are perturbed rows. For 10k, 100k and 1M rows (--quick:
 * 10k and 100k) it reports, for k = 10 on one thread, with no filter and
 * with a bitmap allowing about half the rows: p50 and p99 of flat_search and
 * of flat_search_reference, their ratio, how many answers agree exactly
 * (rows, order and score bits; anything below 100% fails the run), how many
 * rows were rescored in float32, and the floor: the bytes a query must read
 * (float32 rows, or int8 codes) divided by the single-thread read bandwidth.
 *
 *   build/bench/bench_flat [--quick]     (REMEM_BENCH_QUICK=1 = --quick;
 *                                          REMEM_SIMD=scalar|avx2|avx512)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "index/flat.h"

enum { DIM = 384, K = 10, CENTRES = 2000 };

static double clock_ms(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static double now_ms(void) { return clock_ms(CLOCK_MONOTONIC); }

/* ---------------------------------------------------------------- */
/* fixed-seed data                                                    */
/* ---------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_uniform(void) { return ((rng_next() >> 11) + 0.5) * 0x1p-53; }

/* Two standard normals per call of the Box-Muller transform. */
static void rng_gauss_fill(float *v, int n, double sigma) {
    for (int i = 0; i < n; i += 2) {
        double r = sqrt(-2.0 * log(rng_uniform())) * sigma, a = 2 * M_PI * rng_uniform();
        v[i] = (float)(r * cos(a));
        if (i + 1 < n) v[i + 1] = (float)(r * sin(a));
    }
}

static void normalise(float *v, int dim) {
    double s = 0;
    for (int i = 0; i < dim; i++) s += (double)v[i] * v[i];
    s = 1.0 / sqrt(s);
    for (int i = 0; i < dim; i++) v[i] = (float)(v[i] * s);
}

/* Centres: a shared direction plus a random one, so that unrelated texts
 * still have a cosine around 0.2, as with real sentence embeddings. Rows:
 * a centre plus noise that leaves neighbours in a cluster at about 0.6. */
static float *make_centres(void) {
    float *common = malloc(sizeof(float) * DIM), *c = malloc(sizeof(float) * DIM * CENTRES);
    rng_gauss_fill(common, DIM, 1.0);
    normalise(common, DIM);
    for (int k = 0; k < CENTRES; k++) {
        float *v = c + (size_t)k * DIM;
        rng_gauss_fill(v, DIM, 1.0 / sqrt(DIM));
        for (int i = 0; i < DIM; i++) v[i] += 0.5f * common[i];
        normalise(v, DIM);
    }
    free(common);
    return c;
}

static void near(float *v, const float *centre, double sigma) {
    rng_gauss_fill(v, DIM, sigma);
    for (int i = 0; i < DIM; i++) v[i] += centre[i];
    normalise(v, DIM);
}

/* The index of rows clustered vectors; *append_ms: time spent in
 * flat_append alone (copy, quantisation, growth). */
static flat_index *make_index(size_t rows, const float *centres, double *append_ms) {
    flat_index *ix = flat_new(DIM);
    float v[DIM];
    *append_ms = 0;
    double t0 = now_ms();
    if (flat_reserve(ix, rows) != 0) {
        fprintf(stderr, "bench_flat: out of memory for %zu rows\n", rows);
        exit(1);
    }
    *append_ms += now_ms() - t0;
    for (size_t r = 0; r < rows; r++) {
        near(v, centres + (rng_next() % CENTRES) * DIM, 0.04);
        t0 = now_ms();
        long got = flat_append(ix, v);
        *append_ms += now_ms() - t0;
        if (got < 0) {
            fprintf(stderr, "bench_flat: out of memory at row %zu\n", r);
            exit(1);
        }
    }
    return ix;
}

/* ---------------------------------------------------------------- */
/* timing                                                             */
/* ---------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile(double *v, size_t n, double p) {
    qsort(v, n, sizeof *v, cmp_double);
    size_t i = (size_t)ceil(p * n) - 1;
    return v[i < n ? i : n - 1];
}

/* Single-thread read bandwidth in bytes per ms: the best of a few sums over
 * a 512 MB array (vectorised by the -O3 -march=native of bench builds). */
static double read_bandwidth(void) {
    size_t words = (512u << 20) / sizeof(uint64_t);
    uint64_t *a = malloc(words * sizeof *a);
    for (size_t i = 0; i < words; i++) a[i] = i;
    double best = 0;
    uint64_t sink = 0;
    for (int round = 0; round < 4; round++) {
        double t0 = now_ms();
        uint64_t s = 0;
        for (size_t i = 0; i < words; i++) s += a[i];
        double ms = now_ms() - t0;
        sink += s;
        if (round > 0 && words * sizeof *a / ms > best) best = words * sizeof *a / ms;
    }
    free(a);
    if (sink == 42) puts("");
    return best;
}

/* ---------------------------------------------------------------- */
/* one configuration                                                  */
/* ---------------------------------------------------------------- */

static int same_hits(const flat_hit *a, size_t na, const flat_hit *b, size_t nb) {
    if (na != nb) return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i].row != b[i].row || memcmp(&a[i].sim, &b[i].sim, sizeof a[i].sim) != 0) return 0;
    return 1;
}

typedef struct run_result {
    double alone_p50, alone_p99; /* flat_search back to back */
    double p50, p99;             /* flat_search right after a reference scan */
    double ref_p50, ref_p99;     /* flat_search_reference */
    double rescored, agree;
} run_result;

/* Two passes over the same queries: flat_search alone, back to back (the
 * int8 copy stays in the last-level cache if it fits, as on a busy
 * server), then each query through flat_search and flat_search_reference in
 * turn (the reference's float32 scan evicts much of it: closer to a cold
 * start, and the fair side-by-side comparison). */
static run_result run_queries(const flat_index *ix, const uint64_t *allow, size_t queries) {
    enum { WARMUP = 3 };
    size_t rows = flat_count(ix), total = queries + WARMUP;
    float *qs = malloc(sizeof(float) * DIM * total);
    for (size_t i = 0; i < total; i++) near(qs + i * DIM, flat_row(ix, rng_next() % rows), 0.03);
    double *t_alone = malloc(sizeof(double) * total), *t_flat = malloc(sizeof(double) * total);
    double *t_ref = malloc(sizeof(double) * total);
    flat_hit a[K], b[K];
    size_t agree = 0, rescored = 0;
    for (size_t i = 0; i < total; i++) {
        double t0 = now_ms();
        flat_search(ix, qs + i * DIM, allow, K, a);
        if (i >= WARMUP) t_alone[i - WARMUP] = now_ms() - t0;
    }
    for (size_t i = 0; i < total; i++) {
        const float *q = qs + i * DIM;
        flat_trace tr;
        double t0 = now_ms();
        size_t na = flat_search_traced(ix, q, allow, K, a, &tr);
        double t1 = now_ms();
        size_t nb = flat_search_reference(ix, q, allow, K, b);
        double t2 = now_ms();
        if (i < WARMUP) continue;
        t_flat[i - WARMUP] = t1 - t0;
        t_ref[i - WARMUP] = t2 - t1;
        agree += same_hits(a, na, b, nb);
        rescored += tr.rescored;
    }
    run_result r;
    r.alone_p50 = percentile(t_alone, queries, 0.5);
    r.alone_p99 = percentile(t_alone, queries, 0.99);
    r.p50 = percentile(t_flat, queries, 0.5);
    r.p99 = percentile(t_flat, queries, 0.99);
    r.ref_p50 = percentile(t_ref, queries, 0.5);
    r.ref_p99 = percentile(t_ref, queries, 0.99);
    r.rescored = (double)rescored / queries;
    r.agree = (double)agree / queries;
    free(qs);
    free(t_alone);
    free(t_flat);
    free(t_ref);
    return r;
}

int main(int argc, char **argv) {
    int quick = getenv("REMEM_BENCH_QUICK") && strcmp(getenv("REMEM_BENCH_QUICK"), "0") != 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else {
            fprintf(stderr, "usage: bench_flat [--quick]\n");
            return 2;
        }
    }
    static const size_t sizes[] = {10000, 100000, 1000000};
    static const size_t query_counts[] = {1000, 300, 40};
    size_t nsizes = quick ? 2 : 3;

    rng_state = 20240607;
    double bw = read_bandwidth(); /* bytes per ms */
    printf("bench_flat: exact top-%d by inner product, dim %d, one thread, kernel %s\n", K, DIM,
           flat_kernel_name());
    printf("data: %d gaussian clusters of unit vectors (fixed seed); queries near rows\n", CENTRES);
    printf("single-thread read bandwidth (sum of 512 MB): %.1f GB/s\n\n", bw / 1e6);
    printf("times in ms. alone: flat_search back to back; side by side: each query through\n"
           "flat_search, then flat_search_reference; speed-up = ref p50 / flat p50 side by\n"
           "side; agree: identical rows, order and score bits; rescored: rows scored in\n"
           "float32 per query; floor: bytes of the allowed rows / read bandwidth.\n\n");
    printf("%-7s %-6s %5s | %-15s | %-15s | %-15s | %7s | %6s | %8s | %-15s\n", "", "", "",
           "flat alone", "flat side/side", "reference", "", "", "", "floor");
    printf("%-7s %-6s %5s | %7s %7s | %7s %7s | %7s %7s | %7s | %6s | %8s | %7s %7s\n", "rows",
           "filter", "qs", "p50", "p99", "p50", "p99", "p50", "p99", "speedup", "agree", "rescored",
           "float32", "int8");

    float *centres = make_centres();
    int failed = 0;
    double cpu_ms = 0, wall_ms = 0;
    for (size_t s = 0; s < nsizes; s++) {
        size_t rows = sizes[s];
        double append_ms;
        flat_index *ix = make_index(rows, centres, &append_ms);
        size_t words = (rows + 63) / 64;
        uint64_t *half = calloc(words, sizeof *half);
        for (size_t r = 0; r < rows; r++)
            if (rng_next() & 1) half[r / 64] |= (uint64_t)1 << (r % 64);
        for (int filtered = 0; filtered < 2; filtered++) {
            const uint64_t *allow = filtered ? half : NULL;
            double share = 1.0;
            if (filtered) {
                size_t on = 0;
                for (size_t w = 0; w < words; w++) on += (size_t)__builtin_popcountll(half[w]);
                share = (double)on / rows;
            }
            double wall0 = now_ms(), cpu0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
            run_result r = run_queries(ix, allow, query_counts[s]);
            cpu_ms += clock_ms(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
            wall_ms += now_ms() - wall0;
            /* Bytes a query must read: every allowed row, as float32, or
             * as int8 codes plus the 12 bytes of scale and bounds. */
            double floor_f32 = share * rows * DIM * 4.0 / bw;
            double floor_i8 = share * rows * (DIM + 12.0) / bw;
            printf("%-7zu %-6s %5zu | %7.3f %7.3f | %7.3f %7.3f | %7.2f %7.2f | %6.1fx | %5.1f%% | "
                   "%8.1f | %7.3f %7.3f\n",
                   rows, filtered ? "50%" : "none", query_counts[s], r.alone_p50, r.alone_p99,
                   r.p50, r.p99, r.ref_p50, r.ref_p99, r.ref_p50 / r.p50, 100 * r.agree, r.rescored,
                   floor_f32, floor_i8);
            fflush(stdout);
            if (r.agree < 1.0) failed = 1;
        }
        printf(
            "%-7zu flat_reserve + flat_append: %.0f ms (%.2f us per row, quantisation included)\n",
            rows, append_ms, 1e3 * append_ms / rows);
        free(half);
        flat_free(ix);
    }
    free(centres);
    /* On a shared machine other processes take turns on the core; times
     * then include their turns. */
    printf("\nCPU share of this process while querying: %.0f%% of one core\n",
           100 * cpu_ms / wall_ms);
    printf("%s\n", failed ? "FAILED: flat_search and flat_search_reference disagree"
                          : "all answers identical to the reference");
    return failed;
}
