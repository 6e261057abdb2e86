/*
 * mcpInt.h: what the files of the MCP face share. The face is cut by
 * concern, top to bottom along a message's path:
 *
 *   jsonrpc.c  JSON-RPC 2.0 framing, batches, the MCP lifecycle methods
 *              (initialize, ping, tools/list, tools/call); mcp_handle.
 *   schemas.c  the tools as a model sees them: the library's operations
 *              (remem_ops()) with their descriptions, input schemas and
 *              annotations.
 *   tools.c    the tool calls: access checked, one remem_call_ex each,
 *              the answer trimmed to what the caller may see.
 *   toolset.c  which tools a server offers: the default set, the groups.
 *   render.c   results as a model reads them (text) and as programs read
 *              them (structuredContent).
 *
 * Only mcp.h is seen from outside (cli/cmd_mcp.c, server/http.c).
 */
#ifndef REMEM_MCP_INT_H
#define REMEM_MCP_INT_H

#include <jansson.h>
#include <stddef.h>
#include "mcp.h"

/* One tools/call in progress (tools.c). */
typedef struct tool_call {
    remem *db;
    const mcp_access *acc;
    json_t *args;  /* the arguments object (borrowed) */
    char err[768]; /* why the call failed, for the isError result */
} tool_call;

/* ------------------------------------------------------------------ */
/* The tools (schemas.c, tools.c)                                      */
/* ------------------------------------------------------------------ */

/* The library's operations (remem_ops()) as tools: "decision.add" is the
 * tool decision_add. The operation called by tool name, or NULL; its
 * tools/list entry; running it (a result, or NULL with c->err set). */
const remem_op_info *mcp_op_for_tool(const char *tool);
json_t *mcp_op_tool_json(const remem_op_info *op);
json_t *mcp_op_call(tool_call *c, const remem_op_info *op);

/* ------------------------------------------------------------------ */
/* The tool sets (toolset.c)                                           */
/* ------------------------------------------------------------------ */

/* The bit of a group name (remem_op_info.group), 0 for none. */
unsigned mcp_group_bit(const char *group);
/* The tools/list array of the tools the groups offer (a new reference). */
json_t *mcp_tools_list(unsigned groups);
/* The tool called name among those the groups offer: 0 with *op set,
 * else -1 with err saying why (unknown, or in a group not offered). */
int mcp_tool_find(const char *name, unsigned groups, const remem_op_info **op, char *err,
                  size_t cap);

/* ------------------------------------------------------------------ */
/* Rendering (render.c)                                                */
/* ------------------------------------------------------------------ */

/* The engine's rendering (remem_*_to_json text, freed here) as JSON. */
json_t *mcp_engine_json(char *text);
/* A successful result: one text block and structuredContent (stolen). */
json_t *mcp_tool_ok(const char *text, json_t *structured);
/* A failed result (isError), no structuredContent. */
json_t *mcp_tool_error(const char *text);

#endif
