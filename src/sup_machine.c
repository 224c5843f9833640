/*
 * sup_machine.c -- the supervisor's state machine, and what it tells the
 * engine whose node it is: what is due, what an answer means, when the
 * deadline is, which queued callbacks are still to be delivered.
 *
 * Every supervisor is one state (SUP_FOLLOWER, SUP_HOLDER, SUP_STALE,
 * SUP_STOPPED: supervisor.h) changed by one function, sqle_sup_step(),
 * from the events the engine's threads report through sqle_sup_engine_ops
 * (engine.h): an answer to a statement, the watchdog's deadline, a stop.
 * The step decides what the work does (queues on_started or on_stopped)
 * and when the next statement is due; the engine's threads do the
 * sending, the watching and the calling, and decide nothing.
 *
 * A proof is dated at the moment its statement was sent, not when the
 * answer came back: the database may have applied it at any moment in
 * between, and the only safe assumption is the earliest.  Holding for
 * renew_deadline after that moment, with renew_deadline < ttl, leaves
 * ttl - renew_deadline for on_stopped to finish before the row expires
 * and anyone else may take it.
 *
 * `running` flips when a callback is queued, and a supervisor's callbacks
 * run one at a time in the order queued (engine.c), which is what makes
 * on_started and on_stopped strictly alternate whichever thread runs
 * them.  No statement runs inside a callback's turn: a callback may take
 * as long as its margin allows, and a statement may hang until its query
 * timeout, and neither waits for the other.
 *
 * A follower polls with a read of the row (lease.c), so it knows who holds
 * the lease at every retry; on_holder reports each change of holder or
 * token, queued like the other callbacks, while this supervisor is not
 * the holder.
 *
 * Every start of the work has a token of its own.  When the watchdog
 * stopped the work while the row may still be this hold (a slow database
 * rather than a lost one), the supervisor goes SUP_STALE: once on_stopped
 * has returned, the runner gives that hold up (a release scoped to its
 * token, so it cannot clear a successor) before it asks for the lease
 * again, and keeps trying every retry until the release answers; the take
 * that follows gets a new token, and a token that was started once is
 * never started again.
 *
 * A hand-over (sqlease.h, "Handing the lease over") follows the same
 * rule: a renew refused because the row carries a request for this hold
 * (told apart from a loss by the read after it), or a hand-over asked of
 * this supervisor, stops the work (SQLEASE_STOP_HANDOFF) and goes
 * SUP_HANDOFF, and only once on_stopped has returned does the runner send
 * the hand-over, scoped to the hold's token: until then the row is still
 * that hold, and nobody may take it.  A ready follower that reads a
 * request for itself polls fast until the row is reserved for it; one
 * that reads a holder of lower priority that has held long enough asks it
 * to hand over to it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "history.h"
#include "internal.h"
#include "lease.h"
#include "platform.h"
#include "supervisor.h"

static const char *state_name(enum sup_state st)
{
    switch (st) {
    case SUP_NEW: return "new";
    case SUP_FOLLOWER: return "follower";
    case SUP_HOLDER: return "holder";
    case SUP_STALE: return "stale";
    case SUP_HANDOFF: return "handoff";
    case SUP_STOPPED: return "stopped";
    }
    return "?";
}

/* Every line names the lease, the owner and, when there is one, the token,
 * so that the logs of a fleet can be merged and read. */
static void vlog_token(sqlease_supervisor *s, int level, int64_t token, const char *msg)
{
    if (token > 0)
        sqle_log(s->log, s->log_userdata, s->log_level, level,
                 "lease %s owner %s token %lld: %s", s->r.name,
                 sqlease_lease_owner(s->lease), (long long)token, msg);
    else
        sqle_log(s->log, s->log_userdata, s->log_level, level, "lease %s owner %s: %s",
                 s->r.name, sqlease_lease_owner(s->lease), msg);
}

void sqle_sup_log(sqlease_supervisor *s, int level, const char *fmt, ...)
{
    char msg[640];
    va_list ap;
    int64_t token;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sqle_engine_lock(s->e);
    token = s->token;
    sqle_engine_unlock(s->e);
    vlog_token(s, level, token, msg);
}

void sqle_sup_note(sqlease_supervisor *s, const sup_note *note)
{
    if (note != NULL && note->set)
        sqle_sup_log(s, note->level, "%s", note->msg);
}

static void note_set(sup_note *note, int level, const char *fmt, ...) SQLEASE_PRINTF(3, 4);

static void note_set(sup_note *note, int level, const char *fmt, ...)
{
    va_list ap;

    if (note == NULL)
        return;
    /* The most severe line of one step is the one logged. */
    if (note->set && note->level <= level)
        return;
    note->set = 1;
    note->level = level;
    va_start(ap, fmt);
    vsnprintf(note->msg, sizeof note->msg, fmt, ap);
    va_end(ap);
}

static sup_cb *cb_new(int kind)
{
    sup_cb *cb = calloc(1, sizeof *cb);

    if (cb != NULL)
        cb->kind = kind;
    return cb;
}

/* The work stops (on_stopped is queued): for a loss, a deadline or a
 * shutdown. */
static void stop_work(sqlease_supervisor *s, int reason, sup_note *note)
{
    sup_cb *cb;

    /* A stop that cannot be queued would leave the work running past its
     * hold: out of memory, wait for memory, lock held (nothing else may
     * change the state meanwhile). */
    while ((cb = cb_new(CB_STOPPED)) == NULL)
        sqle_sleep_ms(1);
    s->running = 0;
    s->work_up = 0;
    /* A hand-over is asked for, not lost: counted as one once it is sent. */
    if (reason != SQLEASE_STOP_SHUTDOWN && reason != SQLEASE_STOP_HANDOFF)
        s->losses++;
    cb->reason = reason;
    sqle_engine_queue_cb(s->e, &s->node, &cb->link);
    (void)note; /* "stopped the work" is logged where on_stopped is called */
}

/* `every`, or with hand-over on at most SQLE_HANDOFF_WATCH_MS: the one
 * rule behind a holder's renews, a ready follower's reads and the lead. */
static int64_t watched(int handoff, int64_t every)
{
    return handoff && every > SQLE_HANDOFF_WATCH_MS ? SQLE_HANDOFF_WATCH_MS : every;
}

/* How often a holder renews: every heartbeat, and with hand-over on at
 * least every SQLE_HANDOFF_WATCH_MS, since a renew is what sees a
 * request to hand over (supervisor.h). */
static int64_t renew_every(const sqlease_supervisor *s)
{
    return watched(s->r.handoff, s->r.heartbeat_ms);
}

/* How often a follower reads the row between answers that say it is
 * held: every retry, and a ready follower (hand-over on) at least every
 * SQLE_HANDOFF_WATCH_MS, so that it reads a request for itself within a
 * holder's lead.  Failures are retried every retry whatever this says. */
static int64_t poll_every(const sqlease_supervisor *s)
{
    return watched(s->ready_up, s->r.retry_ms);
}

/*
 * A hold proven by a statement sent at `proof` with `token`: start the
 * work, unless that proof has already run out (an answer that arrives
 * after its own deadline never starts work) or the work already ran
 * under this token (a fenced resource would take a stopped run's late
 * writes for the new run's): such a hold goes stale, to be released
 * before the next take, which gets a new token.
 */
static void start_work(sqlease_supervisor *s, int64_t token, int64_t proof, int64_t now,
                       sup_note *note)
{
    sup_cb *cb;

    if (s->started_any && token == s->token) {
        s->state = SUP_STALE;
        s->next_due = now;
        note_set(note, SQLEASE_LOG_WARN, "the work already ran under token %lld; giving that "
                 "hold up to start afresh with a new token", (long long)token);
        return;
    }
    if (now >= proof + s->r.renew_deadline_ms) {
        /* Give it up and take afresh: a follower never holds a token, so
         * what it sends is always a poll. */
        s->state = SUP_STALE;
        s->next_due = now;
        note_set(note, SQLEASE_LOG_WARN, "hold proven too late; not starting the work, "
                 "giving the hold up");
        return;
    }
    cb = cb_new(CB_STARTED);
    if (cb == NULL) {
        s->state = SUP_STALE;
        s->next_due = now;
        note_set(note, SQLEASE_LOG_ERROR, "out of memory; not starting the work, giving the "
                 "hold up");
        return;
    }
    s->state = SUP_HOLDER;
    s->running = 1;
    s->work_up = 0;
    s->started_any = 1;
    s->handed = 0;
    s->token = token;
    s->holder_reported = 0; /* after this hold, report the first read */
    s->deadline = (SQLE_PLANTED(proof_dated_at_answer) ? now : proof) + s->r.renew_deadline_ms;
    s->next_due = proof + renew_every(s);
    cb->token = token;
    sqle_engine_queue_cb(s->e, &s->node, &cb->link);
    sqle_engine_watch_kick(s->e);
    /* "starting the work" is logged where on_started is called. */
}

/* Tell on_holder what a follower's read showed, if the holder or its token
 * changed since the last report (or nothing was reported since this
 * supervisor last held).  An expired hold reads as free: owner "". */
static void report_holder(sqlease_supervisor *s, const sqlease_lease_info *row)
{
    const char *owner = row->held ? row->owner : "";
    sup_cb *cb;

    if (s->on_holder == NULL || s->running || s->state == SUP_STOPPED)
        return;
    if (s->holder_reported && s->holder_token == row->token &&
        strcmp(s->holder_owner, owner) == 0)
        return;
    cb = cb_new(CB_HOLDER);
    if (cb == NULL)
        return; /* reported at the next read */
    if (row->held && row->data[0] != '\0' && (cb->data = sqle_strdup(row->data)) == NULL) {
        free(cb);
        return;
    }
    s->holder_reported = 1;
    s->holder_token = row->token;
    snprintf(s->holder_owner, sizeof s->holder_owner, "%s", owner);
    cb->token = row->token;
    snprintf(cb->owner, sizeof cb->owner, "%s", owner);
    sqle_engine_queue_cb(s->e, &s->node, &cb->link);
}

void sqle_sup_ready_up(sqlease_supervisor *s)
{
    int64_t at;

    ENGINE_HELD(s->e);
    s->ready_up = 1;
    /* The poll the first acquire scheduled (a retry away: it was not
     * ready then) comes in to a ready follower's interval. */
    at = sqle_engine_now(s->e) + poll_every(s);
    if (s->state == SUP_FOLLOWER && s->next_due > at) {
        s->next_due = at;
        sqle_engine_changed(s->e);
        sqle_engine_kick(s->e);
    }
}

/* A follower's read while it sees a request for itself (supervisor.h). */
static int64_t fast_poll(const sqlease_supervisor *s)
{
    return s->r.retry_ms < SQLE_HANDOFF_POLL_MS ? s->r.retry_ms : SQLE_HANDOFF_POLL_MS;
}

/* Stop the work for a hand-over to `target` ("*": the best ready
 * follower), to be sent once on_stopped has returned. */
static void begin_handoff(sqlease_supervisor *s, const char *target, int64_t now,
                          sup_note *note)
{
    char to[SQLEASE_MAX_OWNER + 1];

    /* `target` may be s->handoff_to itself (the end of a lead): copied
     * first, since snprintf must not read what it writes. */
    snprintf(to, sizeof to, "%s", target[0] != '\0' ? target : "*");
    s->handoff_at = 0;
    if (s->running)
        stop_work(s, SQLEASE_STOP_HANDOFF, note);
    memcpy(s->handoff_to, to, sizeof to);
    s->state = SUP_HANDOFF;
    s->handoff_pending = 1;
    s->handed = 0;
    s->next_due = now;
    note_set(note, SQLEASE_LOG_INFO, "handing the lease over to %s: stopping the work first",
             strcmp(s->handoff_to, "*") == 0 ? "the best ready follower" : s->handoff_to);
}

int sqle_sup_lead(sqlease_supervisor *s, const char *target, int64_t now)
{
    int64_t lead = watched(s->r.handoff, s->r.retry_ms) + SQLE_HANDOFF_POLL_MS;

    ENGINE_HELD(s->e);
    if (s->handoff_at != 0)
        return 1;
    if (now + lead >= s->deadline - SQLE_HANDOFF_LEAD_MARGIN_MS)
        return 0;
    snprintf(s->handoff_to, sizeof s->handoff_to, "%s", target[0] != '\0' ? target : "*");
    s->handoff_at = now + lead;
    sqle_engine_watch_kick(s->e);
    return 1;
}

/*
 * What a follower does with a read of a row another hold has, beyond
 * reporting it.  A request for it (or for "*", while it is a ready
 * follower) means the row will be reserved for it once the holder's work
 * has stopped: it reads again soon, for as long as the holder's ttl (a
 * holder of an earlier release ignores requests, and its row never
 * moves).  A holder of strictly lower priority, with no request yet, that
 * has held for preempt_after_ms by the database's clock, is asked to hand
 * over to this ready follower, once per hold.
 */
static void follower_saw(sqlease_supervisor *s, const sqlease_lease_info *row, int64_t proof,
                         int64_t now, sup_note *note)
{
    const char *me = s->r.owner;
    int64_t wait;

    if (!row->held || strcmp(row->owner, me) == 0)
        return;
    if (row->handoff_to[0] != '\0') {
        if (strcmp(row->handoff_to, me) != 0 &&
            !(strcmp(row->handoff_to, "*") == 0 && s->ready_up))
            return;
        if (s->fast_token != row->token) {
            s->fast_token = row->token;
            s->fast_since = now;
            note_set(note, SQLEASE_LOG_DEBUG, "the holder (token %lld) is asked to hand the "
                     "lease over to %s: reading the row every %lld ms", (long long)row->token,
                     strcmp(row->handoff_to, "*") == 0 ? "a ready follower" : "this instance",
                     (long long)fast_poll(s));
        }
        wait = row->ttl_ms > 0 ? row->ttl_ms : s->r.ttl_ms;
        if (now - s->fast_since < wait && proof + fast_poll(s) < s->next_due)
            s->next_due = proof + fast_poll(s);
        return;
    }
    if (s->ready_up &&
        (s->priority > row->priority ||
         (SQLE_PLANTED(handoff_equal_priority_preempts) && s->priority == row->priority)) &&
        s->requested_token != row->token &&
        (row->db_now_ms - row->acquired_at_ms >= s->r.preempt_after_ms ||
         SQLE_PLANTED(handoff_preempt_ignores_min_hold))) {
        s->want_request = 1;
        snprintf(s->req_owner, sizeof s->req_owner, "%s", row->owner);
        s->req_token = row->token;
        s->next_due = now;
    }
}

/* Whether `row`, read after a renew of the hold with `token` found it
 * gone, shows that very hold asked to hand over rather than lost. */
static int is_request(const sqlease_supervisor *s, const sqlease_lease_info *row, int64_t token)
{
    return row != NULL && row->db_now_ms > 0 && row->held && row->token == token &&
           row->handoff_to[0] != '\0' && strcmp(row->owner, s->r.owner) == 0;
}

/*
 * The transition function.  Each case says what the event means in each
 * state; anything not listed changes nothing.  SUP_STOPPED absorbs every
 * event but the counters: once a stop began, nothing starts.
 */
void sqle_sup_step(sqlease_supervisor *s, enum sup_event ev, int64_t proof, int64_t arg,
                   const sqlease_lease_info *row, sup_note *note)
{
    int64_t now = sqle_engine_now(s->e);
    enum sup_state was = s->state;

    ENGINE_HELD(s->e);
    if (s->state == SUP_NEW && ev != EV_SHUTDOWN)
        s->state = SUP_FOLLOWER; /* the first answer of start */
    switch (ev) {
    case EV_TAKEN:
    case EV_RENEWED:
        s->last_contact = now;
        s->acquires++;
        if (ev == EV_TAKEN)
            s->takes++;
        if (s->state == SUP_HOLDER && ev == EV_RENEWED) {
            if (SQLE_PLANTED(proof_dated_at_answer))
                proof = now;
            if (proof + s->r.renew_deadline_ms > s->deadline)
                s->deadline = proof + s->r.renew_deadline_ms;
            s->next_due = proof + renew_every(s);
        } else if (s->state == SUP_HOLDER) {
            /* A take while holding: the hold worked for is gone (the
             * caller reports EV_LOST first; this is a guard). */
            stop_work(s, SQLEASE_STOP_LOST, note);
            start_work(s, arg, proof, now, note);
        } else if (s->state == SUP_FOLLOWER && ev == EV_TAKEN) {
            start_work(s, arg, proof, now, note);
        } else if (s->state == SUP_FOLLOWER || s->state == SUP_STALE) {
            /* A renew of a hold no work runs under (a follower sends no
             * renew; this is a guard) or of the stale one: give it up. */
            s->state = SUP_STALE;
            s->next_due = now;
        }
        break;
    case EV_LOST:
        s->last_contact = now;
        if (s->state == SUP_HOLDER && s->running)
            stop_work(s, SQLEASE_STOP_LOST, note);
        /* A hand-over under way stays owed: a renew in flight when it
         * began answers 0 rows to its own request. */
        if (s->state != SUP_STOPPED && s->state != SUP_HANDOFF) {
            s->state = SUP_FOLLOWER; /* the row is no longer that hold */
            s->next_due = proof + s->r.retry_ms;
        }
        break;
    case EV_HANDOFF:
        /* At once (row: its handoff_to is the target), or at the end of
         * its lead (row NULL: the target was kept in handoff_to). */
        if (s->state == SUP_HOLDER && s->running)
            begin_handoff(s, row != NULL ? row->handoff_to : s->handoff_to, now, note);
        break;
    case EV_REQUESTED:
        /* Asked by another process (an operator, a follower of higher
         * priority): the work runs on for its lead, as after a request
         * of its own, since the target may not have read the request
         * yet (a follower that asked for itself has, and loses a retry
         * to it). */
        s->last_contact = now;
        if (s->state == SUP_HOLDER && s->running && row != NULL) {
            if (sqle_sup_lead(s, row->handoff_to, now))
                note_set(note, SQLEASE_LOG_INFO, "asked to hand the lease over to %s: the "
                         "work stops in %lld ms, once the target reads the row fast",
                         strcmp(row->handoff_to, "*") == 0 ? "the best ready follower"
                                                           : row->handoff_to,
                         (long long)(s->handoff_at - now));
            else
                begin_handoff(s, row->handoff_to, now, note);
        } else if (s->state != SUP_STOPPED && s->state != SUP_HANDOFF) {
            /* Not a hold whose work runs: nothing to hand over. */
            s->state = SUP_FOLLOWER;
            s->next_due = proof + s->r.retry_ms;
        }
        break;
    case EV_HANDED:
        /* Said in every state: a stop waits for it, and must not send a
         * release (or a second hand-over) after it. */
        s->last_contact = now;
        s->handoff_pending = 0;
        s->handed = 1;
        if (arg == HANDED_TO_TARGET)
            s->handoffs++;
        if (s->state == SUP_HANDOFF) {
            /* A follower again, polling as any (its lease takes nothing
             * but a row reserved for it for a while: answer_handoff). */
            s->state = SUP_FOLLOWER;
            s->next_due = proof + s->r.retry_ms;
        }
        break;
    case EV_ASKED:
        s->last_contact = now;
        s->want_request = 0;
        /* Once per hold, when written.  One that matched nothing (the
         * hold is gone, another request is there, or it is younger than
         * preempt_after on the database's clock as the statement ran) is
         * decided again by the next read. */
        if (arg)
            s->requested_token = s->req_token;
        if (s->state == SUP_FOLLOWER)
            s->next_due = now + fast_poll(s);
        break;
    case EV_NOT_HELD:
        s->last_contact = now;
        if (s->state == SUP_HOLDER && s->running) /* guard: a holder's loss comes as EV_LOST */
            stop_work(s, SQLEASE_STOP_LOST, note);
        if (s->state != SUP_STOPPED && s->state != SUP_HANDOFF) {
            s->state = SUP_FOLLOWER;
            s->next_due = proof + poll_every(s);
            if (row != NULL && row->db_now_ms > 0) {
                report_holder(s, row);
                follower_saw(s, row, proof, now, note);
            }
        }
        break;
    case EV_FAILED:
        if (arg == SQLEASE_ENOROW || arg == SQLEASE_ENOTABLE)
            s->last_contact = now;
        if (s->running)
            s->renew_failures++;
        if (s->state != SUP_STOPPED)
            s->next_due = s->state == SUP_FOLLOWER && SQLE_PLANTED(poll_stops_after_error)
                              ? INT64_MAX
                              : proof + s->r.retry_ms;
        /* A follower's read that answered says who held the lease when it
         * ran, even if the take after it failed. */
        if (s->state == SUP_FOLLOWER && row != NULL && row->db_now_ms > 0)
            report_holder(s, row);
        break;
    case EV_DEADLINE:
        if (s->state == SUP_HOLDER && s->running && now >= s->deadline) {
            stop_work(s, SQLEASE_STOP_DEADLINE, note);
            s->state = SUP_STALE;
            s->next_due = now;
        }
        break;
    case EV_RELEASED:
        if (s->state == SUP_STALE) {
            s->last_contact = now;
            s->state = SUP_FOLLOWER;
            s->next_due = now;
        }
        break;
    case EV_SHUTDOWN:
        if (s->running)
            stop_work(s, SQLEASE_STOP_SHUTDOWN, note);
        s->state = SUP_STOPPED;
        break;
    }
    if (s->state != was)
        note_set(note, SQLEASE_LOG_DEBUG, "%s -> %s", state_name(was), state_name(s->state));
    sqle_engine_changed(s->e);
    sqle_engine_kick(s->e);
}

/* ---- what the engine asks of a supervisor ----------------------------- */

/* Log what a failed statement meant for s. */
static void log_failure(sqlease_supervisor *s, int rc, int lost, const sqlease_error *err)
{
    if (rc == SQLEASE_OK || rc == SQLEASE_NOT_HELD || rc == SQLEASE_CLAIMED ||
        rc == SQLEASE_NOT_DUE)
        return;
    sqle_sup_log(s, lost ? SQLEASE_LOG_WARN : SQLEASE_LOG_ERROR, "%s (%s): %s",
                 lost ? "the hold is gone, and taking the lease again failed"
                      : "acquire failed",
                 sqlease_strerror(rc), err->message);
}

/*
 * What is due, by state: a holder's renew every heartbeat (renew_every:
 * it may go up to half of that early to share a round, since the deadline
 * only gains), a follower's poll every retry (poll_every, and up to half
 * of that early), the release of
 * a stale hold as soon as its on_stopped has returned and not before (the
 * row must stay this hold while the work stops), nothing in SUP_NEW
 * (start sends its first acquire itself) or SUP_STOPPED.  Asked when a
 * round is gathered, and again where a single statement is sent.
 */
static void sup_due(sqle_engine_node *n, sqle_due *out)
{
    sqlease_supervisor *s = SQLE_SUP_OF(n);

    out->what = SQLE_SEND_NONE;
    out->at = s->next_due;
    out->early = 0;
    switch (s->state) {
    case SUP_HOLDER:
        /* During a hand-over's lead no renew goes: its row carries the
         * request, which refuses it, and the work runs on the last proof
         * until the lead's end (set before the deadline). */
        if (s->handoff_at != 0)
            break;
        out->what = SQLE_SEND_RENEW;
        out->early = renew_every(s) / 2;
        break;
    case SUP_FOLLOWER:
        if (s->want_request) {
            /* Asked once, at once: the holder answers at its renew. */
            out->what = SQLE_SEND_REQUEST;
            snprintf(out->arg, sizeof out->arg, "%s", s->req_owner);
            out->token = s->req_token;
            /* The statement checks the hold's age again as it writes:
             * this read's verdict is stale once the clock steps back. */
            out->arg_ms = SQLE_PLANTED(handoff_preempt_ignores_min_hold) ? 0
                                                                          : s->r.preempt_after_ms;
            break;
        }
        out->what = SQLE_SEND_POLL;
        out->early = poll_every(s) / 2;
        break;
    case SUP_HANDOFF:
        /* As a stale hold's release: the row stays this hold until
         * on_stopped has returned. */
        if (!sqle_engine_cbs_pending(n) || SQLE_PLANTED(handoff_during_on_stopped)) {
            out->what = SQLE_SEND_HANDOFF;
            snprintf(out->arg, sizeof out->arg, "%s", s->handoff_to);
            out->arg_ms = s->r.handoff_reserve_ms;
        }
        break;
    case SUP_STALE:
        if (!sqle_engine_cbs_pending(n) || SQLE_PLANTED(release_during_on_stopped))
            out->what = SQLE_SEND_RELEASE;
        break;
    case SUP_NEW:
    case SUP_STOPPED:
        break;
    }
}

/* The watchdog's look: stop the work of a holder whose deadline has
 * come, else say when it comes. */
static int64_t sup_watch(sqle_engine_node *n, int64_t now)
{
    sqlease_supervisor *s = SQLE_SUP_OF(n);
    int64_t due = s->deadline + (SQLE_PLANTED(watchdog_a_heartbeat_late) ? s->r.heartbeat_ms : 0);

    if (s->state != SUP_HOLDER || !s->running)
        return -1;
    if (now >= due) {
        sqle_sup_step(s, EV_DEADLINE, 0, 0, NULL, NULL);
        return -1;
    }
    /* A hand-over's lead has run: stop the work now (on_stopped's line
     * says so). */
    if (s->handoff_at != 0 && now >= s->handoff_at) {
        sqle_sup_step(s, EV_HANDOFF, 0, 0, NULL, NULL);
        return -1;
    }
    return s->handoff_at != 0 && s->handoff_at < due ? s->handoff_at : due;
}

/* The release of a stale hold answered. */
static void answer_release(sqlease_supervisor *s, const sqle_answer *a)
{
    sup_note n1 = {0};

    sqle_engine_lock(s->e);
    sqle_sup_step(s, a->rc == SQLEASE_OK ? EV_RELEASED : EV_FAILED, a->sent, a->rc, NULL, &n1);
    sqle_engine_unlock(s->e);
    sqle_sup_note(s, &n1);
    if (a->rc != SQLEASE_OK)
        sqle_sup_log(s, SQLEASE_LOG_WARN, "could not release the hold whose work passed "
                     "its deadline (%s: %s); trying again in %lld ms",
                     sqlease_strerror(a->rc), a->err->message, (long long)s->r.retry_ms);
    else
        sqle_sup_log(s, SQLEASE_LOG_INFO, a->released
                         ? "released the hold whose work passed its deadline; the next "
                           "start gets a new token"
                         : "the hold whose work passed its deadline is no longer the "
                           "row's");
}

/* The hand-over answered: the hold went to its target (or, for a "*"
 * that found no ready follower, was released), was gone already, or the
 * statement failed (tried again every retry, as a stale hold's release
 * is: the row stays the hold's until then, and expires at the latest). */
static void answer_handoff(sqlease_supervisor *s, const sqle_answer *a)
{
    sup_note n1 = {0};
    char who[SQLE_QUOTED_ID_MAX];

    /* The row was handed over or released: the other followers get the
     * first go at it, should its target not take it (on the thread that
     * makes the lease's calls: this one). */
    if (a->rc == SQLEASE_OK && a->released)
        sqle_lease_defer_takes(s->lease, sqle_mono_ms() + s->r.handoff_reserve_ms +
                                             s->r.retry_ms);
    sqle_engine_lock(s->e);
    sqle_sup_step(s, a->rc == SQLEASE_OK ? EV_HANDED : EV_FAILED, a->sent,
                  a->rc != SQLEASE_OK ? a->rc
                  : !a->released ? HANDED_GONE
                  : a->target != NULL && a->target[0] != '\0' ? HANDED_TO_TARGET
                                                               : HANDED_RELEASED,
                  NULL, &n1);
    sqle_engine_unlock(s->e);
    sqle_sup_note(s, &n1);
    if (a->rc != SQLEASE_OK)
        sqle_sup_log(s, SQLEASE_LOG_WARN, "could not hand the lease over (%s: %s); trying again "
                     "in %lld ms", sqlease_strerror(a->rc), a->err->message,
                     (long long)s->r.retry_ms);
    else if (a->released && a->target != NULL && a->target[0] != '\0')
        sqle_sup_log(s, SQLEASE_LOG_INFO, "handed the lease over to %s (reserved for %lld ms)",
                     sqle_quote_id(a->target, who, sizeof who),
                     (long long)s->r.handoff_reserve_ms);
    else if (a->released)
        sqle_sup_log(s, SQLEASE_LOG_INFO, "released the lease: no ready follower to hand it "
                     "over to");
    else
        sqle_sup_log(s, SQLEASE_LOG_INFO, "the hold to hand over is no longer the row's");
}

/* A ready follower's request to a holder of lower priority answered. */
static void answer_request(sqlease_supervisor *s, const sqle_answer *a)
{
    sup_note n1 = {0};
    char who[SQLE_QUOTED_ID_MAX], holder[SQLEASE_MAX_OWNER + 1];

    sqle_engine_lock(s->e);
    snprintf(holder, sizeof holder, "%s", s->req_owner);
    sqle_sup_step(s, EV_ASKED, a->sent, a->rc == SQLEASE_OK && a->taken, NULL, &n1);
    sqle_engine_unlock(s->e);
    sqle_sup_note(s, &n1);
    if (a->rc != SQLEASE_OK)
        sqle_sup_log(s, SQLEASE_LOG_WARN, "could not ask the holder %s to hand the lease over "
                     "(%s: %s)", sqle_quote_id(holder, who, sizeof who),
                     sqlease_strerror(a->rc), a->err->message);
    else if (a->taken)
        sqle_sup_log(s, SQLEASE_LOG_INFO, "asked the holder %s (token %lld), whose priority is "
                     "lower, to hand the lease over to this instance",
                     sqle_quote_id(holder, who, sizeof who), (long long)a->token);
}

/* sqle_lease_acquire answered: a renew (or its loss, and the take tried
 * after it), or a follower's read and take. */
static void answer_acquire(sqlease_supervisor *s, const sqle_answer *a)
{
    sup_note n1 = {0}, n2 = {0};
    /* Read on the thread that made the call (the lease's own state). */
    int64_t fire = a->rc == SQLEASE_OK && a->taken ? sqle_lease_held_fire(s->lease) : 0;

    sqle_engine_lock(s->e);
    if (a->lost && !a->taken && a->rc == SQLEASE_NOT_HELD && is_request(s, a->row, s->token)) {
        /* The renew was refused because this hold is asked to hand over;
         * the read after it (the take's, which took nothing) says so.  Not
         * a loss in the history either: the hand-over records its end. */
        if (!SQLE_PLANTED(handoff_request_recorded_as_lost))
            sqle_lease_history_keep(s->lease);
        sqle_sup_step(s, EV_REQUESTED, a->sent, 0, a->row, &n1);
        sqle_engine_unlock(s->e);
        sqle_sup_note(s, &n1);
        return;
    }
    if (a->lost)
        sqle_sup_step(s, EV_LOST, a->sent, 0, NULL, &n1);
    if (a->rc == SQLEASE_OK && a->taken)
        s->fire_at = fire;
    if (a->rc == SQLEASE_OK)
        sqle_sup_step(s, a->taken ? EV_TAKEN : EV_RENEWED, a->sent, a->token, NULL, &n2);
    else if (a->rc == SQLEASE_NOT_HELD || a->rc == SQLEASE_CLAIMED || a->rc == SQLEASE_NOT_DUE)
        /* A scheduled take that found its fire claimed, or no fire due:
         * a follower's answer, not a failure. */
        sqle_sup_step(s, EV_NOT_HELD, a->sent, 0, a->row, &n2);
    else
        sqle_sup_step(s, EV_FAILED, a->sent, a->rc, a->row, &n2);
    sqle_engine_unlock(s->e);
    sqle_sup_note(s, &n1);
    sqle_sup_note(s, &n2);
    log_failure(s, a->rc, a->lost, a->err);
    if (a->rc == SQLEASE_OK && a->taken)
        sqle_sup_log(s, SQLEASE_LOG_DEBUG, "took the lease with token %lld in %lld ms",
                     (long long)a->token, (long long)(sqle_mono_ms() - a->sent));
}

/* ---- the holder history's pruning ------------------------------------- */

/* The first pruning of a hold comes this long after its take (a hold that
 * lasts a moment prunes nothing), then one per PRUNE_PERIOD_MS of
 * holding, each a DELETE of at most PRUNE_WINDOW_MS of starts, from
 * PRUNE_BACK_MS before the cutoff on: small statements that catch up
 * with a backlog at a day per hour. */
#define PRUNE_FIRST_MS 60000
#define PRUNE_PERIOD_MS (3600 * INT64_C(1000))
#define PRUNE_WINDOW_MS (24 * 3600 * INT64_C(1000))
#define PRUNE_BACK_MS (2 * PRUNE_WINDOW_MS)

/* A take answered: date the database's clock from its read, and have the
 * first pruning come a while into the hold. */
static void prune_after_take(sqlease_supervisor *s, const sqle_answer *a)
{
    if (sqle_lease_hist(s->lease)->sql == NULL || a->row == NULL || a->row->db_now_ms <= 0)
        return; /* no history: nothing to prune, and no lock taken for it */
    sqle_engine_lock(s->e);
    s->clock_ref = a->row->db_now_ms - a->sent;
    s->prune_at = sqle_mono_ms() + PRUNE_FIRST_MS;
    sqle_engine_unlock(s->e);
}

/*
 * A holder's renew answered: when its pruning is due, delete one window
 * of its lease's history rows older than the keep (history.c; one
 * statement, on the runner's thread, the engine's lock not held).  A
 * failure is said by the history's own log line, and the next hour tries
 * again.
 */
static void prune_if_due(sqlease_supervisor *s)
{
    const sqle_hist *h = sqle_lease_hist(s->lease);
    int64_t now, before, from, to, deleted = 0;
    sqlease_error err;

    if (h->sql == NULL)
        return; /* before any clock read or lock: no history, no trace */
    now = sqle_mono_ms();
    sqle_engine_lock(s->e);
    if (s->state != SUP_HOLDER || s->prune_at == 0 || now < s->prune_at) {
        sqle_engine_unlock(s->e);
        return;
    }
    s->prune_at = now + PRUNE_PERIOD_MS;
    before = now + s->clock_ref - s->r.history_keep_ms;
    if (s->prune_cursor <= 0 || s->prune_cursor > before)
        s->prune_cursor = before - PRUNE_BACK_MS;
    from = s->prune_cursor;
    to = from + PRUNE_WINDOW_MS < before ? from + PRUNE_WINDOW_MS : before;
    sqle_engine_unlock(s->e);
    if (to <= from)
        return;
    if (sqle_hist_prune(h, from, to, &deleted, &err) != SQLEASE_OK)
        return;
    sqle_engine_lock(s->e);
    s->prune_cursor = to;
    sqle_engine_unlock(s->e);
    if (deleted > 0)
        sqle_sup_log(s, SQLEASE_LOG_INFO, "pruned %lld history row(s) older than %lld ms",
                     (long long)deleted, (long long)s->r.history_keep_ms);
}

/* What a statement of s answered, as events of its state machine. */
static void sup_answer(sqle_engine_node *n, const sqle_answer *a)
{
    sqlease_supervisor *s = SQLE_SUP_OF(n);
    sup_note note = {0};

    if (a->rc == SQLEASE_OK && a->taken)
        prune_after_take(s, a);
    switch (a->kind) {
    case SQLE_ANS_RELEASE:
        answer_release(s, a);
        return;
    case SQLE_ANS_ACQUIRE:
        answer_acquire(s, a);
        if (a->rc == SQLEASE_OK && !a->taken)
            prune_if_due(s);
        return;
    case SQLE_ANS_RENEW:
        sqle_engine_lock(s->e);
        if (a->rc == SQLEASE_OK)
            sqle_sup_step(s, EV_RENEWED, a->sent, s->token, NULL, &note);
        else if (a->rc == SQLEASE_NOT_HELD && is_request(s, a->row, s->token)) {
            if (!SQLE_PLANTED(handoff_request_recorded_as_lost))
                sqle_lease_history_keep(s->lease);
            sqle_sup_step(s, EV_REQUESTED, a->sent, 0, a->row, &note);
        } else if (a->rc == SQLEASE_NOT_HELD)
            sqle_sup_step(s, EV_LOST, a->sent, 0, NULL, &note);
        else
            sqle_sup_step(s, EV_FAILED, a->sent, a->rc, NULL, &note);
        break;
    case SQLE_ANS_HANDOFF:
        answer_handoff(s, a);
        return;
    case SQLE_ANS_REQUEST:
        answer_request(s, a);
        return;
    case SQLE_ANS_READ:
        sqle_engine_lock(s->e);
        if (a->rc == SQLEASE_OK)
            sqle_sup_step(s, EV_NOT_HELD, a->sent, 0, a->row, &note);
        else
            sqle_sup_step(s, EV_FAILED, a->sent, a->rc, NULL, &note);
        break;
    case SQLE_ANS_TAKE:
        sqle_engine_lock(s->e);
        if (a->rc == SQLEASE_OK)
            sqle_sup_step(s, EV_TAKEN, a->sent, a->token, NULL, &note);
        else if (a->rc == SQLEASE_NOT_HELD)
            sqle_sup_step(s, EV_NOT_HELD, a->sent, 0, a->row, &note);
        else
            sqle_sup_step(s, EV_FAILED, a->sent, a->rc, a->row, &note);
        break;
    default:
        return;
    }
    sqle_engine_unlock(s->e);
    sqle_sup_note(s, &note);
    log_failure(s, a->rc, 0, a->err);
    if (a->kind == SQLE_ANS_RENEW && a->rc == SQLEASE_OK)
        prune_if_due(s);
}

/*
 * Whether a queued start may still be delivered (e->m held).  It was
 * proven when it was queued, but it may have waited behind a slow
 * callback of the same supervisor (an on_holder that connects to a host
 * that just died) for longer than its hold lasts: by then its deadline
 * may have passed, the hold may have been stopped, or another hold may
 * have started.  A start that is no longer the supervisor's running hold,
 * or whose deadline has passed, must not start the work: another owner
 * may hold the lease by now.
 */
static int start_current(const sqlease_supervisor *s, const sup_cb *cb)
{
    return (s->running && s->token == cb->token && sqle_engine_now(s->e) < s->deadline) ||
           SQLE_PLANTED(on_started_after_its_hold);
}

/*
 * Drop a start that is no longer current, and with it its stop, so that
 * on_started and on_stopped still alternate (e->m held).  Queued stops
 * follow the starts they end, in order: the next stop in the queue is
 * this start's.  If this start's hold still counts as running (its
 * deadline passed and the watchdog has not looked yet), it is stopped
 * here, which queues that stop; `note` gets what that step logs.
 */
static void drop_start(sqlease_supervisor *s, const sup_cb *cb, sup_note *note)
{
    if (s->running && s->token == cb->token)
        sqle_sup_step(s, EV_DEADLINE, 0, 0, NULL, note);
    s->drop_stop = 1;
}

/* Call one queued callback, e->m let go around the call.  The lines that
 * say the work starts or stops are written here, next to the call (the
 * start's before it, the stop's after it), so that they are in the order
 * the calls are.  Returns 1 if the callback was called, 0 if it was
 * dropped. */
static int deliver(sqle_engine *e, sqlease_supervisor *s, sup_cb *cb)
{
    sup_note note = {0};
    int go = 1;

    switch (cb->kind) {
    case CB_STARTED:
        go = start_current(s, cb);
        if (!go)
            drop_start(s, cb, &note);
        break;
    case CB_STOPPED:
        go = !s->drop_stop;
        s->drop_stop = 0;
        break;
    case CB_HOLDER:
        go = !s->running && s->state != SUP_STOPPED;
        break;
    }
    if (!go) {
        if (cb->kind == CB_STARTED) {
            sqle_engine_unlock(e);
            sqle_sup_note(s, &note);
            sqle_sup_log(s, SQLEASE_LOG_WARN, "the hold with token %lld ended before "
                         "on_started could be called (an earlier callback of this lease "
                         "took too long); not starting the work", (long long)cb->token);
            sqle_engine_lock(e);
        }
        return 0;
    }
    s->cb_thread = sqle_thread_self();
    sqle_engine_unlock(e);
    switch (cb->kind) {
    case CB_STARTED:
        sqle_sup_log(s, SQLEASE_LOG_INFO, "holding the lease; starting the work");
        if (s->on_started != NULL)
            s->on_started(s->userdata, cb->token);
        break;
    case CB_STOPPED: {
        /* The stop first, the line after: a log sink may block (the
         * default one writes to stderr, which may be a pipe nobody
         * drains), and the work must stop by its deadline whatever the
         * log does. */
        int64_t began = sqle_mono_ms();

        if (s->on_stopped != NULL)
            s->on_stopped(s->userdata, cb->reason);
        sqle_sup_log(s, cb->reason == SQLEASE_STOP_SHUTDOWN ? SQLEASE_LOG_INFO
                                                            : SQLEASE_LOG_WARN,
                     "stopped the work: %s (on_stopped took %lld ms)",
                     sqlease_stop_reason_str(cb->reason), (long long)(sqle_mono_ms() - began));
        break;
    }
    case CB_HOLDER:
        if (s->on_holder != NULL)
            s->on_holder(s->userdata, cb->owner, cb->token, cb->data);
        break;
    }
    sqle_engine_lock(e);
    s->cb_thread = 0;
    return 1;
}

/* One of s's queued callbacks, taken off its queue by the engine (e->m
 * held): delivered or dropped, then freed.  (The engine wakes the runner
 * once the queue is empty: a stale hold's release may be due then.) */
static void sup_deliver(sqle_engine_node *n, sqle_engine_cb *link)
{
    sqlease_supervisor *s = SQLE_SUP_OF(n);
    sup_cb *cb = (sup_cb *)(void *)link;
    int called = deliver(s->e, s, cb);

    if (cb->kind == CB_STARTED)
        s->work_up = called && s->running && s->token == cb->token;
    free(cb->data);
    free(cb);
}

const sqle_engine_ops sqle_sup_engine_ops = { sup_due, sup_answer, sup_watch, sup_deliver };
