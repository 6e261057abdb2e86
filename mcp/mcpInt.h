/*
 * mcpInt.h: what the files of the MCP face share. The face is cut by
 * concern, top to bottom along a message's path:
 *
 *   jsonrpc.c  JSON-RPC 2.0 framing, batches, the MCP lifecycle methods
 *              (initialize, ping, tools/list, tools/call); mcp_handle.
 *   schemas.c  the tool table: names, descriptions for models, input and
 *              output JSON Schemas, annotations.
 *   tools.c    the tool calls: arguments read and checked, access checked,
 *              one remem.h call each.
 *   toolset.c  which tools a server offers: the default set, the groups.
 *   render.c   results as a model reads them (text) and as programs read
 *              them (structuredContent), and the text buffer they grow in.
 *
 * Only mcp.h is seen from outside (cli/cmd_mcp.c, server/http.c).
 */
#ifndef REMEM_MCP_INT_H
#define REMEM_MCP_INT_H

#include <jansson.h>
#include <stddef.h>
#include "mcp.h"

/* The largest k a recall tool call may ask for. */
#define MCP_MAX_RECALL_K 1000 /* remem_query_parse's limit */

/* One tools/call in progress (tools.c). */
typedef struct tool_call {
    remem *db;
    const mcp_access *acc;
    json_t *args;  /* the arguments object (borrowed) */
    char err[768]; /* why the call failed, for the isError result */
} tool_call;

/* ------------------------------------------------------------------ */
/* The tool table (schemas.c)                                          */
/* ------------------------------------------------------------------ */
typedef struct mcp_tool {
    const char *name, *title, *description;
    const char *group; /* the tool group that offers it (toolset.c) */
    const char *op;    /* the operation that replaces it once the library has it */
    json_t *(*input_schema)(void);
    json_t *(*output_schema)(void);
    int read_only, destructive, idempotent;
    json_t *(*call)(tool_call *c); /* a result, or NULL with c->err set */
} mcp_tool;

extern const mcp_tool mcp_tools[];
extern const size_t mcp_n_tools;
/* The tools/list entry of t (a new reference). */
json_t *mcp_tool_json(const mcp_tool *t);

/* ------------------------------------------------------------------ */
/* The tool calls (tools.c)                                            */
/* ------------------------------------------------------------------ */
json_t *mcp_tool_remember(tool_call *c);
json_t *mcp_tool_recall(tool_call *c);
json_t *mcp_tool_update(tool_call *c);
json_t *mcp_tool_invalidate(tool_call *c);
json_t *mcp_tool_forget(tool_call *c);
json_t *mcp_tool_list_namespaces(tool_call *c);

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
/* The tool called name among those the groups offer: 0 with *hand (a
 * hand-written tool) or *op set, else -1 with err saying why (unknown, or
 * in a group not offered). */
int mcp_tool_find(const char *name, unsigned groups, const mcp_tool **hand,
                  const remem_op_info **op, char *err, size_t cap);

/* ------------------------------------------------------------------ */
/* Rendering (render.c)                                                */
/* ------------------------------------------------------------------ */

/* A growing text buffer for the readable renderings; oom sticks. */
typedef struct textbuf {
    char *s;
    size_t len, cap;
    int oom;
} textbuf;

void mcp_tb_printf(textbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The engine's rendering (remem_*_to_json text, freed here) as JSON. */
json_t *mcp_engine_json(char *text);
json_t *mcp_memory_json(const remem_memory *m);
/* A successful result: one text block and structuredContent (stolen). */
json_t *mcp_tool_ok(const char *text, json_t *structured);
/* A failed result (isError), no structuredContent. */
json_t *mcp_tool_error(const char *text);
/* One memory, one recall hit, as the model reads them. */
void mcp_render_memory(textbuf *b, const remem_memory *m);
void mcp_render_hit(textbuf *b, size_t rank, const remem_hit *h);
/* The ok result with b's text (or an error when memory ran out); frees b,
 * steals structured. */
json_t *mcp_finish_text(textbuf *b, json_t *structured);

#endif
