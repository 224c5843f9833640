/*
 * scheduler.c -- a tiny multi-instance scheduler built on libsqlease.
 *
 * Start it on several hosts (or several times on one) against the same
 * database: each prints "tick" once a second only while it holds the
 * lease, so exactly one of them ticks at a time, and another takes over
 * when the holder stops or dies.
 *
 *   cc scheduler.c $(pkg-config --cflags --libs sqlease) -o scheduler
 *   ./scheduler 'Driver=SQLite3;Database=/tmp/jobs.db' 10
 *
 * Arguments: connection string or DSN (default $SQLEASE_DSN, else the
 * embedded SQLite default), and how many seconds to run (default: until
 * SIGINT/SIGTERM).
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <sqlease.h>

static volatile sig_atomic_t quit;
static volatile sig_atomic_t holding;
static volatile long long token;

static void on_signal(int sig)
{
    (void)sig;
    quit = 1;
}

/* The supervisor calls these from its own threads: they only flip flags
 * that the main loop reads. */
static void started(void *ud, int64_t t)
{
    (void)ud;
    token = t;
    holding = 1;
}

static void stopped(void *ud, int reason)
{
    (void)ud;
    (void)reason;
    holding = 0;
}

int main(int argc, char **argv)
{
    sqlease_db_options dbo;
    sqlease_options o;
    sqlease_db *db = NULL;
    sqlease_supervisor *sup = NULL;
    sqlease_error err;
    const char *names[1] = { "example" };
    long seconds = argc > 2 ? atol(argv[2]) : -1;
    struct timespec second = { 1, 0 };
    int rc;

    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    sqlease_db_options_init(&dbo);
    dbo.conn = argc > 1 ? argv[1] : NULL;
    rc = sqlease_db_open(&db, &dbo, &err);
    if (rc != SQLEASE_OK) {
        fprintf(stderr, "scheduler: %s\n", err.message);
        return 69;
    }
    rc = sqlease_migrate(db, NULL, names, 1, &err);
    if (rc != SQLEASE_OK) {
        fprintf(stderr, "scheduler: %s\n", err.message);
        sqlease_db_close(db);
        return 69;
    }

    sqlease_options_init(&o);
    o.name = "example";
    o.ttl_ms = 3000;
    o.heartbeat_ms = 500;
    o.renew_deadline_ms = 1500;
    o.retry_ms = 250;
    o.on_started = started;
    o.on_stopped = stopped;
    rc = sqlease_supervisor_start(&sup, db, &o, &err);
    if (rc != SQLEASE_OK) {
        fprintf(stderr, "scheduler: %s\n", err.message);
        sqlease_db_close(db);
        return rc == SQLEASE_EINVAL ? 64 : 69;
    }

    while (!quit && seconds != 0) {
        if (holding)
            printf("tick (token %lld)\n", (long long)token);
        else
            printf("waiting\n");
        fflush(stdout);
        nanosleep(&second, NULL);
        if (seconds > 0)
            seconds--;
    }

    sqlease_supervisor_free(sup); /* stops the work, then releases */
    sqlease_db_close(db);
    return 0;
}
