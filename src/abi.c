/*
 * abi.c -- reading and writing the caller's structs that grow (see
 * "Structs that grow" in sqlease.h).
 *
 * A program allocates sqlease_options, sqlease_db_options,
 * sqlease_lease_info and sqlease_state with the size its own copy of the
 * header gave them, which may be smaller than this library's (an older
 * program) or larger (a newer one); their first member says which.  The
 * library works on full structs of its own and crosses to the caller's
 * only here: reading the bytes the caller's size covers over the
 * defaults, and writing no byte past it.
 */
#include <string.h>

#include "internal.h"

/* A size below the `size` member itself, or above any struct this
 * library will ever have, was never set by an init macro: the struct is
 * stack garbage or zeroed by hand, and reading it would be a guess. */
int sqle_struct_in(void *full, size_t full_size, const void *in, const char *what,
                   const char *init, sqlease_error *err)
{
    size_t size;

    memcpy(&size, in, sizeof size);
    if (size < sizeof size || size > SQLEASE_SIZE_MAX)
        return sqle_fail(err, SQLEASE_EINVAL,
                         "%s: size %zu: the struct was not initialised (call %s first)",
                         what, size, init);
    memcpy(full, in, size < full_size ? size : full_size);
    memcpy(full, &full_size, sizeof full_size);
    return SQLEASE_OK;
}

/* The size member is written with the rest: it says how much of the
 * caller's struct the library filled, which is all of it unless the
 * caller's header is newer than this library. */
void sqle_struct_out(void *out, size_t out_size, void *full, size_t full_size)
{
    size_t n = out_size < full_size ? out_size : full_size;

    memcpy(full, &n, sizeof n);
    memcpy(out, full, n);
}
