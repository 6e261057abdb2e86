/*
 * analyse.h: remem's word analyser, one function that turns a text into
 * search terms. The hash embedder (src/embed/hash.c) builds its features
 * from these terms and the lexical lane of recall (src/engine/recall.c)
 * searches with them, so a memory's text and a query go through the same
 * analysis wherever words are compared.
 *
 * The rules: words are runs of Unicode letters, marks and digits (utf8proc
 * decides; bytes of invalid UTF-8 count as letters, so nothing is lost or
 * crashes), lowercased; an apostrophe inside a word drops an English
 * clitic ("Caroline's", "I'm", "we'll" -> "caroline", "i", "we") or joins
 * ("don't" -> "dont"); English function words are dropped; a light
 * suffix-stripping stemmer makes "painting", "painted", "paints" and
 * "paint" one stem (words with digits are not stemmed, so 2022 and 2023
 * stay apart). A run of letters longer than TEXT_TERM_MAX bytes is cut
 * into pieces. It is deliberately crude: both sides of a comparison go
 * through it, so consistency matters more than linguistics.
 *
 * Any change to the terms changes the hash embedder's vectors: its model
 * id ("hash-v1-...") must then be bumped (src/embed/hash.c).
 *
 * Pure and thread-safe: no global mutable state, no allocation.
 */
#ifndef REMEM_TEXT_ANALYSE_H
#define REMEM_TEXT_ANALYSE_H

#include <stddef.h>

/* The longest term, in bytes (without its NUL). */
enum { TEXT_TERM_MAX = 96 };

/* Called for each term in text order. term is lowercased UTF-8, len bytes,
 * NUL-terminated, valid only during the call. has_digit: the word holds a
 * digit (so it was not stemmed). sentence_start: the term is the first of
 * the text or follows a sentence end (. ! ? ; or a newline). */
typedef void (*text_term_fn)(const char *term, size_t len, int has_digit, int sentence_start,
                             void *ctx);

/* Analyse text (NULL: no terms), calling fn (may be NULL) for each term.
 * Returns the number of terms. */
size_t text_analyse(const char *text, text_term_fn fn, void *ctx);

#endif
