/*
 * sqlite.c: the embedded store on one SQLite file.
 *
 * Shape: a `memories` table keyed by (ns, id) with an integer rowid that
 * the engine's in-memory caches use; a `namespaces` table holding each namespace's model
 * lock, row count and a version that triggers bump on every content change;
 * an append-only `history` table. Vectors are float32 little-endian BLOBs
 * next to their model id.
 *
 * Durability: WAL with synchronous=NORMAL (a crash never loses a commit;
 * power loss may lose the last ones) or FULL; a writable handle's
 * checkpoints run off the commit path (sqlite_wal.c). Several processes
 * share the file; `PRAGMA data_version` tells one connection that another
 * committed.
 *
 * Schema changes go through the `migrations` list: each step runs once, in
 * a transaction, and records the new version in remem_meta.
 *
 * No full-text index: the lexical lane's BM25 is the engine's own
 * (src/lexical, over the cached rows), so ranking is the same whatever the
 * store. Schema 3 dropped the FTS5 table of the earlier schemas.
 *
 * This file is the one place that speaks SQL: it implements the
 * operations of store.h (the table at the end) and turns every statement
 * row into a store_row through one decoder (decode_row).
 */
#include "store/store.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sqlite_wal.h"
#include "util/util.h"

enum {
    ST_INSERT,
    ST_REPLACE,
    ST_FIND_NS,
    ST_FIND_ANY,
    ST_GET,
    ST_DUP,
    ST_DUP_AFTER,
    ST_BUMPDUP,
    ST_DELETE,
    ST_TOUCH,
    ST_SETVEC,
    ST_HIST_ADD,
    ST_NS_INFO,
    ST_NS_SET,
    ST_HIST_MAX,
    ST_HIST_SINCE,
    ST_DATA_VERSION,
    ST_COUNT
};

/* The handle: store.h's part first, so a store * is a sqlite_store *. */
typedef struct sqlite_store {
    store base;
    sqlite3 *db;
    sqlite3_stmt *st[ST_COUNT];
    int data_version;
    char uid[40]; /* remem_meta 'store_id' ("" when none: read-only, new) */
    /* Schema 4's touch counting, prepared on first use (a read-only
     * handle on an older file never needs them). */
    sqlite3_stmt *touch_ns, *touch_row, *touch_count, *touched;
    /* One namespace's scan (every cache load), prepared on first use: its
     * parse cost as much as reading a small namespace's rows. */
    sqlite3_stmt *scan_ns;
    /* A read snapshot (read_begin) open, and its two statements. */
    int in_read;
    sqlite3_stmt *read_on, *read_off;
    int in_txn; /* between begin and commit/rollback */
    /* A writable handle's checkpoints (sqlite_wal.c), and the page cache
     * it grows to in a write transaction and gives back after. */
    sqlite_wal *wal;
    sqlite3_stmt *cache_write, *cache_rest;
} sqlite_store;

static sqlite_store *sq(store *s) { return (sqlite_store *)s; }

#define ROW_COLS                                                             \
    "rowid, ns, id, kind, tier, text, importance, created_at, updated_at, "  \
    "accessed_at, access_count, expires_at, invalidated_at, superseded_by, " \
    "duplicate_count, metadata, links, model, embedding"

static const char *const sql_text[ST_COUNT] = {
    [ST_INSERT] = "INSERT INTO memories(ns, id, kind, tier, text, norm, norm_hash, "
                  "importance, created_at, updated_at, accessed_at, access_count, "
                  "expires_at, invalidated_at, superseded_by, duplicate_count, metadata, "
                  "links, model, embedding) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_REPLACE] = "UPDATE memories SET ns=?1, id=?2, kind=?3, tier=?4, text=?5, norm=?6, "
                   "norm_hash=?7, importance=?8, created_at=?9, updated_at=?10, "
                   "accessed_at=?11, access_count=?12, expires_at=?13, invalidated_at=?14, "
                   "superseded_by=?15, duplicate_count=?16, metadata=?17, links=?18, "
                   "model=?19, embedding=?20 WHERE rowid=?21",
    [ST_FIND_NS] = "SELECT " ROW_COLS " FROM memories WHERE ns=? AND id=?",
    [ST_FIND_ANY] = "SELECT " ROW_COLS " FROM memories WHERE id=? LIMIT 2",
    [ST_GET] = "SELECT " ROW_COLS " FROM memories WHERE rowid=?",
    [ST_DUP] = "SELECT rowid, norm, text FROM memories WHERE ns=? AND norm_hash=? ORDER BY rowid",
    [ST_DUP_AFTER] = "SELECT rowid, norm, text FROM memories WHERE ns=? AND norm_hash=? "
                     "AND rowid>? ORDER BY rowid",
    [ST_BUMPDUP] = "UPDATE memories SET duplicate_count=duplicate_count+1, "
                   "updated_at=? WHERE rowid=?",
    [ST_DELETE] = "DELETE FROM memories WHERE rowid=?",
    [ST_TOUCH] = "UPDATE memories SET accessed_at=?, access_count=access_count+1 "
                 "WHERE rowid=?",
    [ST_SETVEC] = "UPDATE memories SET model=?, embedding=? WHERE rowid=?",
    [ST_HIST_ADD] = "INSERT INTO history(ns, id, at, op, actor, before, after) "
                    "VALUES(?,?,?,?,?,?,?)",
    [ST_NS_INFO] = "SELECT coalesce(model,''), coalesce(dim,0), version, rows "
                   "FROM namespaces WHERE ns=?",
    [ST_NS_SET] = "INSERT INTO namespaces(ns, model, dim) VALUES(?1,?2,?3) "
                  "ON CONFLICT(ns) DO UPDATE SET model=?2, dim=?3",
    [ST_HIST_MAX] = "SELECT coalesce(max(seq),0) FROM history WHERE ns=?1",
    [ST_HIST_SINCE] = "SELECT seq, id, op FROM history WHERE ns=?1 AND seq>?2 ORDER BY seq",
    [ST_DATA_VERSION] = "PRAGMA data_version",
};

/* Each migration brings the schema from version i to i+1. */
static const char *const migrations[] = {
    /* 1: the first schema. */
    "CREATE TABLE memories("
    " rowid INTEGER PRIMARY KEY,"
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
    /* accessed_at and access_count are left out on purpose: a read is not a
     * change, and bumping the version on every recall would make every
     * other process reload its cache. */
    "CREATE TRIGGER memories_au AFTER UPDATE OF kind, tier, text, importance,"
    " created_at, expires_at, invalidated_at, superseded_by, duplicate_count,"
    " metadata, links, model, embedding ON memories BEGIN"
    " UPDATE namespaces SET version=version+1 WHERE ns=new.ns;"
    " END;",
    /* 2: other processes' caches catch up from the history of a namespace
     * (what changed since the seq they saw), so it is read by (ns, seq). */
    "CREATE INDEX history_by_ns_seq ON history(ns, seq);",
    /* 3: the lexical lane ranks with the engine's own index (src/lexical),
     * so the FTS5 table and the triggers that fed it go: every write no
     * longer indexes its text twice, and a purge has no full-text
     * segments left to rewrite. The insert and delete triggers are
     * recreated without their FTS5 statement. */
    "DROP TRIGGER memories_ai;"
    "DROP TRIGGER memories_ad;"
    "DROP TRIGGER memories_au_text;"
    "DROP TABLE memories_fts;"
    "CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN"
    " INSERT INTO namespaces(ns) VALUES(new.ns) ON CONFLICT(ns) DO NOTHING;"
    " UPDATE namespaces SET rows=rows+1, version=version+1 WHERE ns=new.ns;"
    " END;"
    "CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN"
    " UPDATE namespaces SET rows=rows-1, version=version+1 WHERE ns=old.ns;"
    " END;",
    /* 4: reads are counted per namespace (namespaces.touches, bumped by
     * each touch) and each row keeps the count of its last touch, so that
     * a cache saved earlier (the engine's snapshots) re-reads the access
     * fields of just the rows touched since, as history does for changes.
     * Neither column is in memories_au's list: a touch is still no change
     * of content. */
    "ALTER TABLE memories ADD COLUMN touch_seq INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE namespaces ADD COLUMN touches INTEGER NOT NULL DEFAULT 0;"
    "CREATE INDEX memories_by_touch ON memories(ns, touch_seq) WHERE touch_seq > 0;",
};
#define N_MIGRATIONS (int)(sizeof migrations / sizeof migrations[0])

static int fail(sqlite_store *s, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(sqlite_store *s, int rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->base.err, sizeof s->base.err, fmt, ap);
    va_end(ap);
    return rc;
}

/* Map an SQLite error to a status and keep its message. */
static int sqlfail(sqlite_store *s, const char *what) {
    int code = sqlite3_errcode(s->db);
    int rc = REMEM_ESTORE;
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
        rc = REMEM_EBUSY;
    else if (code == SQLITE_NOMEM)
        rc = REMEM_ENOMEM;
    else if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
        rc = REMEM_ECORRUPT;
    else if (code == SQLITE_IOERR || code == SQLITE_FULL || code == SQLITE_CANTOPEN)
        rc = REMEM_EIO;
    return fail(s, rc, "%s: %s", what, sqlite3_errmsg(s->db));
}

static int exec(sqlite_store *s, const char *sql) {
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        int rc = sqlfail(s, "sqlite");
        if (msg) {
            snprintf(s->base.err, sizeof s->base.err, "sqlite: %s", msg);
            sqlite3_free(msg);
        }
        return rc;
    }
    return REMEM_OK;
}

/* A statement prepared for one call (finalize it). */
static int prepare(sqlite_store *s, const char *sql, sqlite3_stmt **st, const char *what) {
    if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK) return sqlfail(s, what);
    return REMEM_OK;
}

static int schema_version(sqlite_store *s, int *v) {
    *v = 0;
    sqlite3_stmt *st;
    int rc = prepare(s, "SELECT value FROM remem_meta WHERE key='schema_version'", &st,
                     "reading the schema version");
    if (rc) return rc;
    if (sqlite3_step(st) == SQLITE_ROW) *v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return REMEM_OK;
}

static int migrate(sqlite_store *s) {
    int rc = exec(s, "CREATE TABLE IF NOT EXISTS remem_meta(key TEXT PRIMARY KEY,"
                     " value TEXT NOT NULL)");
    if (rc) return rc;
    int v;
    if ((rc = schema_version(s, &v))) return rc;
    if (v > N_MIGRATIONS)
        return fail(s, REMEM_ECORRUPT,
                    "%s has schema version %d; this remem knows up to %d "
                    "(a newer remem wrote it)",
                    s->base.path, v, N_MIGRATIONS);
    if (v == N_MIGRATIONS) return REMEM_OK;
    if ((rc = exec(s, "BEGIN IMMEDIATE"))) return rc;
    /* Another process may have migrated while we waited for the lock. */
    if ((rc = schema_version(s, &v))) goto out;
    for (; v < N_MIGRATIONS; v++) {
        if ((rc = exec(s, migrations[v]))) goto out;
        char sql[128];
        snprintf(sql, sizeof sql, "INSERT OR REPLACE INTO remem_meta VALUES('schema_version','%d')",
                 v + 1);
        if ((rc = exec(s, sql))) goto out;
    }
    rc = exec(s, "COMMIT");
out:
    if (rc) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

static const store_ops sqlite_ops;
static int sqlite_changed(store *base);

/* The store's identity for the engine's cache snapshots: 16 random bytes
 * in hex, made the first time a writable handle opens the file (INSERT OR
 * IGNORE: two processes opening a new file at once keep one). A copy of
 * the file keeps it, which is right: the copy holds the same content up to
 * the versions the snapshot checks. Failing to read or make it only turns
 * snapshots off (uid stays ""), never the open. */
static void read_store_id(sqlite_store *s, int read_only) {
    static const char *const sel = "SELECT value FROM remem_meta WHERE key='store_id'";
    for (int pass = 0; pass < 2; pass++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(s->db, sel, -1, &st, NULL) != SQLITE_OK) return;
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
            snprintf(s->uid, sizeof s->uid, "%s", (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        if (s->uid[0] || read_only || pass) return;
        if (sqlite3_exec(s->db,
                         "INSERT OR IGNORE INTO remem_meta VALUES('store_id',"
                         " lower(hex(randomblob(16))))",
                         NULL, NULL, NULL) != SQLITE_OK)
            return;
    }
}

static int sqlite_cache_home(store *base, char *uid, size_t uid_cap, char *path, size_t path_cap) {
    sqlite_store *s = sq(base);
    const char *p = s->base.path;
    /* An in-memory database, a temporary one (""), or a URI with
     * parameters: no file to keep copies beside. */
    if (!s->uid[0] || !p[0] || strcmp(p, ":memory:") == 0 || strchr(p, '?') ||
        strncmp(p, "file:", 5) == 0)
        return REMEM_EUNSUPPORTED;
    if (strlen(s->uid) >= uid_cap || strlen(p) >= path_cap) return REMEM_EUNSUPPORTED;
    snprintf(uid, uid_cap, "%s", s->uid);
    snprintf(path, path_cap, "%s", p);
    return REMEM_OK;
}

static void sqlite_close(store *base) {
    sqlite_store *s = sq(base);
    if (!s) return;
    sqlite_wal_stop(s->wal);
    for (int i = 0; i < ST_COUNT; i++) sqlite3_finalize(s->st[i]);
    sqlite3_finalize(s->cache_write);
    sqlite3_finalize(s->cache_rest);
    sqlite3_finalize(s->touch_ns);
    sqlite3_finalize(s->touch_row);
    sqlite3_finalize(s->touch_count);
    sqlite3_finalize(s->touched);
    sqlite3_finalize(s->scan_ns);
    sqlite3_finalize(s->read_on);
    sqlite3_finalize(s->read_off);
    sqlite3_close(s->db);
    free(s);
}

/* Two of SQLite's process-wide settings, made once, before the first open
 * (where SQLite is already in use in the process, the calls are refused
 * and nothing changes):
 * - its memory statistics, which remem never reads, are off: SQLite counts
 *   every allocation of every connection under one global mutex, taken
 *   about fifty times a recall and contended between the server's threads;
 * - a page cache starts empty instead of with 20 pages allocated and
 *   linked at once: the namespace scan's rowid list (an ephemeral table,
 *   with a page cache of its own) paid for 20 pages of about 4 KB, each
 *   first touched, on every recall that loaded a namespace (7% of a busy
 *   server's samples); a cache now takes its pages as it uses them. */
static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static void configure_sqlite(void) {
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
}

/* A writable handle's WAL and write cache. The WAL is checkpointed by a
 * thread of the handle past 32 MB and by the committing writer past 64 MB
 * (sqlite_wal.c); SQLite's default, 1,000 pages (4 MB), checkpointed in
 * the commit after every batch of a thousand memories, and copied a
 * random index's pages (the (ns, norm_hash) one) into the file once per
 * batch: an ingest of 100,000 turns now writes 9,000 bytes per message
 * instead of 10,000, and the checkpoints are off the writer's clock
 * (bench/README.md, "Conversations in"). The WAL file is cut back to
 * 64 MB when it restarts. */
#define WAL_SOFT_BYTES (32 << 20)
#define WAL_HARD_BYTES (64 << 20)
/* In a write transaction the page cache may hold 16 MB (what cache_spill
 * already lets its dirty pages take), and is back to its size at the end:
 * with 2 MB, a batch of a thousand memories read the leaves of that index
 * again and again (568,000 reads of a page for 100,000 turns; 143,000
 * with the larger cache, most of them a checkpoint's). */
#define WRITE_CACHE_KB 16384

static int lazy(sqlite_store *s, sqlite3_stmt **st, const char *sql, const char *what);

/* The integer a one-row pragma answers (dflt when it does not). */
static int pragma_int(sqlite_store *s, const char *sql, int dflt) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK) return dflt;
    int v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : dflt;
    sqlite3_finalize(st);
    return v;
}

static int in_wal_mode(sqlite_store *s) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode", -1, &st, NULL) != SQLITE_OK) return 0;
    int wal = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) &&
              !strcmp((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    return wal;
}

/* Best effort: without them the handle writes as SQLite's defaults do. */
static void write_setup(sqlite_store *s, int full) {
    char sql[64];
    int rest = pragma_int(s, "PRAGMA cache_size", -2000);
    snprintf(sql, sizeof sql, "PRAGMA cache_size=%d", -WRITE_CACHE_KB);
    lazy(s, &s->cache_write, sql, "sizing the cache");
    snprintf(sql, sizeof sql, "PRAGMA cache_size=%d", rest);
    lazy(s, &s->cache_rest, sql, "sizing the cache");
    const char *file = sqlite3_db_filename(s->db, "main");
    if (!in_wal_mode(s) || !file || !*file) return;
    int page = pragma_int(s, "PRAGMA page_size", 4096);
    if (page <= 0) page = 4096;
    snprintf(sql, sizeof sql, "PRAGMA journal_size_limit=%d", WAL_HARD_BYTES);
    exec(s, sql);
    s->wal = sqlite_wal_start(s->db, file, WAL_SOFT_BYTES / page, WAL_HARD_BYTES / page,
                              full ? "FULL" : "NORMAL");
}

/* The write cache on (a write transaction began) or off. */
static void write_cache(sqlite_store *s, int on) {
    sqlite3_stmt *st = on ? s->cache_write : s->cache_rest;
    if (!st) return;
    sqlite3_step(st);
    sqlite3_reset(st);
}

/* A tuning variable's number; 0 when unset or not a number. */
static long env_long(const char *name) {
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : 0;
}

static int sqlite_setup(sqlite_store *s, const store_config *cfg) {
    pthread_once(&config_once, configure_sqlite);
    int read_only = cfg && cfg->read_only;
    int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    flags |= SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(s->base.path, &s->db, flags, NULL) != SQLITE_OK) {
        if (!s->db) return fail(s, REMEM_ENOMEM, "out of memory");
        int rc = sqlfail(s, s->base.path);
        return rc == REMEM_ESTORE ? REMEM_EIO : rc;
    }
    sqlite3_extended_result_codes(s->db, 0);
    int busy = cfg && cfg->busy_timeout_ms > 0 ? cfg->busy_timeout_ms : 10000;
    sqlite3_busy_timeout(s->db, busy);
    int rc;
    /* The page size of a new store file (an existing one keeps its own):
     * REMEM_SQLITE_PAGE_KB, a power of two from 1 to 64. */
    long kb = env_long("REMEM_SQLITE_PAGE_KB");
    if (!read_only && kb >= 1 && kb <= 64 && (kb & (kb - 1)) == 0) {
        char ps[48];
        snprintf(ps, sizeof ps, "PRAGMA page_size=%ld", kb * 1024);
        exec(s, ps);
    }
    if (!read_only && (rc = exec(s, "PRAGMA journal_mode=WAL"))) return rc;
    if ((rc = exec(s, cfg && cfg->durability ? "PRAGMA synchronous=FULL"
                                             : "PRAGMA synchronous=NORMAL")))
        return rc;
    if ((rc = exec(s, "PRAGMA foreign_keys=ON"))) return rc;
    /* Deleted content is overwritten, so a purged memory's text does not
     * linger in free pages of the file. */
    if ((rc = exec(s, "PRAGMA secure_delete=ON"))) return rc;
    /* Reads through a memory map of at most REMEM_SQLITE_MMAP_MB of the
     * file per connection, none by default: mapped pages count in the
     * process's resident size once per connection, and a server has one
     * connection per worker, so a map lets the store file, not the cache
     * budget, set a server's memory. 100,000 namespaces recalled at random
     * by 8 threads under a 512 MB budget: RSS 646 MB and 3,396 recalls/s
     * with no map, 655 MB and 3,139/s with 4 MB maps, 687-700 MB and
     * 3,000-3,058/s with 16 (bench/README.md): since the cache holds what
     * recall reads, a map only served loads, and those read pages beyond
     * a few MB of a large file anyway. */
    char mm[64];
    long mmb = env_long("REMEM_SQLITE_MMAP_MB");
    if (mmb < 0 || mmb > 1 << 20) mmb = 0;
    snprintf(mm, sizeof mm, "PRAGMA mmap_size=%lld", (long long)mmb << 20);
    exec(s, mm);
    /* A write transaction keeps up to 4096 dirty pages (16 MB of 4 KB
     * pages) in memory before it spills any to the WAL; the page cache
     * (2 MB) is back to its size after the commit. A batch of a thousand
     * memories dirties about 1,300 pages in a store of 100,000: spilled
     * at 500, many were written to the WAL twice, and an ingest of
     * 100,000 turns made 786,000 writes to the files instead of 362,000
     * (bench/README.md, "Conversations in"). */
    exec(s, "PRAGMA cache_spill=4096");
    /* A file that is not a database shows up here, on the first read. */
    if (!read_only && (rc = migrate(s))) return rc;
    for (int i = 0; i < ST_COUNT; i++) {
        if (sqlite3_prepare_v3(s->db, sql_text[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i],
                               NULL) != SQLITE_OK)
            return sqlfail(s, "preparing statements");
    }
    sqlite_changed(&s->base);
    read_store_id(s, read_only);
    if (!read_only) write_setup(s, cfg && cfg->durability);
    return REMEM_OK;
}

static int sqlite_open(const char *path, const store_config *cfg, store **out, char *err,
                       size_t errcap) {
    *out = NULL;
    sqlite_store *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errcap, "out of memory");
        return REMEM_ENOMEM;
    }
    s->base.ops = &sqlite_ops;
    snprintf(s->base.path, sizeof s->base.path, "%s", path);
    int rc = sqlite_setup(s, cfg);
    if (rc) {
        snprintf(err, errcap, "%s", s->base.err);
        sqlite_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return REMEM_OK;
}

static void sqlite_read_end(store *base);

static int sqlite_begin(store *base) {
    sqlite_read_end(base); /* a write does not nest in a read */
    int rc = exec(sq(base), "BEGIN IMMEDIATE");
    sq(base)->in_txn = rc == REMEM_OK;
    if (!rc) write_cache(sq(base), 1);
    return rc;
}

static int sqlite_commit(store *base) {
    sqlite_store *s = sq(base);
    s->in_txn = 0;
    int rc = exec(s, "COMMIT");
    if (rc) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    write_cache(s, 0);
    return rc;
}

static void sqlite_rollback(store *base) {
    sqlite_store *s = sq(base);
    s->in_txn = 0;
    if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    write_cache(s, 0);
}

/* Every recall asks this first, so the pragma is a statement prepared once
 * with the others rather than parsed per call. */
static int sqlite_changed(store *base) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st = s->st[ST_DATA_VERSION];
    int v = s->data_version;
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int(st, 0);
    sqlite3_reset(st);
    int changed = v != s->data_version;
    s->data_version = v;
    return changed;
}

/* ---- rows ---- */

/* The one row decoder: point r at the current row of st (ROW_COLS order)
 * without copying. The strings and the vector are SQLite's, valid until
 * the next step or reset: a scan hands them to its callback as they are,
 * a lookup copies them (store_row_copy). Returns 0, or -1 when SQLite ran
 * out of memory for a required column. */
static int decode_row(sqlite3_stmt *st, int with_vec, store_row *r) {
    memset(r, 0, sizeof *r);
    r->rowid = sqlite3_column_int64(st, 0);
    r->m.ns = (const char *)sqlite3_column_text(st, 1);
    r->m.id = (const char *)sqlite3_column_text(st, 2);
    r->m.kind = (const char *)sqlite3_column_text(st, 3);
    r->m.tier = (const char *)sqlite3_column_text(st, 4);
    r->m.text = (const char *)sqlite3_column_text(st, 5);
    r->m.importance = sqlite3_column_double(st, 6);
    r->m.created_at = sqlite3_column_int64(st, 7);
    r->m.updated_at = sqlite3_column_int64(st, 8);
    r->m.accessed_at = sqlite3_column_int64(st, 9);
    r->m.access_count = sqlite3_column_int64(st, 10);
    r->m.expires_at = sqlite3_column_int64(st, 11);
    r->m.invalidated_at = sqlite3_column_int64(st, 12);
    r->m.superseded_by = (const char *)sqlite3_column_text(st, 13);
    r->m.duplicate_count = sqlite3_column_int64(st, 14);
    r->m.metadata = (const char *)sqlite3_column_text(st, 15);
    r->m.links = (const char *)sqlite3_column_text(st, 16);
    r->m.model = (const char *)sqlite3_column_text(st, 17);
    /* The blob first, then its size: asking for the bytes of a blob never
     * converts it, so the pointer stays valid. */
    const void *blob = with_vec ? sqlite3_column_blob(st, 18) : NULL;
    int bytes = sqlite3_column_bytes(st, 18);
    r->m.dim = bytes / (int)sizeof(float);
    if (blob && r->m.dim > 0) r->m.vector = blob;
    if (!r->m.ns || !r->m.id || !r->m.kind || !r->m.tier || !r->m.text) return -1;
    return 0;
}

/* Step a one-row lookup into out (a copy it owns); ENOTFOUND when there
 * is no row. The statement is left on its row (the caller resets it).
 * The messages name the row's (ns, id) ("no memory NS/ID"), or with no
 * id the text what_ns itself; written only when it fails (ingest asks
 * for ids that are not there yet, a thousand a call). */
static int lookup(sqlite_store *s, sqlite3_stmt *st, int with_vec, store_row *out,
                  const char *what_ns, const char *what_id) {
    memset(out, 0, sizeof *out);
    int rc = sqlite3_step(st);
    store_row row;
    if (rc == SQLITE_ROW && !decode_row(st, with_vec, &row) && !store_row_copy(out, &row))
        return REMEM_OK;
    char what[300];
    if (what_id)
        snprintf(what, sizeof what, "no memory %s%s%.200s", what_ns ? what_ns : "",
                 what_ns ? "/" : "", what_id);
    else
        snprintf(what, sizeof what, "%s", what_ns);
    if (rc == SQLITE_DONE) return fail(s, REMEM_ENOTFOUND, "%s", what);
    if (rc != SQLITE_ROW) return sqlfail(s, what);
    return fail(s, REMEM_ENOMEM, "out of memory reading %s", what);
}

static int sqlite_find(store *base, const char *ns, const char *id, int with_vec, store_row *out) {
    sqlite_store *s = sq(base);
    memset(out, 0, sizeof *out);
    if (ns) {
        sqlite3_stmt *st = s->st[ST_FIND_NS];
        sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
        int rc = lookup(s, st, with_vec, out, ns, id);
        sqlite3_reset(st);
        return rc;
    }
    sqlite3_stmt *st = s->st[ST_FIND_ANY];
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    int rc = lookup(s, st, with_vec, out, NULL, id);
    if (rc == REMEM_OK && sqlite3_step(st) == SQLITE_ROW) {
        store_row_clear(out);
        rc = fail(s, REMEM_EAMBIGUOUS, "id %.200s exists in several namespaces; name one", id);
    }
    sqlite3_reset(st);
    return rc;
}

static int sqlite_get_rowid(store *base, int64_t rowid, int with_vec, store_row *out) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st = s->st[ST_GET];
    sqlite3_bind_int64(st, 1, rowid);
    int rc = lookup(s, st, with_vec, out, "no such row", NULL);
    sqlite3_reset(st);
    return rc;
}

/* Whether a row's text, normalised, is norm (*same): by the row's own
 * normalised copy when it has one (rows written before remem stopped
 * storing it), else by its text normalised here. -1 when out of memory. */
static int row_is(sqlite3_stmt *st, const char *norm, int *same) {
    const char *have = (const char *)sqlite3_column_text(st, 1);
    if (have && *have) {
        *same = strcmp(have, norm) == 0;
        return 0;
    }
    char *n = util_normalize_text((const char *)sqlite3_column_text(st, 2));
    if (!n) return -1;
    *same = strcmp(n, norm) == 0;
    free(n);
    return 0;
}

/* A row of ns with this normalised text: the first (ST_DUP), or the first
 * after rowid `after` (ST_DUP_AFTER, after >= 0). 0 in *rowid when none.
 * The rows of the same hash are few (all but always the duplicates
 * themselves): each is compared by its text. */
static int dup_lookup(sqlite_store *s, int which, const char *ns, uint64_t h, const char *norm,
                      int64_t after, int64_t *rowid) {
    sqlite3_stmt *st = s->st[which];
    sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (int64_t)h);
    if (which == ST_DUP_AFTER) sqlite3_bind_int64(st, 3, after);
    int rc, out = REMEM_OK, same = 0;
    *rowid = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (row_is(st, norm, &same)) {
            out = fail(s, REMEM_ENOMEM, "out of memory");
            break;
        }
        if (same) {
            *rowid = sqlite3_column_int64(st, 0);
            break;
        }
    }
    if (!out && rc != SQLITE_ROW && rc != SQLITE_DONE) out = sqlfail(s, "duplicate lookup");
    sqlite3_reset(st);
    return out;
}

static int sqlite_find_dup(store *base, const char *ns, uint64_t h, const char *norm,
                           int64_t *rowid) {
    return dup_lookup(sq(base), ST_DUP, ns, h, norm, 0, rowid);
}

static int sqlite_find_dup_after(store *base, const char *ns, uint64_t h, const char *norm,
                                 int64_t after, int64_t *rowid) {
    return dup_lookup(sq(base), ST_DUP_AFTER, ns, h, norm, after, rowid);
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *t) {
    if (t)
        sqlite3_bind_text(st, i, t, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

static void bind_memory(sqlite3_stmt *st, const remem_memory *m, const char *norm, uint64_t h) {
    sqlite3_bind_text(st, 1, m->ns, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, m->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, m->kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, m->tier, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, m->text, -1, SQLITE_STATIC);
    /* The normalised text is not stored: its hash finds a row's duplicates,
     * which are then compared by their text (dup_lookup). A copy made a row
     * 2.3 KB on average, over the half page two rows of a 4 KB page need:
     * a namespace's rows took a page each. */
    (void)norm;
    sqlite3_bind_text(st, 6, "", 0, SQLITE_STATIC);
    sqlite3_bind_int64(st, 7, (int64_t)h);
    sqlite3_bind_double(st, 8, m->importance);
    sqlite3_bind_int64(st, 9, m->created_at);
    sqlite3_bind_int64(st, 10, m->updated_at);
    sqlite3_bind_int64(st, 11, m->accessed_at);
    sqlite3_bind_int64(st, 12, m->access_count);
    sqlite3_bind_int64(st, 13, m->expires_at);
    sqlite3_bind_int64(st, 14, m->invalidated_at);
    bind_text_or_null(st, 15, m->superseded_by);
    sqlite3_bind_int64(st, 16, m->duplicate_count);
    bind_text_or_null(st, 17, m->metadata);
    bind_text_or_null(st, 18, m->links);
    bind_text_or_null(st, 19, m->vector ? m->model : NULL);
    if (m->vector)
        sqlite3_bind_blob(st, 20, m->vector, m->dim * (int)sizeof(float), SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 20);
}

/* SQLite rolls a transaction back by itself when a statement in it fails
 * for lack of memory or on an I/O error (https://sqlite.org/lang_transaction.html,
 * "Response To Errors Within A Transaction"). A write after that would run
 * in autocommit mode and stay, whatever the caller does next: refuse it, so
 * that the caller's own rollback leaves nothing of the transaction. */
static int txn_lost(sqlite_store *s, const char *what) {
    if (!s->in_txn || !sqlite3_get_autocommit(s->db)) return 0;
    fail(s, REMEM_EIO, "%s: the transaction was rolled back by an earlier failure", what);
    return 1;
}

static int step_done(sqlite_store *s, sqlite3_stmt *st, const char *what) {
    if (txn_lost(s, what)) {
        sqlite3_clear_bindings(st);
        return REMEM_EIO;
    }
    int rc = sqlite3_step(st);
    int out = rc == SQLITE_DONE ? REMEM_OK : sqlfail(s, what);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return out;
}

static int sqlite_insert(store *base, const remem_memory *m, const char *norm, uint64_t h,
                         int64_t *rowid) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st = s->st[ST_INSERT];
    bind_memory(st, m, norm, h);
    int rc = step_done(s, st, "inserting a memory");
    if (!rc && rowid) *rowid = sqlite3_last_insert_rowid(s->db);
    return rc;
}

static int sqlite_replace(store *base, int64_t rowid, const remem_memory *m, const char *norm,
                          uint64_t h) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st = s->st[ST_REPLACE];
    bind_memory(st, m, norm, h);
    sqlite3_bind_int64(st, 21, rowid);
    return step_done(s, st, "updating a memory");
}

static int sqlite_bump_duplicate(store *base, int64_t rowid, int64_t now) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st = s->st[ST_BUMPDUP];
    sqlite3_bind_int64(st, 1, now);
    sqlite3_bind_int64(st, 2, rowid);
    return step_done(s, st, "recording a duplicate");
}

static int sqlite_remove(store *base, int64_t rowid) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st = s->st[ST_DELETE];
    sqlite3_bind_int64(st, 1, rowid);
    return step_done(s, st, "deleting a memory");
}

/* *st prepared from sql on first use. */
static int lazy(sqlite_store *s, sqlite3_stmt **st, const char *sql, const char *what) {
    if (*st) return REMEM_OK;
    if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK)
        return sqlfail(s, what);
    return REMEM_OK;
}

/* A deferred BEGIN: the first read takes the shared lock and the WAL
 * snapshot, COMMIT lets them go. Not inside a write transaction or
 * another read. A failure only leaves the reads as they were. */
static int sqlite_read_begin(store *base) {
    sqlite_store *s = sq(base);
    if (s->in_txn || s->in_read || !sqlite3_get_autocommit(s->db)) return REMEM_OK;
    if (lazy(s, &s->read_on, "BEGIN", "starting a read") ||
        lazy(s, &s->read_off, "COMMIT", "ending a read"))
        return REMEM_OK;
    if (sqlite3_step(s->read_on) == SQLITE_DONE) s->in_read = 1;
    sqlite3_reset(s->read_on);
    return REMEM_OK;
}

static void sqlite_read_end(store *base) {
    sqlite_store *s = sq(base);
    if (!s->in_read) return;
    s->in_read = 0;
    if (sqlite3_step(s->read_off) != SQLITE_DONE && !sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_reset(s->read_off);
}

static int sqlite_touch(store *base, const int64_t *rowids, size_t n, int64_t now) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st = s->st[ST_TOUCH];
    int rc = lazy(s, &s->touch_ns,
                  "UPDATE namespaces SET touches=touches+1"
                  " WHERE ns=(SELECT ns FROM memories WHERE rowid=?1)",
                  "touching memories");
    if (!rc)
        rc = lazy(s, &s->touch_row,
                  "UPDATE memories SET touch_seq=(SELECT touches FROM namespaces n"
                  " WHERE n.ns=memories.ns) WHERE rowid=?1",
                  "touching memories");
    for (size_t i = 0; !rc && i < n; i++) {
        sqlite3_bind_int64(st, 1, now);
        sqlite3_bind_int64(st, 2, rowids[i]);
        rc = step_done(s, st, "touching memories");
        sqlite3_bind_int64(s->touch_ns, 1, rowids[i]);
        if (!rc) rc = step_done(s, s->touch_ns, "touching memories");
        sqlite3_bind_int64(s->touch_row, 1, rowids[i]);
        if (!rc) rc = step_done(s, s->touch_row, "touching memories");
    }
    return rc;
}

static int sqlite_touched_since(store *base, const char *ns, int64_t after, store_touch_fn fn,
                                void *ctx, int64_t *count) {
    sqlite_store *s = sq(base);
    *count = 0;
    int rc =
        lazy(s, &s->touch_count, "SELECT touches FROM namespaces WHERE ns=?1", "reading touches");
    if (rc) return rc;
    sqlite3_bind_text(s->touch_count, 1, ns, -1, SQLITE_STATIC);
    int step = sqlite3_step(s->touch_count);
    if (step == SQLITE_ROW) *count = sqlite3_column_int64(s->touch_count, 0);
    rc = (step == SQLITE_ROW || step == SQLITE_DONE) ? REMEM_OK : sqlfail(s, "reading touches");
    sqlite3_reset(s->touch_count);
    if (rc || !fn || *count <= after) return rc;
    /* touch_seq > 0 lets SQLite use the partial index. */
    rc = lazy(s, &s->touched,
              "SELECT rowid, accessed_at, access_count FROM memories"
              " WHERE ns=?1 AND touch_seq>?2 AND touch_seq>0",
              "reading touches");
    if (rc) return rc;
    sqlite3_stmt *st = s->touched;
    sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, after);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        rc = fn(ctx, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                sqlite3_column_int64(st, 2));
        if (rc) break;
    }
    if (!rc && step != SQLITE_DONE) rc = sqlfail(s, "reading touches");
    sqlite3_reset(st);
    return rc;
}

static int sqlite_set_vector(store *base, int64_t rowid, const char *model, const float *vec,
                             int dim) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st = s->st[ST_SETVEC];
    sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC);
    sqlite3_bind_blob(st, 2, vec, dim * (int)sizeof(float), SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, rowid);
    return step_done(s, st, "storing a vector");
}

static int sqlite_clear(store *base, const char *ns, int64_t *deleted) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st;
    if (txn_lost(s, "clearing a namespace")) return REMEM_EIO;
    int rc = prepare(s, "DELETE FROM memories WHERE ns=?", &st, "clearing a namespace");
    if (rc) return rc;
    sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
    rc = sqlite3_step(st) == SQLITE_DONE ? REMEM_OK : sqlfail(s, "clearing a namespace");
    sqlite3_finalize(st);
    if (!rc && deleted) *deleted = sqlite3_changes64(s->db);
    if (rc) return rc;
    /* An empty namespace may take vectors of another model again. */
    rc = prepare(s, "UPDATE namespaces SET model=NULL, dim=NULL WHERE ns=?", &st,
                 "clearing a namespace");
    if (rc) return rc;
    sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) rc = sqlfail(s, "clearing a namespace");
    sqlite3_finalize(st);
    return rc;
}

/* ---- namespaces ---- */

static int sqlite_ns_info(store *base, const char *ns, char *model, size_t model_cap, int *dim,
                          int64_t *version, int64_t *rows) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st = s->st[ST_NS_INFO];
    sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        if (model) snprintf(model, model_cap, "%s", sqlite3_column_text(st, 0));
        if (dim) *dim = sqlite3_column_int(st, 1);
        if (version) *version = sqlite3_column_int64(st, 2);
        if (rows) *rows = sqlite3_column_int64(st, 3);
        rc = REMEM_OK;
    } else if (rc == SQLITE_DONE) {
        if (model && model_cap) model[0] = '\0';
        if (dim) *dim = 0;
        if (version) *version = 0;
        if (rows) *rows = 0;
        rc = fail(s, REMEM_ENOTFOUND, "no namespace %.200s", ns);
    } else {
        rc = sqlfail(s, "reading a namespace");
    }
    sqlite3_reset(st);
    return rc;
}

static int sqlite_ns_set_model(store *base, const char *ns, const char *model, int dim) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st = s->st[ST_NS_SET];
    sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, model, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, dim);
    return step_done(s, st, "recording the namespace's model");
}

static int sqlite_namespaces(store *base, store_ns_fn fn, void *ctx) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st;
    int rc = prepare(s,
                     "SELECT ns, rows, coalesce(model,''), coalesce(dim,0), version "
                     "FROM namespaces WHERE rows > 0 ORDER BY ns",
                     &st, "listing namespaces");
    if (rc) return rc;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        store_ns n = {.ns = (const char *)sqlite3_column_text(st, 0),
                      .rows = sqlite3_column_int64(st, 1),
                      .model = (const char *)sqlite3_column_text(st, 2),
                      .dim = sqlite3_column_int(st, 3),
                      .version = sqlite3_column_int64(st, 4)};
        if (!n.ns || !n.model) {
            rc = fail(s, REMEM_ENOMEM, "out of memory listing namespaces");
            break;
        }
        if ((rc = fn(ctx, &n))) break;
    }
    if (!rc && step != SQLITE_DONE) rc = sqlfail(s, "listing namespaces");
    sqlite3_finalize(st);
    return rc;
}

/* ---- history ---- */

static int sqlite_history_add(store *base, const char *ns, const char *id, int64_t at,
                              const char *op, const char *actor, const char *before,
                              const char *after) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st = s->st[ST_HIST_ADD];
    sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, at);
    sqlite3_bind_text(st, 4, op, -1, SQLITE_STATIC);
    bind_text_or_null(st, 5, actor);
    bind_text_or_null(st, 6, before);
    bind_text_or_null(st, 7, after);
    return step_done(s, st, "writing history");
}

static int sqlite_history_max(store *base, const char *ns, int64_t *seq) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st = s->st[ST_HIST_MAX];
    sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    *seq = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    rc = (rc == SQLITE_ROW || rc == SQLITE_DONE) ? REMEM_OK : sqlfail(s, "reading history");
    sqlite3_reset(st);
    return rc;
}

static int sqlite_history_since(store *base, const char *ns, int64_t after, store_hist_fn fn,
                                void *ctx, int64_t *max_seq) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st = s->st[ST_HIST_SINCE];
    sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, after);
    *max_seq = after;
    int rc = REMEM_OK, step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        *max_seq = sqlite3_column_int64(st, 0);
        rc = fn(ctx, (const char *)sqlite3_column_text(st, 1),
                (const char *)sqlite3_column_text(st, 2));
        if (rc) break;
    }
    if (!rc && step != SQLITE_DONE) rc = sqlfail(s, "reading history");
    sqlite3_reset(st);
    return rc;
}

static int sqlite_history(store *base, const char *ns, const char *id, store_history_fn fn,
                          void *ctx) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st;
    const char *sql = ns ? "SELECT seq, ns, id, at, op, actor, before, after FROM history "
                           "WHERE ns=?1 AND id=?2 ORDER BY seq"
                         : "SELECT seq, ns, id, at, op, actor, before, after FROM history "
                           "WHERE id=?2 ORDER BY seq";
    int rc = prepare(s, sql, &st, "reading history");
    if (rc) return rc;
    if (ns) sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        store_history_row h = {.seq = sqlite3_column_int64(st, 0),
                               .ns = (const char *)sqlite3_column_text(st, 1),
                               .id = (const char *)sqlite3_column_text(st, 2),
                               .at = sqlite3_column_int64(st, 3),
                               .op = (const char *)sqlite3_column_text(st, 4),
                               .actor = (const char *)sqlite3_column_text(st, 5),
                               .before = (const char *)sqlite3_column_text(st, 6),
                               .after = (const char *)sqlite3_column_text(st, 7)};
        if (!h.ns || !h.id || !h.op) {
            rc = fail(s, REMEM_ENOMEM, "out of memory reading history");
            break;
        }
        if ((rc = fn(ctx, &h))) break;
    }
    if (!rc && step != SQLITE_DONE) rc = sqlfail(s, "reading history");
    sqlite3_finalize(st);
    return rc;
}

static int sqlite_history_scrub(store *base, const char *ns, const char *id) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st;
    /* Whole values go, not just the text: metadata, links, an
     * invalidation's reason (actor) and superseded_by are the memory's
     * content too. With secure_delete on, the old cells are zeroed. */
    if (txn_lost(s, "scrubbing history")) return REMEM_EIO;
    int rc =
        prepare(s, "UPDATE history SET actor=NULL, before=NULL, after=NULL WHERE ns=? AND id=?",
                &st, "scrubbing history");
    if (rc) return rc;
    sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
    rc = sqlite3_step(st) == SQLITE_DONE ? REMEM_OK : sqlfail(s, "scrubbing history");
    sqlite3_finalize(st);
    return rc;
}

/* secure_delete has zeroed the deleted cells and pages in the file; what
 * is left is the WAL's copies of them. */
static int sqlite_scrub_deleted(store *base) {
    sqlite_store *s = sq(base);
    /* Best effort: readers may keep part of the WAL alive for now. */
    sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    return REMEM_OK;
}

static int sqlite_integrity(store *base, store_problem_fn fn, void *ctx) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st;
    int rc = prepare(s, "PRAGMA integrity_check", &st, "checking the store's integrity");
    if (rc) return rc;
    int step;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *msg = (const char *)sqlite3_column_text(st, 0);
        if (msg && strcmp(msg, "ok")) rc = fn(ctx, msg);
    }
    if (!rc && step != SQLITE_DONE) {
        /* A store damaged badly enough that the check itself fails is a
         * problem to report, not an error of the call. */
        rc = fn(ctx, sqlite3_errmsg(s->db));
    }
    sqlite3_finalize(st);
    return rc;
}

/* ---- scans ---- */

static int sqlite_scan(store *base, const char *ns, int with_vec, store_row_fn fn, void *ctx) {
    sqlite_store *s = sq(base);
    sqlite3_stmt *st;
    /* For one namespace, its rowids come from the (ns, ...) index into a
     * list SQLite keeps sorted, then each row is read by rowid: in rowid
     * order without sorting the rows themselves. "WHERE ns=? ORDER BY
     * rowid" would instead sort every row, vector included, in a temporary
     * b-tree spilled to disk (most of the time of loading a namespace). */
    const char *sql = ns ? "SELECT " ROW_COLS " FROM memories WHERE rowid IN"
                           " (SELECT rowid FROM memories WHERE ns=?) ORDER BY rowid"
                         : "SELECT " ROW_COLS " FROM memories ORDER BY rowid";
    /* The kept statement, unless a scan in progress (a nested one from
     * fn) holds it: then one for this call. */
    int kept = ns && (s->scan_ns || !lazy(s, &s->scan_ns, sql, "scanning memories")) &&
               !sqlite3_stmt_busy(s->scan_ns);
    int rc = REMEM_OK;
    if (kept)
        st = s->scan_ns;
    else if ((rc = prepare(s, sql, &st, "scanning memories")))
        return rc;
    if (ns) sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        store_row r;
        if (decode_row(st, with_vec, &r)) {
            rc = fail(s, REMEM_ENOMEM, "out of memory scanning");
            break;
        }
        rc = fn(ctx, &r);
        if (rc) break;
    }
    if (!rc && step != SQLITE_DONE && step != SQLITE_ROW) rc = sqlfail(s, "scanning memories");
    if (kept) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    } else {
        sqlite3_finalize(st);
    }
    return rc;
}

/* ---- statistics ---- */

/* "SELECT key, count(*) ... GROUP BY key" for one group, into fn. */
static int group_counts(sqlite_store *s, enum store_group g, const char *col, const char *ns,
                        store_count_fn fn, void *ctx) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT %s, count(*) FROM memories %s GROUP BY 1 ORDER BY 1", col,
             ns ? "WHERE ns=?1" : "");
    sqlite3_stmt *st;
    int rc = prepare(s, sql, &st, "statistics");
    if (rc) return rc;
    if (ns) sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *k = sqlite3_column_text(st, 0);
        if ((rc = fn(ctx, g, k ? (const char *)k : "", sqlite3_column_int64(st, 1)))) break;
    }
    if (!rc && step != SQLITE_DONE) rc = sqlfail(s, "statistics");
    sqlite3_finalize(st);
    return rc;
}

static int sqlite_stats(store *base, const char *ns, int64_t now, store_summary *out,
                        store_count_fn fn, void *ctx) {
    sqlite_store *s = sq(base);
    memset(out, 0, sizeof *out);
    out->file_bytes = -1;
    sqlite3_stmt *st;
    char sql[400];
    snprintf(sql, sizeof sql,
             "SELECT count(*), coalesce(sum(invalidated_at > 0),0),"
             " coalesce(sum(expires_at > 0 AND expires_at <= ?2),0),"
             " coalesce(sum(duplicate_count),0), coalesce(avg(importance),0),"
             " coalesce(min(created_at),0), coalesce(max(created_at),0)"
             " FROM memories %s",
             ns ? "WHERE ns=?1" : "");
    int rc = prepare(s, sql, &st, "statistics");
    if (rc) return rc;
    if (ns) sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, now);
    if (sqlite3_step(st) == SQLITE_ROW) {
        out->memories = sqlite3_column_int64(st, 0);
        out->invalidated = sqlite3_column_int64(st, 1);
        out->expired = sqlite3_column_int64(st, 2);
        out->duplicates_folded = sqlite3_column_int64(st, 3);
        out->mean_importance = sqlite3_column_double(st, 4);
        out->oldest = sqlite3_column_int64(st, 5);
        out->newest = sqlite3_column_int64(st, 6);
    } else {
        rc = sqlfail(s, "statistics");
    }
    sqlite3_finalize(st);
    if (!rc && fn) rc = group_counts(s, STORE_BY_KIND, "kind", ns, fn, ctx);
    if (!rc && fn) rc = group_counts(s, STORE_BY_TIER, "tier", ns, fn, ctx);
    if (!rc && fn) rc = group_counts(s, STORE_BY_MODEL, "coalesce(model,'')", ns, fn, ctx);
    if (!rc && !ns &&
        sqlite3_prepare_v2(s->db,
                           "SELECT page_count*page_size FROM pragma_page_count, pragma_page_size",
                           -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) out->file_bytes = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    return rc;
}

/* ---- the table ---- */

static const store_ops sqlite_ops = {
    .name = "sqlite",
    .close = sqlite_close,
    .begin = sqlite_begin,
    .commit = sqlite_commit,
    .rollback = sqlite_rollback,
    .changed = sqlite_changed,
    .read_begin = sqlite_read_begin,
    .read_end = sqlite_read_end,
    .ns_info = sqlite_ns_info,
    .ns_set_model = sqlite_ns_set_model,
    .namespaces = sqlite_namespaces,
    .find = sqlite_find,
    .get_rowid = sqlite_get_rowid,
    .find_dup = sqlite_find_dup,
    .find_dup_after = sqlite_find_dup_after,
    .insert = sqlite_insert,
    .replace = sqlite_replace,
    .bump_duplicate = sqlite_bump_duplicate,
    .remove = sqlite_remove,
    .touch = sqlite_touch,
    .set_vector = sqlite_set_vector,
    .clear = sqlite_clear,
    .scan = sqlite_scan,
    .stats = sqlite_stats,
    .history_add = sqlite_history_add,
    .history_max = sqlite_history_max,
    .history_since = sqlite_history_since,
    .history = sqlite_history,
    .history_scrub = sqlite_history_scrub,
    .scrub_deleted = sqlite_scrub_deleted,
    .integrity = sqlite_integrity,
    .cache_home = sqlite_cache_home,
    .touched_since = sqlite_touched_since,
};

static const char *const sqlite_schemes[] = {"file", NULL};

const store_backend store_sqlite_backend = {
    .name = "sqlite",
    .schemes = sqlite_schemes,
    .open = sqlite_open,
};
