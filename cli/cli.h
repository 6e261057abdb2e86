/*
 * cli.h: what the remem command's files share. cli/main.c parses the global
 * options (--db, --json, --embedder, ...) into a cli_env, then dispatches to
 * one cmd_* function per command, each in its own cli/cmd_*.c file and
 * registered in the table in cli/main.c. The faces see libremem only through
 * include/remem.h.
 *
 * A command returns the process exit code: 0 on success; on failure it has
 * printed one line "remem: <what went wrong>" to stderr (cli_fail does that)
 * and returns 1 (usage errors return 2).
 */
#ifndef REMEM_CLI_H
#define REMEM_CLI_H

#include <jansson.h>
#include <stdio.h>
#include "remem.h"

typedef struct cli_env {
    const char *db_path; /* --db, default ./remem.db ($REMEM_DB) */
    int json;            /* --json */
    remem_options opt;   /* --embedder, --embed-url, --model-dir, --durable,
                            --config, --no-memory */
    int quiet;           /* --quiet */
    int existing;        /* the command needs an existing store (cli_open fails
                            naming the path instead of creating one) */
    int note;            /* print the embedder note even on an existing store */
} cli_env;

/* Open the store named by env (prints the error and returns NULL on
 * failure; with env->existing a missing store file is that failure). */
remem *cli_open(const cli_env *env);
/* Print "remem: fmt..." and a newline to stderr; returns 1. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "remem: <context>: <remem_errmsg(db)>" for status rc; returns 1. */
int cli_fail_db(remem *db, int rc, const char *context);
/* 1 if argv[i] is --help or -h anywhere in argv. */
int cli_wants_help(int argc, char **argv);

/* Minimal option reader: for each argv[i] that is "--name" with a value
 * ("--name V" or "--name=V"), cli_opt returns the value and advances *i. */
const char *cli_opt(int argc, char **argv, int *i, const char *name);

/* For commands whose only option is --ns NS: sets *ns (left as is when
 * absent). Returns 0, or 2 after printing the usage error. */
int cli_only_ns(const char *cmd, int argc, char **argv, const char **ns);

/* Commands. argv[0] is the command name; global options are removed. */
typedef int (*cli_cmd_fn)(const cli_env *env, int argc, char **argv);
int cmd_import(const cli_env *, int, char **);
int cmd_export(const cli_env *, int, char **);
int cmd_reindex(const cli_env *, int, char **);
int cmd_demo(const cli_env *, int, char **);
int cmd_eval(const cli_env *, int, char **);
int cmd_profiles(const cli_env *, int, char **);
int cmd_copy(const cli_env *, int, char **);
/* Owned by the minilm work (cli/cmd_model.c, cli/cmd_embed.c). */
int cmd_model(const cli_env *, int, char **);
int cmd_embed(const cli_env *, int, char **);
/* Owned by the server work (cli/cmd_serve.c, cli/cmd_mcp.c). */
int cmd_serve(const cli_env *, int, char **);
int cmd_mcp(const cli_env *, int, char **);

/* The library's operations as commands (cli/cmd_ops.c): the operation
 * named by argv's leading words (*words: how many), or NULL; running one
 * with the words removed from argv; listing them for --help. */
const remem_op_info *cli_find_op(int argc, char **argv, int *words);
int cli_run_op(const cli_env *env, const remem_op_info *op, int argc, char **argv);
void cli_list_ops(FILE *f, int (*skip)(const char *name));
/* The arguments of op from argv (flags and positionals, read by its
 * schema alone): 0 and *args (new reference); -1 after printing --help;
 * else an exit code after printing the error. */
int cli_op_args(const remem_op_info *op, int argc, char **argv, json_t **args);
/* Run op with args on the store of env and print the answer; the exit
 * code. */
int cli_call_op(const cli_env *env, const remem_op_info *op, json_t *args);
/* The core verbs by their short names (add, recall, get, ...), one line
 * each, for `remem --help`. */
void cli_list_verbs(FILE *f);
/* The short name of an operation (`add` for memory.add), or NULL. */
const char *cli_alias_of(const char *op);
/* A command group (`remem lesson`, `remem memory`): the first word of
 * some operations' names. Lists them (--help, or no subcommand), or
 * refuses an unknown subcommand naming the nearest. -1 when word is no
 * group, else the exit code. */
int cli_group(int argc, char **argv);
/* Print the answer of op for a person (cli/present.c); 0 when op has no
 * presenter of its own. */
int cli_present(const char *op, json_t *answer);

#endif
