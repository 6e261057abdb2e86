/*
 * test_edit.c: the read-modify-write path of src/engine/edit.c:
 * invalidation, forget as archive and as purge (the text scrubbed from
 * history and the full-text index), and the history every change leaves.
 *
 * Split from the former test_engine.c; the shared helpers are in
 * tests/support/engine_fixture.h.
 */
#include "support/engine_fixture.h"

static void test_invalidate(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    CHECK_INT(add_text(db, "f", "old", "Alice lives in Paris", NULL, NULL), REMEM_OK);
    CHECK_INT(add_text(db, "f", "new", "Alice lives in Lisbon now", NULL, NULL), REMEM_OK);
    /* Load the cache first, so the invalidation has to reach it. */
    CHECK_INT(recall_finds(db, "f", "where does Alice live", "old", 0, 0, NULL), 1);
    CHECK_INT(remem_invalidate(db, "f", "old", "new", "moved"), REMEM_OK);
    CHECK_INT(recall_finds(db, "f", "where does Alice live", "old", 0, 0, NULL), 0);
    CHECK_INT(recall_finds(db, "f", "where does Alice live", "new", 0, 0, NULL), 1);
    CHECK_INT(recall_finds(db, "f", "where does Alice live", "old", 0, 1, NULL), 1);
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "f", "old", &r), REMEM_OK);
    if (r) {
        CHECK(remem_record_memory(r)->invalidated_at > 0);
        CHECK_STR(remem_record_memory(r)->superseded_by, "new");
        CHECK_STR(remem_record_memory(r)->text, "Alice lives in Paris");
    }
    remem_record_free(r);
    char ops[256];
    history_ops(db, "f", "old", ops, sizeof ops);
    CHECK_STR(ops, "add,invalidate");
    char *js = NULL;
    CHECK_INT(remem_history(db, "f", "old", &js), REMEM_OK);
    CHECK_HAS(js, "\"actor\":\"moved\"");
    remem_free(js);
    CHECK_INT(remem_stats(db, NULL, &js), REMEM_OK);
    json_t *o = json_loads(js, 0, NULL);
    CHECK_INT(json_integer_value(json_object_get(o, "invalidated")), 1);
    json_decref(o);
    remem_free(js);
    CHECK_INT(remem_invalidate(db, "f", "missing", NULL, NULL), REMEM_ENOTFOUND);
    remem_close(db);
}

static void test_forget_archive(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    CHECK_INT(add_text(db, "a", "trip", "We took the night train to Vienna", NULL, NULL), REMEM_OK);
    CHECK_INT(add_text(db, "a", "other", "Breakfast was coffee and toast", NULL, NULL), REMEM_OK);
    CHECK_INT(recall_finds(db, "a", "night train Vienna", "trip", 0, 0, NULL), 1);
    CHECK_INT(remem_forget(db, "a", "trip", 0), REMEM_OK);
    CHECK_INT(recall_finds(db, "a", "night train Vienna", "trip", 0, 0, NULL), 0);
    CHECK_INT(recall_finds(db, "a", "night train Vienna", "trip", 0, 1, NULL), 0);
    /* Still there, in the archived tier, and a query may ask for it. */
    CHECK_INT(recall_finds(db, "a", "night train Vienna", "trip", 0, 0, "archived"), 1);
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "a", "trip", &r), REMEM_OK);
    if (r) CHECK_STR(remem_record_memory(r)->tier, "archived");
    remem_record_free(r);
    CHECK_INT(ns_count(db, "a"), 2);
    /* Restored by moving it to another tier. */
    remem_patch p;
    remem_patch_init(&p);
    p.fields = REMEM_SET_TIER;
    p.tier = "long";
    CHECK_INT(remem_update(db, "a", "trip", &p), REMEM_OK);
    CHECK_INT(recall_finds(db, "a", "night train Vienna", "trip", 0, 0, NULL), 1);
    char ops[256];
    history_ops(db, "a", "trip", ops, sizeof ops);
    CHECK_STR(ops, "add,archive,restore");
    remem_close(db);
}

/* Whether any "text" member anywhere in v is a string. */
static int json_has_text(json_t *v) {
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x) {
            if (strcmp(k, "text") == 0 && !json_is_null(x)) return 1;
            if (json_has_text(x)) return 1;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) if (json_has_text(x)) return 1;
    }
    return 0;
}

static void test_forget_purge(void) {
    tmpdir t;
    tmp_make(&t);
    remem *db = open_store(t.db);
    if (!db) return;
    CHECK_INT(add_text(db, "p", "secret", "My bank PIN is zanzibar4711", NULL, NULL), REMEM_OK);
    CHECK_INT(add_text(db, "p", "keep", "My favourite colour is teal", NULL, NULL), REMEM_OK);
    remem_patch pt;
    remem_patch_init(&pt);
    pt.fields = REMEM_SET_TEXT;
    pt.text = "My bank PIN is quagmire0815";
    CHECK_INT(remem_update(db, "p", "secret", &pt), REMEM_OK);
    CHECK_INT(recall_finds(db, "p", "bank PIN", "secret", 0, 0, NULL), 1);
    CHECK_INT(remem_forget(db, "p", "secret", 1), REMEM_OK);
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "p", "secret", &r), REMEM_ENOTFOUND);
    remem_record_free(r);
    CHECK_INT(recall_finds(db, "p", "bank PIN", "secret", 0, 1, "static,short,long,archived"), 0);
    CHECK_INT(ns_count(db, "p"), 1);
    /* History keeps the rows, every one without the text. */
    char ops[256];
    history_ops(db, "p", "secret", ops, sizeof ops);
    CHECK_STR(ops, "add,update,delete");
    char *js = NULL;
    CHECK_INT(remem_history(db, "p", "secret", &js), REMEM_OK);
    CHECK(js && !strstr(js, "zanzibar") && !strstr(js, "quagmire"));
    json_t *h = js ? json_loads(js, 0, NULL) : NULL;
    CHECK(h != NULL);
    CHECK(!json_has_text(h));
    /* ...and nothing else of the memory either: each row says what
     * happened to (ns, id), and when. */
    json_t *del = json_array_get(h, 2);
    CHECK_STR(json_string_value(json_object_get(del, "id")), "secret");
    CHECK_STR(json_string_value(json_object_get(del, "ns")), "p");
    CHECK(json_is_string(json_object_get(del, "at")));
    size_t hi;
    json_t *row;
    json_array_foreach(h, hi, row) {
        CHECK(json_is_null(json_object_get(row, "before")));
        CHECK(json_is_null(json_object_get(row, "after")));
        CHECK(json_is_null(json_object_get(row, "actor")));
    }
    json_decref(h);
    remem_free(js);
    remem_close(db);
    /* Nothing in the tables reads the text any more: memories, history
     * (schema 3 has no full-text table; the text lived only in these). */
    sqlite3 *s = NULL;
    CHECK_INT(sqlite3_open_v2(t.db, &s, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    const char *probes[] = {
        "SELECT count(*) FROM memories WHERE text LIKE '%zanzibar%' OR text LIKE '%quagmire%'",
        "SELECT count(*) FROM history WHERE coalesce(before,'') || coalesce(after,'') "
        "LIKE '%zanzibar%' OR coalesce(before,'') || coalesce(after,'') LIKE '%quagmire%'",
        "SELECT count(*) FROM memories WHERE text LIKE '%teal%'"};
    for (size_t i = 0; i < 3; i++) {
        sqlite3_stmt *st = NULL;
        CHECK_INT(sqlite3_prepare_v2(s, probes[i], -1, &st, NULL), SQLITE_OK);
        CHECK_INT(sqlite3_step(st), SQLITE_ROW);
        CHECK_INT(sqlite3_column_int(st, 0), i == 2 ? 1 : 0); /* the last: a live row */
        sqlite3_finalize(st);
    }
    sqlite3_close(s);
    tmp_done(&t);
}

static void test_history_sequence(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    CHECK_INT(add_text(db, "h", "x", "The meeting is on Monday", NULL, NULL), REMEM_OK);
    remem_patch p;
    remem_patch_init(&p);
    p.fields = REMEM_SET_TEXT | REMEM_SET_IMPORTANCE | REMEM_SET_METADATA;
    p.text = "The meeting is on Tuesday";
    p.importance = 0.8;
    p.metadata = "{\"source\":\"email\"}";
    p.actor = "alice";
    CHECK_INT(remem_update(db, "h", "x", &p), REMEM_OK);
    remem_patch_init(&p);
    p.fields = REMEM_SET_TIER;
    p.tier = "long";
    CHECK_INT(remem_update(db, "h", "x", &p), REMEM_OK);
    CHECK_INT(remem_invalidate(db, "h", "x", NULL, NULL), REMEM_OK);
    CHECK_INT(remem_forget(db, "h", "x", 0), REMEM_OK);
    p.tier = "short";
    CHECK_INT(remem_update(db, "h", "x", &p), REMEM_OK);
    char ops[256];
    history_ops(db, "h", "x", ops, sizeof ops);
    CHECK_STR(ops, "add,update,migrate,invalidate,archive,restore");
    char *js = NULL;
    CHECK_INT(remem_history(db, NULL, "x", &js), REMEM_OK);
    json_t *a = json_loads(js, 0, NULL);
    remem_free(js);
    long long last = 0;
    size_t i;
    json_t *o;
    json_array_foreach(a, i, o) {
        long long seq = json_integer_value(json_object_get(o, "seq"));
        CHECK(seq > last);
        last = seq;
        CHECK_STR(json_string_value(json_object_get(o, "ns")), "h");
        CHECK(json_is_string(json_object_get(o, "at")));
    }
    json_t *upd = json_array_get(a, 1);
    CHECK_STR(json_string_value(json_object_get(upd, "actor")), "alice");
    CHECK_NEAR(json_number_value(json_object_get(json_object_get(upd, "before"), "importance")),
               0.5, 1e-9);
    CHECK_NEAR(json_number_value(json_object_get(json_object_get(upd, "after"), "importance")), 0.8,
               1e-9);
    CHECK_STR(json_string_value(json_object_get(
                  json_object_get(json_object_get(upd, "after"), "metadata"), "source")),
              "email");
    json_decref(a);
    /* A purge leaves the sequence of what happened, and nothing of the
     * memory (issue 8, item 5: the actor, metadata and values go too). */
    CHECK_INT(remem_forget(db, "h", "x", 1), REMEM_OK);
    history_ops(db, "h", "x", ops, sizeof ops);
    CHECK_STR(ops, "add,update,migrate,invalidate,archive,restore,delete");
    CHECK_INT(remem_history(db, NULL, "x", &js), REMEM_OK);
    CHECK(js && !strstr(js, "alice") && !strstr(js, "email") && !strstr(js, "Tuesday"));
    a = json_loads(js, 0, NULL);
    remem_free(js);
    CHECK_INT(json_array_size(a), 7);
    json_array_foreach(a, i, o) {
        CHECK(json_is_null(json_object_get(o, "before")) &&
              json_is_null(json_object_get(o, "after")));
        CHECK(json_is_null(json_object_get(o, "actor")));
    }
    json_decref(a);
    CHECK_INT(remem_history(db, "h", "never", &js), REMEM_ENOTFOUND);
    remem_close(db);
}

/* History prints numbers as every other rendering does: 0.6, never
 * 0.59999999999999998 (issue 8, item 15). */
static void test_history_floats(void) {
    remem *db = open_store(":memory:");
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "f";
    m.id = "x";
    m.text = "The kettle is in the cupboard";
    m.importance = 0.6;
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    remem_patch p;
    remem_patch_init(&p);
    p.fields = REMEM_SET_IMPORTANCE;
    p.importance = 0.7;
    CHECK_INT(remem_update(db, "f", "x", &p), REMEM_OK);
    char *js = NULL;
    CHECK_INT(remem_history(db, "f", "x", &js), REMEM_OK);
    CHECK_HAS(js, "\"importance\":0.6,");
    CHECK_HAS(js, "\"importance\":0.7,");
    CHECK(js && !strstr(js, "0.59999") && !strstr(js, "0.69999"));
    remem_free(js);
    remem_close(db);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_invalidate);
    RUN(test_forget_archive);
    RUN(test_forget_purge);
    RUN(test_history_sequence);
    RUN(test_history_floats);
    return TEST_EXIT();
}
