/*
 * test_cronexpr.c -- CUnit tests of the cron expressions (src/cronexpr.c)
 * and of the time zones they are evaluated in (src/tz.c).  Needs no
 * database; the zones are the system's tz database's (tzdata), and a
 * part that needs a zone this system lacks is skipped, saying which.
 *
 *  - parse errors: the column and the message of each kind of mistake;
 *    forms that must mean the same (names, 7 for Sunday, macros, blanks);
 *  - the reference table, tests/data/cron_reference.txt: next and prev
 *    fires of expressions in zones with daylight saving time (gaps and
 *    repeats, 30-minute ones at Lord Howe, the southern hemisphere,
 *    Dublin's negative DST) and without, computed by brute force apart
 *    from this module (tests/cron_reference.py);
 *  - the daylight saving rules on the examples cronexpr.h gives;
 *  - @every, the nominal period, ISO 8601 formatting, the range ends, an
 *    expression that can never fire in its zone (bounded, not a loop);
 *  - the TZif reader against glibc's localtime_r (TZ set, one zone at a
 *    time: single-threaded) on random instants from 1850 to 2500, past
 *    2037 where the footer's rule takes over, and the footer's TZ strings
 *    against glibc's reading of the same strings;
 *  - malformed TZif files (every truncation of a real one, bytes flipped,
 *    crafted faults): an error, never a crash (ASan/UBSan builds check
 *    the "never");
 *  - zone names, $TZDIR, a zone shared by threads;
 *  - the time next() takes over 10,000 expressions.
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <CUnit/Basic.h>

#include "cronexpr.h"
#include "platform.h"
#include "testutil.h"
#include "tz.h"

/* ---- helpers ----------------------------------------------------------- */

static int failures_shown;

/* Report a failed check with its detail (the first 30 in full, so that a
 * broken table row does not bury the rest), and fail the test. */
#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            if (failures_shown++ < 30) {                                   \
                fprintf(stderr, "\n  %s:%d: ", __FILE__, __LINE__);        \
                fprintf(stderr, __VA_ARGS__);                              \
            }                                                              \
            CU_FAIL(#cond);                                                \
        }                                                                  \
    } while (0)

static int zone_file_exists(const char *name)
{
    char path[512];
    const char *dir = getenv("TZDIR");
    struct stat st;

    snprintf(path, sizeof path, "%s/%s", dir != NULL && *dir ? dir : "/usr/share/zoneinfo",
             name);
    return stat(path, &st) == 0;
}

/* The zone, or NULL after saying why it is skipped (once per name). */
static sqle_tz *zone_or_skip(const char *name)
{
    static char skipped[2048];
    sqle_tz *z = NULL;
    sqlease_error err;
    char why[300];

    if (strcmp(name, "UTC") != 0 && !zone_file_exists(name)) {
        if (strstr(skipped, name) == NULL && strlen(skipped) + strlen(name) + 2 < sizeof skipped) {
            strcat(skipped, name);
            strcat(skipped, " ");
            snprintf(why, sizeof why,
                     "time zone %s: no file in the tz database here (install tzdata)", name);
            tu_skip(why);
        }
        return NULL;
    }
    CHECK(sqle_tz_open(name, &z, &err) == SQLEASE_OK, "zone %s: %s\n", name, err.message);
    return z;
}

static int64_t iso_ms(const char *iso)
{
    int y, mo, d, h, mi, s;

    if (sscanf(iso, "%d-%d-%dT%d:%d:%dZ", &y, &mo, &d, &h, &mi, &s) != 6)
        return INT64_MIN;
    return (sqle_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s) * 1000;
}

static sqle_cron *parse_ok(const char *expr, const char *tz)
{
    sqle_cron *c = NULL;
    sqle_cron_error err;
    int rc = sqle_cron_parse(expr, tz, &c, &err);

    CHECK(rc == SQLEASE_OK, "'%s' in %s: %d, column %d: %s\n", expr, tz ? tz : "UTC", rc,
          err.column, err.message);
    return c;
}

static int64_t next_of(const sqle_cron *c, int64_t after)
{
    int64_t n = -1;
    return sqle_cron_next(c, after, &n) ? n : -1;
}

static int64_t prev_of(const sqle_cron *c, int64_t at)
{
    int64_t p = -1;
    return sqle_cron_prev(c, at, &p) ? p : -1;
}

static const char *show(int64_t ms, char *buf)
{
    if (ms == -1)
        return "never";
    sqle_cron_format_utc(ms, buf, SQLE_CRON_ISO_MAX);
    return buf;
}

/* ---- parsing ----------------------------------------------------------- */

static void test_parse_errors(void)
{
    static const struct {
        const char *expr;
        int column;
        const char *message;
    } cases[] = {
        { "", 1, "empty schedule" },
        { " \t ", 4, "empty schedule" },
        { "0 0 32 * *", 5, "field 3 (day of month): 32 is not within 1..31" },
        { "60 * * * *", 1, "field 1 (minute): 60 is not within 0..59" },
        { "0 60 * * * *", 3, "field 2 (minute): 60 is not within 0..59" },
        { "0 0 24 * * *", 5, "field 3 (hour): 24 is not within 0..23" },
        { "0 0 0 * 13 *", 9, "field 5 (month): 13 is not within 1..12" },
        { "0 0 * * 8", 9, "field 5 (day of week): 8 is not within 0..7" },
        { "0 0 12345678901 * *", 5, "field 3 (day of month): 12345678901 is not within 1..31" },
        { "* * * * * * *", 13,
          "too many fields: a schedule has 5 (MIN HOUR DOM MON DOW) or 6 (SEC MIN HOUR DOM "
          "MON DOW)" },
        { "* * * *", 8,
          "4 fields where a schedule has 5 (MIN HOUR DOM MON DOW) or 6 (SEC MIN HOUR DOM MON "
          "DOW)" },
        { "0 0 30 2 *", 5, "field 3 (day of month): never fires: no month in field 4 has 30 days" },
        { "0 0 31 4,6,9,11 *", 5,
          "field 3 (day of month): never fires: no month in field 4 has 31 days" },
        { "0 0 0 30-31 FEB *", 7,
          "field 4 (day of month): never fires: no month in field 5 has 30 days" },
        { "0 0 * FOO *", 7, "field 4 (month): unknown name 'FOO' (JAN..DEC)" },
        { "0 0 * * MON-FOO", 13, "field 5 (day of week): unknown name 'FOO' (SUN..SAT)" },
        { "0 0 * * MONDAY", 9, "field 5 (day of week): unknown name 'MONDAY' (SUN..SAT)" },
        { "0 MON * * *", 3, "field 2 (hour): 'MON' is not a number" },
        { "0 22-2 * * *", 3,
          "field 2 (hour): range 22-2 runs backwards (write it as two: 22-23,0-2)" },
        { "0 0 * * FRI-MON", 9,
          "field 5 (day of week): range 5-1 runs backwards (write it as two: 5-7,0-1)" },
        { "*/0 * * * *", 3, "field 1 (minute): step 0 is not within 1..60" },
        { "*/61 * * * *", 3, "field 1 (minute): step 61 is not within 1..60" },
        { "0 0 * * */8", 11, "field 5 (day of week): step 8 is not within 1..7" },
        { "*/ * * * *", 3, "field 1 (minute): a step needs a number after '/'" },
        { "1/x * * * *", 3, "field 1 (minute): a step needs a number after '/'" },
        { "1,,2 * * * *", 3, "field 1 (minute): empty list element" },
        { "1, * * * *", 3, "field 1 (minute): empty list element" },
        { ",1 * * * *", 1, "field 1 (minute): empty list element" },
        { "? * * * *", 1,
          "field 1 (minute): '?' is only for the day of month and the day of week" },
        { "*5 * * * *", 2, "field 1 (minute): unexpected '5'" },
        { "5- * * * *", 3, "field 1 (minute): a value is missing at the end" },
        { "-5 * * * *", 1, "field 1 (minute): '-' where a number or '*' belongs" },
        { "0 0 * * * ", 0, NULL },
        { "0 0 * * *\n", 10, "field 5 (day of week): unexpected byte 0x0a" },
        { "0 0 \xc3\xa9 * *", 5, "field 3 (day of month): byte 0xc3 where a number or '*' belongs" },
        { "0 0 1-5/2/3 * *", 10, "field 3 (day of month): unexpected '/'" },
        { "@reboot", 1,
          "@reboot is not supported: a fleet has no one boot to fire at (a host's own init "
          "system can run a job at its boot)" },
        { "@weekly 1", 9, "@weekly takes nothing after it" },
        { "@fortnightly", 1,
          "unknown macro '@fortnightly' (@yearly, @annually, @monthly, @weekly, @daily, "
          "@midnight, @hourly, @every)" },
        { "@every", 7, "@every needs a duration after it, e.g. @every 5m" },
        { "@every 90", 8, "@every: duration '90' has no unit: write 90ms, 90s or 90m" },
        { "@every 1h30", 10, "@every: duration '30' has no unit: write 30ms, 30s or 30m" },
        { "@every 1h 30m", 11, "@every takes one duration (write 1h30m, not 1h 30m)" },
        { "@every 0s", 8, "@every: the period 0s is shorter than 1s" },
        { "@every 999ms", 8, "@every: the period 999ms is shorter than 1s" },
        { "@every 1500ms", 8,
          "@every: the period 1500ms is not a whole number of seconds (fires are whole "
          "seconds)" },
        { "@every 5w", 8, "@every: duration '5w' has an unknown unit 'w' (use ms, s, m, h or d)" },
        { "@every 721h", 8, "@every: duration '721h' is too large (at most 30 days)" },
        { "@every 720h1s", 8, "@every: the period 720h1s is more than 30 days" },
        { "@every -5s", 8, "@every: duration '-5s' is negative" },
    };
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sqle_cron *c = NULL;
        sqle_cron_error err;
        int rc;

        memset(&err, 0x5a, sizeof err);
        rc = sqle_cron_parse(cases[i].expr, NULL, &c, &err);
        if (cases[i].message == NULL) {
            CHECK(rc == SQLEASE_OK && c != NULL && err.status == SQLEASE_OK
                      && err.column == 0 && err.message[0] == '\0',
                  "'%s': %d %s\n", cases[i].expr, rc, err.message);
        } else {
            CHECK(rc == SQLEASE_EINVAL && c == NULL && err.status == SQLEASE_EINVAL,
                  "'%s' parsed (rc %d)\n", cases[i].expr, rc);
            CHECK(err.column == cases[i].column, "'%s': column %d, want %d (%s)\n",
                  cases[i].expr, err.column, cases[i].column, err.message);
            CHECK(strcmp(err.message, cases[i].message) == 0, "'%s':\n   got  %s\n   want %s\n",
                  cases[i].expr, err.message, cases[i].message);
        }
        sqle_cron_free(c);
    }
}

/* Two expressions fire at the same 50 instants from `from` on. */
static void check_same(const char *a, const char *b, const char *tz, int64_t from)
{
    sqle_cron *ca = parse_ok(a, tz), *cb = parse_ok(b, tz);
    int64_t ta = from, tb = from;
    int i;
    char x[SQLE_CRON_ISO_MAX], y[SQLE_CRON_ISO_MAX];

    if (ca == NULL || cb == NULL) {
        sqle_cron_free(ca);
        sqle_cron_free(cb);
        return;
    }
    for (i = 0; i < 50; i++) {
        ta = next_of(ca, ta);
        tb = next_of(cb, tb);
        if (ta != tb) {
            CHECK(ta == tb, "'%s' fires at %s, '%s' at %s\n", a, show(ta, x), b, show(tb, y));
            break;
        }
        if (ta < 0)
            break;
    }
    sqle_cron_free(ca);
    sqle_cron_free(cb);
}

static void test_parse_forms(void)
{
    const int64_t from = 1704067200000LL; /* 2024-01-01T00:00:00Z */

    check_same("0 0 * * 7", "0 0 * * 0", NULL, from);
    check_same("0 0 * * sun", "@weekly", NULL, from);
    check_same("0 0 * * SUN", "0 0 * * Sun", NULL, from);
    check_same("0 0 * * 1-7", "0 0 * * *", NULL, from);
    check_same("0 0 * * 6-7", "0 0 * * 0,6", NULL, from);
    check_same("0 0 * * 7/1", "0 0 * * 0", NULL, from);
    check_same("\t 0\t0  * * *  ", "@daily", NULL, from);
    check_same("@DAILY", "@midnight", NULL, from);
    check_same("@Annually", "@yearly", NULL, from);
    check_same("@yearly", "0 0 1 jan *", NULL, from);
    check_same("@monthly", "0 0 1 * *", NULL, from);
    check_same("@hourly", "0 * * * *", NULL, from);
    check_same("0 0 0 * * *", "0 0 * * *", NULL, from);
    check_same("0 0 ? * ?", "0 0 * * *", NULL, from);
    check_same("0 0 * jan-dec/2 *", "0 0 * 1,3,5,7,9,11 *", NULL, from);
    check_same("5/20 * * * *", "5,25,45 * * * *", NULL, from);
    check_same("*/25 * * * *", "0,25,50 * * * *", NULL, from);
    check_same("0 0 * * */2", "0 0 * * 0,2,4,6", NULL, from);
    check_same("0 0 * * 1/2", "0 0 * * 1,3,5", NULL, from);
    check_same("0 0 1-10/3,20 * *", "0 0 1,4,7,10,20 * *", NULL, from);
    check_same("*/60 * * * *", "0 * * * *", NULL, from);
    check_same("0 0 */31 * *", "0 0 1 * *", NULL, from);
    /* The day fields: both when one starts with '*', else either. */
    check_same("0 0 */1 * MON", "0 0 * * MON", NULL, from);
    check_same("0 0 *,1 * MON", "0 0 * * MON", NULL, from);
    check_same("0 0 1-31 * MON", "0 0 * * *", NULL, from);
    check_same("@every 1h30m", "@every 90m", NULL, from);
    check_same("@every 1h1m1s", "@every 3661s", NULL, from);
    check_same("@every 2s500ms500ms", "@every 3s", NULL, from);
}

/* ---- the reference table ---------------------------------------------- */

typedef struct zone_slot {
    char name[64];
    sqle_tz *z;
    int absent;
} zone_slot;

static sqle_tz *cached_zone(zone_slot *slots, size_t cap, const char *name, int *absent)
{
    size_t i;

    for (i = 0; i < cap && slots[i].name[0] != '\0'; i++) {
        if (strcmp(slots[i].name, name) == 0) {
            *absent = slots[i].absent;
            return slots[i].z;
        }
    }
    if (i == cap)
        return NULL;
    snprintf(slots[i].name, sizeof slots[i].name, "%s", name);
    slots[i].z = zone_or_skip(name);
    slots[i].absent = slots[i].z == NULL;
    *absent = slots[i].absent;
    return slots[i].z;
}

static int64_t field_ms(const char *s)
{
    return strcmp(s, "never") == 0 ? -1 : strtoll(s, NULL, 10);
}

static void test_reference_table(void)
{
    const char *src = getenv("SQLEASE_SRCDIR");
    char path[1024], line[1024], got_iso[SQLE_CRON_ISO_MAX], a[SQLE_CRON_ISO_MAX],
        b[SQLE_CRON_ISO_MAX];
    zone_slot zones[32];
    FILE *f;
    int rows = 0, skipped = 0, lineno = 0;
    size_t i;

    memset(zones, 0, sizeof zones);
    snprintf(path, sizeof path, "%s/tests/data/cron_reference.txt", src ? src : ".");
    f = fopen(path, "r");
    CHECK(f != NULL, "%s: %s (SQLEASE_SRCDIR names the source tree)\n", path, strerror(errno));
    if (f == NULL)
        return;
    while (fgets(line, sizeof line, f) != NULL) {
        char *col[8], *p = line, *nl;
        int n = 0, absent = 0;
        sqle_tz *z;
        sqle_cron *c = NULL;
        sqle_cron_error err;
        int64_t at, want_next, want_prev, got_next, got_prev;

        lineno++;
        if ((nl = strchr(line, '\n')) != NULL)
            *nl = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        while (n < 8) {
            col[n++] = p;
            p = strchr(p, '\t');
            if (p == NULL)
                break;
            *p++ = '\0';
        }
        CHECK(n >= 7, "%s:%d: %d columns\n", path, lineno, n);
        if (n < 7)
            continue;
        z = cached_zone(zones, sizeof zones / sizeof zones[0], col[1], &absent);
        if (absent) {
            skipped++;
            continue;
        }
        at = strtoll(col[2], NULL, 10);
        want_next = field_ms(col[3]);
        want_prev = field_ms(col[5]);
        CHECK(sqle_cron_parse_in(col[0], z, &c, &err) == SQLEASE_OK, "%s:%d: '%s': %s\n", path,
              lineno, col[0], err.message);
        if (c == NULL)
            continue;
        got_next = next_of(c, at);
        got_prev = prev_of(c, at);
        CHECK(got_next == want_next, "%s:%d: '%s' in %s after %s: next %s, want %s\n", path,
              lineno, col[0], col[1], show(at, got_iso), show(got_next, a), col[4]);
        CHECK(got_prev == want_prev, "%s:%d: '%s' in %s at %s: prev %s, want %s\n", path, lineno,
              col[0], col[1], show(at, got_iso), show(got_prev, b), col[6]);
        if (want_next >= 0) {
            sqle_cron_format_utc(want_next, got_iso, sizeof got_iso);
            CHECK(strcmp(got_iso, col[4]) == 0 && iso_ms(col[4]) == want_next,
                  "%s:%d: %lld formats as %s, want %s\n", path, lineno, (long long)want_next,
                  got_iso, col[4]);
        }
        /* What holds for every fire, whatever the table says. */
        if (got_next >= 0) {
            CHECK(got_next > at && got_next % 1000 == 0, "%s:%d: next %lld\n", path, lineno,
                  (long long)got_next);
            CHECK(prev_of(c, got_next) == got_next, "%s:%d: prev(next) is not next\n", path,
                  lineno);
            CHECK(prev_of(c, got_next - 1) <= at, "%s:%d: a fire between at and next\n", path,
                  lineno);
        }
        if (got_prev >= 0)
            CHECK(got_prev <= at && got_prev % 1000 == 0
                      && next_of(c, got_prev - 1) == got_prev,
                  "%s:%d: prev %lld\n", path, lineno, (long long)got_prev);
        sqle_cron_free(c);
        rows++;
    }
    fclose(f);
    for (i = 0; i < sizeof zones / sizeof zones[0]; i++)
        sqle_tz_release(zones[i].z);
    CHECK(rows > 1000 || skipped > 0, "only %d rows in %s\n", rows, path);
    fprintf(stderr, "\n  reference table: %d rows checked, %d skipped (zone absent)\n", rows,
            skipped);
}

/* ---- daylight saving time, by example ---------------------------------- */

/* The fires of expr in tz from `from`, as ISO 8601 UTC, joined by ' '. */
static void check_fires(const char *expr, const char *tz, const char *from, const char *want)
{
    sqle_tz *z = zone_or_skip(tz);
    sqle_cron *c = NULL;
    sqle_cron_error err;
    char got[1024] = "", iso[SQLE_CRON_ISO_MAX];
    int64_t t = iso_ms(from);
    size_t count = 1, i;

    if (z == NULL)
        return;
    for (i = 0; want[i] != '\0'; i++)
        count += want[i] == ' ';
    CHECK(sqle_cron_parse_in(expr, z, &c, &err) == SQLEASE_OK, "%s: %s\n", expr, err.message);
    for (i = 0; c != NULL && i < count; i++) {
        t = next_of(c, t);
        sqle_cron_format_utc(t, iso, sizeof iso);
        if (i > 0)
            strcat(got, " ");
        strcat(got, t < 0 ? "never" : iso);
    }
    CHECK(strcmp(got, want) == 0, "'%s' in %s from %s:\n   got  %s\n   want %s\n", expr, tz, from,
          got, want);
    sqle_cron_free(c);
    sqle_tz_release(z);
}

static void test_dst_rules(void)
{
    /* New York, 2024-03-10: 02:00 EST becomes 03:00 EDT (07:00Z). */
    check_fires("30 2 * * *", "America/New_York", "2024-03-09T00:00:00Z",
                "2024-03-09T07:30:00Z 2024-03-10T07:00:00Z 2024-03-11T06:30:00Z");
    check_fires("0,30 2 * * *", "America/New_York", "2024-03-10T06:00:00Z",
                "2024-03-10T07:00:00Z 2024-03-11T06:00:00Z");
    check_fires("*/30 2 * * *", "America/New_York", "2024-03-10T06:00:00Z",
                "2024-03-11T06:00:00Z 2024-03-11T06:30:00Z");
    check_fires("0 3 * * *", "America/New_York", "2024-03-10T06:00:00Z",
                "2024-03-10T07:00:00Z 2024-03-11T07:00:00Z");
    /* 2024-11-03: 02:00 EDT becomes 01:00 EST (06:00Z); 01:xx is twice. */
    check_fires("30 1 * * *", "America/New_York", "2024-11-03T00:00:00Z",
                "2024-11-03T05:30:00Z 2024-11-04T06:30:00Z");
    check_fires("*/30 1 * * *", "America/New_York", "2024-11-03T00:00:00Z",
                "2024-11-03T05:00:00Z 2024-11-03T05:30:00Z 2024-11-03T06:00:00Z "
                "2024-11-03T06:30:00Z 2024-11-04T06:00:00Z");
    check_fires("0 */30 1 * * *", "America/New_York", "2024-11-03T05:00:00Z",
                "2024-11-03T05:30:00Z 2024-11-03T06:00:00Z 2024-11-03T06:30:00Z");
    check_fires("@hourly", "America/New_York", "2024-11-03T04:30:00Z",
                "2024-11-03T05:00:00Z 2024-11-03T06:00:00Z 2024-11-03T07:00:00Z");
    /* Lord Howe: half-hour changes.  2024-10-06 02:00 (+10:30) becomes
     * 02:30 (+11) at 15:30Z; 2024-04-07 02:00 (+11) becomes 01:30
     * (+10:30) at 15:00Z, so 01:30-01:59 is twice. */
    check_fires("15 2 * * *", "Australia/Lord_Howe", "2024-10-05T00:00:00Z",
                "2024-10-05T15:30:00Z 2024-10-06T15:15:00Z");
    check_fires("45 1 * * *", "Australia/Lord_Howe", "2024-04-06T00:00:00Z",
                "2024-04-06T14:45:00Z 2024-04-07T15:15:00Z");
    check_fires("*/15 1 * * *", "Australia/Lord_Howe", "2024-04-06T14:20:00Z",
                "2024-04-06T14:30:00Z 2024-04-06T14:45:00Z 2024-04-06T15:00:00Z "
                "2024-04-06T15:15:00Z 2024-04-07T14:30:00Z");
    /* @every is zone-free: the same instants in any zone, across changes. */
    check_fires("@every 45m", "America/New_York", "2024-11-03T05:00:00Z",
                "2024-11-03T05:15:00Z 2024-11-03T06:00:00Z 2024-11-03T06:45:00Z");
}

/* A zone whose clocks go from 02:00 to 03:00 every March 1st (J60),
 * crafted as a TZif file of footer alone: a job at 02:xx on that day
 * alone, not at fixed times, can never fire; the search gives up after
 * its horizon, quickly, rather than looping. */
static size_t tzif_build(unsigned char *buf, int version, const int64_t *times,
                         const unsigned char *idx, uint32_t timecnt, const int32_t *offs,
                         const unsigned char *dst, uint32_t typecnt, const char *footer);

static void test_never(void)
{
    unsigned char file[512];
    const int32_t offs[] = { 0 };
    const unsigned char dst[] = { 0 };
    size_t len = tzif_build(file, '2', NULL, NULL, 0, offs, dst, 1, "AAA0BBB-1,J60/2,J300/3");
    sqle_tz *z = NULL;
    sqle_cron *c = NULL;
    sqle_cron_error cerr;
    sqlease_error err;
    int64_t t, start;

    CHECK(sqle_tz_load("Test/March", file, len, &z, &err) == SQLEASE_OK, "%s\n", err.message);
    if (z == NULL)
        return;
    CHECK(sqle_cron_parse_in("* 2 1 3 *", z, &c, &cerr) == SQLEASE_OK, "%s\n", cerr.message);
    start = sqle_mono_ms();
    CHECK(!sqle_cron_next(c, 0, &t), "fired at %lld\n", (long long)t);
    CHECK(!sqle_cron_prev(c, 1704067200000LL, &t), "fired at %lld\n", (long long)t);
    CHECK(sqle_mono_ms() - start < 1000, "'never' took %lld ms\n",
          (long long)(sqle_mono_ms() - start));
    sqle_cron_free(c);
    /* At fixed times, the skipped 02:00 fires at the change, 02:00Z. */
    CHECK(sqle_cron_parse_in("0 2 1 3 *", z, &c, &cerr) == SQLEASE_OK, "%s\n", cerr.message);
    CHECK(next_of(c, 1704067200000LL) == iso_ms("2024-03-01T02:00:00Z"), "got %lld\n",
          (long long)next_of(c, 1704067200000LL));
    sqle_cron_free(c);
    sqle_tz_release(z);
}

/* ---- @every, the period, formatting, the range ----------------------- */

static void test_every(void)
{
    sqle_cron *c = parse_ok("@every 5s", NULL), *d = parse_ok("@every 1h30m", "UTC");

    if (c != NULL) {
        CHECK(sqle_cron_is_every(c), "not @every\n");
        CHECK(next_of(c, 0) == 5000 && next_of(c, 1) == 5000 && next_of(c, 4999) == 5000
                  && next_of(c, 5000) == 10000 && next_of(c, -1) == 0 && next_of(c, -5000) == 0,
              "next\n");
        CHECK(prev_of(c, 0) == 0 && prev_of(c, 4999) == 0 && prev_of(c, 5000) == 5000
                  && prev_of(c, -1) == -5000,
              "prev\n");
        CHECK(sqle_cron_period_ms(c) == 5000, "period %lld\n", (long long)sqle_cron_period_ms(c));
    }
    if (d != NULL) {
        int64_t t = next_of(d, 1704067200000LL); /* 2024-01-01 */
        CHECK(t % 5400000 == 0 && t > 1704067200000LL && t - 1704067200000LL <= 5400000,
              "%lld\n", (long long)t);
    }
    sqle_cron_free(c);
    sqle_cron_free(d);
}

static void test_period(void)
{
    static const struct {
        const char *expr;
        int64_t ms;
    } cases[] = {
        { "* * * * *", 60000 },
        { "*/15 * * * *", 900000 },
        { "5,55 * * * *", 600000 },
        { "0 * * * *", 3600000 },
        { "0 1,23 * * *", 7200000 },
        { "0 0 * * *", 86400000 },
        { "0 0 * * 0", 604800000 },
        { "0 0 * * 1,3", 172800000 },
        { "0 0 1 * *", 28LL * 86400000 },
        { "0 0 1,31 * *", 86400000 },
        { "0 0 13 * FRI", 86400000 },
        { "0 0 1 1 *", 365LL * 86400000 },
        { "0 0 29 2 *", 1461LL * 86400000 },
        { "0 0 29 2 */7", 10227LL * 86400000 },
        { "30 59 23 31 12 *", 365LL * 86400000 },
        { "*/10 * * * * *", 10000 },
        { "0,50 59 * * * *", 50000 },
        { "0,50 * * * * *", 10000 },
        { "0 0,59 * * * *", 60000 },
        { "0 59 0,23 * * *", 3600000 },
        { "59 59 23 * * *", 86400000 },
        { "@every 90m", 5400000 },
        { "@hourly", 3600000 },
    };
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sqle_cron *c = parse_ok(cases[i].expr, NULL);
        if (c == NULL)
            continue;
        CHECK(sqle_cron_period_ms(c) == cases[i].ms, "'%s': period %lld ms, want %lld\n",
              cases[i].expr, (long long)sqle_cron_period_ms(c), (long long)cases[i].ms);
        sqle_cron_free(c);
    }
}

static void test_format(void)
{
    static const struct {
        int64_t ms;
        const char *iso;
    } cases[] = {
        { 0, "1970-01-01T00:00:00Z" },
        { -1, "1969-12-31T23:59:59.999Z" },
        { 1796612400000LL, "2026-12-07T03:00:00Z" },
        { 1796615999250LL, "2026-12-07T03:59:59.250Z" },
        { 951782400000LL, "2000-02-29T00:00:00Z" },
        { SQLE_CRON_MAX_MS, "9999-12-31T23:59:59Z" },
        { SQLE_CRON_MAX_MS + 1000, "+10000-01-01T00:00:00Z" },
        { SQLE_CRON_MIN_MS, "0001-01-01T00:00:00Z" },
        { SQLE_CRON_MIN_MS - 1000, "0000-12-31T23:59:59Z" },
        { -62198755200000LL, "-0001-01-01T00:00:00Z" },
    };
    char buf[SQLE_CRON_ISO_MAX];
    size_t i, n;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        n = sqle_cron_format_utc(cases[i].ms, buf, sizeof buf);
        CHECK(strcmp(buf, cases[i].iso) == 0 && n == strlen(cases[i].iso), "%lld: %s, want %s\n",
              (long long)cases[i].ms, buf, cases[i].iso);
    }
    n = sqle_cron_format_utc(0, buf, 5);
    CHECK(n == 4 && strcmp(buf, "1970") == 0, "cap 5: %zu '%s'\n", n, buf);
    CHECK(sqle_cron_format_utc(0, buf, 0) == 0, "cap 0\n");
}

static void test_range_ends(void)
{
    sqle_cron *every_second = parse_ok("* * * * * *", NULL), *yearly = parse_ok("@yearly", NULL);
    int64_t t;

    if (every_second == NULL || yearly == NULL)
        goto out;
    CHECK(!sqle_cron_next(every_second, SQLE_CRON_MAX_MS, &t), "after the end\n");
    CHECK(next_of(every_second, SQLE_CRON_MAX_MS - 1) == SQLE_CRON_MAX_MS, "the last second\n");
    CHECK(!sqle_cron_next(yearly, SQLE_CRON_MAX_MS - 1000, &t), "no year 10000\n");
    CHECK(!sqle_cron_prev(every_second, SQLE_CRON_MIN_MS - 1, &t), "before the start\n");
    CHECK(prev_of(yearly, SQLE_CRON_MIN_MS) == SQLE_CRON_MIN_MS, "year 1\n");
    CHECK(next_of(yearly, INT64_MIN) == SQLE_CRON_MIN_MS, "from INT64_MIN\n");
    CHECK(prev_of(yearly, INT64_MAX) == iso_ms("9999-01-01T00:00:00Z"), "from INT64_MAX\n");
    CHECK(!sqle_cron_next(NULL, 0, &t) && !sqle_cron_next(yearly, 0, NULL)
              && !sqle_cron_prev(NULL, 0, &t),
          "NULL\n");
out:
    sqle_cron_free(every_second);
    sqle_cron_free(yearly);
}

/* ---- zones --------------------------------------------------------------- */

static void test_zone_names(void)
{
    static const char *const bad[] = {
        "../etc/passwd", "Europe/../../etc/passwd", "/etc/localtime", "Europe//Paris",
        "Europe/./Paris", "Europe/Paris/", "Europe/Paris ", "Europe\\Paris", "Europe/Par.is",
        "Europe/Pari$", "..", ".",
    };
    static const char *const good[] = { "Europe/Paris", "Etc/GMT+5", "America/Port-au-Prince",
                                        "America/Argentina/Buenos_Aires" };
    char long_name[SQLE_TZ_NAME_MAX + 2];
    sqlease_error err;
    sqle_tz *z = NULL;
    sqle_cron *c = NULL;
    sqle_cron_error cerr;
    size_t i;

    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(sqle_tz_check_name(bad[i], &err) == SQLEASE_EINVAL && err.message[0] != '\0',
              "'%s' accepted\n", bad[i]);
        CHECK(sqle_tz_open(bad[i], &z, &err) == SQLEASE_EINVAL && z == NULL, "'%s' opened\n",
              bad[i]);
    }
    for (i = 0; i < sizeof good / sizeof good[0]; i++)
        CHECK(sqle_tz_check_name(good[i], &err) == SQLEASE_OK, "'%s': %s\n", good[i],
              err.message);
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    CHECK(sqle_tz_check_name(long_name, &err) == SQLEASE_EINVAL, "long name\n");
    long_name[SQLE_TZ_NAME_MAX] = '\0';
    CHECK(sqle_tz_check_name(long_name, &err) == SQLEASE_OK, "128 bytes: %s\n", err.message);

    /* UTC needs no file. */
    CHECK(sqle_tz_open(NULL, &z, &err) == SQLEASE_OK && sqle_tz_is_utc(z)
              && strcmp(sqle_tz_name(z), "UTC") == 0,
          "NULL\n");
    CHECK(sqle_tz_open("Etc/UTC", &z, &err) == SQLEASE_OK && sqle_tz_is_utc(z), "Etc/UTC\n");
    sqle_tz_release(z);

    CHECK(sqle_tz_open("No/Such_Zone", &z, &err) == SQLEASE_EINVAL
              && strstr(err.message, "unknown time zone 'No/Such_Zone' (no file ") != NULL,
          "%s\n", err.message);
    if (zone_file_exists("Europe")) {
        CHECK(sqle_tz_open("Europe", &z, &err) == SQLEASE_EINVAL
                  && strstr(err.message, "cannot read") != NULL,
              "%s\n", err.message);
    }
    if (zone_file_exists("zone1970.tab"))
        CHECK(sqle_tz_open("zone1970.tab", &z, &err) == SQLEASE_EINVAL, "zone1970.tab\n");
    CHECK(sqle_cron_parse("* * * * *", "Nowhere/Zone", &c, &cerr) == SQLEASE_EINVAL
              && c == NULL && cerr.column == 0
              && strstr(cerr.message, "unknown time zone 'Nowhere/Zone'") != NULL,
          "%d %s\n", cerr.column, cerr.message);
    CHECK(sqle_cron_parse("* * * * *", "../zone", &c, &cerr) == SQLEASE_EINVAL, "../zone\n");
    c = parse_ok("0 0 * * *", "Etc/UTC");
    CHECK(c != NULL && strcmp(sqle_tz_name(sqle_cron_zone(c)), "UTC") == 0, "zone name\n");
    sqle_cron_free(c);
    c = parse_ok("0 0 * * *", NULL);
    CHECK(c != NULL && sqle_tz_is_utc(sqle_cron_zone(c)), "default zone\n");
    sqle_cron_free(c);
}

/*
 * A TZif file: the given transitions and types (designations "AAA"), in
 * version 1 (version 0) or in version '2'..'4' with a minimal version 1
 * block, the 64-bit data and the footer.  Returns its length.
 */
static unsigned char *put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
    return p + 4;
}

static unsigned char *header(unsigned char *p, int version, uint32_t timecnt, uint32_t typecnt)
{
    memcpy(p, "TZif", 4);
    p[4] = (unsigned char)version;
    memset(p + 5, 0, 15);
    p += 20;
    p = put32(p, 0);       /* isutcnt */
    p = put32(p, 0);       /* isstdcnt */
    p = put32(p, 0);       /* leapcnt */
    p = put32(p, timecnt); /* timecnt */
    p = put32(p, typecnt); /* typecnt */
    return put32(p, 4);    /* charcnt: "AAA\0" */
}

static size_t tzif_build(unsigned char *buf, int version, const int64_t *times,
                         const unsigned char *idx, uint32_t timecnt, const int32_t *offs,
                         const unsigned char *dst, uint32_t typecnt, const char *footer)
{
    unsigned char *p = buf;
    uint32_t i;
    int wide = version != 0;

    if (wide) {
        /* The version 1 block of a slim file: one type, no transition. */
        p = header(p, version, 0, 1);
        p = put32(p, 0);
        *p++ = 0;
        *p++ = 0;
        memcpy(p, "AAA", 4);
        p += 4;
    }
    p = header(p, version, timecnt, typecnt);
    for (i = 0; i < timecnt; i++) {
        if (wide) {
            p = put32(p, (uint32_t)((uint64_t)times[i] >> 32));
            p = put32(p, (uint32_t)times[i]);
        } else {
            p = put32(p, (uint32_t)(int32_t)times[i]);
        }
    }
    for (i = 0; i < timecnt; i++)
        *p++ = idx[i];
    for (i = 0; i < typecnt; i++) {
        p = put32(p, (uint32_t)offs[i]);
        *p++ = dst[i];
        *p++ = 0;
    }
    memcpy(p, "AAA", 4);
    p += 4;
    if (wide) {
        *p++ = '\n';
        memcpy(p, footer, strlen(footer));
        p += strlen(footer);
        *p++ = '\n';
    }
    return (size_t)(p - buf);
}

static void test_tzif_crafted(void)
{
    /* Two transitions: +1 h at 1000, back to 0 at 2000, then the footer. */
    const int64_t times[] = { 1000, 2000 };
    const unsigned char idx[] = { 1, 0 };
    const int32_t offs[] = { 0, 3600 };
    const unsigned char dst[] = { 0, 1 };
    unsigned char file[1024];
    sqle_tz *z = NULL;
    sqlease_error err;
    sqle_tz_span sp;
    size_t len;

    len = tzif_build(file, 0, times, idx, 2, offs, dst, 2, "");
    CHECK(sqle_tz_load("v1", file, len, &z, &err) == SQLEASE_OK, "v1: %s\n", err.message);
    if (z != NULL) {
        CHECK(sqle_tz_offset(z, 999) == 0 && sqle_tz_offset(z, 1000) == 3600
                  && sqle_tz_offset(z, 1999) == 3600 && sqle_tz_offset(z, 2000) == 0
                  && sqle_tz_offset(z, 4000000000LL) == 0,
              "v1 offsets\n");
        sqle_tz_span_at(z, 1500, &sp);
        CHECK(sp.start == 1000 && sp.end == 2000 && sp.off == 3600 && sp.off_before == 0,
              "span %lld..%lld\n", (long long)sp.start, (long long)sp.end);
        sqle_tz_span_at(z, 5, &sp);
        CHECK(sp.start == SQLE_TZ_MIN && sp.end == 1000 && sp.off == 0, "first span\n");
        sqle_tz_release(z);
    }
    /* Version 2 with a footer after the transitions; version 4. */
    len = tzif_build(file, '2', times, idx, 2, offs, dst, 2, "XXX-2");
    CHECK(sqle_tz_load("v2", file, len, &z, &err) == SQLEASE_OK, "v2: %s\n", err.message);
    if (z != NULL) {
        CHECK(sqle_tz_offset(z, 1999) == 3600 && sqle_tz_offset(z, 2000) == 7200
                  && sqle_tz_offset(z, 1LL << 35) == 7200,
              "v2 offsets\n");
        sqle_tz_span_at(z, 3000, &sp);
        CHECK(sp.start == 2000 && sp.off == 7200 && sp.off_before == 3600, "v2 span\n");
        sqle_tz_release(z);
    }
    len = tzif_build(file, '4', times, idx, 2, offs, dst, 2, "<+0530>-5:30");
    CHECK(sqle_tz_load("v4", file, len, &z, &err) == SQLEASE_OK, "v4: %s\n", err.message);
    CHECK(z == NULL || sqle_tz_offset(z, 3000) == 19800, "v4 offset\n");
    sqle_tz_release(z);
    /* Daylight time all year (version 3): the rule's year is standard
     * time's, so New Year's Eve stays on daylight time. */
    len = tzif_build(file, '3', NULL, NULL, 0, offs, dst, 1, "EST5EDT,0/0,J365/25");
    CHECK(sqle_tz_load("v3", file, len, &z, &err) == SQLEASE_OK, "v3: %s\n", err.message);
    if (z != NULL) {
        int64_t t;
        for (t = 1893456000LL - 86400 * 3; t < 1893456000LL + 86400 * 3; t += 1800)
            CHECK(sqle_tz_offset(z, t) == -14400, "all-year DST at %lld: %d\n", (long long)t,
                  (int)sqle_tz_offset(z, t));
        sqle_tz_span_at(z, 1893456000LL, &sp);
        CHECK(sp.off_before == sp.off, "a seam, not a change\n");
        sqle_tz_release(z);
    }
}

/* Spans and a fixed-time job hold together in a zone: each span is one
 * offset, and next and prev agree, from each of n days after `from`. */
static void check_zone_coherent(const char *what, sqle_tz *z, int64_t from, int days)
{
    sqle_cron *c = NULL;
    sqle_cron_error err;
    int i;

    CHECK(sqle_cron_parse_in("30 2 * * *", z, &c, &err) == SQLEASE_OK, "%s\n", err.message);
    for (i = 0; c != NULL && i < days; i++) {
        int64_t t = from + (int64_t)i * 86400, n;
        sqle_tz_span sp;
        sqle_tz_span_at(z, t, &sp);
        CHECK(sp.start <= t && t < sp.end && sqle_tz_offset(z, sp.start) == sp.off
                  && sqle_tz_offset(z, sp.end - 1) == sp.off
                  && (sp.start <= SQLE_TZ_MIN || sqle_tz_offset(z, sp.start - 1) == sp.off_before),
              "%s: span %lld..%lld at %lld\n", what, (long long)sp.start, (long long)sp.end,
              (long long)t);
        n = next_of(c, t * 1000);
        CHECK(n > t * 1000 && prev_of(c, n) == n && prev_of(c, n - 1) <= t * 1000,
              "%s: next(%lld) = %lld, prev of it %lld\n", what, (long long)t * 1000,
              (long long)n, (long long)prev_of(c, n));
    }
    sqle_cron_free(c);
}

/* Rules the fuzzer found to trouble the footer's reading (regressions;
 * their inputs are seeds of tests/fuzz/corpus/tzif/regress-*): daylight
 * time all year after a transition in the data, where stretches looked
 * up from different years overlapped; and an end of daylight time that
 * falls in the year before its own (J3 at -167 h), where deciding by
 * t's year alone made the offset inside one stretch change. */
static void test_tzif_odd_rules(void)
{
    const int64_t times[] = { 1173596400LL };
    const unsigned char idx[] = { 1 };
    const int32_t offs[] = { -18000, -14400 };
    const unsigned char dst[] = { 0, 1 };
    unsigned char file[512];
    sqle_tz *z = NULL;
    sqlease_error err;
    size_t len;

    len = tzif_build(file, '3', times, idx, 1, offs, dst, 2, "EST5EDT,0/0,J365/25");
    CHECK(sqle_tz_load("all-year", file, len, &z, &err) == SQLEASE_OK, "%s\n", err.message);
    if (z != NULL) {
        check_zone_coherent("all-year", z, 2208988800LL - 40 * 86400, 120);
        sqle_tz_release(z);
    }
    len = tzif_build(file, '3', NULL, NULL, 0, offs, dst, 1, "EST2EDT,0/1,J3/-167");
    CHECK(sqle_tz_load("end-before", file, len, &z, &err) == SQLEASE_OK, "%s\n", err.message);
    if (z != NULL) {
        check_zone_coherent("end-before", z, 1704067200LL - 20 * 86400, 60);
        /* Daylight time from 01:00 on January 1st until 167 h before the
         * start of January 3rd of the next year, December 27th. */
        CHECK(sqle_tz_offset(z, 1703980800LL) == -7200, "on Dec 31: %d\n",
              (int)sqle_tz_offset(z, 1703980800LL));
        CHECK(sqle_tz_offset(z, 1719792000LL) == -3600, "on Jul 1: %d\n",
              (int)sqle_tz_offset(z, 1719792000LL));
        CHECK(sqle_tz_offset(z, 1703642400LL - 1) == -3600
                  && sqle_tz_offset(z, 1703642400LL) == -7200,
              "the end, Dec 27 02:00Z\n");
        sqle_tz_release(z);
    }
}

static void check_refused(const char *what, const unsigned char *file, size_t len,
                          const char *needle)
{
    sqle_tz *z = NULL;
    sqlease_error err;

    memset(&err, 0, sizeof err);
    CHECK(sqle_tz_load(what, file, len, &z, &err) == SQLEASE_EINVAL && z == NULL
              && (needle == NULL || strstr(err.message, needle) != NULL),
          "%s: %s\n", what, err.message);
    sqle_tz_release(z);
}

static void test_tzif_malformed(void)
{
    const int64_t times[] = { 1000, 2000 }, backwards[] = { 2000, 1000 };
    const unsigned char idx[] = { 1, 0 }, bad_idx[] = { 2, 0 };
    const int32_t offs[] = { 0, 3600 }, huge[] = { 0, 26 * 3600 };
    const unsigned char dst[] = { 0, 1 }, bad_dst[] = { 0, 2 };
    unsigned char file[1024], *real = NULL;
    size_t len, real_len = 0, i;
    sqle_tz *z = NULL;
    sqlease_error err;
    char path[512];
    const char *dir = getenv("TZDIR");
    unsigned seed = 12345;

    len = tzif_build(file, '2', times, idx, 2, offs, dst, 2, "AAA0");
    check_refused("magic", (const unsigned char *)"TZIF2", 5, "not a TZif file");
    memcpy(file, "TZIf", 4);
    check_refused("magic", file, len, "not a TZif file");
    memcpy(file, "TZif", 4);
    file[4] = '1';
    check_refused("version", file, len, "unknown version");
    len = tzif_build(file, '2', backwards, idx, 2, offs, dst, 2, "AAA0");
    check_refused("order", file, len, "out of order");
    len = tzif_build(file, '2', times, bad_idx, 2, offs, dst, 2, "AAA0");
    check_refused("index", file, len, "does not have");
    len = tzif_build(file, '2', times, idx, 2, huge, dst, 2, "AAA0");
    check_refused("offset", file, len, "malformed local time type");
    len = tzif_build(file, '2', times, idx, 2, offs, bad_dst, 2, "AAA0");
    check_refused("isdst", file, len, "malformed local time type");
    len = tzif_build(file, '2', times, idx, 0, offs, dst, 0, "AAA0");
    check_refused("no type", file, len, "inconsistent counts");
    static const char *const footers[] = { "FOO", "EST5EDT", "EST5EDT,M3.2.0", "EST", "E5",
                                           "EST25", "EST5EDT,M13.1.0,M11.1.0",
                                           "EST5EDT,M3.6.0,M11.1.0", "EST5EDT,J0,J100",
                                           "EST5EDT,M3.2.0/168,M11.1.0", "<EST5" };
    for (i = 0; i < sizeof footers / sizeof footers[0]; i++) {
        len = tzif_build(file, '2', times, idx, 2, offs, dst, 2, footers[i]);
        check_refused(footers[i], file, len, "not a POSIX TZ string");
    }
    len = tzif_build(file, '2', times, idx, 2, offs, dst, 2, "AAA0");
    check_refused("no final newline", file, len - 1, "no footer");
    /* Leap seconds: set the version 2 block's leapcnt (with room for one
     * record) -- refused for what it is, not for its size. */
    {
        unsigned char leap[1024];
        size_t v1 = 44 + 4 + 2 + 4; /* the minimal version 1 block */
        len = tzif_build(leap, '2', times, idx, 2, offs, dst, 2, "AAA0");
        memmove(leap + len - 6 + 12, leap + len - 6, 6); /* the footer, after one record */
        memset(leap + len - 6, 0, 12);
        put32(leap + v1 + 28, 1);
        check_refused("leap", leap, len + 12, "leap seconds");
    }

    /* Every truncation of a real file, and bytes flipped in it. */
    snprintf(path, sizeof path, "%s/America/New_York", dir != NULL && *dir ? dir : "/usr/share/zoneinfo");
    if (sqle_file_read(path, SQLE_TZ_FILE_MAX, &real, &real_len) != 0) {
        tu_skip("America/New_York: no TZif file to truncate (install tzdata)");
        return;
    }
    CHECK(sqle_tz_load("real", real, real_len, &z, &err) == SQLEASE_OK, "%s\n", err.message);
    sqle_tz_release(z);
    for (i = 0; i < real_len; i++) {
        z = NULL;
        CHECK(sqle_tz_load("cut", real, i, &z, &err) != SQLEASE_OK && z == NULL,
              "a file cut at %zu bytes loaded\n", i);
        sqle_tz_release(z);
    }
    for (i = 0; i < real_len * 3; i++) {
        size_t at = i / 3;
        unsigned char keep = real[at];
        seed = seed * 1103515245u + 12345u;
        real[at] ^= (unsigned char)(i % 3 == 0 ? 0xff : 1u << ((seed >> 16) % 8));
        z = NULL;
        if (sqle_tz_load("flipped", real, real_len, &z, &err) == SQLEASE_OK) {
            int64_t t;
            for (t = -(1LL << 34); t < (1LL << 34); t += (1LL << 28)) {
                sqle_tz_span sp;
                int32_t off = sqle_tz_offset(z, t);
                sqle_tz_span_at(z, t, &sp);
                CHECK(off > -26 * 3600 && off < 26 * 3600 && sp.off == off && sp.start <= t
                          && t < sp.end,
                      "byte %zu flipped: offset %d, span %lld..%lld at %lld\n", at, (int)off,
                      (long long)sp.start, (long long)sp.end, (long long)t);
            }
        } else {
            CHECK(err.status == SQLEASE_EINVAL && err.message[0] != '\0', "no message\n");
        }
        sqle_tz_release(z);
        real[at] = keep;
    }
    free(real);

    /* A right/ zone has leap seconds: refused, saying so. */
    if (zone_file_exists("right/UTC")) {
        CHECK(sqle_tz_open("right/UTC", &z, &err) == SQLEASE_EINVAL
                  && strstr(err.message, "leap seconds") != NULL,
              "%s\n", err.message);
    }
}

/* $TZDIR names the database; a crafted zone there is read. */
static void test_tzdir(void)
{
    char dir[600], path[700];
    const int32_t offs[] = { 3 * 3600 };
    const unsigned char dst[] = { 0 };
    unsigned char file[256];
    size_t len = tzif_build(file, '2', NULL, NULL, 0, offs, dst, 1, "<+03>-3");
    const char *old = getenv("TZDIR");
    char saved[600] = "";
    sqle_tz *z = NULL;
    sqlease_error err;
    FILE *f;

    if (old != NULL)
        snprintf(saved, sizeof saved, "%s", old);
    snprintf(dir, sizeof dir, "%s/zoneinfo", tu_dir());
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/Test", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/Test/Plus_3", dir);
    f = fopen(path, "wb");
    CHECK(f != NULL && fwrite(file, 1, len, f) == len, "write %s\n", path);
    if (f != NULL)
        fclose(f);
    setenv("TZDIR", dir, 1);
    CHECK(sqle_tz_open("Test/Plus_3", &z, &err) == SQLEASE_OK, "%s\n", err.message);
    CHECK(z != NULL && sqle_tz_offset(z, 0) == 10800
              && strcmp(sqle_tz_name(z), "Test/Plus_3") == 0,
          "offset\n");
    sqle_tz_release(z);
    CHECK(sqle_tz_open("Test/Minus_3", &z, &err) == SQLEASE_EINVAL
              && strstr(err.message, dir) != NULL,
          "%s\n", err.message);
    if (saved[0] != '\0')
        setenv("TZDIR", saved, 1);
    else
        unsetenv("TZDIR");
    remove(path);
}

/* ---- against glibc ------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int64_t rand_between(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng() % (uint64_t)(hi - lo));
}

static long glibc_offset(int64_t t)
{
    time_t tt = (time_t)t;
    struct tm tm;

    if (localtime_r(&tt, &tm) == NULL)
        return -999999;
    return tm.tm_gmtoff;
}

/* Compare sqle_tz_offset with glibc's under TZ=tz at n random instants
 * between lo and hi, and each span's ends.  Returns the mismatches. */
static int compare_with_glibc(const sqle_tz *z, const char *tz, int64_t lo, int64_t hi, int n)
{
    int i, bad = 0;

    setenv("TZ", tz, 1);
    tzset();
    for (i = 0; i < n; i++) {
        int64_t t = rand_between(lo, hi);
        long want = glibc_offset(t);
        int32_t got = sqle_tz_offset(z, t);
        sqle_tz_span sp;

        if (got != want) {
            if (bad++ < 5)
                CHECK(got == want, "%s at %lld: offset %d, glibc %ld\n", tz, (long long)t,
                      (int)got, want);
            continue;
        }
        sqle_tz_span_at(z, t, &sp);
        if (!(sp.start <= t && t < sp.end && sp.off == got
              && (sp.start <= SQLE_TZ_MIN || glibc_offset(sp.start) == sp.off)
              && (sp.start <= SQLE_TZ_MIN || glibc_offset(sp.start - 1) == sp.off_before)
              && (sp.end >= SQLE_TZ_MAX || glibc_offset(sp.end - 1) == sp.off))) {
            if (bad++ < 5)
                CHECK(0, "%s at %lld: span %lld..%lld (%d, before %d) against glibc %ld %ld %ld\n",
                      tz, (long long)t, (long long)sp.start, (long long)sp.end, (int)sp.off,
                      (int)sp.off_before, glibc_offset(sp.start), glibc_offset(sp.start - 1),
                      glibc_offset(sp.end - 1));
        }
    }
    return bad;
}

static void test_zones_against_glibc(void)
{
    static const char *const zones[] = {
        "America/New_York", "Europe/London", "Australia/Lord_Howe", "Australia/Sydney",
        "Europe/Dublin", "America/Santiago", "America/Nuuk", "Asia/Jerusalem", "Pacific/Chatham",
        "Asia/Kolkata", "America/St_Johns", "Africa/Casablanca", "Antarctica/Troll",
        "Asia/Tehran", "America/Sao_Paulo", "Pacific/Apia", "Europe/Moscow", "Pacific/Auckland",
        "America/Havana", "Asia/Gaza",
    };
    const char *old = getenv("TZ");
    char saved[256] = "";
    size_t i;
    int compared = 0, bad = 0;

    if (old != NULL)
        snprintf(saved, sizeof saved, "%s", old);
    for (i = 0; i < sizeof zones / sizeof zones[0]; i++) {
        sqle_tz *z = zone_or_skip(zones[i]);
        if (z == NULL)
            continue;
        /* 1850 to 2150 (LMT, wars, the data's last year 2037 and the
         * footer after it), then 2037 to 2500: the footer alone. */
        bad += compare_with_glibc(z, zones[i], -3786825600LL, 5680281600LL, 1500);
        bad += compare_with_glibc(z, zones[i], 2114380800LL, 16725225600LL, 500);
        compared += 2000;
        sqle_tz_release(z);
    }
    if (old != NULL)
        setenv("TZ", saved, 1);
    else
        unsetenv("TZ");
    tzset();
    fprintf(stderr, "\n  zones against glibc: %d instants, %d mismatches\n", compared, bad);
}

/* The footer's TZ strings, read by this module (a TZif file of footer
 * alone) and by glibc (the same string as TZ). */
static void test_footers_against_glibc(void)
{
    static const char *const rules[] = {
        "EST5EDT,M3.2.0,M11.1.0",
        "GMT0BST,M3.5.0/1,M10.5.0",
        "IST-1GMT0,M10.5.0,M3.5.0/1",
        "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0",
        "AEST-10AEDT,M10.1.0,M4.1.0/3",
        "<-04>4<-03>,M9.1.6/24,M4.1.6/24",
        "<-02>2<-01>,M3.5.0/-1,M10.5.0/0",
        "IST-2IDT,M3.4.4/26,M10.5.0",
        "<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45",
        "NZST-12NZDT,M9.5.0,M4.1.0/3",
        "CST6CDT,J60/2,J300/2",
        "CST6CDT,59/2,300/2",
        "XXX3:30YYY2:15:10,M3.2.0/1:02:03,M11.1.0/-1:30",
        "<+00>0<+02>-2,M3.5.0/1,M10.5.0/3",
        "ABC-5:45",
        "UTC0",
    };
    const int32_t offs[] = { 0 };
    const unsigned char dst[] = { 0 };
    unsigned char file[512];
    const char *old = getenv("TZ");
    char saved[256] = "";
    size_t i, len;
    int bad = 0;

    if (old != NULL)
        snprintf(saved, sizeof saved, "%s", old);
    for (i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        sqle_tz *z = NULL;
        sqlease_error err;
        len = tzif_build(file, '3', NULL, NULL, 0, offs, dst, 1, rules[i]);
        CHECK(sqle_tz_load(rules[i], file, len, &z, &err) == SQLEASE_OK, "%s: %s\n", rules[i],
              err.message);
        if (z == NULL)
            continue;
        /* From 1971: glibc works out a TZ string's rule for a year
         * before 1970 as if it were 1970. */
        bad += compare_with_glibc(z, rules[i], 31536000LL, 16725225600LL, 300);
        sqle_tz_release(z);
    }
    if (old != NULL)
        setenv("TZ", saved, 1);
    else
        unsetenv("TZ");
    tzset();
    CHECK(bad == 0, "%d mismatches\n", bad);
}

/* ---- sharing and speed ------------------------------------------------- */

typedef struct share_arg {
    sqle_tz *z;
    int ok;
} share_arg;

static void share_worker(void *p)
{
    share_arg *a = p;
    int i;

    a->ok = 1;
    for (i = 0; i < 300; i++) {
        sqle_cron *c = NULL;
        sqle_cron_error err;
        int64_t t;
        if (sqle_cron_parse_in(i % 2 ? "30 2 * * *" : "*/5 * * * *", a->z, &c, &err)
                != SQLEASE_OK
            || !sqle_cron_next(c, 1710000000000LL + i * 60000LL, &t))
            a->ok = 0;
        sqle_cron_free(c);
    }
}

static void test_zone_shared_by_threads(void)
{
    sqle_tz *z = zone_or_skip("America/New_York");
    sqle_thread th[4];
    share_arg args[4];
    int i;

    if (z == NULL)
        return;
    for (i = 0; i < 4; i++) {
        args[i].z = z;
        CHECK(sqle_thread_start(&th[i], share_worker, &args[i]) == 0, "thread\n");
    }
    for (i = 0; i < 4; i++) {
        sqle_thread_join(&th[i]);
        CHECK(args[i].ok, "worker %d\n", i);
    }
    sqle_tz_release(z);
}

/*
 * 10,000 expressions of every kind (one zone, shared), next() from one
 * instant each, then each one's next fire from the one before, as a
 * scheduler walks them.  Prints the times; fails only far above them
 * (sanitizers and Valgrind are slow).
 */
static void test_speed(void)
{
    static const char *const forms[] = {
        "%d * * * *", "%d %d * * *", "*/%d * * * *", "%d %d %d * *", "%d %d * * %d",
        "%d %d 1 %d *", "%d %d * * MON-FRI", "%d */2 * * *", "@every %dm", "%d %d %d * * *",
        "0 0 29 2 *", "%d %d 13 * FRI",
    };
    enum { N = 10000 };
    sqle_cron **c = calloc(N, sizeof *c);
    sqle_tz *z = zone_or_skip("America/New_York");
    int64_t t0, t1, t2, t3, from = 1710000000000LL, t;
    int i, j, never = 0;

    if (z == NULL)
        (void)sqle_tz_open(NULL, &z, NULL);
    t0 = sqle_mono_ms();
    for (i = 0; i < N; i++) {
        char expr[64];
        sqle_cron_error err;
        int a = i % 60, b = (i / 60) % 24, d = i % 28 + 1, m = i % 12 + 1, k = i % 7;
        const char *f = forms[i % (sizeof forms / sizeof forms[0])];
        if (strstr(f, "*/%d") || strstr(f, "@every"))
            snprintf(expr, sizeof expr, f, i % 59 + 1);
        else if (strstr(f, "%d %d %d * * *"))
            snprintf(expr, sizeof expr, f, a, (a + 7) % 60, b);
        else if (strstr(f, "1 %d"))
            snprintf(expr, sizeof expr, f, a, b, m);
        else if (strstr(f, "* * %d"))
            snprintf(expr, sizeof expr, f, a, b, k);
        else
            snprintf(expr, sizeof expr, f, a, b, d);
        CHECK(sqle_cron_parse_in(expr, z, &c[i], &err) == SQLEASE_OK, "'%s': %s\n", expr,
              err.message);
    }
    t1 = sqle_mono_ms();
    for (i = 0; i < N; i++)
        if (c[i] == NULL || !sqle_cron_next(c[i], from, &t))
            never++;
    t2 = sqle_mono_ms();
    for (j = 0; j < 10; j++)
        for (i = 0; i < N; i++)
            if (c[i] != NULL)
                (void)sqle_cron_next(c[i], from + j * 3600000LL, &t);
    t3 = sqle_mono_ms();
    /* 2045: past the data of a fat file, the footer's rule (as every
     * year is in a slim file). */
    for (j = 0; j < 10; j++)
        for (i = 0; i < N; i++)
            if (c[i] != NULL)
                (void)sqle_cron_next(c[i], 2380000000000LL + j * 3600000LL, &t);
    fprintf(stderr,
            "\n  speed: %d expressions parsed in %lld ms; next() of each in %lld ms "
            "(%.2f us each); 10 more rounds in %lld ms; 10 rounds in 2045 (the footer's "
            "rule) in %lld ms\n",
            N, (long long)(t1 - t0), (long long)(t2 - t1), (double)(t2 - t1) * 1000.0 / N,
            (long long)(t3 - t2), (long long)(sqle_mono_ms() - t3));
    CHECK(never == 0, "%d expressions never fire\n", never);
    CHECK((t2 - t1) * 1000 / N < 1000, "next() takes %lld us\n", (long long)((t2 - t1) * 1000 / N));
    for (i = 0; i < N; i++)
        sqle_cron_free(c[i]);
    free(c);
    sqle_tz_release(z);
}

/* ---- main ---------------------------------------------------------------- */

static void add(void)
{
    CU_pSuite s = CU_add_suite("cron expressions", NULL, NULL);

    CU_add_test(s, "parse errors: column and message", test_parse_errors);
    CU_add_test(s, "forms that mean the same", test_parse_forms);
    CU_add_test(s, "reference table (tests/data/cron_reference.txt)", test_reference_table);
    CU_add_test(s, "daylight saving time, by example", test_dst_rules);
    CU_add_test(s, "a job that can never fire in its zone", test_never);
    CU_add_test(s, "@every", test_every);
    CU_add_test(s, "nominal period", test_period);
    CU_add_test(s, "ISO 8601 in UTC", test_format);
    CU_add_test(s, "the ends of the range", test_range_ends);
    CU_add_test(s, "zone names", test_zone_names);
    CU_add_test(s, "TZif files crafted", test_tzif_crafted);
    CU_add_test(s, "TZif files malformed", test_tzif_malformed);
    CU_add_test(s, "TZif footers with odd rules", test_tzif_odd_rules);
    CU_add_test(s, "TZDIR", test_tzdir);
    CU_add_test(s, "zones against glibc", test_zones_against_glibc);
    CU_add_test(s, "footer TZ strings against glibc", test_footers_against_glibc);
    CU_add_test(s, "a zone shared by threads", test_zone_shared_by_threads);
    CU_add_test(s, "speed of next()", test_speed);
}

int main(void)
{
    int rc = tu_main(add);
    tu_cleanup();
    return rc;
}
