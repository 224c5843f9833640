/*
 * analyze.c -- from what the harness observed to a verdict.
 *
 * Every rule here is checked on times from one clock (CLOCK_MONOTONIC,
 * shared by all processes of the host), so a job's start, another job's
 * stop and the harness's own observations compare directly:
 *
 *  - overlap: two CMD runs (of any instances, or of one) that were alive
 *    at the same moment.  The one exception is a whole-instance pause: the frozen
 *    CMD is still "running" while its successor works, and the overlap is
 *    allowed from the pause until one second after SIGCONT (main.c has
 *    already checked that it was gone by then);
 *  - stale write accepted: a write the database accepted although a write
 *    with a higher token had been accepted (answered) before it was even
 *    sent.  The fence in the UPDATE must make this impossible;
 *  - tokens: a CMD started by another holder (sqlease process) than the
 *    previous one must carry a higher token; the same holder may restart
 *    CMD with the same token;
 *  - recovery: for every fault, the time from its end (the heal, or the
 *    moment of an instant fault) to the holder that lasts: the start of
 *    the unbroken run of CMDs that is still going when the next fault
 *    begins (or the run ends), or 0 when that run began before the end.
 *    A holder that is running at the heal but stopped afterwards (a late
 *    answer past its deadline) therefore does not count.  It must not
 *    exceed the recovery bound (ttl + retry + query timeout + 1 s); a
 *    fault with no holder at all before the next one is a violation too;
 *  - figures: bounds of their own that scenarios measured (exit time
 *    after SIGTERM, a connect to a server that never answers, ...);
 *  - the longest time with no CMD running, overall and after each kind of
 *    fault.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chaos.h"

const char *const ch_fault_names[F_NKINDS] = {
    "kill-holder", "pause-instance", "freeze-sqlease", "graceful-stop",
    "partition", "restart-short", "restart-long", "hung-statement",
    "cut-one-short", "cut-one-long", "cut-fleet-short", "cut-fleet-long",
    "loss-to-client", "loss-to-server", "server-freeze-short", "server-freeze-long",
    "silent-server", "term-idle", "term-in-flight", "term-twice", "term-run",
    "job-stop", "same-owner", "node-kill", "node-kill-other", "node-cutoff", "node-freeze",
    "cluster-restart", "failover", "fleet-reset",
};

void ch_obs_init(ch_obs *o)
{
    memset(o, 0, sizeof *o);
    o->crash_successor_max = -1;
    o->graceful_successor_max = -1;
    o->resume_stop_max = -1;
    o->freeze_stop_max = -1;
    o->db_back_holder_max = -1;
}

void ch_obs_free(ch_obs *o)
{
    free(o->cmds);
    free(o->writes);
    free(o->faults);
    free(o->violations);
    memset(o, 0, sizeof *o);
}

/* Grow an array by doubling; exits on out-of-memory (a test harness has
 * nothing better to do). */
static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    *cap = *cap ? *cap * 2 : 64;
    if (*cap < need)
        *cap = need;
    p = realloc(p, *cap * size);
    if (p == NULL) {
        fprintf(stderr, "chaos: out of memory\n");
        exit(70);
    }
    return p;
}

ch_cmd *ch_obs_add_cmd(ch_obs *o)
{
    ch_cmd *c;

    o->cmds = grow(o->cmds, &o->capcmds, o->ncmds + 1, sizeof *o->cmds);
    c = &o->cmds[o->ncmds++];
    memset(c, 0, sizeof *c);
    c->end = -1;
    return c;
}

void ch_obs_add_write(ch_obs *o, const ch_write *w)
{
    o->writes = grow(o->writes, &o->capwrites, o->nwrites + 1, sizeof *o->writes);
    o->writes[o->nwrites++] = *w;
}

ch_fault *ch_obs_add_fault(ch_obs *o, int kind, int inst, int64_t at)
{
    ch_fault *f;

    o->faults = grow(o->faults, &o->capfaults, o->nfaults + 1, sizeof *o->faults);
    f = &o->faults[o->nfaults++];
    f->kind = kind;
    f->inst = inst;
    f->at = at;
    f->healed = 0;
    f->recovery = -1;
    return f;
}

void ch_figure_note(ch_obs *o, const char *name, int64_t value, int64_t bound, int capped,
                    const char *what)
{
    ch_figure *f = NULL;

    for (size_t i = 0; i < o->nfigures; i++)
        if (strcmp(o->figures[i].name, name) == 0)
            f = &o->figures[i];
    if (f == NULL && o->nfigures < sizeof o->figures / sizeof o->figures[0]) {
        f = &o->figures[o->nfigures++];
        memset(f, 0, sizeof *f);
        snprintf(f->name, sizeof f->name, "%s", name);
        f->value = -1;
    }
    if (f != NULL) {
        f->count++;
        f->bound = bound;
        if (value > f->value || (value == f->value && capped)) {
            f->value = value;
            f->capped = capped;
        }
    }
    if (capped || value > bound)
        ch_violation(o, "%s: %s%lld ms (bound %lld ms)", what, capped ? "more than " : "",
                     (long long)value, (long long)bound);
}

void ch_skip(ch_obs *o, const char *kind, const char *why)
{
    size_t len = strlen(o->skipped);

    printf("fault %s: SKIPPED: %s\n", kind, why);
    fflush(stdout);
    if (strstr(o->skipped, kind) == NULL && len + strlen(kind) + 2 < sizeof o->skipped)
        snprintf(o->skipped + len, sizeof o->skipped - len, "%s%s", len ? "," : "", kind);
}

void ch_violation(ch_obs *o, const char *fmt, ...)
{
    va_list ap;

    o->violations = grow(o->violations, &o->capviolations, o->nviolations + 1,
                         sizeof *o->violations);
    va_start(ap, fmt);
    vsnprintf(o->violations[o->nviolations], sizeof o->violations[0], fmt, ap);
    va_end(ap);
    fprintf(stderr, "chaos: VIOLATION: %s\n", o->violations[o->nviolations]);
    o->nviolations++;
}

static int by_start(const void *a, const void *b)
{
    const ch_cmd *x = a, *y = b;

    return x->start < y->start ? -1 : x->start > y->start;
}

static int by_answered(const void *a, const void *b)
{
    const ch_write *x = a, *y = b;

    return x->answered < y->answered ? -1 : x->answered > y->answered;
}

/* The end of a run for the timeline: still running at shutdown counts
 * as running until then. */
static int64_t end_of(const ch_cmd *c, int64_t t_end)
{
    return c->end >= 0 ? c->end : t_end;
}

/* An overlap of a and b over [from, to] is allowed when one of them was
 * frozen by a whole-instance pause and the overlap lies inside the
 * allowance main.c recorded for it. */
static int overlap_allowed(const ch_cmd *a, const ch_cmd *b, int64_t from, int64_t to)
{
    const ch_cmd *c[2] = {a, b};

    for (int i = 0; i < 2; i++)
        if (c[i]->allow_until > 0 && from >= c[i]->allow_from && to <= c[i]->allow_until)
            return 1;
    return 0;
}

static void check_overlaps(ch_obs *o, ch_verdict *v)
{
    for (size_t i = 0; i < o->ncmds; i++) {
        for (size_t j = i + 1; j < o->ncmds; j++) {
            const ch_cmd *a = &o->cmds[i], *b = &o->cmds[j];
            int64_t from, to;

            from = a->start > b->start ? a->start : b->start;
            to = end_of(a, o->t_end) < end_of(b, o->t_end) ? end_of(a, o->t_end)
                                                           : end_of(b, o->t_end);
            if (to <= from)
                continue;
            if (overlap_allowed(a, b, from, to)) {
                v->overlaps_allowed++;
                if (to - from > v->allowed_overlap_max)
                    v->allowed_overlap_max = to - from;
                continue;
            }
            v->overlaps++;
            ch_violation(o, "overlap of %lld ms: instance %d (pid %ld, token %lld, %lld..%lld) "
                         "and instance %d (pid %ld, token %lld, %lld..%lld)",
                         (long long)(to - from), a->inst, a->pid, (long long)a->token,
                         (long long)a->start, (long long)end_of(a, o->t_end), b->inst, b->pid,
                         (long long)b->token, (long long)b->start,
                         (long long)end_of(b, o->t_end));
        }
    }
}

static void check_tokens(ch_obs *o, ch_verdict *v)
{
    for (size_t i = 1; i < o->ncmds; i++) {
        const ch_cmd *p = &o->cmds[i - 1], *c = &o->cmds[i];

        /* A holder is one sqlease process: a restarted instance is a new
         * holder. */
        if (c->sup != p->sup) {
            v->handovers++;
            if (c->token <= p->token) {
                v->token_violations++;
                ch_violation(o, "token did not grow at a handover: instance %d (sqlease %ld) "
                             "token %lld, then instance %d (sqlease %ld) token %lld", p->inst,
                             p->sup, (long long)p->token, c->inst, c->sup, (long long)c->token);
            }
        } else if (c->token < p->token) {
            v->token_violations++;
            ch_violation(o, "token went back: instance %d token %lld, then %lld", c->inst,
                         (long long)p->token, (long long)c->token);
        }
    }
    /* One token, one holder. */
    for (size_t i = 0; i < o->ncmds; i++)
        for (size_t j = i + 1; j < o->ncmds; j++)
            if (o->cmds[i].token == o->cmds[j].token && o->cmds[i].sup != o->cmds[j].sup) {
                v->token_violations++;
                ch_violation(o, "token %lld used by two holders: instance %d (sqlease %ld) and "
                             "instance %d (sqlease %ld)", (long long)o->cmds[i].token,
                             o->cmds[i].inst, o->cmds[i].sup, o->cmds[j].inst, o->cmds[j].sup);
            }
}

/* Sorted by answer time, the highest token answered so far is known at
 * every point; a write sent after a higher token's write was answered
 * must not have been accepted. */
static void check_writes(ch_obs *o, ch_verdict *v)
{
    ch_write *acc;
    size_t n = 0;

    for (size_t i = 0; i < o->nwrites; i++) {
        if (o->writes[i].result == 'A')
            v->accepted++;
        else if (o->writes[i].result == 'R')
            v->refused++;
    }
    if (v->accepted == 0)
        return;
    acc = malloc((size_t)v->accepted * sizeof *acc);
    if (acc == NULL)
        return;
    for (size_t i = 0; i < o->nwrites; i++)
        if (o->writes[i].result == 'A')
            acc[n++] = o->writes[i];
    qsort(acc, n, sizeof *acc, by_answered);
    for (size_t i = 0; i < n; i++) {
        /* Any accepted write with a higher token answered before acc[i]
         * was sent?  (n is small: a few thousand.) */
        for (size_t j = 0; j < n && acc[j].answered < acc[i].sent; j++) {
            if (acc[j].token > acc[i].token) {
                v->stale_accepted++;
                ch_violation(o, "stale write accepted: instance %d token %lld sent at %lld, "
                             "after instance %d's token %lld write was accepted at %lld",
                             acc[i].inst, (long long)acc[i].token, (long long)acc[i].sent,
                             acc[j].inst, (long long)acc[j].token, (long long)acc[j].answered);
                break;
            }
        }
    }
    free(acc);
}

/* Gaps in the union of the CMD runs between the first start and the
 * shutdown; each gap is put down to the last fault injected before it
 * began. */
static void measure_gaps(ch_obs *o, ch_verdict *v)
{
    int64_t covered;

    if (o->ncmds == 0)
        return;
    covered = end_of(&o->cmds[0], o->t_end);
    for (size_t i = 1; i <= o->ncmds; i++) {
        int64_t next = i < o->ncmds ? o->cmds[i].start : o->t_end;

        if (next > covered && covered < o->t_end) {
            int64_t gap = (next < o->t_end ? next : o->t_end) - covered;
            int kind = -1;

            for (size_t f = 0; f < o->nfaults; f++)
                if (o->faults[f].at <= covered)
                    kind = o->faults[f].kind;
            if (gap > v->longest_gap)
                v->longest_gap = gap;
            if (kind >= 0 && gap > v->longest_gap_after[kind])
                v->longest_gap_after[kind] = gap;
        }
        if (i < o->ncmds && end_of(&o->cmds[i], o->t_end) > covered)
            covered = end_of(&o->cmds[i], o->t_end);
    }
}

/* The start of the unbroken run of CMDs that covers x, going back no
 * further than `from`; -1 when no CMD runs at x.  (cmds sorted by start.) */
static int64_t covered_since(const ch_obs *o, int64_t from, int64_t x)
{
    int64_t t = x;

    for (;;) {
        int64_t earliest = t;
        int found = 0;

        for (size_t i = 0; i < o->ncmds && o->cmds[i].start <= t; i++)
            if (end_of(&o->cmds[i], o->t_end) >= t) {
                found = 1;
                if (o->cmds[i].start < earliest)
                    earliest = o->cmds[i].start;
            }
        if (!found)
            return t == x ? -1 : t;
        if (earliest <= from)
            return from;
        if (earliest == t)
            return t;
        t = earliest;
    }
}

/* The recovery of every fault (see the top of this file). */
static void measure_recovery(ch_obs *o, ch_verdict *v)
{
    for (int k = 0; k < F_NKINDS; k++)
        v->rec_max[k] = -1;
    for (size_t f = 0; f < o->nfaults; f++) {
        ch_fault *ft = &o->faults[f];
        int64_t e = ft->healed > 0 ? ft->healed : ft->at;
        int64_t x = o->t_end, since;

        if (ft->kind == F_RESET)
            continue;
        for (size_t g = f + 1; g < o->nfaults; g++)
            if (o->faults[g].at >= e) {
                x = o->faults[g].at;
                break;
            }
        if (x < e)
            x = e;
        since = covered_since(o, e, x);
        v->rec_n[ft->kind]++;
        if (since < 0) {
            ft->recovery = -1;
            v->rec_none[ft->kind]++;
            v->rec_over++;
            ch_violation(o, "recovery after %s (instance %d, ended at +%lld ms): no holder in "
                         "the %lld ms before the next fault or the end", ch_fault_names[ft->kind],
                         ft->inst, (long long)(e - o->t_begin), (long long)(x - e));
            if (x - e > v->rec_max[ft->kind])
                v->rec_max[ft->kind] = x - e;
            continue;
        }
        ft->recovery = since - e;
        if (ft->recovery > v->rec_max[ft->kind])
            v->rec_max[ft->kind] = ft->recovery;
        if (o->recovery_bound > 0 && ft->recovery > o->recovery_bound) {
            v->rec_over++;
            ch_violation(o, "recovery after %s (instance %d, ended at +%lld ms): %lld ms to the "
                         "next holder, bound ttl + retry + query timeout + 1 s = %lld ms",
                         ch_fault_names[ft->kind], ft->inst, (long long)(e - o->t_begin),
                         (long long)ft->recovery, (long long)o->recovery_bound);
        }
    }
}

size_t ch_analyze(ch_obs *o, ch_verdict *v)
{
    memset(v, 0, sizeof *v);
    qsort(o->cmds, o->ncmds, sizeof *o->cmds, by_start);
    v->holds = (int)o->ncmds;
    for (size_t f = 0; f < o->nfaults; f++) {
        if (o->faults[f].kind == F_RESET)
            continue;
        v->faults[o->faults[f].kind]++;
        v->nfaults++;
    }
    check_overlaps(o, v);
    check_tokens(o, v);
    check_writes(o, v);
    measure_gaps(o, v);
    measure_recovery(o, v);
    return o->nviolations;
}

static void ms_or_dash(char *buf, size_t cap, int64_t ms)
{
    if (ms < 0)
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%lld ms", (long long)ms);
}

void ch_print_verdict(const ch_obs *o, const ch_verdict *v, const char *dialect,
                      const char *scenario, uint64_t seed, int64_t seconds)
{
    char a[32], b[32], c[32], d[32];

    printf("\n==== chaos verdict: dialect %s, scenario %s, seed %llu, %lld s ====\n", dialect,
           scenario, (unsigned long long)seed, (long long)seconds);
    printf("  %-34s %d", "faults injected", v->nfaults);
    for (int k = 0, first = 1; k < F_NKINDS; k++)
        if (v->faults[k] > 0) {
            printf("%s%s %d", first ? " (" : ", ", ch_fault_names[k], v->faults[k]);
            first = 0;
        }
    printf("%s\n", v->nfaults > 0 ? ")" : "");
    printf("  %-34s %d (CMD starts %d)\n", "handovers", v->handovers, v->holds);
    printf("  %-34s %lld ms\n", "longest time with no holder", (long long)v->longest_gap);
    for (int k = 0; k < F_NKINDS; k++)
        if (v->faults[k] > 0)
            printf("    after %-28s %lld ms\n", ch_fault_names[k],
                   (long long)v->longest_gap_after[k]);
    printf("  %-34s %d (allowed during whole-instance pauses: %d, longest %lld ms)\n",
           "overlapping CMD runs", v->overlaps, v->overlaps_allowed,
           (long long)v->allowed_overlap_max);
    printf("  %-34s %d (refused by the fence: %d; accepted: %d)\n", "stale writes accepted",
           v->stale_accepted, v->refused, v->accepted);
    printf("  %-34s %lld (fence %lld)\n", "writes the database applied",
           (long long)o->row_applied, (long long)o->row_fence);
    printf("  %-34s %s\n", "tokens of successive holders",
           v->token_violations == 0 ? "strictly increasing" : "NOT increasing");
    printf("  %-34s %d\n", "orphaned CMDs at the end", o->orphans);
    ms_or_dash(a, sizeof a, o->crash_successor_max);
    ms_or_dash(b, sizeof b, o->graceful_successor_max);
    ms_or_dash(c, sizeof c, o->freeze_stop_max);
    ms_or_dash(d, sizeof d, o->resume_stop_max);
    printf("  %-34s %s\n", "successor after a crash (max)", a);
    printf("  %-34s %s\n", "successor after SIGTERM (max)", b);
    printf("  %-34s %s\n", "frozen sqlease: CMD gone (max)", c);
    printf("  %-34s %s\n", "paused CMD gone after SIGCONT (max)", d);
    ms_or_dash(a, sizeof a, o->db_back_holder_max);
    printf("  %-34s %s\n", "holder after the database is back", a);
    printf("  recovery: end of fault -> next holder's CMD start (bound %lld ms)\n",
           (long long)o->recovery_bound);
    for (int k = 0; k < F_NKINDS; k++)
        if (v->rec_n[k] > 0)
            printf("    %-32s %2d x, max %s%lld ms%s\n", ch_fault_names[k], v->rec_n[k],
                   v->rec_none[k] ? ">" : "", (long long)v->rec_max[k],
                   v->rec_none[k] || v->rec_max[k] > o->recovery_bound ? "  OVER" : "");
    if (o->nfigures > 0)
        printf("  measured against bounds of their own\n");
    for (size_t i = 0; i < o->nfigures; i++) {
        const ch_figure *f = &o->figures[i];
        printf("    %-32s %s%lld ms (bound %lld ms, %d x)%s\n", f->name, f->capped ? ">" : "",
               (long long)f->value, (long long)f->bound, f->count,
               f->capped || f->value > f->bound ? "  OVER" : "");
    }
    if (o->skipped[0] != '\0')
        printf("  %-34s %s\n", "skipped", o->skipped);
    printf("  %-34s %zu\n", "violations", o->nviolations);
    for (size_t i = 0; i < o->nviolations; i++)
        printf("    - %s\n", o->violations[i]);
    printf("chaos-summary dialect=%s scenario=%s seed=%llu seconds=%lld faults=%d handovers=%d "
           "longest_gap_ms=%lld overlaps=%d stale_accepted=%d refused=%d orphans=%d "
           "recovery_bound_ms=%lld recovery_over=%d",
           dialect, scenario, (unsigned long long)seed, (long long)seconds, v->nfaults,
           v->handovers, (long long)v->longest_gap, v->overlaps, v->stale_accepted, v->refused,
           o->orphans, (long long)o->recovery_bound, v->rec_over);
    /* rec.KIND=COUNT:MAX_MS (">" when a fault had no holder before the
     * next), fig.NAME=VALUE_MS:BOUND_MS (">" when the harness gave up) */
    for (int k = 0; k < F_NKINDS; k++)
        if (v->rec_n[k] > 0)
            printf(" rec.%s=%d:%s%lld", ch_fault_names[k], v->rec_n[k],
                   v->rec_none[k] ? ">" : "", (long long)v->rec_max[k]);
    for (size_t i = 0; i < o->nfigures; i++)
        printf(" fig.%s=%s%lld:%lld", o->figures[i].name, o->figures[i].capped ? ">" : "",
               (long long)o->figures[i].value, (long long)o->figures[i].bound);
    printf(" skipped=%s violations=%zu\n", o->skipped[0] ? o->skipped : "-", o->nviolations);
    fflush(stdout);
}
