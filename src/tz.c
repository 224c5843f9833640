/*
 * tz.c -- a reader of the tz database's TZif files (RFC 8536) and of the
 * POSIX TZ strings in their footers, for the cron module (see tz.h).
 *
 * A loaded zone keeps only what an offset lookup needs: the transitions
 * that change the offset (others, which change only an abbreviation or
 * the DST flag, are dropped, so every kept transition is a real gap or
 * repeat of local time), the offset before the first one, and the
 * footer's rule with the instant from which it governs, its changes
 * through 2200 worked out at load (a slim file's every year would
 * otherwise cost an evaluation of the rule per lookup).  All of it sits
 * in one allocation, immutable once built; the reference count is the
 * only thing that changes, under a lock of the zone's own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "platform.h"
#include "tz.h"

/* One end of daylight time in a footer: Jn (day 1..365, never Feb 29),
 * n (day 0..365, counting Feb 29) or Mm.w.d (weekday d of week w of month
 * m, w 5 the last), at `time` seconds of local time (-167..167 h). */
typedef struct tz_date {
    char kind; /* 'J', 'N' or 'M' */
    int n, m, w, d;
    int32_t time;
} tz_date;

typedef struct tz_rule {
    int32_t std_off, dst_off; /* seconds east of UTC */
    int has_dst;
    tz_date start, end;
} tz_rule;

struct sqle_tz {
    sqle_mutex lock; /* guards refs */
    long refs;
    int is_static;      /* UTC: never freed, no lock */
    int has_footer;     /* the rule governs from footer_from on */
    int64_t footer_from;
    int32_t off_first;  /* before at[0] (or always, with no transition) */
    tz_rule rule;
    size_t n;
    int64_t *at;        /* transition instants, ascending */
    int32_t *off;       /* the offset from at[i] on */
    /* The rule's changes from ex_lo to ex_hi worked out at load (see
     * expand_rule), ex_off0 the offset at ex_lo: looked up as the data
     * are, where evaluating the rule for each lookup would cost 20 times
     * more. */
    int64_t ex_lo, ex_hi;
    int32_t ex_off0;
    size_t ex_n;
    int64_t *ex_at;
    int32_t *ex_off;
    char name[SQLE_TZ_NAME_MAX + 1];
};

static sqle_tz utc_zone = {
    .is_static = 1,
    .name = "UTC",
};

/* ---- calendar ------------------------------------------------------ */

int64_t sqle_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int sqle_days_in_month(int64_t y, int m)
{
    static const unsigned char days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

/* H. Hinnant's days_from_civil and civil_from_days: exact over the whole
 * int64 range the zone answers for, with no table and no loop. */
int64_t sqle_days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void sqle_civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    int64_t era, doe, yoe, doy, mp;

    z += 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* ---- the footer's rule --------------------------------------------- */

/* The day (since the epoch) a footer date falls on in year y. */
static int64_t rule_day(int64_t y, const tz_date *dt)
{
    int64_t jan1 = sqle_days_from_civil(y, 1, 1), first, day;
    int wd;

    switch (dt->kind) {
    case 'J':
        return jan1 + dt->n - 1 + (is_leap(y) && dt->n >= 60);
    case 'N':
        return jan1 + dt->n;
    default:
        first = sqle_days_from_civil(y, dt->m, 1);
        wd = (int)(((first + 4) % 7 + 7) % 7); /* 1970-01-01 was a Thursday */
        day = first + (dt->d - wd + 7) % 7 + 7 * (dt->w - 1);
        while (day >= first + sqle_days_in_month(y, dt->m))
            day -= 7;
        return day;
    }
}

/* Daylight time's start and end in year y as UTC instants: the start is
 * written in standard time, the end in daylight time. */
static void rule_year(const tz_rule *r, int64_t y, int64_t *start, int64_t *end)
{
    *start = rule_day(y, &r->start) * 86400 + r->start.time - r->std_off;
    *end = rule_day(y, &r->end) * 86400 + r->end.time - r->dst_off;
}

typedef struct tz_change {
    int64_t at;
    int dst; /* daylight time from `at` on */
} tz_change;

#define RULE_WINDOW 10

/*
 * The rule's changes around year y: the starts and ends of daylight time
 * of years y-2 to y+2, in order of time, an end before a start at the
 * same instant (so that daylight time all year, whose end is the next
 * year's start, stays daylight time).  A year's start and end lie within
 * 8 days of that year (a rule's date is in its year, its time within
 * 167 h, offsets within 26 h), so for an instant t of year y (in standard
 * time) the last change at or before t and the first after it are always
 * among these ten.
 */
static int rule_window(const tz_rule *r, int64_t y, tz_change ch[RULE_WINDOW])
{
    int i, j, n;

    for (i = 0; i < RULE_WINDOW / 2; i++) {
        rule_year(r, y - 2 + i, &ch[2 * i].at, &ch[2 * i + 1].at);
        ch[2 * i].dst = 1;
        ch[2 * i + 1].dst = 0;
    }
    for (i = 1; i < RULE_WINDOW; i++) {
        tz_change c = ch[i];
        for (j = i; j > 0 && (ch[j - 1].at > c.at || (ch[j - 1].at == c.at && ch[j - 1].dst
                                                       && !c.dst));
             j--)
            ch[j] = ch[j - 1];
        ch[j] = c;
    }
    /* Changes at one instant are one change, to the state of the last. */
    for (i = 1, n = 1; i < RULE_WINDOW; i++) {
        if (ch[i].at == ch[n - 1].at)
            ch[n - 1].dst = ch[i].dst;
        else
            ch[n++] = ch[i];
    }
    return n;
}

static int64_t std_year(const tz_rule *r, int64_t t)
{
    int64_t y;
    int m, d;

    sqle_civil_from_days(sqle_floor_div(t + r->std_off, 86400), &y, &m, &d);
    return y;
}

/* The index of the last of n changes at or before t (0 if none: cannot
 * happen for the t of the window's year). */
static int window_at(const tz_change *ch, int n, int64_t t)
{
    int i, last = 0;

    for (i = 0; i < n; i++)
        if (ch[i].at <= t)
            last = i;
    return last;
}

/*
 * The rule's offset at t: daylight time or not as the last change at or
 * before t made it.  (glibc and Python decide by t's year alone, start
 * and end of that year; the two agree for every real zone, and differ
 * only where a rule's change crosses into the next year, as daylight
 * time all year does, which this reading gets right.)
 */
static int32_t rule_offset(const tz_rule *r, int64_t t)
{
    tz_change ch[RULE_WINDOW];
    int n;

    if (!r->has_dst)
        return r->std_off;
    n = rule_window(r, std_year(r, t), ch);
    return ch[window_at(ch, n, t)].dst ? r->dst_off : r->std_off;
}

/* Parsing a POSIX TZ string, as RFC 8536 3.3 allows it in a footer. */

static int tzs_name(const char **pp)
{
    const char *p = *pp;
    int n = 0;

    if (*p == '<') {
        for (p++; *p != '>'; p++, n++) {
            if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')
                  || *p == '+' || *p == '-'))
                return -1;
        }
        p++;
    } else {
        for (; (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'); p++)
            n++;
    }
    if (n < 3)
        return -1;
    *pp = p;
    return 0;
}

static int tzs_num(const char **pp, int max_digits, int *v)
{
    const char *p = *pp;
    int n = 0, x = 0;

    while (*p >= '0' && *p <= '9' && n < max_digits) {
        x = x * 10 + (*p++ - '0');
        n++;
    }
    if (n == 0 || (*p >= '0' && *p <= '9'))
        return -1;
    *pp = p;
    *v = x;
    return 0;
}

/* [+-]hh[:mm[:ss]] with hh <= max_h, into signed seconds. */
static int tzs_time(const char **pp, int max_h, int32_t *secs)
{
    const char *p = *pp;
    int sign = 1, h, mi = 0, s = 0;

    if (*p == '+' || *p == '-')
        sign = *p++ == '-' ? -1 : 1;
    if (tzs_num(&p, 3, &h) != 0 || h > max_h)
        return -1;
    if (*p == ':') {
        p++;
        if (tzs_num(&p, 2, &mi) != 0 || mi > 59)
            return -1;
        if (*p == ':') {
            p++;
            if (tzs_num(&p, 2, &s) != 0 || s > 59)
                return -1;
        }
    }
    *pp = p;
    *secs = sign * (h * 3600 + mi * 60 + s);
    return 0;
}

static int tzs_date(const char **pp, tz_date *dt)
{
    const char *p = *pp;

    memset(dt, 0, sizeof *dt);
    if (*p == 'J') {
        p++;
        dt->kind = 'J';
        if (tzs_num(&p, 3, &dt->n) != 0 || dt->n < 1 || dt->n > 365)
            return -1;
    } else if (*p == 'M') {
        p++;
        dt->kind = 'M';
        if (tzs_num(&p, 2, &dt->m) != 0 || dt->m < 1 || dt->m > 12 || *p++ != '.'
            || tzs_num(&p, 1, &dt->w) != 0 || dt->w < 1 || dt->w > 5 || *p++ != '.'
            || tzs_num(&p, 1, &dt->d) != 0 || dt->d > 6)
            return -1;
    } else {
        dt->kind = 'N';
        if (tzs_num(&p, 3, &dt->n) != 0 || dt->n > 365)
            return -1;
    }
    dt->time = 2 * 3600;
    if (*p == '/') {
        p++;
        if (tzs_time(&p, 167, &dt->time) != 0)
            return -1;
    }
    *pp = p;
    return 0;
}

/* The footer's TZ string (NUL-terminated) into r; -1 if it is not one.
 * Daylight time without a rule (POSIX leaves its dates to the
 * implementation) is refused: zic always writes the rule. */
static int parse_rule(const char *s, tz_rule *r)
{
    const char *p = s;
    int32_t v;

    memset(r, 0, sizeof *r);
    if (tzs_name(&p) != 0 || tzs_time(&p, 24, &v) != 0)
        return -1;
    r->std_off = -v;
    if (*p == '\0')
        return 0;
    if (tzs_name(&p) != 0)
        return -1;
    r->dst_off = r->std_off + 3600;
    if (*p != ',' && *p != '\0') {
        if (tzs_time(&p, 24, &v) != 0)
            return -1;
        r->dst_off = -v;
    }
    if (*p++ != ',' || tzs_date(&p, &r->start) != 0 || *p++ != ','
        || tzs_date(&p, &r->end) != 0 || *p != '\0')
        return -1;
    /* Daylight time at the offset of standard time changes nothing. */
    r->has_dst = r->dst_off != r->std_off;
    return 0;
}

/* ---- the TZif file ------------------------------------------------- */

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

typedef struct tzif_block {
    uint32_t isut, isstd, leap, timecnt, typecnt, charcnt;
    const unsigned char *times, *idx, *types, *chars, *isstd_v, *isut_v;
    uint64_t size; /* of the data block after the header */
} tzif_block;

/* The header at p (len bytes left) and the layout of the data block
 * after it, for transition times of tsize bytes. */
static int read_header(const unsigned char *p, size_t len, int tsize, tzif_block *b,
                       const char **why)
{
    uint64_t off;

    if (len < 44 || memcmp(p, "TZif", 4) != 0) {
        *why = "is not a TZif file (no TZif header)";
        return -1;
    }
    b->isut = be32(p + 20);
    b->isstd = be32(p + 24);
    b->leap = be32(p + 28);
    b->timecnt = be32(p + 32);
    b->typecnt = be32(p + 36);
    b->charcnt = be32(p + 40);
    if (b->typecnt == 0 || b->typecnt > 256 || (b->isut != 0 && b->isut != b->typecnt)
        || (b->isstd != 0 && b->isstd != b->typecnt)) {
        *why = "has inconsistent counts in its header";
        return -1;
    }
    b->size = (uint64_t)b->timecnt * (uint64_t)(tsize + 1) + (uint64_t)b->typecnt * 6
              + b->charcnt + (uint64_t)b->leap * (uint64_t)(tsize + 4) + b->isstd + b->isut;
    if (b->size > len - 44) {
        *why = "is truncated";
        return -1;
    }
    p += 44;
    off = 0;
    b->times = p + off;
    off += (uint64_t)b->timecnt * (uint64_t)tsize;
    b->idx = p + off;
    off += b->timecnt;
    b->types = p + off;
    off += (uint64_t)b->typecnt * 6;
    b->chars = p + off;
    off += b->charcnt;
    off += (uint64_t)b->leap * (uint64_t)(tsize + 4);
    b->isstd_v = p + off;
    off += b->isstd;
    b->isut_v = p + off;
    return 0;
}

/* The checks RFC 8536 makes of the data block that this reader relies on,
 * or that tell a corrupt file from a real one. */
static int check_block(const tzif_block *b, int tsize, const char **why)
{
    uint32_t i;

    if (b->leap != 0) {
        *why = "has leap seconds (a right/ zone, which counts seconds POSIX time does not): "
               "use the zone of the same name outside right/";
        return -1;
    }
    for (i = 0; i < b->typecnt; i++) {
        const unsigned char *t = b->types + 6 * i;
        int32_t utoff = (int32_t)be32(t);
        if (utoff < -89999 || utoff > 93599 || t[4] > 1 || t[5] >= b->charcnt) {
            *why = "has a malformed local time type";
            return -1;
        }
        if ((b->isstd && b->isstd_v[i] > 1) || (b->isut && b->isut_v[i] > 1)) {
            *why = "has a malformed standard/UT indicator";
            return -1;
        }
    }
    for (i = 0; i < b->timecnt; i++) {
        if (b->idx[i] >= b->typecnt) {
            *why = "has a transition to a local time type it does not have";
            return -1;
        }
        if (i > 0) {
            int64_t prev = tsize == 8 ? be64(b->times + 8 * (i - 1))
                                      : (int32_t)be32(b->times + 4 * (i - 1));
            int64_t cur = tsize == 8 ? be64(b->times + 8 * i) : (int32_t)be32(b->times + 4 * i);
            if (cur <= prev) {
                *why = "has transitions out of order";
                return -1;
            }
        }
    }
    return 0;
}

static int32_t type_off(const tzif_block *b, unsigned idx)
{
    return (int32_t)be32(b->types + 6 * idx);
}

/* The instants from which the footer's rule is worked out at load, and
 * to which: from its first year or 1900, through 2200. */
#define EXPAND_FIRST (-2208988800LL) /* 1900-01-01T00:00:00Z */
#define EXPAND_END 7289654400LL      /* 2201-01-01T00:00:00Z */

static int change_cmp(const void *a, const void *b)
{
    const tz_change *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->dst - y->dst; /* an end before a start, as rule_window */
}

/*
 * Work out the rule's real changes in (lo, hi) once, as zic -b fat writes
 * a zone's changes through 2037 into its file: all the starts and ends of
 * the years around, in order of time, each real where it changes what the
 * one before left -- the same reading as rule_offset's, over all the
 * years at once.  Into at/off (room for `cap`) when not NULL; returns how
 * many there are, or -1 without memory.
 */
static long expand_rule(const tz_rule *r, int64_t lo, int64_t hi, int64_t *at, int32_t *off,
                        size_t cap)
{
    int64_t y0 = std_year(r, lo) - 2, y1 = std_year(r, hi) + 2, y;
    size_t count = (size_t)(y1 - y0 + 1) * 2, i, n = 0;
    tz_change *ch = malloc(count * sizeof *ch);
    long real = 0;
    int dst;

    if (ch == NULL)
        return -1;
    for (y = y0, i = 0; y <= y1; y++, i += 2) {
        rule_year(r, y, &ch[i].at, &ch[i + 1].at);
        ch[i].dst = 1;
        ch[i + 1].dst = 0;
    }
    qsort(ch, count, sizeof *ch, change_cmp);
    for (i = 1, n = 1; i < count; i++) {
        if (ch[i].at == ch[n - 1].at)
            ch[n - 1].dst = ch[i].dst;
        else
            ch[n++] = ch[i];
    }
    dst = rule_offset(r, ch[0].at - 1) == r->dst_off;
    for (i = 0; i < n; i++) {
        if (ch[i].dst != dst && ch[i].at > lo && ch[i].at < hi) {
            if (at != NULL && (size_t)real < cap) {
                at[real] = ch[i].at;
                off[real] = ch[i].dst ? r->dst_off : r->std_off;
            }
            real++;
        }
        dst = ch[i].dst;
    }
    free(ch);
    return real;
}

int sqle_tz_load(const char *name, const unsigned char *data, size_t len, sqle_tz **out,
                 sqlease_error *err)
{
    tzif_block b;
    tz_rule rule;
    const char *why = NULL;
    char footer[256];
    int tsize = 4, has_footer = 0;
    size_t n = 0, k;
    uint32_t i;
    int32_t off_first, prev;
    int64_t footer_from = SQLE_TZ_MIN, ex_lo;
    long ex = 0;
    sqle_tz *z;

    sqle_err_clear(err);
    if (out == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "time zone: NULL argument");
    *out = NULL;
    if (name == NULL)
        name = "";
    if (data == NULL)
        len = 0;
    memset(&rule, 0, sizeof rule);
    if (read_header(data, len, 4, &b, &why) != 0)
        goto bad;
    if (data[4] != '\0') {
        /* Version 2 and later repeat the data with 64-bit times after the
         * version 1 block, which this reader skips, and end with the
         * footer. */
        const unsigned char *p2 = data + 44 + b.size;
        size_t left = len - 44 - (size_t)b.size, flen;
        const unsigned char *f, *nl;

        if (data[4] < '2' || data[4] > '9') {
            why = "has an unknown version";
            goto bad;
        }
        tsize = 8;
        if (read_header(p2, left, 8, &b, &why) != 0)
            goto bad;
        f = p2 + 44 + b.size;
        left -= 44 + (size_t)b.size;
        if (left < 2 || f[0] != '\n' || (nl = memchr(f + 1, '\n', left - 1)) == NULL) {
            why = "has no footer (a version 2+ file ends with a TZ string between newlines)";
            goto bad;
        }
        flen = (size_t)(nl - (f + 1));
        if (flen >= sizeof footer) {
            why = "has a footer too long to be a TZ string";
            goto bad;
        }
        memcpy(footer, f + 1, flen);
        footer[flen] = '\0';
        if (strlen(footer) != flen) {
            why = "has a NUL in its footer";
            goto bad;
        }
        if (flen > 0) {
            if (parse_rule(footer, &rule) != 0)
                return sqle_fail(err, SQLEASE_EINVAL,
                                 "time zone '%.128s': its file's footer '%.64s' is not a POSIX "
                                 "TZ string this reader knows",
                                 name, footer);
            has_footer = 1;
        }
    }
    if (check_block(&b, tsize, &why) != 0)
        goto bad;

    /* Keep the transitions that change the offset, within the range the
     * zone answers for; one before that range only sets the offset the
     * range starts with. */
    off_first = type_off(&b, 0);
    if (b.timecnt == 0 && has_footer)
        off_first = rule.std_off;
    prev = off_first;
    for (i = 0; i < b.timecnt; i++) {
        int64_t t = tsize == 8 ? be64(b.times + 8 * i) : (int32_t)be32(b.times + 4 * i);
        int32_t o = type_off(&b, b.idx[i]);
        if (t < SQLE_TZ_MIN)
            off_first = o;
        else if (t <= SQLE_TZ_MAX && o != prev)
            n++;
        prev = o;
    }
    if (b.timecnt > 0)
        footer_from = tsize == 8 ? be64(b.times + 8 * (b.timecnt - 1))
                                 : (int32_t)be32(b.times + 4 * (b.timecnt - 1));
    ex_lo = footer_from > EXPAND_FIRST ? footer_from : EXPAND_FIRST;
    if (has_footer && rule.has_dst && ex_lo < EXPAND_END) {
        ex = expand_rule(&rule, ex_lo, EXPAND_END, NULL, NULL, 0);
        if (ex < 0)
            return sqle_fail(err, SQLEASE_ENOMEM, "time zone '%.128s': out of memory", name);
    }
    z = calloc(1, sizeof *z + (n + (size_t)ex) * (sizeof(int64_t) + sizeof(int32_t)));
    if (z == NULL)
        return sqle_fail(err, SQLEASE_ENOMEM, "time zone '%.128s': out of memory", name);
    if (sqle_mutex_init(&z->lock) != 0) {
        free(z);
        return sqle_fail(err, SQLEASE_EPLATFORM, "time zone '%.128s': cannot make a lock", name);
    }
    z->refs = 1;
    z->at = (int64_t *)(z + 1);
    z->ex_at = z->at + n;
    z->off = (int32_t *)(z->ex_at + ex);
    z->ex_off = z->off + n;
    z->n = n;
    z->off_first = off_first;
    z->has_footer = has_footer;
    z->footer_from = footer_from;
    z->rule = rule;
    prev = off_first;
    for (i = 0, k = 0; i < b.timecnt; i++) {
        int64_t t = tsize == 8 ? be64(b.times + 8 * i) : (int32_t)be32(b.times + 4 * i);
        int32_t o = type_off(&b, b.idx[i]);
        if (t >= SQLE_TZ_MIN && t <= SQLE_TZ_MAX && o != prev) {
            z->at[k] = t;
            z->off[k] = o;
            k++;
        }
        prev = o;
    }
    z->ex_lo = z->ex_hi = SQLE_TZ_MIN;
    if (ex > 0 || (has_footer && rule.has_dst && ex_lo < EXPAND_END)) {
        if (expand_rule(&rule, ex_lo, EXPAND_END, z->ex_at, z->ex_off, (size_t)ex) != ex) {
            sqle_mutex_destroy(&z->lock);
            free(z);
            return sqle_fail(err, SQLEASE_ENOMEM, "time zone '%.128s': out of memory", name);
        }
        z->ex_lo = ex_lo;
        z->ex_hi = EXPAND_END;
        z->ex_n = (size_t)ex;
        z->ex_off0 = rule_offset(&rule, ex_lo);
    }
    snprintf(z->name, sizeof z->name, "%s", name);
    *out = z;
    return SQLEASE_OK;

bad:
    return sqle_fail(err, SQLEASE_EINVAL, "time zone '%.128s': its file %s", name, why);
}

/* ---- names and files ----------------------------------------------- */

int sqle_tz_check_name(const char *name, sqlease_error *err)
{
    size_t n, i, part = 0;

    sqle_err_clear(err);
    if (name == NULL || name[0] == '\0')
        return sqle_fail(err, SQLEASE_EINVAL, "time zone: empty name");
    n = strlen(name);
    if (n > SQLE_TZ_NAME_MAX)
        return sqle_fail(err, SQLEASE_EINVAL, "time zone '%.40s...' is longer than %d bytes",
                         name, SQLE_TZ_NAME_MAX);
    if (name[0] == '/')
        return sqle_fail(err, SQLEASE_EINVAL,
                         "time zone '%s' is an absolute path: give a name such as "
                         "Europe/Paris (the directory is $TZDIR's)",
                         name);
    for (i = 0; i <= n; i++) {
        char c = name[i];
        if (c == '/' || c == '\0') {
            size_t len = i - part;
            if (len == 0 || (len == 1 && name[part] == '.')
                || (len == 2 && name[part] == '.' && name[part + 1] == '.'))
                return sqle_fail(err, SQLEASE_EINVAL,
                                 "time zone '%s' has an empty, '.' or '..' part: give a name "
                                 "such as Europe/Paris",
                                 name);
            part = i + 1;
            continue;
        }
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
              || c == '_' || c == '+' || c == '-'))
            return sqle_fail(err, SQLEASE_EINVAL,
                             "time zone '%s' has a character a zone name does not "
                             "(only letters, digits, '_', '+', '-' and '/')",
                             name);
    }
    return SQLEASE_OK;
}

static int is_utc_name(const char *name)
{
    return name == NULL || name[0] == '\0' || strcmp(name, "UTC") == 0
           || strcmp(name, "Etc/UTC") == 0;
}

int sqle_tz_open(const char *name, sqle_tz **out, sqlease_error *err)
{
    const char *dir;
    char path[4096 + SQLE_TZ_NAME_MAX + 2];
    unsigned char *data = NULL;
    size_t len = 0;
    int rc;

    sqle_err_clear(err);
    if (out == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "time zone: NULL argument");
    *out = NULL;
    if (is_utc_name(name)) {
        *out = &utc_zone;
        return SQLEASE_OK;
    }
    rc = sqle_tz_check_name(name, err);
    if (rc != SQLEASE_OK)
        return rc;
    dir = sqle_getenv("TZDIR");
    if (dir == NULL || dir[0] == '\0')
        dir = sqle_tzdir_default();
    if (dir == NULL)
        return sqle_fail(err, SQLEASE_EINVAL,
                         "time zone '%s': this system has no tz database; set TZDIR to a "
                         "directory of TZif files (zoneinfo), or use UTC",
                         name);
    if (strlen(dir) > 4096)
        return sqle_fail(err, SQLEASE_EINVAL, "time zone '%s': TZDIR is too long", name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    rc = sqle_file_read(path, SQLE_TZ_FILE_MAX, &data, &len);
    if (rc == -1)
        return sqle_fail(err, SQLEASE_EINVAL, "unknown time zone '%s' (no file %.300s)", name,
                         path);
    if (rc != 0)
        return sqle_fail(err, SQLEASE_EINVAL,
                         "time zone '%s': cannot read %.300s (not a readable file of at most "
                         "1 MB)",
                         name, path);
    rc = sqle_tz_load(name, data, len, out, err);
    free(data);
    return rc;
}

sqle_tz *sqle_tz_ref(sqle_tz *z)
{
    if (z != NULL && !z->is_static) {
        sqle_mutex_lock(&z->lock);
        z->refs++;
        sqle_mutex_unlock(&z->lock);
    }
    return z;
}

void sqle_tz_release(sqle_tz *z)
{
    long left;

    if (z == NULL || z->is_static)
        return;
    sqle_mutex_lock(&z->lock);
    left = --z->refs;
    sqle_mutex_unlock(&z->lock);
    if (left == 0) {
        sqle_mutex_destroy(&z->lock);
        free(z);
    }
}

const char *sqle_tz_name(const sqle_tz *z)
{
    return z != NULL ? z->name : "UTC";
}

int sqle_tz_is_utc(const sqle_tz *z)
{
    return z == NULL || z == &utc_zone;
}

/* ---- lookups ------------------------------------------------------- */

static int64_t clamp_t(int64_t t)
{
    return t < SQLE_TZ_MIN ? SQLE_TZ_MIN : t > SQLE_TZ_MAX ? SQLE_TZ_MAX : t;
}

/* The index of the last of n instants at or before t, or -1. */
static long last_at_or_before(const int64_t *at, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (at[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (long)lo - 1;
}

static int in_expanded(const sqle_tz *z, int64_t t)
{
    return t >= z->ex_lo && t < z->ex_hi;
}

static int in_footer(const sqle_tz *z, int64_t t)
{
    return z->has_footer && t >= z->footer_from;
}

int32_t sqle_tz_offset(const sqle_tz *z, int64_t t)
{
    long i;

    if (z == NULL || z == &utc_zone)
        return 0;
    t = clamp_t(t);
    if (in_footer(z, t)) {
        if (!in_expanded(z, t))
            return rule_offset(&z->rule, t);
        i = last_at_or_before(z->ex_at, z->ex_n, t);
        return i < 0 ? z->ex_off0 : z->ex_off[i];
    }
    i = last_at_or_before(z->at, z->n, t);
    return i < 0 ? z->off_first : z->off[i];
}

/*
 * In the footer's time, a stretch runs from the last real change (one
 * that changes the offset) at or before t to the first after it, among
 * the rule's changes around t's year; where those ten hold no real change
 * on one side of t, the stretch is cut at the first or the last of them
 * (a seam: the offset is the same on both sides, a fact the caller sees
 * as off_before == off).
 */
static void footer_span(const sqle_tz *z, int64_t t, sqle_tz_span *sp)
{
    const tz_rule *r = &z->rule;
    tz_change ch[RULE_WINDOW];
    int64_t lo, hi;
    int i, n, last;

    sp->off = rule_offset(r, t);
    if (!r->has_dst) {
        lo = SQLE_TZ_MIN;
        hi = SQLE_TZ_MAX;
    } else {
        n = rule_window(r, std_year(r, t), ch);
        last = window_at(ch, n, t);
        lo = ch[0].at;
        for (i = last; i > 0; i--) {
            if (ch[i].dst != ch[i - 1].dst) {
                lo = ch[i].at;
                break;
            }
        }
        hi = ch[n - 1].at;
        for (i = last + 1; i < n; i++) {
            if (ch[i].dst != ch[last].dst) {
                hi = ch[i].at;
                break;
            }
        }
        if (hi <= t)
            hi = t + 1;
    }
    /* The worked-out years are a region of their own. */
    if (t >= z->ex_hi && lo < z->ex_hi && z->ex_hi > z->ex_lo)
        lo = z->ex_hi;
    if (t < z->ex_lo && hi > z->ex_lo)
        hi = z->ex_lo;
    sp->start = lo > z->footer_from ? lo : z->footer_from;
    sp->end = hi;
}

void sqle_tz_span_at(const sqle_tz *z, int64_t t, sqle_tz_span *sp)
{
    long i;

    if (z == NULL || z == &utc_zone) {
        sp->start = SQLE_TZ_MIN;
        sp->end = SQLE_TZ_MAX;
        sp->off = sp->off_before = 0;
        return;
    }
    t = clamp_t(t);
    if (in_footer(z, t) && in_expanded(z, t)) {
        i = last_at_or_before(z->ex_at, z->ex_n, t);
        sp->start = i < 0 ? z->ex_lo : z->ex_at[i];
        sp->off = i < 0 ? z->ex_off0 : z->ex_off[i];
        sp->end = (size_t)(i + 1) < z->ex_n ? z->ex_at[i + 1] : z->ex_hi;
    } else if (in_footer(z, t)) {
        footer_span(z, t, sp);
    } else {
        i = last_at_or_before(z->at, z->n, t);
        sp->start = i < 0 ? SQLE_TZ_MIN : z->at[i];
        sp->off = i < 0 ? z->off_first : z->off[i];
        sp->end = (size_t)(i + 1) < z->n ? z->at[i + 1] : SQLE_TZ_MAX;
        if (z->has_footer && z->footer_from > t && z->footer_from < sp->end)
            sp->end = z->footer_from;
    }
    if (sp->start < SQLE_TZ_MIN)
        sp->start = SQLE_TZ_MIN;
    if (sp->end > SQLE_TZ_MAX)
        sp->end = SQLE_TZ_MAX;
    sp->off_before = sp->start > SQLE_TZ_MIN ? sqle_tz_offset(z, sp->start - 1) : sp->off;
}
