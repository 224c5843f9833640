/*
 * test_sched_reload.c -- the scheduler's job list replaced (SIGHUP's
 * sqle_sched_reload) while its thread claims fires: the thread lets its
 * lock go around every statement, and a reload frees the old list then,
 * so nothing may use a job by pointer across a statement.  A job every
 * second is claimed and started while another thread replaces the list
 * as fast as it can, alternating one job and two; each fire must start
 * once, with the userdata of its own job.  The use of a freed job shows
 * under the sanitizer build (`scons SANITIZE=address test
 * TESTS=test_sched_reload`); the plain build checks the rest.  Runs on
 * whatever $SQLEASE_TEST_DSN names (SQLite by default).
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fire.h"
#include "internal.h"
#include "platform.h"
#include "scheduler.h"

#include "testutil.h"

#define MAX_FIRES 256

static sqlease_db *db;

/* What on_fire saw (under the scheduler's lock, and q.m). */
typedef struct fired {
    sqle_mutex m;
    uint64_t ids[MAX_FIRES];
    char job[MAX_FIRES][SQLEASE_MAX_JOB + 1];
    int64_t at[MAX_FIRES];
    size_t n, done;
    int wrong_userdata;
} fired;

/* Each job's userdata is its own name, so that a fire started with
 * another job's (or a freed list's) shows. */
static void on_fire(void *ud, const sqle_fire *f)
{
    fired *q = ud;

    sqle_mutex_lock(&q->m);
    if (f->job_userdata == NULL || strcmp((const char *)f->job_userdata, f->job) != 0)
        q->wrong_userdata++;
    if (q->n < MAX_FIRES) {
        q->ids[q->n] = f->id;
        snprintf(q->job[q->n], sizeof q->job[q->n], "%s", f->job);
        q->at[q->n] = f->fire_at_ms;
        q->n++;
    }
    sqle_mutex_unlock(&q->m);
}

/* Report the fires that started as done (never from on_fire). */
static void finish_fires(sqle_sched *s, fired *q)
{
    for (;;) {
        uint64_t id;
        sqlease_error err;

        sqle_mutex_lock(&q->m);
        if (q->done == q->n) {
            sqle_mutex_unlock(&q->m);
            return;
        }
        id = q->ids[q->done++];
        sqle_mutex_unlock(&q->m);
        CU_ASSERT_EQUAL(sqle_sched_done(s, id, 0, 0, &err), SQLEASE_OK);
    }
}

static void test_reload_while_claiming(void)
{
    static char tick[] = "tick", tock[] = "tock";
    sqle_job one[1], two[2];
    sqle_sched_callbacks cb;
    sqle_sched_stats st;
    sqlease_options o;
    sqlease_error err;
    sqle_sched *s = NULL;
    char lease[64], fire[64];
    fired q;
    unsigned reloads = 0;
    int64_t until;

    memset(&q, 0, sizeof q);
    CU_ASSERT_EQUAL_FATAL(sqle_mutex_init(&q.m), 0);
    snprintf(lease, sizeof lease, "%s", tu_table());
    snprintf(fire, sizeof fire, "%s", tu_table());
    CU_ASSERT_EQUAL_FATAL(tu_migrate(db, lease, "reload"), SQLEASE_OK);
    CU_ASSERT_EQUAL_FATAL(sqle_fire_migrate(db, fire, &err), SQLEASE_OK);
    memset(one, 0, sizeof one);
    memset(two, 0, sizeof two);
    one[0].name = two[0].name = tick;
    one[0].schedule = two[0].schedule = "* * * * * *";
    one[0].userdata = two[0].userdata = tick;
    one[0].overlap = two[0].overlap = SQLE_OVERLAP_ALLOW;
    two[1] = two[0];
    two[1].name = tock;
    two[1].userdata = tock;
    memset(&cb, 0, sizeof cb);
    cb.userdata = &q;
    cb.on_fire = on_fire;
    tu_options(&o, lease, "reload", "reloader", 3000, 500, 1500, 250);
    CU_ASSERT_EQUAL_FATAL(sqle_sched_start(&s, db, &o, fire, "h", one, 1, 0, &cb, &err),
                          SQLEASE_OK);
    /* Four seconds of reloads back to back: fires come every second. */
    until = sqle_mono_ms() + 4000;
    while (sqle_mono_ms() < until) {
        int even = (reloads++ & 1u) == 0;
        CU_ASSERT_EQUAL(sqle_sched_reload(s, even ? two : one, even ? 2 : 1, &err), SQLEASE_OK);
        finish_fires(s, &q);
        sqle_sleep_ms(1);
    }
    finish_fires(s, &q);
    sqle_sched_stats_get(s, &st);
    CU_ASSERT_EQUAL(sqle_sched_stop(s, &err), SQLEASE_OK);
    finish_fires(s, &q);
    sqle_sched_free(s);

    fprintf(stderr, "\n  %u reloads, %zu fires started, %llu claimed\n", reloads, q.n,
            (unsigned long long)st.claimed);
    CU_ASSERT(reloads > 100);
    CU_ASSERT(q.n >= 2);
    CU_ASSERT_EQUAL(q.wrong_userdata, 0);
    /* Each (job, fire) once. */
    for (size_t i = 0; i < q.n; i++)
        for (size_t k = i + 1; k < q.n; k++)
            CU_ASSERT(!(q.at[i] == q.at[k] && strcmp(q.job[i], q.job[k]) == 0));
    sqle_mutex_destroy(&q.m);
    tu_drop(db, fire);
    tu_drop(db, lease);
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("scheduler: reload while claiming", NULL, NULL);
    CU_add_test(s, "the job list replaced back to back while fires are claimed",
                test_reload_while_claiming);
}

int main(void)
{
    int rc;

    db = tu_open();
    if (db == NULL)
        return 2;
    rc = tu_main(add);
    sqlease_db_close(db);
    tu_cleanup();
    return rc;
}
