/*
 * cache_snap.c: snapshots of a namespace's in-memory cache, on disk beside
 * a SQLite store, so that a fresh process adopts a loaded namespace instead
 * of building it again. Building is the cold load's cost (cache.c `load`:
 * every row read, every text analysed and stemmed, every vector quantised):
 * about 2-3 s for 100,000 memories. A snapshot holds the result, each
 * array laid out as it lies in memory on a 64 KiB boundary, and is used
 * where it lies: the file is mapped private and writable (copy on write),
 * the vectors and int8 codes are mapped on their own with room to grow,
 * the lexical index's posting and forward lists and the rows' strings stay
 * in the map; only the rows' fixed fields, the rowid map and the spelling
 * hash table are built (with a check of each row's strings and of the
 * lexical index's ids). Nothing is copied into fresh memory, whose first
 * touch per page is what a copy costs most (bench/README.md, "Cold load").
 * The checksum is taken through a small buffer (pread), so checking every
 * byte does not touch the map's pages either.
 *
 * WHERE. <db>-snap/<hex of the namespace>.snap, beside the SQLite file
 * (store_cache_home; an in-memory store or a database server has none).
 * The folder is a cache: deleting it, or any file in it, is always safe.
 *
 * WHEN. A handle writes the snapshot of each cache of at least
 * REMEM_SNAPSHOT_MIN rows (5,000; the environment may lower it) when it
 * closes (remem_close, so `remem serve` at a graceful shutdown too), or
 * when asked (the "cache.save" operation), unless the file there is of the
 * same store and namespace and at most max(1000, n/10) versions behind (a
 * version is one changed row or more): several handles of one process,
 * or several processes, thus write it once, not once each. The file is
 * written to a temporary name, fsync'd, then renamed over the old one and
 * the folder fsync'd: a crash leaves the old snapshot or the new one,
 * never a torn one (a writer that died leaves its temporary file, which
 * the next writer removes once it is an hour old). Only a cache whose rows
 * are in rowid order, as a scan gives them, is written (ranking breaks
 * exact ties by row; see cache.c adopt_snapshot). REMEM_SNAPSHOTS=0 in
 * the environment turns snapshots off (neither read nor written).
 *
 * WHY A SNAPSHOT CAN BE TRUSTED. It is used only when everything below
 * holds, and otherwise ignored (the namespace is then loaded by a scan, as
 * without snapshots):
 *   - the header: magic, format, byte order and the sizes of the structs
 *     the arrays hold, this build's lexical analysis (the terms of a fixed
 *     sample text, hashed: another stemmer or analyser means other terms),
 *     the flat index's code layout;
 *   - the store's identity (a random id the store keeps in itself: a
 *     snapshot of another store, copied into place, is refused), the
 *     namespace, its model and dimension as the store records them now;
 *   - the history: the snapshot reflects the namespace at (version,
 *     hist_seq); the store's history row at hist_seq must still be the one
 *     the snapshot saw (its id and operation), the snapshot's version must
 *     not be ahead of the store's, and the rows since are caught up exactly
 *     as a live cache catches up with another process's writes
 *     (cache_refresh: a clear, a reindex, a purge, too many changes or
 *     fewer history rows than version steps mean a scan), then the access
 *     fields of the rows read since (store_touched_since); after that the
 *     row count must be the store's;
 *   - every byte: XXH3-64 over the header and the content, and each
 *     section's offset and length inside the file; a truncated or altered
 *     file is refused before anything in it is used.
 * A backup of the store restored over the file keeps the store's id; its
 * namespace versions are then behind the snapshot's (refused), and once new
 * writes bring them level the history row at hist_seq differs.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "engine/engine.h"

#define SNAP_MAGIC       "REMEMSNP"
#define SNAP_FORMAT      1
#define SNAP_ENDIAN      0x01020304u
#define SNAP_DEFAULT_MIN 5000
#define SNAP_STRINGS     9
#define SNAP_ID_CAP      40
#define SNAP_FP_CAP      160
#define SNAP_ALIGN       65536
/* A sample the header's analysis hash is taken over: inflections Snowball
 * folds, accents, digits, apostrophes, stop words. */
#define SNAP_SAMPLE_TEXT                                                            \
    "The children's deployments were running quickly; résumés of naïve cafés, " \
    "studies and studying in 2024-05-01, I'd've gone ABC-123 x86_64 über straße"

enum { SEC_META, SEC_LEX, SEC_TIER, SEC_VECS, SEC_CODES, SEC_QUANT, SEC_ROWS, SEC_SLAB, SEC_N };

typedef struct snap_section {
    uint64_t off, len;
} snap_section;

typedef struct snap_head {
    char magic[8];
    uint32_t format, endian;
    uint32_t sizes[4]; /* snap_row, store_row-free checks: see head_sizes */
    uint64_t analysis; /* hash of the sample text's terms */
    uint64_t code_stride, quant_bytes;
    char store_id[SNAP_ID_CAP];
    char model[128];
    int32_t dim, pad;
    int64_t version, hist_seq, touch_seq;
    uint64_t rows, file_len;
    snap_section sec[SEC_N];
    uint64_t checksum; /* XXH3-64 of the file with this field zero */
} snap_head;

/* One cached row's fields; its strings are in the slab at `block`, one
 * after another in the order of pack_row (cache.c), each NUL-terminated;
 * len[k] is strlen + 1, or 0 for NULL (and for ns: the cache's own). */
typedef struct snap_row {
    int64_t rowid, created_at, updated_at, accessed_at, access_count, expires_at, invalidated_at,
        duplicate_count;
    double importance;
    uint64_t block;
    uint32_t len[SNAP_STRINGS];
    int32_t dim;
} snap_row;

/* The META section: the namespace name, then the history row at hist_seq
 * as "id\top" (empty when hist_seq is 0). */

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

double snap_clock_ms(void) { return now_ms(); }

int snap_enabled(void) {
    const char *e = getenv("REMEM_SNAPSHOTS");
    return !(e && (strcmp(e, "0") == 0 || strcmp(e, "off") == 0 || strcmp(e, "no") == 0));
}

size_t snap_min_rows(void) {
    const char *e = getenv("REMEM_SNAPSHOT_MIN");
    if (e && *e) {
        char *end;
        long long v = strtoll(e, &end, 10);
        if (!*end && v >= 1) return (size_t)v;
    }
    return SNAP_DEFAULT_MIN;
}

static void head_sizes(uint32_t s[4]) {
    s[0] = sizeof(snap_row);
    s[1] = sizeof(snap_head);
    s[2] = sizeof(void *) | (uint32_t)sizeof(size_t) << 8 | (uint32_t)sizeof(double) << 16;
    s[3] = sizeof(float) | (uint32_t)sizeof(int64_t) << 8;
}

static void take_sample_term(const char *t, size_t len, int d, int s, void *ctx) {
    (void)d;
    (void)s;
    XXH3_state_t *h = ctx;
    XXH3_64bits_update(h, t, len);
    XXH3_64bits_update(h, "", 1);
}

/* What this build's analysis makes of the sample text. */
static uint64_t analysis_hash(text_stemmer *st) {
    XXH3_state_t *h = XXH3_createState();
    if (!h) return 0;
    XXH3_64bits_reset(h);
    text_analyse_with(SNAP_SAMPLE_TEXT, st, take_sample_term, h);
    uint64_t v = XXH3_64bits_digest(h);
    XXH3_freeState(h);
    return v;
}

/* <home>-snap/<hex of ns>.snap into path; 0, or -1 when there is no home
 * (or snapshots are off). uid gets the store's id. */
static int snap_path(remem *db, const char *ns, char *uid, char *path, size_t cap, char *dir,
                     size_t dir_cap) {
    char home[1024];
    if (!snap_enabled() || !db->st ||
        store_cache_home(db->st, uid, SNAP_ID_CAP, home, sizeof home) != REMEM_OK)
        return -1;
    if ((size_t)snprintf(dir, dir_cap, "%s-snap", home) >= dir_cap) return -1;
    size_t len = strlen(ns), at = (size_t)snprintf(path, cap, "%s/", dir);
    if (at + 2 * len + 6 > cap) return -1;
    for (size_t i = 0; i < len; i++) at += (size_t)sprintf(path + at, "%02x", (unsigned char)ns[i]);
    memcpy(path + at, ".snap", 6);
    return 0;
}

/* ---- the history fingerprint ---- */

typedef struct first_hist {
    char text[SNAP_FP_CAP];
} first_hist;

static int on_first_hist(void *ctx, const char *id, const char *op) {
    first_hist *f = ctx;
    snprintf(f->text, sizeof f->text, "%s\t%s", id, op);
    return 1; /* the first row is all we want */
}

/* "id\top" of ns's history row at seq (0: ""); 0, or -1 when the store
 * has no row with that seq for ns. */
static int history_fingerprint(remem *db, const char *ns, int64_t seq, char *out) {
    out[0] = '\0';
    if (seq <= 0) return 0;
    first_hist f = {""};
    int64_t got = 0;
    int rc = store_history_since(db->st, ns, seq - 1, on_first_hist, &f, &got);
    if ((rc != 0 && rc != 1) || got != seq) return -1;
    memcpy(out, f.text, sizeof f.text);
    return 0;
}

/* ---- writing ---- */

typedef struct snap_writer {
    int fd;
    XXH3_state_t *h;
    unsigned char *buf;
    size_t used, cap;
    uint64_t at; /* file offset of the next byte */
    int err;
} snap_writer;

static int flush_out(snap_writer *w) {
    size_t done = 0;
    while (done < w->used) {
        ssize_t k = write(w->fd, w->buf + done, w->used - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return w->err = -1;
        done += (size_t)k;
    }
    w->used = 0;
    return 0;
}

static int put(void *ctx, const void *p, size_t n) {
    snap_writer *w = ctx;
    if (w->err) return -1;
    XXH3_64bits_update(w->h, p, n);
    w->at += n;
    if (n >= w->cap) { /* large arrays go out directly */
        if (flush_out(w)) return -1;
        const unsigned char *b = p;
        while (n) {
            ssize_t k = write(w->fd, b, n);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) return w->err = -1;
            b += k;
            n -= (size_t)k;
        }
        return 0;
    }
    if (w->used + n > w->cap && flush_out(w)) return -1;
    memcpy(w->buf + w->used, p, n);
    w->used += n;
    return 0;
}

/* Zeros up to the next multiple of SNAP_ALIGN: every section starts on a
 * page (of any size up to 64 KiB), so that it can be mapped on its own. */
static int align(snap_writer *w) {
    static const char zeros[4096];
    size_t pad = (size_t)((SNAP_ALIGN - w->at % SNAP_ALIGN) % SNAP_ALIGN);
    while (pad) {
        size_t k = pad > sizeof zeros ? sizeof zeros : pad;
        if (put(w, zeros, k)) return -1;
        pad -= k;
    }
    return 0;
}

static int begin_section(snap_writer *w, snap_head *h, int s) {
    if (align(w)) return -1;
    h->sec[s].off = w->at;
    return 0;
}

static void end_section(snap_writer *w, snap_head *h, int s) {
    h->sec[s].len = w->at - h->sec[s].off;
}

static const char *row_string(const store_row *r, int k, const ns_cache *c) {
    switch (k) {
    case 0: return r->m.id;
    case 1: return r->m.kind;
    case 2: return r->m.tier;
    case 3: return r->m.text;
    case 4: return r->m.superseded_by;
    case 5: return r->m.metadata;
    case 6: return r->m.links;
    case 7: return r->m.model;
    default: return r->m.ns && strcmp(r->m.ns, c->ns) != 0 ? r->m.ns : NULL;
    }
}

static int write_rows(snap_writer *w, snap_head *h, const ns_cache *c) {
    /* The slab first (its offsets are then known), the fixed part after. */
    if (begin_section(w, h, SEC_SLAB)) return -1;
    uint64_t slab0 = w->at;
    for (size_t i = 0; i < c->n && !w->err; i++)
        for (int k = 0; k < SNAP_STRINGS; k++) {
            const char *s = row_string(&c->rows[i], k, c);
            if (s) put(w, s, strlen(s) + 1);
        }
    end_section(w, h, SEC_SLAB);
    if (begin_section(w, h, SEC_ROWS)) return -1;
    uint64_t block = 0;
    for (size_t i = 0; i < c->n && !w->err; i++) {
        const store_row *r = &c->rows[i];
        snap_row sr;
        memset(&sr, 0, sizeof sr);
        sr.rowid = r->rowid;
        sr.created_at = r->m.created_at;
        sr.updated_at = r->m.updated_at;
        sr.accessed_at = r->m.accessed_at;
        sr.access_count = r->m.access_count;
        sr.expires_at = r->m.expires_at;
        sr.invalidated_at = r->m.invalidated_at;
        sr.duplicate_count = r->m.duplicate_count;
        sr.importance = r->m.importance;
        sr.dim = r->m.dim;
        sr.block = block;
        for (int k = 0; k < SNAP_STRINGS; k++) {
            const char *s = row_string(r, k, c);
            sr.len[k] = s ? (uint32_t)strlen(s) + 1 : 0;
            block += sr.len[k];
        }
        put(w, &sr, sizeof sr);
    }
    end_section(w, h, SEC_ROWS);
    (void)slab0;
    return w->err;
}

/* A codes or quant section (sec) of an index too small to keep codes (a
 * snapshot of a small namespace, which only a lowered REMEM_SNAPSHOT_MIN
 * makes): each row quantised as it is written, as a larger index holds it,
 * so that the file is the same either way. */
static int put_codes(snap_writer *w, snap_head *h, const ns_cache *c, int sec) {
    size_t stride = flat_code_stride(c->ix), qb = flat_quant_bytes();
    uint8_t *row = malloc(stride + qb); /* codes, then quant (stride: 64 | it) */
    if (!row || begin_section(w, h, sec)) {
        free(row);
        return -1;
    }
    for (size_t i = 0; i < c->n && !w->err; i++) {
        flat_quantise_copy(c->ix, i, row, row + stride);
        put(w, sec == SEC_CODES ? row : row + stride, sec == SEC_CODES ? stride : qb);
    }
    end_section(w, h, sec);
    free(row);
    return w->err ? -1 : 0;
}

static int write_body(snap_writer *w, snap_head *h, const ns_cache *c, const char *fp) {
    /* The header's room first; it is written last, over it. */
    snap_head blank;
    memset(&blank, 0, sizeof blank);
    w->at = 0;
    if (put(w, &blank, sizeof blank)) return -1;
    /* The header is hashed as it will be written: restart the hash after
     * the blank and add the real header at the end. */
    XXH3_64bits_reset(w->h);
    begin_section(w, h, SEC_META);
    put(w, c->ns, strlen(c->ns) + 1);
    put(w, fp, strlen(fp) + 1);
    end_section(w, h, SEC_META);
    begin_section(w, h, SEC_LEX);
    if (lex_save(c->lex, put, w)) return -1;
    end_section(w, h, SEC_LEX);
    begin_section(w, h, SEC_TIER);
    put(w, c->tier, c->n);
    end_section(w, h, SEC_TIER);
    const float *vecs;
    const uint8_t *codes;
    const void *quant;
    flat_raw(c->ix, &vecs, &codes, &quant);
    begin_section(w, h, SEC_VECS);
    if (c->n) put(w, vecs, c->n * (size_t)c->dim * sizeof(float));
    end_section(w, h, SEC_VECS);
    if (!codes && c->n) {
        if (put_codes(w, h, c, SEC_CODES) || put_codes(w, h, c, SEC_QUANT)) return -1;
    } else {
        begin_section(w, h, SEC_CODES);
        if (c->n) put(w, codes, c->n * flat_code_stride(c->ix));
        end_section(w, h, SEC_CODES);
        begin_section(w, h, SEC_QUANT);
        if (c->n) put(w, quant, c->n * flat_quant_bytes());
        end_section(w, h, SEC_QUANT);
    }
    if (write_rows(w, h, c)) return -1;
    return w->err || flush_out(w);
}

/* The header of the snapshot at path (its fields only: not the content's
 * checksum); 0, or -1 when there is none or it is not one of ours. */
static int read_head(const char *path, snap_head *h) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t k = pread(fd, h, sizeof *h, 0);
    close(fd);
    uint32_t sizes[4];
    head_sizes(sizes);
    if (k != (ssize_t)sizeof *h || memcmp(h->magic, SNAP_MAGIC, 8) != 0 ||
        h->format != SNAP_FORMAT || h->endian != SNAP_ENDIAN ||
        memcmp(h->sizes, sizes, sizeof sizes) != 0)
        return -1;
    h->store_id[SNAP_ID_CAP - 1] = '\0';
    h->model[sizeof h->model - 1] = '\0';
    return 0;
}

/* Temporary files of path's writers that died before their rename (a
 * crash, a kill) go once they are an hour old: a live writer's is
 * younger. */
static void remove_stale_temps(const char *dir, const char *path) {
    const char *base = strrchr(path, '/') + 1;
    size_t len = strlen(base);
    DIR *d = opendir(dir);
    if (!d) return;
    time_t now = time(NULL);
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        struct stat st;
        char full[2400];
        if (n <= len + 4 || strncmp(e->d_name, base, len) != 0 ||
            strcmp(e->d_name + n - 4, ".tmp") != 0)
            continue;
        snprintf(full, sizeof full, "%s/%s", dir, e->d_name);
        if (stat(full, &st) == 0 && now - st.st_mtime > 3600) unlink(full);
    }
    closedir(d);
}

/* A scan gives rows in rowid order, and ranking breaks exact ties by row:
 * only a cache in that order is saved (one that removed rows since its
 * scan is not; the next process's scan saves one). */
static int in_rowid_order(const ns_cache *c) {
    for (size_t i = 1; i < c->n; i++)
        if (c->rows[i].rowid <= c->rows[i - 1].rowid) return 0;
    return 1;
}

/* Write c's snapshot unless one close enough is there (force: unless one
 * of the same version is). 1 written, 0 not needed, -1 not possible
 * (no place for it, a cache out of rowid order, an I/O error). */
int snap_save(remem *db, const ns_cache *c, int force) {
    char uid[SNAP_ID_CAP], path[2048], dir[1100], fp[SNAP_FP_CAP], model[128] = "";
    if (c->touch_seq < 0 || !in_rowid_order(c) ||
        snap_path(db, c->ns, uid, path, sizeof path, dir, sizeof dir))
        return -1;
    snap_head old;
    if (!c->snap_refused && read_head(path, &old) == 0 && strcmp(old.store_id, uid) == 0 &&
        old.version <= c->version) {
        int64_t behind = c->version - old.version;
        int64_t slack = (int64_t)(c->n / 10 > 1000 ? c->n / 10 : 1000);
        if (behind == 0 || (!force && behind < slack)) return 0; /* up to date */
    }
    int dim = 0;
    int64_t version = 0;
    /* The model as the store records it for ns, which is what a reader
     * compares with; and the cache must be current (never save a cache
     * that missed a change). */
    if (store_ns_info(db->st, c->ns, model, sizeof model, &dim, &version, NULL) ||
        version != c->version || history_fingerprint(db, c->ns, c->hist_seq, fp))
        return -1;
    if (mkdir(dir, 0700) && errno != EEXIST) return -1;
    remove_stale_temps(dir, path);
    char tmp[2100];
    /* A name of its own per writer (handles of one process may close at
     * once on several threads): the last rename wins, whole. */
    static unsigned writers;
    snprintf(tmp, sizeof tmp, "%s.%d.%u.tmp", path, (int)getpid(),
             __atomic_fetch_add(&writers, 1, __ATOMIC_RELAXED));
    snap_writer w = {.fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600),
                     .h = XXH3_createState(),
                     .buf = malloc(1 << 20),
                     .cap = 1 << 20};
    snap_head h;
    memset(&h, 0, sizeof h);
    int rc = (w.fd < 0 || !w.h || !w.buf) ? -1 : 0;
    if (!rc) {
        XXH3_64bits_reset(w.h);
        rc = write_body(&w, &h, c, fp);
    }
    if (!rc) {
        memcpy(h.magic, SNAP_MAGIC, 8);
        h.format = SNAP_FORMAT;
        h.endian = SNAP_ENDIAN;
        head_sizes(h.sizes);
        h.analysis = analysis_hash(db->stem);
        h.code_stride = flat_code_stride(c->ix);
        h.quant_bytes = flat_quant_bytes();
        snprintf(h.store_id, sizeof h.store_id, "%s", uid);
        snprintf(h.model, sizeof h.model, "%s", model);
        h.dim = c->dim;
        h.version = c->version;
        h.hist_seq = c->hist_seq;
        h.touch_seq = c->touch_seq;
        h.rows = c->n;
        h.file_len = w.at;
        XXH3_64bits_update(w.h, &h, sizeof h); /* checksum still 0 here */
        h.checksum = XXH3_64bits_digest(w.h);
        rc = pwrite(w.fd, &h, sizeof h, 0) == (ssize_t)sizeof h ? 0 : -1;
    }
    if (!rc) rc = fsync(w.fd);
    if (w.fd >= 0 && close(w.fd)) rc = -1;
    if (!rc) rc = rename(tmp, path);
    if (rc) {
        if (w.fd >= 0) unlink(tmp);
    } else {
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
    }
    XXH3_freeState(w.h);
    free(w.buf);
    return rc ? -1 : 1;
}

/* ---- reading ---- */

/* Every section inside the file, in the order written, not overlapping,
 * on SNAP_ALIGN; the fixed ones of the sizes the header's counts give. */
static int sections_ok(const snap_head *h, uint64_t file_size, size_t dim) {
    static const int order[SEC_N] = {SEC_META,  SEC_LEX,   SEC_TIER, SEC_VECS,
                                     SEC_CODES, SEC_QUANT, SEC_SLAB, SEC_ROWS};
    if (h->file_len != file_size || h->rows > UINT32_MAX) return -1;
    uint64_t end = sizeof *h;
    for (int i = 0; i < SEC_N; i++) {
        const snap_section *x = &h->sec[order[i]];
        if (x->off < end || x->off % SNAP_ALIGN || x->off > file_size ||
            x->len > file_size - x->off)
            return -1;
        end = x->off + x->len;
    }
    uint64_t n = h->rows;
    if (h->sec[SEC_TIER].len != n || h->sec[SEC_VECS].len != n * dim * sizeof(float) ||
        h->sec[SEC_CODES].len != n * h->code_stride ||
        h->sec[SEC_QUANT].len != n * h->quant_bytes || h->sec[SEC_ROWS].len != n * sizeof(snap_row))
        return -1;
    return 0;
}

/* Rows from the fixed part and the slab: each string inside the slab and
 * NUL-terminated where its length says. */
static int build_rows(ns_cache *c, const snap_row *sr, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const snap_row *x = &sr[i];
        uint64_t at = x->block;
        const char *s[SNAP_STRINGS];
        for (int k = 0; k < SNAP_STRINGS; k++) {
            if (!x->len[k]) {
                s[k] = NULL;
                continue;
            }
            if (at > c->slab_len || x->len[k] > c->slab_len - at ||
                c->slab[at + x->len[k] - 1] != '\0')
                return -1;
            s[k] = c->slab + at;
            at += x->len[k];
        }
        if (!s[0] || !s[1] || !s[2] || !s[3] || x->rowid <= 0 || c->tier[i] > 4) return -1;
        store_row *r = &c->rows[i];
        memset(r, 0, sizeof *r);
        r->rowid = x->rowid;
        remem_memory *m = &r->m;
        m->size = sizeof *m;
        m->ns = s[8] ? s[8] : c->ns;
        m->id = s[0];
        m->kind = s[1];
        m->tier = s[2];
        m->text = s[3];
        m->superseded_by = s[4];
        m->metadata = s[5];
        m->links = s[6];
        m->model = s[7];
        m->importance = x->importance;
        m->created_at = x->created_at;
        m->updated_at = x->updated_at;
        m->accessed_at = x->accessed_at;
        m->access_count = x->access_count;
        m->expires_at = x->expires_at;
        m->invalidated_at = x->invalidated_at;
        m->duplicate_count = x->duplicate_count;
        m->dim = x->dim;
        c->meta[i] = NULL;
        c->n = i + 1;
        if (cache_map_put(c, r->rowid, (uint32_t)i)) return -1;
    }
    return 0;
}

static size_t page_round(size_t n) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (n + page - 1) / page * page;
}

/* A private writable map of cap_bytes whose start is the file's bytes
 * [off, off + len) (copied only where written), the rest anonymous room
 * for rows appended later. NULL on failure. */
static void *map_rows(int fd, uint64_t off, size_t len, size_t cap_bytes) {
    size_t total = page_round(cap_bytes ? cap_bytes : 1);
    void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    if (len && mmap(p, page_round(len), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd,
                    (off_t)off) == MAP_FAILED) {
        munmap(p, total);
        return NULL;
    }
    return p;
}

/* The vectors, codes and bounds into c's flat index, mapped from the file
 * with room for cap rows. 0 or -1. */
static int adopt_vectors(ns_cache *c, int fd, const snap_head *h, const unsigned char *base,
                         size_t n, size_t cap) {
    size_t vb = page_round(cap * (size_t)c->dim * sizeof(float));
    size_t cb = page_round(cap * (size_t)h->code_stride);
    void *v = map_rows(fd, h->sec[SEC_VECS].off, h->sec[SEC_VECS].len, vb);
    void *k = v ? map_rows(fd, h->sec[SEC_CODES].off, h->sec[SEC_CODES].len, cb) : NULL;
    if (!k || flat_adopt_mapped(c->ix, n, cap, v, vb, k, cb, base + h->sec[SEC_QUANT].off)) {
        if (v) munmap(v, vb);
        if (k) munmap(k, cb);
        return -1;
    }
    return 0;
}

/* XXH3-64 of the file as the writer hashed it: the content after the
 * header, then the header with its checksum zero (0 when unreadable).
 * Read through one small buffer rather than from the map: the kernel
 * copies from its page cache, and the map's pages are touched only where
 * the cache uses them (a page's first touch is the costly part of reading
 * a map, on virtual machines especially). */
static uint64_t file_checksum(int fd, const snap_head *h) {
    enum { CHUNK = 1 << 20 };
    XXH3_state_t *xs = XXH3_createState();
    unsigned char *buf = malloc(CHUNK);
    uint64_t at = sizeof *h, sum = 0;
    int ok = xs && buf && XXH3_64bits_reset(xs) == XXH_OK;
    while (ok && at < h->file_len) {
        size_t want = h->file_len - at > CHUNK ? CHUNK : (size_t)(h->file_len - at);
        ssize_t k = pread(fd, buf, want, (off_t)at);
        if (k < 0 && errno == EINTR) continue;
        ok = k > 0;
        if (ok) {
            XXH3_64bits_update(xs, buf, (size_t)k);
            at += (uint64_t)k;
        }
    }
    if (ok) {
        snap_head zero = *h;
        zero.checksum = 0;
        XXH3_64bits_update(xs, &zero, sizeof zero);
        sum = XXH3_64bits_digest(xs);
    }
    XXH3_freeState(xs);
    free(buf);
    return sum;
}

/* The whole file is mapped at base (private, writable: the lexical index
 * and the rows' strings stay in it); checked, then turned into a cache.
 * NULL when anything is wrong. */
static ns_cache *adopt(remem *db, int fd, unsigned char *base, const snap_head *h, const char *ns) {
    /* Every byte first: nothing in the file is trusted before this. */
    int bad = file_checksum(fd, h) != h->checksum;
    /* The namespace is the one asked for, and the history row the
     * snapshot saw is still in the store. */
    const char *meta = (const char *)base + h->sec[SEC_META].off;
    size_t mlen = h->sec[SEC_META].len, used = mlen ? strnlen(meta, mlen) + 1 : 0;
    char fp[SNAP_FP_CAP];
    bad = bad || used > mlen || strcmp(meta, ns) != 0 || !memchr(meta + used, 0, mlen - used) ||
          history_fingerprint(db, ns, h->hist_seq, fp) || strcmp(fp, meta + used) != 0;
    if (bad) return NULL;
    ns_cache *c = cache_new(db, ns, h->dim);
    if (!c) return NULL;
    c->map_base = base;
    c->map_len = h->file_len;
    size_t n = (size_t)h->rows, cap = n + n / 8 + 16;
    lex_free(c->lex);
    c->lex = NULL;
    if (lex_load(base + h->sec[SEC_LEX].off, h->sec[SEC_LEX].len, 1, &c->lex) != LEX_OK ||
        lex_count(c->lex) != n || adopt_vectors(c, fd, h, base, n, cap) || cache_reserve(c, cap)) {
        cache_destroy(c); /* unmaps base too */
        return NULL;
    }
    memcpy(c->tier, base + h->sec[SEC_TIER].off, n);
    c->slab = (char *)base + h->sec[SEC_SLAB].off;
    c->slab_len = h->sec[SEC_SLAB].len;
    if (build_rows(c, (const snap_row *)(base + h->sec[SEC_ROWS].off), n)) {
        cache_destroy(c);
        return NULL;
    }
    c->version = h->version;
    c->hist_seq = h->hist_seq;
    c->touch_seq = h->touch_seq;
    assert(flat_count(c->ix) == c->n && lex_count(c->lex) == c->n);
    return c;
}

ns_cache *snap_read(remem *db, const char *ns, const char *model, int dim, int64_t version,
                    int *refused) {
    char uid[SNAP_ID_CAP], path[2048], dir[1100];
    *refused = 0;
    if (snap_path(db, ns, uid, path, sizeof path, dir, sizeof dir)) return NULL;
    snap_head h;
    *refused = access(path, F_OK) == 0;
    if (read_head(path, &h) || strcmp(h.store_id, uid) != 0 || strcmp(h.model, model) != 0 ||
        h.dim != dim || h.version > version || h.version < 0 || h.dim <= 0 || h.touch_seq < 0 ||
        h.analysis != analysis_hash(db->stem) || h.quant_bytes != flat_quant_bytes() ||
        SNAP_ALIGN % sysconf(_SC_PAGESIZE) != 0)
        return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    ns_cache *c = NULL;
    flat_index *probe = flat_new(dim); /* this build's code layout */
    int layout_ok = probe && flat_code_stride(probe) == h.code_stride;
    flat_free(probe);
    if (fd >= 0 && layout_ok && fstat(fd, &st) == 0 &&
        sections_ok(&h, (uint64_t)st.st_size, (size_t)dim) == 0) {
        void *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        if (base != MAP_FAILED) {
            c = adopt(db, fd, base, &h, ns);
            if (!c) munmap(base, (size_t)st.st_size);
        }
    }
    if (fd >= 0) close(fd);
    if (c) *refused = 0;
    return c;
}
