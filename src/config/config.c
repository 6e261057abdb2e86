/*
 * config.c: remem.yaml, read with libyaml. Three steps:
 *
 *   1. libyaml's events become a small tree (ynode) that keeps each
 *      node's line, built with an explicit stack and a depth limit, so no
 *      document (however nested) can exhaust the C stack; aliases are
 *      refused, so a document cannot grow when walked.
 *   2. The tree is walked against the key tables below: every key known,
 *      every value of the right type and in range, or an error that names
 *      the key's full path and its line. The document's own keys are the
 *      `*` policy (so seed 004's config/memory.yaml is a whole remem.yaml
 *      as it stands); "policies:" holds one block per namespace pattern;
 *      "llm:" the endpoint.
 *   3. cfg_policy_for overlays the blocks that match a namespace, the
 *      least specific first, keeping for each field the value of the most
 *      specific block that sets it. Resolved policies are cached by the set
 *      of blocks that matched (not by namespace), so the cache stays as
 *      small as the file, whatever namespaces are asked for.
 *
 * A part: it knows nothing of profiles or the store; the engine
 * (src/engine/policy.c) checks profile names against the scorer and acts
 * on the policy.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>
#include <yaml.h>

#include "config/config.h"
#include "util/tz.h"

#define CFG_MAX_DEPTH 32
#define CFG_MAX_BYTES (4u << 20)

/* ------------------------------------------------------------------ */
/* 1. the tree                                                         */
/* ------------------------------------------------------------------ */

enum { Y_SCALAR, Y_MAP, Y_SEQ };

typedef struct ynode {
    int type;
    int line;            /* 1-based */
    int plain;           /* a scalar written without quotes (may be a number, a bool) */
    char *s;             /* scalar text */
    struct ynode **kids; /* map: key, value, key, value...; seq: items */
    size_t n, cap;
} ynode;

static void ynode_free(ynode *n) {
    if (!n) return;
    for (size_t i = 0; i < n->n; i++) ynode_free(n->kids[i]);
    free(n->kids);
    free(n->s);
    free(n);
}

static int ynode_push(ynode *parent, ynode *kid) {
    if (parent->n == parent->cap) {
        size_t cap = parent->cap ? 2 * parent->cap : 8;
        ynode **k = realloc(parent->kids, cap * sizeof *k);
        if (!k) return -1;
        parent->kids = k;
        parent->cap = cap;
    }
    parent->kids[parent->n++] = kid;
    return 0;
}

static const char *kind_name(const ynode *n) {
    if (n->type == Y_MAP) return "a mapping";
    if (n->type == Y_SEQ) return "a list";
    return "a scalar";
}

/* Parse text into a tree. NULL root for an empty document. */
static int build_tree(const char *text, size_t len, ynode **root, char *err, size_t cap) {
    *root = NULL;
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        snprintf(err, cap, "out of memory");
        return -1;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    ynode *stack[CFG_MAX_DEPTH + 1];
    int depth = 0, rc = -1, docs = 0, done = 0;
    ynode *top = NULL;
    while (!done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            snprintf(err, cap, "line %d: %s%s%s", (int)p.problem_mark.line + 1,
                     p.problem ? p.problem : "malformed YAML", p.context ? " " : "",
                     p.context ? p.context : "");
            goto out;
        }
        int line = (int)ev.start_mark.line + 1;
        ynode *nn = NULL;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT: done = 1; break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1) {
                snprintf(err, cap, "line %d: only one YAML document is allowed", line);
                yaml_event_delete(&ev);
                goto out;
            }
            break;
        case YAML_ALIAS_EVENT:
            snprintf(err, cap, "line %d: aliases (*name) are not supported in remem.yaml", line);
            yaml_event_delete(&ev);
            goto out;
        case YAML_SCALAR_EVENT:
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT:
            nn = calloc(1, sizeof *nn);
            if (!nn) {
                snprintf(err, cap, "out of memory");
                yaml_event_delete(&ev);
                goto out;
            }
            nn->line = line;
            if (ev.type == YAML_SCALAR_EVENT) {
                nn->type = Y_SCALAR;
                nn->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
                nn->s = malloc(ev.data.scalar.length + 1);
                if (nn->s) {
                    memcpy(nn->s, ev.data.scalar.value, ev.data.scalar.length);
                    nn->s[ev.data.scalar.length] = 0;
                    /* A NUL inside a scalar would cut keys and values short
                     * without anyone noticing. */
                    if (strlen(nn->s) != ev.data.scalar.length) {
                        snprintf(err, cap, "line %d: a NUL character inside a value", line);
                        ynode_free(nn);
                        yaml_event_delete(&ev);
                        goto out;
                    }
                }
            } else {
                nn->type = ev.type == YAML_MAPPING_START_EVENT ? Y_MAP : Y_SEQ;
            }
            if (ev.type == YAML_SCALAR_EVENT && !nn->s) {
                snprintf(err, cap, "out of memory");
                ynode_free(nn);
                yaml_event_delete(&ev);
                goto out;
            }
            if (depth == 0) {
                top = nn;
            } else if (ynode_push(stack[depth - 1], nn)) {
                snprintf(err, cap, "out of memory");
                ynode_free(nn);
                yaml_event_delete(&ev);
                goto out;
            }
            if (nn->type != Y_SCALAR) {
                if (depth == CFG_MAX_DEPTH) {
                    snprintf(err, cap, "line %d: nested more than %d levels deep", line,
                             CFG_MAX_DEPTH);
                    yaml_event_delete(&ev);
                    goto out;
                }
                stack[depth++] = nn;
            }
            break;
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
            if (depth > 0) depth--;
            break;
        default: break;
        }
        yaml_event_delete(&ev);
    }
    *root = top;
    top = NULL;
    rc = 0;
out:
    ynode_free(top);
    yaml_parser_delete(&p);
    return rc;
}

/* ------------------------------------------------------------------ */
/* 2. the key tables and the walk                                      */
/* ------------------------------------------------------------------ */

/* One bit per cfg_policy field a block can set. */
enum {
    F_PROFILE = 1u << 0,
    F_TOPK = 1u << 1,
    F_MEMOFF = 1u << 2,
    F_AUTORATE = 1u << 3,
    F_STM = 1u << 4,
    F_THRESHOLD = 1u << 5,
    F_LRS = 1u << 6,
    F_REFL_ENABLED = 1u << 7,
    F_REFL_AUTO = 1u << 8,
    F_REFL_SUM = 1u << 9,
    F_REFL_EVERY = 1u << 10,
    F_REFL_IMP = 1u << 11,
    F_HYDRATE = 1u << 12,
    F_MAXEP = 1u << 13,
    F_SIM = 1u << 14,
    F_SUMSTRAT = 1u << 15,
    F_PRUNE = 1u << 16,
    F_RETENTION = 1u << 17,
    F_ARCHIVE = 1u << 18,
    F_FWF = 1u << 19,
    F_EMBMODEL = 1u << 20,
    F_STATIC_IMM = 1u << 21,
    F_MIG_IMP = 1u << 22,
    F_REFL_SHORT = 1u << 23,
    F_TZ = 1u << 24,
    F_UNRATED = 1u << 25,
};

/* One block of the file: the document's own keys, or one pattern's. */
typedef struct block {
    char *pattern; /* NULL: the document's own keys ("*", least specific) */
    int line;
    size_t order;
    unsigned set;        /* F_ bits given */
    int seed004_weights; /* retrieval.*_weight or decay.* given */
    int profile_line;
    cfg_policy p;      /* the values given (the others unused) */
    json_t *overrides; /* the override keys given, or NULL */
} block;

typedef struct resolved {
    char *key; /* the indices of the blocks applied */
    cfg_policy p;
    struct resolved *next;
} resolved;

struct cfg {
    char *path;
    cfg_llm llm;
    char *llm_api_key_env;
    int cache_max_mb; /* cache.max_mb; 0: not set */
    char *mcp_tools; /* mcp.tools: the MCP tool groups to offer */
    int serve_ui;    /* serve.ui: 0 unset, 1 true, 2 false (the inspector page) */
    block top;
    block *blocks;
    size_t n_blocks;
    pthread_mutex_t mu;
    resolved *cache;
};

typedef struct walk {
    char *err;
    size_t cap;
} walk;

static int fail(walk *w, const ynode *n, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(walk *w, const ynode *n, const char *path, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(w->err, w->cap, "line %d: %s: %s", n ? n->line : 1, path, msg);
    return -1;
}

static int is_null(const ynode *v) {
    return v->type == Y_SCALAR && v->plain &&
           (!v->s[0] || !strcmp(v->s, "~") || !strcasecmp(v->s, "null"));
}

/* The value as the message shows it: "ten", or "a mapping". */
static void shown(const ynode *v, char *buf, size_t cap) {
    if (v->type != Y_SCALAR)
        snprintf(buf, cap, "%s", kind_name(v));
    else if (is_null(v))
        snprintf(buf, cap, "nothing (null)");
    else
        snprintf(buf, cap, "\"%.48s%s\"", v->s, strlen(v->s) > 48 ? "..." : "");
}

static int want(walk *w, const ynode *v, const char *path, const char *what) {
    char b[80];
    shown(v, b, sizeof b);
    return fail(w, v, path, "expected %s, got %s", what, b);
}

static int get_bool(walk *w, const ynode *v, const char *path, int *out) {
    if (v->type == Y_SCALAR && v->plain) {
        static const char *yes[] = {"true", "yes", "on"}, *no[] = {"false", "no", "off"};
        for (int i = 0; i < 3; i++) {
            if (!strcasecmp(v->s, yes[i])) return *out = 1, 0;
            if (!strcasecmp(v->s, no[i])) return *out = 0, 0;
        }
    }
    return want(w, v, path, "true or false");
}

static int get_int(walk *w, const ynode *v, const char *path, long lo, long hi, int *out) {
    if (v->type == Y_SCALAR && v->plain && v->s[0]) {
        char *end;
        errno = 0;
        long x = strtol(v->s, &end, 10);
        if (!*end && !errno) {
            if (x < lo || x > hi)
                return fail(w, v, path, "%ld is out of range (%ld to %ld)", x, lo, hi);
            *out = (int)x;
            return 0;
        }
    }
    return want(w, v, path, "an integer");
}

static int get_num(walk *w, const ynode *v, const char *path, double lo, double hi, double *out) {
    if (v->type == Y_SCALAR && v->plain && v->s[0]) {
        char *end;
        errno = 0;
        double x = strtod(v->s, &end);
        /* strtod also reads "nan", "inf" and hex: a config wants decimals. */
        if (!*end && !errno && isfinite(x) && !strpbrk(v->s, "xXnN")) {
            if (x < lo || x > hi)
                return fail(w, v, path, "%g is out of range (%g to %g)", x, lo, hi);
            *out = x;
            return 0;
        }
    }
    return want(w, v, path, "a number");
}

/* A string (quoted or plain). null: *out NULL. */
static int get_str(walk *w, const ynode *v, const char *path, char **out) {
    if (v->type != Y_SCALAR) return want(w, v, path, "a string");
    free(*out);
    *out = NULL;
    if (is_null(v)) return 0;
    if (!(*out = strdup(v->s))) return fail(w, v, path, "out of memory");
    return 0;
}

static int need_map(walk *w, const ynode *v, const char *path) {
    return v->type == Y_MAP ? 0 : want(w, v, path, "a mapping of keys");
}

/* The path of key k under prefix ("reflection" + "enabled"). */
static void join(char *dst, size_t cap, const char *prefix, const char *k) {
    /* Bounded pieces: a path in a message, not a key to look up. */
    snprintf(dst, cap, "%.160s%s%.80s", prefix, prefix[0] ? "." : "", k);
}

/* Walk a mapping's pairs: a scalar key each, no key twice. */
static int check_keys(walk *w, const ynode *m, const char *prefix) {
    for (size_t i = 0; i + 1 < m->n; i += 2) {
        const ynode *k = m->kids[i];
        char path[256];
        if (k->type != Y_SCALAR)
            return fail(w, k, prefix[0] ? prefix : "(top level)",
                        "a key must be a plain name, got %s", kind_name(k));
        for (size_t j = 0; j < i; j += 2)
            if (!strcmp(m->kids[j]->s, k->s)) {
                join(path, sizeof path, prefix, k->s);
                return fail(w, k, path, "given twice (first on line %d)", m->kids[j]->line);
            }
    }
    return 0;
}

static int unknown(walk *w, const ynode *k, const char *path, const char *known) {
    return fail(w, k, path, "unknown key (known here: %s)", known);
}

/* ---- recall overrides ---- */

static const struct {
    const char *name;
    char type; /* n number, i integer, b boolean, s string */
    double lo, hi;
} OVERRIDES[] = {
    {"w_relevance", 'n', 0, 1e6},
    {"w_lexical", 'n', 0, 1e6},
    {"w_recency", 'n', 0, 1e6},
    {"w_importance", 'n', 0, 1e6},
    {"w_context", 'n', 0, 1e6},
    {"min_similarity", 'n', -1, 1},
    {"min_score", 'n', -1e6, 1e6},
    {"recency_base", 'n', 1e-9, 1},
    {"half_life_hours", 'n', 1e-9, 1e7},
    {"candidates", 'i', 1, 100000},
    {"normalize", 'b', 0, 1},
    {"tiers", 's', 0, 0},
};
#define N_OVERRIDES (sizeof OVERRIDES / sizeof OVERRIDES[0])

static int set_override(walk *w, block *b, const ynode *at, const char *path, const char *key,
                        json_t *val) {
    if (!val) return fail(w, at, path, "out of memory");
    if (!b->overrides && !(b->overrides = json_object())) {
        json_decref(val);
        return fail(w, at, path, "out of memory");
    }
    json_object_set_new(b->overrides, key, val);
    return 0;
}

static int parse_overrides(walk *w, const ynode *m, const char *prefix, block *b) {
    if (need_map(w, m, prefix) || check_keys(w, m, prefix)) return -1;
    for (size_t i = 0; i + 1 < m->n; i += 2) {
        const ynode *k = m->kids[i], *v = m->kids[i + 1];
        char path[256];
        join(path, sizeof path, prefix, k->s);
        size_t o = 0;
        while (o < N_OVERRIDES && strcmp(OVERRIDES[o].name, k->s)) o++;
        if (o == N_OVERRIDES)
            return unknown(w, k, path,
                           "w_relevance, w_lexical, w_recency, w_importance, w_context, "
                           "min_similarity, min_score, recency_base, half_life_hours, candidates, "
                           "normalize, tiers");
        json_t *j = NULL;
        double d;
        int x;
        char *s = NULL;
        switch (OVERRIDES[o].type) {
        case 'n':
            if (get_num(w, v, path, OVERRIDES[o].lo, OVERRIDES[o].hi, &d)) return -1;
            j = json_real(d);
            break;
        case 'i':
            if (get_int(w, v, path, (long)OVERRIDES[o].lo, (long)OVERRIDES[o].hi, &x)) return -1;
            j = json_integer(x);
            break;
        case 'b':
            if (get_bool(w, v, path, &x)) return -1;
            j = json_boolean(x);
            break;
        default:
            if (get_str(w, v, path, &s)) return -1;
            if (!s) return want(w, v, path, "a comma-separated list of tiers");
            j = json_string(s);
            free(s);
        }
        if (set_override(w, b, k, path, k->s, j)) return -1;
    }
    return 0;
}

/* ---- seed 004: config/memory.yaml ---- */

static int parse_retrieval(walk *w, const ynode *m, const char *prefix, block *b) {
    if (need_map(w, m, prefix) || check_keys(w, m, prefix)) return -1;
    static const struct {
        const char *seed, *ours;
    } weights[] = {{"relevance_weight", "w_relevance"},
                   {"recency_weight", "w_recency"},
                   {"importance_weight", "w_importance"}};
    for (size_t i = 0; i + 1 < m->n; i += 2) {
        const ynode *k = m->kids[i], *v = m->kids[i + 1];
        char path[256];
        join(path, sizeof path, prefix, k->s);
        if (!strcmp(k->s, "top_k")) {
            if (get_int(w, v, path, 1, 1000, &b->p.top_k)) return -1;
            b->set |= F_TOPK;
            continue;
        }
        size_t j = 0;
        while (j < 3 && strcmp(weights[j].seed, k->s)) j++;
        if (j == 3)
            return unknown(w, k, path,
                           "top_k, relevance_weight, recency_weight, importance_weight");
        double d;
        if (get_num(w, v, path, 0, 1e6, &d)) return -1;
        if (set_override(w, b, k, path, weights[j].ours, json_real(d))) return -1;
        b->seed004_weights = 1;
    }
    return 0;
}

static int parse_decay(walk *w, const ynode *m, const char *prefix, block *b) {
    if (need_map(w, m, prefix) || check_keys(w, m, prefix)) return -1;
    for (size_t i = 0; i + 1 < m->n; i += 2) {
        const ynode *k = m->kids[i], *v = m->kids[i + 1];
        char path[256];
        join(path, sizeof path, prefix, k->s);
        if (strcmp(k->s, "half_life_days")) return unknown(w, k, path, "half_life_days");
        double d;
        if (get_num(w, v, path, 1e-6, 4e5, &d)) return -1;
        if (set_override(w, b, k, path, "half_life_hours", json_real(d * 24))) return -1;
        b->seed004_weights = 1;
    }
    return 0;
}

static int parse_reflection(walk *w, const ynode *m, const char *prefix, block *b) {
    if (need_map(w, m, prefix) || check_keys(w, m, prefix)) return -1;
    for (size_t i = 0; i + 1 < m->n; i += 2) {
        const ynode *k = m->kids[i], *v = m->kids[i + 1];
        char path[256];
        join(path, sizeof path, prefix, k->s);
        cfg_policy *p = &b->p;
        if (!strcmp(k->s, "enabled")) {
            if (get_bool(w, v, path, &p->reflection_enabled)) return -1;
            b->set |= F_REFL_ENABLED;
        } else if (!strcmp(k->s, "auto")) {
            if (get_bool(w, v, path, &p->reflection_auto)) return -1;
            b->set |= F_REFL_AUTO;
        } else if (!strcmp(k->s, "importance_sum")) {
            if (get_num(w, v, path, 0, 1e9, &p->reflection_importance_sum)) return -1;
            b->set |= F_REFL_SUM;
        } else if (!strcmp(k->s, "every") || !strcmp(k->s, "observation_threshold")) {
            if (get_int(w, v, path, 0, 1000000, &p->reflection_every)) return -1;
            b->set |= F_REFL_EVERY;
            /* Seed 004 reflects "automatically" after every N: its key
             * turns the trigger on unless the block says otherwise. */
            if (!strcmp(k->s, "observation_threshold") && !(b->set & F_REFL_AUTO)) {
                p->reflection_auto = p->reflection_every > 0;
                b->set |= F_REFL_AUTO;
            }
        } else if (!strcmp(k->s, "importance")) {
            if (get_num(w, v, path, 0, 1, &p->reflection_importance)) return -1;
            b->set |= F_REFL_IMP;
        } else {
            return unknown(w, k, path,
                           "enabled, auto, importance_sum, every, observation_threshold, "
                           "importance");
        }
    }
    return 0;
}

/* ---- seed 003: the MemoryAgent keys ---- */

/* 1 when k is one of seed 003's keys (handled), 0 when not, -1 on error. */
static int parse_seed003_key(walk *w, const ynode *k, const ynode *v, const char *path, block *b) {
    cfg_policy *p = &b->p;
    if (!strcmp(k->s, "maxEpisodesPerProject")) {
        if (get_int(w, v, path, 0, 2000000000, &p->max_episodes_per_project)) return -1;
        b->set |= F_MAXEP;
    } else if (!strcmp(k->s, "similarityThreshold")) {
        if (get_num(w, v, path, -1, 1, &p->similarity_threshold)) return -1;
        b->set |= F_SIM;
    } else if (!strcmp(k->s, "summarizationStrategy")) {
        if (v->type != Y_SCALAR ||
            (strcmp(v->s, "none") && strcmp(v->s, "heuristic") && strcmp(v->s, "llm")))
            return want(w, v, path, "none, heuristic or llm");
        if (get_str(w, v, path, &p->summarization_strategy)) return -1;
        b->set |= F_SUMSTRAT;
    } else if (!strcmp(k->s, "pruneIntervalHours")) {
        if (get_num(w, v, path, 0, 1e6, &p->prune_interval_hours)) return -1;
        b->set |= F_PRUNE;
    } else if (!strcmp(k->s, "retentionDays")) {
        if (get_num(w, v, path, 0, 1e6, &p->retention_days)) return -1;
        b->set |= F_RETENTION;
    } else if (!strcmp(k->s, "archiveLocation")) {
        if (get_str(w, v, path, &p->archive_location)) return -1;
        /* `~/...` as seed 003 writes it: the user's home. */
        const char *home = getenv("HOME");
        if (p->archive_location && !strncmp(p->archive_location, "~/", 2) && home && *home) {
            size_t n = strlen(home) + strlen(p->archive_location);
            char *x = malloc(n);
            if (!x) return fail(w, v, path, "out of memory");
            snprintf(x, n, "%s%s", home, p->archive_location + 1);
            free(p->archive_location);
            p->archive_location = x;
        }
        b->set |= F_ARCHIVE;
    } else if (!strcmp(k->s, "feedbackWeightFactor")) {
        if (get_num(w, v, path, 0, 1e6, &p->feedback_weight_factor)) return -1;
        b->set |= F_FWF;
    } else if (!strcmp(k->s, "embeddingModel")) {
        if (get_str(w, v, path, &p->embedding_model)) return -1;
        b->set |= F_EMBMODEL;
    } else {
        return 0;
    }
    return 1;
}

#define SEED003_KEYS                                                                      \
    "maxEpisodesPerProject, similarityThreshold, embeddingModel, summarizationStrategy, " \
    "pruneIntervalHours, retentionDays, archiveLocation, feedbackWeightFactor"

static int parse_memory_agent(walk *w, const ynode *m, const char *prefix, block *b) {
    if (need_map(w, m, prefix) || check_keys(w, m, prefix)) return -1;
    /* Seed 003's block brings the seed's own defaults: what it omits of
     * maxEpisodesPerProject, retentionDays and pruneIntervalHours is 1000,
     * 90 and 24, as the seed's MemoryAgent has them (remem's defaults,
     * without the block, prune nothing). A key the block (or the same
     * policy block, before it) sets wins. */
    cfg_policy *p = &b->p;
    if (!(b->set & F_MAXEP)) p->max_episodes_per_project = 1000, b->set |= F_MAXEP;
    if (!(b->set & F_RETENTION)) p->retention_days = 90, b->set |= F_RETENTION;
    if (!(b->set & F_PRUNE)) p->prune_interval_hours = 24, b->set |= F_PRUNE;
    for (size_t i = 0; i + 1 < m->n; i += 2) {
        char path[256];
        join(path, sizeof path, prefix, m->kids[i]->s);
        int r = parse_seed003_key(w, m->kids[i], m->kids[i + 1], path, b);
        if (r < 0) return -1;
        if (r == 0) return unknown(w, m->kids[i], path, SEED003_KEYS);
    }
    return 0;
}

/* ---- a policy block ---- */

static int parse_hydrate(walk *w, const ynode *v, const char *path, block *b) {
    cfg_policy *p = &b->p;
    const ynode *one = v->type == Y_SCALAR ? v : NULL;
    if (!one && v->type != Y_SEQ) return want(w, v, path, "a file name or a list of them");
    size_t n = one ? 1 : v->n;
    for (size_t i = 0; i < p->n_hydrate_files; i++) free(p->hydrate_files[i]);
    free(p->hydrate_files);
    p->n_hydrate_files = 0;
    p->hydrate_files = calloc(n ? n : 1, sizeof *p->hydrate_files);
    if (!p->hydrate_files) return fail(w, v, path, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const ynode *f = one ? one : v->kids[i];
        char *s = NULL;
        if (get_str(w, f, path, &s)) return -1;
        if (!s || !*s) {
            free(s);
            return want(w, f, path, "a file name");
        }
        p->hydrate_files[p->n_hydrate_files++] = s;
    }
    b->set |= F_HYDRATE;
    return 0;
}

#define POLICY_KEYS                                                                              \
    "profile, overrides, top_k, memory_off, auto_rate, stm_size, threshold, long_requires_stm, " \
    "static_immutable, migrate_by_importance, reflect_short_only, mark_unrated, time_zone, "  \
    "reflection, retrieval, decay, hydrate, memoryAgent, " SEED003_KEYS

static int parse_policies(walk *w, const ynode *m, cfg *c);
static int parse_llm(walk *w, const ynode *m, cfg *c);
static int parse_cache(walk *w, const ynode *m, cfg *c);
static int parse_mcp(walk *w, const ynode *m, cfg *c);
static int parse_serve(walk *w, const ynode *m, cfg *c);

/* The keys of one block (top: the document, which also has llm and
 * policies). */
static int parse_block(walk *w, const ynode *m, const char *prefix, block *b, cfg *c, int top) {
    if (need_map(w, m, prefix[0] ? prefix : "(top level)") || check_keys(w, m, prefix)) return -1;
    for (size_t i = 0; i + 1 < m->n; i += 2) {
        const ynode *k = m->kids[i], *v = m->kids[i + 1];
        char path[256];
        join(path, sizeof path, prefix, k->s);
        cfg_policy *p = &b->p;
        int r = parse_seed003_key(w, k, v, path, b);
        if (r < 0) return -1;
        if (r > 0) continue;
        if (top && !strcmp(k->s, "llm")) {
            r = parse_llm(w, v, c);
        } else if (top && !strcmp(k->s, "cache")) {
            r = parse_cache(w, v, c);
        } else if (top && !strcmp(k->s, "mcp")) {
            r = parse_mcp(w, v, c);
        } else if (top && !strcmp(k->s, "serve")) {
            r = parse_serve(w, v, c);
        } else if (top && !strcmp(k->s, "policies")) {
            r = parse_policies(w, v, c);
        } else if (!strcmp(k->s, "profile")) {
            r = get_str(w, v, path, &p->profile);
            if (!r && (!p->profile || !p->profile[0])) r = want(w, v, path, "a profile name");
            b->set |= F_PROFILE;
            b->profile_line = k->line;
        } else if (!strcmp(k->s, "overrides")) {
            r = parse_overrides(w, v, path, b);
        } else if (!strcmp(k->s, "top_k")) {
            r = get_int(w, v, path, 1, 1000, &p->top_k);
            b->set |= F_TOPK;
        } else if (!strcmp(k->s, "memory_off")) {
            r = get_bool(w, v, path, &p->memory_off);
            b->set |= F_MEMOFF;
        } else if (!strcmp(k->s, "auto_rate")) {
            r = get_bool(w, v, path, &p->auto_rate);
            b->set |= F_AUTORATE;
        } else if (!strcmp(k->s, "stm_size")) {
            r = get_int(w, v, path, 0, 100000000, &p->stm_size);
            b->set |= F_STM;
        } else if (!strcmp(k->s, "threshold")) {
            r = get_num(w, v, path, 0, 1, &p->threshold);
            b->set |= F_THRESHOLD;
        } else if (!strcmp(k->s, "long_requires_stm")) {
            r = get_bool(w, v, path, &p->long_requires_stm);
            b->set |= F_LRS;
        } else if (!strcmp(k->s, "time_zone")) {
            r = get_str(w, v, path, &p->time_zone);
            if (!r && !util_tz_valid(p->time_zone))
                r = want(w, v, path, "a zone of the time zone database (America/New_York, UTC)");
            b->set |= F_TZ;
        } else if (!strcmp(k->s, "mark_unrated")) {
            r = get_bool(w, v, path, &p->mark_unrated);
            b->set |= F_UNRATED;
        } else if (!strcmp(k->s, "static_immutable")) {
            r = get_bool(w, v, path, &p->static_immutable);
            b->set |= F_STATIC_IMM;
        } else if (!strcmp(k->s, "migrate_by_importance")) {
            r = get_bool(w, v, path, &p->migrate_by_importance);
            b->set |= F_MIG_IMP;
        } else if (!strcmp(k->s, "reflect_short_only")) {
            r = get_bool(w, v, path, &p->reflect_short_only);
            b->set |= F_REFL_SHORT;
        } else if (!strcmp(k->s, "reflection")) {
            r = parse_reflection(w, v, path, b);
        } else if (!strcmp(k->s, "retrieval")) {
            r = parse_retrieval(w, v, path, b);
        } else if (!strcmp(k->s, "decay")) {
            r = parse_decay(w, v, path, b);
        } else if (!strcmp(k->s, "hydrate")) {
            r = parse_hydrate(w, v, path, b);
        } else if (!strcmp(k->s, "memoryAgent")) {
            r = parse_memory_agent(w, v, path, b);
        } else {
            return unknown(w, k, path, top ? "llm, cache, mcp, serve, policies, " POLICY_KEYS : POLICY_KEYS);
        }
        if (r) return -1;
    }
    return 0;
}

static int parse_policies(walk *w, const ynode *m, cfg *c) {
    if (need_map(w, m, "policies") || check_keys(w, m, "policies")) return -1;
    size_t n = m->n / 2;
    c->blocks = calloc(n ? n : 1, sizeof *c->blocks);
    if (!c->blocks) return fail(w, m, "policies", "out of memory");
    for (size_t i = 0; i + 1 < m->n; i += 2) {
        const ynode *k = m->kids[i], *v = m->kids[i + 1];
        char path[256];
        snprintf(path, sizeof path, "policies.%.160s", k->s);
        if (!k->s[0]) return fail(w, k, "policies", "an empty namespace pattern");
        block *b = &c->blocks[c->n_blocks++];
        b->order = c->n_blocks;
        b->line = k->line;
        if (!(b->pattern = strdup(k->s))) return fail(w, k, path, "out of memory");
        if (is_null(v)) continue; /* a pattern with nothing under it */
        if (parse_block(w, v, path, b, c, 0)) return -1;
    }
    return 0;
}

static int parse_llm(walk *w, const ynode *m, cfg *c) {
    if (need_map(w, m, "llm") || check_keys(w, m, "llm")) return -1;
    for (size_t i = 0; i + 1 < m->n; i += 2) {
        const ynode *k = m->kids[i], *v = m->kids[i + 1];
        char path[256];
        join(path, sizeof path, "llm", k->s);
        int r;
        if (!strcmp(k->s, "url"))
            r = get_str(w, v, path, &c->llm.url);
        else if (!strcmp(k->s, "model"))
            r = get_str(w, v, path, &c->llm.model);
        else if (!strcmp(k->s, "api_key"))
            r = get_str(w, v, path, &c->llm.api_key);
        else if (!strcmp(k->s, "api_key_env"))
            r = get_str(w, v, path, &c->llm_api_key_env);
        else if (!strcmp(k->s, "timeout_ms"))
            r = get_int(w, v, path, 1, 3600000, &c->llm.timeout_ms);
        else if (!strcmp(k->s, "retries"))
            r = get_int(w, v, path, 0, 20, &c->llm.retries);
        else
            return unknown(w, k, path, "url, model, api_key, api_key_env, timeout_ms, retries");
        if (r) return -1;
    }
    if (c->llm_api_key_env && !c->llm.api_key) {
        const char *e = getenv(c->llm_api_key_env);
        if (e && *e && !(c->llm.api_key = strdup(e))) return fail(w, m, "llm", "out of memory");
    }
    return 0;
}

/* The process's namespace cache: its byte budget in MB. */
static int parse_cache(walk *w, const ynode *m, cfg *c) {
    if (need_map(w, m, "cache") || check_keys(w, m, "cache")) return -1;
    for (size_t i = 0; i + 1 < m->n; i += 2) {
        const ynode *k = m->kids[i], *v = m->kids[i + 1];
        char path[256];
        join(path, sizeof path, "cache", k->s);
        if (strcmp(k->s, "max_mb")) return unknown(w, k, path, "max_mb");
        if (get_int(w, v, path, 1, 16 << 20, &c->cache_max_mb)) return -1;
    }
    return 0;
}

/* mcp: the MCP face's settings (read by the faces through remem.h's
 * remem_setting; the groups' names are checked there, where they are
 * known). */
static int parse_mcp(walk *w, const ynode *m, cfg *c) {
    if (need_map(w, m, "mcp") || check_keys(w, m, "mcp")) return -1;
    for (size_t i = 0; i + 1 < m->n; i += 2) {
        const ynode *k = m->kids[i], *v = m->kids[i + 1];
        char path[256];
        join(path, sizeof path, "mcp", k->s);
        if (strcmp(k->s, "tools")) return unknown(w, k, path, "tools");
        if (get_str(w, v, path, &c->mcp_tools)) return -1;
    }
    return 0;
}

const char *cfg_mcp_tools(const cfg *c) { return c ? c->mcp_tools : NULL; }

/* serve: remem serve's own settings (read by the server through remem.h's
 * remem_setting): ui, whether it answers the inspector page at /ui. */
static int parse_serve(walk *w, const ynode *m, cfg *c) {
    if (need_map(w, m, "serve") || check_keys(w, m, "serve")) return -1;
    for (size_t i = 0; i + 1 < m->n; i += 2) {
        const ynode *k = m->kids[i], *v = m->kids[i + 1];
        char path[256];
        join(path, sizeof path, "serve", k->s);
        if (strcmp(k->s, "ui")) return unknown(w, k, path, "ui");
        int on = 1;
        if (get_bool(w, v, path, &on)) return -1;
        c->serve_ui = on ? 1 : 2;
    }
    return 0;
}

const char *cfg_serve_ui(const cfg *c) {
    return !c || !c->serve_ui ? NULL : c->serve_ui == 1 ? "true" : "false";
}

/* ------------------------------------------------------------------ */
/* loading and freeing                                                 */
/* ------------------------------------------------------------------ */

static void policy_clear(cfg_policy *p) {
    free(p->profile);
    free(p->overrides_json);
    for (size_t i = 0; i < p->n_hydrate_files; i++) free(p->hydrate_files[i]);
    free(p->hydrate_files);
    free(p->summarization_strategy);
    free(p->archive_location);
    free(p->embedding_model);
    free(p->time_zone);
    for (size_t i = 0; i < p->n_patterns; i++) free(p->patterns[i]);
    free(p->patterns);
    memset(p, 0, sizeof *p);
}

static void policy_defaults(cfg_policy *p) {
    memset(p, 0, sizeof *p);
    p->threshold = 0.35; /* seed 001's threshold */
    p->reflection_enabled = 1;
    p->reflection_importance_sum = 150; /* Generative Agents, on the 1-10 scale */
    p->reflection_importance = 0.95;    /* seed 004's value for reflections */
    p->similarity_threshold = 0.7;      /* seed 003 */
    p->feedback_weight_factor = 1.5;    /* seed 003 */
}

static void block_clear(block *b) {
    policy_clear(&b->p);
    json_decref(b->overrides);
    free(b->pattern);
}

void cfg_free(cfg *c) {
    if (!c) return;
    free(c->path);
    free(c->llm.url);
    free(c->mcp_tools);
    free(c->llm.model);
    free(c->llm.api_key);
    free(c->llm_api_key_env);
    block_clear(&c->top);
    for (size_t i = 0; i < c->n_blocks; i++) block_clear(&c->blocks[i]);
    free(c->blocks);
    for (resolved *r = c->cache, *nx; r; r = nx) {
        nx = r->next;
        policy_clear(&r->p);
        free(r->key);
        free(r);
    }
    pthread_mutex_destroy(&c->mu);
    free(c);
}

cfg *cfg_default(void) {
    cfg *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->llm.retries = -1;
    pthread_mutex_init(&c->mu, NULL);
    return c;
}

int cfg_load_string(const char *text, size_t len, cfg **out, char *err, size_t errcap) {
    char dummy[8];
    if (!err || !errcap) err = dummy, errcap = sizeof dummy;
    err[0] = 0;
    *out = NULL;
    if (len > CFG_MAX_BYTES) {
        snprintf(err, errcap, "the file is larger than %u bytes", CFG_MAX_BYTES);
        return -1;
    }
    ynode *root = NULL;
    if (build_tree(text ? text : "", text ? len : 0, &root, err, errcap)) return -1;
    cfg *c = cfg_default();
    if (!c) {
        ynode_free(root);
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    walk w = {err, errcap};
    int rc = 0;
    if (root && !is_null(root)) rc = parse_block(&w, root, "", &c->top, c, 1);
    ynode_free(root);
    if (rc) {
        cfg_free(c);
        return -1;
    }
    *out = c;
    return 0;
}

int cfg_load_file(const char *path, cfg **out, char *err, size_t errcap) {
    char dummy[8];
    if (!err || !errcap) err = dummy, errcap = sizeof dummy;
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errcap, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int rc = -1;
    for (;;) {
        if (n == cap) {
            if (cap > CFG_MAX_BYTES) {
                snprintf(err, errcap, "%s: larger than %u bytes", path, CFG_MAX_BYTES);
                goto out;
            }
            cap = cap ? 2 * cap : 4096;
            char *b = realloc(buf, cap);
            if (!b) {
                snprintf(err, errcap, "out of memory");
                goto out;
            }
            buf = b;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    if (ferror(f)) {
        snprintf(err, errcap, "%s: %s", path, strerror(errno));
        goto out;
    }
    char inner[768];
    if (cfg_load_string(buf, n, out, inner, sizeof inner)) {
        snprintf(err, errcap, "%s: %s", path, inner);
        goto out;
    }
    if (!((*out)->path = strdup(path))) {
        cfg_free(*out);
        *out = NULL;
        snprintf(err, errcap, "out of memory");
        goto out;
    }
    rc = 0;
out:
    free(buf);
    fclose(f);
    return rc;
}

/* ------------------------------------------------------------------ */
/* 3. resolution                                                       */
/* ------------------------------------------------------------------ */

int cfg_pattern_match(const char *pat, const char *ns) {
    /* Iterative glob with one backtrack point: linear in practice, never
     * exponential, whatever the pattern. */
    const char *star = NULL, *mark = NULL;
    while (*ns) {
        if (*pat == '*') {
            star = pat++;
            mark = ns;
        } else if (*pat == *ns) {
            pat++;
            ns++;
        } else if (star) {
            pat = star + 1;
            ns = ++mark;
        } else {
            return 0;
        }
    }
    while (*pat == '*') pat++;
    return *pat == 0;
}

/* Specificity: a literal name beats any pattern with '*'; among those,
 * more literal characters win; among equals, the later block in the file. */
static int block_cmp(const void *a, const void *b) {
    const block *x = *(const block *const *)a, *y = *(const block *const *)b;
    int lx = !strchr(x->pattern, '*'), ly = !strchr(y->pattern, '*');
    if (lx != ly) return lx - ly;
    size_t cx = 0, cy = 0;
    for (const char *s = x->pattern; *s; s++) cx += *s != '*';
    for (const char *s = y->pattern; *s; s++) cy += *s != '*';
    if (cx != cy) return cx < cy ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int dup_str(char **dst, const char *src) {
    free(*dst);
    *dst = src ? strdup(src) : NULL;
    return src && !*dst ? -1 : 0;
}

/* Lay block b over p. */
static int overlay(cfg_policy *p, json_t *ov, const block *b) {
    const cfg_policy *s = &b->p;
    unsigned f = b->set;
    int rc = 0;
    if (f & F_PROFILE) rc |= dup_str(&p->profile, s->profile);
    /* Seed 004's weights are the stream profile's: its formula (no lexical
     * lane, half-life decay) unless the block names a profile itself. */
    else if (b->seed004_weights)
        rc |= dup_str(&p->profile, "stream");
    if (f & F_TOPK) p->top_k = s->top_k;
    if (f & F_MEMOFF) p->memory_off = s->memory_off;
    if (f & F_AUTORATE) p->auto_rate = s->auto_rate;
    if (f & F_STM) p->stm_size = s->stm_size;
    if (f & F_THRESHOLD) p->threshold = s->threshold;
    if (f & F_LRS) p->long_requires_stm = s->long_requires_stm;
    if (f & F_STATIC_IMM) p->static_immutable = s->static_immutable;
    if (f & F_TZ) rc |= dup_str(&p->time_zone, s->time_zone);
    if (f & F_MIG_IMP) p->migrate_by_importance = s->migrate_by_importance;
    if (f & F_REFL_SHORT) p->reflect_short_only = s->reflect_short_only;
    if (f & F_UNRATED) p->mark_unrated = s->mark_unrated;
    if (f & F_REFL_ENABLED) p->reflection_enabled = s->reflection_enabled;
    if (f & F_REFL_AUTO) p->reflection_auto = s->reflection_auto;
    if (f & F_REFL_SUM) p->reflection_importance_sum = s->reflection_importance_sum;
    if (f & F_REFL_EVERY) p->reflection_every = s->reflection_every;
    if (f & F_REFL_IMP) p->reflection_importance = s->reflection_importance;
    if (f & F_HYDRATE) {
        for (size_t i = 0; i < p->n_hydrate_files; i++) free(p->hydrate_files[i]);
        free(p->hydrate_files);
        p->n_hydrate_files = 0;
        p->hydrate_files = calloc(s->n_hydrate_files ? s->n_hydrate_files : 1, sizeof(char *));
        if (!p->hydrate_files) return -1;
        for (size_t i = 0; i < s->n_hydrate_files; i++) {
            if (!(p->hydrate_files[i] = strdup(s->hydrate_files[i]))) return -1;
            p->n_hydrate_files++;
        }
    }
    if (f & F_MAXEP) p->max_episodes_per_project = s->max_episodes_per_project;
    if (f & F_SIM) p->similarity_threshold = s->similarity_threshold;
    if (f & F_SUMSTRAT) rc |= dup_str(&p->summarization_strategy, s->summarization_strategy);
    if (f & F_PRUNE) p->prune_interval_hours = s->prune_interval_hours;
    if (f & F_RETENTION) p->retention_days = s->retention_days;
    if (f & F_ARCHIVE) rc |= dup_str(&p->archive_location, s->archive_location);
    if (f & F_FWF) p->feedback_weight_factor = s->feedback_weight_factor;
    if (f & F_EMBMODEL) rc |= dup_str(&p->embedding_model, s->embedding_model);
    if (b->overrides) rc |= json_object_update(ov, b->overrides);
    return rc ? -1 : 0;
}

/* Seed 001's tier rules come with its profile: "no way to insert into the
 * LTM directly", static memory immutable, the oldest and most important
 * migrate, reflection from short-term memory, and a memory without an
 * importance scored on relevance alone. A key the file sets wins. */
static void seed001_tier_rules(cfg_policy *p, unsigned set) {
    if (!p->profile || strcmp(p->profile, "metaverse") != 0) return;
    if (!(set & F_LRS)) p->long_requires_stm = 1;
    if (!(set & F_STATIC_IMM)) p->static_immutable = 1;
    if (!(set & F_MIG_IMP)) p->migrate_by_importance = 1;
    if (!(set & F_REFL_SHORT)) p->reflect_short_only = 1;
    if (!(set & F_UNRATED)) p->mark_unrated = 1;
}

static int resolve(cfg *c, const block **bs, size_t n, cfg_policy *p) {
    policy_defaults(p);
    /* seed 003's default */
    if (!(p->summarization_strategy = strdup("llm"))) return -1;
    json_t *ov = json_object();
    if (!ov) return -1;
    p->patterns = calloc(n + 1, sizeof *p->patterns);
    int rc = p->patterns ? 0 : -1;
    unsigned set = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        set |= bs[i]->set;
        rc = overlay(p, ov, bs[i]);
        if (!rc) {
            p->patterns[i] = strdup(bs[i]->pattern ? bs[i]->pattern : "(top level)");
            if (!p->patterns[i]) rc = -1;
            p->n_patterns = i + 1;
        }
    }
    if (!rc && json_object_size(ov) > 0 && !(p->overrides_json = json_dumps(ov, JSON_COMPACT)))
        rc = -1;
    seed001_tier_rules(p, set);
    json_decref(ov);
    (void)c;
    return rc;
}

/* The all-defaults policy, when memory is too short to resolve: a static
 * one rather than NULL, so callers need no NULL check (as promised). */
static cfg_policy g_fallback;
static pthread_once_t g_fallback_once = PTHREAD_ONCE_INIT;
static void fallback_init(void) { policy_defaults(&g_fallback); }

const cfg_policy *cfg_policy_for(cfg *c, const char *ns) {
    pthread_once(&g_fallback_once, fallback_init);
    if (!c) return &g_fallback;
    if (!ns) ns = "";
    const block **bs = calloc(c->n_blocks + 1, sizeof *bs);
    if (!bs) return &g_fallback;
    size_t n = 0;
    if (c->top.set || c->top.overrides || c->top.seed004_weights) bs[n++] = &c->top;
    size_t first = n;
    for (size_t i = 0; i < c->n_blocks; i++)
        if (cfg_pattern_match(c->blocks[i].pattern, ns)) bs[n++] = &c->blocks[i];
    qsort(bs + first, n - first, sizeof *bs, block_cmp);
    /* The cache key: which blocks apply, in order. */
    char *key = calloc(n * 12 + 1, 1);
    if (!key) {
        free(bs);
        return &g_fallback;
    }
    for (size_t i = 0, o = 0; i < n; i++)
        o += (size_t)sprintf(key + o, "%zu,", bs[i] == &c->top ? 0 : bs[i]->order);
    pthread_mutex_lock(&c->mu);
    const cfg_policy *out = &g_fallback;
    resolved *r = c->cache;
    while (r && strcmp(r->key, key)) r = r->next;
    if (r) {
        out = &r->p;
    } else if ((r = calloc(1, sizeof *r))) {
        if (resolve(c, bs, n, &r->p) == 0) {
            r->key = key;
            key = NULL;
            r->next = c->cache;
            c->cache = r;
            out = &r->p;
        } else {
            policy_clear(&r->p);
            free(r);
        }
    }
    pthread_mutex_unlock(&c->mu);
    free(key);
    free(bs);
    return out;
}

int cfg_cache_max_mb(const cfg *c) { return c ? c->cache_max_mb : 0; }

const cfg_llm *cfg_llm_get(const cfg *c) {
    static const cfg_llm none = {NULL, NULL, NULL, 0, -1};
    return c ? &c->llm : &none;
}

void cfg_llm_effective(const cfg *c, cfg_llm *out) {
    *out = *cfg_llm_get(c);
    static const struct {
        const char *env;
        size_t off;
    } vars[] = {{"REMEM_LLM_URL", offsetof(cfg_llm, url)},
                {"REMEM_LLM_MODEL", offsetof(cfg_llm, model)},
                {"REMEM_LLM_API_KEY", offsetof(cfg_llm, api_key)}};
    for (size_t i = 0; i < 3; i++) {
        const char *e = getenv(vars[i].env);
        if (e && *e) *(const char **)((char *)out + vars[i].off) = e;
    }
}

const char *cfg_path(const cfg *c) { return c ? c->path : NULL; }

/* For the engine's check of profile names: each block that names one. */
int cfg_each_profile(const cfg *c, int (*fn)(void *ctx, const char *profile, int line), void *ctx) {
    if (!c) return 0;
    if ((c->top.set & F_PROFILE) && fn(ctx, c->top.p.profile, c->top.profile_line)) return -1;
    for (size_t i = 0; i < c->n_blocks; i++)
        if ((c->blocks[i].set & F_PROFILE) &&
            fn(ctx, c->blocks[i].p.profile, c->blocks[i].profile_line))
            return -1;
    return 0;
}

static json_t *str_or_null(const char *s) { return s ? json_string(s) : json_null(); }

char *cfg_policy_json(const cfg_policy *p) {
    json_t *o = json_object();
    if (!o) return NULL;
    json_object_set_new(o, "profile", json_string(p->profile ? p->profile : "default"));
    json_t *ov = p->overrides_json ? json_loads(p->overrides_json, 0, NULL) : NULL;
    json_object_set_new(o, "overrides", ov ? ov : json_object());
    json_object_set_new(o, "top_k", p->top_k > 0 ? json_integer(p->top_k) : json_null());
    json_object_set_new(o, "memory_off", json_boolean(p->memory_off));
    json_object_set_new(o, "auto_rate", json_boolean(p->auto_rate));
    json_object_set_new(o, "stm_size", json_integer(p->stm_size));
    json_object_set_new(o, "threshold", json_real(p->threshold));
    json_object_set_new(o, "long_requires_stm", json_boolean(p->long_requires_stm));
    json_object_set_new(o, "static_immutable", json_boolean(p->static_immutable));
    json_object_set_new(o, "time_zone", json_string(p->time_zone ? p->time_zone : "UTC"));
    json_object_set_new(o, "migrate_by_importance", json_boolean(p->migrate_by_importance));
    json_object_set_new(o, "reflect_short_only", json_boolean(p->reflect_short_only));
    json_object_set_new(o, "mark_unrated", json_boolean(p->mark_unrated));
    json_t *r = json_object();
    json_object_set_new(r, "enabled", json_boolean(p->reflection_enabled));
    json_object_set_new(r, "auto", json_boolean(p->reflection_auto));
    json_object_set_new(r, "importance_sum", json_real(p->reflection_importance_sum));
    json_object_set_new(r, "every", json_integer(p->reflection_every));
    json_object_set_new(r, "importance", json_real(p->reflection_importance));
    json_object_set_new(o, "reflection", r);
    json_t *h = json_array();
    for (size_t i = 0; i < p->n_hydrate_files; i++)
        json_array_append_new(h, json_string(p->hydrate_files[i]));
    json_object_set_new(o, "hydrate", h);
    json_t *m = json_object();
    json_object_set_new(m, "maxEpisodesPerProject", json_integer(p->max_episodes_per_project));
    json_object_set_new(m, "similarityThreshold", json_real(p->similarity_threshold));
    json_object_set_new(m, "summarizationStrategy", str_or_null(p->summarization_strategy));
    json_object_set_new(m, "pruneIntervalHours", json_real(p->prune_interval_hours));
    json_object_set_new(m, "retentionDays", json_real(p->retention_days));
    json_object_set_new(m, "archiveLocation", str_or_null(p->archive_location));
    json_object_set_new(m, "feedbackWeightFactor", json_real(p->feedback_weight_factor));
    json_object_set_new(m, "embeddingModel", str_or_null(p->embedding_model));
    json_object_set_new(o, "memoryAgent", m);
    json_t *pats = json_array();
    for (size_t i = 0; i < p->n_patterns; i++)
        json_array_append_new(pats, json_string(p->patterns[i]));
    json_object_set_new(o, "patterns", pats);
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return s;
}
