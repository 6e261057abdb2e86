/*
 * engine_fixture.h: what the engine tests (test_write.c, test_edit.c,
 * test_namespace.c, test_jsonl.c, test_recall.c, test_profiles.c) share:
 * a store opened with the hash embedder, temporary folders, hand-built
 * namespaces whose vectors have a known cosine to the query vector e_A,
 * and the checks of a ranked result against hand-computed expectations.
 * A header of static inline functions rather than a support .c file,
 * because the CHECK macros count into the including test program.
 */
#ifndef REMEM_TEST_ENGINE_FIXTURE_H
#define REMEM_TEST_ENGINE_FIXTURE_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remem.h"
#include "support/embed_server.h"
#include "test.h"

#define HOUR_MS 3600000LL
/* A fixed "now" for every deterministic recall: 2023-11-14T22:13:20Z. */
#define T0      1700000000000LL
#define EPS     1e-6
/* The two orthonormal axes the hand-made vectors live on. */
#define AXIS_A  5
#define AXIS_B  17

/* ---- helpers ---- */

static inline remem *open_store(const char *uri) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    int rc = remem_open(uri, &o, &db);
    if (rc) {
        fprintf(stderr, "  cannot open %s: %s\n", uri, remem_errmsg(db));
        remem_close(db);
        return NULL;
    }
    return db;
}

/* A temporary folder per test that needs files, removed by tmp_done. */
typedef struct tmpdir {
    char dir[64];
    char db[128];
} tmpdir;

static inline void tmp_make(tmpdir *t) {
    snprintf(t->dir, sizeof t->dir, "/tmp/remem-test-engine-XXXXXX");
    if (!mkdtemp(t->dir)) {
        perror("mkdtemp");
        exit(1);
    }
    snprintf(t->db, sizeof t->db, "%s/store.db", t->dir);
}

static inline void tmp_done(tmpdir *t) {
    char p[160];
    const char *suffix[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s%s", t->db, suffix[i]);
        unlink(p);
    }
    rmdir(t->dir);
}

/* v = c·e_A + sqrt(1-c²)·e_B: a unit vector whose cosine to e_A is c. */
static inline void axis_vec(float *v, int dim, double c) {
    memset(v, 0, (size_t)dim * sizeof *v);
    v[AXIS_A] = (float)c;
    v[AXIS_B] = (float)sqrt(1.0 - c * c > 0 ? 1.0 - c * c : 0);
}

/* One memory of a hand-built namespace. */
typedef struct spec {
    const char *id;
    double cos;   /* to the query vector e_A */
    double hours; /* age at T0 */
    double imp;
    const char *kind, *tier, *meta;
} spec;

static inline int64_t created_of(const spec *s) { return T0 - llround(s->hours * HOUR_MS); }

static inline void put_specs(remem *db, const char *ns, const spec *s, size_t n) {
    int dim = remem_embedder_dim(db);
    float *v = malloc((size_t)dim * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        remem_memory m;
        remem_memory_init(&m);
        char text[128];
        snprintf(text, sizeof text, "memory %s of the hand-built namespace", s[i].id);
        axis_vec(v, dim, s[i].cos);
        m.ns = ns;
        m.id = s[i].id;
        m.text = text;
        m.importance = s[i].imp;
        m.kind = s[i].kind;
        m.tier = s[i].tier;
        m.metadata = s[i].meta;
        m.created_at = created_of(&s[i]);
        m.vector = v;
        m.dim = dim;
        int rc = remem_add(db, &m, NULL, 0, NULL);
        if (rc) fprintf(stderr, "  add %s: %s\n", s[i].id, remem_errmsg(db));
        CHECK_INT(rc, REMEM_OK);
    }
    free(v);
}

/* A query on one namespace with the query vector e_A at T0, no touch. */
typedef struct vquery {
    remem_query q;
    const char *ns[1];
    float *vec;
} vquery;

static inline void vquery_init(vquery *v, remem *db, const char *ns, const char *profile) {
    int dim = remem_embedder_dim(db);
    v->vec = calloc((size_t)dim, sizeof *v->vec);
    v->vec[AXIS_A] = 1;
    v->ns[0] = ns;
    remem_query_init(&v->q);
    v->q.namespaces = v->ns;
    v->q.n_namespaces = 1;
    v->q.vector = v->vec;
    v->q.dim = dim;
    v->q.profile = profile;
    v->q.now = T0;
    v->q.no_touch = 1;
}

static inline void vquery_free(vquery *v) { free(v->vec); }

static inline remem_result *run(remem *db, const remem_query *q) {
    remem_result *r = NULL;
    int rc = remem_recall(db, q, &r);
    if (rc) fprintf(stderr, "  recall: %s: %s\n", remem_status_name(rc), remem_errmsg(db));
    CHECK_INT(rc, REMEM_OK);
    return r;
}

/* What a memory should score: the components as reported and the score. */
typedef struct expect {
    const char *id;
    double rel, rec, imp, score;
    int rank;   /* tier rank when the profile orders by tier, else 0 */
    int kept;   /* passes the thresholds */
    double ctx; /* the temporal-context component (default profile only) */
} expect;

static inline expect ex(const char *id, double rel, double rec, double imp, double score, int rank,
                        int kept) {
    expect e = {id, rel, rec, imp, score, rank, kept, 0};
    return e;
}

static const expect *sort_ctx __attribute__((unused));
static inline int cmp_expect(const void *a, const void *b) {
    const expect *x = &sort_ctx[*(const int *)a], *y = &sort_ctx[*(const int *)b];
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->score > y->score ? -1 : x->score < y->score;
}

/* The hits must be the kept expectations, best first (tier rank, then
 * score), cut at k, each with its score and components. */
static inline void check_hits(const remem_result *r, const expect *e, size_t n, size_t k) {
    if (!r) return;
    int *ix = malloc(n * sizeof *ix);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (e[i].kept) ix[m++] = (int)i;
    sort_ctx = e;
    qsort(ix, m, sizeof *ix, cmp_expect);
    if (m > k) m = k;
    CHECK_INT(r->n, m);
    for (size_t i = 0; i < m && i < r->n; i++) {
        const expect *x = &e[ix[i]];
        const remem_hit *h = &r->hits[i];
        CHECK_STR(h->mem.id, x->id);
        CHECK_NEAR(h->score, x->score, EPS);
        CHECK_NEAR(h->relevance, x->rel, EPS);
        CHECK_NEAR(h->recency, x->rec, EPS);
        CHECK_NEAR(h->importance, x->imp, EPS);
        CHECK_NEAR(h->lexical, 0, 0);
        CHECK_NEAR(h->context, x->ctx, EPS);
    }
    free(ix);
}

static inline double cos01(double c) { return c > 0 ? c : 0; }
/* seed 001's similarity over Chroma's "l2" space: the squared distance */
static inline double inv_sql2(double c) { return 1.0 / (1.0 + (2.0 - 2.0 * c)); }
static inline double pow_decay(double base, double hours) { return pow(base, hours); }
static inline double half_life(double hl, double hours) { return pow(0.5, hours / hl); }

/* Comma-joined "op" of each history row of (ns, id). */
static inline void history_ops(remem *db, const char *ns, const char *id, char *buf, size_t cap) {
    buf[0] = '\0';
    char *js = NULL;
    if (remem_history(db, ns, id, &js) != REMEM_OK) {
        snprintf(buf, cap, "(error: %s)", remem_errmsg(db));
        return;
    }
    json_t *a = json_loads(js, 0, NULL);
    size_t i;
    json_t *o;
    json_array_foreach(a, i, o) {
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, "%s%s", i ? "," : "",
                 json_string_value(json_object_get(o, "op")));
    }
    json_decref(a);
    remem_free(js);
}

/* The memory count of ns according to remem_namespaces (0 if absent). */
static inline long long ns_count(remem *db, const char *ns) {
    char *js = NULL;
    if (remem_namespaces(db, &js) != REMEM_OK) return -1;
    json_t *a = json_loads(js, 0, NULL);
    remem_free(js);
    long long n = 0;
    size_t i;
    json_t *o;
    json_array_foreach(a, i, o) {
        if (strcmp(json_string_value(json_object_get(o, "ns")), ns) == 0)
            n = json_integer_value(json_object_get(o, "count"));
    }
    json_decref(a);
    return n;
}

static inline int64_t get_field_i(remem *db, const char *ns, const char *id, int which) {
    remem_record *r = NULL;
    if (remem_get(db, ns, id, &r) != REMEM_OK) return -1;
    const remem_memory *m = remem_record_memory(r);
    int64_t v = which == 0 ? m->duplicate_count : which == 1 ? m->access_count : m->accessed_at;
    remem_record_free(r);
    return v;
}

static inline int add_text(remem *db, const char *ns, const char *id, const char *text,
                           char *id_out, int *outcome) {
    remem_memory m;
    remem_memory_init(&m);
    m.ns = ns;
    m.id = id;
    m.text = text;
    return remem_add(db, &m, id_out, 64, outcome);
}

/* Does the result hold id? */
static inline int has_hit(const remem_result *r, const char *id) {
    for (size_t i = 0; r && i < r->n; i++)
        if (strcmp(r->hits[i].mem.id, id) == 0) return 1;
    return 0;
}

/* Recall by text in one namespace; returns whether id is among the hits. */
static inline int recall_finds(remem *db, const char *ns, const char *text, const char *id,
                               int64_t now, int include_invalid, const char *tiers) {
    remem_query q;
    remem_query_init(&q);
    const char *nss[1] = {ns};
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.text = text;
    q.now = now;
    q.no_touch = 1;
    q.include_invalid = include_invalid;
    q.tiers = tiers;
    remem_result *r = NULL;
    if (remem_recall(db, &q, &r) != REMEM_OK) {
        fprintf(stderr, "  recall: %s\n", remem_errmsg(db));
        return -1;
    }
    int found = has_hit(r, id);
    remem_result_free(r);
    return found;
}

#endif
