/*
 * cmd_io.c: bulk commands: import (JSONL in), export (JSONL out) and
 * reindex (re-embed with the current embedder).
 *
 * import reads its input twice: a first pass checks every line (so a bad
 * line anywhere changes nothing and names its line number), the second
 * writes the lines in batches, one transaction per batch. Standard input is
 * spooled to a temporary file for that. If the process dies during the
 * second pass, exactly the batches that committed are in the store.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "progress.h"

typedef struct batch {
    remem_memory *m;
    remem_line **holders;
    size_t n;
} batch;

static void batch_reset(batch *b) {
    for (size_t i = 0; i < b->n; i++) remem_free_line(b->holders[i]);
    b->n = 0;
}

/* The store's row count and folded duplicates, to tell what an import did
 * (remem_add_batch reports no outcome per memory). 0, or -1. */
static int store_counts(remem *db, int64_t *rows, int64_t *dups) {
    char *js = NULL;
    if (remem_stats(db, NULL, &js) != REMEM_OK) return -1;
    json_t *o = json_loads(js, 0, NULL);
    remem_free(js);
    *rows = json_integer_value(json_object_get(o, "memories"));
    *dups = json_integer_value(json_object_get(o, "duplicates_folded"));
    int ok = json_is_object(o);
    json_decref(o);
    return ok ? 0 : -1;
}

static int blank(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n') return 0;
    return 1;
}

/* Pass over every line; with write, add them in batches. */
static int pass(remem *db, FILE *f, const char *name, const char *ns, size_t batch_size, int write,
                int64_t *lines_out, progress *pg, int64_t *added) {
    batch b = {calloc(batch_size, sizeof(remem_memory)), calloc(batch_size, sizeof(remem_line *)),
               0};
    if (!b.m || !b.holders) {
        free(b.m);
        free(b.holders);
        return cli_fail("out of memory");
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int64_t lineno = 0, count = 0;
    int rc = 0;
    int dim = remem_embedder_dim(db);
    while ((len = getline(&line, &cap, f)) >= 0) {
        char *text = line;
        lineno++;
        /* A UTF-8 byte-order mark (editors on Windows write one) is not
         * part of the first line's JSON. */
        if (lineno == 1 && len >= 3 && !memcmp(line, "\xEF\xBB\xBF", 3)) text += 3, len -= 3;
        if (blank(text, (size_t)len)) continue;
        remem_memory m;
        remem_line *h = NULL;
        remem_memory_init(&m);
        int prc = remem_parse_line(db, text, (size_t)len, ns, &m, &h);
        if (prc == REMEM_OK && m.vector && m.dim != dim) {
            remem_free_line(h);
            rc = cli_fail("import: %s:%lld: vector has %d dimensions; the %s embedder makes %d "
                          "(nothing was imported)",
                          name, (long long)lineno, m.dim, remem_embedder_name(db), dim);
            break;
        }
        if (prc) {
            rc = cli_fail("import: %s:%lld: %s (nothing was imported)", name, (long long)lineno,
                          remem_errmsg(db));
            break;
        }
        count++;
        if (!write) {
            remem_free_line(h);
            continue;
        }
        b.m[b.n] = m;
        b.holders[b.n++] = h;
        if (b.n == batch_size) {
            long bad = -1;
            int arc = remem_add_batch(db, b.m, b.n, NULL, 0, &bad);
            if (arc) {
                rc = cli_fail("import: %s: batch ending at line %lld: %s", name, (long long)lineno,
                              remem_errmsg(db));
                break;
            }
            *added += (int64_t)b.n;
            batch_reset(&b);
            progress_update(pg, count);
        }
    }
    if (!rc && ferror(f)) rc = cli_fail("import: reading %s: %s", name, strerror(errno));
    if (!rc && write && b.n) {
        long bad = -1;
        if (remem_add_batch(db, b.m, b.n, NULL, 0, &bad))
            rc = cli_fail("import: %s: last batch: %s", name, remem_errmsg(db));
        else
            *added += (int64_t)b.n;
        progress_update(pg, count);
    }
    batch_reset(&b);
    free(b.m);
    free(b.holders);
    free(line);
    *lines_out = count;
    return rc;
}

static int import_file(const cli_env *env, const char *path, const char *ns, size_t batch_size);

/* Take out the first bare argument (FILE, or - for stdin) of import's
 * argv, or the value of --out for export, leaving the operation's own
 * flags (every one of which takes a value, or is a boolean given as
 * --flag=V or alone) for cli_op_args. */
static const char *take_arg(int *argc, char **argv, const char *flag) {
    size_t fl = flag ? strlen(flag) : 0;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        int bare = a[0] != '-' || !strcmp(a, "-");
        if (!flag && bare) {
            memmove(argv + i, argv + i + 1, (size_t)(*argc - i - 1) * sizeof *argv);
            --*argc;
            return a;
        }
        if (flag && !strncmp(a, flag, fl) && (a[fl] == '=' || (!a[fl] && i + 1 < *argc))) {
            int n = a[fl] == '=' ? 1 : 2;
            const char *v = a[fl] == '=' ? a + fl + 1 : argv[i + 1];
            memmove(argv + i, argv + i + n, (size_t)(*argc - i - n) * sizeof *argv);
            *argc -= n;
            return v;
        }
        if (!bare && !strchr(a, '=') && strcmp(a, "--vectors") && strncmp(a, "--no-", 5)) i++;
    }
    return NULL;
}

int cmd_import(const cli_env *env, int argc, char **argv) {
    const remem_op_info *op = remem_op_find("import");
    if (!op) return cli_fail("import: no such operation");
    if (cli_wants_help(argc, argv))
        puts("remem import [--ns NS] [--batch N] FILE.jsonl   (- for stdin)\n\n"
             "One memory per line, as `remem export` writes them: text required; ns required\n"
             "unless --ns gives a default. Every line is checked before anything is written\n"
             "(a bad line imports nothing and names its line number); lines are then written\n"
             "in batches of N (default 1000), one transaction each, with a progress bar.\n");
    const char *path = take_arg(&argc, argv, NULL);
    json_t *args = NULL;
    int bad = cli_op_args(op, argc - 1, argv + 1, &args);
    if (bad) return bad < 0 ? 0 : bad;
    if (!path && (json_object_get(args, "memories") || json_object_get(args, "lines"))) {
        bad = cli_call_op(env, op, args);
        json_decref(args);
        return bad;
    }
    const char *ns = NULL;
    size_t batch_size = 1000;
    if (json_object_get(args, "ns")) ns = json_string_value(json_object_get(args, "ns"));
    if (json_object_get(args, "batch"))
        batch_size = (size_t)json_integer_value(json_object_get(args, "batch"));
    int rc = path ? import_file(env, path, ns, batch_size)
                  : cli_fail("import: a FILE is required (- for stdin)");
    json_decref(args);
    return rc;
}

/* Import the JSONL file at path (- for stdin) in two passes. */
static int import_file(const cli_env *env, const char *path, const char *ns, size_t batch_size) {
    FILE *f;
    const char *name = path;
    if (!strcmp(path, "-")) {
        /* Spool stdin so it can be read twice. */
        f = tmpfile();
        if (!f) return cli_fail("import: cannot create a temporary file: %s", strerror(errno));
        char buf[65536];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
            if (fwrite(buf, 1, n, f) != n) {
                fclose(f);
                return cli_fail("import: spooling stdin: %s", strerror(errno));
            }
        rewind(f);
        name = "stdin";
    } else if (!(f = fopen(path, "r"))) {
        return cli_fail("import: cannot open %s: %s", path, strerror(errno));
    }
    remem *db = cli_open(env);
    if (!db) {
        fclose(f);
        return 1;
    }
    int64_t lines = 0, added = 0;
    progress pg;
    progress_start(&pg, "checking", 0, env->quiet);
    int rc = pass(db, f, name, ns, batch_size, 0, &lines, &pg, &added);
    progress_done(&pg);
    int64_t rows0 = 0, dups0 = 0, rows1 = 0, dups1 = 0;
    int counted = !rc && store_counts(db, &rows0, &dups0) == 0;
    if (!rc) {
        rewind(f);
        progress_start(&pg, "importing", lines, env->quiet);
        rc = pass(db, f, name, ns, batch_size, 1, &lines, &pg, &added);
        progress_done(&pg);
    }
    if (!rc && remem_memory_off(db, ns)) {
        /* Memory off: every line was checked, and dropped. */
        if (env->json)
            printf("{\"imported\":0,\"dropped\":%lld,\"memory\":\"off\"}\n", (long long)added);
        else if (!env->quiet)
            printf("memory is off: %lld memories read and dropped, nothing was written\n",
                   (long long)added);
    } else if (!rc) {
        /* Lines that matched an existing text were folded into it, lines
         * naming an existing id replaced it: say so rather than "imported
         * N" for rows that are not new. */
        counted = counted && store_counts(db, &rows1, &dups1) == 0;
        long long n_added = counted ? rows1 - rows0 : added;
        long long n_dups = counted ? dups1 - dups0 : 0;
        long long n_replaced = (long long)added - n_added - n_dups;
        if (n_replaced < 0) n_replaced = 0;
        if (env->json)
            printf("{\"imported\":%lld,\"added\":%lld,\"replaced\":%lld,\"duplicates\":%lld}\n",
                   (long long)added, n_added, n_replaced, n_dups);
        else if (!env->quiet)
            printf("imported %lld memories: %lld added, %lld replaced, %lld duplicates\n",
                   (long long)added, n_added, n_replaced, n_dups);
    } else if (added > 0) {
        fprintf(stderr,
                "remem: import: %lld memories from the batches before the error were "
                "kept\n",
                (long long)added);
    }
    fclose(f);
    remem_close(db);
    return rc;
}

static int write_file(void *ctx, const char *data, size_t len) {
    return fwrite(data, 1, len, (FILE *)ctx) != len;
}

int cmd_export(const cli_env *env, int argc, char **argv) {
    const remem_op_info *op = remem_op_find("export");
    if (!op) return cli_fail("export: no such operation");
    if (cli_wants_help(argc, argv))
        puts("remem export [--ns NS] [--vectors] [--out FILE]\n\n"
             "Writes memories as JSONL, streamed (one object per line; `remem import` reads\n"
             "it back). --out writes to FILE instead of standard output.\n");
    const char *out = take_arg(&argc, argv, "--out");
    json_t *args = NULL;
    int bad = cli_op_args(op, argc - 1, argv + 1, &args);
    if (bad) return bad < 0 ? 0 : bad;
    char ns_buf[1024] = "";
    const char *ns = NULL;
    if (json_object_get(args, "ns"))
        ns = ns_buf,
        snprintf(ns_buf, sizeof ns_buf, "%s", json_string_value(json_object_get(args, "ns")));
    int vectors = json_is_true(json_object_get(args, "vectors"));
    json_decref(args);
    FILE *f = stdout;
    if (out && !(f = fopen(out, "w")))
        return cli_fail("export: cannot write %s: %s", out, strerror(errno));
    remem *db = cli_open(env);
    int rc = 1;
    if (db) {
        int64_t n = 0;
        rc = remem_export(db, ns, vectors, write_file, f, &n);
        if (rc)
            rc = cli_fail_db(db, rc, "export");
        else if (out && !env->quiet)
            fprintf(stderr, "remem: exported %lld memories to %s\n", (long long)n, out);
    }
    if (f != stdout && fclose(f) != 0 && !rc)
        rc = cli_fail("export: writing %s: %s", out, strerror(errno));
    remem_close(db);
    return rc;
}

static void on_progress(void *ctx, int64_t done, int64_t total) {
    progress *p = ctx;
    p->total = total;
    progress_update(p, done);
}

int cmd_reindex(const cli_env *env, int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        puts("usage: remem [--embedder E] reindex [--ns NS] [--pending]\n\n"
             "Re-embeds every memory of NS (default: every namespace) with the chosen\n"
             "embedder, one transaction per namespace: the way to move a namespace to\n"
             "another model.\n\n"
             "--pending embeds only the memories stored without a vector while the\n"
             "embedder was down (the retry queue; the same as `remem pending embed`),\n"
             "each once.");
        return 0;
    }
    /* --pending: the retry queue of writes made during an embedder outage. */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--pending") != 0) continue;
        const remem_op_info *op = remem_op_find("pending.embed");
        char **rest = calloc((size_t)argc, sizeof *rest);
        if (!op || !rest) return free(rest), cli_fail("out of memory");
        int n = 0;
        for (int j = 1; j < argc; j++)
            if (j != i) rest[n++] = argv[j];
        int rc = cli_run_op(env, op, n, rest);
        free(rest);
        return rc;
    }
    const char *ns = NULL;
    int bad = cli_only_ns("reindex", argc, argv, &ns);
    if (bad) return bad;
    remem *db = cli_open(env);
    if (!db) return 1;
    progress pg;
    progress_start(&pg, "embedding", 0, env->quiet);
    int rc = remem_reindex(db, ns, on_progress, &pg);
    progress_done(&pg);
    if (rc)
        rc = cli_fail_db(db, rc, "reindex");
    else if (!env->quiet)
        printf("reindexed with %s\n", remem_embedder_model(db));
    remem_close(db);
    return rc;
}
