/*
 * analyse.h: remem's word analyser, one function that turns a text into
 * search terms. The hash embedder (src/embed/hash.c) builds its features
 * from these terms (text_analyse, the light stemmer); the lexical index of
 * recall (src/engine/cache.c, recall.c) takes the same words stemmed by
 * Snowball's English stemmer instead (text_analyse_with), for memories and
 * queries alike, so a memory's text and a query go through the same
 * analysis wherever words are compared. Snowball measured better on
 * LoCoMo for the lexical lane (docs/retrieval.md); the hash embedder's
 * terms were left as they were, so its vectors (and model id) stay.
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
 * text_analyse is pure and thread-safe: no allocation, and no global state
 * but the stopword table, built once (pthread_once) and only read. text_analyse_with uses its stemmer's state (one thread at a
 * time per stemmer).
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

/* The same analysis with Snowball's English stemmer (libstemmer) in place
 * of the light one: what the lexical index and its queries use. A
 * stemmer holds state between calls, so it serves one thread at a time
 * (the engine keeps one per handle). NULL when out of memory. */
typedef struct text_stemmer text_stemmer;
text_stemmer *text_stemmer_new(void);
void text_stemmer_free(text_stemmer *st);
/* text_analyse, stemming with st (NULL: the light stemmer, i.e.
 * text_analyse itself). */
size_t text_analyse_with(const char *text, text_stemmer *st, text_term_fn fn, void *ctx);

/* The same analysis without stemming, for what needs a text's words as
 * written (the WordNet expansion of a query, the entities of a text):
 * the same words, lowercased, the same stopwords dropped, in the same
 * order as the terms of text_analyse, each with its flags. A word cut
 * into pieces (longer than TEXT_TERM_MAX) gives its pieces. */
enum {
    TEXT_WORD_DIGIT = 1,          /* the word holds a digit */
    TEXT_WORD_SENTENCE_START = 2, /* first word of the text or of a sentence */
    TEXT_WORD_CAPITAL = 4         /* its first letter was upper case */
};
typedef void (*text_word_fn)(const char *word, size_t len, unsigned flags, void *ctx);
/* Returns the number of words (0 when fn is NULL). Pure, thread-safe. */
size_t text_words(const char *text, text_word_fn fn, void *ctx);

/* Both at once, in one scan: each word goes to word_fn as text_words
 * gives it, then its stem to fn as text_analyse_with gives it (a
 * namespace's load reads its terms and its entities from one pass). */
size_t text_analyse_words(const char *text, text_stemmer *st, text_term_fn fn, void *ctx,
                          text_word_fn word_fn, void *word_ctx);

#endif
