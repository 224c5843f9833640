/*
 * child.c -- starting, watching and stopping CMD (see child.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "child.h"
#include "cli.h"

long cli_child_pid(const sqle_child *c)
{
    return sqle_child_pid(c);
}

const char *cli_child_fence_sql(sqlease_supervisor *sup, int64_t token, char *buf, size_t cap)
{
    sqlease_fence f;
    sqlease_error err;
    int st;

    if (sup == NULL)
        return NULL;
    memset(&err, 0, sizeof err);
    SQLEASE_FENCE_INIT(&f);
    st = sqlease_supervisor_fence(sup, &f, &err);
    if (st == SQLEASE_OK && f.token != token)
        st = SQLEASE_NOT_HELD;
    if (st == SQLEASE_OK)
        st = sqlease_fence_literal(&f, buf, cap, &err);
    if (st != SQLEASE_OK) {
        cli_log(SQLEASE_LOG_WARN, "SQLEASE_FENCE_SQL is not set for CMD: %s",
                err.message[0] != '\0' ? err.message : "the hold changed");
        return NULL;
    }
    return buf;
}

int cli_child_start(sqle_child *c, char *const *argv, const char *name,
                    const char *owner, int64_t token, const char *fence_sql,
                    const char *const *extra_env, size_t nextra, int foreground,
                    sqle_child_gate_fn gate, void *gate_ud, char *err, size_t cap)
{
    char env_name[sizeof "SQLEASE_NAME=" + SQLEASE_MAX_NAME];
    char env_owner[sizeof "SQLEASE_OWNER=" + SQLEASE_MAX_OWNER];
    char env_token[sizeof "SQLEASE_TOKEN=" + 24];
    char env_fence[sizeof "SQLEASE_FENCE_SQL=" + SQLEASE_FENCE_LITERAL_MAX];
    const char *env[5 + 8];
    size_t n = 3, k;

    snprintf(env_name, sizeof env_name, "SQLEASE_NAME=%s", name);
    snprintf(env_owner, sizeof env_owner, "SQLEASE_OWNER=%s", owner);
    snprintf(env_token, sizeof env_token, "SQLEASE_TOKEN=%" PRId64, token);
    env[0] = env_name;
    env[1] = env_owner;
    env[2] = env_token;
    /* Without a fence the variable is removed, so that CMD never sees one
     * this process inherited from a lease of its own parent's. */
    if (fence_sql != NULL)
        snprintf(env_fence, sizeof env_fence, "SQLEASE_FENCE_SQL=%s", fence_sql);
    else
        snprintf(env_fence, sizeof env_fence, "SQLEASE_FENCE_SQL");
    env[n++] = env_fence;
    /* The connection string may hold a password: CMD does not get it.
     * (SQLEASE_DSN_FILE, a path, it keeps: the file is the user's.) */
    env[n++] = "SQLEASE_DSN";
    for (k = 0; k < nextra && k < 8; k++)
        env[n++] = extra_env[k];
    return sqle_child_spawn_gated(c, argv, env, n, foreground ? SQLEASE_CHILD_FOREGROUND : 0,
                                  gate, gate_ud, err, cap);
}

/*
 * CMD's own children live in its process group and may outlive it (a
 * daemon it forked, a pipeline member that ignores SIGTERM).  They are
 * still doing CMD's work, so they must be gone before the lease is
 * released or another CMD started: SIGTERM the group, give it the grace,
 * then SIGKILL it.
 */
static void sweep_group(sqle_child *c, int64_t grace_ms)
{
    int64_t until;

    if (!sqle_child_group_alive(c))
        return;
    sqle_child_terminate(c);
    cli_log(SQLEASE_LOG_WARN, "CMD (pid %ld) left processes in its group; sent them SIGTERM",
            cli_child_pid(c));
    until = sqle_mono_ms() + (grace_ms > 0 ? grace_ms : 0);
    while (sqle_child_group_alive(c) && sqle_mono_ms() < until)
        sqle_sleep_ms(10);
    if (sqle_child_group_alive(c))
        sqle_child_kill(c);
}

int cli_child_poll(sqle_child *c, int64_t grace_ms, int *code)
{
    int r = sqle_child_wait(c, 0, code);

    if (r == 1) {
        sweep_group(c, grace_ms);
        sqle_child_close(c);
    }
    return r;
}

int64_t cli_child_term(sqle_child *c)
{
    int64_t termed = sqle_mono_ms();

    sqle_child_terminate(c);
    return termed;
}

int cli_child_stop(sqle_child *c, int64_t grace_ms)
{
    return cli_child_finish(c, cli_child_term(c), grace_ms);
}

/* Signals before the lines that report them, here too. */
int cli_child_finish(sqle_child *c, int64_t termed, int64_t grace_ms)
{
    int64_t left = termed + grace_ms - sqle_mono_ms();
    int code = -1;
    int r;

    r = sqle_child_wait(c, left > 0 ? left : 0, &code);
    if (r == 0) {
        sqle_child_kill(c);
        cli_log(SQLEASE_LOG_WARN, "CMD (pid %ld) still running %" PRId64
                " ms after SIGTERM; sent SIGKILL", cli_child_pid(c), grace_ms);
        /* A wait interrupted by one of our signals returns 0: wait on. */
        do
            r = sqle_child_wait(c, -1, &code);
        while (r == 0);
    }
    /* The group had its SIGTERM with the leader's: what is left gets only
     * the rest of the same grace, so the whole stop fits in it. */
    sweep_group(c, termed + grace_ms - sqle_mono_ms());
    sqle_child_close(c);
    return r == 1 ? code : -1;
}
