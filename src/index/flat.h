/*
 * flat.h: exact vector search over in-memory arrays.
 *
 * A flat index holds the float32 vectors of one namespace in one contiguous
 * row-major array (plus whatever quantised copy speeds the scan) and answers
 * "the n rows most similar to q by inner product" exactly. Vectors are
 * L2-normalised by the embedders, so inner product is cosine similarity.
 *
 * Filters are applied during the scan: the caller passes an optional bitmap
 * of allowed rows (bit i set = row i may be returned), built from its
 * predicate before the scan; rows outside it are never scored.
 *
 * The SIMD kernels (AVX-512, AVX2, scalar) are chosen once at run time from
 * the CPU's features; flat_kernel_name() says which. REMEM_SIMD=scalar|avx2|
 * avx512 in the environment forces a level (for tests and benchmarks).
 */
#ifndef REMEM_FLAT_H
#define REMEM_FLAT_H

#include <stddef.h>
#include <stdint.h>

typedef struct flat_index flat_index;

/* A new empty index of dimension dim. NULL when out of memory. */
flat_index *flat_new(int dim);
void flat_free(flat_index *ix);
int flat_dim(const flat_index *ix);
size_t flat_count(const flat_index *ix);

/* Append a row (dim floats, copied); returns its row number, or -1 when out
 * of memory. */
long flat_append(flat_index *ix, const float *v);
/* Overwrite row i (for updates). */
void flat_set(flat_index *ix, size_t i, const float *v);
/* Row i's vector (valid until the next append/set/remove). */
const float *flat_row(const flat_index *ix, size_t i);
/* Remove row i by moving the last row into its place (the caller mirrors
 * this move in its own per-row arrays). */
void flat_swap_remove(flat_index *ix, size_t i);

typedef struct flat_hit {
    uint32_t row;
    float sim;
} flat_hit;

/* The up to n rows with the highest inner product with q, best first, among
 * rows allowed by allow (NULL: all rows; else a bitmap of flat_count() bits,
 * 64 per word). Writes up to n hits to out and returns how many. Exact: the
 * same rows and order (ties broken by lower row) as flat_search_reference. */
size_t flat_search(const flat_index *ix, const float *q, const uint64_t *allow,
                   size_t n, flat_hit *out);
/* The plain scalar scan, for tests and as the benchmark's baseline. */
size_t flat_search_reference(const flat_index *ix, const float *q,
                             const uint64_t *allow, size_t n, flat_hit *out);

/* Inner product of two vectors with the chosen kernel. */
float flat_dot(const float *a, const float *b, int dim);
/* "avx512", "avx2" or "scalar". */
const char *flat_kernel_name(void);

#endif
