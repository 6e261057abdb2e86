/*
 * experience.h: seed 000's replay memory (decisions, trajectories, human
 * feedback) as operations over ordinary memories of kinds "decision",
 * "trajectory" and "feedback" whose metadata holds every field. There is
 * no store of its own: a decision is a memory, found by the same recall as
 * any other, listed by the same export, kept in the same history.
 *
 * The operations are the rows of experience_ops (ops.c); this header is
 * what the rest of the engine may call: the stats section remem_stats adds
 * (ENGINE_STATS_HOOKS in src/engine/ops.h), the few-shot renderer (a
 * prompt format src/prompt/ can list), and hydration from pre-seeded files
 * (for the server's first use of a namespace). docs/experience.md is the
 * users' version.
 */
#ifndef REMEM_EXPERIENCE_H
#define REMEM_EXPERIENCE_H

#include <jansson.h>
#include "engine/engine.h"
#include "engine/ops.h"
#include "util/util.h"

/* ---- situation queries (situation.c): pure functions ---- */

/* The decision query of seed 000: `{title} {k1}:{v1} {k2}:{v2} {k3}:{v3}`,
 * the three metrics with the lowest values (the most stressed), lowest
 * first, each value rendered as Python's `{v:.0f}`; ties keep the order of
 * the keys in the object. metrics holds numbers (or is NULL: no metrics,
 * the query is "{title} "). Appends to out. */
void exp_decision_query(const char *title, json_t *metrics, strbuf *out);

/* The trajectory query: `TaskDomain: {domain} {k1}:{v1} ...`, the three
 * most stressed world values. "Stressed" orders values by a number: a
 * number is itself, false is 0, true is 1, anything else (a string, null,
 * a list, an object) is 0, lowest first, ties in key order. Values render
 * as Python's str() would print them (True, False, None, 2.5, 3.0, text
 * as it is; lists and objects as compact JSON). Appends to out. */
void exp_world_query(const char *domain, json_t *world, strbuf *out);

/* Python's str() of a JSON value, as above. Appends to out. */
void exp_render_value(json_t *v, strbuf *out);

/* The first max code points of s (UTF-8), Python's s[:max]. Appends. */
void exp_prefix_chars(const char *s, size_t max, strbuf *out);

/* Python's str.upper() for the simple case mappings (utf8proc). Appends. */
void exp_upper(const char *s, strbuf *out);

/* Seed 000's stored text of a decision (metadata with remem's field
 * names): `{title} Action: {action} Domain: {domain} Reward:
 * {reward:.2f} {reasoning[:100]}`. Appends; REMEM_ENOMEM or REMEM_OK. */
int exp_decision_text(json_t *rec, strbuf *out);

/* ---- lookups shared by the operations (records.c) ---- */

/* The k memories of `kind` in ns nearest to text by cosine similarity
 * (best first, ties newer first), untouched. *out: remem_result_free. */
int exp_nearest(remem *db, const char *ns, const char *kind, const char *text, int k,
                remem_result **out);

/* decision.similar's list: best n of the 2n nearest decisions to the
 * situation query whose reward is >= 0.05. *results is a new array of
 * result objects; *query (may be NULL) receives the query text (malloc'd). */
int exp_similar_decisions(remem *db, const char *ns, const char *title, json_t *metrics, int n,
                          json_t **results, char **query);

/* ---- the few-shot block (fewshot.c) ---- */

/* Seed 000's "PAST EXPERIENCE & HUMAN VERIFICATION" block for the
 * situation (title, metrics), byte for byte as the seed prints it, "" when
 * no decision qualifies. *text: malloc'd. *decisions (may be NULL): the
 * decisions it used, as decision.similar lists them. The prompt formats
 * table (src/prompt/) lists this renderer as "fewshot". */
int exp_fewshot_text(remem *db, const char *ns, const char *title, json_t *metrics, int n,
                     char **text, json_t **decisions);

/* ---- stats and hydration (stats.c, hydrate.c) ---- */

/* The number of live decisions of ns (not invalidated, archived or
 * expired), their mean reward and their counts per action. */
typedef struct exp_summary {
    int64_t decisions;
    long double reward_sum; /* of finite rewards: never overflows */
    json_t *by_action;      /* new object: action -> count */
} exp_summary;
int exp_summarise(remem *db, const char *ns, exp_summary *s);

/* The section remem_stats(db, ns) adds when ns holds decisions:
 * "total_memories", "average_reward" (rounded to 3 places, as the seed),
 * "by_action_type". Listed in ENGINE_STATS_HOOKS. */
int experience_stats(remem *db, const char *ns, json_t *o);

/* Hydrate ns from pre-seeded decision files, given as their parsed
 * contents (docs/experience.md, "Pre-seeded files"), only when ns holds no
 * decision yet; all the files' decisions are added in one transaction.
 * *result: {"ns","hydrated","skipped","reason"?,"ids"} (new reference). */
int exp_hydrate(remem *db, const char *ns, json_t *files, json_t **result);

/* The same from file paths (the server's first use of a namespace, from
 * the configuration's hydrate_files). A missing file is an error. */
int exp_hydrate_paths(remem *db, const char *ns, const char *const *paths, size_t n,
                      json_t **result);

/* First use of ns by an experience operation on this handle: hydrate it
 * from its policy's hydrate_files when it has any (firstuse.c). REMEM_OK
 * when there is nothing to do; a missing or bad file is an error naming
 * it. */
int exp_first_use(remem *db, const char *ns);

/* ---- the operations (rows of experience_ops, ops.c) ---- */

int exp_op_decision_add(remem *db, json_t *args, json_t **result);
int exp_op_decision_similar(remem *db, json_t *args, json_t **result);
int exp_op_trajectory_add(remem *db, json_t *args, json_t **result);
int exp_op_trajectory_similar(remem *db, json_t *args, json_t **result);
int exp_op_feedback_add(remem *db, json_t *args, json_t **result);
int exp_op_feedback_similar(remem *db, json_t *args, json_t **result);
int exp_op_fewshot(remem *db, json_t *args, json_t **result);
int exp_op_hydrate(remem *db, json_t *args, json_t **result);

#endif
