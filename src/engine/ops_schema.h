/*
 * ops_schema.h: the pieces of JSON Schema the core operations' rows share
 * (ops_memory.c, ops_store.c, list.c), written once so that "ns", "id" and
 * a memory's fields mean the same in every row and on every face, and the
 * readers those files share (a TTL, a memory object). Text macros: a row's
 * schema is one string literal, checked by tests/test_ops.c.
 */
#ifndef REMEM_ENGINE_OPS_SCHEMA_H
#define REMEM_ENGINE_OPS_SCHEMA_H

#include "engine/ops.h"

#define S_NS "\"ns\":{\"type\":\"string\",\"minLength\":1,\"description\":\"namespace\"}"
#define S_NS_OPT                                                                            \
    "\"ns\":{\"type\":\"string\",\"minLength\":1,\"description\":\"namespace (optional)\"}"
#define S_ID   "\"id\":{\"type\":\"string\",\"minLength\":1,\"description\":\"memory id\"}"
#define S_TEXT "\"text\":{\"type\":\"string\",\"minLength\":1,\"description\":\"what to remember\"}"
/* A memory's optional fields, as memory.add and a JSONL line take them. */
#define S_MEMORY_FIELDS                                                                      \
    "\"id\":{\"x-advanced\":true,\"type\":\"string\",\"minLength\":1,\"description\":\"the caller's id (an "     \
    "upsert when it exists)\"},"                                                             \
    "\"kind\":{\"type\":\"string\",\"description\":\"observation (default), reflection, "    \
    "decision, plan, ...\"},"                                                                \
    "\"tier\":{\"x-advanced\":true,\"type\":\"string\",\"enum\":[\"static\",\"short\",\"long\",\"archived\"]},"  \
    "\"importance\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1,\"description\":\"0 to "  \
    "1 (default: the kind's)\"},"                                                \
    "\"created_at\":{\"x-advanced\":true,\"type\":[\"string\",\"integer\"],\"x-aliases\":[\"created\"],"         \
    "\"description\":\"ISO 8601 or ms (default now)\"},"                                     \
    "\"expires_at\":{\"x-advanced\":true,\"type\":[\"string\",\"integer\"],\"description\":\"ISO 8601 or ms\"}," \
    "\"ttl\":{\"x-advanced\":true,\"type\":\"string\",\"description\":\"time to live from now: 30s, 15m, 2h, "   \
    "7d, or a time\"},"                                                                      \
    "\"metadata\":{\"type\":\"object\",\"x-aliases\":[\"meta\"],\"description\":\"a JSON "   \
    "object, filterable\"},"                                                                 \
    "\"links\":{\"x-advanced\":true,\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"ids "   \
    "this memory came from\"},"                                                              \
    "\"vector\":{\"x-advanced\":true,\"type\":\"array\",\"items\":{\"type\":\"number\"},\"description\":\"a "    \
    "precomputed embedding\"}"

/* A TTL ("30s", "7d", or a time) into *expires; REMEM_EINVAL naming it. */
int op_ttl(remem *db, const char *v, int64_t *expires);
/* One memory object through the JSONL line parser (ops_memory.c). */
int op_memory_of(remem *db, json_t *o, const char *ns, const char *where, remem_memory *m,
                 remem_line **holder);
/* memory.add_batch's function, which import also runs (ops_memory.c). */
int op_memory_add_batch(remem *db, json_t *args, json_t **result);

#endif
