/*
 * fuzz_name.c -- libFuzzer target for the validation of lease names,
 * owner ids and the holder's data (--name, --owner, --data,
 * sqlease_options), through sqlease_options_check as every caller
 * reaches it.
 *
 * Input: a first byte 'n', 'o' or 'd' says which field the rest is (the
 * name, the owner, the data); any other first byte: the whole input is
 * the name.
 *
 * Properties, beyond not crashing: the verdict equals the documented
 * rules, checked here apart from the library's code (1..limit bytes --
 * SQLEASE_MAX_NAME, _OWNER, _DATA --; well-formed UTF-8; no control
 * character, C0, DEL or C1; not only white space; a name neither starts
 * nor ends with white space, Unicode's White_Space); an accepted value is
 * never longer than its limit; a refusal is SQLEASE_EINVAL with a
 * one-line message that fits.  And the same bytes as read back from a
 * table and shown to a person (sqle_show_text, sqle_quote_id, whatever
 * they hold): well-formed UTF-8 without a control character (C0, DEL,
 * C1), within the buffer given; an accepted value shown as it is.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"
#include "internal.h"

/* Shown text is for a terminal: well-formed UTF-8, no C0, DEL or C1. */
static void check_shown(const char *how, const char *in, const char *out, size_t cap)
{
    size_t n = strlen(out), i = 0, len;
    uint32_t cp;

    FZ_CHECK(n < cap, "%s: %zu bytes shown in a buffer of %zu", how, n, cap);
    FZ_CHECK(fz_utf8_ok(out, n), "%s of '%s' is not UTF-8: '%s'", how, in, out);
    for (; i < n; i += len) {
        len = fz_utf8_decode((const unsigned char *)out + i, n - i, &cp);
        FZ_CHECK(len > 0 && cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp < 0xa0),
                 "%s of '%s' holds U+%04X raw", how, in, (unsigned)cp);
    }
}

/* Whatever the table holds, as status, list and the log show it. */
static void check_show(const char *s, size_t cap_seed)
{
    char wide[SQLE_SHOWN_MAX(4096) + 2], small[64];
    size_t cap = 1 + cap_seed % sizeof small;

    sqle_show_text(s, wide, sizeof wide);
    check_shown("show_text", s, wide, sizeof wide);
    sqle_show_text(s, small, cap);
    check_shown("show_text (cut)", s, small, cap);
    FZ_CHECK(strncmp(small, wide, strlen(small)) == 0, "a cut is not a prefix: '%s' of '%s'",
             small, wide);
    sqle_quote_id(s, wide, sizeof wide);
    check_shown("quote_id", s, wide, sizeof wide);
    sqle_quote_id(s, small, cap);
    check_shown("quote_id (cut)", s, small, cap);
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
    sqlease_options o;
    sqlease_error err;
    char *s;
    const char *what;
    size_t max;
    int rc, want, edge_ok = 1;

    if (size > 4096)
        return 0;
    fz_input(data, size);
    sqlease_options_init(&o);
    if (size > 0 && (data[0] == 'n' || data[0] == 'o' || data[0] == 'd')) {
        s = fz_cstr(data + 1, size - 1);
        switch (data[0]) {
        case 'n': o.name = s; what = "name"; max = SQLEASE_MAX_NAME; edge_ok = 0; break;
        case 'o': o.owner = s; what = "owner"; max = SQLEASE_MAX_OWNER; break;
        default: o.data = s; what = "data"; max = SQLEASE_MAX_DATA; break;
        }
    } else {
        s = fz_cstr(data, size);
        o.name = s;
        what = "name";
        max = SQLEASE_MAX_NAME;
        edge_ok = 0;
    }
    rc = sqlease_options_check(&o, &err);
    want = fz_text_ref(s, max, edge_ok);
    check_show(s, size);
    if (want) {
        char shown[SQLE_SHOWN_MAX(4096)];
        FZ_CHECK(strcmp(sqle_show_text(s, shown, sizeof shown), s) == 0,
                 "%s '%s', which the rules allow, shown as '%s'", what, s, shown);
    }
    if (rc == SQLEASE_OK) {
        FZ_CHECK(want, "%s '%s' accepted against the rules", what, s);
        FZ_CHECK(strlen(s) <= max, "%s of %zu bytes accepted; the limit is %zu", what,
                 strlen(s), max);
    } else {
        fz_check_error(&err, rc, what);
        FZ_CHECK(rc == SQLEASE_EINVAL, "%s: status %d", what, rc);
        FZ_CHECK(!want, "%s '%s' refused, which the rules allow: %s", what, s, err.message);
    }
    free(s);
    return 0;
}
