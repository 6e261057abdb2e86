/*
 * test_check.c: "check" and "repair" (src/maintenance/check.c) on
 * deliberately damaged copies of a store: vectors of another model, of
 * the wrong dimension, with NaN, all zeros (written behind remem's back
 * with SQLite), and a file with overwritten pages.
 */
#include "support/engine_fixture.h"
#include "support/op_call.h"

static void damage(const char *path) {
    sqlite3 *s = NULL;
    CHECK_INT(sqlite3_open(path, &s), SQLITE_OK);
    float nan_vec[384];
    for (int i = 0; i < 384; i++) nan_vec[i] = i == 3 ? NAN : 0.1f;
    const char *sql[] = {
        "UPDATE memories SET model='other-model-v9' WHERE id='a'",
        "UPDATE memories SET embedding=zeroblob(64) WHERE id='b'",
        "UPDATE memories SET embedding=zeroblob(1536) WHERE id='d'",
    };
    for (size_t i = 0; i < 3; i++) CHECK_INT(sqlite3_exec(s, sql[i], NULL, NULL, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    CHECK_INT(sqlite3_prepare_v2(s, "UPDATE memories SET embedding=? WHERE id='c'", -1, &st, NULL),
              SQLITE_OK);
    sqlite3_bind_blob(st, 1, nan_vec, sizeof nan_vec, SQLITE_STATIC);
    CHECK_INT(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_close(s);
}

static void test_check_and_repair(void) {
    tmpdir t;
    tmp_make(&t);
    remem *db = open_store(t.db);
    if (!db) return;
    const char *ids[] = {"a", "b", "c", "d", "e"};
    const char *texts[] = {"alpha memory", "bravo memory", "charlie memory", "delta memory",
                           "echo memory"};
    for (int i = 0; i < 5; i++)
        CHECK_INT(add_text(db, "n", ids[i], texts[i], NULL, NULL), REMEM_OK);
    int rc;
    json_t *r = call(db, "check", "{}", &rc);
    CHECK_INT(rc, REMEM_OK);
    CHECK(json_is_true(json_object_get(r, "ok")));
    json_decref(r);
    remem_close(db);
    damage(t.db);
    db = open_store(t.db);
    if (!db) return;
    r = call(db, "check", "{\"ns\":\"n\"}", &rc);
    CHECK_INT(rc, REMEM_OK);
    CHECK(json_is_false(json_object_get(r, "ok")));
    CHECK_INT(json_integer_value(json_object_get(r, "badVectors")), 4);
    char *s = json_dumps(r, 0);
    CHECK_HAS(s, "other-model-v9");
    CHECK_HAS(s, "dimension 16");
    CHECK_HAS(s, "not a finite number");
    CHECK_HAS(s, "all zeros");
    free(s);
    json_decref(r);
    r = call(db, "repair", "{}", &rc);
    CHECK_INT(rc, REMEM_OK);
    CHECK_INT(json_integer_value(json_object_get(r, "repaired")), 4);
    CHECK(json_is_true(json_object_get(r, "ok")));
    json_decref(r);
    r = call(db, "check", "{}", &rc);
    CHECK(json_is_true(json_object_get(r, "ok")));
    json_decref(r);
    /* The repaired vectors are the embedder's: recall finds each by its text. */
    for (int i = 0; i < 4; i++) CHECK_INT(recall_finds(db, "n", texts[i], ids[i], 0, 0, NULL), 1);
    char ops[128];
    history_ops(db, "n", "c", ops, sizeof ops);
    CHECK_STR(ops, "add,repair");
    remem_close(db);
    tmp_done(&t);
}

static void test_damaged_file(void) {
    tmpdir t;
    tmp_make(&t);
    remem *db = open_store(t.db);
    if (!db) return;
    char text[64];
    for (int i = 0; i < 300; i++) {
        snprintf(text, sizeof text, "memory number %d of many", i);
        CHECK_INT(add_text(db, "n", NULL, text, NULL, NULL), REMEM_OK);
    }
    remem_close(db);
    /* Overwrite a few pages in the middle of the file (not the header). */
    FILE *f = fopen(t.db, "r+b");
    CHECK(f != NULL);
    if (f) {
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fseek(f, size / 2, SEEK_SET);
        for (int i = 0; i < 8192; i++) fputc(0xA5, f);
        fclose(f);
    }
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    db = NULL;
    int rc = remem_open(t.db, &o, &db);
    if (rc) {
        /* Refused at open: a clear error is a fine answer too. */
        CHECK(rc == REMEM_ECORRUPT || rc == REMEM_ESTORE);
    } else {
        json_t *r = call(db, "check", "{}", &rc);
        if (rc == REMEM_OK) {
            CHECK(json_is_false(json_object_get(r, "ok")));
            CHECK(json_array_size(json_object_get(r, "integrity")) > 0);
        } else {
            CHECK(rc == REMEM_ECORRUPT || rc == REMEM_ESTORE);
        }
        json_decref(r);
    }
    remem_close(db);
    tmp_done(&t);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_check_and_repair);
    RUN(test_damaged_file);
    return TEST_EXIT();
}
