/*
 * timeline.c: "timeline", what happened in a run and what memory decided,
 * read back from the memories the other lesson operations kept (attempts,
 * error events, hint logs, the run's outcome, the lessons' status
 * histories). Three views, as seed 002 asks:
 *   attempts   per step: the tool input, the validation result, the
 *              execution result, error events with fingerprints, hints
 *              injected (lesson ids, lanes), whether the next step changed
 *   decisions  retrieve / inject / conflict / suppress / promote / reflect,
 *              in the order they happened
 *   summary    pass rate, steps, errors, fingerprint recurrence, lesson
 *              activations, help ratio, promoted and suppressed counts,
 *              transfer activation rate (of one run, or of every run)
 * Reading only: nothing is written, nothing is touched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lessons/lessons.h"

/* Steps (attempts view) or decisions (decisions view) in one answer
 * unless "limit" says otherwise; "offset" and the answer's next_offset
 * page through the rest. */
#define TL_PAGE 1000

/* The records of a list that name a run, sorted by (run, step, position
 * in the list): one run's records at one step are a contiguous range,
 * found by binary search, in the order they were written. This is what
 * keeps a timeline n log n: the views look up a step's attempts, events
 * and hint logs instead of scanning every record for every step. */
typedef struct rs_key {
    const char *run; /* borrowed from the record's metadata */
    int64_t step;    /* -1: none */
    size_t i;
} rs_key;

typedef struct rs_ix {
    rs_key *k;
    size_t n;
} rs_ix;

typedef struct tl {
    lsn_list at, ev, logs, runs, ls;
    rs_ix at_ix, ev_ix, logs_ix;
    size_t offset, limit; /* the page of steps or decisions answered */
    size_t total;         /* how many there are */
} tl;

static void tl_free(tl *t) {
    free(t->at_ix.k);
    free(t->ev_ix.k);
    free(t->logs_ix.k);
    lsn_list_free(&t->at);
    lsn_list_free(&t->ev);
    lsn_list_free(&t->logs);
    lsn_list_free(&t->runs);
    lsn_list_free(&t->ls);
}

static int in_run(const lsn_rec *r, const char *run) {
    const char *x = lsn_s(r->meta, "run");
    return x && (!run || !strcmp(x, run));
}

static int64_t step_of(const lsn_rec *r) { return lsn_i(r->meta, "step", -1); }

static int rs_cmp_at(const rs_key *k, const char *run, int64_t step) {
    int c = strcmp(k->run, run);
    if (c) return c;
    return k->step < step ? -1 : k->step > step;
}

static int rs_cmp(const void *a, const void *b) {
    const rs_key *x = a, *y = b;
    int c = rs_cmp_at(x, y->run, y->step);
    return c ? c : (x->i < y->i ? -1 : x->i > y->i);
}

static int rs_build(const lsn_list *l, rs_ix *ix) {
    ix->n = 0;
    if (!(ix->k = malloc((l->n ? l->n : 1) * sizeof *ix->k))) return -1;
    for (size_t i = 0; i < l->n; i++) {
        const char *run = lsn_s(l->v[i].meta, "run");
        if (run) ix->k[ix->n++] = (rs_key){run, step_of(&l->v[i]), i};
    }
    if (ix->n > 1) qsort(ix->k, ix->n, sizeof *ix->k, rs_cmp);
    return 0;
}

/* [*a, *b): the positions in ix of run's records at step. */
static void rs_range(const rs_ix *ix, const char *run, int64_t step, size_t *a, size_t *b) {
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rs_cmp_at(&ix->k[mid], run, step) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *a = *b = lo;
    while (*b < ix->n && !rs_cmp_at(&ix->k[*b], run, step)) (*b)++;
}

/* The fingerprints of the events of run at step, as an array. */
static json_t *step_fps(tl *t, const char *run, int64_t s) {
    json_t *a = json_array();
    size_t lo, hi;
    rs_range(&t->ev_ix, run, s, &lo, &hi);
    for (size_t x = lo; x < hi; x++)
        json_array_append_new(a, json_string(lsn_s(t->ev.v[t->ev_ix.k[x].i].meta, "fingerprint")));
    return a;
}

static const json_t *last_valid_input(tl *t, const char *run, int64_t s) {
    const json_t *in = NULL;
    size_t lo, hi;
    rs_range(&t->at_ix, run, s, &lo, &hi);
    for (size_t x = lo; x < hi; x++) {
        const json_t *m = t->at.v[t->at_ix.k[x].i].meta;
        if (json_is_true(json_object_get(m, "valid"))) in = json_object_get(m, "input");
    }
    return in;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static json_t *view_attempts(tl *t, const char *run, strbuf *txt) {
    size_t cap = t->at.n + t->ev.n + t->logs.n + 1, n = 0;
    int64_t *steps = malloc(cap * sizeof *steps);
    if (!steps) return NULL;
    lsn_list *srcs[] = {&t->at, &t->ev, &t->logs};
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < srcs[k]->n; i++) {
            int64_t s = step_of(&srcs[k]->v[i]);
            if (in_run(&srcs[k]->v[i], run) && s >= 0) steps[n++] = s;
        }
    if (n > 1) qsort(steps, n, sizeof *steps, cmp_i64);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (!u || steps[u - 1] != steps[i]) steps[u++] = steps[i];
    n = u;
    t->total = n;
    json_t *out = json_array(), *pre = json_array();
    for (size_t i = 0; i < t->logs.n; i++)
        if (in_run(&t->logs.v[i], run) && step_of(&t->logs.v[i]) < 0) {
            size_t j;
            json_t *h;
            json_array_foreach(json_object_get(t->logs.v[i].meta, "hints"), j, h)
                json_array_append_new(pre, json_pack("{sO sO sO}", "lesson_id",
                                                     json_object_get(h, "lesson_id"), "lane",
                                                     json_object_get(h, "lane"), "score",
                                                     json_object_get(h, "score")));
        }
    sb_printf(txt, "run %s\n", run);
    if (json_array_size(pre)) {
        sb_puts(txt, "pre-run hints:");
        size_t j;
        json_t *h;
        json_array_foreach(pre, j, h)
            sb_printf(txt, " %s[%s]", lsn_s(h, "lesson_id"), lsn_s(h, "lane"));
        sb_puts(txt, "\n");
    }
    size_t end = t->offset + t->limit < n ? t->offset + t->limit : n;
    for (size_t k = t->offset; k < end; k++) {
        int64_t s = steps[k];
        json_t *atts = json_array(), *evs = json_array(), *hints = json_array();
        const char *validation = NULL;
        size_t lo, hi;
        rs_range(&t->at_ix, run, s, &lo, &hi);
        for (size_t x = lo; x < hi; x++) {
            const json_t *m = t->at.v[t->at_ix.k[x].i].meta;
            json_array_append_new(atts,
                                  json_pack("{sO sO sO sO}", "input", json_object_get(m, "input"),
                                            "valid", json_object_get(m, "valid"), "violations",
                                            json_object_get(m, "violations"), "signal",
                                            json_object_get(m, "signal")));
            validation = json_is_true(json_object_get(m, "valid")) ? "valid" : "invalid";
        }
        rs_range(&t->ev_ix, run, s, &lo, &hi);
        for (size_t x = lo; x < hi; x++) {
            const json_t *m = t->ev.v[t->ev_ix.k[x].i].meta;
            json_array_append_new(
                evs, json_pack("{sO sO sO sO}", "channel", json_object_get(m, "channel"),
                               "fingerprint", json_object_get(m, "fingerprint"), "tool",
                               json_object_get(m, "tool"), "error", json_object_get(m, "error")));
        }
        rs_range(&t->logs_ix, run, s, &lo, &hi);
        for (size_t x = lo; x < hi; x++) {
            const json_t *lm = t->logs.v[t->logs_ix.k[x].i].meta;
            size_t j;
            json_t *h;
            json_array_foreach(json_object_get(lm, "hints"), j, h) {
                json_array_append_new(
                    hints, json_pack("{sO sO sO ss}", "lesson_id", json_object_get(h, "lesson_id"),
                                     "lane", json_object_get(h, "lane"), "score",
                                     json_object_get(h, "score"), "mode", lsn_s(lm, "mode")));
            }
        }
        const char *exec = json_array_size(evs)                         ? "error"
                           : validation && !strcmp(validation, "valid") ? "ok"
                                                                        : NULL;
        /* Did the next step change? Its valid input differs, or, without
         * inputs, its failures differ from this step's. */
        json_t *changed = json_null();
        if (k + 1 < n) {
            const json_t *a = last_valid_input(t, run, s),
                         *b = last_valid_input(t, run, steps[k + 1]);
            if (a && b) {
                changed = json_boolean(!json_equal((json_t *)a, (json_t *)b));
            } else if (json_array_size(evs)) {
                json_t *f0 = step_fps(t, run, s), *f1 = step_fps(t, run, steps[k + 1]);
                int same = 0;
                for (size_t x = 0; x < json_array_size(f1); x++)
                    same |= lsn_has(f0, json_string_value(json_array_get(f1, x)));
                changed = json_boolean(!same);
                json_decref(f0);
                json_decref(f1);
            }
        }
        json_t *row = json_pack("{sI so so so so}", "step", (json_int_t)s, "attempts", atts,
                                "events", evs, "hints", hints, "next_step_changed", changed);
        json_object_set_new(row, "validation", validation ? json_string(validation) : json_null());
        json_object_set_new(row, "execution", exec ? json_string(exec) : json_null());
        json_array_append_new(out, row);
        sb_printf(txt, "step %lld: validation %s, execution %s", (long long)s,
                  validation ? validation : "-", exec ? exec : "-");
        size_t j;
        json_t *e;
        json_array_foreach(evs, j, e)
            sb_printf(txt, "\n  error %s %s", lsn_s(e, "channel"), lsn_s(e, "fingerprint"));
        json_array_foreach(hints, j, e)
            sb_printf(txt, "\n  hint %s [%s]", lsn_s(e, "lesson_id"), lsn_s(e, "lane"));
        if (json_is_boolean(changed))
            sb_printf(txt, "\n  next step changed: %s", json_is_true(changed) ? "yes" : "no");
        sb_puts(txt, "\n");
    }
    free(steps);
    return json_pack("{so so}", "pre_run_hints", pre, "steps", out);
}

typedef struct dec {
    int64_t at;
    size_t seq;
    json_t *j;
} dec;

static int dec_cmp(const void *a, const void *b) {
    const dec *x = a, *y = b;
    if (x->at != y->at) return x->at < y->at ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int64_t ms_of(const json_t *m, const char *key) {
    int64_t ms = 0;
    const char *s = lsn_s(m, key);
    return s && !remem_parse_time(s, &ms) ? ms : 0;
}

static json_t *view_decisions(tl *t, const char *run, strbuf *txt) {
    dec *d = NULL;
    size_t n = 0, cap = 0;
#define PUSH(when, obj)                            \
    do {                                           \
        if (n == cap) {                            \
            cap = cap ? cap * 2 : 32;              \
            dec *nd = realloc(d, cap * sizeof *d); \
            if (!nd) goto oom;                     \
            d = nd;                                \
        }                                          \
        d[n] = (dec){(when), n, (obj)};            \
        n++;                                       \
    } while (0)
    for (size_t i = 0; i < t->logs.n; i++) {
        lsn_rec *r = &t->logs.v[i];
        if (!in_run(r, run)) continue;
        const json_t *m = r->meta;
        json_t *base = json_pack("{ss sO sO sO sO sI}", "action", "retrieve", "mode",
                                 json_object_get(m, "mode"), "policy", json_object_get(m, "policy"),
                                 "strict_weak", json_object_get(m, "strict_weak"),
                                 "transfer_considered", json_object_get(m, "transfer_considered"),
                                 "hints", (json_int_t)json_array_size(json_object_get(m, "hints")));
        if (step_of(r) >= 0) json_object_set_new(base, "step", json_integer(step_of(r)));
        PUSH(r->created_at, base);
        size_t j;
        json_t *h;
        json_array_foreach(json_object_get(m, "hints"), j, h)
            PUSH(r->created_at,
                 json_pack("{ss sO sO sO sI}", "action", "inject", "lesson_id",
                           json_object_get(h, "lesson_id"), "lane", json_object_get(h, "lane"),
                           "score", json_object_get(h, "score"), "step", (json_int_t)step_of(r)));
        json_array_foreach(json_object_get(m, "conflicts"), j, h)
            PUSH(r->created_at, json_pack("{ss sO sO}", "action", "conflict_drop", "lesson_id",
                                          json_object_get(h, "lesson_id"), "lost_to",
                                          json_object_get(h, "lost_to")));
    }
    for (size_t i = 0; i < t->at.n; i++) {
        lsn_rec *r = &t->at.v[i];
        const char *sig = lsn_s(r->meta, "signal");
        if (in_run(r, run) && sig && !strcmp(sig, "reflect"))
            PUSH(r->created_at,
                 json_pack("{ss ss sI}", "action", "reflect", "why", "validation retry cap reached",
                           "step", (json_int_t)step_of(r)));
    }
    for (size_t i = 0; i < t->ev.n; i++) {
        lsn_rec *r = &t->ev.v[i];
        if (in_run(r, run) && lsn_i(r->meta, "recurrence", 0) >= 1)
            PUSH(r->created_at,
                 json_pack("{ss ss sO sI}", "action", "reflect", "why", "repeated fingerprint",
                           "fingerprint", json_object_get(r->meta, "fingerprint"), "step",
                           (json_int_t)step_of(r)));
    }
    for (size_t i = 0; i < t->ls.n; i++) {
        size_t j;
        json_t *h;
        json_array_foreach(json_object_get(t->ls.v[i].meta, "status_history"), j, h) {
            const char *hr = lsn_s(h, "run");
            if (!hr || strcmp(hr, run)) continue;
            const char *to = lsn_s(h, "to");
            const char *act = lsn_s(h, "action")        ? lsn_s(h, "action")
                              : !strcmp(to, "promoted") ? "promote"
                                                        : "suppress";
            PUSH(ms_of(h, "at"), json_pack("{ss ss sO}", "action", act, "lesson_id", t->ls.v[i].id,
                                           "reason", json_object_get(h, "reason")));
        }
    }
    if (n > 1) qsort(d, n, sizeof *d, dec_cmp);
    json_t *out = json_array();
    sb_printf(txt, "run %s: memory decisions\n", run);
    t->total = n;
    for (size_t i = 0; i < n; i++) {
        json_t *j = d[i].j;
        if (i < t->offset || i - t->offset >= t->limit) {
            json_decref(j);
            continue;
        }
        const char *a = lsn_s(j, "action");
        sb_printf(txt, "  %s", a);
        if (!strcmp(a, "retrieve"))
            sb_printf(txt, " %s (policy %s, %lld hints%s)", lsn_s(j, "mode"), lsn_s(j, "policy"),
                      (long long)lsn_i(j, "hints", 0),
                      json_is_true(json_object_get(j, "strict_weak")) ? ", strict weak" : "");
        if (lsn_s(j, "lesson_id")) sb_printf(txt, " %s", lsn_s(j, "lesson_id"));
        if (lsn_s(j, "lane")) sb_printf(txt, " [%s]", lsn_s(j, "lane"));
        if (lsn_s(j, "lost_to")) sb_printf(txt, " lost to %s", lsn_s(j, "lost_to"));
        if (lsn_s(j, "why")) sb_printf(txt, ": %s", lsn_s(j, "why"));
        if (lsn_s(j, "reason")) sb_printf(txt, ": %s", lsn_s(j, "reason"));
        sb_puts(txt, "\n");
        json_array_append_new(out, j);
    }
    free(d);
    return out;
oom:
    for (size_t i = 0; i < n; i++) json_decref(d[i].j);
    free(d);
    return NULL;
#undef PUSH
}

static json_t *view_summary(tl *t, const char *run, strbuf *txt) {
    size_t runs = 0, pass = 0, with_steps = 0, errors = 0, recur = 0, retries = 0;
    double score = 0, steps = 0;
    for (size_t i = 0; i < t->runs.n; i++) {
        if (!in_run(&t->runs.v[i], run)) continue;
        const json_t *m = t->runs.v[i].meta;
        runs++;
        pass += !strcmp(lsn_s(m, "result"), "pass");
        score += lsn_d(m, "score", 0);
        if (json_object_get(m, "steps")) {
            with_steps++;
            steps += (double)lsn_i(m, "steps", 0);
        }
    }
    for (size_t i = 0; i < t->ev.n; i++) {
        if (!in_run(&t->ev.v[i], run)) continue;
        errors++;
        recur += lsn_i(t->ev.v[i].meta, "recurrence", 0) > 0;
    }
    for (size_t i = 0; i < t->at.n; i++)
        if (in_run(&t->at.v[i], run) && json_is_false(json_object_get(t->at.v[i].meta, "valid")))
            retries++;
    size_t logs = 0, transfer_logs = 0, activations = 0, on_error = 0, helped = 0;
    for (size_t i = 0; i < t->logs.n; i++) {
        lsn_rec *r = &t->logs.v[i];
        if (!in_run(r, run)) continue;
        logs++;
        json_t *hs = json_object_get(r->meta, "hints");
        activations += json_array_size(hs);
        int tr = 0;
        for (size_t j = 0; j < json_array_size(hs); j++)
            tr |= !strcmp(lsn_s(json_array_get(hs, j), "lane"), "transfer");
        transfer_logs += tr;
        /* Help: an on-error retrieval with hints after which the same
         * fingerprint did not come back at the next step. */
        const char *fp = lsn_s(r->meta, "fingerprint"), *rr = lsn_s(r->meta, "run");
        if (strcmp(lsn_s(r->meta, "mode"), "on_error") || !json_array_size(hs) || !fp || !rr ||
            step_of(r) < 0)
            continue;
        on_error++;
        json_t *next = step_fps(t, rr, step_of(r) + 1);
        helped += !lsn_has(next, fp);
        json_decref(next);
    }
    size_t promoted = 0, suppressed = 0;
    for (size_t i = 0; i < t->ls.n; i++) {
        size_t j;
        json_t *h;
        json_array_foreach(json_object_get(t->ls.v[i].meta, "status_history"), j, h) {
            const char *hr = lsn_s(h, "run");
            if (!hr || (run && strcmp(hr, run))) continue;
            const char *act = lsn_s(h, "action") ? lsn_s(h, "action") : "";
            suppressed += !strcmp(act, "suppress") || !strcmp(act, "transfer_suppress");
            promoted += !strcmp(act, "promote");
        }
    }
    json_t *o = json_pack("{si si sf sf sf si si sf si sf si si sf}", "runs", (int)runs, "passed",
                          (int)pass, "pass_rate", runs ? (double)pass / (double)runs : 0.0,
                          "mean_score", runs ? score / (double)runs : 0.0, "mean_steps",
                          with_steps ? steps / (double)with_steps : 0.0, "tool_errors", (int)errors,
                          "fingerprint_recurrences", (int)recur, "fingerprint_recurrence",
                          errors ? (double)recur / (double)errors : 0.0, "lesson_activations",
                          (int)activations, "retrieval_help_ratio",
                          on_error ? (double)helped / (double)on_error : 0.0, "promoted",
                          (int)promoted, "suppressed", (int)suppressed, "transfer_activation_rate",
                          logs ? (double)transfer_logs / (double)logs : 0.0);
    json_object_set_new(o, "validation_retry_count", json_integer((json_int_t)retries));
    sb_printf(txt,
              "%s%s: %zu run%s, pass rate %.2f, mean score %.3f, mean steps %.2f\n"
              "errors %zu (recurring fingerprints %zu), validation retries %zu\n"
              "lesson activations %zu, help ratio %.2f, promoted %zu, suppressed %zu, "
              "transfer activation rate %.2f\n",
              run ? "run " : "all runs", run ? run : "", runs, runs == 1 ? "" : "s",
              lsn_d(o, "pass_rate", 0), lsn_d(o, "mean_score", 0), lsn_d(o, "mean_steps", 0),
              errors, recur, retries, activations, lsn_d(o, "retrieval_help_ratio", 0), promoted,
              suppressed, lsn_d(o, "transfer_activation_rate", 0));
    return o;
}

int lsn_op_timeline(remem *db, json_t *args, json_t **result) {
    const char *ns = lsn_s(args, "ns"), *run = lsn_s(args, "run");
    const char *view = lsn_str(args, "view", "attempts");
    if (!run && strcmp(view, "summary"))
        return eng_fail(db, REMEM_EINVAL, "run: the %s view is of one run (--run)", view);
    tl t = {.offset = (size_t)lsn_i(args, "offset", 0),
            .limit = (size_t)lsn_i(args, "limit", TL_PAGE)};
    int rc = lsn_list_kind(db, ns, "attempt", &t.at);
    if (!rc) rc = lsn_list_kind(db, ns, "error_event", &t.ev);
    if (!rc) rc = lsn_list_kind(db, ns, "hint_log", &t.logs);
    if (!rc) rc = lsn_list_kind(db, ns, "run", &t.runs);
    if (!rc) rc = lsn_list_kind(db, ns, "lesson", &t.ls);
    if (!rc &&
        (rs_build(&t.at, &t.at_ix) || rs_build(&t.ev, &t.ev_ix) || rs_build(&t.logs, &t.logs_ix)))
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    if (rc) {
        tl_free(&t);
        return rc;
    }
    int known = !run;
    lsn_list *all[] = {&t.at, &t.ev, &t.logs, &t.runs};
    for (int k = 0; k < 4 && !known; k++)
        for (size_t i = 0; i < all[k]->n && !known; i++) known = in_run(&all[k]->v[i], run);
    if (!known) {
        tl_free(&t);
        return eng_fail(db, REMEM_ENOTFOUND, "no run %s in %s", run, ns);
    }
    strbuf txt;
    sb_init(&txt);
    json_t *v = !strcmp(view, "summary")     ? view_summary(&t, run, &txt)
                : !strcmp(view, "decisions") ? view_decisions(&t, run, &txt)
                                             : view_attempts(&t, run, &txt);
    size_t total = t.total, next = t.offset + t.limit;
    tl_free(&t);
    if (!v) {
        sb_free(&txt);
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    *result = json_pack("{ss so ss}", "view", view,
                        !strcmp(view, "summary")     ? "summary"
                        : !strcmp(view, "decisions") ? "decisions"
                                                     : "timeline",
                        v, "text", txt.data ? txt.data : "");
    if (run) json_object_set_new(*result, "run", json_string(run));
    if (*result && strcmp(view, "summary")) {
        json_object_set_new(*result, "total", json_integer((json_int_t)total));
        if (next < total)
            json_object_set_new(*result, "next_offset", json_integer((json_int_t)next));
    }
    sb_free(&txt);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}
