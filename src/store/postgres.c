/*
 * postgres.c: the shared store on PostgreSQL (libpq), for several `remem
 * serve` processes on one database. remem_open("postgres://user@host/db")
 * picks it through the scheme registry in store.c.
 *
 * Shape: the SQLite store's schema (sqlite.c) in PostgreSQL types:
 * `memories` keyed by (ns, id) with a bigserial rowid, vectors as bytea
 * (float32 little-endian, as in SQLite) next to their model, `namespaces`
 * with the model lock, row count and a version that triggers bump, and an
 * append-only `history`. remem creates and migrates it (remem_meta holds
 * the schema version; migrations run under an advisory lock, so two
 * servers starting together migrate once).
 *
 * Several servers: SQLite serialises every writer on one file lock; here
 * every write transaction takes a transaction-scoped advisory lock per
 * namespace it touches (ns_lock), so the model lock check-then-set, the
 * duplicate check and history seqs are in commit order within a namespace,
 * while different namespaces write in parallel. A history reader therefore
 * never sees a later seq of a namespace before an earlier one.
 *
 * Changes by others: namespaces.changes moves on every update of a
 * namespace row (a trigger), so sum(changes)+count(*) over namespaces grows
 * with every content change anywhere; `changed` compares it with the value
 * after this handle's own last commit (one small query per call). That is
 * the source of truth and needs no session state, so it works behind
 * PgBouncer in transaction mode, as does everything else here: statements
 * are unnamed (PQexecParams) but for a recall's two, which are prepared
 * where the server keeps them and sent unnamed where it does not
 * (prepared), settings are SET LOCAL, locks are transaction-scoped.
 * LISTEN/NOTIFY is not used: it needs a session.
 *
 * Touches (accessed_at) are buffered and written in one statement when a
 * row is next read through this handle by key or by a scan, at a commit
 * once a second old or 512 long (a commit of touches alone sends that
 * statement alone: one round trip), or at close: recall does not write on
 * every hit. A load of a namespace for the cache (pg_load) does not write
 * them: it applies them to the rows it reads.
 *
 * Loads (pg_load, the table's load call): a recall of a namespace that is
 * not cached reads its namespace row, its newest history seq and its rows
 * in one statement (a join, so one snapshot): one round trip, where the
 * three calls it replaces were three, and four with the touches' UPDATE
 * that a scan sends first.
 *
 * Batches (pg_batch, the table's batch call: remem_add_batch, copy): one
 * simple query takes the namespaces' locks, reads their rows, draws the
 * rowids of the inserts to come and looks up every duplicate (with its
 * row). The inserts, new namespaces' models and duplicate counts are then
 * held and answered from memory, and go as multi-row statements before
 * the transaction's next statement (flush_held, in run) or its commit:
 * a batch of thousands is a handful of round trips.
 *
 * Outages: a statement outside a started transaction that finds the
 * connection dead reconnects (with a growing pause between attempts) and
 * runs again; inside a transaction it fails and PostgreSQL rolls the whole
 * transaction back. Either way the caller gets REMEM_EBUSY with the
 * reason, which the server answers with 503.
 */
#include "store/store.h"

#include <endian.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/util.h"

#define HELD_CHUNK   1000 /* rows per multi-row INSERT (21 parameters each) */
#define HELD_MAX     5000 /* rows held at most (then sent) */
#define TOUCH_BATCH  512
#define TOUCH_AGE_MS 1000

typedef struct touch_ent {
    int64_t rowid, at;
    size_t order;
} touch_ent;

/* A history row held until the transaction's next history read or its
 * commit: the rows of a batch go in one statement. */
typedef struct hist_ent {
    char *f[6]; /* ns, id, op, actor, before, after (NULL allowed from actor on) */
    int64_t at;
} hist_ent;

/* A namespace row as this transaction knows it (ns_row_*): read with the
 * namespace's lock, then kept in step with our own writes as the triggers
 * move it, so that the engine's several looks at it within one write cost
 * no round trip. state: 0 unknown, 1 found, 2 no such row. */
typedef struct ns_row {
    char *ns;
    int state;
    int model_held; /* model and dim are to be written (a batch: flush_held) */
    char model[128];
    int dim;
    int64_t version, rows;
} ns_row;

/* A new row held by pg_insert in a batch (pg_batch drew its rowid) until
 * the transaction's next statement or its commit: the rows of a batch go
 * in a few multi-row INSERTs, not one round trip each. */
typedef struct held_row {
    store_row r; /* owns its strings and vector */
    char *norm;
    uint64_t h;
    int bumped; /* a stored row (known): a duplicate of it is held */
} held_row;

typedef struct pg_store {
    store base;
    PGconn *conn;
    int read_only, busy_ms;
    int in_tx, tx_started;
    uint64_t *locks; /* namespaces locked in this transaction */
    int n_locks, cap_locks;
    int64_t seen; /* the change mark after our last look or commit */
    int64_t next_try_ms, backoff_ms;
    touch_ent *touches;
    size_t n_touches, cap_touches;
    int64_t touch_since;
    hist_ent *hist;
    size_t n_hist, cap_hist;
    ns_row *rows_seen; /* the locked namespaces' rows */
    int n_rows_seen, cap_rows_seen;
    int batch;                /* pg_batch ran in this transaction: writes may be held */
    int flushing;             /* flush_held is sending them */
    held_row *held;           /* inserts held (a batch) */
    size_t n_held, cap_held;
    int64_t *pool;            /* rowids drawn for the batch's inserts */
    size_t n_pool, next_pool;
    held_row *known;          /* stored rows the batch duplicates, by rowid */
    size_t n_known;
    touch_ent *bumps;         /* duplicates of known rows, held */
    size_t n_bumps, cap_bumps;
    int watching; /* `changed` was called: commits keep the change mark */
    char *uri; /* what to connect to; base.path shows it without a password */
    unsigned prep_done; /* the statements prepared on this connection (bits of PREP_*) */
    int heap_raised;    /* raise_trim_threshold sent on this connection */
    int prep_off;       /* a pooler that does not keep them: send every statement unnamed */
} pg_store;

static pg_store *pg(store *s) { return (pg_store *)s; }

static int64_t mono_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int fail(pg_store *s, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(pg_store *s, int rc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->base.err, sizeof s->base.err, fmt, ap);
    va_end(ap);
    /* libpq messages end in a newline. */
    size_t n = strlen(s->base.err);
    while (n && (s->base.err[n - 1] == '\n' || s->base.err[n - 1] == ' ')) s->base.err[--n] = '\0';
    return rc;
}

/* ---- the schema ---- */

static const char *const migrations[] = {
    /* 1: the schema of the SQLite store (schema 3 there). */
    "CREATE TABLE memories("
    " rowid bigserial PRIMARY KEY,"
    " ns text NOT NULL, id text NOT NULL, kind text NOT NULL, tier text NOT NULL,"
    " text text NOT NULL, norm text NOT NULL, norm_hash bigint NOT NULL,"
    " importance double precision NOT NULL, created_at bigint NOT NULL,"
    " updated_at bigint NOT NULL, accessed_at bigint NOT NULL,"
    " access_count bigint NOT NULL DEFAULT 0, expires_at bigint NOT NULL DEFAULT 0,"
    " invalidated_at bigint NOT NULL DEFAULT 0, superseded_by text,"
    " duplicate_count bigint NOT NULL DEFAULT 0, metadata text, links text,"
    " model text, embedding bytea, UNIQUE(ns, id));"
    "CREATE INDEX memories_by_id ON memories(id);"
    "CREATE INDEX memories_by_norm ON memories(ns, norm_hash);"
    "CREATE TABLE namespaces(ns text PRIMARY KEY, model text, dim integer,"
    " version bigint NOT NULL DEFAULT 0, rows bigint NOT NULL DEFAULT 0,"
    " changes bigint NOT NULL DEFAULT 0);"
    "CREATE TABLE history(seq bigserial PRIMARY KEY, ns text NOT NULL,"
    " id text NOT NULL, at bigint NOT NULL, op text NOT NULL, actor text,"
    " before text, after text);"
    "CREATE INDEX history_by_key ON history(ns, id, seq);"
    "CREATE INDEX history_by_id ON history(id);"
    "CREATE INDEX history_by_ns_seq ON history(ns, seq);"
    /* Every update of a namespace row moves its change counter: the
     * mark other servers compare (pg_changed). */
    "CREATE FUNCTION remem_ns_bump() RETURNS trigger LANGUAGE plpgsql AS"
    " $$BEGIN NEW.changes := OLD.changes + 1; RETURN NEW; END$$;"
    "CREATE TRIGGER namespaces_bu BEFORE UPDATE ON namespaces"
    " FOR EACH ROW EXECUTE FUNCTION remem_ns_bump();"
    "CREATE FUNCTION remem_memories_ai() RETURNS trigger LANGUAGE plpgsql AS"
    " $$BEGIN INSERT INTO namespaces(ns, rows, version) VALUES(NEW.ns, 1, 1)"
    " ON CONFLICT(ns) DO UPDATE SET rows = namespaces.rows + 1,"
    " version = namespaces.version + 1; RETURN NULL; END$$;"
    "CREATE TRIGGER memories_ai AFTER INSERT ON memories"
    " FOR EACH ROW EXECUTE FUNCTION remem_memories_ai();"
    /* Per statement, over the deleted rows: a clear of 100k rows updates
     * its namespace row once, not 100k times in one transaction. */
    "CREATE FUNCTION remem_memories_ad() RETURNS trigger LANGUAGE plpgsql AS"
    " $$BEGIN UPDATE namespaces SET rows = rows - d.n, version = version + d.n"
    " FROM (SELECT ns, count(*) AS n FROM deleted_rows GROUP BY ns) d"
    " WHERE namespaces.ns = d.ns; RETURN NULL; END$$;"
    "CREATE TRIGGER memories_ad AFTER DELETE ON memories"
    " REFERENCING OLD TABLE AS deleted_rows"
    " FOR EACH STATEMENT EXECUTE FUNCTION remem_memories_ad();"
    /* As in SQLite, accessed_at and access_count are left out: a read is
     * not a change. */
    "CREATE FUNCTION remem_memories_au() RETURNS trigger LANGUAGE plpgsql AS"
    " $$BEGIN UPDATE namespaces SET version = version + 1 WHERE ns = NEW.ns;"
    " RETURN NULL; END$$;"
    "CREATE TRIGGER memories_au AFTER UPDATE OF kind, tier, text, importance,"
    " created_at, expires_at, invalidated_at, superseded_by, duplicate_count,"
    " metadata, links, model, embedding ON memories"
    " FOR EACH ROW EXECUTE FUNCTION remem_memories_au();",
    /* 2: rows stay whole in the table's page up to 8 KB. By default a row
     * past 2 KB has its largest value compressed (or moved to the TOAST
     * table): a 384-dimension vector (1,536 bytes) and its text are past
     * it, so every load decompressed each vector, even a dense one that
     * compression saved a few bytes of. A vector is never compressed now
     * and leaves the row only when the row would not fit a page. Rows
     * written before keep their form until rewritten. */
    "ALTER TABLE memories SET (toast_tuple_target = 8160);"
    "ALTER TABLE memories ALTER COLUMN embedding SET STORAGE EXTERNAL;",
};
#define N_MIGRATIONS (int)(sizeof migrations / sizeof migrations[0])

/* The advisory lock key of migrations ("remem" in ASCII). */
#define MIGRATE_LOCK "491496162669"

/* ---- errors ---- */

static int lost(pg_store *s) { return !s->conn || PQstatus(s->conn) != CONNECTION_OK; }

/* The status for a failed result (or a dead connection). */
static int pgfail(pg_store *s, const PGresult *res, const char *what) {
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *msg = res ? PQresultErrorMessage(res) : "";
    if (!msg || !*msg) msg = s->conn ? PQerrorMessage(s->conn) : "no connection";
    if (lost(s) || (state && (strncmp(state, "08", 2) == 0 || strcmp(state, "57P01") == 0 ||
                              strcmp(state, "57P02") == 0 || strcmp(state, "57P03") == 0)))
        return fail(s, REMEM_EBUSY, "%s: PostgreSQL is unavailable (%s); nothing was written", what,
                    msg);
    int rc = REMEM_ESTORE;
    if (state && (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0 ||
                  strcmp(state, "55P03") == 0 || strcmp(state, "57014") == 0))
        rc = REMEM_EBUSY;
    else if (state && strcmp(state, "53200") == 0)
        rc = REMEM_ENOMEM;
    else if (state && (strncmp(state, "53", 2) == 0 || strncmp(state, "58", 2) == 0))
        rc = REMEM_EIO;
    else if (state && strncmp(state, "XX", 2) == 0)
        rc = REMEM_ECORRUPT;
    return fail(s, rc, "%s: %s", what, msg);
}

/* ---- the connection ---- */

static void no_notices(void *arg, const char *msg) {
    (void)arg;
    (void)msg; /* the library never prints */
}

/* A PostgreSQL server process on glibc gives the top of its heap back to
 * the system whenever more than 128 KB of it is free, and takes it again
 * at the next statement: a namespace's load (ten rows, their vectors
 * detoasted and sent) grows the heap by ~136 KB and frees it, so every
 * load paid a brk up, a brk down and the page faults and TLB flushes
 * between (a third of the server's CPU per recall, bench/README.md). glibc
 * raises that threshold by itself to twice the size of the largest mapped
 * block a process has freed: one statement that makes the server allocate
 * and free 2 MB, once per connection, lifts it to 4 MB, and the loads'
 * growth then stays in the heap. Best effort: a server on another
 * allocator just builds a 2 MB string once. Sent at a connection's first
 * load (pg_load), so that connections that never load (a CLI write, an
 * export) do not pay its round trip. (An operator can set the same for
 * the whole server: GLIBC_TUNABLES=glibc.malloc.trim_threshold=...) */
static void raise_trim_threshold(pg_store *s) {
    if (s->heap_raised || !s->conn) return;
    PQclear(PQexec(s->conn, "SELECT length(repeat('x', 2097152))"));
    s->heap_raised = 1;
}

/* (Re)connect, at most once per backoff period. */
static int connect_now(pg_store *s) {
    int64_t now = mono_ms();
    if (s->next_try_ms && now < s->next_try_ms)
        return fail(s, REMEM_EBUSY,
                    "PostgreSQL is unavailable (%s); retrying in %lld ms; nothing was written",
                    s->base.err[0] ? s->base.err : "no connection",
                    (long long)(s->next_try_ms - now));
    if (s->conn) PQfinish(s->conn);
    s->prep_done = 0;   /* a new connection has none */
    s->heap_raised = 0; /* nor its server process's trim threshold lifted */
    /* Keywords before dbname are defaults the URI may override. */
    const char *keys[] = {"connect_timeout", "application_name", "dbname", NULL};
    const char *vals[] = {"5", "remem", s->uri, NULL};
    s->conn = PQconnectdbParams(keys, vals, 1);
    if (!s->conn) return fail(s, REMEM_ENOMEM, "out of memory");
    PQsetNoticeProcessor(s->conn, no_notices, NULL);
    if (PQstatus(s->conn) != CONNECTION_OK) {
        s->backoff_ms = s->backoff_ms ? s->backoff_ms * 2 : 100;
        if (s->backoff_ms > 5000) s->backoff_ms = 5000;
        s->next_try_ms = now + s->backoff_ms;
        char msg[400];
        snprintf(msg, sizeof msg, "%s", PQerrorMessage(s->conn));
        for (char *p = msg; *p; p++)
            if (*p == '\n' || *p == '\t') *p = ' ';
        return fail(s, REMEM_EBUSY, "PostgreSQL is unavailable: %s", msg);
    }
    s->backoff_ms = 0;
    s->next_try_ms = 0;
    return REMEM_OK;
}

/* Start the transaction begin() promised, on the first statement in it;
 * extra (remem's own SQL, with any text in it escaped) rides in the same
 * round trip. *last (may be NULL) gets the last statement's result. */
static int start_tx_last(pg_store *s, const char *extra, PGresult **last) {
    size_t cap = 96 + (extra ? strlen(extra) : 0);
    char *sql = malloc(cap);
    if (!sql) return fail(s, REMEM_ENOMEM, "out of memory");
    snprintf(sql, cap, "BEGIN%s; SET LOCAL lock_timeout = %d%s%s", s->read_only ? " READ ONLY" : "",
             s->busy_ms, extra ? "; " : "", extra ? extra : "");
    int rc = REMEM_EBUSY;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (lost(s) && (rc = connect_now(s))) break;
        PGresult *res = PQexec(s->conn, sql);
        int ok = PQresultStatus(res) == PGRES_COMMAND_OK || PQresultStatus(res) == PGRES_TUPLES_OK;
        if (ok) {
            if (last)
                *last = res;
            else
                PQclear(res);
            s->tx_started = 1;
            rc = REMEM_OK;
            break;
        }
        /* A connection that died while idle (a restarted server) is
         * replaced once: nothing had begun. */
        if (!lost(s) || attempt == 1) {
            rc = pgfail(s, res, "beginning a transaction");
            PQclear(res);
            break;
        }
        PQclear(res);
        rc = REMEM_EBUSY;
    }
    free(sql);
    return rc;
}

static int start_tx_with(pg_store *s, const char *extra) { return start_tx_last(s, extra, NULL); }

static int start_tx(pg_store *s) { return start_tx_with(s, NULL); }

static int flush_touches(pg_store *s);
static void drop_history(pg_store *s);
static int flush_held(pg_store *s);
static void drop_held(pg_store *s);

/* Run one statement; text parameters except those fmts marks binary;
 * results in binary. NULL with the status in *rc on failure. */
static PGresult *run(pg_store *s, const char *sql, int n, const char *const *vals, const int *lens,
                     const int *fmts, const char *what, int *rc) {
    *rc = REMEM_OK;
    if (s->in_tx && !s->tx_started && (*rc = start_tx(s))) return NULL;
    /* What a batch holds goes first: every statement sees it. */
    if ((*rc = flush_held(s))) return NULL;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!s->in_tx && lost(s) && (*rc = connect_now(s))) return NULL;
        PGresult *res = PQexecParams(s->conn, sql, n, NULL, vals, lens, fmts, 1);
        ExecStatusType st = PQresultStatus(res);
        if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return res;
        /* Outside a transaction a statement on a dead connection runs
         * again on a new one; inside, the transaction is gone. */
        if (s->in_tx || !lost(s) || attempt == 1) {
            *rc = pgfail(s, res, what);
            PQclear(res);
            return NULL;
        }
        PQclear(res);
    }
    *rc = REMEM_EBUSY;
    return NULL;
}

/* ---- values ---- */

static int64_t get_i64(const PGresult *r, int row, int col) {
    if (PQgetisnull(r, row, col)) return 0;
    const char *v = PQgetvalue(r, row, col);
    int len = PQgetlength(r, row, col);
    if (PQfformat(r, col) == 0) return strtoll(v, NULL, 10);
    if (len == 8) {
        uint64_t be;
        memcpy(&be, v, 8);
        return (int64_t)be64toh(be);
    }
    if (len == 4) {
        uint32_t be;
        memcpy(&be, v, 4);
        return (int32_t)be32toh(be);
    }
    if (len == 2) {
        uint16_t be;
        memcpy(&be, v, 2);
        return (int16_t)be16toh(be);
    }
    return 0;
}

static double get_f64(const PGresult *r, int row, int col) {
    if (PQgetisnull(r, row, col)) return 0;
    const char *v = PQgetvalue(r, row, col);
    if (PQfformat(r, col) == 0) return strtod(v, NULL);
    uint64_t be;
    memcpy(&be, v, 8);
    be = be64toh(be);
    double d;
    memcpy(&d, &be, 8);
    return d;
}

static const char *get_text(const PGresult *r, int row, int col) {
    return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

typedef struct params {
    const char *v[24];
    int len[24], fmt[24];
    char num[24][32];
    int n;
} params;

static void p_text(params *p, const char *t) {
    p->v[p->n] = t;
    p->len[p->n] = 0;
    p->fmt[p->n++] = 0;
}
static void p_i64(params *p, int64_t x) {
    snprintf(p->num[p->n], sizeof p->num[0], "%lld", (long long)x);
    p_text(p, p->num[p->n]);
}
static void p_f64(params *p, double x) {
    snprintf(p->num[p->n], sizeof p->num[0], "%.17g", x);
    p_text(p, p->num[p->n]);
}
static void p_bytes(params *p, const void *b, int n) {
    p->v[p->n] = b;
    p->len[p->n] = n;
    p->fmt[p->n++] = 1;
}

static PGresult *run_p(pg_store *s, const char *sql, params *p, const char *what, int *rc) {
    return run(s, sql, p->n, p->v, p->len, p->fmt, what, rc);
}

/* ---- namespace locks ---- */

static uint64_t ns_key(const char *ns) {
    char buf[512];
    int n = snprintf(buf, sizeof buf, "remem-ns:%s", ns);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof buf) n = sizeof buf - 1;
    uint64_t h = util_hash64(buf, (size_t)n);
    /* Long names hash on their whole text. */
    if (strlen(ns) > 400) h ^= util_hash64(ns, strlen(ns));
    return h;
}

/* The transaction's entry for ns (NULL: none). */
static ns_row *ns_row_find(pg_store *s, const char *ns) {
    for (int i = 0; i < s->n_rows_seen; i++)
        if (!strcmp(s->rows_seen[i].ns, ns)) return &s->rows_seen[i];
    return NULL;
}

static void ns_rows_clear(pg_store *s) {
    for (int i = 0; i < s->n_rows_seen; i++) free(s->rows_seen[i].ns);
    s->n_rows_seen = 0;
}

/* Forget what we knew of every namespace row (a write that moves one
 * we cannot name: by rowid, a clear). A held model stays held. */
static void ns_rows_forget(pg_store *s) {
    for (int i = 0; i < s->n_rows_seen; i++) s->rows_seen[i].state = 0;
}

/* The entry of ns, made (state 0) when there is none; NULL out of memory. */
static ns_row *ns_row_make(pg_store *s, const char *ns) {
    ns_row *r = ns_row_find(s, ns);
    if (r) return r;
    if (s->n_rows_seen == s->cap_rows_seen) {
        int cap = s->cap_rows_seen ? s->cap_rows_seen * 2 : 16;
        ns_row *t = realloc(s->rows_seen, (size_t)cap * sizeof *t);
        if (!t) return NULL;
        s->rows_seen = t;
        s->cap_rows_seen = cap;
    }
    r = &s->rows_seen[s->n_rows_seen];
    memset(r, 0, sizeof *r);
    if (!(r->ns = strdup(ns))) return NULL;
    s->n_rows_seen++;
    return r;
}

/* Row i of res (model, dim, version, rows from col on; i < 0: no such
 * row) as ns's. */
static void ns_row_put(pg_store *s, const char *ns, const PGresult *res, int i, int col) {
    ns_row *r = ns_row_make(s, ns);
    if (!r) return;
    r->state = i >= 0 ? 1 : 2;
    if (i < 0) return;
    snprintf(r->model, sizeof r->model, "%s", PQgetvalue(res, i, col));
    r->dim = (int)get_i64(res, i, col + 1);
    r->version = get_i64(res, i, col + 2);
    r->rows = get_i64(res, i, col + 3);
}

/* Take ns's row from res (model, dim, version, rows; no row: none). */
static void ns_row_take(pg_store *s, const char *ns, const PGresult *res) {
    if (PQresultStatus(res) != PGRES_TUPLES_OK || PQnfields(res) != 4) {
        ns_row *r = ns_row_find(s, ns);
        if (r) r->state = 0;
        return;
    }
    ns_row_put(s, ns, res, PQntuples(res) ? 0 : -1, 0);
}

#define NS_ROW_SQL "SELECT coalesce(model,''), coalesce(dim,0), version, rows FROM namespaces"

static int has_lock(const pg_store *s, uint64_t k) {
    for (int i = 0; i < s->n_locks; i++)
        if (s->locks[i] == k) return 1;
    return 0;
}

/* Remember that this transaction holds k (0, or -1 out of memory: the
 * lock is then taken again next time, which costs a round trip only). */
static int add_lock(pg_store *s, uint64_t k) {
    if (s->n_locks == s->cap_locks) {
        int cap = s->cap_locks ? s->cap_locks * 2 : 16;
        uint64_t *t = realloc(s->locks, (size_t)cap * sizeof *t);
        if (!t) return -1;
        s->locks = t;
        s->cap_locks = cap;
    }
    s->locks[s->n_locks++] = k;
    return 0;
}

static int flush_held(pg_store *s);

/* Inside a write transaction: hold ns's lock until it ends, and read its
 * namespace row in the same round trip (the lock makes it ours until
 * then: every writer of ns waits for it). Outside one, nothing (a read
 * sees committed data). */
static int ns_lock(pg_store *s, const char *ns) {
    if (!s->in_tx || !ns) return REMEM_OK;
    uint64_t k = ns_key(ns);
    if (has_lock(s, k)) return REMEM_OK;
    if (lost(s) && s->tx_started) return pgfail(s, NULL, "locking a namespace");
    int rc = flush_held(s);
    if (rc) return rc;
    char *lit = s->conn && !lost(s) ? PQescapeLiteral(s->conn, ns, strlen(ns)) : NULL;
    size_t cap = 160 + (lit ? strlen(lit) : 0);
    char *sql = malloc(cap);
    if (!sql) {
        PQfreemem(lit);
        return fail(s, REMEM_ENOMEM, "out of memory");
    }
    if (lit)
        snprintf(sql, cap, "SELECT pg_advisory_xact_lock(%lld); " NS_ROW_SQL " WHERE ns=%s",
                 (long long)(int64_t)k, lit);
    else
        snprintf(sql, cap, "SELECT pg_advisory_xact_lock(%lld)", (long long)(int64_t)k);
    PGresult *res = NULL;
    if (!s->tx_started) {
        /* The first lock of a transaction goes with its BEGIN. */
        rc = start_tx_last(s, sql, &res);
    } else {
        res = PQexec(s->conn, sql);
        ExecStatusType st = PQresultStatus(res);
        rc = st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK ? REMEM_OK
                                                             : pgfail(s, res, "locking a namespace");
    }
    if (!rc && lit) ns_row_take(s, ns, res);
    PQclear(res);
    PQfreemem(lit);
    free(sql);
    if (!rc) add_lock(s, k);
    return rc;
}

/* ---- change mark ---- */

static int change_mark(pg_store *s, int64_t *mark) {
    int rc;
    PGresult *res = run(s, "SELECT (coalesce(sum(changes),0) + count(*))::bigint FROM namespaces",
                        0, NULL, NULL, NULL, "reading the change mark", &rc);
    if (!res) return rc;
    *mark = PQntuples(res) ? get_i64(res, 0, 0) : 0;
    PQclear(res);
    return REMEM_OK;
}

static int pg_changed(store *base) {
    pg_store *s = pg(base);
    int64_t m;
    s->watching = 1; /* from now on commits keep the mark (pg_commit) */
    if (s->in_tx || change_mark(s, &m)) return 0;
    int changed = m != s->seen;
    s->seen = m;
    return changed;
}

/* ---- open, migrate, close ---- */

static int exec_simple(pg_store *s, const char *sql, const char *what) {
    PGresult *res = PQexec(s->conn, sql);
    int rc = PQresultStatus(res) == PGRES_COMMAND_OK || PQresultStatus(res) == PGRES_TUPLES_OK
                 ? REMEM_OK
                 : pgfail(s, res, what);
    PQclear(res);
    return rc;
}

static int schema_version(pg_store *s, int *v) {
    *v = 0;
    PGresult *res = PQexec(s->conn, "SELECT value FROM remem_meta WHERE key='schema_version'");
    if (PQresultStatus(res) != PGRES_TUPLES_OK) {
        int rc = pgfail(s, res, "reading the schema version");
        PQclear(res);
        return rc;
    }
    if (PQntuples(res)) *v = atoi(PQgetvalue(res, 0, 0));
    PQclear(res);
    return REMEM_OK;
}

static int migrate(pg_store *s) {
    int rc = exec_simple(s,
                         "BEGIN; SELECT pg_advisory_xact_lock(" MIGRATE_LOCK ");"
                         " CREATE TABLE IF NOT EXISTS remem_meta(key text PRIMARY KEY,"
                         " value text NOT NULL)",
                         "preparing the schema");
    int v = 0;
    if (!rc) rc = schema_version(s, &v);
    if (!rc && v > N_MIGRATIONS)
        rc = fail(s, REMEM_ECORRUPT,
                  "the database has remem schema version %d; this remem knows up to %d "
                  "(a newer remem wrote it)",
                  v, N_MIGRATIONS);
    for (; !rc && v < N_MIGRATIONS; v++) {
        rc = exec_simple(s, migrations[v], "migrating the schema");
        char sql[160];
        snprintf(sql, sizeof sql,
                 "INSERT INTO remem_meta VALUES('schema_version','%d') ON CONFLICT(key)"
                 " DO UPDATE SET value=EXCLUDED.value",
                 v + 1);
        if (!rc) rc = exec_simple(s, sql, "migrating the schema");
    }
    if (!rc) return exec_simple(s, "COMMIT", "migrating the schema");
    PQclear(PQexec(s->conn, "ROLLBACK"));
    return rc;
}

static const store_ops pg_ops;

static void pg_close(store *base) {
    pg_store *s = pg(base);
    if (!s) return;
    if (s->conn && !s->in_tx) flush_touches(s);
    if (s->conn) PQfinish(s->conn);
    drop_history(s);
    drop_held(s);
    ns_rows_clear(s);
    free(s->hist);
    free(s->held);
    free(s->bumps);
    free(s->pool);
    free(s->locks);
    free(s->rows_seen);
    free(s->touches);
    free(s->uri);
    free(s);
}

static int pg_open(const char *uri, const store_config *cfg, store **out, char *err,
                   size_t errcap) {
    *out = NULL;
    pg_store *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errcap, "out of memory");
        return REMEM_ENOMEM;
    }
    s->base.ops = &pg_ops;
    s->uri = strdup(uri);
    if (!s->uri) {
        free(s);
        snprintf(err, errcap, "out of memory");
        return REMEM_ENOMEM;
    }
    /* Shown in stats and messages: user:***@ for a password. */
    const char *sep = strstr(uri, "://");
    const char *at = sep ? strchr(sep + 3, '@') : NULL;
    const char *colon = sep ? strchr(sep + 3, ':') : NULL;
    const char *slash = sep ? strchr(sep + 3, '/') : NULL;
    if (at && colon && colon < at && !(slash && slash < at))
        snprintf(s->base.path, sizeof s->base.path, "%.*s***%s", (int)(colon + 1 - uri), uri, at);
    else
        snprintf(s->base.path, sizeof s->base.path, "%s", uri);
    s->read_only = cfg && cfg->read_only;
    /* REMEM_PG_PREPARE=0: every statement unnamed (a pooler that loses
     * prepared statements without saying so). */
    const char *prep = getenv("REMEM_PG_PREPARE");
    s->prep_off = prep && !strcmp(prep, "0");
    s->busy_ms = cfg && cfg->busy_timeout_ms > 0 ? cfg->busy_timeout_ms : 10000;
    int rc = connect_now(s);
    if (!rc && !s->read_only) rc = migrate(s);
    s->seen = -1; /* the mark is read on the first `changed`, not by every open */
    if (rc) {
        snprintf(err, errcap, "%s", s->base.err);
        pg_close(&s->base);
        return rc;
    }
    s->base.err[0] = '\0';
    *out = &s->base;
    return REMEM_OK;
}

/* ---- transactions ---- */

static int pg_begin(store *base) {
    pg_store *s = pg(base);
    if (s->in_tx) return fail(s, REMEM_EINVAL, "a transaction is already open");
    /* BEGIN goes with the first statement (start_tx): a transaction that
     * only buffers touches costs no round trip. */
    s->in_tx = 1;
    s->tx_started = 0;
    s->n_locks = 0;
    return REMEM_OK;
}

static void drop_history(pg_store *s) {
    for (size_t i = 0; i < s->n_hist; i++)
        for (int k = 0; k < 6; k++) free(s->hist[i].f[k]);
    s->n_hist = 0;
}

static int flush_history(pg_store *s);

static void drop_held(pg_store *s) {
    for (size_t i = 0; i < s->n_held; i++) {
        store_row_clear(&s->held[i].r);
        free(s->held[i].norm);
    }
    s->n_held = 0;
    for (size_t i = 0; i < s->n_known; i++) store_row_clear(&s->known[i].r);
    free(s->known);
    s->known = NULL;
    s->n_known = 0;
    s->n_bumps = 0;
}

static void end_tx(pg_store *s) {
    drop_history(s);
    drop_held(s);
    ns_rows_clear(s);
    s->batch = 0;
    s->n_pool = s->next_pool = 0; /* rowids drawn and not used stay unused: gaps */
    s->in_tx = 0;
    s->tx_started = 0;
    s->n_locks = 0;
}

/* COMMIT alone, for a handle that does not watch the change mark. */
static int commit_plain(pg_store *s) {
    PGresult *res = PQexec(s->conn, "COMMIT");
    int rc = PQresultStatus(res) == PGRES_COMMAND_OK ? REMEM_OK : pgfail(s, res, "committing");
    PQclear(res);
    if (rc && !lost(s)) PQclear(PQexec(s->conn, "ROLLBACK"));
    end_tx(s);
    if (!rc) s->base.err[0] = '\0';
    return rc;
}

static void pg_rollback(store *base);
static int pg_ns_info(store *base, const char *ns, char *model, size_t model_cap, int *dim,
                      int64_t *version, int64_t *rows);
static int pg_history_max(store *base, const char *ns, int64_t *seq);

static int pg_commit(store *base) {
    pg_store *s = pg(base);
    if (!s->in_tx) return fail(s, REMEM_EINVAL, "no transaction is open");
    int rc = flush_held(s);
    if (!rc) rc = flush_history(s);
    if (!rc && s->n_touches &&
        (s->n_touches >= TOUCH_BATCH || mono_ms() - s->touch_since >= TOUCH_AGE_MS)) {
        /* A transaction that only touched (a recall's) sends the UPDATE on
         * its own, one round trip, not BEGIN, UPDATE and COMMIT. */
        int alone = !s->tx_started;
        if (alone) s->in_tx = 0;
        rc = flush_touches(s);
        if (alone) s->in_tx = 1;
    }
    if (!s->tx_started || rc) {
        if (rc && s->tx_started) PQclear(PQexec(s->conn, "ROLLBACK"));
        end_tx(s);
        return rc;
    }
    if (!s->watching) return commit_plain(s);
    /* The mark just before COMMIT holds our changes and what others
     * committed before; if it has not moved just after, nobody else
     * committed in between and the new mark is ours alone. (A handle
     * that never asks `changed`, as the engine, whose caches compare
     * each namespace's version instead, pays for no mark: the sum runs
     * over every namespace.) */
    int64_t before = 0, after = 0;
    /* Both in one round trip; an error in the first skips the second. */
    int got_mark = 0, committed = 0;
    PGresult *res;
    if (!PQsendQuery(s->conn, "SELECT (coalesce(sum(changes),0) + count(*))::bigint FROM "
                              "namespaces; COMMIT")) {
        rc = pgfail(s, NULL, "committing");
    } else {
        while ((res = PQgetResult(s->conn))) {
            ExecStatusType st = PQresultStatus(res);
            if (st == PGRES_TUPLES_OK && !got_mark) {
                before = PQntuples(res) ? get_i64(res, 0, 0) : 0;
                got_mark = 1;
            } else if (st == PGRES_COMMAND_OK && got_mark) {
                committed = 1;
            } else if (!rc) {
                rc = pgfail(s, res, "committing");
            }
            PQclear(res);
        }
        if (!committed && !rc) rc = pgfail(s, NULL, "committing");
    }
    if (rc) {
        if (!lost(s)) PQclear(PQexec(s->conn, "ROLLBACK"));
        end_tx(s);
        return rc;
    }
    end_tx(s);
    if (change_mark(s, &after) == REMEM_OK && after == before)
        s->seen = after;
    else
        s->seen = -1; /* the next look reports a change */
    s->base.err[0] = '\0';
    return REMEM_OK;
}

/* ---- commit with the namespaces' state (one round trip) ---- */

/* Append text to *buf (grown); -1 when out of memory. */
static int sql_add(char **buf, size_t *len, size_t *cap, const char *text) {
    size_t n = strlen(text);
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? *cap : 1024;
        while (c < *len + n + 1) c *= 2;
        char *b = realloc(*buf, c);
        if (!b) return -1;
        *buf = b;
        *cap = c;
    }
    memcpy(*buf + *len, text, n + 1);
    *len += n;
    return 0;
}

/* Append v as an SQL literal (NULL: NULL). */
static int sql_lit(pg_store *s, char **buf, size_t *len, size_t *cap, const char *v) {
    if (!v) return sql_add(buf, len, cap, "NULL");
    char *lit = PQescapeLiteral(s->conn, v, strlen(v));
    int bad = !lit || sql_add(buf, len, cap, lit);
    PQfreemem(lit);
    return bad ? -1 : 0;
}

/* The held history rows as one INSERT ... RETURNING ns, seq, then the
 * newest seq of each namespace of ns[] that has none held, then COMMIT:
 * one simple query (one round trip, one line in the server's log). */
static char *report_sql(pg_store *s, const char *const *ns, size_t n, const int *held) {
    char *b = NULL, num[32];
    size_t len = 0, cap = 0;
    int bad = 0;
    if (s->n_hist) {
        bad |= sql_add(&b, &len, &cap,
                       "INSERT INTO history(ns, id, at, op, actor, before, after) VALUES");
        for (size_t i = 0; i < s->n_hist && !bad; i++) {
            hist_ent *e = &s->hist[i];
            snprintf(num, sizeof num, ",%lld,", (long long)e->at);
            bad |= sql_add(&b, &len, &cap, i ? ",(" : "(") || sql_lit(s, &b, &len, &cap, e->f[0]) ||
                   sql_add(&b, &len, &cap, ",") || sql_lit(s, &b, &len, &cap, e->f[1]) ||
                   sql_add(&b, &len, &cap, num);
            for (int k = 2; k < 6 && !bad; k++)
                bad |= (k > 2 && sql_add(&b, &len, &cap, ",")) ||
                       sql_lit(s, &b, &len, &cap, e->f[k]);
            bad |= sql_add(&b, &len, &cap, ")");
        }
        bad |= sql_add(&b, &len, &cap, " RETURNING ns, seq; ");
    }
    int any = 0;
    for (size_t i = 0; i < n && !bad; i++) {
        if (held[i]) continue;
        bad |= sql_add(&b, &len, &cap,
                       any ? "," : "SELECT ns, max(seq) FROM history WHERE ns IN (") ||
               sql_lit(s, &b, &len, &cap, ns[i]);
        any = 1;
    }
    if (any) bad |= sql_add(&b, &len, &cap, ") GROUP BY ns; ");
    bad |= sql_add(&b, &len, &cap, "COMMIT");
    if (bad) {
        free(b);
        return NULL;
    }
    return b;
}

/* Rows of (ns, seq) raise the newest seq of their namespace in hist[]. */
static void take_seqs(const PGresult *res, const char *const *ns, size_t n, int64_t *hist) {
    for (int r = 0; r < PQntuples(res); r++)
        for (size_t i = 0; i < n; i++)
            if (!strcmp(PQgetvalue(res, r, 0), ns[i])) {
                int64_t v = get_i64(res, r, 1);
                if (v > hist[i]) hist[i] = v;
            }
}

/* The three calls one after another, when one round trip cannot do. */
static int report_slowly(pg_store *s, const char *const *ns, size_t n, int64_t *version,
                         int64_t *hist) {
    int rc = REMEM_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        rc = pg_ns_info(&s->base, ns[i], NULL, 0, NULL, &version[i], NULL);
        if (rc == REMEM_ENOTFOUND) rc = REMEM_OK;
        if (!rc) rc = pg_history_max(&s->base, ns[i], &hist[i]);
    }
    if (rc) {
        pg_rollback(&s->base);
        return rc;
    }
    return pg_commit(&s->base);
}

static int pg_commit_report(store *base, const char *const *ns, size_t n, int64_t *version,
                            int64_t *hist) {
    pg_store *s = pg(base);
    if (!s->in_tx) return fail(s, REMEM_EINVAL, "no transaction is open");
    /* A batch's held rows, and history beyond what one statement takes,
     * go before the report. */
    int rc = flush_held(s);
    if (!rc && s->n_hist > 1000) rc = flush_history(s);
    int *held = calloc(n ? n : 1, sizeof *held);
    if (!rc && !held) rc = fail(s, REMEM_ENOMEM, "out of memory");
    if (rc) {
        free(held);
        pg_rollback(base);
        return rc;
    }
    int fast = s->tx_started && !s->watching && !s->n_touches && !lost(s);
    for (size_t i = 0; i < n && fast; i++) {
        const ns_row *r = ns_row_find(s, ns[i]);
        fast = r && r->state != 0;
        if (fast) version[i] = r->state == 1 ? r->version : 0;
        hist[i] = 0;
        for (size_t h = 0; h < s->n_hist && !held[i]; h++) held[i] = !strcmp(s->hist[h].f[0], ns[i]);
    }
    char *sql = fast ? report_sql(s, ns, n, held) : NULL;
    free(held);
    if (!fast) return report_slowly(s, ns, n, version, hist);
    if (!sql) {
        pg_rollback(base);
        return fail(s, REMEM_ENOMEM, "out of memory");
    }
    int committed = 0;
    if (!PQsendQuery(s->conn, sql)) rc = pgfail(s, NULL, "committing");
    free(sql);
    PGresult *res;
    while (!rc && (res = PQgetResult(s->conn))) {
        ExecStatusType st = PQresultStatus(res);
        if (st == PGRES_TUPLES_OK)
            take_seqs(res, ns, n, hist);
        else if (st == PGRES_COMMAND_OK)
            committed = 1;
        else
            rc = pgfail(s, res, "committing");
        PQclear(res);
    }
    while (rc && (res = PQgetResult(s->conn))) PQclear(res); /* drain */
    if (!rc && !committed) rc = pgfail(s, NULL, "committing");
    if (rc && !lost(s)) PQclear(PQexec(s->conn, "ROLLBACK"));
    end_tx(s);
    if (!rc) s->base.err[0] = '\0';
    return rc;
}

static void pg_rollback(store *base) {
    pg_store *s = pg(base);
    if (!s->in_tx) return;
    if (s->tx_started && !lost(s)) PQclear(PQexec(s->conn, "ROLLBACK"));
    end_tx(s);
}

/* ---- rows ---- */

#define ROW_COLS                                                             \
    "rowid, ns, id, kind, tier, text, importance, created_at, updated_at, "  \
    "accessed_at, access_count, expires_at, invalidated_at, superseded_by, " \
    "duplicate_count, metadata, links, model, embedding"

/* ROW_COLS, then the namespace row's model, dim, version, rows and the
 * newest history seq on every row: one statement, so one snapshot and
 * one round trip. A namespace row without memories gives one row whose
 * memory columns are NULL; no namespace row, none. */
#define LOAD_SQL                                                                         \
    "SELECT " ROW_COLS ", n.n_model, n.n_dim, n.n_version, n.n_rows, n.n_seq"            \
    " FROM (SELECT coalesce(model,'') AS n_model, coalesce(dim,0) AS n_dim,"             \
    " version AS n_version, rows AS n_rows,"                                             \
    " (SELECT coalesce(max(seq),0) FROM history WHERE ns=$1) AS n_seq"                   \
    " FROM namespaces WHERE ns=$1) n LEFT JOIN memories ON memories.ns=$1"               \
    " ORDER BY memories.rowid"
#define LOAD_NS_COL 19

/* The statements of a recall, kept prepared (named) on each connection
 * outside transactions: parsed and planned once per connection instead of
 * at every call (planning the load's join is ~0.5 ms of the server's
 * CPU). Prepared on first use (one round trip, once per connection). A
 * pooler that moves a session's statements between server connections
 * (PgBouncer in transaction mode without max_prepared_statements) answers
 * "prepared statement does not exist": the handle then sends them unnamed
 * from then on, as every other statement is. The names carry a version:
 * a change of the text gets a new name. */
enum { PREP_LOAD, PREP_NS_ROW, N_PREP };
static const char *const prep_sql[N_PREP] = {LOAD_SQL, NS_ROW_SQL " WHERE ns=$1"};
static const char *const prep_name[N_PREP] = {"remem_load_1", "remem_ns_row_1"};

/* The name of statement i, prepared on this connection (preparing it
 * now), or NULL: send it unnamed (inside a transaction, where a failure
 * would abort it; a pooler; a failure). */
static const char *prepared(pg_store *s, int i) {
    if (s->prep_off || s->in_tx || lost(s)) return NULL;
    if (s->prep_done & (1u << i)) return prep_name[i];
    PGresult *res = PQprepare(s->conn, prep_name[i], prep_sql[i], 1, NULL);
    const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
    /* 42P05: there already (a pooler's server connection another client
     * of this remem prepared it on: the same text under the same name). */
    int ok = PQresultStatus(res) == PGRES_COMMAND_OK || (state && !strcmp(state, "42P05"));
    PQclear(res);
    if (!ok) {
        s->prep_off = !lost(s); /* a dead connection is replaced, then tried again */
        return NULL;
    }
    s->prep_done |= 1u << i;
    return prep_name[i];
}

/* A failed prepared statement whose name the server did not know (26000:
 * a pooler): 1, and the handle sends every statement unnamed from now. */
static int prep_unknown(pg_store *s, const PGresult *res) {
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    if (!state || strcmp(state, "26000") != 0) return 0;
    s->prep_off = 1;
    return 1;
}

/* run_p of statement i, prepared where it can be (prepared). */
static PGresult *run_prep(pg_store *s, int i, params *p, const char *what, int *rc) {
    const char *name = prepared(s, i);
    if (name) {
        PGresult *res = PQexecPrepared(s->conn, name, p->n, p->v, p->len, p->fmt, 1);
        ExecStatusType st = PQresultStatus(res);
        if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
            *rc = REMEM_OK;
            return res;
        }
        /* A pooler, or a dead connection: run sends it unnamed (on a new
         * connection). Any other failure is the statement's. */
        if (!prep_unknown(s, res) && !lost(s)) {
            *rc = pgfail(s, res, what);
            PQclear(res);
            return NULL;
        }
        PQclear(res);
    }
    return run_p(s, prep_sql[i], p, what, rc);
}

/* Point r at row i of res (ROW_COLS order) without copying. */
static void decode_row(const PGresult *res, int i, int with_vec, store_row *r) {
    memset(r, 0, sizeof *r);
    r->rowid = get_i64(res, i, 0);
    r->m.ns = get_text(res, i, 1);
    r->m.id = get_text(res, i, 2);
    r->m.kind = get_text(res, i, 3);
    r->m.tier = get_text(res, i, 4);
    r->m.text = get_text(res, i, 5);
    r->m.importance = get_f64(res, i, 6);
    r->m.created_at = get_i64(res, i, 7);
    r->m.updated_at = get_i64(res, i, 8);
    r->m.accessed_at = get_i64(res, i, 9);
    r->m.access_count = get_i64(res, i, 10);
    r->m.expires_at = get_i64(res, i, 11);
    r->m.invalidated_at = get_i64(res, i, 12);
    r->m.superseded_by = get_text(res, i, 13);
    r->m.duplicate_count = get_i64(res, i, 14);
    r->m.metadata = get_text(res, i, 15);
    r->m.links = get_text(res, i, 16);
    r->m.model = get_text(res, i, 17);
    int bytes = PQgetisnull(res, i, 18) ? 0 : PQgetlength(res, i, 18);
    r->m.dim = bytes / (int)sizeof(float);
    if (with_vec && r->m.dim > 0) r->m.vector = (const float *)(const void *)PQgetvalue(res, i, 18);
}

static int copy_row(pg_store *s, const PGresult *res, int i, int with_vec, store_row *out,
                    const char *what) {
    store_row row;
    decode_row(res, i, with_vec, &row);
    if (store_row_copy(out, &row)) return fail(s, REMEM_ENOMEM, "out of memory reading %s", what);
    return REMEM_OK;
}

static int pg_find(store *base, const char *ns, const char *id, int with_vec, store_row *out) {
    pg_store *s = pg(base);
    memset(out, 0, sizeof *out);
    int rc = flush_touches(s);
    if (!rc && ns) rc = ns_lock(s, ns);
    if (rc) return rc;
    params p = {.n = 0};
    PGresult *res;
    if (ns) {
        p_text(&p, ns);
        p_text(&p, id);
        res = run_p(s, "SELECT " ROW_COLS " FROM memories WHERE ns=$1 AND id=$2", &p,
                    "reading a memory", &rc);
    } else {
        p_text(&p, id);
        res = run_p(s, "SELECT " ROW_COLS " FROM memories WHERE id=$1 LIMIT 2", &p,
                    "reading a memory", &rc);
    }
    if (!res) return rc;
    int n = PQntuples(res);
    if (n == 0)
        rc = fail(s, REMEM_ENOTFOUND, "no memory %s%s%.200s", ns ? ns : "", ns ? "/" : "", id);
    else if (n > 1)
        rc = fail(s, REMEM_EAMBIGUOUS, "id %.200s exists in several namespaces; name one", id);
    else
        rc = copy_row(s, res, 0, with_vec, out, "a memory");
    PQclear(res);
    return rc;
}

static held_row *held_find(pg_store *s, int64_t rowid, int *known);

static int pg_get_rowid(store *base, int64_t rowid, int with_vec, store_row *out) {
    pg_store *s = pg(base);
    memset(out, 0, sizeof *out);
    int known;
    const held_row *e = held_find(s, rowid, &known);
    if (e) { /* a row the batch holds or read: as the database would answer */
        store_row t = e->r;
        if (!with_vec) t.m.vector = NULL;
        return store_row_copy(out, &t) ? fail(s, REMEM_ENOMEM, "out of memory") : REMEM_OK;
    }
    int rc = flush_touches(s);
    if (rc) return rc;
    params p = {.n = 0};
    p_i64(&p, rowid);
    PGresult *res =
        run_p(s, "SELECT " ROW_COLS " FROM memories WHERE rowid=$1", &p, "reading a memory", &rc);
    if (!res) return rc;
    rc = PQntuples(res) ? copy_row(s, res, 0, with_vec, out, "a memory")
                        : fail(s, REMEM_ENOTFOUND, "no such row");
    PQclear(res);
    return rc;
}

/* A row of ns with this normalised text, under the namespace's lock: any
 * (after < 0), or the first after rowid `after`. 0 in *rowid when none. */
static int dup_lookup(pg_store *s, const char *ns, uint64_t h, const char *norm, int64_t after,
                      int64_t *rowid) {
    *rowid = 0;
    int rc = ns_lock(s, ns);
    if (rc) return rc;
    params p = {.n = 0};
    p_text(&p, ns);
    p_i64(&p, (int64_t)h);
    p_text(&p, norm);
    if (after >= 0) p_i64(&p, after);
    PGresult *res = run_p(s,
                          after < 0 ? "SELECT rowid FROM memories WHERE ns=$1 AND norm_hash=$2 "
                                      "AND norm=$3"
                                    : "SELECT rowid FROM memories WHERE ns=$1 AND norm_hash=$2 "
                                      "AND norm=$3 AND rowid>$4 ORDER BY rowid LIMIT 1",
                          &p, "duplicate lookup", &rc);
    if (!res) return rc;
    if (PQntuples(res)) *rowid = get_i64(res, 0, 0);
    PQclear(res);
    return REMEM_OK;
}

static int pg_find_dup(store *base, const char *ns, uint64_t h, const char *norm, int64_t *rowid) {
    return dup_lookup(pg(base), ns, h, norm, -1, rowid);
}

static int pg_find_dup_after(store *base, const char *ns, uint64_t h, const char *norm,
                             int64_t after, int64_t *rowid) {
    return dup_lookup(pg(base), ns, h, norm, after < 0 ? 0 : after, rowid);
}

static void p_memory(params *p, const remem_memory *m, const char *norm, uint64_t h) {
    p_text(p, m->ns);
    p_text(p, m->id);
    p_text(p, m->kind);
    p_text(p, m->tier);
    p_text(p, m->text);
    p_text(p, norm);
    p_i64(p, (int64_t)h);
    p_f64(p, m->importance);
    p_i64(p, m->created_at);
    p_i64(p, m->updated_at);
    p_i64(p, m->accessed_at);
    p_i64(p, m->access_count);
    p_i64(p, m->expires_at);
    p_i64(p, m->invalidated_at);
    p_text(p, m->superseded_by);
    p_i64(p, m->duplicate_count);
    p_text(p, m->metadata);
    p_text(p, m->links);
    p_text(p, m->vector ? m->model : NULL);
    if (m->vector)
        p_bytes(p, m->vector, m->dim * (int)sizeof(float));
    else
        p_text(p, NULL);
}

static int hold_insert(pg_store *s, const remem_memory *m, const char *norm, uint64_t h,
                       int64_t *rowid);
static int insert_now(pg_store *s, const remem_memory *m, const char *norm, uint64_t h,
                      int64_t *rowid);

/* A new row: at once, or in a batch held until the next statement. */
static int pg_insert(store *base, const remem_memory *m, const char *norm, uint64_t h,
                     int64_t *rowid) {
    pg_store *s = pg(base);
    int rc = ns_lock(s, m->ns);
    if (rc) return rc;
    if (s->batch && s->next_pool < s->n_pool) {
        /* What is held stays bounded: a copy of a 100k namespace is one
         * batch. */
        if (s->n_held >= HELD_MAX) rc = flush_held(s);
        if (!rc) rc = hold_insert(s, m, norm, h, rowid);
    } else
        rc = insert_now(s, m, norm, h, rowid);
    if (rc) return rc;
    /* As remem_memories_ai moves it: one more row, one more version (a
     * new namespace row starts at 1 and 1). */
    ns_row *r = ns_row_find(s, m->ns);
    if (r && r->state == 1) {
        r->rows++;
        r->version++;
    } else if (r && r->state == 2) {
        *r = (ns_row){.ns = r->ns, .state = 1, .version = 1, .rows = 1};
    }
    return REMEM_OK;
}

static int insert_now(pg_store *s, const remem_memory *m, const char *norm, uint64_t h,
                      int64_t *rowid) {
    int rc;
    params p = {.n = 0};
    p_memory(&p, m, norm, h);
    PGresult *res = run_p(s,
                          "INSERT INTO memories(ns, id, kind, tier, text, norm, norm_hash, "
                          "importance, created_at, updated_at, accessed_at, access_count, "
                          "expires_at, invalidated_at, superseded_by, duplicate_count, metadata, "
                          "links, model, embedding) VALUES($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,"
                          "$12,$13,$14,$15,$16,$17,$18,$19,$20) RETURNING rowid",
                          &p, "inserting a memory", &rc);
    if (!res) return rc;
    if (rowid) *rowid = PQntuples(res) ? get_i64(res, 0, 0) : 0;
    PQclear(res);
    return REMEM_OK;
}

static int pg_replace(store *base, int64_t rowid, const remem_memory *m, const char *norm,
                      uint64_t h) {
    pg_store *s = pg(base);
    int rc = ns_lock(s, m->ns);
    if (rc) return rc;
    params p = {.n = 0};
    p_memory(&p, m, norm, h);
    p_i64(&p, rowid);
    PGresult *res = run_p(s,
                          "UPDATE memories SET ns=$1, id=$2, kind=$3, tier=$4, text=$5, norm=$6, "
                          "norm_hash=$7, importance=$8, created_at=$9, updated_at=$10, "
                          "accessed_at=$11, access_count=$12, expires_at=$13, invalidated_at=$14, "
                          "superseded_by=$15, duplicate_count=$16, metadata=$17, links=$18, "
                          "model=$19, embedding=$20 WHERE rowid=$21",
                          &p, "updating a memory", &rc);
    /* remem_memories_au: one version per row updated, on the new ns. */
    ns_row *r = ns_row_find(s, m->ns);
    if (r && r->state == 1 && res)
        r->version += strtoll(PQcmdTuples(res), NULL, 10);
    else if (r)
        r->state = 0;
    PQclear(res);
    return rc;
}

static int hold_bump(pg_store *s, held_row *e, int known, int64_t now);

static int pg_bump_duplicate(store *base, int64_t rowid, int64_t now) {
    pg_store *s = pg(base);
    int known;
    held_row *e = held_find(s, rowid, &known);
    if (e) return hold_bump(s, e, known, now);
    params p = {.n = 0};
    p_i64(&p, now);
    p_i64(&p, rowid);
    int rc;
    PGresult *res = run_p(s,
                          "UPDATE memories SET duplicate_count=duplicate_count+1, updated_at=$1 "
                          "WHERE rowid=$2 RETURNING ns",
                          &p, "recording a duplicate", &rc);
    /* remem_memories_au moves the row's namespace's version by one. */
    ns_row *r = res && PQntuples(res) == 1 ? ns_row_find(s, PQgetvalue(res, 0, 0)) : NULL;
    if (r && r->state == 1)
        r->version++;
    else if (r)
        r->state = 0;
    PQclear(res);
    return rc;
}

static int pg_remove(store *base, int64_t rowid) {
    ns_rows_forget(pg(base));
    params p = {.n = 0};
    p_i64(&p, rowid);
    int rc;
    PQclear(run_p(pg(base), "DELETE FROM memories WHERE rowid=$1", &p, "deleting a memory", &rc));
    return rc;
}

static int pg_set_vector(store *base, int64_t rowid, const char *model, const float *vec, int dim) {
    ns_rows_forget(pg(base));
    params p = {.n = 0};
    p_text(&p, model);
    p_bytes(&p, vec, dim * (int)sizeof(float));
    p_i64(&p, rowid);
    int rc;
    PQclear(run_p(pg(base), "UPDATE memories SET model=$1, embedding=$2 WHERE rowid=$3", &p,
                  "storing a vector", &rc));
    return rc;
}

/* ---- touches ---- */

static int pg_touch(store *base, const int64_t *rowids, size_t n, int64_t now) {
    pg_store *s = pg(base);
    if (n == 0) return REMEM_OK;
    if (s->n_touches + n > s->cap_touches) {
        size_t cap = s->cap_touches ? s->cap_touches * 2 : 256;
        while (cap < s->n_touches + n) cap *= 2;
        touch_ent *t = realloc(s->touches, cap * sizeof *t);
        if (!t) return fail(s, REMEM_ENOMEM, "out of memory");
        s->touches = t;
        s->cap_touches = cap;
    }
    if (s->n_touches == 0) s->touch_since = mono_ms();
    for (size_t i = 0; i < n; i++)
        s->touches[s->n_touches++] = (touch_ent){rowids[i], now, s->n_touches};
    return REMEM_OK;
}

static int by_row_then_order(const void *a, const void *b) {
    const touch_ent *x = a, *y = b;
    if (x->rowid != y->rowid) return x->rowid < y->rowid ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Append ",x" (or "{x") to a growing array literal. */
static int arr_add(char **buf, size_t *len, size_t *cap, int64_t x) {
    if (*len + 24 > *cap) {
        size_t c = *cap ? *cap * 2 : 1024;
        char *b = realloc(*buf, c);
        if (!b) return -1;
        *buf = b;
        *cap = c;
    }
    *len += (size_t)snprintf(*buf + *len, *cap - *len, "%c%lld", *len ? ',' : '{', (long long)x);
    return 0;
}

/* Per row of e[0..n) (sorted here), its latest time and its number of
 * entries, as one UPDATE of sql ($1 rowids, $2 times, $3 counts), under
 * `what`. e is emptied either way. */
static int update_by_row(pg_store *s, touch_ent *e, size_t *n, const char *sql, const char *what) {
    if (*n == 0) return REMEM_OK;
    qsort(e, *n, sizeof *e, by_row_then_order);
    char *a[3] = {NULL, NULL, NULL};
    size_t len[3] = {0, 0, 0}, cap[3] = {0, 0, 0};
    int bad = 0;
    for (size_t i = 0; i < *n && !bad;) {
        size_t j = i;
        while (j < *n && e[j].rowid == e[i].rowid) j++;
        bad = arr_add(&a[0], &len[0], &cap[0], e[i].rowid) ||
              arr_add(&a[1], &len[1], &cap[1], e[j - 1].at) ||
              arr_add(&a[2], &len[2], &cap[2], (int64_t)(j - i));
        i = j;
    }
    *n = 0;
    int rc = REMEM_OK;
    if (bad) {
        rc = fail(s, REMEM_ENOMEM, "out of memory");
    } else {
        for (int k = 0; k < 3; k++) a[k][len[k]] = '}'; /* room: arr_add keeps 24 spare */
        for (int k = 0; k < 3; k++) a[k][len[k] + 1] = '\0';
        const char *vals[3] = {a[0], a[1], a[2]};
        PQclear(run(s, sql, 3, vals, NULL, NULL, what, &rc));
    }
    for (int k = 0; k < 3; k++) free(a[k]);
    return rc;
}

/* Write the buffered touches in one statement: per row, the latest time
 * and the number of hits. Dropped on failure (a read is not a change).
 * A load reads them from the buffer instead (pg_load), so that a read
 * never waits for them. */
static int flush_touches(pg_store *s) {
    return update_by_row(s, s->touches, &s->n_touches,
                         "UPDATE memories m SET accessed_at = t.at, access_count = m.access_count"
                         " + t.n FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS t(r, at, n)"
                         " WHERE m.rowid = t.r AND m.rowid = ANY($1::bigint[])",
                         "touching memories");
}

static int pg_clear(store *base, const char *ns, int64_t *deleted) {
    pg_store *s = pg(base);
    int rc = ns_lock(s, ns);
    if (rc) return rc;
    ns_rows_forget(s);
    params p = {.n = 0};
    p_text(&p, ns);
    PGresult *res = run_p(s, "DELETE FROM memories WHERE ns=$1", &p, "clearing a namespace", &rc);
    if (!res) return rc;
    if (deleted) *deleted = strtoll(PQcmdTuples(res), NULL, 10);
    PQclear(res);
    /* An empty namespace may take vectors of another model again. */
    PQclear(run_p(s, "UPDATE namespaces SET model=NULL, dim=NULL WHERE ns=$1", &p,
                  "clearing a namespace", &rc));
    return rc;
}

/* ---- a batch: held writes ---- */

/* Hold a new row until the next statement (flush_held), under the
 * next rowid pg_batch drew. */
static int hold_insert(pg_store *s, const remem_memory *m, const char *norm, uint64_t h,
                       int64_t *rowid) {
    if (s->n_held == s->cap_held) {
        size_t cap = s->cap_held ? s->cap_held * 2 : 256;
        held_row *t = realloc(s->held, cap * sizeof *t);
        if (!t) return fail(s, REMEM_ENOMEM, "out of memory");
        s->held = t;
        s->cap_held = cap;
    }
    held_row *e = &s->held[s->n_held];
    store_row src = {.rowid = s->pool[s->next_pool], .m = *m};
    if (!m->vector) src.m.dim = 0;
    if (store_row_copy(&e->r, &src)) return fail(s, REMEM_ENOMEM, "out of memory");
    if (!(e->norm = strdup(norm))) {
        store_row_clear(&e->r);
        return fail(s, REMEM_ENOMEM, "out of memory");
    }
    e->h = h;
    s->n_held++;
    s->next_pool++;
    if (rowid) *rowid = e->r.rowid;
    return REMEM_OK;
}

/* A duplicate of a row the batch holds (its insert carries the count)
 * or read (one UPDATE per row at the flush: remem_memories_au moves the
 * namespace's version once per row). */
static int hold_bump(pg_store *s, held_row *e, int known, int64_t now) {
    if (known) {
        if (s->n_bumps == s->cap_bumps) {
            size_t cap = s->cap_bumps ? s->cap_bumps * 2 : 64;
            touch_ent *t = realloc(s->bumps, cap * sizeof *t);
            if (!t) return fail(s, REMEM_ENOMEM, "out of memory");
            s->bumps = t;
            s->cap_bumps = cap;
        }
        s->bumps[s->n_bumps] = (touch_ent){e->r.rowid, now, s->n_bumps};
        s->n_bumps++;
        ns_row *r = e->bumped ? NULL : ns_row_find(s, e->r.m.ns);
        if (r && r->state == 1)
            r->version++;
        else if (r)
            r->state = 0;
        e->bumped = 1;
    }
    e->r.m.duplicate_count++;
    e->r.m.updated_at = now;
    return REMEM_OK;
}

/* The held models of new namespaces, in one statement. */
static int flush_models(pg_store *s) {
    size_t n = 0;
    for (int i = 0; i < s->n_rows_seen; i++) n += s->rows_seen[i].model_held != 0;
    if (n == 0) return REMEM_OK;
    const char **vals = malloc(n * 3 * sizeof *vals);
    char(*dims)[16] = malloc(n * sizeof *dims);
    size_t cap = 200 + n * 40;
    char *sql = malloc(cap);
    int rc = REMEM_OK;
    if (!vals || !dims || !sql) {
        rc = fail(s, REMEM_ENOMEM, "out of memory");
    } else {
        size_t len = (size_t)snprintf(sql, cap, "INSERT INTO namespaces(ns, model, dim) VALUES");
        size_t j = 0;
        for (int i = 0; i < s->n_rows_seen; i++) {
            ns_row *r = &s->rows_seen[i];
            if (!r->model_held) continue;
            snprintf(dims[j], sizeof dims[j], "%d", r->dim);
            vals[3 * j] = r->ns;
            vals[3 * j + 1] = r->model;
            vals[3 * j + 2] = dims[j];
            len += (size_t)snprintf(sql + len, cap - len, "%s($%zu,$%zu,$%zu::int)", j ? "," : "",
                                    3 * j + 1, 3 * j + 2, 3 * j + 3);
            j++;
        }
        snprintf(sql + len, cap - len,
                 " ON CONFLICT(ns) DO UPDATE SET model=EXCLUDED.model, dim=EXCLUDED.dim");
        PQclear(run(s, sql, (int)(3 * n), vals, NULL, NULL, "recording the namespaces' models",
                    &rc));
    }
    for (int i = 0; i < s->n_rows_seen; i++) s->rows_seen[i].model_held = 0;
    free(vals);
    free(dims);
    free(sql);
    return rc;
}

/* The type of each parameter of a held row (rowid, then p_memory's). */
static const char *const held_cast[] = {
    "::bigint", "",         "",         "",         "",         "",         "",
    "::bigint", "::float8", "::bigint", "::bigint", "::bigint", "::bigint", "::bigint",
    "::bigint", "",         "::bigint", "",         "",         "",         "::bytea"};
#define HELD_COLS (int)(sizeof held_cast / sizeof held_cast[0])

/* rows[0..n) in one INSERT. */
static int insert_chunk(pg_store *s, const held_row *rows, size_t n) {
    params *ps = malloc(n * sizeof *ps);
    size_t np = n * HELD_COLS, cap = 400 + n * (HELD_COLS * 16 + 4);
    const char **vals = malloc(np * sizeof *vals);
    int *lens = malloc(np * sizeof *lens), *fmts = malloc(np * sizeof *fmts);
    char *sql = malloc(cap);
    int rc = REMEM_OK;
    if (!ps || !vals || !lens || !fmts || !sql) {
        rc = fail(s, REMEM_ENOMEM, "out of memory");
        goto out;
    }
    size_t len = (size_t)snprintf(
        sql, cap,
        "INSERT INTO memories(rowid, ns, id, kind, tier, text, norm, norm_hash, importance, "
        "created_at, updated_at, accessed_at, access_count, expires_at, invalidated_at, "
        "superseded_by, duplicate_count, metadata, links, model, embedding) VALUES");
    for (size_t i = 0; i < n; i++) {
        ps[i].n = 0;
        p_i64(&ps[i], rows[i].r.rowid);
        p_memory(&ps[i], &rows[i].r.m, rows[i].norm, rows[i].h);
        for (int k = 0; k < HELD_COLS; k++) {
            size_t at = i * HELD_COLS + (size_t)k;
            vals[at] = ps[i].v[k];
            lens[at] = ps[i].len[k];
            fmts[at] = ps[i].fmt[k];
            len += (size_t)snprintf(sql + len, cap - len, "%s$%zu%s", k ? "," : i ? ",(" : "(",
                                    at + 1, held_cast[k]);
        }
        len += (size_t)snprintf(sql + len, cap - len, ")");
    }
    PQclear(run(s, sql, (int)np, vals, lens, fmts, "inserting memories", &rc));
out:
    free(ps);
    free(vals);
    free(lens);
    free(fmts);
    free(sql);
    return rc;
}

/* Send what a batch holds: the new namespaces' models first (as
 * pg_ns_set_model would have, before their rows), then the rows, at most
 * HELD_CHUNK per statement. Held rows are dropped either way: on failure
 * the transaction is lost. */
static int flush_held(pg_store *s) {
    if (!s->batch || s->flushing || !s->in_tx) return REMEM_OK;
    s->flushing = 1;
    int rc = flush_models(s);
    for (size_t done = 0; !rc && done < s->n_held; done += HELD_CHUNK)
        rc = insert_chunk(s, s->held + done,
                          s->n_held - done > HELD_CHUNK ? HELD_CHUNK : s->n_held - done);
    if (!rc)
        rc = update_by_row(s, s->bumps, &s->n_bumps,
                           "UPDATE memories m SET duplicate_count = m.duplicate_count + t.n,"
                           " updated_at = t.at FROM unnest($1::bigint[], $2::bigint[],"
                           " $3::bigint[]) AS t(r, at, n) WHERE m.rowid = t.r",
                           "recording duplicates");
    s->flushing = 0;
    drop_held(s);
    return rc;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The locks of b's namespaces this transaction does not hold yet, sorted
 * (two batches lock in one order: no deadlock), as an array literal;
 * NULL when there are none (*bad set out of memory). */
static char *batch_lock_keys(pg_store *s, const store_batch *b, int *bad) {
    int64_t *k = malloc((b->n_ns ? b->n_ns : 1) * sizeof *k);
    char *a = NULL;
    size_t n = 0, len = 0, cap = 0;
    if (!k) {
        *bad = 1;
        return NULL;
    }
    for (size_t i = 0; i < b->n_ns; i++) {
        uint64_t key = ns_key(b->ns[i]);
        if (!has_lock(s, key)) k[n++] = (int64_t)key;
    }
    qsort(k, n, sizeof *k, cmp_i64);
    for (size_t i = 0; i < n && !*bad; i++)
        if (i == 0 || k[i] != k[i - 1]) *bad = arr_add(&a, &len, &cap, k[i]);
    if (a && !*bad) {
        a[len] = '}'; /* room: arr_add keeps 24 spare */
        a[len + 1] = '\0';
    }
    free(k);
    if (*bad) {
        free(a);
        return NULL;
    }
    return a;
}

/* The statements of pg_batch, in one simple query; *what gets the kind
 * of each result that returns rows, in order ('l'ocks, 'n'amespaces,
 * 'p'ool, 'd'uplicates). */
static char *batch_sql(pg_store *s, const store_batch *b, char what[5]) {
    char *q = NULL, num[96];
    size_t len = 0, cap = 0;
    int bad = 0, w = 0;
    char *locks = batch_lock_keys(s, b, &bad);
    if (!s->tx_started) {
        snprintf(num, sizeof num, "BEGIN; SET LOCAL lock_timeout = %d; ", s->busy_ms);
        bad |= sql_add(&q, &len, &cap, num);
    }
    if (locks) {
        bad |= sql_add(&q, &len, &cap, "SELECT pg_advisory_xact_lock(k) FROM unnest('") ||
               sql_add(&q, &len, &cap, locks) || sql_add(&q, &len, &cap, "'::bigint[]) AS u(k); ");
        what[w++] = 'l';
    }
    free(locks);
    bad |= sql_add(&q, &len, &cap,
                   "SELECT ns, coalesce(model,''), coalesce(dim,0), version, rows FROM "
                   "namespaces WHERE ns IN (NULL");
    for (size_t i = 0; i < b->n_ns && !bad; i++)
        bad |= sql_add(&q, &len, &cap, ",") || sql_lit(s, &q, &len, &cap, b->ns[i]);
    bad |= sql_add(&q, &len, &cap, "); ");
    what[w++] = 'n';
    if (b->n_new) {
        snprintf(num, sizeof num,
                 "SELECT nextval('memories_rowid_seq') FROM generate_series(1, %zu); ", b->n_new);
        bad |= sql_add(&q, &len, &cap, num);
        what[w++] = 'p';
    }
    int any = 0;
    for (size_t k = 0; k < b->n_keys && !bad; k++) {
        if (!b->norm[k]) continue;
        snprintf(num, sizeof num, "%s(%zu,", any ? "," : "", k);
        bad |= (!any && sql_add(&q, &len, &cap, "SELECT d.*, k.i FROM (VALUES")) ||
               sql_add(&q, &len, &cap, num) || sql_lit(s, &q, &len, &cap, b->key_ns[k]);
        snprintf(num, sizeof num, "::text,%lld::bigint,", (long long)(int64_t)b->hash[k]);
        bad |= sql_add(&q, &len, &cap, num) || sql_lit(s, &q, &len, &cap, b->norm[k]) ||
               sql_add(&q, &len, &cap, "::text)");
        any = 1;
    }
    if (any) {
        bad |= sql_add(&q, &len, &cap,
                       ") AS k(i, ns, h, norm) CROSS JOIN LATERAL (SELECT " ROW_COLS
                       " FROM memories m WHERE m.ns = k.ns AND m.norm_hash = k.h AND"
                       " m.norm = k.norm ORDER BY rowid LIMIT 1) d");
        what[w++] = 'd';
    }
    what[w] = '\0';
    if (bad) {
        free(q);
        return NULL;
    }
    return q;
}

static int by_rowid(const void *a, const void *b) {
    int64_t x = ((const held_row *)a)->r.rowid, y = ((const held_row *)b)->r.rowid;
    return x < y ? -1 : x > y;
}

/* The stored rows the batch duplicates (res: ROW_COLS, then the key),
 * kept so that their duplicates cost no round trip (held_find). None
 * when out of memory: each is then read again. */
static void batch_known(pg_store *s, const PGresult *res) {
    int n = PQntuples(res);
    if (n == 0 || !(s->known = calloc((size_t)n, sizeof *s->known))) return;
    for (int r = 0; r < n; r++) {
        if (copy_row(s, res, r, 1, &s->known[s->n_known].r, "a memory")) break;
        s->n_known++;
    }
    qsort(s->known, s->n_known, sizeof *s->known, by_rowid);
    size_t u = 0; /* several keys may name one row */
    for (size_t i = 0; i < s->n_known; i++) {
        if (u && s->known[u - 1].r.rowid == s->known[i].r.rowid)
            store_row_clear(&s->known[i].r);
        else
            s->known[u++] = s->known[i];
    }
    s->n_known = u;
}

/* The held insert or known row of rowid (*known says which), or NULL. */
static held_row *held_find(pg_store *s, int64_t rowid, int *known) {
    held_row key = {.r.rowid = rowid}, *e = NULL;
    if (!s->batch || s->flushing) return NULL;
    if (s->n_held) e = bsearch(&key, s->held, s->n_held, sizeof *e, by_rowid);
    *known = !e;
    if (!e && s->n_known) e = bsearch(&key, s->known, s->n_known, sizeof *e, by_rowid);
    return e;
}

/* One result of pg_batch's query, of the kind `what`. */
static void batch_take(pg_store *s, store_batch *b, char what, const PGresult *res) {
    int n = PQntuples(res);
    if (what == 'n') {
        for (size_t i = 0; i < b->n_ns; i++) {
            int row = -1;
            for (int r = 0; r < n && row < 0; r++)
                if (!strcmp(PQgetvalue(res, r, 0), b->ns[i])) row = r;
            ns_row_put(s, b->ns[i], res, row, 1);
        }
    } else if (what == 'p' && n > 0) {
        free(s->pool);
        s->n_pool = s->next_pool = 0;
        if (!(s->pool = malloc((size_t)n * sizeof *s->pool))) return; /* inserts go one by one */
        for (int r = 0; r < n; r++) s->pool[r] = get_i64(res, r, 0);
        qsort(s->pool, (size_t)n, sizeof *s->pool, cmp_i64);
        s->n_pool = (size_t)n;
        s->next_pool = 0;
    } else if (what == 'd') {
        for (int r = 0; r < n; r++) {
            int64_t k = get_i64(res, r, 19);
            if (k >= 0 && (size_t)k < b->n_keys) b->dup[k] = get_i64(res, r, 0);
        }
        batch_known(s, res);
    }
}

/* Send pg_batch's query and take its results; 0 or the failure. */
static int batch_run(pg_store *s, store_batch *b, const char *sql, const char *what) {
    int began = !s->tx_started, rc = REMEM_OK, w = 0;
    if (!PQsendQuery(s->conn, sql)) return pgfail(s, NULL, "beginning a batch");
    PGresult *res;
    while ((res = PQgetResult(s->conn))) {
        ExecStatusType st = PQresultStatus(res);
        if (st == PGRES_COMMAND_OK && began && !rc)
            s->tx_started = 1; /* the BEGIN: a failure now needs a ROLLBACK */
        else if (st == PGRES_TUPLES_OK && !rc && what[w])
            batch_take(s, b, what[w++], res);
        else if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && !rc)
            rc = pgfail(s, res, "beginning a batch");
        PQclear(res);
    }
    if (!rc && what[w]) rc = pgfail(s, NULL, "beginning a batch");
    return rc;
}

/* Before a batch of adds: the namespaces' locks and rows, the duplicate
 * lookups and the rowids of the inserts to come, with the BEGIN when the
 * transaction has not started: one round trip. The inserts are then held
 * (hold_insert) and go in a few statements. */
static int pg_batch(store *base, store_batch *b) {
    pg_store *s = pg(base);
    if (!s->in_tx) return fail(s, REMEM_EINVAL, "no transaction is open");
    if (s->read_only) return fail(s, REMEM_EINVAL, "the store is open read-only");
    for (size_t k = 0; k < b->n_keys; k++) b->dup[k] = 0;
    int rc = flush_held(s);
    if (rc) return rc;
    char what[5];
    char *sql = batch_sql(s, b, what);
    if (!sql) return fail(s, REMEM_ENOMEM, "out of memory");
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!s->tx_started && lost(s) && (rc = connect_now(s))) break;
        if (lost(s)) {
            rc = pgfail(s, NULL, "beginning a batch");
            break;
        }
        rc = batch_run(s, b, sql, what);
        /* A connection that died while idle is replaced once: nothing had
         * begun. */
        if (!rc || s->tx_started || !lost(s)) break;
    }
    free(sql);
    if (rc) return rc;
    for (size_t i = 0; i < b->n_ns; i++) add_lock(s, ns_key(b->ns[i]));
    s->batch = 1;
    return REMEM_OK;
}

/* ---- namespaces ---- */

static int pg_ns_info(store *base, const char *ns, char *model, size_t model_cap, int *dim,
                      int64_t *version, int64_t *rows) {
    pg_store *s = pg(base);
    if (model && model_cap) model[0] = '\0';
    if (dim) *dim = 0;
    if (version) *version = 0;
    if (rows) *rows = 0;
    int rc = ns_lock(s, ns);
    if (rc) return rc;
    const ns_row *r = s->in_tx ? ns_row_find(s, ns) : NULL;
    if (r && r->state == 2) return fail(s, REMEM_ENOTFOUND, "no namespace %.200s", ns);
    if (r && r->state == 1) {
        if (model) snprintf(model, model_cap, "%s", r->model);
        if (dim) *dim = r->dim;
        if (version) *version = r->version;
        if (rows) *rows = r->rows;
        return REMEM_OK;
    }
    params p = {.n = 0};
    p_text(&p, ns);
    PGresult *res = run_prep(s, PREP_NS_ROW, &p, "reading a namespace", &rc);
    if (!res) return rc;
    if (s->in_tx) ns_row_take(s, ns, res);
    if (PQntuples(res)) {
        if (model) snprintf(model, model_cap, "%s", PQgetvalue(res, 0, 0));
        if (dim) *dim = (int)get_i64(res, 0, 1);
        if (version) *version = get_i64(res, 0, 2);
        if (rows) *rows = get_i64(res, 0, 3);
    } else {
        rc = fail(s, REMEM_ENOTFOUND, "no namespace %.200s", ns);
    }
    PQclear(res);
    return rc;
}

static int pg_ns_set_model(store *base, const char *ns, const char *model, int dim) {
    pg_store *s = pg(base);
    int rc = ns_lock(s, ns);
    if (rc) return rc;
    ns_row *r = ns_row_find(s, ns);
    /* In a batch, held until the next statement (flush_models). */
    int hold = s->batch && r && r->state && strlen(model) < sizeof r->model;
    if (hold) {
        if (r->state == 2) r->version = r->rows = 0;
        r->state = 1;
        r->model_held = 1;
        snprintf(r->model, sizeof r->model, "%s", model);
        r->dim = dim;
        return REMEM_OK;
    }
    params p = {.n = 0};
    p_text(&p, ns);
    p_text(&p, model);
    p_i64(&p, dim);
    PQclear(run_p(s,
                  "INSERT INTO namespaces(ns, model, dim) VALUES($1,$2,$3::int) "
                  "ON CONFLICT(ns) DO UPDATE SET model=$2, dim=$3::int",
                  &p, "recording the namespace's model", &rc));
    r = ns_row_find(s, ns);
    if (r && !rc && r->state) { /* model and dim only: no trigger moves the version */
        if (r->state == 2) r->version = r->rows = 0;
        r->state = 1;
        snprintf(r->model, sizeof r->model, "%s", model);
        r->dim = dim;
    } else if (r) {
        r->state = 0;
    }
    return rc;
}

static int pg_namespaces(store *base, store_ns_fn fn, void *ctx) {
    pg_store *s = pg(base);
    int rc;
    /* Byte order, as SQLite sorts. */
    PGresult *res = run(s,
                        "SELECT ns, rows, coalesce(model,''), coalesce(dim,0), version "
                        "FROM namespaces WHERE rows > 0 ORDER BY ns COLLATE \"C\"",
                        0, NULL, NULL, NULL, "listing namespaces", &rc);
    if (!res) return rc;
    for (int i = 0; i < PQntuples(res) && !rc; i++) {
        store_ns n = {.ns = PQgetvalue(res, i, 0),
                      .rows = get_i64(res, i, 1),
                      .model = PQgetvalue(res, i, 2),
                      .dim = (int)get_i64(res, i, 3),
                      .version = get_i64(res, i, 4)};
        rc = fn(ctx, &n);
    }
    PQclear(res);
    return rc;
}

/* ---- history ---- */

static int pg_history_add(store *base, const char *ns, const char *id, int64_t at, const char *op,
                          const char *actor, const char *before, const char *after) {
    pg_store *s = pg(base);
    /* The seq is drawn under the namespace's lock: within a namespace,
     * seqs commit in order. */
    int rc = ns_lock(s, ns);
    if (rc) return rc;
    if (s->in_tx) {
        if (s->n_hist == s->cap_hist) {
            size_t cap = s->cap_hist ? s->cap_hist * 2 : 64;
            hist_ent *h = realloc(s->hist, cap * sizeof *h);
            if (!h) return fail(s, REMEM_ENOMEM, "out of memory");
            s->hist = h;
            s->cap_hist = cap;
        }
        const char *v[6] = {ns, id, op, actor, before, after};
        hist_ent *e = &s->hist[s->n_hist];
        int bad = 0;
        for (int k = 0; k < 6; k++)
            if (v[k] && !(e->f[k] = strdup(v[k])))
                bad = 1;
            else if (!v[k])
                e->f[k] = NULL;
        e->at = at;
        s->n_hist++;
        return bad ? fail(s, REMEM_ENOMEM, "out of memory") : REMEM_OK;
    }
    params p = {.n = 0};
    p_text(&p, ns);
    p_text(&p, id);
    p_i64(&p, at);
    p_text(&p, op);
    p_text(&p, actor);
    p_text(&p, before);
    p_text(&p, after);
    PQclear(run_p(s,
                  "INSERT INTO history(ns, id, at, op, actor, before, after) "
                  "VALUES($1,$2,$3,$4,$5,$6,$7)",
                  &p, "writing history", &rc));
    return rc;
}

/* Write the held history rows, in order (seqs are drawn in VALUES order),
 * up to 1,000 rows per statement. */
static int flush_history(pg_store *s) {
    int rc = REMEM_OK;
    size_t done = 0;
    while (!rc && done < s->n_hist) {
        size_t n = s->n_hist - done > 1000 ? 1000 : s->n_hist - done;
        size_t cap = 96 + n * 80; /* a row: 7 params of up to 6 chars and 30 more */
        char *sql = malloc(cap);
        const char **vals = malloc(n * 7 * sizeof *vals);
        char(*nums)[24] = malloc(n * sizeof *nums);
        if (!sql || !vals || !nums) {
            rc = fail(s, REMEM_ENOMEM, "out of memory");
        } else {
            size_t len =
                (size_t)snprintf(sql, cap,
                                 "INSERT INTO history(ns, id, at, op, actor, before, after)"
                                 " VALUES");
            for (size_t i = 0; i < n; i++) {
                hist_ent *e = &s->hist[done + i];
                size_t b = i * 7;
                len += (size_t)snprintf(
                    sql + len, cap - len, "%s($%zu,$%zu,$%zu::bigint,$%zu,$%zu,$%zu,$%zu)",
                    i ? "," : "", b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 7);
                snprintf(nums[i], sizeof nums[i], "%lld", (long long)e->at);
                vals[b] = e->f[0];
                vals[b + 1] = e->f[1];
                vals[b + 2] = nums[i];
                vals[b + 3] = e->f[2];
                vals[b + 4] = e->f[3];
                vals[b + 5] = e->f[4];
                vals[b + 6] = e->f[5];
            }
            PQclear(run(s, sql, (int)(n * 7), vals, NULL, NULL, "writing history", &rc));
        }
        free(sql);
        free(vals);
        free(nums);
        done += n;
    }
    drop_history(s);
    return rc;
}

static int pg_history_max(store *base, const char *ns, int64_t *seq) {
    pg_store *s = pg(base);
    *seq = 0;
    int rc0 = flush_history(s);
    if (rc0) return rc0;
    params p = {.n = 0};
    p_text(&p, ns);
    int rc;
    PGresult *res = run_p(s, "SELECT coalesce(max(seq),0) FROM history WHERE ns=$1", &p,
                          "reading history", &rc);
    if (!res) return rc;
    if (PQntuples(res)) *seq = get_i64(res, 0, 0);
    PQclear(res);
    return REMEM_OK;
}

static int pg_history_since(store *base, const char *ns, int64_t after, store_hist_fn fn, void *ctx,
                            int64_t *max_seq) {
    pg_store *s = pg(base);
    *max_seq = after;
    int rc0 = flush_history(s);
    if (rc0) return rc0;
    params p = {.n = 0};
    p_text(&p, ns);
    p_i64(&p, after);
    int rc;
    PGresult *res = run_p(s, "SELECT seq, id, op FROM history WHERE ns=$1 AND seq>$2 ORDER BY seq",
                          &p, "reading history", &rc);
    if (!res) return rc;
    for (int i = 0; i < PQntuples(res) && !rc; i++) {
        *max_seq = get_i64(res, i, 0);
        rc = fn(ctx, PQgetvalue(res, i, 1), PQgetvalue(res, i, 2));
    }
    PQclear(res);
    return rc;
}

static int pg_history(store *base, const char *ns, const char *id, store_history_fn fn, void *ctx) {
    pg_store *s = pg(base);
    int rc0 = flush_history(s);
    if (rc0) return rc0;
    params p = {.n = 0};
    p_text(&p, id);
    if (ns) p_text(&p, ns);
    int rc;
    PGresult *res = run_p(s,
                          ns ? "SELECT seq, ns, id, at, op, actor, before, after FROM history "
                               "WHERE id=$1 AND ns=$2 ORDER BY seq"
                             : "SELECT seq, ns, id, at, op, actor, before, after FROM history "
                               "WHERE id=$1 ORDER BY seq",
                          &p, "reading history", &rc);
    if (!res) return rc;
    for (int i = 0; i < PQntuples(res) && !rc; i++) {
        store_history_row h = {.seq = get_i64(res, i, 0),
                               .ns = get_text(res, i, 1),
                               .id = get_text(res, i, 2),
                               .at = get_i64(res, i, 3),
                               .op = get_text(res, i, 4),
                               .actor = get_text(res, i, 5),
                               .before = get_text(res, i, 6),
                               .after = get_text(res, i, 7)};
        rc = fn(ctx, &h);
    }
    PQclear(res);
    return rc;
}

static int pg_history_scrub(store *base, const char *ns, const char *id) {
    pg_store *s = pg(base);
    int rc = flush_history(s);
    if (!rc) rc = ns_lock(s, ns);
    if (rc) return rc;
    params p = {.n = 0};
    p_text(&p, ns);
    p_text(&p, id);
    PQclear(run_p(s, "UPDATE history SET actor=NULL, before=NULL, after=NULL WHERE ns=$1 AND id=$2",
                  &p, "scrubbing history", &rc));
    return rc;
}

/* Deleted row versions stay in the table's pages until VACUUM reclaims
 * them; WAL segments and base backups are the operator's (docs/deploy.md). */
static int pg_scrub_deleted(store *base) {
    pg_store *s = pg(base);
    if (s->in_tx) return fail(s, REMEM_EINVAL, "scrub_deleted runs outside a transaction");
    if (s->read_only) return REMEM_OK;
    int rc;
    PQclear(run(s, "VACUUM memories, history", 0, NULL, NULL, NULL, "vacuuming", &rc));
    return rc;
}

/* ---- scans ---- */

typedef int (*res_row_fn)(pg_store *s, const PGresult *res, void *ctx);

/* Run sql (n text parameters, results in binary) and hand each row of
 * its result to fn as it arrives (single-row mode: a namespace of 100k
 * vectors is never held twice in memory). A non-zero fn stops the rows
 * and is returned. Outside a transaction, a connection found dead before
 * any row came is replaced once and the statement sent again. */
/* stream, of statement prep (a PREP_*, prepared where it can be; -1:
 * sql, unnamed). */
static int stream_as(pg_store *s, int prep, const char *sql, int n, const char *const *vals,
                     res_row_fn fn, void *ctx, const char *what) {
    int rc = flush_held(s);
    if (rc) return rc;
    if (s->in_tx && !s->tx_started && (rc = start_tx(s))) return rc;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!s->in_tx && lost(s) && (rc = connect_now(s))) return rc;
        const char *name = prep >= 0 ? prepared(s, prep) : NULL;
        int sent = (name ? PQsendQueryPrepared(s->conn, name, n, vals, NULL, NULL, 1)
                         : PQsendQueryParams(s->conn, sql, n, NULL, vals, NULL, NULL, 1)) &&
                   PQsetSingleRowMode(s->conn);
        if (!sent) {
            rc = pgfail(s, NULL, what);
            if (!s->in_tx && lost(s) && attempt == 0) continue;
            return rc;
        }
        int rows = 0, stop = 0, unknown = 0;
        rc = REMEM_OK;
        PGresult *res;
        while ((res = PQgetResult(s->conn))) {
            ExecStatusType st = PQresultStatus(res);
            if (st == PGRES_SINGLE_TUPLE) {
                rows++;
                if (!stop && (stop = fn(s, res, ctx))) rc = stop;
            } else if (st != PGRES_TUPLES_OK && !rc) {
                unknown = name && prep_unknown(s, res);
                rc = pgfail(s, res, what);
            }
            PQclear(res);
        }
        /* Sent again, once, when nothing came: on a new connection, or
         * unnamed (a pooler that did not know the name). */
        if (rc && !stop && rows == 0 && !s->in_tx && (lost(s) || unknown) && attempt == 0)
            continue;
        return rc;
    }
    return rc;
}

static int stream(pg_store *s, const char *sql, int n, const char *const *vals, res_row_fn fn,
                  void *ctx, const char *what) {
    return stream_as(s, -1, sql, n, vals, fn, ctx, what);
}

typedef struct scan_ctx {
    int with_vec;
    store_row_fn fn;
    void *ctx;
} scan_ctx;

static int scan_row(pg_store *s, const PGresult *res, void *vctx) {
    (void)s;
    scan_ctx *x = vctx;
    store_row r;
    decode_row(res, 0, x->with_vec, &r);
    return x->fn(x->ctx, &r);
}

static int pg_scan(store *base, const char *ns, int with_vec, store_row_fn fn, void *ctx) {
    pg_store *s = pg(base);
    int rc = flush_touches(s);
    if (rc) return rc;
    const char *sql = ns ? "SELECT " ROW_COLS " FROM memories WHERE ns=$1 ORDER BY rowid"
                         : "SELECT " ROW_COLS " FROM memories ORDER BY rowid";
    const char *vals[1] = {ns};
    scan_ctx x = {with_vec, fn, ctx};
    return stream(s, sql, ns ? 1 : 0, vals, scan_row, &x, "scanning memories");
}

/* ---- a load: the namespace row, its history seq and its rows at once ---- */


typedef struct load_ctx {
    const char *ns;
    store_load_fn start;
    store_row_fn fn;
    void *ctx;
    int started;
    touch_ent *touches; /* this handle's unwritten touches, by row (then order) */
    size_t n_touches;
} load_ctx;

/* Row r with the unwritten touches of its rowid applied, as their flush
 * would write them (update_by_row): the latest time, one more access
 * each. */
static void overlay_touches(const load_ctx *x, store_row *r) {
    size_t lo = 0, hi = x->n_touches;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->touches[mid].rowid < r->rowid)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t j = lo;
    while (j < x->n_touches && x->touches[j].rowid == r->rowid) j++;
    if (j == lo) return;
    r->m.accessed_at = x->touches[j - 1].at;
    r->m.access_count += (int64_t)(j - lo);
}

static int load_row(pg_store *s, const PGresult *res, void *vctx) {
    (void)s;
    load_ctx *x = vctx;
    if (!x->started) {
        store_ns n = {.ns = x->ns,
                      .model = PQgetvalue(res, 0, LOAD_NS_COL),
                      .dim = (int)get_i64(res, 0, LOAD_NS_COL + 1),
                      .version = get_i64(res, 0, LOAD_NS_COL + 2),
                      .rows = get_i64(res, 0, LOAD_NS_COL + 3)};
        x->started = 1;
        int stop = x->start(x->ctx, &n, get_i64(res, 0, LOAD_NS_COL + 4));
        if (stop) return stop;
    }
    if (PQgetisnull(res, 0, 0)) return 0; /* a namespace row without memories */
    store_row r;
    decode_row(res, 0, 1, &r);
    overlay_touches(x, &r);
    return x->fn(x->ctx, &r);
}

/* Inside a write transaction: the namespace's lock and the calls one by
 * one, as the engine would make them (the transaction sees its own
 * writes, which a load outside one must not). */
static int load_slowly(pg_store *s, const char *ns, store_load_fn start, store_row_fn fn,
                       void *ctx) {
    char model[128];
    store_ns n = {.ns = ns, .model = model};
    int64_t seq = 0;
    int rc = pg_history_max(&s->base, ns, &seq);
    if (!rc) rc = pg_ns_info(&s->base, ns, model, sizeof model, &n.dim, &n.version, &n.rows);
    if (!rc) rc = start(ctx, &n, seq);
    if (!rc) rc = pg_scan(&s->base, ns, 1, fn, ctx);
    return rc;
}

static int pg_load(store *base, const char *ns, store_load_fn start, store_row_fn fn, void *ctx) {
    pg_store *s = pg(base);
    if (s->in_tx) return load_slowly(s, ns, start, fn, ctx);
    /* The touches stay buffered (a read costs no write): sorted by row
     * here, which their flush does anyway, and applied to the rows. */
    if (s->n_touches > 1) qsort(s->touches, s->n_touches, sizeof *s->touches, by_row_then_order);
    load_ctx x = {.ns = ns, .start = start, .fn = fn, .ctx = ctx,
                  .touches = s->touches, .n_touches = s->n_touches};
    const char *vals[1] = {ns};
    int rc = stream_as(s, PREP_LOAD, LOAD_SQL, 1, vals, load_row, &x, "loading a namespace");
    if (!rc && !x.started) rc = fail(s, REMEM_ENOTFOUND, "no namespace %.200s", ns);
    raise_trim_threshold(s);
    return rc;
}

/* ---- statistics ---- */

static int group_counts(pg_store *s, enum store_group g, const char *col, const char *ns,
                        store_count_fn fn, void *ctx) {
    char sql[300];
    snprintf(sql, sizeof sql,
             "SELECT %s, count(*) FROM memories %s GROUP BY 1 ORDER BY (%s) COLLATE \"C\"", col,
             ns ? "WHERE ns=$1" : "", col);
    const char *vals[1] = {ns};
    int rc;
    PGresult *res = run(s, sql, ns ? 1 : 0, vals, NULL, NULL, "statistics", &rc);
    if (!res) return rc;
    for (int i = 0; i < PQntuples(res) && !rc; i++)
        rc = fn(ctx, g, PQgetvalue(res, i, 0), get_i64(res, i, 1));
    PQclear(res);
    return rc;
}

static int pg_stats(store *base, const char *ns, int64_t now, store_summary *out, store_count_fn fn,
                    void *ctx) {
    pg_store *s = pg(base);
    memset(out, 0, sizeof *out);
    out->file_bytes = -1;
    int rc = flush_touches(s);
    if (rc) return rc;
    char sql[500];
    snprintf(sql, sizeof sql,
             "SELECT count(*), coalesce(sum((invalidated_at > 0)::int),0)::bigint,"
             " coalesce(sum((expires_at > 0 AND expires_at <= $1::bigint)::int),0)::bigint,"
             " coalesce(sum(duplicate_count),0)::bigint, coalesce(avg(importance),0)::float8,"
             " coalesce(min(created_at),0), coalesce(max(created_at),0)"
             " FROM memories %s",
             ns ? "WHERE ns=$2" : "");
    params p = {.n = 0};
    p_i64(&p, now);
    if (ns) p_text(&p, ns);
    PGresult *res = run_p(s, sql, &p, "statistics", &rc);
    if (!res) return rc;
    if (PQntuples(res)) {
        out->memories = get_i64(res, 0, 0);
        out->invalidated = get_i64(res, 0, 1);
        out->expired = get_i64(res, 0, 2);
        out->duplicates_folded = get_i64(res, 0, 3);
        out->mean_importance = get_f64(res, 0, 4);
        out->oldest = get_i64(res, 0, 5);
        out->newest = get_i64(res, 0, 6);
    }
    PQclear(res);
    if (!rc && fn) rc = group_counts(s, STORE_BY_KIND, "kind", ns, fn, ctx);
    if (!rc && fn) rc = group_counts(s, STORE_BY_TIER, "tier", ns, fn, ctx);
    if (!rc && fn) rc = group_counts(s, STORE_BY_MODEL, "coalesce(model,'')", ns, fn, ctx);
    if (!rc && !ns) {
        int rc2;
        res = run(s, "SELECT pg_database_size(current_database())", 0, NULL, NULL, NULL,
                  "statistics", &rc2);
        if (res && PQntuples(res)) out->file_bytes = get_i64(res, 0, 0);
        PQclear(res);
    }
    return rc;
}

/* ---- the table ---- */

static const store_ops pg_ops = {
    .name = "postgres",
    .close = pg_close,
    .begin = pg_begin,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .changed = pg_changed,
    .ns_info = pg_ns_info,
    .ns_set_model = pg_ns_set_model,
    .namespaces = pg_namespaces,
    .find = pg_find,
    .get_rowid = pg_get_rowid,
    .find_dup = pg_find_dup,
    .find_dup_after = pg_find_dup_after,
    .insert = pg_insert,
    .replace = pg_replace,
    .bump_duplicate = pg_bump_duplicate,
    .remove = pg_remove,
    .touch = pg_touch,
    .set_vector = pg_set_vector,
    .clear = pg_clear,
    .scan = pg_scan,
    .stats = pg_stats,
    .history_add = pg_history_add,
    .history_max = pg_history_max,
    .history_since = pg_history_since,
    .history = pg_history,
    .history_scrub = pg_history_scrub,
    .scrub_deleted = pg_scrub_deleted,
    .commit_report = pg_commit_report,
    .batch = pg_batch,
    .load = pg_load,
};

static const char *const pg_schemes[] = {"postgres", "postgresql", NULL};

const store_backend store_postgres_backend = {
    .name = "postgres",
    .schemes = pg_schemes,
    .open = pg_open,
};
