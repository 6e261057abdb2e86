/*
 * flat.c: the exact flat index (see flat.h for the contract).
 *
 * Layout. Rows live in one 64-byte-aligned float32 array (row-major, stride
 * dim). Beside it, each row is kept quantised: uint8 codes (code c in
 * [-127, 127] stored as c + 128, stride padded to 64 bytes) and a
 * flat_row_quant with the scale s and two upper bounds, |x| and |e| where
 * e = x - s*c is what the quantisation lost. Append, set and swap_remove keep
 * both copies in step. Only an index that has held FLAT_QUANT_MIN_ROWS rows
 * keeps the codes (the pre-scan runs from FLAT_PRESCAN_MIN_ROWS up): a small
 * namespace's index is its float rows alone, a quarter less memory and no
 * quantising at load; a forced pre-scan (tests) quantises such an index's
 * rows for the one search.
 *
 * Why the pre-scan is exact. The query q is quantised the same way per query
 * (scale t, codes d, residue f = q - t*d). For row x with integer
 * C = sum c_i d_i,
 *     x.q - s*t*C = sum x_i f_i + t * sum d_i e_i,
 * so |x.q - s t C| <= |x| |f| + |t d| |e| (Cauchy-Schwarz twice). The search
 * ranks rows by the float32 dot of the canonical kernel, which differs from
 * x.q by at most gamma |x| |q| with gamma = (dim/16 + 8) 2^-23 (twice the
 * textbook bound for 16-lane summation, leaving room for the rounding of the
 * bound arithmetic itself), plus an absolute (dim + 64) 2^-149 for products
 * that underflow. Rows and queries whose norm exceeds 1e16 are kept off this
 * path (their float dots could overflow), so every row's float score lies in
 * [A - B, A + B] with A = s t C and B the sum of those terms. If n allowed
 * rows have A - B >= lambda, any row with A + B < lambda is strictly below n
 * rows and cannot be in the answer; the rest are rescored in float32 and the
 * best n of them are the reference's best n, with the same ties.
 *
 * The scan keeps lambda as it goes (the n-th best lower bound so far, which
 * only rises), so a row is remembered only if its upper bound reaches the
 * current lambda; the list is filtered once more against the final lambda.
 * The top-n heaps live in the caller's out array, so the float path never
 * allocates and the int8 path only allocates its candidate list (and falls
 * back to the float path if it cannot).
 */
#include "index/flat.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "index/flat_kernels.h"
#include "util/util.h"

/* Below this many rows a float32 scan is as fast as anything else. */
#define FLAT_PRESCAN_MIN_ROWS  2048
/* An index keeps int8 codes from this capacity up (at most half the rows
 * the pre-scan needs, so that codes are there before it runs). */
#define FLAT_QUANT_MIN_ROWS    1024
/* The pre-scan pays off when few rows can reach the result. */
#define FLAT_PRESCAN_MAX_SHARE 16
/* Below this dimension int8 codes save too little to matter. */
#define FLAT_PRESCAN_MIN_DIM   32
/* int32 sums of (c + 128) * d stay exact up to this dimension. */
#define FLAT_PRESCAN_MAX_DIM   65536
/* Vectors with a larger norm skip the pre-scan (float dots could overflow). */
#define FLAT_MAX_NORM          1e16
/* Vectors whose largest component is below this are not worth a scale. */
#define FLAT_MIN_MAXABS        1e-30
/* A query that int8 codes describe this badly (|f| / |q|: one large
 * component among many mid-sized ones) would widen every row's bounds so
 * much that most rows would need rescoring: scan in float32 instead. For
 * embeddings the ratio is under 0.01. */
#define FLAT_MAX_QUERY_RESIDUE 0.1
/* Rows per kernel call: a few words of the allow bitmap, so that the
 * kernels' prefetching runs well ahead of the rows they score. */
#define FLAT_BATCH             256

typedef struct flat_row_quant {
    float scale; /* s: code c means c * s; 0 for zero or tiny rows */
    float xnorm; /* >= |x|; +inf marks a row the bounds cannot cover */
    float enorm; /* >= |x - s*c| */
} flat_row_quant;

struct flat_index {
    int dim;
    size_t count, cap;
    size_t code_stride; /* bytes per quantised row, a multiple of 64 */
    int quantised;      /* codes and quant hold every row (else both NULL) */
    float *vecs;
    uint8_t *codes;
    flat_row_quant *quant;
    /* Nonzero: vecs and codes are the caller's memory maps of these byte
     * lengths (flat_adopt_mapped), unmapped instead of freed. */
    size_t vecs_map, codes_map;
};

/* ---------------------------------------------------------------- */
/* kernel choice                                                      */
/* ---------------------------------------------------------------- */

static const char *const level_names[] = {"avx512", "avx2", "scalar"};
static const flat_kernels *active_kernels;
static pthread_once_t kernels_once = PTHREAD_ONCE_INIT;
static int prescan_mode = FLAT_PRESCAN_AUTO;

/* The best level the CPU has, or with REMEM_SIMD the best one not above the
 * requested level. */
static void choose_kernels(void) {
    const char *want = getenv("REMEM_SIMD");
    size_t first = 0, levels = sizeof level_names / sizeof level_names[0];
    if (want)
        for (size_t i = 0; i < levels; i++)
            if (strcmp(want, level_names[i]) == 0) first = i;
    for (size_t i = first; i < levels; i++) {
        const flat_kernels *k = flat_kernels_for(level_names[i]);
        if (k) {
            __atomic_store_n(&active_kernels, k, __ATOMIC_RELEASE);
            return;
        }
    }
}

static const flat_kernels *kernels(void) {
    pthread_once(&kernels_once, choose_kernels);
    return __atomic_load_n(&active_kernels, __ATOMIC_ACQUIRE);
}

const char *flat_kernel_name(void) { return kernels()->name; }

int flat_kernel_available(const char *name) { return flat_kernels_for(name) != NULL; }

int flat_set_kernel(const char *name) {
    kernels();
    const flat_kernels *k = flat_kernels_for(name);
    if (!k) return -1;
    __atomic_store_n(&active_kernels, k, __ATOMIC_RELEASE);
    return 0;
}

void flat_set_prescan(int mode) {
    if (mode >= FLAT_PRESCAN_AUTO && mode <= FLAT_PRESCAN_NEVER)
        __atomic_store_n(&prescan_mode, mode, __ATOMIC_RELAXED);
}

float flat_dot(const float *a, const float *b, int dim) {
    return dim > 0 ? kernels()->dot(a, b, dim) : 0.0f;
}

/* ---------------------------------------------------------------- */
/* rounding helpers                                                   */
/* ---------------------------------------------------------------- */

static float round_up_to_float(double v) {
    float f = (float)v;
    if ((double)f < v) f = nextafterf(f, INFINITY);
    return f;
}

static float round_down_to_float(double v) {
    float f = (float)v;
    if ((double)f > v) f = nextafterf(f, -INFINITY);
    return f;
}

/* The nearest code to v in [-127, 127] (halves away from zero). Any
 * integer would keep the search exact, since the bounds are taken from the
 * codes actually chosen; the nearest one keeps them tight. */
static int8_t clamp_code(double v) {
    v = v > 127 ? 127 : v;
    v = v < -127 ? -127 : v;
    return (int8_t)(int)(v + copysign(0.5, v)); /* no branch on the sign */
}

/* ---------------------------------------------------------------- */
/* rows                                                               */
/* ---------------------------------------------------------------- */

/* Lanes of the quantiser's sums: independent partial sums the compiler can
 * keep in vector registers (a plain running sum must be added in order). */
#define QUANT_LANES 8

/* QUANT_LANES components at a time, in GCC's generic vectors, lowered to
 * whatever the target has: the coding loop has a rounding, two clamps and a
 * narrowing per component, which the vectoriser leaves scalar at -O2 when
 * written plainly. The same source is compiled for AVX-512, AVX2 and plain
 * x86-64 (where the clamps and the narrowing stay scalar), picked with the
 * search kernels' level; every build does the same double operations in the
 * same order, so all give the same codes and bounds. */
typedef float quant_f __attribute__((vector_size(32)));
typedef double quant_d __attribute__((vector_size(64)));
typedef int64_t quant_l __attribute__((vector_size(64)));
typedef int32_t quant_i __attribute__((vector_size(32)));
typedef uint8_t quant_b __attribute__((vector_size(32))); /* quant_i's bytes */
typedef uint8_t quant_b8 __attribute__((vector_size(QUANT_LANES)));
_Static_assert(sizeof(quant_d) == QUANT_LANES * sizeof(double), "one lane per component");

/* clamp_code of QUANT_LANES row components x * inverse, stored as code +
 * 128 in codes; adds the squares of x - s * code (what the codes lose) to
 * *e_squares. Here |x * inverse| < 127.5 (|x| <= maxabs and s = maxabs / 127
 * rounded to float, so |x / s| <= 127 (1 + 2^-23)): the conversion to int
 * is defined, and the clamp after it only keeps the promise of [-127, 127]. */
static inline __attribute__((always_inline)) void
code_lanes(const float *x, double inverse, float s, uint8_t *codes, quant_d *e_squares) {
    quant_f xf;
    memcpy(&xf, x, sizeof xf);
    quant_d xd = __builtin_convertvector(xf, quant_d);
    quant_d v = xd * inverse;
    /* v + copysign(0.5, v), truncated: halves away from zero. */
    quant_l sign = (quant_l)v & ((quant_l){0} + INT64_MIN);
    quant_d half = (quant_d)(sign | (quant_l)((quant_d){0} + 0.5));
    quant_i c = __builtin_convertvector(v + half, quant_i);
    quant_i hi = (quant_i){0} + 127, lo = (quant_i){0} - 127;
    quant_i over = c > hi, under = c < lo;
    c = (c & ~over) | (hi & over);
    c = (c & ~under) | (lo & under);
    /* The low byte of each lane to the front: one byte shuffle, where a
     * narrowing conversion goes through general registers. */
    quant_b b = (quant_b)(c + 128);
    quant_b8 low = __builtin_shufflevector(b, b, 0, 4, 8, 12, 16, 20, 24, 28);
    memcpy(codes, &low, sizeof low);
    quant_d e = xd - __builtin_convertvector(c, quant_d) * (double)s; /* exact products */
    *e_squares += e * e;
}

/* Codes, scale and bounds for x (see the top of the file). The sums are
 * taken in double, exact up to a relative dim * 2^-53 whatever the order of
 * the additions (hence the lanes), and the stored bounds are widened past
 * that and rounded up. A row with an infinite or NaN component has an
 * infinite or NaN sum of squares (a finite float squared in double never
 * overflows), which is how such rows are told apart without a branch per
 * component. This runs once per row on every load of a namespace, so its
 * loops are written to vectorise. */
static inline __attribute__((always_inline)) void
quantise_row_body(int dim, size_t stride, const float *x, uint8_t *codes, flat_row_quant *rq) {
    float max_lane[QUANT_LANES] = {0};
    double sq_lane[QUANT_LANES] = {0};
    int i = 0;
    for (; i + QUANT_LANES <= dim; i += QUANT_LANES)
        for (int j = 0; j < QUANT_LANES; j++) {
            float v = x[i + j], a = fabsf(v);
            max_lane[j] = a > max_lane[j] ? a : max_lane[j];
            sq_lane[j] += (double)v * v;
        }
    for (int j = 0; i < dim; i++, j++) {
        float v = x[i], a = fabsf(v);
        max_lane[j] = a > max_lane[j] ? a : max_lane[j];
        sq_lane[j] += (double)v * v;
    }
    double maxabs = 0, sumsq = 0;
    for (int j = 0; j < QUANT_LANES; j++) {
        if (max_lane[j] > maxabs) maxabs = max_lane[j];
        sumsq += sq_lane[j];
    }
    memset(codes, 128, stride);
    const double widen = 1.0 + (dim + 2) * 0x1p-50;
    double norm = sqrt(sumsq);
    if (!isfinite(sumsq) || norm > FLAT_MAX_NORM) {
        rq->scale = 0;
        rq->xnorm = rq->enorm = INFINITY;
        return;
    }
    rq->xnorm = round_up_to_float(norm * widen);
    if (maxabs < FLAT_MIN_MAXABS) {
        /* All codes 0: what is lost is the row itself. */
        rq->scale = 0;
        rq->enorm = rq->xnorm;
        return;
    }
    float s = (float)(maxabs / 127.0);
    double inverse = 1.0 / s;
    quant_d e_lanes = {0};
    for (i = 0; i + QUANT_LANES <= dim; i += QUANT_LANES)
        code_lanes(x + i, inverse, s, codes + i, &e_lanes);
    double esq = 0;
    for (int j = 0; j < QUANT_LANES; j++) esq += e_lanes[j];
    for (; i < dim; i++) {
        int8_t c = clamp_code(x[i] * inverse);
        codes[i] = (uint8_t)(c + 128);
        double e = x[i] - (double)s * c; /* s*c is exact in double */
        esq += e * e;
    }
    rq->scale = s;
    rq->enorm = round_up_to_float(sqrt(esq) * widen);
}

typedef void (*quantise_fn)(int dim, size_t stride, const float *x, uint8_t *codes,
                            flat_row_quant *rq);

static void quantise_row_plain(int dim, size_t stride, const float *x, uint8_t *codes,
                               flat_row_quant *rq) {
    quantise_row_body(dim, stride, x, codes, rq);
}

__attribute__((target("avx2,fma"))) static void
quantise_row_avx2(int dim, size_t stride, const float *x, uint8_t *codes, flat_row_quant *rq) {
    quantise_row_body(dim, stride, x, codes, rq);
}

__attribute__((target("avx512f,avx2,fma"))) static void
quantise_row_avx512(int dim, size_t stride, const float *x, uint8_t *codes, flat_row_quant *rq) {
    quantise_row_body(dim, stride, x, codes, rq);
}

/* The build for the level the search kernels run at (which the CPU has). */
static quantise_fn quantiser(void) {
    const char *level = kernels()->name;
    if (strcmp(level, "avx512") == 0) return quantise_row_avx512;
    if (strcmp(level, "avx2") == 0) return quantise_row_avx2;
    return quantise_row_plain;
}

static size_t round_up_size(size_t v, size_t to) { return (v + to - 1) / to * to; }

flat_index *flat_new(int dim) {
    if (dim <= 0 || dim > (1 << 24)) return NULL;
    flat_index *ix = calloc(1, sizeof *ix);
    if (!ix) return NULL;
    ix->dim = dim;
    ix->code_stride = round_up_size((size_t)dim, FLAT_CODE_ALIGN);
    return ix;
}

/* The row arrays go, freed or unmapped as they came. */
static void release_rows(flat_index *ix) {
    if (ix->vecs_map) {
        munmap(ix->vecs, ix->vecs_map);
        munmap(ix->codes, ix->codes_map);
    } else {
        free(ix->vecs);
        free(ix->codes);
    }
    ix->vecs_map = ix->codes_map = 0;
}

void flat_free(flat_index *ix) {
    if (!ix) return;
    release_rows(ix);
    free(ix->quant);
    free(ix);
}

int flat_dim(const flat_index *ix) { return ix ? ix->dim : 0; }
size_t flat_count(const flat_index *ix) { return ix ? ix->count : 0; }

/* At least bytes, aligned to a cache line. With huge_pages, a large array
 * is aligned to 2 MB and asked to live on transparent huge pages: the int8
 * pre-scan then walks a few hundred pages instead of a hundred thousand and
 * measures 20-35% faster on a cold cache (TLB misses otherwise stall the
 * stream). Only the codes get them: first-touch faults of huge pages can
 * cost milliseconds each (the kernel compacts memory to find them), and the
 * float32 rows are mostly read a few at a time, where pages do not matter. */
static void *alloc_aligned(size_t bytes, int huge_pages) {
    const size_t huge = (size_t)2 << 20;
    if (huge_pages && bytes >= 2 * huge) {
        size_t size = round_up_size(bytes, huge);
        void *p = aligned_alloc(huge, size);
        if (p) madvise(p, size, MADV_HUGEPAGE); /* advice only: failure is fine */
        return p;
    }
    return aligned_alloc(64, round_up_size(bytes ? bytes : 1, 64));
}

/* Room for at least need rows; 0, or -1 when out of memory (ix unchanged). */
static int reserve(flat_index *ix, size_t need) {
    if (need <= ix->cap) return 0;
    /* From the first need up (a namespace of one row holds one row), then
     * doubling. */
    size_t cap = ix->cap ? ix->cap : need;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    if (cap > (size_t)UINT32_MAX + 1) cap = (size_t)UINT32_MAX + 1;
    if (cap < need) return -1;
    size_t dim = (size_t)ix->dim;
    if (cap > SIZE_MAX / sizeof(float) / dim || cap > SIZE_MAX / ix->code_stride) return -1;
    int quantise = cap >= FLAT_QUANT_MIN_ROWS;
    float *vecs = alloc_aligned(cap * dim * sizeof(float), 0);
    uint8_t *codes = quantise ? alloc_aligned(cap * ix->code_stride, 1) : NULL;
    flat_row_quant *quant = quantise ? malloc(cap * sizeof *quant) : NULL;
    if (!vecs || (quantise && (!codes || !quant))) {
        free(vecs);
        free(codes);
        free(quant);
        return -1;
    }
    if (ix->count) memcpy(vecs, ix->vecs, ix->count * dim * sizeof(float));
    if (ix->count && ix->quantised) {
        memcpy(codes, ix->codes, ix->count * ix->code_stride);
        memcpy(quant, ix->quant, ix->count * sizeof *quant);
    } else if (quantise) { /* codes from now on: the rows so far get theirs */
        quantise_fn q = quantiser();
        for (size_t r = 0; r < ix->count; r++)
            q(ix->dim, ix->code_stride, vecs + r * dim, codes + r * ix->code_stride, &quant[r]);
    }
    release_rows(ix);
    free(ix->quant);
    ix->vecs = vecs;
    ix->codes = codes;
    ix->quant = quant;
    ix->quantised = quantise;
    ix->cap = cap;
    return 0;
}

size_t flat_memory_bytes(const flat_index *ix) {
    if (!ix) return 0;
    size_t dim = (size_t)ix->dim;
    size_t vecs = ix->vecs_map ? ix->vecs_map : round_up_size(ix->cap * dim * sizeof(float), 64);
    size_t codes = ix->codes_map  ? ix->codes_map
                   : ix->quantised ? round_up_size(ix->cap * ix->code_stride, 64)
                                   : 0;
    /* aligned_alloc(64) blocks carry up to a line of padding and a header */
    size_t pad = ix->vecs_map ? 0 : (ix->quantised ? 2 : 1) * (64 + 16);
    return util_heap_bytes(sizeof *ix) + vecs + codes + pad +
           (ix->quantised ? util_heap_bytes(ix->cap * sizeof(flat_row_quant)) : 0);
}

int flat_reserve(flat_index *ix, size_t rows) {
    if (!ix) return -1;
    return reserve(ix, rows);
}

static void store_row(flat_index *ix, size_t i, const float *v) {
    memcpy(ix->vecs + i * (size_t)ix->dim, v, (size_t)ix->dim * sizeof(float));
    if (ix->quantised)
        quantiser()(ix->dim, ix->code_stride, v, ix->codes + i * ix->code_stride, &ix->quant[i]);
}

long flat_append(flat_index *ix, const float *v) {
    if (!ix || !v || ix->count > (size_t)UINT32_MAX || reserve(ix, ix->count + 1) != 0) return -1;
    store_row(ix, ix->count, v);
    return (long)ix->count++;
}

long flat_append_many(flat_index *ix, const float *vecs, size_t n) {
    if (!ix || (!vecs && n) || ix->count + n > (size_t)UINT32_MAX + 1 ||
        reserve(ix, ix->count + n) != 0)
        return -1;
    size_t first = ix->count, dim = (size_t)ix->dim;
    if (n == 0) return (long)first;
    float *dst = ix->vecs + first * dim;
    /* One copy of the batch, then each row quantised from its aligned
     * place in the index (the caller's rows may come from anywhere). */
    memcpy(dst, vecs, n * dim * sizeof(float));
    quantise_fn quantise = quantiser();
    for (size_t r = 0; ix->quantised && r < n; r++)
        quantise(ix->dim, ix->code_stride, dst + r * dim, ix->codes + (first + r) * ix->code_stride,
                 &ix->quant[first + r]);
    ix->count += n;
    return (long)first;
}

size_t flat_code_stride(const flat_index *ix) { return ix ? ix->code_stride : 0; }
size_t flat_quant_bytes(void) { return sizeof(flat_row_quant); }

void flat_raw(const flat_index *ix, const float **vecs, const uint8_t **codes, const void **quant) {
    *vecs = ix->vecs;
    *codes = ix->quantised ? ix->codes : NULL;
    *quant = ix->quantised ? ix->quant : NULL;
}

void flat_quantise_copy(const flat_index *ix, size_t i, uint8_t *codes, void *quant) {
    memset(codes, 0, ix->code_stride);
    quantiser()(ix->dim, ix->code_stride, ix->vecs + i * (size_t)ix->dim, codes, quant);
}

int flat_adopt_mapped(flat_index *ix, size_t n, size_t cap, float *vecs, size_t vecs_bytes,
                      uint8_t *codes, size_t codes_bytes, const void *quant) {
    size_t dim = (size_t)ix->dim;
    if (ix->count || ix->cap || n > cap || cap > (size_t)UINT32_MAX + 1 ||
        vecs_bytes / dim / sizeof(float) < cap || codes_bytes / ix->code_stride < cap)
        return -1;
    flat_row_quant *q = malloc((cap ? cap : 1) * sizeof *q);
    if (!q) return -1;
    if (n) memcpy(q, quant, n * sizeof *q);
    ix->quant = q;
    ix->vecs = vecs;
    ix->codes = codes;
    ix->vecs_map = vecs_bytes;
    ix->codes_map = codes_bytes;
    ix->quantised = 1;
    ix->count = n;
    ix->cap = cap;
    return 0;
}

void flat_set(flat_index *ix, size_t i, const float *v) {
    if (!ix || !v || i >= ix->count) return;
    store_row(ix, i, v);
}

const float *flat_row(const flat_index *ix, size_t i) {
    if (!ix || i >= ix->count) return NULL;
    return ix->vecs + i * (size_t)ix->dim;
}

void flat_swap_remove(flat_index *ix, size_t i) {
    if (!ix || i >= ix->count) return;
    size_t last = ix->count - 1;
    if (i != last) {
        memcpy(ix->vecs + i * (size_t)ix->dim, ix->vecs + last * (size_t)ix->dim,
               (size_t)ix->dim * sizeof(float));
        if (ix->quantised) {
            memcpy(ix->codes + i * ix->code_stride, ix->codes + last * ix->code_stride,
                   ix->code_stride);
            ix->quant[i] = ix->quant[last];
        }
    }
    ix->count = last;
}

/* ---------------------------------------------------------------- */
/* top-n heap (in the caller's out array)                             */
/* ---------------------------------------------------------------- */

/* The result order: higher sim first, then lower row; NaN sims rank below
 * every number so that the order is total. */
static int hit_better(flat_hit a, flat_hit b) {
    int a_nan = a.sim != a.sim, b_nan = b.sim != b.sim;
    if (a_nan || b_nan) return a_nan && b_nan ? a.row < b.row : b_nan;
    if (a.sim != b.sim) return a.sim > b.sim;
    return a.row < b.row;
}

/* A heap whose root is its worst hit. */
typedef struct hit_heap {
    flat_hit *h;
    size_t size, cap;
} hit_heap;

static void sift_down(flat_hit *h, size_t size, size_t i) {
    flat_hit top = h[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= size) break;
        if (child + 1 < size && hit_better(h[child], h[child + 1])) child++;
        if (!hit_better(top, h[child])) break;
        h[i] = h[child];
        i = child;
    }
    h[i] = top;
}

static void heap_offer(hit_heap *hp, uint32_t row, float sim) {
    flat_hit hit = {row, sim};
    if (hp->size < hp->cap) {
        size_t i = hp->size++;
        while (i > 0) {
            size_t parent = (i - 1) / 2;
            if (!hit_better(hp->h[parent], hit)) break;
            hp->h[i] = hp->h[parent];
            i = parent;
        }
        hp->h[i] = hit;
    } else if (hit_better(hit, hp->h[0])) {
        hp->h[0] = hit;
        sift_down(hp->h, hp->size, 0);
    }
}

/* Sorts the heap best first in place; returns its size. */
static size_t heap_finish(hit_heap *hp) {
    for (size_t end = hp->size; end > 1; end--) {
        flat_hit worst = hp->h[0];
        hp->h[0] = hp->h[end - 1];
        hp->h[end - 1] = worst;
        sift_down(hp->h, end - 1, 0);
    }
    return hp->size;
}

/* ---------------------------------------------------------------- */
/* walking the allowed rows                                           */
/* ---------------------------------------------------------------- */

static size_t word_count(size_t count) { return (count + 63) / 64; }

/* Bits of word w that name allowed rows below count. */
static uint64_t allowed_word(const uint64_t *allow, size_t count, size_t w) {
    uint64_t bits = allow ? allow[w] : ~(uint64_t)0;
    size_t tail = count - w * 64;
    if (tail < 64) bits &= ((uint64_t)1 << tail) - 1;
    return bits;
}

/* The next allowed rows, from word *w on, into rows (up to FLAT_BATCH);
 * returns how many, 0 at the end. Zero words cost one test each. */
static size_t next_rows(const uint64_t *allow, size_t count, size_t *w, uint32_t *rows) {
    size_t m = 0, words = word_count(count);
    for (; *w < words && m + 64 <= FLAT_BATCH; (*w)++) {
        uint64_t bits = allowed_word(allow, count, *w);
        uint32_t base = (uint32_t)(*w * 64);
        if (bits == ~(uint64_t)0) {
            for (uint32_t k = 0; k < 64; k++) rows[m++] = base + k;
            continue;
        }
        while (bits) {
            rows[m++] = base + (uint32_t)__builtin_ctzll(bits);
            bits &= bits - 1;
        }
    }
    return m;
}

static size_t allowed_count(const uint64_t *allow, size_t count) {
    if (!allow) return count;
    size_t total = 0;
    for (size_t w = 0; w < word_count(count); w++)
        total += (size_t)__builtin_popcountll(allowed_word(allow, count, w));
    return total;
}

/* ---------------------------------------------------------------- */
/* float32 scan                                                       */
/* ---------------------------------------------------------------- */

static size_t search_float(const flat_index *ix, const flat_kernels *k, const float *q,
                           const uint64_t *allow, size_t m, flat_hit *out) {
    hit_heap heap = {out, 0, m};
    uint32_t rows[FLAT_BATCH];
    float sims[FLAT_BATCH];
    size_t w = 0, got;
    while ((got = next_rows(allow, ix->count, &w, rows)) > 0) {
        k->dot_rows(ix->vecs, ix->dim, q, rows, got, sims);
        for (size_t j = 0; j < got; j++) heap_offer(&heap, rows[j], sims[j]);
    }
    return heap_finish(&heap);
}

size_t flat_search_reference(const flat_index *ix, const float *q, const uint64_t *allow, size_t n,
                             flat_hit *out) {
    if (!ix || !q || !out || n == 0 || ix->count == 0) return 0;
    const flat_kernels *scalar = flat_kernels_for("scalar");
    hit_heap heap = {out, 0, n};
    for (size_t r = 0; r < ix->count; r++) {
        if (allow && !((allow[r / 64] >> (r % 64)) & 1)) continue;
        heap_offer(&heap, (uint32_t)r, scalar->dot(ix->vecs + r * (size_t)ix->dim, q, ix->dim));
    }
    return heap_finish(&heap);
}

/* ---------------------------------------------------------------- */
/* int8 pre-scan                                                      */
/* ---------------------------------------------------------------- */

typedef struct query_quant {
    int8_t *codes;  /* code_stride bytes, zero padded */
    int32_t sum;    /* sum of codes */
    double scale;   /* t */
    double k_xnorm; /* bound per unit of |x|: |f| + gamma |q| */
    double k_enorm; /* bound per unit of |e|: |t d| */
    double slack;   /* underflow of float products */
} query_quant;

/* Quantises q; 0, or -1 when the bounds would not hold (non-finite, zero,
 * tiny or huge query) or would be too wide to prune: then the caller scans
 * in float32. */
static int quantise_query(const flat_index *ix, const float *q, query_quant *qq) {
    int dim = ix->dim;
    double maxabs = 0, qsq = 0;
    for (int i = 0; i < dim; i++) {
        double v = q[i];
        if (!isfinite(v)) return -1;
        if (fabs(v) > maxabs) maxabs = fabs(v);
        qsq += v * v;
    }
    double qnorm = sqrt(qsq);
    if (maxabs < FLAT_MIN_MAXABS || qnorm > FLAT_MAX_NORM) return -1;
    float t = (float)(maxabs / 127.0);
    double fsq = 0, tdsq = 0;
    int32_t sum = 0;
    memset(qq->codes, 0, ix->code_stride);
    double inverse = 1.0 / t;
    for (int i = 0; i < dim; i++) {
        int8_t d = clamp_code(q[i] * inverse);
        double td = (double)t * d, f = q[i] - td;
        qq->codes[i] = d;
        sum += d;
        fsq += f * f;
        tdsq += td * td;
    }
    if (sqrt(fsq) > FLAT_MAX_QUERY_RESIDUE * qnorm) return -1;
    const double widen = 1.0 + (dim + 2) * 0x1p-50;
    double gamma = ((dim + FLAT_LANES - 1) / FLAT_LANES + 8) * 0x1p-23;
    qq->sum = sum;
    qq->scale = t;
    qq->k_xnorm = (sqrt(fsq) + gamma * qnorm) * widen + 1e-300;
    qq->k_enorm = sqrt(tdsq) * widen + 1e-300;
    qq->slack = (dim + 64) * 0x1p-149;
    return 0;
}

typedef struct candidate {
    uint32_t row;
    float upper;
} candidate;

typedef struct candidate_list {
    candidate *items;
    size_t size, cap;
} candidate_list;

static int candidates_push(candidate_list *cl, uint32_t row, float upper) {
    if (cl->size == cl->cap) {
        size_t cap = cl->cap ? cl->cap * 2 : 256;
        candidate *items = realloc(cl->items, cap * sizeof *items);
        if (!items) return -1;
        cl->items = items;
        cl->cap = cap;
    }
    cl->items[cl->size++] = (candidate){row, upper};
    return 0;
}

/* Pre-scan with int8 codes, then float32 for the rows that may be in the
 * top m. Returns the hit count, or -1 when out of memory (out is then
 * scratch and the caller scans in float32). */
static long search_prescan(const flat_index *ix, const uint8_t *codes,
                           const flat_row_quant *quant, const flat_kernels *k,
                           const query_quant *qq, const float *q, const uint64_t *allow, size_t m,
                           flat_hit *out, size_t *rescored) {
    candidate_list cl = {0};
    hit_heap lower = {out, 0, m}; /* the m best lower bounds, as (row, bound) */
    double lambda = -INFINITY;
    uint32_t rows[FLAT_BATCH];
    int32_t dots[FLAT_BATCH];
    float sims[FLAT_BATCH];

    size_t w = 0, got;
    while ((got = next_rows(allow, ix->count, &w, rows)) > 0) {
        k->dot_i8_rows(codes, ix->code_stride, qq->codes, qq->sum, rows, got, dots);
        for (size_t j = 0; j < got; j++) {
            const flat_row_quant *rq = &quant[rows[j]];
            double approx = (double)dots[j] * ((double)rq->scale * qq->scale);
            double bound = rq->xnorm * qq->k_xnorm + rq->enorm * qq->k_enorm + qq->slack;
            double upper = approx + bound;
            if (upper < lambda) continue;
            if (candidates_push(&cl, rows[j], round_up_to_float(upper)) != 0) {
                free(cl.items);
                return -1;
            }
            heap_offer(&lower, rows[j], round_down_to_float(approx - bound));
            if (lower.size == lower.cap) lambda = lower.h[0].sim;
        }
    }

    /* Keep the candidates that reach the final lambda, then rescore them. */
    float final_lambda = lower.size == lower.cap ? lower.h[0].sim : -INFINITY;
    hit_heap best = {out, 0, m};
    size_t kept = 0;
    for (size_t i = 0; i < cl.size;) {
        size_t got = 0;
        for (; i < cl.size && got < FLAT_BATCH; i++)
            if (cl.items[i].upper >= final_lambda) rows[got++] = cl.items[i].row;
        if (!got) continue;
        k->dot_rows(ix->vecs, ix->dim, q, rows, got, sims);
        for (size_t j = 0; j < got; j++) heap_offer(&best, rows[j], sims[j]);
        kept += got;
    }
    free(cl.items);
    *rescored = kept;
    return (long)heap_finish(&best);
}

static int use_prescan(const flat_index *ix, size_t allowed, size_t m) {
    int mode = __atomic_load_n(&prescan_mode, __ATOMIC_RELAXED);
    if (mode == FLAT_PRESCAN_NEVER || ix->dim > FLAT_PRESCAN_MAX_DIM) return 0;
    if (mode == FLAT_PRESCAN_ALWAYS) return 1;
    return ix->count >= FLAT_PRESCAN_MIN_ROWS && ix->dim >= FLAT_PRESCAN_MIN_DIM &&
           m <= allowed / FLAT_PRESCAN_MAX_SHARE;
}

size_t flat_search_traced(const flat_index *ix, const float *q, const uint64_t *allow, size_t n,
                          flat_hit *out, flat_trace *trace) {
    flat_trace local;
    if (!trace) trace = &local;
    memset(trace, 0, sizeof *trace);
    if (!ix || !q || !out || n == 0 || ix->count == 0) return 0;
    size_t allowed = allowed_count(allow, ix->count);
    trace->allowed = allowed;
    if (allowed == 0) return 0;
    size_t m = n < allowed ? n : allowed;
    const flat_kernels *k = kernels();

    if (use_prescan(ix, allowed, m)) {
        int8_t stack_codes[2048];
        query_quant qq = {0};
        qq.codes = ix->code_stride <= sizeof stack_codes ? stack_codes : malloc(ix->code_stride);
        long got = -1;
        /* An index without codes (small: only a forced pre-scan gets here)
         * has its rows quantised for this search. */
        uint8_t *codes = ix->codes;
        flat_row_quant *quant = ix->quant;
        if (!ix->quantised) {
            codes = alloc_aligned(ix->count * ix->code_stride, 0);
            quant = malloc(ix->count * sizeof *quant);
            for (size_t r = 0; codes && quant && r < ix->count; r++)
                flat_quantise_copy(ix, r, codes + r * ix->code_stride, &quant[r]);
        }
        if (qq.codes && codes && quant && quantise_query(ix, q, &qq) == 0)
            got = search_prescan(ix, codes, quant, k, &qq, q, allow, m, out, &trace->rescored);
        if (!ix->quantised) {
            free(codes);
            free(quant);
        }
        if (qq.codes != stack_codes) free(qq.codes);
        if (got >= 0) {
            trace->prescanned = 1;
            return (size_t)got;
        }
    }
    trace->rescored = allowed;
    return search_float(ix, k, q, allow, m, out);
}

size_t flat_search(const flat_index *ix, const float *q, const uint64_t *allow, size_t n,
                   flat_hit *out) {
    return flat_search_traced(ix, q, allow, n, out, NULL);
}
