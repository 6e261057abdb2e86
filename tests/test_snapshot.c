/*
 * test_snapshot.c: a namespace adopted from its snapshot (src/engine/
 * cache_snap.c) answers every recall exactly as a namespace loaded by a
 * full scan (REMEM_SNAPSHOTS=0): same ids, order and score bits, for three
 * profiles with and without a filter. Checked on a store of a few thousand
 * random memories (kinds, tiers, metadata, importances, expiries, some
 * invalidated or archived) right after the snapshot was written, after
 * another handle's adds, updates, invalidations, purges and reads (the
 * catch-up path), after more changes than catching up allows, after the
 * history since the snapshot was deleted, after a reindex (the scan path),
 * and with a snapshot that is truncated, has a flipped byte, comes from
 * another store, or is newer than the store. Each case also checks where
 * the cache came from (remem_stats: "source"), so that a snapshot never
 * used or never refused fails the test.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "remem.h"
#include "test.h"

#define NS     "t:snap"
#define N_MEMS 3000
#define NOW    1800000000000LL

static char path[256], other[256], snap_file[512];

static const char *const words[] = {
    "garden",   "tomato",  "deploy",   "server",  "kafka",    "invoice",  "meeting", "coffee",
    "python",   "release", "customer", "weather", "holiday",  "budget",   "report",  "travel",
    "database", "index",   "memory",   "agent",   "planning", "bug",      "fix",     "review",
    "music",    "movie",   "fantasy",  "novel",   "kitchen",  "recipe",   "running", "morning",
    "evening",  "family",  "doctor",   "school",  "project",  "deadline", "team",    "lunch"};
#define N_WORDS (sizeof words / sizeof words[0])

static uint64_t rng = 88172645463325252ULL;
static unsigned next_rand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

static remem *open_at(const char *p) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    CHECK_INT(remem_open(p, &o, &db), REMEM_OK);
    return db;
}

static void random_text(char *out, size_t cap, int i) {
    size_t len = (size_t)snprintf(out, cap, "note %d:", i);
    int n = 4 + (int)(next_rand() % 12);
    for (int w = 0; w < n && len + 16 < cap; w++)
        len += (size_t)snprintf(out + len, cap - len, " %s", words[next_rand() % N_WORDS]);
}

/* Memory i of a store, with its random fields. */
static void add_random(remem *db, int i) {
    static const char *const kinds[] = {"observation", "decision", "fact", "preference"};
    static const char *const tiers[] = {"short", "long", "static"};
    char id[32], text[256], meta[96];
    snprintf(id, sizeof id, "m%d", i);
    random_text(text, sizeof text, i);
    snprintf(meta, sizeof meta, "{\"topic\":\"%s\",\"n\":%d}", words[next_rand() % N_WORDS], i);
    remem_memory m;
    remem_memory_init(&m);
    m.ns = NS;
    m.id = id;
    m.text = text;
    m.kind = kinds[next_rand() % 4];
    m.tier = tiers[next_rand() % 3];
    m.importance = (double)(next_rand() % 1000) / 1000.0;
    m.metadata = meta;
    m.created_at = NOW - (int64_t)(next_rand() % (90 * 86400)) * 1000;
    if (i % 37 == 0) m.expires_at = NOW - 1000; /* expired by NOW */
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
}

static void fill(const char *p, uint64_t seed) {
    rng = seed;
    remem *db = open_at(p);
    for (int i = 0; i < N_MEMS; i++) add_random(db, i);
    char id[32], by[32];
    for (int i = 5; i < N_MEMS; i += 29) {
        snprintf(id, sizeof id, "m%d", i);
        snprintf(by, sizeof by, "m%d", i - 1);
        CHECK_INT(remem_invalidate(db, NS, id, by, "replaced"), REMEM_OK);
    }
    for (int i = 11; i < N_MEMS; i += 53) {
        snprintf(id, sizeof id, "m%d", i);
        CHECK_INT(remem_forget(db, NS, id, 0), REMEM_OK); /* archived */
    }
    remem_close(db);
}

/* Every answer of a handle, as one text: ids and score bits. */
static char *answers(remem *db) {
    static const char *const queries[] = {"garden tomato watering", "deploy the kafka server",
                                          "fantasy movie and novel", "budget report deadline",
                                          "coffee"};
    static const char *const profiles[] = {"default", "stream", "generative-agents"};
    static const char *const filters[] = {NULL, "{\"kind\":\"decision\"}",
                                          "{\"tier\":{\"$in\":[\"long\",\"static\"]}}"};
    size_t cap = 1 << 20, len = 0;
    char *out = malloc(cap);
    out[0] = '\0';
    for (size_t qi = 0; qi < sizeof queries / sizeof *queries; qi++)
        for (size_t pi = 0; pi < 3; pi++)
            for (size_t fi = 0; fi < 3; fi++) {
                remem_query q;
                remem_query_init(&q);
                const char *ns[] = {NS};
                q.namespaces = ns;
                q.n_namespaces = 1;
                q.text = queries[qi];
                q.profile = profiles[pi];
                q.filter = filters[fi];
                q.k = 15;
                q.now = NOW;
                q.no_touch = 1;
                remem_result *r = NULL;
                CHECK_INT(remem_recall(db, &q, &r), REMEM_OK);
                len += (size_t)snprintf(out + len, cap - len, "[%s|%s|%s]", queries[qi],
                                        profiles[pi], filters[fi] ? filters[fi] : "-");
                for (size_t i = 0; r && i < r->n && len + 64 < cap; i++)
                    len += (size_t)snprintf(out + len, cap - len, " %s:%a", r->hits[i].mem.id,
                                            r->hits[i].score);
                len += (size_t)snprintf(out + len, cap - len, "\n");
                remem_result_free(r);
            }
    return out;
}

/* The answers of a handle that loads by a scan (snapshots off; it writes
 * none either). */
static char *full_answers(void) {
    setenv("REMEM_SNAPSHOTS", "0", 1);
    remem *db = open_at(path);
    char *a = answers(db);
    remem_close(db);
    unsetenv("REMEM_SNAPSHOTS");
    return a;
}

/* The answers of a handle with snapshots on, which must have loaded from
 * `source` ("snapshot" or "scan"); it may write a snapshot on closing. */
static char *snap_answers(const char *source) {
    remem *db = open_at(path);
    char *a = answers(db);
    char *st = NULL, want[64];
    CHECK_INT(remem_stats(db, NS, &st), REMEM_OK);
    snprintf(want, sizeof want, "\"source\":\"%s\"", source);
    if (!st || !strstr(st, want)) fprintf(stderr, "  expected %s in %s\n", want, st ? st : "");
    CHECK(st && strstr(st, want));
    free(st);
    remem_close(db);
    return a;
}

static void agree(const char *step, const char *source) {
    char *s = snap_answers(source), *f = full_answers();
    if (strcmp(s, f) != 0) {
        /* The first line that differs, not every answer. */
        size_t i = 0, line = 0;
        while (s[i] && s[i] == f[i]) line = s[i++] == '\n' ? i : line;
        fprintf(stderr, "  after %s: the answers differ\n  snapshot: %.400s\n  scan:     %.400s\n",
                step, s + line, f + line);
    }
    CHECK(strcmp(s, f) == 0);
    free(s);
    free(f);
}

static int exists(const char *p) {
    struct stat st;
    return stat(p, &st) == 0;
}

static void sql(const char *db_path, const char *stmt) {
    sqlite3 *db = NULL;
    CHECK_INT(sqlite3_open(db_path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    char *err = NULL;
    int rc = sqlite3_exec(db, stmt, NULL, NULL, &err);
    if (rc != SQLITE_OK) fprintf(stderr, "  sql: %s\n", err ? err : "?");
    CHECK_INT(rc, SQLITE_OK);
    sqlite3_free(err);
    sqlite3_close(db);
}

static void copy_file(const char *from, const char *to) {
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    CHECK(a && b);
    char buf[1 << 16];
    size_t k;
    while (a && b && (k = fread(buf, 1, sizeof buf, a)) > 0) CHECK_INT(fwrite(buf, 1, k, b), k);
    if (a) fclose(a);
    if (b) fclose(b);
}

/* Load once with snapshots on and close: a snapshot at the current
 * version is there afterwards. */
static void write_snapshot(void) {
    unlink(snap_file); /* else one close behind stays */
    remem *db = open_at(path);
    free(answers(db));
    remem_close(db);
    CHECK(exists(snap_file));
}

static void edit_by_other(int round) {
    remem *b = open_at(path);
    char id[32], text[128];
    for (int i = 0; i < 20; i++) add_random(b, N_MEMS + round * 100 + i);
    remem_patch p;
    for (int i = 0; i < 10; i++) {
        remem_patch_init(&p);
        p.fields = REMEM_SET_TEXT | REMEM_SET_IMPORTANCE;
        snprintf(id, sizeof id, "m%d", 100 + round * 10 + i);
        snprintf(text, sizeof text, "rewritten %d: the fantasy novel about a kafka deploy", i);
        p.text = text;
        p.importance = 0.99;
        CHECK_INT(remem_update(b, NS, id, &p), REMEM_OK);
    }
    for (int i = 0; i < 5; i++) {
        snprintf(id, sizeof id, "m%d", 300 + round * 10 + i);
        CHECK_INT(remem_invalidate(b, NS, id, NULL, "outdated"), REMEM_OK);
        snprintf(id, sizeof id, "m%d", 400 + round * 10 + i);
        CHECK_INT(remem_forget(b, NS, id, 0), REMEM_OK); /* archived */
    }
    /* An exact duplicate folded, and an upsert of an existing id. */
    remem_memory m;
    remem_memory_init(&m);
    m.ns = NS;
    m.text = "rewritten 0: the fantasy novel about a kafka deploy";
    int outcome = 0;
    CHECK_INT(remem_add(b, &m, NULL, 0, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_DUPLICATE);
    remem_memory_init(&m);
    snprintf(id, sizeof id, "m%d", 500 + round);
    m.ns = NS;
    m.id = id;
    m.text = "upserted: garden tomato coffee";
    CHECK_INT(remem_add(b, &m, NULL, 0, &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_UPSERTED);
    remem_close(b); /* never loaded the namespace: writes no snapshot */
}

/* Reads by another handle that touch rows (their recency changes). */
static void reads_by_other(void) {
    remem *b = open_at(path);
    static const char *const qs[] = {"garden tomato", "fantasy movie", "coffee", "budget report"};
    for (size_t i = 0; i < 4; i++) {
        remem_query q;
        remem_query_init(&q);
        const char *ns[] = {NS};
        q.namespaces = ns;
        q.n_namespaces = 1;
        q.text = qs[i];
        q.k = 15;
        q.now = NOW - 3600000; /* an hour before the answers' now */
        remem_result *r = NULL;
        CHECK_INT(remem_recall(b, &q, &r), REMEM_OK);
        remem_result_free(r);
    }
    setenv("REMEM_SNAPSHOTS", "0", 1); /* B's close must not replace it */
    remem_close(b);
    unsetenv("REMEM_SNAPSHOTS");
}

static void test_snapshot_equals_full_load(void) {
    fill(path, 88172645463325252ULL);
    CHECK(!exists(snap_file));
    agree("the first load", "scan"); /* no snapshot yet; this one writes it */
    CHECK(exists(snap_file));
    agree("the snapshot's own version", "snapshot");
    edit_by_other(0);
    agree("adds, updates, invalidations, purges by another handle", "snapshot");
    edit_by_other(1);
    reads_by_other();
    agree("more changes and reads by another handle", "snapshot");
    /* Purges (and a purged id added again): a snapshot cannot take them
     * without moving rows, so a scan; it then saves a new snapshot. */
    remem *p = open_at(path);
    char id[32];
    for (int i = 0; i < 5; i++) {
        snprintf(id, sizeof id, "m%d", 600 + i);
        CHECK_INT(remem_forget(p, NS, id, 1), REMEM_OK);
    }
    remem_memory m;
    remem_memory_init(&m);
    m.ns = NS;
    m.id = "m600";
    m.text = "back after its purge: garden tomato coffee";
    CHECK_INT(remem_add(p, &m, NULL, 0, NULL), REMEM_OK);
    remem_close(p);
    agree("purges by another handle", "scan");
    agree("the snapshot saved after the purges", "snapshot");
    /* A purge of a memory added after the snapshot moves nothing. */
    p = open_at(path);
    m.id = "m-late";
    m.text = "added and purged after the snapshot";
    CHECK_INT(remem_add(p, &m, NULL, 0, NULL), REMEM_OK);
    CHECK_INT(remem_forget(p, NS, "m-late", 1), REMEM_OK);
    add_random(p, 700);
    remem_close(p);
    agree("an add and purge after the snapshot", "snapshot");
    /* The snapshot is still the first one: close to current, not rewritten. */
    remem *b = open_at(path);
    for (int i = 0; i < 800; i++) add_random(b, 10000 + i);
    remem_close(b);
    agree("more changes than catching up takes", "scan"); /* and rewrites it */
    agree("the rewritten snapshot", "snapshot");
}

static void test_lost_history_and_reindex(void) {
    write_snapshot();
    /* Changes whose history is then deleted: a catch-up would see none. */
    remem *b = open_at(path);
    remem_patch p;
    remem_patch_init(&p);
    p.fields = REMEM_SET_TEXT;
    p.text = "a text changed while its history was lost: fantasy coffee";
    CHECK_INT(remem_update(b, NS, "m20", &p), REMEM_OK);
    CHECK_INT(remem_update(b, NS, "m21", &p), REMEM_OK);
    remem_close(b);
    sql(path, "DELETE FROM history WHERE seq > (SELECT max(seq) - 2 FROM history)");
    agree("history lost after the snapshot", "scan");
    /* All history of the namespace gone: the snapshot's row is not there. */
    write_snapshot();
    sql(path, "DELETE FROM history");
    agree("every history row deleted", "scan");
    write_snapshot();
    b = open_at(path);
    CHECK_INT(remem_reindex(b, NS, NULL, NULL), REMEM_OK);
    remem_close(b);
    agree("a reindex", "scan");
}

static void flip_byte(const char *p, long at) {
    FILE *f = fopen(p, "r+b");
    CHECK(f != NULL);
    if (!f) return;
    fseek(f, at, SEEK_SET);
    int c = fgetc(f);
    fseek(f, at, SEEK_SET);
    fputc(c ^ 0x10, f);
    fclose(f);
}

static long file_size(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static void test_bad_snapshots_refused(void) {
    char good[600];
    snprintf(good, sizeof good, "%s.good", snap_file);
    write_snapshot();
    copy_file(snap_file, good);
    agree("a good snapshot", "snapshot");
    /* Truncated. */
    CHECK_INT(truncate(snap_file, file_size(good) / 2), 0);
    agree("a truncated snapshot", "scan");
    /* One flipped bit in the vectors, in the lexical index, in the header. */
    long size = file_size(good);
    long at[] = {size / 2, 131072 + 100, 200, size - 10};
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        copy_file(good, snap_file);
        flip_byte(snap_file, at[i]);
        agree("a flipped byte", "scan");
    }
    /* A snapshot newer than the store (the store restored from a backup
     * taken before it). */
    copy_file(good, snap_file);
    char backup[300];
    snprintf(backup, sizeof backup, "%s.backup", path);
    remem *b = open_at(path);
    remem_close(b);
    sql(path, "PRAGMA wal_checkpoint(TRUNCATE)");
    copy_file(path, backup);
    b = open_at(path);
    add_random(b, 20000);
    add_random(b, 20001);
    remem_close(b);
    write_snapshot(); /* at the newer version */
    sql(path, "PRAGMA wal_checkpoint(TRUNCATE)");
    copy_file(backup, path);
    agree("a store restored from an older backup", "scan");
    /* Its versions brought level again by other writes. */
    write_snapshot();
    copy_file(snap_file, good);
    b = open_at(path);
    add_random(b, 30000);
    remem_close(b);
    sql(path, "PRAGMA wal_checkpoint(TRUNCATE)");
    copy_file(path, backup);
    b = open_at(path);
    add_random(b, 30001);
    remem_close(b);
    write_snapshot();
    sql(path, "PRAGMA wal_checkpoint(TRUNCATE)");
    copy_file(backup, path);
    b = open_at(path);
    add_random(b, 30002); /* same version as the snapshot, other content */
    remem_close(b);
    agree("a restored store at the snapshot's version", "scan");
    unlink(good);
    unlink(backup);
}

static void remove_store(const char *p);

/* Two stores filled alike (same namespace, content, version and history)
 * differ in their store ids only: one's snapshot copied beside the other
 * is refused. */
static void test_other_store_refused(void) {
    char a[300], b[300], sa[600], sb[600];
    snprintf(a, sizeof a, "%s.a", other);
    snprintf(b, sizeof b, "%s.b", other);
    const char *name = strrchr(snap_file, '/') + 1;
    snprintf(sa, sizeof sa, "%s-snap/%s", a, name);
    snprintf(sb, sizeof sb, "%s-snap/%s", b, name);
    remove_store(a);
    remove_store(b);
    fill(a, 12345);
    fill(b, 12345);
    const char *stores[] = {a, b};
    for (int i = 0; i < 2; i++) {
        remem *db = open_at(stores[i]);
        free(answers(db));
        remem_close(db);
    }
    CHECK(exists(sa) && exists(sb));
    remem *db = open_at(a);
    char *own = answers(db), *st = NULL;
    CHECK_INT(remem_stats(db, NS, &st), REMEM_OK);
    CHECK(st && strstr(st, "\"source\":\"snapshot\""));
    free(st);
    setenv("REMEM_SNAPSHOTS", "0", 1);
    remem_close(db);
    unsetenv("REMEM_SNAPSHOTS");
    copy_file(sb, sa);
    db = open_at(a);
    char *foreign = answers(db);
    CHECK_INT(remem_stats(db, NS, &st), REMEM_OK);
    CHECK(st && strstr(st, "\"source\":\"scan\""));
    free(st);
    remem_close(db);
    CHECK_STR(own, foreign);
    free(own);
    free(foreign);
    remove_store(a);
    remove_store(b);
}

/* Several handles of one process (a server's) that loaded the same
 * namespace: the first close writes the snapshot, the others find it up
 * to date and leave it (same file, not rewritten). */
static void test_one_writer_of_many_handles(void) {
    unlink(snap_file);
    remem *h[3];
    for (int i = 0; i < 3; i++) {
        h[i] = open_at(path);
        free(answers(h[i]));
    }
    CHECK(!exists(snap_file));
    remem_close(h[0]);
    struct stat first, after;
    CHECK_INT(stat(snap_file, &first), 0);
    remem_close(h[1]);
    remem_close(h[2]);
    CHECK_INT(stat(snap_file, &after), 0);
    CHECK_INT(after.st_ino, first.st_ino);
    CHECK_INT(after.st_mtim.tv_nsec, first.st_mtim.tv_nsec);
    CHECK_INT(after.st_mtim.tv_sec, first.st_mtim.tv_sec);
    /* No temporary file left behind. */
    char cmd[700];
    snprintf(cmd, sizeof cmd, "ls '%s-snap' | grep -c tmp > /dev/null", path);
    CHECK(system(cmd) != 0);
    agree("the snapshot of several handles", "snapshot");
}

static void remove_store(const char *p) {
    char side[600];
    unlink(p);
    snprintf(side, sizeof side, "%s-wal", p);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", p);
    unlink(side);
    snprintf(side, sizeof side, "rm -rf '%s-snap'", p);
    if (system(side) != 0) fprintf(stderr, "  could not remove %s-snap\n", p);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    snprintf(path, sizeof path, "/tmp/remem-test-snap-%d.db", (int)getpid());
    snprintf(other, sizeof other, "/tmp/remem-test-snap-other-%d.db", (int)getpid());
    /* "t:snap" in hex */
    snprintf(snap_file, sizeof snap_file, "%s-snap/743a736e6170.snap", path);
    setenv("REMEM_SNAPSHOT_MIN", "100", 1);
    unsetenv("REMEM_SNAPSHOTS");
    remove_store(path);
    remove_store(other);
    RUN(test_other_store_refused);
    RUN(test_snapshot_equals_full_load);
    RUN(test_lost_history_and_reindex);
    RUN(test_bad_snapshots_refused);
    RUN(test_one_writer_of_many_handles);
    remove_store(path);
    remove_store(other);
    return TEST_EXIT();
}
