/*
 * archive_file.c: the zstd JSONL stream of one archive file (see
 * archive_file.h for the layout). Lines are compressed as they come with
 * ZSTD_compressStream2 and hashed with XXH3 as they come; the reader
 * decompresses into a small buffer and cuts lines out of it, so memory use
 * is the longest line plus zstd's window, whatever the file's size.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include "maintenance/archive_file.h"

struct arch_writer {
    FILE *f;
    ZSTD_CCtx *z;
    XXH3_state_t *h;
    char *out;
    size_t outcap;
    int64_t lines;
};

static int fail(char *err, size_t cap, const char *fmt, const char *a, const char *b) {
    if (err && cap) snprintf(err, cap, fmt, a, b);
    return -1;
}

arch_writer *arch_writer_open(const char *path, char *err, size_t cap) {
    arch_writer *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->outcap = ZSTD_CStreamOutSize();
    w->out = malloc(w->outcap);
    w->z = ZSTD_createCCtx();
    w->h = XXH3_createState();
    w->f = fopen(path, "wb");
    if (!w->out || !w->z || !w->h || !w->f) {
        fail(err, cap, "cannot create %s: %s", path, w->f ? "out of memory" : strerror(errno));
        arch_writer_abort(w);
        return NULL;
    }
    XXH3_64bits_reset(w->h);
    ZSTD_CCtx_setParameter(w->z, ZSTD_c_compressionLevel, 3);
    ZSTD_CCtx_setParameter(w->z, ZSTD_c_checksumFlag, 1);
    return w;
}

static int put_bytes(arch_writer *w, const char *p, size_t n, ZSTD_EndDirective end) {
    ZSTD_inBuffer in = {p, n, 0};
    for (;;) {
        ZSTD_outBuffer out = {w->out, w->outcap, 0};
        size_t left = ZSTD_compressStream2(w->z, &out, &in, end);
        if (ZSTD_isError(left)) return -1;
        if (out.pos && fwrite(w->out, 1, out.pos, w->f) != out.pos) return -1;
        if (end == ZSTD_e_end ? left == 0 : in.pos == in.size) return 0;
    }
}

int arch_writer_put(arch_writer *w, json_t *line, char *err, size_t cap) {
    char *s = json_dumps(line, JSON_COMPACT | JSON_ENSURE_ASCII);
    if (!s) return fail(err, cap, "archive: a record does not render as JSON%s%s", "", "");
    size_t n = strlen(s);
    s[n] = '\n'; /* overwrite the NUL: the line with its newline */
    XXH3_64bits_update(w->h, s, n + 1);
    int rc = put_bytes(w, s, n + 1, ZSTD_e_continue);
    free(s);
    if (rc) return fail(err, cap, "archive: writing failed: %s%s", strerror(errno), "");
    w->lines++;
    return 0;
}

int arch_writer_finish(arch_writer *w, char *err, size_t cap) {
    char tr[128];
    int n = snprintf(tr, sizeof tr, "{\"remem_archive_end\":%lld,\"xxh3\":\"%016llx\"}\n",
                     (long long)(w->lines - 1), (unsigned long long)XXH3_64bits_digest(w->h));
    int rc = put_bytes(w, tr, (size_t)n, ZSTD_e_continue) || put_bytes(w, "", 0, ZSTD_e_end) ||
             fflush(w->f) || fsync(fileno(w->f));
    int e = errno;
    if (fclose(w->f)) rc = -1;
    w->f = NULL;
    arch_writer_abort(w);
    if (rc) return fail(err, cap, "archive: writing failed: %s%s", strerror(e), "");
    return 0;
}

void arch_writer_abort(arch_writer *w) {
    if (!w) return;
    if (w->f) fclose(w->f);
    ZSTD_freeCCtx(w->z);
    XXH3_freeState(w->h);
    free(w->out);
    free(w);
}

/* ---- reading ---- */

struct arch_reader {
    FILE *f;
    ZSTD_DCtx *z;
    XXH3_state_t *h;
    char *in;
    size_t incap;
    ZSTD_inBuffer zin;
    char *buf; /* decompressed bytes not yet returned: buf[start, len) */
    size_t start, len, cap;
    int eof, ended;
    int64_t records;
    char path[1024];
};

arch_reader *arch_reader_open(const char *path, char *err, size_t cap) {
    arch_reader *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    snprintf(r->path, sizeof r->path, "%s", path);
    r->incap = ZSTD_DStreamInSize();
    r->in = malloc(r->incap);
    r->cap = ZSTD_DStreamOutSize() * 2;
    r->buf = malloc(r->cap);
    r->z = ZSTD_createDCtx();
    r->h = XXH3_createState();
    r->f = fopen(path, "rb");
    if (!r->in || !r->buf || !r->z || !r->h || !r->f) {
        fail(err, cap, "cannot open %s: %s", path, r->f ? "out of memory" : strerror(errno));
        arch_reader_close(r);
        return NULL;
    }
    XXH3_64bits_reset(r->h);
    r->zin.src = r->in;
    return r;
}

/* More decompressed bytes into buf; 1 got some, 0 at the end, -1 error. */
static int fill(arch_reader *r) {
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->len - r->start);
        r->len -= r->start;
        r->start = 0;
    }
    if (r->len + ZSTD_DStreamOutSize() > r->cap) {
        size_t nc = r->cap * 2;
        char *nb = realloc(r->buf, nc);
        if (!nb) return -1;
        r->buf = nb;
        r->cap = nc;
    }
    for (;;) {
        if (r->zin.pos == r->zin.size) {
            if (r->eof) return 0;
            r->zin.size = fread(r->in, 1, r->incap, r->f);
            r->zin.pos = 0;
            if (r->zin.size == 0) {
                r->eof = 1;
                return 0;
            }
        }
        ZSTD_outBuffer out = {r->buf + r->len, r->cap - r->len, 0};
        size_t rc = ZSTD_decompressStream(r->z, &out, &r->zin);
        if (ZSTD_isError(rc)) return -1;
        r->len += out.pos;
        if (out.pos) return 1;
    }
}

int arch_reader_next(arch_reader *r, json_t **line, char *err, size_t cap) {
    *line = NULL;
    if (r->ended) return 0;
    for (;;) {
        char *nl = memchr(r->buf + r->start, '\n', r->len - r->start);
        if (nl) {
            size_t n = (size_t)(nl - (r->buf + r->start));
            json_error_t je;
            json_t *o = json_loadb(r->buf + r->start, n, 0, &je);
            if (!o || !json_is_object(o)) {
                json_decref(o);
                return fail(err, cap, "archive %s: a line is not a JSON object%s", r->path, "");
            }
            if (json_object_get(o, "remem_archive_end")) {
                char want[20];
                snprintf(want, sizeof want, "%016llx",
                         (unsigned long long)XXH3_64bits_digest(r->h));
                const char *got = json_string_value(json_object_get(o, "xxh3"));
                int64_t cnt = json_integer_value(json_object_get(o, "remem_archive_end"));
                int bad = !got || strcmp(got, want) || cnt != r->records - 1;
                json_decref(o);
                if (bad)
                    return fail(err, cap,
                                "archive %s: the checksum does not match (damaged file)%s", r->path,
                                "");
                r->ended = 1;
                return 0;
            }
            XXH3_64bits_update(r->h, r->buf + r->start, n + 1);
            r->start += n + 1;
            r->records++;
            *line = o;
            return 1;
        }
        int f = fill(r);
        if (f < 0) return fail(err, cap, "archive %s: not a valid zstd stream%s", r->path, "");
        if (f == 0)
            return fail(err, cap, "archive %s: cut short (no trailer: damaged or unfinished)%s",
                        r->path, "");
    }
}

void arch_reader_close(arch_reader *r) {
    if (!r) return;
    if (r->f) fclose(r->f);
    ZSTD_freeDCtx(r->z);
    XXH3_freeState(r->h);
    free(r->in);
    free(r->buf);
    free(r);
}

int arch_mkdirs(const char *path) {
    char p[1024];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        if (mkdir(p, 0755) && errno != EEXIST) return -1;
        *s = '/';
    }
    return mkdir(p, 0755) && errno != EEXIST ? -1 : 0;
}

int arch_fsync_dir(const char *path) {
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}
