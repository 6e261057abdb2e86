/*
 * utf8.h: UTF-8 checks for text that crosses remem's boundary. Every string
 * a write stores must be valid UTF-8 (the JSON faces, export and import
 * depend on it), and the engine's checks and the JSON renderer must agree
 * on what "valid" means, so the rule lives here once: the shortest form
 * only, no surrogates (U+D800..U+DFFF), nothing above U+10FFFF; exactly
 * what jansson accepts.
 */
#ifndef REMEM_UTIL_UTF8_H
#define REMEM_UTIL_UTF8_H

#include <stddef.h>

/* The offset of the first byte of s[0..n) that does not start a valid
 * UTF-8 sequence, or n when all of it is valid. */
size_t util_utf8_check(const char *s, size_t n);

/* 1 when s (valid UTF-8) holds nothing but white space (Unicode's
 * White_Space: ASCII space, tab, newlines, vertical tab, form feed, U+0085,
 * U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000),
 * including when it is empty. */
int util_utf8_blank(const char *s);

#endif
