/*
 * test_explain.c: the operations the inspector (docs/inspector.md) reads
 * that no other operation answered before it. recall.explain: in every
 * built-in profile (weights, min-max normalisation, a kind boost, the
 * temporal context term, thresholds) each hit's parts sum to its score,
 * the hits are recall's own, the near misses are the best candidates left
 * out with the reason, and it touches nothing. memory.links: a memory's
 * links both ways. prune.reports: a namespace's last PruneReports.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remem.h"
#include "test.h"
#include "support/op_call.h"

static const char *const PARTS[] = {"relevance", "lexical", "recency", "importance", "context"};

/* A store with kitchen memories, feedback (the episodes profile's boosted
 * kind), and memories written side by side (the context term). */
static remem *filled(void) {
    remem *db = NULL;
    CHECK_INT(remem_open(":memory:", NULL, &db), REMEM_OK);
    char args[320];
    for (int i = 0; i < 30; i++) {
        snprintf(args, sizeof args,
                 "{\"ns\":\"a\",\"id\":\"m%02d\",\"text\":\"note %d: the kettle %s\",\"kind\":\"%s\","
                 "\"importance\":%.2f,\"created_at\":%d,\"metadata\":{\"reward\":0.5}}",
                 i, i, i % 3 ? "is in the kitchen" : "was moved to the shed",
                 i % 5 ? "observation" : "feedback", (i % 7) / 7.0, 1000000 + 3600000 * i);
        json_decref(call_ok(db, "memory.add", args));
    }
    return db;
}

/* Each hit's parts add up to its score. Returns how many hits it saw. */
static size_t check_parts(json_t *hits) {
    size_t i;
    json_t *h;
    json_array_foreach(hits, i, h) {
        json_t *parts = json_object_get(h, "parts");
        CHECK(json_is_object(parts));
        double sum = 0;
        for (size_t j = 0; j < 5; j++) {
            json_t *v = json_object_get(parts, PARTS[j]);
            CHECK(json_is_number(v));
            CHECK(json_number_value(v) >= 0);
            sum += json_number_value(v);
        }
        CHECK_NEAR(sum, json_number_value(json_object_get(h, "score")), 1e-5);
    }
    return json_array_size(hits);
}

static void test_parts_sum_to_score(void) {
    remem *db = filled();
    const char *profiles[] = {"default", "stream", "metaverse", "generative-agents", "replay",
                              "episodes"};
    char args[256];
    for (size_t p = 0; p < sizeof profiles / sizeof profiles[0]; p++) {
        snprintf(args, sizeof args,
                 "{\"ns\":\"a\",\"query\":\"where is the kettle\",\"profile\":\"%s\",\"k\":4,"
                 "\"near\":6,\"w_context\":0.2,\"filter\":{}}",
                 profiles[p]);
        json_t *r = call_ok(db, "recall.explain", args);
        size_t n = check_parts(json_object_get(r, "hits"));
        size_t m = check_parts(json_object_get(r, "near_misses"));
        /* some profiles' thresholds (min_similarity 0.7, min_score 0.35)
         * leave the hash embedder's hits among the near misses */
        CHECK(n + m > 0 && n <= 4 && m <= 6);
        const char *formula = json_string_value(json_object_get(r, "formula"));
        CHECK(formula && strstr(formula, "score = ") && strstr(formula, "*relevance"));
        CHECK_STR(json_string_value(json_object_get(json_object_get(r, "settings"), "name")),
                  profiles[p]);
        /* The near misses rank below the last hit, unless a threshold cut them. */
        json_t *last = n ? json_array_get(json_object_get(r, "hits"), n - 1) : NULL, *miss;
        size_t i;
        json_array_foreach(json_object_get(r, "near_misses"), i, miss) {
            const char *why = json_string_value(json_object_get(miss, "missed"));
            CHECK(why != NULL);
            if (why && !strcmp(why, "rank") && last)
                CHECK(json_number_value(json_object_get(miss, "score")) <=
                      json_number_value(json_object_get(last, "score")) + 1e-9);
        }
        json_decref(r);
    }
    remem_close(db);
}

/* The hits are recall's, in its order and with its scores. */
static void test_same_as_recall(void) {
    remem *db = filled();
    const char *q = "{\"ns\":\"a\",\"query\":\"kettle kitchen\",\"k\":5,\"touch\":false}";
    json_t *r = call_ok(db, "recall", q), *e = call_ok(db, "recall.explain", q);
    json_t *rh = json_object_get(r, "hits"), *eh = json_object_get(e, "hits");
    CHECK_INT((int)json_array_size(eh), (int)json_array_size(rh));
    for (size_t i = 0; i < json_array_size(rh); i++) {
        CHECK_STR(json_string_value(json_object_get(json_array_get(eh, i), "id")),
                  json_string_value(json_object_get(json_array_get(rh, i), "id")));
        CHECK_NEAR(json_number_value(json_object_get(json_array_get(eh, i), "score")),
                   json_number_value(json_object_get(json_array_get(rh, i), "score")), 1e-9);
    }
    CHECK_INT((int)json_integer_value(json_object_get(e, "candidates")),
              (int)json_integer_value(json_object_get(r, "candidates")));
    json_decref(r);
    json_decref(e);
    remem_close(db);
}

/* A min_score cut shows as the reason; explain touches nothing; bad near. */
static void test_thresholds_and_touch(void) {
    remem *db = filled();
    json_t *e = call_ok(db, "recall.explain",
                        "{\"ns\":\"a\",\"query\":\"kettle shed\",\"k\":2,\"near\":20,"
                        "\"min_score\":0.6}");
    size_t i;
    json_t *m;
    int cut = 0;
    json_array_foreach(json_object_get(e, "near_misses"), i, m) {
        if (!strcmp(json_string_value(json_object_get(m, "missed")), "min_score")) {
            cut++;
            CHECK(json_number_value(json_object_get(m, "score")) < 0.6);
        }
    }
    CHECK(cut > 0);
    json_decref(e);
    json_t *g = call_ok(db, "memory.get", "{\"ns\":\"a\",\"id\":\"m01\"}");
    CHECK_INT((int)json_integer_value(json_object_get(json_object_get(g, "memory"), "access_count")),
              0);
    json_decref(g);
    int rc = 0;
    json_decref(call(db, "recall.explain", "{\"ns\":\"a\",\"query\":\"x\",\"near\":500}", &rc));
    CHECK_INT(rc, REMEM_EINVAL);
    CHECK(strstr(remem_errmsg(db), "near") != NULL);
    remem_close(db);
}

static void test_links_both_ways(void) {
    remem *db = filled();
    json_decref(call_ok(db, "memory.add",
                        "{\"ns\":\"a\",\"id\":\"r1\",\"kind\":\"reflection\",\"text\":\"the kettle "
                        "moves\",\"links\":[\"m00\",\"m03\",\"gone\"]}"));
    json_decref(call_ok(db, "memory.add",
                        "{\"ns\":\"a\",\"id\":\"s1\",\"kind\":\"summary\",\"text\":\"all about "
                        "kettles\",\"links\":[\"r1\",\"m03\"]}"));
    json_t *r = call_ok(db, "memory.links", "{\"ns\":\"a\",\"id\":\"r1\"}");
    json_t *to = json_object_get(r, "links_to"), *from = json_object_get(r, "linked_from");
    CHECK_INT((int)json_array_size(to), 3);
    CHECK_STR(json_string_value(json_object_get(json_array_get(to, 0), "id")), "m00");
    CHECK_STR(json_string_value(json_object_get(json_array_get(to, 0), "kind")), "feedback");
    CHECK(json_is_true(json_object_get(json_array_get(to, 2), "missing")));
    CHECK_INT((int)json_array_size(from), 1);
    CHECK_STR(json_string_value(json_object_get(json_array_get(from, 0), "id")), "s1");
    json_decref(r);
    r = call_ok(db, "memory.links", "{\"ns\":\"a\",\"id\":\"m03\"}");
    CHECK_INT((int)json_array_size(json_object_get(r, "links_to")), 0);
    CHECK_INT((int)json_array_size(json_object_get(r, "linked_from")), 2);
    json_decref(r);
    int rc = 0;
    json_decref(call(db, "memory.links", "{\"ns\":\"a\",\"id\":\"nope\"}", &rc));
    CHECK_INT(rc, REMEM_ENOTFOUND);
    remem_close(db);
}

/* prune.reports: the namespace's reports, newest first, without id lists. */
static void test_prune_reports(void) {
    char dir[] = "/tmp/remem-explain-XXXXXX", path[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/s.db", dir);
    remem *db = NULL;
    CHECK_INT(remem_open(path, NULL, &db), REMEM_OK);
    json_t *r = call_ok(db, "prune.reports", "{\"ns\":\"a\"}");
    CHECK_INT((int)json_array_size(json_object_get(r, "reports")), 0); /* no folder yet */
    json_decref(r);
    json_decref(call_ok(db, "memory.add", "{\"ns\":\"a\",\"text\":\"one\"}"));
    json_decref(call_ok(db, "memory.add", "{\"ns\":\"b\",\"text\":\"two\"}"));
    for (int i = 0; i < 3; i++) json_decref(call_ok(db, "prune", "{\"ns\":\"a\"}"));
    json_decref(call_ok(db, "prune", "{\"ns\":\"b\"}"));
    r = call_ok(db, "prune.reports", "{\"ns\":\"a\",\"limit\":2}");
    json_t *list = json_object_get(r, "reports");
    CHECK_INT((int)json_array_size(list), 2);
    const char *t0 = json_string_value(json_object_get(json_array_get(list, 0), "timestamp"));
    const char *t1 = json_string_value(json_object_get(json_array_get(list, 1), "timestamp"));
    CHECK(t0 && t1 && strcmp(t0, t1) >= 0);
    CHECK_STR(json_string_value(json_object_get(json_array_get(list, 0), "ns")), "a");
    CHECK(json_object_get(json_array_get(list, 0), "episodesRemoved") == NULL);
    CHECK(json_is_integer(json_object_get(json_array_get(list, 0), "removedCount")));
    json_decref(r);
    r = call_ok(db, "prune.reports", "{\"ns\":\"b\"}");
    CHECK_INT((int)json_array_size(json_object_get(r, "reports")), 1);
    json_decref(r);
    remem_close(db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_INT(system(cmd), 0);
}

/* memory.list answers the same pages whether the namespace's cache is
 * loaded (then it reads the rows from it) or not (a store scan): archived,
 * invalidated, bookkeeping kinds, filters, cursors, and writes made after
 * the cache was loaded. */
static void test_list_from_cache(void) {
    remem *db = filled();
    json_decref(call_ok(db, "memory.forget", "{\"ns\":\"a\",\"id\":\"m02\"}"));
    json_decref(call_ok(db, "memory.invalidate", "{\"ns\":\"a\",\"id\":\"m03\"}"));
    json_decref(call_ok(db, "memory.add", "{\"ns\":\"a\",\"text\":\"a hint\",\"kind\":\"hint_log\"}"));
    static const char *const lists[] = {
        "{\"ns\":\"a\",\"limit\":7,\"desc\":true}",
        "{\"ns\":\"a\",\"limit\":100,\"tiers\":[\"archived\",\"short\"],\"include_invalid\":true}",
        "{\"ns\":\"a\",\"limit\":5,\"order\":\"importance\",\"filter\":{\"kind\":\"feedback\"}}",
        "{\"ns\":\"a\",\"limit\":100,\"filter\":{\"kind\":\"hint_log\"}}",
        "{\"ns\":\"a\",\"limit\":3,\"kinds\":[\"observation\"],\"cursor\":\"cd\"}"};
    char *before[5];
    for (int pass = 0; pass < 2; pass++) {
        if (pass) { /* load the cache, then write behind it */
            json_decref(call_ok(db, "recall", "{\"ns\":\"a\",\"query\":\"kettle\",\"touch\":false}"));
            json_decref(call_ok(db, "memory.add", "{\"ns\":\"a\",\"id\":\"late\",\"text\":\"late\"}"));
            json_decref(call_ok(db, "memory.forget", "{\"ns\":\"a\",\"id\":\"late\",\"purge\":true}"));
        }
        for (int i = 0; i < 5; i++) {
            int rc = 0;
            json_t *r = call(db, "memory.list", lists[i], &rc);
            char *t = r ? json_dumps(r, JSON_SORT_KEYS) : strdup(remem_errmsg(db));
            json_decref(r);
            if (!pass) {
                before[i] = t;
                continue;
            }
            CHECK_STR(t, before[i]);
            free(t);
            free(before[i]);
        }
    }
    remem_close(db);
}

/* stats of a namespace answer the same whether its cache is loaded (then
 * counted from it) or not (the store's aggregates). */
static void test_stats_from_cache(void) {
    remem *db = filled();
    json_decref(call_ok(db, "memory.forget", "{\"ns\":\"a\",\"id\":\"m02\"}"));
    json_decref(call_ok(db, "memory.invalidate", "{\"ns\":\"a\",\"id\":\"m03\"}"));
    json_decref(call_ok(db, "memory.add", "{\"ns\":\"a\",\"text\":\"a hint\",\"kind\":\"hint_log\"}"));
    json_decref(call_ok(db, "memory.add", "{\"ns\":\"a\",\"text\":\"gone soon\",\"expires_at\":5}"));
    json_decref(call_ok(db, "memory.add", "{\"ns\":\"a\",\"text\":\"note 1: the kettle is in the kitchen\"}"));
    json_t *before = call_ok(db, "stats", "{\"ns\":\"a\"}");
    json_decref(call_ok(db, "recall", "{\"ns\":\"a\",\"query\":\"kettle\",\"touch\":false}"));
    json_t *after = call_ok(db, "stats", "{\"ns\":\"a\"}");
    CHECK(json_object_get(after, "cache") != NULL); /* loaded now */
    json_object_del(after, "cache");
    char *a = json_dumps(before, JSON_SORT_KEYS), *b = json_dumps(after, JSON_SORT_KEYS);
    CHECK_STR(b, a);
    CHECK_INT((int)json_integer_value(json_object_get(after, "expired")), 1);
    CHECK_INT((int)json_integer_value(json_object_get(after, "duplicates_folded")), 1);
    free(a);
    free(b);
    json_decref(before);
    json_decref(after);
    remem_close(db);
}

int main(int argc, char **argv) {
    if (argc > 1) test__only = argv[1];
    RUN(test_parts_sum_to_score);
    RUN(test_same_as_recall);
    RUN(test_thresholds_and_touch);
    RUN(test_links_both_ways);
    RUN(test_prune_reports);
    RUN(test_list_from_cache);
    RUN(test_stats_from_cache);
    return TEST_EXIT();
}
