/*
 * test_cache.c: the in-memory namespace caches stay exact when another
 * handle (another process, in production) writes. Handle A keeps its cache
 * loaded across the other handle's writes and must answer every recall
 * exactly as a handle opened fresh on the same file does: adds, upserts,
 * re-embedded texts, invalidations, archives, purges, an id purged and added
 * again, duplicates, a clear, and A's own writes interleaved with B's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remem.h"
#include "test.h"

static char path[256];

static remem *open_db(void) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    int rc = remem_open(path, &o, &db);
    CHECK_INT(rc, REMEM_OK);
    return db;
}

/* The ranked ids and scores of a recall, as one string. */
static void ranking(remem *db, const char *query, char *out, size_t cap) {
    remem_query q;
    remem_query_init(&q);
    const char *ns[] = {"t:cache"};
    q.namespaces = ns;
    q.n_namespaces = 1;
    q.text = query;
    q.k = 20;
    q.now = 1800000000000LL;
    q.no_touch = 1;
    remem_result *r = NULL;
    int rc = remem_recall(db, &q, &r);
    CHECK_INT(rc, REMEM_OK);
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; r && i < r->n; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s:%.6f:%s ", r->hits[i].mem.id,
                                r->hits[i].score, r->hits[i].mem.text);
    remem_result_free(r);
}

/* A (cache warm) must agree with a fresh handle. */
static void agree(remem *a, const char *query, const char *step) {
    static char ra[16384], rf[16384];
    ranking(a, query, ra, sizeof ra);
    /* Caches of its own: the process's shared ones are A's. */
    setenv("REMEM_CACHE_SHARE", "0", 1);
    remem *fresh = open_db();
    unsetenv("REMEM_CACHE_SHARE");
    ranking(fresh, query, rf, sizeof rf);
    remem_close(fresh);
    if (strcmp(ra, rf) != 0)
        fprintf(stderr, "  after %s:\n  cached: %s\n  fresh:  %s\n", step, ra, rf);
    CHECK_STR(ra, rf);
}

static void add(remem *db, const char *id, const char *text) {
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "t:cache";
    m.id = id;
    m.text = text;
    m.created_at = 1700000000000LL;
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
}

static void test_other_handle_writes(void) {
    snprintf(path, sizeof path, "/tmp/remem-test-cache-%d.db", (int)getpid());
    remem *a = open_db(), *b = open_db();
    const char *q = "garden tomatoes watering schedule";
    for (int i = 0; i < 40; i++) {
        char id[16], text[128];
        snprintf(id, sizeof id, "m%d", i);
        snprintf(text, sizeof text, "note %d about the garden, tomatoes and watering on day %d", i,
                 i % 7);
        add(a, id, text);
    }
    agree(a, q, "the first load");
    add(b, "b1", "the tomatoes in the garden need watering every morning");
    agree(a, q, "an add by B");
    add(b, "m3", "upserted: watering schedule for the garden is now twice a day");
    agree(a, q, "an upsert by B");
    remem_patch p;
    remem_patch_init(&p);
    p.fields = REMEM_SET_TEXT | REMEM_SET_IMPORTANCE;
    p.text = "re-embedded: tomatoes were moved to the greenhouse";
    p.importance = 0.9;
    CHECK_INT(remem_update(b, "t:cache", "m5", &p), REMEM_OK);
    agree(a, q, "an update by B");
    CHECK_INT(remem_invalidate(b, "t:cache", "m7", "b1", "replaced"), REMEM_OK);
    CHECK_INT(remem_forget(b, "t:cache", "m8", 0), REMEM_OK);
    agree(a, q, "an invalidate and an archive by B");
    CHECK_INT(remem_forget(b, "t:cache", "m9", 1), REMEM_OK);
    agree(a, q, "a purge by B");
    add(b, "m9", "m9 again: garden watering after the purge");
    agree(a, q, "the purged id added again by B");
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "t:cache";
    m.text = "the tomatoes in the garden need watering every morning";
    int outcome = 0;
    CHECK_INT(remem_add(b, &m, NULL, 0, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_DUPLICATE);
    agree(a, q, "a duplicate by B");
    /* Interleaved: B writes, then A writes without reading in between. */
    add(b, "b2", "B's watering note for the garden");
    add(a, "a1", "A's tomatoes note for the garden");
    agree(a, q, "interleaved writes of A and B");
    CHECK_INT(remem_clear(b, "t:cache", NULL), REMEM_OK);
    add(b, "c1", "after the clear: garden tomatoes");
    agree(a, q, "a clear by B");
    remem_close(a);
    remem_close(b);
    char side[300];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

/* The allow bitmap kept between recalls must follow `now` across TTLs (in
 * both directions, for replays), new rows, and a change of filter. */
static size_t count_hits(remem *db, const char *filter, int64_t now) {
    remem_query q;
    remem_query_init(&q);
    const char *ns[] = {"t:allow"};
    q.namespaces = ns;
    q.n_namespaces = 1;
    q.text = "weather report";
    q.k = 50;
    q.now = now;
    q.no_touch = 1;
    q.filter = filter;
    q.profile = "stream";
    remem_result *r = NULL;
    CHECK_INT(remem_recall(db, &q, &r), REMEM_OK);
    size_t n = r ? r->n : 0;
    remem_result_free(r);
    return n;
}

static void test_allow_bitmap_follows_now(void) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    CHECK_INT(remem_open(":memory:", &o, &db), REMEM_OK);
    const int64_t t0 = 1700000000000LL, hour = 3600000LL;
    for (int i = 0; i < 10; i++) {
        remem_memory m;
        remem_memory_init(&m);
        char text[64];
        snprintf(text, sizeof text, "weather report number %d", i);
        m.ns = "t:allow";
        m.text = text;
        m.kind = i % 2 ? "observation" : "decision";
        m.created_at = t0;
        /* Memories 0..3 expire one after another, an hour apart. */
        if (i < 4) m.expires_at = t0 + (i + 1) * hour;
        CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    }
    CHECK_INT(count_hits(db, NULL, t0), 10);
    CHECK_INT(count_hits(db, NULL, t0 + 30 * 60000), 10);
    CHECK_INT(count_hits(db, NULL, t0 + hour), 9);
    CHECK_INT(count_hits(db, NULL, t0 + 2 * hour + 1), 8);
    CHECK_INT(count_hits(db, NULL, t0 + 10 * hour), 6);
    CHECK_INT(count_hits(db, NULL, t0), 10); /* back in time: a replay */
    CHECK_INT(count_hits(db, "{\"kind\":\"decision\"}", t0), 5);
    CHECK_INT(count_hits(db, "{\"kind\":\"decision\"}", t0 + 10 * hour), 3);
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "t:allow";
    m.text = "one more weather report";
    m.kind = "decision";
    m.created_at = t0;
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    CHECK_INT(count_hits(db, "{\"kind\":\"decision\"}", t0 + 10 * hour), 4);
    CHECK_INT(count_hits(db, NULL, t0 + 10 * hour), 7);
    remem_close(db);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_other_handle_writes);
    RUN(test_allow_bitmap_follows_now);
    return TEST_EXIT();
}
