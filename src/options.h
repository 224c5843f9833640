/*
 * options.h -- lease options after defaults have been applied and the
 * rules checked (options.c).  Shared by lease.c and supervisor.c.
 */
#ifndef SQLEASE_OPTIONS_H
#define SQLEASE_OPTIONS_H

#include "sqlease.h"

typedef struct sqle_resolved {
    const char *table;   /* borrowed from the caller's options */
    const char *name;
    const char *owner;   /* NULL: generate */
    int64_t ttl_ms;
    int64_t heartbeat_ms;
    int64_t renew_deadline_ms;
    int64_t retry_ms;
    int64_t min_hold_ms; /* 0: a release frees the row at once */
    const char *data;    /* borrowed; NULL: none */
    int take_by_expiry;  /* sqlease_options.take_by_expiry */
    const char *fire_table; /* borrowed, as table */
    const char *host;    /* borrowed; NULL: this host's name */
    const char *schedule;    /* borrowed; NULL: takes claim no fire */
    const char *schedule_tz; /* borrowed; NULL: UTC */
    int64_t late_limit_ms;   /* 0: the schedule's period */
    const char *history_table; /* borrowed, as table */
    int history;             /* 1: record every hold; 0: off */
    int64_t history_keep_ms; /* what a holder prunes: rows older than this */
    int handoff;             /* sqlease_options.handoff */
    int64_t priority;        /* written by every take */
    int64_t preempt_after_ms;   /* resolved: never 0 */
    int64_t handoff_reserve_ms; /* resolved: never 0 */
} sqle_resolved;

/* Lease settings read from a DSN's odbc.ini section; zero/NULL: unset. */
typedef struct sqle_ini {
    char *table;
    char *fire_table;
    char *history_table;
    char *name;
    int64_t ttl_ms;
    int64_t heartbeat_ms;
    int64_t renew_deadline_ms;
    int64_t retry_ms;
} sqle_ini;

/* Where sqle_ini_read gets a DSN's settings: the value of `key` into
 * buf (cap bytes, NUL-terminated, cut to fit as SQLGetPrivateProfileString
 * cuts it); 1 if the key is set, 0 if not. */
typedef int (*sqle_ini_get)(void *ctx, const char *key, char *buf, size_t cap);

/* Read the Sqlease* settings of DSN `dsn` through `get` into *ini (which
 * it zeroes first) and check each one (SqleaseTable, SqleaseFireTable,
 * SqleaseName and the durations); a bad one fails with SQLEASE_EINVAL naming the key and the
 * DSN.  Free *ini with sqle_ini_free whatever it returns.  The lookup is
 * a parameter so that the checks run apart from the driver manager (db.c
 * passes odbc.ini; the fuzz target its own text). */
int sqle_ini_read(sqle_ini_get get, void *ctx, const char *dsn, sqle_ini *ini,
                  sqlease_error *err);
void sqle_ini_free(sqle_ini *ini);

/* Resolve `opt` over `ini` (may be NULL) and the defaults, and check it:
 * names and ranges always, the supervisor's timing rules unless
 * lease_only (a bare lease uses only the ttl and min_hold).  A heartbeat,
 * renew deadline or retry that neither `opt` nor `ini` sets is derived
 * from the ttl (ttl/3, 2*ttl/3, min(2 s, ttl/10)).  `opt` is the
 * library's own full struct (sqle_options_import), or NULL. */
int sqle_options_resolve(const sqlease_options *opt, const sqle_ini *ini, int lease_only,
                         sqle_resolved *r, sqlease_error *err);

#endif
