/*
 * fault.c: the wrappers behind fault.h. Each __wrap_X is what remem's
 * objects call instead of X when the test is linked with --wrap=X; it asks
 * hit() whether this call is the one to fail, and otherwise calls
 * __real_X. The counters are atomics because a failing call may sit on a
 * thread remem started; the test itself arms and disarms from one thread.
 *
 * A failure looks like the real one: allocators return NULL (errno
 * ENOMEM), file calls -1 / EOF / NULL with errno EIO (ENOSPC for a write),
 * store calls REMEM_EIO with the store's message set. fclose still closes
 * (as a failing fclose does) and then reports the failure.
 */
#include "fault/fault.h"

#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "store/store.h"

static atomic_int armed;
static atomic_long counts[FAULT_KINDS];
static long target[FAULT_KINDS];
static atomic_int fired;

void fault_arm(enum fault_kind k, long n) {
    for (int i = 0; i < FAULT_KINDS; i++) {
        atomic_store(&counts[i], 0);
        target[i] = 0;
    }
    target[k] = n;
    atomic_store(&fired, 0);
    atomic_store(&armed, 1);
}

void fault_disarm(void) { atomic_store(&armed, 0); }
long fault_count(enum fault_kind k) { return atomic_load(&counts[k]); }
int fault_fired(void) { return atomic_load(&fired); }

const char *fault_kind_name(enum fault_kind k) {
    static const char *const names[] = {"allocation", "store call", "file write"};
    return names[k];
}

/* 1 when this call of kind k is the one to fail. */
static int hit(enum fault_kind k) {
    if (!atomic_load(&armed)) return 0;
    long n = atomic_fetch_add(&counts[k], 1) + 1;
    if (target[k] && n == target[k]) {
        atomic_store(&fired, 1);
        /* REMEM_FAULT_BACKTRACE=1: where the failing call was made (for
         * addr2line -e build/tests/test_fault) */
        if (getenv("REMEM_FAULT_BACKTRACE")) {
            void *frames[24];
            backtrace_symbols_fd(frames, backtrace(frames, 24), 2);
        }
        return 1;
    }
    return 0;
}

/* ---- allocations ---- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
int __real_vasprintf(char **out, const char *fmt, va_list ap);

static void *no_memory(void) {
    errno = ENOMEM;
    return NULL;
}

void *__wrap_malloc(size_t n) { return hit(FAULT_ALLOC) ? no_memory() : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) {
    return hit(FAULT_ALLOC) ? no_memory() : __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t n) {
    return hit(FAULT_ALLOC) ? no_memory() : __real_realloc(p, n);
}
char *__wrap_strdup(const char *s) { return hit(FAULT_ALLOC) ? no_memory() : __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) {
    return hit(FAULT_ALLOC) ? no_memory() : __real_strndup(s, n);
}
void *__wrap_aligned_alloc(size_t align, size_t n) {
    return hit(FAULT_ALLOC) ? no_memory() : __real_aligned_alloc(align, n);
}
int __wrap_vasprintf(char **out, const char *fmt, va_list ap) {
    if (hit(FAULT_ALLOC)) {
        *out = NULL;
        errno = ENOMEM;
        return -1;
    }
    return __real_vasprintf(out, fmt, ap);
}

/* jansson's allocator (json_set_alloc_funcs), never failing inside
 * jansson's parser (fault.h says why). */
static _Thread_local int in_parse;
static atomic_int jansson_on;
void fault_jansson(int on) { atomic_store(&jansson_on, on); }
static void *json_alloc(size_t n) {
    return atomic_load(&jansson_on) && !in_parse && hit(FAULT_ALLOC) ? NULL : __real_malloc(n);
}

json_t *__real_json_loads(const char *s, size_t flags, json_error_t *e);
json_t *__real_json_loadb(const char *s, size_t n, size_t flags, json_error_t *e);
json_t *__wrap_json_loads(const char *s, size_t flags, json_error_t *e) {
    in_parse++;
    json_t *j = __real_json_loads(s, flags, e);
    in_parse--;
    return j;
}
json_t *__wrap_json_loadb(const char *s, size_t n, size_t flags, json_error_t *e) {
    in_parse++;
    json_t *j = __real_json_loadb(s, n, flags, e);
    in_parse--;
    return j;
}

/* SQLite's: its own methods with malloc and realloc able to fail. */
static sqlite3_mem_methods sqlite_mem;
static void *sqlite_malloc(int n) { return hit(FAULT_ALLOC) ? NULL : sqlite_mem.xMalloc(n); }
static void *sqlite_realloc(void *p, int n) {
    return hit(FAULT_ALLOC) ? NULL : sqlite_mem.xRealloc(p, n);
}

int fault_install(void) {
    json_set_alloc_funcs(json_alloc, free);
    if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &sqlite_mem) != SQLITE_OK) return -1;
    sqlite3_mem_methods m = sqlite_mem;
    m.xMalloc = sqlite_malloc;
    m.xRealloc = sqlite_realloc;
    return sqlite3_config(SQLITE_CONFIG_MALLOC, &m) == SQLITE_OK ? 0 : -1;
}

/* ---- file writes ---- */

FILE *__real_fopen(const char *path, const char *mode);
int __real_open(const char *path, int flags, ...);
ssize_t __real_write(int fd, const void *p, size_t n);
ssize_t __real_pwrite(int fd, const void *p, size_t n, off_t off);
size_t __real_fwrite(const void *p, size_t size, size_t n, FILE *f);
int __real_fputs(const char *s, FILE *f);
int __real_fputc(int c, FILE *f);
int __real_fflush(FILE *f);
int __real_fsync(int fd);
int __real_fdatasync(int fd);
int __real_fclose(FILE *f);
int __real_rename(const char *a, const char *b);
int __real_mkdir(const char *path, mode_t mode);
int __real_ftruncate(int fd, off_t len);
int __real_json_dumpf(const json_t *j, FILE *f, size_t flags);
int __real_json_dump_file(const json_t *j, const char *path, size_t flags);

/* The standard streams are the test's own output, never a fault point. */
static int is_std(FILE *f) { return f == stdout || f == stderr; }
static int is_std_fd(int fd) { return fd == 1 || fd == 2; }

static int io_fail(int e) {
    errno = e;
    return 1;
}

FILE *__wrap_fopen(const char *path, const char *mode) {
    if (strpbrk(mode, "wa+") && hit(FAULT_FILE) && io_fail(EIO)) return NULL;
    return __real_fopen(path, mode);
}

int __wrap_open(const char *path, int flags, ...) {
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, mode_t);
        va_end(ap);
    }
    if ((flags & (O_WRONLY | O_RDWR | O_CREAT)) && hit(FAULT_FILE) && io_fail(EIO)) return -1;
    return __real_open(path, flags, mode);
}

ssize_t __wrap_write(int fd, const void *p, size_t n) {
    if (!is_std_fd(fd) && hit(FAULT_FILE) && io_fail(ENOSPC)) return -1;
    return __real_write(fd, p, n);
}

ssize_t __wrap_pwrite(int fd, const void *p, size_t n, off_t off) {
    if (hit(FAULT_FILE) && io_fail(ENOSPC)) return -1;
    return __real_pwrite(fd, p, n, off);
}

size_t __wrap_fwrite(const void *p, size_t size, size_t n, FILE *f) {
    if (!is_std(f) && hit(FAULT_FILE) && io_fail(ENOSPC)) return 0;
    return __real_fwrite(p, size, n, f);
}

int __wrap_fputs(const char *s, FILE *f) {
    if (!is_std(f) && hit(FAULT_FILE) && io_fail(ENOSPC)) return EOF;
    return __real_fputs(s, f);
}

int __wrap_fputc(int c, FILE *f) {
    if (!is_std(f) && hit(FAULT_FILE) && io_fail(ENOSPC)) return EOF;
    return __real_fputc(c, f);
}

int __wrap_fprintf(FILE *f, const char *fmt, ...) {
    if (!is_std(f) && hit(FAULT_FILE) && io_fail(ENOSPC)) return -1;
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(f, fmt, ap);
    va_end(ap);
    return n;
}

int __wrap_json_dumpf(const json_t *j, FILE *f, size_t flags) {
    if (hit(FAULT_FILE) && io_fail(ENOSPC)) return -1;
    return __real_json_dumpf(j, f, flags);
}

int __wrap_json_dump_file(const json_t *j, const char *path, size_t flags) {
    if (hit(FAULT_FILE) && io_fail(ENOSPC)) return -1;
    return __real_json_dump_file(j, path, flags);
}

int __wrap_fflush(FILE *f) {
    if (f && !is_std(f) && hit(FAULT_FILE) && io_fail(EIO)) return EOF;
    return __real_fflush(f);
}

int __wrap_fsync(int fd) {
    if (hit(FAULT_FILE) && io_fail(EIO)) return -1;
    return __real_fsync(fd);
}

int __wrap_fdatasync(int fd) {
    if (hit(FAULT_FILE) && io_fail(EIO)) return -1;
    return __real_fdatasync(fd);
}

int __wrap_fclose(FILE *f) {
    int fail = !is_std(f) && hit(FAULT_FILE);
    int rc = __real_fclose(f);
    if (fail && io_fail(EIO)) return EOF;
    return rc;
}

int __wrap_rename(const char *a, const char *b) {
    if (hit(FAULT_FILE) && io_fail(EIO)) return -1;
    return __real_rename(a, b);
}

int __wrap_mkdir(const char *path, mode_t mode) {
    if (hit(FAULT_FILE) && io_fail(EIO)) return -1;
    return __real_mkdir(path, mode);
}

int __wrap_ftruncate(int fd, off_t len) {
    if (hit(FAULT_FILE) && io_fail(EIO)) return -1;
    return __real_ftruncate(fd, len);
}

/* ---- store calls ---- */

/* The backend's own table (one backend in this test: SQLite) and the
 * table the handles get instead: a copy of it whose calls can fail.
 * Operations added to the table later pass through unwrapped until they
 * get a line here. */
static const store_ops *real_ops;
static store_ops fault_ops;

static int store_fault(store *s) {
    snprintf(s->err, sizeof s->err, "disk I/O error (injected fault)");
    return REMEM_EIO;
}

#define F_WRAP(name, params, args) \
    static int f_##name params { return hit(FAULT_STORE) ? store_fault(s) : real_ops->name args; }
F_WRAP(begin, (store * s), (s))
F_WRAP(ns_info, (store * s, const char *ns, char *m, size_t cap, int *d, int64_t *v, int64_t *r),
       (s, ns, m, cap, d, v, r))
F_WRAP(ns_set_model, (store * s, const char *ns, const char *m, int d), (s, ns, m, d))
F_WRAP(namespaces, (store * s, store_ns_fn fn, void *c), (s, fn, c))
F_WRAP(find, (store * s, const char *ns, const char *id, int v, store_row *o), (s, ns, id, v, o))
F_WRAP(get_rowid, (store * s, int64_t r, int v, store_row *o), (s, r, v, o))
F_WRAP(find_dup, (store * s, const char *ns, uint64_t h, const char *n, int64_t *r),
       (s, ns, h, n, r))
F_WRAP(find_dup_after,
       (store * s, const char *ns, uint64_t h, const char *n, int64_t a, int64_t *r),
       (s, ns, h, n, a, r))
F_WRAP(insert, (store * s, const remem_memory *m, const char *n, uint64_t h, int64_t *r),
       (s, m, n, h, r))
F_WRAP(replace, (store * s, int64_t r, const remem_memory *m, const char *n, uint64_t h),
       (s, r, m, n, h))
F_WRAP(bump_duplicate, (store * s, int64_t r, int64_t now), (s, r, now))
F_WRAP(remove, (store * s, int64_t r), (s, r))
F_WRAP(touch, (store * s, const int64_t *r, size_t n, int64_t now), (s, r, n, now))
F_WRAP(set_vector, (store * s, int64_t r, const char *m, const float *v, int d), (s, r, m, v, d))
F_WRAP(clear, (store * s, const char *ns, int64_t *d), (s, ns, d))
F_WRAP(scan, (store * s, const char *ns, int v, store_row_fn fn, void *c), (s, ns, v, fn, c))
F_WRAP(stats,
       (store * s, const char *ns, int64_t now, store_summary *o, store_count_fn fn, void *c),
       (s, ns, now, o, fn, c))
F_WRAP(history_add,
       (store * s, const char *ns, const char *id, int64_t at, const char *op, const char *ac,
        const char *b, const char *a),
       (s, ns, id, at, op, ac, b, a))
F_WRAP(history_max, (store * s, const char *ns, int64_t *q), (s, ns, q))
F_WRAP(history_since,
       (store * s, const char *ns, int64_t after, store_hist_fn fn, void *c, int64_t *m),
       (s, ns, after, fn, c, m))
F_WRAP(history, (store * s, const char *ns, const char *id, store_history_fn fn, void *c),
       (s, ns, id, fn, c))
F_WRAP(history_scrub, (store * s, const char *ns, const char *id), (s, ns, id))
F_WRAP(scrub_deleted, (store * s), (s))
F_WRAP(integrity, (store * s, store_problem_fn fn, void *c), (s, fn, c))
F_WRAP(cache_home, (store * s, char *u, size_t uc, char *p, size_t pc), (s, u, uc, p, pc))
F_WRAP(touched_since,
       (store * s, const char *ns, int64_t after, store_touch_fn fn, void *c, int64_t *n),
       (s, ns, after, fn, c, n))
#undef F_WRAP

/* A failed commit rolls back, as the table's contract says. */
static int f_commit(store *s) {
    if (!hit(FAULT_STORE)) return real_ops->commit(s);
    real_ops->rollback(s);
    return store_fault(s);
}

static void wrap_table(const store_ops *o) {
    real_ops = o;
    fault_ops = *o;
#define F_SET(name) fault_ops.name = f_##name;
    F_SET(begin)
    F_SET(commit)
    F_SET(ns_info) F_SET(ns_set_model) F_SET(namespaces) F_SET(find) F_SET(get_rowid)
        F_SET(find_dup) F_SET(find_dup_after) F_SET(insert) F_SET(replace) F_SET(bump_duplicate) F_SET(remove)
            F_SET(touch) F_SET(set_vector) F_SET(clear) F_SET(scan) F_SET(stats) F_SET(history_add)
                F_SET(history_max) F_SET(history_since) F_SET(history) F_SET(history_scrub)
                    F_SET(scrub_deleted) F_SET(integrity)
#undef F_SET
        /* Optional operations stay NULL where the backend has none. */
        if (o->cache_home) fault_ops.cache_home = f_cache_home;
    if (o->touched_since) fault_ops.touched_since = f_touched_since;
}

int __real_store_open(const char *uri, const store_config *cfg, store **out, char *err, size_t cap);
int __wrap_store_open(const char *uri, const store_config *cfg, store **out, char *err,
                      size_t cap) {
    int rc = __real_store_open(uri, cfg, out, err, cap);
    if (rc || !*out) return rc;
    if (!real_ops) wrap_table((*out)->ops);
    if ((*out)->ops == real_ops) (*out)->ops = &fault_ops;
    return rc;
}

/* ---- clock and ids ---- */

static atomic_llong clock_ms;
static atomic_uint id_counter;

void fault_clock_set(int64_t ms) {
    atomic_store(&clock_ms, ms);
    atomic_store(&id_counter, 0);
}

int64_t __real_util_now_ms(void);
int64_t __wrap_util_now_ms(void) {
    int64_t t = atomic_load(&clock_ms);
    return t ? t : __real_util_now_ms();
}

/* 26 characters of Crockford base32 as util_new_id makes: 10 of time,
 * 16 of a counter. */
void __wrap_util_new_id(int64_t now_ms, char buf[27]) {
    static const char b32[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    uint64_t t = (uint64_t)now_ms, c = atomic_fetch_add(&id_counter, 1) + 1;
    for (int i = 9; i >= 0; i--, t >>= 5) buf[i] = b32[t & 31];
    for (int i = 25; i >= 10; i--, c >>= 5) buf[i] = b32[c & 31];
    buf[26] = '\0';
}
