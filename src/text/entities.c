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

typedef text_entity_scan ent_scan;

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

void text_entities_word(const char *word, size_t len, unsigned flags, void *ctx) {
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

void text_entities_begin(text_entity_scan *s, const char *text, text_entity_fn fn, void *ctx) {
    memset(s, 0, sizeof *s);
    s->text = s->at = text;
    s->fn = fn;
    s->ctx = ctx;
}

size_t text_entities_end(text_entity_scan *s) {
    end_run(s);
    return s->keys;
}

size_t text_entities(const char *text, text_entity_fn fn, void *ctx) {
    if (!text) return 0;
    ent_scan s;
    text_entities_begin(&s, text, fn, ctx);
    text_words(text, text_entities_word, &s);
    return text_entities_end(&s);
}
