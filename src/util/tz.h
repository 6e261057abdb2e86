/*
 * tz.h: a named time zone's offset from UTC (tz.c), for dates rendered in
 * a zone the configuration names.
 */
#ifndef REMEM_UTIL_TZ_H
#define REMEM_UTIL_TZ_H

#include <stdint.h>

/* 1 when zone is "UTC" or an IANA name with a file in the zone database
 * ("America/New_York"), else 0. */
int util_tz_valid(const char *zone);
/* The offset east of UTC, in seconds, of zone at ms since the epoch
 * (daylight saving included) into *offset_s. 0; -1 (offset 0) when the
 * zone is not valid. NULL, "" and "UTC" are UTC. Thread-safe against
 * other callers of this function (not against a host program changing
 * TZ at the same moment). */
int util_tz_offset(const char *zone, int64_t ms, int *offset_s);

#endif
