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

/* A time: ISO 8601 text or integer milliseconds. */
static json_t *p_time(const char *desc) {
    return json_pack("{s:[s,s], s:s}", "type", "string", "integer", "description", desc);
}

static json_t *p_ids(const char *desc) {
    return json_pack("{s:s, s:{s:s}, s:s}", "type", "array", "items", "type", "string",
                     "description", desc);
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

/* Shared pieces of the descriptions. */
#define NS_DESC                                                 \
    "Namespace: whose memory this is, e.g. \"agent:planner\", " \
    "\"user:alice\", \"project:acme\". Use the same namespace consistently."
#define ID_DESC "The memory's id, as returned by remember or recall."
#define METADATA_DESC                                                \
    "A JSON object of facts to filter on later, e.g. {\"project\": " \
    "\"acme\", \"reward\": 0.8}."
#define KIND_DESC                                                           \
    "What sort of memory: observation (default), reflection, plan, "        \
    "summary, decision, lesson, feedback, episode, static (never decays), " \
    "or your own word."
#define IMPORTANCE_DESC                                                  \
    "How much this matters, from 0 (trivial) to 1 (crucial). Leave out " \
    "for the kind's default."
#define TIER_DESC                                                          \
    "static (identity and rules: never decays), short, long, or archived " \
    "(out of recall)."

/* The parts of the engine's memory rendering that clients rely on. */
static json_t *memory_schema(void) {
    return json_pack("{s:s, s:[s,s,s], s:{s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:s}, "
                     "s:{s:s}, s:{s:s}, s:{s:[s,s]}}}",
                     "type", "object", "required", "id", "ns", "text", "properties", "id", "type",
                     "string", "ns", "type", "string", "text", "type", "string", "kind", "type",
                     "string", "tier", "type", "string", "importance", "type", "number",
                     "created_at", "type", "string", "metadata", "type", "object", "null");
}

static json_t *schema_remember_in(void) {
    return schema(json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "ns",
                            p_string(NS_DESC), "text",
                            p_string("The memory itself, written to stand alone: who, "
                                     "what, when, and why it matters."),
                            "kind", p_string(KIND_DESC), "importance",
                            p_number(IMPORTANCE_DESC, 0, 1), "metadata", p_object(METADATA_DESC),
                            "id",
                            p_string("Your own id for this memory. Writing an id that "
                                     "exists replaces that memory. Leave out to get a "
                                     "new unique id."),
                            "tier", p_string(TIER_DESC), "links",
                            p_ids("Ids of the memories this one was drawn from (the "
                                  "evidence of a reflection, the sources of a "
                                  "summary)."),
                            "expires_at",
                            p_time("When the memory stops being true: it is hidden "
                                   "from recall afterwards (ISO 8601 or milliseconds)."),
                            "created_at",
                            p_time("When it happened, if not now (ISO 8601 or "
                                   "milliseconds).")),
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
    json_t *profile = p_string("Scoring preset. default: hybrid meaning + keyword match, best in "
                               "general. generative-agents and stream: also favour recent and "
                               "important memories. replay: past episodes with a reward of at "
                               "least 0.05. episodes: only close matches (similarity >= 0.7).");
    json_t *names = json_array();
    const char *const *p;
    for (p = remem_profiles(); p && *p; p++) json_array_append_new(names, json_string(*p));
    json_object_set_new(profile, "enum", names);
    return schema(json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "query",
                            p_string("What you need to remember, in words: the situation, "
                                     "question or task at hand."),
                            "ns", p_string("One namespace to search. " NS_DESC), "namespaces",
                            p_ids("Several namespaces to search together. Leave out ns and "
                                  "namespaces to search every namespace you may read."),
                            "k",
                            json_pack("{s:s, s:s, s:i, s:i}", "type", "integer", "description",
                                      "How many memories to return at most (default: the "
                                      "profile's, usually 10).",
                                      "minimum", 1, "maximum", MCP_MAX_RECALL_K),
                            "profile", profile, "filter",
                            p_object("Chroma-style filter over metadata keys and the fields "
                                     "kind, tier, importance, created_at...: "
                                     "{\"kind\": \"lesson\"}, {\"importance\": {\"$gte\": "
                                     "0.7}}, {\"$and\": [{\"project\": \"acme\"}, "
                                     "{\"kind\": {\"$in\": [\"decision\", \"lesson\"]}}]}, "
                                     "{\"$contains\": \"word\"} on the text. Operators: $eq "
                                     "$ne $gt $gte $lt $lte $in $nin $and $or $not $contains."),
                            "min_score", p_number("Drop results scoring below this.", -1e9, 1e9),
                            "min_similarity",
                            p_number("Drop results whose cosine similarity to the query is "
                                     "below this.",
                                     -1, 1),
                            "tiers",
                            p_string("Comma-separated tiers to search, in priority order, "
                                     "e.g. \"static,short,long\"."),
                            "include_invalid",
                            p_bool("Also return invalidated and expired memories (default "
                                   "false)."),
                            "touch",
                            p_bool("Count this recall as an access of the returned memories "
                                   "(default true; it feeds recency).")),
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

static json_t *schema_get_in(void) {
    return schema(json_pack("{s:o, s:o}", "ns", p_string(NS_DESC), "id", p_string(ID_DESC)), "ns",
                  "id");
}

static json_t *schema_memory_out(void) {
    return json_pack("{s:s, s:[s], s:{s:o}}", "type", "object", "required", "memory", "properties",
                     "memory", memory_schema());
}

static json_t *schema_update_in(void) {
    return schema(json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "ns",
                            p_string(NS_DESC), "id", p_string(ID_DESC), "text",
                            p_string("New text (the memory is re-embedded)."), "kind",
                            p_string(KIND_DESC), "tier", p_string(TIER_DESC), "importance",
                            p_number(IMPORTANCE_DESC, 0, 1), "metadata",
                            p_object("New metadata: replaces the whole object. " METADATA_DESC),
                            "links", p_ids("New evidence links: replaces the list."), "expires_at",
                            p_time("New expiry (ISO 8601 or milliseconds)."), "actor",
                            p_string("Who makes the change, for the history (default "
                                     "\"mcp\").")),
                  "ns", "id");
}

static json_t *schema_invalidate_in(void) {
    return schema(json_pack("{s:o, s:o, s:o, s:o}", "ns", p_string(NS_DESC), "id",
                            p_string(ID_DESC), "superseded_by",
                            p_string("Id of the memory that replaces this one, if any."), "reason",
                            p_string("Why it no longer holds, for the history.")),
                  "ns", "id");
}

static json_t *schema_invalidate_out(void) {
    static const char *const o[] = {"invalidated", NULL};
    return write_out(o, "superseded_by", json_pack("{s:[s,s]}", "type", "string", "null"));
}

static json_t *schema_forget_in(void) {
    return schema(json_pack("{s:o, s:o, s:o}", "ns", p_string(NS_DESC), "id", p_string(ID_DESC),
                            "purge",
                            p_bool("Delete for good instead of archiving (default "
                                   "false). Only when the content must not be kept, "
                                   "e.g. a user asked to be forgotten; needs admin "
                                   "rights.")),
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
     "Store one memory in remem, your long-term memory. Use it whenever you "
     "observe, decide, conclude or learn something worth having in a later "
     "step or session: a fact about the user, an outcome, a mistake to "
     "avoid. Write the text so it stands alone. Storing the exact same text "
     "twice in a namespace adds nothing new (its duplicate count goes up). "
     "Returns the memory's id and whether it was added, upserted (you gave "
     "an id that existed) or a duplicate; with write but no read right on the "
     "namespace, only \"accepted\" (and the id you gave).",
     schema_remember_in, schema_remember_out, 0, 0, 0, mcp_tool_remember},
    {"recall", "Recall",
     "Search your memories for the ones that matter to a query and get them "
     "ranked best first. Use it before acting or answering, to bring back "
     "what you learned earlier: preferences, past results, past mistakes. "
     "Each result comes with its namespace and id (for update, invalidate, "
     "forget), its kind, importance and creation time, and its score with "
     "the components that made it: relevance (meaning), lexical (keyword "
     "match), recency and importance. Narrow with a filter on metadata, kind "
     "or importance.",
     schema_recall_in, schema_recall_out, 1, 0, 0, mcp_tool_recall},
    {"get", "Get one memory",
     "Fetch one memory by namespace and id with all of its fields: times, "
     "access count, metadata, evidence links, invalidation. Does not count "
     "as an access.",
     schema_get_in, schema_memory_out, 1, 0, 1, mcp_tool_get},
    {"update", "Update a memory",
     "Change a memory in place: its text, kind, tier, importance, metadata "
     "(replaced whole), evidence links or expiry. Use it when a memory still "
     "concerns the same thing but was incomplete or wrong; the history keeps "
     "the previous version. Needs the namespace and id from remember or "
     "recall. Returns its id and the outcome (get shows the memory).",
     schema_update_in, schema_update_out, 0, 1, 1, mcp_tool_update},
    {"invalidate", "Invalidate a memory",
     "Mark a memory as no longer true without deleting it: it leaves recall "
     "but stays in the store and its history. Use it when a fact was "
     "superseded (give superseded_by, the id of the memory that replaces "
     "it, e.g. one you just remembered) or turned out wrong (give a reason).",
     schema_invalidate_in, schema_invalidate_out, 0, 1, 1, mcp_tool_invalidate},
    {"forget", "Forget a memory",
     "Take a memory out of recall. By default it is archived: out of recall "
     "but restorable with update. With purge it is deleted for good (the "
     "history keeps a record without the text): only for content that must "
     "not be kept.",
     schema_forget_in, schema_forget_out, 0, 1, 1, mcp_tool_forget},
    {"list_namespaces", "List namespaces",
     "List the namespaces (agents, users, projects) that hold memories you "
     "may read, with how many memories each holds and the embedding model "
     "of its vectors. Use it to find where memories live before a recall.",
     schema_empty_in, schema_namespaces_out, 1, 0, 1, mcp_tool_list_namespaces},
};

const size_t mcp_n_tools = sizeof mcp_tools / sizeof mcp_tools[0];

json_t *mcp_tool_json(const mcp_tool *t) {
    return json_pack("{s:s, s:s, s:s, s:o, s:o, s:{s:s, s:b, s:b, s:b, s:b}}", "name", t->name,
                     "title", t->title, "description", t->description, "inputSchema",
                     t->input_schema(), "outputSchema", t->output_schema(), "annotations", "title",
                     t->title, "readOnlyHint", t->read_only, "destructiveHint", t->destructive,
                     "idempotentHint", t->idempotent, "openWorldHint", 0);
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
        if (!strncmp(k, "x-", 2))
            json_object_del(o, k);
        else
            strip_cli_keys(v);
    }
}

/* Arguments marked "x-local" (a path on the server's machine) are refused
 * from MCP clients (remem_call_ex, REMEM_CALL_REMOTE): a tool does not
 * offer them. */
static void drop_local_args(json_t *schema) {
    json_t *props = json_object_get(schema, "properties"), *v;
    const char *k;
    void *tmp;
    json_object_foreach_safe(props, tmp, k, v) {
        if (json_is_true(json_object_get(v, "x-local"))) json_object_del(props, k);
    }
}

json_t *mcp_op_tool_json(const remem_op_info *op) {
    char name[160];
    tool_name_of(op->name, name, sizeof name);
    json_t *schema = json_loads(op->schema, 0, NULL);
    if (!schema) schema = json_pack("{s:s}", "type", "object");
    drop_local_args(schema);
    strip_cli_keys(schema);
    int ro = !strcmp(op->right, "read");
    char desc[1024];
    snprintf(desc, sizeof desc,
             "%s (remem's operation \"%s\"; it needs the %s on the namespace named by "
             "ns. The answer is a JSON object; its text, when it has one, is ready to read.)",
             op->summary, op->name,
             !strcmp(op->right, "read+write") ? "read and write rights"
             : !strcmp(op->right, "read")     ? "read right"
             : !strcmp(op->right, "write")    ? "write right"
                                              : "admin right");
    return json_pack("{s:s, s:s, s:s, s:o, s:{s:s}, s:{s:s, s:b, s:b, s:b, s:b}}", "name", name,
                     "title", op->name, "description", desc, "inputSchema", schema, "outputSchema",
                     "type", "object", "annotations", "title", op->name, "readOnlyHint", ro,
                     "destructiveHint", 0, "idempotentHint", 0, "openWorldHint", 0);
}
