/*
 * fuzz_filter.c: libFuzzer target for the filter language (src/filter).
 * Each input is parsed as a filter; a filter that parses is matched against
 * a few fixed records (with and without metadata, with NULL strings, with
 * nested and flat dotted keys) so the evaluator runs on whatever tree the
 * parser built. A parse that fails must leave *out NULL and an error
 * message that is NUL-terminated and non-empty.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>

#include "filter/filter.h"
#include "remem.h"

static json_t *fuzz_metadata;

static void init_metadata(void) {
    if (fuzz_metadata) return;
    fuzz_metadata =
        json_loads("{\"project\": \"acme\", \"reward\": 0.5, \"count\": 3, \"flag\": true,"
                   " \"nothing\": null, \"tags\": [\"a\", \"b\"], \"a.b\": 1,"
                   " \"nested\": {\"lang\": \"c\", \"depth\": {\"x\": 2}}}",
                   0, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    init_metadata();
    filter *f = NULL;
    char err[256];
    int rc = filter_parse((const char *)data, size, &f, err, sizeof err);
    if (rc != 0) {
        assert(f == NULL);
        assert(rc == REMEM_EFILTER || rc == REMEM_ENOMEM);
        assert(memchr(err, 0, sizeof err) != NULL && err[0] != 0);
        return 0;
    }
    filter_record records[3] = {
        {.id = "m1",
         .ns = "agent:a",
         .kind = "decision",
         .tier = "short",
         .text = "The quick brown fox",
         .importance = 0.75,
         .created_at = 1683504000000LL,
         .access_count = 3,
         .metadata = fuzz_metadata},
        {.importance = -1, .created_at = INT64_MIN, .access_count = INT64_MAX},
        {.id = "",
         .ns = "",
         .kind = "",
         .tier = "",
         .text = "",
         .metadata = json_object_get(fuzz_metadata, "tags")},
    };
    int total = 0;
    for (int i = 0; i < 3; i++) {
        int m = filter_match(f, &records[i]);
        assert(m == 0 || m == 1);
        total += m;
    }
    if (filter_matches_all(f)) assert(total == 3);
    (void)filter_uses_metadata(f);
    (void)filter_uses_text(f);
    filter_free(f);
    return 0;
}
