/* test_external.c: ranges measured by another tracer (external.c) with
 * synthetic sync points: names are copied and cut, an add is all or nothing,
 * CLOCK_REALTIME times go onto the span's time line through the two sync
 * points (a slewed realtime clock, a stepped one), ranges go to the thread
 * of their tid (a new thread added in tid order) and nest with the ranges
 * there, and ranges outside the span are counted as out_of_window or cut. */
#include "fixture.h"

#define US 1000ll
#define T0 1000000000000ll

/* Ticks that are nanoseconds: the map is the identity plus T0. */
static void identity_span(sp__sync *start, sp__sync *stop, sp__tick_map *map, int64_t real_skew_ns)
{
    *start = (sp__sync){.ticks = 0, .raw_ns = 0, .real_ns = T0};
    *stop = (sp__sync){
        .ticks = 1000 * US, .raw_ns = 1000 * US, .real_ns = T0 + 1000 * US + real_skew_ns};
    sp__clock_map(map, start, stop);
}

static sp_external_event ext(uint64_t tid, sp_event_type type, const char *name, int64_t start,
                             int64_t end)
{
    return (sp_external_event){.tid = tid,
                               .type = type,
                               .name = name,
                               .name_len = strlen(name),
                               .start_ns = start,
                               .end_ns = end};
}

static void test_external_time_follows_the_sync_points(void)
{
    sp__sync start, stop;
    sp__tick_map map;
    /* Realtime ran 1 ms fast over 1 s... here 1 us over 1 ms (0.1%): a time
     * read halfway is halfway on the time line. */
    identity_span(&start, &stop, &map, 1 * US);
    CHECK_EQ(stop.real_ns, sp__external_time(stop.real_ns, &start, &stop, &map));
    CHECK_EQ(sp__clock_to_real(&map, 0), sp__external_time(start.real_ns, &start, &stop, &map));
    int64_t half = start.real_ns + (stop.real_ns - start.real_ns) / 2;
    CHECK_EQ(sp__clock_to_real(&map, 500 * US), sp__external_time(half, &start, &stop, &map));
    /* A stepped realtime clock (off by 50%): the offset at stop only. */
    identity_span(&start, &stop, &map, 500 * US);
    CHECK_EQ(stop.real_ns - 10 * US,
             sp__external_time(stop.real_ns - 10 * US, &start, &stop, &map));
    /* A caller's time at either end of int64_t: clamped, with no signed
     * overflow (which UBSan reports). */
    CHECK(sp__external_time(INT64_MIN, &start, &stop, &map) == INT64_MIN);
    CHECK(sp__external_time(INT64_MAX, &start, &stop, &map) == INT64_MAX);
}

static void test_external_add_copies_and_cuts_names(void)
{
    sp__external x;
    sp__external_init(&x);
    char name[] = "matmul dygraph";
    char big[SP__EXT_NAME_MAX + 10];
    memset(big, 'a', sizeof big);
    sp_external_event in[2] = {
        ext(1, SP_EVENT_OPERATOR, name, 1, 2),
        {.tid = 1, .type = SP_EVENT_USER_DEFINED, .name = big, .name_len = sizeof big}};
    CHECK_EQ(0, sp__external_add(&x, in, 2));
    name[0] = 'X'; /* the caller's buffer may change: the name was copied */
    CHECK_EQ(2, x.count);
    CHECK_EQ(0, memcmp(x.names.data + x.events[0].name_off, "matmul dygraph", 14));
    CHECK_EQ(SP__EXT_NAME_MAX, x.events[1].name_len);
    CHECK_EQ(0, x.events[0].name_cut);
    CHECK_EQ(1, x.events[1].name_cut);
    sp__external_clear(&x);
    CHECK_EQ(0, x.count);
    CHECK_EQ(0, x.names.len);
    sp__external_fini(&x);
}

static void test_external_add_is_all_or_nothing(void)
{
    sp__external x;
    sp__external_init(&x);
    sp_external_event in[3] = {ext(1, SP_EVENT_OPERATOR, "a", 1, 2),
                               ext(1, SP_EVENT_OPERATOR, "b", 1, 2),
                               ext(1, SP_EVENT_OPERATOR, "c", 1, 2)};
    CHECK_EQ(0, sp__external_add(&x, in, 1));
    sp__alloc_fail_at(1); /* the events array grows: fails */
    sp__external x2;
    sp__external_init(&x2);
    CHECK_EQ(-1, sp__external_add(&x2, in, 3));
    CHECK_EQ(0, x2.count);
    sp__alloc_fail_at(2); /* the events array grows, the name buffer fails */
    CHECK_EQ(-1, sp__external_add(&x2, in, 3));
    CHECK_EQ(0, x2.count);
    sp__alloc_fail_at(0);
    CHECK_EQ(0, sp__external_add(&x2, in, 3));
    CHECK_EQ(3, x2.count);
    sp__external_fini(&x2);
    sp__external_fini(&x);
}

static void test_external_ranges_join_their_threads_and_nest(void)
{
    sp__sync start, stop;
    sp__tick_map map;
    identity_span(&start, &stop, &map, 0);
    sp_result *r = sp__result_new();
    r->span_start_ns = sp__clock_to_real(&map, start.ticks);
    r->span_end_ns = sp__clock_to_real(&map, stop.ticks);
    /* Thread 10 recorded "ProfileStep#0" [100, 900] us itself. */
    static const fixture_range host[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, T0 + 100 * US, T0 + 900 * US}};
    fixture_add_thread(r, 10, "main", host, 1);
    sp__external x;
    sp__external_init(&x);
    sp_external_event in[] = {
        ext(10, SP_EVENT_OPERATOR, "matmul dygraph", T0 + 200 * US, T0 + 300 * US),
        ext(10, SP_EVENT_OPERATOR_INNER, "matmul infer_meta", T0 + 210 * US, T0 + 220 * US),
        ext(5, SP_EVENT_DATALOADER, "_DataLoaderIterSingleProcess", T0 + 120 * US, T0 + 150 * US),
        ext(10, SP_EVENT_USER_DEFINED, "before", T0 - 5 * US, T0 + 10 * US),   /* out of window */
        ext(10, SP_EVENT_USER_DEFINED, "late", T0 + 950 * US, T0 + 2000 * US), /* cut at the end */
    };
    CHECK_EQ(0, sp__external_add(&x, in, 5));
    CHECK_EQ(0, sp__collect_external(r, &x, &start, &stop, &map));
    CHECK_EQ(1, r->counters[SP_COUNTER_OUT_OF_WINDOW]);
    CHECK_EQ(2, r->thread_count);
    CHECK_EQ(5, r->threads[0].tid);
    CHECK_EQ(10, r->threads[1].tid);
    sp__thread *t = &r->threads[1];
    CHECK_EQ(0, sp__tree_build(t->events, t->count));
    CHECK_EQ(4, t->count);
    CHECK_STR_EQ("ProfileStep#0", sp__result_name(r, t->events[0].name));
    CHECK_STR_EQ("matmul dygraph", sp__result_name(r, t->events[1].name));
    CHECK_EQ(SP_EVENT_OPERATOR, t->events[1].type);
    CHECK_EQ(0, t->events[1].parent);
    CHECK_EQ(SP_EVENT_OPERATOR_INNER, t->events[2].type);
    CHECK_EQ(1, t->events[2].parent);
    CHECK_EQ(2, t->events[2].depth);
    CHECK_STR_EQ("late", sp__result_name(r, t->events[3].name));
    CHECK_EQ(r->span_end_ns, t->events[3].end_ns);
    CHECK_EQ(SP_EVENT_DATALOADER, r->threads[0].events[0].type);
    CHECK_EQ(T0 + 120 * US, r->threads[0].events[0].start_ns);
    sp__external_fini(&x);
    sp__result_free(r);
}

/* Names are cut and repaired as recorded names are, and counted the same
 * way: a cut never splits a UTF-8 sequence ("é" across the 4096th byte),
 * and invalid UTF-8 becomes U+FFFD. */
static void test_external_names_cut_and_repaired_are_counted(void)
{
    sp__sync start, stop;
    sp__tick_map map;
    identity_span(&start, &stop, &map, 0);
    sp_result *r = sp__result_new();
    r->span_start_ns = sp__clock_to_real(&map, start.ticks);
    r->span_end_ns = sp__clock_to_real(&map, stop.ticks);
    static char long_name[SP__EXT_NAME_MAX + 1];
    memset(long_name, 'a', sizeof long_name);
    memcpy(long_name + SP__EXT_NAME_MAX - 1, "\xc3\xa9", 2); /* "é" at bytes 4095-4096 */
    sp__external x;
    sp__external_init(&x);
    sp_external_event in[] = {
        ext(7, SP_EVENT_OPERATOR, "fine", T0 + 100 * US, T0 + 200 * US),
        {.tid = 7, .type = SP_EVENT_OPERATOR, .name = long_name, .name_len = sizeof long_name,
         .start_ns = T0 + 300 * US, .end_ns = T0 + 400 * US},
        ext(7, SP_EVENT_OPERATOR, "bad \xff byte", T0 + 500 * US, T0 + 600 * US),
    };
    CHECK_EQ(0, sp__external_add(&x, in, 3));
    CHECK_EQ(SP__EXT_NAME_MAX - 1, x.events[1].name_len); /* "é" left whole, out */
    CHECK_EQ(0, sp__collect_external(r, &x, &start, &stop, &map));
    CHECK_U64_EQ(1, r->counters[SP_COUNTER_NAMES_CUT]);
    CHECK_U64_EQ(1, r->counters[SP_COUNTER_INVALID_UTF8]);
    sp__external_fini(&x);
    sp__result_free(r);
}

int main(void)
{
    RUN_TEST(test_external_time_follows_the_sync_points);
    RUN_TEST(test_external_add_copies_and_cuts_names);
    RUN_TEST(test_external_add_is_all_or_nothing);
    RUN_TEST(test_external_ranges_join_their_threads_and_nest);
    RUN_TEST(test_external_names_cut_and_repaired_are_counted);
    return TEST_SUMMARY();
}
