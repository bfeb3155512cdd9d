/* gpu_fork.c: the GPU recorder after fork(). CUDA does not survive a fork:
 * a child of a process that had loaded the driver cannot use it (NVIDIA's
 * documentation; torch refuses likewise, "Cannot re-initialize CUDA in
 * forked subprocess"), and the recorder's state (CUPTI's subscription, its
 * flusher thread, its locks) belongs to the parent. So a child forked from
 * a process that had the CUDA driver loaded, or had used this recorder,
 * never touches CUPTI or the recorder's locks: every call answers as a
 * recorder that cannot trace, with one line saying why. A child of a
 * process that never loaded CUDA is unaffected and may trace its own GPU
 * work.
 *
 * The prepare handler takes no lock (it runs before the other stages'
 * handlers, which do): it notes whether the driver is loaded, with dlopen's
 * RTLD_NOLOAD, outside any lock of stepprof. */
#include "gpu_fork.h"
#include "gpu.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static _Atomic int touched;       /* the recorder was used in this process */
static _Atomic int cuda_at_fork;  /* set in the parent just before a fork */
static _Atomic int forked_off;    /* this process is such a fork's child */

static void before_fork(void)
{
    atomic_store(&cuda_at_fork, atomic_load(&touched) || sp__gpu_cuda_in_process());
}

static void in_child(void)
{
    if (atomic_load(&cuda_at_fork)) atomic_store(&forked_off, 1);
}

static pthread_once_t registered = PTHREAD_ONCE_INIT;

static void register_handlers(void) { pthread_atfork(before_fork, NULL, in_child); }

void sp__gpu_fork_init(void) { pthread_once(&registered, register_handlers); }

void sp__gpu_fork_touch(void)
{
    sp__gpu_fork_init();
    atomic_store(&touched, 1);
}

int sp__gpu_fork_usable(void) { return atomic_load(&touched) && !atomic_load(&forked_off); }

int sp__gpu_fork_refuses(char *why, size_t why_size)
{
    if (!atomic_load(&forked_off)) return 0;
    if (why && why_size)
        snprintf(why, why_size,
                 SP__GPU_OFF "this process was forked from one that had loaded CUDA, and CUDA "
                 "cannot be used in a forked child (start workers with the \"spawn\" method)"
                 SP__GPU_CPU_ONLY);
    return 1;
}
