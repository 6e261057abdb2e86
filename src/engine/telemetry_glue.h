/*
 * telemetry_glue.h: where the engine meets src/telemetry/ (docs/telemetry.md).
 * The engine's entry points (remem_call, remem_add, remem_recall, the LLM
 * chat, prune's phases) open a span, name it after seed 003 where the seed
 * names it, and fill its attributes from what they have at hand; the same
 * places feed the metrics. With telemetry off every span call gets NULL and
 * returns at once.
 */
#ifndef REMEM_TELEMETRY_GLUE_H
#define REMEM_TELEMETRY_GLUE_H

#include "engine/engine.h"
#include "telemetry/telemetry.h"

/* remem_call: the span of operation op (NULL when off), and its end with
 * the arguments, the answer (NULL on failure) and the status; the end
 * also feeds the operation's metrics whether or not spans are on. */
tm_span *eng_tm_call_begin(const char *op);
void eng_tm_call_end(remem *db, tm_span *s, const char *op, json_t *args, json_t *res, int rc);

/* The span name remem_call uses for op: seed 003's where it names one. */
const char *eng_tm_span_name(const char *op, char *buf, size_t cap);

/* The status of a span from an engine status: the handle's message. */
void eng_tm_status(remem *db, tm_span *s, int rc);

/* Time spent in the embedder by the current add (remem_add's span reads
 * it; memory.store_episode's embeddingTimeMs). */
void eng_tm_note_embed_ms(double ms);
void eng_tm_embed_ms_reset(void);
double eng_tm_embed_ms(void);

#endif
