/*
 * main.c -- sqlease-chaos: prove "one holder at a time" under faults.
 *
 *   sqlease-chaos [--seconds N] [--seed S] [--scenario chaos|reconnect-short|
 *                 reconnect-long] [--sqlease PATH] [--dsn CONN] [--db-port P]
 *                 [--stop-cmd CMD] [--start-cmd CMD] [--restart-cmd CMD]
 *                 [--instances N] [--keep]
 *
 * It starts N real `sqlease supervise` processes (each in a process group
 * of its own, each reaching a server database through its own port of an
 * in-process TCP proxy) on one lease; their CMD is this binary in job mode
 * (job.c), which logs start/stop and does fenced writes.  The `chaos`
 * scenario then injects one fault at a time, drawn from a seeded shuffle
 * of the kinds that apply to the database, checks what each fault must
 * not break as it happens (a killed sqlease's CMD gone within 1 s, a
 * frozen sqlease's CMD gone by its deadline, a resumed CMD gone within 1 s
 * of SIGCONT), waits for a single holder again, and goes on until the time
 * is up.  The reconnect scenarios restart the database once, briefly or
 * for longer than the renew deadline, with longer timings.  At the end
 * every instance is stopped, leftovers are counted and killed, and
 * analyze.c gives the verdict.  Exit 0 only when nothing was violated.
 *
 * The database: --dsn, else $SQLEASE_TEST_DSN, else an SQLite file in the
 * harness's own temporary directory.  Server restarts need --stop-cmd and
 * --start-cmd ($SQLEASE_DB_STOP / $SQLEASE_DB_START, which ci/postgres.sh
 * and ci/mariadb.sh export), partitions need the server's port (--db-port,
 * $SQLEASE_DB_PORT); faults without what they need are skipped, and SQLite
 * has neither.
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

#include "chaos.h"
#include "db.h"
#include "sqlease.h"

#define MAX_INST 16
#define LEASE_NAME "chaos"

typedef struct instance {
    pid_t pid;            /* sqlease, also its process group; 0 when not running */
    int expect_exit;      /* the harness is stopping it */
    char conn[1400];      /* what it and its job connect with */
} instance;

static struct {
    /* configuration */
    const char *bin;
    char self[1024];
    const char *dsn_arg;
    char dsn[1200];
    const char *dialect;
    const char *scenario;
    int64_t seconds;
    uint64_t seed;
    const char *stop_cmd, *start_cmd, *restart_cmd;
    const char *db_host;
    int db_port;
    int ninst;
    int keep;
    int64_t ttl, hb, rd, retry, grace, slack, qtimeout;
    /* state */
    char dir[600];
    char events[800];
    char lease_table[64];
    char guarded_table[64];
    instance inst[MAX_INST];
    ch_proxy *proxy;
    sqlease_db *db;
    ch_obs obs;
    long ev_off;
    char ev_part[2048];
    size_t ev_plen;
    int db_down;
    int64_t t0;
} G;

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Progress on stdout, stamped with seconds since the start. */
static void say(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    int64_t t = G.t0 ? ch_mono_ms() - G.t0 : 0;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("[%4lld.%03llds] %s\n", (long long)(t / 1000), (long long)(t % 1000), msg);
    fflush(stdout);
}

/* ------------------------------------------------------------------ */
/* Observing: the event file and CMD liveness                          */
/* ------------------------------------------------------------------ */

static ch_cmd *cmd_by_pid(long pid)
{
    for (size_t i = G.obs.ncmds; i-- > 0;)
        if (G.obs.cmds[i].pid == pid)
            return &G.obs.cmds[i];
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
        ch_cmd *c = ch_obs_add_cmd(&G.obs);
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
        ch_obs_add_write(&G.obs, &w);
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
    int fd = open(G.events, O_RDONLY | O_CLOEXEC);
    char buf[8192];
    ssize_t r;

    if (fd < 0)
        return;
    if (lseek(fd, G.ev_off, SEEK_SET) < 0) {
        close(fd);
        return;
    }
    while ((r = read(fd, buf, sizeof buf)) > 0) {
        G.ev_off += r;
        for (ssize_t i = 0; i < r; i++) {
            if (buf[i] == '\n') {
                G.ev_part[G.ev_plen] = '\0';
                ev_line(G.ev_part);
                G.ev_plen = 0;
            } else if (G.ev_plen < sizeof G.ev_part - 1) {
                G.ev_part[G.ev_plen++] = buf[i];
            }
        }
    }
    close(fd);
}

static void restart_instance(int i);

/* One look at everything: new events, CMDs that died without a stop
 * line, instances that exited without being asked to. */
static void monitor(void)
{
    int64_t now;

    ev_read();
    now = ch_mono_ms();
    for (size_t i = 0; i < G.obs.ncmds; i++) {
        ch_cmd *c = &G.obs.cmds[i];
        if (c->end < 0 && ch_pid_gone(c->pid)) {
            c->end = now;
            c->end_kind = 'd';
            ch_append(G.events, "%lld dead %d %ld %lld", (long long)now, c->inst, c->pid,
                      (long long)c->token);
        }
    }
    for (int i = 0; i < G.ninst; i++) {
        instance *in = &G.inst[i];
        int st;

        if (in->pid > 0 && !in->expect_exit && waitpid(in->pid, &st, WNOHANG) == in->pid) {
            ch_violation(&G.obs, "instance %d (sqlease pid %d) exited by itself with %s %d", i,
                         (int)in->pid, WIFEXITED(st) ? "status" : "signal",
                         WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
            in->pid = 0;
            restart_instance(i);
        }
    }
}

/* Sleep while watching, 10 ms at a time. */
static void sleep_mon(int64_t ms)
{
    int64_t until = ch_mono_ms() + ms;

    for (;;) {
        int64_t left;

        monitor();
        left = until - ch_mono_ms();
        if (left <= 0 || interrupted)
            return;
        ch_nap_ms(left < 10 ? left : 10);
    }
}

static int open_cmds(void)
{
    int n = 0;

    for (size_t i = 0; i < G.obs.ncmds; i++)
        if (G.obs.cmds[i].end < 0)
            n++;
    return n;
}

/* The one running CMD, or -1 (none, or more than one). */
static long holder_index(void)
{
    long found = -1;

    for (size_t i = 0; i < G.obs.ncmds; i++)
        if (G.obs.cmds[i].end < 0) {
            if (found >= 0)
                return -1;
            found = (long)i;
        }
    return found;
}

/* Wait for exactly one CMD to have been running for stable_ms.  Returns
 * its index, or -1 after timeout_ms. */
static long await_single_holder(int64_t stable_ms, int64_t timeout_ms)
{
    int64_t until = ch_mono_ms() + timeout_ms;

    while (!interrupted && ch_mono_ms() < until) {
        long h;

        monitor();
        h = holder_index();
        if (h >= 0 && ch_mono_ms() - G.obs.cmds[h].start >= stable_ms)
            return h;
        ch_nap_ms(10);
    }
    return -1;
}

/* Wait until pid is gone or the monotonic clock reaches `until`. */
static int await_gone(long pid, int64_t until)
{
    for (;;) {
        monitor();
        if (ch_pid_gone(pid))
            return 1;
        if (ch_mono_ms() >= until || interrupted)
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

/* Start instance i: `sqlease supervise` in its own process group, tied
 * to the harness by the death signal, output appended to inst<i>.log. */
static int start_instance(int i)
{
    char ttl[48], hb[48], rd[48], retry[48], qt[48], lt[48], grace[48], ev[900], id[16];
    char log[700];
    char *argv[40];
    int n = 0;
    pid_t parent = getpid(), pid;
    instance *in = &G.inst[i];

    dur(ttl, sizeof ttl, "--ttl", G.ttl);
    dur(hb, sizeof hb, "--heartbeat", G.hb);
    dur(rd, sizeof rd, "--renew-deadline", G.rd);
    dur(retry, sizeof retry, "--retry", G.retry);
    dur(qt, sizeof qt, "--query-timeout", G.qtimeout);
    dur(lt, sizeof lt, "--login-timeout", G.qtimeout);
    dur(grace, sizeof grace, "--kill-grace", G.grace);
    snprintf(ev, sizeof ev, "%s", G.events);
    snprintf(id, sizeof id, "%d", i);
    snprintf(log, sizeof log, "%s/inst%d.log", G.dir, i);
    argv[n++] = (char *)G.bin;
    argv[n++] = "--dsn";
    argv[n++] = in->conn;
    argv[n++] = "--table";
    argv[n++] = G.lease_table;
    argv[n++] = "--name";
    argv[n++] = LEASE_NAME;
    argv[n++] = ttl;
    argv[n++] = hb;
    argv[n++] = rd;
    argv[n++] = retry;
    argv[n++] = qt;
    argv[n++] = lt;
    argv[n++] = "-v";
    argv[n++] = "supervise";
    argv[n++] = grace;
    argv[n++] = "--";
    argv[n++] = G.self;
    argv[n++] = "__job";
    argv[n++] = "--events";
    argv[n++] = ev;
    argv[n++] = "--instance";
    argv[n++] = id;
    argv[n++] = "--dsn";
    argv[n++] = in->conn;
    argv[n++] = "--table";
    argv[n++] = G.guarded_table;
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

static void restart_instance(int i)
{
    if (start_instance(i) == 0)
        say("instance %d restarted (sqlease pid %d)", i, (int)G.inst[i].pid);
}

/* Wait for instance i's sqlease to exit (it is our child); SIGKILL its
 * group after timeout_ms.  Returns its wait status, or -1. */
static int reap_instance(int i, int64_t timeout_ms)
{
    instance *in = &G.inst[i];
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
    int rc = db_exec(G.db, text, NULL, 0, NULL, 0, NULL, rows, &err);

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

    snprintf(G.lease_table, sizeof G.lease_table, "chaos_lease_%ld", (long)getpid());
    snprintf(G.guarded_table, sizeof G.guarded_table, "chaos_guarded_%ld", (long)getpid());
    rc = sqlease_migrate(G.db, G.lease_table, names, 1, &err);
    if (rc != SQLEASE_OK) {
        fprintf(stderr, "chaos: migrate: %s\n", err.message);
        return -1;
    }
    snprintf(q, sizeof q, "DROP TABLE IF EXISTS %s", G.guarded_table);
    (void)sql(q, NULL);
    snprintf(q, sizeof q,
             "CREATE TABLE %s (id INTEGER PRIMARY KEY, fence BIGINT NOT NULL, "
             "last_writer VARCHAR(64) NOT NULL, n BIGINT NOT NULL)", G.guarded_table);
    if (sql(q, NULL) != SQLEASE_OK)
        return -1;
    snprintf(q, sizeof q, "INSERT INTO %s (id, fence, last_writer, n) VALUES (1, 0, '', 0)",
             G.guarded_table);
    return sql(q, NULL) == SQLEASE_OK ? 0 : -1;
}

static void drop_tables(void)
{
    char q[256];

    if (G.db == NULL)
        return;
    snprintf(q, sizeof q, "DROP TABLE %s", G.guarded_table);
    (void)sql(q, NULL);
    snprintf(q, sizeof q, "DROP TABLE %s", G.lease_table);
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
    snprintf(q, sizeof q, "SELECT fence, n FROM %s WHERE id = 1", G.guarded_table);
    for (int tries = 0; tries < 20 && rc != SQLEASE_OK; tries++) {
        rc = db_exec(G.db, q, NULL, 0, out, 2, &has, NULL, &err);
        if (rc != SQLEASE_OK)
            ch_nap_ms(500);
    }
    for (size_t i = 0; i < G.obs.nwrites; i++)
        if (G.obs.writes[i].result == 'A' && G.obs.writes[i].token > best)
            best = G.obs.writes[i].token;
    if (rc != SQLEASE_OK || !has) {
        ch_violation(&G.obs, "cannot read the guarded row: %s", err.message);
        return;
    }
    say("guarded row: fence %lld, %lld writes applied", (long long)fence, (long long)n);
    G.obs.row_fence = fence;
    G.obs.row_applied = n;
    if (fence < best)
        ch_violation(&G.obs, "guarded row fence %lld is below accepted token %lld",
                     (long long)fence, (long long)best);
}

/* Run a shell command (a server stop/start) while still watching: the
 * harness must not stop observing CMDs while a server restarts.  Output
 * goes to db-commands.log.  Returns the exit status, or -1. */
static int run_cmd(const char *what, const char *cmd)
{
    char log[700];
    pid_t pid;
    int st;
    int64_t t = ch_mono_ms();

    snprintf(log, sizeof log, "%s/db-commands.log", G.dir);
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
    int rc = run_cmd("database stop", G.stop_cmd);

    G.db_down = 1;
    return rc;
}

static int db_start(void)
{
    int rc = run_cmd("database start", G.start_cmd);

    if (rc == 0)
        G.db_down = 0;
    return rc;
}

/* ------------------------------------------------------------------ */
/* Faults                                                              */
/* ------------------------------------------------------------------ */

static ch_fault *fault_begin(int kind, int inst, const char *detail)
{
    int64_t now = ch_mono_ms();

    ch_append(G.events, "%lld fault %s %d %s", (long long)now, ch_fault_names[kind], inst,
              detail);
    say("fault %s: instance %d %s", ch_fault_names[kind], inst, detail);
    return ch_obs_add_fault(&G.obs, kind, inst, now);
}

static void fault_heal(size_t fi)
{
    int64_t now = ch_mono_ms();

    G.obs.faults[fi].healed = now;
    ch_append(G.events, "%lld heal %s %d", (long long)now,
              ch_fault_names[G.obs.faults[fi].kind], G.obs.faults[fi].inst);
}

static void note_max(int64_t *slot, int64_t v)
{
    if (*slot < v)
        *slot = v;
}

/* First CMD start (by any instance, a restarted one included) at or
 * after `t`, within timeout_ms; returns the delay, or -1. */
static int64_t await_successor(int64_t t, int64_t timeout_ms)
{
    int64_t until = t + timeout_ms;

    for (;;) {
        monitor();
        for (size_t i = 0; i < G.obs.ncmds; i++)
            if (G.obs.cmds[i].start >= t)
                return G.obs.cmds[i].start - t;
        if (ch_mono_ms() >= until || interrupted)
            return -1;
        ch_nap_ms(10);
    }
}

static void describe(char *buf, size_t cap, long h)
{
    const ch_cmd *c = &G.obs.cmds[h];

    snprintf(buf, cap, "(sqlease pid %d, CMD pid %ld, token %lld)", (int)G.inst[c->inst].pid,
             c->pid, (long long)c->token);
}

/* SIGKILL the holder's sqlease: its CMD must be gone within 1 s, and
 * another instance must hold within ttl + retry. */
static void fault_kill(long h)
{
    ch_cmd c = G.obs.cmds[h];
    char d[160];
    int64_t t, succ;

    describe(d, sizeof d, h);
    fault_begin(F_KILL, c.inst, d);
    G.inst[c.inst].expect_exit = 1;
    t = ch_mono_ms();
    kill(G.inst[c.inst].pid, SIGKILL);
    if (!await_gone(c.pid, t + 1000))
        ch_violation(&G.obs, "kill-holder: CMD pid %ld of instance %d still running 1 s after "
                     "its sqlease was killed", c.pid, c.inst);
    reap_instance(c.inst, 2000);
    if (ch_group_members(G.inst[c.inst].pid) > 0)
        ch_violation(&G.obs, "kill-holder: instance %d's process group outlived sqlease",
                     c.inst);
    ch_nap_ms(200);
    restart_instance(c.inst);
    succ = await_successor(t, G.ttl + G.retry + 3000);
    if (succ < 0 || succ > G.ttl + G.retry + 1000)
        ch_violation(&G.obs, "kill-holder: no successor within ttl + retry + 1 s (%lld ms)",
                     (long long)succ);
    if (succ >= 0)
        note_max(&G.obs.crash_successor_max, succ);
}

/* SIGTERM the holder's sqlease: it stops CMD, releases, and another
 * instance holds within one retry (plus a second for CMD's start). */
static void fault_graceful(long h)
{
    ch_cmd c = G.obs.cmds[h];
    char d[160];
    int64_t t, succ;
    int st;

    describe(d, sizeof d, h);
    fault_begin(F_GRACEFUL, c.inst, d);
    t = ch_mono_ms();
    G.inst[c.inst].expect_exit = 1;
    kill(G.inst[c.inst].pid, SIGTERM);
    st = reap_instance(c.inst, 10000);
    if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
        ch_violation(&G.obs, "graceful-stop: instance %d exited with wait status %d", c.inst,
                     st);
    succ = await_successor(t, G.retry + G.grace + 3000);
    if (succ < 0 || succ > G.retry + G.grace + 1000)
        ch_violation(&G.obs, "graceful-stop: no successor within retry + kill grace + 1 s "
                     "(%lld ms)", (long long)succ);
    if (succ >= 0)
        note_max(&G.obs.graceful_successor_max, succ);
    restart_instance(c.inst);
}

/* SIGSTOP the whole instance (sqlease, its guard, CMD's group) for longer
 * than the ttl: a successor takes over meanwhile; after SIGCONT the
 * resumed CMD must be gone within 1 s, and only until then may it
 * overlap. */
static void fault_pause(long h)
{
    ch_cmd c = G.obs.cmds[h];
    char d[160];
    pid_t pg = G.inst[c.inst].pid;
    int64_t t, cont;
    size_t fi;

    describe(d, sizeof d, h);
    fault_begin(F_PAUSE, c.inst, d);
    fi = G.obs.nfaults - 1;
    t = ch_mono_ms();
    kill(-pg, SIGSTOP);
    kill(-(pid_t)c.pid, SIGSTOP);
    sleep_mon(G.ttl + 1500);
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
        ch_violation(&G.obs, "pause-instance: resumed CMD pid %ld of instance %d still running "
                     "1 s after SIGCONT", c.pid, c.inst);
    } else {
        const ch_cmd *cc = cmd_by_pid(c.pid);
        if (cc != NULL && cc->end >= 0)
            note_max(&G.obs.resume_stop_max, cc->end > cont ? cc->end - cont : 0);
    }
}

/* SIGSTOP the holder's sqlease alone: CMD keeps running, so only the guard
 * can stop it, and it must by the deadline (at most renew_deadline after
 * the freeze) plus the guard's slack. */
static void fault_freeze(long h)
{
    ch_cmd c = G.obs.cmds[h];
    char d[160];
    pid_t pid = G.inst[c.inst].pid;
    int64_t t, bound;
    size_t fi;

    describe(d, sizeof d, h);
    fault_begin(F_FREEZE, c.inst, d);
    fi = G.obs.nfaults - 1;
    t = ch_mono_ms();
    kill(pid, SIGSTOP);
    bound = t + G.rd + G.slack + 500;
    if (!await_gone(c.pid, bound)) {
        ch_violation(&G.obs, "freeze-sqlease: CMD pid %ld of instance %d still running %lld ms "
                     "after its sqlease was frozen (renew deadline %lld ms)", c.pid, c.inst,
                     (long long)(ch_mono_ms() - t), (long long)G.rd);
    } else {
        const ch_cmd *cc = cmd_by_pid(c.pid);
        if (cc != NULL && cc->end >= 0)
            note_max(&G.obs.freeze_stop_max, cc->end - t);
    }
    sleep_mon(t + G.ttl + 1000 - ch_mono_ms());
    kill(pid, SIGCONT);
    fault_heal(fi);
}

/* Blackhole the holder's proxy port for longer than the ttl: its CMD must
 * stop by the deadline (plus the kill grace: the job may be stuck in a
 * write through the partition and need the SIGKILL). */
static void fault_partition(long h)
{
    ch_cmd c = G.obs.cmds[h];
    char d[160];
    int64_t t, bound;
    size_t fi;

    describe(d, sizeof d, h);
    fault_begin(F_PARTITION, c.inst, d);
    fi = G.obs.nfaults - 1;
    t = ch_mono_ms();
    ch_proxy_blackhole(G.proxy, c.inst, 1);
    bound = t + G.rd + G.slack + G.grace + 500;
    if (!await_gone(c.pid, bound))
        ch_violation(&G.obs, "partition: CMD pid %ld of instance %d still running %lld ms after "
                     "the partition began", c.pid, c.inst, (long long)(ch_mono_ms() - t));
    sleep_mon(t + G.ttl + 2000 - ch_mono_ms());
    ch_proxy_blackhole(G.proxy, c.inst, 0);
    fault_heal(fi);
}

/* No CMD may start while the database is down (from t_down, when its
 * stop command returned, to t_start, when its start command began); and
 * one must start within a retry of t_up, when the start command returned
 * (the server may answer a little before that: such a start counts as 0). */
static void check_db_outage(const char *what, int64_t t_down, int64_t t_start, int64_t t_up)
{
    int64_t back;

    for (size_t i = 0; i < G.obs.ncmds; i++)
        if (G.obs.cmds[i].start > t_down && G.obs.cmds[i].start < t_start)
            ch_violation(&G.obs, "%s: instance %d started CMD (token %lld) while the database "
                         "was down", what, G.obs.cmds[i].inst, (long long)G.obs.cmds[i].token);
    back = await_successor(t_start, t_up - t_start + G.retry + 5000);
    if (back >= 0)
        back = back > t_up - t_start ? back - (t_up - t_start) : 0;
    if (back < 0 || back > G.retry + 1000)
        ch_violation(&G.obs, "%s: no holder within one retry (+1 s) of the database coming "
                     "back (%lld ms)", what, (long long)back);
    if (back >= 0)
        note_max(&G.obs.db_back_holder_max, back);
}

static void fault_restart_short(void)
{
    size_t fi;

    fault_begin(F_RESTART_SHORT, -1, "(database restart)");
    fi = G.obs.nfaults - 1;
    if (G.restart_cmd != NULL) {
        G.db_down = 1;
        if (run_cmd("database restart", G.restart_cmd) == 0)
            G.db_down = 0;
    } else {
        db_stop();
        db_start();
    }
    fault_heal(fi);
    if (G.db_down)
        ch_violation(&G.obs, "restart-short: the database did not come back");
}

/* Down past the renew deadline: every CMD must be stopped by then, none
 * may start while the server is down, and one must start within a retry
 * of its return. */
static void fault_restart_long(void)
{
    int64_t t_down, t_start, t_up;
    size_t fi;

    fault_begin(F_RESTART_LONG, -1, "(database down past the renew deadline)");
    fi = G.obs.nfaults - 1;
    db_stop();
    t_down = ch_mono_ms();
    sleep_mon(G.rd + G.slack + G.grace + 700);
    for (size_t i = 0; i < G.obs.ncmds; i++)
        if (G.obs.cmds[i].end < 0)
            ch_violation(&G.obs, "restart-long: instance %d's CMD pid %ld still running %lld ms "
                         "after the database went away", G.obs.cmds[i].inst, G.obs.cmds[i].pid,
                         (long long)(ch_mono_ms() - t_down));
    sleep_mon(ch_rng_range(0, 1500));
    t_start = ch_mono_ms();
    if (db_start() != 0) {
        ch_violation(&G.obs, "restart-long: the database did not come back");
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
    ch_cmd c = G.obs.cmds[h];
    const char *begin = strcmp(G.dialect, "sqlite") == 0 ? "BEGIN IMMEDIATE"
                        : strcmp(G.dialect, "mysql") == 0 ? "START TRANSACTION"
                        : strcmp(G.dialect, "sqlserver") == 0 ? "BEGIN TRANSACTION"
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
    snprintf(q, sizeof q, "UPDATE %s SET version = version WHERE name = '%s'", G.lease_table,
             LEASE_NAME);
    if (sql(q, NULL) != SQLEASE_OK) {
        (void)sql("ROLLBACK", NULL);
        say("hung-statement: cannot lock the lease row; skipped");
        return;
    }
    describe(d, sizeof d, h);
    fault_begin(F_HUNG, c.inst, d);
    fi = G.obs.nfaults - 1;
    t = ch_mono_ms();
    bound = t + G.rd + G.slack + G.grace + 500;
    if (!await_gone(c.pid, bound))
        ch_violation(&G.obs, "hung-statement: CMD pid %ld of instance %d still running %lld ms "
                     "after the lease row was locked", c.pid, c.inst,
                     (long long)(ch_mono_ms() - t));
    sleep_mon(t + G.ttl + 1000 - ch_mono_ms());
    if (sql("ROLLBACK", NULL) != SQLEASE_OK)
        say("hung-statement: ROLLBACK failed; the connection is dropped instead");
    fault_heal(fi);
    for (size_t i = 0; i < G.obs.ncmds; i++)
        if (G.obs.cmds[i].start > t && G.obs.cmds[i].start < G.obs.faults[fi].healed)
            say("note: instance %d took the lease while its row was locked",
                G.obs.cmds[i].inst);
}

/* ------------------------------------------------------------------ */
/* Scenarios                                                           */
/* ------------------------------------------------------------------ */

static int kind_applies(int k)
{
    int server = strcmp(G.dialect, "sqlite") != 0;

    switch (k) {
    case F_PARTITION:
        return server && G.proxy != NULL;
    case F_RESTART_SHORT:
        return server && (G.restart_cmd != NULL || (G.stop_cmd != NULL && G.start_cmd != NULL));
    case F_RESTART_LONG:
        return server && G.stop_cmd != NULL && G.start_cmd != NULL;
    default:
        return 1;
    }
}

/* Faults one at a time from a shuffled bag of the kinds that apply, so a
 * run of a couple of minutes sees every kind; each followed by a wait for
 * a single holder again. */
static void scenario_chaos(void)
{
    int bag[F_NKINDS], nbag = 0, next = 0;
    int64_t end = G.t0 + G.seconds * 1000;

    for (int k = 0; k < F_NKINDS; k++)
        if (!kind_applies(k))
            say("fault %s does not apply here; skipped", ch_fault_names[k]);
    while (!interrupted) {
        long h;
        int kind;

        h = await_single_holder(500, 20000);
        if (h < 0) {
            ch_violation(&G.obs, "no single holder within 20 s%s",
                         G.obs.nfaults ? " after the last fault" : " of the start");
            return;
        }
        if (ch_mono_ms() + 5000 > end)
            break;
        if (next == nbag) {
            nbag = 0;
            for (int k = 0; k < F_NKINDS; k++)
                if (kind_applies(k))
                    bag[nbag++] = k;
            for (int i = nbag - 1; i > 0; i--) {
                int j = (int)ch_rng_range(0, i), tmp = bag[i];
                bag[i] = bag[j];
                bag[j] = tmp;
            }
            next = 0;
        }
        kind = bag[next++];
        switch (kind) {
        case F_KILL: fault_kill(h); break;
        case F_PAUSE: fault_pause(h); break;
        case F_FREEZE: fault_freeze(h); break;
        case F_GRACEFUL: fault_graceful(h); break;
        case F_PARTITION: fault_partition(h); break;
        case F_RESTART_SHORT: fault_restart_short(); break;
        case F_RESTART_LONG: fault_restart_long(); break;
        case F_HUNG: fault_hung(h); break;
        }
        sleep_mon(ch_rng_range(200, 1000));
    }
    if (!interrupted && ch_mono_ms() < end)
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
        ch_violation(&G.obs, "reconnect-short: no single holder within 30 s of the start");
        return;
    }
    c = G.obs.cmds[h];
    fault_begin(F_RESTART_SHORT, c.inst, "(database restart under a holder)");
    fi = G.obs.nfaults - 1;
    t0 = ch_mono_ms();
    if (G.restart_cmd != NULL) {
        G.db_down = 1;
        if (run_cmd("database restart", G.restart_cmd) == 0)
            G.db_down = 0;
    } else {
        db_stop();
        db_start();
    }
    t1 = ch_mono_ms();
    fault_heal(fi);
    say("database was away for at most %lld ms (renew deadline - heartbeat: %lld ms)",
        (long long)(t1 - t0), (long long)(G.rd - G.hb));
    if (G.db_down) {
        ch_violation(&G.obs, "reconnect-short: the database did not come back");
        return;
    }
    if (t1 - t0 >= G.rd - G.hb)
        ch_violation(&G.obs, "reconnect-short: the restart took %lld ms, not less than renew "
                     "deadline - heartbeat (%lld ms): the scenario cannot show anything",
                     (long long)(t1 - t0), (long long)(G.rd - G.hb));
    /* Past the deadline the holder had at the restart: it must have
     * renewed through a new connection to be still running. */
    sleep_mon(t0 + G.rd + 2000 - ch_mono_ms());
    for (size_t i = 0; i < G.obs.ncmds; i++) {
        const ch_cmd *x = &G.obs.cmds[i];
        if (x->pid == c.pid && x->end >= 0)
            ch_violation(&G.obs, "reconnect-short: the holder's CMD stopped at +%lld ms",
                         (long long)(x->end - t0));
        if (x->start > t0)
            ch_violation(&G.obs, "reconnect-short: instance %d started CMD (token %lld) at "
                         "+%lld ms: a handover or a restart", x->inst, (long long)x->token,
                         (long long)(x->start - t0));
    }
    if (G.obs.nviolations == 0)
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
        ch_violation(&G.obs, "reconnect-long: no single holder within 30 s of the start");
        return;
    }
    c = G.obs.cmds[h];
    fault_begin(F_RESTART_LONG, c.inst, "(database down past the renew deadline)");
    fi = G.obs.nfaults - 1;
    db_stop();
    t_down = ch_mono_ms();
    sleep_mon(G.rd + 3000);
    for (size_t i = 0; i < G.obs.ncmds; i++) {
        const ch_cmd *x = &G.obs.cmds[i];
        if (x->pid == c.pid)
            stopped_at = x->end;
        if (x->end < 0 || x->end > t_down + G.rd + G.slack + 500)
            ch_violation(&G.obs, "reconnect-long: instance %d's CMD (token %lld) %s",
                         x->inst, (long long)x->token,
                         x->end < 0 ? "still running with the database down"
                                    : "stopped after its renew deadline");
    }
    if (stopped_at >= 0)
        say("the holder stopped %lld ms after the database went away (renew deadline %lld ms)",
            (long long)(stopped_at - t_down), (long long)G.rd);
    t_start = ch_mono_ms();
    if (db_start() != 0) {
        ch_violation(&G.obs, "reconnect-long: the database did not come back");
        return;
    }
    t_up = ch_mono_ms();
    fault_heal(fi);
    check_db_outage("reconnect-long", t_down, t_start, t_up);
    sleep_mon(3000);
    if (open_cmds() != 1)
        ch_violation(&G.obs, "reconnect-long: %d CMDs running 3 s after the first start, "
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

    if (h < 0 || G.proxy == NULL) {
        ch_violation(&G.obs, "partition-shutdown: %s", G.proxy == NULL
                     ? "needs a server database and its port" : "no single holder");
        return;
    }
    c = G.obs.cmds[h];
    pid = G.inst[c.inst].pid;
    fault_begin(F_PARTITION, c.inst, "(then SIGTERM to its sqlease)");
    fi = G.obs.nfaults - 1;
    ch_proxy_blackhole(G.proxy, c.inst, 1);
    sleep_mon(G.hb + 500); /* a renew is now in flight, unanswered */
    t = ch_mono_ms();
    G.inst[c.inst].expect_exit = 1;
    kill(pid, SIGTERM);
    bound = t + 3 * G.qtimeout + G.grace + 1000;
    heal_at = t + 30000;
    while (ch_mono_ms() < heal_at && !interrupted) {
        if (waitpid(pid, &st, WNOHANG) == pid) {
            exited = 1;
            break;
        }
        monitor();
        ch_nap_ms(10);
    }
    if (exited) {
        say("partitioned sqlease exited %lld ms after SIGTERM", (long long)(ch_mono_ms() - t));
        G.inst[c.inst].pid = 0;
    }
    if (!exited || ch_mono_ms() > bound)
        ch_violation(&G.obs, "partition-shutdown: sqlease (pid %d) %s %lld ms after SIGTERM "
                     "(query timeout %lld ms): stopping waits on a statement the network "
                     "never answers", (int)pid, exited ? "exited only" : "still running",
                     (long long)(ch_mono_ms() - t), (long long)G.qtimeout);
    ch_proxy_blackhole(G.proxy, c.inst, 0);
    fault_heal(fi);
    if (!exited) {
        int64_t healed = ch_mono_ms();
        reap_instance(c.inst, 20000);
        say("after the heal it exited in %lld ms", (long long)(ch_mono_ms() - healed));
    }
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
    G.obs.t_end = ch_mono_ms();
    say("shutting down");
    for (int i = 0; i < G.ninst; i++)
        ch_proxy_blackhole(G.proxy, i, 0);
    if (G.db_down && G.start_cmd != NULL)
        db_start();
    for (int i = 0; i < G.ninst; i++)
        if (G.inst[i].pid > 0) {
            kill(-G.inst[i].pid, SIGCONT);
            G.inst[i].expect_exit = 1;
        }
    for (size_t i = 0; i < G.obs.ncmds; i++)
        if (G.obs.cmds[i].end < 0)
            kill(-(pid_t)G.obs.cmds[i].pid, SIGCONT);
    for (int i = 0; i < G.ninst; i++)
        if (G.inst[i].pid > 0)
            kill(G.inst[i].pid, SIGTERM);
    for (int i = 0; i < G.ninst; i++) {
        pid_t pg = G.inst[i].pid;
        int st;

        if (pg <= 0)
            continue;
        st = reap_instance(i, 15000);
        if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
            ch_violation(&G.obs, "instance %d did not exit 0 on SIGTERM (wait status %d)", i,
                         st);
        if (ch_group_members(pg) > 0) {
            G.obs.orphans++;
            ch_violation(&G.obs, "instance %d left processes in its group %d", i, (int)pg);
            kill(-pg, SIGKILL);
        }
    }
    ch_nap_ms(200);
    monitor();
    for (size_t i = 0; i < G.obs.ncmds; i++) {
        long pid = G.obs.cmds[i].pid;
        if (!ch_pid_gone(pid) || ch_group_members(pid) > 0) {
            G.obs.orphans++;
            ch_violation(&G.obs, "orphaned CMD pid %ld (instance %d) still running", pid,
                         G.obs.cmds[i].inst);
            kill(-(pid_t)pid, SIGKILL);
            kill((pid_t)pid, SIGKILL);
        }
    }
    ch_proxy_stop(G.proxy);
    G.proxy = NULL;
}

static void usage(void)
{
    printf("usage: sqlease-chaos [--seconds N] [--seed S] [--scenario chaos|reconnect-short|"
           "reconnect-long|partition-shutdown]\n"
           "                     [--sqlease PATH] [--dsn CONN] [--db-host H] [--db-port P]\n"
           "                     [--stop-cmd CMD] [--start-cmd CMD] [--restart-cmd CMD]\n"
           "                     [--instances N] [--keep]\n"
           "Environment: SQLEASE_BIN, SQLEASE_TEST_DSN, SQLEASE_DB_PORT, SQLEASE_DB_STOP,\n"
           "SQLEASE_DB_START, SQLEASE_DB_RESTART.  Exit 0 when no rule was violated.\n");
}

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);

    return v != NULL && v[0] != '\0' ? v : dflt;
}

static int parse_args(int argc, char **argv)
{
    G.seconds = 120;
    G.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
    G.scenario = "chaos";
    G.bin = env_or("SQLEASE_BIN", "build/bin/sqlease");
    G.dsn_arg = env_or("SQLEASE_TEST_DSN", NULL);
    G.db_host = "127.0.0.1";
    G.db_port = atoi(env_or("SQLEASE_DB_PORT", "0"));
    G.stop_cmd = env_or("SQLEASE_DB_STOP", NULL);
    G.start_cmd = env_or("SQLEASE_DB_START", NULL);
    G.restart_cmd = env_or("SQLEASE_DB_RESTART", NULL);
    G.ninst = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage();
            return 0;
        } else if (strcmp(a, "--keep") == 0) {
            G.keep = 1;
            continue;
        }
        if (v == NULL) {
            fprintf(stderr, "chaos: %s needs a value\n", a);
            return 64;
        }
        i++;
        if (strcmp(a, "--seconds") == 0)
            G.seconds = atoll(v);
        else if (strcmp(a, "--seed") == 0)
            G.seed = strtoull(v, NULL, 0);
        else if (strcmp(a, "--scenario") == 0)
            G.scenario = v;
        else if (strcmp(a, "--sqlease") == 0)
            G.bin = v;
        else if (strcmp(a, "--dsn") == 0)
            G.dsn_arg = v;
        else if (strcmp(a, "--db-host") == 0)
            G.db_host = v;
        else if (strcmp(a, "--db-port") == 0)
            G.db_port = atoi(v);
        else if (strcmp(a, "--stop-cmd") == 0)
            G.stop_cmd = v;
        else if (strcmp(a, "--start-cmd") == 0)
            G.start_cmd = v;
        else if (strcmp(a, "--restart-cmd") == 0)
            G.restart_cmd = v;
        else if (strcmp(a, "--instances") == 0)
            G.ninst = atoi(v);
        else {
            fprintf(stderr, "chaos: unknown flag '%s'\n", a);
            usage();
            return 64;
        }
    }
    if (G.seconds < 10 || G.ninst < 2 || G.ninst > MAX_INST ||
        (strcmp(G.scenario, "chaos") != 0 && strcmp(G.scenario, "reconnect-short") != 0 &&
         strcmp(G.scenario, "reconnect-long") != 0 &&
         strcmp(G.scenario, "partition-shutdown") != 0)) {
        fprintf(stderr, "chaos: --seconds >= 10, --instances 2..%d, --scenario chaos, "
                        "reconnect-short, reconnect-long or partition-shutdown\n", MAX_INST);
        return 64;
    }
    if (access(G.bin, X_OK) != 0) {
        fprintf(stderr, "chaos: sqlease binary '%s' not found (--sqlease or SQLEASE_BIN)\n",
                G.bin);
        return 64;
    }
    return -1;
}

/* Timings.  The chaos run uses short ones so that a couple of minutes see
 * many faults; the reconnect scenarios need a renew deadline long enough
 * for a real server restart to fit inside renew_deadline - heartbeat. */
static void set_timings(void)
{
    if (strcmp(G.scenario, "chaos") == 0 || strcmp(G.scenario, "partition-shutdown") == 0) {
        G.ttl = 3000;
        G.hb = 500;
        G.rd = 1500;
        G.retry = 250;
    } else {
        G.ttl = 16000;
        G.hb = 2000;
        G.rd = 10000;
        G.retry = 1000;
    }
    G.grace = 500;
    G.qtimeout = 1000;
    /* The guard's slack, computed as the CLI does. */
    G.slack = (G.ttl - G.rd - G.grace) / 2;
    if (G.slack > 100)
        G.slack = 100;
}

/* Per-instance connection: the DSN plus the proxy's port for servers. */
static void set_conns(void)
{
    for (int i = 0; i < G.ninst; i++) {
        const char *sep = G.dsn[0] != '\0' && G.dsn[strlen(G.dsn) - 1] != ';' ? ";" : "";

        if (G.proxy != NULL && strcmp(G.dialect, "postgres") == 0)
            snprintf(G.inst[i].conn, sizeof G.inst[i].conn, "%s%sServername=127.0.0.1;Port=%d",
                     G.dsn, sep, ch_proxy_port(G.proxy, i));
        else if (G.proxy != NULL && strcmp(G.dialect, "mysql") == 0)
            snprintf(G.inst[i].conn, sizeof G.inst[i].conn, "%s%sServer=127.0.0.1;Port=%d",
                     G.dsn, sep, ch_proxy_port(G.proxy, i));
        else
            snprintf(G.inst[i].conn, sizeof G.inst[i].conn, "%s", G.dsn);
    }
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
    rc = parse_args(argc, argv);
    if (rc >= 0)
        return rc;
    set_timings();
    ch_rng_seed(G.seed);
    n = readlink("/proc/self/exe", G.self, sizeof G.self - 1);
    if (n <= 0) {
        fprintf(stderr, "chaos: cannot find its own executable\n");
        return 71;
    }
    G.self[n] = '\0';
    snprintf(G.dir, sizeof G.dir, "%s/sqlease-chaos-XXXXXX", env_or("TMPDIR", "/tmp"));
    if (mkdtemp(G.dir) == NULL) {
        perror("chaos: mkdtemp");
        return 71;
    }
    snprintf(G.events, sizeof G.events, "%s/events.log", G.dir);
    if (G.dsn_arg != NULL)
        snprintf(G.dsn, sizeof G.dsn, "%s", G.dsn_arg);
    else
        snprintf(G.dsn, sizeof G.dsn, "Driver=SQLite3;Database=%s/chaos.db;Timeout=1000",
                 G.dir);

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    ch_obs_init(&G.obs);
    sqlease_db_options_init(&o);
    o.conn = G.dsn;
    o.login_timeout_ms = 5000;
    o.query_timeout_ms = 5000;
    o.log = log_quiet;
    o.log_level = SQLEASE_LOG_WARN;
    if (sqlease_db_open(&G.db, &o, &err) != SQLEASE_OK) {
        fprintf(stderr, "chaos: cannot open the database: %s\n", err.message);
        return 69;
    }
    G.dialect = sqlease_db_dialect(G.db);
    if (setup_tables() != 0) {
        sqlease_db_close(G.db);
        return 69;
    }
    if (strcmp(G.dialect, "sqlite") != 0 && G.db_port > 0) {
        G.proxy = ch_proxy_start(G.db_host, G.db_port, G.ninst);
        if (G.proxy == NULL)
            say("no proxy: partitions skipped");
    }
    set_conns();
    if (strcmp(G.scenario, "chaos") != 0)
        G.seconds = 0; /* the reconnect scenarios take the time they take */
    printf("sqlease-chaos: dialect %s, scenario %s, seed %llu, %lld s, %d instances, "
           "ttl %lld ms, heartbeat %lld ms, renew deadline %lld ms, retry %lld ms, kill grace "
           "%lld ms, query timeout %lld ms\n  work dir %s\n  sqlease %s\n",
           G.dialect, G.scenario, (unsigned long long)G.seed, (long long)G.seconds, G.ninst,
           (long long)G.ttl, (long long)G.hb, (long long)G.rd, (long long)G.retry,
           (long long)G.grace, (long long)G.qtimeout, G.dir, G.bin);
    fflush(stdout);

    G.t0 = ch_mono_ms();
    G.obs.t_begin = G.t0;
    for (int i = 0; i < G.ninst && !interrupted; i++)
        if (start_instance(i) != 0)
            interrupted = 1;
    if (!interrupted) {
        if (strcmp(G.scenario, "chaos") == 0)
            scenario_chaos();
        else if (strcmp(G.scenario, "reconnect-short") == 0)
            scenario_reconnect_short();
        else if (strcmp(G.scenario, "partition-shutdown") == 0)
            scenario_partition_shutdown();
        else
            scenario_reconnect_long();
    }
    if (interrupted)
        ch_violation(&G.obs, "interrupted before the end");
    teardown();
    check_guarded_row();
    violations = ch_analyze(&G.obs, &v);
    ch_print_verdict(&G.obs, &v, G.dialect, G.scenario, G.seed,
                     (G.obs.t_end - G.t0 + 500) / 1000);
    drop_tables();
    sqlease_db_close(G.db);
    if (violations == 0 && !G.keep) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", G.dir);
        if (system(cmd) != 0)
            fprintf(stderr, "chaos: could not remove %s\n", G.dir);
    } else {
        printf("events and instance logs kept in %s\n", G.dir);
    }
    ch_obs_free(&G.obs);
    return violations == 0 ? 0 : 1;
}
