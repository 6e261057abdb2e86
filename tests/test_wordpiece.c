/*
 * test_wordpiece.c: the BERT uncased tokenizer on a small hand-made
 * vocabulary, one rule at a time (the PyTorch fixture in test_minilm checks
 * the whole thing against the real vocabulary): greedy longest match and
 * "##", [UNK] for uncoverable and over-long words, normalisation (accents,
 * case, CJK, punctuation, controls, white space), verbatim special tokens,
 * truncation, invalid UTF-8, and the vocabulary loader's errors.
 */
#include <stdint.h>
#include <time.h>

#include "embed/minilm/wordpiece.h"
#include "remem.h"
#include "test.h"

static const char VOCAB[] = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n" /* 0-4 */
                            "un\n##aff\n##able\n##a\n##b\n"        /* 5-9 */
                            "a\nb\ncafe\n!\n,\n"                   /* 10-14 */
                            "hello\n##llo\nhe\n東\n京\n"           /* 15-19 */
                            "$\n.\n##s\nab\nœ\n";                  /* 20-24 */

static wp_vocab *vocab(void) {
    wp_vocab *v = NULL;
    char err[256];
    CHECK_INT(wp_vocab_load(VOCAB, sizeof VOCAB - 1, &v, err, sizeof err), 0);
    return v;
}

/* Tokenize and compare with the expected ids (without [CLS]/[SEP]). */
static int same(wp_vocab *v, const char *text, size_t len, const int32_t *want, int nwant) {
    int32_t ids[300];
    int n = wp_tokenize(v, text, len, ids, 300);
    int ok = n == nwant + 2 && ids[0] == 2 && ids[n - 1] == 3;
    for (int i = 0; ok && i < nwant; i++) ok = ids[i + 1] == want[i];
    if (!ok) {
        fprintf(stderr, "  \"%.*s\" ->", (int)len, text);
        for (int i = 0; i < n; i++) fprintf(stderr, " %d", ids[i]);
        fprintf(stderr, "\n");
    }
    return ok;
}
#define SAME(v, text, ...)                                                       \
    do {                                                                         \
        const int32_t want_[] = {__VA_ARGS__};                                   \
        CHECK(same(v, text, strlen(text), want_, sizeof want_ / sizeof *want_)); \
    } while (0)
#define SAME_NONE(v, text) CHECK(same(v, text, strlen(text), NULL, 0))

static void test_vocab_lookup(void) {
    wp_vocab *v = vocab();
    if (!v) return;
    CHECK_INT(wp_vocab_size(v), 25);
    CHECK_INT(wp_vocab_find(v, "##able", 6), 7);
    CHECK_INT(wp_vocab_find(v, "##abl", 5), -1);
    CHECK_STR(wp_vocab_token(v, 12), "cafe");
    CHECK(wp_vocab_token(v, 25) == NULL);
    CHECK(wp_vocab_token(v, -1) == NULL);
    CHECK_INT(wp_vocab_pad_id(v), 0);
    wp_vocab_free(v);
}

static void test_greedy_longest_match(void) {
    wp_vocab *v = vocab();
    if (!v) return;
    SAME(v, "unaffable", 5, 6, 7);
    SAME(v, "ab", 23);     /* the whole word wins over a + ##b */
    SAME(v, "aba", 23, 8); /* longest first piece, then ##a */
    SAME(v, "hello", 15);
    SAME(v, "hellos", 15, 22);
    SAME(v, "unx", 1); /* "un" then nothing for "x": the whole word is [UNK] */
    SAME(v, "a unx b", 10, 1, 11);
    wp_vocab_free(v);
}

static void test_normalisation(void) {
    wp_vocab *v = vocab();
    if (!v) return;
    SAME(v, "CAFÉ", 12);                  /* lowercase, accent stripped */
    SAME(v, "Cafe\xcc\x81", 12);          /* decomposed accent too */
    SAME(v, "HeLLo, a!", 15, 14, 10, 13); /* punctuation splits */
    SAME(v, "東京", 18, 19);              /* each ideograph is a word */
    SAME(v, "a東b", 10, 18, 11);
    SAME(v, "$a.", 20, 10, 21); /* $ counts as punctuation */
    SAME(v,
         "a\tb\nab\r\xe3\x80\x80"
         "a",
         10, 11, 23, 10); /* ideographic space */
    SAME(v,
         "a\xc2\xa0"
         "b",
         10, 11); /* no-break space separates */
    SAME(v,
         "a\xe2\x80\xa8"
         "b",
         10, 11); /* line separator too */
    SAME(v,
         "c\x07"
         "afe",
         12); /* a control character vanishes */
    SAME(v,
         "ca\xe2\x80\x8b"
         "fe",
         12);                /* so does a zero-width space (Cf) */
    SAME(v, "\xc5\x92", 24); /* Œ lowercases to œ, no decomposition */
    /* Texts that normalise to nothing: "" once made the tokenizer add 0 to
     * a NULL pointer (undefined; clang's UBSan in the fuzz build stops on
     * it, gcc's does not see it); accents alone are dropped whole. */
    SAME_NONE(v, "");
    SAME_NONE(v, "\xcc\x81\xcc\x88");
    SAME_NONE(v, " \t\n ");
    SAME_NONE(v, "\x01\x02");
    wp_vocab_free(v);
}

static void test_special_tokens_verbatim(void) {
    wp_vocab *v = vocab();
    if (!v) return;
    SAME(v, "a[SEP]b", 10, 3, 11);
    SAME(v, "[MASK] [PAD]", 4, 0);
    SAME(v, "[sep]", 1, 1, 1); /* lowercase is not special: [ sep ] -> three [UNK] */
    wp_vocab_free(v);
}

static void test_long_words(void) {
    wp_vocab *v = vocab();
    if (!v) return;
    char w[300];
    /* "a" + 99 "##a"... the vocabulary covers any run of a's. */
    memset(w, 'a', 100);
    w[100] = 0;
    int32_t ids[300];
    CHECK_INT(wp_tokenize(v, w, 100, ids, 300), 102);
    memset(w, 'a', 101);
    w[101] = 0;
    SAME(v, w, 1); /* over 100 characters: one [UNK] */
    /* 100 characters of which some are two bytes: counted in characters. */
    for (int i = 0; i < 100; i++) memcpy(w + 2 * i, "\xc3\xa1", 2); /* á -> a */
    w[200] = 0;
    CHECK_INT(wp_tokenize(v, w, 200, ids, 300), 102);
    wp_vocab_free(v);
}

static void test_truncation(void) {
    wp_vocab *v = vocab();
    if (!v) return;
    char text[2000];
    size_t n = 0;
    for (int i = 0; i < 500; i++) n += (size_t)snprintf(text + n, sizeof text - n, "a ");
    int32_t ids[256];
    CHECK_INT(wp_tokenize(v, text, n, ids, 256), 256);
    CHECK_INT(ids[0], 2);
    CHECK_INT(ids[254], 10);
    CHECK_INT(ids[255], 3);
    CHECK_INT(wp_tokenize(v, text, n, ids, 2), 2); /* room for [CLS] [SEP] only */
    CHECK_INT(ids[1], 3);
    CHECK_INT(wp_tokenize(v, text, n, ids, 3), 3);
    CHECK_INT(ids[1], 10);
    /* The cut may fall inside a word: its first pieces are kept. */
    CHECK_INT(wp_tokenize(v, "unaffable", 9, ids, 4), 4);
    CHECK_INT(ids[1], 5);
    CHECK_INT(ids[2], 6);
    CHECK_INT(ids[3], 3);
    CHECK_INT(wp_tokenize(v, "x", 1, ids, 1), REMEM_EINVAL);
    wp_vocab_free(v);
}

static void test_invalid_utf8(void) {
    wp_vocab *v = vocab();
    if (!v) return;
    const char bad[] = "a\xff"
                       "b \xe2\x82 ab \xed\xa0\x80 \xc0\x80"
                       "a \xf4\x90\x80\x80";
    const int32_t want[] = {23, 23, 10};
    CHECK(same(v, bad, sizeof bad - 1, want, 3)); /* invalid bytes dropped */
    /* A NUL inside the buffer is a control character: dropped, not an end. */
    const int32_t want2[] = {23};
    CHECK(same(v, "a\0b", 3, want2, 1));
    wp_vocab_free(v);
}

static void test_big_text_stops_early(void) {
    wp_vocab *v = vocab();
    if (!v) return;
    size_t n = 4u << 20;
    char *text = malloc(n);
    for (size_t i = 0; i < n; i++) text[i] = i % 3 == 2 ? ' ' : 'a';
    int32_t ids[256];
    clock_t t0 = clock();
    CHECK_INT(wp_tokenize(v, text, n, ids, 256), 256);
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    CHECK(secs < 0.1);
    /* One 4 MB word: a single [UNK], found without quadratic work. */
    memset(text, 'a', n);
    t0 = clock();
    CHECK_INT(wp_tokenize(v, text, n, ids, 256), 3);
    CHECK_INT(ids[1], 1);
    secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    CHECK(secs < 2);
    free(text);
    wp_vocab_free(v);
}

static void test_vocab_errors(void) {
    wp_vocab *v = NULL;
    char err[256];
    CHECK_INT(wp_vocab_load("", 0, &v, err, sizeof err), REMEM_ECORRUPT);
    CHECK_HAS(err, "empty");
    CHECK_INT(wp_vocab_load("[PAD]\n[CLS]\n[SEP]\n", 18, &v, err, sizeof err), REMEM_ECORRUPT);
    CHECK_HAS(err, "[UNK]");
    CHECK(v == NULL);
    /* CRLF line ends and a missing final newline are fine; a repeated token
     * keeps its last id. */
    const char crlf[] = "[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\nx\r\nx";
    CHECK_INT(wp_vocab_load(crlf, sizeof crlf - 1, &v, err, sizeof err), 0);
    if (v) {
        CHECK_INT(wp_vocab_size(v), 6);
        CHECK_INT(wp_vocab_find(v, "x", 1), 5);
        CHECK_STR(wp_vocab_token(v, 1), "[UNK]");
        wp_vocab_free(v);
    }
    const char nul[] = "[PAD]\n[UNK]\n[CLS]\n[SEP]\na\0b\n";
    CHECK_INT(wp_vocab_load(nul, sizeof nul - 1, &v, err, sizeof err), REMEM_ECORRUPT);
    CHECK_HAS(err, "NUL byte on line 5");
    CHECK_INT(wp_vocab_load_file("/nonexistent/vocab.txt", &v, err, sizeof err), REMEM_ENOTFOUND);
    CHECK_HAS(err, "/nonexistent/vocab.txt");
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_vocab_lookup);
    RUN(test_greedy_longest_match);
    RUN(test_normalisation);
    RUN(test_special_tokens_verbatim);
    RUN(test_long_words);
    RUN(test_truncation);
    RUN(test_invalid_utf8);
    RUN(test_big_text_stops_early);
    RUN(test_vocab_errors);
    return TEST_EXIT();
}
