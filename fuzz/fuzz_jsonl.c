/*
 * fuzz_jsonl.c: libFuzzer target for the JSONL line reader
 * (remem_parse_line, src/engine/jsonl.c), which reads every line of `remem import`
 * and every memory of the server's write routes. Each input is one line,
 * parsed with and without a default namespace. A failure must leave no
 * holder, a non-empty message and a parse or argument status. A success
 * must give a memory remem_add accepts: the line reader promises that an
 * import checked line by line never fails half-way, so the memory is added
 * to a store in memory, and anything but REMEM_OK (or REMEM_EDIM for a
 * vector of another length, which the importer checks itself) aborts. The
 * memory is also rendered as JSON, which must parse.
 *
 * A line without a vector is added with a fixed one, so the time goes to
 * the reader and the write path rather than to the embedder (25 times
 * faster under the sanitizers). The store is reopened every few thousand
 * adds so it stays small.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "remem.h"

static remem *fuzz_db;
static unsigned fuzz_adds;

static remem *db_for_add(void) {
    if (fuzz_db && fuzz_adds >= 5000) {
        remem_close(fuzz_db);
        fuzz_db = NULL;
    }
    if (!fuzz_db) {
        remem_options opt;
        remem_options_init(&opt);
        opt.embedder = "hash";
        if (remem_open(":memory:", &opt, &fuzz_db) != REMEM_OK) abort();
        fuzz_adds = 0;
    }
    return fuzz_db;
}

static void check_line(remem *db, const uint8_t *data, size_t size, const char *default_ns) {
    remem_memory m;
    remem_line *h = NULL;
    remem_memory_init(&m);
    int rc = remem_parse_line(db, (const char *)data, size, default_ns, &m, &h);
    if (rc != REMEM_OK) {
        assert(h == NULL);
        assert(rc == REMEM_EPARSE || rc == REMEM_EINVAL || rc == REMEM_ENOMEM);
        const char *msg = remem_errmsg(db);
        assert(msg && msg[0]);
        return;
    }
    assert(h != NULL);
    assert(m.text && m.text[0]);
    assert(m.ns && m.ns[0]);
    assert(m.importance <= 1);
    assert(!m.vector || m.dim > 0);
    char *js = remem_memory_to_json(&m);
    assert(js);
    json_t *o = json_loads(js, 0, NULL);
    assert(o && json_is_object(o));
    json_decref(o);
    remem_free(js);
    static float fixed[4096] = {1};
    if (!m.vector && remem_embedder_dim(db) <= 4096) {
        m.vector = fixed;
        m.dim = remem_embedder_dim(db);
    }
    rc = remem_add(db, &m, NULL, 0, NULL);
    fuzz_adds++;
    if (rc == REMEM_EDIM)
        assert(m.vector && m.dim != remem_embedder_dim(db));
    else if (rc != REMEM_ENOMEM)
        assert(rc == REMEM_OK);
    remem_free_line(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    remem *db = db_for_add();
    check_line(db, data, size, NULL);
    check_line(db, data, size, "fuzz:default");
    return 0;
}
