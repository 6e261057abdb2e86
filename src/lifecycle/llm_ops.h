/*
 * llm_ops.h: what rate.c and consolidate.c share, and what other lifecycle
 * code may call to rate a text the way "rate" does (the auto-rate policy).
 */
#ifndef REMEM_LIFECYCLE_LLM_OPS_H
#define REMEM_LIFECYCLE_LLM_OPS_H

#include <jansson.h>
#include "engine/engine.h"

/* Seed 001's poignancy prompt around memory (malloc'd; NULL: no memory). */
char *rate_prompt(const char *memory);
/* Ask the handle's LLM (which must exist) to rate text 1-10 under the
 * operation name op: *rating in [1, 10], *explanation malloc'd or NULL.
 * REMEM_ELLM with the handle's message naming the cause otherwise. */
int rate_text(remem *db, const char *op, const char *text, double *rating, char **explanation,
              llm_usage *u);

/* The operations (llm_ops.c lists them): "rate" and "llm.check"
 * (rate.c), "consolidate" (consolidate.c). */
int op_rate(remem *db, json_t *args, json_t **result);
int op_llm_check(remem *db, json_t *args, json_t **result);
int op_consolidate(remem *db, json_t *args, json_t **result);

#endif
