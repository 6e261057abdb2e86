/*
 * util.h: the small pieces every layer of remem shares and no Debian
 * library covers directly: times (ISO 8601 <-> ms), time-ordered ids, text
 * normalisation for duplicate detection, a 64-bit string hash, and a
 * growable byte buffer. Nothing here allocates global state.
 */
#ifndef REMEM_UTIL_H
#define REMEM_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/time.h" /* the clock, the time parser and formatter */

/* A new unique, time-ordered id (26 characters of Crockford base32, as a
 * ULID: 48 bits of milliseconds then 80 random bits that increase within
 * one millisecond). buf must hold 27 bytes. Thread-safe. */
void util_new_id(int64_t now_ms, char buf[27]);

/* Normalised form for duplicate detection: trimmed, runs of whitespace to
 * one space, ASCII lowercased. Returns a malloc'd string (NULL: no memory). */
char *util_normalize_text(const char *s);
/* 64-bit hash of n bytes (FNV-1a with a final avalanche mix). */
uint64_t util_hash64(const void *p, size_t n);
/* What a malloc of n bytes holds on the heap: the unit of the caches' byte
 * accounting, so that it agrees with the allocator's own counts. jemalloc
 * (the remem binary's allocator, when it is in the process) rounds n up to
 * its size class, as its nallocx says; glibc adds an 8-byte header and
 * rounds up to 16, at least 32. 0 for 0. */
size_t util_heap_bytes(size_t n);

/* Write a printf-style message into err (cap bytes; either may be 0/NULL)
 * and return rc: how parts report a failure to their caller. */
int util_errf(char *err, size_t cap, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A growable buffer; data is always NUL-terminated. On out-of-memory the
 * buffer sets oom and sb_take returns NULL (appends after that may or may
 * not land; the result is dropped either way). A zeroed strbuf is empty.
 * The one buffer of the library: the renderer (src/engine/render.c), the
 * net client's answers, the embedders' requests all write into it. */
typedef struct strbuf {
    char *data;
    size_t len, cap;
    int oom;
} strbuf;
void sb_init(strbuf *b);
void sb_free(strbuf *b);
/* Room for extra more bytes and the NUL, so that a caller may write up to
 * extra bytes at data + len itself (then add them to len and write the NUL,
 * or append again). 0, or -1 with oom set. */
int sb_reserve(strbuf *b, size_t extra);
/* Inline: appends are the renderer's inner loop (a call per key and per
 * number), and the common case is a compare and a copy. */
static inline void sb_append(strbuf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap && sb_reserve(b, n)) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}
void sb_puts(strbuf *b, const char *s);
void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Hand over the data (malloc'd; the caller frees; "" when nothing was
 * appended; NULL after out-of-memory) and reset b. */
char *sb_take(strbuf *b);

#endif
