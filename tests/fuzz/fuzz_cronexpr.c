/*
 * fuzz_cronexpr.c -- libFuzzer target for cron expressions
 * (src/cronexpr.c): the schedule of `sqlease cron` lines and of
 * `run --schedule`, in a zone named by CRON_TZ.
 *
 * Input: the expression on the first line, the zone's name on the second
 * (empty or absent: UTC; any text, checked before a file is opened), and
 * instants in epoch milliseconds on the lines after (absent: a set that
 * crosses daylight saving changes, leap days and the range's ends).
 *
 * Properties, beyond not crashing, not leaking and answering in bounded
 * time:
 *  - a refusal is SQLEASE_EINVAL with a one-line message and a column
 *    within the expression (0 for the zone); a success leaves no error;
 *  - next(t) is a whole second after t, within the search horizon, and no
 *    fire lies between: prev(next(t)) == next(t), prev(next(t) - 1) <= t;
 *  - prev(t) is a whole second at or before t, and next(prev(t) - 1) is
 *    prev(t); with both, prev(t) <= t < next(t) and next(prev(t)) ==
 *    next(t);
 *  - a 5-field expression means the same as itself with a seconds field
 *    of 0 in front (same fires); an @every job fires on multiples of its
 *    period;
 *  - the period is positive; a fire formats as ISO 8601 that reads back
 *    to the same instant.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cronexpr.h"
#include "fuzzutil.h"
#include "tz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init();
    return 0;
}

static void check_iso(int64_t ms)
{
    char buf[SQLE_CRON_ISO_MAX];
    int y, mo, d, h, mi, s;
    int64_t back;

    sqle_cron_format_utc(ms, buf, sizeof buf);
    FZ_CHECK(sscanf(buf, "%d-%d-%dT%d:%d:%dZ", &y, &mo, &d, &h, &mi, &s) == 6,
             "%" PRId64 " formats as '%s'", ms, buf);
    back = (sqle_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s) * 1000;
    FZ_CHECK(back == ms, "%" PRId64 " formats as '%s', which is %" PRId64, ms, buf, back);
}

/* The properties of next and prev at t. */
static void check_at(const sqle_cron *c, int64_t t)
{
    int64_t n = 0, p = 0, x = 0;
    int has_n = sqle_cron_next(c, t, &n), has_p = sqle_cron_prev(c, t, &p);

    if (has_n) {
        FZ_CHECK(n > t && n % 1000 == 0 && n <= SQLE_CRON_MAX_MS,
                 "next(%" PRId64 ") = %" PRId64, t, n);
        FZ_CHECK(n / 1000 - (t > SQLE_CRON_MIN_MS ? t : SQLE_CRON_MIN_MS) / 1000
                     <= SQLE_CRON_HORIZON_S + 1,
                 "next(%" PRId64 ") = %" PRId64 " beyond the horizon", t, n);
        FZ_CHECK(sqle_cron_prev(c, n, &x) && x == n,
                 "prev(next(%" PRId64 ") = %" PRId64 ") = %" PRId64, t, n, x);
        if (sqle_cron_prev(c, n - 1, &x))
            FZ_CHECK(x <= t, "a fire %" PRId64 " between %" PRId64 " and next %" PRId64, x, t,
                     n);
        check_iso(n);
    }
    if (has_p) {
        FZ_CHECK(p <= t && p % 1000 == 0 && p >= SQLE_CRON_MIN_MS,
                 "prev(%" PRId64 ") = %" PRId64, t, p);
        FZ_CHECK(sqle_cron_next(c, p - 1, &x) && x == p,
                 "next(prev(%" PRId64 ") - 1) = %" PRId64 ", not %" PRId64, t, x, p);
        if (has_n)
            FZ_CHECK(sqle_cron_next(c, p, &x) && x == n,
                     "next(prev(%" PRId64 ")) = %" PRId64 ", next = %" PRId64, t, x, n);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int64_t fixed[] = {
        0, -1, 1710053999000LL, 1710054000500LL, 1730613599999LL, 1730617200000LL,
        1709164800000LL, 1712413800000LL, 1728142199000LL, 4107542400000LL,
        SQLE_CRON_MIN_MS, SQLE_CRON_MAX_MS - 1, INT64_MIN, INT64_MAX,
    };
    char *text = fz_cstr(data, size), *line[10], *six = NULL;
    size_t n = fz_fields(text, line, 10), i;
    const char *zone = n > 1 ? line[1] : NULL;
    sqle_cron *c = NULL, *c6 = NULL;
    sqle_cron_error err;
    int rc;

    fz_input(data, size);
    memset(&err, 0x5a, sizeof err);
    rc = sqle_cron_parse(line[0], zone, &c, &err);
    if (rc != SQLEASE_OK) {
        FZ_CHECK(c == NULL && err.status == rc && (rc == SQLEASE_EINVAL || rc == SQLEASE_ENOMEM),
                 "refusal: rc %d, status %d", rc, err.status);
        FZ_CHECK(memchr(err.message, '\0', sizeof err.message) != NULL && err.message[0] != '\0'
                     && strchr(err.message, '\n') == NULL,
                 "refusal's message '%.80s'", err.message);
        FZ_CHECK(err.column >= 0 && (size_t)err.column <= strlen(line[0]) + 1,
                 "column %d in a %zu-byte expression", err.column, strlen(line[0]));
        free(text);
        return 0;
    }
    FZ_CHECK(c != NULL && err.status == SQLEASE_OK && err.column == 0 && err.message[0] == '\0',
             "success left an error: %d '%.40s'", err.status, err.message);
    FZ_CHECK(sqle_cron_period_ms(c) >= 1000, "period %" PRId64, sqle_cron_period_ms(c));

    /* The same fields with a seconds field of 0 in front, when there are 5
     * of them. */
    if (line[0][strspn(line[0], " \t")] != '@') {
        size_t fields = 0, k;
        int in = 0;
        for (k = 0; line[0][k] != '\0'; k++) {
            int blank = line[0][k] == ' ' || line[0][k] == '\t';
            fields += !blank && !in;
            in = !blank;
        }
        if (fields == 5) {
            six = malloc(strlen(line[0]) + 3);
            if (six == NULL)
                abort();
            sprintf(six, "0 %s", line[0]);
            rc = sqle_cron_parse_in(six, sqle_cron_zone(c), &c6, &err);
            FZ_CHECK(rc == SQLEASE_OK, "'%s' parses, '%s' does not: %s", line[0], six,
                     err.message);
        }
    }

    for (i = 0; i < sizeof fixed / sizeof fixed[0] + (n > 2 ? n - 2 : 0) && i < 24; i++) {
        int64_t t = i < sizeof fixed / sizeof fixed[0]
                        ? fixed[i]
                        : strtoll(line[2 + i - sizeof fixed / sizeof fixed[0]], NULL, 10);
        int64_t a = 0, b = 0;
        check_at(c, t);
        if (c6 != NULL) {
            int ha = sqle_cron_next(c, t, &a), hb = sqle_cron_next(c6, t, &b);
            FZ_CHECK(ha == hb && (!ha || a == b), "next(%" PRId64 "): %" PRId64 " for 5 fields, %" PRId64 " for 6", t, a, b);
        }
        if (sqle_cron_is_every(c) && sqle_cron_next(c, t, &a))
            FZ_CHECK(a % sqle_cron_period_ms(c) == 0, "@every fires at %" PRId64, a);
    }
    sqle_cron_free(c6);
    sqle_cron_free(c);
    free(six);
    free(text);
    return 0;
}
