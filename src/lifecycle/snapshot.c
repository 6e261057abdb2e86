/*
 * snapshot.c: the lifecycle's reads and writes of a namespace.
 *
 * Reads copy what an operation needs out of the namespace's cache (the
 * rows and vectors recall already holds in memory), because the cache is
 * rearranged by every write: an operation that reads, asks an LLM and then
 * writes must not keep pointers into it.
 *
 * Writes go through one transaction per operation (lc_write): new
 * memories through the engine's own add step (eng_add_in_txn), tier moves
 * as a read-modify-write of the row with a history row ("migrate",
 * "archive", "restore"), so a summary never exists without its sources
 * archived, nor a migration half done.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle/lifecycle.h"
#include "util/util.h"

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static void mem_free(lc_mem *m) {
    free(m->id);
    free(m->text);
    free(m->kind);
    free(m->tier);
    free(m->metadata);
    free(m->links);
    free(m->vec);
}

void lc_list_free(lc_list *l) {
    if (!l) return;
    for (size_t i = 0; i < l->n; i++) mem_free(&l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int cmp_rowid(const void *a, const void *b) {
    const lc_mem *x = a, *y = b;
    return x->rowid < y->rowid ? -1 : x->rowid > y->rowid;
}

int lc_snapshot(remem *db, const char *ns, lc_keep_fn keep, void *ctx, int with_vec, lc_list *out) {
    memset(out, 0, sizeof *out);
    int rc = eng_need_open(db);
    if (rc) return rc;
    ns_cache *c = cache_get(db, ns, &rc);
    if (!c) return rc;
    out->dim = c->dim;
    for (size_t i = 0; i < c->n; i++) {
        const remem_memory *m = &c->rows[i].m;
        if (m->invalidated_at) continue;
        if (keep && !keep(m, ctx)) continue;
        if (out->n == out->cap) {
            size_t cap = out->cap ? out->cap * 2 : 64;
            lc_mem *v = realloc(out->v, cap * sizeof *v);
            if (!v) goto oom;
            out->v = v;
            out->cap = cap;
        }
        lc_mem *d = &out->v[out->n];
        memset(d, 0, sizeof *d);
        out->n++;
        d->rowid = c->rows[i].rowid;
        d->importance = m->importance;
        d->created_at = m->created_at;
        d->accessed_at = m->accessed_at;
        d->id = strdup(m->id);
        d->text = strdup(m->text);
        d->kind = strdup(m->kind ? m->kind : "observation");
        d->tier = strdup(m->tier ? m->tier : "short");
        d->metadata = dup_or_null(m->metadata);
        d->links = dup_or_null(m->links);
        if (!d->id || !d->text || !d->kind || !d->tier || (m->metadata && !d->metadata) ||
            (m->links && !d->links))
            goto oom;
        if (with_vec) {
            d->vec = malloc((size_t)c->dim * sizeof *d->vec);
            if (!d->vec) goto oom;
            memcpy(d->vec, flat_row(c->ix, i), (size_t)c->dim * sizeof *d->vec);
        }
    }
    cache_put(db, c);
    /* The cache moves rows around on removal: give them in written order. */
    if (out->n) qsort(out->v, out->n, sizeof *out->v, cmp_rowid);
    return REMEM_OK;
oom:
    cache_put(db, c);
    lc_list_free(out);
    return eng_fail(db, REMEM_ENOMEM, "out of memory");
}

char *lc_json_text(json_t *v) {
    char *s = v ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    return s;
}

char *lc_ids_json(const char *const *ids, size_t n) {
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) json_array_append_new(a, json_string(ids[i]));
    return lc_json_text(a);
}

/* Move (ns, id) to tier inside the open transaction x. */
static int move_one(remem *db, txn *x, const char *ns, const lc_move *mv, const char *actor,
                    int64_t now) {
    store_row old, full;
    int rc = store_find(db->st, ns, mv->id, 1, &full);
    if (rc == REMEM_ENOTFOUND) return eng_fail(db, rc, "%s/%s: no such memory", ns, mv->id);
    if (rc) return eng_store_fail(db, rc);
    old = full;
    remem_memory m = old.m;
    if (mv->from && (!m.tier || strcmp(m.tier, mv->from))) {
        rc = eng_fail(db, REMEM_EBUSY, "%s/%s is no longer %s: another call moved it", ns, mv->id,
                      mv->from);
        store_row_clear(&full);
        return rc;
    }
    const char *op = "migrate";
    if (m.tier && !strcmp(m.tier, "archived") && strcmp(mv->tier, "archived"))
        op = "restore";
    else if (!strcmp(mv->tier, "archived"))
        op = "archive";
    m.tier = mv->tier;
    m.updated_at = now;
    m.vector = full.vec;
    m.dim = full.vec ? full.m.dim : 0;
    char *norm = util_normalize_text(m.text);
    if (!norm) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    if (!rc) {
        rc = store_replace(db->st, old.rowid, &m, norm, util_hash64(norm, strlen(norm)));
        if (rc)
            eng_store_fail(db, rc);
        else
            rc = eng_history(db, &old.m, &m, op, actor, now);
    }
    if (!rc) rc = eng_txn_row(db, x, ns, old.rowid);
    free(norm);
    store_row_clear(&full);
    return rc;
}

int lc_write(remem *db, const char *ns, const remem_memory *adds, size_t nadd, char (*ids)[32],
             const lc_move *moves, size_t nmoves, const char *actor) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    if (db->opt.read_only) return eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    int dim = db->emb->dim;
    float *vecs = NULL;
    const char **texts = NULL;
    if (nadd) {
        vecs = malloc(nadd * (size_t)dim * sizeof *vecs);
        texts = malloc(nadd * sizeof *texts);
        if (!vecs || !texts) {
            rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < nadd; i++) {
            if ((rc = eng_validate(db, &adds[i]))) goto out;
            texts[i] = adds[i].text;
        }
        /* Embed before the transaction: a slow embedder never holds the
         * write lock, and a failing one leaves nothing behind. */
        char err[512] = "";
        rc = db->emb->embed(db->emb, texts, nadd, vecs, err, sizeof err);
        if (rc) {
            eng_fail(db, rc, "%s", err[0] ? err : remem_strerror(rc));
            goto out;
        }
    }
    int64_t now = util_now_ms();
    if ((rc = store_begin(db->st))) {
        eng_store_fail(db, rc);
        goto out;
    }
    txn x = {0};
    for (size_t i = 0; i < nmoves && !rc; i++) rc = move_one(db, &x, ns, &moves[i], actor, now);
    for (size_t i = 0; i < nadd && !rc; i++) {
        remem_memory m = adds[i];
        char idbuf[32];
        if (!m.id) {
            /* A generated id of our own: a product of the lifecycle (an
             * extractive reflection quoting a statement, say) must not fold
             * into the memory whose text it repeats. */
            util_new_id(now, idbuf);
            m.id = idbuf;
        }
        rc = eng_add_in_txn(db, &x, &m, vecs + i * (size_t)dim, now, NULL, 0, NULL);
        if (!rc && ids) snprintf(ids[i], 32, "%s", m.id);
    }
    rc = eng_txn_end(db, &x, rc);
out:
    free(vecs);
    free(texts);
    return rc;
}
