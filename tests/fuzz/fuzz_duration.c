/*
 * fuzz_duration.c -- libFuzzer target for sqlease_parse_duration, the
 * parser behind --ttl, --heartbeat, --retry, --kill-grace, ... and the
 * Sqlease* durations of odbc.ini.
 *
 * Properties, beyond not crashing:
 *  - it agrees with a reference reading of the documented grammar
 *    (decimal digits, then exactly one of ms, s, m, h, d; at most 30 days;
 *    a zero needs no unit),
 *    computed here in 128-bit arithmetic: same verdict, same milliseconds;
 *  - a duration that parses prints back to the same milliseconds, both as
 *    "<ms>ms" and in the largest unit that divides it;
 *  - a refusal is SQLEASE_EINVAL with a one-line message.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"

/* The largest unit that divides ms exactly, as a user would write it. */
static void print_duration(int64_t ms, char *buf, size_t cap)
{
    if (ms != 0 && ms % 86400000 == 0)
        snprintf(buf, cap, "%" PRId64 "d", ms / 86400000);
    else if (ms != 0 && ms % 3600000 == 0)
        snprintf(buf, cap, "%" PRId64 "h", ms / 3600000);
    else if (ms != 0 && ms % 60000 == 0)
        snprintf(buf, cap, "%" PRId64 "m", ms / 60000);
    else if (ms != 0 && ms % 1000 == 0)
        snprintf(buf, cap, "%" PRId64 "s", ms / 1000);
    else
        snprintf(buf, cap, "%" PRId64 "ms", ms);
}

static void check_prints_back(int64_t ms)
{
    char buf[64];
    sqlease_error err;
    int64_t again = -1;
    int rc;

    print_duration(ms, buf, sizeof buf);
    rc = sqlease_parse_duration(buf, &again, &err);
    FZ_CHECK(rc == SQLEASE_OK && again == ms,
             "%" PRId64 " ms printed as '%s' parses to %" PRId64 " (rc %d: %s)", ms, buf, again,
             rc, err.message);
    snprintf(buf, sizeof buf, "%" PRId64 "ms", ms);
    again = -1;
    rc = sqlease_parse_duration(buf, &again, &err);
    FZ_CHECK(rc == SQLEASE_OK && again == ms, "'%s' parses to %" PRId64 " (rc %d: %s)", buf,
             again, rc, err.message);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text;
    sqlease_error err;
    int64_t ms = -7, want = -1;
    int rc, ok;

    fz_input(data, size);
    text = fz_cstr(data, size);
    memset(&err, 0x5a, sizeof err);
    rc = sqlease_parse_duration(text, &ms, &err);
    ok = fz_duration_ref(text, &want);
    if (rc == SQLEASE_OK) {
        FZ_CHECK(ok, "accepted '%s' as %" PRId64 " ms; the grammar does not", text, ms);
        FZ_CHECK(ms == want, "'%s' is %" PRId64 " ms, parsed as %" PRId64, text, want, ms);
        FZ_CHECK(err.status == SQLEASE_OK && err.message[0] == '\0',
                 "success left an error behind: %d '%.40s'", err.status, err.message);
        check_prints_back(ms);
    } else {
        FZ_CHECK(!ok, "refused '%s' (%s), which is %" PRId64 " ms", text, err.message, want);
        FZ_CHECK(rc == SQLEASE_EINVAL, "'%s': status %d, not SQLEASE_EINVAL", text, rc);
        FZ_CHECK(ms == -7, "a refusal wrote the result (%" PRId64 ")", ms);
        fz_check_error(&err, rc, "duration");
    }
    free(text);
    return 0;
}
