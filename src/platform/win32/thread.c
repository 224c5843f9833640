/*
 * thread.c -- threads on Win32 (see platform.h): started with a small
 * reserved stack, joined or detached, and told apart for re-entry checks.
 */
#include "win32.h"

#include <process.h>
#include <stdlib.h>

/* A lease costs up to two threads and a process may hold a thousand
 * leases: reserve a small stack instead of the 1 MiB default. */
#define SQLEASE_STACK_SIZE (256u * 1024u)

typedef struct {
    void (*fn)(void *);
    void *arg;
} thread_start_ctx;

static unsigned __stdcall thread_trampoline(void *p)
{
    thread_start_ctx ctx = *(thread_start_ctx *)p;

    free(p);
    ctx.fn(ctx.arg);
    return 0;
}

int sqle_thread_start(sqle_thread *t, void (*fn)(void *), void *arg)
{
    thread_start_ctx *ctx = malloc(sizeof *ctx);
    uintptr_t h;

    if (ctx == NULL)
        return -1;
    ctx->fn = fn;
    ctx->arg = arg;
    h = _beginthreadex(NULL, SQLEASE_STACK_SIZE, thread_trampoline, ctx,
                       STACK_SIZE_PARAM_IS_A_RESERVATION, NULL);
    if (h == 0) {
        free(ctx);
        return -1;
    }
    t->handle = (void *)h;
    return 0;
}

void sqle_thread_join(sqle_thread *t)
{
    WaitForSingleObject((HANDLE)t->handle, INFINITE);
    CloseHandle((HANDLE)t->handle);
    t->handle = NULL;
}

/* The thread runs on and its resources go when it ends: closing the
 * handle does not stop it. */
void sqle_thread_detach(sqle_thread *t)
{
    if (t->handle != NULL)
        CloseHandle((HANDLE)t->handle);
    t->handle = NULL;
}

uint64_t sqle_thread_self(void)
{
    return (uint64_t)GetCurrentThreadId();
}
