/* test_stream.c: the streamed dump's counts (src/record/stream.c). A thread
 * that drops at the memory cap publishes no new words, yet its drop count
 * must keep reaching the file, so that a SIGKILLed process's stream carries
 * the drops up to its last pass.
 *
 * A forked child streams under a 64 KiB cap, records until it drops, runs a
 * pass (sp__stream_flush, as the streaming thread does each second), drops
 * many more events, runs a pass again and kills itself with SIGKILL. The
 * parent loads the stream: kept + dropped must equal what the child
 * recorded. Nothing depends on timing: the passes are the child's own calls
 * and the kill comes after them. The child also arms the crash dump, whose
 * temporary file has no name (O_TMPFILE, where the file system has it), so
 * that the kill leaves nothing beside the stream. */
#include "check.h"
#include "stepprof/stepprof.h"
#include "stream.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/stepprof-stream-cap-XXXXXX";
static char dump_path[256];

typedef struct shared {
    long recorded;   /* ranges the child recorded */
    long first_pass; /* how many it had recorded at the first pass */
    int passes_ok;
} shared;

static void quiet(sp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)message;
    (void)user;
}

static void child_records_drops_and_dies(shared *sh)
{
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    alarm(280); /* never outlives a broken parent */
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.log = quiet;
    o.save_on_crash = true;
    o.stream_to_disk = true;
    o.crash_path = dump_path;
    o.buffer_cap_bytes = 1; /* raised to the 64 KiB minimum */
    sp_profiler *p = NULL;
    if (sp_profiler_create(&o, &p) != SP_OK || sp_profiler_start(p) != SP_OK) _exit(3);
    long n = 0;
    for (; n < 20000; n++) {
        sp_range_begin(SP_EVENT_OPERATOR, "capped");
        sp_range_end();
    }
    int ok = sp__stream_flush() == 0;
    sh->first_pass = n;
    for (; n < 220000; n++) {
        sp_range_begin(SP_EVENT_OPERATOR, "capped");
        sp_range_end();
    }
    ok &= sp__stream_flush() == 0;
    sh->recorded = n;
    sh->passes_ok = ok;
    kill(getpid(), SIGKILL);
    _exit(4);
}

static void test_stream_drop_count_survives_sigkill_at_the_cap(void)
{
    shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sh != MAP_FAILED);
    memset(sh, 0, sizeof *sh);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) child_records_drops_and_dies(sh);
    int status = 0;
    CHECK_EQ(pid, waitpid(pid, &status, 0));
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK_EQ(1, sh->passes_ok);
    CHECK_EQ(220000, sh->recorded);
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(dump_path, NULL, &r));
    if (r) {
        uint64_t kept = 0;
        sp_event_info e;
        for (size_t t = 0; t < sp_result_thread_count(r); t++)
            for (size_t i = 0; sp_result_event(r, t, i, &e) == SP_OK; i++)
                kept += strcmp(e.name, "capped") == 0;
        uint64_t dropped = sp_result_counter(r, SP_COUNTER_HOST_DROPPED);
        CHECK(kept > 0);
        CHECK(kept < (uint64_t)sh->first_pass); /* the cap was reached before the first pass */
        CHECK_U64_EQ((uint64_t)sh->recorded, kept + dropped);
        sp_thread_info info;
        uint64_t per_thread = 0;
        for (size_t t = 0; t < sp_result_thread_count(r); t++) {
            CHECK_OK(sp_result_thread(r, t, &info));
            per_thread += info.dropped;
        }
        CHECK_U64_EQ(dropped, per_thread);
        sp_result_release(r);
    }
    unlink(dump_path);
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) {
        close(fd);
        CHECK_EQ(0, rmdir(dir)); /* empty: no crash-dump temporary left */
    } else {
        printf("SKIP: %s has no O_TMPFILE; the crash dump's temporary file stays\n", dir);
    }
    munmap(sh, sizeof *sh);
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    snprintf(dump_path, sizeof dump_path, "%s/stream.spdump", dir);
    RUN_TEST(test_stream_drop_count_survives_sigkill_at_the_cap);
    rmdir(dir);
    return TEST_SUMMARY();
}
