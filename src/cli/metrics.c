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

/* One metric: its HELP and TYPE lines and one sample. */
static void metric(FILE *f, const char *labels, const char *name, const char *type,
                   const char *help, const char *value)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s{%s} %s\n", name, help, name, type, name, labels,
            value);
}

/* Milliseconds as seconds with three decimals ("-1" stays "-1"). */
static void seconds(char *buf, size_t cap, int64_t ms)
{
    if (ms < 0)
        snprintf(buf, cap, "-1");
    else
        snprintf(buf, cap, "%" PRId64 ".%03d", ms / 1000, (int)(ms % 1000));
}

/* Write everything to the temporary file, then rename it over the file:
 * rename replaces it in one step, so a reader opens either the old file
 * or the new one.  No fsync: the file describes a running process and is
 * worthless after a crash. */
void cli_metrics_write(cli_metrics *m, const cli_metrics_values *v)
{
    char buf[64];
    FILE *f;
    int ok;

    if (m->path == NULL)
        return;
    f = fopen(m->tmp, "w");
    if (f == NULL) {
        ok = 0;
    } else {
        metric(f, m->labels, "sqlease_lease_held", "gauge",
               "1 while this process holds the lease (CMD may run), else 0.",
               v->held ? "1" : "0");
        snprintf(buf, sizeof buf, "%" PRId64, v->token);
        metric(f, m->labels, "sqlease_lease_token", "gauge",
               "Fencing token of the current or last hold (0: none yet).", buf);
        seconds(buf, sizeof buf, v->held ? v->deadline_in_ms : 0);
        metric(f, m->labels, "sqlease_lease_deadline_seconds", "gauge",
               "Seconds until CMD is stopped unless the lease is renewed (0 when not"
               " holding).", buf);
        seconds(buf, sizeof buf, v->last_contact_ms);
        metric(f, m->labels, "sqlease_last_contact_seconds", "gauge",
               "Seconds since the database last answered (-1: never).", buf);
        snprintf(buf, sizeof buf, "%" PRIu64, v->statements);
        metric(f, m->labels, "sqlease_statements_total", "counter",
               "Lease statements sent to the database.", buf);
        snprintf(buf, sizeof buf, "%" PRIu64, v->takes);
        metric(f, m->labels, "sqlease_takes_total", "counter",
               "Acquires that started a new hold (new fencing token).", buf);
        snprintf(buf, sizeof buf, "%" PRIu64, v->losses);
        metric(f, m->labels, "sqlease_losses_total", "counter",
               "Holds that ended other than by shutdown (lost, or not renewed in time).",
               buf);
        snprintf(buf, sizeof buf, "%" PRIu64, v->renew_failures);
        metric(f, m->labels, "sqlease_renew_failures_total", "counter",
               "Renews by the holder that failed with an error.", buf);
        ok = !ferror(f);
        ok = fclose(f) == 0 && ok;
        ok = ok && sqle_file_replace(m->tmp, m->path) == 0;
    }
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
