/*
 * fuzz_redact.c -- libFuzzer target for password redaction: sqle_redact
 * (a connection string shown in messages and `status`) and
 * sqle_redact_inplace (free text: a driver message quoting the string,
 * every error message and log line), reached also through sqle_fail and
 * the log sink as the library reaches them.
 *
 * The property: no output contains a password's value, however the
 * connection string spells it.  "The password" is found here by a
 * reference reader of connection strings, apart from the library's, in
 * each of the ways a driver may read one: ODBC's rule (a {braced} value
 * runs to its closing brace, "}}" inside is one brace) or a braced value
 * that ends at its first '}', each with or without '...' and "..." as
 * quotes.  Keys are compared trimmed and in any case: PWD,
 * Password, Passwd, and identifiers ending in PWD or holding "password"
 * (ENCRYPT_PWD, AuthPassword).  A secret leaks when an output holds the
 * value, or any four bytes of it, that the ideal output (the input with
 * every secret replaced by ***) does not hold: text that appears
 * elsewhere in the input legitimately is not a leak.  In free text
 * (sqle_redact_inplace, messages, log lines) a string holding quotes,
 * braces or line ends is the exception (see free_text_ambiguous).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"
#include "internal.h"

/* A reader: how it ends a braced value, and whether it knows quotes. */
enum { READ_FIRST_BRACE = 1, READ_QUOTES = 2, READ_COUNT = 4 };

#define MAX_SECRETS 64

typedef struct span {
    size_t start, end; /* the value's bytes in the input */
} span;

typedef struct secrets {
    span spans[MAX_SECRETS * READ_COUNT];
    size_t nspans;
    char *values[MAX_SECRETS * READ_COUNT * 2];
    size_t nvalues;
} secrets;

static int ci_eq(const char *a, size_t n, const char *b)
{
    size_t i;
    if (strlen(b) != n)
        return 0;
    for (i = 0; i < n; i++)
        if (tolower((unsigned char)a[i]) != b[i])
            return 0;
    return 1;
}

static int ci_has(const char *a, size_t n, const char *b)
{
    size_t w = strlen(b), i;
    for (i = 0; i + w <= n; i++)
        if (ci_eq(a + i, w, b))
            return 1;
    return 0;
}

/* Whether a driver would take this key (trimmed) for a password: PWD,
 * Password, Passwd in any case, or a driver's own key for one, which is
 * an identifier (ENCRYPT_PWD, AuthPassword). */
static int secret_key(const char *k, size_t n)
{
    size_t i;

    while (n > 0 && (k[0] == ' ' || k[0] == '\t'))
        k++, n--;
    while (n > 0 && (k[n - 1] == ' ' || k[n - 1] == '\t'))
        n--;
    if (ci_eq(k, n, "pwd") || ci_eq(k, n, "password") || ci_eq(k, n, "passwd"))
        return 1;
    for (i = 0; i < n; i++)
        if (!isalnum((unsigned char)k[i]) && k[i] != '_')
            return 0;
    return (n > 3 && ci_eq(k + n - 3, 3, "pwd")) || ci_has(k, n, "password");
}

static void add_value(secrets *sx, const char *v, size_t n)
{
    char *c;
    if (n == 0 || sx->nvalues >= sizeof sx->values / sizeof sx->values[0])
        return;
    c = malloc(n + 1);
    if (c == NULL)
        abort();
    memcpy(c, v, n);
    c[n] = '\0';
    sx->values[sx->nvalues++] = c;
}

/* Read s the way `how` reads it and record every secret value: its span
 * in s, the value as the driver gets it (braces and quotes removed, "}}"
 * undone) and its bytes as written, trimmed. */
static void read_conn(const char *s, int how, secrets *sx)
{
    size_t i = 0, n = strlen(s);

    while (i < n) {
        size_t k = i, eq, v, end;
        char inner[4096];
        size_t ilen = 0;

        while (k < n && (s[k] == ';' || s[k] == ' ' || s[k] == '\t'))
            k++;
        eq = k;
        while (eq < n && s[eq] != '=' && s[eq] != ';')
            eq++;
        if (eq >= n || s[eq] != '=') {
            i = eq + 1;
            continue;
        }
        v = eq + 1;
        while (v < n && (s[v] == ' ' || s[v] == '\t'))
            v++;
        end = v;
        if (v < n && s[v] == '{') {
            end = v + 1;
            while (end < n) {
                if (s[end] == '}') {
                    if (!(how & READ_FIRST_BRACE) && end + 1 < n && s[end + 1] == '}') {
                        if (ilen < sizeof inner)
                            inner[ilen++] = '}';
                        end += 2;
                        continue;
                    }
                    end++;
                    break;
                }
                if (ilen < sizeof inner)
                    inner[ilen++] = s[end];
                end++;
            }
        } else if ((how & READ_QUOTES) && v < n && (s[v] == '\'' || s[v] == '"')) {
            char q = s[v];
            end = v + 1;
            while (end < n && s[end] != q) {
                if (ilen < sizeof inner)
                    inner[ilen++] = s[end];
                end++;
            }
            if (end < n)
                end++;
        }
        /* A braced or quoted value ends at its closing brace or quote
         * (what follows up to the ';' is no part of it for a reader that
         * knows them); any other value runs to the ';'. */
        if (end == v)
            while (end < n && s[end] != ';')
                end++;
        if (secret_key(s + k, eq - k) && sx->nspans < sizeof sx->spans / sizeof sx->spans[0]) {
            size_t a = v, b = end;
            sx->spans[sx->nspans].start = a;
            sx->spans[sx->nspans].end = b;
            sx->nspans++;
            if (ilen > 0)
                add_value(sx, inner, ilen);
            while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t'))
                b--;
            add_value(sx, s + a, b - a);
        }
        while (end < n && s[end] != ';')
            end++;
        i = end + 1;
    }
}

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The ideal output: s with every secret span (merged across readers)
 * replaced by "***". */
static char *ideal(const char *s, secrets *sx)
{
    size_t n = strlen(s), o = 0, pos = 0, i;
    char *out = malloc(n + 3 * sx->nspans + 1);

    if (out == NULL)
        abort();
    qsort(sx->spans, sx->nspans, sizeof sx->spans[0], span_cmp);
    for (i = 0; i < sx->nspans;) {
        size_t a = sx->spans[i].start, b = sx->spans[i].end;
        for (i++; i < sx->nspans && sx->spans[i].start <= b; i++)
            if (sx->spans[i].end > b)
                b = sx->spans[i].end;
        if (a < pos)
            a = pos;
        memcpy(out + o, s + pos, a - pos);
        o += a - pos;
        memcpy(out + o, "***", 3);
        o += 3;
        pos = b > pos ? b : pos;
    }
    memcpy(out + o, s + pos, n - pos);
    o += n - pos;
    out[o] = '\0';
    return out;
}

static int has_bytes(const char *hay, const char *needle, size_t n)
{
    size_t h = strlen(hay), i;
    for (i = 0; i + n <= h; i++)
        if (memcmp(hay + i, needle, n) == 0)
            return 1;
    return 0;
}

/* Whether n bytes at s are all blanks or control characters. */
static int blank(const char *s, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if ((unsigned char)s[i] > 0x20 && s[i] != 0x7f)
            return 0;
    return 1;
}

/* Fail if `out` (what a user would see) shows secret v, or any four
 * bytes of it, that `clean` (the ideal rendering of the same text) does
 * not show. */
static void check_leak(const char *where, const char *out, const char *clean, const char *v)
{
    size_t n = strlen(v), w = n < 4 ? n : 4, i;

    if (strspn(v, "*") == n)
        return;
    for (i = 0; i + w <= n; i++) {
        /* The redaction's own stars, and blanks (trailing ones stay
         * beside a redacted value), say nothing of a password. */
        if (memchr(v + i, '*', w) != NULL || blank(v + i, w))
            continue;
        if (has_bytes(out, v + i, w) && !has_bytes(clean, v + i, w))
            FZ_CHECK(0, "%s shows the password '%s' (its bytes '%.*s'): %s", where, v, (int)w,
                     v + i, out);
    }
}

/* Free text has no grammar: a quote in it may end a quoted stretch of
 * the message ("connect to 'DSN=x;PWD=***' failed") as well as belong to
 * a password, braces make the readers disagree on where the next pair
 * starts, and a line end ends a value in a message.  In a string with
 * any of them, free-text redaction hides a password only as far as the
 * text around it can be told, and is not held to the property.  The
 * connection string itself (sqle_redact) has no such limit. */
static int free_text_ambiguous(const char *text)
{
    return strpbrk(text, "'\"{}\r\n") != NULL;
}

/* Control characters become spaces in a message, as the library makes
 * every message one line. */
static void flatten(char *s)
{
    for (; *s != '\0'; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = ' ';
}

static char logged[4096];

static void log_sink(void *ud, int level, const char *line)
{
    (void)ud;
    (void)level;
    snprintf(logged, sizeof logged, "%s", line);
}

static void log_line(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sqle_vlog(log_sink, NULL, SQLEASE_LOG_DEBUG, SQLEASE_LOG_ERROR, fmt, ap);
    va_end(ap);
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
    static secrets sx;
    char *s, *red, *copy, *clean, *msg, *clean_msg, *clean_log;
    sqlease_error err;
    size_t i, n;
    int how;

    if (size > 2048)
        return 0;
    fz_input(data, size);
    s = fz_cstr(data, size);
    n = strlen(s);
    memset(&sx, 0, sizeof sx);
    for (how = 0; how < READ_COUNT; how++)
        read_conn(s, how, &sx);
    clean = ideal(s, &sx);

    /* The connection string as the library shows it. */
    red = sqle_redact(s);
    FZ_CHECK(red != NULL, "sqle_redact returned NULL");
    /* Free text that is the string itself. */
    copy = malloc(n + 1);
    if (copy == NULL)
        abort();
    memcpy(copy, s, n + 1);
    sqle_redact_inplace(copy);
    FZ_CHECK(strlen(copy) <= n, "sqle_redact_inplace grew the text");
    /* A driver's message quoting the string, through sqle_fail and the
     * log, as the library's callers reach them. */
    msg = malloc(n + 64);
    clean_msg = malloc(strlen(clean) + 64);
    clean_log = malloc(strlen(clean) + 96);
    if (msg == NULL || clean_msg == NULL || clean_log == NULL)
        abort();
    snprintf(msg, n + 64, "[unixODBC] connect to '%s' failed", s);
    snprintf(clean_msg, strlen(clean) + 64, "[unixODBC] connect to '%s' failed", clean);
    snprintf(clean_log, strlen(clean) + 96, "cannot connect: %s", clean_msg);
    /* Messages are flattened to one line: so is their ideal. */
    flatten(clean_msg);
    flatten(clean_log);
    sqle_fail(&err, SQLEASE_ECONNECT, "%s", msg);
    logged[0] = '\0';
    log_line("cannot connect: %s", msg);

    for (i = 0; i < sx.nvalues; i++) {
        const char *v = sx.values[i];
        check_leak("sqle_redact", red, clean, v);
        if (free_text_ambiguous(s))
            continue;
        check_leak("sqle_redact_inplace", copy, clean, v);
        check_leak("an error message", err.message, clean_msg, v);
        check_leak("a log line", logged, clean_log, v);
    }
    for (i = 0; i < sx.nvalues; i++)
        free(sx.values[i]);
    free(msg);
    free(clean_msg);
    free(clean_log);
    free(copy);
    free(red);
    free(clean);
    free(s);
    return 0;
}
