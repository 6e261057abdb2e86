/*
 * test_mcp.c: the MCP handler (mcp/) driven directly with JSON-RPC
 * text, against a real store in memory: the lifecycle, every JSON-RPC error
 * path, batches, the tools' results (text and structuredContent), tool
 * failures as isError results, and the access callback on every tool.
 *
 * The files of mcp/ belong to the remem binary, not to libremem, so they are
 * compiled into this test directly (all four files, one unit).
 */
#include "../mcp/jsonrpc.c"
#include "../mcp/render.c"
#include "../mcp/schemas.c"
#include "../mcp/tools.c"
#include "../mcp/toolset.c"

#include "test.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static remem *open_store(void) {
    remem_options opt;
    remem *db = NULL;
    remem_options_init(&opt);
    opt.embedder = "hash";
    int rc = remem_open(":memory:", &opt, &db);
    CHECK_INT(rc, REMEM_OK);
    if (rc != REMEM_OK) {
        fprintf(stderr, "  open: %s\n", remem_errmsg(db));
        remem_close(db);
        return NULL;
    }
    return db;
}

/* Send one message; the parsed response, or NULL when there is none.
 * Every tool group is offered (test_tools_list checks the default set). */
static json_t *rpc(remem *db, const mcp_access *acc, const char *msg) {
    char *out = mcp_handle_groups(db, msg, strlen(msg), acc, MCP_GROUP_ALL);
    json_t *j;
    if (!out) return NULL;
    CHECK(strchr(out, '\n') == NULL); /* stdio needs one line per message */
    j = json_loads(out, 0, NULL);
    CHECK(j != NULL);
    free(out);
    return j;
}

static int error_code(json_t *resp) {
    json_t *code = json_object_get(json_object_get(resp, "error"), "code");
    return json_is_integer(code) ? (int)json_integer_value(code) : 0;
}

static const char *error_message(json_t *resp) {
    return json_string_value(json_object_get(json_object_get(resp, "error"), "message"));
}

/* Call a tool; returns the CallToolResult (NULL if the response was a
 * JSON-RPC error). Steals args. */
static json_t *call(remem *db, const mcp_access *acc, const char *name, json_t *args) {
    json_t *req = json_pack("{s:s, s:i, s:s, s:{s:s, s:o}}", "jsonrpc", "2.0", "id", 7, "method",
                            "tools/call", "params", "name", name, "arguments", args);
    char *text = json_dumps(req, JSON_COMPACT);
    json_t *resp = rpc(db, acc, text), *result;
    free(text);
    json_decref(req);
    CHECK_INT(json_integer_value(json_object_get(resp, "id")), 7);
    result = json_incref(json_object_get(resp, "result"));
    json_decref(resp);
    return result;
}

static int is_error(json_t *result) { return json_is_true(json_object_get(result, "isError")); }

static const char *result_text(json_t *result) {
    json_t *first = json_array_get(json_object_get(result, "content"), 0);
    CHECK_STR(json_string_value(json_object_get(first, "type")), "text");
    return json_string_value(json_object_get(first, "text"));
}

static json_t *structured(json_t *result) { return json_object_get(result, "structuredContent"); }

/* Remember text in ns; returns the new id (static buffer) or "". */
static const char *remember(remem *db, const mcp_access *acc, const char *ns, const char *text,
                            const char *metadata_json) {
    static char id[128];
    json_t *args = json_pack("{s:s, s:s}", "ns", ns, "text", text);
    if (metadata_json) json_object_set_new(args, "metadata", json_loads(metadata_json, 0, NULL));
    json_t *r = call(db, acc, "memory_add", args);
    id[0] = 0;
    CHECK(r && !is_error(r));
    if (r && !is_error(r))
        snprintf(id, sizeof id, "%s", json_string_value(json_object_get(structured(r), "id")));
    else if (r)
        fprintf(stderr, "  remember: %s\n", result_text(r));
    json_decref(r);
    return id;
}

/* The number of a recall's hits. */
static json_int_t hit_count(json_t *result) {
    return (json_int_t)json_array_size(json_object_get(structured(result), "hits"));
}

/* The ids of a recall's hits, in order, as one space-separated string. */
static void hit_ids(json_t *result, char *out, size_t cap) {
    json_t *hit;
    size_t i, len = 0;
    out[0] = 0;
    json_array_foreach(json_object_get(structured(result), "hits"), i, hit) {
        const char *id = json_string_value(json_object_get(hit, "id"));
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? " " : "", id ? id : "?");
        if (len >= cap) break;
    }
}

/* ------------------------------------------------------------------ */
/* JSON-RPC and lifecycle                                              */
/* ------------------------------------------------------------------ */

static void test_parse_error(void) {
    remem *db = open_store();
    json_t *r = rpc(db, NULL, "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\"");
    CHECK_INT(error_code(r), -32700);
    CHECK(json_is_null(json_object_get(r, "id")));
    CHECK_HAS(error_message(r), "parse error");
    json_decref(r);
    r = rpc(db, NULL, "");
    CHECK_INT(error_code(r), -32700);
    json_decref(r);
    /* A NUL inside the text is not JSON either. */
    char *out = mcp_handle(db, "{\"a\":1}\0{}", 10, NULL);
    r = json_loads(out, 0, NULL);
    CHECK_INT(error_code(r), -32700);
    json_decref(r);
    free(out);
    remem_close(db);
}

static void test_invalid_requests(void) {
    remem *db = open_store();
    json_t *r;
    /* Not an object. */
    r = rpc(db, NULL, "42");
    CHECK_INT(error_code(r), -32600);
    json_decref(r);
    /* Wrong or missing jsonrpc: the id is still echoed. */
    r = rpc(db, NULL, "{\"jsonrpc\":\"1.0\",\"id\":5,\"method\":\"ping\"}");
    CHECK_INT(error_code(r), -32600);
    CHECK_INT(json_integer_value(json_object_get(r, "id")), 5);
    json_decref(r);
    r = rpc(db, NULL, "{\"id\":\"x\",\"method\":\"ping\"}");
    CHECK_INT(error_code(r), -32600);
    CHECK_STR(json_string_value(json_object_get(r, "id")), "x");
    json_decref(r);
    /* Method missing or not a string. */
    r = rpc(db, NULL, "{\"jsonrpc\":\"2.0\",\"id\":6}");
    CHECK_INT(error_code(r), -32600);
    json_decref(r);
    r = rpc(db, NULL, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":3}");
    CHECK_INT(error_code(r), -32600);
    json_decref(r);
    /* Ids must be strings or integers. */
    r = rpc(db, NULL, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}");
    CHECK_INT(error_code(r), -32600);
    CHECK(json_is_null(json_object_get(r, "id")));
    json_decref(r);
    r = rpc(db, NULL, "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}");
    CHECK_INT(error_code(r), -32600);
    json_decref(r);
    /* An empty batch. */
    r = rpc(db, NULL, "[]");
    CHECK_INT(error_code(r), -32600);
    json_decref(r);
    remem_close(db);
}

static void test_method_errors(void) {
    remem *db = open_store();
    json_t *r;
    r = rpc(db, NULL, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"resources/list\"}");
    CHECK_INT(error_code(r), -32601);
    CHECK_HAS(error_message(r), "resources/list");
    CHECK_INT(json_integer_value(json_object_get(r, "id")), 9);
    json_decref(r);
    r = rpc(db, NULL,
            "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/list\","
            "\"params\":[1]}");
    CHECK_INT(error_code(r), -32602);
    json_decref(r);
    r = rpc(db, NULL,
            "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"initialize\","
            "\"params\":{}}");
    CHECK_INT(error_code(r), -32602);
    CHECK_HAS(error_message(r), "protocolVersion");
    json_decref(r);
    /* tools/call: no name, unknown tool, arguments not an object. */
    r = rpc(db, NULL,
            "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\","
            "\"params\":{}}");
    CHECK_INT(error_code(r), -32602);
    json_decref(r);
    r = rpc(db, NULL,
            "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\","
            "\"params\":{\"name\":\"levitate\"}}");
    CHECK_INT(error_code(r), -32602);
    CHECK_HAS(error_message(r), "levitate");
    json_decref(r);
    r = rpc(db, NULL,
            "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\","
            "\"params\":{\"name\":\"recall\",\"arguments\":\"tea\"}}");
    CHECK_INT(error_code(r), -32602);
    json_decref(r);
    remem_close(db);
}

static void test_initialize(void) {
    remem *db = open_store();
    json_t *r = rpc(db, NULL,
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                    "\"params\":{\"protocolVersion\":\"2025-03-26\","
                    "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\","
                    "\"version\":\"1\"}}}");
    json_t *res = json_object_get(r, "result");
    CHECK_STR(json_string_value(json_object_get(r, "jsonrpc")), "2.0");
    CHECK_INT(json_integer_value(json_object_get(r, "id")), 1);
    CHECK_STR(json_string_value(json_object_get(res, "protocolVersion")), "2025-03-26");
    CHECK(json_is_object(json_object_get(json_object_get(res, "capabilities"), "tools")));
    CHECK_STR(json_string_value(json_object_get(json_object_get(res, "serverInfo"), "name")),
              "remem");
    CHECK_STR(json_string_value(json_object_get(json_object_get(res, "serverInfo"), "version")),
              REMEM_VERSION);
    CHECK(json_string_length(json_object_get(res, "instructions")) > 40);
    json_decref(r);

    /* A version remem does not speak gets its latest; a known one echoes. */
    r = rpc(db, NULL,
            "{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"method\":\"initialize\","
            "\"params\":{\"protocolVersion\":\"2099-01-01\"}}");
    CHECK_STR(json_string_value(json_object_get(json_object_get(r, "result"), "protocolVersion")),
              MCP_LATEST_VERSION);
    CHECK_STR(json_string_value(json_object_get(r, "id")), "i");
    json_decref(r);
    r = rpc(db, NULL,
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\","
            "\"params\":{\"protocolVersion\":\"2025-06-18\"}}");
    CHECK_STR(json_string_value(json_object_get(json_object_get(r, "result"), "protocolVersion")),
              "2025-06-18");
    json_decref(r);
    remem_close(db);
}

static void test_notifications_and_ping(void) {
    remem *db = open_store();
    json_t *r;
    CHECK(rpc(db, NULL,
              "{\"jsonrpc\":\"2.0\",\"method\":"
              "\"notifications/initialized\"}") == NULL);
    CHECK(rpc(db, NULL, "{\"jsonrpc\":\"2.0\",\"method\":\"no/such\"}") == NULL);
    /* A notification never gets an answer, even a malformed one. */
    CHECK(rpc(db, NULL,
              "{\"jsonrpc\":\"2.0\",\"method\":\"tools/list\","
              "\"params\":7}") == NULL);
    /* A response from the client (remem sends no requests) is ignored. */
    CHECK(rpc(db, NULL, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}") == NULL);
    r = rpc(db, NULL,
            "{\"jsonrpc\":\"2.0\",\"id\":123456789012,"
            "\"method\":\"ping\"}");
    CHECK(json_is_object(json_object_get(r, "result")));
    CHECK_INT(json_object_size(json_object_get(r, "result")), 0);
    CHECK(json_integer_value(json_object_get(r, "id")) == 123456789012LL);
    json_decref(r);
    remem_close(db);
}

static void test_batches(void) {
    remem *db = open_store();
    json_t *r;
    r = rpc(db, NULL,
            "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},"
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\"},"
            "17]");
    CHECK(json_is_array(r));
    CHECK_INT(json_array_size(r), 3);
    CHECK_INT(json_integer_value(json_object_get(json_array_get(r, 0), "id")), 1);
    CHECK(json_object_get(json_array_get(r, 0), "result") != NULL);
    CHECK_INT(error_code(json_array_get(r, 1)), -32601);
    CHECK_INT(error_code(json_array_get(r, 2)), -32600);
    json_decref(r);
    /* Only notifications: nothing to answer. */
    CHECK(rpc(db, NULL, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}]") ==
          NULL);
    /* initialize must not be batched. */
    r = rpc(db, NULL,
            "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
            "\"params\":{\"protocolVersion\":\"2025-03-26\"}}]");
    CHECK_INT(error_code(json_array_get(r, 0)), -32600);
    json_decref(r);
    remem_close(db);
}

/* tools/list with the groups (MCP_GROUP_* bits): the parsed response and
 * its text length in *len. */
static json_t *tools_list(remem *db, unsigned groups, size_t *len) {
    static const char msg[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}";
    char *out = mcp_handle_groups(db, msg, strlen(msg), NULL, groups);
    CHECK(out != NULL);
    *len = out ? strlen(out) : 0;
    json_t *j = out ? json_loads(out, 0, NULL) : NULL;
    free(out);
    return json_object_get(json_object_get(j, "result"), "tools") ? j : (json_decref(j), NULL);
}

static json_t *tool_named(json_t *list, const char *name) {
    size_t i;
    json_t *t;
    json_array_foreach(list, i, t) if (!strcmp(json_string_value(json_object_get(t, "name")), name))
        return t;
    return NULL;
}

/* The default set: the few tools a model needs to remember and recall,
 * under 4 KB in all, each described for a model (never naming a seed),
 * with annotations; no admin tool, no second get. */
static void test_tools_list(void) {
    static const char *const want[] = {"memory_add", "recall", "memory_update", "memory_invalidate",
                                       "memory_forget", "context", "memory_get"};
    remem *db = open_store();
    size_t len, i;
    json_t *r = tools_list(db, MCP_GROUP_CORE, &len), *t;
    json_t *list = json_object_get(json_object_get(r, "result"), "tools");
    CHECK(len < 4096);
    CHECK(json_array_size(list) >= sizeof want / sizeof *want && json_array_size(list) <= 9);
    for (i = 0; i < sizeof want / sizeof *want; i++) {
        if (!tool_named(list, want[i])) fprintf(stderr, "  tool %s missing\n", want[i]);
        CHECK(tool_named(list, want[i]) != NULL);
    }
    CHECK(tool_named(list, "get") == NULL);
    CHECK(tool_named(list, "repair") == NULL && tool_named(list, "eval_lessons") == NULL);
    json_array_foreach(list, i, t) {
        const char *d = json_string_value(json_object_get(t, "description"));
        CHECK(d && strlen(d) > 30 && !strcasestr(d, "seed"));
        json_t *in = json_object_get(t, "inputSchema");
        CHECK_STR(json_string_value(json_object_get(in, "type")), "object");
        CHECK(json_is_object(json_object_get(in, "properties")));
        json_t *an = json_object_get(t, "annotations");
        CHECK(json_is_boolean(json_object_get(an, "readOnlyHint")));
        CHECK(json_is_false(json_object_get(an, "openWorldHint")));
    }
    /* recall takes query (or a vector, so neither is required) */
    json_t *rprops = json_object_get(json_object_get(tool_named(list, "recall"), "inputSchema"),
                                     "properties");
    CHECK(json_object_get(rprops, "query") != NULL && json_object_get(rprops, "ns") != NULL);
    CHECK(json_object_get(rprops, "text") == NULL && json_object_get(rprops, "namespaces") == NULL);
    /* context's advanced arguments (x-advanced) are not shown, but taken */
    json_t *props = json_object_get(json_object_get(tool_named(list, "context"), "inputSchema"),
                                    "properties");
    CHECK(json_object_get(props, "query") != NULL && json_object_get(props, "now") == NULL);
    char *shown = json_dumps(props, 0);
    CHECK(shown && !strstr(shown, "x-"));
    free(shown);
    json_decref(r);
    r = call(db, NULL, "context",
             json_pack("{s:s, s:s, s:s, s:b}", "ns", "n", "query", "tea", "now",
                       "2025-05-08T13:56:00Z", "touch", 0));
    CHECK(r && !is_error(r));
    json_decref(r);
    remem_close(db);
}

/* The annotations say what each operation does (remem_op_info.hints). */
static void test_tool_annotations(void) {
    remem *db = open_store();
    size_t len;
    json_t *r = tools_list(db, MCP_GROUP_ALL, &len);
    json_t *list = json_object_get(json_object_get(r, "result"), "tools");
    json_t *an = json_object_get(tool_named(list, "memory_get"), "annotations");
    CHECK(json_is_true(json_object_get(an, "readOnlyHint")));
    an = json_object_get(tool_named(list, "memory_forget"), "annotations");
    CHECK(json_is_false(json_object_get(an, "readOnlyHint")));
    CHECK(json_is_true(json_object_get(an, "destructiveHint")));
    an = json_object_get(tool_named(list, "prune"), "annotations");
    CHECK(json_is_true(json_object_get(an, "destructiveHint")));
    an = json_object_get(tool_named(list, "decision_add"), "annotations");
    CHECK(json_is_false(json_object_get(an, "destructiveHint")));
    CHECK(json_is_false(json_object_get(an, "idempotentHint")));
    an = json_object_get(tool_named(list, "restore"), "annotations");
    CHECK(json_is_true(json_object_get(an, "idempotentHint")));
    json_decref(r);
    remem_close(db);
}

/* Every operation is in a known group and every tool, in any set, is
 * described without naming a seed; --tools adds groups, all adds every
 * operation, and a tool outside the set is refused naming its group. */
static void test_tool_groups(void) {
    remem *db = open_store();
    unsigned g = 0;
    char err[256] = "";
    size_t n, len, i;
    const remem_op_info *ops = remem_ops(&n);
    for (i = 0; i < n; i++) {
        CHECK(mcp_groups_parse(ops[i].group, &g, err, sizeof err) == 0);
        CHECK(!strcasestr(ops[i].summary, "seed"));
    }
    CHECK(mcp_groups_parse("memory, lessons", &g, err, sizeof err) == 0);
    CHECK(g & MCP_GROUP_CORE);
    CHECK(mcp_groups_parse("memory,levitate", &g, err, sizeof err) == -1);
    CHECK(strstr(err, "levitate") != NULL);
    json_t *r = tools_list(db, MCP_GROUP_ALL, &len);
    json_t *list = json_object_get(json_object_get(r, "result"), "tools"), *t;
    for (i = 0; i < n; i++) {
        char name[128];
        snprintf(name, sizeof name, "%s", ops[i].name);
        for (char *p = name; *p; p++)
            if (*p == '.') *p = '_';
        CHECK(tool_named(list, name) != NULL);
    }
    json_array_foreach(list, i, t) {
        CHECK(!strcasestr(json_string_value(json_object_get(t, "description")), "seed"));
    }
    json_decref(r);
    CHECK(mcp_groups_parse("lessons", &g, err, sizeof err) == 0);
    r = tools_list(db, g, &len);
    list = json_object_get(json_object_get(r, "result"), "tools");
    CHECK(tool_named(list, "lesson_hints") != NULL && tool_named(list, "recall") != NULL);
    CHECK(tool_named(list, "decision_add") == NULL && tool_named(list, "check") == NULL);
    json_decref(r);
    /* an admin tool, not offered by default: refused naming its group */
    static const char msg[] = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
                              "\"params\":{\"name\":\"check\",\"arguments\":{}}}";
    char *out = mcp_handle(db, msg, strlen(msg), NULL);
    r = out ? json_loads(out, 0, NULL) : NULL;
    free(out);
    CHECK_INT(error_code(r), -32602);
    CHECK(error_message(r) && strstr(error_message(r), "admin"));
    json_decref(r);
    out = mcp_handle_groups(db, msg, strlen(msg), NULL, MCP_GROUP_ALL);
    r = out ? json_loads(out, 0, NULL) : NULL;
    free(out);
    CHECK(json_is_object(json_object_get(r, "result")));
    json_decref(r);
    remem_close(db);
}

/* ------------------------------------------------------------------ */
/* Tools                                                               */
/* ------------------------------------------------------------------ */

static void test_remember_and_recall(void) {
    remem *db = open_store();
    char tea[128], deploy[128], ids[1024];
    snprintf(tea, sizeof tea, "%s",
             remember(db, NULL, "agent:a", "The user drinks green tea every morning, never coffee",
                      "{\"topic\":\"drinks\"}"));
    snprintf(deploy, sizeof deploy, "%s",
             remember(db, NULL, "agent:a", "Production deploys happen on Tuesdays after standup",
                      "{\"topic\":\"ops\"}"));
    remember(db, NULL, "agent:a", "The staging database password rotates every thirty days",
             "{\"topic\":\"ops\"}");
    CHECK(tea[0] && deploy[0] && strcmp(tea, deploy) != 0);

    /* The same text again is a duplicate of the first. */
    json_t *r = call(db, NULL, "memory_add",
                     json_pack("{s:s, s:s}", "ns", "agent:a", "text",
                               "The user drinks green tea every morning, "
                               "never coffee"));
    CHECK_STR(json_string_value(json_object_get(structured(r), "outcome")), "duplicate");
    CHECK_STR(json_string_value(json_object_get(structured(r), "id")), tea);
    CHECK_HAS(result_text(r), tea);
    json_decref(r);

    r = call(db, NULL, "recall",
             json_pack("{s:s, s:s, s:i}", "query",
                       "what does the user drink in the morning, green tea?", "ns", "agent:a", "k",
                       2));
    CHECK(r && !is_error(r));
    hit_ids(r, ids, sizeof ids);
    CHECK(strncmp(ids, tea, strlen(tea)) == 0);
    CHECK(hit_count(r) >= 1 && hit_count(r) <= 2);
    json_t *hit0 = json_array_get(json_object_get(structured(r), "hits"), 0);
    json_t *comp = json_object_get(hit0, "components");
    CHECK(json_is_number(json_object_get(hit0, "score")));
    CHECK(json_real_value(json_object_get(comp, "relevance")) > 0);
    CHECK(json_is_number(json_object_get(comp, "lexical")));
    CHECK(json_is_number(json_object_get(comp, "recency")));
    CHECK(json_is_number(json_object_get(comp, "importance")));
    CHECK_STR(json_string_value(json_object_get(json_object_get(hit0, "metadata"), "topic")),
              "drinks");
    CHECK(json_is_array(json_object_get(comp, "lanes")));
    CHECK(json_is_number(json_object_get(comp, "context")));
    CHECK_HAS(result_text(r), "\"context\"");
    CHECK_HAS(result_text(r), "green tea every morning");
    CHECK_HAS(result_text(r), "score");
    CHECK_HAS(result_text(r), "relevance");
    json_decref(r);

    /* A filter narrows: only ops memories, the deploy one first. */
    r = call(db, NULL, "recall",
             json_pack("{s:s, s:[s], s:{s:s}}", "query", "when do production deploys happen",
                       "namespaces", "agent:a", "filter", "topic", "ops"));
    hit_ids(r, ids, sizeof ids);
    CHECK(strncmp(ids, deploy, strlen(deploy)) == 0);
    CHECK(strstr(ids, tea) == NULL);
    json_decref(r);

    /* The filter may also come as JSON text. */
    r = call(db, NULL, "recall",
             json_pack("{s:s, s:s, s:s}", "query", "green tea", "ns", "agent:a", "filter",
                       "{\"topic\": \"drinks\"}"));
    CHECK_INT(hit_count(r), 1);
    json_decref(r);
    remem_close(db);
}

static void test_tool_argument_errors(void) {
    remem *db = open_store();
    json_t *r;
    r = call(db, NULL, "memory_add", json_pack("{s:s}", "text", "no namespace"));
    CHECK(is_error(r));
    CHECK_HAS(result_text(r), "ns: is required");
    CHECK(structured(r) == NULL);
    json_decref(r);
    r = call(db, NULL, "memory_add",
             json_pack("{s:s, s:s, s:f}", "ns", "a", "text", "x", "importance", 2.0));
    CHECK(is_error(r));
    CHECK_HAS(result_text(r), "importance");
    json_decref(r);
    r = call(db, NULL, "memory_add",
             json_pack("{s:s, s:s, s:[]}", "ns", "a", "text", "x", "metadata"));
    CHECK(is_error(r));
    CHECK_HAS(result_text(r), "metadata");
    json_decref(r);
    r = call(db, NULL, "recall", json_pack("{s:s}", "ns", "a"));
    CHECK(is_error(r));
    CHECK_HAS(result_text(r), "query: missing"); /* the library's message */
    json_decref(r);
    r = call(db, NULL, "recall", json_pack("{s:s, s:s, s:i}", "query", "q", "ns", "a", "k", 0));
    CHECK(is_error(r));
    json_decref(r);
    r = call(db, NULL, "recall",
             json_pack("{s:s, s:s, s:[i]}", "query", "q", "ns", "a", "namespaces", 3));
    CHECK(is_error(r));
    json_decref(r);
    /* Nothing was written by any of these. */
    char *ns = NULL;
    CHECK_INT(remem_namespaces(db, &ns), REMEM_OK);
    json_t *list = json_loads(ns ? ns : "", 0, NULL);
    CHECK(json_is_array(list) && json_array_size(list) == 0);
    json_decref(list);
    remem_free(ns);
    remem_close(db);
}

static void test_malformed_filter(void) {
    remem *db = open_store();
    remember(db, NULL, "agent:a", "something to find", NULL);
    json_t *r = call(db, NULL, "recall",
                     json_pack("{s:s, s:s, s:{s:{s:s}}}", "query", "find", "ns", "agent:a",
                               "filter", "kind", "$regexx", "x"));
    CHECK(r != NULL);
    CHECK(is_error(r));
    CHECK_HAS(result_text(r), "$regexx");
    CHECK_HAS(result_text(r), "REMEM_EFILTER");
    json_decref(r);
    r = call(db, NULL, "recall",
             json_pack("{s:s, s:s, s:s}", "query", "find", "ns", "agent:a", "filter", "{not json"));
    CHECK(is_error(r));
    json_decref(r);
    remem_close(db);
}

static void test_update_get_invalidate_forget(void) {
    remem *db = open_store();
    char a[128], b[128], c[128], ids[1024];
    json_t *r;
    snprintf(a, sizeof a, "%s", remember(db, NULL, "n", "The build server is called hopper", NULL));
    snprintf(b, sizeof b, "%s",
             remember(db, NULL, "n", "Lunch is served at noon in the atrium", NULL));
    snprintf(c, sizeof c, "%s",
             remember(db, NULL, "n", "The office wifi password is on the fridge", NULL));

    r = call(db, NULL, "memory_update",
             json_pack("{s:s, s:s, s:s, s:f, s:{s:i}}", "ns", "n", "id", a, "text",
                       "The build server was renamed to lovelace", "importance", 0.8, "metadata",
                       "rev", 2));
    CHECK(r && !is_error(r));
    /* The answer is the write's shape (id, ns, outcome), no stored content:
     * the same as HTTP and the CLI, and safe for a write-only caller. */
    CHECK_STR(json_string_value(json_object_get(structured(r), "outcome")), "updated");
    CHECK_STR(json_string_value(json_object_get(structured(r), "id")), a);
    CHECK(json_object_get(structured(r), "memory") == NULL);
    CHECK(strstr(result_text(r), "lovelace") == NULL);
    json_decref(r);
    r = call(db, NULL, "memory_get", json_pack("{s:s, s:s}", "ns", "n", "id", a));
    json_t *m = json_object_get(structured(r), "memory");
    CHECK_STR(json_string_value(json_object_get(m, "text")),
              "The build server was renamed to lovelace");
    CHECK_NEAR(json_number_value(json_object_get(m, "importance")), 0.8, 1e-9);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(m, "metadata"), "rev")), 2);
    json_decref(r);

    r = call(db, NULL, "memory_update", json_pack("{s:s, s:s}", "ns", "n", "id", a));
    CHECK(is_error(r));
    CHECK_HAS(result_text(r), "nothing to change");
    json_decref(r);
    r = call(db, NULL, "memory_update",
             json_pack("{s:s, s:s, s:s}", "ns", "n", "id", "no-such-id", "text", "x"));
    CHECK(is_error(r));
    CHECK_HAS(result_text(r), "REMEM_ENOTFOUND");
    json_decref(r);

    r = call(db, NULL, "memory_get", json_pack("{s:s, s:s}", "ns", "n", "id", a));
    CHECK_STR(json_string_value(json_object_get(json_object_get(structured(r), "memory"), "text")),
              "The build server was renamed to lovelace");
    json_decref(r);

    /* Invalidate: out of recall, back with include_invalid. */
    r = call(db, NULL, "memory_invalidate",
             json_pack("{s:s, s:s, s:s}", "ns", "n", "id", b, "reason", "lunch moved"));
    CHECK(r && !is_error(r));
    CHECK_STR(json_string_value(json_object_get(structured(r), "outcome")), "invalidated");
    json_decref(r);
    r = call(db, NULL, "recall", json_pack("{s:s, s:s}", "query", "lunch atrium noon", "ns", "n"));
    hit_ids(r, ids, sizeof ids);
    CHECK(strstr(ids, b) == NULL);
    json_decref(r);
    r = call(db, NULL, "recall",
             json_pack("{s:s, s:s, s:b}", "query", "lunch atrium noon", "ns", "n",
                       "include_invalid", 1));
    hit_ids(r, ids, sizeof ids);
    CHECK(strstr(ids, b) != NULL);
    json_decref(r);

    /* Forget archives; get still finds it, recall does not. */
    r = call(db, NULL, "memory_forget", json_pack("{s:s, s:s}", "ns", "n", "id", a));
    CHECK(r && !is_error(r));
    CHECK(json_is_false(json_object_get(structured(r), "purged")));
    json_decref(r);
    r = call(db, NULL, "memory_get", json_pack("{s:s, s:s}", "ns", "n", "id", a));
    CHECK_STR(json_string_value(json_object_get(json_object_get(structured(r), "memory"), "tier")),
              "archived");
    json_decref(r);
    r = call(db, NULL, "recall",
             json_pack("{s:s, s:s}", "query", "build server lovelace", "ns", "n"));
    hit_ids(r, ids, sizeof ids);
    CHECK(strstr(ids, a) == NULL);
    json_decref(r);

    /* Purge deletes for good. */
    r = call(db, NULL, "memory_forget", json_pack("{s:s, s:s, s:b}", "ns", "n", "id", c, "purge", 1));
    CHECK(json_is_true(json_object_get(structured(r), "purged")));
    json_decref(r);
    r = call(db, NULL, "memory_get", json_pack("{s:s, s:s}", "ns", "n", "id", c));
    CHECK(is_error(r));
    CHECK_HAS(result_text(r), "REMEM_ENOTFOUND");
    json_decref(r);
    remem_close(db);
}

static void test_namespaces(void) {
    remem *db = open_store();
    remember(db, NULL, "agent:x", "one", NULL);
    remember(db, NULL, "agent:x", "two", NULL);
    remember(db, NULL, "agent:y", "three", NULL);
    json_t *r = call(db, NULL, "namespaces", json_object());
    json_t *list = json_object_get(structured(r), "namespaces"), *v;
    size_t i;
    int seen = 0;
    CHECK_INT(json_array_size(list), 2);
    json_array_foreach(list, i, v) {
        const char *ns = json_string_value(json_object_get(v, "ns"));
        if (ns && strcmp(ns, "agent:x") == 0) {
            CHECK_INT(json_integer_value(json_object_get(v, "count")), 2);
            seen++;
        }
    }
    CHECK_INT(seen, 1);
    CHECK_HAS(result_text(r), "agent:y");
    json_decref(r);
    remem_close(db);
}

/* ------------------------------------------------------------------ */
/* Access control                                                      */
/* ------------------------------------------------------------------ */

/* The test's policy: "team:*" read and write, "shared" read only,
 * "boss" everything; nothing else, and nothing over every namespace. */
static int policy(void *ctx, const char *ns, int right) {
    int *calls = ctx;
    (*calls)++;
    if (!ns) return 0; /* no right over every namespace */
    if (strncmp(ns, "team:", 5) == 0) return right & (MCP_READ | MCP_WRITE);
    if (strcmp(ns, "shared") == 0) return right == MCP_READ;
    if (strcmp(ns, "boss") == 0) return 1;
    return 0;
}

static void test_access_control(void) {
    remem *db = open_store();
    int calls = 0;
    mcp_access acc = {policy, &calls};
    char secret[128], team[128], ids[2048];
    json_t *r;

    /* Seed with full rights. */
    snprintf(secret, sizeof secret, "%s",
             remember(db, NULL, "private", "the launch code is 0000 banana", NULL));
    remember(db, NULL, "shared", "banana bread recipe uses three bananas", NULL);
    snprintf(team, sizeof team, "%s",
             remember(db, &acc, "team:a", "banana supplier is in Ecuador", NULL));
    CHECK(team[0] != 0);
    CHECK(calls > 0);

    /* Writes outside the policy fail and write nothing. */
    r = call(db, &acc, "memory_add", json_pack("{s:s, s:s}", "ns", "shared", "text", "graffiti"));
    CHECK(is_error(r));
    CHECK_HAS(result_text(r), "access denied");
    CHECK_HAS(result_text(r), "shared");
    json_decref(r);
    r = call(db, &acc, "memory_add", json_pack("{s:s, s:s}", "ns", "private", "text", "graffiti"));
    CHECK(is_error(r));
    json_decref(r);
    r = call(db, NULL, "recall",
             json_pack("{s:s, s:[s,s], s:b}", "query", "graffiti", "namespaces", "shared",
                       "private", "include_invalid", 1));
    CHECK(r && !is_error(r));
    CHECK(strstr(result_text(r), "graffiti\n") == NULL);
    json_decref(r);
    char *counts = NULL;
    CHECK_INT(remem_namespaces(db, &counts), REMEM_OK);
    CHECK_HAS(counts, "\"count\":1"); /* shared and private: one each */
    CHECK(strstr(counts, "\"count\":2") == NULL);
    remem_free(counts);

    /* Reads of a forbidden namespace fail, alone or among allowed ones. */
    r = call(db, &acc, "recall", json_pack("{s:s, s:s}", "query", "launch code", "ns", "private"));
    CHECK(is_error(r));
    CHECK_HAS(result_text(r), "private");
    CHECK(strstr(result_text(r), "banana") == NULL);
    json_decref(r);
    r = call(db, &acc, "recall",
             json_pack("{s:s, s:[s,s]}", "query", "banana", "namespaces", "team:a", "private"));
    CHECK(is_error(r));
    json_decref(r);
    r = call(db, &acc, "memory_get", json_pack("{s:s, s:s}", "ns", "private", "id", secret));
    CHECK(is_error(r));
    CHECK(strstr(result_text(r), "0000") == NULL);
    json_decref(r);

    /* Readable namespaces named: only those are searched. */
    r = call(db, &acc, "recall",
             json_pack("{s:s, s:i, s:[s,s]}", "query", "banana launch code", "k", 10, "ns",
                       "team:a", "shared"));
    CHECK(r && !is_error(r));
    hit_ids(r, ids, sizeof ids);
    CHECK(strstr(ids, secret) == NULL);
    CHECK(strstr(ids, team) != NULL);
    CHECK_INT(hit_count(r), 2);
    json_decref(r);

    /* No namespace named is store-wide: the caller needs the right (and
     * admin) over every namespace, as over HTTP; nothing comes back. */
    r = call(db, &acc, "recall", json_pack("{s:s, s:i}", "query", "banana launch code", "k", 10));
    CHECK(is_error(r));
    CHECK_HAS(result_text(r), "access denied");
    CHECK(strstr(result_text(r), "banana") == NULL);
    json_decref(r);
    r = call(db, &acc, "namespaces", json_object());
    CHECK(is_error(r));
    CHECK_HAS(result_text(r), "access denied");
    CHECK(strstr(result_text(r), "private") == NULL && strstr(result_text(r), "team:a") == NULL);
    json_decref(r);

    /* Changes need write; purge needs admin. */
    r = call(db, &acc, "memory_update",
             json_pack("{s:s, s:s, s:f}", "ns", "private", "id", secret, "importance", 0.1));
    CHECK(is_error(r));
    json_decref(r);
    r = call(db, &acc, "memory_invalidate", json_pack("{s:s, s:s}", "ns", "private", "id", secret));
    CHECK(is_error(r));
    json_decref(r);
    r = call(db, &acc, "memory_forget", json_pack("{s:s, s:s}", "ns", "private", "id", secret));
    CHECK(is_error(r));
    json_decref(r);
    r = call(db, &acc, "memory_forget",
             json_pack("{s:s, s:s, s:b}", "ns", "team:a", "id", team, "purge", 1));
    CHECK(is_error(r));
    CHECK_HAS(result_text(r), "admin");
    json_decref(r);
    r = call(db, &acc, "memory_forget", json_pack("{s:s, s:s}", "ns", "team:a", "id", team));
    CHECK(r && !is_error(r));
    json_decref(r);

    /* The secret is untouched. */
    remem_record *rec = NULL;
    CHECK_INT(remem_get(db, "private", secret, &rec), REMEM_OK);
    if (rec) {
        const remem_memory *m = remem_record_memory(rec);
        CHECK_STR(m->tier, "short");
        CHECK(m->invalidated_at == 0);
        CHECK(m->importance != 0.1);
    }
    remem_record_free(rec);
    remem_close(db);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_parse_error);
    RUN(test_invalid_requests);
    RUN(test_method_errors);
    RUN(test_initialize);
    RUN(test_notifications_and_ping);
    RUN(test_batches);
    RUN(test_tools_list);
    RUN(test_tool_annotations);
    RUN(test_tool_groups);
    RUN(test_remember_and_recall);
    RUN(test_tool_argument_errors);
    RUN(test_malformed_filter);
    RUN(test_update_get_invalidate_forget);
    RUN(test_namespaces);
    RUN(test_access_control);
    return TEST_EXIT();
}
