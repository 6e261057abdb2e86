/*
 * test_write.c: the write path of src/engine/write.c through the public
 * header: every field round-trips, generated ids, upserts by a caller's id,
 * exact-duplicate folding, and the writes that must change nothing (a
 * vector of the wrong dimension, a batch with one bad memory).
 *
 * Split from the former test_engine.c; the shared helpers are in
 * tests/support/engine_fixture.h.
 */
#include "support/engine_fixture.h"

static void test_add_get_roundtrip(void) {
    remem *db = open_store(":memory:");
    CHECK(db != NULL);
    if (!db) return;
    int dim = remem_embedder_dim(db);
    CHECK_INT(dim, 384);
    CHECK_STR(remem_embedder_name(db), "hash");
    float *v = calloc((size_t)dim, sizeof *v);
    axis_vec(v, dim, 0.6);
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "agent:bolton";
    m.id = "m-1";
    m.kind = "decision";
    m.tier = "long";
    m.text = "Chose the northern route because the bridge was out";
    m.importance = 0.42;
    m.created_at = T0 - 5 * HOUR_MS;
    m.expires_at = T0 + 1000 * HOUR_MS;
    m.metadata = "{\"reward\":0.25,\"project\":\"acme\",\"tags\":[\"a\",\"b\"]}";
    m.links = "[\"ev-1\",\"ev-2\"]";
    m.vector = v;
    m.dim = dim;
    char id[64] = "";
    int outcome = 0;
    int64_t before = remem_now();
    CHECK_INT(remem_add(db, &m, id, sizeof id, &outcome), REMEM_OK);
    int64_t after = remem_now();
    CHECK_STR(id, "m-1");
    CHECK_INT(outcome, REMEM_ADDED);
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "agent:bolton", "m-1", &r), REMEM_OK);
    if (r) {
        const remem_memory *g = remem_record_memory(r);
        CHECK_STR(g->ns, m.ns);
        CHECK_STR(g->id, m.id);
        CHECK_STR(g->kind, m.kind);
        CHECK_STR(g->tier, m.tier);
        CHECK_STR(g->text, m.text);
        CHECK_NEAR(g->importance, 0.42, 0);
        CHECK_INT(g->created_at, m.created_at);
        CHECK(g->updated_at >= before && g->updated_at <= after);
        CHECK_INT(g->accessed_at, m.created_at); /* never accessed: created */
        CHECK_INT(g->access_count, 0);
        CHECK_INT(g->expires_at, m.expires_at);
        CHECK_INT(g->invalidated_at, 0);
        CHECK(g->superseded_by == NULL);
        CHECK_INT(g->duplicate_count, 0);
        json_t *want = json_loads(m.metadata, 0, NULL), *got = json_loads(g->metadata, 0, NULL);
        CHECK(got && json_equal(want, got));
        json_decref(want);
        json_decref(got);
        want = json_loads(m.links, 0, NULL);
        got = json_loads(g->links, 0, NULL);
        CHECK(got && json_equal(want, got));
        json_decref(want);
        json_decref(got);
        CHECK_STR(g->model, remem_embedder_model(db));
        CHECK_STR(g->model, "hash-v1-384");
        CHECK_INT(g->dim, dim);
    }
    remem_record_free(r);
    /* ns may be left out when the id is unique. */
    CHECK_INT(remem_get(db, NULL, "m-1", &r), REMEM_OK);
    remem_record_free(r);
    CHECK_INT(remem_get(db, "agent:bolton", "nope", &r), REMEM_ENOTFOUND);
    CHECK(r == NULL);
    CHECK_HAS(remem_errmsg(db), "nope");

    /* The defaults: kind observation, tier short, the kind's importance;
     * kind static goes to tier static. */
    struct {
        const char *kind, *tier;
        double imp;
    } defaults[] = {{NULL, "short", 0.5},
                    {"decision", "short", 0.9},
                    {"reflection", "short", 0.95},
                    {"static", "static", 1.0}};
    for (size_t i = 0; i < 4; i++) {
        remem_memory d;
        remem_memory_init(&d);
        char text[64];
        snprintf(text, sizeof text, "default case %zu", i);
        d.ns = "defaults";
        d.text = text;
        d.kind = defaults[i].kind;
        CHECK_INT(remem_add(db, &d, id, sizeof id, NULL), REMEM_OK);
        CHECK_INT(remem_get(db, "defaults", id, &r), REMEM_OK);
        if (r) {
            const remem_memory *g = remem_record_memory(r);
            CHECK_STR(g->kind, defaults[i].kind ? defaults[i].kind : "observation");
            CHECK_STR(g->tier, defaults[i].tier);
            CHECK_NEAR(g->importance, defaults[i].imp, 1e-12);
            CHECK(g->created_at > 0 && g->created_at == g->updated_at);
            CHECK(g->metadata == NULL && g->links == NULL);
        }
        remem_record_free(r);
    }
    /* Invalid memories are refused with a reason. */
    remem_memory bad;
    remem_memory_init(&bad);
    bad.ns = "defaults";
    bad.text = "";
    CHECK_INT(remem_add(db, &bad, NULL, 0, NULL), REMEM_EINVAL);
    CHECK_HAS(remem_errmsg(db), "text");
    bad.text = "x";
    bad.importance = 1.5;
    CHECK_INT(remem_add(db, &bad, NULL, 0, NULL), REMEM_EINVAL);
    CHECK_HAS(remem_errmsg(db), "importance");
    bad.importance = 0.5;
    bad.tier = "medium";
    CHECK_INT(remem_add(db, &bad, NULL, 0, NULL), REMEM_EINVAL);
    CHECK_HAS(remem_errmsg(db), "medium");
    bad.tier = NULL;
    bad.metadata = "[1,2]";
    CHECK_INT(remem_add(db, &bad, NULL, 0, NULL), REMEM_EPARSE);
    CHECK_HAS(remem_errmsg(db), "metadata");
    bad.metadata = NULL;
    bad.links = "[1]";
    CHECK_INT(remem_add(db, &bad, NULL, 0, NULL), REMEM_EPARSE);
    CHECK_HAS(remem_errmsg(db), "links");
    CHECK_INT(ns_count(db, "defaults"), 4);
    free(v);
    remem_close(db);
}

static void test_generated_ids(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    enum { N = 200 };
    static char ids[N][64];
    for (int i = 0; i < N; i++) {
        char text[64];
        snprintf(text, sizeof text, "observation number %d", i);
        int outcome = 0;
        CHECK_INT(add_text(db, "ids", NULL, text, ids[i], &outcome), REMEM_OK);
        CHECK_INT(outcome, REMEM_ADDED);
        CHECK_INT(strlen(ids[i]), 26);
        if (i == N / 2) usleep(3000); /* cross a millisecond boundary too */
    }
    /* Unique and in the order they were made. */
    for (int i = 1; i < N; i++) CHECK(strcmp(ids[i - 1], ids[i]) < 0);
    /* The first 10 characters are the time: the later half is later. */
    CHECK(strncmp(ids[0], ids[N - 1], 10) < 0);
    /* Each is gettable. */
    for (int i = 0; i < N; i += 37) {
        remem_record *r = NULL;
        CHECK_INT(remem_get(db, "ids", ids[i], &r), REMEM_OK);
        remem_record_free(r);
    }
    CHECK_INT(ns_count(db, "ids"), N);
    remem_close(db);
}

static void test_upsert(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    char id[64];
    int outcome = 0;
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "u";
    m.id = "fact-1";
    m.text = "The office is on the third floor";
    m.created_at = T0;
    m.importance = 0.3;
    CHECK_INT(remem_add(db, &m, id, sizeof id, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_ADDED);
    m.text = "The office moved to the fifth floor";
    m.created_at = 0; /* keep the original creation time */
    m.importance = 0.7;
    CHECK_INT(remem_add(db, &m, id, sizeof id, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_UPSERTED);
    CHECK_STR(id, "fact-1");
    CHECK_INT(ns_count(db, "u"), 1);
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "u", "fact-1", &r), REMEM_OK);
    if (r) {
        CHECK_STR(remem_record_memory(r)->text, "The office moved to the fifth floor");
        CHECK_NEAR(remem_record_memory(r)->importance, 0.7, 0);
        CHECK_INT(remem_record_memory(r)->created_at, T0);
    }
    remem_record_free(r);
    char ops[256];
    history_ops(db, "u", "fact-1", ops, sizeof ops);
    CHECK_STR(ops, "add,update");
    char *js = NULL;
    CHECK_INT(remem_history(db, "u", "fact-1", &js), REMEM_OK);
    json_t *a = json_loads(js, 0, NULL);
    json_t *upd = json_array_get(a, 1);
    CHECK_STR(json_string_value(json_object_get(json_object_get(upd, "before"), "text")),
              "The office is on the third floor");
    CHECK_STR(json_string_value(json_object_get(json_object_get(upd, "after"), "text")),
              "The office moved to the fifth floor");
    CHECK(json_is_null(json_object_get(json_array_get(a, 0), "before")));
    json_decref(a);
    remem_free(js);
    /* The new text is what recall finds now (the old one is gone from the lexical index). */
    CHECK_INT(recall_finds(db, "u", "fifth floor", "fact-1", 0, 0, NULL), 1);
    /* The same id in another namespace is another memory. */
    CHECK_INT(add_text(db, "u2", "fact-1", "elsewhere", id, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_ADDED);
    CHECK_INT(remem_get(db, NULL, "fact-1", &r), REMEM_EAMBIGUOUS);
    remem_record_free(r);
    remem_close(db);
}

static void test_duplicates(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    char id1[64], id2[64], id3[64];
    int outcome = 0;
    CHECK_INT(add_text(db, "d", NULL, "Hello world, the sky is blue", id1, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_ADDED);
    /* Same normalised text (case, runs of spaces): folded. */
    CHECK_INT(add_text(db, "d", NULL, "  hello   WORLD, the sky is blue ", id2, &outcome),
              REMEM_OK);
    CHECK_INT(outcome, REMEM_DUPLICATE);
    CHECK_STR(id2, id1);
    CHECK_INT(get_field_i(db, "d", id1, 0), 1);
    CHECK_INT(add_text(db, "d", NULL, "hello world, the sky is blue", id2, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_DUPLICATE);
    CHECK_INT(get_field_i(db, "d", id1, 0), 2);
    CHECK_INT(ns_count(db, "d"), 1);
    /* Another text, another namespace, or a caller's id: not folded. */
    CHECK_INT(add_text(db, "d", NULL, "Hello world, the sky is grey", id3, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_ADDED);
    CHECK_INT(add_text(db, "d2", NULL, "Hello world, the sky is blue", id3, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_ADDED);
    CHECK(strcmp(id3, id1) != 0);
    CHECK_INT(add_text(db, "d", "mine", "Hello world, the sky is blue", id3, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_ADDED);
    CHECK_STR(id3, "mine");
    CHECK_INT(ns_count(db, "d"), 3);
    char ops[256];
    history_ops(db, "d", id1, ops, sizeof ops);
    CHECK_STR(ops, "add,duplicate,duplicate");
    char *js = NULL;
    CHECK_INT(remem_stats(db, "d", &js), REMEM_OK);
    json_t *o = json_loads(js, 0, NULL);
    CHECK_INT(json_integer_value(json_object_get(o, "duplicates_folded")), 2);
    json_decref(o);
    remem_free(js);
    remem_close(db);
}

/* ---- errors that change nothing ---- */

static void test_wrong_dimension(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    CHECK_INT(add_text(db, "w", "w1", "a first memory", NULL, NULL), REMEM_OK);
    float v3[3] = {1, 2, 3};
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "w";
    m.id = "w2";
    m.text = "a memory with a short vector";
    m.vector = v3;
    m.dim = 3;
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_EDIM);
    CHECK_HAS(remem_errmsg(db), "3 dimensions");
    CHECK_HAS(remem_errmsg(db), "384");
    CHECK_INT(ns_count(db, "w"), 1);
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "w", "w2", &r), REMEM_ENOTFOUND);
    /* Also as an upsert of an existing id: the old row stays as it was. */
    m.id = "w1";
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_EDIM);
    CHECK_INT(remem_get(db, "w", "w1", &r), REMEM_OK);
    if (r) CHECK_STR(remem_record_memory(r)->text, "a first memory");
    remem_record_free(r);
    char ops[64];
    history_ops(db, "w", "w1", ops, sizeof ops);
    CHECK_STR(ops, "add");
    /* And a query vector of the wrong size. */
    remem_query q;
    remem_query_init(&q);
    const char *nss[1] = {"w"};
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.vector = v3;
    q.dim = 3;
    remem_result *res = (remem_result *)1;
    CHECK_INT(remem_recall(db, &q, &res), REMEM_EDIM);
    CHECK(res == NULL);
    CHECK_HAS(remem_errmsg(db), "3 dimensions");
    remem_close(db);
}

static void test_batch_all_or_nothing(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    CHECK_INT(add_text(db, "b", "b0", "already here", NULL, NULL), REMEM_OK);
    remem_memory ms[5];
    char texts[5][32];
    for (int i = 0; i < 5; i++) {
        remem_memory_init(&ms[i]);
        snprintf(texts[i], sizeof texts[i], "batch memory %d", i);
        ms[i].ns = "b";
        ms[i].text = texts[i];
    }
    ms[2].importance = 1.5;
    long bad = -7;
    char ids[5][64];
    CHECK_INT(remem_add_batch(db, ms, 5, &ids[0][0], 64, &bad), REMEM_EINVAL);
    CHECK_INT(bad, 2);
    CHECK_HAS(remem_errmsg(db), "memory 2");
    CHECK_HAS(remem_errmsg(db), "importance");
    CHECK_INT(ns_count(db, "b"), 1);
    ms[2].importance = -1;
    float v3[3] = {1, 0, 0};
    ms[4].vector = v3;
    ms[4].dim = 3;
    CHECK_INT(remem_add_batch(db, ms, 5, &ids[0][0], 64, &bad), REMEM_EDIM);
    CHECK_INT(bad, 4);
    CHECK_INT(ns_count(db, "b"), 1);
    ms[4].vector = NULL;
    ms[4].dim = 0;
    ms[1].ns = "";
    CHECK_INT(remem_add_batch(db, ms, 5, NULL, 0, &bad), REMEM_EINVAL);
    CHECK_INT(bad, 1);
    CHECK_INT(ns_count(db, "b"), 1);
    ms[1].ns = "b";
    /* Now a good one: all five, ids filled, in one go. */
    CHECK_INT(remem_add_batch(db, ms, 5, &ids[0][0], 64, &bad), REMEM_OK);
    CHECK_INT(bad, -1);
    CHECK_INT(ns_count(db, "b"), 6);
    for (int i = 0; i < 5; i++) {
        remem_record *r = NULL;
        CHECK_INT(remem_get(db, "b", ids[i], &r), REMEM_OK);
        if (r) CHECK_STR(remem_record_memory(r)->text, texts[i]);
        remem_record_free(r);
        if (i) CHECK(strcmp(ids[i - 1], ids[i]) < 0);
    }
    remem_close(db);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_add_get_roundtrip);
    RUN(test_generated_ids);
    RUN(test_upsert);
    RUN(test_duplicates);
    RUN(test_wrong_dimension);
    RUN(test_batch_all_or_nothing);
    return TEST_EXIT();
}
