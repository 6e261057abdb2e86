/*
 * common.c: what every command shares: one-line errors on stderr (the
 * library never prints), option reading, and opening the store named by
 * --db. main.c dispatches to the cmd_* files and they call down into
 * these, so no two files of the command call each other in a circle.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cli_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("remem: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

int cli_fail_db(remem *db, int rc, const char *context) {
    const char *msg = remem_errmsg(db);
    if (!msg || !*msg) msg = remem_strerror(rc);
    if (context && *context) return cli_fail("%s: %s", context, msg);
    return cli_fail("%s", msg);
}

int cli_wants_help(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
    return 0;
}

const char *cli_opt(int argc, char **argv, int *i, const char *name) {
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0) return NULL;
    if (a[n] == '=') return a + n + 1;
    if (a[n] != '\0') return NULL;
    if (*i + 1 >= argc) return NULL;
    (*i)++;
    return argv[*i];
}

int cli_only_ns(const char *cmd, int argc, char **argv, const char **ns) {
    for (int i = 1; i < argc; i++) {
        const char *v = cli_opt(argc, argv, &i, "--ns");
        if (!v) {
            cli_fail("%s: unexpected argument \"%s\" (remem %s --help)", cmd, argv[i], cmd);
            return 2;
        }
        *ns = v;
    }
    return 0;
}

/* Is the store a file on disk (rather than ":memory:" or a URI)? */
static int is_file_store(const char *path) {
    return strcmp(path, ":memory:") != 0 && !strstr(path, "://") && strncmp(path, "file:", 5) != 0;
}

remem *cli_open(const cli_env *env) {
    remem *db = NULL;
    int created = 0;
    if (is_file_store(env->db_path) && access(env->db_path, F_OK) != 0) {
        if (env->existing)
            return cli_fail("no store at %s (--db or $REMEM_DB): check the path; "
                            "remem add or remem import creates one",
                            env->db_path),
                   NULL;
        created = 1;
    }
    int rc = remem_open(env->db_path, &env->opt, &db);
    if (rc) {
        cli_fail("%s", db ? remem_errmsg(db) : remem_strerror(rc));
        remem_close(db);
        return NULL;
    }
    const char *note = remem_embedder_note(db);
    /* Why "auto" chose the hash embedder: one line on stderr when the store
     * is created and in stats, not on every command (a failure prints one
     * line). --quiet, or naming the embedder, silences it. */
    if ((created || env->note) && note && *note && !env->quiet &&
        getenv("REMEM_QUIET_NOTES") == NULL)
        fprintf(stderr, "remem: note: %s\n", note);
    return db;
}
