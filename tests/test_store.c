/*
 * test_store.c: the store conformance test. Every operation of store.h's
 * table is checked through the table alone, and every check runs against
 * each backend in `backends` below with the same code: the SQLite store on
 * a file and on ":memory:" today; a new backend (PostgreSQL) adds one line
 * there. A backend that cannot be shared by two connections (":memory:")
 * skips only the check that needs two.
 *
 * The engine's expectations are written down here as checks: rowids stay
 * put across replace, a namespace's version moves on every content change
 * but not on touch, history seqs grow, a rollback leaves nothing. A store
 * does no ranking (the engine's lexical index does), so there is no
 * full-text operation to check.
 *
 * test_migrate_from_v2 is SQLite's own: a file of schema 2 (with the FTS5
 * table that schema 3 dropped) opens, migrates and keeps its rows. So are
 * test_checkpoint_off_commit and test_wal_bounded: checkpoints are not in
 * the commits (src/store/sqlite_wal.c), and the WAL stays under 64 MB and
 * one transaction.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "store/store.h"
#include "test.h"

typedef struct backend {
    const char *name;
    /* Writes the URI of a fresh, empty store into uri. */
    void (*fresh)(char *uri, size_t cap);
    void (*cleanup)(const char *uri);
    int shared; /* two handles on one URI see each other's commits */
} backend;

static void file_fresh(char *uri, size_t cap) {
    static int n;
    snprintf(uri, cap, "/tmp/remem-test-store-%d-%d.db", (int)getpid(), n++);
}

static void file_cleanup(const char *uri) {
    const char *suffix[] = {"", "-wal", "-shm", "-journal"};
    char p[512];
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s%s", uri, suffix[i]);
        unlink(p);
    }
}

static void memory_fresh(char *uri, size_t cap) { snprintf(uri, cap, ":memory:"); }
static void memory_cleanup(const char *uri) { (void)uri; }

/* PostgreSQL: a fresh database on the server REMEM_TEST_PG_URI names
 * (tests/support/pg.sh starts one for tests/run.sh), dropped afterwards. */
static void pg_run(const char *sql, ExecStatusType want) {
    PGconn *c = PQconnectdb(getenv("REMEM_TEST_PG_URI"));
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != want) fprintf(stderr, "  postgres: %s: %s", sql, PQerrorMessage(c));
    PQclear(r);
    PQfinish(c);
}

static void pg_admin(const char *sql) { pg_run(sql, PGRES_COMMAND_OK); }

/* A query whose rows do not matter, on the same server. */
static void pg_query(const char *sql) { pg_run(sql, PGRES_TUPLES_OK); }

static void pg_fresh(char *uri, size_t cap) {
    static int n;
    char sql[128];
    snprintf(sql, sizeof sql, "CREATE DATABASE remem_test_store_%d_%d", (int)getpid(), n);
    pg_admin(sql);
    const char *base = getenv("REMEM_TEST_PG_URI");
    const char *slash = strrchr(base, '/');
    snprintf(uri, cap, "%.*s/remem_test_store_%d_%d", (int)(slash - base), base, (int)getpid(),
             n++);
}

static void pg_cleanup(const char *uri) {
    char sql[160];
    snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", strrchr(uri, '/') + 1);
    pg_admin(sql);
}

static const backend backends[] = {
    {"sqlite-file", file_fresh, file_cleanup, 1},
    {"sqlite-memory", memory_fresh, memory_cleanup, 0},
    {"postgres", pg_fresh, pg_cleanup, 1},
};

static const backend *be;
static char uri[512];

static store *open_fresh(void) {
    be->fresh(uri, sizeof uri);
    store_config cfg = {0};
    store *s = NULL;
    char err[512] = "";
    int rc = store_open(uri, &cfg, &s, err, sizeof err);
    if (rc) fprintf(stderr, "  %s: cannot open %s: %s\n", be->name, uri, err);
    CHECK_INT(rc, REMEM_OK);
    return s;
}

static void done(store *s) {
    store_close(s);
    be->cleanup(uri);
}

#define DIM 4

/* A memory with every field set; the vector is v (DIM floats). */
static remem_memory memory(const char *ns, const char *id, const char *text, const float *v) {
    remem_memory m;
    memset(&m, 0, sizeof m);
    m.ns = ns;
    m.id = id;
    m.kind = "observation";
    m.tier = "short";
    m.text = text;
    m.importance = 0.25;
    m.created_at = 1000;
    m.updated_at = 2000;
    m.accessed_at = 3000;
    m.access_count = 4;
    m.expires_at = 0;
    m.invalidated_at = 0;
    m.superseded_by = NULL;
    m.duplicate_count = 0;
    m.metadata = "{\"k\":1}";
    m.links = "[\"a\",\"b\"]";
    m.model = "test-model";
    m.vector = v;
    m.dim = v ? DIM : 0;
    return m;
}

static const float V1[DIM] = {1, 0, 0, 0}, V2[DIM] = {0, 0.5f, -0.25f, 1e-3f};

/* Insert inside its own transaction; returns the rowid (0 on failure). */
static int64_t put(store *s, const remem_memory *m) {
    int64_t rowid = 0;
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_insert(s, m, m->text, (uint64_t)strlen(m->text), &rowid), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    CHECK(rowid > 0);
    return rowid;
}

static int64_t version_of(store *s, const char *ns) {
    int64_t v = -1;
    CHECK_INT(store_ns_info(s, ns, NULL, 0, NULL, &v, NULL), REMEM_OK);
    return v;
}

/* ---- open ---- */

static void test_open(void) {
    store *s = open_fresh();
    if (!s) return;
    CHECK(s->ops != NULL);
    CHECK_STR(store_path(s), uri);
    CHECK_STR(store_errmsg(s), "");
    done(s);
}

static void test_open_unknown_scheme(void) {
    store *s = (store *)1;
    char err[512] = "";
    store_config cfg = {0};
    CHECK_INT(store_open("nosuch://host/db", &cfg, &s, err, sizeof err), REMEM_EUNSUPPORTED);
    CHECK(s == NULL);
    CHECK_HAS(err, "nosuch://");
    CHECK_HAS(err, "sqlite");
}

/* ---- namespaces ---- */

static void test_ns_info_and_model(void) {
    store *s = open_fresh();
    if (!s) return;
    char model[64] = "x";
    int dim = 9;
    int64_t version = 9, rows = 9;
    CHECK_INT(store_ns_info(s, "a", model, sizeof model, &dim, &version, &rows), REMEM_ENOTFOUND);
    CHECK_STR(model, "");
    CHECK_INT(dim, 0);
    CHECK_INT(rows, 0);
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_ns_set_model(s, "a", "m-1", 7), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    CHECK_INT(store_ns_info(s, "a", model, sizeof model, &dim, &version, &rows), REMEM_OK);
    CHECK_STR(model, "m-1");
    CHECK_INT(dim, 7);
    CHECK_INT(rows, 0);
    /* Every output may be NULL. */
    CHECK_INT(store_ns_info(s, "a", NULL, 0, NULL, NULL, NULL), REMEM_OK);
    done(s);
}

typedef struct ns_list {
    char text[512];
} ns_list;

static int list_ns(void *ctx, const store_ns *n) {
    ns_list *l = ctx;
    size_t len = strlen(l->text);
    snprintf(l->text + len, sizeof l->text - len, "%s:%lld:%s:%d ", n->ns, (long long)n->rows,
             n->model, n->dim);
    return 0;
}

static int stop_at_first(void *ctx, const store_ns *n) {
    (void)n;
    (*(int *)ctx)++;
    return 42;
}

static void test_namespaces(void) {
    store *s = open_fresh();
    if (!s) return;
    ns_list l = {""};
    CHECK_INT(store_namespaces(s, list_ns, &l), REMEM_OK);
    CHECK_STR(l.text, "");
    remem_memory m = memory("zeta", "1", "one", V1);
    put(s, &m);
    m = memory("alpha", "1", "one", NULL);
    put(s, &m);
    m = memory("alpha", "2", "two", NULL);
    put(s, &m);
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_ns_set_model(s, "zeta", "test-model", DIM), REMEM_OK);
    CHECK_INT(store_ns_set_model(s, "empty", "test-model", DIM), REMEM_OK); /* no rows */
    CHECK_INT(store_commit(s), REMEM_OK);
    CHECK_INT(store_namespaces(s, list_ns, &l), REMEM_OK);
    /* By name, only namespaces holding rows. */
    CHECK_STR(l.text, "alpha:2::0 zeta:1:test-model:4 ");
    int calls = 0;
    CHECK_INT(store_namespaces(s, stop_at_first, &calls), 42);
    CHECK_INT(calls, 1);
    done(s);
}

/* ---- rows ---- */

static void check_same_memory(const remem_memory *a, const remem_memory *b) {
    CHECK_STR(a->ns, b->ns);
    CHECK_STR(a->id, b->id);
    CHECK_STR(a->kind, b->kind);
    CHECK_STR(a->tier, b->tier);
    CHECK_STR(a->text, b->text);
    CHECK(a->importance == b->importance);
    CHECK_INT(a->created_at, b->created_at);
    CHECK_INT(a->updated_at, b->updated_at);
    CHECK_INT(a->accessed_at, b->accessed_at);
    CHECK_INT(a->access_count, b->access_count);
    CHECK_INT(a->expires_at, b->expires_at);
    CHECK_INT(a->invalidated_at, b->invalidated_at);
    CHECK((a->superseded_by == NULL) == (b->superseded_by == NULL));
    if (a->superseded_by && b->superseded_by) CHECK_STR(a->superseded_by, b->superseded_by);
    CHECK_INT(a->duplicate_count, b->duplicate_count);
    CHECK_STR(a->metadata, b->metadata);
    CHECK_STR(a->links, b->links);
}

static void test_insert_find_get(void) {
    store *s = open_fresh();
    if (!s) return;
    remem_memory m = memory("n", "id-1", "Maya prefers blue-green deployments", V2);
    m.expires_at = 99999;
    m.invalidated_at = 5;
    m.superseded_by = "id-2";
    m.duplicate_count = 3;
    int64_t rowid = put(s, &m);
    store_row r;
    /* Without the vector: its dimension still. */
    CHECK_INT(store_find(s, "n", "id-1", 0, &r), REMEM_OK);
    CHECK_INT(r.rowid, rowid);
    check_same_memory(&r.m, &m);
    CHECK_STR(r.m.model, "test-model");
    CHECK_INT(r.m.dim, DIM);
    CHECK(r.vec == NULL && r.m.vector == NULL);
    store_row_clear(&r);
    CHECK(r.m.id == NULL);
    /* With it: bit for bit. */
    CHECK_INT(store_find(s, "n", "id-1", 1, &r), REMEM_OK);
    CHECK(r.vec != NULL && r.m.vector == r.vec);
    if (r.vec) CHECK(memcmp(r.vec, V2, sizeof V2) == 0);
    store_row_clear(&r);
    /* Any namespace, when the id is unique. */
    CHECK_INT(store_find(s, NULL, "id-1", 0, &r), REMEM_OK);
    CHECK_STR(r.m.ns, "n");
    store_row_clear(&r);
    CHECK_INT(store_get_rowid(s, rowid, 1, &r), REMEM_OK);
    CHECK_STR(r.m.id, "id-1");
    CHECK(r.vec && memcmp(r.vec, V2, sizeof V2) == 0);
    store_row_clear(&r);
    /* Not found, and ambiguous. */
    CHECK_INT(store_find(s, "n", "nope", 0, &r), REMEM_ENOTFOUND);
    CHECK(r.m.id == NULL);
    CHECK_HAS(store_errmsg(s), "nope");
    CHECK_INT(store_find(s, "other", "id-1", 0, &r), REMEM_ENOTFOUND);
    CHECK_INT(store_get_rowid(s, rowid + 1000, 0, &r), REMEM_ENOTFOUND);
    remem_memory m2 = memory("n2", "id-1", "another namespace, same id", NULL);
    int64_t rowid2 = put(s, &m2);
    CHECK(rowid2 != rowid);
    CHECK_INT(store_find(s, NULL, "id-1", 0, &r), REMEM_EAMBIGUOUS);
    CHECK(r.m.id == NULL);
    /* No vector given: none stored, nor a model. */
    CHECK_INT(store_find(s, "n2", "id-1", 1, &r), REMEM_OK);
    CHECK(r.vec == NULL);
    CHECK_INT(r.m.dim, 0);
    CHECK(r.m.model == NULL);
    CHECK(r.m.metadata != NULL);
    store_row_clear(&r);
    /* NULL optional fields stay NULL. */
    remem_memory m3 = memory("n", "id-3", "bare", NULL);
    m3.metadata = m3.links = NULL;
    put(s, &m3);
    CHECK_INT(store_find(s, "n", "id-3", 0, &r), REMEM_OK);
    CHECK(r.m.metadata == NULL && r.m.links == NULL && r.m.superseded_by == NULL);
    store_row_clear(&r);
    /* A second insert of the same key is refused and changes nothing. */
    CHECK_INT(store_begin(s), REMEM_OK);
    int64_t dummy = 0;
    CHECK(store_insert(s, &m, "x", 1, &dummy) != REMEM_OK);
    store_rollback(s);
    int64_t rows = 0;
    CHECK_INT(store_ns_info(s, "n", NULL, 0, NULL, NULL, &rows), REMEM_OK);
    CHECK_INT(rows, 2);
    done(s);
}

static void test_find_dup(void) {
    store *s = open_fresh();
    if (!s) return;
    /* norm is the text normalised (util_normalize_text), as the engine
     * passes it: SQLite compares a candidate's text normalised again. */
    remem_memory m = memory("n", "a", "Hello   World", NULL);
    int64_t rowid = 0, found = -1;
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_insert(s, &m, "hello world", 77, &rowid), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    CHECK_INT(store_find_dup(s, "n", 77, "hello world", &found), REMEM_OK);
    CHECK_INT(found, rowid);
    /* Same hash, other text (a collision); other namespace; other hash. */
    CHECK_INT(store_find_dup(s, "n", 77, "hello there", &found), REMEM_OK);
    CHECK_INT(found, 0);
    CHECK_INT(store_find_dup(s, "m", 77, "hello world", &found), REMEM_OK);
    CHECK_INT(found, 0);
    CHECK_INT(store_find_dup(s, "n", 78, "hello world", &found), REMEM_OK);
    CHECK_INT(found, 0);
    /* Hashes use all 64 bits. */
    m = memory("n", "b", "big", NULL);
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_insert(s, &m, "big", UINT64_MAX - 5, &rowid), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    CHECK_INT(store_find_dup(s, "n", UINT64_MAX - 5, "big", &found), REMEM_OK);
    CHECK_INT(found, rowid);
    done(s);
}

/* find_dup_after: every row of a namespace with one text, one call each,
 * lowest rowid first (an episode's duplicate is looked for among them). */
static void test_find_dup_after(void) {
    store *s = open_fresh();
    if (!s) return;
    int64_t r1 = 0, r2 = 0, r3 = 0, found = -1;
    remem_memory a = memory("n", "a", "same text", NULL), b = memory("n", "b", "same text", NULL),
                 c = memory("m", "c", "same text", NULL), d = memory("n", "d", "other", NULL);
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_insert(s, &a, "same text", 5, &r1), REMEM_OK);
    CHECK_INT(store_insert(s, &c, "same text", 5, &r3), REMEM_OK);
    CHECK_INT(store_insert(s, &d, "other", 6, &r3), REMEM_OK);
    CHECK_INT(store_insert(s, &b, "same text", 5, &r2), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    CHECK_INT(store_find_dup_after(s, "n", 5, "same text", 0, &found), REMEM_OK);
    CHECK_INT(found, r1);
    CHECK_INT(store_find_dup_after(s, "n", 5, "same text", r1, &found), REMEM_OK);
    CHECK_INT(found, r2);
    CHECK_INT(store_find_dup_after(s, "n", 5, "same text", r2, &found), REMEM_OK);
    CHECK_INT(found, 0);
    CHECK_INT(store_find_dup_after(s, "n", 5, "another text", 0, &found), REMEM_OK);
    CHECK_INT(found, 0);
    done(s);
}

static void test_replace(void) {
    store *s = open_fresh();
    if (!s) return;
    remem_memory m = memory("n", "a", "the first text", V1);
    int64_t rowid = put(s, &m);
    int64_t v0 = version_of(s, "n");
    remem_memory m2 = memory("n", "a", "the second text", V2);
    m2.kind = "decision";
    m2.tier = "long";
    m2.importance = 0.9;
    m2.updated_at = 5000;
    m2.metadata = "{\"k\":2}";
    m2.links = NULL;
    m2.invalidated_at = 77;
    m2.superseded_by = "b";
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_replace(s, rowid, &m2, "the second text", 2), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    store_row r;
    CHECK_INT(store_find(s, "n", "a", 1, &r), REMEM_OK);
    CHECK_INT(r.rowid, rowid);
    CHECK_STR(r.m.text, "the second text");
    CHECK_STR(r.m.kind, "decision");
    CHECK_STR(r.m.tier, "long");
    CHECK(r.m.importance == 0.9);
    CHECK_INT(r.m.invalidated_at, 77);
    CHECK_STR(r.m.superseded_by, "b");
    CHECK(r.m.links == NULL);
    CHECK(r.vec && memcmp(r.vec, V2, sizeof V2) == 0);
    store_row_clear(&r);
    CHECK(version_of(s, "n") > v0);
    int64_t rows = 0;
    CHECK_INT(store_ns_info(s, "n", NULL, 0, NULL, NULL, &rows), REMEM_OK);
    CHECK_INT(rows, 1);
    /* The duplicate key now answers to the new text only. */
    int64_t found = -1;
    CHECK_INT(store_find_dup(s, "n", 2, "the second text", &found), REMEM_OK);
    CHECK_INT(found, rowid);
    done(s);
}

static void test_bump_duplicate(void) {
    store *s = open_fresh();
    if (!s) return;
    remem_memory m = memory("n", "a", "text", NULL);
    int64_t rowid = put(s, &m);
    int64_t v0 = version_of(s, "n");
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_bump_duplicate(s, rowid, 8000), REMEM_OK);
    CHECK_INT(store_bump_duplicate(s, rowid, 9000), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    store_row r;
    CHECK_INT(store_get_rowid(s, rowid, 0, &r), REMEM_OK);
    CHECK_INT(r.m.duplicate_count, 2);
    CHECK_INT(r.m.updated_at, 9000);
    CHECK_INT(r.m.created_at, 1000);
    store_row_clear(&r);
    CHECK(version_of(s, "n") > v0);
    done(s);
}

/* The batch call (a backend may have none: SQLite): duplicate lookups
 * answered at once (lowest rowid; collision, other namespace, 64-bit
 * hash), inserts and duplicate counts held yet seen by every later call,
 * the namespace rows the transaction reports equal to what the database
 * holds after the commit, and nothing left after a rollback. */
static void test_batch(void) {
    store *s = open_fresh();
    if (!s) return;
    remem_memory a = memory("n", "a", "Hello, World", V1), b = memory("n", "b", "big", NULL);
    CHECK_INT(store_begin(s), REMEM_OK);
    int64_t r1 = 0, r2 = 0, r3 = 0, r4 = 0;
    CHECK_INT(store_insert(s, &a, "hello world", 77, &r1), REMEM_OK);
    CHECK_INT(store_insert(s, &b, "big", UINT64_MAX - 5, &r2), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    const char *names[] = {"fresh", "n"};
    const char *kns[] = {"n", "n", "fresh", "n", NULL};
    const char *norms[] = {"hello world", "hello there", "hello world", "big", NULL};
    uint64_t hash[] = {77, 77, 77, UINT64_MAX - 5, 0};
    int64_t dup[5] = {-1, -1, -1, -1, -1};
    store_batch bt = {.ns = names, .n_ns = 2, .n_keys = 5, .key_ns = kns, .norm = norms,
                      .hash = hash, .dup = dup, .n_new = 3};
    CHECK_INT(store_begin(s), REMEM_OK);
    int rc = store_batch_begin(s, &bt);
    if (rc == REMEM_EUNSUPPORTED) {
        CHECK(!store_has_batch(s));
        store_rollback(s);
        done(s);
        return;
    }
    CHECK_INT(rc, REMEM_OK);
    CHECK_INT(dup[0], r1);
    CHECK_INT(dup[1], 0);
    CHECK_INT(dup[2], 0);
    CHECK_INT(dup[3], r2);
    CHECK_INT(dup[4], 0);
    remem_memory c = memory("n", "c", "new one", V2), d = memory("fresh", "d", "other", NULL);
    CHECK_INT(store_ns_set_model(s, "fresh", "test-model", DIM), REMEM_OK);
    CHECK_INT(store_insert(s, &c, "new one", 5, &r3), REMEM_OK);
    CHECK_INT(store_insert(s, &d, "other", 6, &r4), REMEM_OK);
    CHECK(r3 > r2 && r4 > r3);
    store_row r;
    CHECK_INT(store_get_rowid(s, r3, 1, &r), REMEM_OK); /* held, as it will be stored */
    check_same_memory(&r.m, &c);
    store_row_clear(&r);
    CHECK_INT(store_bump_duplicate(s, r3, 8000), REMEM_OK);
    CHECK_INT(store_bump_duplicate(s, r1, 8500), REMEM_OK);
    CHECK_INT(store_bump_duplicate(s, r1, 8600), REMEM_OK);
    CHECK_INT(store_get_rowid(s, r1, 0, &r), REMEM_OK); /* read by the batch, counted */
    CHECK_INT(r.m.duplicate_count, 2);
    CHECK_INT(r.m.updated_at, 8600);
    store_row_clear(&r);
    int64_t v_n = -1, rows_n = -1, v_f = -1, rows_f = -1;
    char model[64];
    CHECK_INT(store_ns_info(s, "n", NULL, 0, NULL, &v_n, &rows_n), REMEM_OK);
    CHECK_INT(store_ns_info(s, "fresh", model, sizeof model, NULL, &v_f, &rows_f), REMEM_OK);
    CHECK_STR(model, "test-model");
    CHECK_INT(store_find(s, "n", "c", 0, &r), REMEM_OK); /* sends what is held */
    CHECK_INT(r.m.duplicate_count, 1);
    CHECK_INT(r.rowid, r3);
    store_row_clear(&r);
    CHECK_INT(store_commit(s), REMEM_OK);
    /* What the transaction said of the namespaces is what is stored. */
    int64_t v = -1, rows = -1;
    CHECK_INT(store_ns_info(s, "n", NULL, 0, NULL, &v, &rows), REMEM_OK);
    CHECK_INT(v, v_n);
    CHECK_INT(rows, 3);
    CHECK_INT(rows_n, 3);
    CHECK_INT(store_ns_info(s, "fresh", model, sizeof model, NULL, &v, &rows), REMEM_OK);
    CHECK_INT(v, v_f);
    CHECK_INT(rows, 1);
    CHECK_INT(rows_f, 1);
    CHECK_INT(store_get_rowid(s, r1, 0, &r), REMEM_OK);
    CHECK_INT(r.m.duplicate_count, 2);
    store_row_clear(&r);
    /* A rolled-back batch leaves nothing. */
    const char *one[] = {"n"};
    store_batch b2 = {.ns = one, .n_ns = 1, .n_new = 1};
    remem_memory e = memory("n", "e", "gone", NULL);
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_batch_begin(s, &b2), REMEM_OK);
    CHECK_INT(store_insert(s, &e, "gone", 9, &r4), REMEM_OK);
    CHECK_INT(store_bump_duplicate(s, r2, 9000), REMEM_OK);
    store_rollback(s);
    CHECK_INT(store_find(s, "n", "e", 0, &r), REMEM_ENOTFOUND);
    CHECK_INT(store_get_rowid(s, r2, 0, &r), REMEM_OK);
    CHECK_INT(r.m.duplicate_count, 0);
    store_row_clear(&r);
    CHECK_INT(version_of(s, "n"), v_n);
    done(s);
}

static void test_delete(void) {
    store *s = open_fresh();
    if (!s) return;
    remem_memory m = memory("n", "a", "text one", NULL);
    int64_t a = put(s, &m);
    m = memory("n", "b", "text two", NULL);
    int64_t b = put(s, &m);
    int64_t v0 = version_of(s, "n");
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_delete(s, a), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    store_row r;
    CHECK_INT(store_find(s, "n", "a", 0, &r), REMEM_ENOTFOUND);
    CHECK_INT(store_get_rowid(s, a, 0, &r), REMEM_ENOTFOUND);
    CHECK_INT(store_get_rowid(s, b, 0, &r), REMEM_OK);
    store_row_clear(&r);
    int64_t rows = 0;
    CHECK_INT(store_ns_info(s, "n", NULL, 0, NULL, NULL, &rows), REMEM_OK);
    CHECK_INT(rows, 1);
    CHECK(version_of(s, "n") > v0);
    /* The same key can be used again. */
    m = memory("n", "a", "text one again", NULL);
    CHECK(put(s, &m) > 0);
    done(s);
}

typedef struct touched_rows {
    int64_t rowid[4], accessed_at[4], access_count[4];
    size_t n;
} touched_rows;

static int on_touched(void *ctx, int64_t rowid, int64_t accessed_at, int64_t access_count) {
    touched_rows *t = ctx;
    if (t->n < 4) {
        t->rowid[t->n] = rowid;
        t->accessed_at[t->n] = accessed_at;
        t->access_count[t->n] = access_count;
    }
    t->n++;
    return 0;
}

static void test_touch(void) {
    store *s = open_fresh();
    if (!s) return;
    remem_memory m = memory("n", "a", "text one", NULL);
    int64_t ids[2];
    ids[0] = put(s, &m);
    m = memory("n", "b", "text two", NULL);
    ids[1] = put(s, &m);
    int64_t v0 = version_of(s, "n");
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_touch(s, ids, 2, 7777), REMEM_OK);
    CHECK_INT(store_touch(s, ids, 1, 8888), REMEM_OK);
    CHECK_INT(store_touch(s, ids, 0, 9999), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    store_row r;
    CHECK_INT(store_get_rowid(s, ids[0], 0, &r), REMEM_OK);
    CHECK_INT(r.m.accessed_at, 8888);
    CHECK_INT(r.m.access_count, 6);
    store_row_clear(&r);
    CHECK_INT(store_get_rowid(s, ids[1], 0, &r), REMEM_OK);
    CHECK_INT(r.m.accessed_at, 7777);
    CHECK_INT(r.m.access_count, 5);
    store_row_clear(&r);
    /* Reading is not a change: no version bump. */
    CHECK_INT(version_of(s, "n"), v0);
    /* But it is counted (for the engine's snapshots): three touches, the
     * last one of row a. */
    int64_t count = -1;
    int rc = store_touched_since(s, "n", 0, NULL, NULL, &count);
    if (rc != REMEM_EUNSUPPORTED) {
        CHECK_INT(rc, REMEM_OK);
        CHECK_INT(count, 3);
        touched_rows t = {0};
        CHECK_INT(store_touched_since(s, "n", 0, on_touched, &t, &count), REMEM_OK);
        CHECK_INT(t.n, 2);
        t.n = 0;
        CHECK_INT(store_touched_since(s, "n", 2, on_touched, &t, &count), REMEM_OK);
        CHECK_INT(t.n, 1);
        CHECK_INT(t.rowid[0], ids[0]);
        CHECK_INT(t.accessed_at[0], 8888);
        CHECK_INT(t.access_count[0], 6);
        t.n = 0;
        CHECK_INT(store_touched_since(s, "n", 3, on_touched, &t, &count), REMEM_OK);
        CHECK_INT(t.n, 0);
    }
    done(s);
}

static void test_set_vector(void) {
    store *s = open_fresh();
    if (!s) return;
    remem_memory m = memory("n", "a", "text", V1);
    int64_t rowid = put(s, &m);
    int64_t v0 = version_of(s, "n");
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_set_vector(s, rowid, "other-model", V2, DIM), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    store_row r;
    CHECK_INT(store_get_rowid(s, rowid, 1, &r), REMEM_OK);
    CHECK_STR(r.m.model, "other-model");
    CHECK_INT(r.m.dim, DIM);
    CHECK(r.vec && memcmp(r.vec, V2, sizeof V2) == 0);
    CHECK_STR(r.m.text, "text");
    store_row_clear(&r);
    CHECK(version_of(s, "n") > v0);
    done(s);
}

static void test_transactions(void) {
    store *s = open_fresh();
    if (!s) return;
    remem_memory m = memory("n", "a", "kept", NULL);
    put(s, &m);
    int64_t v0 = version_of(s, "n"), h0 = 0, h1 = -1;
    CHECK_INT(store_history_max(s, "n", &h0), REMEM_OK);
    CHECK_INT(store_begin(s), REMEM_OK);
    m = memory("n", "b", "rolled back", NULL);
    int64_t rowid = 0;
    CHECK_INT(store_insert(s, &m, "rolled back", 1, &rowid), REMEM_OK);
    CHECK_INT(store_history_add(s, "n", "b", 1, "add", NULL, NULL, NULL), REMEM_OK);
    CHECK_INT(store_ns_set_model(s, "n2", "m", 3), REMEM_OK);
    /* Inside the transaction the write is visible... */
    store_row r;
    CHECK_INT(store_find(s, "n", "b", 0, &r), REMEM_OK);
    store_row_clear(&r);
    store_rollback(s);
    /* ...and after the rollback nothing of it is left. */
    CHECK_INT(store_find(s, "n", "b", 0, &r), REMEM_ENOTFOUND);
    CHECK_INT(version_of(s, "n"), v0);
    CHECK_INT(store_history_max(s, "n", &h1), REMEM_OK);
    CHECK_INT(h1, h0);
    CHECK_INT(store_ns_info(s, "n2", NULL, 0, NULL, NULL, NULL), REMEM_ENOTFOUND);
    /* A rollback outside a transaction is harmless. */
    store_rollback(s);
    /* begin twice is an error that leaves the first transaction usable. */
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK(store_begin(s) != REMEM_OK);
    CHECK_INT(store_insert(s, &m, "rolled back", 1, &rowid), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    CHECK_INT(store_find(s, "n", "b", 0, &r), REMEM_OK);
    store_row_clear(&r);
    done(s);
}

/* ---- history ---- */

typedef struct hist_log {
    char text[1024];
    int64_t last_seq;
    int seq_ok;
} hist_log;

static int log_since(void *ctx, const char *id, const char *op) {
    hist_log *l = ctx;
    size_t len = strlen(l->text);
    snprintf(l->text + len, sizeof l->text - len, "%s:%s ", id, op);
    return 0;
}

static int log_history(void *ctx, const store_history_row *h) {
    hist_log *l = ctx;
    if (h->seq <= l->last_seq) l->seq_ok = 0;
    l->last_seq = h->seq;
    size_t len = strlen(l->text);
    snprintf(l->text + len, sizeof l->text - len, "%s/%s:%s@%lld by %s [%s|%s] ", h->ns, h->id,
             h->op, (long long)h->at, h->actor ? h->actor : "-", h->before ? h->before : "-",
             h->after ? h->after : "-");
    return 0;
}

static void test_history(void) {
    store *s = open_fresh();
    if (!s) return;
    int64_t seq = -1;
    CHECK_INT(store_history_max(s, "n", &seq), REMEM_OK);
    CHECK_INT(seq, 0);
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_history_add(s, "n", "a", 10, "add", NULL, NULL, "{\"text\":\"t1\",\"k\":1}"),
              REMEM_OK);
    CHECK_INT(store_history_add(s, "n", "b", 11, "add", NULL, NULL, "{\"text\":\"t2\"}"), REMEM_OK);
    CHECK_INT(store_history_add(s, "n", "a", 12, "update", "alice", "{\"text\":\"t1\",\"k\":1}",
                                "{\"text\":\"t3\",\"k\":2}"),
              REMEM_OK);
    CHECK_INT(store_history_add(s, "m", "a", 13, "add", NULL, NULL, "{}"), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    int64_t max_n = 0, max_m = 0;
    CHECK_INT(store_history_max(s, "n", &max_n), REMEM_OK);
    CHECK_INT(store_history_max(s, "m", &max_m), REMEM_OK);
    CHECK(max_m > max_n && max_n > 0);

    /* since: everything, then nothing new, then from the middle. */
    hist_log l = {"", 0, 1};
    int64_t got = -1;
    CHECK_INT(store_history_since(s, "n", 0, log_since, &l, &got), REMEM_OK);
    CHECK_STR(l.text, "a:add b:add a:update ");
    CHECK_INT(got, max_n);
    l.text[0] = '\0';
    CHECK_INT(store_history_since(s, "n", max_n, log_since, &l, &got), REMEM_OK);
    CHECK_STR(l.text, "");
    CHECK_INT(got, max_n);

    /* The rows of one key, oldest first, with every field. */
    l = (hist_log){"", 0, 1};
    CHECK_INT(store_history(s, "n", "a", log_history, &l), REMEM_OK);
    CHECK_STR(l.text,
              "n/a:add@10 by - [-|{\"text\":\"t1\",\"k\":1}] "
              "n/a:update@12 by alice [{\"text\":\"t1\",\"k\":1}|{\"text\":\"t3\",\"k\":2}] ");
    CHECK(l.seq_ok);
    /* Any namespace: the store returns them all (the engine decides). */
    l = (hist_log){"", 0, 1};
    CHECK_INT(store_history(s, NULL, "a", log_history, &l), REMEM_OK);
    CHECK_HAS(l.text, "n/a:add");
    CHECK_HAS(l.text, "m/a:add");
    CHECK(l.seq_ok);
    l = (hist_log){"", 0, 1};
    CHECK_INT(store_history(s, "n", "never", log_history, &l), REMEM_OK);
    CHECK_STR(l.text, "");

    /* A purge's scrub: the key's rows keep what happened and when. */
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_history_scrub(s, "n", "a"), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    l = (hist_log){"", 0, 1};
    CHECK_INT(store_history(s, "n", "a", log_history, &l), REMEM_OK);
    CHECK_STR(l.text, "n/a:add@10 by - [-|-] n/a:update@12 by - [-|-] ");
    /* Other keys keep theirs. */
    l = (hist_log){"", 0, 1};
    CHECK_INT(store_history(s, "n", "b", log_history, &l), REMEM_OK);
    CHECK_HAS(l.text, "t2");
    done(s);
}

/* ---- scans ---- */

typedef struct scan_log {
    char text[2048];
    int64_t last_rowid;
    int order_ok, vec_ok, stop_after;
    int calls;
} scan_log;

static int log_row(void *ctx, const store_row *r) {
    scan_log *l = ctx;
    if (r->rowid <= l->last_rowid) l->order_ok = 0;
    l->last_rowid = r->rowid;
    if (r->m.vector) {
        float v[DIM];
        memcpy(v, r->m.vector, sizeof v); /* may be unaligned */
        if (memcmp(v, strcmp(r->m.id, "2") == 0 ? V2 : V1, sizeof v) != 0) l->vec_ok = 0;
    }
    size_t len = strlen(l->text);
    snprintf(l->text + len, sizeof l->text - len, "%s/%s:%s%s ", r->m.ns, r->m.id, r->m.text,
             r->m.vector ? "+v" : "");
    l->calls++;
    return l->stop_after && l->calls >= l->stop_after ? 7 : 0;
}

static void test_scan(void) {
    store *s = open_fresh();
    if (!s) return;
    remem_memory m = memory("b", "1", "first", V1);
    put(s, &m);
    m = memory("a", "2", "second", V2);
    put(s, &m);
    m = memory("b", "3", "third", V1);
    put(s, &m);
    scan_log l = {"", 0, 1, 1, 0, 0};
    CHECK_INT(store_scan(s, NULL, 0, log_row, &l), REMEM_OK);
    CHECK_STR(l.text, "b/1:first a/2:second b/3:third ");
    CHECK(l.order_ok);
    l = (scan_log){"", 0, 1, 1, 0, 0};
    CHECK_INT(store_scan(s, "b", 1, log_row, &l), REMEM_OK);
    CHECK_STR(l.text, "b/1:first+v b/3:third+v ");
    CHECK(l.order_ok && l.vec_ok);
    l = (scan_log){"", 0, 1, 1, 0, 0};
    CHECK_INT(store_scan(s, "a", 1, log_row, &l), REMEM_OK);
    CHECK_STR(l.text, "a/2:second+v ");
    CHECK(l.vec_ok);
    l = (scan_log){"", 0, 1, 1, 1, 0};
    CHECK_INT(store_scan(s, NULL, 0, log_row, &l), 7);
    CHECK_INT(l.calls, 1);
    l = (scan_log){"", 0, 1, 1, 0, 0};
    CHECK_INT(store_scan(s, "none", 0, log_row, &l), REMEM_OK);
    CHECK_INT(l.calls, 0);
    done(s);
}

/* ---- a load: namespace row, history seq and rows in one call ---- */

typedef struct load_log {
    int starts, dim;
    char model[64];
    int64_t version, rows, hist_seq;
    scan_log rows_seen;
    int64_t accessed_at[4], access_count[4];
} load_log;

static int on_load_start(void *ctx, const store_ns *n, int64_t hist_seq) {
    load_log *l = ctx;
    l->starts++;
    snprintf(l->model, sizeof l->model, "%s", n->model);
    l->dim = n->dim;
    l->version = n->version;
    l->rows = n->rows;
    l->hist_seq = hist_seq;
    return 0;
}

static int on_load_row(void *ctx, const store_row *r) {
    load_log *l = ctx;
    int at = l->rows_seen.calls;
    if (at < 4) {
        l->accessed_at[at] = r->m.accessed_at;
        l->access_count[at] = r->m.access_count;
    }
    return log_row(&l->rows_seen, r);
}

static load_log load_of(store *s, const char *ns, int want) {
    load_log l = {.rows_seen = {"", 0, 1, 1, 0, 0}};
    CHECK_INT(store_load(s, ns, on_load_start, on_load_row, &l), want);
    return l;
}

/* Where a backend has the call: it gives what ns_info, history_max and a
 * scan with vectors give, with this handle's unwritten touches applied. */
static void test_load(void) {
    store *s = open_fresh();
    if (!s) return;
    if (!store_has_load(s)) {
        CHECK_INT(store_load(s, "b", on_load_start, on_load_row, NULL), REMEM_EUNSUPPORTED);
        done(s);
        return;
    }
    load_log l = load_of(s, "b", REMEM_ENOTFOUND);
    CHECK_INT(l.starts, 0);
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_ns_set_model(s, "b", "test-model", DIM), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    remem_memory m = memory("b", "1", "first", V1);
    int64_t b1 = put(s, &m);
    m = memory("a", "2", "second", V2);
    put(s, &m);
    m = memory("b", "3", "third", V1);
    put(s, &m);
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_history_add(s, "b", "1", 5, "add", NULL, NULL, NULL), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    int64_t seq = -1;
    CHECK_INT(store_history_max(s, "b", &seq), REMEM_OK);
    /* A touch the handle holds (the store may write it later). */
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_touch(s, &b1, 1, 7777), REMEM_OK);
    CHECK_INT(store_touch(s, &b1, 1, 6666), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    l = load_of(s, "b", REMEM_OK);
    CHECK_INT(l.starts, 1);
    CHECK_STR(l.model, "test-model");
    CHECK_INT(l.dim, DIM);
    CHECK_INT(l.version, version_of(s, "b"));
    CHECK_INT(l.rows, 2);
    CHECK_INT(l.hist_seq, seq);
    CHECK_STR(l.rows_seen.text, "b/1:first+v b/3:third+v ");
    CHECK(l.rows_seen.order_ok && l.rows_seen.vec_ok);
    CHECK_INT(l.accessed_at[0], 6666); /* the latest touch, as a flush writes it */
    CHECK_INT(l.access_count[0], 6);
    CHECK_INT(l.accessed_at[1], 3000);
    CHECK_INT(l.access_count[1], 4);
    /* The same as a scan reads once the touches are written. */
    scan_log sl = {"", 0, 1, 1, 0, 0};
    CHECK_INT(store_scan(s, "b", 1, log_row, &sl), REMEM_OK);
    CHECK_STR(sl.text, l.rows_seen.text);
    store_row r;
    CHECK_INT(store_get_rowid(s, b1, 0, &r), REMEM_OK);
    CHECK_INT(r.m.accessed_at, 6666);
    CHECK_INT(r.m.access_count, 6);
    store_row_clear(&r);
    /* Inside a write transaction it sees the transaction's own rows. */
    CHECK_INT(store_begin(s), REMEM_OK);
    m = memory("b", "4", "fourth", V1);
    int64_t b4 = 0;
    CHECK_INT(store_insert(s, &m, m.text, 4, &b4), REMEM_OK);
    l = load_of(s, "b", REMEM_OK);
    CHECK_INT(l.rows, 3);
    CHECK_STR(l.rows_seen.text, "b/1:first+v b/3:third+v b/4:fourth+v ");
    store_rollback(s);
    /* A namespace row without rows: the start, and no row. */
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_clear(s, "a", NULL), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    l = load_of(s, "a", REMEM_OK);
    CHECK_INT(l.starts, 1);
    CHECK_INT(l.rows, 0);
    CHECK_INT(l.rows_seen.calls, 0);
    /* On a new connection (the server ended ours: a restart, a failover)
     * the load runs again there, its statement prepared anew. */
    if (be->fresh == pg_fresh) {
        char sql[256];
        snprintf(sql, sizeof sql,
                 "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '%s'"
                 " AND pid <> pg_backend_pid()",
                 strrchr(uri, '/') + 1);
        pg_query(sql);
        usleep(200000);
        l = load_of(s, "b", REMEM_OK);
        CHECK_STR(l.rows_seen.text, "b/1:first+v b/3:third+v ");
        l = load_of(s, "b", REMEM_OK);
        CHECK_STR(l.rows_seen.text, "b/1:first+v b/3:third+v ");
    }
    /* A callback's stop is returned. */
    l = (load_log){.rows_seen = {"", 0, 1, 1, 1, 0}};
    CHECK_INT(store_load(s, "b", on_load_start, on_load_row, &l), 7);
    CHECK_INT(l.rows_seen.calls, 1);
    done(s);
}

/* ---- statistics and clear ---- */

typedef struct count_log {
    char text[3][256];
} count_log;

static int log_count(void *ctx, enum store_group g, const char *key, int64_t n) {
    count_log *l = ctx;
    size_t len = strlen(l->text[g]);
    snprintf(l->text[g] + len, sizeof l->text[g] - len, "%s=%lld ", key, (long long)n);
    return 0;
}

static void test_stats(void) {
    store *s = open_fresh();
    if (!s) return;
    store_summary sum;
    count_log c = {{"", "", ""}};
    CHECK_INT(store_stats(s, NULL, 5000, &sum, log_count, &c), REMEM_OK);
    CHECK_INT(sum.memories, 0);
    CHECK_STR(c.text[STORE_BY_KIND], "");
    remem_memory m = memory("a", "1", "one", V1);
    m.importance = 0.2;
    m.created_at = 100;
    m.invalidated_at = 7;
    put(s, &m);
    m = memory("a", "2", "two", NULL);
    m.kind = "decision";
    m.importance = 0.4;
    m.created_at = 300;
    m.expires_at = 4000; /* expired at 5000 */
    m.duplicate_count = 2;
    put(s, &m);
    m = memory("b", "3", "three", V2);
    m.tier = "long";
    m.importance = 0.9;
    m.created_at = 200;
    m.expires_at = 6000; /* not yet */
    put(s, &m);
    CHECK_INT(store_stats(s, NULL, 5000, &sum, log_count, &c), REMEM_OK);
    CHECK_INT(sum.memories, 3);
    CHECK_INT(sum.invalidated, 1);
    CHECK_INT(sum.expired, 1);
    CHECK_INT(sum.duplicates_folded, 2);
    CHECK_NEAR(sum.mean_importance, 0.5, 1e-12);
    CHECK_INT(sum.oldest, 100);
    CHECK_INT(sum.newest, 300);
    CHECK(sum.file_bytes > 0);
    CHECK_STR(c.text[STORE_BY_KIND], "decision=1 observation=2 ");
    CHECK_STR(c.text[STORE_BY_TIER], "long=1 short=2 ");
    CHECK_STR(c.text[STORE_BY_MODEL], "=1 test-model=2 ");
    c = (count_log){{"", "", ""}};
    CHECK_INT(store_stats(s, "a", 5000, &sum, log_count, &c), REMEM_OK);
    CHECK_INT(sum.memories, 2);
    CHECK_INT(sum.oldest, 100);
    CHECK_INT(sum.newest, 300);
    CHECK_STR(c.text[STORE_BY_TIER], "short=2 ");
    /* The callback may be left out. */
    CHECK_INT(store_stats(s, "b", 5000, &sum, NULL, NULL), REMEM_OK);
    CHECK_INT(sum.memories, 1);
    CHECK_INT(sum.expired, 0);
    done(s);
}

static void test_clear(void) {
    store *s = open_fresh();
    if (!s) return;
    for (int i = 0; i < 3; i++) {
        char id[16];
        snprintf(id, sizeof id, "%d", i);
        remem_memory m = memory("a", id, "clear me", V1);
        put(s, &m);
    }
    remem_memory m = memory("b", "x", "keep me", V1);
    put(s, &m);
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_ns_set_model(s, "a", "test-model", DIM), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    int64_t v0 = version_of(s, "a"), deleted = -1;
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_clear(s, "a", &deleted), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    CHECK_INT(deleted, 3);
    char model[64] = "x";
    int64_t rows = -1;
    int r = store_ns_info(s, "a", model, sizeof model, NULL, NULL, &rows);
    CHECK(r == REMEM_OK || r == REMEM_ENOTFOUND);
    CHECK_INT(rows, 0);
    CHECK_STR(model, ""); /* the model lock goes with the rows */
    if (r == REMEM_OK) CHECK(version_of(s, "a") > v0);
    scan_log l = {"", 0, 1, 1, 0, 0};
    CHECK_INT(store_scan(s, NULL, 0, log_row, &l), REMEM_OK);
    CHECK_STR(l.text, "b/x:keep me ");
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_clear(s, "never-written", NULL), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    done(s);
}

/* ---- two connections ---- */

static void test_changed_by_another(void) {
    if (!be->shared) {
        fprintf(stderr, "  (%s: one connection only; skipped)\n", be->name);
        return;
    }
    store *a = open_fresh();
    if (!a) return;
    store *b = NULL;
    char err[512];
    store_config cfg = {0};
    CHECK_INT(store_open(uri, &cfg, &b, err, sizeof err), REMEM_OK);
    if (!b) {
        done(a);
        return;
    }
    store_changed(a);
    CHECK_INT(store_changed(a), 0);
    /* Our own commit is not another's. */
    remem_memory m = memory("n", "1", "from a", NULL);
    put(a, &m);
    CHECK_INT(store_changed(a), 0);
    m = memory("n", "2", "from b", NULL);
    put(b, &m);
    CHECK_INT(store_changed(a), 1);
    CHECK_INT(store_changed(a), 0);
    /* And a sees b's row, and its version. */
    store_row r;
    CHECK_INT(store_find(a, "n", "2", 0, &r), REMEM_OK);
    store_row_clear(&r);
    int64_t va = version_of(a, "n"), vb = version_of(b, "n");
    CHECK_INT(va, vb);
    /* A read-only handle reads and refuses writes. */
    store *ro = NULL;
    store_config rcfg = {.read_only = 1};
    CHECK_INT(store_open(uri, &rcfg, &ro, err, sizeof err), REMEM_OK);
    if (ro) {
        CHECK_INT(store_find(ro, "n", "1", 0, &r), REMEM_OK);
        store_row_clear(&r);
        int rc = store_begin(ro);
        if (rc == REMEM_OK) {
            int64_t rowid;
            m = memory("n", "3", "from ro", NULL);
            CHECK(store_insert(ro, &m, "x", 1, &rowid) != REMEM_OK);
            store_rollback(ro);
        }
        store_close(ro);
    }
    store_close(b);
    done(a);
}

/* ---- SQLite: migrating an older file ---- */

/* Schema 2 as remem wrote it before the lexical index moved into the
 * engine: the FTS5 table and the triggers that fed it. A fixture of the
 * old format, so it is spelled out here, not taken from sqlite.c. */
static const char V2_SCHEMA[] =
    "CREATE TABLE memories(rowid INTEGER PRIMARY KEY,"
    " ns TEXT NOT NULL, id TEXT NOT NULL, kind TEXT NOT NULL, tier TEXT NOT NULL,"
    " text TEXT NOT NULL, norm TEXT NOT NULL, norm_hash INTEGER NOT NULL,"
    " importance REAL NOT NULL, created_at INTEGER NOT NULL,"
    " updated_at INTEGER NOT NULL, accessed_at INTEGER NOT NULL,"
    " access_count INTEGER NOT NULL DEFAULT 0, expires_at INTEGER NOT NULL DEFAULT 0,"
    " invalidated_at INTEGER NOT NULL DEFAULT 0, superseded_by TEXT,"
    " duplicate_count INTEGER NOT NULL DEFAULT 0, metadata TEXT, links TEXT,"
    " model TEXT, embedding BLOB, UNIQUE(ns, id));"
    "CREATE INDEX memories_by_id ON memories(id);"
    "CREATE INDEX memories_by_norm ON memories(ns, norm_hash);"
    "CREATE VIRTUAL TABLE memories_fts USING fts5(text, content='memories',"
    " content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2');"
    "CREATE TABLE namespaces(ns TEXT PRIMARY KEY, model TEXT, dim INTEGER,"
    " version INTEGER NOT NULL DEFAULT 0, rows INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE history(seq INTEGER PRIMARY KEY, ns TEXT NOT NULL,"
    " id TEXT NOT NULL, at INTEGER NOT NULL, op TEXT NOT NULL, actor TEXT,"
    " before TEXT, after TEXT);"
    "CREATE INDEX history_by_key ON history(ns, id, seq);"
    "CREATE INDEX history_by_id ON history(id);"
    "CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN"
    " INSERT INTO memories_fts(rowid, text) VALUES(new.rowid, new.text);"
    " INSERT INTO namespaces(ns) VALUES(new.ns) ON CONFLICT(ns) DO NOTHING;"
    " UPDATE namespaces SET rows=rows+1, version=version+1 WHERE ns=new.ns;"
    " END;"
    "CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN"
    " INSERT INTO memories_fts(memories_fts, rowid, text)"
    "  VALUES('delete', old.rowid, old.text);"
    " UPDATE namespaces SET rows=rows-1, version=version+1 WHERE ns=old.ns;"
    " END;"
    "CREATE TRIGGER memories_au_text AFTER UPDATE OF text ON memories BEGIN"
    " INSERT INTO memories_fts(memories_fts, rowid, text)"
    "  VALUES('delete', old.rowid, old.text);"
    " INSERT INTO memories_fts(rowid, text) VALUES(new.rowid, new.text);"
    " END;"
    "CREATE TRIGGER memories_au AFTER UPDATE OF kind, tier, text, importance,"
    " created_at, expires_at, invalidated_at, superseded_by, duplicate_count,"
    " metadata, links, model, embedding ON memories BEGIN"
    " UPDATE namespaces SET version=version+1 WHERE ns=new.ns;"
    " END;"
    "CREATE INDEX history_by_ns_seq ON history(ns, seq);"
    "CREATE TABLE remem_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT INTO remem_meta VALUES('schema_version','2');"
    "INSERT INTO memories(ns, id, kind, tier, text, norm, norm_hash, importance,"
    " created_at, updated_at, accessed_at)"
    " VALUES('n', 'a', 'observation', 'short', 'the garden needs water', 'x', 1, 0.5,"
    " 1, 1, 1),"
    " ('n', 'b', 'observation', 'short', 'the quarterly report', 'y', 2, 0.5, 2, 2, 2);";

/* One integer from sql on the file (-1 on any error). */
static long long sql_int(const char *path, const char *sql) {
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    long long v = -1;
    if (sqlite3_open(path, &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void test_migrate_from_v2(void) {
    char path[512];
    snprintf(path, sizeof path, "/tmp/remem-test-store-v2-%d.db", (int)getpid());
    file_cleanup(path);
    sqlite3 *db = NULL;
    char *msg = NULL;
    CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
    int rc = sqlite3_exec(db, V2_SCHEMA, NULL, NULL, &msg);
    if (rc) fprintf(stderr, "  fixture: %s\n", msg ? msg : "?");
    sqlite3_free(msg);
    sqlite3_close(db);
    CHECK_INT(rc, SQLITE_OK);
    CHECK_INT(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE name='memories_fts'"), 1);

    store_config cfg = {0};
    store *s = NULL;
    char err[512] = "";
    rc = store_open(path, &cfg, &s, err, sizeof err);
    if (rc) fprintf(stderr, "  opening the v2 file: %s\n", err);
    CHECK_INT(rc, REMEM_OK);
    if (!s) {
        file_cleanup(path);
        return;
    }
    /* The rows are all there; the counts the old triggers kept hold. */
    int64_t rows = -1, v0 = -1;
    CHECK_INT(store_ns_info(s, "n", NULL, 0, NULL, &v0, &rows), REMEM_OK);
    CHECK_INT(rows, 2);
    store_row r;
    CHECK_INT(store_find(s, "n", "a", 0, &r), REMEM_OK);
    CHECK_STR(r.m.text, "the garden needs water");
    store_row_clear(&r);
    /* The new triggers still count and version: an insert, then a delete. */
    remem_memory m = memory("n", "c", "a third memory", NULL);
    int64_t third = put(s, &m);
    CHECK_INT(store_ns_info(s, "n", NULL, 0, NULL, NULL, &rows), REMEM_OK);
    CHECK_INT(rows, 3);
    CHECK(version_of(s, "n") > v0);
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_delete(s, third), REMEM_OK);
    CHECK_INT(store_commit(s), REMEM_OK);
    CHECK_INT(store_ns_info(s, "n", NULL, 0, NULL, NULL, &rows), REMEM_OK);
    CHECK_INT(rows, 2);
    /* An update of the text goes through (no FTS5 trigger left to feed). */
    m = memory("n", "b", "the yearly report", NULL);
    CHECK_INT(store_begin(s), REMEM_OK);
    CHECK_INT(store_find(s, "n", "b", 0, &r), REMEM_OK);
    CHECK_INT(store_replace(s, r.rowid, &m, "the yearly report", 7), REMEM_OK);
    store_row_clear(&r);
    CHECK_INT(store_commit(s), REMEM_OK);
    CHECK_INT(store_scrub_deleted(s), REMEM_OK);
    store_close(s);
    CHECK_INT(sql_int(path, "SELECT value FROM remem_meta WHERE key='schema_version'"), 4);
    CHECK_INT(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'memories_fts%'"),
              0);
    /* Schema 4: touches counted per namespace, each row's last one kept. */
    CHECK_INT(sql_int(path, "SELECT count(*) FROM pragma_table_info('memories')"
                            " WHERE name='touch_seq'"),
              1);
    CHECK_INT(sql_int(path, "SELECT count(*) FROM pragma_table_info('namespaces')"
                            " WHERE name='touches'"),
              1);
    CHECK_INT(sql_int(path, "SELECT count(*) FROM sqlite_master WHERE type='trigger'"), 3);
    file_cleanup(path);
}

/* ---- SQLite's WAL and its checkpoints ---- */

static int count_problem(void *ctx, const char *problem) {
    fprintf(stderr, "  integrity: %s\n", problem);
    ++*(int *)ctx;
    return 0;
}

/* Commits of 5 MB of rows: n of them into s, in namespace ns. */
static void big_commits(store *s, const char *ns, int from, int n) {
    /* About 5 MB a commit: 600 rows of 8,000 bytes of text (SQLite keeps
     * no normalised copy of it). */
    enum { ROWS = 600, TEXT = 8000 };
    char *text = malloc(TEXT + 32), id[32];
    for (int t = from; t < from + n; t++) {
        CHECK_INT(store_begin(s), REMEM_OK);
        for (int r = 0; r < ROWS; r++) {
            int k = snprintf(text, TEXT + 32, "row %d of %d ", r, t);
            memset(text + k, 'a' + (r + t) % 26, TEXT - k);
            text[TEXT] = '\0';
            snprintf(id, sizeof id, "%d-%d", t, r);
            remem_memory m = memory(ns, id, text, V1);
            int64_t rowid;
            CHECK_INT(store_insert(s, &m, text, (uint64_t)(t * ROWS + r), &rowid), REMEM_OK);
        }
        CHECK_INT(store_commit(s), REMEM_OK);
    }
    free(text);
}

static long long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* SQLite's checkpoints are not in the commits of a WAL under 32 MB
 * (SQLite's own ran in the commit past every 4 MB): the database file
 * does not grow with them; past 32 MB the handle's thread copies the WAL
 * into the file without a further commit asking. */
static void test_checkpoint_off_commit(void) {
    be = &backends[0];
    store *s = open_fresh();
    if (!s) return;
    big_commits(s, "n", 0, 2); /* 10 MB */
    long long before = file_size(uri);
    fprintf(stderr, "  file after 10 MB of commits: %lld bytes\n", before);
    CHECK(before >= 0 && before < (1LL << 20));
    big_commits(s, "n", 2, 6); /* 40 MB in all: the thread is woken */
    long long after = file_size(uri);
    for (int i = 0; i < 500 && after < (30LL << 20); i++) { /* 5 s at most */
        usleep(10000);
        after = file_size(uri);
    }
    fprintf(stderr, "  file after 40 MB: %lld bytes\n", after);
    CHECK(after >= (30LL << 20));
    done(s);
}

/* SQLite's WAL stays bounded while a handle writes 320 MB in commits of
 * 5 MB (checkpoints by the handle's thread past 32 MB, by the writer
 * itself past 64 MB), every commit is there after a close and a reopen,
 * and the file passes integrity_check. */
static void test_wal_bounded(void) {
    be = &backends[0];
    store *s = open_fresh();
    if (!s) return;
    enum { TXNS = 64 };
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", uri);
    long long biggest = 0;
    for (int t = 0; t < TXNS; t++) {
        big_commits(s, "n", t, 1);
        long long size = file_size(wal);
        if (size > biggest) biggest = size;
    }
    /* 64 MB, and the commit that crossed it (5 MB), and a frame
     * header per page. */
    fprintf(stderr, "  biggest WAL %lld bytes\n", biggest);
    CHECK(biggest > 0);
    CHECK(biggest <= (64LL << 20) + (6LL << 20));
    store_close(s);
    store_config cfg = {0};
    char err[512] = "";
    CHECK_INT(store_open(uri, &cfg, &s, err, sizeof err), REMEM_OK);
    if (s) {
        int64_t rows = 0;
        CHECK_INT(store_ns_info(s, "n", NULL, 0, NULL, NULL, &rows), REMEM_OK);
        CHECK_INT(rows, TXNS * 600);
        int problems = 0;
        CHECK_INT(store_integrity(s, count_problem, &problems), REMEM_OK);
        CHECK_INT(problems, 0);
        store_close(s);
    }
    be->cleanup(uri);
}

/* ---- rows in general ---- */

static void test_row_copy(void) {
    remem_memory m = memory("n", "id", "text", V2);
    store_row src = {.rowid = 5, .m = m}, dst;
    CHECK_INT(store_row_copy(&dst, &src), 0);
    CHECK_INT(dst.rowid, 5);
    check_same_memory(&dst.m, &m);
    CHECK(dst.m.id != m.id);
    CHECK(dst.vec && dst.m.vector == dst.vec && memcmp(dst.vec, V2, sizeof V2) == 0);
    store_row_clear(&dst);
    store_row_clear(NULL);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_open_unknown_scheme);
    RUN(test_row_copy);
    RUN(test_migrate_from_v2);
    RUN(test_wal_bounded);
    RUN(test_checkpoint_off_commit);
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
        be = &backends[i];
        if (be->fresh == pg_fresh && !getenv("REMEM_TEST_PG_URI")) {
            printf("SKIP: postgres: REMEM_TEST_PG_URI is not set (tests/run.sh sets it when "
                   "PostgreSQL 15 is installed)\n");
            continue;
        }
        fprintf(stderr, "-- backend %s\n", be->name);
        RUN(test_open);
        RUN(test_ns_info_and_model);
        RUN(test_namespaces);
        RUN(test_insert_find_get);
        RUN(test_find_dup);
        RUN(test_find_dup_after);
        RUN(test_replace);
        RUN(test_bump_duplicate);
        RUN(test_batch);
        RUN(test_delete);
        RUN(test_touch);
        RUN(test_set_vector);
        RUN(test_transactions);
        RUN(test_history);
        RUN(test_scan);
        RUN(test_load);
        RUN(test_stats);
        RUN(test_clear);
        RUN(test_changed_by_another);
    }
    return TEST_EXIT();
}
