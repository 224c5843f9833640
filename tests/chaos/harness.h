/*
 * harness.h -- the state of one sqlease-chaos run and the helpers its
 * scenarios share (main.c owns them; scenarios.c adds the kernel, server
 * and job-control faults on top).  Internal to the harness; chaos.h is
 * what every part of it shares.
 */
#ifndef SQLEASE_CHAOS_HARNESS_H
#define SQLEASE_CHAOS_HARNESS_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "chaos.h"
#include "db.h"
#include "sqlease.h"

#define MAX_INST 16
#define LEASE_NAME "chaos"

/* How an instance runs its CMD. */
enum { MODE_SUPERVISE, MODE_RUN };

typedef struct instance {
    pid_t pid;            /* sqlease, also its process group; 0 when not running */
    int expect_exit;      /* the harness is stopping it */
    int mode;             /* MODE_SUPERVISE, or MODE_RUN (one `sqlease run`) */
    char owner[128];      /* --owner, or "" for sqlease's own default */
    char conn[1400];      /* what sqlease connects with (its proxy leg) */
    char jconn[1400];     /* what its CMD connects with (a leg of its own) */
    int node;             /* --instance-dsn: which of them (1-based); 0 without */
} instance;

typedef struct ch_harness {
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
    const char *pids_cmd;       /* prints the server's pids (frozen-server faults) */
    const char *db_host;
    int db_port;
    int ninst;
    int keep;
    int kinds_all;              /* the chaos scenario also draws the kernel/server kinds */
    const char *faults;         /* --faults: the kernel or galera scenario's list, or NULL
                                   for all */
    const char *inst_dsn[MAX_INST]; /* --instance-dsn: instance i talks to
                                       inst_dsn[i % ninst_dsn] (a node of a cluster) */
    int ninst_dsn;
    const char *fence;          /* --fence: "token" (fence <= token) or "lease" (the
                                   library's fence predicate, SQLEASE_FENCE_SQL) */
    const char *ctl;            /* the cluster's control command (SQLEASE_GALERA_CTL) */
    const char *pg_ctl;         /* the primary/standby pair's (SQLEASE_PG_HA_CTL) */
    int rounds;                 /* --rounds: the galera scenario's list this many times */
    int64_t ttl, hb, rd, retry, grace, slack, qtimeout, login_timeout;
    int64_t short_fault, long_fault;  /* fault lengths below and above the ttl */
    int64_t over_ttl;           /* length of the faults that need only outlast the ttl */
    int64_t give_up;            /* longest wait for the fleet to settle after a fault */
    /* state */
    char dir[600];
    char events[800];
    char lease_table[64];
    char guarded_table[64];
    instance inst[MAX_INST];
    ch_proxy *proxy;            /* legs: 0..n-1 sqlease, n..2n-1 CMDs, 2n silent */
    int silent_leg;
    int net_ok;                 /* the nftables table exists: kernel faults possible */
    char net_why[256];          /* why not, when not */
    long frozen[64];            /* server pids we SIGSTOPped and not yet resumed */
    int nfrozen;
    sqlease_db *db;
    ch_obs obs;
    long ev_off;
    char ev_part[2048];
    size_t ev_plen;
    int db_down;
    int64_t t0;
} ch_harness;

extern ch_harness CH;
extern volatile sig_atomic_t ch_interrupted;

void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Observing (main.c). */
void monitor(void);
void sleep_mon(int64_t ms);
int open_cmds(void);
long holder_index(void);
long await_single_holder(int64_t stable_ms, int64_t timeout_ms);
int await_gone(long pid, int64_t until);
ch_cmd *cmd_by_pid(long pid);

/* Instances (main.c). */
int start_instance(int i);
void restart_instance(int i);
int reap_instance(int i, int64_t timeout_ms);
void describe(char *buf, size_t cap, long h);

/* Faults' bookkeeping (main.c). */
ch_fault *fault_begin(int kind, int inst, const char *detail);
void fault_heal(size_t fi);
void note_max(int64_t *slot, int64_t v);
int64_t await_successor(int64_t t, int64_t timeout_ms);
int run_cmd(const char *what, const char *cmd);
void silent_conn(char *buf, size_t cap);

/* The random scenario draws from these (main.c); scenarios.c adds the
 * kernel/server kinds.  Returns 1 when kind k can run here. */
int kind_applies(int k);
void run_fault(int kind, long h);
int64_t last_fault_end(void);

/* scenarios.c */
int kernel_kind_applies(int k);
void run_kernel_fault(int kind, long h);
long settle(int64_t since, int reset_on_timeout);
void scenario_kernel(void);
void scenarios_teardown(void);
int in_list(const char *list, const char *name);
int64_t stop_bound(int64_t t);

/* galera.c */
void scenario_galera(void);
void scenario_contend(void);
void galera_teardown(void);

/* failover.c */
void scenario_failover(void);

#endif
