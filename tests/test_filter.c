/*
 * test_filter.c: the filter language (src/filter): every operator on core
 * fields and on metadata (nested, missing, of another type), combinations,
 * $contains, ISO dates checked against the C library's timegm, every parse
 * error with its message and location, and a randomized comparison of
 * filter_match against a small evaluator written here independently (plain
 * doubles and strcmp over a handful of fields).
 */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <time.h>

#include "filter/filter.h"
#include "remem.h"
#include "test.h"

/* A record to match against; fresh metadata each time. */
static json_t *base_metadata(void) {
    json_error_t e;
    json_t *md = json_loads("{\"project\": \"acme\", \"reward\": 0.5, \"count\": 3, \"flag\": true,"
                            " \"off\": false, \"nothing\": null, \"tags\": [\"a\", \"b\"],"
                            " \"nested\": {\"lang\": \"c\", \"depth\": {\"x\": 2}},"
                            " \"a.b\": \"flat\", \"a\": {\"b\": \"deep\"}, \"n\": \"5\","
                            " \"kind\": \"meta-kind\", \"big\": 9007199254740993}",
                            0, &e);
    if (!md) fprintf(stderr, "bad test metadata: %s\n", e.text);
    return md;
}

static filter_record base_record(const json_t *md) {
    filter_record r = {
        .id = "m1",
        .ns = "agent:bolton",
        .kind = "decision",
        .tier = "short",
        .text = "The Quick brown fox jumps over the lazy dog",
        .importance = 0.75,
        .created_at = 1683504000000LL, /* 2023-05-08T00:00:00Z */
        .updated_at = 1683554160000LL, /* 2023-05-08T13:56:00Z */
        .accessed_at = 1683554160250LL,
        .expires_at = 0,
        .access_count = 3,
        .duplicate_count = 0,
        .metadata = md,
    };
    return r;
}

/* 1 or 0 from filter_match, or -1 when json does not parse (and says why). */
static int match_json(const char *json, const filter_record *r) {
    filter *f = NULL;
    char err[256];
    int rc = filter_parse(json, strlen(json), &f, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "  unexpected parse error for %s: %s\n", json, err);
        return -1;
    }
    int m = filter_match(f, r);
    filter_free(f);
    return m;
}

#define MATCH(json)    CHECK_INT(match_json(json, &r), 1)
#define NO_MATCH(json) CHECK_INT(match_json(json, &r), 0)

/* Parse json expecting REMEM_EFILTER; the message goes to err. */
static int parse_error(const char *json, char *err, size_t cap) {
    filter *f = (filter *)1; /* must come back NULL */
    int rc = filter_parse(json, strlen(json), &f, err, cap);
    if (f) {
        fprintf(stderr, "  %s: out not NULL after an error\n", json);
        filter_free(rc ? NULL : f);
        return 0;
    }
    return rc;
}

#define EXPECT_ERROR(json, what, where)                                 \
    do {                                                                \
        char err_[512];                                                 \
        CHECK_INT(parse_error(json, err_, sizeof err_), REMEM_EFILTER); \
        CHECK_HAS(err_, what);                                          \
        CHECK_HAS(err_, where);                                         \
    } while (0)

static void test_match_all(void) {
    json_t *md = base_metadata();
    filter_record r = base_record(md);
    const char *empties[] = {"", "{}", "  \n\t", " { } "};
    for (size_t i = 0; i < sizeof empties / sizeof *empties; i++) {
        filter *f = NULL;
        char err[128] = "untouched";
        CHECK_INT(filter_parse(empties[i], strlen(empties[i]), &f, err, sizeof err), 0);
        CHECK(f != NULL);
        CHECK_INT(filter_matches_all(f), 1);
        CHECK_INT(filter_match(f, &r), 1);
        CHECK_INT(filter_uses_metadata(f), 0);
        CHECK_INT(filter_uses_text(f), 0);
        filter_free(f);
    }
    filter *f = NULL;
    CHECK_INT(filter_parse(NULL, 0, &f, NULL, 0), 0);
    CHECK(f != NULL);
    CHECK_INT(filter_match(f, &r), 1);
    filter_free(f);
    CHECK_INT(filter_match(NULL, &r), 1);
    CHECK_INT(filter_matches_all(NULL), 1);
    filter_free(NULL);

    /* Clauses that reduce to "true" also match all. */
    MATCH("{\"$and\": [{}, {}]}");
    MATCH("{\"$or\": [{}, {\"kind\": \"nope\"}]}");
    NO_MATCH("{\"$not\": {}}");
    NO_MATCH("{\"$and\": [{}, {\"kind\": \"nope\"}]}");

    CHECK_INT(filter_parse("{\"kind\": \"decision\"}", 20, &f, NULL, 0), 0);
    CHECK_INT(filter_matches_all(f), 0);
    filter_free(f);
    json_decref(md);
}

static void test_input_not_nul_terminated(void) {
    json_t *md = base_metadata();
    filter_record r = base_record(md);
    const char buf[] = "{\"kind\": \"decision\"}{\"garbage";
    filter *f = NULL;
    CHECK_INT(filter_parse(buf, 20, &f, NULL, 0), 0);
    CHECK_INT(filter_match(f, &r), 1);
    filter_free(f);
    char err[256];
    CHECK_INT(filter_parse(buf, 25, &f, err, sizeof err), REMEM_EFILTER);
    CHECK_HAS(err, "malformed JSON");
    json_decref(md);
}

static void test_core_strings(void) {
    json_t *md = base_metadata();
    filter_record r = base_record(md);
    MATCH("{\"kind\": \"decision\"}");
    NO_MATCH("{\"kind\": \"Decision\"}");
    MATCH("{\"kind\": {\"$eq\": \"decision\"}}");
    NO_MATCH("{\"kind\": {\"$ne\": \"decision\"}}");
    MATCH("{\"kind\": {\"$ne\": \"plan\"}}");
    MATCH("{\"kind\": {\"$gt\": \"a\"}}");
    NO_MATCH("{\"kind\": {\"$gt\": \"decision\"}}");
    MATCH("{\"kind\": {\"$gte\": \"decision\"}}");
    MATCH("{\"kind\": {\"$lt\": \"decisioo\"}}");
    NO_MATCH("{\"kind\": {\"$lt\": \"decision\"}}");
    MATCH("{\"kind\": {\"$lte\": \"decision\"}}");
    NO_MATCH("{\"kind\": {\"$lte\": \"decisio\"}}");
    MATCH("{\"kind\": {\"$in\": [\"plan\", \"decision\", \"zeta\", \"alpha\"]}}");
    NO_MATCH("{\"kind\": {\"$in\": [\"plan\", \"zeta\", \"alpha\"]}}");
    NO_MATCH("{\"kind\": {\"$in\": []}}");
    MATCH("{\"kind\": {\"$nin\": []}}");
    MATCH("{\"kind\": {\"$nin\": [\"plan\", \"summary\"]}}");
    NO_MATCH("{\"kind\": {\"$nin\": [\"plan\", \"decision\"]}}");
    MATCH("{\"id\": \"m1\", \"ns\": \"agent:bolton\", \"tier\": \"short\"}");
    NO_MATCH("{\"id\": \"m1\", \"ns\": \"agent:other\"}");
    MATCH("{\"text\": \"The Quick brown fox jumps over the lazy dog\"}");
    NO_MATCH("{\"text\": \"the quick brown fox jumps over the lazy dog\"}");
    /* Bytewise: 0xC3 sorts after every ASCII byte. */
    MATCH("{\"kind\": {\"$lt\": \"\xc3\xa9t\xc3\xa9\"}}");

    /* A NULL core string counts as missing. */
    r.tier = NULL;
    NO_MATCH("{\"tier\": \"short\"}");
    MATCH("{\"tier\": {\"$ne\": \"short\"}}");
    NO_MATCH("{\"tier\": {\"$in\": [\"short\"]}}");
    MATCH("{\"tier\": {\"$nin\": [\"short\"]}}");
    NO_MATCH("{\"tier\": {\"$gte\": \"\"}}");
    json_decref(md);
}

static void test_core_numbers(void) {
    json_t *md = base_metadata();
    filter_record r = base_record(md);
    MATCH("{\"importance\": 0.75}");
    MATCH("{\"importance\": {\"$gte\": 0.5}}");
    MATCH("{\"importance\": {\"$gte\": 0.75}}");
    NO_MATCH("{\"importance\": {\"$gt\": 0.75}}");
    MATCH("{\"importance\": {\"$lt\": 1}}");
    NO_MATCH("{\"importance\": {\"$lt\": 0}}");
    MATCH("{\"importance\": {\"$lte\": 0.75}}");
    MATCH("{\"importance\": {\"$ne\": 1}}");
    MATCH("{\"importance\": {\"$gte\": 0.2, \"$lt\": 0.8}}");
    NO_MATCH("{\"importance\": {\"$gte\": 0.2, \"$lt\": 0.7}}");
    MATCH("{\"importance\": {\"$in\": [0.1, 0.75]}}");
    MATCH("{\"importance\": {\"$nin\": [0.1, 1]}}");

    MATCH("{\"access_count\": 3}");
    MATCH("{\"access_count\": 3.0}");
    NO_MATCH("{\"access_count\": 3.5}");
    MATCH("{\"access_count\": {\"$gt\": 2.5}}");
    NO_MATCH("{\"access_count\": {\"$gt\": 3.0}}");
    MATCH("{\"access_count\": {\"$lt\": 3.0000001}}");
    MATCH("{\"access_count\": {\"$in\": [1, 3.0]}}");
    NO_MATCH("{\"access_count\": {\"$nin\": [3]}}");
    MATCH("{\"duplicate_count\": 0}");
    MATCH("{\"duplicate_count\": {\"$lte\": -0.0}}");
    MATCH("{\"expires_at\": 0}");

    /* Exact beyond 2^53: 9007199254740993 is not the double 2^53. */
    r.access_count = 9007199254740993LL;
    NO_MATCH("{\"access_count\": 9007199254740992.0}");
    MATCH("{\"access_count\": {\"$gt\": 9007199254740992.0}}");
    MATCH("{\"access_count\": 9007199254740993}");
    NO_MATCH("{\"access_count\": 9007199254740992}");
    r.access_count = INT64_MAX;
    MATCH("{\"access_count\": {\"$lt\": 1e19}}");
    NO_MATCH("{\"access_count\": {\"$gte\": 9223372036854775808.0}}");
    MATCH("{\"access_count\": 9223372036854775807}");
    /* A NaN importance is unordered: only $ne and $nin hold. */
    r.importance = NAN;
    NO_MATCH("{\"importance\": {\"$gte\": 0}}");
    NO_MATCH("{\"importance\": {\"$lt\": 2}}");
    MATCH("{\"importance\": {\"$ne\": 0.5}}");
    MATCH("{\"importance\": {\"$nin\": [0.5]}}");
    NO_MATCH("{\"importance\": {\"$in\": [0.5]}}");
    r.access_count = INT64_MIN;
    MATCH("{\"access_count\": {\"$gt\": -1e19}}");
    MATCH("{\"access_count\": {\"$lte\": -9223372036854775808.0}}");
    json_decref(md);
}

static void test_times(void) {
    json_t *md = base_metadata();
    filter_record r = base_record(md);
    MATCH("{\"created_at\": \"2023-05-08\"}");
    MATCH("{\"created_at\": 1683504000000}");
    MATCH("{\"created_at\": {\"$gte\": \"2023-05-08\", \"$lt\": \"2023-05-09\"}}");
    NO_MATCH("{\"created_at\": {\"$gt\": \"2023-05-08T00:00:00Z\"}}");
    MATCH("{\"updated_at\": \"2023-05-08T13:56:00Z\"}");
    MATCH("{\"updated_at\": \"2023-05-08T13:56Z\"}");
    MATCH("{\"updated_at\": \"2023-05-08 13:56:00\"}");
    MATCH("{\"updated_at\": \"2023-05-08T15:56:00+02:00\"}");
    MATCH("{\"updated_at\": \"2023-05-08T15:56:00+0200\"}");
    MATCH("{\"updated_at\": \"2023-05-08T15:56:00+02\"}");
    MATCH("{\"updated_at\": \"2023-05-08T08:26:00-05:30\"}");
    MATCH("{\"updated_at\": \"2023-05-08T13:56:00.000Z\"}");
    MATCH("{\"accessed_at\": \"2023-05-08T13:56:00.25Z\"}");
    MATCH("{\"accessed_at\": \"2023-05-08T13:56:00.250999Z\"}");
    MATCH("{\"accessed_at\": {\"$gt\": \"2023-05-08T13:56:00.249Z\"}}");
    NO_MATCH("{\"accessed_at\": {\"$gt\": \"2023-05-08T13:56:00.250Z\"}}");
    MATCH("{\"accessed_at\": {\"$in\": [\"2020-01-01\", \"2023-05-08T13:56:00,25Z\"]}}");
    MATCH("{\"expires_at\": \"1970-01-01\"}");
    r.created_at = -86400000LL;
    MATCH("{\"created_at\": \"1969-12-31\"}");
    r.created_at = 951782400000LL; /* 2000-02-29 */
    MATCH("{\"created_at\": \"2000-02-29\"}");

    /* Random instants against timegm, with random zone offsets. */
    srand(7);
    for (int i = 0; i < 3000; i++) {
        struct tm tm = {0};
        tm.tm_year = 1 + rand() % 9999 - 1900; /* years 1..9999 */
        tm.tm_mon = rand() % 12;
        static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        int year = tm.tm_year + 1900;
        int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        tm.tm_mday = 1 + rand() % (mdays[tm.tm_mon] + (tm.tm_mon == 1 && leap));
        tm.tm_hour = rand() % 24;
        tm.tm_min = rand() % 60;
        tm.tm_sec = rand() % 60;
        int millis = rand() % 1000;
        int offset_min = (rand() % 49 - 24) * 30; /* -12:00 .. +12:00 */
        time_t t = timegm(&tm);
        int64_t expected = ((int64_t)t - offset_min * 60) * 1000 + millis;
        char json[160];
        snprintf(json, sizeof json,
                 "{\"created_at\": \"%04d-%02d-%02dT%02d:%02d:%02d.%03d%c%02d:%02d\"}", year,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis,
                 offset_min < 0 ? '-' : '+', abs(offset_min) / 60, abs(offset_min) % 60);
        r.created_at = expected;
        int m = match_json(json, &r);
        r.created_at = expected + 1;
        int m_next = match_json(json, &r);
        if (m != 1 || m_next != 0) {
            fprintf(stderr, "  %s: expected %lld\n", json, (long long)expected);
            CHECK(0);
            break;
        }
    }
    json_decref(md);
}

static void test_metadata(void) {
    json_t *md = base_metadata();
    filter_record r = base_record(md);
    MATCH("{\"project\": \"acme\"}");
    MATCH("{\"metadata.project\": \"acme\"}");
    NO_MATCH("{\"project\": \"ACME\"}");
    MATCH("{\"reward\": {\"$gte\": 0.05}}");
    NO_MATCH("{\"reward\": {\"$gt\": 0.5}}");
    MATCH("{\"count\": 3.0}");
    MATCH("{\"count\": {\"$in\": [1, 3.0]}}");
    MATCH("{\"count\": {\"$lte\": 3}}");
    MATCH("{\"flag\": true}");
    NO_MATCH("{\"flag\": false}");
    MATCH("{\"off\": {\"$ne\": true}}");
    MATCH("{\"flag\": {\"$in\": [1, true]}}");
    NO_MATCH("{\"flag\": 1}");
    MATCH("{\"nothing\": null}");
    NO_MATCH("{\"nothing\": {\"$ne\": null}}");
    MATCH("{\"project\": {\"$gt\": \"abc\", \"$lt\": \"acmf\"}}");
    MATCH("{\"big\": 9007199254740993}");
    NO_MATCH("{\"big\": 9007199254740992.0}");

    /* Core names reach core fields; "metadata." reaches the metadata key. */
    MATCH("{\"kind\": \"decision\"}");
    MATCH("{\"metadata.kind\": \"meta-kind\"}");

    /* Type mismatches are no match, never an error. */
    NO_MATCH("{\"n\": {\"$gt\": 4}}");
    NO_MATCH("{\"n\": 5}");
    MATCH("{\"n\": \"5\"}");
    NO_MATCH("{\"project\": {\"$lt\": 100}}");
    NO_MATCH("{\"reward\": {\"$lt\": \"z\"}}");
    NO_MATCH("{\"flag\": {\"$gte\": 0}}");
    NO_MATCH("{\"tags\": {\"$gt\": \"a\"}}");
    MATCH("{\"n\": {\"$ne\": 5}}");

    /* Arrays and objects: exact JSON equality, no element search. */
    MATCH("{\"tags\": [\"a\", \"b\"]}");
    NO_MATCH("{\"tags\": [\"b\", \"a\"]}");
    NO_MATCH("{\"tags\": \"a\"}");
    NO_MATCH("{\"tags\": {\"$in\": [\"a\"]}}");
    MATCH("{\"tags\": {\"$in\": [[\"a\", \"b\"], \"x\"]}}");
    MATCH("{\"nested\": {\"$eq\": {\"depth\": {\"x\": 2.0}, \"lang\": \"c\"}}}");
    NO_MATCH("{\"nested\": {\"$eq\": {\"lang\": \"c\"}}}");
    NO_MATCH("{\"nested\": {\"$eq\": {\"lang\": \"c\", \"depth\": {\"x\": 3}}}}");
    MATCH("{\"nested\": {\"$ne\": {\"lang\": \"c\"}}}");

    /* Dots walk into nested objects; an exact flat key wins. */
    MATCH("{\"nested.lang\": \"c\"}");
    MATCH("{\"metadata.nested.depth.x\": 2}");
    MATCH("{\"nested.depth.x\": {\"$gt\": 1.5}}");
    MATCH("{\"a.b\": \"flat\"}");
    MATCH("{\"metadata.a.b\": \"flat\"}");
    NO_MATCH("{\"a.b\": \"deep\"}");

    /* Missing keys: $ne and $nin match, everything else does not. */
    const char *paths[] = {"absent", "nested.absent", "project.x", "tags.0", "nested.depth.x.y"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        char json[128];
        const char *ops[] = {"$eq", "$gt", "$gte", "$lt", "$lte"};
        for (size_t k = 0; k < sizeof ops / sizeof *ops; k++) {
            snprintf(json, sizeof json, "{\"%s\": {\"%s\": 1}}", paths[i], ops[k]);
            NO_MATCH(json);
        }
        snprintf(json, sizeof json, "{\"%s\": {\"$ne\": 1}}", paths[i]);
        MATCH(json);
        snprintf(json, sizeof json, "{\"%s\": {\"$in\": [1, null]}}", paths[i]);
        NO_MATCH(json);
        snprintf(json, sizeof json, "{\"%s\": {\"$nin\": [1, null]}}", paths[i]);
        MATCH(json);
        snprintf(json, sizeof json, "{\"%s\": null}", paths[i]);
        NO_MATCH(json);
        snprintf(json, sizeof json, "{\"$not\": {\"%s\": 1}}", paths[i]);
        MATCH(json);
    }

    /* No metadata at all, or metadata that is not an object. */
    r.metadata = NULL;
    NO_MATCH("{\"project\": \"acme\"}");
    MATCH("{\"project\": {\"$ne\": \"acme\"}}");
    json_t *arr = json_array();
    r.metadata = arr;
    NO_MATCH("{\"project\": \"acme\"}");
    MATCH("{\"project\": {\"$nin\": [\"acme\"]}}");
    json_decref(arr);
    json_decref(md);
}

static void test_combinations(void) {
    json_t *md = base_metadata();
    filter_record r = base_record(md);
    MATCH("{\"kind\": \"decision\", \"project\": \"acme\", \"importance\": {\"$gt\": 0.5}}");
    NO_MATCH("{\"kind\": \"decision\", \"project\": \"other\"}");
    MATCH("{\"$and\": [{\"kind\": \"decision\"}, {\"reward\": {\"$gte\": 0.05}}]}");
    NO_MATCH("{\"$and\": [{\"kind\": \"decision\"}, {\"reward\": {\"$gte\": 0.6}}]}");
    MATCH("{\"$or\": [{\"kind\": \"plan\"}, {\"reward\": {\"$gte\": 0.05}}]}");
    NO_MATCH("{\"$or\": [{\"kind\": \"plan\"}, {\"reward\": {\"$gte\": 0.6}}]}");
    NO_MATCH("{\"$or\": [{\"kind\": \"plan\"}]}");
    MATCH("{\"$not\": {\"kind\": \"plan\"}}");
    NO_MATCH("{\"$not\": {\"kind\": \"decision\"}}");
    NO_MATCH("{\"$not\": {\"$not\": {\"kind\": \"plan\"}}}");
    MATCH("{\"$and\": [{\"$or\": [{\"tier\": \"long\"}, {\"tier\": \"short\"}]},"
          " {\"$not\": {\"$or\": [{\"project\": \"x\"}, {\"nested.lang\": \"rust\"}]}},"
          " {\"$contains\": \"FOX\"}]}");
    NO_MATCH("{\"$and\": [{\"$or\": [{\"tier\": \"long\"}, {\"tier\": \"short\"}]},"
             " {\"$not\": {\"$or\": [{\"project\": \"x\"}, {\"nested.lang\": \"c\"}]}}]}");
    /* Several keys beside $and/$or are and-ed with them. */
    MATCH("{\"kind\": \"decision\", \"$or\": [{\"count\": 3}, {\"count\": 4}]}");
    NO_MATCH("{\"kind\": \"plan\", \"$or\": [{\"count\": 3}, {\"count\": 4}]}");
    NO_MATCH("{\"$contains\": \"fox\", \"$not\": {\"$contains\": \"DOG\"}}");
    json_decref(md);
}

static void test_contains(void) {
    json_t *md = base_metadata();
    filter_record r = base_record(md);
    MATCH("{\"$contains\": \"quick\"}");
    MATCH("{\"$contains\": \"QUICK BROWN\"}");
    MATCH("{\"$contains\": \"the quick\"}");
    MATCH("{\"$contains\": \"lazy dog\"}");
    MATCH("{\"$contains\": \"\"}");
    NO_MATCH("{\"$contains\": \"lazy dogs\"}");
    NO_MATCH("{\"$contains\": \"cat\"}");
    MATCH("{\"$or\": [{\"$contains\": \"cat\"}, {\"$contains\": \"Fox\"}]}");
    MATCH("{\"$not\": {\"$contains\": \"cat\"}}");
    r.text = "Über CAFÉ qq";
    NO_MATCH("{\"$contains\": \"über café\"}"); /* ASCII folding only */
    NO_MATCH("{\"$contains\": \"Über café\"}"); /* É is not folded to é */
    MATCH("{\"$contains\": \"Über CaFÉ\"}");
    /* Candidates of both cases, interleaved, some failing late. */
    r.text = "xaAaAcAbz";
    MATCH("{\"$contains\": \"ab\"}");
    MATCH("{\"$contains\": \"AAAC\"}");
    NO_MATCH("{\"$contains\": \"abb\"}");
    r.text = "a-A-a-A-ab";
    MATCH("{\"$contains\": \"-aB\"}");
    NO_MATCH("{\"$contains\": \"a-b\"}");
    r.text = "12 ab";
    MATCH("{\"$contains\": \"2 A\"}");
    r.text = "aaab";
    MATCH("{\"$contains\": \"aab\"}");
    NO_MATCH("{\"$contains\": \"aaaab\"}");
    r.text = "";
    NO_MATCH("{\"$contains\": \"a\"}");
    MATCH("{\"$contains\": \"\"}");
    r.text = NULL;
    NO_MATCH("{\"$contains\": \"a\"}");
    json_decref(md);
}

static void test_uses(void) {
    struct {
        const char *json;
        int meta, text;
    } cases[] = {
        {"{\"kind\": \"a\", \"importance\": {\"$gt\": 0.1}}", 0, 0},
        {"{\"project\": \"a\"}", 1, 0},
        {"{\"metadata.kind\": \"a\"}", 1, 0},
        {"{\"$contains\": \"a\"}", 0, 1},
        {"{\"text\": {\"$ne\": \"a\"}}", 0, 1},
        {"{\"$or\": [{\"kind\": \"a\"}, {\"$not\": {\"x.y\": 1}}]}", 1, 0},
        {"{\"$and\": [{\"$contains\": \"q\"}, {\"x\": 1}]}", 1, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        filter *f = NULL;
        CHECK_INT(filter_parse(cases[i].json, strlen(cases[i].json), &f, NULL, 0), 0);
        CHECK_INT(filter_uses_metadata(f), cases[i].meta);
        CHECK_INT(filter_uses_text(f), cases[i].text);
        filter_free(f);
    }
    CHECK_INT(filter_uses_metadata(NULL), 0);
    CHECK_INT(filter_uses_text(NULL), 0);
}

static void test_errors(void) {
    char err[512];
    /* The two messages quoted in the documentation, exactly. */
    CHECK_INT(parse_error("{\"kind\": {\"$regexx\": \"a.*\"}}", err, sizeof err), REMEM_EFILTER);
    CHECK_STR(err, "unknown operator $regexx at $.kind");
    CHECK_INT(parse_error("{\"importance\": {\"$gt\": \"high\"}}", err, sizeof err), REMEM_EFILTER);
    CHECK_STR(err, "importance needs a number, got string \"high\" at $.importance.$gt");

    EXPECT_ERROR("{\"kind\": }", "malformed JSON", "line 1, column 10");
    EXPECT_ERROR("{\n  \"kind\": \"a\",\n  oops\n}", "malformed JSON", "line 3");
    EXPECT_ERROR("{\"kind\": \"a\"", "malformed JSON", "line 1");
    EXPECT_ERROR("{\"kind\": \"a\", \"kind\": \"b\"}", "duplicate", "line 1");
    EXPECT_ERROR("[{\"kind\": \"a\"}]", "must be a JSON object, got an array", "at $");
    EXPECT_ERROR("\"kind\"", "must be a JSON object, got string \"kind\"", "at $");
    EXPECT_ERROR("null", "must be a JSON object, got null", "at $");
    EXPECT_ERROR("42", "must be a JSON object, got number 42", "at $");

    EXPECT_ERROR("{\"$regexx\": 1}", "unknown operator $regexx", "at $");
    EXPECT_ERROR("{\"$and\": [{\"x\": {\"$like\": 1}}]}", "unknown operator $like",
                 "at $.$and[0].x");
    EXPECT_ERROR("{\"kind\": {\"$contains\": \"a\"}}",
                 "unknown operator $contains for a field ($contains searches the text",
                 "at $.kind");
    EXPECT_ERROR("{\"kind\": {\"$or\": [\"a\"]}}", "unknown operator $or for a field", "at $.kind");
    EXPECT_ERROR("{\"my key\": {\"$foo\": 1}}", "unknown operator $foo", "at $[\"my key\"]");
    EXPECT_ERROR("{\"q\\\"k\\n\": {\"$foo\": 1}}", "unknown operator $foo", "at $[\"q\\\"k?\"]");

    EXPECT_ERROR("{\"$and\": {\"kind\": \"a\"}}",
                 "$and needs a non-empty array of filters, got an object", "at $.$and");
    EXPECT_ERROR("{\"$or\": []}", "$or needs a non-empty array of filters, got an empty array",
                 "at $.$or");
    EXPECT_ERROR("{\"$or\": \"kind\"}", "$or needs a non-empty array", "at $.$or");
    EXPECT_ERROR("{\"$and\": [{\"kind\": \"a\"}, \"b\"]}",
                 "$and items must be filter objects, got string \"b\"", "at $.$and[1]");
    EXPECT_ERROR("{\"$not\": [{\"kind\": \"a\"}]}", "$not needs a filter object, got an array",
                 "at $.$not");
    EXPECT_ERROR("{\"$contains\": 5}", "$contains needs a string, got number 5", "at $.$contains");

    EXPECT_ERROR("{\"kind\": {\"$in\": \"decision\"}}",
                 "$in needs an array, got string \"decision\"", "at $.kind.$in");
    EXPECT_ERROR("{\"x\": {\"$nin\": 3}}", "$nin needs an array, got number 3", "at $.x.$nin");
    EXPECT_ERROR("{\"kind\": {\"$in\": [\"a\", 3]}}", "kind needs a string, got number 3",
                 "at $.kind.$in[1]");
    EXPECT_ERROR("{\"kind\": 5}", "kind needs a string, got number 5", "at $.kind");
    EXPECT_ERROR("{\"tier\": true}", "tier needs a string, got true", "at $.tier");
    EXPECT_ERROR("{\"id\": null}", "id needs a string, got null", "at $.id");
    EXPECT_ERROR("{\"importance\": false}", "importance needs a number, got false",
                 "at $.importance");
    EXPECT_ERROR("{\"access_count\": {\"$gte\": \"3\"}}", "access_count needs a number",
                 "at $.access_count.$gte");
    EXPECT_ERROR("{\"created_at\": {\"$gt\": true}}",
                 "created_at needs milliseconds or an ISO 8601 date", "at $.created_at.$gt");
    EXPECT_ERROR("{\"x\": {\"$gt\": {\"a\": 1}}}", "$gt needs a number or a string, got an object",
                 "at $.x.$gt");
    EXPECT_ERROR("{\"x\": {\"$lte\": [1]}}", "$lte needs a number or a string, got an array",
                 "at $.x.$lte");
    EXPECT_ERROR("{\"x\": {\"$lt\": null}}", "$lt needs a number or a string, got null",
                 "at $.x.$lt");
    EXPECT_ERROR("{\"x\": {\"$gte\": true}}", "$gte needs a number or a string, got true",
                 "at $.x.$gte");

    const char *bad_dates[] = {
        "2023-13-01",
        "2023-02-29",
        "2023-04-31",
        "2023-00-10",
        "2023-05-00",
        "2023-05-08T24:00",
        "2023-05-08T13:60",
        "2023-05-08T13:56:60",
        "yesterday",
        "2023-5-8",
        "2023-05-08T",
        "2023-05-08T13",
        "2023-05-08T13:56:00+2",
        "2023-05-08T13:56:00+02:",
        "2023-05-08T13:56:00.Z",
        "2023-05-08Z",
        "2023-05-08T13:56:00Zjunk",
        "",
        "2023-05-08T13:56:00+24:00",
        "2023-05",
    };
    for (size_t i = 0; i < sizeof bad_dates / sizeof *bad_dates; i++) {
        char json[128];
        snprintf(json, sizeof json, "{\"created_at\": {\"$gte\": \"%s\"}}", bad_dates[i]);
        EXPECT_ERROR(json, "created_at: \"", "is not a valid time (");
    }
    /* remem's one time parser words it (src/util/time.c), the same as an
     * import of the same date does. */
    EXPECT_ERROR("{\"updated_at\": {\"$in\": [1, \"2023-02-30\"]}}",
                 "updated_at: \"2023-02-30\" is not a valid time (February 2023 has 28 days)",
                 "at $.updated_at.$in[1]");

    EXPECT_ERROR("{\"kind\": {}}", "empty operator object", "at $.kind");
    EXPECT_ERROR("{\"x\": {\"project\": \"acme\"}}",
                 "expected an operator such as $eq or $gt, got key \"project\"", "at $.x");
    EXPECT_ERROR("{\"metadata\": {\"$eq\": 1}}", "metadata is not a field", "at $.metadata");
    EXPECT_ERROR("{\"a..b\": 1}", "empty key between dots", "at $.a..b");
    EXPECT_ERROR("{\"metadata.\": 1}", "empty key between dots", "at $.metadata.");
    EXPECT_ERROR("{\".a\": 1}", "empty key between dots", "at $..a");
    EXPECT_ERROR("{\"\": 1}", "empty field name", "at $[\"\"]");
    /* Only the first error is reported, in document order. */
    EXPECT_ERROR("{\"kind\": \"a\", \"x\": {\"$bad\": 1}, \"y\": {\"$worse\": 1}}",
                 "unknown operator $bad", "at $.x");
}

/* {"$not": ... levels objects deep ... {"kind": "a"}}, and the same depth
 * reached inside an operand. */
static void test_depth_limit(void) {
    char json[2048], err[512];
    for (int levels = FILTER_MAX_DEPTH - 1; levels <= FILTER_MAX_DEPTH + 1; levels++) {
        size_t o = 0;
        for (int i = 0; i < levels - 1; i++) o += (size_t)sprintf(json + o, "{\"$not\": ");
        o += (size_t)sprintf(json + o, "{\"kind\": \"a\"}");
        for (int i = 0; i < levels - 1; i++) json[o++] = '}';
        json[o] = 0;
        filter *f = NULL;
        int rc = filter_parse(json, o, &f, err, sizeof err);
        if (levels <= FILTER_MAX_DEPTH) {
            CHECK_INT(rc, 0);
            filter_record r = {.kind = levels % 2 ? "a" : "b"};
            CHECK_INT(filter_match(f, &r), 1);
            filter_free(f);
        } else {
            CHECK_INT(rc, REMEM_EFILTER);
            CHECK_HAS(err, "filter nests deeper than 32 levels at $.$not.$not");
            CHECK(f == NULL);
        }
    }
    /* Operand nesting counts too: {"x": {"$eq": [[...]]}}. */
    for (int arrays = FILTER_MAX_DEPTH - 2; arrays <= FILTER_MAX_DEPTH - 1; arrays++) {
        size_t o = (size_t)sprintf(json, "{\"x\": {\"$eq\": ");
        for (int i = 0; i < arrays; i++) json[o++] = '[';
        for (int i = 0; i < arrays; i++) json[o++] = ']';
        o += (size_t)sprintf(json + o, "}}");
        filter *f = NULL;
        int rc = filter_parse(json, o, &f, err, sizeof err);
        CHECK_INT(rc, arrays <= FILTER_MAX_DEPTH - 2 ? 0 : REMEM_EFILTER);
        if (rc) CHECK_HAS(err, "at $.x.$eq[0][0]");
        filter_free(f);
    }
    /* Very deep input stops here (1500 levels) or in the JSON reader (5000),
     * never by exhausting the stack. */
    int depths[] = {1500, 5000};
    for (size_t d = 0; d < 2; d++) {
        char *deep = malloc((size_t)depths[d] * 6 + 16);
        size_t o = 0;
        for (int i = 0; i < depths[d]; i++) o += (size_t)sprintf(deep + o, "{\"a\":");
        deep[o++] = '1';
        for (int i = 0; i < depths[d]; i++) deep[o++] = '}';
        deep[o] = 0;
        CHECK_INT(parse_error(deep, err, sizeof err), REMEM_EFILTER);
        CHECK_HAS(err, d == 0 ? "filter nests deeper than 32 levels at $.a.a.a" : "malformed JSON");
        free(deep);
    }
}

static void test_error_buffer(void) {
    const char *json = "{\"kind\": {\"$regexx\": 1}}";
    filter *f = NULL;
    CHECK_INT(filter_parse(json, strlen(json), &f, NULL, 0), REMEM_EFILTER);
    CHECK(f == NULL);
    char small[8];
    memset(small, 'x', sizeof small);
    CHECK_INT(filter_parse(json, strlen(json), &f, small, sizeof small), REMEM_EFILTER);
    CHECK(memchr(small, 0, sizeof small) != NULL);
    CHECK_INT(strncmp(small, "unknown", 7), 0);
    /* A path as deep as the limit allows is shown whole. */
    char big[8192], err[600];
    size_t o = 0;
    for (int i = 0; i < 14; i++)
        o += (size_t)sprintf(big + o, "{\"$and\": [{\"key_%02d\": 1}, ", i);
    o += (size_t)sprintf(big + o, "{\"k\": {\"$oops\": 1}}");
    for (int i = 0; i < 14; i++) o += (size_t)sprintf(big + o, "]}");
    CHECK_INT(filter_parse(big, o, &f, err, sizeof err), REMEM_EFILTER);
    char want[256] = "unknown operator $oops at $";
    for (int i = 0; i < 14; i++) strcat(want, ".$and[1]");
    strcat(want, ".k");
    CHECK_STR(err, want);
    /* A longer one (long keys in a deep operand) is cut with "...". */
    o = (size_t)sprintf(big, "{\"x\": {\"$eq\": ");
    for (int i = 0; i < 40; i++)
        o += (size_t)sprintf(big + o, "{\"a_key_with_a_rather_long_name_%02d\": ", i);
    big[o++] = '1';
    for (int i = 0; i < 42; i++) big[o++] = '}';
    big[o] = 0;
    CHECK_INT(filter_parse(big, o, &f, err, sizeof err), REMEM_EFILTER);
    CHECK_HAS(err,
              "filter nests deeper than 32 levels at $.x.$eq.a_key_with_a_rather_long_name_00.");
    CHECK_HAS(err, "...");
    CHECK(strlen(err) < 256 + 60);
}

/* ------------------------------------------------------------------ */
/* Randomized check against an independent evaluator.                 */
/* ------------------------------------------------------------------ */

enum { V_MISSING, V_NUM, V_STR, V_BOOL };
typedef struct {
    int type;
    double num; /* small values only: exact in a double */
    int is_int;
    const char *str;
    int boolean;
} value;

enum { G_CMP, G_AND, G_OR, G_NOT, G_CONTAINS };
enum { OPX_EQ, OPX_NE, OPX_GT, OPX_GTE, OPX_LT, OPX_LTE, OPX_IN, OPX_NIN };
static const char *op_names[] = {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"};

/* Fields of the generated records: 0 kind, 1 importance, 2 access_count,
 * 3 created_at, 4 metadata "m", 5 metadata "o.p" (nested). */
#define N_FIELDS 6
static const char *field_names[N_FIELDS] = {"kind",       "importance", "access_count",
                                            "created_at", "m",          "o.p"};

typedef struct gnode {
    int type, field, op;
    value operand[3];
    int n_operands; /* for $in/$nin */
    const char *needle;
    struct gnode *kids[3];
    int n_kids;
} gnode;

static const char *strings[] = {"a", "b", "c", "ab"};
static const char *words[] = {"Alpha", "beta", "GAMMA", "delta"};
static const char *needles[] = {"alp", "BETA", "gam", "a d", "x", "ta g"};

static value random_value(int field, int allow_bool) {
    value v = {0};
    int pick = rand() % (field >= 4 ? (allow_bool ? 4 : 3) : 1);
    if (field == 0)
        pick = 1; /* kind: strings */
    else if (field <= 3)
        pick = 0; /* numbers */
    switch (pick) {
    case 0:
        v.type = V_NUM;
        v.is_int = field == 2 || field == 3 || rand() % 2;
        v.num = v.is_int ? rand() % 4 : (rand() % 8) * 0.5;
        break;
    case 1:
        v.type = V_STR;
        v.str = strings[rand() % 4];
        break;
    case 2:
        v.type = V_NUM;
        v.is_int = 1;
        v.num = rand() % 3;
        break;
    default:
        v.type = V_BOOL;
        v.boolean = rand() % 2;
        break;
    }
    return v;
}

static gnode *random_filter(int depth) {
    gnode *g = calloc(1, sizeof *g);
    int roll = depth >= 3 ? 0 : rand() % 10;
    if (roll >= 8) {
        g->type = roll == 8 ? (rand() % 2 ? G_AND : G_OR) : G_NOT;
        g->n_kids = g->type == G_NOT ? 1 : 1 + rand() % 3;
        for (int i = 0; i < g->n_kids; i++) g->kids[i] = random_filter(depth + 1);
    } else if (roll == 7) {
        g->type = G_CONTAINS;
        g->needle = needles[rand() % 6];
    } else {
        g->type = G_CMP;
        g->field = rand() % N_FIELDS;
        g->op = rand() % 8;
        int ordering = g->op >= OPX_GT && g->op <= OPX_LTE;
        if (g->op == OPX_IN || g->op == OPX_NIN) {
            g->n_operands = rand() % 4;
            for (int i = 0; i < g->n_operands; i++) g->operand[i] = random_value(g->field, 1);
        } else {
            g->operand[0] = random_value(g->field, !ordering);
        }
    }
    return g;
}

static void gnode_free(gnode *g) {
    if (!g) return;
    for (int i = 0; i < g->n_kids; i++) gnode_free(g->kids[i]);
    free(g);
}

static int append_value(char *buf, size_t cap, const value *v) {
    switch (v->type) {
    case V_NUM:
        return v->is_int ? snprintf(buf, cap, "%d", (int)v->num)
                         : snprintf(buf, cap, "%.1f", v->num);
    case V_STR: return snprintf(buf, cap, "\"%s\"", v->str);
    default: return snprintf(buf, cap, v->boolean ? "true" : "false");
    }
}

/* Writes g as JSON; returns the length. Uses the explicit operator form or
 * the shorthand for $eq at random, to exercise both. */
static size_t write_filter(char *buf, size_t cap, const gnode *g) {
    size_t o = 0;
#define PUT(...) (o += (size_t)snprintf(buf + o, cap - o, __VA_ARGS__))
    switch (g->type) {
    case G_AND:
    case G_OR:
        PUT("{\"%s\": [", g->type == G_AND ? "$and" : "$or");
        for (int i = 0; i < g->n_kids; i++) {
            if (i) PUT(", ");
            o += write_filter(buf + o, cap - o, g->kids[i]);
        }
        PUT("]}");
        break;
    case G_NOT:
        PUT("{\"$not\": ");
        o += write_filter(buf + o, cap - o, g->kids[0]);
        PUT("}");
        break;
    case G_CONTAINS: PUT("{\"$contains\": \"%s\"}", g->needle); break;
    default:
        PUT("{\"%s\": ", field_names[g->field]);
        if (g->op == OPX_EQ && rand() % 2) {
            o += (size_t)append_value(buf + o, cap - o, &g->operand[0]);
            PUT("}");
            break;
        }
        PUT("{\"%s\": ", op_names[g->op]);
        if (g->op == OPX_IN || g->op == OPX_NIN) {
            PUT("[");
            for (int i = 0; i < g->n_operands; i++) {
                if (i) PUT(", ");
                o += (size_t)append_value(buf + o, cap - o, &g->operand[i]);
            }
            PUT("]");
        } else {
            o += (size_t)append_value(buf + o, cap - o, &g->operand[0]);
        }
        PUT("}}");
    }
#undef PUT
    return o;
}

typedef struct {
    value fields[N_FIELDS];
    char text[64];
} grecord;

static int same_value(const value *a, const value *b) {
    if (a->type != b->type) return 0;
    if (a->type == V_NUM) return a->num == b->num;
    if (a->type == V_STR) return strcmp(a->str, b->str) == 0;
    return a->boolean == b->boolean;
}

static int reference_cmp(const grecord *r, const gnode *g) {
    const value *v = &r->fields[g->field];
    if (v->type == V_MISSING) return g->op == OPX_NE || g->op == OPX_NIN;
    int in = 0;
    switch (g->op) {
    case OPX_EQ: return same_value(v, &g->operand[0]);
    case OPX_NE: return !same_value(v, &g->operand[0]);
    case OPX_IN:
    case OPX_NIN:
        for (int i = 0; i < g->n_operands; i++) in |= same_value(v, &g->operand[i]);
        return g->op == OPX_IN ? in : !in;
    default: break;
    }
    const value *w = &g->operand[0];
    if (v->type != w->type || v->type == V_BOOL) return 0;
    double c = v->type == V_NUM ? v->num - w->num : (double)strcmp(v->str, w->str);
    switch (g->op) {
    case OPX_GT: return c > 0;
    case OPX_GTE: return c >= 0;
    case OPX_LT: return c < 0;
    default: return c <= 0;
    }
}

static int reference_match(const grecord *r, const gnode *g) {
    switch (g->type) {
    case G_AND:
        for (int i = 0; i < g->n_kids; i++)
            if (!reference_match(r, g->kids[i])) return 0;
        return 1;
    case G_OR:
        for (int i = 0; i < g->n_kids; i++)
            if (reference_match(r, g->kids[i])) return 1;
        return 0;
    case G_NOT: return !reference_match(r, g->kids[0]);
    case G_CONTAINS: {
        char lower_text[64], lower_needle[16];
        size_t i;
        for (i = 0; r->text[i]; i++) lower_text[i] = (char)tolower((unsigned char)r->text[i]);
        lower_text[i] = 0;
        for (i = 0; g->needle[i]; i++) lower_needle[i] = (char)tolower((unsigned char)g->needle[i]);
        lower_needle[i] = 0;
        return strstr(lower_text, lower_needle) != NULL;
    }
    default: return reference_cmp(r, g);
    }
}

static json_t *json_of_value(const value *v) {
    switch (v->type) {
    case V_NUM: return v->is_int ? json_integer((json_int_t)v->num) : json_real(v->num);
    case V_STR: return json_string(v->str);
    default: return json_boolean(v->boolean);
    }
}

static void random_record(grecord *g, filter_record *r, json_t **md) {
    memset(g, 0, sizeof *g);
    for (int f = 0; f < N_FIELDS; f++) {
        g->fields[f] = random_value(f, 1);
        if (f >= 4 && rand() % 5 == 0) g->fields[f].type = V_MISSING;
    }
    size_t o = 0;
    for (int i = 0; i < 3; i++)
        o += (size_t)snprintf(g->text + o, sizeof g->text - o, "%s%s", i ? " " : "",
                              words[rand() % 4]);
    *md = json_object();
    if (g->fields[4].type != V_MISSING) json_object_set_new(*md, "m", json_of_value(&g->fields[4]));
    if (g->fields[5].type != V_MISSING) {
        json_t *inner = json_object();
        json_object_set_new(inner, "p", json_of_value(&g->fields[5]));
        json_object_set_new(*md, "o", inner);
    } else if (rand() % 2) {
        json_object_set_new(*md, "o", json_string("not an object"));
    }
    memset(r, 0, sizeof *r);
    r->kind = g->fields[0].str;
    r->importance = g->fields[1].num;
    r->access_count = (int64_t)g->fields[2].num;
    r->created_at = (int64_t)g->fields[3].num;
    r->text = g->text;
    r->metadata = *md;
}

static void test_randomized(void) {
    srand(12345);
    enum { FILTERS = 1500, RECORDS = 40 };
    grecord grecs[RECORDS];
    filter_record recs[RECORDS];
    json_t *mds[RECORDS];
    for (int i = 0; i < RECORDS; i++) random_record(&grecs[i], &recs[i], &mds[i]);
    int mismatches = 0, matched = 0, total = 0;
    char json[8192], err[256];
    for (int i = 0; i < FILTERS && mismatches < 5; i++) {
        gnode *g = random_filter(0);
        size_t len = write_filter(json, sizeof json, g);
        filter *f = NULL;
        int rc = filter_parse(json, len, &f, err, sizeof err);
        if (rc) {
            fprintf(stderr, "  generated filter rejected: %s: %s\n", json, err);
            CHECK_INT(rc, 0);
            mismatches++;
        }
        for (int k = 0; k < RECORDS && !rc; k++) {
            int want = reference_match(&grecs[k], g), got = filter_match(f, &recs[k]);
            total++;
            matched += got;
            if (want != got && mismatches++ < 5) {
                fprintf(stderr, "  filter %s on record %d: got %d, expected %d\n", json, k, got,
                        want);
                CHECK_INT(got, want);
            }
        }
        filter_free(f);
        gnode_free(g);
    }
    /* The generator must produce both outcomes often, or it tests little. */
    CHECK(matched > total / 10);
    CHECK(matched < total - total / 10);
    for (int i = 0; i < RECORDS; i++) json_decref(mds[i]);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_match_all);
    RUN(test_input_not_nul_terminated);
    RUN(test_core_strings);
    RUN(test_core_numbers);
    RUN(test_times);
    RUN(test_metadata);
    RUN(test_combinations);
    RUN(test_contains);
    RUN(test_uses);
    RUN(test_errors);
    RUN(test_depth_limit);
    RUN(test_error_buffer);
    RUN(test_randomized);
    return TEST_EXIT();
}
