/* chunks.c: chunk memory for the per-thread buffers, under one cap over all
 * threads. Chunks grow from 16 KiB to 1 MiB as a thread records more; 1 MiB
 * chunks are recycled through a pool instead of freed, so a warm profiler
 * stops allocating. Pooled chunks still count against the cap. Called only
 * from slow paths: a thread's chunk switch and the collector.
 *
 * A chunk switch may run in a signal handler that interrupted malloc or the
 * collector, on the same thread, so acquiring a chunk neither calls malloc
 * (chunks are pages from mmap) nor waits for a lock (a busy pool is passed
 * by). */
#include "chunks.h"
#include "fork.h"

#include <pthread.h>
#include <stdatomic.h>

static _Atomic size_t bytes_in_use;
static _Atomic size_t cap_bytes = SP_DEFAULT_BUFFER_CAP;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static sp__chunk *pool;
/* Pooled chunks of a parent process, forgotten in this forked child. */
static sp__chunk *forgotten_pool;

void sp__record_set_cap(size_t cap)
{
    if (cap == 0) cap = SP_DEFAULT_BUFFER_CAP;
    if (cap < SP__CHUNK_MIN_BYTES * 4) cap = SP__CHUNK_MIN_BYTES * 4;
    atomic_store(&cap_bytes, cap);
}

size_t sp__record_bytes_in_use(void) { return atomic_load(&bytes_in_use); }

size_t sp__chunk_next_bytes(const sp__chunk *cur)
{
    if (!cur || cur->bytes == 0) return SP__CHUNK_MIN_BYTES;
    size_t next = cur->bytes * 2;
    return next > SP__CHUNK_MAX_BYTES ? SP__CHUNK_MAX_BYTES : next;
}

static sp__chunk *pool_pop(void)
{
    if (pthread_mutex_trylock(&pool_lock) != 0) return NULL;
    sp__chunk *c = pool;
    if (c) pool = atomic_load_explicit(&c->next, memory_order_relaxed);
    pthread_mutex_unlock(&pool_lock);
    return c;
}

static void prefault(sp__chunk *c)
{
    /* Touch each page now, on the slow path, so that the hot path never takes
     * a page fault on a fresh chunk. */
    volatile char *p = (volatile char *)c;
    for (size_t off = 0; off < c->bytes; off += 4096) p[off] = 0;
}

static sp__chunk *new_chunk(size_t bytes, int past_cap)
{
    size_t cap = atomic_load(&cap_bytes);
    if (!past_cap && atomic_load(&bytes_in_use) + bytes > cap) return NULL;
    if (atomic_fetch_add(&bytes_in_use, bytes) + bytes > cap && !past_cap) {
        atomic_fetch_sub(&bytes_in_use, bytes);
        return NULL;
    }
    sp__chunk *c = sp__alloc_pages(bytes);
    if (!c) {
        atomic_fetch_sub(&bytes_in_use, bytes);
        return NULL;
    }
    c->bytes = bytes;
    c->cap = (bytes - sizeof *c) / sizeof(sp__word);
    prefault(c);
    return c;
}

static sp__chunk *acquire(size_t bytes, int past_cap)
{
    sp__chunk *c = NULL;
    if (bytes == SP__CHUNK_MAX_BYTES) c = pool_pop();
    if (!c) c = new_chunk(bytes, past_cap);
    if (!c) return NULL;
    atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&c->sealed_end, NULL, memory_order_relaxed);
    return c;
}

sp__chunk *sp__chunk_acquire(size_t bytes) { return acquire(bytes, 0); }

sp__chunk *sp__chunk_acquire_past_cap(size_t bytes) { return acquire(bytes, 1); }

void sp__chunk_release(sp__chunk *c)
{
    if (!c || c->bytes == 0) return; /* a thread's empty stub chunk */
    if (c->bytes == SP__CHUNK_MAX_BYTES) {
        pthread_mutex_lock(&pool_lock);
        atomic_store_explicit(&c->next, pool, memory_order_relaxed);
        pool = c;
        pthread_mutex_unlock(&pool_lock);
        return;
    }
    atomic_fetch_sub(&bytes_in_use, c->bytes);
    sp__free_pages(c, c->bytes);
}

void sp__record_trim(void)
{
    pthread_mutex_lock(&pool_lock);
    sp__chunk *c = pool;
    pool = NULL;
    pthread_mutex_unlock(&pool_lock);
    while (c) {
        sp__chunk *next = atomic_load_explicit(&c->next, memory_order_relaxed);
        atomic_fetch_sub(&bytes_in_use, c->bytes);
        sp__free_pages(c, c->bytes);
        c = next;
    }
}

void sp__chunks_fork_lock(void) { pthread_mutex_lock(&pool_lock); }

void sp__chunks_fork_unlock(void) { pthread_mutex_unlock(&pool_lock); }

/* In a forked child (fork.c): the parent's chunks, pooled or in use, no
 * longer count against the cap; pooled ones move to `forgotten_pool`. */
void sp__chunks_fork_child(void)
{
    if (pool) {
        sp__chunk *last = pool;
        while (atomic_load_explicit(&last->next, memory_order_relaxed))
            last = atomic_load_explicit(&last->next, memory_order_relaxed);
        atomic_store_explicit(&last->next, forgotten_pool, memory_order_relaxed);
        forgotten_pool = pool;
        pool = NULL;
    }
    atomic_store(&bytes_in_use, 0);
}
