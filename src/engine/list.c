/*
 * list.c: memory.list and memory.delete, the reads and deletes by filter
 * that need no query text (mem0's get_all / delete_all, Chroma's get and
 * delete with a where), and the engine's list of bookkeeping kinds.
 *
 * Pages are keyset pages: each row is ordered by (order key, rowid), the
 * cursor is the last pair a page returned, and the next page takes the
 * rows strictly after it. No OFFSET: a row added or deleted between two
 * pages moves no other row across a page boundary, so a listing returns
 * every memory that existed throughout exactly once. Each page is one scan
 * of the namespace (a consistent read); only (key, rowid) pairs are kept,
 * sorted, and the page's rows read back by rowid.
 *
 * Bookkeeping kinds (eng_internal_kind) are records the engine's features
 * write for their own use, which an agent never asked to remember: they
 * stay out of recall, context and list unless the call names kinds.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ops.h"
#include "engine/ops_schema.h"
#include "filter/filter.h"

/* The kinds of records the engine's features keep for themselves
 * (src/lessons: a lesson lookup, an error report, a validated tool input,
 * a closed run; src/ingest: a conversation's raw message, an ingest job).
 * docs/operations.md lists them. */
static const char *const internal_kinds[] = {"hint_log", "error_event", "attempt", "run",
                                             "message",  "ingest_job",  NULL};

int eng_internal_kind(const char *kind) {
    for (size_t i = 0; kind && internal_kinds[i]; i++)
        if (!strcmp(kind, internal_kinds[i])) return 1;
    return 0;
}

/* ---- what a listing selects ---- */

typedef struct pick {
    double key;
    int64_t rowid;
} pick;

typedef struct list_ctx {
    remem *db;
    filter *f;
    json_t *kinds, *tiers; /* arrays, or NULL */
    int show_internal, include_invalid, desc;
    char order; /* 'c' created, 'u' updated, 'i' importance */
    int has_cursor;
    pick cursor;
    int64_t now;
    pick *picks;
    size_t n, cap;
} list_ctx;

static int in_list(json_t *arr, const char *s) {
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) if (s && !strcmp(json_string_value(v), s)) return 1;
    return 0;
}

static double key_of(const list_ctx *x, const remem_memory *m) {
    return x->order == 'u'   ? (double)m->updated_at
           : x->order == 'i' ? m->importance
                             : (double)m->created_at;
}

/* Picks hold the pair as sorted ascending: negated for a descending
 * listing, so one comparison serves both. */
static int cmp_pick(pick a, pick b) {
    return a.key < b.key ? -1 : a.key > b.key ? 1 : (a.rowid > b.rowid) - (a.rowid < b.rowid);
}

static int row_selected(list_ctx *x, const remem_memory *m) {
    if (x->kinds ? !in_list(x->kinds, m->kind) : (!x->show_internal && eng_internal_kind(m->kind)))
        return 0;
    if (x->tiers ? !in_list(x->tiers, m->tier) : (m->tier && !strcmp(m->tier, "archived")))
        return 0;
    if (!x->include_invalid && (m->invalidated_at || (m->expires_at && m->expires_at <= x->now)))
        return 0;
    if (filter_matches_all(x->f)) return 1;
    filter_record r = {m->id,         m->ns,           m->kind,
                       m->tier,       m->text,         m->importance,
                       m->created_at, m->updated_at,   m->accessed_at,
                       m->expires_at, m->access_count, m->duplicate_count,
                       NULL};
    json_t *meta =
        filter_uses_metadata(x->f) && m->metadata ? json_loads(m->metadata, 0, NULL) : NULL;
    r.metadata = meta;
    int ok = filter_match(x->f, &r);
    json_decref(meta);
    return ok;
}

static int pick_row(void *ctx, const store_row *r) {
    list_ctx *x = ctx;
    if (!row_selected(x, &r->m)) return 0;
    pick p = {key_of(x, &r->m), r->rowid};
    if (x->desc) p.key = -p.key, p.rowid = -p.rowid;
    if (x->has_cursor && cmp_pick(p, x->cursor) <= 0) return 0;
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 256;
        pick *more = realloc(x->picks, cap * sizeof *more);
        if (!more) return REMEM_ENOMEM;
        x->picks = more;
        x->cap = cap;
    }
    x->picks[x->n++] = p;
    return 0;
}

static int by_order(const void *a, const void *b) {
    return cmp_pick(*(const pick *)a, *(const pick *)b);
}

/* ---- cursors: opaque text, 'o' order + 'd' direction + key + rowid ---- */

static void cursor_text(const list_ctx *x, pick p, char *out, size_t cap) {
    uint64_t bits;
    memcpy(&bits, &p.key, sizeof bits);
    snprintf(out, cap, "%c%c%016" PRIx64 "%016" PRIx64, x->order, x->desc ? 'd' : 'a', bits,
             (uint64_t)p.rowid);
}

static int cursor_read(remem *db, list_ctx *x, const char *s) {
    uint64_t bits = 0, row = 0;
    char o = 0, d = 0, tail = 0;
    if (strlen(s) != 34 ||
        sscanf(s, "%c%c%16" SCNx64 "%16" SCNx64 "%c", &o, &d, &bits, &row, &tail) != 4)
        return eng_fail(db, REMEM_EINVAL,
                        "cursor: not a cursor remem gave (pass next_cursor as it is)");
    if (o != x->order || d != (x->desc ? 'd' : 'a'))
        return eng_fail(db, REMEM_EINVAL,
                        "cursor: it belongs to a listing in another order; keep order and desc");
    memcpy(&x->cursor.key, &bits, sizeof bits);
    x->cursor.rowid = (int64_t)row;
    x->has_cursor = 1;
    return REMEM_OK;
}

/* ---- reading the arguments, scanning ---- */

static int list_setup(remem *db, json_t *args, list_ctx *x) {
    memset(x, 0, sizeof *x);
    x->db = db;
    x->now = remem_now();
    json_t *f = json_object_get(args, "filter");
    char err[512];
    if (f && !json_is_null(f)) {
        char *text = json_is_string(f) ? strdup(json_string_value(f)) : json_dumps(f, JSON_COMPACT);
        int rc = text ? filter_parse(text, strlen(text), &x->f, err, sizeof err) : REMEM_ENOMEM;
        free(text);
        if (rc) return eng_fail(db, rc, "filter: %s", rc == REMEM_ENOMEM ? "out of memory" : err);
    }
    x->kinds = json_object_get(args, "kinds");
    x->tiers = json_object_get(args, "tiers");
    if (!json_array_size(x->kinds)) x->kinds = NULL;
    if (!json_array_size(x->tiers)) x->tiers = NULL;
    x->show_internal = filter_uses_kind(x->f);
    x->include_invalid = op_bool(args, "include_invalid", 0);
    x->desc = op_bool(args, "desc", 0);
    const char *order = op_str(args, "order", "created");
    x->order = !strcmp(order, "updated") ? 'u' : !strcmp(order, "importance") ? 'i' : 'c';
    const char *cur = op_str(args, "cursor", NULL);
    return cur && *cur ? cursor_read(db, x, cur) : REMEM_OK;
}

/* The rows from the namespace's cache when it is loaded (caught up with
 * the store first, as a recall would be): memory, not a scan that reads
 * every row and its vector from the store (a timeline page of a namespace
 * of 100,000 memories, docs/inspector.md). *done is 0 when it is not
 * loaded: nothing is loaded for a listing. */
static int scan_cached(remem *db, const char *ns, list_ctx *x, int *done) {
    *done = 0;
    ns_cache *c = ns ? cache_peek(db, ns) : NULL;
    if (!c) return REMEM_OK;
    cache_put(db, c);
    int rc = REMEM_OK;
    c = cache_get(db, ns, &rc);
    if (rc) return rc;
    for (size_t i = 0; c && !rc && i < c->n; i++) rc = pick_row(x, &c->rows[i]);
    if (c) cache_put(db, c);
    *done = 1;
    return rc;
}

static int list_scan(remem *db, const char *ns, list_ctx *x) {
    int rc = eng_need_open(db), done = 0;
    if (!rc) rc = scan_cached(db, ns, x, &done);
    if (!rc && !done) rc = store_scan(db->st, ns, 0, pick_row, x);
    if (rc == REMEM_ENOMEM) return eng_fail(db, rc, "out of memory");
    if (rc) return eng_store_fail(db, rc);
    if (x->n > 1) qsort(x->picks, x->n, sizeof *x->picks, by_order); /* picks is NULL when empty */
    return REMEM_OK;
}

static int64_t row_of(const list_ctx *x, size_t i) {
    return x->desc ? -x->picks[i].rowid : x->picks[i].rowid;
}

static void list_done(list_ctx *x) {
    filter_free(x->f);
    free(x->picks);
}

/* ---- memory.list ---- */

static int op_list(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL);
    size_t limit = (size_t)op_int(args, "limit", 100);
    list_ctx x;
    int rc = list_setup(db, args, &x);
    if (!rc) rc = list_scan(db, ns, &x);
    json_t *arr = rc ? NULL : json_array();
    size_t taken = 0;
    for (size_t i = 0; arr && i < x.n && taken < limit; i++, taken++) {
        store_row row;
        memset(&row, 0, sizeof row);
        if (store_get_rowid(db->st, row_of(&x, i), 0, &row)) continue; /* deleted since */
        json_array_append_new(arr, eng_memory_json(&row.m, 0));
        store_row_clear(&row);
    }
    char next[48] = "";
    if (arr && taken < x.n) cursor_text(&x, x.picks[taken - 1], next, sizeof next);
    list_done(&x);
    if (rc) return rc;
    *result = json_pack("{s:s,s:o,s:I,s:s?}", "ns", ns, "memories", arr, "count",
                        (json_int_t)json_array_size(arr), "next_cursor", next[0] ? next : NULL);
    if (*result && !next[0]) json_object_set_new(*result, "next_cursor", json_null());
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

/* ---- memory.delete ---- */

static int op_delete(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL);
    int dry = op_bool(args, "dry_run", 0);
    if (!dry && !json_object_get(args, "filter") && !json_object_get(args, "kinds") &&
        !json_object_get(args, "tiers"))
        return eng_fail(db, REMEM_EINVAL,
                        "memory.delete: give a filter, kinds or tiers (clear deletes a whole "
                        "namespace)");
    list_ctx x;
    int rc = list_setup(db, args, &x);
    if (!rc) rc = list_scan(db, ns, &x);
    int off = eng_memory_off(db, ns);
    json_t *ids = rc ? NULL : json_array();
    int64_t deleted = 0, *rows = rc ? NULL : malloc((x.n ? x.n : 1) * sizeof *rows);
    if (!rc && !rows) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < x.n; i++) {
        rows[i] = row_of(&x, i);
        store_row row;
        memset(&row, 0, sizeof row);
        if (json_array_size(ids) >= 1000 || store_get_rowid(db->st, rows[i], 0, &row)) continue;
        json_array_append_new(ids, json_string(row.m.id));
        store_row_clear(&row);
    }
    if (!rc && !dry && !off) rc = eng_purge_rows(db, rows, x.n, &deleted);
    free(rows);
    size_t matched = x.n;
    list_done(&x);
    if (rc) {
        json_decref(ids);
        return rc;
    }
    char text[300];
    if (dry)
        snprintf(text, sizeof text, "%zu memories of %s match; nothing was deleted (dry run)",
                 matched, ns);
    else
        snprintf(text, sizeof text, "deleted %lld of %zu matching memories of %s%s",
                 (long long)deleted, matched, ns, off ? " (memory is off)" : "");
    *result = json_pack("{s:s,s:I,s:I,s:b,s:o,s:s}", "ns", ns, "matched", (json_int_t)matched,
                        "deleted", (json_int_t)deleted, "dry_run", dry, "ids", ids, "text", text);
    if (*result && off) json_object_set_new(*result, "outcome", json_string("dropped"));
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

/* ---- the rows ---- */

#define S_SELECT                                                                                \
    "\"filter\":{\"type\":[\"object\",\"string\"],\"description\":\"Chroma-style filter on "    \
    "metadata and fields, e.g. {\\\"kind\\\":\\\"decision\\\"}\"},"                             \
    "\"kinds\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\"only "     \
    "these kinds (bookkeeping kinds appear only when named)\"},"                                \
    "\"tiers\":{\"x-advanced\":true,\"type\":\"array\",\"items\":{\"type\":\"string\",\"enum\":[\"static\","        \
    "\"short\",\"long\",\"archived\"]},\"description\":\"only these tiers (default: all but "   \
    "archived)\"},"                                                                             \
    "\"include_invalid\":{\"x-advanced\":true,\"type\":\"boolean\",\"description\":\"also invalidated and expired " \
    "memories\"}"

const engine_op list_ops[] = {
    {{"memory.list", "read",
      "The memories of a namespace, without a query: by filter, kinds and tiers, ordered by "
      "created, updated or importance, a page at a time (pass next_cursor back as cursor).",
      "{\"type\":\"object\",\"required\":[\"ns\"],\"properties\":{" S_NS "," S_SELECT
      ",\"order\":{\"type\":\"string\",\"enum\":[\"created\",\"updated\",\"importance\"],"
      "\"description\":\"default created\"},\"desc\":{\"x-advanced\":true,\"type\":\"boolean\",\"description\":"
      "\"largest first\"},\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000,"
      "\"description\":\"memories per page (default 100)\"},\"cursor\":{\"type\":\"string\","
      "\"description\":\"next_cursor of the page before\"}}}",
      REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "memory"},
     op_list},
    {{"memory.delete", "admin",
      "Delete for good every memory of a namespace that a filter (or kinds, tiers) selects; "
      "dry_run counts them and deletes nothing.",
      "{\"type\":\"object\",\"required\":[\"ns\"],\"properties\":{" S_NS "," S_SELECT
      ",\"dry_run\":{\"type\":\"boolean\",\"description\":\"count, delete nothing\"}}}",
      REMEM_OP_DESTRUCTIVE | REMEM_OP_IDEMPOTENT, "memory"},
     op_delete},
};
const size_t list_ops_n = sizeof list_ops / sizeof list_ops[0];
