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

/* Bytes the index holds (its arrays at capacity, mapped ones by their
 * length), for the engine's cache budget. */
size_t flat_memory_bytes(const flat_index *ix);
/* Make room for rows rows in all (appends up to there will not reallocate);
 * 0, or -1 when out of memory (the index is unchanged). Loading a namespace
 * of known size this way saves the copies and page faults of growing. */
int flat_reserve(flat_index *ix, size_t rows);
/* Append a row (dim floats, copied); returns its row number, or -1 when out
 * of memory. */
long flat_append(flat_index *ix, const float *v);
/* Append n rows at once (n * dim floats, row-major, copied); returns the
 * first new row's number, or -1 when out of memory (nothing appended). The
 * same rows as n flat_append calls, with one copy and a tight quantising
 * loop: what loading a namespace uses. */
long flat_append_many(flat_index *ix, const float *vecs, size_t n);
/* THE RAW ARRAYS, for the engine's cache snapshots (src/engine/
 * cache_snap.c): a saved index is taken back as its arrays lie in the
 * file instead of being quantised again row by row. Row i's float32 vector is dim floats
 * at vecs + i * dim, its int8 codes code_stride bytes at codes + i *
 * code_stride, its scale and bounds quant_bytes at quant + i * quant_bytes;
 * a code_stride or quant_bytes that differs from the one saved means
 * another layout (refuse the saved one). */
size_t flat_code_stride(const flat_index *ix);
size_t flat_quant_bytes(void);
/* The arrays of rows [0, flat_count) (valid until the next change); codes
 * and quant are NULL for an index too small to keep codes (under 1,024
 * rows): flat_quantise_copy gives a row's. */
void flat_raw(const flat_index *ix, const float **vecs, const uint8_t **codes, const void **quant);
/* Row i's codes (code_stride bytes, zero padded) and quant (quant_bytes), as
 * an index that keeps codes holds them. */
void flat_quantise_copy(const flat_index *ix, size_t i, uint8_t *codes, void *quant);
/* Take n saved rows without copying them: vecs and codes are private
 * writable memory maps (mmap) of vecs_bytes and codes_bytes, with room for
 * cap rows each, holding rows [0, n) in flat_raw's layout; quant (n
 * entries) is copied. The index unmaps them when it is freed or outgrows
 * them (then its rows move to memory of its own). ix must be empty. 0, or
 * -1 (nothing taken: the caller still owns the maps). */
int flat_adopt_mapped(flat_index *ix, size_t n, size_t cap, float *vecs, size_t vecs_bytes,
                      uint8_t *codes, size_t codes_bytes, const void *quant);
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
size_t flat_search(const flat_index *ix, const float *q, const uint64_t *allow, size_t n,
                   flat_hit *out);
/* The plain scalar scan, for tests and as the benchmark's baseline. */
size_t flat_search_reference(const flat_index *ix, const float *q, const uint64_t *allow, size_t n,
                             flat_hit *out);

/* Inner product of two vectors with the chosen kernel. Every kernel sums in
 * the same order (16 lanes, then a fixed tree), so all levels and the
 * reference return the same bits. */
float flat_dot(const float *a, const float *b, int dim);
/* "avx512", "avx2" or "scalar". */
const char *flat_kernel_name(void);

/* HOW THE SEARCH IS EXACT AND FAST
 * Beside the float32 rows the index keeps each row as int8 codes with a
 * per-row scale, plus rigorous bounds on what the quantisation loses. A
 * search over a large index (>= 2048 rows) first scores every allowed row
 * with the int8 codes (a quarter of the bytes), which brackets each row's
 * float32 score in [approx - bound, approx + bound]; every row whose upper
 * end reaches the n-th best lower end is then scored in float32, and only
 * those compete for the result. Rows left out are provably below n others,
 * so the answer is the reference's, bit for bit. Small indexes, n close to
 * the allowed count, and odd queries (zero, non-finite, huge, or so spiky
 * that int8 codes describe them badly) use the plain float32 scan. */

/* What one search did; for tests and benchmarks. */
typedef struct flat_trace {
    int prescanned;  /* 1: int8 pre-scan then float32 rescore; 0: float32 scan */
    size_t allowed;  /* rows the filter allowed */
    size_t rescored; /* rows scored in float32 */
} flat_trace;

/* flat_search, also filling *trace (may be NULL). */
size_t flat_search_traced(const flat_index *ix, const float *q, const uint64_t *allow, size_t n,
                          flat_hit *out, flat_trace *trace);

/* For tests and benchmarks; not thread-safe against running searches. */
/* 1 when this CPU can run the level ("scalar", "avx2", "avx512"). */
int flat_kernel_available(const char *name);
/* Use that level from now on; 0, or -1 when unknown or not available. */
int flat_set_kernel(const char *name);
/* When flat_search uses the int8 pre-scan: FLAT_PRESCAN_AUTO (the default,
 * by index size and n), FLAT_PRESCAN_ALWAYS (whenever the query allows it,
 * even for tiny indexes and huge n) or FLAT_PRESCAN_NEVER. */
enum { FLAT_PRESCAN_AUTO = 0, FLAT_PRESCAN_ALWAYS = 1, FLAT_PRESCAN_NEVER = 2 };
void flat_set_prescan(int mode);

#endif
