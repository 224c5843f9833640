/*
 * cronexpr.c -- cron expressions: the parser, and the search for the
 * next and the previous fire in a time zone (the rules are in
 * cronexpr.h).
 *
 * An expression is six bitsets (second, minute, hour, day of month,
 * month, day of week) and the two things the rules ask of how its fields
 * were written: which of them start with '*'.  The search works on local
 * time as a count of seconds (epoch seconds plus the offset), one stretch
 * of constant offset at a time (tz.h's spans): inside a stretch local
 * time and UTC move together, so the first local time that matches is
 * the first fire; at a stretch's start the zone's change of offset is a
 * gap or a repeat of local time, which is where the daylight saving rules
 * apply.  Within a stretch the calendar search skips whatever cannot
 * match as a whole (a month, a day, an hour, a minute), so a yearly job
 * costs about what a per-minute one does.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cronexpr.h"
#include "internal.h"

enum { F_SEC, F_MIN, F_HOUR, F_DOM, F_MON, F_DOW, F_COUNT };

/* What a field accepts, and what '*' covers (day of week accepts 7 for
 * Sunday, but '*' is 0-6, as robfig has it: *\/2 is then 0,2,4,6). */
static const struct field_def {
    const char *name;
    int lo, hi;
    int star_hi;
} field_defs[F_COUNT] = {
    { "second", 0, 59, 59 },     { "minute", 0, 59, 59 }, { "hour", 0, 23, 23 },
    { "day of month", 1, 31, 31 }, { "month", 1, 12, 12 },  { "day of week", 0, 7, 6 },
};

static const char *const month_names[12] = { "JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                             "JUL", "AUG", "SEP", "OCT", "NOV", "DEC" };
static const char *const day_names[7] = { "SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT" };

/* Which fields start with '*' (or '?'): the day fields decide between
 * "both" and "either" (cronexpr.h), the minute and hour fields whether a
 * job is at fixed times for the daylight saving rules. */
#define STAR_MIN 1u
#define STAR_HOUR 2u
#define STAR_DOM 4u
#define STAR_DOW 8u

#define MIN_S (SQLE_CRON_MIN_MS / 1000)
#define MAX_S (SQLE_CRON_MAX_MS / 1000)
#define NONE_AFTER INT64_MAX
#define NONE_BEFORE INT64_MIN

struct sqle_cron {
    uint64_t bits[F_COUNT]; /* bit v: value v matches; day of week 7 is folded into 0 */
    unsigned star;
    int64_t every_s; /* @every's period in seconds; 0 for fields */
    sqle_tz *tz;
};

/* ---- bits ------------------------------------------------------------ */

static int has_bit(uint64_t mask, int v)
{
    return v >= 0 && v < 64 && ((mask >> v) & 1u);
}

/* The lowest set bit at or above `from`, or -1. */
static int next_bit(uint64_t mask, int from)
{
    if (from < 0)
        from = 0;
    if (from > 63)
        return -1;
    mask &= ~(uint64_t)0 << from;
    if (mask == 0)
        return -1;
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(mask);
#else
    {
        int i = from;
        while (!((mask >> i) & 1u))
            i++;
        return i;
    }
#endif
}

/* The highest set bit at or below `from`, or -1. */
static int prev_bit(uint64_t mask, int from)
{
    if (from < 0)
        return -1;
    if (from < 63)
        mask &= ((uint64_t)2 << from) - 1;
    if (mask == 0)
        return -1;
#if defined(__GNUC__) || defined(__clang__)
    return 63 - __builtin_clzll(mask);
#else
    {
        int i = 63;
        while (!((mask >> i) & 1u))
            i--;
        return i;
    }
#endif
}

/* The smallest distance between two consecutive set bits, or -1 with
 * fewer than two. */
static int min_gap(uint64_t mask)
{
    int prev = -1, best = -1, v;

    for (v = next_bit(mask, 0); v >= 0; v = next_bit(mask, v + 1)) {
        if (prev >= 0 && (best < 0 || v - prev < best))
            best = v - prev;
        prev = v;
    }
    return best;
}

/* ---- errors ------------------------------------------------------------ */

typedef struct parser {
    const char *expr;
    sqle_cron_error *err;
} parser;

static int fail_at(parser *p, const char *at, const char *fmt, ...) SQLEASE_PRINTF(3, 4);

/* Fill the error with the column of `at` in the expression (0 for NULL:
 * not in it) and return SQLEASE_EINVAL. */
static int fail_at(parser *p, const char *at, const char *fmt, ...)
{
    va_list ap;

    if (p->err != NULL) {
        p->err->status = SQLEASE_EINVAL;
        p->err->column = at != NULL ? (int)(at - p->expr) + 1 : 0;
        va_start(ap, fmt);
        vsnprintf(p->err->message, sizeof p->err->message, fmt, ap);
        va_end(ap);
    }
    return SQLEASE_EINVAL;
}

static void err_clear(sqle_cron_error *err)
{
    if (err != NULL) {
        err->status = SQLEASE_OK;
        err->column = 0;
        err->message[0] = '\0';
    }
}

/* A character as a message shows it: itself when printable, else its
 * byte value. */
static const char *show_char(char c, char *buf, size_t cap)
{
    unsigned char u = (unsigned char)c;

    if (u > 32 && u < 127)
        snprintf(buf, cap, "'%c'", c);
    else
        snprintf(buf, cap, "byte 0x%02x", u);
    return buf;
}

/* ---- fields ------------------------------------------------------------ */

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_alpha(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static char upper(char c)
{
    return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/*
 * One value of field f at *s (up to end): a number, or for the month and
 * the day of week a three-letter name.  Advances *s past it.  Numbers too
 * long to be any field's are still read whole, to be reported whole.
 */
static int parse_value(parser *p, const char **s, const char *end, int f, int fieldno, int *v)
{
    const struct field_def *fd = &field_defs[f];
    const char *q = *s;
    char shown[16];

    if (q < end && is_digit(*q)) {
        long x = 0;
        while (q < end && is_digit(*q)) {
            if (x < 1000000)
                x = x * 10 + (*q - '0');
            q++;
        }
        if (x < fd->lo || x > fd->hi)
            return fail_at(p, *s, "field %d (%s): %.*s is not within %d..%d", fieldno, fd->name,
                           (int)(q - *s > 20 ? 20 : q - *s), *s, fd->lo, fd->hi);
        *v = (int)x;
        *s = q;
        return SQLEASE_OK;
    }
    if (q < end && is_alpha(*q)) {
        const char *const *names = f == F_MON ? month_names : f == F_DOW ? day_names : NULL;
        int count = f == F_MON ? 12 : 7, i;
        while (q < end && is_alpha(*q))
            q++;
        if (names == NULL)
            return fail_at(p, *s, "field %d (%s): '%.*s' is not a number", fieldno, fd->name,
                           (int)(q - *s > 20 ? 20 : q - *s), *s);
        if (q - *s == 3) {
            for (i = 0; i < count; i++) {
                if (upper((*s)[0]) == names[i][0] && upper((*s)[1]) == names[i][1]
                    && upper((*s)[2]) == names[i][2]) {
                    *v = f == F_MON ? i + 1 : i;
                    *s = q;
                    return SQLEASE_OK;
                }
            }
        }
        return fail_at(p, *s, "field %d (%s): unknown name '%.*s' (%s)", fieldno, fd->name,
                       (int)(q - *s > 20 ? 20 : q - *s), *s,
                       f == F_MON ? "JAN..DEC" : "SUN..SAT");
    }
    if (q >= end)
        return fail_at(p, q, "field %d (%s): a value is missing at the end", fieldno, fd->name);
    return fail_at(p, q, "field %d (%s): %s where a number%s or '*' belongs", fieldno, fd->name,
                   show_char(*q, shown, sizeof shown),
                   f == F_MON || f == F_DOW ? ", a name" : "");
}

/* One element of a list: *, ?, a, a-b, each with an optional /n. */
static int parse_element(parser *p, const char *s, const char *end, int f, int fieldno,
                         uint64_t *bits)
{
    const struct field_def *fd = &field_defs[f];
    const char *q = s, *range_at = s;
    int lo, hi, step = 1, v, rc, width = fd->star_hi - fd->lo + 1;
    char shown[16];

    if (q < end && (*q == '*' || *q == '?')) {
        if (*q == '?' && f != F_DOM && f != F_DOW)
            return fail_at(p, q, "field %d (%s): '?' is only for the day of month and the day "
                                 "of week",
                           fieldno, fd->name);
        lo = fd->lo;
        hi = fd->star_hi;
        q++;
    } else {
        rc = parse_value(p, &q, end, f, fieldno, &lo);
        if (rc != SQLEASE_OK)
            return rc;
        hi = lo;
        if (q < end && *q == '-') {
            q++;
            rc = parse_value(p, &q, end, f, fieldno, &hi);
            if (rc != SQLEASE_OK)
                return rc;
            if (hi < lo)
                return fail_at(p, range_at,
                               "field %d (%s): range %d-%d runs backwards (write it as two: "
                               "%d-%d,%d-%d)",
                               fieldno, fd->name, lo, hi, lo, fd->hi, fd->lo, hi);
        } else if (q < end && *q == '/') {
            /* a/n: from a to the field's end (robfig); 7/n is Sunday */
            hi = lo > fd->star_hi ? lo : fd->star_hi;
        }
    }
    if (q < end && *q == '/') {
        const char *at = ++q;
        long n = 0;
        if (q >= end || !is_digit(*q))
            return fail_at(p, at, "field %d (%s): a step needs a number after '/'", fieldno,
                           fd->name);
        while (q < end && is_digit(*q)) {
            if (n < 1000000)
                n = n * 10 + (*q - '0');
            q++;
        }
        if (n < 1 || n > width)
            return fail_at(p, at, "field %d (%s): step %.*s is not within 1..%d", fieldno,
                           fd->name, (int)(q - at > 20 ? 20 : q - at), at, width);
        step = (int)n;
    }
    if (q < end)
        return fail_at(p, q, "field %d (%s): unexpected %s", fieldno, fd->name,
                       show_char(*q, shown, sizeof shown));
    for (v = lo; v <= hi; v += step)
        *bits |= (uint64_t)1 << v;
    return SQLEASE_OK;
}

/* A whole field: elements separated by ','. */
static int parse_field(parser *p, const char *s, const char *end, int f, int fieldno,
                       uint64_t *bits)
{
    const char *e = s;

    *bits = 0;
    for (;;) {
        const char *comma = e;
        int rc;
        while (comma < end && *comma != ',')
            comma++;
        if (comma == e)
            return fail_at(p, e, "field %d (%s): empty list element", fieldno,
                           field_defs[f].name);
        rc = parse_element(p, e, comma, f, fieldno, bits);
        if (rc != SQLEASE_OK)
            return rc;
        if (comma == end)
            break;
        e = comma + 1;
    }
    if (f == F_DOW && (*bits >> 7 & 1u))
        *bits = (*bits & ~((uint64_t)1 << 7)) | 1u;
    return SQLEASE_OK;
}

/*
 * A day whose month has no such day (February 30th) never comes; when
 * the day fields must both match (one starts with '*'), an expression
 * whose every day of month is past the end of every month it names never
 * fires.  (When either may match, the day of week always can; and any day
 * that exists falls on every weekday some year.)
 */
static int check_possible(parser *p, const sqle_cron *c, const char *dom_at, int fieldno)
{
    int m, first;

    if (!(c->star & (STAR_DOM | STAR_DOW)))
        return SQLEASE_OK;
    for (m = next_bit(c->bits[F_MON], 1); m >= 0; m = next_bit(c->bits[F_MON], m + 1)) {
        int longest = m == 2 ? 29 : sqle_days_in_month(2001, m);
        if (next_bit(c->bits[F_DOM], 1) <= longest)
            return SQLEASE_OK;
    }
    first = next_bit(c->bits[F_DOM], 1);
    return fail_at(p, dom_at, "field %d (day of month): never fires: no month in field %d has "
                              "%d days",
                   fieldno, fieldno + 1, first);
}

/* The five or six fields of an expression (not a macro). */
static int parse_fields(parser *p, const char *s, sqle_cron *c)
{
    const char *start[8], *stop[8];
    int n = 0, i, first, rc;
    const char *q = s;

    for (;;) {
        while (is_blank(*q))
            q++;
        if (*q == '\0')
            break;
        if (n == 6)
            return fail_at(p, q, "too many fields: a schedule has 5 (MIN HOUR DOM MON DOW) "
                                 "or 6 (SEC MIN HOUR DOM MON DOW)");
        start[n] = q;
        while (*q != '\0' && !is_blank(*q))
            q++;
        stop[n++] = q;
    }
    if (n < 5)
        return fail_at(p, q, "%d field%s where a schedule has 5 (MIN HOUR DOM MON DOW) or 6 "
                             "(SEC MIN HOUR DOM MON DOW)",
                       n, n == 1 ? "" : "s");
    first = n == 6 ? F_SEC : F_MIN;
    c->bits[F_SEC] = 1; /* 5 fields: second 0 */
    for (i = 0; i < n; i++) {
        int f = first + i;
        rc = parse_field(p, start[i], stop[i], f, i + 1, &c->bits[f]);
        if (rc != SQLEASE_OK)
            return rc;
        if (start[i][0] == '*' || start[i][0] == '?')
            c->star |= f == F_MIN ? STAR_MIN : f == F_HOUR ? STAR_HOUR : f == F_DOM ? STAR_DOM
                                                 : f == F_DOW ? STAR_DOW : 0;
    }
    return check_possible(p, c, start[F_DOM - first], F_DOM - first + 1);
}

static int word_is(const char *s, size_t n, const char *word)
{
    size_t i;

    if (strlen(word) != n)
        return 0;
    for (i = 0; i < n; i++)
        if (upper(s[i]) != upper(word[i]))
            return 0;
    return 1;
}

/*
 * @every's period: one duration or several in a row (1h30m), each read by
 * sqlease_parse_duration so that it means here what it means in every
 * flag, a bare number refused alike.
 */
static int parse_every(parser *p, const char *s, const char *end, int64_t *period_s)
{
    const char *q = s;
    int64_t total = 0;

    while (q < end) {
        const char *part = q;
        char buf[64];
        sqlease_error e;
        int64_t ms = 0;
        /* A part is what may precede its number (a sign, for the
         * duration parser to name), the number and its unit. */
        while (q < end && !is_digit(*q))
            q++;
        while (q < end && is_digit(*q))
            q++;
        while (q < end && !is_digit(*q))
            q++;
        if ((size_t)(q - part) >= sizeof buf)
            return fail_at(p, part, "@every: duration '%.20s...' is too long", part);
        memcpy(buf, part, (size_t)(q - part));
        buf[q - part] = '\0';
        if (sqlease_parse_duration(buf, &ms, &e) != SQLEASE_OK)
            return fail_at(p, part, "@every: %s", e.message);
        total += ms;
        if (total > SQLEASE_MAX_DURATION_MS)
            return fail_at(p, s, "@every: the period %.*s is more than 30 days", (int)(end - s),
                           s);
    }
    if (total < 1000)
        return fail_at(p, s, "@every: the period %.*s is shorter than 1s", (int)(end - s), s);
    if (total % 1000 != 0)
        return fail_at(p, s, "@every: the period %.*s is not a whole number of seconds (fires "
                             "are whole seconds)",
                       (int)(end - s), s);
    *period_s = total / 1000;
    return SQLEASE_OK;
}

static int parse_macro(parser *p, const char *s, sqle_cron *c)
{
    static const struct { const char *name, *fields; } macros[] = {
        { "@yearly", "0 0 1 1 *" }, { "@annually", "0 0 1 1 *" }, { "@monthly", "0 0 1 * *" },
        { "@weekly", "0 0 * * 0" }, { "@daily", "0 0 * * *" },    { "@midnight", "0 0 * * *" },
        { "@hourly", "0 * * * *" },
    };
    const char *q = s, *arg, *arg_end, *rest;
    size_t i, n;

    while (*q != '\0' && !is_blank(*q))
        q++;
    n = (size_t)(q - s);
    arg = q;
    while (is_blank(*arg))
        arg++;
    arg_end = arg;
    while (*arg_end != '\0' && !is_blank(*arg_end))
        arg_end++;
    rest = arg_end;
    while (is_blank(*rest))
        rest++;
    if (word_is(s, n, "@every")) {
        if (arg == arg_end)
            return fail_at(p, arg, "@every needs a duration after it, e.g. @every 5m");
        if (*rest != '\0')
            return fail_at(p, rest, "@every takes one duration (write 1h30m, not 1h 30m)");
        return parse_every(p, arg, arg_end, &c->every_s);
    }
    if (word_is(s, n, "@reboot"))
        return fail_at(p, s, "@reboot is not supported: a fleet has no one boot to fire at "
                             "(a host's own init system can run a job at its boot)");
    for (i = 0; i < sizeof macros / sizeof macros[0]; i++) {
        if (word_is(s, n, macros[i].name)) {
            parser inner = { macros[i].fields, NULL };
            if (arg != arg_end)
                return fail_at(p, arg, "%s takes nothing after it", macros[i].name);
            return parse_fields(&inner, macros[i].fields, c);
        }
    }
    return fail_at(p, s, "unknown macro '%.*s' (@yearly, @annually, @monthly, @weekly, @daily, "
                         "@midnight, @hourly, @every)",
                   (int)(n > 20 ? 20 : n), s);
}

int sqle_cron_parse_in(const char *expr, sqle_tz *zone, sqle_cron **out, sqle_cron_error *err)
{
    parser p;
    sqle_cron *c;
    const char *s;
    int rc;

    err_clear(err);
    p.expr = expr;
    p.err = err;
    if (out == NULL || expr == NULL)
        return fail_at(&p, NULL, "cron expression: NULL argument");
    *out = NULL;
    c = calloc(1, sizeof *c);
    if (c == NULL) {
        if (err != NULL) {
            err->status = SQLEASE_ENOMEM;
            snprintf(err->message, sizeof err->message, "cron expression: out of memory");
        }
        return SQLEASE_ENOMEM;
    }
    s = expr;
    while (is_blank(*s))
        s++;
    if (*s == '\0')
        rc = fail_at(&p, s, "empty schedule");
    else if (*s == '@')
        rc = parse_macro(&p, s, c);
    else
        rc = parse_fields(&p, s, c);
    if (rc != SQLEASE_OK) {
        free(c);
        return rc;
    }
    if (zone == NULL)
        (void)sqle_tz_open(NULL, &zone, NULL); /* UTC: static, cannot fail */
    c->tz = sqle_tz_ref(zone);
    *out = c;
    return SQLEASE_OK;
}

int sqle_cron_parse(const char *expr, const char *tz, sqle_cron **out, sqle_cron_error *err)
{
    sqle_tz *zone = NULL;
    sqlease_error e;
    int rc;

    err_clear(err);
    if (out != NULL)
        *out = NULL;
    rc = sqle_tz_open(tz, &zone, &e);
    if (rc != SQLEASE_OK) {
        if (err != NULL) {
            err->status = rc;
            err->column = 0;
            snprintf(err->message, sizeof err->message, "%s", e.message);
        }
        return rc;
    }
    rc = sqle_cron_parse_in(expr, zone, out, err);
    sqle_tz_release(zone);
    return rc;
}

void sqle_cron_free(sqle_cron *c)
{
    if (c == NULL)
        return;
    sqle_tz_release(c->tz);
    free(c);
}

sqle_tz *sqle_cron_zone(const sqle_cron *c)
{
    return c->tz;
}

int sqle_cron_is_every(const sqle_cron *c)
{
    return c->every_s != 0;
}

/* ---- the calendar search ---------------------------------------------- */

static int weekday(int64_t days)
{
    return (int)(((days % 7) + 7 + 4) % 7); /* 1970-01-01 was a Thursday */
}

static int day_ok(const sqle_cron *c, int64_t days, int dom)
{
    int by_dom = has_bit(c->bits[F_DOM], dom), by_dow = has_bit(c->bits[F_DOW], weekday(days));
    return (c->star & (STAR_DOM | STAR_DOW)) ? by_dom && by_dow : by_dom || by_dow;
}

/* A date being walked through, with its day number kept in step. */
typedef struct walk {
    int64_t y, day;
    int m, d;
} walk;

static void walk_month(walk *w, int64_t y, int m, int d)
{
    w->y = y;
    w->m = m;
    w->d = d;
    w->day = sqle_days_from_civil(y, m, d);
}

static void walk_forward(walk *w)
{
    w->day++;
    if (++w->d > sqle_days_in_month(w->y, w->m)) {
        w->d = 1;
        if (++w->m > 12) {
            w->m = 1;
            w->y++;
        }
    }
}

static void walk_back(walk *w)
{
    w->day--;
    if (--w->d < 1) {
        if (--w->m < 1) {
            w->m = 12;
            w->y--;
        }
        w->d = sqle_days_in_month(w->y, w->m);
    }
}

/*
 * The first local time (in seconds, as epoch seconds are) at or after
 * `from` and before `limit` that the fields match, or NONE_AFTER.  Skips
 * a month not in the month field, a day that does not match (by the day
 * of month field's next value when both day fields must match), then
 * hours, minutes and seconds by their fields' next values.
 */
static int64_t match_next(const sqle_cron *c, int64_t from, int64_t limit)
{
    const int both = (c->star & (STAR_DOM | STAR_DOW)) != 0;
    int64_t day0 = sqle_floor_div(from, 86400), y;
    int sod = (int)(from - day0 * 86400), m, d, h, mi, s;
    walk w;

    if (from >= limit)
        return NONE_AFTER;
    sqle_civil_from_days(day0, &y, &m, &d);
    w.y = y;
    w.m = m;
    w.d = d;
    w.day = day0;
    h = sod / 3600;
    mi = sod / 60 % 60;
    s = sod % 60;
    for (;;) {
        if (w.day * 86400 >= limit)
            return NONE_AFTER;
        if (!has_bit(c->bits[F_MON], w.m)) {
            int m2 = next_bit(c->bits[F_MON], w.m + 1);
            if (m2 < 0)
                walk_month(&w, w.y + 1, next_bit(c->bits[F_MON], 1), 1);
            else
                walk_month(&w, w.y, m2, 1);
            h = mi = s = 0;
            continue;
        }
        if (!day_ok(c, w.day, w.d)) {
            int d2 = both ? next_bit(c->bits[F_DOM], w.d) : w.d;
            if (d2 < 0 || d2 > sqle_days_in_month(w.y, w.m)) {
                if (w.m == 12)
                    walk_month(&w, w.y + 1, 1, 1);
                else
                    walk_month(&w, w.y, w.m + 1, 1);
            } else if (d2 == w.d) {
                walk_forward(&w);
            } else {
                w.day += d2 - w.d;
                w.d = d2;
            }
            h = mi = s = 0;
            continue;
        }
        for (;;) {
            int h2, mi2, s2;
            if (h > 23 || (h2 = next_bit(c->bits[F_HOUR], h)) < 0)
                break;
            if (h2 != h) {
                h = h2;
                mi = s = 0;
            }
            mi2 = next_bit(c->bits[F_MIN], mi);
            if (mi2 < 0) {
                h++;
                mi = s = 0;
                continue;
            }
            if (mi2 != mi) {
                mi = mi2;
                s = 0;
            }
            s2 = next_bit(c->bits[F_SEC], s);
            if (s2 < 0) {
                s = 0;
                if (++mi > 59) {
                    mi = 0;
                    h++;
                }
                continue;
            }
            {
                int64_t t = w.day * 86400 + h * 3600 + mi * 60 + s2;
                return t < limit ? t : NONE_AFTER;
            }
        }
        walk_forward(&w);
        h = mi = s = 0;
    }
}

/* The last local time at or before `from` and at or after `limit` that
 * the fields match, or NONE_BEFORE: match_next run backwards. */
static int64_t match_prev(const sqle_cron *c, int64_t from, int64_t limit)
{
    const int both = (c->star & (STAR_DOM | STAR_DOW)) != 0;
    int64_t day0 = sqle_floor_div(from, 86400), y;
    int sod = (int)(from - day0 * 86400), m, d, h, mi, s;
    walk w;

    if (from < limit)
        return NONE_BEFORE;
    sqle_civil_from_days(day0, &y, &m, &d);
    w.y = y;
    w.m = m;
    w.d = d;
    w.day = day0;
    h = sod / 3600;
    mi = sod / 60 % 60;
    s = sod % 60;
    for (;;) {
        if (w.day * 86400 + 86399 < limit)
            return NONE_BEFORE;
        if (!has_bit(c->bits[F_MON], w.m)) {
            int m2 = prev_bit(c->bits[F_MON], w.m - 1);
            if (m2 < 0) {
                m2 = prev_bit(c->bits[F_MON], 12);
                walk_month(&w, w.y - 1, m2, sqle_days_in_month(w.y - 1, m2));
            } else {
                walk_month(&w, w.y, m2, sqle_days_in_month(w.y, m2));
            }
            h = 23;
            mi = s = 59;
            continue;
        }
        if (!day_ok(c, w.day, w.d)) {
            int d2 = both ? prev_bit(c->bits[F_DOM], w.d) : w.d;
            if (d2 < 1) {
                if (w.m == 1)
                    walk_month(&w, w.y - 1, 12, 31);
                else
                    walk_month(&w, w.y, w.m - 1, sqle_days_in_month(w.y, w.m - 1));
            } else if (d2 == w.d) {
                walk_back(&w);
            } else {
                w.day -= w.d - d2;
                w.d = d2;
            }
            h = 23;
            mi = s = 59;
            continue;
        }
        for (;;) {
            int h2, mi2, s2;
            if (h < 0 || (h2 = prev_bit(c->bits[F_HOUR], h)) < 0)
                break;
            if (h2 != h) {
                h = h2;
                mi = s = 59;
            }
            mi2 = prev_bit(c->bits[F_MIN], mi);
            if (mi2 < 0) {
                h--;
                mi = s = 59;
                continue;
            }
            if (mi2 != mi) {
                mi = mi2;
                s = 59;
            }
            s2 = prev_bit(c->bits[F_SEC], s);
            if (s2 < 0) {
                s = 59;
                if (--mi < 0) {
                    mi = 59;
                    h--;
                }
                continue;
            }
            {
                int64_t t = w.day * 86400 + h * 3600 + mi * 60 + s2;
                return t >= limit ? t : NONE_BEFORE;
            }
        }
        walk_back(&w);
        h = 23;
        mi = s = 59;
    }
}

/* ---- fires in a zone -------------------------------------------------- */

/* At fixed times: neither the minute nor the hour field starts with '*'. */
static int fixed_times(const sqle_cron *c)
{
    return !(c->star & (STAR_MIN | STAR_HOUR));
}

/* Whether a forward change at sp->start skipped a local time the fields
 * match: then a job at fixed times fires at the change. */
static int gap_fires(const sqle_cron *c, const sqle_tz_span *sp)
{
    return sp->off_before < sp->off
           && match_next(c, sp->start + sp->off_before, sp->start + sp->off) != NONE_AFTER;
}

/*
 * How far local time had got before the stretch sp starts: the local
 * times below it that sp shows again (after a backward change) fired the
 * first time, so a job at fixed times skips them.  It is the highest
 * local time of the stretches before, not only of the one just before
 * (a stretch may start at a mere seam of the zone's data, inside a
 * repeated hour, or a second change may come within the repeat); a
 * backward change repeats at most 51 h (offsets are within -25 h and
 * +26 h), so the stretches of the 52 h before sp are enough, at most 64
 * of them (no real zone changes so often).
 */
static int64_t reached_before(const sqle_tz *z, const sqle_tz_span *sp)
{
    int64_t reached, t;
    int i;

    if (sp->start <= SQLE_TZ_MIN)
        return INT64_MIN;
    reached = sp->start + sp->off_before;
    t = sp->start - 1;
    for (i = 0; i < 64 && t > sp->start - 52 * 3600; i++) {
        sqle_tz_span p;
        sqle_tz_span_at(z, t, &p);
        /* Only the part before sp: stretches cut at seams may overlap. */
        if ((p.end < sp->start ? p.end : sp->start) + p.off > reached)
            reached = (p.end < sp->start ? p.end : sp->start) + p.off;
        if (p.start <= SQLE_TZ_MIN)
            break;
        t = p.start - 1;
    }
    return reached;
}

/*
 * Walk the stretches of constant offset from after_ms on.  In each, a job
 * at fixed times first fires at the stretch's start if the change there
 * skipped one of its times, and after a backward change skips the local
 * times that were already shown (they fired then, the first time); then
 * the first match inside the stretch is the fire.
 */
int sqle_cron_next(const sqle_cron *c, int64_t after_ms, int64_t *next_ms)
{
    int64_t t0, end, t;
    int fixed;

    if (c == NULL || next_ms == NULL || after_ms >= SQLE_CRON_MAX_MS)
        return 0;
    t0 = sqle_floor_div(after_ms, 1000) + 1;
    if (t0 < MIN_S)
        t0 = MIN_S;
    end = t0 + SQLE_CRON_HORIZON_S;
    if (end > MAX_S + 1)
        end = MAX_S + 1;
    if (c->every_s != 0) {
        int64_t f = -sqle_floor_div(-t0, c->every_s) * c->every_s;
        if (f >= end)
            return 0;
        *next_ms = f * 1000;
        return 1;
    }
    fixed = fixed_times(c);
    for (t = t0; t < end;) {
        sqle_tz_span sp;
        int64_t stop, lo, hit;
        sqle_tz_span_at(c->tz, t, &sp);
        stop = sp.end < end ? sp.end : end;
        if (fixed && sp.start >= t && gap_fires(c, &sp)) {
            *next_ms = sp.start * 1000;
            return 1;
        }
        lo = t + sp.off;
        if (fixed) {
            int64_t reached = reached_before(c->tz, &sp);
            if (reached > lo)
                lo = reached;
        }
        hit = match_next(c, lo, stop + sp.off);
        if (hit != NONE_AFTER) {
            *next_ms = (hit - sp.off) * 1000;
            return 1;
        }
        t = stop;
    }
    return 0;
}

/* sqle_cron_next's walk backwards: inside a stretch first, then the fire
 * at its start that a skipped time makes. */
int sqle_cron_prev(const sqle_cron *c, int64_t at_ms, int64_t *prev_ms)
{
    int64_t t1, floor_s, t;
    int fixed;

    if (c == NULL || prev_ms == NULL || at_ms < SQLE_CRON_MIN_MS)
        return 0;
    t1 = sqle_floor_div(at_ms, 1000);
    if (t1 > MAX_S)
        t1 = MAX_S;
    floor_s = t1 - SQLE_CRON_HORIZON_S;
    if (floor_s < MIN_S)
        floor_s = MIN_S;
    if (c->every_s != 0) {
        int64_t f = sqle_floor_div(t1, c->every_s) * c->every_s;
        if (f < floor_s)
            return 0;
        *prev_ms = f * 1000;
        return 1;
    }
    fixed = fixed_times(c);
    for (t = t1; t >= floor_s;) {
        sqle_tz_span sp;
        int64_t from, lo, hit;
        sqle_tz_span_at(c->tz, t, &sp);
        from = sp.start > floor_s ? sp.start : floor_s;
        lo = from + sp.off;
        if (fixed) {
            int64_t reached = reached_before(c->tz, &sp);
            if (reached > lo)
                lo = reached;
        }
        hit = match_prev(c, t + sp.off, lo);
        if (hit != NONE_BEFORE) {
            *prev_ms = (hit - sp.off) * 1000;
            return 1;
        }
        if (fixed && sp.start >= floor_s && gap_fires(c, &sp)) {
            *prev_ms = sp.start * 1000;
            return 1;
        }
        if (sp.start <= floor_s)
            break;
        t = sp.start - 1;
    }
    return 0;
}

/* ---- the nominal period ----------------------------------------------- */

/*
 * The shortest gap between fires on the calendar.  Within a day the
 * fires are the product of the hour, minute and second sets, so the
 * shortest gap is between neighbours in one set with the finer fields at
 * their ends (e.g. minutes m1 < m2: (m2 - m1) * 60 - (last second - first
 * second)).  Across days it is the shortest gap between matching days,
 * less the day's span of fires: found by walking the matching days of 28
 * years from 2000 (enough for every pattern but the 29th of February on
 * one weekday, which gets 28 years), at most 400 of them, stopping at a
 * gap of one day.
 */
int64_t sqle_cron_period_ms(const sqle_cron *c)
{
    const uint64_t S = c->bits[F_SEC], M = c->bits[F_MIN], H = c->bits[F_HOUR];
    int64_t best = INT64_MAX, first_t, last_t, day_gap = -1, prev = -1, limit, from;
    int g, count = 0;
    sqle_cron days;

    if (c->every_s != 0)
        return c->every_s * 1000;
    if ((g = min_gap(S)) > 0)
        best = g;
    if ((g = min_gap(M)) > 0 && (int64_t)g * 60 - (prev_bit(S, 63) - next_bit(S, 0)) < best)
        best = (int64_t)g * 60 - (prev_bit(S, 63) - next_bit(S, 0));
    if ((g = min_gap(H)) > 0) {
        int64_t span = (int64_t)prev_bit(M, 63) * 60 + prev_bit(S, 63)
                       - ((int64_t)next_bit(M, 0) * 60 + next_bit(S, 0));
        if ((int64_t)g * 3600 - span < best)
            best = (int64_t)g * 3600 - span;
    }
    first_t = (int64_t)next_bit(H, 0) * 3600 + next_bit(M, 0) * 60 + next_bit(S, 0);
    last_t = (int64_t)prev_bit(H, 63) * 3600 + prev_bit(M, 63) * 60 + prev_bit(S, 63);

    days = *c;
    days.bits[F_SEC] = days.bits[F_MIN] = days.bits[F_HOUR] = 1;
    from = sqle_days_from_civil(2000, 1, 1) * 86400;
    limit = sqle_days_from_civil(2028, 1, 1) * 86400;
    while (count < 400 && day_gap != 1) {
        int64_t hit = match_next(&days, from, limit);
        if (hit == NONE_AFTER)
            break;
        if (prev >= 0 && (day_gap < 0 || (hit - prev) / 86400 < day_gap))
            day_gap = (hit - prev) / 86400;
        prev = hit;
        from = hit + 86400;
        count++;
    }
    if (day_gap < 0)
        day_gap = (limit - sqle_days_from_civil(2000, 1, 1) * 86400) / 86400;
    if (day_gap * 86400 - (last_t - first_t) < best)
        best = day_gap * 86400 - (last_t - first_t);
    return best * 1000;
}

/* ---- formatting --------------------------------------------------------- */

size_t sqle_cron_format_utc(int64_t ms, char *buf, size_t cap)
{
    int64_t secs = sqle_floor_div(ms, 1000), days = sqle_floor_div(secs, 86400), y;
    int sod = (int)(secs - days * 86400), frac = (int)(ms - secs * 1000), m, d, n;
    char tmp[64];

    if (buf == NULL || cap == 0)
        return 0;
    sqle_civil_from_days(days, &y, &m, &d);
    if (frac != 0)
        n = snprintf(tmp, sizeof tmp, "%s%04lld-%02d-%02dT%02d:%02d:%02d.%03dZ",
                     y < 0 ? "-" : y > 9999 ? "+" : "", (long long)(y < 0 ? -y : y), m, d,
                     sod / 3600, sod / 60 % 60, sod % 60, frac);
    else
        n = snprintf(tmp, sizeof tmp, "%s%04lld-%02d-%02dT%02d:%02d:%02dZ",
                     y < 0 ? "-" : y > 9999 ? "+" : "", (long long)(y < 0 ? -y : y), m, d,
                     sod / 3600, sod / 60 % 60, sod % 60);
    if (n < 0)
        n = 0;
    if ((size_t)n >= cap)
        n = (int)cap - 1;
    memcpy(buf, tmp, (size_t)n);
    buf[n] = '\0';
    return (size_t)n;
}
