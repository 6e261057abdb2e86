/*
 * score.h: scoring profiles and the scoring of recall candidates. Pure
 * functions, no I/O: given a profile, the time and the raw signals of each
 * candidate (cosine similarity, BM25, importance, last access), compute each
 * component and the final score. Tests compute expected scores by hand
 * against these formulas (docs/profiles.md writes them out).
 */
#ifndef REMEM_SCORE_H
#define REMEM_SCORE_H

#include <stddef.h>
#include <stdint.h>
#include "remem.h"

enum rel_map { REL_COSINE01 = 0, REL_INV_L2 = 1, REL_INV_SQL2 = 2 };
enum rec_mode { REC_POW = 0, REC_HALFLIFE = 1 };

typedef struct profile {
    char name[32];
    double w_relevance, w_lexical, w_recency, w_importance;
    double w_context;       /* temporal context: see recall.c */
    int relevance_map;      /* enum rel_map */
    int recency_mode;       /* enum rec_mode */
    double recency_base;    /* REC_POW: base^hours */
    double half_life_hours; /* REC_HALFLIFE */
    int whole_hours;        /* REC_POW over whole hours: the first hour is at full recency */
    int normalize;          /* min-max each component over the candidates */
    double min_similarity;  /* on the raw cosine; -inf: none */
    double min_score;       /* on the final score; -inf: none */
    int k;
    int candidates;       /* per lane; 0: derived from k */
    int candidates_per_k; /* if > 0, candidates = k * this */
    char tiers[64];       /* comma list, priority order; "" = all but archived */
    int tier_priority;    /* 1: sort by tier rank first */
    char filter[128];     /* a filter ANDed with the query's, or "" */
    char boost_kind[32];  /* kind whose score is multiplied by boost */
    double boost;
    int lexical_lane; /* 1: BM25 candidates too (the lexical index) */
    int unrated_relevance_only; /* an unrated memory scores relevance alone (seed 001) */
    /* The lexical lane's WordNet expansion: related words of the query's
     * words count this much of the query's own (0: no expansion). */
    double w_expand;
    /* The entity lane (cache_ent.c): weight of its component (0: no lane);
     * w_hop: the weight, within it, of the entities of the best lexical
     * hits beside the query's own (0: none followed). */
    double w_entity, w_hop;
    /* The stream neighbours of this many best lexical hits join the
     * candidates (0: none). */
    int neighbours;
} profile;

/* Fill *p with the named built-in profile; REMEM_EPROFILE if unknown. */
int profile_get(const char *name, profile *p);
/* Apply a query's overrides (NaN / -1 mean "keep"). */
void profile_apply_query(profile *p, const remem_query *q);
/* The names, NULL-terminated. */
const char *const *profile_names(void);
/* The profile as a JSON object text (malloc'd). */
char *profile_to_json(const profile *p);
/* The profile's scoring as one line of text ("score = 0.4*relevance + ...;
 * relevance = max(0,cosine); ..."), as recall.explain shows it (malloc'd). */
char *profile_formula(const profile *p);

/* One candidate's inputs and outputs. */
typedef struct candidate {
    /* inputs */
    double sim;  /* cosine similarity; NaN when not computed */
    double bm25; /* > 0 when matched lexically, else 0 */
    double ent;  /* BM25 over the entity index; 0 when no entity shared */
    double importance;
    int64_t last_access; /* accessed_at or created_at, ms */
    int boosted;         /* kind == profile boost_kind */
    int unrated;         /* written without an importance (its kind's default) */
    /* outputs */
    double relevance, lexical, recency, score;
    double entity; /* ent / max ent among the candidates, in [0,1] */
    double context; /* set by score_add_context */
    /* What each component put into score, after normalisation and the
     * kind boost: relevance, lexical, recency, importance, context, entity.
     * They sum to score (recall.explain shows them as one stacked bar). */
    double part[6];
} candidate;

/* relevance from a cosine, per the profile's mapping. */
double score_relevance(const profile *p, double cosine);
/* recency of a memory last accessed at t, at time now. */
double score_recency(const profile *p, int64_t t, int64_t now);
/* Compute components and scores of n candidates in place. 0, or -1 out of
 * memory (the min-max normalisation's buffer): the scores are then not
 * to be used. */
int score_candidates(const profile *p, int64_t now, candidate *c, size_t n);
/* The temporal-context term. Memories written next to each other in a
 * stream share their context (what was asked is answered in the next turn;
 * an observation explains the decision after it): prev[i] / next[i] are the
 * candidate indexes of candidate i's neighbours in its namespace's stream
 * (-1 if the neighbour is not a candidate). Adds w_context times the better
 * neighbour's base score to each score, and records it in .context. */
int score_add_context(const profile *p, candidate *c, size_t n, const long *prev,
                      const long *next); /* 0, or -1 out of memory (nothing added) */

#endif
