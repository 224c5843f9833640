/*
 * fuzz_ini.c -- libFuzzer target for the Sqlease* settings of a DSN's
 * odbc.ini section (SqleaseTable, SqleaseName, SqleaseTTL,
 * SqleaseHeartbeat, SqleaseRenewDeadline, SqleaseRetry, SqleaseFireTable,
 * SqleaseHistoryTable): sqle_ini_read,
 * then sqle_options_resolve over what it read, as sqlease_db_open and
 * the tool do.
 *
 * Input: one value per line, in that order; an empty or missing line is
 * an unset key.  The values reach the library as the driver manager
 * hands them over: SQLGetPrivateProfileString copies a value into the
 * caller's buffer and cuts it to fit without saying so, and the lookup
 * here does the same.
 *
 * Properties, beyond not crashing:
 *  - a value read is the value written, whole: the tables and the name
 *    as they are, a duration as the documented grammar reads the full
 *    text (never a prefix of it), more than 0;
 *  - a refusal is SQLEASE_EINVAL with a one-line message naming the key
 *    and the DSN;
 *  - what resolves is valid: the table an identifier or
 *    schema.identifier of at most SQLEASE_MAX_TABLE bytes, the name
 *    within the documented rules, the timing within its rules
 *    (renew deadline < ttl, retry < renew deadline, heartbeat at most
 *    half the renew deadline), every duration in 1..30 days.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzutil.h"
#include "internal.h"
#include "options.h"

#define DSN "fuzzdsn"

static const char *const keys[] = {
    "SqleaseTable", "SqleaseName", "SqleaseTTL", "SqleaseHeartbeat", "SqleaseRenewDeadline",
    "SqleaseRetry", "SqleaseFireTable", "SqleaseHistoryTable",
};
#define NKEYS (sizeof keys / sizeof keys[0])
/* keys[2..5] are the durations; keys[6] and keys[7] the two other tables. */
#define FIRST_TABLE 6

typedef struct section {
    const char *value[NKEYS]; /* NULL or "": unset */
} section;

/* SQLGetPrivateProfileString as unixODBC implements it: the value copied
 * and cut to cap - 1 bytes; an empty value reads as unset. */
static int get(void *ctx, const char *key, char *buf, size_t cap)
{
    const section *s = ctx;
    size_t i, n;

    for (i = 0; i < NKEYS; i++) {
        if (strcmp(key, keys[i]) != 0)
            continue;
        if (s->value[i] == NULL || s->value[i][0] == '\0')
            return 0;
        n = strlen(s->value[i]);
        if (n >= cap)
            n = cap - 1;
        memcpy(buf, s->value[i], n);
        buf[n] = '\0';
        return 1;
    }
    FZ_CHECK(0, "asked for an unknown key %s", key);
    return 0;
}

static int set(const section *s, size_t k)
{
    return s->value[k] != NULL && s->value[k][0] != '\0';
}

static int table_shape(const char *t)
{
    size_t n = strlen(t), i;
    int parts = 1, start = 1;

    if (n == 0 || n > SQLEASE_MAX_TABLE)
        return 0;
    for (i = 0; i < n; i++) {
        char c = t[i];
        int alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (c == '.') {
            if (start || ++parts > 2)
                return 0;
            start = 1;
        } else if (start) {
            if (!alpha)
                return 0;
            start = 0;
        } else if (!alpha && !(c >= '0' && c <= '9')) {
            return 0;
        }
    }
    return !start;
}

/* What was read against the full values written. */
static void check_read(const section *s, const sqle_ini *ini)
{
    int64_t *dur[4];
    size_t k;

    dur[0] = (int64_t *)&ini->ttl_ms;
    dur[1] = (int64_t *)&ini->heartbeat_ms;
    dur[2] = (int64_t *)&ini->renew_deadline_ms;
    dur[3] = (int64_t *)&ini->retry_ms;
    if (set(s, 0))
        FZ_CHECK(ini->table != NULL && strcmp(ini->table, s->value[0]) == 0,
                 "SqleaseTable '%s' read as '%s'", s->value[0], ini->table);
    else
        FZ_CHECK(ini->table == NULL, "unset SqleaseTable read as '%s'", ini->table);
    if (set(s, 1)) {
        FZ_CHECK(ini->name != NULL && strcmp(ini->name, s->value[1]) == 0,
                 "SqleaseName '%s' read as '%s'", s->value[1], ini->name);
        FZ_CHECK(strlen(ini->name) <= SQLEASE_MAX_NAME, "SqleaseName of %zu bytes read",
                 strlen(ini->name));
    } else {
        FZ_CHECK(ini->name == NULL, "unset SqleaseName read as '%s'", ini->name);
    }
    for (k = FIRST_TABLE; k < NKEYS; k++) {
        const char *got = k == FIRST_TABLE ? ini->fire_table : ini->history_table;
        if (set(s, k)) {
            FZ_CHECK(got != NULL && strcmp(got, s->value[k]) == 0, "%s '%s' read as '%s'",
                     keys[k], s->value[k], got);
            FZ_CHECK(table_shape(got) && sqle_valid_table(got),
                     "%s '%s' read though it is not a table's name", keys[k], got);
        } else {
            FZ_CHECK(got == NULL, "unset %s read as '%s'", keys[k], got);
        }
    }
    for (k = 2; k < FIRST_TABLE; k++) {
        int64_t want = -1;
        if (!set(s, k)) {
            FZ_CHECK(*dur[k - 2] == 0, "unset %s read as %" PRId64, keys[k], *dur[k - 2]);
            continue;
        }
        FZ_CHECK(fz_duration_ref(s->value[k], &want),
                 "%s = '%s' (%zu bytes) read as %" PRId64 " ms, but it is not a duration",
                 keys[k], s->value[k], strlen(s->value[k]), *dur[k - 2]);
        FZ_CHECK(want == *dur[k - 2] && want > 0, "%s = '%s' is %" PRId64 " ms, read as %" PRId64,
                 keys[k], s->value[k], want, *dur[k - 2]);
    }
}

static void check_resolved(const sqle_resolved *r, int lease_only)
{
    FZ_CHECK(table_shape(r->table), "resolved table '%s' is not an identifier", r->table);
    FZ_CHECK(sqle_valid_table(r->table), "resolved table '%s' is invalid", r->table);
    FZ_CHECK(fz_text_ref(r->name, SQLEASE_MAX_NAME, 0), "resolved name '%s' breaks the rules",
             r->name);
    FZ_CHECK(r->ttl_ms > 0 && r->ttl_ms <= SQLEASE_MAX_DURATION_MS, "ttl %" PRId64, r->ttl_ms);
    if (lease_only)
        return;
    FZ_CHECK(r->heartbeat_ms > 0 && r->renew_deadline_ms > 0 && r->retry_ms > 0,
             "timing not positive: %" PRId64 " %" PRId64 " %" PRId64, r->heartbeat_ms,
             r->renew_deadline_ms, r->retry_ms);
    FZ_CHECK(r->renew_deadline_ms < r->ttl_ms, "renew deadline %" PRId64 " >= ttl %" PRId64,
             r->renew_deadline_ms, r->ttl_ms);
    FZ_CHECK(r->retry_ms < r->renew_deadline_ms, "retry %" PRId64 " >= renew deadline %" PRId64,
             r->retry_ms, r->renew_deadline_ms);
    FZ_CHECK(r->heartbeat_ms <= r->renew_deadline_ms / 2,
             "heartbeat %" PRId64 " > half the renew deadline %" PRId64, r->heartbeat_ms,
             r->renew_deadline_ms);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s, *field[NKEYS];
    section sec;
    sqle_ini ini;
    sqle_resolved r;
    sqlease_error err;
    size_t n, k;
    int rc, lease_only;

    if (size > 8192)
        return 0;
    fz_input(data, size);
    s = fz_cstr(data, size);
    n = fz_fields(s, field, NKEYS);
    memset(&sec, 0, sizeof sec);
    for (k = 0; k < n; k++)
        sec.value[k] = field[k];
    rc = sqle_ini_read(get, &sec, DSN, &ini, &err);
    if (rc != SQLEASE_OK) {
        fz_check_error(&err, rc, "odbc.ini");
        FZ_CHECK(rc == SQLEASE_EINVAL, "status %d: %s", rc, err.message);
        FZ_CHECK(strstr(err.message, "Sqlease") != NULL && strstr(err.message, DSN) != NULL,
                 "the message names neither the key nor the DSN: %s", err.message);
        sqle_ini_free(&ini);
        free(s);
        return 0;
    }
    check_read(&sec, &ini);
    for (lease_only = 0; lease_only <= 1; lease_only++) {
        rc = sqle_options_resolve(NULL, &ini, lease_only, &r, &err);
        if (rc == SQLEASE_OK) {
            check_resolved(&r, lease_only);
        } else {
            fz_check_error(&err, rc, "resolve");
            FZ_CHECK(rc == SQLEASE_EINVAL, "status %d: %s", rc, err.message);
        }
    }
    sqle_ini_free(&ini);
    free(s);
    return 0;
}
