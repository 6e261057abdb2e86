/*
 * test_jsonl.c: remem_parse_line (src/engine/jsonl.c), the one reader of
 * remem's JSONL lines: every malformed line gets REMEM_EPARSE (or the
 * check remem_add would make) naming the field, and a good line fills
 * every field.
 *
 * Split from the former test_engine.c; the shared helpers are in
 * tests/support/engine_fixture.h.
 */
#include "support/engine_fixture.h"

static void test_parse_line_errors(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    struct {
        const char *line, *word;
    } cases[] = {
        {"not json", "JSON"},
        {"[1,2]", "object"},
        {"{\"ns\":\"a\"}", "text"},
        {"{\"text\":\"\"}", "text"},
        {"{\"text\":\"x\"}", "ns"}, /* no default namespace given */
        {"{\"text\":\"x\",\"ns\":\"a\",\"importance\":2}", "importance"},
        {"{\"text\":\"x\",\"ns\":\"a\",\"created_at\":\"yesterday\"}", "created_at"},
        {"{\"text\":\"x\",\"ns\":\"a\",\"metadata\":[1]}", "metadata"},
        {"{\"text\":\"x\",\"ns\":\"a\",\"links\":[1]}", "links"},
        {"{\"text\":\"x\",\"ns\":\"a\",\"vector\":[]}", "vector"},
        {"{\"text\":\"x\",\"ns\":\"a\",\"vector\":[1,\"a\"]}", "vector"},
        {"{\"text\":5,\"ns\":\"a\"}", "text"},
        /* Lines that parse but that remem_add would refuse. */
        {"{\"text\":\"x\",\"ns\":\"a\",\"tier\":\"medium\"}", "medium"},
        {"{\"text\":\"x\",\"ns\":\"a\",\"id\":\"\"}", "id"},
        {"{\"text\":\"x\",\"ns\":\"a\",\"kind\":\"\"}", "kind"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        remem_memory m;
        remem_memory_init(&m);
        remem_line *h = (remem_line *)1;
        int rc = remem_parse_line(db, cases[i].line, strlen(cases[i].line), NULL, &m, &h);
        CHECK(rc == REMEM_EPARSE || rc == REMEM_EINVAL);
        CHECK(h == NULL);
        CHECK_HAS(remem_errmsg(db), cases[i].word);
    }
    /* A good line with every field. */
    const char *good =
        "{\"id\":\"g\",\"ns\":\"x\",\"kind\":\"plan\",\"tier\":\"long\","
        "\"text\":\"go\",\"importance\":0.25,\"created_at\":\"2023-05-08T13:56:00Z\","
        "\"expires_at\":1700000000000,\"metadata\":{\"a\":1},"
        "\"links\":[\"p\"],\"vector\":[3,4]}";
    remem_memory m;
    remem_memory_init(&m);
    remem_line *h = NULL;
    CHECK_INT(remem_parse_line(db, good, strlen(good), "dflt", &m, &h), REMEM_OK);
    CHECK_STR(m.ns, "x");
    CHECK_STR(m.id, "g");
    CHECK_STR(m.kind, "plan");
    CHECK_STR(m.tier, "long");
    CHECK_NEAR(m.importance, 0.25, 0);
    CHECK_INT(m.created_at, 1683554160000LL);
    CHECK_INT(m.expires_at, 1700000000000LL);
    CHECK_STR(m.metadata, "{\"a\":1}");
    CHECK_STR(m.links, "[\"p\"]");
    CHECK_INT(m.dim, 2);
    CHECK(m.vector && m.vector[0] == 3 && m.vector[1] == 4);
    remem_free_line(h);
    CHECK_INT(remem_parse_line(db, "{\"text\":\"t\"}", 12, "dflt", &m, &h), REMEM_OK);
    CHECK_STR(m.ns, "dflt");
    CHECK(m.importance < 0); /* the kind's default */
    remem_free_line(h);
    remem_close(db);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_parse_line_errors);
    return TEST_EXIT();
}
