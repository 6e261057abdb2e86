/*
 * test_work.c: the server's workers (server/work.c), called directly with
 * jobs that block until the test lets them go: a request is taken by an
 * idle worker; when all are busy another worker starts, up to the maximum,
 * so a quick job never waits behind a blocked one while a worker may still
 * start; past the maximum requests wait in order, and past the queue's
 * bound work_submit refuses (counted); work_take_queued hands back the
 * requests no worker started; work_stop ends the workers. The file is
 * #included, as tests/test_pool.c does for the handle pool.
 */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "../server/work.c"
#include "test.h"

/* The jobs: each records that it ran; a job whose route is 1 blocks until
 * released. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int released, ran, order[64];

static void run_job(request *rq) {
    pthread_mutex_lock(&mu);
    if (rq->route == 1)
        while (!released) pthread_cond_wait(&cv, &mu);
    order[ran++ % 64] = rq->status;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void release_all(void) {
    pthread_mutex_lock(&mu);
    released = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

/* Wait (up to 5 s) until ran reaches n. 1 when it did. */
static int wait_ran(int n) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    pthread_mutex_lock(&mu);
    while (ran < n && pthread_cond_timedwait(&cv, &mu, &until) == 0) {}
    int ok = ran >= n;
    pthread_mutex_unlock(&mu);
    return ok;
}

static void reset(void) {
    released = 0;
    ran = 0;
}

static void test_elastic_and_bounded(void) {
    reset();
    work_pool w;
    CHECK_INT(work_init(&w, 1, 3, 2, run_job), 0);
    CHECK_INT(work_start(&w), 0);
    request rq[8];
    memset(rq, 0, sizeof rq);
    for (int i = 0; i < 8; i++) rq[i].status = i;
    /* Three blocked jobs take the three workers (two started on demand). */
    for (int i = 0; i < 3; i++) {
        rq[i].route = 1;
        CHECK_INT(work_submit(&w, &rq[i]), 0);
    }
    usleep(100 * 1000);
    work_stats ws;
    work_counts(&w, &ws);
    CHECK_INT(ws.threads, 3);
    CHECK_INT(ws.running, 3);
    /* Past the maximum: two wait, in order, and a third is refused. */
    CHECK_INT(work_submit(&w, &rq[3]), 0);
    CHECK_INT(work_submit(&w, &rq[4]), 0);
    CHECK_INT(work_submit(&w, &rq[5]), -1);
    work_counts(&w, &ws);
    CHECK_INT(ws.queued, 2);
    CHECK_INT(ws.rejected, 1);
    CHECK_INT(ran, 0);
    release_all();
    CHECK(wait_ran(5));
    work_counts(&w, &ws);
    CHECK_INT(ws.queued, 0);
    CHECK_INT(work_stop(&w, 2000), 0);
}

static void test_quick_job_beside_blocked_one(void) {
    reset();
    work_pool w;
    CHECK_INT(work_init(&w, 1, 4, 16, run_job), 0);
    CHECK_INT(work_start(&w), 0);
    request slow = {.route = 1, .status = 100}, quick = {.route = 0, .status = 7};
    CHECK_INT(work_submit(&w, &slow), 0);
    usleep(50 * 1000);
    CHECK_INT(work_submit(&w, &quick), 0);
    /* The quick job runs while the slow one still blocks its worker. */
    CHECK(wait_ran(1));
    CHECK_INT(order[0], 7);
    release_all();
    CHECK(wait_ran(2));
    CHECK_INT(work_stop(&w, 2000), 0);
}

static void test_take_queued(void) {
    reset();
    work_pool w;
    CHECK_INT(work_init(&w, 1, 1, 8, run_job), 0);
    CHECK_INT(work_start(&w), 0);
    request rq[4];
    memset(rq, 0, sizeof rq);
    for (int i = 0; i < 4; i++) {
        rq[i].route = 1;
        CHECK_INT(work_submit(&w, &rq[i]), 0);
    }
    usleep(100 * 1000);
    /* One runs; three were never started and come back, oldest first. */
    int n = 0;
    for (request *r = work_take_queued(&w); r; r = r->next) {
        CHECK(r == &rq[1 + n]);
        n++;
    }
    CHECK_INT(n, 3);
    /* A worker stuck in its job: work_stop says so instead of waiting. */
    CHECK_INT(work_stop(&w, 100), 1);
    release_all();
    CHECK(wait_ran(1));
    usleep(50 * 1000);
    work_stats ws;
    work_counts(&w, &ws);
    CHECK_INT(ws.threads, 0);
    CHECK_INT(ran, 1);
}

int main(int argc, char **argv) {
    test__only = argc > 1 ? argv[1] : NULL;
    RUN(test_elastic_and_bounded);
    RUN(test_quick_job_beside_blocked_one);
    RUN(test_take_queued);
    return TEST_EXIT();
}
