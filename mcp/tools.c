/*
 * tools.c: the MCP tool calls. Every tool is an operation of the library's
 * table (remem_ops()): the arguments go to remem_call_ex as they are (the
 * library checks them against the operation's schema, as for every face),
 * and this file adds what only a face knows: the caller's right on each
 * namespace named, checked before the store is touched, and the answer
 * trimmed to what the caller may see.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mcpInt.h"

/* ------------------------------------------------------------------ */
/* Failures and access                                                  */
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

static int right_of(const char *word) {
    return !strcmp(word, "read")         ? MCP_READ
           : !strcmp(word, "write")      ? MCP_WRITE
           : !strcmp(word, "read+write") ? MCP_READ | MCP_WRITE
                                         : MCP_ADMIN;
}

/* The namespaces the arguments name: "ns" (recall's also "namespaces"), a
 * name or a list; a new array, empty when none. -1 with c->err when one is
 * not a string, in the library's words for the same mistake. */
static int named_namespaces(tool_call *c, const char *op, json_t **out) {
    static const char *const keys[] = {"ns", "namespaces"};
    *out = json_array();
    char why[160];
    for (size_t k = 0; k < 2; k++) {
        json_t *v = json_object_get(c->args, keys[k]), *e;
        size_t i;
        int bad = v && !json_is_string(v) && !json_is_array(v) && !json_is_null(v);
        if (bad) snprintf(why, sizeof why, "%s: must be a name or a list of names", keys[k]);
        if (json_is_string(v)) json_array_append(*out, v);
        json_array_foreach(v, i, e) {
            if (!json_is_string(e) && !bad) {
                bad = 1;
                snprintf(why, sizeof why, "%s: item %zu must be a non-empty string", keys[k], i);
            }
            json_array_append(*out, e);
        }
        if (bad) { /* worded as call_fail_db words the library's failures */
            call_fail(c, "%s failed: %s: %s [%s]", op, op, why, remem_status_name(REMEM_EINVAL));
            json_decref(*out);
            return -1;
        }
    }
    return 0;
}

/* 0 when the caller may run op with its arguments, else -1 with c->err
 * set: the operation's right (admin for a purge) on every namespace named,
 * or over every namespace when it names none, admin too unless the
 * operation only reads (as over HTTP). */
static int may_run(tool_call *c, const remem_op_info *op) {
    int right = right_of(op->right);
    json_t *nss, *e;
    size_t i;
    if (json_is_true(json_object_get(c->args, "purge"))) right = MCP_ADMIN;
    if (named_namespaces(c, op->name, &nss)) return -1;
    int rc = 0;
    if (!json_array_size(nss)) /* store-wide: admin too, unless it only reads (as over HTTP) */
        rc = require(c, NULL, (op->hints & REMEM_OP_READ_ONLY) ? right : right | MCP_ADMIN);
    json_array_foreach(nss, i, e) if (!rc) rc = require(c, json_string_value(e), right);
    json_decref(nss);
    return rc;
}

/* The answer as the caller may see it: the namespaces it may read (all of
 * them, for the admin over every namespace that may list them); for an
 * add by a caller that may write ns but not read it, "accepted" and only
 * the ids it gave (whether the text was already stored is not told). */
static void trim_answer(tool_call *c, const remem_op_info *op, json_t *res) {
    if (!strcmp(op->name, "namespaces")) {
        json_t *list = json_object_get(res, "namespaces"), *kept = json_array(), *e;
        size_t i;
        json_array_foreach(list, i, e) {
            const char *n = json_string_value(json_object_get(e, "ns"));
            if (n && may(c, n, MCP_READ)) json_array_append(kept, e);
        }
        json_object_set_new(res, "namespaces", kept);
        json_object_del(res, "text");
        return;
    }
    const char *ns = json_string_value(json_object_get(c->args, "ns"));
    const char *outcome = json_string_value(json_object_get(res, "outcome"));
    if (strncmp(op->name, "memory.add", 10) || !ns || may(c, ns, MCP_READ) ||
        (outcome && !strcmp(outcome, "dropped")))
        return;
    if (json_object_get(res, "ids")) {
        json_t *given = json_object_get(c->args, "memories"), *ids = json_array(), *m;
        size_t i;
        json_array_foreach(given, i, m) {
            json_t *id = json_object_get(m, "id");
            json_array_append(ids, json_is_string(id) ? id : json_null());
        }
        json_object_set_new(res, "ids", ids);
    } else {
        json_t *id = json_object_get(c->args, "id");
        json_object_set_new(res, "outcome", json_string("accepted"));
        if (json_is_string(id))
            json_object_set(res, "id", id);
        else
            json_object_del(res, "id");
    }
}

/* The result of an answer (stolen): its "text" when it has one, else the
 * JSON itself, said to be from a store whose memory is off when it is. */
static json_t *answer(json_t *res) {
    const char *text = json_string_value(json_object_get(res, "text"));
    if (text) return mcp_tool_ok(text, res);
    char *dump = json_dumps(res, JSON_INDENT(2)), *said = NULL;
    const char *off = json_string_value(json_object_get(res, "memory"));
    if (dump && off && !strcmp(off, "off") &&
        asprintf(&said, "Memory is off: nothing was stored, changed or recalled.\n%s", dump) < 0)
        said = NULL;
    json_t *r = mcp_tool_ok(said ? said : dump ? dump : "{}", res);
    free(said);
    free(dump);
    return r;
}

/* A tool call: the operation's right is checked on every namespace named,
 * or over every namespace (ns NULL to the access callback) when it names
 * none; the arguments go to remem_call_ex as a remote caller's, so a path
 * argument ("x-local") is refused. The answer's "text", when it has one,
 * is what the model reads; the whole answer is structuredContent. */
json_t *mcp_op_call(tool_call *c, const remem_op_info *op) {
    if (may_run(c, op)) return NULL;
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
    trim_answer(c, op, res);
    return answer(res);
}
