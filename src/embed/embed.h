/*
 * embed.h: the embedder interface, one small table of function pointers so
 * that a new embedder is one new file. Embedders turn texts into
 * L2-normalised float vectors of a fixed dimension and name the model that
 * made them (the model id is stored with every vector, so that two models
 * never mix in one namespace).
 *
 * Parts never print: failures return a REMEM_E* status and write the detail
 * into err (errcap bytes, NUL-terminated).
 */
#ifndef REMEM_EMBED_H
#define REMEM_EMBED_H

#include <stddef.h>

typedef struct embedder embedder;
struct embedder {
    const char *name;   /* "hash", "http", "minilm" */
    int dim;            /* length of every vector */
    char model_id[128]; /* e.g. "hash-v1-384", "http:text-embedding-3-small" */
    /* Embed n texts into out (n * dim floats, row-major, each row
     * L2-normalised; an all-zero row for a text with no features).
     * Returns 0 or a REMEM_E* status with err filled; out is then
     * unspecified. */
    int (*embed)(embedder *e, const char *const *texts, size_t n, float *out, char *err,
                 size_t errcap);
    void (*destroy)(embedder *e); /* frees e itself */
    void *state;
};

/* Settings for every embedder; unused fields are ignored. */
typedef struct embed_config {
    int dim;               /* hash: 0 means 384; http: 0 means ask the server */
    const char *url;       /* http: base URL; request goes to {url}/embeddings */
    const char *model;     /* http: model name sent */
    const char *api_key;   /* http: bearer token, or NULL */
    int timeout_ms;        /* http: per request (0: 10000) */
    int retries;           /* http: retries after the first try (0: 3; <0: none) */
    int batch;             /* http: texts per request (0: 64) */
    int retry_backoff_ms;  /* http: wait before the first retry, doubled for
                              each next one up to 5 s (0: 200) */
    const char *model_dir; /* minilm: folder with model.safetensors, vocab.txt, config.json */
    /* http: the owner's bound on each request (net.h's net_cancel; NULL:
     * none); kept, so it must outlive the embedder. A cut request is an
     * embedder failure (REMEM_EEMBED) whose message says so. */
    const struct net_cancel *cancel;
} embed_config;

int embed_hash_create(const embed_config *cfg, embedder **out, char *err, size_t errcap);
/* The http embedder (src/embed/http.c) needs cfg->url and cfg->model. With
 * cfg->dim 0 it learns the dimension by embedding "remem" once, so creation
 * then fails if the server cannot be reached. */
int embed_http_create(const embed_config *cfg, embedder **out, char *err, size_t errcap);

/* The largest dimension the http embedder accepts. */
#define EMBED_HTTP_MAX_DIM (1 << 16)

/* The http embedder's answer parser, pure (no network, no state), so that
 * it can be tested and fuzzed alone (fuzz/fuzz_embed_http.c). body[0..len)
 * is an answer to a request for n texts; source names the server in
 * messages. *dim 0: learn the dimension from the answer (at most
 * EMBED_HTTP_MAX_DIM), else every embedding must have *dim elements. When
 * out is not NULL, the embedding with "index" i (the position when the
 * answer has no "index") is L2-normalised into row rows[i] of out (row i
 * when rows is NULL; *dim floats per row). Nothing is written to out unless
 * the whole answer is good. Returns REMEM_OK, REMEM_EEMBED (malformed JSON,
 * no "data" array, the wrong count, a missing, repeated or out-of-range
 * index, an element that is not a finite number), REMEM_EDIM or
 * REMEM_ENOMEM, with the message in err. */
int embed_http_parse(const char *body, size_t len, const char *source, size_t n, int *dim,
                     float *out, const size_t *rows, char *err, size_t errcap);

/* The hash embedder's word analysis: the terms of src/text/analyse.h
 * (text_analyse) without their flags, for tests and for callers who want
 * the same terms. Calls fn (may be NULL) for each term in order; term is
 * NUL-terminated and valid only during the call. text may be NULL. Returns
 * the number of terms. Pure and thread-safe. */
size_t embed_hash_terms(const char *text, void (*fn)(const char *term, size_t len, void *ctx),
                        void *ctx);

/* Defined by the minilm embedder (src/embed/minilm/minilm.c). */
int embed_minilm_create(const embed_config *cfg, embedder **out, char *err, size_t errcap);
/* 1 when model_dir (NULL: the default folder) holds a verified MiniLM model. */
int embed_minilm_available(const char *model_dir, char *why, size_t whycap);

static inline void embed_destroy(embedder *e) {
    if (e) e->destroy(e);
}

#endif
