/*
 * firstuse.c: seed 000 hydrates its decisions collection when it starts
 * empty. In remem that is a policy: when the configuration gives a
 * namespace `hydrate` files (cfg_policy.hydrate_files), the first
 * experience operation a handle runs on the namespace hydrates it from
 * them first (exp_hydrate: only when it holds no decision yet), so a
 * server deployed fresh answers its first `fewshot` from the pre-seeded
 * decisions. Each handle checks a namespace once (db->hydrated); the
 * "no decisions yet" rule makes the check safe across handles, processes
 * and restarts.
 *
 * Relative file names are read from the configuration file's folder (the
 * working directory when there is no file), so a remem.yaml and its seed
 * files can move together. A name with a wildcard (the seed's
 * `data/preseeded_memory*.json`, its three partitioned files) stands for
 * the files it matches, in name order; matching none is an error.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experience/experience.h"

/* path, or path joined to the folder of the configuration file. */
static char *resolve(const char *conf, const char *path) {
    const char *slash = conf ? strrchr(conf, '/') : NULL;
    if (path[0] == '/' || !slash) return strdup(path);
    size_t dl = (size_t)(slash - conf), n = dl + 1 + strlen(path) + 1;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%.*s/%s", (int)dl, conf, path);
    return p;
}

/* Append path, or the files it matches when it holds a wildcard, to *v. */
static int expand(remem *db, char *path, char ***v, size_t *n, size_t *cap) {
    glob_t g = {0};
    int wild = strpbrk(path, "*?[") != NULL, rc = REMEM_OK;
    if (wild && glob(path, 0, NULL, &g) != 0) {
        rc = eng_fail(db, REMEM_ENOTFOUND, "hydrate: %s: the pattern matches no file", path);
        globfree(&g);
        free(path);
        return rc;
    }
    size_t add = wild ? g.gl_pathc : 1;
    if (*n + add > *cap) {
        size_t nc = (*n + add) * 2;
        char **nv = realloc(*v, nc * sizeof *nv);
        if (!nv) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        else *v = nv, *cap = nc;
    }
    for (size_t i = 0; !rc && i < add; i++) {
        char *one = wild ? strdup(g.gl_pathv[i]) : path;
        if (!one) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        else (*v)[(*n)++] = one;
    }
    if (wild) {
        globfree(&g);
        free(path);
    } else if (rc) {
        free(path);
    }
    return rc;
}

int exp_first_use(remem *db, const char *ns) {
    if (!ns || !*ns || db->opt.read_only || eng_memory_off(db, ns)) return REMEM_OK;
    const cfg_policy *p = eng_policy(db, ns);
    if (!p || !p->n_hydrate_files) return REMEM_OK;
    if (!db->hydrated && !(db->hydrated = json_object()))
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    if (json_object_get(db->hydrated, ns)) return REMEM_OK;
    const char *conf = cfg_path(eng_config(db));
    char **paths = NULL;
    size_t n = 0, cap = 0;
    int rc = REMEM_OK;
    for (size_t i = 0; !rc && i < p->n_hydrate_files; i++) {
        char *one = resolve(conf, p->hydrate_files[i]);
        rc = one ? expand(db, one, &paths, &n, &cap) : eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    json_t *res = NULL;
    if (!rc) rc = exp_hydrate_paths(db, ns, (const char *const *)paths, n, &res);
    for (size_t i = 0; i < n; i++) free(paths[i]);
    free(paths);
    json_decref(res);
    /* A failure (a missing or bad file) is not remembered: the operation
     * fails with the file's message until the configuration is fixed. */
    if (!rc && json_object_set_new(db->hydrated, ns, json_true()))
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    return rc;
}
