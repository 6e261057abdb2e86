/*
 * cmd_ops.c: every library operation (remem_ops(): rating, reflection,
 * decisions, lessons, episodes, pruning...) as a command, from its schema
 * alone. "decision.add" is `remem decision add`; each property of the
 * argument schema is a flag (`reward_min` is --reward-min, "ns" is --ns);
 * the schema's types say how a value is read:
 *
 *   string            as given
 *   number, integer   parsed, refused with the flag's name when not one
 *   boolean           --flag alone is true; --flag=false, --no-flag
 *   array of scalars  comma-separated, or the flag repeated
 *   object, other     JSON text, or @FILE for a file holding it
 *
 * "x-positional": [names] takes those properties from bare arguments, in
 * order (the last one may be an array: it takes the rest); "x-file": true
 * reads the argument as a JSON file (a list of files for an array). The
 * library checks the arguments against the same schema for every face, so
 * the CLI only has to build the object; its errors are the library's.
 * With --json the answer is printed as it is; otherwise its "text" when
 * it has one, else the answer indented. The exit status is 0, or 1 when
 * the operation failed or its answer says "ok": false (a check that found
 * problems).
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The operation named by the leading words of argv ("decision add" ->
 * "decision.add"), longest match first; *words receives how many words it
 * took. NULL when none matches. */
const remem_op_info *cli_find_op(int argc, char **argv, int *words) {
    char name[256];
    for (int w = argc < 3 ? argc : 3; w >= 1; w--) {
        size_t len = 0;
        int ok = 1;
        for (int i = 0; i < w && ok; i++) {
            int n = snprintf(name + len, sizeof name - len, "%s%s", i ? "." : "", argv[i]);
            if (n < 0 || (size_t)n >= sizeof name - len) ok = 0;
            len += (size_t)n;
        }
        if (!ok || (argv[w - 1][0] == '-')) continue;
        const remem_op_info *op = remem_op_find(name);
        if (op) {
            *words = w;
            return op;
        }
    }
    return NULL;
}

static void words_of(const char *name, char *out, size_t cap) {
    snprintf(out, cap, "%s", name);
    for (char *p = out; *p; p++)
        if (*p == '.') *p = ' ';
}

static void flag_of(const char *prop, char *out, size_t cap) {
    snprintf(out, cap, "--%s", prop);
    for (char *p = out + 2; *p; p++)
        if (*p == '_') *p = '-';
}

static const char *type_of(json_t *ps) {
    json_t *t = json_object_get(ps, "type");
    if (json_is_string(t)) return json_string_value(t);
    if (json_is_array(t) && json_is_string(json_array_get(t, 0)))
        return json_string_value(json_array_get(t, 0));
    return "string";
}

/* Print the help of one operation from its schema. */
static void op_usage(const remem_op_info *op, json_t *schema) {
    char words[256];
    words_of(op->name, words, sizeof words);
    json_t *pos = json_object_get(schema, "x-positional");
    printf("usage: remem %s [options]", words);
    size_t i;
    json_t *p;
    json_array_foreach(pos, i, p) printf(" %s", json_string_value(p));
    if (!strcmp(op->right, "read+write"))
        printf("\n\n%s\n(needs the \"read\" and \"write\" rights over HTTP and MCP)\n\noptions:\n",
               op->summary);
    else
        printf("\n\n%s\n(needs the \"%s\" right over HTTP and MCP)\n\noptions:\n", op->summary,
               op->right);
    json_t *props = json_object_get(schema, "properties");
    json_t *req = json_object_get(schema, "required");
    const char *k;
    json_t *ps;
    json_object_foreach(props, k, ps) {
        char flag[128];
        flag_of(k, flag, sizeof flag);
        int required = 0;
        json_array_foreach(req, i, p) if (!strcmp(json_string_value(p), k)) required = 1;
        const char *d = json_string_value(json_object_get(ps, "description"));
        printf("  %-22s %s%s%s\n", flag, type_of(ps), required ? ", required" : "", d ? "" : "");
        if (d) printf("  %-22s %s\n", "", d);
    }
    printf("  %-22s %s\n", "--json", "print the whole answer as JSON");
}

static json_t *read_json_file(const char *path, char *err, size_t cap) {
    json_error_t je;
    json_t *v = !strcmp(path, "-") ? json_loadf(stdin, 0, &je) : json_load_file(path, 0, &je);
    if (!v) snprintf(err, cap, "%s: %s (line %d)", path, je.text, je.line);
    return v;
}

/* One value of a flag, read as the property's schema says. */
static json_t *value_of(json_t *ps, const char *flag, const char *s, char *err, size_t cap) {
    const char *t = type_of(ps);
    if (json_is_true(json_object_get(ps, "x-file"))) return read_json_file(s, err, cap);
    if (!strcmp(t, "number") || !strcmp(t, "integer")) {
        char *end;
        errno = 0;
        double x = strtod(s, &end);
        if (!*s || *end || errno || !isfinite(x)) {
            snprintf(err, cap, "%s: \"%s\" is not a number", flag, s);
            return NULL;
        }
        if (!strcmp(t, "integer")) {
            if (x != floor(x) || fabs(x) > 9e15) {
                snprintf(err, cap, "%s: \"%s\" is not an integer", flag, s);
                return NULL;
            }
            return json_integer((json_int_t)x);
        }
        return json_real(x);
    }
    if (!strcmp(t, "boolean")) {
        if (!strcmp(s, "true") || !strcmp(s, "1") || !strcmp(s, "yes")) return json_true();
        if (!strcmp(s, "false") || !strcmp(s, "0") || !strcmp(s, "no")) return json_false();
        snprintf(err, cap, "%s: \"%s\" is not true or false", flag, s);
        return NULL;
    }
    if (!strcmp(t, "string")) return json_string(s);
    /* object, array of objects, anything else: JSON text or @FILE */
    if (s[0] == '@') return read_json_file(s + 1, err, cap);
    json_error_t je;
    json_t *v = json_loads(s, JSON_DECODE_ANY, &je);
    if (!v) snprintf(err, cap, "%s: not JSON: %s", flag, je.text);
    return v;
}

/* Put value v under key k: arrays of scalars append (comma lists split). */
static int put(json_t *args, json_t *ps, const char *k, const char *flag, const char *s, char *err,
               size_t cap) {
    if (!strcmp(type_of(ps), "array")) {
        json_t *items = json_object_get(ps, "items");
        const char *it = items ? type_of(items) : "string";
        json_t *arr = json_object_get(args, k);
        if (!arr) {
            arr = json_array();
            json_object_set_new(args, k, arr);
        }
        if (json_is_true(json_object_get(ps, "x-file"))) {
            json_t *v = read_json_file(s, err, cap);
            if (!v) return -1;
            json_array_append_new(arr, v);
            return 0;
        }
        if (!strcmp(it, "object") || !strcmp(it, "array")) {
            json_t *v = value_of(items, flag, s, err, cap);
            if (!v) return -1;
            if (json_is_array(v) && !strcmp(it, "object"))
                json_array_extend(arr, v), json_decref(v);
            else
                json_array_append_new(arr, v);
            return 0;
        }
        char *copy = strdup(s);
        if (!copy) return snprintf(err, cap, "out of memory"), -1;
        for (char *tok = copy, *next; tok; tok = next) {
            next = strchr(tok, ',');
            if (next) *next++ = '\0';
            if (!*tok) continue;
            json_t *v = value_of(items, flag, tok, err, cap);
            if (!v) return free(copy), -1;
            json_array_append_new(arr, v);
        }
        free(copy);
        return 0;
    }
    json_t *v = value_of(ps, flag, s, err, cap);
    if (!v) return -1;
    json_object_set_new(args, k, v);
    return 0;
}

int cli_run_op(const cli_env *env, const remem_op_info *op, int argc, char **argv) {
    char words[256], err[600];
    words_of(op->name, words, sizeof words);
    json_error_t je;
    json_t *schema = json_loads(op->schema, 0, &je);
    if (!schema) return cli_fail("%s: the operation's schema does not parse", words);
    int help = 0;
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) help = 1;
    if (help) {
        op_usage(op, schema);
        json_decref(schema);
        return 0;
    }
    json_t *props = json_object_get(schema, "properties");
    json_t *pos = json_object_get(schema, "x-positional");
    size_t npos = 0;
    json_t *args = json_object();
    int rc = 0;
    for (int i = 0; i < argc && !rc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] == '-' && a[2]) {
            /* --name, --name=V, --name V, --no-name */
            char key[128];
            const char *eq = strchr(a + 2, '=');
            size_t kl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
            if (kl >= sizeof key) kl = sizeof key - 1;
            memcpy(key, a + 2, kl);
            key[kl] = '\0';
            for (char *p = key; *p; p++)
                if (*p == '-') *p = '_';
            json_t *ps = json_object_get(props, key);
            int negated = 0;
            if (!ps && !strncmp(key, "no_", 3) && !eq) {
                ps = json_object_get(props, key + 3);
                if (ps && !strcmp(type_of(ps), "boolean"))
                    negated = 1, memmove(key, key + 3, strlen(key + 3) + 1);
                else
                    ps = NULL;
            }
            if (!ps) {
                rc = cli_fail("%s: unknown option %.*s (remem %s --help)", words, (int)kl + 2, a,
                              words) +
                     1;
                break;
            }
            char flag[140];
            flag_of(key, flag, sizeof flag);
            if (!strcmp(type_of(ps), "boolean") && !eq) {
                json_object_set_new(args, key, negated ? json_false() : json_true());
                continue;
            }
            const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v) {
                rc = cli_fail("%s: %s needs a value", words, flag) + 1;
                break;
            }
            if (put(args, ps, key, flag, v, err, sizeof err))
                rc = cli_fail("%s: %s", words, err) + 1;
        } else {
            /* a positional argument; the last positional array takes the rest */
            const char *key = NULL;
            if (npos < json_array_size(pos))
                key = json_string_value(json_array_get(pos, npos));
            else if (json_array_size(pos)) {
                const char *last = json_string_value(json_array_get(pos, json_array_size(pos) - 1));
                if (!strcmp(type_of(json_object_get(props, last)), "array")) key = last;
            }
            if (!key) {
                rc = cli_fail("%s: unexpected argument \"%s\" (remem %s --help)", words, a, words) +
                     1;
                break;
            }
            json_t *ps = json_object_get(props, key);
            if (!ps || strcmp(type_of(ps), "array")) npos++;
            if (put(args, ps, key, key, a, err, sizeof err))
                rc = cli_fail("%s: %s", words, err) + 1;
        }
    }
    /* name a missing required argument as the flag the user types */
    if (!rc) {
        size_t i;
        json_t *r;
        json_array_foreach(json_object_get(schema, "required"), i, r) {
            const char *k = json_string_value(r);
            if (!k || json_object_get(args, k)) continue;
            int positional = 0;
            size_t j;
            json_t *p;
            json_array_foreach(pos, j, p) if (!strcmp(json_string_value(p), k)) positional = 1;
            char flag[140];
            flag_of(k, flag, sizeof flag);
            rc = cli_fail("%s: %s is required (remem %s --help)", words, positional ? k : flag,
                          words) +
                 1;
            break;
        }
    }
    json_decref(schema);
    if (rc) {
        json_decref(args);
        return rc;
    }
    char *text = json_dumps(args, JSON_COMPACT);
    json_decref(args);
    if (!text) return cli_fail("out of memory");
    /* Operations that only read may work on a store that must exist. */
    cli_env e = *env;
    if (!strcmp(op->right, "read")) e.existing = 1;
    remem *db = cli_open(&e);
    if (!db) {
        free(text);
        return 1;
    }
    char *out = NULL;
    int st = remem_call(db, op->name, text, strlen(text), &out);
    free(text);
    if (st) {
        rc = cli_fail_db(db, st, NULL);
        remem_close(db);
        return rc;
    }
    remem_close(db);
    json_t *res = json_loads(out, 0, &je);
    const char *human = json_string_value(json_object_get(res, "text"));
    if (env->json || !human) {
        char *pretty = res ? json_dumps(res, env->json ? JSON_COMPACT : JSON_INDENT(2)) : NULL;
        puts(pretty ? pretty : out);
        free(pretty);
    } else {
        fputs(human, stdout);
        if (!*human || human[strlen(human) - 1] != '\n') fputc('\n', stdout);
    }
    /* An answer that reports a problem it found ("ok": false, as `remem
     * check` does) exits 1 after printing it, so scripts and cron see it. */
    int found_problems = json_is_false(json_object_get(res, "ok"));
    json_decref(res);
    remem_free(out);
    return found_problems ? 1 : 0;
}

/* The operations, for `remem --help`; skip(name) says which are hidden
 * behind a command of the same name. */
void cli_list_ops(FILE *f, int (*skip)(const char *name)) {
    size_t n;
    const remem_op_info *ops = remem_ops(&n);
    for (size_t i = 0; i < n; i++) {
        if (skip && skip(ops[i].name)) continue;
        char words[256];
        words_of(ops[i].name, words, sizeof words);
        fprintf(f, "  %-18s %s\n", words, ops[i].summary);
    }
}
