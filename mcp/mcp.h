/*
 * mcp.h: remem as an MCP (Model Context Protocol) server, independent of
 * the transport. One function takes one JSON-RPC 2.0 message (or a batch)
 * as text and returns the response text; `remem mcp` feeds it lines from
 * stdin, `remem serve` feeds it the bodies POSTed to /mcp (streamable HTTP).
 * Keeping the protocol here and the bytes in the transports means both
 * speak exactly the same MCP, and the tests can drive it with no I/O.
 *
 * The handler keeps no session state: every message is answered from its
 * own content, so the HTTP server may route any request to any thread's
 * handle. Protocol versions spoken: 2025-06-18 (preferred), 2025-03-26,
 * 2024-11-05. Tools: one per operation of the library (remem_ops()), in
 * groups (remem_op_info.group): a server offers the "core" group, the few
 * tools a model needs to remember and recall, plus the groups it is
 * started with (docs/mcp.md).
 */
#ifndef REMEM_MCP_H
#define REMEM_MCP_H

#include <stddef.h>
#include "remem.h"

/* Rights a caller may hold on a namespace (bit mask). */
enum mcp_right {
    MCP_READ = 1,  /* recall, get, list_namespaces */
    MCP_WRITE = 2, /* remember, update, invalidate, forget (archive) */
    MCP_ADMIN = 4  /* forget with purge (a hard delete) */
};

/* Who is asking. allowed(ctx, ns, right) returns non-zero when the caller
 * may exercise right (enum mcp_right values, or'd) on namespace ns, or on
 * every namespace when ns is NULL (an operation that names none: the
 * server answers as its HTTP routes do, server/keys.c). A NULL
 * mcp_access, or a NULL allowed, allows everything (stdio: the user runs
 * the process and owns the file). */
typedef struct mcp_access {
    int (*allowed)(void *ctx, const char *ns, int right);
    void *ctx;
} mcp_access;

/* The protocol version answered when the client asks for one remem does not
 * speak. */
#define MCP_LATEST_VERSION "2025-06-18"

/* The tool groups a server offers (a bit mask): core is always on. */
#define MCP_GROUP_CORE 1u
#define MCP_GROUP_ALL 0x7fu
/* Parse a comma-separated list of group names ("memory,lessons", "all")
 * into *mask (core included). 0, or -1 with err naming the unknown group. */
int mcp_groups_parse(const char *list, unsigned *mask, char *err, size_t cap);

/*
 * Handle one MCP message: msg (len bytes, not necessarily NUL-terminated)
 * is a JSON-RPC request, notification or response, or a batch (a JSON
 * array of them). Returns the response as compact one-line JSON text,
 * malloc'd (free with free()), or NULL when nothing is to be answered (a
 * notification, a client's response, a batch of only those). Malformed
 * input gets a JSON-RPC error response, never NULL. db is used only for
 * the duration of the call (the threading rule of remem.h applies); acc
 * may be NULL. Tool failures (bad arguments, an unknown namespace, a
 * malformed filter, a namespace the caller may not use) are tool results
 * with "isError": true so that the model sees the message; protocol
 * failures are JSON-RPC errors (-32700, -32600, -32601, -32602, -32603).
 */
char *mcp_handle(remem *db, const char *msg, size_t len, const mcp_access *acc);
/* mcp_handle offering the tool groups (MCP_GROUP_* bits, from
 * mcp_groups_parse) instead of the core group alone. */
char *mcp_handle_groups(remem *db, const char *msg, size_t len, const mcp_access *acc,
                        unsigned groups);

#endif
