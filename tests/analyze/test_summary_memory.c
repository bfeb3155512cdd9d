/* test_summary_memory.c: the Memory Summary of semantics.md §6.9 on
 * hand-built results with synthetic memory events. `host` is set by hand
 * after fixture_add_mem (the event index of the innermost host range, -1 =
 * thread root), so the tests do not depend on sp__attribute. Whole tables
 * are compared with tests/golden/memory_*.txt (SP_UPDATE_GOLDEN=1 rewrites
 * them); every number in them is worked out by hand below.
 *
 * Layout: columns 50, 12 and 5 x 15 (never growing), so
 * L = 52 + 14 + 5 * 17 - 2 = 149; "Memory Summary - Place(cpu)" (27 chars)
 * gets (149 - 27) / 2 = 61 dashes each side, "Memory Summary - Place(gpu:0)"
 * (29) 60 each side. "Allocation Count" has 16 chars and overflows its
 * 15-wide column by one (as Paddle's "{:<15}" does), so header lines are one
 * character longer than the separators. */
#include "fixture.h"

#include "summary.h"

#define US 1000ll

static char *render(const sp__table *t)
{
    static char text[1 << 16];
    sp__buf b;
    sp__buf_init(&b);
    sp__table_render(t, &b);
    CHECK_EQ(0, b.failed);
    snprintf(text, sizeof text, "%s", sp__buf_cstr(&b));
    sp__buf_fini(&b);
    return text;
}

/* Adds a memory event to thread 0 and attributes it to event `host`. */
static void mem(sp_result *r, int64_t ts_us, int type, const char *place, int64_t bytes,
                uint64_t cur_alloc, uint64_t cur_res, uint64_t peak_alloc, uint64_t peak_res,
                int32_t host)
{
    sp__thread *t = &r->threads[0];
    fixture_add_mem(r, t, ts_us * US, type, place, 0x1000 + t->mem_count, bytes, cur_alloc,
                    cur_res, peak_alloc, peak_res);
    if (t->mem_count) t->mems[t->mem_count - 1].host = host;
}

static sp__table *memory_table(const sp_result *r)
{
    sp__model m;
    sp__summary_opts o = {SP__SORT_CPU_TOTAL, 1, 0, "us"};
    sp__table *t = NULL;
    CHECK_OK(sp__model_build(&m, r));
    CHECK_OK(sp__summary_memory(&m, &o, &t));
    sp__model_fini(&m);
    return t;
}

/* One place (cpu). Events (index: name, type, us):
 *   0 ProfileStep#0 ProfileStep   [0, 1000]
 *   1 matmul        Operator      [100, 400]
 *   2 infer_shape   OperatorInner [110, 150]   (child of matmul)
 *   3 compute       UserDefined   [200, 300]   (child of matmul)
 *   4 relu          Operator      [500, 600]
 *   5 data          UserDefined   [700, 900]
 *   6 read          UserDefined   [750, 800]   (child of data)
 * Records (ts: type bytes -> host; running allocated / its peak):
 *   105 Alloc  100 -> 1 (matmul)      100 / 100
 *   120 Alloc  200 -> 2 (infer_shape) 300 / 300
 *   250 Alloc   50 -> 3 (compute)     350 / 350
 *   260 Free   -50 -> 3 (compute)     300 / 350
 *   390 Free  -100 -> 1 (matmul)      200 / 350
 *   450 Alloc   30 -> 0 (step)        230 / 350
 *   550 Alloc  400 -> 4 (relu)        630 / 630
 *   720 Alloc   10 -> 5 (data)        640 / 640
 *   760 Alloc   20 -> 6 (read)        660 / 660   (peak reserved 1024 throughout)
 * Items (all Allocated):
 *   matmul: its children's (infer_shape 200; compute +50 / -50) and its own
 *     (+100 / -100): count 3, free count 2, size 350, free size 150, incr 200.
 *   compute: also under its own name (kept, §6.9): 1, 1, 50, 50, 0.
 *   infer_shape: OperatorInner, no item of its own.
 *   ProfileStep#0 (not an op): only its own 30, not its children's: 1, 0, 30, 0, 30.
 *   relu: 1, 0, 400, 0, 400.  data: only its own 10 (not read's 20).  read: 20.
 * Sorted by increase desc: relu 400, matmul 200, ProfileStep#0 30, read 20,
 * data 10, compute 0. Peaks: allocated 660, reserved 1024. */
static void test_summary_memory_operator_collects_children(void)
{
    static const fixture_range host[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 1000 * US},
        {"matmul", SP_EVENT_OPERATOR, 100 * US, 400 * US},
        {"infer_shape", SP_EVENT_OPERATOR_INNER, 110 * US, 150 * US},
        {"compute", SP_EVENT_USER_DEFINED, 200 * US, 300 * US},
        {"relu", SP_EVENT_OPERATOR, 500 * US, 600 * US},
        {"data", SP_EVENT_USER_DEFINED, 700 * US, 900 * US},
        {"read", SP_EVENT_USER_DEFINED, 750 * US, 800 * US},
    };
    const char *cpu = "Place(cpu)";
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "main", host, 7);
    mem(r, 105, 0, cpu, 100, 100, 1024, 100, 1024, 1);
    mem(r, 120, 0, cpu, 200, 300, 1024, 300, 1024, 2);
    mem(r, 250, 0, cpu, 50, 350, 1024, 350, 1024, 3);
    mem(r, 260, 1, cpu, -50, 300, 1024, 350, 1024, 3);
    mem(r, 390, 1, cpu, -100, 200, 1024, 350, 1024, 1);
    mem(r, 450, 0, cpu, 30, 230, 1024, 350, 1024, 0);
    mem(r, 550, 0, cpu, 400, 630, 1024, 630, 1024, 4);
    mem(r, 720, 0, cpu, 10, 640, 1024, 640, 1024, 5);
    mem(r, 760, 0, cpu, 20, 660, 1024, 660, 1024, 6);
    sp__table *t = memory_table(r);
    CHECK(t != NULL);
    if (t) {
        /* title, 2 texts, sep, header, sep: the first row is line 6. */
        CHECK_STR_EQ("relu", sp__table_cell(t, 6, 0));
        CHECK_STR_EQ("matmul", sp__table_cell(t, 7, 0));
        CHECK_STR_EQ("3", sp__table_cell(t, 7, 2));
        CHECK_STR_EQ("150", sp__table_cell(t, 7, 5));
        CHECK_STR_EQ("200", sp__table_cell(t, 7, 6));
        fixture_check_golden("memory_operator_children.txt", render(t));
    }
    sp__table_free(t);
    sp_result_release(r);
}

/* Two places with reserved events and records on the thread root.
 *   0 ProfileStep#0 ProfileStep [0, 1000]
 *   1 conv2d        Operator    [100, 500]
 *   2 conv2d grad   Operator    [600, 900]
 * Records (ts: place type bytes -> host; cur alloc, cur res, peak alloc, peak res):
 *   110 gpu:0 ResAlloc  2048 -> 1        0, 2048,    0, 2048
 *   120 gpu:0 Alloc     1000 -> 1     1000, 2048, 1000, 2048
 *   130 cpu   Alloc       64 -> 1       64,    0,   64,    0
 *   400 gpu:0 Free     -1000 -> 1        0, 2048, 1000, 2048
 *   610 gpu:0 Alloc     1500 -> 2     1500, 2048, 1500, 2048
 *   620 gpu:0 ResAlloc  1024 -> 2     1500, 3072, 1500, 3072
 *   880 gpu:0 ResFree  -2048 -> 2     1500, 1024, 1500, 3072
 *   890 cpu   Free       -64 -> 2        0,    0,   64,    0
 *  1100 gpu:0 Alloc     5000 -> root  6500, 8192, 6500, 8192
 *  1200 gpu_pinned Alloc   7 -> root     7,    0,    7,    0
 * Root records are not items (§6.9: non-root host nodes) and, since the root
 * is not visited, do not raise the peaks either: gpu:0 peaks stay
 * 1500 / 3072, and Place(gpu_pinned), with only a root record, is not printed.
 * Visit order (§5.4): ProfileStep#0, then conv2d grad (the last-starting
 * child first), then conv2d; so gpu:0 (conv2d grad's first record) is seen
 * before cpu and prints first although cpu's record comes earlier in time.
 * gpu:0 Allocated: conv2d grad 1, 0, 1500, 0, 1500; conv2d 1, 1, 1000, 1000, 0.
 * gpu:0 Reserved:  conv2d 1, 0, 2048, 0, 2048; conv2d grad 1, 1, 1024, 2048, -1024.
 * cpu Allocated:   conv2d 1, 0, 64, 0, 64; conv2d grad 0, 1, 0, 64, -64.
 * cpu peaks: 64 / 0. */
static sp_result *two_places_result(void)
{
    static const fixture_range host[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 1000 * US},
        {"conv2d", SP_EVENT_OPERATOR, 100 * US, 500 * US},
        {"conv2d grad", SP_EVENT_OPERATOR, 600 * US, 900 * US},
    };
    const char *gpu = "Place(gpu:0)", *cpu = "Place(cpu)";
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "main", host, 3);
    mem(r, 110, 2, gpu, 2048, 0, 2048, 0, 2048, 1);
    mem(r, 120, 0, gpu, 1000, 1000, 2048, 1000, 2048, 1);
    mem(r, 130, 0, cpu, 64, 64, 0, 64, 0, 1);
    mem(r, 400, 1, gpu, -1000, 0, 2048, 1000, 2048, 1);
    mem(r, 610, 0, gpu, 1500, 1500, 2048, 1500, 2048, 2);
    mem(r, 620, 2, gpu, 1024, 1500, 3072, 1500, 3072, 2);
    mem(r, 880, 3, gpu, -2048, 1500, 1024, 1500, 3072, 2);
    mem(r, 890, 1, cpu, -64, 0, 0, 64, 0, 2);
    mem(r, 1100, 0, gpu, 5000, 6500, 8192, 6500, 8192, -1);
    mem(r, 1200, 0, "Place(gpu_pinned)", 7, 7, 0, 7, 0, -1);
    return r;
}

static void test_summary_memory_two_places_reserved_root(void)
{
    sp_result *r = two_places_result();
    sp__table *t = memory_table(r);
    CHECK(t != NULL);
    if (t) {
        const char *text = render(t);
        const char *g = strstr(text, "Place(gpu:0)"), *c = strstr(text, "Place(cpu)");
        CHECK(strstr(text, "gpu_pinned") == NULL);
        CHECK(strstr(text, "6500") == NULL);
        CHECK(g != NULL && c != NULL && g < c);
        fixture_check_golden("memory_two_places.txt", text);
    }
    sp__table_free(t);
    sp_result_release(r);
}

/* Out of memory at every allocation the table makes: -1 and *out NULL, no
 * leak (the sanitizer build checks); once enough succeed, 0 and a table. */
static void test_summary_memory_out_of_memory(void)
{
    sp_result *r = two_places_result();
    sp__model m;
    sp__summary_opts o = {SP__SORT_CPU_TOTAL, 1, 0, "us"};
    CHECK_OK(sp__model_build(&m, r));
    sp__table *t = NULL;
    sp__alloc_fail_at(0);
    CHECK_OK(sp__summary_memory(&m, &o, &t));
    uint64_t made = sp__alloc_fail_at(0);
    sp__table_free(t);
    CHECK(made > 0);
    for (uint64_t k = 1; k <= made; k++) {
        t = (sp__table *)&m; /* must be overwritten */
        sp__alloc_fail_at(k);
        int rc = sp__summary_memory(&m, &o, &t);
        sp__alloc_fail_at(0);
        CHECK_EQ(-1, rc);
        CHECK(t == NULL);
    }
    sp__model_fini(&m);
    sp_result_release(r);
}

/* Only root records (host -1, and -2 = never attributed): no item, NULL. */
static void test_summary_memory_root_only_is_null(void)
{
    static const fixture_range host[] = {{"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 100 * US}};
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "main", host, 1);
    mem(r, 200, 0, "Place(cpu)", 8, 8, 0, 8, 0, -1);
    mem(r, 300, 1, "Place(cpu)", -8, 0, 0, 8, 0, -2);
    sp__table *t = memory_table(r);
    CHECK(t == NULL);
    sp__table_free(t);
    sp_result_release(r);
}

/* No memory events at all: NULL, status 0 (also for an empty result). */
static void test_summary_memory_no_events_is_null(void)
{
    static const fixture_range host[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 100 * US},
        {"matmul", SP_EVENT_OPERATOR, 10 * US, 20 * US},
    };
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "main", host, 2);
    sp__table *t = memory_table(r);
    CHECK(t == NULL);
    sp__table_free(t);
    sp_result_release(r);
    t = memory_table(NULL);
    CHECK(t == NULL);
    sp__table_free(t);
}

int main(void)
{
    RUN_TEST(test_summary_memory_operator_collects_children);
    RUN_TEST(test_summary_memory_two_places_reserved_root);
    RUN_TEST(test_summary_memory_out_of_memory);
    RUN_TEST(test_summary_memory_root_only_is_null);
    RUN_TEST(test_summary_memory_no_events_is_null);
    return TEST_SUMMARY();
}
