/*
 * tools.c: the MCP tool calls. Each turns its arguments into one remem.h
 * call: arguments are read and checked here (a mistake is a message the
 * model can act on), the caller's right on the namespace is checked before
 * the store is touched, and the outcome is rendered by render.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mcpInt.h"

/* ------------------------------------------------------------------ */
/* Failures, access, argument readers                                  */
/* ------------------------------------------------------------------ */

static void call_fail(tool_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void call_fail(tool_call *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
}

/* The engine's message for a failed call, with the status name so that a
 * program can tell kinds of failure apart. */
static void call_fail_db(tool_call *c, int rc, const char *what) {
    const char *detail = remem_errmsg(c->db);
    call_fail(c, "%s failed: %s [%s]", what, detail && *detail ? detail : remem_strerror(rc),
              remem_status_name(rc));
}

static int may(const tool_call *c, const char *ns, int right) {
    if (!c->acc || !c->acc->allowed) return 1;
    return c->acc->allowed(c->acc->ctx, ns, right) != 0;
}

static const char *right_word(int right) {
    return right == MCP_READ                 ? "read"
           : right == MCP_WRITE              ? "write"
           : right == (MCP_READ | MCP_WRITE) ? "read and write"
                                             : "admin";
}

/* 0 when the caller holds right on ns (NULL: on every namespace); else
 * fills c->err and returns -1. */
static int require(tool_call *c, const char *ns, int right) {
    if (may(c, ns, right)) return 0;
    if (!ns)
        call_fail(c, "access denied: no %s right over every namespace (\"*\")", right_word(right));
    else
        call_fail(c, "access denied: no %s right on namespace '%s'", right_word(right), ns);
    return -1;
}

/* Argument readers: 0 with *out set (or left alone when absent and not
 * required), -1 with c->err saying what is wrong. */
static int arg_string(tool_call *c, const char *key, int required, const char **out) {
    json_t *v = json_object_get(c->args, key);
    if (!v || json_is_null(v)) {
        if (!required) return 0;
        call_fail(c, "argument '%s' is required (a string)", key);
        return -1;
    }
    if (!json_is_string(v)) {
        call_fail(c, "argument '%s' must be a string", key);
        return -1;
    }
    if (required && json_string_length(v) == 0) {
        call_fail(c, "argument '%s' must not be empty", key);
        return -1;
    }
    *out = json_string_value(v);
    return 0;
}

static int arg_number(tool_call *c, const char *key, double lo, double hi, double *out,
                      int *present) {
    json_t *v = json_object_get(c->args, key);
    *present = 0;
    if (!v || json_is_null(v)) return 0;
    if (!json_is_number(v) || json_number_value(v) < lo || json_number_value(v) > hi) {
        call_fail(c, "argument '%s' must be a number from %g to %g", key, lo, hi);
        return -1;
    }
    *out = json_number_value(v);
    *present = 1;
    return 0;
}

static int arg_bool(tool_call *c, const char *key, int *out) {
    json_t *v = json_object_get(c->args, key);
    if (!v || json_is_null(v)) return 0;
    if (!json_is_boolean(v)) {
        call_fail(c, "argument '%s' must be true or false", key);
        return -1;
    }
    *out = json_is_true(v);
    return 0;
}

/* A JSON value argument passed to the engine as text (metadata, links,
 * filter): the value itself, or a string holding its JSON text. *text is
 * malloc'd (free it) or stays NULL when the argument is absent. */
static int arg_json_text(tool_call *c, const char *key, json_type want_type, const char *type_word,
                         char **text) {
    json_t *v = json_object_get(c->args, key);
    *text = NULL;
    if (!v || json_is_null(v)) return 0;
    if (json_is_string(v)) {
        *text = strdup(json_string_value(v));
    } else if (json_typeof(v) == want_type) {
        *text = json_dumps(v, JSON_COMPACT);
    } else {
        call_fail(c, "argument '%s' must be %s", key, type_word);
        return -1;
    }
    if (!*text) {
        call_fail(c, "out of memory");
        return -1;
    }
    return 0;
}

/* A time argument: ISO 8601 text, "now", or integer milliseconds. */
static int arg_time(tool_call *c, const char *key, int64_t *out, int *present) {
    json_t *v = json_object_get(c->args, key);
    *present = 0;
    if (!v || json_is_null(v)) return 0;
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
    } else if (!json_is_string(v) || remem_parse_time(json_string_value(v), out) != REMEM_OK) {
        call_fail(c,
                  "argument '%s' must be a time: ISO 8601 "
                  "(\"2025-05-08T13:56:00Z\") or milliseconds since 1970",
                  key);
        return -1;
    }
    *present = 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* The tools                                                           */
/* ------------------------------------------------------------------ */

json_t *mcp_tool_remember(tool_call *c) {
    remem_memory m;
    char *metadata = NULL, *links = NULL, id[128] = "", text[512];
    double importance = -1;
    int present, outcome = 0, rc;
    json_t *out = NULL;

    remem_memory_init(&m);
    if (arg_string(c, "ns", 1, &m.ns) || arg_string(c, "text", 1, &m.text) ||
        arg_string(c, "kind", 0, &m.kind) || arg_string(c, "tier", 0, &m.tier) ||
        arg_string(c, "id", 0, &m.id) || arg_number(c, "importance", 0, 1, &importance, &present) ||
        arg_time(c, "expires_at", &m.expires_at, &present) ||
        arg_time(c, "created_at", &m.created_at, &present) ||
        arg_json_text(c, "metadata", JSON_OBJECT, "an object", &metadata) ||
        arg_json_text(c, "links", JSON_ARRAY, "an array of memory ids", &links) ||
        require(c, m.ns, MCP_WRITE))
        goto done;
    m.importance = importance;
    m.metadata = metadata;
    m.links = links;
    rc = remem_add(c->db, &m, id, sizeof id, &outcome);
    if (rc != REMEM_OK) {
        call_fail_db(c, rc, "remember");
        goto done;
    }
    /* Without read on ns, the answer must not tell whether the text was
     * already stored (nor its id): "accepted", and only the caller's id. */
    int blind = !may(c, m.ns, MCP_READ);
    const char *headline = outcome == REMEM_DROPPED     ? "Memory is off: nothing was written for"
                           : blind                      ? "Accepted for"
                           : outcome == REMEM_UPSERTED  ? "Replaced the memory with this id:"
                           : outcome == REMEM_DUPLICATE ? "Already remembered (same text; its "
                                                          "duplicate count went up):"
                                                        : "Remembered as";
    const char *shown = blind ? m.id : id;
    snprintf(text, sizeof text, "%s %s/%s", headline, m.ns, shown ? shown : "(a new id)");
    out = mcp_tool_ok(
        text, mcp_engine_json(remem_write_result_json(
                  "add", m.ns, shown, blind && outcome != REMEM_DROPPED ? 0 : outcome, NULL)));
done:
    free(metadata);
    free(links);
    return out;
}

/* The recall tool's arguments as the JSON query the library parses
 * (remem_query_parse, the parser of HTTP and the CLI too). Two face-level
 * conveniences are applied first, and only these: "query" is the tool's
 * name for "text", and "ns" is one more namespace; when neither ns nor
 * namespaces is given, every namespace the caller may read is filled in.
 * *none is set when that leaves no namespace at all. Returns a new object
 * or NULL with c->err set. */
static json_t *recall_args(tool_call *c, int *none) {
    json_t *q = json_deep_copy(c->args), *v, *list, *merged;
    size_t i, j;
    *none = 0;
    if (!q) goto oom;
    if ((v = json_object_get(q, "query"))) {
        if (json_object_get(q, "text")) {
            call_fail(c, "recall failed: query: give query or text, not both [REMEM_EINVAL]");
            goto fail;
        }
        json_object_set(q, "text", v);
        json_object_del(q, "query");
    }
    v = json_object_get(q, "ns");
    list = json_object_get(q, "namespaces");
    if (v && !json_is_null(v)) {
        if (!json_is_string(v)) {
            call_fail(c, "recall failed: ns: must be a string [REMEM_EINVAL]");
            goto fail;
        }
        if (!list || json_is_null(list)) {
            json_object_set_new(q, "namespaces", json_pack("[O]", v));
        } else if (json_is_array(list) || json_is_string(list)) {
            /* ns first, then the others once (a lone name is a list of one) */
            json_t *others = json_is_string(list) ? json_pack("[O]", list) : json_incref(list);
            if (!others || !(merged = json_pack("[O]", v))) {
                json_decref(others);
                goto oom;
            }
            json_array_foreach(others, i, v) {
                for (j = 0; j < json_array_size(merged); j++)
                    if (json_equal(json_array_get(merged, j), v)) break;
                if (j == json_array_size(merged)) json_array_append(merged, v);
            }
            json_decref(others);
            json_object_set_new(q, "namespaces", merged);
        }
    } else if (!list || json_is_null(list)) { /* every namespace the caller may read */
        char *text = NULL;
        int rc = remem_namespaces(c->db, &text);
        if (rc != REMEM_OK) {
            call_fail_db(c, rc, "listing namespaces");
            goto fail;
        }
        json_t *all = text ? json_loads(text, 0, NULL) : NULL;
        remem_free(text);
        if (!(merged = json_array()) || !json_is_array(all)) {
            json_decref(all);
            json_decref(merged);
            goto oom;
        }
        json_array_foreach(all, i, v) {
            const char *ns = json_string_value(json_object_get(v, "ns"));
            if (ns && may(c, ns, MCP_READ)) json_array_append_new(merged, json_string(ns));
        }
        json_decref(all);
        /* With none, the rest of the query is still checked (a bad k is
         * refused as it would be elsewhere) against a stand-in name. */
        if (json_array_size(merged) == 0) {
            *none = 1;
            json_array_append_new(merged, json_string("-"));
        }
        json_object_set_new(q, "namespaces", merged);
    }
    json_object_del(q, "ns");
    return q;
oom:
    call_fail(c, "out of memory");
fail:
    json_decref(q);
    return NULL;
}

json_t *mcp_tool_recall(tool_call *c) {
    json_t *args, *structured, *out = NULL;
    remem_query_json *pq = NULL;
    remem_result *res = NULL;
    textbuf b = {0};
    char err[512], *text;
    int none, rc;
    size_t i;

    if (!(args = recall_args(c, &none))) return NULL;
    text = json_dumps(args, JSON_COMPACT);
    json_decref(args);
    if (!text) {
        call_fail(c, "out of memory");
        return NULL;
    }
    rc = remem_query_parse(text, strlen(text), &pq, err, sizeof err);
    free(text);
    if (rc) {
        call_fail(c, "recall failed: %s [%s]", err, remem_status_name(rc));
        return NULL;
    }
    const remem_query *q = remem_query_json_get(pq);
    if (none) {
        out = mcp_tool_ok("No memories: there is no namespace you may read yet.",
                          json_pack("{s:s, s:i, s:[]}", "profile",
                                    q->profile ? q->profile : "default", "count", 0, "hits"));
        goto done;
    }
    for (i = 0; i < q->n_namespaces; i++)
        if (require(c, q->namespaces[i], MCP_READ)) goto done;
    rc = remem_recall(c->db, q, &res);
    if (rc != REMEM_OK) {
        call_fail_db(c, rc, "recall");
        goto done;
    }
    const char *said = q->text ? q->text : "(a vector)";
    if (res->memory_off == 1)
        mcp_tb_printf(&b, "Memory is off: recall returns nothing.\n");
    else if (res->n == 0)
        mcp_tb_printf(&b,
                      "No memory matched \"%s\" (profile %s, %zu candidates "
                      "scored).\n",
                      said, res->profile, res->candidates);
    else
        mcp_tb_printf(&b,
                      "%zu memor%s for \"%s\", best first (profile %s, %zu "
                      "candidates scored, %.2f ms):\n",
                      res->n, res->n == 1 ? "y" : "ies", said, res->profile, res->candidates,
                      res->took_ms);
    for (i = 0; i < res->n; i++) mcp_render_hit(&b, i + 1, &res->hits[i]);
    structured = mcp_engine_json(remem_result_to_json(res));
    if (structured) json_object_set_new(structured, "count", json_integer((json_int_t)res->n));
    out = mcp_finish_text(&b, structured);
done:
    remem_result_free(res);
    remem_query_json_free(pq);
    return out;
}

json_t *mcp_tool_update(tool_call *c) {
    const char *ns = NULL, *id = NULL;
    char *metadata = NULL, *links = NULL, headline[256];
    remem_patch p;
    int present, rc;
    json_t *out = NULL;

    remem_patch_init(&p);
    if (arg_string(c, "ns", 1, &ns) || arg_string(c, "id", 1, &id)) goto done;
    if (arg_string(c, "text", 0, &p.text)) goto done;
    if (p.text) p.fields |= REMEM_SET_TEXT;
    if (arg_string(c, "kind", 0, &p.kind)) goto done;
    if (p.kind) p.fields |= REMEM_SET_KIND;
    if (arg_string(c, "tier", 0, &p.tier)) goto done;
    if (p.tier) p.fields |= REMEM_SET_TIER;
    if (arg_number(c, "importance", 0, 1, &p.importance, &present)) goto done;
    if (present) p.fields |= REMEM_SET_IMPORTANCE;
    if (arg_time(c, "expires_at", &p.expires_at, &present)) goto done;
    if (present) p.fields |= REMEM_SET_EXPIRES;
    if (arg_json_text(c, "metadata", JSON_OBJECT, "an object", &metadata)) goto done;
    if (metadata) p.fields |= REMEM_SET_METADATA;
    if (arg_json_text(c, "links", JSON_ARRAY, "an array of memory ids", &links)) goto done;
    if (links) p.fields |= REMEM_SET_LINKS;
    p.metadata = metadata;
    p.links = links;
    if (arg_string(c, "actor", 0, &p.actor) || require(c, ns, MCP_WRITE)) goto done;
    if (!p.fields) {
        call_fail(c, "nothing to update: give at least one of text, kind, "
                     "tier, importance, metadata, links, expires_at");
        goto done;
    }
    if (!p.actor) p.actor = "mcp";
    rc = remem_update(c->db, ns, id, &p);
    if (rc != REMEM_OK) {
        call_fail_db(c, rc, "update");
        goto done;
    }
    int off = remem_memory_off(c->db, ns);
    snprintf(headline, sizeof headline,
             off ? "Memory is off: %s/%s was not changed." : "Updated %s/%s.", ns, id);
    out = mcp_tool_ok(headline, mcp_engine_json(remem_write_result_json(
                                    "update", ns, id, off ? REMEM_DROPPED : 0, NULL)));
done:
    free(metadata);
    free(links);
    return out;
}

json_t *mcp_tool_invalidate(tool_call *c) {
    const char *ns = NULL, *id = NULL, *by = NULL, *reason = NULL;
    char text[512];
    int rc;
    if (arg_string(c, "ns", 1, &ns) || arg_string(c, "id", 1, &id) ||
        arg_string(c, "superseded_by", 0, &by) || arg_string(c, "reason", 0, &reason) ||
        require(c, ns, MCP_WRITE))
        return NULL;
    rc = remem_invalidate(c->db, ns, id, by, reason);
    if (rc != REMEM_OK) {
        call_fail_db(c, rc, "invalidate");
        return NULL;
    }
    snprintf(text, sizeof text,
             "Invalidated %s/%s: it no longer comes back from recall but "
             "stays in the store%s%s.",
             ns, id, by ? ", superseded by " : "", by ? by : "");
    if (remem_memory_off(c->db, ns)) {
        snprintf(text, sizeof text, "Memory is off: %s/%s was not changed.", ns, id);
        return mcp_tool_ok(text, mcp_engine_json(remem_write_result_json("invalidate", ns, id,
                                                                         REMEM_DROPPED, by)));
    }
    return mcp_tool_ok(text, mcp_engine_json(remem_write_result_json("invalidate", ns, id, 0, by)));
}

json_t *mcp_tool_forget(tool_call *c) {
    const char *ns = NULL, *id = NULL;
    char text[512];
    int purge = 0, rc;
    if (arg_string(c, "ns", 1, &ns) || arg_string(c, "id", 1, &id) ||
        arg_bool(c, "purge", &purge) || require(c, ns, purge ? MCP_ADMIN : MCP_WRITE))
        return NULL;
    rc = remem_forget(c->db, ns, id, purge);
    if (rc != REMEM_OK) {
        call_fail_db(c, rc, "forget");
        return NULL;
    }
    snprintf(text, sizeof text,
             purge ? "Deleted %s/%s for good; its history keeps a record "
                     "without the text."
                   : "Archived %s/%s: out of recall, restorable with update "
                     "(tier \"short\" or \"long\").",
             ns, id);
    if (remem_memory_off(c->db, ns)) {
        snprintf(text, sizeof text, "Memory is off: %s/%s was not changed.", ns, id);
        purge = REMEM_DROPPED;
    }
    return mcp_tool_ok(text,
                       mcp_engine_json(remem_write_result_json("forget", ns, id, purge, NULL)));
}

json_t *mcp_tool_list_namespaces(tool_call *c) {
    char *text = NULL;
    json_t *all, *kept, *v;
    textbuf b = {0};
    size_t i;
    int rc = remem_namespaces(c->db, &text);
    if (rc != REMEM_OK) {
        call_fail_db(c, rc, "list_namespaces");
        return NULL;
    }
    all = json_loads(text, 0, NULL);
    remem_free(text);
    if (!json_is_array(all)) {
        json_decref(all);
        call_fail(c, "list_namespaces failed: the engine's answer is not a "
                     "JSON array");
        return NULL;
    }
    kept = json_array();
    json_array_foreach(all, i, v) {
        const char *ns = json_string_value(json_object_get(v, "ns"));
        if (ns && may(c, ns, MCP_READ)) json_array_append(kept, v);
    }
    json_decref(all);
    if (json_array_size(kept) == 0)
        mcp_tb_printf(&b, "No namespace you may read holds memories yet.\n");
    else
        mcp_tb_printf(&b, "%zu namespace%s:\n", json_array_size(kept),
                      json_array_size(kept) == 1 ? "" : "s");
    json_array_foreach(kept, i, v) {
        const char *model = json_string_value(json_object_get(v, "model"));
        mcp_tb_printf(&b, "- %s: %lld memories", json_string_value(json_object_get(v, "ns")),
                      (long long)json_integer_value(json_object_get(v, "count")));
        if (model)
            mcp_tb_printf(&b, " (model %s, dim %lld)", model,
                          (long long)json_integer_value(json_object_get(v, "dim")));
        mcp_tb_printf(&b, "\n");
    }
    return mcp_finish_text(&b, json_pack("{s:o}", "namespaces", kept));
}

/* A library operation: the arguments go to remem_call as they are (the
 * library checks them against the operation's schema, as for every face);
 * the key needs the operation's right over "ns", or over every namespace
 * (ns NULL to the access callback) when the operation names none. A path
 * argument ("x-local") is refused: the caller is remote. The answer's
 * "text", when it has one, is what the model reads; the whole answer is
 * structuredContent. */
json_t *mcp_op_call(tool_call *c, const remem_op_info *op) {
    int right = !strcmp(op->right, "read")         ? MCP_READ
                : !strcmp(op->right, "write")      ? MCP_WRITE
                : !strcmp(op->right, "read+write") ? MCP_READ | MCP_WRITE
                                                   : MCP_ADMIN;
    json_t *jns = json_object_get(c->args, "ns");
    if (jns && !json_is_string(jns)) {
        call_fail(c, "argument 'ns' must be a string");
        return NULL;
    }
    const char *ns = jns ? json_string_value(jns) : NULL;
    if (require(c, ns, jns ? right : right | MCP_ADMIN)) return NULL;
    char *args = json_dumps(c->args, JSON_COMPACT);
    if (!args) {
        call_fail(c, "out of memory");
        return NULL;
    }
    char *out = NULL;
    int rc = remem_call_ex(c->db, op->name, args, strlen(args), REMEM_CALL_REMOTE, &out);
    free(args);
    if (rc) {
        call_fail_db(c, rc, op->name);
        return NULL;
    }
    json_t *res = mcp_engine_json(out);
    if (!res) {
        call_fail(c, "out of memory");
        return NULL;
    }
    const char *text = json_string_value(json_object_get(res, "text"));
    char *dump = text ? NULL : json_dumps(res, JSON_INDENT(2));
    json_t *r = mcp_tool_ok(text ? text : dump ? dump : "{}", res);
    free(dump);
    return r;
}
