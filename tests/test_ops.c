/*
 * test_ops.c: the operations table behind remem_call (include/remem.h,
 * "Operations") and the one argument checker every face relies on. The
 * checker is tested directly against a schema with every keyword the
 * operations use (each refusal names the argument), and remem_call end to
 * end with the engine's own "memory.get": unknown operations, arguments
 * that are not JSON or not an object, unknown keys, wrong types, and a
 * successful answer; and the arguments that name paths, which remote
 * callers may not give.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/ops.h"
#include "remem.h"
#include "test.h"

static const char *SCHEMA =
    "{\"type\":\"object\",\"required\":[\"ns\",\"reward\"],"
    "\"properties\":{\"ns\":{\"type\":\"string\",\"minLength\":1},"
    "\"reward\":{\"type\":\"number\",\"minimum\":-1,\"maximum\":1},"
    "\"n\":{\"type\":\"integer\",\"minimum\":1},"
    "\"policy\":{\"type\":\"string\",\"enum\":[\"off\",\"auto\",\"always\"]},"
    "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
    "\"metrics\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"number\"}},"
    "\"flag\":{\"type\":\"boolean\"}}}";

static void test_checker(void) {
    static const struct {
        const char *args;
        const char *want; /* NULL: accepted; else a part of the message */
    } cases[] = {
        {"{\"ns\":\"a\",\"reward\":0.5}", NULL},
        {"{\"ns\":\"a\",\"reward\":1,\"n\":3,\"policy\":\"auto\",\"tags\":[\"x\",\"y\"],"
         "\"metrics\":{\"m\":0.2},\"flag\":true}",
         NULL},
        {"{\"ns\":\"a\",\"reward\":0.5,\"n\":3.0}", NULL}, /* 3.0 is an integer */
        {"{\"reward\":0.5}", "ns: is required"},
        {"{\"ns\":\"\",\"reward\":0.5}", "ns: must be a non-empty string"},
        {"{\"ns\":\"a\",\"reward\":\"high\"}", "reward: expected number, got a string"},
        {"{\"ns\":\"a\",\"reward\":2}", "reward: 2 is above the maximum 1"},
        {"{\"ns\":\"a\",\"reward\":-3}", "reward: -3 is below the minimum -1"},
        {"{\"ns\":\"a\",\"reward\":0,\"n\":2.5}", "n: expected an integer, got a number"},
        {"{\"ns\":\"a\",\"reward\":0,\"n\":0}", "n: 0 is below the minimum 1"},
        {"{\"ns\":\"a\",\"reward\":0,\"policy\":\"sometimes\"}",
         "policy: \"sometimes\" is not one of [\"off\",\"auto\",\"always\"]"},
        {"{\"ns\":\"a\",\"reward\":0,\"tags\":[\"x\",3]}",
         "tags[1]: expected string, got an integer"},
        {"{\"ns\":\"a\",\"reward\":0,\"metrics\":{\"m\":\"low\"}}", "metrics.m: expected number"},
        {"{\"ns\":\"a\",\"reward\":0,\"rewad\":1}", "rewad: unknown argument"},
        {"{\"ns\":\"a\",\"reward\":0,\"flag\":1}", "flag: expected boolean, got an integer"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *a = json_loads(cases[i].args, 0, NULL);
        CHECK(a != NULL);
        char err[600] = "";
        int rc = engine_args_check(SCHEMA, a, err, sizeof err);
        if (!cases[i].want) {
            if (rc) fprintf(stderr, "  case %zu refused: %s\n", i, err);
            CHECK_INT(rc, 0);
        } else {
            CHECK_INT(rc, -1);
            if (!strstr(err, cases[i].want))
                fprintf(stderr, "  case %zu: got \"%s\", want \"%s\"\n", i, err, cases[i].want);
            CHECK(strstr(err, cases[i].want) != NULL);
        }
        json_decref(a);
    }
}

static void test_table(void) {
    size_t n = 0;
    const remem_op_info *ops = remem_ops(&n);
    CHECK(n >= 1 && ops != NULL);
    for (size_t i = 0; i < n; i++) {
        /* every schema parses, is an object schema, and its right is known */
        json_t *s = json_loads(ops[i].schema, 0, NULL);
        CHECK(s != NULL);
        CHECK(json_is_object(s) &&
              !strcmp(json_string_value(json_object_get(s, "type")), "object"));
        CHECK(!strcmp(ops[i].right, "read") || !strcmp(ops[i].right, "write") ||
              !strcmp(ops[i].right, "read+write") || !strcmp(ops[i].right, "admin"));
        CHECK(ops[i].summary && strlen(ops[i].summary) > 10);
        CHECK(remem_op_find(ops[i].name) == &ops[i]);
        json_decref(s);
    }
    CHECK(remem_op_find("no.such.op") == NULL);
    CHECK(remem_op_find(NULL) == NULL);
}

static void test_call(void) {
    remem *db = NULL;
    CHECK_INT(remem_open(":memory:", NULL, &db), REMEM_OK);
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "a";
    m.id = "m1";
    m.text = "the deploy failed on a full disk";
    char id[64];
    CHECK_INT(remem_add(db, &m, id, sizeof id, NULL), REMEM_OK);

    char *out = (char *)1;
    const char *ok = "{\"ns\":\"a\",\"id\":\"m1\"}";
    CHECK_INT(remem_call(db, "memory.get", ok, strlen(ok), &out), REMEM_OK);
    json_t *r = json_loads(out, 0, NULL);
    CHECK(r != NULL);
    CHECK_STR(json_string_value(json_object_get(json_object_get(r, "memory"), "text")), m.text);
    json_decref(r);
    remem_free(out);

    const struct {
        const char *op, *args;
        int rc;
        const char *msg;
    } bad[] = {
        {"no.such", "{}", REMEM_ENOTFOUND, "no operation called \"no.such\""},
        {"memory.get", "{\"ns\":", REMEM_EPARSE, "memory.get: the arguments are not JSON"},
        {"memory.get", "[1]", REMEM_EINVAL, "must be a JSON object"},
        {"memory.get", "{\"ns\":\"a\"}", REMEM_EINVAL, "memory.get: id: is required"},
        {"memory.get", "{\"ns\":\"a\",\"id\":\"m1\",\"x\":1}", REMEM_EINVAL, "x: unknown argument"},
        {"memory.get", "{\"ns\":\"a\",\"id\":7}", REMEM_EINVAL, "id: expected string"},
        {"memory.get", "{\"ns\":\"a\",\"id\":\"nope\"}", REMEM_ENOTFOUND, "nope"},
        {"memory.get", "{\"ns\":\"a\",\"ns\":\"b\",\"id\":\"m1\"}", REMEM_EPARSE, "duplicate"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        out = (char *)1;
        int rc = remem_call(db, bad[i].op, bad[i].args, strlen(bad[i].args), &out);
        CHECK_INT(rc, bad[i].rc);
        CHECK(out == NULL);
        if (!strstr(remem_errmsg(db), bad[i].msg))
            fprintf(stderr, "  case %zu: \"%s\" lacks \"%s\"\n", i, remem_errmsg(db), bad[i].msg);
        CHECK(strstr(remem_errmsg(db), bad[i].msg) != NULL);
    }
    CHECK_INT(remem_call(db, "memory.get", ok, strlen(ok), NULL), REMEM_EINVAL);
    remem_close(db);
}

/* Paths on this machine are local-only: every argument of the table that
 * names a folder or a store file is marked "x-local", remem_call (the CLI,
 * the C API) takes it and remem_call_ex with REMEM_CALL_REMOTE (the
 * server, MCP) refuses it by name, writing nothing there. */
static void test_local_args(void) {
    static const char *const paths[][2] = {
        {"archive", "archive_location"},      {"restore", "archive_location"},
        {"archive.list", "archive_location"}, {"prune", "archive_location"},
        {"maintain", "archive_location"},     {"eval.lessons", "store"}};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        const remem_op_info *op = remem_op_find(paths[i][0]);
        CHECK(op != NULL);
        if (!op) continue;
        json_t *s = json_loads(op->schema, 0, NULL);
        json_t *p = json_object_get(json_object_get(s, "properties"), paths[i][1]);
        CHECK(json_is_true(json_object_get(p, "x-local")));
        json_decref(s);
    }
    char dir[] = "/tmp/remem-local-XXXXXX", where[64], args[160];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(where, sizeof where, "%s/elsewhere", dir);
    snprintf(args, sizeof args, "{\"ns\":\"a\",\"archive_location\":\"%s\"}", where);
    remem *db = NULL;
    CHECK_INT(remem_open(":memory:", NULL, &db), REMEM_OK);
    char *out = (char *)1;
    CHECK_INT(remem_call_ex(db, "prune", args, strlen(args), REMEM_CALL_REMOTE, &out),
              REMEM_EINVAL);
    CHECK(out == NULL);
    CHECK(strstr(remem_errmsg(db), "prune: archive_location: ") != NULL);
    CHECK(access(where, F_OK) != 0); /* nothing made there */
    CHECK_INT(remem_call_ex(db, "prune", args, strlen(args), 0, &out), REMEM_OK);
    remem_free(out);
    CHECK(access(where, F_OK) == 0); /* the local caller's folder */
    const char *plain = "{\"ns\":\"a\",\"dry_run\":true}";
    CHECK_INT(remem_call_ex(db, "prune", plain, strlen(plain), REMEM_CALL_REMOTE, &out), REMEM_OK);
    remem_free(out);
    CHECK_INT(remem_call_ex(db, "prune", plain, strlen(plain), 0x80, &out), REMEM_EINVAL);
    CHECK(strstr(remem_errmsg(db), "unknown flags") != NULL);
    remem_close(db);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* One call's answer as JSON (the test fails when the call does). */
static json_t *call(remem *db, const char *op, const char *args) {
    char *out = NULL;
    int rc = remem_call(db, op, args, strlen(args), &out);
    if (rc) fprintf(stderr, "  %s %s: %s\n", op, args, remem_errmsg(db));
    CHECK_INT(rc, REMEM_OK);
    json_t *r = out ? json_loads(out, 0, NULL) : NULL;
    remem_free(out);
    return r;
}

/* The core verbs are operations: memory.list pages by cursor through every
 * memory once, in the asked order, without bookkeeping kinds unless named;
 * recall leaves bookkeeping out unless its filter names the kind. */
static void test_core_verbs(void) {
    remem *db = NULL;
    CHECK_INT(remem_open(":memory:", NULL, &db), REMEM_OK);
    char args[256];
    for (int i = 0; i < 25; i++) {
        snprintf(args, sizeof args,
                 "{\"ns\":\"a\",\"id\":\"m%02d\",\"text\":\"memory %d about disks\","
                 "\"importance\":%.2f,\"created_at\":%d}",
                 i, i, (i % 5) / 5.0, 1000000 + i);
        json_decref(call(db, "memory.add", args));
    }
    json_decref(call(db, "memory.add",
                     "{\"ns\":\"a\",\"text\":\"a hint about disks\",\"kind\":\"hint_log\"}"));
    int seen[25] = {0}, pages = 0, total = 0;
    char cursor[64] = "";
    do {
        snprintf(args, sizeof args, "{\"ns\":\"a\",\"limit\":7%s%s%s}", cursor[0] ? ",\"cursor\":\"" : "",
                 cursor, cursor[0] ? "\"" : "");
        json_t *page = call(db, "memory.list", args);
        size_t i;
        json_t *m;
        json_array_foreach(json_object_get(page, "memories"), i, m) {
            const char *id = json_string_value(json_object_get(m, "id"));
            CHECK(id && id[0] == 'm');
            if (id && id[0] == 'm') seen[atoi(id + 1)]++;
            total++;
        }
        const char *next = json_string_value(json_object_get(page, "next_cursor"));
        snprintf(cursor, sizeof cursor, "%s", next ? next : "");
        json_decref(page);
        pages++;
    } while (cursor[0] && pages < 10);
    CHECK_INT(pages, 4);
    CHECK_INT(total, 25);
    for (int i = 0; i < 25; i++) CHECK_INT(seen[i], 1);

    json_t *r = call(db, "memory.list", "{\"ns\":\"a\",\"kinds\":[\"hint_log\"]}");
    CHECK_INT((int)json_array_size(json_object_get(r, "memories")), 1);
    json_decref(r);
    r = call(db, "recall", "{\"ns\":\"a\",\"query\":\"a hint about disks\",\"k\":30}");
    size_t i;
    json_t *h;
    json_array_foreach(json_object_get(r, "hits"), i, h)
        CHECK(strcmp(json_string_value(json_object_get(h, "kind")), "hint_log") != 0);
    CHECK_INT((int)json_array_size(json_object_get(r, "hits")), 25);
    json_decref(r);
    r = call(db, "recall", "{\"namespaces\":[\"a\"],\"text\":\"hint\",\"filter\":{\"kind\":\"hint_log\"}}");
    CHECK_INT((int)json_array_size(json_object_get(r, "hits")), 1);
    json_decref(r);
    r = call(db, "memory.delete", "{\"ns\":\"a\",\"filter\":{\"importance\":0},\"dry_run\":true}");
    CHECK_INT((int)json_integer_value(json_object_get(r, "matched")), 5);
    CHECK_INT((int)json_integer_value(json_object_get(r, "deleted")), 0);
    json_decref(r);
    r = call(db, "memory.delete", "{\"ns\":\"a\",\"filter\":{\"importance\":0}}");
    CHECK_INT((int)json_integer_value(json_object_get(r, "deleted")), 5);
    json_decref(r);
    r = call(db, "stats", "{\"ns\":\"a\"}");
    CHECK_INT((int)json_integer_value(json_object_get(r, "memories")), 21);
    json_decref(r);
    remem_close(db);
}

int main(int argc, char **argv) {
    if (argc > 1) test__only = argv[1];
    RUN(test_core_verbs);
    RUN(test_checker);
    RUN(test_table);
    RUN(test_call);
    RUN(test_local_args);
    return TEST_EXIT();
}
