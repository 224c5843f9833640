/*
 * notify.h -- systemd's readiness protocol (sd_notify(3)), written out
 * so that the tool needs no libsystemd: when the service manager sets
 * $NOTIFY_SOCKET, `supervise` tells it READY=1 once it contends for the
 * lease, STATUS=... whenever what it is doing changes ("holding, token
 * 7", "standby, held by host-b"), and STOPPING=1 when it shuts down.
 * Each message is one datagram on an AF_UNIX SOCK_DGRAM socket; an
 * address starting with '@' is in Linux's abstract namespace.  On Windows
 * (and without $NOTIFY_SOCKET) every call does nothing.
 */
#ifndef SQLEASE_CLI_NOTIFY_H
#define SQLEASE_CLI_NOTIFY_H

/* Read $NOTIFY_SOCKET and take it out of the environment, so that CMD
 * does not send its own readiness messages in sqlease's name (systemd
 * refuses them with NotifyAccess=main, and logs every one).  Call before
 * any thread starts.  Returns 1 if messages will be sent, 0 if not
 * (unset, or an address this cannot use: logged). */
int cli_notify_init(void);

/* 1 after a successful cli_notify_init. */
int cli_notify_enabled(void);

/* Send one message ("READY=1", "STATUS=...", lines separated by '\n').
 * Failures are logged at debug level and otherwise ignored: the service
 * manager going away must not stop the work. */
void cli_notify_send(const char *msg);

/* Close the socket (at exit). */
void cli_notify_close(void);

#endif
