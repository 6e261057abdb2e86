/*
 * flat_kernels.c: the scalar, AVX2 and AVX-512 kernels of the flat index.
 *
 * The library is built without -m flags, so each SIMD function carries its
 * own target attribute and is only ever called after flat_kernels_for() has
 * checked the CPU with __builtin_cpu_supports.
 *
 * The float kernels all follow the canonical order described in
 * flat_kernels.h (16 lanes, products rounded before they are added, fixed
 * reduction tree), which is why they use mul + add rather than FMA: the
 * scalar version must be able to produce the same bits in plain C. GCC in
 * -std=c11 mode never contracts a*b+c into an FMA; clang is told so below.
 *
 * The int8 kernels compute exact integer sums, so their only duty is to be
 * fast: AVX-512 VNNI (vpdpbusd: unsigned row bytes times signed query bytes,
 * the bias of 128 removed once with the query's code sum), and AVX2 with the
 * usual sign trick (|c| times sign(c)*d through vpmaddubsw, which cannot
 * saturate since |c|, |d| <= 127).
 */
#include "index/flat_kernels.h"

#include <immintrin.h>
#include <string.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* ---------------------------------------------------------------- */
/* scalar                                                             */
/* ---------------------------------------------------------------- */

static float scalar_reduce(float lane[FLAT_LANES]) {
    for (int width = FLAT_LANES / 2; width >= 1; width /= 2)
        for (int l = 0; l < width; l++) lane[l] = lane[l] + lane[l + width];
    return lane[0];
}

static float scalar_dot(const float *a, const float *b, int dim) {
    float lane[FLAT_LANES] = {0};
    int i = 0;
    for (; i + FLAT_LANES <= dim; i += FLAT_LANES)
        for (int l = 0; l < FLAT_LANES; l++) {
            float product = a[i + l] * b[i + l];
            lane[l] = lane[l] + product;
        }
    if (i < dim) {
        /* The SIMD kernels add zero products for the padding of the last
         * block; doing the same keeps even the sign of a zero identical. */
        for (int l = 0; l < FLAT_LANES; l++) {
            float product = i + l < dim ? a[i + l] * b[i + l] : 0.0f;
            lane[l] = lane[l] + product;
        }
    }
    return scalar_reduce(lane);
}

static void scalar_dot_rows(const float *base, int dim, const float *q, const uint32_t *rows,
                            size_t m, float *out) {
    for (size_t j = 0; j < m; j++)
        out[j] = scalar_dot(base + (size_t)rows[j] * (size_t)dim, q, dim);
}

static void scalar_dot_i8_rows(const uint8_t *codes, size_t stride, const int8_t *qcodes,
                               int32_t qsum, const uint32_t *rows, size_t m, int32_t *out) {
    (void)qsum;
    for (size_t j = 0; j < m; j++) {
        const uint8_t *row = codes + (size_t)rows[j] * stride;
        /* Written as int8 times int8 over blocks of 64, a shape the
         * compiler turns into SSE2 multiply-adds even in this plain build;
         * c + 128 -> c is a flip of the top bit. */
        int32_t sum = 0;
        for (size_t i = 0; i < stride; i += 64) {
            int32_t block = 0;
            for (size_t l = 0; l < 64; l++) block += (int8_t)(row[i + l] ^ 0x80) * qcodes[i + l];
            sum += block;
        }
        out[j] = sum;
    }
}

/* Software prefetch, about 4 KB ahead in the row list. Consecutive rows are
 * streamed by the hardware prefetcher too, but it starts late on each page
 * and measures show a cold int8 scan about 15% faster with this; scattered
 * rows (a filtered scan, candidate rescoring) gain more. */
#define FLAT_PREFETCH_BYTES 4096

static inline size_t prefetch_distance(size_t row_bytes) {
    size_t d = FLAT_PREFETCH_BYTES / row_bytes;
    return d < 2 ? 2 : d;
}

static inline void prefetch_ahead(const char *base, size_t stride, const uint32_t *rows, size_t j,
                                  size_t m, size_t distance) {
    if (j + distance >= m) return;
    const char *p = base + (size_t)rows[j + distance] * stride;
    for (size_t off = 0; off < stride; off += 64) __builtin_prefetch(p + off, 0, 3);
}

/* ---------------------------------------------------------------- */
/* AVX2                                                               */
/* ---------------------------------------------------------------- */

#define AVX2 __attribute__((target("avx2,fma")))

/* lanes 0-7 in lo, 8-15 in hi; the canonical tree. */
AVX2 static inline float avx2_reduce(__m256 lo, __m256 hi) {
    __m256 t = _mm256_add_ps(lo, hi);
    __m128 u = _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
    __m128 v = _mm_add_ps(u, _mm_movehl_ps(u, u));
    __m128 r = _mm_add_ss(v, _mm_shuffle_ps(v, v, 1));
    return _mm_cvtss_f32(r);
}

/* Masks for the last, partial block of 16: lanes below rem are loaded. */
AVX2 static inline void avx2_tail_masks(int rem, __m256i *lo, __m256i *hi) {
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    *lo = _mm256_cmpgt_epi32(_mm256_set1_epi32(rem), idx);
    *hi = _mm256_cmpgt_epi32(_mm256_set1_epi32(rem - 8), idx);
}

AVX2 static float avx2_dot(const float *a, const float *b, int dim) {
    __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
    int i = 0;
    for (; i + FLAT_LANES <= dim; i += FLAT_LANES) {
        lo = _mm256_add_ps(lo, _mm256_mul_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
        hi = _mm256_add_ps(hi,
                           _mm256_mul_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8)));
    }
    if (i < dim) {
        __m256i mlo, mhi;
        avx2_tail_masks(dim - i, &mlo, &mhi);
        lo = _mm256_add_ps(
            lo, _mm256_mul_ps(_mm256_maskload_ps(a + i, mlo), _mm256_maskload_ps(b + i, mlo)));
        hi = _mm256_add_ps(hi, _mm256_mul_ps(_mm256_maskload_ps(a + i + 8, mhi),
                                             _mm256_maskload_ps(b + i + 8, mhi)));
    }
    return avx2_reduce(lo, hi);
}

/* Four rows at once: independent accumulators hide the add latency. */
AVX2 static void avx2_dot4(const float *r0, const float *r1, const float *r2, const float *r3,
                           const float *q, int dim, float *out) {
    __m256 l0 = _mm256_setzero_ps(), h0 = _mm256_setzero_ps();
    __m256 l1 = _mm256_setzero_ps(), h1 = _mm256_setzero_ps();
    __m256 l2 = _mm256_setzero_ps(), h2 = _mm256_setzero_ps();
    __m256 l3 = _mm256_setzero_ps(), h3 = _mm256_setzero_ps();
    int i = 0;
    for (; i + FLAT_LANES <= dim; i += FLAT_LANES) {
        __m256 qlo = _mm256_loadu_ps(q + i), qhi = _mm256_loadu_ps(q + i + 8);
        l0 = _mm256_add_ps(l0, _mm256_mul_ps(_mm256_loadu_ps(r0 + i), qlo));
        h0 = _mm256_add_ps(h0, _mm256_mul_ps(_mm256_loadu_ps(r0 + i + 8), qhi));
        l1 = _mm256_add_ps(l1, _mm256_mul_ps(_mm256_loadu_ps(r1 + i), qlo));
        h1 = _mm256_add_ps(h1, _mm256_mul_ps(_mm256_loadu_ps(r1 + i + 8), qhi));
        l2 = _mm256_add_ps(l2, _mm256_mul_ps(_mm256_loadu_ps(r2 + i), qlo));
        h2 = _mm256_add_ps(h2, _mm256_mul_ps(_mm256_loadu_ps(r2 + i + 8), qhi));
        l3 = _mm256_add_ps(l3, _mm256_mul_ps(_mm256_loadu_ps(r3 + i), qlo));
        h3 = _mm256_add_ps(h3, _mm256_mul_ps(_mm256_loadu_ps(r3 + i + 8), qhi));
    }
    if (i < dim) {
        __m256i mlo, mhi;
        avx2_tail_masks(dim - i, &mlo, &mhi);
        __m256 qlo = _mm256_maskload_ps(q + i, mlo), qhi = _mm256_maskload_ps(q + i + 8, mhi);
        l0 = _mm256_add_ps(l0, _mm256_mul_ps(_mm256_maskload_ps(r0 + i, mlo), qlo));
        h0 = _mm256_add_ps(h0, _mm256_mul_ps(_mm256_maskload_ps(r0 + i + 8, mhi), qhi));
        l1 = _mm256_add_ps(l1, _mm256_mul_ps(_mm256_maskload_ps(r1 + i, mlo), qlo));
        h1 = _mm256_add_ps(h1, _mm256_mul_ps(_mm256_maskload_ps(r1 + i + 8, mhi), qhi));
        l2 = _mm256_add_ps(l2, _mm256_mul_ps(_mm256_maskload_ps(r2 + i, mlo), qlo));
        h2 = _mm256_add_ps(h2, _mm256_mul_ps(_mm256_maskload_ps(r2 + i + 8, mhi), qhi));
        l3 = _mm256_add_ps(l3, _mm256_mul_ps(_mm256_maskload_ps(r3 + i, mlo), qlo));
        h3 = _mm256_add_ps(h3, _mm256_mul_ps(_mm256_maskload_ps(r3 + i + 8, mhi), qhi));
    }
    out[0] = avx2_reduce(l0, h0);
    out[1] = avx2_reduce(l1, h1);
    out[2] = avx2_reduce(l2, h2);
    out[3] = avx2_reduce(l3, h3);
}

AVX2 static void avx2_dot_rows(const float *base, int dim, const float *q, const uint32_t *rows,
                               size_t m, float *out) {
    size_t bytes = (size_t)dim * sizeof(float), ahead = prefetch_distance(bytes), j = 0;
    for (; j + 4 <= m; j += 4) {
        for (size_t k = 0; k < 4; k++)
            prefetch_ahead((const char *)base, bytes, rows, j + k, m, ahead);
        avx2_dot4(base + (size_t)rows[j] * dim, base + (size_t)rows[j + 1] * dim,
                  base + (size_t)rows[j + 2] * dim, base + (size_t)rows[j + 3] * dim, q, dim,
                  out + j);
    }
    for (; j < m; j++) out[j] = avx2_dot(base + (size_t)rows[j] * dim, q, dim);
}

AVX2 static inline int32_t avx2_hsum_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

/* 32 codes of one row times 32 query codes, as 8 int32 partial sums. */
AVX2 static inline __m256i avx2_i8_block(const uint8_t *row, const int8_t *q) {
    const __m256i bias = _mm256_set1_epi8((char)0x80), ones = _mm256_set1_epi16(1);
    __m256i c = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)row), bias);
    __m256i d = _mm256_loadu_si256((const __m256i *)q);
    __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(c, c), _mm256_sign_epi8(d, c));
    return _mm256_madd_epi16(pairs, ones);
}

AVX2 static void avx2_dot_i8_rows(const uint8_t *codes, size_t stride, const int8_t *qcodes,
                                  int32_t qsum, const uint32_t *rows, size_t m, int32_t *out) {
    (void)qsum;
    size_t ahead = prefetch_distance(stride);
    for (size_t j = 0; j < m; j++) {
        prefetch_ahead((const char *)codes, stride, rows, j, m, ahead);
        const uint8_t *row = codes + (size_t)rows[j] * stride;
        __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
        for (size_t i = 0; i < stride; i += 64) {
            acc0 = _mm256_add_epi32(acc0, avx2_i8_block(row + i, qcodes + i));
            acc1 = _mm256_add_epi32(acc1, avx2_i8_block(row + i + 32, qcodes + i + 32));
        }
        out[j] = avx2_hsum_epi32(_mm256_add_epi32(acc0, acc1));
    }
}

/* ---------------------------------------------------------------- */
/* AVX-512                                                            */
/* ---------------------------------------------------------------- */

#define AVX512     __attribute__((target("avx512f,avx2,fma")))
#define AVX512VNNI __attribute__((target("avx512f,avx512vnni,avx2,fma")))

AVX512 static inline float avx512_reduce(__m512 s) {
    __m256 t = _mm256_add_ps(_mm512_castps512_ps256(s),
                             _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1)));
    __m128 u = _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
    __m128 v = _mm_add_ps(u, _mm_movehl_ps(u, u));
    __m128 r = _mm_add_ss(v, _mm_shuffle_ps(v, v, 1));
    return _mm_cvtss_f32(r);
}

AVX512 static float avx512_dot(const float *a, const float *b, int dim) {
    __m512 acc = _mm512_setzero_ps();
    int i = 0;
    for (; i + FLAT_LANES <= dim; i += FLAT_LANES)
        acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i)));
    if (i < dim) {
        __mmask16 mask = (__mmask16)((1u << (dim - i)) - 1);
        acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, a + i),
                                               _mm512_maskz_loadu_ps(mask, b + i)));
    }
    return avx512_reduce(acc);
}

AVX512 static void avx512_dot4(const float *r0, const float *r1, const float *r2, const float *r3,
                               const float *q, int dim, float *out) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    __m512 a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
    int i = 0;
    for (; i + FLAT_LANES <= dim; i += FLAT_LANES) {
        __m512 qv = _mm512_loadu_ps(q + i);
        a0 = _mm512_add_ps(a0, _mm512_mul_ps(_mm512_loadu_ps(r0 + i), qv));
        a1 = _mm512_add_ps(a1, _mm512_mul_ps(_mm512_loadu_ps(r1 + i), qv));
        a2 = _mm512_add_ps(a2, _mm512_mul_ps(_mm512_loadu_ps(r2 + i), qv));
        a3 = _mm512_add_ps(a3, _mm512_mul_ps(_mm512_loadu_ps(r3 + i), qv));
    }
    if (i < dim) {
        __mmask16 mask = (__mmask16)((1u << (dim - i)) - 1);
        __m512 qv = _mm512_maskz_loadu_ps(mask, q + i);
        a0 = _mm512_add_ps(a0, _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, r0 + i), qv));
        a1 = _mm512_add_ps(a1, _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, r1 + i), qv));
        a2 = _mm512_add_ps(a2, _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, r2 + i), qv));
        a3 = _mm512_add_ps(a3, _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, r3 + i), qv));
    }
    out[0] = avx512_reduce(a0);
    out[1] = avx512_reduce(a1);
    out[2] = avx512_reduce(a2);
    out[3] = avx512_reduce(a3);
}

AVX512 static void avx512_dot_rows(const float *base, int dim, const float *q, const uint32_t *rows,
                                   size_t m, float *out) {
    size_t bytes = (size_t)dim * sizeof(float), ahead = prefetch_distance(bytes), j = 0;
    for (; j + 4 <= m; j += 4) {
        for (size_t k = 0; k < 4; k++)
            prefetch_ahead((const char *)base, bytes, rows, j + k, m, ahead);
        avx512_dot4(base + (size_t)rows[j] * dim, base + (size_t)rows[j + 1] * dim,
                    base + (size_t)rows[j + 2] * dim, base + (size_t)rows[j + 3] * dim, q, dim,
                    out + j);
    }
    for (; j < m; j++) out[j] = avx512_dot(base + (size_t)rows[j] * dim, q, dim);
}

/* The four totals of a0..a3 (16 int32 lanes each), as one vector. */
AVX512VNNI static inline __m128i avx512_sum4_epi32(__m512i a0, __m512i a1, __m512i a2, __m512i a3) {
    __m256i r0 = _mm256_add_epi32(_mm512_castsi512_si256(a0), _mm512_extracti64x4_epi64(a0, 1));
    __m256i r1 = _mm256_add_epi32(_mm512_castsi512_si256(a1), _mm512_extracti64x4_epi64(a1, 1));
    __m256i r2 = _mm256_add_epi32(_mm512_castsi512_si256(a2), _mm512_extracti64x4_epi64(a2, 1));
    __m256i r3 = _mm256_add_epi32(_mm512_castsi512_si256(a3), _mm512_extracti64x4_epi64(a3, 1));
    __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(r0, r1), _mm256_hadd_epi32(r2, r3));
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

/* vpdpbusd multiplies unsigned by signed bytes: the row codes are the
 * unsigned side (c + 128), so each row's sum carries 128 * sum(d), which is
 * the same for every row and removed at the end. Four rows at a time share
 * the query loads and one reduction. */
AVX512VNNI static void avx512_dot_i8_rows(const uint8_t *codes, size_t stride, const int8_t *qcodes,
                                          int32_t qsum, const uint32_t *rows, size_t m,
                                          int32_t *out) {
    const __m128i bias = _mm_set1_epi32(128 * qsum);
    size_t ahead = prefetch_distance(stride), j = 0;
    for (; j + 4 <= m; j += 4) {
        for (size_t k = 0; k < 4; k++)
            prefetch_ahead((const char *)codes, stride, rows, j + k, m, ahead);
        const uint8_t *r0 = codes + (size_t)rows[j] * stride;
        const uint8_t *r1 = codes + (size_t)rows[j + 1] * stride;
        const uint8_t *r2 = codes + (size_t)rows[j + 2] * stride;
        const uint8_t *r3 = codes + (size_t)rows[j + 3] * stride;
        __m512i a0 = _mm512_setzero_si512(), a1 = _mm512_setzero_si512();
        __m512i a2 = _mm512_setzero_si512(), a3 = _mm512_setzero_si512();
        for (size_t i = 0; i < stride; i += 64) {
            __m512i d = _mm512_loadu_si512(qcodes + i);
            a0 = _mm512_dpbusd_epi32(a0, _mm512_loadu_si512(r0 + i), d);
            a1 = _mm512_dpbusd_epi32(a1, _mm512_loadu_si512(r1 + i), d);
            a2 = _mm512_dpbusd_epi32(a2, _mm512_loadu_si512(r2 + i), d);
            a3 = _mm512_dpbusd_epi32(a3, _mm512_loadu_si512(r3 + i), d);
        }
        _mm_storeu_si128((__m128i *)(out + j),
                         _mm_sub_epi32(avx512_sum4_epi32(a0, a1, a2, a3), bias));
    }
    for (; j < m; j++) {
        const uint8_t *row = codes + (size_t)rows[j] * stride;
        __m512i acc = _mm512_setzero_si512();
        for (size_t i = 0; i < stride; i += 64)
            acc = _mm512_dpbusd_epi32(acc, _mm512_loadu_si512(row + i),
                                      _mm512_loadu_si512(qcodes + i));
        out[j] = _mm512_reduce_add_epi32(acc) - 128 * qsum;
    }
}

/* ---------------------------------------------------------------- */
/* tables                                                             */
/* ---------------------------------------------------------------- */

static const flat_kernels scalar_kernels = {"scalar", scalar_dot, scalar_dot_rows,
                                            scalar_dot_i8_rows};
static const flat_kernels avx2_kernels = {"avx2", avx2_dot, avx2_dot_rows, avx2_dot_i8_rows};
static const flat_kernels avx512_vnni_kernels = {"avx512", avx512_dot, avx512_dot_rows,
                                                 avx512_dot_i8_rows};
/* AVX-512 without VNNI (Skylake-X): the int8 pre-scan is memory-bound, so
 * the AVX2 int8 kernel loses nothing there. */
static const flat_kernels avx512_plain_kernels = {"avx512", avx512_dot, avx512_dot_rows,
                                                  avx2_dot_i8_rows};

const flat_kernels *flat_kernels_for(const char *name) {
    if (!name) return NULL;
    __builtin_cpu_init();
    int has_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (strcmp(name, "scalar") == 0) return &scalar_kernels;
    if (strcmp(name, "avx2") == 0) return has_avx2 ? &avx2_kernels : NULL;
    if (strcmp(name, "avx512") == 0) {
        if (!has_avx2 || !__builtin_cpu_supports("avx512f")) return NULL;
        return __builtin_cpu_supports("avx512vnni") ? &avx512_vnni_kernels : &avx512_plain_kernels;
    }
    return NULL;
}
