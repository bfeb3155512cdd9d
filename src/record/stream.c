/* stream.c: the streaming mode of the crash dump (sp_options.stream_to_disk).
 * While a span is recorded, a background thread wakes every
 * SP__STREAM_PERIOD_MS and appends to a streamed dump at the crash path what
 * each recording thread published since the previous pass: a THREAD section
 * the first time a thread is seen, MORE sections with its new whole events
 * (or with its counts alone, when they moved without new events),
 * NAME sections for static name pointers not written before, then a FLUSH
 * section and fsync. After a SIGKILL the file therefore holds every event
 * published before the last finished pass. profiler.c starts it when a span
 * starts and stops it before the span is collected or discarded; a crash
 * dump (crash.c), written at a crash as without streaming, replaces the
 * streamed file by rename.
 *
 * Invariant: the recording threads are never blocked or slowed, except
 * that a ring take (ring.c) may wait for one chunk's copy. The thread reads
 * each buffer as the crash handler does: the published position with an
 * acquire load, then only the words before it, which the writer never
 * changes again. Chunks and thread buffers are freed only by a drain
 * (threads.c drain_thread, free_thread), and every drain of a span
 * (collection, discard, release) comes after sp__stream_stop, so what the
 * thread reads stays allocated. A chunk is reused during a span only by a
 * ring take, which moves the cursor of a stream still inside it
 * (sp__stream_forget_chunk); `cursor_lock` covers the cursors and each
 * chunk's copy, so a chunk is never reused while it is being copied. The
 * registry only grows at its head during a span, so threads seen before
 * stay in the same order behind it. The thread takes its own `pass_lock`,
 * which no recording thread takes, `cursor_lock`, and briefly the registry
 * lock, which recording threads take only to register (see_new_threads) and
 * for a ring take, never on the hot path. Lock order: registry, then
 * cursor. */
#define _GNU_SOURCE
#include "stream.h"
#include "dump_write.h"
#include "fork.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* One recording thread as the stream sees it: how far it has been written. */
typedef struct seen_thread {
    sp__tbuf *tb;
    sp__chunk *chunk; /* the chunk holding `pos` */
    sp__word *pos;    /* the first word not yet written */
    uint64_t dropped, misuse; /* the counts the file holds for it */
} seen_thread;

static pthread_mutex_t pass_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cursor_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_cond;
static pthread_t thread;
static _Atomic int running; /* the thread exists */
static int stop_asked;      /* wake_lock */
static pid_t owner_pid;
static char path_now[PATH_MAX];
static sp__sync span_start;
static seen_thread *seen;
static size_t seen_count, seen_cap;
static sp__tbuf *seen_head; /* the registry head at the last pass */
static uint64_t *names;     /* written name pointers, open addressing */
static size_t names_cap, names_count;
static char out_buf[65536];
/* The streamed file; out.failed stops the stream writing. */
static sp__dump_writer out = {.fd = -1, .probe = {-1, -1}, .buf = out_buf, .cap = sizeof out_buf};

/* ---- names ---- */

static size_t slot_of(uint64_t ptr, size_t cap)
{
    uint64_t x = ptr;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x & (cap - 1);
}

/* Adds ptr to the set; returns 0 if it was there already. When the set
 * cannot grow, returns 1 (the name is written again: duplicates are fine). */
static int name_is_new(uint64_t ptr)
{
    if ((names_count + 1) * 2 > names_cap) {
        size_t cap = names_cap ? names_cap * 2 : 1024;
        uint64_t *grown = sp__alloc(cap * sizeof *grown);
        if (!grown) return 1;
        for (size_t i = 0; i < names_cap; i++) {
            if (!names[i]) continue;
            size_t j = slot_of(names[i], cap);
            while (grown[j])
                j = (j + 1) & (cap - 1);
            grown[j] = names[i];
        }
        sp__free(names);
        names = grown;
        names_cap = cap;
    }
    size_t j = slot_of(ptr, names_cap);
    for (; names[j]; j = (j + 1) & (names_cap - 1))
        if (names[j] == ptr) return 0;
    names[j] = ptr;
    names_count++;
    return 1;
}

static void put_new_names(const sp__word *w, const sp__word *stop)
{
    while (w < stop) {
        uint64_t ptr = sp__dump_name_of(w);
        if (ptr && name_is_new(ptr)) sp__dump_name(&out, ptr); /* NULL needs no text */
        size_t n = sp__event_words(w);
        if (n == 0 || n > (size_t)(stop - w)) break;
        w += n;
    }
}

/* ---- threads ---- */

/* Adds the threads registered since the last pass (the registry grows at
 * its head), oldest first, each with a THREAD section. The registry lock is
 * held only while walking the new entries: it orders the reads after their
 * registration. Recording threads take it only when they register, never on
 * the hot path; it is the lock fork.c takes, hence its name. */
static void see_new_threads(void)
{
    sp__threads_lock();
    sp__tbuf *head = sp__threads_first();
    size_t fresh = 0;
    for (sp__tbuf *tb = head; tb && tb != seen_head; tb = tb->next_thread)
        fresh++;
    sp__threads_unlock();
    if (fresh == 0) return;
    size_t cap = seen_cap;
    seen_thread *grown = NULL;
    if (seen_count + fresh > seen_cap) {
        cap = seen_cap ? seen_cap : 16;
        while (cap < seen_count + fresh)
            cap *= 2;
        grown = sp__alloc(cap * sizeof *grown);
        if (!grown) return; /* tried again at the next pass */
    }
    size_t i = seen_count + fresh;
    sp__threads_lock();
    pthread_mutex_lock(&cursor_lock);
    if (grown) {
        if (seen_count) memcpy(grown, seen, seen_count * sizeof *seen);
        sp__free(seen);
        seen = grown;
        seen_cap = cap;
    }
    for (sp__tbuf *tb = head; tb && tb != seen_head; tb = tb->next_thread) {
        seen_thread *s = &seen[--i];
        s->tb = tb;
        s->pos = tb->read;
        s->dropped = s->misuse = 0; /* as its THREAD section says */
        s->chunk = tb->head;
        while (s->chunk && !sp__in_chunk(s->chunk, s->pos))
            s->chunk = atomic_load_explicit(&s->chunk->next, memory_order_acquire);
    }
    size_t first_fresh = seen_count;
    seen_count += fresh;
    pthread_mutex_unlock(&cursor_lock);
    sp__threads_unlock();
    for (i = first_fresh; i < seen_count; i++) sp__dump_thread_section(&out, seen[i].tb, 0);
    seen_head = head;
}

void sp__stream_forget_chunk(const sp__tbuf *tb, const sp__chunk *chunk, sp__chunk *next)
{
    pthread_mutex_lock(&cursor_lock);
    for (size_t i = 0; i < seen_count; i++) {
        if (seen[i].tb != tb || seen[i].chunk != chunk) continue;
        seen[i].chunk = next;
        seen[i].pos = next->words;
    }
    pthread_mutex_unlock(&cursor_lock);
}

/* The thread's counts in the span so far, in a MORE head. */
static void more_head(size_t index, sp__dump_more *m)
{
    const sp__tbuf *tb = seen[index].tb;
    m->thread = index;
    m->dropped = sp__tbuf_dropped(tb) - tb->dropped_seen +
                 atomic_load_explicit(&tb->overwritten, memory_order_relaxed);
    m->misuse = atomic_load_explicit(&tb->misuse, memory_order_relaxed) - tb->misuse_seen;
}

/* A MORE section: the head, then the words from `from` to `stop` (none for
 * a section that only brings the counts up to date). */
static void put_more(size_t index, const sp__dump_more *m, const sp__word *from, const sp__word *stop)
{
    size_t bytes = from ? (size_t)(stop - from) * sizeof(sp__word) : 0;
    sp__dump_section(&out, SP__DUMP_MORE, sizeof *m + bytes);
    sp__dump_put(&out, m, sizeof *m);
    if (bytes) sp__dump_put(&out, from, bytes);
    seen[index].dropped = m->dropped;
    seen[index].misuse = m->misuse;
    if (bytes) put_new_names(from, stop);
}

/* Copies what the thread's cursor chunk holds past the cursor, up to
 * `published`, and moves the cursor on. Returns 1 if the next chunk is to be
 * read too. Called with cursor_lock held. */
static int put_chunk_news(size_t index, sp__word *published)
{
    seen_thread *s = &seen[index];
    if (!s->chunk) return 0;
    int last = sp__in_chunk(s->chunk, published);
    sp__word *stop = last ? published : atomic_load_explicit(&s->chunk->sealed_end, memory_order_acquire);
    if (!stop || !sp__in_chunk(s->chunk, stop) || stop < s->pos) return 0;
    if (stop > s->pos) {
        sp__dump_more m;
        more_head(index, &m);
        put_more(index, &m, s->pos, stop);
    }
    s->pos = stop;
    if (last) return 0;
    sp__chunk *next = atomic_load_explicit(&s->chunk->next, memory_order_acquire);
    if (!next) return 0;
    s->chunk = next;
    s->pos = next->words;
    return 1;
}

/* Writes what one thread published since its last pass, chunk by chunk,
 * letting ring takes in between chunks; then, if its counts moved without
 * new words (a thread dropping at the cap publishes none), a MORE section
 * with no words, so that a SIGKILL loses at most a period of drops too. */
static void put_thread_news(size_t index)
{
    pthread_mutex_lock(&cursor_lock);
    sp__word *published = atomic_load_explicit(&seen[index].tb->pos, memory_order_acquire);
    int more = put_chunk_news(index, published);
    pthread_mutex_unlock(&cursor_lock);
    for (int hops = 0; more && hops < 1 << 20; hops++) {
        pthread_mutex_lock(&cursor_lock);
        more = put_chunk_news(index, published);
        pthread_mutex_unlock(&cursor_lock);
    }
    sp__dump_more m;
    more_head(index, &m);
    if (m.dropped != seen[index].dropped || m.misuse != seen[index].misuse)
        put_more(index, &m, NULL, NULL);
}

static void put_flush(void)
{
    sp__sync now;
    sp__clock_sync(&now);
    sp__tick_map map;
    sp__clock_map(&map, &span_start, &now);
    sp__dump_flush f;
    memset(&f, 0, sizeof f);
    f.end_ticks = now.ticks;
    f.anchor_ticks = map.anchor_ticks;
    f.anchor_real_ns = map.anchor_real_ns;
    f.ns_per_tick = map.ns_per_tick;
    f.sections = out.sections;
    sp__dump_section(&out, SP__DUMP_FLUSH, sizeof f);
    sp__dump_put(&out, &f, sizeof f);
}

/* One pass: new threads, new words, their new names, FLUSH, fsync. The
 * FLUSH's time is taken after every position was read, so no event written
 * is later than it. Called with pass_lock held. */
static int pass(void)
{
    if (out.fd < 0 || out.failed) return -1;
    see_new_threads();
    for (size_t i = 0; i < seen_count; i++)
        put_thread_news(i);
    put_flush();
    sp__dump_flush_out(&out);
    if (!out.failed && fsync(out.fd) != 0) out.failed = 1;
    return out.failed ? -1 : 0;
}

static void *stream_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&wake_lock);
    while (!stop_asked) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += SP__STREAM_PERIOD_MS / 1000;
        until.tv_nsec += (long)(SP__STREAM_PERIOD_MS % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (!stop_asked && pthread_cond_timedwait(&wake_cond, &wake_lock, &until) != ETIMEDOUT) {
        }
        if (stop_asked) break;
        pthread_mutex_unlock(&wake_lock);
        pthread_mutex_lock(&pass_lock);
        (void)pass();
        pthread_mutex_unlock(&pass_lock);
        pthread_mutex_lock(&wake_lock);
    }
    pthread_mutex_unlock(&wake_lock);
    return NULL;
}

/* ---- start and stop ---- */

static void forget(void)
{
    if (out.fd >= 0) close(out.fd);
    out.fd = -1;
    for (int i = 0; i < 2; i++) {
        if (out.probe[i] >= 0) close(out.probe[i]);
        out.probe[i] = -1;
    }
    pthread_mutex_lock(&cursor_lock);
    sp__free(seen);
    seen = NULL;
    seen_count = seen_cap = 0;
    pthread_mutex_unlock(&cursor_lock);
    sp__free(names);
    names = NULL;
    names_count = names_cap = 0;
    seen_head = NULL;
    sp__dump_reset(&out);
}

/* Writes the header and META into the new file, and a first FLUSH, so the
 * file loads (as an empty span) as soon as it is in place. */
static void put_start(const sp__crash_info *info)
{
    sp__dump_header(&out);
    /* META's end is the start: each FLUSH gives the time reached. */
    sp__dump_meta_section(&out, 0, (int64_t)getpid(), &span_start, &span_start,
                          info->flags | SP__DUMP_STREAMED, info->process_name);
    sp__dump_dist_section(&out, &info->dist);
    put_flush();
    sp__dump_flush_out(&out);
}

int sp__stream_start(const char *path, const sp__crash_info *info, const sp__sync *start, char *why,
                     size_t why_size)
{
    sp__stream_stop();
    char tmp[PATH_MAX + 16];
    if (!path || !*path || strlen(path) >= sizeof path_now) {
        snprintf(why, why_size, "crash dump path is empty or too long");
        return -1;
    }
    snprintf(path_now, sizeof path_now, "%s", path);
    snprintf(tmp, sizeof tmp, "%s.streamXXXXXX", path);
    span_start = *start;
    out.fd = mkostemp(tmp, O_CLOEXEC);
    if (out.fd < 0) {
        snprintf(why, why_size, "cannot create the streamed dump %s: %s", tmp, strerror(errno));
        return -1;
    }
    if (pipe2(out.probe, O_CLOEXEC | O_NONBLOCK) != 0) {
        snprintf(why, why_size, "cannot create a pipe for the streamed dump: %s", strerror(errno));
        goto fail;
    }
    put_start(info);
    if (out.failed || fsync(out.fd) != 0 || rename(tmp, path_now) != 0) {
        snprintf(why, why_size, "cannot write the streamed dump %s: %s", path_now, strerror(errno));
        goto fail;
    }
    owner_pid = getpid();
    stop_asked = 0;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&wake_cond, &ca);
    pthread_condattr_destroy(&ca);
    /* The thread takes no signal meant for the host's threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&thread, NULL, stream_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        pthread_cond_destroy(&wake_cond);
        unlink(path_now);
        snprintf(why, why_size, "cannot start the streaming thread: %s", strerror(rc));
        forget();
        return -1;
    }
    running = 1;
    return 0;
fail:
    unlink(tmp);
    forget();
    return -1;
}

void sp__stream_stop(void)
{
    if (!running) return;
    running = 0;
    if (getpid() != owner_pid) {
        /* A forked child: the thread and the file are the parent's. */
        forget();
        return;
    }
    pthread_mutex_lock(&wake_lock);
    stop_asked = 1;
    pthread_cond_signal(&wake_cond);
    pthread_mutex_unlock(&wake_lock);
    pthread_join(thread, NULL);
    pthread_cond_destroy(&wake_cond);
    /* Remove the file only if it is still ours: a crash dump may have been
     * renamed onto the path by a crash the host survived. */
    struct stat mine, there;
    if (fstat(out.fd, &mine) == 0 && stat(path_now, &there) == 0 && mine.st_dev == there.st_dev &&
        mine.st_ino == there.st_ino)
        unlink(path_now);
    forget();
}

void sp__stream_fork_lock(void) { pthread_mutex_lock(&cursor_lock); }

void sp__stream_fork_unlock(void) { pthread_mutex_unlock(&cursor_lock); }

int sp__stream_flush(void)
{
    pthread_mutex_lock(&pass_lock);
    int rc = running ? pass() : -1;
    pthread_mutex_unlock(&pass_lock);
    return rc;
}
