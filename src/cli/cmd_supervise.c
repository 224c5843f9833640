/*
 * cmd_supervise.c -- `sqlease supervise`: keep CMD running exactly while
 * this process holds the lease.  A fresh CMD on every take; a CMD that
 * exits while held is restarted with backoff, and one that keeps failing
 * at once (--crash-limit) makes this host give the lease up for a while
 * (--crash-pause) so that a healthy host gets it; on loss CMD is stopped
 * and the process waits to hold again; SIGTERM/SIGINT stop CMD, release
 * the lease and exit 0.  With --handoff this host is a ready follower:
 * SIGTERM hands the lease over to the best ready follower instead of
 * releasing it (asked for before CMD is stopped, so that the target is
 * watching when the row is reserved for it), SIGUSR1 drains the host
 * (lowest priority, and the lease handed over if it holds) and SIGUSR2
 * gives it its priority back.  A database that is away at start is waited for;
 * under systemd (Type=notify) the service manager hears when supervise
 * is contending, what it is doing, and when it stops.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "child.h"
#include "notify.h"
#include "os.h"
#include "session.h"

#define POLL_MS 50
#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS 30000
#define BACKOFF_RESET_AFTER_MS 60000

/* What the main loop keeps between rounds. */
typedef struct supervise_loop {
    cli_session *s;
    char **cmd;
    int64_t grace_ms;
    int cannot_start;  /* CMD could not be started: exit 127 */
    sqle_child child;
    int running;            /* CMD is running */
    int64_t token;          /* CMD's token */
    int64_t started_mono;   /* when CMD was started */
    uint64_t seen_starts;   /* holds seen, to spot a fresh one */
    int64_t next_start;     /* no CMD start before this (backoff) */
    int64_t backoff_ms;     /* the next restart delay */
    int crash_limit;        /* quick failures in a row that pause; 0 never */
    int64_t crash_window_ms;
    int64_t crash_pause_ms;
    int quick_failures;     /* quick failures in a row so far */
    int64_t paused_until;   /* out of contention until then; 0 not paused */
} supervise_loop;

static void log_waiting(const supervise_loop *L)
{
    cli_log(SQLEASE_LOG_INFO, "waiting for lease '%s' as owner %s", L->s->name, L->s->owner);
}

/* A crash loop should not hammer the host, but a CMD that ran for a
 * while and then died deserves a quick restart: the delay doubles from
 * 1 s to 30 s and starts over once CMD has run for a minute. */
static void schedule_restart(supervise_loop *L, int code, int64_t now)
{
    int64_t ran = now - L->started_mono;

    if (ran >= BACKOFF_RESET_AFTER_MS)
        L->backoff_ms = BACKOFF_FIRST_MS;
    cli_log(SQLEASE_LOG_WARN, "CMD exited with status %d after %" PRId64 " ms while holding"
            " lease '%s' (token %" PRId64 "); restarting in %" PRId64 " ms", code, ran,
            L->s->name, L->token, L->backoff_ms);
    L->next_start = now + L->backoff_ms;
    L->backoff_ms = L->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : L->backoff_ms * 2;
}

/* Stop CMD; `say` (may be NULL) is logged at `level` right after the
 * SIGTERM, never before it: a line may have to wait for stderr. */
static void stop_child(supervise_loop *L, const char *why, int level, const char *say)
{
    int64_t termed;
    int code;

    cli_session_guard_stopping(L->s);
    termed = cli_child_term(&L->child);
    if (say != NULL)
        cli_log(level, "%s", say);
    code = cli_child_finish(&L->child, termed, L->grace_ms);
    cli_session_guard_done(L->s);
    cli_hold_child_gone(&L->s->hold);
    L->running = 0;
    cli_log(SQLEASE_LOG_INFO, "stopped CMD (token %" PRId64 ", status %d): %s", L->token,
            code, why);
}

static void try_start(supervise_loop *L, int64_t now)
{
    char err[512];
    /* Never the terminal's foreground: the terminal's Ctrl-C must reach
     * supervise itself (stop CMD, release, exit), not only CMD. */
    int r = cli_hold_start_child(&L->s->hold, &L->child, L->cmd, L->s->name, L->s->owner, 0,
                                 cli_session_guard_armed, L->s, &L->token, err, sizeof err);

    if (r != 1)
        cli_session_guard_done(L->s); /* CMD never ran: its guard, if any, goes */
    if (r == 1) {
        L->running = 1;
        L->started_mono = now;
        cli_log(SQLEASE_LOG_INFO, "lease '%s' held (token %" PRId64 "): started CMD (pid %ld)",
                L->s->name, L->token, cli_child_pid(&L->child));
    } else if (r < 0) {
        /* CMD cannot be started at all (not found, not executable): this
         * host would hold the lease and run nothing, while hosts that can
         * run it wait.  Give the lease up and fail loudly instead. */
        cli_error("%s; releasing the lease and exiting", err);
        L->cannot_start = 1;
        (void)now;
    }
}

/*
 * CMD exited on its own while the lease was held.  A failure soon after
 * its start (non-zero status, or a signal, within --crash-window) counts
 * towards --crash-limit; anything else starts the count over.  A CMD
 * that the guard stopped (sqlease was frozen past the hold's deadline)
 * never comes here: the lease failed then, not CMD.  At the
 * limit this host is the problem (a bad configuration, a missing file):
 * holding on to the lease would keep the job from the hosts that can run
 * it, so the lease is released and this host stays out of contention for
 * --crash-pause, which is longer than the ttl, so that another host
 * certainly gets its turn.  Returns 1 when it paused.
 */
static int crashed(supervise_loop *L, int code, int64_t now)
{
    int64_t ran = now - L->started_mono;
    char note[200], until[40];

    if (code != 0 && ran < L->crash_window_ms)
        L->quick_failures++;
    else
        L->quick_failures = 0;
    if (L->crash_limit <= 0 || L->quick_failures < L->crash_limit)
        return 0;
    cli_log(SQLEASE_LOG_WARN, "CMD failed %d time%s in a row, within %" PRId64 " ms of its"
            " start each time (last status %d); releasing lease '%s' (token %" PRId64 ") and"
            " staying out of contention for %" PRId64 " ms so that another host can take it",
            L->quick_failures, L->quick_failures == 1 ? "" : "s", L->crash_window_ms, code,
            L->s->name, L->token, L->crash_pause_ms);
    cli_format_time(sqle_wall_ms() + L->crash_pause_ms, until, sizeof until);
    snprintf(note, sizeof note, "paused after %d quick CMD failures (last status %d);"
             " contending again at %s", L->quick_failures, code, until);
    cli_session_pause(L->s, note);
    L->quick_failures = 0;
    L->paused_until = sqle_mono_ms() + L->crash_pause_ms;
    return 1;
}

/* One round: react to CMD exiting, to the lease ending, to a new hold.
 * Everything slow (stopping CMD) happens here on the main thread. */
static void step(supervise_loop *L, const cli_hold_view *v, int64_t now)
{
    if (L->running) {
        int code = 0;
        int r = cli_child_poll(&L->child, L->grace_ms, &code);

        if (r == 1) {
            int guard_stopped = cli_session_guard_acted(L->s);

            if (guard_stopped)
                cli_log(SQLEASE_LOG_WARN, "lease '%s': the hold's deadline passed while"
                        " sqlease was stopped; its guard stopped CMD (token %" PRId64 ")",
                        L->s->name, L->token);
            cli_session_guard_done(L->s);
            cli_hold_child_gone(&L->s->hold);
            L->running = 0;
            /* A CMD the guard stopped did not fail: the hold was lost
             * (on_stopped may not have run yet, so v->held can still say
             * 1).  Neither a crash towards --crash-limit nor a restart
             * under that hold: the next hold starts CMD afresh. */
            if (v->held && !guard_stopped && !crashed(L, code, now))
                schedule_restart(L, code, now);
            return;
        }
        if (r < 0) {
            stop_child(L, "cannot wait for it", SQLEASE_LOG_ERROR, NULL);
            L->next_start = now + L->backoff_ms;
            return;
        }
        if (!v->held) {
            char say[SQLEASE_MAX_NAME + 200];

            snprintf(say, sizeof say, "lease '%s' %s (token %" PRId64 "); stopping CMD",
                     L->s->name, cli_stop_reason(v->stop_reason), L->token);
            stop_child(L, "lease ended",
                       v->stop_reason == SQLEASE_STOP_SHUTDOWN ||
                               v->stop_reason == SQLEASE_STOP_HANDOFF
                           ? SQLEASE_LOG_INFO
                           : SQLEASE_LOG_WARN,
                       say);
            log_waiting(L);
        }
        return;
    }
    if (v->starts != L->seen_starts) {
        /* Every take is a fresh start: no backoff carried over. */
        L->seen_starts = v->starts;
        L->next_start = now;
        L->backoff_ms = BACKOFF_FIRST_MS;
    }
    if (v->held && now >= L->next_start)
        try_start(L, now);
}

/*
 * SIGUSR1 (drain) and SIGUSR2 (undrain), with --handoff: a host about to
 * go down for maintenance takes the lowest priority, so that hand-overs
 * and preemption pass it by, and hands the lease over now if it holds
 * (it keeps it when no other host is ready, and says so); SIGUSR2 puts
 * its own priority back.  The priority outlives a crash pause: the next
 * supervisor gets it.
 */
static void drain(supervise_loop *L, const cli_job_flags *f, int sig)
{
    cli_session *s = L->s;
    int64_t p = sig == 1 ? SQLEASE_PRIORITY_MIN : f->ho.priority;
    sqlease_error err;
    int rc;

    memset(&err, 0, sizeof err);
    s->priority = p;
    if (s->sup != NULL && sqlease_supervisor_set_priority(s->sup, p, &err) != SQLEASE_OK)
        cli_log(SQLEASE_LOG_WARN, "lease '%s': could not publish priority %" PRId64 ": %s",
                s->name, p, err.message);
    if (sig != 1) {
        cli_log(SQLEASE_LOG_INFO, "SIGUSR2: lease '%s': priority %" PRId64 " again", s->name, p);
        return;
    }
    cli_log(SQLEASE_LOG_INFO, "SIGUSR1: lease '%s': draining (lowest priority)", s->name);
    if (!L->running || s->sup == NULL)
        return;
    rc = sqlease_supervisor_handoff(s->sup, NULL, &err);
    if (rc == SQLEASE_OK)
        cli_log(SQLEASE_LOG_INFO, "lease '%s': handing it over (token %" PRId64 "); stopping "
                "CMD", s->name, L->token);
    else
        cli_log(SQLEASE_LOG_WARN, "lease '%s': keeping it: %s", s->name, err.message);
}

/* SIGTERM with --handoff, while CMD runs under the hold: ask for the
 * hand-over to the best ready follower before CMD is stopped.  The
 * library lets the work run on for a retry (its lead), so that the
 * target, which reads the row every retry, has seen the request and
 * reads it fast by the time the row is reserved for it; then on_stopped
 * comes, and CMD is stopped as on any stop of the work; the hand-over
 * goes once on_stopped has returned, that is once CMD is gone.  Waits
 * for that on_stopped, within the hold's renew deadline.  With no ready
 * follower (or a database that does not answer) the stop releases as
 * usual. */
static void shutdown_handoff(supervise_loop *L)
{
    cli_session *s = L->s;
    sqlease_error err;
    cli_hold_view v;
    int64_t until;
    int rc;

    memset(&err, 0, sizeof err);
    rc = sqlease_supervisor_handoff(s->sup, NULL, &err);
    if (rc != SQLEASE_OK) {
        cli_log(rc == SQLEASE_NO_FOLLOWER ? SQLEASE_LOG_INFO : SQLEASE_LOG_WARN,
                "%s; releasing it instead", err.message);
        return;
    }
    until = sqle_mono_ms() + s->renew_deadline_ms;
    for (;;) {
        int64_t now = sqle_mono_ms();
        int code = 0;

        cli_hold_view_get(&s->hold, &v);
        if (!v.held || now >= until)
            break;
        /* CMD may end on its own meanwhile: reaped here, as the loop
         * would. */
        if (cli_child_poll(&L->child, L->grace_ms, &code) == 1) {
            cli_session_guard_done(s);
            cli_hold_child_gone(&s->hold);
            L->running = 0;
            break;
        }
        cli_session_guard_tick(s);
        cli_hold_wait(&s->hold, v.version, now + POLL_MS < until ? now + POLL_MS : until);
    }
}

int cli_cmd_supervise(const cli_args *a)
{
    cli_job_flags f;
    cli_session s;
    supervise_loop L;
    cli_hold_view v;
    int rc;

    cli_log_init(a, SQLEASE_LOG_INFO);
    rc = cli_job_flags_parse(a, 0, &f);
    if (rc != CLI_CONTINUE)
        return rc;
    (void)cli_notify_init();
    rc = cli_session_start(a, &f, &s, 1);
    if (rc != CLI_CONTINUE) {
        cli_session_stopping(&s);
        cli_notify_close();
        return rc;
    }

    memset(&L, 0, sizeof L);
    L.s = &s;
    L.cmd = f.cmd;
    L.grace_ms = f.kill_grace_ms;
    L.backoff_ms = BACKOFF_FIRST_MS;
    L.crash_limit = f.crash_limit;
    L.crash_window_ms = f.crash_window_ms;
    L.crash_pause_ms = f.crash_pause_ms;
    (void)cli_session_first_error(&s, 1);
    cli_hold_view_get(&s.hold, &v);
    if (!v.held)
        log_waiting(&L);
    if (f.ho.handoff && cli_os_drain_setup() != 0)
        cli_log(SQLEASE_LOG_WARN, "cannot route SIGUSR1 and SIGUSR2 (drain)");
    cli_session_ready(&s);

    while (sqle_signal_received() == 0 && !L.cannot_start) {
        int64_t now = sqle_mono_ms();
        int64_t wake = now + POLL_MS;

        if (L.paused_until != 0 && now >= L.paused_until) {
            L.paused_until = 0;
            cli_log(SQLEASE_LOG_INFO, "contending for lease '%s' again", s.name);
            rc = cli_session_resume(&s);
            if (rc != CLI_CONTINUE)
                break;
        }
        if (f.ho.handoff) {
            int d = cli_os_drain_take();
            if (d != 0)
                drain(&L, &f, d);
        }
        cli_session_observe(&s);
        cli_hold_view_get(&s.hold, &v);
        step(&L, &v, now);
        if (L.running)
            cli_session_guard_tick(&s);
        if (!L.running && v.held && L.next_start > now && L.next_start < wake)
            wake = L.next_start;
        cli_hold_wait(&s.hold, v.version, wake);
    }
    cli_session_stopping(&s);
    if (L.cannot_start || rc != CLI_CONTINUE) {
        cli_session_stop(&s);
        cli_notify_close();
        return L.cannot_start ? CLI_EXIT_NOEXEC : rc;
    }
    {
        char say[64];

        snprintf(say, sizeof say, "signal %d: shutting down", sqle_signal_received());
        if (L.running && f.ho.handoff && s.sup != NULL)
            shutdown_handoff(&L);
        if (L.running)
            stop_child(&L, "shutting down", SQLEASE_LOG_INFO, say);
        else
            cli_log(SQLEASE_LOG_INFO, "%s", say);
    }
    cli_session_stop(&s);
    cli_notify_close();
    return CLI_EXIT_OK;
}
