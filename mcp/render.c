/*
 * render.c: tool results of the MCP face, given twice: as readable text
 * for the model (one content block, the operation's "text") and as
 * structuredContent for programs (the library's own JSON answer, so a
 * memory looks the same here as over HTTP and on the command line).
 */
#include "mcpInt.h"

/* The engine renders memories and results (remem_*_to_json) so that every
 * face shows the same shapes; take its text as a JSON value. */
json_t *mcp_engine_json(char *text) {
    json_t *v = text ? json_loads(text, 0, NULL) : NULL;
    remem_free(text);
    return v;
}

/* A successful result: one text block for the model, structuredContent for
 * programs. Steals structured. */
json_t *mcp_tool_ok(const char *text, json_t *structured) {
    return json_pack("{s:[{s:s, s:s}], s:o}", "content", "type", "text", "text", text,
                     "structuredContent", structured);
}

/* A failed result. No structuredContent: it would have to match the
 * tool's outputSchema, which describes success. */
json_t *mcp_tool_error(const char *text) {
    return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text, "isError",
                     1);
}
