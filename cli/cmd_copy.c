/*
 * cmd_copy.c: `remem copy SRC DST`, moving a whole store to another
 * (SQLite to PostgreSQL and back) through remem_copy, which copies,
 * verifies and skips what a previous run already copied. SRC and DST are
 * positional because they are the command's two subjects; --db is not
 * used.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

int cmd_copy(const cli_env *env, int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        puts("usage: remem copy SRC DST\n\n"
             "Copies every namespace of the store SRC into the store DST (a file path or\n"
             "postgres://user@host:port/db): memories with their vectors and models, and\n"
             "history. One transaction per namespace; a namespace DST already holds with\n"
             "the same content is skipped, so an interrupted copy resumes when run again.\n"
             "Each namespace is verified by counts and checksums read back from DST.\n"
             "Copy a store nobody is writing to.");
        return 0;
    }
    if (argc != 3 || argv[1][0] == '-' || argv[2][0] == '-') {
        cli_fail("copy: expected two stores: remem copy SRC DST");
        return 2;
    }
    cli_env src = *env;
    src.db_path = argv[1];
    src.existing = 1;
    remem *db = cli_open(&src);
    if (!db) return 1;
    char *json = NULL;
    int rc = remem_copy(db, argv[2], &json);
    if (rc) {
        rc = cli_fail_db(db, rc, "copy");
    } else if (env->json) {
        puts(json);
    } else {
        json_t *j = json_loads(json, 0, NULL);
        size_t i;
        json_t *o;
        json_array_foreach(json_object_get(j, "namespaces"), i, o) {
            if (env->quiet) break;
            printf("%-32s %8lld memories %8lld history  %s\n",
                   json_string_value(json_object_get(o, "ns")),
                   (long long)json_integer_value(json_object_get(o, "memories")),
                   (long long)json_integer_value(json_object_get(o, "history")),
                   json_is_true(json_object_get(o, "skipped")) ? "already there" : "copied");
        }
        puts(json_string_value(json_object_get(j, "text")));
        json_decref(j);
    }
    remem_free(json);
    remem_close(db);
    return rc;
}
