/* gpu_fork.h: the GPU recorder after fork() (gpu_fork.c). */
#ifndef SP_GPU_FORK_H
#define SP_GPU_FORK_H

#include <stddef.h>

/* Registers the fork handlers, once per process (from sp_profiler_create
 * and from the recorder's first use). */
void sp__gpu_fork_init(void);

/* Notes that the recorder is being used (before it takes any lock), so
 * that a child forked from now on keeps away from it. */
void sp__gpu_fork_touch(void);

/* Non-zero when the recorder has been used in this process (so its state
 * may need work) and this is not a child that must keep away from it. */
int sp__gpu_fork_usable(void);

/* Returns 1, after writing the refusal line to why, in a child forked from
 * a process that had loaded CUDA or used the recorder; else 0. */
int sp__gpu_fork_refuses(char *why, size_t why_size);

#endif
