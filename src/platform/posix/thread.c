/*
 * thread.c -- threads on POSIX (see platform.h): started with a small
 * stack, joined or detached, and told apart for re-entry checks.
 */
#include "platform.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A lease costs up to two threads and a process may hold a thousand
 * leases, so threads get a small stack instead of the default 8 MiB.
 * Sanitizers inflate frames, so builds with one get more. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SQLEASE_STACK_SIZE ((size_t)2 * 1024 * 1024)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SQLEASE_STACK_SIZE ((size_t)2 * 1024 * 1024)
#endif
#endif
#ifndef SQLEASE_STACK_SIZE
#define SQLEASE_STACK_SIZE ((size_t)256 * 1024)
#endif

typedef struct {
    void (*fn)(void *);
    void *arg;
} thread_start_ctx;

static void *thread_trampoline(void *p)
{
    thread_start_ctx ctx = *(thread_start_ctx *)p;

    free(p);
    ctx.fn(ctx.arg);
    return NULL;
}

int sqle_thread_start(sqle_thread *t, void (*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    thread_start_ctx *ctx;
    size_t stack = SQLEASE_STACK_SIZE;
    int rc;

    ctx = malloc(sizeof *ctx);
    if (ctx == NULL)
        return -1;
    ctx->fn = fn;
    ctx->arg = arg;
    if (pthread_attr_init(&attr) != 0) {
        free(ctx);
        return -1;
    }
#ifdef PTHREAD_STACK_MIN
    if (stack < (size_t)PTHREAD_STACK_MIN)
        stack = (size_t)PTHREAD_STACK_MIN;
#endif
    /* A refused size is not fatal: the default stack works, only bigger. */
    (void)pthread_attr_setstacksize(&attr, stack);
    rc = pthread_create(&t->t, &attr, thread_trampoline, ctx);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        free(ctx);
        return -1;
    }
    return 0;
}

void sqle_thread_join(sqle_thread *t)
{
    pthread_join(t->t, NULL);
}

void sqle_thread_detach(sqle_thread *t)
{
    pthread_detach(t->t);
}

/* pthread_t is an integer on Linux and a pointer elsewhere; its bytes are
 * stable for the thread's life, which is all an equality test needs. */
uint64_t sqle_thread_self(void)
{
    pthread_t self = pthread_self();
    uint64_t id = 0;

    memcpy(&id, &self, sizeof self < sizeof id ? sizeof self : sizeof id);
    return id;
}
