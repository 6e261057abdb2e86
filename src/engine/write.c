/*
 * write.c: add and add_batch. Defaults are filled in (kind, tier, the
 * kind's importance, times), an exact duplicate of a namespace's text folds
 * into the existing row (duplicate_count), a caller's id upserts, and a
 * batch is one transaction.
 */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/telemetry_glue.h"
#include "engine/hooks.h"
#include "score/score.h"
#include "util/util.h"

/* What a batch knew of one memory before writing it (plan_batch, on a
 * store with a batch call): its normalised text and the row it folds
 * into, so that the store is not asked once per memory. */
typedef struct add_hint {
    char *norm; /* owned by the plan */
    uint64_t h;
    int64_t dup;   /* the row it duplicates (0: none), as find_dup would say */
    size_t first;  /* the batch's first memory with its namespace and text */
    int64_t rowid; /* OUT: the row written */
} add_hint;

/* m: in with the defaults filled (kind, tier, importance, times) and
 * the vector vec of the handle's model (NULL: pending, pending.c). */
static void with_defaults(remem *db, const remem_memory *in, const float *vec, int64_t now,
                          remem_memory *m) {
    *m = *in;
    m->kind = m->kind ? m->kind : "observation";
    m->tier = m->tier ? m->tier : (strcmp(m->kind, "static") == 0 ? "static" : "short");
    if (m->importance < 0) m->importance = eng_kind_importance(m->kind);
    if (m->created_at == 0) m->created_at = now;
    m->updated_at = now;
    m->accessed_at = m->created_at;
    m->access_count = 0;
    /* invalidated_at and superseded_by are kept as given, so that an
     * export imported again keeps its replaced facts out of recall. */
    m->duplicate_count = 0;
    m->vector = vec;
    m->dim = vec ? db->emb->dim : 0;
    m->model = vec ? db->emb->model_id : NULL;
    /* eng_validate ran: what is stored is within the documented ranges. */
    assert(m->ns && m->text && m->kind && m->tier);
    assert(m->importance >= 0 && m->importance <= 1);
}

/* The namespace's model lock: checked and recorded once per transaction,
 * not per memory. */
static int model_lock(remem *db, txn *x, const char *ns) {
    int rc = REMEM_OK;
    touched *t = eng_txn_ns(db, x, ns, &rc);
    if (!t) return rc;
    if (!t->model_ok) {
        if ((rc = eng_check_model(db, ns)) || (rc = eng_set_model(db, ns))) return rc;
        t->model_ok = 1;
    }
    return REMEM_OK;
}

/* The new row m (defaults filled, id set), its history and its place in
 * the transaction; *rowid (may be NULL) the row written. */
static int insert_row(remem *db, txn *x, const remem_memory *m, const char *norm, uint64_t h,
                      int64_t now, char *id_out, size_t id_cap, int64_t *rowid_out) {
    int64_t rowid = 0;
    int rc = store_insert(db->st, m, norm, h, &rowid);
    if (rc) return eng_store_fail(db, rc);
    rc = eng_history(db, NULL, m, "add", NULL, now);
    if (!rc) rc = eng_txn_row(db, x, m->ns, rowid);
    if (!rc && id_out) snprintf(id_out, id_cap, "%s", m->id);
    if (!rc && rowid_out) *rowid_out = rowid;
    return rc;
}

int eng_insert_in_txn(remem *db, txn *x, const remem_memory *in, const float *vec, int64_t now,
                      const char *norm, uint64_t h) {
    remem_memory m;
    with_defaults(db, in, vec, now, &m);
    assert(m.id && norm);
    int rc = model_lock(db, x, m.ns);
    return rc ? rc : insert_row(db, x, &m, norm, h, now, NULL, 0, NULL);
}

/* Write one validated memory with its final vector, inside the open
 * transaction; hint (may be NULL) for a memory without an id. */
static int add_in_txn(remem *db, txn *x, const remem_memory *in, const float *vec, int64_t now,
                      char *id_out, size_t id_cap, int *outcome, add_hint *hint) {
    remem_memory m;
    with_defaults(db, in, vec, now, &m);
    char idbuf[27];
    if (m.id) hint = NULL;
    char *norm = hint ? hint->norm : util_normalize_text(m.text);
    if (!norm) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    uint64_t h = hint ? hint->h : util_hash64(norm, strlen(norm));
    int64_t rowid = 0;
    int out = REMEM_ADDED;
    int rc = model_lock(db, x, m.ns);
    if (rc) goto done;
    if (m.id) {
        store_row old;
        rc = store_find(db->st, m.ns, m.id, 0, &old);
        if (rc == REMEM_OK) {
            /* Upsert: the caller's id names this memory; keep its history
             * and its access record, replace the content. */
            m.access_count = old.m.access_count;
            m.accessed_at = old.m.accessed_at;
            if (in->created_at == 0) m.created_at = old.m.created_at;
            rowid = old.rowid;
            rc = store_replace(db->st, rowid, &m, norm, h);
            if (rc)
                eng_store_fail(db, rc);
            else
                rc = eng_history(db, &old.m, &m, "update", NULL, now);
            store_row_clear(&old);
            out = REMEM_UPSERTED;
            if (!rc) rc = eng_txn_row(db, x, m.ns, rowid);
            if (!rc && id_out) snprintf(id_out, id_cap, "%s", m.id);
            goto done;
        }
        if (rc != REMEM_ENOTFOUND) {
            eng_store_fail(db, rc);
            goto done;
        }
        rc = REMEM_OK;
    } else {
        /* Only generated ids fold exact duplicates: a caller's own id must
         * stay gettable. */
        if (hint)
            rowid = hint->dup;
        else
            rc = store_find_dup(db->st, m.ns, h, norm, &rowid);
        if (rc) {
            eng_store_fail(db, rc);
            goto done;
        }
        if (rowid) {
            store_row old;
            rc = store_get_rowid(db->st, rowid, 0, &old);
            if (rc) {
                eng_store_fail(db, rc);
                goto done;
            }
            rc = store_bump_duplicate(db->st, rowid, now);
            if (rc)
                eng_store_fail(db, rc);
            else {
                remem_memory after = old.m;
                after.duplicate_count++;
                after.updated_at = now;
                rc = eng_history(db, &old.m, &after, "duplicate", NULL, now);
            }
            if (!rc && id_out) snprintf(id_out, id_cap, "%s", old.m.id);
            store_row_clear(&old);
            out = REMEM_DUPLICATE;
            if (!rc) rc = eng_txn_row(db, x, m.ns, rowid);
            goto done;
        }
        util_new_id(now, idbuf);
        m.id = idbuf;
    }
    rc = insert_row(db, x, &m, norm, h, now, id_out, id_cap, &rowid);
done:
    if (!hint) free(norm);
    if (!rc && hint) hint->rowid = rowid;
    if (!rc && outcome) *outcome = out;
    return rc;
}

/* engine.h: the lifecycle writes its products through it. */
int eng_add_in_txn(remem *db, txn *x, const remem_memory *in, const float *vec, int64_t now,
                   char *id_out, size_t id_cap, int *outcome) {
    return add_in_txn(db, x, in, vec, now, id_out, id_cap, outcome, NULL);
}

/* ---- a batch's plan: what the store is told before the writes ---- */

typedef struct plan_key {
    uint64_t h;
    const char *ns, *norm;
    size_t i;
} plan_key;

static int by_key(const void *a, const void *b) {
    const plan_key *x = a, *y = b;
    if (x->h != y->h) return x->h < y->h ? -1 : 1;
    int c = strcmp(x->ns, y->ns);
    if (!c) c = strcmp(x->norm, y->norm);
    if (!c) c = x->i < y->i ? -1 : x->i > y->i;
    return c;
}

static int by_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Each hint's first: the batch's first memory with the same namespace and
 * text (itself when none is before it). keys: the memories written. */
static void plan_firsts(add_hint *hints, plan_key *keys, size_t nk) {
    qsort(keys, nk, sizeof *keys, by_key);
    for (size_t j = 0; j < nk; j++) {
        int same = j > 0 && keys[j].h == keys[j - 1].h && !strcmp(keys[j].ns, keys[j - 1].ns) &&
                   !strcmp(keys[j].norm, keys[j - 1].norm);
        hints[keys[j].i].first = same ? hints[keys[j - 1].i].first : keys[j].i;
    }
}

static void hints_free(add_hint *hints, size_t n) {
    for (size_t i = 0; hints && i < n; i++) free(hints[i].norm);
    free(hints);
}

/* What plan_batch gathers, each array n long. */
typedef struct plan {
    add_hint *hints;
    const char **names, **kns, **norms; /* namespaces; per memory its ns and text */
    uint64_t *hash;
    int64_t *dup;
    plan_key *keys;
    size_t nn, nk; /* names and keys filled */
} plan;

static void plan_free(plan *p, size_t n) {
    hints_free(p->hints, n);
    free(p->names);
    free(p->kns);
    free(p->norms);
    free(p->hash);
    free(p->dup);
    free(p->keys);
}

/* The namespaces of the memories written, each once, and (keys) the
 * normalised text of each. */
static int plan_fill(remem *db, plan *p, const remem_memory *ms, size_t n, const char *skip,
                     int keys) {
    for (size_t i = 0; i < n; i++) {
        if (skip[i]) continue;
        p->names[p->nn++] = ms[i].ns;
        if (!keys) continue;
        add_hint *h = &p->hints[i];
        if (!(h->norm = util_normalize_text(ms[i].text)))
            return eng_fail(db, REMEM_ENOMEM, "out of memory");
        h->h = p->hash[i] = util_hash64(h->norm, strlen(h->norm));
        p->kns[i] = ms[i].ns;
        p->norms[i] = h->norm;
        p->keys[p->nk++] = (plan_key){h->h, ms[i].ns, h->norm, i};
    }
    qsort(p->names, p->nn, sizeof *p->names, by_str);
    size_t u = 0;
    for (size_t i = 0; i < p->nn; i++)
        if (u == 0 || strcmp(p->names[i], p->names[u - 1]) != 0) p->names[u++] = p->names[i];
    p->nn = u;
    return REMEM_OK;
}

/* The store's batch call for ms[0..n) (skip[i]: memory off), inside the
 * open transaction: the namespaces' locks, the inserts to come and, when
 * no memory has a caller's id (an upsert may change what is a duplicate),
 * every duplicate lookup at once, as hints (*out; NULL: write one by one,
 * as on a store without the call). */
static int plan_batch(remem *db, const remem_memory *ms, size_t n, const char *skip,
                      add_hint **out) {
    *out = NULL;
    if (!store_has_batch(db->st)) return REMEM_OK; /* SQLite: one by one costs no round trip */
    int ids = 0, rc = REMEM_OK;
    size_t n_new = 0;
    for (size_t i = 0; i < n; i++) {
        ids |= !skip[i] && ms[i].id != NULL;
        n_new += !skip[i];
    }
    plan p = {.hints = calloc(n, sizeof *p.hints), .names = calloc(n, sizeof *p.names),
              .kns = calloc(n, sizeof *p.kns), .norms = calloc(n, sizeof *p.norms),
              .hash = calloc(n, sizeof *p.hash), .dup = calloc(n, sizeof *p.dup),
              .keys = calloc(n, sizeof *p.keys)};
    if (!p.hints || !p.names || !p.kns || !p.norms || !p.hash || !p.dup || !p.keys)
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    if (!rc) rc = plan_fill(db, &p, ms, n, skip, !ids);
    store_batch b = {.ns = p.names, .n_ns = p.nn, .n_keys = ids ? 0 : n, .key_ns = p.kns,
                     .norm = p.norms, .hash = p.hash, .dup = p.dup, .n_new = n_new};
    if (!rc) {
        rc = store_batch_begin(db->st, &b);
        if (rc == REMEM_EUNSUPPORTED)
            rc = REMEM_OK;
        else if (rc)
            eng_store_fail(db, rc);
    }
    if (!rc && !ids) {
        for (size_t i = 0; i < n; i++) p.hints[i].dup = p.dup[i];
        plan_firsts(p.hints, p.keys, p.nk);
        *out = p.hints;
        p.hints = NULL;
    }
    plan_free(&p, n);
    return rc;
}

/* The caller's array, whose stride is the caller's sizeof(remem_memory)
 * (ms[0].size, the same in every element), as an array of the library's
 * own remem_memory: fields an older header lacks take their defaults. */
static int take_batch(remem *db, const remem_memory *in, size_t n, remem_memory **out,
                      long *failed_index) {
    size_t stride = eng_struct_size(in);
    remem_memory *ms = malloc(n * sizeof *ms);
    if (!ms) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const remem_memory *m = (const remem_memory *)((const char *)in + i * stride);
        /* The size is checked against the stride before anything else of
         * the element is read: a larger one would read into the next. */
        int rc = eng_struct_size(m) != stride
                     ? eng_fail(db, REMEM_EINVAL,
                                "memory %zu has size %zu, memory 0 has %zu: initialise every "
                                "element with remem_memory_init",
                                i, eng_struct_size(m), stride)
                     : eng_take_memory(db, m, &ms[i]);
        if (rc) {
            if (failed_index) *failed_index = (long)i;
            free(ms);
            return rc;
        }
    }
    *out = ms;
    return REMEM_OK;
}

int remem_add_batch(remem *db, const remem_memory *in, size_t n, char *ids, size_t id_cap,
                    long *failed_index) {
    int rc = eng_need_open(db);
    if (failed_index) *failed_index = -1;
    if (rc) return rc;
    if (n == 0) return REMEM_OK;
    if (!in) return eng_fail(db, REMEM_EINVAL, "no memories given");
    if (db->opt.read_only) return eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    remem_memory *ms = NULL;
    float *vecs = NULL;
    const char **texts = NULL;
    size_t *slot = NULL;
    char *skip = NULL;
    if ((rc = take_batch(db, in, n, &ms, failed_index))) return rc;
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        if ((rc = eng_validate(db, &ms[i])) || (rc = eng_hooks_check_add(db, &ms[i]))) {
            if (failed_index) *failed_index = (long)i;
            if (n > 1) {
                char tmp[sizeof db->err];
                snprintf(tmp, sizeof tmp, "%s", db->err);
                eng_fail(db, rc, "memory %zu: %s", i, tmp);
            }
            goto out;
        }
        off += eng_memory_off(db, ms[i].ns) != 0;
    }
    /* Memory off: the memories of those namespaces were checked like
     * the others, and are dropped (an empty id each). */
    if (ids && id_cap)
        for (size_t i = 0; i < n; i++)
            if (eng_memory_off(db, ms[i].ns)) ids[i * id_cap] = 0;
    if (off == n) goto out;
    /* Embed everything before the transaction: a slow or failing embedder
     * never holds the write lock and never leaves half a batch. */
    int dim = db->emb->dim;
    vecs = malloc(n * (size_t)dim * sizeof *vecs);
    texts = malloc(n * sizeof *texts);
    slot = malloc(n * sizeof *slot);
    if (!vecs || !texts || !slot) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto out;
    }
    size_t ne = 0;
    int pending = 0;
    for (size_t i = 0; i < n; i++) {
        if (off && eng_memory_off(db, ms[i].ns)) continue;
        if (ms[i].vector) {
            memcpy(vecs + i * dim, ms[i].vector, (size_t)dim * sizeof *vecs);
            eng_normalize_vec(vecs + i * dim, dim);
        } else {
            texts[ne] = ms[i].text;
            slot[ne++] = i;
        }
    }
    if (ne > 0) {
        float *tmp = ne == n ? vecs : malloc(ne * (size_t)dim * sizeof *tmp);
        if (!tmp) {
            rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
            goto out;
        }
        rc = eng_embed_for_add(db, texts, ne, tmp, &pending);
        if (!rc && !pending && tmp != vecs)
            for (size_t j = 0; j < ne; j++)
                memcpy(vecs + slot[j] * dim, tmp + j * dim, (size_t)dim * sizeof *vecs);
        if (tmp != vecs) free(tmp);
        if (rc) goto out;
    }
    int64_t now = util_now_ms();
    if ((rc = store_begin(db->st))) {
        eng_store_fail(db, rc);
        goto out;
    }
    txn x = {0};
    add_hint *hints = NULL;
    skip = calloc(n, 1);
    if (!skip) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && off && skip; i++) skip[i] = eng_memory_off(db, ms[i].ns) != 0;
    if (!rc) rc = plan_batch(db, ms, n, skip, &hints);
    for (size_t i = 0; i < n && !rc; i++) {
        if (skip[i]) continue;
        /* While the embedder is down, the rows it should have embedded go
         * in without a vector (pending); given vectors are kept. */
        const float *v = pending && !ms[i].vector ? NULL : vecs + i * dim;
        add_hint *hint = hints ? &hints[i] : NULL;
        /* A duplicate of a memory this batch wrote before it folds there. */
        if (hint && !hint->dup && hint->first != i) hint->dup = hints[hint->first].rowid;
        rc = add_in_txn(db, &x, &ms[i], v, now, ids ? ids + i * id_cap : NULL, id_cap, NULL,
                        hint);
        if (rc && failed_index) *failed_index = (long)i;
    }
    hints_free(hints, n);
    rc = eng_txn_end(db, &x, rc);
    if (!rc && pending) db->pending_hint = 1;
    if (!rc && !pending && ne > 0 && db->pending_hint) eng_embed_pending(db, NULL, 256, NULL, NULL);
    /* The policies' after-add step, once per namespace of the batch. */
    for (size_t i = 0; i < n && !rc; i++) {
        size_t j = 0;
        while (j < i && strcmp(ms[j].ns, ms[i].ns) != 0) j++;
        if (j == i) eng_hooks_after_add(db, ms[i].ns);
    }
out:
    free(ms);
    free(vecs);
    free(texts);
    free(slot);
    free(skip);
    return rc;
}

static int add_one(remem *db, const remem_memory *in, char *id_out, size_t id_cap, int *outcome) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    remem_memory mm;
    if ((rc = eng_take_memory(db, in, &mm))) return rc;
    const remem_memory *m = &mm;
    if (db->opt.read_only) return eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    if ((rc = eng_validate(db, m))) return rc;
    if (eng_memory_off(db, m->ns)) {
        /* Accepted and dropped (seed 004's --no-memory): no id, no row. */
        if (id_out && id_cap) id_out[0] = 0;
        if (outcome) *outcome = REMEM_DROPPED;
        return REMEM_OK;
    }
    if ((rc = eng_hooks_check_add(db, m))) return rc;
    /* The auto-rate policy: the importance from the LLM before the write,
     * or, when the caller rates later, the id handed over after it. */
    char *rated_meta = NULL, idl[64] = "";
    int later = 0, out = 0;
    if ((rc = eng_rate_on_add(db, &mm, &rated_meta, &later))) return rc;
    int dim = db->emb->dim, pending = 0;
    float *vec = malloc((size_t)(dim > 0 ? dim : 1) * sizeof *vec);
    if (!vec) {
        free(rated_meta);
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    if (m->vector) {
        memcpy(vec, m->vector, (size_t)dim * sizeof *vec);
        eng_normalize_vec(vec, dim);
    } else if ((rc = eng_embed_for_add(db, &m->text, 1, vec, &pending))) {
        free(vec);
        free(rated_meta);
        return rc;
    }
    int64_t now = util_now_ms();
    if ((rc = store_begin(db->st))) {
        free(vec);
        free(rated_meta);
        return eng_store_fail(db, rc);
    }
    txn x = {0};
    rc = eng_add_in_txn(db, &x, m, pending ? NULL : vec, now, idl, sizeof idl, &out);
    rc = eng_txn_end(db, &x, rc);
    free(vec);
    free(rated_meta);
    if (rc) return rc;
    if (id_out && id_cap) snprintf(id_out, id_cap, "%s", idl);
    if (outcome) *outcome = out;
    if (pending) db->pending_hint = 1;
    /* The embedder answers again: this write takes some of the queue. */
    if (!pending && !m->vector && db->pending_hint) eng_embed_pending(db, NULL, 256, NULL, NULL);
    if (later && out != REMEM_DUPLICATE) db->rate_later(db->rate_later_ctx, m->ns, idl);
    eng_hooks_after_add(db, m->ns);
    return rc;
}

/* remem_add with its span (remem.add): the namespace, kind, outcome, id
 * and the embedder's time. Off: one branch. */
int remem_add(remem *db, const remem_memory *in, char *id_out, size_t id_cap, int *outcome) {
    tm_span *s = tm_span_start("remem.add", TM_KIND_INTERNAL);
    if (!s) return add_one(db, in, id_out, id_cap, outcome);
    int got = 0;
    eng_tm_embed_ms_reset();
    int rc = add_one(db, in, id_out, id_cap, &got);
    if (outcome) *outcome = got;
    if (in) {
        tm_span_str(s, "remem.namespace", in->ns ? in->ns : "default");
        tm_span_str(s, "remem.kind", in->kind);
    }
    if (!rc) {
        tm_span_str(s, "remem.id", id_out && id_cap ? id_out : NULL);
        tm_span_int(s, "remem.outcome", got);
        tm_span_dbl(s, "embeddingTimeMs", eng_tm_embed_ms());
    }
    eng_tm_status(db, s, rc);
    tm_span_end(s);
    return rc;
}
