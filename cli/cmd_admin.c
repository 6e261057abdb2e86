/*
 * cmd_admin.c: commands about the store as a whole: stats, namespaces,
 * clear, and profiles (the scoring presets and their formulas).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "cli.h"

static int print_json_or(const cli_env *env, const char *json, void (*text)(json_t *)) {
    if (env->json) {
        puts(json);
        return 0;
    }
    json_t *j = json_loads(json, 0, NULL);
    if (!j) {
        puts(json);
        return 0;
    }
    text(j);
    json_decref(j);
    return 0;
}

static void print_counts(const char *title, json_t *obj) {
    if (!obj || !json_object_size(obj)) return;
    printf("%s:\n", title);
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
        printf("  %-24s %lld\n", *k ? k : "(none)", (long long)json_integer_value(v));
}

static void stats_text(json_t *o) {
    printf("memories: %lld (invalidated %lld, expired %lld, duplicates folded %lld)\n",
           (long long)json_integer_value(json_object_get(o, "memories")),
           (long long)json_integer_value(json_object_get(o, "invalidated")),
           (long long)json_integer_value(json_object_get(o, "expired")),
           (long long)json_integer_value(json_object_get(o, "duplicates_folded")));
    json_t *e = json_object_get(o, "embedder");
    if (e)
        printf("embedder: %s (%s, %lld dims)\n", json_string_value(json_object_get(e, "name")),
               json_string_value(json_object_get(e, "model")),
               (long long)json_integer_value(json_object_get(e, "dim")));
    json_t *fb = json_object_get(o, "file_bytes");
    if (fb)
        printf("file: %s, %.1f MB\n", json_string_value(json_object_get(o, "path")),
               (double)json_integer_value(fb) / 1e6);
    print_counts("by namespace", json_object_get(o, "by_namespace"));
    print_counts("by kind", json_object_get(o, "by_kind"));
    print_counts("by tier", json_object_get(o, "by_tier"));
    print_counts("by model", json_object_get(o, "by_model"));
}

int cmd_stats(const cli_env *env, int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        puts("usage: remem stats [--ns NS]\n\nCounts of memories by namespace, kind, tier "
             "and model; invalidated, expired, duplicates; the file's size.");
        return 0;
    }
    const char *ns = NULL;
    int bad = cli_only_ns("stats", argc, argv, &ns);
    if (bad) return bad;
    remem *db = cli_open(env);
    if (!db) return 1;
    char *json = NULL;
    int rc = remem_stats(db, ns, &json);
    if (rc)
        rc = cli_fail_db(db, rc, "stats");
    else
        print_json_or(env, json, stats_text);
    remem_free(json);
    remem_close(db);
    return rc;
}

static void namespaces_text(json_t *a) {
    size_t i;
    json_t *o;
    if (!json_array_size(a)) puts("(no namespaces)");
    json_array_foreach(a, i, o)
        printf("%-32s %8lld  %s\n", json_string_value(json_object_get(o, "ns")),
               (long long)json_integer_value(json_object_get(o, "count")),
               json_string_value(json_object_get(o, "model")));
}

int cmd_namespaces(const cli_env *env, int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        puts("usage: remem namespaces\n\nEach namespace with its memory count and model.");
        return 0;
    }
    if (argc > 1) {
        cli_fail("namespaces: unexpected argument \"%s\"", argv[1]);
        return 2;
    }
    remem *db = cli_open(env);
    if (!db) return 1;
    char *json = NULL;
    int rc = remem_namespaces(db, &json);
    if (rc)
        rc = cli_fail_db(db, rc, "namespaces");
    else
        print_json_or(env, json, namespaces_text);
    remem_free(json);
    remem_close(db);
    return rc;
}

int cmd_clear(const cli_env *env, int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        puts("usage: remem clear --ns NS --yes\n\nDeletes every memory of namespace NS "
             "(history keeps one \"clear\" row). --yes confirms.");
        return 0;
    }
    const char *ns = NULL;
    int yes = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = cli_opt(argc, argv, &i, "--ns")))
            ns = v;
        else if (!strcmp(argv[i], "--yes"))
            yes = 1;
        else {
            cli_fail("clear: unexpected argument \"%s\"", argv[i]);
            return 2;
        }
    }
    if (!ns) return cli_fail("clear: --ns is required");
    if (!yes) return cli_fail("clear: this deletes every memory of %s; add --yes to confirm", ns);
    remem *db = cli_open(env);
    if (!db) return 1;
    int64_t n = 0;
    int rc = remem_clear(db, ns, &n);
    if (rc)
        rc = cli_fail_db(db, rc, "clear");
    else if (remem_memory_off(db, ns))
        puts(env->json ? "{\"deleted\":0,\"outcome\":\"dropped\",\"memory\":\"off\"}"
                       : "memory is off: nothing was deleted");
    else if (env->json)
        printf("{\"deleted\":%lld}\n", (long long)n);
    else
        printf("deleted %lld memories from %s\n", (long long)n, ns);
    remem_close(db);
    return rc;
}

int cmd_profiles(const cli_env *env, int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        puts("usage: remem profiles [NAME]\n\nThe scoring profiles, each as its weights, "
             "decay, thresholds and tiers.");
        return 0;
    }
    const char *only = argc > 1 ? argv[1] : NULL;
    if (only) {
        char *known = remem_profile_json(only);
        if (!known) return cli_fail("unknown profile \"%s\" (remem profiles lists them)", only);
        free(known);
    }
    if (env->json) putchar('[');
    int first = 1;
    for (const char *const *n = remem_profiles(); *n; n++) {
        if (only && strcmp(only, *n)) continue;
        char *js = remem_profile_json(*n);
        if (env->json) {
            printf("%s%s", first ? "" : ",", js);
        } else {
            json_t *o = json_loads(js, 0, NULL);
            json_t *w = json_object_get(o, "weights");
            printf("%-18s %.2f relevance [%s] + %.2f lexical + %.2f recency [%s] + %.2f importance",
                   *n, json_real_value(json_object_get(w, "relevance")),
                   json_string_value(json_object_get(o, "relevance")),
                   json_real_value(json_object_get(w, "lexical")),
                   json_real_value(json_object_get(w, "recency")),
                   json_string_value(json_object_get(o, "recency")),
                   json_real_value(json_object_get(w, "importance")));
            if (json_is_true(json_object_get(o, "normalize"))) printf(", min-max normalised");
            json_t *t = json_object_get(o, "min_score");
            if (json_is_number(t)) printf(", min_score %.2f", json_number_value(t));
            t = json_object_get(o, "min_similarity");
            if (json_is_number(t)) printf(", min_similarity %.2f", json_number_value(t));
            printf(", k %lld\n", (long long)json_integer_value(json_object_get(o, "k")));
            json_decref(o);
        }
        first = 0;
        free(js);
    }
    if (env->json) puts("]");
    return 0;
}
