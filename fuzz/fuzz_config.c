/*
 * fuzz_config.c: libFuzzer target for remem.yaml's parser
 * (src/config/config.c over libyaml). Each input is loaded as a document:
 * a refusal must leave *out NULL and a non-empty NUL-terminated message
 * that starts with "line N:" (or names the whole-file problem); an
 * acceptance must resolve a policy for a few namespaces whose fields are
 * within the ranges the parser promises, and render it as JSON that parses.
 */
#include <assert.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"

static void check_policy(const cfg_policy *p) {
    assert(p);
    assert(p->top_k >= 0 && p->top_k <= 1000);
    assert(p->stm_size >= 0);
    assert(p->threshold >= 0 && p->threshold <= 1);
    assert(p->reflection_importance >= 0 && p->reflection_importance <= 1);
    assert(p->reflection_every >= 0);
    assert(isfinite(p->similarity_threshold) && isfinite(p->retention_days));
    for (size_t i = 0; i < p->n_hydrate_files; i++) assert(p->hydrate_files[i][0] != 0);
    if (p->overrides_json) {
        json_t *o = json_loads(p->overrides_json, 0, NULL);
        assert(json_is_object(o));
        json_decref(o);
    }
    char *js = cfg_policy_json(p);
    assert(js);
    json_t *o = json_loads(js, 0, NULL);
    assert(json_is_object(o));
    json_decref(o);
    free(js);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cfg *c = NULL;
    char err[768];
    if (cfg_load_string((const char *)data, size, &c, err, sizeof err)) {
        assert(c == NULL);
        assert(memchr(err, 0, sizeof err) != NULL && err[0] != 0);
        return 0;
    }
    static const char *const ns[] = {"", "a", "agent:President", "project:acme", "*"};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        const cfg_policy *p = cfg_policy_for(c, ns[i]);
        check_policy(p);
        assert(cfg_policy_for(c, ns[i]) == p); /* cached */
    }
    cfg_llm l;
    cfg_llm_effective(c, &l);
    /* The matcher on the input itself, as pattern and as name. */
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = 0;
        (void)cfg_pattern_match(s, "agent:President");
        (void)cfg_pattern_match("a*b*c*d", s);
        free(s);
    }
    cfg_free(c);
    return 0;
}
