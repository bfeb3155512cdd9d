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
 * [100,500] + [600,700]); UserDefined 2 / 100. */
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

int main(void)
{
    RUN_TEST(test_table_overview_nested_ranges_of_one_type);
    return TEST_SUMMARY();
}
