/*
 * flat_kernels.h: the SIMD kernels behind flat.c (internal to src/index).
 *
 * Two families, each at three levels (scalar, AVX2, AVX-512):
 *
 *   - float dots in one canonical order. Every level computes a dot product
 *     as 16 lane sums (lane l holds a[i]*b[i] for i = l mod 16, each product
 *     rounded to float and then added, in increasing i, padding the last
 *     block with zeros), reduced by the fixed tree l+8, l+4, l+2, l+1. So all
 *     levels give bit-identical results, and "exact" search can promise the
 *     very rows and order of the scalar reference whatever the CPU.
 *     Products and sums are kept apart (no FMA) so that plain C can
 *     reproduce them.
 *
 *   - int8 dots for the pre-scan: rows are stored as uint8 codes biased by
 *     128 (code c in [-127, 127] stored as c + 128), padded to a multiple of
 *     64 bytes with 128; the query is int8 codes padded with 0. The kernels
 *     return the exact integer sum of c[i] * d[i]; integers make every level
 *     agree trivially.
 *
 * Kernels work on a list of row numbers (up to any length), so the same code
 * serves the unfiltered scan, the filtered scan (rows taken from the allow
 * bitmap a word at a time) and the rescoring of candidates.
 */
#ifndef REMEM_FLAT_KERNELS_H
#define REMEM_FLAT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* Lanes of the canonical float order. */
#define FLAT_LANES      16
/* Int8 rows are padded to a multiple of this many bytes. */
#define FLAT_CODE_ALIGN 64

typedef struct flat_kernels {
    const char *name; /* "scalar", "avx2", "avx512" */
    /* Canonical dot of a and b (dim floats each). */
    float (*dot)(const float *a, const float *b, int dim);
    /* out[j] = canonical dot of row rows[j] of base (row stride dim floats)
     * with q, for j < m. */
    void (*dot_rows)(const float *base, int dim, const float *q, const uint32_t *rows, size_t m,
                     float *out);
    /* out[j] = sum over the code stride of (code - 128) * qcodes, for row
     * rows[j] of codes (stride bytes per row, a multiple of 64); qsum is the
     * sum of qcodes (the VNNI kernel needs it to remove the bias). */
    void (*dot_i8_rows)(const uint8_t *codes, size_t stride, const int8_t *qcodes, int32_t qsum,
                        const uint32_t *rows, size_t m, int32_t *out);
} flat_kernels;

/* The kernels of one level, or NULL when this CPU cannot run it. The names
 * are "scalar", "avx2", "avx512". */
const flat_kernels *flat_kernels_for(const char *name);

#endif
