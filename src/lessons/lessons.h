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
} lsn_rec;

typedef struct lsn_list {
    lsn_rec *v;
    size_t n;
} lsn_list;

/* Every valid memory of kind in ns, in the order written (rowid order).
 * A namespace that does not exist gives an empty list. */
int lsn_list_kind(remem *db, const char *ns, const char *kind, lsn_list *out);
void lsn_list_free(lsn_list *l);
/* The record of id in l, or NULL. */
lsn_rec *lsn_find(lsn_list *l, const char *id);

/* A batch of memories to write in one transaction (upserts by id). */
typedef struct lsn_batch {
    remem_memory *m;
    char **own; /* strings the batch owns (freed with it) */
    size_t n, cap, n_own, cap_own;
} lsn_batch;
/* Queue (ns, id, kind, text, meta): meta is rendered now (the batch owns
 * the text). created_at 0: now, or the existing row's. */
int lsn_batch_put(lsn_batch *b, const char *ns, const char *id, const char *kind, const char *text,
                  const json_t *meta, int64_t created_at);
/* Write everything queued, all or nothing; frees the batch either way. */
int lsn_batch_commit(remem *db, lsn_batch *b);
void lsn_batch_free(lsn_batch *b);

/* Write a lesson whose status changed: its own transaction, whose
 * history row's actor is the reason ("lesson.outcome: promoted: utility
 * 0.41 >= 0.20 ..."), so `remem history` shows why. */
int lsn_write_status(remem *db, const char *ns, const char *id, const json_t *meta,
                     const char *reason);

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

#endif
