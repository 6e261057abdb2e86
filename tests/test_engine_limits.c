/*
 * test_engine_limits.c: what the library refuses or bounds at its public
 * boundary, each the fix of a defect a hostile or careless client found
 * (issue 8), through include/remem.h alone:
 *   - the work one recall causes: a query text above REMEM_QUERY_TEXT_MAX
 *     is refused at once, and of a text's words the first 64 distinct
 *     ones, each counted at most 4 times, reach the lexical lane;
 *   - (more below, one section per defect).
 * Every refusal must change nothing: the tests compare the store's export
 * before and after.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "remem.h"
#include "test.h"

/* A fixed "now": 2023-11-14T22:13:20Z. */
#define T0   1700000000000LL
#define HOUR 3600000LL

static remem *open_memory(void) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    int rc = remem_open(":memory:", &o, &db);
    if (rc) {
        fprintf(stderr, "  cannot open: %s\n", remem_errmsg(db));
        remem_close(db);
        return NULL;
    }
    return db;
}

static int add(remem *db, const char *ns, const char *id, const char *text) {
    remem_memory m;
    remem_memory_init(&m);
    m.ns = ns;
    m.id = id;
    m.text = text;
    m.created_at = T0 - HOUR;
    return remem_add(db, &m, NULL, 0, NULL);
}

static double seconds_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* A text of `bytes` bytes: word repeated, space-separated. */
static char *repeated(const char *word, size_t bytes) {
    char *t = malloc(bytes + 1);
    size_t wl = strlen(word), i = 0;
    while (i < bytes) {
        for (size_t j = 0; j < wl && i < bytes; j++) t[i++] = word[j];
        if (i < bytes) t[i++] = ' ';
    }
    t[bytes] = '\0';
    return t;
}

static int recall(remem *db, const char *ns, const char *text, remem_result **r) {
    remem_query q;
    remem_query_init(&q);
    const char *nss[] = {ns};
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.text = text;
    q.now = T0;
    q.no_touch = 1;
    return remem_recall(db, &q, r);
}

/* The hit of id in r, or NULL. */
static const remem_hit *hit_of(const remem_result *r, const char *id) {
    for (size_t i = 0; r && i < r->n; i++)
        if (strcmp(r->hits[i].mem.id, id) == 0) return &r->hits[i];
    return NULL;
}

/* ---- the work one query causes (issue 8, item 2) ---- */

static remem *garden_store(void) {
    remem *db = open_memory();
    if (!db) return NULL;
    const char *texts[] = {
        "the garden needs watering every morning",
        "tomatoes grow in the garden",
        "a zebra crossed the road",
        "the quarterly report is due on friday",
        "garden party on saturday with the family",
        "the report mentions the garden budget",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        char id[8];
        snprintf(id, sizeof id, "m%zu", i);
        CHECK_INT(add(db, "g", id, texts[i]), REMEM_OK);
    }
    return db;
}

/* 200 KB of one repeated word took the old lexical lane about 5 s (its
 * work grew faster than the text); now the text is refused at once, with
 * a message that says why. */
static void test_long_query_refused_fast(void) {
    remem *db = garden_store();
    if (!db) return;
    char *text = repeated("garden", 200000);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    remem_result *r = NULL;
    int rc = recall(db, "g", text, &r);
    double took = seconds_since(&t0);
    CHECK_INT(rc, REMEM_EINVAL);
    CHECK(r == NULL);
    CHECK_HAS(remem_errmsg(db), "query text is 200000 bytes; the limit is 32768");
    CHECK(took < 0.2);
    remem_result_free(r);
    free(text);
    remem_close(db);
}

/* A text at the limit is answered, in milliseconds, whatever it repeats:
 * a word repeated 4,700 times reaches the lexical lane 4 times. */
static void test_query_at_limit_answered_fast(void) {
    remem *db = garden_store();
    if (!db) return;
    char *text = repeated("garden", REMEM_QUERY_TEXT_MAX);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    remem_result *r = NULL;
    int rc = recall(db, "g", text, &r);
    double took = seconds_since(&t0);
    CHECK_INT(rc, REMEM_OK);
    CHECK(r && r->n > 0);
    /* The same lexical score as the word asked four times. */
    remem_result *four = NULL;
    CHECK_INT(recall(db, "g", "garden garden garden garden", &four), REMEM_OK);
    const remem_hit *a = hit_of(r, "m1"), *b = hit_of(four, "m1");
    CHECK(a && b);
    if (a && b) CHECK_NEAR(a->bm25, b->bm25, 1e-9);
    CHECK(took < 0.1);
    remem_result_free(r);
    remem_result_free(four);
    /* One byte more is refused. */
    text = realloc(text, REMEM_QUERY_TEXT_MAX + 2);
    strcpy(text + REMEM_QUERY_TEXT_MAX, "x");
    CHECK_INT(recall(db, "g", text, &r), REMEM_EINVAL);
    CHECK_HAS(remem_errmsg(db), "query text is 32769 bytes");
    free(text);
    remem_close(db);
}

/* A term counts as often as it is asked, up to 4 times: BM25 sums a
 * repeated term, so "garden" asked twice scores twice, and asked ten
 * times scores as asked four times. */
static void test_term_repeats_capped(void) {
    remem *db = garden_store();
    if (!db) return;
    const char *asks[] = {"garden", "garden garden", "garden garden garden garden",
                          "garden garden garden garden garden garden garden garden garden garden"};
    double bm25[4] = {0};
    for (int i = 0; i < 4; i++) {
        remem_result *r = NULL;
        CHECK_INT(recall(db, "g", asks[i], &r), REMEM_OK);
        const remem_hit *h = hit_of(r, "m1");
        CHECK(h && (h->lanes & 2));
        if (h) bm25[i] = h->bm25;
        remem_result_free(r);
    }
    CHECK(bm25[0] > 0);
    CHECK_NEAR(bm25[1], 2 * bm25[0], 1e-9);
    CHECK_NEAR(bm25[2], 4 * bm25[0], 1e-9);
    CHECK_NEAR(bm25[3], bm25[2], 1e-9);
    remem_close(db);
}

/* Of a text's distinct terms, the first 64 reach the lexical lane: "zebra"
 * as the 64th finds its memory lexically, as the 65th it does not (the
 * memory may still come from the vector lane, without a BM25 score). */
static void test_distinct_terms_capped(void) {
    remem *db = garden_store();
    if (!db) return;
    for (int pos = 63; pos <= 64; pos++) {
        char text[2048] = "";
        size_t len = 0;
        for (int i = 0; i < pos; i++)
            len += (size_t)snprintf(text + len, sizeof text - len, "filler%03d ", i);
        snprintf(text + len, sizeof text - len, "zebra");
        remem_result *r = NULL;
        CHECK_INT(recall(db, "g", text, &r), REMEM_OK);
        const remem_hit *h = hit_of(r, "m2");
        if (pos == 63) {
            CHECK(h && (h->lanes & 2) && h->bm25 > 0);
        } else {
            CHECK(!h || (!(h->lanes & 2) && h->bm25 == 0));
        }
        remem_result_free(r);
    }
    /* Repeats of terms already taken do not use up the 64. */
    char text[4096] = "";
    size_t len = 0;
    for (int i = 0; i < 63; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "filler%03d filler%03d ", i, i);
    snprintf(text + len, sizeof text - len, "zebra");
    remem_result *r = NULL;
    CHECK_INT(recall(db, "g", text, &r), REMEM_OK);
    const remem_hit *h = hit_of(r, "m2");
    CHECK(h && (h->lanes & 2));
    remem_result_free(r);
    remem_close(db);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_long_query_refused_fast);
    RUN(test_query_at_limit_answered_fast);
    RUN(test_term_repeats_capped);
    RUN(test_distinct_terms_capped);
    return TEST_EXIT();
}
