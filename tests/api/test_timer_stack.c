/* test_timer_stack.c: the benchmark timer as the profiler drives it: the
 * Perf Summary reaches the report callback at stop only after more than 10
 * steps (also with timer_only), step_info reports the steps since the last
 * call, Dataloader ranges of the timing thread become reader cost (whether
 * or not the step is recorded) while those of other threads do not, and the
 * ranges inside a timed Dataloader range are still recorded correctly. At a
 * CLOSED step only the calls the timer needs reach the library.
 * Loads timed by calls (sp__reader_load_begin/_end, as paddle's DataLoader
 * hook drives them) are reader cost without an event, bind and pause the
 * timer by their reader id, and are left out inside a timed range and on
 * other threads; the pause makes those checks independent of time (a load
 * fed to the timer with a foreign id turns the next step_info empty).
 * Only the presence and shape of the text are checked: the values depend on
 * real time, which no test may rely on. */
#include "check.h"
#include "reader.h"
#include "stepprof/stepprof.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct report_capture {
    char text[8192];
    int calls;
} report_capture;

static void capture(const char *text, void *user)
{
    report_capture *c = user;
    c->calls++;
    strncat(c->text, text, sizeof c->text - strlen(c->text) - 1);
}

static void quiet(sp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)message;
    (void)user;
}

static volatile double sink;

static void busy(int n)
{
    double x = 0;
    for (int i = 0; i < n; i++) x += i * 0.5;
    sink = x;
}

static sp_profiler *make(report_capture *c, int timer_only, const char *schedule)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.timer_only = timer_only;
    o.report = capture;
    o.report_user = c;
    o.log = quiet;
    if (schedule) sp_scheduler_range(&o.scheduler, schedule[0] - '0', schedule[1] - '0');
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    return p;
}

/* One training step: a Dataloader range with an operator inside, then work. */
static void train_step(void)
{
    sp_range_begin(SP_EVENT_DATALOADER, "DataLoader");
    sp_range_begin(SP_EVENT_OPERATOR, "decode");
    busy(20000);
    sp_range_end();
    sp_range_end();
    SP_SCOPE(SP_EVENT_FORWARD, "forward");
    busy(20000);
}

static void run_steps(sp_profiler *p, int steps, int64_t samples)
{
    CHECK_OK(sp_profiler_start(p));
    for (int i = 0; i < steps; i++) {
        train_step();
        CHECK_OK(sp_profiler_step(p, samples));
    }
}

static void test_timer_stack_perf_summary_after_more_than_ten_steps(void)
{
    report_capture c = {"", 0};
    sp_profiler *p = make(&c, 0, "25");
    run_steps(p, 12, 32);
    CHECK_OK(sp_profiler_stop(p));
    CHECK_EQ(1, c.calls);
    CHECK(strstr(c.text, "Perf Summary") != NULL);
    CHECK(strstr(c.text, "Reader Ratio: ") != NULL);
    CHECK(strstr(c.text, "Time Unit: s, IPS Unit: samples/s") != NULL);
    CHECK(strstr(c.text, "reader_cost") != NULL);
    CHECK(strstr(c.text, "batch_cost") != NULL);
    CHECK(strstr(c.text, "tokens/s") == NULL && strstr(c.text, "MFU") == NULL);
    CHECK(strstr(c.text, "nan") == NULL && strstr(c.text, "inf") == NULL);
    sp_profiler_destroy(p);
}

/* Given figures add the throughput rows after paddle's; none given, the
 * Perf Summary has none (the first test above); bad figures fail create. */
static void test_timer_stack_throughput_rows_when_given(void)
{
    report_capture c = {"", 0};
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.timer_only = true;
    o.report = capture;
    o.report_user = &c;
    o.log = quiet;
    o.tokens_per_sample = 512;
    o.flops_per_step = 1e9;
    o.peak_tflops = 1;
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    run_steps(p, 12, 32);
    CHECK_OK(sp_profiler_stop(p));
    const char *ips = strstr(c.text, "|       ips       |");
    const char *tokens = strstr(c.text, "|     tokens/s    |");
    const char *flops = strstr(c.text, "|     TFLOP/s     |");
    const char *mfu = strstr(c.text, "|     MFU (%)     |");
    CHECK(ips && tokens && flops && mfu && ips < tokens && tokens < flops && flops < mfu);
    CHECK(strstr(c.text, "nan") == NULL && strstr(c.text, "inf") == NULL);
    sp_profiler_destroy(p);
    static const double bad[] = {-1, 1e31, 0.0 / 0.0};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        sp_options_init(&o);
        o.on_trace_ready = sp_handler_none();
        o.flops_per_step = bad[i];
        p = NULL;
        CHECK_EQ(SP_EINVAL, sp_profiler_create(&o, &p));
        CHECK(p == NULL);
        CHECK(strstr(sp_last_error(), "flops_per_step") != NULL);
    }
}

static void test_timer_stack_no_summary_for_ten_steps(void)
{
    report_capture c = {"", 0};
    sp_profiler *p = make(&c, 0, NULL);
    run_steps(p, 10, 32);
    CHECK_OK(sp_profiler_stop(p));
    CHECK_EQ(0, c.calls);
    sp_profiler_destroy(p);
}

static void test_timer_stack_timer_only_and_steps_mode(void)
{
    report_capture c = {"", 0};
    sp_profiler *p = make(&c, 1, NULL);
    run_steps(p, 14, -1);
    char info[256];
    CHECK_OK(sp_profiler_step_info(p, NULL, info, sizeof info));
    CHECK(strstr(info, " reader_cost: ") == info);
    CHECK(strstr(info, " s batch_cost: ") != NULL);
    CHECK(strstr(info, " steps/s") != NULL);
    CHECK_OK(sp_profiler_stop(p));
    CHECK(strstr(c.text, "IPS Unit: steps/s") != NULL);
    CHECK(sp_profiler_result(p) == NULL); /* nothing recorded */
    sp_profiler_destroy(p);
}

static void test_timer_stack_step_info_resets_and_takes_a_unit(void)
{
    report_capture c = {"", 0};
    sp_profiler *p = make(&c, 1, NULL);
    run_steps(p, 3, 16);
    char info[256];
    CHECK_OK(sp_profiler_step_info(p, "images", info, sizeof info));
    CHECK(strstr(info, " images/s") != NULL);
    CHECK_OK(sp_profiler_step_info(p, "images", info, sizeof info));
    CHECK_STR_EQ("", info); /* no step since the previous call */
    CHECK_EQ(SP_EINVAL, sp_profiler_step_info(p, NULL, NULL, 0));
    sp_profiler_destroy(p);
}

static void *other_thread_dataloader(void *arg)
{
    (void)arg;
    sp_range_begin(SP_EVENT_DATALOADER, "worker loader");
    busy(20000);
    sp_range_end();
    return NULL;
}

static void *other_thread_opens_dataloader(void *arg)
{
    (void)arg;
    sp_range_begin(SP_EVENT_DATALOADER, "worker loader");
    int open = (sp__host_active & SP__ACTIVE_READER) != 0;
    sp_range_end();
    return (void *)(intptr_t)open;
}

/* At a CLOSED step only Dataloader begins reach the library, until the
 * timed range is open: then every begin and end of the thread does, so the
 * range ends at its own end, not at the end of the operator inside it. */
static void test_timer_stack_closed_step_sends_only_what_the_timer_needs(void)
{
    report_capture c = {"", 0};
    sp_profiler *p = make(&c, 0, "89"); /* steps 0..7 CLOSED */
    CHECK_OK(sp_profiler_start(p));
    CHECK_EQ(2, sp__host_active);
    CHECK(!sp__wants_begin(SP_EVENT_OPERATOR));
    CHECK(!sp__wants_end());
    CHECK(sp__wants_begin(SP_EVENT_DATALOADER));
    sp_range_begin(SP_EVENT_OPERATOR, "outside");
    sp_range_end();
    CHECK(!sp__reader_is_open());
    sp_range_begin(SP_EVENT_DATALOADER, "DataLoader");
    CHECK(sp__reader_is_open());
    CHECK(sp__wants_begin(SP_EVENT_OPERATOR) && sp__wants_end());
    sp_range_begin(SP_EVENT_OPERATOR, "decode");
    sp_range_end();
    CHECK(sp__reader_is_open());
    sp_range_end();
    CHECK(!sp__reader_is_open());
    CHECK_EQ(2, sp__host_active);
    /* Another thread's Dataloader range is not timed. */
    pthread_t t;
    void *opened = NULL;
    pthread_create(&t, NULL, other_thread_opens_dataloader, NULL);
    pthread_join(t, &opened);
    CHECK(opened == NULL);
    CHECK_EQ(2, sp__host_active);
    for (int i = 0; i < 12; i++) {
        train_step();
        CHECK_OK(sp_profiler_step(p, 8));
    }
    CHECK(!sp_is_recording());
    CHECK_OK(sp_profiler_stop(p));
    CHECK(strstr(c.text, "reader_cost") != NULL);
    sp_profiler_destroy(p);
    CHECK_EQ(0, sp__host_active);
}

static void test_timer_stack_other_threads_dataloader_is_not_reader_cost(void)
{
    report_capture c = {"", 0};
    sp_profiler *p = make(&c, 1, NULL);
    CHECK_OK(sp_profiler_start(p));
    for (int i = 0; i < 12; i++) {
        pthread_t t;
        pthread_create(&t, NULL, other_thread_dataloader, NULL);
        pthread_join(t, NULL);
        busy(20000);
        CHECK_OK(sp_profiler_step(p, 8));
    }
    CHECK_OK(sp_profiler_stop(p));
    CHECK(strstr(c.text, "batch_cost") != NULL);
    CHECK(strstr(c.text, "reader_cost") == NULL);
    CHECK(strstr(c.text, "Reader Ratio") == NULL);
    sp_profiler_destroy(p);
}

static void test_timer_stack_ranges_inside_timed_dataloader_are_recorded(void)
{
    report_capture c = {"", 0};
    sp_profiler *p = make(&c, 0, NULL);
    run_steps(p, 3, 8);
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    size_t loaders = 0, decodes = 0, forwards = 0;
    sp_event_info e;
    for (size_t i = 0; sp_result_event(r, 0, i, &e) == SP_OK; i++) {
        if (strcmp(e.name, "DataLoader") == 0) {
            loaders++;
            CHECK_EQ(SP_EVENT_DATALOADER, e.type);
            CHECK_EQ(1, e.depth); /* inside its ProfileStep */
        }
        if (strcmp(e.name, "decode") == 0) {
            decodes++;
            CHECK_EQ(2, e.depth);
        }
        forwards += strcmp(e.name, "forward") == 0;
    }
    CHECK_EQ(3, loaders);
    CHECK_EQ(3, decodes);
    CHECK_EQ(3, forwards);
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_UNMATCHED_ENDS));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_UNCLOSED_RANGES));
    sp_profiler_destroy(p);
    CHECK_EQ(0, sp_is_recording());
}

static void test_timer_stack_nested_profilers_time_their_own_steps(void)
{
    report_capture outer_c = {"", 0}, inner_c = {"", 0};
    sp_profiler *outer = make(&outer_c, 1, NULL);
    sp_profiler *inner = make(&inner_c, 1, NULL);
    CHECK_OK(sp_profiler_start(outer));
    run_steps(inner, 11, 4); /* an evaluation loop inside training */
    CHECK_OK(sp_profiler_stop(inner));
    CHECK_EQ(1, inner_c.calls);
    for (int i = 0; i < 3; i++) CHECK_OK(sp_profiler_step(outer, 4));
    CHECK_OK(sp_profiler_stop(outer));
    CHECK_EQ(0, outer_c.calls); /* 3 steps only */
    sp_profiler_destroy(inner);
    sp_profiler_destroy(outer);
}

/* A paddle-style step: the load timed by calls around work, then work. */
static void hooked_step(sp_profiler *p, uint64_t reader_id)
{
    sp__reader_load_begin(reader_id);
    busy(20000);
    sp__reader_load_end();
    busy(20000);
    CHECK_OK(sp_profiler_step(p, 8));
}

static int has_event_named(const sp_result *r, const char *name)
{
    sp_event_info e;
    for (size_t t = 0; t < sp_result_thread_count(r); t++)
        for (size_t i = 0; sp_result_event(r, t, i, &e) == SP_OK; i++)
            if (strcmp(e.name, name) == 0) return 1;
    return 0;
}

static void test_timer_stack_load_calls_are_reader_cost_without_an_event(void)
{
    report_capture c = {"", 0};
    sp_profiler *p = make(&c, 0, NULL);
    CHECK_OK(sp_profiler_start(p));
    for (int i = 0; i < 12; i++) hooked_step(p, 7);
    char info[256];
    CHECK_OK(sp_profiler_step_info(p, NULL, info, sizeof info));
    CHECK(strstr(info, " reader_cost: ") == info);
    CHECK_OK(sp_profiler_stop(p));
    CHECK(strstr(c.text, "Reader Ratio: ") != NULL);
    CHECK(strstr(c.text, "reader_cost") != NULL);
    const sp_result *r = sp_profiler_result(p);
    CHECK(r != NULL);
    CHECK_EQ(0, has_event_named(r, "DataLoader")); /* paddle's tracer records the load */
    sp_profiler_destroy(p);
}

static void test_timer_stack_load_calls_of_another_reader_pause_timing(void)
{
    report_capture c = {"", 0};
    sp_profiler *p = make(&c, 1, NULL);
    char info[256];
    CHECK_OK(sp_profiler_start(p));
    for (int i = 0; i < 3; i++) hooked_step(p, 7);
    CHECK_OK(sp_profiler_step_info(p, NULL, info, sizeof info));
    CHECK(strstr(info, " batch_cost: ") != NULL);
    for (int i = 0; i < 3; i++) hooked_step(p, 8); /* evaluation without its own start() */
    CHECK_OK(sp_profiler_step_info(p, NULL, info, sizeof info));
    CHECK_STR_EQ("", info);
    hooked_step(p, 7); /* the bound reader resumes timing */
    CHECK_OK(sp_profiler_step_info(p, NULL, info, sizeof info));
    CHECK(strstr(info, " batch_cost: ") != NULL);
    CHECK_OK(sp_profiler_stop(p));
    sp_profiler_destroy(p);
}

static void test_timer_stack_load_calls_inside_a_timed_range_are_left_out(void)
{
    report_capture c = {"", 0};
    sp_profiler *p = make(&c, 1, NULL);
    char info[256];
    CHECK_OK(sp_profiler_start(p));
    for (int i = 0; i < 3; i++) {
        sp_range_begin(SP_EVENT_DATALOADER, "DataLoader");
        sp__reader_load_begin(99); /* were it fed, id 99 would pause the timer */
        busy(20000);
        sp__reader_load_end();
        sp_range_end();
        CHECK_OK(sp_profiler_step(p, 8));
    }
    CHECK_OK(sp_profiler_step_info(p, NULL, info, sizeof info));
    CHECK(strstr(info, " reader_cost: ") == info);
    CHECK(strstr(info, " batch_cost: ") != NULL);
    sp__reader_load_end(); /* an end with no begin does nothing */
    CHECK_OK(sp_profiler_stop(p));
    sp_profiler_destroy(p);
}

static void *other_thread_load(void *arg)
{
    sp__reader_load_begin(*(uint64_t *)arg);
    busy(20000);
    sp__reader_load_end();
    return NULL;
}

static void test_timer_stack_other_threads_load_calls_are_left_out(void)
{
    report_capture c = {"", 0};
    sp_profiler *p = make(&c, 1, NULL);
    char info[256];
    uint64_t foreign = 99;
    CHECK_OK(sp_profiler_start(p));
    hooked_step(p, 7);
    for (int i = 0; i < 3; i++) {
        pthread_t t;
        pthread_create(&t, NULL, other_thread_load, &foreign);
        pthread_join(t, NULL);
        hooked_step(p, 7);
    }
    CHECK_OK(sp_profiler_step_info(p, NULL, info, sizeof info));
    CHECK(strstr(info, " batch_cost: ") != NULL);
    CHECK_OK(sp_profiler_stop(p));
    /* With no timer, a load is timed by nobody and a later timer sees none. */
    sp__reader_load_begin(99);
    CHECK_OK(sp_profiler_start(p));
    sp__reader_load_end();
    hooked_step(p, 7);
    CHECK_OK(sp_profiler_step_info(p, NULL, info, sizeof info));
    CHECK(strstr(info, " batch_cost: ") != NULL);
    CHECK_OK(sp_profiler_stop(p));
    sp_profiler_destroy(p);
}

int main(void)
{
    RUN_TEST(test_timer_stack_perf_summary_after_more_than_ten_steps);
    RUN_TEST(test_timer_stack_no_summary_for_ten_steps);
    RUN_TEST(test_timer_stack_throughput_rows_when_given);
    RUN_TEST(test_timer_stack_timer_only_and_steps_mode);
    RUN_TEST(test_timer_stack_step_info_resets_and_takes_a_unit);
    RUN_TEST(test_timer_stack_other_threads_dataloader_is_not_reader_cost);
    RUN_TEST(test_timer_stack_ranges_inside_timed_dataloader_are_recorded);
    RUN_TEST(test_timer_stack_nested_profilers_time_their_own_steps);
    RUN_TEST(test_timer_stack_load_calls_are_reader_cost_without_an_event);
    RUN_TEST(test_timer_stack_load_calls_of_another_reader_pause_timing);
    RUN_TEST(test_timer_stack_load_calls_inside_a_timed_range_are_left_out);
    RUN_TEST(test_timer_stack_other_threads_load_calls_are_left_out);
    RUN_TEST(test_timer_stack_closed_step_sends_only_what_the_timer_needs);
    return TEST_SUMMARY();
}
