/*
 * cronexpr.h -- cron expressions: parse one, and compute its fire times
 * as epoch instants, in a time zone.  The scheduling of `sqlease cron` and
 * `run --schedule` is built on it, in the library so that the simulator
 * runs it too; it needs nothing of the OS but reading a zone's file
 * (tz.h, through the platform layer).
 *
 * A fire is an instant in epoch milliseconds (UTC), always a whole second:
 * every host computes the same instants from the same expression, which
 * is what lets a fleet agree on which fire it is claiming.
 *
 * SYNTAX
 *
 *   MIN HOUR DOM MON DOW            5 fields, fires at second 0
 *   SEC MIN HOUR DOM MON DOW        6 fields (as robfig/cron), seconds first
 *
 *   field   ranges                  names (any case)
 *   SEC     0-59
 *   MIN     0-59
 *   HOUR    0-23
 *   DOM     1-31                    ?  (the same as *)
 *   MON     1-12                    JAN-DEC
 *   DOW     0-7, 0 and 7 Sunday     SUN-SAT, ? (the same as *)
 *
 * A field is a list of elements separated by ',' (no blanks inside a
 * field; blanks and tabs separate fields).  An element is '*' (every
 * value), a value, or a range a-b (a <= b: 22-2 is refused, write
 * 22-23,0-2), each optionally followed by /n, a step: every n-th value
 * from the start of the range ('*' is the field's whole range) up to its
 * end; a/n alone runs from a to the field's maximum (robfig's reading).
 * n is 1 up to the number of values of the field (for the day of week,
 * whose '*' is 0-6: *\/2 is Sunday, Tuesday, Thursday, Saturday).  Names
 * stand for values anywhere a number may, except in a step.  (A step after '*' is written
 * *\/n in this comment, which a C comment could not hold otherwise.)
 *
 * Day of month and day of week, as cron(8) of Vixie and cronie does it:
 * if either field starts with '*' (or '?'), a day must match both (so a
 * plain '*' leaves the other field alone to decide, and "*\/2 in DOM, MON
 * in DOW" means Mondays that fall on odd days of the month); if neither
 * starts with '*', a day matches if it matches either ("0 0 1,15 * MON":
 * the 1st, the 15th and every Monday).  A field counts as starting with
 * '*' whatever follows the '*' (*\/2, *,5); robfig/cron differs there
 * (it counts only * and *\/1).
 *
 * Macros (any case): @yearly and @annually (0 0 1 1 *), @monthly
 * (0 0 1 * *), @weekly (0 0 * * 0), @daily and @midnight (0 0 * * *),
 * @hourly (0 * * * *), and @every DURATION: a fixed period, written as
 * sqlease_parse_duration reads a duration, or several in a row (5s, 90m,
 * 1h30m; a bare number is refused as it is everywhere else), a whole
 * number of seconds, at least 1 s and at most 30 days.  @every fires at
 * the multiples of its period since the epoch (1970-01-01T00:00:00Z), so
 * every host fires at the same instants whenever it started, and in no
 * zone (an offset change moves none of its fires).  @reboot is refused: a
 * fleet has no one boot to fire at.
 *
 * An expression that can never fire is refused (0 0 30 2 *: no February
 * has a 30th).  Whatever parses fires at least once every 41 years (the
 * longest wait there can be is for a February 29 that falls on a given
 * weekday, up to 40 years).
 *
 * TIME ZONES AND DAYLIGHT SAVING TIME
 *
 * The fields are local time in the expression's zone (UTC by default).
 * Where the zone's offset changes, as cronie does it (cron(8), "Daylight
 * Saving Time and other time changes"):
 *
 *  - A job at fixed times -- neither its minute nor its hour field starts
 *    with '*' (0 2 * * *, 30 1,13 * * *, @daily) -- fires once for each
 *    local time it names: a local time that a forward change skips fires
 *    at the first instant after the gap (02:30 on a night that goes from
 *    02:00 to 03:00 fires at 03:00, the instant of the change; several
 *    skipped times make that one fire), and a local time that a backward
 *    change repeats fires at its first occurrence only (local time shown
 *    again, below the highest it had reached, does not fire again).
 *  - Any other job (* in the minute or the hour field: *\/15 * * * *,
 *    0 * * * *, @hourly) fires at the local times that occur: a skipped
 *    time never fires, a repeated one fires at both occurrences.
 *
 * A 6-field job follows the same rule by its minute and hour fields.
 * Every change of offset is treated so, whatever its size (cronie applies
 * it to changes under 3 hours, the ones it can tell from a clock step;
 * here the zone's data says which are changes).
 *
 * TIME
 *
 * Instants from year 1 to year 9999 (SQLE_CRON_MIN_MS..SQLE_CRON_MAX_MS).
 * next and prev skip by field (a month, a day, an hour that cannot match
 * is passed over whole), so one takes well under a microsecond to a few
 * microseconds; they look SQLE_CRON_HORIZON_S ahead or back at most.
 *
 * Thread-safety: a parsed expression is immutable; any number of threads
 * may call next and prev on it at once.
 */
#ifndef SQLEASE_CRONEXPR_H
#define SQLEASE_CRONEXPR_H

#include <stddef.h>
#include <stdint.h>

#include "sqlease.h"
#include "tz.h"

typedef struct sqle_cron sqle_cron;

/* What a parse got wrong.  The message is one line and names the field
 * ("field 3 (day of month): 32 is not within 1..31"); column is where in
 * the expression the fault starts (1-based, in bytes), 0 when it is not in
 * the expression (the zone, memory).  A caller prints both, e.g.
 * "crontab:12: column 9: field 3 (day of month): ...". */
typedef struct sqle_cron_error {
    int status; /* the return value: SQLEASE_OK, SQLEASE_EINVAL, SQLEASE_ENOMEM */
    int column;
    char message[512]; /* as sqlease_error's, which a zone's error is copied from */
} sqle_cron_error;

/* The instants next and prev work on: 0001-01-01T00:00:00Z to
 * 9999-12-31T23:59:59Z. */
#define SQLE_CRON_MIN_MS (-62135596800000LL)
#define SQLE_CRON_MAX_MS 253402300799000LL
/* How far next and prev search before they answer "never": 41 years of
 * 366 days, the longest a parsed expression can go without a fire. */
#define SQLE_CRON_HORIZON_S (41LL * 366 * 86400)

/* Parse `expr` in the zone named `tz` (NULL or "" for UTC; see tz.h for
 * names and where the file is read) into *out, to free with
 * sqle_cron_free.  SQLEASE_OK, SQLEASE_EINVAL (err says what and where),
 * SQLEASE_ENOMEM.  Loads the zone for this expression alone: for many
 * expressions in one zone, open the zone once and use
 * sqle_cron_parse_in. */
int sqle_cron_parse(const char *expr, const char *tz, sqle_cron **out, sqle_cron_error *err);

/* The same in an open zone (NULL: UTC), which the expression keeps a
 * reference to (the caller may release its own at once). */
int sqle_cron_parse_in(const char *expr, sqle_tz *zone, sqle_cron **out,
                       sqle_cron_error *err);

void sqle_cron_free(sqle_cron *c);

/* The first fire strictly after after_ms, into *next_ms.  Returns 1, or 0
 * when there is none within SQLE_CRON_HORIZON_S or before
 * SQLE_CRON_MAX_MS (*next_ms untouched): the scheduler's "never". */
int sqle_cron_next(const sqle_cron *c, int64_t after_ms, int64_t *next_ms);

/* The latest fire at or before at_ms, into *prev_ms ("the latest
 * scheduled time at or before the database's now").  Returns 1, or 0 when
 * there is none within SQLE_CRON_HORIZON_S or after SQLE_CRON_MIN_MS. */
int sqle_cron_prev(const sqle_cron *c, int64_t at_ms, int64_t *prev_ms);

/* A nominal period in milliseconds: the shortest gap between two fires on
 * the calendar, offset changes aside (those can make one gap shorter: a
 * fixed-time job's skipped time fires at the change), e.g. for a default
 * limit on how late a fire may still run.  @every: its period.  For a
 * job whose shortest gap is longer than 28 years (the 29th of February on
 * one weekday), 28 years. */
int64_t sqle_cron_period_ms(const sqle_cron *c);

/* The zone the expression is evaluated in (never NULL; UTC's name is
 * "UTC"; the expression's reference: sqle_tz_ref it to keep it longer),
 * and whether it is an @every job (1) and so zone-free. */
sqle_tz *sqle_cron_zone(const sqle_cron *c);
int sqle_cron_is_every(const sqle_cron *c);

/* ISO 8601 in UTC, "2026-12-07T03:00:00Z" (".250" before the Z when the
 * instant is not a whole second; years before 1 or after 9999 with a sign
 * or more digits): what SQLEASE_FIRE shows a job.  Writes at most cap
 * bytes, NUL included (SQLE_CRON_ISO_MAX always fits); returns the length
 * of the text it wrote. */
#define SQLE_CRON_ISO_MAX 32
size_t sqle_cron_format_utc(int64_t ms, char *buf, size_t cap);

#endif
