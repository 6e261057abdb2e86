/*
 * fuzz_query.c: libFuzzer target for the recall query's JSON parser
 * (src/engine/query.c, remem_query_parse) and the time parser under it
 * (src/util/time.c). Each input is parsed as a query: a refusal must leave
 * *out NULL and a non-empty NUL-terminated message that starts with a field
 * name; an acceptance must give a query that satisfies every rule the
 * parser promises (at least one namespace, text or vector, k and the
 * overrides within bounds), checked again by remem_recall's own check.
 * The same bytes are then read as a time string.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "remem.h"
#include "util/time.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    remem_query_json *p = NULL;
    char err[512];
    int rc = remem_query_parse((const char *)data, size, &p, err, sizeof err);
    if (rc != REMEM_OK) {
        assert(p == NULL);
        assert(rc == REMEM_EPARSE || rc == REMEM_EINVAL || rc == REMEM_ENOMEM);
        assert(memchr(err, 0, sizeof err) != NULL && err[0] != 0);
    } else {
        const remem_query *q = remem_query_json_get(p);
        assert(q->n_namespaces > 0 && q->namespaces);
        for (size_t i = 0; i < q->n_namespaces; i++) assert(q->namespaces[i][0] != 0);
        assert((q->text && q->text[0]) || (q->vector && q->dim > 0));
        assert(q->k >= 0 && q->k <= 1000);
        assert(eng_query_check(q, err, sizeof err) == REMEM_OK);
        remem_query_json_free(p);
    }
    char *s = malloc(size + 1);
    if (!s) return 0;
    memcpy(s, data, size);
    s[size] = 0;
    int64_t ms = 0;
    char why[160];
    if (util_parse_time_why(s, &ms, why, sizeof why) != 0) assert(why[0] != 0);
    free(s);
    return 0;
}
