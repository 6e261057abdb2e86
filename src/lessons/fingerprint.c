/*
 * fingerprint.c: the error normaliser and the fingerprint over it. The same
 * failure seen twice rarely prints the same bytes: a row number, a temp
 * path, a quoted value, a pointer, a timestamp change from run to run. The
 * normaliser replaces each such part by a placeholder so that what is left
 * is the shape of the failure, and the fingerprint is a hash of that shape.
 *
 * One left-to-right pass, each position tried against the rules in a fixed
 * order (quotes, timestamps, URLs, paths, hex ids, numbers); a rule that
 * matches emits its placeholder and skips what it consumed. The order
 * matters: a quoted path is a quote, a date is a timestamp before its
 * digits are numbers. Pure: no state, no allocation besides the answer.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lessons/lessons.h"

static int is_word(int c) { return isalnum(c) || c == '_'; }

/* A token boundary for paths and URLs: they end at blanks, quotes,
 * brackets and separators. */
static int path_char(int c) { return c > ' ' && !strchr("'\"`,;()[]{}<>|", c); }

static int digits(const char *s, int n) {
    for (int i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i])) return 0;
    return 1;
}

/* A timestamp at s: an ISO date with an optional time, or a bare
 * hh:mm:ss[.frac]. Returns its length, or 0. */
static size_t match_time(const char *s) {
    size_t n = 0;
    if (digits(s, 4) && s[4] == '-' && digits(s + 5, 2) && s[7] == '-' && digits(s + 8, 2)) {
        n = 10;
        if ((s[n] == 'T' || s[n] == ' ') && digits(s + n + 1, 2) && s[n + 3] == ':' &&
            digits(s + n + 4, 2))
            n += 6;
        else
            return n;
    } else if (digits(s, 2) && s[2] == ':' && digits(s + 3, 2) && s[5] == ':' && digits(s + 6, 2)) {
        n = 5;
    } else if (isdigit((unsigned char)s[0]) && s[1] == ':' && digits(s + 2, 2) && s[4] == ':' &&
               digits(s + 5, 2)) {
        n = 4;
    } else {
        return 0;
    }
    if (s[n] == ':' && digits(s + n + 1, 2)) n += 3;
    if ((s[n] == '.' || s[n] == ',') && isdigit((unsigned char)s[n + 1])) {
        n++;
        while (isdigit((unsigned char)s[n])) n++;
    }
    if (s[n] == 'Z')
        n++;
    else if ((s[n] == '+' || s[n] == '-') && digits(s + n + 1, 2)) {
        size_t k = n + 3;
        if (s[k] == ':') k++;
        if (digits(s + k, 2)) n = k + 2;
    }
    return n;
}

/* A quoted value at s (an opening quote that does not end a word, closed
 * on the same line within 512 bytes). Returns its length with quotes. */
static size_t match_quote(const char *s, const char *start) {
    char q = *s;
    if (q != '\'' && q != '"' && q != '`') return 0;
    if (q == '\'' && s > start && is_word((unsigned char)s[-1])) return 0; /* don't, it's */
    for (size_t i = 1; i < 512 && s[i] && s[i] != '\n'; i++)
        if (s[i] == q) return i + 1;
    return 0;
}

/* A URL (scheme://...) at s. */
static size_t match_url(const char *s, const char *start) {
    if (s > start && is_word((unsigned char)s[-1])) return 0;
    size_t i = 0;
    while (isalpha((unsigned char)s[i])) i++;
    if (i < 2 || strncmp(s + i, "://", 3)) return 0;
    i += 3;
    while (path_char((unsigned char)s[i])) i++;
    while (i && strchr(".:", s[i - 1])) i--;
    return i;
}

/* A path at s: starts with '/', './', '../', '~/' or a drive ("C:\"), or
 * holds two or more slashes. Trailing '.' and ':' belong to the sentence,
 * and a ":N[:M]" position after it is left for the number rule. */
static size_t match_path(const char *s, const char *start) {
    if (s > start && (is_word((unsigned char)s[-1]) || s[-1] == '/' || s[-1] == '.')) return 0;
    int anchored = s[0] == '/' || (s[0] == '.' && s[1] == '/') ||
                   (s[0] == '.' && s[1] == '.' && s[2] == '/') || (s[0] == '~' && s[1] == '/') ||
                   (isalpha((unsigned char)s[0]) && s[1] == ':' && s[2] == '\\');
    size_t i = 0, slashes = 0;
    while (path_char((unsigned char)s[i]) && s[i] != ':') {
        if (s[i] == '/' || s[i] == '\\') slashes++;
        i++;
    }
    if (anchored && s[0] != '/' && s[1] == ':') { /* C:\dir\file */
        i = 3;
        while (path_char((unsigned char)s[i]) && s[i] != ':') i++;
        slashes = 2;
    }
    if (!anchored && slashes < 2) return 0;
    if (s[0] == '/' && i == 1) return 0; /* a lone slash is an operator */
    while (i && s[i - 1] == '.') i--;
    return i;
}

/* A hex id at s: 0x..., a UUID, or a word of 7+ hex digits holding both a
 * digit and a letter (a commit, an object id). */
static size_t match_hex(const char *s, const char *start) {
    if (s > start && is_word((unsigned char)s[-1])) return 0;
    size_t i = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isxdigit((unsigned char)s[2])) {
        i = 2;
        while (isxdigit((unsigned char)s[i])) i++;
        return is_word((unsigned char)s[i]) ? 0 : i;
    }
    int digit = 0, letter = 0;
    while (isxdigit((unsigned char)s[i]) || (s[i] == '-' && isxdigit((unsigned char)s[i + 1]))) {
        if (isdigit((unsigned char)s[i])) digit = 1;
        if (isalpha((unsigned char)s[i])) letter = 1;
        i++;
    }
    if (is_word((unsigned char)s[i]) || i < 7 || !digit || !letter) return 0;
    return i;
}

/* A number at s (not glued after a letter: python3, utf8 and sha256 are
 * names, not values): digits with an optional fraction, or a size. */
static size_t match_number(const char *s, const char *start) {
    if (!isdigit((unsigned char)s[0])) return 0;
    if (s > start && isalpha((unsigned char)s[-1])) return 0;
    size_t i = 0;
    while (isdigit((unsigned char)s[i])) i++;
    if (s[i] == '.' && isdigit((unsigned char)s[i + 1])) {
        i++;
        while (isdigit((unsigned char)s[i])) i++;
    }
    /* A size ("10x10", "1920x1080") is one value. */
    while ((s[i] == 'x' || s[i] == 'X') && isdigit((unsigned char)s[i + 1])) {
        i++;
        while (isdigit((unsigned char)s[i])) i++;
    }
    return i;
}

/* Does the text speak of HTTP (so that 3-digit 4xx/5xx numbers are status
 * codes, kept as they are)? */
static int speaks_http(const char *s) {
    for (; *s; s++)
        if (!strncasecmp(s, "http", 4) || !strncasecmp(s, "status", 6)) return 1;
    return 0;
}

static int http_status(const char *s, size_t n, const char *start) {
    /* three digits: "5X1" is a size (5 by 1), not a status */
    if (n != 3 || (s[0] != '4' && s[0] != '5') || !isdigit((unsigned char)s[1]) ||
        !isdigit((unsigned char)s[2]))
        return 0;
    if (s > start && (s[-1] == '.' || s[-1] == ':')) return 0; /* 1.404, :500 (a port) */
    return s[3] != '.' || !isdigit((unsigned char)s[4]);
}

static void put_ph(strbuf *b, const char *ph) {
    /* No two placeholders of one kind in a row: "1, 2, 3" and "1 2" are
     * one shape. */
    size_t l = strlen(ph);
    if (b->len >= l && !memcmp(b->data + b->len - l, ph, l)) return;
    sb_puts(b, ph);
}

char *lsn_normalise(const char *error) {
    strbuf b;
    sb_init(&b);
    const char *start = error ? error : "";
    int http = speaks_http(start);
    int space = 0;
    for (const char *s = start; *s;) {
        unsigned char c = (unsigned char)*s;
        if (isspace(c)) {
            space = 1;
            s++;
            continue;
        }
        if (space && b.len) sb_append(&b, " ", 1);
        space = 0;
        size_t n;
        if ((n = match_quote(s, start))) {
            put_ph(&b, "<q>");
        } else if ((n = match_time(s))) {
            put_ph(&b, "<ts>");
        } else if ((n = match_url(s, start))) {
            put_ph(&b, "<url>");
        } else if ((n = match_path(s, start))) {
            put_ph(&b, "<path>");
        } else if ((n = match_hex(s, start))) {
            put_ph(&b, "<hex>");
        } else if ((n = match_number(s, start))) {
            if (http && http_status(s, n, start))
                sb_append(&b, s, n);
            else
                put_ph(&b, "<n>");
        } else {
            char lc = (char)tolower(c);
            sb_append(&b, &lc, 1);
            n = 1;
        }
        s += n;
    }
    return sb_take(&b);
}

void lsn_fingerprint_of(const char *normalised, char buf[20]) {
    uint64_t h = util_hash64(normalised, strlen(normalised));
    snprintf(buf, 20, "fp_%016llx", (unsigned long long)h);
}
