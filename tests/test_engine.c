/*
 * test_engine.c: libremem through its public header alone: the write path
 * (every field round-trips, generated ids, upserts, duplicate folding, TTL,
 * invalidation, archive and purge, history, stats, namespaces, clear,
 * export/import, reindex), the errors that must change nothing (wrong
 * dimension, bad filter, unknown profile, a batch with a bad memory, a
 * namespace of another model), visibility between handles and processes,
 * and every built-in profile checked by hand.
 *
 * The profile tests give each memory a vector chosen so that its cosine to
 * the query vector is known (cos·e_a + sin·e_b against e_a), and a known
 * age and importance, then recompute every score from the formulas of
 * DESIGN.md written out here independently of score.c, and compare the
 * ranking and each score to 1e-6. Queries pass `now` and no_touch so that
 * recency is exact and a recall does not change the next one.
 */
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

static remem *open_store(const char *uri) {
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

static void tmp_make(tmpdir *t) {
    snprintf(t->dir, sizeof t->dir, "/tmp/remem-test-engine-XXXXXX");
    if (!mkdtemp(t->dir)) {
        perror("mkdtemp");
        exit(1);
    }
    snprintf(t->db, sizeof t->db, "%s/store.db", t->dir);
}

static void tmp_done(tmpdir *t) {
    char p[160];
    const char *suffix[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s%s", t->db, suffix[i]);
        unlink(p);
    }
    rmdir(t->dir);
}

/* v = c·e_A + sqrt(1-c²)·e_B: a unit vector whose cosine to e_A is c. */
static void axis_vec(float *v, int dim, double c) {
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

static int64_t created_of(const spec *s) { return T0 - llround(s->hours * HOUR_MS); }

static void put_specs(remem *db, const char *ns, const spec *s, size_t n) {
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

static void vquery_init(vquery *v, remem *db, const char *ns, const char *profile) {
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

static void vquery_free(vquery *v) { free(v->vec); }

static remem_result *run(remem *db, const remem_query *q) {
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

static expect ex(const char *id, double rel, double rec, double imp, double score, int rank,
                 int kept) {
    expect e = {id, rel, rec, imp, score, rank, kept, 0};
    return e;
}

static const expect *sort_ctx;
static int cmp_expect(const void *a, const void *b) {
    const expect *x = &sort_ctx[*(const int *)a], *y = &sort_ctx[*(const int *)b];
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->score > y->score ? -1 : x->score < y->score;
}

/* The hits must be the kept expectations, best first (tier rank, then
 * score), cut at k, each with its score and components. */
static void check_hits(const remem_result *r, const expect *e, size_t n, size_t k) {
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

static double cos01(double c) { return c > 0 ? c : 0; }
static double inv_l2(double c) { return 1.0 / (1.0 + sqrt(2.0 - 2.0 * c)); }
static double pow_decay(double base, double hours) { return pow(base, hours); }
static double half_life(double hl, double hours) { return pow(0.5, hours / hl); }

/* Comma-joined "op" of each history row of (ns, id). */
static void history_ops(remem *db, const char *ns, const char *id, char *buf, size_t cap) {
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
static long long ns_count(remem *db, const char *ns) {
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

static int64_t get_field_i(remem *db, const char *ns, const char *id, int which) {
    remem_record *r = NULL;
    if (remem_get(db, ns, id, &r) != REMEM_OK) return -1;
    const remem_memory *m = remem_record_memory(r);
    int64_t v = which == 0 ? m->duplicate_count : which == 1 ? m->access_count : m->accessed_at;
    remem_record_free(r);
    return v;
}

static int add_text(remem *db, const char *ns, const char *id, const char *text, char *id_out,
                    int *outcome) {
    remem_memory m;
    remem_memory_init(&m);
    m.ns = ns;
    m.id = id;
    m.text = text;
    return remem_add(db, &m, id_out, 64, outcome);
}

/* Does the result hold id? */
static int has_hit(const remem_result *r, const char *id) {
    for (size_t i = 0; r && i < r->n; i++)
        if (strcmp(r->hits[i].mem.id, id) == 0) return 1;
    return 0;
}

/* Recall by text in one namespace; returns whether id is among the hits. */
static int recall_finds(remem *db, const char *ns, const char *text, const char *id, int64_t now,
                        int include_invalid, const char *tiers) {
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

/* ---- the write path ---- */

static void test_add_get_roundtrip(void) {
    remem *db = open_store(":memory:");
    CHECK(db != NULL);
    if (!db) return;
    int dim = remem_embedder_dim(db);
    CHECK_INT(dim, 384);
    CHECK_STR(remem_embedder_name(db), "hash");
    float *v = calloc((size_t)dim, sizeof *v);
    axis_vec(v, dim, 0.6);
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "agent:bolton";
    m.id = "m-1";
    m.kind = "decision";
    m.tier = "long";
    m.text = "Chose the northern route because the bridge was out";
    m.importance = 0.42;
    m.created_at = T0 - 5 * HOUR_MS;
    m.expires_at = T0 + 1000 * HOUR_MS;
    m.metadata = "{\"reward\":0.25,\"project\":\"acme\",\"tags\":[\"a\",\"b\"]}";
    m.links = "[\"ev-1\",\"ev-2\"]";
    m.vector = v;
    m.dim = dim;
    char id[64] = "";
    int outcome = 0;
    int64_t before = remem_now();
    CHECK_INT(remem_add(db, &m, id, sizeof id, &outcome), REMEM_OK);
    int64_t after = remem_now();
    CHECK_STR(id, "m-1");
    CHECK_INT(outcome, REMEM_ADDED);
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "agent:bolton", "m-1", &r), REMEM_OK);
    if (r) {
        const remem_memory *g = remem_record_memory(r);
        CHECK_STR(g->ns, m.ns);
        CHECK_STR(g->id, m.id);
        CHECK_STR(g->kind, m.kind);
        CHECK_STR(g->tier, m.tier);
        CHECK_STR(g->text, m.text);
        CHECK_NEAR(g->importance, 0.42, 0);
        CHECK_INT(g->created_at, m.created_at);
        CHECK(g->updated_at >= before && g->updated_at <= after);
        CHECK_INT(g->accessed_at, m.created_at); /* never accessed: created */
        CHECK_INT(g->access_count, 0);
        CHECK_INT(g->expires_at, m.expires_at);
        CHECK_INT(g->invalidated_at, 0);
        CHECK(g->superseded_by == NULL);
        CHECK_INT(g->duplicate_count, 0);
        json_t *want = json_loads(m.metadata, 0, NULL), *got = json_loads(g->metadata, 0, NULL);
        CHECK(got && json_equal(want, got));
        json_decref(want);
        json_decref(got);
        want = json_loads(m.links, 0, NULL);
        got = json_loads(g->links, 0, NULL);
        CHECK(got && json_equal(want, got));
        json_decref(want);
        json_decref(got);
        CHECK_STR(g->model, remem_embedder_model(db));
        CHECK_STR(g->model, "hash-v1-384");
        CHECK_INT(g->dim, dim);
    }
    remem_record_free(r);
    /* ns may be left out when the id is unique. */
    CHECK_INT(remem_get(db, NULL, "m-1", &r), REMEM_OK);
    remem_record_free(r);
    CHECK_INT(remem_get(db, "agent:bolton", "nope", &r), REMEM_ENOTFOUND);
    CHECK(r == NULL);
    CHECK_HAS(remem_errmsg(db), "nope");

    /* The defaults: kind observation, tier short, the kind's importance;
     * kind static goes to tier static. */
    struct {
        const char *kind, *tier;
        double imp;
    } defaults[] = {{NULL, "short", 0.5},
                    {"decision", "short", 0.9},
                    {"reflection", "short", 0.95},
                    {"static", "static", 1.0}};
    for (size_t i = 0; i < 4; i++) {
        remem_memory d;
        remem_memory_init(&d);
        char text[64];
        snprintf(text, sizeof text, "default case %zu", i);
        d.ns = "defaults";
        d.text = text;
        d.kind = defaults[i].kind;
        CHECK_INT(remem_add(db, &d, id, sizeof id, NULL), REMEM_OK);
        CHECK_INT(remem_get(db, "defaults", id, &r), REMEM_OK);
        if (r) {
            const remem_memory *g = remem_record_memory(r);
            CHECK_STR(g->kind, defaults[i].kind ? defaults[i].kind : "observation");
            CHECK_STR(g->tier, defaults[i].tier);
            CHECK_NEAR(g->importance, defaults[i].imp, 1e-12);
            CHECK(g->created_at > 0 && g->created_at == g->updated_at);
            CHECK(g->metadata == NULL && g->links == NULL);
        }
        remem_record_free(r);
    }
    /* Invalid memories are refused with a reason. */
    remem_memory bad;
    remem_memory_init(&bad);
    bad.ns = "defaults";
    bad.text = "";
    CHECK_INT(remem_add(db, &bad, NULL, 0, NULL), REMEM_EINVAL);
    CHECK_HAS(remem_errmsg(db), "text");
    bad.text = "x";
    bad.importance = 1.5;
    CHECK_INT(remem_add(db, &bad, NULL, 0, NULL), REMEM_EINVAL);
    CHECK_HAS(remem_errmsg(db), "importance");
    bad.importance = 0.5;
    bad.tier = "medium";
    CHECK_INT(remem_add(db, &bad, NULL, 0, NULL), REMEM_EINVAL);
    CHECK_HAS(remem_errmsg(db), "medium");
    bad.tier = NULL;
    bad.metadata = "[1,2]";
    CHECK_INT(remem_add(db, &bad, NULL, 0, NULL), REMEM_EPARSE);
    CHECK_HAS(remem_errmsg(db), "metadata");
    bad.metadata = NULL;
    bad.links = "[1]";
    CHECK_INT(remem_add(db, &bad, NULL, 0, NULL), REMEM_EPARSE);
    CHECK_HAS(remem_errmsg(db), "links");
    CHECK_INT(ns_count(db, "defaults"), 4);
    free(v);
    remem_close(db);
}

static void test_generated_ids(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    enum { N = 200 };
    static char ids[N][64];
    for (int i = 0; i < N; i++) {
        char text[64];
        snprintf(text, sizeof text, "observation number %d", i);
        int outcome = 0;
        CHECK_INT(add_text(db, "ids", NULL, text, ids[i], &outcome), REMEM_OK);
        CHECK_INT(outcome, REMEM_ADDED);
        CHECK_INT(strlen(ids[i]), 26);
        if (i == N / 2) usleep(3000); /* cross a millisecond boundary too */
    }
    /* Unique and in the order they were made. */
    for (int i = 1; i < N; i++) CHECK(strcmp(ids[i - 1], ids[i]) < 0);
    /* The first 10 characters are the time: the later half is later. */
    CHECK(strncmp(ids[0], ids[N - 1], 10) < 0);
    /* Each is gettable. */
    for (int i = 0; i < N; i += 37) {
        remem_record *r = NULL;
        CHECK_INT(remem_get(db, "ids", ids[i], &r), REMEM_OK);
        remem_record_free(r);
    }
    CHECK_INT(ns_count(db, "ids"), N);
    remem_close(db);
}

static void test_upsert(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    char id[64];
    int outcome = 0;
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "u";
    m.id = "fact-1";
    m.text = "The office is on the third floor";
    m.created_at = T0;
    m.importance = 0.3;
    CHECK_INT(remem_add(db, &m, id, sizeof id, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_ADDED);
    m.text = "The office moved to the fifth floor";
    m.created_at = 0; /* keep the original creation time */
    m.importance = 0.7;
    CHECK_INT(remem_add(db, &m, id, sizeof id, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_UPSERTED);
    CHECK_STR(id, "fact-1");
    CHECK_INT(ns_count(db, "u"), 1);
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "u", "fact-1", &r), REMEM_OK);
    if (r) {
        CHECK_STR(remem_record_memory(r)->text, "The office moved to the fifth floor");
        CHECK_NEAR(remem_record_memory(r)->importance, 0.7, 0);
        CHECK_INT(remem_record_memory(r)->created_at, T0);
    }
    remem_record_free(r);
    char ops[256];
    history_ops(db, "u", "fact-1", ops, sizeof ops);
    CHECK_STR(ops, "add,update");
    char *js = NULL;
    CHECK_INT(remem_history(db, "u", "fact-1", &js), REMEM_OK);
    json_t *a = json_loads(js, 0, NULL);
    json_t *upd = json_array_get(a, 1);
    CHECK_STR(json_string_value(json_object_get(json_object_get(upd, "before"), "text")),
              "The office is on the third floor");
    CHECK_STR(json_string_value(json_object_get(json_object_get(upd, "after"), "text")),
              "The office moved to the fifth floor");
    CHECK(json_is_null(json_object_get(json_array_get(a, 0), "before")));
    json_decref(a);
    remem_free(js);
    /* The new text is what recall finds now (the old one is gone from FTS). */
    CHECK_INT(recall_finds(db, "u", "fifth floor", "fact-1", 0, 0, NULL), 1);
    /* The same id in another namespace is another memory. */
    CHECK_INT(add_text(db, "u2", "fact-1", "elsewhere", id, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_ADDED);
    CHECK_INT(remem_get(db, NULL, "fact-1", &r), REMEM_EAMBIGUOUS);
    remem_record_free(r);
    remem_close(db);
}

static void test_duplicates(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    char id1[64], id2[64], id3[64];
    int outcome = 0;
    CHECK_INT(add_text(db, "d", NULL, "Hello world, the sky is blue", id1, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_ADDED);
    /* Same normalised text (case, runs of spaces): folded. */
    CHECK_INT(add_text(db, "d", NULL, "  hello   WORLD, the sky is blue ", id2, &outcome),
              REMEM_OK);
    CHECK_INT(outcome, REMEM_DUPLICATE);
    CHECK_STR(id2, id1);
    CHECK_INT(get_field_i(db, "d", id1, 0), 1);
    CHECK_INT(add_text(db, "d", NULL, "hello world, the sky is blue", id2, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_DUPLICATE);
    CHECK_INT(get_field_i(db, "d", id1, 0), 2);
    CHECK_INT(ns_count(db, "d"), 1);
    /* Another text, another namespace, or a caller's id: not folded. */
    CHECK_INT(add_text(db, "d", NULL, "Hello world, the sky is grey", id3, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_ADDED);
    CHECK_INT(add_text(db, "d2", NULL, "Hello world, the sky is blue", id3, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_ADDED);
    CHECK(strcmp(id3, id1) != 0);
    CHECK_INT(add_text(db, "d", "mine", "Hello world, the sky is blue", id3, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_ADDED);
    CHECK_STR(id3, "mine");
    CHECK_INT(ns_count(db, "d"), 3);
    char ops[256];
    history_ops(db, "d", id1, ops, sizeof ops);
    CHECK_STR(ops, "add,duplicate,duplicate");
    char *js = NULL;
    CHECK_INT(remem_stats(db, "d", &js), REMEM_OK);
    json_t *o = json_loads(js, 0, NULL);
    CHECK_INT(json_integer_value(json_object_get(o, "duplicates_folded")), 2);
    json_decref(o);
    remem_free(js);
    remem_close(db);
}

static void test_ttl(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "t";
    m.id = "temp";
    m.text = "The door code this week is 9182";
    m.created_at = T0;
    m.expires_at = T0 + 2 * HOUR_MS;
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    CHECK_INT(add_text(db, "t", "keep", "The door is painted green", NULL, NULL), REMEM_OK);
    CHECK_INT(recall_finds(db, "t", "door code", "temp", T0 + HOUR_MS, 0, NULL), 1);
    CHECK_INT(recall_finds(db, "t", "door code", "temp", T0 + 2 * HOUR_MS, 0, NULL), 0);
    CHECK_INT(recall_finds(db, "t", "door code", "temp", T0 + 3 * HOUR_MS, 0, NULL), 0);
    CHECK_INT(recall_finds(db, "t", "door code", "keep", T0 + 3 * HOUR_MS, 0, NULL), 1);
    CHECK_INT(recall_finds(db, "t", "door code", "temp", T0 + 3 * HOUR_MS, 1, NULL), 1);
    /* Hidden, not deleted. */
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "t", "temp", &r), REMEM_OK);
    if (r) CHECK_INT(remem_record_memory(r)->expires_at, T0 + 2 * HOUR_MS);
    remem_record_free(r);
    CHECK_INT(ns_count(db, "t"), 2);
    /* The stats count it as expired (the clock is well past T0). */
    char *js = NULL;
    CHECK_INT(remem_stats(db, NULL, &js), REMEM_OK);
    json_t *o = json_loads(js, 0, NULL);
    CHECK_INT(json_integer_value(json_object_get(o, "expired")), 1);
    json_decref(o);
    remem_free(js);
    /* Extending the TTL brings it back. */
    remem_patch p;
    remem_patch_init(&p);
    p.fields = REMEM_SET_EXPIRES;
    p.expires_at = T0 + 10 * HOUR_MS;
    CHECK_INT(remem_update(db, "t", "temp", &p), REMEM_OK);
    CHECK_INT(recall_finds(db, "t", "door code", "temp", T0 + 3 * HOUR_MS, 0, NULL), 1);
    remem_close(db);
}

static void test_invalidate(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    CHECK_INT(add_text(db, "f", "old", "Alice lives in Paris", NULL, NULL), REMEM_OK);
    CHECK_INT(add_text(db, "f", "new", "Alice lives in Lisbon now", NULL, NULL), REMEM_OK);
    /* Load the cache first, so the invalidation has to reach it. */
    CHECK_INT(recall_finds(db, "f", "where does Alice live", "old", 0, 0, NULL), 1);
    CHECK_INT(remem_invalidate(db, "f", "old", "new", "moved"), REMEM_OK);
    CHECK_INT(recall_finds(db, "f", "where does Alice live", "old", 0, 0, NULL), 0);
    CHECK_INT(recall_finds(db, "f", "where does Alice live", "new", 0, 0, NULL), 1);
    CHECK_INT(recall_finds(db, "f", "where does Alice live", "old", 0, 1, NULL), 1);
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "f", "old", &r), REMEM_OK);
    if (r) {
        CHECK(remem_record_memory(r)->invalidated_at > 0);
        CHECK_STR(remem_record_memory(r)->superseded_by, "new");
        CHECK_STR(remem_record_memory(r)->text, "Alice lives in Paris");
    }
    remem_record_free(r);
    char ops[256];
    history_ops(db, "f", "old", ops, sizeof ops);
    CHECK_STR(ops, "add,invalidate");
    char *js = NULL;
    CHECK_INT(remem_history(db, "f", "old", &js), REMEM_OK);
    CHECK_HAS(js, "\"actor\":\"moved\"");
    remem_free(js);
    CHECK_INT(remem_stats(db, NULL, &js), REMEM_OK);
    json_t *o = json_loads(js, 0, NULL);
    CHECK_INT(json_integer_value(json_object_get(o, "invalidated")), 1);
    json_decref(o);
    remem_free(js);
    CHECK_INT(remem_invalidate(db, "f", "missing", NULL, NULL), REMEM_ENOTFOUND);
    remem_close(db);
}

static void test_forget_archive(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    CHECK_INT(add_text(db, "a", "trip", "We took the night train to Vienna", NULL, NULL), REMEM_OK);
    CHECK_INT(add_text(db, "a", "other", "Breakfast was coffee and toast", NULL, NULL), REMEM_OK);
    CHECK_INT(recall_finds(db, "a", "night train Vienna", "trip", 0, 0, NULL), 1);
    CHECK_INT(remem_forget(db, "a", "trip", 0), REMEM_OK);
    CHECK_INT(recall_finds(db, "a", "night train Vienna", "trip", 0, 0, NULL), 0);
    CHECK_INT(recall_finds(db, "a", "night train Vienna", "trip", 0, 1, NULL), 0);
    /* Still there, in the archived tier, and a query may ask for it. */
    CHECK_INT(recall_finds(db, "a", "night train Vienna", "trip", 0, 0, "archived"), 1);
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "a", "trip", &r), REMEM_OK);
    if (r) CHECK_STR(remem_record_memory(r)->tier, "archived");
    remem_record_free(r);
    CHECK_INT(ns_count(db, "a"), 2);
    /* Restored by moving it to another tier. */
    remem_patch p;
    remem_patch_init(&p);
    p.fields = REMEM_SET_TIER;
    p.tier = "long";
    CHECK_INT(remem_update(db, "a", "trip", &p), REMEM_OK);
    CHECK_INT(recall_finds(db, "a", "night train Vienna", "trip", 0, 0, NULL), 1);
    char ops[256];
    history_ops(db, "a", "trip", ops, sizeof ops);
    CHECK_STR(ops, "add,archive,restore");
    remem_close(db);
}

/* Whether any "text" member anywhere in v is a string. */
static int json_has_text(json_t *v) {
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x) {
            if (strcmp(k, "text") == 0 && !json_is_null(x)) return 1;
            if (json_has_text(x)) return 1;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) if (json_has_text(x)) return 1;
    }
    return 0;
}

static void test_forget_purge(void) {
    tmpdir t;
    tmp_make(&t);
    remem *db = open_store(t.db);
    if (!db) return;
    CHECK_INT(add_text(db, "p", "secret", "My bank PIN is zanzibar4711", NULL, NULL), REMEM_OK);
    CHECK_INT(add_text(db, "p", "keep", "My favourite colour is teal", NULL, NULL), REMEM_OK);
    remem_patch pt;
    remem_patch_init(&pt);
    pt.fields = REMEM_SET_TEXT;
    pt.text = "My bank PIN is quagmire0815";
    CHECK_INT(remem_update(db, "p", "secret", &pt), REMEM_OK);
    CHECK_INT(recall_finds(db, "p", "bank PIN", "secret", 0, 0, NULL), 1);
    CHECK_INT(remem_forget(db, "p", "secret", 1), REMEM_OK);
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "p", "secret", &r), REMEM_ENOTFOUND);
    remem_record_free(r);
    CHECK_INT(recall_finds(db, "p", "bank PIN", "secret", 0, 1, "static,short,long,archived"), 0);
    CHECK_INT(ns_count(db, "p"), 1);
    /* History keeps the rows, every one without the text. */
    char ops[256];
    history_ops(db, "p", "secret", ops, sizeof ops);
    CHECK_STR(ops, "add,update,delete");
    char *js = NULL;
    CHECK_INT(remem_history(db, "p", "secret", &js), REMEM_OK);
    CHECK(js && !strstr(js, "zanzibar") && !strstr(js, "quagmire"));
    json_t *h = js ? json_loads(js, 0, NULL) : NULL;
    CHECK(h != NULL);
    CHECK(!json_has_text(h));
    /* ...but with the rest of the record (the id, the kind). */
    json_t *del = json_array_get(h, 2);
    CHECK_STR(json_string_value(json_object_get(json_object_get(del, "before"), "id")), "secret");
    json_decref(h);
    remem_free(js);
    remem_close(db);
    /* Nothing in the tables reads the text any more: memories, FTS, history. */
    sqlite3 *s = NULL;
    CHECK_INT(sqlite3_open_v2(t.db, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    const char *probes[] = {
        "SELECT count(*) FROM memories WHERE text LIKE '%zanzibar%' OR text LIKE '%quagmire%'",
        "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'zanzibar4711 OR quagmire0815'",
        "SELECT count(*) FROM history WHERE coalesce(before,'') || coalesce(after,'') "
        "LIKE '%zanzibar%' OR coalesce(before,'') || coalesce(after,'') LIKE '%quagmire%'",
        "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'teal'"};
    for (size_t i = 0; i < 4; i++) {
        sqlite3_stmt *st = NULL;
        CHECK_INT(sqlite3_prepare_v2(s, probes[i], -1, &st, NULL), SQLITE_OK);
        CHECK_INT(sqlite3_step(st), SQLITE_ROW);
        CHECK_INT(sqlite3_column_int(st, 0), i == 3 ? 1 : 0); /* the last: a live row */
        sqlite3_finalize(st);
    }
    sqlite3_close(s);
    tmp_done(&t);
}

static void test_history_sequence(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    CHECK_INT(add_text(db, "h", "x", "The meeting is on Monday", NULL, NULL), REMEM_OK);
    remem_patch p;
    remem_patch_init(&p);
    p.fields = REMEM_SET_TEXT | REMEM_SET_IMPORTANCE | REMEM_SET_METADATA;
    p.text = "The meeting is on Tuesday";
    p.importance = 0.8;
    p.metadata = "{\"source\":\"email\"}";
    p.actor = "alice";
    CHECK_INT(remem_update(db, "h", "x", &p), REMEM_OK);
    remem_patch_init(&p);
    p.fields = REMEM_SET_TIER;
    p.tier = "long";
    CHECK_INT(remem_update(db, "h", "x", &p), REMEM_OK);
    CHECK_INT(remem_invalidate(db, "h", "x", NULL, NULL), REMEM_OK);
    CHECK_INT(remem_forget(db, "h", "x", 0), REMEM_OK);
    p.tier = "short";
    CHECK_INT(remem_update(db, "h", "x", &p), REMEM_OK);
    CHECK_INT(remem_forget(db, "h", "x", 1), REMEM_OK);
    char ops[256];
    history_ops(db, "h", "x", ops, sizeof ops);
    CHECK_STR(ops, "add,update,migrate,invalidate,archive,restore,delete");
    char *js = NULL;
    CHECK_INT(remem_history(db, NULL, "x", &js), REMEM_OK);
    json_t *a = json_loads(js, 0, NULL);
    remem_free(js);
    long long last = 0;
    size_t i;
    json_t *o;
    json_array_foreach(a, i, o) {
        long long seq = json_integer_value(json_object_get(o, "seq"));
        CHECK(seq > last);
        last = seq;
        CHECK_STR(json_string_value(json_object_get(o, "ns")), "h");
        CHECK(json_is_string(json_object_get(o, "at")));
    }
    json_t *upd = json_array_get(a, 1);
    CHECK_STR(json_string_value(json_object_get(upd, "actor")), "alice");
    CHECK_NEAR(json_number_value(json_object_get(json_object_get(upd, "before"), "importance")),
               0.5, 1e-9);
    CHECK_NEAR(json_number_value(json_object_get(json_object_get(upd, "after"), "importance")), 0.8,
               1e-9);
    CHECK_STR(json_string_value(json_object_get(
                  json_object_get(json_object_get(upd, "after"), "metadata"), "source")),
              "email");
    CHECK(json_is_null(json_object_get(json_array_get(a, 6), "after")));
    json_decref(a);
    CHECK_INT(remem_history(db, "h", "never", &js), REMEM_ENOTFOUND);
    remem_close(db);
}

static void test_stats_namespaces_clear(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    CHECK_INT(add_text(db, "a", "a1", "first of a", NULL, NULL), REMEM_OK);
    CHECK_INT(add_text(db, "a", "a2", "second of a", NULL, NULL), REMEM_OK);
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "a";
    m.id = "a3";
    m.text = "a decision of a";
    m.kind = "decision";
    m.tier = "long";
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    CHECK_INT(add_text(db, "b", "b1", "first of b", NULL, NULL), REMEM_OK);
    CHECK_INT(add_text(db, "b", "b2", "second of b", NULL, NULL), REMEM_OK);
    CHECK_INT(remem_invalidate(db, "b", "b2", NULL, NULL), REMEM_OK);
    char *js = NULL;
    CHECK_INT(remem_stats(db, NULL, &js), REMEM_OK);
    json_t *o = json_loads(js, 0, NULL);
    remem_free(js);
    CHECK_INT(json_integer_value(json_object_get(o, "memories")), 5);
    CHECK_INT(json_integer_value(json_object_get(o, "invalidated")), 1);
    json_t *per = json_object_get(o, "by_namespace");
    CHECK_INT(json_integer_value(json_object_get(per, "a")), 3);
    CHECK_INT(json_integer_value(json_object_get(per, "b")), 2);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(o, "by_kind"), "observation")), 4);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(o, "by_kind"), "decision")), 1);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(o, "by_tier"), "short")), 4);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(o, "by_tier"), "long")), 1);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(o, "by_model"), "hash-v1-384")),
              5);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(o, "embedder"), "dim")), 384);
    json_decref(o);
    CHECK_INT(remem_stats(db, "a", &js), REMEM_OK);
    o = json_loads(js, 0, NULL);
    remem_free(js);
    CHECK_INT(json_integer_value(json_object_get(o, "memories")), 3);
    CHECK_INT(json_integer_value(json_object_get(o, "invalidated")), 0);
    json_decref(o);
    CHECK_INT(remem_namespaces(db, &js), REMEM_OK);
    o = json_loads(js, 0, NULL);
    remem_free(js);
    CHECK_INT(json_array_size(o), 2);
    json_t *first = json_array_get(o, 0);
    CHECK_STR(json_string_value(json_object_get(first, "ns")), "a");
    CHECK_INT(json_integer_value(json_object_get(first, "count")), 3);
    CHECK_STR(json_string_value(json_object_get(first, "model")), "hash-v1-384");
    CHECK_INT(json_integer_value(json_object_get(first, "dim")), 384);
    json_decref(o);

    /* clear: every memory of a, and only of a. */
    CHECK_INT(recall_finds(db, "a", "first", "a1", 0, 0, NULL), 1);
    int64_t deleted = -1;
    CHECK_INT(remem_clear(db, "a", &deleted), REMEM_OK);
    CHECK_INT(deleted, 3);
    CHECK_INT(ns_count(db, "a"), 0);
    CHECK_INT(ns_count(db, "b"), 2);
    CHECK_INT(recall_finds(db, "a", "first", "a1", 0, 0, NULL), 0);
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "a", "a1", &r), REMEM_ENOTFOUND);
    CHECK_INT(remem_history(db, "a", "*", &js), REMEM_OK);
    CHECK_HAS(js, "\"op\":\"clear\"");
    CHECK_HAS(js, "\"deleted\":3");
    remem_free(js);
    CHECK_INT(remem_namespaces(db, &js), REMEM_OK);
    CHECK(js && !strstr(js, "\"a\""));
    remem_free(js);
    /* The namespace takes memories again. */
    CHECK_INT(add_text(db, "a", "a1", "first of a again", NULL, NULL), REMEM_OK);
    CHECK_INT(recall_finds(db, "a", "first", "a1", 0, 0, NULL), 1);
    CHECK_INT(remem_clear(db, "", NULL), REMEM_EINVAL);
    remem_close(db);
}

/* ---- export, import, reindex ---- */

typedef struct buf {
    char *data;
    size_t len, cap;
} buf;

static int buf_write(void *ctx, const char *data, size_t len) {
    buf *b = ctx;
    if (b->len + len + 1 > b->cap) {
        size_t cap = (b->cap + len + 1) * 2;
        char *d = realloc(b->data, cap);
        if (!d) return 1;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

static int stop_write(void *ctx, const char *data, size_t len) {
    (void)ctx, (void)data, (void)len;
    return 1;
}

/* Fields an import does not carry over (it is an add). */
static void drop_unported(json_t *o) {
    const char *keys[] = {"updated_at",     "accessed_at",   "access_count",
                          "invalidated_at", "superseded_by", "duplicate_count"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) json_object_del(o, keys[i]);
}

static void test_export_import(void) {
    remem *a = open_store(":memory:");
    remem *b = open_store(":memory:");
    if (!a || !b) return;
    int dim = remem_embedder_dim(a);
    float *v = calloc((size_t)dim, sizeof *v);
    axis_vec(v, dim, 0.3);
    const char *texts[] = {"Maria prefers tea over coffee", "The deploy failed on step 3",
                           "Lesson: run the migrations before the deploy",
                           "Unicode: caf\xc3\xa9 \xe2\x98\x95 \"quoted\" \\ back"};
    for (int i = 0; i < 4; i++) {
        remem_memory m;
        remem_memory_init(&m);
        char id[16];
        snprintf(id, sizeof id, "e%d", i);
        m.ns = i < 3 ? "ns:one" : "ns:two";
        m.id = id;
        m.text = texts[i];
        m.kind = i == 2 ? "lesson" : NULL;
        m.tier = i == 1 ? "long" : NULL;
        m.importance = i == 0 ? 0.125 : -1;
        m.created_at = T0 - i * HOUR_MS;
        m.expires_at = i == 1 ? T0 + 48 * HOUR_MS : 0;
        m.metadata = i == 0 ? "{\"reward\":0.5,\"nested\":{\"k\":[1,2]}}" : NULL;
        m.links = i == 2 ? "[\"e1\"]" : NULL;
        if (i == 3) {
            m.vector = v;
            m.dim = dim;
        }
        CHECK_INT(remem_add(a, &m, NULL, 0, NULL), REMEM_OK);
    }
    buf out = {0};
    int64_t count = 0;
    CHECK_INT(remem_export(a, NULL, 1, buf_write, &out, &count), REMEM_OK);
    CHECK_INT(count, 4);
    /* Import it line by line into the empty store, as one batch. */
    remem_memory ms[8];
    remem_line *holders[8] = {0};
    size_t n = 0;
    for (char *line = out.data; line && *line && n < 8;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        remem_memory_init(&ms[n]);
        CHECK_INT(remem_parse_line(b, line, len, NULL, &ms[n], &holders[n]), REMEM_OK);
        n++;
        line = nl ? nl + 1 : NULL;
    }
    CHECK_INT(n, 4);
    long bad = 7;
    CHECK_INT(remem_add_batch(b, ms, n, NULL, 0, &bad), REMEM_OK);
    CHECK_INT(bad, -1);
    for (size_t i = 0; i < n; i++) remem_free_line(holders[i]);
    buf back = {0};
    CHECK_INT(remem_export(b, NULL, 1, buf_write, &back, &count), REMEM_OK);
    CHECK_INT(count, 4);
    /* Line by line the same memory: every field the format carries, the
     * vector to float precision. */
    char *la = out.data, *lb = back.data;
    for (int i = 0; i < 4 && la && lb; i++) {
        char *na = strchr(la, '\n'), *nb = strchr(lb, '\n');
        json_t *ja = json_loadb(la, na ? (size_t)(na - la) : strlen(la), 0, NULL);
        json_t *jb = json_loadb(lb, nb ? (size_t)(nb - lb) : strlen(lb), 0, NULL);
        CHECK(ja && jb);
        json_t *va = json_object_get(ja, "vector"), *vb = json_object_get(jb, "vector");
        CHECK_INT(json_array_size(va), dim);
        CHECK_INT(json_array_size(vb), dim);
        double maxdiff = 0;
        for (size_t j = 0; j < json_array_size(va) && j < json_array_size(vb); j++) {
            double d = fabs(json_number_value(json_array_get(va, j)) -
                            json_number_value(json_array_get(vb, j)));
            if (d > maxdiff) maxdiff = d;
        }
        CHECK(maxdiff < 1e-6);
        json_object_del(ja, "vector");
        json_object_del(jb, "vector");
        drop_unported(ja);
        drop_unported(jb);
        if (!json_equal(ja, jb)) {
            char *sa = json_dumps(ja, JSON_COMPACT), *sb = json_dumps(jb, JSON_COMPACT);
            fprintf(stderr, "  line %d differs:\n    %s\n    %s\n", i + 1, sa, sb);
            free(sa);
            free(sb);
            CHECK(0);
        }
        json_decref(ja);
        json_decref(jb);
        la = na ? na + 1 : NULL;
        lb = nb ? nb + 1 : NULL;
    }
    /* One namespace only, and without vectors. */
    buf one = {0};
    CHECK_INT(remem_export(b, "ns:two", 0, buf_write, &one, &count), REMEM_OK);
    CHECK_INT(count, 1);
    CHECK(one.data && !strstr(one.data, "\"vector\"") && strstr(one.data, "\"e3\""));
    /* A writer that stops: REMEM_EIO. */
    CHECK_INT(remem_export(b, NULL, 0, stop_write, NULL, &count), REMEM_EIO);
    free(out.data);
    free(back.data);
    free(one.data);
    free(v);
    remem_close(a);
    remem_close(b);
}

static void test_parse_line_errors(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    struct {
        const char *line, *word;
    } cases[] = {
        {"not json", "JSON"},
        {"[1,2]", "object"},
        {"{\"ns\":\"a\"}", "text"},
        {"{\"text\":\"\"}", "text"},
        {"{\"text\":\"x\"}", "ns"}, /* no default namespace given */
        {"{\"text\":\"x\",\"ns\":\"a\",\"importance\":2}", "importance"},
        {"{\"text\":\"x\",\"ns\":\"a\",\"created_at\":\"yesterday\"}", "created_at"},
        {"{\"text\":\"x\",\"ns\":\"a\",\"metadata\":[1]}", "metadata"},
        {"{\"text\":\"x\",\"ns\":\"a\",\"links\":[1]}", "links"},
        {"{\"text\":\"x\",\"ns\":\"a\",\"vector\":[]}", "vector"},
        {"{\"text\":\"x\",\"ns\":\"a\",\"vector\":[1,\"a\"]}", "vector"},
        {"{\"text\":5,\"ns\":\"a\"}", "text"},
        /* Lines that parse but that remem_add would refuse. */
        {"{\"text\":\"x\",\"ns\":\"a\",\"tier\":\"medium\"}", "medium"},
        {"{\"text\":\"x\",\"ns\":\"a\",\"id\":\"\"}", "id"},
        {"{\"text\":\"x\",\"ns\":\"a\",\"kind\":\"\"}", "kind"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        remem_memory m;
        remem_memory_init(&m);
        remem_line *h = (remem_line *)1;
        int rc = remem_parse_line(db, cases[i].line, strlen(cases[i].line), NULL, &m, &h);
        CHECK(rc == REMEM_EPARSE || rc == REMEM_EINVAL);
        CHECK(h == NULL);
        CHECK_HAS(remem_errmsg(db), cases[i].word);
    }
    /* A good line with every field. */
    const char *good =
        "{\"id\":\"g\",\"ns\":\"x\",\"kind\":\"plan\",\"tier\":\"long\","
        "\"text\":\"go\",\"importance\":0.25,\"created_at\":\"2023-05-08T13:56:00Z\","
        "\"expires_at\":1700000000000,\"metadata\":{\"a\":1},"
        "\"links\":[\"p\"],\"vector\":[3,4]}";
    remem_memory m;
    remem_memory_init(&m);
    remem_line *h = NULL;
    CHECK_INT(remem_parse_line(db, good, strlen(good), "dflt", &m, &h), REMEM_OK);
    CHECK_STR(m.ns, "x");
    CHECK_STR(m.id, "g");
    CHECK_STR(m.kind, "plan");
    CHECK_STR(m.tier, "long");
    CHECK_NEAR(m.importance, 0.25, 0);
    CHECK_INT(m.created_at, 1683554160000LL);
    CHECK_INT(m.expires_at, 1700000000000LL);
    CHECK_STR(m.metadata, "{\"a\":1}");
    CHECK_STR(m.links, "[\"p\"]");
    CHECK_INT(m.dim, 2);
    CHECK(m.vector && m.vector[0] == 3 && m.vector[1] == 4);
    remem_free_line(h);
    CHECK_INT(remem_parse_line(db, "{\"text\":\"t\"}", 12, "dflt", &m, &h), REMEM_OK);
    CHECK_STR(m.ns, "dflt");
    CHECK(m.importance < 0); /* the kind's default */
    remem_free_line(h);
    remem_close(db);
}

typedef struct progress_seen {
    int64_t calls, done, total;
} progress_seen;

static void on_progress(void *ctx, int64_t done, int64_t total) {
    progress_seen *p = ctx;
    p->calls++;
    p->done = done;
    p->total = total;
}

/* Cosine of memory id's stored vector to the embedding of text. */
static double sim_to_text(remem *db, const char *ns, const char *id, const char *text) {
    int dim = remem_embedder_dim(db);
    float *qv = malloc((size_t)dim * sizeof *qv);
    double sim = NAN;
    if (remem_embed(db, &text, 1, qv) == REMEM_OK) {
        remem_query q;
        remem_query_init(&q);
        const char *nss[1] = {ns};
        q.namespaces = nss;
        q.n_namespaces = 1;
        q.vector = qv;
        q.dim = dim;
        q.k = 100;
        q.no_touch = 1;
        q.include_invalid = 1;
        remem_result *r = NULL;
        if (remem_recall(db, &q, &r) == REMEM_OK)
            for (size_t i = 0; i < r->n; i++)
                if (strcmp(r->hits[i].mem.id, id) == 0) sim = r->hits[i].similarity;
        remem_result_free(r);
    }
    free(qv);
    return sim;
}

static void test_reindex(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    int dim = remem_embedder_dim(db);
    float *v = calloc((size_t)dim, sizeof *v);
    const char *texts[] = {"The cat sat on the warm windowsill",
                           "Quarterly revenue grew by twelve percent",
                           "Remember to water the tomato plants"};
    for (int i = 0; i < 3; i++) {
        remem_memory m;
        remem_memory_init(&m);
        char id[8];
        snprintf(id, sizeof id, "r%d", i);
        axis_vec(v, dim, 0.1 * i); /* not the text's embedding */
        m.ns = i < 2 ? "r" : "r2";
        m.id = id;
        m.text = texts[i];
        m.vector = v;
        m.dim = dim;
        CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    }
    /* Before: the stored vectors are the hand-made ones. */
    double before = sim_to_text(db, "r", "r0", texts[0]);
    CHECK(before < 0.9);
    progress_seen p = {0};
    CHECK_INT(remem_reindex(db, "r", on_progress, &p), REMEM_OK);
    CHECK(p.calls >= 1);
    CHECK_INT(p.done, 2);
    CHECK_INT(p.total, 2);
    CHECK_NEAR(sim_to_text(db, "r", "r0", texts[0]), 1.0, 1e-5);
    CHECK_NEAR(sim_to_text(db, "r", "r1", texts[1]), 1.0, 1e-5);
    /* The other namespace was left alone... */
    CHECK(sim_to_text(db, "r2", "r2", texts[2]) < 0.9);
    /* ...until a reindex of everything. */
    CHECK_INT(remem_reindex(db, NULL, NULL, NULL), REMEM_OK);
    CHECK_NEAR(sim_to_text(db, "r2", "r2", texts[2]), 1.0, 1e-5);
    char *js = NULL;
    CHECK_INT(remem_history(db, "r", "*", &js), REMEM_OK);
    CHECK_HAS(js, "\"op\":\"reindex\"");
    remem_free(js);
    CHECK_INT(ns_count(db, "r"), 2);
    free(v);
    remem_close(db);
}

/* ---- errors that change nothing ---- */

static void test_wrong_dimension(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    CHECK_INT(add_text(db, "w", "w1", "a first memory", NULL, NULL), REMEM_OK);
    float v3[3] = {1, 2, 3};
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "w";
    m.id = "w2";
    m.text = "a memory with a short vector";
    m.vector = v3;
    m.dim = 3;
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_EDIM);
    CHECK_HAS(remem_errmsg(db), "3 dimensions");
    CHECK_HAS(remem_errmsg(db), "384");
    CHECK_INT(ns_count(db, "w"), 1);
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "w", "w2", &r), REMEM_ENOTFOUND);
    /* Also as an upsert of an existing id: the old row stays as it was. */
    m.id = "w1";
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_EDIM);
    CHECK_INT(remem_get(db, "w", "w1", &r), REMEM_OK);
    if (r) CHECK_STR(remem_record_memory(r)->text, "a first memory");
    remem_record_free(r);
    char ops[64];
    history_ops(db, "w", "w1", ops, sizeof ops);
    CHECK_STR(ops, "add");
    /* And a query vector of the wrong size. */
    remem_query q;
    remem_query_init(&q);
    const char *nss[1] = {"w"};
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.vector = v3;
    q.dim = 3;
    remem_result *res = (remem_result *)1;
    CHECK_INT(remem_recall(db, &q, &res), REMEM_EDIM);
    CHECK(res == NULL);
    CHECK_HAS(remem_errmsg(db), "3 dimensions");
    remem_close(db);
}

static void test_bad_filter_and_profile(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    CHECK_INT(add_text(db, "q", "q1", "the filter test memory", NULL, NULL), REMEM_OK);
    remem_query q;
    remem_query_init(&q);
    const char *nss[1] = {"q"};
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.text = "filter";
    q.no_touch = 1;
    remem_result *r = NULL;
    q.filter = "{\"kind\": ";
    CHECK_INT(remem_recall(db, &q, &r), REMEM_EFILTER);
    CHECK(r == NULL);
    CHECK_HAS(remem_errmsg(db), "JSON");
    q.filter = "{\"reward\": {\"$regexx\": 1}}";
    CHECK_INT(remem_recall(db, &q, &r), REMEM_EFILTER);
    CHECK_HAS(remem_errmsg(db), "$regexx");
    q.filter = "{\"$and\": {\"kind\": \"x\"}}";
    CHECK_INT(remem_recall(db, &q, &r), REMEM_EFILTER);
    CHECK_HAS(remem_errmsg(db), "$and");
    q.filter = NULL;
    q.profile = "generative_agents";
    CHECK_INT(remem_recall(db, &q, &r), REMEM_EPROFILE);
    CHECK(r == NULL);
    CHECK_HAS(remem_errmsg(db), "generative_agents");
    CHECK_HAS(remem_errmsg(db), "generative-agents"); /* the known ones are listed */
    CHECK(remem_profile_json("generative_agents") == NULL);
    /* Bad tiers and k. */
    q.profile = NULL;
    q.tiers = "short,medium";
    CHECK_INT(remem_recall(db, &q, &r), REMEM_EINVAL);
    CHECK_HAS(remem_errmsg(db), "medium");
    q.tiers = NULL;
    q.k = 100000;
    CHECK_INT(remem_recall(db, &q, &r), REMEM_EINVAL);
    q.k = 0;
    q.n_namespaces = 0;
    CHECK_INT(remem_recall(db, &q, &r), REMEM_EINVAL);
    q.n_namespaces = 1;
    /* Each error left nothing behind: the store still recalls normally,
     * and the failed recalls touched nothing. */
    CHECK_INT(get_field_i(db, "q", "q1", 1), 0);
    CHECK_INT(recall_finds(db, "q", "filter", "q1", 0, 0, NULL), 1);
    /* Every profile name has a definition. */
    for (const char *const *p = remem_profiles(); *p; p++) {
        char *js = remem_profile_json(*p);
        CHECK(js != NULL);
        remem_free(js);
    }
    CHECK_STR(remem_status_name(REMEM_EFILTER), "REMEM_EFILTER");
    CHECK_STR(remem_strerror(REMEM_EPROFILE), "unknown profile");
    remem_close(db);
}

static void test_batch_all_or_nothing(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    CHECK_INT(add_text(db, "b", "b0", "already here", NULL, NULL), REMEM_OK);
    remem_memory ms[5];
    char texts[5][32];
    for (int i = 0; i < 5; i++) {
        remem_memory_init(&ms[i]);
        snprintf(texts[i], sizeof texts[i], "batch memory %d", i);
        ms[i].ns = "b";
        ms[i].text = texts[i];
    }
    ms[2].importance = 1.5;
    long bad = -7;
    char ids[5][64];
    CHECK_INT(remem_add_batch(db, ms, 5, &ids[0][0], 64, &bad), REMEM_EINVAL);
    CHECK_INT(bad, 2);
    CHECK_HAS(remem_errmsg(db), "memory 2");
    CHECK_HAS(remem_errmsg(db), "importance");
    CHECK_INT(ns_count(db, "b"), 1);
    ms[2].importance = -1;
    float v3[3] = {1, 0, 0};
    ms[4].vector = v3;
    ms[4].dim = 3;
    CHECK_INT(remem_add_batch(db, ms, 5, &ids[0][0], 64, &bad), REMEM_EDIM);
    CHECK_INT(bad, 4);
    CHECK_INT(ns_count(db, "b"), 1);
    ms[4].vector = NULL;
    ms[4].dim = 0;
    ms[1].ns = "";
    CHECK_INT(remem_add_batch(db, ms, 5, NULL, 0, &bad), REMEM_EINVAL);
    CHECK_INT(bad, 1);
    CHECK_INT(ns_count(db, "b"), 1);
    ms[1].ns = "b";
    /* Now a good one: all five, ids filled, in one go. */
    CHECK_INT(remem_add_batch(db, ms, 5, &ids[0][0], 64, &bad), REMEM_OK);
    CHECK_INT(bad, -1);
    CHECK_INT(ns_count(db, "b"), 6);
    for (int i = 0; i < 5; i++) {
        remem_record *r = NULL;
        CHECK_INT(remem_get(db, "b", ids[i], &r), REMEM_OK);
        if (r) CHECK_STR(remem_record_memory(r)->text, texts[i]);
        remem_record_free(r);
        if (i) CHECK(strcmp(ids[i - 1], ids[i]) < 0);
    }
    remem_close(db);
}

/* Model lock: a namespace of hash vectors refuses a handle of another model
 * (the http embedder against the stand-in server), inside a batch too, until
 * a reindex moves it. */
static void test_model_mismatch(void) {
    tmpdir t;
    tmp_make(&t);
    remem *h = open_store(t.db);
    if (!h) return;
    CHECK_INT(add_text(h, "x", "x1", "a memory embedded by the hash model", NULL, NULL), REMEM_OK);
    CHECK_INT(add_text(h, "x", "x2", "another one of the hash model", NULL, NULL), REMEM_OK);
    remem_close(h);
    embed_server *s = embed_server_start(384);
    CHECK(s != NULL);
    if (!s) {
        tmp_done(&t);
        return;
    }
    remem_options o;
    remem_options_init(&o);
    o.embedder = "http";
    o.embed_url = embed_server_url(s);
    o.embed_model = "stand-in";
    o.embed_timeout_ms = 5000;
    remem *w = NULL;
    int rc = remem_open(t.db, &o, &w);
    CHECK_INT(rc, REMEM_OK);
    if (rc) {
        fprintf(stderr, "  %s\n", remem_errmsg(w));
        remem_close(w);
        embed_server_stop(s);
        tmp_done(&t);
        return;
    }
    CHECK_STR(remem_embedder_model(w), "http:stand-in");
    CHECK_INT(remem_embedder_dim(w), 384);
    /* Writing into x: refused, nothing changes. */
    CHECK_INT(add_text(w, "x", "x3", "a memory of the other model", NULL, NULL), REMEM_EMODEL);
    CHECK_HAS(remem_errmsg(w), "hash-v1-384");
    CHECK_HAS(remem_errmsg(w), "http:stand-in");
    CHECK_HAS(remem_errmsg(w), "reindex");
    CHECK_INT(ns_count(w, "x"), 2);
    /* Nor can a text update re-embed one of its memories. */
    remem_patch p;
    remem_patch_init(&p);
    p.fields = REMEM_SET_TEXT;
    p.text = "changed";
    CHECK_INT(remem_update(w, "x", "x1", &p), REMEM_EMODEL);
    remem_record *r = NULL;
    CHECK_INT(remem_get(w, "x", "x1", &r), REMEM_OK);
    if (r) CHECK_STR(remem_record_memory(r)->text, "a memory embedded by the hash model");
    remem_record_free(r);
    /* Reading x with this model's vectors: refused too. */
    remem_query q;
    remem_query_init(&q);
    const char *nss[1] = {"x"};
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.text = "memory";
    remem_result *res = NULL;
    CHECK_INT(remem_recall(w, &q, &res), REMEM_EMODEL);
    CHECK_HAS(remem_errmsg(w), "reindex");
    /* A batch whose 4th memory goes to x: nothing of it is written, although
     * the first three had been inserted when the 4th failed. */
    remem_memory ms[5];
    char texts[5][32];
    for (int i = 0; i < 5; i++) {
        remem_memory_init(&ms[i]);
        snprintf(texts[i], sizeof texts[i], "batch line %d", i);
        ms[i].ns = i == 3 ? "x" : "y";
        ms[i].text = texts[i];
    }
    long bad = -1;
    CHECK_INT(remem_add_batch(w, ms, 5, NULL, 0, &bad), REMEM_EMODEL);
    CHECK_INT(bad, 3);
    CHECK_INT(ns_count(w, "y"), 0);
    CHECK_INT(ns_count(w, "x"), 2);
    /* Without the 4th it goes in, under the http model. */
    ms[3].ns = "y";
    CHECK_INT(remem_add_batch(w, ms, 5, NULL, 0, &bad), REMEM_OK);
    CHECK_INT(ns_count(w, "y"), 5);
    /* reindex is the way out. */
    CHECK_INT(remem_reindex(w, "x", NULL, NULL), REMEM_OK);
    res = NULL;
    CHECK_INT(remem_recall(w, &q, &res), REMEM_OK);
    CHECK(res && res->n == 2);
    remem_result_free(res);
    CHECK_INT(add_text(w, "x", "x3", "a memory of the other model", NULL, NULL), REMEM_OK);
    remem_close(w);
    /* Now the hash handle is the one refused. */
    h = open_store(t.db);
    if (h) {
        res = NULL;
        CHECK_INT(remem_recall(h, &q, &res), REMEM_EMODEL);
        CHECK_HAS(remem_errmsg(h), "http:stand-in");
        remem_close(h);
    }
    embed_server_stop(s);
    tmp_done(&t);
}

/* ---- two handles, two processes ---- */

static void test_two_handles(void) {
    tmpdir t;
    tmp_make(&t);
    remem *a = open_store(t.db), *b = open_store(t.db);
    CHECK(a && b);
    if (!a || !b) {
        remem_close(a);
        remem_close(b);
        tmp_done(&t);
        return;
    }
    CHECK_INT(add_text(a, "s", "s1", "shared memory about the harbour", NULL, NULL), REMEM_OK);
    /* b loads its cache now; a's later writes must reach it. */
    CHECK_INT(recall_finds(b, "s", "harbour", "s1", 0, 0, NULL), 1);
    CHECK_INT(add_text(a, "s", "s2", "the harbour master is called Ole", NULL, NULL), REMEM_OK);
    CHECK_INT(recall_finds(b, "s", "harbour master", "s2", 0, 0, NULL), 1);
    remem_record *r = NULL;
    CHECK_INT(remem_get(b, "s", "s2", &r), REMEM_OK);
    remem_record_free(r);
    remem_patch p;
    remem_patch_init(&p);
    p.fields = REMEM_SET_TEXT;
    p.text = "the lighthouse keeper is called Ole";
    CHECK_INT(remem_update(a, "s", "s2", &p), REMEM_OK);
    CHECK_INT(recall_finds(b, "s", "lighthouse keeper", "s2", 0, 0, NULL), 1);
    CHECK_INT(remem_get(b, "s", "s2", &r), REMEM_OK);
    if (r) CHECK_STR(remem_record_memory(r)->text, "the lighthouse keeper is called Ole");
    remem_record_free(r);
    CHECK_INT(remem_invalidate(a, "s", "s1", NULL, NULL), REMEM_OK);
    CHECK_INT(recall_finds(b, "s", "harbour", "s1", 0, 0, NULL), 0);
    /* And the other way round, b writing, a reading its loaded cache. */
    CHECK_INT(recall_finds(a, "s", "lighthouse", "s2", 0, 0, NULL), 1);
    CHECK_INT(remem_forget(b, "s", "s2", 1), REMEM_OK);
    CHECK_INT(recall_finds(a, "s", "lighthouse", "s2", 0, 0, NULL), 0);
    CHECK_INT(remem_get(a, "s", "s2", &r), REMEM_ENOTFOUND);
    /* A recall by b that touches does not confuse a's cache. */
    CHECK_INT(add_text(b, "s", "s3", "the ferry leaves at noon", NULL, NULL), REMEM_OK);
    remem_query q;
    remem_query_init(&q);
    const char *nss[1] = {"s"};
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.text = "ferry noon";
    q.now = T0;
    remem_result *res = NULL;
    CHECK_INT(remem_recall(b, &q, &res), REMEM_OK);
    remem_result_free(res);
    CHECK_INT(get_field_i(a, "s", "s3", 1), 1);
    CHECK_INT(get_field_i(a, "s", "s3", 2), T0);
    CHECK_INT(recall_finds(a, "s", "ferry", "s3", 0, 0, NULL), 1);
    remem_close(a);
    remem_close(b);
    tmp_done(&t);
}

static void test_two_processes(void) {
    tmpdir t;
    tmp_make(&t);
    remem *a = open_store(t.db);
    if (!a) return;
    CHECK_INT(add_text(a, "p", "p0", "parent wrote this first", NULL, NULL), REMEM_OK);
    CHECK_INT(recall_finds(a, "p", "parent", "p0", 0, 0, NULL), 1); /* cache loaded */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        /* The child opens its own handle (never the parent's connection). */
        remem *c = open_store(t.db);
        int ok = c != NULL;
        for (int i = 0; ok && i < 20; i++) {
            char id[16], text[64];
            snprintf(id, sizeof id, "c%d", i);
            snprintf(text, sizeof text, "child memory %d about the orchard", i);
            ok = add_text(c, "p", id, text, NULL, NULL) == REMEM_OK;
        }
        ok = ok && remem_invalidate(c, "p", "p0", "c0", NULL) == REMEM_OK;
        remem_close(c);
        _exit(ok ? 0 : 1);
    }
    CHECK(pid > 0);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_INT(ns_count(a, "p"), 21);
    CHECK_INT(recall_finds(a, "p", "orchard", "c7", 0, 0, NULL), 1);
    CHECK_INT(recall_finds(a, "p", "parent wrote", "p0", 0, 0, NULL), 0);
    remem_record *r = NULL;
    CHECK_INT(remem_get(a, "p", "c19", &r), REMEM_OK);
    remem_record_free(r);
    remem_close(a);
    tmp_done(&t);
}

/* ---- the profiles, by hand ---- */

/* The default profile is remem's own and tuned on a benchmark, so its
 * weights are read from its published definition (remem_profile_json); the
 * formula they enter is written out here:
 *   base  = wr·max(0,cos) + wl·bm25/max bm25 + wrec·0.5^(h/half_life) + wi·imp
 *   score = base + wc·context, context = the better base score of the
 *           memory's stream neighbours (the rows written just before and
 *           after it in its namespace) among the candidates, or 0. */
typedef struct default_def {
    double wr, wl, wrec, wi, wc, half_life;
} default_def;

static default_def default_profile(void) {
    default_def d = {NAN, NAN, NAN, NAN, NAN, NAN};
    char *js = remem_profile_json("default");
    json_t *o = js ? json_loads(js, 0, NULL) : NULL;
    remem_free(js);
    json_t *w = json_object_get(o, "weights");
    d.wr = json_number_value(json_object_get(w, "relevance"));
    d.wl = json_number_value(json_object_get(w, "lexical"));
    d.wrec = json_number_value(json_object_get(w, "recency"));
    d.wi = json_number_value(json_object_get(w, "importance"));
    d.wc = json_is_number(json_object_get(w, "context"))
               ? json_number_value(json_object_get(w, "context"))
               : 0;
    d.half_life = json_number_value(json_object_get(o, "half_life_hours"));
    CHECK_STR(json_string_value(json_object_get(o, "relevance")), "max(0,cosine)");
    CHECK_HAS(json_string_value(json_object_get(o, "recency")), "half_life");
    CHECK(json_is_false(json_object_get(o, "normalize")));
    CHECK(json_is_true(json_object_get(o, "lexical_lane")));
    CHECK(d.wr > 0 && d.wl > 0 && d.half_life > 0);
    json_decref(o);
    return d;
}

/* Add the context term to n expectations whose .score holds the base
 * score, given in the order they were written (so i-1 and i+1 are the
 * stream neighbours). */
static void add_context(expect *e, double *ctx, size_t n, double wc) {
    double base[16];
    for (size_t i = 0; i < n; i++) base[i] = e[i].score;
    for (size_t i = 0; i < n; i++) {
        double b = 0;
        if (i > 0 && base[i - 1] > b) b = base[i - 1];
        if (i + 1 < n && base[i + 1] > b) b = base[i + 1];
        ctx[i] = e[i].ctx = b;
        e[i].score = base[i] + wc * b;
    }
}

static void test_profile_default_vector(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    default_def d = default_profile();
    const spec s[] = {
        {"d1", 0.9, 2, 0.2, NULL, NULL, NULL},     {"d2", 0.85, 2000, 1.0, NULL, NULL, NULL},
        {"d3", 0.5, 0, 0.9, NULL, NULL, NULL},     {"d4", -0.4, 10, 0.7, NULL, NULL, NULL},
        {"d5", 0.05, 5000, 0.0, NULL, NULL, NULL},
    };
    size_t n = sizeof s / sizeof s[0];
    put_specs(db, "def", s, n);
    expect e[8];
    double ctx[8];
    for (size_t i = 0; i < n; i++) {
        double rel = cos01(s[i].cos), rec = half_life(d.half_life, s[i].hours);
        e[i] = ex(s[i].id, rel, rec, s[i].imp, d.wr * rel + d.wrec * rec + d.wi * s[i].imp, 0, 1);
    }
    add_context(e, ctx, n, d.wc);
    vquery v;
    vquery_init(&v, db, "def", NULL);
    remem_result *r = run(db, &v.q);
    check_hits(r, e, n, 10);
    if (r) {
        CHECK_STR(r->profile, "default");
        CHECK_INT(r->now, T0);
        CHECK_INT(r->candidates, n);
        for (size_t i = 0; i < r->n; i++) {
            const remem_hit *h = &r->hits[i];
            size_t j = (size_t)(h->mem.id[1] - '1');
            CHECK_INT(h->lanes, 1); /* no text: no lexical lane */
            CHECK_NEAR(h->bm25, 0, 0);
            CHECK_NEAR(h->similarity, s[j].cos, EPS); /* raw, next to the mapped one */
            CHECK_NEAR(h->context, ctx[j], EPS);
        }
    }
    remem_result_free(r);
    /* k = 2 */
    v.q.k = 2;
    r = run(db, &v.q);
    check_hits(r, e, n, 2);
    remem_result_free(r);
    /* The context weight overridden to 0: the plain weighted sum. */
    v.q.k = 0;
    v.q.w_context = 0;
    for (size_t i = 0; i < n; i++) {
        e[i].score -= d.wc * ctx[i];
        e[i].ctx = 0;
    }
    r = run(db, &v.q);
    check_hits(r, e, n, 10);
    remem_result_free(r);
    vquery_free(&v);
    remem_close(db);
}

/* FTS5's BM25 as SQLite documents it (k1 = 1.2, b = 0.75; idf clamped to
 * 1e-6 when not positive), for a query of distinct single-token terms. */
static double bm25_by_hand(const char *const *terms, size_t nt, const char *const *docs, size_t nd,
                           size_t doc) {
    double total_len = 0;
    for (size_t d = 0; d < nd; d++) {
        size_t len = 0;
        for (const char *p = docs[d]; *p;) {
            while (*p == ' ') p++;
            if (!*p) break;
            len++;
            while (*p && *p != ' ') p++;
        }
        total_len += (double)len;
    }
    double avgdl = total_len / (double)nd;
    double score = 0;
    for (size_t t = 0; t < nt; t++) {
        size_t tlen = strlen(terms[t]);
        size_t with = 0;
        double tf = 0, dl = 0;
        for (size_t d = 0; d < nd; d++) {
            size_t count = 0, len = 0;
            for (const char *p = docs[d]; *p;) {
                while (*p == ' ') p++;
                if (!*p) break;
                const char *w = p;
                while (*p && *p != ' ') p++;
                len++;
                if ((size_t)(p - w) == tlen && !strncmp(w, terms[t], tlen)) count++;
            }
            if (count) with++;
            if (d == doc) {
                tf = (double)count;
                dl = (double)len;
            }
        }
        double idf = log(((double)nd - (double)with + 0.5) / ((double)with + 0.5));
        if (idf <= 0) idf = 1e-6;
        score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / avgdl));
    }
    return score;
}

/* The default profile with text: the lexical lane (BM25 over FTS5, divided
 * by the best candidate's) next to hand-made vectors. Words are ones no
 * stemmer changes and none is a stopword, so the token counts are plain. */
static void test_profile_default_lexical(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    default_def d = default_profile();
    const char *docs[] = {"zebra zebra cobalt", "zebra lemon orbit pixel tree",
                          "cobalt violin",      "stone tree lemon",
                          "orbit pixel stone",  "violin tree stone orbit"};
    const double coss[] = {0.3, 0.8, 0.1, 0.6, 0.2, -0.5};
    const double hours[] = {1, 30, 700, 0, 2, 90};
    const double imps[] = {0.5, 0.1, 0.9, 0.3, 0.6, 0.2};
    size_t n = 6;
    int dim = remem_embedder_dim(db);
    float *v = malloc((size_t)dim * sizeof *v);
    char ids[6][8];
    for (size_t i = 0; i < n; i++) {
        remem_memory m;
        remem_memory_init(&m);
        snprintf(ids[i], sizeof ids[i], "x%zu", i);
        axis_vec(v, dim, coss[i]);
        m.ns = "lex";
        m.id = ids[i];
        m.text = docs[i];
        m.importance = imps[i];
        m.created_at = T0 - llround(hours[i] * HOUR_MS);
        m.vector = v;
        m.dim = dim;
        CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    }
    const char *terms[] = {"zebra", "cobalt"};
    double bm[6], max_bm = 0;
    for (size_t i = 0; i < n; i++) {
        bm[i] = bm25_by_hand(terms, 2, docs, n, i);
        if (bm[i] > max_bm) max_bm = bm[i];
    }
    expect e[6];
    double ctx[6];
    for (size_t i = 0; i < n; i++) {
        double rel = cos01(coss[i]), rec = half_life(d.half_life, hours[i]);
        double lex = bm[i] / max_bm;
        e[i] = ex(ids[i], rel, rec, imps[i],
                  d.wr * rel + d.wl * lex + d.wrec * rec + d.wi * imps[i], 0, 1);
    }
    add_context(e, ctx, n, d.wc);
    size_t order[6] = {0, 1, 2, 3, 4, 5};
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (e[order[j]].score > e[order[i]].score) {
                size_t t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
    vquery q;
    vquery_init(&q, db, "lex", "default");
    q.q.text = "Zebra cobalt";
    remem_result *r = run(db, &q.q);
    /* check_hits wants lexical 0; the lexical parts are compared here. */
    if (r) {
        CHECK_INT(r->n, n);
        for (size_t i = 0; i < r->n; i++) {
            const remem_hit *h = &r->hits[i];
            size_t j = (size_t)(h->mem.id[1] - '0');
            CHECK_STR(h->mem.id, ids[order[i]]);
            CHECK_NEAR(h->bm25, bm[j], 1e-6);
            CHECK_NEAR(h->lexical, bm[j] / max_bm, 1e-6);
            CHECK_NEAR(h->similarity, coss[j], 1e-6);
            CHECK_NEAR(h->relevance, e[j].rel, EPS);
            CHECK_NEAR(h->recency, e[j].rec, EPS);
            CHECK_NEAR(h->context, ctx[j], EPS);
            CHECK_NEAR(h->score, e[j].score, EPS);
            CHECK_INT(h->lanes, bm[j] > 0 ? 3 : 1);
        }
    }
    remem_result_free(r);
    /* Weights overridden: lexical alone ranks by BM25. */
    q.q.w_relevance = 0;
    q.q.w_recency = 0;
    q.q.w_importance = 0;
    q.q.w_context = 0;
    q.q.w_lexical = 1;
    r = run(db, &q.q);
    if (r && r->n >= 3) {
        CHECK_STR(r->hits[0].mem.id, "x0");
        CHECK_NEAR(r->hits[0].score, 1.0, EPS);
        CHECK_STR(r->hits[1].mem.id, bm[1] > bm[2] ? "x1" : "x2");
        CHECK_NEAR(r->hits[1].score, (bm[1] > bm[2] ? bm[1] : bm[2]) / max_bm, EPS);
        CHECK_NEAR(r->hits[3].score, 0, 0);
    }
    remem_result_free(r);
    /* A text no memory holds: the lexical lane finds nothing, every hit is
     * a vector candidate only. */
    q.q.text = "unrelated words entirely";
    r = run(db, &q.q);
    for (size_t i = 0; r && i < r->n; i++) {
        CHECK_INT(r->hits[i].lanes, 1);
        CHECK_NEAR(r->hits[i].lexical, 0, 0);
    }
    remem_result_free(r);
    free(v);
    vquery_free(&q);
    remem_close(db);
}

static void test_profile_generative_agents(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    const spec s[] = {
        {"g1", 0.9, 48, 0.2, NULL, NULL, NULL},  {"g2", 0.4, 1, 0.9, NULL, NULL, NULL},
        {"g3", 0.7, 10, 0.5, NULL, NULL, NULL},  {"g4", -0.2, 0, 0.6, NULL, NULL, NULL},
        {"g5", 0.2, 300, 1.0, NULL, NULL, NULL}, {"g6", 0.6, 100, 0.1, NULL, NULL, NULL},
    };
    size_t n = sizeof s / sizeof s[0];
    put_specs(db, "ga", s, n);
    /* Raw components, then min-max of each over the six candidates, then
     * weight 1 each. */
    double rel[6], rec[6], imp[6];
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = 0; i < n; i++) {
        rel[i] = cos01(s[i].cos);
        rec[i] = pow_decay(0.995, s[i].hours);
        imp[i] = s[i].imp;
        double c[3] = {rel[i], rec[i], imp[i]};
        for (int f = 0; f < 3; f++) {
            if (c[f] < lo[f]) lo[f] = c[f];
            if (c[f] > hi[f]) hi[f] = c[f];
        }
    }
    expect e[6];
    for (size_t i = 0; i < n; i++) {
        double score = (rel[i] - lo[0]) / (hi[0] - lo[0]) + (rec[i] - lo[1]) / (hi[1] - lo[1]) +
                       (imp[i] - lo[2]) / (hi[2] - lo[2]);
        e[i] = ex(s[i].id, rel[i], rec[i], imp[i], score, 0, 1);
    }
    vquery v;
    vquery_init(&v, db, "ga", "generative-agents");
    remem_result *r = run(db, &v.q);
    check_hits(r, e, n, 10);
    remem_result_free(r);
    /* Without normalisation (a per-query override): the raw sum. */
    v.q.normalize = 0;
    for (size_t i = 0; i < n; i++) e[i].score = rel[i] + rec[i] + imp[i];
    r = run(db, &v.q);
    check_hits(r, e, n, 10);
    remem_result_free(r);
    /* Recency counts from the last access: a touching recall at T0 + 20 h
     * resets it for the memories it returns. */
    v.q.normalize = -1;
    v.q.k = 2;
    v.q.now = T0 + 20 * HOUR_MS;
    v.q.no_touch = 0;
    r = run(db, &v.q);
    char touched[2][8] = {"", ""};
    for (size_t i = 0; r && i < r->n && i < 2; i++)
        snprintf(touched[i], sizeof touched[i], "%s", r->hits[i].mem.id);
    remem_result_free(r);
    CHECK_INT(get_field_i(db, "ga", touched[0], 1), 1);
    CHECK_INT(get_field_i(db, "ga", touched[0], 2), T0 + 20 * HOUR_MS);
    v.q.k = 10;
    v.q.now = T0 + 30 * HOUR_MS;
    v.q.no_touch = 1;
    r = run(db, &v.q);
    for (size_t i = 0; r && i < r->n; i++) {
        const remem_hit *h = &r->hits[i];
        size_t j = (size_t)(h->mem.id[1] - '1');
        int was_touched = !strcmp(h->mem.id, touched[0]) || !strcmp(h->mem.id, touched[1]);
        double hours = was_touched ? 10 : s[j].hours + 30;
        CHECK_NEAR(h->recency, pow_decay(0.995, hours), EPS);
    }
    remem_result_free(r);
    vquery_free(&v);
    remem_close(db);
}

static void test_profile_metaverse(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    const spec s[] = {
        {"static-low", 0.1, 500, 1.0, "static", "static", NULL},
        {"short-hi", 0.9, 5, 0.4, NULL, "short", NULL},
        {"short-mid", 0.5, 1, 0.8, NULL, "short", NULL},
        {"long-best", 0.99, 0, 1.0, NULL, "long", NULL},
        {"short-below", -1.0, 10000, 0.0, NULL, "short", NULL}, /* 1/3 < 0.35 */
        {"archived", 1.0, 0, 1.0, NULL, "archived", NULL},
    };
    size_t n = sizeof s / sizeof s[0];
    put_specs(db, "mv", s, n);
    expect e[6];
    for (size_t i = 0; i < n; i++) {
        double rel = inv_l2(s[i].cos), rec = pow_decay(0.995, s[i].hours);
        double score = rel + 0.25 * rec + 0.25 * s[i].imp;
        int rank = !strcmp(s[i].tier, "static") ? 0 : !strcmp(s[i].tier, "short") ? 1 : 2;
        int kept = strcmp(s[i].tier, "archived") != 0 && score >= 0.35;
        e[i] = ex(s[i].id, rel, rec, s[i].imp, score, rank, kept);
    }
    CHECK(e[4].score < 0.35 && e[4].score > 0.333);
    vquery v;
    vquery_init(&v, db, "mv", "metaverse");
    remem_result *r = run(db, &v.q);
    check_hits(r, e, n, 10);
    /* Static first although it scores least; long last although it scores
     * most. */
    if (r && r->n == 4) {
        CHECK_STR(r->hits[0].mem.id, "static-low");
        CHECK_STR(r->hits[3].mem.id, "long-best");
    }
    remem_result_free(r);
    /* min_score overridden to 0: the one below 0.35 comes back. */
    v.q.min_score = 0;
    e[4].kept = 1;
    r = run(db, &v.q);
    check_hits(r, e, n, 10);
    remem_result_free(r);
    /* Tiers overridden: long before static, short left out. */
    v.q.tiers = "long,static";
    for (size_t i = 0; i < n; i++) {
        e[i].rank = !strcmp(s[i].tier, "long") ? 0 : 1;
        e[i].kept = !strcmp(s[i].tier, "long") || !strcmp(s[i].tier, "static");
    }
    r = run(db, &v.q);
    check_hits(r, e, n, 10);
    remem_result_free(r);
    vquery_free(&v);
    remem_close(db);
}

static void test_profile_stream(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    const spec s[] = {
        {"s1", 0.9, 0, 0.1, NULL, NULL, NULL},    {"s2", 0.8, 168, 0.9, NULL, NULL, NULL},
        {"s3", 0.3, 1, 0.95, NULL, NULL, NULL},   {"s4", 0.6, 336, 0.5, NULL, NULL, NULL},
        {"s5", 0.1, 24, 0.2, NULL, NULL, NULL},   {"s6", -0.3, 2, 0.7, NULL, NULL, NULL},
        {"s7", 0.7, 1000, 0.4, NULL, NULL, NULL},
    };
    size_t n = sizeof s / sizeof s[0];
    put_specs(db, "st", s, n);
    expect e[7];
    for (size_t i = 0; i < n; i++) {
        double rel = cos01(s[i].cos), rec = half_life(168, s[i].hours);
        e[i] = ex(s[i].id, rel, rec, s[i].imp, 0.4 * rel + 0.3 * rec + 0.3 * s[i].imp, 0, 1);
    }
    CHECK_NEAR(e[1].rec, 0.5, 1e-12); /* one half-life old */
    vquery v;
    vquery_init(&v, db, "st", "stream");
    remem_result *r = run(db, &v.q);
    check_hits(r, e, n, 5); /* the profile's k */
    remem_result_free(r);
    /* Overrides: k, weights, half-life. */
    v.q.k = 7;
    v.q.w_recency = 0;
    v.q.w_importance = 0.5;
    v.q.half_life_hours = 24;
    for (size_t i = 0; i < n; i++) {
        e[i].rec = half_life(24, s[i].hours);
        e[i].score = 0.4 * e[i].rel + 0.5 * s[i].imp;
    }
    r = run(db, &v.q);
    check_hits(r, e, n, 7);
    remem_result_free(r);
    /* recency_base switches to base^hours. */
    v.q.half_life_hours = NAN;
    v.q.recency_base = 0.99;
    v.q.w_recency = 1;
    for (size_t i = 0; i < n; i++) {
        e[i].rec = pow_decay(0.99, s[i].hours);
        e[i].score = 0.4 * e[i].rel + e[i].rec + 0.5 * s[i].imp;
    }
    r = run(db, &v.q);
    check_hits(r, e, n, 7);
    remem_result_free(r);
    vquery_free(&v);
    remem_close(db);
}

static void test_profile_replay(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    /* Ten rewarded trajectories and three the reward filter must drop
     * although they are the most similar. */
    spec s[13];
    char ids[13][8], metas[13][48];
    const double coss[13] = {0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.72,
                             0.81, 0.88, 0.93, 0.99, 0.98, 0.97};
    for (int i = 0; i < 13; i++) {
        snprintf(ids[i], sizeof ids[i], "t%02d", i);
        if (i < 10)
            snprintf(metas[i], sizeof metas[i], "{\"reward\":%s}", i == 9 ? "0.05" : "0.8");
        else
            snprintf(metas[i], sizeof metas[i], "%s",
                     i == 10   ? "{\"reward\":0.049}"
                     : i == 11 ? "{\"reward\":-1}"
                               : "{}");
        s[i] = (spec){ids[i], coss[i], i, 0.5, "trajectory", NULL, metas[i]};
    }
    put_specs(db, "rp", s, 13);
    expect e[13];
    for (int i = 0; i < 13; i++) {
        double rel = cos01(coss[i]);
        e[i] = ex(ids[i], rel, pow_decay(0.995, s[i].hours), 0.5, rel, 0, i < 10);
    }
    vquery v;
    vquery_init(&v, db, "rp", "replay");
    remem_result *r = run(db, &v.q);
    check_hits(r, e, 13, 3);
    if (r) {
        CHECK_INT(r->candidates, 6);         /* 2k candidates, best k */
        CHECK_STR(r->hits[0].mem.id, "t09"); /* reward exactly 0.05 is in */
    }
    remem_result_free(r);
    v.q.k = 2;
    r = run(db, &v.q);
    check_hits(r, e, 13, 2);
    if (r) CHECK_INT(r->candidates, 4);
    remem_result_free(r);
    /* candidates overridden */
    v.q.k = 5;
    v.q.candidates = 8;
    r = run(db, &v.q);
    check_hits(r, e, 13, 5);
    if (r) CHECK_INT(r->candidates, 8);
    remem_result_free(r);
    /* The profile's filter is ANDed with the query's. */
    v.q.candidates = -1;
    v.q.filter = "{\"reward\":{\"$lt\":0.5}}";
    r = run(db, &v.q);
    if (r) {
        CHECK_INT(r->n, 1);
        if (r->n) CHECK_STR(r->hits[0].mem.id, "t09");
    }
    remem_result_free(r);
    vquery_free(&v);
    remem_close(db);
}

static void test_profile_episodes(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    const spec s[] = {
        {"obs-95", 0.95, 1, 0.5, "episode", NULL, "{\"project\":\"acme\",\"language\":\"c\"}"},
        {"fb-75", 0.75, 2, 0.5, "feedback", NULL, "{\"project\":\"acme\",\"language\":\"c\"}"},
        {"fb-65", 0.65, 3, 0.5, "feedback", NULL, "{\"project\":\"acme\",\"language\":\"c\"}"},
        {"obs-69", 0.69, 4, 0.5, "episode", NULL, "{\"project\":\"acme\",\"language\":\"go\"}"},
        {"obs-80", 0.80, 5, 0.5, "episode", NULL, "{\"project\":\"other\",\"language\":\"c\"}"},
        {"ep-71", 0.71, 6, 0.5, "episode", NULL, "{\"project\":\"acme\",\"language\":\"c\"}"},
        {"obs-90", 0.90, 7, 0.5, "observation", NULL, "{\"project\":\"acme\",\"language\":\"c\"}"},
        {"fb-99", 0.99, 8, 0.5, "feedback", NULL, "{\"project\":\"acme\",\"language\":\"go\"}"},
    };
    size_t n = sizeof s / sizeof s[0];
    put_specs(db, "ep", s, n);
    expect e[8];
    for (size_t i = 0; i < n; i++) {
        double rel = cos01(s[i].cos);
        double boost = !strcmp(s[i].kind, "feedback") ? 1.5 : 1.0;
        e[i] = ex(s[i].id, rel, pow_decay(0.995, s[i].hours), 0.5, rel * boost, 0, s[i].cos >= 0.7);
    }
    vquery v;
    vquery_init(&v, db, "ep", "episodes");
    remem_result *r = run(db, &v.q);
    check_hits(r, e, n, 5);
    /* Feedback at 0.75 outranks an episode at 0.95. */
    if (r && r->n >= 3) {
        CHECK_STR(r->hits[0].mem.id, "fb-99");
        CHECK_STR(r->hits[1].mem.id, "fb-75");
        CHECK_STR(r->hits[2].mem.id, "obs-95");
    }
    remem_result_free(r);
    /* The project and language filters of seed 003 are plain query filters. */
    v.q.filter = "{\"$and\":[{\"project\":\"acme\"},{\"language\":\"c\"}]}";
    for (size_t i = 0; i < n; i++)
        e[i].kept = s[i].cos >= 0.7 && strstr(s[i].meta, "acme") && strstr(s[i].meta, "\"c\"");
    r = run(db, &v.q);
    check_hits(r, e, n, 5);
    remem_result_free(r);
    /* min_similarity overridden to 0.6 and k to 10. */
    v.q.filter = NULL;
    v.q.min_similarity = 0.6;
    v.q.k = 10;
    for (size_t i = 0; i < n; i++) e[i].kept = s[i].cos >= 0.6;
    r = run(db, &v.q);
    check_hits(r, e, n, 10);
    remem_result_free(r);
    /* The boost multiplies the weighted sum: with importance weighted in. */
    v.q.w_importance = 0.2;
    for (size_t i = 0; i < n; i++)
        e[i].score = (e[i].rel + 0.2 * 0.5) * (!strcmp(s[i].kind, "feedback") ? 1.5 : 1.0);
    r = run(db, &v.q);
    check_hits(r, e, n, 10);
    remem_result_free(r);
    vquery_free(&v);
    remem_close(db);
}

/* Every profile's definition says what the hand tests assumed. */
static void test_profile_json(void) {
    struct {
        const char *name, *frag;
    } want[] = {
        {"generative-agents", "\"normalize\":true"},
        {"metaverse", "\"min_score\":0.35"},
        {"metaverse", "1/(1+L2)"},
        {"stream", "\"half_life_hours\":168"},
        {"stream", "\"k\":5"},
        {"replay", "\"candidates_per_k\":2"},
        {"replay", "\"$gte\":0.05"},
        {"episodes", "\"min_similarity\":0.7"},
        {"episodes", "\"feedback\":1.5"},
        {"default", "\"lexical_lane\":true"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char *js = remem_profile_json(want[i].name);
        CHECK_HAS(js, want[i].frag);
        remem_free(js);
    }
    size_t n = 0;
    for (const char *const *p = remem_profiles(); *p; p++) n++;
    CHECK_INT(n, 6);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_add_get_roundtrip);
    RUN(test_generated_ids);
    RUN(test_upsert);
    RUN(test_duplicates);
    RUN(test_ttl);
    RUN(test_invalidate);
    RUN(test_forget_archive);
    RUN(test_forget_purge);
    RUN(test_history_sequence);
    RUN(test_stats_namespaces_clear);
    RUN(test_export_import);
    RUN(test_parse_line_errors);
    RUN(test_reindex);
    RUN(test_wrong_dimension);
    RUN(test_bad_filter_and_profile);
    RUN(test_batch_all_or_nothing);
    RUN(test_model_mismatch);
    RUN(test_two_handles);
    RUN(test_two_processes);
    RUN(test_profile_default_vector);
    RUN(test_profile_default_lexical);
    RUN(test_profile_generative_agents);
    RUN(test_profile_metaverse);
    RUN(test_profile_stream);
    RUN(test_profile_replay);
    RUN(test_profile_episodes);
    RUN(test_profile_json);
    return TEST_EXIT();
}
