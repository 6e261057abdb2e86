/*
 * entities.h: the entities of a text, recognised deterministically and
 * without a model, for recall's entity lane (src/engine/cache_ent.c keeps
 * each namespace's entity index; recall.c asks it).
 *
 * An entity is a word of the analyser (text_words: the same words as the
 * lexical lane's, unstemmed, stopwords dropped) that is written with a
 * capital letter (names, places, months and days, titles: "Caroline",
 * "Sweden", "May") or that holds a digit (years, dates, counts, versions:
 * "2022", "7pm", "v2"); and each run of two or more such capitalised
 * words that follow each other in the text gives one more, the run joined
 * with '_' ("new_york"). Keys are lowercased, so "Paris" and "PARIS" are
 * one entity, and a memory and a query go through the same function, so
 * their keys agree. A capitalised word that starts a sentence counts too:
 * a name often does, and a common word that does ("Yesterday") is common
 * in the namespace, so the BM25 over entities gives it little weight.
 *
 * A text that opens with a capitalised word and a colon ("Caroline: I
 * went ...", a turn of a conversation, a note signed at its head) gives
 * that word twice: the turn is about its speaker as much as about what
 * it names.
 *
 * Pure and thread-safe; allocates nothing.
 */
#ifndef REMEM_TEXT_ENTITIES_H
#define REMEM_TEXT_ENTITIES_H

#include <stddef.h>

/* Called for each entity key in text order (repeats included): key is
 * lowercased UTF-8, len bytes, NUL-terminated, valid during the call. */
typedef void (*text_entity_fn)(const char *key, size_t len, void *ctx);

/* Longest key given (a longer run is cut at a word). */
enum { TEXT_ENTITY_MAX = 127 };

/* The entities of text (NULL: none); returns how many keys were given. */
size_t text_entities(const char *text, text_entity_fn fn, void *ctx);

/* The same fed word by word, for a caller that scans text itself
 * (text_analyse_words): begin, then text_entities_word as the words'
 * text_word_fn (ctx: the scan), then end; the keys are text_entities'. */
typedef struct text_entity_scan {
    const char *text;
    const char *at; /* where the previous word ended in text */
    text_entity_fn fn;
    void *ctx;
    size_t keys;
    char run[TEXT_ENTITY_MAX + 1]; /* the current run of capitalised words */
    size_t run_len, run_words;
} text_entity_scan;
void text_entities_begin(text_entity_scan *s, const char *text, text_entity_fn fn, void *ctx);
void text_entities_word(const char *word, size_t len, unsigned flags, void *scan);
size_t text_entities_end(text_entity_scan *s);

#endif
