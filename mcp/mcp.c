/*
 * mcp.c: the MCP server's protocol and tools, over jansson, with no I/O.
 *
 * Two layers, top to bottom:
 *   - JSON-RPC 2.0: parse, tell requests from notifications and responses,
 *     answer batches element by element, map protocol mistakes to the
 *     standard error codes. MCP adds the lifecycle (initialize, the
 *     initialized notification, ping) and tools/list, tools/call.
 *   - Tools: each is a table row (name, description for models, input and
 *     output JSON Schemas, annotations, a function). A tool turns its
 *     arguments into one remem.h call and renders the outcome twice: as
 *     readable text for the model and as structuredContent for programs.
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
#include "mcp.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

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

#define MAX_RECALL_K 1000 /* remem_query_parse's limit */

/* ------------------------------------------------------------------ */
/* JSON helpers                                                        */
/* ------------------------------------------------------------------ */

static json_t *string_or_null(const char *s) { return s ? json_string(s) : json_null(); }

/* The engine renders memories and results (remem_*_to_json) so that every
 * face shows the same shapes; take its text as a JSON value. */
static json_t *engine_json(char *text) {
    json_t *v = text ? json_loads(text, 0, NULL) : NULL;
    remem_free(text);
    return v;
}

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
/* Tool calls: context, argument readers, results                      */
/* ------------------------------------------------------------------ */

typedef struct tool_call {
    remem *db;
    const mcp_access *acc;
    json_t *args;  /* the arguments object (borrowed) */
    char err[768]; /* why the call failed, for the isError result */
} tool_call;

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
    return right == MCP_READ ? "read" : right == MCP_WRITE ? "write" : "admin";
}

/* 0 when the caller holds right on ns; else fills c->err and returns -1. */
static int require(tool_call *c, const char *ns, int right) {
    if (may(c, ns, right)) return 0;
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

/* A successful result: one text block for the model, structuredContent for
 * programs. Steals structured. */
static json_t *tool_ok(const char *text, json_t *structured) {
    return json_pack("{s:[{s:s, s:s}], s:o}", "content", "type", "text", "text", text,
                     "structuredContent", structured);
}

/* A failed result. No structuredContent: it would have to match the
 * tool's outputSchema, which describes success. */
static json_t *tool_error(const char *text) {
    return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text, "isError",
                     1);
}

/* A growing text buffer for the readable renderings. */
typedef struct textbuf {
    char *s;
    size_t len, cap;
    int oom;
} textbuf;

static void tb_printf(textbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tb_printf(textbuf *b, const char *fmt, ...) {
    va_list ap;
    int n;
    if (b->oom) return;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        n = vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 512;
        while (cap - b->len <= (size_t)n) cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->oom = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

/* ------------------------------------------------------------------ */
/* Rendering memories                                                  */
/* ------------------------------------------------------------------ */

static json_t *memory_json(const remem_memory *m) { return engine_json(remem_memory_to_json(m)); }

/* One memory as the model reads it: where it lives, what it is, its text. */
static void render_memory(textbuf *b, const remem_memory *m) {
    char created[40] = "";
    if (m->created_at) remem_format_time(m->created_at, created, sizeof created);
    tb_printf(b, "[%s/%s] %s, tier %s, importance %.2f, created %s", m->ns ? m->ns : "?",
              m->id ? m->id : "?", m->kind ? m->kind : "memory", m->tier ? m->tier : "?",
              m->importance, created[0] ? created : "?");
    if (m->invalidated_at) tb_printf(b, ", INVALIDATED");
    if (m->superseded_by) tb_printf(b, " (superseded by %s)", m->superseded_by);
    if (m->metadata && strcmp(m->metadata, "{}") != 0)
        tb_printf(b, "\n   metadata %s", m->metadata);
    tb_printf(b, "\n   %s\n", m->text ? m->text : "");
}

static void render_hit(textbuf *b, size_t rank, const remem_hit *h) {
    tb_printf(b, "%zu. score %.4f ", rank, h->score);
    render_memory(b, &h->mem);
    tb_printf(b, "   why: relevance %.3f", h->relevance);
    if (isfinite(h->similarity)) tb_printf(b, " (cosine %.3f)", h->similarity);
    tb_printf(b,
              ", lexical %.3f (bm25 %.2f), recency %.3f, importance %.2f, "
              "context %.3f; found by %s\n",
              h->lexical, h->bm25, h->recency, h->importance, h->context,
              (h->lanes & 3u) == 3u ? "vector and lexical search"
              : (h->lanes & 1u)     ? "vector search"
              : (h->lanes & 2u)     ? "lexical search"
                                    : "scan");
}

/* Ends a call that built a text: the ok result, or an error when memory
 * ran out on the way. Frees the buffer; steals structured. */
static json_t *finish_text(textbuf *b, json_t *structured) {
    json_t *r;
    if (b->oom || !b->s || !structured) {
        json_decref(structured);
        free(b->s);
        return tool_error("out of memory while rendering the result");
    }
    r = tool_ok(b->s, structured);
    free(b->s);
    return r;
}

/* ------------------------------------------------------------------ */
/* The tools                                                           */
/* ------------------------------------------------------------------ */

static json_t *tool_remember(tool_call *c) {
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
    const char *what, *headline;
    if (outcome == REMEM_UPSERTED) {
        what = "replaced";
        headline = "Replaced the memory with this id:";
    } else if (outcome == REMEM_DUPLICATE) {
        what = "duplicate";
        headline = "Already remembered (same text; its duplicate count went "
                   "up):";
    } else {
        what = "added";
        headline = "Remembered as";
    }
    snprintf(text, sizeof text, "%s %s/%s", headline, m.ns, id);
    out = tool_ok(text, json_pack("{s:s, s:s, s:s}", "id", id, "ns", m.ns, "outcome", what));
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

static json_t *tool_recall(tool_call *c) {
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
        out = tool_ok("No memories: there is no namespace you may read yet.",
                      json_pack("{s:s, s:i, s:[]}", "profile", q->profile ? q->profile : "default",
                                "count", 0, "hits"));
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
    if (res->n == 0)
        tb_printf(&b,
                  "No memory matched \"%s\" (profile %s, %zu candidates "
                  "scored).\n",
                  said, res->profile, res->candidates);
    else
        tb_printf(&b,
                  "%zu memor%s for \"%s\", best first (profile %s, %zu "
                  "candidates scored, %.2f ms):\n",
                  res->n, res->n == 1 ? "y" : "ies", said, res->profile, res->candidates,
                  res->took_ms);
    for (i = 0; i < res->n; i++) render_hit(&b, i + 1, &res->hits[i]);
    structured = engine_json(remem_result_to_json(res));
    if (structured) json_object_set_new(structured, "count", json_integer((json_int_t)res->n));
    out = finish_text(&b, structured);
done:
    remem_result_free(res);
    remem_query_json_free(pq);
    return out;
}

/* The memory (ns, id) as an ok result, prefixed by a line of text. */
static json_t *memory_result(tool_call *c, const char *ns, const char *id, const char *headline) {
    remem_record *rec = NULL;
    textbuf b = {0};
    int rc = remem_get(c->db, ns, id, &rec);
    if (rc != REMEM_OK) {
        call_fail_db(c, rc, "get");
        return NULL;
    }
    const remem_memory *m = remem_record_memory(rec);
    if (headline) tb_printf(&b, "%s\n", headline);
    render_memory(&b, m);
    json_t *out = finish_text(&b, json_pack("{s:o}", "memory", memory_json(m)));
    remem_record_free(rec);
    return out;
}

static json_t *tool_get(tool_call *c) {
    const char *ns = NULL, *id = NULL;
    if (arg_string(c, "ns", 1, &ns) || arg_string(c, "id", 1, &id) || require(c, ns, MCP_READ))
        return NULL;
    return memory_result(c, ns, id, NULL);
}

static json_t *tool_update(tool_call *c) {
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
    snprintf(headline, sizeof headline, "Updated %s/%s; it now reads:", ns, id);
    out = memory_result(c, ns, id, headline);
done:
    free(metadata);
    free(links);
    return out;
}

static json_t *tool_invalidate(tool_call *c) {
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
    return tool_ok(text, json_pack("{s:s, s:s, s:b, s:o}", "id", id, "ns", ns, "invalidated", 1,
                                   "superseded_by", string_or_null(by)));
}

static json_t *tool_forget(tool_call *c) {
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
    return tool_ok(text, json_pack("{s:s, s:s, s:b}", "id", id, "ns", ns, "purged", purge));
}

static json_t *tool_list_namespaces(tool_call *c) {
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
        tb_printf(&b, "No namespace you may read holds memories yet.\n");
    else
        tb_printf(&b, "%zu namespace%s:\n", json_array_size(kept),
                  json_array_size(kept) == 1 ? "" : "s");
    json_array_foreach(kept, i, v) {
        const char *model = json_string_value(json_object_get(v, "model"));
        tb_printf(&b, "- %s: %lld memories", json_string_value(json_object_get(v, "ns")),
                  (long long)json_integer_value(json_object_get(v, "count")));
        if (model)
            tb_printf(&b, " (model %s, dim %lld)", model,
                      (long long)json_integer_value(json_object_get(v, "dim")));
        tb_printf(&b, "\n");
    }
    return finish_text(&b, json_pack("{s:o}", "namespaces", kept));
}

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

static json_t *schema_remember_out(void) {
    return json_pack("{s:s, s:[s,s,s], s:{s:{s:s}, s:{s:s}, s:{s:s, s:[s,s,s]}}}", "type", "object",
                     "required", "id", "ns", "outcome", "properties", "id", "type", "string", "ns",
                     "type", "string", "outcome", "type", "string", "enum", "added", "replaced",
                     "duplicate");
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
                                      "minimum", 1, "maximum", MAX_RECALL_K),
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
    return json_pack("{s:s, s:[s,s,s], s:{s:{s:s}, s:{s:s}, s:{s:s}}}", "type", "object",
                     "required", "id", "ns", "invalidated", "properties", "id", "type", "string",
                     "ns", "type", "string", "invalidated", "type", "boolean");
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
    return json_pack("{s:s, s:[s,s,s], s:{s:{s:s}, s:{s:s}, s:{s:s}}}", "type", "object",
                     "required", "id", "ns", "purged", "properties", "id", "type", "string", "ns",
                     "type", "string", "purged", "type", "boolean");
}

static json_t *schema_empty_in(void) { return schema(json_object(), NULL, NULL); }

static json_t *schema_namespaces_out(void) {
    return json_pack("{s:s, s:[s], s:{s:{s:s, s:{s:s, s:[s], s:{s:{s:s}, s:{s:s}}}}}}", "type",
                     "object", "required", "namespaces", "properties", "namespaces", "type",
                     "array", "items", "type", "object", "required", "ns", "properties", "ns",
                     "type", "string", "count", "type", "integer");
}

typedef struct mcp_tool {
    const char *name, *title, *description;
    json_t *(*input_schema)(void);
    json_t *(*output_schema)(void);
    int read_only, destructive, idempotent;
    json_t *(*call)(tool_call *c);
} mcp_tool;

static const mcp_tool tools[] = {
    {"remember", "Remember",
     "Store one memory in remem, your long-term memory. Use it whenever you "
     "observe, decide, conclude or learn something worth having in a later "
     "step or session: a fact about the user, an outcome, a mistake to "
     "avoid. Write the text so it stands alone. Storing the exact same text "
     "twice in a namespace adds nothing new (its duplicate count goes up). "
     "Returns the memory's id and whether it was added, replaced (you gave "
     "an id that existed) or a duplicate.",
     schema_remember_in, schema_remember_out, 0, 0, 0, tool_remember},
    {"recall", "Recall",
     "Search your memories for the ones that matter to a query and get them "
     "ranked best first. Use it before acting or answering, to bring back "
     "what you learned earlier: preferences, past results, past mistakes. "
     "Each result comes with its namespace and id (for update, invalidate, "
     "forget), its kind, importance and creation time, and its score with "
     "the components that made it: relevance (meaning), lexical (keyword "
     "match), recency and importance. Narrow with a filter on metadata, kind "
     "or importance.",
     schema_recall_in, schema_recall_out, 1, 0, 0, tool_recall},
    {"get", "Get one memory",
     "Fetch one memory by namespace and id with all of its fields: times, "
     "access count, metadata, evidence links, invalidation. Does not count "
     "as an access.",
     schema_get_in, schema_memory_out, 1, 0, 1, tool_get},
    {"update", "Update a memory",
     "Change a memory in place: its text, kind, tier, importance, metadata "
     "(replaced whole), evidence links or expiry. Use it when a memory still "
     "concerns the same thing but was incomplete or wrong; the history keeps "
     "the previous version. Needs the namespace and id from remember or "
     "recall. Returns the memory as it now is.",
     schema_update_in, schema_memory_out, 0, 1, 1, tool_update},
    {"invalidate", "Invalidate a memory",
     "Mark a memory as no longer true without deleting it: it leaves recall "
     "but stays in the store and its history. Use it when a fact was "
     "superseded (give superseded_by, the id of the memory that replaces "
     "it, e.g. one you just remembered) or turned out wrong (give a reason).",
     schema_invalidate_in, schema_invalidate_out, 0, 1, 1, tool_invalidate},
    {"forget", "Forget a memory",
     "Take a memory out of recall. By default it is archived: out of recall "
     "but restorable with update. With purge it is deleted for good (the "
     "history keeps a record without the text): only for content that must "
     "not be kept.",
     schema_forget_in, schema_forget_out, 0, 1, 1, tool_forget},
    {"list_namespaces", "List namespaces",
     "List the namespaces (agents, users, projects) that hold memories you "
     "may read, with how many memories each holds and the embedding model "
     "of its vectors. Use it to find where memories live before a recall.",
     schema_empty_in, schema_namespaces_out, 1, 0, 1, tool_list_namespaces},
};

#define N_TOOLS (sizeof tools / sizeof tools[0])

static json_t *tool_json(const mcp_tool *t) {
    return json_pack("{s:s, s:s, s:s, s:o, s:o, s:{s:s, s:b, s:b, s:b, s:b}}", "name", t->name,
                     "title", t->title, "description", t->description, "inputSchema",
                     t->input_schema(), "outputSchema", t->output_schema(), "annotations", "title",
                     t->title, "readOnlyHint", t->read_only, "destructiveHint", t->destructive,
                     "idempotentHint", t->idempotent, "openWorldHint", 0);
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
                  "something worth keeping, call remember. Namespaces keep agents, "
                  "users and projects apart: use one consistently. When a remembered "
                  "fact changes, invalidate the old memory (superseded_by the new "
                  "one) or update it.");
    return rpc_result(id, result);
}

static json_t *method_tools_list(json_t *id) {
    json_t *list = json_array(), *result;
    size_t i;
    for (i = 0; i < N_TOOLS; i++) json_array_append_new(list, tool_json(&tools[i]));
    result = json_pack("{s:o}", "tools", list);
    return rpc_result(id, result);
}

static json_t *method_tools_call(remem *db, const mcp_access *acc, json_t *id, json_t *params) {
    const char *name = json_string_value(json_object_get(params, "name"));
    json_t *args = json_object_get(params, "arguments"), *empty = NULL;
    json_t *result;
    tool_call c;
    size_t i;

    if (!name)
        return rpc_error(id, RPC_INVALID_PARAMS, "tools/call: params.name (a string) is required");
    for (i = 0; i < N_TOOLS && strcmp(tools[i].name, name) != 0; i++) {}
    if (i == N_TOOLS) return rpc_error(id, RPC_INVALID_PARAMS, "unknown tool: %s", name);
    if (args && !json_is_null(args) && !json_is_object(args))
        return rpc_error(id, RPC_INVALID_PARAMS, "tools/call: params.arguments must be an object");
    if (!args || json_is_null(args)) args = empty = json_object();

    memset(&c, 0, sizeof c);
    c.db = db;
    c.acc = acc;
    c.args = args;
    result = tools[i].call(&c);
    if (!result) result = tool_error(c.err[0] ? c.err : "the tool failed");
    json_decref(empty);
    if (!result) return rpc_error(id, RPC_INTERNAL_ERROR, "out of memory");
    return rpc_result(id, result);
}

/* One message (not a batch). Returns the response, or NULL when none is
 * due. in_batch: initialize is refused there. */
static json_t *handle_one(remem *db, const mcp_access *acc, json_t *msg, int in_batch) {
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
    if (strcmp(method, "tools/list") == 0) return method_tools_list(id);
    if (strcmp(method, "tools/call") == 0) return method_tools_call(db, acc, id, params);
    return rpc_error(id, RPC_METHOD_NOT_FOUND, "method not found: %s", method);
}

static char *dump(json_t *response) {
    char *text = response ? json_dumps(response, JSON_COMPACT) : NULL;
    json_decref(response);
    return text;
}

char *mcp_handle(remem *db, const char *msg, size_t len, const mcp_access *acc) {
    json_error_t jerr;
    json_t *in, *out, *el;
    size_t i;

    in = json_loadb(msg ? msg : "", msg ? len : 0, JSON_DECODE_ANY, &jerr);
    if (!in)
        return dump(rpc_error(NULL, RPC_PARSE_ERROR, "parse error: %s (line %d, column %d)",
                              jerr.text, jerr.line, jerr.column));
    if (!json_is_array(in)) {
        out = handle_one(db, acc, in, 0);
        json_decref(in);
        return dump(out);
    }
    if (json_array_size(in) == 0) {
        json_decref(in);
        return dump(rpc_error(NULL, RPC_INVALID_REQUEST, "invalid request: empty batch"));
    }
    out = json_array();
    json_array_foreach(in, i, el) {
        json_t *r = handle_one(db, acc, el, 1);
        if (r) json_array_append_new(out, r);
    }
    json_decref(in);
    if (json_array_size(out) == 0) {
        json_decref(out);
        return NULL;
    }
    return dump(out);
}
