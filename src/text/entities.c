/*
 * entities.c: entity keys of entities.h, over the analyser's words
 * (text_words). A run of capitalised words is joined only when the words
 * were next to each other in the text: text_words drops stopwords, so
 * the scan keeps the byte position where each word was expected to start
 * (the end of the previous word plus one separator) by finding the word
 * in the text after the previous one.
 */
#include "text/entities.h"

#include <string.h>
#include <strings.h>

#include "text/analyse.h"

enum { ADJ_WINDOW = 256 };

typedef struct ent_scan {
    const char *text;
    const char *at; /* where the previous word ended in text */
    text_entity_fn fn;
    void *ctx;
    size_t keys;
    char run[TEXT_ENTITY_MAX + 1]; /* the current run of capitalised words */
    size_t run_len, run_words;
} ent_scan;

static void emit(ent_scan *s, const char *key, size_t len) {
    s->keys++;
    if (s->fn) s->fn(key, len, s->ctx);
}

static void end_run(ent_scan *s) {
    if (s->run_words >= 2) emit(s, s->run, s->run_len);
    s->run_len = s->run_words = 0;
}

/* Whether the word starts right after the previous one (one separator:
 * a space or a hyphen between them), found case-insensitively; moves
 * s->at past it when found. */
static int adjacent(ent_scan *s, const char *word, size_t len) {
    const char *p = s->at;
    /* word is folded to lower case: an ASCII first letter rules out most
     * places before the comparison is called. */
    unsigned char first = (unsigned char)word[0];
    /* Only stopwords and separators lie between two words: a word not
     * found within a short window (its case folded otherwise than ASCII's)
     * is taken as not adjacent, and the scan moves on by its length, so a
     * text costs its length, never its length times its words. */
    for (size_t gap = 0; *p && gap < ADJ_WINDOW; p++, gap++) {
        unsigned char c = (unsigned char)*p;
        if (first < 0x80 && c != first && (c | 0x20) != first) continue;
        if (strncasecmp(p, word, len) == 0) {
            s->at = p + len;
            return gap <= 1;
        }
    }
    s->at += strnlen(s->at, len);
    return 0;
}

static void on_word(const char *word, size_t len, unsigned flags, void *ctx) {
    ent_scan *s = ctx;
    int next_to = adjacent(s, word, len);
    int capital = (flags & TEXT_WORD_CAPITAL) != 0;
    if (!capital || !next_to || s->run_len + 1 + len > TEXT_ENTITY_MAX) end_run(s);
    if (capital || (flags & TEXT_WORD_DIGIT)) emit(s, word, len);
    /* "Name: text", a speaker's or author's turn: the text is about its
     * speaker too, who counts twice. */
    if (capital && s->keys == 1 && *s->at == ':') emit(s, word, len);
    if (!capital) return;
    if (s->run_len) s->run[s->run_len++] = '_';
    memcpy(s->run + s->run_len, word, len);
    s->run_len += len;
    s->run[s->run_len] = '\0';
    s->run_words++;
}

size_t text_entities(const char *text, text_entity_fn fn, void *ctx) {
    if (!text) return 0;
    ent_scan s = {.text = text, .at = text, .fn = fn, .ctx = ctx};
    text_words(text, on_word, &s);
    end_run(&s);
    return s.keys;
}
