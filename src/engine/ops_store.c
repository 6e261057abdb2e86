/*
 * ops_store.c: the verbs over namespaces and the store as rows of the
 * operations table (ops.h): recall, stats, namespaces, clear, export and
 * import. The faces call them through remem_call like any operation; the
 * CLI and HTTP keep a streaming path for export and for importing a file,
 * whose arguments still come from these rows' schemas.
 *
 * One vocabulary: "ns" names the namespace (recall: one name or a list),
 * "query" is recall's text. The older "namespaces" and "text" of recall
 * are accepted too, on every face alike, and mean the same (a call giving
 * both spellings of one argument is refused).
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ops.h"
#include "engine/ops_schema.h"

/* ---- recall ---- */

/* args with "ns" and "query" under the query parser's names, parsed as a
 * query (a shallow copy: the values are args's). */
static int recall_body(remem *db, json_t *args, remem_query_json **pq, const char *op) {
    static const char *const any[][3] = {{"ns", "namespaces",
                                          "ns: missing; name at least one "
                                          "namespace"},
                                         {"query", "text",
                                          "query: missing; give query (or "
                                          "vector) to recall by"}};
    for (size_t i = 0; i < 2; i++) {
        json_t *a = json_object_get(args, any[i][0]), *b = json_object_get(args, any[i][1]);
        int vec = i == 1 && json_object_get(args, "vector") &&
                  !json_is_null(json_object_get(args, "vector"));
        if ((!a || json_is_null(a)) && (!b || json_is_null(b)) && !vec)
            return eng_fail(db, REMEM_EINVAL, "recall: %s", any[i][2]);
    }
    json_t *q = json_copy(args);
    if (!q) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    static const char *const names[][2] = {{"ns", "namespaces"}, {"query", "text"}};
    int renamed[2] = {0, 0};
    for (size_t i = 0; i < 2; i++) {
        json_t *v = json_object_get(q, names[i][0]);
        if (!v) continue;
        renamed[i] = 1;
        if (json_object_get(q, names[i][1])) {
            json_decref(q);
            return eng_fail(db, REMEM_EINVAL, "recall: give %s or %s, not both", names[i][0],
                            names[i][1]);
        }
        if (json_object_set(q, names[i][1], v) || json_object_del(q, names[i][0])) {
            json_decref(q);
            return eng_fail(db, REMEM_ENOMEM, "out of memory");
        }
    }
    char err[512];
    int rc = eng_query_from_json(q, pq, err, sizeof err);
    json_decref(q);
    if (!rc) return REMEM_OK;
    /* The parser's message names its field ("text: must be a string");
     * the caller wrote "query": the message says so. */
    for (size_t i = 0; i < 2; i++) {
        size_t l = strlen(names[i][1]);
        if (renamed[i] && !strncmp(err, names[i][1], l) && (err[l] == ':' || err[l] == '['))
            return eng_fail(db, rc, "%s: %s%s", op, names[i][0], err + l);
    }
    return eng_fail(db, rc, "%s: %s", op, err);
}

static int op_recall(remem *db, json_t *args, json_t **result) {
    (void)result; /* the answer goes out as text: eng_answer_text */
    remem_query_json *pq = NULL;
    int rc = recall_body(db, args, &pq, "recall");
    if (rc) return rc;
    remem_result *r = NULL;
    rc = remem_recall(db, remem_query_json_get(pq), &r);
    remem_query_json_free(pq);
    if (rc) {
        char msg[sizeof db->err];
        snprintf(msg, sizeof msg, "%s", db->err);
        return eng_fail(db, rc, "recall: %s", msg);
    }
    char *text = remem_result_to_json(r);
    remem_result_free(r);
    return eng_answer_text(db, text); /* written once, handed out as it is */
}

/* recall.explain: recall's arguments plus "near"; it does not touch the
 * memories it shows unless "touch": true (looking is not using). */
static int op_recall_explain(remem *db, json_t *args, json_t **result) {
    json_t *near_v = json_object_get(args, "near");
    if (near_v && !json_is_null(near_v) &&
        (!json_is_integer(near_v) || json_integer_value(near_v) < 0 ||
         json_integer_value(near_v) > 100))
        return eng_fail(db, REMEM_EINVAL, "recall.explain: near: an integer in [0, 100]");
    size_t near = near_v && json_is_integer(near_v) ? (size_t)json_integer_value(near_v) : 5;
    json_t *a = json_copy(args);
    if (!a) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    json_object_del(a, "near");
    if (!json_object_get(a, "touch")) json_object_set_new(a, "touch", json_false());
    remem_query_json *pq = NULL;
    int rc = recall_body(db, a, &pq, "recall.explain");
    json_decref(a);
    if (rc) return rc;
    rc = eng_recall_explain(db, remem_query_json_get(pq), near, result);
    remem_query_json_free(pq);
    if (rc) {
        char msg[sizeof db->err];
        snprintf(msg, sizeof msg, "%s", db->err);
        return eng_fail(db, rc, "recall.explain: %s", msg);
    }
    return REMEM_OK;
}

/* ---- stats, namespaces ---- */

static int loads_into(remem *db, char *text, const char *key, json_t **result) {
    json_t *v = json_loads(text, 0, NULL);
    remem_free(text);
    if (!v) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    *result = key ? json_pack("{s:o}", key, v) : v;
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

static int op_stats(remem *db, json_t *args, json_t **result) {
    char *text = NULL;
    int rc = remem_stats(db, op_str(args, "ns", NULL), &text);
    return rc ? rc : loads_into(db, text, NULL, result);
}

static int op_namespaces(remem *db, json_t *args, json_t **result) {
    (void)args;
    char *text = NULL;
    int rc = remem_namespaces(db, &text);
    return rc ? rc : loads_into(db, text, "namespaces", result);
}

/* ---- clear ---- */

static int is_pattern(const char *ns) { return strpbrk(ns, "*?[") != NULL; }

/* Is name inside the "within" patterns (none given: everywhere)? The
 * server gives an API key's own patterns, so that `clear --ns '*'` with a
 * key scoped to agent:* clears every namespace that key may administer. */
static int within(json_t *pats, const char *name) {
    if (!json_is_array(pats)) return 1;
    size_t i;
    json_t *p;
    json_array_foreach(pats, i, p) if (!fnmatch(json_string_value(p), name, 0)) return 1;
    return 0;
}

/* Clear one namespace, adding it to the answer's list. */
static int clear_one(remem *db, const char *ns, json_t *list, int64_t *total) {
    int64_t n = 0;
    int rc = remem_clear(db, ns, &n);
    if (rc) return rc;
    *total += n;
    json_array_append_new(list, json_pack("{s:s,s:I}", "ns", ns, "deleted", (json_int_t)n));
    return REMEM_OK;
}

static int op_clear(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL);
    if (!op_bool(args, "yes", 0))
        return eng_fail(db, REMEM_EINVAL,
                        "clear: this deletes every memory of %s; confirm with yes (--yes)", ns);
    if (eng_memory_off(db, ns)) {
        *result = json_pack("{s:s,s:i,s:s}", "ns", ns, "deleted", 0, "outcome", "dropped");
        return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    json_t *list = json_array();
    int64_t total = 0;
    int rc = REMEM_OK;
    if (!is_pattern(ns)) {
        rc = clear_one(db, ns, list, &total);
    } else {
        char *text = NULL;
        rc = remem_namespaces(db, &text);
        json_t *all = rc ? NULL : json_loads(text, 0, NULL);
        remem_free(text);
        size_t i;
        json_t *e;
        json_array_foreach(all, i, e) {
            const char *name = json_string_value(json_object_get(e, "ns"));
            if (rc || !name || fnmatch(ns, name, 0) || !within(json_object_get(args, "within"), name))
                continue;
            rc = clear_one(db, name, list, &total);
        }
        json_decref(all);
    }
    if (rc) {
        json_decref(list);
        return rc;
    }
    char text[300];
    snprintf(text, sizeof text, "deleted %lld memories from %s%s", (long long)total, ns,
             is_pattern(ns) ? " (every namespace it matches)" : "");
    *result = json_pack("{s:s,s:I,s:o,s:s}", "ns", ns, "deleted", (json_int_t)total, "namespaces",
                        list, "text", text);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

/* ---- export ---- */

static int export_line(void *ctx, const char *data, size_t len) {
    json_t *o = json_loadb(data, len, 0, NULL);
    return !o || json_array_append_new(ctx, o);
}

static int op_export(remem *db, json_t *args, json_t **result) {
    json_t *arr = json_array();
    int64_t n = 0;
    int rc = arr ? remem_export(db, op_str(args, "ns", NULL), op_bool(args, "vectors", 0),
                                export_line, arr, &n)
                 : eng_fail(db, REMEM_ENOMEM, "out of memory");
    if (rc) {
        json_decref(arr);
        return rc;
    }
    *result = json_pack("{s:o,s:I}", "memories", arr, "count", (json_int_t)n);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

/* ---- import ---- */

/* The store's rows and folded duplicates, to tell what an import did. */
static int counts(remem *db, int64_t *rows, int64_t *dups) {
    char *text = NULL;
    int rc = remem_stats(db, NULL, &text);
    json_t *o = rc ? NULL : json_loads(text, 0, NULL);
    remem_free(text);
    *rows = json_integer_value(json_object_get(o, "memories"));
    *dups = json_integer_value(json_object_get(o, "duplicates_folded"));
    json_decref(o);
    return rc;
}

/* The lines of "memories" and of "lines" (JSONL text) as one array. */
static int import_items(remem *db, json_t *args, json_t **out) {
    json_t *all = json_array();
    json_array_extend(all, json_object_get(args, "memories"));
    const char *lines = op_str(args, "lines", NULL);
    for (const char *p = lines; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        size_t i = 0;
        while (i < len && strchr(" \t\r", p[i])) i++;
        if (i < len) {
            json_error_t je;
            json_t *o = json_loadb(p, len, 0, &je);
            if (!json_is_object(o)) {
                size_t at = json_array_size(all);
                json_decref(o);
                json_decref(all);
                return eng_fail(db, REMEM_EPARSE, "memories[%zu]: not a JSON object (%s)", at,
                                je.text);
            }
            json_array_append_new(all, o);
        }
        p += len + (nl ? 1 : 0);
    }
    *out = all;
    return REMEM_OK;
}

static int op_import(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL);
    json_t *items = NULL;
    int rc = import_items(db, args, &items);
    if (rc) return rc;
    json_t *batch = json_pack("{s:o}", "memories", items);
    if (ns) json_object_set_new(batch, "ns", json_string(ns));
    int64_t rows0 = 0, dups0 = 0, rows1 = 0, dups1 = 0;
    size_t n = json_array_size(items);
    rc = counts(db, &rows0, &dups0);
    /* Every line is checked before anything is written (op_memory_of in
     * add_batch), all in one transaction: a bad line imports nothing. */
    json_t *res = NULL;
    if (!rc) rc = op_memory_add_batch(db, batch, &res);
    json_decref(batch);
    if (rc) return rc;
    int off = json_object_get(res, "outcome") != NULL;
    json_decref(res);
    if (off) {
        *result = json_pack("{s:i,s:I,s:s}", "imported", 0, "dropped", (json_int_t)n, "text",
                            "memory is off: nothing was written");
    } else {
        rc = counts(db, &rows1, &dups1);
        if (rc) return rc;
        long long added = rows1 - rows0, dups = dups1 - dups0;
        long long replaced = (long long)n - added - dups;
        char text[200];
        snprintf(text, sizeof text,
                 "imported %zu memories: %lld added, %lld replaced, %lld "
                 "duplicates",
                 n, added, replaced < 0 ? 0 : replaced, dups);
        *result =
            json_pack("{s:I,s:I,s:I,s:I,s:s}", "imported", (json_int_t)n, "added",
                      (json_int_t)added, "replaced", (json_int_t)(replaced < 0 ? 0 : replaced),
                      "duplicates", (json_int_t)dups, "text", text);
    }
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

/* ---- the rows ---- */

/* A number for the scoring's finer settings: taken on every face, left out
 * of a model's tool (x-advanced). */
#define S_NUM(name, what) \
    "\"" name "\":{\"x-advanced\":true,\"type\":\"number\",\"description\":\"" what "\"}"
#define S_RECALL_PROPS                                                                        \
    "\"ns\":{\"type\":[\"string\",\"array\"],\"items\":{\"type\":\"string\"},"             \
    "\"description\":\"the namespace, or a list of them\"},"           \
    "\"namespaces\":{\"x-advanced\":true,\"type\":[\"string\",\"array\"],\"items\":"         \
    "{\"type\":\"string\"},\"description\":\"the same as ns\"},"                               \
    "\"query\":{\"type\":\"string\",\"minLength\":1,\"description\":\"what to recall\"},"                                                                          \
    "\"text\":{\"x-advanced\":true,\"type\":\"string\",\"description\":\"the same as query\"},"\
    "\"vector\":{\"x-advanced\":true,\"type\":\"array\",\"items\":{\"type\":\"number\"},"      \
    "\"description\":\"recall by a vector instead of a text\"},"                              \
    "\"k\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000,\"description\":\"how many "   \
    "memories (default: the profile's)\"},"                                                    \
    "\"profile\":{\"type\":\"string\",\"description\":\"scoring profile: default, stream, "    \
    "metaverse, generative-agents, replay, episodes\"},"                                       \
    "\"filter\":{\"type\":[\"object\",\"string\"],\"description\":\"Chroma-style filter on "   \
    "metadata and fields, e.g. {\\\"kind\\\":\\\"decision\\\"}\"},"                            \
    "\"now\":{\"x-advanced\":true,\"type\":[\"string\",\"integer\"],\"description\":\"the "    \
    "time to recall at (ISO 8601 or ms): a replay\"},"                                         \
    "\"tiers\":{\"x-advanced\":true,\"type\":[\"array\",\"string\"],\"items\":{\"type\":"     \
    "\"string\"},\"description\":\"tiers in priority order (default static, short, long)\"},"  \
    "\"candidates\":{\"x-advanced\":true,\"type\":\"integer\",\"minimum\":1,\"maximum\":"      \
    "100000},"                                                                                 \
    "\"normalize\":{\"x-advanced\":true,\"type\":\"boolean\"},"                                 \
    "\"touch\":{\"x-advanced\":true,\"type\":\"boolean\",\"description\":\"update accessed_at "\
    "(default true)\"},"                                                                       \
    "\"include_invalid\":{\"x-advanced\":true,\"type\":\"boolean\"},"                           \
    S_NUM("w_relevance", "weight") "," S_NUM("w_lexical", "weight") ","                        \
    S_NUM("w_recency", "weight") "," S_NUM("w_importance", "weight") ","                       \
    S_NUM("w_context", "weight") "," S_NUM("min_similarity", "threshold") ","                  \
    S_NUM("min_score", "threshold") "," S_NUM("recency_base", "k of k^hours, in (0,1]") ","    \
    "\"half_life_hours\":{\"x-advanced\":true,\"type\":\"number\",\"x-aliases\":"              \
    "[\"half_life\"]}"

const engine_op store_wide_ops[] = {
    {{"recall", "read",
      "The memories that matter for a query, best first, each with the parts of its score "
      "(bookkeeping records only when a filter on kind names them).",
      "{\"type\":\"object\",\"x-positional\":[\"query\"],\"properties\":{" S_RECALL_PROPS "}}",
      REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "core"},
     op_recall},
    {{"recall.explain", "read",
      "A recall explained: the hits with what each component put into the score (parts, "
      "which sum to it), the best candidates left out and why (near_misses), the profile's "
      "settings and formula. Does not touch the memories unless touch is true.",
      "{\"type\":\"object\",\"x-positional\":[\"query\"],\"properties\":{" S_RECALL_PROPS
      ",\"near\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":100,\"description\":"
      "\"how many near misses (default 5)\"}}}",
      REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "memory"},
     op_recall_explain},
    {{"stats", "read",
      "Counts of memories by namespace, kind, tier and model; invalidated, expired, "
      "duplicates folded; with ns, a namespace's own figures.",
      "{\"type\":\"object\",\"properties\":{" S_NS "}}",
      REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "memory"},
     op_stats},
    {{"namespaces", "read", "The namespaces, each with its memory count and model.",
      "{\"type\":\"object\",\"properties\":{}}",
      REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "memory"},
     op_namespaces},
    {{"clear", "admin",
      "Delete every memory of a namespace, or of every namespace a pattern (agent:*) "
      "matches; history keeps one clear row each. Needs yes.",
      "{\"type\":\"object\",\"required\":[\"ns\"],\"properties\":{\"ns\":{\"type\":\"string\","
      "\"minLength\":1,\"description\":\"namespace, or a pattern with * ? []\"},"
      "\"yes\":{\"type\":\"boolean\",\"description\":\"confirm the deletion\"},"
      "\"within\":{\"x-advanced\":true,\"type\":\"array\",\"items\":{\"type\":\"string\","
      "\"minLength\":1},\"description\":\"with a pattern, clear only the namespaces one of "
      "these patterns matches too (the server sets an API key's own)\"}}}",
      REMEM_OP_DESTRUCTIVE | REMEM_OP_IDEMPOTENT, "admin"},
     op_clear},
    {{"export", "read",
      "The memories of a namespace (or of the store) as the objects remem import reads back.",
      "{\"type\":\"object\",\"properties\":{" S_NS ",\"vectors\":{\"type\":\"boolean\","
      "\"description\":\"include the embeddings\"}}}",
      REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "admin"},
     op_export},
    {{"import", "write",
      "Add memories as export wrote them (objects in memories, or JSONL text in lines), in "
      "one transaction: a bad line imports nothing and is named.",
      "{\"type\":\"object\",\"properties\":{\"ns\":{\"type\":\"string\",\"minLength\":1,"
      "\"description\":\"namespace of the lines that name none\"},"
      "\"memories\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"additionalProperties\":"
      "true}},\"lines\":{\"type\":\"string\",\"description\":\"JSONL text, one memory a "
      "line\"},\"batch\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000000,\"description\":"
      "\"memories per transaction when a file is streamed (CLI)\"}}}",
      REMEM_OP_DESTRUCTIVE, "admin"},
     op_import},
};
const size_t store_wide_ops_n = sizeof store_wide_ops / sizeof store_wide_ops[0];
