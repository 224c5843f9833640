/*
 * galera.c -- the faults of a replicated cluster, where each instance
 * talks to a node of its own, and what concurrent takes on different
 * nodes meet.
 *
 * A multi-primary cluster (MariaDB Galera) lets every node take writes and
 * decides between conflicting ones at commit: a transaction whose rows
 * another node changed first fails certification (or, if it was waiting
 * on a lock, is aborted by the replicated write: a brute-force abort),
 * which the client sees as a deadlock, SQLSTATE 40001.  The lease's one
 * UPDATE is decided there like anywhere else, so the faults here are of a
 * node, not of a client:
 *
 *  - node-kill        SIGKILL of the holder's node; it rejoins afterwards
 *  - node-kill-other  SIGKILL of a node the holder does not talk to: the
 *                     holder should ride it out
 *  - node-cutoff      the holder's node cut off from the others by the
 *                     kernel (ci/galera.sh's `cut`): it leaves the primary
 *                     component and refuses its clients' statements while
 *                     they stay connected
 *  - node-freeze      SIGSTOP of the holder's node for longer than the ttl:
 *                     its clients' statements hang, and the others stall
 *                     until the group declares it gone
 *  - cluster-restart  every node stopped cleanly, the cluster bootstrapped
 *                     from the last one, the others started
 *
 * Per fault: the holder's CMD must be gone by its deadline (stop.KIND),
 * and the figure next.KIND is the time from the fault to the next
 * holder's CMD start on another instance; the usual verdict (overlaps,
 * stale fenced writes, tokens, recovery) follows from the events.
 *
 * `contend` runs workers on every node that take the lease and release it
 * at once, in a loop, so takes on different nodes collide: once with the
 * server's own retry of an autocommit statement that fails certification
 * (wsrep_retry_autocommit = 1, the default), once without (0), where the
 * conflicts reach the client.  It counts takes, misses, conflicts read as
 * a lost race, and errors (which must be none: a conflict is never an
 * outage), the servers' certification failures and brute-force aborts,
 * and checks that no two holds overlap and that tokens only grow.
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
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define CONTEND_NAME "contend"

static long frozen_node_pid; /* a node this file stopped, 0 when none */
static int ran;              /* a galera scenario ran: the teardown restores the cluster */

/* Run the cluster's control command with the given arguments, watching
 * the fleet meanwhile.  Returns its exit status. */
static int ctl(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int ctl(const char *what, const char *fmt, ...)
{
    char args[256], cmd[1200];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s %s", CH.ctl, args);
    return run_cmd(what, cmd);
}

/* The first line of the control command's output (`pid N`, `sql N ...`),
 * or "" on failure. */
static void ctl_read(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void ctl_read(char *buf, size_t cap, const char *fmt, ...)
{
    char args[512], cmd[1400];
    va_list ap;
    FILE *f;

    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", CH.ctl, args);
    buf[0] = '\0';
    f = popen(cmd, "r");
    if (f == NULL)
        return;
    if (fgets(buf, (int)cap, f) == NULL)
        buf[0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    (void)pclose(f);
}

static int nodes(void)
{
    return CH.ninst_dsn;
}

/* The servers' own count of conflicts, summed over the nodes: write sets
 * that failed certification, and local transactions a replicated write
 * aborted.  A node's counters start again from 0 when it restarts, so
 * they are read before and after every fault and added up: a value
 * below the last one read is a restart's count since. */
static int64_t last_cert[MAX_INST + 1], last_bf[MAX_INST + 1];
static int64_t sum_cert, sum_bf;

static int64_t node_status(int n, const char *name)
{
    char v[64];

    ctl_read(v, sizeof v, "sql %d \"SELECT VARIABLE_VALUE FROM information_schema."
                          "GLOBAL_STATUS WHERE VARIABLE_NAME = '%s'\"", n, name);
    return v[0] != '\0' ? atoll(v) : -1;
}

static void count_conflicts(void)
{
    for (int n = 1; n <= nodes() && n <= MAX_INST; n++) {
        int64_t c = node_status(n, "WSREP_LOCAL_CERT_FAILURES");
        int64_t b = node_status(n, "WSREP_LOCAL_BF_ABORTS");

        if (c >= 0) {
            sum_cert += c >= last_cert[n] ? c - last_cert[n] : c;
            last_cert[n] = c;
        }
        if (b >= 0) {
            sum_bf += b >= last_bf[n] ? b - last_bf[n] : b;
            last_bf[n] = b;
        }
    }
}

/* The conflicts counted so far (since the first call). */
static void conflicts(int64_t *cert, int64_t *bf)
{
    count_conflicts();
    *cert = sum_cert;
    *bf = sum_bf;
}

/* ------------------------------------------------------------------ */
/* Node faults                                                         */
/* ------------------------------------------------------------------ */

typedef struct watch {
    const ch_cmd *c;   /* the holder when the fault began */
    int64_t t;         /* the fault began */
    int must_stop;     /* its node cannot serve it: its CMD must stop by its deadline */
    int64_t gone_at;   /* when its CMD was gone, -1 while it runs */
    int64_t next_at;   /* first CMD start by another sqlease since t, -1 none yet */
} watch;

static void look(watch *w)
{
    monitor();
    if (w->gone_at < 0 && ch_pid_gone(w->c->pid)) {
        const ch_cmd *cc = cmd_by_pid(w->c->pid);
        w->gone_at = cc != NULL && cc->end >= 0 ? cc->end : ch_mono_ms();
    }
    if (w->next_at < 0)
        for (size_t i = 0; i < CH.obs.ncmds; i++)
            if (CH.obs.cmds[i].start >= w->t && CH.obs.cmds[i].sup != w->c->sup) {
                w->next_at = CH.obs.cmds[i].start;
                break;
            }
}

static void watch_until(watch *w, int64_t until)
{
    while (ch_mono_ms() < until && !ch_interrupted) {
        look(w);
        ch_nap_ms(5);
    }
    look(w);
}

/* Bound of next.KIND: the row may need a whole ttl to expire, a follower
 * polls every retry and its statement may need one query timeout to fail
 * first (a stalled cluster), plus 1 s for a loaded machine: the recovery
 * bound. */
static int64_t next_bound(void)
{
    return CH.obs.recovery_bound;
}

/* After the fault is undone: the holder's CMD gone by its deadline (when
 * its node could not serve it), and the next holder, waited for up to its
 * bound + 5 s; both noted as figures. */
static void conclude(int kind, watch *w)
{
    char name[48], what[240];
    int64_t stop_by = stop_bound(w->t), until = w->t + next_bound() + 5000;

    while ((w->must_stop && w->gone_at < 0 && ch_mono_ms() < stop_by) ||
           (w->next_at < 0 && ch_mono_ms() < until)) {
        if (ch_interrupted)
            break;
        look(w);
        ch_nap_ms(5);
    }
    if (w->must_stop) {
        snprintf(name, sizeof name, "stop.%s", ch_fault_names[kind]);
        snprintf(what, sizeof what, "%s: the holder's CMD (instance %d, pid %ld) was not gone "
                 "by its deadline + slack + kill grace + 500 ms", ch_fault_names[kind],
                 w->c->inst, w->c->pid);
        ch_figure_note(&CH.obs, name, (w->gone_at >= 0 ? w->gone_at : ch_mono_ms()) - w->t,
                       stop_by - w->t, w->gone_at < 0, what);
        snprintf(name, sizeof name, "next.%s", ch_fault_names[kind]);
        snprintf(what, sizeof what, "%s: no other instance held within ttl + retry + query "
                 "timeout + 1 s of the fault", ch_fault_names[kind]);
        ch_figure_note(&CH.obs, name, (w->next_at >= 0 ? w->next_at : ch_mono_ms()) - w->t,
                       next_bound(), w->next_at < 0, what);
    }
    if (w->next_at >= 0)
        say("%s: the next holder started %lld ms after the fault", ch_fault_names[kind],
            (long long)(w->next_at - w->t));
    else
        say("%s: no other instance started CMD", ch_fault_names[kind]);
}

static int other_node(int node)
{
    return node % nodes() + 1;
}

/* SIGKILL of a node (the holder's, or with `other` one it does not talk
 * to), held down for ttl + 1 s, then started again: it rejoins by
 * incremental state transfer. */
static void fault_node_kill(long h, int other)
{
    int kind = other ? F_NODE_KILL_OTHER : F_NODE_KILL;
    ch_cmd c = CH.obs.cmds[h];
    int node = CH.inst[c.inst].node;
    char d[200];
    watch w = {&c, 0, !other, -1, -1};
    size_t fi;

    if (other)
        node = other_node(node);
    describe(d, sizeof d, h);
    snprintf(d + strlen(d), sizeof d - strlen(d), " on node %d; node %d killed",
             CH.inst[c.inst].node, node);
    fault_begin(kind, c.inst, d);
    fi = CH.obs.nfaults - 1;
    w.t = ch_mono_ms();
    if (ctl("node kill", "kill %d", node) != 0)
        ch_violation(&CH.obs, "%s: could not kill node %d", ch_fault_names[kind], node);
    watch_until(&w, w.t + CH.ttl + 1000);
    fault_heal(fi);
    if (ctl("node start", "start %d", node) != 0)
        ch_violation(&CH.obs, "%s: node %d did not rejoin", ch_fault_names[kind], node);
    look(&w);
    conclude(kind, &w);
    if (other)
        say("node-kill-other: the holder's CMD %s", w.gone_at < 0 ? "kept running throughout"
                                                                  : "stopped");
}

static void fault_node_cutoff(long h)
{
    ch_cmd c = CH.obs.cmds[h];
    int node = CH.inst[c.inst].node;
    char d[200];
    watch w = {&c, 0, 1, -1, -1};
    size_t fi;

    describe(d, sizeof d, h);
    snprintf(d + strlen(d), sizeof d - strlen(d), " node %d cut off for %lld ms", node,
             (long long)(CH.ttl + 3000));
    fault_begin(F_NODE_CUTOFF, c.inst, d);
    fi = CH.obs.nfaults - 1;
    w.t = ch_mono_ms();
    if (ctl("node cut", "cut %d", node) != 0)
        ch_violation(&CH.obs, "node-cutoff: could not cut node %d off", node);
    watch_until(&w, w.t + CH.ttl + 3000);
    fault_heal(fi);
    if (ctl("heal", "heal") != 0 || ctl("wait synced", "wait-synced 60") != 0)
        ch_violation(&CH.obs, "node-cutoff: node %d did not rejoin", node);
    look(&w);
    conclude(F_NODE_CUTOFF, &w);
}

static void fault_node_freeze(long h)
{
    ch_cmd c = CH.obs.cmds[h];
    int node = CH.inst[c.inst].node;
    char d[200], pid[32];
    watch w = {&c, 0, 1, -1, -1};
    size_t fi;
    long p;

    ctl_read(pid, sizeof pid, "pid %d", node);
    p = atol(pid);
    if (p <= 1) {
        ch_violation(&CH.obs, "node-freeze: no pid for node %d", node);
        return;
    }
    describe(d, sizeof d, h);
    snprintf(d + strlen(d), sizeof d - strlen(d), " node %d (pid %ld) stopped for %lld ms",
             node, p, (long long)(CH.ttl + 3000));
    fault_begin(F_NODE_FREEZE, c.inst, d);
    fi = CH.obs.nfaults - 1;
    w.t = ch_mono_ms();
    ch_keeper_frozen(p);
    frozen_node_pid = p;
    kill((pid_t)p, SIGSTOP);
    watch_until(&w, w.t + CH.ttl + 3000);
    fault_heal(fi);
    kill((pid_t)p, SIGCONT);
    frozen_node_pid = 0;
    if (ctl("wait synced", "wait-synced 60") != 0)
        ch_violation(&CH.obs, "node-freeze: node %d did not rejoin", node);
    look(&w);
    conclude(F_NODE_FREEZE, &w);
}

/* Every node stopped (the last one stays primary until it goes), then the
 * cluster bootstrapped again: the fleet must come back on its own. */
static void fault_cluster_restart(long h)
{
    ch_cmd c = CH.obs.cmds[h];
    char d[200];
    watch w = {&c, 0, 0, -1, -1};
    size_t fi;

    describe(d, sizeof d, h);
    fault_begin(F_CLUSTER_RESTART, -1, d);
    fi = CH.obs.nfaults - 1;
    w.t = ch_mono_ms();
    CH.db_down = 1;
    count_conflicts();
    if (ctl("cluster restart", "restart-all") != 0)
        ch_violation(&CH.obs, "cluster-restart: the cluster did not come back");
    else
        CH.db_down = 0;
    fault_heal(fi);
    look(&w);
}

static void run_galera_fault(int kind, long h)
{
    switch (kind) {
    case F_NODE_KILL: fault_node_kill(h, 0); break;
    case F_NODE_KILL_OTHER: fault_node_kill(h, 1); break;
    case F_NODE_CUTOFF: fault_node_cutoff(h); break;
    case F_NODE_FREEZE: fault_node_freeze(h); break;
    case F_CLUSTER_RESTART: fault_cluster_restart(h); break;
    default: break;
    }
}

void scenario_galera(void)
{
    static const int list[] = {F_NODE_KILL_OTHER, F_NODE_KILL, F_NODE_CUTOFF, F_NODE_FREEZE,
                               F_CLUSTER_RESTART};
    int64_t cert0, bf0, cert1, bf1;
    long h;

    ran = 1;
    conflicts(&cert0, &bf0);
    h = settle(CH.t0, 1);
    if (h < 0) {
        ch_violation(&CH.obs, "galera: no single holder after the start");
        return;
    }
    for (int r = 0; r < CH.rounds && !ch_interrupted; r++)
        for (size_t k = 0; k < sizeof list / sizeof list[0] && !ch_interrupted; k++) {
            if (CH.faults != NULL && !in_list(CH.faults, ch_fault_names[list[k]]))
                continue;
            h = settle(last_fault_end(), 1);
            if (h < 0) {
                ch_violation(&CH.obs, "galera: no single holder before %s, even after "
                             "restarting the fleet", ch_fault_names[list[k]]);
                return;
            }
            count_conflicts();
            run_galera_fault(list[k], h);
            count_conflicts();
        }
    if (!ch_interrupted)
        (void)settle(last_fault_end(), 1);
    conflicts(&cert1, &bf1);
    say("certification failures %lld, brute-force aborts %lld during the run (every node)",
        (long long)(cert1 - cert0), (long long)(bf1 - bf0));
    printf("galera-summary scenario=galera cert_failures=%lld bf_aborts=%lld\n",
           (long long)(cert1 - cert0), (long long)(bf1 - bf0));
    fflush(stdout);
}

/* Whatever a fault left: a node stopped, cut off or down.  Called by the
 * teardown whatever happened. */
void galera_teardown(void)
{
    if (!ran || CH.ctl == NULL)
        return;
    if (frozen_node_pid > 0) {
        kill((pid_t)frozen_node_pid, SIGCONT);
        frozen_node_pid = 0;
    }
    (void)ctl("heal", "heal");
    for (int n = 1; n <= nodes(); n++)
        (void)ctl("node start", "start %d", n); /* returns at once when it runs */
    if (ctl("wait synced", "wait-synced 60") == 0)
        CH.db_down = 0;
}

/* ------------------------------------------------------------------ */
/* Contention                                                          */
/* ------------------------------------------------------------------ */

/*
 * `sqlease-chaos __contend --dsn D --table T --events F --worker W
 *  --seconds S`: take the lease `contend` and release it at once, in a
 * loop, for S seconds.  Event lines:
 *
 *   T hold W PID TOKEN FROM TO     a hold: its take answered at FROM, its
 *                                  release sent at TO (inside the hold)
 *   T race W PID MESSAGE           the first conflict read as a lost race
 *   T error W PID STATUS MESSAGE   anything but held / not held
 *   T tally W PID TAKES MISSES RACES ERRORS
 *
 * RACES are the takes that met a conflict and read it as a lost race
 * (SQLEASE_NOT_HELD, "taken by a concurrent acquire").
 */
int ch_contend_main(int argc, char **argv)
{
    const char *events = NULL, *dsn = NULL, *table = NULL;
    int worker = -1;
    int64_t seconds = 10, end;
    long takes = 0, misses = 0, races = 0, errors = 0, pid = (long)getpid();
    sqlease_db_options dbo;
    sqlease_options o;
    sqlease_db *db;
    sqlease_lease *l;
    sqlease_error err;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--events") == 0)
            events = argv[i + 1];
        else if (strcmp(argv[i], "--dsn") == 0)
            dsn = argv[i + 1];
        else if (strcmp(argv[i], "--table") == 0)
            table = argv[i + 1];
        else if (strcmp(argv[i], "--worker") == 0)
            worker = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--seconds") == 0)
            seconds = atoll(argv[i + 1]);
    }
    if (events == NULL || dsn == NULL || table == NULL || worker < 0) {
        fprintf(stderr, "chaos contend: needs --events --dsn --table --worker\n");
        return 64;
    }
    sqlease_db_options_init(&dbo);
    dbo.conn = dsn;
    dbo.login_timeout_ms = 2000;
    dbo.query_timeout_ms = 2000;
    dbo.log_level = SQLEASE_LOG_ERROR;
    if (sqlease_db_open(&db, &dbo, &err) != SQLEASE_OK) {
        ch_append(events, "%lld error %d %ld open %s", (long long)ch_mono_ms(), worker, pid,
                  err.message);
        return 69;
    }
    sqlease_options_init(&o);
    o.table = table;
    o.name = CONTEND_NAME;
    o.ttl_ms = 5000;
    if (sqlease_lease_new(&l, db, &o, &err) != SQLEASE_OK) {
        sqlease_db_close(db);
        return 69;
    }
    end = ch_mono_ms() + seconds * 1000;
    while (ch_mono_ms() < end) {
        sqlease_lease_info info;
        int rc = sqlease_lease_acquire(l, &info, &err), released = 0;
        int64_t from = ch_mono_ms(), to;

        if (rc == SQLEASE_OK) {
            takes++;
            to = ch_mono_ms();
            rc = sqlease_lease_release(l, &released, &err);
            ch_append(events, "%lld hold %d %ld %lld %lld %lld", (long long)ch_mono_ms(), worker,
                      pid, (long long)info.token, (long long)from, (long long)to);
            if (rc != SQLEASE_OK || !released) {
                errors++;
                ch_append(events, "%lld error %d %ld %s release: %s", (long long)ch_mono_ms(),
                          worker, pid, sqlease_status_name(rc),
                          rc == SQLEASE_OK ? "cleared no row" : err.message);
            }
        } else if (rc == SQLEASE_NOT_HELD) {
            if (strstr(err.message, "concurrent acquire") != NULL) {
                if (races++ == 0) /* one sample per worker, for the record */
                    ch_append(events, "%lld race %d %ld %s", (long long)ch_mono_ms(), worker,
                              pid, err.message);
            } else
                misses++;
            /* A follower of a held lease polls; a tight loop would only
             * starve the servers of the machine's CPU. */
            ch_nap_ms(2);
        } else {
            errors++;
            ch_append(events, "%lld error %d %ld %s %s", (long long)ch_mono_ms(), worker, pid,
                      sqlease_status_name(rc), err.message);
        }
    }
    ch_append(events, "%lld tally %d %ld %ld %ld %ld %ld", (long long)ch_mono_ms(), worker, pid,
              takes, misses, races, errors);
    sqlease_lease_free(l);
    sqlease_db_close(db);
    return 0;
}

typedef struct hold {
    int worker;
    int64_t token, from, to;
} hold;

static int by_from(const void *a, const void *b)
{
    const hold *x = a, *y = b;

    return x->from < y->from ? -1 : x->from > y->from;
}

/* One phase: `per_node` workers on every node for `seconds`, then their
 * events read and checked. */
static void contend_phase(const char *label, int per_node, int64_t seconds)
{
    char events[900], wid[16], secs[32];
    pid_t pids[64];
    int nw = 0;
    long takes = 0, misses = 0, races = 0, errors = 0, overlaps = 0, backwards = 0;
    int races_shown = 0;
    int64_t cert0, bf0, cert1, bf1;
    hold *holds = NULL;
    size_t nh = 0, caph = 0;
    char line[1400];
    FILE *f;

    snprintf(events, sizeof events, "%s/contend-%s.log", CH.dir, label);
    snprintf(secs, sizeof secs, "%lld", (long long)seconds);
    conflicts(&cert0, &bf0);
    say("contend (%s): %d workers on each of %d nodes for %lld s", label, per_node, nodes(),
        (long long)seconds);
    for (int n = 0; n < nodes(); n++)
        for (int k = 0; k < per_node && nw < 64; k++) {
            pid_t p;

            snprintf(wid, sizeof wid, "%d", nw);
            p = fork();
            if (p == 0) {
                execl(CH.self, CH.self, "__contend", "--events", events, "--dsn",
                      CH.inst_dsn[n], "--table", CH.lease_table, "--worker", wid, "--seconds",
                      secs, (char *)NULL);
                _exit(127);
            }
            if (p > 0)
                pids[nw++] = p;
        }
    for (int i = 0; i < nw; i++) {
        int st;
        while (waitpid(pids[i], &st, WNOHANG) == 0 && !ch_interrupted) {
            monitor();
            ch_nap_ms(20);
        }
        if (ch_interrupted) {
            for (int j = i; j < nw; j++)
                kill(pids[j], SIGKILL);
            for (int j = i; j < nw; j++)
                (void)waitpid(pids[j], &st, 0);
            break;
        }
    }
    conflicts(&cert1, &bf1);
    f = fopen(events, "r");
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        char kind[16];
        long long t, tok, from, to;
        long a, b, c, e;
        int w;
        long pid;

        if (sscanf(line, "%lld %15s", &t, kind) != 2)
            continue;
        if (strcmp(kind, "hold") == 0 &&
            sscanf(line, "%*d %*s %d %ld %lld %lld %lld", &w, &pid, &tok, &from, &to) == 5) {
            if (nh == caph) {
                caph = caph ? 2 * caph : 1024;
                holds = realloc(holds, caph * sizeof *holds);
                if (holds == NULL) {
                    fclose(f);
                    return;
                }
            }
            holds[nh].worker = w;
            holds[nh].token = tok;
            holds[nh].from = from;
            holds[nh].to = to;
            nh++;
        } else if (strcmp(kind, "tally") == 0 &&
                   sscanf(line, "%*d %*s %d %ld %ld %ld %ld %ld", &w, &pid, &a, &b, &c, &e) == 6) {
            takes += a;
            misses += b;
            races += c;
            errors += e;
        } else if (strcmp(kind, "race") == 0 && races_shown++ == 0) {
            line[strcspn(line, "\n")] = '\0';
            say("contend (%s): a conflict as a take read it: %s", label, line);
        } else if (strcmp(kind, "error") == 0) {
            line[strcspn(line, "\n")] = '\0';
            ch_violation(&CH.obs, "contend (%s): a take or release failed: %s", label, line);
        }
    }
    if (f != NULL)
        fclose(f);
    if (nh > 0)
        qsort(holds, nh, sizeof *holds, by_from);
    for (size_t i = 1; i < nh; i++) {
        /* Each interval lies inside its hold, so two holds never overlap
         * only if the intervals do not. */
        if (holds[i].from < holds[i - 1].to) {
            overlaps++;
            ch_violation(&CH.obs, "contend (%s): worker %d held (token %lld) from %lld while "
                         "worker %d's hold (token %lld) lasted until %lld", label,
                         holds[i].worker, (long long)holds[i].token, (long long)holds[i].from,
                         holds[i - 1].worker, (long long)holds[i - 1].token,
                         (long long)holds[i - 1].to);
        }
        if (holds[i].token <= holds[i - 1].token) {
            backwards++;
            ch_violation(&CH.obs, "contend (%s): token %lld after token %lld", label,
                         (long long)holds[i].token, (long long)holds[i - 1].token);
        }
    }
    if (takes == 0)
        ch_violation(&CH.obs, "contend (%s): no take succeeded", label);
    if (errors > 0)
        ch_violation(&CH.obs, "contend (%s): %ld takes or releases failed: a conflict read as "
                     "an outage", label, errors);
    say("contend (%s): %ld takes, %ld misses, %ld lost races (a conflict read as not held), "
        "%ld errors, %ld overlapping holds, %ld tokens not increasing; servers: %lld "
        "certification failures, %lld brute-force aborts", label, takes, misses, races, errors,
        overlaps, backwards, (long long)(cert1 - cert0), (long long)(bf1 - bf0));
    printf("galera-summary scenario=contend-%s takes=%ld misses=%ld races=%ld errors=%ld "
           "overlaps=%ld tokens_back=%ld cert_failures=%lld bf_aborts=%lld\n", label, takes,
           misses, races, errors, overlaps, backwards, (long long)(cert1 - cert0),
           (long long)(bf1 - bf0));
    fflush(stdout);
    free(holds);
}

static void set_retry_autocommit(int v)
{
    for (int n = 1; n <= nodes(); n++)
        if (ctl("wsrep_retry_autocommit", "sql %d \"SET GLOBAL wsrep_retry_autocommit = %d\"", n,
                v) != 0)
            ch_violation(&CH.obs, "contend: cannot set wsrep_retry_autocommit on node %d", n);
}

void scenario_contend(void)
{
    const char *names[] = {CONTEND_NAME};
    sqlease_error err;
    int64_t secs = 10 * CH.rounds; /* per phase */

    if (sqlease_migrate(CH.db, CH.lease_table, names, 1, &err) != SQLEASE_OK) {
        ch_violation(&CH.obs, "contend: migrate: %s", err.message);
        return;
    }
    if (settle(CH.t0, 1) < 0) {
        ch_violation(&CH.obs, "contend: no single holder after the start");
        return;
    }
    contend_phase("retry1", 2, secs);
    if (ch_interrupted)
        return;
    set_retry_autocommit(0);
    contend_phase("retry0", 2, secs);
    set_retry_autocommit(1);
}
