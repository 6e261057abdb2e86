/*
 * cmd_admin.c: `remem profiles`, the scoring presets and their formulas
 * (stats, namespaces and clear are operations: cli/cmd_ops.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "cli.h"

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
