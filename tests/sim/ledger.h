/*
 * ledger.h -- the fire ledger and the holder history as the simulator
 * sees them (ledger.c).  Their statements name the rows they may change
 * (a fire, a hold, a lease name's rows), so those are read just before a
 * statement runs and again just after, rather than the whole table: a
 * ledger grows by a row a fire, a history by a row a hold, and a copy of
 * either compared at every statement would cost more than the history it
 * checks.  The database's own count of the rows a statement changed says
 * whether it changed any outside those.
 */
#ifndef SQLEASE_SIM_LEDGER_H
#define SQLEASE_SIM_LEDGER_H

#include <stdint.h>

#include "kinds.h"

/* One row of either table: a fire (name, job, fire_at_ms; state,
 * attempt, owner, token, started and ended) or a hold (name, token;
 * owner, started and ended, and how it ended in `state`). */
typedef struct side_row {
    char name[72], job[72];
    int64_t fire_at_ms, token, attempt, started_at_ms, ended_at_ms;
    char owner[72], state[24];
} side_row;

/* The two tables' names.  0, or -1. */
int ledger_init(const char *fire_table, const char *history_table);

/* Before a statement that writes table t (ST_FIRE or ST_HOLD): read the
 * rows `where` (an SQL condition) selects.  After it: read them again and
 * call fn for each that differs (old NULL: inserted; now NULL: deleted);
 * returns how many did. */
void ledger_before(sim_table t, const char *where);
int ledger_after(void (*fn)(void *ud, const side_row *old, const side_row *now), void *ud);

/* The rows of table t that `where` selects, in key order: fn for each
 * (a non-zero return stops).  0, or -1. */
int ledger_rows(sim_table t, const char *where, int (*fn)(void *ud, const side_row *r),
                void *ud);

#endif
