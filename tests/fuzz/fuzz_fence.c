/*
 * fuzz_fence.c -- libFuzzer target for sqlease_fence_literal (what
 * SQLEASE_FENCE_SQL holds): the fence predicate with its values written
 * as SQL literals, for every dialect row of the dialect table.
 *
 * Input: "name\nowner\ntoken" (missing fields: "job", "me", 1).
 *
 * Properties, beyond not crashing:
 *  - the output is the row's fence with each marker replaced by one
 *    literal, and each literal, read back by a reference reader of the
 *    row's quoting rules, is the value it stands for, byte for byte:
 *      standard         '...' with '' for a quote (SQLite, SQL Server);
 *      postgres_escape  E'...' as PostgreSQL reads it: \b \f \n \r \t,
 *                       octal, \x, \u and \U (surrogate pairs joined),
 *                       any other \c is c, '' is a quote;
 *      mysql            _utf8mb4'...' read both ways a MySQL/MariaDB
 *                       session may: with backslash escapes (\0 \' \" \b
 *                       \n \r \t \Z \\, \% and \_ kept whole, any other
 *                       \c is c) and with NO_BACKSLASH_ESCAPES; both must
 *                       give the value;
 *  - for the sqlite row, SQLite itself evaluates the predicate: true
 *    against the row holding exactly these values, false once the owner
 *    differs;
 *  - a refusal is one the documentation allows (a backslash for MySQL,
 *    bytes that are not UTF-8 for PostgreSQL, a buffer too small), with a
 *    one-line message; and SQLEASE_FENCE_LITERAL_MAX suffices whenever
 *    the name and owner pass the library's own checks.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "dialects.h"
#include "fuzzutil.h"
#include "internal.h"

#define TABLE "fz_lease"

static sqlite3 *lite;

typedef struct text {
    char b[SQLEASE_FENCE_LITERAL_MAX * 2];
    size_t n;
} text;

static void add(text *t, const char *s, size_t n)
{
    FZ_CHECK(t->n + n <= sizeof t->b, "decoded literal too long");
    memcpy(t->b + t->n, s, n);
    t->n += n;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* n hex digits at p as a number, or -1. */
static long hexn(const char *p, int n)
{
    long v = 0;
    int i;
    for (i = 0; i < n; i++) {
        int h = hexval(p[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

/* '...' with '' doubled.  Returns bytes read, 0 if malformed. */
static size_t read_standard(const char *p, text *out)
{
    size_t i = 1;
    if (p[0] != '\'')
        return 0;
    for (;;) {
        if (p[i] == '\0')
            return 0;
        if (p[i] == '\'') {
            if (p[i + 1] != '\'')
                return i + 1;
            add(out, "'", 1);
            i += 2;
            continue;
        }
        add(out, p + i, 1);
        i++;
    }
}

/* E'...' as PostgreSQL reads an escape string (server encoding UTF-8). */
static size_t read_postgres_escape(const char *p, text *out)
{
    size_t i = 2;
    if ((p[0] != 'E' && p[0] != 'e') || p[1] != '\'')
        return 0;
    for (;;) {
        char c = p[i];
        if (c == '\0')
            return 0;
        if (c == '\'') {
            if (p[i + 1] != '\'')
                return i + 1;
            add(out, "'", 1);
            i += 2;
            continue;
        }
        if (c != '\\') {
            add(out, p + i, 1);
            i++;
            continue;
        }
        c = p[++i];
        switch (c) {
        case 'b': add(out, "\b", 1); i++; break;
        case 'f': add(out, "\f", 1); i++; break;
        case 'n': add(out, "\n", 1); i++; break;
        case 'r': add(out, "\r", 1); i++; break;
        case 't': add(out, "\t", 1); i++; break;
        case '\0': return 0;
        case 'x': {
            int v = hexval(p[i + 1]), k = 1;
            char b;
            if (v < 0) {            /* \x without digits is x */
                add(out, "x", 1);
                i++;
                break;
            }
            if (hexval(p[i + 2]) >= 0)
                v = v * 16 + hexval(p[i + 2]), k = 2;
            FZ_CHECK(v != 0, "E'' literal holds \\x00, which PostgreSQL refuses");
            b = (char)v;
            add(out, &b, 1);
            i += 1 + (size_t)k;
            break;
        }
        case 'u':
        case 'U': {
            int digits = c == 'u' ? 4 : 8;
            long cp = hexn(p + i + 1, digits);
            char enc[4];
            FZ_CHECK(cp >= 0, "E'' literal: \\%c needs %d hex digits", c, digits);
            i += 1 + (size_t)digits;
            if (cp >= 0xd800 && cp <= 0xdbff) {
                long lo = (p[i] == '\\' && p[i + 1] == 'u') ? hexn(p + i + 2, 4) : -1;
                FZ_CHECK(lo >= 0xdc00 && lo <= 0xdfff, "E'' literal: lone high surrogate");
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                i += 6;
            }
            FZ_CHECK(cp > 0 && cp <= 0x10ffff && !(cp >= 0xdc00 && cp <= 0xdfff),
                     "E'' literal: code point %lx is one PostgreSQL refuses", cp);
            add(out, enc, fz_utf8_encode((uint32_t)cp, enc));
            break;
        }
        default:
            if (c >= '0' && c <= '7') {
                int v = c - '0', k = 1;
                char b;
                while (k < 3 && p[i + (size_t)k] >= '0' && p[i + (size_t)k] <= '7')
                    v = v * 8 + (p[i + (size_t)k] - '0'), k++;
                FZ_CHECK((v & 0xff) != 0, "E'' literal holds \\0, which PostgreSQL refuses");
                b = (char)v;
                add(out, &b, 1);
                i += (size_t)k;
            } else {
                add(out, p + i, 1);
                i++;
            }
        }
    }
}

/* _utf8mb4'...' as MySQL/MariaDB read it, with backslash escapes or,
 * with no_backslash, as the NO_BACKSLASH_ESCAPES sql_mode does. */
static size_t read_mysql(const char *p, text *out, int no_backslash)
{
    static const char intro[] = "_utf8mb4'";
    size_t i = sizeof intro - 1;

    if (strncmp(p, intro, i) != 0)
        return 0;
    for (;;) {
        char c = p[i];
        if (c == '\0')
            return 0;
        if (c == '\'') {
            if (p[i + 1] != '\'')
                return i + 1;
            add(out, "'", 1);
            i += 2;
            continue;
        }
        if (c != '\\' || no_backslash) {
            add(out, p + i, 1);
            i++;
            continue;
        }
        c = p[++i];
        switch (c) {
        case '\0': return 0;
        case '0': add(out, "", 1); break;
        case 'b': add(out, "\b", 1); break;
        case 'n': add(out, "\n", 1); break;
        case 'r': add(out, "\r", 1); break;
        case 't': add(out, "\t", 1); break;
        case 'Z': add(out, "\x1a", 1); break;
        case '%': add(out, "\\%", 2); break;
        case '_': add(out, "\\_", 2); break;
        default: add(out, p + i, 1); break;
        }
        i++;
    }
}

/* An integer literal: optional '-', digits. */
static size_t read_int(const char *p, int64_t *v)
{
    size_t i = 0;
    int neg = p[0] == '-';
    uint64_t u = 0;

    if (neg)
        i++;
    if (p[i] < '0' || p[i] > '9')
        return 0;
    while (p[i] >= '0' && p[i] <= '9')
        u = u * 10 + (uint64_t)(p[i++] - '0');
    *v = neg ? -(int64_t)u : (int64_t)u;
    return i;
}

static void check_text_literal(const sqle_dialect *d, const char *lit, const char *value,
                               size_t *used)
{
    static text a, b;
    size_t n = 0, n2;

    a.n = b.n = 0;
    switch ((sqle_literal_style)d->string_literal) {
    case SQLEASE_LIT_STANDARD:
        n = read_standard(lit, &a);
        break;
    case SQLEASE_LIT_POSTGRES_ESCAPE:
        n = read_postgres_escape(lit, &a);
        break;
    case SQLEASE_LIT_MYSQL:
        n = read_mysql(lit, &a, 0);
        n2 = read_mysql(lit, &b, 1);
        FZ_CHECK(n2 == n && b.n == a.n && memcmp(a.b, b.b, a.n) == 0,
                 "%s: the literal reads differently with NO_BACKSLASH_ESCAPES: %.200s", d->key,
                 lit);
        break;
    }
    FZ_CHECK(n > 0, "%s: no well-formed literal where a value belongs: %.200s", d->key, lit);
    FZ_CHECK(a.n == strlen(value) && memcmp(a.b, value, a.n) == 0,
             "%s: literal %.*s reads back as '%.*s', not '%s'", d->key, (int)n, lit, (int)a.n,
             a.b, value);
    *used = n;
}

/* Walk the template and the output together: equal outside markers, a
 * literal of the marker's value at each one. */
static void check_output(const sqle_dialect *d, const char *tmpl, const sqlease_fence *f,
                         const char *out)
{
    const char *t = tmpl, *o = out;
    size_t next = 0;

    while (*t != '\0') {
        if (*t == '\'' || *t == '"' || *t == '`') {
            /* Quoted text of the template is copied as it is. */
            const char *q = t + 1;
            while (*q != '\0' && !(*q == *t && q[1] != *t))
                q += (*q == *t) ? 2 : 1;
            if (*q != '\0')
                q++;
            FZ_CHECK(strncmp(o, t, (size_t)(q - t)) == 0, "%s: quoted text changed at %.40s",
                     d->key, o);
            o += q - t;
            t = q;
        } else if (*t == '?') {
            const sqlease_value *v = &f->values[next++];
            size_t used = 0;
            if (v->type == SQLEASE_VALUE_INT64) {
                int64_t x = 0;
                used = read_int(o, &x);
                FZ_CHECK(used > 0 && x == v->int64, "%s: integer literal %.30s is not %" PRId64,
                         d->key, o, v->int64);
            } else {
                check_text_literal(d, o, v->text, &used);
            }
            o += used;
            t++;
        } else {
            FZ_CHECK(*o == *t, "%s: output differs from the fence at '%.40s' (fence '%.40s')",
                     d->key, o, t);
            o++;
            t++;
        }
    }
    FZ_CHECK(*o == '\0', "%s: text after the fence: %.40s", d->key, o);
    FZ_CHECK(next == f->nvalues, "%s: %zu markers, %zu values", d->key, next, f->nvalues);
}

/* SQLite's verdict on the literal predicate against a row holding
 * name/owner/token (owner with a suffix when `other`). */
static int sqlite_says(const char *pred, const char *name, const char *owner, int64_t token,
                       int other)
{
    sqlite3_stmt *st = NULL;
    char *sql;
    int rc, v;

    FZ_CHECK(sqlite3_exec(lite, "DELETE FROM " TABLE, NULL, NULL, NULL) == SQLITE_OK, "delete");
    rc = sqlite3_prepare_v2(lite,
                            other ? "INSERT INTO " TABLE " VALUES (?, ? || 'x', ?, 9e15)"
                                  : "INSERT INTO " TABLE " VALUES (?, ?, ?, 9e15)",
                            -1, &st, NULL);
    FZ_CHECK(rc == SQLITE_OK, "insert: %s", sqlite3_errmsg(lite));
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, owner, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, token);
    FZ_CHECK(sqlite3_step(st) == SQLITE_DONE, "insert: %s", sqlite3_errmsg(lite));
    sqlite3_finalize(st);
    sql = malloc(strlen(pred) + 8);
    if (sql == NULL)
        abort();
    sprintf(sql, "SELECT %s", pred);
    rc = sqlite3_prepare_v2(lite, sql, -1, &st, NULL);
    FZ_CHECK(rc == SQLITE_OK, "SQLite cannot parse the literal fence: %s\n%s",
             sqlite3_errmsg(lite), sql);
    FZ_CHECK(sqlite3_step(st) == SQLITE_ROW, "no row: %s", sqlite3_errmsg(lite));
    v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    free(sql);
    return v;
}

static int has_byte(const char *s, char c)
{
    return strchr(s, c) != NULL;
}

static void check_dialect(const sqle_dialect *d, const char *name, const char *owner,
                          int64_t token, int checked)
{
    static char buf[SQLEASE_FENCE_LITERAL_MAX];
    sqlease_fence f;
    sqlease_error err;
    char *sql;
    size_t i;
    int rc;

    sql = sqle_sql_for_table(d->fence.sql, TABLE);
    FZ_CHECK(sql != NULL, "sqle_sql_for_table");
    SQLEASE_FENCE_INIT(&f);
    f.sql = sql;
    f.dialect = d->key;
    f.nvalues = d->fence.nparams;
    for (i = 0; i < f.nvalues; i++) {
        sqlease_value *v = &f.values[i];
        switch ((sqle_param)d->fence.params[i]) {
        case SQLEASE_P_NAME: v->type = SQLEASE_VALUE_TEXT; v->text = name; break;
        case SQLEASE_P_OWNER: v->type = SQLEASE_VALUE_TEXT; v->text = owner; break;
        case SQLEASE_P_TOKEN: v->type = SQLEASE_VALUE_INT64; v->int64 = token; break;
        default: FZ_CHECK(0, "%s: the fence binds parameter %d", d->key, d->fence.params[i]);
        }
    }
    rc = sqlease_fence_literal(&f, buf, sizeof buf, &err);
    if (rc != SQLEASE_OK) {
        int too_long = strncmp(err.message, "sqlease_fence_literal: needs ", 28) == 0;
        fz_check_error(&err, rc, d->key);
        FZ_CHECK(rc == SQLEASE_EINVAL, "%s: status %d", d->key, rc);
        FZ_CHECK(!(too_long && checked),
                 "%s: SQLEASE_FENCE_LITERAL_MAX is too small for a valid name and owner: %s",
                 d->key, err.message);
        switch ((sqle_literal_style)d->string_literal) {
        case SQLEASE_LIT_STANDARD:
            FZ_CHECK(too_long, "%s refused '%s'/'%s': %s", d->key, name, owner, err.message);
            break;
        case SQLEASE_LIT_POSTGRES_ESCAPE:
            FZ_CHECK(too_long || !fz_utf8_ok(name, strlen(name)) ||
                         !fz_utf8_ok(owner, strlen(owner)),
                     "%s refused valid UTF-8 '%s'/'%s': %s", d->key, name, owner, err.message);
            break;
        case SQLEASE_LIT_MYSQL:
            FZ_CHECK(too_long || has_byte(name, '\\') || has_byte(owner, '\\'),
                     "%s refused '%s'/'%s' without a backslash: %s", d->key, name, owner,
                     err.message);
            break;
        }
        free(sql);
        return;
    }
    check_output(d, sql, &f, buf);
    if (strcmp(d->key, "sqlite") == 0) {
        /* The clock in the predicate must read a time before 9e15 ms. */
        FZ_CHECK(sqlite_says(buf, name, owner, token, 0) == 1,
                 "SQLite: the literal fence is false for the row it names:\n%s", buf);
        FZ_CHECK(sqlite_says(buf, name, owner, token, 1) == 0,
                 "SQLite: the literal fence is true for another owner:\n%s", buf);
    }
    free(sql);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init();
    if (sqlite3_open(":memory:", &lite) != SQLITE_OK ||
        sqlite3_exec(lite,
                     "CREATE TABLE " TABLE " (name TEXT, owner TEXT, token INTEGER, "
                     "expires_at_ms INTEGER)", NULL, NULL, NULL) != SQLITE_OK)
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s, *field[3];
    const char *name, *owner;
    int64_t token = 1;
    size_t n, i;
    int checked;

    if (size > 4096)
        return 0;
    fz_input(data, size);
    s = fz_cstr(data, size);
    n = fz_fields(s, field, 3);
    name = field[0];
    owner = n > 1 ? field[1] : "me";
    if (n > 2) {
        /* Tokens are never negative: -1 means "none" in the API. */
        uint64_t u = strtoull(field[2], NULL, 10);
        token = u > INT64_MAX ? INT64_MAX : (int64_t)u;
    }
    checked = sqle_check_text("name", name, SQLEASE_MAX_NAME, 0, NULL) == SQLEASE_OK &&
              sqle_check_text("owner", owner, SQLEASE_MAX_OWNER, 1, NULL) == SQLEASE_OK;
    for (i = 0; i < sqle_dialect_count; i++)
        check_dialect(&sqle_dialects[i], name, owner, token, checked);
    free(s);
    return 0;
}
