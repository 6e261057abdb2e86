/*
 * test_fault.c: fault injection as SQLite tests itself. A cycle of steps
 * (open, add, episode.add, recall, update, archive, restore, prune) is
 * run once without faults, keeping a copy of the store folder (the SQLite
 * file, its archive folder, its cache snapshots) before each step and a
 * view of what a client sees after each. Then, for each step and each kind
 * of fault (allocation, store call, file write: tests/fault/fault.h), N
 * walks 1, 2, 3, ...: a fresh copy of the folder before the step, the
 * step run (and its handle closed, which writes the cache snapshots) with
 * the Nth call of that kind failing, then, with no fault:
 *
 *   - the step returned an error with a message, or succeeded because the
 *     fault hit something it may do without (a snapshot; recall's touch);
 *   - nothing half-written is visible: the view (every row of the store's
 *     tables, every line of every archive file, the ids archive.list
 *     shows, a recall over both namespaces from a fresh handle) is
 *     the one before the step after an error, the one after it after a
 *     success (a step of several transactions, prune, may stop between
 *     two: then the retry must finish it);
 *   - the check operation finds nothing wrong;
 *   - after an error the step run again succeeds, and the view is then
 *     exactly the one of the run without faults.
 *
 * The walk of a step and kind ends past the last call the step makes.
 * Environment: REMEM_FAULT_WALK=K walks the first K calls of each step
 * one by one and K/4 more spread to the last (default 220, 16 under
 * AddressSanitizer; 0: every call); REMEM_FAULT_ONLY=STEP:KIND:N runs one
 * injection; REMEM_FAULT_VERBOSE=1 prints each; REMEM_FAULT_BACKTRACE=1
 * the failing call's stack; REMEM_FAULT_JANSSON=1 fails jansson's
 * allocations too (fault.h says why not by default). Faults that found a
 * bug are kept in `regressions` below and always run first. The store
 * folders live on /dev/shm when there is one (the walk fsyncs a lot).
 * docs/fuzzing.md "Fault injection" has the whole story.
 *
 * A new step (ingest, say) is one line of `cycle`.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fault/fault.h"
#include "maintenance/archive_file.h"
#include "remem.h"
#include "test.h"

/* The clock of step i: 2026-01-10T00:00:00Z plus i hours. */
#define T_START 1768003200000LL
#define HOUR_MS 3600000LL

/* ---- the cycle ---- */

typedef struct step {
    const char *name;
    /* How it runs: fn, or (fn NULL) the operation `name` with args. */
    int (*fn)(remem *db, const char *args);
    const char *args;
    unsigned flags;
} step;

enum {
    STEP_OPEN = 1,    /* the step is remem_open itself (creating the store) */
    STEP_PARTIAL = 2, /* several transactions: may stop between two */
    STEP_SOFT = 4     /* may succeed without its bookkeeping (recall's touch) */
};

static int run_add(remem *db, const char *args) {
    (void)args;
    static const char *const texts[] = {
        "the deploy failed because the disk was full",
        "the user prefers dark mode in every editor",
        "postgres needs a vacuum after the bulk import",
        "the deploy succeeded after the logs were rotated",
        "lunch is at noon on fridays",
    };
    remem_memory m[5];
    char ids[5][16];
    for (int i = 0; i < 5; i++) {
        remem_memory_init(&m[i]);
        snprintf(ids[i], sizeof ids[i], "m%d", i + 1);
        m[i].ns = "n";
        m[i].id = ids[i];
        m[i].text = texts[i];
        m[i].metadata = i % 2 ? "{\"topic\":\"ops\"}" : NULL;
    }
    return remem_add_batch(db, m, 5, NULL, 0, NULL);
}

/* One memory with a generated id, and a duplicate folded into m1. */
static int run_add_generated(remem *db, const char *args) {
    (void)args;
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "n";
    m.text = args;
    return remem_add(db, &m, NULL, 0, NULL);
}

static int run_recall(remem *db, const char *args) {
    char *out = NULL;
    int rc = remem_recall_json(db, args, strlen(args), &out);
    remem_free(out);
    return rc;
}

static int run_update(remem *db, const char *args) {
    (void)args;
    remem_patch p;
    remem_patch_init(&p);
    p.fields = REMEM_SET_TEXT | REMEM_SET_IMPORTANCE;
    p.text = "postgres needs a vacuum and an analyse after the bulk import";
    p.importance = 0.9;
    return remem_update(db, "n", "m3", &p);
}

#define EPISODE(task, prompt, ts)                                                                \
    "{\"ns\":\"eps\",\"prompt\":\"" prompt "\",\"output\":\"done\",\"meta\":{\"taskID\":\"" task \
    "\",\"projectID\":\"acme\",\"language\":\"c\",\"timestamp\":\"" ts "\"}}"

static const step cycle[] = {
    {"open", NULL, NULL, STEP_OPEN},
    {"add (batch)", run_add, NULL, 0},
    {"add (generated id)", run_add_generated, "the build cache lives in /var/cache/build", 0},
    {"add (duplicate)", run_add_generated, "The deploy failed because the disk was full", 0},
    {"episode.add", NULL, EPISODE("t1", "sort a list of ints", "2025-06-01T00:00:00Z"), 0},
    {"episode.add", NULL, EPISODE("t2", "parse a csv file into rows", "2026-01-08T00:00:00Z"), 0},
    {"episode.add", NULL,
     EPISODE("t3", "parse a csv file into rows quickly", "2026-01-09T00:00:00Z"), 0},
    {"recall", run_recall, "{\"namespaces\":[\"n\"],\"text\":\"why did the deploy fail\",\"k\":3}",
     STEP_SOFT},
    {"update", run_update, NULL, 0},
    {"archive", NULL, "{\"ns\":\"n\",\"ids\":[\"m1\",\"m2\"]}", 0},
    {"restore", NULL, "{\"ns\":\"n\",\"id\":\"m1\"}", 0},
    {"prune", NULL,
     "{\"ns\":\"eps\",\"retention_days\":90,\"similarity_threshold\":0.6,"
     "\"strategy\":\"heuristic\"}",
     STEP_PARTIAL},
    /* a conversation in without an LLM: its turns verbatim, one transaction */
    {"ingest", NULL,
     "{\"ns\":\"chat\",\"session_time\":\"2026-01-10T09:00:00Z\",\"messages\":["
     "{\"role\":\"system\",\"content\":\"be brief\"},"
     "{\"role\":\"user\",\"name\":\"Ada\",\"content\":\"the staging deploy failed again\"},"
     "{\"role\":\"assistant\",\"content\":\"the disk was full; I cleaned /var/cache\"},"
     "{\"role\":\"user\",\"name\":\"Ada\",\"content\":\"the staging deploy failed again\"}]}",
     0},
};
#define N_STEPS (sizeof cycle / sizeof cycle[0])

/* Faults that found a bug, run before the walk whatever its length:
 * {step index, kind, n, what was wrong}. The numbers are those of the
 * code they were found in; they drift as the code changes, and the walk
 * around them stays exhaustive up to REMEM_FAULT_WALK. */
typedef struct regression {
    size_t step;
    enum fault_kind kind;
    long n;
    int jansson; /* with jansson's allocations counted (fault_jansson) */
    const char *bug;
} regression;
static const regression regressions[] = {
    /* A history read inside archive's transaction failed; SQLite had
     * rolled the transaction back, the deletes then ran in autocommit
     * mode, the commit failed and the archive file was removed: the
     * memories were gone from both places. */
    {9, FAULT_ALLOC, 342, 0, "archive: rows deleted, archive file removed"},
    {9, FAULT_STORE, 4, 0, "archive: a record written without its history"},
    {10, FAULT_ALLOC, 51, 0, "restore: a history row without its after"},
    {7, FAULT_ALLOC, 416, 0, "recall: scores without the context bonus, other hits touched"},
    /* A prune cluster's summary was committed, the archiving of its
     * members failed: the summary stood beside its live members, and the
     * retry folded a second one into it (duplicate_count 1). */
    {11, FAULT_STORE, 26, 0, "prune: a summary committed apart from its members' archive"},
    /* The extractive summary dropped a sentence it could not normalise
     * and prune stored the shorter summary. */
    {11, FAULT_ALLOC, 695, 0, "prune: a summary missing a sentence"},
    /* The set of ids to archive could not be made, and archive took it
     * for "no ids named": every memory of the namespace was archived. */
    {9, FAULT_ALLOC, 3, 1, "archive: the whole namespace archived instead of two ids"},
    /* A message's id was hashed from a buffer cut short by a failed
     * allocation: the turn was stored under another id, and the same
     * transcript given again would have been stored twice. */
    {12, FAULT_ALLOC, 11, 0, "ingest: a turn stored under an id hashed from a cut buffer"},
};
#define N_REGRESSIONS (sizeof regressions / sizeof regressions[0])

/* ---- folders ---- */

static char root[64];

static int copy_file(const char *from, const char *to) {
    int in = open(from, O_RDONLY), out = in < 0 ? -1 : open(to, O_WRONLY | O_CREAT | O_EXCL, 0600);
    char buf[65536];
    ssize_t n = 0;
    while (out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n) n = -1;
    int rc = in < 0 || out < 0 || n < 0 ? -1 : 0;
    if (in >= 0) close(in);
    if (out >= 0) close(out);
    return rc;
}

static int copy_tree(const char *from, const char *to) {
    if (mkdir(to, 0700) && errno != EEXIST) return -1;
    DIR *d = opendir(from);
    if (!d) return -1;
    int rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char a[1024], b[1024];
        struct stat st;
        snprintf(a, sizeof a, "%s/%s", from, e->d_name);
        snprintf(b, sizeof b, "%s/%s", to, e->d_name);
        if (lstat(a, &st))
            rc = -1;
        else if (S_ISDIR(st.st_mode))
            rc = copy_tree(a, b);
        else if (S_ISREG(st.st_mode))
            rc = copy_file(a, b);
    }
    closedir(d);
    return rc;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f) {
    (void)st;
    (void)flag;
    (void)f;
    return remove(p);
}

static void rm_tree(const char *p) { nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static void folder(char *out, size_t cap, const char *what, size_t i) {
    snprintf(out, cap, "%s/%s%zu", root, what, i);
}

static void store_path(char *out, size_t cap, const char *dir) {
    snprintf(out, cap, "%s/store.db", dir);
}

/* ---- what a client sees ---- */

static remem *open_db(const char *dir, int *rc) {
    char path[1100];
    store_path(path, sizeof path, dir);
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    *rc = remem_open(path, &o, &db);
    if (*rc) {
        remem_close(db);
        db = NULL;
    }
    return db;
}

/* A value as text: blobs as hex, archive file names (which hold the
 * process id and a counter) as one placeholder. */
static void put_value(FILE *f, sqlite3_stmt *st, int c) {
    if (sqlite3_column_type(st, c) == SQLITE_BLOB) {
        const unsigned char *b = sqlite3_column_blob(st, c);
        for (int i = 0; i < sqlite3_column_bytes(st, c); i++) fprintf(f, "%02x", b[i]);
        return;
    }
    const char *t = (const char *)sqlite3_column_text(st, c);
    if (!t) {
        fputs("NULL", f);
    } else if (strstr(t, ".jsonl.zst")) {
        fputs("<archive file>", f);
    } else {
        fputs(t, f);
    }
}

static void dump_table(FILE *f, sqlite3 *s, const char *table) {
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT * FROM \"%.64s\" ORDER BY 1, 2", table);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(f, "%s: %s\n", table, sqlite3_errmsg(s));
        return;
    }
    fprintf(f, "[%s]\n", table);
    while (sqlite3_step(st) == SQLITE_ROW) {
        for (int c = 0; c < sqlite3_column_count(st); c++) {
            fprintf(f, "%s%s=", c ? " | " : "", sqlite3_column_name(st, c));
            put_value(f, st, c);
        }
        fputc('\n', f);
    }
    sqlite3_finalize(st);
}

/* Every table of the store, row by row. */
static void dump_store(FILE *f, const char *path) {
    sqlite3 *s = NULL;
    if (sqlite3_open_v2(path, &s, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(f, "store: cannot open\n");
        sqlite3_close(s);
        return;
    }
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(s,
                       "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE "
                       "'sqlite_%' ORDER BY name",
                       -1, &st, NULL);
    char names[32][64];
    int n = 0;
    while (st && n < 32 && sqlite3_step(st) == SQLITE_ROW)
        snprintf(names[n++], sizeof names[0], "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    for (int i = 0; i < n; i++) dump_table(f, s, names[i]);
    sqlite3_close(s);
}

static int by_text(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The answer of an operation, or a line saying it failed. */
static void put_call(FILE *f, remem *db, const char *op, const char *args, const char *key) {
    char *out = NULL;
    int rc = remem_call(db, op, args, strlen(args), &out);
    json_t *j = rc ? NULL : json_loads(out, 0, NULL);
    if (!j) {
        fprintf(f, "%s %s: failed (%d) %s\n", op, args, rc, remem_errmsg(db));
    } else {
        /* a list of strings sorted: archive.list lists files in name
         * order, and names hold the process id and a counter */
        json_t *v = json_object_get(j, key);
        size_t n = json_array_size(v);
        const char **ids = calloc(n + 1, sizeof *ids);
        for (size_t i = 0; i < n; i++) ids[i] = json_string_value(json_array_get(v, i));
        if (n) qsort(ids, n, sizeof *ids, by_text);
        fprintf(f, "%s %s:", op, args);
        for (size_t i = 0; i < n; i++) fprintf(f, " %s", ids[i] ? ids[i] : "?");
        fputc('\n', f);
        free(ids);
    }
    json_decref(j);
    remem_free(out);
}

/* The hits of a recall over both namespaces: ids and scores. */
static void put_recall(FILE *f, remem *db) {
    static const char q[] = "{\"namespaces\":[\"n\",\"eps\"],\"text\":\"deploy disk csv rows\","
                            "\"k\":20,\"touch\":false,\"now\":1768003200000}";
    char *out = NULL;
    int rc = remem_recall_json(db, q, strlen(q), &out);
    json_t *j = rc ? NULL : json_loads(out, 0, NULL);
    size_t i;
    json_t *h;
    fprintf(f, "[recall] %s\n", rc ? remem_errmsg(db) : "");
    json_array_foreach(json_object_get(j, "hits"), i, h) {
        json_t *mem = json_object_get(h, "memory");
        const char *id = json_string_value(json_object_get(mem ? mem : h, "id"));
        fprintf(f, "%s %.6f\n", id ? id : "?", json_number_value(json_object_get(h, "score")));
    }
    json_decref(j);
    remem_free(out);
}

/* Every line of every archive file under dir (file names aside: they hold
 * the process id), sorted, after a line saying a file is damaged. */
typedef struct lines {
    char **v;
    size_t n, cap;
} lines;

static void add_line(lines *l, char *s) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = s;
}

static void read_archive(const char *path, lines *l) {
    char err[512];
    arch_reader *r = arch_reader_open(path, err, sizeof err);
    json_t *o;
    int got = r ? 0 : -1;
    while (r && (got = arch_reader_next(r, &o, err, sizeof err)) == 1) {
        add_line(l, json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS));
        json_decref(o);
    }
    if (got < 0) add_line(l, strdup(err));
    arch_reader_close(r);
}

static void archive_lines(const char *dir, lines *l) {
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[1024];
        struct stat st;
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (lstat(p, &st)) continue;
        if (S_ISDIR(st.st_mode)) archive_lines(p, l);
        size_t n = strlen(e->d_name);
        if (n > 10 && !strcmp(e->d_name + n - 10, ".jsonl.zst")) read_archive(p, l);
    }
    if (d) closedir(d);
}

static void put_archive(FILE *f, const char *path) {
    char dir[1200];
    lines l = {0};
    snprintf(dir, sizeof dir, "%s.archive", path);
    archive_lines(dir, &l);
    if (l.n) qsort(l.v, l.n, sizeof *l.v, by_text);
    fprintf(f, "[archive files]\n");
    for (size_t i = 0; i < l.n; i++) {
        fprintf(f, "%s\n", l.v[i] ? l.v[i] : "(no memory)");
        free(l.v[i]);
    }
    free(l.v);
}

/* The view of dir's store through db (open on it), as one string. */
static char *view(remem *db, const char *dir) {
    char path[1100], *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    store_path(path, sizeof path, dir);
    /* archive.list first: it finishes what an interrupted archive left */
    put_call(f, db, "archive.list", "{\"ns\":\"n\",\"ids\":true}", "ids");
    put_call(f, db, "archive.list", "{\"ns\":\"eps\",\"ids\":true}", "ids");
    put_archive(f, path);
    dump_store(f, path);
    put_recall(f, db);
    fclose(f);
    return buf;
}

/* "check" finds nothing wrong. */
static int check_clean(remem *db, char *why, size_t cap) {
    char *out = NULL;
    int rc = remem_call(db, "check", "{}", 2, &out);
    json_t *j = rc ? NULL : json_loads(out, 0, NULL);
    int ok = j && json_is_true(json_object_get(j, "ok"));
    if (!ok) snprintf(why, cap, "check: %s", rc ? remem_errmsg(db) : out);
    json_decref(j);
    remem_free(out);
    return ok;
}

/* ---- running a step ---- */

static int run_step(remem *db, const step *s) {
    if (s->fn) return s->fn(db, s->args);
    char *out = NULL;
    int rc = remem_call(db, s->name, s->args, strlen(s->args), &out);
    remem_free(out);
    return rc;
}

/* Open dir's store, run step s (armed with kind k and n when n > 0; the
 * open itself armed for an open step), close. Returns the step's status;
 * *msg gets its message. */
static int run_in(const char *dir, const step *s, size_t i, enum fault_kind k, long n, char *msg,
                  size_t cap) {
    int rc;
    fault_clock_set(T_START + (int64_t)i * HOUR_MS);
    remem *db = NULL;
    msg[0] = '\0';
    if (s->flags & STEP_OPEN) {
        fault_arm(k, n);
        char path[1100];
        store_path(path, sizeof path, dir);
        remem_options o;
        remem_options_init(&o);
        o.embedder = "hash";
        rc = remem_open(path, &o, &db);
    } else {
        db = open_db(dir, &rc);
        if (!db) {
            snprintf(msg, cap, "the store before the step does not open (%d)", rc);
            return -1000;
        }
        fault_arm(k, n);
        rc = run_step(db, s);
    }
    if (rc) snprintf(msg, cap, "%s", remem_errmsg(db));
    remem_close(db); /* still armed: closing writes the cache snapshots */
    fault_disarm();
    return rc;
}

/* ---- the walk ---- */

static char *views[N_STEPS + 1];          /* views[i]: before step i (views[0]: no store) */
static long totals[N_STEPS][FAULT_KINDS]; /* calls of each kind in each step */
static int verbose, inconsistent;
static long walked[FAULT_KINDS];

/* The first line where a and b differ, for the report. */
static void first_diff(const char *a, const char *b) {
    size_t line = 1, i = 0;
    for (; a[i] && a[i] == b[i]; i++) line += a[i] == '\n';
    const char *la = a + i, *lb = b + i;
    while (la > a && la[-1] != '\n') la--;
    while (lb > b && lb[-1] != '\n') lb--;
    fprintf(stderr, "    line %zu: got      %.*s\n", line, (int)strcspn(la, "\n"), la);
    fprintf(stderr, "    line %zu: expected %.*s\n", line, (int)strcspn(lb, "\n"), lb);
}

static void bad(size_t i, enum fault_kind k, long n, const char *what) {
    inconsistent++;
    test__failed_checks++;
    test__cur_failed = 1;
    fprintf(stderr, "  %s, %s %ld failing: %s\n", cycle[i].name, fault_kind_name(k), n, what);
}

/* After step i ran with a fault (status rc): the checks of the file's
 * header comment. */
static void verify(const char *dir, size_t i, enum fault_kind k, long n, int rc, const char *msg) {
    const step *s = &cycle[i];
    char why[1024];
    if (rc && !msg[0]) bad(i, k, n, "an error without a message");
    int orc;
    fault_clock_set(T_START + (int64_t)i * HOUR_MS);
    remem *db = open_db(dir, &orc); /* for an open step: the retry */
    if (!db) {
        snprintf(why, sizeof why, "the store does not open after the fault (%d)", orc);
        return bad(i, k, n, why);
    }
    if (!check_clean(db, why, sizeof why)) bad(i, k, n, why);
    char *v = view(db, dir);
    int is_after = !strcmp(v, views[i + 1]), is_before = !strcmp(v, views[i]);
    int fine = (s->flags & STEP_OPEN) || is_after ? 1
               : rc                               ? is_before || (s->flags & STEP_PARTIAL)
                                                  : is_before && (s->flags & STEP_SOFT);
    if (!fine) {
        snprintf(why, sizeof why, "%s left a state that is neither before nor after it",
                 rc ? "the error" : "the success");
        bad(i, k, n, why);
        first_diff(v, rc ? views[i] : views[i + 1]);
    }
    free(v);
    if (rc && !(s->flags & STEP_OPEN) && !is_after) {
        int r2 = run_step(db, s);
        if (r2) {
            snprintf(why, sizeof why, "the retry failed: %s", remem_errmsg(db));
            bad(i, k, n, why);
        } else {
            v = view(db, dir);
            if (strcmp(v, views[i + 1])) {
                bad(i, k, n, "the retry did not end where the run without faults did");
                first_diff(v, views[i + 1]);
            }
            free(v);
        }
    }
    remem_close(db);
}

/* Step i with the nth call of kind k failing; 1 when the fault fired. */
static int inject(size_t i, enum fault_kind k, long n) {
    static unsigned iter;
    char dir[128], base[128], msg[512];
    folder(dir, sizeof dir, "run", iter++);
    folder(base, sizeof base, "base", i);
    if (copy_tree(base, dir)) {
        fprintf(stderr, "  cannot copy %s\n", base);
        exit(1);
    }
    int rc = run_in(dir, &cycle[i], i, k, n, msg, sizeof msg);
    int fired = fault_fired();
    if (verbose)
        fprintf(stderr, "  %-20s %-10s %4ld: %s%s%s\n", cycle[i].name, fault_kind_name(k), n,
                fired ? "" : "(not reached) ", rc ? "error: " : "ok", msg);
    if (fired) {
        walked[k]++;
        verify(dir, i, k, n, rc, msg);
    } else if (rc) {
        bad(i, k, n, "the step failed with no fault injected");
    }
    rm_tree(dir);
    return fired;
}

static long env_long(const char *name, long dflt) {
    const char *e = getenv(name);
    return e && *e ? strtol(e, NULL, 10) : dflt;
}

/* The run without faults: the folder before each step and the views. */
static int prepare(void) {
    char dir[128], next[128], scratch[128], msg[512];
    folder(dir, sizeof dir, "base", 0);
    mkdir(dir, 0700);
    views[0] = strdup("");
    for (size_t i = 0; i < N_STEPS; i++) {
        folder(dir, sizeof dir, "base", i);
        folder(next, sizeof next, "base", i + 1);
        if (copy_tree(dir, next)) return -1;
        int rc = run_in(next, &cycle[i], i, FAULT_ALLOC, 0, msg, sizeof msg);
        if (rc) {
            fprintf(stderr, "  %s failed without a fault: %s\n", cycle[i].name, msg);
            return -1;
        }
        for (int k = 0; k < FAULT_KINDS; k++) totals[i][k] = fault_count((enum fault_kind)k);
        if (verbose)
            fprintf(stderr, "  %-20s %ld allocations, %ld store calls, %ld file writes\n",
                    cycle[i].name, totals[i][0], totals[i][1], totals[i][2]);
        /* the view from a copy: reading it writes snapshots */
        folder(scratch, sizeof scratch, "scratch", i);
        copy_tree(next, scratch);
        int orc;
        fault_clock_set(T_START + (int64_t)i * HOUR_MS);
        remem *db = open_db(scratch, &orc);
        if (!db) return -1;
        views[i + 1] = view(db, scratch);
        remem_close(db);
        rm_tree(scratch);
    }
    return 0;
}

/* REMEM_FAULT_ONLY=STEP:KIND:N (step index, kind alloc|store|file): run
 * that one injection, verbosely. 1 when it was given. */
static int only_one(void) {
    const char *e = getenv("REMEM_FAULT_ONLY");
    char kind[16];
    size_t i;
    long n;
    if (!e || sscanf(e, "%zu:%15[a-z]:%ld", &i, kind, &n) != 3 || i >= N_STEPS) return 0;
    enum fault_kind k = !strcmp(kind, "store")  ? FAULT_STORE
                        : !strcmp(kind, "file") ? FAULT_FILE
                                                : FAULT_ALLOC;
    verbose = 1;
    inject(i, k, n);
    return 1;
}

/* The Ns to walk for a step of total calls: every one up to limit, then
 * limit/4 more spread evenly to the last (limit 0: every one). */
static long next_n(long n, long total, long limit) {
    if (!limit || n < limit) return n + 1;
    long more = limit / 4 > 0 ? limit / 4 : 1, stride = (total - limit + more - 1) / more;
    return n + (stride > 1 ? stride : 1);
}

static void test_walk(void) {
#ifdef __SANITIZE_ADDRESS__
    long limit = env_long("REMEM_FAULT_WALK", 16);
#else
    long limit = env_long("REMEM_FAULT_WALK", 220);
#endif
    verbose = (int)env_long("REMEM_FAULT_VERBOSE", 0);
    if (limit < 0) limit = 0;
    CHECK(prepare() == 0);
    if (test__cur_failed) return;
    int jansson = (int)env_long("REMEM_FAULT_JANSSON", 0);
    fault_jansson(jansson);
    if (only_one()) return;
    for (size_t r = 0; r < N_REGRESSIONS; r++) {
        fault_jansson(jansson || regressions[r].jansson);
        inject(regressions[r].step, regressions[r].kind, regressions[r].n);
    }
    fault_jansson(jansson);
    long exhaustive = 0;
    for (size_t i = 0; i < N_STEPS; i++) {
        long runs[FAULT_KINDS] = {0};
        for (int k = 0; k < FAULT_KINDS; k++) {
            long t = totals[i][k];
            /* past the last call counted without faults: the step must
             * complete without reaching n */
            for (long n = 1; n <= t + 1; n = next_n(n, t, limit)) {
                runs[k]++;
                if (!inject(i, (enum fault_kind)k, n)) break;
            }
            if (k == FAULT_ALLOC) exhaustive += !limit || t < limit ? t : limit;
        }
        printf("  %-20s %5ld allocations (%ld injected), %4ld store calls (%ld), %4ld file "
               "writes (%ld)\n",
               cycle[i].name, totals[i][FAULT_ALLOC], runs[FAULT_ALLOC] - 1, totals[i][FAULT_STORE],
               runs[FAULT_STORE] - 1, totals[i][FAULT_FILE], runs[FAULT_FILE] - 1);
    }
    char how[160];
    if (limit)
        snprintf(how, sizeof how, "the first %ld of each step one by one, %ld in all, then spread",
                 limit, exhaustive);
    else
        snprintf(how, sizeof how, "every one of every step");
    printf("walk: %ld allocations (%s), %ld store calls, %ld file writes failed one at a time; %d "
           "inconsistent states\n",
           walked[FAULT_ALLOC], how, walked[FAULT_STORE], walked[FAULT_FILE], inconsistent);
    /* the floor: 2,000 allocations walked one by one */
    if (!limit || limit >= 220) CHECK(exhaustive >= 2000);
    CHECK_INT(inconsistent, 0);
}

int main(int argc, char **argv) {
    if (fault_install()) {
        fprintf(stderr, "cannot install the SQLite allocator\n");
        return 1;
    }
    setenv("REMEM_SNAPSHOT_MIN", "1", 1); /* every namespace gets its snapshot file */
    /* tmpfs when there is one: the walk fsyncs thousands of times */
    snprintf(root, sizeof root, "%s/remem-test-fault-XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }
    TEST_INIT(argc, argv);
    RUN(test_walk);
    rm_tree(root);
    for (size_t i = 0; i <= N_STEPS; i++) free(views[i]);
    return TEST_EXIT();
}
