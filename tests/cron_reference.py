#!/usr/bin/env python3
"""The reference table of cron fire times that tests/test_cronexpr.c checks
src/cronexpr.c against: tests/data/cron_reference.txt.

Written apart from the C module, on purpose, and as plainly as possible:
the expression is read by a parser of its own, and the fires are found by
brute force -- every UTC second is converted to local time by Python's
zoneinfo (its own reader of the same TZif files) and tested against the
fields, with the rules of src/cronexpr.h stated here in their simplest
form.  The scan skips only what cannot hold a fire (a UTC day none of whose
local dates match, a minute whose local hour and minute do not, with no
change of offset in it), never by the module's arithmetic.

The rules, per UTC second t with local time L (zoneinfo's, fold included):
  - @every P: t is a multiple of P.
  - any other job: L matches the fields (day fields: both must match if
    either starts with '*' or '?', else either).
  - a job at fixed times (minute and hour fields not starting with '*')
    fires at t when L matches and is its first occurrence (fold == 0), or
    when the offset grows at t (a gap) and some skipped local time
    [L(t-1) + 1 s, L(t)) matches.

Regenerate (after a change to the rules, the cases, or the tz database's
rules for the future: the zones' past is stable) with

    python3 tests/cron_reference.py > tests/data/cron_reference.txt

Python 3.9+ standard library only; the zones come from the system's tz
database (/usr/share/zoneinfo), as the C module's do.
"""

import datetime
import re
import sys
import zoneinfo

UTC = datetime.timezone.utc
HORIZON = 41 * 366 * 86400

# ---------------------------------------------------------------- parsing

FIELDS = [  # name, lo, hi, what '*' covers up to
    ('second', 0, 59, 59),
    ('minute', 0, 59, 59),
    ('hour', 0, 23, 23),
    ('day of month', 1, 31, 31),
    ('month', 1, 12, 12),
    ('day of week', 0, 7, 6),
]
MONTHS = 'JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC'.split()
DAYS = 'SUN MON TUE WED THU FRI SAT'.split()
MACROS = {
    '@yearly': '0 0 1 1 *', '@annually': '0 0 1 1 *', '@monthly': '0 0 1 * *',
    '@weekly': '0 0 * * 0', '@daily': '0 0 * * *', '@midnight': '0 0 * * *',
    '@hourly': '0 * * * *',
}
UNITS = {'ms': 1, 's': 1000, 'm': 60000, 'h': 3600000}


class Expr:
    def __init__(self):
        self.sets = []
        self.star = []
        self.every = None

    @property
    def fixed(self):
        return not self.star[1] and not self.star[2]


def value(text, f):
    if text.isdigit():
        v = int(text)
    elif f == 4 and text.upper() in MONTHS:
        v = MONTHS.index(text.upper()) + 1
    elif f == 5 and text.upper() in DAYS:
        v = DAYS.index(text.upper())
    else:
        raise ValueError('bad value %r' % text)
    if not FIELDS[f][1] <= v <= FIELDS[f][2]:
        raise ValueError('%d out of range' % v)
    return v


def field(text, f):
    _, lo, hi, star_hi = FIELDS[f]
    out = set()
    for elem in text.split(','):
        base, _, step = elem.partition('/')
        step = int(step) if step else 1
        if base in ('*', '?'):
            a, b = lo, star_hi
        elif '-' in base:
            a, b = (value(x, f) for x in base.split('-'))
        else:
            a = value(base, f)
            b = max(a, star_hi) if step != 1 or '/' in elem else a
        out.update(range(a, b + 1, step))
    if f == 5 and 7 in out:
        out.discard(7)
        out.add(0)
    return out


def parse(text):
    text = text.strip()
    if text.startswith('@'):
        words = text.split()
        if words[0].lower() == '@every':
            e = Expr()
            ms = sum(int(n) * UNITS[u] for n, u in re.findall(r'(\d+)(ms|s|m|h)', words[1]))
            assert ms % 1000 == 0 and ms >= 1000
            e.every = ms // 1000
            return e
        text = MACROS[words[0].lower()]
    parts = text.split()
    if len(parts) == 5:
        parts = ['0'] + parts
    e = Expr()
    for f, p in enumerate(parts):
        e.sets.append(field(p, f))
        e.star.append(p[0] in '*?')
    return e


# ---------------------------------------------------------------- matching

def cron_dow(d):
    return (d.weekday() + 1) % 7  # Python: Monday 0; cron: Sunday 0


def date_matches(e, d):
    if d.month not in e.sets[4]:
        return False
    by_dom = d.day in e.sets[3]
    by_dow = cron_dow(d) in e.sets[5]
    if e.star[3] or e.star[5]:
        return by_dom and by_dow
    return by_dom or by_dow


def wall_matches(e, w):
    return (w.second in e.sets[0] and w.minute in e.sets[1] and w.hour in e.sets[2]
            and date_matches(e, w))


class Zone:
    def __init__(self, name):
        self.name = name
        self.tz = UTC if name == 'UTC' else zoneinfo.ZoneInfo(name)

    def local(self, t):
        return datetime.datetime.fromtimestamp(t, self.tz)

    def offset(self, t):
        return int(self.local(t).utcoffset().total_seconds())


def fires(e, z, t):
    if e.every is not None:
        return t % e.every == 0
    L = z.local(t)
    w = L.replace(tzinfo=None)
    if not e.fixed:
        return wall_matches(e, w)
    if wall_matches(e, w) and L.fold == 0:
        return True
    before, now = z.offset(t - 1), int(L.utcoffset().total_seconds())
    if now > before:
        start = (z.local(t - 1) + datetime.timedelta(seconds=1)).replace(tzinfo=None)
        for k in range(now - before):
            if wall_matches(e, start + datetime.timedelta(seconds=k)):
                return True
    return False


def day_candidate(e, z, day_start):
    """Whether the UTC day may hold a fire: one of the local dates around
    it (two days either side, more than any offset or gap) matches."""
    if e.every is not None:
        return True
    d = z.local(day_start - 2 * 86400).date()
    last = z.local(day_start + 3 * 86400).date()
    while d <= last:
        if date_matches(e, d):
            return True
        d += datetime.timedelta(days=1)
    return False


def minute_candidate(e, z, m):
    if e.every is not None:
        return (m + 59) // e.every * e.every >= m
    a, b = z.local(m), z.local(m + 59)
    if a.utcoffset() != b.utcoffset() or z.offset(m - 1) != z.offset(m):
        return True
    for w in (a, b):
        if w.hour in e.sets[2] and w.minute in e.sets[1] and date_matches(e, w):
            return True
    return False


def scan_next(e, z, after_ms):
    t = after_ms // 1000 + 1
    limit = t + HORIZON
    while t < limit:
        day = t - t % 86400
        if not day_candidate(e, z, day):
            t = day + 86400
            continue
        m = t - t % 60
        if not minute_candidate(e, z, m):
            t = m + 60
            continue
        for s in range(t, m + 60):
            if fires(e, z, s):
                return s
        t = m + 60
    return None


def scan_prev(e, z, at_ms):
    t = at_ms // 1000
    floor = t - HORIZON
    while t >= floor:
        day = t - t % 86400
        if not day_candidate(e, z, day):
            t = day - 1
            continue
        m = t - t % 60
        if not minute_candidate(e, z, m):
            t = m - 1
            continue
        for s in range(t, m - 1, -1):
            if fires(e, z, s):
                return s
        t = m - 1
    return None


# ---------------------------------------------------------------- the cases

def ms(iso):
    """Epoch milliseconds of an ISO 8601 UTC instant, 2024-03-10T06:59:00Z
    (a fraction allowed)."""
    d = datetime.datetime.fromisoformat(iso.replace('Z', '+00:00'))
    return int(round(d.timestamp() * 1000))


# Instants around each zone's changes of offset: the UTC instant of the
# change and its neighbours.  Past changes (stable in the tz database) and
# a few decades ahead (read from the footer's rule in slim files, and
# past 2037 in fat ones).
CHANGES = {
    'America/New_York': ['2024-03-10T07:00:00Z', '2024-11-03T06:00:00Z',
                         '2041-03-10T07:00:00Z', '2041-11-03T06:00:00Z'],
    'Europe/London': ['2024-03-31T01:00:00Z', '2024-10-27T01:00:00Z',
                      '2052-03-31T01:00:00Z', '2052-10-27T01:00:00Z'],
    'Australia/Lord_Howe': ['2024-04-06T15:00:00Z', '2024-10-05T15:30:00Z',
                            '2045-04-01T15:00:00Z', '2045-09-30T15:30:00Z'],
    'Australia/Sydney': ['2024-04-06T16:00:00Z', '2024-10-05T16:00:00Z',
                         '2046-03-31T16:00:00Z', '2046-10-06T16:00:00Z'],
    'Europe/Dublin': ['2023-03-26T01:00:00Z', '2023-10-29T01:00:00Z',
                      '2043-03-29T01:00:00Z', '2043-10-25T01:00:00Z'],
    'America/Santiago': ['2024-04-07T03:00:00Z', '2024-09-08T04:00:00Z',
                         '2044-04-03T03:00:00Z', '2044-09-04T04:00:00Z'],
}
# From three hours before a change (the search crosses it), from the
# second before it, and from half an hour after it (inside a repeated
# hour, after a skipped one).  tests/test_cronexpr.c checks on every row
# that prev(next) is next, which covers the instant of the change itself.
NEAR = [-3 * 3600, -1, 1800]

DST_EXPRS = [
    # at fixed times
    '30 2 * * *', '0 2 * * *', '30 1 * * *', '0,30 1,2 * * *', '59 1 * * *', '0 3 * * *',
    '0 0 * * *', '0 30 2 * * *', '*/20 30 1 * * *',
    # at the times that occur: * in the minute or the hour field
    '*/15 * * * *', '* 2 * * *', '*/30 1 * * *', '@hourly', '15,45 * 1 * * *',
    # zone-free
    '@every 45m',
]

GENERAL = [
    # names, ranges, lists, steps
    '0 9 * JAN,JUL MON', '0 9 1 jan-mar *', '0 0 * * sat,sun', '0 0 1 Dec *',
    '0 12 * * MON-FRI', '5-50/15 * * * *', '0 8-18/3 * * *', '0 0 1-31/10 * *',
    '0 0 5/10 * *', '10/20 * * * *', '0 0 * */3 *', '0 0 * * 1/2', '0 0 * * 5-7',
    '23 4 * * 7', '0 6 * * 0,7', '*/2 3 4 5 *', '0 0 15 * TUE',
    # day of month / day of week: either, or both when one starts with '*'
    '0 0 13 * FRI', '0 0 1,15 * MON', '0 0 */2 * MON', '0 0 ? * SUN', '0 0 1 * ?',
    '0 0 31 * *', '0 0 30 */2 *',
    # leap years, and the longest waits (the 29th of February on a Sunday)
    '0 0 29 2 *', '0 12 29 FEB *', '0 0 28-29 2 *', '0 0 29 2 MON', '0 0 */28 2 MON',
    '0 0 29 2 */7',
    # six fields
    '30 * * * * *', '*/5 * * * * *', '0 0 0 1 1 *', '59 59 23 31 12 *', '15-20 10 * * * *',
    # macros
    '@yearly', '@annually', '@monthly', '@weekly', '@midnight', '@daily',
    '@every 5s', '@every 13s', '@every 7m', '@every 90m', '@every 24h', '@every 1h1m1s',
]
# Around a leap day, a year's end, an instant between seconds, the epoch
# and before it, the end of 32-bit time, a century year that is not leap.
GENERAL_AT = {
    'UTC': ['2024-02-28T23:59:59.999Z', '2023-12-31T23:30:00Z', '2025-07-15T12:34:56.789Z',
            '1969-12-31T23:59:59.500Z', '2038-01-19T03:14:08Z', '2100-02-27T00:00:00Z'],
    'America/New_York': ['2024-02-29T04:59:59Z', '2031-12-31T23:30:00Z'],
    'Pacific/Chatham': ['2024-06-30T11:00:00Z'],
    'Asia/Kolkata': ['2024-12-31T18:29:59Z'],
}


def cases():
    """(expression, zone, instant, rows more: 1 from the fire found, 2 also
    from 999 ms after it)."""
    for zone, changes in CHANGES.items():
        for expr in DST_EXPRS:
            for c in changes:
                for d in NEAR:
                    yield expr, zone, ms(c) + d * 1000, 0
    for zone, instants in GENERAL_AT.items():
        for expr in GENERAL:
            for i, at in enumerate(instants):
                yield expr, zone, ms(at), 2 if zone == 'UTC' and i == 0 else 1


def iso(s):
    return datetime.datetime.fromtimestamp(s, UTC).strftime('%Y-%m-%dT%H:%M:%SZ')


def local_iso(z, s):
    return z.local(s).isoformat()


def main():
    out = sys.stdout
    out.write('# Cron fire times for tests/test_cronexpr.c, written by tests/cron_reference.py\n'
              '# (its docstring says how, and how to regenerate).  Tab-separated:\n'
              '# expression, zone, instant (epoch ms), the first fire strictly after it and\n'
              '# the last fire at or before it (epoch ms and ISO 8601 UTC each, or never),\n'
              '# then, outside UTC, the two fires in the zone\'s local time, for a reader.\n')
    zones = {}
    seen = set()
    rows = 0
    for expr, zone, at, more in cases():
        z = zones.setdefault(zone, Zone(zone))
        e = parse(expr)
        nxt = scan_next(e, z, at)
        # The instant itself, then the fire found (next is strictly after,
        # prev at or before) and the fire plus 999 ms (whole seconds).
        again = () if nxt is None else (nxt * 1000, nxt * 1000 + 999)[:more]
        for a in (at,) + again:
            if (expr, zone, a) in seen:
                continue
            seen.add((expr, zone, a))
            n = nxt if a == at else scan_next(e, z, a)
            p = scan_prev(e, z, a)
            row = '%s\t%s\t%d\t%s\t%s\t%s\t%s' % (
                expr, zone, a,
                'never' if n is None else n * 1000, 'never' if n is None else iso(n),
                'never' if p is None else p * 1000, 'never' if p is None else iso(p))
            if zone != 'UTC':
                row += '\t# local %s  %s' % ('-' if n is None else local_iso(z, n),
                                             '-' if p is None else local_iso(z, p))
            out.write(row + '\n')
            rows += 1
    print('%d rows' % rows, file=sys.stderr)


if __name__ == '__main__':
    main()
