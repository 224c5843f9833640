/*
 * child.h -- CMD as a child process of the tool: started with the lease's
 * name, owner and token in its environment, watched without blocking, and
 * stopped the one way the CLI contract allows (SIGTERM to its process
 * group, SIGKILL after the grace).
 */
#ifndef SQLEASE_CLI_CHILD_H
#define SQLEASE_CLI_CHILD_H

#include <stddef.h>
#include <stdint.h>

#include "os.h"
#include "sqlease.h"

/* Start argv with SQLEASE_NAME, SQLEASE_OWNER, SQLEASE_TOKEN, (unless
 * fence_sql is NULL) SQLEASE_FENCE_SQL and the nextra "NAME=value" of
 * extra_env (at most 8) set; foreground: hand it the
 * terminal when sqlease has it (`run`, see SQLEASE_CHILD_FOREGROUND).
 * CMD is held at a gate until gate(gate_ud, pid) has returned 0 (see
 * sqle_child_spawn_gated; gate may be NULL).  Must be called from the
 * main thread (the death signal that ties CMD to this process is tied to
 * the thread that forks).  Returns 0, 1 (held back by gate: nothing
 * runs), or -1 with a message in err. */
int cli_child_start(sqle_child *c, char *const *argv, const char *name,
                    const char *owner, int64_t token, const char *fence_sql,
                    const char *const *extra_env, size_t nextra, int foreground,
                    sqle_child_gate_fn gate, void *gate_ud, char *err, size_t cap);

/* SQLEASE_FENCE_SQL for CMD: the fence of the supervisor's running hold,
 * which must be `token`, with its values written as literals, into buf.
 * Returns buf, or NULL (logged at warn level, saying why) when there is
 * none or a value cannot be written as a literal safely. */
const char *cli_child_fence_sql(sqlease_supervisor *sup, int64_t token, char *buf, size_t cap);

/* The process id for messages (0 once the handle is closed). */
long cli_child_pid(const sqle_child *c);

/* Non-blocking look: 1 if CMD exited (*code set, handle closed, and any
 * process it left in its group stopped: SIGTERM, SIGKILL after grace_ms),
 * 0 if it is still running, -1 on error (CMD may still be running: stop
 * it). */
int cli_child_poll(sqle_child *c, int64_t grace_ms, int *code);

/* Stop CMD: SIGTERM to its group, SIGKILL to the group if it has not
 * exited after grace_ms, then wait until it is reaped.  Returns its exit
 * status (128+N for signal N), or -1 if it could not be waited for.  The
 * handle is closed either way. */
int cli_child_stop(sqle_child *c, int64_t grace_ms);

/* The same in two halves, for a caller that reports the stop: the SIGTERM
 * goes out first (cli_child_term, which returns when it was sent, mono
 * ms), the line saying so after it, then the rest (cli_child_finish, with
 * what cli_child_term returned), so that nothing written on the way, to
 * a stderr that may block, delays the signal. */
int64_t cli_child_term(sqle_child *c);
int cli_child_finish(sqle_child *c, int64_t termed, int64_t grace_ms);

#endif
