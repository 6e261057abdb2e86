/*
 * ops_table.c: the lessons' row in the table of operations (ops.h). Each
 * schema is the operation's whole contract on every face: the CLI's flags
 * are its property names with '_' as '-' (--task-cluster), arrays take a
 * repeated flag or a comma list (--fingerprint A --fingerprint B,
 * --lessons ID,ID), "x-file" reads the schema from a file.
 */
#include <stdlib.h>
#include <string.h>

#include "lessons/lessons.h"
#include "util/util.h"

#define NS "\"ns\":{\"type\":\"string\",\"minLength\":1,\"description\":\"namespace\"}"
#define DOMAIN                                                                                 \
    "\"domain\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256,\"description\":\"the " \
    "domain key: the execution context (tool family + adapter), e.g. sqlite\"},"                  \
    "\"tool_family\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64,"                    \
    "\"description\":\"the execution tool family (cli, computer_use, ...): "        \
    "the context key is then tool_family:domain\"}"
#define RUN                                                                                     \
    "\"run\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256,\"description\":\"the run " \
    "(one agent task attempt) this belongs to\"}"
#define STEP \
    "\"step\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"step index within the run\"}"
#define STRS(name, what)                                                               \
    "\"" name "\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"minLength\":1," \
    "\"maxLength\":256},\"description\":\"" what "\"}"

/* No lock here: each operation reads without one, embeds without one,
 * and writes in one store transaction that changes the fields it owns on
 * the lessons as stored then (records.c), so concurrent calls, in one
 * process or several, lose no count, and another namespace never waits
 * for them. */

/* "lesson.list": the lessons of a namespace by status and domain, without
 * a query (statuses were reachable only through recall's filter). A
 * lesson archived (remem forget: tier archived, never handed out again)
 * has status `archived`, seed 002's fourth; the status it had is kept as
 * status_before_archive, and comes back if it is restored. */
static int lsn_op_list(remem *db, json_t *args, json_t **res) {
    const char *status = lsn_str(args, "status", NULL), *domain = lsn_str(args, "domain", NULL);
    lsn_list l = {0};
    int rc = lsn_list_kind(db, lsn_s(args, "ns"), "lesson", &l);
    if (rc) return rc;
    json_t *out = json_array();
    strbuf text = {0};
    for (size_t i = 0; i < l.n; i++) {
        json_t *m = l.v[i].meta;
        const char *st = l.v[i].archived ? "archived" : lsn_s(m, "status");
        if (status && strcmp(st, status)) continue;
        if (domain && strcmp(lsn_s(m, "domain_key"), domain)) continue;
        json_t *o = json_deep_copy(m);
        json_object_set_new(o, "id", json_string(l.v[i].id));
        json_object_set_new(o, "rule", json_string(l.v[i].text));
        if (l.v[i].archived) {
            json_object_set(o, "status_before_archive", json_object_get(m, "status"));
            json_object_set_new(o, "status", json_string("archived"));
        }
        json_array_append_new(out, o);
        sb_printf(&text, "%s  %-10s %-12s %s\n", l.v[i].id, st, lsn_s(m, "domain_key"),
                  l.v[i].text);
    }
    sb_printf(&text, "%zu lessons", json_array_size(out));
    lsn_list_free(&l);
    char *t = sb_take(&text);
    *res = json_pack("{s:s,s:o,s:I,s:s}", "ns", lsn_s(args, "ns"), "lessons", out, "count",
                     (json_int_t)json_array_size(out), "text", t ? t : "");
    free(t);
    return *res ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

/* Seed 002's context key, "execution tool family + adapter domain": with
 * tool_family, every lesson operation keys on "family:domain", so the
 * same adapter under two tool families (a CLI and a computer-use agent)
 * keeps two strict lanes. */
static int family_key(remem *db, json_t *args) {
    const char *fam = lsn_s(args, "tool_family"), *dom = lsn_s(args, "domain");
    if (!fam) return REMEM_OK;
    if (!dom) return eng_fail(db, REMEM_EINVAL, "tool_family: give the domain it keys with");
    if (strchr(fam, ':'))
        return eng_fail(db, REMEM_EINVAL, "tool_family: \"%s\" holds a colon, which separates it "
                        "from the domain in the context key", fam);
    json_t *key = json_sprintf("%s:%s", fam, dom);
    if (!key || json_object_set_new(args, "domain", key))
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    json_object_del(args, "tool_family");
    return REMEM_OK;
}

#define KEYED(op)                                                       \
    static int keyed_##op(remem *db, json_t *args, json_t **result) {   \
        int rc = family_key(db, args);                                  \
        return rc ? rc : op(db, args, result);                          \
    }
KEYED(lsn_op_event)
KEYED(lsn_op_add)
KEYED(lsn_op_hints)
KEYED(lsn_op_outcome)
KEYED(lsn_op_list)

const engine_op lesson_ops[] = {
    {{"lesson.event", "write",
      "Record a runtime failure (ErrorEvent) and print its fingerprint and system tags.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"domain\",\"tool\",\"channel\",\"error\"]"
      ","
      "\"properties\":{" NS "," DOMAIN ","
      "\"tool\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256,\"description\":"
      "\"the tool "
      "that failed, e.g. run_bash\"},"
      "\"channel\":{\"type\":\"string\",\"enum\":[\"hard_failure\",\"constraint_failure\","
      "\"no_progress\",\"efficiency_regression\"],\"description\":\"the failure's generic "
      "channel\"},"
      "\"error\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":65536,\"description\":"
      "\"the "
      "error text or output the tool returned\"},"
      "\"task\":{\"type\":\"string\",\"maxLength\":4096,\"description\":\"the task text\"},"
      "\"session\":{\"type\":\"string\",\"maxLength\":256,\"description\":\"chat session "
      "id\"}," RUN "," STEP "}}", 0, "lessons"},
     keyed_lsn_op_event},
    {{"lesson.add", "write",
      "Store a lesson learned from a failure (a rule for a domain, with its trigger and evidence); the same rule for the same domain merges.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"domain\",\"rule\"],\"properties\":{" NS
      "," DOMAIN ","
      "\"rule\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":4096,\"description\":"
      "\"the "
      "lesson's rule text\"}," STRS(
          "fingerprint",
          "fingerprints of the failures it "
          "answers") "," STRS("tag", "tags besides the system ones") ","
                                                                     "\"task_cluster\":{\"type\":"
                                                                     "\"string\","
                                                                     "\"maxLength\":256,"
                                                                     "\"description\":\"grouped "
                                                                     "task "
                                                                     "signature; its runs are "
                                                                     "neighbours when the "
                                                                     "domain's sample is small\"},"
                                                                     "\"session\":{\"type\":"
                                                                     "\"string\",\"maxLength\":"
                                                                     "256,\"description\":\"the "
                                                                     "session that "
                                                                     "learned it "
                                                                     "(source_session_id)\"}," STRS(
                                                                         "conflicts_with",
                                                                         "ids of lessons this one "
                                                                         "contradicts") "}}", 0, "lessons"},
     keyed_lsn_op_add},
    {{"lesson.hints", "read+write",
      "Lessons for a pre-run or on-error retrieval: strict lane first, transfer lane by "
      "policy.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"domain\"],\"properties\":{" NS "," DOMAIN ","
      "\"task\":{\"type\":\"string\",\"maxLength\":4096,\"description\":\"the task text\"},"
      "\"error\":{\"type\":\"string\",\"maxLength\":65536,\"description\":\"the error just "
      "seen "
      "(an on-error retrieval; fingerprinted)\"},"
      "\"fingerprint\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64,"
      "\"description\":\"the "
      "fingerprint of the error just seen (an on-error retrieval)\"},"
      "\"tool\":{\"type\":\"string\",\"maxLength\":256,\"description\":\"the tool in use "
      "(a tag "
      "to match)\"}," STRS(
          "tag", "more tags to match") ","
                                       "\"policy\":{\"type\":\"string\",\"enum\":[\"off\","
                                       "\"auto\",\"always\"],\"description\":"
                                       "\"transfer lane: off, auto (only when the strict "
                                       "lane is weak; default) or always\"},"
                                       "\"k\":{\"type\":\"integer\",\"minimum\":1,"
                                       "\"maximum\":50,\"description\":\"strict hints at "
                                       "most (default 3)\"}," RUN "," STEP "}}", 0, "lessons"},
     keyed_lsn_op_hints},
    {{"lesson.outcome", "write",
      "Close a run naming its injected lessons; measure utility, promote and suppress.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"run\",\"domain\",\"result\"],"
      "\"properties\":{" NS "," RUN "," DOMAIN ","
      "\"result\":{\"type\":\"string\",\"enum\":[\"pass\",\"fail\"],\"description\":\"the "
      "run's "
      "result\"},"
      "\"score\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1,\"description\":\"the "
      "run's score "
      "(default 1 for pass, 0 for fail)\"},"
      "\"steps\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"steps the run "
      "took\"}," STRS(
          "lessons",
          "ids of the lessons injected into the run") ","
                                                      "\"task_cluster\":{\"type\":"
                                                      "\"string\",\"maxLength\":256,"
                                                      "\"description\":\"the run's task "
                                                      "cluster\"},"
                                                      "\"session\":{\"type\":\"string\","
                                                      "\"maxLength\":256,\"description\":"
                                                      "\"chat session id\"},"
      "\"learn\":{\"type\":\"boolean\",\"description\":\"also add candidate lessons "
      "from the run's own records: the LLM's reflection on its failures, or without one each "
      "failure followed by a step that worked (the rule fix_after_error)\"}}}", REMEM_OP_DESTRUCTIVE, "lessons"},
     keyed_lsn_op_outcome},
    {{"lesson.validate", "write",
      "Structural validation of a tool input against its schema, with the same-step retry "
      "cap.",
      "{\"type\":\"object\",\"required\":[\"schema\",\"input\"],\"properties\":{"
      "\"schema\":{\"type\":\"object\",\"x-file\":true,\"description\":\"the tool's input "
      "schema "
      "(JSON Schema: type, required, properties, additionalProperties)\"},"
      "\"input\":{\"type\":[\"object\",\"array\",\"string\",\"number\",\"boolean\",\"null\"],"
      "\"description\":\"the tool input to check (any JSON value; JSON text on the CLI)\"},"
      "\"ns\":{\"type\":\"string\",\"minLength\":1,\"description\":\"namespace (needed "
      "with "
      "--run)\"}," RUN "," STEP
      ",\"tool\":{\"type\":\"string\",\"maxLength\":256,\"description\":\"the tool "
      "the input is for\"}}}", 0, "lessons"},
     lsn_op_validate},
    {{"lesson.list", "read",
      "The lessons of a namespace, by status (candidate, promoted, suppressed, archived) and "
      "domain, with their counters.",
      "{\"type\":\"object\",\"required\":[\"ns\"],\"properties\":{" NS ","
      "\"status\":{\"type\":\"string\",\"enum\":[\"candidate\",\"promoted\","
      "\"suppressed\",\"archived\"]},\"domain\":{\"type\":\"string\",\"minLength\":1,"
      "\"description\":\"the domain key, e.g. sqlite\"},"
      "\"tool_family\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64,"
      "\"description\":\"with domain: the lessons keyed "
      "tool_family:domain\"}}}",
      REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "lessons"},
     keyed_lsn_op_list},
    {{"timeline", "read",
      "A run's steps and memory decisions: attempts, decisions or summary view.",
      "{\"type\":\"object\",\"required\":[\"ns\"],\"properties\":{" NS ","
      "\"run\":{\"type\":\"string\",\"minLength\":1,\"description\":\"the run (summary "
      "without it: "
      "every run)\"},"
      "\"view\":{\"type\":\"string\",\"enum\":[\"attempts\",\"decisions\",\"summary\"],"
      "\"description\":\"attempts (default), decisions or summary\"},"
      "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100000,\"description\":"
      "\"steps (attempts) or decisions in the answer (default 1000); next_offset when there "
      "are more\"},"
      "\"offset\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"steps or decisions "
      "to skip first (default 0)\"}}}", REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "lessons"},
     lsn_op_timeline},
    {{"eval.lessons", "admin",
      "A benchmark of the lessons: a scripted agent over grid, fluxtool, excel, sqlite, grid "
      "in 3 "
      "waves.",
      "{\"type\":\"object\",\"properties\":{"
      "\"waves\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":20,\"description\":"
      "\"waves "
      "(default 3)\"},"
      "\"max_steps\":{\"type\":\"integer\",\"minimum\":3,\"maximum\":20,\"description\":"
      "\"step "
      "budget per run (default 5)\"},"
      "\"store\":{\"type\":\"string\",\"minLength\":1,\"x-local\":true,"
      "\"description\":\"keep the "
      "benchmark's memories in this store file (namespaces eval:lessons:off and "
      "eval:lessons:auto, cleared first); default: in memory\"}}}", 0, "admin"},
     lsn_op_eval},
};
const size_t lesson_ops_n = sizeof lesson_ops / sizeof lesson_ops[0];
