/* test_table_items.c: the direction of every sort key (table_items.c,
 * semantics.md §6.5) in the Operator and UserDefined Summaries. Four items
 * whose CPU and GPU times are chosen so that each of the eight keys orders
 * them differently, and so does each key read the wrong way round: a key
 * that sorts the wrong way, reads CPU for GPU, or max for min gives another
 * order. Per call (us), with GPU time from one kernel each:
 *   op_a: cpu 90;         gpu 20           (total 90 / 20)
 *   op_b: cpu 10, 40;     gpu 12, 34       (total 50 / 46)
 *   op_c: cpu 70, 80, 20; gpu 42, 26, 22   (total 170 / 90)
 *   op_d: cpu 30;         gpu 38
 * Orders: CPUTotal c a b d, CPUAvg a c d b, CPUMax a c b d, CPUMin (asc)
 * b c d a, GPUTotal c b d a, GPUAvg d c b a, GPUMax c d b a, GPUMin (asc)
 * b a c d. */
#include "fixture.h"

#include <stdio.h>

#define US 1000ll

static sp_result *items(sp_event_type type)
{
    static const struct {
        const char *name;
        int n;
        int cpu[3], gpu[3];
    } ops[] = {
        {"op_a", 1, {90}, {20}},
        {"op_b", 2, {10, 40}, {12, 34}},
        {"op_c", 3, {70, 80, 20}, {42, 26, 22}},
        {"op_d", 1, {30}, {38}},
    };
    fixture_range ranges[1 + 7];
    int n = 0;
    int64_t slot = 0;
    ranges[n++] = (fixture_range){"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 2000 * US};
    /* Calls interleave (a b c d, then b c, then c) so that first-seen order
     * is no sorted order. */
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 4; i++) {
            if (round >= ops[i].n) continue;
            int64_t s = (10 + slot * 200) * US;
            ranges[n++] = (fixture_range){ops[i].name, type, s, s + ops[i].cpu[round] * US};
            slot++;
        }
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "main", ranges, (size_t)n);
    sp__thread *t = &r->threads[0];
    uint32_t corr = 1;
    slot = 0;
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < 4; i++) {
            if (round >= ops[i].n) continue;
            int64_t s = (10 + slot * 200) * US;
            fixture_add_runtime(r, t, "cudaLaunchKernel", s + 1 * US, s + 2 * US, corr);
            fixture_add_device(r, "some_kernel", SP_EVENT_KERNEL, s + 100 * US,
                               s + (100 + ops[i].gpu[round]) * US, 0, 7, corr);
            corr++;
            slot++;
        }
    CHECK_EQ(0, sp__attribute(r));
    return r;
}

/* The item rows of the one table printed, in order, as "abcd". */
static void order(const sp_result *r, unsigned view, sp_sorted_key key, char out[5])
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    CHECK(f != NULL);
    memcpy(out, "????", 5);
    if (!f) return;
    sp_summary_options o;
    sp_summary_options_init(&o);
    o.views = 1u << view;
    o.sorted_by = key;
    o.op_detail = false;
    o.time_unit = "us";
    CHECK_OK(sp_result_summary(r, &o, f));
    fclose(f);
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, "\nop_")) != NULL && n < 4; p += 4) out[n++] = p[4];
    free(text);
}

static void check_orders(sp_event_type type, unsigned view)
{
    static const struct {
        sp_sorted_key key;
        const char *want;
    } cases[] = {
        {SP_SORTED_CPU_TOTAL, "cabd"}, {SP_SORTED_CPU_AVG, "acdb"}, {SP_SORTED_CPU_MAX, "acbd"},
        {SP_SORTED_CPU_MIN, "bcda"},   {SP_SORTED_GPU_TOTAL, "cbda"}, {SP_SORTED_GPU_AVG, "dcba"},
        {SP_SORTED_GPU_MAX, "cdba"},   {SP_SORTED_GPU_MIN, "bacd"},
    };
    sp_result *r = items(type);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char got[5];
        order(r, view, cases[i].key, got);
        if (strcmp(got, cases[i].want) != 0) fprintf(stderr, "sorted_by %d:\n", (int)cases[i].key);
        CHECK_STR_EQ(cases[i].want, got);
    }
    sp_result_release(r);
}

static void test_table_items_operator_sort_keys(void)
{
    check_orders(SP_EVENT_OPERATOR, SP_VIEW_OPERATOR);
}

static void test_table_items_userdefined_sort_keys(void)
{
    check_orders(SP_EVENT_PYTHON_USER_DEFINED, SP_VIEW_UDF);
}

int main(void)
{
    RUN_TEST(test_table_items_operator_sort_keys);
    RUN_TEST(test_table_items_userdefined_sort_keys);
    return TEST_SUMMARY();
}
