/*
 * lessons.h: what the files of src/lessons/ share (seed 002: lessons that
 * earn their place). Everything this folder keeps is an ordinary memory of
 * the namespace, written and read through the public calls, with every
 * field in its metadata:
 *   kind "lesson"      id lsn_<hash of domain and rule>   text: the rule
 *   kind "error_event" id evt_<ulid>                      text: the error
 *   kind "hint_log"    id hnt_<ulid>   one retrieval: lane, score, lesson
 *   kind "attempt"     id att_<ulid>   one validated tool input
 *   kind "run"         id run_<run>    one closed run (lesson.outcome)
 * so there is no store of its own: export, history, recall, filters and
 * the server see them as they see any memory.
 *
 * The normaliser and the fingerprint are pure functions (fingerprint.c),
 * as is the structural validation gate (validate.c): tested by tables,
 * fuzzed. The policy (lanes, utility, promotion, suppression) lives in
 * hints.c and outcome.c with its thresholds named below, the same ones
 * docs/lessons.md gives.
 */
#ifndef REMEM_LESSONS_H
#define REMEM_LESSONS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/ops.h"

/* ---- thresholds (docs/lessons.md, "Thresholds") ---- */
#define LSN_PROMOTE_UTILITY     0.20 /* utility needed for promotion */
#define LSN_PROMOTE_RUNS        3    /* relevant runs with the lesson needed */
#define LSN_MAJOR_REGRESSION    0.50 /* a run this far below the baseline ... */
#define LSN_REGRESSION_WINDOW   5    /* ... among the newest runs with the lesson */
#define LSN_SUPPRESS_RETRIEVALS 3    /* retrievals before non-positive utility suppresses */
#define LSN_TRANSFER_RETRIEVALS 2    /* the same, for the transfer lane */
#define LSN_CONFLICT_LOSSES     3    /* conflict resolutions lost before suppression */
#define LSN_NEUTRAL_BASELINE    0.50 /* baseline when no relevant run lacks the lesson */
#define LSN_TRANSFER_FACTOR     0.50 /* a transfer hint's score multiplier */
#define LSN_TRANSFER_ON_ERROR   1    /* transfer hints per on-error retrieval */
#define LSN_TRANSFER_PRE_RUN    2    /* transfer hints per pre-run retrieval */
#define LSN_STRICT_STRONG_N     2    /* auto: strict is weak with fewer hints than this */
#define LSN_STRICT_STRONG_SCORE 0.50 /* ... or when its best score is below this */
#define LSN_MIN_SCORE           0.25 /* hints below this score are not returned */
#define LSN_RETRY_CAP           2    /* validation retries on one step, then "reflect" */

/* ---- fingerprints (fingerprint.c) ---- */

/* The error text normalised (docs/lessons.md, "Fingerprints"): quoted
 * values, timestamps, hex ids, URLs, paths and numbers replaced by
 * placeholders, ASCII lowercased, whitespace collapsed, trimmed. HTTP
 * status codes 400-599 stay when the text speaks of HTTP or a status.
 * Pure; malloc'd (NULL: out of memory). */
char *lsn_normalise(const char *error);
/* "fp_" + 16 hex digits of the 64-bit hash of the normalised text. buf
 * holds at least 20 bytes. */
void lsn_fingerprint_of(const char *normalised, char buf[20]);

/* ---- the validation gate (validate.c) ---- */

/* Check input against schema structurally (seed 002's four kinds, and no
 * other): "missing_required", "wrong_type" (of the top level),
 * "empty_string" (a required string that is empty or blank),
 * "unknown_key" (when the schema forbids extra keys). Returns a new array
 * of {"kind","key","message"}; empty when the input passes. Pure. */
json_t *lsn_validate(const json_t *schema, const json_t *input);
/* Count a validation retry / a capped step (process-wide, for /metrics). */
void lsn_count_retry(void);
void lsn_count_capped(void);

/* ---- records (records.c) ---- */

/* One memory of a kind, copied out of the namespace. */
typedef struct lsn_rec {
    char *id;
    char *text;
    json_t *meta; /* owned; an object */
    int64_t created_at, updated_at;
    int archived; /* the memory is in tier "archived" (remem forget) */
    /* The cosine of its stored vector with lsn_list_opts.sim_to, when
     * has_sim (0 when it has no vector yet: an embedding still pending). */
    int has_sim;
    double sim;
} lsn_rec;

typedef struct lsn_list {
    lsn_rec *v;
    size_t n;
    json_t *index; /* id -> position in v, for lsn_find */
    int borrowed;  /* metas shared with the cache (references; vectors are copies) */
} lsn_list;

/* What lsn_list_where copies: only the memories whose metadata keep
 * accepts (NULL: all). sim_to: a unit vector of the embedder's dimension;
 * each record's cosine with it is computed while the cache is held (one
 * number kept, not a copy of every vector: the shared cache's rows may
 * move once it is released). borrow: no copy of the metadata (a reference
 * to the cache's: read it, never change it). */
typedef struct lsn_list_opts {
    int (*keep)(const json_t *meta, void *ctx);
    void *ctx;
    const float *sim_to;
    int borrow;
    int any_order; /* not sorted in the order written (the caller ranks them) */
} lsn_list_opts;

/* Every valid memory of kind in ns, in the order written (creation, then
 * id). A namespace that does not exist gives an empty list. Linear in the
 * namespace's rows (read from the engine's cache, not the store). */
int lsn_list_kind(remem *db, const char *ns, const char *kind, lsn_list *out);
int lsn_list_where(remem *db, const char *ns, const char *kind, const lsn_list_opts *o,
                   lsn_list *out);
void lsn_list_free(lsn_list *l);
/* The record of id in l, or NULL (a hash lookup). */
lsn_rec *lsn_find(lsn_list *l, const char *id);

/* An operation's writes, applied in one store transaction that holds the
 * namespace's write lock only for the writes themselves: every new text
 * is embedded before it begins, and every change is applied to the record
 * as stored at that moment (read again inside the transaction), never to
 * the copy the operation read before. So concurrent operations (threads
 * or processes) lose no count, and the fields an operation does not own
 * (importance, tier, text, other operations' counters) stay as they are.
 *
 * A change function edits meta (the stored metadata, a copy) in place and
 * returns 1 when it changed something, 0 when there is nothing to write,
 * or a negative REMEM_E* status. archived: 1 when the memory is in tier
 * "archived" now (no status change may revive it), 0 when it is not, -1
 * when meta is a new record's, about to be inserted. *actor (may stay
 * NULL; must outlive the commit) becomes the history row's actor: the
 * reason of a status change. */
typedef int (*lsn_change_fn)(void *ctx, json_t *meta, int archived, const char **actor);

typedef struct lsn_write {
    char *ns, *id, *kind, *text;
    json_t *meta_new; /* the metadata of a new record (NULL: a change only) */
    lsn_change_fn fn; /* applied to the stored record, or to meta_new (may be NULL) */
    void *ctx;
    char *exists_msg; /* a new record whose id is taken: fail with this */
} lsn_write;

typedef struct lsn_batch lsn_batch;
struct lsn_batch {
    lsn_write *w;
    size_t n, cap;
    /* Optional: run inside the transaction, once the namespace of the
     * first write is locked and before any write, so that what it reads
     * (lsn_list_*) no other writer can change until the commit; it may
     * queue changes (lsn_batch_change without meta_new), not new records.
     * No embedder or LLM call belongs here. */
    int (*inside)(remem *db, lsn_batch *b, void *ctx);
    void *inside_ctx;
};
/* Queue a new record (ns, id, kind, text, meta; meta is copied): inserted,
 * or, when its id is taken, replacing the record stored under it. */
int lsn_batch_put(lsn_batch *b, const char *ns, const char *id, const char *kind, const char *text,
                  const json_t *meta);
/* Queue a change of the stored record id: fn on its metadata when it
 * exists and is valid (nothing when it does not); with meta_new (copied),
 * a record missing then is inserted with fn applied to meta_new. */
int lsn_batch_change(lsn_batch *b, const char *ns, const char *id, const char *kind,
                     const char *text, const json_t *meta_new, lsn_change_fn fn, void *ctx);
/* The last queued record must be new: when its id is taken, the commit
 * fails with msg (REMEM_EINVAL) and writes nothing. */
int lsn_batch_unique(lsn_batch *b, const char *msg);
/* Write everything queued, all or nothing; frees the batch either way. */
int lsn_batch_commit(remem *db, lsn_batch *b);
void lsn_batch_free(lsn_batch *b);

/* A set of strings (a JSON object used as one) of the strings in array a:
 * membership in O(1) where lsn_has scans. New reference (NULL: ENOMEM). */
json_t *lsn_set_of(const json_t *a);
/* Append to array into each non-empty string of from that set (into's
 * strings, kept in step) lacks. Linear. */
void lsn_unite(json_t *into, const json_t *from, json_t *set);

/* A fresh time-ordered id with a prefix ("evt_..."), in buf (>= 40). */
void lsn_new_id(const char *prefix, char buf[40]);
/* The ISO 8601 time of ms, as a new JSON string. */
json_t *lsn_time_json(int64_t ms);

/* Small readers of metadata and of checked arguments (the operations
 * read their arguments with these, not ops.c's, so that no lesson file
 * calls back into the table that calls it). */
const char *lsn_s(const json_t *o, const char *key);
const char *lsn_str(const json_t *o, const char *key, const char *def);
double lsn_d(const json_t *o, const char *key, double def);
int64_t lsn_i(const json_t *o, const char *key, int64_t def);
/* Is s in the array of strings a? */
int lsn_has(const json_t *a, const char *s);

/* A lesson's reliability in a lane: (helpful + 1) / (helpful + harmful +
 * 2), of its home runs (helpful_count, harmful_count) or of its transfer
 * runs (transfer_helpful_count, transfer_harmful_count). */
double lsn_reliability(const json_t *lesson, int transfer);

/* The op functions, joined in lesson_ops (ops_table.c). */
int lsn_op_event(remem *db, json_t *args, json_t **result);
int lsn_op_add(remem *db, json_t *args, json_t **result);
int lsn_op_hints(remem *db, json_t *args, json_t **result);
int lsn_op_outcome(remem *db, json_t *args, json_t **result);
int lsn_op_validate(remem *db, json_t *args, json_t **result);
int lsn_op_timeline(remem *db, json_t *args, json_t **result);
int lsn_op_eval(remem *db, json_t *args, json_t **result);

/* Candidate lessons from the run's own records (learn.c): the LLM's
 * reflection on the run's failures when there is one, else the
 * deterministic rule "fix_after_error" (each failure followed by a step
 * that worked). *added: a new array of the lessons written (possibly
 * empty); *how: "llm" or "fix_after_error" (static text). */
int lsn_learn_from_run(remem *db, const char *ns, const char *run, const char *domain,
                       const char *session, json_t **added, const char **how);

#endif
