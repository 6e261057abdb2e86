/*
 * lifecycle.h: what the lifecycle's files (static.c, tiers.c, reflect.c,
 * summarize.c, plan.c, context.c, table.c) share: the namespace's policy
 * and LLM (env.c), a snapshot of a namespace's memories taken from its
 * cache (snapshot.c), and one write session that stores new memories and
 * moves others between tiers in a single transaction (snapshot.c), so a
 * migration, a summary with its archived sources, or a reflection with
 * several insights is all there or not there at all.
 *
 * Every operation is a row of lifecycle_ops (table.c); docs/lifecycle.md
 * says where each comes from (seeds 001 and 004).
 */
#ifndef REMEM_LIFECYCLE_H
#define REMEM_LIFECYCLE_H

#include <jansson.h>
#include <stdint.h>

#include "config/config.h"
#include "engine/engine.h"
#include "engine/ops.h"
#include "llm/llm.h"

/* A summary of n texts (summarize.c), for seed 003's pruning clusters as
 * for summarise-and-forget: the LLM's when want_llm and one is
 * configured, else (or when the model fails: why says how) the extractive
 * summary, the most central sentences without repetition. method receives
 * "llm" or "extractive"; *out is malloc'd. */
int lc_summarise_texts(remem *db, const char *const *texts, size_t n, int want_llm, char **out,
                       char *method, size_t cap, char *why, size_t whycap);

/* ---- policy and LLM (env.c) ---- */

/* The effective policy of ns (never NULL; valid until the next call). */
const cfg_policy *lc_policy(remem *db, const char *ns);
/* The handle's LLM (owned by the handle: never closed here), or NULL
 * when none is configured: the operation then uses its named fallback or
 * refuses. */
llm *lc_llm(remem *db);
/* {"model","prompt_tokens","completion_tokens","calls"} of an operation. */
json_t *lc_llm_json(const llm *l, const llm_usage *u);
/* One chat turn for operation op (its tokens counted under that name),
 * with the handle's message set on failure (REMEM_ELLM, "op: cause"). */
int lc_chat(remem *db, const char *op, const char *system, const char *user, int json_mode,
            char **answer, llm_usage *u);

/* ---- snapshots (snapshot.c) ---- */

/* One memory copied out of a namespace's cache (its strings owned). */
typedef struct lc_mem {
    int64_t rowid;
    char *id, *text, *kind, *tier, *metadata, *links;
    double importance;
    int64_t created_at, accessed_at;
    float *vec; /* dim floats (unit length), or NULL when not asked for */
} lc_mem;

typedef struct lc_list {
    lc_mem *v;
    size_t n, cap;
    int dim;
} lc_list;

/* Which memories a snapshot keeps. */
typedef int (*lc_keep_fn)(const remem_memory *m, void *ctx);

/* The memories of ns that keep() accepts (NULL: all), in rowid order
 * (the order they were first written). Invalidated memories are never
 * included. with_vec copies their vectors. An unknown namespace is an
 * empty list. */
int lc_snapshot(remem *db, const char *ns, lc_keep_fn keep, void *ctx, int with_vec, lc_list *out);
void lc_list_free(lc_list *l);

/* A tier move of one memory in a write session. */
typedef struct lc_move {
    const char *id;
    const char *tier; /* "long", "archived", ... */
    /* The tier the memory must still be in when the transaction moves it
     * (NULL: any): a memory another call moved since it was read fails
     * the write with REMEM_EBUSY, nothing written, so a caller that chose
     * it from a snapshot can read again and retry. */
    const char *from;
} lc_move;

/* Store adds[0..nadd) (each with ns, text, kind, tier, importance,
 * metadata and links set; a NULL id gets a fresh generated one that never
 * folds into an exact duplicate) and apply moves[0..nmoves) in ns, in one
 * transaction, with actor in the history rows of the moves. ids (may be
 * NULL) receives the new ids, 32 bytes each. The texts are embedded before
 * the transaction starts. */
int lc_write(remem *db, const char *ns, const remem_memory *adds, size_t nadd, char (*ids)[32],
             const lc_move *moves, size_t nmoves, const char *actor);

/* A JSON array of ids as text (malloc'd). */
char *lc_ids_json(const char *const *ids, size_t n);
/* v as compact JSON text (malloc'd; NULL when v is NULL or out of memory),
 * taking v's reference: what a memory's metadata field wants from a
 * json_pack. */
char *lc_json_text(json_t *v);

/* ---- reflection's trigger (reflect.c): what has accumulated in ns since
 * its last reflection, and whether the policy says one is due. ---- */
typedef struct lc_since {
    int64_t observations;  /* memories since the last reflection */
    double importance_sum; /* their importance x 10 (the paper's scale) */
    int due;               /* a trigger of the policy fired */
    const char *trigger;   /* "observations", "importance" or NULL */
} lc_since;
int lc_reflect_since(remem *db, const char *ns, const cfg_policy *p, lc_since *out);
/* The after-add hook: reflect when the policy says so (never fails the add). */
void lc_after_add(remem *db, const char *ns);
/* The before-add hook: long_requires_stm. */
int lc_check_add(remem *db, const remem_memory *m);

/* The operations, one function each. */
int lc_op_static_load(remem *db, json_t *args, json_t **result);
int lc_op_migrate(remem *db, json_t *args, json_t **result);
int lc_op_unarchive(remem *db, json_t *args, json_t **result);
int lc_op_reflect(remem *db, json_t *args, json_t **result);
int lc_op_summarize(remem *db, json_t *args, json_t **result);
int lc_op_plan(remem *db, json_t *args, json_t **result);
int lc_op_context(remem *db, json_t *args, json_t **result);

#endif
