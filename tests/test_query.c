/*
 * test_query.c: the recall query's JSON parser (src/engine/query.c) and the
 * numeric rules remem_recall applies to a remem_query filled in C. Table-
 * driven: each row is a JSON query and either the fields it must produce or
 * the exact message it must be refused with; then the same numeric rules
 * through remem_recall, with the same messages, so that a C caller and a
 * JSON client meet one rule set (issue 8, item 7).
 */
#include <math.h>
#include <stdint.h>

#include "remem.h"
#include "test.h"

static int parse(const char *json, remem_query_json **out, char *err, size_t cap) {
    return remem_query_parse(json, strlen(json), out, err, cap);
}

static void test_fields_are_read(void) {
    const char *json = "{\"namespaces\":[\"a\",\"b\"],\"text\":\"deploys\",\"k\":3,"
                       "\"profile\":\"stream\",\"filter\":{\"kind\":\"decision\"},"
                       "\"w_relevance\":0.5,\"w_lexical\":0,\"w_recency\":1,"
                       "\"w_importance\":2,\"w_context\":0.25,\"min_similarity\":-1,"
                       "\"min_score\":0.1,\"recency_base\":0.9,\"half_life_hours\":24,"
                       "\"normalize\":true,\"candidates\":40,\"tiers\":[\"static\",\"short\"],"
                       "\"now\":\"2023-05-08T15:56:00+02:00\",\"touch\":false,"
                       "\"include_invalid\":true}";
    remem_query_json *p = NULL;
    char err[256] = "";
    CHECK_INT(parse(json, &p, err, sizeof err), REMEM_OK);
    CHECK_STR(err, "");
    if (!p) return;
    const remem_query *q = remem_query_json_get(p);
    CHECK_INT(q->n_namespaces, 2);
    CHECK_STR(q->namespaces[0], "a");
    CHECK_STR(q->namespaces[1], "b");
    CHECK_STR(q->text, "deploys");
    CHECK_INT(q->k, 3);
    CHECK_STR(q->profile, "stream");
    CHECK_STR(q->filter, "{\"kind\":\"decision\"}");
    CHECK_NEAR(q->w_relevance, 0.5, 0);
    CHECK_NEAR(q->w_lexical, 0, 0);
    CHECK_NEAR(q->w_recency, 1, 0);
    CHECK_NEAR(q->w_importance, 2, 0);
    CHECK_NEAR(q->w_context, 0.25, 0);
    CHECK_NEAR(q->min_similarity, -1, 0);
    CHECK_NEAR(q->min_score, 0.1, 0);
    CHECK_NEAR(q->recency_base, 0.9, 0);
    CHECK_NEAR(q->half_life_hours, 24, 0);
    CHECK_INT(q->normalize, 1);
    CHECK_INT(q->candidates, 40);
    CHECK_STR(q->tiers, "static,short");
    CHECK_INT(q->now, 1683554160000);
    CHECK_INT(q->no_touch, 1);
    CHECK_INT(q->include_invalid, 1);
    CHECK(q->vector == NULL);
    remem_query_json_free(p);
}

static void test_defaults_and_short_forms(void) {
    remem_query_json *p = NULL;
    char err[256];
    /* a lone namespace, a filter as text, tiers as text, null = absent */
    const char *json =
        "{\"namespaces\":\"a\",\"text\":\"x\",\"filter\":\"{\\\"kind\\\":\\\"k\\\"}\","
        "\"tiers\":\"long\",\"k\":null,\"profile\":null,\"now\":1000}";
    CHECK_INT(parse(json, &p, err, sizeof err), REMEM_OK);
    if (!p) return;
    const remem_query *q = remem_query_json_get(p);
    CHECK_INT(q->n_namespaces, 1);
    CHECK_STR(q->namespaces[0], "a");
    CHECK_STR(q->filter, "{\"kind\":\"k\"}");
    CHECK_STR(q->tiers, "long");
    CHECK_INT(q->k, 0);
    CHECK(q->profile == NULL);
    CHECK_INT(q->now, 1000);
    CHECK(isnan(q->w_relevance) && isnan(q->min_score) && isnan(q->recency_base));
    CHECK_INT(q->normalize, -1);
    CHECK_INT(q->candidates, -1);
    CHECK_INT(q->no_touch, 0);
    remem_query_json_free(p);

    /* k 5.0 is the integer 5; a vector alone is enough */
    CHECK_INT(
        parse("{\"namespaces\":[\"a\"],\"vector\":[1,0.5,-2],\"k\":5.0}", &p, err, sizeof err),
        REMEM_OK);
    if (!p) return;
    q = remem_query_json_get(p);
    CHECK_INT(q->k, 5);
    CHECK_INT(q->dim, 3);
    CHECK(q->vector && q->vector[1] == 0.5f && q->vector[2] == -2.0f);
    CHECK(q->text == NULL);
    remem_query_json_free(p);
    remem_query_json_free(NULL);
}

static const struct {
    const char *json;
    int rc;
    const char *msg; /* the whole message, or its start when it ends in "..." */
} refused[] = {
    {"", REMEM_EPARSE, "query: not valid JSON: ..."},
    {"[1]", REMEM_EPARSE, "query: must be a JSON object, got an array"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"text\":\"y\"}", REMEM_EPARSE,
     "query: not valid JSON: duplicate object key..."},
    {"{\"text\":\"x\"}", REMEM_EINVAL, "namespaces: missing; name at least one"},
    {"{\"namespaces\":[],\"text\":\"x\"}", REMEM_EINVAL, "namespaces: empty; name at least one"},
    {"{\"namespaces\":{},\"text\":\"x\"}", REMEM_EINVAL,
     "namespaces: must be a name or a list of names"},
    {"{\"namespaces\":[\"a\",7],\"text\":\"x\"}", REMEM_EINVAL,
     "namespaces: item 1 must be a non-empty string"},
    {"{\"namespaces\":[\"\"],\"text\":\"x\"}", REMEM_EINVAL,
     "namespaces: item 0 must be a non-empty string"},
    {"{\"namespaces\":[\"a\"]}", REMEM_EINVAL, "text: missing; give text or vector to recall by"},
    {"{\"namespaces\":[\"a\"],\"text\":\"\"}", REMEM_EINVAL,
     "text: empty; give text or vector to recall by"},
    {"{\"namespaces\":[\"a\"],\"text\":[\"x\"]}", REMEM_EINVAL,
     "text: must be a string, got an array"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"bogus\":1}", REMEM_EINVAL,
     "bogus: unknown field (known: namespaces, text, vector, ..."},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"k\":0}", REMEM_EINVAL,
     "k: 0 is below the minimum of 1"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"k\":-3}", REMEM_EINVAL,
     "k: -3 is below the minimum of 1"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"k\":1001}", REMEM_EINVAL,
     "k: 1001 is above the limit of 1000"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"k\":1e9}", REMEM_EINVAL,
     "k: 1000000000 is above the limit of 1000"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"k\":99999999999999999999}", REMEM_EPARSE,
     "query: not valid JSON: ..."}, /* jansson: too big an integer */
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"k\":2.5}", REMEM_EINVAL,
     "k: 2.5 is not a whole number"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"k\":\"5\"}", REMEM_EINVAL,
     "k: must be an integer, got a string"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"candidates\":0}", REMEM_EINVAL,
     "candidates: 0 is below the minimum of 1"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"candidates\":100001}", REMEM_EINVAL,
     "candidates: 100001 is above the limit of 100000"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"w_relevance\":-0.1}", REMEM_EINVAL,
     "w_relevance: -0.1 is below the minimum of 0"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"w_lexical\":1e300}", REMEM_EINVAL,
     "w_lexical: 1e+300 is above the limit of 1000000"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"w_context\":true}", REMEM_EINVAL,
     "w_context: must be a number, got true"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"recency_base\":5}", REMEM_EINVAL,
     "recency_base: 5 is above the limit of 1"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"recency_base\":0}", REMEM_EINVAL,
     "recency_base: 0 must be above 0"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"half_life_hours\":-2}", REMEM_EINVAL,
     "half_life_hours: -2 must be above 0"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"min_score\":\"high\"}", REMEM_EINVAL,
     "min_score: must be a number, got a string"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"normalize\":1}", REMEM_EINVAL,
     "normalize: must be true or false, got a number"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"touch\":\"no\"}", REMEM_EINVAL,
     "touch: must be true or false, got a string"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"filter\":[1]}", REMEM_EINVAL,
     "filter: must be an object (or its JSON text), got an array"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"tiers\":[\"short\",2]}", REMEM_EINVAL,
     "tiers: item 1 must be a string, got a number"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"now\":\"2023-02-31\"}", REMEM_EINVAL,
     "now: \"2023-02-31\" is not a valid time (February 2023 has 28 days)"},
    {"{\"namespaces\":[\"a\"],\"text\":\"x\",\"now\":1.5}", REMEM_EINVAL,
     "now: must be milliseconds or an ISO 8601 string, got a number"},
    {"{\"namespaces\":[\"a\"],\"vector\":[]}", REMEM_EINVAL,
     "vector: must hold 1 to 65536 numbers, got 0"},
    {"{\"namespaces\":[\"a\"],\"vector\":[1,\"x\"]}", REMEM_EINVAL,
     "vector: item 1 must be a number, got a string"},
    {"{\"namespaces\":[\"a\"],\"vector\":[1e300]}", REMEM_EINVAL,
     "vector: item 0 is out of float range"},
};

static void test_refusals(void) {
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        remem_query_json *p = (remem_query_json *)&p; /* must come back NULL */
        char err[512] = "";
        int rc = parse(refused[i].json, &p, err, sizeof err);
        if (rc != refused[i].rc) fprintf(stderr, "  row %zu: %s\n", i, refused[i].json);
        CHECK_INT(rc, refused[i].rc);
        CHECK(p == NULL);
        size_t n = strlen(refused[i].msg);
        if (n > 3 && strcmp(refused[i].msg + n - 3, "...") == 0) {
            if (strncmp(err, refused[i].msg, n - 3) != 0)
                fprintf(stderr, "  row %zu: \"%s\" does not start with \"%.*s\"\n", i, err,
                        (int)(n - 3), refused[i].msg);
            CHECK(strncmp(err, refused[i].msg, n - 3) == 0);
        } else {
            CHECK_STR(err, refused[i].msg);
        }
    }
    /* a small error buffer is not overrun; a NULL one is fine */
    remem_query_json *p = NULL;
    char small[8];
    CHECK_INT(parse("{\"text\":\"x\"}", &p, small, sizeof small), REMEM_EINVAL);
    CHECK_INT(strlen(small), 7);
    CHECK_INT(parse("{\"text\":\"x\"}", &p, NULL, 0), REMEM_EINVAL);
    CHECK_INT(remem_query_parse(NULL, 0, &p, NULL, 0), REMEM_EINVAL);
    CHECK_INT(remem_query_parse("{}", 2, NULL, NULL, 0), REMEM_EINVAL);
}

/* The JSON need not be NUL-terminated: len bytes are read, no more. */
static void test_length_is_respected(void) {
    const char *json = "{\"namespaces\":[\"a\"],\"text\":\"x\"}GARBAGE";
    remem_query_json *p = NULL;
    char err[256];
    CHECK_INT(remem_query_parse(json, strlen(json) - 7, &p, err, sizeof err), REMEM_OK);
    remem_query_json_free(p);
}

/* remem_recall applies the same rules, with the same messages, to a query
 * filled in C (weights of 1e308 overflowed the score to inf before). */
static void test_recall_checks_numbers_from_c(void) {
    remem *db = NULL;
    CHECK_INT(remem_open(":memory:", NULL, &db), REMEM_OK);
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "a";
    m.text = "deploys happen on tuesdays";
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    const char *ns[] = {"a"};
    static const struct {
        int field; /* which override the row sets */
        double value;
        const char *msg;
    } rows[] = {
        {0, 1001, "k: 1001 is above the limit of 1000"},
        {0, 1e9, "k: 1000000000 is above the limit of 1000"},
        {1, 100001, "candidates: 100001 is above the limit of 100000"},
        {2, -1, "w_relevance: -1 is below the minimum of 0"},
        {2, 1e308, "w_relevance: 1e+308 is above the limit of 1000000"},
        {2, INFINITY, "w_relevance: must be a finite number"},
        {3, 5, "recency_base: 5 is above the limit of 1"},
        {3, -0.5, "recency_base: -0.5 must be above 0"},
        {4, -2, "half_life_hours: -2 must be above 0"},
        {5, -INFINITY, "min_score: must be a finite number"},
        {6, INFINITY, "min_similarity: must be a finite number"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        remem_query q;
        remem_query_init(&q);
        q.namespaces = ns;
        q.n_namespaces = 1;
        q.text = "deploys";
        switch (rows[i].field) {
        case 0: q.k = (int)rows[i].value; break;
        case 1: q.candidates = (int)rows[i].value; break;
        case 2: q.w_relevance = rows[i].value; break;
        case 3: q.recency_base = rows[i].value; break;
        case 4: q.half_life_hours = rows[i].value; break;
        case 5: q.min_score = rows[i].value; break;
        case 6: q.min_similarity = rows[i].value; break;
        }
        remem_result *r = NULL;
        CHECK_INT(remem_recall(db, &q, &r), REMEM_EINVAL);
        CHECK(r == NULL);
        CHECK_STR(remem_errmsg(db), rows[i].msg);
        remem_result_free(r);
    }
    /* the sentinels still mean "the profile's", and sane overrides pass */
    remem_query q;
    remem_query_init(&q);
    q.namespaces = ns;
    q.n_namespaces = 1;
    q.text = "deploys";
    q.k = -5;
    q.w_relevance = 1e6;
    q.recency_base = 1;
    q.min_score = -1e300;
    remem_result *r = NULL;
    CHECK_INT(remem_recall(db, &q, &r), REMEM_OK);
    CHECK(r && r->n == 1 && isfinite(r->hits[0].score));
    remem_result_free(r);
    remem_close(db);
}

static void test_recall_json(void) {
    remem *db = NULL;
    CHECK_INT(remem_open(":memory:", NULL, &db), REMEM_OK);
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "a";
    m.text = "deploys happen on tuesdays";
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    char *out = NULL;
    const char *good = "{\"namespaces\":[\"a\"],\"text\":\"deploys\",\"touch\":false}";
    CHECK_INT(remem_recall_json(db, good, strlen(good), &out), REMEM_OK);
    CHECK_HAS(out, "\"hits\":[{");
    CHECK_HAS(out, "deploys happen on tuesdays");
    remem_free(out);
    const char *bad = "{\"namespaces\":[\"a\"],\"text\":\"deploys\",\"k\":1001}";
    out = (char *)1;
    CHECK_INT(remem_recall_json(db, bad, strlen(bad), &out), REMEM_EINVAL);
    CHECK(out == NULL);
    CHECK_STR(remem_errmsg(db), "k: 1001 is above the limit of 1000");
    const char *profile = "{\"namespaces\":[\"a\"],\"text\":\"deploys\",\"profile\":\"nope\"}";
    CHECK_INT(remem_recall_json(db, profile, strlen(profile), &out), REMEM_EPROFILE);
    CHECK_HAS(remem_errmsg(db), "unknown profile \"nope\"");
    CHECK_INT(remem_recall_json(NULL, good, strlen(good), &out), REMEM_EINVAL);
    remem_close(db);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_fields_are_read);
    RUN(test_defaults_and_short_forms);
    RUN(test_refusals);
    RUN(test_length_is_respected);
    RUN(test_recall_checks_numbers_from_c);
    RUN(test_recall_json);
    return TEST_EXIT();
}
