/*
 * fuzz_hydrate.c: libFuzzer target for the reader of pre-seeded decision
 * files (src/experience/hydrate.c): whatever JSON a file holds, `remem
 * hydrate` (and the server's first-use hydration) must either add every
 * decision or refuse with a message and add nothing. Each input is one
 * file's contents, hydrated through remem_call into a fresh namespace of
 * a store in memory; then the decision count in stats must be what the
 * answer says was hydrated (0 after a refusal), and a second hydration
 * must add nothing.
 *
 * Inputs that are not JSON are wrapped as a JSON string, so they still
 * reach the reader (which must refuse them as not a decisions file).
 */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "remem.h"

static remem *fuzz_db;
static unsigned fuzz_runs;

static int64_t decisions_in(remem *db, const char *ns) {
    char *st = NULL;
    if (remem_stats(db, ns, &st) != REMEM_OK) abort();
    json_t *o = json_loads(st, 0, NULL);
    remem_free(st);
    assert(o);
    json_t *t = json_object_get(o, "total_memories");
    int64_t n = t ? (int64_t)json_integer_value(t) : 0;
    json_decref(o);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (fuzz_db && ++fuzz_runs % 2000 == 0) {
        remem_close(fuzz_db);
        fuzz_db = NULL;
    }
    if (!fuzz_db) {
        remem_options opt;
        remem_options_init(&opt);
        opt.embedder = "hash";
        if (remem_open(":memory:", &opt, &fuzz_db) != REMEM_OK) abort();
    }
    json_t *file = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
    if (!file) file = json_stringn_nocheck((const char *)data, size);
    char ns[32];
    snprintf(ns, sizeof ns, "f%u", fuzz_runs);
    json_t *args = json_pack("{s:s, s:[o]}", "ns", ns, "files", file);
    char *text = json_dumps(args, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(args);
    if (!text) return 0; /* not representable (a NUL in a key): nothing to test */
    char *out = NULL;
    int rc = remem_call(fuzz_db, "hydrate", text, strlen(text), &out);
    int64_t added = 0;
    if (rc == REMEM_OK) {
        json_t *a = json_loads(out, 0, NULL);
        assert(a);
        added = (int64_t)json_integer_value(json_object_get(a, "hydrated"));
        json_decref(a);
        remem_free(out);
    } else {
        assert(out == NULL);
        assert(rc == REMEM_EINVAL || rc == REMEM_EPARSE || rc == REMEM_ENOMEM);
        assert(remem_errmsg(fuzz_db)[0]);
    }
    assert(decisions_in(fuzz_db, ns) == added);
    if (rc == REMEM_OK && added > 0) {
        out = NULL;
        if (remem_call(fuzz_db, "hydrate", text, strlen(text), &out) != REMEM_OK) abort();
        assert(strstr(out, "\"hydrated\":0"));
        remem_free(out);
        assert(decisions_in(fuzz_db, ns) == added);
    }
    free(text);
    return 0;
}
