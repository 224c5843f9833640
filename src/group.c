/*
 * group.c -- many leases shared fairly by the workers that join a group
 * (sqlease_group_*, see sqlease.h "Group").
 *
 * Built on the supervisor alone: a worker runs one supervisor per lease
 * it holds or is trying to take, plus one for its presence lease, all on
 * the caller's sqlease_db, so they share its runner and their renews go
 * in the same batches.  A balancing thread reads the table once per
 * heartbeat (sqlease_list, paged), counts the live presence rows of the
 * group and starts supervisors on free or expired rows while the worker
 * is below its share, or stops (gracefully: on_stopped, then release)
 * those above it.  It never touches a live row of another worker: a lease
 * moves only by a release and a take, so no new overlap rule is needed
 * beyond the supervisor's own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "internal.h"
#include "platform.h"

/* Live workers whose owner ids a read keeps, to spread free rows. */
#define GROUP_OWNERS_MAX 256

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
    int64_t period_ms;            /* the heartbeat */

    size_t n;
    group_slot *slots;
    group_slot **sorted;          /* by name (strcmp), to find a listed row */

    sqlease_supervisor *presence;

    sqle_mutex m;
    sqle_cond c;
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
    int over_reads;               /* reads in a row that found us above target + slack */
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

/* FNV-1a of an owner id, to match a row's holder with a live worker. */
static uint64_t owner_hash(const char *owner)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *p = owner; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return h;
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

/* One row of the table read: count live presence rows of the group and
 * note the state of the group's own rows. */
static int on_row(void *ud, const char *name, const sqlease_lease_info *info)
{
    sqlease_group *g = ud;
    size_t pl = strlen(g->presence_prefix);
    if (strncmp(name, g->presence_prefix, pl) == 0) {
        if (info->held) {
            g->live_workers++;
            if (g->nowners < GROUP_OWNERS_MAX)
                snprintf(g->owners[g->nowners++], sizeof g->owners[0], "%s", info->owner);
        }
        return 0;
    }
    group_slot **hit = bsearch(name, g->sorted, g->n, sizeof *g->sorted, key_cmp);
    if (hit) {
        group_slot *s = *hit;
        s->row_seen = 1;
        s->row_held = info->held;
        s->row_mine = info->held && strcmp(info->owner, g->owner) == 0;
        s->row_owner = info->held ? owner_hash(info->owner) : 0;
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

/* One balancing round: read, count, then take or give back.  The
 * decisions use only this worker's own supervisors and the read, so a
 * round that fails to read changes nothing. */
static void balance_once(sqlease_group *g)
{
    for (size_t i = 0; i < g->n; i++)
        g->slots[i].row_seen = g->slots[i].row_held = g->slots[i].row_mine = 0;
    g->live_workers = 0;
    g->nowners = 0;
    sqlease_error e;
    int rc = sqlease_list(g->db, g->table, on_row, g, &e);
    sqle_mutex_lock(&g->m);
    g->stats.reads++;
    sqle_mutex_unlock(&g->m);
    if (rc != SQLEASE_OK) {
        group_warn(g, "reading the table failed, shares unchanged", "", e.message);
        return;
    }
    uint64_t w = g->live_workers;
    if (!sup_holding(g->presence))
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
    if (mine > target + (uint64_t)g->slack) {
        g->over_reads++;
        if (g->over_reads >= 2) {
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
        /* A round of takes ends after a heartbeat, so that a worker
         * taking many rows one by one sees the workers that joined
         * meanwhile before it takes more than its new share. */
        int64_t round_end = sqle_mono_ms() + g->period_ms;
        for (size_t k = 0; k < g->n && want > 0 && !is_stopping(g); k++) {
            group_slot *s = &g->slots[(start + k) % g->n];
            if (s->sup || !s->row_seen || s->row_held || !s->assigned)
                continue;
            if (sqle_mono_ms() > round_end)
                break;
            sqlease_options o;
            slot_options(g, &o, s->name, s, 1);
            sqlease_supervisor *sup = NULL;
            sqlease_error se;
            int src = sqlease_supervisor_start(&sup, g->db, &o, &se);
            if (src != SQLEASE_OK) {
                group_warn(g, "starting lease ", s->name, se.message);
                continue;
            }
            sqle_mutex_lock(&g->m);
            s->sup = sup;
            sqle_mutex_unlock(&g->m);
            want--;
            takes++;
        }
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

/* The balancing thread: a round at once, then one per heartbeat, until
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
        sqle_mutex_lock(&g->m);
        while (!g->stopping && sqle_mono_ms() < next)
            sqle_cond_wait_until(&g->c, &g->m, next);
        int st = g->stopping;
        sqle_mutex_unlock(&g->m);
        if (st)
            break;
    }
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
    free(g->table);
    free(g->data);
    sqle_mutex_destroy(&g->m);
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
    g->db = db;
    g->slack = slack;
    g->n = count;
    if (cb)
        g->cb = *cb;
    g->period_ms = eff.heartbeat_ms;
    g->table = sqle_strdup(eff.table);
    g->data = eff.data ? sqle_strdup(eff.data) : NULL;
    g->slots = calloc(count, sizeof *g->slots);
    g->sorted = calloc(count, sizeof *g->sorted);
    g->owners = calloc(GROUP_OWNERS_MAX, sizeof *g->owners);
    if (!g->table || (eff.data && !g->data) || !g->slots || !g->sorted || !g->owners) {
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

    unsigned char u[16];
    if (sqle_uuid_random(u) != 0) {
        group_destroy(g);
        return sqle_fail(err, SQLEASE_EPLATFORM, "group: no random presence id");
    }
    snprintf(g->presence_prefix, sizeof g->presence_prefix, "%s%s/",
             SQLEASE_GROUP_PRESENCE_PREFIX, group);
    snprintf(g->presence_name, sizeof g->presence_name,
             "%s%02x%02x%02x%02x%02x%02x%02x%02x", g->presence_prefix, u[0], u[1], u[2], u[3],
             u[4], u[5], u[6], u[7]);
    g->rng = ((unsigned)u[8] << 24) | ((unsigned)u[9] << 16) | ((unsigned)u[10] << 8) | u[11];
    if (!g->rng)
        g->rng = 1;

    const char *pn = g->presence_name;
    rc = sqlease_migrate(db, g->table, &pn, 1, err);
    if (rc != SQLEASE_OK) {
        group_destroy(g);
        return rc;
    }
    sqlease_options po;
    slot_options(g, &po, g->presence_name, NULL, 0);
    rc = sqlease_supervisor_start(&g->presence, db, &po, err);
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
    if (g->thread_started) {
        sqle_thread_join(&g->thread);
        g->thread_started = 0;
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
