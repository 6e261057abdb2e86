/*
 * model_fetch.c: `remem model pull`, the download of the MiniLM files with
 * libcurl, all or nothing.
 *
 * Each file goes to a hidden temporary name in the model folder (same file
 * system, so the final rename is atomic), its sha256 computed as the bytes
 * arrive. Only when every file has arrived whole and matches its checksum
 * are they renamed into place, the old marker removed first so that a crash
 * between renames never leaves a folder that claims to be verified; then the
 * marker is written. Any failure removes the temporaries and leaves the
 * folder as it was. Temporaries left by a killed process are removed by the
 * next pull.
 *
 * The transfer is src/net/'s: a GET streamed into the temporary file (the
 * sink below), redirects followed (the hub sends to its CDN), a size cap, a
 * stall limit instead of a total one (the weights take minutes on a slow
 * line), and retries of what may pass, each restarting the file and the
 * checksum from zero.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "embed/minilm/minilm.h"
#include "net/net.h"
#include "remem.h"
#include "util/util.h"

#define PART_PREFIX    ".remem-part-"
/* No file of the model comes near this; a server that sends more is wrong. */
#define MAX_FILE_BYTES ((int64_t)1 << 31)
/* A download that moves no byte for this long is given up (and retried). */
#define STALL_MS       60000
#define RETRIES        2
#define BACKOFF_MS     500

/* Errors go to the caller's buffer: util_errf. */
#define set_err util_errf

static int mkdir_p(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(path, 0755) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* Remove temporaries a killed pull left behind. */
static void remove_stale_parts(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d) return;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, PART_PREFIX, strlen(PART_PREFIX)) != 0) continue;
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
}

/* The sink: the temporary file and its running checksum. */
typedef struct transfer {
    FILE *out;
    const char *path;
    EVP_MD_CTX *sha;
    const char *name;
    minilm_progress_fn progress;
    void *ctx;
} transfer;

static int on_data(void *arg, const void *data, size_t len, char *err, size_t errcap) {
    transfer *t = arg;
    if (fwrite(data, 1, len, t->out) != len)
        return set_err(err, errcap, REMEM_EIO, "%s: %s", t->path, strerror(errno));
    EVP_DigestUpdate(t->sha, data, len);
    return 0;
}

/* A retry starts the file and the checksum over. */
static int on_restart(void *arg, char *err, size_t errcap) {
    transfer *t = arg;
    if (fflush(t->out) != 0 || ftruncate(fileno(t->out), 0) != 0 || fseek(t->out, 0, SEEK_SET))
        return set_err(err, errcap, REMEM_EIO, "%s: %s", t->path, strerror(errno));
    if (!EVP_DigestInit_ex(t->sha, EVP_sha256(), NULL))
        return set_err(err, errcap, REMEM_ENOMEM, "pull: out of memory");
    return 0;
}

static void on_progress(void *arg, int64_t done, int64_t total) {
    transfer *t = arg;
    if (t->progress) t->progress(t->ctx, t->name, done, total);
}

/* Fetch url into path (created), its sha256 into hex. */
static int fetch(const char *url, const char *path, const char *name, int64_t max_bytes,
                 char hex[65], minilm_progress_fn progress, void *ctx, char *err, size_t errcap) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return set_err(err, errcap, REMEM_EIO, "%s: %s", path, strerror(errno));
    transfer t = {fdopen(fd, "wb"), path, EVP_MD_CTX_new(), name, progress, ctx};
    net_client *client = NULL;
    net_response resp = {0};
    int rc = 0;
    if (!t.out || !t.sha || !EVP_DigestInit_ex(t.sha, EVP_sha256(), NULL)) {
        if (!t.out) close(fd);
        rc = set_err(err, errcap, REMEM_ENOMEM, "pull: out of memory");
        goto out;
    }
    if (!(client = net_client_new(err, errcap))) {
        rc = REMEM_EIO;
        goto out;
    }
    net_request rq = {
        .what = "pull",
        .url = url,
        .timeout_ms = -1, /* no total limit: the stall limit instead */
        .connect_timeout_ms = 30000,
        .stall_ms = STALL_MS,
        .retries = RETRIES,
        .backoff_ms = BACKOFF_MS,
        .max_bytes = max_bytes,
        .cap_name = "the expected file",
        .follow_redirects = 1,
        .allow_file = 1,
        .write = on_data,
        .restart = on_restart,
        .sink = &t,
        .progress = on_progress,
        .progress_ctx = &t,
    };
    if ((rc = net_perform(client, &rq, &resp, err, errcap))) goto out;
    if (fflush(t.out) != 0 || fsync(fileno(t.out)) != 0) {
        rc = set_err(err, errcap, REMEM_EIO, "%s: %s", path, strerror(errno));
        goto out;
    }
    unsigned char md[32];
    unsigned mdlen = 0;
    EVP_DigestFinal_ex(t.sha, md, &mdlen);
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
out:
    if (t.out && fclose(t.out) != 0 && !rc)
        rc = set_err(err, errcap, REMEM_EIO, "%s: %s", path, strerror(errno));
    EVP_MD_CTX_free(t.sha);
    net_response_free(&resp);
    net_client_free(client);
    return rc;
}

static void fsync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

int minilm_pull(const char *dir_in, const char *base_url, const char *const *expected,
                minilm_progress_fn progress, void *ctx, char *err, size_t errcap) {
    char dir[4096], shas[MINILM_NFILES][65], installed[MINILM_NFILES][65];
    char part[MINILM_NFILES][4400];
    int fetched[MINILM_NFILES] = {0};
    int rc = minilm_resolve_dir(dir_in, dir, sizeof dir, err, errcap);
    if (rc) return rc;
    if (!base_url || !*base_url) base_url = MINILM_DEFAULT_URL;
    size_t blen = strlen(base_url);
    while (blen > 0 && base_url[blen - 1] == '/') blen--;
    if (mkdir_p(dir) != 0)
        return set_err(err, errcap, REMEM_EIO, "pull: cannot create %s: %s", dir, strerror(errno));
    remove_stale_parts(dir);
    int have_marker = minilm_marker_shas(dir, installed, NULL, 0);

    for (int i = 0; i < MINILM_NFILES && !rc; i++) {
        const char *name = minilm_files[i].name;
        const char *want = expected && expected[i] ? expected[i] : minilm_files[i].sha256;
        if (strlen(want) != 64) {
            rc = set_err(err, errcap, REMEM_EINVAL, "pull: the sha256 for %s must be 64 hex digits",
                         name);
            break;
        }
        if (have_marker && strcasecmp(installed[i], want) == 0) { /* already there */
            memcpy(shas[i], installed[i], 65);
            continue;
        }
        char url[4400];
        snprintf(url, sizeof url, "%.*s/%s", (int)blen, base_url, name);
        snprintf(part[i], sizeof part[i], "%s/" PART_PREFIX "%s-%ld", dir, name, (long)getpid());
        fetched[i] = 1;
        /* With the official checksum the size is known: a longer download
         * cannot match, so it is stopped as soon as it overruns. */
        int64_t max = want == minilm_files[i].sha256 ? minilm_files[i].size : MAX_FILE_BYTES;
        rc = fetch(url, part[i], name, max, shas[i], progress, ctx, err, errcap);
        if (!rc && strcasecmp(shas[i], want) != 0)
            rc = set_err(err, errcap, REMEM_ECORRUPT,
                         "pull: %s from %s has sha256 %s, expected %s; nothing was installed", name,
                         url, shas[i], want);
    }
    if (!rc) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, MINILM_MARKER);
        unlink(path);
        for (int i = 0; i < MINILM_NFILES && !rc; i++) {
            if (!fetched[i]) continue;
            snprintf(path, sizeof path, "%s/%s", dir, minilm_files[i].name);
            if (rename(part[i], path) != 0)
                rc = set_err(err, errcap, REMEM_EIO, "pull: cannot move %s into place: %s", path,
                             strerror(errno));
            else
                fetched[i] = 0;
        }
        fsync_dir(dir);
        if (!rc) rc = minilm_marker_write(dir, (const char(*)[65])shas, err, errcap);
    }
    for (int i = 0; i < MINILM_NFILES; i++)
        if (fetched[i]) unlink(part[i]);
    return rc;
}
