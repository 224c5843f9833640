/*
 * metrics.h -- `--metrics-file PATH`: the lease's state in Prometheus'
 * text exposition format, for node_exporter's textfile collector (which
 * reads the *.prom files of one directory) or anything that reads such a
 * file.  The file is replaced as a whole on every write (a temporary file
 * beside it, then a rename), so a reader never sees half of one, and it
 * is removed when sqlease exits.  The same text is what GET /metrics
 * answers (--http; `cron --http` adds its scheduler's counters), and
 * `status --watch --http` answers what its reads of the row say in the
 * same format.
 */
#ifndef SQLEASE_CLI_METRICS_H
#define SQLEASE_CLI_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "text.h"

/* One snapshot of what the file says. */
typedef struct cli_metrics_values {
    int held;                  /* CMD may run: this process holds the lease */
    int64_t token;             /* of the current or last hold, 0 none */
    int64_t deadline_in_ms;    /* until CMD is stopped unless renewed; 0 not held */
    int64_t last_contact_ms;   /* since the database last answered; -1 never */
    uint64_t statements, takes, losses, renew_failures;
} cli_metrics_values;

typedef struct cli_metrics {
    char *path;       /* NULL: no metrics file */
    char *tmp;        /* path.PID.tmp, beside it */
    char labels[1024]; /* name="...",owner="..." (escaped); "" until set */
    int exists;       /* we wrote the file and have not removed it */
    int failing;      /* the last write failed (logged once) */
} cli_metrics;

/* Take the path (NULL: off).  Returns 0, or -1 with a message in err
 * (a name that does not end in .prom, out of memory). */
int cli_metrics_init(cli_metrics *m, const char *path, char *err, size_t cap);

/* Check that a file can be created beside `path` (creates and removes
 * the temporary file).  Returns 0, or -1 with a message in err. */
int cli_metrics_probe(cli_metrics *m, char *err, size_t cap);

/* The labels every sample carries. */
void cli_metrics_labels(cli_metrics *m, const char *name, const char *owner);

/* Write the file anew.  A failure is logged (once until a write
 * succeeds again) and otherwise ignored.  No-op when off. */
void cli_metrics_write(cli_metrics *m, const cli_metrics_values *v);

/* The text the file holds for v, with labels (cli_metrics_labels'
 * form) on every sample, appended to out. */
void cli_metrics_format(const char *labels, const cli_metrics_values *v, cli_text *out);

/* What `cron --http` adds after cli_metrics_format's text: its
 * scheduler's counters (scheduler.h), with the same labels: the fires it
 * claimed, ran again, recorded skipped, missed or abandoned, the claims
 * it lost and the ones that failed, the fires running, and how late the
 * last fire and the latest since the take started after their time. */
struct sqle_sched_stats;
void cli_metrics_format_sched(const char *labels, const struct sqle_sched_stats *v,
                              cli_text *out);

/* What `status --watch` has read of the row. */
typedef struct cli_metrics_row {
    int held;                 /* the row shows a hold that has not expired */
    int64_t token;            /* the row's token */
    int64_t expires_in_ms;    /* until that hold expires; 0 when free */
    int64_t last_contact_ms;  /* since a read last succeeded; -1 never */
    uint64_t reads;           /* reads of the row sent */
    uint64_t changes;         /* changes of holder or token seen */
} cli_metrics_row;

/* Its text, with labels (name="...") on every sample, appended to out. */
void cli_metrics_format_row(const char *labels, const cli_metrics_row *v, cli_text *out);

/* Remove the file (if written) and free what init took. */
void cli_metrics_close(cli_metrics *m);

/* The exposition format's escaping of a label value (backslash, double
 * quote, newline) into out, truncated to cap.  Exposed for the tests. */
void cli_metrics_escape(const char *in, char *out, size_t cap);

#endif
