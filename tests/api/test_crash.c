/* test_crash.c: sp_options.save_on_crash (src/record/crash.c, armed by
 * profiler.c). Each case runs a child process that starts a profiler with
 * the option, records on two threads and then dies: by a write to a PROT_NONE
 * page (SIGSEGV), by abort() (SIGABRT), through its own SIGSEGV handler that was
 * installed first (chaining), or by exit() without stop. The parent loads
 * the dump the child left with sp_result_load and checks its events: names,
 * count, nesting and the UNCLOSED flag of the ranges open at the crash.
 *
 * Under AddressSanitizer, ASan's own SIGSEGV handler was installed before
 * stepprof's, so the dump is written and then ASan's handler runs (it
 * reports and exits with a non-zero status instead of a SIGSEGV death):
 * there the SIGSEGV case only checks that the child did not exit cleanly.
 * SIGABRT is not handled by ASan, so that case checks the signal in both
 * builds. A child killed by SIGKILL leaves no file at all. */
#include "check.h"
#include "stepprof/stepprof.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define SP_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SP_TEST_ASAN 1
#endif
#endif

static char dir[] = "/tmp/stepprof-crash-XXXXXX";
static char dump_path[256];
static sp_profiler *child_profiler; /* reachable at exit(), for LeakSanitizer */

static void quiet(sp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)message;
    (void)user;
}

static void count_log(sp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)message;
    (*(int *)user)++;
}

static void start_profiler(void)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.log = quiet;
    o.save_on_crash = true;
    o.crash_path = dump_path;
    CHECK_OK(sp_profiler_create(&o, &child_profiler));
    CHECK_OK(sp_profiler_start(child_profiler));
}

static _Atomic int worker_ready;

/* The second thread: a closed copied range inside a range left open, then
 * it waits for the process to die. */
static void *worker(void *arg)
{
    (void)arg;
    sp_range_begin(SP_EVENT_USER_DEFINED, "worker");
    sp_range_begin_copy(SP_EVENT_USER_DEFINED, "copied", 6);
    sp_range_end();
    atomic_store(&worker_ready, 1);
    for (;;) pause();
    return NULL;
}

/* Records the events every case checks, on this thread and a worker. */
static void record_two_threads(void)
{
    start_profiler();
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    sp_range_begin(SP_EVENT_USER_DEFINED, "outer");
    sp_range_begin(SP_EVENT_OPERATOR, "inner");
    sp_instant(SP_EVENT_USER_DEFINED, "mark");
    sp_range_end();
    sp_range_begin(SP_EVENT_OPERATOR, "open_main");
    while (!atomic_load(&worker_ready)) usleep(1000);
}

/* Forks; the child runs fn (which should not return). Returns the raw wait
 * status. */
static int run_child(void (*fn)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core); /* the crashes leave no core files */
        alarm(280);
        fn();
        _exit(99);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
    return status;
}

typedef struct found {
    int count;
    sp_event_info e;
    int thread;
} found;

/* The one event named `name`, with how many there were. */
static found find(const sp_result *r, const char *name)
{
    found f = {0};
    sp_event_info e;
    for (size_t t = 0; t < sp_result_thread_count(r); t++)
        for (size_t i = 0; sp_result_event(r, t, i, &e) == SP_OK; i++)
            if (strcmp(e.name, name) == 0) {
                f.count++;
                f.e = e;
                f.thread = (int)t;
            }
    return f;
}

static size_t event_total(const sp_result *r)
{
    size_t n = 0;
    for (size_t t = 0; t < sp_result_thread_count(r); t++) {
        sp_thread_info ti;
        if (sp_result_thread(r, t, &ti) == SP_OK) n += ti.event_count;
    }
    return n;
}

/* No temporary file is left beside the dump. */
static int temporaries_left(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d))) n += strstr(de->d_name, ".tmp") != NULL;
    if (d) closedir(d);
    return n;
}

/* The events of record_two_threads, as a dump gives them back. */
static void check_two_thread_dump(void)
{
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(dump_path, NULL, &r));
    if (!r) return;
    CHECK_EQ(2, sp_result_thread_count(r));
    CHECK_EQ(6, event_total(r));
    found outer = find(r, "outer"), inner = find(r, "inner"), open_main = find(r, "open_main");
    found mark = find(r, "mark"), w = find(r, "worker"), copied = find(r, "copied");
    CHECK_EQ(1, outer.count);
    CHECK_EQ(1, inner.count);
    CHECK_EQ(1, open_main.count);
    CHECK_EQ(1, mark.count);
    CHECK_EQ(1, w.count);
    CHECK_EQ(1, copied.count);
    CHECK_EQ(SP_EVENT_FLAG_UNCLOSED, outer.e.flags & SP_EVENT_FLAG_UNCLOSED);
    CHECK_EQ(0, inner.e.flags & SP_EVENT_FLAG_UNCLOSED);
    CHECK_EQ(SP_EVENT_FLAG_UNCLOSED, open_main.e.flags & SP_EVENT_FLAG_UNCLOSED);
    CHECK_EQ(SP_EVENT_FLAG_UNCLOSED, w.e.flags & SP_EVENT_FLAG_UNCLOSED);
    CHECK_EQ(0, copied.e.flags & SP_EVENT_FLAG_UNCLOSED);
    CHECK_EQ(0, outer.e.depth);
    CHECK_EQ(1, inner.e.depth);
    CHECK_EQ(2, mark.e.depth);
    CHECK_EQ(1, open_main.e.depth);
    CHECK_EQ(0, w.e.depth);
    CHECK_EQ(1, copied.e.depth);
    CHECK_EQ(SP_EVENT_OPERATOR, inner.e.type);
    CHECK_EQ(outer.thread, open_main.thread);
    CHECK(outer.thread != w.thread);
    CHECK_EQ(w.thread, copied.thread);
    CHECK(inner.e.end_ns <= open_main.e.start_ns);
    CHECK(open_main.e.end_ns >= open_main.e.start_ns);
    CHECK_EQ(outer.e.end_ns, open_main.e.end_ns); /* both closed at the crash */
    CHECK_U64_EQ(3, sp_result_counter(r, SP_COUNTER_UNCLOSED_RANGES));
    int64_t start = 0, end = 0;
    sp_result_span(r, &start, &end);
    CHECK(start <= outer.e.start_ns);
    CHECK_EQ(end, outer.e.end_ns);
    sp_result_release(r);
    CHECK_EQ(0, temporaries_left());
}

static void set_dump_path(const char *name)
{
    snprintf(dump_path, sizeof dump_path, "%s/%s", dir, name);
    unlink(dump_path);
}

/* A real fault, which UBSan cannot turn into its own exit as it does a
 * NULL store: a write to a page without access. */
static void child_bad_write(void)
{
    record_two_threads();
    volatile int *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    *page = 1;
}

static void test_crash_segfault_leaves_loadable_dump(void)
{
    set_dump_path("segv.spdump");
    int status = run_child(child_bad_write);
#ifdef SP_TEST_ASAN
    CHECK(status != 0);
#else
    CHECK(WIFSIGNALED(status));
    CHECK_EQ(SIGSEGV, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
#endif
    check_two_thread_dump();
}

/* A name pointer into an unmapped page: the dump must not read it. */
static void child_abort_with_bad_name(void)
{
    record_two_threads();
    char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(page, 4096);
    sp_range_begin(SP_EVENT_USER_DEFINED, page);
    sp_range_end();
    abort();
}

static void test_crash_abort_skips_unreadable_names(void)
{
    set_dump_path("abort.spdump");
    int status = run_child(child_abort_with_bad_name);
    CHECK(WIFSIGNALED(status));
    CHECK_EQ(SIGABRT, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(dump_path, NULL, &r));
    if (!r) return;
    CHECK_EQ(7, event_total(r));
    found bad = find(r, "(unknown)");
    CHECK_EQ(1, bad.count);
    CHECK_EQ(0, bad.e.flags & SP_EVENT_FLAG_UNCLOSED);
    CHECK_EQ(1, find(r, "outer").count);
    sp_result_release(r);
}

static void own_handler(int sig, siginfo_t *si, void *uctx)
{
    (void)si;
    (void)uctx;
    _exit(sig == SIGSEGV ? 42 : 43);
}

static void child_with_own_handler(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = own_handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    record_two_threads();
    raise(SIGSEGV);
}

static void test_crash_chains_to_the_previous_handler(void)
{
    set_dump_path("chain.spdump");
    int status = run_child(child_with_own_handler);
    CHECK(WIFEXITED(status));
    CHECK_EQ(42, WIFEXITED(status) ? WEXITSTATUS(status) : 0);
    check_two_thread_dump();
}

static void child_exits_without_stop(void)
{
    record_two_threads();
    exit(0);
}

static void test_crash_exit_without_stop_leaves_loadable_trace(void)
{
    set_dump_path("exit.spdump");
    int status = run_child(child_exits_without_stop);
    CHECK(WIFEXITED(status));
    CHECK_EQ(0, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    check_two_thread_dump();
}

static void child_stops_then_crashes(void)
{
    record_two_threads();
    sp_profiler_stop(child_profiler);
    abort();
}

/* After stop nothing is armed: a later crash leaves no file at all. */
static void test_crash_after_stop_leaves_no_file(void)
{
    set_dump_path("stopped.spdump");
    int status = run_child(child_stops_then_crashes);
    CHECK(WIFSIGNALED(status));
    CHECK_EQ(-1, access(dump_path, F_OK));
    CHECK_EQ(0, temporaries_left());
}

static void child_records_then_is_killed(void)
{
    record_two_threads();
    kill(getpid(), SIGKILL);
}

/* Whether the directory's file system has unnamed files (O_TMPFILE): only
 * there can a SIGKILLed process leave nothing behind. */
static int unnamed_files_supported(void)
{
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) return 0;
    close(fd);
    return 1;
}

/* SIGKILL (the OOM killer) cannot be caught: no dump, and no empty
 * temporary file left beside where it would have gone. */
static void test_crash_sigkill_leaves_no_temporary_file(void)
{
    if (!unnamed_files_supported()) {
        printf("SKIP: %s has no O_TMPFILE; a SIGKILLed process leaves its empty temporary\n", dir);
        return;
    }
    set_dump_path("killed.spdump");
    int status = run_child(child_records_then_is_killed);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK_EQ(-1, access(dump_path, F_OK));
    CHECK_EQ(0, temporaries_left());
}

/* crash_path in a directory that does not exist: start creates it (like
 * mkdir -p) so that the dump has somewhere to go; where it cannot be
 * created, start fails with SP_EIO and changes nothing (issue 17). */
static void test_crash_path_directory_is_created_or_start_fails(void)
{
    char path[512], sub[300];
    snprintf(sub, sizeof sub, "%s/new/deeper", dir);
    snprintf(path, sizeof path, "%s/dump.spdump", sub);
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    int warnings = 0;
    o.log = count_log;
    o.log_user = &warnings;
    o.save_on_crash = true;
    o.crash_path = path;
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    CHECK_OK(sp_profiler_start(p));
    CHECK_EQ(0, warnings); /* armed: no "save_on_crash is off" */
    CHECK_EQ(0, access(sub, W_OK));
    CHECK_EQ(1, sp_is_recording());
    CHECK_OK(sp_profiler_stop(p));
    sp_profiler_destroy(p);
    CHECK_EQ(-1, access(path, F_OK)); /* nothing crashed: no dump */
    CHECK_EQ(0, rmdir(sub));
    snprintf(sub, sizeof sub, "%s/new", dir);
    CHECK_EQ(0, rmdir(sub));

    /* Under a regular file: the directory cannot be made. */
    snprintf(sub, sizeof sub, "%s/plainfile", dir);
    FILE *f = fopen(sub, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    snprintf(path, sizeof path, "%s/plainfile/sub/dump.spdump", dir);
    CHECK_OK(sp_profiler_create(&o, &p));
    CHECK_EQ(SP_EIO, sp_profiler_start(p));
    char want[700];
    snprintf(want, sizeof want, "sp_profiler_start: save_on_crash: cannot create or write the "
                                "directory '%s/plainfile/sub' of crash_path '%s'", dir, path);
    CHECK_STR_EQ(want, sp_last_error());
    CHECK_EQ(0, sp_is_recording());
    CHECK_EQ(SP_STATE_CLOSED, sp_profiler_state(p));
    CHECK_EQ(SP_ESTATE, sp_profiler_stop(p)); /* never started */
    sp_profiler_destroy(p);
    unlink(sub);
}

int main(void)
{
    if (!mkdtemp(dir)) return 1;
    RUN_TEST(test_crash_path_directory_is_created_or_start_fails);
    RUN_TEST(test_crash_segfault_leaves_loadable_dump);
    RUN_TEST(test_crash_abort_skips_unreadable_names);
    RUN_TEST(test_crash_chains_to_the_previous_handler);
    RUN_TEST(test_crash_exit_without_stop_leaves_loadable_trace);
    RUN_TEST(test_crash_after_stop_leaves_no_file);
    RUN_TEST(test_crash_sigkill_leaves_no_temporary_file);
    const char *names[] = {"segv.spdump", "abort.spdump", "chain.spdump", "exit.spdump"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        set_dump_path(names[i]);
        unlink(dump_path);
    }
    rmdir(dir);
    return TEST_SUMMARY();
}
