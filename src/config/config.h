/*
 * config.h: remem's configuration file (YAML, read with libyaml): policies
 * per namespace pattern ("agent:*", "project:acme", "*"), the LLM endpoint,
 * and the seeds' own keys accepted as they are written in their config
 * files (seed 004's config/memory.yaml, seed 003's MemoryAgent keys). A
 * part: it parses and resolves; the engine (src/engine/policy.c) asks it
 * for the policy of a namespace and acts on it. docs/config.md lists every
 * key.
 *
 * Errors name the key and the line ("line 7: reflection.observation_threshold:
 * expected an integer, got \"ten\""); an unknown key is an error.
 */
#ifndef REMEM_CONFIG_H
#define REMEM_CONFIG_H

#include <stddef.h>
#include <stdint.h>

/* The LLM endpoint (issue 9). Every string may be NULL (not set). */
typedef struct cfg_llm {
    char *url;      /* base URL of an OpenAI-compatible API (".../v1") */
    char *model;    /* model name sent with each request */
    char *api_key;  /* bearer token (or from the variable api_key_env names) */
    int timeout_ms; /* 0: default (30000) */
    int retries;    /* -1: default (2) */
} cfg_llm;

/* The effective policy of one namespace: the defaults, overlaid by every
 * pattern that matches the namespace, more specific patterns last (a
 * literal name beats "agent:*", which beats "*"). A field a pattern does
 * not set keeps the value underneath. */
typedef struct cfg_policy {
    /* ---- retrieval ---- */
    char *profile;        /* NULL: "default" */
    char *overrides_json; /* JSON object of query overrides (the keys of a
                              recall query's "overrides": weights, half_life_days,
                              ...), NULL: none. Seed 004's retrieval.* and
                              decay.half_life_days land here. */
    int top_k;            /* 0: the profile's */

    /* ---- lifecycle (issue 9, seeds 001 and 004) ---- */
    int memory_off;                   /* seed 004 --no-memory */
    int auto_rate;                    /* rate every add with the LLM */
    int stm_size;                     /* short-term capacity; 0: unbounded */
    double threshold;                 /* migration: importance above it goes to
                                    long-term; default 0.35? see docs */
    int long_requires_stm;            /* refuse adds straight to tier "long" */
    int static_immutable;             /* refuse updates of tier-static memories */
    int migrate_by_importance;        /* migrate the most important first (oldest
                                         first among equals), not the oldest */
    int reflect_short_only;           /* reflection reads short-term memories only */
    int mark_unrated;                 /* an add without importance (and not rated by
                                         the LLM) is marked unrated in its metadata
                                         (rating.fallback kind_default), which the
                                         metaverse profile scores on relevance alone */
    /* The last three and long_requires_stm are seed 001's tier rules: on
     * when the policy's profile is "metaverse" and the file leaves them
     * unset. */
    int reflection_enabled;           /* default 1 */
    int reflection_auto;              /* reflect automatically when a trigger fires */
    double reflection_importance_sum; /* paper's trigger on the 1-10 scale
                                         (sum of importance*10); 0: off */
    int reflection_every;             /* every N observations (seed 004: 10); 0: off */
    double reflection_importance;     /* importance of a stored reflection (0.95) */
    char *time_zone;                  /* the zone of dates in prompt blocks (IANA
                                         name); NULL: UTC */

    /* ---- experience (issue 10, seed 000) ---- */
    char **hydrate_files; /* pre-seeded decision files for first use */
    size_t n_hydrate_files;

    /* ---- maintenance (issue 11, seed 003 keys as written there) ---- */
    int max_episodes_per_project;  /* maxEpisodesPerProject; 0: no limit */
    double similarity_threshold;   /* similarityThreshold (clusters) */
    char *summarization_strategy;  /* summarizationStrategy none|heuristic|llm */
    double prune_interval_hours;   /* pruneIntervalHours; 0: never */
    double retention_days;         /* retentionDays; 0: keep forever */
    char *archive_location;        /* archiveLocation; NULL: beside the store */
    double feedback_weight_factor; /* feedbackWeightFactor (1.5) */
    char *embedding_model;         /* embeddingModel: the http embedder's
                                        model when no option or
                                        REMEM_EMBED_MODEL names one (read from
                                        the "*" policy only: one embedder per
                                        handle) */

    /* ---- where it came from (for `remem config show`) ---- */
    char **patterns; /* the patterns applied, least specific first
                          ("(top level)" for the document's own keys) */
    size_t n_patterns;
} cfg_policy;

typedef struct cfg cfg;

/* Parse a YAML document. On failure returns non-zero, *out NULL, err says
 * which key on which line and why. */
int cfg_load_string(const char *text, size_t len, cfg **out, char *err, size_t errcap);
int cfg_load_file(const char *path, cfg **out, char *err, size_t errcap);
/* An empty configuration: the defaults everywhere. */
cfg *cfg_default(void);
void cfg_free(cfg *c);
/* The effective policy of ns (never NULL; valid until cfg_free). */
const cfg_policy *cfg_policy_for(cfg *c, const char *ns);
/* The LLM section (never NULL; fields NULL when unset). */
const cfg_llm *cfg_llm_get(const cfg *c);
/* cache.max_mb: the process's namespace cache budget in MB (0: unset). */
int cfg_cache_max_mb(const cfg *c);
/* mcp.tools as written (a comma-separated list of tool groups), or NULL. */
const char *cfg_mcp_tools(const cfg *c);
/* serve.ui as "true" or "false", or NULL when the file does not set it. */
const char *cfg_serve_ui(const cfg *c);
/* The file it came from, or NULL. */
const char *cfg_path(const cfg *c);
/* The policy as a JSON object text (malloc'd), for `remem config show`. */
char *cfg_policy_json(const cfg_policy *p);
/* Does the namespace pattern pat match ns? '*' matches any run of
 * characters (also none); every other character matches itself. */
int cfg_pattern_match(const char *pat, const char *ns);
/* The LLM section with the environment applied (REMEM_LLM_URL,
 * REMEM_LLM_MODEL, REMEM_LLM_API_KEY win over the file), into *out, whose
 * strings point into c or the environment. c may be NULL. */
void cfg_llm_effective(const cfg *c, cfg_llm *out);
/* Call fn for every block of the file that names a profile, with the line
 * of its "profile:" key (the engine checks the names, which the part does
 * not know). Stops and returns -1 when fn returns non-zero. */
int cfg_each_profile(const cfg *c, int (*fn)(void *ctx, const char *profile, int line), void *ctx);

#endif
