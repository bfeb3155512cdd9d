/* test_attribute_bounds.c: the edges of attribution by time (attribute.c,
 * semantics.md §5.1): for runtime calls a range holds [start, end), so a
 * call at a range's start belongs to it and one at its end to the enclosing
 * range; memory events use the closed interval [start, end] of §5.1 step 7
 * (issue 17: an allocation at a range's last nanosecond is the range's).
 * Fixture (us): ProfileStep#0 [0,1000] > op [100,200]; runtime calls at 100
 * (op), 200 (step) and 199 (op); memory events at 100 and 200 (both op). */
#include "fixture.h"

#define US 1000ll

static void test_attribute_bounds_start_in_end_out(void)
{
    static const fixture_range host[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 1000 * US},
        {"op", SP_EVENT_OPERATOR, 100 * US, 200 * US},
    };
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "main", host, 2);
    sp__thread *t = &r->threads[0];
    fixture_add_runtime(r, t, "at start", 100 * US, 101 * US, 1);
    fixture_add_runtime(r, t, "before end", 199 * US, 199 * US + 500, 2);
    fixture_add_runtime(r, t, "at end", 200 * US, 201 * US, 3);
    fixture_add_mem(r, t, 100 * US, SP_MEM_ALLOCATE, "Place(cpu)", 0x10, 8, 8, 0, 8, 0);
    fixture_add_mem(r, t, 200 * US, SP_MEM_FREE, "Place(cpu)", 0x10, -8, 0, 0, 8, 0);
    CHECK_EQ(0, sp__attribute(r));
    CHECK_EQ(3, t->runtime_count);
    for (size_t i = 0; i < t->runtime_count; i++) {
        const char *name = sp__result_name(r, t->runtimes[i].name);
        int want = strcmp(name, "at end") == 0 ? 0 : 1;
        if (t->runtimes[i].host != want) fprintf(stderr, "runtime %s\n", name);
        CHECK_EQ(want, t->runtimes[i].host);
    }
    CHECK_EQ(2, t->mem_count);
    CHECK_EQ(1, t->mems[0].host);
    CHECK_EQ(1, t->mems[1].host);
    sp_result_release(r);
}

int main(void)
{
    RUN_TEST(test_attribute_bounds_start_in_end_out);
    return TEST_SUMMARY();
}
