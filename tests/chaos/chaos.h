/*
 * chaos.h -- what the parts of the chaos harness (sqlease-chaos) share.
 *
 * The harness runs several real `sqlease supervise` processes against one
 * lease, injects faults one at a time (process kills and freezes, network
 * partitions through its own TCP proxy and through the kernel's packet
 * filter, database restarts and freezes, a server that never answers, a
 * lock held on the lease row), and afterwards reads the event file the
 * jobs wrote to decide whether there was ever more than one holder,
 * whether a stale token's write got through, and how long the fleet took
 * to have a holder again after each fault.
 *
 *   main.c       options, instances, the proxy-level faults, scenarios,
 *                clean-up
 *   scenarios.c  the kernel, server and job-control faults and the
 *                deterministic `kernel` scenario
 *   nft.c        the nftables table of the kernel faults and the keeper
 *                process that undoes the host-level changes if the
 *                harness dies
 *   job.c        the job mode: sqlease's CMD, doing fenced writes
 *   proxy.c      the loopback TCP proxy (one leg per port: forwarding,
 *                blackholed, or a listener that never answers)
 *   analyze.c    events in, verdict out
 *   util.c       clocks, processes, the event file, the random generator
 *
 * POSIX (Linux) only, like the faults it injects.
 */
#ifndef SQLEASE_CHAOS_H
#define SQLEASE_CHAOS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- util.c ------------------------------------------------------- */

int64_t ch_mono_ms(void);
void ch_nap_ms(int64_t ms);
/* A process that is gone, or a zombie (not ours to reap). */
int ch_pid_gone(long pid);
/* Live (non-zombie) processes in process group pgid (Linux /proc). */
int ch_group_members(long pgid);
/* Append one line (a '\n' is added) with one write() on O_APPEND, so
 * lines of many processes never interleave.  Returns 0 or -1. */
int ch_append(const char *path, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Seeded generator (splitmix64): the same seed gives the same faults. */
void ch_rng_seed(uint64_t seed);
uint64_t ch_rng(void);
/* Uniform in [lo, hi]. */
int64_t ch_rng_range(int64_t lo, int64_t hi);

/* ---- job.c -------------------------------------------------------- */

/* `sqlease-chaos __job ...`: the CMD sqlease runs.  Returns the exit code. */
int ch_job_main(int argc, char **argv);

/* ---- galera.c ----------------------------------------------------- */

/* `sqlease-chaos __contend ...`: one worker of the contention scenario.
 * Returns the exit code. */
int ch_contend_main(int argc, char **argv);

/* ---- proxy.c ------------------------------------------------------ */

typedef struct ch_proxy ch_proxy;

/* What a leg does with its connections. */
enum {
    CH_LEG_FORWARD,   /* copy bytes both ways */
    CH_LEG_BLACKHOLE, /* accept nothing new, forward nothing; hold every byte */
    CH_LEG_SILENT     /* drop its forwarded connections; accept new ones and
                         never read or write them (a server that never answers) */
};

/* Listen on n loopback ports, each forwarding to host:port.  NULL on
 * error (message printed). */
ch_proxy *ch_proxy_start(const char *host, int port, int n);
int ch_proxy_port(const ch_proxy *p, int i);
/* Set leg i's mode; returns once the proxy thread has applied it. */
void ch_proxy_set_mode(ch_proxy *p, int i, int mode);
/* Shorthand: CH_LEG_BLACKHOLE when on, else CH_LEG_FORWARD. */
void ch_proxy_blackhole(ch_proxy *p, int i, int on);
/* Server answers passed to clients on leg i so far (successful writes of
 * server bytes to a client), and when the last one was. */
uint64_t ch_proxy_answers(ch_proxy *p, int i, int64_t *last_ms);
/* Connections accepted on leg i in silent mode at or after `since`: how
 * many, how many their client gave up on (closed), and the longest time
 * one was held open by its client (those still open, or closed by the
 * proxy when the leg left silent mode, count until then). */
void ch_proxy_silent_stats(ch_proxy *p, int i, int64_t since, int *n, int *given_up,
                           int64_t *longest_ms);
void ch_proxy_stop(ch_proxy *p);

/* ---- nft.c -------------------------------------------------------- */

/* Directions of a kernel cut, on the proxy legs' loopback ports (the leg
 * port is the server's side of the client's connection). */
enum {
    CH_DROP_TO_SERVER = 1, /* client -> server packets: tcp dport = leg port */
    CH_DROP_TO_CLIENT = 2, /* server -> client packets: tcp sport = leg port */
    CH_DROP_BOTH = 3
};

/* Create the harness's table (inet sqlease_chaos_<pid>) through a keeper
 * process that deletes it, and resumes every server process the harness
 * froze, when the harness exits or dies however it dies.  Returns 0, or
 * -1 with the reason in why (not root, no nft, nft failed). */
int ch_nft_open(char *why, size_t cap);
const char *ch_nft_table(void);
/* Drop (not reject) the packets of the given loopback ports in dirs.
 * Returns 0 or -1 (message printed). */
int ch_nft_cut(const int *ports, int n, int dirs);
/* Remove every drop rule.  Returns 0 or -1. */
int ch_nft_heal(void);
/* Packets carrying data (a statement, an answer: not a bare ACK or SYN)
 * dropped so far for port in dir (one direction), or -1 when there is no
 * such rule. */
long ch_nft_dropped(int port, int dir);
/* Tell the keeper a server process is about to be stopped (SIGSTOP), so
 * that it sends SIGCONT if the harness dies before it does. */
void ch_keeper_frozen(long pid);
/* Delete the table and end the keeper (idempotent). */
void ch_nft_close(void);

/* ---- analyze.c ---------------------------------------------------- */

enum ch_fault_kind {
    F_KILL,          /* SIGKILL a holder's sqlease */
    F_PAUSE,         /* SIGSTOP a whole instance, longer than the ttl */
    F_FREEZE,        /* SIGSTOP the holder's sqlease alone */
    F_GRACEFUL,      /* SIGTERM the holder's sqlease */
    F_PARTITION,     /* blackhole the holder's proxy legs */
    F_RESTART_SHORT, /* database restart, back before the renew deadline */
    F_RESTART_LONG,  /* database down past the renew deadline */
    F_HUNG,          /* another connection locks the lease row */
    /* scenarios.c: kernel, server and job-control faults */
    F_CUT_ONE_SHORT,       /* kernel drops the holder's packets, shorter than the ttl */
    F_CUT_ONE_LONG,        /* ... longer than the ttl */
    F_CUT_FLEET_SHORT,     /* kernel drops every instance's packets, shorter */
    F_CUT_FLEET_LONG,      /* ... longer */
    F_LOSS_TO_CLIENT,      /* fleet: server -> client packets dropped, longer */
    F_LOSS_TO_SERVER,      /* fleet: client -> server packets dropped, longer */
    F_SERVER_FREEZE_SHORT, /* SIGSTOP every server process, shorter than the ttl */
    F_SERVER_FREEZE_LONG,  /* ... longer */
    F_SILENT_SERVER,       /* the holder's legs become a server that never answers */
    F_TERM_IDLE,           /* fleet cut off, SIGTERM to the holder between statements */
    F_TERM_IN_FLIGHT,      /* ... with a statement in flight */
    F_TERM_TWICE,          /* ... then SIGTERM and SIGINT again during the wait */
    F_TERM_RUN,            /* ... the holder a `sqlease run`, a statement in flight */
    F_JOB_STOP,            /* SIGSTOP the holder's sqlease process group (job control) */
    F_SAME_OWNER,          /* a second instance with the holder's --owner */
    /* galera.c: faults of a node of a replicated cluster, each instance
       talking to a node of its own */
    F_NODE_KILL,           /* SIGKILL the holder's node, then it rejoins */
    F_NODE_KILL_OTHER,     /* SIGKILL a node no holder talks to, then it rejoins */
    F_NODE_CUTOFF,         /* the holder's node cut off from the others (nftables):
                              out of the primary component, its clients connected */
    F_NODE_FREEZE,         /* SIGSTOP the holder's node, longer than the ttl */
    F_CLUSTER_RESTART,     /* every node stopped, the cluster bootstrapped again */
    F_FAILOVER,            /* failover.c: the primary killed, its standby promoted */
    F_RESET,               /* not a fault: the harness restarted a fleet that did
                              not settle, so the next fault starts clean */
    F_NKINDS
};
#define F_FIRST_KERNEL F_CUT_ONE_SHORT

extern const char *const ch_fault_names[F_NKINDS];

/* One CMD run, from its start event to its stop event or observed death. */
typedef struct ch_cmd {
    int inst;
    long sup;               /* the sqlease process that started it */
    long pid;
    int64_t token;
    int64_t start;
    int64_t end;            /* -1 while running */
    char end_kind;          /* 's' stop event, 'd' death seen by the harness */
    int64_t allow_from;     /* whole-instance pause: overlap allowed in */
    int64_t allow_until;    /* [allow_from, allow_until]; 0 if none */
} ch_cmd;

typedef struct ch_write {
    int inst;
    int64_t token;
    int64_t sent, answered;
    char result;            /* 'A' accepted, 'R' refused by the fence, 'E' error */
} ch_write;

typedef struct ch_fault {
    int kind;
    int inst;
    int64_t at;             /* injected */
    int64_t healed;         /* recovery began (0: instant fault) */
    int64_t recovery;       /* analyze.c: end -> the holder that lasts; -1 none */
} ch_fault;

/* A figure a scenario measured against a bound of its own (the exit time
 * after SIGTERM, a connect against a silent server, ...): the largest
 * value seen under one name. */
typedef struct ch_figure {
    char name[48];
    int64_t value;          /* the largest seen */
    int64_t bound;
    int count;
    int capped;             /* value is a lower bound: the harness stopped waiting */
} ch_figure;

/* Everything observed, filled by main.c's monitor. */
typedef struct ch_obs {
    ch_cmd *cmds;
    size_t ncmds, capcmds;
    ch_write *writes;
    size_t nwrites, capwrites;
    ch_fault *faults;
    size_t nfaults, capfaults;
    char (*violations)[300];
    size_t nviolations, capviolations;
    int64_t t_begin;        /* instances started */
    int64_t t_end;          /* shutdown began: the timeline ends here */
    int64_t crash_successor_max;    /* kill -> next start by another, ms; -1 none */
    int64_t graceful_successor_max; /* SIGTERM -> next start by another; -1 none */
    int64_t resume_stop_max;        /* SIGCONT -> paused CMD gone; -1 none */
    int64_t freeze_stop_max;        /* SIGSTOP of sqlease -> CMD gone; -1 none */
    int64_t db_back_holder_max;     /* database back -> a CMD started; -1 none */
    int orphans;
    int64_t row_fence;              /* the guarded row after the run */
    int64_t row_applied;            /* writes it counted */
    int64_t recovery_bound;         /* end of a fault -> next holder, ms */
    ch_figure figures[48];
    size_t nfigures;
    char skipped[512];              /* kinds skipped for want of root/nft/... */
} ch_obs;

void ch_obs_init(ch_obs *o);
void ch_obs_free(ch_obs *o);
ch_cmd *ch_obs_add_cmd(ch_obs *o);
void ch_obs_add_write(ch_obs *o, const ch_write *w);
ch_fault *ch_obs_add_fault(ch_obs *o, int kind, int inst, int64_t at);
void ch_violation(ch_obs *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Record one measurement of figure `name`; a value above its bound is a
 * violation (described by `what`).  capped: the value is only a lower
 * bound (the harness gave up waiting). */
void ch_figure_note(ch_obs *o, const char *name, int64_t value, int64_t bound, int capped,
                    const char *what);
/* Note a kind skipped and why (printed, and named in the summary). */
void ch_skip(ch_obs *o, const char *kind, const char *why);

/* The figures of one run. */
typedef struct ch_verdict {
    int faults[F_NKINDS];
    int nfaults;
    int handovers;
    int64_t longest_gap;            /* ms with no CMD running */
    int64_t longest_gap_after[F_NKINDS];
    int overlaps;                   /* not allowed */
    int overlaps_allowed;           /* during a whole-instance pause */
    int64_t allowed_overlap_max;    /* longest allowed overlap, ms */
    int stale_accepted;
    int refused;
    int accepted;
    int token_violations;
    int holds;                      /* CMD starts */
    int rec_n[F_NKINDS];            /* faults of the kind whose recovery was measured */
    int rec_none[F_NKINDS];         /* ... that had no holder before the next fault */
    int64_t rec_max[F_NKINDS];      /* longest recovery, ms (-1: none measured) */
    int rec_over;                   /* recoveries above the bound */
} ch_verdict;

/* Compute the verdict (adds violations to o).  Returns the number of
 * violations in o afterwards. */
size_t ch_analyze(ch_obs *o, ch_verdict *v);
/* Print the verdict table for `dialect`. */
void ch_print_verdict(const ch_obs *o, const ch_verdict *v, const char *dialect,
                      const char *scenario, uint64_t seed, int64_t seconds);

#endif
