/*
 * op_call.h: how the C tests of operations call them: remem_call with a
 * JSON text, the answer parsed. Include after test.h (call_ok checks).
 */
#ifndef REMEM_TEST_OP_CALL_H
#define REMEM_TEST_OP_CALL_H

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include "remem.h"

/* The answer (NULL on failure); *rc (may be NULL) the status. */
static inline json_t *call(remem *db, const char *op, const char *args, int *rc) {
    char *out = NULL;
    int r = remem_call(db, op, args, strlen(args), &out);
    if (rc) *rc = r;
    json_t *j = out ? json_loads(out, 0, NULL) : NULL;
    remem_free(out);
    return j;
}

/* The answer of a call that must succeed (a failed CHECK and the message
 * otherwise). */
static inline json_t *call_ok(remem *db, const char *op, const char *args) {
    int rc = 0;
    json_t *j = call(db, op, args, &rc);
    if (rc) fprintf(stderr, "  %s %s: %s\n", op, args, remem_errmsg(db));
    CHECK_INT(rc, REMEM_OK);
    return j;
}

#endif
