/*
 * job.c -- the work the chaos harness has sqlease supervise.
 *
 * Started by `sqlease supervise` as its CMD (the harness binary again, in
 * job mode), it records `start` with its token (SQLEASE_TOKEN), then every
 * ~100 ms attempts a fenced write on the guarded row and records each
 * attempt, and records `stop` when told to stop (SIGTERM).  A write is
 *
 *   UPDATE g SET fence = :tok, last_writer = :inst, n = n + 1
 *    WHERE id = 1 AND fence <= :tok
 *
 * so the database itself refuses a write whose token is lower than one
 * already written: a holder that lost the lease without knowing it (frozen,
 * partitioned) cannot overwrite its successor's work.  With `--fence lease`
 * the guard is the library's own fence predicate instead of the token
 * comparison,
 *
 *   UPDATE g SET fence = :tok, last_writer = :inst, n = n + 1
 *    WHERE id = 1 AND $SQLEASE_FENCE_SQL
 *
 * which proves the hold in the same statement: on a replicated database
 * the write then counts on the lease row as the node it runs on sees it.
 * Event lines (one
 * write() each, times in CLOCK_MONOTONIC ms):
 *
 *   T start INST PID TOKEN SQLEASE_PID
 *   T write INST PID TOKEN A|R|E SENT      accepted / refused / error
 *   T stop  INST PID TOKEN
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chaos.h"
#include "db.h"
#include "sqlease.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* The job's database log goes to sqlease's stderr (the instance log). */
static void job_log(void *ud, int level, const char *line)
{
    (void)ud;
    if (level <= SQLEASE_LOG_WARN)
        fprintf(stderr, "chaos job %d: %s\n", (int)getpid(), line);
}

int ch_job_main(int argc, char **argv)
{
    const char *events = NULL, *dsn = NULL, *table = NULL, *tok_env, *fence = "token";
    const char *fence_sql = getenv("SQLEASE_FENCE_SQL");
    int nbind;
    int inst = -1;
    int64_t token, interval = 100;
    struct sigaction sa;
    sqlease_db *db = NULL;
    char sql[2048], writer[32];
    long pid = (long)getpid();

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--events") == 0)
            events = argv[i + 1];
        else if (strcmp(argv[i], "--instance") == 0)
            inst = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--dsn") == 0)
            dsn = argv[i + 1];
        else if (strcmp(argv[i], "--table") == 0)
            table = argv[i + 1];
        else if (strcmp(argv[i], "--fence") == 0)
            fence = argv[i + 1];
        else if (strcmp(argv[i], "--interval-ms") == 0)
            interval = atoll(argv[i + 1]);
    }
    tok_env = getenv("SQLEASE_TOKEN");
    if (events == NULL || dsn == NULL || table == NULL || inst < 0 || tok_env == NULL) {
        fprintf(stderr, "chaos job: needs --events --instance --dsn --table and "
                        "SQLEASE_TOKEN\n");
        return 64;
    }
    if (strcmp(fence, "lease") == 0 && (fence_sql == NULL || fence_sql[0] == '\0')) {
        fprintf(stderr, "chaos job: --fence lease needs SQLEASE_FENCE_SQL\n");
        return 64;
    }
    token = atoll(tok_env);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    ch_append(events, "%lld start %d %ld %lld %ld", (long long)ch_mono_ms(), inst, pid,
              (long long)token, (long)getppid());
    if (strcmp(fence, "lease") == 0) {
        snprintf(sql, sizeof sql,
                 "UPDATE %s SET fence = ?, last_writer = ?, n = n + 1 WHERE id = 1 AND %s",
                 table, fence_sql);
        nbind = 2;
    } else {
        snprintf(sql, sizeof sql,
                 "UPDATE %s SET fence = ?, last_writer = ?, n = n + 1 WHERE id = 1 AND "
                 "fence <= ?", table);
        nbind = 3;
    }
    snprintf(writer, sizeof writer, "i%d-%ld", inst, pid);

    while (!stop_requested) {
        sqlease_error err;
        int64_t sent, answered, rows = -1;
        db_bind b[3];
        int rc;
        char res;

        if (db == NULL) {
            sqlease_db_options o;

            sqlease_db_options_init(&o);
            o.conn = dsn;
            o.login_timeout_ms = 1000;
            o.query_timeout_ms = 1000;
            o.log = job_log;
            o.log_level = SQLEASE_LOG_WARN;
            if (sqlease_db_open(&db, &o, &err) != SQLEASE_OK) {
                db = NULL;
                ch_nap_ms(interval);
                continue;
            }
        }
        b[0].type = DB_INT64;
        b[0].i = token;
        b[0].s = NULL;
        b[1].type = DB_TEXT;
        b[1].i = 0;
        b[1].s = writer;
        b[2].type = DB_INT64;
        b[2].i = token;
        b[2].s = NULL;
        sent = ch_mono_ms();
        rc = sqle_db_exec(db, sql, b, nbind, NULL, 0, NULL, &rows, &err);
        answered = ch_mono_ms();
        res = rc != SQLEASE_OK ? 'E' : rows == 1 ? 'A' : rows == 0 ? 'R' : 'E';
        ch_append(events, "%lld write %d %ld %lld %c %lld", (long long)answered, inst, pid,
                  (long long)token, res, (long long)sent);
        if (!stop_requested)
            ch_nap_ms(sent + interval - ch_mono_ms());
    }
    ch_append(events, "%lld stop %d %ld %lld", (long long)ch_mono_ms(), inst, pid,
              (long long)token);
    sqlease_db_close(db);
    return 0;
}
