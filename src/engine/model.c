/*
 * model.c: the public face of local model management (remem_model_* in
 * include/remem.h): installing, describing and tokenizing with the
 * all-MiniLM-L6-v2 folder that the minilm embedder reads. The work is done
 * by the embedder's part (src/embed/minilm/minilm.c, src/embed/minilm/model_fetch.c);
 * this file only adapts it to the public conventions (JSON text freed with
 * remem_free, argument checks).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "embed/minilm/minilm.h"
#include "remem.h"

int remem_model_pull(const char *dir, const char *base_url, const char *const sha256[3],
                     remem_model_progress_fn progress, void *ctx, char *err, size_t errcap) {
    if (err && errcap) err[0] = 0;
    return minilm_pull(dir, base_url, sha256, progress, ctx, err, errcap);
}

int remem_model_info(const char *dir, int verify, char **json, char *err, size_t errcap) {
    if (err && errcap) err[0] = 0;
    if (!json) return REMEM_EINVAL;
    *json = NULL;
    void *info = NULL;
    int rc = minilm_info(dir, verify, &info, err, errcap);
    if (rc) return rc;
    *json = json_dumps(info, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(info);
    if (!*json) {
        if (err && errcap) snprintf(err, errcap, "out of memory");
        return REMEM_ENOMEM;
    }
    return REMEM_OK;
}

int remem_model_tokenize(const char *dir, const char *text, char **json, char *err, size_t errcap) {
    if (err && errcap) err[0] = 0;
    if (!json || !text) return REMEM_EINVAL;
    return minilm_tokenize_json(dir, text, json, err, errcap);
}
