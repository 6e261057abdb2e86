/*
 * schemas.c: what a model is told about each tool: the library's
 * operations (remem_ops()) as MCP tools, "decision.add" as decision_add,
 * with the operation's summary as description, its schema as inputSchema
 * (trimmed of remem's own keywords and advanced arguments) and its hints
 * as annotations. What a call does lives in tools.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mcpInt.h"

/* MCP's tool annotations (the spec's defaults are readOnlyHint false,
 * destructiveHint true, idempotentHint false, openWorldHint true): every
 * tool says it works on the store alone, and a writer says whether it may
 * destroy and whether a repeat changes more; for a read-only tool the
 * other two mean nothing and are left out. */
static json_t *annotations(int read_only, int destructive, int idempotent) {
    if (read_only) return json_pack("{s:b, s:b}", "readOnlyHint", 1, "openWorldHint", 0);
    return json_pack("{s:b, s:b, s:b, s:b}", "readOnlyHint", 0, "destructiveHint", destructive,
                     "idempotentHint", idempotent, "openWorldHint", 0);
}

/* No outputSchema: the structuredContent of every result is the library's
 * JSON answer, the same as over HTTP (docs/server.md), and a model reads
 * the text; leaving the output schemas out keeps tools/list small. */

/* ---- the library's operations as tools ---- */

static void tool_name_of(const char *op, char *out, size_t cap) {
    snprintf(out, cap, "%s", op);
    for (char *p = out; *p; p++)
        if (*p == '.') *p = '_';
}

const remem_op_info *mcp_op_for_tool(const char *tool) {
    size_t n;
    const remem_op_info *ops = remem_ops(&n);
    char name[160];
    for (size_t i = 0; i < n; i++) {
        tool_name_of(ops[i].name, name, sizeof name);
        if (!strcmp(name, tool)) return &ops[i];
    }
    return NULL;
}

/* The keywords a model's tool leaves out: remem's own ("x-...") and the
 * length bounds the library checks anyway (a shorter tool list). */
static int face_only(const char *k) {
    return !strncmp(k, "x-", 2) || !strcmp(k, "minLength") || !strcmp(k, "maxLength");
}

static void strip_cli_keys(json_t *o) {
    const char *k;
    json_t *v;
    void *tmp;
    if (json_is_array(o)) {
        size_t i;
        json_array_foreach(o, i, v) strip_cli_keys(v);
        return;
    }
    json_object_foreach_safe(o, tmp, k, v) {
        if (face_only(k))
            json_object_del(o, k);
        else
            strip_cli_keys(v);
    }
}

/* What a model's tool does not offer (the call still checks them): the
 * properties marked "x-advanced" (the tool stays short) and "x-local" (a
 * path on the server's machine, refused from MCP clients by remem_call_ex
 * with REMEM_CALL_REMOTE). */
static void drop_advanced(json_t *schema) {
    json_t *props = json_object_get(schema, "properties"), *v;
    const char *k;
    void *tmp;
    json_object_foreach_safe(props, tmp, k, v) {
        if (json_is_true(json_object_get(v, "x-advanced")) ||
            json_is_true(json_object_get(v, "x-local")))
            json_object_del(props, k);
    }
}

json_t *mcp_op_tool_json(const remem_op_info *op) {
    char name[160];
    tool_name_of(op->name, name, sizeof name);
    json_t *schema = json_loads(op->schema, 0, NULL);
    if (!schema) schema = json_pack("{s:s}", "type", "object");
    drop_advanced(schema);
    strip_cli_keys(schema);
    unsigned h = op->hints;
    return json_pack("{s:s, s:s, s:o, s:o}", "name", name, "description", op->summary,
                     "inputSchema", schema, "annotations",
                     annotations(h & REMEM_OP_READ_ONLY, (h & REMEM_OP_DESTRUCTIVE) != 0,
                                 (h & REMEM_OP_IDEMPOTENT) != 0));
}
