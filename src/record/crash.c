/* crash.c: saves the span being recorded when the process dies without
 * stopping the profiler: on a crash signal (SIGSEGV, SIGBUS, SIGABRT,
 * SIGFPE, SIGILL) and at exit(). The profiler layer arms it when it takes
 * the tracers (sp_options.save_on_crash) and disarms it when it lets go.
 *
 * Arming does everything that is not async-signal-safe in advance: it
 * creates the temporary file, the pipe used to test whether a name pointer
 * is readable, and copies the paths and process facts into static storage.
 * The signal path then only reads the recording buffers (no lock: it reads
 * each thread's published position, as the collector does) and calls
 * write, fsync, linkat, close, rename, sigaction and raise, all
 * async-signal-safe.
 *
 * The temporary file has no name while armed (O_TMPFILE) where the file
 * system allows it: a process killed by SIGKILL (the OOM killer) cannot
 * remove a named one, and would leave an empty "<path>.tmpXXXXXX" beside
 * its dump. The dump gives it a name through /proc/self/fd and renames it
 * into place. Without O_TMPFILE or /proc it is a named mkostemp file.
 * It allocates nothing and uses static buffers; one thread dumps at a time.
 * After the dump the previous handler is restored and the signal passed on,
 * so the process dies (or the host's handler runs) as it would have.
 *
 * Invariant: `armed` is set only after every other field of the state is
 * written, and the handler reads the state only after seeing it set. The
 * state belongs to the process that armed it: a forked child (another pid)
 * never writes or removes the parent's file. */
#define _GNU_SOURCE
#include "crash.h"
#include "dump_write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SIGNAL_COUNT 5
static const int crash_signals[SIGNAL_COUNT] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
static struct sigaction previous[SIGNAL_COUNT];
static int exit_registered;

static _Atomic int armed;      /* a file is open and may be written */
static _Atomic int span_open;  /* a span is being recorded */
static _Atomic int dumping;    /* a thread is writing the dump */
static sp__sync span_start;
static sp__crash_info info;
static int64_t armed_pid;
/* The dump file and the pipe that tells readable memory: open while armed. */
static char out_buf[8192];
static sp__dump_writer out = {.fd = -1, .probe = {-1, -1}, .buf = out_buf, .cap = sizeof out_buf};
static char tmp_path[PATH_MAX + 32];
static char final_path[PATH_MAX];
static int unnamed;          /* out.fd is an O_TMPFILE file, named at the dump */
static char fd_link[40];     /* "/proc/self/fd/N" of that file */

/* Static pointers seen in the words, written as NAME sections at the end.
 * When the table is full, further names are written at once (duplicates
 * are allowed by the format). */
#define NAME_SLOTS 16384
static uint64_t name_slots[NAME_SLOTS];

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* Notes a static pointer; writes its name now only if the table is full. */
static void note_name(uint64_t ptr)
{
    if (ptr == 0) return; /* NULL names need no text: the loader knows them */
    size_t j = (size_t)mix(ptr) & (NAME_SLOTS - 1);
    for (size_t probes = 0; probes < NAME_SLOTS / 2; probes++, j = (j + 1) & (NAME_SLOTS - 1)) {
        if (name_slots[j] == ptr) return;
        if (name_slots[j] == 0) {
            name_slots[j] = ptr;
            return;
        }
    }
    sp__dump_name(&out, ptr);
}

static void note_names(const sp__word *w, const sp__word *stop)
{
    while (w < stop) {
        note_name(sp__dump_name_of(w));
        size_t n = sp__event_words(w);
        if (n > (size_t)(stop - w)) break;
        w += n;
    }
}

/* Writes one thread's unread words, chunk by chunk, as the drain would read
 * them (threads.c), but without consuming anything. Chain walks are bounded
 * so that a corrupted buffer cannot hold the dying process. */
static void put_thread(sp__tbuf *tb)
{
    sp__dump_thread_section(&out, tb, 1);

    sp__word *published = atomic_load_explicit(&tb->pos, memory_order_acquire);
    sp__word *start = tb->read;
    sp__chunk *c = tb->head;
    int hops = 0;
    while (c && !sp__in_chunk(c, start) && hops++ < 1 << 20)
        c = atomic_load_explicit(&c->next, memory_order_acquire);
    while (c && hops++ < 1 << 20) {
        int last = sp__in_chunk(c, published);
        sp__word *stop = last ? published : atomic_load_explicit(&c->sealed_end, memory_order_acquire);
        if (!stop || !sp__in_chunk(c, stop) || stop < start) break;
        if (stop > start) {
            size_t bytes = (size_t)(stop - start) * sizeof(sp__word);
            sp__dump_section(&out, SP__DUMP_WORDS, bytes);
            sp__dump_put(&out, start, bytes);
            note_names(start, stop);
        }
        if (last) break;
        c = atomic_load_explicit(&c->next, memory_order_acquire);
        if (c) start = c->words;
    }
}

static void put_meta(int signo)
{
    sp__sync now;
    sp__clock_sync(&now); /* rdtsc and clock_gettime: async-signal-safe */
    sp__dump_meta_section(&out, signo, armed_pid, &span_start, &now, info.flags, info.process_name);
    sp__dump_dist_section(&out, &info.dist);
}

/* Says on stderr that no dump was saved (a full disk, a file size limit):
 * the one line a crash without a dump leaves. Async-signal-safe. */
static void say_not_saved(void)
{
    static const char head[] = "stepprof: could not write the crash dump ";
    static const char tail[] = " (disk full or write error); no dump was saved\n";
    size_t n = 0;
    while (final_path[n]) n++;
    ssize_t rc = write(STDERR_FILENO, head, sizeof head - 1);
    rc = write(STDERR_FILENO, final_path, n);
    rc = write(STDERR_FILENO, tail, sizeof tail - 1);
    (void)rc;
}

/* Writes the whole dump into out.fd, then renames the file into place.
 * Called with `dumping` held. Returns 0 on success. */
static int write_dump(int signo)
{
    sp__dump_reset(&out);
    memset(name_slots, 0, sizeof name_slots);
    sp__dump_header(&out);
    put_meta(signo);
    int threads = 0;
    for (sp__tbuf *tb = sp__threads_first(); tb && threads < 1 << 20; tb = tb->next_thread, threads++)
        put_thread(tb);
    for (size_t i = 0; i < NAME_SLOTS; i++)
        if (name_slots[i]) sp__dump_name(&out, name_slots[i]);
    uint64_t sections = out.sections;
    sp__dump_section(&out, SP__DUMP_END, sizeof sections);
    sp__dump_put(&out, &sections, sizeof sections);
    sp__dump_flush_out(&out);
    int failed = out.failed;
    fsync(out.fd);
    if (unnamed && !failed) {
        failed = linkat(AT_FDCWD, fd_link, AT_FDCWD, tmp_path, AT_SYMLINK_FOLLOW) != 0;
        if (failed && errno == EEXIST) { /* left by a killed process with this pid */
            unlink(tmp_path);
            failed = linkat(AT_FDCWD, fd_link, AT_FDCWD, tmp_path, AT_SYMLINK_FOLLOW) != 0;
        }
    }
    close(out.fd);
    out.fd = -1;
    if (failed || rename(tmp_path, final_path) != 0) {
        unlink(tmp_path);
        say_not_saved();
        return -1;
    }
    return 0;
}

/* Closes the temporary file and removes it (an unnamed one goes with its
 * descriptor). */
static void close_file(void)
{
    close(out.fd);
    out.fd = -1;
    if (!unnamed) unlink(tmp_path);
}

static void close_probe(void)
{
    for (int i = 0; i < 2; i++) {
        if (out.probe[i] >= 0) close(out.probe[i]);
        out.probe[i] = -1;
    }
}

/* Takes the dump if this process armed it and a span is open; disarms. */
static int dump_once(int signo)
{
    if (!atomic_load_explicit(&armed, memory_order_acquire) || (int64_t)getpid() != armed_pid)
        return -1;
    if (atomic_exchange(&dumping, 1)) {
        /* Another thread is dumping: give it up to ten seconds to finish
         * before this thread's signal goes on and perhaps ends the process. */
        struct timespec tick = {0, 10000000};
        for (int i = 0; i < 1000 && atomic_load(&dumping); i++) nanosleep(&tick, NULL);
        return -1;
    }
    int rc = -1;
    if (atomic_load_explicit(&armed, memory_order_acquire)) {
        atomic_store(&armed, 0);
        if (atomic_load_explicit(&span_open, memory_order_acquire)) {
            rc = write_dump(signo);
        } else {
            close_file();
        }
        close_probe();
    }
    atomic_store(&dumping, 0);
    return rc;
}

/* ---- the signal path ---- */

static int signal_index(int sig)
{
    for (int i = 0; i < SIGNAL_COUNT; i++)
        if (crash_signals[i] == sig) return i;
    return -1;
}

static void on_crash(int sig, siginfo_t *si, void *uctx)
{
    int saved_errno = errno;
    dump_once(sig);
    int i = signal_index(sig);
    if (i < 0) return;
    /* Pass the signal on as if stepprof had never been there: the previous
     * handler is put back, then called (or the default action taken). */
    struct sigaction prev = previous[i];
    sigaction(sig, &prev, NULL);
    errno = saved_errno;
    if (prev.sa_flags & SA_SIGINFO) {
        if (prev.sa_sigaction) prev.sa_sigaction(sig, si, uctx);
        return;
    }
    if (prev.sa_handler == SIG_IGN) return;
    if (prev.sa_handler == SIG_DFL) {
        /* The signal is blocked while this handler runs; it is delivered
         * with the default action as soon as the handler returns. */
        raise(sig);
        return;
    }
    prev.sa_handler(sig);
}

static void at_exit(void) { (void)dump_once(0); }

/* Installs the handler for each crash signal where it is not in place
 * (after a crash that the host survived, on_crash has put the previous
 * handler back), remembering the handler it replaces. */
static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < SIGNAL_COUNT; i++) {
        struct sigaction cur;
        if (sigaction(crash_signals[i], NULL, &cur) != 0) continue;
        if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_crash) continue;
        sigaction(crash_signals[i], &sa, &previous[i]);
    }
}

/* ---- arming (ordinary code) ---- */

/* Opens an unnamed temporary file in path's directory, and the name the
 * dump will give it (path + ".tmp<pid>"). Returns -1 where the file system
 * has no O_TMPFILE or /proc is not mounted. */
static int open_unnamed(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    snprintf(fd_link, sizeof fd_link, "/proc/self/fd/%d", fd);
    if (access(fd_link, F_OK) != 0) {
        close(fd);
        return -1;
    }
    snprintf(tmp_path, sizeof tmp_path, "%s.tmp%ld", path, (long)getpid());
    out.fd = fd;
    unnamed = 1;
    return 0;
}

int sp__crash_arm(const char *path, const sp__crash_info *what, char *why, size_t why_size)
{
    sp__crash_disarm();
    if (!path || !*path || strlen(path) >= sizeof final_path) {
        snprintf(why, why_size, "crash dump path is empty or too long");
        return -1;
    }
    snprintf(final_path, sizeof final_path, "%s", path);
    if (open_unnamed(path) != 0) {
        unnamed = 0;
        snprintf(tmp_path, sizeof tmp_path, "%s.tmpXXXXXX", path);
        out.fd = mkostemp(tmp_path, O_CLOEXEC);
        if (out.fd < 0) {
            snprintf(why, why_size, "cannot create the crash dump file %s: %s", tmp_path,
                     strerror(errno));
            return -1;
        }
    }
    if (pipe2(out.probe, O_CLOEXEC | O_NONBLOCK) != 0) {
        snprintf(why, why_size, "cannot create a pipe for the crash dump: %s", strerror(errno));
        close_file();
        return -1;
    }
    info = *what;
    info.process_name[sizeof info.process_name - 1] = '\0';
    armed_pid = (int64_t)getpid();
    install();
    if (!exit_registered) exit_registered = atexit(at_exit) == 0;
    atomic_store_explicit(&armed, 1, memory_order_release);
    return 0;
}

void sp__crash_set_span(const sp__sync *start)
{
    if (!start) {
        atomic_store_explicit(&span_open, 0, memory_order_release);
        return;
    }
    atomic_store_explicit(&span_open, 0, memory_order_release);
    span_start = *start;
    atomic_store_explicit(&span_open, 1, memory_order_release);
}

void sp__crash_disarm(void)
{
    if (!atomic_load(&armed) || (int64_t)getpid() != armed_pid) {
        /* Nothing armed, or the parent's state inherited through fork():
         * its file belongs to the parent; forget the descriptors only. */
        if (atomic_load(&armed)) {
            atomic_store(&armed, 0);
            close(out.fd);
            out.fd = -1;
            close_probe();
        }
        return;
    }
    if (atomic_exchange(&dumping, 1)) return; /* a dump is being written */
    atomic_store(&armed, 0);
    atomic_store(&span_open, 0);
    close_file();
    close_probe();
    atomic_store(&dumping, 0);
}

int sp__crash_write(int signo) { return dump_once(signo); }
