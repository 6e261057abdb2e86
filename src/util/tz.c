/*
 * tz.c: a time zone's offset from UTC at a given time, for dates rendered
 * in the zone a configuration names (seed 004's injection block shows its
 * advisors' local time). The C library knows zones only through the TZ
 * variable, so the offset is read by switching TZ around one localtime_r,
 * under a lock, and putting it back. The zone database is Debian's
 * tzdata (/usr/share/zoneinfo); a name with no file there is refused, so
 * a typo is an error and not a silent UTC (the C library's fallback).
 */
#include "util/tz.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t tz_lock = PTHREAD_MUTEX_INITIALIZER;

int util_tz_valid(const char *zone) {
    if (!zone || !*zone || strstr(zone, "..") || zone[0] == '/') return 0;
    if (!strcmp(zone, "UTC")) return 1;
    char path[512];
    snprintf(path, sizeof path, "/usr/share/zoneinfo/%s", zone);
    return access(path, R_OK) == 0;
}

int util_tz_offset(const char *zone, int64_t ms, int *offset_s) {
    *offset_s = 0;
    if (!zone || !*zone || !strcmp(zone, "UTC")) return 0;
    if (!util_tz_valid(zone)) return -1;
    time_t t = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    char want[520];
    snprintf(want, sizeof want, ":%s", zone);
    pthread_mutex_lock(&tz_lock);
    const char *old = getenv("TZ");
    char *saved = old ? strdup(old) : NULL;
    struct tm tm;
    int rc = -1;
    if (setenv("TZ", want, 1) == 0) {
        tzset();
        if (localtime_r(&t, &tm)) {
            *offset_s = (int)tm.tm_gmtoff;
            rc = 0;
        }
    }
    if (saved)
        setenv("TZ", saved, 1);
    else
        unsetenv("TZ");
    tzset();
    pthread_mutex_unlock(&tz_lock);
    free(saved);
    return rc;
}
