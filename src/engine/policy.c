/*
 * policy.c: the engine's side of the configuration file. src/config/
 * parses remem.yaml and resolves the policy of a namespace; here the
 * handle finds and loads the file at open (remem_options.config_path, then
 * $REMEM_CONFIG, then remem.yaml beside the store), checks what only the
 * engine knows (profile names), and applies a policy to the calls that act
 * on it: a recall takes its profile, k and overrides from the policy when
 * the query leaves them open, and memory off (the no_memory option or a
 * policy's memory_off) turns recall empty and writes into no-ops.
 *
 * Also the operation "config.show": the effective policy of a namespace
 * and where each part of it came from, so that a user can see what the
 * file means for one namespace without reading the precedence rules.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/ops.h"
#include "net/net.h"
#include "score/score.h"
#include "util/util.h"

/* remem.yaml in the folder of the store file, when the store is a file
 * (not ":memory:", not a server URI) and the file exists. */
static char *beside_store(const char *uri) {
    if (!uri || !strcmp(uri, ":memory:") || strstr(uri, "://")) return NULL;
    if (!strncmp(uri, "file:", 5)) uri += 5;
    size_t n = strcspn(uri, "?");
    const char *slash = NULL;
    for (size_t i = 0; i < n; i++)
        if (uri[i] == '/') slash = uri + i;
    size_t dir = slash ? (size_t)(slash - uri) + 1 : 0;
    char *p = malloc(dir + sizeof "remem.yaml");
    if (!p) return NULL;
    memcpy(p, uri, dir);
    memcpy(p + dir, "remem.yaml", sizeof "remem.yaml");
    if (access(p, F_OK) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

typedef struct profile_check {
    remem *db;
    const char *path;
} profile_check;

static int check_profile(void *ctx, const char *name, int line) {
    profile_check *c = ctx;
    profile p;
    if (!profile_get(name, &p)) return 0;
    strbuf names;
    sb_init(&names);
    for (const char *const *n = profile_names(); *n; n++)
        sb_printf(&names, "%s%s", n == profile_names() ? "" : ", ", *n);
    eng_fail(c->db, REMEM_EINVAL,
             "config: %s: line %d: profile: unknown profile \"%.64s\" (known: %s)",
             c->path ? c->path : "(string)", line, name, names.data ? names.data : "");
    sb_free(&names);
    return -1;
}

int eng_config_load(remem *db) {
    const char *path = db->opt.config_path;
    if (!path || !*path) path = getenv("REMEM_CONFIG");
    char *found = NULL;
    if (!path || !*path) path = found = beside_store(db->uri);
    if (!path) {
        db->conf = cfg_default();
        return db->conf ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    /* The absolute path, so that config.show says which file it was
     * wherever the command ran (the name as given when it cannot be
     * resolved: the load then says why). */
    char *abs = realpath(path, NULL);
    char err[768];
    int rc = cfg_load_file(abs ? abs : path, &db->conf, err, sizeof err);
    free(abs);
    free(found);
    if (rc) return eng_fail(db, REMEM_EINVAL, "config: %s", err);
    profile_check pc = {db, cfg_path(db->conf)};
    if (cfg_each_profile(db->conf, check_profile, &pc)) {
        cfg_free(db->conf);
        db->conf = NULL;
        return REMEM_EINVAL;
    }
    return REMEM_OK;
}

cfg *eng_config(remem *db) { return db ? db->conf : NULL; }

const char *remem_setting(remem *db, const char *key) {
    if (!db || !key) return NULL;
    if (!strcmp(key, "mcp.tools")) return cfg_mcp_tools(db->conf);
    if (!strcmp(key, "serve.ui")) return cfg_serve_ui(db->conf);
    return NULL;
}

const cfg_policy *eng_policy(remem *db, const char *ns) {
    return cfg_policy_for(db ? db->conf : NULL, ns);
}

int eng_memory_off(remem *db, const char *ns) {
    if (!db) return 0;
    if (db->opt.no_memory) return 1;
    return ns && db->conf && eng_policy(db, ns)->memory_off;
}

int remem_memory_off(remem *db, const char *ns) { return eng_memory_off(db, ns); }

/* ---- recall ---- */

static void take_num(json_t *ov, const char *key, double *field) {
    json_t *v = json_object_get(ov, key);
    if (json_is_number(v) && isnan(*field)) *field = json_number_value(v);
}

int eng_query_policy(remem *db, remem_query *q, json_t **holder) {
    *holder = NULL;
    if (!db->conf || !q->namespaces || q->n_namespaces == 0 || !q->namespaces[0]) return REMEM_OK;
    const cfg_policy *p = eng_policy(db, q->namespaces[0]);
    const char *pol = p->profile ? p->profile : "default";
    /* The overrides were written for the policy's profile: a query that
     * names another profile gets that profile as it is. */
    int same = !q->profile || !strcmp(q->profile, pol);
    if (!q->profile && p->profile) q->profile = p->profile;
    if (q->k <= 0 && p->top_k > 0) q->k = p->top_k;
    if (!same || !p->overrides_json) return REMEM_OK;
    json_t *ov = json_loads(p->overrides_json, 0, NULL);
    if (!ov) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    take_num(ov, "w_relevance", &q->w_relevance);
    take_num(ov, "w_lexical", &q->w_lexical);
    take_num(ov, "w_recency", &q->w_recency);
    take_num(ov, "w_importance", &q->w_importance);
    take_num(ov, "w_context", &q->w_context);
    take_num(ov, "min_similarity", &q->min_similarity);
    take_num(ov, "min_score", &q->min_score);
    take_num(ov, "recency_base", &q->recency_base);
    take_num(ov, "half_life_hours", &q->half_life_hours);
    json_t *v = json_object_get(ov, "candidates");
    if (json_is_integer(v) && q->candidates <= 0) q->candidates = (int)json_integer_value(v);
    v = json_object_get(ov, "normalize");
    if (json_is_boolean(v) && q->normalize < 0) q->normalize = json_is_true(v);
    v = json_object_get(ov, "tiers");
    if (json_is_string(v) && !q->tiers) q->tiers = json_string_value(v);
    *holder = ov;
    return REMEM_OK;
}

/* ---- config.show ---- */

/* A YAML-like rendering of a JSON value, for the CLI's plain output. */
static void render(strbuf *b, const char *key, json_t *v, int indent) {
    sb_printf(b, "%*s%s:", indent, "", key);
    if (json_is_object(v) && json_object_size(v) > 0) {
        sb_printf(b, "\n");
        const char *k;
        json_t *x;
        json_object_foreach(v, k, x) render(b, k, x, indent + 2);
        return;
    }
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(10));
    sb_printf(b, " %s\n", s ? s : "?");
    free(s);
}

static int op_config_show(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", "");
    char *pj = cfg_policy_json(eng_policy(db, ns));
    json_t *pol = pj ? json_loads(pj, 0, NULL) : NULL;
    free(pj);
    json_t *o = json_object();
    if (!pol || !o) {
        json_decref(pol);
        json_decref(o);
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    /* Where it came from: the patterns go beside, not inside, the policy. */
    json_t *pats = json_incref(json_object_get(pol, "patterns"));
    json_object_del(pol, "patterns");
    const char *file = cfg_path(db->conf);
    json_object_set_new(o, "ns", json_string(ns));
    json_object_set_new(o, "file", file ? json_string(file) : json_null());
    json_object_set_new(o, "patterns", pats ? pats : json_array());
    json_object_set_new(o, "memory", json_string(eng_memory_off(db, ns) ? "off" : "on"));
    if (db->opt.no_memory) json_object_set_new(o, "memory_off_by", json_string("option"));
    json_object_set_new(o, "policy", pol);
    cfg_llm l;
    cfg_llm_effective(db->conf, &l);
    json_t *lj = json_object();
    char shown[1024];
    if (l.url) net_url_redact(l.url, shown, sizeof shown); /* never its credentials */
    json_object_set_new(lj, "url", l.url ? json_string(shown) : json_null());
    json_object_set_new(lj, "model", l.model ? json_string(l.model) : json_null());
    /* Never the key itself: config.show is readable by any reader. */
    json_object_set_new(lj, "api_key", json_boolean(l.api_key != NULL));
    json_object_set_new(lj, "timeout_ms", json_integer(l.timeout_ms > 0 ? l.timeout_ms : 30000));
    json_object_set_new(lj, "retries", json_integer(l.retries >= 0 ? l.retries : 2));
    json_object_set_new(o, "llm", lj);

    strbuf b;
    sb_init(&b);
    sb_printf(&b, "namespace %s\nfile %s\npatterns", ns, file ? file : "(none: the defaults)");
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(o, "patterns"), i, x)
        sb_printf(&b, "%s %s", i ? "," : "", json_string_value(x));
    if (json_array_size(json_object_get(o, "patterns")) == 0) sb_printf(&b, " (none)");
    sb_printf(&b, "\nmemory %s\n", eng_memory_off(db, ns) ? "off" : "on");
    const char *k;
    json_object_foreach(pol, k, x) render(&b, k, x, 0);
    render(&b, "llm", lj, 0);
    json_object_set_new(o, "text", json_string(b.data ? b.data : ""));
    sb_free(&b);
    *result = o;
    return REMEM_OK;
}

const engine_op config_ops[] = {
    {{"config.show", "read",
      "The effective configuration policy of a namespace: every key with its value, the file "
      "and the patterns it came from.",
      "{\"type\":\"object\",\"required\":[\"ns\"],"
      "\"properties\":{\"ns\":{\"type\":\"string\",\"description\":\"the namespace whose "
      "policy to show\"}}}", REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "admin"},
     op_config_show},
};
const size_t config_ops_n = sizeof config_ops / sizeof config_ops[0];
