/*
 * test_flat_bulk.c: flat_append_many, the bulk append that loading a
 * namespace uses. Its rows must be the very rows n flat_append calls make:
 * the same floats, and the same int8 codes and bounds, which the index
 * keeps private but which decide what a search does. So an index built in
 * uneven batches and one built row by row (each at a different SIMD level,
 * since the quantiser follows the level) must answer every query with the
 * same hits, bit for bit, and rescore the same number of rows in the int8
 * pre-scan; and both must match the scalar reference. Rows include the odd
 * ones the quantiser treats apart (zero, tiny, huge, NaN, infinite, exact
 * halves of the scale).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/flat.h"
#include "test.h"

static const char *const levels[] = {"scalar", "avx2", "avx512"};
#define LEVELS (sizeof levels / sizeof levels[0])

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static double rng_unit(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

/* Row r of a data set where most rows are clustered unit-ish vectors and
 * every 50th is one of the odd kinds. */
static void make_row(float *x, int dim, size_t r) {
    for (int i = 0; i < dim; i++) x[i] = (float)(rng_unit() * 2 - 1) * 0.1f;
    x[r % dim] += 1.0f;
    if (r % 50 != 7) return;
    switch ((r / 50) % 7) {
    case 0: memset(x, 0, (size_t)dim * sizeof *x); break;
    case 1:
        for (int i = 0; i < dim; i++) x[i] *= 1e-35f;
        break;
    case 2:
        for (int i = 0; i < dim; i++) x[i] *= 1e20f;
        break;
    case 3: x[dim / 2] = NAN; break;
    case 4: x[0] = -INFINITY; break;
    case 5: /* components at exact halves of the scale: rounding ties */
        for (int i = 0; i < dim; i++)
            x[i] = (i % 4 == 0 ? 1.0f : 0.5f / 127 * (float)(i % 254 | 1)) * (i % 2 ? -1 : 1);
        break;
    default:
        for (int i = 0; i < dim; i++) x[i] = (float)(i % 3) - 1.0f;
        break;
    }
}

static int level_available(const char *name) { return flat_kernel_available(name); }

static void restore_defaults(void) {
    flat_set_prescan(FLAT_PRESCAN_AUTO);
    if (flat_set_kernel("avx512") != 0 && flat_set_kernel("avx2") != 0) flat_set_kernel("scalar");
}

/* Build the same rows one by one at level `single` and in batches at level
 * `bulk`, then compare every row and many searches. */
static void compare_builds(int dim, size_t rows, const char *single, const char *bulk) {
    float *data = malloc(rows * (size_t)dim * sizeof *data);
    for (size_t r = 0; r < rows; r++) make_row(data + r * (size_t)dim, dim, r);

    flat_index *a = flat_new(dim), *b = flat_new(dim);
    CHECK(flat_set_kernel(single) == 0);
    for (size_t r = 0; r < rows; r++) CHECK_INT(flat_append(a, data + r * (size_t)dim), r);
    CHECK(flat_set_kernel(bulk) == 0);
    /* Uneven batches, past a reallocation or two (no reserve first). */
    static const size_t batches[] = {1, 5, 0, 63, 256, 700};
    size_t done = 0;
    for (size_t k = 0; done < rows; k++) {
        size_t n = batches[k % (sizeof batches / sizeof *batches)];
        if (n > rows - done) n = rows - done;
        CHECK_INT(flat_append_many(b, data + done * (size_t)dim, n), done);
        done += n;
    }
    CHECK_INT(flat_count(b), rows);
    for (size_t r = 0; r < rows; r++)
        CHECK(memcmp(flat_row(a, r), flat_row(b, r), (size_t)dim * sizeof(float)) == 0);

    flat_set_prescan(FLAT_PRESCAN_ALWAYS);
    float *q = malloc((size_t)dim * sizeof *q);
    flat_hit ha[20], hb[20], hr[20];
    size_t prescanned = 0;
    for (int t = 0; t < 40; t++) {
        const float *near = data + (size_t)(rng_unit() * (double)rows) * (size_t)dim;
        for (int i = 0; i < dim; i++)
            q[i] = isfinite(near[i]) && fabsf(near[i]) < 10 ? near[i] : 0.0f;
        q[t % dim] += 0.5f;
        size_t n = 1 + (size_t)t % 20;
        flat_trace ta, tb;
        size_t na = flat_search_traced(a, q, NULL, n, ha, &ta);
        size_t nb = flat_search_traced(b, q, NULL, n, hb, &tb);
        size_t nr = flat_search_reference(b, q, NULL, n, hr);
        CHECK_INT(na, nb);
        CHECK_INT(nb, nr);
        CHECK_INT(ta.prescanned, tb.prescanned);
        CHECK_INT(ta.rescored, tb.rescored); /* same codes and bounds */
        prescanned += (size_t)tb.prescanned;
        for (size_t j = 0; j < nb && j < na && j < nr; j++) {
            CHECK_INT(ha[j].row, hb[j].row);
            CHECK_INT(hb[j].row, hr[j].row);
            CHECK(memcmp(&ha[j].sim, &hb[j].sim, sizeof(float)) == 0);
        }
    }
    /* The pre-scan must have run, or the codes were never put to the test. */
    if (dim >= 8) CHECK(prescanned > 20);
    free(q);
    flat_free(a);
    flat_free(b);
    free(data);
    restore_defaults();
}

static void test_bulk_matches_single_appends(void) {
    static const int dims[] = {1, 7, 8, 9, 64, 383, 384, 385};
    for (size_t d = 0; d < sizeof dims / sizeof *dims; d++)
        for (size_t l = 0; l < LEVELS; l++) {
            if (!level_available(levels[l])) continue;
            /* The other build at the next available level down (or the same). */
            const char *other = levels[l];
            for (size_t m = l + 1; m < l + LEVELS; m++)
                if (level_available(levels[m % LEVELS])) {
                    other = levels[m % LEVELS];
                    break;
                }
            compare_builds(dims[d], 2600, levels[l], other);
        }
}

static void test_bulk_edge_arguments(void) {
    flat_index *ix = flat_new(4);
    float v[8] = {1, 0, 0, 0, 0, 1, 0, 0};
    CHECK_INT(flat_append_many(ix, v, 0), 0);
    CHECK_INT(flat_append_many(ix, NULL, 0), 0);
    CHECK_INT(flat_append_many(ix, NULL, 1), -1);
    CHECK_INT(flat_append_many(NULL, v, 1), -1);
    CHECK_INT(flat_count(ix), 0);
    CHECK_INT(flat_append_many(ix, v, 2), 0);
    CHECK_INT(flat_append_many(ix, v, 1), 2);
    CHECK_INT(flat_count(ix), 3);
    CHECK(flat_row(ix, 1)[1] == 1.0f && flat_row(ix, 2)[0] == 1.0f);
    /* Mixed with single appends and removals, rows stay in step. */
    CHECK_INT(flat_append(ix, v + 4), 3);
    flat_swap_remove(ix, 0);
    CHECK(flat_row(ix, 0)[1] == 1.0f);
    flat_hit h[4];
    float q[4] = {0, 1, 0, 0};
    CHECK_INT(flat_search(ix, q, NULL, 4, h), 3);
    CHECK(h[0].sim == 1.0f && h[1].sim == 1.0f && h[2].sim == 0.0f);
    flat_free(ix);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_bulk_edge_arguments);
    RUN(test_bulk_matches_single_appends);
    return TEST_EXIT();
}
