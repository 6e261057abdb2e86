/*
 * test_keys.c: the server's API keys (server/keys.c), called directly:
 * the keys file parser (every malformed entry refused with a message that
 * names the entry and field), secrets found by their SHA-256 only, rights
 * ("admin" implies write and read; "write" does not imply read), namespace
 * globs where "*" also crosses ':' and '/', and store-wide rights only for
 * keys over "*". The file is #included, as tests/test_mcp.c does for the
 * MCP face, because its helpers are the server's own.
 */
#include "../server/keys.c"
#include "test.h"

static char dir[64], path[128];

static void write_file(const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* Load text as a keys file: 0 or -1 with err. */
static int load(const char *text, key_table *t, char *err, size_t cap) {
    write_file(text);
    return keys_load(path, t, err, cap);
}

static void hash_of(const char *secret, char hex[65]) { serve_hash_secret(secret, hex); }

static void test_hash(void) {
    char hex[65];
    hash_of("abc", hex); /* the FIPS 180-2 example */
    CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_load_and_find(void) {
    char ha[65], hb[65], text[1024], err[512] = "";
    hash_of("secret-a", ha);
    hash_of("secret-b", hb);
    snprintf(text, sizeof text,
             "{\"keys\":[{\"name\":\"agent-a\",\"sha256\":\"%s\",\"namespaces\":[\"a:*\"],"
             "\"rights\":[\"read\",\"write\"]},"
             "{\"sha256\":\"%s\",\"namespaces\":[\"*\"],\"rights\":[\"admin\"],"
             "\"comment\":\"ops\"}]}",
             ha, hb);
    key_table t;
    int rc = load(text, &t, err, sizeof err);
    if (rc) fprintf(stderr, "  %s\n", err);
    CHECK_INT(rc, 0);
    CHECK_INT(t.n, 2);
    const api_key *a = keys_find(&t, "secret-a"), *b = keys_find(&t, "secret-b");
    CHECK(a && b);
    CHECK(keys_find(&t, "secret-c") == NULL);
    CHECK(keys_find(&t, "") == NULL);
    if (a && b) {
        CHECK_STR(a->name, "agent-a");
        CHECK_STR(b->name, "key1"); /* unnamed: its index */
        /* globs: "*" crosses ':' and '/' */
        CHECK(key_allows(a, "a:x", SERVE_READ));
        CHECK(key_allows(a, "a:x/y:z", SERVE_WRITE));
        CHECK(key_allows(a, "a:", SERVE_READ));
        CHECK(!key_allows(a, "b:x", SERVE_READ));
        CHECK(!key_allows(a, "a", SERVE_READ));
        CHECK(!key_allows(a, "a:x", SERVE_ADMIN));
        CHECK(key_allows(a, "a:x", SERVE_READ | SERVE_WRITE));
        CHECK(!key_allows_all(a, SERVE_READ));
        /* admin implies the others, everywhere */
        CHECK(key_allows(b, "anything:at/all", SERVE_READ | SERVE_WRITE | SERVE_ADMIN));
        CHECK(key_allows_all(b, SERVE_ADMIN));
    }
    /* No keys configured: everything is allowed. */
    CHECK(key_allows(NULL, "x", SERVE_ADMIN));
    CHECK(key_allows_all(NULL, SERVE_ADMIN));
    keys_free(&t);
    keys_free(&t); /* twice is harmless */
}

static void test_write_does_not_imply_read(void) {
    char h[65], text[512], err[256];
    hash_of("ingest", h);
    snprintf(text, sizeof text,
             "{\"keys\":[{\"sha256\":\"%s\",\"namespaces\":[\"logs:*\"],\"rights\":[\"write\"]}]}",
             h);
    key_table t;
    CHECK_INT(load(text, &t, err, sizeof err), 0);
    const api_key *k = keys_find(&t, "ingest");
    CHECK(k != NULL);
    if (k) {
        CHECK(key_allows(k, "logs:1", SERVE_WRITE));
        CHECK(!key_allows(k, "logs:1", SERVE_READ));
    }
    keys_free(&t);
}

/* Every malformed file is refused, with a message naming what is wrong. */
static void test_bad_files(void) {
    char h[65], h2[65];
    hash_of("x", h);
    hash_of("y", h2);
    struct {
        const char *text;
        const char *msg;
    } cases[] = {
        {"{\"keys\":", "line"},
        {"[]", "expected {\"keys\": [...]}"},
        {"{\"keys\":{}}", "expected {\"keys\": [...]}"},
        {"{\"keys\":[1]}", "keys[0] is not an object"},
        {"{\"keys\":[{\"sha256\":\"%s\",\"namespaces\":[\"*\"],\"rights\":[\"read\"],\"x\":1}]}",
         "keys[0]: unknown field \"x\""},
        {"{\"keys\":[{\"sha256\":\"abc\",\"namespaces\":[\"*\"],\"rights\":[\"read\"]}]}",
         "keys[0]: \"sha256\" must be 64 hex digits"},
        {"{\"keys\":[{\"sha256\":\"%s\",\"namespaces\":[],\"rights\":[\"read\"]}]}",
         "keys[0]: \"namespaces\" must be a non-empty array"},
        {"{\"keys\":[{\"sha256\":\"%s\",\"namespaces\":[\"\"],\"rights\":[\"read\"]}]}",
         "keys[0].namespaces[0] is not a pattern"},
        {"{\"keys\":[{\"sha256\":\"%s\",\"namespaces\":[\"*\"]}]}",
         "keys[0]: \"rights\" must be a non-empty array"},
        {"{\"keys\":[{\"sha256\":\"%s\",\"namespaces\":[\"*\"],\"rights\":[\"root\"]}]}",
         "keys[0].rights[0]: expected \"read\", \"write\", \"embed\" or \"admin\""},
        {"{\"keys\":[{\"sha256\":\"%s\",\"namespaces\":[\"*\"],\"rights\":[\"read\"]},"
         "{\"sha256\":\"%s\",\"namespaces\":[\"*\"],\"rights\":[\"read\"]}]}",
         "keys[0] and keys[1] have the same secret"},
        {"{\"keys\":[{\"sha256\":\"%s\",\"namespaces\":[\"*\"],\"rights\":[\"read\"]},"
         "{\"sha256\":\"%s\",\"namespaces\":[\"*\"],\"rights\":[\"read\"]}],\"keys\":[]}",
         "duplicate"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024], err[512] = "";
        snprintf(text, sizeof text, cases[i].text, h, h);
        key_table t;
        int rc = load(text, &t, err, sizeof err);
        if (rc == 0) fprintf(stderr, "  case %zu was accepted\n", i);
        CHECK_INT(rc, -1);
        CHECK_HAS(err, cases[i].msg);
        CHECK(t.keys == NULL && t.n == 0); /* nothing half-loaded */
    }
    (void)h2;
    key_table t;
    char err[512] = "";
    CHECK_INT(keys_load("/nonexistent/keys.json", &t, err, sizeof err), -1);
    CHECK_HAS(err, "/nonexistent/keys.json");
}

static void test_parse_rights(void) {
    unsigned r = 0;
    char err[128];
    CHECK_INT(serve_parse_rights("read,write", &r, err, sizeof err), 0);
    CHECK_INT(r, SERVE_READ | SERVE_WRITE);
    CHECK_INT(serve_parse_rights("admin", &r, err, sizeof err), 0);
    CHECK_INT(r, SERVE_READ | SERVE_WRITE | SERVE_ADMIN | SERVE_EMBED); /* admin implies embed */
    CHECK_INT(serve_parse_rights("embed", &r, err, sizeof err), 0);
    CHECK_INT(r, SERVE_EMBED); /* embedding alone reads and writes nothing */
    CHECK_INT(serve_parse_rights("read,,", &r, err, sizeof err), 0);
    CHECK_INT(r, SERVE_READ);
    CHECK_INT(serve_parse_rights("read,rite", &r, err, sizeof err), -1);
    CHECK_HAS(err, "unknown right \"rite\"");
    CHECK_INT(serve_parse_rights("", &r, err, sizeof err), -1);
    CHECK_HAS(err, "no rights given");
}

/* serve_key_entry + serve_keys_append write a file keys_load reads back. */
static void test_append_round_trip(void) {
    unlink(path);
    char h[65], err[256] = "";
    hash_of("new-secret", h);
    const char *pats[] = {"team:*", "shared"};
    char *entry = serve_key_entry("new", h, pats, 2, SERVE_READ | SERVE_WRITE);
    CHECK(entry != NULL);
    CHECK_INT(serve_keys_append(path, entry, err, sizeof err), 0);
    free(entry);
    entry = serve_key_entry("boss", h, pats, 1, SERVE_ADMIN);
    /* the same secret twice: appended, then refused by the loader */
    CHECK_INT(serve_keys_append(path, entry, err, sizeof err), 0);
    free(entry);
    key_table t;
    CHECK_INT(keys_load(path, &t, err, sizeof err), -1);
    CHECK_HAS(err, "the same secret");
    unlink(path);
    entry = serve_key_entry("new", h, pats, 2, SERVE_READ | SERVE_WRITE);
    CHECK_INT(serve_keys_append(path, entry, err, sizeof err), 0);
    free(entry);
    CHECK_INT(keys_load(path, &t, err, sizeof err), 0);
    const api_key *k = keys_find(&t, "new-secret");
    CHECK(k && key_allows(k, "shared", SERVE_READ | SERVE_WRITE));
    CHECK(k && !key_allows(k, "shared:x", SERVE_READ));
    keys_free(&t);
    CHECK_INT(serve_keys_append(path, "{not json", err, sizeof err), -1);
    CHECK_HAS(err, "bad key entry");
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    snprintf(dir, sizeof dir, "/tmp/remem-keys-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    snprintf(path, sizeof path, "%s/keys.json", dir);
    RUN(test_hash);
    RUN(test_load_and_find);
    RUN(test_write_does_not_imply_read);
    RUN(test_bad_files);
    RUN(test_parse_rights);
    RUN(test_append_round_trip);
    unlink(path);
    rmdir(dir);
    return TEST_EXIT();
}
