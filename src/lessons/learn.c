/*
 * learn.c: candidate lessons from a closed run's own timeline (seed 002's
 * end-of-run "executor self-reflection").
 *
 * With an LLM, the model reflects: it is shown the run's failures,
 * numbered (step, tool, normalised error) with what the run tried after
 * each, and asked for short rules, each naming the failure it answers. A
 * rule must name a failure of the list: it gets that failure's
 * fingerprint, and one that names none is dropped. The rule's
 * words are the model's; the facts it answers are the run's.
 *
 * Without one (or when the model fails, or gives nothing usable), the
 * named deterministic rule "fix_after_error": for each failure (an error
 * event: fingerprint, tool, normalised text, step), the first later step
 * whose tool input passed the validation gate and raised no error is what
 * worked next; the candidate lesson says so, in words taken from the
 * records only:
 *
 *   After "no such table: <q>" from run_sqlite, what worked next (step 3): {"sql":...}
 *
 * with the failure's fingerprint, so that it comes back when that failure
 * does. A failure nothing fixed later in the run teaches nothing, and no
 * candidate is made for it: a lesson is never invented. The candidates go
 * through lesson.add (one lesson per rule and domain, counters kept), as
 * status candidate; their utility decides the rest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lessons/lessons.h"
#include "llm/llm.h"
#include "util/util.h"

#define INPUT_CHARS 300 /* of the working input quoted in the rule */

static int of_run(const json_t *meta, void *ctx) {
    const char *r = lsn_s(meta, "run");
    return r && !strcmp(r, ctx);
}

/* Did the run record an error event at step? */
static int failed_at(const lsn_list *ev, int64_t step) {
    for (size_t i = 0; i < ev->n; i++)
        if (lsn_i(ev->v[i].meta, "step", -1) == step) return 1;
    return 0;
}

/* The first attempt after step, valid, of tool (when the attempt names
 * one), at a step without an error event; NULL if none. */
static const json_t *worked_next(const lsn_list *at, const lsn_list *ev, int64_t step,
                                 const char *tool) {
    const json_t *best = NULL;
    int64_t best_step = 0;
    for (size_t i = 0; i < at->n; i++) {
        const json_t *m = at->v[i].meta;
        int64_t s = lsn_i(m, "step", -1);
        const char *t = lsn_s(m, "tool");
        if (s <= step || !json_is_true(json_object_get(m, "valid")) || (t && strcmp(t, tool)) ||
            failed_at(ev, s) || (best && s >= best_step))
            continue;
        best = m;
        best_step = s;
    }
    return best;
}

/* The rule of one fixed failure (malloc'd). */
static char *rule_of(const json_t *event, const json_t *attempt) {
    char *input = json_dumps(json_object_get(attempt, "input"), JSON_COMPACT | JSON_ENCODE_ANY);
    size_t n = 64 + strlen(lsn_s(event, "normalised") ?: "") + strlen(lsn_s(event, "tool") ?: "") +
               INPUT_CHARS + 8;
    char *r = malloc(n);
    if (r)
        snprintf(r, n, "After \"%s\" from %s, what worked next (step %lld): %.*s%s",
                 lsn_s(event, "normalised") ?: "", lsn_s(event, "tool") ?: "",
                 (long long)lsn_i(attempt, "step", 0), INPUT_CHARS, input ? input : "",
                 input && strlen(input) > INPUT_CHARS ? "..." : "");
    free(input);
    return r;
}

static int add_candidate(remem *db, const char *ns, const char *domain, const char *session,
                         const json_t *event, const json_t *attempt, json_t *added) {
    char *rule = rule_of(event, attempt);
    json_t *args = json_pack("{ss ss ss s[s]}", "ns", ns, "domain", domain, "rule", rule ? rule : "",
                             "fingerprint", lsn_s(event, "fingerprint") ?: "");
    free(rule);
    if (!rule || !args) {
        json_decref(args);
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    if (session) json_object_set_new(args, "session", json_string(session));
    json_t *res = NULL;
    int rc = lsn_op_add(db, args, &res);
    json_decref(args);
    if (!rc) json_array_append(added, json_object_get(res, "lesson"));
    json_decref(res);
    return rc;
}

/* ---- with an LLM ---- */

#define MAX_FAILURES 20 /* shown to the model */
#define MAX_RULES    3  /* taken from its answer */

/* The prompt: the run's failures, numbered, each with the valid inputs
 * tried after it. */
static char *reflect_prompt(const char *run, const char *domain, const lsn_list *ev,
                            const lsn_list *at, size_t n) {
    strbuf b;
    sb_init(&b);
    sb_printf(&b, "Run %s of an agent in the domain %s failed at these steps:\n", run, domain);
    for (size_t i = 0; i < n; i++) {
        const json_t *e = ev->v[i].meta;
        sb_printf(&b, "%zu. step %lld, tool %s: %s\n", i + 1, (long long)lsn_i(e, "step", 0),
                  lsn_s(e, "tool") ?: "", lsn_s(e, "normalised") ?: "");
        const json_t *a = worked_next(at, ev, lsn_i(e, "step", -1), lsn_s(e, "tool") ?: "");
        if (a) {
            char *in = json_dumps(json_object_get(a, "input"), JSON_COMPACT | JSON_ENCODE_ANY);
            sb_printf(&b, "   then step %lld worked with: %.*s\n", (long long)lsn_i(a, "step", 0),
                      INPUT_CHARS, in ? in : "");
            free(in);
        }
    }
    sb_printf(&b, "\nWrite at most %d short rules the agent should follow next time, each for one "
                  "numbered failure above, only from what the run shows.\nAnswer in JSON: "
                  "{\"lessons\": [{\"failure\": 1, \"rule\": \"...\"}]}",
              MAX_RULES);
    return sb_take(&b);
}

/* The model's rules added; *used 0 when it gave nothing usable. */
static int learn_llm(remem *db, const char *ns, const char *run, const char *domain,
                     const char *session, const lsn_list *ev, const lsn_list *at, json_t *added,
                     int *used, size_t *dropped) {
    size_t n = ev->n < MAX_FAILURES ? ev->n : MAX_FAILURES;
    char *prompt = reflect_prompt(run, domain, ev, at, n), *answer = NULL, err[256];
    llm_usage u = {0};
    *used = 0;
    if (!prompt) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    int rc = eng_llm_chat(db, "lesson.outcome",
                          "You review an agent's run and write the lessons it should keep. "
                          "Answer only with the JSON asked for.",
                          prompt, 1, &answer, &u);
    free(prompt);
    json_t *j = rc ? NULL : llm_answer_json(answer, err, sizeof err);
    free(answer);
    eng_ok(db); /* a failed reflection falls back; it does not fail the run */
    json_t *items = json_is_array(j) ? j : json_object_get(j, "lessons");
    size_t i;
    json_t *it;
    rc = REMEM_OK;
    json_array_foreach(items, i, it) {
        double f = json_number_value(json_object_get(it, "failure"));
        const char *rule = json_string_value(json_object_get(it, "rule"));
        if (i >= MAX_RULES || !rule || !*rule || !(f >= 1 && f <= (double)n) || f != (long)f) {
            (*dropped)++;
            continue;
        }
        json_t *e = ev->v[(size_t)f - 1].meta;
        json_t *args = json_pack("{ss ss ss s[s]}", "ns", ns, "domain", domain, "rule", rule,
                                 "fingerprint", lsn_s(e, "fingerprint") ?: "");
        if (args && session) json_object_set_new(args, "session", json_string(session));
        json_t *res = NULL;
        rc = args ? lsn_op_add(db, args, &res) : eng_fail(db, REMEM_ENOMEM, "out of memory");
        json_decref(args);
        if (rc) break;
        json_array_append(added, json_object_get(res, "lesson"));
        json_decref(res);
        *used = 1;
    }
    json_decref(j);
    return rc;
}

/* ---- without one: fix_after_error ---- */

static int learn_fixes(remem *db, const char *ns, const char *domain, const char *session,
                       const lsn_list *ev, const lsn_list *at, json_t *added) {
    json_t *seen = json_object();
    int rc = seen ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < ev->n; i++) {
        const json_t *e = ev->v[i].meta;
        const char *fp = lsn_s(e, "fingerprint");
        if (!fp || json_object_get(seen, fp)) continue; /* one candidate per failure */
        const json_t *a = worked_next(at, ev, lsn_i(e, "step", -1), lsn_s(e, "tool") ?: "");
        if (!a) continue;
        json_object_set_new(seen, fp, json_true());
        rc = add_candidate(db, ns, domain, session, e, a, added);
    }
    json_decref(seen);
    return rc;
}

int lsn_learn_from_run(remem *db, const char *ns, const char *run, const char *domain,
                       const char *session, json_t **added, const char **how) {
    lsn_list ev = {0}, at = {0};
    lsn_list_opts o = {.keep = of_run, .ctx = (void *)run};
    *added = json_array();
    *how = "fix_after_error";
    int rc = *added ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
    if (!rc) rc = lsn_list_where(db, ns, "error_event", &o, &ev);
    if (!rc) rc = lsn_list_where(db, ns, "attempt", &o, &at);
    int used = 0;
    size_t dropped = 0;
    if (!rc && ev.n && eng_llm(db)) {
        rc = learn_llm(db, ns, run, domain, session, &ev, &at, *added, &used, &dropped);
        if (used) *how = "llm";
    }
    if (!rc && !used) rc = learn_fixes(db, ns, domain, session, &ev, &at, *added);
    lsn_list_free(&ev);
    lsn_list_free(&at);
    return rc;
}

