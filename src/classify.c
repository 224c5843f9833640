/*
 * classify.c -- what a failed database call means, decided from the
 * driver's diagnostic and the dialect table's rules alone.
 *
 * The knowledge of which SQLSTATE or phrase means what is data
 * (templates/dialects.toml, `failures`); this file holds only the order in
 * which the kinds are tried and how an entry matches.  It is pure, so it
 * is tested on diagnostics recorded from the real drivers
 * (tests/test_classify.c) without a database.
 */
#include <stddef.h>
#include <string.h>

#include "classify.h"

static int ascii_lower(int c)
{
    return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

/* 1 if needle occurs in hay, ignoring ASCII case: drivers capitalise the
 * same phrase differently ("Lost connection", "lost connection"). */
static int contains_ci(const char *hay, const char *needle)
{
    size_t i, j;

    if (needle[0] == '\0')
        return 0;
    for (i = 0; hay[i] != '\0'; i++) {
        for (j = 0; needle[j] != '\0' && hay[i + j] != '\0'; j++) {
            if (ascii_lower((unsigned char)hay[i + j]) != ascii_lower((unsigned char)needle[j]))
                break;
        }
        if (needle[j] == '\0')
            return 1;
    }
    return 0;
}

/* An entry of two characters is a SQLSTATE class ("08": every connection
 * exception), of five one SQLSTATE. */
static int state_in(const sqle_strings *list, const char *state)
{
    size_t i;

    if (state[0] == '\0')
        return 0;
    for (i = 0; i < list->n; i++) {
        const char *e = list->items[i];
        size_t n = strlen(e);
        if (n == 2 ? strncmp(state, e, 2) == 0 : strcmp(state, e) == 0)
            return 1;
    }
    return 0;
}

static int phrase_in(const sqle_strings *list, const char *msg)
{
    size_t i;

    for (i = 0; i < list->n; i++) {
        if (contains_ci(msg, list->items[i]))
            return 1;
    }
    return 0;
}

/* Offsets of the lists within sqle_failure_rules, so that [common]'s
 * and the dialect's are asked alike. */
#define RULE(field) offsetof(sqle_failure_rules, field)

static const sqle_strings *rule(const sqle_failure_rules *r, size_t off)
{
    return (const sqle_strings *)(const void *)((const char *)r + off);
}

static int any_state(const sqle_dialect *dl, size_t off, const char *state)
{
    return state_in(rule(&sqle_common_failures, off), state) ||
           (dl != NULL && state_in(rule(&dl->failures, off), state));
}

static int any_phrase(const sqle_dialect *dl, size_t off, const char *msg)
{
    return phrase_in(rule(&sqle_common_failures, off), msg) ||
           (dl != NULL && phrase_in(rule(&dl->failures, off), msg));
}

/*
 * The order matters where a diagnostic fits two kinds.  The kinds that
 * make the caller drop the connection come first, a timeout before a lost
 * connection: either way the connection cannot be trusted (the server
 * may still be running the statement), and the timeout is what the
 * caller was promised.  A missing table counts by its phrase only under
 * a generic SQLSTATE (or none): a specific one (PostgreSQL's missing
 * column, 42703, "column ... does not exist") says what it is.
 */
sqle_failure sqle_classify(const sqle_diag *d, const sqle_dialect *dl, int stage)
{
    const char *state = d != NULL && d->sqlstate != NULL ? d->sqlstate : "";
    const char *msg = d != NULL && d->message != NULL ? d->message : "";

    if (any_state(dl, RULE(timeout_sqlstates), state))
        return SQLEASE_FAIL_TIMEOUT;
    if (stage == SQLEASE_AT_CONNECT) {
        if (any_state(dl, RULE(config_sqlstates), state) ||
            any_phrase(dl, RULE(config_messages), msg))
            return SQLEASE_FAIL_CONFIG;
        return SQLEASE_FAIL_CONNECT;
    }
    if (any_state(dl, RULE(connection_lost_sqlstates), state) ||
        any_phrase(dl, RULE(connection_lost_messages), msg))
        return SQLEASE_FAIL_CONN_LOST;
    if (any_state(dl, RULE(missing_table_sqlstates), state))
        return SQLEASE_FAIL_NO_TABLE;
    if ((state[0] == '\0' || any_state(dl, RULE(generic_sqlstates), state)) &&
        any_phrase(dl, RULE(missing_table_messages), msg))
        return SQLEASE_FAIL_NO_TABLE;
    if (any_state(dl, RULE(serialization_sqlstates), state))
        return SQLEASE_FAIL_SERIALIZATION;
    if (any_phrase(dl, RULE(locked_messages), msg))
        return SQLEASE_FAIL_LOCKED;
    if (any_state(dl, RULE(privilege_sqlstates), state))
        return SQLEASE_FAIL_PRIVILEGE;
    if ((state[0] == '\0' || any_state(dl, RULE(generic_sqlstates), state)) &&
        any_phrase(dl, RULE(privilege_messages), msg))
        return SQLEASE_FAIL_PRIVILEGE;
    return SQLEASE_FAIL_ERROR;
}

sqle_failure sqle_classify_error(const sqlease_error *err, const sqle_dialect *dl,
                                 int stage)
{
    sqle_diag d;

    if (err == NULL)
        return SQLEASE_FAIL_ERROR;
    d.sqlstate = err->sqlstate;
    d.native = err->native_error;
    d.message = err->message;
    return sqle_classify(&d, dl, stage);
}

int sqle_failure_status(sqle_failure f)
{
    switch (f) {
    case SQLEASE_FAIL_TIMEOUT:
        return SQLEASE_ETIMEOUT;
    case SQLEASE_FAIL_CONN_LOST:
    case SQLEASE_FAIL_CONNECT:
    case SQLEASE_FAIL_CONFIG:
        return SQLEASE_ECONNECT;
    case SQLEASE_FAIL_NO_TABLE:
        return SQLEASE_ENOTABLE;
    case SQLEASE_FAIL_ERROR:
    case SQLEASE_FAIL_SERIALIZATION:
    case SQLEASE_FAIL_LOCKED:
    case SQLEASE_FAIL_PRIVILEGE:
        break;
    }
    return SQLEASE_EDB;
}

const char *sqle_failure_name(sqle_failure f)
{
    switch (f) {
    case SQLEASE_FAIL_ERROR:
        return "error";
    case SQLEASE_FAIL_TIMEOUT:
        return "timeout";
    case SQLEASE_FAIL_CONN_LOST:
        return "connection lost";
    case SQLEASE_FAIL_NO_TABLE:
        return "missing table";
    case SQLEASE_FAIL_SERIALIZATION:
        return "serialization failure";
    case SQLEASE_FAIL_LOCKED:
        return "locked";
    case SQLEASE_FAIL_PRIVILEGE:
        return "permission denied";
    case SQLEASE_FAIL_CONNECT:
        return "cannot connect";
    case SQLEASE_FAIL_CONFIG:
        return "driver or DSN missing";
    }
    return "unknown";
}
