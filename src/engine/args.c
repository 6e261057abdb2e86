/*
 * args.c: the one argument checker behind remem_call (ops.c) and the small
 * readers operations use on arguments it has checked. It implements the
 * part of JSON Schema the operations' schemas use, and refuses unknown keys
 * unless a schema says otherwise: a typo in an argument ("--reward" spelt
 * "rewad") must be an error, not a silently ignored default. It also
 * knows the arguments a schema marks "x-local" (paths on this machine),
 * which remote callers may not give; and eng_answer_text, how an
 * operation hands over an answer it wrote as text. A file of its own so
 * that the operations (which call these) and ops.c (which lists the
 * operations) never call each other in a circle.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ops.h"

int eng_answer_text(remem *db, char *text) {
    if (!text) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    free(db->answer_text);
    db->answer_text = text;
    return REMEM_OK;
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
static int types_ok(json_t *type, json_t *v) {
    if (!type) return 1;
    if (json_is_string(type)) return type_ok(json_string_value(type), v);
    size_t i;
    json_t *t;
    json_array_foreach(type, i, t) {
        if (json_is_string(t) && type_ok(json_string_value(t), v)) return 1;
    }
    return 0;
}

/* What "type" asks for, in words ("string or array"), for the error of a
 * value that does not fit (written only then: every value is checked). */
static void types_want(json_t *type, char *want, size_t cap) {
    want[0] = '\0';
    if (json_is_string(type)) {
        snprintf(want, cap, "%s", json_string_value(type));
        return;
    }
    size_t i;
    json_t *t;
    json_array_foreach(type, i, t) {
        if (!json_is_string(t)) continue;
        size_t l = strlen(want);
        snprintf(want + l, cap - l, "%s%s", l ? " or " : "", json_string_value(t));
    }
}

/* Where in the arguments a value sits: a chain of keys and indexes up to
 * the root, written out as "messages[3].content" only when a check fails
 * (rendering it for every value cost more than the checks themselves on a
 * call of a thousand messages). */
typedef struct at {
    const struct at *up;
    const char *key; /* NULL: an array index */
    size_t idx;
} at;

static size_t path_put(const at *p, char *buf, size_t cap) {
    if (!p) return 0;
    size_t l = path_put(p->up, buf, cap);
    if (l >= cap) return l;
    int w = p->key ? snprintf(buf + l, cap - l, "%s%s", l ? "." : "", p->key)
                   : snprintf(buf + l, cap - l, "[%zu]", p->idx);
    return l + (w > 0 ? (size_t)w : 0);
}

static int fail_at(char *err, size_t cap, const at *path, const char *fmt, const char *a,
                   const char *b) {
    char msg[512], where[256] = "";
    snprintf(msg, sizeof msg, fmt, a, b);
    path_put(path, where, sizeof where);
    if (where[0])
        snprintf(err, cap, "%s: %s", where, msg);
    else
        snprintf(err, cap, "%s", msg);
    return -1;
}

static int check(json_t *s, json_t *v, const at *path, char *err, size_t cap) {
    if (!json_is_object(s)) return 0;
    json_t *type = json_object_get(s, "type");
    if (!types_ok(type, v)) {
        char want[128];
        types_want(type, want, sizeof want);
        return fail_at(err, cap, path, "expected %s, got %s",
                       !strcmp(want, "integer") || !strcmp(want, "object") || !strcmp(want, "array")
                           ? (!strcmp(want, "integer")  ? "an integer"
                              : !strcmp(want, "object") ? "an object"
                                                        : "an array")
                           : want,
                       json_kind(v));
    }
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
        if (json_is_number(mn) && x < json_number_value(mn)) {
            snprintf(a, sizeof a, "%g", x);
            snprintf(b, sizeof b, "%g", json_number_value(mn));
            return fail_at(err, cap, path, "%s is below the minimum %s", a, b);
        }
        if (json_is_number(mx) && x > json_number_value(mx)) {
            snprintf(a, sizeof a, "%g", x);
            snprintf(b, sizeof b, "%g", json_number_value(mx));
            return fail_at(err, cap, path, "%s is above the maximum %s", a, b);
        }
    }
    if (json_is_string(v)) {
        size_t len = json_string_length(v);
        json_t *mn = json_object_get(s, "minLength"), *mx = json_object_get(s, "maxLength");
        char a[32];
        if (json_is_integer(mn) && len < (size_t)json_integer_value(mn)) {
            /* Counted in bytes, as maxLength is: said so, and an empty
             * string in the words the faces use for a namespace item. */
            if (json_integer_value(mn) == 1)
                return fail_at(err, cap, path, "must be a non-empty string%s", "", "");
            snprintf(a, sizeof a, "%lld", (long long)json_integer_value(mn));
            return fail_at(err, cap, path, "must be at least %s bytes long%s", a, "");
        }
        if (json_is_integer(mx) && len > (size_t)json_integer_value(mx)) {
            snprintf(a, sizeof a, "%lld", (long long)json_integer_value(mx));
            return fail_at(err, cap, path, "must be at most %s bytes long%s", a, "");
        }
    }
    if (json_is_array(v)) {
        json_t *mn = json_object_get(s, "minItems"), *mx = json_object_get(s, "maxItems");
        char a[32];
        if (json_is_integer(mn) && json_array_size(v) < (size_t)json_integer_value(mn)) {
            snprintf(a, sizeof a, "%lld", (long long)json_integer_value(mn));
            return fail_at(err, cap, path, "must hold at least %s item%s", a,
                           json_integer_value(mn) == 1 ? "" : "s");
        }
        if (json_is_integer(mx) && json_array_size(v) > (size_t)json_integer_value(mx)) {
            snprintf(a, sizeof a, "%lld", (long long)json_integer_value(mx));
            return fail_at(err, cap, path, "must hold at most %s items%s", a, "");
        }
        json_t *items = json_object_get(s, "items");
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
            at sub = {path, NULL, i};
            if (check(items, e, &sub, err, cap)) return -1;
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
                at sub = {path, json_string_value(r), 0};
                return fail_at(err, cap, &sub, "is required%s%s", "", "");
            }
        }
        const char *k;
        json_t *e;
        json_object_foreach(v, k, e) {
            at sub = {path, k, 0};
            json_t *ps = json_object_get(props, k);
            if (ps) {
                if (check(ps, e, &sub, err, cap)) return -1;
            } else if (json_is_object(extra)) {
                if (check(extra, e, &sub, err, cap)) return -1;
            } else if (!json_is_true(extra) && (props || json_is_false(extra))) {
                return fail_at(err, cap, &sub, "unknown argument%s%s", "", "");
            }
        }
    }
    return 0;
}

/* A top-level argument given under one of its property's "x-aliases"
 * (seed 000's overall_effectiveness for rating, say) is renamed to the
 * property, on every face alike; both names at once is an error. */
static int fold_aliases(json_t *s, json_t *args, char *err, size_t cap) {
    const char *k;
    json_t *ps;
    json_object_foreach(json_object_get(s, "properties"), k, ps) {
        size_t i;
        json_t *a;
        json_array_foreach(json_object_get(ps, "x-aliases"), i, a) {
            const char *alias = json_string_value(a);
            json_t *v = alias ? json_object_get(args, alias) : NULL;
            if (!v) continue;
            if (json_object_get(args, k)) {
                at where = {NULL, alias, 0};
                return fail_at(err, cap, &where, "names the same argument as %s%s", k, "");
            }
            json_object_set(args, k, v);
            json_object_del(args, alias);
        }
    }
    return 0;
}

/* The operations' schemas, parsed once per process: every call checks its
 * arguments against one, and parsing a schema of a few KB on each call
 * cost more than the check. The parsed trees are only ever read (jansson's
 * reference counts are atomic), kept for the process's life; a schema text
 * is found by its address and confirmed by its content, so a text freed
 * and another put at the same address is parsed anew. Past SCHEMAS_MAX
 * distinct texts each is parsed per call, as before. */
#define SCHEMAS_MAX 256
static struct {
    const char *key;
    char *text;
    json_t *tree;
} schemas[SCHEMAS_MAX];
static size_t n_schemas;
static pthread_mutex_t schemas_mu = PTHREAD_MUTEX_INITIALIZER;

/* A new reference to schema's parsed tree, or NULL with *je set. */
static json_t *schema_tree(const char *schema, json_error_t *je) {
    json_t *t = NULL;
    pthread_mutex_lock(&schemas_mu);
    for (size_t i = 0; i < n_schemas && !t; i++)
        if (schemas[i].key == schema && !strcmp(schemas[i].text, schema))
            t = json_incref(schemas[i].tree);
    pthread_mutex_unlock(&schemas_mu);
    if (t) return t;
    if (!(t = json_loads(schema, 0, je))) return NULL;
    char *copy = strdup(schema);
    pthread_mutex_lock(&schemas_mu);
    if (copy && n_schemas < SCHEMAS_MAX) {
        schemas[n_schemas].key = schema;
        schemas[n_schemas].text = copy;
        schemas[n_schemas++].tree = json_incref(t);
        copy = NULL;
    }
    pthread_mutex_unlock(&schemas_mu);
    free(copy);
    return t;
}

int engine_args_check(const char *schema, json_t *args, char *err, size_t errcap) {
    json_error_t je;
    json_t *s = schema_tree(schema, &je);
    if (!s) {
        snprintf(err, errcap, "the operation's schema does not parse: %s", je.text);
        return -1;
    }
    int rc = json_is_object(args) ? fold_aliases(s, args, err, errcap) : 0;
    if (!rc) rc = check(s, args, NULL, err, errcap);
    json_decref(s);
    return rc;
}

int engine_args_local(const char *schema, json_t *args, char *err, size_t errcap) {
    json_error_t je;
    json_t *s = schema_tree(schema, &je);
    json_t *props = json_object_get(s, "properties");
    const char *k;
    json_t *p;
    int rc = 0;
    json_object_foreach(props, k, p) {
        if (!json_is_true(json_object_get(p, "x-local")) || !json_object_get(args, k)) continue;
        snprintf(err, errcap,
                 "%s: names a file or folder of the server's machine, so it is accepted only "
                 "from the command line or the library of the process that owns the store; "
                 "over HTTP and MCP it comes from that process's configuration",
                 k);
        rc = -1;
        break;
    }
    json_decref(s);
    return rc;
}
