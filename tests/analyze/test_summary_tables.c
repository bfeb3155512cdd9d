/* test_summary_tables.c: golden tests of the Operator, UserDefined and
 * Memory Manipulation summaries (table_operator.c, table_userdefined.c,
 * table_memcpy.c). Each test builds a result by hand, like the collector
 * does (events, then sp__tree_build), builds the model, renders the table
 * and compares the WHOLE text. Every number is worked out in the comment
 * beside the data; the padding follows §6.0 (Name 52, Calls 6, the two
 * descriptive columns 40, FLOPs 10; L = 54 + 8 + 42 + 42 + 12 - 2 = 156). */
#include "check.h"
#include "collect.h"
#include "fixture.h"
#include "sys.h"

#include "model.h"
#include "summary.h"

#include <stdint.h>
#include <string.h>

typedef fixture_range ev_spec; /* {name, type, start_ns, end_ns} */

#define OP SP_EVENT_OPERATOR
#define OI SP_EVENT_OPERATOR_INNER
#define PS SP_EVENT_PROFILE_STEP
#define UD SP_EVENT_USER_DEFINED
#define PUD SP_EVENT_PYTHON_USER_DEFINED
#define N(a) (sizeof(a) / sizeof(a)[0])

/* Appends a thread (tids must come ascending) and builds its nesting, as the
 * collector does. */
static void add_thread(sp_result *r, uint64_t tid, const ev_spec *ev, size_t n)
{
    fixture_add_thread(r, tid, "thread", ev, n);
}

/* Renders table fn of result r with the given options and compares it with
 * expected (NULL: the table must not be printed). No output may hold "nan"
 * or "inf". */
static void check_table(sp__table_fn fn, const sp_result *r, int sorted_by, int op_detail,
                        int thread_sep, const char *unit, const char *expected)
{
    sp__model m;
    sp__summary_opts o = {sorted_by, op_detail, thread_sep, unit};
    sp__table *t = (sp__table *)1;
    CHECK_OK(sp__model_build(&m, r));
    CHECK_EQ(0, fn(&m, &o, &t));
    if (!expected) {
        CHECK(t == NULL);
    } else {
        CHECK(t != NULL);
        sp__buf b;
        sp__buf_init(&b);
        sp__table_render(t, &b);
        CHECK_STR_EQ(expected, sp__buf_cstr(&b));
        CHECK(strstr(sp__buf_cstr(&b), "nan") == NULL);
        CHECK(strstr(sp__buf_cstr(&b), "inf") == NULL);
        sp__buf_fini(&b);
    }
    if (t != (sp__table *)1) sp__table_free(t);
    sp__model_fini(&m);
}

/* ---- Operator Summary ---- */

/* step [0,10000] > matmul [1000,4000] > (prepare [1000,1500],
 * compute [1500,3500], add (an Operator) [3500,4000]); matmul [5000,6000] >
 * compute [5000,5800]; relu [7000,7000] (zero length).
 * First-seen (§5.4, last-starting child first): relu, matmul#2 (with its
 * child compute), matmul#1 (children prepare, compute, add), then add:
 * op items relu, matmul, add; matmul's inner items compute, prepare.
 * matmul: 2 calls, 3000 + 1000 = 4000, max 3000, min 1000.
 * add: 1 call, 500 (a nested op is an item, not an inner row).
 * relu: 1 call, 0.  Group CPU sum 4500.
 * Ratios: matmul 4000/4500 = 88.89, add 500/4500 = 11.11, relu 0.
 * Inner compute: 2 calls, 2000 + 800 = 2800, max 2000, min 800;
 * ratio 2800/4000 = 70.00. prepare: 500, ratio 500/4000 = 12.50.
 * GPU all 0: ratio denominators 0 -> 0.00. In "us": ns / 1000. */
static const ev_spec nested[] = {
    {"step", PS, 0, 10000},
    {"matmul", OP, 1000, 4000},
    {"matmul::prepare", OI, 1000, 1500},
    {"matmul::compute", OI, 1500, 3500},
    {"add", OP, 3500, 4000},
    {"matmul", OP, 5000, 6000},
    {"matmul::compute", OI, 5000, 5800},
    {"relu", OP, 7000, 7000},
};

static void test_summary_operator_nested_detail_us(void)
{
    sp_result *r = sp__result_new();
    add_thread(r, 1, nested, N(nested));
    check_table(sp__summary_operator, r, SP__SORT_CPU_TOTAL, 1, 0, "us",
    "----------------------------------------------------------------------Operator Summary----------------------------------------------------------------------\n"
    "Time unit: us\n"
    "----------------------------------------------------  ------  ----------------------------------------  ----------------------------------------  ----------  \n"
    "Name                                                  Calls   CPU Total / Avg / Max / Min / Ratio(%)    GPU Total / Avg / Max / Min / Ratio(%)    FLOPs       \n"
    "----------------------------------------------------  ------  ----------------------------------------  ----------------------------------------  ----------  \n"
    "-----------------------------------------------------------------Thread: All threads merged-----------------------------------------------------------------\n"
    "matmul                                                2       4.00 / 2.00 / 3.00 / 1.00 / 88.89         0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "  matmul::compute                                     2       2.80 / 1.40 / 2.00 / 0.80 / 70.00         0.00 / 0.00 / 0.00 / 0.00 / 0.00          -           \n"
    "  matmul::prepare                                     1       0.50 / 0.50 / 0.50 / 0.50 / 12.50         0.00 / 0.00 / 0.00 / 0.00 / 0.00          -           \n"
    "add                                                   1       0.50 / 0.50 / 0.50 / 0.50 / 11.11         0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "relu                                                  1       0.00 / 0.00 / 0.00 / 0.00 / 0.00          0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "----------------------------------------------------  ------  ----------------------------------------  ----------------------------------------  ----------  \n"
    "\n"
    "\n");
    sp_result_release(r);
}

/* Same result, op_detail off, in ns: no inner rows. */
static void test_summary_operator_no_detail_ns(void)
{
    sp_result *r = sp__result_new();
    add_thread(r, 1, nested, N(nested));
    check_table(sp__summary_operator, r, SP__SORT_CPU_TOTAL, 0, 0, "ns",
    "------------------------------------------------------------------------Operator Summary-------------------------------------------------------------------------\n"
    "Time unit: ns\n"
    "----------------------------------------------------  ------  ---------------------------------------------  ----------------------------------------  ----------  \n"
    "Name                                                  Calls   CPU Total / Avg / Max / Min / Ratio(%)         GPU Total / Avg / Max / Min / Ratio(%)    FLOPs       \n"
    "----------------------------------------------------  ------  ---------------------------------------------  ----------------------------------------  ----------  \n"
    "-------------------------------------------------------------------Thread: All threads merged--------------------------------------------------------------------\n"
    "matmul                                                2       4000.00 / 2000.00 / 3000.00 / 1000.00 / 88.89  0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "add                                                   1       500.00 / 500.00 / 500.00 / 500.00 / 11.11      0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "relu                                                  1       0.00 / 0.00 / 0.00 / 0.00 / 0.00               0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "----------------------------------------------------  ------  ---------------------------------------------  ----------------------------------------  ----------  \n"
    "\n"
    "\n");
    sp_result_release(r);
}

/* Thread 3: step [0,2000] > conv [100,400] (300), relu [500,600] (100),
 * add x4 [700,790] [800,890] [900,990] [1000,1090] (90 each).
 * Thread 5 (no step): conv [0,20] (20), pool [300,500] (200), both roots.
 * Merged items (first-seen: add, relu, conv, pool):
 *   add  4 calls, 360, avg 90,  max 90,  min 90
 *   conv 2 calls, 320, avg 160, max 300, min 20
 *   pool 1 call,  200
 *   relu 1 call,  100          sum 980
 * Ratios: 360/980 = 36.73, 320/980 = 32.65, 200/980 = 20.41, 100/980 = 10.20.
 * Orders: total add conv pool relu; avg pool(200) conv(160) relu add(90);
 * max conv(300) pool relu add; min (asc) conv(20) add(90) relu pool. */
static const ev_spec t3[] = {
    {"step", PS, 0, 2000},   {"conv", OP, 100, 400},  {"relu", OP, 500, 600},
    {"add", OP, 700, 790},   {"add", OP, 800, 890},   {"add", OP, 900, 990},
    {"add", OP, 1000, 1090},
};
static const ev_spec t5[] = {{"conv", OP, 0, 20}, {"pool", OP, 300, 500}};

static sp_result *two_threads(void)
{
    sp_result *r = sp__result_new();
    add_thread(r, 3, t3, N(t3));
    add_thread(r, 5, t5, N(t5));
    return r;
}

static void test_summary_operator_sorted_cpu_total(void)
{
    sp_result *r = two_threads();
    check_table(sp__summary_operator, r, SP__SORT_CPU_TOTAL, 1, 0, "ns",
    "----------------------------------------------------------------------Operator Summary-----------------------------------------------------------------------\n"
    "Time unit: ns\n"
    "----------------------------------------------------  ------  -----------------------------------------  ----------------------------------------  ----------  \n"
    "Name                                                  Calls   CPU Total / Avg / Max / Min / Ratio(%)     GPU Total / Avg / Max / Min / Ratio(%)    FLOPs       \n"
    "----------------------------------------------------  ------  -----------------------------------------  ----------------------------------------  ----------  \n"
    "-----------------------------------------------------------------Thread: All threads merged------------------------------------------------------------------\n"
    "add                                                   4       360.00 / 90.00 / 90.00 / 90.00 / 36.73     0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "conv                                                  2       320.00 / 160.00 / 300.00 / 20.00 / 32.65   0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "pool                                                  1       200.00 / 200.00 / 200.00 / 200.00 / 20.41  0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "relu                                                  1       100.00 / 100.00 / 100.00 / 100.00 / 10.20  0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "----------------------------------------------------  ------  -----------------------------------------  ----------------------------------------  ----------  \n"
    "\n"
    "\n");
    sp_result_release(r);
}

static void test_summary_operator_sorted_cpu_avg(void)
{
    sp_result *r = two_threads();
    check_table(sp__summary_operator, r, SP__SORT_CPU_AVG, 1, 0, "ns",
    "----------------------------------------------------------------------Operator Summary-----------------------------------------------------------------------\n"
    "Time unit: ns\n"
    "----------------------------------------------------  ------  -----------------------------------------  ----------------------------------------  ----------  \n"
    "Name                                                  Calls   CPU Total / Avg / Max / Min / Ratio(%)     GPU Total / Avg / Max / Min / Ratio(%)    FLOPs       \n"
    "----------------------------------------------------  ------  -----------------------------------------  ----------------------------------------  ----------  \n"
    "-----------------------------------------------------------------Thread: All threads merged------------------------------------------------------------------\n"
    "pool                                                  1       200.00 / 200.00 / 200.00 / 200.00 / 20.41  0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "conv                                                  2       320.00 / 160.00 / 300.00 / 20.00 / 32.65   0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "relu                                                  1       100.00 / 100.00 / 100.00 / 100.00 / 10.20  0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "add                                                   4       360.00 / 90.00 / 90.00 / 90.00 / 36.73     0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "----------------------------------------------------  ------  -----------------------------------------  ----------------------------------------  ----------  \n"
    "\n"
    "\n");
    sp_result_release(r);
}

static void test_summary_operator_sorted_cpu_max(void)
{
    sp_result *r = two_threads();
    check_table(sp__summary_operator, r, SP__SORT_CPU_MAX, 1, 0, "ns",
    "----------------------------------------------------------------------Operator Summary-----------------------------------------------------------------------\n"
    "Time unit: ns\n"
    "----------------------------------------------------  ------  -----------------------------------------  ----------------------------------------  ----------  \n"
    "Name                                                  Calls   CPU Total / Avg / Max / Min / Ratio(%)     GPU Total / Avg / Max / Min / Ratio(%)    FLOPs       \n"
    "----------------------------------------------------  ------  -----------------------------------------  ----------------------------------------  ----------  \n"
    "-----------------------------------------------------------------Thread: All threads merged------------------------------------------------------------------\n"
    "conv                                                  2       320.00 / 160.00 / 300.00 / 20.00 / 32.65   0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "pool                                                  1       200.00 / 200.00 / 200.00 / 200.00 / 20.41  0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "relu                                                  1       100.00 / 100.00 / 100.00 / 100.00 / 10.20  0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "add                                                   4       360.00 / 90.00 / 90.00 / 90.00 / 36.73     0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "----------------------------------------------------  ------  -----------------------------------------  ----------------------------------------  ----------  \n"
    "\n"
    "\n");
    sp_result_release(r);
}

static void test_summary_operator_sorted_cpu_min(void)
{
    sp_result *r = two_threads();
    check_table(sp__summary_operator, r, SP__SORT_CPU_MIN, 1, 0, "ns",
    "----------------------------------------------------------------------Operator Summary-----------------------------------------------------------------------\n"
    "Time unit: ns\n"
    "----------------------------------------------------  ------  -----------------------------------------  ----------------------------------------  ----------  \n"
    "Name                                                  Calls   CPU Total / Avg / Max / Min / Ratio(%)     GPU Total / Avg / Max / Min / Ratio(%)    FLOPs       \n"
    "----------------------------------------------------  ------  -----------------------------------------  ----------------------------------------  ----------  \n"
    "-----------------------------------------------------------------Thread: All threads merged------------------------------------------------------------------\n"
    "conv                                                  2       320.00 / 160.00 / 300.00 / 20.00 / 32.65   0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "add                                                   4       360.00 / 90.00 / 90.00 / 90.00 / 36.73     0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "relu                                                  1       100.00 / 100.00 / 100.00 / 100.00 / 10.20  0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "pool                                                  1       200.00 / 200.00 / 200.00 / 200.00 / 20.41  0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "----------------------------------------------------  ------  -----------------------------------------  ----------------------------------------  ----------  \n"
    "\n"
    "\n");
    sp_result_release(r);
}

/* GPU keys: every ggpu is 0, so every key ties and the stable sort keeps
 * first-seen order (add, relu, conv, pool) for all four. */
static void test_summary_operator_sorted_gpu_keys_stable(void)
{
    static const int keys[] = {SP__SORT_GPU_TOTAL, SP__SORT_GPU_AVG, SP__SORT_GPU_MAX,
                               SP__SORT_GPU_MIN};
    for (size_t k = 0; k < N(keys); k++) {
        sp_result *r = two_threads();
        check_table(sp__summary_operator, r, keys[k], 0, 0, "ns",
    "----------------------------------------------------------------------Operator Summary-----------------------------------------------------------------------\n"
    "Time unit: ns\n"
    "----------------------------------------------------  ------  -----------------------------------------  ----------------------------------------  ----------  \n"
    "Name                                                  Calls   CPU Total / Avg / Max / Min / Ratio(%)     GPU Total / Avg / Max / Min / Ratio(%)    FLOPs       \n"
    "----------------------------------------------------  ------  -----------------------------------------  ----------------------------------------  ----------  \n"
    "-----------------------------------------------------------------Thread: All threads merged------------------------------------------------------------------\n"
    "add                                                   4       360.00 / 90.00 / 90.00 / 90.00 / 36.73     0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "relu                                                  1       100.00 / 100.00 / 100.00 / 100.00 / 10.20  0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "conv                                                  2       320.00 / 160.00 / 300.00 / 20.00 / 32.65   0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "pool                                                  1       200.00 / 200.00 / 200.00 / 200.00 / 20.41  0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "----------------------------------------------------  ------  -----------------------------------------  ----------------------------------------  ----------  \n"
    "\n"
    "\n");
        sp_result_release(r);
    }
}

/* thread_sep: groups per thread, ascending tid, each with its own sums.
 * Thread 3: add 360, conv 300, relu 100, sum 760: 47.37, 39.47, 13.16.
 * Thread 5 (first-seen pool, conv): pool 200, conv 20, sum 220: 90.91, 9.09. */
static void test_summary_operator_thread_sep(void)
{
    sp_result *r = two_threads();
    check_table(sp__summary_operator, r, SP__SORT_CPU_TOTAL, 1, 1, "ns",
    "----------------------------------------------------------------------Operator Summary-----------------------------------------------------------------------\n"
    "Time unit: ns\n"
    "----------------------------------------------------  ------  -----------------------------------------  ----------------------------------------  ----------  \n"
    "Name                                                  Calls   CPU Total / Avg / Max / Min / Ratio(%)     GPU Total / Avg / Max / Min / Ratio(%)    FLOPs       \n"
    "----------------------------------------------------  ------  -----------------------------------------  ----------------------------------------  ----------  \n"
    "--------------------------------------------------------------------------Thread: 3--------------------------------------------------------------------------\n"
    "add                                                   4       360.00 / 90.00 / 90.00 / 90.00 / 47.37     0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "conv                                                  1       300.00 / 300.00 / 300.00 / 300.00 / 39.47  0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "relu                                                  1       100.00 / 100.00 / 100.00 / 100.00 / 13.16  0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "--------------------------------------------------------------------------Thread: 5--------------------------------------------------------------------------\n"
    "pool                                                  1       200.00 / 200.00 / 200.00 / 200.00 / 90.91  0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "conv                                                  1       20.00 / 20.00 / 20.00 / 20.00 / 9.09       0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "----------------------------------------------------  ------  -----------------------------------------  ----------------------------------------  ----------  \n"
    "\n"
    "\n");
    sp_result_release(r);
}

/* op [0,10000] (an op name of 58 chars: cut to 49 + "..." like every name,
 * issue 17; it used to overflow and shift the row) > inner A
 * [0,2000] named "abcdefghij" x 6 (60 chars: 2 + 60 > 52, so the first 47 +
 * "...") and a UserDefined B [2000,5000] of 50 chars (2 + 50 = 52 fits).
 * In ms: 10000 ns = 0.01, 2000 ns = 0.002 -> 0.00; ratios 20.00 and 30.00,
 * op 100.00. */
static void test_summary_operator_long_names_cut(void)
{
    static const ev_spec ev[] = {
        {"op_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", OP, 0, 10000},
        {"abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij", OI, 0, 2000},
        {"BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB", UD, 2000, 5000},
    };
    sp_result *r = sp__result_new();
    add_thread(r, 1, ev, N(ev));
    check_table(sp__summary_operator, r, SP__SORT_CPU_TOTAL, 1, 0, "ms",
    "----------------------------------------------------------------------Operator Summary----------------------------------------------------------------------\n"
    "Time unit: ms\n"
    "----------------------------------------------------  ------  ----------------------------------------  ----------------------------------------  ----------  \n"
    "Name                                                  Calls   CPU Total / Avg / Max / Min / Ratio(%)    GPU Total / Avg / Max / Min / Ratio(%)    FLOPs       \n"
    "----------------------------------------------------  ------  ----------------------------------------  ----------------------------------------  ----------  \n"
    "-----------------------------------------------------------------Thread: All threads merged-----------------------------------------------------------------\n"
    "op_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...  1       0.01 / 0.01 / 0.01 / 0.01 / 100.00        0.00 / 0.00 / 0.00 / 0.00 / 0.00          0           \n"
    "  abcdefghijabcdefghijabcdefghijabcdefghijabcdefg...  1       0.00 / 0.00 / 0.00 / 0.00 / 20.00         0.00 / 0.00 / 0.00 / 0.00 / 0.00          -           \n"
    "  BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB  1       0.00 / 0.00 / 0.00 / 0.00 / 30.00         0.00 / 0.00 / 0.00 / 0.00 / 0.00          -           \n"
    "----------------------------------------------------  ------  ----------------------------------------  ----------------------------------------  ----------  \n"
    "\n"
    "\n");
    sp_result_release(r);
}

/* No Operator node (only a step and a user range): no table; an empty
 * result too. */
static void test_summary_operator_none_is_null(void)
{
    static const ev_spec ev[] = {{"step", PS, 0, 100}, {"mine", PUD, 10, 20}};
    sp_result *r = sp__result_new();
    add_thread(r, 1, ev, N(ev));
    check_table(sp__summary_operator, r, SP__SORT_CPU_TOTAL, 1, 0, "ms", NULL);
    sp_result_release(r);
    r = sp__result_new();
    check_table(sp__summary_operator, r, SP__SORT_CPU_TOTAL, 1, 1, "ms", NULL);
    sp_result_release(r);
}

/* Every allocation of the table function fails in turn: -1 and NULL, never
 * a leak (sanitizer build), until enough succeed. */
static void test_summary_operator_oom(void)
{
    sp_result *r = two_threads();
    sp__model m;
    sp__summary_opts o = {SP__SORT_CPU_TOTAL, 1, 1, "ms"};
    CHECK_OK(sp__model_build(&m, r));
    for (uint64_t nth = 1; nth < 200; nth++) {
        sp__table *t = NULL;
        sp__alloc_fail_at(nth);
        int rc = sp__summary_operator(&m, &o, &t);
        sp__alloc_fail_at(0);
        if (rc == 0) {
            CHECK(t != NULL);
            sp__table_free(t);
            break;
        }
        CHECK_EQ(-1, rc);
        CHECK(t == NULL);
    }
    sp__model_fini(&m);
    sp_result_release(r);
}

/* ---- UserDefined Summary ---- */

/* Thread 1: step [0,10000] > load [0,3000], memcpy_async [3000,4000]
 * (a memory manipulation name: not here), load [5000,6000], internal
 * [6000,7000] (type UserDefined: listed too since issue 17, as paddle 2.x
 * lists both user types). Thread 2: save [0,500], a root. T =
 * CPUSum[ProfileStep] = 10000.
 * load: 2 calls, 3000 + 1000 = 4000, avg 2000, max 3000, min 1000,
 * ratio 4000/10000 = 40.00; internal: 1000, 10.00; save: 500, 500/10000 =
 * 5.00. In us. GPU: ggpu 0 over ProfileStep ggpu 0 -> 0.00.
 * Name column = longest name = 8 ("internal"). No closing separator
 * (paddle prints none). */
static sp_result *ud_result(void)
{
    static const ev_spec a[] = {
        {"step", PS, 0, 10000},          {"load", PUD, 0, 3000},
        {"memcpy_async", PUD, 3000, 4000}, {"load", PUD, 5000, 6000},
        {"internal", UD, 6000, 7000},
    };
    static const ev_spec b[] = {{"save", PUD, 0, 500}};
    sp_result *r = sp__result_new();
    add_thread(r, 1, a, N(a));
    add_thread(r, 2, b, N(b));
    return r;
}

static void test_summary_userdefined_merged_cpu_total(void)
{
    sp_result *r = ud_result();
    check_table(sp__summary_userdefined, r, SP__SORT_CPU_TOTAL, 1, 0, "us",
    "----------------------------------------UserDefined Summary-----------------------------------------\n"
    "Time unit: us\n"
    "--------  ------  ----------------------------------------  ----------------------------------------  \n"
    "Name      Calls   CPU Total / Avg / Max / Min / Ratio(%)    GPU Total / Avg / Max / Min / Ratio(%)    \n"
    "--------  ------  ----------------------------------------  ----------------------------------------  \n"
    "-------------------------------------Thread: All threads merged-------------------------------------\n"
    "load      2       4.00 / 2.00 / 3.00 / 1.00 / 40.00         0.00 / 0.00 / 0.00 / 0.00 / 0.00          \n"
    "internal  1       1.00 / 1.00 / 1.00 / 1.00 / 10.00         0.00 / 0.00 / 0.00 / 0.00 / 0.00          \n"
    "save      1       0.50 / 0.50 / 0.50 / 0.50 / 5.00          0.00 / 0.00 / 0.00 / 0.00 / 0.00          \n"
    "\n"
    "\n");
    sp_result_release(r);
}

/* CPUMin ascending: save (500) before load (1000). */
static void test_summary_userdefined_sorted_cpu_min(void)
{
    sp_result *r = ud_result();
    check_table(sp__summary_userdefined, r, SP__SORT_CPU_MIN, 1, 0, "us",
    "----------------------------------------UserDefined Summary-----------------------------------------\n"
    "Time unit: us\n"
    "--------  ------  ----------------------------------------  ----------------------------------------  \n"
    "Name      Calls   CPU Total / Avg / Max / Min / Ratio(%)    GPU Total / Avg / Max / Min / Ratio(%)    \n"
    "--------  ------  ----------------------------------------  ----------------------------------------  \n"
    "-------------------------------------Thread: All threads merged-------------------------------------\n"
    "save      1       0.50 / 0.50 / 0.50 / 0.50 / 5.00          0.00 / 0.00 / 0.00 / 0.00 / 0.00          \n"
    "internal  1       1.00 / 1.00 / 1.00 / 1.00 / 10.00         0.00 / 0.00 / 0.00 / 0.00 / 0.00          \n"
    "load      2       4.00 / 2.00 / 3.00 / 1.00 / 40.00         0.00 / 0.00 / 0.00 / 0.00 / 0.00          \n"
    "\n"
    "\n");
    sp_result_release(r);
}

/* thread_sep: "Thread: 1" has load, "Thread: 2" has save; ratios stay
 * relative to T. */
static void test_summary_userdefined_thread_sep(void)
{
    sp_result *r = ud_result();
    check_table(sp__summary_userdefined, r, SP__SORT_CPU_TOTAL, 1, 1, "us",
    "----------------------------------------UserDefined Summary-----------------------------------------\n"
    "Time unit: us\n"
    "--------  ------  ----------------------------------------  ----------------------------------------  \n"
    "Name      Calls   CPU Total / Avg / Max / Min / Ratio(%)    GPU Total / Avg / Max / Min / Ratio(%)    \n"
    "--------  ------  ----------------------------------------  ----------------------------------------  \n"
    "---------------------------------------------Thread: 1----------------------------------------------\n"
    "load      2       4.00 / 2.00 / 3.00 / 1.00 / 40.00         0.00 / 0.00 / 0.00 / 0.00 / 0.00          \n"
    "internal  1       1.00 / 1.00 / 1.00 / 1.00 / 10.00         0.00 / 0.00 / 0.00 / 0.00 / 0.00          \n"
    "---------------------------------------------Thread: 2----------------------------------------------\n"
    "save      1       0.50 / 0.50 / 0.50 / 0.50 / 5.00          0.00 / 0.00 / 0.00 / 0.00 / 0.00          \n"
    "\n"
    "\n");
    sp_result_release(r);
}

/* No ProfileStep and a zero-length range: T falls back to the span wall
 * time (span_start = span_end = 0 here, then latest end - earliest start =
 * 0), so every denominator is 0 and every ratio 0.00, never nan. The GPU
 * denominator falls back to the roots' ggpu (0). */
static void test_summary_userdefined_no_step_zero_length(void)
{
    static const ev_spec ev[] = {{"mine", PUD, 50, 50}};
    sp_result *r = sp__result_new();
    add_thread(r, 1, ev, N(ev));
    check_table(sp__summary_userdefined, r, SP__SORT_CPU_AVG, 1, 0, "ns",
    "--------------------------------------UserDefined Summary---------------------------------------\n"
    "Time unit: ns\n"
    "----  ------  ----------------------------------------  ----------------------------------------  \n"
    "Name  Calls   CPU Total / Avg / Max / Min / Ratio(%)    GPU Total / Avg / Max / Min / Ratio(%)    \n"
    "----  ------  ----------------------------------------  ----------------------------------------  \n"
    "-----------------------------------Thread: All threads merged-----------------------------------\n"
    "mine  1       0.00 / 0.00 / 0.00 / 0.00 / 0.00          0.00 / 0.00 / 0.00 / 0.00 / 0.00          \n"
    "\n"
    "\n");
    sp_result_release(r);
}

/* Only memory manipulation names (of both user types) and ops: no table.
 * (Type-7 ranges with other names are listed since issue 17:
 * test_summary_robust.c.) */
static void test_summary_userdefined_none_is_null(void)
{
    static const ev_spec ev[] = {
        {"step", PS, 0, 100}, {"MemSet_x", PUD, 0, 10}, {"memcpy_internal", UD, 20, 30}, {"op", OP, 40, 50}};
    sp_result *r = sp__result_new();
    add_thread(r, 1, ev, N(ev));
    check_table(sp__summary_userdefined, r, SP__SORT_CPU_TOTAL, 1, 0, "ms", NULL);
    sp_result_release(r);
}

/* ---- Memory Manipulation Summary ---- */

/* The UserDefined result: memcpy_async [3000,4000] lands here (and not in
 * the UserDefined table above): 1 call, 1000 ns = 1.00 us, ratio
 * 1000 / T 10000 = 10.00; GPU 0 / 0 -> 0.00. Name column 12 wide. */
static void test_summary_memory_manipulation_memcpy_async(void)
{
    sp_result *r = ud_result();
    check_table(sp__summary_memory_manipulation, r, SP__SORT_CPU_TOTAL, 1, 0, "us",
    "--------------------------------------Memory Manipulation Summary---------------------------------------\n"
    "Time unit: us\n"
    "------------  ------  ----------------------------------------  ----------------------------------------  \n"
    "Name          Calls   CPU Total / Avg / Max / Min / Ratio(%)    GPU Total / Avg / Max / Min / Ratio(%)    \n"
    "------------  ------  ----------------------------------------  ----------------------------------------  \n"
    "memcpy_async  1       1.00 / 1.00 / 1.00 / 1.00 / 10.00         0.00 / 0.00 / 0.00 / 0.00 / 0.00          \n"
    "------------  ------  ----------------------------------------  ----------------------------------------  \n"
    "\n"
    "\n");
    sp_result_release(r);
    r = two_threads(); /* no memory names: no table */
    check_table(sp__summary_memory_manipulation, r, SP__SORT_CPU_TOTAL, 1, 0, "us", NULL);
    sp_result_release(r);
}

int main(void)
{
    RUN_TEST(test_summary_operator_nested_detail_us);
    RUN_TEST(test_summary_operator_no_detail_ns);
    RUN_TEST(test_summary_operator_sorted_cpu_total);
    RUN_TEST(test_summary_operator_sorted_cpu_avg);
    RUN_TEST(test_summary_operator_sorted_cpu_max);
    RUN_TEST(test_summary_operator_sorted_cpu_min);
    RUN_TEST(test_summary_operator_sorted_gpu_keys_stable);
    RUN_TEST(test_summary_operator_thread_sep);
    RUN_TEST(test_summary_operator_long_names_cut);
    RUN_TEST(test_summary_operator_none_is_null);
    RUN_TEST(test_summary_operator_oom);
    RUN_TEST(test_summary_userdefined_merged_cpu_total);
    RUN_TEST(test_summary_userdefined_sorted_cpu_min);
    RUN_TEST(test_summary_userdefined_thread_sep);
    RUN_TEST(test_summary_userdefined_no_step_zero_length);
    RUN_TEST(test_summary_userdefined_none_is_null);
    RUN_TEST(test_summary_memory_manipulation_memcpy_async);
    return TEST_SUMMARY();
}
