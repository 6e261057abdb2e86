/*
 * situation.c: how seed 000 turns the agent's situation into query text,
 * and the small Python-compatible renderings its texts need. All pure, so
 * the exact bytes of a query can be tested without a store.
 *
 * Seed 000 queries with the title plus "the three most stressed metrics",
 * the three lowest values after sorting the metrics, each as `key:value`;
 * the stored decision text formats the reward as Python's `{:.2f}` and
 * takes `reasoning[:100]`, which counts code points, not bytes. C's printf
 * rounds the binary value exactly as Python's format does (correctly
 * rounded, ties to even), so "%.2f" and "%.0f" give Python's digits.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "experience/experience.h"

typedef struct entry {
    const char *key;
    json_t *val;
    double stress; /* lower is more stressed */
    size_t order;  /* position in the object: ties keep it */
} entry;

static int cmp_entry(const void *a, const void *b) {
    const entry *x = a, *y = b;
    if (x->stress != y->stress) return x->stress < y->stress ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static double stress_of(json_t *v) {
    if (json_is_number(v)) return json_number_value(v);
    if (json_is_true(v)) return 1;
    return 0; /* false, strings, null, lists, objects */
}

/* The three most stressed entries of obj, sorted; returns how many (<= 3). */
static size_t most_stressed(json_t *obj, entry out[3]) {
    size_t n = json_is_object(obj) ? json_object_size(obj) : 0, i = 0, keep;
    if (!n) return 0;
    entry *all = malloc(n * sizeof *all);
    if (!all) return 0;
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) {
        all[i] = (entry){k, v, stress_of(v), i};
        i++;
    }
    if (n > 1) qsort(all, n, sizeof *all, cmp_entry);
    keep = n < 3 ? n : 3;
    memcpy(out, all, keep * sizeof *all);
    free(all);
    return keep;
}

void exp_decision_query(const char *title, json_t *metrics, strbuf *out) {
    entry top[3];
    size_t n = most_stressed(metrics, top);
    sb_puts(out, title);
    sb_puts(out, " ");
    for (size_t i = 0; i < n; i++)
        sb_printf(out, "%s%s:%.0f", i ? " " : "", top[i].key, json_number_value(top[i].val));
}

void exp_world_query(const char *domain, json_t *world, strbuf *out) {
    entry top[3];
    size_t n = most_stressed(world, top);
    sb_printf(out, "TaskDomain: %s ", domain);
    for (size_t i = 0; i < n; i++) {
        sb_printf(out, "%s%s:", i ? " " : "", top[i].key);
        exp_render_value(top[i].val, out);
    }
}

/* Python's repr of a float: the shortest digits that read back the same,
 * with ".0" on an integral value ("3.0", "2.5", "1e+16"). */
static void render_real(double x, strbuf *out) {
    char buf[40];
    if (isnan(x)) {
        sb_puts(out, "nan");
        return;
    }
    if (isinf(x)) {
        sb_puts(out, x > 0 ? "inf" : "-inf");
        return;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, x);
        if (strtod(buf, NULL) == x) break;
    }
    sb_puts(out, buf);
    if (!strpbrk(buf, ".e")) sb_puts(out, ".0");
}

void exp_render_value(json_t *v, strbuf *out) {
    switch (json_typeof(v)) {
    case JSON_STRING: sb_append(out, json_string_value(v), json_string_length(v)); break;
    case JSON_INTEGER: sb_printf(out, "%lld", (long long)json_integer_value(v)); break;
    case JSON_REAL: render_real(json_real_value(v), out); break;
    case JSON_TRUE: sb_puts(out, "True"); break;
    case JSON_FALSE: sb_puts(out, "False"); break;
    case JSON_NULL: sb_puts(out, "None"); break;
    default: {
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        if (s)
            sb_puts(out, s);
        else
            out->oom = 1;
        free(s);
    }
    }
}

void exp_prefix_chars(const char *s, size_t max, strbuf *out) {
    size_t i = 0, chars = 0;
    /* A code point starts at every byte that is not a continuation byte
     * (10xxxxxx); the text is valid UTF-8 (the engine checks every text). */
    while (s[i]) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (chars == max) break;
            chars++;
        }
        i++;
    }
    sb_append(out, s, i);
}

void exp_upper(const char *s, strbuf *out) {
    const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)s;
    utf8proc_ssize_t len = (utf8proc_ssize_t)strlen(s);
    while (len > 0) {
        utf8proc_int32_t c;
        utf8proc_ssize_t n = utf8proc_iterate(p, len, &c);
        if (n <= 0) { /* not UTF-8: keep the rest as it is */
            sb_append(out, (const char *)p, (size_t)len);
            return;
        }
        utf8proc_uint8_t enc[4];
        utf8proc_ssize_t m = utf8proc_encode_char(utf8proc_toupper(c), enc);
        sb_append(out, (const char *)enc, (size_t)m);
        p += n;
        len -= n;
    }
}
