/*
 * handle.c: the engine's handle: status names and messages, the per-handle
 * error string, the small public helpers (init functions, time, profiles),
 * opening a store with its embedder, and closing it.
 *
 * A handle joins a store, an embedder and the in-memory namespace caches
 * (cache.c). The write path is in write.c and edit.c, whole-namespace work
 * in namespace.c, reading in recall.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "score/score.h"
#include "util/util.h"

/* ---- status codes ---- */

const char *remem_status_name(int rc) {
#define REMEM__NAME(name, val, msg) \
    if (rc == val) return #name;
    REMEM_STATUS_MAP(REMEM__NAME)
#undef REMEM__NAME
    return "REMEM_UNKNOWN";
}

const char *remem_strerror(int rc) {
#define REMEM__MSG(name, val, msg) \
    if (rc == val) return msg;
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
    static const struct {
        const char *kind;
        double imp;
    } defaults[] = {
        {"reflection", 0.95}, {"decision", 0.9},   {"lesson", 0.8},
        {"static", 1.0},      {"summary", 0.7},    {"plan", 0.6},
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

static int model_has_prefix(void *ctx, const store_ns *n) {
    const char *prefix = ctx;
    return strncmp(n->model, prefix, strlen(prefix)) == 0;
}

/* 1 when some namespace of the store holds vectors of a model whose id
 * starts with prefix. */
static int store_has_model_prefix(store *st, const char *prefix) {
    return store_namespaces(st, model_has_prefix, (void *)prefix) == 1;
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
            snprintf(db->emb_note, sizeof db->emb_note, "using the hash embedder: %s",
                     why[0] ? why : "no MiniLM model installed");
            name = "hash";
        }
    }
    if (strcmp(name, "hash") == 0)
        rc = embed_hash_create(&cfg, &db->emb, err, sizeof err);
    else if (strcmp(name, "http") == 0) {
        if (!cfg.url)
            return eng_fail(db, REMEM_EINVAL,
                            "the http embedder needs a URL (--embed-url or REMEM_EMBED_URL)");
        rc = embed_http_create(&cfg, &db->emb, err, sizeof err);
    } else if (strcmp(name, "minilm") == 0)
        rc = embed_minilm_create(&cfg, &db->emb, err, sizeof err);
    else
        return eng_fail(db, REMEM_EINVAL, "unknown embedder \"%s\" (hash, http, minilm or auto)",
                        name);
    if (rc) return eng_fail(db, rc, "%s", err[0] ? err : remem_strerror(rc));
    return REMEM_OK;
}

int remem_open(const char *uri, const remem_options *opt, remem **out) {
    remem *db = calloc(1, sizeof *db);
    *out = db;
    if (!db) return REMEM_ENOMEM;
    if (opt) db->opt = *opt;
    if (!uri || !*uri) return eng_fail(db, REMEM_EINVAL, "no store path given");
    db->uri = strdup(uri);
    if (!db->uri) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    store_config cfg = {.durability = db->opt.durability,
                        .busy_timeout_ms = db->opt.busy_timeout_ms,
                        .read_only = db->opt.read_only};
    char err[512] = "";
    int rc = store_open(uri, &cfg, &db->st, err, sizeof err);
    /* A URI with a scheme may hold a password: only a path is repeated. */
    if (rc == REMEM_EUNSUPPORTED) return eng_fail(db, rc, "%s", err);
    if (rc)
        return eng_fail(db, rc, "cannot open %s: %s", strncmp(uri, "file:", 5) ? uri : uri + 5,
                        err[0] ? err : remem_strerror(rc));
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

int eng_need_open(remem *db) {
    if (!db) return REMEM_EINVAL;
    if (!db->st || !db->emb) return eng_fail(db, REMEM_EINVAL, "the store is not open");
    eng_ok(db);
    return REMEM_OK;
}

int remem_embed(remem *db, const char *const *texts, size_t n, float *out) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    char err[512] = "";
    rc = db->emb->embed(db->emb, texts, n, out, err, sizeof err);
    return rc ? eng_fail(db, rc, "%s", err[0] ? err : remem_strerror(rc)) : REMEM_OK;
}

/* ---- validation ---- */
