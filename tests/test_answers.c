/*
 * test_answers.c: the readers of the model's answers to the lifecycle's
 * prompts (src/lifecycle/answers.c), called directly. Here: a plan. Small
 * local models often answer "write a plan" with a numbered list in prose
 * instead of the JSON asked for; a list of steps is a plan, so it is read
 * as one, while an answer with no step at all is still refused.
 */
#include <stdlib.h>
#include <string.h>

#include "lifecycle/answers.h"
#include "test.h"

static char *plan(const char *answer, char *err, size_t cap) {
    err[0] = 0;
    return answer_plan("open the forge", answer, err, cap);
}

static void test_plan_json(void) {
    char err[256];
    char *p = plan("{\"plan\": [\"light the fire\", \"sweep the floor\"]}", err, sizeof err);
    CHECK_STR(p, "Plan for: open the forge\n1. light the fire\n2. sweep the floor");
    free(p);
}

static void test_plan_numbered_prose(void) {
    char err[256];
    char *p = plan("Sure! Here is a plan:\n\n1. Light the fire.\n2) Sweep the floor\n"
                   "3. **Greet** the first customer\n\nGood luck!",
                   err, sizeof err);
    CHECK_STR(p, "Plan for: open the forge\n1. Light the fire.\n2. Sweep the floor\n"
                 "3. **Greet** the first customer");
    free(p);
    p = plan("Step 1: light the fire\r\nStep 2: open the shutters\r\n", err, sizeof err);
    CHECK_STR(p, "Plan for: open the forge\n1. light the fire\n2. open the shutters");
    free(p);
    p = plan("- light the fire\n* open the shutters\n\xe2\x80\xa2 ring the bell", err, sizeof err);
    CHECK_STR(p, "Plan for: open the forge\n1. light the fire\n2. open the shutters\n3. ring the bell");
    free(p);
}

static void test_plan_no_steps(void) {
    char err[256];
    char *p = plan("I would rather not plan today.", err, sizeof err);
    CHECK(p == NULL);
    CHECK(strstr(err, "list of steps") != NULL);
    free(p);
    /* a number that starts a sentence is not a list item */
    p = plan("2024 was a good year for the forge.", err, sizeof err);
    CHECK(p == NULL);
    free(p);
    p = plan("{\"thoughts\": \"none\"}", err, sizeof err);
    CHECK(p == NULL);
    free(p);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_plan_json);
    RUN(test_plan_numbered_prose);
    RUN(test_plan_no_steps);
    return TEST_EXIT();
}
