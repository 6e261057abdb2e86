/*
 * test_lifecycle.c: the lifecycle operations of seeds 001 and 004 without
 * an LLM (their named fallbacks and refusals), through remem_call as every
 * face calls them: static.load (replace, nothing doubled), migrate (the
 * exact memories the rule selects, computed here by hand), unarchive,
 * reflect and summarize ("extractive"), plan (refused), context (seed
 * 004's block byte for byte), and the pure parts under them
 * (extractive_cluster, prompt_render). The LLM paths run against the
 * stand-in in tests/e2e/lifecycle_*.sh.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle/extractive.h"
#include "prompt/prompt.h"
#include "support/engine_fixture.h"
#include "support/op_call.h"

/* remem_call with a JSON text; the answer parsed (NULL on failure, *rc). */
static int64_t count_tier(remem *db, const char *ns, const char *tier) {
    char *s = NULL;
    if (remem_stats(db, ns, &s)) return -1;
    json_t *j = json_loads(s, 0, NULL);
    remem_free(s);
    json_t *t = json_object_get(json_object_get(j, "by_tier"), tier);
    int64_t n = json_is_integer(t) ? json_integer_value(t) : 0;
    json_decref(j);
    return n;
}

static char *tier_of(remem *db, const char *ns, const char *id) {
    remem_record *r = NULL;
    if (remem_get(db, ns, id, &r)) return strdup("?");
    char *t = strdup(remem_record_memory(r)->tier);
    remem_record_free(r);
    return t;
}

static void put_text(remem *db, const char *ns, const char *id, const char *text, double imp,
                     const char *created, const char *kind, const char *tier) {
    remem_memory m;
    remem_memory_init(&m);
    m.ns = ns;
    m.id = id;
    m.text = text;
    m.importance = imp;
    m.kind = kind;
    m.tier = tier;
    if (created) CHECK_INT(remem_parse_time(created, &m.created_at), 0);
    int rc = remem_add(db, &m, NULL, 0, NULL);
    if (rc) fprintf(stderr, "  add %s: %s\n", id ? id : text, remem_errmsg(db));
    CHECK_INT(rc, REMEM_OK);
}

static void test_static_load(void) {
    remem *db = open_store(":memory:");
    int rc;
    json_t *a = call(db, "static.load",
                     "{\"ns\":\"agent:ava\",\"file\":{\"identity\":{\"name\":\"Ava\",\"age\":34},"
                     "\"goals\":[\"forge a sword\",\"train an apprentice\"],\"rules\":{}}}",
                     &rc);
    CHECK_INT(rc, REMEM_OK);
    CHECK_INT(json_integer_value(json_object_get(a, "added")), 4);
    json_decref(a);
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "agent:ava", "static:goals[1]", &r), REMEM_OK);
    if (r) {
        const remem_memory *m = remem_record_memory(r);
        CHECK(strcmp(m->text, "goals[1]: train an apprentice") == 0);
        CHECK(strcmp(m->kind, "static") == 0 && strcmp(m->tier, "static") == 0);
        CHECK(m->metadata && strstr(m->metadata, "\"key\":\"goals[1]\""));
    }
    remem_record_free(r);
    CHECK_INT(remem_get(db, "agent:ava", "static:identity.age", &r), REMEM_OK);
    if (r) CHECK(strcmp(remem_record_memory(r)->text, "identity.age: 34") == 0);
    remem_record_free(r);
    /* Again, the same file: nothing doubled, nothing rewritten. */
    a = call(db, "static.load",
             "{\"ns\":\"agent:ava\",\"file\":{\"identity\":{\"name\":\"Ava\",\"age\":34},"
             "\"goals\":[\"forge a sword\",\"train an apprentice\"]}}",
             &rc);
    CHECK_INT(rc, REMEM_OK);
    CHECK_INT(json_integer_value(json_object_get(a, "unchanged")), 4);
    json_decref(a);
    CHECK_INT(count_tier(db, "agent:ava", "static"), 4);
    /* A changed personality: one replaced, one gone (archived), one new. */
    a = call(db, "static.load",
             "{\"ns\":\"agent:ava\",\"file\":{\"identity\":{\"name\":\"Ava\",\"age\":35},"
             "\"goals\":[\"forge a sword\"],\"trust\":{\"Bob\":0.8}}}",
             &rc);
    CHECK_INT(rc, REMEM_OK);
    CHECK_INT(json_integer_value(json_object_get(a, "added")), 1);
    CHECK_INT(json_integer_value(json_object_get(a, "replaced")), 1);
    CHECK_INT(json_integer_value(json_object_get(a, "archived")), 1);
    json_decref(a);
    CHECK_INT(count_tier(db, "agent:ava", "static"), 4);
    CHECK_INT(count_tier(db, "agent:ava", "archived"), 1);
    CHECK_INT(remem_get(db, "agent:ava", "static:trust.Bob", &r), REMEM_OK);
    if (r) CHECK(strcmp(remem_record_memory(r)->text, "trust.Bob: 0.8") == 0);
    remem_record_free(r);
    /* Bad files change nothing. */
    a = call(db, "static.load", "{\"ns\":\"agent:ava\",\"file\":{\"x\":null,\"y\":[]}}", &rc);
    CHECK_INT(rc, REMEM_EINVAL);
    CHECK(strstr(remem_errmsg(db), "no values"));
    a = call(db, "static.load", "{\"ns\":\"agent:ava\",\"file\":[1,2]}", &rc);
    CHECK_INT(rc, REMEM_EINVAL);
    CHECK(strstr(remem_errmsg(db), "file: expected an object"));
    a = call(db, "static.load", "{\"ns\":\"agent:ava\",\"file\":{\"a.b\":1,\"a\":{\"b\":2}}}", &rc);
    CHECK_INT(rc, REMEM_EINVAL);
    CHECK(strstr(remem_errmsg(db), "two values have the key path a.b"));
    CHECK_INT(count_tier(db, "agent:ava", "static"), 4);
    remem_close(db);
}

/* Eight short-term memories, oldest first, importance as listed; a
 * capacity of 5 takes the 3 oldest out of short-term: those above 0.35
 * to long, the others to archived. */
static void test_migrate(void) {
    remem *db = open_store(":memory:");
    static const double imp[8] = {0.9, 0.2, 0.5, 0.35, 0.8, 0.1, 0.7, 0.6};
    /* Written newest first, so the rule must go by created_at. */
    for (int i = 7; i >= 0; i--) {
        char id[16], text[64], when[32];
        snprintf(id, sizeof id, "e%d", i);
        snprintf(text, sizeof text, "event number %d happened in the square", i);
        snprintf(when, sizeof when, "2025-11-%02dT10:00:00Z", 1 + i);
        put_text(db, "a", id, text, imp[i], when, NULL, NULL);
    }
    put_text(db, "a", "s0", "the agent is a baker", 1.0, "2025-10-01T00:00:00Z", "static", NULL);
    int rc;
    json_t *a = call(db, "migrate", "{\"ns\":\"a\",\"stm_size\":5,\"dry_run\":true}", &rc);
    CHECK_INT(rc, REMEM_OK);
    CHECK_INT(json_array_size(json_object_get(a, "moved")), 3);
    json_decref(a);
    CHECK_INT(count_tier(db, "a", "short"), 8);
    a = call(db, "migrate", "{\"ns\":\"a\",\"stm_size\":5}", &rc);
    CHECK_INT(rc, REMEM_OK);
    /* By hand: e0 (0.9 > 0.35) long, e1 (0.2) archived, e2 (0.5) long. */
    json_t *tl = json_object_get(a, "to_long"), *ta = json_object_get(a, "to_archived");
    CHECK_INT(json_array_size(tl), 2);
    CHECK_INT(json_array_size(ta), 1);
    CHECK(strcmp(json_string_value(json_array_get(tl, 0)), "e0") == 0);
    CHECK(strcmp(json_string_value(json_array_get(tl, 1)), "e2") == 0);
    CHECK(strcmp(json_string_value(json_array_get(ta, 0)), "e1") == 0);
    CHECK_INT(json_integer_value(json_object_get(a, "short_after")), 5);
    json_decref(a);
    char *t = tier_of(db, "a", "e0");
    CHECK(strcmp(t, "long") == 0);
    free(t);
    t = tier_of(db, "a", "e1");
    CHECK(strcmp(t, "archived") == 0);
    free(t);
    t = tier_of(db, "a", "s0");
    CHECK(strcmp(t, "static") == 0);
    free(t);
    CHECK_INT(count_tier(db, "a", "short"), 5);
    /* At the threshold is not above it: e3 (0.35) is archived next. */
    a = call(db, "migrate", "{\"ns\":\"a\",\"stm_size\":4}", &rc);
    CHECK_INT(rc, REMEM_OK);
    CHECK(strcmp(json_string_value(json_array_get(json_object_get(a, "to_archived"), 0)), "e3") ==
          0);
    json_decref(a);
    /* History names the moves. */
    char *h = NULL;
    CHECK_INT(remem_history(db, "a", "e0", &h), REMEM_OK);
    CHECK(h && strstr(h, "\"op\":\"migrate\""));
    remem_free(h);
    /* unarchive brings e1 back to short (its tier before archiving). */
    a = call(db, "unarchive", "{\"ns\":\"a\",\"id\":\"e1\"}", &rc);
    CHECK_INT(rc, REMEM_OK);
    json_decref(a);
    t = tier_of(db, "a", "e1");
    CHECK(strcmp(t, "short") == 0);
    free(t);
    a = call(db, "unarchive", "{\"ns\":\"a\",\"id\":\"e0\"}", &rc);
    CHECK_INT(rc, REMEM_EINVAL);
    CHECK(strstr(remem_errmsg(db), "not archived (tier long)"));
    a = call(db, "unarchive", "{\"ns\":\"a\",\"ids\":[\"e3\",\"nope\"]}", &rc);
    CHECK_INT(rc, REMEM_ENOTFOUND);
    t = tier_of(db, "a", "e3");
    CHECK(strcmp(t, "archived") == 0); /* all or nothing */
    free(t);
    remem_close(db);
}

/* Hand-made vectors: five memories near axis A (a theme), three spread. */
static void test_reflect_extractive(void) {
    remem *db = open_store(":memory:");
    int dim = remem_embedder_dim(db);
    float *v = calloc((size_t)dim, sizeof *v);
    const double cosines[8] = {0.95, 0.97, 0.99, 0.96, 0.94, 0, 0, 0};
    for (int i = 0; i < 8; i++) {
        remem_memory m;
        remem_memory_init(&m);
        char id[16], text[64];
        snprintf(id, sizeof id, "m%d", i);
        snprintf(text, sizeof text, "statement %d", i);
        memset(v, 0, (size_t)dim * sizeof *v);
        if (i < 5) {
            v[AXIS_A] = (float)cosines[i];
            v[AXIS_B + i] = (float)sqrt(1 - cosines[i] * cosines[i]);
        } else {
            v[40 + i] = 1; /* orthogonal to everything */
        }
        m.ns = "b";
        m.id = id;
        m.text = text;
        m.vector = v;
        m.dim = dim;
        m.importance = 0.5;
        CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    }
    free(v);
    int rc;
    json_t *a = call(db, "reflect", "{\"ns\":\"b\",\"if_due\":true}", &rc);
    CHECK_INT(rc, REMEM_OK);
    CHECK(json_is_false(json_object_get(a, "reflected")));
    /* 8 memories x 0.5 x 10 = 40 < 150. */
    CHECK(fabs(json_number_value(json_object_get(json_object_get(a, "since"), "importance_sum")) -
               40) < 1e-9);
    json_decref(a);
    a = call(db, "reflect", "{\"ns\":\"b\",\"similarity\":0.8}", &rc);
    CHECK_INT(rc, REMEM_OK);
    CHECK(strcmp(json_string_value(json_object_get(a, "fallback")), "extractive") == 0);
    json_t *r0 = json_array_get(json_object_get(a, "reflections"), 0);
    /* m2 (0.99 on A) is nearest to the others of the cluster m0..m4. */
    CHECK(r0 && strcmp(json_string_value(json_object_get(r0, "text")), "statement 2") == 0);
    CHECK_INT(json_array_size(json_object_get(r0, "links")), 5);
    const char *rid = json_string_value(json_object_get(r0, "id"));
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "b", rid ? rid : "-", &r), REMEM_OK);
    if (r) {
        const remem_memory *m = remem_record_memory(r);
        CHECK(strcmp(m->kind, "reflection") == 0);
        CHECK(fabs(m->importance - 0.95) < 1e-12);
        CHECK(strcmp(m->links, "[\"m0\",\"m1\",\"m2\",\"m3\",\"m4\"]") == 0);
        CHECK(strstr(m->metadata, "\"method\":\"extractive\""));
    }
    remem_record_free(r);
    json_decref(a);
    /* The reflection restarts the count, and is not counted itself. */
    a = call(db, "reflect", "{\"ns\":\"b\",\"if_due\":true}", &rc);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(a, "since"), "observations")), 0);
    json_decref(a);
    /* Nothing similar enough: no reflection, and it says why. */
    a = call(db, "reflect", "{\"ns\":\"b\",\"similarity\":0.999,\"recent\":3}", &rc);
    CHECK_INT(rc, REMEM_OK);
    CHECK(json_is_false(json_object_get(a, "reflected")));
    CHECK(strstr(json_string_value(json_object_get(a, "text")), "nothing to reflect on"));
    json_decref(a);
    /* Asking for the LLM without one is refused. */
    a = call(db, "reflect", "{\"ns\":\"b\",\"method\":\"llm\"}", &rc);
    CHECK_INT(rc, REMEM_EUNSUPPORTED);
    remem_close(db);
}

static void test_summarize_extractive(void) {
    remem *db = open_store(":memory:");
    put_text(db, "c", "l1", "The bakery opened at dawn. Bread was sold out by noon.", 0.4, NULL,
             NULL, "long");
    put_text(db, "c", "l2", "The bakery opened at dawn. A customer praised the rye bread.", 0.3,
             NULL, NULL, "long");
    put_text(db, "c", "l3", "The mayor visited the bakery.", 0.9, NULL, NULL, "long");
    put_text(db, "c", "s1", "A short-term note.", 0.1, NULL, NULL, "short");
    int rc;
    json_t *a = call(db, "summarize", "{\"ns\":\"c\",\"count\":2}", &rc);
    CHECK_INT(rc, REMEM_OK);
    const char *sum = json_string_value(json_object_get(a, "summary"));
    /* The two least important long-term memories (l2 0.3, l1 0.4); their
     * shared first sentence once only. */
    CHECK(sum && strstr(sum, "The bakery opened at dawn."));
    CHECK(sum &&
          strstr(sum, "The bakery opened at dawn.") == strstr(sum, "The bakery opened at dawn.") &&
          !strstr(strstr(sum, "The bakery opened at dawn.") + 5, "The bakery opened at dawn."));
    CHECK(sum && !strstr(sum, "mayor"));
    CHECK_INT(json_array_size(json_object_get(a, "sources")), 2);
    CHECK(strcmp(json_string_value(json_object_get(a, "fallback")), "extractive") == 0);
    const char *sid = json_string_value(json_object_get(a, "id"));
    remem_record *r = NULL;
    CHECK_INT(remem_get(db, "c", sid ? sid : "-", &r), REMEM_OK);
    if (r) {
        CHECK(strcmp(remem_record_memory(r)->kind, "summary") == 0);
        CHECK(strcmp(remem_record_memory(r)->tier, "long") == 0);
        CHECK(strcmp(remem_record_memory(r)->links, "[\"l2\",\"l1\"]") == 0);
    }
    remem_record_free(r);
    json_decref(a);
    CHECK_INT(count_tier(db, "c", "long"), 2); /* l3 and the summary */
    CHECK_INT(count_tier(db, "c", "archived"), 2);
    a = call(db, "unarchive", "{\"ns\":\"c\",\"ids\":[\"l1\",\"l2\"]}", &rc);
    CHECK_INT(rc, REMEM_OK);
    json_decref(a);
    CHECK_INT(count_tier(db, "c", "long"), 4);
    /* Fewer than two long-term memories: refused, nothing written. */
    a = call(db, "summarize", "{\"ns\":\"empty\"}", &rc);
    CHECK_INT(rc, REMEM_EINVAL);
    CHECK(strstr(remem_errmsg(db), "at least 2"));
    remem_close(db);
}

static void test_plan_without_llm(void) {
    unsetenv("REMEM_LLM_URL");
    remem *db = open_store(":memory:");
    put_text(db, "d", NULL, "the festival is on Friday", 0.5, NULL, NULL, NULL);
    int rc;
    json_t *a = call(db, "plan", "{\"ns\":\"d\",\"goal\":\"prepare for the festival\"}", &rc);
    CHECK(a == NULL);
    CHECK_INT(rc, REMEM_EUNSUPPORTED);
    CHECK(strcmp(remem_errmsg(db), "planning needs an LLM: set REMEM_LLM_URL") == 0);
    CHECK_INT(count_tier(db, "d", "long"), 0);
    remem_close(db);
}

static void test_context_stream(void) {
    remem *db = open_store(":memory:");
    put_text(db, "agent:SecDef", NULL, "I recommended diplomatic engagement on North Korea issue",
             0.5, "2025-11-02T14:30:00Z", NULL, NULL);
    put_text(db, "agent:SecDef", NULL,
             "I decided to pursue military deterrence after Mattis convinced me", 0.5,
             "2025-11-01T10:15:00Z", NULL, NULL);
    put_text(db, "agent:SecDef", NULL,
             "Bolton's recommendations have led to unintended escalation in 3 of 5 cases", 0.95,
             "2025-11-03T09:00:00Z", "reflection", NULL);
    int rc;
    json_t *a = call(db, "context",
                     "{\"ns\":\"agent:SecDef\",\"query\":\"diplomatic engagement North Korea\","
                     "\"profile\":\"stream\",\"now\":\"2025-11-04T12:00:00Z\",\"touch\":false}",
                     &rc);
    CHECK_INT(rc, REMEM_OK);
    const char *want =
        "## Your Relevant Memories from Past Deliberations\n"
        "\n"
        "- [November 2, 2025 at 02:30 PM] I recommended diplomatic engagement on North Korea "
        "issue\n"
        "- [November 1, 2025 at 10:15 AM] I decided to pursue military deterrence after Mattis "
        "convinced me\n"
        "\n"
        "**[REFLECTION]** (November 3, 2025)\n"
        "  Bolton's recommendations have led to unintended escalation in 3 of 5 cases\n";
    const char *got = json_string_value(json_object_get(a, "text"));
    CHECK(got && strcmp(got, want) == 0);
    if (got && strcmp(got, want)) fprintf(stderr, "  got:\n%s", got);
    CHECK_INT(json_array_size(json_object_get(a, "hits")), 3);
    json_decref(a);
    /* Nothing recalled: no block at all. */
    a = call(db, "context", "{\"ns\":\"nobody\",\"query\":\"x\"}", &rc);
    CHECK_INT(rc, REMEM_OK);
    CHECK(strcmp(json_string_value(json_object_get(a, "text")), "") == 0);
    json_decref(a);
    a = call(db, "context", "{\"ns\":\"x\",\"query\":\"x\",\"format\":\"fancy\"}", &rc);
    CHECK_INT(rc, REMEM_EINVAL);
    remem_close(db);
}

static void test_prompt_formats(void) {
    size_t n;
    const prompt_format *f = prompt_formats(&n);
    CHECK(n >= 3);
    CHECK(prompt_find("stream") == &f[0]);
    CHECK(prompt_find("nope") == NULL);
    prompt_item it[2] = {{"r1", "first line\nsecond line", "reflection", "short", 0, 0.5, 0},
                         {"o1", "an observation", "observation", "short", 1762093800000LL, 0.7, 0}};
    char *s = prompt_render(prompt_find("stream"), it, 2);
    CHECK(s && strcmp(s, "## Your Relevant Memories from Past Deliberations\n\n"
                         "- [November 2, 2025 at 02:30 PM] an observation\n\n"
                         "**[REFLECTION]** (January 1, 1970)\n  first line\n  second line\n") == 0);
    free(s);
    /* Noon and midnight on the 12-hour clock. */
    prompt_item noon = {"x", "t", "observation", "short", 1762084800000LL, 0, 0}; /* 12:00 UTC */
    s = prompt_render(prompt_find("stream"), &noon, 1);
    CHECK(s && strstr(s, "[November 2, 2025 at 12:00 PM]"));
    free(s);
    prompt_item midnight = {"x", "t", "observation", "short", 1762041600000LL, 0, 0};
    s = prompt_render(prompt_find("stream"), &midnight, 1);
    CHECK(s && strstr(s, "[November 2, 2025 at 12:00 AM]"));
    free(s);
    s = prompt_render(prompt_find("plain"), it, 2);
    CHECK(s && strcmp(s, "first line\nsecond line\nan observation\n") == 0);
    free(s);
    s = prompt_render(prompt_find("stream"), it, 0);
    CHECK(s && strcmp(s, "") == 0);
    free(s);
}

static void test_cluster(void) {
    /* 2-d unit vectors: three around 0 degrees, two around 90. */
    const float v[] = {1, 0, 0.995f, 0.0998f, 0.995f, -0.0998f, 0, 1, 0.0998f, 0.995f};
    size_t mem[5], nm, central;
    CHECK_INT(extractive_cluster(v, 5, 2, 0.9, mem, &nm, &central), 0);
    CHECK_INT(nm, 3);
    CHECK_INT(mem[0], 0);
    CHECK_INT(mem[2], 2);
    CHECK_INT(central, 0);
    CHECK_INT(extractive_cluster(v, 0, 2, 0.9, mem, &nm, &central), 0);
    CHECK_INT(nm, 0);
    CHECK_INT(extractive_cluster(v, 5, 2, 1.1, mem, &nm, &central), 0);
    CHECK_INT(nm, 1);
}

/* A store with a configuration file: policies per namespace pattern. */
static remem *open_with_config(tmpdir *t, const char *yaml) {
    char path[200];
    snprintf(path, sizeof path, "%s/policy.yaml", t->dir);
    FILE *f = fopen(path, "w");
    fputs(yaml, f);
    fclose(f);
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    o.config_path = path;
    remem *db = NULL;
    int rc = remem_open(t->db, &o, &db);
    if (rc) fprintf(stderr, "  open: %s\n", remem_errmsg(db));
    unlink(path);
    return db;
}

static void test_long_requires_stm(void) {
    unsetenv("REMEM_LLM_URL");
    tmpdir t;
    tmp_make(&t);
    remem *db = open_with_config(&t, "policies:\n  \"agent:*\":\n    long_requires_stm: true\n"
                                     "    stm_size: 1\n    threshold: 0.5\n");
    CHECK(db != NULL);
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "agent:x";
    m.text = "straight to long-term";
    m.tier = "long";
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_EINVAL);
    CHECK(strstr(remem_errmsg(db), "long_requires_stm"));
    CHECK_INT(remem_add_batch(db, &m, 1, NULL, 0, NULL), REMEM_EINVAL);
    CHECK_INT(count_tier(db, "agent:x", "long"), 0);
    /* Another namespace has no such policy. */
    m.ns = "project:y";
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    /* Through short-term and migration it gets there, with the policy's
     * capacity and threshold. */
    put_text(db, "agent:x", "a", "first, important", 0.9, "2025-01-01T00:00:00Z", NULL, NULL);
    put_text(db, "agent:x", "b", "second", 0.2, "2025-01-02T00:00:00Z", NULL, NULL);
    int rc;
    json_t *a = call(db, "migrate", "{\"ns\":\"agent:x\"}", &rc);
    CHECK_INT(rc, REMEM_OK);
    CHECK_INT(json_integer_value(json_object_get(a, "stm_size")), 1);
    CHECK_INT(json_array_size(json_object_get(a, "to_long")), 1);
    json_decref(a);
    char *tr = tier_of(db, "agent:x", "a");
    CHECK(strcmp(tr, "long") == 0);
    free(tr);
    remem_close(db);
    tmp_done(&t);
}

/* reflection.every 3 with no LLM: the extractive fallback runs after the
 * 3rd add, and its own reflection does not count towards the next. */
static void test_auto_reflection(void) {
    unsetenv("REMEM_LLM_URL");
    tmpdir t;
    tmp_make(&t);
    remem *db = open_with_config(&t, "reflection:\n  every: 3\n  auto: true\n");
    CHECK(db != NULL);
    for (int i = 0; i < 5; i++) {
        char text[64];
        snprintf(text, sizeof text, "the harbour was busy with ships, day %d", i);
        put_text(db, "port", NULL, text, 0.5, NULL, NULL, NULL);
        char *s = NULL;
        remem_stats(db, "port", &s);
        json_t *j = json_loads(s, 0, NULL);
        remem_free(s);
        json_t *r = json_object_get(json_object_get(j, "by_kind"), "reflection");
        CHECK_INT(json_is_integer(r) ? json_integer_value(r) : 0, i >= 2 ? 1 : 0);
        json_decref(j);
    }
    CHECK(strcmp(remem_errmsg(db), "") == 0);
    remem_close(db);
    tmp_done(&t);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_static_load);
    RUN(test_migrate);
    RUN(test_reflect_extractive);
    RUN(test_summarize_extractive);
    RUN(test_plan_without_llm);
    RUN(test_context_stream);
    RUN(test_prompt_formats);
    RUN(test_cluster);
    RUN(test_long_requires_stm);
    RUN(test_auto_reflection);
    return TEST_EXIT();
}
