/*
 * db.c -- the sqlease_db handle: one database connection, served by a
 * worker thread, that no caller waits on past its bound.
 *
 * A handle wraps instances of a database port (port.h): the ODBC one
 * (db_open.c opens it), or another that a caller hands sqle_db_wrap.  Many leases and supervisors may share it; their statements
 * go into one queue, ordered by deadline, and one worker thread runs
 * them on the connection it owns, so that a thousand lease names cost
 * one connection rather than a thousand.
 *
 * Why a worker thread at all: a driver call can block far longer than
 * any timeout the driver was given.  psqlODBC and MariaDB Connector/ODBC
 * enforce the query timeout on the server, so a statement whose packets
 * the network drops waits on TCP's retransmission backoff, and one sent
 * to a frozen server waits for its answer for as long as the kernel
 * keeps the connection.  The driver's own socket settings (odbc.c) catch
 * most of this; what they miss, this file catches without trusting the
 * driver at all: the caller waits on a condition variable with its
 * deadline, not inside the driver.  When the deadline passes with the
 * statement still in the driver, the caller gets SQLEASE_ETIMEOUT and
 * the worker is abandoned with its connection: it stays blocked in the
 * driver until the call returns by itself, then closes its connection
 * and ends.  The next statement starts a new worker on a fresh
 * connection.  Abandoned workers are counted and capped
 * (DB_MAX_ABANDONED), so an outage that lasts cannot pile up connections
 * and threads.
 *
 * Everything a request needs (the SQL, the bound values, room for the
 * results) is copied into the request, and the caller's buffers are
 * written only by the caller, after the answer: an abandoned worker
 * never touches memory its caller has moved on from.  The handle itself
 * is reference-counted, one reference per live worker, so
 * sqlease_db_close never waits for a stuck worker either.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "internal.h"

/* The defaults are written into a full struct of the library's own and
 * copied out as far as the caller's struct reaches: a field past its
 * size is not the caller's memory.  Bytes past the library's struct (a
 * caller whose header is newer) are zeroed. */
void sqlease_db_options_init_(sqlease_db_options *opt, size_t size)
{
    sqlease_db_options d;

    if (opt == NULL || size < sizeof(size_t))
        return;
    memset(&d, 0, sizeof d);
    d.login_timeout_ms = 5000;
    d.query_timeout_ms = 5000;
    d.log_level = SQLEASE_LOG_INFO;
    memset(opt, 0, size);
    memcpy(opt, &d, size < sizeof d ? size : sizeof d);
    opt->size = size;
}

/* ------------------------------------------------------------------ */
/* Requests                                                            */
/* ------------------------------------------------------------------ */

enum req_state { REQ_QUEUED, REQ_RUNNING, REQ_DONE, REQ_ORPHANED };

struct db_req {
    db_req *next;           /* in the queue */
    int64_t deadline;       /* mono ms: the caller has its answer by then */
    int may_reconnect;      /* the deadline is the handle's own bound for a
                               call begun while connected: it may grow by the
                               login timeout, once, if a reconnect comes
                               first (see submit) */
    int64_t connect_by;     /* while the worker connects for it: the connect
                               is abandoned at this mono ms; 0 otherwise */
    int state;
    int connect_only;       /* connect, run nothing */
    char *sql;
    db_bind *binds;
    size_t nbinds;
    db_out *out;            /* the request's own result storage:
                               nout columns for each of max_rows rows */
    size_t nout;
    size_t max_rows;        /* 0: exec (first row only); else exec_rows */
    size_t nrows;           /* rows exec_rows fetched */
    int has_row;
    int64_t rows;
    int rc;
    sqlease_error err;
    sqle_cond done;      /* signalled when state becomes REQ_DONE */
};

struct db_worker {
    sqlease_db *db;
    void *port;             /* the instance this worker owns */
    sqle_thread thread;
    db_req *current;        /* the request inside the driver, or NULL */
    int abandoned;          /* finish the current call, close, and end */
};

static size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/*
 * One allocation holds the request and copies of everything it points
 * to: the SQL, the bound values and their text, and the output
 * descriptors with room for every text result.  The worker may outlive
 * the caller's interest in the answer, and must then find all of it
 * still there.
 */
static db_req *req_new(const char *sql, const db_bind *binds, size_t nbinds,
                       const db_out *out, size_t nout, size_t max_rows)
{
    size_t size = align8(sizeof(db_req));
    size_t sql_len = sql != NULL ? strlen(sql) + 1 : 0;
    size_t rows = max_rows > 0 ? max_rows : 1;
    size_t ncells, i;
    char *p;
    db_req *r;

    /* A listing's caller gives a descriptor for every cell, row after
     * row. */
    if (nout > 0 && rows > ((size_t)-1 / 4) / (nout * sizeof(db_out)))
        return NULL;
    ncells = nout * rows;
    size += align8(nbinds * sizeof(db_bind)) + align8(ncells * sizeof(db_out));
    size += align8(ncells * sizeof(int64_t));
    for (i = 0; i < nbinds; i++)
        if (binds[i].type == DB_TEXT && binds[i].s != NULL)
            size += strlen(binds[i].s) + 1;
    for (i = 0; i < ncells; i++)
        if (out[i].type == DB_TEXT)
            size += out[i].cap;
    size += sql_len;
    r = calloc(1, size);
    if (r == NULL)
        return NULL;
    if (sqle_cond_init(&r->done) != 0) {
        free(r);
        return NULL;
    }
    p = (char *)r + align8(sizeof(db_req));
    r->binds = (db_bind *)p;
    p += align8(nbinds * sizeof(db_bind));
    r->out = (db_out *)p;
    p += align8(ncells * sizeof(db_out));
    {
        int64_t *ints = (int64_t *)p;
        p += align8(ncells * sizeof(int64_t));
        for (i = 0; i < ncells; i++) {
            const db_out *o = &out[i];
            r->out[i].type = o->type;
            if (o->type == DB_TEXT) {
                r->out[i].s = p;
                r->out[i].cap = o->cap;
                p += o->cap;
            } else {
                r->out[i].i = &ints[i];
            }
        }
    }
    for (i = 0; i < nbinds; i++) {
        r->binds[i] = binds[i];
        if (binds[i].type == DB_TEXT && binds[i].s != NULL) {
            size_t n = strlen(binds[i].s) + 1;
            memcpy(p, binds[i].s, n);
            r->binds[i].s = p;
            p += n;
        }
    }
    if (sql != NULL) {
        memcpy(p, sql, sql_len);
        r->sql = p;
    }
    r->nbinds = nbinds;
    r->nout = nout;
    r->max_rows = max_rows;
    r->rows = -1;
    return r;
}

static void req_free(db_req *r)
{
    if (r == NULL)
        return;
    sqle_cond_destroy(&r->done);
    free(r);
}

/* Hand a finished request's results to the caller's own buffers (every
 * row a listing fetched, one after the other). */
static void req_deliver(const db_req *r, db_out *out, int *has_row, int64_t *rows,
                        size_t *nrows, sqlease_error *err)
{
    size_t ncells = r->nout * (r->max_rows > 0 ? r->nrows : 1);
    size_t i;

    for (i = 0; i < ncells; i++) {
        out[i].is_null = r->out[i].is_null;
        if (out[i].type == DB_TEXT) {
            if (out[i].s != NULL && out[i].cap > 0)
                memcpy(out[i].s, r->out[i].s, out[i].cap);
        } else if (out[i].i != NULL) {
            *out[i].i = *r->out[i].i;
        }
    }
    if (has_row != NULL)
        *has_row = r->has_row;
    if (rows != NULL)
        *rows = r->rows;
    if (nrows != NULL)
        *nrows = r->nrows;
    if (err != NULL)
        *err = r->err;
}

/* Earliest deadline first; among equal deadlines, first come first
 * served. */
static void queue_insert(sqlease_db *db, db_req *r)
{
    db_req **pp = &db->queue;

    while (*pp != NULL && (*pp)->deadline <= r->deadline)
        pp = &(*pp)->next;
    r->next = *pp;
    *pp = r;
}

static void queue_remove(sqlease_db *db, db_req *r)
{
    db_req **pp = &db->queue;

    while (*pp != NULL && *pp != r)
        pp = &(*pp)->next;
    if (*pp == r)
        *pp = r->next;
    r->next = NULL;
}

/* ------------------------------------------------------------------ */
/* Workers                                                             */
/* ------------------------------------------------------------------ */

static void db_free(sqlease_db *db);

/* Drop one reference (under no lock); the last one frees the handle. */
static void db_unref(sqlease_db *db)
{
    int last;

    sqle_mutex_lock(&db->m);
    last = --db->refs == 0;
    sqle_mutex_unlock(&db->m);
    if (last)
        db_free(db);
}

/*
 * The worker's whole life: take the earliest request, run it in the
 * driver without holding the lock, publish the answer.  It ends when the
 * handle closes, or, once abandoned, as soon as the call it is stuck in
 * returns; then it closes its own connection, which nobody else uses.
 */
static void worker_main(void *arg)
{
    db_worker *w = arg;
    sqlease_db *db = w->db;
    int abandoned;

    sqle_mutex_lock(&db->m);
    for (;;) {
        db_req *r;
        int rc, down;
        void (*observe)(void *, const char *);
        void *observe_ud;

        if (w->abandoned)
            break;
        r = db->queue;
        if (r == NULL) {
            if (db->closing)
                break;
            sqle_cond_wait_until(&db->work_cv, &db->m, -1);
            continue;
        }
        db->queue = r->next;
        r->next = NULL;
        r->state = REQ_RUNNING;
        w->current = r;
        observe = db->observe;
        observe_ud = db->observe_ud;
        sqle_mutex_unlock(&db->m);

        /* A connect has a bound of its own, the login timeout, also when
         * it is made for a statement: a server that accepts and never
         * answers must not keep the caller for the statement's bound on
         * top of it. */
        rc = SQLEASE_OK;
        if (r->connect_only || !db->ops->connected(w->port)) {
            sqle_mutex_lock(&db->m);
            r->connect_by = sqle_mono_ms() + db->login_timeout_ms + DB_SLACK_MS;
            sqle_cond_signal(&r->done); /* its waiter takes the earlier bound */
            sqle_mutex_unlock(&db->m);
            rc = db->ops->connect(w->port, &r->err);
            sqle_mutex_lock(&db->m);
            r->connect_by = 0;
            sqle_mutex_unlock(&db->m);
        }
        if (rc == SQLEASE_OK && !r->connect_only && observe != NULL)
            observe(observe_ud, r->sql);
        if (rc != SQLEASE_OK || r->connect_only) {
            /* the connect's answer is the request's */
        } else if (r->max_rows > 0) {
            sqle_atomic_add(&db->statements, 1);
            rc = db->ops->exec_rows != NULL
                     ? db->ops->exec_rows(w->port, r->sql, r->binds, r->nbinds, r->out,
                                          r->nout, r->max_rows, &r->nrows, &r->err)
                     : sqle_fail(&r->err, SQLEASE_EINVAL,
                                 "this database port cannot fetch several rows");
        } else {
            sqle_atomic_add(&db->statements, 1);
            rc = db->ops->exec(w->port, r->sql, r->binds, r->nbinds, r->out, r->nout,
                               &r->has_row, &r->rows, &r->err);
        }
        down = !db->ops->connected(w->port);

        sqle_mutex_lock(&db->m);
        w->current = NULL;
        if (!w->abandoned) {
            db->need_connect = down;
            if (db->dialect == NULL && rc == SQLEASE_OK)
                db->dialect = db->ops->dialect(w->port);
        }
        if (r->state == REQ_ORPHANED) {
            req_free(r);
        } else {
            r->rc = rc;
            r->state = REQ_DONE;
            sqle_cond_signal(&r->done);
        }
    }
    abandoned = w->abandoned;
    if (abandoned)
        db->nabandoned--;
    sqle_mutex_unlock(&db->m);

    db->ops->close(w->port);
    w->port = NULL;
    if (abandoned)
        free(w); /* detached: nobody joins it */
    db_unref(db);
}

/* Start a worker on a fresh clone of the prototype.  Under db->m. */
static int worker_start(sqlease_db *db, sqlease_error *err)
{
    db_worker *w = calloc(1, sizeof *w);

    if (w == NULL)
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    w->db = db;
    w->port = db->ops->clone(db->proto, db->dialect, err);
    if (w->port == NULL) {
        free(w);
        return err != NULL && err->status != SQLEASE_OK
                   ? err->status : sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    db->refs++;
    if (sqle_thread_start(&w->thread, worker_main, w) != 0) {
        db->refs--;
        db->ops->close(w->port);
        free(w);
        return sqle_fail(err, SQLEASE_EPLATFORM,
                         "cannot start the thread that runs statements");
    }
    db->worker = w;
    db->need_connect = 1;
    return SQLEASE_OK;
}

/*
 * Give up on the worker running a request whose caller has been answered:
 * the connection cannot be trusted to come back in time.  It finishes its
 * call on its own, closes its connection and ends.  Under db->m.
 */
static void worker_abandon(sqlease_db *db, db_worker *w)
{
    w->abandoned = 1;
    db->nabandoned++;
    if (db->worker == w)
        db->worker = NULL;
    sqle_thread_detach(&w->thread);
}

/* The answer to a statement that cannot be sent because DB_MAX_ABANDONED
 * connections are stuck in the driver.  Under db->m. */
static int capped_fail(const sqlease_db *db, sqlease_error *err)
{
    return sqle_fail(err, SQLEASE_ETIMEOUT,
                     "%d connections to '%s' are still stuck in the driver; not opening "
                     "another until one returns", db->nabandoned, db->conn_redacted);
}

/*
 * The worker serving the queue was abandoned and no other can take over
 * (the cap is reached, or a thread cannot be started): answer everything
 * queued now rather than let it wait for its bound on nothing.  Under
 * db->m.
 */
static void queue_fail_all(sqlease_db *db, int started_rc, const sqlease_error *started_err)
{
    db_req *r;

    while ((r = db->queue) != NULL) {
        db->queue = r->next;
        r->next = NULL;
        if (started_rc != SQLEASE_OK) {
            r->err = *started_err;
            r->rc = started_rc;
        } else {
            r->rc = capped_fail(db, &r->err);
        }
        r->state = REQ_DONE;
        sqle_cond_signal(&r->done);
    }
}

/* The bound of a call that starts now; *down says whether it includes
 * the login timeout (the connection is down and must be made first). */
static int64_t deadline_now(sqlease_db *db, int *down)
{
    int64_t bound = db->query_timeout_ms + DB_SLACK_MS;

    sqle_mutex_lock(&db->m);
    *down = db->worker == NULL || db->need_connect;
    sqle_mutex_unlock(&db->m);
    if (*down)
        bound += db->login_timeout_ms;
    return sqle_mono_ms() + bound;
}

int64_t sqle_db_deadline(sqlease_db *db)
{
    int down;

    return deadline_now(db, &down);
}

/* The queued requests must wait for a reconnect (their worker was
 * abandoned): those whose bound allows it get the login timeout on top,
 * once (their deadline was the handle's own, set while connected).  Under
 * db->m. */
static void reconnect_allowance(sqlease_db *db)
{
    db_req *q;

    for (q = db->queue; q != NULL; q = q->next)
        if (q->may_reconnect) {
            q->deadline += db->login_timeout_ms;
            q->may_reconnect = 0;
        }
}

/*
 * Queue `r` and wait for its answer until r->deadline.  Past it, a
 * request still queued is taken back (it was never sent), and one in the
 * driver is left to its worker, which is abandoned.  Frees `r` unless
 * its worker still needs it.  What to log is decided under the lock and
 * logged after it, since the sink is the caller's code.
 */
static int submit(sqlease_db *db, db_req *r, db_out *out, int *has_row, int64_t *rows,
                  size_t *nrows, sqlease_error *err)
{
    int rc, gave_up = 0, capped = 0, connecting = r->connect_only;
    int64_t waited, started = sqle_mono_ms();

    sqle_mutex_lock(&db->m);
    if (db->closing) {
        sqle_mutex_unlock(&db->m);
        req_free(r);
        return sqle_fail(err, SQLEASE_ESTATE, "the database handle is closing");
    }
    if (db->worker == NULL) {
        if (db->nabandoned >= DB_MAX_ABANDONED) {
            rc = capped_fail(db, err);
            sqle_mutex_unlock(&db->m);
            req_free(r);
            return rc;
        }
        rc = worker_start(db, err);
        if (rc != SQLEASE_OK) {
            sqle_mutex_unlock(&db->m);
            req_free(r);
            return rc;
        }
    }
    queue_insert(db, r);
    sqle_cond_signal(&db->work_cv);
    while (r->state != REQ_DONE) {
        int64_t until = r->deadline;
        if (r->connect_by > 0 && r->connect_by < until)
            until = r->connect_by;
        if (sqle_mono_ms() >= until) {
            gave_up = 1;
            connecting = connecting || r->connect_by > 0;
            break;
        }
        sqle_cond_wait_until(&r->done, &db->m, until);
    }
    if (!gave_up) {
        sqle_mutex_unlock(&db->m);
        req_deliver(r, out, has_row, rows, nrows, err);
        rc = r->rc;
        req_free(r);
        return rc;
    }
    waited = sqle_mono_ms() - started;
    if (r->state == REQ_QUEUED) {
        /* Never sent: take it back. */
        queue_remove(db, r);
        sqle_mutex_unlock(&db->m);
        req_free(r);
        return sqle_fail(err, SQLEASE_ETIMEOUT,
                         "no answer from '%s' within %lld ms: the statement was not sent "
                         "(the connection was busy with one that did not return)",
                         db->conn_redacted, (long long)waited);
    }
    /* In the driver: from now on the request belongs to its worker.
     * What waited behind it runs on a fresh connection, or, when no
     * connection may be opened (the cap) or none can be started, is
     * answered now: never left to wait behind a call that may not come
     * back. */
    r->state = REQ_ORPHANED;
    if (db->worker != NULL && db->worker->current == r) {
        worker_abandon(db, db->worker);
        capped = db->nabandoned >= DB_MAX_ABANDONED + SQLE_PLANTED(fifth_stuck_connection);
        if (db->queue != NULL) {
            sqlease_error serr;
            int src = SQLEASE_OK;

            sqle_err_clear(&serr);
            if (!capped)
                src = worker_start(db, &serr);
            if (capped || src != SQLEASE_OK) {
                queue_fail_all(db, src, &serr);
            } else {
                /* It has to reconnect first, which the bound of a call
                 * begun while connected allows for: the login timeout on
                 * top, once.  Not for a deadline the caller set (a
                 * statement of a call already given the login timeout, a
                 * stop's budget): that is its bound. */
                reconnect_allowance(db);
            }
        }
    }
    sqle_mutex_unlock(&db->m);
    if (capped)
        sqle_log(db->log, db->log_userdata, db->log_level, SQLEASE_LOG_ERROR,
                 "a call to '%s' did not return within %lld ms; abandoning that "
                 "connection (%d are now stuck in the driver, as many as are kept): "
                 "statements fail at once until one returns", db->conn_redacted,
                 (long long)waited, DB_MAX_ABANDONED);
    else
        sqle_log(db->log, db->log_userdata, db->log_level, SQLEASE_LOG_WARN,
                 "%s '%s' did not return within %lld ms; abandoning that connection "
                 "(closed when the driver gives the call back) for a new one",
                 connecting ? "connecting to" : "a statement to", db->conn_redacted,
                 (long long)waited);
    return sqle_fail(err, SQLEASE_ETIMEOUT, "no answer from '%s' within %lld ms while %s",
                     db->conn_redacted, (long long)waited,
                     connecting ? "connecting (login timeout)" : "running a statement");
}
/* ------------------------------------------------------------------ */
/* The handle                                                          */
/* ------------------------------------------------------------------ */

/* The last reference is gone: no worker is left, nothing is queued. */
static void table_sql_free(sqle_table_sql *t)
{
    if (t == NULL)
        return;
    free(t->table);
    free(t->acquire);
    free(t->take_watched);
    free(t->renew);
    free(t->release);
    free(t->release_force);
    free(t->repair);
    free(t->status);
    free(t->fence);
    free(t->take_fire);
    free(t->seed);
    free(t->handoff_request);
    free(t->handoff_cancel);
    free(t->handoff);
    free(t->ready_list);
    free(t);
}

static void fire_sql_free(sqle_fire_sql *f)
{
    if (f == NULL)
        return;
    free(f->table);
    free(f->fire_table);
    free(f->claim);
    free(f->reclaim);
    free(f->end);
    free(f->record);
    free(f->abandon);
    free(f->last);
    free(f->read);
    free(f->list);
    free(f->prune);
    free(f->done);
    free(f);
}

static void hist_sql_free(sqle_hist_sql *h)
{
    if (h == NULL)
        return;
    free(h->table);
    free(h->history_table);
    free(h->start);
    free(h->expire);
    free(h->end);
    free(h->force);
    free(h->list);
    free(h->prune);
    free(h);
}

static void db_free(sqlease_db *db)
{
    while (db->table_sql != NULL) {
        sqle_table_sql *t = db->table_sql;
        db->table_sql = t->next;
        table_sql_free(t);
    }
    while (db->fire_sql != NULL) {
        sqle_fire_sql *f = db->fire_sql;
        db->fire_sql = f->next;
        fire_sql_free(f);
    }
    while (db->hist_sql != NULL) {
        sqle_hist_sql *h = db->hist_sql;
        db->hist_sql = h->next;
        hist_sql_free(h);
    }
    if (db->proto != NULL)
        db->ops->close(db->proto);
    sqle_cond_destroy(&db->work_cv);
    sqle_mutex_destroy(&db->m);
    sqle_ini_free(&db->ini);
    free(db->conn_redacted);
    free(db);
}

/*
 * Connecting goes through the worker like any statement, so that a
 * server which accepts the connection and never answers (a frozen one, a
 * listener that is not a database) cannot keep the caller past the login
 * timeout, whatever the driver does with it.
 */
int sqle_db_wrap(sqlease_db **out, const db_ops *ops, void *proto, const char *conn_redacted,
                 const sqlease_db_options *opt, sqlease_error *err)
{
    sqlease_db *db;
    db_req *r;
    int rc;

    *out = NULL;
    db = calloc(1, sizeof *db);
    if (db == NULL) {
        ops->close(proto);
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    db->conn_redacted = sqle_strdup(conn_redacted != NULL ? conn_redacted : "");
    if (db->conn_redacted == NULL) {
        free(db);
        ops->close(proto);
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    if (sqle_mutex_init(&db->m) != 0) {
        free(db->conn_redacted);
        free(db);
        ops->close(proto);
        return sqle_fail(err, SQLEASE_EPLATFORM, "cannot create a mutex");
    }
    if (sqle_cond_init(&db->work_cv) != 0) {
        sqle_mutex_destroy(&db->m);
        free(db->conn_redacted);
        free(db);
        ops->close(proto);
        return sqle_fail(err, SQLEASE_EPLATFORM, "cannot create a condition variable");
    }
    db->ops = ops;
    db->proto = proto;
    db->refs = 1;
    db->dialect = ops->dialect(proto); /* a forced dialect is known already */
    db->log = opt != NULL ? opt->log : NULL;
    db->log_userdata = opt != NULL ? opt->log_userdata : NULL;
    db->log_level = opt != NULL ? opt->log_level : SQLEASE_LOG_INFO;
    db->query_timeout_ms =
        opt != NULL && opt->query_timeout_ms > 0 ? opt->query_timeout_ms : 5000;
    db->login_timeout_ms =
        opt != NULL && opt->login_timeout_ms > 0 ? opt->login_timeout_ms : 5000;

    r = req_new(NULL, NULL, 0, NULL, 0, 0);
    if (r == NULL) {
        sqlease_db_close(db);
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    r->connect_only = 1;
    r->deadline = sqle_mono_ms() + db->login_timeout_ms + DB_SLACK_MS;
    rc = submit(db, r, NULL, NULL, NULL, NULL, err);
    if (rc == SQLEASE_OK && db->dialect == NULL)
        rc = sqle_fail(err, SQLEASE_EDIALECT, "connected to '%s' but found no dialect",
                       db->conn_redacted);
    if (rc != SQLEASE_OK) {
        sqlease_db_close(db);
        return rc;
    }
    *out = db;
    return SQLEASE_OK;
}

/*
 * Closing never waits on the driver: an idle worker is told to end and
 * joined (it is between calls, so that is immediate); a worker still
 * inside a call (a statement of another thread, against the contract,
 * or one stuck at the moment of closing) is abandoned and frees itself
 * and its share of the handle when the call returns.
 */
void sqlease_db_close(sqlease_db *db)
{
    db_worker *join = NULL;

    if (db == NULL)
        return;
    sqle_mutex_lock(&db->m);
    db->closing = 1;
    if (db->worker != NULL) {
        if (db->worker->current != NULL || db->queue != NULL) {
            db->worker->abandoned = 1;
            db->nabandoned++;
            sqle_thread_detach(&db->worker->thread);
        } else {
            join = db->worker;
        }
        db->worker = NULL;
    }
    sqle_cond_broadcast(&db->work_cv);
    sqle_mutex_unlock(&db->m);
    if (join != NULL) {
        sqle_thread_join(&join->thread);
        free(join);
    }
    db_unref(db);
}

const char *sqlease_db_dialect(const sqlease_db *db)
{
    if (db == NULL || db->dialect == NULL)
        return NULL;
    return db->dialect->key;
}

const char *sqlease_db_conn_redacted(const sqlease_db *db)
{
    return db != NULL ? db->conn_redacted : NULL;
}

/* Resolved on the library's own full copy of `in`, then copied out as
 * far as the caller's `out` reaches (see "Structs that grow"). */
int sqlease_options_effective_(const sqlease_db *db, const sqlease_options *in,
                               sqlease_options *out, size_t out_size, sqlease_error *err)
{
    sqlease_options full;
    sqle_resolved r;
    int rc;

    sqle_err_clear(err);
    if (db == NULL || out == NULL || out_size < sizeof(size_t))
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_options_effective: NULL argument");
    rc = sqle_options_import(in, &full, err);
    if (rc != SQLEASE_OK)
        return rc;
    rc = sqle_options_resolve(&full, &db->ini, 0, &r, err);
    if (rc != SQLEASE_OK)
        return rc;
    full.table = r.table;
    full.fire_table = r.fire_table;
    full.history_table = r.history_table;
    full.name = r.name;
    full.ttl_ms = r.ttl_ms;
    full.heartbeat_ms = r.heartbeat_ms;
    full.renew_deadline_ms = r.renew_deadline_ms;
    full.retry_ms = r.retry_ms;
    sqle_struct_out(out, out_size, &full, sizeof full);
    return SQLEASE_OK;
}

uint64_t sqlease_db_statements(const sqlease_db *db)
{
    return db != NULL ? sqle_atomic_load(&db->statements) : 0;
}

/* Found or built under the handle's lock: a handle sees few tables, so a
 * list is enough, and building the texts is microseconds. */
const sqle_table_sql *sqle_db_table_sql(sqlease_db *db, const sqle_dialect *d,
                                        const char *table)
{
    sqle_table_sql *t;

    sqle_mutex_lock(&db->m);
    for (t = db->table_sql; t != NULL; t = t->next)
        if (t->d == d && strcmp(t->table, table) == 0)
            break;
    if (t == NULL && (t = calloc(1, sizeof *t)) != NULL) {
        t->d = d;
        t->table = sqle_strdup(table);
        t->acquire = sqle_sql_for_table(d->acquire.sql, table);
        t->take_watched = sqle_sql_for_table(d->take_watched.sql, table);
        t->renew = sqle_sql_for_table(d->renew.sql, table);
        t->release = sqle_sql_for_table(d->release.sql, table);
        t->release_force = sqle_sql_for_table(d->release_force.sql, table);
        t->repair = sqle_sql_for_table(d->repair.sql, table);
        t->status = sqle_sql_for_table(d->status.sql, table);
        t->fence = sqle_sql_for_table(d->fence.sql, table);
        t->take_fire = sqle_sql_for_table(d->take_fire.sql, table);
        t->seed = sqle_sql_for_table(d->seed.sql, table);
        t->handoff_request = sqle_sql_for_table(d->handoff_request.sql, table);
        t->handoff_cancel = sqle_sql_for_table(d->handoff_cancel.sql, table);
        t->handoff = sqle_sql_for_table(d->handoff.sql, table);
        t->ready_list = sqle_sql_for_table(d->ready_list.sql, table);
        if (t->table == NULL || t->acquire == NULL || t->take_watched == NULL ||
            t->renew == NULL || t->release == NULL || t->release_force == NULL ||
            t->repair == NULL || t->status == NULL || t->fence == NULL ||
            t->take_fire == NULL || t->seed == NULL || t->handoff_request == NULL ||
            t->handoff_cancel == NULL || t->handoff == NULL || t->ready_list == NULL) {
            table_sql_free(t);
            t = NULL;
        } else {
            t->next = db->table_sql;
            db->table_sql = t;
        }
    }
    sqle_mutex_unlock(&db->m);
    return t;
}

/* As sqle_db_table_sql, for the pair of tables the fire ledger's
 * statements name. */
const sqle_fire_sql *sqle_db_fire_sql(sqlease_db *db, const sqle_dialect *d, const char *table,
                                      const char *fire_table)
{
    sqle_fire_sql *f;

    sqle_mutex_lock(&db->m);
    for (f = db->fire_sql; f != NULL; f = f->next)
        if (f->d == d && strcmp(f->table, table) == 0 && strcmp(f->fire_table, fire_table) == 0)
            break;
    if (f == NULL && (f = calloc(1, sizeof *f)) != NULL) {
        f->d = d;
        f->table = sqle_strdup(table);
        f->fire_table = sqle_strdup(fire_table);
        f->claim = sqle_sql_for_tables(d->fire_claim.sql, table, fire_table);
        f->reclaim = sqle_sql_for_tables(d->fire_reclaim.sql, table, fire_table);
        f->end = sqle_sql_for_tables(d->fire_end.sql, table, fire_table);
        f->record = sqle_sql_for_tables(d->fire_record.sql, table, fire_table);
        f->abandon = sqle_sql_for_tables(d->fire_abandon.sql, table, fire_table);
        f->last = sqle_sql_for_tables(d->fire_last.sql, table, fire_table);
        f->read = sqle_sql_for_tables(d->fire_read.sql, table, fire_table);
        f->list = sqle_sql_for_tables(d->fire_list.sql, table, fire_table);
        f->prune = sqle_sql_for_tables(d->fire_prune.sql, table, fire_table);
        f->done = sqle_sql_for_tables(d->fire_done.sql, table, fire_table);
        if (f->table == NULL || f->fire_table == NULL || f->claim == NULL ||
            f->reclaim == NULL || f->end == NULL || f->record == NULL || f->abandon == NULL ||
            f->last == NULL || f->read == NULL || f->list == NULL || f->prune == NULL ||
            f->done == NULL) {
            fire_sql_free(f);
            f = NULL;
        } else {
            f->next = db->fire_sql;
            db->fire_sql = f;
        }
    }
    sqle_mutex_unlock(&db->m);
    return f;
}

/* As sqle_db_table_sql, for the pair of tables the holder history's
 * statements name. */
sqle_hist_sql *sqle_db_hist_sql(sqlease_db *db, const sqle_dialect *d, const char *table,
                                const char *history_table)
{
    sqle_hist_sql *h;

    sqle_mutex_lock(&db->m);
    for (h = db->hist_sql; h != NULL; h = h->next)
        if (h->d == d && strcmp(h->table, table) == 0 &&
            strcmp(h->history_table, history_table) == 0)
            break;
    if (h == NULL && (h = calloc(1, sizeof *h)) != NULL) {
        h->d = d;
        h->table = sqle_strdup(table);
        h->history_table = sqle_strdup(history_table);
        h->start = sqle_sql_for_all(d->hold_start.sql, table, NULL, history_table);
        h->expire = sqle_sql_for_all(d->hold_expire.sql, table, NULL, history_table);
        h->end = sqle_sql_for_all(d->hold_end.sql, table, NULL, history_table);
        h->force = sqle_sql_for_all(d->hold_force.sql, table, NULL, history_table);
        h->list = sqle_sql_for_all(d->hold_list.sql, table, NULL, history_table);
        h->prune = sqle_sql_for_all(d->hold_prune.sql, table, NULL, history_table);
        if (h->table == NULL || h->history_table == NULL || h->start == NULL ||
            h->expire == NULL || h->end == NULL || h->force == NULL || h->list == NULL ||
            h->prune == NULL) {
            hist_sql_free(h);
            h = NULL;
        } else {
            h->next = db->hist_sql;
            db->hist_sql = h;
        }
    }
    sqle_mutex_unlock(&db->m);
    return h;
}

const sqle_dialect *sqle_db_dialect(sqlease_db *db)
{
    return db->dialect;
}

/* A request's deadline: the caller's (a bound it keeps), or, for 0, the
 * handle's own bound for a call that starts now, which may still grow
 * by a reconnect if it began while connected. */
static void set_deadline(sqlease_db *db, db_req *r, int64_t deadline)
{
    int down;

    if (deadline > 0) {
        r->deadline = deadline;
        r->may_reconnect = 0;
    } else {
        r->deadline = deadline_now(db, &down);
        r->may_reconnect = !down;
    }
}

int sqle_db_exec_by(sqlease_db *db, int64_t deadline, const char *sql, const db_bind *binds,
                    size_t nbinds, db_out *out, size_t nout, int *has_row, int64_t *rows,
                    sqlease_error *err)
{
    db_req *r;

    if (has_row != NULL)
        *has_row = 0;
    if (rows != NULL)
        *rows = -1;
    if (db == NULL || sql == NULL || (nbinds > 0 && binds == NULL) ||
        (nout > 0 && out == NULL))
        return sqle_fail(err, SQLEASE_EINVAL, "exec: NULL argument");
    r = req_new(sql, binds, nbinds, out, nout, 0);
    if (r == NULL)
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    set_deadline(db, r, deadline);
    return submit(db, r, out, has_row, rows, NULL, err);
}

int sqle_db_exec_rows_by(sqlease_db *db, int64_t deadline, const char *sql, const db_bind *binds,
                         size_t nbinds, db_out *out, size_t nout, size_t max_rows, size_t *nrows,
                         sqlease_error *err)
{
    db_req *r;
    int rc;

    if (nrows != NULL)
        *nrows = 0;
    if (db == NULL || sql == NULL || (nbinds > 0 && binds == NULL) || out == NULL ||
        nout == 0 || max_rows == 0 || nrows == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "exec_rows: NULL or empty argument");
    r = req_new(sql, binds, nbinds, out, nout, max_rows);
    if (r == NULL)
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    set_deadline(db, r, deadline);
    rc = submit(db, r, out, NULL, NULL, nrows, err);
    if (rc != SQLEASE_OK)
        *nrows = 0;
    return rc;
}

int sqle_db_exec(sqlease_db *db, const char *sql, const db_bind *binds, size_t nbinds,
                 db_out *out, size_t nout, int *has_row, int64_t *rows, sqlease_error *err)
{
    return sqle_db_exec_by(db, 0, sql, binds, nbinds, out, nout, has_row, rows, err);
}

/*
 * The clock is read in SQL so that every instance compares times from one
 * clock.  Zero and negative are rejected rather than passed on: zero is
 * what a failed conversion looks like, and it would make every lease look
 * expired to everyone.
 */
int sqlease_db_now_ms(sqlease_db *db, int64_t *now_ms, sqlease_error *err)
{
    const sqle_dialect *d;
    int64_t v = 0;
    db_out out = { DB_INT64, NULL, NULL, 0, 0 };
    int has_row = 0;
    int rc;

    sqle_err_clear(err);
    if (db == NULL || now_ms == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "sqlease_db_now_ms: NULL argument");
    d = sqle_db_dialect(db);
    out.i = &v;
    rc = sqle_db_exec(db, d->now.sql, NULL, 0, &out, 1, &has_row, NULL, err);
    if (rc != SQLEASE_OK)
        return rc;
    if (!has_row || out.is_null || v <= 0)
        return sqle_fail(err, SQLEASE_ECLOCK,
                         "the database clock read as %s from \"%s\"",
                         !has_row ? "no row" : out.is_null ? "NULL" : v == 0 ? "0" : "negative",
                         d->now_ms);
    *now_ms = v;
    return SQLEASE_OK;
}

int sqle_db_run(sqlease_db *db, const sqle_stmt *st, const char *sql, const db_params *p,
                db_out *out, size_t nout, int *has_row, int64_t *rows, sqlease_error *err)
{
    return sqle_db_run_by(db, 0, st, sql, p, out, nout, has_row, rows, err);
}

/*
 * Where each bound parameter's value lives in db_params, from the
 * generated parameter list: binding is a table lookup, so a new parameter
 * needs no code here.  Each entry also checks, at compile time, that the
 * db_params field has the C type the list gives the parameter.
 */
typedef struct param_binding {
    int type;       /* SQLEASE_PARAM_TEXT or SQLEASE_PARAM_INT64 */
    size_t offset;  /* of its field in db_params */
} param_binding;

#define PARAM_FIELD_TYPE_OK(type, field)                                               \
    _Generic(((db_params *)0)->field, const char *: (type) == SQLEASE_PARAM_TEXT,      \
             int64_t: (type) == SQLEASE_PARAM_INT64, default: 0)
#define PARAM_CHECK(constant, pname, type, field)                                      \
    _Static_assert(PARAM_FIELD_TYPE_OK(type, field),                                   \
                   "db_params." #field " does not have the type of :" pname);
#define PARAM_BINDING(constant, pname, type, field) [constant] = { type, offsetof(db_params, field) },

SQLEASE_PARAM_LIST(PARAM_CHECK)

static const param_binding param_bindings[SQLEASE_PARAM_COUNT] = {
    SQLEASE_PARAM_LIST(PARAM_BINDING)
};

int sqle_db_param_bind(const db_params *p, unsigned param, db_bind *b)
{
    const param_binding *pb;
    const char *field;

    memset(b, 0, sizeof *b);
    if (param >= SQLEASE_PARAM_COUNT)
        return -1;
    pb = &param_bindings[param];
    field = (const char *)p + pb->offset;
    if (pb->type == SQLEASE_PARAM_TEXT) {
        b->type = DB_TEXT;
        memcpy(&b->s, field, sizeof b->s);
    } else {
        b->type = DB_INT64;
        memcpy(&b->i, field, sizeof b->i);
    }
    return 0;
}

/* The bound values of a generated statement, in its markers' order.
 * binds has room for 16. */
static int bind_params(const sqle_stmt *st, const db_params *p, db_bind *binds,
                       sqlease_error *err)
{
    size_t i;

    if (st->nparams > 16)
        return sqle_fail(err, SQLEASE_EINVAL, "statement has %zu parameters; at most 16",
                         st->nparams);
    for (i = 0; i < st->nparams; i++) {
        if (sqle_db_param_bind(p, st->params[i], &binds[i]) != 0)
            return sqle_fail(err, SQLEASE_EINVAL, "unknown statement parameter %d",
                             (int)st->params[i]);
    }
    return SQLEASE_OK;
}

int sqle_db_run_by(sqlease_db *db, int64_t deadline, const sqle_stmt *st, const char *sql,
                   const db_params *p, db_out *out, size_t nout, int *has_row, int64_t *rows,
                   sqlease_error *err)
{
    db_bind binds[16];
    int rc = bind_params(st, p, binds, err);

    if (rc != SQLEASE_OK)
        return rc;
    return sqle_db_exec_by(db, deadline, sql != NULL ? sql : st->sql, binds, st->nparams, out, nout,
                           has_row, rows, err);
}

int sqle_db_run_rows_by(sqlease_db *db, int64_t deadline, const sqle_stmt *st, const char *sql,
                        const db_params *p, db_out *out, size_t nout, size_t max_rows,
                        size_t *nrows, sqlease_error *err)
{
    db_bind binds[16];
    int rc = bind_params(st, p, binds, err);

    if (rc != SQLEASE_OK)
        return rc;
    return sqle_db_exec_rows_by(db, deadline, sql != NULL ? sql : st->sql, binds, st->nparams, out,
                                nout, max_rows, nrows, err);
}
