/* test_cpu_util.c: checks the /proc/stat parser and the utilisation
 * arithmetic of semantics.md §8 on hand-made samples, with every expected
 * value worked out in a comment, then takes one live pair of samples around
 * a short busy loop and checks only that the figures are sane (no timing
 * thresholds beyond "> 0"). */
#include "check.h"
#include "cpu_util.h"

#include <math.h>
#include <stdint.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>

static int near(double expected, double actual)
{
    return fabs(expected - actual) < 1e-12;
}

static sp__cpu_sample sample(uint64_t proc, uint64_t wall, uint64_t busy, uint64_t idle)
{
    sp__cpu_sample s;
    s.ok = 1;
    s.proc_ns = proc;
    s.wall_ns = wall;
    s.busy = busy;
    s.idle = idle;
    return s;
}

static void test_cpu_util_parse_real_line_ten_counters(void)
{
    /* user nice system idle iowait irq softirq steal guest guest_nice
     * busy = 10132153 + 290696 + 3084719 + 0 (irq) + 25195 + 0 (steal) = 13532763
     * idle = 46828483 + 16683 = 46845166; guest fields are ignored. Only the
     * first line counts: the per-core lines after it are not read. */
    const char *text = "cpu  10132153 290696 3084719 46828483 16683 0 25195 0 175628 0\n"
                       "cpu0 1 1 1 1 1 1 1 1 1 1\n"
                       "intr 1 2 3\n";
    uint64_t busy = 0, idle = 0;
    CHECK_EQ(0, sp__cpu_parse_stat(text, &busy, &idle));
    CHECK_U64_EQ(13532763u, busy);
    CHECK_U64_EQ(46845166u, idle);
}

static void test_cpu_util_parse_exactly_eight_counters(void)
{
    /* busy = 1 + 2 + 3 + 6 + 7 + 8 = 27; idle = 4 + 5 = 9. Tabs, no newline. */
    uint64_t busy = 0, idle = 0;
    CHECK_EQ(0, sp__cpu_parse_stat("cpu\t1 2 3 4\t5 6 7 8", &busy, &idle));
    CHECK_U64_EQ(27, busy);
    CHECK_U64_EQ(9, idle);
    /* Trailing blanks and CRLF are fine too. */
    CHECK_EQ(0, sp__cpu_parse_stat("cpu 1 2 3 4 5 6 7 8  \r\n", &busy, &idle));
    CHECK_U64_EQ(27, busy);
}

static void test_cpu_util_parse_rejects_seven_counters(void)
{
    uint64_t busy = 111, idle = 222;
    CHECK_EQ(-1, sp__cpu_parse_stat("cpu  1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7 8\n", &busy, &idle));
    CHECK_U64_EQ(111, busy); /* untouched on failure */
    CHECK_U64_EQ(222, idle);
}

static void test_cpu_util_parse_rejects_garbage(void)
{
    uint64_t busy = 0, idle = 0;
    CHECK_EQ(-1, sp__cpu_parse_stat("cpu  1 2 3 x 5 6 7 8 9 10", &busy, &idle));
    CHECK_EQ(-1, sp__cpu_parse_stat("cpu  1 2 3 4abc 5 6 7 8", &busy, &idle));
    CHECK_EQ(-1, sp__cpu_parse_stat("cpu  1 2 3 -4 5 6 7 8", &busy, &idle));
    /* 2^64 does not fit. */
    CHECK_EQ(-1, sp__cpu_parse_stat("cpu  18446744073709551616 2 3 4 5 6 7 8", &busy, &idle));
    CHECK_EQ(-1, sp__cpu_parse_stat("\x01\xff\xfe garbage", &busy, &idle));
    CHECK_EQ(-1, sp__cpu_parse_stat("cpu", &busy, &idle));
    CHECK_EQ(-1, sp__cpu_parse_stat(NULL, &busy, &idle));
    /* 2^64 - 1 still fits: busy = that + 0 ... (only user set). */
    CHECK_EQ(0, sp__cpu_parse_stat("cpu 18446744073709551615 0 0 0 0 0 0 0", &busy, &idle));
    CHECK_U64_EQ(UINT64_MAX, busy);
}

static void test_cpu_util_parse_rejects_empty_string(void)
{
    uint64_t busy = 0, idle = 0;
    CHECK_EQ(-1, sp__cpu_parse_stat("", &busy, &idle));
    CHECK_EQ(-1, sp__cpu_parse_stat("\n", &busy, &idle));
}

static void test_cpu_util_parse_rejects_line_not_starting_with_cpu(void)
{
    uint64_t busy = 0, idle = 0;
    CHECK_EQ(-1, sp__cpu_parse_stat("intr 1 2 3 4 5 6 7 8 9 10", &busy, &idle));
    CHECK_EQ(-1, sp__cpu_parse_stat(" cpu 1 2 3 4 5 6 7 8", &busy, &idle));
    CHECK_EQ(-1, sp__cpu_parse_stat("CPU 1 2 3 4 5 6 7 8", &busy, &idle));
    /* A per-core line is not the aggregate line. */
    CHECK_EQ(-1, sp__cpu_parse_stat("cpu0 1 2 3 4 5 6 7 8", &busy, &idle));
}

static void test_cpu_util_basic_arithmetic(void)
{
    /* d proc = 150 - 100 = 50, d wall = 1100 - 1000 = 100 -> process 0.5.
     * d busy = 560 - 500 = 60, d idle = 1640 - 1500 = 140 -> system 60 / 200 = 0.3. */
    sp__cpu_sample b = sample(100, 1000, 500, 1500), e = sample(150, 1100, 560, 1640);
    double process = -1, system = -1;
    CHECK_EQ(0, sp__cpu_utilization(&b, &e, &process, &system));
    CHECK(near(0.5, process));
    CHECK(near(0.3, system));
}

static void test_cpu_util_process_exceeds_one_on_several_cores(void)
{
    /* Four threads busy for the whole window, less a little:
     * d proc = 390, d wall = 100 -> process 3.9.
     * d busy = 400, d idle = 400 (8 cores, half busy) -> system 0.5. */
    sp__cpu_sample b = sample(10, 0, 1000, 2000), e = sample(400, 100, 1400, 2400);
    double process = 0, system = 0;
    CHECK_EQ(0, sp__cpu_utilization(&b, &e, &process, &system));
    CHECK(near(3.9, process));
    CHECK(near(0.5, system));
}

static void test_cpu_util_zero_wall_delta(void)
{
    /* d wall = 0 -> process 0 (not inf, even though d proc = 5);
     * d busy = 0 and d idle = 0 -> system 0 (not nan). */
    sp__cpu_sample b = sample(10, 500, 70, 80), e = sample(15, 500, 70, 80);
    double process = -1, system = -1;
    CHECK_EQ(0, sp__cpu_utilization(&b, &e, &process, &system));
    CHECK(process == 0.0);
    CHECK(system == 0.0);
    /* Identical all-zero samples: 0 and 0. */
    sp__cpu_sample z = sample(0, 0, 0, 0);
    CHECK_EQ(0, sp__cpu_utilization(&z, &z, &process, &system));
    CHECK(process == 0.0);
    CHECK(system == 0.0);
}

static void test_cpu_util_counter_going_backwards(void)
{
    /* proc 100 -> 40 counts as d proc = 0 over d wall = 50 -> process 0.
     * busy 900 -> 100 counts as d busy = 0, d idle = 50 -> system 0 / 50 = 0. */
    sp__cpu_sample b = sample(100, 1000, 900, 100), e = sample(40, 1050, 100, 150);
    double process = -1, system = -1;
    CHECK_EQ(0, sp__cpu_utilization(&b, &e, &process, &system));
    CHECK(process == 0.0);
    CHECK(system == 0.0);
    /* Wall going backwards (clock_t wrapped): d wall = 0 -> process 0.
     * Idle going backwards: d busy = 30, d idle = 0 -> system 30 / 30 = 1. */
    b = sample(0, 5000, 100, 900);
    e = sample(20, 10, 130, 800);
    CHECK_EQ(0, sp__cpu_utilization(&b, &e, &process, &system));
    CHECK(process == 0.0);
    CHECK(near(1.0, system));
    /* Both system counters backwards: d busy + d idle = 0 -> system 0. */
    b = sample(0, 0, 100, 900);
    e = sample(0, 0, 50, 800);
    CHECK_EQ(0, sp__cpu_utilization(&b, &e, &process, &system));
    CHECK(system == 0.0);
}

static void test_cpu_util_unusable_sample_reports_zero_system(void)
{
    /* The end sample could not read /proc/stat: return 1, system 0 although
     * d busy = 100 and d idle = 100 would give 0.5; the process figure comes
     * from times() and is still computed: d proc 25 / d wall 100 = 0.25. */
    sp__cpu_sample b = sample(0, 0, 100, 100), e = sample(25, 100, 200, 200);
    double process = -1, system = -1;
    e.ok = 0;
    CHECK_EQ(1, sp__cpu_utilization(&b, &e, &process, &system));
    CHECK(system == 0.0);
    CHECK(near(0.25, process));
    /* Beginning unusable instead: also 1; the caller tells which from .ok. */
    e.ok = 1;
    b.ok = 0;
    system = -1;
    CHECK_EQ(1, sp__cpu_utilization(&b, &e, &process, &system));
    CHECK(system == 0.0);
    /* Both unusable: 2. */
    e.ok = 0;
    system = -1;
    CHECK_EQ(2, sp__cpu_utilization(&b, &e, &process, &system));
    CHECK(system == 0.0);
    CHECK(near(0.25, process));
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_cpu_util_live_sample_pair(void)
{
    sp__cpu_sample b, e;
    volatile uint64_t sink = 0;
    sp__cpu_sample_take(&b);
    /* Spin for ~20 ms, and on until times() has counted at least one tick of
     * our CPU time (bounded at 5 s), so "process > 0" holds on any machine. */
    double t0 = now_s();
    for (;;) {
        for (int i = 0; i < 100000; i++) sink = sink * 31 + (uint64_t)i;
        double t = now_s() - t0;
        sp__cpu_sample_take(&e);
        if ((t >= 0.02 && e.proc_ns > b.proc_ns && e.wall_ns > b.wall_ns) || t > 5.0)
            break;
    }
    double process = -1, system = -1;
    int unusable = sp__cpu_utilization(&b, &e, &process, &system);
    CHECK_EQ(!b.ok + !e.ok, unusable);
    if (access("/proc/stat", R_OK) == 0) CHECK_EQ(0, unusable);
    CHECK(isfinite(process) && isfinite(system));
    CHECK(process > 0.0);
    CHECK(system >= 0.0 && system <= 1.0);
    (void)sink;
}

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Issue 17: a span of a few ms spent busy read CPU(Process) 0.00, because
 * times() counts 10 ms ticks. Spin until this process has used 3 ms of CPU
 * (however long that takes on a busy machine): the figure must not be 0. */
static void test_cpu_util_short_busy_span_is_not_zero(void)
{
    sp__cpu_sample b, e;
    volatile uint64_t sink = 0;
    sp__cpu_sample_take(&b);
    uint64_t start = cpu_ns();
    while (cpu_ns() - start < 3000000u)
        for (int i = 0; i < 1000; i++) sink = sink * 31 + (uint64_t)i;
    sp__cpu_sample_take(&e);
    double process = -1, system = -1;
    sp__cpu_utilization(&b, &e, &process, &system);
    CHECK(e.proc_ns - b.proc_ns >= 3000000u);
    CHECK(process > 0.0);
    CHECK(isfinite(process));
    (void)sink;
}

/* Sub-tick figures survive: 3 ms of CPU over 4 ms of wall time is 0.75
 * (times() would have given 0 ticks over 0 or 1). */
static void test_cpu_util_nanosecond_samples(void)
{
    sp__cpu_sample b = sample(1000000000u, 5000000000u, 0, 0);
    sp__cpu_sample e = sample(1003000000u, 5004000000u, 0, 0);
    double process = -1, system = -1;
    CHECK_EQ(0, sp__cpu_utilization(&b, &e, &process, &system));
    CHECK(near(0.75, process));
}

int main(void)
{
    RUN_TEST(test_cpu_util_parse_real_line_ten_counters);
    RUN_TEST(test_cpu_util_parse_exactly_eight_counters);
    RUN_TEST(test_cpu_util_parse_rejects_seven_counters);
    RUN_TEST(test_cpu_util_parse_rejects_garbage);
    RUN_TEST(test_cpu_util_parse_rejects_empty_string);
    RUN_TEST(test_cpu_util_parse_rejects_line_not_starting_with_cpu);
    RUN_TEST(test_cpu_util_basic_arithmetic);
    RUN_TEST(test_cpu_util_process_exceeds_one_on_several_cores);
    RUN_TEST(test_cpu_util_zero_wall_delta);
    RUN_TEST(test_cpu_util_counter_going_backwards);
    RUN_TEST(test_cpu_util_unusable_sample_reports_zero_system);
    RUN_TEST(test_cpu_util_live_sample_pair);
    RUN_TEST(test_cpu_util_short_busy_span_is_not_zero);
    RUN_TEST(test_cpu_util_nanosecond_samples);
    return TEST_SUMMARY();
}
