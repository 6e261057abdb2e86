/*
 * ops.c: the table of operations behind remem_call (include/remem.h,
 * "Operations") and the one argument checker they share. The faces know
 * operations only through this table, so an operation added in a feature
 * folder (a row in its array, listed in ops.h's ENGINE_OP_TABLES) appears
 * on the CLI, HTTP, MCP and Python at once, with the same checks.
 *
 * The checker implements the part of JSON Schema the operations' schemas
 * use, and refuses unknown keys unless a schema says otherwise: a typo in
 * an argument ("--reward" spelt "rewad") must be an error, not a silently
 * ignored default.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ops.h"

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

/* ---- argument readers ---- */

const char *op_str(json_t *args, const char *key, const char *def) {
    json_t *v = json_object_get(args, key);
    return json_is_string(v) ? json_string_value(v) : def;
}

double op_num(json_t *args, const char *key, double def) {
    json_t *v = json_object_get(args, key);
    return json_is_number(v) ? json_number_value(v) : def;
}

int64_t op_int(json_t *args, const char *key, int64_t def) {
    json_t *v = json_object_get(args, key);
    if (json_is_integer(v)) return (int64_t)json_integer_value(v);
    if (json_is_real(v)) return (int64_t)json_real_value(v);
    return def;
}

int op_bool(json_t *args, const char *key, int def) {
    json_t *v = json_object_get(args, key);
    return json_is_boolean(v) ? json_is_true(v) : def;
}

/* ---- the checker ---- */

static const char *json_kind(json_t *v) {
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

static int type_ok(const char *t, json_t *v) {
    if (!strcmp(t, "string")) return json_is_string(v);
    if (!strcmp(t, "number")) return json_is_number(v);
    if (!strcmp(t, "integer"))
        return json_is_integer(v) ||
               (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
                fabs(json_real_value(v)) < 9.007199254740992e15);
    if (!strcmp(t, "boolean")) return json_is_boolean(v);
    if (!strcmp(t, "object")) return json_is_object(v);
    if (!strcmp(t, "array")) return json_is_array(v);
    if (!strcmp(t, "null")) return json_is_null(v);
    return 0;
}

/* Does v fit "type" (a string or a list of strings)? */
static int types_ok(json_t *type, json_t *v, char *want, size_t cap) {
    if (!type) return 1;
    if (json_is_string(type)) {
        snprintf(want, cap, "%s", json_string_value(type));
        return type_ok(json_string_value(type), v);
    }
    size_t i;
    json_t *t;
    want[0] = '\0';
    json_array_foreach(type, i, t) {
        if (!json_is_string(t)) continue;
        size_t l = strlen(want);
        snprintf(want + l, cap - l, "%s%s", l ? " or " : "", json_string_value(t));
        if (type_ok(json_string_value(t), v)) return 1;
    }
    return 0;
}

static int fail_at(char *err, size_t cap, const char *path, const char *fmt, const char *a,
                   const char *b) {
    char msg[512];
    snprintf(msg, sizeof msg, fmt, a, b);
    if (path[0])
        snprintf(err, cap, "%s: %s", path, msg);
    else
        snprintf(err, cap, "%s", msg);
    return -1;
}

static int check(json_t *s, json_t *v, const char *path, char *err, size_t cap) {
    char want[128];
    if (!json_is_object(s)) return 0;
    if (!types_ok(json_object_get(s, "type"), v, want, sizeof want))
        return fail_at(err, cap, path, "expected %s, got %s",
                       !strcmp(want, "integer") || !strcmp(want, "object") || !strcmp(want, "array")
                           ? (!strcmp(want, "integer")  ? "an integer"
                              : !strcmp(want, "object") ? "an object"
                                                        : "an array")
                           : want,
                       json_kind(v));
    json_t *en = json_object_get(s, "enum");
    if (json_is_array(en)) {
        size_t i;
        json_t *e;
        int found = 0;
        json_array_foreach(en, i, e) if (json_equal(e, v)) found = 1;
        if (!found) {
            char *list = json_dumps(en, JSON_COMPACT);
            char *got = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
            fail_at(err, cap, path, "%s is not one of %s", got ? got : "?", list ? list : "?");
            free(list);
            free(got);
            return -1;
        }
    }
    if (json_is_number(v)) {
        double x = json_number_value(v);
        json_t *mn = json_object_get(s, "minimum"), *mx = json_object_get(s, "maximum");
        char a[64], b[64];
        snprintf(a, sizeof a, "%g", x);
        if (json_is_number(mn) && x < json_number_value(mn)) {
            snprintf(b, sizeof b, "%g", json_number_value(mn));
            return fail_at(err, cap, path, "%s is below the minimum %s", a, b);
        }
        if (json_is_number(mx) && x > json_number_value(mx)) {
            snprintf(b, sizeof b, "%g", json_number_value(mx));
            return fail_at(err, cap, path, "%s is above the maximum %s", a, b);
        }
    }
    if (json_is_string(v)) {
        size_t len = json_string_length(v);
        json_t *mn = json_object_get(s, "minLength"), *mx = json_object_get(s, "maxLength");
        char a[32];
        if (json_is_integer(mn) && len < (size_t)json_integer_value(mn)) {
            snprintf(a, sizeof a, "%lld", (long long)json_integer_value(mn));
            return fail_at(err, cap, path, "must be at least %s characters long%s", a, "");
        }
        if (json_is_integer(mx) && len > (size_t)json_integer_value(mx)) {
            snprintf(a, sizeof a, "%lld", (long long)json_integer_value(mx));
            return fail_at(err, cap, path, "must be at most %s bytes long%s", a, "");
        }
    }
    if (json_is_array(v)) {
        json_t *items = json_object_get(s, "items");
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
            char sub[256];
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            if (check(items, e, sub, err, cap)) return -1;
        }
    }
    if (json_is_object(v)) {
        json_t *props = json_object_get(s, "properties");
        json_t *req = json_object_get(s, "required");
        json_t *extra = json_object_get(s, "additionalProperties");
        size_t i;
        json_t *r;
        json_array_foreach(req, i, r) {
            if (json_is_string(r) && !json_object_get(v, json_string_value(r))) {
                char sub[256];
                snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", json_string_value(r));
                return fail_at(err, cap, sub, "is required%s%s", "", "");
            }
        }
        const char *k;
        json_t *e;
        json_object_foreach(v, k, e) {
            char sub[256];
            snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", k);
            json_t *ps = json_object_get(props, k);
            if (ps) {
                if (check(ps, e, sub, err, cap)) return -1;
            } else if (json_is_object(extra)) {
                if (check(extra, e, sub, err, cap)) return -1;
            } else if (!json_is_true(extra) && (props || json_is_false(extra))) {
                return fail_at(err, cap, sub, "unknown argument%s%s", "", "");
            }
        }
    }
    return 0;
}

int engine_args_check(const char *schema, json_t *args, char *err, size_t errcap) {
    json_error_t je;
    json_t *s = json_loads(schema, 0, &je);
    if (!s) {
        snprintf(err, errcap, "the operation's schema does not parse: %s", je.text);
        return -1;
    }
    int rc = check(s, args, "", err, errcap);
    json_decref(s);
    return rc;
}

/* ---- the call ---- */

int remem_call(remem *db, const char *name, const char *args, size_t len, char **out) {
    if (!db) return REMEM_EINVAL;
    if (!out) return eng_fail(db, REMEM_EINVAL, "no place for the answer");
    *out = NULL;
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
    if (engine_args_check(op->info.schema, a, err, sizeof err)) {
        json_decref(a);
        return eng_fail(db, REMEM_EINVAL, "%s: %s", name, err);
    }
    json_t *res = NULL;
    int rc = op->fn(db, a, &res);
    json_decref(a);
    if (rc) {
        json_decref(res);
        if (!db->err[0]) eng_fail(db, rc, "%s: %s", name, remem_strerror(rc));
        return rc;
    }
    if (!res) res = json_object();
    *out = json_dumps(res, JSON_COMPACT);
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

const engine_op core_ops[] = {
    {{"memory.get", "read", "One memory by namespace and id, with every field.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"id\"],\"x-positional\":[\"id\"],"
      "\"properties\":{\"ns\":{\"type\":\"string\",\"description\":\"namespace\"},"
      "\"id\":{\"type\":\"string\",\"description\":\"memory id\"}}}"},
     op_get},
};
const size_t core_ops_n = sizeof core_ops / sizeof core_ops[0];
