/*
 * test_holder.c -- what a lease's users build on: the names of statuses
 * and stop reasons.
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "platform.h"

#include "testutil.h"

static sqlease_db *db;

/* The substring every dialect's take statement has, for fault matching. */
/* ---- names ---------------------------------------------------------- */

static void test_names(void)
{
    int s;

    for (s = SQLEASE_OK; s <= SQLEASE_EROWCOUNT; s++) {
        CU_ASSERT_STRING_NOT_EQUAL(sqlease_strerror(s), "unknown status");
        CU_ASSERT_STRING_NOT_EQUAL(sqlease_status_name(s), "unknown");
        CU_ASSERT_EQUAL(strncmp(sqlease_status_name(s), "SQLEASE_", 8), 0);
    }
    CU_ASSERT_STRING_EQUAL(sqlease_status_name(SQLEASE_OK), "SQLEASE_OK");
    CU_ASSERT_STRING_EQUAL(sqlease_status_name(SQLEASE_NOT_HELD), "SQLEASE_NOT_HELD");
    CU_ASSERT_STRING_EQUAL(sqlease_status_name(SQLEASE_EROWCOUNT), "SQLEASE_EROWCOUNT");
    CU_ASSERT_STRING_EQUAL(sqlease_strerror(SQLEASE_ETIMEOUT),
                           "the database did not answer in time (timeout)");
    CU_ASSERT_STRING_EQUAL(sqlease_strerror(-1), "unknown status");
    CU_ASSERT_STRING_EQUAL(sqlease_strerror(SQLEASE_EROWCOUNT + 1), "unknown status");
    CU_ASSERT_STRING_EQUAL(sqlease_status_name(999), "unknown");

    CU_ASSERT_STRING_EQUAL(sqlease_stop_reason_name(SQLEASE_STOP_LOST), "lost");
    CU_ASSERT_STRING_EQUAL(sqlease_stop_reason_name(SQLEASE_STOP_DEADLINE), "deadline");
    CU_ASSERT_STRING_EQUAL(sqlease_stop_reason_name(SQLEASE_STOP_SHUTDOWN), "shutdown");
    CU_ASSERT_STRING_EQUAL(sqlease_stop_reason_name(0), "unknown");
    CU_ASSERT_STRING_EQUAL(sqlease_stop_reason_name(4), "unknown");
    CU_ASSERT_STRING_EQUAL(sqlease_stop_reason_str(SQLEASE_STOP_DEADLINE),
                           "the lease was not proven for the renew deadline");
    CU_ASSERT_PTR_NOT_NULL(strstr(sqlease_stop_reason_str(SQLEASE_STOP_LOST), "hold is gone"));
    CU_ASSERT_STRING_EQUAL(sqlease_stop_reason_str(SQLEASE_STOP_SHUTDOWN), "shutting down");
    CU_ASSERT_STRING_EQUAL(sqlease_stop_reason_str(-7), "unknown stop reason");
}

static void add(void)
{
    CU_pSuite s = CU_add_suite("holder", NULL, NULL);
    CU_add_test(s, "every status and stop reason has a name", test_names);
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
