/* threads.c: the registry of threads that have recorded, and the collector's
 * side of their buffers. A thread registers on its first recorded event; when
 * it exits, a pthread key destructor marks its buffer exited, and the buffer
 * stays in the registry until its last records are drained, so nothing a
 * short-lived worker thread recorded is lost. The registry lock is taken only
 * on registration and by the collector. */
#define _GNU_SOURCE
#include "chunks.h"
#include "fork.h"
#include "threads.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

_Thread_local sp__tbuf *sp__tls_tbuf;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
/* Whether this thread holds registry_lock, so that a ring take from a signal
 * handler on it gives up instead of deadlocking; and whether a drain holds
 * it, which may take long, so that a ring take does not wait for it. */
static _Thread_local int holding_registry;
static _Atomic int draining;

static void lock_registry(void)
{
    pthread_mutex_lock(&registry_lock);
    holding_registry = 1;
}

static void unlock_registry(void)
{
    holding_registry = 0;
    pthread_mutex_unlock(&registry_lock);
}
/* Events of threads whose buffer could not be allocated: they have nowhere
 * to count their own drops, so they are counted here. */
static _Atomic uint64_t orphan_drops;

void sp__record_count_orphan_drop(void) { atomic_fetch_add_explicit(&orphan_drops, 1, memory_order_relaxed); }

uint64_t sp__record_take_orphan_drops(void) { return atomic_exchange(&orphan_drops, 0); }
static sp__tbuf *registry;
static uint64_t registered; /* serials given, under registry_lock */
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static int exit_key_made;
/* Buffers of a parent process, forgotten in this forked child (fork.c). */
static sp__tbuf *forgotten;

static void on_thread_exit(void *arg)
{
    sp__tbuf *tb = arg;
    sp__tls_tbuf = NULL;
    atomic_store_explicit(&tb->exited, 1, memory_order_release);
}

static void make_exit_key(void) { exit_key_made = pthread_key_create(&exit_key, on_thread_exit) == 0; }

static void read_thread_name(uint64_t tid, char *out, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%llu/comm", (unsigned long long)tid);
    FILE *f = fopen(path, "r");
    if (!f) return;
    if (fgets(out, (int)size, f)) out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

sp__tbuf *sp__thread_register(void)
{
    sp__clock_init(); /* orders this thread after the clock's one-time setup */
    pthread_once(&exit_key_once, make_exit_key);
    sp__tbuf *tb = sp__alloc(sizeof *tb);
    sp__chunk *stub = sp__alloc(sizeof *stub);
    if (!tb || !stub) {
        sp__free(tb);
        sp__free(stub);
        return NULL;
    }
    /* The stub has no room, so the first event takes the slow path and gets
     * a real chunk; the collector's chain starts at the stub either way. */
    tb->cur = tb->head = stub;
    tb->read = stub->words;
    tb->limit = tb->hard_limit = stub->words;
    atomic_store_explicit(&tb->pos, stub->words, memory_order_relaxed);
    tb->read_ticks = sp__ticks(); /* the base that restores the first end's high bits */
    tb->tid = (uint64_t)syscall(SYS_gettid);
    prctl(PR_GET_NAME, tb->name, 0, 0, 0);
    lock_registry();
    tb->serial = ++registered;
    tb->next_thread = registry;
    registry = tb;
    unlock_registry();
    pthread_setspecific(exit_key, tb);
    sp__tls_tbuf = tb;
    return tb;
}

/* Consumes one thread's records up to its published position, stopping at
 * the first event written after end_ticks. Returns 1 if it read everything
 * that was published. */
static int drain_thread(sp__tbuf *tb, uint64_t end_ticks, sp__drain_fn fn, void *ctx)
{
    sp__word *published = atomic_load_explicit(&tb->pos, memory_order_acquire);
    sp__chunk *c = tb->head;
    while (!sp__in_chunk(c, tb->read)) c = atomic_load_explicit(&c->next, memory_order_acquire);
    for (;;) {
        int last = sp__in_chunk(c, published);
        sp__word *stop = last ? published : atomic_load_explicit(&c->sealed_end, memory_order_acquire);
        sp__word *run = tb->read, *w = tb->read;
        uint64_t run_ticks = tb->read_ticks, ticks = run_ticks;
        while (w < stop) {
            uint64_t t = sp__event_ticks(w, ticks);
            if (t > end_ticks) break;
            ticks = t;
            w += sp__event_words(w);
        }
        if (w > stop) w = stop; /* a corrupt length must not read past the end */
        if (fn && w > run) fn(ctx, tb, run, (size_t)(w - run), run_ticks);
        tb->read = w;
        tb->read_ticks = ticks;
        if (w < stop) return 0;
        if (last) break;
        c = atomic_load_explicit(&c->next, memory_order_acquire);
        tb->read = c->words;
    }
    /* Every chunk before the one being read is finished: recycle it. */
    while (!sp__in_chunk(tb->head, tb->read)) {
        sp__chunk *next = atomic_load_explicit(&tb->head->next, memory_order_acquire);
        if (tb->head->bytes == 0) {
            sp__free(tb->head);
        } else {
            sp__chunk_release(tb->head);
        }
        tb->head = next;
    }
    return 1;
}

static void free_thread(sp__tbuf *tb)
{
    sp__chunk *c = tb->head;
    while (c) {
        sp__chunk *next = atomic_load_explicit(&c->next, memory_order_relaxed);
        if (c->bytes == 0)
            sp__free(c);
        else
            sp__chunk_release(c);
        c = next;
    }
    sp__free(tb);
}

int sp__record_mark_counts(sp__count_marks *out)
{
    out->marks = NULL;
    out->count = 0;
    lock_registry();
    size_t n = 0;
    for (sp__tbuf *tb = registry; tb; tb = tb->next_thread) n++;
    sp__count_mark *m = n ? sp__alloc(sizeof *m * n) : NULL;
    if (n && !m) {
        unlock_registry();
        return -1;
    }
    for (sp__tbuf *tb = registry; tb; tb = tb->next_thread, out->count++)
        m[out->count] = (sp__count_mark){
            tb->serial, sp__tbuf_dropped(tb), atomic_load_explicit(&tb->misuse, memory_order_relaxed),
            atomic_exchange_explicit(&tb->overwritten, 0, memory_order_relaxed)};
    unlock_registry();
    out->marks = m;
    return 0;
}

void sp__count_marks_free(sp__count_marks *m)
{
    sp__free(m->marks);
    m->marks = NULL;
    m->count = 0;
}

/* Sets tb's span counts: from its mark, when marks are given (a thread
 * registered after them has none in the span), else from now. *next walks
 * the marks, which are in the registry's order. */
static void take_counts(sp__tbuf *tb, const sp__count_marks *marks, size_t *next)
{
    uint64_t d, m, overwritten;
    if (marks) {
        while (*next < marks->count && marks->marks[*next].serial > tb->serial) (*next)++;
        const sp__count_mark *k = *next < marks->count && marks->marks[*next].serial == tb->serial
                                      ? &marks->marks[*next]
                                      : NULL;
        d = k ? k->dropped : tb->dropped_seen;
        m = k ? k->misuse : tb->misuse_seen;
        overwritten = k ? k->overwritten : 0;
    } else {
        d = sp__tbuf_dropped(tb);
        m = atomic_load_explicit(&tb->misuse, memory_order_relaxed);
        overwritten = atomic_exchange_explicit(&tb->overwritten, 0, memory_order_relaxed);
    }
    tb->span_dropped = d - tb->dropped_seen + overwritten;
    tb->span_misuse = m - tb->misuse_seen;
    tb->dropped_seen = d;
    tb->misuse_seen = m;
}

/* Both drains: with marks (may be NULL), adding up what the span's counts
 * were into *dropped and *misuse (may be NULL). */
static void drain(uint64_t end_ticks, const sp__count_marks *marks, sp__drain_fn fn, void *ctx,
                  uint64_t *dropped, uint64_t *misuse)
{
    uint64_t total_dropped = 0, total_misuse = 0;
    lock_registry();
    atomic_store_explicit(&draining, 1, memory_order_relaxed);
    size_t next = 0;
    sp__tbuf **link = &registry;
    while (*link) {
        sp__tbuf *tb = *link;
        int exited = atomic_load_explicit(&tb->exited, memory_order_acquire);
        if (!exited) read_thread_name(tb->tid, tb->name, sizeof tb->name);
        take_counts(tb, marks, &next);
        total_dropped += tb->span_dropped;
        total_misuse += tb->span_misuse;
        tb->span_lost_open = tb->lost_open;
        int complete = drain_thread(tb, end_ticks, fn, ctx);
        if (fn) fn(ctx, tb, NULL, 0, 0);
        /* Ends of overwritten begins not reached by now fall in a later span,
         * where, like any end whose begin was in an earlier span, they count
         * as unmatched. */
        tb->lost_open = 0;
        if (exited && complete) {
            *link = tb->next_thread;
            free_thread(tb);
        } else {
            link = &tb->next_thread;
        }
    }
    atomic_store_explicit(&draining, 0, memory_order_relaxed);
    unlock_registry();
    if (dropped) *dropped = total_dropped;
    if (misuse) *misuse = total_misuse;
}

void sp__record_drain_marked(uint64_t end_ticks, const sp__count_marks *marks, sp__drain_fn fn,
                             void *ctx)
{
    drain(end_ticks, marks, fn, ctx, NULL, NULL);
}

void sp__record_drain(uint64_t end_ticks, sp__drain_fn fn, void *ctx, uint64_t *dropped,
                      uint64_t *misuse)
{
    drain(end_ticks, NULL, fn, ctx, dropped, misuse);
}

/* crash.c hook: the newest registered thread (the list continues through
 * next_thread), read without the lock, as a signal handler must. Buffers
 * are freed only by the drain: a dump taken while another thread drains is
 * best effort. */
sp__tbuf *sp__threads_first(void) { return __atomic_load_n(&registry, __ATOMIC_ACQUIRE); }

void sp__record_discard(void)
{
    sp__record_mark_drained(sp__ticks());
    sp__record_drain(UINT64_MAX, NULL, NULL, NULL, NULL);
}

void sp__threads_lock(void) { lock_registry(); }

void sp__threads_unlock(void) { unlock_registry(); }

int sp__threads_lock_for_ring(void)
{
    if (holding_registry) return 0;
    if (pthread_mutex_trylock(&registry_lock) != 0) {
        if (atomic_load_explicit(&draining, memory_order_relaxed)) return 0;
        pthread_mutex_lock(&registry_lock);
    }
    holding_registry = 1;
    return 1;
}

/* In a forked child (fork.c): forgets every buffer of the parent, the forking
 * thread's own included, so that the child's threads register afresh. The
 * buffers are chained onto `forgotten` (only the last one's link is written),
 * never freed. */
void sp__threads_fork_child(void)
{
    if (registry) {
        sp__tbuf *last = registry;
        while (last->next_thread) last = last->next_thread;
        last->next_thread = forgotten;
        forgotten = registry;
        registry = NULL;
    }
    atomic_store_explicit(&orphan_drops, 0, memory_order_relaxed);
    sp__tls_tbuf = NULL;
    if (exit_key_made) pthread_setspecific(exit_key, NULL);
}
