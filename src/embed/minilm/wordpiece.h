/*
 * wordpiece.h: the BERT uncased tokenizer of the minilm embedder (internal).
 *
 * Text goes through the steps of BERT's uncased tokenizer, in the order the
 * reference tokenizer (Hugging Face's, which sentence-transformers runs)
 * applies them: special tokens written in the text ("[SEP]", "[MASK]", ...)
 * are taken verbatim; in the rest, drop control characters and map every
 * kind of white space to a space; set each CJK ideograph apart; decompose
 * (NFD), drop non-spacing marks (accents) and lowercase; split on white space
 * and on every punctuation character; then WordPiece each word (greedy
 * longest match from the left, "##" on continuations, "[UNK]" for a word of
 * more than 100 characters or one that cannot be covered). The result is
 * framed as [CLS] ... [SEP] and cut to a maximum length. Invalid UTF-8 bytes
 * are dropped, as the reference drops U+FFFD.
 */
#ifndef REMEM_EMBED_WORDPIECE_H
#define REMEM_EMBED_WORDPIECE_H

#include <stddef.h>
#include <stdint.h>

typedef struct wp_vocab wp_vocab;

/* Words longer than this many characters become one [UNK]. */
#define WP_MAX_WORD_CHARS 100

/* Load a vocabulary: one token per line, the id is the line number (from 0).
 * It must hold [PAD], [UNK], [CLS] and [SEP]. Returns 0, REMEM_ENOTFOUND /
 * REMEM_EIO (file), REMEM_ECORRUPT (content) or REMEM_ENOMEM, with err set. */
int wp_vocab_load_file(const char *path, wp_vocab **out, char *err, size_t errcap);
int wp_vocab_load(const char *data, size_t len, wp_vocab **out, char *err, size_t errcap);
void wp_vocab_free(wp_vocab *v);

/* Number of ids (lines). */
size_t wp_vocab_size(const wp_vocab *v);
/* The token of an id (valid until wp_vocab_free), or NULL when out of range. */
const char *wp_vocab_token(const wp_vocab *v, int32_t id);
/* The id of a token (len bytes), or -1. */
int32_t wp_vocab_find(const wp_vocab *v, const char *tok, size_t len);
/* The largest id used by [PAD] [UNK] [CLS] [SEP] and every token. */
int32_t wp_vocab_max_id(const wp_vocab *v);
int32_t wp_vocab_pad_id(const wp_vocab *v);

/* Tokenize len bytes of text into ids: [CLS] pieces [SEP], at most
 * max_tokens ids (max_tokens >= 2; longer texts are cut, keeping [SEP]).
 * Returns the number of ids (>= 2) or REMEM_ENOMEM / REMEM_EINVAL. */
int wp_tokenize(const wp_vocab *v, const char *text, size_t len, int32_t *ids, int max_tokens);

#endif
