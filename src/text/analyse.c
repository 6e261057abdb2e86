/*
 * analyse.c: the word analyser of analyse.h: a one-pass scanner over
 * UTF-8 (ASCII on a fast path, the rest through utf8proc's categories and
 * lowercasing), the English clitic rules at apostrophes (ASCII ' and
 * U+2019), a stopword list in a hash table built once, and a light
 * stemmer applied in place, or else Snowball's English stemmer through
 * libstemmer (a well-kept implementation: "deploy", "deploying" and
 * "deployments" become one stem, which the light stemmer misses). The
 * stopword list keeps chat fillers ("hey", "thanks"): dropping them
 * measured worse on LoCoMo, since a filler turn is then left with little
 * but its speaker's name.
 */
#include "text/analyse.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libstemmer.h>
#include <utf8proc.h>

enum { WORD_MAX = TEXT_TERM_MAX }; /* bytes; a longer run of letters is cut into pieces */

/* Contractions appear without their apostrophe, as the tokeniser leaves
 * them (kept sorted, for the reader). */
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

/* The stopwords in an open-addressing table, built once (pthread_once)
 * and only read after: a lookup is a hash of the word and a compare or
 * two, where a bsearch took eight compares, each with a strlen. */
enum { N_STOPWORDS = sizeof STOPWORDS / sizeof *STOPWORDS, STOP_SLOTS = 512 };
static unsigned char stop_slot[STOP_SLOTS]; /* 1 + index in STOPWORDS; 0: empty */
static unsigned char stop_len[N_STOPWORDS];
static pthread_once_t stop_once = PTHREAD_ONCE_INIT;

static unsigned stop_hash(const char *w, size_t len) {
    unsigned h = (unsigned)len;
    for (size_t i = 0; i < len; i++) h = h * 31 + (unsigned char)w[i];
    return h & (STOP_SLOTS - 1);
}

static void stop_init(void) {
    for (size_t i = 0; i < N_STOPWORDS; i++) {
        stop_len[i] = (unsigned char)strlen(STOPWORDS[i]);
        unsigned j = stop_hash(STOPWORDS[i], stop_len[i]);
        while (stop_slot[j]) j = (j + 1) & (STOP_SLOTS - 1);
        stop_slot[j] = (unsigned char)(i + 1);
    }
}

static int is_stopword(const char *w, size_t len) {
    if (len > STOPWORD_MAX) return 0;
    pthread_once(&stop_once, stop_init);
    for (unsigned j = stop_hash(w, len); stop_slot[j]; j = (j + 1) & (STOP_SLOTS - 1)) {
        size_t i = stop_slot[j] - 1u;
        if (stop_len[i] == len && memcmp(STOPWORDS[i], w, len) == 0) return 1;
    }
    return 0;
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
    int capital; /* its first letter was upper case in the text */
} word_buf;

/* Snowball costs about half a microsecond a word, as much as the rest of
 * the analysis, and a namespace's load stems every word of every memory:
 * the stems of short words are remembered in a direct-mapped table (a
 * word's slot is its hash; a newer word takes the slot over), so a load
 * runs Snowball about once per distinct word. 4096 slots of 48 bytes: 192
 * KiB per stemmer, held beside Snowball's own state. */
enum { MEMO_SLOTS = 4096, MEMO_WORD = 23 };

typedef struct memo_slot {
    uint8_t in_len, out_len; /* in_len 0: empty */
    char in[MEMO_WORD], out[MEMO_WORD];
} memo_slot;

struct text_stemmer {
    struct sb_stemmer *sb;
    memo_slot memo[MEMO_SLOTS];
};

typedef struct scanner {
    text_stemmer *snowball; /* NULL: the light stemmer */
    word_buf word;
    int sentence_start;
    text_term_fn fn;
    text_word_fn word_fn; /* set: words unstemmed, to it (text_words) */
    void *ctx;
    void *ctx2; /* word_fn's when fn is set too (text_analyse_words) */
    size_t terms;
} scanner;

/* Snowball's stem of w, copied back into it; its new length. */
static memo_slot *memo_slot_of(text_stemmer *st, const char *w, size_t len) {
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)w[i]) * 16777619u;
    return &st->memo[h & (MEMO_SLOTS - 1)];
}

static size_t snowball_stem(text_stemmer *st, word_buf *w) {
    memo_slot *m = w->len <= MEMO_WORD ? memo_slot_of(st, w->bytes, w->len) : NULL;
    if (m && m->in_len == w->len && memcmp(m->in, w->bytes, w->len) == 0) {
        memcpy(w->bytes, m->out, m->out_len);
        w->bytes[m->out_len] = '\0';
        return m->out_len;
    }
    const sb_symbol *out = sb_stemmer_stem(st->sb, (const sb_symbol *)w->bytes, (int)w->len);
    int n = out ? sb_stemmer_length(st->sb) : -1;
    /* Out of memory in the stemmer, or (never in English) a longer stem:
     * the word stays whole, as the same word always does. */
    if (n < 0 || (size_t)n > WORD_MAX) return w->len;
    if (m && (size_t)n <= MEMO_WORD) {
        m->in_len = (uint8_t)w->len;
        memcpy(m->in, w->bytes, w->len);
        m->out_len = (uint8_t)n;
        memcpy(m->out, out, (size_t)n);
    }
    memcpy(w->bytes, out, (size_t)n);
    w->bytes[n] = '\0';
    return (size_t)n;
}

static void flush_word(scanner *s) {
    word_buf *w = &s->word;
    if (w->len == 0) return;
    w->bytes[w->len] = '\0';
    int stop = is_stopword(w->bytes, w->len);
    if (!stop && s->word_fn && s->fn) { /* both: the word as it is, then its stem */
        unsigned flags = (w->has_digit ? TEXT_WORD_DIGIT : 0) |
                         (s->sentence_start ? TEXT_WORD_SENTENCE_START : 0) |
                         (w->capital ? TEXT_WORD_CAPITAL : 0);
        s->word_fn(w->bytes, w->len, flags, s->ctx2);
        size_t len = w->has_digit  ? w->len
                     : s->snowball ? snowball_stem(s->snowball, w)
                                   : stem(w->bytes, w->len);
        s->terms++;
        s->fn(w->bytes, len, w->has_digit, s->sentence_start, s->ctx);
        s->sentence_start = 0;
    } else if (!stop && s->word_fn) {
        unsigned flags = (w->has_digit ? TEXT_WORD_DIGIT : 0) |
                         (s->sentence_start ? TEXT_WORD_SENTENCE_START : 0) |
                         (w->capital ? TEXT_WORD_CAPITAL : 0);
        s->terms++;
        s->word_fn(w->bytes, w->len, flags, s->ctx);
        s->sentence_start = 0;
    } else if (!stop) {
        size_t len = w->has_digit  ? w->len
                     : s->snowball ? snowball_stem(s->snowball, w)
                                   : stem(w->bytes, w->len);
        s->terms++;
        if (s->fn) s->fn(w->bytes, len, w->has_digit, s->sentence_start, s->ctx);
        s->sentence_start = 0;
    }
    w->len = 0;
    w->has_digit = 0;
    w->capital = 0;
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
                /* A run of ASCII letters and digits at once: what
                 * append_bytes does a byte at a time, inline. */
                word_buf *w = &s->word;
                do {
                    int upper = c >= 'A' && c <= 'Z';
                    if (w->len == 0) w->capital = upper;
                    if (w->len + 1 > WORD_MAX) flush_word(s); /* a new piece: flags after */
                    w->bytes[w->len++] = (char)(upper ? c | 0x20 : c);
                    if (c <= '9') w->has_digit = 1;
                    c = *++p;
                } while (ascii_alnum(c));
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
            if (s->word.len == 0) s->word.capital = utf8proc_tolower(cp) != cp;
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
size_t text_analyse(const char *text, text_term_fn fn, void *ctx) {
    return text_analyse_with(text, NULL, fn, ctx);
}

text_stemmer *text_stemmer_new(void) {
    text_stemmer *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    if (!(st->sb = sb_stemmer_new("english", "UTF_8"))) {
        free(st);
        return NULL;
    }
    return st;
}

void text_stemmer_free(text_stemmer *st) {
    if (!st) return;
    sb_stemmer_delete(st->sb);
    free(st);
}

size_t text_analyse_with(const char *text, text_stemmer *st, text_term_fn fn, void *ctx) {
    scanner s = {.snowball = st, .fn = fn, .ctx = ctx};
    if (text) scan_text(&s, text);
    return s.terms;
}

size_t text_analyse_words(const char *text, text_stemmer *st, text_term_fn fn, void *ctx,
                          text_word_fn word_fn, void *word_ctx) {
    scanner s = {.snowball = st, .fn = fn, .ctx = ctx, .word_fn = word_fn, .ctx2 = word_ctx};
    if (text && fn && word_fn) scan_text(&s, text);
    return s.terms;
}

size_t text_words(const char *text, text_word_fn fn, void *ctx) {
    scanner s = {.word_fn = fn, .ctx = ctx};
    if (text && fn) scan_text(&s, text);
    return s.terms;
}
