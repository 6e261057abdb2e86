/*
 * test_flat.c: the flat index. Kernels against a double-precision dot and
 * against each other (every level must give the same bits), the int8
 * kernels against plain integer sums, and flat_search against
 * flat_search_reference (same rows, same order, same scores) on random and
 * clustered data, with allow bitmaps of every density, n past the allowed
 * count, odd vectors, and after set / swap_remove. Each search test runs at
 * every SIMD level this CPU has, and checks that the int8 pre-scan really
 * ran where it should, since a test that only exercises the float scan
 * would prove nothing about the bounds.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "index/flat.h"
#include "index/flat_kernels.h"
#include "test.h"

static const char *const levels[] = {"scalar", "avx2", "avx512"};
#define LEVELS (sizeof levels / sizeof levels[0])
static const int dims[] = {1, 3, 15, 16, 17, 64, 383, 384, 385};
#define DIMS (sizeof dims / sizeof dims[0])

/* ---------------------------------------------------------------- */
/* deterministic random data                                          */
/* ---------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_uniform(void) { return (rng_next() >> 11) * 0x1p-53; }

static double rng_gauss(void) {
    double u = rng_uniform(), v = rng_uniform();
    return sqrt(-2.0 * log(u + 1e-300)) * cos(2 * M_PI * v);
}

static void normalise(float *v, int dim) {
    double s = 0;
    for (int i = 0; i < dim; i++) s += (double)v[i] * v[i];
    s = s > 0 ? 1.0 / sqrt(s) : 0;
    for (int i = 0; i < dim; i++) v[i] = (float)(v[i] * s);
}

static void random_unit(float *v, int dim) {
    for (int i = 0; i < dim; i++) v[i] = (float)rng_gauss();
    normalise(v, dim);
}

/* A unit vector near centre: centre + sigma * noise, normalised. */
static void near_unit(float *v, const float *centre, int dim, double sigma) {
    for (int i = 0; i < dim; i++) v[i] = (float)(centre[i] + sigma * rng_gauss());
    normalise(v, dim);
}

static double dot_double(const float *a, const float *b, int dim, double *abs_sum) {
    double s = 0, as = 0;
    for (int i = 0; i < dim; i++) {
        s += (double)a[i] * b[i];
        as += fabs((double)a[i] * b[i]);
    }
    if (abs_sum) *abs_sum = as;
    return s;
}

/* The same float, bit for bit (so +0 and -0 differ), except that any two
 * NaNs match: which NaN payload an operation returns depends on operand
 * order, which compilers may swap. */
static int same_bits(float a, float b) {
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* Index of rows random unit vectors (clusters > 0: near that many centres,
 * with the given spread). */
static flat_index *build(int dim, size_t rows, size_t clusters, double sigma) {
    flat_index *ix = flat_new(dim);
    float *v = malloc(sizeof(float) * dim);
    float *centres = clusters ? malloc(sizeof(float) * dim * clusters) : NULL;
    for (size_t c = 0; c < clusters; c++) random_unit(centres + c * dim, dim);
    for (size_t r = 0; r < rows; r++) {
        if (clusters)
            near_unit(v, centres + (rng_next() % clusters) * dim, dim, sigma);
        else
            random_unit(v, dim);
        CHECK_INT(flat_append(ix, v), r);
    }
    free(v);
    free(centres);
    return ix;
}

/* A query near a random row of ix (or the row itself with sigma 0). */
static void query_near_row(const flat_index *ix, float *q, double sigma) {
    int dim = flat_dim(ix);
    near_unit(q, flat_row(ix, rng_next() % flat_count(ix)), dim, sigma);
}

/* A bitmap over count rows with each bit set with probability p; bits past
 * count are set too, which the index must ignore. */
static uint64_t *random_bitmap(size_t count, double p) {
    size_t words = (count + 63) / 64;
    uint64_t *bits = calloc(words ? words : 1, sizeof *bits);
    for (size_t r = 0; r < words * 64; r++)
        if (r >= count || rng_uniform() < p) bits[r / 64] |= (uint64_t)1 << (r % 64);
    return bits;
}

static int bit_set(const uint64_t *allow, size_t r) {
    return !allow || ((allow[r / 64] >> (r % 64)) & 1);
}

/* flat_search == flat_search_reference, bit for bit; returns 1 if equal. */
static int search_matches(const flat_index *ix, const float *q, const uint64_t *allow, size_t n,
                          flat_trace *trace) {
    flat_hit *got = malloc(sizeof *got * (n ? n : 1));
    flat_hit *want = malloc(sizeof *want * (n ? n : 1));
    size_t ng = flat_search_traced(ix, q, allow, n, got, trace);
    size_t nw = flat_search_reference(ix, q, allow, n, want);
    int ok = ng == nw;
    for (size_t i = 0; ok && i < ng; i++)
        ok = got[i].row == want[i].row && same_bits(got[i].sim, want[i].sim) &&
             bit_set(allow, got[i].row);
    if (!ok) {
        fprintf(stderr, "    mismatch (kernel %s, n %zu, got %zu, want %zu)\n", flat_kernel_name(),
                n, ng, nw);
        for (size_t i = 0; i < (ng > nw ? ng : nw) && i < 12; i++)
            fprintf(stderr, "      %2zu: got %u %.9g  want %u %.9g\n", i, i < ng ? got[i].row : 0,
                    i < ng ? got[i].sim : 0, i < nw ? want[i].row : 0, i < nw ? want[i].sim : 0);
    }
    free(got);
    free(want);
    return ok;
}

/* The reference itself must be sorted, best first, ties by lower row. */
static int reference_sorted(const flat_index *ix, const float *q, size_t n) {
    flat_hit *h = malloc(sizeof *h * n);
    size_t got = flat_search_reference(ix, q, NULL, n, h);
    int ok = 1;
    for (size_t i = 1; i < got; i++)
        if (h[i - 1].sim < h[i].sim || (h[i - 1].sim == h[i].sim && h[i - 1].row > h[i].row))
            ok = 0;
    free(h);
    return ok;
}

/* ---------------------------------------------------------------- */
/* kernels                                                            */
/* ---------------------------------------------------------------- */

static void test_kernel_selection(void) {
    CHECK(flat_kernel_available("scalar"));
    CHECK(!flat_kernel_available("sse9"));
    CHECK(flat_set_kernel("sse9") == -1);
    const char *name = flat_kernel_name();
    CHECK(strcmp(name, "scalar") == 0 || strcmp(name, "avx2") == 0 || strcmp(name, "avx512") == 0);
    for (size_t l = 0; l < LEVELS; l++) {
        if (!flat_kernel_available(levels[l])) {
            CHECK(flat_set_kernel(levels[l]) == -1);
            continue;
        }
        CHECK(flat_set_kernel(levels[l]) == 0);
        CHECK_STR(flat_kernel_name(), levels[l]);
    }
    fprintf(stderr, "    levels here:%s%s%s\n", " scalar",
            flat_kernel_available("avx2") ? " avx2" : "",
            flat_kernel_available("avx512") ? " avx512" : "");
}

/* Runs this program with REMEM_SIMD=value and returns the kernel it chose. */
static void kernel_chosen_with_env(const char *value, char *name, size_t size) {
    char self[200], cmd[256];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    name[0] = 0;
    if (len <= 0) return;
    self[len] = 0;
    snprintf(cmd, sizeof cmd, "REMEM_SIMD=%s '%s' --kernel-name", value, self);
    FILE *p = popen(cmd, "r");
    if (!p) return;
    if (fgets(name, (int)size, p)) name[strcspn(name, "\n")] = 0;
    pclose(p);
}

static void test_env_forces_level(void) {
    char name[32];
    kernel_chosen_with_env("scalar", name, sizeof name);
    CHECK_STR(name, "scalar");
    kernel_chosen_with_env("avx2", name, sizeof name);
    CHECK_STR(name, flat_kernel_available("avx2") ? "avx2" : "scalar");
    /* Never above what the CPU has. */
    kernel_chosen_with_env("avx512", name, sizeof name);
    CHECK_STR(name, flat_kernel_available("avx512") ? "avx512"
                    : flat_kernel_available("avx2") ? "avx2"
                                                    : "scalar");
    kernel_chosen_with_env("bogus", name, sizeof name);
    CHECK_STR(name, flat_kernel_available("avx512") ? "avx512"
                    : flat_kernel_available("avx2") ? "avx2"
                                                    : "scalar");
}

static void test_dot_against_double(void) {
    enum { MAXD = 385, OFF = 3 };
    float *a = malloc(sizeof(float) * (MAXD + OFF)), *b = malloc(sizeof(float) * (MAXD + OFF));
    for (size_t d = 0; d < DIMS; d++) {
        int dim = dims[d];
        for (int trial = 0; trial < 20; trial++) {
            /* Unaligned starts, mixed magnitudes and signs. */
            int off = trial % OFF;
            for (int i = 0; i < dim; i++) {
                a[off + i] = (float)(rng_gauss() * (trial % 4 == 0 ? 1e3 : 1));
                b[off + i] = (float)rng_gauss();
            }
            double abs_sum, exact = dot_double(a + off, b + off, dim, &abs_sum);
            /* The canonical order's rounding bound: per lane dim/16 adds,
             * the products, and 4 tree levels. */
            double tol = ((dim + 15) / 16 + 6) * 0x1p-24 * abs_sum + 1e-30;
            float scalar_value = 0;
            for (size_t l = 0; l < LEVELS; l++) {
                if (flat_set_kernel(levels[l]) != 0) continue;
                float v = flat_dot(a + off, b + off, dim);
                CHECK_NEAR(v, exact, tol);
                if (l == 0)
                    scalar_value = v;
                else if (!same_bits(v, scalar_value)) {
                    fprintf(stderr, "    dim %d: %s %.9g vs scalar %.9g\n", dim, levels[l], v,
                            scalar_value);
                    CHECK(same_bits(v, scalar_value));
                }
            }
        }
    }
    free(a);
    free(b);
}

/* dot_rows over a scattered row list gives each row's flat_dot bits, at
 * every level (this exercises the 4-row blocks and their prefetching). */
static void test_dot_rows_scattered(void) {
    for (size_t d = 0; d < DIMS; d++) {
        int dim = dims[d];
        size_t count = 300;
        flat_index *ix = build(dim, count, 0, 0);
        float *q = malloc(sizeof(float) * dim);
        random_unit(q, dim);
        uint32_t rows[150];
        for (size_t j = 0; j < 150; j++) rows[j] = (uint32_t)(rng_next() % count);
        const flat_kernels *scalar = flat_kernels_for("scalar");
        float want[150], got[150];
        scalar->dot_rows(flat_row(ix, 0), dim, q, rows, 150, want);
        for (size_t j = 0; j < 150; j++) {
            double abs_sum, exact = dot_double(flat_row(ix, rows[j]), q, dim, &abs_sum);
            CHECK_NEAR(want[j], exact, ((dim + 15) / 16 + 6) * 0x1p-24 * abs_sum + 1e-30);
        }
        for (size_t l = 1; l < LEVELS; l++) {
            const flat_kernels *k = flat_kernels_for(levels[l]);
            if (!k) continue;
            for (size_t m = 0; m <= 150; m += 37) {
                memset(got, 0, sizeof got);
                k->dot_rows(flat_row(ix, 0), dim, q, rows, m, got);
                int same = 1;
                for (size_t j = 0; j < m; j++) same &= same_bits(got[j], want[j]);
                CHECK(same);
            }
        }
        free(q);
        flat_free(ix);
    }
}

/* The int8 kernels against plain integer sums, on random codes that include
 * the extremes -127 and 127 (the sign trick and VNNI bias must be exact). */
static void test_int8_kernels(void) {
    for (size_t d = 0; d < DIMS; d++) {
        size_t stride = ((size_t)dims[d] + 63) / 64 * 64, count = 97;
        uint8_t *codes = malloc(stride * count);
        int8_t *q = calloc(stride, 1);
        int32_t qsum = 0;
        for (size_t i = 0; i < (size_t)dims[d]; i++) {
            int v = (int)(rng_next() % 255) - 127;
            if (i % 7 == 0) v = (i % 14 == 0) ? 127 : -127;
            q[i] = (int8_t)v;
            qsum += v;
        }
        for (size_t r = 0; r < count; r++)
            for (size_t i = 0; i < stride; i++) {
                int c = i < (size_t)dims[d] ? (int)(rng_next() % 255) - 127 : 0;
                if (r % 5 == 0 && i < (size_t)dims[d]) c = (i % 2) ? 127 : -127;
                codes[r * stride + i] = (uint8_t)(c + 128);
            }
        uint32_t rows[64];
        int32_t want[64], got[64];
        for (size_t j = 0; j < 64; j++) {
            rows[j] = (uint32_t)(j < 8 ? j : rng_next() % count);
            int32_t s = 0;
            for (size_t i = 0; i < stride; i++)
                s += ((int32_t)codes[rows[j] * stride + i] - 128) * q[i];
            want[j] = s;
        }
        for (size_t l = 0; l < LEVELS; l++) {
            const flat_kernels *k = flat_kernels_for(levels[l]);
            if (!k) continue;
            for (size_t m = 1; m <= 64; m += 21) {
                k->dot_i8_rows(codes, stride, q, qsum, rows, m, got);
                for (size_t j = 0; j < m; j++) CHECK_INT(got[j], want[j]);
            }
        }
        free(codes);
        free(q);
    }
}

/* ---------------------------------------------------------------- */
/* exact search                                                       */
/* ---------------------------------------------------------------- */

/* Runs body(level) at every level the CPU has, then restores the best. */
#define FOR_EACH_LEVEL(l)               \
    for (size_t l = 0; l < LEVELS; l++) \
        if (flat_set_kernel(levels[l]) == 0)

static void restore_defaults(void) {
    flat_set_prescan(FLAT_PRESCAN_AUTO);
    if (flat_set_kernel("avx512") != 0 && flat_set_kernel("avx2") != 0) flat_set_kernel("scalar");
}

static void test_small_index_and_edge_arguments(void) {
    flat_index *ix = flat_new(4);
    CHECK(flat_new(0) == NULL);
    CHECK(flat_new(-3) == NULL);
    CHECK_INT(flat_dim(ix), 4);
    CHECK_INT(flat_count(ix), 0);
    float q[4] = {1, 0, 0, 0};
    flat_hit out[8];
    CHECK_INT(flat_search(ix, q, NULL, 8, out), 0);
    float rows[5][4] = {
        {0, 1, 0, 0}, {1, 0, 0, 0}, {0.5f, 0.5f, 0, 0}, {1, 0, 0, 0}, {-1, 0, 0, 0}};
    for (int r = 0; r < 5; r++) CHECK_INT(flat_append(ix, rows[r]), r);
    CHECK_INT(flat_count(ix), 5);
    CHECK_INT(flat_search(ix, q, NULL, 0, out), 0);
    /* Rows 1 and 3 tie exactly: the lower row comes first. */
    CHECK_INT(flat_search(ix, q, NULL, 8, out), 5);
    CHECK_INT(out[0].row, 1);
    CHECK_INT(out[1].row, 3);
    CHECK_INT(out[2].row, 2);
    CHECK_INT(out[4].row, 4);
    CHECK(out[0].sim == 1.0f && out[4].sim == -1.0f);
    CHECK(flat_row(ix, 5) == NULL);
    CHECK(flat_row(ix, 2)[0] == 0.5f);
    /* Reserving: impossible sizes fail and change nothing; a real one
     * keeps the rows and lets appends go on. */
    CHECK(flat_reserve(NULL, 10) == -1);
    CHECK(flat_reserve(ix, SIZE_MAX) == -1);
    CHECK(flat_reserve(ix, 3) == 0);
    CHECK(flat_reserve(ix, 5000) == 0);
    CHECK_INT(flat_count(ix), 5);
    CHECK(flat_row(ix, 2)[0] == 0.5f && flat_row(ix, 4)[0] == -1.0f);
    for (int r = 5; r < 5000; r++) CHECK_INT(flat_append(ix, rows[r % 5]), r);
    CHECK_INT(flat_search(ix, q, NULL, 1, out), 1);
    CHECK_INT(out[0].row, 1);
    flat_free(ix);
    flat_free(NULL);
}

static void test_random_data_matches_reference(void) {
    static const int search_dims[] = {3, 17, 64, 384, 385};
    FOR_EACH_LEVEL(l) {
        for (size_t d = 0; d < sizeof search_dims / sizeof search_dims[0]; d++) {
            int dim = search_dims[d];
            flat_index *ix = build(dim, 3000, 0, 0);
            float *q = malloc(sizeof(float) * dim);
            static const size_t ns[] = {1, 10, 100};
            for (int mode = FLAT_PRESCAN_AUTO; mode <= FLAT_PRESCAN_NEVER; mode++) {
                flat_set_prescan(mode);
                for (int t = 0; t < 6; t++) {
                    if (t % 2)
                        query_near_row(ix, q, 0.3);
                    else
                        random_unit(q, dim);
                    for (size_t i = 0; i < 3; i++) {
                        flat_trace tr;
                        CHECK(search_matches(ix, q, NULL, ns[i], &tr));
                        CHECK_INT(tr.allowed, 3000);
                        if (mode == FLAT_PRESCAN_ALWAYS) CHECK_INT(tr.prescanned, 1);
                        if (mode == FLAT_PRESCAN_NEVER) CHECK_INT(tr.prescanned, 0);
                        /* The automatic choice uses the pre-scan here when
                         * the dimension makes it worth it. */
                        if (mode == FLAT_PRESCAN_AUTO && ns[i] <= 100)
                            CHECK_INT(tr.prescanned, dim >= 32);
                    }
                }
            }
            CHECK(reference_sorted(ix, q, 50));
            free(q);
            flat_free(ix);
        }
    }
    restore_defaults();
}

/* Tight clusters, exact duplicates and queries equal to rows: many scores
 * within a few ulps of each other, where any slack in the bounds or any
 * difference between kernels would show. */
static void test_clustered_near_ties(void) {
    int dim = 384;
    size_t count = 6000;
    FOR_EACH_LEVEL(l) {
        flat_index *ix = build(dim, count, 40, 0.002);
        /* Exact duplicates of earlier rows, and copies scaled by one ulp. */
        float *v = malloc(sizeof(float) * dim);
        for (size_t r = 0; r < 600; r++) {
            memcpy(v, flat_row(ix, rng_next() % count), sizeof(float) * dim);
            if (r % 2) v[r % dim] = nextafterf(v[r % dim], 2.0f);
            flat_append(ix, v);
        }
        float *q = malloc(sizeof(float) * dim);
        size_t total_rescored = 0;
        for (int mode = FLAT_PRESCAN_AUTO; mode <= FLAT_PRESCAN_ALWAYS; mode++) {
            flat_set_prescan(mode);
            for (int t = 0; t < 8; t++) {
                if (t % 2)
                    query_near_row(ix, q, 0);
                else
                    query_near_row(ix, q, 0.001);
                static const size_t ns[] = {1, 10, 64, 300};
                for (size_t i = 0; i < 4; i++) {
                    flat_trace tr;
                    CHECK(search_matches(ix, q, NULL, ns[i], &tr));
                    total_rescored += tr.rescored;
                    if (ns[i] <= 64) CHECK_INT(tr.prescanned, 1);
                }
            }
        }
        /* The bounds must still prune most rows, or the pre-scan is moot. */
        CHECK(total_rescored < 2 * 8 * 4 * flat_count(ix) / 2);
        free(v);
        free(q);
        flat_free(ix);
    }
    restore_defaults();
}

static void test_allow_bitmaps(void) {
    int dim = 64;
    size_t count = 4100; /* not a multiple of 64: a partial last word */
    static const double density[] = {0.0, 0.002, 0.01, 0.5, 0.97, 1.0};
    FOR_EACH_LEVEL(l) {
        flat_index *ix = build(dim, count, 30, 0.05);
        float *q = malloc(sizeof(float) * dim);
        for (int mode = FLAT_PRESCAN_AUTO; mode <= FLAT_PRESCAN_NEVER; mode++) {
            flat_set_prescan(mode);
            for (size_t d = 0; d < sizeof density / sizeof density[0]; d++) {
                uint64_t *allow = random_bitmap(count, density[d]);
                size_t allowed = 0;
                for (size_t r = 0; r < count; r++) allowed += bit_set(allow, r);
                for (int t = 0; t < 4; t++) {
                    query_near_row(ix, q, 0.05);
                    static const size_t ns[] = {1, 5, 10, 5000};
                    for (size_t i = 0; i < 4; i++) {
                        flat_trace tr;
                        CHECK(search_matches(ix, q, allow, ns[i], &tr));
                        CHECK_INT(tr.allowed, allowed);
                        CHECK(tr.rescored <= allowed);
                    }
                }
                if (density[d] == 1.0) {
                    /* All bits set is the same as no bitmap. */
                    flat_hit a[20], b[20];
                    size_t na = flat_search(ix, q, allow, 20, a);
                    size_t nb = flat_search(ix, q, NULL, 20, b);
                    CHECK_INT(na, nb);
                    CHECK(memcmp(a, b, na * sizeof a[0]) == 0);
                }
                if (density[d] == 0.0) {
                    flat_hit a[4];
                    CHECK_INT(flat_search(ix, q, allow, 4, a), 0);
                }
                free(allow);
            }
        }
        free(q);
        flat_free(ix);
    }
    restore_defaults();
}

/* n past the allowed count returns every allowed row, sorted. */
static void test_n_beyond_count(void) {
    int dim = 40;
    FOR_EACH_LEVEL(l) {
        flat_index *ix = build(dim, 2500, 10, 0.1);
        float *q = malloc(sizeof(float) * dim);
        random_unit(q, dim);
        uint64_t *allow = random_bitmap(2500, 0.003);
        size_t allowed = 0;
        for (size_t r = 0; r < 2500; r++) allowed += bit_set(allow, r);
        for (int mode = FLAT_PRESCAN_AUTO; mode <= FLAT_PRESCAN_NEVER; mode++) {
            flat_set_prescan(mode);
            flat_trace tr;
            CHECK(search_matches(ix, q, NULL, 2600, &tr));
            CHECK(search_matches(ix, q, allow, allowed + 1, &tr));
            CHECK(search_matches(ix, q, allow, allowed, &tr));
            flat_hit *out = malloc(sizeof *out * 3000);
            CHECK_INT(flat_search(ix, q, NULL, 3000, out), 2500);
            CHECK_INT(flat_search(ix, q, allow, 3000, out), allowed);
            free(out);
        }
        CHECK(reference_sorted(ix, q, 2600));
        free(allow);
        free(q);
        flat_free(ix);
    }
    restore_defaults();
}

/* After set and swap_remove the quantised copy must describe the new rows:
 * a stale code or bound would let the pre-scan drop the row that should
 * win. */
/* trials searches for the n rows nearest a query near a row of ix, in
 * each pre-scan mode, each matching the reference; a forced pre-scan runs
 * (small: only then, the automatic choice scans in float32). */
static void search_each_mode(const flat_index *ix, float *q, size_t n, int trials, int small) {
    for (int mode = FLAT_PRESCAN_AUTO; mode <= FLAT_PRESCAN_NEVER; mode++) {
        flat_set_prescan(mode);
        for (int t = 0; t < trials; t++) {
            flat_trace tr;
            query_near_row(ix, q, 0.2);
            CHECK(search_matches(ix, q, NULL, n, &tr));
            if (small)
                CHECK_INT(tr.prescanned, mode == FLAT_PRESCAN_ALWAYS);
            else if (mode == FLAT_PRESCAN_ALWAYS)
                CHECK_INT(tr.prescanned, 1);
        }
    }
    flat_set_prescan(FLAT_PRESCAN_AUTO);
}

/* A small index keeps its float rows alone (no int8 codes: a namespace of
 * ten memories costs its vectors, not a quarter more); growing past 1,024
 * rows gives every row its codes, and searches stay exact before and after,
 * a forced pre-scan included, through swap_remove and set too. */
static void test_small_index_keeps_no_codes(void) {
    const int dim = 384;
    flat_index *ix = flat_new(dim);
    float *q = malloc(sizeof(float) * dim), *v = malloc(sizeof(float) * dim);
    CHECK_INT(flat_reserve(ix, 10), 0); /* as a namespace's load sizes it */
    for (size_t r = 0; r < 10; r++) {
        random_unit(v, dim);
        CHECK_INT(flat_append(ix, v), r);
    }
    size_t vec_bytes = 10 * (size_t)dim * sizeof(float);
    CHECK(flat_memory_bytes(ix) < vec_bytes + 1024); /* codes would add 3,840 + quant */
    const float *vecs;
    const uint8_t *codes;
    const void *quant;
    flat_raw(ix, &vecs, &codes, &quant);
    CHECK(codes == NULL && quant == NULL);
    search_each_mode(ix, q, 5, 4, 1);
    for (size_t r = 10; r < 3000; r++) {
        random_unit(v, dim);
        CHECK_INT(flat_append(ix, v), r);
    }
    flat_raw(ix, &vecs, &codes, &quant);
    CHECK(codes != NULL && quant != NULL);
    /* The codes of the first rows, made when the index grew, are the ones a
     * row quantised on its own gets. */
    uint8_t *one = malloc(flat_code_stride(ix) + flat_quant_bytes());
    for (size_t r = 0; r < 3000; r += 97) {
        flat_quantise_copy(ix, r, one, one + flat_code_stride(ix));
        CHECK(memcmp(one, codes + r * flat_code_stride(ix), (size_t)dim) == 0);
        CHECK(memcmp(one + flat_code_stride(ix), (const char *)quant + r * flat_quant_bytes(),
                     flat_quant_bytes()) == 0);
    }
    flat_swap_remove(ix, 3);
    random_unit(v, dim);
    flat_set(ix, 5, v);
    search_each_mode(ix, q, 10, 6, 0);
    free(one);
    free(q);
    free(v);
    flat_free(ix);
}

static void test_set_and_swap_remove_keep_codes(void) {
    int dim = 384;
    FOR_EACH_LEVEL(l) {
        flat_set_prescan(FLAT_PRESCAN_ALWAYS);
        flat_index *ix = build(dim, 3000, 20, 0.05);
        float *q = malloc(sizeof(float) * dim), *v = malloc(sizeof(float) * dim);
        flat_hit out[10];
        for (int round = 0; round < 30; round++) {
            size_t count = flat_count(ix);
            random_unit(q, dim); /* far from every cluster */
            /* set: row i becomes the query itself, so it must come first. */
            size_t i = rng_next() % count;
            flat_set(ix, i, q);
            CHECK(memcmp(flat_row(ix, i), q, sizeof(float) * dim) == 0);
            flat_trace tr;
            CHECK(flat_search_traced(ix, q, NULL, 10, out, &tr) == 10);
            CHECK_INT(out[0].row, i);
            CHECK_INT(tr.prescanned, 1);
            CHECK(search_matches(ix, q, NULL, 10, NULL));
            /* swap_remove: the last row becomes a query near a cluster, row
             * j a flat vector (a much smaller int8 scale), then row j is
             * removed, moving the last row into j: j must come first. Codes
             * or scales left behind would rank it below its cluster. */
            query_near_row(ix, q, 0.02);
            flat_set(ix, count - 1, q);
            size_t j = rng_next() % (count - 1);
            for (int k = 0; k < dim; k++) v[k] = (k % 3 ? 1.0f : -1.0f) / sqrtf((float)dim);
            flat_set(ix, j, v);
            flat_swap_remove(ix, j);
            CHECK_INT(flat_count(ix), count - 1);
            CHECK(memcmp(flat_row(ix, j), q, sizeof(float) * dim) == 0);
            CHECK(flat_search(ix, q, NULL, 10, out) == 10);
            CHECK_INT(out[0].row, j);
            CHECK(search_matches(ix, q, NULL, 10, NULL));
            /* Removing the last row itself. */
            flat_swap_remove(ix, flat_count(ix) - 1);
            near_unit(v, q, dim, 0.01);
            CHECK(search_matches(ix, v, NULL, 25, NULL));
        }
        free(q);
        free(v);
        flat_free(ix);
    }
    restore_defaults();
}

/* Rows and queries the int8 bounds cannot describe (NaN, infinities, huge
 * and tiny values, zeros) must still give the reference's answer. */
static void test_odd_values(void) {
    int dim = 48;
    FOR_EACH_LEVEL(l) {
        flat_index *ix = build(dim, 2300, 8, 0.1);
        float *v = calloc(dim, sizeof(float));
        flat_append(ix, v); /* zero row */
        v[3] = NAN;
        flat_append(ix, v);
        v[3] = INFINITY;
        flat_append(ix, v);
        v[3] = 1e30f;
        flat_append(ix, v);
        v[3] = 1e-35f; /* subnormal-ish products */
        v[5] = -3e-38f;
        flat_append(ix, v);
        random_unit(v, dim);
        for (int i = 0; i < dim; i++) v[i] *= 1e-20f;
        flat_append(ix, v);
        float *q = malloc(sizeof(float) * dim);
        for (int mode = FLAT_PRESCAN_AUTO; mode <= FLAT_PRESCAN_NEVER; mode++) {
            flat_set_prescan(mode);
            for (int t = 0; t < 7; t++) {
                query_near_row(ix, q, 0.1);
                if (t == 1) memset(q, 0, sizeof(float) * dim);
                if (t == 2) q[0] = NAN;
                if (t == 3) q[1] = -INFINITY;
                if (t == 4)
                    for (int i = 0; i < dim; i++) q[i] *= 1e-33f;
                if (t == 5)
                    for (int i = 0; i < dim; i++) q[i] *= 1e20f;
                CHECK(search_matches(ix, q, NULL, 10, NULL));
                CHECK(search_matches(ix, q, NULL, 3000, NULL));
            }
        }
        free(v);
        free(q);
        flat_free(ix);
    }
    restore_defaults();
}

/* Scales x and snaps it onto the int8 grid of a power-of-two step with its
 * largest component at exactly +-127 steps, so that flat.c's quantisation
 * of x loses nothing (e = 0). */
static void snap_to_codes(float *x, int dim) {
    double maxabs = 0;
    for (int i = 0; i < dim; i++) maxabs = fmax(maxabs, fabs(x[i]));
    double step = exp2(ceil(log2(maxabs / 127.0))), scale = 127 * step / maxabs;
    for (int i = 0; i < dim; i++) x[i] = (float)(step * nearbyint(x[i] * scale / step));
}

/* Data on which the int8 score is off by nearly the whole bound, upwards
 * for some rows and downwards for others, while the true scores of both
 * kinds interleave. Then the exact answer depends on the bound: any smaller
 * one (a bound that is not one) prunes true top rows. One case per term of
 * the bound, with the other term made zero:
 *   - residue: the rows are exact on the int8 grid (e = 0) and lie along
 *     +-f, the query's own quantisation residue, so the int8 score misses
 *     x.f = +-|x| |f|;
 *   - codes: the query is a sign vector, exact on its grid (f ~ 0), and
 *     each row's components sit 0.49 of a step off its codes towards
 *     +-sign(q), so the int8 score misses t d.e = +-|t d| |e| (1 - 1/dim).
 * The query's quantisation is recomputed here the way flat.c does it. */
static void test_rows_that_test_the_bounds(void) {
    int dim = 384;
    size_t count = 4000;
    float *q = malloc(sizeof(float) * dim), *x = malloc(sizeof(float) * dim);
    double *f = malloc(sizeof(double) * dim);
    FOR_EACH_LEVEL(l) {
        flat_set_prescan(FLAT_PRESCAN_ALWAYS);
        for (int family = 0; family < 2; family++) {
            if (family == 0)
                random_unit(q, dim);
            else
                for (int i = 0; i < dim; i++) q[i] = rng_next() % 2 ? 0.03125f : -0.03125f;
            double maxabs = 0, fnorm = 0, fq = 0;
            for (int i = 0; i < dim; i++) maxabs = fmax(maxabs, fabs(q[i]));
            float t = (float)(maxabs / 127.0);
            for (int i = 0; i < dim; i++) {
                f[i] = q[i] - (double)t * nearbyint(q[i] / (double)t);
                fnorm += f[i] * f[i];
                fq += f[i] * q[i];
            }
            fnorm = sqrt(fnorm);
            flat_index *ix = flat_new(dim);
            for (size_t r = 0; r < count; r++) {
                double w = rng_next() % 2 ? 1 : -1;
                if (family == 0) {
                    /* x = a f/|f| + eta q, with eta cancelling the score
                     * that a brings, plus a small spread. */
                    double a = 0.9 * w, eta = -a * fq / fnorm + 0.3 * fnorm * rng_uniform();
                    for (int i = 0; i < dim; i++) x[i] = (float)(a * f[i] / fnorm + eta * q[i]);
                    snap_to_codes(x, dim);
                } else {
                    /* Codes: noise in {-1, 0, 1}, plus -w sign(q) on about
                     * half the components to cancel the score the 0.49
                     * offsets bring; the first component pins the scale. */
                    double step = 0x1p-8;
                    for (int i = 0; i < dim; i++) {
                        double sign = q[i] > 0 ? 1 : -1;
                        double c = (double)(int)(rng_next() % 3) - 1;
                        if (i < 188) c -= w * sign;
                        x[i] = (float)(step * (c + 0.49 * w * sign));
                    }
                    x[0] = (float)(127 * step);
                }
                flat_append(ix, x);
            }
            static const size_t ns[] = {1, 10, 40};
            for (size_t i = 0; i < 3; i++) {
                flat_trace tr;
                CHECK(search_matches(ix, q, NULL, ns[i], &tr));
                CHECK_INT(tr.prescanned, 1);
            }
            flat_free(ix);
        }
    }
    free(q);
    free(x);
    free(f);
    restore_defaults();
}

/* A spiky query (one large component, the rest just under half an int8
 * step) is described so badly by its codes that the bounds could not prune:
 * the search must notice and scan in float32, with the same answer. */
static void test_spiky_query_scans_float(void) {
    int dim = 1024;
    flat_index *ix = build(dim, 2100, 10, 0.02);
    float *q = malloc(sizeof(float) * dim);
    for (int i = 0; i < dim; i++) q[i] = 0.0039f * (i % 2 ? 1 : -1);
    q[7] = 1;
    flat_trace tr;
    CHECK(search_matches(ix, q, NULL, 10, &tr));
    CHECK_INT(tr.prescanned, 0);
    /* A well-behaved query on the same index does pre-scan. */
    query_near_row(ix, q, 0.01);
    CHECK(search_matches(ix, q, NULL, 10, &tr));
    CHECK_INT(tr.prescanned, 1);
    free(q);
    flat_free(ix);
}

/* dim 384, more than 10k rows, realistic clusters: the automatic path must
 * pre-scan, prune hard, and still match the reference. */
static void test_large_384(void) {
    int dim = 384;
    flat_index *ix = build(dim, 12000, 300, 0.04);
    float *q = malloc(sizeof(float) * dim);
    uint64_t *half = random_bitmap(12000, 0.5);
    FOR_EACH_LEVEL(l) {
        size_t rescored = 0, searches = 0;
        for (int t = 0; t < 10; t++) {
            query_near_row(ix, q, 0.03);
            flat_trace tr;
            CHECK(search_matches(ix, q, NULL, 10, &tr));
            CHECK_INT(tr.prescanned, 1);
            rescored += tr.rescored;
            CHECK(search_matches(ix, q, half, 10, &tr));
            CHECK_INT(tr.prescanned, 1);
            rescored += tr.rescored;
            searches += 2;
        }
        fprintf(stderr, "    %s: %.1f rows rescored per search of 12000\n", levels[l],
                (double)rescored / searches);
        CHECK(rescored / searches < 12000 / 10);
    }
    free(half);
    free(q);
    flat_free(ix);
    restore_defaults();
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--kernel-name") == 0) {
        printf("%s\n", flat_kernel_name());
        return 0;
    }
    TEST_INIT(argc, argv);
    RUN(test_kernel_selection);
    RUN(test_env_forces_level);
    RUN(test_dot_against_double);
    RUN(test_dot_rows_scattered);
    RUN(test_int8_kernels);
    RUN(test_small_index_and_edge_arguments);
    RUN(test_random_data_matches_reference);
    RUN(test_clustered_near_ties);
    RUN(test_allow_bitmaps);
    RUN(test_n_beyond_count);
    RUN(test_set_and_swap_remove_keep_codes);
    RUN(test_small_index_keeps_no_codes);
    RUN(test_odd_values);
    RUN(test_rows_that_test_the_bounds);
    RUN(test_spiky_query_scans_float);
    RUN(test_large_384);
    return TEST_EXIT();
}
