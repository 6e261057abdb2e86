/*
 * minilm.c: the minilm embedder (all-MiniLM-L6-v2 computed in C) and its
 * model folder: where the files live, whether they are the official ones,
 * and the glue from texts to vectors (wordpiece.c tokenizes, safetensors.c
 * maps the weights, bert.c runs the encoder).
 *
 * Verification is split in two so that opening a store stays cheap: a full
 * sha256 check (on pull, on `remem model info --verify`, or on the first
 * create of a folder without a marker) writes .remem-verified recording each
 * file's size, mtime and sha256; later opens only compare size and mtime.
 * The model id says which weights made a vector: "minilm:all-MiniLM-L6-v2"
 * for the official file, "minilm:sha256:<16 hex>" for any other weights.
 */
#include "embed/minilm.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "embed/embed.h"
#include "remem.h"

const minilm_file minilm_files[MINILM_NFILES] = {
    {"model.safetensors", 90868376,
     "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"},
    {"vocab.txt", 231508,
     "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"},
    {"config.json", 612,
     "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"},
};

static int set_err(char *err, size_t cap, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int set_err(char *err, size_t cap, int rc, const char *fmt, ...) {
    if (err && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return rc;
}

int minilm_resolve_dir(const char *dir, char *out, size_t cap, char *err,
                       size_t errcap) {
    int n;
    if (dir && *dir) {
        n = snprintf(out, cap, "%s", dir);
    } else if (getenv("REMEM_MODEL_DIR") && *getenv("REMEM_MODEL_DIR")) {
        n = snprintf(out, cap, "%s", getenv("REMEM_MODEL_DIR"));
    } else {
        const char *home = getenv("HOME");
        if (!home || !*home)
            return set_err(err, errcap, REMEM_EINVAL,
                           "minilm: no model folder given and HOME is unset");
        n = snprintf(out, cap, "%s/.cache/remem/models/%s", home, MINILM_NAME);
    }
    if (n < 0 || (size_t)n >= cap)
        return set_err(err, errcap, REMEM_EINVAL, "minilm: model folder path too long");
    while (n > 1 && out[n - 1] == '/') out[--n] = 0;
    return 0;
}

int minilm_sha256_file(const char *path, char hex[65], int64_t *size,
                       char *err, size_t errcap) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return set_err(err, errcap, errno == ENOENT ? REMEM_ENOTFOUND : REMEM_EIO,
                       "%s: %s", path, strerror(errno));
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int rc = 0;
    int64_t total = 0;
    enum { CHUNK = 1 << 16 };
    unsigned char *buf = malloc(CHUNK);
    if (!ctx || !buf || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
        rc = set_err(err, errcap, REMEM_ENOMEM, "sha256: cannot start");
        goto out;
    }
    for (;;) {
        ssize_t got = read(fd, buf, CHUNK);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            rc = set_err(err, errcap, REMEM_EIO, "%s: %s", path, strerror(errno));
            goto out;
        }
        if (got == 0) break;
        EVP_DigestUpdate(ctx, buf, (size_t)got);
        total += got;
    }
    unsigned char md[32];
    unsigned mdlen = 0;
    EVP_DigestFinal_ex(ctx, md, &mdlen);
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    if (size) *size = total;
out:
    free(buf);
    EVP_MD_CTX_free(ctx);
    close(fd);
    return rc;
}

static int join_path(char *out, size_t cap, const char *dir, const char *name) {
    int n = snprintf(out, cap, "%s/%s", dir, name);
    return n < 0 || (size_t)n >= cap ? REMEM_EINVAL : 0;
}

static int64_t mtime_ns(const struct stat *st) {
    return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* The sha256 the marker records for one file, when size and mtime still
 * match it; NULL otherwise. Points into marker. */
static const char *marker_sha(json_t *marker, const char *dir, const char *name) {
    char path[4096];
    struct stat st;
    json_t *f = json_object_get(json_object_get(marker, "files"), name);
    if (!f || join_path(path, sizeof path, dir, name) || stat(path, &st) != 0)
        return NULL;
    if (json_integer_value(json_object_get(f, "size")) != (json_int_t)st.st_size ||
        json_integer_value(json_object_get(f, "mtime_ns")) != (json_int_t)mtime_ns(&st))
        return NULL;
    const char *sha = json_string_value(json_object_get(f, "sha256"));
    return sha && strlen(sha) == 64 ? sha : NULL;
}

static json_t *marker_load(const char *dir) {
    char path[4096];
    if (join_path(path, sizeof path, dir, MINILM_MARKER)) return NULL;
    return json_load_file(path, 0, NULL);
}

/* 1 when the marker matches every file; *weights_sha (may be NULL) gets the
 * recorded sha256 of the weights (copied). */
static int marker_check(const char *dir, char weights_sha[65], char *why,
                        size_t whycap) {
    json_t *marker = marker_load(dir);
    if (!marker)
        return set_err(why, whycap, 0, "%s has not been verified (no %s)", dir,
                       MINILM_MARKER);
    int ok = 1;
    for (int i = 0; i < MINILM_NFILES && ok; i++) {
        const char *sha = marker_sha(marker, dir, minilm_files[i].name);
        if (!sha) {
            ok = set_err(why, whycap, 0,
                         "%s/%s changed since it was verified (or is missing)",
                         dir, minilm_files[i].name);
        } else if (i == 0 && weights_sha) {
            memcpy(weights_sha, sha, 65);
        }
    }
    json_decref(marker);
    return ok;
}

int minilm_marker_ok(const char *dir, char *why, size_t whycap) {
    return marker_check(dir, NULL, why, whycap);
}

int minilm_marker_write(const char *dir, char *err, size_t errcap) {
    json_t *files = json_object();
    json_t *marker = json_pack("{s:s, s:o}", "model", MINILM_NAME, "files", files);
    char path[4096], tmp[4200];
    int rc = 0;
    if (!marker) return set_err(err, errcap, REMEM_ENOMEM, "out of memory");
    for (int i = 0; i < MINILM_NFILES; i++) {
        struct stat st;
        char hex[65];
        int64_t size;
        if (join_path(path, sizeof path, dir, minilm_files[i].name)) {
            rc = set_err(err, errcap, REMEM_EINVAL, "model folder path too long");
            goto out;
        }
        if ((rc = minilm_sha256_file(path, hex, &size, err, errcap))) goto out;
        if (stat(path, &st) != 0) {
            rc = set_err(err, errcap, REMEM_EIO, "%s: %s", path, strerror(errno));
            goto out;
        }
        json_object_set_new(files, minilm_files[i].name,
                            json_pack("{s:I, s:I, s:s}", "size", (json_int_t)st.st_size,
                                      "mtime_ns", (json_int_t)mtime_ns(&st),
                                      "sha256", hex));
    }
    /* Write to a temporary name and rename, so a reader never sees half a
     * marker. */
    join_path(path, sizeof path, dir, MINILM_MARKER);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    if (json_dump_file(marker, tmp, JSON_INDENT(1)) != 0 || rename(tmp, path) != 0) {
        rc = set_err(err, errcap, REMEM_EIO, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
    }
out:
    json_decref(marker);
    return rc;
}

int minilm_verify_dir(const char *dir, const char *expected_weights_sha256,
                      char *err, size_t errcap) {
    for (int i = 0; i < MINILM_NFILES; i++) {
        char path[4096], hex[65];
        const char *want = minilm_files[i].sha256;
        if (i == 0 && expected_weights_sha256) want = expected_weights_sha256;
        if (join_path(path, sizeof path, dir, minilm_files[i].name))
            return set_err(err, errcap, REMEM_EINVAL, "model folder path too long");
        int rc = minilm_sha256_file(path, hex, NULL, err, errcap);
        if (rc) return rc;
        if (strcasecmp(hex, want) != 0)
            return set_err(err, errcap, REMEM_ECORRUPT,
                           "%s: sha256 %s, expected %s", path, hex, want);
    }
    return minilm_marker_write(dir, err, errcap);
}

int minilm_is_test_model(const char *dir) {
    char path[4096];
    if (join_path(path, sizeof path, dir, MINILM_TEST_DECL)) return 0;
    json_t *decl = json_load_file(path, 0, NULL);
    int yes = json_is_true(json_object_get(decl, "unverified"));
    json_decref(decl);
    return yes;
}

int embed_minilm_available(const char *model_dir, char *why, size_t whycap) {
    char dir[4096], sha[65];
    if (minilm_resolve_dir(model_dir, dir, sizeof dir, why, whycap)) return 0;
    for (int i = 0; i < MINILM_NFILES; i++) {
        char path[4200];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, minilm_files[i].name);
        if (stat(path, &st) != 0)
            return set_err(why, whycap, 0, "no MiniLM model in %s (%s missing; "
                           "`remem model pull` installs it)", dir, minilm_files[i].name);
    }
    if (!marker_check(dir, sha, why, whycap)) return 0;
    if (strcmp(sha, minilm_files[0].sha256) != 0)
        return set_err(why, whycap, 0,
                       "%s holds weights other than the official %s", dir, MINILM_NAME);
    return set_err(why, whycap, 1, "verified %s in %s", MINILM_NAME, dir);
}

int embed_minilm_create(const embed_config *cfg, embedder **out, char *err,
                        size_t errcap) {
    char dir[4096];
    *out = NULL;
    int rc = minilm_resolve_dir(cfg ? cfg->model_dir : NULL, dir, sizeof dir, err, errcap);
    if (rc) return rc;
    return set_err(err, errcap, REMEM_EUNSUPPORTED,
                   "minilm: the encoder is not built yet (model folder %s)", dir);
}
