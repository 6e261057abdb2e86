/*
 * route_table.c: the one list of what the server answers, as data: the
 * dispatcher (routes.c) matches against it and metrics (metrics.c) name
 * their counters after it. A REST route over memories names the operation
 * it runs (routes_ops.c maps its path, body or query string onto the
 * operation's arguments), so the route and POST /v1/<operation> take the
 * same arguments with the same checks. docs/openapi.json must describe exactly these
 * (tests/e2e/serve_openapi.sh checks it).
 */
#include "serverInt.h"

const route server_routes[R_COUNT] = {
    [R_HEALTHZ] = {"GET", "/healthz", RF_PUBLIC},
    [R_METRICS] = {"GET", "/metrics", 0},
    [R_OPENAPI] = {"GET", "/openapi.json", RF_PUBLIC},
    [R_MCP_POST] = {"POST", "/mcp", RF_BODY},
    [R_MCP_GET] = {"GET", "/mcp", 0},
    [R_MCP_DELETE] = {"DELETE", "/mcp", 0},
    [R_PROFILES] = {"GET", "/v1/profiles", 0},
    [R_PROFILE] = {"GET", "/v1/profiles/{name}", 0},
    [R_EMBED] = {"POST", "/v1/embed", RF_BODY},
    [R_NS_LIST] = {"GET", "/v1/namespaces", RF_VISIBLE, "namespaces"},
    [R_NS_CLEAR] = {"DELETE", "/v1/namespaces/{ns}", 0, "clear", "{\"yes\":true}"},
    [R_NS_STATS] = {"GET", "/v1/namespaces/{ns}/stats", 0, "stats"},
    [R_STATS] = {"GET", "/v1/stats", 0, "stats"},
    [R_ADD] = {"POST", "/v1/namespaces/{ns}/memories", RF_BODY | RF_ADDS, "memory.add"},
    [R_LIST] = {"GET", "/v1/namespaces/{ns}/memories", RF_QUERY, "memory.list"},
    [R_DELETE_BY] = {"POST", "/v1/namespaces/{ns}/memories:delete", RF_BODY, "memory.delete"},
    [R_BATCH] = {"POST", "/v1/namespaces/{ns}/memories:batch", RF_BODY | RF_ADDS,
                 "memory.add_batch"},
    [R_MEM_GET] = {"GET", "/v1/namespaces/{ns}/memories/{id}", 0, "memory.get", NULL, "memory"},
    [R_MEM_PATCH] = {"PATCH", "/v1/namespaces/{ns}/memories/{id}", RF_BODY, "memory.update"},
    [R_MEM_DELETE] = {"DELETE", "/v1/namespaces/{ns}/memories/{id}", RF_QUERY, "memory.forget"},
    [R_INVALIDATE] = {"POST", "/v1/namespaces/{ns}/memories/{id}:invalidate", RF_BODY_OPTIONAL,
                      "memory.invalidate"},
    [R_HISTORY] = {"GET", "/v1/namespaces/{ns}/memories/{id}/history", 0, "memory.history", NULL,
                   "history"},
    [R_EXPORT_NS] = {"GET", "/v1/namespaces/{ns}/export", RF_QUERY},
    [R_EXPORT_ALL] = {"GET", "/v1/export", RF_QUERY},
    [R_RECALL] = {"POST", "/v1/recall", RF_BODY, "recall"},
    [R_FIND_ID] = {"GET", "/v1/memories/{id}", 0},
    [R_OPS_LIST] = {"GET", "/v1/operations", 0},
    [R_UI] = {"GET", "/ui", RF_PUBLIC},
    [R_UI_ASSET] = {"GET", "/ui/{file}", RF_PUBLIC},
    /* Every library operation (remem_ops()): "decision.add" is
     * POST /v1/decision/add. Matched by routes.c against the operation
     * table, never by this template, which names the metrics' series. */
    [R_OP] = {"POST", "/v1/{operation}", RF_BODY},
};
