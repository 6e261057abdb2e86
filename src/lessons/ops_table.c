/*
 * ops_table.c: the lessons' row in the table of operations (ops.h). Each
 * schema is the operation's whole contract on every face: the CLI's flags
 * are its property names with '_' as '-' (--task-cluster), arrays take a
 * repeated flag or a comma list (--fingerprint A --fingerprint B,
 * --lessons ID,ID), "x-file" reads the schema from a file.
 */
#include "lessons/lessons.h"

#define NS "\"ns\":{\"type\":\"string\",\"minLength\":1,\"description\":\"namespace\"}"
#define DOMAIN                                                                                 \
    "\"domain\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256,\"description\":\"the " \
    "domain key: the execution context (tool family + adapter), e.g. sqlite\"}"
#define RUN                                                                                     \
    "\"run\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":256,\"description\":\"the run " \
    "(one agent task attempt) this belongs to\"}"
#define STEP \
    "\"step\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"step index within the run\"}"
#define STRS(name, what)                                                               \
    "\"" name "\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"minLength\":1," \
    "\"maxLength\":256},\"description\":\"" what "\"}"

/* The lesson operations read a namespace's lessons, change their counters
 * and statuses, and write them back. Within one process (a server's
 * threads) they take turns, so that two concurrent hints or outcomes never
 * lose each other's counts. Two processes (servers on one PostgreSQL
 * database) can still lose a retrieval count when they race on the same
 * lesson: docs/lessons.md says so. */
#include <pthread.h>
static pthread_mutex_t lsn_turn = PTHREAD_MUTEX_INITIALIZER;
#define LOCKED(fn)                                                  \
    static int fn##_locked(remem *db, json_t *args, json_t **res) { \
        pthread_mutex_lock(&lsn_turn);                              \
        int rc = fn(db, args, res);                                 \
        pthread_mutex_unlock(&lsn_turn);                            \
        return rc;                                                  \
    }
LOCKED(lsn_op_event)
LOCKED(lsn_op_add)
LOCKED(lsn_op_hints)
LOCKED(lsn_op_outcome)
LOCKED(lsn_op_validate)

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
      "id\"}," RUN "," STEP "}}"},
     lsn_op_event_locked},
    {{"lesson.add", "write",
      "Store a lesson (seed 002's schema); the same rule for the same domain merges.",
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
                                                                         "contradicts") "}}"},
     lsn_op_add_locked},
    {{"lesson.hints", "write",
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
                                       "most (default 3)\"}," RUN "," STEP "}}"},
     lsn_op_hints_locked},
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
                                                      "\"chat session id\"}}}"},
     lsn_op_outcome_locked},
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
      "the input is for\"}}}"},
     lsn_op_validate_locked},
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
      "to skip first (default 0)\"}}}"},
     lsn_op_timeline},
    {{"eval.lessons", "admin",
      "The seed 002 benchmark: a scripted agent over grid, fluxtool, excel, sqlite, grid "
      "in 3 "
      "waves.",
      "{\"type\":\"object\",\"properties\":{"
      "\"waves\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":20,\"description\":"
      "\"waves "
      "(default 3)\"},"
      "\"max_steps\":{\"type\":\"integer\",\"minimum\":3,\"maximum\":20,\"description\":"
      "\"step "
      "budget per run (default 5)\"},"
      "\"store\":{\"type\":\"string\",\"minLength\":1,\"description\":\"keep the "
      "benchmark's memories in this store file (namespaces eval:lessons:off and "
      "eval:lessons:auto, cleared first); default: in memory\"}}}"},
     lsn_op_eval},
};
const size_t lesson_ops_n = sizeof lesson_ops / sizeof lesson_ops[0];
