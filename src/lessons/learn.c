/*
 * learn.c: candidate lessons from a closed run's own timeline (seed 002's
 * end-of-run "executor self-reflection"), without a model: the named
 * deterministic rule "fix_after_error". For each failure of the run (an
 * error event: fingerprint, tool, normalised text, step), the first later
 * step whose tool input passed the validation gate and raised no error is
 * what worked next; the candidate lesson says so, in words taken from the
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

int lsn_learn_from_run(remem *db, const char *ns, const char *run, const char *domain,
                       const char *session, json_t **added) {
    lsn_list ev = {0}, at = {0};
    lsn_list_opts o = {.keep = of_run, .ctx = (void *)run};
    *added = json_array();
    json_t *seen = json_object();
    int rc = *added && seen ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
    if (!rc) rc = lsn_list_where(db, ns, "error_event", &o, &ev);
    if (!rc) rc = lsn_list_where(db, ns, "attempt", &o, &at);
    for (size_t i = 0; !rc && i < ev.n; i++) {
        const json_t *e = ev.v[i].meta;
        const char *fp = lsn_s(e, "fingerprint");
        if (!fp || json_object_get(seen, fp)) continue; /* one candidate per failure */
        const json_t *a = worked_next(&at, &ev, lsn_i(e, "step", -1), lsn_s(e, "tool") ?: "");
        if (!a) continue;
        json_object_set_new(seen, fp, json_true());
        rc = add_candidate(db, ns, domain, session, e, a, *added);
    }
    json_decref(seen);
    lsn_list_free(&ev);
    lsn_list_free(&at);
    return rc;
}
