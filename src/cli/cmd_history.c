/*
 * cmd_history.c -- `sqlease history`: every hold of a lease, newest
 * first: who held it (owner, host, pid, token), from when to when, how
 * the hold ended, and how long the lease had no holder before it (the
 * gap).  The question an operator asks after an incident ("who was the
 * leader at 03:02, and why did that change?"), answered from the
 * history table the holders write (src/history.c).
 *
 * A hold whose row has no end is either the lease row's live hold
 * ("holding") or one whose end was never written (its holder stopped
 * renewing and nobody has taken the lease since, or a history statement
 * failed): the lease row is read too, to tell which.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cronexpr.h"
#include "internal.h"
#include "json.h"

/* A lease row as the listing needs it: which hold is live now. */
typedef struct live_hold {
    char name[SQLEASE_MAX_NAME + 1];
    int64_t token;
} live_hold;

typedef struct history_out {
    int json, all, first, rows;
    live_hold *live;          /* the live holds of the lease rows read */
    size_t nlive, cap;
} history_out;

static void fmt_time(int64_t ms, char *buf, size_t cap)
{
    if (ms <= 0)
        snprintf(buf, cap, "-");
    else
        sqle_cron_format_utc(ms, buf, cap);
}

/* Seconds with two decimals: "0.31 s", "168.88 s". */
static void fmt_secs(int64_t ms, char *buf, size_t cap)
{
    snprintf(buf, cap, "%" PRId64 ".%02d s", ms / 1000, (int)(ms % 1000) / 10);
}

/* Whether hold (name, token) is the live hold of its lease row. */
static int is_live(const history_out *o, const sqlease_hold_info *h)
{
    size_t i;

    for (i = 0; i < o->nlive; i++)
        if (o->live[i].token == h->token && strcmp(o->live[i].name, h->name) == 0)
            return 1;
    return 0;
}

/* How a hold stands, in words: its end, "holding", or "unknown" (no end
 * written, and not the lease row's live hold). */
static const char *how_said(const history_out *o, const sqlease_hold_info *h)
{
    if (h->ended[0] != '\0')
        return h->ended;
    return is_live(o, h) ? "holding" : "unknown";
}

static int on_hold(void *ud, const sqlease_hold_info *h)
{
    history_out *o = ud;
    char start[40], end[40], dur[32], gap[40], owner[SQLE_SHOWN_MAX(SQLEASE_MAX_OWNER)],
        host[SQLE_SHOWN_MAX(SQLEASE_MAX_HOST)], name[SQLE_SHOWN_MAX(SQLEASE_MAX_NAME)];
    const char *how = how_said(o, h);

    o->rows++;
    fmt_time(h->started_at_ms, start, sizeof start);
    fmt_time(h->ended_at_ms, end, sizeof end);
    if (o->json) {
        cli_json j;
        cli_json_begin(&j, stdout);
        cli_json_string(&j, "name", h->name);
        cli_json_int(&j, "token", h->token);
        cli_json_string(&j, "owner", h->owner);
        cli_json_string(&j, "host", h->host);
        cli_json_int(&j, "pid", h->pid);
        cli_json_int(&j, "started_at_ms", h->started_at_ms);
        cli_json_string(&j, "started_at", start);
        if (h->ended_at_ms > 0) {
            cli_json_int(&j, "ended_at_ms", h->ended_at_ms);
            cli_json_string(&j, "ended_at", end);
            cli_json_int(&j, "duration_ms", h->ended_at_ms - h->started_at_ms);
        } else {
            cli_json_null(&j, "ended_at_ms");
            cli_json_null(&j, "ended_at");
            cli_json_null(&j, "duration_ms");
        }
        cli_json_string(&j, "ended", how);
        if (h->gap_ms >= 0)
            cli_json_int(&j, "gap_ms", h->gap_ms);
        else
            cli_json_null(&j, "gap_ms");
        cli_json_end(&j);
        return 0;
    }
    if (o->first) {
        if (o->all)
            printf("%-20s ", "NAME");
        printf("%-24s %-24s %11s  %-11s  %-13s %-16s %7s  %s\n", "STARTED", "ENDED", "DURATION",
               "HOW", "GAP BEFORE", "HOST", "PID", "OWNER");
        o->first = 0;
    }
    if (h->ended_at_ms > 0 && h->ended_at_ms >= h->started_at_ms)
        fmt_secs(h->ended_at_ms - h->started_at_ms, dur, sizeof dur);
    else
        snprintf(dur, sizeof dur, "-");
    if (h->gap_ms >= 0) {
        char secs[32];
        fmt_secs(h->gap_ms, secs, sizeof secs);
        snprintf(gap, sizeof gap, "gap %s", secs);
    } else {
        snprintf(gap, sizeof gap, "gap ?");
    }
    sqle_show_text(h->owner, owner, sizeof owner);
    sqle_show_text(h->host, host, sizeof host);
    if (o->all)
        printf("%-20s ", sqle_show_text(h->name, name, sizeof name));
    printf("%-24s %-24s %11s  %-11s  %-13s %-16s %7" PRId64 "  %s (token %" PRId64 ")\n", start,
           end, dur, how, gap, host[0] != '\0' ? host : "-", h->pid,
           owner[0] != '\0' ? owner : "-", h->token);
    return 0;
}

/* A lease row of the table (sqlease_list): its live hold, if any. */
static int on_lease(void *ud, const char *name, const sqlease_lease_info *info)
{
    history_out *o = ud;

    if (!info->held)
        return 0;
    if (o->nlive == o->cap) {
        size_t cap = o->cap != 0 ? o->cap * 2 : 16;
        live_hold *v = realloc(o->live, cap * sizeof *v);
        if (v == NULL)
            return 1;
        o->live = v;
        o->cap = cap;
    }
    snprintf(o->live[o->nlive].name, sizeof o->live[o->nlive].name, "%s", name);
    o->live[o->nlive].token = info->token;
    o->nlive++;
    return 0;
}

int cli_cmd_history(const cli_args *a)
{
    const char *name;
    int64_t since_ms = 24 * 3600 * INT64_C(1000), now = 0;
    sqlease_db *db = NULL;
    sqlease_options o, eff;
    sqlease_error err;
    history_out out;
    int i, rc, st;

    cli_log_init(a, SQLEASE_LOG_WARN);
    memset(&out, 0, sizeof out);
    out.first = 1;
    for (i = 0; i < a->cmd_argc; i++) {
        const char *v = NULL;
        int r;
        if (strcmp(a->cmd_argv[i], "--help") == 0 || strcmp(a->cmd_argv[i], "-h") == 0) {
            cli_print_help();
            return CLI_EXIT_OK;
        }
        if (strcmp(a->cmd_argv[i], "--json") == 0) {
            out.json = 1;
            continue;
        }
        if (strcmp(a->cmd_argv[i], "--all-names") == 0) {
            out.all = 1;
            continue;
        }
        if ((r = cli_flag_value(a->cmd_argc, a->cmd_argv, &i, "--since", &v)) != 0) {
            if (r < 0 || cli_parse_duration("--since", v, &since_ms) != 0)
                return CLI_EXIT_USAGE;
            continue;
        }
        if (a->cmd_argv[i][0] == '-')
            return cli_unknown_flag("history", a->cmd_argv[i]);
        return cli_usage("history: unexpected '%s'", a->cmd_argv[i]);
    }
    rc = cli_open_db(a, &db);
    if (rc != CLI_CONTINUE)
        return rc;
    cli_lease_options(a, &o);
    rc = cli_effective_options(db, &o, &eff);
    if (rc != CLI_CONTINUE) {
        sqlease_db_close(db);
        return rc;
    }
    name = eff.name != NULL ? eff.name : SQLEASE_DEFAULT_NAME;
    memset(&err, 0, sizeof err);
    st = sqlease_db_now_ms(db, &now, &err);
    /* Which holds are live now: the lease row (every row, with
     * --all-names), read before the history so that a hold that starts
     * in between reads as unknown rather than a hold that ended as live. */
    if (st == SQLEASE_OK && out.all) {
        st = sqlease_list(db, eff.table, on_lease, &out, &err);
    } else if (st == SQLEASE_OK) {
        sqlease_lease *l = NULL;
        sqlease_lease_info row;
        o.name = name;
        st = sqlease_lease_new(&l, db, &o, &err);
        if (st == SQLEASE_OK)
            st = sqlease_lease_status(l, &row, &err);
        if (st == SQLEASE_OK)
            on_lease(&out, name, &row);
        sqlease_lease_free(l);
    }
    if (st == SQLEASE_OK)
        st = sqlease_history_list(db, eff.history_table, out.all ? NULL : name, now - since_ms,
                                  on_hold, &out, &err);
    sqlease_db_close(db);
    free(out.live);
    if (st != SQLEASE_OK) {
        cli_error("history: %s", err.message[0] != '\0' ? err.message : sqlease_strerror(st));
        if (st == SQLEASE_ENOTABLE || st == SQLEASE_ENOROW)
            cli_error("run `sqlease migrate` first (it creates the history table)");
        return cli_exit_for_status(st);
    }
    if (!out.json && out.rows == 0)
        printf("no hold of lease '%s' started in the last %" PRId64 " ms\n",
               out.all ? "*" : name, since_ms);
    return CLI_EXIT_OK;
}
