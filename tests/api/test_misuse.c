/* test_misuse.c: the misuse matrix of docs/reliability.md, the cases that
 * no other test covers: every public call with NULL or out-of-range
 * arguments, in the wrong state, options out of range, a range ended on
 * another thread, 10,000 threads, 1 MB names and names holding every byte
 * value. Each call must return its documented code with a message, or (on
 * the hot path) count the misuse in the result; none may crash. */
#include "check.h"
#include "stepprof/stepprof.h"
#include "utf8.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void quiet(sp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)message;
    (void)user;
}

static sp_profiler *create(size_t cap_bytes)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.log = quiet;
    o.buffer_cap_bytes = cap_bytes;
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    return p;
}

static size_t count_named(const sp_result *r, const char *name)
{
    size_t n = 0;
    sp_event_info e;
    for (size_t t = 0; t < sp_result_thread_count(r); t++)
        for (size_t i = 0; sp_result_event(r, t, i, &e) == SP_OK; i++) n += strcmp(e.name, name) == 0;
    return n;
}

/* The call failed with code and left a non-empty message. */
#define CHECK_FAILS(code, call)                                                \
    do {                                                                       \
        CHECK_EQ((code), (call));                                              \
        CHECK(sp_last_error()[0] != '\0');                                     \
    } while (0)

static void test_misuse_null_profiler_everywhere(void)
{
    char buf[64];
    CHECK_FAILS(SP_EINVAL, sp_profiler_start(NULL));
    CHECK_FAILS(SP_EINVAL, sp_profiler_step(NULL, 1));
    CHECK_FAILS(SP_EINVAL, sp_profiler_stop(NULL));
    CHECK_FAILS(SP_EINVAL, sp_profiler_export(NULL, "/tmp/x.json", SP_FORMAT_JSON));
    CHECK_FAILS(SP_EINVAL, sp_profiler_step_info(NULL, NULL, buf, sizeof buf));
    CHECK_EQ(SP_STATE_CLOSED, sp_profiler_state(NULL));
    CHECK_EQ(0, sp_profiler_step_num(NULL));
    CHECK(sp_profiler_result(NULL) == NULL);
    CHECK(sp_profiler_trace_path(NULL) == NULL);
    CHECK_U64_EQ(0, sp_profiler_misuse_count(NULL));
    sp_profiler_destroy(NULL);
    sp_options_init(NULL);
    sp_load_options_init(NULL);
    sp_summary_options_init(NULL);
}

static void test_misuse_wrong_states_not_covered_elsewhere(void)
{
    sp_profiler *p = create(0);
    char buf[64] = "unchanged";
    CHECK_FAILS(SP_ESTATE, sp_profiler_step_info(p, NULL, buf, sizeof buf));
    CHECK_STR_EQ("", buf);
    CHECK_FAILS(SP_EINVAL, sp_profiler_step_info(p, NULL, NULL, 8));
    CHECK_FAILS(SP_EINVAL, sp_profiler_step_info(p, NULL, buf, 0));
    CHECK_FAILS(SP_ENODATA, sp_profiler_export(p, "/tmp/never.json", SP_FORMAT_JSON));
    CHECK_OK(sp_profiler_start(p));
    CHECK_OK(sp_profiler_stop(p));
    CHECK_OK(sp_profiler_start(p)); /* a stopped profiler restarts (a new span) */
    CHECK_EQ(1, sp_is_recording());
    CHECK_OK(sp_profiler_stop(p));
    CHECK_U64_EQ(1, sp_profiler_misuse_count(p));
    CHECK_EQ(SP_STATE_CLOSED, sp_profiler_state(p));
    CHECK_EQ(0, sp_is_recording());
    sp_profiler_destroy(p);
}

static void test_misuse_hot_path_without_a_profiler_does_nothing(void)
{
    sp_mem_info info = {0};
    CHECK_EQ(0, sp_is_recording());
    sp_range_end();
    sp_range_begin(SP_EVENT_FORWARD, "nobody listens");
    sp_range_begin_copy(SP_EVENT_FORWARD, NULL, 99);
    sp_instant((sp_event_type)-1, NULL);
    sp_counter(NULL, 0.0 / 0.0);
    sp_memory_event((sp_mem_event_type)99, NULL, NULL);
    sp_memory_event(SP_MEM_ALLOCATE, "Place(cpu)", &info);
    sp_range_add((sp_event_type)1000, NULL, SIZE_MAX, 5, 1);
    sp_range_end();
    /* None of it reaches the next span. */
    sp_profiler *p = create(0);
    CHECK_OK(sp_profiler_start(p));
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    CHECK_EQ(0, count_named(r, "nobody listens"));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_UNMATCHED_ENDS));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_MISUSE));
    sp_profiler_destroy(p);
}

static void check_rejected(const sp_options *o, const char *why)
{
    sp_profiler *p = (sp_profiler *)(uintptr_t)1; /* must stay untouched */
    CHECK_FAILS(SP_EINVAL, sp_profiler_create(o, &p));
    if (p != (sp_profiler *)(uintptr_t)1) fprintf(stderr, "create wrote *out for %s\n", why);
    CHECK(p == (sp_profiler *)(uintptr_t)1);
}

static int releases;
static void count_release(void *user)
{
    (void)user;
    releases++;
}

static void test_misuse_options_out_of_range(void)
{
    sp_options o;
    sp_options_init(&o);
    o.log = quiet;
    o.on_trace_ready = (sp_trace_handler){NULL, NULL, count_release};
    o.targets = 1u << 4;
    check_rejected(&o, "unknown target bit");
    CHECK(strstr(sp_last_error(), "target") != NULL);
    CHECK_EQ(1, releases); /* a failed create still releases the handler's data */
    sp_options_init(&o);
    o.log = quiet;
    o.scheduler.form = (sp_scheduler_form)99;
    check_rejected(&o, "unknown scheduler form");
    o.scheduler.form = SP_SCHEDULER_CYCLE; /* record 0 */
    check_rejected(&o, "cycle scheduler with record 0");
    o.scheduler = (sp_scheduler){.form = SP_SCHEDULER_TORCH, .closed = -1, .record = 1};
    check_rejected(&o, "torch scheduler with negative wait");
    sp_scheduler s;
    CHECK_FAILS(SP_EINVAL, sp_scheduler_range(&s, 5, 5));
    CHECK_FAILS(SP_EINVAL, sp_scheduler_range(NULL, 0, 5));
    CHECK_FAILS(SP_EINVAL, sp_scheduler_torch(&s, 0, 0, 0, 0, 0, 0));
    CHECK_EQ(SP_STATE_CLOSED, sp_scheduler_state(&(sp_scheduler){0}, -1));
}

/* A cap of 1 byte is raised to 64 KiB: recording still works, and what does
 * not fit is counted exactly. SIZE_MAX is accepted as "no practical cap". */
static void test_misuse_buffer_cap_extremes(void)
{
    size_t caps[] = {1, SIZE_MAX};
    for (int c = 0; c < 2; c++) {
        sp_profiler *p = create(caps[c]);
        CHECK_OK(sp_profiler_start(p));
        for (int i = 0; i < 50000; i++) {
            sp_range_begin(SP_EVENT_OPERATOR, "capped");
            sp_range_end();
        }
        CHECK_OK(sp_profiler_stop(p));
        const sp_result *r = sp_profiler_result(p);
        uint64_t kept = count_named(r, "capped"), dropped = sp_result_counter(r, SP_COUNTER_HOST_DROPPED);
        uint64_t steps = count_named(r, "ProfileStep#0"); /* recorded at stop, maybe dropped */
        CHECK_U64_EQ(50000 + 1, kept + steps + dropped);
        CHECK(kept > 0);
        if (c == 0) CHECK(dropped > 0);
        if (c == 1) CHECK_U64_EQ(0, dropped);
        CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_UNCLOSED_RANGES));
        sp_profiler_destroy(p);
    }
}

static void *end_here(void *arg)
{
    (void)arg;
    sp_range_end(); /* the begin was on another thread */
    sp_range_begin(SP_EVENT_OPERATOR, "after the stray end");
    sp_range_end();
    return NULL;
}

/* The end is the other thread's first event: it once read the clock before
 * the thread registered, which hid every later record of that thread. */
static void test_misuse_range_ended_on_another_thread(void)
{
    sp_profiler *p = create(0);
    CHECK_OK(sp_profiler_start(p));
    sp_range_begin(SP_EVENT_FORWARD, "begun here");
    pthread_t t;
    CHECK_EQ(0, pthread_create(&t, NULL, end_here, NULL));
    pthread_join(t, NULL);
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    CHECK_U64_EQ(1, sp_result_counter(r, SP_COUNTER_UNMATCHED_ENDS));
    CHECK_U64_EQ(1, sp_result_counter(r, SP_COUNTER_UNCLOSED_RANGES));
    CHECK_EQ(1, count_named(r, "begun here"));
    CHECK_EQ(1, count_named(r, "after the stray end"));
    CHECK_EQ(2, sp_result_thread_count(r));
    sp_profiler_destroy(p);
}

static void test_misuse_result_accessors_out_of_range(void)
{
    sp_profiler *p = create(0);
    CHECK_OK(sp_profiler_start(p));
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    sp_thread_info ti;
    sp_event_info ei;
    size_t n = sp_result_thread_count(r);
    CHECK_FAILS(SP_EINVAL, sp_result_thread(r, n, &ti));
    CHECK_FAILS(SP_EINVAL, sp_result_thread(r, 0, NULL));
    CHECK_FAILS(SP_EINVAL, sp_result_thread(NULL, 0, &ti));
    CHECK_FAILS(SP_EINVAL, sp_result_event(r, n, 0, &ei));
    CHECK_FAILS(SP_EINVAL, sp_result_event(r, 0, SIZE_MAX, &ei));
    CHECK_FAILS(SP_EINVAL, sp_result_event(r, 0, 0, NULL));
    CHECK_FAILS(SP_EINVAL, sp_result_event(NULL, 0, 0, &ei));
    CHECK_U64_EQ(0, sp_result_counter(r, (sp_counter_kind)SP_COUNTER_COUNT));
    CHECK_U64_EQ(0, sp_result_counter(r, (sp_counter_kind)-1));
    CHECK_U64_EQ(0, sp_result_counter(NULL, SP_COUNTER_MISUSE));
    CHECK_EQ(0, sp_result_thread_count(NULL));
    CHECK_EQ(0, sp_result_span_index(NULL));
    int64_t a = 1, b = 1;
    sp_result_span(NULL, &a, &b);
    CHECK(a == 0 && b == 0);
    sp_result_span(r, NULL, NULL);
    CHECK(sp_result_retain(NULL) == NULL);
    sp_result_release(NULL);
    CHECK_STR_EQ("unknown status", sp_status_str((sp_status)-99));
    CHECK_STR_EQ("Unknown", sp_event_type_name((sp_event_type)99));
    CHECK_STR_EQ("unknown", sp_counter_name((sp_counter_kind)99));
    /* Summary entry points with NULL or bad arguments. */
    sp_summary_table *t = (sp_summary_table *)(uintptr_t)1;
    CHECK_FAILS(SP_EINVAL, sp_result_summary(r, NULL, NULL));
    CHECK_FAILS(SP_EINVAL, sp_result_table_torch(NULL, NULL, -1, stdout));
    CHECK_FAILS(SP_EINVAL, sp_result_table_torch(r, NULL, -1, NULL));
    CHECK_FAILS(SP_EINVAL, sp_result_summary_table(r, SP_VIEW_OVERVIEW, NULL, NULL));
    CHECK_FAILS(SP_EINVAL, sp_result_summary_table(r, (sp_summary_view)-1, NULL, &t));
    CHECK(t == NULL);
    CHECK_EQ(0, sp_summary_table_lines(NULL));
    CHECK_EQ(0, sp_summary_table_columns(NULL));
    CHECK_EQ(SP_LINE_BLANK, sp_summary_table_line_kind(NULL, 0));
    CHECK_STR_EQ("", sp_summary_table_cell(NULL, 0, 0));
    sp_profiler_destroy(p);
}

static void test_misuse_export_and_load_of_nothing(void)
{
    char path[] = "/tmp/stepprof-misuse-XXXXXX.json";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    close(fd);
    CHECK_FAILS(SP_ENODATA, sp_result_export(NULL, path, SP_FORMAT_JSON));
    CHECK_FAILS(SP_ENODATA, sp_result_export_protobuf(NULL, path));
    sp_result *out = (sp_result *)(uintptr_t)1;
    CHECK_FAILS(SP_EINVAL, sp_result_load(NULL, NULL, &out));
    CHECK_FAILS(SP_EINVAL, sp_result_load("", NULL, &out));
    CHECK_FAILS(SP_EINVAL, sp_result_load(path, NULL, NULL));
    sp_load_options lo;
    sp_load_options_init(&lo);
    lo.format = (sp_format)77;
    CHECK_FAILS(SP_EINVAL, sp_result_load(path, &lo, &out));
    CHECK(out == NULL);
    CHECK_FAILS(SP_EIO, sp_result_load("/nonexistent/stepprof/none.json", NULL, &out));
    CHECK(strstr(sp_last_error(), "/nonexistent/stepprof/none.json") != NULL);
    CHECK_FAILS(SP_EFORMAT, sp_result_load(path, NULL, &out)); /* an empty file */
    /* A span with no user events exports and loads back: ProfileStep#0 only. */
    sp_profiler *p = create(0);
    CHECK_OK(sp_profiler_start(p));
    CHECK_OK(sp_profiler_stop(p));
    CHECK_OK(sp_profiler_export(p, path, SP_FORMAT_JSON));
    CHECK_OK(sp_result_load(path, NULL, &out));
    CHECK_EQ(1, count_named(out, "ProfileStep#0"));
    sp_result_release(out);
    FILE *null = fopen("/dev/null", "w");
    CHECK(null != NULL);
    if (null) CHECK_OK(sp_result_summary(sp_profiler_result(p), NULL, null));
    if (null) fclose(null);
    sp_profiler_destroy(p);
    unlink(path);
}

static void *one_range(void *arg)
{
    (void)arg;
    sp_range_begin(SP_EVENT_DATALOADER, "per-thread");
    sp_range_end();
    return NULL;
}

/* 10,000 threads, created one after another inside one span, each records a
 * range and exits: every range is kept, each thread is its own row. */
static void test_misuse_ten_thousand_threads(void)
{
    enum { THREADS = 10000 };
    sp_profiler *p = create(0);
    CHECK_OK(sp_profiler_start(p));
    int started = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, one_range, NULL) != 0) continue;
        pthread_join(t, NULL);
        started++;
    }
    CHECK_EQ(THREADS, started);
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    CHECK_EQ(THREADS, count_named(r, "per-thread"));
    CHECK(sp_result_thread_count(r) >= THREADS); /* tids may be reused: >= is the safe bound */
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_HOST_DROPPED));
    sp_profiler_destroy(p);
}

/* Names of 1 MB on every path that takes a name: copied names are cut to
 * 4096 bytes when recorded, static names when collected; each is counted. */
static void test_misuse_one_megabyte_names(void)
{
    size_t len = (size_t)1 << 20;
    char *big = malloc(len + 1);
    CHECK(big != NULL);
    if (!big) return;
    memset(big, 'n', len);
    big[len] = '\0';
    sp_profiler *p = create(0);
    CHECK_OK(sp_profiler_start(p));
    sp_range_begin_copy(SP_EVENT_OPERATOR, big, len);
    sp_range_end();
    uint64_t t0 = sp_clock_ticks(), t1 = sp_clock_ticks();
    sp_range_add(SP_EVENT_OPERATOR, big, len, t0, t1);
    sp_range_begin(SP_EVENT_USER_DEFINED, big); /* static: lives until the result is released */
    sp_range_end();
    sp_instant(SP_EVENT_USER_DEFINED, big);
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    sp_event_info e;
    int long_names = 0;
    for (size_t i = 0; sp_result_event(r, 0, i, &e) == SP_OK; i++) {
        if (e.name[0] != 'n') continue;
        long_names++;
        CHECK_EQ(4096, strlen(e.name));
    }
    CHECK_EQ(4, long_names);
    CHECK_U64_EQ(4, sp_result_counter(r, SP_COUNTER_NAMES_CUT));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_MISUSE));
    char path[] = "/tmp/stepprof-misuse-big-XXXXXX.json";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    close(fd);
    CHECK_OK(sp_profiler_export(p, path, SP_FORMAT_JSON));
    sp_result *back = NULL;
    CHECK_OK(sp_result_load(path, NULL, &back));
    sp_result_release(back);
    unlink(path);
    sp_profiler_destroy(p);
    free(big);
}

/* A copied name holding every byte value 0..255, NUL included, and one of
 * 1..255 copied and as a static name: the result's names are valid UTF-8
 * (each invalid byte 0x80..0xFF becomes U+FFFD, 3 bytes, and the name is
 * counted once), a NUL becomes U+FFFD and counts as a cut name (issue 17:
 * it used to end the name silently), and the trace loads back and is valid
 * JSON. */
static void test_misuse_names_with_every_byte_value(void)
{
    char all[256], no_nul[256];
    for (int i = 0; i < 256; i++) all[i] = (char)i;
    for (int i = 0; i < 255; i++) no_nul[i] = (char)(i + 1);
    no_nul[255] = '\0';
    sp_profiler *p = create(0);
    CHECK_OK(sp_profiler_start(p));
    sp_range_begin_copy(SP_EVENT_OPERATOR, all, sizeof all);
    sp_range_end();
    sp_range_begin_copy(SP_EVENT_OPERATOR, all + 1, sizeof all - 1);
    sp_range_end();
    sp_range_begin(SP_EVENT_OPERATOR, no_nul);
    sp_range_end();
    sp_instant(SP_EVENT_USER_DEFINED, no_nul);
    sp_counter(no_nul, 1.0);
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    sp_event_info e;
    size_t events = 0, empty = 0, repaired = 0, nul = 0;
    for (size_t i = 0; sp_result_event(r, 0, i, &e) == SP_OK; i++, events++) {
        CHECK(sp__utf8_valid(e.name, strlen(e.name)));
        empty += e.name[0] == '\0';
        repaired += strlen(e.name) == 127 + 128 * 3;
        nul += strlen(e.name) == 3 + 127 + 128 * 3 && memcmp(e.name, "\xef\xbf\xbd", 3) == 0;
    }
    CHECK_EQ(6, events); /* and ProfileStep#0 */
    CHECK_EQ(0, empty);  /* the name that starts with NUL is kept whole */
    CHECK_EQ(1, nul);
    CHECK_EQ(4, repaired);
    CHECK_U64_EQ(1, sp_result_counter(r, SP_COUNTER_NAMES_CUT));
    CHECK_U64_EQ(5, sp_result_counter(r, SP_COUNTER_INVALID_UTF8));
    char path[] = "/tmp/stepprof-misuse-bytes-XXXXXX.json";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    close(fd);
    CHECK_OK(sp_profiler_export(p, path, SP_FORMAT_JSON));
    sp_result *back = NULL;
    CHECK_OK(sp_result_load(path, NULL, &back));
    sp_result_release(back);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s -c \"import json,sys; json.load(open(sys.argv[1], encoding='utf-8'))\" %s",
             SP_PYTHON, path);
    CHECK_EQ(0, system(cmd));
    unlink(path);
    sp_profiler_destroy(p);
}

int main(void)
{
    RUN_TEST(test_misuse_null_profiler_everywhere);
    RUN_TEST(test_misuse_wrong_states_not_covered_elsewhere);
    RUN_TEST(test_misuse_hot_path_without_a_profiler_does_nothing);
    RUN_TEST(test_misuse_options_out_of_range);
    RUN_TEST(test_misuse_buffer_cap_extremes);
    RUN_TEST(test_misuse_range_ended_on_another_thread);
    RUN_TEST(test_misuse_result_accessors_out_of_range);
    RUN_TEST(test_misuse_export_and_load_of_nothing);
    RUN_TEST(test_misuse_ten_thousand_threads);
    RUN_TEST(test_misuse_one_megabyte_names);
    RUN_TEST(test_misuse_names_with_every_byte_value);
    return TEST_SUMMARY();
}
