/*
 * time.c: the one time parser of time.h, and the clock and formatter
 * beside it.
 *
 * Why by hand and not strptime/timegm: timegm normalises out-of-range
 * fields (31 February becomes 3 March) where remem must refuse them, and
 * strptime depends on the locale. The calendar arithmetic below (days since
 * the epoch from year, month and day) is exact for every year 0000-9999.
 * Each check produces its own reason, because "not a valid time" alone
 * leaves a user guessing which part is wrong.
 */
#include "util/time.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t util_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Exactly n digits at *s; advances past them. */
static int read_digits(const char **s, int n, int *out) {
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!is_digit((*s)[i])) return 0;
        v = v * 10 + ((*s)[i] - '0');
    }
    *s += n;
    *out = v;
    return 1;
}

static int is_leap_year(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

static int64_t floor_div(int64_t a, int64_t b) { return (a - (a < 0 ? b - 1 : 0)) / b; }

/* Leap years in [1, y], extended below 1 so that year 0 counts as leap. */
static int64_t leap_years_through(int64_t y) {
    return floor_div(y, 4) - floor_div(y, 100) + floor_div(y, 400);
}

static int64_t days_since_epoch(int year, int month, int day) {
    static const int before[12] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
    int64_t days =
        (int64_t)(year - 1970) * 365 + leap_years_through(year - 1) - leap_years_through(1969);
    return days + before[month - 1] + (month > 2 && is_leap_year(year)) + day - 1;
}

static int why_f(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int why_f(char *why, size_t cap, const char *fmt, ...) {
    if (why && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}

#define FORMS \
    "use ISO 8601 such as \"2023-05-08\" or \"2023-05-08T13:56:00Z\", milliseconds, or \"now\""

/* A plain integer (optional minus sign) of milliseconds. 1 if s is one. */
static int parse_millis(const char *s, int64_t *ms, int *overflow) {
    const char *p = s + (*s == '-');
    if (!is_digit(*p)) return 0;
    while (is_digit(*p)) p++;
    if (*p) return 0;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    *overflow = errno == ERANGE;
    *ms = v;
    return 1;
}

static int check_fields(int year, int month, int day, int hour, int minute, int second, int zh,
                        int zm, char *why, size_t cap) {
    static const char *const names[12] = {"January",   "February", "March",    "April",
                                          "May",       "June",     "July",     "August",
                                          "September", "October",  "November", "December"};
    static const int month_days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month < 1 || month > 12) return why_f(why, cap, "month %d is not in 1..12", month);
    int last = month_days[month - 1] + (month == 2 && is_leap_year(year));
    if (day < 1) return why_f(why, cap, "day %d is not in 1..%d", day, last);
    if (day > last) return why_f(why, cap, "%s %04d has %d days", names[month - 1], year, last);
    if (hour > 23) return why_f(why, cap, "hour %d is not in 0..23", hour);
    if (minute > 59) return why_f(why, cap, "minute %d is not in 0..59", minute);
    if (second > 59) return why_f(why, cap, "second %d is not in 0..59", second);
    if (zh > 23 || zm > 59) return why_f(why, cap, "zone offset %02d:%02d is beyond 23:59", zh, zm);
    return 0;
}

int util_parse_time_why(const char *s, int64_t *ms, char *why, size_t cap) {
    if (why && cap) why[0] = '\0';
    if (!s || !*s) return why_f(why, cap, "empty; " FORMS);
    if (strcmp(s, "now") == 0) {
        *ms = util_now_ms();
        return 0;
    }
    int overflow = 0;
    int64_t v;
    if (parse_millis(s, &v, &overflow)) {
        if (overflow) return why_f(why, cap, "milliseconds out of range");
        *ms = v;
        return 0;
    }
    int year, month, day, hour = 0, minute = 0, second = 0, millis = 0;
    int zone_sign = 0, zh = 0, zm = 0;
    const char *p = s;
    if (!read_digits(&p, 4, &year) || *p++ != '-' || !read_digits(&p, 2, &month) || *p++ != '-' ||
        !read_digits(&p, 2, &day))
        return why_f(why, cap, FORMS);
    if (*p == 'T' || *p == 't' || *p == ' ') {
        p++;
        if (!read_digits(&p, 2, &hour) || *p++ != ':' || !read_digits(&p, 2, &minute))
            return why_f(why, cap, "the time of day must be HH:MM or HH:MM:SS");
        if (*p == ':') {
            p++;
            if (!read_digits(&p, 2, &second))
                return why_f(why, cap, "the seconds must be two digits");
            if (*p == '.' || *p == ',') {
                p++;
                if (!is_digit(*p)) return why_f(why, cap, "a fraction needs digits");
                for (int place = 100; is_digit(*p); p++, place /= 10) millis += (*p - '0') * place;
            }
        }
        if (*p == 'Z' || *p == 'z') {
            p++;
        } else if (*p == '+' || *p == '-') {
            zone_sign = *p++ == '+' ? 1 : -1;
            if (!read_digits(&p, 2, &zh)) return why_f(why, cap, "a zone offset is +HH:MM");
            if (*p == ':') {
                p++;
                if (!read_digits(&p, 2, &zm)) return why_f(why, cap, "a zone offset is +HH:MM");
            } else if (is_digit(*p) && !read_digits(&p, 2, &zm)) {
                return why_f(why, cap, "a zone offset is +HH:MM");
            }
        }
    }
    if (*p) return why_f(why, cap, "unexpected \"%.16s\" after the date; " FORMS, p);
    if (check_fields(year, month, day, hour, minute, second, zh, zm, why, cap)) return -1;
    int64_t seconds = days_since_epoch(year, month, day) * 86400 + hour * 3600 + minute * 60 +
                      second - zone_sign * (zh * 3600 + zm * 60);
    *ms = seconds * 1000 + millis;
    return 0;
}

int util_parse_time(const char *s, int64_t *ms) { return util_parse_time_why(s, ms, NULL, 0); }

int util_parse_time_field(const char *field, const char *s, int64_t *ms, char *err, size_t cap) {
    char why[160];
    if (util_parse_time_why(s, ms, why, sizeof why) == 0) return 0;
    if (err && cap) {
        const char *v = s ? s : "";
        size_t n = strlen(v);
        snprintf(err, cap, "%s: \"%.64s%s\" is not a valid time (%s)", field, v,
                 n > 64 ? "..." : "", why);
    }
    return -1;
}

void util_format_time(int64_t ms, char *buf, size_t cap) {
    time_t t = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    int frac = (int)(ms - (int64_t)t * 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
}
