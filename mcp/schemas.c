/*
 * schemas.c: the MCP tool table: each tool's name, its description for
 * models (when to use it, what comes back), its input and output JSON
 * Schemas and its annotations. What a tool does lives in tools.c; what the
 * model is told about it lives here, so the two can be read apart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mcpInt.h"

/* ------------------------------------------------------------------ */
/* Tool descriptions and schemas                                       */
/* ------------------------------------------------------------------ */

static json_t *p_string(const char *desc) {
    return json_pack("{s:s, s:s}", "type", "string", "description", desc);
}

/* A property whose name says it all: its type only. */
static json_t *p_type(const char *type) { return json_pack("{s:s}", "type", type); }

static json_t *p_number(const char *desc, double lo, double hi) {
    return json_pack("{s:s, s:s, s:f, s:f}", "type", "number", "description", desc, "minimum", lo,
                     "maximum", hi);
}

static json_t *p_bool(const char *desc) {
    return json_pack("{s:s, s:s}", "type", "boolean", "description", desc);
}

static json_t *p_object(const char *desc) {
    return json_pack("{s:s, s:s}", "type", "object", "description", desc);
}

/* {"type":"object","properties":props,"required":[...]}; steals props. */
static json_t *schema(json_t *props, const char *req1, const char *req2) {
    json_t *s = json_pack("{s:s, s:o}", "type", "object", "properties", props);
    json_t *req = json_array();
    if (req1) json_array_append_new(req, json_string(req1));
    if (req2) json_array_append_new(req, json_string(req2));
    if (json_array_size(req) > 0)
        json_object_set_new(s, "required", req);
    else
        json_decref(req);
    return s;
}

/* Shared pieces of the descriptions. A model reads every one of them
 * before its first word, so each says what the model needs and no more. */
#define NS_DESC "Whose memory, e.g. \"user:alice\"."
#define METADATA_DESC "Facts to filter on later, e.g. {\"project\":\"acme\"}."
#define KIND_DESC "e.g. observation (default), decision, lesson."
#define IMPORTANCE_DESC "0 trivial .. 1 crucial."
/* The parts of the engine's memory rendering that clients rely on. */
static json_t *memory_schema(void) {
    return json_pack("{s:s, s:[s,s,s], s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, "
                     "s:{s:s}, s:{s:s}, s:{s:[s,s]}}}",
                     "type", "object", "required", "id", "ns", "text", "properties", "id", "type",
                     "string", "ns", "type", "string", "text", "type", "string", "kind", "type",
                     "string", "tier", "type", "string", "importance", "type", "number",
                     "created_at", "type", "string", "metadata", "type", "object", "null");
}

/* The tools' input schemas advertise the arguments a model needs; the
 * calls also take the rest of what remem_add, remem_update and recall
 * accept (tier, links, created_at, profile, ...), as docs/mcp.md says. */
static json_t *schema_remember_in(void) {
    return schema(json_pack("{s:o, s:o, s:o, s:o, s:o}", "ns", p_string(NS_DESC), "text",
                            p_string("Written to stand alone."), "kind",
                            p_string(KIND_DESC), "importance", p_number(IMPORTANCE_DESC, 0, 1),
                            "metadata", p_object(METADATA_DESC)),
                  "ns", "text");
}

/* The write answers are the library's (remem_write_result_json): the same
 * shape as over HTTP and on the command line. */
static json_t *write_out(const char *const *outcomes, const char *extra, json_t *extra_schema) {
    json_t *en = json_array();
    for (; *outcomes; outcomes++) json_array_append_new(en, json_string(*outcomes));
    json_t *s = json_pack("{s:s, s:[s,s], s:{s:{s:s}, s:{s:s}, s:{s:s, s:o}}}", "type", "object",
                          "required", "ns", "outcome", "properties", "id", "type", "string", "ns",
                          "type", "string", "outcome", "type", "string", "enum", en);
    if (extra) json_object_set_new(json_object_get(s, "properties"), extra, extra_schema);
    return s;
}

static json_t *schema_remember_out(void) {
    static const char *const o[] = {"added", "upserted", "duplicate", "accepted", NULL};
    return write_out(o, NULL, NULL);
}

static json_t *schema_update_out(void) {
    static const char *const o[] = {"updated", NULL};
    return write_out(o, NULL, NULL);
}

static json_t *schema_recall_in(void) {
    return schema(
        json_pack("{s:o, s:o, s:o, s:o}", "query", p_string("What you need, in words."), "ns",
                  p_string(NS_DESC " Default: every one you may read."), "k",
                  json_pack("{s:s, s:s, s:i, s:i}", "type", "integer", "description",
                            "At most this many.", "minimum", 1, "maximum",
                            MCP_MAX_RECALL_K),
                  "filter",
                  p_object("On metadata and kind, importance, created_at: {\"kind\":\"lesson\"}, "
                           "{\"importance\":{\"$gte\":0.7}}; $and $or $not $in $contains.")),
        "query", NULL);
}

/* A hit is a memory (the engine's rendering) plus its score and the
 * components that made it. */
static json_t *schema_recall_out(void) {
    json_t *hit = memory_schema();
    json_t *props = json_object_get(hit, "properties");
    json_object_set_new(props, "score", json_pack("{s:s}", "type", "number"));
    json_t *components = json_pack(
        "{s:s, s:[s,s,s,s], s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, "
        "s:{s:[s,s]}, s:{s:s}, s:{s:s, s:{s:s}}}}",
        "type", "object", "required", "relevance", "lexical", "recency", "importance", "properties",
        "relevance", "type", "number", "lexical", "type", "number", "recency", "type", "number",
        "importance", "type", "number", "similarity", "type", "number", "null", "bm25", "type",
        "number", "lanes", "type", "array", "items", "type", "string");
    json_object_set_new(json_object_get(components, "properties"), "context",
                        json_pack("{s:s}", "type", "number"));
    json_object_set_new(props, "components", components);
    json_array_append_new(json_object_get(hit, "required"), json_string("score"));
    json_array_append_new(json_object_get(hit, "required"), json_string("components"));
    return json_pack("{s:s, s:[s,s], s:{s:{s:s}, s:{s:s}, s:{s:s, s:o}}}", "type", "object",
                     "required", "count", "hits", "properties", "profile", "type", "string",
                     "count", "type", "integer", "hits", "type", "array", "items", hit);
}

static json_t *schema_update_in(void) {
    return schema(json_pack("{s:o, s:o, s:o, s:o, s:o}", "ns", p_string(NS_DESC), "id",
                            p_type("string"), "text", p_type("string"), "importance",
                            p_number(IMPORTANCE_DESC, 0, 1), "metadata",
                            p_object("Replaces the whole metadata object.")),
                  "ns", "id");
}

static json_t *schema_invalidate_in(void) {
    return schema(json_pack("{s:o, s:o, s:o, s:o}", "ns", p_string(NS_DESC), "id",
                            p_type("string"), "superseded_by",
                            p_type("string"), "reason",
                            p_type("string")),
                  "ns", "id");
}

static json_t *schema_invalidate_out(void) {
    static const char *const o[] = {"invalidated", NULL};
    return write_out(o, "superseded_by", json_pack("{s:[s,s]}", "type", "string", "null"));
}

static json_t *schema_forget_in(void) {
    return schema(json_pack("{s:o, s:o, s:o}", "ns", p_string(NS_DESC), "id", p_type("string"),
                            "purge",
                            p_bool("Delete for good, not archive (admin right).")),
                  "ns", "id");
}

static json_t *schema_forget_out(void) {
    static const char *const o[] = {"archived", "purged", NULL};
    return write_out(o, "purged", json_pack("{s:s}", "type", "boolean"));
}

static json_t *schema_empty_in(void) { return schema(json_object(), NULL, NULL); }

static json_t *schema_namespaces_out(void) {
    return json_pack("{s:s, s:[s], s:{s:{s:s, s:{s:s, s:[s], s:{s:{s:s}, s:{s:s}}}}}}", "type",
                     "object", "required", "namespaces", "properties", "namespaces", "type",
                     "array", "items", "type", "object", "required", "ns", "properties", "ns",
                     "type", "string", "count", "type", "integer");
}

const mcp_tool mcp_tools[] = {
    {"remember", "Remember",
     "Store a fact, preference, outcome or lesson worth having later. Returns its id.",
     "core", "memory.add", schema_remember_in, schema_remember_out, 0, 0, 0, mcp_tool_remember},
    {"recall", "Recall",
     "Find the memories that matter to a query, best first. Use it before acting or answering.",
     "core", "recall", schema_recall_in, schema_recall_out, 1, 0, 1, mcp_tool_recall},
    {"update", "Update a memory",
     "Correct or complete a memory in place; its history keeps the old version.", "core",
     "memory.update", schema_update_in, schema_update_out, 0, 1, 1, mcp_tool_update},
    {"invalidate", "Invalidate a memory",
     "Mark a memory superseded or wrong: it leaves recall, its history stays.",
     "core", "memory.invalidate", schema_invalidate_in, schema_invalidate_out, 0, 0, 1,
     mcp_tool_invalidate},
    {"forget", "Forget a memory",
     "Take a memory out of recall (archived; purge deletes it for good).", "core",
     "memory.forget", schema_forget_in, schema_forget_out, 0, 1, 1, mcp_tool_forget},
    {"list_namespaces", "List namespaces",
     "The namespaces you may read, with how many memories each holds.", "memory", "namespaces",
     schema_empty_in, schema_namespaces_out, 1, 0, 1, mcp_tool_list_namespaces},
};

const size_t mcp_n_tools = sizeof mcp_tools / sizeof mcp_tools[0];

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
json_t *mcp_tool_json(const mcp_tool *t) {
    return json_pack("{s:s, s:s, s:o, s:o}", "name", t->name, "description", t->description,
                     "inputSchema", t->input_schema(), "annotations",
                     annotations(t->read_only, t->destructive, t->idempotent));
}

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

/* The schema as a tool's inputSchema: the CLI's own keywords (x-*) are
 * left out. */
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
