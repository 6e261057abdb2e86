/*
 * edit.c: get, and the one read-modify-write path (edit) behind update,
 * invalidate and forget: the stored row is read, changed by a small
 * function, written back with a history row, inside one transaction. A
 * purge deletes the row, empties its history rows of everything but what
 * happened when (no text, metadata, links or reason), adds one such row for
 * the delete, and has the store scrub the WAL and freed pages (the
 * lexical index is the cache's, in memory: the row's removal takes it).
 */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "score/score.h"
#include "util/util.h"

/* ---- get ---- */

struct remem_record {
    store_row row;
};

const remem_memory *remem_record_memory(const remem_record *r) { return &r->row.m; }
void remem_record_free(remem_record *r) {
    if (!r) return;
    store_row_clear(&r->row);
    free(r);
}

int remem_get(remem *db, const char *ns, const char *id, remem_record **out) {
    *out = NULL;
    int rc = eng_need_open(db);
    if (rc) return rc;
    if (!id || !*id) return eng_fail(db, REMEM_EINVAL, "no id given");
    remem_record *r = calloc(1, sizeof *r);
    if (!r) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    rc = store_find(db->st, ns, id, 0, &r->row);
    if (rc) {
        free(r);
        return eng_store_fail(db, rc);
    }
    r->row.m.size = sizeof r->row.m; /* a caller may hand it back (remem_memory_to_json) */
    *out = r;
    return REMEM_OK;
}

/* ---- update, invalidate, forget ---- */

/* Apply fn to the row (ns, id) inside one transaction. fn edits *m (a copy
 * of the stored memory) and names the history op; it may set *purge. */
typedef int (*edit_fn)(remem *db, void *ctx, remem_memory *m, const char **op, int *purge);

/* Apply fn to the row (ns, id) inside the open transaction x, at now.
 * *purged receives the deleted row's rowid when fn asked for a purge (the
 * caller scrubs the files after the commit). */
static int edit_in_txn(remem *db, txn *x, const char *ns, const char *id, edit_fn fn, void *ctx,
                       const float *newvec, const char *actor, int64_t now, int *purged) {
    store_row old;
    int rc = store_find(db->st, ns, id, 0, &old);
    if (rc) return eng_store_fail(db, rc);
    remem_memory m = old.m;
    const char *op = "update";
    int purge = 0;
    rc = fn(db, ctx, &m, &op, &purge);
    assert(op && (!purge || strcmp(op, "delete") == 0)); /* only forget --purge deletes */
    if (!rc && newvec) rc = eng_check_model(db, m.ns);
    if (!rc && purge) {
        rc = store_delete(db->st, old.rowid);
        if (rc) eng_store_fail(db, rc);
        if (!rc) {
            rc = store_history_scrub(db->st, old.m.ns, old.m.id);
            if (rc) eng_store_fail(db, rc);
        }
        /* What is left of it: that (ns, id) was deleted, and when. */
        if (!rc) {
            rc = store_history_add(db->st, old.m.ns, old.m.id, now, op, NULL, NULL, NULL);
            if (rc) eng_store_fail(db, rc);
        }
    } else if (!rc) {
        m.updated_at = now;
        if (newvec) {
            m.vector = newvec;
            m.dim = db->emb->dim;
            m.model = db->emb->model_id;
        } else {
            /* Keep the stored vector: re-read it. */
            store_row full;
            rc = store_get_rowid(db->st, old.rowid, 1, &full);
            if (rc)
                eng_store_fail(db, rc);
            else {
                m.vector = full.vec;
                m.dim = full.m.dim;
                full.vec = NULL;
                store_row_clear(&full);
            }
        }
        char *norm = rc ? NULL : util_normalize_text(m.text);
        if (!rc && !norm) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        if (!rc) {
            rc = store_replace(db->st, old.rowid, &m, norm, util_hash64(norm, strlen(norm)));
            if (rc)
                eng_store_fail(db, rc);
            else
                rc = eng_history(db, &old.m, &m, op, actor, now);
            if (!rc && newvec) rc = eng_set_model(db, m.ns);
        }
        if (!newvec) free((float *)m.vector);
        free(norm);
    }
    if (!rc) rc = eng_txn_row(db, x, old.m.ns, old.rowid);
    if (purged) *purged = !rc && purge;
    store_row_clear(&old);
    return rc;
}

static int edit(remem *db, const char *ns, const char *id, edit_fn fn, void *ctx,
                const float *newvec, const char *actor) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    if (!id || !*id) return eng_fail(db, REMEM_EINVAL, "no id given");
    if ((rc = eng_check_utf8(db, "namespace", ns)) || (rc = eng_check_utf8(db, "id", id)))
        return rc;
    if (eng_memory_off(db, ns)) return REMEM_OK; /* accepted, dropped */
    if (db->opt.read_only) return eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    if ((rc = store_begin(db->st))) return eng_store_fail(db, rc);
    txn x = {0};
    int purged = 0;
    rc = edit_in_txn(db, &x, ns, id, fn, ctx, newvec, actor, util_now_ms(), &purged);
    rc = eng_txn_end(db, &x, rc);
    if (!rc && purged) {
        rc = store_scrub_deleted(db->st);
        if (rc)
            eng_fail(db, rc,
                     "%s/%s was deleted, but scrubbing the store's files failed: %s "
                     "(run the purge again)",
                     ns, id, store_errmsg(db->st));
    }
    return rc;
}

static int apply_patch(remem *db, void *ctx, remem_memory *m, const char **op, int *purge) {
    const remem_patch *p = ctx;
    (void)purge;
    *op = "update";
    /* Seed 001: "static memory is immutable" (policy static_immutable);
     * its personality file, loaded again, is the way to change it. */
    if (m->tier && !strcmp(m->tier, "static") && eng_policy(db, m->ns)->static_immutable)
        return eng_fail(db, REMEM_EINVAL,
                        "%s/%s is a static memory and the policy of its namespace "
                        "(static_immutable) keeps static memories unchanged: load the "
                        "personality file again (static load) to change it",
                        m->ns, m->id);
    if (p->fields & REMEM_SET_TEXT) m->text = p->text;
    if (p->fields & REMEM_SET_KIND) m->kind = p->kind;
    if (p->fields & REMEM_SET_TIER) {
        if (m->tier && strcmp(m->tier, "archived") == 0 && strcmp(p->tier, "archived") != 0)
            *op = "restore";
        else if (strcmp(p->tier, "archived") == 0)
            *op = "archive";
        else if (strcmp(m->tier, p->tier) != 0)
            *op = "migrate";
        m->tier = p->tier;
    }
    if (p->fields & REMEM_SET_IMPORTANCE) m->importance = p->importance;
    if (p->fields & REMEM_SET_METADATA) m->metadata = p->metadata;
    if (p->fields & REMEM_SET_EXPIRES) m->expires_at = p->expires_at;
    if (p->fields & REMEM_SET_LINKS) m->links = p->links;
    (void)db;
    return REMEM_OK;
}

int remem_update(remem *db, const char *ns, const char *id, const remem_patch *in) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    remem_patch pp;
    if ((rc = eng_take_patch(db, in, &pp))) return rc;
    const remem_patch *p = &pp;
    if (!p->fields) return eng_fail(db, REMEM_EINVAL, "nothing to update");
    /* Validate the new values as an add would. */
    remem_memory probe;
    remem_memory_init(&probe);
    probe.ns = ns ? ns : "x";
    probe.text = (p->fields & REMEM_SET_TEXT) ? p->text : "x";
    probe.kind = (p->fields & REMEM_SET_KIND) ? p->kind : NULL;
    probe.tier = (p->fields & REMEM_SET_TIER) ? p->tier : NULL;
    probe.importance = (p->fields & REMEM_SET_IMPORTANCE) ? p->importance : 0;
    probe.metadata = (p->fields & REMEM_SET_METADATA) ? p->metadata : NULL;
    probe.links = (p->fields & REMEM_SET_LINKS) ? p->links : NULL;
    probe.expires_at = (p->fields & REMEM_SET_EXPIRES) ? p->expires_at : 0;
    if ((p->fields & REMEM_SET_KIND) && !p->kind)
        return eng_fail(db, REMEM_EINVAL, "kind is empty");
    if ((p->fields & REMEM_SET_TIER) && !p->tier)
        return eng_fail(db, REMEM_EINVAL, "tier is empty");
    if ((p->fields & REMEM_SET_IMPORTANCE) && (p->importance < 0 || p->importance > 1))
        return eng_fail(db, REMEM_EINVAL, "importance %g is outside [0,1]", p->importance);
    if ((rc = eng_validate(db, &probe))) return rc;
    if ((rc = eng_check_utf8(db, "id", id)) || (rc = eng_check_utf8(db, "actor", p->actor)))
        return rc;
    float *vec = NULL;
    if ((p->fields & REMEM_SET_TEXT) && !eng_memory_off(db, ns)) {
        vec = malloc((size_t)db->emb->dim * sizeof *vec);
        if (!vec) return eng_fail(db, REMEM_ENOMEM, "out of memory");
        char err[512] = "";
        rc = db->emb->embed(db->emb, &p->text, 1, vec, err, sizeof err);
        if (rc) {
            free(vec);
            return eng_fail(db, rc, "%s", err[0] ? err : remem_strerror(rc));
        }
    }
    rc = edit(db, ns, id, apply_patch, (void *)p, vec, p->actor);
    free(vec);
    return rc;
}

typedef struct inval_ctx {
    const char *superseded_by;
    int64_t now;
} inval_ctx;

static int apply_invalidate(remem *db, void *ctx, remem_memory *m, const char **op, int *purge) {
    inval_ctx *c = ctx;
    (void)db;
    (void)purge;
    *op = "invalidate";
    m->invalidated_at = c->now;
    m->superseded_by = c->superseded_by;
    return REMEM_OK;
}

int remem_invalidate(remem *db, const char *ns, const char *id, const char *superseded_by,
                     const char *reason) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    if ((rc = eng_check_utf8(db, "superseded_by", superseded_by)) ||
        (rc = eng_check_utf8(db, "reason", reason)))
        return rc;
    inval_ctx c = {superseded_by && *superseded_by ? superseded_by : NULL, util_now_ms()};
    return edit(db, ns, id, apply_invalidate, &c, NULL, reason);
}

static int apply_forget(remem *db, void *ctx, remem_memory *m, const char **op, int *purge) {
    (void)db;
    *purge = *(int *)ctx;
    *op = *purge ? "delete" : "archive";
    if (!*purge) m->tier = "archived";
    return REMEM_OK;
}

int remem_forget(remem *db, const char *ns, const char *id, int purge) {
    return edit(db, ns, id, apply_forget, &purge, NULL, NULL);
}

/* ---- inside a caller's transaction (engine.h) ---- */

int eng_update_in_txn(remem *db, txn *x, const char *ns, const char *id, const remem_patch *p,
                      const float *newvec, int64_t now) {
    assert(!(p->fields & REMEM_SET_TEXT) || newvec); /* a new text comes with its vector */
    return edit_in_txn(db, x, ns, id, apply_patch, (void *)p, newvec, p->actor, now, NULL);
}

int eng_invalidate_in_txn(remem *db, txn *x, const char *ns, const char *id,
                          const char *superseded_by, const char *reason, int64_t now) {
    inval_ctx c = {superseded_by && *superseded_by ? superseded_by : NULL, now};
    return edit_in_txn(db, x, ns, id, apply_invalidate, &c, NULL, reason, now, NULL);
}

int eng_purge_in_txn(remem *db, txn *x, const char *ns, const char *id, int64_t now) {
    int purge = 1;
    return edit_in_txn(db, x, ns, id, apply_forget, &purge, NULL, NULL, now, NULL);
}

/* Purge many rows of ns in one transaction (memory.delete, list.c): each
 * as remem_forget's purge does it (row deleted, its history scrubbed, a
 * text-less "delete" row), then the store's files scrubbed once. Rows gone
 * since they were selected are skipped. *deleted: how many went. */
int eng_purge_rows(remem *db, const int64_t *rowids, size_t n, int64_t *deleted) {
    *deleted = 0;
    int rc = eng_need_open(db);
    if (rc || !n) return rc;
    if (db->opt.read_only) return eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    if ((rc = store_begin(db->st))) return eng_store_fail(db, rc);
    txn x = {0};
    int64_t now = util_now_ms();
    for (size_t i = 0; i < n && !rc; i++) {
        store_row old;
        if (store_get_rowid(db->st, rowids[i], 0, &old)) continue;
        rc = store_delete(db->st, old.rowid);
        if (!rc) rc = store_history_scrub(db->st, old.m.ns, old.m.id);
        if (!rc)
            rc = store_history_add(db->st, old.m.ns, old.m.id, now, "delete", NULL, NULL, NULL);
        if (rc)
            eng_store_fail(db, rc);
        else if (!(rc = eng_txn_row(db, &x, old.m.ns, old.rowid)))
            ++*deleted;
        store_row_clear(&old);
    }
    rc = eng_txn_end(db, &x, rc);
    if (rc) *deleted = 0;
    if (!rc && (rc = store_scrub_deleted(db->st)))
        eng_fail(db, rc,
                 "the memories were deleted, but scrubbing the store's files failed: %s "
                 "(run the delete again)",
                 store_errmsg(db->st));
    return rc;
}
