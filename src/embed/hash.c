/*
 * hash.c: the "hash" embedder, remem's default when no neural model is
 * installed. It needs no model file and no network, is deterministic down to
 * the bit, and is fast (over 100,000 texts of 100 characters per second), so
 * that remem works out of the box; recall comes from it together with BM25 in
 * the hybrid ranking, so it is built to catch what BM25 misses rather than to
 * repeat it.
 *
 * Text -> words: a word is a run of Unicode letters, marks and digits
 * (utf8proc decides; bytes of invalid UTF-8 count as letters, so nothing is
 * lost or crashes), lowercased. Apostrophes inside words are handled as
 * English clitics: "Caroline's", "I'm", "we've", "you'll" drop the ending
 * ("caroline", "i", ...), "don't" joins ("dont"). English function words are
 * dropped; chat fillers ("hey", "thanks") are kept, since dropping them
 * measured worse: a filler turn is then left with little but its speaker's
 * name. A light suffix-stripping stemmer then makes "painting", "painted",
 * "paints" and "paint" one stem, and "stories"/"story", "happily"/"happy",
 * "make"/"making" likewise. It is deliberately crude: both sides of a
 * comparison go through it, so consistency matters more than linguistics.
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

#include <utf8proc.h>
#define XXH_INLINE_ALL /* the features are short: inlined XXH3 is faster */
#include <xxhash.h>

#include "remem.h"

enum {
    DEFAULT_DIM = 384,
    MAX_DIM = 1 << 16,
    WORD_MAX = 96, /* bytes; a longer run of letters is cut into pieces */
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

/* Sorted (strcmp order): looked up with bsearch. Contractions appear
 * without their apostrophe, as the tokeniser leaves them. */
static const char *const STOPWORDS[] = {
    "a",     "about",  "above",    "after",      "again",     "against", "all",        "also",
    "am",    "an",     "and",      "any",        "are",       "aren",    "arent",      "as",
    "at",    "be",     "because",  "been",       "before",    "being",   "below",      "between",
    "both",  "but",    "by",       "can",        "cant",      "could",   "couldnt",    "did",
    "didnt", "do",     "does",     "doesnt",     "doing",     "dont",    "down",       "during",
    "each",  "even",   "ever",     "few",        "for",       "from",    "further",    "had",
    "hadnt", "has",    "hasnt",    "have",       "havent",    "having",  "he",         "her",
    "here",  "hers",   "herself",  "him",        "himself",   "his",     "how",        "i",
    "if",    "in",     "into",     "is",         "isnt",      "it",      "its",        "itself",
    "just",  "me",     "more",     "most",       "much",      "my",      "myself",     "no",
    "nor",   "not",    "now",      "of",         "off",       "on",      "once",       "only",
    "or",    "other",  "our",      "ours",       "ourselves", "out",     "over",       "own",
    "same",  "shall",  "she",      "should",     "shouldnt",  "so",      "some",       "such",
    "than",  "that",   "the",      "their",      "theirs",    "them",    "themselves", "then",
    "there", "these",  "they",     "this",       "those",     "through", "to",         "too",
    "under", "until",  "up",       "us",         "very",      "was",     "wasnt",      "we",
    "were",  "werent", "what",     "when",       "where",     "which",   "while",      "who",
    "whom",  "why",    "will",     "with",       "wont",      "would",   "wouldnt",    "you",
    "your",  "yours",  "yourself", "yourselves",
};

enum { STOPWORD_MAX = 10 }; /* the longest: "yourselves" */

/* Clitics dropped after an apostrophe ("I'm", "Caroline's", "we'll"). */
static const char *const CLITICS[] = {"s", "m", "d", "ll", "ve", "re"};

typedef struct word_key {
    const char *w;
    size_t len;
} word_key;

static int compare_stopword(const void *key, const void *elem) {
    const word_key *k = key;
    const char *s = *(const char *const *)elem;
    size_t slen = strlen(s);
    int c = memcmp(k->w, s, k->len < slen ? k->len : slen);
    if (c) return c;
    return k->len < slen ? -1 : k->len > slen;
}

static int is_stopword(const char *w, size_t len) {
    if (len > STOPWORD_MAX) return 0;
    word_key k = {w, len};
    return bsearch(&k, STOPWORDS, sizeof STOPWORDS / sizeof *STOPWORDS, sizeof *STOPWORDS,
                   compare_stopword) != NULL;
}

static int is_vowel(char c) {
    return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'y';
}

static int has_vowel(const char *w, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (is_vowel(w[i])) return 1;
    return 0;
}

static int ends_with_n(const char *w, size_t len, const char *suffix, size_t n) {
    return len >= n && memcmp(w + len - n, suffix, n) == 0;
}
/* suffix is a string literal: its length is known at compile time. */
#define ENDS_WITH(w, len, suffix) ends_with_n(w, len, suffix, sizeof suffix - 1)

/* The light stemmer, in place; returns the new length (w may gain a 'y' in
 * place of "ies"/"ied"/"ily"). Four steps in order: plurals, -ly adverbs,
 * -ing/-ed (then a doubled final consonant is undone: "running" -> "run"),
 * or else a final silent 'e' ("make"/"making" -> "mak", "agree"/"agreed" ->
 * "agre"). Length guards keep short words ("sing", "bed", "need") whole. */
static size_t stem(char *w, size_t len) {
    if (len > 4 && ENDS_WITH(w, len, "ies")) {
        len -= 2;
        w[len - 1] = 'y';
    } else if (ENDS_WITH(w, len, "sses")) {
        len -= 2;
    } else if (len > 4 && (ENDS_WITH(w, len, "xes") || ENDS_WITH(w, len, "zes") ||
                           ENDS_WITH(w, len, "ches") || ENDS_WITH(w, len, "shes"))) {
        len -= 2;
    } else if (len > 3 && w[len - 1] == 's' && w[len - 2] != 's' && w[len - 2] != 'u' &&
               w[len - 2] != 'i') {
        len -= 1;
    }

    if (len > 4 && ENDS_WITH(w, len, "ily")) {
        len -= 2;
        w[len - 1] = 'y';
    } else if (len >= 6 && ENDS_WITH(w, len, "ly")) {
        len -= 2;
    }

    size_t before = len;
    if (len >= 5 && ENDS_WITH(w, len, "ing") && has_vowel(w, len - 3)) {
        len -= 3;
    } else if (len > 4 && ENDS_WITH(w, len, "ied")) {
        len -= 2;
        w[len - 1] = 'y';
    } else if (len >= 5 && ENDS_WITH(w, len, "ed") && has_vowel(w, len - 2)) {
        len -= 2;
    }
    if (len == before) {
        if (len >= 4 && w[len - 1] == 'e') len--;
    } else if (len >= 3 && w[len - 1] == w[len - 2] && !is_vowel(w[len - 1]) && w[len - 1] != 'l' &&
               w[len - 1] != 's' && w[len - 1] != 'z') {
        len--;
    }
    w[len] = '\0';
    return len;
}

/* A word as the scanner builds it: lowercased UTF-8, NUL-terminated. */
typedef struct word_buf {
    char bytes[WORD_MAX + 8];
    size_t len;
    int has_digit;
} word_buf;

/* Called for each stemmed, non-stopword term. sentence_start: the term
 * follows a sentence end (or is the first), so no pair joins it to the one
 * before. */
typedef void (*term_fn)(const char *term, size_t len, int has_digit, int sentence_start, void *ctx);

typedef struct scanner {
    word_buf word;
    int sentence_start;
    term_fn fn;
    void *ctx;
    size_t terms;
} scanner;

static void flush_word(scanner *s) {
    word_buf *w = &s->word;
    if (w->len == 0) return;
    w->bytes[w->len] = '\0';
    if (!is_stopword(w->bytes, w->len)) {
        size_t len = w->has_digit ? w->len : stem(w->bytes, w->len);
        s->terms++;
        if (s->fn) s->fn(w->bytes, len, w->has_digit, s->sentence_start, s->ctx);
        s->sentence_start = 0;
    }
    w->len = 0;
    w->has_digit = 0;
}

static void append_bytes(scanner *s, const void *bytes, size_t n) {
    if (s->word.len + n > WORD_MAX) flush_word(s);
    memcpy(s->word.bytes + s->word.len, bytes, n);
    s->word.len += n;
}

static int ascii_alnum(unsigned c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int ascii_alpha(unsigned c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* p points just after an apostrophe inside a word. Returns how many bytes
 * to skip: past a clitic (the word then ends without it), or 0 (the
 * apostrophe is dropped and the word goes on: "don't" -> "dont"). */
static size_t clitic_length(const unsigned char *p) {
    size_t n = 0;
    char low[4];
    while (n < 3 && ascii_alpha(p[n])) {
        low[n] = (char)(p[n] | 0x20);
        n++;
    }
    if (n == 0 || ascii_alnum(p[n]) || p[n] >= 0x80) return 0;
    for (size_t i = 0; i < sizeof CLITICS / sizeof *CLITICS; i++)
        if (strlen(CLITICS[i]) == n && memcmp(CLITICS[i], low, n) == 0) return n;
    return 0;
}

static int is_word_codepoint(utf8proc_int32_t cp) {
    switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_CN: /* unassigned: as for invalid bytes, a letter */
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO: return 1;
    default: return 0;
    }
}

/* Handles an apostrophe (ASCII or U+2019) of n bytes at p; returns the bytes
 * consumed. Only between a word and a letter is it part of the word. */
static size_t scan_apostrophe(scanner *s, const unsigned char *p, size_t n) {
    if (s->word.len == 0 || !ascii_alpha(p[n])) {
        flush_word(s);
        return n;
    }
    size_t clitic = clitic_length(p + n);
    if (clitic) flush_word(s);
    return n + clitic;
}

static void scan_text(scanner *s, const char *text) {
    const unsigned char *p = (const unsigned char *)text;
    s->sentence_start = 1;
    while (*p) {
        unsigned c = *p;
        if (c < 0x80) {
            if (ascii_alnum(c)) {
                char low = (char)(c >= 'A' && c <= 'Z' ? c | 0x20 : c);
                append_bytes(s, &low, 1); /* may start a new piece: flag after */
                if (c <= '9') s->word.has_digit = 1;
                p++;
            } else if (c == '\'') {
                p += scan_apostrophe(s, p, 1);
            } else {
                flush_word(s);
                if (c == '.' || c == '!' || c == '?' || c == ';' || c == '\n')
                    s->sentence_start = 1;
                p++;
            }
            continue;
        }
        utf8proc_int32_t cp;
        utf8proc_ssize_t n = utf8proc_iterate(p, -1, &cp);
        if (n <= 0) { /* invalid UTF-8: the byte itself is a letter */
            append_bytes(s, p, 1);
            p++;
        } else if (cp == 0x2019) {
            p += scan_apostrophe(s, p, (size_t)n);
        } else if (is_word_codepoint(cp)) {
            utf8proc_uint8_t enc[4];
            utf8proc_ssize_t m = utf8proc_encode_char(utf8proc_tolower(cp), enc);
            append_bytes(s, enc, (size_t)m);
            if (utf8proc_category(cp) == UTF8PROC_CATEGORY_ND) s->word.has_digit = 1;
            p += n;
        } else {
            flush_word(s);
            p += n;
        }
    }
    flush_word(s);
}

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
    scanner s = {.fn = fn ? forward_term : NULL, .ctx = &call};
    if (text) scan_text(&s, text);
    return s.terms;
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

typedef struct text_features {
    feature_set set;
    uint64_t prev_word; /* hash of the previous term, for pairs */
    float prev_weight;
    int have_prev;
} text_features;

static void add_ngrams(feature_set *fs, const char *term, size_t len, float word_weight) {
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

    size_t grams = 0;
    for (size_t n = NGRAM_MIN; n <= NGRAM_MAX && n <= ncp; n++) grams += ncp - n + 1;
    if (grams == 0) return;
    float w = word_weight * NGRAM_WEIGHT / sqrtf((float)grams);
    for (size_t n = NGRAM_MIN; n <= NGRAM_MAX && n <= ncp; n++)
        for (size_t i = 0; i + n <= ncp; i++)
            feature_add(
                fs, XXH3_64bits_withSeed(marked + starts[i], starts[i + n] - starts[i], SEED_NGRAM),
                w);
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
    if (!has_digit) add_ngrams(&tf->set, term, len, weight);
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
    double sum = 0;
    for (int i = 0; i < dim; i++) sum += (double)out[i] * out[i];
    if (sum <= 0) return;
    float scale = (float)(1.0 / sqrt(sum));
    for (int i = 0; i < dim; i++) out[i] *= scale;
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
    int rc = REMEM_OK;
    for (size_t i = 0; i < n; i++) {
        feature_set_clear(&tf.set);
        tf.have_prev = 0;
        scanner s = {.fn = add_term, .ctx = &tf};
        scan_text(&s, texts[i]);
        if (tf.set.oom) {
            snprintf(err, errcap, "hash embedder: out of memory on text %zu", i);
            rc = REMEM_ENOMEM;
            break;
        }
        project(&tf.set, e->dim, out + i * (size_t)e->dim);
    }
    feature_set_free(&tf.set);
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
