/* test_summary_device.c: golden tests of the Device, Distributed and Kernel
 * summary tables (table_device.c, table_distributed.c, table_kernel.c) on
 * hand-built results. Each test renders the WHOLE table and compares it with
 * a C string literal; every number is worked out by hand in the comment
 * beside it. Layout (semantics.md §6.0): Device columns 30 + 20, so
 * L = 32 + 22 - 2 = 52 and the title has (52 - 14) / 2 = 19 dashes each side;
 * Distributed columns 3 x 25, so L = 3 * 27 - 2 = 79 and the title has
 * floor((79 - 20) / 2) = 29 dashes before and 30 after. The last tests fail
 * every allocation in turn (run the sanitizer build for leaks). */
#include "check.h"
#include "collect.h"
#include "fixture.h"
#include "sys.h"

#include "summary.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef fixture_range ev_spec; /* {name, type, start_ns, end_ns} */

#define OP SP_EVENT_OPERATOR
#define PS SP_EVENT_PROFILE_STEP
#define CM SP_EVENT_COMMUNICATION
#define N(a) (sizeof(a) / sizeof(a)[0])

/* Appends a thread (tids must come ascending) and builds its nesting, as the
 * collector does. */
static void add_thread(sp_result *r, uint64_t tid, const ev_spec *ev, size_t n)
{
    fixture_add_thread(r, tid, "thread", ev, n);
}

/* Renders t, checks it against want and that no "nan"/"inf" appears. */
static void check_render(const sp__table *t, const char *want)
{
    sp__buf b;
    sp__buf_init(&b);
    sp__table_render(t, &b);
    const char *got = sp__buf_cstr(&b);
    CHECK_EQ(0, b.failed);
    CHECK_STR_EQ(want, got);
    CHECK(strstr(got, "nan") == NULL);
    CHECK(strstr(got, "inf") == NULL);
    sp__buf_fini(&b);
}

static sp__summary_opts opts(const char *unit)
{
    sp__summary_opts o = {SP__SORT_CPU_TOTAL, 1, 0, unit};
    return o;
}

/* ---- Device ---- */

#define DEV_TITLE "-------------------Device Summary-------------------\n"
#define DEV_SEP "------------------------------  --------------------  \n"
#define DEV_HEAD "Device                          Utilization (%)       \n"
#define DEV_TAIL                                                                                   \
    DEV_SEP "Note:\n"                                                                              \
            "CPU(Process) Utilization = Current process CPU time over all cpu cores / elapsed "    \
            "time, so max utilization can be reached 100% * number of cpu cores.\n"                \
            "CPU(System) Utilization = All processes CPU time over all cpu cores(busy time) / "    \
            "(busy time + idle time).\n"                                                           \
            "GPU Utilization = Current process GPU time / elapsed time.\n"                         \
            "----------------------------------------------------\n"                               \
            "\n"                                                                                   \
            "\n"

static void test_summary_device_cpu_rows(void)
{
    sp_result *r = sp__result_new();
    r->meta.cpu_process = 3.4567; /* 100 x 3.4567 = 345.67 (> 100%: several cores) */
    r->meta.cpu_system = 0.2599;  /* 100 x 0.2599 = 25.99 */
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    sp__summary_opts o = opts("ms");
    sp__table *t = NULL;
    CHECK_OK(sp__summary_device(&m, &o, &t));
    CHECK(t != NULL);
    if (t)
        check_render(t, DEV_TITLE DEV_SEP DEV_HEAD DEV_SEP
                     "CPU(Process)                    345.67                \n"
                     "CPU(System)                     25.99                 \n" DEV_TAIL);
    sp__table_free(t);
    sp__model_fini(&m);
    sp_result_release(r);
}

/* A NaN or infinite fraction (a broken loaded result) and a NULL result both
 * print 0.00, never nan/inf; "us" changes nothing (no time cells). */
static void test_summary_device_non_finite_and_null_result(void)
{
    static const char want[] = DEV_TITLE DEV_SEP DEV_HEAD DEV_SEP
        "CPU(Process)                    0.00                  \n"
        "CPU(System)                     0.00                  \n" DEV_TAIL;
    sp_result *r = sp__result_new();
    r->meta.cpu_process = NAN;
    r->meta.cpu_system = INFINITY;
    sp__summary_opts o = opts("us");
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    sp__table *t = NULL;
    CHECK_OK(sp__summary_device(&m, &o, &t));
    if (t) check_render(t, want);
    sp__table_free(t);
    sp__model_fini(&m);
    CHECK_OK(sp__model_build(&m, NULL));
    t = NULL;
    CHECK_OK(sp__summary_device(&m, &o, &t));
    CHECK(t != NULL);
    if (t) check_render(t, want);
    sp__table_free(t);
    sp__model_fini(&m);
    sp_result_release(r);
}

/* ---- Distributed ---- */

#define DIST_TITLE "-----------------------------Distribution Summary------------------------------\n"
#define DIST_SEP "-------------------------  -------------------------  -------------------------  \n"
#define DIST_HEAD "Name                       Total Time                 Ratio (%)                  \n"
#define DIST_ZERO                                                                                  \
    "  Computation              0.00                       0.00                       \n"          \
    "  Overlap                  0.00                       0.00                       \n"
#define DIST_TAIL                                                                                  \
    DIST_SEP "Note:\n"                                                                             \
             "Communication time: Communication Event time, Communication Op time and its "       \
             "kernel time on gpu.\n"                                                               \
             "Computation time: Kernel time, except kernels belong to communication(nccl "        \
             "kernels).\n"                                                                         \
             "Overlap time: Communication time intersects with computation time.\n"               \
             "Example:\n"                                                                          \
             "Communication:\n"                                                                    \
             "  CPU:              |_________________|\n"                                           \
             "  GPU:                                  |______________|\n"                          \
             "  Total:            |_________________| |______________|\n"                          \
             "Computation time(Kernel):\n"                                                         \
             "  GPU:         |________________|\n"                                                 \
             "Overlap time:       |___________|\n"                                                 \
             "\n"                                                                                  \
             "-------------------------------------------------------------------------------\n"   \
             "\n"                                                                                  \
             "\n"

/* Thread 1: step [0, 1e6]; the op "c_allreduce_sum" [1e5, 4e5] (rule 2)
 * contains the Communication "inner" [1.5e5, 2e5]; "matmul" is no comm.
 * Thread 2: Communication "send_recv" [3e5, 6e5] overlaps the allreduce;
 * "MyBroadcast" [9e5, 9.5e5] matches case-insensitively; "allgather"
 * matches none of allreduce/broadcast/rpc. */
static const ev_spec comm_t1[] = {
    {"step", PS, 0, 1000000},
    {"c_allreduce_sum", OP, 100000, 400000},
    {"inner", CM, 150000, 200000},
    {"matmul", OP, 700000, 800000},
};
static const ev_spec comm_t2[] = {
    {"send_recv", CM, 300000, 600000},
    {"MyBroadcast", OP, 900000, 950000},
    {"allgather", OP, 960000, 970000},
};

static sp_result *comm_result(void)
{
    sp_result *r = sp__result_new();
    add_thread(r, 1, comm_t1, N(comm_t1));
    add_thread(r, 2, comm_t2, N(comm_t2));
    return r;
}

static void test_summary_distributed_cpu_comm_merged(void)
{
    sp_result *r = comm_result();
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    sp__spans s;
    sp__spans_init(&s);
    CHECK_OK(sp__summary_cpu_comm(&m, &s));
    /* [1e5,4e5] u [1.5e5,2e5] u [3e5,6e5] = [1e5,6e5]; then [9e5,9.5e5]. */
    CHECK_EQ(2, s.n);
    if (s.n == 2) {
        CHECK_EQ(100000, s.v[0].start);
        CHECK_EQ(600000, s.v[0].end);
        CHECK_EQ(900000, s.v[1].start);
        CHECK_EQ(950000, s.v[1].end);
    }
    CHECK_EQ(550000, sp__spans_length(&s)); /* 500000 + 50000 */
    sp__spans_fini(&s);
    sp__model_fini(&m);
    sp_result_release(r);
}

/* Communication = 550000 ns (above) = 0.55 ms; T = step = 1e6 ns = 1.00 ms;
 * 550000 / 1e6 = 55.00%. No kernels: computation and overlap 0.00 / 0.00. */
static void test_summary_distributed_allreduce_with_step(void)
{
    sp_result *r = comm_result();
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    sp__summary_opts o = opts("ms");
    sp__table *t = NULL;
    CHECK_OK(sp__summary_distributed(&m, &o, &t));
    CHECK(t != NULL);
    if (t)
        check_render(t, DIST_TITLE "Time unit: ms\n" DIST_SEP DIST_HEAD DIST_SEP
                     "ProfileStep                1.00                       100.00                     \n"
                     "  Communication            0.55                       55.00                      \n"
                     DIST_ZERO DIST_TAIL);
    sp__table_free(t);
    sp__model_fini(&m);
    sp_result_release(r);
}

/* Same input in us: T = 1e6 / 1e3 = 1000.00, communication 550000 / 1e3 =
 * 550.00; ratios unchanged. */
static void test_summary_distributed_time_unit_us(void)
{
    sp_result *r = comm_result();
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    sp__summary_opts o = opts("us");
    sp__table *t = NULL;
    CHECK_OK(sp__summary_distributed(&m, &o, &t));
    if (t)
        check_render(t, DIST_TITLE "Time unit: us\n" DIST_SEP DIST_HEAD DIST_SEP
                     "ProfileStep                1000.00                    100.00                     \n"
                     "  Communication            550.00                     55.00                      \n"
                     DIST_ZERO DIST_TAIL);
    sp__table_free(t);
    sp__model_fini(&m);
    sp_result_release(r);
}

/* No Communication node and no allreduce/broadcast/rpc operator: no table. */
static void test_summary_distributed_absent_without_communication(void)
{
    static const ev_spec ev[] = {
        {"step", PS, 0, 1000}, {"matmul", OP, 100, 200}, {"allgather", OP, 300, 400}};
    sp_result *r = sp__result_new();
    add_thread(r, 1, ev, N(ev));
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    sp__summary_opts o = opts("ms");
    sp__table *t = (sp__table *)&m; /* any non-NULL: must be reset */
    CHECK_OK(sp__summary_distributed(&m, &o, &t));
    CHECK(t == NULL);
    sp__model_fini(&m);
    sp_result_release(r);
}

/* No ProfileStep: T falls back to the span wall time 10000 - 0 = 10000 ns,
 * and the ProfileStep row is omitted (§9). "c_broadcast" [1000, 3000] inside
 * "x" [0, 4000]: communication 2000 ns = 2000.00 ns, 2000 / 10000 = 20.00%. */
static void test_summary_distributed_without_profile_step(void)
{
    static const ev_spec ev[] = {{"x", OP, 0, 4000}, {"c_broadcast", OP, 1000, 3000}};
    sp_result *r = sp__result_new();
    r->span_start_ns = 0;
    r->span_end_ns = 10000;
    add_thread(r, 1, ev, N(ev));
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    CHECK_EQ(1, m.T_is_fallback);
    CHECK_EQ(10000, m.T);
    sp__summary_opts o = opts("ns");
    sp__table *t = NULL;
    CHECK_OK(sp__summary_distributed(&m, &o, &t));
    if (t)
        check_render(t, DIST_TITLE "Time unit: ns\n" DIST_SEP DIST_HEAD DIST_SEP
                     "  Communication            2000.00                    20.00                      \n"
                     DIST_ZERO DIST_TAIL);
    sp__table_free(t);
    sp__model_fini(&m);
    sp_result_release(r);
}

/* A zero-length Communication [500, 500] still makes communication
 * non-empty: printed with 0 ns. Step [0, 2000]: T = 2000 = 2000.00 ns,
 * 0 / 2000 = 0.00%. Then everything zero-length with a zero span: T = 0
 * (no step time, span 0, events 0 - 0), no ProfileStep row, ratios 0.00. */
static void test_summary_distributed_zero_length_events(void)
{
    static const ev_spec ev1[] = {{"step", PS, 0, 2000}, {"c", CM, 500, 500}};
    static const ev_spec ev2[] = {{"step", PS, 0, 0}, {"c", CM, 0, 0}};
    sp__summary_opts o = opts("ns");
    sp_result *r = sp__result_new();
    add_thread(r, 1, ev1, N(ev1));
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    sp__table *t = NULL;
    CHECK_OK(sp__summary_distributed(&m, &o, &t));
    CHECK(t != NULL);
    if (t)
        check_render(t, DIST_TITLE "Time unit: ns\n" DIST_SEP DIST_HEAD DIST_SEP
                     "ProfileStep                2000.00                    100.00                     \n"
                     "  Communication            0.00                       0.00                       \n"
                     DIST_ZERO DIST_TAIL);
    sp__table_free(t);
    sp__model_fini(&m);
    sp_result_release(r);

    r = sp__result_new();
    add_thread(r, 1, ev2, N(ev2));
    CHECK_OK(sp__model_build(&m, r));
    CHECK_EQ(0, m.T);
    t = NULL;
    CHECK_OK(sp__summary_distributed(&m, &o, &t));
    CHECK(t != NULL);
    if (t)
        check_render(t, DIST_TITLE "Time unit: ns\n" DIST_SEP DIST_HEAD DIST_SEP
                     "  Communication            0.00                       0.00                       \n"
                     DIST_ZERO DIST_TAIL);
    sp__table_free(t);
    sp__model_fini(&m);
    sp_result_release(r);
}

/* ---- Kernel ---- */

/* No device records, so no kernel items: Paddle prints nothing. */
static void test_summary_kernel_absent(void)
{
    sp_result *r = comm_result();
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    sp__summary_opts o = opts("ms");
    sp__table *t = (sp__table *)&m;
    CHECK_OK(sp__summary_kernel(&m, &o, &t));
    CHECK(t == NULL);
    sp__model_fini(&m);
    sp_result_release(r);
}

/* ---- out of memory ---- */

/* Fails each allocation of fn in turn: -1 with *out NULL, or 0 with the
 * same text as without failures. */
static void check_alloc_failures(sp__table_fn fn, const sp__model *m)
{
    sp__summary_opts o = opts("ms");
    sp__table *want = NULL;
    sp__alloc_fail_at(0);
    CHECK_OK(fn(m, &o, &want));
    uint64_t made = sp__alloc_fail_at(0);
    CHECK(want != NULL && made > 0);
    sp__buf wb;
    sp__buf_init(&wb);
    sp__table_render(want, &wb);
    int failures = 0;
    for (uint64_t k = 1; k <= made + 1; k++) {
        sp__table *t = NULL;
        sp__alloc_fail_at(k);
        int rc = fn(m, &o, &t);
        sp__alloc_fail_at(0);
        if (rc == 0) {
            CHECK(t != NULL);
            if (t) check_render(t, sp__buf_cstr(&wb));
        } else {
            CHECK_EQ(-1, rc);
            CHECK(t == NULL);
            failures++;
        }
        sp__table_free(t);
    }
    CHECK(failures > 0);
    sp__buf_fini(&wb);
    sp__table_free(want);
}

static void test_summary_device_alloc_failure(void)
{
    sp_result *r = comm_result();
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    check_alloc_failures(sp__summary_device, &m);
    sp__model_fini(&m);
    sp_result_release(r);
}

static void test_summary_distributed_alloc_failure(void)
{
    sp_result *r = comm_result();
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    check_alloc_failures(sp__summary_distributed, &m);
    sp__model_fini(&m);
    sp_result_release(r);
}

int main(void)
{
    RUN_TEST(test_summary_device_cpu_rows);
    RUN_TEST(test_summary_device_non_finite_and_null_result);
    RUN_TEST(test_summary_distributed_cpu_comm_merged);
    RUN_TEST(test_summary_distributed_allreduce_with_step);
    RUN_TEST(test_summary_distributed_time_unit_us);
    RUN_TEST(test_summary_distributed_absent_without_communication);
    RUN_TEST(test_summary_distributed_without_profile_step);
    RUN_TEST(test_summary_distributed_zero_length_events);
    RUN_TEST(test_summary_kernel_absent);
    RUN_TEST(test_summary_device_alloc_failure);
    RUN_TEST(test_summary_distributed_alloc_failure);
    return TEST_SUMMARY();
}
