/*
 * main.c: the remem command. Reads the global options (they may come before
 * or after the command name), then dispatches to one cmd_* per command
 * through the table below. Each command lives in its own cli/cmd_*.c and
 * reaches the library only through include/remem.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* What a command needs of the store: CLI_EXISTING, it only reads or
 * changes what is there, so a mistyped --db is an error rather than a new
 * empty store; CLI_NOTE, it reports on the store and says which embedder
 * "auto" chose (other commands say it only when they create the store). */
enum { CLI_EXISTING = 1, CLI_NOTE = 2 };

static const struct command {
    const char *name;
    cli_cmd_fn fn;
    const char *summary;
    unsigned flags; /* CLI_* below */
} commands[] = {
    /* command table: one line per command */
    {"import", cmd_import, "add memories from a JSONL file (- for stdin), with a progress bar", 0},
    {"export", cmd_export, "write memories as JSONL", CLI_EXISTING},
    {"copy", cmd_copy, "copy a whole store to another (SQLite <-> PostgreSQL), verified", 0},
    {"reindex", cmd_reindex, "re-embed memories with the current embedder", CLI_EXISTING},
    {"profiles", cmd_profiles, "list scoring profiles and their formulas", 0},
    {"eval", cmd_eval, "retrieval quality on a benchmark (eval locomo FILE)", 0},
    {"demo", cmd_demo, "an agent's memory, end to end, in a few seconds", 0},
    {"model", cmd_model, "install or inspect the all-MiniLM-L6-v2 model (pull, info)", 0},
    {"embed", cmd_embed, "the vectors (and token ids) of some texts", 0},
    {"serve", cmd_serve, "the HTTP/JSON and MCP server (remem serve --help)", 0},
    {"mcp", cmd_mcp, "the MCP server over stdio, for Claude Desktop and other MCP clients", 0},
};

/* Is an operation's name taken by a command (which then answers it)? */
static int is_command(const char *name) {
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name)) return 1;
    return 0;
}

static void usage(FILE *f) {
    fprintf(f,
            "remem %s: memory for LLM agents\n\n"
            "usage: remem [global options] <command> [options]\n\ncommands:\n",
            REMEM_VERSION);
    cli_list_verbs(f);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\noperations (the same on HTTP, MCP and Python; remem <operation> --help):\n");
    cli_list_ops(f, is_command);
    fprintf(f, "\nglobal options:\n"
               "  --db PATH          the store (default ./remem.db, or $REMEM_DB)\n"
               "  --json             machine-readable output\n"
               "  --embedder NAME    hash, minilm, http or auto (default auto)\n"
               "  --embed-url URL    base URL of an OpenAI-compatible API (http embedder)\n"
               "  --embed-model M    model name for the http embedder\n"
               "  --model-dir DIR    MiniLM model folder\n"
               "  --durable          synchronous=FULL: survive power loss, not only crashes\n"
               "  --config FILE      the configuration (default $REMEM_CONFIG, or remem.yaml\n"
               "                     beside the store); docs/config.md\n"
               "  --no-memory        memory off: recall finds nothing, writes are dropped\n"
               "  --quiet            no progress or notes on stderr\n"
               "  --version          the version of remem (with --json: an object)\n"
               "\n`remem <command> --help` describes each command.\n");
}

int main(int argc, char **argv) {
    cli_env env;
    memset(&env, 0, sizeof env);
    remem_options_init(&env.opt);
    env.db_path = getenv("REMEM_DB") ? getenv("REMEM_DB") : "./remem.db";
    /* Pull the global options out wherever they are; keep the rest. */
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    if (!rest) return cli_fail("out of memory");
    int nrest = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = cli_opt(argc, argv, &i, "--db")))
            env.db_path = v;
        else if (!strcmp(argv[i], "--json"))
            env.json = 1;
        else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q"))
            env.quiet = 1;
        else if (!strcmp(argv[i], "--durable"))
            env.opt.durability = REMEM_DURABLE_FULL;
        else if ((v = cli_opt(argc, argv, &i, "--embedder")))
            env.opt.embedder = v;
        else if ((v = cli_opt(argc, argv, &i, "--embed-url")))
            env.opt.embed_url = v;
        else if ((v = cli_opt(argc, argv, &i, "--embed-model")))
            env.opt.embed_model = v;
        else if ((v = cli_opt(argc, argv, &i, "--model-dir")))
            env.opt.model_dir = v;
        else if ((v = cli_opt(argc, argv, &i, "--config")))
            env.opt.config_path = v;
        else if (!strcmp(argv[i], "--no-memory"))
            env.opt.no_memory = 1;
        else
            rest[nrest++] = argv[i];
    }
    int rc;
    if (nrest == 0 || !strcmp(rest[0], "--help") || !strcmp(rest[0], "-h") ||
        !strcmp(rest[0], "help")) {
        usage(stdout);
        rc = nrest == 0 ? 2 : 0;
    } else if (!strcmp(rest[0], "--version") || !strcmp(rest[0], "version")) {
        /* The library's own version: the command may be linked against a
         * libremem other than the header it was compiled with. */
        if (env.json)
            printf("{\"version\":\"%s\",\"version_number\":%d}\n", remem_version(),
                   remem_version_number());
        else
            printf("remem %s\n", remem_version());
        rc = 0;
    } else {
        rc = -1;
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
            if (strcmp(rest[0], commands[i].name) == 0) {
                env.existing = !!(commands[i].flags & CLI_EXISTING);
                env.note = !!(commands[i].flags & CLI_NOTE);
                rc = commands[i].fn(&env, nrest, rest);
                break;
            }
        }
        int words = 0;
        const remem_op_info *op = rc == -1 ? cli_find_op(nrest, rest, &words) : NULL;
        if (op) rc = cli_run_op(&env, op, nrest - words, rest + words);
        if (rc == -1) rc = cli_group(nrest, rest);
        if (rc == -1) {
            cli_fail("unknown command \"%s\" (remem --help lists them)", rest[0]);
            rc = 2;
        }
    }
    free(rest);
    return rc;
}
