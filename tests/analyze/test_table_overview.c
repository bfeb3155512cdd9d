/* test_table_overview.c: the Overview Summary's calls and times when ranges
 * of one type nest (table_overview.c, semantics.md §6.0 and §6.2). Every
 * host node counts one call of its type, nested ones too, and the time is
 * the length of the type's merged ranges; Dataloader, Forward, Backward and
 * Optimization take both from the Model item, which counts only the
 * outermost such range.
 * Fixture (us): ProfileStep#0 [0,1000] > Forward [50,800] > Forward
 * [60,90]; Operator [100,500] > Operator [200,300] > Operator [210,220];
 * Operator [600,700]; UserDefined [850,950] > UserDefined [860,870].
 * Want: ProfileStep 1 / 1000; Forward 1 / 750; Operator 4 / 500 (the union
 * [100,500] + [600,700]); UserDefined 2 / 100. Also the GPU rows. */
#include "fixture.h"

#include <stdio.h>

#define US 1000ll

static void row(const char *text, const char *name, long long *calls, double *time)
{
    char key[64];
    snprintf(key, sizeof key, "\n  %s ", name);
    const char *p = strstr(text, key);
    if (!p) {
        snprintf(key, sizeof key, "\n%s ", name); /* the first row has no indent */
        p = strstr(text, key);
    }
    *calls = -1;
    *time = -1;
    CHECK(p != NULL);
    if (!p) {
        fprintf(stderr, "no row %s in:\n%s\n", name, text);
        return;
    }
    p += strlen(key);
    CHECK_EQ(2, sscanf(p, "%lld %lf", calls, time));
}

static void test_table_overview_nested_ranges_of_one_type(void)
{
    static const fixture_range host[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 1000 * US},
        {"Forward", SP_EVENT_FORWARD, 50 * US, 800 * US},
        {"inner forward", SP_EVENT_FORWARD, 60 * US, 90 * US},
        {"outer", SP_EVENT_OPERATOR, 100 * US, 500 * US},
        {"middle", SP_EVENT_OPERATOR, 200 * US, 300 * US},
        {"inner", SP_EVENT_OPERATOR, 210 * US, 220 * US},
        {"second", SP_EVENT_OPERATOR, 600 * US, 700 * US},
        {"udf", SP_EVENT_USER_DEFINED, 850 * US, 950 * US},
        {"udf inner", SP_EVENT_USER_DEFINED, 860 * US, 870 * US},
    };
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "main", host, sizeof host / sizeof *host);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    CHECK(f != NULL);
    if (!f) return;
    sp_summary_options o;
    sp_summary_options_init(&o);
    o.views = 1u << SP_VIEW_OVERVIEW;
    o.time_unit = "us";
    CHECK_OK(sp_result_summary(r, &o, f));
    fclose(f);
    long long calls;
    double time;
    row(text, "ProfileStep", &calls, &time);
    CHECK_EQ(1, calls);
    CHECK(time == 1000.0);
    row(text, "Forward", &calls, &time);
    CHECK_EQ(1, calls);
    CHECK(time == 750.0);
    row(text, "Operator", &calls, &time);
    CHECK_EQ(4, calls);
    CHECK(time == 500.0);
    row(text, "UserDefined", &calls, &time);
    CHECK_EQ(2, calls);
    CHECK(time == 100.0);
    free(text);
    sp_result_release(r);
}

/* The GPU rows: per device type the union over devices and streams, and
 * its record count, in the order Kernel, Memcpy, Memset (§6.2).
 * Kernels (us): [100,300] stream 7 and [200,400] stream 8 (union 300, 2
 * calls); memcpy [500,550]; memsets [600,610] and [605,625] (union 25). */
static void test_table_overview_gpu_rows(void)
{
    static const fixture_range host[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 1000 * US},
        {"op", SP_EVENT_OPERATOR, 10 * US, 90 * US},
    };
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "main", host, 2);
    sp__thread *t = &r->threads[0];
    for (uint32_t c = 1; c <= 5; c++) fixture_add_runtime(r, t, "cudaLaunchKernel", (10 + c) * US, (11 + c) * US, c);
    fixture_add_device(r, "k1", SP_EVENT_KERNEL, 100 * US, 300 * US, 0, 7, 1);
    fixture_add_device(r, "k2", SP_EVENT_KERNEL, 200 * US, 400 * US, 0, 8, 2);
    fixture_add_device(r, "MEMCPY_HtoD", SP_EVENT_MEMCPY, 500 * US, 550 * US, 0, 7, 3);
    fixture_add_device(r, "MEMSET", SP_EVENT_MEMSET, 600 * US, 610 * US, 0, 7, 4);
    fixture_add_device(r, "MEMSET", SP_EVENT_MEMSET, 605 * US, 625 * US, 0, 8, 5);
    CHECK_EQ(0, sp__attribute(r));
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    CHECK(f != NULL);
    if (!f) return;
    sp_summary_options o;
    sp_summary_options_init(&o);
    o.views = 1u << SP_VIEW_OVERVIEW;
    o.time_unit = "us";
    CHECK_OK(sp_result_summary(r, &o, f));
    fclose(f);
    const char *gpu = strstr(text, "GPU Time");
    CHECK(gpu != NULL);
    long long calls;
    double time;
    row(gpu ? gpu : text, "Kernel", &calls, &time);
    CHECK_EQ(2, calls);
    CHECK(time == 300.0);
    row(gpu ? gpu : text, "Memcpy", &calls, &time);
    CHECK_EQ(1, calls);
    CHECK(time == 50.0);
    row(gpu ? gpu : text, "Memset", &calls, &time);
    CHECK_EQ(2, calls);
    CHECK(time == 25.0);
    const char *k = gpu ? strstr(gpu, "\n  Kernel ") : NULL, *c = gpu ? strstr(gpu, "\n  Memcpy ") : NULL,
               *m = gpu ? strstr(gpu, "\n  Memset ") : NULL;
    CHECK(k && c && m && k < c && c < m);
    free(text);
    sp_result_release(r);
}

int main(void)
{
    RUN_TEST(test_table_overview_nested_ranges_of_one_type);
    RUN_TEST(test_table_overview_gpu_rows);
    return TEST_SUMMARY();
}
