/*
 * ops.c: the table of operations behind remem_call (include/remem.h,
 * "Operations") and the one argument checker they share. The faces know
 * operations only through this table, so an operation added in a feature
 * folder (a row in its array, listed in ops.h's ENGINE_OP_TABLES) appears
 * on the CLI, HTTP, MCP and Python at once, with the same checks.
 *
 * The argument checker and readers are in args.c: the operations' files
 * call those, and this file refers to the operations' tables, so keeping
 * them apart keeps the calls one way (scripts/check_cycles.py).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ops.h"
#include "engine/telemetry_glue.h"

/* ---- the table ---- */

static const engine_op **g_ops;
static remem_op_info *g_info;
static size_t g_n;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void ops_build(void) {
    size_t n = 0;
#define ENGINE_OP_COUNT(t) n += t##_n;
    ENGINE_OP_TABLES(ENGINE_OP_COUNT)
#undef ENGINE_OP_COUNT
    g_ops = calloc(n ? n : 1, sizeof *g_ops);
    g_info = calloc(n ? n : 1, sizeof *g_info);
    if (!g_ops || !g_info) return;
#define ENGINE_OP_FILL(t)                \
    for (size_t i = 0; i < t##_n; i++) { \
        g_ops[g_n] = &t[i];              \
        g_info[g_n++] = t[i].info;       \
    }
    ENGINE_OP_TABLES(ENGINE_OP_FILL)
#undef ENGINE_OP_FILL
}

const remem_op_info *remem_ops(size_t *n) {
    pthread_once(&g_once, ops_build);
    if (n) *n = g_info ? g_n : 0;
    return g_info;
}

static const engine_op *op_lookup(const char *name) {
    pthread_once(&g_once, ops_build);
    if (!name || !g_ops) return NULL;
    for (size_t i = 0; i < g_n; i++)
        if (!strcmp(g_ops[i]->info.name, name)) return g_ops[i];
    return NULL;
}

/* The entry of remem_ops() itself, so that callers may compare pointers. */
const remem_op_info *remem_op_find(const char *name) {
    const engine_op *op = op_lookup(name);
    if (!op) return NULL;
    for (size_t i = 0; i < g_n; i++)
        if (g_ops[i] == op) return &g_info[i];
    return NULL;
}

unsigned engine_op_flags(const char *name) {
#define ENGINE_OP_FLAG(n, f) \
    if (!strcmp(name, n)) return f;
    ENGINE_OP_FLAGS(ENGINE_OP_FLAG)
#undef ENGINE_OP_FLAG
    return 0;
}

/* ---- the call ---- */

int remem_call(remem *db, const char *name, const char *args, size_t len, char **out) {
    return remem_call_ex(db, name, args, len, 0, out);
}

int remem_call_ex(remem *db, const char *name, const char *args, size_t len, unsigned cflags,
                  char **out) {
    if (!db) return REMEM_EINVAL;
    if (!out) return eng_fail(db, REMEM_EINVAL, "no place for the answer");
    *out = NULL;
    if (cflags & ~(unsigned)REMEM_CALL_REMOTE)
        return eng_fail(db, REMEM_EINVAL, "remem_call_ex: unknown flags 0x%x", cflags);
    eng_ok(db);
    const engine_op *op = op_lookup(name);
    if (!op) return eng_fail(db, REMEM_ENOTFOUND, "no operation called \"%s\"", name ? name : "");
    json_error_t je;
    json_t *a = args && len ? json_loadb(args, len, JSON_REJECT_DUPLICATES, &je) : json_object();
    if (!a)
        return eng_fail(db, REMEM_EPARSE, "%s: the arguments are not JSON: %s (at byte %d)", name,
                        je.text, je.position);
    if (!json_is_object(a)) {
        json_decref(a);
        return eng_fail(db, REMEM_EINVAL, "%s: the arguments must be a JSON object", name);
    }
    char err[600];
    unsigned flags = engine_op_flags(name);
    if ((!(flags & OP_SELF_CHECK) && engine_args_check(op->info.schema, a, err, sizeof err)) ||
        ((cflags & REMEM_CALL_REMOTE) && engine_args_local(op->info.schema, a, err, sizeof err))) {
        json_decref(a);
        return eng_fail(db, REMEM_EINVAL, "%s: %s", name, err);
    }
    /* Memory off (seed 004's --no-memory; policy.c): an operation that
     * writes is checked, accepted and dropped; one that reads runs (its
     * recalls find nothing) and its answer says memory is off. Operations
     * without "ns" follow the handle's option alone. */
    const char *ns = json_string_value(json_object_get(a, "ns"));
    int off = eng_memory_off(db, ns);
    json_t *res = NULL;
    int rc;
    tm_span *span = eng_tm_call_begin(name);
    if (off && strstr(op->info.right, "write") && !(flags & OP_SELF_OFF)) {
        res = json_pack("{s:s, s:s?, s:s, s:s}", "op", name, "ns", ns, "outcome", "dropped", "text",
                        "memory is off: nothing was written");
        rc = res ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
    } else {
        free(db->answer_text);
        db->answer_text = NULL;
        rc = op->fn(db, a, &res);
    }
    char *text = db->answer_text; /* the answer as text (eng_answer_text) */
    db->answer_text = NULL;
    if (text && (rc || res || off)) { /* memory off: the answer gains a key */
        if (!rc && !res && !(res = json_loads(text, 0, NULL))) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        free(text);
        text = NULL;
    }
    if (rc && !db->err[0]) eng_fail(db, rc, "%s: %s", name, remem_strerror(rc));
    /* Every failure names the operation once, whatever part failed. */
    if (rc && strncmp(db->err, name, strlen(name))) {
        char msg[sizeof db->err];
        snprintf(msg, sizeof msg, "%s", db->err);
        eng_fail(db, rc, "%s: %s", name, msg);
    }
    eng_tm_call_end(db, span, name, a, rc ? NULL : res, rc);
    json_decref(a);
    if (rc) {
        json_decref(res);
        if (!db->err[0]) eng_fail(db, rc, "%s: %s", name, remem_strerror(rc));
        return rc;
    }
    if (text) {
        *out = text;
        return REMEM_OK;
    }
    if (!res) res = json_object();
    /* "memory": "off", unless the answer already uses "memory" for its
     * own content (memory.get's record): then "memory_off": true. */
    if (off) {
        json_t *m = json_object_get(res, "memory");
        if (!m || (json_is_string(m) && !strcmp(json_string_value(m), "off")))
            json_object_set_new(res, "memory", json_string("off"));
        else
            json_object_set_new(res, "memory_off", json_true());
    }
    /* 15 significant digits: 0.72, not 0.71999999999999997 */
    *out = json_dumps(res, JSON_COMPACT | JSON_REAL_PRECISION(15));
    json_decref(res);
    if (!*out) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    return REMEM_OK;
}

/* ---- the engine's own operations ---- */

/* "memory.get": one memory by namespace and id, {"memory": the same object
 * remem_get's record renders to}; there so that every operation's answer (which often
 * names ids: a reflection's evidence, a summary's sources) can be followed
 * up through the same call on every face. */
static int op_get(remem *db, json_t *args, json_t **result) {
    remem_record *r = NULL;
    int rc = remem_get(db, op_str(args, "ns", NULL), op_str(args, "id", NULL), &r);
    if (rc) return rc;
    json_t *m = eng_memory_json(remem_record_memory(r), 0);
    remem_record_free(r);
    if (!m) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    *result = json_pack("{s:o}", "memory", m);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

/* "cache.save": write the namespace's cache snapshot now rather than at
 * the handle's close (src/engine/cache_snap.c), e.g. from a long-running
 * server after a large import; loads the namespace first if needed. */
static int op_cache_save(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL);
    if (!snap_enabled())
        return eng_fail(db, REMEM_EUNSUPPORTED,
                        "cache.save: snapshots are off (REMEM_SNAPSHOTS=0)");
    int rc;
    ns_cache *c = cache_get(db, ns, &rc);
    if (rc) return rc;
    if (!c) {
        *result = json_pack("{s:s, s:b, s:i, s:s}", "ns", ns, "saved", 0, "rows", 0, "text",
                            "the namespace is empty: nothing to save");
        return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    int saved = snap_save(db, c, 1);
    size_t rows = c->n;
    int64_t version = c->version;
    cache_put(db, c);
    if (saved < 0)
        return eng_fail(db, REMEM_EUNSUPPORTED,
                        "cache.save: no snapshot of %s can be written here (an in-memory or "
                        "server store, a purge since the namespace was loaded, or the folder "
                        "beside the store is not writable)",
                        ns);
    char text[160];
    snprintf(text, sizeof text, "%s: %zu memories at version %lld, %s", ns, rows,
             (long long)version, saved ? "snapshot written" : "the snapshot was up to date");
    *result = json_pack("{s:s, s:b, s:I, s:I, s:s}", "ns", ns, "saved", saved, "rows",
                        (json_int_t)rows, "version", (json_int_t)version, "text", text);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

const engine_op core_ops[] = {
    {{"cache.save", "write",
      "Write the namespace's cache snapshot beside the store now (it is also written when the "
      "handle closes), so that the next process loads the namespace from it.",
      "{\"type\":\"object\",\"required\":[\"ns\"],"
      "\"properties\":{\"ns\":{\"type\":\"string\",\"description\":\"namespace\"}}}", REMEM_OP_IDEMPOTENT, "admin"},
     op_cache_save},
    {{"memory.get", "read", "One memory by id, with every field.",
      "{\"type\":\"object\",\"required\":[\"id\"],\"x-positional\":[\"id\"],"
      "\"properties\":{\"ns\":{\"type\":\"string\",\"minLength\":1,\"description\":"
      "\"namespace (optional)\"},"
      "\"id\":{\"type\":\"string\",\"minLength\":1,\"description\":\"memory id\"}}}",
      REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "core"},
     op_get},
};
const size_t core_ops_n = sizeof core_ops / sizeof core_ops[0];
