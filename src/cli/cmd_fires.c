/*
 * cmd_fires.c -- `sqlease fires`: the fire ledger, newest first: which
 * fires of which jobs ran, where, under which token, how each ended, and
 * which were skipped, missed or abandoned, with why.  The question every
 * scheduler's users ask ("did last night's backup run, where, and how
 * did it end?"), answered from the database.
 *
 * A fire that `run --schedule` is running has no ledger row until it
 * ends (its claim is the lease row's, which the take wrote): the lease
 * row is read too, and such a fire is shown as running.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cronexpr.h"
#include "internal.h"
#include "json.h"

typedef struct fires_out {
    int json;
    int rows;
    int64_t running_fire;     /* the lease row's running fire, shown first; 0 none */
    int first;
} fires_out;

static void fmt_time(int64_t ms, char *buf, size_t cap)
{
    if (ms <= 0)
        snprintf(buf, cap, "-");
    else
        sqle_cron_format_utc(ms, buf, cap);
}

static void print_row(fires_out *o, const sqlease_fire_info *fi)
{
    char fire[40], start[40], owner[SQLE_SHOWN_MAX(SQLEASE_MAX_OWNER)],
        host[SQLE_SHOWN_MAX(SQLEASE_MAX_HOST)], job[SQLE_SHOWN_MAX(SQLEASE_MAX_JOB)],
        note[SQLE_SHOWN_MAX(SQLEASE_MAX_NOTE)], name[SQLE_SHOWN_MAX(SQLEASE_MAX_NAME)],
        dur[32], code[16];

    o->rows++;
    if (o->json) {
        cli_json j;
        cli_json_begin(&j, stdout);
        cli_json_string(&j, "name", fi->name);
        cli_json_string(&j, "job", fi->job);
        cli_json_int(&j, "fire_at_ms", fi->fire_at_ms);
        fmt_time(fi->fire_at_ms, fire, sizeof fire);
        cli_json_string(&j, "fire_at", fire);
        cli_json_string(&j, "state", fi->state);
        cli_json_int(&j, "attempt", fi->attempt);
        cli_json_string(&j, "owner", fi->owner);
        cli_json_string(&j, "host", fi->host);
        cli_json_int(&j, "token", fi->token);
        cli_json_int(&j, "started_at_ms", fi->started_at_ms);
        cli_json_int(&j, "ended_at_ms", fi->ended_at_ms);
        if (fi->has_exit)
            cli_json_int(&j, "exit_status", fi->exit_status);
        else
            cli_json_null(&j, "exit_status");
        if (fi->duration_ms >= 0)
            cli_json_int(&j, "duration_ms", fi->duration_ms);
        else
            cli_json_null(&j, "duration_ms");
        cli_json_string_or_null(&j, "note", fi->note[0] != '\0' ? fi->note : NULL);
        cli_json_end(&j);
        return;
    }
    if (o->first) {
        printf("%-24s %-20s %-9s %-3s %-16s %-24s %9s %4s  %s\n", "FIRE", "JOB", "STATE", "TRY",
               "HOST", "STARTED", "DURATION", "EXIT", "OWNER");
        o->first = 0;
    }
    fmt_time(fi->fire_at_ms, fire, sizeof fire);
    fmt_time(fi->started_at_ms, start, sizeof start);
    if (fi->duration_ms >= 0)
        snprintf(dur, sizeof dur, "%" PRId64 "ms", fi->duration_ms);
    else
        snprintf(dur, sizeof dur, "-");
    if (fi->has_exit)
        snprintf(code, sizeof code, "%d", fi->exit_status);
    else
        snprintf(code, sizeof code, "-");
    sqle_show_text(fi->job, job, sizeof job);
    sqle_show_text(fi->host, host, sizeof host);
    sqle_show_text(fi->owner, owner, sizeof owner);
    sqle_show_text(fi->note, note, sizeof note);
    sqle_show_text(fi->name, name, sizeof name);
    printf("%-24s %-20s %-9s %-3d %-16s %-24s %9s %4s  %s (token %" PRId64 ")\n", fire, job,
           fi->state, fi->attempt, host[0] != '\0' ? host : "-", start, dur, code,
           owner[0] != '\0' ? owner : "-", fi->token);
    if (note[0] != '\0')
        printf("%-24s %s\n", "", note);
    (void)name;
}

static int on_fire_row(void *ud, const sqlease_fire_info *fi)
{
    fires_out *o = ud;

    /* The running fire shown from the lease row is the same fire. */
    if (o->running_fire > 0 && fi->fire_at_ms == o->running_fire &&
        strcmp(fi->job, fi->name) == 0)
        o->running_fire = 0;
    print_row(o, fi);
    return 0;
}

int cli_cmd_fires(const cli_args *a)
{
    const char *job = NULL, *name;
    int64_t since_ms = 24 * 3600 * INT64_C(1000), now = 0;
    sqlease_db *db = NULL;
    sqlease_options o, eff;
    sqlease_error err;
    fires_out out;
    int i, all = 0, rc, st;

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
            all = 1;
            continue;
        }
        if ((r = cli_flag_value(a->cmd_argc, a->cmd_argv, &i, "--job", &v)) != 0) {
            if (r < 0)
                return CLI_EXIT_USAGE;
            if (sqle_check_text("--job", v, SQLEASE_MAX_JOB, 0, &err) != SQLEASE_OK)
                return cli_usage("%s", err.message);
            job = v;
            continue;
        }
        if ((r = cli_flag_value(a->cmd_argc, a->cmd_argv, &i, "--since", &v)) != 0) {
            if (r < 0 || cli_parse_duration("--since", v, &since_ms) != 0)
                return CLI_EXIT_USAGE;
            continue;
        }
        if (a->cmd_argv[i][0] == '-')
            return cli_unknown_flag("fires", a->cmd_argv[i]);
        return cli_usage("fires: unexpected '%s'", a->cmd_argv[i]);
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
    if (st == SQLEASE_OK && !all && (job == NULL || strcmp(job, name) == 0)) {
        /* run --schedule's fire in progress: in the lease row only. */
        sqlease_lease *l = NULL;
        sqlease_lease_info row;
        o.name = name;
        if (sqlease_lease_new(&l, db, &o, &err) == SQLEASE_OK &&
            sqlease_lease_status(l, &row, &err) == SQLEASE_OK && row.held &&
            row.fire_at_ms > 0 && row.fire_at_ms >= now - since_ms)
            out.running_fire = row.fire_at_ms;
        if (out.running_fire > 0) {
            sqlease_fire_info fi;
            memset(&fi, 0, sizeof fi);
            snprintf(fi.name, sizeof fi.name, "%s", name);
            snprintf(fi.job, sizeof fi.job, "%s", name);
            fi.fire_at_ms = row.fire_at_ms;
            snprintf(fi.state, sizeof fi.state, "running");
            fi.attempt = 1;
            snprintf(fi.owner, sizeof fi.owner, "%s", row.owner);
            fi.token = row.token;
            fi.started_at_ms = row.acquired_at_ms;
            fi.duration_ms = -1;
            print_row(&out, &fi);
        }
        sqlease_lease_free(l);
        st = SQLEASE_OK;
    }
    if (st == SQLEASE_OK)
        st = sqlease_fire_list(db, eff.fire_table, all ? NULL : name, job, now - since_ms,
                               on_fire_row, &out, &err);
    sqlease_db_close(db);
    if (st != SQLEASE_OK) {
        cli_error("fires: %s", err.message[0] != '\0' ? err.message : sqlease_strerror(st));
        if (st == SQLEASE_ENOTABLE)
            cli_error("run `sqlease migrate` first (it creates the fire table)");
        return cli_exit_for_status(st);
    }
    if (!out.json && out.rows == 0)
        printf("no fire%s%s of lease '%s' in the last %" PRId64 " ms\n", job ? " of job " : "",
               job ? job : "", all ? "*" : name, since_ms);
    return CLI_EXIT_OK;
}
