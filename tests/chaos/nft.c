/*
 * nft.c -- the kernel's packet filter as a fault injector, and the keeper
 * process that undoes what the harness changed on the host.
 *
 * The proxy of proxy.c is kind: a blackholed leg holds every byte and
 * replays it the moment it heals, so TCP never loses a segment and never
 * backs off.  A real network drops packets; the client's TCP then
 * retransmits with exponential backoff, a connect's SYN is retried 1, 3,
 * 7 s later, and a driver that waits on the socket waits for all of it.
 * Here the kernel does the dropping: one nftables table of the harness's
 * own, `inet sqlease_chaos_<pid>`, whose input chain drops (never rejects:
 * a reset would tell the client at once) the packets of chosen loopback
 * ports.
 *
 * Which ports: the proxy legs'.  Every instance's sqlease, and its CMD,
 * reach the server through a leg of their own (a loopback port of the
 * proxy), so a rule on one leg's port cuts exactly that client's
 * connections, in one direction (tcp dport = leg: client -> server) or the
 * other (tcp sport = leg: server -> client) or both, while the rest of the
 * fleet and the harness's own connection keep working.  Per-instance
 * network namespaces with veth pairs would cut the same traffic, but need
 * an address the server listens on outside loopback and leave namespaces
 * and links to clean up after a crash; a port rule on loopback is the same
 * TCP behaviour seen by the client with one table to remove.  The proxy's
 * own connection to the server is never cut, so it never blocks in
 * connect(); the client sees exactly what a partition shows it.
 *
 * Every loopback packet passes the input hook, so one chain there sees
 * both directions.  Each rule has a counter: a packet a client sent into
 * the cut is proof that it had something in flight.
 *
 * Clean-up on every exit path: the table is created by a keeper process
 * (a shell, in a session of its own, ignoring SIGINT/SIGTERM/SIGHUP) that
 * holds the read end of a pipe whose only write end is the harness's.
 * When the harness exits or dies however it dies (a crash, SIGKILL), the
 * pipe reaches end-of-file and the keeper deletes the table and sends
 * SIGCONT to every server process the harness said it was freezing.  A
 * normal exit also deletes the table itself first.  ci/chaos.sh deletes a
 * table the keeper could not (the keeper killed too), by the harness's pid.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chaos.h"

static struct {
    char table[64];
    const char *nft;     /* the nft binary */
    pid_t keeper;
    int to_keeper;       /* write end of the keeper's pipe, -1 when none */
    int open;
} N = {.keeper = 0, .to_keeper = -1};

/* The keeper: creates the table, says "ok" (or "fail") on stdout, then
 * collects "frozen PID" lines until end-of-file and undoes everything. */
static const char keeper_script[] =
    "trap '' INT TERM HUP QUIT TSTP TTIN TTOU\n"
    "nft=$1 t=$2\n"
    "if printf 'table inet %s {\\n chain input {\\n  type filter hook input priority -5;"
    " policy accept;\\n }\\n}\\n' \"$t\" | \"$nft\" -f - >/dev/null; then\n"
    "  echo ok\n"
    "else\n"
    "  echo fail\n"
    "  exit 1\n"
    "fi\n"
    "pids=\n"
    "while read -r what pid; do\n"
    "  if [ \"$what\" = frozen ]; then pids=\"$pids $pid\"; fi\n"
    "done\n"
    "\"$nft\" delete table inet \"$t\" >/dev/null 2>&1\n"
    "if [ -n \"$pids\" ]; then kill -CONT $pids >/dev/null 2>&1; fi\n"
    "exit 0\n";

static const char *find_nft(void)
{
    static const char *const where[] = {"/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft",
                                        "/bin/nft", "/usr/local/sbin/nft"};

    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++)
        if (access(where[i], X_OK) == 0)
            return where[i];
    return NULL;
}

/* Run nft with `script` on its stdin (nft -f -) or with argv-style
 * arguments; its stdout goes to out (if not NULL).  Returns its exit
 * status, or -1. */
static int run_nft(const char *script, const char *const *args, char *out, size_t cap)
{
    int in[2] = {-1, -1}, res[2] = {-1, -1}, st;
    char *argv[16];
    int n = 0;
    pid_t pid;
    size_t got = 0;

    if (out != NULL && cap > 0)
        out[0] = '\0';
    if ((script != NULL && pipe2(in, O_CLOEXEC) != 0) || pipe2(res, O_CLOEXEC) != 0) {
        if (in[0] >= 0) {
            close(in[0]);
            close(in[1]);
        }
        return -1;
    }
    argv[n++] = (char *)N.nft;
    if (script != NULL) {
        argv[n++] = "-f";
        argv[n++] = "-";
    }
    for (int i = 0; args != NULL && args[i] != NULL && n < 15; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    pid = fork();
    if (pid == 0) {
        int nul = open("/dev/null", O_RDONLY);

        if (script != NULL)
            dup2(in[0], 0);
        else if (nul >= 0)
            dup2(nul, 0);
        dup2(res[1], 1);
        execv(argv[0], argv);
        _exit(127);
    }
    if (script != NULL)
        close(in[0]);
    close(res[1]);
    if (pid < 0) {
        if (script != NULL)
            close(in[1]);
        close(res[0]);
        return -1;
    }
    if (script != NULL) {
        size_t len = strlen(script), off = 0;
        while (off < len) {
            ssize_t w = write(in[1], script + off, len - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        close(in[1]);
    }
    for (;;) {
        char buf[4096];
        ssize_t r = read(res[0], buf, sizeof buf);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        if (out != NULL && got + 1 < cap) {
            size_t take = (size_t)r < cap - 1 - got ? (size_t)r : cap - 1 - got;
            memcpy(out + got, buf, take);
            got += take;
            out[got] = '\0';
        }
    }
    close(res[0]);
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int ch_nft_open(char *why, size_t cap)
{
    int to[2], from[2];
    char line[16];
    size_t got = 0;
    int64_t until;

    why[0] = '\0';
    if (geteuid() != 0) {
        snprintf(why, cap, "not root (nftables rules need root)");
        return -1;
    }
    N.nft = find_nft();
    if (N.nft == NULL) {
        snprintf(why, cap, "nft not found (install nftables)");
        return -1;
    }
    snprintf(N.table, sizeof N.table, "sqlease_chaos_%ld", (long)getpid());
    if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0) {
        snprintf(why, cap, "pipe: %s", strerror(errno));
        return -1;
    }
    N.keeper = fork();
    if (N.keeper == 0) {
        /* A session of its own: a ^C or a signal to the harness's process
         * group does not reach it; only the pipe's end does. */
        setsid();
        dup2(to[0], 0);
        dup2(from[1], 1);
        /* Nothing else of the harness's (its database socket, say) may
         * live on in the keeper. */
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        execl("/bin/sh", "sh", "-c", keeper_script, "sqlease-chaos-keeper", N.nft, N.table,
              (char *)NULL);
        _exit(127);
    }
    close(to[0]);
    close(from[1]);
    if (N.keeper < 0) {
        close(to[1]);
        close(from[0]);
        snprintf(why, cap, "fork: %s", strerror(errno));
        return -1;
    }
    N.to_keeper = to[1];
    until = ch_mono_ms() + 10000;
    while (got < sizeof line - 1 && memchr(line, '\n', got) == NULL) {
        struct pollfd pf = {.fd = from[0], .events = POLLIN, .revents = 0};
        ssize_t r;
        int left = (int)(until - ch_mono_ms());

        if (left <= 0 || poll(&pf, 1, left) <= 0)
            break;
        r = read(from[0], line + got, sizeof line - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(from[0]);
    line[got] = '\0';
    if (strncmp(line, "ok", 2) != 0) {
        snprintf(why, cap, "nft could not create table inet %s", N.table);
        ch_nft_close();
        return -1;
    }
    N.open = 1;
    return 0;
}

const char *ch_nft_table(void)
{
    return N.table;
}

int ch_nft_cut(const int *ports, int n, int dirs)
{
    char *script;
    size_t cap = 128 + (size_t)n * 2 * 256, len = 0;
    int rc;

    if (!N.open)
        return -1;
    script = malloc(cap);
    if (script == NULL)
        return -1;
    /* Two rules a port and direction: packets that carry data (longer
     * than the 52-60 bytes of a bare TCP/IP header with options: a
     * statement, an answer), counted apart from the rest (acknowledgements,
     * SYNs), so that a dropped delayed ACK is not taken for a statement in
     * flight. */
    for (int i = 0; i < n; i++) {
        static const char *const key[2] = {"dport", "sport"};
        for (int d = 0; d < 2; d++) {
            if (!(dirs & (d == 0 ? CH_DROP_TO_SERVER : CH_DROP_TO_CLIENT)))
                continue;
            len += (size_t)snprintf(script + len, cap - len,
                                    "add rule inet %s input tcp %s %d ip length > 80 counter "
                                    "drop\nadd rule inet %s input tcp %s %d counter drop\n",
                                    N.table, key[d], ports[i], N.table, key[d], ports[i]);
        }
    }
    rc = run_nft(script, NULL, NULL, 0);
    free(script);
    if (rc != 0)
        fprintf(stderr, "chaos: nft could not add the drop rules (status %d)\n", rc);
    return rc == 0 ? 0 : -1;
}

int ch_nft_heal(void)
{
    const char *args[] = {"flush", "chain", "inet", N.table, "input", NULL};
    int rc;

    if (!N.open)
        return 0;
    rc = run_nft(NULL, args, NULL, 0);
    if (rc != 0)
        fprintf(stderr, "chaos: nft could not remove the drop rules (status %d)\n", rc);
    return rc == 0 ? 0 : -1;
}

/* Parses `nft list chain` output: one rule a line, such as
 *   tcp dport 40123 ip length > 80 counter packets 3 bytes 420 drop */
long ch_nft_dropped(int port, int dir)
{
    const char *args[] = {"list", "chain", "inet", N.table, "input", NULL};
    const char *key = dir == CH_DROP_TO_SERVER ? "dport" : "sport";
    char out[16384], want[64];
    const char *p;

    if (!N.open || run_nft(NULL, args, out, sizeof out) != 0)
        return -1;
    snprintf(want, sizeof want, "tcp %s %d ip length > 80 ", key, port);
    p = strstr(out, want);
    if (p != NULL) {
        const char *c = strstr(p, "packets ");
        long packets;

        if (c != NULL && sscanf(c, "packets %ld", &packets) == 1)
            return packets;
    }
    return -1;
}

void ch_keeper_frozen(long pid)
{
    char line[48];
    int len;

    if (N.to_keeper < 0)
        return;
    len = snprintf(line, sizeof line, "frozen %ld\n", pid);
    if (write(N.to_keeper, line, (size_t)len) != len) {
        /* the keeper is gone: the teardown's own SIGCONT still runs */
    }
}

void ch_nft_close(void)
{
    if (N.open) {
        const char *args[] = {"delete", "table", "inet", N.table, NULL};
        if (run_nft(NULL, args, NULL, 0) != 0)
            fprintf(stderr, "chaos: nft could not delete table inet %s; its keeper will\n",
                    N.table);
        N.open = 0;
    }
    if (N.to_keeper >= 0) {
        close(N.to_keeper);
        N.to_keeper = -1;
    }
    if (N.keeper > 0) {
        int st;
        while (waitpid(N.keeper, &st, 0) < 0 && errno == EINTR)
            ;
        N.keeper = 0;
    }
}
