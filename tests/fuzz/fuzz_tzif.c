/*
 * fuzz_tzif.c -- libFuzzer target for the TZif reader (src/tz.c): the
 * bytes of a time zone's file, which sqlease reads from the system's tz
 * database (or $TZDIR) for CRON_TZ, and so must take any bytes there as
 * an error rather than a crash or a wrong zone read on.
 *
 * Input: the bytes of a file, as sqle_tz_load gets them from disk.  The
 * seeds are real zones (a fat and a slim file, versions 2 and 3 footers,
 * half-hour and negative daylight time) and small crafted ones.
 *
 * Properties, beyond not crashing or leaking:
 *  - a refusal is SQLEASE_EINVAL with a one-line message;
 *  - a zone read gives offsets within RFC 8536's bounds (-25 h .. +26 h)
 *    at instants from before 1900 to the year 30,000;
 *  - its spans hold: start <= t < end, the offset at start and at end - 1
 *    is the span's, off_before is the offset at start - 1, and where the
 *    offset changes at the end the next span starts exactly there;
 *  - cron jobs in the zone (at fixed times, and every 15 minutes) keep
 *    next and prev consistent across whatever gaps and repeats it has:
 *    prev(next(t)) == next(t), and no fire between t and next(t).
 */
#include <inttypes.h>
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

static void check_span(const sqle_tz *z, int64_t t)
{
    sqle_tz_span sp, next;
    int32_t off = sqle_tz_offset(z, t);

    FZ_CHECK(off >= -89999 && off <= 93599, "offset %d at %" PRId64, (int)off, t);
    sqle_tz_span_at(z, t, &sp);
    FZ_CHECK(sp.start <= t && t < sp.end && sp.off == off,
             "span %" PRId64 "..%" PRId64 " (%d) at %" PRId64 " (%d)", sp.start, sp.end,
             (int)sp.off, t, (int)off);
    FZ_CHECK(sqle_tz_offset(z, sp.start) == sp.off && sqle_tz_offset(z, sp.end - 1) == sp.off,
             "span %" PRId64 "..%" PRId64 " is not one offset", sp.start, sp.end);
    if (sp.start > SQLE_TZ_MIN)
        FZ_CHECK(sqle_tz_offset(z, sp.start - 1) == sp.off_before,
                 "off_before %d, offset before %" PRId64 " is %d", (int)sp.off_before, sp.start,
                 (int)sqle_tz_offset(z, sp.start - 1));
    if (sp.end < SQLE_TZ_MAX && sqle_tz_offset(z, sp.end) != sp.off) {
        sqle_tz_span_at(z, sp.end, &next);
        FZ_CHECK(next.start == sp.end && next.off_before == sp.off,
                 "a change at %" PRId64 ", but the next span starts at %" PRId64, sp.end,
                 next.start);
    }
}

static void check_cron(sqle_tz *z, const char *expr, const int64_t *at, size_t n)
{
    sqle_cron *c = NULL;
    sqle_cron_error err;
    size_t i;

    FZ_CHECK(sqle_cron_parse_in(expr, z, &c, &err) == SQLEASE_OK, "%s: %s", expr, err.message);
    for (i = 0; i < n; i++) {
        int64_t t = at[i] * 1000, next = 0, x = 0;
        if (!sqle_cron_next(c, t, &next))
            continue;
        FZ_CHECK(next > t, "'%s': next(%" PRId64 ") = %" PRId64, expr, t, next);
        FZ_CHECK(sqle_cron_prev(c, next, &x) && x == next,
                 "'%s': prev(next(%" PRId64 ") = %" PRId64 ") = %" PRId64, expr, t, next, x);
        if (sqle_cron_prev(c, next - 1, &x))
            FZ_CHECK(x <= t, "'%s': a fire %" PRId64 " between %" PRId64 " and next %" PRId64,
                     expr, x, t, next);
    }
    sqle_cron_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int64_t at[] = {
        -2208988800LL, -1LL, 0, 1000, 2000, 1710053999LL, 1730613599LL, 2147483647LL,
        2208988800LL, 4102444800LL, 32503680000LL, 1LL << 39,
    };
    sqle_tz *z = NULL;
    sqlease_error err;
    size_t i;
    int rc;

    fz_input(data, size);
    memset(&err, 0x5a, sizeof err);
    rc = sqle_tz_load("Fuzz/Zone", data, size, &z, &err);
    if (rc != SQLEASE_OK) {
        FZ_CHECK(z == NULL && rc == SQLEASE_EINVAL && err.status == rc, "refusal: rc %d", rc);
        FZ_CHECK(memchr(err.message, '\0', sizeof err.message) != NULL && err.message[0] != '\0'
                     && strchr(err.message, '\n') == NULL,
                 "refusal's message '%.80s'", err.message);
        return 0;
    }
    FZ_CHECK(z != NULL && err.status == SQLEASE_OK, "success left an error");
    for (i = 0; i < sizeof at / sizeof at[0]; i++)
        check_span(z, at[i]);
    /* Also right around whatever the file says changes: its spans' ends. */
    for (i = 0; i < sizeof at / sizeof at[0]; i++) {
        sqle_tz_span sp;
        sqle_tz_span_at(z, at[i], &sp);
        if (sp.end < SQLE_TZ_MAX)
            check_span(z, sp.end);
        if (sp.start > SQLE_TZ_MIN)
            check_span(z, sp.start - 1);
    }
    check_cron(z, "30 2 * * *", at, sizeof at / sizeof at[0]);
    check_cron(z, "*/15 * * * *", at, sizeof at / sizeof at[0]);
    check_cron(z, "0 0,30 1-3 * * *", at, sizeof at / sizeof at[0]);
    sqle_tz_release(z);
    return 0;
}
