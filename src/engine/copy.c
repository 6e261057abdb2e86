/*
 * copy.c: remem_copy, moving a whole store to another (SQLite to
 * PostgreSQL and back, or between two of either): every memory with its
 * vector and model, each namespace's model lock, and the history.
 *
 * Shape: through the store table only (store.h), so any two backends
 * work, with one destination transaction per namespace. A namespace is
 * therefore either wholly in the destination or not at all, which is what
 * makes a copy resumable: run it again and the namespaces already there
 * with the same content (by checksum) are skipped, the others copied.
 * A destination namespace holding something else is refused, never mixed.
 *
 * Verification: each namespace's checksum (an order-free sum of a 64-bit
 * hash per memory over every field and the vector's bytes, and the same
 * over its history rows) and counts are computed on the rows read from
 * the source and again from the destination after its commit; any
 * difference fails the copy. Rowids and history seqs are the destination's
 * own (they are local to a store); the order of history is kept.
 *
 * Limits: history of a namespace that holds no memory any more is not
 * listed by the store table, so it is not copied; copy a store nobody is
 * writing to (a namespace written during its copy fails verification).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "engine/engine.h"
#include "store/store.h"
#include "util/util.h"

typedef struct sum {
    int64_t rows, history;
    uint64_t rows_sum, history_sum;
} sum;

static uint64_t mix(uint64_t h, const void *p, size_t n) {
    /* Chain field hashes; a NULL string differs from "". */
    uint64_t x = p ? util_hash64(p, n) : 0x9e3779b97f4a7c15ULL;
    return (h ^ x) * 0x100000001b3ULL + (h >> 29);
}
static uint64_t mix_s(uint64_t h, const char *s) { return mix(h, s, s ? strlen(s) : 0); }
static uint64_t mix_i(uint64_t h, int64_t v) { return mix(h, &v, sizeof v); }

static uint64_t row_hash(const store_row *r) {
    const remem_memory *m = &r->m;
    uint64_t h = 1469598103934665603ULL;
    h = mix_s(h, m->ns);
    h = mix_s(h, m->id);
    h = mix_s(h, m->kind);
    h = mix_s(h, m->tier);
    h = mix_s(h, m->text);
    h = mix(h, &m->importance, sizeof m->importance);
    h = mix_i(h, m->created_at);
    h = mix_i(h, m->updated_at);
    h = mix_i(h, m->accessed_at);
    h = mix_i(h, m->access_count);
    h = mix_i(h, m->expires_at);
    h = mix_i(h, m->invalidated_at);
    h = mix_s(h, m->superseded_by);
    h = mix_i(h, m->duplicate_count);
    h = mix_s(h, m->metadata);
    h = mix_s(h, m->links);
    h = mix_s(h, m->vector ? m->model : NULL);
    h = mix(h, m->vector, m->vector ? (size_t)m->dim * sizeof(float) : 0);
    return h;
}

static uint64_t hist_hash(const store_history_row *x) {
    uint64_t h = 7;
    h = mix_s(h, x->ns);
    h = mix_s(h, x->id);
    h = mix_s(h, x->op);
    h = mix_s(h, x->actor);
    h = mix_s(h, x->before);
    h = mix_s(h, x->after);
    h = mix_i(h, x->at);
    return h;
}

/* ---- reading a namespace ---- */

typedef struct hist_copy {
    int64_t seq, at;
    char *ns, *id, *op, *actor, *before, *after;
} hist_copy;

typedef struct ns_read {
    /* the destination to write into (NULL: only sum) */
    store *dst;
    int rc;
    char err[512];
    sum s;
    /* history keys of the namespace, then its rows */
    char **ids;
    size_t n_ids, cap_ids;
    hist_copy *h;
    size_t n_h, cap_h;
} ns_read;

static int sum_row(void *ctx, const store_row *r) {
    ns_read *x = ctx;
    store_row aligned = *r;
    float *vec = NULL;
    if (r->m.vector && r->m.dim > 0) {
        /* The store's vector may be unaligned: a copy to read it. */
        vec = malloc((size_t)r->m.dim * sizeof *vec);
        if (!vec) return x->rc = REMEM_ENOMEM;
        memcpy(vec, r->m.vector, (size_t)r->m.dim * sizeof *vec);
        aligned.m.vector = vec;
    }
    x->s.rows++;
    x->s.rows_sum += row_hash(&aligned);
    if (x->dst) {
        char *norm = util_normalize_text(r->m.text);
        if (!norm) {
            free(vec);
            return x->rc = REMEM_ENOMEM;
        }
        int64_t rowid;
        int rc = store_insert(x->dst, &aligned.m, norm, util_hash64(norm, strlen(norm)), &rowid);
        free(norm);
        if (rc) {
            snprintf(x->err, sizeof x->err, "%s", store_errmsg(x->dst));
            free(vec);
            return x->rc = rc;
        }
    }
    free(vec);
    return 0;
}

static int note_id(void *ctx, const char *id, const char *op) {
    (void)op;
    ns_read *x = ctx;
    for (size_t i = 0; i < x->n_ids; i++)
        if (strcmp(x->ids[i], id) == 0) return 0;
    if (x->n_ids == x->cap_ids) {
        size_t cap = x->cap_ids ? x->cap_ids * 2 : 64;
        char **p = realloc(x->ids, cap * sizeof *p);
        if (!p) return x->rc = REMEM_ENOMEM;
        x->ids = p;
        x->cap_ids = cap;
    }
    if (!(x->ids[x->n_ids] = strdup(id))) return x->rc = REMEM_ENOMEM;
    x->n_ids++;
    return 0;
}

static char *dup_or_null(const char *s, int *bad) {
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) *bad = 1;
    return d;
}

static int keep_hist(void *ctx, const store_history_row *h) {
    ns_read *x = ctx;
    x->s.history++;
    x->s.history_sum += hist_hash(h);
    if (!x->dst) return 0;
    if (x->n_h == x->cap_h) {
        size_t cap = x->cap_h ? x->cap_h * 2 : 64;
        hist_copy *p = realloc(x->h, cap * sizeof *p);
        if (!p) return x->rc = REMEM_ENOMEM;
        x->h = p;
        x->cap_h = cap;
    }
    int bad = 0;
    hist_copy *c = &x->h[x->n_h++];
    *c = (hist_copy){.seq = h->seq,
                     .at = h->at,
                     .ns = dup_or_null(h->ns, &bad),
                     .id = dup_or_null(h->id, &bad),
                     .op = dup_or_null(h->op, &bad),
                     .actor = dup_or_null(h->actor, &bad),
                     .before = dup_or_null(h->before, &bad),
                     .after = dup_or_null(h->after, &bad)};
    return bad ? (x->rc = REMEM_ENOMEM) : 0;
}

static int by_seq(const void *a, const void *b) {
    const hist_copy *x = a, *y = b;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void read_free(ns_read *x) {
    for (size_t i = 0; i < x->n_ids; i++) free(x->ids[i]);
    free(x->ids);
    for (size_t i = 0; i < x->n_h; i++) {
        hist_copy *c = &x->h[i];
        free(c->ns);
        free(c->id);
        free(c->op);
        free(c->actor);
        free(c->before);
        free(c->after);
    }
    free(x->h);
    memset(x, 0, sizeof *x);
}

/* The sums of ns in st; with x->dst, its rows and history go there too
 * (history kept in x->h for the caller to write in seq order). */
static int read_ns(store *st, const char *ns, ns_read *x, char *err, size_t errcap) {
    int64_t last = 0;
    int rc = store_history_since(st, ns, 0, note_id, x, &last);
    for (size_t i = 0; !rc && i < x->n_ids; i++)
        rc = store_history(st, ns, x->ids[i], keep_hist, x);
    if (!rc) rc = store_scan(st, ns, 1, sum_row, x);
    if (rc && x->err[0])
        snprintf(err, errcap, "%s", x->err);
    else if (rc && rc == x->rc)
        snprintf(err, errcap, "out of memory");
    else if (rc)
        snprintf(err, errcap, "%s", store_errmsg(st));
    return rc;
}

/* ---- the copy ---- */

typedef struct ns_names {
    char **v;
    size_t n, cap;
} ns_names;

static int list_ns(void *ctx, const store_ns *n) {
    ns_names *l = ctx;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **p = realloc(l->v, cap * sizeof *p);
        if (!p) return REMEM_ENOMEM;
        l->v = p;
        l->cap = cap;
    }
    if (!(l->v[l->n] = strdup(n->ns))) return REMEM_ENOMEM;
    l->n++;
    return 0;
}

static char *hex64(char buf[17], uint64_t v) {
    snprintf(buf, 17, "%016" PRIx64, v);
    return buf;
}

/* Copy one namespace in one destination transaction; *skipped when the
 * destination already holds the same content. */
static int copy_ns(remem *db, store *dst, const char *ns, json_t *report, sum *total) {
    char err[512] = "";
    store *src = db->st;
    char model[256] = "";
    int dim = 0;
    int64_t rows = 0;
    int rc = store_ns_info(src, ns, model, sizeof model, &dim, NULL, &rows);
    if (rc) return eng_fail(db, rc, "reading namespace %s: %s", ns, store_errmsg(src));

    /* What the destination holds of ns already. */
    ns_read have = {0};
    rc = read_ns(dst, ns, &have, err, sizeof err);
    sum there = have.s;
    read_free(&have);
    if (rc) return eng_fail(db, rc, "reading namespace %s in the destination: %s", ns, err);

    ns_read in = {0};
    if (there.rows || there.history) {
        rc = read_ns(src, ns, &in, err, sizeof err);
        sum here = in.s;
        read_free(&in);
        if (rc) return eng_fail(db, rc, "reading namespace %s: %s", ns, err);
        if (memcmp(&here, &there, sizeof here) != 0)
            return eng_fail(db, REMEM_EINVAL,
                            "the destination already holds namespace %s with other content "
                            "(%lld memories, %lld history rows); clear it there first",
                            ns, (long long)there.rows, (long long)there.history);
        json_t *o = json_pack("{s:s,s:I,s:I,s:b}", "ns", ns, "memories", (json_int_t)here.rows,
                              "history", (json_int_t)here.history, "skipped", 1);
        json_array_append_new(report, o);
        total->rows += here.rows;
        total->history += here.history;
        total->rows_sum += here.rows_sum;
        total->history_sum += here.history_sum;
        return REMEM_OK;
    }

    if ((rc = store_begin(dst))) return eng_fail(db, rc, "destination: %s", store_errmsg(dst));
    in.dst = dst;
    /* A database server then takes the namespace's rows a few thousand
     * to a statement, not one round trip each. */
    const char *one[1] = {ns};
    store_batch b = {.ns = one, .n_ns = 1, .n_new = rows > 0 ? (size_t)rows : 0};
    if ((rc = store_batch_begin(dst, &b)) == REMEM_EUNSUPPORTED) rc = REMEM_OK;
    if (!rc && model[0] && dim > 0) rc = store_ns_set_model(dst, ns, model, dim);
    if (!rc)
        rc = read_ns(src, ns, &in, err, sizeof err);
    else
        snprintf(err, sizeof err, "%s", store_errmsg(dst));
    if (!rc) {
        qsort(in.h, in.n_h, sizeof *in.h, by_seq);
        for (size_t i = 0; !rc && i < in.n_h; i++) {
            hist_copy *c = &in.h[i];
            rc = store_history_add(dst, c->ns, c->id, c->at, c->op, c->actor, c->before, c->after);
            if (rc) snprintf(err, sizeof err, "%s", store_errmsg(dst));
        }
    }
    if (!rc && (rc = store_commit(dst))) snprintf(err, sizeof err, "%s", store_errmsg(dst));
    if (rc) {
        store_rollback(dst);
        read_free(&in);
        return eng_fail(db, rc, "copying namespace %s: %s", ns, err);
    }
    sum read = in.s;
    read_free(&in);

    /* Verify: read back what the destination now holds. */
    ns_read back = {0};
    rc = read_ns(dst, ns, &back, err, sizeof err);
    sum written = back.s;
    read_free(&back);
    if (rc) return eng_fail(db, rc, "verifying namespace %s: %s", ns, err);
    if (memcmp(&read, &written, sizeof read) != 0)
        return eng_fail(
            db, REMEM_ESTORE,
            "namespace %s differs after the copy: %lld/%lld memories, %lld/%lld history "
            "rows (source/destination); was the source written to meanwhile?",
            ns, (long long)read.rows, (long long)written.rows, (long long)read.history,
            (long long)written.history);
    char h1[17];
    json_t *o = json_pack("{s:s,s:I,s:I,s:b,s:s}", "ns", ns, "memories", (json_int_t)read.rows,
                          "history", (json_int_t)read.history, "skipped", 0, "checksum",
                          hex64(h1, read.rows_sum ^ (read.history_sum * 31)));
    json_array_append_new(report, o);
    total->rows += read.rows;
    total->history += read.history;
    total->rows_sum += read.rows_sum;
    total->history_sum += read.history_sum;
    return REMEM_OK;
}

int remem_copy(remem *db, const char *dst_uri, char **json) {
    if (json) *json = NULL;
    int rc = eng_need_open(db);
    if (rc) return rc;
    if (!dst_uri || !*dst_uri) return eng_fail(db, REMEM_EINVAL, "no destination store given");
    if (strcmp(dst_uri, db->uri) == 0)
        return eng_fail(db, REMEM_EINVAL, "the source and the destination are the same store");
    store_config cfg = {.durability = db->opt.durability,
                        .busy_timeout_ms = db->opt.busy_timeout_ms};
    store *dst = NULL;
    char err[512] = "";
    rc = store_open(dst_uri, &cfg, &dst, err, sizeof err);
    if (rc) return eng_fail(db, rc, "cannot open the destination: %s", err);
    ns_names names = {0};
    rc = store_namespaces(db->st, list_ns, &names);
    if (rc) {
        rc = eng_fail(db, rc, "listing namespaces: %s", store_errmsg(db->st));
        goto out;
    }
    json_t *report = json_array();
    sum total = {0};
    int copied = 0, skipped = 0;
    for (size_t i = 0; !rc && i < names.n; i++) {
        rc = copy_ns(db, dst, names.v[i], report, &total);
        if (!rc) {
            json_t *last = json_array_get(report, json_array_size(report) - 1);
            if (json_is_true(json_object_get(last, "skipped")))
                skipped++;
            else
                copied++;
        }
    }
    if (!rc && json) {
        char h1[17], text[256];
        snprintf(text, sizeof text,
                 "%d namespaces copied, %d already there; %lld memories, %lld history rows; "
                 "checksum %s verified",
                 copied, skipped, (long long)total.rows, (long long)total.history,
                 hex64(h1, total.rows_sum ^ (total.history_sum * 31)));
        json_t *o = json_pack("{s:o,s:i,s:i,s:I,s:I,s:s,s:s}", "namespaces", report, "copied",
                              copied, "skipped", skipped, "memories", (json_int_t)total.rows,
                              "history", (json_int_t)total.history, "checksum", h1, "text", text);
        *json = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        if (!*json) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    } else {
        json_decref(report);
    }
    if (!rc) eng_ok(db);
out:
    for (size_t i = 0; i < names.n; i++) free(names.v[i]);
    free(names.v);
    store_close(dst);
    return rc;
}
