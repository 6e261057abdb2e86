/*
 * test_model_pull.c: `remem model pull` (remem_model_pull) against an HTTP
 * server inside the test (libmicrohttpd on 127.0.0.1, a free port) serving
 * the fixture model: good files, a corrupted copy, a connection cut midway,
 * a 404. It checks that the checksum is verified, that a wrong file is
 * refused, that nothing partial is ever left in the folder, that an
 * existing install survives a failed pull, and that a verified install is
 * not fetched again.
 */
#include <dirent.h>
#include <microhttpd.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "embed/embed.h"
#include "embed/minilm/minilm.h"
#include "remem.h"
#include "test.h"

static char fixture[4096];
static int requests;
static const char *NAMES[3] = {"model.safetensors", "vocab.txt", "config.json"};
static char shas[3][65];

static unsigned char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    *len = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

typedef struct cut {
    unsigned char *data;
    size_t len, sent;
} cut;

/* Sends the first half, then breaks the connection. */
static ssize_t cut_reader(void *cls, uint64_t pos, char *buf, size_t max) {
    cut *c = cls;
    if (pos >= c->len / 2) return MHD_CONTENT_READER_END_WITH_ERROR;
    size_t n = c->len / 2 - (size_t)pos;
    if (n > max) n = max;
    memcpy(buf, c->data + pos, n);
    return (ssize_t)n;
}

static void cut_free(void *cls) {
    cut *c = cls;
    free(c->data);
    free(c);
}

static enum MHD_Result serve(void *cls, struct MHD_Connection *conn, const char *url,
                             const char *method, const char *version, const char *upload,
                             size_t *upload_size, void **state) {
    (void)cls, (void)method, (void)version, (void)upload, (void)upload_size, (void)state;
    requests++;
    char mode[32] = "", name[128] = "", path[4400];
    sscanf(url, "/%31[^/]/%127s", mode, name);
    snprintf(path, sizeof path, "%s/%s", fixture, name);
    size_t len = 0;
    unsigned char *data = strcmp(mode, "missing") ? slurp(path, &len) : NULL;
    struct MHD_Response *r;
    unsigned status = MHD_HTTP_OK;
    if (!data) {
        r = MHD_create_response_from_buffer(9, "not found", MHD_RESPMEM_PERSISTENT);
        status = MHD_HTTP_NOT_FOUND;
    } else if (!strcmp(mode, "cut")) {
        cut *c = malloc(sizeof *c);
        *c = (cut){data, len, 0};
        r = MHD_create_response_from_callback(len, 65536, cut_reader, c, cut_free);
    } else {
        if (!strcmp(mode, "bad") && len > 100) data[len - 50] ^= 0x40;
        if (!strcmp(mode, "padded") && !strcmp(name, "config.json")) { /* 1000 spaces more */
            data = realloc(data, len + 1000);
            memset(data + len, ' ', 1000);
            len += 1000;
        }
        r = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
    }
    enum MHD_Result ok = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ok;
}

static int progress_calls;
static char progress_files[256];
static void on_progress(void *ctx, const char *file, int64_t done, int64_t total) {
    (void)ctx;
    progress_calls++;
    CHECK(done >= 0 && (total == 0 || done <= total));
    if (!strstr(progress_files, file)) {
        strcat(progress_files, file);
        strcat(progress_files, " ");
    }
}

/* Entries of dir other than the model files and the marker. */
static int stray_files(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d) return 0;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            !strcmp(e->d_name, MINILM_MARKER))
            continue;
        int known = 0;
        for (int i = 0; i < 3; i++) known |= !strcmp(e->d_name, NAMES[i]);
        if (!known) {
            fprintf(stderr, "  stray file %s/%s\n", dir, e->d_name);
            n++;
        }
    }
    closedir(d);
    return n;
}

static int exists(const char *dir, const char *name) {
    char p[4400];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0;
}

static int same_file(const char *a, const char *b) {
    size_t la, lb;
    unsigned char *x = slurp(a, &la), *y = slurp(b, &lb);
    int same = x && y && la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

static void rm_rf(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d) return;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[4400];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static void test_pull(void) {
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, serve,
                                            NULL, MHD_OPTION_END);
    CHECK(d != NULL);
    if (!d) return;
    int port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
    char base[128], url[160], tmp[] = "/tmp/remem-test-pull-XXXXXX", dir[256], err[1024];
    CHECK(mkdtemp(tmp) != NULL);
    snprintf(base, sizeof base, "http://127.0.0.1:%d", port);
    const char *fixture_sums[3] = {shas[0], shas[1], shas[2]};

    /* 1. A good pull into a folder that does not exist yet. */
    snprintf(dir, sizeof dir, "%s/a/b/model", tmp);
    snprintf(url, sizeof url, "%s/good/", base);
    int rc = remem_model_pull(dir, url, fixture_sums, on_progress, NULL, err, sizeof err);
    if (rc) fprintf(stderr, "  %s\n", err);
    CHECK_INT(rc, 0);
    CHECK(progress_calls > 0);
    CHECK_HAS(progress_files, "model.safetensors");
    CHECK_HAS(progress_files, "vocab.txt");
    for (int i = 0; i < 3; i++) {
        char a[4400], b[4400];
        snprintf(a, sizeof a, "%s/%s", fixture, NAMES[i]);
        snprintf(b, sizeof b, "%s/%s", dir, NAMES[i]);
        CHECK(same_file(a, b));
    }
    CHECK_INT(stray_files(dir), 0);
    CHECK(exists(dir, MINILM_MARKER));
    char why[512];
    CHECK_INT(minilm_marker_ok(dir, why, sizeof why), 1);
    /* Usable when asked for, never chosen automatically (not official). */
    CHECK_INT(embed_minilm_available(dir, why, sizeof why), 0);
    embed_config cfg = {0};
    cfg.model_dir = dir;
    embedder *e = NULL;
    CHECK_INT(embed_minilm_create(&cfg, &e, err, sizeof err), 0);
    if (e) CHECK(strncmp(e->model_id, "minilm:sha256:", 14) == 0);
    embed_destroy(e);
    char *info = NULL;
    CHECK_INT(remem_model_info(dir, 1, &info, err, sizeof err), 0);
    CHECK_HAS(info, "\"verified\": true");
    CHECK_HAS(info, "\"official\": false");
    remem_free(info);

    /* 2. Pulling again: already installed and verified, nothing fetched. */
    int before = requests;
    snprintf(url, sizeof url, "%s/missing", base);
    CHECK_INT(remem_model_pull(dir, url, fixture_sums, NULL, NULL, err, sizeof err), 0);
    CHECK_INT(requests, before);

    /* 3. The official checksum (no override): the fixture is refused and
     * nothing is left in the new folder. */
    char dir2[300];
    snprintf(dir2, sizeof dir2, "%s/official", tmp);
    snprintf(url, sizeof url, "%s/good", base);
    CHECK_INT(remem_model_pull(dir2, url, NULL, NULL, NULL, err, sizeof err), REMEM_ECORRUPT);
    CHECK_HAS(err, "model.safetensors");
    CHECK_HAS(err, "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db");
    CHECK_HAS(err, "nothing was installed");
    for (int i = 0; i < 3; i++) CHECK(!exists(dir2, NAMES[i]));
    CHECK_INT(stray_files(dir2), 0);

    /* 4. A corrupted file: refused, nothing left. */
    snprintf(url, sizeof url, "%s/bad", base);
    CHECK_INT(remem_model_pull(dir2, url, fixture_sums, NULL, NULL, err, sizeof err),
              REMEM_ECORRUPT);
    CHECK_HAS(err, "sha256");
    for (int i = 0; i < 3; i++) CHECK(!exists(dir2, NAMES[i]));
    CHECK_INT(stray_files(dir2), 0);

    /* 5. The connection breaks halfway: an I/O error naming the URL. */
    snprintf(url, sizeof url, "%s/cut", base);
    CHECK_INT(remem_model_pull(dir2, url, fixture_sums, NULL, NULL, err, sizeof err), REMEM_EIO);
    CHECK_HAS(err, "/cut/model.safetensors");
    CHECK(!exists(dir2, NAMES[0]));
    CHECK_INT(stray_files(dir2), 0);

    /* 6. A 404. */
    snprintf(url, sizeof url, "%s/missing", base);
    CHECK_INT(remem_model_pull(dir2, url, fixture_sums, NULL, NULL, err, sizeof err), REMEM_EIO);
    CHECK_HAS(err, "404");
    CHECK_INT(stray_files(dir2), 0);

    /* 7. A failed pull over an existing install leaves it as it was, and
     * the temporaries of a killed pull are cleaned up. */
    char stale[512];
    snprintf(stale, sizeof stale, "%s/.remem-part-model.safetensors-99999", dir);
    FILE *f = fopen(stale, "w");
    fputs("half", f);
    fclose(f);
    char other[65];
    memset(other, 'a', 64);
    other[64] = 0;
    const char *other_sums[3] = {other, NULL, NULL};
    snprintf(url, sizeof url, "%s/good", base);
    CHECK_INT(remem_model_pull(dir, url, other_sums, NULL, NULL, err, sizeof err), REMEM_ECORRUPT);
    CHECK(!exists(dir, ".remem-part-model.safetensors-99999"));
    CHECK_INT(stray_files(dir), 0);
    CHECK_INT(minilm_marker_ok(dir, why, sizeof why), 1);
    char a[4400], b[4400];
    snprintf(a, sizeof a, "%s/model.safetensors", fixture);
    snprintf(b, sizeof b, "%s/model.safetensors", dir);
    CHECK(same_file(a, b));

    /* 8. With the official checksum a file's size is known too: a download
     * that runs past it is stopped there. */
    const char *weights_only[3] = {shas[0], NULL, NULL};
    snprintf(url, sizeof url, "%s/padded", base);
    CHECK_INT(remem_model_pull(dir2, url, weights_only, NULL, NULL, err, sizeof err), REMEM_EIO);
    CHECK_HAS(err, "config.json: larger than the expected file");
    CHECK_INT(stray_files(dir2), 0);
    for (int i = 0; i < 3; i++) CHECK(!exists(dir2, NAMES[i]));

    /* 9. Bad arguments. */
    const char *short_sum[3] = {"abc", NULL, NULL};
    CHECK_INT(remem_model_pull(dir2, url, short_sum, NULL, NULL, err, sizeof err), REMEM_EINVAL);
    CHECK_HAS(err, "64 hex digits");

    rm_rf(dir);
    rm_rf(dir2);
    snprintf(dir, sizeof dir, "%s/a/b", tmp);
    rmdir(dir);
    snprintf(dir, sizeof dir, "%s/a", tmp);
    rmdir(dir);
    rmdir(tmp);
    MHD_stop_daemon(d);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    const char *root = getenv("REMEM_ROOT");
    snprintf(fixture, sizeof fixture, "%s/tests/data/minilm/model", root ? root : ".");
    for (int i = 0; i < 3; i++) {
        char p[4400], err[256];
        snprintf(p, sizeof p, "%s/%s", fixture, NAMES[i]);
        if (minilm_sha256_file(p, shas[i], NULL, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
    }
    /* A known value, so the hashing itself is checked too. */
    char empty[65], err[256];
    CHECK_INT(minilm_sha256_file("/dev/null", empty, NULL, err, sizeof err), 0);
    CHECK_STR(empty, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    RUN(test_pull);
    return TEST_EXIT();
}
