/*
 * cmd_run.c -- `sqlease run`: wait for the lease (at most --timeout; not
 * at all with --no-wait, and then exit with --conflict-exit-code), run
 * CMD once while the supervisor renews it, release (with --min-hold the
 * row stays held until the take + min-hold, on the database clock), and
 * exit at once with CMD's status (75 if the lease was lost while CMD ran;
 * 128+N if sqlease itself got signal N).  Run from an interactive shell,
 * CMD gets the terminal while it runs, and a Ctrl-Z suspends the whole
 * job (see mirror_stop).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "child.h"
#include "classify.h"
#include "internal.h"
#include "session.h"

/* The main thread looks at the signal flag and at CMD this often; the
 * callbacks wake it at once, so this bounds only those two. */
#define POLL_MS 50

/* What a shell (or env, nohup, timeout) exits with when it could not
 * start the command it was given (POSIX: not found, not executable). */
#define CMD_NOT_FOUND 127
#define CMD_NOT_EXECUTABLE 126

/* How the wait for CMD ended. */
enum { ENDED_EXIT, ENDED_LOST, ENDED_SIGNAL, ENDED_ERROR };

/* How the wait for the lease ended. */
enum { WAIT_STARTED, WAIT_SIGNAL, WAIT_NOEXEC, WAIT_TIMEOUT };

/* Block until the lease is held (then start CMD), a signal arrives, or
 * deadline_mono (-1: none) passes. */
static int wait_and_start(cli_session *s, char **cmd, sqle_child *child, int64_t *token,
                          int64_t deadline_mono)
{
    char err[512];

    for (;;) {
        cli_hold_view v;
        int64_t now, wake;
        int r;

        if (sqle_signal_received() != 0)
            return WAIT_SIGNAL;
        cli_hold_view_get(&s->hold, &v);
        r = cli_hold_start_child(&s->hold, child, cmd, s->name, s->owner, 1,
                                 cli_session_guard_armed, s, token, err, sizeof err);
        if (r == 1)
            return WAIT_STARTED;
        cli_session_guard_done(s); /* CMD never ran: its guard, if any, goes */
        if (r < 0) {
            cli_error("%s", err);
            return WAIT_NOEXEC;
        }
        cli_session_observe(s);
        now = sqle_mono_ms();
        if (deadline_mono >= 0 && now >= deadline_mono)
            return WAIT_TIMEOUT;
        wake = now + POLL_MS;
        if (deadline_mono >= 0 && deadline_mono < wake)
            wake = deadline_mono;
        cli_hold_wait(&s->hold, v.version, wake);
    }
}

/*
 * The job did not run: sqlease could not start CMD, or CMD is a shell or
 * wrapper that says in its status (127 not found, 126 not executable, as
 * POSIX shells and env(1) do) that it could not start what it was given.
 * A --min-hold would keep the row held for its whole length, and every
 * other host that fires then would give up while the job runs nowhere:
 * release at once instead, so that the next run (or one still waiting
 * with --timeout) takes it.  This host's failure is said in its own
 * output either way.
 */
static void release_unstarted(cli_session *s, const char *why)
{
    if (s->min_hold_ms <= 0)
        return;
    cli_log(SQLEASE_LOG_WARN, "lease '%s': %s; releasing the lease at once instead of keeping"
            " it for --min-hold", s->name, why);
    cli_session_release_at_once(s);
}

/*
 * The lease was not obtained: at once (--no-wait) or when --timeout ran
 * out.  If the database is failing, that is the answer (69, its error
 * said once); otherwise another owner holds the lease: the conflict exit
 * code, said in one line, or not at all with -q (a cron job on every host
 * would mail each losing host every night).
 */
static int give_up(cli_session *s, const cli_args *a, const cli_job_flags *f, int64_t waited)
{
    char reason[600], owner[SQLEASE_MAX_OWNER + 1] = "", waited_text[64] = "";
    char who[SQLE_QUOTED_ID_MAX];
    char data[SQLEASE_MAX_DATA + 1];
    int64_t token = 0, expires = 0;
    int r;

    if (cli_session_failing(s, reason, sizeof reason)) {
        /* After a wait, the error has been logged when it happened. */
        if (f->timeout_ms > 0)
            cli_error("lease '%s': gave up after %" PRId64 " ms; the database is failing"
                      " (the error is logged above)", s->name, waited);
        else
            cli_error("lease '%s': acquire failed: %s%s", s->name, reason,
                      cli_error_hint_text(s->db, NULL, reason));
        return CLI_EXIT_UNAVAILABLE;
    }
    if (a->verbosity < 0)
        return f->conflict_code;
    if (f->timeout_ms > 0)
        snprintf(waited_text, sizeof waited_text, "; gave up after %" PRId64 " ms", waited);
    r = cli_session_holder(s, owner, sizeof owner, &token, &expires, data, sizeof data);
    if (r > 0)
        cli_error("lease '%s' is held by %s (token %" PRId64 ", expires in %" PRId64 " ms%s%s)%s",
                  s->name, sqle_quote_id(owner, who, sizeof who), token, expires,
                  data[0] != '\0' ? ", data " : "", data, waited_text);
    else if (cli_hold_holder(&s->hold, owner, sizeof owner, &token) > 0)
        /* The row is free again (the winner's CMD was quick, and no
         * minimum hold kept it), but this run's own acquire saw who took
         * it: a herd of runs fired together names the one that ran. */
        cli_error("lease '%s' was taken by %s (token %" PRId64 ") as this run tried to take it;"
                  " free again now%s", s->name, sqle_quote_id(owner, who, sizeof who), token,
                  waited_text);
    else if (r == 0 && owner[0] != '\0')
        /* Nor did it see who did (its read showed the row free, the take
         * after it lost the race), but the winner's release kept its
         * name in the row. */
        cli_error("lease '%s' was held by %s (token %" PRId64 "), which has released it:"
                  " free again now%s", s->name, sqle_quote_id(owner, who, sizeof who), token,
                  waited_text);
    else if (r == 0)
        cli_error("lease '%s' was held by another owner (free again now)%s", s->name,
                  waited_text);
    else
        cli_error("lease '%s' is held by another owner%s", s->name, waited_text);
    return f->conflict_code;
}

/*
 * CMD has the terminal (an interactive `run`) and was stopped: Ctrl-Z, or
 * it touched the terminal from the background.  To the shell the job is
 * sqlease, so do what `sudo` does: take the terminal back and stop
 * sqlease's job the same way, so that the shell gets its prompt; once
 * the shell continues it (`fg`, `bg`), continue CMD, with the terminal if
 * we are in the foreground again.  While the job is stopped nothing
 * renews the lease: the hold's deadline passes, the guard (in a process
 * group of its own) stops CMD, and the resumed `run` exits 75.  A CMD
 * left stopped (it wants the terminal and the job is in the background)
 * has its stop kept in *parked_sig, to continue it after `fg`.
 */
static void mirror_stop(cli_session *s, sqle_child *child, int sig, int *parked_sig)
{
    cli_log(SQLEASE_LOG_INFO, "CMD (pid %ld) stopped by signal %d; suspending lease '%s'"
            " job (the lease is not renewed while suspended)", cli_child_pid(child), sig,
            s->name);
    (void)sqle_child_terminal(child, 0);
    sqle_job_suspend(sig);
    if (sqle_child_resume(child, sig)) {
        cli_log(SQLEASE_LOG_INFO, "continued; continuing CMD (pid %ld)", cli_child_pid(child));
        return;
    }
    cli_log(SQLEASE_LOG_WARN, "CMD (pid %ld) waits for the terminal, which this job does not"
            " have; it stays stopped until the job is in the foreground", cli_child_pid(child));
    *parked_sig = sig;
}

/* Watch CMD until it exits, the lease ends, or a signal arrives; in the
 * last two cases stop it first.  *code gets CMD's status.  CMD's exit
 * counts as the lease lost when the guard caused it: the guard acts only
 * once the hold's deadline has passed with sqlease not running. */
static int watch_child(cli_session *s, sqle_child *child, int64_t grace, int *code)
{
    int parked_sig = 0;

    for (;;) {
        cli_hold_view v;
        int r = cli_child_poll(child, grace, code);
        int sig = 0;

        if (r == 1) {
            int guarded = cli_session_guard_acted(s);

            cli_session_guard_done(s);
            cli_hold_child_gone(&s->hold);
            if (guarded) {
                cli_log(SQLEASE_LOG_ERROR, "lease '%s': the hold's deadline passed while"
                        " sqlease was stopped; its guard stopped CMD (status %d)", s->name,
                        *code);
                return ENDED_LOST;
            }
            return ENDED_EXIT;
        }
        if (r < 0)
            return ENDED_ERROR;
        if (parked_sig != 0 && sqle_child_resume(child, parked_sig))
            parked_sig = 0;
        if (sqle_child_stopped(child, &sig))
            (void)mirror_stop(s, child, sig, &parked_sig);
        cli_hold_view_get(&s->hold, &v);
        if (!v.held) {
            int64_t termed;

            /* The signal first: the line may have to wait for stderr. */
            cli_session_guard_stopping(s);
            termed = cli_child_term(child);
            cli_log(SQLEASE_LOG_ERROR, "lease '%s' %s while CMD ran (token %" PRId64 ");"
                    " stopping CMD", s->name, cli_stop_reason(v.stop_reason), v.token);
            *code = cli_child_finish(child, termed, grace);
            cli_session_guard_done(s);
            cli_hold_child_gone(&s->hold);
            return ENDED_LOST;
        }
        if (sqle_signal_received() != 0) {
            cli_session_guard_stopping(s);
            *code = cli_child_stop(child, grace);
            cli_session_guard_done(s);
            cli_hold_child_gone(&s->hold);
            return ENDED_SIGNAL;
        }
        cli_session_guard_tick(s);
        cli_session_observe(s);
        cli_hold_wait(&s->hold, v.version, sqle_mono_ms() + POLL_MS);
    }
}

int cli_cmd_run(const cli_args *a)
{
    cli_job_flags f;
    cli_session s;
    cli_hold_view v;
    sqle_child child;
    int64_t token = 0, t0 = sqle_mono_ms();
    int code = 0, rc, ended, started;

    cli_log_init(a, SQLEASE_LOG_WARN);
    rc = cli_job_flags_parse(a, 1, &f);
    if (rc != CLI_CONTINUE)
        return rc;
    rc = cli_session_start(a, &f, &s, 0);
    if (rc != CLI_CONTINUE)
        return rc;

    cli_session_observe(&s);
    cli_hold_view_get(&s.hold, &v);
    if (!v.held && f.timeout_ms == 0) {
        /* The first acquire's error, if any, is the answer. */
        rc = give_up(&s, a, &f, 0);
        cli_session_stop(&s);
        return rc;
    }
    (void)cli_session_first_error(&s, 1);
    if (!v.held)
        cli_log(SQLEASE_LOG_INFO, "lease '%s' is held by another owner; waiting", s.name);

    memset(&child, 0, sizeof child);
    started = wait_and_start(&s, f.cmd, &child, &token,
                             f.timeout_ms >= 0 ? t0 + f.timeout_ms : -1);
    if (started != WAIT_STARTED) {
        int sig = sqle_signal_received();
        if (started == WAIT_TIMEOUT)
            rc = give_up(&s, a, &f, sqle_mono_ms() - t0);
        else
            rc = started == WAIT_NOEXEC ? CLI_EXIT_NOEXEC : 128 + sig;
        if (started == WAIT_NOEXEC)
            release_unstarted(&s, "CMD could not be started");
        cli_session_stop(&s);
        return rc;
    }
    cli_log(SQLEASE_LOG_INFO, "lease '%s' held (token %" PRId64 "); started CMD (pid %ld)",
            s.name, token, cli_child_pid(&child));

    ended = watch_child(&s, &child, f.kill_grace_ms, &code);
    switch (ended) {
    case ENDED_EXIT:
        cli_log(SQLEASE_LOG_INFO, "CMD exited with status %d (token %" PRId64 ")", code, token);
        if (code == CMD_NOT_FOUND || code == CMD_NOT_EXECUTABLE)
            release_unstarted(&s, code == CMD_NOT_FOUND
                                      ? "CMD exited 127: its command was not found"
                                      : "CMD exited 126: its command could not be executed");
        rc = code;
        break;
    case ENDED_LOST:
        rc = CLI_EXIT_NOT_HELD;
        break;
    case ENDED_SIGNAL:
        cli_log(SQLEASE_LOG_INFO, "interrupted; stopped CMD (token %" PRId64 ")", token);
        rc = 128 + sqle_signal_received();
        break;
    default: {
        int64_t termed;

        cli_session_guard_stopping(&s);
        termed = cli_child_term(&child);
        cli_log(SQLEASE_LOG_ERROR, "cannot wait for CMD; stopping it");
        cli_child_finish(&child, termed, f.kill_grace_ms);
        cli_session_guard_done(&s);
        cli_hold_child_gone(&s.hold);
        rc = CLI_EXIT_OSERR;
        break;
    }
    }
    cli_session_stop(&s);
    return rc;
}
