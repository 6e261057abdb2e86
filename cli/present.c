/*
 * present.c: how the command prints the answers of the core operations
 * for a person (without --json): an id after an add, a memory as a short
 * block, a recall as ranked lines with their score components, stats and
 * namespaces as tables. Only printing lives here: the arguments and the
 * answers are the operations' own (cli/cmd_ops.c runs them), and --json
 * prints the answer as every other face gives it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

#define DROPPED_TEXT "memory is off: nothing was written"

static const char *s_of(json_t *o, const char *k) {
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}
static double n_of(json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }
static long long i_of(json_t *o, const char *k) {
    return (long long)json_integer_value(json_object_get(o, k));
}

static int dropped(json_t *a) { return !strcmp(s_of(a, "outcome"), "dropped"); }

static void memory_block(json_t *m) {
    printf("%s/%s  [%s, %s, importance %.2f, %s]\n  %s\n", s_of(m, "ns"), s_of(m, "id"),
           s_of(m, "kind"), s_of(m, "tier"), n_of(m, "importance"), s_of(m, "created_at"),
           s_of(m, "text"));
    json_t *meta = json_object_get(m, "metadata");
    if (json_is_object(meta)) {
        char *t = json_dumps(meta, JSON_COMPACT);
        printf("  metadata: %s\n", t ? t : "");
        free(t);
    }
    if (json_is_string(json_object_get(m, "invalidated_at")))
        printf("  invalidated%s%s\n", *s_of(m, "superseded_by") ? ", superseded by " : "",
               s_of(m, "superseded_by"));
    if (i_of(m, "duplicate_count")) printf("  seen again %lld times\n", i_of(m, "duplicate_count"));
}

static void p_add(json_t *a) {
    const char *o = s_of(a, "outcome");
    if (dropped(a)) {
        puts(DROPPED_TEXT);
        return;
    }
    printf("%s%s\n", *s_of(a, "id") ? s_of(a, "id") : "(accepted)",
           !strcmp(o, "duplicate")  ? " (duplicate: counted on the existing memory)"
           : !strcmp(o, "upserted") ? " (updated)"
                                    : "");
}

static void p_write(json_t *a) {
    if (dropped(a))
        puts(DROPPED_TEXT);
    else
        printf("%s %s\n", s_of(a, "outcome"), s_of(a, "id"));
}

static void p_get(json_t *a) { memory_block(json_object_get(a, "memory")); }

static void p_list(json_t *a) {
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(a, "memories"), i, m) memory_block(m);
    printf("%lld memories", i_of(a, "count"));
    if (*s_of(a, "next_cursor")) printf("; next page: --cursor %s", s_of(a, "next_cursor"));
    putchar('\n');
}

static void p_history(json_t *a) {
    size_t i;
    json_t *h;
    json_array_foreach(json_object_get(a, "history"), i, h) {
        /* An invalidation keeps its reason in the actor field. */
        const char *actor = json_string_value(json_object_get(h, "actor"));
        const char *op = s_of(h, "op");
        printf("#%-5lld %s  %s%s%s\n", i_of(h, "seq"), s_of(h, "at"), op,
               !actor                      ? ""
               : !strcmp(op, "invalidate") ? "  reason: "
                                           : "  by ",
               actor ? actor : "");
    }
}

static void p_recall(json_t *a) {
    const char *off = s_of(a, "memory");
    if (!strcmp(off, "off")) {
        puts("memory is off: recall returns nothing");
        return;
    }
    if (!strcmp(off, "partly off")) puts("memory is off for some namespaces: they were left out");
    json_t *hits = json_object_get(a, "hits");
    printf("%zu of %lld candidates, profile %s, %.2f ms\n", json_array_size(hits),
           i_of(a, "candidates"), s_of(a, "profile"), n_of(a, "took_ms"));
    size_t i;
    json_t *h;
    json_array_foreach(hits, i, h) {
        json_t *c = json_object_get(h, "components");
        printf("%2zu. %.4f  %s/%s [%s, %s]\n", i + 1, n_of(h, "score"), s_of(h, "ns"),
               s_of(h, "id"), s_of(h, "kind"), s_of(h, "tier"));
        printf("    relevance %.3f (cos %.3f)  lexical %.3f  recency %.3f  importance %.2f\n",
               n_of(c, "relevance"), n_of(c, "similarity"), n_of(c, "lexical"), n_of(c, "recency"),
               n_of(c, "importance"));
        const char *t = s_of(h, "text");
        int len = (int)strlen(t);
        printf("    %.*s%s\n", len > 200 ? 200 : len, t, len > 200 ? "..." : "");
    }
}

static void counts(const char *title, json_t *obj) {
    if (!json_object_size(obj)) return;
    printf("%s:\n", title);
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
        printf("  %-24s %lld\n", *k ? k : "(none)", (long long)json_integer_value(v));
}

static void p_stats(json_t *o) {
    printf("memories: %lld (invalidated %lld, expired %lld, duplicates folded %lld)\n",
           i_of(o, "memories"), i_of(o, "invalidated"), i_of(o, "expired"),
           i_of(o, "duplicates_folded"));
    json_t *e = json_object_get(o, "embedder");
    if (e)
        printf("embedder: %s (%s, %lld dims)\n", s_of(e, "name"), s_of(e, "model"), i_of(e, "dim"));
    if (json_object_get(o, "file_bytes"))
        printf("file: %s, %.1f MB\n", s_of(o, "path"), (double)i_of(o, "file_bytes") / 1e6);
    counts("by namespace", json_object_get(o, "by_namespace"));
    counts("by kind", json_object_get(o, "by_kind"));
    counts("by tier", json_object_get(o, "by_tier"));
    counts("by model", json_object_get(o, "by_model"));
    if (json_object_get(o, "total_memories")) { /* decisions (docs/experience.md) */
        printf("decisions: %lld, average reward %.3f\n", i_of(o, "total_memories"),
               n_of(o, "average_reward"));
        counts("by action type", json_object_get(o, "by_action_type"));
    }
}

static void p_namespaces(json_t *a) {
    json_t *list = json_object_get(a, "namespaces");
    if (!json_array_size(list)) puts("(no namespaces)");
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o)
        printf("%-32s %8lld  %s\n", s_of(o, "ns"), i_of(o, "count"), s_of(o, "model"));
}

static const struct {
    const char *op;
    void (*print)(json_t *answer);
} presenters[] = {
    {"memory.add", p_add},         {"memory.update", p_write}, {"memory.invalidate", p_write},
    {"memory.forget", p_write},    {"memory.get", p_get},      {"memory.list", p_list},
    {"memory.history", p_history}, {"recall", p_recall},       {"stats", p_stats},
    {"namespaces", p_namespaces},
};

int cli_present(const char *op, json_t *answer) {
    for (size_t i = 0; i < sizeof presenters / sizeof presenters[0]; i++)
        if (!strcmp(presenters[i].op, op)) {
            presenters[i].print(answer);
            return 1;
        }
    return 0;
}
