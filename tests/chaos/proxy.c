/*
 * proxy.c -- a TCP proxy on loopback with one port ("leg") per client, so
 * the harness can cut one instance (or one instance's CMD) off the
 * database server without touching the others, and can tell which
 * client's packets are which when the kernel drops them.
 *
 * Each leg has its own listening port; in forwarding mode every connection
 * accepted there is paired with a new connection to the server, and bytes
 * are copied both ways by one poll() loop on a thread of its own.  Two
 * other modes:
 *
 *  - blackholed: the leg accepts nothing new (the kernel's backlog
 *    completes handshakes, so clients hang rather than get refused) and
 *    forwards nothing either way, while every socket stays open and every
 *    byte is held.  Healing resumes exactly where it stopped: statements
 *    sent into the partition are delivered late, which is what a
 *    partition does to a live connection and what the fencing token must
 *    defend against.  (A kind partition: nothing is lost, so no TCP
 *    backoff follows.  The kernel faults of nft.c are the unkind ones.)
 *  - silent: the leg's forwarded connections are closed (their clients
 *    see the server go away) and new connections are accepted and then
 *    never read nor written: a server that accepts and never answers.
 *    For each one the proxy records how long its client kept it open
 *    before giving up (closing it), which is how long the driver's
 *    connect waited.
 *
 * Mode changes are synchronous: ch_proxy_set_mode returns once the proxy
 * thread has applied them, so a measurement taken right after a heal
 * sees its effects.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "chaos.h"

#define BUF 65536
#define MAX_PAIRS 256
#define MAX_SILENT 128
#define MAX_RECORDS 4096

typedef struct pipe_buf {
    char data[BUF];
    size_t len;
} pipe_buf;

typedef struct pair {
    int port;         /* which leg it came from */
    int connecting;   /* the connection to the server is not up yet */
    int fd[2];        /* 0 client, 1 server */
    pipe_buf buf[2];  /* buf[i]: read from fd[i], to be written to fd[1 - i] */
    int eof[2];       /* fd[i] said end-of-file (or failed) */
} pair;

/* One connection accepted by a silent leg. */
typedef struct silent_rec {
    int leg;
    int64_t accepted;
    int64_t closed;   /* -1 while open */
    int by_client;    /* the client closed it (gave up), not the proxy */
} silent_rec;

struct ch_proxy {
    struct sockaddr_in up;
    int n;
    int *listen_fd;
    int *port;
    pthread_mutex_t mu;
    pthread_cond_t applied_cv;
    int *mode;                 /* guarded by mu: what the harness asked for */
    uint64_t requested;        /* guarded by mu: bumped by every set_mode */
    uint64_t applied;          /* guarded by mu: the proxy thread has caught up to this */
    int stopping;              /* guarded by mu */
    uint64_t *answers;         /* guarded by mu */
    int64_t *last_answer;      /* guarded by mu */
    silent_rec *rec;           /* guarded by mu */
    size_t nrec;               /* guarded by mu */
    int wake[2];
    pthread_t thread;
    int thread_started;
    FILE *trace;               /* SQLEASE_CHAOS_TRACE: every chunk moved, or NULL */
    /* proxy thread only */
    int *cur_mode;
    pair *pairs[MAX_PAIRS];
    int silent_fd[MAX_SILENT];
    size_t silent_rec_of[MAX_SILENT];
};

static void pair_close(ch_proxy *p, int k)
{
    pair *c = p->pairs[k];

    if (c == NULL)
        return;
    close(c->fd[0]);
    close(c->fd[1]);
    free(c);
    p->pairs[k] = NULL;
}

/* One line of the optional trace: what moved where, when. */
static void trace(ch_proxy *p, const pair *c, const char *what, long n)
{
    if (p->trace == NULL)
        return;
    fprintf(p->trace, "%lld leg %d fd %d %s %ld\n", (long long)ch_mono_ms(), c->port, c->fd[0],
            what, n);
    fflush(p->trace);
}

/* Close silent connection slot k, recording who ended it. */
static void silent_close(ch_proxy *p, int k, int by_client)
{
    if (p->silent_fd[k] < 0)
        return;
    close(p->silent_fd[k]);
    p->silent_fd[k] = -1;
    pthread_mutex_lock(&p->mu);
    p->rec[p->silent_rec_of[k]].closed = ch_mono_ms();
    p->rec[p->silent_rec_of[k]].by_client = by_client;
    pthread_mutex_unlock(&p->mu);
}

/* A new client on a forwarding leg i: connect to the server without
 * blocking (the proxy's one thread serves every leg: a connect that waits,
 * say on a frozen server whose backlog is full, must not stall the
 * others); the pair forwards once the connect completes.  A refused one
 * closes the client, which is what the client would have seen without
 * the proxy. */
static void accept_forward(ch_proxy *p, int i, int cfd)
{
    int sfd, k, one = 1, connecting = 0;
    pair *c;

    sfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (sfd >= 0 && connect(sfd, (struct sockaddr *)&p->up, sizeof p->up) != 0) {
        if (errno == EINPROGRESS) {
            connecting = 1;
        } else {
            close(sfd);
            sfd = -1;
        }
    }
    if (sfd < 0) {
        close(cfd);
        return;
    }
    (void)setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    (void)setsockopt(sfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    for (k = 0; k < MAX_PAIRS && p->pairs[k] != NULL; k++)
        ;
    c = k < MAX_PAIRS ? calloc(1, sizeof *c) : NULL;
    if (c == NULL) {
        close(sfd);
        close(cfd);
        return;
    }
    c->port = i;
    c->connecting = connecting;
    c->fd[0] = cfd;
    c->fd[1] = sfd;
    p->pairs[k] = c;
    trace(p, c, "accept", 0);
}

/* A new client on a silent leg: keep the socket, never touch its data. */
static void accept_silent(ch_proxy *p, int i, int cfd)
{
    int k;

    for (k = 0; k < MAX_SILENT && p->silent_fd[k] >= 0; k++)
        ;
    pthread_mutex_lock(&p->mu);
    if (k == MAX_SILENT || p->nrec == MAX_RECORDS) {
        pthread_mutex_unlock(&p->mu);
        close(cfd);
        return;
    }
    p->rec[p->nrec].leg = i;
    p->rec[p->nrec].accepted = ch_mono_ms();
    p->rec[p->nrec].closed = -1;
    p->rec[p->nrec].by_client = 0;
    p->silent_rec_of[k] = p->nrec++;
    pthread_mutex_unlock(&p->mu);
    p->silent_fd[k] = cfd;
}

static void accept_one(ch_proxy *p, int i)
{
    int cfd = accept4(p->listen_fd[i], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

    if (cfd < 0)
        return;
    if (p->cur_mode[i] == CH_LEG_SILENT)
        accept_silent(p, i, cfd);
    else
        accept_forward(p, i, cfd);
}

/* Move what can be moved on one pair; returns 0 when the pair is done
 * (one side ended and everything it sent has been passed on).  *answered
 * is set when server bytes reached the client. */
static int pair_pump(ch_proxy *p, pair *c, const short *rev, int *answered)
{
    for (int i = 0; i < 2; i++) {
        pipe_buf *b = &c->buf[i];

        if (!c->eof[i] && b->len < BUF && (rev[i] & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t r = read(c->fd[i], b->data + b->len, BUF - b->len);
            if (r > 0)
                b->len += (size_t)r;
            else if (r == 0 || (errno != EAGAIN && errno != EINTR))
                c->eof[i] = 1;
            trace(p, c, i == 0 ? "read-client" : "read-server", (long)r);
        }
        if (b->len > 0 && (rev[1 - i] & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = write(c->fd[1 - i], b->data, b->len);
            trace(p, c, i == 0 ? "wrote-server" : "wrote-client", (long)w);
            if (w > 0) {
                memmove(b->data, b->data + w, b->len - (size_t)w);
                b->len -= (size_t)w;
                if (i == 1)
                    *answered = 1;
            } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
                c->eof[1 - i] = 1;
                b->len = 0;
            }
        }
    }
    return !((c->eof[0] && c->buf[0].len == 0) || (c->eof[1] && c->buf[1].len == 0));
}

/* Take over the modes the harness asked for.  A leg turning silent drops
 * its forwarded connections; a leg leaving silent mode closes the
 * connections it was keeping silent (their clients then see the server
 * go away, as when a frozen server is killed). */
static int apply_modes(ch_proxy *p)
{
    int stop;
    uint64_t req;

    pthread_mutex_lock(&p->mu);
    stop = p->stopping;
    req = p->requested;
    for (int i = 0; i < p->n; i++) {
        int want = p->mode[i];
        int was = p->cur_mode[i];

        if (want == was)
            continue;
        p->cur_mode[i] = want;
        pthread_mutex_unlock(&p->mu);
        if (want == CH_LEG_SILENT) {
            for (int k = 0; k < MAX_PAIRS; k++)
                if (p->pairs[k] != NULL && p->pairs[k]->port == i)
                    pair_close(p, k);
        }
        if (was == CH_LEG_SILENT) {
            for (int k = 0; k < MAX_SILENT; k++)
                if (p->silent_fd[k] >= 0 && p->rec[p->silent_rec_of[k]].leg == i)
                    silent_close(p, k, 0);
        }
        pthread_mutex_lock(&p->mu);
    }
    p->applied = req;
    pthread_cond_broadcast(&p->applied_cv);
    pthread_mutex_unlock(&p->mu);
    return stop;
}

static void *proxy_main(void *arg)
{
    ch_proxy *p = arg;
    size_t cap = (size_t)(1 + p->n + 2 * MAX_PAIRS + MAX_SILENT);
    struct pollfd *pfd = calloc(cap, sizeof *pfd);

    if (pfd == NULL)
        return NULL;
    for (;;) {
        int np = 0, i, k, base_pairs, base_silent;

        if (apply_modes(p))
            break;
        pfd[np].fd = p->wake[0];
        pfd[np++].events = POLLIN;
        for (i = 0; i < p->n; i++) {
            pfd[np].fd = p->cur_mode[i] == CH_LEG_BLACKHOLE ? -1 : p->listen_fd[i];
            pfd[np++].events = POLLIN;
        }
        base_pairs = np;
        for (k = 0; k < MAX_PAIRS; k++) {
            pair *c = p->pairs[k];
            for (i = 0; i < 2; i++) {
                struct pollfd *q = &pfd[base_pairs + 2 * k + i];

                q->fd = -1;
                q->events = 0;
                q->revents = 0;
                if (c == NULL || p->cur_mode[c->port] != CH_LEG_FORWARD)
                    continue;
                if (c->connecting) {
                    /* only the server side, for the connect's outcome */
                    if (i == 1) {
                        q->fd = c->fd[1];
                        q->events = POLLOUT;
                    }
                    continue;
                }
                q->fd = c->fd[i];
                if (!c->eof[i] && c->buf[i].len < BUF)
                    q->events |= POLLIN;
                if (c->buf[1 - i].len > 0)
                    q->events |= POLLOUT;
            }
        }
        base_silent = base_pairs + 2 * MAX_PAIRS;
        for (k = 0; k < MAX_SILENT; k++) {
            /* POLLRDHUP, not POLLIN: the client's end-of-file is seen
             * without reading (and so without consuming) what it sent. */
            pfd[base_silent + k].fd = p->silent_fd[k];
            pfd[base_silent + k].events = POLLRDHUP;
            pfd[base_silent + k].revents = 0;
        }
        if (poll(pfd, (nfds_t)cap, 200) < 0 && errno != EINTR)
            break;
        if (pfd[0].revents & POLLIN) {
            char junk[64];
            while (read(p->wake[0], junk, sizeof junk) > 0)
                ;
        }
        for (i = 0; i < p->n; i++)
            if (p->cur_mode[i] != CH_LEG_BLACKHOLE && (pfd[1 + i].revents & POLLIN))
                accept_one(p, i);
        for (k = 0; k < MAX_PAIRS; k++) {
            pair *c = p->pairs[k];
            short rev[2];
            int answered = 0, leg;

            if (c == NULL || p->cur_mode[c->port] != CH_LEG_FORWARD)
                continue;
            if (c->connecting) {
                int err = 0;
                socklen_t len = sizeof err;

                if (pfd[base_pairs + 2 * k + 1].fd < 0 ||
                    pfd[base_pairs + 2 * k + 1].revents == 0)
                    continue; /* still connecting, or accepted during this round */
                if (getsockopt(c->fd[1], SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
                    trace(p, c, "connect-failed", err);
                    pair_close(p, k);
                    continue;
                }
                c->connecting = 0;
                trace(p, c, "connected", 0);
                continue;
            }
            if (pfd[base_pairs + 2 * k].fd < 0)
                continue; /* accepted during this round: polled next round */
            rev[0] = pfd[base_pairs + 2 * k].revents;
            rev[1] = pfd[base_pairs + 2 * k + 1].revents;
            if ((rev[0] | rev[1]) == 0)
                continue;
            leg = c->port;
            if (!pair_pump(p, c, rev, &answered)) {
                trace(p, c, "close", 0);
                pair_close(p, k);
            }
            if (answered) {
                pthread_mutex_lock(&p->mu);
                p->answers[leg]++;
                p->last_answer[leg] = ch_mono_ms();
                pthread_mutex_unlock(&p->mu);
            }
        }
        for (k = 0; k < MAX_SILENT; k++)
            if (p->silent_fd[k] >= 0 && pfd[base_silent + k].fd >= 0 &&
                (pfd[base_silent + k].revents & (POLLRDHUP | POLLHUP | POLLERR)))
                silent_close(p, k, 1);
    }
    free(pfd);
    return NULL;
}

static void proxy_free(ch_proxy *p)
{
    free(p->listen_fd);
    free(p->port);
    free(p->mode);
    free(p->cur_mode);
    free(p->answers);
    free(p->last_answer);
    free(p->rec);
    free(p);
}

ch_proxy *ch_proxy_start(const char *host, int port, int n)
{
    ch_proxy *p = calloc(1, sizeof *p);
    int i;

    if (p == NULL)
        return NULL;
    p->n = n;
    p->listen_fd = calloc((size_t)n, sizeof *p->listen_fd);
    p->port = calloc((size_t)n, sizeof *p->port);
    p->mode = calloc((size_t)n, sizeof *p->mode);
    p->cur_mode = calloc((size_t)n, sizeof *p->cur_mode);
    p->answers = calloc((size_t)n, sizeof *p->answers);
    p->last_answer = calloc((size_t)n, sizeof *p->last_answer);
    p->rec = calloc(MAX_RECORDS, sizeof *p->rec);
    for (i = 0; i < MAX_SILENT; i++)
        p->silent_fd[i] = -1;
    p->up.sin_family = AF_INET;
    p->up.sin_port = htons((uint16_t)port);
    if (p->listen_fd == NULL || p->port == NULL || p->mode == NULL || p->cur_mode == NULL ||
        p->answers == NULL || p->last_answer == NULL || p->rec == NULL ||
        inet_pton(AF_INET, host, &p->up.sin_addr) != 1 ||
        pipe2(p->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        fprintf(stderr, "chaos: proxy: bad upstream '%s' or out of resources\n", host);
        proxy_free(p);
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->applied_cv, NULL);
    if (getenv("SQLEASE_CHAOS_TRACE") != NULL && getenv("SQLEASE_CHAOS_TRACE")[0] != '\0')
        p->trace = fopen(getenv("SQLEASE_CHAOS_TRACE"), "a");
    for (i = 0; i < n; i++)
        p->listen_fd[i] = -1;
    for (i = 0; i < n; i++) {
        struct sockaddr_in a;
        socklen_t len = sizeof a;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

        memset(&a, 0, sizeof a);
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = 0;
        if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 64) != 0 ||
            getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
            perror("chaos: proxy: listen");
            if (fd >= 0)
                close(fd);
            ch_proxy_stop(p);
            return NULL;
        }
        p->listen_fd[i] = fd;
        p->port[i] = ntohs(a.sin_port);
    }
    if (pthread_create(&p->thread, NULL, proxy_main, p) != 0) {
        fprintf(stderr, "chaos: proxy: cannot start its thread\n");
        ch_proxy_stop(p);
        return NULL;
    }
    p->thread_started = 1;
    return p;
}

int ch_proxy_port(const ch_proxy *p, int i)
{
    return p != NULL && i >= 0 && i < p->n ? p->port[i] : 0;
}

static void wake(ch_proxy *p)
{
    if (write(p->wake[1], "x", 1) < 0) {
        /* the pipe is full: the thread is about to wake anyway */
    }
}

void ch_proxy_set_mode(ch_proxy *p, int i, int mode)
{
    uint64_t ticket;

    if (p == NULL || i < 0 || i >= p->n)
        return;
    pthread_mutex_lock(&p->mu);
    p->mode[i] = mode;
    ticket = ++p->requested;
    pthread_mutex_unlock(&p->mu);
    wake(p);
    pthread_mutex_lock(&p->mu);
    while (p->thread_started && p->applied < ticket && !p->stopping)
        pthread_cond_wait(&p->applied_cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void ch_proxy_blackhole(ch_proxy *p, int i, int on)
{
    ch_proxy_set_mode(p, i, on ? CH_LEG_BLACKHOLE : CH_LEG_FORWARD);
}

uint64_t ch_proxy_answers(ch_proxy *p, int i, int64_t *last_ms)
{
    uint64_t n = 0;

    if (last_ms != NULL)
        *last_ms = 0;
    if (p == NULL || i < 0 || i >= p->n)
        return 0;
    pthread_mutex_lock(&p->mu);
    n = p->answers[i];
    if (last_ms != NULL)
        *last_ms = p->last_answer[i];
    pthread_mutex_unlock(&p->mu);
    return n;
}

void ch_proxy_silent_stats(ch_proxy *p, int i, int64_t since, int *n, int *given_up,
                           int64_t *longest_ms)
{
    int64_t now = ch_mono_ms();

    *n = 0;
    *given_up = 0;
    *longest_ms = -1;
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    for (size_t k = 0; k < p->nrec; k++) {
        const silent_rec *r = &p->rec[k];
        int64_t held;

        if (r->leg != i || r->accepted < since)
            continue;
        held = (r->closed >= 0 ? r->closed : now) - r->accepted;
        (*n)++;
        if (r->by_client)
            (*given_up)++;
        if (held > *longest_ms)
            *longest_ms = held;
    }
    pthread_mutex_unlock(&p->mu);
}

void ch_proxy_stop(ch_proxy *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    pthread_cond_broadcast(&p->applied_cv);
    pthread_mutex_unlock(&p->mu);
    wake(p);
    if (p->thread_started)
        pthread_join(p->thread, NULL);
    for (int k = 0; k < MAX_PAIRS; k++)
        pair_close(p, k);
    for (int k = 0; k < MAX_SILENT; k++)
        if (p->silent_fd[k] >= 0)
            close(p->silent_fd[k]);
    for (int i = 0; i < p->n; i++)
        if (p->listen_fd[i] >= 0)
            close(p->listen_fd[i]);
    close(p->wake[0]);
    close(p->wake[1]);
    pthread_cond_destroy(&p->applied_cv);
    pthread_mutex_destroy(&p->mu);
    if (p->trace != NULL)
        fclose(p->trace);
    proxy_free(p);
}
