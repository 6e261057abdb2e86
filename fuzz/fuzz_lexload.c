/*
 * fuzz_lexload.c: libFuzzer target for the lexical index's loader
 * (lex_load in src/lexical/lexical.c), which reads the lexical section of
 * a cache snapshot. The snapshot's checksum refuses damaged files before
 * lex_load sees them, so this is the second line: any buffer must be
 * refused with LEX_EINVAL (and *out NULL), or give an index that searches,
 * changes and frees without touching memory outside its own (the fuzzer
 * runs under ASan and UBSan). The first byte picks copied (even) or
 * borrowed (odd) lists; the rest is the saved index. The corpus holds
 * small saved indexes (tests/test_lexical.c's save format).
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lexical/lexical.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int borrow = data[0] & 1;
    size_t len = size - 1;
    /* lex_load wants 8-byte alignment; a borrowed buffer must be writable. */
    uint64_t *buf = malloc(len / 8 * 8 + 8);
    assert(buf);
    memcpy(buf, data + 1, len);
    lex_index *ix = NULL;
    int rc = lex_load(buf, len, borrow, &ix);
    assert(rc == LEX_OK || rc == LEX_EINVAL || rc == LEX_ENOMEM);
    if (rc != LEX_OK) {
        assert(ix == NULL);
        free(buf);
        return 0;
    }
    static const char *const q[] = {"a", "b", "the", "garden", "x"};
    lex_hit hits[10];
    size_t n = lex_search(ix, q, 5, 10, NULL, hits);
    assert(n <= 10);
    const char *doc[] = {"new", "a", "a"};
    if (lex_count(ix) < 1000) assert(lex_add(ix, (uint32_t)lex_count(ix), doc, 3) == LEX_OK);
    if (lex_count(ix)) assert(lex_set(ix, 0, doc + 1, 2) == LEX_OK);
    while (lex_count(ix)) assert(lex_swap_remove(ix, (uint32_t)(lex_count(ix) - 1) / 2) == LEX_OK);
    lex_free(ix);
    free(buf);
    return 0;
}
