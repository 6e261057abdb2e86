/*
 * fuzz_mcp.c: libFuzzer target for the MCP handler (mcp/), the
 * parser every MCP client's bytes reach first. Each input is one message
 * (or batch) handed to mcp_handle twice: with every right, against a real
 * store in memory, and with none (the access checks' paths). The answer
 * must be NULL or one line of JSON that parses, as the stdio transport
 * needs; anything else aborts.
 *
 * The files of mcp/ belong to the remem binary, not to the library, so they are
 * compiled in here directly.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../mcp/jsonrpc.c"
#include "../mcp/render.c"
#include "../mcp/schemas.c"
#include "../mcp/tools.c"
#include "../mcp/toolset.c"

static int deny_everything(void *ctx, const char *ns, int right) {
    (void)ctx, (void)ns, (void)right;
    return 0;
}

static remem *fuzz_db(void) {
    static remem *db;
    if (!db) {
        remem_options opt;
        remem_options_init(&opt);
        opt.embedder = "hash";
        if (remem_open(":memory:", &opt, &db) != REMEM_OK) abort();
    }
    return db;
}

static void check_answer(char *out) {
    if (!out) return;
    assert(strchr(out, '\n') == NULL);
    json_t *j = json_loads(out, 0, NULL);
    assert(j && (json_is_object(j) || json_is_array(j)));
    json_decref(j);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const mcp_access none = {deny_everything, NULL};
    remem *db = fuzz_db();
    check_answer(mcp_handle(db, (const char *)data, size, NULL));
    check_answer(mcp_handle(db, (const char *)data, size, &none));
    return 0;
}
