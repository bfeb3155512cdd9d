/* test_load_dump.c: the crash-dump reader (src/load/load_dump.c) and the
 * dump writer it reads (src/record/crash.c), in one process: a profiler with
 * save_on_crash records, then sp__crash_write takes the dump exactly as the
 * signal path does, without a signal. The dump loads through sp_result_load
 * and the CLI; every truncation and every single-byte change of it, and
 * hand-made corrupt dumps, give SP_EFORMAT (or a result) and never a crash. */
#include "check.h"
#include "crash.h"
#include "record.h"
#include "stepprof/stepprof.h"
#include "stream.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/stepprof-dump-XXXXXX";
static char dump_path[256], work_path[256];
static unsigned char *dump_bytes;
static size_t dump_size;

static void quiet(sp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)message;
    (void)user;
}

static int write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(size > 0 ? (size_t)size : 1);
    *n = b ? fread(b, 1, (size_t)size, f) : 0;
    fclose(f);
    return b;
}

/* Records a known span and dumps it as a SIGSEGV would. */
static void make_dump(void)
{
    snprintf(dump_path, sizeof dump_path, "%s/live.spdump", dir);
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.log = quiet;
    o.save_on_crash = true;
    o.crash_path = dump_path;
    sp_profiler *p = NULL;
    /* The dump keeps where it ran, as the launcher said when it was armed. */
    setenv("RANK", "2", 1);
    setenv("WORLD_SIZE", "4", 1);
    setenv("OMPI_MCA_ess_base_jobid", "77", 1);
    CHECK_OK(sp_profiler_create(&o, &p));
    CHECK_OK(sp_profiler_start(p));
    unsetenv("RANK");
    unsetenv("WORLD_SIZE");
    unsetenv("OMPI_MCA_ess_base_jobid");
    /* Two steps before the crash: one with num_samples, one without. */
    CHECK_OK(sp_profiler_step(p, 16));
    CHECK_OK(sp_profiler_step(p, -1));
    for (int i = 0; i < 10; i++) {
        sp_range_begin(SP_EVENT_OPERATOR, "op");
        sp_range_begin_copy(SP_EVENT_USER_DEFINED, "copy", 4);
        sp_counter("loss", 1.5);
        sp_range_end();
        sp_range_end();
    }
    sp_range_begin(SP_EVENT_FORWARD, "forward");
    CHECK_EQ(-1, access(dump_path, F_OK)); /* only the temporary so far */
    CHECK_EQ(0, sp__crash_write(SIGSEGV));
    sp_range_end();
    CHECK_OK(sp_profiler_stop(p));
    sp_profiler_destroy(p);
    dump_bytes = read_all(dump_path, &dump_size);
    CHECK(dump_bytes != NULL);
}

static void test_load_dump_reads_the_span(void)
{
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(dump_path, NULL, &r));
    if (!r) return;
    CHECK_EQ(1, sp_result_thread_count(r));
    sp_thread_info ti;
    CHECK_OK(sp_result_thread(r, 0, &ti));
    CHECK_EQ(33, ti.event_count);
    sp_event_info e;
    size_t ops = 0, copies = 0, loss = 0, forward = 0, steps = 0;
    for (size_t i = 0; sp_result_event(r, 0, i, &e) == SP_OK; i++) {
        if (strcmp(e.name, "ProfileStep#0") == 0) {
            steps++;
            CHECK_EQ(SP_EVENT_FLAG_SAMPLES, e.flags & SP_EVENT_FLAG_SAMPLES);
            CHECK(e.value == 16);
        } else if (strcmp(e.name, "ProfileStep#1") == 0) {
            steps++;
            CHECK_EQ(0, e.flags & SP_EVENT_FLAG_SAMPLES);
        } else if (strcmp(e.name, "op") == 0) {
            ops++;
            CHECK_EQ(0, e.depth);
            CHECK_EQ(SP_EVENT_OPERATOR, e.type);
        } else if (strcmp(e.name, "copy") == 0) {
            copies++;
            CHECK_EQ(1, e.depth);
        } else if (strcmp(e.name, "loss") == 0) {
            loss++;
            CHECK(e.value == 1.5);
            CHECK_EQ(SP_EVENT_FLAG_COUNTER, e.flags & SP_EVENT_FLAG_COUNTER);
        } else if (strcmp(e.name, "forward") == 0) {
            forward++;
            CHECK_EQ(SP_EVENT_FLAG_UNCLOSED, e.flags & SP_EVENT_FLAG_UNCLOSED);
        }
    }
    CHECK_EQ(10, ops);
    CHECK_EQ(10, copies);
    CHECK_EQ(10, loss);
    CHECK_EQ(1, forward);
    CHECK_EQ(2, steps);
    CHECK_U64_EQ(1, sp_result_counter(r, SP_COUNTER_UNCLOSED_RANGES));
    sp_dist_info d;
    sp_result_dist_info(r, &d);
    CHECK_EQ(2, d.rank);
    CHECK_EQ(4, d.world_size);
    CHECK_EQ(2, d.local_rank);
    CHECK_EQ(4, d.local_world_size);
    CHECK_STR_EQ("77", d.job);
    CHECK_STR_EQ("gloo", d.backend);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    CHECK_STR_EQ(host, d.hostname);
    sp_result_release(r);
}

static void test_load_dump_through_the_cli(void)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s summary %s >%s/summary.txt 2>&1", SP_CLI, dump_path, dir);
    CHECK_EQ(0, system(cmd));
    snprintf(cmd, sizeof cmd, "%s convert %s -o %s/converted.json >/dev/null 2>&1", SP_CLI,
             dump_path, dir);
    CHECK_EQ(0, system(cmd));
    snprintf(work_path, sizeof work_path, "%s/converted.json", dir);
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(work_path, NULL, &r));
    if (r) CHECK_EQ(1, sp_result_thread_count(r));
    sp_result_release(r);
}

static void test_load_dump_truncated_at_every_offset_is_eformat(void)
{
    snprintf(work_path, sizeof work_path, "%s/cut.spdump", dir);
    for (size_t n = 0; n < dump_size; n++) {
        CHECK_EQ(0, write_file(work_path, dump_bytes, n));
        sp_result *r = NULL;
        sp_status s = sp_result_load(work_path, NULL, &r);
        if (s != SP_EFORMAT) {
            CHECK_EQ(SP_EFORMAT, s);
            fprintf(stderr, "  truncated at %zu bytes\n", n);
            sp_result_release(r);
            return;
        }
        CHECK(r == NULL);
    }
}

/* Any byte changed gives an error or a result, never a crash; a result
 * still summarizes. */
static void test_load_dump_byte_changes_never_crash(void)
{
    snprintf(work_path, sizeof work_path, "%s/flip.spdump", dir);
    unsigned char *copy = malloc(dump_size);
    FILE *devnull = fopen("/dev/null", "w");
    for (size_t i = 0; copy && i < dump_size; i++) {
        static const unsigned char xors[] = {0x01, 0x80, 0xff};
        for (size_t k = 0; k < sizeof xors; k++) {
            memcpy(copy, dump_bytes, dump_size);
            copy[i] ^= xors[k];
            CHECK_EQ(0, write_file(work_path, copy, dump_size));
            sp_result *r = NULL;
            sp_status s = sp_result_load(work_path, NULL, &r);
            CHECK(s == SP_OK || s == SP_EFORMAT);
            if (r) CHECK_OK(sp_result_summary(r, NULL, devnull));
            sp_result_release(r);
        }
    }
    if (devnull) fclose(devnull);
    free(copy);
}

/* Builds a dump by hand: header, META, one thread with `words`, END. */
static size_t hand_dump(unsigned char *out, const sp__word *words, size_t nwords, double rate)
{
    size_t n = 0;
    uint32_t h32[2] = {SP__DUMP_VERSION, SP__DUMP_HEADER_BYTES};
    uint64_t order = SP__DUMP_BYTE_ORDER;
    memcpy(out + n, SP__DUMP_MAGIC, 8), n += 8;
    memcpy(out + n, h32, 8), n += 8;
    memcpy(out + n, &order, 8), n += 8;
    uint64_t sections = 0;
#define SECTION(type, bytes)                                                   \
    do {                                                                       \
        uint32_t t_[2] = {(type), 0};                                          \
        uint64_t b_ = (bytes);                                                 \
        memcpy(out + n, t_, 8), n += 8;                                        \
        memcpy(out + n, &b_, 8), n += 8;                                       \
        sections++;                                                            \
    } while (0)
    sp__dump_meta m;
    memset(&m, 0, sizeof m);
    m.start_ticks = 1000;
    m.end_ticks = 5000;
    m.anchor_ticks = 1000;
    m.anchor_real_ns = 1000000;
    m.ns_per_tick = rate;
    SECTION(SP__DUMP_META, sizeof m);
    memcpy(out + n, &m, sizeof m), n += sizeof m;
    sp__dump_thread t;
    memset(&t, 0, sizeof t);
    t.tid = 7;
    t.base_ticks = 1000;
    strcpy(t.name, "hand");
    SECTION(SP__DUMP_THREAD, sizeof t);
    memcpy(out + n, &t, sizeof t), n += sizeof t;
    SECTION(SP__DUMP_WORDS, nwords * 8);
    memcpy(out + n, words, nwords * 8), n += nwords * 8;
    uint64_t count = sections;
    SECTION(SP__DUMP_END, 8);
    memcpy(out + n, &count, 8), n += 8;
#undef SECTION
    return n;
}

static sp_status load_hand(const sp__word *words, size_t nwords, double rate, sp_result **r)
{
    unsigned char buf[4096];
    size_t n = hand_dump(buf, words, nwords, rate);
    snprintf(work_path, sizeof work_path, "%s/hand.spdump", dir);
    if (write_file(work_path, buf, n) != 0) return SP_EIO;
    return sp_result_load(work_path, NULL, r);
}

static void test_load_dump_hand_made_corruptions(void)
{
    sp_result *r = NULL;
    /* A foreign static pointer with no NAME section: "(unknown)", never read. */
    sp__word ok[] = {SP__REC_WORD(SP__REC_BEGIN, SP_EVENT_OPERATOR, 0x10), 2000, SP__REC_END_WORD(3000)};
    CHECK_OK(load_hand(ok, 3, 1.0, &r));
    sp_event_info e;
    if (r && sp_result_event(r, 0, 0, &e) == SP_OK) {
        CHECK_STR_EQ("(unknown)", e.name);
        CHECK_EQ(1000, e.end_ns - e.start_ns);
    }
    sp_result_release(r);
    r = NULL;
    /* A copied name whose length runs past the thread's words. */
    sp__word past[] = {SP__REC_WORD(SP__REC_BEGIN_COPY, 0, 1000), 2000, 0};
    CHECK_EQ(SP_EFORMAT, load_hand(past, 3, 1.0, &r));
    CHECK(strstr(sp_last_error(), "runs past") != NULL);
    /* A record kind the writer never writes. */
    sp__word zero[] = {0, 0};
    CHECK_EQ(SP_EFORMAT, load_hand(zero, 2, 1.0, &r));
    /* Bad tick rates. */
    CHECK_EQ(SP_EFORMAT, load_hand(ok, 3, 0.0, &r));
    CHECK_EQ(SP_EFORMAT, load_hand(ok, 3, 1e300, &r));
    /* Extreme ticks are clamped, not overflowed. */
    sp__word far[] = {SP__REC_WORD(SP__REC_BEGIN, 0, 0), UINT64_MAX, SP__REC_WORD(SP__REC_INSTANT, 0, 0), 0};
    CHECK_OK(load_hand(far, 4, 1000.0, &r));
    if (r && sp_result_event(r, 0, 0, &e) == SP_OK) CHECK(e.start_ns >= 0);
    sp_result_release(r);
    CHECK(r != NULL);
}

/* A full disk, simulated by a file size limit (SIGXFSZ ignored, so a write
 * past it fails with EFBIG), from now on for limit bytes past the size of
 * the file at path (0: the limit is limit). */
static struct rlimit saved_limit;

static void limit_file_size(const char *path, off_t limit)
{
    struct stat st;
    off_t at = path && stat(path, &st) == 0 ? st.st_size : 0;
    signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &saved_limit);
    struct rlimit l = saved_limit;
    l.rlim_cur = (rlim_t)(at + limit);
    CHECK_EQ(0, setrlimit(RLIMIT_FSIZE, &l));
}

static void unlimit_file_size(void) { CHECK_EQ(0, setrlimit(RLIMIT_FSIZE, &saved_limit)); }

static sp_profiler *start_profiler(int streaming)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.log = quiet;
    o.save_on_crash = true;
    o.stream_to_disk = streaming != 0;
    o.crash_path = dump_path;
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    CHECK_OK(sp_profiler_start(p));
    return p;
}

static void record_ops(int n)
{
    for (int i = 0; i < n; i++) {
        sp_range_begin(SP_EVENT_OPERATOR, "op");
        sp_range_end();
    }
}

/* Runs the CLI's info on path: its exit status; stderr in err. */
static int cli_info(const char *path, char *err, size_t size)
{
    char cmd[1024], err_path[300];
    snprintf(err_path, sizeof err_path, "%s/cli.err", dir);
    snprintf(cmd, sizeof cmd, "%s info %s >/dev/null 2>%s", SP_CLI, path, err_path);
    int rc = system(cmd);
    size_t n = 0;
    unsigned char *text = read_all(err_path, &n);
    snprintf(err, size, "%.*s", (int)n, text ? (const char *)text : "");
    free(text);
    return rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Streaming onto a full disk: the passes fail, the file holds only what
 * start wrote. It loaded as a span of 0 events (exit 0); now it is an
 * error naming the file, in the library and the CLI. */
static void test_load_dump_streamed_onto_a_full_disk_is_an_error(void)
{
    snprintf(dump_path, sizeof dump_path, "%s/full.spdump", dir);
    snprintf(work_path, sizeof work_path, "%s/full.work", dir);
    sp_profiler *p = start_profiler(1);
    limit_file_size(dump_path, 8);
    record_ops(20);
    CHECK_EQ(-1, sp__stream_flush());
    size_t size = 0;
    unsigned char *bytes = read_all(dump_path, &size);
    unlimit_file_size();
    CHECK_OK(sp_profiler_stop(p));
    sp_profiler_destroy(p);
    CHECK(bytes != NULL);
    if (!bytes) return;
    CHECK_EQ(0, write_file(work_path, bytes, size));
    free(bytes);
    sp_result *r = NULL;
    CHECK_EQ(SP_EFORMAT, sp_result_load(work_path, NULL, &r));
    CHECK(strstr(sp_last_error(), work_path) != NULL);
    CHECK(strstr(sp_last_error(), "no events saved") != NULL);
    char err[2048];
    CHECK_EQ(1, cli_info(work_path, err, sizeof err));
    CHECK(strstr(err, "no events saved") != NULL);

    /* The disk fills after a pass that saved events: those load, and the
     * pass cut short is counted and reported. */
    p = start_profiler(1);
    record_ops(10);
    CHECK_EQ(0, sp__stream_flush());
    limit_file_size(dump_path, 40);
    record_ops(10);
    CHECK_EQ(-1, sp__stream_flush());
    bytes = read_all(dump_path, &size);
    unlimit_file_size();
    CHECK_OK(sp_profiler_stop(p));
    sp_profiler_destroy(p);
    if (!bytes) return;
    CHECK_EQ(0, write_file(work_path, bytes, size));
    free(bytes);
    CHECK_OK(sp_result_load(work_path, NULL, &r));
    if (r) {
        sp_thread_info ti;
        CHECK_OK(sp_result_thread(r, 0, &ti));
        CHECK_EQ((size_t)10, ti.event_count);
        CHECK(sp_result_counter(r, SP_COUNTER_TRAILING_BYTES) > 0);
        sp_result_release(r);
    }
    CHECK_EQ(0, cli_info(work_path, err, sizeof err));
    CHECK(strstr(err, "warning") != NULL && strstr(err, "crash dump") != NULL);
    unlink(work_path);
}

/* Without streaming, a dump that cannot be written leaves no file: it now
 * says so on stderr. An empty or cut dump file is an error (exit 1). */
static void test_load_dump_not_written_says_so(void)
{
    snprintf(dump_path, sizeof dump_path, "%s/nospace.spdump", dir);
    snprintf(work_path, sizeof work_path, "%s/stderr.txt", dir);
    sp_profiler *p = start_profiler(0);
    record_ops(200); /* some 3 KB of words */
    fflush(stderr);
    int saved_err = dup(STDERR_FILENO);
    int fd = open(work_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && saved_err >= 0);
    dup2(fd, STDERR_FILENO);
    close(fd);
    limit_file_size(NULL, 512); /* also stderr's file: room for the message */
    int rc = sp__crash_write(SIGSEGV);
    unlimit_file_size();
    dup2(saved_err, STDERR_FILENO);
    close(saved_err);
    CHECK_EQ(-1, rc);
    CHECK_EQ(-1, access(dump_path, F_OK));
    size_t n = 0;
    unsigned char *text = read_all(work_path, &n);
    char said[1024];
    snprintf(said, sizeof said, "%.*s", (int)n, text ? (const char *)text : "");
    free(text);
    CHECK(strstr(said, "could not write the crash dump") != NULL);
    CHECK(strstr(said, dump_path) != NULL);
    CHECK_OK(sp_profiler_stop(p));
    sp_profiler_destroy(p);

    /* An empty dump file, and one cut after its header. */
    snprintf(work_path, sizeof work_path, "%s/empty.spdump", dir);
    CHECK_EQ(0, write_file(work_path, "", 0));
    sp_result *r = NULL;
    CHECK_EQ(SP_EFORMAT, sp_result_load(work_path, NULL, &r));
    char err[2048];
    CHECK_EQ(1, cli_info(work_path, err, sizeof err));
    CHECK(strstr(err, "empty file") != NULL);
    CHECK_EQ(0, write_file(work_path, dump_bytes, dump_size / 2));
    CHECK_EQ(1, cli_info(work_path, err, sizeof err));
    CHECK(strstr(err, work_path) != NULL);
    unlink(work_path);
}

int main(void)
{
    if (!mkdtemp(dir)) return 1;
    make_dump();
    RUN_TEST(test_load_dump_reads_the_span);
    RUN_TEST(test_load_dump_through_the_cli);
    RUN_TEST(test_load_dump_truncated_at_every_offset_is_eformat);
    RUN_TEST(test_load_dump_byte_changes_never_crash);
    RUN_TEST(test_load_dump_hand_made_corruptions);
    RUN_TEST(test_load_dump_streamed_onto_a_full_disk_is_an_error);
    RUN_TEST(test_load_dump_not_written_says_so);
    free(dump_bytes);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) return 1;
    return TEST_SUMMARY();
}
