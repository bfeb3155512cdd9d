/* collect_hooks.c: the process-wide collection hooks (sp_collect_hook_add).
 * A library that records beside stepprof without a profiler of its own (an
 * MPI or NCCL wrapper, LD_PRELOAD'ed) registers one from its constructor;
 * every profiler then calls it where it calls its own span_hook (profiler.c),
 * on the thread that drives that profiler, so the hook may hand its records
 * over with sp_profiler_add_comm_info and friends.
 *
 * Invariant: slots are written once, under reg_lock, before `count` is
 * raised with release order; readers load `count` with acquire order and
 * read only the slots below it, so they never take the lock and never see a
 * half-written slot. Slots are never removed. */
#include "api.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct hook_slot {
    sp_collect_hook_fn fn;
    void *user;
} hook_slot;

static hook_slot slots[SP_COLLECT_HOOK_MAX];
static _Atomic size_t count;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

sp_status sp_collect_hook_add(sp_collect_hook_fn fn, void *user)
{
    if (!fn) return sp__fail(SP_EINVAL, "sp_collect_hook_add: fn is NULL");
    sp_status s = SP_OK;
    pthread_mutex_lock(&reg_lock);
    size_t n = atomic_load_explicit(&count, memory_order_relaxed);
    for (size_t i = 0; i < n; i++)
        if (slots[i].fn == fn && slots[i].user == user) goto done; /* already there: once */
    if (n == SP_COLLECT_HOOK_MAX) {
        s = sp__fail(SP_ENOMEM, "sp_collect_hook_add: all %d hook slots are taken",
                     SP_COLLECT_HOOK_MAX);
        goto done;
    }
    slots[n] = (hook_slot){fn, user};
    atomic_store_explicit(&count, n + 1, memory_order_release);
done:
    pthread_mutex_unlock(&reg_lock);
    return s;
}

void sp__collect_hooks_run(sp_profiler *prof, sp_span_event event)
{
    size_t n = atomic_load_explicit(&count, memory_order_acquire);
    for (size_t i = 0; i < n; i++)
        slots[i].fn(prof, event, slots[i].user);
}
