/*
 * test_experience.c: seed 000's replay memory (src/experience/) through
 * remem_call, as every face calls it: the exact stored text of a decision,
 * the situation query and its 2n candidates and reward filter (the
 * expected order computed here from the embedder's own vectors), feedback
 * that replaces and keeps history, the few-shot block byte for byte, the
 * stats and hydration. The pure renderings (queries, Python-style values,
 * code point prefixes) are checked on their own first.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experience/experience.h"
#include "remem.h"
#include "support/engine_fixture.h"
#include "test.h"
#include "support/op_call.h"

/* ---- helpers ---- */

/* Call op with args (JSON text); the answer parsed, or NULL with *rc set. */
static const char *sget(json_t *o, const char *k) {
    return json_string_value(json_object_get(o, k));
}

static char *query_of(const char *title, const char *metrics_json) {
    json_t *m = metrics_json ? json_loads(metrics_json, 0, NULL) : NULL;
    strbuf b;
    sb_init(&b);
    exp_decision_query(title, m, &b);
    json_decref(m);
    return sb_take(&b);
}

static char *world_of(const char *domain, const char *world_json) {
    json_t *w = json_loads(world_json, 0, NULL);
    strbuf b;
    sb_init(&b);
    exp_world_query(domain, w, &b);
    json_decref(w);
    return sb_take(&b);
}

/* ---- pure renderings ---- */

static void test_decision_query(void) {
    char *q = query_of("The Perfect Storm", "{\"a\": 90, \"b\": 85, \"c\": 10, \"d\": 85}");
    CHECK_STR(q, "The Perfect Storm c:10 b:85 d:85"); /* ties keep key order */
    free(q);
    /* Python's {v:.0f}: ties to even on the binary value */
    q = query_of("T", "{\"x\": 2.5, \"y\": 3.5, \"z\": 0.49}");
    CHECK_STR(q, "T z:0 x:2 y:4");
    free(q);
    q = query_of("Friday 6PM", "{\"career.workload\": 90, \"mental_wellbeing.stress_level\": 85}");
    CHECK_STR(q, "Friday 6PM mental_wellbeing.stress_level:85 career.workload:90");
    free(q);
    q = query_of("Alone", NULL);
    CHECK_STR(q, "Alone "); /* the seed's f"{title} {''}" */
    free(q);
}

static void test_world_query(void) {
    char *q = world_of("flight_crisis", "{\"lounge_access\": true, \"flight_rebooked\": false}");
    CHECK_STR(q, "TaskDomain: flight_crisis flight_rebooked:False lounge_access:True");
    free(q);
    /* numbers by value; false and strings count 0, true 1; key order on ties */
    q = world_of("d", "{\"fuel\": 0.5, \"gate\": \"B12\", \"ok\": true, \"delay\": -5, "
                      "\"rebooked\": false}");
    CHECK_STR(q, "TaskDomain: d delay:-5 gate:B12 rebooked:False");
    free(q);
    q = world_of("d", "{\"a\": 3.0, \"b\": 2.5, \"c\": 1e16}");
    CHECK_STR(q, "TaskDomain: d b:2.5 a:3.0 c:1e+16");
    free(q);
    q = world_of("d", "{\"n\": null, \"l\": [1, 2]}");
    CHECK_STR(q, "TaskDomain: d n:None l:[1,2]");
    free(q);
}

static void test_prefix_and_upper(void) {
    strbuf b;
    sb_init(&b);
    char s[400] = "";
    for (int i = 0; i < 150; i++) strcat(s, "\xc3\xa9"); /* é */
    exp_prefix_chars(s, 100, &b);
    CHECK_INT(b.len, 200); /* 100 code points of 2 bytes */
    sb_free(&b);
    sb_init(&b);
    exp_prefix_chars("short", 100, &b);
    CHECK_STR(b.data, "short");
    sb_free(&b);
    sb_init(&b);
    exp_upper("mental_wellbeing \xc3\xa9t\xc3\xa9", &b);
    CHECK_STR(b.data, "MENTAL_WELLBEING \xc3\x89T\xc3\x89");
    sb_free(&b);
}

/* ---- decisions ---- */

static void test_decision_add_text(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    /* a reasoning of 120 code points, some of two bytes: the stored text
     * keeps the first 100 code points, the metadata all of it */
    char reasoning[400] = "";
    for (int i = 0; i < 12; i++) strcat(reasoning, "\xc3\xa9tape 0123"); /* 10 code points */
    char args[1200];
    snprintf(args, sizeof args,
             "{\"ns\":\"a\",\"title\":\"Friday 6PM\",\"action\":\"communicate\","
             "\"domain\":\"relationships\",\"reward\":0.125,\"metrics\":{\"relationships.romantic\""
             ":55,\"mental_wellbeing.stress_level\":80},\"reasoning\":\"%s\",\"episode\":\"ep_1\"}",
             reasoning);
    json_t *r = call_ok(db, "decision.add", args);
    char want[800] = "Friday 6PM Action: communicate Domain: relationships Reward: 0.12 ";
    for (int i = 0; i < 10; i++) strcat(want, "\xc3\xa9tape 0123");
    CHECK_STR(sget(r, "stored_text"), want);
    remem_record *rec = NULL;
    CHECK_INT(remem_get(db, "a", sget(r, "id"), &rec), REMEM_OK);
    if (rec) {
        const remem_memory *m = remem_record_memory(rec);
        CHECK_STR(m->text, want);
        CHECK_STR(m->kind, "decision");
        json_t *meta = json_loads(m->metadata, 0, NULL);
        CHECK_STR(sget(meta, "reasoning"), reasoning);
        CHECK_STR(sget(meta, "episode_id"), "ep_1");
        CHECK_STR(sget(meta, "action"), "communicate");
        CHECK_NEAR(json_number_value(json_object_get(meta, "reward")), 0.125, 1e-12);
        CHECK_INT(json_integer_value(
                      json_object_get(json_object_get(meta, "metrics"), "relationships.romantic")),
                  55);
        json_decref(meta);
    }
    remem_record_free(rec);
    json_decref(r);
    /* 0.675 is 0.67500000000000004 in binary: Python prints 0.68 */
    r = call_ok(
        db, "decision.add",
        "{\"ns\":\"a\",\"title\":\"T\",\"action\":\"rest\",\"domain\":\"d\",\"reward\":0.675}");
    CHECK_STR(sget(r, "stored_text"), "T Action: rest Domain: d Reward: 0.68 ");
    json_decref(r);
    /* the same decision twice is two records (two episodes may share a text) */
    json_t *r2 = call_ok(db, "decision.add",
                         "{\"ns\":\"a\",\"title\":\"T\",\"action\":\"rest\",\"domain\":\"d\","
                         "\"reward\":0.675}");
    CHECK_STR(sget(r2, "outcome"), "added");
    json_decref(r2);
    remem_close(db);
}

static void test_decision_add_refusals(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    int rc = 0;
    json_t *r = call(db, "decision.add", "{\"ns\":\"a\",\"title\":\"T\",\"action\":\"x\"}", &rc);
    CHECK_INT(rc, REMEM_EINVAL);
    CHECK(strstr(remem_errmsg(db), "domain: is required") != NULL);
    r = call(db, "decision.add",
             "{\"ns\":\"a\",\"title\":\"T\",\"action\":\"x\",\"domain\":\"d\",\"reward\":1,"
             "\"metrics\":{\"m\":\"high\"}}",
             &rc);
    CHECK_INT(rc, REMEM_EINVAL);
    CHECK(strstr(remem_errmsg(db), "metrics.m") != NULL);
    r = call(db, "feedback.add", "{\"ns\":\"a\",\"episode\":\"e\",\"rating\":11}", &rc);
    CHECK_INT(rc, REMEM_EINVAL);
    CHECK(strstr(remem_errmsg(db), "rating") != NULL);
    CHECK(r == NULL);
    char *st = NULL;
    CHECK_INT(remem_stats(db, "a", &st), REMEM_OK);
    CHECK(st && strstr(st, "\"memories\":0") != NULL);
    remem_free(st);
    remem_close(db);
}

/* The decisions of the ordering test: titles chosen so that some share the
 * query's words and others do not; rewards on both sides of 0.05. */
typedef struct dspec {
    const char *title, *action, *domain;
    double reward;
    const char *reasoning;
} dspec;

static const dspec decisions[] = {
    {"Friday 6PM", "communicate", "relationships", 0.72, "Call before the evening."},
    {"Friday 6PM workload", "negotiate", "career", 0.01, "Asked for more time."},
    {"Friday 6PM stress", "rest", "mental_wellbeing", 0.04, "Slept early."},
    {"Monday budget review", "plan", "finances", 0.90, "Made a spreadsheet."},
    {"The Perfect Storm", "delegate", "career", 0.38, "Handed the report to a colleague."},
    {"career.workload crunch", "negotiate", "career", 0.55, "Moved the deadline."},
    {"Weekend trip", "rest", "physical_health", 0.20, "A walk in the hills."},
};
#define N_DEC (sizeof decisions / sizeof decisions[0])

typedef struct scored {
    size_t i;
    double cos;
} scored;

static int by_cos(const void *a, const void *b) {
    const scored *x = a, *y = b;
    return x->cos > y->cos ? -1 : x->cos < y->cos;
}

/* The expected ids of decision.similar, by hand: embed the query and every
 * stored text, rank by cosine, keep 2n, drop reward < 0.05, keep n. */
static size_t expected_similar(remem *db, const char *query, int n, size_t *out,
                               size_t *rank_of_best_reward) {
    int dim = remem_embedder_dim(db);
    const char *texts[N_DEC + 1];
    char stored[N_DEC][256];
    texts[0] = query;
    for (size_t i = 0; i < N_DEC; i++) {
        snprintf(stored[i], sizeof stored[i], "%s Action: %s Domain: %s Reward: %.2f %s",
                 decisions[i].title, decisions[i].action, decisions[i].domain, decisions[i].reward,
                 decisions[i].reasoning);
        texts[i + 1] = stored[i];
    }
    float *v = calloc((N_DEC + 1) * (size_t)dim, sizeof *v);
    CHECK_INT(remem_embed(db, texts, N_DEC + 1, v), REMEM_OK);
    scored s[N_DEC];
    for (size_t i = 0; i < N_DEC; i++) {
        double dot = 0, na = 0, nb = 0;
        for (int d = 0; d < dim; d++) {
            double a = v[d], b = v[(i + 1) * (size_t)dim + d];
            dot += a * b;
            na += a * a;
            nb += b * b;
        }
        s[i] = (scored){i, na > 0 && nb > 0 ? dot / sqrt(na * nb) : 0};
    }
    free(v);
    qsort(s, N_DEC, sizeof *s, by_cos);
    size_t k = 0;
    for (size_t r = 0; r < N_DEC && r < (size_t)(2 * n) && k < (size_t)n; r++)
        if (decisions[s[r].i].reward >= 0.05) out[k++] = s[r].i;
    for (size_t r = 0; r < N_DEC; r++)
        if (decisions[s[r].i].reward >= 0.05) {
            *rank_of_best_reward = r;
            break;
        }
    return k;
}

static void test_similar_by_hand(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    char ids[N_DEC][64];
    for (size_t i = 0; i < N_DEC; i++) {
        char args[600];
        snprintf(args, sizeof args,
                 "{\"ns\":\"s\",\"title\":\"%s\",\"action\":\"%s\",\"domain\":\"%s\","
                 "\"reward\":%.2f,\"reasoning\":\"%s\"}",
                 decisions[i].title, decisions[i].action, decisions[i].domain, decisions[i].reward,
                 decisions[i].reasoning);
        json_t *r = call_ok(db, "decision.add", args);
        snprintf(ids[i], sizeof ids[i], "%s", r ? sget(r, "id") : "");
        json_decref(r);
    }
    const char *metrics = "{\"career.workload\": 90, \"mental_wellbeing.stress_level\": 85, "
                          "\"finances.savings\": 95, \"relationships.romantic\": 99}";
    const char *query = "Friday 6PM mental_wellbeing.stress_level:85 career.workload:90 "
                        "finances.savings:95";
    for (int n = 1; n <= 4; n++) {
        size_t want[N_DEC], best_rank = 0;
        size_t k = expected_similar(db, query, n, want, &best_rank);
        char args[600];
        snprintf(args, sizeof args,
                 "{\"ns\":\"s\",\"title\":\"Friday 6PM\",\"metrics\":%s,\"n\":%d}", metrics, n);
        json_t *r = call_ok(db, "decision.similar", args);
        CHECK_STR(sget(r, "query"), query);
        CHECK_INT(json_integer_value(json_object_get(r, "candidates")), 2 * n);
        json_t *res = json_object_get(r, "results");
        CHECK_INT(json_array_size(res), k);
        for (size_t j = 0; j < k && j < json_array_size(res); j++) {
            json_t *d = json_array_get(res, j);
            CHECK_STR(sget(d, "id"), ids[want[j]]);
            CHECK_STR(sget(d, "action"), decisions[want[j]].action);
            CHECK_STR(sget(d, "domain"), decisions[want[j]].domain);
            CHECK_STR(sget(d, "reasoning"), decisions[want[j]].reasoning);
            CHECK(json_real_value(json_object_get(d, "reward")) >= 0.05);
            CHECK(json_is_real(json_object_get(d, "similarity_score")));
        }
        /* the scenario the candidate cap exists for: with n = 1 the two
         * nearest decisions are the low-reward "Friday 6PM ..." ones, so
         * nothing comes back although rewarded decisions exist further down */
        if (n == 1) {
            CHECK(best_rank >= 2);
            CHECK_INT(k, 0);
        }
        json_decref(r);
    }
    remem_close(db);
}

/* ---- feedback, few-shot, stats ---- */

static void test_feedback_replaces(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    json_t *r = call_ok(db, "feedback.add",
                        "{\"ns\":\"f\",\"episode\":\"ep_12345\",\"rating\":6,\"improved\":"
                        "[\"relationships\",\"mental_wellbeing\"],\"worsened\":[],\"notes\":"
                        "\"First impressions.\",\"hours\":2.5}");
    CHECK_STR(sget(r, "id"), "fb_ep_12345");
    CHECK_STR(sget(r, "outcome"), "added");
    CHECK_STR(sget(r, "stored_text"),
              "Episode: ep_12345 Rated 6/10. Improved: relationships, mental_wellbeing. Notes: "
              "First impressions.");
    json_decref(r);
    r = call_ok(db, "feedback.add",
                "{\"ns\":\"f\",\"episode\":\"ep_12345\",\"rating\":8,\"notes\":\"Partner called "
                "back and offered help with finances.\"}");
    CHECK_STR(sget(r, "outcome"), "replaced");
    json_decref(r);
    remem_record *rec = NULL;
    CHECK_INT(remem_get(db, "f", "fb_ep_12345", &rec), REMEM_OK);
    if (rec) {
        json_t *meta = json_loads(remem_record_memory(rec)->metadata, 0, NULL);
        CHECK_INT(json_integer_value(json_object_get(meta, "rating")), 8);
        CHECK_INT(json_array_size(json_object_get(meta, "improved")), 0);
        json_decref(meta);
    }
    remem_record_free(rec);
    char *h = NULL;
    CHECK_INT(remem_history(db, "f", "fb_ep_12345", &h), REMEM_OK);
    json_t *hist = h ? json_loads(h, 0, NULL) : NULL;
    CHECK_INT(json_array_size(hist), 2); /* the first feedback is kept */
    CHECK(h && strstr(h, "First impressions.") != NULL);
    json_decref(hist);
    remem_free(h);
    r = call_ok(db, "feedback.similar", "{\"ns\":\"f\",\"text\":\"offered help with finances\"}");
    json_t *res = json_object_get(r, "results");
    CHECK_INT(json_array_size(res), 1);
    CHECK_STR(sget(json_array_get(res, 0), "id"), "fb_ep_12345");
    json_decref(r);
    remem_close(db);
}

static void test_fewshot_bytes(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    json_t *r = call_ok(db, "fewshot", "{\"ns\":\"w\",\"title\":\"Friday 6PM\"}");
    CHECK_STR(sget(r, "text"), ""); /* no decision yet: an empty block */
    json_decref(r);
    json_decref(
        call_ok(db, "decision.add",
                "{\"ns\":\"w\",\"title\":\"Friday 6PM\",\"action\":\"communicate\","
                "\"domain\":\"relationships\",\"reward\":0.72,\"metrics\":{"
                "\"relationships.romantic\":55},\"reasoning\":\"A quick call prevents "
                "relationship erosion during high-stress periods.\",\"episode\":\"ep_1\"}"));
    json_decref(call_ok(db, "decision.add",
                        "{\"ns\":\"w\",\"title\":\"Something else entirely\",\"action\":\"rest\","
                        "\"domain\":\"mental_wellbeing\",\"reward\":0.3,\"reasoning\":\"Slept.\","
                        "\"episode\":\"ep_2\"}"));
    json_decref(call_ok(db, "feedback.add",
                        "{\"ns\":\"w\",\"episode\":\"ep_1\",\"rating\":8,\"notes\":\"Partner "
                        "appreciated the transparency.\"}"));
    r = call_ok(db, "fewshot",
                "{\"ns\":\"w\",\"title\":\"Friday 6PM\",\"metrics\":{\"relationships.romantic\":"
                "55},\"n\":2}");
    CHECK_STR(sget(r, "text"),
              "--- PAST EXPERIENCE & HUMAN VERIFICATION ---\n"
              "- Action Taken: [COMMUNICATE] on RELATIONSHIPS\n"
              "Agent's Initial Reasoning: A quick call prevents relationship erosion during "
              "high-stress periods.\n"
              "HUMAN FEEDBACK: Rated 8/10. Notes: Partner appreciated the transparency.\n"
              "- Action Taken: [REST] on MENTAL_WELLBEING\n"
              "Agent's Initial Reasoning: Slept.");
    CHECK_INT(json_array_size(json_object_get(r, "decisions")), 2);
    json_decref(r);
    remem_close(db);
}

static void test_stats(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    char *st = NULL;
    json_decref(call_ok(db, "feedback.add", "{\"ns\":\"s\",\"episode\":\"e\",\"rating\":3}"));
    CHECK_INT(remem_stats(db, "s", &st), REMEM_OK);
    CHECK(st && !strstr(st, "total_memories")); /* no decisions: no section */
    remem_free(st);
    const double rw[] = {0.72, 0.61, 0.01, 0.5};
    const char *act[] = {"communicate", "rest", "communicate", "negotiate"};
    for (int i = 0; i < 4; i++) {
        char a[300];
        snprintf(
            a, sizeof a,
            "{\"ns\":\"s\",\"title\":\"t%d\",\"action\":\"%s\",\"domain\":\"d\",\"reward\":%g}", i,
            act[i], rw[i]);
        json_decref(call_ok(db, "decision.add", a));
    }
    CHECK_INT(remem_stats(db, "s", &st), REMEM_OK);
    json_t *o = st ? json_loads(st, 0, NULL) : NULL;
    CHECK_INT(json_integer_value(json_object_get(o, "total_memories")), 4);
    CHECK_NEAR(json_number_value(json_object_get(o, "average_reward")),
               round((0.72 + 0.61 + 0.01 + 0.5) / 4 * 1000) / 1000, 1e-9);
    json_t *by = json_object_get(o, "by_action_type");
    CHECK_INT(json_integer_value(json_object_get(by, "communicate")), 2);
    CHECK_INT(json_integer_value(json_object_get(by, "rest")), 1);
    CHECK_INT(json_integer_value(json_object_get(by, "negotiate")), 1);
    CHECK_INT(json_integer_value(json_object_get(o, "memories")), 5);
    json_decref(o);
    remem_free(st);
    remem_close(db);
}

/* A reward near DBL_MAX is refused by name; rewards written with plain
 * add (no schema) near DBL_MAX still average to a number, not a missing
 * key. */
static void test_reward_bounds(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    int rc = 0;
    json_t *r = call(db, "decision.add",
                     "{\"ns\":\"s\",\"title\":\"t\",\"action\":\"rest\",\"domain\":\"d\","
                     "\"reward\":1.7e308}",
                     &rc);
    CHECK_INT(rc, REMEM_EINVAL);
    CHECK(strstr(remem_errmsg(db), "reward") && strstr(remem_errmsg(db), "maximum"));
    json_decref(r);
    r = call(db, "trajectory.add",
             "{\"ns\":\"s\",\"task\":\"t\",\"route\":\"r\",\"reward\":-1.7e308}", &rc);
    CHECK_INT(rc, REMEM_EINVAL);
    json_decref(r);
    char *st = NULL;
    CHECK_INT(remem_stats(db, "s", &st), REMEM_OK);
    CHECK(st && !strstr(st, "total_memories")); /* nothing was written */
    remem_free(st);
    for (int i = 0; i < 3; i++) {
        remem_memory m;
        remem_memory_init(&m);
        m.ns = "s";
        m.kind = "decision";
        char text[32];
        snprintf(text, sizeof text, "big win number %d", i);
        m.text = text;
        m.metadata = "{\"reward\":1.7e308,\"action\":\"rest\"}";
        CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    }
    CHECK_INT(remem_stats(db, "s", &st), REMEM_OK);
    json_t *o = st ? json_loads(st, 0, NULL) : NULL;
    CHECK_INT(json_integer_value(json_object_get(o, "total_memories")), 3);
    json_t *avg = json_object_get(o, "average_reward");
    CHECK(json_is_number(avg));
    CHECK_NEAR(json_number_value(avg) / 1.7e308, 1.0, 1e-9);
    json_decref(o);
    remem_free(st);
    remem_close(db);
}

/* ---- hydration ---- */

static const char *chroma_file =
    "{\"decisions\":{\"ids\":[\"seed_1\",\"seed_2\"],"
    "\"documents\":[\"Friday 6PM Action: negotiate Domain: career Reward: 0.72 Talked.\",null],"
    "\"metadatas\":[{\"conflict_title\":\"Friday 6PM\",\"action_type\":\"negotiate\","
    "\"target_domain\":\"career\",\"reward\":0.72,\"reasoning\":\"Talked.\",\"episode_id\":\"\","
    "\"personality_type\":\"unknown\"},{\"conflict_title\":\"The Perfect Storm\","
    "\"action_type\":\"communicate\",\"target_domain\":\"relationships\",\"reward\":0.58,"
    "\"reasoning\":\"Called.\",\"episode_id\":\"ep_9\"}],\"embeddings\":[[0.1],[0.2]]}}";
static const char *list_file = "[{\"title\":\"Weekend\",\"action\":\"rest\",\"domain\":\"health\","
                               "\"reward\":0.4,\"metrics\":{\"health.energy\":20}}]";

static void test_hydrate_once(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    char args[2000];
    snprintf(args, sizeof args, "{\"ns\":\"h\",\"files\":[%s,%s]}", chroma_file, list_file);
    json_t *r = call_ok(db, "hydrate", args);
    CHECK_INT(json_integer_value(json_object_get(r, "hydrated")), 3);
    CHECK(json_is_false(json_object_get(r, "skipped")));
    json_decref(r);
    remem_record *rec = NULL;
    CHECK_INT(remem_get(db, "h", "seed_2", &rec), REMEM_OK);
    if (rec) {
        const remem_memory *m = remem_record_memory(rec);
        /* no document: the text is rendered as decision.add would */
        CHECK_STR(m->text, "The Perfect Storm Action: communicate Domain: relationships Reward: "
                           "0.58 Called.");
        json_t *meta = json_loads(m->metadata, 0, NULL);
        CHECK_STR(sget(meta, "action"), "communicate");
        CHECK_STR(sget(meta, "episode_id"), "ep_9");
        json_decref(meta);
    }
    remem_record_free(rec);
    r = call_ok(db, "hydrate", args); /* again: nothing added */
    CHECK_INT(json_integer_value(json_object_get(r, "hydrated")), 0);
    CHECK(json_is_true(json_object_get(r, "skipped")));
    json_decref(r);
    char *st = NULL;
    CHECK_INT(remem_stats(db, "h", &st), REMEM_OK);
    CHECK(st && strstr(st, "\"total_memories\":3") != NULL);
    remem_free(st);
    /* a bad record anywhere: nothing written, the message says where */
    int rc = 0;
    snprintf(args, sizeof args,
             "{\"ns\":\"h2\",\"files\":[%s,[{\"title\":\"x\",\"action\":\"y\",\"reward\":1}]]}",
             list_file);
    r = call(db, "hydrate", args, &rc);
    CHECK_INT(rc, REMEM_EINVAL);
    CHECK(strstr(remem_errmsg(db), "files[1]: [0]: domain") != NULL);
    CHECK_INT(remem_stats(db, "h2", &st), REMEM_OK);
    CHECK(st && strstr(st, "\"memories\":0") != NULL);
    remem_free(st);
    remem_close(db);
}

/* The policy's hydrate files, relative to the configuration's folder, are
 * loaded by the first experience operation on a namespace, once. */
static void test_first_use_hydration(void) {
    tmpdir t;
    tmp_make(&t);
    char yaml[256], seed[256];
    snprintf(seed, sizeof seed, "%s/seed.json", t.dir);
    FILE *f = fopen(seed, "w");
    fputs(list_file, f);
    fclose(f);
    snprintf(yaml, sizeof yaml, "%s/remem.yaml", t.dir);
    f = fopen(yaml, "w");
    fputs("policies:\n  \"advisor:*\":\n    hydrate: seed.json\n", f);
    fclose(f);
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    o.config_path = yaml;
    remem *db = NULL;
    CHECK_INT(remem_open(t.db, &o, &db), REMEM_OK);
    json_t *r = call_ok(db, "decision.similar", "{\"ns\":\"advisor:a\",\"title\":\"Weekend\"}");
    CHECK_INT(json_array_size(json_object_get(r, "results")), 1);
    json_decref(r);
    json_decref(call_ok(db, "decision.add",
                        "{\"ns\":\"advisor:a\",\"title\":\"T\",\"action\":\"a\","
                        "\"domain\":\"d\",\"reward\":1}"));
    char *st = NULL;
    CHECK_INT(remem_stats(db, "advisor:a", &st), REMEM_OK);
    CHECK(st && strstr(st, "\"total_memories\":2") != NULL); /* hydrated once */
    remem_free(st);
    r = call_ok(db, "decision.similar", "{\"ns\":\"plain\",\"title\":\"Weekend\"}");
    CHECK_INT(json_array_size(json_object_get(r, "results")), 0); /* no policy, no seeds */
    json_decref(r);
    remem_close(db);
    unlink(seed);
    unlink(yaml);
    tmp_done(&t);
}

static void test_trajectories(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    json_t *r =
        call_ok(db, "trajectory.add",
                "{\"ns\":\"t\",\"task\":\"flight_crisis_task_main\",\"route\":"
                "\"rebook_premium\",\"reward\":2.5,\"summary\":{\"milestones_hit\":[\"m1\"],"
                "\"steps\":8}}");
    CHECK_STR(sget(r, "stored_text"),
              "Task: flight_crisis_task_main Route: rebook_premium Reward: 2.50 Hits: 1");
    json_decref(r);
    json_decref(call_ok(db, "trajectory.add",
                        "{\"ns\":\"t\",\"task\":\"dinner_task\",\"route\":\"cook\",\"reward\":1}"));
    r = call_ok(db, "trajectory.similar",
                "{\"ns\":\"t\",\"domain\":\"flight_crisis\",\"world\":{\"lounge_access\":true,"
                "\"flight_rebooked\":false},\"n\":1}");
    CHECK_STR(sget(r, "query"),
              "TaskDomain: flight_crisis flight_rebooked:False lounge_access:True");
    json_t *res = json_object_get(r, "results");
    CHECK_INT(json_array_size(res), 1);
    CHECK_STR(sget(json_array_get(res, 0), "task_id"), "flight_crisis_task_main");
    CHECK_INT(json_integer_value(
                  json_object_get(json_object_get(json_array_get(res, 0), "summary"), "steps")),
              8);
    json_decref(r);
    remem_close(db);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_decision_query);
    RUN(test_world_query);
    RUN(test_prefix_and_upper);
    RUN(test_decision_add_text);
    RUN(test_decision_add_refusals);
    RUN(test_similar_by_hand);
    RUN(test_feedback_replaces);
    RUN(test_fewshot_bytes);
    RUN(test_stats);
    RUN(test_hydrate_once);
    RUN(test_first_use_hydration);
    RUN(test_trajectories);
    RUN(test_reward_bounds);
    return TEST_EXIT();
}
