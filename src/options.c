/*
 * options.c -- lease options: defaults, validation, durations, owner ids.
 *
 * Everything a user can get wrong before a statement is sent is caught
 * here, with a message that names the field, so that a typo is a usage
 * error and never a lease that behaves differently from what was meant.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cronexpr.h"
#include "internal.h"
#include "options.h"
#include "platform.h"

/* Every default is zero, so zeroing all the caller's bytes (also those
 * of fields this library does not know, when the caller's header is
 * newer) sets them. */
void sqlease_options_init_(sqlease_options *opt, size_t size)
{
    if (opt == NULL || size < sizeof(size_t))
        return;
    memset(opt, 0, size);
    opt->size = size;
}

int sqle_options_import(const sqlease_options *in, sqlease_options *full,
                        sqlease_error *err)
{
    sqlease_options_init(full);
    if (in == NULL)
        return SQLEASE_OK;
    return sqle_struct_in(full, sizeof *full, in, "sqlease_options", "sqlease_options_init",
                          err);
}

static int64_t or_default(int64_t v, int64_t d)
{
    return v > 0 ? v : d;
}

/*
 * The supervisor's timing from the ttl alone, for each of heartbeat,
 * renew deadline and retry that no source set: a heartbeat of ttl/3 and a
 * renew deadline of 2*ttl/3 keep heartbeat <= renew_deadline / 2 (one
 * failed renew can be retried before the deadline) and leave a third of
 * the ttl for the work to stop before anyone else may take over; a retry
 * of ttl/10, at most 2 s.  The default ttl (30 s) gives the default
 * timing (10 s, 20 s, 2 s), so `--ttl 7s` alone is a valid setting rather
 * than a renew deadline of 20 s that does not fit in it.  A derived value
 * is at least 1 ms: a ttl too short for any timing is then refused by the
 * rules below, with the derivation named.
 */
static int64_t derived_ms(int64_t v)
{
    return v > 0 ? v : 1;
}

/* How a timing value came about, for messages: a value the caller set
 * is quoted as it is; a derived one says so, since the caller never wrote
 * it. */
static const char *how(int derived)
{
    return derived ? ", derived from the ttl" : "";
}

/*
 * Resolve defaults into a private copy of the timing and names.  Negative
 * durations are errors, not "use the default", so that a computed value
 * that went wrong is noticed.  Each field comes from the options, else
 * the DSN's odbc.ini section, else (timing) the derivation from the ttl,
 * else (ttl, names) the built-in default.
 */
int sqle_options_resolve(const sqlease_options *opt, const sqle_ini *ini, int lease_only,
                         sqle_resolved *r, sqlease_error *err)
{
    static const sqle_ini none;
    sqlease_options zero;
    int hb_derived, rd_derived, retry_derived;

    if (opt == NULL) {
        sqlease_options_init(&zero);
        opt = &zero;
    }
    if (ini == NULL)
        ini = &none;
    memset(r, 0, sizeof *r);
    r->table = opt->table != NULL ? opt->table
               : ini->table != NULL ? ini->table : SQLEASE_DEFAULT_TABLE;
    r->name = opt->name != NULL ? opt->name
              : ini->name != NULL ? ini->name : SQLEASE_DEFAULT_NAME;
    r->owner = opt->owner;

    if (sqle_check_table(opt->table == NULL && ini->table != NULL
                                ? "table (SqleaseTable in odbc.ini)" : "table",
                            r->table, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    if (sqle_check_text(opt->name == NULL && ini->name != NULL
                               ? "lease name (SqleaseName in odbc.ini)" : "lease name",
                           r->name, SQLEASE_MAX_NAME, 0, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    /* The fire ledger's table and host, for a supervisor's claims: the
     * table resolved and checked as the lease table is, the host like an
     * owner id (it is only shown, and compared by nobody). */
    r->fire_table = opt->fire_table != NULL ? opt->fire_table
                    : ini->fire_table != NULL ? ini->fire_table : SQLEASE_DEFAULT_FIRE_TABLE;
    if (sqle_check_table(opt->fire_table == NULL && ini->fire_table != NULL
                                ? "fire table (SqleaseFireTable in odbc.ini)" : "fire table",
                            r->fire_table, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    /* The holder history's table, resolved and checked the same way; on
     * unless the caller turned it off. */
    r->history_table = opt->history_table != NULL ? opt->history_table
                       : ini->history_table != NULL ? ini->history_table
                                                    : SQLEASE_DEFAULT_HISTORY_TABLE;
    if (sqle_check_table(opt->history_table == NULL && ini->history_table != NULL
                                ? "history table (SqleaseHistoryTable in odbc.ini)"
                                : "history table",
                            r->history_table, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    if (opt->history != 0 && opt->history != 1 && opt->history != SQLEASE_HISTORY_OFF)
        return sqle_fail(err, SQLEASE_EINVAL, "history %d is neither 0 (on) nor "
                         "SQLEASE_HISTORY_OFF", opt->history);
    r->history = opt->history != SQLEASE_HISTORY_OFF;
    if (opt->history_keep_ms < 0 || opt->history_keep_ms > SQLEASE_MAX_DURATION_MS)
        return sqle_fail(err, SQLEASE_EINVAL, "history keep %lld ms is not within 0..30 days",
                         (long long)opt->history_keep_ms);
    r->history_keep_ms = opt->history_keep_ms > 0 ? opt->history_keep_ms
                                                  : SQLEASE_DEFAULT_HISTORY_KEEP_MS;
    r->host = opt->host;
    if (r->host != NULL &&
        sqle_check_text("host", r->host, SQLEASE_MAX_HOST, 1, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    /* A schedule whose fires the takes claim: parsed here once, so that a
     * bad one is refused before anything starts (the lease parses it
     * again, keeping it). */
    r->schedule = opt->schedule;
    r->schedule_tz = opt->schedule_tz != NULL && opt->schedule_tz[0] != '\0' ? opt->schedule_tz
                                                                            : NULL;
    r->late_limit_ms = opt->late_limit_ms;
    if (opt->late_limit_ms < 0 || opt->late_limit_ms > SQLEASE_MAX_DURATION_MS)
        return sqle_fail(err, SQLEASE_EINVAL, "late limit %lld ms is not within 0..30 days",
                         (long long)opt->late_limit_ms);
    if (r->schedule != NULL) {
        sqle_cron *c = NULL;
        sqle_cron_error ce;
        if (sqle_cron_parse(r->schedule, r->schedule_tz, &c, &ce) != SQLEASE_OK)
        {
            char col[32] = "";
            if (ce.column > 0)
                snprintf(col, sizeof col, "column %d: ", ce.column);
            return sqle_fail(err, ce.status == SQLEASE_ENOMEM ? SQLEASE_ENOMEM : SQLEASE_EINVAL,
                             "schedule '%s'%s%s: %s%s", r->schedule,
                             r->schedule_tz != NULL ? " in " : "",
                             r->schedule_tz != NULL ? r->schedule_tz : "", col, ce.message);
        }
        sqle_cron_free(c);
    } else if (opt->schedule_tz != NULL && opt->schedule_tz[0] != '\0') {
        return sqle_fail(err, SQLEASE_EINVAL, "schedule_tz is set but schedule is not");
    }
    if (r->owner != NULL) {
        if (r->owner[0] == '\0')
            return sqle_fail(err, SQLEASE_EINVAL,
                             "owner id is empty (an empty owner marks a free lease)");
        if (sqle_check_text("owner id", r->owner, SQLEASE_MAX_OWNER, 1, err) != SQLEASE_OK)
            return SQLEASE_EINVAL;
    }
    /* The holder's published data: checked like a name, so that whatever
     * reads it (status, list, a log line) gets one line of valid text. */
    r->data = opt->data;
    if (r->data != NULL &&
        sqle_check_text("data", r->data, SQLEASE_MAX_DATA, 1, err) != SQLEASE_OK)
        return SQLEASE_EINVAL;
    if (opt->ttl_ms < 0 || opt->heartbeat_ms < 0 || opt->renew_deadline_ms < 0 ||
        opt->retry_ms < 0 || opt->min_hold_ms < 0)
        return sqle_fail(err, SQLEASE_EINVAL, "durations must not be negative");
    if (opt->ttl_ms > SQLEASE_MAX_DURATION_MS || opt->heartbeat_ms > SQLEASE_MAX_DURATION_MS ||
        opt->renew_deadline_ms > SQLEASE_MAX_DURATION_MS ||
        opt->retry_ms > SQLEASE_MAX_DURATION_MS || opt->min_hold_ms > SQLEASE_MAX_DURATION_MS)
        return sqle_fail(err, SQLEASE_EINVAL, "durations must be at most 30 days");

    /* The hand-over's: a priority in its range, durations as the
     * others; the reservation's default and its rule below. */
    if (opt->priority < SQLEASE_PRIORITY_MIN || opt->priority > SQLEASE_PRIORITY_MAX)
        return sqle_fail(err, SQLEASE_EINVAL, "priority %lld is not within %lld..%lld",
                         (long long)opt->priority, (long long)SQLEASE_PRIORITY_MIN,
                         (long long)SQLEASE_PRIORITY_MAX);
    if (opt->preempt_after_ms < 0 || opt->handoff_reserve_ms < 0)
        return sqle_fail(err, SQLEASE_EINVAL, "durations must not be negative");
    if (opt->preempt_after_ms > SQLEASE_MAX_DURATION_MS ||
        opt->handoff_reserve_ms > SQLEASE_MAX_DURATION_MS)
        return sqle_fail(err, SQLEASE_EINVAL, "durations must be at most 30 days");
    r->handoff = opt->handoff != 0;
    r->priority = opt->priority;
    r->preempt_after_ms = or_default(opt->preempt_after_ms, SQLEASE_DEFAULT_PREEMPT_AFTER_MS);

    r->ttl_ms = or_default(opt->ttl_ms, or_default(ini->ttl_ms, SQLEASE_DEFAULT_TTL_MS));
    r->min_hold_ms = opt->min_hold_ms;
    r->take_by_expiry = opt->take_by_expiry != 0;
    hb_derived = opt->heartbeat_ms <= 0 && ini->heartbeat_ms <= 0;
    rd_derived = opt->renew_deadline_ms <= 0 && ini->renew_deadline_ms <= 0;
    retry_derived = opt->retry_ms <= 0 && ini->retry_ms <= 0;
    r->heartbeat_ms = or_default(opt->heartbeat_ms,
                                 or_default(ini->heartbeat_ms, derived_ms(r->ttl_ms / 3)));
    r->renew_deadline_ms =
        or_default(opt->renew_deadline_ms,
                   or_default(ini->renew_deadline_ms, derived_ms(r->ttl_ms * 2 / 3)));
    r->retry_ms = or_default(opt->retry_ms,
                             or_default(ini->retry_ms,
                                        derived_ms(r->ttl_ms / 10 < SQLEASE_DEFAULT_RETRY_MS
                                                       ? r->ttl_ms / 10
                                                       : SQLEASE_DEFAULT_RETRY_MS)));

    /* A reservation long enough for its target's next read or two (it
     * polls every retry, faster while it sees a request for it), and
     * short next to the ttl: a target that is gone leaves the lease held
     * by nobody for that long. */
    r->handoff_reserve_ms = opt->handoff_reserve_ms;
    if (r->handoff_reserve_ms <= 0) {
        r->handoff_reserve_ms = 3 * r->retry_ms;
        if (r->handoff_reserve_ms > r->ttl_ms / 2)
            r->handoff_reserve_ms = derived_ms(r->ttl_ms / 2);
    }

    /* A bare lease only writes ttl; the rules below are the supervisor's. */
    if (lease_only)
        return SQLEASE_OK;
    if (!(r->handoff_reserve_ms < r->ttl_ms))
        return sqle_fail(err, SQLEASE_EINVAL,
                         "hand-over reservation (%lld ms) must be less than ttl (%lld ms): a "
                         "target that is gone leaves the lease held by nobody that long",
                         (long long)r->handoff_reserve_ms, (long long)r->ttl_ms);
    if (!(r->renew_deadline_ms < r->ttl_ms))
        return sqle_fail(err, SQLEASE_EINVAL,
                         "renew deadline (%lld ms%s) must be less than ttl (%lld ms): the "
                         "gap is the time the work has to stop before anyone else may take "
                         "over", (long long)r->renew_deadline_ms, how(rd_derived),
                         (long long)r->ttl_ms);
    if (!(r->retry_ms < r->renew_deadline_ms))
        return sqle_fail(err, SQLEASE_EINVAL,
                         "retry (%lld ms%s) must be less than the renew deadline (%lld ms%s)",
                         (long long)r->retry_ms, how(retry_derived),
                         (long long)r->renew_deadline_ms, how(rd_derived));
    if (!(r->heartbeat_ms <= r->renew_deadline_ms / 2))
        return sqle_fail(err, SQLEASE_EINVAL,
                         "heartbeat (%lld ms%s) must be at most half the renew deadline "
                         "(%lld ms%s), so that one failed renew can be retried in time",
                         (long long)r->heartbeat_ms, how(hb_derived),
                         (long long)r->renew_deadline_ms, how(rd_derived));
    return SQLEASE_OK;
}

int sqlease_options_check(const sqlease_options *opt, sqlease_error *err)
{
    sqlease_options full;
    sqle_resolved r;
    int rc;

    sqle_err_clear(err);
    rc = sqle_options_import(opt, &full, err);
    if (rc != SQLEASE_OK)
        return rc;
    return sqle_options_resolve(&full, NULL, 0, &r, err);
}

/*
 * The lease settings of a DSN's odbc.ini section are checked as strictly
 * as flags: a bare number or a bad identifier fails the open with the key
 * and the DSN named, rather than surfacing later as a lease that behaves
 * differently from what the file says.
 */
/*
 * Look `key` up into buf.  SQLGetPrivateProfileString cuts a value that
 * does not fit without saying so, and a cut value may still parse (a
 * duration whose first 511 bytes are one): a value that fills the buffer
 * is refused, since nothing valid is that long.  1: set, 0: unset, -1:
 * refused (err filled).
 */
static int ini_value(sqle_ini_get get, void *ctx, const char *dsn, const char *key,
                     char *buf, size_t cap, sqlease_error *err)
{
    if (!get(ctx, key, buf, cap))
        return 0;
    if (strlen(buf) >= cap - 1) {
        sqle_fail(err, SQLEASE_EINVAL, "odbc.ini: %s in DSN '%.128s' is longer than %zu bytes",
                  key, dsn, cap - 2);
        return -1;
    }
    return 1;
}

int sqle_ini_read(sqle_ini_get get, void *ctx, const char *dsn, sqle_ini *ini,
                  sqlease_error *err)
{
    static const struct { const char *key; size_t off; } durations[] = {
        { "SqleaseTTL", offsetof(sqle_ini, ttl_ms) },
        { "SqleaseHeartbeat", offsetof(sqle_ini, heartbeat_ms) },
        { "SqleaseRenewDeadline", offsetof(sqle_ini, renew_deadline_ms) },
        { "SqleaseRetry", offsetof(sqle_ini, retry_ms) },
    };
    char buf[512];
    size_t i;
    int rc;

    memset(ini, 0, sizeof *ini);
    rc = ini_value(get, ctx, dsn, "SqleaseTable", buf, sizeof buf, err);
    if (rc < 0)
        return SQLEASE_EINVAL;
    if (rc > 0) {
        /* The value is quoted last: every message is redacted as a
         * whole, and a value holding "PWD=" masks what follows it, which
         * must not be the DSN's name (found by the odbc.ini fuzz target). */
        if (!sqle_valid_table(buf))
            return sqle_fail(err, SQLEASE_EINVAL,
                             "odbc.ini: SqleaseTable in DSN '%.128s' is not a valid table "
                             "(identifier or schema.identifier): '%.128s'", dsn, buf);
        ini->table = sqle_strdup(buf);
        if (ini->table == NULL)
            return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    rc = ini_value(get, ctx, dsn, "SqleaseFireTable", buf, sizeof buf, err);
    if (rc < 0)
        return SQLEASE_EINVAL;
    if (rc > 0) {
        if (!sqle_valid_table(buf))
            return sqle_fail(err, SQLEASE_EINVAL,
                             "odbc.ini: SqleaseFireTable in DSN '%.128s' is not a valid table "
                             "(identifier or schema.identifier): '%.128s'", dsn, buf);
        ini->fire_table = sqle_strdup(buf);
        if (ini->fire_table == NULL)
            return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    rc = ini_value(get, ctx, dsn, "SqleaseHistoryTable", buf, sizeof buf, err);
    if (rc < 0)
        return SQLEASE_EINVAL;
    if (rc > 0) {
        if (!sqle_valid_table(buf))
            return sqle_fail(err, SQLEASE_EINVAL,
                             "odbc.ini: SqleaseHistoryTable in DSN '%.128s' is not a valid "
                             "table (identifier or schema.identifier): '%.128s'", dsn, buf);
        ini->history_table = sqle_strdup(buf);
        if (ini->history_table == NULL)
            return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    rc = ini_value(get, ctx, dsn, "SqleaseName", buf, sizeof buf, err);
    if (rc < 0)
        return SQLEASE_EINVAL;
    if (rc > 0) {
        if (strlen(buf) > SQLEASE_MAX_NAME)
            return sqle_fail(err, SQLEASE_EINVAL,
                             "odbc.ini: SqleaseName in DSN '%.128s' is longer than %d bytes",
                             dsn, SQLEASE_MAX_NAME);
        ini->name = sqle_strdup(buf);
        if (ini->name == NULL)
            return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    for (i = 0; i < sizeof durations / sizeof durations[0]; i++) {
        int64_t ms = 0;
        sqlease_error perr;
        rc = ini_value(get, ctx, dsn, durations[i].key, buf, sizeof buf, err);
        if (rc < 0)
            return SQLEASE_EINVAL;
        if (rc == 0)
            continue;
        rc = sqlease_parse_duration(buf, &ms, &perr);
        if (rc == SQLEASE_OK && ms == 0)
            rc = sqle_fail(&perr, SQLEASE_EINVAL, "duration '%s' is zero", buf);
        if (rc != SQLEASE_OK)
            return sqle_fail(err, rc, "odbc.ini: %s in DSN '%.128s': %s", durations[i].key,
                             dsn, perr.message);
        *(int64_t *)((char *)ini + durations[i].off) = ms;
    }
    return SQLEASE_OK;
}

void sqle_ini_free(sqle_ini *ini)
{
    if (ini == NULL)
        return;
    free(ini->table);
    free(ini->fire_table);
    free(ini->history_table);
    free(ini->name);
    memset(ini, 0, sizeof *ini);
}

/*
 * A duration must carry its unit.  "30" could be seconds to one reader and
 * milliseconds to another, and the difference is a lease a thousand times
 * shorter than intended, so a bare number is refused with a message that
 * says what to write instead.
 */
int sqlease_parse_duration(const char *text, int64_t *ms, sqlease_error *err)
{
    static const struct { const char *unit; int64_t mul; } units[] = {
        { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 }, { "d", 86400000 },
    };
    const char *p;
    int64_t v = 0;
    size_t i;

    sqle_err_clear(err);
    if (text == NULL || ms == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "duration: NULL argument");
    p = text;
    if (*p == '\0')
        return sqle_fail(err, SQLEASE_EINVAL, "empty duration: write it with a unit, e.g. 30s");
    if (*p == '-')
        return sqle_fail(err, SQLEASE_EINVAL, "duration '%.64s' is negative", text);
    if (!isdigit((unsigned char)*p))
        return sqle_fail(err, SQLEASE_EINVAL,
                         "duration '%.64s' does not start with a number (e.g. 500ms, 30s, 2m)",
                         text);
    while (isdigit((unsigned char)*p)) {
        int d = *p - '0';
        if (v > (INT64_MAX - d) / 10)
            return sqle_fail(err, SQLEASE_EINVAL, "duration '%.64s' is too large", text);
        v = v * 10 + d;
        p++;
    }
    /* Zero is zero in every unit: no unit to ask for.  Whether a zero
     * is allowed is the caller's to say (a ttl of 0 is not; a minimum
     * hold of 0 is the default). */
    if (*p == '\0' && v == 0) {
        *ms = 0;
        return SQLEASE_OK;
    }
    if (*p == '\0')
        return sqle_fail(err, SQLEASE_EINVAL,
                         "duration '%.64s' has no unit: write %.32sms, %.32ss or %.32sm",
                         text, text, text, text);
    for (i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(p, units[i].unit) == 0) {
            if (v > SQLEASE_MAX_DURATION_MS / units[i].mul)
                return sqle_fail(err, SQLEASE_EINVAL,
                                 "duration '%.64s' is too large (at most 30 days)", text);
            *ms = v * units[i].mul;
            return SQLEASE_OK;
        }
    }
    return sqle_fail(err, SQLEASE_EINVAL,
                     "duration '%.64s' has an unknown unit '%.16s' (use ms, s, m, h or d)",
                     text, p);
}

/*
 * host-pid-xxxxxxxx: the host and pid tell a human reading the row which
 * process it is; the random part is what makes it unique, because a
 * restarted container can come back with the same host name and pid 1.
 */
int sqlease_owner_id(char *buf, size_t cap, sqlease_error *err)
{
    char host[128];
    unsigned char u[16];
    int n;

    sqle_err_clear(err);
    if (buf == NULL || cap < 32)
        return sqle_fail(err, SQLEASE_EINVAL, "owner id buffer is NULL or shorter than 32 bytes");
    if (sqle_uuid_random(u) != 0)
        return sqle_fail(err, SQLEASE_EPLATFORM, "cannot generate a random UUID");
    sqle_hostname(host, sizeof host);
    {
        /* The pid and the random part are what make the id unique: if
         * something must be cut to fit, it is the host name. */
        char tail[40];
        int t = snprintf(tail, sizeof tail, "-%ld-%02x%02x%02x%02x", sqle_pid(), u[0],
                         u[1], u[2], u[3]);
        size_t room;
        if (t < 0 || (size_t)t + 2 > cap)
            return sqle_fail(err, SQLEASE_EINVAL, "owner id buffer of %zu bytes is too short",
                             cap);
        room = cap - (size_t)t - 1;
        if (room > 64)
            room = 64;
        n = snprintf(buf, cap, "%.*s%s", (int)room, host, tail);
    }
    if (n < 0)
        return sqle_fail(err, SQLEASE_EPLATFORM, "cannot format the owner id");
    return SQLEASE_OK;
}
