/*
 * test_states.c -- the supervisor's state machine (sqle_sup_step in
 * src/sup_machine.c) on its own: events in, state, deadlines and queued
 * callbacks out, on a clock the test moves.  No database and no threads:
 * the engine here is a bare struct whose clock is the test's, and the
 * supervisor is marked as having a thread on its callbacks (in_cb), so
 * that what would be called stays in its queue to be read.
 *
 * The tests against a real database (test_supervisor.c) wait for real
 * heartbeats and deadlines; the rules themselves -- a proof counts from
 * when its statement was sent, an answer past its deadline starts
 * nothing, a token is never started twice, on_started and on_stopped
 * alternate -- are checked here exactly and in milliseconds of no one's
 * time.
 */
#include <stdlib.h>
#include <string.h>

#include "supervisor.h"
#include "testutil.h"

#define TTL 3000
#define HB 1000
#define RD 2000
#define RETRY 500

static int64_t fake_now;
static int64_t fake_clock(void)
{
    return fake_now;
}

static sqle_engine eng;
static sqlease_supervisor sup;
static int holder_calls;

static void on_holder(void *ud, const char *owner, int64_t token, const char *data)
{
    (void)ud;
    (void)owner;
    (void)token;
    (void)data;
    holder_calls++;
}

/* A follower at t = 10000 with nothing queued. */
static void fresh(void)
{
    sup_cb *cb;

    while ((cb = (sup_cb *)(void *)sup.node.cbq_head) != NULL) {
        sup.node.cbq_head = cb->link.next;
        free(cb->data);
        free(cb);
    }
    memset(&sup, 0, sizeof sup);
    fake_now = 10000;
    sup.e = &eng;
    sup.r.name = "job";
    sup.r.owner = "me";
    sup.r.ttl_ms = TTL;
    sup.r.heartbeat_ms = HB;
    sup.r.renew_deadline_ms = RD;
    sup.r.retry_ms = RETRY;
    sup.state = SUP_FOLLOWER;
    sup.last_contact = -1;
    sup.node.in_cb = 1; /* callbacks stay queued, to be read by the test */
    holder_calls = 0;
}

static void step(enum sup_event ev, int64_t proof, int64_t arg, const sqlease_lease_info *row)
{
    sqle_engine_lock(&eng);
    sqle_sup_step(&sup, ev, proof, arg, row, NULL);
    sqle_engine_unlock(&eng);
}

/* Take the first queued callback off the queue: its kind, and its token
 * (CB_STARTED, CB_HOLDER) or reason (CB_STOPPED) in *value; -1 if none. */
static int pop(int64_t *value)
{
    sup_cb *cb = (sup_cb *)(void *)sup.node.cbq_head;
    int kind;

    if (cb == NULL)
        return -1;
    sup.node.cbq_head = cb->link.next;
    if (sup.node.cbq_head == NULL)
        sup.node.cbq_tail = NULL;
    kind = cb->kind;
    if (value != NULL)
        *value = kind == CB_STOPPED ? cb->reason : cb->token;
    free(cb->data);
    free(cb);
    return kind;
}

/* A take answers: the hold is proven from when its statement was sent,
 * not from when the answer came; the work starts, the next renew is due
 * a heartbeat after the send. */
static void test_take_starts_from_send_time(void)
{
    int64_t v = 0;

    fresh();
    fake_now = 10300; /* the answer came 300 ms after the send */
    step(EV_TAKEN, 10000, 42, NULL);
    CU_ASSERT_EQUAL(sup.state, SUP_HOLDER);
    CU_ASSERT_EQUAL(sup.running, 1);
    CU_ASSERT_EQUAL(sup.token, 42);
    CU_ASSERT_EQUAL(sup.deadline, 10000 + RD);
    CU_ASSERT_EQUAL(sup.next_due, 10000 + HB);
    CU_ASSERT_EQUAL(sup.takes, 1);
    CU_ASSERT_EQUAL(sup.last_contact, 10300);
    CU_ASSERT_EQUAL(pop(&v), CB_STARTED);
    CU_ASSERT_EQUAL(v, 42);
    CU_ASSERT_EQUAL(pop(NULL), -1);
}

/* A renew moves the deadline to its own send time + renew_deadline, and
 * an answer to an older renew never moves it back. */
static void test_renew_moves_deadline_forward_only(void)
{
    fresh();
    step(EV_TAKEN, 10000, 7, NULL);
    pop(NULL);
    fake_now = 11050;
    step(EV_RENEWED, 11000, 7, NULL);
    CU_ASSERT_EQUAL(sup.deadline, 11000 + RD);
    CU_ASSERT_EQUAL(sup.next_due, 11000 + HB);
    fake_now = 11200;
    step(EV_RENEWED, 10500, 7, NULL); /* a late answer to an earlier send */
    CU_ASSERT_EQUAL(sup.deadline, 11000 + RD);
    CU_ASSERT_EQUAL(sup.state, SUP_HOLDER);
    CU_ASSERT_EQUAL(pop(NULL), -1); /* nothing to call */
}

/* The watchdog's event before the deadline does nothing; at it, the work
 * stops (SQLEASE_STOP_DEADLINE), the hold goes stale and its release is
 * due at once; a renew that answers then starts nothing. */
static void test_deadline_stops_and_goes_stale(void)
{
    int64_t v = 0;

    fresh();
    step(EV_TAKEN, 10000, 7, NULL);
    pop(NULL);
    fake_now = 10000 + RD - 1;
    step(EV_DEADLINE, 0, 0, NULL);
    CU_ASSERT_EQUAL(sup.state, SUP_HOLDER);
    CU_ASSERT_EQUAL(pop(NULL), -1);
    fake_now = 10000 + RD;
    step(EV_DEADLINE, 0, 0, NULL);
    CU_ASSERT_EQUAL(sup.state, SUP_STALE);
    CU_ASSERT_EQUAL(sup.running, 0);
    CU_ASSERT_EQUAL(sup.losses, 1);
    CU_ASSERT_EQUAL(sup.next_due, 10000 + RD);
    CU_ASSERT_EQUAL(pop(&v), CB_STOPPED);
    CU_ASSERT_EQUAL(v, SQLEASE_STOP_DEADLINE);
    fake_now += 10;
    step(EV_RENEWED, 10000 + RD - 100, 7, NULL); /* the renew that was in flight */
    CU_ASSERT_EQUAL(sup.state, SUP_STALE);
    CU_ASSERT_EQUAL(sup.running, 0);
    CU_ASSERT_EQUAL(pop(NULL), -1);
    step(EV_RELEASED, fake_now, 0, NULL);
    CU_ASSERT_EQUAL(sup.state, SUP_FOLLOWER);
    CU_ASSERT_EQUAL(sup.next_due, fake_now);
}

/* A token that was started once is never started again: a take answering
 * with it (the same hold, resumed) makes the hold stale instead. */
static void test_token_never_started_twice(void)
{
    int64_t v = 0;

    fresh();
    step(EV_TAKEN, 10000, 7, NULL);
    pop(NULL);
    step(EV_LOST, 10100, 0, NULL);
    CU_ASSERT_EQUAL(pop(&v), CB_STOPPED);
    CU_ASSERT_EQUAL(v, SQLEASE_STOP_LOST);
    CU_ASSERT_EQUAL(sup.state, SUP_FOLLOWER);
    CU_ASSERT_EQUAL(sup.next_due, 10100 + RETRY);
    step(EV_TAKEN, 10200, 7, NULL);
    CU_ASSERT_EQUAL(sup.state, SUP_STALE);
    CU_ASSERT_EQUAL(sup.running, 0);
    CU_ASSERT_EQUAL(pop(NULL), -1);
    step(EV_RELEASED, 10300, 0, NULL);
    step(EV_TAKEN, 10400, 8, NULL);
    CU_ASSERT_EQUAL(sup.state, SUP_HOLDER);
    CU_ASSERT_EQUAL(pop(&v), CB_STARTED);
    CU_ASSERT_EQUAL(v, 8);
}

/* An answer that comes after its own deadline starts nothing: the hold is
 * given up (stale) and taken afresh. */
static void test_late_answer_starts_nothing(void)
{
    fresh();
    fake_now = 10000 + RD;
    step(EV_TAKEN, 10000, 9, NULL);
    CU_ASSERT_EQUAL(sup.state, SUP_STALE);
    CU_ASSERT_EQUAL(sup.running, 0);
    CU_ASSERT_EQUAL(pop(NULL), -1);
    fresh();
    fake_now = 10000 + RD - 1;
    step(EV_TAKEN, 10000, 9, NULL);
    CU_ASSERT_EQUAL(sup.state, SUP_HOLDER);
    CU_ASSERT_EQUAL(pop(NULL), CB_STARTED);
}

/* An error is not a loss: the holder keeps working until its deadline,
 * counts the failure and tries again after `retry`. */
static void test_error_is_not_loss(void)
{
    fresh();
    step(EV_TAKEN, 10000, 7, NULL);
    pop(NULL);
    fake_now = 11000;
    step(EV_FAILED, 11000, SQLEASE_ECONNECT, NULL);
    CU_ASSERT_EQUAL(sup.state, SUP_HOLDER);
    CU_ASSERT_EQUAL(sup.running, 1);
    CU_ASSERT_EQUAL(sup.renew_failures, 1);
    CU_ASSERT_EQUAL(sup.deadline, 10000 + RD);
    CU_ASSERT_EQUAL(sup.next_due, 11000 + RETRY);
    CU_ASSERT_EQUAL(sup.last_contact, 10000); /* no answer from the database */
    CU_ASSERT_EQUAL(pop(NULL), -1);
}

/* A stop while holding queues on_stopped (SHUTDOWN) once; after it,
 * nothing starts whatever answers. */
static void test_shutdown_absorbs(void)
{
    int64_t v = 0;

    fresh();
    step(EV_TAKEN, 10000, 7, NULL);
    pop(NULL);
    step(EV_SHUTDOWN, 0, 0, NULL);
    CU_ASSERT_EQUAL(sup.state, SUP_STOPPED);
    CU_ASSERT_EQUAL(pop(&v), CB_STOPPED);
    CU_ASSERT_EQUAL(v, SQLEASE_STOP_SHUTDOWN);
    CU_ASSERT_EQUAL(sup.losses, 0);
    step(EV_TAKEN, 10100, 8, NULL);
    step(EV_LOST, 10100, 0, NULL);
    fake_now = 20000;
    step(EV_DEADLINE, 0, 0, NULL);
    CU_ASSERT_EQUAL(sup.state, SUP_STOPPED);
    CU_ASSERT_EQUAL(sup.running, 0);
    CU_ASSERT_EQUAL(pop(NULL), -1);
}

/* on_holder: once per change of holder or token, "free" for an expired
 * hold, never while holding. */
static void test_holder_reported_on_change(void)
{
    sqlease_lease_info row;
    int64_t v = 0;

    fresh();
    sup.on_holder = on_holder;
    memset(&row, 0, sizeof row);
    strcpy(row.owner, "other");
    row.token = 5;
    row.held = 1;
    row.db_now_ms = 1700000000000LL;
    step(EV_NOT_HELD, 10000, 0, &row);
    CU_ASSERT_EQUAL(pop(&v), CB_HOLDER);
    CU_ASSERT_EQUAL(v, 5);
    step(EV_NOT_HELD, 10500, 0, &row); /* the same: nothing */
    CU_ASSERT_EQUAL(pop(NULL), -1);
    row.held = 0;                      /* expired: reported as free */
    step(EV_NOT_HELD, 11000, 0, &row);
    CU_ASSERT_EQUAL(sup.node.cbq_head != NULL &&
                    ((sup_cb *)(void *)sup.node.cbq_head)->owner[0] == '\0', 1);
    CU_ASSERT_EQUAL(pop(NULL), CB_HOLDER);
    step(EV_TAKEN, 11500, 6, NULL);
    CU_ASSERT_EQUAL(pop(NULL), CB_STARTED);
    row.held = 1;
    step(EV_NOT_HELD, 11600, 0, &row); /* a holder's read: the hold is gone */
    CU_ASSERT_EQUAL(pop(NULL), CB_STOPPED);
    /* After holding, the first read is reported whatever it shows. */
    CU_ASSERT_EQUAL(pop(&v), CB_HOLDER);
    CU_ASSERT_EQUAL(v, 5);
    CU_ASSERT_EQUAL(pop(NULL), -1);
    /* Holding again: a failed statement that carries a read reports
     * nothing. */
    step(EV_TAKEN, 11700, 7, NULL);
    CU_ASSERT_EQUAL(pop(NULL), CB_STARTED);
    row.token = 99;
    step(EV_FAILED, 11800, SQLEASE_ETIMEOUT, &row);
    CU_ASSERT_EQUAL(pop(NULL), -1);
    CU_ASSERT_EQUAL(holder_calls, 0); /* queued, never called here */
}

/*
 * Any sequence of events, on a clock that only goes forward: callbacks
 * queue as started, stopped, started, ... (never two starts or two stops
 * in a row), every start has a token no earlier start had, and the work
 * is never running past its deadline once the watchdog's event has come.
 */
static void test_random_sequences_alternate(void)
{
    unsigned seed = 12345;
    int round;

    for (round = 0; round < 200; round++) {
        int running = 0, i;
        int64_t last_token = 0, token = 100;
        fresh();
        for (i = 0; i < 300; i++) {
            int64_t v = 0, proof;
            int k;
            seed = seed * 1103515245u + 12345u;
            fake_now += (seed >> 16) % 700;
            proof = fake_now - (int64_t)((seed >> 8) % 2500);
            switch ((seed >> 4) % 8) {
            case 0: token += (seed >> 12) % 2; step(EV_TAKEN, proof, token, NULL); break;
            case 1: step(EV_RENEWED, proof, sup.token, NULL); break;
            case 2: step(EV_LOST, proof, 0, NULL); break;
            case 3: step(EV_NOT_HELD, proof, 0, NULL); break;
            case 4: step(EV_FAILED, proof, SQLEASE_ETIMEOUT, NULL); break;
            case 5: step(EV_DEADLINE, 0, 0, NULL); break;
            case 6: step(EV_RELEASED, proof, 0, NULL); break;
            default: if ((seed >> 20) % 40 == 0) step(EV_SHUTDOWN, 0, 0, NULL); break;
            }
            while ((k = pop(&v)) != -1) {
                if (k == CB_STARTED) {
                    CU_ASSERT_EQUAL(running, 0);
                    CU_ASSERT(v > last_token);
                    last_token = v;
                    running = 1;
                } else if (k == CB_STOPPED) {
                    CU_ASSERT_EQUAL(running, 1);
                    running = 0;
                }
            }
            CU_ASSERT_EQUAL(running, sup.running);
            if (sup.running)
                CU_ASSERT(sup.state == SUP_HOLDER);
        }
    }
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("states", NULL, NULL);

    CU_add_test(s, "a take starts the work, proven from its send time",
                test_take_starts_from_send_time);
    CU_add_test(s, "a renew moves the deadline forward only",
                test_renew_moves_deadline_forward_only);
    CU_add_test(s, "the deadline stops the work; the hold goes stale",
                test_deadline_stops_and_goes_stale);
    CU_add_test(s, "a token is never started twice", test_token_never_started_twice);
    CU_add_test(s, "an answer after its deadline starts nothing",
                test_late_answer_starts_nothing);
    CU_add_test(s, "an error is not a loss", test_error_is_not_loss);
    CU_add_test(s, "after a stop nothing starts", test_shutdown_absorbs);
    CU_add_test(s, "on_holder once per change, never while holding",
                test_holder_reported_on_change);
    CU_add_test(s, "random event sequences: starts and stops alternate",
                test_random_sequences_alternate);
}

int main(void)
{
    int rc;

    if (sqle_mutex_init(&eng.m) != 0 || sqle_cond_init(&eng.run_cv) != 0 ||
        sqle_cond_init(&eng.wd_cv) != 0 || sqle_cond_init(&eng.cb_cv) != 0 ||
        sqle_cond_init(&eng.change_cv) != 0)
        return 2;
    eng.now_ms = fake_clock;
    rc = tu_main(add);
    fresh();
    return rc;
}
