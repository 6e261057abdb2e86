/*
 * cmd_model.c: `remem model pull` and `remem model info`, the installation
 * and inspection of the all-MiniLM-L6-v2 folder the minilm embedder reads.
 * The folder is --dir, else the global --model-dir, else $REMEM_MODEL_DIR,
 * else ~/.cache/remem/models/all-MiniLM-L6-v2. Checksums are checked by the
 * library (remem_model_pull); --sha256 replaces an official one, for mirrors
 * of other weights and for tests.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress.h"

static const char *const FILES[3] = {"model.safetensors", "vocab.txt", "config.json"};

typedef struct pull_view {
    progress bar;
    char file[64];
    int quiet;
} pull_view;

static void on_progress(void *ctx, const char *file, int64_t done, int64_t total) {
    pull_view *v = ctx;
    if (strcmp(v->file, file) != 0 || (total && v->bar.total != total)) {
        if (v->file[0]) progress_done(&v->bar);
        snprintf(v->file, sizeof v->file, "%s", file);
        progress_start(&v->bar, v->file, total, v->quiet);
    }
    progress_update(&v->bar, done);
}

/* "--sha256 HEX" is model.safetensors'; "--sha256 vocab.txt=HEX" names it. */
static int take_sha(const char *v, const char *sha[3]) {
    const char *eq = strchr(v, '=');
    int which = 0;
    if (eq) {
        which = -1;
        for (int i = 0; i < 3; i++)
            if (strlen(FILES[i]) == (size_t)(eq - v) && !strncmp(v, FILES[i], (size_t)(eq - v)))
                which = i;
        if (which < 0)
            return cli_fail("--sha256: unknown file in \"%s\" (model.safetensors, vocab.txt, "
                            "config.json)",
                            v);
        v = eq + 1;
    }
    if (strlen(v) != 64 || strspn(v, "0123456789abcdefABCDEF") != 64)
        return cli_fail("--sha256: \"%s\" is not 64 hex digits", v);
    sha[which] = v;
    return 0;
}

static int model_pull(const cli_env *env, int argc, char **argv) {
    const char *dir = env->opt.model_dir, *url = NULL, *sha[3] = {NULL, NULL, NULL};
    for (int i = 2; i < argc; i++) {
        const char *v;
        if ((v = cli_opt(argc, argv, &i, "--dir")))
            dir = v;
        else if ((v = cli_opt(argc, argv, &i, "--url")))
            url = v;
        else if ((v = cli_opt(argc, argv, &i, "--sha256"))) {
            if (take_sha(v, sha)) return 2;
        } else
            return cli_fail("model pull: unexpected \"%s\" (remem model --help)", argv[i]), 2;
    }
    pull_view view = {.quiet = env->quiet};
    char err[1024] = "";
    int rc = remem_model_pull(dir, url, sha, on_progress, &view, err, sizeof err);
    if (view.file[0]) progress_done(&view.bar);
    if (rc) return cli_fail("%s", err[0] ? err : remem_strerror(rc));
    char *json = NULL;
    rc = remem_model_info(dir, 0, &json, err, sizeof err);
    if (rc) return cli_fail("%s", err);
    if (env->json) {
        printf("%s\n", json);
    } else if (!env->quiet) {
        json_t *o = json_loads(json, 0, NULL);
        printf("installed and verified in %s\nmodel id: %s\n",
               json_string_value(json_object_get(o, "dir")),
               json_string_value(json_object_get(o, "model_id")));
        json_decref(o);
    }
    remem_free(json);
    return 0;
}

/* The info object as a few readable lines. */
static void print_info(const char *text) {
    json_t *o = json_loads(text, 0, NULL);
    if (!o) {
        printf("%s\n", text);
        return;
    }
    printf("folder:   %s\n", json_string_value(json_object_get(o, "dir")));
    json_t *f;
    size_t i;
    json_array_foreach(json_object_get(o, "files"), i, f) {
        const char *name = json_string_value(json_object_get(f, "name"));
        if (!json_is_true(json_object_get(f, "present"))) {
            printf("  %-18s missing\n", name);
            continue;
        }
        json_t *sha = json_object_get(f, "sha256");
        printf("  %-18s %10lld bytes", name,
               (long long)json_integer_value(json_object_get(f, "size")));
        if (sha)
            printf("  sha256 %.16s...%s", json_string_value(sha),
                   json_is_true(json_object_get(f, "official")) ? " (official)" : "");
        printf("\n");
    }
    if (json_object_get(o, "model_id"))
        printf("model id: %s\n", json_string_value(json_object_get(o, "model_id")));
    if (json_object_get(o, "dim"))
        printf("shape:    %lld dimensions, %lld layers, %lld heads, vocabulary %lld\n",
               (long long)json_integer_value(json_object_get(o, "dim")),
               (long long)json_integer_value(json_object_get(o, "layers")),
               (long long)json_integer_value(json_object_get(o, "heads")),
               (long long)json_integer_value(json_object_get(o, "vocab_size")));
    if (json_object_get(o, "config_error"))
        printf("config:   %s\n", json_string_value(json_object_get(o, "config_error")));
    printf("verified: %s%s\n", json_is_true(json_object_get(o, "verified")) ? "yes" : "no",
           json_is_true(json_object_get(o, "rehashed")) ? " (files re-hashed now)" : "");
    printf("status:   %s\n", json_string_value(json_object_get(o, "note")));
    json_decref(o);
}

static int model_info(const cli_env *env, int argc, char **argv) {
    const char *dir = env->opt.model_dir;
    int verify = 0;
    for (int i = 2; i < argc; i++) {
        const char *v;
        if ((v = cli_opt(argc, argv, &i, "--dir")))
            dir = v;
        else if (!strcmp(argv[i], "--verify"))
            verify = 1;
        else
            return cli_fail("model info: unexpected \"%s\" (remem model --help)", argv[i]), 2;
    }
    char *json = NULL, err[1024] = "";
    int rc = remem_model_info(dir, verify, &json, err, sizeof err);
    if (rc) return cli_fail("%s", err[0] ? err : remem_strerror(rc));
    if (env->json)
        printf("%s\n", json);
    else
        print_info(json);
    remem_free(json);
    return 0;
}

int cmd_model(const cli_env *env, int argc, char **argv) {
    if (argc < 2 || cli_wants_help(argc, argv)) {
        puts("usage: remem model pull [--dir DIR] [--url BASE] [--sha256 [FILE=]HEX]...\n"
             "       remem model info [--dir DIR] [--verify]\n\n"
             "pull downloads all-MiniLM-L6-v2 (model.safetensors, vocab.txt, config.json,\n"
             "about 91 MB) from BASE/FILE (default: the model's Hugging Face page), checks\n"
             "each file's sha256 against the official one and installs all three, or\n"
             "nothing. --sha256 replaces a checksum (FILE defaults to model.safetensors),\n"
             "for mirrors of other weights; those get a model id of their own.\n"
             "info says what the folder holds and whether it is verified; --verify\n"
             "re-hashes the files.\n\n"
             "The folder: --dir, else --model-dir, else $REMEM_MODEL_DIR, else\n"
             "~/.cache/remem/models/all-MiniLM-L6-v2. A verified model is used by\n"
             "default (embedder auto) for namespaces without vectors of another model.");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "pull")) return model_pull(env, argc, argv);
    if (!strcmp(argv[1], "info")) return model_info(env, argc, argv);
    cli_fail("model: unknown subcommand \"%s\" (pull or info)", argv[1]);
    return 2;
}
