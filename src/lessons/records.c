/*
 * records.c: how src/lessons/ reads and writes its memories. Reading lists
 * every valid memory of one kind from the namespace's cache (the copy the
 * engine keeps in step with the store, other processes' writes included),
 * copying each out because the writes that follow change the cache.
 * Writing queues upserts by id into one remem_add_batch: an operation's
 * writes (a lesson's counters, the hint log of the retrieval that changed
 * them) commit together or not at all.
 */
#include <stdlib.h>
#include <string.h>

#include "lessons/lessons.h"

void lsn_list_free(lsn_list *l) {
    if (!l) return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].id);
        free(l->v[i].text);
        json_decref(l->v[i].meta);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

static void lsn_sort(lsn_list *l);

int lsn_list_kind(remem *db, const char *ns, const char *kind, lsn_list *out) {
    out->v = NULL;
    out->n = 0;
    int rc = eng_need_open(db);
    if (rc) return rc;
    ns_cache *c = cache_get(db, ns, &rc);
    if (!c) return rc;
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->rows[i].m.kind && !strcmp(c->rows[i].m.kind, kind) && !c->rows[i].m.invalidated_at)
            n++;
    if (!n || !(out->v = calloc(n, sizeof *out->v))) {
        cache_put(db, c);
        return n ? eng_fail(db, REMEM_ENOMEM, "out of memory") : REMEM_OK;
    }
    /* Rows in the cache are not in rowid order after removals: sort the
     * picked ones by creation, then id, to list them in the order written. */
    for (size_t i = 0; i < c->n; i++) {
        const remem_memory *m = &c->rows[i].m;
        if (!m->kind || strcmp(m->kind, kind) || m->invalidated_at) continue;
        const json_t *meta = cache_meta(c, i);
        lsn_rec *r = &out->v[out->n++];
        r->id = strdup(m->id);
        r->text = strdup(m->text ? m->text : "");
        r->meta = meta ? json_deep_copy(meta) : json_object();
        r->created_at = m->created_at;
        r->updated_at = m->updated_at;
        r->archived = m->tier && !strcmp(m->tier, "archived");
        if (!r->id || !r->text || !r->meta) {
            cache_put(db, c);
            lsn_list_free(out);
            return eng_fail(db, REMEM_ENOMEM, "out of memory");
        }
    }
    cache_put(db, c);
    lsn_sort(out);
    return REMEM_OK;
}

static int rec_cmp(const void *a, const void *b) {
    const lsn_rec *x = a, *y = b;
    if (x->created_at != y->created_at) return x->created_at < y->created_at ? -1 : 1;
    return strcmp(x->id, y->id);
}

lsn_rec *lsn_find(lsn_list *l, const char *id) {
    for (size_t i = 0; id && i < l->n; i++)
        if (!strcmp(l->v[i].id, id)) return &l->v[i];
    return NULL;
}

static void lsn_sort(lsn_list *l) {
    if (l->n > 1) qsort(l->v, l->n, sizeof *l->v, rec_cmp);
}

static char *own(lsn_batch *b, char *s) {
    if (!s) return NULL;
    if (b->n_own == b->cap_own) {
        size_t cap = b->cap_own ? b->cap_own * 2 : 16;
        char **v = realloc(b->own, cap * sizeof *v);
        if (!v) {
            free(s);
            return NULL;
        }
        b->own = v;
        b->cap_own = cap;
    }
    return b->own[b->n_own++] = s;
}

int lsn_batch_put(lsn_batch *b, const char *ns, const char *id, const char *kind, const char *text,
                  const json_t *meta, int64_t created_at) {
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 8;
        remem_memory *v = realloc(b->m, cap * sizeof *v);
        if (!v) return REMEM_ENOMEM;
        b->m = v;
        b->cap = cap;
    }
    char *mt = own(b, json_dumps(meta, JSON_COMPACT | JSON_SORT_KEYS));
    char *ids = own(b, strdup(id));
    char *txt = own(b, strdup(text && *text ? text : kind));
    char *nss = own(b, strdup(ns));
    char *k = own(b, strdup(kind));
    if (!mt || !ids || !txt || !nss || !k) return REMEM_ENOMEM;
    /* One id is written once per batch: a later put replaces the earlier. */
    for (size_t i = 0; i < b->n; i++)
        if (!strcmp(b->m[i].id, id) && !strcmp(b->m[i].ns, ns)) {
            b->m[i].metadata = mt;
            b->m[i].text = txt;
            return REMEM_OK;
        }
    remem_memory *m = &b->m[b->n++];
    remem_memory_init(m);
    m->ns = nss;
    m->id = ids;
    m->kind = k;
    m->text = txt;
    m->metadata = mt;
    m->created_at = created_at;
    return REMEM_OK;
}

void lsn_batch_free(lsn_batch *b) {
    for (size_t i = 0; i < b->n_own; i++) free(b->own[i]);
    free(b->own);
    free(b->m);
    memset(b, 0, sizeof *b);
}

int lsn_batch_commit(remem *db, lsn_batch *b) {
    int rc = REMEM_OK;
    if (b->n) rc = remem_add_batch(db, b->m, b->n, NULL, 0, NULL);
    lsn_batch_free(b);
    return rc;
}

void lsn_new_id(const char *prefix, char buf[40]) {
    char id[27];
    util_new_id(util_now_ms(), id);
    snprintf(buf, 40, "%s%s", prefix, id);
}

json_t *lsn_time_json(int64_t ms) {
    char t[40];
    remem_format_time(ms, t, sizeof t);
    return json_string(t);
}

const char *lsn_s(const json_t *o, const char *key) {
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

const char *lsn_str(const json_t *o, const char *key, const char *def) {
    const char *s = lsn_s(o, key);
    return s ? s : def;
}

double lsn_d(const json_t *o, const char *key, double def) {
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : def;
}

int64_t lsn_i(const json_t *o, const char *key, int64_t def) {
    json_t *v = json_object_get(o, key);
    if (json_is_integer(v)) return (int64_t)json_integer_value(v);
    if (json_is_real(v)) return (int64_t)json_real_value(v);
    return def;
}

int lsn_has(const json_t *a, const char *s) {
    size_t i;
    json_t *e;
    if (!s) return 0;
    json_array_foreach(a, i, e) if (json_is_string(e) && !strcmp(json_string_value(e), s)) return 1;
    return 0;
}

double lsn_reliability(const json_t *lesson, int transfer) {
    double h = (double)lsn_i(lesson, transfer ? "transfer_helpful_count" : "helpful_count", 0);
    double x = (double)lsn_i(lesson, transfer ? "transfer_harmful_count" : "harmful_count", 0);
    return (h + 1.0) / (h + x + 2.0);
}

int lsn_write_status(remem *db, const char *ns, const char *id, const json_t *meta,
                     const char *reason) {
    char *mt = json_dumps(meta, JSON_COMPACT | JSON_SORT_KEYS);
    if (!mt) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    remem_patch p;
    remem_patch_init(&p);
    p.fields = REMEM_SET_METADATA;
    p.metadata = mt;
    p.actor = reason;
    int rc = remem_update(db, ns, id, &p);
    free(mt);
    return rc;
}
