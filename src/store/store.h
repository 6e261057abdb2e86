/*
 * store.h: the storage part. The engine keeps no durable state of its own:
 * every memory, its vector, its namespace's model lock and its history live
 * in a store, and every write the engine makes goes through it inside one
 * begin/commit transaction.
 *
 * A store is a table of operations (store_ops) behind a handle that carries
 * it, as sqlite3_vfs and remem's own embedder (embed/embed.h) are: two
 * backends can live in one binary, and the engine never knows which one it
 * talks to. store_open picks the backend by the URI's scheme from the list
 * in store.c; a new backend is one new file plus one line in that list.
 *
 * What crosses this interface is plain data: memories as store_row, never
 * SQL or a search syntax, and namespaces, statistics and history as structs handed to a callback;
 * the engine renders them as JSON. A store does no ranking: the lexical
 * lane's BM25 is the engine's own (src/lexical over the cached rows), so
 * a backend needs no full-text index. tests/test_store.c checks every
 * operation against every backend with the same code.
 *
 * Ownership: strings in a store_row returned by find/get are owned by the
 * row (store_row_clear frees them); rows and structs handed to a callback
 * are the store's and valid during the call only. Calls return REMEM_OK or
 * a REMEM_E* status with the detail in store_errmsg(). Not thread-safe: one
 * handle per thread.
 */
#ifndef REMEM_STORE_H
#define REMEM_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "remem.h"

typedef struct store store;
typedef struct store_ops store_ops;

/* A stored memory. m's strings point into allocations the row owns (or,
 * in a callback, the store's); vec is set only by calls that say so. */
typedef struct store_row {
    int64_t rowid; /* > 0, unique in the store, stable for the row's life */
    remem_memory m;
    float *vec; /* owned; NULL unless loaded */
} store_row;
/* Free the strings and vector a find/get row owns; r is zeroed. NULL ok. */
void store_row_clear(store_row *r);
/* dst = a copy of src that owns its strings (and its vector when src has
 * one: src->m.vector with src->m.dim floats). 0, or -1 out of memory (dst
 * is then cleared). */
int store_row_copy(store_row *dst, const store_row *src);

/* A namespace as the store knows it. */
typedef struct store_ns {
    const char *ns;
    const char *model; /* "" when no vector is stored */
    int dim;
    int64_t version; /* bumped by every change of its content */
    int64_t rows;
} store_ns;

/* Statistics of one namespace (or all). oldest/newest only when memories
 * > 0; file_bytes is the size of the store for ns NULL, -1 when it cannot
 * tell. */
typedef struct store_summary {
    int64_t memories, invalidated, expired, duplicates_folded;
    double mean_importance;
    int64_t oldest, newest; /* created_at, ms */
    int64_t file_bytes;
} store_summary;

/* What the stats operation counts rows by (the callback's group). */
enum store_group { STORE_BY_KIND, STORE_BY_TIER, STORE_BY_MODEL };

/* One history row. before/after are JSON texts or NULL; actor may be NULL. */
typedef struct store_history_row {
    int64_t seq; /* increasing in commit order */
    const char *ns, *id, *op, *actor, *before, *after;
    int64_t at; /* ms */
} store_history_row;

/* What a batch of adds is about to write (the batch call): enough for a
 * database server to do in one round trip what would otherwise cost one
 * per memory. */
typedef struct store_batch {
    const char *const *ns; /* the namespaces it writes, each once */
    size_t n_ns;
    /* Duplicate lookups, as find_dup, for each k < n_keys whose norm[k]
     * is not NULL: dup[k] gets the lowest rowid of key_ns[k] whose
     * normalised text is norm[k] (hash[k]), or 0. */
    size_t n_keys;
    const char *const *key_ns;
    const char *const *norm;
    const uint64_t *hash;
    int64_t *dup; /* OUT, n_keys long */
    size_t n_new; /* at most this many inserts follow */
} store_batch;

/* Callbacks return non-zero to stop; the store then returns that value. */
typedef int (*store_row_fn)(void *ctx, const store_row *r);
typedef int (*store_ns_fn)(void *ctx, const store_ns *n);
typedef int (*store_count_fn)(void *ctx, enum store_group g, const char *key, int64_t n);
typedef int (*store_history_fn)(void *ctx, const store_history_row *h);
typedef int (*store_hist_fn)(void *ctx, const char *id, const char *op);
typedef int (*store_problem_fn)(void *ctx, const char *problem);
typedef int (*store_touch_fn)(void *ctx, int64_t rowid, int64_t accessed_at, int64_t access_count);
/* The start of a load (the load call): ns's row and its newest history seq. */
typedef int (*store_load_fn)(void *ctx, const store_ns *n, int64_t hist_seq);

/* Settings every backend takes; unused ones are ignored. */
typedef struct store_config {
    int durability;      /* REMEM_DURABLE_NORMAL or _FULL */
    int busy_timeout_ms; /* wait for another writer's lock (0: 10 s) */
    int read_only;
} store_config;

/* The operations; every one is required, unless it says NULL is allowed. */
struct store_ops {
    const char *name; /* "sqlite" */
    void (*close)(store *s);

    /* One write transaction; the write lock is taken at once (waiting up
     * to the busy timeout). A failed commit rolls back. */
    int (*begin)(store *s);
    int (*commit)(store *s);
    void (*rollback)(store *s);
    /* 1 if another connection committed since the previous call, else 0. */
    int (*changed)(store *s);
    /* Optional (NULL: each read is its own): the reads until read_end see
     * one snapshot, under one lock (a recall's namespace checks and loads
     * take one shared lock on SQLite instead of one each). Inside a write
     * transaction, or nested, both do nothing. */
    int (*read_begin)(store *s);
    void (*read_end)(store *s);

    /* Namespace information; ENOTFOUND (outputs zeroed, model "") when
     * the namespace has never been written. Outputs may be NULL. */
    int (*ns_info)(store *s, const char *ns, char *model, size_t model_cap, int *dim,
                   int64_t *version, int64_t *rows);
    /* Record the model of the namespace's vectors (creating it). */
    int (*ns_set_model)(store *s, const char *ns, const char *model, int dim);
    /* Each namespace holding rows, by name. */
    int (*namespaces)(store *s, store_ns_fn fn, void *ctx);

    /* Look up by key. ns NULL: any namespace (EAMBIGUOUS if several).
     * ENOTFOUND when there is none. with_vec loads the vector. */
    int (*find)(store *s, const char *ns, const char *id, int with_vec, store_row *out);
    int (*get_rowid)(store *s, int64_t rowid, int with_vec, store_row *out);
    /* The row of ns whose normalised text is norm (hash h), or 0. */
    int (*find_dup)(store *s, const char *ns, uint64_t h, const char *norm, int64_t *rowid);
    /* The same, among the rows whose rowid is above after, the lowest
     * first, or 0: every row of ns with that text, one call each (an
     * episode's duplicate must be one of its own project's). */
    int (*find_dup_after)(store *s, const char *ns, uint64_t h, const char *norm, int64_t after,
                          int64_t *rowid);

    /* Insert a new row: every field of m final; m->vector may be NULL
     * (then no model is stored either). norm/h: the normalised text
     * (util_normalize_text of m->text: a store may keep only the hash and
     * normalise a candidate's text again, as SQLite does) and its hash,
     * for find_dup. */
    int (*insert)(store *s, const remem_memory *m, const char *norm, uint64_t h, int64_t *rowid);
    /* Replace every field of an existing row (its rowid stays). */
    int (*replace)(store *s, int64_t rowid, const remem_memory *m, const char *norm, uint64_t h);
    /* duplicate_count += 1, updated_at = now. */
    int (*bump_duplicate)(store *s, int64_t rowid, int64_t now);
    int (*remove)(store *s, int64_t rowid);
    /* accessed_at = now, access_count += 1 for each rowid, without
     * bumping the namespace's version (reading is not a change). */
    int (*touch)(store *s, const int64_t *rowids, size_t n, int64_t now);
    /* Set the vector and model of a row (reindex). */
    int (*set_vector)(store *s, int64_t rowid, const char *model, const float *vec, int dim);
    /* Delete every row of ns (its model lock goes too); *deleted gets the
     * count (may be NULL). */
    int (*clear)(store *s, const char *ns, int64_t *deleted);

    /* Call fn for every row of ns (NULL: all), in rowid order, with the
     * vector when with_vec (it may not be aligned for float: memcpy it). */
    int (*scan)(store *s, const char *ns, int with_vec, store_row_fn fn, void *ctx);
    /* Counts of ns (NULL: all); fn (may be NULL) gets the rows per kind,
     * tier and model (in that order, each by key). now decides "expired". */
    int (*stats)(store *s, const char *ns, int64_t now, store_summary *out, store_count_fn fn,
                 void *ctx);

    /* Append a history row. */
    int (*history_add)(store *s, const char *ns, const char *id, int64_t at, const char *op,
                       const char *actor, const char *before, const char *after);
    /* The newest history seq of ns (0 if none). */
    int (*history_max)(store *s, const char *ns, int64_t *seq);
    /* fn(ctx, id, op) for each history row of ns with seq > after, oldest
     * first; *max_seq gets the newest seq seen (after if none). */
    int (*history_since)(store *s, const char *ns, int64_t after, store_hist_fn fn, void *ctx,
                         int64_t *max_seq);
    /* Each history row of id in ns (NULL: in any namespace), oldest first. */
    int (*history)(store *s, const char *ns, const char *id, store_history_fn fn, void *ctx);
    /* A purge: every history row of (ns, id) keeps only seq, ns, id, op and
     * at (actor, before and after are cleared). */
    int (*history_scrub)(store *s, const char *ns, const char *id);
    /* After a purge has committed: leave no trace of deleted content in
     * the store's files (journal, free pages).
     * Runs its own transaction. */
    int (*scrub_deleted)(store *s);
    /* The backend's own consistency check of its files (SQLite's
     * integrity_check): fn(ctx, problem) for each problem found, none
     * when the store is sound. Reads only. */
    int (*integrity)(store *s, store_problem_fn fn, void *ctx);
    /* Where the engine may keep a disposable copy of its caches beside
     * the store (src/engine/snapshot.c): the store's identity (a random id
     * made once, kept in the store itself, so that a file copied from
     * another store has another id) into uid, and the local path the
     * copies go beside (the SQLite file) into path. REMEM_EUNSUPPORTED
     * when there is no such place (":memory:", a database server, a
     * read-only store that has no id yet). NULL in a table: the same. */
    int (*cache_home)(store *s, char *uid, size_t uid_cap, char *path, size_t path_cap);
    /* Reads of ns: *count gets how many touches the namespace has had (a
     * counter each touch bumps), and fn (may be NULL) each row of ns last
     * touched after the count was `after`, with its access fields. What a
     * cache saved at count `after` re-reads to be exact. NULL in a table
     * (REMEM_EUNSUPPORTED): a store that has no cache_home needs none. */
    int (*touched_since)(store *s, const char *ns, int64_t after, store_touch_fn fn, void *ctx,
                         int64_t *count);
    /* Commit as commit does, first giving each of ns[0..n) its version
     * (0: no namespace row) and its newest history seq as this
     * transaction leaves them, in fewer round trips than ns_info and
     * history_max and commit one after another (a database server). On
     * failure the transaction is rolled back. NULL in a table: the engine
     * makes those three calls. */
    int (*commit_report)(store *s, const char *const *ns, size_t n, int64_t *version,
                         int64_t *hist_seq);
    /* Inside the open write transaction, before a batch of adds: take the
     * write lock of each of b's namespaces (as their first write would),
     * answer b's duplicate lookups as of now, and get ready for b->n_new
     * inserts, which the store may then hold and send together at its
     * next statement or commit (the rowids insert returns are final, and
     * every later call sees the rows). NULL in a table: the engine makes
     * the calls one by one. */
    int (*batch)(store *s, store_batch *b);
    /* What a cache load reads of ns, in one read of one snapshot (a
     * database server: one round trip, where history_max, ns_info and
     * scan are three): start(ctx, row, hist_seq) with its namespace row
     * (as ns_info) and its newest history seq (as history_max), then fn
     * for each row of ns as scan with its vector gives them, and with the
     * touches this handle holds unwritten applied (as if they had been
     * written first). ENOTFOUND (start not called) when ns has never been
     * written. NULL in a table: the engine makes those three calls. */
    int (*load)(store *s, const char *ns, store_load_fn start, store_row_fn fn, void *ctx);
};

/* The part of every backend's handle the engine sees; a backend's own
 * handle starts with it. */
struct store {
    const store_ops *ops;
    char path[1024]; /* what it was opened on, e.g. a file path or ":memory:" */
    char err[512];
};

/* A backend: the URI schemes it opens ("postgres" for postgres://...) and
 * its open call. On failure open frees what it made, sets *out NULL and
 * writes the reason into err. */
typedef struct store_backend {
    const char *name;
    const char *const *schemes; /* NULL-terminated */
    int (*open)(const char *uri, const store_config *cfg, store **out, char *err, size_t errcap);
} store_backend;

/* Open the store uri names: "scheme://..." goes to the backend of that
 * scheme; "file:PATH", a plain path and ":memory:" to the "file" one
 * (SQLite). REMEM_EUNSUPPORTED for a scheme no built-in backend takes. */
int store_open(const char *uri, const store_config *cfg, store **out, char *err, size_t errcap);

/* Call sites read as plain calls; each forwards to the handle's table. */
static inline void store_close(store *s) {
    if (s) s->ops->close(s);
}
static inline const char *store_errmsg(const store *s) { return s ? s->err : "out of memory"; }
static inline const char *store_path(const store *s) { return s->path; }
static inline int store_begin(store *s) { return s->ops->begin(s); }
static inline int store_read_begin(store *s) {
    return s->ops->read_begin ? s->ops->read_begin(s) : 0;
}
static inline void store_read_end(store *s) {
    if (s->ops->read_end) s->ops->read_end(s);
}
static inline int store_commit(store *s) { return s->ops->commit(s); }
/* REMEM_EUNSUPPORTED (nothing done) when the backend has no commit_report. */
static inline int store_commit_report(store *s, const char *const *ns, size_t n, int64_t *version,
                                      int64_t *hist_seq) {
    if (!s->ops->commit_report) return REMEM_EUNSUPPORTED;
    return s->ops->commit_report(s, ns, n, version, hist_seq);
}
/* 1 when the backend has a batch call (else the engine need not prepare one). */
static inline int store_has_batch(const store *s) { return s->ops->batch != NULL; }
/* REMEM_EUNSUPPORTED (nothing done) when the backend has no batch call. */
static inline int store_batch_begin(store *s, store_batch *b) {
    if (!s->ops->batch) return REMEM_EUNSUPPORTED;
    return s->ops->batch(s, b);
}
/* 1 when the backend reads a namespace for a load in one call (load). */
static inline int store_has_load(const store *s) { return s->ops->load != NULL; }
/* REMEM_EUNSUPPORTED (nothing done) when the backend has no load call. */
static inline int store_load(store *s, const char *ns, store_load_fn start, store_row_fn fn,
                             void *ctx) {
    if (!s->ops->load) return REMEM_EUNSUPPORTED;
    return s->ops->load(s, ns, start, fn, ctx);
}
static inline void store_rollback(store *s) { s->ops->rollback(s); }
static inline int store_changed(store *s) { return s->ops->changed(s); }
static inline int store_ns_info(store *s, const char *ns, char *model, size_t model_cap, int *dim,
                                int64_t *version, int64_t *rows) {
    return s->ops->ns_info(s, ns, model, model_cap, dim, version, rows);
}
static inline int store_ns_set_model(store *s, const char *ns, const char *model, int dim) {
    return s->ops->ns_set_model(s, ns, model, dim);
}
static inline int store_namespaces(store *s, store_ns_fn fn, void *ctx) {
    return s->ops->namespaces(s, fn, ctx);
}
static inline int store_find(store *s, const char *ns, const char *id, int with_vec,
                             store_row *out) {
    return s->ops->find(s, ns, id, with_vec, out);
}
static inline int store_get_rowid(store *s, int64_t rowid, int with_vec, store_row *out) {
    return s->ops->get_rowid(s, rowid, with_vec, out);
}
static inline int store_find_dup(store *s, const char *ns, uint64_t h, const char *norm,
                                 int64_t *rowid) {
    return s->ops->find_dup(s, ns, h, norm, rowid);
}
static inline int store_find_dup_after(store *s, const char *ns, uint64_t h, const char *norm,
                                       int64_t after, int64_t *rowid) {
    return s->ops->find_dup_after(s, ns, h, norm, after, rowid);
}
static inline int store_insert(store *s, const remem_memory *m, const char *norm, uint64_t h,
                               int64_t *rowid) {
    return s->ops->insert(s, m, norm, h, rowid);
}
static inline int store_replace(store *s, int64_t rowid, const remem_memory *m, const char *norm,
                                uint64_t h) {
    return s->ops->replace(s, rowid, m, norm, h);
}
static inline int store_bump_duplicate(store *s, int64_t rowid, int64_t now) {
    return s->ops->bump_duplicate(s, rowid, now);
}
static inline int store_delete(store *s, int64_t rowid) { return s->ops->remove(s, rowid); }
static inline int store_touch(store *s, const int64_t *rowids, size_t n, int64_t now) {
    return s->ops->touch(s, rowids, n, now);
}
static inline int store_set_vector(store *s, int64_t rowid, const char *model, const float *vec,
                                   int dim) {
    return s->ops->set_vector(s, rowid, model, vec, dim);
}
static inline int store_clear(store *s, const char *ns, int64_t *deleted) {
    return s->ops->clear(s, ns, deleted);
}
static inline int store_scan(store *s, const char *ns, int with_vec, store_row_fn fn, void *ctx) {
    return s->ops->scan(s, ns, with_vec, fn, ctx);
}
static inline int store_stats(store *s, const char *ns, int64_t now, store_summary *out,
                              store_count_fn fn, void *ctx) {
    return s->ops->stats(s, ns, now, out, fn, ctx);
}
static inline int store_history_add(store *s, const char *ns, const char *id, int64_t at,
                                    const char *op, const char *actor, const char *before,
                                    const char *after) {
    return s->ops->history_add(s, ns, id, at, op, actor, before, after);
}
static inline int store_history_max(store *s, const char *ns, int64_t *seq) {
    return s->ops->history_max(s, ns, seq);
}
static inline int store_history_since(store *s, const char *ns, int64_t after, store_hist_fn fn,
                                      void *ctx, int64_t *max_seq) {
    return s->ops->history_since(s, ns, after, fn, ctx, max_seq);
}
static inline int store_history(store *s, const char *ns, const char *id, store_history_fn fn,
                                void *ctx) {
    return s->ops->history(s, ns, id, fn, ctx);
}
static inline int store_history_scrub(store *s, const char *ns, const char *id) {
    return s->ops->history_scrub(s, ns, id);
}
static inline int store_scrub_deleted(store *s) { return s->ops->scrub_deleted(s); }
static inline int store_integrity(store *s, store_problem_fn fn, void *ctx) {
    return s->ops->integrity(s, fn, ctx);
}
static inline int store_cache_home(store *s, char *uid, size_t uid_cap, char *path,
                                   size_t path_cap) {
    if (!s->ops->cache_home) return REMEM_EUNSUPPORTED;
    return s->ops->cache_home(s, uid, uid_cap, path, path_cap);
}
static inline int store_touched_since(store *s, const char *ns, int64_t after, store_touch_fn fn,
                                      void *ctx, int64_t *count) {
    if (!s->ops->touched_since) return REMEM_EUNSUPPORTED;
    return s->ops->touched_since(s, ns, after, fn, ctx, count);
}

#endif
