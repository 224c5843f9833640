/*
 * sqlease.h -- the public interface of libsqlease.
 *
 * sqlease makes sure exactly one process of a fleet runs a job at a time,
 * using one row of a SQL table (a lease) in a database the fleet already
 * has, reached through ODBC.  A process that holds the lease is its
 * holder; the holder renews the lease before its TTL runs out, and every
 * time the lease is taken the row's fencing token grows by one.  A hold is
 * an owner id *and* a token: only the handle whose statement took the row
 * knows its token, so only that handle renews or releases that hold.
 *
 * Conventions that hold for every function below:
 *
 *  - Durations and times are int64_t milliseconds.  Times read from the
 *    database are milliseconds since the Unix epoch on the database's
 *    clock; times measured locally are on this host's monotonic clock.
 *  - A function that can fail returns an sqlease_status (SQLEASE_OK is 0)
 *    and, when its last argument `err` is not NULL, fills it with the
 *    status, the SQLSTATE and native code the driver reported (if any) and
 *    a one-line message.  Messages never contain a password: connection
 *    strings are redacted before they are quoted.
 *  - Strings passed in are copied; the library never keeps a caller's
 *    pointer after a call returns.  Strings returned as `const char *`
 *    belong to the handle they came from and live as long as it does.
 *  - Every *_free / *_close function accepts NULL and does nothing.
 *  - Handles are thread-safe unless a function says otherwise: one
 *    sqlease_db may be shared by any number of leases and supervisors on
 *    any threads; their statements are serialised on its one connection,
 *    earliest deadline first.
 *  - No call waits on the network past its bound, whatever the network or
 *    the server does (packets dropped, a frozen server, a half-open
 *    connection): a call that sends statements returns within the
 *    handle's query timeout + 500 ms (plus the login timeout when the
 *    connection is down and must be made again first; the connect itself
 *    is given up at the login timeout + 500 ms), and sqlease_db_open
 *    within the login timeout + 500 ms.  Past its bound a
 *    call returns SQLEASE_ETIMEOUT; a statement still inside the driver
 *    then is abandoned with its connection (closed when the driver gives
 *    the call back; at most 4 such connections per handle at once, past
 *    which statements fail at once instead of opening more) and the next
 *    statement runs on a fresh connection.  The 500 ms let the driver's
 *    own timeout, which is in whole seconds rounded up, fire first.
 *
 * Status numbers are part of the ABI: they are never renumbered, only
 * added to.
 *
 * Structs that grow.  sqlease_db_options, sqlease_options,
 * sqlease_lease_info, sqlease_state, sqlease_fence, sqlease_fire_info and
 * sqlease_hold_info are allocated by the caller, and later versions add fields to them.  Each starts with
 * `size_t size`, the struct's size as the caller's copy of this header
 * has it, so that a program keeps working, unchanged and not rebuilt,
 * with a later library of the same soname, and the library never reads or
 * writes a byte the program did not allocate:
 *
 *  - Fields are only ever appended: never removed, reordered, resized or
 *    given another meaning.  A field added later means its default when
 *    it is zero (NULL, 0), so the zeroes an older program's init left in
 *    what was its struct's tail padding read as that default.
 *  - sqlease_db_options and sqlease_options: initialising with the macro
 *    (sqlease_db_options_init, sqlease_options_init) is mandatory.  It
 *    records sizeof the struct and sets every default; the library reads
 *    only the fields that size covers and takes the default for every
 *    field past it.  A struct never initialised (size 0, or an absurd
 *    size) is refused with SQLEASE_EINVAL.  Copying an initialised struct
 *    copies its size too.
 *  - sqlease_lease_info, sqlease_state, sqlease_fire_info and
 *    sqlease_hold_info are filled by the library.  The functions that fill one are macros that pass
 *    sizeof the struct as this header has it; the library writes no byte
 *    past that size and sets `size` to the bytes it filled (at most that
 *    much: a program built against a later header, run with an earlier
 *    library, sees the later fields were not filled).  The list
 *    callbacks' infos have `size` too.
 *  - sqlease_fence: SQLEASE_FENCE_INIT (see there).
 *  - sqlease_error never grows.
 *
 * Each macro stands for an exported function of the same name with a
 * trailing '_' and an explicit size; use that function where a function
 * pointer or another language's binding needs one, passing the size of
 * the struct as the caller allocated it.
 */
#ifndef SQLEASE_H
#define SQLEASE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SQLEASE_VERSION_MAJOR 0
#define SQLEASE_VERSION_MINOR 2
#define SQLEASE_VERSION_PATCH 1
#define SQLEASE_VERSION "0.2.1"

/* SQLEASE_API marks what the shared library exports; everything else is
 * hidden.  Define SQLEASE_STATIC when linking the static library on
 * Windows. */
#if defined(_WIN32) && !defined(SQLEASE_STATIC)
#  ifdef SQLEASE_BUILDING
#    define SQLEASE_API __declspec(dllexport)
#  else
#    define SQLEASE_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define SQLEASE_API __attribute__((visibility("default")))
#else
#  define SQLEASE_API
#endif

/* ------------------------------------------------------------------ */
/* Status codes                                                        */
/* ------------------------------------------------------------------ */

typedef enum sqlease_status {
    SQLEASE_OK = 0,
    /* Not held by this handle: another hold is live (possibly one with the
     * same owner id: a hold is an owner id and a token), a concurrent
     * acquire took it first, or this handle's own hold was found gone.
     * Not an error: the normal answer to a follower. */
    SQLEASE_NOT_HELD = 1,
    /* A NULL, empty, overlong or malformed argument or option. */
    SQLEASE_EINVAL = 2,
    /* Out of memory. */
    SQLEASE_ENOMEM = 3,
    /* The database could not be reached, or the connection broke
     * (SQLSTATE class 08, "server has gone away").  The next call on the
     * same sqlease_db reconnects. */
    SQLEASE_ECONNECT = 4,
    /* A login or query timeout expired (SQLSTATE HYT00 / HYT01, or
     * PostgreSQL's 57014), or the call reached its bound with no answer
     * (see the conventions above).  The connection is dropped and the
     * next call reconnects. */
    SQLEASE_ETIMEOUT = 5,
    /* The database rejected a statement for another reason; the SQLSTATE
     * and driver message are in sqlease_error. */
    SQLEASE_EDB = 6,
    /* The lease table does not exist (42S02, 42P01, "no such table").
     * Run `sqlease migrate`. */
    SQLEASE_ENOTABLE = 7,
    /* The lease table exists but has no row for this lease name.  The
     * lease code never inserts it: run `sqlease migrate`. */
    SQLEASE_ENOROW = 8,
    /* The database clock read as NULL, zero or negative. */
    SQLEASE_ECLOCK = 9,
    /* The DBMS is not one sqlease has a dialect for, or the dialect named
     * in the options is unknown. */
    SQLEASE_EDIALECT = 10,
    /* The call does not fit the handle's state (for example stopping a
     * supervisor from inside its own callback). */
    SQLEASE_ESTATE = 11,
    /* An operating-system call failed (thread, clock, host name, uuid). */
    SQLEASE_EPLATFORM = 12,
    /* An UPDATE reported a row count other than 0 or 1, so whether the
     * lease is held cannot be known.  Never treated as held. */
    SQLEASE_EROWCOUNT = 13,
    /* The fire ledger: the fire was claimed already (its row exists, by
     * this holder or another; the info says who, when and how it
     * stands), or, for a take that claims a fire, the lease row shows
     * this fire or a later one taken.  Not an error: the normal answer
     * to every host but the one that runs it.  (Since 0.2.1.) */
    SQLEASE_CLAIMED = 14,
    /* The fire ledger: the fire is not due yet by the database's clock
     * (its fire_at_ms is ahead of it), so it was not claimed; the hold
     * was live.  Not an error: claim it again once it is due.  (Since
     * 0.2.1.) */
    SQLEASE_NOT_DUE = 15,
    /* A hand-over to the best ready follower found none: no other
     * supervisor of the lease keeps a live ready row (see "Handing the
     * lease over").  Nothing was changed: the hold goes on.  (Since
     * 0.2.1.) */
    SQLEASE_NO_FOLLOWER = 16,
    /* The lease row carries a hand-over already: a request that its
     * holder has not answered yet, or a reservation that its target has
     * not taken yet (the info says for whom).  Not an error: ask again
     * once it is over.  (Since 0.2.1.) */
    SQLEASE_PENDING = 17
} sqlease_status;

/* The sqlease_error a call fills when it is given one.  Caller-owned;
 * stack allocation is the intended use. */
typedef struct sqlease_error {
    int status;          /* an sqlease_status, equal to the return value */
    char sqlstate[6];    /* five-character SQLSTATE, or "" */
    long native_error;   /* the driver's native error code, or 0 */
    char message[512];   /* one line, no trailing newline, redacted */
} sqlease_error;

/* A static English description of `status`; never NULL (unknown numbers
 * give "unknown status").  Thread-safe. */
SQLEASE_API const char *sqlease_strerror(int status);

/* The enumerator's own name ("SQLEASE_NOT_HELD"), stable across versions,
 * for logs and machine-readable output; "unknown" for a number that is not
 * a status.  Static, never NULL.  Thread-safe. */
SQLEASE_API const char *sqlease_status_name(int status);

/* The library's version string, equal to SQLEASE_VERSION of the header it
 * was built with.  Thread-safe. */
SQLEASE_API const char *sqlease_version(void);

/* ------------------------------------------------------------------ */
/* Logging                                                             */
/* ------------------------------------------------------------------ */

typedef enum sqlease_log_level {
    SQLEASE_LOG_ERROR = 0,
    SQLEASE_LOG_WARN = 1,
    SQLEASE_LOG_INFO = 2,
    SQLEASE_LOG_DEBUG = 3
} sqlease_log_level;

/* A log sink.  `line` is one message without a trailing newline; it names
 * the lease, the owner id and the token where they are known, and never
 * contains a password.  Called from library threads and from the caller's
 * own thread inside library calls, possibly several at once: the sink
 * must be thread-safe.  It must not call back into the handle that
 * logged. */
typedef void (*sqlease_log_fn)(void *userdata, int level, const char *line);

/* ------------------------------------------------------------------ */
/* Database handle                                                     */
/* ------------------------------------------------------------------ */

typedef struct sqlease_db sqlease_db;

typedef struct sqlease_db_options {
    /* sizeof this struct as the caller's header has it: set by
     * sqlease_db_options_init, never by hand (see "Structs that grow"). */
    size_t size;
    /* A DSN name ("prod-pg") or a full connection string
     * ("Driver=SQLite3;Database=x.db").  NULL or "" means $SQLEASE_DSN,
     * else SQLEASE_DEFAULT_CONN. */
    const char *conn;
    /* The key or an alias of a row of the dialect table
     * (templates/dialects.toml: "sqlite", "postgres", ...; `sqlease
     * --help` lists this build's); NULL detects it from SQL_DBMS_NAME at
     * connect (and from the DSN's SqleaseDialect key).  An unknown name
     * fails sqlease_db_open with SQLEASE_EDIALECT, naming the known keys. */
    const char *dialect;
    /* SQL_ATTR_LOGIN_TIMEOUT, rounded up to whole seconds; 0: 5000.  Also
     * the bound on a connect (+ 500 ms) and the drivers' connect-timeout
     * settings (see sqlease_db_open). */
    int64_t login_timeout_ms;
    /* SQL_ATTR_QUERY_TIMEOUT for every statement, rounded up to whole
     * seconds; 0: 5000.  Also the bound on every call (+ 500 ms) and the
     * drivers' socket read/write timeouts. */
    int64_t query_timeout_ms;
    /* Log sink and level for this handle; NULL sink: stderr. */
    sqlease_log_fn log;
    void *log_userdata;
    int log_level;
    /* 1: the database must exist already; never let the driver create it.
     * For an embedded database whose driver creates a missing file on
     * connect (sqliteodbc creates an empty one, in whatever directory the
     * process runs), the dialect table's setting that stops it (NoCreat=1)
     * is added unless the connection string or DSN sets that key itself
     * (a user's own setting always wins), and the open fails with
     * SQLEASE_ENOTABLE naming the file that does not exist.  Whatever this
     * says, a failed connect names a missing directory of the file.  0
     * (the default): the driver's own behaviour.  Open the handle that
     * runs sqlease_migrate without it.  Added after the fields above,
     * which keep their places. */
    int must_exist;
} sqlease_db_options;

/* An SQLite file in the current directory.  It sets no Timeout= (the
 * driver's busy timeout in ms: how long a statement waits for a file
 * another connection has locked; the driver's own default is 100 s, which
 * it may wait twice), so the one sqlease_db_open adds for sqliteodbc, half
 * the query timeout, applies: a locked file holds a statement no longer
 * than the query timeout. */
#define SQLEASE_DEFAULT_CONN "Driver=SQLite3;Database=sqlease.db"

/* Fill `opt` with the defaults above and record its size.  Mandatory
 * before setting fields (see "Structs that grow").  Use the macro. */
SQLEASE_API void sqlease_db_options_init_(sqlease_db_options *opt, size_t size);
#define sqlease_db_options_init(opt) sqlease_db_options_init_((opt), sizeof *(opt))

/* Connect.  On success *out is a new handle owned by the caller (free it
 * with sqlease_db_close).  The connection runs in autocommit mode at read
 * committed (SQL_ATTR_TXN_ISOLATION, whatever the server's default; a
 * driver that refuses it, like SQLite's, is used as it is) with the login
 * and query timeouts set, and the dialect's session setup applied.
 * Statements run on a thread the handle starts, which owns the
 * connection (the caller's thread only waits, bounded).  For the drivers
 * the dialect table knows (recognised from Driver= or the DSN's Driver
 * in odbc.ini), settings that bound the driver's own socket waits are
 * added to the connection string unless it (or the DSN) sets the key:
 * psqlODBC KeepaliveTime, KeepaliveInterval and pqopt={keepalives_count
 * tcp_user_timeout}; MariaDB Connector/ODBC CONN_TIMEOUT, READ_TIMEOUT,
 * WRITE_TIMEOUT (it ignores SQL_ATTR_LOGIN_TIMEOUT); sqliteodbc Timeout
 * (the busy timeout, half the query timeout).
 * When `conn` is a DSN name, or a connection string that names one
 * ("DSN=prod-pg;UID=app"), the lease settings in that DSN's odbc.ini
 * section (SqleaseTable, SqleaseFireTable, SqleaseHistoryTable, SqleaseName,
 * SqleaseTTL, SqleaseHeartbeat, SqleaseRenewDeadline, SqleaseRetry,
 * SqleaseDialect) are
 * read here through
 * the driver manager (SQLGetPrivateProfileString) and become the defaults
 * of every lease on this handle (see sqlease_options_effective); an invalid
 * one fails the open with SQLEASE_EINVAL naming the key and the DSN.
 * Returns SQLEASE_OK, SQLEASE_EINVAL (out NULL, bad odbc.ini value), SQLEASE_ENOMEM,
 * SQLEASE_ECONNECT (driver or DSN missing, server unreachable, login
 * refused, an embedded database's directory missing), SQLEASE_ENOTABLE
 * (with must_exist: the embedded database's file is missing, so no lease
 * table can be there either; run `sqlease migrate`), SQLEASE_ETIMEOUT,
 * SQLEASE_EDIALECT, SQLEASE_EDB. */
SQLEASE_API int sqlease_db_open(sqlease_db **out, const sqlease_db_options *opt,
                                sqlease_error *err);

/* Disconnect and free.  Every lease and supervisor using `db` must have
 * been freed first.  Never waits on the network: a connection stuck in
 * the driver is left to close when the driver returns. */
SQLEASE_API void sqlease_db_close(sqlease_db *db);

/* The dialect in use ("sqlite", ...).  Owned by the library. */
SQLEASE_API const char *sqlease_db_dialect(const sqlease_db *db);

/* The connection string or DSN with any password replaced by "***".
 * Owned by `db`. */
SQLEASE_API const char *sqlease_db_conn_redacted(const sqlease_db *db);

/* Read the database clock in epoch milliseconds.  Returns SQLEASE_OK,
 * SQLEASE_EINVAL, SQLEASE_ECLOCK (NULL, 0 or negative), or a connection or
 * statement status. */
SQLEASE_API int sqlease_db_now_ms(sqlease_db *db, int64_t *now_ms, sqlease_error *err);

/* Statements sent on this handle since it was opened (every lease,
 * migrate and clock statement; not the session setup run at connect).
 * Thread-safe. */
SQLEASE_API uint64_t sqlease_db_statements(const sqlease_db *db);

/* ------------------------------------------------------------------ */
/* Lease options                                                       */
/* ------------------------------------------------------------------ */

#define SQLEASE_DEFAULT_TABLE "sys_job_lease"
#define SQLEASE_DEFAULT_NAME "scheduler"
#define SQLEASE_MAX_NAME 64    /* bytes, the name column's width */
#define SQLEASE_MAX_OWNER 255  /* bytes, the owner column's width */
#define SQLEASE_MAX_TABLE 128  /* bytes, "schema.table" included */
#define SQLEASE_MAX_DATA 1024  /* bytes, the data column's width */
#define SQLEASE_DEFAULT_FIRE_TABLE "sys_job_fire"
#define SQLEASE_MAX_JOB 64     /* bytes, the fire table's job column */
#define SQLEASE_MAX_HOST 255   /* bytes, the fire table's host column */
#define SQLEASE_MAX_NOTE 255   /* bytes, the fire table's note column */
#define SQLEASE_MAX_STATE 16   /* bytes, the fire table's state column */
#define SQLEASE_DEFAULT_HISTORY_TABLE "sys_job_hold"
/* The default of sqlease_options.history_keep_ms: 30 days. */
#define SQLEASE_DEFAULT_HISTORY_KEEP_MS 2592000000LL

typedef struct sqlease_state sqlease_state;

/* Why on_stopped was called. */
typedef enum sqlease_stop_reason {
    SQLEASE_STOP_LOST = 1,      /* the hold is gone: a renew found it expired,
                                   force-released or taken by another hold
                                   (at once, even if the take tried after it
                                   fails; a re-take is a new hold, new
                                   token) */
    SQLEASE_STOP_DEADLINE = 2,  /* not proven for renew_deadline (the hold is
                                   then given up, and the next start has a
                                   new token) */
    SQLEASE_STOP_SHUTDOWN = 3,  /* sqlease_supervisor_stop */
    SQLEASE_STOP_HANDOFF = 4    /* the hold is being handed over to another
                                   instance: asked for by
                                   sqlease_lease_request_handoff (an
                                   operator's `sqlease transfer`, or a ready
                                   follower of higher priority), by
                                   sqlease_supervisor_handoff, or by a stop
                                   with hand-over on; the hand-over is sent
                                   once on_stopped has returned (since
                                   0.2.1) */
} sqlease_stop_reason;

/* A static English description of a stop reason ("the lease was not
 * proven for the renew deadline"); "unknown stop reason" for another
 * number.  Never NULL.  Thread-safe. */
SQLEASE_API const char *sqlease_stop_reason_str(int reason);

/* A short stable name for a stop reason, for logs and machine-readable
 * output: "lost", "deadline", "shutdown" or "handoff"; "unknown" for
 * another number.
 * These never change.  Static, never NULL.  Thread-safe. */
SQLEASE_API const char *sqlease_stop_reason_name(int reason);

typedef struct sqlease_options {
    /* sizeof this struct as the caller's header has it: set by
     * sqlease_options_init, never by hand (see "Structs that grow"). */
    size_t size;
    /* Table name: an identifier or schema.identifier, letters, digits and
     * '_' only, not starting with a digit, and no part of it a word that
     * SQL-92, PostgreSQL, MySQL/MariaDB, SQLite or T-SQL reserves
     * ("order", "user", "table", ...; any case), since it is pasted into
     * SQL unquoted (PostgreSQL's schema "public" is allowed), nor
     * starting with "sqlite_" (any case), which SQLite keeps for its own
     * tables.  NULL: SQLEASE_DEFAULT_TABLE. */
    const char *table;
    /* Lease name, 1..SQLEASE_MAX_NAME bytes.  NULL: SQLEASE_DEFAULT_NAME.
     * This and owner must be valid UTF-8 without control characters and
     * not only white space.  A name must also neither start nor end with
     * white space: the name is the primary key, and where a key pads
     * trailing spaces (MySQL/MariaDB) "job " could never have a row of its
     * own. */
    const char *name;
    /* Owner id, 1..SQLEASE_MAX_OWNER bytes (see name), compared as exact
     * bytes in every dialect (no case, accent or trailing-space folding:
     * "worker", "WORKER" and "worker " are three owners).  NULL: generated as
     * host-pid-xxxxxxxx (8 hex digits of a random UUID).  Give each process
     * its own, so that whoever reads the row can tell who holds it; safety
     * does not depend on it: two handles with one owner id are two holds
     * (told apart by the token), never one. */
    const char *owner;
    /* Timing, at most SQLEASE_MAX_DURATION_MS each; 0 means unset.  An
     * unset ttl comes from the DSN's odbc.ini section (SqleaseTTL, see
     * sqlease_options_effective), else 30000.  Each of heartbeat,
     * renew_deadline and retry that is set neither here nor in odbc.ini
     * is derived from the ttl in force: heartbeat ttl/3, renew_deadline
     * 2*ttl/3, retry the smaller of 2000 and ttl/10 (each at least 1), so
     * setting the ttl alone is enough; the default ttl gives the defaults
     * below.  The result must satisfy retry < renew_deadline < ttl and
     * heartbeat <= renew_deadline / 2 (only for a supervisor: a bare lease
     * uses the ttl alone); a value that was set and breaks a rule is
     * SQLEASE_EINVAL naming it, never adjusted. */
    int64_t ttl_ms;             /* default 30000 */
    int64_t heartbeat_ms;       /* default ttl/3: 10000 */
    int64_t renew_deadline_ms;  /* default 2*ttl/3: 20000 */
    int64_t retry_ms;           /* default min(2000, ttl/10): 2000 */

    /* Supervisor callbacks (ignored by a bare lease).  Which thread runs
     * them:
     *   - the caller's own thread inside sqlease_supervisor_start, for
     *     what its first acquire found (on_started if it took the lease,
     *     on_holder if another holds it), and inside
     *     sqlease_supervisor_stop or _free (on_stopped with
     *     SQLEASE_STOP_SHUTDOWN);
     *   - otherwise a thread of the handle's callback pool: every
     *     supervisor of one sqlease_db shares a few threads (see
     *     sqlease_supervisor_start), and a supervisor's callbacks are
     *     queued and run one at a time, in order.  When every pool thread
     *     is inside a callback and another callback is due, the pool
     *     starts one more thread, so a slow callback of one supervisor
     *     never delays another supervisor's (above all its on_stopped at
     *     the renew deadline).
     * Whatever the thread, for one supervisor they never run two at once
     * and strictly alternate: on_started, on_stopped, on_started, ...
     * A slow callback delays only its own supervisor's next callback (an
     * on_stopped queued behind a slow on_started runs when it returns).
     * A start that could only be delivered after its hold ended (it
     * waited behind a slow callback until the hold's renew deadline
     * passed, or the hold was lost or stopped meanwhile) is not delivered,
     * and neither is the on_stopped that ends it: work never starts under
     * a hold that another owner may already have taken.
     * Since they may run inside start, stop and free, a callback must not
     * take a lock that the caller holds around those calls, nor wait for
     * what that caller does after them.  Each on_started is a fresh
     * start, with a token no earlier on_started of this supervisor had:
     * work stopped before must not be resumed.  on_stopped has
     * ttl - renew_deadline milliseconds to finish before another owner may
     * take the lease, counted from the renew deadline: the time an
     * on_started (or on_holder) runs past that deadline delays on_stopped
     * by as much and comes out of that margin.  Neither may call
     * sqlease_supervisor_stop or _free on their own supervisor. */
    void (*on_started)(void *userdata, int64_t token);
    void (*on_stopped)(void *userdata, int reason /* sqlease_stop_reason */);
    void *userdata;

    /* Log sink for this lease; NULL: the sqlease_db's sink. */
    sqlease_log_fn log;
    void *log_userdata;
    int log_level;  /* used only when log is set */

    /* The minimum hold (lock-at-least-for), in ms, at most
     * SQLEASE_MAX_DURATION_MS; 0 (the default): none.  A release of a hold
     * (sqlease_lease_release, and the supervisor's release when it stops)
     * leaves the row held, under the same owner id and token, until
     * acquired_at_ms + min_hold_ms on the database clock if that is still
     * ahead, and frees it at once otherwise.  Nothing renews the row
     * meanwhile and no work runs under it; another owner takes it only
     * after that instant, with a new token.  For a job that every host's
     * cron starts: a host whose cron fires a little late finds it held
     * and does not run the job again.  (The release a supervisor makes to
     * give up a hold whose work it stopped at the renew deadline frees the
     * row at once: that hold's work did not finish.)  Added after the
     * fields above, which keep their places. */
    int64_t min_hold_ms;

    /* ---- the holder's data, and watching the holder ----------------- */

    /* What this process publishes with its hold, for whoever reads the
     * row (its address, say): 1..SQLEASE_MAX_DATA bytes of valid UTF-8
     * without control characters, not only white space (checked like the
     * name; SQLEASE_EINVAL names the field "data").  Written by the take,
     * kept by every renew, cleared (NULL) by a release.  NULL: nothing
     * (the row's data is NULL while this handle holds).  Copied. */
    const char *data;

    /* Supervisor only, optional: the holder as a supervisor that is not
     * the holder sees it.  Called once per change of the holder or its
     * token, including "free": owner "" (a row with no owner, or one
     * whose hold expired), token the row's last token, data NULL.  owner
     * and data (NULL when the holder published none) are valid only
     * during the call.  A follower learns the holder from the read it
     * polls with every retry (no extra statement), so a change shows
     * within one retry; a hold that starts and ends between two reads is
     * not seen.  Not called while this supervisor holds: on_started says
     * so; after it stops holding, the first read is reported whatever it
     * shows.  Runs where on_started does (a pool thread, or the caller's
     * thread inside sqlease_supervisor_start, for its first acquire),
     * never at the same time as on_started or on_stopped of the same
     * supervisor, and with the same rules as they have: it must not call
     * sqlease_supervisor_stop or _free on its own supervisor, nor take a
     * lock the caller holds around start, stop and free.  It delays only
     * this supervisor's next callback.  Gets `userdata`. */
    void (*on_holder)(void *userdata, const char *owner, int64_t token, const char *data);

    /* ---- when a waiting supervisor takes a row someone has (0.2.1) --- */

    /* 0 (the default): a supervisor that is not the holder takes a row
     * that has an owner only once it has itself read that row unchanged
     * (owner, token, version) for a ttl (or for what is left of a minimum
     * hold, if more), timed on its own monotonic clock from the answer of
     * the first read that showed it, and then bound to that token and
     * version, whatever the database's clock says of the expiry.  A step
     * forward of that clock, which expires every hold at once, then
     * cannot hand a live holder's lease to it (the holder's renews change
     * the version), and a step back keeps a dead holder's lease from it
     * no longer than the watch (one that first reads the row after the
     * step waits the step out).  The cost: a supervisor that has just
     * started waits a ttl before it takes a row whose holder died; a free
     * row (released, or never taken) is taken at once.
     * 1: take a row that has an owner as soon as the database's clock
     * says its hold expired, as sqlease_lease_acquire does: for a caller
     * that cannot wait a ttl (the tool's `run --no-wait`, or a --timeout
     * shorter than the ttl), and which then relies on that clock not
     * stepping. */
    int take_by_expiry;

    /* ---- the fire ledger (0.2.1) --------------------------------------- */

    /* The fire table of this lease's fire ledger (see "The fire ledger"),
     * checked as `table` is.  NULL: the DSN's SqleaseFireTable (see
     * sqlease_options_effective), else SQLEASE_DEFAULT_FIRE_TABLE. */
    const char *fire_table;
    /* The host name a fire's row records for the fires this process
     * claims: 1..SQLEASE_MAX_HOST bytes, checked like the owner id.
     * NULL: this host's name. */
    const char *host;

    /* ---- a take that claims a scheduled fire (0.2.1) ----------------- */

    /* A cron expression (5 or 6 fields, @daily, @every 5m, ...: see
     * docs/operating.md, "Scheduled jobs"), evaluated in the zone
     * `schedule_tz` (NULL: UTC).  When set, every take of this lease also
     * claims the schedule's latest fire at or before the database's clock
     * (read by the same SELECT that precedes the take) in the lease row:
     * the take succeeds only if no take has claimed that fire or a later
     * one, so of many processes started for one fire (the same crontab
     * line on every host, each firing a little late or early by its own
     * clock), one holds the lease for it and the others are answered
     * SQLEASE_CLAIMED, with who took it and when in the info.  A fire more
     * than late_limit_ms old when the take is tried is answered
     * SQLEASE_NOT_DUE.  sqlease_state.fire_at_ms says which fire a hold
     * claimed.  `sqlease run --schedule` is this.  An expression that
     * does not parse is SQLEASE_EINVAL, naming the column. */
    const char *schedule;
    const char *schedule_tz;
    /* How late a fire may still be taken, ms (0: the schedule's shortest
     * gap between fires). */
    int64_t late_limit_ms;

    /* ---- the holder history (0.2.1) ------------------------------------ */

    /* The holder history's table (see "The holder history"), checked as
     * `table` is.  NULL: the DSN's SqleaseHistoryTable (see
     * sqlease_options_effective), else SQLEASE_DEFAULT_HISTORY_TABLE. */
    const char *history_table;
    /* 0 (the default): record every hold of this lease in the history
     * table once sqlease_history_migrate has created it (a missing table
     * is one warning in the log, and nothing more); SQLEASE_HISTORY_OFF:
     * record nothing. */
    int history;
    /* A supervisor that holds deletes this lease's history rows older
     * than this (ms, at most SQLEASE_MAX_DURATION_MS), one small window
     * per hour of holding.  0: SQLEASE_DEFAULT_HISTORY_KEEP_MS. */
    int64_t history_keep_ms;

    /* ---- handing the lease over (0.2.1) ------------------------------ */

    /* Supervisor only.  1: this supervisor is a ready follower and hands
     * its holds over (see "Handing the lease over", below): while it runs
     * it keeps a ready row of its own in the lease table (named
     * SQLEASE_READY_PREFIX + the lease's key + "/" + 16 hex digits, its
     * data "priority=N"; renewed in the same batch as the lease, so it
     * costs no statement per heartbeat while this supervisor holds, and
     * released by the stop), which is what a hand-over to "the best
     * ready follower" picks from; sqlease_supervisor_stop hands a hold
     * over to the best ready follower instead of releasing it (the
     * release as before when there is none); and it asks a holder of
     * lower priority to hand over to it (preempt_after_ms).  So that a
     * request is seen and answered within about a second at any ttl, it
     * renews its holds at least every 250 ms and, as a ready follower,
     * reads the row at least every 250 ms (or every heartbeat_ms,
     * retry_ms, where those are shorter): about four statements a second
     * per supervisor, renews batched as ever.  The ready
     * row needs INSERT on the lease table the first time (it is seeded
     * like a group's presence row; a stopped follower's free row is
     * taken before a new one is made).  0 (the default): none of this;
     * the supervisor still honours a request to hand over and takes a
     * row reserved for it. */
    int handoff;
    /* The priority every take of this lease writes into the row (a bare
     * lease's too) and, with handoff, the ready row's: a hand-over to
     * "the best" picks the highest (then the one seen most recently),
     * and a ready follower asks a holder of strictly lower priority to
     * hand over to it.  SQLEASE_PRIORITY_MIN..SQLEASE_PRIORITY_MAX;
     * default 0.  Equal priorities never preempt each other. */
    int64_t priority;
    /* With handoff: how long a holder of lower priority holds, at least,
     * counted on the database's clock from its take, before this ready
     * follower asks it to hand over, in ms (the damping that keeps two
     * hosts from passing the lease back and forth).  0: 30000.  At most
     * SQLEASE_MAX_DURATION_MS. */
    int64_t preempt_after_ms;
    /* How long this supervisor's hand-overs reserve the row for their
     * target, in ms, on the database's clock: the target takes it at its
     * next read, and nobody else may before then; a target that does not
     * (gone, not polling) leaves the row free to anyone after it.  0: 3 x
     * retry, at most ttl / 2.  Must be less than the ttl. */
    int64_t handoff_reserve_ms;
} sqlease_options;

/* sqlease_options.history: record no hold. */
#define SQLEASE_HISTORY_OFF (-1)

/* The range of sqlease_options.priority. */
#define SQLEASE_PRIORITY_MIN (-1000000000LL)
#define SQLEASE_PRIORITY_MAX 1000000000LL
/* The names of the ready followers' rows start with this (see
 * sqlease_options.handoff); like SQLEASE_GROUP_PRESENCE_PREFIX it is
 * reserved: no other lease may be named so. */
#define SQLEASE_READY_PREFIX "~ready/"

/* The longest duration any option or parsed duration may be: 30 days.
 * Deadlines are computed as now + duration in 64-bit milliseconds, on this
 * host and in SQL; the cap keeps every such sum far from overflow. */
#define SQLEASE_MAX_DURATION_MS 2592000000LL

/* The default ttl, and the timing derived from it (see sqlease_options);
 * SQLEASE_DEFAULT_RETRY_MS is also the longest retry derived from any
 * ttl. */
#define SQLEASE_DEFAULT_TTL_MS 30000
#define SQLEASE_DEFAULT_HEARTBEAT_MS 10000
#define SQLEASE_DEFAULT_RENEW_DEADLINE_MS 20000
#define SQLEASE_DEFAULT_RETRY_MS 2000
/* sqlease_options.preempt_after_ms when it is 0. */
#define SQLEASE_DEFAULT_PREEMPT_AFTER_MS 30000

/* Zero `opt` (so every field takes its default) and record its size.
 * Mandatory before setting fields (see "Structs that grow").  Use the
 * macro. */
SQLEASE_API void sqlease_options_init_(sqlease_options *opt, size_t size);
#define sqlease_options_init(opt) sqlease_options_init_((opt), sizeof *(opt))

/* Check an options struct without connecting: identifiers, lengths,
 * timing rules, with the built-in defaults (and the timing derived from
 * the ttl) for unset fields.  Returns
 * SQLEASE_OK or SQLEASE_EINVAL with a message that names the field.
 * Thread-safe. */
SQLEASE_API int sqlease_options_check(const sqlease_options *opt, sqlease_error *err);

/* The options a lease or supervisor on `db` will actually use: each unset
 * field (NULL or 0) of `in` takes the value from the DSN's section in
 * odbc.ini (SqleaseTable, SqleaseFireTable, SqleaseHistoryTable, SqleaseName,
 * SqleaseTTL, SqleaseHeartbeat, SqleaseRenewDeadline, SqleaseRetry, read when db was
 * opened by DSN name), else, for heartbeat, renew deadline and retry, the value derived
 * from the ttl in force (which may itself come from odbc.ini), else the
 * built-in default; then the result is checked as sqlease_options_check
 * does.  `out` gets a copy of `in` with those fields
 * filled (as far as the caller's struct reaches, with out->size set: see
 * "Structs that grow"; `out` need not be initialised); its strings point
 * into `in` or into `db` (valid while db is open).  owner stays NULL when
 * unset.  Returns SQLEASE_OK or SQLEASE_EINVAL.  Thread-safe.  A macro:
 * the function takes the size of `out`. */
SQLEASE_API int sqlease_options_effective_(const sqlease_db *db, const sqlease_options *in,
                                           sqlease_options *out, size_t out_size,
                                           sqlease_error *err);
#define sqlease_options_effective(db, in, out, err) \
    sqlease_options_effective_((db), (in), (out), sizeof(sqlease_options), (err))

/* Parse a duration with a unit ("500ms", "30s", "2m", "1h", "2d": a day
 * is 24 h, the wall's days not counted) into milliseconds.  A bare 0 needs no unit and gives 0 (whether 0 is allowed
 * is the caller's to decide).  Any other bare number, a negative, an
 * unknown unit or more than SQLEASE_MAX_DURATION_MS gives SQLEASE_EINVAL
 * with a message saying which.
 * Thread-safe. */
SQLEASE_API int sqlease_parse_duration(const char *text, int64_t *ms, sqlease_error *err);

/* Write the default owner id (host-pid-xxxxxxxx) into buf.  Returns
 * SQLEASE_OK, SQLEASE_EINVAL (buf NULL or cap < 32) or SQLEASE_EPLATFORM. */
SQLEASE_API int sqlease_owner_id(char *buf, size_t cap, sqlease_error *err);

/* ------------------------------------------------------------------ */
/* Migration                                                           */
/* ------------------------------------------------------------------ */

/* Create `table` if it is missing, add the columns an older table lacks
 * (token, version, data, ttl_ms, last_owner, fire_at_ms, handoff_to,
 * priority; it creates no
 * fire table: sqlease_fire_migrate does), fill in the NULLs an older
 * table made by hand without NOT NULL may hold (owner '', times and
 * version 0, a NULL token the database clock), then give the name and
 * owner columns a collation that compares exact bytes where the
 * dialect's default does not (MySQL/MariaDB: utf8mb4_bin), and seed a free row for each of the
 * `count` lease names.  A new row's token starts at the database clock
 * (epoch milliseconds), so that a row deleted and seeded again starts
 * above every token the old row gave out (unless that row was taken more
 * than once per millisecond on average over its whole life): a fenced
 * resource never sees tokens go back.  Idempotent: running it again
 * changes nothing, and a row that exists (held or not) keeps its owner,
 * expiry and token where they are not NULL.  table NULL: SQLEASE_DEFAULT_TABLE.  The table and
 * the names are checked as in sqlease_options (SQLEASE_EINVAL names the
 * one that is not valid).  Returns SQLEASE_OK, SQLEASE_EINVAL, or a
 * connection or statement status. */
SQLEASE_API int sqlease_migrate(sqlease_db *db, const char *table,
                                const char *const *names, size_t count,
                                sqlease_error *err);

/* ------------------------------------------------------------------ */
/* Lease: the protocol, one call at a time                             */
/* ------------------------------------------------------------------ */

typedef struct sqlease_lease sqlease_lease;

/* What the row says, as of one statement.  Filled by the library (see
 * "Structs that grow"): the functions that fill one are macros passing
 * its size, and need nothing initialised. */
typedef struct sqlease_lease_info {
    size_t size;             /* the bytes the library filled */
    char owner[SQLEASE_MAX_OWNER + 1]; /* "" when free */
    int64_t token;           /* fencing token */
    int64_t acquired_at_ms;  /* DB clock, epoch ms */
    int64_t expires_at_ms;   /* DB clock, epoch ms; 0 when released */
    int64_t db_now_ms;       /* DB clock when read; 0 if not read */
    int held;                /* 1: some owner holds an unexpired lease */
    int mine;                /* 1: held by this handle's hold (its owner id
                                and the token it last proved); a hold under
                                the same owner id by another handle is not */
    char data[SQLEASE_MAX_DATA + 1]; /* what the holder published; "" when
                                        none (a NULL column) */
    int64_t version;         /* the row's version: every take, renew and
                                release adds one (since 0.2.1) */
    int64_t ttl_ms;          /* the holder's ttl in ms, as its take wrote it;
                                0 when free or when the take did not write
                                it (a release before 0.2.1 took the row):
                                a waiting follower waits this, not its own
                                ttl, before it takes a row whose holder
                                stopped renewing (since 0.2.1) */
    char last_owner[SQLEASE_MAX_OWNER + 1]; /* who held the row last: the
                                owner a release or forced release took it
                                from; "" if none since the column was
                                added (since 0.2.1) */
    int has_nulls;           /* 1: the row holds a NULL in a column the
                                library writes (owner, token, version,
                                acquired_at_ms, expires_at_ms): a table
                                made by hand or written by another tool.
                                The NULL reads as "" or 0 here; the next
                                acquire repairs the row (one UPDATE that
                                changes its version) before it takes it,
                                and migrate repairs every row (since
                                0.2.1) */
    int64_t fire_at_ms;      /* the last fire a take of this lease claimed
                                (`run --schedule`: the fire's instant on
                                the database clock, epoch ms), kept by
                                every renew and release; 0 if none (since
                                0.2.1) */
    char handoff_to[SQLEASE_MAX_OWNER + 1]; /* the hand-over the row
                                carries, "" none: while held (held), a
                                request that the holder hand over to this
                                owner id ("*": its best ready follower);
                                while free, a reservation for this owner
                                id until expires_at_ms (reserved) (since
                                0.2.1) */
    int64_t priority;        /* the holder's priority, as its take wrote it
                                (sqlease_options.priority); 0 when free
                                (since 0.2.1) */
    int reserved;            /* 1: the row is free but reserved for
                                handoff_to until expires_at_ms by the
                                database's clock: only that owner may take
                                it before then (since 0.2.1) */
} sqlease_lease_info;

/* Make a lease handle on `db` (which must outlive it).  Only ttl_ms,
 * min_hold_ms, table, name and owner of `opt` are used (and checked: the
 * supervisor's timing rules do not apply to a bare lease).  Sends no
 * statement.  Returns SQLEASE_OK, SQLEASE_EINVAL, SQLEASE_ENOMEM,
 * SQLEASE_EPLATFORM (owner id). */
SQLEASE_API int sqlease_lease_new(sqlease_lease **out, sqlease_db *db,
                                  const sqlease_options *opt, sqlease_error *err);
SQLEASE_API void sqlease_lease_free(sqlease_lease *lease);

/* The owner id this handle writes.  Owned by the handle. */
SQLEASE_API const char *sqlease_lease_owner(const sqlease_lease *lease);
SQLEASE_API const char *sqlease_lease_name(const sqlease_lease *lease);

/* Renew the hold this handle has, or take the lease if it is free (no
 * owner) or expired, decided by the database.  A handle that holds sends
 * the renew, one UPDATE bound to (name, owner, token): it keeps the token.
 * A handle that does not (or whose renew found its hold gone: an expiry,
 * a forced release) reads the row and the database clock (one SELECT)
 * and, only if the row is free or expired, sends the take: one UPDATE
 * bound to the token it read, which gives a new token (that one + 1, even
 * to the previous owner of an expired lease), writes the options' data,
 * and never joins a live hold, not even one under this handle's owner
 * id: a second process with the same owner id, or a restarted one, waits
 * like anyone else.  So a miss costs 1 statement, a take 2, a renew 1.
 * `info` (may be NULL) gets, after a renew, the owner, token and data;
 * after a miss, the row as read (the holder, its token, expiry and data);
 * after a take, the new hold, with db_now_ms the clock of the read before
 * it (acquired_at_ms and expires_at_ms are lower bounds, by the time
 * between the two statements).  Returns SQLEASE_OK (held),
 * SQLEASE_NOT_HELD (another hold is live, a concurrent take won -- a
 * serialization failure or a deadlock on the take reads so --, or this
 * handle's hold is gone and taking it again failed: the message says
 * why), SQLEASE_ENOROW, SQLEASE_ENOTABLE, SQLEASE_EROWCOUNT,
 * SQLEASE_ECLOCK, or a connection or statement status (for a holder: the
 * renew's answer is unknown, which is not a loss).  Not thread-safe for
 * one handle (use one handle per thread, or a supervisor).  A macro
 * (see "Structs that grow"): the function takes info's size. */
SQLEASE_API int sqlease_lease_acquire_(sqlease_lease *lease, sqlease_lease_info *info,
                                       size_t info_size, sqlease_error *err);
#define sqlease_lease_acquire(lease, info, err) \
    sqlease_lease_acquire_((lease), (info), sizeof(sqlease_lease_info), (err))

/* Give up the hold this handle last proved, so a successor can take it
 * at once, or, with min_hold_ms in the handle's options, once
 * acquired_at + min_hold_ms has passed on the database clock (the row
 * stays held by this hold until then; *released is 1 either way).
 * Scoped to the hold (name, owner id and token): a handle that
 * lost the lease, or another handle with the same owner id, changes
 * nothing.  The token is remembered through a failed renew, so a holder
 * whose renews fail can still give its hold up; a handle that never held
 * sends nothing.  *released (may be NULL) is 1 if a row was cleared.
 * Returns SQLEASE_OK or a connection or statement status. */
SQLEASE_API int sqlease_lease_release(sqlease_lease *lease, int *released,
                                      sqlease_error *err);

/* Admin: clear the row whoever holds it.  The token is left as it is, so
 * the next take still gets a higher one.  With a holder history (the
 * options' history_table), the row is read first, so that the record of
 * the force ends the hold that was cleared and no later one: three
 * statements (the read, the clear, the record) instead of one.
 * *released (may be NULL) is 1 if a row was cleared.  Returns SQLEASE_OK,
 * SQLEASE_EINVAL (lease NULL), or a connection or statement status of
 * the clear; a failed read leaves the force unrecorded (the holder's own
 * end is recorded instead), a failed record is logged, and neither is
 * returned. */
SQLEASE_API int sqlease_lease_release_force(sqlease_lease *lease, int *released,
                                            sqlease_error *err);

/* Read the row and the DB clock (one SELECT).  Returns SQLEASE_OK,
 * SQLEASE_ENOROW, SQLEASE_ENOTABLE, SQLEASE_ECLOCK, or a connection or
 * statement status.  A macro (see "Structs that grow"): the function
 * takes info's size. */
SQLEASE_API int sqlease_lease_status_(sqlease_lease *lease, sqlease_lease_info *info,
                                      size_t info_size, sqlease_error *err);
#define sqlease_lease_status(lease, info, err) \
    sqlease_lease_status_((lease), (info), sizeof(sqlease_lease_info), (err))

/* Acquire, waiting at most timeout_ms (0..SQLEASE_MAX_DURATION_MS) for
 * the lease: tries at once, then every `retry` of the options the handle
 * was made with (default 2 s), each try as sqlease_lease_acquire, except
 * that a wait of at least the ttl takes a row someone has only once it
 * has seen it unchanged for a ttl, then whatever the database's clock
 * says (see take_by_expiry in sqlease_options: a step of that clock then
 * hands it no live hold and keeps no dead one past the watch; a released
 * row is taken at once).  An
 * outage is retried like a live hold.  Returns SQLEASE_OK (held; `info`
 * as after sqlease_lease_acquire), SQLEASE_NOT_HELD when the time is up
 * (the message ends with the last try's reason), at once SQLEASE_EINVAL,
 * SQLEASE_ENOROW, SQLEASE_ENOTABLE and the other statuses no retry can
 * change.  Blocks the calling thread: no try starts after the timeout,
 * but one that started before it runs to its own bound, so the call
 * returns within timeout_ms + the handle's query timeout + 500 ms.  Not
 * thread-safe for one handle.  A macro (see "Structs that grow"): the
 * function takes info's size. */
SQLEASE_API int sqlease_lease_acquire_wait_(sqlease_lease *lease, int64_t timeout_ms,
                                            sqlease_lease_info *info, size_t info_size,
                                            sqlease_error *err);
#define sqlease_lease_acquire_wait(lease, timeout_ms, info, err) \
    sqlease_lease_acquire_wait_((lease), (timeout_ms), (info), sizeof(sqlease_lease_info), (err))

/* ------------------------------------------------------------------ */
/* The fence: prove the hold inside your own statement                  */
/* ------------------------------------------------------------------ */

/*
 * The lease row lives in the application's own database, so a write there
 * can prove the hold atomically:
 *
 *     UPDATE jobs SET state = ? WHERE id = ? AND <fence.sql>
 *
 * binding the statement's own values first, then fence.values in order.
 * The predicate is the dialect's (templates/dialects.toml)
 *     EXISTS (SELECT 1 FROM <table> WHERE name = ? AND owner = ? AND
 *             token = ? AND expires_at_ms > <database clock>)
 * with the dialect's exactness rules (on MySQL/MariaDB and SQL Server each
 * of name and owner is compared twice, value and length, so a value may
 * be bound to two markers).  It is true only while the row still has this
 * hold's owner and token and has not expired by the database clock, as
 * the statement reads the row: once the hold is gone (a take by another
 * owner, an expiry, a forced release) the write changes nothing.  The
 * check takes no lock on the lease row, so a take can commit while the
 * caller's transaction that passed the check is still open; keep such
 * transactions short next to ttl - renew_deadline.
 */

#define SQLEASE_FENCE_MAX_VALUES 16

typedef enum sqlease_value_type {
    SQLEASE_VALUE_TEXT = 1,   /* bind as character data (SQL_C_CHAR) */
    SQLEASE_VALUE_INT64 = 2   /* bind as a 64-bit integer (SQL_C_SBIGINT) */
} sqlease_value_type;

typedef struct sqlease_value {
    int type;             /* sqlease_value_type */
    const char *text;     /* TEXT: NUL-terminated UTF-8; NULL for INT64 */
    int64_t int64;        /* INT64 */
} sqlease_value;

/*
 * One hold's fence.  Caller-allocated; it grows at its end in later
 * versions, so declare it, then SQLEASE_FENCE_INIT(&f) (which records
 * sizeof f as this header has it: the library then writes only the fields
 * that fit, whatever version it is), then fill it with
 * sqlease_supervisor_fence or sqlease_lease_fence.
 *
 * Every string points into the lease or supervisor handle the fence came
 * from (or into static storage: dialect) and stays valid, unchanged,
 * until that handle is freed; the fence itself owns nothing and needs no
 * clean-up.  A later call never changes a fence already filled: it is a
 * snapshot of one hold (its token is copied in).
 */
typedef struct sqlease_fence {
    size_t size;          /* set by SQLEASE_FENCE_INIT; never change it */
    const char *sql;      /* the predicate, with `?` markers */
    size_t nvalues;       /* markers in sql */
    sqlease_value values[SQLEASE_FENCE_MAX_VALUES]; /* to bind, in marker order */
    const char *name;     /* the lease name */
    const char *owner;    /* the holder's owner id */
    int64_t token;        /* the hold's fencing token */
    const char *dialect;  /* "sqlite", "postgres", ... (static) */
} sqlease_fence;

/* Zero *f and record its size.  Use the macro. */
SQLEASE_API void sqlease_fence_init_(sqlease_fence *f, size_t size);
#define SQLEASE_FENCE_INIT(f) sqlease_fence_init_((f), sizeof *(f))

/* The fence of the hold this handle last took or renewed (whether or not
 * it has expired since: the predicate then is false in the database).
 * Sends no statement.  Returns SQLEASE_OK, SQLEASE_NOT_HELD (this handle
 * holds nothing: never took the lease, lost it, or released it), or
 * SQLEASE_EINVAL (NULL, or f not initialised).  Not thread-safe for one
 * handle (as every bare lease call). */
SQLEASE_API int sqlease_lease_fence(sqlease_lease *lease, sqlease_fence *f,
                                    sqlease_error *err);

/* The fence with its values written into the SQL as literals, for a
 * program that cannot bind parameters (a shell script passing it to psql,
 * mariadb or sqlite3): at most cap bytes with the NUL into buf.  Quoted by
 * the dialect's rules: '...' with '' doubled (SQLite, SQL Server);
 * PostgreSQL E'...' with backslash and quote escaped and every non-ASCII
 * character as \uXXXX, so the literal means the same whatever
 * standard_conforming_strings and client_encoding say; MySQL/MariaDB
 * _utf8mb4'...' with '' doubled.  A value that cannot be written safely
 * is refused with SQLEASE_EINVAL and a message saying why: on
 * MySQL/MariaDB a backslash (whether it is an escape depends on the
 * session's sql_mode, NO_BACKSLASH_ESCAPES).  (A NUL cannot occur: names
 * and owner ids are checked.)  Returns SQLEASE_OK, or SQLEASE_EINVAL (as
 * above, f not filled, or buf too small: the message gives the size
 * needed; SQLEASE_FENCE_LITERAL_MAX always suffices).  Thread-safe. */
#define SQLEASE_FENCE_LITERAL_MAX 8192
SQLEASE_API int sqlease_fence_literal(const sqlease_fence *f, char *buf, size_t cap,
                                      sqlease_error *err);

/* ------------------------------------------------------------------ */
/* Every lease of a table                                               */
/* ------------------------------------------------------------------ */

/* Called once per row by sqlease_list, in name order, on the caller's
 * thread, with no statement in flight (so it may use the library, the
 * same db included).  name and info are valid only during the call;
 * info->mine is 0, and info->size the library's own sizeof (a callback
 * built against a later header reads a field past it as unset).  Return
 * 0 to go on, anything else to stop. */
typedef int (*sqlease_list_fn)(void *userdata, const char *name,
                               const sqlease_lease_info *info);

/* Every lease row of `table` (NULL: the DSN's SqleaseTable, else
 * SQLEASE_DEFAULT_TABLE), held or free, with its holder, token, times and
 * data, each with the database clock, ordered by name (the database's
 * collation).  Rows are read a page of 100 at a time, one SELECT per page
 * (each bounded as every statement); a row a page boundary straddles with
 * a concurrent change is seen once, as it was when its page was read.
 * Returns SQLEASE_OK (all rows given, or fn asked to stop),
 * SQLEASE_EINVAL (db or fn NULL, bad table), SQLEASE_ENOTABLE,
 * SQLEASE_ECLOCK, SQLEASE_ENOMEM, or a connection or statement status
 * (rows already given stay given).  Thread-safe. */
SQLEASE_API int sqlease_list(sqlease_db *db, const char *table, sqlease_list_fn fn,
                             void *userdata, sqlease_error *err);

/* ------------------------------------------------------------------ */
/* Supervisor: keep work running exactly while the lease is held        */
/* ------------------------------------------------------------------ */

typedef struct sqlease_supervisor sqlease_supervisor;

/* A supervisor's state, filled by sqlease_supervisor_state (see "Structs
 * that grow": nothing needs initialising). */
struct sqlease_state {
    size_t size;              /* the bytes the library filled */
    int holding;              /* 1 while the work is running */
    int64_t token;            /* token of the current or last hold, 0 none */
    int64_t deadline_in_ms;   /* ms until the work is stopped unless renewed;
                                 0 when not holding */
    int64_t last_contact_ago_ms; /* ms since the database last answered;
                                    -1 if it never has */
    uint64_t statements;      /* lease statements this supervisor sent */
    uint64_t acquires;        /* successful acquires (takes + renews) */
    uint64_t takes;           /* acquires that started a new hold */
    uint64_t renew_failures;  /* holder acquires that failed with an error */
    uint64_t losses;          /* holds that ended other than by shutdown */
    char owner[SQLEASE_MAX_OWNER + 1];
    char name[SQLEASE_MAX_NAME + 1];
    int64_t fire_at_ms;       /* with sqlease_options.schedule: the fire the
                                 current or last hold's take claimed (epoch
                                 ms, database clock); 0 none (since 0.2.1) */
    uint64_t handoffs;        /* holds this supervisor handed over (since
                                 0.2.1) */
    int64_t priority;         /* its priority now (sqlease_options.priority,
                                 sqlease_supervisor_set_priority) (since
                                 0.2.1) */
    int ready;                /* 1 while its ready row is held (with
                                 sqlease_options.handoff) (since 0.2.1) */
};

/* Validate `opt`, make a lease on `db` (which must outlive the
 * supervisor), run the first acquire synchronously (so on_started has
 * been called, on this thread, before this returns if the lease was
 * free), then keep renewing or retrying in the background.
 *
 * Threads: a supervisor has none of its own.  Every supervisor of one
 * sqlease_db shares that handle's threads, started with the first and
 * stopped with the last: a runner that sends their statements, a
 * watchdog that stops the work at proof + renew_deadline even while a
 * statement hangs, and a callback pool of one thread (more only while
 * callbacks run at the same moment; see on_started).  With the handle's
 * statement worker, that is four threads per sqlease_db however many
 * leases it supervises.
 *
 * Statements: the runner sends them in rounds.  The renews due within
 * half a heartbeat of each other, of leases with the same table and ttl,
 * go as one statement (one per chunk of the dialect's batch size: see
 * docs/c-api.md, "Many leases on one handle"), with each lease's outcome
 * known exactly (a lease whose hold is gone is a loss for it alone); the
 * followers' polls of one table, due within half a retry, go as one
 * read, then one take of the rows that read found free or (a follower
 * that watches) unchanged for a ttl, each bound to its version as read
 * (a lone one as the single take);
 * a take by the database's expiry alone (take_by_expiry) goes on its
 * own.  A renew is sent early, never late.  A lone lease sends the same single statements as
 * sqlease_lease_acquire.  The handle's worker serves the runner and
 * every other caller earliest deadline first.
 *
 * Returns SQLEASE_OK (running, whether or not it holds the lease),
 * SQLEASE_EINVAL, SQLEASE_ENOMEM, SQLEASE_EPLATFORM, or SQLEASE_ENOROW /
 * SQLEASE_ENOTABLE / SQLEASE_EROWCOUNT (a broken installation: nothing is
 * started).  A connection error on the first acquire is not fatal: the
 * supervisor starts and keeps retrying.  Thread-safe: any thread may
 * start supervisors on one handle at the same time. */
SQLEASE_API int sqlease_supervisor_start(sqlease_supervisor **out, sqlease_db *db,
                                         const sqlease_options *opt, sqlease_error *err);

/* Stop: stop renewing, stop the work (on_stopped with
 * SQLEASE_STOP_SHUTDOWN, on this thread, if it was running: at once, even
 * while a statement is in flight, once a callback running on another
 * thread has returned), then release the lease so a successor can take
 * it within one retry.  The whole call returns within the handle's query
 * timeout + 500 ms (plus what a callback running on another thread takes
 * to return): a statement in flight answers or is abandoned by its own
 * bound, and the release gets what is left.  When the database does not
 * answer in that time (a frozen server, a network that drops every
 * packet) the call returns
 * SQLEASE_ETIMEOUT with the work stopped and the lease not released (it
 * expires by itself within the ttl); calling stop again tries the release
 * again.  Idempotent once it has returned anything but SQLEASE_ETIMEOUT.
 * Returns SQLEASE_OK, SQLEASE_ETIMEOUT, SQLEASE_ESTATE (called from one
 * of this supervisor's callbacks), or the release's status. */
SQLEASE_API int sqlease_supervisor_stop(sqlease_supervisor *sup, sqlease_error *err);

/* Start n supervisors on one handle at once: sqlease_supervisor_start
 * for each opts[i] (out[i] gets it, NULL when it did not start), with the
 * first acquires batched: the supervisors of one table, ttl, owner and
 * data send one read of their rows and one take of the rows it found free
 * (owner empty) per chunk of the dialect's batch_max, instead of two
 * statements each.  Each lease's answer is its own: a take that another
 * process won is a miss for that lease alone (it then sends what a lone
 * start sends), and a row some owner has, even expired, is never taken
 * by the batch (the follower's watch applies as for any follower).  Each
 * on_started of a lease taken runs on this thread before the call
 * returns, as for sqlease_supervisor_start.  opts is an array of n
 * pointers (each initialised with SQLEASE_OPTIONS_INIT); rcs (may be
 * NULL) gets each one's status, as sqlease_supervisor_start returns it.
 * Returns SQLEASE_OK when all started, else the first failure (err
 * says which lease); SQLEASE_EINVAL for NULL out, db or opts.
 * Thread-safe as sqlease_supervisor_start. */
SQLEASE_API int sqlease_supervisor_start_each(sqlease_supervisor **out, size_t n,
                                              sqlease_db *db,
                                              const sqlease_options *const *opts, int *rcs,
                                              sqlease_error *err);

/* Stop n supervisors (NULL entries skipped, one listed twice stopped
 * once): first every work, as sqlease_supervisor_stop does for each (each
 * on_stopped with SQLEASE_STOP_SHUTDOWN on this thread, each statement in
 * flight waited for within its own stop's bound), and only after every
 * on_stopped has returned, the releases: one statement per chunk of the
 * supervisors of one table and minimum hold, each hold's answer its own,
 * all within the handle's query timeout + 500 ms.  rcs (may be NULL)
 * gets each one's status as sqlease_supervisor_stop returns it.  Returns
 * SQLEASE_OK when all stopped and released, else the first failure;
 * SQLEASE_ESTATE (nothing stopped) when called from the callback of one
 * of them.  The supervisors are still to be freed (sqlease_supervisor_free
 * then sends nothing more).  Thread-safe as sqlease_supervisor_stop, but
 * none of their callbacks (on_started, on_holder, on_stopped) may stop or
 * free another supervisor of the same call while it runs: the call holds
 * every member's stop and waits for each member's running callback, so
 * the two would wait for each other. */
SQLEASE_API int sqlease_supervisor_stop_each(sqlease_supervisor **sups, size_t n, int *rcs,
                                             sqlease_error *err);

/* Stop (if not stopped) and free.  After a stop that returned
 * SQLEASE_ETIMEOUT it waits for the runner to finish the supervisor's
 * statement (bounded as every statement is: with the login timeout on
 * top when it had to reconnect) and tries the release once more, so it
 * may take up to twice the stop's bound plus the login timeout.  With
 * hand-over on (sqlease_options.handoff) the same holds of the ready
 * row: a stop that found no time left to release it leaves that to the
 * free, which may then take as long whatever the stop returned. */
SQLEASE_API void sqlease_supervisor_free(sqlease_supervisor *sup);

/* A snapshot of the supervisor's state.  Returns SQLEASE_OK, or
 * SQLEASE_EINVAL (NULL, or a size too small for `size` itself).
 * Thread-safe.  A macro (see "Structs that grow"): the function takes the
 * size of *st. */
SQLEASE_API int sqlease_supervisor_state_(sqlease_supervisor *sup, sqlease_state *st,
                                          size_t size);
#define sqlease_supervisor_state(sup, st) \
    sqlease_supervisor_state_((sup), (st), sizeof(sqlease_state))

/* Wait until the supervisor holds the lease and its on_started has
 * returned, at most timeout_ms (0..SQLEASE_MAX_DURATION_MS; 0 only
 * looks).  Sends nothing itself: the handle's runner takes the lease at
 * the supervisor's next retry.  Returns SQLEASE_OK (holding now; it may
 * of course lose the lease right after), SQLEASE_NOT_HELD (not holding at
 * the timeout), SQLEASE_ESTATE (the supervisor is stopped or stopping, or
 * the call comes from one of its own callbacks), SQLEASE_EINVAL.  Returns
 * within timeout_ms (plus scheduling), whatever the database does.
 * Thread-safe: any number of threads may wait at once. */
SQLEASE_API int sqlease_supervisor_await(sqlease_supervisor *sup, int64_t timeout_ms,
                                         sqlease_error *err);

/* The fence of the hold whose work is running (see sqlease_fence): the
 * token on_started was given.  Sends no statement.  Returns SQLEASE_OK,
 * SQLEASE_NOT_HELD (the work is not running: no hold, or it was stopped;
 * the message says which), SQLEASE_EINVAL (NULL, or f not initialised).
 * The strings live as long as the supervisor.  Thread-safe, and callable
 * from on_started. */
SQLEASE_API int sqlease_supervisor_fence(sqlease_supervisor *sup, sqlease_fence *f,
                                         sqlease_error *err);

/* Health: SQLEASE_OK, or SQLEASE_ESTATE with a message when a holder is
 * past its deadline or a follower has not reached the database for ttl.
 * Thread-safe. */
SQLEASE_API int sqlease_supervisor_health(sqlease_supervisor *sup, sqlease_error *err);

/* ------------------------------------------------------------------ */
/* Handing the lease over                                               */
/* ------------------------------------------------------------------ */

/*
 * A hand-over moves a hold to a chosen follower without waiting for a
 * retry, let alone a ttl, and never runs the work in two places:
 *
 *  - Asked for: sqlease_lease_request_handoff (any process: an
 *    operator's `sqlease transfer`) writes a request into the row of the
 *    live hold it reads, for one owner id or "*" (the holder's best ready
 *    follower); a ready follower of higher priority asks for itself.
 *    The holder's renews match only a hold with no request, so its next
 *    renew (within a heartbeat; with handoff, within 250 ms) is refused:
 *    the supervisor lets the work run on for a lead of a follower's read
 *    interval (retry_ms; with handoff, at most 250 ms) and 50 ms (within
 *    its renew deadline; the target, reading the row that often, then
 *    reads it every 50 ms), stops it (on_stopped with SQLEASE_STOP_HANDOFF) and, once
 *    on_stopped has returned, hands the hold over.
 *    sqlease_supervisor_handoff asks a supervisor's own hold to do the
 *    same.
 *  - The hand-over is one statement scoped to the hold (name, owner id,
 *    token), as a release is: the row becomes free and reserved for the
 *    target until handoff_reserve_ms later on the database's clock.
 *    Every take refuses a reserved row to any owner but its target until
 *    then; the target's next read (its supervisor polls every retry, a
 *    ready follower at least every 250 ms, and
 *    every 50 ms or retry, whichever is less, while it sees a request for
 *    it) shows the row reserved for it and takes it, with token + 1.  A
 *    target that is gone leaves the row free to anyone once the
 *    reservation has passed.  A "*" that finds no ready follower when the
 *    hold is handed over releases the row instead.
 *  - The row stays the old hold's until that statement, so nobody can
 *    take it while the old work stops; a holder that dies with a request
 *    pending leaves the row to expire as any dead holder's does.
 *
 * Holders of an earlier release ignore requests (their renew does not
 * look), and their followers take a reserved row as a free one.
 */

/* Hand the hold whose work runs over now: to the owner id `to`, or (NULL
 * or "*") to the best ready follower (the live ready row of another
 * owner with the highest priority, then the one seen most recently),
 * read with one statement first.  Writes a request into its own row, so
 * that the target polls fast, and returns; the work runs on for a lead
 * of retry_ms + 50 ms (no renew is sent meanwhile; none when the renew
 * deadline is nearer than that), by which time the target, which reads
 * the row every retry, reads it every 50 ms; then the work is stopped
 * (on_stopped with SQLEASE_STOP_HANDOFF, on a pool thread), and once
 * on_stopped has returned the handle's runner sends the hand-over (and
 * sqlease_supervisor_stop, called meanwhile, sends it itself instead of
 * the release), and the supervisor goes on as a follower that does not
 * contend before the reservation has passed.  Returns SQLEASE_OK (the
 * work is being stopped), SQLEASE_NOT_HELD (the work is not running),
 * SQLEASE_NO_FOLLOWER (no ready follower: nothing changed, the work goes
 * on), SQLEASE_ESTATE (called from one of its own callbacks), or a
 * statement's status (nothing changed).  Bounded as a statement is (two
 * of them).  Thread-safe. */
SQLEASE_API int sqlease_supervisor_handoff(sqlease_supervisor *sup, const char *to,
                                           sqlease_error *err);

/* Change the supervisor's priority (SQLEASE_PRIORITY_MIN..MAX): its next
 * takes write it, and its ready row (with handoff) is given up and taken
 * again with it (two or three statements), so that hand-overs pick from
 * it at once.  A hold already taken keeps the priority its take wrote.
 * To drain a host before maintenance: the lowest priority, then
 * sqlease_supervisor_handoff(sup, NULL, ...) if it holds.  Returns
 * SQLEASE_OK, SQLEASE_EINVAL, SQLEASE_ESTATE (stopped, or from its own
 * callback), or a statement's status (the ready row could not be taken
 * again: the supervisor is not listed as ready until this is called
 * again).  Thread-safe. */
SQLEASE_API int sqlease_supervisor_set_priority(sqlease_supervisor *sup, int64_t priority,
                                                sqlease_error *err);

/* Ask whoever holds the lease now to hand it over to the owner id `to`
 * (NULL or "*": to its best ready follower): one read of the row, then
 * one UPDATE that writes the request only while that hold is live and
 * carries no request.  `info` (may be NULL) gets the row as read, with
 * handoff_to set on success: pass it to sqlease_lease_cancel_handoff to
 * withdraw the request, and compare its owner and token with later reads
 * to see the lease move.  The holder answers at its next renew.  Returns
 * SQLEASE_OK (requested), SQLEASE_NOT_HELD (nobody holds the lease: it
 * is free, expired or reserved), SQLEASE_PENDING (a request or a
 * reservation is there already; info says for whom), SQLEASE_EINVAL (a
 * bad `to`), SQLEASE_ENOROW, SQLEASE_ENOTABLE, or a statement's status.
 * Not thread-safe for one handle.  A macro (see "Structs that grow"):
 * the function takes info's size. */
SQLEASE_API int sqlease_lease_request_handoff_(sqlease_lease *lease, const char *to,
                                               sqlease_lease_info *info, size_t info_size,
                                               sqlease_error *err);
#define sqlease_lease_request_handoff(lease, to, info, err) \
    sqlease_lease_request_handoff_((lease), (to), (info), sizeof(sqlease_lease_info), (err))

/* Withdraw the request `requested` describes (the info a successful
 * sqlease_lease_request_handoff filled: its holder, token and
 * handoff_to), if the row still carries exactly that request on that
 * hold: one statement.  *cancelled (may be NULL) is 1 if it did; 0 when
 * the holder has answered it already (or the hold is gone).  Returns
 * SQLEASE_OK, SQLEASE_EINVAL, or a statement's status.  Not thread-safe
 * for one handle. */
SQLEASE_API int sqlease_lease_cancel_handoff(sqlease_lease *lease,
                                             const sqlease_lease_info *requested,
                                             int *cancelled, sqlease_error *err);

/* Called once per live ready row of a lease (see sqlease_options.handoff)
 * by sqlease_lease_ready, on the caller's thread, with no statement in
 * flight: its owner id (valid only during the call), its priority, and
 * how long ago its holder last renewed it (ms, the database's clock; -1
 * if the row does not say).  Return 0 to go on, anything else to stop. */
typedef int (*sqlease_ready_fn)(void *userdata, const char *owner, int64_t priority,
                                int64_t seen_ago_ms);

/* The ready followers of the lease: its live ready rows (expired ones
 * are left out), in the order a hand-over to "the best" prefers them
 * (highest priority, then seen most recently), the lease's holder
 * included if it keeps one.  One statement.  Returns SQLEASE_OK,
 * SQLEASE_EINVAL, SQLEASE_ENOTABLE, SQLEASE_ENOMEM, or a statement's
 * status.  Not thread-safe for one handle. */
SQLEASE_API int sqlease_lease_ready(sqlease_lease *lease, sqlease_ready_fn fn, void *userdata,
                                    sqlease_error *err);


/* ------------------------------------------------------------------ */
/* The fire ledger: each scheduled fire of a job runs once              */
/* ------------------------------------------------------------------ */

/*
 * A scheduler that runs jobs while it holds a lease (from a supervisor's
 * on_started to its on_stopped) records each fire of a job -- the job and
 * the instant it is scheduled for, in epoch ms on the database's clock --
 * in a table of its own, the fire table (default
 * SQLEASE_DEFAULT_FIRE_TABLE: one table for every lease name; the DSN's
 * SqleaseFireTable; sqlease_fire_migrate creates it).  Its key is (lease
 * name, job, fire_at_ms).  The holder claims a fire before it runs it:
 * one statement inserts the fire's row only while the holder's hold (its
 * owner id and token) is live by the database's clock, only once that
 * clock has reached the fire, and only if the fire has no row yet.  So of
 * every holder the lease ever has, on every host, one claims each fire,
 * once; a holder that lost the lease claims nothing.  The row then says
 * how the fire stands (state):
 *   "running"          claimed, its run not ended
 *   "done", "failed"   its run ended (exit_status, duration_ms)
 *   "abandoned"        the hold that claimed it ended first (a later
 *                      holder marked it; the scheduler may run it again,
 *                      attempt + 1)
 *   "skipped", "missed"  not run (note says why)
 * A claim whose statement reaches the database after its hold's expiry
 * has been decided writes nothing; one sent just before may still commit
 * as the lease is taken (the check, as the fence's, takes no lock on the
 * lease row): its row reads 'running' under a token below the new
 * holder's, which the scheduler marks abandoned.
 */

/* One fire's row, filled by the library (see "Structs that grow": the
 * calls that fill one are macros passing its size). */
typedef struct sqlease_fire_info {
    size_t size;                       /* the bytes the library filled */
    char name[SQLEASE_MAX_NAME + 1];   /* the lease name */
    char job[SQLEASE_MAX_JOB + 1];
    int64_t fire_at_ms;                /* the scheduled instant, DB clock */
    char state[SQLEASE_MAX_STATE + 1]; /* see above */
    int attempt;                       /* 1, + 1 per rerun of an abandoned run */
    char owner[SQLEASE_MAX_OWNER + 1]; /* the hold that claimed it */
    char host[SQLEASE_MAX_HOST + 1];   /* the host it ran on */
    int64_t token;                     /* the hold's fencing token */
    int64_t started_at_ms;             /* DB clock; 0: not read back */
    int64_t ended_at_ms;               /* DB clock; 0 while running */
    int has_exit;                      /* 1: exit_status is the run's */
    int exit_status;
    int64_t duration_ms;               /* ended - started; -1: none */
    char note[SQLEASE_MAX_NOTE + 1];   /* why not run, or ""; never NULL */
    int64_t db_now_ms;                 /* DB clock when read; 0: not read */
} sqlease_fire_info;

/* exit_status for "no exit status" (a run that ended without one): the
 * row's exit_status is NULL, and has_exit 0. */
#define SQLEASE_FIRE_NO_EXIT (-2147483647 - 1)

/* Called once per row by sqlease_fire_list, on the caller's thread, with
 * no statement in flight (so it may use the library, the same db
 * included).  info is valid only during the call; info->size is the
 * library's own sizeof.  Return 0 to go on, anything else to stop. */
typedef int (*sqlease_fire_fn)(void *userdata, const sqlease_fire_info *info);

/* Create the fire table `fire_table` if it is missing (NULL: the DSN's
 * SqleaseFireTable, else SQLEASE_DEFAULT_FIRE_TABLE; checked as a lease
 * table is).  Idempotent; a deployment step, like sqlease_migrate (the
 * hosts' role needs SELECT, INSERT, UPDATE and DELETE on it).  Returns
 * SQLEASE_OK, SQLEASE_EINVAL, or a connection or statement status (a
 * privilege the connection lacks is named). */
SQLEASE_API int sqlease_fire_migrate(sqlease_db *db, const char *fire_table,
                                     sqlease_error *err);

/* Claim the fire (job, fire_at_ms) of the supervisor's lease under the
 * hold whose work is running (its owner id and the token on_started was
 * given), recording the options' host (default: this host's name), in
 * the options' fire table.  job: 1..SQLEASE_MAX_JOB bytes, checked as a
 * lease name is; fire_at_ms: positive.  One statement when it claims.
 * Returns SQLEASE_OK (claimed: run it; `info` the row as written,
 * attempt 1, started_at_ms 0), SQLEASE_CLAIMED (the fire has a row:
 * `info` is that row, with the database clock; another holder's, or this
 * hold's own earlier claim), SQLEASE_NOT_DUE (the hold is live but the
 * database's clock has not reached fire_at_ms: claim it again then),
 * SQLEASE_NOT_HELD (the work is not running, or the hold is gone),
 * SQLEASE_EINVAL, SQLEASE_ENOTABLE (no fire table: sqlease_fire_migrate),
 * or a connection or statement status (not known either way: claiming
 * again answers).  `info` may be NULL; it is zeroed on the other
 * statuses.  Thread-safe, callable from on_started.  A macro (see
 * "Structs that grow"): the function takes info's size. */
SQLEASE_API int sqlease_fire_claim_(sqlease_supervisor *sup, const char *job, int64_t fire_at_ms,
                                    sqlease_fire_info *info, size_t info_size,
                                    sqlease_error *err);
#define sqlease_fire_claim(sup, job, fire_at_ms, info, err) \
    sqlease_fire_claim_((sup), (job), (fire_at_ms), (info), sizeof(sqlease_fire_info), (err))

/* Record how the run of a fire this supervisor claimed ended: "done" when
 * ok is non-zero, else "failed", with exit_status (SQLEASE_FIRE_NO_EXIT:
 * none) and the end and duration on the database's clock.  `attempt` is
 * the claim's (info.attempt).  It matches the row of the supervisor's
 * current or last hold (the token of its last on_started) while the row
 * is still 'running', whether or not the hold is live now: a run that
 * lost its lease midway still says how it ended, unless the next holder
 * marked it abandoned.  One statement.  Returns SQLEASE_OK,
 * SQLEASE_NOT_HELD (the row is no longer that running claim, or this
 * supervisor never held), SQLEASE_ENOROW (the fire has no row),
 * SQLEASE_EINVAL, or a connection or statement status.  Thread-safe,
 * callable from on_stopped. */
SQLEASE_API int sqlease_fire_end(sqlease_supervisor *sup, const char *job, int64_t fire_at_ms,
                                 int attempt, int ok, int exit_status, sqlease_error *err);

/* The rows of `fire_table` (NULL: the DSN's SqleaseFireTable, else the
 * default) of lease `name` (NULL: every name) and `job` (NULL: every job)
 * with fire_at_ms >= since_ms, newest first (then by name and job), each
 * with its state, holder, times, exit status and note (db_now_ms 0).
 * Rows are read 100 at a time, one SELECT per window of fire_at_ms, each
 * window before the last (a row a window boundary straddles with a
 * concurrent change is given once, or for a fire inserted at that very
 * instant, not at all).  Returns SQLEASE_OK (every row given, or fn asked
 * to stop), SQLEASE_EINVAL (db or fn NULL, a bad table, name or job),
 * SQLEASE_ENOTABLE, SQLEASE_ENOMEM, or a connection or statement status
 * (rows given stay given).  Thread-safe. */
SQLEASE_API int sqlease_fire_list(sqlease_db *db, const char *fire_table, const char *name,
                                  const char *job, int64_t since_ms, sqlease_fire_fn fn,
                                  void *userdata, sqlease_error *err);

/* ------------------------------------------------------------------ */
/* The holder history: who held a lease, when, and how each hold ended   */
/* ------------------------------------------------------------------ */

/*
 * Every hold of a lease (a take, with its new token, until it ends) is a
 * row of the history table (default SQLEASE_DEFAULT_HISTORY_TABLE: one
 * table for every lease name; the DSN's SqleaseHistoryTable;
 * sqlease_history_migrate creates it), keyed by (lease name, token).  It
 * answers "who held the lease at 03:02, and why did that end".  The
 * library writes it inside the calls it makes anyway, and a renew writes
 * nothing: the take adds one statement (the new hold's row, read from the
 * lease row while it shows that hold) and, when it took over a hold whose
 * holder stopped renewing, one more to close that hold (merged into the
 * first on PostgreSQL); a release, a loss, a forced release one each; a
 * batched take or release one per chunk.  A history statement never
 * changes the lease row and never decides anything: one that fails is
 * logged and skipped, and a missing table is one warning per handle (for
 * an hour), not an error.  Each end is written by whoever knows it
 * first and never written over (`ended`):
 *   "released"     the holder released it (sqlease_lease_release, a
 *                  supervisor's stop, run's end)
 *   "expired"      its holder stopped renewing (a crash, a freeze, a
 *                  partition) and a later take found the row expired:
 *                  written by the taker, ended at the expiry it read
 *   "lost"         the holder's own renew found the hold gone (and no
 *                  taker had closed it): its work was stopped
 *   "deadline"     the supervisor stopped the work at its renew deadline
 *                  (the database did not answer in time) and gave the
 *                  hold up
 *   "forced"       an operator's sqlease_lease_release_force (`sqlease
 *                  release --force`) freed the row
 *   "handed_over"  the holder handed the lease to a successor (on its
 *                  own, or asked by a request: sqlease transfer, a
 *                  follower of higher priority)
 *   ""             the hold lasts (ended_at_ms 0), or its end was not
 *                  recorded (a history statement failed)
 */

/* One hold's row, filled by the library (see "Structs that grow": a
 * field added later is appended). */
typedef struct sqlease_hold_info {
    size_t size;                       /* the bytes the library filled */
    char name[SQLEASE_MAX_NAME + 1];   /* the lease name */
    int64_t token;                     /* the hold's fencing token */
    char owner[SQLEASE_MAX_OWNER + 1]; /* the holder's owner id */
    char host[SQLEASE_MAX_HOST + 1];   /* the host it ran on */
    int64_t pid;                       /* its process id */
    int64_t started_at_ms;             /* DB clock, epoch ms: the take */
    int64_t ended_at_ms;               /* DB clock; 0 while it lasts */
    char ended[SQLEASE_MAX_STATE + 1]; /* how it ended (above); "" none */
    int64_t prev_ended_at_ms;          /* the end of the hold before it
                                          (token - 1); 0: that hold has no
                                          row, or it lasts */
    int64_t gap_ms;                    /* started_at_ms - prev_ended_at_ms:
                                          how long the lease had no holder
                                          before this hold; -1 unknown */
} sqlease_hold_info;

/* Called once per hold by sqlease_history_list, on the caller's thread,
 * with no statement in flight (it may use the library, the same db
 * included).  info is valid only during the call; info->size is the
 * library's own sizeof.  Return 0 to go on, anything else to stop. */
typedef int (*sqlease_history_fn)(void *userdata, const sqlease_hold_info *info);

/* Create the history table `history_table` if it is missing (NULL: the
 * DSN's SqleaseHistoryTable, else SQLEASE_DEFAULT_HISTORY_TABLE; checked
 * as a lease table is).  Idempotent; a deployment step, like
 * sqlease_migrate (the hosts' role needs SELECT, INSERT, UPDATE and
 * DELETE on it).  Returns SQLEASE_OK, SQLEASE_EINVAL, or a connection or
 * statement status (a privilege the connection lacks is named). */
SQLEASE_API int sqlease_history_migrate(sqlease_db *db, const char *history_table,
                                        sqlease_error *err);

/* The holds in `history_table` (NULL: the DSN's SqleaseHistoryTable, else
 * the default) of lease `name` (NULL: every name) that started at or
 * after since_ms (DB clock, epoch ms), newest first (then by name and
 * token), each with the end of the hold before it and the gap.  Rows are
 * read 100 at a time, one SELECT per window of started_at_ms.  Returns
 * SQLEASE_OK (every row given, or fn asked to stop), SQLEASE_EINVAL (db
 * or fn NULL, a bad table or name), SQLEASE_ENOTABLE (run
 * sqlease_history_migrate), SQLEASE_ENOMEM, or a connection or statement
 * status (rows given stay given).  Thread-safe. */
SQLEASE_API int sqlease_history_list(sqlease_db *db, const char *history_table,
                                     const char *name, int64_t since_ms, sqlease_history_fn fn,
                                     void *userdata, sqlease_error *err);


/* ------------------------------------------------------------------ */
/* Group: many leases shared fairly by the processes that join          */
/* ------------------------------------------------------------------ */

/*
 * A group is a list of lease names of one table shared by every process
 * (worker) that starts a group over the same names with the same group
 * name.  Each worker holds at most its fair share, ceil(N / W) + slack,
 * where N is the number of names and W the number of live workers:
 *
 *  - Presence: a worker holds a lease of its own in the same table, named
 *    SQLEASE_GROUP_PRESENCE_PREFIX + group + "/" + 16 hex digits, renewed
 *    by a supervisor in the same batch as the worker's other leases (same
 *    table and ttl), so presence costs no statement of its own per
 *    heartbeat.  sqlease_group_start reads the table once and takes a
 *    presence row of the group that a stopped worker left free; when
 *    there is none, or another worker starting at the same moment took
 *    it, it seeds a row under a random name (one idempotent migrate of
 *    that name).  So the group's presence rows stay as many as the most
 *    workers live at once, plus one per worker that died without
 *    stopping (its row keeps its owner).  Names starting with
 *    SQLEASE_GROUP_PRESENCE_PREFIX are reserved for it: a group refuses
 *    them in `names`, and other programs must not use them.
 *  - Share: once per retry the group reads the table (as sqlease_list
 *    does, with one SELECT per 500 rows, not a statement per lease: once
 *    per retry so that a watch, below, starts within a retry of the
 *    renew it times from), counts the live
 *    presence rows of its group (W, itself included), and compares what
 *    it holds with target = ceil(N / W).  The reads also watch every row
 *    as a waiting follower does: a row (or a presence row) whose owner,
 *    token and version stay the same for a ttl after the read that first
 *    showed them, timed on this process's monotonic clock, is one whose
 *    holder stopped renewing and whose work has stopped; it counts as
 *    free (and that presence as gone), and the group reads again at the
 *    moment such a watch ends.  Below target, it starts supervisors
 *    (sqlease_supervisor_start_each, the usual rules: a released row is
 *    taken at once, a row whose holder died once the watch has run, the
 *    group's watch counting, and the takes of all of them go in one
 *    statement per chunk, each bound to the row's version as read) on
 *    rows free, expired or watched out, never on a live one.
 *    Which free rows each worker takes is planned the same way on every
 *    worker from the read (each free row, in name order, goes to the live
 *    worker still short of the target whose hash of owner id and name is
 *    highest), so that workers below their share do not race for one
 *    row.
 *    Above target + slack on two reads in a row (or above target, when
 *    the read shows another live worker holding fewer than floor(N / W),
 *    which the slack alone could leave at none: 4/4/0 of 8 with slack 1),
 *    it gives back the excess
 *    down to target by a graceful stop of those supervisors (on_stopped
 *    with SQLEASE_STOP_SHUTDOWN, then the release): a lease moves only by
 *    a release and a take, never from under its holder.  The slack and
 *    the two-read rule are the hysteresis that keeps shares from
 *    flapping when W or a race for a free row changes the count by one.
 *
 * With N = 1000 and 4 workers, the shares settle at 250 each; when N is
 * not a multiple of W each live worker settles at floor(N / W) or more
 * (8 among 3 with slack 1: 3/3/2 or 4/2/2).
 */

#define SQLEASE_GROUP_PRESENCE_PREFIX "~presence/"
#define SQLEASE_GROUP_MAX_NAME 32  /* bytes of a group name */

typedef struct sqlease_group sqlease_group;

/* The per-lease callbacks of a group: as on_started and on_stopped in
 * sqlease_options (same threads, same alternation per lease, same
 * rules), with the lease's name, valid only during the call.  Either may
 * be NULL.  They may call sqlease_group_held on their own group but must
 * not stop or free it.  Caller-owned; this struct never grows. */
typedef struct sqlease_group_callbacks {
    void (*on_started)(void *userdata, const char *name, int64_t token);
    void (*on_stopped)(void *userdata, const char *name, int reason);
    void *userdata;
} sqlease_group_callbacks;

/* Join the group `group` (1..SQLEASE_GROUP_MAX_NAME bytes of letters,
 * digits, '_', '-' and '.') over `names` (count >= 1 lease names, each
 * valid as in sqlease_options, none repeated or reserved; copied), whose
 * rows must exist (sqlease_migrate).  `opt` gives the table, owner id
 * (NULL: generated, one for the whole group), timing, data and log of
 * every lease of the group (its name, callbacks and userdata are
 * ignored); `slack` (0..count) is how many leases above target a worker
 * keeps before it gives any back (1 is a good value: see above).  `db`
 * must outlive the group; all the group's supervisors share its threads,
 * and the group adds one thread of its own, which reads the table once
 * per retry and starts and stops supervisors.  Returns at once after
 * the presence lease is taken (a read of the table, then a take of a
 * free presence row or the seed and take of a new one); the leases are
 * taken by that thread.
 * Returns SQLEASE_OK (*out owned by the caller: sqlease_group_free),
 * SQLEASE_EINVAL, SQLEASE_ENOMEM, SQLEASE_EPLATFORM, or the status of
 * seeding or starting the presence lease (SQLEASE_ENOTABLE, a connection
 * status, ...).  Thread-safe. */
SQLEASE_API int sqlease_group_start(sqlease_group **out, sqlease_db *db,
                                    const sqlease_options *opt, const char *group,
                                    const char *const *names, size_t count, int slack,
                                    const sqlease_group_callbacks *cb,
                                    sqlease_error *err);

/* Leave the group: stop the balancing thread, then stop every lease's
 * supervisor (on_stopped with SQLEASE_STOP_SHUTDOWN for those held, on
 * this thread, and a release each) and the presence lease.  Returns
 * SQLEASE_OK, SQLEASE_ESTATE (called from one of the group's
 * callbacks), or the first non-OK status of a supervisor stop (see
 * sqlease_supervisor_stop; the others are stopped anyway).  Idempotent;
 * a second thread's stop while one runs waits for it.
 * Within count x (query timeout + 500 ms) at worst. */
SQLEASE_API int sqlease_group_stop(sqlease_group *g, sqlease_error *err);

/* Stop (if not stopped) and free.  NULL is harmless. */
SQLEASE_API void sqlease_group_free(sqlease_group *g);

/* Which leases this worker holds now (their work is running): up to cap
 * names into names[] (pointers into the group, valid until it is freed),
 * in the order of the names given to sqlease_group_start, and the number
 * held into *held (may exceed cap; may be NULL).  names may be NULL when
 * cap is 0.  Sends no statement.  Returns SQLEASE_OK or SQLEASE_EINVAL.
 * Thread-safe, callable from the group's callbacks. */
SQLEASE_API int sqlease_group_held(sqlease_group *g, const char **names, size_t cap,
                                   size_t *held, sqlease_error *err);

/* Counters of the group, for monitoring and the bench.  Filled by
 * sqlease_group_stats; this struct never grows (a later version adds a
 * new struct). */
typedef struct sqlease_group_stats {
    uint64_t workers;    /* live workers (W) at the last read, 0 before one */
    uint64_t target;     /* ceil(N / W) at the last read */
    uint64_t held;       /* leases held now */
    uint64_t takes;      /* supervisors started for a share (candidates) */
    uint64_t gives;      /* leases given back above target + slack */
    uint64_t reads;      /* reads of the table (each one sqlease_list) */
} sqlease_group_stats;

/* A snapshot of the counters.  Returns SQLEASE_OK or SQLEASE_EINVAL.
 * Thread-safe. */
SQLEASE_API int sqlease_group_stats_get(sqlease_group *g, sqlease_group_stats *st,
                                        sqlease_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SQLEASE_H */
