/*
 * test_config.c: remem.yaml (src/config/config.c) and what the engine does
 * with it (src/engine/policy.c).
 *
 * The parser is checked with two tables: documents that load, each with
 * the field values the resolved policy of one namespace must have, and
 * documents that must fail, each with the words the error must contain
 * (the line and the key's full path). Then the seeds' own files as they
 * are written there (seed 004's config/memory.yaml, seed 003's
 * MemoryAgent block), the pattern matcher and the precedence of patterns,
 * and last the engine: a handle opened with a file recalls with its
 * namespace's policy, a bad file fails remem_open with the message, and
 * memory off (option and policy) drops writes and empties recall.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "remem.h"
#include "test.h"

static cfg *load(const char *text, char *err, size_t cap) {
    cfg *c = NULL;
    if (cfg_load_string(text, strlen(text), &c, err, cap)) return NULL;
    return c;
}

/* The value of key in the policy's overrides (NaN when absent). */
static double override_of(const cfg_policy *p, const char *key) {
    json_t *o = p->overrides_json ? json_loads(p->overrides_json, 0, NULL) : NULL;
    json_t *v = json_object_get(o, key);
    double d = json_is_number(v) ? json_number_value(v) : NAN;
    json_decref(o);
    return d;
}

/* ---- documents that load ---- */

typedef struct good_case {
    const char *name, *doc, *ns;
    const char *profile; /* NULL: not set */
    int top_k, memory_off, stm_size, reflection_every, reflection_auto, reflection_enabled;
    double threshold;
    const char *override_key; /* NULL: no override expected */
    double override_val;
    int max_episodes;
    double retention_days;
} good_case;

static const good_case GOOD[] = {
    {"empty document", "", "a", NULL, 0, 0, 0, 0, 0, 1, 0.35, NULL, 0, 0, 0},
    {"comments only", "# nothing\n", "a", NULL, 0, 0, 0, 0, 0, 1, 0.35, NULL, 0, 0, 0},
    {"top-level keys are the * policy", "profile: metaverse\ntop_k: 7\nstm_size: 20\n", "any",
     "metaverse", 7, 0, 20, 0, 0, 1, 0.35, NULL, 0, 0, 0},
    {"a pattern matches", "policies:\n  \"agent:*\":\n    profile: stream\n    top_k: 3\n",
     "agent:SecDef", "stream", 3, 0, 0, 0, 0, 1, 0.35, NULL, 0, 0, 0},
    {"a pattern does not match", "policies:\n  \"agent:*\":\n    profile: stream\n", "project:x",
     NULL, 0, 0, 0, 0, 0, 1, 0.35, NULL, 0, 0, 0},
    {"literal beats pattern beats top level",
     "top_k: 1\npolicies:\n  project:acme:\n    top_k: 9\n  \"project:*\":\n    top_k: 4\n"
     "    memory_off: true\n",
     "project:acme", NULL, 9, 1, 0, 0, 0, 1, 0.35, NULL, 0, 0, 0},
    {"more literal characters win among patterns",
     "policies:\n  \"agent:Sec*\":\n    top_k: 2\n  \"*\":\n    top_k: 8\n", "agent:SecDef", NULL,
     2, 0, 0, 0, 0, 1, 0.35, NULL, 0, 0, 0},
    {"reflection keys", "reflection:\n  every: 5\n  auto: true\n  importance: 0.9\n", "a", NULL, 0,
     0, 0, 5, 1, 1, 0.35, NULL, 0, 0, 0},
    {"overrides", "profile: default\noverrides:\n  w_lexical: 0\n  half_life_hours: 48\n", "a",
     "default", 0, 0, 0, 0, 0, 1, 0.35, "half_life_hours", 48, 0, 0},
    {"lifecycle keys", "threshold: 0.5\nlong_requires_stm: yes\nauto_rate: on\n", "a", NULL, 0, 0,
     0, 0, 0, 1, 0.5, NULL, 0, 0, 0},
    {"seed 003 keys directly in a policy",
     "policies:\n  \"project:*\":\n    maxEpisodesPerProject: 10\n    retentionDays: 30\n",
     "project:p", NULL, 0, 0, 0, 0, 0, 1, 0.35, NULL, 0, 10, 30},
    {"reflection disabled", "reflection:\n  enabled: false\n", "a", NULL, 0, 0, 0, 0, 0, 0, 0.35,
     NULL, 0, 0, 0},
    {"a pattern with nothing under it", "policies:\n  \"x:*\":\n", "x:1", NULL, 0, 0, 0, 0, 0, 1,
     0.35, NULL, 0, 0, 0},
};

static void test_good_documents(void) {
    for (size_t i = 0; i < sizeof GOOD / sizeof GOOD[0]; i++) {
        const good_case *g = &GOOD[i];
        char err[512] = "";
        cfg *c = load(g->doc, err, sizeof err);
        if (!c) {
            fprintf(stderr, "  case \"%s\": %s\n", g->name, err);
            CHECK(c != NULL);
            continue;
        }
        const cfg_policy *p = cfg_policy_for(c, g->ns);
        int ok = (g->profile ? p->profile && !strcmp(p->profile, g->profile) : !p->profile) &&
                 p->top_k == g->top_k && p->memory_off == g->memory_off &&
                 p->stm_size == g->stm_size && p->reflection_every == g->reflection_every &&
                 p->reflection_auto == g->reflection_auto &&
                 p->reflection_enabled == g->reflection_enabled &&
                 fabs(p->threshold - g->threshold) < 1e-12 &&
                 p->max_episodes_per_project == g->max_episodes &&
                 fabs(p->retention_days - g->retention_days) < 1e-12 &&
                 (!g->override_key || override_of(p, g->override_key) == g->override_val);
        if (!ok) {
            char *js = cfg_policy_json(p);
            fprintf(stderr, "  case \"%s\": got %s\n", g->name, js);
            free(js);
        }
        CHECK(ok);
        cfg_free(c);
    }
}

/* ---- documents that fail: the message names the line and the key ---- */

typedef struct bad_case {
    const char *doc;
    const char *want1, *want2; /* both must be in the message */
} bad_case;

static const bad_case BAD[] = {
    {"top_k: 5\nfrobnicate: 1\n", "line 2: frobnicate: unknown key", "known here:"},
    {"retrieval:\n  top_k: ten\n", "line 2: retrieval.top_k: expected an integer", "got \"ten\""},
    {"reflection:\n  observation_threshold: 1.5\n",
     "line 2: reflection.observation_threshold: expected an integer", "\"1.5\""},
    {"reflection:\n  enabled: maybe\n", "line 2: reflection.enabled: expected true or false",
     "\"maybe\""},
    {"decay:\n  half_life_days: \"7\"\n", "line 2: decay.half_life_days: expected a number",
     "\"7\""},
    {"decay:\n  half_life: 7\n", "line 2: decay.half_life: unknown key", "half_life_days"},
    {"policies:\n  \"agent:*\":\n    topk: 3\n", "line 3: policies.agent:*.topk: unknown key",
     "top_k"},
    {"policies:\n  \"agent:*\":\n    top_k: 0\n", "line 3: policies.agent:*.top_k", "out of range"},
    {"threshold: 2\n", "line 1: threshold: 2 is out of range", "0 to 1"},
    {"summarizationStrategy: magic\n", "line 1: summarizationStrategy: expected none, heuristic",
     "\"magic\""},
    {"memoryAgent:\n  maxEpisodes: 3\n", "line 2: memoryAgent.maxEpisodes: unknown key",
     "maxEpisodesPerProject"},
    {"llm:\n  url: http://x/v1\n  retries: lots\n", "line 3: llm.retries: expected an integer",
     "\"lots\""},
    {"llm:\n  endpoint: x\n", "line 2: llm.endpoint: unknown key", "url"},
    {"top_k: 3\ntop_k: 4\n", "line 2: top_k: given twice", "first on line 1"},
    {"- a\n- b\n", "line 1", "expected a mapping"},
    {"retrieval: 5\n", "line 1: retrieval: expected a mapping", "\"5\""},
    {"hydrate:\n  a: b\n", "line 2: hydrate: expected a file name", "mapping"},
    {"overrides:\n  w_relevance: nan\n", "line 2: overrides.w_relevance: expected a number",
     "\"nan\""},
    {"overrides:\n  k: 5\n", "line 2: overrides.k: unknown key", "w_relevance"},
    {"a: &x 1\nb: *x\n", "line 2", "aliases"},
    {"top_k: [1\n", "line 2", ""},
    {"top_k: 1\n---\ntop_k: 2\n", "only one YAML document", ""},
    {"profile: \"\"\n", "line 1: profile: expected a profile name", ""},
};

static void test_bad_documents(void) {
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        char err[512] = "";
        cfg *c = load(BAD[i].doc, err, sizeof err);
        CHECK(c == NULL);
        cfg_free(c);
        if (!strstr(err, BAD[i].want1) || !strstr(err, BAD[i].want2))
            fprintf(stderr, "  document %zu: \"%s\"\n", i, err);
        CHECK_HAS(err, BAD[i].want1);
        CHECK_HAS(err, BAD[i].want2);
    }
}

/* ---- the seeds' files, as written there ---- */

/* Seed 004's config/memory.yaml, verbatim. */
static const char SEED004[] = "retrieval:\n"
                              "  top_k: 5  # Retrieve 5 memories per agent\n"
                              "  relevance_weight: 0.4\n"
                              "  recency_weight: 0.3\n"
                              "  importance_weight: 0.3\n"
                              "\n"
                              "reflection:\n"
                              "  observation_threshold: 10  # Reflect every 10 observations\n"
                              "  enabled: true\n"
                              "\n"
                              "decay:\n"
                              "  half_life_days: 7  # Memories decay 50% every 7 days\n";

static void test_seed004_memory_yaml(void) {
    char err[512] = "";
    cfg *c = load(SEED004, err, sizeof err);
    CHECK_STR(err, "");
    if (!c) return;
    const cfg_policy *p = cfg_policy_for(c, "agent:President");
    CHECK_STR(p->profile, "stream"); /* the weights are the stream formula's */
    CHECK_INT(p->top_k, 5);
    CHECK_NEAR(override_of(p, "w_relevance"), 0.4, 1e-12);
    CHECK_NEAR(override_of(p, "w_recency"), 0.3, 1e-12);
    CHECK_NEAR(override_of(p, "w_importance"), 0.3, 1e-12);
    CHECK_NEAR(override_of(p, "half_life_hours"), 7 * 24, 1e-9);
    CHECK_INT(p->reflection_every, 10);
    CHECK_INT(p->reflection_auto, 1);
    CHECK_INT(p->reflection_enabled, 1);
    CHECK_NEAR(p->reflection_importance, 0.95, 1e-12);
    /* A profile named next to the seed's keys wins over "stream". */
    cfg_free(c);
    char doc[1024];
    snprintf(doc, sizeof doc, "profile: generative-agents\n%s", SEED004);
    c = load(doc, err, sizeof err);
    CHECK(c != NULL);
    if (c) CHECK_STR(cfg_policy_for(c, "x")->profile, "generative-agents");
    cfg_free(c);
}

/* Seed 003's MemoryAgent block as written there (JSON with a trailing
 * comma, which YAML's flow style reads). */
static const char SEED003[] = "{\n"
                              "  \"memoryAgent\": {\n"
                              "    \"maxEpisodesPerProject\": 1000,\n"
                              "    \"similarityThreshold\": 0.7,\n"
                              "    \"embeddingModel\": \"openai-ada-002\",\n"
                              "    \"summarizationStrategy\": \"llm\",\n"
                              "    \"pruneIntervalHours\": 24,\n"
                              "    \"retentionDays\": 90,\n"
                              "    \"archiveLocation\": \"~/.nootropic/archive/\",\n"
                              "    \"feedbackWeightFactor\": 1.5,\n"
                              "  },\n"
                              "}\n";

/* Issue 20, fix 8: seed 003's block brings the seed's defaults (1000
 * episodes, 90 days, 24 hours) for what it omits; a key set in the same
 * policy block wins; without the block remem's own defaults (never)
 * stay. */
static void test_seed003_block_defaults(void) {
    char err[512] = "";
    cfg *c = load("memoryAgent:\n  similarityThreshold: 0.8\n", err, sizeof err);
    CHECK_STR(err, "");
    if (c) {
        const cfg_policy *p = cfg_policy_for(c, "x");
        CHECK_INT(p->max_episodes_per_project, 1000);
        CHECK_NEAR(p->retention_days, 90, 1e-12);
        CHECK_NEAR(p->prune_interval_hours, 24, 1e-12);
        CHECK_NEAR(p->similarity_threshold, 0.8, 1e-12);
    }
    cfg_free(c);
    c = load("retentionDays: 7\nmemoryAgent:\n  pruneIntervalHours: 0\n", err, sizeof err);
    if (c) {
        const cfg_policy *p = cfg_policy_for(c, "x");
        CHECK_INT(p->max_episodes_per_project, 1000);
        CHECK_NEAR(p->retention_days, 7, 1e-12);
        CHECK_NEAR(p->prune_interval_hours, 0, 1e-12);
    }
    cfg_free(c);
    c = load("similarityThreshold: 0.8\n", err, sizeof err);
    if (c) {
        const cfg_policy *p = cfg_policy_for(c, "x");
        CHECK_INT(p->max_episodes_per_project, 0);
        CHECK_NEAR(p->retention_days, 0, 1e-12);
        CHECK_NEAR(p->prune_interval_hours, 0, 1e-12);
    }
    cfg_free(c);
}

static void test_seed003_memory_agent(void) {
    setenv("HOME", "/home/agent", 1);
    char err[512] = "";
    cfg *c = load(SEED003, err, sizeof err);
    CHECK_STR(err, "");
    if (!c) return;
    const cfg_policy *p = cfg_policy_for(c, "project:nootropic");
    CHECK_INT(p->max_episodes_per_project, 1000);
    CHECK_NEAR(p->similarity_threshold, 0.7, 1e-12);
    CHECK_STR(p->embedding_model, "openai-ada-002");
    CHECK_STR(p->summarization_strategy, "llm");
    CHECK_NEAR(p->prune_interval_hours, 24, 1e-12);
    CHECK_NEAR(p->retention_days, 90, 1e-12);
    CHECK_STR(p->archive_location, "/home/agent/.nootropic/archive/");
    CHECK_NEAR(p->feedback_weight_factor, 1.5, 1e-12);
    cfg_free(c);
}

/* The defaults when nothing is set: the values docs/config.md lists. */
static void test_defaults(void) {
    cfg *c = cfg_default();
    const cfg_policy *p = cfg_policy_for(c, "anything");
    CHECK(p->profile == NULL);
    CHECK(p->overrides_json == NULL);
    CHECK_INT(p->top_k, 0);
    CHECK_INT(p->memory_off, 0);
    CHECK_NEAR(p->threshold, 0.35, 1e-12);
    CHECK_NEAR(p->reflection_importance_sum, 150, 1e-12);
    CHECK_NEAR(p->reflection_importance, 0.95, 1e-12);
    CHECK_NEAR(p->similarity_threshold, 0.7, 1e-12);
    CHECK_NEAR(p->feedback_weight_factor, 1.5, 1e-12);
    CHECK_INT(p->max_episodes_per_project, 0);
    CHECK_NEAR(p->retention_days, 0, 0);
    CHECK_NEAR(p->prune_interval_hours, 0, 0);
    CHECK_INT(p->n_patterns, 0);
    CHECK(cfg_policy_for(NULL, "x") != NULL); /* never NULL */
    CHECK_INT(cfg_llm_get(c)->retries, -1);
    cfg_free(c);
}

/* ---- patterns ---- */

static void test_pattern_match(void) {
    static const struct {
        const char *pat, *ns;
        int want;
    } T[] = {
        {"*", "anything", 1},
        {"*", "", 1},
        {"agent:*", "agent:", 1},
        {"agent:*", "agent:SecDef", 1},
        {"agent:*", "agents", 0},
        {"agent:*", "xagent:a", 0},
        {"*:acme", "project:acme", 1},
        {"*:acme", "project:acme2", 0},
        {"a*b*c", "aXXbYYc", 1},
        {"a*b*c", "aXXbYY", 0},
        {"project:acme", "project:acme", 1},
        {"project:acme", "project:acm", 0},
        {"a?c", "abc", 0}, /* '?' is literal */
        {"a[b]", "a[b]", 1},
        {"**", "x", 1},
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        int got = cfg_pattern_match(T[i].pat, T[i].ns);
        if (got != T[i].want) fprintf(stderr, "  %s vs %s\n", T[i].pat, T[i].ns);
        CHECK_INT(got, T[i].want);
    }
}

/* Fields merge across patterns: each from the most specific block that
 * sets it; overrides merge key by key; patterns listed least specific
 * first. */
static void test_precedence_merges_fields(void) {
    const char *doc = "overrides:\n  w_lexical: 0.1\n  w_recency: 0.2\n"
                      "policies:\n"
                      "  agent:President:\n    overrides:\n      w_recency: 0.9\n"
                      "  \"agent:*\":\n    stm_size: 20\n    top_k: 4\n"
                      "  \"*\":\n    top_k: 2\n    threshold: 0.6\n";
    char err[512] = "";
    cfg *c = load(doc, err, sizeof err);
    CHECK_STR(err, "");
    if (!c) return;
    const cfg_policy *p = cfg_policy_for(c, "agent:President");
    CHECK_INT(p->top_k, 4);
    CHECK_INT(p->stm_size, 20);
    CHECK_NEAR(p->threshold, 0.6, 1e-12);
    CHECK_NEAR(override_of(p, "w_lexical"), 0.1, 1e-12);
    CHECK_NEAR(override_of(p, "w_recency"), 0.9, 1e-12);
    CHECK_INT(p->n_patterns, 4);
    if (p->n_patterns == 4) {
        CHECK_STR(p->patterns[0], "(top level)");
        CHECK_STR(p->patterns[1], "*");
        CHECK_STR(p->patterns[2], "agent:*");
        CHECK_STR(p->patterns[3], "agent:President");
    }
    /* Another agent: the same set of blocks but the literal one. */
    const cfg_policy *q = cfg_policy_for(c, "agent:SecDef");
    CHECK_NEAR(override_of(q, "w_recency"), 0.2, 1e-12);
    CHECK_INT(q->n_patterns, 3);
    /* The same namespace twice: the same (cached) policy. */
    CHECK(cfg_policy_for(c, "agent:President") == p);
    cfg_free(c);
}

static void test_llm_section(void) {
    setenv("REMEM_TEST_LLM_KEY", "sk-test", 1);
    unsetenv("REMEM_LLM_URL");
    unsetenv("REMEM_LLM_MODEL");
    unsetenv("REMEM_LLM_API_KEY");
    char err[512] = "";
    cfg *c = load("llm:\n  url: http://127.0.0.1:9/v1\n  model: tiny\n"
                  "  api_key_env: REMEM_TEST_LLM_KEY\n  timeout_ms: 1500\n  retries: 0\n",
                  err, sizeof err);
    CHECK_STR(err, "");
    if (!c) return;
    const cfg_llm *l = cfg_llm_get(c);
    CHECK_STR(l->url, "http://127.0.0.1:9/v1");
    CHECK_STR(l->model, "tiny");
    CHECK_STR(l->api_key, "sk-test");
    CHECK_INT(l->timeout_ms, 1500);
    CHECK_INT(l->retries, 0);
    cfg_llm e;
    setenv("REMEM_LLM_MODEL", "from-env", 1);
    cfg_llm_effective(c, &e);
    CHECK_STR(e.model, "from-env"); /* the environment wins */
    CHECK_STR(e.url, "http://127.0.0.1:9/v1");
    unsetenv("REMEM_LLM_MODEL");
    cfg_free(c);
}

static void test_hydrate_list(void) {
    char err[512] = "";
    cfg *c = load("policies:\n  \"advisor:*\":\n    hydrate: [a.json, b.json]\n"
                  "  advisor:one:\n    hydrate: c.json\n",
                  err, sizeof err);
    CHECK_STR(err, "");
    if (!c) return;
    const cfg_policy *p = cfg_policy_for(c, "advisor:two");
    CHECK_INT(p->n_hydrate_files, 2);
    if (p->n_hydrate_files == 2) CHECK_STR(p->hydrate_files[1], "b.json");
    p = cfg_policy_for(c, "advisor:one");
    CHECK_INT(p->n_hydrate_files, 1); /* replaced, not appended */
    if (p->n_hydrate_files == 1) CHECK_STR(p->hydrate_files[0], "c.json");
    cfg_free(c);
}

static void test_file_errors_name_the_file(void) {
    char err[512] = "";
    cfg *c = NULL;
    CHECK(cfg_load_file("/nonexistent/remem.yaml", &c, err, sizeof err) != 0);
    CHECK_HAS(err, "/nonexistent/remem.yaml");
    CHECK(c == NULL);
}

/* ---- the engine ---- */

typedef struct tdir {
    char dir[64], db[128], yaml[128];
} tdir;

static void tdir_make(tdir *t) {
    snprintf(t->dir, sizeof t->dir, "/tmp/remem-test-config-XXXXXX");
    if (!mkdtemp(t->dir)) abort();
    snprintf(t->db, sizeof t->db, "%s/store.db", t->dir);
    snprintf(t->yaml, sizeof t->yaml, "%s/remem.yaml", t->dir);
}

static void tdir_done(tdir *t) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->dir);
    if (system(cmd)) {}
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (!f) abort();
    fputs(text, f);
    fclose(f);
}

static int add(remem *db, const char *ns, const char *text, int *outcome) {
    remem_memory m;
    remem_memory_init(&m);
    m.ns = ns;
    m.text = text;
    char id[64];
    return remem_add(db, &m, id, sizeof id, outcome);
}

static remem_result *recall(remem *db, const char *ns, const char *profile) {
    remem_query q;
    remem_query_init(&q);
    q.text = "carrier group";
    q.namespaces = &ns;
    q.n_namespaces = 1;
    q.profile = profile;
    remem_result *r = NULL;
    if (remem_recall(db, &q, &r)) return NULL;
    return r;
}

static void test_engine_recall_uses_policy(void) {
    tdir t;
    tdir_make(&t);
    write_file(t.yaml, "policies:\n  \"agent:*\":\n    profile: stream\n    top_k: 2\n");
    remem_options o;
    remem_options_init(&o);
    o.config_path = t.yaml;
    remem *db = NULL;
    CHECK_INT(remem_open(t.db, &o, &db), REMEM_OK);
    for (int i = 0; i < 5; i++) {
        char text[64];
        snprintf(text, sizeof text, "the carrier group sailed, day %d", i);
        CHECK_INT(add(db, "agent:President", text, NULL), REMEM_OK);
        CHECK_INT(add(db, "project:x", text, NULL), REMEM_OK);
    }
    remem_result *r = recall(db, "agent:President", NULL);
    CHECK(r != NULL);
    if (r) {
        CHECK_STR(r->profile, "stream");
        CHECK_INT(r->n, 2);
        CHECK_INT(r->memory_off, 0);
    }
    remem_result_free(r);
    /* The query's own profile wins; top_k still applies (k is not the
     * profile's), unless the query sets k too. */
    r = recall(db, "agent:President", "default");
    if (r) CHECK_STR(r->profile, "default");
    CHECK(r && r->n == 2);
    remem_result_free(r);
    /* Another namespace: today's behaviour. */
    r = recall(db, "project:x", NULL);
    if (r) CHECK_STR(r->profile, "default");
    CHECK(r != NULL);
    if (r) CHECK_INT(r->n, 5);
    remem_result_free(r);
    remem_close(db);

    /* remem.yaml beside the store is found without being named. */
    db = NULL;
    unsetenv("REMEM_CONFIG");
    CHECK_INT(remem_open(t.db, NULL, &db), REMEM_OK);
    r = recall(db, "agent:President", NULL);
    if (r) CHECK_STR(r->profile, "stream");
    remem_result_free(r);
    remem_close(db);
    tdir_done(&t);
}

/* Seed 004's weights reach the scorer: with relevance_weight 1 and the
 * others 0, every hit's score is its relevance; with importance alone,
 * its importance (and the order follows it). */
static void test_engine_seed004_weights_score(void) {
    tdir t;
    tdir_make(&t);
    remem_options o;
    remem_options_init(&o);
    o.config_path = t.yaml;
    static const char *docs[] = {
        "retrieval:\n  relevance_weight: 1\n  recency_weight: 0\n  importance_weight: 0\n",
        "retrieval:\n  relevance_weight: 0\n  recency_weight: 0\n  importance_weight: 1\n"};
    for (int d = 0; d < 2; d++) {
        write_file(t.yaml, docs[d]);
        remem *db = NULL;
        CHECK_INT(remem_open(t.db, &o, &db), REMEM_OK);
        if (d == 0) {
            const double imp[] = {0.2, 0.9, 0.5};
            for (int i = 0; i < 3; i++) {
                remem_memory m;
                remem_memory_init(&m);
                char text[64];
                snprintf(text, sizeof text, "the carrier group, report %d", i);
                m.ns = "agent:SecDef";
                m.text = text;
                m.importance = imp[i];
                CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
            }
        }
        remem_result *r = recall(db, "agent:SecDef", NULL);
        CHECK(r && r->n == 3);
        for (size_t i = 0; r && i < r->n; i++)
            CHECK_NEAR(r->hits[i].score, d == 0 ? r->hits[i].relevance : r->hits[i].importance,
                       1e-9);
        if (d == 1 && r && r->n == 3) {
            CHECK_NEAR(r->hits[0].importance, 0.9, 1e-12);
            CHECK_NEAR(r->hits[2].importance, 0.2, 1e-12);
        }
        remem_result_free(r);
        remem_close(db);
    }
    tdir_done(&t);
}

static void test_engine_bad_config_fails_open(void) {
    tdir t;
    tdir_make(&t);
    write_file(t.yaml, "retrieval:\n  top_k: 5\nreflection:\n  observation_threshold: ten\n");
    remem *db = NULL;
    remem_options o;
    remem_options_init(&o);
    o.config_path = t.yaml;
    CHECK_INT(remem_open(t.db, &o, &db), REMEM_EINVAL);
    CHECK_HAS(remem_errmsg(db), t.yaml);
    CHECK_HAS(remem_errmsg(db), "line 4: reflection.observation_threshold: expected an integer");
    remem_close(db);
    CHECK(access(t.db, F_OK) != 0); /* nothing created */
    /* An unknown profile is the engine's check, with the line. */
    write_file(t.yaml, "policies:\n  \"a:*\":\n    profile: streem\n");
    db = NULL;
    CHECK_INT(remem_open(t.db, &o, &db), REMEM_EINVAL);
    CHECK_HAS(remem_errmsg(db), "line 3: profile: unknown profile \"streem\"");
    remem_close(db);
    /* $REMEM_CONFIG naming a missing file is an error, not a silent default. */
    setenv("REMEM_CONFIG", "/nonexistent/remem.yaml", 1);
    db = NULL;
    CHECK_INT(remem_open(":memory:", NULL, &db), REMEM_EINVAL);
    CHECK_HAS(remem_errmsg(db), "/nonexistent/remem.yaml");
    remem_close(db);
    unsetenv("REMEM_CONFIG");
    tdir_done(&t);
}

static void test_engine_memory_off_option(void) {
    remem *db = NULL;
    CHECK_INT(remem_open(":memory:", NULL, &db), REMEM_OK);
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "agent:A";
    m.text = "the carrier group sailed";
    char id[64];
    CHECK_INT(remem_add(db, &m, id, sizeof id, NULL), REMEM_OK);
    remem_close(db);

    tdir t;
    tdir_make(&t);
    remem_options o;
    remem_options_init(&o);
    o.no_memory = 1;
    db = NULL;
    CHECK_INT(remem_open(t.db, &o, &db), REMEM_OK);
    CHECK_INT(remem_memory_off(db, "agent:A"), 1);
    int outcome = 0;
    CHECK_INT(add(db, "agent:A", "the carrier group sailed", &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_DROPPED);
    remem_result *r = recall(db, "agent:A", NULL);
    CHECK(r != NULL);
    if (r) {
        CHECK_INT(r->n, 0);
        CHECK_INT(r->memory_off, 1);
        char *js = remem_result_to_json(r);
        CHECK_HAS(js, "\"memory\":\"off\"");
        remem_free(js);
    }
    remem_result_free(r);
    char *stats = NULL;
    CHECK_INT(remem_stats(db, "agent:A", &stats), REMEM_OK);
    CHECK_HAS(stats, "\"memories\":0");
    remem_free(stats);
    char *ans = remem_write_result_json("add", "agent:A", "", REMEM_DROPPED, NULL);
    CHECK_STR(ans, "{\"ns\":\"agent:A\",\"outcome\":\"dropped\",\"memory\":\"off\"}");
    remem_free(ans);
    /* An operation's answer says so too. */
    char *out = NULL;
    CHECK_INT(remem_call(db, "config.show", "{\"ns\":\"agent:A\"}", 16, &out), REMEM_OK);
    CHECK_HAS(out, "\"memory\":\"off\"");
    remem_free(out);
    remem_close(db);
    /* An answer whose "memory" is its content keeps it, and says
     * "memory_off": true beside it. */
    db = NULL;
    CHECK_INT(remem_open(t.db, NULL, &db), REMEM_OK);
    CHECK_INT(add(db, "agent:A", "kept while memory was on", NULL), REMEM_OK);
    char gid[64] = "";
    remem_result *rr = recall(db, "agent:A", NULL);
    if (rr && rr->n) snprintf(gid, sizeof gid, "%s", rr->hits[0].mem.id);
    remem_result_free(rr);
    remem_close(db);
    db = NULL;
    CHECK_INT(remem_open(t.db, &o, &db), REMEM_OK);
    char args[160];
    snprintf(args, sizeof args, "{\"ns\":\"agent:A\",\"id\":\"%s\"}", gid);
    out = NULL;
    CHECK_INT(remem_call(db, "memory.get", args, strlen(args), &out), REMEM_OK);
    CHECK_HAS(out, "\"memory_off\":true");
    CHECK_HAS(out, "kept while memory was on");
    remem_free(out);
    remem_close(db);
    tdir_done(&t);
}

static void test_engine_memory_off_policy(void) {
    tdir t;
    tdir_make(&t);
    write_file(t.yaml, "policies:\n  \"baseline:*\":\n    memory_off: true\n");
    remem_options o;
    remem_options_init(&o);
    o.config_path = t.yaml;
    remem *db = NULL;
    CHECK_INT(remem_open(t.db, &o, &db), REMEM_OK);
    int outcome = 0;
    CHECK_INT(add(db, "memory:run", "the carrier group sailed", &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_ADDED);
    CHECK_INT(add(db, "baseline:run", "the carrier group sailed", &outcome), REMEM_OK);
    CHECK_INT(outcome, REMEM_DROPPED);
    /* A batch: the memory-off namespace's memory dropped, the other kept. */
    remem_memory ms[2];
    remem_memory_init(&ms[0]);
    remem_memory_init(&ms[1]);
    ms[0].ns = "baseline:run";
    ms[0].text = "a carrier group in the batch";
    ms[1].ns = "memory:run";
    ms[1].text = "a carrier group in the batch";
    char ids[2][64];
    CHECK_INT(remem_add_batch(db, ms, 2, &ids[0][0], 64, NULL), REMEM_OK);
    CHECK_STR(ids[0], "");
    CHECK(ids[1][0] != 0);
    remem_result *r = recall(db, "memory:run", NULL);
    CHECK(r && r->n == 2 && r->memory_off == 0);
    remem_result_free(r);
    r = recall(db, "baseline:run", NULL);
    CHECK(r && r->n == 0 && r->memory_off == 1);
    remem_result_free(r);
    /* Both namespaces in one query: the off one is left out, and said so. */
    const char *both[] = {"memory:run", "baseline:run"};
    remem_query q;
    remem_query_init(&q);
    q.text = "carrier";
    q.namespaces = both;
    q.n_namespaces = 2;
    r = NULL;
    CHECK_INT(remem_recall(db, &q, &r), REMEM_OK);
    CHECK(r && r->n == 2 && r->memory_off == 2);
    remem_result_free(r);
    /* Update and forget of a memory in an "on" namespace still work; in an
     * "off" namespace nothing changes. */
    CHECK_INT(remem_forget(db, "memory:run", ids[1], 0), REMEM_OK);
    remem_record *rec = NULL;
    CHECK_INT(remem_get(db, "memory:run", ids[1], &rec), REMEM_OK);
    if (rec) CHECK_STR(remem_record_memory(rec)->tier, "archived");
    remem_record_free(rec);
    CHECK_INT(remem_clear(db, "baseline:run", NULL), REMEM_OK);
    char *out = NULL;
    CHECK_INT(remem_call(db, "config.show", "{\"ns\":\"baseline:x\"}", 19, &out), REMEM_OK);
    json_t *o2 = out ? json_loads(out, 0, NULL) : NULL;
    CHECK_STR(json_string_value(json_object_get(o2, "memory")), "off");
    CHECK_STR(json_string_value(json_object_get(o2, "file")), t.yaml);
    CHECK_STR(json_string_value(json_array_get(json_object_get(o2, "patterns"), 0)), "baseline:*");
    CHECK(json_is_true(json_object_get(json_object_get(o2, "policy"), "memory_off")));
    CHECK_HAS(json_string_value(json_object_get(o2, "text")), "memory off");
    json_decref(o2);
    remem_free(out);
    remem_close(db);
    tdir_done(&t);
}

/* With no file, config.show gives the defaults and says there is none. */
static void test_config_show_defaults(void) {
    unsetenv("REMEM_CONFIG");
    remem *db = NULL;
    CHECK_INT(remem_open(":memory:", NULL, &db), REMEM_OK);
    char *out = NULL;
    CHECK_INT(remem_call(db, "config.show", "{\"ns\":\"a\"}", 10, &out), REMEM_OK);
    json_t *o = out ? json_loads(out, 0, NULL) : NULL;
    CHECK(json_is_null(json_object_get(o, "file")));
    CHECK_INT(json_array_size(json_object_get(o, "patterns")), 0);
    CHECK_STR(json_string_value(json_object_get(json_object_get(o, "policy"), "profile")),
              "default");
    CHECK_STR(json_string_value(json_object_get(o, "memory")), "on");
    CHECK(json_is_false(json_object_get(json_object_get(o, "llm"), "api_key")));
    json_decref(o);
    remem_free(out);
    /* The schema refuses an unknown argument. */
    CHECK_INT(remem_call(db, "config.show", "{\"ns\":\"a\",\"x\":1}", 16, &out), REMEM_EINVAL);
    remem_close(db);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    unsetenv("REMEM_CONFIG");
    RUN(test_good_documents);
    RUN(test_bad_documents);
    RUN(test_seed004_memory_yaml);
    RUN(test_seed003_memory_agent);
    RUN(test_seed003_block_defaults);
    RUN(test_defaults);
    RUN(test_pattern_match);
    RUN(test_precedence_merges_fields);
    RUN(test_llm_section);
    RUN(test_hydrate_list);
    RUN(test_file_errors_name_the_file);
    RUN(test_engine_recall_uses_policy);
    RUN(test_engine_seed004_weights_score);
    RUN(test_engine_bad_config_fails_open);
    RUN(test_engine_memory_off_option);
    RUN(test_engine_memory_off_policy);
    RUN(test_config_show_defaults);
    return TEST_EXIT();
}
