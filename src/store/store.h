/*
 * store.h: the storage part. The engine keeps no durable state of its own:
 * every memory, its vector, its namespace's model lock and its history live
 * here, and every write the engine makes goes through these calls inside
 * one store_begin/store_commit transaction.
 *
 * The embedded store is SQLite (src/store/sqlite.c): one file, WAL, FTS5
 * over the text kept in step by triggers in the same transaction, a
 * namespaces table whose per-namespace version is bumped by triggers on
 * every content change (so the engine's in-memory caches know when another
 * process changed a namespace). A PostgreSQL store would implement the same
 * calls.
 *
 * Strings in a store_row are owned by the row (store_row_clear frees them).
 * Calls return REMEM_OK or a REMEM_E* status with the detail in
 * store_errmsg().
 */
#ifndef REMEM_STORE_H
#define REMEM_STORE_H

#include <stddef.h>
#include <stdint.h>
#include "remem.h"

typedef struct store store;

/* A stored memory. m's strings point into allocations the row owns; vec is
 * set only by calls that say so. */
typedef struct store_row {
    int64_t rowid;
    remem_memory m;
    float *vec; /* owned; NULL unless loaded */
} store_row;
void store_row_clear(store_row *r);

int store_open(const char *path, int durability, int busy_timeout_ms, int read_only, store **out);
void store_close(store *s);
const char *store_errmsg(const store *s);
/* Path of the file, or ":memory:". */
const char *store_path(const store *s);

/* One write transaction (BEGIN IMMEDIATE: the write lock is taken at once,
 * waiting up to the busy timeout). */
int store_begin(store *s);
int store_commit(store *s);
void store_rollback(store *s);

/* 1 if another connection committed since the previous call, else 0. */
int store_changed(store *s);

/* Namespace information. ENOTFOUND when the namespace has never been
 * written. model may be NULL; it receives "" when no vector is stored. */
int store_ns_info(store *s, const char *ns, char *model, size_t model_cap, int *dim,
                  int64_t *version, int64_t *rows);
/* Record the model of the namespace's vectors (creating the namespace). */
int store_ns_set_model(store *s, const char *ns, const char *model, int dim);

/* Look up by key. ns NULL: any namespace (REMEM_EAMBIGUOUS if several).
 * with_vec loads the vector. */
int store_find(store *s, const char *ns, const char *id, int with_vec, store_row *out);
int store_get_rowid(store *s, int64_t rowid, int with_vec, store_row *out);
/* The row of ns whose normalised text is norm (hash h), or 0 in *rowid. */
int store_find_dup(store *s, const char *ns, uint64_t h, const char *norm, int64_t *rowid);

/* Insert a new row (all fields of m must be final; vector may be NULL).
 * norm/h: the normalised text and its hash. */
int store_insert(store *s, const remem_memory *m, const char *norm, uint64_t h, int64_t *rowid);
/* Replace every field of an existing row (the key stays). */
int store_replace(store *s, int64_t rowid, const remem_memory *m, const char *norm, uint64_t h);
int store_bump_duplicate(store *s, int64_t rowid, int64_t now);
int store_delete(store *s, int64_t rowid);
/* accessed_at = now, access_count += 1 for each rowid (no version bump:
 * reading is not a change). */
int store_touch(store *s, const int64_t *rowids, size_t n, int64_t now);
/* Set the vector and model of a row (reindex). */
int store_set_vector(store *s, int64_t rowid, const char *model, const float *vec, int dim);

/* History. before/after are JSON texts or NULL. */
int store_history_add(store *s, const char *ns, const char *id, int64_t at, const char *op,
                      const char *actor, const char *before, const char *after);
/* After a purge has committed: rewrite the full-text index so no segment
 * still holds the deleted words, and checkpoint the WAL so no old page
 * image holds them either (pages freed by deletes are zeroed: the store
 * runs with secure_delete on). Takes the write lock. */
int store_scrub_deleted(store *s);
/* The newest history seq of ns (0 if none). */
int store_history_max(store *s, const char *ns, int64_t *seq);
/* Call fn(ctx, id, op) for each history row of ns with seq > after, oldest
 * first; *max_seq gets the newest seq seen (after if none). fn returns
 * non-zero to stop (that value is returned). */
typedef int (*store_hist_fn)(void *ctx, const char *id, const char *op);
int store_history_since(store *s, const char *ns, int64_t after, store_hist_fn fn, void *ctx,
                        int64_t *max_seq);
/* Remove the text from every history row of (ns, id) (a purge). */
int store_history_scrub(store *s, const char *ns, const char *id);
/* The history of (ns, id) as a JSON array text (malloc'd). ns NULL: the
 * id's namespace if unique. ENOTFOUND if there is none. */
int store_history_json(store *s, const char *ns, const char *id, char **json);

/* Call fn for every row of ns (NULL: all namespaces), in rowid order,
 * with the vector when with_vec. The row, its strings and its vector are
 * the store's and valid during the call only (copy what you keep; the
 * vector may not be aligned for float: memcpy it). fn returns non-zero to
 * stop; that value is returned. */
typedef int (*store_row_fn)(void *ctx, const store_row *r);
int store_scan(store *s, const char *ns, int with_vec, store_row_fn fn, void *ctx);

/* Full-text candidates matching the FTS5 query text, best BM25 first
 * (score > 0, higher is better). The store may return rows of other
 * namespaces than ns too (the SQLite store does: the caller filters); fn
 * returns non-zero to stop early. */
typedef int (*store_fts_fn)(void *ctx, int64_t rowid, double score);
int store_fts(store *s, const char *const *ns, size_t n_ns, const char *match, store_fts_fn fn,
              void *ctx);

/* Namespaces as a JSON array [{"ns","count","model","dim"}] (malloc'd). */
int store_namespaces_json(store *s, char **json);
/* Statistics as a JSON object (malloc'd); ns NULL for all. */
int store_stats_json(store *s, const char *ns, int64_t now, char **json);
/* Delete every row of ns; *deleted gets the count. */
int store_clear(store *s, const char *ns, int64_t *deleted);

#endif
