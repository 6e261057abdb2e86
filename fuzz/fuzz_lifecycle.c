/*
 * fuzz_lifecycle.c: libFuzzer target for what the lifecycle reads from
 * outside: the model's answers to its prompts (src/lifecycle/answers.c:
 * reflection's questions and insights, a plan, a summary) and a
 * personality file given to static.load (any JSON, through remem_call on
 * one in-memory store). The contracts: a reader either gives a value or
 * an error message; an insight's citations are in range, each once; a
 * static.load either succeeds with as many static memories as it says or
 * fails with a message and changes nothing.
 */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lifecycle/answers.h"
#include "remem.h"

static remem *g_db;

static int64_t static_count(void) {
    char *s = NULL;
    if (remem_stats(g_db, "fuzz", &s)) return -1;
    json_t *j = json_loads(s, 0, NULL);
    remem_free(s);
    json_t *v = json_object_get(json_object_get(j, "by_tier"), "static");
    int64_t n = json_is_integer(v) ? json_integer_value(v) : 0;
    json_decref(j);
    return n;
}

static void personality(const char *text) {
    json_t *file = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!file) return;
    json_t *args = json_pack("{s:s, s:O}", "ns", "fuzz", "file", file);
    json_decref(file);
    char *a = args ? json_dumps(args, JSON_COMPACT) : NULL;
    json_decref(args);
    if (!a) return;
    int64_t before = static_count();
    char *out = NULL;
    int rc = remem_call(g_db, "static.load", a, strlen(a), &out);
    free(a);
    if (rc == REMEM_OK) {
        json_t *r = json_loads(out, 0, NULL);
        assert(r && json_integer_value(json_object_get(r, "memories")) == static_count());
        json_decref(r);
    } else {
        assert(!out && remem_errmsg(g_db)[0] && static_count() == before);
    }
    remem_free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!g_db) {
        remem_options o;
        remem_options_init(&o);
        o.embedder = "hash";
        if (remem_open(":memory:", &o, &g_db)) abort();
    }
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char err[512];

    err[0] = '\0';
    json_t *q = answer_questions(text, 3, err, sizeof err);
    assert(q ? json_array_size(q) >= 1 && json_array_size(q) <= 3 : err[0] != '\0');
    json_decref(q);

    answer_insight *ins = NULL;
    size_t n = 0;
    int64_t ignored = 0;
    err[0] = '\0';
    if (answer_insights(text, 4, 5, &ins, &n, &ignored, err, sizeof err) == 0) {
        assert(n <= 5 && ignored >= 0);
        for (size_t i = 0; i < n; i++) {
            assert(ins[i].text && ins[i].text[0] && ins[i].n_cites >= 1 && ins[i].n_cites <= 4);
            for (size_t c = 0; c < ins[i].n_cites; c++) {
                assert(ins[i].cites[c] < 4);
                for (size_t d = 0; d < c; d++) assert(ins[i].cites[c] != ins[i].cites[d]);
            }
        }
    } else {
        assert(err[0] && !ins && n == 0);
    }
    answer_insights_free(ins, n);

    err[0] = '\0';
    char *p = answer_plan("a goal", text, err, sizeof err);
    assert(p ? strncmp(p, "Plan for: a goal\n", 17) == 0 : err[0] != '\0');
    free(p);
    err[0] = '\0';
    char *s = answer_summary(text, err, sizeof err);
    assert(s ? s[0] != '\0' : err[0] != '\0');
    free(s);

    personality(text);
    free(text);
    return 0;
}
