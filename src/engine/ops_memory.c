/*
 * ops_memory.c: the verbs on single memories as rows of the operations
 * table (ops.h): memory.add, memory.add_batch, memory.update,
 * memory.invalidate, memory.forget and memory.history (memory.get is in
 * ops.c). Every face (CLI, HTTP routes, MCP, Python) reaches them through
 * remem_call, so the arguments are read once, here: a memory's fields go
 * through the JSONL line parser (jsonl.c) that imports use, a TTL
 * ("30s", "7d" or a time) is read in one place (op_ttl), and memory-off
 * answers come out in the documented write shape (remem_write_result_json).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ops.h"
#include "engine/ops_schema.h"

/* ---- shared readers ---- */

/* A TTL: a positive number with a unit (s, m, h, d) from now, or a time
 * remem_parse_time reads. REMEM_OK with *expires, or REMEM_EINVAL naming it. */
int op_ttl(remem *db, const char *v, int64_t *expires) {
    char *end;
    double x = strtod(v, &end);
    double unit = 0;
    if (end != v && *end && !end[1]) {
        unit = *end == 's'   ? 1e3
               : *end == 'm' ? 60e3
               : *end == 'h' ? 3600e3
               : *end == 'd' ? 86400e3
                             : 0;
    }
    if (unit > 0 && x > 0 && x < 1e9) {
        *expires = remem_now() + (int64_t)(x * unit);
        return REMEM_OK;
    }
    if (remem_parse_time(v, expires) == REMEM_OK) return REMEM_OK;
    return eng_fail(db, REMEM_EINVAL,
                    "ttl: \"%s\" is neither a duration (30s, 15m, 2h, 7d) nor a time", v);
}

/* One memory object (add's arguments, or an element of a batch) through
 * the JSONL line parser, with "ttl" turned into expires_at first. *m
 * points into *holder (remem_free_line). where prefixes a message
 * ("memories[3]: "), or "". */
int op_memory_of(remem *db, json_t *o, const char *ns, const char *where, remem_memory *m,
                 remem_line **holder) {
    remem_memory_init(m);
    *holder = NULL;
    json_t *copy = json_copy(o);
    if (!copy) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    const char *ttl = op_str(o, "ttl", NULL);
    int64_t exp = 0;
    int rc = ttl ? op_ttl(db, ttl, &exp) : REMEM_OK;
    if (!rc && ttl) {
        if (json_object_get(o, "expires_at"))
            rc = eng_fail(db, REMEM_EINVAL, "give ttl or expires_at, not both");
        json_object_del(copy, "ttl");
        json_object_set_new(copy, "expires_at", json_integer(exp));
    }
    char *text = rc ? NULL : json_dumps(copy, JSON_COMPACT);
    json_decref(copy);
    if (!rc && !text) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    if (!rc) rc = remem_parse_line(db, text, strlen(text), ns, m, holder);
    free(text);
    if (rc && where[0]) {
        char msg[sizeof db->err];
        snprintf(msg, sizeof msg, "%s", db->err);
        eng_fail(db, rc, "%s%s", where, msg);
    }
    if (!rc && ns && m->ns && strcmp(m->ns, ns)) {
        remem_free_line(*holder);
        *holder = NULL;
        return eng_fail(db, REMEM_EINVAL, "%sthe memory names namespace \"%s\", not \"%s\"", where,
                        m->ns, ns);
    }
    return rc;
}

/* The answer to a write: remem_write_result_json's text as an object. */
static int write_answer(remem *db, const char *op, const char *ns, const char *id, int outcome,
                        const char *by, json_t **result) {
    char *text = remem_write_result_json(op, ns, id, outcome, by);
    *result = text ? json_loads(text, 0, NULL) : NULL;
    remem_free(text);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

/* The namespace holding id when the call names none (NULL: the engine's
 * own call then says what is wrong). */
static const char *ns_of(remem *db, const char *ns, const char *id, char *buf, size_t cap) {
    if (ns) return ns;
    remem_record *r = NULL;
    if (remem_get(db, NULL, id, &r) == REMEM_OK) {
        snprintf(buf, cap, "%s", remem_record_memory(r)->ns);
        ns = buf;
    }
    remem_record_free(r);
    return ns;
}

/* ---- the operations ---- */

static int op_add(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL);
    remem_memory m;
    remem_line *h = NULL;
    int rc = op_memory_of(db, args, ns, "", &m, &h);
    char id[1024] = "";
    int outcome = 0;
    if (!rc) rc = remem_add(db, &m, id, sizeof id, &outcome);
    remem_free_line(h);
    if (rc) return rc;
    return write_answer(db, "add", ns, outcome == REMEM_DROPPED ? NULL : id, outcome, NULL, result);
}

int op_memory_add_batch(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL);
    json_t *arr = json_object_get(args, "memories");
    size_t n = json_array_size(arr);
    const size_t cap = 1024;
    remem_memory *ms = calloc(n ? n : 1, sizeof *ms);
    remem_line **hs = calloc(n ? n : 1, sizeof *hs);
    char *ids = calloc(n ? n : 1, cap);
    int rc = ms && hs && ids ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && !rc; i++) {
        char where[48];
        snprintf(where, sizeof where, "memories[%zu]: ", i);
        rc = op_memory_of(db, json_array_get(arr, i), ns, where, &ms[i], &hs[i]);
    }
    long bad = -1;
    if (!rc && n) rc = remem_add_batch(db, ms, n, ids, cap, &bad);
    if (rc && bad >= 0 && !strstr(db->err, "memories[")) {
        char msg[sizeof db->err];
        snprintf(msg, sizeof msg, "%s", db->err);
        eng_fail(db, rc, "memories[%ld]: %s", bad, msg);
    }
    json_t *out = rc ? NULL : json_array();
    int off = !rc && eng_memory_off(db, ns);
    for (size_t i = 0; out && i < n; i++)
        json_array_append_new(out, off ? json_null() : json_string(ids + i * cap));
    if (out)
        *result = off ? json_pack("{s:o,s:i,s:s}", "ids", out, "count", 0, "outcome", "dropped")
                      : json_pack("{s:o,s:I}", "ids", out, "count", (json_int_t)n);
    for (size_t i = 0; hs && i < n; i++) remem_free_line(hs[i]);
    free(ms);
    free(hs);
    free(ids);
    if (rc) return rc;
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

/* A patch's JSON value as text: null empties the field. */
static char *patch_text(json_t *v, const char *empty) {
    return json_is_null(v) ? strdup(empty) : json_dumps(v, JSON_COMPACT);
}

/* The fields of update's arguments into p (strings point into args; the
 * metadata and links texts are malloc'd into *meta, *links). */
static int patch_of(remem *db, json_t *args, remem_patch *p, char **meta, char **links) {
    static const struct {
        const char *name;
        unsigned bit;
    } strs[] = {{"text", REMEM_SET_TEXT}, {"kind", REMEM_SET_KIND}, {"tier", REMEM_SET_TIER}};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        const char *v = op_str(args, strs[i].name, NULL);
        if (!v) continue;
        if (i == 0) p->text = v;
        if (i == 1) p->kind = v;
        if (i == 2) p->tier = v;
        p->fields |= strs[i].bit;
    }
    p->actor = op_str(args, "actor", NULL);
    json_t *v;
    if ((v = json_object_get(args, "importance")))
        p->importance = json_number_value(v), p->fields |= REMEM_SET_IMPORTANCE;
    if ((v = json_object_get(args, "metadata"))) {
        if (!(p->metadata = *meta = patch_text(v, "{}"))) goto oom;
        p->fields |= REMEM_SET_METADATA;
    }
    if ((v = json_object_get(args, "links"))) {
        if (!(p->links = *links = patch_text(v, "[]"))) goto oom;
        p->fields |= REMEM_SET_LINKS;
    }
    const char *ttl = op_str(args, "ttl", NULL);
    v = json_object_get(args, "expires_at");
    if (ttl && v) return eng_fail(db, REMEM_EINVAL, "give ttl or expires_at, not both");
    if (ttl && strcmp(ttl, "none")) {
        int rc = op_ttl(db, ttl, &p->expires_at);
        if (rc) return rc;
    }
    if (json_is_integer(v)) p->expires_at = json_integer_value(v);
    if (json_is_string(v)) {
        char err[384];
        if (remem_parse_time_field("expires_at", json_string_value(v), &p->expires_at, err,
                                   sizeof err))
            return eng_fail(db, REMEM_EINVAL, "%s", err);
    }
    if (ttl || v) p->fields |= REMEM_SET_EXPIRES;
    if (!p->fields)
        return eng_fail(db, REMEM_EINVAL,
                        "nothing to change: give text, kind, tier, importance, metadata, links, "
                        "expires_at or ttl");
    return REMEM_OK;
oom:
    return eng_fail(db, REMEM_ENOMEM, "out of memory");
}

static int op_update(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL), *id = op_str(args, "id", NULL);
    remem_patch p;
    remem_patch_init(&p);
    char *meta = NULL, *links = NULL, buf[1024];
    int rc = patch_of(db, args, &p, &meta, &links);
    const char *where = rc ? NULL : ns_of(db, ns, id, buf, sizeof buf);
    if (!rc) rc = remem_update(db, ns, id, &p);
    free(meta);
    free(links);
    if (rc) return rc;
    return write_answer(db, "update", where, id, eng_memory_off(db, where) ? REMEM_DROPPED : 0,
                        NULL, result);
}

static int op_invalidate(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL), *id = op_str(args, "id", NULL);
    const char *by = op_str(args, "superseded_by", NULL);
    char buf[1024];
    const char *where = ns_of(db, ns, id, buf, sizeof buf);
    int rc = remem_invalidate(db, ns, id, by, op_str(args, "reason", NULL));
    if (rc) return rc;
    return write_answer(db, "invalidate", where, id, eng_memory_off(db, where) ? REMEM_DROPPED : 0,
                        by, result);
}

static int op_forget(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL), *id = op_str(args, "id", NULL);
    int purge = op_bool(args, "purge", 0);
    char buf[1024];
    const char *where = ns_of(db, ns, id, buf, sizeof buf);
    int rc = remem_forget(db, ns, id, purge);
    if (rc) return rc;
    return write_answer(db, "forget", where, id, eng_memory_off(db, where) ? REMEM_DROPPED : purge,
                        NULL, result);
}

static int op_history(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL), *id = op_str(args, "id", NULL);
    char *text = NULL, buf[1024];
    const char *where = ns_of(db, ns, id, buf, sizeof buf);
    int rc = remem_history(db, ns, id, &text);
    if (rc) return rc;
    json_t *h = json_loads(text, 0, NULL);
    remem_free(text);
    *result = h ? json_pack("{s:s?,s:s,s:o}", "ns", where, "id", id, "history", h) : NULL;
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

/* ---- memory.links ---- */

/* A memory as a link's end: id, kind, tier, text. */
static json_t *link_end(const remem_memory *m) {
    return json_pack("{s:s, s:s, s:s, s:s}", "id", m->id, "kind", m->kind ? m->kind : "",
                     "tier", m->tier ? m->tier : "", "text", m->text ? m->text : "");
}

/* Does the links array text of a row name id? */
static int links_name(const char *links, const char *id) {
    if (!links || !strstr(links, id)) return 0;
    json_t *a = json_loads(links, 0, NULL);
    size_t i;
    json_t *v;
    int yes = 0;
    json_array_foreach(a, i, v) yes |= json_is_string(v) && !strcmp(json_string_value(v), id);
    json_decref(a);
    return yes;
}

/* The ids one memory links to (links_to, each resolved in the namespace
 * when it is there) and the memories that link to it (linked_from: a
 * reflection's evidence and what cites it, a summary's sources, a plan's
 * context), from the namespace's cache in one pass. */
static int op_links(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL), *id = op_str(args, "id", NULL);
    int rc;
    ns_cache *c = cache_get(db, ns, &rc);
    if (rc) return rc;
    const remem_memory *self = NULL;
    json_t *from = json_array(), *to = json_array();
    for (size_t i = 0; c && i < c->n; i++) {
        const remem_memory *m = &c->rows[i].m;
        if (m->id && !strcmp(m->id, id)) self = m;
        if (links_name(m->links, id)) json_array_append_new(from, link_end(m));
    }
    json_t *ids = self && self->links ? json_loads(self->links, 0, NULL) : NULL;
    size_t i;
    json_t *v;
    json_array_foreach(ids, i, v) {
        const char *want = json_string_value(v);
        json_t *end = NULL;
        for (size_t j = 0; want && !end && j < c->n; j++)
            if (c->rows[j].m.id && !strcmp(c->rows[j].m.id, want)) end = link_end(&c->rows[j].m);
        json_array_append_new(to, end ? end : json_pack("{s:s?, s:b}", "id", want, "missing", 1));
    }
    json_decref(ids);
    if (c) cache_put(db, c);
    if (!self) {
        json_decref(from);
        json_decref(to);
        return eng_fail(db, REMEM_ENOTFOUND, "memory.links: no memory %s in %s", id, ns);
    }
    *result = json_pack("{s:s, s:s, s:o, s:o}", "ns", ns, "id", id, "links_to", to,
                        "linked_from", from);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

/* ---- the rows ---- */

const engine_op memory_ops[] = {
    {{"memory.add", "write",
      "Remember a text in a namespace (optional kind, importance, metadata); an exact "
      "duplicate is counted on the stored one. Answers the id.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"text\"],\"properties\":{" S_NS "," S_TEXT
      "," S_MEMORY_FIELDS "}}",
      0, "core"},
     op_add},
    {{"memory.add_batch", "write",
      "Remember several memories of one namespace in one transaction: all or none. Answers "
      "their ids in order.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"memories\"],\"properties\":{" S_NS
      ",\"memories\":{\"type\":\"array\",\"description\":\"the memories, each as memory.add "
      "takes one (ns may be left out)\",\"items\":{\"type\":\"object\",\"required\":[\"text\"],"
      "\"properties\":{" S_NS "," S_TEXT "," S_MEMORY_FIELDS "}}}}}",
      0, "memory"},
     op_memory_add_batch},
    {{"memory.update", "write",
      "Change a memory's text, importance or metadata; its history keeps the before and "
      "after.",
      "{\"type\":\"object\",\"required\":[\"id\"],\"x-positional\":[\"id\"],\"properties\":"
      "{" S_NS_OPT "," S_ID
      ",\"text\":{\"type\":\"string\",\"minLength\":1,\"description\":\"the new text\"},"
      "\"kind\":{\"x-advanced\":true,\"type\":\"string\"},\"tier\":{\"x-advanced\":true,\"type\":\"string\",\"enum\":[\"static\","
      "\"short\",\"long\",\"archived\"]},\"importance\":{\"type\":\"number\",\"minimum\":0,"
      "\"maximum\":1},\"metadata\":{\"type\":[\"object\",\"null\"],\"x-aliases\":[\"meta\"],"
      "\"description\":\"replaces the whole object (null empties it)\"},"
      "\"links\":{\"x-advanced\":true,\"type\":[\"array\",\"null\"],\"items\":{\"type\":\"string\"}},"
      "\"expires_at\":{\"x-advanced\":true,\"type\":[\"string\",\"integer\",\"null\"],\"description\":\"when it "
      "expires (ISO 8601 or ms; null: never)\"},\"ttl\":{\"x-advanced\":true,\"type\":\"string\",\"description\":"
      "\"time to live from now (30s, 15m, 2h, 7d), a time, or none\"},\"actor\":{\"x-advanced\":true,\"type\":"
      "\"string\",\"description\":\"who makes the change, for the history\"}}}",
      REMEM_OP_DESTRUCTIVE | REMEM_OP_IDEMPOTENT, "core"},
     op_update},
    {{"memory.invalidate", "write",
      "Hide a memory from recall and keep it, e.g. a fact a newer memory replaced.",
      "{\"type\":\"object\",\"required\":[\"id\"],\"x-positional\":[\"id\"],\"properties\":"
      "{" S_NS_OPT "," S_ID
      ",\"superseded_by\":{\"type\":\"string\",\"x-aliases\":[\"by\"],\"description\":"
      "\"id of the memory that replaces it\"},\"reason\":{\"type\":\"string\",\"description\":"
      "\"why, for the history\"}}}",
      REMEM_OP_IDEMPOTENT, "core"},
     op_invalidate},
    {{"memory.forget", "write",
      "Archive a memory (out of recall, restorable), or with purge delete it for good "
      "(purge needs the admin right).",
      "{\"type\":\"object\",\"required\":[\"id\"],\"x-positional\":[\"id\"],\"properties\":"
      "{" S_NS_OPT "," S_ID
      ",\"purge\":{\"type\":\"boolean\",\"description\":\"delete for good\"}}}",
      REMEM_OP_DESTRUCTIVE | REMEM_OP_IDEMPOTENT, "core"},
     op_forget},
    {{"memory.history", "read",
      "Every change made to a memory, oldest first (add, update, duplicate, invalidate, "
      "archive, delete), with the before and after.",
      "{\"type\":\"object\",\"required\":[\"id\"],\"x-positional\":[\"id\"],\"properties\":"
      "{" S_NS_OPT "," S_ID "}}",
      REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "memory"},
     op_history},
    {{"memory.links", "read",
      "A memory's links both ways: the memories it links to (a reflection's evidence, a "
      "summary's sources, a plan's context) and the memories that link to it.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"id\"],\"x-positional\":[\"id\"],"
      "\"properties\":{" S_NS "," S_ID "}}",
      REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "memory"},
     op_links},
};
const size_t memory_ops_n = sizeof memory_ops / sizeof memory_ops[0];
