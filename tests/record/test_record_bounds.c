/* test_record_bounds.c: the edges of what the hot path accepts (record.c):
 * the first event type past the last valid one is a misuse, recorded as
 * UserDefined; a copied name of exactly SP__NAME_MAX_BYTES is kept whole
 * and one byte longer is cut to that length and counted in names_cut. */
#include "check.h"
#include "record.h"
#include "stepprof/stepprof.h"

#include <stdlib.h>
#include <string.h>

static sp_profiler *begin_profiling(void)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    CHECK_OK(sp_profiler_start(p));
    return p;
}

static void test_record_bounds_first_invalid_type(void)
{
    sp_profiler *p = begin_profiling();
    sp_range_begin((sp_event_type)(SP_EVENT_TYPE_COUNT - 1), "last valid");
    sp_range_end();
    sp_range_begin((sp_event_type)SP_EVENT_TYPE_COUNT, "first invalid");
    sp_range_end();
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    CHECK(r != NULL);
    if (r) {
        CHECK_U64_EQ(1, sp_result_counter(r, SP_COUNTER_MISUSE));
        sp_event_info e;
        int seen = 0;
        for (size_t i = 0; sp_result_event(r, 0, i, &e) == SP_OK; i++) {
            if (strcmp(e.name, "last valid") == 0) {
                CHECK_EQ(SP_EVENT_TYPE_COUNT - 1, e.type);
                seen++;
            }
            if (strcmp(e.name, "first invalid") == 0) {
                CHECK_EQ(SP_EVENT_USER_DEFINED, e.type);
                seen++;
            }
        }
        CHECK_EQ(2, seen);
    }
    sp_profiler_destroy(p);
}

static void test_record_bounds_name_length_limit(void)
{
    size_t max = SP__NAME_MAX_BYTES;
    char *name = malloc(max + 2);
    CHECK(name != NULL);
    if (!name) return;
    memset(name, 'a', max + 1);
    name[max + 1] = '\0';
    name[0] = 'x'; /* the whole one */
    sp_profiler *p = begin_profiling();
    sp_range_begin_copy(SP_EVENT_USER_DEFINED, name, max);
    sp_range_end();
    name[0] = 'y'; /* one byte too long */
    sp_range_begin_copy(SP_EVENT_USER_DEFINED, name, max + 1);
    sp_range_end();
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    CHECK(r != NULL);
    if (r) {
        CHECK_U64_EQ(1, sp_result_counter(r, SP_COUNTER_NAMES_CUT));
        sp_event_info e;
        int seen = 0;
        for (size_t i = 0; sp_result_event(r, 0, i, &e) == SP_OK; i++) {
            if (e.name[0] == 'x') {
                CHECK_EQ(max, strlen(e.name));
                seen++;
            }
            if (e.name[0] == 'y') {
                CHECK(strlen(e.name) <= max);
                seen++;
            }
        }
        CHECK_EQ(2, seen);
    }
    sp_profiler_destroy(p);
    free(name);
}

int main(void)
{
    RUN_TEST(test_record_bounds_first_invalid_type);
    RUN_TEST(test_record_bounds_name_length_limit);
    return TEST_SUMMARY();
}
