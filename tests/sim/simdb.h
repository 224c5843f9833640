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
    uint64_t statements, slow, lost, connect_failed;
} simdb_counts;

extern simdb_faults simdb_cfg;
extern simdb_counts simdb_count;
extern int64_t simdb_clock_step_ms;   /* the database clock's step, ms */
extern const db_ops simdb_ops;
/* Called with every statement just before it runs (the invariants). */
extern void (*simdb_statement_hook)(const char *sql, const db_bind *binds, size_t n);

int simdb_open(void);       /* a fresh, empty database */
void simdb_close(void);
int simdb_sql(const char *sql);
void *simdb_proto(void);    /* an unconnected instance of the sqlite dialect */
int64_t simdb_now_ms(void);

#endif
