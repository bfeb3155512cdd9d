/* fork.h: the recording stage's fork() handlers (fork.c) and the hooks each
 * file with process-wide state offers them. */
#ifndef SP_RECORD_FORK_H
#define SP_RECORD_FORK_H

/* Registers the pthread_atfork handlers, once per process. */
void sp__record_fork_init(void);

/* How many fork()s lie between the process's start and now: 0 in a process
 * that was never forked, one more in each child. An object created in an
 * earlier generation was inherited from a parent process. */
unsigned sp__record_fork_generation(void);

/* threads.c: the registry lock (also taken by stream.c while it looks for
 * new threads), and forgetting the parent's threads (including the forking
 * thread's own buffer). */
void sp__threads_lock(void);
void sp__threads_unlock(void);
void sp__threads_fork_child(void);

/* stream.c: the lock of the stream's cursors. */
void sp__stream_fork_lock(void);
void sp__stream_fork_unlock(void);

/* chunks.c: the pool lock, and forgetting the pool and the memory count. */
void sp__chunks_fork_lock(void);
void sp__chunks_fork_unlock(void);
void sp__chunks_fork_child(void);

/* reader.c: the benchmark timer's watch lock, and stopping the watch in the
 * child (the timers it fed are the parent's). */
void sp__reader_fork_lock(void);
void sp__reader_fork_unlock(void);
void sp__reader_fork_child(void);

/* A later stage's lock that nests inside the reader lock (the benchmark
 * timer stack's, which the reader's callback takes), taken last before a
 * fork; `child` resets that stage's state in the child, lock held. */
typedef struct sp__fork_hook {
    void (*lock)(void);
    void (*unlock)(void);
    void (*child)(void);
} sp__fork_hook;

/* Adds a hook (at most 4, each once; the hook must stay valid). */
void sp__record_fork_hook(const sp__fork_hook *hook);

#endif
