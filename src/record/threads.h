/* threads.h: the registry of recording threads (threads.c), shared by the
 * hot path (registration) and the drain. */
#ifndef SP_RECORD_THREADS_H
#define SP_RECORD_THREADS_H

#include "record.h"

/* The calling thread's buffer, or NULL before its first recorded event. */
extern _Thread_local sp__tbuf *sp__tls_tbuf;

/* Creates and registers the calling thread's buffer (with an empty stub
 * chunk), or returns NULL if even that allocation fails. */
sp__tbuf *sp__thread_register(void);

/* crash.c hook: the first thread of the registry, read without its lock. */
sp__tbuf *sp__threads_first(void);

/* ring.c: takes the registry lock for a ring take and returns 1, or returns
 * 0 without it when waiting could deadlock (this thread holds it already)
 * or last long (a drain holds it). Release it with sp__threads_unlock. */
int sp__threads_lock_for_ring(void);

/* Also sp__threads_lock and sp__threads_unlock (fork.h). */

#endif
