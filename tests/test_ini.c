/*
 * test_ini.c -- lease settings from a DSN's odbc.ini section, read
 * through the driver manager, and their precedence: API/flag >
 * environment > odbc.ini > default.  Always SQLite: the point is the
 * driver manager's ini handling, which is the same for every driver.
 * The odbc.ini is project-local (ODBCINI), never the system file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static char ini_path[600];

/* Suite setup: write the file and point the driver manager at it. */
static int write_ini(void)
{
    /* 508 zeros, "30s", then more: a value longer than the 511 bytes
     * the settings are read into, whose first 511 bytes alone would be
     * a valid 30 s. */
    static char long_ttl[520];
    static char pwd_table[132];
    FILE *f;

    memset(long_ttl, '0', 508);
    memcpy(long_ttl + 508, "30sjunk", sizeof "30sjunk");
    /* 124 x's, then "PWD=abc": an invalid table whose first 128 bytes,
     * as the message quotes them, end in "PWD=". */
    memset(pwd_table, 'x', 124);
    memcpy(pwd_table + 124, "PWD=abc", sizeof "PWD=abc");
    snprintf(ini_path, sizeof ini_path, "%s/odbc.ini", tu_dir());
    f = fopen(ini_path, "w");
    if (f == NULL)
        return 1;
    fprintf(f,
            "[sqlease_ini_ok]\n"
            "Driver = SQLite3\n"
            "Database = %s/ini.db\n"
            "Timeout = 5000\n"
            "SqleaseTable = ini_leases\n"
            "SqleaseName = ini_job\n"
            "SqleaseTTL = 4s\n"
            "SqleaseHeartbeat = 1s\n"
            "SqleaseRenewDeadline = 2s\n"
            "SqleaseRetry = 500ms\n"
            "\n"
            "[sqlease_ini_bare]\n"
            "Driver = SQLite3\n"
            "Database = %s/ini.db\n"
            "SqleaseTTL = 30\n"
            "\n"
            "[sqlease_ini_table]\n"
            "Driver = SQLite3\n"
            "Database = %s/ini.db\n"
            "SqleaseTable = x; DROP TABLE y\n"
            "\n"
            "[sqlease_ini_pwdtable]\n"
            "Driver = SQLite3\n"
            "Database = %s/ini.db\n"
            "SqleaseTable = %s\n"
            "\n"
            "[sqlease_ini_plain]\n"
            "Driver = SQLite3\n"
            "Database = %s/ini.db\n"
            "\n"
            "[sqlease_ini_ttl]\n"
            "Driver = SQLite3\n"
            "Database = %s/ini.db\n"
            "SqleaseTable = ini_leases\n"
            "SqleaseName = ini_job\n"
            "SqleaseTTL = 7s\n"
            "\n"
            "[sqlease_ini_clash]\n"
            "Driver = SQLite3\n"
            "Database = %s/ini.db\n"
            "SqleaseTable = ini_leases\n"
            "SqleaseName = ini_job\n"
            "SqleaseTTL = 1s\n"
            "SqleaseHeartbeat = 5s\n"
            "\n"
            "[sqlease_ini_away]\n"
            "Driver = SQLite3\n"
            "Database = %s/no/such/dir/away.db\n"
            "SqleaseTTL = 4s\n"
            "\n"
            "[sqlease_ini_long]\n"
            "Driver = SQLite3\n"
            "Database = %s/ini.db\n"
            "SqleaseTTL = %s\n"
            "\n"
            "[sqlease_ini_brace]\n"
            "Driver = SQLite3\n"
            "Database = %s/bare.db\n"
            "SqleaseName = bare_job\n"
            "\n"
            "[{sqlease_ini_brace}]\n"
            "Driver = SQLite3\n"
            "Database = %s/braced.db\n"
            "SqleaseName = braced_job\n",
            tu_dir(), tu_dir(), tu_dir(), tu_dir(), pwd_table, tu_dir(), tu_dir(), tu_dir(),
            tu_dir(), tu_dir(), long_ttl, tu_dir(), tu_dir());
    fclose(f);
    return setenv("ODBCINI", ini_path, 1) != 0;
}

static sqlease_db *open_dsn(const char *dsn, int *rc, sqlease_error *err)
{
    sqlease_db_options o;
    sqlease_db *db = NULL;
    sqlease_db_options_init(&o);
    o.conn = dsn;
    *rc = sqlease_db_open(&db, &o, err);
    return db;
}

/* What the section sqlease_ini_ok sets, as sqlease_options_effective
 * reports it when the caller sets nothing. */
static void assert_ok_section(const sqlease_options *eff)
{
    CU_ASSERT_STRING_EQUAL(eff->table, "ini_leases");
    CU_ASSERT_STRING_EQUAL(eff->name, "ini_job");
    CU_ASSERT_EQUAL(eff->ttl_ms, 4000);
    CU_ASSERT_EQUAL(eff->heartbeat_ms, 1000);
    CU_ASSERT_EQUAL(eff->renew_deadline_ms, 2000);
    CU_ASSERT_EQUAL(eff->retry_ms, 500);
}

static void test_settings_and_precedence(void)
{
    sqlease_db *db;
    sqlease_options in, eff;
    sqlease_error err;
    int rc;

    db = open_dsn("sqlease_ini_ok", &rc, &err);
    CU_ASSERT_EQUAL_FATAL(rc, SQLEASE_OK);
    sqlease_options_init(&in);
    CU_ASSERT_EQUAL(sqlease_options_effective(db, &in, &eff, &err), SQLEASE_OK);
    assert_ok_section(&eff);
    /* The API wins over the file, field by field. */
    in.ttl_ms = 5000;
    in.name = "api_job";
    CU_ASSERT_EQUAL(sqlease_options_effective(db, &in, &eff, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(eff.ttl_ms, 5000);
    CU_ASSERT_STRING_EQUAL(eff.name, "api_job");
    CU_ASSERT_STRING_EQUAL(eff.table, "ini_leases");
    CU_ASSERT_EQUAL(eff.renew_deadline_ms, 2000);
    /* ...and the combination is still checked: 2s deadline vs 1.5s ttl. */
    in.ttl_ms = 1500;
    CU_ASSERT_EQUAL(sqlease_options_effective(db, &in, &eff, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "renew deadline"));

    /* A lease made on the handle uses the file's table and name. */
    {
        const char *names[1] = { "ini_job" };
        sqlease_lease *l = NULL;
        sqlease_lease_info info, seed;
        CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, "ini_leases", names, 1, &err), SQLEASE_OK);
        sqlease_options_init(&in);
        in.owner = "ini-owner";
        CU_ASSERT_EQUAL_FATAL(sqlease_lease_new(&l, db, &in, &err), SQLEASE_OK);
        CU_ASSERT_STRING_EQUAL(sqlease_lease_name(l), "ini_job");
        CU_ASSERT_EQUAL(sqlease_lease_status(l, &seed, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL(sqlease_lease_acquire(l, &info, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL(info.token, seed.token + 1);
        CU_ASSERT(info.expires_at_ms - info.db_now_ms <= 4000 &&
                  info.expires_at_ms - info.db_now_ms > 3000);
        sqlease_lease_free(l);
    }
    sqlease_db_close(db);

    /* A connection string has no section: defaults apply. */
    db = open_dsn("sqlease_ini_plain", &rc, &err);
    CU_ASSERT_EQUAL_FATAL(rc, SQLEASE_OK);
    sqlease_options_init(&in);
    CU_ASSERT_EQUAL(sqlease_options_effective(db, &in, &eff, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(eff.table, SQLEASE_DEFAULT_TABLE);
    CU_ASSERT_EQUAL(eff.ttl_ms, SQLEASE_DEFAULT_TTL_MS);
    sqlease_db_close(db);
}

static void test_invalid_values_name_key_and_dsn(void)
{
    sqlease_db *db;
    sqlease_error err;
    int rc;

    db = open_dsn("sqlease_ini_bare", &rc, &err);
    CU_ASSERT_PTR_NULL(db);
    CU_ASSERT_EQUAL(rc, SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "SqleaseTTL"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "sqlease_ini_bare"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "unit"));
    db = open_dsn("sqlease_ini_table", &rc, &err);
    CU_ASSERT_PTR_NULL(db);
    CU_ASSERT_EQUAL(rc, SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "SqleaseTable"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "sqlease_ini_table"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "not a valid table"));
    /* A value cut where it reads as a password is masked, and the
     * message still names the DSN: the value comes last (found by the
     * odbc.ini fuzz target). */
    db = open_dsn("sqlease_ini_pwdtable", &rc, &err);
    CU_ASSERT_PTR_NULL(db);
    CU_ASSERT_EQUAL(rc, SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "sqlease_ini_pwdtable"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "not a valid table"));
    /* A value too long for the buffer is refused, never read as the
     * prefix the driver manager's copy cut it to (found by the odbc.ini
     * fuzz target). */
    db = open_dsn("sqlease_ini_long", &rc, &err);
    CU_ASSERT_PTR_NULL(db);
    CU_ASSERT_EQUAL(rc, SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "SqleaseTTL"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "sqlease_ini_long"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "longer than"));
    sqlease_db_close(db);
}

/* Run the CLI with -v and return its exit status; stderr goes to `log`. */
static int cli(const char *env, const char *args, const char *log)
{
    char cmd[2048];
    const char *bin = getenv("SQLEASE_BIN");
    int st;
    if (bin == NULL) {
        CU_FAIL("SQLEASE_BIN is not set");
        return -1;
    }
    snprintf(cmd, sizeof cmd, "cd '%s' && env -u SQLEASE_TOKEN %s '%s' %s >/dev/null 2>'%s'",
             tu_dir(), env, bin, args, log);
    st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int file_has(const char *path, const char *needle)
{
    char buf[8192];
    size_t n;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strstr(buf, needle) != NULL;
}

static void test_cli_precedence(void)
{
    char log[700];
    snprintf(log, sizeof log, "%s/cli.log", tu_dir());

    CU_ASSERT_EQUAL(cli("", "--dsn sqlease_ini_ok migrate", log), 0);
    /* odbc.ini alone. */
    CU_ASSERT_EQUAL(cli("", "-v --dsn sqlease_ini_ok run -- true", log), 0);
    CU_ASSERT(file_has(log, "lease 'ini_job'"));
    CU_ASSERT(file_has(log, "ttl 4000ms"));
    /* The environment beats the file. */
    CU_ASSERT_EQUAL(cli("SQLEASE_TTL=5s", "-v --dsn sqlease_ini_ok run -- true", log), 0);
    CU_ASSERT(file_has(log, "ttl 5000ms"));
    /* A flag beats both. */
    CU_ASSERT_EQUAL(cli("SQLEASE_TTL=5s", "-v --dsn sqlease_ini_ok --ttl 6s run -- true", log), 0);
    CU_ASSERT(file_has(log, "ttl 6000ms"));
    /* An invalid file value is a usage error naming the key. */
    CU_ASSERT_EQUAL(cli("", "--dsn sqlease_ini_bare status", log), 64);
    CU_ASSERT(file_has(log, "SqleaseTTL"));
}

/* The effective timing on `db` for `in`; fails the test on an error. */
static int effective(sqlease_db *db, const sqlease_options *in, sqlease_options *eff)
{
    sqlease_error err;
    int rc = sqlease_options_effective(db, in, eff, &err);
    if (rc != SQLEASE_OK)
        fprintf(stderr, "\n  options_effective: %s\n", err.message);
    return rc;
}

/* A ttl alone, from the API or from odbc.ini, derives the rest of the
 * timing (ttl/3, 2*ttl/3, min(2s, ttl/10)); a value set anywhere is kept,
 * and one set that breaks a rule is refused, never adjusted. */
static void test_ttl_alone_derives_timing(void)
{
    sqlease_db *db;
    sqlease_options in, eff;
    sqlease_error err;
    int rc;

    /* The API, on a connection string: no odbc.ini involved. */
    db = open_dsn("sqlease_ini_plain", &rc, &err);
    CU_ASSERT_EQUAL_FATAL(rc, SQLEASE_OK);
    sqlease_options_init(&in);
    in.ttl_ms = 7000;
    CU_ASSERT_EQUAL(sqlease_options_check(&in, &err), SQLEASE_OK);
    CU_ASSERT_EQUAL(effective(db, &in, &eff), SQLEASE_OK);
    CU_ASSERT_EQUAL(eff.ttl_ms, 7000);
    CU_ASSERT_EQUAL(eff.heartbeat_ms, 2333);
    CU_ASSERT_EQUAL(eff.renew_deadline_ms, 4666);
    CU_ASSERT_EQUAL(eff.retry_ms, 700);
    /* A long ttl: the retry stays at 2 s. */
    in.ttl_ms = 90000;
    CU_ASSERT_EQUAL(effective(db, &in, &eff), SQLEASE_OK);
    CU_ASSERT_EQUAL(eff.heartbeat_ms, 30000);
    CU_ASSERT_EQUAL(eff.renew_deadline_ms, 60000);
    CU_ASSERT_EQUAL(eff.retry_ms, 2000);
    /* Nothing set: the defaults are the derivation of the default ttl. */
    sqlease_options_init(&in);
    CU_ASSERT_EQUAL(effective(db, &in, &eff), SQLEASE_OK);
    CU_ASSERT_EQUAL(eff.ttl_ms, SQLEASE_DEFAULT_TTL_MS);
    CU_ASSERT_EQUAL(eff.heartbeat_ms, SQLEASE_DEFAULT_HEARTBEAT_MS);
    CU_ASSERT_EQUAL(eff.renew_deadline_ms, SQLEASE_DEFAULT_RENEW_DEADLINE_MS);
    CU_ASSERT_EQUAL(eff.retry_ms, SQLEASE_DEFAULT_RETRY_MS);
    /* A value set is kept; only the unset ones are derived. */
    in.ttl_ms = 7000;
    in.heartbeat_ms = 1000;
    CU_ASSERT_EQUAL(effective(db, &in, &eff), SQLEASE_OK);
    CU_ASSERT_EQUAL(eff.heartbeat_ms, 1000);
    CU_ASSERT_EQUAL(eff.renew_deadline_ms, 4666);
    /* A value set that breaks a rule is an error that names it. */
    in.heartbeat_ms = 5000;
    CU_ASSERT_EQUAL(sqlease_options_effective(db, &in, &eff, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "heartbeat (5000 ms)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "4666 ms, derived from the ttl"));
    CU_ASSERT_EQUAL(sqlease_options_check(&in, &err), SQLEASE_EINVAL);
    /* A supervisor started with the ttl alone runs with the derived
     * timing. */
    {
        const char *names[1] = { "ttl_alone" };
        sqlease_supervisor *sup = NULL;
        sqlease_state st;
        CU_ASSERT_EQUAL_FATAL(sqlease_migrate(db, "ini_leases", names, 1, &err), SQLEASE_OK);
        sqlease_options_init(&in);
        in.table = "ini_leases";
        in.name = "ttl_alone";
        in.ttl_ms = 7000;
        in.log = tu_log_sink;
        CU_ASSERT_EQUAL_FATAL(sqlease_supervisor_start(&sup, db, &in, &err), SQLEASE_OK);
        CU_ASSERT_EQUAL(sqlease_supervisor_state(sup, &st), SQLEASE_OK);
        CU_ASSERT_EQUAL(st.holding, 1);
        /* The deadline is the derived 4666 ms after the proof. */
        CU_ASSERT(st.deadline_in_ms > 3000 && st.deadline_in_ms <= 4666);
        sqlease_supervisor_free(sup);
    }
    sqlease_db_close(db);

    /* SqleaseTTL alone in odbc.ini. */
    db = open_dsn("sqlease_ini_ttl", &rc, &err);
    CU_ASSERT_EQUAL_FATAL(rc, SQLEASE_OK);
    sqlease_options_init(&in);
    CU_ASSERT_EQUAL(effective(db, &in, &eff), SQLEASE_OK);
    CU_ASSERT_EQUAL(eff.ttl_ms, 7000);
    CU_ASSERT_EQUAL(eff.heartbeat_ms, 2333);
    CU_ASSERT_EQUAL(eff.renew_deadline_ms, 4666);
    CU_ASSERT_EQUAL(eff.retry_ms, 700);
    /* The API's ttl wins over the file's, and the rest follows it. */
    in.ttl_ms = 3000;
    CU_ASSERT_EQUAL(effective(db, &in, &eff), SQLEASE_OK);
    CU_ASSERT_EQUAL(eff.heartbeat_ms, 1000);
    CU_ASSERT_EQUAL(eff.renew_deadline_ms, 2000);
    CU_ASSERT_EQUAL(eff.retry_ms, 300);
    sqlease_db_close(db);

    /* A heartbeat set in the file is kept, and refused when it does not
     * fit the file's ttl. */
    db = open_dsn("sqlease_ini_clash", &rc, &err);
    CU_ASSERT_EQUAL_FATAL(rc, SQLEASE_OK);
    sqlease_options_init(&in);
    CU_ASSERT_EQUAL(sqlease_options_effective(db, &in, &eff, &err), SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "heartbeat (5000 ms)"));
    sqlease_db_close(db);
}

/* The same through the CLI, from every place a ttl can be set: flag,
 * SQLEASE_TTL, SqleaseTTL in odbc.ini.  Commands that hold no lease check
 * no timing at all. */
static void test_cli_ttl_alone(void)
{
    char log[700];
    snprintf(log, sizeof log, "%s/cli-ttl.log", tu_dir());

    CU_ASSERT_EQUAL(cli("", "--dsn sqlease_ini_ttl migrate", log), 0);
    /* odbc.ini: SqleaseTTL alone. */
    CU_ASSERT_EQUAL(cli("", "-v --dsn sqlease_ini_ttl run -- true", log), 0);
    CU_ASSERT(file_has(log, "ttl 7000ms, heartbeat 2333ms, renew deadline 4666ms, retry 700ms"));
    /* The environment. */
    CU_ASSERT_EQUAL(cli("SQLEASE_TTL=9s",
                        "-v --dsn sqlease_ini_plain --table ini_leases --name ini_job run -- true",
                        log), 0);
    CU_ASSERT(file_has(log, "ttl 9000ms, heartbeat 3000ms, renew deadline 6000ms, retry 900ms"));
    /* A flag, on a DSN and on a connection string (checked before
     * connecting). */
    CU_ASSERT_EQUAL(cli("", "-v --dsn sqlease_ini_ttl --ttl 6s run -- true", log), 0);
    CU_ASSERT(file_has(log, "ttl 6000ms, heartbeat 2000ms, renew deadline 4000ms, retry 600ms"));
    {
        char args[900];
        snprintf(args, sizeof args, "-v --dsn 'Driver=SQLite3;Database=%s/ini.db' "
                 "--table ini_leases --name ini_job --ttl 7s run -- true", tu_dir());
        CU_ASSERT_EQUAL(cli("", args, log), 0);
        CU_ASSERT(file_has(log, "ttl 7000ms, heartbeat 2333ms"));
        /* migrate and status check no timing. */
        snprintf(args, sizeof args, "--dsn 'Driver=SQLite3;Database=%s/ini.db' "
                 "--table ini_leases --name ini_job --ttl 1s --heartbeat 5s status", tu_dir());
        CU_ASSERT_EQUAL(cli("", args, log), 0);
        snprintf(args, sizeof args, "--dsn 'Driver=SQLite3;Database=%s/ini.db' "
                 "--table ini_leases --name ini_job --ttl 1s --heartbeat 5s migrate", tu_dir());
        CU_ASSERT_EQUAL(cli("", args, log), 0);
        /* ...but a command that holds the lease does. */
        snprintf(args, sizeof args, "--dsn 'Driver=SQLite3;Database=%s/ini.db' "
                 "--table ini_leases --name ini_job --ttl 7s --heartbeat 5s run -- true",
                 tu_dir());
        CU_ASSERT_EQUAL(cli("", args, log), 64);
        CU_ASSERT(file_has(log, "heartbeat (5000 ms)"));
    }
    /* A flag set against the file's derived value is refused, naming both. */
    CU_ASSERT_EQUAL(cli("", "--dsn sqlease_ini_ttl --heartbeat 3s run -- true", log), 64);
    CU_ASSERT(file_has(log, "heartbeat (3000 ms) must be at most half the renew deadline "
                            "(4666 ms, derived from the ttl)"));
    /* Timing in the file that no supervisor could use does not stop
     * status or release. */
    CU_ASSERT_EQUAL(cli("", "--dsn sqlease_ini_clash status", log), 0);
    CU_ASSERT_EQUAL(cli("", "--dsn sqlease_ini_clash release --force", log), 0);
    CU_ASSERT_EQUAL(cli("", "--dsn sqlease_ini_clash run -- true", log), 64);
}

/* A connection string that names a DSN (DSN=..., any case, with other
 * keys around it) connects with that DSN's section, so the section's
 * lease settings apply as they do for the bare name; an invalid one is
 * refused naming the DSN, not the connection string (which may hold a
 * password). */
static void test_conn_string_with_dsn(void)
{
    sqlease_db *db;
    sqlease_options in, eff;
    sqlease_error err;
    int rc;
    char log[700];

    db = open_dsn("DSN=sqlease_ini_ok;Timeout=5000", &rc, &err);
    CU_ASSERT_EQUAL_FATAL(rc, SQLEASE_OK);
    sqlease_options_init(&in);
    CU_ASSERT_EQUAL(sqlease_options_effective(db, &in, &eff, &err), SQLEASE_OK);
    assert_ok_section(&eff);
    sqlease_db_close(db);
    db = open_dsn("dsn=sqlease_ini_ttl;UID=someone", &rc, &err);
    CU_ASSERT_EQUAL_FATAL(rc, SQLEASE_OK);
    CU_ASSERT_EQUAL(effective(db, &in, &eff), SQLEASE_OK);
    CU_ASSERT_EQUAL(eff.ttl_ms, 7000);
    CU_ASSERT_EQUAL(eff.retry_ms, 700);
    sqlease_db_close(db);
    db = open_dsn("DSN=sqlease_ini_bare;PWD=hunter2", &rc, &err);
    CU_ASSERT_PTR_NULL(db);
    CU_ASSERT_EQUAL(rc, SQLEASE_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "SqleaseTTL"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "DSN 'sqlease_ini_bare'"));
    CU_ASSERT_PTR_NULL(strstr(err.message, "hunter2"));

    /* The CLI: the section's ttl derives the timing, a flag still wins,
     * an invalid value is a usage error. */
    snprintf(log, sizeof log, "%s/cli-conn.log", tu_dir());
    CU_ASSERT_EQUAL(cli("", "--dsn 'DSN=sqlease_ini_ttl;Timeout=5000' migrate", log), 0);
    CU_ASSERT_EQUAL(cli("", "-v --dsn 'DSN=sqlease_ini_ttl;Timeout=5000' run -- true", log), 0);
    CU_ASSERT(file_has(log, "lease 'ini_job'"));
    CU_ASSERT(file_has(log, "ttl 7000ms, heartbeat 2333ms, renew deadline 4666ms, retry 700ms"));
    CU_ASSERT_EQUAL(cli("", "-v --dsn 'DSN=sqlease_ini_ttl;Timeout=5000' --ttl 6s run -- true",
                        log), 0);
    CU_ASSERT(file_has(log, "ttl 6000ms, heartbeat 2000ms, renew deadline 4000ms, retry 600ms"));
    /* The section's table and name are the ones status reads. */
    {
        char cmd[2048], out[760];
        const char *bin = getenv("SQLEASE_BIN");
        int st;

        snprintf(out, sizeof out, "%s/cli-conn.out", tu_dir());
        snprintf(cmd, sizeof cmd, "cd '%s' && '%s' --dsn 'DSN=sqlease_ini_ttl' status --json"
                 " >'%s' 2>'%s'", tu_dir(), bin != NULL ? bin : "false", out, log);
        st = system(cmd);
        CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        CU_ASSERT(file_has(out, "\"name\":\"ini_job\",\"table\":\"ini_leases\""));
    }
    CU_ASSERT_EQUAL(cli("", "--dsn 'DSN=sqlease_ini_bare;PWD=hunter2' status", log), 64);
    CU_ASSERT(file_has(log, "SqleaseTTL"));
    CU_ASSERT(!file_has(log, "hunter2"));
}

/* DSN={x}: unixODBC connects with the section [{x}], braces and all (it
 * strips the braces of Driver={...}, not of DSN=), so the lease settings
 * come from that section too, not from [x]: the name read and the file
 * the connection made must be the same section's. */
static void test_dsn_in_braces(void)
{
    const char *names[1] = { "braced_job" };
    sqlease_db *db;
    sqlease_options in, eff;
    sqlease_error err;
    char path[700];
    int rc;

    db = open_dsn("DSN={sqlease_ini_brace}", &rc, &err);
    CU_ASSERT_EQUAL_FATAL(rc, SQLEASE_OK);
    sqlease_options_init(&in);
    CU_ASSERT_EQUAL(sqlease_options_effective(db, &in, &eff, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(eff.name, "braced_job");
    CU_ASSERT_EQUAL(sqlease_migrate(db, NULL, names, 1, &err), SQLEASE_OK);
    sqlease_db_close(db);
    snprintf(path, sizeof path, "%s/braced.db", tu_dir());
    CU_ASSERT_EQUAL(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/bare.db", tu_dir());
    CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
    /* The bare name is the other section, as before. */
    db = open_dsn("DSN=sqlease_ini_brace", &rc, &err);
    CU_ASSERT_EQUAL_FATAL(rc, SQLEASE_OK);
    CU_ASSERT_EQUAL(sqlease_options_effective(db, &in, &eff, &err), SQLEASE_OK);
    CU_ASSERT_STRING_EQUAL(eff.name, "bare_job");
    sqlease_db_close(db);
}

/* supervise waits for a database away at start at the retry the DSN's
 * section gives (SqleaseTTL 4s alone: 400 ms), by name or by DSN=. */
static void test_cli_start_retry_from_ini(void)
{
    char log[700];

    snprintf(log, sizeof log, "%s/cli-away.log", tu_dir());
    /* timeout(1) ends it with SIGTERM: supervise exits 0, timeout 124. */
    CU_ASSERT_EQUAL(cli("timeout -s TERM 1.5", "-v --dsn sqlease_ini_away supervise -- true",
                        log), 124);
    CU_ASSERT(file_has(log, "trying again every 400 ms"));
    CU_ASSERT_EQUAL(cli("timeout -s TERM 1.5",
                        "-v --dsn 'DSN=sqlease_ini_away;Timeout=1000' supervise -- true", log),
                    124);
    CU_ASSERT(file_has(log, "trying again every 400 ms"));
    /* A flag still wins. */
    CU_ASSERT_EQUAL(cli("timeout -s TERM 1.5",
                        "-v --dsn sqlease_ini_away --ttl 5s supervise -- true", log), 124);
    CU_ASSERT(file_has(log, "trying again every 500 ms"));
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("odbc.ini settings", write_ini, NULL);
    CU_add_test(s, "settings and API precedence", test_settings_and_precedence);
    CU_add_test(s, "invalid values name the key and the DSN", test_invalid_values_name_key_and_dsn);
    CU_add_test(s, "CLI: flag > environment > odbc.ini", test_cli_precedence);
    CU_add_test(s, "a ttl alone derives the timing (API, odbc.ini)",
                test_ttl_alone_derives_timing);
    CU_add_test(s, "CLI: a ttl alone (flag, environment, odbc.ini)", test_cli_ttl_alone);
    CU_add_test(s, "a connection string with DSN= reads that DSN's section",
                test_conn_string_with_dsn);
    CU_add_test(s, "DSN={x} reads the section the driver manager connects with",
                test_dsn_in_braces);
    CU_add_test(s, "CLI: supervise waits for the database at the DSN's retry",
                test_cli_start_retry_from_ini);
}

int main(void)
{
    int rc = tu_main(add);
    tu_cleanup();
    return rc;
}
