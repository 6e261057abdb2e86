/*
 * ops.h: how an engine operation joins the table behind remem_call (see
 * include/remem.h, "Operations"). Each feature folder (src/lifecycle/,
 * src/experience/, src/lessons/, src/maintenance/, ...) defines one array
 * of engine_op and ops.c lists the arrays: adding an operation is a row in
 * its folder's array, and it appears on every face (CLI, HTTP, MCP,
 * Python) with no face code.
 *
 * An operation's function receives the arguments already checked against
 * its schema (types, required keys, no unknown keys, enums, bounds), so it
 * reads them without re-checking their shape. It returns a status; on
 * success *result is a new JSON object (the answer); on failure it sets
 * the handle's message (eng_fail) and writes nothing.
 */
#ifndef REMEM_ENGINE_OPS_H
#define REMEM_ENGINE_OPS_H

#include <jansson.h>
#include <stddef.h>
#include "engine.h"

typedef int (*engine_op_fn)(remem *db, json_t *args, json_t **result);

/* An operation whose answer is already JSON text (an object) may give it
 * this way and leave *result NULL: remem_call_ex returns the text as it is
 * rather than parsing and writing it again. Takes text (from malloc or
 * remem's own allocation); returns REMEM_OK, or REMEM_ENOMEM for NULL. */
int eng_answer_text(remem *db, char *text);

typedef struct engine_op {
    remem_op_info info;
    engine_op_fn fn;
} engine_op;

/* Flags of a few rows, listed by name in ENGINE_OP_FLAGS (so that the
 * other tables' rows keep their two fields). The operation applies memory-off itself (the core writes answer in the
 * documented write shape, remem_write_result_json), instead of remem_call
 * dropping the call before it runs. */
#define OP_SELF_OFF   1u
/* The operation checks its own arguments with a parser that is the rule
 * for them (recall: remem_query_parse, whose messages every face prints);
 * its schema then describes them for the faces and is not applied. */
#define OP_SELF_CHECK 2u
#define ENGINE_OP_FLAGS(X)                                                                   \
    X("memory.add", OP_SELF_OFF)                                                             \
    X("memory.add_batch", OP_SELF_OFF) X("memory.update", OP_SELF_OFF)                       \
        X("memory.invalidate", OP_SELF_OFF) X("memory.forget", OP_SELF_OFF)                  \
            X("memory.delete", OP_SELF_OFF) X("clear", OP_SELF_OFF) X("import", OP_SELF_OFF) \
                X("recall", OP_SELF_CHECK) X("recall.explain", OP_SELF_CHECK)
/* The flags of an operation (0 for most). */
unsigned engine_op_flags(const char *name);

/* The arrays ops.c joins: one per feature folder, defined there. */
#define ENGINE_OP_TABLES(X) \
    X(core_ops)             \
    X(memory_ops)           \
    X(list_ops)             \
    X(store_wide_ops)       \
    X(lifecycle_ops)        \
    X(experience_ops)       \
    X(config_ops)           \
    X(llm_ops)              \
    X(lesson_ops)           \
    X(episode_ops)          \
    X(archive_ops)          \
    X(maintenance_ops)      \
    X(pending_ops)          \
    X(check_ops)            \
    X(ingest_ops)

#define ENGINE_OP_DECLARE(t)    \
    extern const engine_op t[]; \
    extern const size_t t##_n;
ENGINE_OP_TABLES(ENGINE_OP_DECLARE)
#undef ENGINE_OP_DECLARE

/* Sections a feature adds to remem_stats(db, ns) (namespace.c): each
 * function adds its own keys to the answer o when it has something to say
 * about ns, and returns a status (a failure fails the stats call). Listed
 * here, as the operation tables are, so that the engine calls them without
 * including the feature folders' headers. */
typedef int (*engine_stats_fn)(remem *db, const char *ns, json_t *o);
#define ENGINE_STATS_HOOKS(X) X(experience_stats)

#define ENGINE_STATS_DECLARE(f) int f(remem *db, const char *ns, json_t *o);
ENGINE_STATS_HOOKS(ENGINE_STATS_DECLARE)
#undef ENGINE_STATS_DECLARE

/* Check args against a JSON Schema text (the subset remem's operation
 * schemas use: type, properties, required, additionalProperties (false by
 * default: unknown keys are refused), enum, minimum, maximum, minLength,
 * maxLength, items, minItems, maxItems). 0, or -1 with err naming the argument
 * ("reward: expected a number, got a string"). */
int engine_args_check(const char *schema, json_t *args, char *err, size_t errcap);

/* 0 when args hold no argument the schema marks "x-local": true (a file
 * or folder of this machine, which a remote caller must not choose); else
 * -1 with err naming it. remem_call_ex runs it for REMEM_CALL_REMOTE. */
int engine_args_local(const char *schema, json_t *args, char *err, size_t errcap);

/* Small readers for checked arguments: the value, or def when absent. */
const char *op_str(json_t *args, const char *key, const char *def);
double op_num(json_t *args, const char *key, double def);
int64_t op_int(json_t *args, const char *key, int64_t def);
int op_bool(json_t *args, const char *key, int def);

#endif
