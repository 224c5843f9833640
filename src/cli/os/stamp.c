/*
 * stamp.c -- the time stamp that starts a log line (see os.h), built
 * with arithmetic alone, so that the guard process, which may call only
 * async-signal-safe functions, stamps its lines as sqlease does.  Text
 * only: built on every OS.
 */
#include "cli/os.h"

/* Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's
 * civil_from_days), so that the stamp needs no gmtime_r/gmtime_s and
 * reads the same on every system. */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    int64_t era, yy;
    unsigned doe, yoe, doy, mp;

    z += 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = (unsigned)(z - era * 146097);
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    yy = (int64_t)yoe + era * 400;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yy + (*m <= 2);
}

/* v in at least `width` decimal digits at out[*n], as far as cap allows
 * (one byte is kept for the terminating NUL). */
static void put_num(char *out, size_t cap, size_t *n, uint64_t v, int width)
{
    char digits[24];
    int k = 0;

    do {
        digits[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0 && k < (int)sizeof digits);
    while (k < width && k < (int)sizeof digits)
        digits[k++] = '0';
    while (k > 0 && *n + 1 < cap)
        out[(*n)++] = digits[--k];
}

static void put_char(char *out, size_t cap, size_t *n, char c)
{
    if (*n + 1 < cap)
        out[(*n)++] = c;
}

size_t cli_os_format_stamp(int64_t wall_ms, char *buf, size_t cap)
{
    int64_t days, rem, y;
    unsigned mo, d;
    size_t n = 0;

    if (buf == NULL || cap == 0)
        return 0;
    days = wall_ms / 86400000;
    rem = wall_ms % 86400000;
    if (rem < 0) {
        rem += 86400000;
        days--;
    }
    civil_from_days(days, &y, &mo, &d);
    if (y < 0) {
        put_char(buf, cap, &n, '-');
        y = -y;
    }
    put_num(buf, cap, &n, (uint64_t)y, 4);
    put_char(buf, cap, &n, '-');
    put_num(buf, cap, &n, mo, 2);
    put_char(buf, cap, &n, '-');
    put_num(buf, cap, &n, d, 2);
    put_char(buf, cap, &n, 'T');
    put_num(buf, cap, &n, (uint64_t)(rem / 3600000), 2);
    put_char(buf, cap, &n, ':');
    put_num(buf, cap, &n, (uint64_t)(rem / 60000 % 60), 2);
    put_char(buf, cap, &n, ':');
    put_num(buf, cap, &n, (uint64_t)(rem / 1000 % 60), 2);
    put_char(buf, cap, &n, '.');
    put_num(buf, cap, &n, (uint64_t)(rem % 1000), 3);
    put_char(buf, cap, &n, 'Z');
    buf[n] = '\0';
    return n;
}
