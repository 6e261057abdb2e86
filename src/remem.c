/*
 * remem.c: the engine's handle and its write path.
 *
 * A handle joins a store, an embedder and the in-memory namespace caches.
 * Every write call has the same shape: validate everything and embed
 * everything first (nothing touches the store yet, so bad input changes
 * nothing), then one store transaction that checks the namespace's model
 * lock, writes the rows and one history row per change, commits, and
 * finally brings the caches up to date from the rows it wrote. Any failure
 * rolls the transaction back and drops the caches it may have touched.
 *
 * Reading paths live in recall.c; renderings in render.c; caches in cache.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "score.h"
#include "util/util.h"

/* ---- status codes ---- */

const char *remem_status_name(int rc) {
#define REMEM__NAME(name, val, msg) if (rc == val) return #name;
    REMEM_STATUS_MAP(REMEM__NAME)
#undef REMEM__NAME
    return "REMEM_UNKNOWN";
}

const char *remem_strerror(int rc) {
#define REMEM__MSG(name, val, msg) if (rc == val) return msg;
    REMEM_STATUS_MAP(REMEM__MSG)
#undef REMEM__MSG
    return "unknown error";
}

int eng_fail(remem *db, int rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(db->err, sizeof db->err, fmt, ap);
    va_end(ap);
    return rc;
}

int eng_store_fail(remem *db, int rc) {
    snprintf(db->err, sizeof db->err, "%s", store_errmsg(db->st));
    return rc;
}

void eng_ok(remem *db) { db->err[0] = '\0'; }

const char *remem_errmsg(const remem *db) { return db ? db->err : "out of memory"; }

/* ---- small public helpers ---- */

void remem_options_init(remem_options *opt) { memset(opt, 0, sizeof *opt); }

void remem_memory_init(remem_memory *m) {
    memset(m, 0, sizeof *m);
    m->importance = -1;
}

void remem_query_init(remem_query *q) {
    memset(q, 0, sizeof *q);
    q->w_relevance = q->w_lexical = q->w_recency = q->w_importance = NAN;
    q->w_context = NAN;
    q->min_similarity = q->min_score = NAN;
    q->recency_base = q->half_life_hours = NAN;
    q->normalize = -1;
    q->candidates = -1;
}

void remem_free(void *p) { free(p); }
int64_t remem_now(void) { return util_now_ms(); }
int remem_parse_time(const char *s, int64_t *ms) {
    return util_parse_time(s, ms) ? REMEM_EPARSE : REMEM_OK;
}
void remem_format_time(int64_t ms, char *buf, size_t cap) { util_format_time(ms, buf, cap); }

const char *const *remem_profiles(void) { return profile_names(); }
char *remem_profile_json(const char *name) {
    profile p;
    return profile_get(name, &p) ? NULL : profile_to_json(&p);
}

double eng_kind_importance(const char *kind) {
    static const struct { const char *kind; double imp; } defaults[] = {
        {"reflection", 0.95}, {"decision", 0.9}, {"lesson", 0.8},
        {"static", 1.0},      {"summary", 0.7},  {"plan", 0.6},
        {"feedback", 0.7},    {"trajectory", 0.5}, {"episode", 0.5},
    };
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
        if (strcmp(defaults[i].kind, kind) == 0) return defaults[i].imp;
    return 0.5;
}

/* ---- open / close ---- */

static const char *env_or(const char *v, const char *name) {
    if (v && *v) return v;
    const char *e = getenv(name);
    return e && *e ? e : NULL;
}

static int store_has_model_prefix(store *st, const char *prefix) {
    char *json = NULL;
    int found = 0;
    if (store_namespaces_json(st, &json) == REMEM_OK && json) {
        json_t *arr = json_loads(json, 0, NULL);
        size_t i;
        json_t *o;
        json_array_foreach(arr, i, o) {
            const char *m = json_string_value(json_object_get(o, "model"));
            if (m && strncmp(m, prefix, strlen(prefix)) == 0) found = 1;
        }
        json_decref(arr);
    }
    free(json);
    return found;
}

static int make_embedder(remem *db) {
    const remem_options *o = &db->opt;
    embed_config cfg = {0};
    cfg.url = env_or(o->embed_url, "REMEM_EMBED_URL");
    cfg.model = env_or(o->embed_model, "REMEM_EMBED_MODEL");
    cfg.api_key = env_or(o->embed_api_key, "REMEM_EMBED_API_KEY");
    cfg.timeout_ms = o->embed_timeout_ms;
    cfg.retries = o->embed_retries;
    cfg.batch = o->embed_batch;
    cfg.model_dir = env_or(o->model_dir, "REMEM_MODEL_DIR");
    const char *name = env_or(o->embedder, "REMEM_EMBEDDER");
    char err[512] = "";
    int rc;
    if (!name || strcmp(name, "auto") == 0) {
        char why[384] = "";
        if (embed_minilm_available(cfg.model_dir, why, sizeof why)) {
            if (store_has_model_prefix(db->st, "hash")) {
                snprintf(db->emb_note, sizeof db->emb_note,
                         "using the hash embedder: this store already holds hash "
                         "vectors (remem reindex --embedder minilm moves it)");
                name = "hash";
            } else {
                name = "minilm";
            }
        } else {
            snprintf(db->emb_note, sizeof db->emb_note,
                     "using the hash embedder: %s",
                     why[0] ? why : "no MiniLM model installed");
            name = "hash";
        }
    }
    if (strcmp(name, "hash") == 0) rc = embed_hash_create(&cfg, &db->emb, err, sizeof err);
    else if (strcmp(name, "http") == 0) {
        if (!cfg.url)
            return eng_fail(db, REMEM_EINVAL,
                            "the http embedder needs a URL (--embed-url or REMEM_EMBED_URL)");
        rc = embed_http_create(&cfg, &db->emb, err, sizeof err);
    } else if (strcmp(name, "minilm") == 0)
        rc = embed_minilm_create(&cfg, &db->emb, err, sizeof err);
    else
        return eng_fail(db, REMEM_EINVAL,
                        "unknown embedder \"%s\" (hash, http, minilm or auto)", name);
    if (rc) return eng_fail(db, rc, "%s", err[0] ? err : remem_strerror(rc));
    return REMEM_OK;
}

int remem_open(const char *uri, const remem_options *opt, remem **out) {
    remem *db = calloc(1, sizeof *db);
    *out = db;
    if (!db) return REMEM_ENOMEM;
    if (opt) db->opt = *opt;
    if (!uri || !*uri) return eng_fail(db, REMEM_EINVAL, "no store path given");
    if (strncmp(uri, "file:", 5) == 0) uri += 5;
    if (strncmp(uri, "postgres://", 11) == 0 || strncmp(uri, "postgresql://", 13) == 0)
        return eng_fail(db, REMEM_EUNSUPPORTED,
                        "PostgreSQL stores are not built into this remem yet");
    db->uri = strdup(uri);
    if (!db->uri) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    int rc = store_open(uri, db->opt.durability, db->opt.busy_timeout_ms,
                        db->opt.read_only, &db->st);
    if (rc) {
        if (db->st) {
            eng_fail(db, rc, "cannot open %s: %s", uri, store_errmsg(db->st));
            store_close(db->st);
            db->st = NULL;
        } else {
            eng_fail(db, rc, "cannot open %s: out of memory", uri);
        }
        return rc;
    }
    if ((rc = make_embedder(db))) return rc;
    eng_ok(db);
    return REMEM_OK;
}

void remem_close(remem *db) {
    if (!db) return;
    cache_free_all(db);
    embed_destroy(db->emb);
    store_close(db->st);
    free(db->uri);
    free(db);
}

const char *remem_embedder_name(const remem *db) { return db->emb ? db->emb->name : ""; }
const char *remem_embedder_model(const remem *db) { return db->emb ? db->emb->model_id : ""; }
int remem_embedder_dim(const remem *db) { return db->emb ? db->emb->dim : 0; }
const char *remem_embedder_note(const remem *db) { return db->emb_note; }

static int need_open(remem *db) {
    if (!db) return REMEM_EINVAL;
    if (!db->st || !db->emb) return eng_fail(db, REMEM_EINVAL, "the store is not open");
    eng_ok(db);
    return REMEM_OK;
}

int remem_embed(remem *db, const char *const *texts, size_t n, float *out) {
    int rc = need_open(db);
    if (rc) return rc;
    char err[512] = "";
    rc = db->emb->embed(db->emb, texts, n, out, err, sizeof err);
    return rc ? eng_fail(db, rc, "%s", err[0] ? err : remem_strerror(rc)) : REMEM_OK;
}

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

static int check_str(remem *db, const char *what, const char *s, size_t max) {
    if (!s || !*s) return eng_fail(db, REMEM_EINVAL, "%s is empty", what);
    if (strlen(s) > max) return eng_fail(db, REMEM_EINVAL, "%s is longer than %zu bytes", what, max);
    return REMEM_OK;
}

static int validate(remem *db, const remem_memory *m) {
    int rc;
    if ((rc = check_str(db, "namespace", m->ns, 256))) return rc;
    if (!m->text || !*m->text) return eng_fail(db, REMEM_EINVAL, "text is empty");
    if (m->id && (rc = check_str(db, "id", m->id, 256))) return rc;
    if (m->kind && (rc = check_str(db, "kind", m->kind, 64))) return rc;
    if (m->tier && !valid_tier(m->tier))
        return eng_fail(db, REMEM_EINVAL,
                        "unknown tier \"%.64s\" (static, short, long, archived)", m->tier);
    if (!isnan(m->importance) && m->importance > 1)
        return eng_fail(db, REMEM_EINVAL, "importance %g is outside [0,1]", m->importance);
    if (isnan(m->importance)) return eng_fail(db, REMEM_EINVAL, "importance is not a number");
    if (m->metadata && (rc = check_json_object(db, "metadata", m->metadata))) return rc;
    if (m->links && (rc = check_links(db, m->links))) return rc;
    if (m->vector && m->dim != db->emb->dim)
        return eng_fail(db, REMEM_EDIM,
                        "vector has %d dimensions; the %s embedder (%s) makes %d",
                        m->dim, db->emb->name, db->emb->model_id, db->emb->dim);
    if (m->expires_at < 0) return eng_fail(db, REMEM_EINVAL, "expires_at is negative");
    return REMEM_OK;
}

/* The checks of validate() that do not depend on the embedder: what a JSONL
 * line must pass (jsonl.c), so that an import can check every line before
 * it writes any. */
int eng_check_memory(remem *db, const remem_memory *m) {
    remem_memory probe = *m;
    probe.vector = NULL;
    return validate(db, &probe);
}

static void normalize_vec(float *v, int dim) {
    double s = 0;
    for (int i = 0; i < dim; i++) s += (double)v[i] * v[i];
    if (s <= 0) return;
    float inv = (float)(1.0 / sqrt(s));
    for (int i = 0; i < dim; i++) v[i] *= inv;
}

/* ---- the namespaces a transaction touched ---- */

typedef struct touched {
    char *ns;
    int model_ok; /* the model lock was checked and recorded in this txn */
    int64_t before;
    int64_t *rowids;
    size_t n, cap;
} touched;

typedef struct txn {
    touched *t;
    size_t n, cap;
} txn;

static touched *txn_ns(remem *db, txn *x, const char *ns, int *rc) {
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

static int txn_row(remem *db, txn *x, const char *ns, int64_t rowid) {
    int rc = REMEM_OK;
    touched *t = txn_ns(db, x, ns, &rc);
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
static int txn_end(remem *db, txn *x, int rc) {
    if (rc == REMEM_OK) {
        /* Read inside the transaction: these are exactly our changes. */
        int64_t *after = calloc(x->n ? 2 * x->n : 1, sizeof *after);
        for (size_t i = 0; after && i < x->n; i++) {
            store_ns_info(db->st, x->t[i].ns, NULL, 0, NULL, &after[i], NULL);
            store_history_max(db->st, x->t[i].ns, &after[x->n + i]);
        }
        rc = store_commit(db->st);
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

static int history(remem *db, const remem_memory *before, const remem_memory *after,
                   const char *op, const char *actor, int64_t now) {
    const remem_memory *key = after ? after : before;
    char *b = before ? remem_memory_to_json(before) : NULL;
    char *a = after ? remem_memory_to_json(after) : NULL;
    int rc;
    if ((before && !b) || (after && !a)) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    else {
        rc = store_history_add(db->st, key->ns, key->id, now, op, actor, b, a);
        if (rc) eng_store_fail(db, rc);
    }
    free(b);
    free(a);
    return rc;
}

/* The namespace's vectors must come from the handle's model. */
static int check_model(remem *db, const char *ns) {
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

static int set_model(remem *db, const char *ns) {
    char model[128];
    int rc = store_ns_info(db->st, ns, model, sizeof model, NULL, NULL, NULL);
    if (rc == REMEM_OK && strcmp(model, db->emb->model_id) == 0) return REMEM_OK;
    rc = store_ns_set_model(db->st, ns, db->emb->model_id, db->emb->dim);
    return rc ? eng_store_fail(db, rc) : REMEM_OK;
}

/* ---- add ---- */

/* Write one validated memory with its final vector, inside the open
 * transaction. */
static int add_one(remem *db, txn *x, const remem_memory *in, const float *vec,
                   int64_t now, char *id_out, size_t id_cap, int *outcome) {
    remem_memory m = *in;
    m.kind = m.kind ? m.kind : "observation";
    m.tier = m.tier ? m.tier : (strcmp(m.kind, "static") == 0 ? "static" : "short");
    if (m.importance < 0) m.importance = eng_kind_importance(m.kind);
    if (m.created_at == 0) m.created_at = now;
    m.updated_at = now;
    m.accessed_at = m.created_at;
    m.access_count = 0;
    /* invalidated_at and superseded_by are kept as given, so that an
     * export imported again keeps its replaced facts out of recall. */
    m.duplicate_count = 0;
    m.vector = vec;
    m.dim = db->emb->dim;
    m.model = db->emb->model_id;
    char idbuf[27];
    char *norm = util_normalize_text(m.text);
    if (!norm) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    uint64_t h = util_hash64(norm, strlen(norm));
    int64_t rowid = 0;
    int out = REMEM_ADDED;
    /* The namespace's model lock: checked and recorded once per
     * transaction, not per memory. */
    int rc = REMEM_OK;
    touched *t = txn_ns(db, x, m.ns, &rc);
    if (!t) goto done;
    if (!t->model_ok) {
        if ((rc = check_model(db, m.ns)) || (rc = set_model(db, m.ns))) goto done;
        t->model_ok = 1;
    }
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
            if (rc) eng_store_fail(db, rc);
            else rc = history(db, &old.m, &m, "update", NULL, now);
            store_row_clear(&old);
            out = REMEM_UPSERTED;
            goto wrote;
        }
        if (rc != REMEM_ENOTFOUND) {
            eng_store_fail(db, rc);
            goto done;
        }
        rc = REMEM_OK;
    } else {
        /* Only generated ids fold exact duplicates: a caller's own id must
         * stay gettable. */
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
            if (rc) eng_store_fail(db, rc);
            else {
                remem_memory after = old.m;
                after.duplicate_count++;
                after.updated_at = now;
                rc = history(db, &old.m, &after, "duplicate", NULL, now);
            }
            if (!rc && id_out) snprintf(id_out, id_cap, "%s", old.m.id);
            store_row_clear(&old);
            out = REMEM_DUPLICATE;
            if (!rc) rc = txn_row(db, x, m.ns, rowid);
            goto done;
        }
        util_new_id(now, idbuf);
        m.id = idbuf;
    }
    rc = store_insert(db->st, &m, norm, h, &rowid);
    if (rc) eng_store_fail(db, rc);
    else rc = history(db, NULL, &m, "add", NULL, now);
wrote:
    if (!rc) rc = txn_row(db, x, m.ns, rowid);
    if (!rc && id_out) snprintf(id_out, id_cap, "%s", m.id);
done:
    free(norm);
    if (!rc && outcome) *outcome = out;
    return rc;
}

int remem_add_batch(remem *db, const remem_memory *ms, size_t n, char *ids,
                    size_t id_cap, long *failed_index) {
    int rc = need_open(db);
    if (failed_index) *failed_index = -1;
    if (rc) return rc;
    if (n == 0) return REMEM_OK;
    if (db->opt.read_only) return eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    for (size_t i = 0; i < n; i++) {
        if ((rc = validate(db, &ms[i]))) {
            if (failed_index) *failed_index = (long)i;
            if (n > 1) {
                char tmp[sizeof db->err];
                snprintf(tmp, sizeof tmp, "%s", db->err);
                eng_fail(db, rc, "memory %zu: %s", i, tmp);
            }
            return rc;
        }
    }
    /* Embed everything before the transaction: a slow or failing embedder
     * never holds the write lock and never leaves half a batch. */
    int dim = db->emb->dim;
    float *vecs = malloc(n * (size_t)dim * sizeof *vecs);
    const char **texts = malloc(n * sizeof *texts);
    size_t *slot = malloc(n * sizeof *slot);
    if (!vecs || !texts || !slot) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto out;
    }
    size_t ne = 0;
    for (size_t i = 0; i < n; i++) {
        if (ms[i].vector) {
            memcpy(vecs + i * dim, ms[i].vector, (size_t)dim * sizeof *vecs);
            normalize_vec(vecs + i * dim, dim);
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
        char err[512] = "";
        rc = db->emb->embed(db->emb, texts, ne, tmp, err, sizeof err);
        if (rc) eng_fail(db, rc, "%s", err[0] ? err : remem_strerror(rc));
        else if (tmp != vecs)
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
    for (size_t i = 0; i < n && !rc; i++) {
        rc = add_one(db, &x, &ms[i], vecs + i * dim, now, ids ? ids + i * id_cap : NULL,
                     id_cap, NULL);
        if (rc && failed_index) *failed_index = (long)i;
    }
    rc = txn_end(db, &x, rc);
out:
    free(vecs);
    free(texts);
    free(slot);
    return rc;
}

int remem_add(remem *db, const remem_memory *m, char *id_out, size_t id_cap,
              int *outcome) {
    int rc = need_open(db);
    if (rc) return rc;
    if (!m) return eng_fail(db, REMEM_EINVAL, "no memory given");
    if (db->opt.read_only) return eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    if ((rc = validate(db, m))) return rc;
    int dim = db->emb->dim;
    float *vec = malloc((size_t)dim * sizeof *vec);
    if (!vec) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    if (m->vector) {
        memcpy(vec, m->vector, (size_t)dim * sizeof *vec);
        normalize_vec(vec, dim);
    } else {
        char err[512] = "";
        rc = db->emb->embed(db->emb, &m->text, 1, vec, err, sizeof err);
        if (rc) {
            free(vec);
            return eng_fail(db, rc, "%s", err[0] ? err : remem_strerror(rc));
        }
    }
    int64_t now = util_now_ms();
    if ((rc = store_begin(db->st))) {
        free(vec);
        return eng_store_fail(db, rc);
    }
    txn x = {0};
    rc = add_one(db, &x, m, vec, now, id_out, id_cap, outcome);
    rc = txn_end(db, &x, rc);
    free(vec);
    return rc;
}

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
    int rc = need_open(db);
    if (rc) return rc;
    if (!id || !*id) return eng_fail(db, REMEM_EINVAL, "no id given");
    remem_record *r = calloc(1, sizeof *r);
    if (!r) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    rc = store_find(db->st, ns, id, 0, &r->row);
    if (rc) {
        free(r);
        return eng_store_fail(db, rc);
    }
    *out = r;
    return REMEM_OK;
}

/* ---- update, invalidate, forget ---- */

/* Apply fn to the row (ns, id) inside one transaction. fn edits *m (a copy
 * of the stored memory) and names the history op; it may set *purge. */
typedef int (*edit_fn)(remem *db, void *ctx, remem_memory *m, const char **op,
                       int *purge);

static int edit(remem *db, const char *ns, const char *id, edit_fn fn, void *ctx,
                const float *newvec, const char *actor) {
    int rc = need_open(db);
    if (rc) return rc;
    if (!id || !*id) return eng_fail(db, REMEM_EINVAL, "no id given");
    if (db->opt.read_only) return eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    if ((rc = store_begin(db->st))) return eng_store_fail(db, rc);
    txn x = {0};
    store_row old;
    rc = store_find(db->st, ns, id, 0, &old);
    if (rc) {
        eng_store_fail(db, rc);
        return txn_end(db, &x, rc);
    }
    int64_t now = util_now_ms();
    remem_memory m = old.m;
    const char *op = "update";
    int purge = 0;
    rc = fn(db, ctx, &m, &op, &purge);
    if (!rc && newvec) rc = check_model(db, m.ns);
    if (!rc && purge) {
        rc = store_delete(db->st, old.rowid);
        if (rc) eng_store_fail(db, rc);
        if (!rc) {
            rc = store_history_scrub(db->st, old.m.ns, old.m.id);
            if (rc) eng_store_fail(db, rc);
        }
        if (!rc) {
            remem_memory gone = old.m;
            gone.text = NULL;
            rc = history(db, &gone, NULL, op, actor, now);
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
            if (rc) eng_store_fail(db, rc);
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
            if (rc) eng_store_fail(db, rc);
            else rc = history(db, &old.m, &m, op, actor, now);
            if (!rc && newvec) rc = set_model(db, m.ns);
        }
        if (!newvec) free((float *)m.vector);
        free(norm);
    }
    if (!rc) rc = txn_row(db, &x, old.m.ns, old.rowid);
    rc = txn_end(db, &x, rc);
    if (!rc && purge) {
        rc = store_scrub_deleted(db->st);
        if (rc)
            eng_fail(db, rc, "%s/%s was deleted, but scrubbing its words from the full-text "
                             "index failed: %s (run the purge again)",
                     old.m.ns, old.m.id, store_errmsg(db->st));
    }
    store_row_clear(&old);
    return rc;
}

static int apply_patch(remem *db, void *ctx, remem_memory *m, const char **op, int *purge) {
    const remem_patch *p = ctx;
    (void)purge;
    *op = "update";
    if (p->fields & REMEM_SET_TEXT) m->text = p->text;
    if (p->fields & REMEM_SET_KIND) m->kind = p->kind;
    if (p->fields & REMEM_SET_TIER) {
        if (m->tier && strcmp(m->tier, "archived") == 0 && strcmp(p->tier, "archived") != 0)
            *op = "restore";
        else if (strcmp(p->tier, "archived") == 0) *op = "archive";
        else if (strcmp(m->tier, p->tier) != 0) *op = "migrate";
        m->tier = p->tier;
    }
    if (p->fields & REMEM_SET_IMPORTANCE) m->importance = p->importance;
    if (p->fields & REMEM_SET_METADATA) m->metadata = p->metadata;
    if (p->fields & REMEM_SET_EXPIRES) m->expires_at = p->expires_at;
    if (p->fields & REMEM_SET_LINKS) m->links = p->links;
    (void)db;
    return REMEM_OK;
}

int remem_update(remem *db, const char *ns, const char *id, const remem_patch *p) {
    int rc = need_open(db);
    if (rc) return rc;
    if (!p || !p->fields) return eng_fail(db, REMEM_EINVAL, "nothing to update");
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
    if ((p->fields & REMEM_SET_KIND) && !p->kind) return eng_fail(db, REMEM_EINVAL, "kind is empty");
    if ((p->fields & REMEM_SET_TIER) && !p->tier) return eng_fail(db, REMEM_EINVAL, "tier is empty");
    if ((p->fields & REMEM_SET_IMPORTANCE) && (p->importance < 0 || p->importance > 1))
        return eng_fail(db, REMEM_EINVAL, "importance %g is outside [0,1]", p->importance);
    if ((rc = validate(db, &probe))) return rc;
    float *vec = NULL;
    if (p->fields & REMEM_SET_TEXT) {
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

/* End a transaction that changed a whole namespace (clear, reindex): on
 * success one history row for it (id "*") and the commit, else the
 * rollback; either way the namespace's cache is dropped (other handles see
 * the "*" row and reload too). Returns the final status. */
static int end_ns_change(remem *db, const char *ns, const char *op, const char *after, int rc) {
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

/* ---- history, stats, namespaces, clear ---- */

int remem_history(remem *db, const char *ns, const char *id, char **json) {
    *json = NULL;
    int rc = need_open(db);
    if (rc) return rc;
    if (!id || !*id) return eng_fail(db, REMEM_EINVAL, "no id given");
    rc = store_history_json(db->st, ns, id, json);
    return rc ? eng_store_fail(db, rc) : REMEM_OK;
}

int remem_stats(remem *db, const char *ns, char **json) {
    *json = NULL;
    int rc = need_open(db);
    if (rc) return rc;
    rc = store_stats_json(db->st, ns, util_now_ms(), json);
    if (rc) return eng_store_fail(db, rc);
    json_t *o = json_loads(*json, 0, NULL);
    if (o) {
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(db->emb->name));
        json_object_set_new(e, "model", json_string(db->emb->model_id));
        json_object_set_new(e, "dim", json_integer(db->emb->dim));
        json_object_set_new(o, "embedder", e);
        char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
        json_decref(o);
        if (s) {
            free(*json);
            *json = s;
        }
    }
    return REMEM_OK;
}

int remem_namespaces(remem *db, char **json) {
    *json = NULL;
    int rc = need_open(db);
    if (rc) return rc;
    rc = store_namespaces_json(db->st, json);
    return rc ? eng_store_fail(db, rc) : REMEM_OK;
}

int remem_clear(remem *db, const char *ns, int64_t *deleted) {
    int rc = need_open(db);
    if (rc) return rc;
    if ((rc = check_str(db, "namespace", ns, 256))) return rc;
    if (db->opt.read_only) return eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    if ((rc = store_begin(db->st))) return eng_store_fail(db, rc);
    int64_t n = 0;
    rc = store_clear(db->st, ns, &n);
    if (rc) eng_store_fail(db, rc);
    char after[64];
    snprintf(after, sizeof after, "{\"deleted\":%lld}", (long long)n);
    rc = end_ns_change(db, ns, "clear", after, rc);
    if (!rc && deleted) *deleted = n;
    return rc;
}

/* ---- export ---- */

typedef struct export_ctx {
    remem_write_fn write;
    void *ctx;
    int with_vectors;
    int64_t count;
    int failed;
} export_ctx;

static int export_row(void *vctx, const store_row *r) {
    export_ctx *e = vctx;
    json_t *o = eng_memory_json(&r->m, e->with_vectors);
    char *s = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(9)) : NULL;
    json_decref(o);
    if (!s) return REMEM_ENOMEM;
    size_t len = strlen(s);
    s[len] = '\n'; /* json_dumps leaves room: replace NUL, write len+1 */
    int stop = e->write(e->ctx, s, len + 1);
    free(s);
    if (stop) {
        e->failed = 1;
        return REMEM_EIO;
    }
    e->count++;
    return 0;
}

int remem_export(remem *db, const char *ns, int with_vectors, remem_write_fn write,
                 void *ctx, int64_t *count) {
    int rc = need_open(db);
    if (rc) return rc;
    export_ctx e = {write, ctx, with_vectors, 0, 0};
    rc = store_scan(db->st, ns, with_vectors, export_row, &e);
    if (count) *count = e.count;
    if (rc == REMEM_EIO && e.failed) return eng_fail(db, rc, "export: the writer stopped");
    if (rc == REMEM_ENOMEM) return eng_fail(db, rc, "out of memory");
    return rc ? eng_store_fail(db, rc) : REMEM_OK;
}

/* ---- reindex ---- */

typedef struct reindex_ctx {
    int64_t *rowids;
    char **texts;
    size_t n, cap;
} reindex_ctx;

static int collect_row(void *vctx, const store_row *r) {
    reindex_ctx *c = vctx;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        int64_t *ids = realloc(c->rowids, cap * sizeof *ids);
        if (!ids) return REMEM_ENOMEM;
        c->rowids = ids;
        char **t = realloc(c->texts, cap * sizeof *t);
        if (!t) return REMEM_ENOMEM;
        c->texts = t;
        c->cap = cap;
    }
    if (!(c->texts[c->n] = strdup(r->m.text))) return REMEM_ENOMEM;
    c->rowids[c->n++] = r->rowid;
    return 0;
}

static int reindex_ns(remem *db, const char *ns, remem_progress_fn progress, void *pctx) {
    reindex_ctx c = {0};
    int rc = store_scan(db->st, ns, 0, collect_row, &c);
    if (rc) {
        if (rc == REMEM_ENOMEM) eng_fail(db, rc, "out of memory");
        else eng_store_fail(db, rc);
        goto out;
    }
    int dim = db->emb->dim;
    float *vecs = malloc((c.n ? c.n : 1) * (size_t)dim * sizeof *vecs);
    if (!vecs) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory for %zu vectors", c.n);
        goto out;
    }
    /* Embed everything first, then write it all in one transaction: a
     * namespace is never left half in one model and half in another. */
    const size_t batch = 256;
    for (size_t i = 0; i < c.n && !rc; i += batch) {
        size_t m = c.n - i < batch ? c.n - i : batch;
        char err[512] = "";
        rc = db->emb->embed(db->emb, (const char *const *)c.texts + i, m, vecs + i * dim, err,
                            sizeof err);
        if (rc) eng_fail(db, rc, "%s", err[0] ? err : remem_strerror(rc));
        if (progress) progress(pctx, (int64_t)(i + m), (int64_t)c.n);
    }
    if (!rc && (rc = store_begin(db->st))) eng_store_fail(db, rc);
    else if (!rc) {
        for (size_t i = 0; i < c.n && !rc; i++) {
            rc = store_set_vector(db->st, c.rowids[i], db->emb->model_id, vecs + i * dim, dim);
            if (rc) eng_store_fail(db, rc);
        }
        if (!rc) {
            rc = store_ns_set_model(db->st, ns, db->emb->model_id, dim);
            if (rc) eng_store_fail(db, rc);
        }
        char after[256];
        snprintf(after, sizeof after, "{\"model\":\"%.200s\",\"memories\":%zu}",
                 db->emb->model_id, c.n);
        rc = end_ns_change(db, ns, "reindex", after, rc);
    }
    free(vecs);
out:
    for (size_t i = 0; i < c.n; i++) free(c.texts[i]);
    free(c.texts);
    free(c.rowids);
    return rc;
}

int remem_reindex(remem *db, const char *ns, remem_progress_fn progress, void *ctx) {
    int rc = need_open(db);
    if (rc) return rc;
    if (db->opt.read_only) return eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    if (ns) return reindex_ns(db, ns, progress, ctx);
    char *json = NULL;
    if ((rc = remem_namespaces(db, &json))) return rc;
    json_t *arr = json_loads(json, 0, NULL);
    free(json);
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o) {
        if ((rc = reindex_ns(db, json_string_value(json_object_get(o, "ns")), progress, ctx)))
            break;
    }
    json_decref(arr);
    return rc;
}
