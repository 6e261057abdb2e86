/*
 * jsonrpc.c: the JSON-RPC 2.0 layer of the MCP face, over jansson, with no
 * I/O: parse, tell requests from notifications and responses, answer
 * batches element by element, map protocol mistakes to the standard error
 * codes. MCP adds the lifecycle (initialize, the initialized notification,
 * ping) and tools/list, tools/call, which hand over to the tool table
 * (schemas.c) and the calls (tools.c).
 *
 * The spec separates protocol errors (unknown tool, params that are not an
 * object) from tool execution errors (anything the model could correct:
 * a missing argument, a malformed filter, a forbidden namespace); the
 * latter come back as results with isError so that the model reads them.
 *
 * Batches: the 2025-03-26 revision allows JSON arrays of messages and
 * 2025-06-18 removed them. The handler keeps no session, so it cannot know
 * which revision a message belongs to; it answers batches (a 2025-06-18
 * client never sends one) but refuses initialize inside one, as 2025-03-26
 * requires.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mcpInt.h"

/* JSON-RPC 2.0 error codes. */
enum {
    RPC_PARSE_ERROR = -32700,
    RPC_INVALID_REQUEST = -32600,
    RPC_METHOD_NOT_FOUND = -32601,
    RPC_INVALID_PARAMS = -32602,
    RPC_INTERNAL_ERROR = -32603
};

/* Newest first; the first is the answer to a version remem does not know. */
static const char *const supported_versions[] = {MCP_LATEST_VERSION, "2025-03-26", "2024-11-05"};

/* ------------------------------------------------------------------ */
/* JSON-RPC envelopes                                                  */
/* ------------------------------------------------------------------ */

static json_t *rpc_result(json_t *id, json_t *result) {
    return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "result",
                     result);
}

static json_t *rpc_error(json_t *id, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static json_t *rpc_error(json_t *id, int code, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(),
                     "error", "code", code, "message", msg);
}

/* ------------------------------------------------------------------ */
/* Methods                                                             */
/* ------------------------------------------------------------------ */

static json_t *method_initialize(json_t *id, json_t *params) {
    const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
    const char *answer = supported_versions[0];
    size_t i;
    if (!asked)
        return rpc_error(id, RPC_INVALID_PARAMS,
                         "initialize: params.protocolVersion (a string) is "
                         "required");
    for (i = 0; i < sizeof supported_versions / sizeof *supported_versions; i++)
        if (strcmp(asked, supported_versions[i]) == 0) answer = asked;
    json_t *result =
        json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion", answer,
                  "capabilities", "tools", "listChanged", 0, "serverInfo", "name", "remem", "title",
                  "remem memory engine", "version", REMEM_VERSION, "instructions",
                  "remem is your long-term memory. Before a step, call recall with what "
                  "you are about to do or answer; after you observe, decide or learn "
                  "something worth keeping, call memory_add. Namespaces keep agents, "
                  "users and projects apart: use one consistently. When a remembered "
                  "fact changes, invalidate the old memory (superseded_by the new "
                  "one) or update it.");
    return rpc_result(id, result);
}

static json_t *method_tools_list(json_t *id, unsigned groups) {
    json_t *list = mcp_tools_list(groups);
    if (!list) return rpc_error(id, RPC_INTERNAL_ERROR, "out of memory");
    return rpc_result(id, json_pack("{s:o}", "tools", list));
}

static json_t *method_tools_call(remem *db, const mcp_access *acc, json_t *id, json_t *params,
                                 unsigned groups) {
    const char *name = json_string_value(json_object_get(params, "name"));
    json_t *args = json_object_get(params, "arguments"), *empty = NULL;
    json_t *result;
    tool_call c;
    const remem_op_info *op;
    char err[320];

    if (!name)
        return rpc_error(id, RPC_INVALID_PARAMS, "tools/call: params.name (a string) is required");
    if (mcp_tool_find(name, groups, &op, err, sizeof err))
        return rpc_error(id, RPC_INVALID_PARAMS, "%s", err);
    if (args && !json_is_null(args) && !json_is_object(args))
        return rpc_error(id, RPC_INVALID_PARAMS, "tools/call: params.arguments must be an object");
    if (!args || json_is_null(args)) args = empty = json_object();

    memset(&c, 0, sizeof c);
    c.db = db;
    c.acc = acc;
    c.args = args;
    result = mcp_op_call(&c, op);
    if (!result) result = mcp_tool_error(c.err[0] ? c.err : "the tool failed");
    json_decref(empty);
    if (!result) return rpc_error(id, RPC_INTERNAL_ERROR, "out of memory");
    return rpc_result(id, result);
}

/* One message (not a batch). Returns the response, or NULL when none is
 * due. in_batch: initialize is refused there. */
static json_t *handle_one(remem *db, const mcp_access *acc, json_t *msg, int in_batch,
                          unsigned groups) {
    json_t *id, *params, *version;
    const char *method;
    int is_notification;

    if (!json_is_object(msg))
        return rpc_error(NULL, RPC_INVALID_REQUEST,
                         "invalid request: a message must be a JSON object");
    id = json_object_get(msg, "id");
    version = json_object_get(msg, "jsonrpc");
    method = json_string_value(json_object_get(msg, "method"));
    is_notification = (id == NULL);
    /* MCP ids are strings or integers; a null or structured id cannot be
     * answered by it, so the error goes out with id null. */
    json_t *reply_id = id && (json_is_string(id) || json_is_integer(id)) ? id : NULL;
    if (!json_is_string(version) || strcmp(json_string_value(version), "2.0") != 0)
        return rpc_error(reply_id, RPC_INVALID_REQUEST,
                         "invalid request: \"jsonrpc\" must be \"2.0\"");
    if (!json_object_get(msg, "method") &&
        (json_object_get(msg, "result") || json_object_get(msg, "error")))
        return NULL; /* a client's response: remem sends no requests */
    if (!method)
        return rpc_error(reply_id, RPC_INVALID_REQUEST,
                         "invalid request: \"method\" must be a string");
    if (id && !reply_id)
        return rpc_error(NULL, RPC_INVALID_REQUEST,
                         "invalid request: \"id\" must be a string or an "
                         "integer");
    params = json_object_get(msg, "params");
    if (params && !json_is_object(params)) {
        if (is_notification) return NULL;
        return rpc_error(id, RPC_INVALID_PARAMS, "invalid params: \"params\" must be an object");
    }
    /* Notifications (initialized, cancelled, progress...) need no answer,
     * and one remem does not know is ignored, as JSON-RPC asks. */
    if (is_notification) return NULL;

    if (strcmp(method, "initialize") == 0) {
        if (in_batch)
            return rpc_error(id, RPC_INVALID_REQUEST,
                             "invalid request: initialize must not be part "
                             "of a batch");
        return method_initialize(id, params);
    }
    if (strcmp(method, "ping") == 0) return rpc_result(id, json_object());
    if (strcmp(method, "tools/list") == 0) return method_tools_list(id, groups);
    if (strcmp(method, "tools/call") == 0) return method_tools_call(db, acc, id, params, groups);
    return rpc_error(id, RPC_METHOD_NOT_FOUND, "method not found: %s", method);
}

static char *dump(json_t *response) {
    char *text = response ? json_dumps(response, JSON_COMPACT) : NULL;
    json_decref(response);
    return text;
}

char *mcp_handle(remem *db, const char *msg, size_t len, const mcp_access *acc) {
    return mcp_handle_groups(db, msg, len, acc, MCP_GROUP_CORE);
}

char *mcp_handle_groups(remem *db, const char *msg, size_t len, const mcp_access *acc,
                        unsigned groups) {
    json_error_t jerr;
    json_t *in, *out, *el;
    size_t i;

    in = json_loadb(msg ? msg : "", msg ? len : 0, JSON_DECODE_ANY, &jerr);
    if (!in)
        return dump(rpc_error(NULL, RPC_PARSE_ERROR, "parse error: %s (line %d, column %d)",
                              jerr.text, jerr.line, jerr.column));
    if (!json_is_array(in)) {
        out = handle_one(db, acc, in, 0, groups);
        json_decref(in);
        return dump(out);
    }
    if (json_array_size(in) == 0) {
        json_decref(in);
        return dump(rpc_error(NULL, RPC_INVALID_REQUEST, "invalid request: empty batch"));
    }
    out = json_array();
    json_array_foreach(in, i, el) {
        json_t *r = handle_one(db, acc, el, 1, groups);
        if (r) json_array_append_new(out, r);
    }
    json_decref(in);
    if (json_array_size(out) == 0) {
        json_decref(out);
        return NULL;
    }
    return dump(out);
}
