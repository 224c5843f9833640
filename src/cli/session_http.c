/*
 * session_http.c -- what `supervise --http` answers (http.h): the
 * session's provider of /metrics, /health, /leader and /holder.
 *
 * The callbacks run on the server's threads while the main thread goes
 * on, so they never touch the session itself.  The main thread copies
 * what they need into the session_http below, under its lock, every
 * round of its loop (cli_session_http_update) and whenever the
 * supervisor in force changes (cli_session_http_sup: it is taken out of
 * here before it is stopped or freed).  Health and leadership are asked
 * of the supervisor and the callback bridge at the moment of the
 * request, not of that copy, so that a probe never sees a hold that
 * ended a round ago; /holder reads the row, at most once per retry
 * however many clients ask.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "session.h"

struct cli_session_http {
    cli_http *server;               /* main thread only */
    cli_http_row row;               /* /holder's read, shared (its own lock) */

    sqle_mutex mu;                  /* guards what follows */
    sqlease_supervisor *sup;        /* in force; NULL while there is none */
    sqlease_db *db;                 /* once connected */
    cli_hold *hold;                 /* once it exists (its own lock guards it) */
    char name[SQLEASE_MAX_NAME + 1]; /* "" until known */
    int64_t renew_deadline_ms, retry_ms; /* 0 until known */
    char labels[sizeof(((cli_metrics *)0)->labels)]; /* "" until the name is known */
    cli_metrics_values values;      /* as of the main loop's last round */
    char why[400];                  /* why there is no supervisor, or the last failure */
    int stopping;
};

/* ---- the callbacks (server threads) ----------------------------------- */

static int http_metrics(void *ud, cli_text *out)
{
    struct cli_session_http *h = ud;
    int status = 200;

    sqle_mutex_lock(&h->mu);
    if (h->labels[0] == '\0') {
        status = 503;
        cli_text_puts(out, "# the lease's name is not known until the database has answered\n");
    } else {
        cli_metrics_format(h->labels, &h->values, out);
    }
    sqle_mutex_unlock(&h->mu);
    return status;
}

/* cli_http_health's rule while a supervisor runs (http.h); without one,
 * why not. */
static int http_health(void *ud, cli_text *out)
{
    struct cli_session_http *h = ud;
    int status = 503;

    sqle_mutex_lock(&h->mu);
    if (h->sup != NULL)
        status = cli_http_health(h->sup, h->name, h->renew_deadline_ms, h->why, out);
    else if (h->stopping)
        cli_text_puts(out, "stopping");
    else if (h->why[0] != '\0')
        cli_text_puts(out, h->why);
    else if (h->db == NULL)
        cli_text_puts(out, "connecting to the database");
    else
        cli_text_puts(out, "not contending for the lease");
    sqle_mutex_unlock(&h->mu);
    return status;
}

/* 200 while this instance holds the lease and CMD runs under that hold:
 * the supervisor says it holds (its work is running) and the bridge has
 * CMD running.  A hold whose CMD waits for its restart is not worth
 * routing clients to. */
static int http_leader(void *ud, cli_text *out)
{
    struct cli_session_http *h = ud;
    sqlease_state st;
    cli_hold *hold;
    char name[SQLEASE_MAX_NAME + 1], who[SQLEASE_MAX_OWNER + 1];
    int have_sup, holding = 0, running = 0, stopping, r;
    int64_t token = 0;

    memset(&st, 0, sizeof st);
    sqle_mutex_lock(&h->mu);
    have_sup = h->sup != NULL;
    if (have_sup && sqlease_supervisor_state(h->sup, &st) == SQLEASE_OK)
        holding = st.holding;
    hold = h->hold;
    stopping = h->stopping;
    memcpy(name, h->name, sizeof name);
    sqle_mutex_unlock(&h->mu);
    /* The bridge's own lock, taken alone: its callbacks hold it while
     * the library waits on them. */
    if (hold != NULL && holding) {
        sqle_mutex_lock(&hold->mu);
        running = hold->held && hold->child_running;
        token = hold->token;
        sqle_mutex_unlock(&hold->mu);
    }
    if (holding && running) {
        cli_text_printf(out, "leader: holding lease '%s', token %" PRId64 "; CMD runs", name,
                        token);
        return 200;
    }
    if (holding) {
        cli_text_printf(out, "not the leader yet: holding lease '%s', CMD not running", name);
        return 503;
    }
    if (!have_sup || hold == NULL) {
        cli_text_printf(out, "not the leader: %s", stopping ? "stopping"
                        : hold == NULL ? "connecting to the database"
                        : "not contending for the lease");
        return 503;
    }
    r = cli_hold_holder(hold, who, sizeof who, NULL);
    if (r > 0)
        cli_text_printf(out, "not the leader: lease '%s' is held by %s", name, who);
    else if (r == 0)
        cli_text_printf(out, "not the leader: lease '%s' is free", name);
    else
        cli_text_printf(out, "not the leader: not holding lease '%s'", name);
    return 503;
}

/* This instance's hold is its owner id and the token it was given. */
static int hold_is_mine(void *ud, int64_t token)
{
    cli_hold *hold = ud;
    int mine;

    sqle_mutex_lock(&hold->mu);
    mine = hold->held && hold->token == token;
    sqle_mutex_unlock(&hold->mu);
    return mine;
}

static int http_holder(void *ud, cli_text *out)
{
    struct cli_session_http *h = ud;
    char name[SQLEASE_MAX_NAME + 1];
    sqlease_db *db;
    cli_hold *hold;
    int64_t retry;

    sqle_mutex_lock(&h->mu);
    db = h->db;
    retry = h->retry_ms;
    hold = h->hold;
    memcpy(name, h->name, sizeof name);
    sqle_mutex_unlock(&h->mu);
    return cli_http_row_holder(&h->row, db, retry, name, hold != NULL ? hold_is_mine : NULL,
                               hold, out);
}

/* ---- the main thread's side ------------------------------------------- */

int cli_session_http_start(cli_session *s, const char *addr_port)
{
    struct cli_session_http *h;
    cli_http_provider p;
    char err[600];
    int rc;

    h = calloc(1, sizeof *h);
    if (h == NULL || sqle_mutex_init(&h->mu) != 0) {
        free(h);
        cli_error("out of memory");
        return CLI_EXIT_OSERR;
    }
    if (cli_http_row_init(&h->row, s->args, s->owner) != 0) {
        sqle_mutex_destroy(&h->mu);
        free(h);
        cli_error("cannot create a mutex");
        return CLI_EXIT_OSERR;
    }
    h->values.last_contact_ms = -1;
    s->http = h;
    cli_session_http_update(s, NULL);
    memset(&p, 0, sizeof p);
    p.ud = h;
    p.metrics = http_metrics;
    p.health = http_health;
    p.leader = http_leader;
    p.holder = http_holder;
    rc = cli_http_start(addr_port, &p, &h->server, err, sizeof err);
    if (rc != CLI_CONTINUE) {
        cli_error("%s", err);
        cli_session_http_stop(s);
        return rc;
    }
    cli_log(SQLEASE_LOG_INFO, "serving /metrics, /health, /leader and /holder on %s",
            cli_http_url(h->server));
    return CLI_CONTINUE;
}

void cli_session_http_stop(cli_session *s)
{
    struct cli_session_http *h = s->http;

    if (h == NULL)
        return;
    /* Waits for the answers in flight: nothing reads the session after. */
    cli_http_stop(h->server);
    cli_http_row_destroy(&h->row);
    sqle_mutex_destroy(&h->mu);
    free(h);
    s->http = NULL;
}

void cli_session_http_sup(cli_session *s, sqlease_supervisor *sup)
{
    struct cli_session_http *h = s->http;

    if (h == NULL)
        return;
    sqle_mutex_lock(&h->mu);
    h->sup = sup;
    sqle_mutex_unlock(&h->mu);
}

void cli_session_http_stopping(cli_session *s)
{
    struct cli_session_http *h = s->http;

    if (h == NULL)
        return;
    sqle_mutex_lock(&h->mu);
    h->stopping = 1;
    sqle_mutex_unlock(&h->mu);
}

void cli_session_http_update(cli_session *s, const cli_metrics_values *v)
{
    struct cli_session_http *h = s->http;
    char why[sizeof h->why], reason[300];

    if (h == NULL)
        return;
    why[0] = '\0';
    if (s->pause_note[0] != '\0')
        snprintf(why, sizeof why, "%s", s->pause_note);
    else if (cli_session_failing(s, reason, sizeof reason))
        snprintf(why, sizeof why, "database unreachable: %s", reason);
    sqle_mutex_lock(&h->mu);
    h->db = s->db;
    h->hold = s->hold_ready ? &s->hold : NULL;
    if (s->name != NULL)
        snprintf(h->name, sizeof h->name, "%s", s->name);
    h->renew_deadline_ms = s->renew_deadline_ms;
    h->retry_ms = s->retry_ms;
    memcpy(h->labels, s->metrics.labels, sizeof h->labels);
    if (v != NULL)
        h->values = *v;
    memcpy(h->why, why, sizeof h->why);
    sqle_mutex_unlock(&h->mu);
}
