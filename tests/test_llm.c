/*
 * test_llm.c: the LLM client (src/llm/). First the answer parsers over a
 * table of answers written the way real models write them (bare numbers,
 * JSON, JSON in prose or ``` fences, numbers as strings, "7/10") and the
 * malformed ones that must be errors naming the cause; then the envelope
 * parser (usage as numbers or strings, error bodies, truncation); then the
 * client against the LLM stand-in (tests/support/llm_standin.py, started
 * on a free loopback port): the request it sends (model, messages,
 * response_format, bearer key), usage counted, a 500 then success, a slow
 * answer timing out, a truncated answer, garbage, and a refused
 * connection. The live part is skipped when python3 is missing.
 */
#include "test.h"

#include <time.h>
#include <unistd.h>

#include "llm/llm.h"
#include "remem.h"
#include "support/llm_standin.h"

/* ---- the parsers ---- */

typedef struct number_case {
    const char *answer;
    double want; /* NAN: must fail */
    const char *err_has;
} number_case;

static void test_answer_number_table(void) {
    static const number_case cases[] = {
        {"7", 7, NULL},
        {"  8\n", 8, NULL},
        {"{\"rating\": 7, \"explanation\": \"a break-up is poignant\"}", 7, NULL},
        {"{\"explanation\": \"mundane\",\"rating\": 1 }", 1, NULL},
        {"{\"rating\": \"6\"}", 6, NULL},
        {"{\"Rating\": \"9/10\", \"explanation\": \"life event\"}", 9, NULL},
        {"Sure! Here is the rating:\n```json\n{\"explanation\": \"It is a move.\", \"rating\": "
         "4}\n```",
         4, NULL},
        {"```\n{\"rating\":3}\n```", 3, NULL},
        {"I would rate this memory 7/10 because it matters.", 7, NULL},
        {"Rating: 8", 8, NULL},
        {"rating:<8> explanation: graduation", 8, NULL},
        {"On a scale of 1 to 10, I'd give it a 6 out of 10.", 6, NULL},
        {"Poignancy: 4 out of 5", 8, NULL},
        {"{\"score\": 2.5}", 2.5, NULL},
        {"\"5\"", 5, NULL},
        {"[{\"rating\": 3}]", 3, NULL},
        {"As gpt-4o, rating 5.", 5, NULL},
        {"{\"rating\": 11}", NAN, "outside 1-10"},
        {"0", NAN, "outside"},
        {"", NAN, "no number"},
        {"I cannot rate that.", NAN, "no number"},
        {"Between 3 and 8, hard to say.", NAN, "several numbers"},
        {"{\"rating\": null, \"explanation\": \"n/a\"}", NAN, "no number"},
        {"{\"rating\": \"high\"}", NAN, "no number"},
        {"nan", NAN, "no number"},
        {"1e400", NAN, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char err[256] = "";
        double v = -1;
        int rc = llm_answer_number(cases[i].answer, 1, 10, &v, err, sizeof err);
        if (isnan(cases[i].want)) {
            if (rc == 0) fprintf(stderr, "  case %zu (%s): took %g\n", i, cases[i].answer, v);
            CHECK_INT(rc, REMEM_ELLM);
            CHECK(err[0] != '\0');
            if (cases[i].err_has && !strstr(err, cases[i].err_has))
                fprintf(stderr, "  case %zu: message \"%s\" lacks \"%s\"\n", i, err,
                        cases[i].err_has);
            CHECK(!cases[i].err_has || strstr(err, cases[i].err_has));
        } else {
            if (rc) fprintf(stderr, "  case %zu (%s): %s\n", i, cases[i].answer, err);
            CHECK_INT(rc, 0);
            CHECK_NEAR(v, cases[i].want, 1e-9);
        }
    }
}

static void test_answer_json(void) {
    char err[256];
    static const char *good[] = {
        "{\"items\": [{\"i\": 1, \"action\": \"UPDATE\"}]}",
        "Here you go:\n```json\n{\"items\": [{\"i\": 1, \"action\": \"UPDATE\"}]}\n```\nDone.",
        "The answer is {\"items\": [{\"i\": 1, \"action\": \"UPDATE\", \"text\": \"a } brace\"}]} "
        "as asked.",
        "{broken {\"items\": [{\"i\": 1, \"action\": \"UPDATE\"}]}",
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        json_t *j = llm_answer_json(good[i], err, sizeof err);
        CHECK(j != NULL);
        json_t *it = json_array_get(json_object_get(j, "items"), 0);
        CHECK_STR(json_string_value(json_object_get(it, "action")), "UPDATE");
        json_decref(j);
    }
    static const char *bad[] = {"", "no json here", "{\"items\": [1, 2", "42", "\"text\""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        CHECK(llm_answer_json(bad[i], err, sizeof err) == NULL);
        CHECK(strstr(err, "holds no JSON object") != NULL);
    }
    static const char *const keys[] = {"explanation", "reason", NULL};
    char *s = llm_answer_string("```json\n{\"rating\": 7, \"reason\": \"a move\"}\n```", keys);
    CHECK_STR(s, "a move");
    free(s);
    CHECK(llm_answer_string("7", keys) == NULL);
}

static void test_parse_completion(void) {
    char *c = NULL, err[256] = "";
    llm_usage u = {0};
    const char ok[] = "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"7\"}}],"
                      "\"usage\":{\"prompt_tokens\":\"12\",\"completion_tokens\":3}}";
    CHECK_INT(llm_parse_completion(ok, sizeof ok - 1, &c, &u, err, sizeof err), 0);
    CHECK_STR(c, "7");
    CHECK_INT(u.calls, 1);
    CHECK_INT(u.prompt_tokens, 12);
    CHECK_INT(u.completion_tokens, 3);
    free(c);
    struct {
        const char *body, *err_has;
    } bad[] = {
        {"{\"choices\":[{\"message\":{\"content\":\"7\"", "not JSON (truncated?)"},
        {"<html>502 Bad Gateway</html>", "not JSON"},
        {"[1,2]", "not a chat completion"},
        {"{\"error\":{\"message\":\"model not found\"}}", "model not found"},
        {"{\"choices\":[]}", "no \"choices\""},
        {"{\"choices\":[{\"message\":{\"content\":null}}]}", "it is null"},
        {"{\"choices\":[{\"text\":\"7\"}]}", "no choices[0].message.content"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        c = NULL;
        err[0] = '\0';
        CHECK_INT(llm_parse_completion(bad[i].body, strlen(bad[i].body), &c, &u, err, sizeof err),
                  REMEM_ELLM);
        CHECK(c == NULL);
        if (!strstr(err, bad[i].err_has)) fprintf(stderr, "  bad %zu: %s\n", i, err);
        CHECK(strstr(err, bad[i].err_has) != NULL);
    }
    CHECK_INT(u.calls, 1); /* failures count nothing */
}

static void test_open_checks(void) {
    llm *l = NULL;
    char err[256] = "";
    llm_config c = {.url = NULL};
    CHECK_INT(llm_open(&c, &l, err, sizeof err), REMEM_EINVAL);
    CHECK(strstr(err, "REMEM_LLM_URL") != NULL);
    c.url = "ftp://x";
    CHECK_INT(llm_open(&c, &l, err, sizeof err), REMEM_EINVAL);
    CHECK(strstr(err, "http://") != NULL);
    c.url = "http://127.0.0.1:1/v1/";
    CHECK_INT(llm_open(&c, &l, err, sizeof err), 0);
    CHECK_STR(llm_url(l), "http://127.0.0.1:1/v1");
    CHECK_STR(llm_model(l), "default");
    llm_close(l);
}

/* ---- the client against the stand-in ---- */

/* The last request the stand-in received (new reference). */
static json_t *last_request(llm_standin *s) {
    json_t *all = llm_standin_requests(s);
    json_t *r = json_incref(json_array_get(all, json_array_size(all) - 1));
    json_decref(all);
    return r;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void test_client_live(void) {
    llm_standin s;
    if (llm_standin_start(&s, NULL)) {
        SKIP("python3 or the stand-in is not available");
        return;
    }
    llm_standin_rules(
        &s,
        "[{\"match\": \"poignancy\", \"reply\": \"```json\\n{\\\"rating\\\": \\\"7\\\"}\\n```\","
        " \"usage\": {\"prompt_tokens\": 40, \"completion_tokens\": 6}},"
        " {\"match\": \"boom\", \"status\": 500, \"reply\": \"overloaded\", \"times\": 1},"
        " {\"match\": \"always500\", \"status\": 500, \"reply\": \"model overloaded\"},"
        " {\"match\": \"slow\", \"delay_ms\": 1500, \"reply\": \"late\"},"
        " {\"match\": \"cut\", \"truncate\": true, \"reply\": \"{\\\"rating\\\": 3}\"},"
        " {\"match\": \"garbage\", \"raw\": \"<html>hello</html>\"}]");
    llm *l = NULL;
    char err[512] = "", *a = NULL;
    llm_config c = {.url = s.url,
                    .model = "tiny",
                    .api_key = "k123",
                    .timeout_ms = 800,
                    .retries = 1,
                    .backoff_ms = 10};
    CHECK_INT(llm_open(&c, &l, err, sizeof err), 0);
    llm_usage u = {0};

    CHECK_INT(llm_chat(l, "be brief", "rate the poignancy", 1, &a, &u, err, sizeof err), 0);
    double v = 0;
    CHECK_INT(llm_answer_number(a, 1, 10, &v, err, sizeof err), 0);
    CHECK_NEAR(v, 7, 0);
    CHECK_INT(u.calls, 1);
    CHECK_INT(u.prompt_tokens, 40);
    CHECK_INT(u.completion_tokens, 6);
    free(a);
    json_t *rq = last_request(&s);
    json_t *body = json_object_get(rq, "body");
    CHECK_STR(json_string_value(json_object_get(rq, "path")), "/v1/chat/completions");
    CHECK_STR(json_string_value(json_object_get(rq, "authorization")), "Bearer k123");
    CHECK_STR(json_string_value(json_object_get(body, "model")), "tiny");
    CHECK_STR(json_string_value(json_object_get(json_object_get(body, "response_format"), "type")),
              "json_object");
    json_t *msgs = json_object_get(body, "messages");
    CHECK_INT(json_array_size(msgs), 2);
    CHECK_STR(json_string_value(json_object_get(json_array_get(msgs, 0), "role")), "system");
    CHECK_STR(json_string_value(json_object_get(json_array_get(msgs, 1), "content")),
              "rate the poignancy");
    json_decref(rq);

    /* without json_mode: no response_format; computed usage */
    CHECK_INT(llm_chat(l, NULL, "hello there", 0, &a, &u, err, sizeof err), 0);
    free(a);
    rq = last_request(&s);
    CHECK(json_object_get(json_object_get(rq, "body"), "response_format") == NULL);
    CHECK_INT(json_array_size(json_object_get(json_object_get(rq, "body"), "messages")), 1);
    json_decref(rq);
    CHECK_INT(u.calls, 2);
    CHECK_INT(u.prompt_tokens, 42);

    /* one 500, then the retry answers */
    CHECK_INT(llm_chat(l, NULL, "boom", 0, &a, &u, err, sizeof err), 0);
    free(a);
    a = NULL;
    /* always 500: fails naming the status and the server's message */
    CHECK_INT(llm_chat(l, NULL, "always500", 0, &a, &u, err, sizeof err), REMEM_ELLM);
    CHECK(a == NULL);
    CHECK(strstr(err, "500") != NULL);
    CHECK(strstr(err, "model overloaded") != NULL);
    /* slow: a timeout, named */
    double t0 = now_s();
    CHECK_INT(llm_chat(l, NULL, "slow", 0, &a, &u, err, sizeof err), REMEM_ELLM);
    CHECK(strstr(err, "timed out") != NULL);
    CHECK(now_s() - t0 < 5);
    /* truncated and garbage: not a chat completion */
    CHECK_INT(llm_chat(l, NULL, "cut", 0, &a, &u, err, sizeof err), REMEM_ELLM);
    CHECK(strstr(err, "truncated") != NULL);
    CHECK_INT(llm_chat(l, NULL, "garbage", 0, &a, &u, err, sizeof err), REMEM_ELLM);
    CHECK(strstr(err, "not JSON") != NULL);
    CHECK_INT(u.calls, 3); /* failures count no call */
    llm_close(l);
    llm_standin_stop(&s);

    /* down: connection refused, named */
    c.url = s.url; /* the port is free again */
    CHECK_INT(llm_open(&c, &l, err, sizeof err), 0);
    CHECK_INT(llm_chat(l, NULL, "anyone?", 0, &a, &u, err, sizeof err), REMEM_ELLM);
    CHECK(strstr(err, "llm: POST") != NULL);
    CHECK(strstr(err, "refused") != NULL || strstr(err, "connect") != NULL);
    llm_close(l);
}

/* Credentials in the base URL (userinfo, a query-string token) are used
 * but never shown: not by llm_url, a failure's message, config.show or the
 * usage counts; and a base with a query keeps it after the endpoint's
 * path (".../v1/chat/completions?token=..."). */
static void test_url_credentials(void) {
    llm_standin s;
    if (llm_standin_start(&s, NULL)) {
        SKIP("python3 or the stand-in is not available");
        return;
    }
    llm_standin_rules(&s, "[{\"match\": \"always500\", \"status\": 500, \"reply\": \"no\"},"
                          " {\"match\": \"\", \"reply\": \"fine\"}]");
    char url[512];
    snprintf(url, sizeof url, "http://bob:hunter2@%s?token=abc123", s.url + strlen("http://"));
    llm *l = NULL;
    char err[512] = "", *a = NULL;
    llm_config c = {.url = url, .model = "tiny", .retries = 0, .backoff_ms = 10};
    CHECK_INT(llm_open(&c, &l, err, sizeof err), 0);
    CHECK(!strstr(llm_url(l), "hunter2") && !strstr(llm_url(l), "abc123"));
    llm_usage u = {0};
    CHECK_INT(llm_chat(l, NULL, "hello", 0, &a, &u, err, sizeof err), 0);
    free(a);
    a = NULL;
    json_t *rq = last_request(&s);
    CHECK_STR(json_string_value(json_object_get(rq, "path")), "/v1/chat/completions?token=abc123");
    json_decref(rq);
    CHECK_INT(llm_chat(l, NULL, "always500", 0, &a, &u, err, sizeof err), REMEM_ELLM);
    CHECK(strstr(err, "500") != NULL);
    CHECK(!strstr(err, "hunter2") && !strstr(err, "abc123"));
    llm_close(l);

    remem_options o;
    remem_options_init(&o);
    o.llm_url = url;
    o.embedder = "hash";
    remem *db = NULL;
    setenv("REMEM_LLM_URL", url, 1); /* what config.show reports */
    CHECK_INT(remem_open(":memory:", &o, &db), REMEM_OK);
    char *out = NULL;
    const char *args = "{\"ns\":\"a\"}";
    CHECK_INT(remem_call(db, "config.show", args, strlen(args), &out), REMEM_OK);
    CHECK(out && strstr(out, "127.0.0.1") && !strstr(out, "hunter2") && !strstr(out, "abc123"));
    remem_free(out);
    out = NULL;
    CHECK_INT(remem_llm_usage(db, &out), REMEM_OK);
    CHECK(out && !strstr(out, "hunter2") && !strstr(out, "abc123"));
    remem_free(out);
    out = NULL;
    args = "{\"ns\":\"a\",\"text\":\"always500\"}";
    CHECK(remem_call(db, "rate", args, strlen(args), &out) != REMEM_OK);
    CHECK(!strstr(remem_errmsg(db), "hunter2") && !strstr(remem_errmsg(db), "abc123"));
    remem_close(db);
    unsetenv("REMEM_LLM_URL");
    llm_standin_stop(&s);
}

int main(int argc, char **argv) {
    test__only = argc > 1 ? argv[1] : NULL;
    RUN(test_answer_number_table);
    RUN(test_answer_json);
    RUN(test_parse_completion);
    RUN(test_open_checks);
    RUN(test_client_live);
    RUN(test_url_credentials);
    return TEST_EXIT();
}
