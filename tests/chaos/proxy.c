/*
 * proxy.c -- a pausable TCP proxy on loopback, so the harness can cut one
 * instance off the database server without touching the others.
 *
 * Each instance gets its own listening port; every connection accepted
 * there is paired with a new connection to the server, and bytes are
 * copied both ways by one poll() loop on a thread of its own.  A
 * blackholed port stops doing anything: it accepts nothing new (the
 * kernel's backlog completes handshakes, so clients hang rather than get
 * refused) and forwards nothing either way, while every socket stays open
 * and every byte is held.  Healing resumes exactly where it stopped: the
 * statements sent into the partition are delivered late, which is what a
 * real partition does to a live TCP connection, and what the fencing token
 * must defend against.
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

typedef struct pipe_buf {
    char data[BUF];
    size_t len;
} pipe_buf;

typedef struct pair {
    int port;         /* which listener it came from */
    int fd[2];        /* 0 client, 1 server */
    pipe_buf buf[2];  /* buf[i]: read from fd[i], to be written to fd[1 - i] */
    int eof[2];       /* fd[i] said end-of-file (or failed) */
} pair;

struct ch_proxy {
    struct sockaddr_in up;
    int n;
    int *listen_fd;
    int *port;
    int *blackholed;           /* guarded by mu */
    pthread_mutex_t mu;
    int stopping;              /* guarded by mu */
    int wake[2];
    pthread_t thread;
    pair *pairs[MAX_PAIRS];
};

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

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

/* A new client on listener i: connect to the server at once (loopback
 * connects or is refused immediately); a refused one closes the client,
 * which is what the client would have seen without the proxy. */
static void accept_one(ch_proxy *p, int i)
{
    int cfd = accept4(p->listen_fd[i], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    int sfd, k, one = 1;
    pair *c;

    if (cfd < 0)
        return;
    sfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sfd < 0 || connect(sfd, (struct sockaddr *)&p->up, sizeof p->up) != 0) {
        if (sfd >= 0)
            close(sfd);
        close(cfd);
        return;
    }
    set_nonblock(sfd);
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
    c->fd[0] = cfd;
    c->fd[1] = sfd;
    p->pairs[k] = c;
}

/* Move what can be moved on one pair; returns 0 when the pair is done
 * (one side ended and everything it sent has been passed on). */
static int pair_pump(pair *c, const short *rev)
{
    for (int i = 0; i < 2; i++) {
        pipe_buf *b = &c->buf[i];

        if (!c->eof[i] && b->len < BUF && (rev[i] & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t r = read(c->fd[i], b->data + b->len, BUF - b->len);
            if (r > 0)
                b->len += (size_t)r;
            else if (r == 0 || (errno != EAGAIN && errno != EINTR))
                c->eof[i] = 1;
        }
        if (b->len > 0 && (rev[1 - i] & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = write(c->fd[1 - i], b->data, b->len);
            if (w > 0) {
                memmove(b->data, b->data + w, b->len - (size_t)w);
                b->len -= (size_t)w;
            } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
                c->eof[1 - i] = 1;
                b->len = 0;
            }
        }
    }
    return !((c->eof[0] && c->buf[0].len == 0) || (c->eof[1] && c->buf[1].len == 0));
}

static void *proxy_main(void *arg)
{
    ch_proxy *p = arg;
    struct pollfd *pfd = calloc((size_t)(1 + p->n + 2 * MAX_PAIRS), sizeof *pfd);
    int *black = calloc((size_t)p->n, sizeof *black);

    if (pfd == NULL || black == NULL) {
        free(pfd);
        free(black);
        return NULL;
    }
    for (;;) {
        int np = 0, i, k, stop;

        pthread_mutex_lock(&p->mu);
        stop = p->stopping;
        memcpy(black, p->blackholed, (size_t)p->n * sizeof *black);
        pthread_mutex_unlock(&p->mu);
        if (stop)
            break;
        pfd[np].fd = p->wake[0];
        pfd[np++].events = POLLIN;
        for (i = 0; i < p->n; i++) {
            pfd[np].fd = black[i] ? -1 : p->listen_fd[i];
            pfd[np++].events = POLLIN;
        }
        for (k = 0; k < MAX_PAIRS; k++) {
            pair *c = p->pairs[k];
            for (i = 0; i < 2; i++) {
                pfd[np + 2 * k + i].fd = -1;
                pfd[np + 2 * k + i].events = 0;
                pfd[np + 2 * k + i].revents = 0;
                if (c == NULL || black[c->port])
                    continue;
                pfd[np + 2 * k + i].fd = c->fd[i];
                if (!c->eof[i] && c->buf[i].len < BUF)
                    pfd[np + 2 * k + i].events |= POLLIN;
                if (c->buf[1 - i].len > 0)
                    pfd[np + 2 * k + i].events |= POLLOUT;
            }
        }
        if (poll(pfd, (nfds_t)(np + 2 * MAX_PAIRS), 200) < 0 && errno != EINTR)
            break;
        if (pfd[0].revents & POLLIN) {
            char junk[64];
            while (read(p->wake[0], junk, sizeof junk) > 0)
                ;
        }
        for (i = 0; i < p->n; i++)
            if (!black[i] && (pfd[1 + i].revents & POLLIN))
                accept_one(p, i);
        for (k = 0; k < MAX_PAIRS; k++) {
            pair *c = p->pairs[k];
            short rev[2];

            if (c == NULL || black[c->port])
                continue;
            rev[0] = pfd[np + 2 * k].revents;
            rev[1] = pfd[np + 2 * k + 1].revents;
            if (pfd[np + 2 * k].fd < 0)
                continue; /* accepted during this round: polled next round */
            if ((rev[0] | rev[1]) == 0)
                continue;
            if (!pair_pump(c, rev))
                pair_close(p, k);
        }
    }
    free(pfd);
    free(black);
    return NULL;
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
    p->blackholed = calloc((size_t)n, sizeof *p->blackholed);
    p->up.sin_family = AF_INET;
    p->up.sin_port = htons((uint16_t)port);
    if (p->listen_fd == NULL || p->port == NULL || p->blackholed == NULL ||
        inet_pton(AF_INET, host, &p->up.sin_addr) != 1 ||
        pipe2(p->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        fprintf(stderr, "chaos: proxy: bad upstream '%s' or out of resources\n", host);
        free(p->listen_fd);
        free(p->port);
        free(p->blackholed);
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
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
            p->listen_fd[i] = -1;
            p->n = i;
            ch_proxy_stop(p);
            return NULL;
        }
        p->listen_fd[i] = fd;
        p->port[i] = ntohs(a.sin_port);
    }
    if (pthread_create(&p->thread, NULL, proxy_main, p) != 0) {
        fprintf(stderr, "chaos: proxy: cannot start its thread\n");
        p->thread = 0;
        ch_proxy_stop(p);
        return NULL;
    }
    return p;
}

int ch_proxy_port(const ch_proxy *p, int i)
{
    return p != NULL && i >= 0 && i < p->n ? p->port[i] : 0;
}

void ch_proxy_blackhole(ch_proxy *p, int i, int on)
{
    if (p == NULL || i < 0 || i >= p->n)
        return;
    pthread_mutex_lock(&p->mu);
    p->blackholed[i] = on;
    pthread_mutex_unlock(&p->mu);
    if (write(p->wake[1], "x", 1) < 0) {
        /* the poll timeout picks the change up */
    }
}

void ch_proxy_stop(ch_proxy *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    pthread_mutex_unlock(&p->mu);
    if (write(p->wake[1], "x", 1) < 0) {
        /* the poll timeout picks the change up */
    }
    if (p->thread != 0)
        pthread_join(p->thread, NULL);
    for (int k = 0; k < MAX_PAIRS; k++)
        pair_close(p, k);
    for (int i = 0; i < p->n; i++)
        if (p->listen_fd[i] >= 0)
            close(p->listen_fd[i]);
    close(p->wake[0]);
    close(p->wake[1]);
    pthread_mutex_destroy(&p->mu);
    free(p->listen_fd);
    free(p->port);
    free(p->blackholed);
    free(p);
}
