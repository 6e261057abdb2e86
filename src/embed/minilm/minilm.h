/*
 * minilm.h: the model folder of the minilm embedder (internal to remem).
 *
 * A model folder holds model.safetensors, vocab.txt and config.json. It is
 * "verified" when a marker file (.remem-verified) written right after a
 * sha256 check against the official checksums still matches the size and
 * modification time of each file: opening a store then costs three stat()
 * calls, not a 90 MB hash. A folder may instead declare itself a test model
 * with a file remem-model.json ({"unverified": true, ...}); such weights are
 * used only when asked for by name and get a model id carrying a hash of the
 * weights, so they never share a namespace with the real model.
 *
 * The engine's public face for this (remem_model_* in include/remem.h) lives
 * in src/engine/model.c; the download is in src/embed/minilm/model_fetch.c.
 */
#ifndef REMEM_EMBED_MINILM_H
#define REMEM_EMBED_MINILM_H

#include <stddef.h>
#include <stdint.h>

#define MINILM_NAME      "all-MiniLM-L6-v2"
#define MINILM_MODEL_ID  "minilm:all-MiniLM-L6-v2"
#define MINILM_MARKER    ".remem-verified"
#define MINILM_TEST_DECL "remem-model.json"
#define MINILM_DEFAULT_URL \
    "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main"

/* The files of a model folder, with their official sizes and checksums. */
typedef struct minilm_file {
    const char *name;
    int64_t size;
    const char *sha256; /* lowercase hex */
} minilm_file;

#define MINILM_NFILES 3
extern const minilm_file minilm_files[MINILM_NFILES];

/* The folder to use: dir when not NULL/empty, else $REMEM_MODEL_DIR, else
 * $HOME/.cache/remem/models/all-MiniLM-L6-v2. Returns 0 or REMEM_EINVAL when
 * it does not fit or HOME is unset. */
int minilm_resolve_dir(const char *dir, char *out, size_t cap, char *err, size_t errcap);

/* sha256 of a whole file as 64 lowercase hex digits (+ NUL) into hex.
 * *size (may be NULL) receives the byte count. */
int minilm_sha256_file(const char *path, char hex[65], int64_t *size, char *err, size_t errcap);

/* 1 if dir's marker matches its files (size and mtime), 0 with why. */
int minilm_marker_ok(const char *dir, char *why, size_t whycap);
/* The same; shas (may be NULL) receives the sha256 the marker records for
 * each file, in minilm_files order. */
int minilm_marker_shas(const char *dir, char shas[MINILM_NFILES][65], char *why, size_t whycap);
/* Write the marker for the files now in dir (after they were checked);
 * shas: their sha256 in minilm_files order when known, NULL to hash them. */
int minilm_marker_write(const char *dir, const char (*shas)[65], char *err, size_t errcap);
/* Check every file of dir against its expected sha256: expected[i] (in
 * minilm_files order; expected or an entry may be NULL) or the official
 * checksum. On success the marker is written. Returns 0, REMEM_ENOTFOUND (a
 * file is missing) or REMEM_ECORRUPT (a checksum differs; err names the
 * file and both sums). */
int minilm_verify_dir(const char *dir, const char *const *expected, char *err, size_t errcap);
/* 1 if dir declares itself an unverified test model (remem-model.json). */
int minilm_is_test_model(const char *dir);

/* Download the model files from {base_url}/{name} (NULL: MINILM_DEFAULT_URL)
 * into dir (NULL: the default folder), each checked against expected[i]
 * (in minilm_files order; expected or an entry NULL: the official sha256),
 * all or nothing (src/embed/minilm/model_fetch.c). Files already installed and
 * verified with the expected checksum are kept. */
typedef void (*minilm_progress_fn)(void *ctx, const char *file, int64_t done, int64_t total);
int minilm_pull(const char *dir, const char *base_url, const char *const *expected,
                minilm_progress_fn progress, void *ctx, char *err, size_t errcap);

/* What a model folder holds, as a JSON object (see remem_model_info in
 * include/remem.h); verify = 1 re-hashes the files. *out: json_decref.
 * Declared with void so that this header needs no jansson. */
int minilm_info(const char *dir, int verify, void **out, char *err, size_t errcap);
/* {"ids": [...], "tokens": [...]} for text with dir's vocabulary and
 * config, as JSON text (*out: free). */
int minilm_tokenize_json(const char *dir, const char *text, char **out, char *err, size_t errcap);

/* The inside of a minilm embedder, for what needs more than normalised
 * vectors (the real-weight checks compare unnormalised means and hidden
 * states). Valid while the embedder lives. */
struct embedder;
struct wp_vocab;
struct bert_model;
typedef struct minilm_model_view {
    const struct wp_vocab *vocab;
    struct bert_model *bert;
    int max_tokens;
} minilm_model_view;
/* REMEM_EINVAL when e is not a minilm embedder. */
int minilm_view(struct embedder *e, minilm_model_view *out);
/* Tokenize and encode text alone: pooled receives the mean of the last
 * hidden states (not normalised), hidden (may be NULL) every token's. */
int minilm_pooled(const minilm_model_view *v, const char *text, float *pooled, float *hidden,
                  char *err, size_t errcap);

#endif
