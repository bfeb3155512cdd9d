/* test_table_torch.c: the torch-style table (semantics.md §6.11) for
 * hand-built results, against reviewed golden files tests/golden/torch_*.txt.
 * The figures of each golden file are worked out by hand in the fixture's
 * comment (times in us unless marked; Name width = min(longest + 4, 55);
 * percentages of the summed self CPU). Also: sort key validation, the
 * device columns, and running out of memory. */
#include "fixture.h"
#include "table_torch.h"

#define US 1000ll
#define MS 1000000ll

/* Builds a one- or two-thread result, its model, and the table text. */
typedef struct built {
    sp_result *r;
    sp__model m;
    sp__buf text;
} built;

static void build(built *b, const fixture_range *t1, size_t n1, const fixture_range *t2,
                  size_t n2)
{
    b->r = sp__result_new();
    CHECK(b->r != NULL);
    b->r->span_start_ns = 0;
    b->r->span_end_ns = 2 * 1000 * MS;
    if (n1) fixture_add_thread(b->r, 100, "main", t1, n1);
    if (n2) fixture_add_thread(b->r, 200, "worker", t2, n2);
    CHECK_EQ(0, sp__model_build(&b->m, b->r));
    sp__buf_init(&b->text);
}

static const char *table(built *b, const char *sort_by, int row_limit)
{
    b->text.len = 0;
    CHECK_EQ(0, sp__torch_table(&b->m, sort_by, row_limit, &b->text));
    return sp__buf_cstr(&b->text);
}

static void done(built *b)
{
    sp__buf_fini(&b->text);
    sp__model_fini(&b->m);
    sp_result_release(b->r);
}

/* Nested operators, one thread:
 *   aten::linear [0,100]: aten::t [10,20], aten::addmm [20,90] (aten::copy_ [30,50])
 *   aten::linear [200,260]: aten::addmm [210,250]
 * self / total / avg / calls:
 *   aten::addmm  (70-20)+40 = 90 / 70+40 = 110 / 55 / 2
 *   aten::linear (100-10-70)+(60-40) = 40 / 160 / 80 / 2
 *   aten::copy_  20 / 20 / 20 / 1;   aten::t 10 / 10 / 10 / 1
 * Sum self = 160 (= the roots' 100 + 60). Self CPU %: 56.25, 25.00, 12.50,
 * 6.25; CPU total %: 68.75, 100.00, 12.50, 6.25. Name width 12 + 4 = 16. */
static const fixture_range nested[] = {
    {"aten::linear", SP_EVENT_OPERATOR, 0, 100 * US},
    {"aten::t", SP_EVENT_OPERATOR, 10 * US, 20 * US},
    {"aten::addmm", SP_EVENT_OPERATOR, 20 * US, 90 * US},
    {"aten::copy_", SP_EVENT_OPERATOR, 30 * US, 50 * US},
    {"aten::linear", SP_EVENT_OPERATOR, 200 * US, 260 * US},
    {"aten::addmm", SP_EVENT_OPERATOR, 210 * US, 250 * US},
};
#define N(a) (sizeof a / sizeof *a)

static void test_table_torch_nested_self_vs_total(void)
{
    built b;
    build(&b, nested, N(nested), NULL, 0);
    const char *text = table(&b, NULL, 100);
    fixture_check_golden("torch_nested.txt", text);
    CHECK(strstr(text, "Self CPU time total: 160.000us\n") != NULL);
    done(&b);
}

/* Two threads (grouping crosses threads; ms and s formats):
 *   main:   forward (Forward) [0,2ms] with aten::mm [0.5ms,1.5ms]
 *   worker: aten::mm [0,1.2s]; save (PythonUserDefined) [1.3s,1.3004s]
 * aten::mm: self = total = 1ms + 1200ms = 1.201s, avg 600.500ms, 2 calls;
 * forward: self 1.000ms, total 2.000ms; save 400.000us.
 * Sum self = 1202.4ms -> "1.202s". Self %: 1201/1202.4 = 99.88%, 1/1202.4 =
 * 0.08%, 0.4/1202.4 = 0.03%; forward total 2/1202.4 = 0.17%. Width 8 + 4 = 12. */
static void test_table_torch_two_threads(void)
{
    static const fixture_range main_thread[] = {
        {"forward", SP_EVENT_FORWARD, 0, 2 * MS},
        {"aten::mm", SP_EVENT_OPERATOR, 500 * US, 1500 * US},
    };
    static const fixture_range worker[] = {
        {"aten::mm", SP_EVENT_OPERATOR, 0, 1200 * MS},
        {"save", SP_EVENT_PYTHON_USER_DEFINED, 1300 * MS, 1300 * MS + 400 * US},
    };
    built b;
    build(&b, main_thread, N(main_thread), worker, N(worker));
    fixture_check_golden("torch_two_threads.txt", table(&b, NULL, 100));
    done(&b);
}

/* Three steps of 10ms; the third step's Dataloader is already spelled the
 * torch way, so all three land in one group:
 *   ProfileStep#0 [0,10ms]: DataLoader [0,2ms], aten::add [3,4ms]
 *   ProfileStep#1 [10,20ms]: DataLoader [10,11ms], aten::add [12,14ms]
 *   ProfileStep#2 [20,30ms]: enumerate(DataLoader)#DataLoader.__next__
 *                            [20,21ms], aten::add [25,26ms]
 * ProfilerStep*: total 30ms, self 30 - 4 - 4 = 22ms, avg 10ms, 3 calls.
 * enumerate(DataLoader)#DataLoader.__next__ and aten::add: 4ms each, avg
 * 1.333ms, 3 calls; tie broken by first occurrence (Dataloader at 0).
 * Sum self 30ms: 73.33% / 100.00%; 13.33% / 13.33% twice. Width 41 + 4. */
static void test_table_torch_profiler_step_grouping(void)
{
    static const fixture_range steps[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 10 * MS},
        {"DataLoader", SP_EVENT_DATALOADER, 0, 2 * MS},
        {"aten::add", SP_EVENT_OPERATOR, 3 * MS, 4 * MS},
        {"ProfileStep#1", SP_EVENT_PROFILE_STEP, 10 * MS, 20 * MS},
        {"DataLoader", SP_EVENT_DATALOADER, 10 * MS, 11 * MS},
        {"aten::add", SP_EVENT_OPERATOR, 12 * MS, 14 * MS},
        {"ProfileStep#2", SP_EVENT_PROFILE_STEP, 20 * MS, 30 * MS},
        {"enumerate(DataLoader)#DataLoader.__next__", SP_EVENT_DATALOADER, 20 * MS, 21 * MS},
        {"aten::add", SP_EVENT_OPERATOR, 25 * MS, 26 * MS},
    };
    built b;
    build(&b, steps, N(steps), NULL, 0);
    const char *text = table(&b, NULL, -1);
    fixture_check_golden("torch_steps.txt", text);
    CHECK(strstr(text, "ProfileStep#") == NULL && strstr(text, "ProfilerStep#") == NULL);
    done(&b);
}

/* Four groups whose order differs under every key (sum self = 100us):
 *   outer [0,40] (inner [2,37]):  self 5,  total 40, avg 40, 1 call
 *   inner + [100,101]:            self 36, total 36, avg 18, 2 calls
 *   mid 3 x 15:                   self 45, total 45, avg 15, 3 calls
 *   tiny 7 x 2:                   self 14, total 14, avg 2,  7 calls
 * self_cpu_time_total: mid, inner, tiny, outer
 * cpu_time_total:      mid, outer, inner, tiny
 * cpu_time_avg:        outer, inner, mid, tiny
 * count:               tiny, mid, inner, outer
 * Self %: 5.00, 36.00, 45.00, 14.00; total %: 40.00, 36.00, 45.00, 14.00. */
static const fixture_range keyed[] = {
    {"outer", SP_EVENT_USER_DEFINED, 0, 40 * US},
    {"inner", SP_EVENT_OPERATOR, 2 * US, 37 * US},
    {"inner", SP_EVENT_OPERATOR, 100 * US, 101 * US},
    {"mid", SP_EVENT_OPERATOR, 200 * US, 215 * US},
    {"mid", SP_EVENT_OPERATOR, 220 * US, 235 * US},
    {"mid", SP_EVENT_OPERATOR, 240 * US, 255 * US},
    {"tiny", SP_EVENT_OPERATOR, 300 * US, 302 * US},
    {"tiny", SP_EVENT_OPERATOR, 310 * US, 312 * US},
    {"tiny", SP_EVENT_OPERATOR, 320 * US, 322 * US},
    {"tiny", SP_EVENT_OPERATOR, 330 * US, 332 * US},
    {"tiny", SP_EVENT_OPERATOR, 340 * US, 342 * US},
    {"tiny", SP_EVENT_OPERATOR, 350 * US, 352 * US},
    {"tiny", SP_EVENT_OPERATOR, 360 * US, 362 * US},
};

static void test_table_torch_each_sort_key(void)
{
    static const char *const keys[] = {"self_cpu_time_total", "cpu_time_total", "cpu_time_avg",
                                       "count"};
    built b;
    build(&b, keyed, N(keyed), NULL, 0);
    for (size_t i = 0; i < N(keys); i++) {
        char golden[64];
        snprintf(golden, sizeof golden, "torch_sort_%s.txt", keys[i]);
        fixture_check_golden(golden, table(&b, keys[i], 100));
    }
    done(&b);
}

static void test_table_torch_sort_key_defaults_and_errors(void)
{
    built b;
    build(&b, keyed, N(keyed), NULL, 0);
    sp__buf want;
    sp__buf_init(&want);
    sp__buf_puts(&want, table(&b, "self_cpu_time_total", 100));
    CHECK_STR_EQ(sp__buf_cstr(&want), table(&b, NULL, 100));
    want.len = 0;
    sp__buf_puts(&want, table(&b, "cpu_time_avg", 100));
    CHECK_STR_EQ(sp__buf_cstr(&want), table(&b, "cpu_time", 100)); /* torch's name */
    b.text.len = 0;
    CHECK_EQ(-2, sp__torch_table(&b.m, "cuda_time_totals", 100, &b.text));
    CHECK_EQ(-2, sp__torch_table(&b.m, "", 100, &b.text));
    CHECK_EQ(-2, sp__torch_table(&b.m, "key", 100, &b.text)); /* not a number */
    CHECK_EQ(-2, sp__torch_table(&b.m, "gpu_time_total", 100, &b.text));
    CHECK_EQ(0, (int)b.text.len);
    sp__buf_fini(&want);
    done(&b);
}

/* row_limit 1 keeps only aten::addmm; the width (16) and the footer still
 * count every group (torch computes both before the limit). */
static void test_table_torch_row_limit_one(void)
{
    built b;
    build(&b, nested, N(nested), NULL, 0);
    const char *text = table(&b, NULL, 1);
    fixture_check_golden("torch_row_limit_1.txt", text);
    CHECK(strstr(text, "aten::linear") == NULL);
    CHECK(strstr(text, "Self CPU time total: 160.000us\n") != NULL);
    CHECK(strstr(table(&b, NULL, 0), "aten::") == NULL);
    done(&b);
}

/* Only zero-length ranges: every time 0.000us, sum self 0 so both
 * percentages print "NaN" as torch's _format_time_share does. aten::empty
 * (2 calls, first at 5us) before mark (at 7us) on the all-zero tie. */
static void test_table_torch_zero_length_nan(void)
{
    static const fixture_range zero[] = {
        {"aten::empty", SP_EVENT_OPERATOR, 5 * US, 5 * US},
        {"mark", SP_EVENT_USER_DEFINED, 7 * US, 7 * US},
        {"aten::empty", SP_EVENT_OPERATOR, 9 * US, 9 * US},
    };
    built b;
    build(&b, zero, N(zero), NULL, 0);
    const char *text = table(&b, NULL, 100);
    fixture_check_golden("torch_zero_length.txt", text);
    CHECK(strstr(text, "Self CPU time total: 0.000us\n") != NULL);
    CHECK(strstr(text, "nan") == NULL && strstr(text, "inf") == NULL);
    done(&b);
}

/* Names of 51 (kept), 52 and 60 characters (cut to 52 + "..."), and a
 * 52-code-point name with a 2-byte "é" (cut by code points, not bytes).
 * Width min(60 + 4, 55) = 55. Each range 10us: 25.00% each. */
#define L50 "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX"
static const fixture_range longs[] = {
    {L50 "1", SP_EVENT_OPERATOR, 0, 10 * US},
    {L50 "12", SP_EVENT_OPERATOR, 20 * US, 30 * US},
    {L50 "1234567890", SP_EVENT_OPERATOR, 40 * US, 50 * US},
    {"\xc3\xa9" L50 "9", SP_EVENT_OPERATOR, 60 * US, 70 * US},
};

static void test_table_torch_long_names_cut(void)
{
    built b;
    build(&b, longs, N(longs), NULL, 0);
    const char *text = table(&b, NULL, 100);
    fixture_check_golden("torch_long_names.txt", text);
    CHECK(strstr(text, "  " L50 "1  ") != NULL);
    CHECK(strstr(text, L50 "12...  ") != NULL);
    CHECK(strstr(text, "\xc3\xa9" L50 "9...  ") != NULL);
    CHECK(strstr(text, "1234567890") == NULL);
    done(&b);
}

/* No events: torch's _build_table returns "" for no events. */
/* torch's EventList drops a range that is the only child of a range of the
 * same name (aten::mean re-entering the dispatcher as aten::mean):
 *   aten::mean [0,100] > aten::mean [10,90] > aten::sum [20,40],
 *                                             aten::div_ [50,80] > aten::div_ [55,75]
 *   aten::x [200,300] > aten::x [210,220], aten::y [230,240]  (two children: kept)
 * aten::mean: 1 call, total 100, self 20 + 30 = 50; aten::div_: 1 call, total
 * 30, self 10 + 20 = 30; aten::sum 20/20/1; aten::x: 2 calls, total 110, self
 * 80 + 10 = 90; aten::y 10/10/1. Sum self = 200 (the roots' 100 + 100). */
static const fixture_range duplicated[] = {
    {"aten::mean", SP_EVENT_OPERATOR, 0, 100 * US},
    {"aten::mean", SP_EVENT_OPERATOR, 10 * US, 90 * US},
    {"aten::sum", SP_EVENT_OPERATOR, 20 * US, 40 * US},
    {"aten::div_", SP_EVENT_OPERATOR, 50 * US, 80 * US},
    {"aten::div_", SP_EVENT_OPERATOR, 55 * US, 75 * US},
    {"aten::x", SP_EVENT_OPERATOR, 200 * US, 300 * US},
    {"aten::x", SP_EVENT_OPERATOR, 210 * US, 220 * US},
    {"aten::y", SP_EVENT_OPERATOR, 230 * US, 240 * US},
};

static void test_table_torch_only_child_of_its_name_is_merged(void)
{
    built b;
    build(&b, duplicated, N(duplicated), NULL, 0);
    const char *text = table(&b, NULL, 100);
    fixture_check_golden("torch_duplicates.txt", text);
    CHECK(strstr(text, "Self CPU time total: 200.000us\n") != NULL);
    done(&b);
}

/* with_flops: an op's FLOPs (its op supplements') sum by name into the last
 * column, in the unit of the smallest positive sum (torch's
 * auto_scale_flops: 1,500 -> KFLOPs), "--" for none. On the nested
 * fixture: aten::addmm 2,000,000 + 1,000,000 = 3000.000 KFLOPs, aten::t 1,500
 * = 1.500 KFLOPs, aten::linear and aten::copy_ "--". */
static void test_table_torch_flops_column(void)
{
    built b;
    b.r = sp__result_new();
    CHECK(b.r != NULL);
    b.r->span_start_ns = 0;
    b.r->span_end_ns = 2 * 1000 * MS;
    fixture_add_thread(b.r, 100, "main", nested, N(nested));
    sp__thread *t = &b.r->threads[0];
    const struct { int64_t ts; const char *op; uint64_t flops; } ops[] = {
        {15 * US, "aten::t", 1500}, {25 * US, "aten::addmm", 2000000}, {215 * US, "aten::addmm", 1000000}};
    for (size_t i = 0; i < N(ops); i++) {
        fixture_add_op(b.r, t, ops[i].ts, ops[i].op, "", "X:float:2x2");
        t->ops[t->op_count - 1].flops = ops[i].flops;
    }
    CHECK_EQ(0, sp__attribute(b.r));
    CHECK_EQ(0, sp__model_build(&b.m, b.r));
    sp__buf_init(&b.text);
    const char *text = table(&b, NULL, 100);
    fixture_check_golden("torch_flops.txt", text);
    CHECK(strstr(text, "Total KFLOPs") != NULL);
    done(&b);
}

static void test_table_torch_empty_model(void)
{
    built b;
    build(&b, NULL, 0, NULL, 0);
    const char *text = table(&b, NULL, 100);
    fixture_check_golden("torch_empty.txt", text);
    CHECK_STR_EQ("", text);
    done(&b);
}

/* Device time (none recorded yet, so poked into the nodes): the four CUDA
 * columns appear before "# of Calls", with their own footer. */
static void test_table_torch_device_columns(void)
{
    built b;
    build(&b, nested, N(nested), NULL, 0);
    b.m.threads[0].nodes[2].gpu = b.m.threads[0].nodes[2].self_gpu = 30 * US;
    const char *text = table(&b, NULL, 100);
    CHECK(strstr(text, "  CPU time avg     Self CUDA   Self CUDA %    CUDA total  CUDA time avg"
                       "    # of Calls  \n") != NULL);
    CHECK(strstr(text, "Self CUDA time total: 30.000us\n") != NULL);
    CHECK(strstr(text, "100.00%") != NULL);
    done(&b);
}

/* Every allocation failing in turn gives -1 or, where the failure hits
 * nothing that matters, the full table; at least one run fails. */
static void test_table_torch_out_of_memory(void)
{
    built b;
    build(&b, keyed, N(keyed), NULL, 0);
    sp__buf want;
    sp__buf_init(&want);
    sp__alloc_fail_at(0);
    CHECK_EQ(0, sp__torch_table(&b.m, NULL, 100, &want));
    uint64_t made = sp__alloc_fail_at(0), failures = 0;
    CHECK(made >= 3); /* slots, groups, a name at least */
    for (uint64_t k = 1; k <= made; k++) {
        sp__buf out;
        sp__buf_init(&out);
        sp__alloc_fail_at(k);
        int rc = sp__torch_table(&b.m, NULL, 100, &out);
        sp__alloc_fail_at(0);
        if (rc == 0) {
            CHECK_STR_EQ(sp__buf_cstr(&want), sp__buf_cstr(&out));
        } else {
            CHECK_EQ(-1, rc);
            failures++;
        }
        sp__buf_fini(&out);
    }
    CHECK(failures > 0);
    sp__buf_fini(&want);
    done(&b);
}

/* The row names of a table, in order, joined by spaces. */
static const char *row_order(const char *text, char *out, size_t size)
{
    size_t o = 0;
    out[0] = '\0';
    const char *line = text;
    int seps = 0;
    while (*line && seps < 3) {
        const char *end = strchr(line, '\n');
        if (!end) break;
        if (*line == '-') {
            seps++;
        } else if (seps == 2) {
            const char *p = line;
            while (*p == ' ') p++;
            const char *q = strstr(p, "  ");
            size_t n = (size_t)(q - p);
            if (o + n + 2 < size) {
                if (o) out[o++] = ' ';
                memcpy(out + o, p, n);
                o += n;
                out[o] = '\0';
            }
        }
        line = end + 1;
    }
    return out;
}

/* Device time poked into the keyed groups (one node each, so the order
 * differs from every CPU key): self/total device time per group
 *   outer 1/50, inner (first call) 20/20, mid (first) 30/30, tiny (first) 5/5.
 * self_device_time_total: mid, inner, tiny, outer
 * device_time_total:      outer, mid, inner, tiny
 * device_time (avg):      outer 50, mid 10, inner 10, tiny 5/7 -> outer, inner, mid, tiny
 *   (inner 20/2 = 10 ties mid 30/3 = 10: first occurrence, inner first).
 * torch's spellings (cuda_, xpu_, privateuse1_) read the same columns. */
static void test_table_torch_device_sort_keys(void)
{
    built b;
    build(&b, keyed, N(keyed), NULL, 0);
    sp__node *nodes = b.m.threads[0].nodes;
    nodes[0].self_gpu = 1 * US;
    nodes[0].gpu = 50 * US;
    nodes[1].self_gpu = nodes[1].gpu = 20 * US;
    nodes[3].self_gpu = nodes[3].gpu = 30 * US;
    nodes[6].self_gpu = nodes[6].gpu = 5 * US;
    static const struct {
        const char *key, *order;
    } want[] = {
        {"self_device_time_total", "mid inner tiny outer"},
        {"self_cuda_time_total", "mid inner tiny outer"},
        {"self_xpu_time_total", "mid inner tiny outer"},
        {"self_privateuse1_time_total", "mid inner tiny outer"},
        {"device_time_total", "outer mid inner tiny"},
        {"cuda_time_total", "outer mid inner tiny"},
        {"xpu_time_total", "outer mid inner tiny"},
        {"device_time", "outer inner mid tiny"},
        {"cuda_time", "outer inner mid tiny"},
        {"privateuse1_time", "outer inner mid tiny"},
        {"count", "tiny mid inner outer"},
    };
    char order[256];
    for (size_t i = 0; i < N(want); i++) {
        const char *text = table(&b, want[i].key, 100);
        CHECK_STR_EQ(want[i].order, row_order(text, order, sizeof order));
        CHECK(strstr(text, "Self CUDA %") != NULL);
    }
    done(&b);
}

/* Memory keys without memory events: every key 0, rows in first-occurrence
 * order (outer, inner, mid, tiny), as torch's stable sort leaves them; the
 * same for "none" (torch's sort_by=None). No memory columns: the result was
 * not recorded with profile_memory. */
static void test_table_torch_memory_keys_without_memory(void)
{
    static const char *const keys[] = {"cpu_memory_usage", "self_cpu_memory_usage",
                                       "cuda_memory_usage", "self_cuda_memory_usage",
                                       "device_memory_usage", "self_device_memory_usage",
                                       "xpu_memory_usage", "none"};
    built b;
    build(&b, keyed, N(keyed), NULL, 0);
    char order[256];
    for (size_t i = 0; i < N(keys); i++) {
        const char *text = table(&b, keys[i], 100);
        CHECK_STR_EQ("outer inner mid tiny", row_order(text, order, sizeof order));
        CHECK(strstr(text, "Mem") == NULL);
    }
    done(&b);
}

/* Memory events charged to ranges (by sp__attribute), with profile_memory:
 *   outer [0,40] holds inner [2,37]; mid x3; tiny x7 (the keyed fixture).
 *   at 1us  (outer): +1000 B cpu
 *   at 3us  (inner): +4096 B cpu, +2 MiB gpu:0
 *   at 5us  (inner): -96 B cpu (a free)
 *   at 201us (mid):  +300 B cpu
 *   at 301us (tiny): +3 GiB gpu:0 (reserved: not counted), +10 B cpu
 * self cpu:  outer 1000, inner 4000, mid 300, tiny 10
 * total cpu: outer 5000, inner 4000, mid 300, tiny 10
 * self/total gpu: inner 2 MiB (outer total 2 MiB).
 * Columns CPU Mem, Self CPU Mem, CUDA Mem, Self CUDA Mem before # of Calls,
 * formatted as torch's _format_memory ("4.88 KB", "3.91 KB", "2.00 MB"). */
static void test_table_torch_memory_columns_and_keys(void)
{
    built b;
    b.r = sp__result_new();
    CHECK(b.r != NULL);
    b.r->span_start_ns = 0;
    b.r->span_end_ns = 2 * 1000 * MS;
    b.r->meta.profile_memory = 1;
    fixture_add_thread(b.r, 100, "main", keyed, N(keyed));
    sp__thread *t = &b.r->threads[0];
    fixture_add_mem(b.r, t, 1 * US, 0, "Place(cpu)", 0x10, 1000, 0, 0, 0, 0);
    fixture_add_mem(b.r, t, 3 * US, 0, "Place(cpu)", 0x20, 4096, 0, 0, 0, 0);
    fixture_add_mem(b.r, t, 3 * US, 0, "Place(gpu:0)", 0x30, 2 << 20, 0, 0, 0, 0);
    fixture_add_mem(b.r, t, 5 * US, 1, "Place(cpu)", 0x40, -96, 0, 0, 0, 0);
    fixture_add_mem(b.r, t, 201 * US, 0, "Place(cpu)", 0x50, 300, 0, 0, 0, 0);
    fixture_add_mem(b.r, t, 301 * US, 2, "Place(gpu:0)", 0x60, 3ll << 30, 0, 0, 0, 0);
    fixture_add_mem(b.r, t, 301 * US, 0, "Place(cpu)", 0x70, 10, 0, 0, 0, 0);
    CHECK_EQ(0, sp__attribute(b.r));
    CHECK_EQ(0, sp__model_build(&b.m, b.r));
    sp__buf_init(&b.text);
    char order[256];
    const char *text = table(&b, "cpu_memory_usage", 100);
    CHECK(strstr(text, "  CPU time avg       CPU Mem  Self CPU Mem      CUDA Mem  Self CUDA Mem"
                       "    # of Calls  \n") != NULL);
    CHECK_STR_EQ("outer inner mid tiny", row_order(text, order, sizeof order));
    char row[128];
    snprintf(row, sizeof row, "  %12s  %12s  %12s  %12s  %12s  \n", "4.88 KB", "1000 B", "2.00 MB",
             "0 B", "1");
    CHECK(strstr(text, row) != NULL);
    snprintf(row, sizeof row, "  %12s  %12s  %12s  %12s  %12s  \n", "3.91 KB", "3.91 KB",
             "2.00 MB", "2.00 MB", "2");
    CHECK(strstr(text, row) != NULL);
    CHECK_STR_EQ("inner outer mid tiny",
                 row_order(table(&b, "self_cpu_memory_usage", 100), order, sizeof order));
    CHECK_STR_EQ("outer inner mid tiny",
                 row_order(table(&b, "cuda_memory_usage", 100), order, sizeof order));
    CHECK_STR_EQ("inner outer mid tiny",
                 row_order(table(&b, "self_cuda_memory_usage", 100), order, sizeof order));
    /* Each allocation failing in turn (the memory arrays included): -1 or
     * the whole table, never a table without its memory. */
    sp__buf want;
    sp__buf_init(&want);
    sp__alloc_fail_at(0);
    CHECK_EQ(0, sp__torch_table(&b.m, "cpu_memory_usage", 100, &want));
    uint64_t made = sp__alloc_fail_at(0), failures = 0;
    for (uint64_t k = 1; k <= made; k++) {
        sp__buf out;
        sp__buf_init(&out);
        sp__alloc_fail_at(k);
        int rc = sp__torch_table(&b.m, "cpu_memory_usage", 100, &out);
        sp__alloc_fail_at(0);
        if (rc == 0)
            CHECK_STR_EQ(sp__buf_cstr(&want), sp__buf_cstr(&out));
        else
            failures++;
        sp__buf_fini(&out);
    }
    CHECK(failures > 0);
    sp__buf_fini(&want);
    done(&b);
}

static const char *table_with(built *b, const sp__torch_table_opts *o)
{
    b->text.len = 0;
    CHECK_EQ(0, sp__torch_table_with(&b->m, o, &b->text));
    return sp__buf_cstr(&b->text);
}

/* torch's max_name_column_width W: the column min(longest + 4, W) wide,
 * names of W - 3 code points and more cut to W - 3 + "..."; None (<= 0):
 * neither. The long-names fixture's longest name has 60 code points. The
 * defaults give the golden table unchanged. */
static void test_table_torch_name_width_option(void)
{
    built b;
    build(&b, longs, N(longs), NULL, 0);
    sp__torch_table_opts o;
    sp__torch_table_opts_init(&o);
    fixture_check_golden("torch_long_names.txt", table_with(&b, &o));

    o.max_name_width = 0; /* torch's None */
    const char *text = table_with(&b, &o);
    CHECK(strstr(text, "    " L50 "1234567890  ") != NULL); /* 60 + 4 wide, not cut */
    CHECK(strstr(text, "...") == NULL);

    o.max_name_width = 100;
    CHECK_STR_EQ(text, table_with(&b, &o)); /* 64 < 100: as None */

    o.max_name_width = 20; /* cut to 17 + "...", the column 20 wide */
    text = table_with(&b, &o);
    CHECK(strstr(text, "\n" "abcdefghijklmnopq...  ") != NULL);
    CHECK(strstr(text, "\n" "                Name  ") != NULL);
    CHECK(strstr(text, "abcdefghijklmnopqr") == NULL);
    done(&b);
}

/* torch's time_unit: every time (cells and footer) in that unit with
 * "%.3f"; percentages unchanged; other text: the automatic units. */
static void test_table_torch_time_unit_option(void)
{
    built b;
    build(&b, nested, N(nested), NULL, 0);
    sp__torch_table_opts o;
    sp__torch_table_opts_init(&o);
    o.time_unit = "ms";
    const char *text = table_with(&b, &o);
    CHECK(strstr(text, "Self CPU time total: 0.160ms\n") != NULL);
    CHECK(strstr(text, "      0.090ms        68.75%       0.110ms       0.055ms") != NULL);
    CHECK(strstr(text, "us") == NULL);
    o.time_unit = "s";
    CHECK(strstr(table_with(&b, &o), "Self CPU time total: 0.000s\n") != NULL);
    o.time_unit = "us";
    CHECK(strstr(table_with(&b, &o), "Self CPU time total: 160.000us\n") != NULL);
    o.time_unit = "minutes";
    sp__buf want;
    sp__buf_init(&want);
    sp__buf_puts(&want, table(&b, NULL, 100));
    CHECK_STR_EQ(sp__buf_cstr(&want), table_with(&b, &o));
    sp__buf_fini(&want);
    done(&b);
}

/* Whether a line of text, its indent left out, begins with name + "  " and
 * ends with calls + "  " + shapes right-aligned in width + "  ". */
static int has_row(const char *text, const char *name, const char *calls, const char *shapes,
                   int width)
{
    char tail[256];
    snprintf(tail, sizeof tail, "%s  %*s  ", calls, width, shapes);
    size_t nl = strlen(name), tl = strlen(tail);
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        if (!end) break;
        const char *s = line + strspn(line, " ");
        size_t len = (size_t)(end - s);
        if (len >= nl + tl + 2 && strncmp(s, name, nl) == 0 && strncmp(s + nl, "  ", 2) == 0 &&
            strncmp(end - tl, tail, tl) == 0 && end[-tl - 1] == ' ')
            return 1;
        line = end + 1;
    }
    return 0;
}

/* group_by_input_shape: rows by name and torch's str(input_shapes) of each
 * range's first op record, "Input Shapes" after "# of Calls", as wide as
 * the longest + 4 at most max_shapes_width, cells cut to it; a range merged
 * into its same-named parent counts with the pair's first record, whichever
 * range it landed on. On the nested fixture: the two aten::linear share
 * shapes (one row, 2 calls), the two aten::addmm differ (two rows), aten::t
 * and aten::copy_ have no record ("[]"). */
static void test_table_torch_group_by_input_shapes(void)
{
    built b;
    b.r = sp__result_new();
    CHECK(b.r != NULL);
    b.r->span_start_ns = 0;
    b.r->span_end_ns = 2 * 1000 * MS;
    fixture_add_thread(b.r, 100, "main", nested, N(nested));
    fixture_add_thread(b.r, 200, "worker", duplicated, N(duplicated));
    sp__thread *t = &b.r->threads[0], *w = &b.r->threads[1];
    fixture_add_op(b.r, t, 5 * US, "aten::linear", "", "X:float:16x32|W:float:64x32|b:float:64");
    fixture_add_op(b.r, t, 25 * US, "aten::addmm", "", "X:float:2x2");
    fixture_add_op(b.r, t, 205 * US, "aten::linear", "", "X:float:16x32|W:float:64x32|b:float:64");
    fixture_add_op(b.r, t, 215 * US, "aten::addmm", "", "X:float:4x4|beta:Scalar:");
    /* aten::div_ [50, 80] holds only aten::div_ [55, 75]: records swapped. */
    fixture_add_op(b.r, w, 51 * US, "aten::div_", "", "X:float:3|s:Scalar:");
    fixture_add_op(b.r, w, 56 * US, "aten::div_", "", "X:float:3|a:Scalar:|b:Scalar:");
    CHECK_EQ(0, sp__attribute(b.r));
    int32_t outer = w->ops[0].host, inner = w->ops[1].host;
    CHECK(outer >= 0 && inner >= 0 && outer != inner);
    w->ops[0].host = inner;
    w->ops[1].host = outer;
    CHECK_EQ(0, sp__model_build(&b.m, b.r));
    sp__buf_init(&b.text);
    sp__torch_table_opts o;
    sp__torch_table_opts_init(&o);
    o.sort_by = "none";
    o.by_input_shapes = 1;
    const char *text = table_with(&b, &o);
    /* The longest, [[16, 32], [64, 32], [64]], has 26 characters: 30 wide. */
    CHECK(strstr(text, "# of Calls                    Input Shapes  \n") != NULL);
    CHECK(has_row(text, "aten::linear", "2", "[[16, 32], [64, 32], [64]]", 30));
    CHECK(has_row(text, "aten::addmm", "1", "[[2, 2]]", 30));
    CHECK(has_row(text, "aten::addmm", "1", "[[4, 4], []]", 30));
    CHECK(has_row(text, "aten::t", "1", "[]", 30));
    CHECK(has_row(text, "aten::mean", "1", "[]", 30));
    CHECK(has_row(text, "aten::div_", "1", "[[3], []]", 30));
    CHECK(strstr(text, "[[3], [], []]") == NULL); /* the inner one's: merged away */

    o.max_shapes_width = 8; /* the column 8 wide, cells cut to 8 */
    text = table_with(&b, &o);
    CHECK(has_row(text, "aten::linear", "2", "[[16, 32", 8));
    CHECK(strstr(text, "# of Calls  Input Shapes  \n") != NULL); /* the header is not cut */

    o.by_input_shapes = 0; /* by name: one aten::addmm row, no column */
    text = table_with(&b, &o);
    CHECK(strstr(text, "Input Shapes") == NULL);
    const char *addmm = strstr(text, " aten::addmm  ");
    CHECK(addmm && strstr(addmm + 1, " aten::addmm  ") == NULL);

    /* Each allocation failing in turn: the same table, or -1. */
    o.by_input_shapes = 1;
    o.max_shapes_width = 80;
    sp__buf want;
    sp__buf_init(&want);
    sp__alloc_fail_at(0);
    CHECK_EQ(0, sp__torch_table_with(&b.m, &o, &want));
    uint64_t made = sp__alloc_fail_at(0), failures = 0;
    for (uint64_t k = 1; k <= made; k++) {
        sp__buf out;
        sp__buf_init(&out);
        sp__alloc_fail_at(k);
        int rc = sp__torch_table_with(&b.m, &o, &out);
        sp__alloc_fail_at(0);
        if (rc == 0) {
            CHECK_STR_EQ(sp__buf_cstr(&want), sp__buf_cstr(&out));
        } else {
            CHECK_EQ(-1, rc);
            failures++;
        }
        sp__buf_fini(&out);
    }
    CHECK(failures > 0);
    sp__buf_fini(&want);
    done(&b);
}

int main(void)
{
    RUN_TEST(test_table_torch_nested_self_vs_total);
    RUN_TEST(test_table_torch_two_threads);
    RUN_TEST(test_table_torch_profiler_step_grouping);
    RUN_TEST(test_table_torch_each_sort_key);
    RUN_TEST(test_table_torch_sort_key_defaults_and_errors);
    RUN_TEST(test_table_torch_row_limit_one);
    RUN_TEST(test_table_torch_zero_length_nan);
    RUN_TEST(test_table_torch_long_names_cut);
    RUN_TEST(test_table_torch_only_child_of_its_name_is_merged);
    RUN_TEST(test_table_torch_group_by_input_shapes);
    RUN_TEST(test_table_torch_flops_column);
    RUN_TEST(test_table_torch_empty_model);
    RUN_TEST(test_table_torch_device_columns);
    RUN_TEST(test_table_torch_out_of_memory);
    RUN_TEST(test_table_torch_device_sort_keys);
    RUN_TEST(test_table_torch_memory_keys_without_memory);
    RUN_TEST(test_table_torch_memory_columns_and_keys);
    RUN_TEST(test_table_torch_name_width_option);
    RUN_TEST(test_table_torch_time_unit_option);
    return TEST_SUMMARY();
}
