/*
 * outcome.c: "lesson.outcome", the end of a run, and the measurement that
 * decides each lesson's status. A lesson earns its place by measured
 * utility over relevant runs, never by being retrieved:
 *
 *   relevant(L)  the closed runs with L's domain key; when fewer than
 *                LSN_PROMOTE_RUNS of them had L injected, or none lacked
 *                it, also the runs of other domains with L's task cluster
 *   with(L)      relevant runs whose --lessons named L
 *   without(L)   the other relevant runs
 *   baseline(L)  mean score of without(L), or LSN_NEUTRAL_BASELINE when
 *                without(L) is empty
 *   utility(L)   mean score of with(L) - baseline(L)
 *
 * helpful_count and harmful_count are the with-runs scored above and below
 * the baseline (recomputed, so they always agree with the runs kept).
 * Promotion, suppression and the transfer lane's faster suppression follow
 * lessons.h's thresholds; each change is written with its reason into the
 * lesson's status_history (so the memory's history row shows it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lessons/lessons.h"

typedef struct stats {
    size_t with, without;
    double sum_with, sum_without, baseline, utility;
    int regression; /* a recent with-run far below the baseline */
    int widened;    /* the task cluster's runs were added */
    size_t helpful, harmful;
} stats;

static int named(const json_t *run, const char *id) {
    return lsn_has(json_object_get(run, "lessons"), id);
}

static const char *lane_of(const json_t *run, const char *id) {
    return lsn_s(json_object_get(run, "lanes"), id);
}

/* Utility of lesson m over the runs (the strict lanes' runs of its
 * domain, widened to its task cluster when that sample is small). */
static void strict_stats(const json_t *m, const char *id, lsn_list *runs, stats *s) {
    memset(s, 0, sizeof *s);
    const char *dom = lsn_s(m, "domain_key"), *cl = lsn_s(m, "task_cluster");
    for (int widen = 0; widen < 2; widen++) {
        if (widen && (!cl || (s->with >= LSN_PROMOTE_RUNS && s->without > 0))) break;
        s->widened = widen;
        for (size_t i = 0; i < runs->n; i++) {
            const json_t *r = runs->v[i].meta;
            const char *rd = lsn_s(r, "domain_key"), *rc = lsn_s(r, "task_cluster");
            int same = rd && dom && !strcmp(rd, dom);
            if (widen ? same || !rc || strcmp(rc, cl) : !same) continue;
            double sc = lsn_d(r, "score", 0);
            if (named(r, id)) {
                s->with++;
                s->sum_with += sc;
            } else {
                s->without++;
                s->sum_without += sc;
            }
        }
    }
    s->baseline = s->without ? s->sum_without / (double)s->without : LSN_NEUTRAL_BASELINE;
    s->utility = s->with ? s->sum_with / (double)s->with - s->baseline : NAN;
    /* Helpful and harmful runs; the newest LSN_REGRESSION_WINDOW
     * with-runs decide "major regression". */
    size_t seen = 0;
    for (size_t i = runs->n; i-- > 0;) {
        const json_t *r = runs->v[i].meta;
        const char *rd = lsn_s(r, "domain_key"), *rc = lsn_s(r, "task_cluster");
        int rel = (rd && dom && !strcmp(rd, dom)) || (s->widened && rc && !strcmp(rc, cl));
        if (!rel || !named(r, id)) continue;
        const char *lane = lane_of(r, id);
        if (lane && !strcmp(lane, "transfer")) continue;
        double sc = lsn_d(r, "score", 0);
        if (sc > s->baseline) s->helpful++;
        if (sc < s->baseline) s->harmful++;
        if (seen++ < LSN_REGRESSION_WINDOW && sc <= s->baseline - LSN_MAJOR_REGRESSION)
            s->regression = 1;
    }
}

/* The transfer lane: runs of other domains L was injected into as a
 * transfer hint, each against its own domain's runs without L. */
static double transfer_utility(const char *id, const char *dom, lsn_list *runs, size_t *n,
                               size_t *helpful, size_t *harmful) {
    double sum = 0;
    *n = 0;
    for (size_t i = 0; i < runs->n; i++) {
        const json_t *r = runs->v[i].meta;
        const char *lane = lane_of(r, id), *rd = lsn_s(r, "domain_key");
        if (!named(r, id) || !lane || strcmp(lane, "transfer") || (rd && dom && !strcmp(rd, dom)))
            continue;
        double base = 0;
        size_t nb = 0;
        for (size_t j = 0; j < runs->n; j++) {
            const json_t *o = runs->v[j].meta;
            const char *od = lsn_s(o, "domain_key");
            if (od && rd && !strcmp(od, rd) && !named(o, id)) {
                base += lsn_d(o, "score", 0);
                nb++;
            }
        }
        base = nb ? base / (double)nb : LSN_NEUTRAL_BASELINE;
        double d = lsn_d(r, "score", 0) - base;
        if (d > 0) (*helpful)++;
        if (d < 0) (*harmful)++;
        sum += d;
        (*n)++;
    }
    return *n ? sum / (double)*n : NAN;
}

static void set_status(json_t *m, const char *to, const char *why, const char *run, int64_t now,
                       json_t *changes) {
    const char *from = lsn_s(m, "status");
    const char *action = !strcmp(from, to)         ? "transfer_suppress"
                         : !strcmp(to, "promoted") ? "promote"
                                                   : "suppress";
    json_t *h = json_pack("{ss ss ss ss ss so}", "action", action, "from", from, "to", to, "reason",
                          why, "run", run, "at", lsn_time_json(now));
    json_t *sh = json_object_get(m, "status_history");
    if (!json_is_array(sh)) json_object_set_new(m, "status_history", sh = json_array());
    json_array_append(sh, h);
    json_object_set_new(m, "status", json_string(json_string_value(json_object_get(h, "to"))));
    json_object_set_new(m, "status_reason", json_string(why));
    json_object_set_new(h, "lesson_id", json_string(lsn_s(m, "lesson_id")));
    json_array_append_new(changes, h);
}

/* One lesson's measurement over the closed runs (read under the
 * namespace's lock), and what its write did. */
typedef struct judged {
    const char *id, *run;
    stats s;
    size_t tn, th, tx;
    double tu;
    int64_t now;
    json_t *changes; /* the status changes of the whole outcome (shared) */
    char actor[512];
} judged;

static void measure(judged *j, const json_t *m, lsn_list *runs) {
    strict_stats(m, j->id, runs, &j->s);
    j->tu = transfer_utility(j->id, lsn_s(m, "domain_key"), runs, &j->tn, &j->th, &j->tx);
}

/* The measurement's fields: owned by the outcome, recomputed from the runs. */
static void set_measured(json_t *m, const judged *j) {
    const stats *s = &j->s;
    json_object_set_new(m, "utility", isnan(s->utility) ? json_null() : json_real(s->utility));
    json_object_set_new(m, "transfer_utility", isnan(j->tu) ? json_null() : json_real(j->tu));
    json_object_set_new(m, "relevant_runs",
                        json_pack("{si si si sf}", "with", (int)s->with, "without", (int)s->without,
                                  "transfer", (int)j->tn, "baseline", s->baseline));
    /* Home and away are counted apart: a lesson that misleads another
     * domain is not less reliable where it was learned. */
    json_object_set_new(m, "helpful_count", json_integer((json_int_t)s->helpful));
    json_object_set_new(m, "harmful_count", json_integer((json_int_t)s->harmful));
    json_object_set_new(m, "transfer_helpful_count", json_integer((json_int_t)j->th));
    json_object_set_new(m, "transfer_harmful_count", json_integer((json_int_t)j->tx));
}

/* The status the policy gives lesson m now (its status and retrieval
 * counts as stored at this moment): the change made, or nothing. */
static void decide(json_t *m, judged *j) {
    const stats *s = &j->s;
    const char *st = lsn_s(m, "status");
    if (!st || (strcmp(st, "candidate") && strcmp(st, "promoted"))) return;
    int64_t tretrieved = lsn_i(m, "transfer_retrieval_count", 0);
    int64_t retrieved = lsn_i(m, "retrieval_count", 0) - tretrieved; /* in the strict lane */
    char why[300];
    if (!isnan(s->utility) && retrieved >= LSN_SUPPRESS_RETRIEVALS && s->utility <= 0) {
        snprintf(why, sizeof why,
                 "utility %.3f <= 0 over %zu relevant runs with it (baseline %.3f over %zu), "
                 "retrieved %lld times in its domain",
                 s->utility, s->with, s->baseline, s->without, (long long)retrieved);
        set_status(m, "suppressed", why, j->run, j->now, j->changes);
    } else if (!isnan(j->tu) && tretrieved >= LSN_TRANSFER_RETRIEVALS && j->tu <= 0 &&
               !json_is_true(json_object_get(m, "transfer_blocked"))) {
        /* Suppressed in the transfer lane, after fewer retrievals than the
         * strict lane needs; at home the lesson keeps its status, which
         * its own domain's runs decide. */
        snprintf(why, sizeof why,
                 "transfer lane: utility %.3f <= 0 over %zu runs of other domains, retrieved "
                 "there %lld times",
                 j->tu, j->tn, (long long)tretrieved);
        json_object_set_new(m, "transfer_blocked", json_true());
        set_status(m, st, why, j->run, j->now, j->changes);
    } else if (!strcmp(st, "candidate") && s->with >= LSN_PROMOTE_RUNS &&
               s->utility >= LSN_PROMOTE_UTILITY && !s->regression) {
        snprintf(why, sizeof why,
                 "utility %.3f >= %.2f over %zu relevant runs with it (baseline %.3f over %zu), "
                 "no major regression",
                 s->utility, LSN_PROMOTE_UTILITY, s->with, s->baseline, s->without);
        set_status(m, "promoted", why, j->run, j->now, j->changes);
    }
}

/* The write of one lesson: its measurement, then its status decided on
 * the lesson as stored (an archived lesson keeps its status and tier). */
static int apply_judged(void *ctx, json_t *m, int archived, const char **actor) {
    judged *j = ctx;
    json_t *before = json_deep_copy(m);
    if (!before) return REMEM_ENOMEM;
    size_t n_changes = json_array_size(j->changes);
    set_measured(m, j);
    if (archived <= 0) decide(m, j);
    int changed = !json_equal(before, m);
    json_decref(before);
    if (!changed) return 0;
    json_object_set_new(m, "updated_at", lsn_time_json(j->now));
    json_t *last = json_array_get(j->changes, n_changes);
    if (last) {
        snprintf(j->actor, sizeof j->actor, "lesson.outcome (run %s): %s: %s", j->run,
                 lsn_s(last, "action"), lsn_s(last, "reason"));
        *actor = j->actor;
    }
    return 1;
}

/* The outcome's state, for its hook inside the transaction. */
typedef struct closing {
    const char *ns, *run, *domain, *rid;
    json_t *named, *rmeta, *changes;
    judged *j;
    size_t n_j;
    int64_t now;
    lsn_list ls, runs;
} closing;

/* Inside the transaction: the lessons and runs as committed (no other
 * writer of the namespace until the commit), this run added, and each
 * lesson of the run's domain or named by it measured and queued. */
static int close_inside(remem *db, lsn_batch *b, void *ctx) {
    closing *cl = ctx;
    lsn_list_opts ro = {.borrow = 1}; /* read, never changed */
    int rc = lsn_list_where(db, cl->ns, "lesson", &ro, &cl->ls);
    if (!rc) rc = lsn_list_where(db, cl->ns, "run", &ro, &cl->runs);
    if (rc) return rc;
    lsn_rec *nr = realloc(cl->runs.v, (cl->runs.n + 1) * sizeof *nr);
    if (!nr) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    cl->runs.v = nr;
    nr[cl->runs.n++] = (lsn_rec){.id = strdup(cl->rid),
                                 .text = strdup(""),
                                 .meta = json_incref(cl->rmeta),
                                 .created_at = cl->now,
                                 .updated_at = cl->now};
    if (!nr[cl->runs.n - 1].id || !nr[cl->runs.n - 1].text ||
        !(cl->j = calloc(cl->ls.n + 1, sizeof *cl->j)))
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    for (size_t k = 0; k < cl->ls.n; k++) {
        const json_t *m = cl->ls.v[k].meta;
        const char *d = lsn_s(m, "domain_key");
        if (!(d && !strcmp(d, cl->domain)) && !lsn_has(cl->named, cl->ls.v[k].id)) continue;
        judged *j = &cl->j[cl->n_j++];
        *j = (judged){.id = cl->ls.v[k].id, .run = cl->run, .now = cl->now,
                      .changes = cl->changes};
        measure(j, m, &cl->runs);
        if (lsn_batch_change(b, cl->ns, j->id, "lesson", NULL, NULL, apply_judged, j))
            return eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    return REMEM_OK;
}

/* The hint logs of run ctx (the lanes its lessons ran in). */
static int of_run(const json_t *meta, void *ctx) {
    const char *r = lsn_s(meta, "run");
    return r && !strcmp(r, ctx);
}

/* The lane each named lesson ran in: the run's hint logs say; a lesson
 * injected without a logged retrieval is strict at home, else transfer. */
static json_t *lanes_of(const json_t *named_ids, lsn_list *logs, lsn_list *ls, const char *domain) {
    json_t *lanes = json_object();
    size_t i;
    json_t *e;
    json_array_foreach(named_ids, i, e) {
        const char *id = json_string_value(e);
        const char *lane = NULL;
        for (size_t k = 0; k < logs->n; k++) {
            size_t j;
            json_t *h;
            json_array_foreach(json_object_get(logs->v[k].meta, "hints"), j, h) {
                const char *hid = lsn_s(h, "lesson_id");
                if (hid && !strcmp(hid, id) && (!lane || !strcmp(lsn_s(h, "lane"), "transfer")))
                    lane = lsn_s(h, "lane");
            }
        }
        if (!lane) {
            const char *d = lsn_s(lsn_find(ls, id)->meta, "domain_key");
            lane = d && !strcmp(d, domain) ? "strict" : "transfer";
        }
        json_object_set_new(lanes, id, json_string(lane));
    }
    return lanes;
}

/* The run's record: result, score, lessons and their lanes. */
static json_t *run_record(json_t *args, json_t *lanes, double sc, int64_t now) {
    json_t *named = json_object_get(args, "lessons");
    json_t *r = json_pack("{ss ss ss sf so so so}", "run", lsn_s(args, "run"), "domain_key",
                          lsn_s(args, "domain"), "result", lsn_s(args, "result"), "score", sc,
                          "lessons", named ? json_incref(named) : json_array(), "lanes", lanes,
                          "closed_at", lsn_time_json(now));
    if (!r) return NULL;
    if (json_object_get(args, "steps"))
        json_object_set_new(r, "steps", json_integer(lsn_i(args, "steps", 0)));
    const char *opt[] = {"task_cluster", "session"};
    for (size_t k = 0; k < 2; k++)
        if (lsn_str(args, opt[k], NULL))
            json_object_set_new(r, opt[k], json_string(lsn_str(args, opt[k], NULL)));
    return r;
}

static json_t *answer(closing *cl, const char *text) {
    strbuf t;
    sb_init(&t);
    sb_puts(&t, text);
    size_t i;
    json_t *e;
    json_array_foreach(cl->changes, i, e) {
        sb_printf(&t, "\n  %s: %s -> %s: %s", lsn_s(e, "lesson_id"), lsn_s(e, "from"),
                  lsn_s(e, "to"), lsn_s(e, "reason"));
    }
    json_t *r = json_pack("{ss sO sO so}", "run_id", cl->rid, "run", cl->rmeta, "status_changes",
                          cl->changes, "text", json_string(t.data ? t.data : ""));
    sb_free(&t);
    return r;
}

/* With "learn": the run closed, its candidate lessons (learn.c) go into
 * the answer, after the measurement, so that they are not measured on
 * the run they came from. */
static int learn(remem *db, json_t *args, json_t *result) {
    if (!json_is_true(json_object_get(args, "learn"))) return REMEM_OK;
    json_t *added = NULL;
    const char *how = NULL;
    int rc = lsn_learn_from_run(db, lsn_s(args, "ns"), lsn_s(args, "run"), lsn_s(args, "domain"),
                                lsn_s(args, "session"), &added, &how);
    if (!rc) {
        json_object_set_new(result, "learned_by", json_string(how));
        json_object_set(result, "candidate_lessons", added);
    }
    json_decref(added);
    return rc;
}

int lsn_op_outcome(remem *db, json_t *args, json_t **result) {
    const char *ns = lsn_s(args, "ns"), *run = lsn_s(args, "run");
    const char *domain = lsn_s(args, "domain"), *res = lsn_s(args, "result");
    double sc = lsn_d(args, "score", !strcmp(res, "pass") ? 1.0 : 0.0);
    char rid[300], text[400], msg[400];
    snprintf(rid, sizeof rid, "run_%s", run);
    closing cl = {.ns = ns, .run = run, .domain = domain, .rid = rid,
                  .named = json_object_get(args, "lessons"), .changes = json_array(),
                  .now = util_now_ms()};
    lsn_list ls = {0}, logs = {0};
    lsn_batch b = {0};
    lsn_list_opts lo = {.keep = of_run, .ctx = (void *)run, .borrow = 1}, ro = {.borrow = 1};
    int rc = lsn_list_where(db, ns, "lesson", &ro, &ls);
    if (!rc) rc = lsn_list_where(db, ns, "hint_log", &lo, &logs);
    if (rc) goto out;
    size_t i;
    json_t *e;
    json_array_foreach(cl.named, i, e) {
        if (!lsn_find(&ls, json_string_value(e))) {
            rc = eng_fail(db, REMEM_EINVAL, "lessons: no lesson %s in %s", json_string_value(e), ns);
            goto out;
        }
    }
    json_t *lanes = lanes_of(cl.named, &logs, &ls, domain);
    if (!lanes || !cl.changes || !(cl.rmeta = run_record(args, lanes, sc, cl.now))) goto oom;
    snprintf(text, sizeof text, "run %s (%s): %s, score %.2f, %zu lessons", run, domain, res, sc,
             json_array_size(cl.named));
    snprintf(msg, sizeof msg, "run %s is already closed", run);
    /* The run first (its id unique: a run closes once), then, under the
     * namespace's lock, every lesson it concerns measured and written. */
    if (lsn_batch_put(&b, ns, rid, "run", text, cl.rmeta) || lsn_batch_unique(&b, msg)) goto oom;
    b.inside = close_inside;
    b.inside_ctx = &cl;
    if ((rc = lsn_batch_commit(db, &b))) goto out;
    if ((*result = answer(&cl, text))) {
        if ((rc = learn(db, args, *result))) {
            json_decref(*result);
            *result = NULL;
        }
        goto out;
    }
oom:
    rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
out:
    lsn_batch_free(&b);
    json_decref(cl.rmeta);
    json_decref(cl.changes);
    free(cl.j);
    lsn_list_free(&cl.ls);
    lsn_list_free(&cl.runs);
    lsn_list_free(&ls);
    lsn_list_free(&logs);
    return rc;
}
