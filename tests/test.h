/*
 * test.h: the few macros remem's C tests are written with. Each test file is
 * its own program: main() calls RUN(fn) for each test function and returns
 * TEST_EXIT(). A failed CHECK prints file:line and the expression, marks the
 * current test failed and goes on, so one run shows every failure.
 * Run one file alone: build/tests/test_NAME [test-name-substring].
 *
 * SKIP(why) ends the current test as skipped (never passed): it prints
 * "SKIP: test_fn: why", which tests/run.sh counts as one skip. When every
 * test that ran was skipped, TEST_EXIT() returns 77, the runner's "skipped
 * whole" status. Skip only for what the machine lacks (weights, a tool),
 * never to hide a failure.
 */
#ifndef REMEM_TEST_H
#define REMEM_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test__failed_checks, test__tests, test__failed_tests, test__cur_failed;
static int test__skipped_tests, test__cur_skipped;
static const char *test__only, *test__cur_name;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            test__failed_checks++;                                                     \
            test__cur_failed = 1;                                                      \
        }                                                                              \
    } while (0)

#define CHECK_INT(a, b)                                                                           \
    do {                                                                                          \
        long long test__a = (long long)(a), test__b = (long long)(b);                             \
        if (test__a != test__b) {                                                                 \
            fprintf(stderr, "  %s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a, \
                    test__a, #b, test__b);                                                        \
            test__failed_checks++;                                                                \
            test__cur_failed = 1;                                                                 \
        }                                                                                         \
    } while (0)

#define CHECK_STR(a, b)                                                                         \
    do {                                                                                        \
        const char *test__a = (a), *test__b = (b);                                              \
        if (!test__a || !test__b || strcmp(test__a, test__b) != 0) {                            \
            fprintf(stderr, "  %s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, \
                    test__a ? test__a : "(null)", test__b ? test__b : "(null)");                \
            test__failed_checks++;                                                              \
            test__cur_failed = 1;                                                               \
        }                                                                                       \
    } while (0)

#define CHECK_NEAR(a, b, eps)                                                                    \
    do {                                                                                         \
        double test__a = (a), test__b = (b);                                                     \
        if (!(fabs(test__a - test__b) <= (eps))) {                                               \
            fprintf(stderr, "  %s:%d: %s == %.9g, expected %.9g (eps %g)\n", __FILE__, __LINE__, \
                    #a, test__a, test__b, (double)(eps));                                        \
            test__failed_checks++;                                                               \
            test__cur_failed = 1;                                                                \
        }                                                                                        \
    } while (0)

/* Contains: haystack has needle. */
#define CHECK_HAS(hay, needle)                                                               \
    do {                                                                                     \
        const char *test__h = (hay), *test__n = (needle);                                    \
        if (!test__h || !strstr(test__h, test__n)) {                                         \
            fprintf(stderr, "  %s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, \
                    test__h ? test__h : "(null)", test__n);                                  \
            test__failed_checks++;                                                           \
            test__cur_failed = 1;                                                            \
        }                                                                                    \
    } while (0)

/* Skip the rest of the current test function (a statement; returns). */
#define SKIP(why)                                                               \
    do {                                                                        \
        fprintf(stderr, "SKIP: %s: %s\n", test__cur_name, (const char *)(why)); \
        test__cur_skipped = 1;                                                  \
        return;                                                                 \
    } while (0)

#define TEST_INIT(argc, argv) (test__only = (argc) > 1 ? (argv)[1] : NULL)

#define RUN(fn)                                            \
    do {                                                   \
        if (test__only && !strstr(#fn, test__only)) break; \
        test__cur_failed = test__cur_skipped = 0;          \
        test__cur_name = #fn;                              \
        test__tests++;                                     \
        fn();                                              \
        if (test__cur_failed)                              \
            test__failed_tests++;                          \
        else if (test__cur_skipped)                        \
            test__skipped_tests++;                         \
        fprintf(stderr, "%s %s\n",                         \
                test__cur_failed    ? "FAIL"               \
                : test__cur_skipped ? "skip"               \
                                    : "ok  ",              \
                #fn);                                      \
    } while (0)

/* 1 when a test failed; 77 when every test that ran was skipped; else 0. */
#define TEST_EXIT()                                                                        \
    (fprintf(stderr, "%d tests, %d failed, %d skipped\n", test__tests, test__failed_tests, \
             test__skipped_tests),                                                         \
     test__failed_tests                                      ? 1                           \
     : test__tests > 0 && test__skipped_tests == test__tests ? 77                          \
                                                             : 0)

#endif
