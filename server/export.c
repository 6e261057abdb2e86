/*
 * export.c: GET .../export streams through a pipe: remem_export pushes
 * lines from its own thread, libmicrohttpd pulls them as the client reads;
 * memory stays bounded by the pipe, and a client that goes away stops the
 * export.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "serverInt.h"

typedef struct export_job {
    server *srv;
    remem *db;
    char *ns;
    int vectors;
    int fd;
} export_job;

static int export_write(void *ctx, const char *data, size_t len) {
    export_job *job = ctx;
    while (len > 0) {
        ssize_t n = write(job->fd, data, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 1; /* the client went away: stop */
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static void *export_run(void *arg) {
    export_job *job = arg;
    int64_t count = 0;
    int rc = remem_export(job->db, job->ns, job->vectors, export_write, job, &count);
    if (rc != REMEM_OK) {
        /* The 200 is long gone: the failure becomes the stream's last line,
         * and a reader that sees {"error": ...} knows the export is cut. */
        json_t *e = json_pack("{s:{s:s,s:s}}", "error", "code", remem_status_name(rc), "message",
                              remem_errmsg(job->db));
        char *line = e ? json_dumps(e, JSON_COMPACT) : NULL;
        if (line) {
            export_write(job, line, strlen(line));
            export_write(job, "\n", 1);
        }
        free(line);
        json_decref(e);
    }
    close(job->fd);
    pool_put(&job->srv->pool, job->db, job->ns);
    atomic_fetch_sub(&job->srv->exports, 1);
    free(job->ns);
    free(job);
    return NULL;
}

void server_export(request *rq, reply *rp, const char *ns, int vectors) {
    server *srv = rq->srv;
    if (atomic_fetch_add(&srv->exports, 1) >= srv->max_exports) {
        atomic_fetch_sub(&srv->exports, 1);
        reply_error(rp, 503, "REMEM_EBUSY", "%d exports are already streaming; try again later",
                    srv->max_exports);
        return;
    }
    export_job *job = calloc(1, sizeof *job);
    int fds[2] = {-1, -1};
    char err[512] = "out of memory";
    if (!job || (ns && !(job->ns = strdup(ns))) || pipe2(fds, O_CLOEXEC) != 0 ||
        !(job->db = pool_get(&srv->pool, ns, err, sizeof err)))
        goto fail;
    job->srv = srv;
    job->vectors = vectors;
    job->fd = fds[1];
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int started = pthread_create(&t, &attr, export_run, job) == 0;
    pthread_attr_destroy(&attr);
    if (!started) {
        pool_put(&srv->pool, job->db, ns);
        goto fail;
    }
    rp->status = 200;
    rp->pipe_fd = fds[0];
    rp->content_type = "application/x-ndjson";
    return;
fail:
    if (fds[0] >= 0) close(fds[0]), close(fds[1]);
    if (job) free(job->ns);
    free(job);
    atomic_fetch_sub(&srv->exports, 1);
    reply_error(rp, 500, "REMEM_EIO", "export: %s", err);
}
