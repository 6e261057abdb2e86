/*
 * time.h: remem's one reading of a time. Every input that carries a time
 * (a JSONL line's created_at, a filter's date operand, a recall's now, the
 * CLI's --now and --created-at, remem_parse_time) goes through
 * util_parse_time_field, so a date is valid everywhere or nowhere and a bad
 * one gets the same message on every path:
 *
 *     created_at: "2023-02-31" is not a valid time (February 2023 has 28 days)
 *
 * The parser is strict: it checks each part of a calendar date against
 * the calendar itself (leap years included) instead of letting timegm roll
 * 31 February over to 3 March, and computes the epoch milliseconds by
 * arithmetic, so it never depends on the process's time zone.
 */
#ifndef REMEM_UTIL_TIME_H
#define REMEM_UTIL_TIME_H

#include <stddef.h>
#include <stdint.h>

/* Times: int64 milliseconds since the epoch, UTC. */
int64_t util_now_ms(void);

/*
 * Accepted forms:
 *   "2023-05-08"                       midnight UTC
 *   "2023-05-08T13:56", "...T13:56:07" 'T', 't' or one space before the time
 *   "...:07.25", "...:07,250"          a fraction (milliseconds kept, the
 *                                      digits after them dropped)
 *   "...Z", "...+02:00", "...-0530", "...+02"   a zone (none: UTC)
 *   "1683554160000", "-5"              an integer of milliseconds
 *   "now"                              the clock
 * Years are four digits (0000-9999); months 1-12; days up to the month's
 * length; hours 0-23, minutes 0-59, seconds 0-59 (POSIX time has no leap
 * second); zone offsets up to 23:59.
 *
 * 0 and *ms on success; -1 on failure, with the reason (without the value)
 * in why (cap bytes; why may be NULL): "February 2023 has 28 days".
 */
int util_parse_time_why(const char *s, int64_t *ms, char *why, size_t cap);
/* The same without the reason. */
int util_parse_time(const char *s, int64_t *ms);
/*
 * The same for a named field: on failure err holds the one message every
 * face prints, `FIELD: "VALUE" is not a valid time (WHY)`, the value cut
 * at 64 bytes. 0 on success, -1 on failure.
 */
int util_parse_time_field(const char *field, const char *s, int64_t *ms, char *err, size_t cap);

/* ms as ISO 8601 UTC with milliseconds ("2023-05-08T13:56:00.000Z"). */
void util_format_time(int64_t ms, char *buf, size_t cap);

#endif
