/*
 * test_profiles.c: every built-in profile checked by hand through
 * remem_recall (src/engine/recall.c over src/score/).
 *
 * Each memory gets a vector chosen so that its cosine to the query vector
 * is known (cos·e_a + sin·e_b against e_a), and a known age and importance;
 * every score is recomputed from the formulas of DESIGN.md written out here
 * independently of score.c, and the ranking and each score compared to
 * 1e-6. Queries pass `now` and no_touch so that recency is exact and a
 * recall does not change the next one. (tests/test_score.c checks the
 * formulas of score.c directly.)
 *
 * Split from the former test_engine.c; the shared helpers are in
 * tests/support/engine_fixture.h.
 */
#include "support/engine_fixture.h"

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

/* The lexical index's BM25 (src/lexical/lexical.h: k1 = 1.2, b = 0.4,
 * idf = ln(1 + (N - df + 0.5) / (df + 0.5)), always positive), for a query
 * of distinct single-token terms. */
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
        double idf = log(1 + ((double)nd - (double)with + 0.5) / ((double)with + 0.5));
        score += idf * tf * 2.2 / (tf + 1.2 * (0.6 + 0.4 * dl / avgdl));
    }
    return score;
}

/* The default profile with text: the lexical lane (the engine's BM25, divided
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
        {"short-below", -1.0, 10000, 0.0, NULL, "short", NULL}, /* 1/5 < 0.35 */
        {"archived", 1.0, 0, 1.0, NULL, "archived", NULL},
    };
    size_t n = sizeof s / sizeof s[0];
    put_specs(db, "mv", s, n);
    expect e[6];
    for (size_t i = 0; i < n; i++) {
        /* A static memory never decays (seed 001): recency 1 at any age. */
        double rel = inv_sql2(s[i].cos),
               rec = !strcmp(s[i].tier, "static") ? 1.0 : pow_decay(0.995, s[i].hours);
        double score = rel + 0.25 * rec + 0.25 * s[i].imp;
        int rank = !strcmp(s[i].tier, "static") ? 0 : !strcmp(s[i].tier, "short") ? 1 : 2;
        int kept = strcmp(s[i].tier, "archived") != 0 && score >= 0.35;
        e[i] = ex(s[i].id, rel, rec, s[i].imp, score, rank, kept);
    }
    CHECK(e[4].score < 0.35 && e[4].score >= 0.2);
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
    char ids[13][16], metas[13][48];
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
        {"metaverse", "1/(1+squared L2)"},
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
