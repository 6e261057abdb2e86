/*
 * handle.c: the engine's handle: the small public helpers (versions, init
 * functions, time, profiles), opening a store with its embedder, and
 * closing it. Status names and the per-handle error string are in error.c.
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

/* ---- small public helpers ---- */

/* ---- versions and struct sizes ---- */

const char *remem_version(void) { return REMEM_VERSION; }
int remem_version_number(void) { return REMEM_VERSION_NUMBER; }

/* The init functions write the library's defaults into the first `size`
 * bytes of the caller's struct (the caller's sizeof, which the init macros
 * pass) and record that size: a caller built against an older, smaller
 * remem.h gets no write past its struct, one built against a newer header
 * gets zeros beyond ours (and its size, which eng_take refuses). */
static void init_struct(void *dst, size_t size, const void *defaults, size_t full) {
    if (!dst || size < sizeof(size_t)) return;
    memset(dst, 0, size);
    memcpy(dst, defaults, size < full ? size : full);
    memcpy(dst, &size, sizeof size);
}

static remem_options default_options(void) {
    remem_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    return o;
}

static remem_memory default_memory(void) {
    remem_memory m;
    memset(&m, 0, sizeof m);
    m.size = sizeof m;
    m.importance = -1;
    return m;
}

static remem_patch default_patch(void) {
    remem_patch p;
    memset(&p, 0, sizeof p);
    p.size = sizeof p;
    return p;
}

static remem_query default_query(void) {
    remem_query q;
    memset(&q, 0, sizeof q);
    q.size = sizeof q;
    q.w_relevance = q.w_lexical = q.w_recency = q.w_importance = NAN;
    q.w_context = NAN;
    q.min_similarity = q.min_score = NAN;
    q.recency_base = q.half_life_hours = NAN;
    q.normalize = -1;
    q.candidates = -1;
    return q;
}

void remem_options_init_(remem_options *opt, size_t size) {
    remem_options d = default_options();
    init_struct(opt, size, &d, sizeof d);
}

void remem_memory_init_(remem_memory *m, size_t size) {
    remem_memory d = default_memory();
    init_struct(m, size, &d, sizeof d);
}

void remem_patch_init_(remem_patch *p, size_t size) {
    remem_patch d = default_patch();
    init_struct(p, size, &d, sizeof d);
}

void remem_query_init_(remem_query *q, size_t size) {
    remem_query d = default_query();
    init_struct(q, size, &d, sizeof d);
}

/* A caller's struct size must be at least the size field itself (0 means
 * it never went through its init function) and at most ours (a larger one
 * comes from a newer header than this library). db may be NULL (the render
 * functions have no handle): then only the status. */
static int check_size(remem *db, const char *type, size_t size, size_t full) {
    if (size < sizeof(size_t))
        return db ? eng_fail(db, REMEM_EINVAL, "%s was not initialised with %s_init", type, type)
                  : REMEM_EINVAL;
    if (size > full)
        return db ? eng_fail(db, REMEM_EINVAL,
                             "%s has %zu bytes, more than the %zu this library (remem %s) "
                             "knows: the caller was built against a newer remem.h",
                             type, size, full, REMEM_VERSION)
                  : REMEM_EINVAL;
    return REMEM_OK;
}

size_t eng_struct_size(const void *in) {
    size_t size = 0;
    if (in) memcpy(&size, in, sizeof size);
    return size;
}

/* Copy a caller's struct `in` over `out`, which holds the library's
 * defaults at full size: the fields the caller's header did not have keep
 * their defaults, and out->size becomes ours. */
static int take_struct(remem *db, const char *type, const void *in, void *out, size_t full) {
    if (!in) return db ? eng_fail(db, REMEM_EINVAL, "no %s given", type) : REMEM_EINVAL;
    size_t size = eng_struct_size(in);
    int rc = check_size(db, type, size, full);
    if (rc) return rc;
    memcpy((char *)out + sizeof size, (const char *)in + sizeof size, size - sizeof size);
    return REMEM_OK;
}

int eng_take_options(remem *db, const remem_options *in, remem_options *out) {
    *out = default_options();
    return take_struct(db, "remem_options", in, out, sizeof *out);
}

int eng_take_memory(remem *db, const remem_memory *in, remem_memory *out) {
    *out = default_memory();
    return take_struct(db, "remem_memory", in, out, sizeof *out);
}

int eng_take_patch(remem *db, const remem_patch *in, remem_patch *out) {
    *out = default_patch();
    return take_struct(db, "remem_patch", in, out, sizeof *out);
}

int eng_take_query(remem *db, const remem_query *in, remem_query *out) {
    *out = default_query();
    return take_struct(db, "remem_query", in, out, sizeof *out);
}

int eng_give_memory(remem *db, const remem_memory *full, remem_memory *out) {
    size_t size = eng_struct_size(out);
    int rc = check_size(db, "remem_memory", size, sizeof *full);
    if (rc) return rc;
    memcpy((char *)out + sizeof size, (const char *)full + sizeof size, size - sizeof size);
    return REMEM_OK;
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

typedef struct model_dim {
    char id[160];
    int dim;
} model_dim;

static int find_model_dim(void *ctx, const store_ns *n) {
    model_dim *d = ctx;
    if (n->dim <= 0 || strcmp(n->model, d->id)) return 0;
    d->dim = n->dim;
    return 1;
}

/* The dimension the store records for the http model cfg names (0 when
 * none): known, it spares the embedder its probe at creation, so a
 * process can open (and write, the vectors pending) while the embedding
 * server is down. */
static int http_known_dim(store *st, const char *model) {
    model_dim d = {.dim = 0};
    if (!model || snprintf(d.id, sizeof d.id, "http:%s", model) >= (int)sizeof d.id) return 0;
    return store_namespaces(st, find_model_dim, &d) == 1 ? d.dim : 0;
}

static int make_embedder(remem *db) {
    const remem_options *o = &db->opt;
    embed_config cfg = {0};
    cfg.url = env_or(o->embed_url, "REMEM_EMBED_URL");
    cfg.model = env_or(o->embed_model, "REMEM_EMBED_MODEL");
    /* Seed 003's embeddingModel, from the file's "*" policy. */
    if (!cfg.model) cfg.model = eng_policy(db, "")->embedding_model;
    cfg.api_key = env_or(o->embed_api_key, "REMEM_EMBED_API_KEY");
    cfg.timeout_ms = o->embed_timeout_ms;
    cfg.retries = o->embed_retries;
    cfg.batch = o->embed_batch;
    cfg.model_dir = env_or(o->model_dir, "REMEM_MODEL_DIR");
    cfg.cancel = &db->cancel;
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
        if (!cfg.dim) cfg.dim = http_known_dim(db->st, cfg.model);
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
    db->opt = default_options();
    if (!(db->stem = text_stemmer_new())) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    if (opt) {
        int rc = eng_take_options(db, opt, &db->opt);
        if (rc) return rc;
    }
    if (!uri || !*uri) return eng_fail(db, REMEM_EINVAL, "no store path given");
    db->uri = strdup(uri);
    if (!db->uri) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    /* The file first: a wrong config stops the open before the store is
     * created or touched. */
    int rc = eng_config_load(db);
    if (rc) return rc;
    store_config cfg = {.durability = db->opt.durability,
                        .busy_timeout_ms = db->opt.busy_timeout_ms,
                        .read_only = db->opt.read_only};
    char err[512] = "";
    rc = store_open(uri, &cfg, &db->st, err, sizeof err);
    /* A URI with a scheme may hold a password: only a path is repeated. */
    if (rc == REMEM_EUNSUPPORTED || (rc && strstr(uri, "://") && strncmp(uri, "file:", 5) != 0))
        return eng_fail(db, rc, "%s", err[0] ? err : remem_strerror(rc));
    if (rc)
        return eng_fail(db, rc, "cannot open %s: %s", strncmp(uri, "file:", 5) ? uri : uri + 5,
                        err[0] ? err : remem_strerror(rc));
    if ((rc = make_embedder(db))) return rc;
    if ((rc = eng_llm_open(db))) return rc;
    if (db->opt.cache_mb < 0)
        return eng_fail(db, REMEM_EINVAL, "cache_mb is %d; a budget is at least 1 MB",
                        db->opt.cache_mb);
    /* The process's cache budget: the option, else the config's. */
    int mb = db->opt.cache_mb ? db->opt.cache_mb : cfg_cache_max_mb(db->conf);
    if (mb > 0) cache_set_budget((size_t)mb << 20);
    if ((rc = cache_attach(db))) return rc;
    eng_ok(db);
    return REMEM_OK;
}

void remem_close(remem *db) {
    if (!db) return;
    if (db->shelf) snap_save_all(db); /* the next process adopts them */
    cache_detach(db);
    eng_llm_close(db);
    text_stemmer_free(db->stem);
    lex_scratch_free(db->lexs);
    embed_destroy(db->emb);
    store_close(db->st);
    cfg_free(db->conf);
    json_decref(db->hydrated);
    free(db->uri);
    free(db->answer_text);
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
