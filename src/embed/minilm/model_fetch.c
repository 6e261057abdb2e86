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
 */
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "embed/minilm/minilm.h"
#include "remem.h"
#include "util/util.h"

#define PART_PREFIX    ".remem-part-"
/* No file of the model comes near this; a server that sends more is wrong. */
#define MAX_FILE_BYTES ((int64_t)1 << 31)

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

typedef struct transfer {
    FILE *out;
    EVP_MD_CTX *sha;
    int64_t bytes;
    int64_t max_bytes; /* more than this cannot be the expected file */
    int too_big;
    const char *name;
    minilm_progress_fn progress;
    void *ctx;
} transfer;

static size_t on_data(char *data, size_t size, size_t n, void *arg) {
    transfer *t = arg;
    size_t len = size * n;
    if (t->bytes + (int64_t)len > t->max_bytes) {
        t->too_big = 1;
        return 0; /* makes curl stop with a write error */
    }
    if (fwrite(data, 1, len, t->out) != len) return 0;
    EVP_DigestUpdate(t->sha, data, len);
    t->bytes += (int64_t)len;
    return len;
}

static int on_progress(void *arg, curl_off_t total, curl_off_t done, curl_off_t ut, curl_off_t un) {
    (void)ut;
    (void)un;
    transfer *t = arg;
    if (t->progress) t->progress(t->ctx, t->name, (int64_t)done, (int64_t)total);
    return 0;
}

static void curl_init_once(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

/* Fetch url into path (created), its sha256 into hex. */
static int fetch(const char *url, const char *path, const char *name, int64_t max_bytes,
                 char hex[65], minilm_progress_fn progress, void *ctx, char *err, size_t errcap) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, curl_init_once);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return set_err(err, errcap, REMEM_EIO, "%s: %s", path, strerror(errno));
    transfer t = {fdopen(fd, "wb"), EVP_MD_CTX_new(), 0, max_bytes, 0, name, progress, ctx};
    CURL *curl = curl_easy_init();
    int rc = 0;
    if (!t.out || !t.sha || !curl || !EVP_DigestInit_ex(t.sha, EVP_sha256(), NULL)) {
        if (!t.out) close(fd);
        rc = set_err(err, errcap, REMEM_ENOMEM, "pull: out of memory");
        goto out;
    }
    char curl_err[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_err);
    curl_easy_setopt(curl, CURLOPT_FAILONERROR, 1L);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L); /* the hub redirects to its CDN */
    curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https,file");
    curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 30L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L); /* stalled for a minute: give up */
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 60L);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "remem/" REMEM_VERSION);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    CURLcode cc = curl_easy_perform(curl);
    if (cc != CURLE_OK) {
        rc = set_err(err, errcap, REMEM_EIO, "pull: %s: %s", url,
                     t.too_big     ? "larger than the expected file"
                     : curl_err[0] ? curl_err
                                   : curl_easy_strerror(cc));
        goto out;
    }
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
    curl_easy_cleanup(curl);
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
