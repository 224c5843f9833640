/*
 * failover.c -- the `failover` scenario: a PostgreSQL primary dies and its
 * streaming standby is promoted (ci/pg-replica.sh), while the fleet
 * follows through a connection string that lists both servers and asks
 * for the read-write one.
 *
 * The standby's WAL receiver is frozen first, and the holder sent SIGTERM,
 * so that a handover (a release and a take with the next token) happens
 * while the standby receives nothing; then the primary is killed
 * (immediate stop: a crash), the receiver killed (what the primary had
 * sent and the receiver not yet read dies with its socket: the standby
 * has exactly what it had confirmed), the standby promoted.
 *
 *  - synchronous standby: no commit is acknowledged while the standby
 *    cannot confirm it, so the handover waits (its statements time out)
 *    and nothing a holder was told is lost: no overlap, tokens only grow;
 *  - asynchronous standby: the primary acknowledges the release and the
 *    take alone, the promoted standby never had them, and the token of
 *    that take is given out a second time, to another holder.  The
 *    verdict reports it: that is what this run demonstrates.
 *
 * The figure next.failover is the time from the promotion to the next
 * holder's CMD start.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "harness.h"

static int pg_ctl(const char *what, const char *arg)
{
    char cmd[1200];

    snprintf(cmd, sizeof cmd, "%s %s", CH.pg_ctl, arg);
    return run_cmd(what, cmd);
}

static int64_t first_start_after(int64_t t, long not_sup)
{
    for (size_t i = 0; i < CH.obs.ncmds; i++)
        if (CH.obs.cmds[i].start >= t && CH.obs.cmds[i].sup != not_sup)
            return CH.obs.cmds[i].start;
    return -1;
}

void scenario_failover(void)
{
    const char *mode = getenv("SQLEASE_PG_HA_MODE");
    long h = settle(CH.t0, 1);
    ch_cmd c;
    char d[300];
    int64_t t, until, promoted, next = -1, bound;
    size_t fi;
    int stalled;

    if (h < 0) {
        ch_violation(&CH.obs, "failover: no single holder after the start");
        return;
    }
    c = CH.obs.cmds[h];
    describe(d, sizeof d, h);
    snprintf(d + strlen(d), sizeof d - strlen(d), " (%s standby: receiver frozen, holder "
             "SIGTERMed, primary killed, standby promoted)", mode != NULL ? mode : "?");
    fault_begin(F_FAILOVER, c.inst, d);
    fi = CH.obs.nfaults - 1;
    stalled = pg_ctl("freeze the standby's WAL receiver", "stall-standby") == 0;
    if (!stalled)
        ch_violation(&CH.obs, "failover: could not freeze the standby's WAL receiver");
    /* A handover the standby does not see: the holder releases, another
     * instance takes with the next token. */
    t = ch_mono_ms();
    CH.inst[c.inst].expect_exit = 1;
    kill(CH.inst[c.inst].pid, SIGTERM);
    (void)reap_instance(c.inst, 10000);
    until = t + CH.ttl + CH.retry + 2000;
    while (ch_mono_ms() < until && !ch_interrupted && first_start_after(t, c.sup) < 0)
        sleep_mon(10);
    if (first_start_after(t, c.sup) >= 0) {
        say("failover: instance took over with the standby cut off: the primary acknowledged "
            "a take the standby does not have");
        sleep_mon(1000); /* its CMD writes, acknowledged by the primary alone */
    } else {
        say("failover: no take was acknowledged while the standby could not confirm it");
    }
    restart_instance(c.inst);
    if (pg_ctl("kill the primary", "kill-primary") != 0)
        ch_violation(&CH.obs, "failover: could not kill the primary");
    CH.db_down = 1;
    if (pg_ctl("drop what the standby had not read", "drop-received") != 0)
        (void)pg_ctl("resume the standby", "resume-standby");
    if (pg_ctl("promote the standby", "promote") != 0) {
        ch_violation(&CH.obs, "failover: the standby was not promoted");
        fault_heal(fi);
        return;
    }
    CH.db_down = 0;
    promoted = ch_mono_ms();
    fault_heal(fi);
    /* The row on the promoted standby may still show a hold until its
     * expiry (a ttl), a follower polls every retry, and its connect must
     * first give up on the dead primary: a login timeout. */
    bound = CH.ttl + CH.retry + CH.qtimeout + CH.login_timeout + 1000;
    until = promoted + bound + 5000;
    while (ch_mono_ms() < until && !ch_interrupted) {
        monitor();
        next = first_start_after(promoted, -1);
        if (next >= 0)
            break;
        ch_nap_ms(10);
    }
    /* A holder that kept running through the failover (its renews reach
     * the new primary) is a holder too. */
    if (next < 0 && open_cmds() == 1)
        next = promoted;
    ch_figure_note(&CH.obs, "next.failover", (next >= 0 ? next : ch_mono_ms()) - promoted, bound,
                   next < 0, "failover: no holder within ttl + retry + query timeout + login "
                   "timeout + 1 s of the promotion");
    if (next >= 0)
        say("failover: a holder %lld ms after the promotion", (long long)(next - promoted));
    (void)settle(promoted, 1);
}
