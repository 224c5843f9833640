/*
 * group.c -- many leases shared fairly by the workers that join a group
 * (sqlease_group_*, see sqlease.h "Group").
 *
 * Built on the supervisor alone: a worker runs one supervisor per lease
 * it holds or is trying to take, plus one for its presence lease, all on
 * the caller's sqlease_db, so they share its runner and their renews go
 * in the same batches.  A balancing thread reads the table once per
 * retry (sqle_list_paged), counts the live presence rows of the
 * group and starts supervisors on free or expired rows while the worker
 * is below its share, or stops (gracefully: on_stopped, then release)
 * those above it.  It never touches a live row of another worker: a lease
 * moves only by a release and a take, so no new overlap rule is needed
 * beyond the supervisor's own.
 *
 * The reads also watch: a row whose (owner, token, version) stays the
 * same from one read to the next is one its holder has stopped renewing,
 * and a ttl after the read that first showed that version its holder's
 * work has stopped (the rule of a watching follower, lease_impl.h).  The
 * balancing thread wakes for that moment, counts the row as free, and
 * starts its supervisor with the watch already run (seeded), which then
 * takes it at its first read: a dead worker's leases move a ttl after
 * its last renew was seen, not a ttl after they expired on top of it.
 *
 * Why a read per retry and not per heartbeat: the watch can only start
 * from the first read that showed the holder's last renew, which comes up
 * to a read's period after it, so the period is what a dead worker's
 * leases wait beyond a ttl.  A read per heartbeat missed "a ttl and a
 * retry" by up to two thirds of a heartbeat.  The reads use pages of up
 * to GROUP_PAGE rows, so that they cost about the statements and rows
 * that pages of 100 once per heartbeat did (list.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "internal.h"
#include "lease.h"
#include "platform.h"

/* Rows per statement of the group's reads, at most: a read of a table
 * of N rows sends N / GROUP_PAGE + 1 statements and holds a page of about
 * 1.4 KB a row while it runs. */
#define GROUP_PAGE 500

/* Live workers whose owner ids a read keeps, to spread free rows. */
#define GROUP_OWNERS_MAX 256

/* A live presence row as the reads watch it (see on_row). */
typedef struct presence_seen {
    uint64_t name_hash;
    sqle_watch_seed seen;
} presence_seen;

/* One lease of the group. */
typedef struct group_slot {
    struct sqlease_group *g;
    char *name;
    /* Written by the balancing thread (and stop) under g->m; read under it. */
    sqlease_supervisor *sup;
    /* Filled by each read of the table, used by the balancing thread only. */
    int row_seen;     /* the read saw the row */
    int row_held;     /* some owner holds it, unexpired */
    int row_mine;     /* held under this worker's owner id */
    uint64_t row_owner;  /* owner_hash of the holder when row_held */
    int assigned;     /* this worker is to take it (see assign_free) */
    /* The row's state as the read that first showed it saw it (valid 0:
     * the last read did not see the row), for the watch. */
    sqle_watch_seed seen;
} group_slot;

struct sqlease_group {
    sqlease_db *db;
    sqlease_options opt;          /* table, timing, owner: strings below */
    char *table;
    char owner[SQLEASE_MAX_OWNER + 1];
    char *data;
    char presence_prefix[sizeof SQLEASE_GROUP_PRESENCE_PREFIX + SQLEASE_GROUP_MAX_NAME + 1];
    char presence_name[SQLEASE_MAX_NAME + 1];
    sqlease_group_callbacks cb;
    int slack;
    int64_t period_ms;            /* between reads: the retry */
    size_t page;                  /* rows per statement of a read */

    size_t n;
    group_slot *slots;
    group_slot **sorted;          /* by name (strcmp), to find a listed row */

    sqlease_supervisor *presence;

    sqle_mutex m;
    sqle_cond c;
    /* Held for a whole sqlease_group_stop, so that two threads stopping
     * the group at once join the balancing thread and free the presence
     * supervisor once (the second finds it done). */
    sqle_mutex stop_m;
    int stopping;
    int stopped;
    int thread_started;
    sqle_thread thread;
    uint64_t thread_id;

    /* Read by the balancing thread only. */
    uint64_t live_workers;        /* counted during a read */
    /* Owners of the live presence rows of the last read (at most
     * GROUP_OWNERS_MAX kept), for assign_free. */
    char (*owners)[SQLEASE_MAX_OWNER + 1];
    size_t nowners;
    /* The live presence rows of the last read and of this one (at most
     * GROUP_OWNERS_MAX each), so that a worker that stopped renewing its
     * presence stops counting a ttl after the read that first showed its
     * last renew, as its leases move. */
    presence_seen *pres_prev, *pres_cur;
    size_t npres_prev, npres_cur;
    int over_reads;               /* reads in a row that found us above target + slack */
    int64_t watch_due;            /* sqle_mono_ms at which the first watched row's
                                     watch ends, or 0: when to read again */
    int presence_lost;            /* the last read showed this worker's presence
                                     row held live by another owner */
    unsigned rng;

    sqlease_group_stats stats;    /* under m */
};

/* The group's per-lease callbacks wrap the user's, adding the name. */
static void slot_started(void *ud, int64_t token)
{
    group_slot *s = ud;
    if (s->g->cb.on_started)
        s->g->cb.on_started(s->g->cb.userdata, s->name, token);
}

static void slot_stopped(void *ud, int reason)
{
    group_slot *s = ud;
    if (s->g->cb.on_stopped)
        s->g->cb.on_stopped(s->g->cb.userdata, s->name, reason);
}

/* bsearch/qsort comparators over the sorted slot index, so that each
 * listed row finds its slot in O(log N). */
static int slot_cmp(const void *a, const void *b)
{
    return strcmp((*(group_slot *const *)a)->name, (*(group_slot *const *)b)->name);
}

static int key_cmp(const void *key, const void *b)
{
    return strcmp((const char *)key, (*(group_slot *const *)b)->name);
}

/* A group name is pasted into presence names: keep it to a plain,
 * portable alphabet so no dialect's collation can make two differ. */
static int valid_group_name(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > SQLEASE_GROUP_MAX_NAME)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.'))
            return 0;
    }
    return 1;
}

/* Options for one of the group's supervisors: the caller's, with the
 * name, owner and callbacks of the group. */
static void slot_options(sqlease_group *g, sqlease_options *o, const char *name, void *ud,
                         int with_callbacks)
{
    *o = g->opt;
    o->name = name;
    o->owner = g->owner;
    o->on_started = with_callbacks ? slot_started : NULL;
    o->on_stopped = with_callbacks ? slot_stopped : NULL;
    o->on_holder = NULL;
    o->userdata = ud;
}

/* Whether a supervisor's work runs now (sends nothing). */
static int sup_holding(sqlease_supervisor *s)
{
    sqlease_state st;
    if (!s || sqlease_supervisor_state(s, &st) != SQLEASE_OK)
        return 0;
    return st.holding;
}

/* An owner id's hash, to match a row's holder with a live worker. */
static uint64_t owner_hash(const char *owner)
{
    return sqle_hash_text(owner);
}

/* The score of rendezvous hashing for (worker, lease): every worker
 * computes the same one. */
static uint64_t pair_hash(uint64_t owner_h, const char *name)
{
    uint64_t h = owner_h;
    h = (h ^ 0xff) * 1099511628211ULL;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

/* Decide which free rows of the last read this worker takes, the same
 * way on every worker: each live worker is short of the target by
 * target - (rows the read shows it holding); the free rows, in name
 * order, go one by one to the live worker still short whose (worker,
 * name) score is highest.  Workers that read the same table agree, so
 * those below their share watch different rows instead of racing for
 * the same ones (a follower that loses the race for a row whose holder
 * died has watched it for a ttl for nothing), and their deficits are
 * filled in one round. */
static void assign_free(sqlease_group *g, uint64_t target)
{
    size_t w = g->nowners;
    uint64_t *oh = calloc(w + 1, sizeof *oh);
    int64_t *need = calloc(w + 1, sizeof *need);
    uint64_t me = owner_hash(g->owner);
    int me_listed = 0;
    for (size_t i = 0; i < g->n; i++)
        g->slots[i].assigned = 0;
    if (!oh || !need) {
        /* No memory for the plan: any free row will do. */
        for (size_t i = 0; i < g->n; i++)
            g->slots[i].assigned = g->slots[i].row_seen && !g->slots[i].row_held;
        free(oh);
        free(need);
        return;
    }
    for (size_t k = 0; k < w; k++) {
        oh[k] = owner_hash(g->owners[k]);
        me_listed |= oh[k] == me;
    }
    if (!me_listed)
        oh[w++] = me;
    for (size_t k = 0; k < w; k++)
        need[k] = (int64_t)target;
    for (size_t i = 0; i < g->n; i++) {
        group_slot *s = &g->slots[i];
        if (s->row_held)
            for (size_t k = 0; k < w; k++)
                if (oh[k] == s->row_owner) {
                    need[k]--;
                    break;
                }
    }
    for (size_t i = 0; i < g->n; i++) {
        group_slot *s = g->sorted[i];
        if (!s->row_seen || s->row_held)
            continue;
        size_t best = w;
        uint64_t best_score = 0;
        for (size_t k = 0; k < w; k++) {
            if (need[k] <= 0)
                continue;
            uint64_t sc = pair_hash(oh[k], s->name);
            if (best == w || sc > best_score) {
                best = k;
                best_score = sc;
            }
        }
        if (best == w)
            continue;
        need[best]--;
        s->assigned = oh[best] == me;
    }
    free(oh);
    free(need);
}

/*
 * Whether the last read showed a live worker other than this one holding
 * fewer than floor(N / W) of the group's leases.  The slack lets a worker
 * keep up to target + slack, which is what stops shares flapping; but
 * with N = 8, W = 3 and slack 1 two workers may settle at 4 each, which
 * is within the slack, and leave the third with none and no free row to
 * take.  A worker above target gives back down to target when someone is
 * starved like that, so the shares settle at 3/3/2.
 */
static int someone_starved(const sqlease_group *g, uint64_t w)
{
    uint64_t floor_share = g->n / w, me = owner_hash(g->owner);

    for (size_t k = 0; k < g->nowners; k++) {
        uint64_t oh = owner_hash(g->owners[k]), held = 0;
        if (oh == me)
            continue;
        for (size_t i = 0; i < g->n; i++)
            if (g->slots[i].row_held && g->slots[i].row_owner == oh)
                held++;
        if (held < floor_share)
            return 1;
    }
    return 0;
}

/*
 * Go on with the watch of a row (`seen`, valid 0 if the last read did not
 * show it) from this read's `info`, answered by `now`: a new (owner,
 * token, version) begins it again.  Returns 1 if another owner's row has
 * stayed the same for what a watching follower waits (watch_from in
 * lease.c: a ttl, or what was left of a minimum hold), so that its
 * holder's work has stopped; else 0, and g->watch_due learns when it
 * would.
 */
static int watch_row(sqlease_group *g, sqle_watch_seed *seen, const sqlease_lease_info *info,
                     int mine, int64_t now)
{
    uint64_t oh = owner_hash(info->owner);
    if (!seen->valid || seen->owner_hash != oh || seen->token != info->token ||
        seen->version != info->version) {
        seen->valid = 1;
        seen->owner_hash = oh;
        seen->token = info->token;
        seen->version = info->version;
        seen->expires_at_ms = info->expires_at_ms;
        seen->ttl_ms = info->ttl_ms;
        seen->db_now_ms = info->db_now_ms;
        seen->since = now;
    }
    if (info->has_nulls) {
        /* Never watched out: its supervisor repairs it first. */
        seen->valid = 0;
        return 0;
    }
    if (info->owner[0] == '\0' || mine)
        return 0;
    /* The holder's own ttl, as its take wrote it (lease.h). */
    int64_t wait = seen->ttl_ms > 0 ? seen->ttl_ms : g->opt.ttl_ms;
    if (seen->expires_at_ms - seen->db_now_ms > wait)
        wait = seen->expires_at_ms - seen->db_now_ms;
    int64_t due = seen->since + wait;
    if (now >= due)
        return 1;
    if (g->watch_due == 0 || due < g->watch_due)
        g->watch_due = due;
    return 0;
}

/* One row of the table read: count live presence rows of the group and
 * note the state of the group's own rows.  Each is dated when its page
 * is in hand, after the answer: a watch timed from it only errs long. */
static int on_row(void *ud, const char *name, const sqlease_lease_info *info)
{
    sqlease_group *g = ud;
    size_t pl = strlen(g->presence_prefix);
    int64_t now = sqle_mono_ms();
    int mine = info->owner[0] != '\0' && strcmp(info->owner, g->owner) == 0;
    if (strncmp(name, g->presence_prefix, pl) == 0) {
        if (strcmp(name, g->presence_name) == 0)
            g->presence_lost = info->held && !mine;
        if (!info->held)
            return 0;
        if (g->npres_cur < GROUP_OWNERS_MAX) {
            /* Beyond that many, a live row counts without a watch. */
            presence_seen *p = &g->pres_cur[g->npres_cur++];
            memset(p, 0, sizeof *p);
            p->name_hash = sqle_hash_text(name);
            for (size_t k = 0; k < g->npres_prev; k++)
                if (g->pres_prev[k].name_hash == p->name_hash) {
                    p->seen = g->pres_prev[k].seen;
                    break;
                }
            if (watch_row(g, &p->seen, info, mine, now))
                return 0; /* stopped renewing: no longer counted */
        }
        g->live_workers++;
        if (g->nowners < GROUP_OWNERS_MAX)
            snprintf(g->owners[g->nowners++], sizeof g->owners[0], "%s", info->owner);
        return 0;
    }
    group_slot **hit = bsearch(name, g->sorted, g->n, sizeof *g->sorted, key_cmp);
    if (hit) {
        group_slot *s = *hit;
        uint64_t oh = owner_hash(info->owner);
        int watched_out = watch_row(g, &s->seen, info, mine, now);
        s->row_seen = 1;
        s->row_held = info->held && !watched_out;
        s->row_mine = info->held && mine;
        s->row_owner = s->row_held ? oh : 0;
    }
    return 0;
}

/* Stop and free one slot's supervisor (a graceful release when it
 * holds).  The pointer is cleared under the lock first, so that
 * sqlease_group_held never sees a freed supervisor; the stop itself (and
 * its on_stopped) runs without the lock. */
static int slot_stop(sqlease_group *g, group_slot *s, sqlease_error *err)
{
    sqle_mutex_lock(&g->m);
    sqlease_supervisor *sup = s->sup;
    s->sup = NULL;
    sqle_mutex_unlock(&g->m);
    if (!sup)
        return SQLEASE_OK;
    int rc = sqlease_supervisor_stop(sup, err);
    sqlease_supervisor_free(sup);
    return rc;
}

/* A small xorshift for where to start looking for free rows: workers
 * that look at once should not all race for the same first row. */
static unsigned next_rand(sqlease_group *g)
{
    unsigned x = g->rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    g->rng = x ? x : 0x9e3779b9u;
    return g->rng;
}

/* A warning through the options' log sink, else the handle's (as a
 * supervisor logs). */
static void group_warn(sqlease_group *g, const char *what, const char *name, const char *why)
{
    if (g->opt.log)
        sqle_log(g->opt.log, g->opt.log_userdata, g->opt.log_level, SQLEASE_LOG_WARN,
                 "group %s: %s%s: %s", g->presence_prefix, what, name, why);
    else
        sqle_log(g->db->log, g->db->log_userdata, g->db->log_level, SQLEASE_LOG_WARN,
                 "group %s: %s%s: %s", g->presence_prefix, what, name, why);
}

static int is_stopping(sqlease_group *g)
{
    sqle_mutex_lock(&g->m);
    int st = g->stopping;
    sqle_mutex_unlock(&g->m);
    return st;
}

/*
 * Start the supervisors of up to `want` rows the plan gave this worker,
 * from slot `start` on, in one batch (sqle_supervisor_start_seeded: one
 * read and one take of the free rows per chunk), each watch begun from
 * the group's reads.  Returns how many started.
 */
static uint64_t start_slots(sqlease_group *g, size_t start, size_t want)
{
    size_t m = 0, cap = want < g->n ? want : g->n;
    uint64_t started = 0;
    if (cap == 0 || is_stopping(g))
        return 0;
    group_slot **pick = calloc(cap, sizeof *pick);
    sqlease_options *ov = calloc(cap, sizeof *ov);
    const sqlease_options **ops = calloc(cap, sizeof *ops);
    sqle_watch_seed *seeds = calloc(cap, sizeof *seeds);
    sqlease_supervisor **sups = calloc(cap, sizeof *sups);
    int *rcs = calloc(cap, sizeof *rcs);
    if (!pick || !ov || !ops || !seeds || !sups || !rcs) {
        group_warn(g, "starting leases", "", "out of memory");
        goto done;
    }
    for (size_t k = 0; k < g->n && m < cap; k++) {
        group_slot *s = &g->slots[(start + k) % g->n];
        if (s->sup || !s->row_seen || s->row_held || !s->assigned)
            continue;
        pick[m] = s;
        slot_options(g, &ov[m], s->name, s, 1);
        ops[m] = &ov[m];
        seeds[m] = s->seen;
        m++;
    }
    if (m == 0)
        goto done;
    sqlease_error se;
    sqle_supervisor_start_seeded(sups, m, g->db, ops, seeds, rcs, &se);
    for (size_t k = 0; k < m; k++) {
        if (sups[k] == NULL) {
            group_warn(g, "starting lease ", pick[k]->name, sqlease_strerror(rcs[k]));
            continue;
        }
        sqle_mutex_lock(&g->m);
        pick[k]->sup = sups[k];
        sqle_mutex_unlock(&g->m);
        started++;
    }
done:
    free(pick);
    free(ov);
    free(ops);
    free(seeds);
    free(sups);
    free(rcs);
    return started;
}

/* A new random presence name for this worker, under the group's prefix;
 * the rest of the random bytes seed `rng` when asked.  -1 if the
 * platform gave no random bytes. */
static int fresh_presence_name(sqlease_group *g, unsigned *rng)
{
    unsigned char u[16];

    if (sqle_uuid_random(u) != 0)
        return -1;
    snprintf(g->presence_name, sizeof g->presence_name,
             "%s%02x%02x%02x%02x%02x%02x%02x%02x", g->presence_prefix, u[0], u[1], u[2], u[3],
             u[4], u[5], u[6], u[7]);
    if (rng != NULL)
        *rng = ((unsigned)u[8] << 24) | ((unsigned)u[9] << 16) | ((unsigned)u[10] << 8) | u[11];
    return 0;
}

/* Seed the row of g->presence_name and start its supervisor. */
static int seed_presence(sqlease_group *g, sqlease_error *err)
{
    sqlease_options po;
    const char *pn = g->presence_name;
    int rc = sqlease_migrate(g->db, g->table, &pn, 1, err);

    if (rc != SQLEASE_OK)
        return rc;
    slot_options(g, &po, g->presence_name, NULL, 0);
    return sqlease_supervisor_start(&g->presence, g->db, &po, err);
}

/*
 * This worker's presence row is held, live, by another worker, and its
 * own presence supervisor holds nothing: a worker that started while
 * this one's presence hold had lapsed (its supervisor gave a hold up
 * after a slow renew, leaving the row free for a moment) took the row as
 * one a stopped worker left behind.  Following that row would leave this
 * live worker uncounted by every other worker for as long as the other
 * one lives, so that their shares add up to every lease and this one
 * gets none.  It moves to a fresh row of its own instead, as a start
 * does; a failure is tried again at the next round.
 */
static void move_presence(sqlease_group *g)
{
    sqlease_error e;

    if (g->presence != NULL) {
        (void)sqlease_supervisor_stop(g->presence, NULL);
        sqlease_supervisor_free(g->presence);
        g->presence = NULL;
    }
    if (fresh_presence_name(g, NULL) != 0) {
        group_warn(g, "moving its presence row", "", "no random bytes for a new name");
        return;
    }
    group_warn(g, "its presence row is held by another worker; moving to ", g->presence_name,
               "a new row");
    if (seed_presence(g, &e) != SQLEASE_OK) {
        g->presence = NULL;
        group_warn(g, "moving its presence row to ", g->presence_name, e.message);
    }
}

/* One balancing round: read, count, then take or give back.  The
 * decisions use only this worker's own supervisors and the read, so a
 * round that fails to read changes nothing. */
static void balance_once(sqlease_group *g)
{
    for (size_t i = 0; i < g->n; i++)
        g->slots[i].row_seen = g->slots[i].row_held = g->slots[i].row_mine = 0;
    g->live_workers = 0;
    g->nowners = 0;
    g->watch_due = 0;
    g->npres_cur = 0;
    g->presence_lost = 0;
    sqlease_error e;
    int rc = sqle_list_paged(g->db, g->table, g->page, on_row, g, &e);
    {
        presence_seen *t = g->pres_prev;
        g->pres_prev = g->pres_cur;
        g->pres_cur = t;
        g->npres_prev = rc == SQLEASE_OK ? g->npres_cur : 0;
    }
    sqle_mutex_lock(&g->m);
    g->stats.reads++;
    sqle_mutex_unlock(&g->m);
    /* A watch goes on only from one read to the next that saw the row. */
    for (size_t i = 0; i < g->n; i++)
        if (rc != SQLEASE_OK || !g->slots[i].row_seen)
            g->slots[i].seen.valid = 0;
    if (rc != SQLEASE_OK) {
        g->watch_due = 0;
        group_warn(g, "reading the table failed, shares unchanged", "", e.message);
        return;
    }
    if ((g->presence_lost && !sup_holding(g->presence)) || g->presence == NULL)
        move_presence(g);
    uint64_t w = g->live_workers;
    if (!sup_holding(g->presence) || SQLE_PLANTED(group_counts_itself_twice))
        w++;  /* this worker is alive even while its presence is not proven */
    if (w == 0)
        w = 1;
    uint64_t target = (g->n + w - 1) / w;

    size_t mine = 0, pending = 0;
    for (size_t i = 0; i < g->n && !is_stopping(g); i++) {
        group_slot *s = &g->slots[i];
        if (!s->sup)
            continue;
        if (sup_holding(s->sup)) {
            mine++;
        } else if (s->row_held && !s->row_mine) {
            /* Another worker holds it live: following it would only
             * hold a share we cannot have. */
            slot_stop(g, s, NULL);
        } else {
            pending++;
        }
    }

    uint64_t gives = 0, takes = 0;
    if (mine > target + (uint64_t)g->slack ||
        (mine > target && !SQLE_PLANTED(group_slack_starves) && someone_starved(g, w))) {
        g->over_reads++;
        if (g->over_reads >= 2 && !SQLE_PLANTED(group_keeps_its_excess)) {
            /* Give back the excess: candidates first, then held leases,
             * from a random place so that shares move evenly. */
            size_t excess = mine - target;
            size_t start = g->n ? next_rand(g) % g->n : 0;
            for (size_t k = 0; k < g->n && !is_stopping(g); k++) {
                group_slot *s = &g->slots[(start + k) % g->n];
                if (!s->sup)
                    continue;
                if (!sup_holding(s->sup)) {
                    slot_stop(g, s, NULL);
                } else if (excess > 0) {
                    slot_stop(g, s, NULL);
                    excess--;
                    gives++;
                }
            }
            g->over_reads = 0;
        }
    } else {
        g->over_reads = 0;
        size_t want = mine + pending < target ? (size_t)(target - mine - pending) : 0;
        size_t start = g->n ? next_rand(g) % g->n : 0;
        /* The free rows the plan gives this worker (assign_free). */
        assign_free(g, target);
        takes = start_slots(g, start, want);
    }

    size_t held = 0;
    sqle_mutex_lock(&g->m);
    for (size_t i = 0; i < g->n; i++)
        if (g->slots[i].sup && sup_holding(g->slots[i].sup))
            held++;
    g->stats.workers = w;
    g->stats.target = target;
    g->stats.held = held;
    g->stats.takes += takes;
    g->stats.gives += gives;
    sqle_mutex_unlock(&g->m);
}

/* The balancing thread: a round at once, then one per retry, until
 * sqlease_group_stop. */
static void balance_thread(void *arg)
{
    sqlease_group *g = arg;
    sqle_mutex_lock(&g->m);
    g->thread_id = sqle_thread_self();
    sqle_mutex_unlock(&g->m);
    for (;;) {
        if (is_stopping(g))
            break;
        int64_t next = sqle_mono_ms() + g->period_ms;
        balance_once(g);
        /* Read again when a watch ends before the next round: the
         * row then moves at once (a little after, so that the read is
         * dated past it). */
        if (g->watch_due != 0 && g->watch_due + 5 < next)
            next = g->watch_due + 5;
        sqle_mutex_lock(&g->m);
        while (!g->stopping && sqle_mono_ms() < next)
            sqle_cond_wait_until(&g->c, &g->m, next);
        int st = g->stopping;
        sqle_mutex_unlock(&g->m);
        if (st)
            break;
    }
}

/* A presence row of this group that a worker left free when it stopped,
 * found by the read at start: one of them at random (reservoir
 * sampling), so that workers starting at once try different rows. */
typedef struct free_presence {
    sqlease_group *g;
    char name[SQLEASE_MAX_NAME + 1];
    size_t seen;
} free_presence;

static int on_free_presence(void *ud, const char *name, const sqlease_lease_info *info)
{
    free_presence *f = ud;

    if (strncmp(name, f->g->presence_prefix, strlen(f->g->presence_prefix)) != 0 ||
        info->owner[0] != '\0')
        return 0;
    f->seen++;
    if (next_rand(f->g) % f->seen == 0)
        snprintf(f->name, sizeof f->name, "%s", name);
    return 0;
}

/*
 * Take this worker's presence lease.  A stopped worker leaves its row
 * behind, free; a start takes one of those before it makes a row of its
 * own, so that a group started and stopped a thousand times does not
 * leave a thousand rows (the table keeps as many as the most workers
 * live at once, plus one per worker that died without stopping, whose
 * row keeps its owner).  Only a row read free is tried, by the
 * supervisor's usual first take; if another worker starting at the same
 * moment took it first, that supervisor (a follower, holding nothing) is
 * stopped and the worker seeds a row under the new random name instead.
 */
static int start_presence(sqlease_group *g, sqlease_error *err)
{
    char fresh[SQLEASE_MAX_NAME + 1];
    free_presence f;
    sqlease_options po;
    sqlease_error e;

    memset(&f, 0, sizeof f);
    f.g = g;
    memcpy(fresh, g->presence_name, sizeof fresh);
    if (sqle_list_paged(g->db, g->table, g->page, on_free_presence, &f, &e) == SQLEASE_OK &&
        f.name[0] != '\0') {
        memcpy(g->presence_name, f.name, sizeof g->presence_name);
        slot_options(g, &po, g->presence_name, NULL, 0);
        if (sqlease_supervisor_start(&g->presence, g->db, &po, &e) == SQLEASE_OK) {
            if (sup_holding(g->presence))
                return SQLEASE_OK;
            (void)sqlease_supervisor_stop(g->presence, NULL);
            sqlease_supervisor_free(g->presence);
            g->presence = NULL;
        }
        memcpy(g->presence_name, fresh, sizeof g->presence_name);
    }
    /* A read that failed says nothing: the seed below tells a missing
     * table or a lost connection as a start without reuse would. */
    return seed_presence(g, err);
}

/* Free what sqlease_group_start allocated; supervisors must be gone. */
static void group_destroy(sqlease_group *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n; i++)
        free(g->slots[i].name);
    free(g->slots);
    free(g->sorted);
    free(g->owners);
    free(g->pres_prev);
    free(g->pres_cur);
    free(g->table);
    free(g->data);
    sqle_mutex_destroy(&g->m);
    sqle_mutex_destroy(&g->stop_m);
    sqle_cond_destroy(&g->c);
    free(g);
}

int sqlease_group_start(sqlease_group **out, sqlease_db *db, const sqlease_options *opt,
                        const char *group, const char *const *names, size_t count, int slack,
                        const sqlease_group_callbacks *cb, sqlease_error *err)
{
    if (out)
        *out = NULL;
    if (!out || !db || !opt || !names || count == 0)
        return sqle_fail(err, SQLEASE_EINVAL, "group: out, db, opt and names are required, "
                                              "count at least 1");
    if (!valid_group_name(group))
        return sqle_fail(err, SQLEASE_EINVAL,
                         "group name must be 1..%d bytes of letters, digits, '_', '-', '.'",
                         SQLEASE_GROUP_MAX_NAME);
    if (slack < 0 || (size_t)slack > count)
        return sqle_fail(err, SQLEASE_EINVAL, "group slack %d is not within 0..%zu", slack,
                         count);

    sqlease_options eff;
    int rc = sqlease_options_effective(db, opt, &eff, err);
    if (rc != SQLEASE_OK)
        return rc;

    sqlease_group *g = calloc(1, sizeof *g);
    if (!g)
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    if (sqle_mutex_init(&g->m) != 0) {
        free(g);
        return sqle_fail(err, SQLEASE_EPLATFORM, "mutex");
    }
    if (sqle_cond_init(&g->c) != 0) {
        sqle_mutex_destroy(&g->m);
        free(g);
        return sqle_fail(err, SQLEASE_EPLATFORM, "condition variable");
    }
    if (sqle_mutex_init(&g->stop_m) != 0) {
        sqle_mutex_destroy(&g->m);
        sqle_cond_destroy(&g->c);
        free(g);
        return sqle_fail(err, SQLEASE_EPLATFORM, "mutex");
    }
    g->db = db;
    g->slack = slack;
    g->n = count;
    if (cb)
        g->cb = *cb;
    g->period_ms = eff.retry_ms;
    /* The group's rows and a few presence rows in one page where it can. */
    g->page = count + 16 < 100 ? 100 : count + 16 > GROUP_PAGE ? GROUP_PAGE : count + 16;
    g->table = sqle_strdup(eff.table);
    g->data = eff.data ? sqle_strdup(eff.data) : NULL;
    g->slots = calloc(count, sizeof *g->slots);
    g->sorted = calloc(count, sizeof *g->sorted);
    g->owners = calloc(GROUP_OWNERS_MAX, sizeof *g->owners);
    g->pres_prev = calloc(GROUP_OWNERS_MAX, sizeof *g->pres_prev);
    g->pres_cur = calloc(GROUP_OWNERS_MAX, sizeof *g->pres_cur);
    if (!g->table || (eff.data && !g->data) || !g->slots || !g->sorted || !g->owners ||
        !g->pres_prev || !g->pres_cur) {
        group_destroy(g);
        return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
    }
    g->opt = eff;
    g->opt.table = g->table;
    g->opt.data = g->data;
    if (eff.owner) {
        snprintf(g->owner, sizeof g->owner, "%s", eff.owner);
    } else if ((rc = sqlease_owner_id(g->owner, sizeof g->owner, err)) != SQLEASE_OK) {
        group_destroy(g);
        return rc;
    }

    size_t pl = strlen(SQLEASE_GROUP_PRESENCE_PREFIX);
    for (size_t i = 0; i < count; i++) {
        if (!names[i] || strncmp(names[i], SQLEASE_GROUP_PRESENCE_PREFIX, pl) == 0) {
            group_destroy(g);
            return sqle_fail(err, SQLEASE_EINVAL, "group: lease name %zu is NULL or starts "
                                                  "with the reserved \"%s\"",
                             i, SQLEASE_GROUP_PRESENCE_PREFIX);
        }
        rc = sqle_check_text("lease name", names[i], SQLEASE_MAX_NAME, 0, err);
        if (rc != SQLEASE_OK) {
            group_destroy(g);
            return rc;
        }
        g->slots[i].g = g;
        g->slots[i].name = sqle_strdup(names[i]);
        if (!g->slots[i].name) {
            group_destroy(g);
            return sqle_fail(err, SQLEASE_ENOMEM, "out of memory");
        }
        g->sorted[i] = &g->slots[i];
    }
    qsort(g->sorted, count, sizeof *g->sorted, slot_cmp);
    for (size_t i = 1; i < count; i++) {
        if (strcmp(g->sorted[i - 1]->name, g->sorted[i]->name) == 0) {
            rc = sqle_fail(err, SQLEASE_EINVAL, "group: lease name \"%s\" is given twice",
                           g->sorted[i]->name);
            group_destroy(g);
            return rc;
        }
    }

    snprintf(g->presence_prefix, sizeof g->presence_prefix, "%s%s/",
             SQLEASE_GROUP_PRESENCE_PREFIX, group);
    if (fresh_presence_name(g, &g->rng) != 0) {
        group_destroy(g);
        return sqle_fail(err, SQLEASE_EPLATFORM, "group: no random presence id");
    }
    if (!g->rng)
        g->rng = 1;

    rc = start_presence(g, err);
    if (rc != SQLEASE_OK) {
        group_destroy(g);
        return rc;
    }
    if (sqle_thread_start(&g->thread, balance_thread, g) != 0) {
        sqlease_supervisor_free(g->presence);
        group_destroy(g);
        return sqle_fail(err, SQLEASE_EPLATFORM, "group: cannot start its thread");
    }
    g->thread_started = 1;
    *out = g;
    sqle_err_clear(err);
    return SQLEASE_OK;
}

int sqlease_group_stop(sqlease_group *g, sqlease_error *err)
{
    if (!g)
        return sqle_fail(err, SQLEASE_EINVAL, "group is NULL");
    sqle_mutex_lock(&g->m);
    int inside = g->thread_started && g->thread_id == sqle_thread_self();
    if (!inside)
        g->stopping = 1;
    sqle_cond_broadcast(&g->c);
    sqle_mutex_unlock(&g->m);
    if (inside)
        return sqle_fail(err, SQLEASE_ESTATE, "group: stop called from its own callback");
    sqle_mutex_lock(&g->stop_m);
    if (g->thread_started) {
        sqle_thread_join(&g->thread);
        sqle_mutex_lock(&g->m);
        g->thread_started = 0;
        sqle_mutex_unlock(&g->m);
    }
    int first = SQLEASE_OK;
    sqlease_error e;
    for (size_t i = 0; i < g->n; i++) {
        int rc = slot_stop(g, &g->slots[i], &e);
        if (rc != SQLEASE_OK && first == SQLEASE_OK) {
            first = rc;
            if (err)
                *err = e;
        }
    }
    if (g->presence) {
        int rc = sqlease_supervisor_stop(g->presence, &e);
        if (rc != SQLEASE_OK && first == SQLEASE_OK) {
            first = rc;
            if (err)
                *err = e;
        }
        /* Freed with the group: a stop that timed out may be tried again. */
        if (rc == SQLEASE_OK) {
            sqlease_supervisor_free(g->presence);
            g->presence = NULL;
        }
    }
    sqle_mutex_lock(&g->m);
    g->stopped = 1;
    g->stats.held = 0;
    sqle_mutex_unlock(&g->m);
    sqle_mutex_unlock(&g->stop_m);
    if (first == SQLEASE_OK)
        sqle_err_clear(err);
    return first;
}

void sqlease_group_free(sqlease_group *g)
{
    if (!g)
        return;
    sqlease_group_stop(g, NULL);
    sqlease_supervisor_free(g->presence);
    group_destroy(g);
}

int sqlease_group_held(sqlease_group *g, const char **names, size_t cap, size_t *held,
                       sqlease_error *err)
{
    if (!g || (cap > 0 && !names))
        return sqle_fail(err, SQLEASE_EINVAL, "group is NULL, or names NULL with cap > 0");
    size_t k = 0;
    sqle_mutex_lock(&g->m);
    for (size_t i = 0; i < g->n; i++) {
        if (g->slots[i].sup && sup_holding(g->slots[i].sup)) {
            if (k < cap)
                names[k] = g->slots[i].name;
            k++;
        }
    }
    sqle_mutex_unlock(&g->m);
    if (held)
        *held = k;
    sqle_err_clear(err);
    return SQLEASE_OK;
}

int sqlease_group_stats_get(sqlease_group *g, sqlease_group_stats *st, sqlease_error *err)
{
    if (!g || !st)
        return sqle_fail(err, SQLEASE_EINVAL, "group or stats is NULL");
    sqle_mutex_lock(&g->m);
    *st = g->stats;
    sqle_mutex_unlock(&g->m);
    sqle_err_clear(err);
    return SQLEASE_OK;
}
