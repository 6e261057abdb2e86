/*
 * cmd_mcp.c: `remem mcp`, the MCP server over stdio, for clients that
 * spawn their tools as child processes (Claude Desktop, IDEs, agent
 * frameworks).
 *
 * The stdio transport is newline-delimited JSON-RPC: one message per line
 * on stdin, one response per line on stdout, nothing else on stdout (a
 * stray byte there breaks the client), logs on stderr. The protocol itself
 * lives in mcp/ (mcp.h), shared with `remem serve`'s /mcp route; this file
 * only moves lines. Messages are answered one at a time in arrival order,
 * which the single store handle requires anyway. EOF on stdin is the
 * client's way to stop the server: exit 0.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "../mcp/mcp.h"

static const char usage[] =
    "usage: remem mcp [--db PATH] [--tools GROUP,...]\n"
    "\n"
    "Serve the store as an MCP server over stdio: newline-delimited JSON-RPC\n"
    "on stdin and stdout, logs on stderr, exit at end of input. Start it from\n"
    "an MCP client, e.g. in Claude Desktop's claude_desktop_config.json:\n"
    "  \"remem\": {\"command\": \"remem\", \"args\": [\"mcp\", \"--db\", \"/path/remem.db\"]}\n"
    "Tools: by default the few a model needs to remember and recall (the core\n"
    "group). --tools adds groups: memory, lifecycle, lessons, experience,\n"
    "episodes, admin, or all (default: mcp.tools of the config). docs/mcp.md\n"
    "lists every tool.\n";

/* Write all of line and a newline, then flush: the client waits for it. */
static int write_line(const char *line) {
    size_t len = strlen(line);
    if (fwrite(line, 1, len, stdout) != len || fputc('\n', stdout) == EOF || fflush(stdout) != 0)
        return -1;
    return 0;
}

static int only_blank(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n') return 0;
    return 1;
}

int cmd_mcp(const cli_env *env, int argc, char **argv) {
    cli_env local = *env;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long served = 0;
    int i, status = 0;
    remem *db;
    const char *tools = NULL;
    unsigned groups;
    char err[256];

    if (cli_wants_help(argc, argv)) {
        fputs(usage, stdout);
        return 0;
    }
    for (i = 1; i < argc; i++) {
        const char *v = cli_opt(argc, argv, &i, "--db");
        if (v) {
            local.db_path = v;
            continue;
        }
        if ((v = cli_opt(argc, argv, &i, "--tools"))) {
            tools = v;
            continue;
        }
        fprintf(stderr, "remem: mcp: unknown argument %s\n%s", argv[i], usage);
        return 2;
    }
    db = cli_open(&local);
    if (!db) return 1;
    if (!tools) tools = remem_setting(db, "mcp.tools");
    if (mcp_groups_parse(tools, &groups, err, sizeof err)) {
        fprintf(stderr, "remem: mcp: --tools: %s\n", err);
        remem_close(db);
        return 2;
    }
    /* A client that hangs up mid-answer must not kill us before the store
     * is closed: a failed write ends the loop instead. */
    signal(SIGPIPE, SIG_IGN);
    if (!local.quiet)
        fprintf(stderr, "remem mcp: serving %s over stdio (MCP %s, embedder %s)\n",
                local.db_path ? local.db_path : "./remem.db", MCP_LATEST_VERSION,
                remem_embedder_name(db));

    while ((n = getline(&line, &cap, stdin)) >= 0) {
        if (only_blank(line, (size_t)n)) continue;
        char *reply = mcp_handle_groups(db, line, (size_t)n, NULL, groups);
        served++;
        if (reply && write_line(reply) != 0) {
            fprintf(stderr, "remem mcp: stdout closed (%s); stopping\n", strerror(errno));
            free(reply);
            status = 1;
            break;
        }
        free(reply);
    }
    if (ferror(stdin)) {
        fprintf(stderr, "remem mcp: reading stdin: %s\n", strerror(errno));
        status = 1;
    }
    if (!local.quiet) fprintf(stderr, "remem mcp: end of input after %ld messages\n", served);
    free(line);
    remem_close(db);
    return status;
}
