/*
 * test_score.c: the pure scoring code of src/score/score.c, called
 * directly: every built-in profile's formula on inputs chosen so that the
 * expected numbers can be worked out by hand (written next to each check),
 * the per-query overrides, min-max normalisation, the kind boost and the
 * temporal-context term. tests/test_profiles.c checks the same formulas
 * end to end through remem_recall; this file pins them without a store.
 */
#include <math.h>

#include "remem.h"
#include "score/score.h"
#include "test.h"

#define H   3600000LL /* one hour in ms */
#define NOW 1700000000000LL

static profile get(const char *name) {
    profile p;
    memset(&p, 0, sizeof p);
    CHECK_INT(profile_get(name, &p), REMEM_OK);
    return p;
}

static candidate cand(double sim, double bm25, double imp, double hours_ago) {
    candidate c;
    memset(&c, 0, sizeof c);
    c.sim = sim;
    c.bm25 = bm25;
    c.importance = imp;
    c.last_access = NOW - (int64_t)llround(hours_ago * H);
    return c;
}

static void test_profile_lookup(void) {
    profile p;
    CHECK_INT(profile_get("no-such-profile", &p), REMEM_EPROFILE);
    CHECK_INT(profile_get(NULL, &p), REMEM_OK);
    CHECK_STR(p.name, "default");
    CHECK_INT(profile_get("", &p), REMEM_OK);
    CHECK_STR(p.name, "default");
    size_t n = 0;
    for (const char *const *s = profile_names(); *s; s++, n++) CHECK_INT(profile_get(*s, &p), 0);
    CHECK_INT(n, 6);
}

/* default: 0.4 relevance + 0.6 lexical + 0.05 recency (half-life 30 days)
 * + 0.05 importance; lexical is BM25 over the best BM25. */
static void test_default(void) {
    profile p = get("default");
    candidate c[2] = {cand(0.8, 3, 0.4, 720), cand(NAN, 6, 0, 0)};
    score_candidates(&p, NOW, c, 2);
    CHECK_NEAR(c[0].relevance, 0.8, 1e-12);
    CHECK_NEAR(c[0].lexical, 0.5, 1e-12); /* 3 / 6 */
    CHECK_NEAR(c[0].recency, 0.5, 1e-12); /* 720 h = one half-life */
    CHECK_NEAR(c[0].score, 0.665, 1e-12); /* .32 + .3 + .025 + .02 */
    CHECK_NEAR(c[1].relevance, 0, 0);     /* no cosine computed: 0 */
    CHECK_NEAR(c[1].lexical, 1, 1e-12);
    CHECK_NEAR(c[1].recency, 1, 1e-12);
    CHECK_NEAR(c[1].score, 0.65, 1e-12); /* .6 + .05 */
    CHECK(p.lexical_lane);
}

/* generative-agents: weights 1, min-max normalised components; the
 * reported components stay raw. With recency_base 0.5 (a query override)
 * the recencies of 0, 1, 2 hours are 1, .5, .25. */
static void test_generative_agents(void) {
    profile p = get("generative-agents");
    CHECK(p.normalize);
    remem_query q;
    remem_query_init(&q);
    q.recency_base = 0.5;
    profile_apply_query(&p, &q);
    candidate c[3] = {cand(0.9, 0, 0.2, 0), cand(0.5, 0, 0.6, 1), cand(0.1, 0, 1.0, 2)};
    score_candidates(&p, NOW, c, 3);
    CHECK_NEAR(c[1].recency, 0.5, 1e-12);
    CHECK_NEAR(c[2].recency, 0.25, 1e-12);
    CHECK_NEAR(c[0].relevance, 0.9, 1e-12); /* raw, not normalised */
    /* normalised: relevance 1, .5, 0; recency 1, 1/3, 0; importance 0, .5, 1 */
    CHECK_NEAR(c[0].score, 2.0, 1e-12);
    CHECK_NEAR(c[1].score, 0.5 + 1.0 / 3 + 0.5, 1e-12);
    CHECK_NEAR(c[2].score, 1.0, 1e-12);
    /* The profile's own base: 0.995^10 after ten hours. */
    profile g = get("generative-agents");
    CHECK_NEAR(score_recency(&g, NOW - 10 * H, NOW), pow(0.995, 10), 1e-15);
}

/* Min-max of equal values: all 1 when non-zero, all 0 when zero, so a
 * shared value neither helps nor hurts the order. */
static void test_normalise_equal_values(void) {
    profile p = get("generative-agents");
    candidate c[2] = {cand(0.5, 0, 0.7, 0), cand(0.5, 0, 0.7, 0)};
    score_candidates(&p, NOW, c, 2);
    CHECK_NEAR(c[0].score, 3.0, 1e-12); /* 1 + 1 + 1 */
    candidate z[2] = {cand(0, 0, 0, 0), cand(0, 0, 0, 0)};
    score_candidates(&p, NOW, z, 2);
    CHECK_NEAR(z[0].score, 1.0, 1e-12); /* relevance 0, importance 0, recency 1 */
}

/* metaverse: 1/(1+d) with d the squared L2 distance (Chroma's "l2" space,
 * what seed 001 ran), d = 2 - 2 cos for unit vectors; + .25 recency over
 * whole hours + .25 importance; min score 0.35; tier priority. */
static void test_metaverse(void) {
    profile p = get("metaverse");
    CHECK_NEAR(score_relevance(&p, 0.5), 0.5, 1e-12);       /* d = 1 */
    CHECK_NEAR(score_relevance(&p, 1.0), 1.0, 1e-12);       /* d = 0 */
    CHECK_NEAR(score_relevance(&p, -1.0), 1.0 / 5, 1e-12);  /* d = 4 */
    CHECK_NEAR(score_relevance(&p, 0.9), 1.0 / 1.2, 1e-12); /* d = 0.2 */
    CHECK_NEAR(score_relevance(&p, 1.0000001), 1.0, 1e-12); /* rounding past 1: d 0 */
    candidate c[1] = {cand(0.5, 0, 0.4, 0)};
    score_candidates(&p, NOW, c, 1);
    CHECK_NEAR(c[0].score, 0.85, 1e-12); /* .5 + .25 + .1 */
    CHECK_NEAR(p.min_score, 0.35, 0);
    CHECK(p.tier_priority);
    CHECK_STR(p.tiers, "static,short,long");
}

/* seed 001: a memory created or accessed less than 60 minutes ago has the
 * highest recency; after that k^hours over whole hours. Other base^hours
 * profiles (the paper's) keep fractional hours. */
static void test_metaverse_first_hour(void) {
    profile p = get("metaverse");
    CHECK_NEAR(score_recency(&p, NOW - H / 2, NOW), 1.0, 0);       /* 30 minutes */
    CHECK_NEAR(score_recency(&p, NOW - H + 1000, NOW), 1.0, 0);    /* 59m59s */
    CHECK_NEAR(score_recency(&p, NOW - H, NOW), 0.995, 1e-12);     /* 1 hour */
    CHECK_NEAR(score_recency(&p, NOW - 5 * H / 2, NOW), 0.995 * 0.995, 1e-12);
    profile g = get("generative-agents");
    CHECK_NEAR(score_recency(&g, NOW - H / 2, NOW), pow(0.995, 0.5), 1e-12);
}

/* seed 001: "if the score is not present in the metadata, the function
 * then reduces to only relevancy": under metaverse an unrated memory (its
 * kind's default importance stood in) scores relevance alone; other
 * profiles score it as any other. */
static void test_metaverse_unrated(void) {
    profile p = get("metaverse");
    candidate c[2] = {cand(0.5, 0, 0.5, 0), cand(0.5, 0, 0.5, 0)};
    c[1].unrated = 1;
    score_candidates(&p, NOW, c, 2);
    CHECK_NEAR(c[0].score, 0.5 + 0.25 + 0.125, 1e-12);
    CHECK_NEAR(c[1].score, 0.5, 1e-12);
    profile s = get("stream");
    candidate d[1] = {cand(0.5, 0, 0.5, 0)};
    d[0].unrated = 1;
    score_candidates(&s, NOW, d, 1);
    CHECK_NEAR(d[0].score, 0.2 + 0.3 + 0.15, 1e-12);
}

/* stream: 0.4 relevance + 0.3 recency (half-life 7 days) + 0.3 importance;
 * a negative cosine is relevance 0. */
static void test_stream(void) {
    profile p = get("stream");
    candidate c[2] = {cand(0.5, 0, 1.0, 168), cand(-0.4, 0, 0, 336)};
    score_candidates(&p, NOW, c, 2);
    CHECK_NEAR(c[0].recency, 0.5, 1e-12);
    CHECK_NEAR(c[0].score, 0.65, 1e-12); /* .2 + .15 + .3 */
    CHECK_NEAR(c[1].relevance, 0, 0);
    CHECK_NEAR(c[1].recency, 0.25, 1e-12);
    CHECK_NEAR(c[1].score, 0.075, 1e-12); /* .3 * .25 */
    CHECK_INT(p.k, 5);
}

/* replay: relevance only, over reward >= 0.05, 2k candidates. */
static void test_replay(void) {
    profile p = get("replay");
    candidate c[1] = {cand(0.3, 9, 1.0, 0)};
    score_candidates(&p, NOW, c, 1);
    CHECK_NEAR(c[0].score, 0.3, 1e-12);
    CHECK_INT(p.candidates_per_k, 2);
    CHECK_HAS(p.filter, "\"reward\"");
    CHECK_HAS(p.filter, "0.05");
}

/* episodes: relevance, min similarity 0.7, kind feedback times 1.5. */
static void test_episodes(void) {
    profile p = get("episodes");
    candidate c[2] = {cand(0.8, 0, 0, 0), cand(0.8, 0, 0, 0)};
    c[0].boosted = 1;
    score_candidates(&p, NOW, c, 2);
    CHECK_NEAR(c[0].score, 1.2, 1e-12);
    CHECK_NEAR(c[1].score, 0.8, 1e-12);
    CHECK_NEAR(p.min_similarity, 0.7, 0);
    CHECK_STR(p.boost_kind, "feedback");
}

/* A memory accessed "after" now (a replay with an old now) is not more
 * than fully recent. */
static void test_recency_clamps_future(void) {
    profile p = get("stream");
    CHECK_NEAR(score_recency(&p, NOW + 5 * H, NOW), 1.0, 0);
    profile g = get("generative-agents");
    CHECK_NEAR(score_recency(&g, NOW + 5 * H, NOW), 1.0, 0);
}

/* Context: w_context (0.4 in default) times the better neighbour's base
 * score, read before any is added (no compounding along a chain). */
static void test_context(void) {
    profile p = get("default");
    candidate c[3];
    memset(c, 0, sizeof c);
    c[0].score = 1.0;
    c[1].score = 0.5;
    c[2].score = 0.2;
    const long prev[3] = {-1, 0, 1}, next[3] = {1, 2, -1};
    score_add_context(&p, c, 3, prev, next);
    CHECK_NEAR(c[0].context, 0.5, 1e-12);
    CHECK_NEAR(c[0].score, 1.0 + 0.4 * 0.5, 1e-12);
    CHECK_NEAR(c[1].context, 1.0, 1e-12);
    CHECK_NEAR(c[1].score, 0.5 + 0.4 * 1.0, 1e-12);
    CHECK_NEAR(c[2].score, 0.2 + 0.4 * 0.5, 1e-12);
    profile s = get("stream"); /* w_context 0: nothing changes */
    c[0].score = 1.0;
    c[0].context = 0;
    score_add_context(&s, c, 3, prev, next);
    CHECK_NEAR(c[0].score, 1.0, 0);
    CHECK_NEAR(c[0].context, 0, 0);
}

/* Overrides: NaN and -1 keep the profile's value; a half-life selects
 * half-life decay and a base selects k^hours; candidates replaces the
 * per-k rule; a lexical weight turns the lexical lane on. */
static void test_query_overrides(void) {
    remem_query q;
    remem_query_init(&q);
    profile p = get("stream"), keep = p;
    profile_apply_query(&p, &q);
    CHECK(memcmp(&p, &keep, sizeof p) == 0);

    p = get("stream");
    q.recency_base = 0.9;
    profile_apply_query(&p, &q);
    CHECK_INT(p.recency_mode, REC_POW);
    CHECK_NEAR(score_recency(&p, NOW - 2 * H, NOW), 0.81, 1e-12);

    p = get("metaverse");
    remem_query_init(&q);
    q.half_life_hours = 1;
    q.w_lexical = 0.2;
    q.k = 7;
    q.tiers = "long";
    q.normalize = 1;
    profile_apply_query(&p, &q);
    CHECK_INT(p.recency_mode, REC_HALFLIFE);
    CHECK_NEAR(score_recency(&p, NOW - 3 * H, NOW), 0.125, 1e-12);
    CHECK(p.lexical_lane);
    CHECK_INT(p.k, 7);
    CHECK_STR(p.tiers, "long");
    CHECK(p.normalize);

    p = get("replay");
    remem_query_init(&q);
    q.candidates = 50;
    profile_apply_query(&p, &q);
    CHECK_INT(p.candidates, 50);
    CHECK_INT(p.candidates_per_k, 0);
}

static void test_profile_json(void) {
    profile p = get("stream");
    char *js = profile_to_json(&p);
    CHECK_HAS(js, "\"name\":\"stream\"");
    CHECK_HAS(js, "\"half_life_hours\":168");
    CHECK_HAS(js, "0.5^(hours_since_access/half_life)");
    free(js);
    p = get("metaverse");
    js = profile_to_json(&p);
    CHECK_HAS(js, "\"relevance\":\"1/(1+squared L2)\"");
    CHECK_HAS(js, "\"min_score\":0.35");
    free(js);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_profile_lookup);
    RUN(test_default);
    RUN(test_generative_agents);
    RUN(test_normalise_equal_values);
    RUN(test_metaverse);
    RUN(test_metaverse_first_hour);
    RUN(test_metaverse_unrated);
    RUN(test_stream);
    RUN(test_replay);
    RUN(test_episodes);
    RUN(test_recency_clamps_future);
    RUN(test_context);
    RUN(test_query_overrides);
    RUN(test_profile_json);
    return TEST_EXIT();
}
