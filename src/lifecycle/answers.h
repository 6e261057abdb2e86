/*
 * answers.h: the readers of what the model answers to the lifecycle's
 * prompts (reflection's questions and insights, a plan, a summary). They
 * sit on llm_answer_json (JSON found in prose or a code fence) and accept
 * the shapes models commonly give ({"questions": [...]} or a bare list,
 * citations as numbers or numeric strings, a plan as a numbered or
 * bulleted list in prose), and nothing else: whatever
 * they cannot use is an error with a message, or an item dropped and
 * counted. Pure (no store, no network): fuzz/fuzz_lifecycle.c runs them.
 */
#ifndef REMEM_LIFECYCLE_ANSWERS_H
#define REMEM_LIFECYCLE_ANSWERS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* At most max non-empty questions, as a JSON array of strings (a new
 * reference); NULL with err when there is none. */
json_t *answer_questions(const char *answer, size_t max, char *err, size_t cap);

/* One insight: its text and the statements it cites, 0-based, each once,
 * in the order cited. */
typedef struct answer_insight {
    char *text;
    size_t *cites;
    size_t n_cites;
} answer_insight;

/* The insights of an answer about statements numbered 1..n_statements: at
 * most max, each with a text and at least one valid citation (others are
 * skipped). A citation that is not a whole number in 1..n_statements is
 * dropped and counted in *ignored. Returns 0 (*out malloc'd, *n >= 0), or
 * -1 with err when the answer holds no JSON. */
int answer_insights(const char *answer, size_t n_statements, size_t max, answer_insight **out,
                    size_t *n, int64_t *ignored, char *err, size_t cap);
void answer_insights_free(answer_insight *v, size_t n);

/* "Plan for: GOAL" and the numbered steps of {"plan": [...]} (or "steps",
 * a bare list, or one string), malloc'd; NULL with err. */
char *answer_plan(const char *goal, const char *answer, char *err, size_t cap);

/* The text of {"summary": "..."} (or a bare JSON string), malloc'd; NULL
 * with err. */
char *answer_summary(const char *answer, char *err, size_t cap);

#endif
