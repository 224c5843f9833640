/*
 * simdb.h -- the simulator's database port (simdb.c): its fault settings
 * (per mille of statements, milliseconds), its counters and its clock.
 */
#ifndef SQLEASE_SIMDB_H
#define SQLEASE_SIMDB_H

#include <stdint.h>

#include "port.h"

typedef struct simdb_faults {
    int latency_max_ms;        /* every statement: 0..this before and after */
    int slow_permille;         /* a slow answer (a locked row, a slow network) */
    int slow_max_ms;
    int lost_before_permille;  /* the connection lost before the statement ran */
    int lost_after_permille;   /* ... after it committed */
    int connect_fail_permille;
} simdb_faults;

typedef struct simdb_counts {
    uint64_t statements, slow, lost, connect_failed, partitioned;
} simdb_counts;

/* Simulated processes cut off from the database until a virtual time
 * (index: sim_process()): a call of theirs that reaches the database
 * meanwhile waits until the cut ends, then answers late or finds its
 * connection lost, as TCP would after a partition. */
#define SIMDB_MAX_PROCS 64
extern int64_t simdb_cut_until[SIMDB_MAX_PROCS];

extern simdb_faults simdb_cfg;
extern simdb_counts simdb_count;
extern int64_t simdb_clock_step_ms;   /* the database clock's step, ms */
extern const db_ops simdb_ops;
/* One statement on its way through the database, as the hooks see it. */
#define SIMDB_MARKS 8
typedef struct simdb_call {
    const char *sql;          /* the text the library sent */
    const char *run_sql;      /* what runs: sql, unless the before hook plants a
                                 template's bug (malloc'd; simdb frees it) */
    const db_bind *binds;
    size_t nbinds;
    int proc;                 /* the simulated process that sent it */
    int64_t began;            /* virtual ms the call entered the port: the
                                 moment it was sent, as far as the database
                                 can tell (a proof is dated from it) */
    int idle_before;          /* its connection had ended an earlier call
                                 before `began`: the library's request was not
                                 queued behind another, so its caller's bound
                                 counts from `began` */
    int64_t changed;          /* rows it inserted or updated, once it ran */
    int rc;                   /* its status, once it ran */
    /* The hooks' own, from before to answer: a set of small numbers,
     * a number each, and one more. */
    uint64_t marks;
    int64_t mark_values[SIMDB_MARKS];
    int mark_kind;
} simdb_call;

/* Called with every statement just before it runs, just after it ran
 * (committed, whatever its caller hears), and when its answer goes back
 * to the library (lost: the connection was lost instead), at virtual
 * time `at`.  A crashed process's call may never get its answer. */
extern void (*simdb_before_hook)(simdb_call *c);
extern void (*simdb_after_hook)(simdb_call *c);
extern void (*simdb_answer_hook)(simdb_call *c, int lost, int64_t at);
/* Called with a statement that never ran: its connection was lost or
 * refused before it reached the database (its caller hears an error). */
extern void (*simdb_unsent_hook)(simdb_call *c);
/* Called whenever a call (a statement or a connect) of one family enters
 * the database, with how many of that family's calls are in it now.  A
 * family is a prototype and every instance cloned from it: one handle's
 * connections. */
extern void (*simdb_driver_hook)(int family, int in_driver);

int simdb_open(void);       /* a fresh, empty database */
void simdb_close(void);
int simdb_sql(const char *sql);
/* Rows inserted, updated or deleted since the database was opened. */
int64_t simdb_total_changes(void);
/* Run a query on the database directly (no faults, no clock), calling
 * fn with each row's values as text (NULL for SQL NULL). */
int simdb_rows(const char *sql, int (*fn)(void *ud, int ncol, char **vals, char **names),
               void *ud);
void *simdb_proto(void);    /* an unconnected instance of the sqlite dialect, of a new family */
int64_t simdb_now_ms(void);

#endif
