/*
 * render.c: memories, hits and results as JSON. Every face prints these
 * (the CLI's --json, the server, MCP, history rows, export), so there is
 * one shape of a memory everywhere: times as ISO 8601 UTC, metadata and
 * links as JSON values, score components under "components".
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "util/utf8.h"
#include "util/util.h"

static void set_time(json_t *o, const char *key, int64_t ms, int zero_is_null) {
    if (zero_is_null && ms == 0) {
        json_object_set_new(o, key, json_null());
        return;
    }
    char buf[40];
    util_format_time(ms, buf, sizeof buf);
    json_object_set_new(o, key, json_string(buf));
}

static void set_str(json_t *o, const char *key, const char *v) {
    json_object_set_new(o, key, v ? json_string(v) : json_null());
}

/* A JSON value stored as text; an unparsable one is kept as a string. */
static void set_json_text(json_t *o, const char *key, const char *text) {
    if (!text) {
        json_object_set_new(o, key, json_null());
        return;
    }
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    json_object_set_new(o, key, v ? v : json_string(text));
}

json_t *eng_memory_json(const remem_memory *m, int with_vec) {
    json_t *o = json_object();
    if (!o) return NULL;
    set_str(o, "id", m->id);
    set_str(o, "ns", m->ns);
    set_str(o, "kind", m->kind);
    set_str(o, "tier", m->tier);
    if (m->text) set_str(o, "text", m->text); /* a purged memory has none */
    json_object_set_new(o, "importance", json_real(m->importance));
    set_time(o, "created_at", m->created_at, 0);
    set_time(o, "updated_at", m->updated_at, 0);
    set_time(o, "accessed_at", m->accessed_at, 0);
    json_object_set_new(o, "access_count", json_integer(m->access_count));
    set_time(o, "expires_at", m->expires_at, 1);
    set_time(o, "invalidated_at", m->invalidated_at, 1);
    set_str(o, "superseded_by", m->superseded_by);
    json_object_set_new(o, "duplicate_count", json_integer(m->duplicate_count));
    set_json_text(o, "metadata", m->metadata);
    set_json_text(o, "links", m->links);
    set_str(o, "model", m->model);
    if (with_vec && m->vector) {
        json_t *v = json_array();
        for (int i = 0; i < m->dim; i++) json_array_append_new(v, json_real(m->vector[i]));
        json_object_set_new(o, "vector", v);
    }
    return o;
}

/* ---- direct rendering ----
 * Memories, hits and results are rendered straight into text rather than
 * through a jansson tree: the server renders every recall, and building
 * the tree (an allocation per key and value) and printing its numbers
 * through printf cost as much CPU as a third of the recall itself. The
 * text is byte for byte what jansson writes for eng_memory_json (compact,
 * JSON_REAL_PRECISION(7), keys in insertion order, a key left out when
 * jansson would refuse its value: a non-finite number, a string that is not
 * UTF-8); tests/test_render.c holds the two side by side. */

/* The text goes into util's strbuf: sb_append is inline, so an append is
 * a compare and a copy, as fast as a buffer of render's own was. */

#define PUT_LIT(o, lit) sb_append((o), (lit), sizeof(lit) - 1)

/* None of the 8 bytes of x is a control byte, '"' or '\\' (the bit tricks
 * of "Bit Twiddling Hacks": a byte below n, a byte equal to one). */
static int plain8(uint64_t x) {
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
    return !(((x - ones * 0x20) & ~x & highs) | ((q - ones) & ~q & highs) |
             ((b - ones) & ~b & highs));
}

static void put_string(strbuf *o, const char *s, size_t n) {
    static const char hex[] = "0123456789ABCDEF";
    if (sb_reserve(o, n + 2)) return;
    sb_append(o, "\"", 1);
    size_t run = 0; /* start of the bytes not yet copied */
    for (size_t i = 0; i < n; i++) {
        uint64_t x;
        if (i + 8 <= n && (memcpy(&x, s + i, 8), plain8(x))) {
            i += 7; /* eight bytes that need no escape */
            continue;
        }
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        sb_append(o, s + run, i - run);
        run = i + 1;
        char esc[6] = {'\\', 0};
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            sb_append(o, esc, 6);
            continue;
        }
        sb_append(o, esc, 2);
    }
    sb_append(o, s + run, n - run);
    sb_append(o, "\"", 1);
}

/* `"key":` after the first key of an object. */
static void put_key(strbuf *o, int *first, const char *key) {
    if (!*first) sb_append(o, ",", 1);
    *first = 0;
    sb_append(o, "\"", 1);
    sb_append(o, key, strlen(key));
    sb_append(o, "\":", 2);
}

static void put_str_field(strbuf *o, int *first, const char *key, const char *v) {
    if (!v) {
        put_key(o, first, key);
        PUT_LIT(o, "null");
        return;
    }
    size_t n = strlen(v);
    if (util_utf8_check(v, n) != n) return; /* jansson drops it */
    put_key(o, first, key);
    put_string(o, v, n);
}

static void put_int(strbuf *o, long long v) {
    char buf[24], *p = buf + sizeof buf;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) *--p = '-';
    sb_append(o, p, (size_t)(buf + sizeof buf - p));
}

/* jansson's real: "%.7g", then ".0" when that has neither '.' nor 'e',
 * and the exponent without '+' or leading zeros. */
static size_t real_text_printf(double v, char *buf) {
    int n = snprintf(buf, 32, "%.7g", v);
    if (n < 0 || n >= 32) return 0;
    size_t len = (size_t)n;
    char *e = strchr(buf, 'e');
    if (!e && !strchr(buf, '.')) {
        memcpy(buf + len, ".0", 3);
        return len + 2;
    }
    if (e) {
        char *start = e + 1, *end = start + 1;
        if (*start == '-') start++;
        while (*end == '0') end++;
        if (end != start) {
            memmove(start, end, len - (size_t)(end - buf) + 1);
            len -= (size_t)(end - start);
        }
    }
    return len;
}

/* The same text without printf for the common magnitudes: the 7
 * significant digits come from one long double product or quotient by an
 * exact power of ten (a relative error near 2^-64), and a value whose
 * eighth digit and beyond come close to a tie goes to printf, so the
 * rounding is always printf's. */
static size_t real_text(double v, char *buf) {
    static const long double pow10[] = {1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,
                                        1e7L,  1e8L,  1e9L,  1e10L, 1e11L, 1e12L, 1e13L,
                                        1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L};
    double a = fabs(v);
    if (v == 0) {
        if (signbit(v)) {
            memcpy(buf, "-0.0", 5);
            return 4;
        }
        memcpy(buf, "0.0", 4);
        return 3;
    }
    if (!(a >= 1e-12 && a < 1e14)) return real_text_printf(v, buf);
    int e = (int)floor(log10(a));
    long double scaled = 0;
    for (int tries = 0; tries < 3; tries++) {
        int shift = 6 - e;
        scaled = shift >= 0 ? (long double)a * pow10[shift] : (long double)a / pow10[-shift];
        if (scaled < 1e6L)
            e--;
        else if (scaled >= 1e7L)
            e++;
        else
            break;
    }
    if (scaled < 1e6L || scaled >= 1e7L) return real_text_printf(v, buf);
    long double whole = floorl(scaled), frac = scaled - whole;
    if (fabsl(frac - 0.5L) < 1e-6L) return real_text_printf(v, buf);
    long digits = (long)whole + (frac > 0.5L);
    if (digits == 10000000) {
        digits = 1000000;
        e++;
    }
    char d[8];
    for (int i = 6; i >= 0; i--) {
        d[i] = (char)('0' + digits % 10);
        digits /= 10;
    }
    int nd = 7; /* significant digits left after dropping trailing zeros */
    while (nd > 1 && d[nd - 1] == '0') nd--;
    char *p = buf;
    if (v < 0) *p++ = '-';
    if (e >= -4 && e < 7) {
        if (e >= 0) {
            for (int i = 0; i <= e; i++) *p++ = i < nd ? d[i] : '0';
            if (nd > e + 1) {
                *p++ = '.';
                for (int i = e + 1; i < nd; i++) *p++ = d[i];
            } else {
                *p++ = '.';
                *p++ = '0';
            }
        } else {
            *p++ = '0';
            *p++ = '.';
            for (int i = 0; i < -e - 1; i++) *p++ = '0';
            for (int i = 0; i < nd; i++) *p++ = d[i];
        }
    } else {
        *p++ = d[0];
        if (nd > 1) {
            *p++ = '.';
            for (int i = 1; i < nd; i++) *p++ = d[i];
        }
        *p++ = 'e';
        int x = e;
        if (x < 0) {
            *p++ = '-';
            x = -x;
        }
        char xb[8];
        int xn = 0;
        do xb[xn++] = (char)('0' + x % 10);
        while (x /= 10);
        while (xn) *p++ = xb[--xn];
    }
    *p = '\0';
    return (size_t)(p - buf);
}

/* A real field; left out when not finite (jansson has no such value). */
static void put_real_field(strbuf *o, int *first, const char *key, double v) {
    if (!isfinite(v)) return;
    char buf[40];
    size_t n = real_text(v, buf);
    if (!n) return;
    put_key(o, first, key);
    sb_append(o, buf, n);
}

static void put_int_field(strbuf *o, int *first, const char *key, long long v) {
    put_key(o, first, key);
    put_int(o, v);
}

static void two(char *p, int v) {
    p[0] = (char)('0' + v / 10);
    p[1] = (char)('0' + v % 10);
}

/* util_format_time's text, without gmtime and printf for years 1 to 9999. */
static void format_time(int64_t ms, char *buf, size_t cap) {
    const int64_t min_ms = -62135596800000LL, max_ms = 253402300799999LL;
    if (ms < min_ms || ms > max_ms || cap < 25) {
        util_format_time(ms, buf, cap);
        return;
    }
    int64_t secs = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
    int frac = (int)(ms - secs * 1000);
    int64_t days = secs >= 0 ? secs / 86400 : (secs - 86399) / 86400;
    int sod = (int)(secs - days * 86400);
    /* civil date from days since 1970-01-01 (proleptic Gregorian) */
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int day = (int)(doy - (153 * mp + 2) / 5 + 1);
    int month = (int)(mp < 10 ? mp + 3 : mp - 9);
    int year = (int)(yoe + era * 400 + (month <= 2));
    two(buf, year / 100);
    two(buf + 2, year % 100);
    buf[4] = '-';
    two(buf + 5, month);
    buf[7] = '-';
    two(buf + 8, day);
    buf[10] = 'T';
    two(buf + 11, sod / 3600);
    buf[13] = ':';
    two(buf + 14, sod / 60 % 60);
    buf[16] = ':';
    two(buf + 17, sod % 60);
    buf[19] = '.';
    buf[20] = (char)('0' + frac / 100);
    two(buf + 21, frac % 100);
    memcpy(buf + 23, "Z", 2);
}

static void put_time_field(strbuf *o, int *first, const char *key, int64_t ms, int zero_is_null) {
    put_key(o, first, key);
    if (zero_is_null && ms == 0) {
        PUT_LIT(o, "null");
        return;
    }
    char buf[40];
    format_time(ms, buf, sizeof buf);
    put_string(o, buf, strlen(buf));
}

void eng_json_string(strbuf *o, const char *s) { put_string(o, s, strlen(s)); }

/* ---- stored JSON that jansson would write back unchanged ----
 * Metadata and links are kept as JSON text and rendered as jansson prints
 * their parse. Most were written by jansson (compact) in the first place:
 * this reader says so without building the tree, and leaves whatever it is
 * not sure of to jansson (reals, white space, escapes jansson would spell
 * otherwise, a key given twice, deep nesting). Each returns the end of the
 * value it read, or NULL. */

enum { CANON_DEPTH = 32, CANON_KEYS = 64 };

static const char *canon_value(const char *p, int depth);

static int canon_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); }

/* A string as jansson writes it: no control byte, and of the escapes only
 * the ones it uses (\uXXXX upper case, for the control bytes without a
 * short one, never \u0000, which jansson does not read). */
static const char *canon_string(const char *p) {
    for (p++;; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"') return p + 1;
        if (c < 0x20) return NULL; /* the text's end, too */
        if (c != '\\') continue;
        c = (unsigned char)*++p;
        if (c == '"' || c == '\\' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't')
            continue;
        if (c != 'u' || p[1] != '0' || p[2] != '0' || (p[3] != '0' && p[3] != '1') ||
            !canon_hex(p[4]))
            return NULL;
        int v = (p[3] - '0') * 16 + (p[4] <= '9' ? p[4] - '0' : p[4] - 'A' + 10);
        if (v == 0 || v == '\b' || v == '\f' || v == '\n' || v == '\r' || v == '\t') return NULL;
        p += 4;
    }
}

/* An integer as "%lld" writes it (no "-0", no leading zero, and short
 * enough that no int64 overflows). */
static const char *canon_int(const char *p) {
    const char *s = p;
    if (*p == '-') p++;
    if (*p == '0' && p == s)
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9') p++;
    else
        return NULL;
    if (p - s > 18 || *p == '.' || *p == 'e' || *p == 'E') return NULL;
    return p;
}

static const char *canon_object(const char *p, int depth) {
    const char *key[CANON_KEYS];
    size_t len[CANON_KEYS], n = 0;
    if (*++p == '}') return p + 1;
    for (;;) {
        if (*p != '"' || n == CANON_KEYS) return NULL;
        const char *end = canon_string(p);
        if (!end || *end != ':') return NULL;
        for (size_t i = 0; i < n; i++) /* jansson keeps one of the two */
            if (len[i] == (size_t)(end - p) && !memcmp(key[i], p, len[i])) return NULL;
        key[n] = p, len[n++] = (size_t)(end - p);
        if (!(p = canon_value(end + 1, depth + 1))) return NULL;
        if (*p == '}') return p + 1;
        if (*p++ != ',') return NULL;
    }
}

static const char *canon_array(const char *p, int depth) {
    if (*++p == ']') return p + 1;
    for (;;) {
        if (!(p = canon_value(p, depth + 1))) return NULL;
        if (*p == ']') return p + 1;
        if (*p++ != ',') return NULL;
    }
}

static const char *canon_value(const char *p, int depth) {
    if (depth > CANON_DEPTH) return NULL;
    switch (*p) {
    case '"': return canon_string(p);
    case '{': return canon_object(p, depth);
    case '[': return canon_array(p, depth);
    case 't': return strncmp(p, "true", 4) ? NULL : p + 4;
    case 'f': return strncmp(p, "false", 5) ? NULL : p + 5;
    case 'n': return strncmp(p, "null", 4) ? NULL : p + 4;
    default: return canon_int(p);
    }
}

/* Would jansson print text's parse (compact, JSON_ENCODE_ANY) as text? */
static int canon_json(const char *text, size_t n) {
    if (util_utf8_check(text, n) != n) return 0;
    const char *end = canon_value(text, 0);
    return end && *end == '\0';
}

/* A JSON value stored as text, as set_json_text makes it: text jansson would
 * print unchanged (what most memories hold) directly, anything else
 * through jansson so that its spacing and numbers come out the same. */
static void put_json_text_field(strbuf *o, int *first, const char *key, const char *text) {
    if (!text) {
        put_key(o, first, key);
        PUT_LIT(o, "null");
        return;
    }
    size_t n = strlen(text);
    if (canon_json(text, n)) {
        put_key(o, first, key);
        sb_append(o, text, n);
        return;
    }
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!v) {
        put_str_field(o, first, key, text);
        return;
    }
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(7));
    json_decref(v);
    if (!s) {
        o->oom = 1;
        return;
    }
    put_key(o, first, key);
    sb_append(o, s, strlen(s));
    free(s);
}

/* The members of eng_memory_json(m, 0), in its order, without the braces. */
static void put_memory_members(strbuf *o, int *first, const remem_memory *m) {
    put_str_field(o, first, "id", m->id);
    put_str_field(o, first, "ns", m->ns);
    put_str_field(o, first, "kind", m->kind);
    put_str_field(o, first, "tier", m->tier);
    if (m->text) put_str_field(o, first, "text", m->text);
    put_real_field(o, first, "importance", m->importance);
    put_time_field(o, first, "created_at", m->created_at, 0);
    put_time_field(o, first, "updated_at", m->updated_at, 0);
    put_time_field(o, first, "accessed_at", m->accessed_at, 0);
    put_int_field(o, first, "access_count", m->access_count);
    put_time_field(o, first, "expires_at", m->expires_at, 1);
    put_time_field(o, first, "invalidated_at", m->invalidated_at, 1);
    put_str_field(o, first, "superseded_by", m->superseded_by);
    put_int_field(o, first, "duplicate_count", m->duplicate_count);
    put_json_text_field(o, first, "metadata", m->metadata);
    put_json_text_field(o, first, "links", m->links);
    put_str_field(o, first, "model", m->model);
}

/* entity: the hit's entity component (remem_result.entity), or NaN. */
static void put_hit(strbuf *o, const remem_hit *h, double entity) {
    int first = 1;
    sb_append(o, "{", 1);
    put_memory_members(o, &first, &h->mem);
    put_real_field(o, &first, "score", h->score);
    put_key(o, &first, "components");
    int cf = 1;
    sb_append(o, "{", 1);
    put_real_field(o, &cf, "relevance", h->relevance);
    if (isnan(h->similarity)) {
        put_key(o, &cf, "similarity");
        PUT_LIT(o, "null");
    } else {
        put_real_field(o, &cf, "similarity", h->similarity);
    }
    put_real_field(o, &cf, "lexical", h->lexical);
    put_real_field(o, &cf, "bm25", h->bm25);
    put_real_field(o, &cf, "recency", h->recency);
    put_real_field(o, &cf, "importance", h->importance);
    put_real_field(o, &cf, "context", h->context);
    if (!isnan(entity)) put_real_field(o, &cf, "entity", entity);
    put_key(o, &cf, "lanes");
    static const char *const lane_names[] = {"\"vector\"", "\"lexical\"", "\"entity\"",
                                             "\"neighbour\""};
    sb_append(o, "[", 1);
    for (unsigned b = 0, n = 0; b < 4; b++)
        if (h->lanes & (1u << b)) {
            if (n++) sb_append(o, ",", 1);
            sb_append(o, lane_names[b], strlen(lane_names[b]));
        }
    sb_append(o, "]}}", 3);
}

/* A fresh buffer with room for a memory or two: starting at strbuf's 64
 * bytes would cost four reallocations per memory. */
static void out_init(strbuf *o, size_t expect) {
    sb_init(o);
    sb_reserve(o, expect);
}

char *eng_memory_text(const remem_memory *m) {
    strbuf o;
    out_init(&o, 1024);
    int first = 1;
    sb_append(&o, "{", 1);
    put_memory_members(&o, &first, m);
    sb_append(&o, "}", 1);
    return sb_take(&o);
}

/* The public renderings read a caller's memory only up to its size (an
 * older remem.h's memory is smaller) and refuse one never initialised. */
char *remem_memory_to_json(const remem_memory *in) {
    remem_memory m;
    if (eng_take_memory(NULL, in, &m)) return NULL;
    return eng_memory_text(&m);
}

/* The hit with its memory at the library's size, or -1. */
static int take_hit(const remem_hit *in, remem_hit *h) {
    if (!in) return -1;
    *h = *in;
    return eng_take_memory(NULL, &in->mem, &h->mem) ? -1 : 0;
}

char *remem_hit_to_json(const remem_hit *in) {
    remem_hit h;
    if (take_hit(in, &h)) return NULL;
    strbuf o;
    out_init(&o, 1024);
    put_hit(&o, &h, NAN);
    return sb_take(&o);
}

char *remem_result_to_json(const remem_result *r) {
    if (!r) return NULL;
    strbuf o;
    out_init(&o, 1024 + r->n * 1024);
    int first = 1;
    sb_append(&o, "{", 1);
    put_str_field(&o, &first, "profile", r->profile ? r->profile : "");
    put_time_field(&o, &first, "now", r->now, 0);
    put_int_field(&o, &first, "candidates", (long long)r->candidates);
    put_real_field(&o, &first, "took_ms", r->took_ms);
    put_key(&o, &first, "hits");
    sb_append(&o, "[", 1);
    for (size_t i = 0; i < r->n; i++) {
        remem_hit h;
        if (take_hit(&r->hits[i], &h)) o.oom = 1;
        if (i) sb_append(&o, ",", 1);
        if (!o.oom) put_hit(&o, &h, r->entity ? r->entity[i] : NAN);
    }
    sb_append(&o, "]", 1);
    if (r->memory_off)
        put_str_field(&o, &first, "memory", r->memory_off == 1 ? "off" : "partly off");
    sb_append(&o, "}", 1);
    return sb_take(&o);
}

char *remem_write_result_json(const char *op, const char *ns, const char *id, int outcome,
                              const char *superseded_by) {
    const char *what;
    if (!op) return NULL;
    if (outcome == REMEM_DROPPED && strcmp(op, "add") && strcmp(op, "update") &&
        strcmp(op, "invalidate") && strcmp(op, "forget"))
        return NULL;
    if (outcome == REMEM_DROPPED)
        what = "dropped";
    else if (!strcmp(op, "add"))
        what = outcome == REMEM_ADDED       ? "added"
               : outcome == REMEM_UPSERTED  ? "upserted"
               : outcome == REMEM_DUPLICATE ? "duplicate"
                                            : "accepted";
    else if (!strcmp(op, "update"))
        what = "updated";
    else if (!strcmp(op, "invalidate"))
        what = "invalidated";
    else if (!strcmp(op, "forget"))
        what = outcome ? "purged" : "archived";
    else
        return NULL;
    strbuf o;
    out_init(&o, 128);
    int first = 1;
    sb_append(&o, "{", 1);
    if (id && (*id || outcome != REMEM_DROPPED)) put_str_field(&o, &first, "id", id);
    put_str_field(&o, &first, "ns", ns ? ns : "");
    put_str_field(&o, &first, "outcome", what);
    if (outcome == REMEM_DROPPED) {
        put_str_field(&o, &first, "memory", "off");
    } else if (!strcmp(op, "invalidate")) {
        put_str_field(&o, &first, "superseded_by", superseded_by);
    } else if (!strcmp(op, "forget")) {
        put_key(&o, &first, "purged");
        if (outcome)
            PUT_LIT(&o, "true");
        else
            PUT_LIT(&o, "false");
    }
    sb_append(&o, "}", 1);
    return sb_take(&o);
}
