/*
 * score.c: the built-in profiles (one per seed system, plus remem's own
 * hybrid "default") and the scoring formulas. Everything here is pure: the
 * same inputs give the same scores, which is what lets tests check the
 * rankings by hand and lets `now` make replays deterministic.
 *
 * Components:
 *   relevance  REL_COSINE01: max(0, cos) (cosine clipped to [0,1]);
 *              REL_INV_L2:   1 / (1 + L2), L2 = sqrt(2 - 2 cos) for unit
 *              vectors;
 *              REL_INV_SQL2: 1 / (1 + L2^2): seed 001's mapping over the
 *              distance Chroma's "l2" space returns, the squared L2.
 *   lexical    BM25 / max BM25 among the candidates (so in [0,1]).
 *   recency    REC_POW: base^hours since last access (the paper; seed 001
 *              counts whole hours, so the first hour is at full recency);
 *              REC_HALFLIFE: 0.5^(hours / half_life) (seed 004).
 *   importance as stored, in [0,1].
 * Score = sum of weight * component, after optional min-max normalisation of
 * each component over the candidates (the Generative Agents paper), then
 * multiplied by the profile's kind boost where it applies. The temporal
 * context term (w_context times the best such score of the memory's stream
 * neighbours) is added afterwards by score_add_context.
 */
#include "score/score.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

static const profile builtin[] = {
    {.name = "default",
     .w_relevance = 0.4,
     .w_lexical = 0.6,
     .w_recency = 0.05,
     .w_importance = 0.05,
     .w_context = 0.4,
     .relevance_map = REL_COSINE01,
     .recency_mode = REC_HALFLIFE,
     .recency_base = 0.995,
     .half_life_hours = 24 * 30,
     .normalize = 0,
     .min_similarity = -INFINITY,
     .min_score = -INFINITY,
     .k = 10,
     .candidates = 0,
     .lexical_lane = 1,
     .w_expand = 0,
     .w_entity = 0.3,
     .w_hop = 0.1,
     .neighbours = 20},
    {.name = "generative-agents",
     .w_relevance = 1,
     .w_lexical = 0,
     .w_recency = 1,
     .w_importance = 1,
     .relevance_map = REL_COSINE01,
     .recency_mode = REC_POW,
     .recency_base = 0.995,
     .half_life_hours = 0,
     .normalize = 1,
     .min_similarity = -INFINITY,
     .min_score = -INFINITY,
     .k = 10},
    {.name = "metaverse",
     .w_relevance = 1.0,
     .w_lexical = 0,
     .w_recency = 0.25,
     .w_importance = 0.25,
     .relevance_map = REL_INV_SQL2,
     .recency_mode = REC_POW,
     .recency_base = 0.995,
     .whole_hours = 1,
     .unrated_relevance_only = 1,
     .normalize = 0,
     .min_similarity = -INFINITY,
     .min_score = 0.35,
     .k = 10,
     .tiers = "static,short,long",
     .tier_priority = 1},
    {.name = "stream",
     .w_relevance = 0.4,
     .w_lexical = 0,
     .w_recency = 0.3,
     .w_importance = 0.3,
     .relevance_map = REL_COSINE01,
     .recency_mode = REC_HALFLIFE,
     .recency_base = 0.995,
     .half_life_hours = 24 * 7,
     .normalize = 0,
     .min_similarity = -INFINITY,
     .min_score = -INFINITY,
     .k = 5},
    {.name = "replay",
     .w_relevance = 1,
     .w_lexical = 0,
     .w_recency = 0,
     .w_importance = 0,
     .relevance_map = REL_COSINE01,
     .recency_mode = REC_POW,
     .recency_base = 0.995,
     .min_similarity = -INFINITY,
     .min_score = -INFINITY,
     .k = 3,
     .candidates_per_k = 2,
     .filter = "{\"reward\":{\"$gte\":0.05}}"},
    {.name = "episodes",
     .w_relevance = 1,
     .w_lexical = 0,
     .w_recency = 0,
     .w_importance = 0,
     .relevance_map = REL_COSINE01,
     .recency_mode = REC_POW,
     .recency_base = 0.995,
     .min_similarity = 0.7,
     .min_score = -INFINITY,
     .k = 5,
     .boost_kind = "feedback",
     .boost = 1.5},
};
#define N_BUILTIN (sizeof builtin / sizeof builtin[0])

static const char *const names[] = {"default", "generative-agents", "metaverse", "stream",
                                    "replay",  "episodes",          NULL};

const char *const *profile_names(void) { return names; }

int profile_get(const char *name, profile *p) {
    if (!name || !*name) name = "default";
    for (size_t i = 0; i < N_BUILTIN; i++) {
        if (strcmp(builtin[i].name, name) == 0) {
            *p = builtin[i];
            return REMEM_OK;
        }
    }
    return REMEM_EPROFILE;
}

void profile_apply_query(profile *p, const remem_query *q) {
    if (!isnan(q->w_relevance)) p->w_relevance = q->w_relevance;
    if (!isnan(q->w_lexical)) p->w_lexical = q->w_lexical;
    if (!isnan(q->w_recency)) p->w_recency = q->w_recency;
    if (!isnan(q->w_importance)) p->w_importance = q->w_importance;
    if (!isnan(q->w_context)) p->w_context = q->w_context;
    if (!isnan(q->min_similarity)) p->min_similarity = q->min_similarity;
    if (!isnan(q->min_score)) p->min_score = q->min_score;
    if (!isnan(q->recency_base)) {
        p->recency_base = q->recency_base;
        p->recency_mode = REC_POW;
    }
    if (!isnan(q->half_life_hours) && q->half_life_hours > 0) {
        p->half_life_hours = q->half_life_hours;
        p->recency_mode = REC_HALFLIFE;
    }
    if (q->normalize >= 0) p->normalize = q->normalize != 0;
    if (q->candidates > 0) {
        p->candidates = q->candidates;
        p->candidates_per_k = 0;
    }
    if (q->k > 0) p->k = q->k;
    if (q->tiers) snprintf(p->tiers, sizeof p->tiers, "%s", q->tiers);
    if (p->w_lexical > 0) p->lexical_lane = 1;
}

char *profile_to_json(const profile *p) {
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(p->name));
    json_t *w = json_object();
    json_object_set_new(w, "relevance", json_real(p->w_relevance));
    json_object_set_new(w, "lexical", json_real(p->w_lexical));
    json_object_set_new(w, "recency", json_real(p->w_recency));
    json_object_set_new(w, "importance", json_real(p->w_importance));
    json_object_set_new(w, "context", json_real(p->w_context));
    if (p->w_entity > 0) json_object_set_new(w, "entity", json_real(p->w_entity));
    if (p->w_expand > 0) json_object_set_new(w, "expansion", json_real(p->w_expand));
    if (p->w_hop > 0) json_object_set_new(w, "entity_hop", json_real(p->w_hop));
    if (p->neighbours > 0) json_object_set_new(o, "neighbours", json_integer(p->neighbours));
    json_object_set_new(o, "weights", w);
    json_object_set_new(o, "relevance",
                        json_string(p->relevance_map == REL_INV_SQL2 ? "1/(1+squared L2)"
                                    : p->relevance_map == REL_INV_L2 ? "1/(1+L2)"
                                                                      : "max(0,cosine)"));
    if (p->recency_mode == REC_POW) {
        json_object_set_new(o, "recency", json_string("base^hours_since_access"));
        json_object_set_new(o, "recency_base", json_real(p->recency_base));
        if (p->whole_hours) json_object_set_new(o, "recency_hours", json_string("whole"));
    } else {
        json_object_set_new(o, "recency", json_string("0.5^(hours_since_access/half_life)"));
        json_object_set_new(o, "half_life_hours", json_real(p->half_life_hours));
    }
    json_object_set_new(o, "normalize", json_boolean(p->normalize));
    json_object_set_new(o, "min_similarity",
                        isinf(p->min_similarity) ? json_null() : json_real(p->min_similarity));
    json_object_set_new(o, "min_score",
                        isinf(p->min_score) ? json_null() : json_real(p->min_score));
    json_object_set_new(o, "k", json_integer(p->k));
    if (p->candidates_per_k)
        json_object_set_new(o, "candidates_per_k", json_integer(p->candidates_per_k));
    json_object_set_new(o, "tiers", json_string(p->tiers[0] ? p->tiers : "static,short,long"));
    json_object_set_new(o, "tier_priority", json_boolean(p->tier_priority));
    if (p->filter[0]) json_object_set_new(o, "filter", json_loads(p->filter, 0, NULL));
    if (p->boost_kind[0]) {
        json_t *b = json_object();
        json_object_set_new(b, p->boost_kind, json_real(p->boost));
        json_object_set_new(o, "kind_boost", b);
    }
    json_object_set_new(o, "lexical_lane", json_boolean(p->lexical_lane));
    if (p->unrated_relevance_only)
        json_object_set_new(o, "unrated", json_string("relevance only"));
    char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
    json_decref(o);
    return s;
}

char *profile_formula(const profile *p) {
    char buf[1024];
    char ent[48] = "";
    if (p->w_entity > 0) snprintf(ent, sizeof ent, " + %g*entity", p->w_entity);
    int n = snprintf(buf, sizeof buf,
                     "score = %g*relevance + %g*lexical + %g*recency + %g*importance + "
                     "%g*context%s; relevance = %s; lexical = bm25/max(bm25); recency = ",
                     p->w_relevance, p->w_lexical, p->w_recency, p->w_importance, p->w_context, ent,
                     p->relevance_map == REL_INV_L2     ? "1/(1+L2)"
                     : p->relevance_map == REL_INV_SQL2 ? "1/(1+L2^2)"
                                                        : "max(0,cosine)");
    if (p->recency_mode == REC_POW)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%g^%shours_since_access", p->recency_base,
                      p->whole_hours ? "whole_" : "");
    else
        n += snprintf(buf + n, sizeof buf - (size_t)n, "0.5^(hours_since_access/%g)",
                      p->half_life_hours);
    if (p->w_entity > 0)
        n += snprintf(buf + n, sizeof buf - (size_t)n,
                      "; entity = the BM25 of the query's names, places and numbers (and, "
                      "weighted %g, the best lexical hits') / its max",
                      p->w_hop);
    n += snprintf(buf + n, sizeof buf - (size_t)n,
                  "; context = the better neighbour's score without context");
    if (p->unrated_relevance_only)
        n += snprintf(buf + n, sizeof buf - (size_t)n,
                      "; a memory with no importance of its own: relevance and lexical only");
    if (p->normalize)
        n += snprintf(buf + n, sizeof buf - (size_t)n,
                      "; each component min-max normalised over the candidates");
    if (p->boost_kind[0])
        n += snprintf(buf + n, sizeof buf - (size_t)n, "; kind %s: score*%g", p->boost_kind,
                      p->boost);
    if (!isinf(p->min_similarity))
        n += snprintf(buf + n, sizeof buf - (size_t)n, "; kept if cosine >= %g",
                      p->min_similarity);
    if (!isinf(p->min_score))
        snprintf(buf + n, sizeof buf - (size_t)n, "; kept if score >= %g", p->min_score);
    return strdup(buf);
}

double score_relevance(const profile *p, double cosine) {
    if (isnan(cosine)) return 0;
    if (p->relevance_map == REL_INV_L2 || p->relevance_map == REL_INV_SQL2) {
        double d2 = 2.0 - 2.0 * cosine;
        if (d2 < 0) d2 = 0;
        return 1.0 / (1.0 + (p->relevance_map == REL_INV_SQL2 ? d2 : sqrt(d2)));
    }
    return cosine > 0 ? (cosine < 1 ? cosine : 1) : 0;
}

double score_recency(const profile *p, int64_t t, int64_t now) {
    double hours = (double)(now - t) / 3.6e6;
    if (hours < 0) hours = 0;
    if (p->recency_mode == REC_HALFLIFE)
        return p->half_life_hours > 0 ? pow(0.5, hours / p->half_life_hours) : 1;
    return pow(p->recency_base, p->whole_hours ? floor(hours) : hours);
}

/* Min-max normalise field values in place (all equal: all become 1 when
 * non-zero, else 0, so a shared value neither helps nor hurts ordering). */
static void minmax(double *v, size_t n, size_t stride) {
    if (n == 0) return;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double x = *(double *)((char *)v + i * stride);
        if (x < lo) lo = x;
        if (x > hi) hi = x;
    }
    for (size_t i = 0; i < n; i++) {
        double *x = (double *)((char *)v + i * stride);
        *x = hi > lo ? (*x - lo) / (hi - lo) : (hi > 0 ? 1 : 0);
        assert(*x >= 0 && *x <= 1);
    }
}

int score_candidates(const profile *p, int64_t now, candidate *c, size_t n) {
    double max_bm25 = 0, max_ent = 0;
    for (size_t i = 0; i < n; i++) {
        if (c[i].bm25 > max_bm25) max_bm25 = c[i].bm25;
        if (c[i].ent > max_ent) max_ent = c[i].ent;
    }
    for (size_t i = 0; i < n; i++) {
        c[i].relevance = score_relevance(p, c[i].sim);
        c[i].lexical = max_bm25 > 0 ? c[i].bm25 / max_bm25 : 0;
        c[i].entity = max_ent > 0 ? c[i].ent / max_ent : 0;
        /* the components the header documents as in [0,1] */
        assert(c[i].relevance >= 0 && c[i].relevance <= 1);
        assert(c[i].lexical >= 0 && c[i].lexical <= 1);
        c[i].recency = score_recency(p, c[i].last_access, now);
    }
    /* The components reported stay the raw ones; normalisation changes only
     * what enters the sum. */
    double *tmp = NULL;
    if (p->normalize && n > 0 && !(tmp = malloc(n * 4 * sizeof *tmp))) return -1;
    if (tmp) {
        for (size_t i = 0; i < n; i++) {
            tmp[i * 4 + 0] = c[i].relevance;
            tmp[i * 4 + 1] = c[i].lexical;
            tmp[i * 4 + 2] = c[i].recency;
            tmp[i * 4 + 3] = c[i].importance;
        }
        for (int f = 0; f < 4; f++) minmax(tmp + f, n, 4 * sizeof *tmp);
    }
    for (size_t i = 0; i < n; i++) {
        double rel = tmp ? tmp[i * 4 + 0] : c[i].relevance;
        double lex = tmp ? tmp[i * 4 + 1] : c[i].lexical;
        double rec = tmp ? tmp[i * 4 + 2] : c[i].recency;
        double imp = tmp ? tmp[i * 4 + 3] : c[i].importance;
        /* seed 001: a memory with no importance "reduces to only relevancy" */
        int only_rel = p->unrated_relevance_only && c[i].unrated;
        double f = c[i].boosted && p->boost > 0 ? p->boost : 1;
        c[i].part[0] = f * p->w_relevance * rel;
        c[i].part[1] = f * p->w_lexical * lex;
        c[i].part[2] = only_rel ? 0 : f * p->w_recency * rec;
        c[i].part[3] = only_rel ? 0 : f * p->w_importance * imp;
        c[i].part[4] = 0;
        c[i].part[5] = f * p->w_entity * c[i].entity;
        c[i].score = c[i].part[0] + c[i].part[1] + c[i].part[2] + c[i].part[3] + c[i].part[5];
    }
    free(tmp);
    return 0;
}

int score_add_context(const profile *p, candidate *c, size_t n, const long *prev,
                      const long *next) {
    if (p->w_context == 0 || n == 0) return 0;
    /* Neighbours' base scores: read them all before adding anything, so the
     * bonus does not compound along a chain of neighbours. */
    double *base = malloc(n * sizeof *base);
    if (!base) return -1;
    for (size_t i = 0; i < n; i++) base[i] = c[i].score;
    for (size_t i = 0; i < n; i++) {
        /* neighbours are candidate indexes or -1 */
        assert(prev[i] >= -1 && prev[i] < (long)n && next[i] >= -1 && next[i] < (long)n);
        double b = 0;
        if (prev[i] >= 0 && base[prev[i]] > b) b = base[prev[i]];
        if (next[i] >= 0 && base[next[i]] > b) b = base[next[i]];
        c[i].context = b;
        c[i].part[4] = p->w_context * b;
        c[i].score += c[i].part[4];
    }
    free(base);
    return 0;
}
