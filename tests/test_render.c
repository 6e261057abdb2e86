/*
 * test_render.c: the JSON renderings of memories, hits and results
 * (src/engine/render.c) write their text directly, for speed; here they are held
 * byte for byte against what jansson writes for the same values
 * (eng_memory_json and a tree built the same way, dumped compact with
 * JSON_REAL_PRECISION(7)). The numbers are where a hand-written formatter
 * can go wrong, so they get the most cases: random doubles of every
 * magnitude, values on and next to rounding ties of the seventh digit,
 * powers of ten, zeros, non-finite values. Also escapes, non-UTF-8 text,
 * times over the whole range of years, and metadata as stored text.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "test.h"
#include "util/util.h"

#define FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(7))

static unsigned long long rng = 0x9E3779B97F4A7C15ULL;
static uint64_t next_random(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static remem_memory sample_memory(void) {
    remem_memory m;
    remem_memory_init(&m);
    m.id = "01JABCDEF";
    m.ns = "agent:one";
    m.kind = "observation";
    m.tier = "short";
    m.text = "the kettle is in the \"left\" cupboard\n\ttab \\ slash / é ✓ \x01\x1f";
    m.importance = 0.5;
    m.created_at = 1763700000123LL;
    m.updated_at = 1763700000456LL;
    m.accessed_at = 1763700000789LL;
    m.access_count = 3;
    m.duplicate_count = 0;
    m.metadata = "{}";
    m.links = "[]";
    m.model = "hash-384";
    return m;
}

/* What jansson writes for m. */
static char *expected_memory(const remem_memory *m) {
    json_t *o = eng_memory_json(m, 0);
    char *s = json_dumps(o, FLAGS);
    json_decref(o);
    return s;
}

static void check_memory(const remem_memory *m) {
    char *want = expected_memory(m), *got = remem_memory_to_json(m);
    CHECK_STR(got, want);
    free(want);
    remem_free(got);
}

static void test_memory_fields(void) {
    remem_memory m = sample_memory();
    check_memory(&m);
    m.text = NULL; /* purged */
    m.superseded_by = "01JNEXT";
    m.expires_at = 1763800000000LL;
    m.invalidated_at = 1763750000000LL;
    m.metadata = "{ \"project\" : \"kitchen\", \"n\": 1.25e-7, \"list\": [1, 2.0, true] }";
    m.links = "[{\"to\":\"x\"}]";
    m.model = NULL;
    check_memory(&m);
    m.metadata = "not json {";
    m.links = NULL;
    check_memory(&m);
    m.metadata = "\"a string\"";
    m.access_count = -42;
    m.duplicate_count = INT64_MAX;
    check_memory(&m);
    m.kind = "bad \xc3\x28 utf-8"; /* jansson leaves the key out */
    m.tier = "overlong \xc0\xaf";
    m.id = "surrogate \xed\xa0\x80";
    m.ns = "four bytes \xf0\x9f\x98\x80 ok";
    check_memory(&m);
    m.ns = "above U+10FFFF \xf4\x90\x80\x80";
    m.text = "cut short \xe2\x9c";
    check_memory(&m);
}

/* Texts of every length up to 80 with the bytes that need escaping (and
 * non-ASCII, valid and not) at every offset: the renderer skips runs of
 * plain bytes eight at a time, and checks UTF-8 the same way, so each
 * place in and across those words must still be caught. */
static void test_escapes_everywhere(void) {
    static const char *const pieces[] = {"a", "Z", " ", "\"", "\\", "\n", "\x01", "\x1f", "\x7f",
                                         "/", "\xc3\xa9", "\xe2\x9c\x93", "\xc3", "\xff", "~"};
    remem_memory m = sample_memory();
    char text[512];
    for (int round = 0; round < 3000; round++) {
        size_t len = 0, want = next_random() % 81;
        while (len < want) {
            /* mostly plain letters, so that long clean runs occur */
            const char *p = next_random() % 4 ? "abcdefgh" + next_random() % 8
                                              : pieces[next_random() % (sizeof pieces / sizeof *pieces)];
            size_t n = strlen(p);
            if (p[0] >= 'a' && p[0] <= 'h') n = 1 + next_random() % n;
            if (len + n >= sizeof text) break;
            memcpy(text + len, p, n);
            len += n;
        }
        text[len] = '\0';
        m.text = text;
        check_memory(&m);
    }
}

/* Metadata and links as stored text: what jansson writes back unchanged is
 * copied as it is (render.c's canon_json), anything else goes through
 * jansson; either way the text is jansson's. Texts on both sides of each
 * rule, then random strings of JSON tokens. */
static void test_stored_json(void) {
    static const char *const texts[] = {
        "{\"role\":\"user\",\"name\":\"Caroline\",\"session\":\"s1\"}",
        "{\"a\":{\"b\":[1,-2,0,true,false,null,\"x\"]},\"c\":[]}",
        "{\"esc\":\"q\\\" b\\\\ \\n\\t\\r\\b\\f \\u0001\\u001F é ✓ 😀\"}",
        "[\"a\",\"b\"]", "\"top string\"", "123", "-9", "0", "true", "null", "{}", "[]",
        "{\"big\":123456789012345678}", "{\"big\":-123456789012345678}",
        "{\"bigger\":1234567890123456789}", "{\"over\":9223372036854775808}",
        "{ \"space\":1}", "{\"space\": 1}", "{\"a\":1 }", " {}", "{}\n",
        "{\"lower\":\"\\u001f\"}", "{\"slash\":\"\\/\"}", "{\"e\":\"\\u00e9\"}",
        "{\"short\":\"\\u000A\"}", "{\"nul\":\"\\u0000\"}", "{\"ctl\":\"a\x01\"}",
        "{\"z\":-0}", "{\"z\":01}", "{\"r\":1.0}", "{\"r\":1e5}", "{\"r\":1E5}", "{\"r\":-1.25}",
        "{\"a\":1,\"a\":2}", "{\"a\":1,\"b\":{\"a\":2}}", "{\"\":1}",
        "{\"bad\":\"\xc3\x28\"}", "{\"surrogate\":\"\xed\xa0\x80\"}", "{\"cut\":\"\xe2\x9c\"}",
        "{}x", "", "[", "{", "tru", "nul", "[1,]", "{\"a\"}", "{\"a\":}", "{,}", "[,1]",
        "\"unterminated", "{\"a\":1,}",
    };
    remem_memory m = sample_memory();
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        m.metadata = texts[i];
        m.links = texts[sizeof texts / sizeof *texts - 1 - i];
        check_memory(&m);
    }
    /* Nesting and width at and past the reader's limits. */
    char deep[200] = "", wide[2000] = "{";
    for (int d = 0; d < 40; d++) strcat(deep, "[");
    for (int d = 0; d < 40; d++) strcat(deep, "]");
    for (int k = 0; k < 70; k++)
        snprintf(wide + strlen(wide), sizeof wide - strlen(wide), "%s\"k%d\":%d", k ? "," : "", k,
                 k);
    strcat(wide, "}");
    m.metadata = deep;
    m.links = wide;
    check_memory(&m);
    static const char *const tokens[] = {
        "{", "}", "[", "]", ",", ":", "\"a\"", "\"b\"", "\"\\n\"", "\"\\u001F\"", "\"\\u001f\"",
        "\"\\/\"", "1", "-0", "0", "12", "1.5", "true", "null", " ", "\"\xc3\xa9\"", "-", "\"",
        "\\", "\"\\u0000\"", "\"\\u007F\"", "\"\x7f\"",
    };
    char buf[256];
    for (int round = 0; round < 20000; round++) {
        size_t len = 0, n = 1 + next_random() % 14;
        buf[0] = '\0';
        for (size_t t = 0; t < n; t++) {
            const char *tok = tokens[next_random() % (sizeof tokens / sizeof *tokens)];
            if (len + strlen(tok) + 1 >= sizeof buf) break;
            strcpy(buf + len, tok);
            len += strlen(tok);
        }
        m.metadata = buf;
        m.links = NULL;
        check_memory(&m);
    }
}

static void test_times(void) {
    remem_memory m = sample_memory();
    const int64_t fixed[] = {0,
                             1,
                             -1,
                             999,
                             -999,
                             -1000,
                             -1001,
                             86399999,
                             86400000,
                             951782400000LL,    /* 2000-02-29 */
                             -62135596800000LL, /* 0001-01-01 */
                             -62135596800001LL, /* just before */
                             253402300799999LL, /* 9999-12-31T23:59:59.999 */
                             253402300800000LL, /* 10000-01-01 */
                             -2208988800000LL}; /* 1900-01-01 */
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        m.created_at = m.updated_at = fixed[i];
        check_memory(&m);
    }
    for (int i = 0; i < 20000; i++) {
        /* years 1 to 9999 and a little beyond on both sides */
        int64_t span = 320000000000000LL;
        m.created_at = (int64_t)(next_random() % (uint64_t)span) - 66000000000000LL;
        m.accessed_at = (int64_t)(next_random() % 4102444800000ULL);
        m.expires_at = m.created_at + 1;
        check_memory(&m);
    }
}

/* jansson's text of one real, as it appears after "importance":. */
static void check_real(double v) {
    remem_memory m = sample_memory();
    m.importance = v;
    char *want = expected_memory(&m), *got = remem_memory_to_json(&m);
    if (!got || !want || strcmp(got, want) != 0) {
        fprintf(stderr, "  real %.17g:\n    got  %s\n    want %s\n", v, got ? got : "(null)",
                want ? want : "(null)");
        CHECK(0);
    }
    free(want);
    remem_free(got);
}

static void test_reals(void) {
    const double fixed[] = {0.0,           -0.0,       1.0,        -1.0,         0.5,
                            0.1,           0.7,        1e-4,       9.9999995e-5, 1e-5,
                            0.00012345678, 1234567.0,  12345678.0, 9999999.5,    9999999.4,
                            99999995.0,    1e7,        1e16,       1e22,         1e100,
                            -1e-300,       DBL_MIN,    DBL_MAX,    5e-324,       1.0000005,
                            2.5e-7,        0.30000001, NAN,        INFINITY,     -INFINITY};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) check_real(fixed[i]);
    /* Every power of ten in range and its neighbours. */
    for (int e = -320; e <= 308; e++) {
        double p = pow(10, e);
        check_real(p);
        check_real(nextafter(p, 0));
        check_real(nextafter(p, INFINITY));
    }
    /* Ties of the seventh significant digit and the doubles around them. */
    for (int i = 0; i < 3000; i++) {
        int e = (int)(next_random() % 24) - 12;
        double digits = (double)(1000000 + next_random() % 9000000) + 0.5;
        double v = digits * pow(10, e - 6);
        check_real(v);
        check_real(nextafter(v, 0));
        check_real(nextafter(v, INFINITY));
    }
    /* Random bit patterns (all magnitudes) and random scores in [0, 1]. */
    for (int i = 0; i < 100000; i++) {
        uint64_t bits = next_random();
        double v;
        memcpy(&v, &bits, sizeof v);
        check_real(v);
        check_real((double)(next_random() >> 11) * 0x1p-53);
        check_real((double)(float)((double)(next_random() >> 11) * 0x1p-53));
    }
}

/* The hit as jansson would write it, built the way render.c used to. */
static char *expected_hit(const remem_hit *h) {
    json_t *o = eng_memory_json(&h->mem, 0);
    json_object_set_new(o, "score", json_real(h->score));
    json_t *c = json_object();
    json_object_set_new(c, "relevance", json_real(h->relevance));
    json_object_set_new(c, "similarity",
                        isnan(h->similarity) ? json_null() : json_real(h->similarity));
    json_object_set_new(c, "lexical", json_real(h->lexical));
    json_object_set_new(c, "bm25", json_real(h->bm25));
    json_object_set_new(c, "recency", json_real(h->recency));
    json_object_set_new(c, "importance", json_real(h->importance));
    json_object_set_new(c, "context", json_real(h->context));
    json_t *lanes = json_array();
    if (h->lanes & 1) json_array_append_new(lanes, json_string("vector"));
    if (h->lanes & 2) json_array_append_new(lanes, json_string("lexical"));
    json_object_set_new(c, "lanes", lanes);
    json_object_set_new(o, "components", c);
    char *s = json_dumps(o, FLAGS);
    json_decref(o);
    return s;
}

static void test_hits_and_result(void) {
    remem_hit hits[4];
    memset(hits, 0, sizeof hits);
    for (int i = 0; i < 4; i++) {
        hits[i].mem = sample_memory();
        hits[i].score = 0.8123456789 - i * 0.1;
        hits[i].relevance = 0.91;
        hits[i].similarity = i == 2 ? NAN : 0.6f + 0.01f * i;
        hits[i].lexical = i * 0.25;
        hits[i].bm25 = 12.345678901;
        hits[i].recency = 0.999999951;
        hits[i].importance = 0.5;
        hits[i].context = i == 3 ? INFINITY : 0;
        hits[i].lanes = (unsigned)i;
    }
    for (int i = 0; i < 4; i++) {
        char *want = expected_hit(&hits[i]), *got = remem_hit_to_json(&hits[i]);
        CHECK_STR(got, want);
        free(want);
        remem_free(got);
    }
    remem_result r;
    memset(&r, 0, sizeof r);
    r.hits = hits;
    r.n = 4;
    r.profile = "stream";
    r.now = 1763700000999LL;
    r.candidates = 50;
    r.took_ms = 0.2345678;
    json_t *o = json_object();
    json_object_set_new(o, "profile", json_string("stream"));
    char now[40];
    util_format_time(r.now, now, sizeof now);
    json_object_set_new(o, "now", json_string(now));
    json_object_set_new(o, "candidates", json_integer(50));
    json_object_set_new(o, "took_ms", json_real(r.took_ms));
    json_t *arr = json_array();
    for (int i = 0; i < 4; i++) {
        char *h = expected_hit(&hits[i]);
        json_array_append_new(arr, json_loads(h, 0, NULL));
        free(h);
    }
    json_object_set_new(o, "hits", arr);
    char *want = json_dumps(o, FLAGS), *got = remem_result_to_json(&r);
    json_decref(o);
    CHECK_STR(got, want);
    free(want);
    remem_free(got);
    r.n = 0;
    got = remem_result_to_json(&r);
    CHECK_HAS(got, "\"hits\":[]}");
    json_t *back = json_loads(got, 0, NULL);
    CHECK(back != NULL);
    json_decref(back);
    remem_free(got);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_memory_fields);
    RUN(test_escapes_everywhere);
    RUN(test_stored_json);
    RUN(test_times);
    RUN(test_reals);
    RUN(test_hits_and_result);
    return TEST_EXIT();
}
