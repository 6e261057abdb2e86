/*
 * util.c: times, ids, text normalisation, hashing and the byte buffer of
 * util.h. Kept in one file because each piece is a few lines and they are
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

int64_t util_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int digits(const char **p, int n, int *out) {
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i])) return -1;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return 0;
}

int util_parse_time(const char *s, int64_t *ms) {
    if (!s || !*s) return -1;
    if (strcmp(s, "now") == 0) {
        *ms = util_now_ms();
        return 0;
    }
    const char *p = s;
    /* A plain integer is milliseconds. */
    if (isdigit((unsigned char)*p) || *p == '-') {
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (*end == '\0' && errno == 0 && end != p) {
            *ms = v;
            return 0;
        }
    }
    int Y, M, D, h = 0, mi = 0, sec = 0, frac_ms = 0;
    if (digits(&p, 4, &Y) || *p++ != '-' || digits(&p, 2, &M) || *p++ != '-' || digits(&p, 2, &D))
        return -1;
    if (M < 1 || M > 12 || D < 1 || D > 31) return -1;
    int64_t off_min = 0;
    if (*p == 'T' || *p == 't' || *p == ' ') {
        p++;
        if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi)) return -1;
        if (*p == ':') {
            p++;
            if (digits(&p, 2, &sec)) return -1;
            if (*p == '.' || *p == ',') {
                p++;
                int scale = 100, nd = 0;
                while (isdigit((unsigned char)*p)) {
                    if (nd < 3) frac_ms += (*p - '0') * scale;
                    scale /= 10;
                    nd++;
                    p++;
                }
                if (nd == 0) return -1;
            }
        }
        if (h > 23 || mi > 59 || sec > 60) return -1;
        if (*p == 'Z' || *p == 'z') {
            p++;
        } else if (*p == '+' || *p == '-') {
            int sign = *p == '-' ? -1 : 1, oh, om = 0;
            p++;
            if (digits(&p, 2, &oh)) return -1;
            if (*p == ':') p++;
            if (isdigit((unsigned char)*p) && digits(&p, 2, &om)) return -1;
            off_min = sign * (oh * 60 + om);
        }
    }
    if (*p != '\0') return -1;
    struct tm tm = {0};
    tm.tm_year = Y - 1900;
    tm.tm_mon = M - 1;
    tm.tm_mday = D;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    time_t t = timegm(&tm);
    *ms = ((int64_t)t - off_min * 60) * 1000 + frac_ms;
    return 0;
}

void util_format_time(int64_t ms, char *buf, size_t cap) {
    time_t t = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    int frac = (int)(ms - (int64_t)t * 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
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
