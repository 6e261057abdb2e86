/*
 * bert.h: the BERT encoder of the minilm embedder (internal).
 *
 * A BertModel of any size (the config says which): word + position + token
 * type embeddings and LayerNorm, then layers of multi-head self-attention and
 * a GELU (erf) feed-forward block, each followed by a residual LayerNorm;
 * the output is the mean of the last hidden states over each sequence's
 * tokens. Matrix products go to OpenBLAS (cblas_sgemm).
 */
#ifndef REMEM_EMBED_BERT_H
#define REMEM_EMBED_BERT_H

#include <stddef.h>
#include <stdint.h>

#include "embed/minilm/safetensors.h"

typedef struct bert_config {
    int vocab_size, hidden, layers, heads, intermediate, max_positions, type_vocab;
    float ln_eps;
} bert_config;

/* Read config.json (a Hugging Face BertModel config). Checks the sizes and
 * that the model is one this encoder computes (gelu, absolute positions). */
int bert_config_load(const char *path, bert_config *c, char *err, size_t errcap);
int bert_config_parse(const char *json, size_t len, bert_config *c, char *err, size_t errcap);

typedef struct bert_model bert_model;

/* Copy the weights out of st (converted to float32; st may be closed after).
 * Every tensor must be present with the shape the config implies; names may
 * carry a "bert." prefix. */
int bert_load(const bert_config *c, const st_file *st, bert_model **out, char *err, size_t errcap);
void bert_free(bert_model *m);
const bert_config *bert_model_config(const bert_model *m);

/* Worker threads for bert_encode (1 = the caller only). Default: 1. A
 * batch is cut into pieces of about 256 tokens that the threads take in
 * turn, each with single-threaded BLAS; a batch that makes one piece uses
 * OpenBLAS's threads instead (as many as bert_set_blas_threads says;
 * bert_set_threads sets both). One model may serve several callers at
 * once. */
void bert_set_threads(bert_model *m, int threads);
void bert_set_blas_threads(bert_model *m, int threads);

/* One tokenized sequence ([CLS] ... [SEP]). */
typedef struct bert_seq {
    const int32_t *ids;
    int len; /* 1 ..= max_positions */
} bert_seq;

/* Encode n sequences. pooled (n * hidden floats) receives each sequence's
 * mean last hidden state (not normalised). hidden (may be NULL) receives
 * every token's last hidden state, sequences one after another
 * (sum of lens * hidden floats). Ids must be < vocab_size. */
int bert_encode(bert_model *m, const bert_seq *seqs, size_t n, float *pooled, float *hidden,
                char *err, size_t errcap);

/* The number of floating-point operations bert_encode does for sequences of
 * these lengths (the matrix products; for GFLOP/s figures). */
double bert_flops(const bert_config *c, const int *lens, size_t n);

/* Make OpenBLAS use kernels that suit this CPU. OpenBLAS 0.3.21 does not
 * know recent Xeons and falls back to its SSE3 kernels (4-5x slower); when
 * OPENBLAS_CORETYPE is unset and the CPU has AVX-512 (or AVX2), select the
 * matching kernels once. Returns the OpenBLAS core name in use. */
const char *bert_blas_setup(void);

#endif
