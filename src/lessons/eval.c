/*
 * eval.c: `eval.lessons`, seed 002's benchmark. A scripted agent runs the
 * mixed protocol grid -> fluxtool -> excel -> sqlite -> grid in waves over
 * one namespace, twice: with the transfer lane off (strict-only) and with
 * policy auto. The agent is deterministic on purpose: it measures remem's
 * memory decisions (which lessons come back, in which lane, what gets
 * promoted or suppressed), not a model's reasoning. It uses only the
 * operations every face offers (lesson.event, .hints, .validate, .add,
 * .outcome, timeline), on a store of its own (in memory, or the file
 * --store names, namespaces eval:lessons:off and eval:lessons:auto, to
 * read with `remem timeline` afterwards): the caller's store is never
 * touched.
 *
 * The world: each domain's task is three actions within a step budget;
 * two of them hit a trap (an error whose text varies from run to run:
 * numbers, paths, names) with one rule that avoids it. Without that rule
 * the agent gets past a trap by trial on its third attempt (two steps
 * lost); with the rule from an on-error hint on its second (one lost);
 * with it from a pre-run hint at once. What it got past by trial, it
 * writes down as a candidate lesson at the end of the run (its
 * "reflection"). Planted before wave 1: two harmful lessons (following
 * them costs a step) and a cross-domain lure, excel's genuine fix for an
 * out-of-bounds error that grid prints in the same words, which hurts in
 * grid. fluxtool and sqlite share a lock error and its fix, so the
 * transfer lane has something real to carry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lessons/lessons.h"

#define N_ACTIONS 3

typedef struct trap {
    int action;                       /* which action it guards */
    const char *tool, *channel, *fmt; /* fmt: up to five %d (run-varying numbers) */
    const char *fix;
} trap;

typedef struct domain {
    const char *name, *task;
    trap traps[2];
} domain;

static const char *BOUNDS =
    "IndexError: cell (%d, %d) is out of bounds for a %dx%d board (/tmp/work_%d/board.json)";
static const char *LOCKED = "sqlite3.OperationalError: database is locked (waited %d ms on "
                            "/var/lib/app/db_%d/state_%d.db, pid %d)";
static const char *LOCK_FIX = "wait for the writer lock to be released, then retry the write once";

static const domain DOMAINS[] = {
    {"grid",
     "place the puzzle pieces on the board",
     {{0, "grid.place", "hard_failure", NULL,
       "grid: clamp coordinates to the board size before placing a piece"},
      {1, "grid.rotate", "hard_failure",
       "grid.rotate: rotating piece %d by %d degrees collides with piece %d at step %d",
       "grid: rotate pieces before placing them, never after"}}},
    {"fluxtool",
     "run the flux pipeline over the sensor export",
     {{0, "fluxtool", "hard_failure",
       "fluxtool: stage %d failed: missing input column 'ts_%d' in /data/flux/%d/in_%d.csv",
       "fluxtool: declare the input schema with --schema before the first stage"},
      {1, "fluxtool", "hard_failure", NULL, NULL}}},
    {"excel",
     "fill the quarterly sheet from the ledger",
     {{0, "excel.write", "hard_failure", NULL,
       "excel: shift the range one row down to skip the header row"},
      {1, "excel.formula", "constraint_failure",
       "excel.formula: #REF! at row %d after a column was deleted (%d formulas, sheet %d, "
       "version %d)",
       "excel: rebuild formulas after deleting columns"}}},
    {"sqlite",
     "count the orders per customer",
     {{0, "run_sqlite", "hard_failure",
       "Error: near line %d: no such table: orders_%d (schema version %d, %d tables)",
       "sqlite: list the tables with .tables before querying"},
      {1, "run_sqlite", "hard_failure", NULL, NULL}}},
};
#define N_DOMAINS 4

/* The protocol: grid -> fluxtool -> excel -> sqlite -> grid. */
static const int PROTOCOL[] = {0, 1, 2, 3, 0};
#define PROTOCOL_N 5

static const char *trap_fmt(const trap *t, int d) {
    if (t->fmt) return t->fmt;
    return (d == 0 || d == 2) && t->action == 0 ? BOUNDS : LOCKED;
}

static const char *trap_fix(const trap *t) { return t->fix ? t->fix : LOCK_FIX; }

/* The planted lessons and what following them does where. */
typedef struct planted {
    int domain;       /* where it is stored */
    const char *rule; /* its rule */
    const char *role; /* "harmful" or "lure" */
    int fp_of_trap;   /* the trap (of its domain) whose fingerprint it carries */
} planted;

static const planted PLANTED[] = {
    {1, "fluxtool: always pass --force so that stages skip input validation", "harmful", 0},
    {3, "sqlite: run PRAGMA foreign_keys=OFF before inserting", "harmful", 0},
    {2, "excel: shift the range one row down to skip the header row", "lure", 0},
};
#define N_PLANTED 3

/* What following rule does at action a of domain d: 1 avoids the trap
 * there, -1 causes a failure, 0 nothing (not about this action). */
static int effect(int d, int a, const char *rule) {
    for (int k = 0; k < 2; k++) {
        const trap *t = &DOMAINS[d].traps[k];
        if (t->action == a && !strcmp(trap_fix(t), rule)) return 1;
    }
    if (a != 0) return 0;
    if (d == 1 && !strcmp(rule, PLANTED[0].rule)) return -1;
    if (d == 3 && !strcmp(rule, PLANTED[1].rule)) return -1;
    if (d == 0 && !strcmp(rule, PLANTED[2].rule)) return -1; /* excel's fix, in grid */
    return 0;
}

static const char *HARM_ERR[N_DOMAINS] = {
    "grid.place: row offset %d leaves piece %d off the board (%d rows, try %d)",
    "fluxtool: --force refused: stage %d checksum mismatch (%d/%d, build %d)",
    NULL,
    "Runtime error near line %d: FOREIGN KEY constraint failed (%d, %d, %d)",
};

/* The operations the agent uses, called directly rather than through
 * remem_call (whose table lists this benchmark too): the arguments are
 * built here, in the shape the schemas check. */
static const struct {
    const char *name;
    engine_op_fn fn;
} OPS[] = {{"lesson.hints", lsn_op_hints},     {"lesson.validate", lsn_op_validate},
           {"lesson.event", lsn_op_event},     {"lesson.add", lsn_op_add},
           {"lesson.outcome", lsn_op_outcome}, {"timeline", lsn_op_timeline}};

static json_t *call(remem *db, const char *op, json_t *args, int *rc) {
    json_t *out = NULL;
    *rc = REMEM_EINVAL;
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0]; i++)
        if (!strcmp(OPS[i].name, op)) *rc = args ? OPS[i].fn(db, args, &out) : REMEM_ENOMEM;
    json_decref(args);
    if (*rc) {
        json_decref(out);
        return NULL;
    }
    return out;
}

typedef struct wave_stats {
    int runs, passed, steps, errors, recurring, retries, transfer_hints, contamination;
    double score;
} wave_stats;

/* One injected hint the agent holds during a run. */
typedef struct held {
    char id[40];
    char rule[300];
    int transfer, used; /* used: followed once (a harmful one is dropped after) */
} held;

typedef struct agent {
    remem *db;
    const char *ns, *policy;
    held h[32];
    int nh;
    json_t *seen_fps; /* fingerprints seen in earlier runs */
} agent;

static void take_hints(agent *ag, json_t *ans) {
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(ans, "hints"), i, e) {
        const char *id = lsn_s(e, "lesson_id");
        int have = 0;
        for (int k = 0; k < ag->nh; k++) have |= !strcmp(ag->h[k].id, id);
        if (have || ag->nh == 32) continue;
        held *x = &ag->h[ag->nh++];
        snprintf(x->id, sizeof x->id, "%s", id);
        snprintf(x->rule, sizeof x->rule, "%s", lsn_s(e, "rule_text"));
        x->transfer = !strcmp(lsn_s(e, "lane"), "transfer");
        x->used = 0;
    }
}

static const json_t *TOOL_SCHEMA(void) {
    static json_t *s;
    if (!s)
        s = json_pack("{ss s[ss] s{s{ss} s{ss}} sb}", "type", "object", "required", "action",
                      "args", "properties", "action", "type", "string", "args", "type", "object",
                      "additionalProperties", 0);
    return s;
}

/* One run of domain d; run_no makes its error texts differ. */
static int run_once(agent *ag, int d, int run_no, int max_steps, wave_stats *ws) {
    const domain *dom = &DOMAINS[d];
    char run[32];
    snprintf(run, sizeof run, "run-%03d", run_no);
    ag->nh = 0;
    int rc;
    json_t *ans = call(ag->db, "lesson.hints",
                       json_pack("{ss ss ss ss ss}", "ns", ag->ns, "domain", dom->name, "task",
                                 dom->task, "policy", ag->policy, "run", run),
                       &rc);
    if (rc) return rc;
    take_hints(ag, ans);
    json_decref(ans);
    int action = 0, tries[2] = {0, 0}, learned[2] = {0, 0};
    char learned_fp[2][20] = {"", ""};
    json_t *run_fps = json_array();
    int step = 1;
    for (; step <= max_steps && action < N_ACTIONS; step++) {
        /* The validation gate: the agent's first input of some runs is
         * malformed; a retry keeps the step. */
        int bad = step == 1 ? (run_no % 5 == 3 ? 3 : run_no % 2) : 0;
        for (int v = 0; v <= bad; v++) {
            json_t *input = v < bad ? json_pack("{ss}", "action", "")
                                    : json_pack("{ss s{si}}", "action", dom->traps[0].tool, "args",
                                                "action", action);
            ans = call(ag->db, "lesson.validate",
                       json_pack("{sO so ss ss si}", "schema", TOOL_SCHEMA(), "input", input, "ns",
                                 ag->ns, "run", run, "step", step),
                       &rc);
            if (rc) goto out;
            ws->retries += json_is_false(json_object_get(ans, "valid"));
            json_decref(ans);
        }
        /* A held hint about this action: a fix avoids its trap; a harmful
         * one, followed once, fails the step. */
        int fixed = 0, harm = -1, fixed_by_transfer = 0;
        for (int k = 0; k < ag->nh; k++) {
            int e = effect(d, action, ag->h[k].rule);
            if (e > 0 && !fixed) fixed_by_transfer = ag->h[k].transfer;
            if (e > 0) fixed = 1;
            if (e < 0 && !ag->h[k].used && harm < 0) harm = k;
        }
        const trap *t = NULL;
        for (int k = 0; k < 2; k++)
            if (dom->traps[k].action == action && !learned[k]) t = &dom->traps[k];
        int ti = t ? (int)(t - dom->traps) : -1;
        char err[512];
        const char *tool = t ? t->tool : dom->traps[0].tool, *channel = "hard_failure";
        /* Harmful advice is taken as readily as good advice: that is
         * what makes it harmful. */
        if (harm >= 0) {
            ag->h[harm].used = 1;
            snprintf(err, sizeof err, HARM_ERR[d], 3 + run_no, 7 + step, run_no * 13, 2 + action,
                     run_no);
            channel = "constraint_failure";
            if (ag->h[harm].transfer) ws->contamination++;
        } else if (t && !fixed && ++tries[ti] < 3) {
            snprintf(err, sizeof err, trap_fmt(t, d), 10 + run_no, 3 + step * 7, 8 + run_no % 3,
                     9 + run_no, 100 + run_no);
            channel = tries[ti] > 1 ? "no_progress" : t->channel;
        } else {
            /* Got past it by trial, or with another domain's lesson: either
             * way, a lesson of this domain now. */
            if (t && (!fixed || (fixed_by_transfer && learned_fp[ti][0]))) learned[ti] = 1;
            action++;
            continue;
        }
        ws->errors++;
        ans = call(ag->db, "lesson.event",
                   json_pack("{ss ss ss ss ss ss si}", "ns", ag->ns, "domain", dom->name, "tool",
                             tool, "channel", channel, "error", err, "run", run, "step", step),
                   &rc);
        if (rc) goto out;
        const char *fp = lsn_s(ans, "fingerprint");
        if (lsn_has(ag->seen_fps, fp) || lsn_has(run_fps, fp)) ws->recurring++;
        if (!lsn_has(run_fps, fp)) json_array_append_new(run_fps, json_string(fp));
        if (ti >= 0 && !learned[ti] && harm < 0)
            snprintf(learned_fp[ti], sizeof learned_fp[ti], "%s", fp);
        json_t *h =
            call(ag->db, "lesson.hints",
                 json_pack("{ss ss ss ss ss ss si}", "ns", ag->ns, "domain", dom->name, "error",
                           err, "fingerprint", fp, "policy", ag->policy, "run", run, "step", step),
                 &rc);
        json_decref(ans);
        if (rc) goto out;
        for (size_t i = 0; i < json_array_size(json_object_get(h, "hints")); i++)
            ws->transfer_hints +=
                !strcmp(lsn_s(json_array_get(json_object_get(h, "hints"), i), "lane"), "transfer");
        take_hints(ag, h);
        json_decref(h);
    }
    int pass = action == N_ACTIONS, steps = step - 1;
    double score = pass ? 1.0 : 0.5 * action / N_ACTIONS;
    /* Reflection: what it got past by trial becomes a candidate lesson. */
    for (int k = 0; k < 2; k++) {
        if (!learned[k] || !learned_fp[k][0]) continue;
        ans =
            call(ag->db, "lesson.add",
                 json_pack("{ss ss ss s[s] ss}", "ns", ag->ns, "domain", dom->name, "rule",
                           trap_fix(&dom->traps[k]), "fingerprint", learned_fp[k], "session", run),
                 &rc);
        if (rc) goto out;
        json_decref(ans);
    }
    json_t *ids = json_array();
    for (int k = 0; k < ag->nh; k++) json_array_append_new(ids, json_string(ag->h[k].id));
    ans = call(ag->db, "lesson.outcome",
               json_pack("{ss ss ss ss sf si so}", "ns", ag->ns, "run", run, "domain", dom->name,
                         "result", pass ? "pass" : "fail", "score", score, "steps", steps,
                         "lessons", ids),
               &rc);
    if (rc) goto out;
    json_decref(ans);
    size_t i;
    json_t *e;
    json_array_foreach(run_fps, i, e) if (!lsn_has(ag->seen_fps, json_string_value(e)))
        json_array_append(ag->seen_fps, e);
    ws->runs++;
    ws->passed += pass;
    ws->steps += steps;
    ws->score += score;
out:
    json_decref(run_fps);
    return rc;
}

static int plant(remem *db, const char *ns) {
    for (int k = 0; k < N_PLANTED; k++) {
        const planted *p = &PLANTED[k];
        const trap *t = &DOMAINS[p->domain].traps[p->fp_of_trap];
        char err[512], fp[20];
        snprintf(err, sizeof err, trap_fmt(t, p->domain), 1, 2, 3, 4, 5);
        char *norm = lsn_normalise(err);
        if (!norm) return REMEM_ENOMEM;
        lsn_fingerprint_of(norm, fp);
        free(norm);
        int rc;
        json_t *a =
            call(db, "lesson.add",
                 json_pack("{ss ss ss s[s] ss}", "ns", ns, "domain", DOMAINS[p->domain].name,
                           "rule", p->rule, "fingerprint", fp, "session", "planted"),
                 &rc);
        if (rc) return rc;
        json_decref(a);
    }
    return REMEM_OK;
}

/* Seed 002's "lower fingerprint recurrence over runs": the share of the
 * tool errors whose fingerprint had already occurred in the run, in the
 * first wave (before memory had anything to give) and in the last. */
static void recurrence_before_after(json_t *out, json_t *waves) {
    size_t n = json_array_size(waves);
    if (!out || n == 0) return;
    json_t *first = json_array_get(waves, 0), *last = json_array_get(waves, n - 1);
    json_object_set_new(out, "fingerprint_recurrence_before",
                        json_real(lsn_d(first, "fingerprint_recurrence", 0)));
    json_object_set_new(out, "fingerprint_recurrence_after",
                        json_real(lsn_d(last, "fingerprint_recurrence", 0)));
    json_t *sm = json_object_get(out, "summary");
    json_object_set_new(out, "validation_retry_count",
                        json_integer(lsn_i(sm, "validation_retry_count", 0)));
}

/* One mode: a fresh store, the planted lessons, the waves. */
static json_t *run_mode(const char *store, const char *policy, int waves, int max_steps, int *rc,
                        char *err, size_t errcap) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash"; /* the same figures on every machine */
    remem *db = NULL;
    *rc = remem_open(store, &o, &db);
    char ns[64];
    snprintf(ns, sizeof ns, "eval:lessons:%s", policy);
    json_t *out = NULL, *wj = json_array();
    agent ag = {.db = db, .ns = ns, .policy = policy, .seen_fps = json_array()};
    if (*rc) {
        snprintf(err, errcap, "store: cannot open %s: %s", store, remem_errmsg(db));
        /* a store file the caller named that cannot be opened is a bad
         * argument (400), not a failure of the server */
        if (strcmp(store, ":memory:")) *rc = REMEM_EINVAL;
        goto done;
    }
    /* A kept store starts each mode over: the figures are of one run. */
    if (strcmp(store, ":memory:")) *rc = remem_clear(db, ns, NULL);
    if (!*rc) *rc = plant(db, ag.ns);
    int run_no = 0, contamination = 0;
    for (int w = 0; !*rc && w < waves; w++) {
        wave_stats ws = {0};
        for (int p = 0; !*rc && p < PROTOCOL_N; p++)
            *rc = run_once(&ag, PROTOCOL[p], ++run_no, max_steps, &ws);
        contamination += ws.contamination;
        json_array_append_new(
            wj,
            json_pack("{si si si sf sf sf si si sf si si si}", "wave", w + 1, "runs", ws.runs,
                      "passed", ws.passed, "pass_rate", ws.runs ? (double)ws.passed / ws.runs : 0.0,
                      "mean_score", ws.runs ? ws.score / ws.runs : 0.0, "mean_steps",
                      ws.runs ? (double)ws.steps / ws.runs : 0.0, "tool_errors", ws.errors,
                      "fingerprint_recurrences", ws.recurring, "fingerprint_recurrence",
                      ws.errors ? (double)ws.recurring / ws.errors : 0.0, "validation_retries",
                      ws.retries, "transfer_hints", ws.transfer_hints, "contamination",
                      ws.contamination));
        /* seed 002's own name for the wave's retries */
        json_object_set_new(json_array_get(wj, json_array_size(wj) - 1), "validation_retry_count",
                            json_integer(ws.retries));
    }
    if (*rc) {
        snprintf(err, errcap, "%s", remem_errmsg(db));
        goto done;
    }
    /* Statuses reached, and the planted lessons' fates. */
    lsn_list ls = {0};
    *rc = lsn_list_kind(db, ag.ns, "lesson", &ls);
    if (*rc) goto done;
    json_t *st = json_pack("{si si si si}", "candidate", 0, "promoted", 0, "suppressed", 0,
                           "archived", 0),
           *pl = json_array();
    for (size_t i = 0; i < ls.n; i++) {
        const char *s = lsn_s(ls.v[i].meta, "status");
        json_object_set_new(st, s, json_integer(lsn_i(st, s, 0) + 1));
        for (int k = 0; k < N_PLANTED; k++)
            if (!strcmp(ls.v[i].text, PLANTED[k].rule) &&
                !strcmp(lsn_s(ls.v[i].meta, "domain_key"), DOMAINS[PLANTED[k].domain].name))
                json_array_append_new(
                    pl,
                    json_pack("{ss ss ss ss sO sO}", "lesson_id", ls.v[i].id, "role",
                              PLANTED[k].role, "domain", DOMAINS[PLANTED[k].domain].name, "status",
                              s, "transfer_blocked",
                              json_object_get(ls.v[i].meta, "transfer_blocked"), "status_reason",
                              json_object_get(ls.v[i].meta, "status_reason")
                                  ? json_object_get(ls.v[i].meta, "status_reason")
                                  : json_null()));
    }
    lsn_list_free(&ls);
    json_t *sum = call(db, "timeline", json_pack("{ss ss}", "ns", ag.ns, "view", "summary"), rc);
    if (*rc) {
        json_decref(st);
        json_decref(pl);
        snprintf(err, errcap, "%s", remem_errmsg(db));
        goto done;
    }
    out = json_pack("{ss sO si so so sO}", "policy", policy, "waves", wj, "contamination",
                    contamination, "statuses", st, "planted", pl, "summary",
                    json_object_get(sum, "summary"));
    json_decref(sum);
    recurrence_before_after(out, wj);
done:
    json_decref(wj);
    json_decref(ag.seen_fps);
    remem_close(db);
    return out;
}

static void render(strbuf *t, json_t *m) {
    sb_printf(t, "%s (%s)\n", !strcmp(lsn_s(m, "policy"), "off") ? "strict-only" : "auto-transfer",
              lsn_s(m, "policy"));
    sb_puts(t, "  wave  pass rate  mean score  mean steps  errors  recurring fp  transfer hints  "
               "contamination\n");
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(m, "waves"), i, w) {
        sb_printf(
            t, "  %4lld  %9.2f  %10.3f  %10.2f  %6lld  %12lld  %14lld  %13lld\n",
            (long long)lsn_i(w, "wave", 0), lsn_d(w, "pass_rate", 0), lsn_d(w, "mean_score", 0),
            lsn_d(w, "mean_steps", 0), (long long)lsn_i(w, "tool_errors", 0),
            (long long)lsn_i(w, "fingerprint_recurrences", 0),
            (long long)lsn_i(w, "transfer_hints", 0), (long long)lsn_i(w, "contamination", 0));
    }
    json_t *s = json_object_get(m, "statuses");
    sb_printf(t, "  lessons: %lld candidate, %lld promoted, %lld suppressed; contamination %lld\n",
              (long long)lsn_i(s, "candidate", 0), (long long)lsn_i(s, "promoted", 0),
              (long long)lsn_i(s, "suppressed", 0), (long long)lsn_i(m, "contamination", 0));
    json_array_foreach(json_object_get(m, "planted"), i, w) {
        sb_printf(t, "  planted %s in %s: %s%s\n", lsn_s(w, "role"), lsn_s(w, "domain"),
                  lsn_s(w, "status"),
                  json_is_true(json_object_get(w, "transfer_blocked")) ? ", blocked from transfer"
                                                                       : "");
    }
    json_t *sm = json_object_get(m, "summary");
    sb_printf(t, "  help ratio %.2f, transfer activation rate %.2f, validation retries %lld\n",
              lsn_d(sm, "retrieval_help_ratio", 0), lsn_d(sm, "transfer_activation_rate", 0),
              (long long)lsn_i(sm, "validation_retry_count", 0));
    sb_printf(t, "  fingerprint recurrence before %.2f, after %.2f\n",
              lsn_d(m, "fingerprint_recurrence_before", 0),
              lsn_d(m, "fingerprint_recurrence_after", 0));
}

int lsn_op_eval(remem *db, json_t *args, json_t **result) {
    int waves = (int)lsn_i(args, "waves", 3), max_steps = (int)lsn_i(args, "max_steps", 5);
    const char *store = lsn_str(args, "store", ":memory:");
    const char *policies[] = {"off", "auto"};
    json_t *modes = json_array();
    strbuf t;
    sb_init(&t);
    sb_printf(&t,
              "remem eval lessons: a scripted, deterministic agent (it measures remem's memory "
              "decisions, not a model's)\nprotocol grid -> fluxtool -> excel -> sqlite -> grid, "
              "%d waves, step budget %d\n\n",
              waves, max_steps);
    for (int p = 0; p < 2; p++) {
        int rc = REMEM_OK;
        char err[1024] = "";
        json_t *m = run_mode(store, policies[p], waves, max_steps, &rc, err, sizeof err);
        if (!m) {
            json_decref(modes);
            sb_free(&t);
            return eng_fail(db, rc ? rc : REMEM_ENOMEM, "eval.lessons (%s): %s", policies[p],
                            err[0] ? err : "out of memory");
        }
        render(&t, m);
        sb_puts(&t, "\n");
        json_array_append_new(modes, m);
    }
    *result = json_pack("{ss si si so ss}", "benchmark", "lessons", "waves", waves, "max_steps",
                        max_steps, "modes", modes, "text", t.data ? t.data : "");
    sb_free(&t);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}
