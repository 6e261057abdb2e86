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
#include "embed/minilm/minilm.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "embed/minilm/bert.h"
#include "embed/embed.h"
#include "embed/minilm/safetensors.h"
#include "embed/minilm/wordpiece.h"
#include "remem.h"
#include "util/util.h"

const minilm_file minilm_files[MINILM_NFILES] = {
    {"model.safetensors", 90868376,
     "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"},
    {"vocab.txt", 231508, "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"},
    {"config.json", 612, "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41"},
};

/* Errors go to the caller's buffer: util_errf. */
#define set_err util_errf

int minilm_resolve_dir(const char *dir, char *out, size_t cap, char *err, size_t errcap) {
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

int minilm_sha256_file(const char *path, char hex[65], int64_t *size, char *err, size_t errcap) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return set_err(err, errcap, errno == ENOENT ? REMEM_ENOTFOUND : REMEM_EIO, "%s: %s", path,
                       strerror(errno));
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
    if (!f || join_path(path, sizeof path, dir, name) || stat(path, &st) != 0) return NULL;
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

int minilm_marker_shas(const char *dir, char shas[MINILM_NFILES][65], char *why, size_t whycap) {
    json_t *marker = marker_load(dir);
    if (!marker)
        return set_err(why, whycap, 0, "%s has not been verified (no %s)", dir, MINILM_MARKER);
    int ok = 1;
    for (int i = 0; i < MINILM_NFILES && ok; i++) {
        const char *sha = marker_sha(marker, dir, minilm_files[i].name);
        if (!sha)
            ok = set_err(why, whycap, 0, "%s/%s is missing or changed since it was verified", dir,
                         minilm_files[i].name);
        else if (shas)
            memcpy(shas[i], sha, 65);
    }
    json_decref(marker);
    return ok;
}

int minilm_marker_ok(const char *dir, char *why, size_t whycap) {
    return minilm_marker_shas(dir, NULL, why, whycap);
}

static int hash_files(const char *dir, char shas[MINILM_NFILES][65], char *err, size_t errcap) {
    for (int i = 0; i < MINILM_NFILES; i++) {
        char path[4096];
        if (join_path(path, sizeof path, dir, minilm_files[i].name))
            return set_err(err, errcap, REMEM_EINVAL, "model folder path too long");
        int rc = minilm_sha256_file(path, shas[i], NULL, err, errcap);
        if (rc) return rc;
    }
    return 0;
}

int minilm_marker_write(const char *dir, const char (*known)[65], char *err, size_t errcap) {
    char shas[MINILM_NFILES][65];
    int rc = 0;
    if (known)
        memcpy(shas, known, sizeof shas);
    else if ((rc = hash_files(dir, shas, err, errcap)))
        return rc;
    json_t *files = json_object();
    json_t *marker = json_pack("{s:s, s:o}", "model", MINILM_NAME, "files", files);
    char path[4096], tmp[4200];
    if (!marker) return set_err(err, errcap, REMEM_ENOMEM, "out of memory");
    for (int i = 0; i < MINILM_NFILES; i++) {
        struct stat st;
        join_path(path, sizeof path, dir, minilm_files[i].name);
        if (stat(path, &st) != 0) {
            rc = set_err(err, errcap, REMEM_EIO, "%s: %s", path, strerror(errno));
            goto out;
        }
        json_object_set_new(files, minilm_files[i].name,
                            json_pack("{s:I, s:I, s:s}", "size", (json_int_t)st.st_size, "mtime_ns",
                                      (json_int_t)mtime_ns(&st), "sha256", shas[i]));
    }
    /* A temporary name and a rename: a reader never sees half a marker. */
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

static int all_official(const char shas[MINILM_NFILES][65]) {
    for (int i = 0; i < MINILM_NFILES; i++)
        if (strcmp(shas[i], minilm_files[i].sha256) != 0) return 0;
    return 1;
}

int minilm_verify_dir(const char *dir, const char *const *expected, char *err, size_t errcap) {
    char shas[MINILM_NFILES][65];
    int rc = hash_files(dir, shas, err, errcap);
    if (rc) return rc;
    for (int i = 0; i < MINILM_NFILES; i++) {
        const char *want = expected && expected[i] ? expected[i] : minilm_files[i].sha256;
        if (strcasecmp(shas[i], want) != 0)
            return set_err(err, errcap, REMEM_ECORRUPT, "%s/%s: sha256 %s, expected %s", dir,
                           minilm_files[i].name, shas[i], want);
    }
    return minilm_marker_write(dir, (const char(*)[65])shas, err, errcap);
}

int minilm_is_test_model(const char *dir) {
    char path[4096];
    if (join_path(path, sizeof path, dir, MINILM_TEST_DECL)) return 0;
    json_t *decl = json_load_file(path, 0, NULL);
    int yes = json_is_true(json_object_get(decl, "unverified"));
    json_decref(decl);
    return yes;
}

/* "minilm:all-MiniLM-L6-v2" for the official files; otherwise a name that
 * carries a hash of all three files, so other weights (or another
 * vocabulary) never share a namespace with them. */
static void model_id_for(const char shas[MINILM_NFILES][65], char *out, size_t cap) {
    if (all_official(shas)) {
        snprintf(out, cap, "%s", MINILM_MODEL_ID);
        return;
    }
    char joined[3 * 70];
    unsigned char md[32];
    unsigned mdlen = 0;
    snprintf(joined, sizeof joined, "w:%s v:%s c:%s", shas[0], shas[1], shas[2]);
    EVP_Digest(joined, strlen(joined), md, &mdlen, EVP_sha256(), NULL);
    snprintf(out, cap, "minilm:sha256:%02x%02x%02x%02x%02x%02x%02x%02x", md[0], md[1], md[2], md[3],
             md[4], md[5], md[6], md[7]);
}

static int files_present(const char *dir, char *why, size_t whycap) {
    for (int i = 0; i < MINILM_NFILES; i++) {
        char path[4200];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, minilm_files[i].name);
        if (stat(path, &st) != 0)
            return set_err(why, whycap, 0,
                           "no MiniLM model in %s (%s missing; `remem model pull` installs it)",
                           dir, minilm_files[i].name);
    }
    return 1;
}

int embed_minilm_available(const char *model_dir, char *why, size_t whycap) {
    char dir[4096], shas[MINILM_NFILES][65];
    if (minilm_resolve_dir(model_dir, dir, sizeof dir, why, whycap)) return 0;
    if (!files_present(dir, why, whycap)) return 0;
    if (!minilm_marker_shas(dir, shas, why, whycap)) return 0;
    if (!all_official(shas))
        return set_err(why, whycap, 0, "%s holds files other than the official %s", dir,
                       MINILM_NAME);
    return set_err(why, whycap, 1, "verified %s in %s", MINILM_NAME, dir);
}

/* ------------------------------------------------------------------ */
/* The embedder                                                         */
/* ------------------------------------------------------------------ */
/* sentence-transformers cuts all-MiniLM-L6-v2's input at 256 tokens. */
#define MINILM_MAX_TOKENS 256
/* Texts are encoded in slices of about this many tokens: large enough for
 * the matrix products to run near peak, small enough to bound the scratch
 * memory (about 30 MB for the real model). */
#define SLICE_TOKENS      2048

typedef struct minilm {
    wp_vocab *vocab;
    bert_model *bert;
    int max_tokens;
} minilm;

static void minilm_destroy(embedder *e) {
    if (!e) return;
    minilm *m = e->state;
    if (m) {
        wp_vocab_free(m->vocab);
        bert_free(m->bert);
        free(m);
    }
    free(e);
}

static void l2_normalise(float *v, size_t dim) {
    double sum = 0;
    for (size_t i = 0; i < dim; i++) sum += (double)v[i] * v[i];
    double norm = sqrt(sum);
    float inv = (float)(1.0 / (norm > 1e-12 ? norm : 1e-12));
    for (size_t i = 0; i < dim; i++) v[i] *= inv;
}

static int minilm_embed(embedder *e, const char *const *texts, size_t n, float *out, char *err,
                        size_t errcap) {
    minilm *m = e->state;
    const size_t dim = (size_t)e->dim, cap = (size_t)m->max_tokens;
    size_t slice_texts = SLICE_TOKENS / 8; /* texts per slice, at most */
    int32_t *ids = malloc(slice_texts * cap * sizeof *ids);
    bert_seq *seqs = malloc(slice_texts * sizeof *seqs);
    int rc = 0;
    if (!ids || !seqs) {
        rc = set_err(err, errcap, REMEM_ENOMEM, "minilm: out of memory");
        goto out;
    }
    for (size_t first = 0; first < n && !rc;) {
        size_t k = 0, tokens = 0;
        while (first + k < n && k < slice_texts && tokens < SLICE_TOKENS) {
            const char *t = texts[first + k] ? texts[first + k] : "";
            int32_t *dst = ids + k * cap;
            int got = wp_tokenize(m->vocab, t, strlen(t), dst, m->max_tokens);
            if (got < 0) {
                rc = set_err(err, errcap, got, "minilm: cannot tokenize text %zu", first + k);
                goto out;
            }
            seqs[k] = (bert_seq){dst, got};
            tokens += (size_t)got;
            k++;
        }
        rc = bert_encode(m->bert, seqs, k, out + first * dim, NULL, err, errcap);
        for (size_t i = 0; i < k && !rc; i++) l2_normalise(out + (first + i) * dim, dim);
        first += k;
    }
out:
    free(ids);
    free(seqs);
    return rc;
}

/* The threads to encode with: $REMEM_MINILM_THREADS, else every core (the
 * encoder splits a batch into that many groups). */
static int thread_count(void) {
    const char *env = getenv("REMEM_MINILM_THREADS");
    long n = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

/* Which files dir holds: shas of each and whether they may be used. */
static int check_folder(const char *dir, char shas[MINILM_NFILES][65], char *err, size_t errcap) {
    char why[512];
    if (!files_present(dir, why, sizeof why))
        return set_err(err, errcap, REMEM_ENOTFOUND, "minilm: %s", why);
    if (minilm_marker_shas(dir, shas, why, sizeof why)) return 0;
    /* No marker (or a stale one): hash now. The official files are then
     * marked verified, so the next open is cheap. */
    int rc = hash_files(dir, shas, err, errcap);
    if (rc) return rc;
    if (all_official(shas)) {
        minilm_marker_write(dir, (const char(*)[65])shas, why, sizeof why);
        return 0; /* a read-only folder is fine: verified all the same */
    }
    if (minilm_is_test_model(dir)) return 0;
    return set_err(err, errcap, REMEM_ECORRUPT,
                   "minilm: %s/model.safetensors is not the official %s (sha256 %.16s...); "
                   "`remem model pull` installs it, or declare other weights with %s "
                   "{\"unverified\": true}",
                   dir, MINILM_NAME, shas[0], MINILM_TEST_DECL);
}

int embed_minilm_create(const embed_config *cfg, embedder **out, char *err, size_t errcap) {
    char dir[4096], path[4200], shas[MINILM_NFILES][65];
    *out = NULL;
    int rc = minilm_resolve_dir(cfg ? cfg->model_dir : NULL, dir, sizeof dir, err, errcap);
    if (rc || (rc = check_folder(dir, shas, err, errcap))) return rc;

    embedder *e = calloc(1, sizeof *e);
    minilm *m = calloc(1, sizeof *m);
    bert_config c;
    st_file *st = NULL;
    if (!e || !m) {
        free(e);
        free(m);
        return set_err(err, errcap, REMEM_ENOMEM, "minilm: out of memory");
    }
    e->state = m;
    e->name = "minilm";
    e->embed = minilm_embed;
    e->destroy = minilm_destroy;
    snprintf(path, sizeof path, "%s/config.json", dir);
    if ((rc = bert_config_load(path, &c, err, errcap))) goto fail;
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    if ((rc = wp_vocab_load_file(path, &m->vocab, err, errcap))) goto fail;
    if ((int64_t)wp_vocab_size(m->vocab) > c.vocab_size) {
        rc = set_err(err, errcap, REMEM_ECORRUPT,
                     "minilm: vocab.txt has %zu tokens but config.json says vocab_size %d",
                     wp_vocab_size(m->vocab), c.vocab_size);
        goto fail;
    }
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    if ((rc = st_open(path, &st, err, errcap))) goto fail;
    rc = bert_load(&c, st, &m->bert, err, errcap);
    st_close(st);
    if (rc) goto fail;
    bert_set_threads(m->bert, thread_count());
    m->max_tokens = c.max_positions < MINILM_MAX_TOKENS ? c.max_positions : MINILM_MAX_TOKENS;
    e->dim = c.hidden;
    model_id_for((const char(*)[65])shas, e->model_id, sizeof e->model_id);
    *out = e;
    return 0;
fail:
    minilm_destroy(e);
    return rc;
}

int minilm_view(embedder *e, minilm_model_view *out) {
    if (!e || e->destroy != minilm_destroy) return REMEM_EINVAL;
    minilm *m = e->state;
    *out = (minilm_model_view){m->vocab, m->bert, m->max_tokens};
    return 0;
}

int minilm_pooled(const minilm_model_view *v, const char *text, float *pooled, float *hidden,
                  char *err, size_t errcap) {
    int32_t *ids = malloc((size_t)v->max_tokens * sizeof *ids);
    if (!ids) return set_err(err, errcap, REMEM_ENOMEM, "minilm: out of memory");
    int n = wp_tokenize(v->vocab, text, strlen(text), ids, v->max_tokens);
    int rc = n < 0 ? set_err(err, errcap, n, "minilm: cannot tokenize")
                   : bert_encode(v->bert, &(bert_seq){ids, n}, 1, pooled, hidden, err, errcap);
    free(ids);
    return rc;
}

/* ------------------------------------------------------------------ */
/* What a folder holds (remem model info)                               */
/* ------------------------------------------------------------------ */
static void info_config(json_t *info, const char *dir) {
    char path[4200], err[256];
    bert_config c;
    snprintf(path, sizeof path, "%s/config.json", dir);
    if (bert_config_load(path, &c, err, sizeof err) != 0) {
        json_object_set_new(info, "config_error", json_string(err));
        return;
    }
    json_object_set_new(info, "dim", json_integer(c.hidden));
    json_object_set_new(info, "layers", json_integer(c.layers));
    json_object_set_new(info, "heads", json_integer(c.heads));
    json_object_set_new(info, "intermediate", json_integer(c.intermediate));
    json_object_set_new(info, "vocab_size", json_integer(c.vocab_size));
}

int minilm_info(const char *dir_in, int verify, void **out, char *err, size_t errcap) {
    char dir[4096], why[512] = "", marker[MINILM_NFILES][65], hashed[MINILM_NFILES][65];
    *out = NULL;
    int rc = minilm_resolve_dir(dir_in, dir, sizeof dir, err, errcap);
    if (rc) return rc;
    json_t *info = json_object(), *files = json_array();
    json_object_set_new(info, "dir", json_string(dir));
    json_object_set_new(info, "model", json_string(MINILM_NAME));
    json_object_set_new(info, "files", files);
    int installed = files_present(dir, why, sizeof why);
    int have_marker = installed && minilm_marker_shas(dir, marker, why, sizeof why);
    int rehashed = 0, verified = have_marker, changed = 0;
    if (verify && installed) {
        if ((rc = hash_files(dir, hashed, err, errcap))) {
            json_decref(info);
            return rc;
        }
        rehashed = 1;
        if (all_official(hashed)) {
            verified = minilm_marker_write(dir, (const char(*)[65])hashed, why, sizeof why) == 0;
        } else if (have_marker && memcmp(marker, hashed, sizeof marker) == 0) {
            verified = 1; /* still what was checked at pull (other weights) */
        } else {
            /* The marker vouches for files that are no longer what it says. */
            changed = have_marker;
            char path[4200];
            snprintf(path, sizeof path, "%s/%s", dir, MINILM_MARKER);
            unlink(path);
            verified = 0;
        }
    }
    const char(*shas)[65] = rehashed      ? (const char(*)[65])hashed
                            : have_marker ? (const char(*)[65])marker
                                          : NULL;
    for (int i = 0; i < MINILM_NFILES; i++) {
        char path[4200];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, minilm_files[i].name);
        json_t *f =
            json_pack("{s:s, s:b}", "name", minilm_files[i].name, "present", stat(path, &st) == 0);
        if (stat(path, &st) == 0) json_object_set_new(f, "size", json_integer(st.st_size));
        if (shas) {
            json_object_set_new(f, "sha256", json_string(shas[i]));
            json_object_set_new(f, "official",
                                json_boolean(strcmp(shas[i], minilm_files[i].sha256) == 0));
        }
        json_array_append_new(files, f);
    }
    int official = shas && all_official(shas);
    int test_model = minilm_is_test_model(dir);
    json_object_set_new(info, "installed", json_boolean(installed));
    json_object_set_new(info, "verified", json_boolean(verified));
    json_object_set_new(info, "rehashed", json_boolean(rehashed));
    json_object_set_new(info, "official", json_boolean(official));
    json_object_set_new(info, "test_model", json_boolean(test_model));
    if (shas) {
        char id[128];
        model_id_for(shas, id, sizeof id);
        json_object_set_new(info, "model_id", json_string(id));
    }
    if (installed) info_config(info, dir);
    const char *note;
    char buf[768];
    if (!installed) {
        snprintf(buf, sizeof buf, "%s", why);
        note = buf;
    } else if (changed) {
        note = "the files changed since they were verified: run `remem model pull` again";
    } else if (verified && official) {
        note = "the official all-MiniLM-L6-v2, verified: used by default";
    } else if (verified) {
        note = "weights verified against the checksum given at pull (not the official "
               "model): used with --embedder minilm only, under their own model id";
    } else if (test_model) {
        note = "a test model (remem-model.json): used with --embedder minilm only, "
               "under its own model id";
    } else {
        note = "not verified yet: `remem model info --verify` checks the files "
               "(the first use does too)";
    }
    json_object_set_new(info, "note", json_string(note));
    *out = info;
    return 0;
}

int minilm_tokenize_json(const char *dir_in, const char *text, char **out, char *err,
                         size_t errcap) {
    char dir[4096], path[4200];
    bert_config c;
    wp_vocab *v = NULL;
    *out = NULL;
    int rc = minilm_resolve_dir(dir_in, dir, sizeof dir, err, errcap);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/config.json", dir);
    if ((rc = bert_config_load(path, &c, err, errcap))) return rc;
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    if ((rc = wp_vocab_load_file(path, &v, err, errcap))) return rc;
    int cap = c.max_positions < MINILM_MAX_TOKENS ? c.max_positions : MINILM_MAX_TOKENS;
    int32_t *ids = malloc((size_t)cap * sizeof *ids);
    int n = ids ? wp_tokenize(v, text, strlen(text), ids, cap) : REMEM_ENOMEM;
    if (n < 0) {
        rc = set_err(err, errcap, n, "minilm: cannot tokenize");
    } else {
        json_t *jids = json_array(), *jtok = json_array();
        for (int i = 0; i < n; i++) {
            json_array_append_new(jids, json_integer(ids[i]));
            json_t *tok = json_string(wp_vocab_token(v, ids[i]));
            json_array_append_new(jtok, tok ? tok : json_string("(invalid UTF-8)"));
        }
        json_t *o = json_pack("{s:o, s:o}", "ids", jids, "tokens", jtok);
        *out = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        if (!*out) rc = set_err(err, errcap, REMEM_ENOMEM, "minilm: out of memory");
    }
    free(ids);
    wp_vocab_free(v);
    return rc;
}
