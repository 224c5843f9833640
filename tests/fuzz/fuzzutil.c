/*
 * fuzzutil.c -- the helpers the fuzz targets share (fuzzutil.h).  The
 * UTF-8 code here is deliberately a second implementation: a target that
 * checked the library with the library's own decoder would prove nothing.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzzutil.h"

static int report_fd = 2;
static const uint8_t *cur_data;
static size_t cur_size;

void fz_init(void)
{
    int fd = dup(2);
    if (fd >= 0)
        report_fd = fd;
}

void fz_input(const uint8_t *data, size_t size)
{
    cur_data = data;
    cur_size = size;
}

void fz_fail(const char *file, int line, const char *fmt, ...)
{
    char msg[4096];
    size_t i;
    int n;
    va_list ap;

    n = snprintf(msg, sizeof msg, "\n==== property violated (%s:%d): ", file, line);
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof msg)
        vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    va_end(ap);
    n = (int)strlen(msg);
    if (n < (int)sizeof msg - 1)
        msg[n++] = '\n';
    (void)!write(report_fd, msg, (size_t)n);
    n = snprintf(msg, sizeof msg, "==== input (%zu bytes, C-escaped): \"", cur_size);
    (void)!write(report_fd, msg, (size_t)n);
    for (i = 0; i < cur_size && i < 2048; i++) {
        unsigned char c = cur_data[i];
        if (c == '"' || c == '\\')
            n = snprintf(msg, sizeof msg, "\\%c", c);
        else if (c >= 0x20 && c < 0x7f)
            n = snprintf(msg, sizeof msg, "%c", c);
        else
            n = snprintf(msg, sizeof msg, "\\x%02x\"\"", c);
        (void)!write(report_fd, msg, (size_t)n);
    }
    (void)!write(report_fd, "\"\n", 2);
    abort();
}

char *fz_cstr(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t n = nul != NULL ? (size_t)(nul - data) : size;
    char *s = malloc(n + 1);

    if (s == NULL)
        abort();
    memcpy(s, data, n);
    s[n] = '\0';
    return s;
}

size_t fz_fields(char *s, char **field, size_t max)
{
    size_t n = 0;

    field[n++] = s;
    while (n < max && (s = strchr(s, '\n')) != NULL) {
        *s++ = '\0';
        field[n++] = s;
    }
    return n;
}

size_t fz_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    size_t len, i;
    uint32_t v;

    if (n == 0)
        return 0;
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if ((s[0] & 0xe0) == 0xc0) {
        len = 2;
        v = s[0] & 0x1fu;
    } else if ((s[0] & 0xf0) == 0xe0) {
        len = 3;
        v = s[0] & 0x0fu;
    } else if ((s[0] & 0xf8) == 0xf0) {
        len = 4;
        v = s[0] & 0x07u;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3fu);
    }
    if (v < min[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return len;
}

int fz_utf8_ok(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, len;
    uint32_t cp;

    while (i < n) {
        len = fz_utf8_decode(u + i, n - i, &cp);
        if (len == 0)
            return 0;
        i += len;
    }
    return 1;
}

size_t fz_utf8_encode(uint32_t cp, char *out)
{
    unsigned char *o = (unsigned char *)out;

    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xc0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xe0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (unsigned char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (unsigned char)(0xf0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (unsigned char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The Unicode Character Database's White_Space property, in full. */
int fz_white_space(uint32_t cp)
{
    return (cp >= 0x09 && cp <= 0x0d) || cp == 0x20 || cp == 0x85 || cp == 0xa0 ||
           cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

/* The documented grammar of a duration, in 128-bit arithmetic. */
int fz_duration_ref(const char *text, int64_t *ms)
{
    static const struct { const char *unit; unsigned mul; } units[] = {
        { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 }, { "d", 86400000 },
    };
    unsigned __int128 v = 0;
    const char *p = text;
    size_t i;
    int digits = 0, big = 0;

    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (unsigned)(*p - '0');
        if (v > (unsigned __int128)SQLEASE_MAX_DURATION_MS)
            big = 1, v = (unsigned __int128)SQLEASE_MAX_DURATION_MS + 1;
        digits++;
        p++;
    }
    if (digits == 0)
        return 0;
    /* Zero needs no unit: "0" (and "00") is 0 ms. */
    if (*p == '\0' && v == 0) {
        *ms = 0;
        return 1;
    }
    for (i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(p, units[i].unit) == 0) {
            unsigned __int128 total = v * units[i].mul;
            if (big || total > (unsigned __int128)SQLEASE_MAX_DURATION_MS)
                return 0;
            *ms = (int64_t)total;
            return 1;
        }
    }
    return 0;
}

/* The documented rules for names, owner ids and data. */
int fz_text_ref(const char *s, size_t max, int edge_space_ok)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s), i = 0, len;
    uint32_t cp;
    int all_space = 1, first = 0, last = 0;

    if (n == 0 || n > max || !fz_utf8_ok(s, n))
        return 0;
    while (i < n) {
        int space;
        len = fz_utf8_decode(u + i, n - i, &cp);
        if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
            return 0;
        space = fz_white_space(cp);
        if (i == 0)
            first = space;
        last = space;
        if (!space)
            all_space = 0;
        i += len;
    }
    if (all_space)
        return 0;
    return edge_space_ok || !(first || last);
}

void fz_check_error(const sqlease_error *err, int rc, const char *what)
{
    size_t n, i;

    FZ_CHECK(rc != SQLEASE_OK, "%s: expected a failure", what);
    FZ_CHECK(err->status == rc, "%s: err.status %d but returned %d", what, err->status, rc);
    n = strnlen(err->message, sizeof err->message);
    FZ_CHECK(n < sizeof err->message, "%s: message not NUL-terminated", what);
    FZ_CHECK(n > 0, "%s: rejected (%s) without a message", what, sqlease_status_name(rc));
    for (i = 0; i < n; i++)
        FZ_CHECK((unsigned char)err->message[i] >= 0x20 && err->message[i] != 0x7f,
                 "%s: message is not one line of text (byte %zu is 0x%02x): %s", what, i,
                 (unsigned char)err->message[i], err->message);
}
