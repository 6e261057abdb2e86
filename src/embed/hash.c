/*
 * hash.c: the "hash" embedder, remem's default when no neural model is
 * installed. It needs no model file and no network, is deterministic down to
 * the bit, and is fast (over 100,000 texts of 100 characters per second), so
 * that remem works out of the box; recall comes from it together with BM25 in
 * the hybrid ranking, so it is built to catch what BM25 misses rather than to
 * repeat it.
 *
 * Text -> words: the analyser of src/text/analyse.h (shared with the
 * lexical lane of recall): Unicode words, lowercased, English clitics
 * dropped, stopwords removed, a light stemmer ("painting", "painted",
 * "paints" -> "paint").
 *
 * Words -> features, each hashed with XXH3 (64 bits, a fixed seed per kind
 * of feature so that the word "ing" and the trigram "ing" never meet):
 *   - the stem, weight 1;
 *   - character 3- to 5-grams of "<stem>" (code points, with boundary
 *     markers), together weighing NGRAM_WEIGHT per word (each gram weighs
 *     NGRAM_WEIGHT / sqrt(grams)), so long words do not drown short ones;
 *     they match what the stemmer misses ("supportive"/"support") and typos
 *     ("educaton"/"education"); skipped for words with digits, so that 2022
 *     and 2023 stay apart;
 *   - adjacent stem pairs (across dropped stopwords, not across sentence
 *     ends), weight PAIR_WEIGHT: "support group" says more than "support"
 *     and "group" apart;
 *   - words of one or two code points weigh less (SHORT1_WEIGHT,
 *     SHORT2_WEIGHT): they are often leftovers ("s", "ok").
 * A feature seen tf times in one text counts weight * (1 + ln tf) (sublinear,
 * so a repeated word does not dominate a text). The top 32 bits of the
 * feature's hash pick the bucket (multiply-shift onto dim), bit 0 the sign
 * (signed hashing: collisions cancel on average instead of piling up). The
 * vector is then L2-normalised. A text with no features (empty, punctuation
 * only, all stopwords) gives the all-zero vector, as embed.h specifies.
 *
 * The model id is "hash-v1-<dim>": any change to the tokeniser, stemmer,
 * stopwords, weights or hash must bump the version, so that vectors from
 * two variants never mix in a namespace. (Letters are told apart by
 * utf8proc's Unicode tables; a newer Unicode can only move characters that
 * were unassigned before, which count as letters here.)
 *
 * The constants were tuned on the LoCoMo development split (each question's
 * evidence turns ranked among all turns of its conversation, categories 1-4,
 * recall@10), alone and in a hybrid with BM25 (min-max normalised, 0.4 hash
 * + 0.6 BM25): hash alone 0.43 where seed 000's adler32 bag of words gets
 * 0.18; the hybrid 0.56 where BM25 alone gets 0.54. The stemmer (+0.06 alone)
 * and the stopwords (+0.09) matter most; n-gram and pair weights, gram sizes
 * and short-word weights move it by less than 0.01 either way, and pairs
 * weigh little because questions rarely repeat the turn's word order.
 *
 * No global mutable state: the embedder holds only its dimension and each
 * call works in its own scratch memory, so one embedder may be used from many
 * threads at once.
 */
#include "embed/embed.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL /* the features are short: inlined XXH3 is faster */
#include <xxhash.h>

#include "remem.h"
#include "text/analyse.h"

enum {
    DEFAULT_DIM = 384,
    MAX_DIM = 1 << 16,
    WORD_MAX = TEXT_TERM_MAX, /* the longest term */
    NGRAM_MIN = 3,
    NGRAM_MAX = 5,
};

static const float NGRAM_WEIGHT = 0.6f;
static const float PAIR_WEIGHT = 0.25f;
static const float SHORT1_WEIGHT = 0.4f;
static const float SHORT2_WEIGHT = 0.7f;

/* One seed per kind of feature ("remem" and a kind number). */
static const uint64_t SEED_WORD = 0x72656d656d000001ull;
static const uint64_t SEED_NGRAM = 0x72656d656d000002ull;
static const uint64_t SEED_PAIR = 0x72656d656d000003ull;

/* ---------------------------------------------------------------- words */

/* The analyser's terms, for tests and callers who want them without
 * pairs or flags (embed.h). */
typedef struct terms_call {
    void (*fn)(const char *term, size_t len, void *ctx);
    void *ctx;
} terms_call;

static void forward_term(const char *term, size_t len, int has_digit, int sentence_start,
                         void *ctx) {
    (void)has_digit;
    (void)sentence_start;
    terms_call *call = ctx;
    call->fn(term, len, call->ctx);
}

size_t embed_hash_terms(const char *text, void (*fn)(const char *term, size_t len, void *ctx),
                        void *ctx) {
    terms_call call = {fn, ctx};
    return text_analyse(text, fn ? forward_term : NULL, &call);
}

/* --------------------------------------------------------- features */

/* The features of one text, merged by hash so that term frequency can be
 * made sublinear: an open-addressing table of indexes into a dense array. */
typedef struct feature {
    uint64_t key;
    float weight; /* the largest weight it was added with */
    uint32_t count;
    uint32_t slot;
} feature;

typedef struct feature_set {
    feature *items;
    size_t n, cap;
    int32_t *slots; /* -1: empty */
    size_t nslots;  /* a power of two, at least 2 * cap */
    int oom;
} feature_set;

static int feature_set_grow(feature_set *fs) {
    size_t cap = fs->cap ? fs->cap * 2 : 256;
    size_t nslots = cap * 2;
    feature *items = realloc(fs->items, cap * sizeof *items);
    if (!items) return -1;
    fs->items = items;
    int32_t *slots = malloc(nslots * sizeof *slots);
    if (!slots) return -1;
    memset(slots, 0xff, nslots * sizeof *slots);
    for (size_t i = 0; i < fs->n; i++) {
        size_t j = fs->items[i].key & (nslots - 1);
        while (slots[j] >= 0) j = (j + 1) & (nslots - 1);
        slots[j] = (int32_t)i;
        fs->items[i].slot = (uint32_t)j;
    }
    free(fs->slots);
    fs->slots = slots;
    fs->nslots = nslots;
    fs->cap = cap;
    return 0;
}

static void feature_add(feature_set *fs, uint64_t key, float weight) {
    if (fs->n == fs->cap && (fs->oom || feature_set_grow(fs) != 0)) {
        fs->oom = 1;
        return;
    }
    size_t mask = fs->nslots - 1, j = key & mask;
    for (; fs->slots[j] >= 0; j = (j + 1) & mask) {
        feature *f = &fs->items[fs->slots[j]];
        if (f->key == key) {
            f->count++;
            if (weight > f->weight) f->weight = weight;
            return;
        }
    }
    fs->slots[j] = (int32_t)fs->n;
    fs->items[fs->n++] = (feature){key, weight, 1, (uint32_t)j};
}

static void feature_set_clear(feature_set *fs) {
    for (size_t i = 0; i < fs->n; i++) fs->slots[fs->items[i].slot] = -1;
    fs->n = 0;
}

static void feature_set_free(feature_set *fs) {
    free(fs->items);
    free(fs->slots);
}

/* The n-grams of the short words of a batch, remembered for the rest of
 * the call: the words of a conversation repeat, and hashing a word's
 * grams (about 20 for a word of 8 letters) cost more than adding them.
 * Direct-mapped by the word's own hash; a word that does not fit (longer,
 * or more grams) is hashed each time, as before. The keys are added in the
 * same order either way, so the vector is the same to the bit. Made per
 * call (no state shared between threads), only for batches. */
enum { MEMO_SLOTS = 1024, MEMO_TERM = 15, MEMO_GRAMS = 42, MEMO_MIN_TEXTS = 8 };

typedef struct ngram_memo {
    uint8_t len; /* 0: empty */
    uint8_t n;   /* grams */
    char term[MEMO_TERM];
    float w; /* each gram's weight */
    uint64_t keys[MEMO_GRAMS];
} ngram_memo;

typedef struct text_features {
    feature_set set;
    uint64_t prev_word; /* hash of the previous term, for pairs */
    float prev_weight;
    int have_prev;
    ngram_memo *memo; /* MEMO_SLOTS, or NULL */
} text_features;

/* The grams of term (its code points marked "<term>") as keys, at most
 * cap of them; how many there are (more than cap: only cap written), and
 * each one's weight in *w. */
static size_t ngram_keys(const char *term, size_t len, float word_weight, uint64_t *keys,
                         size_t cap, float *w) {
    char marked[WORD_MAX + 8];
    size_t starts[WORD_MAX + 8], ncp = 0;
    marked[0] = '<';
    memcpy(marked + 1, term, len);
    marked[len + 1] = '>';
    size_t mlen = len + 2;
    /* Code point starts; a stray continuation byte stays with its
     * predecessor, which is as deterministic as anything else. */
    for (size_t i = 0; i < mlen; i++)
        if (((unsigned char)marked[i] & 0xC0) != 0x80) starts[ncp++] = i;
    starts[ncp] = mlen;

    size_t grams = 0, k = 0;
    for (size_t n = NGRAM_MIN; n <= NGRAM_MAX && n <= ncp; n++) grams += ncp - n + 1;
    if (grams == 0 || grams > cap) return grams;
    *w = word_weight * NGRAM_WEIGHT / sqrtf((float)grams);
    for (size_t n = NGRAM_MIN; n <= NGRAM_MAX && n <= ncp; n++)
        for (size_t i = 0; i + n <= ncp; i++)
            keys[k++] =
                XXH3_64bits_withSeed(marked + starts[i], starts[i + n] - starts[i], SEED_NGRAM);
    return grams;
}

static void add_ngrams(text_features *tf, const char *term, size_t len, float word_weight,
                       uint64_t word_hash) {
    ngram_memo *m = tf->memo && len <= MEMO_TERM ? &tf->memo[word_hash & (MEMO_SLOTS - 1)] : NULL;
    if (m && !(m->len == len && memcmp(m->term, term, len) == 0)) {
        float w = 0;
        size_t n = ngram_keys(term, len, word_weight, m->keys, MEMO_GRAMS, &w);
        m->len = 0;
        if (n <= MEMO_GRAMS) { /* remembered (0 grams too) */
            m->len = (uint8_t)len;
            m->n = (uint8_t)n;
            m->w = w;
            memcpy(m->term, term, len);
        }
    }
    if (m && m->len == len) {
        for (size_t i = 0; i < m->n; i++) feature_add(&tf->set, m->keys[i], m->w);
        return;
    }
    uint64_t keys[3 * (WORD_MAX + 8)];
    float w = 0;
    size_t n = ngram_keys(term, len, word_weight, keys, sizeof keys / sizeof *keys, &w);
    for (size_t i = 0; i < n; i++) feature_add(&tf->set, keys[i], w);
}

static size_t codepoints(const char *s, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++) n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

static void add_term(const char *term, size_t len, int has_digit, int sentence_start, void *ctx) {
    text_features *tf = ctx;
    size_t ncp = codepoints(term, len);
    float weight = ncp == 1 ? SHORT1_WEIGHT : ncp == 2 ? SHORT2_WEIGHT : 1.0f;
    uint64_t h = XXH3_64bits_withSeed(term, len, SEED_WORD);
    feature_add(&tf->set, h, weight);
    if (tf->have_prev && !sentence_start) {
        uint64_t pair[2] = {tf->prev_word, h};
        float pw = PAIR_WEIGHT * (weight < tf->prev_weight ? weight : tf->prev_weight);
        feature_add(&tf->set, XXH3_64bits_withSeed(pair, sizeof pair, SEED_PAIR), pw);
    }
    if (!has_digit) add_ngrams(tf, term, len, weight, h);
    tf->prev_word = h;
    tf->prev_weight = weight;
    tf->have_prev = 1;
}

/* Projects the merged features onto dim signed buckets and normalises. */
static void project(const feature_set *fs, int dim, float *out) {
    memset(out, 0, (size_t)dim * sizeof *out);
    for (size_t i = 0; i < fs->n; i++) {
        const feature *f = &fs->items[i];
        float v = f->count > 1 ? f->weight * (1.0f + logf((float)f->count)) : f->weight;
        size_t bucket = (size_t)(((f->key >> 32) * (uint64_t)dim) >> 32);
        out[bucket] += (f->key & 1) ? -v : v;
    }
    /* The squares are summed in order, one at a time (the same bits as
     * ever: a stored vector must not move); each square is exact in a
     * double, so four are made at once. The scaling is per element. */
    double sum = 0;
    int i = 0;
    for (; i + 4 <= dim; i += 4) {
        double a = (double)out[i] * out[i], b = (double)out[i + 1] * out[i + 1];
        double c = (double)out[i + 2] * out[i + 2], d = (double)out[i + 3] * out[i + 3];
        sum += a;
        sum += b;
        sum += c;
        sum += d;
    }
    for (; i < dim; i++) sum += (double)out[i] * out[i];
    if (sum <= 0) return;
    float scale = (float)(1.0 / sqrt(sum));
    typedef float v4 __attribute__((vector_size(16), aligned(4)));
    for (i = 0; i + 4 <= dim; i += 4) {
        v4 v;
        memcpy(&v, out + i, sizeof v);
        v *= scale;
        memcpy(out + i, &v, sizeof v);
    }
    for (; i < dim; i++) out[i] *= scale;
}

/* ---------------------------------------------------------- embedder */

static int hash_embed(embedder *e, const char *const *texts, size_t n, float *out, char *err,
                      size_t errcap) {
    if (n > 0 && (!texts || !out)) {
        snprintf(err, errcap, "hash embedder: texts and out must not be NULL");
        return REMEM_EINVAL;
    }
    for (size_t i = 0; i < n; i++)
        if (!texts[i]) {
            snprintf(err, errcap, "hash embedder: text %zu is NULL", i);
            return REMEM_EINVAL;
        }
    text_features tf = {0};
    /* No memory for the memo: the grams are hashed each time. */
    if (n >= MEMO_MIN_TEXTS) tf.memo = calloc(MEMO_SLOTS, sizeof *tf.memo);
    int rc = REMEM_OK;
    for (size_t i = 0; i < n; i++) {
        feature_set_clear(&tf.set);
        tf.have_prev = 0;
        text_analyse(texts[i], add_term, &tf);
        if (tf.set.oom) {
            snprintf(err, errcap, "hash embedder: out of memory on text %zu", i);
            rc = REMEM_ENOMEM;
            break;
        }
        project(&tf.set, e->dim, out + i * (size_t)e->dim);
    }
    feature_set_free(&tf.set);
    free(tf.memo);
    return rc;
}

static void hash_destroy(embedder *e) { free(e); }

int embed_hash_create(const embed_config *cfg, embedder **out, char *err, size_t errcap) {
    int dim = cfg && cfg->dim ? cfg->dim : DEFAULT_DIM;
    if (!out) {
        snprintf(err, errcap, "hash embedder: out must not be NULL");
        return REMEM_EINVAL;
    }
    *out = NULL;
    if (dim < 2 || dim > MAX_DIM) {
        snprintf(err, errcap, "hash embedder: dim %d out of range (2..%d)", dim, MAX_DIM);
        return REMEM_EINVAL;
    }
    embedder *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, errcap, "hash embedder: out of memory");
        return REMEM_ENOMEM;
    }
    e->name = "hash";
    e->dim = dim;
    snprintf(e->model_id, sizeof e->model_id, "hash-v1-%d", dim);
    e->embed = hash_embed;
    e->destroy = hash_destroy;
    *out = e;
    return REMEM_OK;
}
