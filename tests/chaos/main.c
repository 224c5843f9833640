/*
 * main.c -- sqlease-chaos: prove "one holder at a time" under faults.
 *
 *   sqlease-chaos [--seconds N] [--seed S] [--scenario chaos|kernel|
 *                 reconnect-short|reconnect-long|partition-shutdown|galera|
 *                 contend]
 *                 [--kinds base|all] [--faults KIND,...] [--short-fault D]
 *                 [--long-fault D] [--give-up D] [--sqlease PATH] [--dsn CONN]
 *                 [--instance-dsn CONN]... [--fence token|lease] [--rounds N]
 *                 [--db-port P] [--stop-cmd CMD] [--start-cmd CMD]
 *                 [--restart-cmd CMD] [--pids-cmd CMD] [--instances N] [--keep]
 *
 * It starts N real `sqlease supervise` processes (each in a process group
 * of its own) on one lease; their CMD is this binary in job mode (job.c),
 * which logs start/stop and does fenced writes.  On a server database each
 * instance's sqlease and each CMD reach the server through a port of their
 * own ("leg") of an in-process TCP proxy (proxy.c), so that a fault can
 * single out one client's connections.  The `chaos` scenario then injects
 * one fault at a time, drawn from a seeded shuffle of the kinds that apply
 * to the database, checks what each fault must not break as it happens (a
 * killed sqlease's CMD gone within 1 s, a frozen sqlease's CMD gone by its
 * deadline, a resumed CMD gone within 1 s of SIGCONT), waits for the fleet
 * to settle on a single holder again, and goes on until the time is up.
 * The `kernel` scenario (scenarios.c) injects a fixed list once each: the
 * kernel dropping packets (nft.c), a frozen server, a server that never
 * answers, SIGTERM with the fleet cut off, a job-control stop, a shared
 * owner id.  The reconnect scenarios restart the database once, briefly or
 * for longer than the renew deadline, with longer timings.  At the end
 * every instance is stopped, leftovers are counted and killed, and
 * analyze.c gives the verdict, the recovery after every fault among it.
 * Exit 0 only when nothing was violated.
 *
 * The database: --dsn, else $SQLEASE_TEST_DSN, else an SQLite file in the
 * harness's own temporary directory.  Server restarts need --stop-cmd and
 * --start-cmd ($SQLEASE_DB_STOP / $SQLEASE_DB_START, which ci/postgres.sh
 * and ci/mariadb.sh export), a frozen server --pids-cmd
 * ($SQLEASE_DB_PIDS_CMD), partitions the server's port (--db-port,
 * $SQLEASE_DB_PORT), kernel faults root and nft; faults without what they
 * need are skipped, and said so.  SQLite has none of these.
 *
 * A replicated database (galera.c): --instance-dsn, given once per node,
 * makes instance i talk to node i % nodes (its sqlease and its CMD alike,
 * with no proxy), and the `galera` scenario kills, cuts off, freezes and
 * restarts the holder's node through $SQLEASE_GALERA_CTL (ci/galera.sh);
 * `contend` counts what concurrent takes on different nodes meet.  With
 * --fence lease the CMD's writes are guarded by the library's own fence
 * predicate (SQLEASE_FENCE_SQL) instead of a token comparison, so a stale
 * write accepted is the predicate's failure.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

ch_harness CH;
volatile sig_atomic_t ch_interrupted;

static void on_signal(int sig)
{
    (void)sig;
    ch_interrupted = 1;
}

/* Progress on stdout, stamped with seconds since the start. */
void say(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    int64_t t = CH.t0 ? ch_mono_ms() - CH.t0 : 0;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("[%4lld.%03llds] %s\n", (long long)(t / 1000), (long long)(t % 1000), msg);
    fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* Observing: the event file and CMD liveness                          */
/* ------------------------------------------------------------------ */

ch_cmd *cmd_by_pid(long pid)
{
    for (size_t i = CH.obs.ncmds; i-- > 0;)
        if (CH.obs.cmds[i].pid == pid)
            return &CH.obs.cmds[i];
    return NULL;
}

static void ev_line(const char *line)
{
    long long t, tok, sent;
    int inst;
    long pid, sup;
    char kind[16], res;

    if (sscanf(line, "%lld %15s", &t, kind) != 2)
        return;
    if (strcmp(kind, "start") == 0 &&
        sscanf(line, "%*d %*s %d %ld %lld %ld", &inst, &pid, &tok, &sup) == 4) {
        ch_cmd *c = ch_obs_add_cmd(&CH.obs);
        c->inst = inst;
        c->sup = sup;
        c->pid = pid;
        c->token = tok;
        c->start = t;
    } else if (strcmp(kind, "write") == 0 &&
               sscanf(line, "%*d %*s %d %ld %lld %c %lld", &inst, &pid, &tok, &res,
                      &sent) == 5) {
        ch_write w;
        w.inst = inst;
        w.token = tok;
        w.sent = sent;
        w.answered = t;
        w.result = res;
        ch_obs_add_write(&CH.obs, &w);
    } else if (strcmp(kind, "stop") == 0 &&
               sscanf(line, "%*d %*s %d %ld %lld", &inst, &pid, &tok) == 3) {
        ch_cmd *c = cmd_by_pid(pid);
        /* The death may have been seen before this line was read: the
         * job's own stop time is the earlier, exact one. */
        if (c != NULL && (c->end < 0 || t < c->end)) {
            c->end = t;
            c->end_kind = 's';
        }
    }
}

/* Read what was appended since the last call; only whole lines count. */
static void ev_read(void)
{
    int fd = open(CH.events, O_RDONLY | O_CLOEXEC);
    char buf[8192];
    ssize_t r;

    if (fd < 0)
        return;
    if (lseek(fd, CH.ev_off, SEEK_SET) < 0) {
        close(fd);
        return;
    }
    while ((r = read(fd, buf, sizeof buf)) > 0) {
        CH.ev_off += r;
        for (ssize_t i = 0; i < r; i++) {
            if (buf[i] == '\n') {
                CH.ev_part[CH.ev_plen] = '\0';
                ev_line(CH.ev_part);
                CH.ev_plen = 0;
            } else if (CH.ev_plen < sizeof CH.ev_part - 1) {
                CH.ev_part[CH.ev_plen++] = buf[i];
            }
        }
    }
    close(fd);
}

/* One look at everything: new events, CMDs that died without a stop
 * line, instances that exited without being asked to. */
void monitor(void)
{
    int64_t now;

    ev_read();
    now = ch_mono_ms();
    for (size_t i = 0; i < CH.obs.ncmds; i++) {
        ch_cmd *c = &CH.obs.cmds[i];
        if (c->end < 0 && ch_pid_gone(c->pid)) {
            c->end = now;
            c->end_kind = 'd';
            ch_append(CH.events, "%lld dead %d %ld %lld", (long long)now, c->inst, c->pid,
                      (long long)c->token);
        }
    }
    for (int i = 0; i < CH.ninst; i++) {
        instance *in = &CH.inst[i];
        int st;

        if (in->pid > 0 && !in->expect_exit && waitpid(in->pid, &st, WNOHANG) == in->pid) {
            ch_violation(&CH.obs, "instance %d (sqlease pid %d) exited by itself with %s %d", i,
                         (int)in->pid, WIFEXITED(st) ? "status" : "signal",
                         WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
            in->pid = 0;
            restart_instance(i);
        }
    }
}

/* Sleep while watching, 10 ms at a time. */
void sleep_mon(int64_t ms)
{
    int64_t until = ch_mono_ms() + ms;

    for (;;) {
        int64_t left;

        monitor();
        left = until - ch_mono_ms();
        if (left <= 0 || ch_interrupted)
            return;
        ch_nap_ms(left < 10 ? left : 10);
    }
}

int open_cmds(void)
{
    int n = 0;

    for (size_t i = 0; i < CH.obs.ncmds; i++)
        if (CH.obs.cmds[i].end < 0)
            n++;
    return n;
}

/* The one running CMD, or -1 (none, or more than one). */
long holder_index(void)
{
    long found = -1;

    for (size_t i = 0; i < CH.obs.ncmds; i++)
        if (CH.obs.cmds[i].end < 0) {
            if (found >= 0)
                return -1;
            found = (long)i;
        }
    return found;
}

/* Wait for exactly one CMD to have been running for stable_ms.  Returns
 * its index, or -1 after timeout_ms. */
long await_single_holder(int64_t stable_ms, int64_t timeout_ms)
{
    int64_t until = ch_mono_ms() + timeout_ms;

    while (!ch_interrupted && ch_mono_ms() < until) {
        long h;

        monitor();
        h = holder_index();
        if (h >= 0 && ch_mono_ms() - CH.obs.cmds[h].start >= stable_ms)
            return h;
        ch_nap_ms(10);
    }
    return -1;
}

/* Wait until pid is gone or the monotonic clock reaches `until`. */
int await_gone(long pid, int64_t until)
{
    for (;;) {
        monitor();
        if (ch_pid_gone(pid))
            return 1;
        if (ch_mono_ms() >= until || ch_interrupted)
            return ch_pid_gone(pid);
        ch_nap_ms(5);
    }
}

/* ------------------------------------------------------------------ */
/* Instances                                                           */
/* ------------------------------------------------------------------ */

static void dur(char *buf, size_t cap, const char *flag, int64_t ms)
{
    snprintf(buf, cap, "%s=%lldms", flag, (long long)ms);
}

/* Start instance i: `sqlease supervise` (or, in MODE_RUN, one `sqlease
 * run`) in its own process group, tied to the harness by the death signal,
 * output appended to inst<i>.log.  Its CMD reaches the database through a
 * proxy leg of its own, so that a fault can tell sqlease's traffic from
 * its CMD's. */
int start_instance(int i)
{
    char ttl[48], hb[48], rd[48], retry[48], qt[48], lt[48], grace[48], ev[900], id[16];
    char log[700];
    char *argv[40];
    int n = 0;
    pid_t parent = getpid(), pid;
    instance *in = &CH.inst[i];

    dur(ttl, sizeof ttl, "--ttl", CH.ttl);
    dur(hb, sizeof hb, "--heartbeat", CH.hb);
    dur(rd, sizeof rd, "--renew-deadline", CH.rd);
    dur(retry, sizeof retry, "--retry", CH.retry);
    dur(qt, sizeof qt, "--query-timeout", CH.qtimeout);
    dur(lt, sizeof lt, "--login-timeout", CH.login_timeout);
    dur(grace, sizeof grace, "--kill-grace", CH.grace);
    snprintf(ev, sizeof ev, "%s", CH.events);
    snprintf(id, sizeof id, "%d", i);
    snprintf(log, sizeof log, "%s/inst%d.log", CH.dir, i);
    argv[n++] = (char *)CH.bin;
    argv[n++] = "--dsn";
    argv[n++] = in->conn;
    argv[n++] = "--table";
    argv[n++] = CH.lease_table;
    argv[n++] = "--name";
    argv[n++] = LEASE_NAME;
    argv[n++] = ttl;
    argv[n++] = hb;
    argv[n++] = rd;
    argv[n++] = retry;
    argv[n++] = qt;
    argv[n++] = lt;
    if (in->owner[0] != '\0') {
        argv[n++] = "--owner";
        argv[n++] = in->owner;
    }
    argv[n++] = "-v";
    argv[n++] = in->mode == MODE_RUN ? "run" : "supervise";
    argv[n++] = grace;
    argv[n++] = "--";
    argv[n++] = CH.self;
    argv[n++] = "__job";
    argv[n++] = "--events";
    argv[n++] = ev;
    argv[n++] = "--instance";
    argv[n++] = id;
    argv[n++] = "--dsn";
    argv[n++] = in->jconn;
    argv[n++] = "--table";
    argv[n++] = CH.guarded_table;
    argv[n++] = "--fence";
    argv[n++] = (char *)CH.fence;
    argv[n] = NULL;

    pid = fork();
    if (pid == 0) {
        int out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
        int nul = open("/dev/null", O_RDONLY);

        setpgid(0, 0);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(125);
        if (out < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
            _exit(126);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execv(argv[0], argv);
        _exit(127);
    }
    if (pid < 0) {
        perror("chaos: fork");
        return -1;
    }
    setpgid(pid, pid);
    in->pid = pid;
    in->expect_exit = 0;
    return 0;
}

void restart_instance(int i)
{
    if (start_instance(i) == 0)
        say("instance %d restarted (sqlease pid %d)", i, (int)CH.inst[i].pid);
}

/* Wait for instance i's sqlease to exit (it is our child); SIGKILL its
 * group after timeout_ms.  Returns its wait status, or -1. */
int reap_instance(int i, int64_t timeout_ms)
{
    instance *in = &CH.inst[i];
    int64_t until = ch_mono_ms() + timeout_ms;
    int st = -1;

    if (in->pid <= 0)
        return -1;
    in->expect_exit = 1;
    for (;;) {
        pid_t r = waitpid(in->pid, &st, WNOHANG);
        if (r == in->pid)
            break;
        if (r < 0 && errno != EINTR) {
            st = -1;
            break;
        }
        if (ch_mono_ms() >= until) {
            say("instance %d (pid %d) did not exit in %lld ms; SIGKILL to its group", i,
                (int)in->pid, (long long)timeout_ms);
            kill(-in->pid, SIGCONT);
            kill(-in->pid, SIGKILL);
            while (waitpid(in->pid, &st, 0) < 0 && errno == EINTR)
                ;
            break;
        }
        monitor();
        ch_nap_ms(5);
    }
    in->pid = 0;
    return st;
}

/* ------------------------------------------------------------------ */
/* The database                                                        */
/* ------------------------------------------------------------------ */

static int sql(const char *text, int64_t *rows)
{
    sqlease_error err;
    int rc = sqle_db_exec(CH.db, text, NULL, 0, NULL, 0, NULL, rows, &err);

    if (rc != SQLEASE_OK)
        say("statement failed (%s): %s: %s", sqlease_strerror(rc), text, err.message);
    return rc;
}

static int setup_tables(void)
{
    sqlease_error err;
    const char *names[] = {LEASE_NAME};
    char q[512];
    int rc;

    snprintf(CH.lease_table, sizeof CH.lease_table, "chaos_lease_%ld", (long)getpid());
    snprintf(CH.guarded_table, sizeof CH.guarded_table, "chaos_guarded_%ld", (long)getpid());
    rc = sqlease_migrate(CH.db, CH.lease_table, names, 1, &err);
    if (rc != SQLEASE_OK) {
        fprintf(stderr, "chaos: migrate: %s\n", err.message);
        return -1;
    }
    snprintf(q, sizeof q, "DROP TABLE IF EXISTS %s", CH.guarded_table);
    (void)sql(q, NULL);
    snprintf(q, sizeof q,
             "CREATE TABLE %s (id INTEGER PRIMARY KEY, fence BIGINT NOT NULL, "
             "last_writer VARCHAR(64) NOT NULL, n BIGINT NOT NULL)", CH.guarded_table);
    if (sql(q, NULL) != SQLEASE_OK)
        return -1;
    snprintf(q, sizeof q, "INSERT INTO %s (id, fence, last_writer, n) VALUES (1, 0, '', 0)",
             CH.guarded_table);
    return sql(q, NULL) == SQLEASE_OK ? 0 : -1;
}

static void drop_tables(void)
{
    char q[256];

    if (CH.db == NULL)
        return;
    snprintf(q, sizeof q, "DROP TABLE %s", CH.guarded_table);
    (void)sql(q, NULL);
    snprintf(q, sizeof q, "DROP TABLE %s", CH.lease_table);
    (void)sql(q, NULL);
}

/* The guarded row after the run: its fence must be at least the highest
 * token of an accepted write. */
static void check_guarded_row(void)
{
    sqlease_error err;
    char q[256];
    int64_t fence = -1, n = -1, best = 0;
    db_out out[2];
    int has = 0, rc = SQLEASE_EDB;

    memset(out, 0, sizeof out);
    out[0].type = DB_INT64;
    out[0].i = &fence;
    out[1].type = DB_INT64;
    out[1].i = &n;
    snprintf(q, sizeof q, "SELECT fence, n FROM %s WHERE id = 1", CH.guarded_table);
    for (int tries = 0; tries < 20 && rc != SQLEASE_OK; tries++) {
        rc = sqle_db_exec(CH.db, q, NULL, 0, out, 2, &has, NULL, &err);
        if (rc != SQLEASE_OK)
            ch_nap_ms(500);
    }
    for (size_t i = 0; i < CH.obs.nwrites; i++)
        if (CH.obs.writes[i].result == 'A' && CH.obs.writes[i].token > best)
            best = CH.obs.writes[i].token;
    if (rc != SQLEASE_OK || !has) {
        ch_violation(&CH.obs, "cannot read the guarded row: %s", err.message);
        return;
    }
    say("guarded row: fence %lld, %lld writes applied", (long long)fence, (long long)n);
    CH.obs.row_fence = fence;
    CH.obs.row_applied = n;
    if (fence < best)
        ch_violation(&CH.obs, "guarded row fence %lld is below accepted token %lld",
                     (long long)fence, (long long)best);
}

/* Run a shell command (a server stop/start) while still watching: the
 * harness must not stop observing CMDs while a server restarts.  Output
 * goes to db-commands.log.  Returns the exit status, or -1. */
int run_cmd(const char *what, const char *cmd)
{
    char log[700];
    pid_t pid;
    int st;
    int64_t t = ch_mono_ms();

    snprintf(log, sizeof log, "%s/db-commands.log", CH.dir);
    ch_append(log, "---- %s: %s", what, cmd);
    pid = fork();
    if (pid == 0) {
        int out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
        int nul = open("/dev/null", O_RDONLY);
        if (out >= 0 && nul >= 0) {
            dup2(nul, 0);
            dup2(out, 1);
            dup2(out, 2);
        }
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    if (pid < 0)
        return -1;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return -1;
        monitor();
        ch_nap_ms(10);
    }
    say("%s took %lld ms (%s)", what, (long long)(ch_mono_ms() - t),
        WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "FAILED");
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int db_stop(void)
{
    int rc = run_cmd("database stop", CH.stop_cmd);

    CH.db_down = 1;
    return rc;
}

static int db_start(void)
{
    int rc = run_cmd("database start", CH.start_cmd);

    if (rc == 0)
        CH.db_down = 0;
    return rc;
}

/* ------------------------------------------------------------------ */
/* Faults                                                              */
/* ------------------------------------------------------------------ */

ch_fault *fault_begin(int kind, int inst, const char *detail)
{
    int64_t now = ch_mono_ms();

    ch_append(CH.events, "%lld fault %s %d %s", (long long)now, ch_fault_names[kind], inst,
              detail);
    say("fault %s: instance %d %s", ch_fault_names[kind], inst, detail);
    return ch_obs_add_fault(&CH.obs, kind, inst, now);
}

void fault_heal(size_t fi)
{
    int64_t now = ch_mono_ms();

    CH.obs.faults[fi].healed = now;
    ch_append(CH.events, "%lld heal %s %d", (long long)now,
              ch_fault_names[CH.obs.faults[fi].kind], CH.obs.faults[fi].inst);
}

void note_max(int64_t *slot, int64_t v)
{
    if (*slot < v)
        *slot = v;
}

/* First CMD start (by any instance, a restarted one included) at or
 * after `t`, within timeout_ms; returns the delay, or -1. */
int64_t await_successor(int64_t t, int64_t timeout_ms)
{
    int64_t until = t + timeout_ms;

    for (;;) {
        monitor();
        for (size_t i = 0; i < CH.obs.ncmds; i++)
            if (CH.obs.cmds[i].start >= t)
                return CH.obs.cmds[i].start - t;
        if (ch_mono_ms() >= until || ch_interrupted)
            return -1;
        ch_nap_ms(10);
    }
}

void describe(char *buf, size_t cap, long h)
{
    const ch_cmd *c = &CH.obs.cmds[h];

    snprintf(buf, cap, "(sqlease pid %d, CMD pid %ld, token %lld)", (int)CH.inst[c->inst].pid,
             c->pid, (long long)c->token);
}

/* SIGKILL the holder's sqlease: its CMD must be gone within 1 s, and
 * another instance must hold within ttl + retry. */
static void fault_kill(long h)
{
    ch_cmd c = CH.obs.cmds[h];
    char d[160];
    int64_t t, succ;

    describe(d, sizeof d, h);
    fault_begin(F_KILL, c.inst, d);
    CH.inst[c.inst].expect_exit = 1;
    t = ch_mono_ms();
    kill(CH.inst[c.inst].pid, SIGKILL);
    if (!await_gone(c.pid, t + 1000))
        ch_violation(&CH.obs, "kill-holder: CMD pid %ld of instance %d still running 1 s after "
                     "its sqlease was killed", c.pid, c.inst);
    reap_instance(c.inst, 2000);
    if (ch_group_members(CH.inst[c.inst].pid) > 0)
        ch_violation(&CH.obs, "kill-holder: instance %d's process group outlived sqlease",
                     c.inst);
    ch_nap_ms(200);
    restart_instance(c.inst);
    succ = await_successor(t, CH.ttl + CH.retry + 3000);
    if (succ < 0 || succ > CH.ttl + CH.retry + 1000)
        ch_violation(&CH.obs, "kill-holder: no successor within ttl + retry + 1 s (%lld ms)",
                     (long long)succ);
    if (succ >= 0)
        note_max(&CH.obs.crash_successor_max, succ);
}

/* SIGTERM the holder's sqlease: it stops CMD, releases, and another
 * instance holds within one retry (plus a second for CMD's start). */
static void fault_graceful(long h)
{
    ch_cmd c = CH.obs.cmds[h];
    char d[160];
    int64_t t, succ;
    int st;

    describe(d, sizeof d, h);
    fault_begin(F_GRACEFUL, c.inst, d);
    t = ch_mono_ms();
    CH.inst[c.inst].expect_exit = 1;
    kill(CH.inst[c.inst].pid, SIGTERM);
    st = reap_instance(c.inst, 10000);
    if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
        ch_violation(&CH.obs, "graceful-stop: instance %d exited with wait status %d", c.inst,
                     st);
    succ = await_successor(t, CH.retry + CH.grace + 3000);
    if (succ < 0 || succ > CH.retry + CH.grace + 1000)
        ch_violation(&CH.obs, "graceful-stop: no successor within retry + kill grace + 1 s "
                     "(%lld ms)", (long long)succ);
    if (succ >= 0)
        note_max(&CH.obs.graceful_successor_max, succ);
    restart_instance(c.inst);
}

/* SIGSTOP the whole instance (sqlease, its guard, CMD's group) for longer
 * than the ttl: a successor takes over meanwhile; after SIGCONT the
 * resumed CMD must be gone within 1 s, and only until then may it
 * overlap. */
static void fault_pause(long h)
{
    ch_cmd c = CH.obs.cmds[h];
    char d[160];
    pid_t pg = CH.inst[c.inst].pid;
    int64_t t, cont;
    size_t fi;

    describe(d, sizeof d, h);
    fault_begin(F_PAUSE, c.inst, d);
    fi = CH.obs.nfaults - 1;
    t = ch_mono_ms();
    kill(-pg, SIGSTOP);
    kill(-(pid_t)c.pid, SIGSTOP);
    sleep_mon(CH.ttl + 1500);
    cont = ch_mono_ms();
    kill(-pg, SIGCONT);
    kill(-(pid_t)c.pid, SIGCONT);
    fault_heal(fi);
    {
        ch_cmd *cc = cmd_by_pid(c.pid);
        if (cc != NULL) {
            cc->allow_from = t;
            cc->allow_until = cont + 1000;
        }
    }
    if (!await_gone(c.pid, cont + 1000)) {
        ch_violation(&CH.obs, "pause-instance: resumed CMD pid %ld of instance %d still running "
                     "1 s after SIGCONT", c.pid, c.inst);
    } else {
        const ch_cmd *cc = cmd_by_pid(c.pid);
        if (cc != NULL && cc->end >= 0)
            note_max(&CH.obs.resume_stop_max, cc->end > cont ? cc->end - cont : 0);
    }
}

/* SIGSTOP the holder's sqlease alone: CMD keeps running, so only the guard
 * can stop it, and it must by the deadline (at most renew_deadline after
 * the freeze) plus the guard's slack. */
static void fault_freeze(long h)
{
    ch_cmd c = CH.obs.cmds[h];
    char d[160];
    pid_t pid = CH.inst[c.inst].pid;
    int64_t t, bound;
    size_t fi;

    describe(d, sizeof d, h);
    fault_begin(F_FREEZE, c.inst, d);
    fi = CH.obs.nfaults - 1;
    t = ch_mono_ms();
    kill(pid, SIGSTOP);
    bound = t + CH.rd + CH.slack + 500;
    if (!await_gone(c.pid, bound)) {
        ch_violation(&CH.obs, "freeze-sqlease: CMD pid %ld of instance %d still running %lld ms "
                     "after its sqlease was frozen (renew deadline %lld ms)", c.pid, c.inst,
                     (long long)(ch_mono_ms() - t), (long long)CH.rd);
    } else {
        const ch_cmd *cc = cmd_by_pid(c.pid);
        if (cc != NULL && cc->end >= 0)
            note_max(&CH.obs.freeze_stop_max, cc->end - t);
    }
    sleep_mon(t + CH.ttl + 1000 - ch_mono_ms());
    kill(pid, SIGCONT);
    fault_heal(fi);
}

/* Blackhole the holder's proxy port for longer than the ttl: its CMD must
 * stop by the deadline (plus the kill grace: the job may be stuck in a
 * write through the partition and need the SIGKILL). */
static void fault_partition(long h)
{
    ch_cmd c = CH.obs.cmds[h];
    char d[160];
    int64_t t, bound;
    size_t fi;

    describe(d, sizeof d, h);
    fault_begin(F_PARTITION, c.inst, d);
    fi = CH.obs.nfaults - 1;
    t = ch_mono_ms();
    ch_proxy_blackhole(CH.proxy, c.inst, 1);
    ch_proxy_blackhole(CH.proxy, CH.ninst + c.inst, 1);
    bound = t + CH.rd + CH.slack + CH.grace + 500;
    if (!await_gone(c.pid, bound))
        ch_violation(&CH.obs, "partition: CMD pid %ld of instance %d still running %lld ms after "
                     "the partition began", c.pid, c.inst, (long long)(ch_mono_ms() - t));
    sleep_mon(t + CH.ttl + 2000 - ch_mono_ms());
    ch_proxy_blackhole(CH.proxy, c.inst, 0);
    ch_proxy_blackhole(CH.proxy, CH.ninst + c.inst, 0);
    fault_heal(fi);
}

/* No CMD may start while the database is down (from t_down, when its
 * stop command returned, to t_start, when its start command began); and
 * one must start within a retry of t_up, when the start command returned
 * (the server may answer a little before that: such a start counts as 0). */
static void check_db_outage(const char *what, int64_t t_down, int64_t t_start, int64_t t_up)
{
    int64_t back;

    for (size_t i = 0; i < CH.obs.ncmds; i++)
        if (CH.obs.cmds[i].start > t_down && CH.obs.cmds[i].start < t_start)
            ch_violation(&CH.obs, "%s: instance %d started CMD (token %lld) while the database "
                         "was down", what, CH.obs.cmds[i].inst, (long long)CH.obs.cmds[i].token);
    back = await_successor(t_start, t_up - t_start + CH.retry + 5000);
    if (back >= 0)
        back = back > t_up - t_start ? back - (t_up - t_start) : 0;
    if (back < 0 || back > CH.retry + 1000)
        ch_violation(&CH.obs, "%s: no holder within one retry (+1 s) of the database coming "
                     "back (%lld ms)", what, (long long)back);
    if (back >= 0)
        note_max(&CH.obs.db_back_holder_max, back);
}

static void fault_restart_short(void)
{
    size_t fi;

    fault_begin(F_RESTART_SHORT, -1, "(database restart)");
    fi = CH.obs.nfaults - 1;
    if (CH.restart_cmd != NULL) {
        CH.db_down = 1;
        if (run_cmd("database restart", CH.restart_cmd) == 0)
            CH.db_down = 0;
    } else {
        db_stop();
        db_start();
    }
    fault_heal(fi);
    if (CH.db_down)
        ch_violation(&CH.obs, "restart-short: the database did not come back");
}

/* Down past the renew deadline: every CMD must be stopped by then, none
 * may start while the server is down, and one must start within a retry
 * of its return. */
static void fault_restart_long(void)
{
    int64_t t_down, t_start, t_up;
    size_t fi;

    fault_begin(F_RESTART_LONG, -1, "(database down past the renew deadline)");
    fi = CH.obs.nfaults - 1;
    db_stop();
    t_down = ch_mono_ms();
    sleep_mon(CH.rd + CH.slack + CH.grace + 700);
    for (size_t i = 0; i < CH.obs.ncmds; i++)
        if (CH.obs.cmds[i].end < 0)
            ch_violation(&CH.obs, "restart-long: instance %d's CMD pid %ld still running %lld ms "
                         "after the database went away", CH.obs.cmds[i].inst, CH.obs.cmds[i].pid,
                         (long long)(ch_mono_ms() - t_down));
    sleep_mon(ch_rng_range(0, 1500));
    t_start = ch_mono_ms();
    if (db_start() != 0) {
        ch_violation(&CH.obs, "restart-long: the database did not come back");
        return;
    }
    t_up = ch_mono_ms();
    fault_heal(fi);
    check_db_outage("restart-long", t_down, t_start, t_up);
}

/* Another connection opens a transaction that locks the lease row for
 * longer than the ttl: the holder cannot renew (its statement waits for
 * the lock, up to the query timeout) and must stop by its deadline. */
static void fault_hung(long h)
{
    ch_cmd c = CH.obs.cmds[h];
    const char *begin = strcmp(CH.dialect, "sqlite") == 0 ? "BEGIN IMMEDIATE"
                        : strcmp(CH.dialect, "mysql") == 0 ? "START TRANSACTION"
                        : strcmp(CH.dialect, "sqlserver") == 0 ? "BEGIN TRANSACTION"
                        : "BEGIN";
    char q[256], d[160];
    int64_t t, bound;
    size_t fi;

    /* The harness's connection may have died with a server restart: the
     * first statement after one fails and reconnects. */
    if (sql(begin, NULL) != SQLEASE_OK && sql(begin, NULL) != SQLEASE_OK) {
        say("hung-statement: cannot open a transaction; skipped");
        return;
    }
    snprintf(q, sizeof q, "UPDATE %s SET version = version WHERE name = '%s'", CH.lease_table,
             LEASE_NAME);
    if (sql(q, NULL) != SQLEASE_OK) {
        (void)sql("ROLLBACK", NULL);
        say("hung-statement: cannot lock the lease row; skipped");
        return;
    }
    describe(d, sizeof d, h);
    fault_begin(F_HUNG, c.inst, d);
    fi = CH.obs.nfaults - 1;
    t = ch_mono_ms();
    bound = t + CH.rd + CH.slack + CH.grace + 500;
    if (!await_gone(c.pid, bound))
        ch_violation(&CH.obs, "hung-statement: CMD pid %ld of instance %d still running %lld ms "
                     "after the lease row was locked", c.pid, c.inst,
                     (long long)(ch_mono_ms() - t));
    sleep_mon(t + CH.ttl + 1000 - ch_mono_ms());
    if (sql("ROLLBACK", NULL) != SQLEASE_OK)
        say("hung-statement: ROLLBACK failed; the connection is dropped instead");
    fault_heal(fi);
    for (size_t i = 0; i < CH.obs.ncmds; i++)
        if (CH.obs.cmds[i].start > t && CH.obs.cmds[i].start < CH.obs.faults[fi].healed)
            say("note: instance %d took the lease while its row was locked",
                CH.obs.cmds[i].inst);
}

/* ------------------------------------------------------------------ */
/* Scenarios                                                           */
/* ------------------------------------------------------------------ */

int kind_applies(int k)
{
    int server = strcmp(CH.dialect, "sqlite") != 0;

    switch (k) {
    case F_PARTITION:
        return server && CH.proxy != NULL;
    case F_RESTART_SHORT:
        return server && (CH.restart_cmd != NULL || (CH.stop_cmd != NULL && CH.start_cmd != NULL));
    case F_RESTART_LONG:
        return server && CH.stop_cmd != NULL && CH.start_cmd != NULL;
    case F_RESET:
        return 0;
    default:
        return k < F_FIRST_KERNEL ? 1 : kernel_kind_applies(k);
    }
}

void run_fault(int kind, long h)
{
    switch (kind) {
    case F_KILL: fault_kill(h); break;
    case F_PAUSE: fault_pause(h); break;
    case F_FREEZE: fault_freeze(h); break;
    case F_GRACEFUL: fault_graceful(h); break;
    case F_PARTITION: fault_partition(h); break;
    case F_RESTART_SHORT: fault_restart_short(); break;
    case F_RESTART_LONG: fault_restart_long(); break;
    case F_HUNG: fault_hung(h); break;
    default: run_kernel_fault(kind, h); break;
    }
}

/* When the last fault ended (the start of the run before the first). */
int64_t last_fault_end(void)
{
    const ch_fault *f;

    if (CH.obs.nfaults == 0)
        return CH.t0;
    f = &CH.obs.faults[CH.obs.nfaults - 1];
    return f->healed > 0 ? f->healed : f->at;
}

/* Faults one at a time from a shuffled bag of the kinds that apply, so a
 * run of a couple of minutes sees every kind; each followed by a wait for
 * the fleet to settle on a single holder again.  The kernel, server and
 * job-control kinds join the bag with --kinds all (the long soak). */
static void scenario_chaos(void)
{
    int bag[F_NKINDS], nbag = 0, next = 0;
    int last = CH.kinds_all ? F_NKINDS : F_FIRST_KERNEL;
    int64_t end = CH.t0 + CH.seconds * 1000;

    for (int k = 0; k < last; k++)
        if (k != F_RESET && !kind_applies(k))
            say("fault %s does not apply here; skipped", ch_fault_names[k]);
    while (!ch_interrupted) {
        long h;

        h = settle(last_fault_end(), 0);
        if (h < 0) {
            ch_violation(&CH.obs, "no single holder within %lld s%s",
                         (long long)(CH.give_up / 1000),
                         CH.obs.nfaults ? " after the last fault" : " of the start");
            return;
        }
        if (ch_mono_ms() + 5000 > end)
            break;
        if (next == nbag) {
            nbag = 0;
            for (int k = 0; k < last; k++)
                if (kind_applies(k))
                    bag[nbag++] = k;
            for (int i = nbag - 1; i > 0; i--) {
                int j = (int)ch_rng_range(0, i), tmp = bag[i];
                bag[i] = bag[j];
                bag[j] = tmp;
            }
            next = 0;
        }
        run_fault(bag[next++], h);
        sleep_mon(ch_rng_range(200, 1000));
    }
    if (!ch_interrupted && ch_mono_ms() < end)
        sleep_mon(end - ch_mono_ms());
}

/* The database restarted for less than renew_deadline - heartbeat: the
 * holder must ride it out (no stop, no handover). */
static void scenario_reconnect_short(void)
{
    long h = await_single_holder(1000, 30000);
    ch_cmd c;
    int64_t t0, t1;
    size_t fi;

    if (h < 0) {
        ch_violation(&CH.obs, "reconnect-short: no single holder within 30 s of the start");
        return;
    }
    c = CH.obs.cmds[h];
    fault_begin(F_RESTART_SHORT, c.inst, "(database restart under a holder)");
    fi = CH.obs.nfaults - 1;
    t0 = ch_mono_ms();
    if (CH.restart_cmd != NULL) {
        CH.db_down = 1;
        if (run_cmd("database restart", CH.restart_cmd) == 0)
            CH.db_down = 0;
    } else {
        db_stop();
        db_start();
    }
    t1 = ch_mono_ms();
    fault_heal(fi);
    say("database was away for at most %lld ms (renew deadline - heartbeat: %lld ms)",
        (long long)(t1 - t0), (long long)(CH.rd - CH.hb));
    if (CH.db_down) {
        ch_violation(&CH.obs, "reconnect-short: the database did not come back");
        return;
    }
    if (t1 - t0 >= CH.rd - CH.hb)
        ch_violation(&CH.obs, "reconnect-short: the restart took %lld ms, not less than renew "
                     "deadline - heartbeat (%lld ms): the scenario cannot show anything",
                     (long long)(t1 - t0), (long long)(CH.rd - CH.hb));
    /* Past the deadline the holder had at the restart: it must have
     * renewed through a new connection to be still running. */
    sleep_mon(t0 + CH.rd + 2000 - ch_mono_ms());
    for (size_t i = 0; i < CH.obs.ncmds; i++) {
        const ch_cmd *x = &CH.obs.cmds[i];
        if (x->pid == c.pid && x->end >= 0)
            ch_violation(&CH.obs, "reconnect-short: the holder's CMD stopped at +%lld ms",
                         (long long)(x->end - t0));
        if (x->start > t0)
            ch_violation(&CH.obs, "reconnect-short: instance %d started CMD (token %lld) at "
                         "+%lld ms: a handover or a restart", x->inst, (long long)x->token,
                         (long long)(x->start - t0));
    }
    if (CH.obs.nviolations == 0)
        say("reconnect-short: the holder (instance %d, token %lld) kept working throughout",
            c.inst, (long long)c.token);
}

/* The database down for longer than the renew deadline: the holder stops
 * by its deadline, nobody works while it is down, and exactly one
 * instance holds within one retry of its return. */
static void scenario_reconnect_long(void)
{
    long h = await_single_holder(1000, 30000);
    ch_cmd c;
    int64_t t_down, t_start, t_up, stopped_at = -1;
    size_t fi;

    if (h < 0) {
        ch_violation(&CH.obs, "reconnect-long: no single holder within 30 s of the start");
        return;
    }
    c = CH.obs.cmds[h];
    fault_begin(F_RESTART_LONG, c.inst, "(database down past the renew deadline)");
    fi = CH.obs.nfaults - 1;
    db_stop();
    t_down = ch_mono_ms();
    sleep_mon(CH.rd + 3000);
    for (size_t i = 0; i < CH.obs.ncmds; i++) {
        const ch_cmd *x = &CH.obs.cmds[i];
        if (x->pid == c.pid)
            stopped_at = x->end;
        if (x->end < 0 || x->end > t_down + CH.rd + CH.slack + 500)
            ch_violation(&CH.obs, "reconnect-long: instance %d's CMD (token %lld) %s",
                         x->inst, (long long)x->token,
                         x->end < 0 ? "still running with the database down"
                                    : "stopped after its renew deadline");
    }
    if (stopped_at >= 0)
        say("the holder stopped %lld ms after the database went away (renew deadline %lld ms)",
            (long long)(stopped_at - t_down), (long long)CH.rd);
    t_start = ch_mono_ms();
    if (db_start() != 0) {
        ch_violation(&CH.obs, "reconnect-long: the database did not come back");
        return;
    }
    t_up = ch_mono_ms();
    fault_heal(fi);
    check_db_outage("reconnect-long", t_down, t_start, t_up);
    sleep_mon(3000);
    if (open_cmds() != 1)
        ch_violation(&CH.obs, "reconnect-long: %d CMDs running 3 s after the first start, "
                     "expected exactly 1", open_cmds());
}

/* Shutdown during a partition: sqlease.h promises that stopping a
 * supervisor waits for a statement in flight no longer than the query
 * timeout.  The holder is cut off (its statements hang: no answer, no
 * error), then sent SIGTERM; it must exit within a few query timeouts,
 * long before the partition heals. */
static void scenario_partition_shutdown(void)
{
    long h = await_single_holder(1000, 30000);
    ch_cmd c;
    int64_t t, bound, heal_at;
    int st = -1, exited = 0;
    size_t fi;
    pid_t pid;

    if (h < 0 || CH.proxy == NULL) {
        ch_violation(&CH.obs, "partition-shutdown: %s", CH.proxy == NULL
                     ? "needs a server database and its port" : "no single holder");
        return;
    }
    c = CH.obs.cmds[h];
    pid = CH.inst[c.inst].pid;
    fault_begin(F_PARTITION, c.inst, "(then SIGTERM to its sqlease)");
    fi = CH.obs.nfaults - 1;
    ch_proxy_blackhole(CH.proxy, c.inst, 1);
    ch_proxy_blackhole(CH.proxy, CH.ninst + c.inst, 1);
    sleep_mon(CH.hb + 500); /* a renew is now in flight, unanswered */
    t = ch_mono_ms();
    CH.inst[c.inst].expect_exit = 1;
    kill(pid, SIGTERM);
    bound = t + 3 * CH.qtimeout + CH.grace + 1000;
    heal_at = t + 30000;
    while (ch_mono_ms() < heal_at && !ch_interrupted) {
        if (waitpid(pid, &st, WNOHANG) == pid) {
            exited = 1;
            break;
        }
        monitor();
        ch_nap_ms(10);
    }
    if (exited) {
        say("partitioned sqlease exited %lld ms after SIGTERM", (long long)(ch_mono_ms() - t));
        CH.inst[c.inst].pid = 0;
    }
    if (!exited || ch_mono_ms() > bound)
        ch_violation(&CH.obs, "partition-shutdown: sqlease (pid %d) %s %lld ms after SIGTERM "
                     "(query timeout %lld ms): stopping waits on a statement the network "
                     "never answers", (int)pid, exited ? "exited only" : "still running",
                     (long long)(ch_mono_ms() - t), (long long)CH.qtimeout);
    ch_proxy_blackhole(CH.proxy, c.inst, 0);
    ch_proxy_blackhole(CH.proxy, CH.ninst + c.inst, 0);
    fault_heal(fi);
    if (!exited) {
        int64_t healed = ch_mono_ms();
        reap_instance(c.inst, 20000);
        say("after the heal it exited in %lld ms", (long long)(ch_mono_ms() - healed));
    }
    /* The others take over once the released (or expired) row allows:
     * that is this fault's recovery, so the run ends only after it. */
    restart_instance(c.inst);
    (void)settle(CH.obs.faults[fi].healed, 0);
}

/* ------------------------------------------------------------------ */
/* Set-up, tear-down, main                                             */
/* ------------------------------------------------------------------ */

/* Everything the harness started is stopped here, whatever happened:
 * partitions healed, the server started again, every process resumed,
 * every instance asked to stop (SIGTERM), then whatever is left killed
 * and counted as orphaned. */
static void teardown(void)
{
    CH.obs.t_end = ch_mono_ms();
    say("shutting down");
    scenarios_teardown(); /* kernel rules gone, server resumed, every leg forwarding */
    galera_teardown();    /* every node resumed, connected and running */
    if (CH.db_down && CH.start_cmd != NULL)
        db_start();
    for (int i = 0; i < CH.ninst; i++)
        if (CH.inst[i].pid > 0) {
            kill(-CH.inst[i].pid, SIGCONT);
            CH.inst[i].expect_exit = 1;
        }
    for (size_t i = 0; i < CH.obs.ncmds; i++)
        if (CH.obs.cmds[i].end < 0)
            kill(-(pid_t)CH.obs.cmds[i].pid, SIGCONT);
    for (int i = 0; i < CH.ninst; i++)
        if (CH.inst[i].pid > 0)
            kill(CH.inst[i].pid, SIGTERM);
    for (int i = 0; i < CH.ninst; i++) {
        pid_t pg = CH.inst[i].pid;
        int st;

        if (pg <= 0)
            continue;
        st = reap_instance(i, 15000);
        /* supervise exits 0 on SIGTERM; run 143 (128 + SIGTERM) */
        if (!(WIFEXITED(st) && WEXITSTATUS(st) == (CH.inst[i].mode == MODE_RUN ? 143 : 0)))
            ch_violation(&CH.obs, "instance %d did not exit 0 on SIGTERM (wait status %d)", i,
                         st);
        if (ch_group_members(pg) > 0) {
            CH.obs.orphans++;
            ch_violation(&CH.obs, "instance %d left processes in its group %d", i, (int)pg);
            kill(-pg, SIGKILL);
        }
    }
    ch_nap_ms(200);
    monitor();
    for (size_t i = 0; i < CH.obs.ncmds; i++) {
        long pid = CH.obs.cmds[i].pid;
        if (!ch_pid_gone(pid) || ch_group_members(pid) > 0) {
            CH.obs.orphans++;
            ch_violation(&CH.obs, "orphaned CMD pid %ld (instance %d) still running", pid,
                         CH.obs.cmds[i].inst);
            kill(-(pid_t)pid, SIGKILL);
            kill((pid_t)pid, SIGKILL);
        }
    }
    ch_proxy_stop(CH.proxy);
    CH.proxy = NULL;
}

static void usage(void)
{
    printf("usage: sqlease-chaos [--seconds N] [--seed S]\n"
           "                     [--scenario chaos|kernel|reconnect-short|reconnect-long|"
           "partition-shutdown|galera|contend|failover]\n"
           "                     [--kinds base|all] [--faults KIND,...] [--short-fault D]\n"
           "                     [--long-fault D]\n"
           "                     [--give-up D] [--sqlease PATH] [--dsn CONN] [--db-host H]\n"
           "                     [--db-port P] [--stop-cmd CMD] [--start-cmd CMD]\n"
           "                     [--restart-cmd CMD] [--pids-cmd CMD] [--instances N] [--keep]\n"
           "                     [--instance-dsn CONN]... [--fence token|lease] [--rounds N]\n"
           "Durations take a unit (500ms, 2s).  Environment: SQLEASE_BIN, SQLEASE_TEST_DSN,\n"
           "SQLEASE_DB_PORT, SQLEASE_DB_STOP, SQLEASE_DB_START, SQLEASE_DB_RESTART,\n"
           "SQLEASE_DB_PIDS_CMD.  Kernel faults (nftables) need root and nft; without them\n"
           "they are skipped, and said so.  Exit 0 when no rule was violated.\n");
}

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);

    return v != NULL && v[0] != '\0' ? v : dflt;
}

/* A duration flag's value through the library's own parser (a unit is
 * required), so the harness takes exactly what the CLI takes. */
static int parse_ms(const char *flag, const char *text, int64_t *ms)
{
    sqlease_error err;

    memset(&err, 0, sizeof err);
    if (sqlease_parse_duration(text, ms, &err) != SQLEASE_OK || *ms <= 0) {
        fprintf(stderr, "chaos: %s: %s\n", flag, err.message[0] ? err.message
                                                                 : "must be more than 0");
        return -1;
    }
    return 0;
}

static int scenario_known(const char *s)
{
    static const char *const known[] = {"chaos",          "kernel",
                                        "reconnect-short", "reconnect-long",
                                        "partition-shutdown", "galera",
                                        "contend",        "failover"};

    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(s, known[i]) == 0)
            return 1;
    return 0;
}

/* --faults names kinds of the kernel list (or silent-login); a name that
 * is none of them would silently run nothing. */
static int faults_known(const char *list)
{
    for (const char *p = list; *p != '\0';) {
        size_t len = strcspn(p, ",");
        int ok = len == strlen("silent-login") && strncmp(p, "silent-login", len) == 0;

        for (int k = F_FIRST_KERNEL; k < F_RESET && !ok; k++)
            ok = strlen(ch_fault_names[k]) == len && strncmp(p, ch_fault_names[k], len) == 0;
        if (!ok) {
            fprintf(stderr, "chaos: --faults: unknown fault '%.*s' (silent-login", (int)len, p);
            for (int k = F_FIRST_KERNEL; k < F_RESET; k++)
                fprintf(stderr, ", %s", ch_fault_names[k]);
            fprintf(stderr, ")\n");
            return 0;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return 1;
}

static int parse_args(int argc, char **argv)
{
    const char *kinds = "base";

    CH.seconds = 120;
    CH.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
    CH.scenario = "chaos";
    CH.bin = env_or("SQLEASE_BIN", "build/bin/sqlease");
    CH.dsn_arg = env_or("SQLEASE_TEST_DSN", NULL);
    CH.db_host = "127.0.0.1";
    CH.db_port = atoi(env_or("SQLEASE_DB_PORT", "0"));
    CH.stop_cmd = env_or("SQLEASE_DB_STOP", NULL);
    CH.start_cmd = env_or("SQLEASE_DB_START", NULL);
    CH.restart_cmd = env_or("SQLEASE_DB_RESTART", NULL);
    CH.pids_cmd = env_or("SQLEASE_DB_PIDS_CMD", NULL);
    CH.ctl = env_or("SQLEASE_GALERA_CTL", NULL);
    CH.pg_ctl = env_or("SQLEASE_PG_HA_CTL", NULL);
    CH.fence = "token";
    CH.rounds = 1;
    CH.ninst = 5;
    CH.give_up = 20000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage();
            return 0;
        } else if (strcmp(a, "--keep") == 0) {
            CH.keep = 1;
            continue;
        }
        if (v == NULL) {
            fprintf(stderr, "chaos: %s needs a value\n", a);
            return 64;
        }
        i++;
        if (strcmp(a, "--seconds") == 0)
            CH.seconds = atoll(v);
        else if (strcmp(a, "--seed") == 0)
            CH.seed = strtoull(v, NULL, 0);
        else if (strcmp(a, "--scenario") == 0)
            CH.scenario = v;
        else if (strcmp(a, "--kinds") == 0)
            kinds = v;
        else if (strcmp(a, "--faults") == 0)
            CH.faults = v;
        else if (strcmp(a, "--short-fault") == 0) {
            if (parse_ms(a, v, &CH.short_fault) != 0)
                return 64;
        } else if (strcmp(a, "--long-fault") == 0) {
            if (parse_ms(a, v, &CH.long_fault) != 0)
                return 64;
        } else if (strcmp(a, "--give-up") == 0) {
            if (parse_ms(a, v, &CH.give_up) != 0)
                return 64;
        } else if (strcmp(a, "--sqlease") == 0)
            CH.bin = v;
        else if (strcmp(a, "--dsn") == 0)
            CH.dsn_arg = v;
        else if (strcmp(a, "--db-host") == 0)
            CH.db_host = v;
        else if (strcmp(a, "--db-port") == 0)
            CH.db_port = atoi(v);
        else if (strcmp(a, "--stop-cmd") == 0)
            CH.stop_cmd = v;
        else if (strcmp(a, "--start-cmd") == 0)
            CH.start_cmd = v;
        else if (strcmp(a, "--restart-cmd") == 0)
            CH.restart_cmd = v;
        else if (strcmp(a, "--pids-cmd") == 0)
            CH.pids_cmd = v;
        else if (strcmp(a, "--instances") == 0)
            CH.ninst = atoi(v);
        else if (strcmp(a, "--instance-dsn") == 0) {
            if (CH.ninst_dsn == MAX_INST) {
                fprintf(stderr, "chaos: at most %d --instance-dsn\n", MAX_INST);
                return 64;
            }
            CH.inst_dsn[CH.ninst_dsn++] = v;
        } else if (strcmp(a, "--fence") == 0)
            CH.fence = v;
        else if (strcmp(a, "--rounds") == 0)
            CH.rounds = atoi(v);
        else {
            fprintf(stderr, "chaos: unknown flag '%s'\n", a);
            usage();
            return 64;
        }
    }
    if (CH.seconds < 10 || CH.ninst < 2 || CH.ninst > MAX_INST || !scenario_known(CH.scenario) ||
        (strcmp(kinds, "base") != 0 && strcmp(kinds, "all") != 0) ||
        (strcmp(CH.fence, "token") != 0 && strcmp(CH.fence, "lease") != 0) || CH.rounds < 1) {
        fprintf(stderr, "chaos: --seconds >= 10, --instances 2..%d, --kinds base or all, "
                        "--fence token or lease, --rounds >= 1, --scenario chaos, kernel, "
                        "reconnect-short, reconnect-long, partition-shutdown, galera, "
                        "contend or failover\n", MAX_INST);
        return 64;
    }
    if (strcmp(CH.scenario, "failover") == 0 && CH.pg_ctl == NULL) {
        fprintf(stderr, "chaos: --scenario failover needs SQLEASE_PG_HA_CTL "
                        "(ci/pg-replica.sh sets it)\n");
        return 64;
    }
    if ((strcmp(CH.scenario, "galera") == 0 || strcmp(CH.scenario, "contend") == 0) &&
        (CH.ninst_dsn < 2 || CH.ctl == NULL)) {
        fprintf(stderr, "chaos: --scenario %s needs an --instance-dsn per node (2 or more) "
                        "and SQLEASE_GALERA_CTL (ci/galera.sh sets them)\n", CH.scenario);
        return 64;
    }
    CH.kinds_all = strcmp(kinds, "all") == 0;
    if (CH.faults != NULL && !faults_known(CH.faults))
        return 64;
    if (access(CH.bin, X_OK) != 0) {
        fprintf(stderr, "chaos: sqlease binary '%s' not found (--sqlease or SQLEASE_BIN)\n",
                CH.bin);
        return 64;
    }
    return -1;
}

/* Timings.  The chaos and kernel runs use short ones so that a couple of
 * minutes see many faults; the reconnect scenarios need a renew deadline
 * long enough for a real server restart to fit inside renew_deadline -
 * heartbeat.  Fault lengths default to one second less than the ttl,
 * two and a half ttls (fleet cuts) and the ttl + 1.5 s (the rest).  Returns 0, or 64 when a fault length given is on the
 * wrong side of the ttl. */
static int set_timings(void)
{
    if (strcmp(CH.scenario, "galera") == 0 || strcmp(CH.scenario, "contend") == 0) {
        /* A node joining or leaving a Galera cluster stalls every commit
         * for 1-2 s (the group agrees on the new membership first): a
         * renew deadline 4 s past the heartbeat rides that out, where
         * the short timings would hand the lease over at every change. */
        CH.ttl = 8000;
        CH.hb = 1000;
        CH.rd = 5000;
        CH.retry = 500;
    } else if (strcmp(CH.scenario, "reconnect-short") != 0 &&
               strcmp(CH.scenario, "reconnect-long") != 0) {
        CH.ttl = 3000;
        CH.hb = 500;
        CH.rd = 1500;
        CH.retry = 250;
    } else {
        CH.ttl = 16000;
        CH.hb = 2000;
        CH.rd = 10000;
        CH.retry = 1000;
    }
    CH.grace = 500;
    CH.qtimeout = 1000;
    CH.login_timeout = 1000;
    /* The guard's slack, computed as the CLI does. */
    CH.slack = (CH.ttl - CH.rd - CH.grace) / 2;
    if (CH.slack > 100)
        CH.slack = 100;
    if (CH.short_fault == 0)
        CH.short_fault = CH.ttl - 1000;
    /* Where a cut of the fleet ends in TCP's retransmission schedule
     * decides how long a client that only waits on its socket stays cut
     * off after it: on loopback a segment is resent about 0.21 x 2^k s
     * after it was first sent (0.2, 0.4, 0.8, 1.7, 3.4, 6.8, 13.4, 26.8 s).
     * The long fault, 2.5 x ttl = 7.5 s, ends just after the 6.8 s resend
     * of a statement sent in the first half second of the cut, so the
     * next one is ~6 s away: the backoff shows, as it does in real
     * partitions of any length.  (A 6 or 7 s cut ends within a second of
     * a resend.) */
    /* A fault on the holder alone, a frozen server and a silent server
     * need only outlast the ttl for a successor to have to take over:
     * ttl + 1.5 s, unless --long-fault says otherwise. */
    CH.over_ttl = CH.long_fault != 0 ? CH.long_fault : CH.ttl + 1500;
    if (CH.long_fault == 0)
        CH.long_fault = CH.ttl * 5 / 2;
    if (CH.short_fault >= CH.ttl || CH.long_fault <= CH.ttl) {
        fprintf(stderr, "chaos: --short-fault must be shorter than the ttl (%lld ms) and "
                        "--long-fault longer\n", (long long)CH.ttl);
        return 64;
    }
    /* From the end of a fault to the next holder's CMD start: the row may
     * need a whole ttl to expire, a follower polls every retry, and its
     * statement (or connect) may need one timeout to fail first; plus 1 s
     * for a loaded 2-core machine. */
    CH.obs.recovery_bound = CH.ttl + CH.retry + CH.qtimeout + 1000;
    return 0;
}

/* One connection string per proxy leg: the DSN with the server's address
 * replaced by the leg's port (sqlease of instance i on leg i, its CMD on
 * leg n + i), or the DSN itself when there is no proxy. */
static void conn_for_leg(char *buf, size_t cap, int leg)
{
    const char *sep = CH.dsn[0] != '\0' && CH.dsn[strlen(CH.dsn) - 1] != ';' ? ";" : "";

    if (CH.proxy != NULL && strcmp(CH.dialect, "postgres") == 0)
        snprintf(buf, cap, "%s%sServername=127.0.0.1;Port=%d", CH.dsn, sep,
                 ch_proxy_port(CH.proxy, leg));
    else if (CH.proxy != NULL && strcmp(CH.dialect, "mysql") == 0)
        snprintf(buf, cap, "%s%sServer=127.0.0.1;Port=%d", CH.dsn, sep,
                 ch_proxy_port(CH.proxy, leg));
    else
        snprintf(buf, cap, "%s", CH.dsn);
}

static void set_conns(void)
{
    for (int i = 0; i < CH.ninst; i++) {
        if (CH.ninst_dsn > 0) {
            /* A node of its own, for sqlease and its CMD alike: a fault of
             * the node is what singles the instance out. */
            const char *d = CH.inst_dsn[i % CH.ninst_dsn];

            snprintf(CH.inst[i].conn, sizeof CH.inst[i].conn, "%s", d);
            snprintf(CH.inst[i].jconn, sizeof CH.inst[i].jconn, "%s", d);
            CH.inst[i].node = i % CH.ninst_dsn + 1;
            continue;
        }
        conn_for_leg(CH.inst[i].conn, sizeof CH.inst[i].conn, i);
        conn_for_leg(CH.inst[i].jconn, sizeof CH.inst[i].jconn, CH.ninst + i);
    }
}

/* The connection string of the harness's silent listener (a listener that
 * accepts and never answers), or "" when there is none. */
void silent_conn(char *buf, size_t cap)
{
    if (CH.proxy == NULL || CH.silent_leg < 0)
        buf[0] = '\0';
    else
        conn_for_leg(buf, cap, CH.silent_leg);
}

static void log_quiet(void *ud, int level, const char *line)
{
    (void)ud;
    if (level <= SQLEASE_LOG_WARN)
        fprintf(stderr, "chaos: db: %s\n", line);
}

int main(int argc, char **argv)
{
    sqlease_db_options o;
    sqlease_error err;
    ch_verdict v;
    struct sigaction sa;
    ssize_t n;
    int rc;
    size_t violations;

    if (argc > 1 && strcmp(argv[1], "__job") == 0)
        return ch_job_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "__contend") == 0)
        return ch_contend_main(argc - 1, argv + 1);
    rc = parse_args(argc, argv);
    if (rc >= 0)
        return rc;
    ch_obs_init(&CH.obs);
    if (set_timings() != 0)
        return 64;
    ch_rng_seed(CH.seed);
    n = readlink("/proc/self/exe", CH.self, sizeof CH.self - 1);
    if (n <= 0) {
        fprintf(stderr, "chaos: cannot find its own executable\n");
        return 71;
    }
    CH.self[n] = '\0';
    snprintf(CH.dir, sizeof CH.dir, "%s/sqlease-chaos-XXXXXX", env_or("TMPDIR", "/tmp"));
    if (mkdtemp(CH.dir) == NULL) {
        perror("chaos: mkdtemp");
        return 71;
    }
    snprintf(CH.events, sizeof CH.events, "%s/events.log", CH.dir);
    if (CH.dsn_arg != NULL)
        snprintf(CH.dsn, sizeof CH.dsn, "%s", CH.dsn_arg);
    else
        snprintf(CH.dsn, sizeof CH.dsn, "Driver=SQLite3;Database=%s/chaos.db;Timeout=1000",
                 CH.dir);

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    sqlease_db_options_init(&o);
    o.conn = CH.dsn;
    o.login_timeout_ms = 5000;
    o.query_timeout_ms = 5000;
    o.log = log_quiet;
    o.log_level = SQLEASE_LOG_WARN;
    if (sqlease_db_open(&CH.db, &o, &err) != SQLEASE_OK) {
        fprintf(stderr, "chaos: cannot open the database: %s\n", err.message);
        return 69;
    }
    CH.dialect = sqlease_db_dialect(CH.db);
    if (setup_tables() != 0) {
        sqlease_db_close(CH.db);
        return 69;
    }
    CH.silent_leg = -1;
    if (CH.ninst_dsn > 0) {
        /* No proxy: each instance talks to its node directly.  The table
         * stays empty, but its keeper resumes a frozen node if the
         * harness dies. */
        if (ch_nft_open(CH.net_why, sizeof CH.net_why) == 0)
            snprintf(CH.net_why, sizeof CH.net_why, "a node per instance, no proxy");
    } else if (strcmp(CH.dialect, "sqlite") != 0 && CH.db_port > 0) {
        /* The kernel faults' table first: its keeper must exist before
         * any rule does. */
        CH.net_ok = ch_nft_open(CH.net_why, sizeof CH.net_why) == 0;
        CH.proxy = ch_proxy_start(CH.db_host, CH.db_port, 2 * CH.ninst + 1);
        if (CH.proxy == NULL) {
            say("no proxy: partitions and kernel faults skipped");
        } else {
            CH.silent_leg = 2 * CH.ninst;
            ch_proxy_set_mode(CH.proxy, CH.silent_leg, CH_LEG_SILENT);
        }
    } else {
        snprintf(CH.net_why, sizeof CH.net_why, "%s",
                 strcmp(CH.dialect, "sqlite") == 0 ? "no server to cut off (sqlite)"
                                                   : "no server port (--db-port)");
    }
    set_conns();
    if (strcmp(CH.scenario, "chaos") != 0)
        CH.seconds = 0; /* the reconnect scenarios take the time they take */
    printf("sqlease-chaos: dialect %s, scenario %s, seed %llu, %lld s, %d instances, "
           "ttl %lld ms, heartbeat %lld ms, renew deadline %lld ms, retry %lld ms, kill grace "
           "%lld ms, query timeout %lld ms, login timeout %lld ms\n"
           "  faults %lld ms (short), %lld ms (long: fleet cuts) and %lld ms (past the ttl); "
           "recovery bound %lld ms\n"
           "  work dir %s\n  sqlease %s\n",
           CH.dialect, CH.scenario, (unsigned long long)CH.seed, (long long)CH.seconds, CH.ninst,
           (long long)CH.ttl, (long long)CH.hb, (long long)CH.rd, (long long)CH.retry,
           (long long)CH.grace, (long long)CH.qtimeout, (long long)CH.login_timeout,
           (long long)CH.short_fault, (long long)CH.long_fault, (long long)CH.over_ttl,
           (long long)CH.obs.recovery_bound, CH.dir, CH.bin);
    if (CH.net_ok)
        printf("  kernel faults: nftables table inet %s (removed on every exit)\n",
               ch_nft_table());
    else if (CH.ninst_dsn == 0)
        printf("  kernel faults: SKIPPED: %s\n", CH.net_why);
    if (strcmp(CH.dialect, "sqlite") != 0 && CH.pids_cmd == NULL && CH.ninst_dsn == 0)
        printf("  frozen-server faults: SKIPPED: no --pids-cmd / SQLEASE_DB_PIDS_CMD\n");
    fflush(stdout);

    CH.t0 = ch_mono_ms();
    CH.obs.t_begin = CH.t0;
    for (int i = 0; i < CH.ninst && !ch_interrupted; i++)
        if (start_instance(i) != 0)
            ch_interrupted = 1;
    if (!ch_interrupted) {
        if (strcmp(CH.scenario, "chaos") == 0)
            scenario_chaos();
        else if (strcmp(CH.scenario, "reconnect-short") == 0)
            scenario_reconnect_short();
        else if (strcmp(CH.scenario, "partition-shutdown") == 0)
            scenario_partition_shutdown();
        else if (strcmp(CH.scenario, "kernel") == 0)
            scenario_kernel();
        else if (strcmp(CH.scenario, "galera") == 0)
            scenario_galera();
        else if (strcmp(CH.scenario, "contend") == 0)
            scenario_contend();
        else if (strcmp(CH.scenario, "failover") == 0)
            scenario_failover();
        else
            scenario_reconnect_long();
    }
    if (ch_interrupted)
        ch_violation(&CH.obs, "interrupted before the end");
    teardown();
    ch_nft_close();
    check_guarded_row();
    violations = ch_analyze(&CH.obs, &v);
    ch_print_verdict(&CH.obs, &v, CH.dialect, CH.scenario, CH.seed,
                     (CH.obs.t_end - CH.t0 + 500) / 1000);
    drop_tables();
    sqlease_db_close(CH.db);
    if (violations == 0 && !CH.keep) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", CH.dir);
        if (system(cmd) != 0)
            fprintf(stderr, "chaos: could not remove %s\n", CH.dir);
    } else {
        printf("events and instance logs kept in %s\n", CH.dir);
    }
    ch_obs_free(&CH.obs);
    return violations == 0 ? 0 : 1;
}
