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
} sqle_resolved;

/* Lease settings read from a DSN's odbc.ini section; zero/NULL: unset. */
typedef struct sqle_ini {
    char *table;
    char *name;
    int64_t ttl_ms;
    int64_t heartbeat_ms;
    int64_t renew_deadline_ms;
    int64_t retry_ms;
} sqle_ini;

/* Resolve `opt` over `ini` (may be NULL) and the defaults, and check it:
 * names and ranges always, the supervisor's timing rules unless
 * lease_only (a bare lease uses only the ttl and min_hold).  A heartbeat,
 * renew deadline or retry that neither `opt` nor `ini` sets is derived
 * from the ttl (ttl/3, 2*ttl/3, min(2 s, ttl/10)).  `opt` is the
 * library's own full struct (sqle_options_import), or NULL. */
int sqle_options_resolve(const sqlease_options *opt, const sqle_ini *ini, int lease_only,
                         sqle_resolved *r, sqlease_error *err);

#endif
