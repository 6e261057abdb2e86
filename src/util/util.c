/*
 * util.c: ids, text normalisation, hashing and the byte buffer of util.h
 * (times are in time.c). Kept in one file because each piece is a few lines and they are
 * used together by the engine and the faces.
 */
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

/* jemalloc's size of the block a malloc of n bytes gets; NULL when
 * jemalloc is not in the process. */
extern size_t nallocx(size_t size, int flags) __attribute__((weak));

size_t util_heap_bytes(size_t n) {
    if (!n) return 0;
    if (nallocx) return nallocx(n, 0);
    size_t b = (n + 8 + 15) & ~(size_t)15;
    return b < 32 ? 32 : b;
}

static pthread_mutex_t id_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t id_last_ms = -1;
static unsigned char id_rand[10];

void util_new_id(int64_t now_ms, char buf[27]) {
    static const char b32[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    unsigned char r[10];
    pthread_mutex_lock(&id_lock);
    if (now_ms <= id_last_ms) {
        /* Same (or earlier) millisecond: increment the random part so ids
         * stay unique and ordered. */
        now_ms = id_last_ms;
        for (int i = 9; i >= 0 && ++id_rand[i] == 0; i--) {}
    } else {
        if (getrandom(id_rand, sizeof id_rand, 0) != (ssize_t)sizeof id_rand) {
            uint64_t x = (uint64_t)now_ms * 0x9E3779B97F4A7C15ULL ^ (uintptr_t)buf;
            for (int i = 0; i < 10; i++) id_rand[i] = (unsigned char)(x >> (i * 6));
        }
        id_rand[0] &= 0x7f; /* room to increment without overflow */
        id_last_ms = now_ms;
    }
    memcpy(r, id_rand, sizeof r);
    pthread_mutex_unlock(&id_lock);
    uint64_t t = (uint64_t)now_ms;
    for (int i = 9; i >= 0; i--) {
        buf[i] = b32[t & 31];
        t >>= 5;
    }
    /* 80 bits -> 16 characters. */
    uint64_t hi = 0, lo = 0;
    for (int i = 0; i < 5; i++) hi = hi << 8 | r[i];
    for (int i = 5; i < 10; i++) lo = lo << 8 | r[i];
    for (int i = 7; i >= 0; i--) {
        buf[10 + i] = b32[hi & 31];
        hi >>= 5;
        buf[18 + i] = b32[lo & 31];
        lo >>= 5;
    }
    buf[26] = '\0';
}

char *util_normalize_text(const char *s) {
    size_t n = strlen(s);
    char *out = malloc(n + 1);
    if (!out) return NULL;
    size_t j = 0;
    int space = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isspace(c)) {
            space = 1;
            continue;
        }
        if (space && j > 0) out[j++] = ' ';
        space = 0;
        out[j++] = (char)tolower(c);
    }
    out[j] = '\0';
    return out;
}

uint64_t util_hash64(const void *p, size_t n) {
    const unsigned char *s = p;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0x100000001b3ULL;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

int util_errf(char *err, size_t cap, int rc, const char *fmt, ...) {
    if (err && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return rc;
}

void sb_init(strbuf *b) { memset(b, 0, sizeof *b); }
void sb_free(strbuf *b) {
    free(b->data);
    sb_init(b);
}

int sb_reserve(strbuf *b, size_t extra) {
    if (b->oom) return -1;
    if (b->len + extra + 1 <= b->cap) return 0;
    if (extra > SIZE_MAX / 2 - b->len) { /* doubling below would overflow */
        b->oom = 1;
        return -1;
    }
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1) cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
        b->oom = 1;
        return -1;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

void sb_puts(strbuf *b, const char *s) { sb_append(b, s, strlen(s)); }

void sb_printf(strbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || sb_reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *sb_take(strbuf *b) {
    char *d = b->data;
    if (!d && !b->oom) d = calloc(1, 1);
    if (b->oom) {
        free(d);
        d = NULL;
    }
    sb_init(b);
    return d;
}
