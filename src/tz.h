/*
 * tz.h -- time zones for the cron module: the offset from UTC at any
 * instant in a zone of the system's tz database, read from its TZif file
 * (RFC 8536) by the library itself.
 *
 * Why not the C library: localtime_r converts in the process's one zone,
 * $TZ, and switching it (setenv + tzset) is neither thread-safe nor
 * cheap, while one cron file may hold jobs in several zones
 * (CRON_TZ=...), evaluated by threads of their own.  A zone here is an
 * immutable value, built once from its file and shared by reference.
 *
 * What is read.  Versions 1 to 4 of the format.  Of a version 2+ file the
 * 64-bit data and the footer: the POSIX TZ string ("EST5EDT,M3.2.0,
 * M11.1.0", with version 3's hours up to 167 and negative) that gives the
 * offsets after the last transition of the data, which is where a
 * "slim" file (zic -b slim; Debian's tzdata may ship them) keeps every
 * future rule.  Before the first transition the offset is time type 0's
 * (RFC 8536 3.2); a file without transitions is its footer, else type 0.
 * A file with leap seconds (the right/ zones, which count seconds that
 * POSIX time does not) is refused: epoch instants from a database are
 * POSIX time.  Anything malformed (truncated, counts that do not add up,
 * transitions out of order, an offset beyond +-25 h, a footer that is not
 * a TZ string) is an error, never a guess: sqle_tz_load is fuzzed
 * (tests/fuzz/fuzz_tzif.c).
 *
 * Where.  sqle_tz_open reads $TZDIR/NAME, else the platform's database
 * directory (sqle_tzdir_default: /usr/share/zoneinfo on POSIX; Windows has
 * none, so there a zone other than UTC needs $TZDIR).  The name is checked
 * before any file is opened: 1 to SQLE_TZ_NAME_MAX bytes of
 * [A-Za-z0-9_+-/], '/'-separated parts none of which is empty, "." or
 * "..", not starting with '/'.  NULL, "", "UTC" and "Etc/UTC" are UTC
 * itself, with no file (so they work on Windows too).
 *
 * Instants are epoch seconds; the zone answers for
 * SQLE_TZ_MIN..SQLE_TZ_MAX (about +-34,000 years) and clamps beyond.
 */
#ifndef SQLEASE_TZ_H
#define SQLEASE_TZ_H

#include <stddef.h>
#include <stdint.h>

#include "sqlease.h"

typedef struct sqle_tz sqle_tz;

#define SQLE_TZ_NAME_MAX 128
/* The largest TZif file read (the largest in tzdata is about 4 KB fat). */
#define SQLE_TZ_FILE_MAX ((size_t)1 << 20)
/* The instants a zone answers for, and the bounds of its spans. */
#define SQLE_TZ_MIN (-((int64_t)1 << 40))
#define SQLE_TZ_MAX ((int64_t)1 << 40)

/* Check a zone name by the rules above: SQLEASE_OK or SQLEASE_EINVAL with
 * a message that says what is wrong. */
int sqle_tz_check_name(const char *name, sqlease_error *err);

/* The zone `name` (see above) into *out, a reference to release with
 * sqle_tz_release.  SQLEASE_EINVAL for a bad name, a zone with no file, a
 * file that cannot be read or is not a valid TZif file (the message says
 * which, and the path); SQLEASE_ENOMEM.  Thread-safe. */
int sqle_tz_open(const char *name, sqle_tz **out, sqlease_error *err);

/* The same from the `len` bytes of a TZif file at `data` (not kept),
 * under the name `name` (not checked: any text, for messages). */
int sqle_tz_load(const char *name, const unsigned char *data, size_t len, sqle_tz **out,
                 sqlease_error *err);

/* Another reference to z (returned), and the release of one.  A zone is
 * freed with its last reference; UTC is static.  Thread-safe: a zone may
 * be shared by expressions used from several threads. */
sqle_tz *sqle_tz_ref(sqle_tz *z);
void sqle_tz_release(sqle_tz *z);

/* The name it was opened under ("UTC" for UTC). */
const char *sqle_tz_name(const sqle_tz *z);
/* 1 for UTC itself (no offset ever), else 0. */
int sqle_tz_is_utc(const sqle_tz *z);

/* Seconds east of UTC at epoch second t: local time = t + offset. */
int32_t sqle_tz_offset(const sqle_tz *z, int64_t t);

/*
 * The stretch of time around t with one offset: off holds on [start, end)
 * and off_before at start - 1.  A stretch ends at the zone's next change
 * of offset, or sooner where the reader's view of the data changes (the
 * footer taking over, the footer's rules evaluated year by year); such a
 * bound has off_before == off at the next stretch, so a caller can tell a
 * real change (a gap where off_before < off, a repeat where it is more)
 * from a seam.  start is SQLE_TZ_MIN and end SQLE_TZ_MAX where the zone
 * has no change.
 */
typedef struct sqle_tz_span {
    int64_t start, end;
    int32_t off, off_before;
} sqle_tz_span;
void sqle_tz_span_at(const sqle_tz *z, int64_t t, sqle_tz_span *sp);

/* Calendar arithmetic the cron module shares (proleptic Gregorian). */
int64_t sqle_days_from_civil(int64_t y, int m, int d);
void sqle_civil_from_days(int64_t days, int64_t *y, int *m, int *d);
int sqle_days_in_month(int64_t y, int m);
/* Floor division and its remainder, for negative instants. */
int64_t sqle_floor_div(int64_t a, int64_t b);

#endif
