/*
 * fuzz_ingest.c: libFuzzer target for what ingest reads from outside: the
 * model's answers to its two prompts (src/ingest/answers.c) and a
 * transcript handed to the operation (any JSON as "messages", through
 * remem_call on one in-memory store without an LLM). The contracts: the
 * extraction reader gives facts each with a text within bounds and
 * citations in range, once each, or an error; the plan reader gives
 * actions within their sets, an INVALIDATE only by an added fact, or an
 * error; an ingest either stores at most as many observations as it
 * was given messages or fails with a message and stores nothing.
 */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ingest/ingest.h"
#include "remem.h"

static remem *g_db;

static void facts(const char *text) {
    ingest_fact *f = NULL;
    size_t n = 0;
    int64_t dropped = 0;
    char err[256];
    if (ingest_read_facts(text, 7, &f, &n, &dropped, err, sizeof err) == 0) {
        assert(n <= INGEST_MAX_FACTS);
        for (size_t i = 0; i < n; i++) {
            assert(f[i].text && strlen(f[i].text) <= INGEST_FACT_MAX);
            assert(f[i].n_src >= 1);
            for (size_t k = 0; k < f[i].n_src; k++) {
                assert(f[i].src[k] < 7);
                for (size_t j = 0; j < k; j++) assert(f[i].src[j] != f[i].src[k]);
            }
        }
    } else {
        assert(err[0] && !f && !n);
    }
    ingest_facts_free(f, n);
}

static void plan(const char *text) {
    ingest_plan p;
    char err[256];
    if (ingest_read_plan(text, 5, 4, &p, err, sizeof err) == 0) {
        for (size_t i = 0; i < 4; i++) assert(p.fact[i] == INGEST_ADD || p.fact[i] == INGEST_NOOP);
        for (size_t i = 0; i < 5; i++) {
            assert(p.mem[i] == INGEST_NOOP || p.mem[i] == INGEST_UPDATE ||
                   p.mem[i] == INGEST_INVALIDATE);
            if (p.mem[i] == INGEST_UPDATE) assert(p.merged[i] && *p.merged[i]);
            if (p.mem[i] == INGEST_INVALIDATE) assert(p.by[i] < 4 && p.fact[p.by[i]] == INGEST_ADD);
        }
        ingest_plan_free(&p);
    } else {
        assert(err[0]);
    }
}

static void transcript(const char *text) {
    json_t *msgs = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!msgs) return;
    size_t given = json_is_array(msgs) ? json_array_size(msgs) : 0;
    json_t *args = json_pack("{s:s, s:o, s:s}", "ns", "fuzz", "messages", msgs, "extract", "none");
    char *a = args ? json_dumps(args, JSON_COMPACT) : NULL;
    json_decref(args);
    if (!a) return;
    remem_clear(g_db, "fuzz", NULL);
    char *out = NULL;
    int rc = remem_call(g_db, "ingest", a, strlen(a), &out);
    free(a);
    int said = remem_errmsg(g_db)[0] != '\0'; /* before stats, which resets it */
    char *st = NULL;
    json_int_t stored = 0;
    if (remem_stats(g_db, "fuzz", &st) == REMEM_OK) {
        json_t *j = json_loads(st, 0, NULL);
        stored = json_integer_value(json_object_get(j, "memories"));
        json_decref(j);
    }
    remem_free(st);
    if (rc == REMEM_OK) {
        json_t *r = json_loads(out, 0, NULL);
        assert(r && json_integer_value(json_object_get(r, "added")) == stored);
        assert((size_t)stored <= given);
        json_decref(r);
    } else {
        assert(stored == 0 && said);
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
    if (size < 1) return 0;
    char *text = malloc(size);
    if (!text) return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    switch (data[0] % 3) {
    case 0: facts(text); break;
    case 1: plan(text); break;
    default: transcript(text); break;
    }
    free(text);
    return 0;
}
