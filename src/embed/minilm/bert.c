/*
 * bert.c: the BERT encoder (see bert.h), shaped for speed on a small CPU.
 *
 * - Sequences are packed, not padded: the dense layers (fused Q|K|V, the
 *   attention output, the two feed-forward products) run as one matrix
 *   product over every token of the batch, and attention runs per sequence
 *   over its own tokens only. This computes exactly what a padded batch with
 *   an attention mask computes (masked keys get zero weight, padded queries
 *   are discarded by the mean over the mask) without spending time on pads.
 * - Matrix products are cblas_sgemm calls, on weights transposed at load
 *   time to [in, out], the layout OpenBLAS packs fastest for few tokens.
 * - The element-wise work (GELU with erf, softmax, LayerNorm) is written as
 *   plain loops the compiler vectorises, built for AVX-512, AVX2 and the
 *   baseline with target_clones; erf and exp are polynomial approximations
 *   (absolute error below 2e-7) because the libm calls would cost a third of
 *   the run time.
 * - Both cores: a batch is cut into pieces of about 256 tokens that the
 *   threads take one at a time, each running single-threaded BLAS, so that
 *   a core slowed by other work takes fewer pieces; a single sequence uses
 *   OpenBLAS's own threads instead (bench/README.md has the measurements).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dlsym's RTLD_DEFAULT */
#endif
#include "embed/minilm/bert.h"

#include <cblas.h>
#include <dlfcn.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remem.h"
#include "util/util.h"

struct bert_layer {
    /* Weights are stored transposed, [in, out] (PyTorch's are [out, in]):
     * OpenBLAS packs them faster so, 13% on a single sentence. */
    float *wqkv, *bqkv;   /* [H, 3H], [3H]: query, key, value side by side */
    float *wo, *bo;       /* [H, H], [H] */
    float *ln1_g, *ln1_b; /* attention output LayerNorm */
    float *w1, *b1;       /* [H, F], [F] (F: intermediate size) */
    float *w2, *b2;       /* [F, H], [H] */
    float *ln2_g, *ln2_b; /* output LayerNorm */
};

/* Working memory of one group: kept in the model between calls (fresh
 * pages for a large batch would cost page faults on every call). */
typedef struct scratch {
    float *x, *qkv, *ctx, *tmp, *ff, *scores;
    size_t tokens, maxlen; /* what it has room for */
} scratch;

static void scratch_free(scratch *s) {
    free(s->x);
    free(s->qkv);
    free(s->ctx);
    free(s->tmp);
    free(s->ff);
    free(s->scores);
    memset(s, 0, sizeof *s);
}

static int scratch_reserve(scratch *s, size_t T, size_t maxlen, const bert_config *c) {
    const size_t H = (size_t)c->hidden, F = (size_t)c->intermediate;
    if (T <= s->tokens && maxlen <= s->maxlen) return 0;
    scratch_free(s);
    s->x = malloc(T * H * sizeof(float));
    s->qkv = malloc(T * 3 * H * sizeof(float));
    s->ctx = malloc(T * H * sizeof(float));
    s->tmp = malloc(T * H * sizeof(float));
    s->ff = malloc(T * F * sizeof(float));
    s->scores = malloc((maxlen * maxlen + maxlen) * sizeof(float));
    if (s->x && s->qkv && s->ctx && s->tmp && s->ff && s->scores) {
        s->tokens = T;
        s->maxlen = maxlen;
        return 0;
    }
    scratch_free(s);
    return REMEM_ENOMEM;
}

struct bert_model {
    bert_config c;
    float *arena; /* every weight below points into it */
    float *word, *pos, *type, *emb_g, *emb_b;
    struct bert_layer *layer;
    int threads, blas_threads;
    pthread_mutex_t lock; /* guards work */
    scratch *work;        /* one per group, kept between calls */
};

/* Errors go to the caller's buffer: util_errf. */
#define set_err util_errf

/* ------------------------------------------------------------------ */
/* config.json                                                         */
/* ------------------------------------------------------------------ */
static int get_int(json_t *root, const char *key, int lo, int hi, int *out, char *err,
                   size_t errcap) {
    json_t *v = json_object_get(root, key);
    if (!json_is_integer(v))
        return set_err(err, errcap, REMEM_ECORRUPT, "config.json: %s missing or not an integer",
                       key);
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return set_err(err, errcap, REMEM_ECORRUPT, "config.json: %s = %lld, outside [%d, %d]", key,
                       (long long)x, lo, hi);
    *out = (int)x;
    return 0;
}

static int config_from_json(json_t *root, bert_config *c, char *err, size_t errcap) {
    int rc;
    memset(c, 0, sizeof *c);
    if (!json_is_object(root))
        return set_err(err, errcap, REMEM_ECORRUPT, "config.json: not a JSON object");
    if ((rc = get_int(root, "vocab_size", 5, 1 << 22, &c->vocab_size, err, errcap)) ||
        (rc = get_int(root, "hidden_size", 1, 8192, &c->hidden, err, errcap)) ||
        (rc = get_int(root, "num_hidden_layers", 1, 128, &c->layers, err, errcap)) ||
        (rc = get_int(root, "num_attention_heads", 1, 256, &c->heads, err, errcap)) ||
        (rc = get_int(root, "intermediate_size", 1, 65536, &c->intermediate, err, errcap)) ||
        (rc = get_int(root, "max_position_embeddings", 2, 8192, &c->max_positions, err, errcap)))
        return rc;
    c->type_vocab = 2;
    if (json_object_get(root, "type_vocab_size") &&
        (rc = get_int(root, "type_vocab_size", 1, 1024, &c->type_vocab, err, errcap)))
        return rc;
    if (c->hidden % c->heads)
        return set_err(err, errcap, REMEM_ECORRUPT,
                       "config.json: hidden_size %d is not a multiple of num_attention_heads %d",
                       c->hidden, c->heads);
    c->ln_eps = 1e-12f;
    json_t *eps = json_object_get(root, "layer_norm_eps");
    if (eps) {
        if (!json_is_number(eps) || json_number_value(eps) <= 0 || json_number_value(eps) > 1)
            return set_err(err, errcap, REMEM_ECORRUPT, "config.json: bad layer_norm_eps");
        c->ln_eps = (float)json_number_value(eps);
    }
    const char *act = json_string_value(json_object_get(root, "hidden_act"));
    if (act && strcmp(act, "gelu") != 0)
        return set_err(err, errcap, REMEM_EUNSUPPORTED,
                       "config.json: hidden_act \"%.32s\" (only \"gelu\" is computed)", act);
    const char *pe = json_string_value(json_object_get(root, "position_embedding_type"));
    if (pe && strcmp(pe, "absolute") != 0)
        return set_err(err, errcap, REMEM_EUNSUPPORTED,
                       "config.json: position_embedding_type \"%.32s\" (only \"absolute\")", pe);
    return 0;
}

int bert_config_parse(const char *json, size_t len, bert_config *c, char *err, size_t errcap) {
    json_error_t jerr;
    json_t *root = json_loadb(json, len, 0, &jerr);
    if (!root)
        return set_err(err, errcap, REMEM_ECORRUPT, "config.json: line %d: %s", jerr.line,
                       jerr.text);
    int rc = config_from_json(root, c, err, errcap);
    json_decref(root);
    return rc;
}

int bert_config_load(const char *path, bert_config *c, char *err, size_t errcap) {
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root)
        return set_err(err, errcap, REMEM_ECORRUPT, "%s: %s (line %d)", path, jerr.text, jerr.line);
    int rc = config_from_json(root, c, err, errcap);
    json_decref(root);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Loading the weights                                                 */
/* ------------------------------------------------------------------ */
typedef struct loader {
    const st_file *st;
    const char *prefix; /* "" or "bert." */
    char *err;
    size_t errcap;
} loader;

/* Read tensor "<prefix><name>" of the given shape into dst. */
static int load(loader *L, const char *name, int64_t d0, int64_t d1, float *dst) {
    char full[160];
    snprintf(full, sizeof full, "%s%s", L->prefix, name);
    const st_tensor *t = st_find(L->st, full);
    if (!t)
        return set_err(L->err, L->errcap, REMEM_ECORRUPT,
                       "model.safetensors: no tensor %s (is this a BERT model?)", full);
    int64_t shape[2] = {d0, d1};
    int rc = st_read_f32(t, d1 ? 2 : 1, shape, dst, L->err, L->errcap);
    if (rc) return rc;
    /* A NaN or infinite weight would only poison every embedding (and turn
     * into undefined float-to-int conversions inside exp): refuse the file. */
    size_t n = (size_t)d0 * (size_t)(d1 ? d1 : 1);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(dst[i]))
            return set_err(L->err, L->errcap, REMEM_ECORRUPT,
                           "model.safetensors: tensor %s holds a non-finite weight (%s) at "
                           "element %zu",
                           full, isnan(dst[i]) ? "NaN" : "infinity", i);
    return 0;
}

/* Read the [out, in] matrix "<prefix><name>" into columns [0, out) of dst,
 * an [in, ld] matrix: transposed. */
static int load_transposed(loader *L, const char *name, int64_t out, int64_t in, float *dst,
                           size_t ld) {
    float *tmp = malloc((size_t)out * (size_t)in * sizeof *tmp);
    if (!tmp) return set_err(L->err, L->errcap, REMEM_ENOMEM, "minilm: out of memory");
    int rc = load(L, name, out, in, tmp);
    for (size_t j = 0; !rc && j < (size_t)out; j++)
        for (size_t k = 0; k < (size_t)in; k++) dst[k * ld + j] = tmp[j * (size_t)in + k];
    free(tmp);
    return rc;
}

static int load_layer(loader *L, const bert_config *c, int i, struct bert_layer *y) {
    const int64_t H = c->hidden, F = c->intermediate;
    static const char *qkv[3] = {"query", "key", "value"};
    char n[128];
    int rc;
    for (int k = 0; k < 3; k++) {
        snprintf(n, sizeof n, "encoder.layer.%d.attention.self.%s.weight", i, qkv[k]);
        if ((rc = load_transposed(L, n, H, H, y->wqkv + k * H, (size_t)(3 * H)))) return rc;
        snprintf(n, sizeof n, "encoder.layer.%d.attention.self.%s.bias", i, qkv[k]);
        if ((rc = load(L, n, H, 0, y->bqkv + k * H))) return rc;
    }
    /* d1 != 0: a matrix, stored transposed. */
    struct {
        const char *name;
        int64_t d0, d1;
        float *dst;
    } parts[] = {
        {"attention.output.dense.weight", H, H, y->wo},
        {"attention.output.dense.bias", H, 0, y->bo},
        {"attention.output.LayerNorm.weight", H, 0, y->ln1_g},
        {"attention.output.LayerNorm.bias", H, 0, y->ln1_b},
        {"intermediate.dense.weight", F, H, y->w1},
        {"intermediate.dense.bias", F, 0, y->b1},
        {"output.dense.weight", H, F, y->w2},
        {"output.dense.bias", H, 0, y->b2},
        {"output.LayerNorm.weight", H, 0, y->ln2_g},
        {"output.LayerNorm.bias", H, 0, y->ln2_b},
    };
    for (size_t k = 0; k < sizeof parts / sizeof *parts; k++) {
        snprintf(n, sizeof n, "encoder.layer.%d.%s", i, parts[k].name);
        rc = parts[k].d1 ? load_transposed(L, n, parts[k].d0, parts[k].d1, parts[k].dst,
                                           (size_t)parts[k].d0)
                         : load(L, n, parts[k].d0, 0, parts[k].dst);
        if (rc) return rc;
    }
    return 0;
}

void bert_free(bert_model *m) {
    if (!m) return;
    for (int k = 0; m->work && k < 64; k++) scratch_free(&m->work[k]);
    free(m->work);
    pthread_mutex_destroy(&m->lock);
    free(m->arena);
    free(m->layer);
    free(m);
}

const bert_config *bert_model_config(const bert_model *m) { return &m->c; }

void bert_set_threads(bert_model *m, int threads) {
    m->threads = threads < 1 ? 1 : threads > 64 ? 64 : threads;
    m->blas_threads = m->threads;
}

void bert_set_blas_threads(bert_model *m, int threads) {
    m->blas_threads = threads < 1 ? 1 : threads > 64 ? 64 : threads;
}

int bert_load(const bert_config *c, const st_file *st, bert_model **out, char *err, size_t errcap) {
    *out = NULL;
    const size_t H = (size_t)c->hidden, F = (size_t)c->intermediate;
    size_t per_layer = 4 * H * H + 3 * H + H + 4 * H + 2 * F * H + F + H;
    size_t total =
        ((size_t)c->vocab_size + (size_t)c->max_positions + (size_t)c->type_vocab + 2) * H +
        (size_t)c->layers * per_layer;
    bert_model *m = calloc(1, sizeof *m);
    if (m) {
        pthread_mutex_init(&m->lock, NULL);
        m->arena = malloc(total * sizeof(float));
        m->layer = calloc((size_t)c->layers, sizeof *m->layer);
        m->work = calloc(64, sizeof *m->work);
    }
    if (!m || !m->arena || !m->layer || !m->work) {
        bert_free(m);
        return set_err(err, errcap, REMEM_ENOMEM, "minilm: out of memory for %zu weights", total);
    }
    m->c = *c;
    m->threads = m->blas_threads = 1;
    float *p = m->arena;
#define TAKE(n) (p += (n), p - (n))
    m->word = TAKE((size_t)c->vocab_size * H);
    m->pos = TAKE((size_t)c->max_positions * H);
    m->type = TAKE((size_t)c->type_vocab * H);
    m->emb_g = TAKE(H);
    m->emb_b = TAKE(H);
    for (int i = 0; i < c->layers; i++) {
        struct bert_layer *y = &m->layer[i];
        y->wqkv = TAKE(3 * H * H);
        y->bqkv = TAKE(3 * H);
        y->wo = TAKE(H * H);
        y->bo = TAKE(H);
        y->ln1_g = TAKE(H);
        y->ln1_b = TAKE(H);
        y->w1 = TAKE(F * H);
        y->b1 = TAKE(F);
        y->w2 = TAKE(H * F);
        y->b2 = TAKE(H);
        y->ln2_g = TAKE(H);
        y->ln2_b = TAKE(H);
    }
#undef TAKE
    loader L = {st, "", err, errcap};
    if (!st_find(st, "embeddings.word_embeddings.weight") &&
        st_find(st, "bert.embeddings.word_embeddings.weight"))
        L.prefix = "bert.";
    int rc;
    if ((rc = load(&L, "embeddings.word_embeddings.weight", c->vocab_size, (int64_t)H, m->word)) ||
        (rc = load(&L, "embeddings.position_embeddings.weight", c->max_positions, (int64_t)H,
                   m->pos)) ||
        (rc = load(&L, "embeddings.token_type_embeddings.weight", c->type_vocab, (int64_t)H,
                   m->type)) ||
        (rc = load(&L, "embeddings.LayerNorm.weight", (int64_t)H, 0, m->emb_g)) ||
        (rc = load(&L, "embeddings.LayerNorm.bias", (int64_t)H, 0, m->emb_b))) {
        bert_free(m);
        return rc;
    }
    for (int i = 0; i < c->layers; i++)
        if ((rc = load_layer(&L, c, i, &m->layer[i]))) {
            bert_free(m);
            return rc;
        }
    *out = m;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Element-wise kernels                                                 */
/* ------------------------------------------------------------------ */
/* Not under ThreadSanitizer: the clones' resolver runs before it starts. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define VECTOR_CLONES \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), optimize("O3")))
#else
#define VECTOR_CLONES
#endif

static inline float bits_to_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* e^x for x <= 0 (all that softmax and erf need): x = n ln2 + r with
 * |r| <= ln2/2, e^r by its Taylor series to r^7 (relative error < 1e-8),
 * 2^n put straight into the exponent bits. */
static inline float exp_nonpositive(float x) {
    /* Clamped to [-87, 0], NaN included (it fails both tests): the weights
     * are finite, but finite weights can still overflow to inf - inf, and a
     * NaN or positive n below would be an undefined conversion to int. */
    x = x > 0.0f ? 0.0f : x;
    x = x >= -87.0f ? x : -87.0f;
    float n = (x * 1.44269504f + 12582912.0f) - 12582912.0f; /* round to nearest */
    float r = x - n * 0.693145752f - n * 1.42860677e-6f;
    float p = 1.0f / 5040;
    p = p * r + 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    return p * bits_to_float((uint32_t)((int32_t)n + 127) << 23);
}

/* x * Phi(x) = x/2 (1 + erf(x / sqrt 2)), erf by Abramowitz and Stegun
 * 7.1.26 (absolute error <= 1.5e-7). */
VECTOR_CLONES
static void gelu_bias(float *x, const float *bias, size_t rows, size_t cols) {
    for (size_t r = 0; r < rows; r++) {
        float *row = x + r * cols;
        for (size_t i = 0; i < cols; i++) {
            float v = row[i] + bias[i];
            float z = v * 0.707106781f;
            float a = z < 0 ? -z : z;
            float t = 1.0f / (1.0f + 0.3275911f * a);
            float poly =
                t *
                (0.254829592f +
                 t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
            float erf_a = 1.0f - poly * exp_nonpositive(-a * a);
            float erf_z = z < 0 ? -erf_a : erf_a;
            row[i] = 0.5f * v * (1.0f + erf_z);
        }
    }
}

/* The unnormalised softmax of each row of s (rows x cols, scaled scores)
 * in place: e^(x - max); inv_sum[r] receives 1 / the row's sum, applied by
 * the caller to the much smaller product with V. Max and sum run in 16
 * lanes so that they vectorise without reordering anything. */
VECTOR_CLONES
static void softmax_rows(float *s, size_t rows, size_t cols, float *inv_sum) {
    for (size_t r = 0; r < rows; r++) {
        float *row = s + r * cols;
        float lane[16], max = row[0];
        size_t i = 0;
        for (int k = 0; k < 16; k++) lane[k] = row[0];
        for (; i + 16 <= cols; i += 16)
            for (int k = 0; k < 16; k++) lane[k] = row[i + k] > lane[k] ? row[i + k] : lane[k];
        for (; i < cols; i++) max = row[i] > max ? row[i] : max;
        for (int k = 0; k < 16; k++) max = lane[k] > max ? lane[k] : max;
        for (i = 0; i < cols; i++) row[i] = exp_nonpositive(row[i] - max);
        float sum = 0;
        for (int k = 0; k < 16; k++) lane[k] = 0;
        for (i = 0; i + 16 <= cols; i += 16)
            for (int k = 0; k < 16; k++) lane[k] += row[i + k];
        for (; i < cols; i++) sum += row[i];
        for (int k = 0; k < 16; k++) sum += lane[k];
        inv_sum[r] = 1.0f / sum;
    }
}

/* x = LayerNorm(x + add + bias) row by row (add, bias may be NULL). Sums
 * run in 16 lanes so that they vectorise without reordering anything. */
VECTOR_CLONES
static void add_layernorm(float *x, const float *add, const float *bias, const float *g,
                          const float *b, size_t rows, size_t cols, float eps) {
    for (size_t r = 0; r < rows; r++) {
        float *row = x + r * cols;
        if (add)
            for (size_t i = 0; i < cols; i++) row[i] += add[r * cols + i];
        if (bias)
            for (size_t i = 0; i < cols; i++) row[i] += bias[i];
        float lane[16] = {0};
        size_t i = 0;
        for (; i + 16 <= cols; i += 16)
            for (int k = 0; k < 16; k++) lane[k] += row[i + k];
        float sum = 0;
        for (; i < cols; i++) sum += row[i];
        for (int k = 0; k < 16; k++) sum += lane[k];
        float mean = sum / (float)cols;
        for (int k = 0; k < 16; k++) lane[k] = 0;
        for (i = 0; i + 16 <= cols; i += 16)
            for (int k = 0; k < 16; k++) {
                float d = row[i + k] - mean;
                lane[k] += d * d;
            }
        float var = 0;
        for (; i < cols; i++) var += (row[i] - mean) * (row[i] - mean);
        for (int k = 0; k < 16; k++) var += lane[k];
        float inv = 1.0f / sqrtf(var / (float)cols + eps);
        for (i = 0; i < cols; i++) row[i] = (row[i] - mean) * inv * g[i] + b[i];
    }
}

/* ------------------------------------------------------------------ */
/* The encoder                                                          */
/* ------------------------------------------------------------------ */
/* out[T, n_out] = x[T, n_in] * w, w stored [n_in, n_out]; beta as cblas. */
static void linear(const float *x, const float *w, float *out, size_t T, size_t n_in, size_t n_out,
                   float beta) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)T, (int)n_out, (int)n_in, 1.0f, x,
                (int)n_in, w, (int)n_out, beta, out, (int)n_out);
}

/* Self-attention of one sequence (rows [0, len) of qkv) into ctx.
 * scores has room for len * len + len floats. */
static void attend(const bert_config *c, const float *qkv, float *ctx, float *scores, size_t len) {
    const size_t H = (size_t)c->hidden, d = H / (size_t)c->heads, ld = 3 * H;
    const float scale = 1.0f / sqrtf((float)d);
    float *inv_sum = scores + len * len;
    for (size_t h = 0; h < (size_t)c->heads; h++) {
        const float *q = qkv + h * d, *k = qkv + H + h * d, *v = qkv + 2 * H + h * d;
        float *out = ctx + h * d;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)len, (int)len, (int)d, scale, q,
                    (int)ld, k, (int)ld, 0.0f, scores, (int)len);
        softmax_rows(scores, len, len, inv_sum);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)len, (int)d, (int)len, 1.0f,
                    scores, (int)len, v, (int)ld, 0.0f, out, (int)H);
        for (size_t r = 0; r < len; r++)
            for (size_t i = 0; i < d; i++) out[r * H + i] *= inv_sum[r];
    }
}

static int encode_group(const bert_model *m, scratch *work, const bert_seq *seqs, size_t n,
                        float *pooled, float *hidden) {
    const bert_config *c = &m->c;
    const size_t H = (size_t)c->hidden, F = (size_t)c->intermediate;
    size_t T = 0, maxlen = 0;
    for (size_t s = 0; s < n; s++) {
        T += (size_t)seqs[s].len;
        if ((size_t)seqs[s].len > maxlen) maxlen = (size_t)seqs[s].len;
    }
    if (T == 0) return 0;
    if (scratch_reserve(work, T, maxlen, c)) return REMEM_ENOMEM;
    scratch w = *work;

    /* Embeddings: word + position + token type 0, then LayerNorm. */
    for (size_t s = 0, row = 0; s < n; s++)
        for (int p = 0; p < seqs[s].len; p++, row++) {
            const float *we = m->word + (size_t)seqs[s].ids[p] * H, *pe = m->pos + (size_t)p * H;
            float *x = w.x + row * H;
            for (size_t i = 0; i < H; i++) x[i] = we[i] + pe[i] + m->type[i];
        }
    add_layernorm(w.x, NULL, NULL, m->emb_g, m->emb_b, T, H, c->ln_eps);

    for (int l = 0; l < c->layers; l++) {
        const struct bert_layer *y = &m->layer[l];
        for (size_t r = 0; r < T; r++) memcpy(w.qkv + r * 3 * H, y->bqkv, 3 * H * sizeof(float));
        linear(w.x, y->wqkv, w.qkv, T, H, 3 * H, 1.0f);
        for (size_t s = 0, row = 0; s < n; row += (size_t)seqs[s].len, s++)
            attend(c, w.qkv + row * 3 * H, w.ctx + row * H, w.scores, (size_t)seqs[s].len);
        linear(w.ctx, y->wo, w.tmp, T, H, H, 0.0f);
        add_layernorm(w.x, w.tmp, y->bo, y->ln1_g, y->ln1_b, T, H, c->ln_eps);
        linear(w.x, y->w1, w.ff, T, H, F, 0.0f);
        gelu_bias(w.ff, y->b1, T, F);
        linear(w.ff, y->w2, w.tmp, T, F, H, 0.0f);
        add_layernorm(w.x, w.tmp, y->b2, y->ln2_g, y->ln2_b, T, H, c->ln_eps);
    }

    /* Mean over each sequence's tokens. */
    for (size_t s = 0, row = 0; s < n; s++) {
        float *o = pooled + s * H;
        memset(o, 0, H * sizeof(float));
        for (int p = 0; p < seqs[s].len; p++, row++)
            for (size_t i = 0; i < H; i++) o[i] += w.x[row * H + i];
        for (size_t i = 0; i < H; i++) o[i] /= (float)seqs[s].len;
    }
    if (hidden) memcpy(hidden, w.x, T * H * sizeof(float));
    return 0;
}

/* A batch is cut into pieces of about this many tokens (whole sequences),
 * which the threads take one at a time: a thread slowed down by other work
 * on its core takes fewer pieces instead of holding the others up. 256
 * tokens keep the products near full speed (bench/README.md). */
#define PIECE_TOKENS 256

typedef struct piece {
    size_t first, n; /* sequences [first, first + n) */
    size_t row;      /* their first token among all the batch's */
} piece;

typedef struct worker {
    const bert_model *m;
    scratch *work;
    const bert_seq *seqs;
    const piece *pieces;
    size_t npieces;
    atomic_size_t *next; /* the next piece to take, shared */
    float *pooled, *hidden;
    size_t H;
    int rc;
} worker;

static void *worker_main(void *arg) {
    worker *w = arg;
    for (;;) {
        size_t k = atomic_fetch_add(w->next, 1);
        if (k >= w->npieces) break;
        const piece *p = &w->pieces[k];
        int rc = encode_group(w->m, w->work, w->seqs + p->first, p->n, w->pooled + p->first * w->H,
                              w->hidden ? w->hidden + p->row * w->H : NULL);
        if (rc && !w->rc) w->rc = rc;
    }
    return NULL;
}

int bert_encode(bert_model *m, const bert_seq *seqs, size_t n, float *pooled, float *hidden,
                char *err, size_t errcap) {
    const bert_config *c = &m->c;
    const size_t H = (size_t)c->hidden;
    size_t T = 0;
    for (size_t s = 0; s < n; s++) {
        if (seqs[s].len < 1 || seqs[s].len > c->max_positions)
            return set_err(err, errcap, REMEM_EINVAL, "bert: sequence %zu has %d tokens (1..%d)", s,
                           seqs[s].len, c->max_positions);
        for (int p = 0; p < seqs[s].len; p++)
            if (seqs[s].ids[p] < 0 || seqs[s].ids[p] >= c->vocab_size)
                return set_err(err, errcap, REMEM_EINVAL,
                               "bert: token id %d outside the vocabulary (%d)", seqs[s].ids[p],
                               c->vocab_size);
        T += (size_t)seqs[s].len;
    }
    if (n == 0) return 0;
    bert_blas_setup();

    /* One piece when one thread, else pieces of about PIECE_TOKENS. */
    piece *pieces = malloc(n * sizeof *pieces);
    if (!pieces) return set_err(err, errcap, REMEM_ENOMEM, "bert: out of memory");
    size_t npieces = 0, row = 0;
    for (size_t s = 0; s < n;) {
        piece p = {s, 0, row};
        size_t tokens = 0;
        while (s < n &&
               (p.n == 0 || m->threads == 1 || tokens + (size_t)seqs[s].len <= PIECE_TOKENS)) {
            tokens += (size_t)seqs[s].len;
            p.n++;
            s++;
        }
        row += tokens;
        pieces[npieces++] = p;
    }
    size_t threads = (size_t)m->threads < npieces ? (size_t)m->threads : npieces;
    /* Several threads: each runs single-threaded BLAS. One piece (a single
     * sequence, say): OpenBLAS's own threads share its products. */
    openblas_set_num_threads(threads > 1 ? 1 : m->blas_threads);
    /* The model's working memory, unless another caller is using it: then
     * this call gets its own for once. */
    int cached = pthread_mutex_trylock(&m->lock) == 0;
    scratch own[64];
    memset(own, 0, threads * sizeof *own);
    atomic_size_t next;
    atomic_init(&next, 0);
    worker w[64];
    for (size_t k = 0; k < threads; k++)
        w[k] = (worker){
            m, cached ? &m->work[k] : &own[k], seqs, pieces, npieces, &next, pooled, hidden, H, 0};
    pthread_t tid[64];
    int started[64] = {0};
    for (size_t k = 1; k < threads; k++)
        started[k] = pthread_create(&tid[k], NULL, worker_main, &w[k]) == 0;
    worker_main(&w[0]); /* the caller works too, and takes what a thread failed to */
    int rc = w[0].rc;
    for (size_t k = 1; k < threads; k++) {
        if (started[k]) pthread_join(tid[k], NULL);
        if (!rc) rc = w[k].rc;
    }
    if (cached)
        pthread_mutex_unlock(&m->lock);
    else
        for (size_t k = 0; k < threads; k++) scratch_free(&own[k]);
    free(pieces);
    if (rc) return set_err(err, errcap, rc, "bert: out of memory for %zu tokens", T);
    return 0;
}

double bert_flops(const bert_config *c, const int *lens, size_t n) {
    double H = c->hidden, F = c->intermediate, total = 0;
    for (size_t s = 0; s < n; s++) {
        double L = lens[s];
        double dense = 2 * L * (3 * H * H + H * H + 2 * H * F);
        double attention = 2 * 2 * L * L * H;
        total += c->layers * (dense + attention);
    }
    return total;
}

/* ------------------------------------------------------------------ */
/* OpenBLAS kernels                                                     */
/* ------------------------------------------------------------------ */
static const char *blas_core = "unknown";

static void blas_setup_once(void) {
    blas_core = openblas_get_corename();
    /* Only the kernels that lack AVX2 are replaced, only when the user has
     * not chosen, and only through OpenBLAS's own dynamic-arch entry
     * points (present in its DYNAMIC_ARCH builds, such as Debian's). */
    static const char *const slow[] = {"prescott",  "core2",  "penryn", "dunnington",
                                       "nehalem",   "atom",   "katmai", "coppermine",
                                       "northwood", "banias", "unknown"};
    int is_slow = 0;
    for (size_t i = 0; i < sizeof slow / sizeof *slow; i++)
        if (blas_core && strcasecmp(blas_core, slow[i]) == 0) is_slow = 1;
    if (!is_slow || getenv("OPENBLAS_CORETYPE")) return;
    void (*quit)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit");
    void (*init)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init");
    if (!quit || !init) return;
    const char *want = NULL;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        /* Cooperlake's parameters suit small products better than
         * SkylakeX's (bench/README.md); it needs AVX512-BF16. */
        want = __builtin_cpu_supports("avx512bf16") ? "Cooperlake" : "SkylakeX";
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        want = "Haswell";
#endif
    if (!want) return;
    setenv("OPENBLAS_CORETYPE", want, 0);
    quit();
    init();
    blas_core = openblas_get_corename();
}

const char *bert_blas_setup(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, blas_setup_once);
    return blas_core;
}
