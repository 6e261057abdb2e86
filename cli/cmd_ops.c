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
/* The short names of the core verbs, as users know them from before
 * they were operations: `remem add` is `remem memory add`. */
static const struct {
    const char *word, *op;
} aliases[] = {
    {"add", "memory.add"},       {"get", "memory.get"},
    {"update", "memory.update"}, {"invalidate", "memory.invalidate"},
    {"forget", "memory.forget"}, {"history", "memory.history"},
    {"list", "memory.list"},     {"delete", "memory.delete"},
};

const char *cli_alias_of(const char *op) {
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(aliases[i].op, op)) return aliases[i].word;
    return NULL;
}

const remem_op_info *cli_find_op(int argc, char **argv, int *words) {
    char name[256];
    for (size_t i = 0; argc > 0 && i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(argv[0], aliases[i].word)) {
            *words = 1;
            return remem_op_find(aliases[i].op);
        }
    for (int w = argc < 3 ? argc : 3; w >= 1; w--) {
        size_t len = 0;
        int ok = 1;
        for (int i = 0; i < w && ok; i++) {
            int n = snprintf(name + len, sizeof name - len, "%s%s", i ? "." : "", argv[i]);
            if (n < 0 || (size_t)n >= sizeof name - len) ok = 0;
            len += (size_t)n;
        }
        if (!ok || (argv[w - 1][0] == '-')) continue;
        for (char *p = name; *p; p++)
            if (*p == '-') *p = '_'; /* `memory add-batch` is memory.add_batch */
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

/* Does the property's "type" allow t (a list may name several)? */
static int has_type(json_t *ps, const char *t) {
    json_t *ty = json_object_get(ps, "type");
    if (json_is_string(ty)) return !strcmp(json_string_value(ty), t);
    size_t i;
    json_t *v;
    json_array_foreach(ty, i, v) if (!strcmp(json_string_value(v), t)) return 1;
    return 0;
}

/* The property a flag names: its own name, or one of its "x-aliases"
 * (--meta for metadata, --by for superseded_by). *key gets the property's
 * name. */
static json_t *prop_of(json_t *props, char *key, size_t cap) {
    json_t *ps = json_object_get(props, key);
    if (ps) return ps;
    const char *k;
    json_object_foreach(props, k, ps) {
        size_t i;
        json_t *a;
        json_array_foreach(json_object_get(ps, "x-aliases"), i,
                           a) if (!strcmp(json_string_value(a), key)) {
            snprintf(key, cap, "%s", k);
            return ps;
        }
    }
    return NULL;
}

/* Print the help of one operation from its schema. */
static void op_usage(const remem_op_info *op, json_t *schema) {
    char words[256];
    words_of(op->name, words, sizeof words);
    json_t *pos = json_object_get(schema, "x-positional");
    const char *alias = cli_alias_of(op->name);
    printf("usage: remem %s [options]", alias ? alias : words);
    size_t i;
    json_t *p;
    json_array_foreach(pos, i, p) printf(" %s", json_string_value(p));
    if (alias) printf("\n       (also remem %s)", words);
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
        printf("  %-22s %s%s\n", flag, type_of(ps), required ? ", required" : "");
        if (d) printf("  %-22s %s\n", "", d);
    }
    printf("  %-22s %s\n", "--args JSON", "the arguments as one JSON object (flags override)");
    printf("  %-22s %s\n", "--NAME-file FILE", "a string argument read from FILE (- for stdin)");
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
    json_t *had = json_object_get(args, k);
    if (strcmp(type_of(ps), "array") && has_type(ps, "array") && json_is_string(had)) {
        /* "ns" of recall: one name, or the flag repeated for a list */
        json_t *arr = json_pack("[O,s]", had, s);
        json_object_set_new(args, k, arr);
        return 0;
    }
    if (json_is_array(had) && strcmp(type_of(ps), "array") && has_type(ps, "array"))
        return json_array_append_new(had, json_string(s)), 0;
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
        if (s[0] == '[') { /* the list as JSON: --links '["a","b"]' */
            json_error_t je;
            json_t *v = json_loads(s, 0, &je);
            if (!v) return snprintf(err, cap, "%s: not JSON: %s", flag, je.text), -1;
            json_array_extend(arr, v);
            json_decref(v);
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

/* The whole of FILE (- for stdin) as a JSON string: a query or a text may
 * be megabytes, more than one argument carries. NULL with err set. */
static json_t *string_of_file(const char *flag, const char *path, char *err, size_t cap) {
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) return snprintf(err, cap, "%s %s: cannot open it", flag, path), NULL;
    size_t len = 0, size = 1 << 16;
    char *buf = malloc(size);
    size_t got;
    while (buf && (got = fread(buf + len, 1, size - len, f)) > 0) {
        len += got;
        if (len == size && size <= (size_t)REMEM_QUERY_TEXT_MAX) {
            char *more = realloc(buf, size * 2);
            if (!more) free(buf);
            buf = more;
            size *= 2;
        } else if (len == size) {
            break; /* over any limit: the library names it */
        }
    }
    int bad = !buf || ferror(f);
    if (f != stdin) fclose(f);
    json_t *v = bad ? NULL : json_stringn(buf, len);
    free(buf);
    if (!v)
        snprintf(err, cap, bad ? "%s %s: cannot read it" : "%s %s: not valid UTF-8 text", flag,
                 path);
    return v;
}

/* One "--name[=V]" flag into args. Returns 0, or an exit code (after
 * printing). *i advances past a separate value. */
static int one_flag(const char *words, json_t *schema, json_t *args, int argc, char **argv,
                    int *i) {
    const char *a = argv[*i];
    json_t *props = json_object_get(schema, "properties");
    char key[128], flag[140], err[600];
    const char *eq = strchr(a + 2, '=');
    size_t kl = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    if (kl >= sizeof key) kl = sizeof key - 1;
    memcpy(key, a + 2, kl);
    key[kl] = '\0';
    for (char *p = key; *p; p++)
        if (*p == '-') *p = '_';
    int is_args = !strcmp(key, "args") || (!strcmp(key, "query_json") && !strcmp(words, "recall"));
    int is_file = 0, negated = 0;
    json_t *ps = is_args ? NULL : prop_of(props, key, sizeof key);
    if (!ps && !is_args && kl > 5 && !strcmp(key + strlen(key) - 5, "_file")) {
        key[strlen(key) - 5] = '\0'; /* --query-file: a string read from a file */
        ps = prop_of(props, key, sizeof key);
        is_file = ps && has_type(ps, "string");
        if (!is_file) ps = NULL;
    }
    if (!ps && !is_args && !strncmp(key, "no_", 3) && !eq) {
        memmove(key, key + 3, strlen(key + 3) + 1);
        ps = prop_of(props, key, sizeof key);
        if (ps && !strcmp(type_of(ps), "boolean"))
            negated = 1;
        else
            ps = NULL;
    }
    if (!ps && !is_args)
        return cli_fail("%s: unknown option %.*s (remem %s --help)", words, (int)kl + 2, a, words) +
               1;
    flag_of(is_args ? "args" : key, flag, sizeof flag);
    if (ps && !strcmp(type_of(ps), "boolean") && !eq) {
        /* --flag alone, or followed by its value: --normalize 0 */
        static const char *const words_[] = {"true", "1", "yes", "false", "0", "no"};
        const char *next = *i + 1 < argc ? argv[*i + 1] : "";
        int truth = -1;
        for (int w = 0; w < 6 && !negated; w++)
            if (!strcmp(next, words_[w])) truth = w < 3;
        if (truth >= 0) ++*i;
        json_object_set_new(args, key,
                            (negated      ? 0
                             : truth >= 0 ? truth
                                          : 1)
                                ? json_true()
                                : json_false());
        return 0;
    }
    const char *v = eq ? eq + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
    if (!v) return cli_fail("%s: %s needs a value", words, flag) + 1;
    if (is_args) {
        json_error_t je;
        json_t *o = json_loads(v, JSON_REJECT_DUPLICATES, &je);
        if (!json_is_object(o)) {
            json_decref(o);
            return cli_fail("%s: %s: not a JSON object%s%s", words, a, o ? "" : ": ",
                            o ? "" : je.text) +
                   1;
        }
        /* flags given before or after it override its fields */
        json_object_update_missing(args, o);
        json_decref(o);
        return 0;
    }
    if (is_file) {
        json_t *t = string_of_file(a, v, err, sizeof err);
        if (!t) return cli_fail("%s: %s", words, err) + 1;
        json_object_set_new(args, key, t);
        return 0;
    }
    return put(args, ps, key, flag, v, err, sizeof err) ? cli_fail("%s: %s", words, err) + 1 : 0;
}

/* A bare argument: the next "x-positional" property (the last, when an
 * array, takes the rest). */
static int one_positional(const char *words, json_t *schema, json_t *args, const char *a,
                          size_t *npos) {
    json_t *props = json_object_get(schema, "properties");
    json_t *pos = json_object_get(schema, "x-positional");
    const char *key = NULL;
    char err[600];
    if (*npos < json_array_size(pos))
        key = json_string_value(json_array_get(pos, *npos));
    else if (json_array_size(pos)) {
        const char *last = json_string_value(json_array_get(pos, json_array_size(pos) - 1));
        if (!strcmp(type_of(json_object_get(props, last)), "array")) key = last;
    }
    json_t *kps = key ? json_object_get(props, key) : NULL;
    if (!key || (json_object_get(args, key) && strcmp(type_of(kps), "array")))
        return cli_fail("%s: unexpected argument \"%s\" (remem %s --help)", words, a, words) + 1;
    json_t *ps = json_object_get(props, key);
    if (!ps || strcmp(type_of(ps), "array")) ++*npos;
    return put(args, ps, key, key, a, err, sizeof err) ? cli_fail("%s: %s", words, err) + 1 : 0;
}

int cli_op_args(const remem_op_info *op, int argc, char **argv, json_t **out) {
    char words[256];
    words_of(op->name, words, sizeof words);
    const char *alias = cli_alias_of(op->name);
    if (alias) snprintf(words, sizeof words, "%s", alias);
    *out = NULL;
    json_t *schema = json_loads(op->schema, 0, NULL);
    if (!schema) return cli_fail("%s: the operation's schema does not parse", words);
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            op_usage(op, schema);
            json_decref(schema);
            return -1;
        }
    json_t *args = json_object();
    size_t npos = 0;
    int rc = 0;
    for (int i = 0; i < argc && !rc; i++) {
        if (argv[i][0] == '-' && argv[i][1] == '-' && argv[i][2])
            rc = one_flag(words, schema, args, argc, argv, &i);
        else
            rc = one_positional(words, schema, args, argv[i], &npos);
    }
    /* name a missing required argument as the flag the user types */
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(schema, "required"), i, r) {
        const char *k = json_string_value(r);
        if (rc || !k || json_object_get(args, k)) continue;
        int positional = 0;
        size_t j;
        json_t *p;
        json_array_foreach(json_object_get(schema, "x-positional"), j,
                           p) if (!strcmp(json_string_value(p), k)) positional = 1;
        char flag[140];
        flag_of(k, flag, sizeof flag);
        rc = cli_fail("%s: %s is required (remem %s --help)", words, positional ? k : flag, words) +
             1;
    }
    json_decref(schema);
    if (rc) {
        json_decref(args);
        return rc;
    }
    *out = args;
    return 0;
}

/* Which operations need a store that is already there (a mistyped --db is
 * then an error, not a new empty store): those that read, change a memory
 * named by its id, or delete. Not the experience operations: their first
 * use of a namespace hydrates it from the configuration's files (seed 000
 * hydrates a fresh deployment), so a first `fewshot` on a new store
 * answers from the pre-seeded decisions. */
static int needs_store(const remem_op_info *op) {
    if (op->group && !strcmp(op->group, "experience")) return 0;
    return !strcmp(op->right, "read") || strstr(op->schema, "\"x-positional\":[\"id\"]") ||
           !strcmp(op->name, "clear") || !strcmp(op->name, "memory.delete");
}

int cli_call_op(const cli_env *env, const remem_op_info *op, json_t *args) {
    char *text = json_dumps(args, JSON_COMPACT);
    if (!text) return cli_fail("out of memory");
    cli_env e = *env;
    if (needs_store(op)) e.existing = 1;
    if (!strcmp(op->name, "stats")) e.note = 1;
    remem *db = cli_open(&e);
    if (!db) {
        free(text);
        return 1;
    }
    char *out = NULL;
    int st = remem_call(db, op->name, text, strlen(text), &out);
    free(text);
    if (st) {
        int rc = cli_fail_db(db, st, NULL);
        remem_close(db);
        return rc;
    }
    remem_close(db);
    json_t *res = json_loads(out, 0, NULL);
    const char *human = json_string_value(json_object_get(res, "text"));
    if (!env->json && res && cli_present(op->name, res)) {
        /* printed for a person */
    } else if (env->json) {
        puts(out); /* the library's text as it is: the bytes HTTP and MCP give */
    } else if (!human) {
        char *pretty = res ? json_dumps(res, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) : NULL;
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

int cli_run_op(const cli_env *env, const remem_op_info *op, int argc, char **argv) {
    json_t *args = NULL;
    int rc = cli_op_args(op, argc, argv, &args);
    if (rc) return rc < 0 ? 0 : rc;
    rc = cli_call_op(env, op, args);
    json_decref(args);
    return rc;
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

/* ---- command groups ---- */

/* Edit distance of a and b (short words: a row of 64 suffices). */
static size_t distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b), row[65];
    if (la > 64 || lb > 64) return 64;
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

/* The operations of group g ("lesson" for lesson.add, lesson.list...). */
static int in_group(const char *name, const char *g) {
    size_t n = strlen(g);
    return !strncmp(name, g, n) && name[n] == '.';
}

int cli_group(int argc, char **argv) {
    size_t n;
    const remem_op_info *ops = remem_ops(&n);
    int members = 0;
    for (size_t i = 0; i < n; i++) members += in_group(ops[i].name, argv[0]);
    if (!members) return -1;
    int help = argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");
    if (!help) {
        char sub[256];
        snprintf(sub, sizeof sub, "%s", argv[1]);
        for (char *p = sub; *p; p++)
            if (*p == '-') *p = '_';
        const char *best = NULL;
        size_t bd = (size_t)-1;
        for (size_t i = 0; i < n; i++) {
            if (!in_group(ops[i].name, argv[0])) continue;
            const char *s = ops[i].name + strlen(argv[0]) + 1;
            size_t d = distance(sub, s);
            if (d < bd) bd = d, best = s;
        }
        char words[256];
        words_of(best ? best : "", words, sizeof words);
        cli_fail("%s: unknown subcommand \"%s\"; did you mean `remem %s %s`? (remem %s --help)",
                 argv[0], argv[1], argv[0], words, argv[0]);
        return 2;
    }
    printf("usage: remem %s <subcommand> [options]   (remem %s <subcommand> --help)\n\n"
           "subcommands:\n",
           argv[0], argv[0]);
    for (size_t i = 0; i < n; i++) {
        if (!in_group(ops[i].name, argv[0])) continue;
        char words[256];
        words_of(ops[i].name + strlen(argv[0]) + 1, words, sizeof words);
        const char *dot = strchr(ops[i].summary, '.');
        int len = dot ? (int)(dot - ops[i].summary) : (int)strlen(ops[i].summary);
        printf("  %-18s %.*s\n", words, len > 90 ? 90 : len, ops[i].summary);
    }
    return argc < 2 ? 2 : 0;
}

/* The core verbs by their short names, for `remem --help`'s commands. */
void cli_list_verbs(FILE *f) {
    static const char *const verbs[] = {"add",    "recall",     "get",        "list",
                                        "update", "invalidate", "forget",     "history",
                                        "delete", "stats",      "namespaces", "clear"};
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        int words = 0;
        char *argv[1] = {(char *)verbs[i]};
        const remem_op_info *op = cli_find_op(1, argv, &words);
        if (!op) continue;
        const char *dot = strchr(op->summary, '.');
        int len = dot ? (int)(dot - op->summary) : (int)strlen(op->summary);
        fprintf(f, "  %-11s %.*s\n", verbs[i], len > 64 ? 64 : len, op->summary);
    }
}
