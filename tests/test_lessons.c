/*
 * test_lessons.c: seed 002's lessons through remem_call, the way every
 * face reaches them: the error normaliser on real error texts (bash,
 * SQLite, Python tracebacks, HTTP), fingerprints, lessons merging,
 * promotion after measured help, suppression after retrieval without
 * benefit, the lanes under each policy, conflicts, the validation gate's
 * four kinds and its retry cap, and the timeline's views.
 */
#include <jansson.h>
#include <stdarg.h>
#include <unistd.h>

#include "test.h"
#include "remem.h"
#include "lessons/lessons.h"
#include "support/llm_standin.h"

static remem *open_mem(void) {
    remem *db = NULL;
    if (remem_open(":memory:", NULL, &db)) {
        fprintf(stderr, "open: %s\n", remem_errmsg(db));
        exit(1);
    }
    return db;
}

/* Call op with arguments built by json_pack; the answer, or NULL (and
 * *rc set) on failure. */
static json_t *call_rc(remem *db, int *rc, const char *op, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    json_t *a = json_vpack_ex(NULL, 0, fmt, ap);
    va_end(ap);
    char *args = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    char *out = NULL;
    *rc = remem_call(db, op, args, strlen(args), &out);
    free(args);
    if (*rc) return NULL;
    json_t *j = json_loads(out, 0, NULL);
    remem_free(out);
    return j;
}

#define CALL(db, op, ...)                                                    \
    ({                                                                       \
        int rc_;                                                             \
        json_t *j_ = call_rc(db, &rc_, op, __VA_ARGS__);                     \
        if (rc_) fprintf(stderr, "  %s failed: %s\n", op, remem_errmsg(db)); \
        CHECK_INT(rc_, REMEM_OK);                                            \
        j_;                                                                  \
    })

static const char *S(json_t *o, const char *k) {
    json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : "";
}

/* ---- the normaliser ---- */

static const struct {
    const char *in, *want;
} norm_table[] = {
    {"bash: line 12: foo: command not found", "bash: line <n>: foo: command not found"},
    {"ls: cannot access '/tmp/run_51001/out.csv': No such file or directory",
     "ls: cannot access <q>: no such file or directory"},
    {"cp: cannot stat /home/ada/work/build/app.o: Permission denied",
     "cp: cannot stat <path>: permission denied"},
    {"Error: near line 3: near \"SELEC\": syntax error",
     "error: near line <n>: near <q>: syntax error"},
    {"Runtime error near line 7: UNIQUE constraint failed: users.email (19)",
     "runtime error near line <n>: unique constraint failed: users.email (<n>)"},
    {"sqlite3.OperationalError: database is locked",
     "sqlite3.operationalerror: database is locked"},
    {"Traceback (most recent call last):\n  File \"/srv/app/main.py\", line 42, in <module>\n"
     "    main()\nValueError: invalid literal for int() with base 10: 'abc'",
     "traceback (most recent call last): file <q>, line <n>, in <module> main() valueerror: "
     "invalid literal for int() with base <n>: <q>"},
    {"requests.exceptions.HTTPError: 404 Client Error: Not Found for url: "
     "https://api.example.com/v1/users/4242?page=2",
     "requests.exceptions.httperror: 404 client error: not found for url: <url>"},
    {"HTTP 503 Service Unavailable at 2026-11-23T01:29:58.120Z (request 0x7f3a9c00)",
     "http 503 service unavailable at <ts> (request <hex>)"},
    {"[2026-11-23 01:29:58,123] worker 3f2a9c1e crashed after 17.5s",
     "[<ts>] worker <hex> crashed after <n>s"},
    {"IndexError: cell (12, 7) is out of bounds for a 10x10 board",
     "indexerror: cell (<n>, <n>) is out of bounds for a <n> board"},
    /* a size in a text about HTTP is a size, not a status (found by fuzz_lessons) */
    {"HTTP 502 after resizing to 5X1 tiles", "http 502 after resizing to <n> tiles"},
    {"  many   spaces\tand\nnewlines  ", "many spaces and newlines"},
    {"", ""},
};

static void test_normalise_table(void) {
    for (size_t i = 0; i < sizeof norm_table / sizeof norm_table[0]; i++) {
        char *n = lsn_normalise(norm_table[i].in);
        CHECK_STR(n, norm_table[i].want);
        free(n);
    }
}

/* The same failure with other numbers, paths, quotes, ids and times: one
 * fingerprint; different failures: different ones. */
static void test_fingerprint_same_and_different(void) {
    const char *same[][2] = {
        {"bash: line 3: cd: /tmp/job_1/x: No such file or directory",
         "bash: line 98: cd: /var/tmp/job_777/y/z: No such file or directory"},
        {"Error: near line 1: no such table: orders_2024 at 10:01:02",
         "Error: near line 9: no such table: orders_2024 at 23:59:59"},
        {"  File \"/a/b.py\", line 1\nKeyError: 'user_id'",
         "  File \"/c/d/e.py\", line 300\nKeyError: 'account'"},
        {"HTTP 500 Internal Server Error (trace 9f8e7d6c5b)",
         "HTTP 500 Internal Server Error (trace 0a1b2c3d4e5f)"},
    };
    const char *diff[][2] = {
        {"HTTP 404 Not Found", "HTTP 500 Not Found"},
        {"Error: no such table: t", "Error: no such column: t"},
        {"bash: foo: command not found", "bash: foo: permission denied"},
    };
    char a[20], b[20];
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        char *x = lsn_normalise(same[i][0]), *y = lsn_normalise(same[i][1]);
        lsn_fingerprint_of(x, a);
        lsn_fingerprint_of(y, b);
        if (strcmp(a, b)) fprintf(stderr, "  differ: [%s] [%s]\n", x, y);
        CHECK_STR(a, b);
        free(x);
        free(y);
    }
    for (size_t i = 0; i < sizeof diff / sizeof diff[0]; i++) {
        char *x = lsn_normalise(diff[i][0]), *y = lsn_normalise(diff[i][1]);
        lsn_fingerprint_of(x, a);
        lsn_fingerprint_of(y, b);
        CHECK(strcmp(a, b) != 0);
        free(x);
        free(y);
    }
}

static void test_event_op(void) {
    remem *db = open_mem();
    json_t *e1 =
        CALL(db, "lesson.event", "{ss ss ss ss ss ss si}", "ns", "t", "domain", "sqlite", "tool",
             "run_sqlite", "channel", "hard_failure", "error",
             "Error: near line 4: no such table: /tmp/a/b/c.db.orders", "run", "r1", "step", 1);
    json_t *e2 =
        CALL(db, "lesson.event", "{ss ss ss ss ss ss si}", "ns", "t", "domain", "sqlite", "tool",
             "run_sqlite", "channel", "hard_failure", "error",
             "Error: near line 88: no such table: /srv/x/y.db.orders", "run", "r1", "step", 2);
    CHECK_STR(S(e1, "fingerprint"), S(e2, "fingerprint"));
    CHECK_INT(json_integer_value(json_object_get(e1, "recurrence")), 0);
    CHECK_INT(json_integer_value(json_object_get(e2, "recurrence")), 1);
    CHECK(json_is_true(json_object_get(e2, "reflect")));
    CHECK(lsn_has(json_object_get(e1, "tags"), "tool:run_sqlite"));
    CHECK(lsn_has(json_object_get(e1, "tags"), "channel:hard_failure"));
    CHECK(lsn_has(json_object_get(e1, "tags"), "domain:sqlite"));
    /* The event is an ordinary memory with every field in its metadata. */
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "t", S(e1, "id"), &r), REMEM_OK);
    CHECK_STR(remem_record_memory(r)->kind, "error_event");
    CHECK_HAS(remem_record_memory(r)->metadata, S(e1, "fingerprint"));
    remem_record_free(r);
    /* A channel outside the four is refused and writes nothing. */
    int rc;
    CHECK(!call_rc(db, &rc, "lesson.event", "{ss ss ss ss ss}", "ns", "t", "domain", "d", "tool",
                   "x", "channel", "crash", "error", "boom"));
    CHECK_INT(rc, REMEM_EINVAL);
    json_decref(e1);
    json_decref(e2);
    remem_close(db);
}

static char *add_lesson(remem *db, const char *domain, const char *rule, const char *fp) {
    json_t *a =
        fp ? CALL(db, "lesson.add", "{ss ss ss s[s]}", "ns", "t", "domain", domain, "rule", rule,
                  "fingerprint", fp)
           : CALL(db, "lesson.add", "{ss ss ss}", "ns", "t", "domain", domain, "rule", rule);
    char *id = strdup(S(a, "lesson_id"));
    json_decref(a);
    return id;
}

static void test_add_merges(void) {
    remem *db = open_mem();
    json_t *a = CALL(db, "lesson.add", "{ss ss ss s[s] s[s] ss ss}", "ns", "t", "domain", "grid",
                     "rule", "Check the grid size before placing", "fingerprint", "fp_a", "tag",
                     "placement", "task_cluster", "layout", "session", "s1");
    json_t *b = CALL(db, "lesson.add", "{ss ss ss s[ss] s[s]}", "ns", "t", "domain", "grid", "rule",
                     "  check the GRID size   before placing", "fingerprint", "fp_a", "fp_b", "tag",
                     "bounds");
    json_t *c = CALL(db, "lesson.add", "{ss ss ss}", "ns", "t", "domain", "excel", "rule",
                     "Check the grid size before placing");
    CHECK_STR(S(a, "outcome"), "added");
    CHECK_STR(S(b, "outcome"), "merged");
    CHECK_STR(S(a, "lesson_id"), S(b, "lesson_id"));
    CHECK(strcmp(S(a, "lesson_id"), S(c, "lesson_id")) != 0);
    json_t *l = json_object_get(b, "lesson");
    CHECK_INT(json_array_size(json_object_get(l, "fingerprints")), 2);
    CHECK(lsn_has(json_object_get(l, "tags"), "placement"));
    CHECK(lsn_has(json_object_get(l, "tags"), "bounds"));
    CHECK(lsn_has(json_object_get(l, "tags"), "domain:grid"));
    CHECK_STR(S(l, "status"), "candidate");
    CHECK_STR(S(l, "source_session_id"), "s1");
    CHECK_STR(S(l, "task_cluster"), "layout");
    const char *fields[] = {
        "lesson_id",     "status",         "rule_text",         "fingerprints",    "tags",
        "domain_key",    "task_cluster",   "source_session_id", "retrieval_count", "helpful_count",
        "harmful_count", "conflicts_with", "created_at",        "updated_at"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        CHECK(json_object_get(l, fields[i]) != NULL);
    json_decref(a);
    json_decref(b);
    json_decref(c);
    remem_close(db);
}

static json_t *hints(remem *db, const char *domain, const char *fp, const char *policy,
                     const char *run) {
    if (fp)
        return CALL(db, "lesson.hints", "{ss ss ss ss ss}", "ns", "t", "domain", domain,
                    "fingerprint", fp, "policy", policy, "run", run);
    return CALL(db, "lesson.hints", "{ss ss ss ss}", "ns", "t", "domain", domain, "policy", policy,
                "run", run);
}

static int returns(json_t *h, const char *id) {
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(h, "hints"), i,
                       e) if (!strcmp(S(e, "lesson_id"), id)) return 1;
    return 0;
}

static json_t *lesson_meta(remem *db, const char *id) {
    remem_record *r = NULL;
    if (remem_get(db, "t", id, &r)) return NULL;
    json_t *m = json_loads(remem_record_memory(r)->metadata, 0, NULL);
    remem_record_free(r);
    return m;
}

static void outcome(remem *db, const char *run, const char *domain, const char *result,
                    const char *lesson) {
    json_t *o = lesson ? CALL(db, "lesson.outcome", "{ss ss ss ss s[s]}", "ns", "t", "run", run,
                              "domain", domain, "result", result, "lessons", lesson)
                       : CALL(db, "lesson.outcome", "{ss ss ss ss}", "ns", "t", "run", run,
                              "domain", domain, "result", result);
    json_decref(o);
}

/* A lesson helpful in 3 runs is promoted; one retrieved 3 times without
 * benefit is suppressed and never returned again. */
static void test_promotion_and_suppression(void) {
    remem *db = open_mem();
    char *good = add_lesson(db, "grid", "check the grid size before placing", "fp_bounds");
    char *bad = add_lesson(db, "fluxtool", "always pass --force to fluxtool", "fp_flux");
    outcome(db, "g0", "grid", "fail", NULL);
    outcome(db, "g1", "grid", "fail", NULL);
    char run[16];
    for (int i = 0; i < 3; i++) {
        snprintf(run, sizeof run, "g%d", i + 2);
        json_t *h = hints(db, "grid", "fp_bounds", "off", run);
        CHECK(returns(h, good));
        json_decref(h);
        json_t *m = lesson_meta(db, good);
        CHECK_STR(S(m, "status"), "candidate");
        json_decref(m);
        outcome(db, run, "grid", "pass", good);
    }
    json_t *m = lesson_meta(db, good);
    CHECK_STR(S(m, "status"), "promoted");
    CHECK_NEAR(json_number_value(json_object_get(m, "utility")), 1.0, 1e-9);
    CHECK_INT(json_integer_value(json_object_get(m, "helpful_count")), 3);
    CHECK_INT(json_integer_value(json_object_get(m, "retrieval_count")), 3);
    CHECK_HAS(S(m, "status_reason"), "utility 1.000 >= 0.20 over 3 relevant runs");
    json_decref(m);
    /* The status change is a history row carrying its reason. */
    char *hist = NULL;
    CHECK_INT(remem_history(db, "t", good, &hist), REMEM_OK);
    CHECK_HAS(hist, "\"status\":\"promoted\"");
    CHECK_HAS(hist, "no major regression");
    remem_free(hist);

    /* fluxtool: runs without the lesson pass, runs with it fail. */
    outcome(db, "f0", "fluxtool", "pass", NULL);
    for (int i = 0; i < 3; i++) {
        snprintf(run, sizeof run, "f%d", i + 1);
        json_t *h = hints(db, "fluxtool", "fp_flux", "off", run);
        CHECK(returns(h, bad));
        json_decref(h);
        outcome(db, run, "fluxtool", "fail", bad);
        m = lesson_meta(db, bad);
        CHECK_STR(S(m, "status"), i < 2 ? "candidate" : "suppressed");
        json_decref(m);
    }
    m = lesson_meta(db, bad);
    CHECK_HAS(S(m, "status_reason"), "utility -1.000 <= 0");
    CHECK_INT(json_integer_value(json_object_get(m, "harmful_count")), 3);
    json_decref(m);
    for (int i = 0; i < 3; i++) {
        json_t *h = hints(db, "fluxtool", i ? NULL : "fp_flux", i == 2 ? "always" : "auto", "f9");
        CHECK(!returns(h, bad));
        json_decref(h);
        h = hints(db, "grid", "fp_flux", "always", "g9");
        CHECK(!returns(h, bad));
        json_decref(h);
    }
    free(good);
    free(bad);
    remem_close(db);
}

/* A lesson archived as a memory (remem forget, tier archived) is out of
 * the hints like one of status archived. */
static void test_archived_not_returned(void) {
    remem *db = open_mem();
    char *id = add_lesson(db, "grid", "clamp the coordinates", "fp_arch");
    json_t *h = hints(db, "grid", "fp_arch", "off", "a1");
    CHECK(returns(h, id));
    json_decref(h);
    CHECK_INT(remem_forget(db, "t", id, 0), REMEM_OK);
    h = hints(db, "grid", "fp_arch", "always", "a2");
    CHECK(!returns(h, id));
    json_decref(h);
    free(id);
    remem_close(db);
}

static void outcome_score(remem *db, const char *run, const char *domain, double score,
                          const char *lesson, const char *cluster) {
    json_t *a = json_pack("{ss ss ss ss sf}", "ns", "t", "run", run, "domain", domain, "result",
                          score >= 0.5 ? "pass" : "fail", "score", score);
    if (lesson) json_object_set_new(a, "lessons", json_pack("[s]", lesson));
    if (cluster) json_object_set_new(a, "task_cluster", json_string(cluster));
    char *txt = json_dumps(a, JSON_COMPACT), *out = NULL;
    int rc = remem_call(db, "lesson.outcome", txt, strlen(txt), &out);
    if (rc) fprintf(stderr, "  outcome: %s\n", remem_errmsg(db));
    CHECK_INT(rc, REMEM_OK);
    remem_free(out);
    free(txt);
    json_decref(a);
}

/* Utility by hand: the strict sample lacks runs without the lesson, so the
 * task cluster's runs of another domain become the baseline. */
static void test_utility_cluster_neighbours(void) {
    remem *db = open_mem();
    json_t *a = CALL(db, "lesson.add", "{ss ss ss ss}", "ns", "t", "domain", "excel", "rule",
                     "rebuild formulas after deleting columns", "task_cluster", "reports");
    char *id = strdup(S(a, "lesson_id"));
    json_decref(a);
    outcome_score(db, "n1", "sheets", 0.2, NULL, "reports"); /* neighbours */
    outcome_score(db, "n2", "sheets", 0.4, NULL, "reports");
    outcome_score(db, "x1", "other", 0.9, NULL, "elsewhere"); /* not a neighbour */
    outcome_score(db, "e1", "excel", 0.8, id, NULL);
    json_t *m = lesson_meta(db, id);
    /* with = {0.8}; without = the neighbours {0.2, 0.4}: 0.8 - 0.3 */
    CHECK_NEAR(json_number_value(json_object_get(m, "utility")), 0.5, 1e-9);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(m, "relevant_runs"), "without")),
              2);
    json_decref(m);
    free(id);
    remem_close(db);
}

/* Utility over the bar but a recent run far below the baseline: no
 * promotion until that run leaves the window. */
static void test_major_regression_blocks_promotion(void) {
    remem *db = open_mem();
    char *id = add_lesson(db, "grid", "rotate before placing", NULL);
    outcome_score(db, "b1", "grid", 0.5, NULL, NULL);
    outcome_score(db, "b2", "grid", 0.5, NULL, NULL);
    const double with[] = {1.0, 1.0, 0.0, 1.0};
    char run[16];
    for (int i = 0; i < 4; i++) {
        snprintf(run, sizeof run, "w%d", i);
        outcome_score(db, run, "grid", with[i], id, NULL);
    }
    json_t *m = lesson_meta(db, id);
    CHECK_NEAR(json_number_value(json_object_get(m, "utility")), 0.25, 1e-9);
    CHECK_STR(S(m, "status"), "candidate");
    json_decref(m);
    for (int i = 4; i < 8; i++) { /* four more good runs push the 0.0 out */
        snprintf(run, sizeof run, "w%d", i);
        outcome_score(db, run, "grid", 1.0, id, NULL);
        m = lesson_meta(db, id);
        CHECK_STR(S(m, "status"), i < 7 ? "candidate" : "promoted");
        json_decref(m);
    }
    free(id);
    remem_close(db);
}

static size_t lane_count(json_t *h, const char *lane) {
    size_t i, n = 0;
    json_t *e;
    json_array_foreach(json_object_get(h, "hints"), i, e) n += !strcmp(S(e, "lane"), lane);
    return n;
}

static void test_lanes(void) {
    remem *db = open_mem();
    char *s1 = add_lesson(db, "sqlite", "quote identifiers that are keywords", "fp_x");
    char *s2 = add_lesson(db, "sqlite", "list the tables before querying", "fp_x");
    char *t1 = add_lesson(db, "excel", "check the sheet name first", "fp_x");
    char *t2 = add_lesson(db, "grid", "reload the grid state", "fp_x");
    char *t3 = add_lesson(db, "fluxtool", "reset the flux buffer", "fp_x");
    /* A domain with strong strict lessons gets no transfer hint in auto. */
    json_t *h = hints(db, "sqlite", "fp_x", "auto", "r1");
    CHECK_INT(lane_count(h, "strict"), 2);
    CHECK_INT(lane_count(h, "transfer"), 0);
    CHECK(json_is_false(json_object_get(h, "strict_weak")));
    json_decref(h);
    /* always: the transfer lane opens, at most 1 per on-error retrieval,
     * its score multiplied down. */
    h = hints(db, "sqlite", "fp_x", "always", "r1");
    CHECK_INT(lane_count(h, "transfer"), 1);
    json_t *last = json_array_get(json_object_get(h, "hints"), 2);
    json_t *first = json_array_get(json_object_get(h, "hints"), 0);
    CHECK_STR(S(last, "lane"), "transfer");
    CHECK(json_number_value(json_object_get(last, "score")) <
          0.6 * json_number_value(json_object_get(first, "score")));
    json_decref(h);
    /* off: never. */
    h = hints(db, "newdomain", "fp_x", "off", "r2");
    CHECK_INT(json_array_size(json_object_get(h, "hints")), 0);
    json_decref(h);
    /* A domain with no lessons is weak: auto adds a transfer hint, one
     * only, however many other domains match. */
    h = hints(db, "newdomain", "fp_x", "auto", "r2");
    CHECK(json_is_true(json_object_get(h, "strict_weak")));
    CHECK_INT(lane_count(h, "transfer"), 1);
    CHECK_INT(lane_count(h, "strict"), 0);
    json_decref(h);
    /* auto wants evidence: a transfer lesson without the failure's
     * fingerprint (and not promoted) stays out; always lets it in. */
    h = hints(db, "newdomain", "fp_other", "auto", "r2");
    CHECK_INT(lane_count(h, "transfer"), 0);
    json_decref(h);
    /* Each returned hint counted as a retrieval. */
    json_t *m = lesson_meta(db, s1);
    CHECK_INT(json_integer_value(json_object_get(m, "retrieval_count")), 2);
    json_decref(m);
    free(s1);
    free(s2);
    free(t1);
    free(t2);
    free(t3);
    remem_close(db);
}

static void test_conflicts(void) {
    remem *db = open_mem();
    char *a = add_lesson(db, "grid", "place pieces row by row", "fp_c");
    outcome(db, "c0", "grid", "fail", NULL);
    outcome(db, "c1", "grid", "pass", a); /* a: helpful once, more reliable */
    json_t *b = CALL(db, "lesson.add", "{ss ss ss s[s] s[s]}", "ns", "t", "domain", "grid", "rule",
                     "place pieces column by column", "fingerprint", "fp_c", "conflicts_with", a);
    char *bid = strdup(S(b, "lesson_id"));
    json_decref(b);
    json_t *ma = lesson_meta(db, a);
    CHECK(lsn_has(json_object_get(ma, "conflicts_with"), bid)); /* mutual */
    json_decref(ma);
    for (int i = 0; i < 3; i++) {
        json_t *h = hints(db, "grid", "fp_c", "off", "c2");
        CHECK(returns(h, a));
        CHECK(!returns(h, bid));
        CHECK_INT(json_array_size(json_object_get(h, "conflicts")), 1);
        json_decref(h);
    }
    json_t *mb = lesson_meta(db, bid);
    CHECK_STR(S(mb, "status"), "suppressed"); /* lost 3 times */
    CHECK_HAS(S(mb, "status_reason"), "lost conflict resolution 3 times");
    json_decref(mb);
    int rc;
    CHECK(!call_rc(db, &rc, "lesson.add", "{ss ss ss s[s]}", "ns", "t", "domain", "grid", "rule",
                   "x", "conflicts_with", "lsn_nope"));
    CHECK_INT(rc, REMEM_EINVAL);
    free(a);
    free(bid);
    remem_close(db);
}

static size_t kinds(json_t *v, const char *kind) {
    size_t i, n = 0;
    json_t *e;
    json_array_foreach(json_object_get(v, "violations"), i, e) n += !strcmp(S(e, "kind"), kind);
    return n;
}

static void test_validation_gate(void) {
    remem *db = open_mem();
    json_t *schema =
        json_pack("{ss s[ss] s{s{ss} s{ss} s{ss}} sb}", "type", "object", "required", "command",
                  "cwd", "properties", "command", "type", "string", "cwd", "type", "string",
                  "timeout", "type", "integer", "additionalProperties", 0);
    /* Each of the four kinds, all at once: missing, empty, unknown. */
    json_t *v = CALL(db, "lesson.validate", "{sO s{ss si sb}}", "schema", schema, "input",
                     "command", "  ", "timeout", 5, "shell", 1);
    CHECK(json_is_false(json_object_get(v, "valid")));
    CHECK_INT(kinds(v, "missing_required"), 1);
    CHECK_INT(kinds(v, "empty_string"), 1);
    CHECK_INT(kinds(v, "unknown_key"), 1);
    CHECK_INT(json_array_size(json_object_get(v, "violations")), 3);
    json_decref(v);
    v = CALL(db, "lesson.validate", "{sO s[s]}", "schema", schema, "input", "ls -la");
    CHECK_INT(kinds(v, "wrong_type"), 1);
    CHECK_INT(json_array_size(json_object_get(v, "violations")), 1);
    json_decref(v);
    /* Never semantics: a nonsense command with the right shape passes,
     * and so does a wrong nested type (not the gate's business). */
    v = CALL(db, "lesson.validate", "{sO s{ss ss ss}}", "schema", schema, "input", "command",
             "selec * form t;;", "cwd", "/nope", "timeout", "soon");
    CHECK(json_is_true(json_object_get(v, "valid")));
    CHECK_STR(S(v, "signal"), "execute");
    json_decref(v);
    /* The retry cap: two retries on a step, then reflect; counters. */
    uint64_t a0, c0, a1, c1;
    remem_validation_counters(&a0, &c0);
    const char *want[] = {"retry", "retry", "reflect"};
    for (int i = 0; i < 3; i++) {
        v = CALL(db, "lesson.validate", "{sO s{} ss ss si}", "schema", schema, "input", "ns", "t",
                 "run", "v1", "step", 2);
        CHECK_STR(S(v, "signal"), want[i]);
        CHECK_INT(json_integer_value(json_object_get(v, "retry")), i + 1);
        json_decref(v);
    }
    /* Another step starts its own count. */
    v = CALL(db, "lesson.validate", "{sO s{} ss ss si}", "schema", schema, "input", "ns", "t",
             "run", "v1", "step", 3);
    CHECK_STR(S(v, "signal"), "retry");
    json_decref(v);
    remem_validation_counters(&a1, &c1);
    CHECK_INT(a1 - a0, 3);
    CHECK_INT(c1 - c0, 1);
    json_decref(schema);
    remem_close(db);
}

static void test_timeline(void) {
    remem *db = open_mem();
    json_t *schema = json_pack("{ss s[s]}", "type", "object", "required", "sql");
    char *l = add_lesson(db, "sqlite", "list the tables before querying", NULL);
    json_decref(CALL(db, "lesson.hints", "{ss ss ss ss}", "ns", "t", "domain", "sqlite", "task",
                     "count the orders", "run", "tl"));
    json_decref(CALL(db, "lesson.validate", "{sO s{} ss ss si}", "schema", schema, "input", "ns",
                     "t", "run", "tl", "step", 1));
    json_decref(CALL(db, "lesson.validate", "{sO s{ss} ss ss si}", "schema", schema, "input", "sql",
                     "select count(*) from order", "ns", "t", "run", "tl", "step", 1));
    json_t *e = CALL(db, "lesson.event", "{ss ss ss ss ss ss si}", "ns", "t", "domain", "sqlite",
                     "tool", "run_sqlite", "channel", "hard_failure", "error",
                     "Error: near \"order\": syntax error", "run", "tl", "step", 1);
    json_decref(CALL(db, "lesson.hints", "{ss ss ss ss si}", "ns", "t", "domain", "sqlite",
                     "fingerprint", S(e, "fingerprint"), "run", "tl", "step", 1));
    json_decref(CALL(db, "lesson.validate", "{sO s{ss} ss ss si}", "schema", schema, "input", "sql",
                     "select count(*) from orders", "ns", "t", "run", "tl", "step", 2));
    json_decref(CALL(db, "lesson.outcome", "{ss ss ss ss s[s] si}", "ns", "t", "run", "tl",
                     "domain", "sqlite", "result", "pass", "lessons", l, "steps", 2));
    json_t *t = CALL(db, "timeline", "{ss ss}", "ns", "t", "run", "tl");
    json_t *steps = json_object_get(json_object_get(t, "timeline"), "steps");
    CHECK_INT(json_array_size(steps), 2);
    json_t *s1 = json_array_get(steps, 0);
    CHECK_STR(S(s1, "validation"), "valid");
    CHECK_STR(S(s1, "execution"), "error");
    CHECK_INT(json_array_size(json_object_get(s1, "attempts")), 2);
    CHECK_STR(S(json_array_get(json_object_get(s1, "events"), 0), "fingerprint"),
              S(e, "fingerprint"));
    CHECK(json_is_true(json_object_get(s1, "next_step_changed")));
    CHECK_INT(json_array_size(json_object_get(json_object_get(t, "timeline"), "pre_run_hints")), 1);
    CHECK_HAS(S(t, "text"), "step 1: validation valid, execution error");
    json_decref(t);
    t = CALL(db, "timeline", "{ss ss ss}", "ns", "t", "run", "tl", "view", "decisions");
    CHECK_HAS(S(t, "text"), "retrieve pre_run");
    CHECK_HAS(S(t, "text"), "inject ");
    json_decref(t);
    t = CALL(db, "timeline", "{ss ss ss}", "ns", "t", "run", "tl", "view", "summary");
    json_t *sm = json_object_get(t, "summary");
    CHECK_NEAR(json_number_value(json_object_get(sm, "pass_rate")), 1.0, 1e-9);
    CHECK_INT(json_integer_value(json_object_get(sm, "tool_errors")), 1);
    CHECK_INT(json_integer_value(json_object_get(sm, "validation_retry_count")), 1);
    CHECK_INT(json_integer_value(json_object_get(sm, "lesson_activations")), 1);
    json_decref(t);
    int rc;
    CHECK(!call_rc(db, &rc, "timeline", "{ss ss}", "ns", "t", "run", "nope"));
    CHECK_INT(rc, REMEM_ENOTFOUND);
    json_decref(e);
    json_decref(schema);
    free(l);
    remem_close(db);
}

/* Acceptance check 3: the benchmark's pass rate rises from wave 1 to wave
 * 3, the planted harmful lessons end suppressed, contamination is 0 in
 * strict-only mode; and it is deterministic (two runs, one answer). */
static void test_eval_benchmark(void) {
    remem *db = open_mem();
    json_t *r = CALL(db, "eval.lessons", "{}");
    json_t *again = CALL(db, "eval.lessons", "{}");
    json_t *modes = json_object_get(r, "modes");
    CHECK_INT(json_array_size(modes), 2);
    size_t i;
    json_t *m;
    json_array_foreach(modes, i, m) {
        json_t *w = json_object_get(m, "waves");
        CHECK_INT(json_array_size(w), 3);
        double p1 = json_number_value(json_object_get(json_array_get(w, 0), "pass_rate"));
        double p3 = json_number_value(json_object_get(json_array_get(w, 2), "pass_rate"));
        CHECK(p1 < p3);
        double s1 = json_number_value(json_object_get(json_array_get(w, 0), "mean_steps"));
        double s3 = json_number_value(json_object_get(json_array_get(w, 2), "mean_steps"));
        CHECK(s3 < s1);
        size_t j, harmful = 0;
        json_t *p;
        json_array_foreach(json_object_get(m, "planted"), j, p) {
            if (strcmp(S(p, "role"), "harmful")) continue;
            harmful++;
            CHECK_STR(S(p, "status"), "suppressed");
        }
        CHECK_INT(harmful, 2);
        if (!strcmp(S(m, "policy"), "off")) {
            CHECK_INT(json_integer_value(json_object_get(m, "contamination")), 0);
            for (size_t k = 0; k < 3; k++)
                CHECK_INT(
                    json_integer_value(json_object_get(json_array_get(w, k), "transfer_hints")), 0);
        }
    }
    /* The lure (excel's own fix, harmful in grid) is stopped at the border
     * in auto mode and keeps its place at home. */
    json_t *autom = json_array_get(modes, 1);
    CHECK_STR(S(autom, "policy"), "auto");
    json_array_foreach(json_object_get(autom, "planted"), i, m) {
        if (strcmp(S(m, "role"), "lure")) continue;
        CHECK(json_is_true(json_object_get(m, "transfer_blocked")));
        CHECK(strcmp(S(m, "status"), "suppressed") != 0);
    }
    /* The caller's store is untouched. */
    char *st = NULL;
    CHECK_INT(remem_namespaces(db, &st), REMEM_OK);
    CHECK(!strstr(st, "eval:lessons"));
    remem_free(st);
    CHECK_STR(S(r, "text"), S(again, "text"));
    json_decref(r);
    json_decref(again);
    remem_close(db);
}

/* Seed 002's benchmark metrics by its own names: fingerprint recurrence
 * before (the first wave) and after (the last), lower after; and the
 * validation retry count, per wave and in all. */
static void test_eval_seed_metrics(void) {
    remem *db = open_mem();
    json_t *r = CALL(db, "eval.lessons", "{}");
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(r, "modes"), i, m) {
        json_t *w = json_object_get(m, "waves");
        json_t *first = json_array_get(w, 0), *last = json_array_get(w, json_array_size(w) - 1);
        json_t *before = json_object_get(m, "fingerprint_recurrence_before");
        json_t *after = json_object_get(m, "fingerprint_recurrence_after");
        CHECK(json_is_number(before) && json_is_number(after));
        CHECK_NEAR(json_number_value(before),
                   json_number_value(json_object_get(first, "fingerprint_recurrence")), 1e-12);
        CHECK_NEAR(json_number_value(after),
                   json_number_value(json_object_get(last, "fingerprint_recurrence")), 1e-12);
        CHECK(json_number_value(after) < json_number_value(before));
        json_int_t total = 0;
        size_t j;
        json_t *wv;
        json_array_foreach(w, j, wv) {
            CHECK(json_is_integer(json_object_get(wv, "validation_retry_count")));
            CHECK_INT(json_integer_value(json_object_get(wv, "validation_retry_count")),
                      json_integer_value(json_object_get(wv, "validation_retries")));
            total += json_integer_value(json_object_get(wv, "validation_retry_count"));
        }
        CHECK_INT(json_integer_value(json_object_get(m, "validation_retry_count")), total);
    }
    CHECK(strstr(S(r, "text"), "fingerprint recurrence before") != NULL);
    json_decref(r);
    remem_close(db);
}

/* Caller (model) tags are soft: a lesson that shares the query's system
 * tag (tool:, from the error event its fingerprint names) gets more of
 * the tag component than one that shares only a caller's tag. */
static void test_caller_tags_soft(void) {
    remem *db = open_mem();
    json_t *ev = CALL(db, "lesson.event", "{s:s,s:s,s:s,s:s,s:s}", "ns", "t", "domain", "sqlite",
                      "tool", "run_sqlite", "channel", "hard_failure", "error", "database is locked");
    json_t *a = CALL(db, "lesson.add", "{s:s,s:s,s:s,s:[s]}", "ns", "t", "domain", "sqlite", "rule",
                     "Wait for the lock, then retry once.", "fingerprint", S(ev, "fingerprint"));
    json_t *b = CALL(db, "lesson.add", "{s:s,s:s,s:s,s:[s]}", "ns", "t", "domain", "sqlite", "rule",
                     "Join on the primary key.", "tag", "topic:joins");
    json_t *h = CALL(db, "lesson.hints", "{s:s,s:s,s:s,s:[s],s:i}", "ns", "t", "domain", "sqlite",
                     "tool", "run_sqlite", "tag", "topic:joins", "k", 5);
    double ta = -1, tb = -1;
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(h, "hints"), i, x) {
        double t = json_number_value(json_object_get(json_object_get(x, "components"), "tags"));
        if (!strcmp(S(x, "lesson_id"), S(a, "lesson_id"))) ta = t;
        if (!strcmp(S(x, "lesson_id"), S(b, "lesson_id"))) tb = t;
    }
    CHECK_NEAR(ta, 1.0 / 1.5, 1e-9); /* tool:run_sqlite (weight 1) of 1 + 0.5 */
    CHECK_NEAR(tb, 0.5 / 1.5, 1e-9); /* topic:joins (weight 0.5) */
    json_decref(ev);
    json_decref(a);
    json_decref(b);
    json_decref(h);
    remem_close(db);
}

/* End of run (seed 002's self-reflection) without a model: the rule
 * fix_after_error makes a candidate lesson of each failure that a later
 * step of the run fixed, in the records' own words, and none of a failure
 * nothing fixed; without "learn" nothing is added. */
static void test_learn_from_run(void) {
    remem *db = open_mem();
    const char *schema = "{\"type\":\"object\",\"required\":[\"sql\"]}";
#define ATTEMPT(run, step, input)                                                            \
    json_decref(CALL(db, "lesson.validate", "{s:s,s:s,s:i,s:s,s:o,s:o}", "ns", "t", "run", run, \
                     "step", step, "tool", "run_sqlite", "schema", json_loads(schema, 0, NULL), \
                     "input", json_loads(input, 0, NULL)))
#define EVENT(run, step, err)                                                                 \
    CALL(db, "lesson.event", "{s:s,s:s,s:s,s:s,s:s,s:s,s:i}", "ns", "t", "domain", "sqlite", \
         "tool", "run_sqlite", "channel", "hard_failure", "error", err, "run", run, "step", step)
    ATTEMPT("r1", 1, "{\"sql\":\"select * from orders\"}");
    json_t *e1 = EVENT("r1", 1, "no such table: orders");
    ATTEMPT("r1", 2, "{}"); /* invalid: not what worked */
    ATTEMPT("r1", 2, "{\"sql\":\".tables\"}");
    ATTEMPT("r1", 3, "{\"sql\":\"select 1\"}");
    json_t *e3 = EVENT("r1", 3, "database is locked"); /* nothing fixed it */
    json_t *o = CALL(db, "lesson.outcome", "{s:s,s:s,s:s,s:s,s:b}", "ns", "t", "run", "r1", "domain",
                     "sqlite", "result", "pass", "learn", 1);
    CHECK_STR(S(o, "learned_by"), "fix_after_error");
    json_t *c = json_object_get(o, "candidate_lessons");
    CHECK_INT(json_array_size(c), 1);
    json_t *l = json_array_get(c, 0);
    CHECK_STR(S(l, "rule_text"),
              "After \"no such table: orders\" from run_sqlite, what worked next (step 2): "
              "{\"sql\":\".tables\"}");
    CHECK_STR(S(l, "status"), "candidate");
    CHECK_STR(json_string_value(json_array_get(json_object_get(l, "fingerprints"), 0)),
              S(e1, "fingerprint"));
    /* the same failure in a later run gets it as an on-error hint */
    json_t *h = CALL(db, "lesson.hints", "{s:s,s:s,s:s,s:s}", "ns", "t", "domain", "sqlite", "error",
                     "no such table: orders", "tool", "run_sqlite");
    CHECK_STR(S(json_array_get(json_object_get(h, "hints"), 0), "lesson_id"), S(l, "lesson_id"));
    /* without learn: nothing added */
    ATTEMPT("r2", 1, "{\"sql\":\"x\"}");
    json_decref(EVENT("r2", 1, "syntax error near x"));
    ATTEMPT("r2", 2, "{\"sql\":\"select 2\"}");
    json_t *o2 = CALL(db, "lesson.outcome", "{s:s,s:s,s:s,s:s}", "ns", "t", "run", "r2", "domain",
                      "sqlite", "result", "pass");
    CHECK(json_object_get(o2, "candidate_lessons") == NULL);
    json_t *ls = CALL(db, "lesson.list", "{s:s}", "ns", "t");
    CHECK_INT(json_array_size(json_object_get(ls, "lessons")), 1);
#undef ATTEMPT
#undef EVENT
    json_decref(e1);
    json_decref(e3);
    json_decref(o);
    json_decref(o2);
    json_decref(h);
    json_decref(ls);
    remem_close(db);
}

/* Seed 002's fourth status: a lesson archived (remem forget: tier
 * archived) is listed as status archived, and lesson.list --status
 * archived finds it; the status it had is kept beside. */
static void test_archived_status(void) {
    remem *db = open_mem();
    json_t *a = CALL(db, "lesson.add", "{s:s,s:s,s:s}", "ns", "t", "domain", "sqlite", "rule",
                     "Quote identifiers.");
    json_decref(CALL(db, "lesson.add", "{s:s,s:s,s:s}", "ns", "t", "domain", "sqlite", "rule",
                     "Use LIMIT while exploring."));
    CHECK_INT(remem_forget(db, "t", S(a, "lesson_id"), 0), REMEM_OK);
    json_t *l = CALL(db, "lesson.list", "{s:s,s:s}", "ns", "t", "status", "archived");
    CHECK_INT(json_array_size(json_object_get(l, "lessons")), 1);
    json_t *x = json_array_get(json_object_get(l, "lessons"), 0);
    CHECK_STR(S(x, "lesson_id"), S(a, "lesson_id"));
    CHECK_STR(S(x, "status"), "archived");
    CHECK_STR(S(x, "status_before_archive"), "candidate");
    json_t *c = CALL(db, "lesson.list", "{s:s,s:s}", "ns", "t", "status", "candidate");
    CHECK_INT(json_array_size(json_object_get(c, "lessons")), 1);
    json_decref(a);
    json_decref(l);
    json_decref(c);
    remem_close(db);
}

/* Seed 002's context key, tool family + adapter domain: with
 * tool_family the lessons key on family:domain, so one adapter under two
 * tool families keeps two strict lanes. */
static void test_tool_family_key(void) {
    remem *db = open_mem();
    json_t *a = CALL(db, "lesson.add", "{s:s,s:s,s:s,s:s}", "ns", "t", "domain", "sqlite",
                     "tool_family", "cli", "rule", "List the tables first.");
    CHECK_STR(S(json_object_get(a, "lesson"), "domain_key"), "cli:sqlite");
    json_t *h = CALL(db, "lesson.hints", "{s:s,s:s,s:s,s:s,s:s}", "ns", "t", "domain", "sqlite",
                     "tool_family", "cli", "task", "list the tables", "policy", "off");
    CHECK_INT(json_array_size(json_object_get(h, "hints")), 1);
    CHECK_STR(S(json_array_get(json_object_get(h, "hints"), 0), "lane"), "strict");
    json_t *o = CALL(db, "lesson.hints", "{s:s,s:s,s:s,s:s,s:s}", "ns", "t", "domain", "sqlite",
                     "tool_family", "computer_use", "task", "list the tables", "policy", "off");
    CHECK_INT(json_array_size(json_object_get(o, "hints")), 0);
    int rc;
    json_t *bad = call_rc(db, &rc, "lesson.hints", "{s:s,s:s,s:s}", "ns", "t", "domain", "sqlite",
                          "tool_family", "a:b");
    CHECK_INT(rc, REMEM_EINVAL);
    json_decref(bad);
    json_decref(a);
    json_decref(h);
    json_decref(o);
    remem_close(db);
}

/* With an LLM, the end-of-run reflection is the model's: it sees the
 * run's failures numbered, and each rule it writes takes the fingerprint
 * of the failure it names; a rule naming no failure of the list is
 * dropped. A model that answers nothing usable falls back to
 * fix_after_error. */
static void test_learn_with_llm(void) {
    llm_standin s;
    if (llm_standin_start(&s, "[{\"match\": \"failed at these steps\", \"reply\": "
                              "\"{\\\"lessons\\\": [{\\\"failure\\\": 1, \\\"rule\\\": "
                              "\\\"Run .tables before querying a table.\\\"}, {\\\"failure\\\": 9, "
                              "\\\"rule\\\": \\\"made up\\\"}]}\"}]")) {
        SKIP("python3 or the stand-in is not available");
        return;
    }
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    o.llm_url = s.url;
    o.llm_model = "stand-in-model";
    remem *db = NULL;
    CHECK_INT(remem_open(":memory:", &o, &db), REMEM_OK);
    json_t *e = CALL(db, "lesson.event", "{s:s,s:s,s:s,s:s,s:s,s:s,s:i}", "ns", "t", "domain",
                     "sqlite", "tool", "run_sqlite", "channel", "hard_failure", "error",
                     "no such table: orders", "run", "r1", "step", 1);
    json_t *out = CALL(db, "lesson.outcome", "{s:s,s:s,s:s,s:s,s:b}", "ns", "t", "run", "r1",
                       "domain", "sqlite", "result", "fail", "learn", 1);
    CHECK_STR(S(out, "learned_by"), "llm");
    json_t *c = json_object_get(out, "candidate_lessons");
    CHECK_INT(json_array_size(c), 1);
    CHECK_STR(S(json_array_get(c, 0), "rule_text"), "Run .tables before querying a table.");
    CHECK_STR(json_string_value(json_array_get(
                  json_object_get(json_array_get(c, 0), "fingerprints"), 0)),
              S(e, "fingerprint"));
    json_t *reqs = llm_standin_requests(&s);
    json_t *last = json_array_get(reqs, json_array_size(reqs) - 1);
    json_t *msgs = json_object_get(json_object_get(last, "body"), "messages");
    const char *prompt = json_string_value(
        json_object_get(json_array_get(msgs, json_array_size(msgs) - 1), "content"));
    CHECK(prompt && strstr(prompt, "1. step 1, tool run_sqlite: no such table: orders") != NULL);
    /* nothing usable: the deterministic rule (here, nothing fixed it: none) */
    llm_standin_rules(&s, "[{\"reply\": \"I cannot say.\"}]");
    json_decref(CALL(db, "lesson.event", "{s:s,s:s,s:s,s:s,s:s,s:s,s:i}", "ns", "t", "domain",
                     "sqlite", "tool", "run_sqlite", "channel", "hard_failure", "error",
                     "database is locked", "run", "r2", "step", 1));
    json_t *out2 = CALL(db, "lesson.outcome", "{s:s,s:s,s:s,s:s,s:b}", "ns", "t", "run", "r2",
                        "domain", "sqlite", "result", "fail", "learn", 1);
    CHECK_STR(S(out2, "learned_by"), "fix_after_error");
    CHECK_INT(json_array_size(json_object_get(out2, "candidate_lessons")), 0);
    json_decref(reqs);
    json_decref(e);
    json_decref(out);
    json_decref(out2);
    remem_close(db);
    llm_standin_stop(&s);
}

/* A store file that cannot be opened is a bad argument, not a failure of
 * the engine: REMEM_EINVAL (400 over HTTP) naming "store". */
static void test_eval_bad_store(void) {
    remem *db = open_mem();
    char dir[] = "/tmp/remem-evalstore-XXXXXX", path[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/missing/eval.db", dir); /* its folder does not exist */
    int rc = 0;
    json_t *r = call_rc(db, &rc, "eval.lessons", "{s:i,s:s}", "waves", 1, "store", path);
    CHECK(r == NULL);
    CHECK_INT(rc, REMEM_EINVAL);
    CHECK(strstr(remem_errmsg(db), "store: cannot open") != NULL);
    remem_close(db);
    rmdir(dir);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_normalise_table);
    RUN(test_fingerprint_same_and_different);
    RUN(test_event_op);
    RUN(test_add_merges);
    RUN(test_promotion_and_suppression);
    RUN(test_archived_not_returned);
    RUN(test_utility_cluster_neighbours);
    RUN(test_major_regression_blocks_promotion);
    RUN(test_lanes);
    RUN(test_conflicts);
    RUN(test_validation_gate);
    RUN(test_timeline);
    RUN(test_eval_benchmark);
    RUN(test_eval_seed_metrics);
    RUN(test_caller_tags_soft);
    RUN(test_learn_from_run);
    RUN(test_learn_with_llm);
    RUN(test_archived_status);
    RUN(test_tool_family_key);
    RUN(test_eval_bad_store);
    return TEST_EXIT();
}
