/*
 * txn.c: what every write shares. A write call validates and embeds first
 * (nothing touches the store yet, so bad input changes nothing), then runs
 * one store transaction that checks the namespace's model lock, writes the
 * rows and one history row per change, commits, and finally brings the
 * caches up to date from the rows it wrote. Any failure rolls back and
 * drops the caches it may have touched. The transaction bookkeeping, the
 * model lock, the history rows and the field checks live here.
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
#include "util/utf8.h"
#include "util/util.h"

/* ---- validation ---- */

static int valid_tier(const char *t) {
    return !strcmp(t, "static") || !strcmp(t, "short") || !strcmp(t, "long") ||
           !strcmp(t, "archived");
}

static int check_json_object(remem *db, const char *what, const char *text) {
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j) return eng_fail(db, REMEM_EPARSE, "%s is not valid JSON: %s", what, e.text);
    int ok = json_is_object(j);
    json_decref(j);
    return ok ? REMEM_OK : eng_fail(db, REMEM_EPARSE, "%s must be a JSON object", what);
}

static int check_links(remem *db, const char *text) {
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j) return eng_fail(db, REMEM_EPARSE, "links is not valid JSON: %s", e.text);
    int ok = json_is_array(j);
    size_t i;
    json_t *v;
    json_array_foreach(j, i, v) ok = ok && json_is_string(v);
    json_decref(j);
    return ok ? REMEM_OK : eng_fail(db, REMEM_EPARSE, "links must be a JSON array of ids");
}

int eng_check_utf8(remem *db, const char *what, const char *s) {
    if (!s) return REMEM_OK;
    size_t n = strlen(s), bad = util_utf8_check(s, n);
    if (bad == n) return REMEM_OK;
    return eng_fail(db, REMEM_EINVAL, "%s is not valid UTF-8 at byte %zu", what, bad);
}

int eng_check_str(remem *db, const char *what, const char *s, size_t max) {
    if (!s || !*s) return eng_fail(db, REMEM_EINVAL, "%s: must be a non-empty string", what);
    if (strlen(s) > max)
        return eng_fail(db, REMEM_EINVAL, "%s is longer than %zu bytes", what, max);
    return eng_check_utf8(db, what, s);
}

/* Text must say something: "" and white space alone are refused alike. */
static int check_text(remem *db, const char *text) {
    if (!text || !*text) return eng_fail(db, REMEM_EINVAL, "text is empty");
    int rc = eng_check_utf8(db, "text", text);
    if (rc) return rc;
    if (util_utf8_blank(text)) return eng_fail(db, REMEM_EINVAL, "text is only white space");
    return REMEM_OK;
}

/* Every string is checked as UTF-8 before anything else is read from it,
 * so that the error names the field and the byte, and nothing invalid is
 * ever stored (a face could not render it, an export could not be imported
 * again). */
int eng_validate(remem *db, const remem_memory *m) {
    int rc;
    if ((rc = eng_check_str(db, "namespace", m->ns, 256))) return rc;
    if ((rc = check_text(db, m->text))) return rc;
    if (m->id && (rc = eng_check_str(db, "id", m->id, 256))) return rc;
    if (m->kind && (rc = eng_check_str(db, "kind", m->kind, 64))) return rc;
    if ((rc = eng_check_utf8(db, "tier", m->tier))) return rc;
    if (m->tier && !valid_tier(m->tier))
        return eng_fail(db, REMEM_EINVAL, "unknown tier \"%.64s\" (static, short, long, archived)",
                        m->tier);
    if (!isnan(m->importance) && m->importance > 1)
        return eng_fail(db, REMEM_EINVAL, "importance %g is outside [0,1]", m->importance);
    if (isnan(m->importance)) return eng_fail(db, REMEM_EINVAL, "importance is not a number");
    if ((rc = eng_check_utf8(db, "metadata", m->metadata))) return rc;
    if (m->metadata && (rc = check_json_object(db, "metadata", m->metadata))) return rc;
    if ((rc = eng_check_utf8(db, "links", m->links))) return rc;
    if (m->links && (rc = check_links(db, m->links))) return rc;
    if ((rc = eng_check_utf8(db, "superseded_by", m->superseded_by))) return rc;
    if (m->vector && m->dim != db->emb->dim)
        return eng_fail(db, REMEM_EDIM, "vector has %d dimensions; the %s embedder (%s) makes %d",
                        m->dim, db->emb->name, db->emb->model_id, db->emb->dim);
    if (m->expires_at < 0) return eng_fail(db, REMEM_EINVAL, "expires_at is negative");
    return REMEM_OK;
}

/* The checks of eng_validate() that do not depend on the embedder: what a JSONL
 * line must pass (jsonl.c), so that an import can check every line before
 * it writes any. */
int eng_check_memory(remem *db, const remem_memory *m) {
    remem_memory probe = *m;
    probe.vector = NULL;
    return eng_validate(db, &probe);
}

void eng_normalize_vec(float *v, int dim) {
    double s = 0;
    for (int i = 0; i < dim; i++) s += (double)v[i] * v[i];
    if (s <= 0) return;
    float inv = (float)(1.0 / sqrt(s));
    for (int i = 0; i < dim; i++) v[i] *= inv;
}

/* ---- the namespaces a transaction touched ---- */

touched *eng_txn_ns(remem *db, txn *x, const char *ns, int *rc) {
    for (size_t i = 0; i < x->n; i++)
        if (strcmp(x->t[i].ns, ns) == 0) return &x->t[i];
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 4;
        touched *t = realloc(x->t, cap * sizeof *t);
        if (!t) {
            *rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
            return NULL;
        }
        x->t = t;
        x->cap = cap;
    }
    touched *t = &x->t[x->n];
    memset(t, 0, sizeof *t);
    if (!(t->ns = strdup(ns))) {
        *rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        return NULL;
    }
    int r = store_ns_info(db->st, ns, NULL, 0, NULL, &t->before, NULL);
    if (r && r != REMEM_ENOTFOUND) {
        free(t->ns);
        *rc = eng_store_fail(db, r);
        return NULL;
    }
    if (r == REMEM_ENOTFOUND) t->before = 0;
    x->n++;
    return t;
}

int eng_txn_row(remem *db, txn *x, const char *ns, int64_t rowid) {
    assert(rowid > 0);
    int rc = REMEM_OK;
    touched *t = eng_txn_ns(db, x, ns, &rc);
    if (!t) return rc;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        int64_t *r = realloc(t->rowids, cap * sizeof *r);
        if (!r) return eng_fail(db, REMEM_ENOMEM, "out of memory");
        t->rowids = r;
        t->cap = cap;
    }
    t->rowids[t->n++] = rowid;
    return REMEM_OK;
}

/* Commit (or roll back when rc != 0) and bring the caches along. */
int eng_txn_end(remem *db, txn *x, int rc) {
    if (rc == REMEM_OK) {
        /* Read inside the transaction: these are exactly our changes. A
         * database server reports them with its commit, in one round trip
         * (store_commit_report); else they are read, then committed. */
        int64_t *after = calloc(x->n ? 2 * x->n : 1, sizeof *after);
        const char **names = calloc(x->n ? x->n : 1, sizeof *names);
        for (size_t i = 0; names && i < x->n; i++) names[i] = x->t[i].ns;
        rc = after && names ? store_commit_report(db->st, names, x->n, after, after + x->n)
                            : REMEM_EUNSUPPORTED;
        free(names);
        if (rc == REMEM_EUNSUPPORTED) {
            for (size_t i = 0; after && i < x->n; i++) {
                store_ns_info(db->st, x->t[i].ns, NULL, 0, NULL, &after[i], NULL);
                store_history_max(db->st, x->t[i].ns, &after[x->n + i]);
            }
            rc = store_commit(db->st);
        }
        if (rc) eng_store_fail(db, rc);
        for (size_t i = 0; i < x->n; i++) {
            if (!rc && after)
                cache_apply(db, x->t[i].ns, x->t[i].before, after[i], after[x->n + i],
                            x->t[i].rowids, x->t[i].n);
            else
                cache_drop(db, x->t[i].ns);
        }
        free(after);
    } else {
        store_rollback(db->st);
        for (size_t i = 0; i < x->n; i++) cache_drop(db, x->t[i].ns);
    }
    for (size_t i = 0; i < x->n; i++) {
        free(x->t[i].ns);
        free(x->t[i].rowids);
    }
    free(x->t);
    memset(x, 0, sizeof *x);
    return rc;
}

int eng_history(remem *db, const remem_memory *before, const remem_memory *after, const char *op,
                const char *actor, int64_t now) {
    assert(before || after);
    const remem_memory *key = after ? after : before;
    assert(key->ns && key->id); /* history rows are keyed by (ns, id) */
    char *b = before ? eng_memory_text(before) : NULL;
    char *a = after ? eng_memory_text(after) : NULL;
    int rc;
    if ((before && !b) || (after && !a))
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    else {
        rc = store_history_add(db->st, key->ns, key->id, now, op, actor, b, a);
        if (rc) eng_store_fail(db, rc);
    }
    free(b);
    free(a);
    return rc;
}

/* The namespace's vectors must come from the handle's model. */
int eng_check_model(remem *db, const char *ns) {
    char model[128];
    int dim;
    int64_t rows;
    int rc = store_ns_info(db->st, ns, model, sizeof model, &dim, NULL, &rows);
    if (rc == REMEM_ENOTFOUND) return REMEM_OK;
    if (rc) return eng_store_fail(db, rc);
    if (rows > 0 && model[0] && strcmp(model, db->emb->model_id) != 0)
        return eng_fail(db, REMEM_EMODEL,
                        "namespace %s holds vectors of model %s; this handle embeds with "
                        "%s. Open it with the same embedder, or run `remem reindex --ns "
                        "%s` to re-embed it",
                        ns, model, db->emb->model_id, ns);
    return REMEM_OK;
}

int eng_set_model(remem *db, const char *ns) {
    char model[128];
    int rc = store_ns_info(db->st, ns, model, sizeof model, NULL, NULL, NULL);
    if (rc == REMEM_OK && strcmp(model, db->emb->model_id) == 0) return REMEM_OK;
    rc = store_ns_set_model(db->st, ns, db->emb->model_id, db->emb->dim);
    return rc ? eng_store_fail(db, rc) : REMEM_OK;
}

/* End a transaction that changed a whole namespace (clear, reindex): on
 * success one history row for it (id "*") and the commit, else the
 * rollback; either way the namespace's cache is dropped (other handles see
 * the "*" row and reload too). Returns the final status. */
int eng_end_ns_change(remem *db, const char *ns, const char *op, const char *after, int rc) {
    if (!rc) {
        rc = store_history_add(db->st, ns, "*", util_now_ms(), op, NULL, NULL, after);
        if (rc) eng_store_fail(db, rc);
    }
    if (!rc) {
        rc = store_commit(db->st);
        if (rc) eng_store_fail(db, rc);
    } else {
        store_rollback(db->st);
    }
    cache_drop(db, ns);
    return rc;
}
