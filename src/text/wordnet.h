/*
 * wordnet.h: related words from WordNet 3.0 (Princeton; Debian's
 * `wordnet-base`), read in its own file format, for the expansion of a
 * query's words in the lexical lane (src/engine/recall.c).
 *
 * For a word as written (lowercased, unstemmed: text_words), wn_related
 * gives the words WordNet relates to its most frequent senses: the
 * synonyms of each sense (the other words of its synset), the words of
 * its direct hypernyms ("tea" -> "beverage") and of its first hyponyms
 * ("beverage" -> "coffee", "tea"), each marked with its relation. The
 * word is first brought to its base form as WordNet's morphy does (the
 * exception lists, then the detachment rules: "ran" -> "run",
 * "beverages" -> "beverage"). Only one-word lemmas are given.
 *
 * The files are not loaded: they are mapped read-only once per process
 * (the first call; about 28 MB of page cache, no heap) and searched in
 * place, since each index and exception file is sorted: a lookup is a
 * few binary searches and a few data lines read at their byte offsets.
 * So the call is thread-safe, costs microseconds, and holds no memory
 * that grows. The folder is $REMEM_WORDNET_DIR, else /usr/share/wordnet;
 * when its files are missing wn_available() is 0 and wn_related gives
 * nothing.
 *
 * Deterministic: the same word gives the same words in the same order
 * (parts of speech noun, verb, adjective, adverb; senses in WordNet's
 * frequency order; within a sense synonyms, then hypernyms, then
 * hyponyms), without repeats and never the word itself.
 */
#ifndef REMEM_TEXT_WORDNET_H
#define REMEM_TEXT_WORDNET_H

#include <stddef.h>

enum wn_relation { WN_SYNONYM = 0, WN_HYPERNYM = 1, WN_HYPONYM = 2 };

/* The longest related word given, in bytes (longer ones are skipped). */
enum { WN_WORD_MAX = 47 };

typedef struct wn_word {
    char word[WN_WORD_MAX + 1]; /* lowercase, NUL-terminated */
    int relation;               /* enum wn_relation */
} wn_word;

/* 1 when the WordNet files could be mapped (maps them on first call). */
int wn_available(void);
/* The folder the files are read from (for messages). */
const char *wn_dir(void);

/* Up to max words related to word (len bytes), into out; returns how
 * many. At most senses senses per part of speech are followed (1 or 2
 * is what the lexical lane uses) and at most hyponyms hyponym synsets
 * per sense. */
size_t wn_related(const char *word, size_t len, int senses, int hyponyms, wn_word *out,
                  size_t max);

#endif
