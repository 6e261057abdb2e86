/*
 * test_recall.c: what src/engine/recall.c and its caches promise beyond the
 * scores: TTLs hide without deleting, a bad filter or profile is a clear
 * error, and a second handle or a second process sees every commit on its
 * next call.
 *
 * Split from the former test_engine.c; the shared helpers are in
 * tests/support/engine_fixture.h.
 */
#include "support/engine_fixture.h"

static void test_ttl(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "t";
    m.id = "temp";
    m.text = "The door code this week is 9182";
    m.created_at = T0;
    m.expires_at = T0 + 2 * HOUR_MS;
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    /* Created at T0 too: a recall at T0 + 3 h does not see later memories. */
    m.id = "keep";
    m.text = "The door is painted green";
    m.expires_at = 0;
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    CHECK_INT(recall_finds(db, "t", "door code", "temp", T0 + HOUR_MS, 0, NULL), 1);
    CHECK_INT(recall_finds(db, "t", "door code", "temp", T0 + 2 * HOUR_MS, 0, NULL), 0);
    CHECK_INT(recall_finds(db, "t", "door code", "temp", T0 + 3 * HOUR_MS, 0, NULL), 0);
    CHECK_INT(recall_finds(db, "t", "door code", "keep", T0 + 3 * HOUR_MS, 0, NULL), 1);
    CHECK_INT(recall_finds(db, "t", "door code", "temp", T0 + 3 * HOUR_MS, 1, NULL), 1);
    /* Hidden, not deleted. */
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "t", "temp", &r), REMEM_OK);
    if (r) CHECK_INT(remem_record_memory(r)->expires_at, T0 + 2 * HOUR_MS);
    remem_record_free(r);
    CHECK_INT(ns_count(db, "t"), 2);
    /* The stats count it as expired (the clock is well past T0). */
    char *js = NULL;
    CHECK_INT(remem_stats(db, NULL, &js), REMEM_OK);
    json_t *o = json_loads(js, 0, NULL);
    CHECK_INT(json_integer_value(json_object_get(o, "expired")), 1);
    json_decref(o);
    remem_free(js);
    /* Extending the TTL brings it back. */
    remem_patch p;
    remem_patch_init(&p);
    p.fields = REMEM_SET_EXPIRES;
    p.expires_at = T0 + 10 * HOUR_MS;
    CHECK_INT(remem_update(db, "t", "temp", &p), REMEM_OK);
    CHECK_INT(recall_finds(db, "t", "door code", "temp", T0 + 3 * HOUR_MS, 0, NULL), 1);
    remem_close(db);
}

static void test_bad_filter_and_profile(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    CHECK_INT(add_text(db, "q", "q1", "the filter test memory", NULL, NULL), REMEM_OK);
    remem_query q;
    remem_query_init(&q);
    const char *nss[1] = {"q"};
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.text = "filter";
    q.no_touch = 1;
    remem_result *r = NULL;
    q.filter = "{\"kind\": ";
    CHECK_INT(remem_recall(db, &q, &r), REMEM_EFILTER);
    CHECK(r == NULL);
    CHECK_HAS(remem_errmsg(db), "JSON");
    q.filter = "{\"reward\": {\"$regexx\": 1}}";
    CHECK_INT(remem_recall(db, &q, &r), REMEM_EFILTER);
    CHECK_HAS(remem_errmsg(db), "$regexx");
    q.filter = "{\"$and\": {\"kind\": \"x\"}}";
    CHECK_INT(remem_recall(db, &q, &r), REMEM_EFILTER);
    CHECK_HAS(remem_errmsg(db), "$and");
    q.filter = NULL;
    q.profile = "generative_agents";
    CHECK_INT(remem_recall(db, &q, &r), REMEM_EPROFILE);
    CHECK(r == NULL);
    CHECK_HAS(remem_errmsg(db), "generative_agents");
    CHECK_HAS(remem_errmsg(db), "generative-agents"); /* the known ones are listed */
    CHECK(remem_profile_json("generative_agents") == NULL);
    /* Bad tiers and k. */
    q.profile = NULL;
    q.tiers = "short,medium";
    CHECK_INT(remem_recall(db, &q, &r), REMEM_EINVAL);
    CHECK_HAS(remem_errmsg(db), "medium");
    q.tiers = NULL;
    q.k = 100000;
    CHECK_INT(remem_recall(db, &q, &r), REMEM_EINVAL);
    q.k = 0;
    q.n_namespaces = 0;
    CHECK_INT(remem_recall(db, &q, &r), REMEM_EINVAL);
    q.n_namespaces = 1;
    /* Each error left nothing behind: the store still recalls normally,
     * and the failed recalls touched nothing. */
    CHECK_INT(get_field_i(db, "q", "q1", 1), 0);
    CHECK_INT(recall_finds(db, "q", "filter", "q1", 0, 0, NULL), 1);
    /* Every profile name has a definition. */
    for (const char *const *p = remem_profiles(); *p; p++) {
        char *js = remem_profile_json(*p);
        CHECK(js != NULL);
        remem_free(js);
    }
    CHECK_STR(remem_status_name(REMEM_EFILTER), "REMEM_EFILTER");
    CHECK_STR(remem_strerror(REMEM_EPROFILE), "unknown profile");
    remem_close(db);
}

/* ---- two handles, two processes ---- */

static void test_two_handles(void) {
    tmpdir t;
    tmp_make(&t);
    remem *a = open_store(t.db), *b = open_store(t.db);
    CHECK(a && b);
    if (!a || !b) {
        remem_close(a);
        remem_close(b);
        tmp_done(&t);
        return;
    }
    CHECK_INT(add_text(a, "s", "s1", "shared memory about the harbour", NULL, NULL), REMEM_OK);
    /* b loads its cache now; a's later writes must reach it. */
    CHECK_INT(recall_finds(b, "s", "harbour", "s1", 0, 0, NULL), 1);
    CHECK_INT(add_text(a, "s", "s2", "the harbour master is called Ole", NULL, NULL), REMEM_OK);
    CHECK_INT(recall_finds(b, "s", "harbour master", "s2", 0, 0, NULL), 1);
    remem_record *r = NULL;
    CHECK_INT(remem_get(b, "s", "s2", &r), REMEM_OK);
    remem_record_free(r);
    remem_patch p;
    remem_patch_init(&p);
    p.fields = REMEM_SET_TEXT;
    p.text = "the lighthouse keeper is called Ole";
    CHECK_INT(remem_update(a, "s", "s2", &p), REMEM_OK);
    CHECK_INT(recall_finds(b, "s", "lighthouse keeper", "s2", 0, 0, NULL), 1);
    CHECK_INT(remem_get(b, "s", "s2", &r), REMEM_OK);
    if (r) CHECK_STR(remem_record_memory(r)->text, "the lighthouse keeper is called Ole");
    remem_record_free(r);
    CHECK_INT(remem_invalidate(a, "s", "s1", NULL, NULL), REMEM_OK);
    CHECK_INT(recall_finds(b, "s", "harbour", "s1", 0, 0, NULL), 0);
    /* And the other way round, b writing, a reading its loaded cache. */
    CHECK_INT(recall_finds(a, "s", "lighthouse", "s2", 0, 0, NULL), 1);
    CHECK_INT(remem_forget(b, "s", "s2", 1), REMEM_OK);
    CHECK_INT(recall_finds(a, "s", "lighthouse", "s2", 0, 0, NULL), 0);
    CHECK_INT(remem_get(a, "s", "s2", &r), REMEM_ENOTFOUND);
    /* A recall by b that touches does not confuse a's cache. */
    /* Written before the recall's now (T0), which would not see it else. */
    remem_memory m3;
    remem_memory_init(&m3);
    m3.ns = "s";
    m3.id = "s3";
    m3.text = "the ferry leaves at noon";
    m3.created_at = T0 - HOUR_MS;
    CHECK_INT(remem_add(b, &m3, NULL, 0, NULL), REMEM_OK);
    remem_query q;
    remem_query_init(&q);
    const char *nss[1] = {"s"};
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.text = "ferry noon";
    q.now = T0;
    remem_result *res = NULL;
    CHECK_INT(remem_recall(b, &q, &res), REMEM_OK);
    remem_result_free(res);
    CHECK_INT(get_field_i(a, "s", "s3", 1), 1);
    CHECK_INT(get_field_i(a, "s", "s3", 2), T0);
    CHECK_INT(recall_finds(a, "s", "ferry", "s3", 0, 0, NULL), 1);
    remem_close(a);
    remem_close(b);
    tmp_done(&t);
}

static void test_two_processes(void) {
    tmpdir t;
    tmp_make(&t);
    remem *a = open_store(t.db);
    if (!a) return;
    CHECK_INT(add_text(a, "p", "p0", "parent wrote this first", NULL, NULL), REMEM_OK);
    CHECK_INT(recall_finds(a, "p", "parent", "p0", 0, 0, NULL), 1); /* cache loaded */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        /* The child opens its own handle (never the parent's connection). */
        remem *c = open_store(t.db);
        int ok = c != NULL;
        for (int i = 0; ok && i < 20; i++) {
            char id[16], text[64];
            snprintf(id, sizeof id, "c%d", i);
            snprintf(text, sizeof text, "child memory %d about the orchard", i);
            ok = add_text(c, "p", id, text, NULL, NULL) == REMEM_OK;
        }
        ok = ok && remem_invalidate(c, "p", "p0", "c0", NULL) == REMEM_OK;
        remem_close(c);
        _exit(ok ? 0 : 1);
    }
    CHECK(pid > 0);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_INT(ns_count(a, "p"), 21);
    CHECK_INT(recall_finds(a, "p", "orchard", "c7", 0, 0, NULL), 1);
    CHECK_INT(recall_finds(a, "p", "parent wrote", "p0", 0, 0, NULL), 0);
    remem_record *r = NULL;
    CHECK_INT(remem_get(a, "p", "c19", &r), REMEM_OK);
    remem_record_free(r);
    remem_close(a);
    tmp_done(&t);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_ttl);
    RUN(test_bad_filter_and_profile);
    RUN(test_two_handles);
    RUN(test_two_processes);
    return TEST_EXIT();
}
