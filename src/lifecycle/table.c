/*
 * table.c: the lifecycle's operations (seeds 001 and 004), one row each:
 * name, the right an API key needs, a one-line summary and the JSON
 * Schema of the arguments (checked before the function runs; every face
 * is generated from it). And the registration of the add path's policy
 * hooks (engine/hooks.h), done when the library loads: this object is
 * linked whenever the operations table is.
 */
#include "engine/hooks.h"
#include "lifecycle/lifecycle.h"

#define NS_PROP "\"ns\":{\"type\":\"string\",\"minLength\":1,\"description\":\"namespace\"}"
#define METHOD_PROP(what)                                                                         \
    "\"method\":{\"type\":\"string\",\"enum\":[\"auto\",\"llm\",\"extractive\"],"                 \
    "\"description\":\"auto: the LLM when one is configured, else the extractive fallback; llm: " \
    "fail without one; extractive: " what "\"}"

const engine_op lifecycle_ops[] = {
    {{"static.load", "write",
      "Load a personality file (any JSON object) as static memories, one per leaf or "
      "list item; "
      "loading again replaces them.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"file\"],\"x-positional\":[\"file\"],"
      "\"properties\":{" NS_PROP ","
      "\"file\":{\"type\":\"object\",\"x-file\":true,\"description\":\"the "
      "personality: a JSON "
      "object (identity, goals, rules, environment, trust scores...)\"}}}", REMEM_OP_DESTRUCTIVE | REMEM_OP_IDEMPOTENT, "lifecycle"},
     lc_op_static_load},
    {{"migrate", "write",
      "Move the short-term memories beyond the capacity (oldest first, or most important "
      "first) to long-term "
      "when their "
      "importance exceeds the threshold, else to archived.",
      "{\"type\":\"object\",\"required\":[\"ns\"],\"properties\":{" NS_PROP ","
      "\"stm_size\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":100000000,"
      "\"description\":"
      "\"short-term capacity (default: the policy's stm_size; 0: unbounded)\"},"
      "\"threshold\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1,\"description\":"
      "\"importance a memory must exceed to reach long-term (default: the policy's, "
      "0.35)\"},"
      "\"by_importance\":{\"type\":\"boolean\",\"description\":\"move the most important "
      "first, the oldest first among equals (default: the policy's migrate_by_importance, on "
      "under the metaverse profile)\"},"
      "\"dry_run\":{\"type\":\"boolean\",\"description\":\"report the moves without "
      "making "
      "them\"}}}", REMEM_OP_DESTRUCTIVE, "lifecycle"},
     lc_op_migrate},
    {{"unarchive", "write",
      "Bring archived memories (migrated out, summarised, reloaded away) back to the "
      "tier they "
      "had before.",
      "{\"type\":\"object\",\"required\":[\"ns\"],\"x-positional\":[\"id\"],"
      "\"properties\":{" NS_PROP
      ",\"id\":{\"type\":\"string\",\"minLength\":1,\"description\":\"memory id\"},"
      "\"ids\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"minLength\":1},"
      "\"description\":\"several memory ids\"},"
      "\"tier\":{\"type\":\"string\",\"enum\":[\"static\",\"short\",\"long\"],"
      "\"description\":"
      "\"the tier to restore to (default: the one before archiving)\"}}}", REMEM_OP_IDEMPOTENT, "memory"},
     lc_op_unarchive},
    {{"reflect", "read+write",
      "Reflect on the recent memories: salient questions, insights citing evidence, "
      "stored as "
      "kind reflection with links.",
      "{\"type\":\"object\",\"required\":[\"ns\"],\"properties\":{" NS_PROP
      "," METHOD_PROP("the dominant cluster of recent memories, its most central "
                      "statement") ","
                                   "\"if_due\":{\"type\":\"boolean\",\"description\":"
                                   "\"reflect only when a trigger of the "
                                   "policy fired\"},"
                                   "\"recent\":{\"type\":\"integer\",\"minimum\":2,"
                                   "\"maximum\":1000,\"description\":\"how many "
                                   "recent memories to reflect on (100)\"},"
                                   "\"questions\":{\"type\":\"integer\",\"minimum\":1,"
                                   "\"maximum\":10,\"description\":"
                                   "\"salient questions to ask (3)\"},"
                                   "\"insights\":{\"type\":\"integer\",\"minimum\":1,"
                                   "\"maximum\":10,\"description\":"
                                   "\"insights per question at most (3)\"},"
                                   "\"evidence\":{\"type\":\"integer\",\"minimum\":1,"
                                   "\"maximum\":100,\"description\":"
                                   "\"memories recalled per question (10)\"},"
                                   "\"importance\":{\"type\":\"number\",\"minimum\":0,"
                                   "\"maximum\":1,\"description\":"
                                   "\"importance of each reflection (the policy's "
                                   "reflection_importance, 0.95)\"},"
                                   "\"similarity\":{\"type\":\"number\",\"minimum\":-1,"
                                   "\"maximum\":1,\"description\":"
                                   "\"extractive: cosine at which two memories are in "
                                   "one cluster (0.3)\"}}}", 0, "lifecycle"},
     lc_op_reflect},
    {{"summarize", "read+write",
      "Summarise the least important long-term memories into one summary linked to "
      "them, and "
      "archive them (restorable).",
      "{\"type\":\"object\",\"required\":[\"ns\"],\"properties\":{" NS_PROP
      "," METHOD_PROP("the most central sentences of the sources, without repetition") ","
                                                                                       "\"count\":{"
                                                                                       "\"type\":"
                                                                                       "\"integer\""
                                                                                       ",\"minimum"
                                                                                       "\":2,"
                                                                                       "\"maximum\""
                                                                                       ":1000,"
                                                                                       "\"descripti"
                                                                                       "on\":\"how "
                                                                                       "many "
                                                                                       "of the "
                                                                                       "least "
                                                                                       "important "
                                                                                       "long-term "
                                                                                       "memories "
                                                                                       "(10)\"},"
                                                                                       "\"sentences"
                                                                                       "\":{"
                                                                                       "\"type\":"
                                                                                       "\"integer\""
                                                                                       ",\"minimum"
                                                                                       "\":1,"
                                                                                       "\"maximum\""
                                                                                       ":50,"
                                                                                       "\"descripti"
                                                                                       "on\":"
                                                                                       "\"extractiv"
                                                                                       "e: "
                                                                                       "sentences "
                                                                                       "in the "
                                                                                       "summary at "
                                                                                       "most "
                                                                                       "(3)\"}}}", REMEM_OP_DESTRUCTIVE, "lifecycle"},
     lc_op_summarize},
    {{"plan", "write",
      "Recall the context of a goal, ask the LLM for a short plan, store it as kind "
      "plan in "
      "long-term memory linked to its context.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"goal\"],\"properties\":{" NS_PROP ","
      "\"goal\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":32768,"
      "\"description\":\"what "
      "the plan should reach\"},"
      "\"k\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,\"description\":"
      "\"memories "
      "recalled as context (10)\"},"
      "\"importance\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1,\"description\":"
      "\"importance of the plan (default: kind plan's, 0.6)\"}}}", 0, "lifecycle"},
     lc_op_plan},
    {{"context", "read",
      "Recall the memories that matter to what you are about to do, as a block of text ready "
      "for a prompt.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"query\"],\"properties\":{" NS_PROP ","
      "\"query\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":32768,"
      "\"description\":\"what you are about to do\"},"
      "\"format\":{\"type\":\"string\",\"enum\":[\"stream\",\"list\",\"plain\"]},"
      "\"k\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000,\"description\":"
      "\"at most this many\"},"
      "\"profile\":{\"type\":\"string\",\"minLength\":1,\"x-advanced\":true,"
      "\"description\":\"scoring profile (default: the policy's)\"},"
      "\"now\":{\"type\":[\"string\",\"integer\"],\"x-advanced\":true,\"description\":"
      "\"the time to recall at (a replay); default the clock\"},"
      "\"touch\":{\"type\":\"boolean\",\"x-advanced\":true,\"description\":\"record "
      "the access on the memories shown (default true)\"},"
      "\"time_zone\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64,\"x-advanced\":true,"
      "\"description\":\"the zone the block's dates are written in, e.g. America/New_York "
      "(default: the policy's time_zone, else UTC)\"}}}",
      REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "core"},
     lc_op_context},
};
const size_t lifecycle_ops_n = sizeof lifecycle_ops / sizeof lifecycle_ops[0];

__attribute__((constructor)) static void lifecycle_register_hooks(void) {
    eng_hooks_set(lc_check_add, lc_after_add);
}
