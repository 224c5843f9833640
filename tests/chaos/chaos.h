/*
 * chaos.h -- what the parts of the chaos harness (sqlease-chaos) share.
 *
 * The harness runs several real `sqlease supervise` processes against one
 * lease, injects faults one at a time (process kills and freezes, network
 * partitions through its own TCP proxy, database restarts, a lock held on
 * the lease row), and afterwards reads the event file the jobs wrote to
 * decide whether there was ever more than one holder, whether a stale
 * token's write got through, and how long the fleet went without one.
 *
 *   main.c     options, instances, faults, scenarios, clean-up
 *   job.c      the job mode: sqlease's CMD, doing fenced writes
 *   proxy.c    the pausable loopback TCP proxy (one port per instance)
 *   analyze.c  events in, verdict out
 *   util.c     clocks, processes, the event file, the random generator
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

/* ---- proxy.c ------------------------------------------------------ */

typedef struct ch_proxy ch_proxy;
/* Listen on n loopback ports, each forwarding to host:port.  NULL on
 * error (message printed). */
ch_proxy *ch_proxy_start(const char *host, int port, int n);
int ch_proxy_port(const ch_proxy *p, int i);
/* Blackhole port i (stop forwarding both ways and accepting; sockets stay
 * open and bytes are held until healed) or heal it. */
void ch_proxy_blackhole(ch_proxy *p, int i, int on);
void ch_proxy_stop(ch_proxy *p);

/* ---- analyze.c ---------------------------------------------------- */

enum ch_fault_kind {
    F_KILL,          /* SIGKILL a holder's sqlease */
    F_PAUSE,         /* SIGSTOP a whole instance, longer than the ttl */
    F_FREEZE,        /* SIGSTOP the holder's sqlease alone */
    F_GRACEFUL,      /* SIGTERM the holder's sqlease */
    F_PARTITION,     /* blackhole the holder's proxy port */
    F_RESTART_SHORT, /* database restart, back before the renew deadline */
    F_RESTART_LONG,  /* database down past the renew deadline */
    F_HUNG,          /* another connection locks the lease row */
    F_NKINDS
};

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
} ch_fault;

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
} ch_obs;

void ch_obs_init(ch_obs *o);
void ch_obs_free(ch_obs *o);
ch_cmd *ch_obs_add_cmd(ch_obs *o);
void ch_obs_add_write(ch_obs *o, const ch_write *w);
ch_fault *ch_obs_add_fault(ch_obs *o, int kind, int inst, int64_t at);
void ch_violation(ch_obs *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

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
} ch_verdict;

/* Compute the verdict (adds violations to o).  Returns the number of
 * violations in o afterwards. */
size_t ch_analyze(ch_obs *o, ch_verdict *v);
/* Print the verdict table for `dialect`. */
void ch_print_verdict(const ch_obs *o, const ch_verdict *v, const char *dialect,
                      const char *scenario, uint64_t seed, int64_t seconds);

#endif
