/*
 * test_scaling.c: the operations that take a list or scan a namespace
 * (timeline, static.load, recall's context step, prune) were made near
 * linear (issue 21); these tests hold them to the answers the simple
 * all-pairs versions gave, computed here the simple way on small inputs,
 * and to the timeline's pages. bench/bench_scaling.c measures the growth.
 */
#include <jansson.h>
#include <stdarg.h>

#include "test.h"
#include "remem.h"

static remem *open_mem(void) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    if (remem_open(":memory:", &o, &db)) {
        fprintf(stderr, "open: %s\n", remem_errmsg(db));
        exit(1);
    }
    return db;
}

/* Call op with arguments built by json_pack; the answer, or NULL (and
 * *rc set) on failure. */
static json_t *call_rc(remem *db, int *rc, const char *op, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    json_t *a = json_vpack_ex(NULL, 0, fmt, ap);
    va_end(ap);
    char *args = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    char *out = NULL;
    *rc = remem_call(db, op, args, strlen(args), &out);
    free(args);
    if (*rc) return NULL;
    json_t *j = json_loads(out, 0, NULL);
    remem_free(out);
    return j;
}

#define CALL(db, op, ...)                                                    \
    ({                                                                       \
        int rc_;                                                             \
        json_t *j_ = call_rc(db, &rc_, op, __VA_ARGS__);                     \
        if (rc_) fprintf(stderr, "  %s failed: %s\n", op, remem_errmsg(db)); \
        CHECK_INT(rc_, REMEM_OK);                                            \
        j_;                                                                  \
    })

static const char *S(json_t *o, const char *k) {
    json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : "";
}

/* ---- timeline ---- */

/* Two runs written interleaved, steps out of order: step s of run r has
 * s attempts (the last valid) and, on odd steps, one error event. */
static void timeline_store(remem *db, int steps) {
    json_t *schema = json_pack("{ss s[s]}", "type", "object", "required", "sql");
    for (int s = steps; s >= 1; s--)
        for (int r = 0; r < 2; r++) {
            const char *run = r ? "rb" : "ra";
            for (int a = 1; a <= s; a++) {
                char sql[64];
                snprintf(sql, sizeof sql, "select %d from t%d", a, s);
                json_decref(a < s ? CALL(db, "lesson.validate", "{sO s{} ss ss si}", "schema",
                                         schema, "input", "ns", "t", "run", run, "step", s)
                                  : CALL(db, "lesson.validate", "{sO s{ss} ss ss si}", "schema",
                                         schema, "input", "sql", sql, "ns", "t", "run", run, "step",
                                         s));
            }
            if (s % 2) {
                char err[64];
                snprintf(err, sizeof err, "Error: table t%c is locked", 'a' + s % 3);
                json_decref(CALL(db, "lesson.event", "{ss ss ss ss ss ss si}", "ns", "t", "domain",
                                 "sqlite", "tool", "run_sqlite", "channel", "hard_failure", "error",
                                 err, "run", run, "step", s));
            }
        }
    json_decref(schema);
}

static void test_timeline_steps_and_pages(void) {
    remem *db = open_mem();
    const int n = 7;
    timeline_store(db, n);
    json_t *t = CALL(db, "timeline", "{ss ss}", "ns", "t", "run", "rb");
    json_t *steps = json_object_get(json_object_get(t, "timeline"), "steps");
    CHECK_INT(json_array_size(steps), n);
    CHECK_INT(json_integer_value(json_object_get(t, "total")), n);
    CHECK(!json_object_get(t, "next_offset"));
    for (int s = 1; s <= n && (size_t)s <= json_array_size(steps); s++) {
        json_t *row = json_array_get(steps, (size_t)s - 1);
        CHECK_INT(json_integer_value(json_object_get(row, "step")), s);
        /* only this run's attempts, in the order written */
        json_t *atts = json_object_get(row, "attempts");
        CHECK_INT(json_array_size(atts), s);
        CHECK(json_is_true(json_object_get(json_array_get(atts, (size_t)s - 1), "valid")));
        CHECK_STR(S(row, "validation"), "valid");
        CHECK_INT(json_array_size(json_object_get(row, "events")), s % 2);
        CHECK_STR(S(row, "execution"), s % 2 ? "error" : "ok");
        /* every step's valid input differs from the next one's */
        json_t *ch = json_object_get(row, "next_step_changed");
        if (s < n)
            CHECK(json_is_true(ch));
        else
            CHECK(json_is_null(ch));
    }
    /* Pages of 3: the same rows, in the same order, and next_offset. */
    json_t *all = json_array();
    for (int off = 0, pages = 0; off >= 0 && pages < 10; pages++) {
        json_t *p = CALL(db, "timeline", "{ss ss si si}", "ns", "t", "run", "rb", "limit", 3,
                         "offset", off);
        if (!p) break;
        json_array_extend(all, json_object_get(json_object_get(p, "timeline"), "steps"));
        CHECK_INT(json_integer_value(json_object_get(p, "total")), n);
        json_t *next = json_object_get(p, "next_offset");
        CHECK(next ? off + 3 < n : off + 3 >= n);
        off = next ? (int)json_integer_value(next) : -1;
        json_decref(p);
    }
    CHECK(json_equal(all, steps));
    json_decref(all);
    json_decref(t);
    /* The decisions view pages too: the page is a slice of the whole. */
    json_t *d = CALL(db, "timeline", "{ss ss ss}", "ns", "t", "run", "ra", "view", "decisions");
    json_t *dp = CALL(db, "timeline", "{ss ss ss si si}", "ns", "t", "run", "ra", "view",
                      "decisions", "limit", 1, "offset", 1);
    json_t *whole = json_object_get(d, "decisions"), *page = json_object_get(dp, "decisions");
    CHECK_INT(json_integer_value(json_object_get(dp, "total")), json_array_size(whole));
    if (json_array_size(whole) >= 2) {
        CHECK_INT(json_array_size(page), 1);
        CHECK(json_equal(json_array_get(page, 0), json_array_get(whole, 1)));
    }
    json_decref(d);
    json_decref(dp);
    /* Every run's summary: n odd-step errors per run of n steps. */
    json_t *sm = CALL(db, "timeline", "{ss ss}", "ns", "t", "view", "summary");
    CHECK_INT(json_integer_value(json_object_get(json_object_get(sm, "summary"), "tool_errors")),
              2 * ((n + 1) / 2));
    json_decref(sm);
    int rc;
    CHECK(!call_rc(db, &rc, "timeline", "{ss ss si}", "ns", "t", "run", "ra", "limit", 0));
    CHECK_INT(rc, REMEM_EINVAL);
    remem_close(db);
}

/* ---- recall's context step ---- */

/* Written in this order: a0..a5, b0..b3, a6..a11 (so a5 and a6 are not
 * neighbours: b's rows lie between them); every fifth is filtered out,
 * leaving holes. The context of a hit is the best base score (score less
 * its context bonus) of the memory written just before or just after it
 * in its namespace, when that one is a candidate too. */
static void test_recall_context_neighbours(void) {
    remem *db = open_mem();
    char ns[20][4], id[20][8];
    int kept[20], n = 0;
    for (int w = 0; w < 16; w++) {
        int in_b = w >= 6 && w < 10;
        snprintf(ns[w], sizeof ns[w], "%s", in_b ? "b" : "a");
        snprintf(id[w], sizeof id[w], "%s%d", in_b ? "b" : "a", in_b ? w - 6 : w < 6 ? w : w - 4);
        kept[w] = w % 5 != 4;
        char text[96], md[32];
        snprintf(text, sizeof text, "zebra number %d walks %s the river %s", w,
                 w % 3 ? "along" : "across", w % 2 ? "slowly" : "at dawn");
        snprintf(md, sizeof md, "{\"keep\":%s}", kept[w] ? "true" : "false");
        remem_memory m;
        remem_memory_init(&m);
        m.ns = ns[w];
        m.id = id[w];
        m.text = text;
        m.metadata = md;
        m.importance = 0.1 + 0.05 * w;
        m.created_at = 1700000000000LL + w * 60000LL;
        CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
        n += kept[w];
    }
    remem_query q;
    remem_query_init(&q);
    const char *nss[] = {"a", "b"};
    q.text = "zebra river";
    q.namespaces = nss;
    q.n_namespaces = 2;
    q.filter = "{\"keep\":true}";
    q.k = 50;
    q.candidates = 50;
    q.w_context = 0.3;
    q.min_score = -1e9;
    q.min_similarity = -1e9;
    q.now = 1700000000000LL + 3600000LL;
    q.no_touch = 1;
    remem_result *r = NULL;
    int rc = remem_recall(db, &q, &r);
    if (rc) fprintf(stderr, "  recall: %s\n", remem_errmsg(db));
    CHECK_INT(rc, REMEM_OK);
    CHECK(r && r->n == (size_t)n);
    double base[20];
    int at[20];
    for (int w = 0; w < 16; w++) at[w] = -1;
    for (size_t i = 0; r && i < r->n; i++)
        for (int w = 0; w < 16; w++)
            if (!strcmp(r->hits[i].mem.id, id[w]) && !strcmp(r->hits[i].mem.ns, ns[w])) {
                at[w] = (int)i;
                base[w] = r->hits[i].score - 0.3 * r->hits[i].context;
            }
    int with_context = 0;
    for (int w = 0; w < 16 && r; w++) {
        CHECK(kept[w] == (at[w] >= 0));
        if (at[w] < 0) continue;
        double want = 0;
        for (int d = -1; d <= 1; d += 2) {
            int v = w + d;
            if (v >= 0 && v < 16 && at[v] >= 0 && !strcmp(ns[v], ns[w]) && base[v] > want)
                want = base[v];
        }
        CHECK_NEAR(r->hits[at[w]].context, want, 1e-12);
        with_context += want > 0;
    }
    CHECK(with_context >= 8);
    remem_result_free(r);
    remem_close(db);
}

/* ---- static.load ---- */

/* A file of n leaves "k<i>": "v<i>-<tag>" under "g<i % 7>". */
static json_t *personality(int from, int to, int changed_below, const char *tag) {
    json_t *f = json_object();
    for (int i = from; i < to; i++) {
        char g[16], k[16], v[32];
        snprintf(g, sizeof g, "g%d", i % 7);
        snprintf(k, sizeof k, "k%d", i);
        snprintf(v, sizeof v, "v%d-%s", i, i < changed_below ? tag : "same");
        if (!json_object_get(f, g)) json_object_set_new(f, g, json_object());
        json_object_set_new(json_object_get(f, g), k, json_string(v));
    }
    return f;
}

static int64_t I(json_t *o, const char *k) { return json_integer_value(json_object_get(o, k)); }

/* Loading again: the counts of added, replaced, unchanged and archived
 * memories the all-pairs matching gave, on a file large enough that the
 * old matching was slow; and a key path given twice, named. */
static void test_static_load_counts(void) {
    remem *db = open_mem();
    json_t *f = personality(0, 3000, 0, "x");
    json_t *a = CALL(db, "static.load", "{ss sO}", "ns", "p", "file", f);
    CHECK_INT(I(a, "added"), 3000);
    CHECK_INT(I(a, "archived"), 0);
    json_decref(a);
    json_decref(f);
    /* keys 500..3499: 500..999 changed, 1000..2999 the same, 3000..3499
     * new, 0..499 gone */
    f = personality(500, 3500, 1000, "y");
    a = CALL(db, "static.load", "{ss sO}", "ns", "p", "file", f);
    CHECK_INT(I(a, "memories"), 3000);
    CHECK_INT(I(a, "added"), 500);
    CHECK_INT(I(a, "replaced"), 500);
    CHECK_INT(I(a, "unchanged"), 2000);
    CHECK_INT(I(a, "archived"), 500);
    json_decref(a);
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "p", "static:g3.k10", &r), REMEM_OK);
    if (r) CHECK_STR(remem_record_memory(r)->tier, "archived");
    remem_record_free(r);
    CHECK_INT(remem_get(db, "p", "static:g1.k505", &r), REMEM_OK);
    if (r) CHECK_STR(remem_record_memory(r)->text, "g1.k505: v505-y");
    remem_record_free(r);
    /* the same file again: nothing changes */
    a = CALL(db, "static.load", "{ss sO}", "ns", "p", "file", f);
    CHECK_INT(I(a, "unchanged"), 3000);
    CHECK_INT(I(a, "added") + I(a, "replaced") + I(a, "archived"), 0);
    json_decref(a);
    /* "g2.k9" as a key of its own beside g2's k9: one key path twice */
    json_object_set_new(f, "g2.k9", json_string("again"));
    json_object_set_new(json_object_get(f, "g2"), "k9", json_string("first"));
    int rc;
    CHECK(!call_rc(db, &rc, "static.load", "{ss sO}", "ns", "p", "file", f));
    CHECK_INT(rc, REMEM_EINVAL);
    CHECK(strstr(remem_errmsg(db), "two values have the key path g2.k9") != NULL);
    json_decref(f);
    remem_close(db);
}

/* ---- prune's clusters ---- */

typedef struct ep_rows {
    char id[64][40];
    int project[64];
    float vec[64][512];
    int n, dim;
} ep_rows;

static int on_episode(void *ctx, const char *data, size_t len) {
    ep_rows *e = ctx;
    json_t *m = json_loadb(data, len, 0, NULL);
    json_t *v = json_object_get(m, "vector");
    if (e->n < 64 && json_array_size(v) <= 512) {
        snprintf(e->id[e->n], sizeof e->id[e->n], "%s", S(m, "id"));
        const char *p = S(json_object_get(m, "metadata"), "projectID");
        e->project[e->n] = p[1] - '0';
        e->dim = (int)json_array_size(v);
        for (int d = 0; d < e->dim; d++)
            e->vec[e->n][d] = (float)json_number_value(json_array_get(v, (size_t)d));
        e->n++;
    }
    json_decref(m);
    return 0;
}

/* Episodes of two projects whose texts share more or fewer words, so
 * that at threshold 0.8 some cluster and some do not; the dry run lists
 * the members of the clusters that greedy leader clustering with an
 * exact (double, in order) dot product makes, computed here. */
static void test_prune_clusters_as_before(void) {
    remem *db = open_mem();
    static const char *w[] = {"deploy", "build", "cache", "parser", "socket", "retry",
                              "config", "index", "merge", "schema", "client", "queue"};
    for (int i = 0; i < 48; i++) {
        char text[160], md[64];
        int g = i % 6;
        snprintf(text, sizeof text, "%s %s %s %s %s %s", w[g], w[g + 1], w[g + 2], w[g + 3],
                 w[(g + 4 + (i / 6) % 3) % 12], i % 4 == 0 ? w[(i * 5) % 12] : "");
        snprintf(md, sizeof md, "{\"projectID\":\"p%d\",\"taskID\":\"t%d\"}", i % 2, i);
        remem_memory m;
        remem_memory_init(&m);
        m.ns = "e";
        m.kind = "episode";
        m.text = text;
        m.metadata = md;
        CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    }
    static ep_rows e;
    memset(&e, 0, sizeof e);
    CHECK_INT(remem_export(db, "e", 1, on_episode, &e, NULL), REMEM_OK);
    const double thr = 0.8;
    int leader[64], members[64] = {0};
    for (int j = 0; j < e.n; j++) {
        leader[j] = j;
        for (int i = 0; i < j; i++) {
            if (leader[i] != i || e.project[i] != e.project[j]) continue;
            double dot = 0;
            for (int d = 0; d < e.dim; d++) dot += (double)e.vec[i][d] * e.vec[j][d];
            if (dot >= thr) {
                leader[j] = i;
                break;
            }
        }
        members[leader[j]]++;
    }
    json_t *want = json_object();
    int clusters = 0;
    for (int i = 0; i < e.n; i++) clusters += leader[i] == i && members[i] >= 2;
    for (int j = 0; j < e.n; j++)
        if (members[leader[j]] >= 2) json_object_set_new(want, e.id[j], json_true());
    CHECK(clusters >= 2 && (int)json_object_size(want) < e.n); /* some do, some do not */
    json_t *r = CALL(db, "prune", "{ss sb si si sf ss si}", "ns", "e", "dry_run", 1,
                     "retention_days", 0, "max_episodes_per_project", 0, "similarity_threshold",
                     thr, "strategy", "heuristic", "ids_limit", 1000);
    CHECK_INT(json_integer_value(json_object_get(r, "clustersCreated")), clusters);
    json_t *got = json_object_get(r, "episodesRemoved");
    CHECK_INT(json_array_size(got), json_object_size(want));
    size_t i;
    json_t *v;
    json_array_foreach(got, i, v) CHECK(json_object_get(want, json_string_value(v)) != NULL);
    json_decref(r);
    json_decref(want);
    remem_close(db);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_timeline_steps_and_pages);
    RUN(test_recall_context_neighbours);
    RUN(test_static_load_counts);
    RUN(test_prune_clusters_as_before);
    return TEST_EXIT();
}
