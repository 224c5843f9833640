/*
 * fence.c -- the fence predicate written out with its values as SQL
 * literals, for programs that cannot bind parameters (SQLEASE_FENCE_SQL
 * for a shell script that hands it to psql, mariadb or sqlite3).
 *
 * Binding is always the safe way; a literal is only as safe as its
 * quoting, and quoting depends on how the receiving session parses
 * strings.  So each dialect row of the template names one quoting style
 * (string_literal), chosen to mean the same thing whatever the session's
 * settings are, and a value that no style can write that way is refused
 * rather than written in a form that might be read differently.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "internal.h"

/* A caller built against the first version of sqlease_fence passes at
 * least this size (the struct then ended with `dialect`). */
#define FENCE_MIN_SIZE (offsetof(sqlease_fence, dialect) + sizeof(const char *))

void sqlease_fence_init_(sqlease_fence *f, size_t size)
{
    if (f == NULL)
        return;
    /* Only the caller's own size is ours to clear. */
    memset(f, 0, size < sizeof *f ? size : sizeof *f);
    f->size = size;
}

/* A growing output buffer; `failed` is set on out-of-memory. */
typedef struct outbuf {
    char *s;
    size_t len, cap;
    int failed;
} outbuf;

static void put(outbuf *o, const char *s, size_t n)
{
    if (o->failed)
        return;
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 256;
        char *p;
        while (o->len + n + 1 > cap)
            cap *= 2;
        p = realloc(o->s, cap);
        if (p == NULL) {
            o->failed = 1;
            return;
        }
        o->s = p;
        o->cap = cap;
    }
    memcpy(o->s + o->len, s, n);
    o->len += n;
    o->s[o->len] = '\0';
}

static void puts_(outbuf *o, const char *s)
{
    put(o, s, strlen(s));
}

/* The code point of the UTF-8 sequence at s (n bytes available) and its
 * length; 0 if it is not valid UTF-8 (never the case for checked names
 * and owner ids). */
static size_t utf8_decode(const unsigned char *s, size_t n, unsigned long *cp)
{
    size_t len, i;
    unsigned long c;

    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2;
        c = s[0] & 0x1f;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3;
        c = s[0] & 0x0f;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4;
        c = s[0] & 0x07;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)) ||
        (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return len;
}

/*
 * One text value as a literal of `style`.  Returns SQLEASE_OK or
 * SQLEASE_EINVAL with the reason.
 *
 *  - standard: '...' with ' doubled; every byte else as it is.
 *  - postgres_escape: E'...' is an escape string whatever
 *    standard_conforming_strings says; backslash is doubled, the quote
 *    doubled (never \' , which servers refuse in some client encodings),
 *    and every non-ASCII character is written as \uXXXX or \UXXXXXXXX, so
 *    the bytes do not depend on the session's client_encoding either.
 *  - mysql: _utf8mb4'...' says which character set the bytes are in,
 *    whatever the client's is; ' is doubled (the same in every sql_mode).
 *    A backslash is an escape unless sql_mode has NO_BACKSLASH_ESCAPES,
 *    which a script cannot know: refused.
 */
static int put_text(outbuf *o, int style, const char *v, size_t idx, sqlease_error *err)
{
    const unsigned char *u = (const unsigned char *)v;
    size_t n = strlen(v), i, len;

    switch ((sqle_literal_style)style) {
    case SQLEASE_LIT_STANDARD:
        puts_(o, "'");
        for (i = 0; i < n; i++)
            put(o, v[i] == '\'' ? "''" : v + i, v[i] == '\'' ? 2 : 1);
        puts_(o, "'");
        return SQLEASE_OK;
    case SQLEASE_LIT_POSTGRES_ESCAPE:
        puts_(o, "E'");
        for (i = 0; i < n; i += len) {
            unsigned long cp;
            char esc[24];
            len = utf8_decode(u + i, n - i, &cp);
            if (len == 0)
                return sqle_fail(err, SQLEASE_EINVAL,
                                 "fence value %zu is not valid UTF-8 (byte %zu)", idx + 1,
                                 i + 1);
            if (cp == '\'')
                puts_(o, "''");
            else if (cp == '\\')
                puts_(o, "\\\\");
            else if (cp >= 0x20 && cp < 0x7f)
                put(o, v + i, 1);
            else {
                /* Control characters too: nothing but printable ASCII
                 * travels as itself. */
                if (cp <= 0xffff)
                    snprintf(esc, sizeof esc, "\\u%04lX", cp);
                else
                    snprintf(esc, sizeof esc, "\\U%08lX", cp);
                puts_(o, esc);
            }
        }
        puts_(o, "'");
        return SQLEASE_OK;
    case SQLEASE_LIT_MYSQL:
        if (strchr(v, '\\') != NULL)
            return sqle_fail(err, SQLEASE_EINVAL,
                             "fence value %zu ('%s') contains a backslash, which "
                             "MySQL/MariaDB read as an escape unless the session's sql_mode "
                             "has NO_BACKSLASH_ESCAPES: it cannot be written as a literal "
                             "that means the same in every session (bind the values "
                             "instead)", idx + 1, v);
        puts_(o, "_utf8mb4'");
        for (i = 0; i < n; i++)
            put(o, v[i] == '\'' ? "''" : v + i, v[i] == '\'' ? 2 : 1);
        puts_(o, "'");
        return SQLEASE_OK;
    }
    return sqle_fail(err, SQLEASE_EINVAL, "unknown literal style %d", style);
}

/*
 * Copy the predicate, replacing each `?` marker outside quoted text (the
 * generator allows no other `?`, but a quoted one stays as it is) by the
 * next value as a literal.
 */
int sqlease_fence_literal(const sqlease_fence *f, char *buf, size_t cap, sqlease_error *err)
{
    const sqle_dialect *d;
    outbuf o = { NULL, 0, 0, 0 };
    const char *p;
    size_t next = 0;
    int rc = SQLEASE_OK;

    sqle_err_clear(err);
    if (f == NULL || buf == NULL || cap == 0)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_fence_literal: NULL argument");
    buf[0] = '\0';
    if (f->size < FENCE_MIN_SIZE || f->sql == NULL || f->dialect == NULL ||
        f->nvalues > SQLEASE_FENCE_MAX_VALUES)
        return sqle_fail(err, SQLEASE_EINVAL,
                         "sqlease_fence_literal: the fence is not filled (use "
                         "SQLEASE_FENCE_INIT, then sqlease_supervisor_fence or "
                         "sqlease_lease_fence)");
    d = sqle_dialect_find(f->dialect);
    if (d == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_fence_literal: unknown dialect '%s'",
                         f->dialect);
    for (p = f->sql; *p != '\0' && rc == SQLEASE_OK;) {
        if (*p == '\'' || *p == '"' || *p == '`') {
            const char *q = p + 1;
            for (;;) {
                if (*q == '\0')
                    break;
                if (*q == *p) {
                    if (q[1] == *p) {
                        q += 2;
                        continue;
                    }
                    q++;
                    break;
                }
                q++;
            }
            put(&o, p, (size_t)(q - p));
            p = q;
        } else if (*p == '?') {
            const sqlease_value *v;
            if (next >= f->nvalues) {
                rc = sqle_fail(err, SQLEASE_EINVAL,
                               "sqlease_fence_literal: more markers than the %zu values",
                               f->nvalues);
                break;
            }
            v = &f->values[next++];
            if (v->type == SQLEASE_VALUE_INT64) {
                char num[32];
                snprintf(num, sizeof num, "%" PRId64, v->int64);
                puts_(&o, num);
            } else if (v->type == SQLEASE_VALUE_TEXT && v->text != NULL) {
                rc = put_text(&o, d->string_literal, v->text, next - 1, err);
            } else {
                rc = sqle_fail(err, SQLEASE_EINVAL,
                               "sqlease_fence_literal: value %zu has no type", next);
            }
            p++;
        } else {
            put(&o, p, 1);
            p++;
        }
    }
    if (rc == SQLEASE_OK && next != f->nvalues)
        rc = sqle_fail(err, SQLEASE_EINVAL,
                       "sqlease_fence_literal: %zu markers for %zu values", next, f->nvalues);
    if (rc == SQLEASE_OK && o.failed)
        rc = sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    if (rc == SQLEASE_OK && o.len + 1 > cap)
        rc = sqle_fail(err, SQLEASE_EINVAL,
                       "sqlease_fence_literal: needs %zu bytes, the buffer has %zu",
                       o.len + 1, cap);
    if (rc == SQLEASE_OK)
        memcpy(buf, o.s, o.len + 1);
    free(o.s);
    return rc;
}
