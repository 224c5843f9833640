/*
 * metrics.c -- the Prometheus text file of `--metrics-file` (see
 * metrics.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "metrics.h"
#include "os.h"
#include "scheduler.h"

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);

    if (p != NULL)
        memcpy(p, s, n);
    return p;
}

/* node_exporter's textfile collector reads only *.prom: any other name
 * would be written faithfully and never collected, silently. */
int cli_metrics_init(cli_metrics *m, const char *path, char *err, size_t cap)
{
    size_t n;

    memset(m, 0, sizeof *m);
    if (path == NULL)
        return 0;
    n = strlen(path);
    if (n < 6 || strcmp(path + n - 5, ".prom") != 0 || path[n - 6] == '/') {
        snprintf(err, cap, "--metrics-file '%s': the name must end in .prom (the textfile"
                 " collector reads only those)", path);
        return -1;
    }
    m->path = dup_str(path);
    m->tmp = malloc(n + 32);
    if (m->path == NULL || m->tmp == NULL) {
        cli_metrics_close(m);
        snprintf(err, cap, "out of memory");
        return -1;
    }
    /* Not *.prom, so a collector never reads a file being written. */
    snprintf(m->tmp, n + 32, "%s.%ld.tmp", path, sqle_pid());
    return 0;
}

int cli_metrics_probe(cli_metrics *m, char *err, size_t cap)
{
    FILE *f;

    if (m->path == NULL)
        return 0;
    f = fopen(m->tmp, "w");
    if (f == NULL) {
        snprintf(err, cap, "--metrics-file '%s': cannot create a file in its directory: %s",
                 m->path, strerror(errno));
        return -1;
    }
    fclose(f);
    remove(m->tmp);
    return 0;
}

void cli_metrics_escape(const char *in, char *out, size_t cap)
{
    size_t k = 0;

    if (cap == 0)
        return;
    for (; *in != '\0'; in++) {
        const char *rep = NULL;
        char one[2] = {*in, '\0'};
        size_t len;

        if (*in == '\\')
            rep = "\\\\";
        else if (*in == '"')
            rep = "\\\"";
        else if (*in == '\n')
            rep = "\\n";
        else
            rep = one;
        len = strlen(rep);
        if (k + len >= cap)
            break;
        memcpy(out + k, rep, len);
        k += len;
    }
    out[k] = '\0';
}

/* The labels are this process's own lease name and owner id, never text
 * read from the table, and both are checked (valid UTF-8, no control
 * character) before a lease starts: the format's three escapes are all a
 * value needs, and it has no other (a control character would have to be
 * dropped, not escaped). */
void cli_metrics_labels(cli_metrics *m, const char *name, const char *owner)
{
    char n[2 * SQLEASE_MAX_NAME + 1], o[2 * SQLEASE_MAX_OWNER + 1];

    cli_metrics_escape(name, n, sizeof n);
    cli_metrics_escape(owner, o, sizeof o);
    snprintf(m->labels, sizeof m->labels, "name=\"%s\",owner=\"%s\"", n, o);
}

/* One metric: its HELP and TYPE lines and one sample.  The exposition
 * format wants every line to end in a newline, the last one too. */
static void metric(cli_text *out, const char *labels, const char *name, const char *type,
                   const char *help, const char *value)
{
    cli_text_printf(out, "# HELP %s %s\n# TYPE %s %s\n%s{%s} %s\n", name, help, name, type,
                    name, labels, value);
}

/* Milliseconds as seconds with three decimals ("-1" stays "-1"). */
static void seconds(char *buf, size_t cap, int64_t ms)
{
    if (ms < 0)
        snprintf(buf, cap, "-1");
    else
        snprintf(buf, cap, "%" PRId64 ".%03d", ms / 1000, (int)(ms % 1000));
}

static void counter(cli_text *out, const char *labels, const char *name, const char *help,
                    uint64_t value)
{
    char buf[32];

    snprintf(buf, sizeof buf, "%" PRIu64, value);
    metric(out, labels, name, "counter", help, buf);
}

void cli_metrics_format(const char *labels, const cli_metrics_values *v, cli_text *out)
{
    char buf[64];

    metric(out, labels, "sqlease_lease_held", "gauge",
           "1 while this process holds the lease (CMD may run), else 0.", v->held ? "1" : "0");
    snprintf(buf, sizeof buf, "%" PRId64, v->token);
    metric(out, labels, "sqlease_lease_token", "gauge",
           "Fencing token of the current or last hold (0: none yet).", buf);
    seconds(buf, sizeof buf, v->held ? v->deadline_in_ms : 0);
    metric(out, labels, "sqlease_lease_deadline_seconds", "gauge",
           "Seconds until CMD is stopped unless the lease is renewed (0 when not holding).",
           buf);
    seconds(buf, sizeof buf, v->last_contact_ms);
    metric(out, labels, "sqlease_last_contact_seconds", "gauge",
           "Seconds since the database last answered (-1: never).", buf);
    counter(out, labels, "sqlease_statements_total", "Lease statements sent to the database.",
            v->statements);
    counter(out, labels, "sqlease_takes_total",
            "Acquires that started a new hold (new fencing token).", v->takes);
    counter(out, labels, "sqlease_losses_total",
            "Holds that ended other than by shutdown (lost, or not renewed in time).",
            v->losses);
    counter(out, labels, "sqlease_renew_failures_total",
            "Renews by the holder that failed with an error.", v->renew_failures);
}

/* Milliseconds as seconds with three decimals, either sign. */
static void signed_seconds(char *buf, size_t cap, int64_t ms)
{
    uint64_t abs_ms = ms < 0 ? (uint64_t)0 - (uint64_t)ms : (uint64_t)ms;

    snprintf(buf, cap, "%s%" PRIu64 ".%03u", ms < 0 ? "-" : "", abs_ms / 1000,
             (unsigned)(abs_ms % 1000));
}

void cli_metrics_format_sched(const char *labels, const struct sqle_sched_stats *v,
                              cli_text *out)
{
    char buf[64];

    counter(out, labels, "sqlease_fires_claimed_total",
            "Fires this process claimed in the fire table and started (each fire is claimed"
            " once by the whole fleet).", v->claimed);
    counter(out, labels, "sqlease_fire_reruns_total",
            "Abandoned fires this process claimed again and started (at-least-once jobs).",
            v->reruns);
    counter(out, labels, "sqlease_fires_skipped_total",
            "Fires this process recorded skipped (the job's previous run still ran).",
            v->skipped);
    counter(out, labels, "sqlease_fires_missed_total",
            "Fires nobody ran at their time that this process recorded missed.", v->missed);
    counter(out, labels, "sqlease_fires_abandoned_total",
            "Fires an older hold left running that this process recorded abandoned.",
            v->abandoned);
    counter(out, labels, "sqlease_fire_claims_lost_total",
            "Claims that found the fire already claimed by another hold.", v->lost_claims);
    counter(out, labels, "sqlease_fire_claim_failures_total",
            "Claims that failed with an error (sent again).", v->failures);
    snprintf(buf, sizeof buf, "%" PRIu64, v->running);
    metric(out, labels, "sqlease_fires_running", "gauge",
           "Fires whose command runs on this process now.", buf);
    signed_seconds(buf, sizeof buf, v->last_fire_late_ms);
    metric(out, labels, "sqlease_fire_late_seconds", "gauge",
           "Seconds the last fire started after its time, by the database's clock (0: none"
           " yet).", buf);
    signed_seconds(buf, sizeof buf, v->max_fire_late_ms);
    metric(out, labels, "sqlease_fire_late_max_seconds", "gauge",
           "The most seconds a fire started after its time since this process last took the"
           " lease.", buf);
}

/* A watcher holds nothing: its metrics say what the row says, so that
 * one watcher can tell a dashboard whether anyone holds the lease. */
void cli_metrics_format_row(const char *labels, const cli_metrics_row *v, cli_text *out)
{
    char buf[64];

    metric(out, labels, "sqlease_row_held", "gauge",
           "1 while the lease row shows a hold that has not expired (any owner), as last read.",
           v->held ? "1" : "0");
    snprintf(buf, sizeof buf, "%" PRId64, v->token);
    metric(out, labels, "sqlease_row_token", "gauge",
           "Fencing token in the lease row, as last read.", buf);
    seconds(buf, sizeof buf, v->held ? v->expires_in_ms : 0);
    metric(out, labels, "sqlease_row_expires_in_seconds", "gauge",
           "Seconds until the hold in the row expires unless renewed (0 when free), as last"
           " read.", buf);
    seconds(buf, sizeof buf, v->last_contact_ms);
    metric(out, labels, "sqlease_last_contact_seconds", "gauge",
           "Seconds since the database last answered (-1: never).", buf);
    counter(out, labels, "sqlease_statements_total", "Lease statements sent to the database.",
            v->reads);
    counter(out, labels, "sqlease_row_changes_total",
            "Changes of holder or token this watch has seen.", v->changes);
}

/* Write everything to the temporary file, then rename it over the file:
 * rename replaces it in one step, so a reader opens either the old file
 * or the new one.  No fsync: the file describes a running process and is
 * worthless after a crash. */
void cli_metrics_write(cli_metrics *m, const cli_metrics_values *v)
{
    cli_text text;
    FILE *f;
    int ok;

    if (m->path == NULL)
        return;
    cli_text_init(&text);
    cli_metrics_format(m->labels, v, &text);
    f = text.failed ? NULL : fopen(m->tmp, "w");
    if (f == NULL) {
        ok = 0;
        if (text.failed)
            errno = ENOMEM;
    } else {
        ok = fwrite(text.s, 1, text.len, f) == text.len;
        ok = fclose(f) == 0 && ok;
        ok = ok && sqle_file_replace(m->tmp, m->path) == 0;
    }
    cli_text_free(&text);
    if (!ok) {
        if (!m->failing)
            cli_log(SQLEASE_LOG_WARN, "cannot write the metrics file '%s': %s", m->path,
                    strerror(errno));
        m->failing = 1;
        remove(m->tmp);
        return;
    }
    if (m->failing)
        cli_log(SQLEASE_LOG_INFO, "the metrics file '%s' is written again", m->path);
    m->failing = 0;
    m->exists = 1;
}

void cli_metrics_close(cli_metrics *m)
{
    if (m->path != NULL && m->exists && remove(m->path) != 0 && errno != ENOENT)
        cli_log(SQLEASE_LOG_WARN, "cannot remove the metrics file '%s': %s", m->path,
                strerror(errno));
    free(m->path);
    free(m->tmp);
    memset(m, 0, sizeof *m);
}
