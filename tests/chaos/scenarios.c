/*
 * scenarios.c -- the faults a real network, a real server and a shell do
 * to a fleet, and the deterministic `kernel` scenario that injects each
 * of them once.
 *
 *  - kernel cuts (nft.c): the kernel drops one instance's packets, or the
 *    whole fleet's, for less and for more than the ttl; and one-way loss,
 *    only server -> client or only client -> server, for the whole fleet.
 *    TCP then retransmits with backoff, which is what a driver waiting on
 *    its socket sees in a real partition;
 *  - a frozen server: every server process SIGSTOPped (the PostgreSQL
 *    postmaster and each backend, which run in process groups of their
 *    own; MariaDB's one mariadbd), for less and for more than the ttl.
 *    The kernel still accepts connections and acknowledges bytes, so the
 *    client's TCP is content and only a bound of the client's own can end
 *    the wait;
 *  - a server that never answers: the holder's proxy legs turn into a
 *    listener that accepts and never reads or writes (proxy.c), so each
 *    reconnect of the holder and its CMD must give up within the login
 *    timeout; and `sqlease status` / `run --no-wait` pointed at such a
 *    listener must exit within the login timeout;
 *  - SIGTERM into silence: the fleet cut off by the kernel, SIGTERM to the
 *    holder's sqlease between statements, with one in flight, with a
 *    second SIGTERM and a SIGINT during the wait, and to a `sqlease run`:
 *    it must exit within query timeout + kill grace + 1 s, its CMD gone;
 *  - job control: SIGSTOP to the holder's whole sqlease process group
 *    (sqlease and its guard, as a shell stops a job), longer than the ttl:
 *    CMD, in a group of its own, must still be stopped by its deadline;
 *  - the same --owner for two instances: never two CMDs at once.
 *
 * After every fault the fleet must settle on one holder; the time from
 * the end of the fault to the holder that lasts is the fault's recovery
 * (analyze.c), bounded by ttl + retry + query timeout + 1 s.  A fleet that
 * does not settle within --give-up is restarted, so that one failure does
 * not hide the faults after it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* ------------------------------------------------------------------ */
/* What applies here                                                   */
/* ------------------------------------------------------------------ */

static int server_pids(long *out, int cap);

/* NULL when the server's processes can be frozen, else why not. */
static const char *freeze_why_not(void)
{
    long pids[64];
    int n = server_pids(pids, 64);

    if (n == 0)
        return "--pids-cmd / SQLEASE_DB_PIDS_CMD printed no pid";
    for (int k = 0; k < n; k++)
        if (kill((pid_t)pids[k], 0) != 0 && errno == EPERM)
            return "no permission to stop the server's processes (needs root or the "
                   "server's user)";
    return NULL;
}

/* NULL when kind k can run here, else why not. */
static const char *why_not(int k)
{
    int server = strcmp(CH.dialect, "sqlite") != 0;

    switch (k) {
    case F_CUT_ONE_SHORT:
    case F_CUT_ONE_LONG:
    case F_CUT_FLEET_SHORT:
    case F_CUT_FLEET_LONG:
    case F_LOSS_TO_CLIENT:
    case F_LOSS_TO_SERVER:
    case F_TERM_IDLE:
    case F_TERM_IN_FLIGHT:
    case F_TERM_TWICE:
    case F_TERM_RUN:
        if (CH.proxy == NULL)
            return server ? "no proxy (no server port)" : "no server to cut off (sqlite)";
        return CH.net_ok ? NULL : CH.net_why;
    case F_SERVER_FREEZE_SHORT:
    case F_SERVER_FREEZE_LONG:
        if (!server)
            return "no server to freeze (sqlite)";
        return CH.pids_cmd != NULL ? freeze_why_not() : "no --pids-cmd / SQLEASE_DB_PIDS_CMD";
    case F_SILENT_SERVER:
        if (CH.proxy == NULL)
            return server ? "no proxy (no server port)" : "no server to silence (sqlite)";
        return NULL;
    case F_JOB_STOP:
    case F_SAME_OWNER:
        return NULL;
    default:
        return "not a kernel-scenario fault";
    }
}

int kernel_kind_applies(int k)
{
    return why_not(k) == NULL;
}

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

/* A holder cut off at t has proven its hold at t at the latest, so its
 * CMD must be gone by its deadline plus the guard's slack and the kill
 * grace (the CMD may be stuck in a write through the same cut and need
 * the SIGKILL); 500 ms more for a loaded machine. */
int64_t stop_bound(int64_t t)
{
    return t + CH.rd + CH.slack + CH.grace + 500;
}

/* The proxy legs (loopback ports) of instance i: its sqlease's and its
 * CMD's.  Returns how many were written. */
static int legs_of(int i, int *ports)
{
    ports[0] = ch_proxy_port(CH.proxy, i);
    ports[1] = ch_proxy_port(CH.proxy, CH.ninst + i);
    return 2;
}

/* Every instance's legs (not the silent listener's). */
static int legs_all(int *ports)
{
    for (int i = 0; i < 2 * CH.ninst; i++)
        ports[i] = ch_proxy_port(CH.proxy, i);
    return 2 * CH.ninst;
}

/* Every instance's sqlease leg: the fleet's lease traffic, not its work's. */
static int legs_lease(int *ports)
{
    for (int i = 0; i < CH.ninst; i++)
        ports[i] = ch_proxy_port(CH.proxy, i);
    return CH.ninst;
}

static void heal_net(void *arg)
{
    (void)arg;
    (void)ch_nft_heal();
}

/*
 * Keep a fault on until heal_at, then undo it (undo(arg)) and mark fault
 * fi healed, while watching the holder's CMD c: when must_stop (the fault
 * outlasts the renew deadline, so no renew can have proven the hold), it
 * must be gone by stop_bound(t).  The figure "stop.<kind>" is how long
 * after t it went.  Returns when the fault is undone and the CMD is gone
 * or past its bound.
 */
static void hold_fault(size_t fi, const ch_cmd *c, int64_t t, int64_t heal_at, int must_stop,
                       void (*undo)(void *), void *arg)
{
    int kind = CH.obs.faults[fi].kind;
    int64_t bound = stop_bound(t), gone_at = -1, now;
    int healed = 0;
    char name[48], what[200];

    for (;;) {
        monitor();
        now = ch_mono_ms();
        if (gone_at < 0 && ch_pid_gone(c->pid)) {
            const ch_cmd *cc = cmd_by_pid(c->pid);
            gone_at = cc != NULL && cc->end >= 0 ? cc->end : now;
        }
        if (!healed && (now >= heal_at || ch_interrupted)) {
            /* The end is stamped as the undo begins: a holder that starts
             * while it is under way (a frozen server answering the moment
             * its first process resumes) starts after the end. */
            fault_heal(fi);
            undo(arg);
            healed = 1;
        }
        if (healed && (!must_stop || gone_at >= 0 || now >= bound || ch_interrupted))
            break;
        ch_nap_ms(5);
    }
    if (!must_stop)
        return;
    snprintf(name, sizeof name, "stop.%s", ch_fault_names[kind]);
    snprintf(what, sizeof what, "%s: the holder's CMD (instance %d, pid %ld) was not gone by "
             "its deadline + slack + kill grace + 500 ms", ch_fault_names[kind], c->inst, c->pid);
    ch_figure_note(&CH.obs, name, (gone_at >= 0 ? gone_at : now) - t, bound - t, gone_at < 0,
                   what);
}

/* ------------------------------------------------------------------ */
/* Kernel cuts                                                         */
/* ------------------------------------------------------------------ */

/* Drop the packets of the holder's legs (or every instance's) in dirs
 * for `len` ms. */
static void fault_cut(int kind, long h, int fleet, int dirs, int64_t len)
{
    ch_cmd c = CH.obs.cmds[h];
    int ports[2 * MAX_INST];
    int n = fleet ? legs_all(ports) : legs_of(c.inst, ports);
    char d[200];
    int64_t t;
    size_t fi;

    describe(d, sizeof d, h);
    snprintf(d + strlen(d), sizeof d - strlen(d), " %s%s for %lld ms",
             fleet ? "whole fleet" : "holder only",
             dirs == CH_DROP_BOTH ? "" : dirs == CH_DROP_TO_CLIENT ? ", server->client"
                                                                   : ", client->server",
             (long long)len);
    fault_begin(kind, fleet ? -1 : c.inst, d);
    fi = CH.obs.nfaults - 1;
    t = ch_mono_ms();
    if (ch_nft_cut(ports, n, dirs) != 0) {
        ch_violation(&CH.obs, "%s: nft could not install the cut", ch_fault_names[kind]);
        (void)ch_nft_heal();
        fault_heal(fi);
        return;
    }
    hold_fault(fi, &c, t, t + len, len > CH.rd, heal_net, NULL);
}

/* ------------------------------------------------------------------ */
/* A frozen server                                                     */
/* ------------------------------------------------------------------ */

/* The server's pids, from --pids-cmd (one a line). */
static int server_pids(long *out, int cap)
{
    FILE *f = popen(CH.pids_cmd, "r");
    char line[64];
    int n = 0;

    if (f == NULL)
        return 0;
    while (fgets(line, sizeof line, f) != NULL) {
        long pid = strtol(line, NULL, 10);
        if (pid > 1 && n < cap)
            out[n++] = pid;
    }
    (void)pclose(f);
    return n;
}

/* SIGSTOP every server process.  The first pid listed is the server's
 * main process (the postmaster), stopped first so that it forks no new
 * backend; the list is read again until it holds nothing new, so that a
 * backend forked meanwhile is stopped too.  Each pid is told to the
 * keeper before it is stopped.  Returns how many were stopped. */
static int freeze_server(void)
{
    for (int round = 0; round < 6; round++) {
        long pids[64];
        int n = server_pids(pids, 64), fresh = 0;

        for (int k = 0; k < n; k++) {
            int seen = 0;
            for (int j = 0; j < CH.nfrozen; j++)
                seen |= CH.frozen[j] == pids[k];
            if (seen || CH.nfrozen == (int)(sizeof CH.frozen / sizeof CH.frozen[0]))
                continue;
            ch_keeper_frozen(pids[k]);
            if (kill((pid_t)pids[k], SIGSTOP) == 0) {
                CH.frozen[CH.nfrozen++] = pids[k];
                fresh++;
            }
        }
        if (fresh == 0)
            break;
    }
    return CH.nfrozen;
}

static void thaw_server(void *arg)
{
    long pids[64];
    int n;

    (void)arg;
    for (int j = 0; j < CH.nfrozen; j++)
        kill((pid_t)CH.frozen[j], SIGCONT);
    CH.nfrozen = 0;
    if (CH.pids_cmd != NULL) {
        n = server_pids(pids, 64);
        for (int k = 0; k < n; k++)
            kill((pid_t)pids[k], SIGCONT);
    }
}

static void fault_server_freeze(int kind, long h, int64_t len)
{
    ch_cmd c = CH.obs.cmds[h];
    char d[200];
    int64_t t;
    size_t fi;
    int n;

    describe(d, sizeof d, h);
    snprintf(d + strlen(d), sizeof d - strlen(d), " every server process for %lld ms",
             (long long)len);
    fault_begin(kind, -1, d);
    fi = CH.obs.nfaults - 1;
    t = ch_mono_ms();
    n = freeze_server();
    if (n == 0) {
        ch_violation(&CH.obs, "%s: no server process to stop (--pids-cmd printed nothing)",
                     ch_fault_names[kind]);
        fault_heal(fi);
        return;
    }
    say("stopped %d server processes", n);
    hold_fault(fi, &c, t, t + len, len > CH.rd, thaw_server, NULL);
}

/* ------------------------------------------------------------------ */
/* A server that never answers                                         */
/* ------------------------------------------------------------------ */

static int login_bound(void)
{
    /* The login timeout, plus the library's documented slack over it
     * (500 ms), plus 250 ms for a process to start and load its driver on
     * a loaded machine (about 5 ms when idle). */
    return (int)(CH.login_timeout + 500 + 250);
}

/* How long a connection to a server that never answers may stay open.
 * The caller's own wait is bounded by the login timeout + 500 ms (the
 * login.* figures time whole processes); a connect given up at that bound
 * is abandoned to the driver, whose socket then lives until the driver
 * gives up by itself: libpq's connect_timeout has a 2 s minimum, so
 * psqlODBC's sockets live max(login timeout, 2 s). */
static int socket_bound(void)
{
    int64_t driver = CH.login_timeout > 2000 ? CH.login_timeout : 2000;
    return (int)(driver + 500);
}

typedef struct silent_arg {
    int legs[2];
} silent_arg;

static void unsilence(void *arg)
{
    silent_arg *a = arg;

    ch_proxy_set_mode(CH.proxy, a->legs[0], CH_LEG_FORWARD);
    ch_proxy_set_mode(CH.proxy, a->legs[1], CH_LEG_FORWARD);
}

/* The holder's legs drop its connections and turn into a listener that
 * never answers, for longer than the ttl: every reconnect its sqlease
 * and its CMD make must give up within the login timeout (+ slack). */
static void fault_silent_server(long h)
{
    ch_cmd c = CH.obs.cmds[h];
    silent_arg a;
    char d[200];
    int64_t t, longest = -1;
    int total = 0, gave_up = 0;
    size_t fi;

    a.legs[0] = c.inst;
    a.legs[1] = CH.ninst + c.inst;
    describe(d, sizeof d, h);
    snprintf(d + strlen(d), sizeof d - strlen(d), " for %lld ms", (long long)CH.over_ttl);
    fault_begin(F_SILENT_SERVER, c.inst, d);
    fi = CH.obs.nfaults - 1;
    t = ch_mono_ms();
    ch_proxy_set_mode(CH.proxy, a.legs[0], CH_LEG_SILENT);
    ch_proxy_set_mode(CH.proxy, a.legs[1], CH_LEG_SILENT);
    hold_fault(fi, &c, t, t + CH.over_ttl, 1, unsilence, &a);
    for (int k = 0; k < 2; k++) {
        int n, g;
        int64_t l;

        ch_proxy_silent_stats(CH.proxy, a.legs[k], t, &n, &g, &l);
        say("silent server: %s leg: %d connects, %d given up by the client, longest held "
            "%lld ms", k == 0 ? "sqlease's" : "CMD's", n, g, (long long)l);
        total += n;
        gave_up += g;
        if (l > longest)
            longest = l;
    }
    if (total == 0) {
        ch_violation(&CH.obs, "silent-server: nothing connected to the silent listener, so "
                     "nothing was measured");
        return;
    }
    ch_figure_note(&CH.obs, "silent.connect", longest, socket_bound(), 0,
                   "silent-server: a connection to a server that never answers stayed open "
                   "past max(login timeout, 2 s) + 500 ms");
    (void)gave_up;
}

/* Run `sqlease ARGS` against the silent listener, bounded by `cap` ms
 * (SIGKILL after).  Returns the time it took, and its wait status in *st
 * (-1 when killed). */
static int64_t timed_cli(const char *const *args, int64_t cap, int *st)
{
    char log[700];
    char *argv[24];
    int n = 0;
    pid_t pid;
    int64_t t = ch_mono_ms();

    snprintf(log, sizeof log, "%s/silent-login.log", CH.dir);
    argv[n++] = (char *)CH.bin;
    for (int i = 0; args[i] != NULL && n < 23; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    *st = -1;
    pid = fork();
    if (pid == 0) {
        int out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
        int nul = open("/dev/null", O_RDONLY);

        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (out >= 0 && nul >= 0) {
            dup2(nul, 0);
            dup2(out, 1);
            dup2(out, 2);
        }
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        execv(argv[0], argv);
        _exit(127);
    }
    if (pid < 0)
        return -1;
    setpgid(pid, pid);
    for (;;) {
        int s;
        pid_t r = waitpid(pid, &s, WNOHANG);

        if (r == pid) {
            *st = s;
            return ch_mono_ms() - t;
        }
        if (ch_mono_ms() - t >= cap) {
            kill(-pid, SIGKILL);
            while (waitpid(pid, &s, 0) < 0 && errno == EINTR)
                ;
            return ch_mono_ms() - t;
        }
        monitor();
        ch_nap_ms(5);
    }
}

/* `sqlease status` and `sqlease run --no-wait` with --login-timeout
 * against the silent listener, through this dialect's driver: each must
 * give up within the login timeout + 500 ms (+ a process start). */
static void measure_silent_login(void)
{
    char conn[1400], lt[48], qt[48];
    const char *run_args[] = {"--dsn", conn, "--table", CH.lease_table, "--name", LEASE_NAME,
                              lt, qt, "run", "--no-wait", "--", "/bin/true", NULL};
    const char *status_args[] = {"--dsn", conn, "--table", CH.lease_table, "--name",
                                 LEASE_NAME, lt, qt, "status", NULL};
    struct {
        const char *name, *shown;
        const char *const *args;
    } cmds[] = {{"login.status", "status", status_args},
                {"login.run-no-wait", "run --no-wait", run_args}};
    int64_t cap = CH.login_timeout + 5000;

    silent_conn(conn, sizeof conn);
    if (conn[0] == '\0') {
        if (strcmp(CH.dialect, "sqlite") == 0)
            say("silent-login does not apply to sqlite: no server to connect to");
        else
            ch_skip(&CH.obs, "silent-login", "no proxy (no server port)");
        return;
    }
    snprintf(lt, sizeof lt, "--login-timeout=%lldms", (long long)CH.login_timeout);
    snprintf(qt, sizeof qt, "--query-timeout=%lldms", (long long)CH.qtimeout);
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++) {
        int st;
        int64_t ms = timed_cli(cmds[k].args, cap, &st);
        char what[160];

        if (st < 0)
            say("`sqlease %s` against a server that never answers: still waiting after %lld ms; "
                "killed", cmds[k].shown, (long long)ms);
        else
            say("`sqlease %s` against a server that never answers: exited %d after %lld ms",
                cmds[k].shown, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
                (long long)ms);
        snprintf(what, sizeof what, "`sqlease %s` with --login-timeout %lldms against a server "
                 "that never answers", cmds[k].shown, (long long)CH.login_timeout);
        ch_figure_note(&CH.obs, cmds[k].name, ms, login_bound(), st < 0, what);
    }
}

/* ------------------------------------------------------------------ */
/* SIGTERM into silence                                                */
/* ------------------------------------------------------------------ */

/* Stop every instance (SIGTERM, then SIGKILL if it lingers); they are
 * reachable, so each releases. */
static void stop_all(void)
{
    for (int i = 0; i < CH.ninst; i++)
        if (CH.inst[i].pid > 0) {
            CH.inst[i].expect_exit = 1;
            kill(CH.inst[i].pid, SIGTERM);
        }
    for (int i = 0; i < CH.ninst; i++)
        if (CH.inst[i].pid > 0)
            (void)reap_instance(i, 10000);
}

static void start_all(void)
{
    for (int i = 0; i < CH.ninst; i++)
        if (CH.inst[i].pid <= 0)
            (void)start_instance(i);
}

/*
 * The whole fleet's lease traffic cut off by the kernel (every sqlease's
 * leg; the CMDs' own connections stay up, so CMD stops the moment it is
 * told and what is measured is sqlease's own wait), then SIGTERM to the
 * holder's sqlease:
 *   F_TERM_IDLE       right after an answer reached it (no statement in
 *                     flight; the next renew is a heartbeat away);
 *   F_TERM_IN_FLIGHT  once a packet of its own hit the cut (a statement
 *                     in flight);
 *   F_TERM_TWICE      as in flight, then SIGTERM again 300 ms later and
 *                     SIGINT 600 ms later;
 *   F_TERM_RUN        as in flight, the holder being one `sqlease run`
 *                     (the fleet is stopped, one run started and awaited).
 * It must exit within query timeout + kill grace + 1 s, CMD gone.
 */
static void fault_term(int kind, long h)
{
    ch_cmd c;
    char d[200], name[48], what[200];
    int ports[2 * MAX_INST], n, exited = 0, st = -1, cmd_left = 0, again = 0;
    int64_t t_sig, bound, cap, exit_ms = -1, since_answer = -1;
    size_t fi;
    int i;
    pid_t pid;

    if (kind == F_TERM_RUN) {
        int64_t t;

        fault_begin(kind, 0, "(fleet stopped; one `sqlease run` holds; fleet cut off; SIGTERM "
                             "with a statement in flight)");
        fi = CH.obs.nfaults - 1;
        stop_all();
        CH.inst[0].mode = MODE_RUN;
        t = ch_mono_ms();
        if (start_instance(0) != 0 || await_successor(t, CH.ttl + CH.retry + 5000) < 0 ||
            (h = holder_index()) < 0) {
            ch_violation(&CH.obs, "term-run: `sqlease run` did not start its CMD");
            CH.inst[0].mode = MODE_SUPERVISE;
            fault_heal(fi);
            stop_all();
            start_all();
            return;
        }
        sleep_mon(CH.hb); /* a renew or two: the run is settled as holder */
        h = holder_index();
        if (h < 0) {
            ch_violation(&CH.obs, "term-run: the `sqlease run` lost its CMD before the cut");
            CH.inst[0].mode = MODE_SUPERVISE;
            fault_heal(fi);
            stop_all();
            start_all();
            return;
        }
        c = CH.obs.cmds[h];
    } else {
        c = CH.obs.cmds[h];
        describe(d, sizeof d, h);
        fault_begin(kind, c.inst, d);
        fi = CH.obs.nfaults - 1;
    }
    i = c.inst;
    pid = CH.inst[i].pid;
    n = legs_lease(ports);
    bound = CH.qtimeout + CH.grace + 1000;
    cap = CH.give_up / 2 > bound ? CH.give_up / 2 : bound + 1000;

    if (kind == F_TERM_IDLE) {
        /* Cut right after an answer passed to the holder's sqlease. */
        int64_t until = ch_mono_ms() + 3 * CH.hb + 1000, last;
        uint64_t a0 = ch_proxy_answers(CH.proxy, i, NULL);

        while (ch_proxy_answers(CH.proxy, i, NULL) == a0 && ch_mono_ms() < until)
            ch_nap_ms(1);
        if (ch_nft_cut(ports, n, CH_DROP_BOTH) != 0) {
            ch_violation(&CH.obs, "term-idle: nft could not install the cut");
            fault_heal(fi);
            return;
        }
        t_sig = ch_mono_ms();
        CH.inst[i].expect_exit = 1;
        kill(pid, SIGTERM);
        (void)ch_proxy_answers(CH.proxy, i, &last);
        since_answer = last > 0 ? t_sig - last : -1;
        say("SIGTERM to sqlease pid %d %lld ms after its last answer (heartbeat %lld ms)",
            (int)pid, (long long)since_answer, (long long)CH.hb);
    } else {
        int64_t until;
        long dropped = 0;

        if (ch_nft_cut(ports, n, CH_DROP_BOTH) != 0) {
            ch_violation(&CH.obs, "%s: nft could not install the cut", ch_fault_names[kind]);
            fault_heal(fi);
            return;
        }
        /* Its next statement (a renew within a heartbeat) hits the cut:
         * the rule's counter says so. */
        until = ch_mono_ms() + 3 * CH.hb + 2000;
        while (ch_mono_ms() < until && !ch_interrupted) {
            dropped = ch_nft_dropped(ports[i], CH_DROP_TO_SERVER);
            if (dropped > 0)
                break;
            monitor();
            ch_nap_ms(20);
        }
        if (dropped <= 0)
            say("%s: no packet from the holder's sqlease hit the cut within %lld ms; "
                "signalling anyway", ch_fault_names[kind], (long long)(3 * CH.hb + 2000));
        t_sig = ch_mono_ms();
        CH.inst[i].expect_exit = 1;
        kill(pid, SIGTERM);
        say("SIGTERM to sqlease pid %d with a statement in flight (%ld packets dropped)",
            (int)pid, dropped);
    }
    while (ch_mono_ms() < t_sig + cap && !ch_interrupted) {
        int64_t el = ch_mono_ms() - t_sig;

        if (kind == F_TERM_TWICE && el >= 300 && again == 0) {
            kill(pid, SIGTERM);
            again = 1;
        }
        if (kind == F_TERM_TWICE && el >= 600 && again == 1) {
            kill(pid, SIGINT);
            again = 2;
        }
        if (waitpid(pid, &st, WNOHANG) == pid) {
            exited = 1;
            exit_ms = ch_mono_ms() - t_sig;
            /* CMD must be gone when sqlease has gone: look before the
             * monitor reaps anything else. */
            cmd_left = !ch_pid_gone(c.pid) || ch_group_members(c.pid) > 0;
            break;
        }
        monitor();
        ch_nap_ms(5);
    }
    if (exited) {
        CH.inst[i].pid = 0;
        say("%s: sqlease exited %lld ms after SIGTERM (%s %d)", ch_fault_names[kind],
            (long long)exit_ms, WIFEXITED(st) ? "status" : "signal",
            WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        if (cmd_left)
            ch_violation(&CH.obs, "%s: CMD pid %ld was still running when its sqlease exited",
                         ch_fault_names[kind], c.pid);
    }
    snprintf(name, sizeof name, "exit.%s", ch_fault_names[kind]);
    snprintf(what, sizeof what, "%s: sqlease pid %d cut off from the server took too long to "
             "exit on SIGTERM (bound: query timeout + kill grace + 1 s)", ch_fault_names[kind],
             (int)pid);
    ch_figure_note(&CH.obs, name, exited ? exit_ms : ch_mono_ms() - t_sig, bound, !exited,
                   what);
    fault_heal(fi);
    (void)ch_nft_heal();
    if (!exited) {
        int64_t healed = ch_mono_ms();
        (void)reap_instance(i, 20000);
        say("%s: still running %lld ms after SIGTERM; after the heal it exited in %lld ms",
            ch_fault_names[kind], (long long)cap, (long long)(ch_mono_ms() - healed));
    }
    if (kind == F_TERM_RUN) {
        CH.inst[0].mode = MODE_SUPERVISE;
        start_all();
    } else {
        restart_instance(i);
    }
}

/* ------------------------------------------------------------------ */
/* Job control, same owner                                             */
/* ------------------------------------------------------------------ */

static void cont_group(void *arg)
{
    pid_t pg = *(pid_t *)arg;

    kill(-pg, SIGCONT);
}

/* SIGSTOP to the holder's sqlease process group (sqlease and its guard;
 * CMD runs in a group of its own), as a shell's job control stops a job,
 * for ttl + 1.5 s: CMD must still be stopped by its deadline, and so never
 * overlap the successor (analyze.c allows no overlap here). */
static void fault_job_stop(long h)
{
    ch_cmd c = CH.obs.cmds[h];
    pid_t pg = CH.inst[c.inst].pid;
    char d[200];
    int64_t t;
    size_t fi;

    describe(d, sizeof d, h);
    snprintf(d + strlen(d), sizeof d - strlen(d), " process group %d for %lld ms", (int)pg,
             (long long)(CH.ttl + 1500));
    fault_begin(F_JOB_STOP, c.inst, d);
    fi = CH.obs.nfaults - 1;
    t = ch_mono_ms();
    kill(-pg, SIGSTOP);
    hold_fault(fi, &c, t, t + CH.ttl + 1500, 1, cont_group, &pg);
}

/* The holder's owner id, read from the lease row; "" if unknown. */
static void holder_owner(char *buf, size_t cap)
{
    sqlease_error err;
    char q[256];
    db_out out;
    db_bind b;
    int has = 0;

    buf[0] = '\0';
    memset(&out, 0, sizeof out);
    out.type = DB_TEXT;
    out.s = buf;
    out.cap = cap;
    b.type = DB_TEXT;
    b.i = 0;
    b.s = LEASE_NAME;
    snprintf(q, sizeof q, "SELECT owner FROM %s WHERE name = ?", CH.lease_table);
    for (int tries = 0; tries < 2; tries++)
        if (sqle_db_exec(CH.db, q, &b, 1, &out, 1, &has, NULL, &err) == SQLEASE_OK)
            break;
    if (!has || out.is_null)
        buf[0] = '\0';
}

/* A second instance started with the holder's own --owner (two overlapping
 * cron runs of one host named by its hostname): it must wait like anyone
 * else, so never two CMDs at once (analyze.c checks the overlap and that
 * no token is used by two holders).  Watched for ttl + 1 s. */
static void fault_same_owner(long h)
{
    ch_cmd c = CH.obs.cmds[h];
    int k = (c.inst + 1) % CH.ninst;
    char owner[256], d[400];
    size_t fi;
    int most = 0;
    int64_t until;

    holder_owner(owner, sizeof owner);
    if (owner[0] == '\0' || strlen(owner) >= sizeof CH.inst[k].owner) {
        ch_violation(&CH.obs, "same-owner: cannot read the holder's owner id from the row");
        return;
    }
    snprintf(d, sizeof d, "(instance %d restarted with the holder's owner %s)", k, owner);
    fault_begin(F_SAME_OWNER, k, d);
    fi = CH.obs.nfaults - 1;
    CH.inst[k].expect_exit = 1;
    kill(CH.inst[k].pid, SIGTERM);
    (void)reap_instance(k, 10000);
    snprintf(CH.inst[k].owner, sizeof CH.inst[k].owner, "%s", owner);
    (void)start_instance(k);
    until = ch_mono_ms() + CH.ttl + 1000;
    while (ch_mono_ms() < until && !ch_interrupted) {
        monitor();
        if (open_cmds() > most)
            most = open_cmds();
        ch_nap_ms(10);
    }
    if (most > 1)
        say("same-owner: %d CMDs ran at once", most);
    CH.inst[k].expect_exit = 1;
    kill(CH.inst[k].pid, SIGTERM);
    (void)reap_instance(k, 10000);
    CH.inst[k].owner[0] = '\0';
    fault_heal(fi);
    (void)start_instance(k);
}

/* ------------------------------------------------------------------ */
/* Dispatch, settling, the scenario                                    */
/* ------------------------------------------------------------------ */

void run_kernel_fault(int kind, long h)
{
    switch (kind) {
    case F_CUT_ONE_SHORT: fault_cut(kind, h, 0, CH_DROP_BOTH, CH.short_fault); break;
    case F_CUT_ONE_LONG: fault_cut(kind, h, 0, CH_DROP_BOTH, CH.over_ttl); break;
    case F_CUT_FLEET_SHORT: fault_cut(kind, h, 1, CH_DROP_BOTH, CH.short_fault); break;
    case F_CUT_FLEET_LONG: fault_cut(kind, h, 1, CH_DROP_BOTH, CH.long_fault); break;
    case F_LOSS_TO_CLIENT: fault_cut(kind, h, 1, CH_DROP_TO_CLIENT, CH.long_fault); break;
    case F_LOSS_TO_SERVER: fault_cut(kind, h, 1, CH_DROP_TO_SERVER, CH.long_fault); break;
    case F_SERVER_FREEZE_SHORT: fault_server_freeze(kind, h, CH.short_fault); break;
    case F_SERVER_FREEZE_LONG: fault_server_freeze(kind, h, CH.over_ttl); break;
    case F_SILENT_SERVER: fault_silent_server(h); break;
    case F_TERM_IDLE:
    case F_TERM_IN_FLIGHT:
    case F_TERM_TWICE:
    case F_TERM_RUN: fault_term(kind, h); break;
    case F_JOB_STOP: fault_job_stop(h); break;
    case F_SAME_OWNER: fault_same_owner(h); break;
    default: break;
    }
}

/* Undo every host-level change: kernel rules, frozen server, silent or
 * blackholed legs.  Idempotent; the teardown and a fleet reset call it. */
void scenarios_teardown(void)
{
    (void)ch_nft_heal();
    if (CH.nfrozen > 0)
        thaw_server(NULL);
    if (CH.proxy != NULL)
        for (int i = 0; i < 2 * CH.ninst; i++)
            ch_proxy_set_mode(CH.proxy, i, CH_LEG_FORWARD);
}

/* Kill every instance and start the fleet afresh (after a fault the
 * fleet did not recover from within --give-up). */
static void reset_fleet(void)
{
    size_t fi;

    fault_begin(F_RESET, -1, "(every instance killed and restarted)");
    fi = CH.obs.nfaults - 1;
    scenarios_teardown();
    for (int i = 0; i < CH.ninst; i++)
        if (CH.inst[i].pid > 0) {
            CH.inst[i].expect_exit = 1;
            kill(-CH.inst[i].pid, SIGCONT);
            kill(-CH.inst[i].pid, SIGKILL);
            (void)reap_instance(i, 5000);
        }
    ch_nap_ms(200);
    monitor();
    for (size_t i = 0; i < CH.obs.ncmds; i++)
        if (CH.obs.cmds[i].end < 0) {
            kill(-(pid_t)CH.obs.cmds[i].pid, SIGKILL);
            kill((pid_t)CH.obs.cmds[i].pid, SIGKILL);
        }
    for (int i = 0; i < CH.ninst; i++) {
        CH.inst[i].mode = MODE_SUPERVISE;
        CH.inst[i].owner[0] = '\0';
    }
    start_all();
    fault_heal(fi);
}

/*
 * Wait for the fleet to settle after something that ended at `since`: one
 * CMD running for 500 ms, and the after-effects window passed (a holder
 * that has not renewed since `since` is stopped by since + renew deadline
 * + guard slack + kill grace; 400 ms more).  Returns the holder's index, or -1 after
 * --give-up; with reset_on_timeout the fleet is then restarted and
 * awaited once more.
 */
long settle(int64_t since, int reset_on_timeout)
{
    int64_t quiet = since + CH.rd + CH.slack + CH.grace + 400;
    int64_t until = since + CH.give_up;

    for (;;) {
        long h;
        int64_t now;

        monitor();
        h = holder_index();
        now = ch_mono_ms();
        if (h >= 0 && now - CH.obs.cmds[h].start >= 500 && now >= quiet)
            return h;
        if (now >= until || ch_interrupted)
            break;
        ch_nap_ms(10);
    }
    if (ch_interrupted || !reset_on_timeout)
        return -1;
    say("no single holder %lld ms after the fault ended (%d CMDs running): restarting every "
        "instance", (long long)(ch_mono_ms() - since), open_cmds());
    reset_fleet();
    return await_single_holder(500, CH.ttl + CH.retry + 10000);
}

/* Whether `name` is one of the comma-separated names in `list`. */
int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = list; *p != '\0';) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

/* Each fault once, in a fixed order, each followed by the wait for the
 * fleet to settle; kinds that cannot run here are skipped and said so. */
void scenario_kernel(void)
{
    static const int list[] = {
        F_CUT_ONE_SHORT,  F_CUT_ONE_LONG,   F_CUT_FLEET_SHORT,     F_CUT_FLEET_LONG,
        F_LOSS_TO_CLIENT, F_LOSS_TO_SERVER, F_SERVER_FREEZE_SHORT, F_SERVER_FREEZE_LONG,
        F_SILENT_SERVER,  F_TERM_IDLE,      F_TERM_IN_FLIGHT,      F_TERM_TWICE,
        F_TERM_RUN,       F_JOB_STOP,       F_SAME_OWNER,
    };
    long h = settle(CH.t0, 1);

    if (h < 0) {
        ch_violation(&CH.obs, "kernel: no single holder after the start");
        return;
    }
    if (CH.faults == NULL || strstr(CH.faults, "silent-login") != NULL)
        measure_silent_login();
    for (size_t k = 0; k < sizeof list / sizeof list[0] && !ch_interrupted; k++) {
        const char *why = why_not(list[k]);

        if (CH.faults != NULL && !in_list(CH.faults, ch_fault_names[list[k]]))
            continue;
        if (why != NULL && strcmp(CH.dialect, "sqlite") == 0) {
            say("fault %s does not apply to sqlite: %s", ch_fault_names[list[k]], why);
            continue;
        }
        if (why != NULL) {
            ch_skip(&CH.obs, ch_fault_names[list[k]], why);
            continue;
        }
        h = settle(last_fault_end(), 1);
        if (h < 0) {
            ch_violation(&CH.obs, "kernel: no single holder before %s, even after restarting "
                         "the fleet", ch_fault_names[list[k]]);
            return;
        }
        run_kernel_fault(list[k], h);
    }
    if (!ch_interrupted)
        (void)settle(last_fault_end(), 1);
}
