/*
 * internal.h -- small helpers shared by the library's own files: error
 * filling, connection-string redaction, logging, identifier checks.
 * Nothing here is exported from the shared library.
 */
#ifndef SQLEASE_INTERNAL_H
#define SQLEASE_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "sqlease.h"

/* MinGW: to GCC, format(printf) means msvcrt's dialect (no %zu); the
 * build selects MinGW's C99 printf instead (__USE_MINGW_ANSI_STDIO), and
 * its <stdio.h> names the matching format checker. */
#if defined(__MINGW32__)
#include <stdio.h>
#endif
#if defined(__MINGW32__) && defined(__MINGW_PRINTF_FORMAT)
#define SQLEASE_PRINTF(a, b) __attribute__((format(__MINGW_PRINTF_FORMAT, a, b)))
#elif defined(__GNUC__)
#define SQLEASE_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SQLEASE_PRINTF(a, b)
#endif

/*
 * A planted bug: the simulator's mutation check (tests/sim/sim.c).  In
 * the simulator's build (SQLE_SIM) SQLE_PLANTED(name) is true while
 * `sqlease-sim --plant name` runs, and each use enters `name` in the
 * list `sqlease-sim --list-plants` prints (a section of its own), so a
 * plant is the one line at the place of the bug; in every other build it
 * is the constant 0 and the planted line is dead code.
 */
#ifdef SQLE_SIM
extern const char *sqle_plant;
int sqle_planted(const char *name);
#define SQLE_PLANTED(NAME)                                                              \
    __extension__({                                                                     \
        static const char *const sqle_plant_name_                                       \
            __attribute__((used, section("sqle_plants"))) = #NAME;                      \
        sqle_plant != NULL && sqle_planted(sqle_plant_name_);                           \
    })
#else
#define SQLE_PLANTED(NAME) 0
#endif

/* Fill err (if not NULL) and return status.  sqlstate may be NULL. */
int sqle_err(sqlease_error *err, int status, const char *sqlstate, long native,
             const char *fmt, ...) SQLEASE_PRINTF(5, 6);
/* Shorthand without SQLSTATE. */
int sqle_fail(sqlease_error *err, int status, const char *fmt, ...) SQLEASE_PRINTF(3, 4);
/* Reset err to status OK, empty message. */
void sqle_err_clear(sqlease_error *err);

/* A malloc'd copy of a DSN name or connection string with the value of
 * every password-like key replaced by "***": a key (case-insensitive,
 * blanks around it ignored) that ends in "pwd" (PWD, ENCRYPT_PWD,
 * PRIV_KEY_FILE_PWD) or contains "passwd", "password", "passphrase" or
 * "secret".  NULL on out-of-memory. */
char *sqle_redact(const char *conn);
/* Redact in place inside an arbitrary message (a driver message that
 * quotes the connection string). */
void sqle_redact_inplace(char *msg);

char *sqle_strdup(const char *s);

/* FNV-1a of a string: cheap, for matching an owner id without keeping
 * its copy (the watch, the group) and for spreading texts over buckets. */
uint64_t sqle_hash_text(const char *s);

/* 1 if `t` is a valid table: identifier or schema.identifier, each part
 * [A-Za-z_][A-Za-z0-9_]* and not a reserved word, total length
 * 1..SQLEASE_MAX_TABLE. */
int sqle_valid_table(const char *t);
/* The same, as SQLEASE_OK or SQLEASE_EINVAL with a message naming `what`
 * ("table", "SqleaseTable") and, for a reserved word, the word. */
int sqle_check_table(const char *what, const char *t, sqlease_error *err);
/* 1 if the n bytes at w are, in any case, a word reserved in SQL-92,
 * PostgreSQL, MySQL/MariaDB, SQLite or T-SQL. */
int sqle_reserved_word(const char *w, size_t n);
/* Text read from the table (an owner id, data, a lease name, a message
 * that quotes them) as a person is shown it, on a terminal or in a log:
 * a control character (C0, DEL) or a byte that is not UTF-8 as \xHH, a
 * C1 code point (U+0080..U+009F) as \u00HH, everything else as it is (a
 * backslash too, so that text shown once is shown the same again).
 * Whoever may write the row chooses those bytes, and one reaching a
 * terminal raw is a command to it.  Writes at most cap bytes (never
 * cutting a character's form; SQLE_SHOWN_MAX(n) fits any text of n
 * bytes) and returns buf. */
#define SQLE_SHOWN_MAX(n) (4 * (size_t)(n) + 1)
const char *sqle_show_text(const char *s, char *buf, size_t cap);
/* An owner id as a message shows it: as it is, or in single quotes (a
 * quote or backslash inside escaped with a backslash, other characters
 * shown as sqle_show_text shows them) when it is empty or has white
 * space, a quote, a backslash, a control character or a byte that is not
 * UTF-8 in it.  Writes at most cap bytes (SQLE_QUOTED_ID_MAX fits any
 * owner id) and returns buf. */
#define SQLE_QUOTED_ID_MAX (4 * SQLEASE_MAX_OWNER + 3)
const char *sqle_quote_id(const char *id, char *buf, size_t cap);
/* Check a lease name or owner id named `field` ("lease name"): 1..max
 * bytes of valid UTF-8, no control character, not only white space, and
 * unless edge_space_ok neither starting nor ending with it.  Owner ids
 * may (they are compared as exact bytes everywhere, a trailing space
 * included); lease names may not (on MySQL/MariaDB the primary key pads
 * trailing spaces, so "job " could never have a row of its own).
 * SQLEASE_OK or SQLEASE_EINVAL with a message naming the field. */
int sqle_check_text(const char *field, const char *s, size_t max, int edge_space_ok,
                    sqlease_error *err);

/* Emit one log line if level <= max_level.  fn NULL: stderr with a
 * "sqlease: " prefix and the level. */
void sqle_log(sqlease_log_fn fn, void *ud, int max_level, int level,
              const char *fmt, ...) SQLEASE_PRINTF(5, 6);
void sqle_vlog(sqlease_log_fn fn, void *ud, int max_level, int level,
               const char *fmt, va_list ap);

/* sqlease_list with `page` rows per statement (0: sqlease_list's page);
 * list.c says what a page costs.  Same statuses as sqlease_list. */
int sqle_list_paged(sqlease_db *db, const char *table, size_t page, sqlease_list_fn fn,
                    void *userdata, sqlease_error *err);

/* A copy of tmpl with every "{table}" replaced by table (malloc'd). */
char *sqle_sql_for_table(const char *tmpl, const char *table);
/* The same with every "{fire_table}" replaced by fire_table too; a NULL
 * value leaves its placeholder as it is (malloc'd; NULL when out of
 * memory, or when tmpl or both values are NULL). */
char *sqle_sql_for_tables(const char *tmpl, const char *table, const char *fire_table);
/* The same with "{history_table}" replaced by history_table too. */
char *sqle_sql_for_all(const char *tmpl, const char *table, const char *fire_table,
                       const char *history_table);

/* ---- structs that grow (sqlease.h; abi.c) ------------------------- */

/* More than this in a caller's `size` member means it was never set: no
 * struct of the API comes near it. */
#define SQLEASE_SIZE_MAX ((size_t)65536)

/* Read the caller's struct `in` (whose first member is its size) into
 * `full`, the library's own struct of full_size bytes, which already
 * holds every default: the bytes the caller's size covers replace them,
 * and full's size becomes full_size.  `what` and `init` name the struct
 * and its init macro for the message.  Returns SQLEASE_OK, or
 * SQLEASE_EINVAL for a size no init macro set. */
int sqle_struct_in(void *full, size_t full_size, const void *in, const char *what,
                   const char *init, sqlease_error *err);

/* Write the library's struct `full` (full_size bytes) into the caller's
 * `out` of out_size bytes (at least a size_t): no byte past out_size, and
 * the size member written is the number of bytes filled. */
void sqle_struct_out(void *out, size_t out_size, void *full, size_t full_size);

/* The options as the library reads them: `in` (NULL: every default)
 * imported into `full` (see sqle_struct_in). */
int sqle_options_import(const sqlease_options *in, sqlease_options *full,
                        sqlease_error *err);

/* Make the release at s's stop free the row at once, whatever its
 * min_hold_ms: for a hold whose work never ran (`run` could not start
 * CMD), which a minimum hold would keep from every other instance.  Call
 * before sqlease_supervisor_stop, from the thread that stops it. */
void sqle_supervisor_release_at_once(sqlease_supervisor *s);

/* sqlease_supervisor_start_each, with each lease's watch begun from
 * seeds[i] (lease.h) when seeds is not NULL: a group that has watched a
 * dead worker's rows for a ttl already has its supervisors take them at
 * their first read instead of watching them a second ttl. */
struct sqle_watch_seed;
int sqle_supervisor_start_seeded(sqlease_supervisor **out, size_t n, sqlease_db *db,
                                 const sqlease_options *const *opts,
                                 const struct sqle_watch_seed *seeds, int *rcs_out,
                                 sqlease_error *err);

#endif
