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

/* Measure lesson m and change its status when the policy says so. */
static void judge(json_t *m, const char *id, lsn_list *runs, const char *run, int64_t now,
                  json_t *changes) {
    stats s;
    strict_stats(m, id, runs, &s);
    size_t tn = 0, th = 0, tx = 0;
    double tu = transfer_utility(id, lsn_s(m, "domain_key"), runs, &tn, &th, &tx);
    json_object_set_new(m, "utility", isnan(s.utility) ? json_null() : json_real(s.utility));
    json_object_set_new(m, "transfer_utility", isnan(tu) ? json_null() : json_real(tu));
    json_object_set_new(m, "relevant_runs",
                        json_pack("{si si si sf}", "with", (int)s.with, "without", (int)s.without,
                                  "transfer", (int)tn, "baseline", s.baseline));
    /* Home and away are counted apart: a lesson that misleads another
     * domain is not less reliable where it was learned. */
    json_object_set_new(m, "helpful_count", json_integer((json_int_t)s.helpful));
    json_object_set_new(m, "harmful_count", json_integer((json_int_t)s.harmful));
    json_object_set_new(m, "transfer_helpful_count", json_integer((json_int_t)th));
    json_object_set_new(m, "transfer_harmful_count", json_integer((json_int_t)tx));
    const char *st = lsn_s(m, "status");
    if (!st || (strcmp(st, "candidate") && strcmp(st, "promoted"))) return;
    int64_t tretrieved = lsn_i(m, "transfer_retrieval_count", 0);
    int64_t retrieved = lsn_i(m, "retrieval_count", 0) - tretrieved; /* in the strict lane */
    char why[300];
    if (!isnan(s.utility) && retrieved >= LSN_SUPPRESS_RETRIEVALS && s.utility <= 0) {
        snprintf(why, sizeof why,
                 "utility %.3f <= 0 over %zu relevant runs with it (baseline %.3f over %zu), "
                 "retrieved %lld times in its domain",
                 s.utility, s.with, s.baseline, s.without, (long long)retrieved);
        set_status(m, "suppressed", why, run, now, changes);
    } else if (!isnan(tu) && tretrieved >= LSN_TRANSFER_RETRIEVALS && tu <= 0 &&
               !json_is_true(json_object_get(m, "transfer_blocked"))) {
        /* Suppressed in the transfer lane, after fewer retrievals than the
         * strict lane needs; at home the lesson keeps its status, which
         * its own domain's runs decide. */
        snprintf(why, sizeof why,
                 "transfer lane: utility %.3f <= 0 over %zu runs of other domains, retrieved "
                 "there %lld times",
                 tu, tn, (long long)tretrieved);
        json_object_set_new(m, "transfer_blocked", json_true());
        set_status(m, st, why, run, now, changes);
    } else if (!strcmp(st, "candidate") && s.with >= LSN_PROMOTE_RUNS &&
               s.utility >= LSN_PROMOTE_UTILITY && !s.regression) {
        snprintf(why, sizeof why,
                 "utility %.3f >= %.2f over %zu relevant runs with it (baseline %.3f over %zu), "
                 "no major regression",
                 s.utility, LSN_PROMOTE_UTILITY, s.with, s.baseline, s.without);
        set_status(m, "promoted", why, run, now, changes);
    }
}

int lsn_op_outcome(remem *db, json_t *args, json_t **result) {
    const char *ns = lsn_s(args, "ns"), *run = lsn_s(args, "run");
    const char *domain = lsn_s(args, "domain"), *res = lsn_s(args, "result");
    json_t *named_ids = json_object_get(args, "lessons");
    double sc = lsn_d(args, "score", !strcmp(res, "pass") ? 1.0 : 0.0);
    lsn_list ls = {0}, runs = {0}, logs = {0};
    lsn_batch b = {0};
    json_t *rmeta = NULL, *changes = json_array();
    char rid[300];
    snprintf(rid, sizeof rid, "run_%s", run);
    int rc = lsn_list_kind(db, ns, "lesson", &ls);
    if (!rc) rc = lsn_list_kind(db, ns, "run", &runs);
    if (!rc) rc = lsn_list_kind(db, ns, "hint_log", &logs);
    if (rc) goto out;
    if (lsn_find(&runs, rid)) {
        rc = eng_fail(db, REMEM_EINVAL, "run %s is already closed", run);
        goto out;
    }
    size_t i;
    json_t *e;
    json_array_foreach(named_ids, i, e) {
        if (!lsn_find(&ls, json_string_value(e))) {
            rc =
                eng_fail(db, REMEM_EINVAL, "lessons: no lesson %s in %s", json_string_value(e), ns);
            goto out;
        }
    }
    /* The lane each named lesson ran in: the run's hint logs say; a lesson
     * injected without a logged retrieval is strict at home, else transfer. */
    json_t *lanes = json_object();
    json_array_foreach(named_ids, i, e) {
        const char *id = json_string_value(e);
        const char *lane = NULL;
        for (size_t k = 0; k < logs.n; k++) {
            const char *lr = lsn_s(logs.v[k].meta, "run");
            if (!lr || strcmp(lr, run)) continue;
            size_t j;
            json_t *h;
            json_array_foreach(json_object_get(logs.v[k].meta, "hints"), j, h) {
                const char *hid = lsn_s(h, "lesson_id");
                if (hid && !strcmp(hid, id) && (!lane || !strcmp(lsn_s(h, "lane"), "transfer")))
                    lane = lsn_s(h, "lane");
            }
        }
        if (!lane) {
            const char *d = lsn_s(lsn_find(&ls, id)->meta, "domain_key");
            lane = d && !strcmp(d, domain) ? "strict" : "transfer";
        }
        json_object_set_new(lanes, id, json_string(lane));
    }
    int64_t now = util_now_ms();
    rmeta = json_pack("{ss ss ss sf so so so}", "run", run, "domain_key", domain, "result", res,
                      "score", sc, "lessons", named_ids ? json_incref(named_ids) : json_array(),
                      "lanes", lanes, "closed_at", lsn_time_json(now));
    if (json_object_get(args, "steps"))
        json_object_set_new(rmeta, "steps", json_integer(lsn_i(args, "steps", 0)));
    const char *opt[] = {"task_cluster", "session"};
    for (size_t k = 0; k < 2; k++)
        if (lsn_str(args, opt[k], NULL))
            json_object_set_new(rmeta, opt[k], json_string(lsn_str(args, opt[k], NULL)));
    /* Judge with this run counted: add it to the list as it will be kept. */
    lsn_rec *nr = realloc(runs.v, (runs.n + 1) * sizeof *runs.v);
    if (!nr) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto out;
    }
    runs.v = nr;
    runs.v[runs.n++] = (lsn_rec){.id = strdup(rid),
                                 .text = strdup(""),
                                 .meta = json_incref(rmeta),
                                 .created_at = now,
                                 .updated_at = now};
    if (!runs.v[runs.n - 1].id || !runs.v[runs.n - 1].text) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < ls.n; k++) {
        json_t *m = ls.v[k].meta;
        const char *d = lsn_s(m, "domain_key");
        if (!(d && !strcmp(d, domain)) && !lsn_has(named_ids, ls.v[k].id)) continue;
        char *before = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);
        size_t n_changes = json_array_size(changes);
        judge(m, ls.v[k].id, &runs, run, now, changes);
        char *after = json_dumps(m, JSON_COMPACT | JSON_SORT_KEYS);
        if (json_array_size(changes) > n_changes) {
            /* Written after the run, with the reason as the history row's
             * actor (a failure in between is healed by the next outcome,
             * which judges again from the runs). */
            json_object_set_new(m, "updated_at", lsn_time_json(now));
        } else if (!before || !after || strcmp(before, after)) {
            json_object_set_new(m, "updated_at", lsn_time_json(now));
            if (!rc)
                rc = lsn_batch_put(&b, ns, ls.v[k].id, "lesson", ls.v[k].text, m,
                                   ls.v[k].created_at);
        }
        free(before);
        free(after);
    }
    char text[400];
    snprintf(text, sizeof text, "run %s (%s): %s, score %.2f, %zu lessons", run, domain, res, sc,
             json_array_size(named_ids));
    if (!rc) rc = lsn_batch_put(&b, ns, rid, "run", text, rmeta, 0);
    if (rc) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto out;
    }
    rc = lsn_batch_commit(db, &b);
    if (rc) goto out;
    for (size_t k = 0; !rc && k < ls.n; k++) {
        json_t *last = NULL;
        json_array_foreach(changes, i, e) if (!strcmp(lsn_s(e, "lesson_id"), ls.v[k].id)) last = e;
        if (!last) continue;
        char actor[512];
        snprintf(actor, sizeof actor, "lesson.outcome (run %s): %s: %s", run, lsn_s(last, "action"),
                 lsn_s(last, "reason"));
        rc = lsn_write_status(db, ns, ls.v[k].id, ls.v[k].meta, actor);
    }
    if (rc) goto out;
    strbuf t;
    sb_init(&t);
    sb_puts(&t, text);
    json_array_foreach(changes, i, e) {
        sb_printf(&t, "\n  %s: %s -> %s: %s", lsn_s(e, "lesson_id"), lsn_s(e, "from"),
                  lsn_s(e, "to"), lsn_s(e, "reason"));
    }
    *result = json_pack("{ss sO sO so}", "run_id", rid, "run", rmeta, "status_changes", changes,
                        "text", json_string(t.data ? t.data : ""));
    sb_free(&t);
    if (!*result) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
out:
    lsn_batch_free(&b);
    json_decref(rmeta);
    json_decref(changes);
    lsn_list_free(&ls);
    lsn_list_free(&runs);
    lsn_list_free(&logs);
    return rc;
}
