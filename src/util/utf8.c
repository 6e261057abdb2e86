/*
 * utf8.c: the UTF-8 checks of utf8.h, hand-written because they are a few
 * lines and run on every string of every write: a byte loop with an ASCII
 * fast path, no allocation, no tables.
 */
#include "util/utf8.h"

#include <stdint.h>
#include <string.h>

/* The code point of the valid sequence at s (at most n bytes) and its
 * length in *len, or -1 when the bytes there are not valid UTF-8. */
static int32_t decode(const unsigned char *s, size_t n, size_t *len) {
    unsigned c = s[0];
    uint32_t cp, min;
    if (c < 0x80) {
        *len = 1;
        return (int32_t)c;
    }
    if ((c & 0xE0) == 0xC0)
        *len = 2, cp = c & 0x1F, min = 0x80;
    else if ((c & 0xF0) == 0xE0)
        *len = 3, cp = c & 0x0F, min = 0x800;
    else if ((c & 0xF8) == 0xF0)
        *len = 4, cp = c & 0x07, min = 0x10000;
    else
        return -1;
    if (*len > n) return -1;
    for (size_t j = 1; j < *len; j++) {
        if ((s[j] & 0xC0) != 0x80) return -1;
        cp = (cp << 6) | (s[j] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
    return (int32_t)cp;
}

size_t util_utf8_check(const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        uint64_t x;
        if (i + 8 <= n && (memcpy(&x, p + i, 8), (x & 0x8080808080808080ULL) == 0)) {
            i += 8; /* eight ASCII bytes */
            continue;
        }
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        size_t len;
        if (decode(p + i, n - i, &len) < 0) return i;
        i += len;
    }
    return n;
}

static int is_space(int32_t cp) {
    return cp == ' ' || (cp >= 0x09 && cp <= 0x0D) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
           cp == 0x205F || cp == 0x3000;
}

int util_utf8_blank(const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0;
    while (p[n]) n++;
    for (size_t i = 0; i < n;) {
        size_t len;
        int32_t cp = decode(p + i, n - i, &len);
        if (cp < 0 || !is_space(cp)) return 0;
        i += len;
    }
    return 1;
}
