/*
 * text.c -- the growable text buffer of text.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

void cli_text_init(cli_text *t)
{
    memset(t, 0, sizeof *t);
}

/* Room for n more bytes and the NUL; 0, or -1 (failed set). */
static int reserve(cli_text *t, size_t n)
{
    size_t want, cap;
    char *p;

    if (t->failed)
        return -1;
    if (n > (size_t)-1 / 2 - t->len) {
        t->failed = 1;
        return -1;
    }
    want = t->len + n + 1;
    if (want <= t->cap)
        return 0;
    cap = t->cap > 0 ? t->cap : 256;
    while (cap < want)
        cap *= 2;
    p = realloc(t->s, cap);
    if (p == NULL) {
        t->failed = 1;
        return -1;
    }
    t->s = p;
    t->cap = cap;
    return 0;
}

void cli_text_add(cli_text *t, const char *p, size_t n)
{
    if (reserve(t, n) != 0)
        return;
    memcpy(t->s + t->len, p, n);
    t->len += n;
    t->s[t->len] = '\0';
}

void cli_text_puts(cli_text *t, const char *s)
{
    cli_text_add(t, s, strlen(s));
}

void cli_text_printf(cli_text *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || reserve(t, (size_t)n) != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

const char *cli_text_str(const cli_text *t)
{
    return t->s != NULL ? t->s : "";
}

void cli_text_clear(cli_text *t)
{
    t->len = 0;
    t->failed = 0;
    if (t->s != NULL)
        t->s[0] = '\0';
}

void cli_text_free(cli_text *t)
{
    free(t->s);
    cli_text_init(t);
}
