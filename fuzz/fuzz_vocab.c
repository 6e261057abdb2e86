/*
 * fuzz_vocab.c: libFuzzer target for the vocabulary loader and the
 * tokenizer (src/embed/minilm/wordpiece.c). Each input is loaded as a vocab.txt;
 * when it loads, its tokens must round-trip through the lookup, and a few
 * fixed texts plus the input itself (as text) are tokenized with it. The
 * input is also tokenized with the real vocabulary of the fixture model
 * when it can be found, so odd UTF-8 meets the full Unicode path. Every
 * result must be framed [CLS] ... [SEP], within the limit, with ids that
 * exist.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embed/minilm/wordpiece.h"
#include "remem.h"

static wp_vocab *real_vocab;
static int real_tried;

static void check(const wp_vocab *v, const char *text, size_t len, int cap) {
    int32_t ids[260];
    int n = wp_tokenize(v, text, len, ids, cap);
    assert(n >= 2 && n <= cap);
    assert(ids[0] == wp_vocab_find(v, "[CLS]", 5));
    assert(ids[n - 1] == wp_vocab_find(v, "[SEP]", 5));
    for (int i = 0; i < n; i++) assert(wp_vocab_token(v, ids[i]) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!real_tried) {
        char err[256];
        real_tried = 1;
        if (wp_vocab_load_file("tests/data/minilm/model/vocab.txt", &real_vocab, err, sizeof err) !=
            0)
            wp_vocab_load_file("../tests/data/minilm/model/vocab.txt", &real_vocab, err,
                               sizeof err);
    }
    const char *text = (const char *)data;
    if (real_vocab) {
        check(real_vocab, text, size, 256);
        check(real_vocab, text, size, 3);
    }
    wp_vocab *v = NULL;
    char err[256];
    err[0] = 0;
    int rc = wp_vocab_load(text, size, &v, err, sizeof err);
    if (rc) {
        assert(v == NULL && (rc == REMEM_ECORRUPT || rc == REMEM_ENOMEM));
        assert(err[0]);
        return 0;
    }
    for (size_t i = 0; i < wp_vocab_size(v); i++) {
        const char *tok = wp_vocab_token(v, (int32_t)i);
        int32_t id = wp_vocab_find(v, tok, strlen(tok));
        assert(id >= 0); /* a repeated token maps to its last line */
        assert(strcmp(wp_vocab_token(v, id), tok) == 0);
    }
    static const char *texts[] = {"", "Hello, World!", "unaffable ##a [SEP]x", "東京 café",
                                  "\xff\xfe\xe2\x82"};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        check(v, texts[i], strlen(texts[i]), 256);
    check(v, text, size, 256);
    check(v, text, size, 2);
    wp_vocab_free(v);
    return 0;
}
