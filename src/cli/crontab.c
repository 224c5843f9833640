/*
 * crontab.c -- reading the file `sqlease cron FILE` runs (see crontab.h):
 * its lines, variables, policies and jobs, each error named by its line
 * and column.
 *
 * The schedules are parsed by the library's own cron module (cronexpr.h),
 * which the scheduler uses too: what reads here is what it runs.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cronexpr.h"
#include "crontab.h"
#include "internal.h"

/* What the variables seen so far say for the job lines after them. */
typedef struct cron_state {
    char *tz;                /* NULL: UTC */
    char *next_name;         /* SQLEASE_JOB, for the next job only */
    int next_name_line, next_name_col;
    int missed, abandoned, overlap, max_attempts;
    int64_t max_age_ms;
    char **env;              /* "NAME=value" */
    size_t nenv;
} cron_state;

static int fail(char *err, size_t cap, const char *path, int line, int col, const char *fmt,
                ...) CLI_PRINTF(6, 7);

static int fail(char *err, size_t cap, const char *path, int line, int col, const char *fmt,
                ...)
{
    char what[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(err, cap, "%s:%d:%d: %s", path, line, col, what);
    return -1;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* A copy of n bytes of s, NUL-terminated; NULL when out of memory. */
static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);

    if (d != NULL) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static void entry_free(cli_cron_entry *e)
{
    size_t i;

    free((char *)e->job.name);
    free((char *)e->job.schedule);
    free((char *)e->job.tz);
    free(e->command);
    for (i = 0; i < e->nenv; i++)
        free(e->env[i]);
    free(e->env);
}

void cli_crontab_free(cli_crontab *t)
{
    size_t i;

    if (t == NULL)
        return;
    for (i = 0; i < t->n; i++)
        entry_free(&t->entries[i]);
    free(t->entries);
    t->entries = NULL;
    t->n = 0;
}

static void state_free(cron_state *st)
{
    size_t i;

    free(st->tz);
    free(st->next_name);
    for (i = 0; i < st->nenv; i++)
        free(st->env[i]);
    free(st->env);
}

/* Set NAME=value in the environment the next jobs get (a variable set
 * twice keeps its last value). */
static int env_set(cron_state *st, const char *name, size_t nlen, const char *value)
{
    size_t i, len = nlen + 1 + strlen(value);
    char *kv = malloc(len + 1), **v;

    if (kv == NULL)
        return -1;
    snprintf(kv, len + 1, "%.*s=%s", (int)nlen, name, value);
    for (i = 0; i < st->nenv; i++)
        if (strncmp(st->env[i], kv, nlen + 1) == 0) {
            free(st->env[i]);
            st->env[i] = kv;
            return 0;
        }
    v = realloc(st->env, (st->nenv + 2) * sizeof *v);
    if (v == NULL) {
        free(kv);
        return -1;
    }
    st->env = v;
    st->env[st->nenv++] = kv;
    st->env[st->nenv] = NULL;
    return 0;
}

/* FNV-1a of the line's parts: a job named by it is named the same on
 * every host that reads the same line. */
static uint32_t line_hash(const char *schedule, const char *tz, const char *command)
{
    const char *parts[3] = {schedule, tz != NULL ? tz : "", command};
    uint32_t h = 2166136261u;
    size_t k;

    for (k = 0; k < 3; k++) {
        const unsigned char *p = (const unsigned char *)parts[k];
        for (; *p != '\0'; p++)
            h = (h ^ *p) * 16777619u;
        h = (h ^ 0xffu) * 16777619u;
    }
    return h;
}

/* The default name of a job: its command's first word without its
 * directory (letters, digits, '.', '_' and '-' kept, others as '_', at
 * most 40 bytes), '-', and the line's hash. */
static void default_name(const char *schedule, const char *tz, const char *command, char *out,
                         size_t cap)
{
    const char *w = command, *end, *base;
    char word[41];
    size_t n = 0;

    end = w;
    while (*end != '\0' && !is_space(*end))
        end++;
    base = w;
    for (const char *p = w; p < end; p++)
        if (*p == '/')
            base = p + 1;
    for (const char *p = base; p < end && n < sizeof word - 1; p++) {
        char c = *p;
        word[n++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                            c == '.' || c == '_' || c == '-'
                        ? c
                        : '_';
    }
    word[n] = '\0';
    snprintf(out, cap, "%s-%08x", n > 0 ? word : "job",
             (unsigned)line_hash(schedule, tz, command));
}

/* A variable's value: the rest of the line, blanks around it dropped,
 * and one pair of quotes around it taken off.  Returns a copy, or NULL
 * (*bad: 1 for an unclosed quote, 0 when out of memory). */
static char *var_value(const char *v, size_t len, int *bad)
{
    while (len > 0 && is_space(*v)) {
        v++;
        len--;
    }
    while (len > 0 && is_space(v[len - 1]))
        len--;
    *bad = 0;
    if (len > 0 && (v[0] == '"' || v[0] == '\'')) {
        if (len < 2 || v[len - 1] != v[0]) {
            *bad = 1;
            return NULL;
        }
        return dup_n(v + 1, len - 2);
    }
    return dup_n(v, len);
}

static int word_is(const char *s, size_t n, const char *w)
{
    return strlen(w) == n && strncmp(s, w, n) == 0;
}

/* One variable line: name is line[0..nlen), the value starts at vcol. */
static int assign(cron_state *st, const char *path, int ln, const char *line, size_t nlen,
                  const char *value, size_t vlen, int vcol, char *err, size_t cap)
{
    int bad = 0;
    char *v = var_value(value, vlen, &bad);

    if (v == NULL)
        return bad ? fail(err, cap, path, ln, vcol, "unclosed quote in the value of %.*s",
                          (int)nlen, line)
                   : fail(err, cap, path, ln, vcol, "out of memory");
    if (word_is(line, nlen, "CRON_TZ")) {
        if (v[0] == '\0' || strcmp(v, "UTC") == 0) {
            free(st->tz);
            st->tz = NULL;
            free(v);
            return 0;
        }
        {
            sqle_cron *c = NULL;
            sqle_cron_error ce;
            if (sqle_cron_parse("* * * * *", v, &c, &ce) != SQLEASE_OK) {
                fail(err, cap, path, ln, vcol, "CRON_TZ=%s: %s", v, ce.message);
                free(v);
                return -1;
            }
            sqle_cron_free(c);
        }
        free(st->tz);
        st->tz = v;
        return 0;
    }
    if (word_is(line, nlen, "SQLEASE_JOB")) {
        sqlease_error e;
        if (sqle_check_text("SQLEASE_JOB", v, SQLEASE_MAX_JOB, 0, &e) != SQLEASE_OK) {
            fail(err, cap, path, ln, vcol, "%s", e.message);
            free(v);
            return -1;
        }
        if (st->next_name != NULL) {
            /* The first would name no job: say so rather than drop it. */
            fail(err, cap, path, st->next_name_line, st->next_name_col, "SQLEASE_JOB=%s names "
                 "no job: SQLEASE_JOB=%s (line %d) comes before the next job line",
                 st->next_name, v, ln);
            free(v);
            return -1;
        }
        st->next_name = v;
        st->next_name_line = ln;
        st->next_name_col = vcol;
        return 0;
    }
    if (word_is(line, nlen, "SQLEASE_MISSED")) {
        int m = strcmp(v, "once") == 0 ? SQLE_MISSED_ONCE
                : strcmp(v, "skip") == 0 ? SQLE_MISSED_SKIP
                : strcmp(v, "all") == 0 ? SQLE_MISSED_ALL : -1;
        free(v);
        if (m < 0)
            return fail(err, cap, path, ln, vcol, "SQLEASE_MISSED wants once, skip or all");
        st->missed = m;
        return 0;
    }
    if (word_is(line, nlen, "SQLEASE_ABANDONED")) {
        int m = strcmp(v, "at-most-once") == 0 ? SQLE_ABANDONED_AT_MOST_ONCE
                : strcmp(v, "at-least-once") == 0 ? SQLE_ABANDONED_AT_LEAST_ONCE : -1;
        free(v);
        if (m < 0)
            return fail(err, cap, path, ln, vcol,
                        "SQLEASE_ABANDONED wants at-most-once or at-least-once");
        st->abandoned = m;
        return 0;
    }
    if (word_is(line, nlen, "SQLEASE_OVERLAP")) {
        int m = strcmp(v, "forbid") == 0 ? SQLE_OVERLAP_FORBID
                : strcmp(v, "allow") == 0 ? SQLE_OVERLAP_ALLOW
                : strcmp(v, "replace") == 0 ? SQLE_OVERLAP_REPLACE : -1;
        free(v);
        if (m < 0)
            return fail(err, cap, path, ln, vcol, "SQLEASE_OVERLAP wants forbid, allow or "
                        "replace");
        st->overlap = m;
        return 0;
    }
    if (word_is(line, nlen, "SQLEASE_MAX_AGE")) {
        sqlease_error e;
        int64_t ms = 0;
        if (sqlease_parse_duration(v, &ms, &e) != SQLEASE_OK || ms <= 0) {
            fail(err, cap, path, ln, vcol, "SQLEASE_MAX_AGE=%s: %s", v,
                 ms <= 0 && e.message[0] == '\0' ? "must be above 0" : e.message);
            free(v);
            return -1;
        }
        free(v);
        st->max_age_ms = ms;
        return 0;
    }
    if (word_is(line, nlen, "SQLEASE_MAX_ATTEMPTS")) {
        char *end = NULL;
        long n = strtol(v, &end, 10);
        int ok = end != v && *end == '\0' && n >= 1 && n <= 1000;
        free(v);
        if (!ok)
            return fail(err, cap, path, ln, vcol, "SQLEASE_MAX_ATTEMPTS wants a number from "
                        "1 to 1000");
        st->max_attempts = (int)n;
        return 0;
    }
    if (nlen > 8 && strncmp(line, "SQLEASE_", 8) == 0) {
        fail(err, cap, path, ln, 1, "unknown setting %.*s (SQLEASE_JOB, SQLEASE_MISSED, "
             "SQLEASE_MAX_AGE, SQLEASE_ABANDONED, SQLEASE_MAX_ATTEMPTS, SQLEASE_OVERLAP)",
             (int)nlen, line);
        free(v);
        return -1;
    }
    if (env_set(st, line, nlen, v) != 0) {
        free(v);
        return fail(err, cap, path, ln, 1, "out of memory");
    }
    free(v);
    return 0;
}

/* The word at *p (blanks before it skipped): its start and length; *p
 * moves past it. */
static const char *next_word(const char **p, size_t *n)
{
    const char *s = *p, *w;

    while (is_space(*s))
        s++;
    w = s;
    while (*s != '\0' && !is_space(*s))
        s++;
    *n = (size_t)(s - w);
    *p = s;
    return *n > 0 ? w : NULL;
}

/* Whether a word can be a cron field: digits, names, and * ? , - / */
static int fieldish(const char *w, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        char c = w[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              c == '*' || c == '?' || c == ',' || c == '-' || c == '/'))
            return 0;
    }
    return n > 0;
}

/* One job line: the schedule (five fields, six, or a macro), then the
 * command. */
static int job_line(cron_state *st, cli_crontab *t, const char *path, int ln, const char *line,
                    char *err, size_t cap)
{
    const char *p = line, *w, *sched_start, *sched_end, *cmd;
    size_t n, k;
    char *schedule = NULL, *command = NULL, name[SQLEASE_MAX_JOB + 1];
    sqle_cron *c = NULL;
    sqle_cron_error ce;
    cli_cron_entry *e, *v;
    int rc;

    w = next_word(&p, &n);
    sched_start = w;
    if (w[0] == '@') {
        if (word_is(w, n, "@every") || word_is(w, n, "@EVERY")) {
            if (next_word(&p, &n) == NULL)
                return fail(err, cap, path, ln, (int)(p - line) + 1,
                            "@every wants a duration, then the command");
        }
        sched_end = p;
    } else {
        const char *after5;
        for (k = 1; k < 5; k++)
            if (next_word(&p, &n) == NULL)
                return fail(err, cap, path, ln, (int)(p - line) + 1,
                            "a job line has five time fields (or six, seconds first) and "
                            "then the command; this one ends after %zu", k);
        after5 = p;
        sched_end = p;
        w = next_word(&p, &n);
        if (w != NULL && fieldish(w, n)) {
            /* A sixth field, if the six parse and a command follows. */
            const char *q = p;
            size_t m;
            if (next_word(&q, &m) != NULL) {
                char *six = dup_n(sched_start, (size_t)(p - sched_start));
                if (six != NULL && sqle_cron_parse(six, st->tz, &c, &ce) == SQLEASE_OK)
                    sched_end = p;
                sqle_cron_free(c);
                c = NULL;
                free(six);
            }
        }
        p = sched_end == after5 ? after5 : p;
    }
    cmd = sched_end;
    while (is_space(*cmd))
        cmd++;
    if (*cmd == '\0')
        return fail(err, cap, path, ln, (int)(cmd - line) + 1, "no command after the schedule");
    schedule = dup_n(sched_start, (size_t)(sched_end - sched_start));
    command = dup_n(cmd, strlen(cmd));
    if (schedule == NULL || command == NULL) {
        free(schedule);
        free(command);
        return fail(err, cap, path, ln, 1, "out of memory");
    }
    rc = sqle_cron_parse(schedule, st->tz, &c, &ce);
    if (rc != SQLEASE_OK) {
        int col = (int)(sched_start - line) + (ce.column > 0 ? ce.column : 1);
        free(schedule);
        free(command);
        return fail(err, cap, path, ln, col, "%s", ce.message);
    }
    sqle_cron_free(c);
    if (st->next_name != NULL)
        snprintf(name, sizeof name, "%s", st->next_name);
    else
        default_name(schedule, st->tz, command, name, sizeof name);
    for (k = 0; k < t->n; k++)
        if (strcmp(t->entries[k].job.name, name) == 0) {
            free(schedule);
            free(command);
            /* Where the name is: the SQLEASE_JOB line, or this one. */
            return fail(err, cap, path, st->next_name != NULL ? st->next_name_line : ln,
                        st->next_name != NULL ? st->next_name_col : 1,
                        "job '%s' is named twice (line %d names it first)%s", name,
                        t->entries[k].line,
                        st->next_name != NULL ? "" : ": give one of them SQLEASE_JOB=");
        }
    v = realloc(t->entries, (t->n + 1) * sizeof *v);
    if (v == NULL) {
        free(schedule);
        free(command);
        return fail(err, cap, path, ln, 1, "out of memory");
    }
    t->entries = v;
    e = &t->entries[t->n];
    memset(e, 0, sizeof *e);
    e->line = ln;
    e->command = command;
    e->job.schedule = schedule;
    e->job.name = dup_n(name, strlen(name));
    e->job.tz = st->tz != NULL ? dup_n(st->tz, strlen(st->tz)) : NULL;
    e->job.missed = st->missed;
    e->job.abandoned = st->abandoned;
    e->job.overlap = st->overlap;
    e->job.max_age_ms = st->max_age_ms;
    e->job.max_attempts = st->max_attempts;
    e->env = calloc(st->nenv + 1, sizeof *e->env);
    t->n++;
    if (e->job.name == NULL || (st->tz != NULL && e->job.tz == NULL) || e->env == NULL)
        return fail(err, cap, path, ln, 1, "out of memory");
    for (k = 0; k < st->nenv; k++) {
        e->env[k] = dup_n(st->env[k], strlen(st->env[k]));
        if (e->env[k] == NULL)
            return fail(err, cap, path, ln, 1, "out of memory");
        e->nenv++;
    }
    free(st->next_name);
    st->next_name = NULL;
    return 0;
}

int cli_crontab_parse(const char *path, const char *text, cli_crontab *out, char *err,
                      size_t cap)
{
    cron_state st;
    const char *p = text;
    int ln = 0, rc = 0;

    memset(out, 0, sizeof *out);
    memset(&st, 0, sizeof st);
    err[0] = '\0';
    while (*p != '\0' && rc == 0) {
        const char *end = strchr(p, '\n'), *s;
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        char *line;

        ln++;
        line = dup_n(p, len);
        p += len + (end != NULL ? 1 : 0);
        if (line == NULL) {
            rc = fail(err, cap, path, ln, 1, "out of memory");
            break;
        }
        if (len > 0 && line[len - 1] == '\r')
            line[--len] = '\0';
        for (s = line; is_space(*s); s++)
            ;
        if (*s == '\0' || *s == '#') {
            free(line);
            continue;
        }
        {
            const char *q = s;
            while ((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') || *q == '_' ||
                   (q > s && *q >= '0' && *q <= '9'))
                q++;
            if (q > s) {
                const char *eq = q;
                while (is_space(*eq))
                    eq++;
                if (*eq == '=') {
                    rc = assign(&st, path, ln, s, (size_t)(q - s), eq + 1,
                                strlen(eq + 1), (int)(eq + 1 - line) + 1, err, cap);
                    free(line);
                    continue;
                }
            }
        }
        {
            /* Columns count from the line's start: the job is read
             * from its first non-blank character, with that offset. */
            size_t off = (size_t)(s - line);
            char msg[600];
            rc = job_line(&st, out, path, ln, s, msg, sizeof msg);
            if (rc != 0) {
                /* Shift the column by the leading blanks (of this line:
                 * an error may point at the SQLEASE_JOB line before). */
                int l = 0, col = 0, consumed = 0;
                if (sscanf(msg + strlen(path), ":%d:%d:%n", &l, &col, &consumed) == 2)
                    snprintf(err, cap, "%s:%d:%d:%s", path, l, col + (l == ln ? (int)off : 0),
                             msg + strlen(path) + consumed);
                else
                    snprintf(err, cap, "%s", msg);
            }
        }
        free(line);
    }
    if (rc == 0 && st.next_name != NULL)
        rc = fail(err, cap, path, st.next_name_line, st.next_name_col, "SQLEASE_JOB=%s names "
                  "no job: no job line follows it", st.next_name);
    state_free(&st);
    if (rc != 0)
        cli_crontab_free(out);
    return rc;
}

sqle_job *cli_crontab_jobs(const cli_crontab *t, size_t *n)
{
    sqle_job *jobs = calloc(t->n > 0 ? t->n : 1, sizeof *jobs);
    size_t i;

    *n = 0;
    if (jobs == NULL)
        return NULL;
    for (i = 0; i < t->n; i++) {
        jobs[i] = t->entries[i].job;
        jobs[i].userdata = &t->entries[i];
    }
    *n = t->n;
    return jobs;
}
