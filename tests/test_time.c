/*
 * test_time.c: remem's one time parser (src/util/time.c), table-driven:
 * every accepted form with the milliseconds it must give (computed by hand
 * or by `date -u -d ... +%s`), every refused form with the reason the
 * message must carry, and the paths that use it (remem_parse_time, a
 * JSONL line, a filter) giving the same message for the same bad date.
 */
#include <stdint.h>

#include "remem.h"
#include "test.h"
#include "util/time.h"

static const struct {
    const char *in;
    int64_t ms;
} valid[] = {
    {"1970-01-01", 0},
    {"2023-05-08", 1683504000000},
    {"2023-05-08T13:56:00Z", 1683554160000},
    {"2023-05-08t13:56:00z", 1683554160000},
    {"2023-05-08 13:56", 1683554160000},
    {"2023-05-08T13:56:07.25Z", 1683554167250},
    {"2023-05-08T13:56:07,250", 1683554167250},
    {"2023-05-08T13:56:07.123456789Z", 1683554167123}, /* digits past ms dropped */
    {"2023-05-08T15:56:00+02:00", 1683554160000},
    {"2023-05-08T15:56:00+0200", 1683554160000},
    {"2023-05-08T15:56:00+02", 1683554160000},
    {"2023-05-08T08:26:00-05:30", 1683554160000},
    {"2024-02-29", 1709164800000}, /* leap year */
    {"2000-02-29", 951782400000},  /* divisible by 400: leap */
    {"1969-12-31T23:59:59.999Z", -1},
    {"1900-03-01", -2203891200000},
    {"2023-12-31T23:59:59Z", 1704067199000},
    {"1683554160000", 1683554160000}, /* an integer of milliseconds */
    {"-5", -5},
    {"0", 0},
};

static const struct {
    const char *in;
    const char *why; /* a piece of the reason */
} invalid[] = {
    {"2023-02-31", "February 2023 has 28 days"},
    {"2023-02-29", "February 2023 has 28 days"},
    {"1900-02-29", "February 1900 has 28 days"}, /* divisible by 100, not 400 */
    {"2024-02-30", "February 2024 has 29 days"},
    {"2023-04-31", "April 2023 has 30 days"},
    {"2023-13-01", "month 13 is not in 1..12"},
    {"2023-00-10", "month 0 is not in 1..12"},
    {"2023-05-00", "day 0 is not in 1..31"},
    {"2023-05-08T25:00:00Z", "hour 25 is not in 0..23"},
    {"2023-05-08T24:00", "hour 24 is not in 0..23"},
    {"2023-05-08T12:60", "minute 60 is not in 0..59"},
    {"2023-05-08T12:00:60Z", "second 60 is not in 0..59"},
    {"2023-05-08T12:00:00+24:00", "zone offset 24:00"},
    {"2023-05-08T12:00:00+02:60", "zone offset 02:60"},
    {"2023-05-08T12:00:00.Z", "a fraction needs digits"},
    {"2023-05-08T12", "HH:MM"},
    {"2023-05-08T12:00:0", "seconds must be two digits"},
    {"2023-5-8", "ISO 8601"},
    {"23-05-08", "ISO 8601"},
    {"2023-05-08X", "unexpected \"X\""},
    {"2023-05-08T12:00:00Zjunk", "unexpected \"junk\""},
    {"yesterday", "ISO 8601"},
    {"", "empty"},
    {"12.5", "ISO 8601"},
    {"99999999999999999999", "out of range"},
    {"-", "ISO 8601"},
    {"now ", "ISO 8601"},
};

static void test_valid_forms(void) {
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) {
        int64_t ms = 42;
        char why[160] = "unset";
        int rc = util_parse_time_why(valid[i].in, &ms, why, sizeof why);
        if (rc != 0) fprintf(stderr, "  refused \"%s\": %s\n", valid[i].in, why);
        CHECK_INT(rc, 0);
        if (ms != valid[i].ms) fprintf(stderr, "  for \"%s\"\n", valid[i].in);
        CHECK_INT(ms, valid[i].ms);
        /* the public call agrees */
        int64_t pub = 42;
        CHECK_INT(remem_parse_time(valid[i].in, &pub), REMEM_OK);
        CHECK_INT(pub, valid[i].ms);
    }
}

static void test_now(void) {
    int64_t before = util_now_ms(), ms = 0, after;
    CHECK_INT(util_parse_time("now", &ms), 0);
    after = util_now_ms();
    CHECK(ms >= before && ms <= after);
}

static void test_invalid_forms(void) {
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        int64_t ms = 42;
        char why[160] = "";
        int rc = util_parse_time_why(invalid[i].in, &ms, why, sizeof why);
        if (rc == 0) fprintf(stderr, "  accepted \"%s\"\n", invalid[i].in);
        CHECK_INT(rc, -1);
        CHECK_INT(ms, 42); /* untouched */
        CHECK_HAS(why, invalid[i].why);
        CHECK_INT(remem_parse_time(invalid[i].in, &ms), REMEM_EPARSE);
    }
    int64_t ms;
    CHECK_INT(util_parse_time(NULL, &ms), -1);
}

static void test_field_message(void) {
    char err[256];
    int64_t ms;
    CHECK_INT(util_parse_time_field("created_at", "2023-02-31", &ms, err, sizeof err), -1);
    CHECK_STR(err, "created_at: \"2023-02-31\" is not a valid time (February 2023 has 28 days)");
    /* A long value is cut, the message stays one line of bounded length. */
    char big[300];
    memset(big, '9', sizeof big - 1);
    big[0] = 'x';
    big[sizeof big - 1] = 0;
    CHECK_INT(util_parse_time_field("now", big, &ms, err, sizeof err), -1);
    CHECK(strlen(err) < 200);
    CHECK_HAS(err, "...\" is not a valid time");
    /* the public form gives the same message */
    char pub[256];
    CHECK_INT(remem_parse_time_field("created_at", "2023-02-31", &ms, pub, sizeof pub),
              REMEM_EPARSE);
    CHECK_STR(pub, "created_at: \"2023-02-31\" is not a valid time (February 2023 has 28 days)");
}

/* The import path and the filter path word a bad date the same way. */
static void test_same_message_on_every_path(void) {
    remem *db = NULL;
    CHECK_INT(remem_open(":memory:", NULL, &db), REMEM_OK);
    const char *want = "created_at: \"2023-02-31\" is not a valid time (February 2023 has 28 days)";
    remem_memory m;
    remem_memory_init(&m);
    remem_line *h = NULL;
    const char *line = "{\"ns\":\"a\",\"text\":\"x\",\"created_at\":\"2023-02-31\"}";
    CHECK_INT(remem_parse_line(db, line, strlen(line), NULL, &m, &h), REMEM_EPARSE);
    CHECK(h == NULL);
    CHECK_STR(remem_errmsg(db), want);

    remem_memory w;
    remem_memory_init(&w);
    w.ns = "a";
    w.text = "one memory";
    CHECK_INT(remem_add(db, &w, NULL, 0, NULL), REMEM_OK);
    remem_query q;
    remem_query_init(&q);
    const char *ns[] = {"a"};
    q.namespaces = ns;
    q.n_namespaces = 1;
    q.text = "memory";
    q.filter = "{\"created_at\":{\"$gt\":\"2023-02-31\"}}";
    remem_result *r = NULL;
    CHECK_INT(remem_recall(db, &q, &r), REMEM_EFILTER);
    CHECK_HAS(remem_errmsg(db), want);
    remem_result_free(r);

    /* and a valid leap day passes both */
    q.filter = "{\"created_at\":{\"$gt\":\"2024-02-29\"}}";
    CHECK_INT(remem_recall(db, &q, &r), REMEM_OK);
    remem_result_free(r);
    remem_close(db);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_valid_forms);
    RUN(test_now);
    RUN(test_invalid_forms);
    RUN(test_field_message);
    RUN(test_same_message_on_every_path);
    return TEST_EXIT();
}
