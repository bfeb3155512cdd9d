/* test_external_mem.c: memory events measured by another tracer
 * (external_mem.c) with synthetic sync points: places are copied, cut and
 * stored once per run, an add is all or nothing, events go to the thread of
 * their tid merged by time with that thread's own memory events, times go
 * through the same sync points as the external ranges (so an allocation
 * inside an added range is charged to it), and events outside the span,
 * at either end of int64_t included, are counted as out_of_window. */
#include "fixture.h"

#define US 1000ll
#define T0 1000000000000ll

/* Ticks that are nanoseconds: the map is the identity plus T0. */
static void identity_span(sp__sync *start, sp__sync *stop, sp__tick_map *map)
{
    *start = (sp__sync){.ticks = 0, .raw_ns = 0, .real_ns = T0};
    *stop = (sp__sync){.ticks = 1000 * US, .raw_ns = 1000 * US, .real_ns = T0 + 1000 * US};
    sp__clock_map(map, start, stop);
}

static sp_result *span_result(const sp__sync *start, const sp__sync *stop, const sp__tick_map *map)
{
    sp_result *r = sp__result_new();
    CHECK(r != NULL);
    r->span_start_ns = sp__clock_to_real(map, start->ticks);
    r->span_end_ns = sp__clock_to_real(map, stop->ticks);
    return r;
}

static sp_external_mem_event mem(uint64_t tid, sp_mem_event_type type, const char *place,
                                 int64_t ts, int64_t bytes)
{
    return (sp_external_mem_event){.tid = tid,
                                   .type = type,
                                   .place = place,
                                   .place_len = place ? strlen(place) : 0,
                                   .ts_ns = ts,
                                   .info = {.addr = 0x1000,
                                            .bytes = bytes,
                                            .current_allocated = 64,
                                            .current_reserved = 128,
                                            .peak_allocated = 256,
                                            .peak_reserved = 512}};
}

static void test_ext_mems_add_copies_cuts_and_shares_places(void)
{
    sp__ext_mems m;
    sp__ext_mems_init(&m);
    char place[] = "Place(cpu)";
    static char big[SP__EXT_NAME_MAX + 10];
    memset(big, 'p', sizeof big);
    sp_external_mem_event in[4] = {
        mem(1, SP_MEM_ALLOCATE, place, 1, 16),
        mem(1, SP_MEM_FREE, place, 2, -16),
        {.tid = 1, .type = SP_MEM_RESERVED_ALLOCATE, .place = big, .place_len = sizeof big},
        mem(1, SP_MEM_ALLOCATE, NULL, 3, 8)};
    CHECK_EQ(0, sp__ext_mems_add(&m, in, 4));
    place[0] = 'X'; /* the caller's buffer may change: the place was copied */
    CHECK_EQ(4, m.count);
    CHECK_EQ(0, memcmp(m.places.data + m.mems[0].place_off, "Place(cpu)", 10));
    CHECK_EQ(m.mems[0].place_off, m.mems[1].place_off); /* a run of one place is stored once */
    CHECK_EQ(10 + SP__EXT_NAME_MAX, m.places.len);
    CHECK_EQ(SP__EXT_NAME_MAX, m.mems[2].place_len);
    CHECK_EQ(1, m.mems[2].place_cut);
    CHECK_EQ(0, m.mems[3].place_len);
    CHECK_EQ(-16, m.mems[1].info.bytes);
    CHECK_EQ(SP_MEM_RESERVED_ALLOCATE, m.mems[2].type);
    sp__ext_mems_clear(&m);
    CHECK_EQ(0, m.count);
    CHECK_EQ(0, m.places.len);
    sp__ext_mems_fini(&m);
}

static void test_ext_mems_add_is_all_or_nothing(void)
{
    sp__ext_mems m;
    sp__ext_mems_init(&m);
    sp_external_mem_event in[3] = {mem(1, SP_MEM_ALLOCATE, "a", 1, 1),
                                   mem(1, SP_MEM_ALLOCATE, "b", 1, 1),
                                   mem(1, SP_MEM_ALLOCATE, "c", 1, 1)};
    sp__alloc_fail_at(1); /* the events array: fails */
    CHECK_EQ(-1, sp__ext_mems_add(&m, in, 3));
    CHECK_EQ(0, m.count);
    sp__alloc_fail_at(2); /* the events array grows, the place buffer fails */
    CHECK_EQ(-1, sp__ext_mems_add(&m, in, 3));
    CHECK_EQ(0, m.count);
    CHECK_EQ(0, m.places.failed); /* a later add may succeed */
    sp__alloc_fail_at(0);
    CHECK_EQ(0, sp__ext_mems_add(&m, in, 3));
    CHECK_EQ(3, m.count);
    sp__ext_mems_fini(&m);
}

/* Added events are merged by time with the thread's own (at equal times
 * the thread's first, then the added ones in the order given); a tid with
 * no thread gets one; out-of-window events, however far, are counted. */
static void test_ext_mems_merge_by_time_and_count_out_of_window(void)
{
    sp__sync start, stop;
    sp__tick_map map;
    identity_span(&start, &stop, &map);
    sp_result *r = span_result(&start, &stop, &map);
    if (!r) return;
    static const fixture_range host[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, T0 + 100 * US, T0 + 900 * US}};
    fixture_add_thread(r, 10, "main", host, 1);
    sp__thread *t = &r->threads[0];
    t->mems = sp__alloc(sizeof *t->mems * 2);
    CHECK(t->mems != NULL);
    if (!t->mems) return;
    uint32_t own = sp__names_from_ptr(&r->names, "Place(gpu:0)");
    t->mems[0] = (sp__mem_event){.ts_ns = T0 + 200 * US, .place = own, .bytes = 1, .host = -1};
    t->mems[1] = (sp__mem_event){.ts_ns = T0 + 400 * US, .place = own, .bytes = 2, .host = -1};
    t->mem_count = 2;
    sp__external x;
    sp__external_init(&x);
    sp_external_mem_event in[] = {
        mem(10, SP_MEM_FREE, "Place(cpu)", T0 + 400 * US, -3),         /* tie: after the own one */
        mem(10, SP_MEM_ALLOCATE, "Place(cpu)", T0 + 150 * US, 4),      /* given out of order */
        mem(10, SP_MEM_ALLOCATE, "Place(cpu)", T0 + 400 * US, 5),      /* tie: in the order given */
        mem(3, SP_MEM_RESERVED_FREE, "Place(cpu)", T0 + 500 * US, -6), /* a new thread */
        mem(10, SP_MEM_ALLOCATE, "Place(cpu)", T0 - 1 * US, 7),        /* before the span */
        mem(10, SP_MEM_ALLOCATE, "Place(cpu)", T0 + 1001 * US, 8),     /* after it */
        mem(10, SP_MEM_ALLOCATE, "Place(cpu)", INT64_MIN, 9),
        mem(10, SP_MEM_ALLOCATE, "Place(cpu)", INT64_MAX, 10),
    };
    CHECK_EQ(0, sp__ext_mems_add(&x.mems, in, 8));
    CHECK_EQ(0, sp__collect_external(r, &x, &start, &stop, &map));
    CHECK_U64_EQ(4, r->counters[SP_COUNTER_OUT_OF_WINDOW]);
    CHECK_EQ(2, r->thread_count);
    CHECK_EQ(3, r->threads[0].tid);
    t = &r->threads[1];
    CHECK_EQ(5, t->mem_count);
    static const int64_t bytes[] = {4, 1, 2, -3, 5};
    for (size_t i = 0; i < 5 && i < t->mem_count; i++)
        CHECK_EQ(bytes[i], t->mems[i].bytes);
    CHECK_STR_EQ("Place(cpu)", sp__result_name(r, t->mems[0].place));
    CHECK_STR_EQ("Place(gpu:0)", sp__result_name(r, t->mems[1].place));
    CHECK_EQ(T0 + 150 * US, t->mems[0].ts_ns);
    CHECK_EQ(SP_MEM_ALLOCATE, t->mems[0].type);
    CHECK_EQ(0x1000, t->mems[0].addr);
    CHECK_U64_EQ(64, t->mems[0].current_allocated);
    CHECK_U64_EQ(128, t->mems[0].current_reserved);
    CHECK_U64_EQ(256, t->mems[0].peak_allocated);
    CHECK_U64_EQ(512, t->mems[0].peak_reserved);
    CHECK_EQ(1, r->threads[0].mem_count);
    CHECK_EQ(SP_MEM_RESERVED_FREE, r->threads[0].mems[0].type);
    sp__external_fini(&x);
    sp__result_free(r);
}

/* An allocation inside an added range is charged to it: both times go
 * through the same sync points, here with a realtime clock that ran 0.5%
 * fast, so that times are scaled, not only shifted. */
static void test_ext_mems_are_charged_to_the_added_range_around_them(void)
{
    sp__sync start = {.ticks = 0, .raw_ns = 0, .real_ns = T0};
    sp__sync stop = {.ticks = 1000 * US, .raw_ns = 1000 * US, .real_ns = T0 + 1005 * US};
    sp__tick_map map;
    sp__clock_map(&map, &start, &stop);
    sp_result *r = span_result(&start, &stop, &map);
    if (!r) return;
    sp__external x;
    sp__external_init(&x);
    sp_external_event op = {.tid = 9,
                            .type = SP_EVENT_OPERATOR,
                            .name = "matmul dygraph",
                            .name_len = 14,
                            .start_ns = T0 + 300 * US,
                            .end_ns = T0 + 301 * US};
    CHECK_EQ(0, sp__external_add(&x, &op, 1));
    sp_external_mem_event in[] = {mem(9, SP_MEM_ALLOCATE, "Place(cpu)", T0 + 300 * US, 1),
                                  mem(9, SP_MEM_ALLOCATE, "Place(cpu)", T0 + 301 * US, 2),
                                  mem(9, SP_MEM_FREE, "Place(cpu)", T0 + 301 * US + 1, -3)};
    CHECK_EQ(0, sp__ext_mems_add(&x.mems, in, 3));
    CHECK_EQ(0, sp__collect_external(r, &x, &start, &stop, &map));
    sp__thread *t = &r->threads[0];
    sp__tree_build(t->events, t->count);
    CHECK_EQ(0, sp__attribute(r));
    CHECK_EQ(3, t->mem_count);
    CHECK_EQ(0, t->mems[0].host); /* at the range's start */
    CHECK_EQ(0, t->mems[1].host); /* at its end: the closed interval */
    CHECK_EQ(-1, t->mems[2].host);
    sp__external_fini(&x);
    sp__result_free(r);
}

/* Odd places are cut and repaired as names are, and counted the same way. */
static void test_ext_mems_odd_places_are_counted(void)
{
    sp__sync start, stop;
    sp__tick_map map;
    identity_span(&start, &stop, &map);
    sp_result *r = span_result(&start, &stop, &map);
    if (!r) return;
    static char long_place[SP__EXT_NAME_MAX + 1];
    memset(long_place, 'a', sizeof long_place);
    memcpy(long_place + SP__EXT_NAME_MAX - 1, "\xc3\xa9", 2); /* "é" at bytes 4095-4096 */
    sp__external x;
    sp__external_init(&x);
    sp_external_mem_event in[] = {
        mem(7, SP_MEM_ALLOCATE, "fine", T0 + 100 * US, 1),
        {.tid = 7,
         .type = SP_MEM_ALLOCATE,
         .place = long_place,
         .place_len = sizeof long_place,
         .ts_ns = T0 + 200 * US},
        mem(7, SP_MEM_ALLOCATE, "bad \xff byte", T0 + 300 * US, 1),
        mem(7, SP_MEM_ALLOCATE, "", T0 + 400 * US, 1),
    };
    CHECK_EQ(0, sp__ext_mems_add(&x.mems, in, 4));
    CHECK_EQ(SP__EXT_NAME_MAX - 1, x.mems.mems[1].place_len); /* "é" left whole, out */
    CHECK_EQ(0, sp__collect_external(r, &x, &start, &stop, &map));
    CHECK_U64_EQ(1, r->counters[SP_COUNTER_NAMES_CUT]);
    CHECK_U64_EQ(1, r->counters[SP_COUNTER_INVALID_UTF8]);
    CHECK_EQ(4, r->threads[0].mem_count);
    CHECK_STR_EQ("", sp__result_name(r, r->threads[0].mems[3].place));
    sp__external_fini(&x);
    sp__result_free(r);
}

/* Out of memory while merging: -1, and the result stays whole (freed). */
static void test_ext_mems_collect_fails_cleanly_without_memory(void)
{
    sp__sync start, stop;
    sp__tick_map map;
    identity_span(&start, &stop, &map);
    for (int n = 1; n <= 3; n++) {
        sp_result *r = span_result(&start, &stop, &map);
        if (!r) return;
        sp__ext_mems m;
        sp__ext_mems_init(&m);
        sp_external_mem_event in[] = {mem(7, SP_MEM_ALLOCATE, "Place(cpu)", T0 + 100 * US, 1),
                                      mem(8, SP_MEM_FREE, "Place(cpu)", T0 + 200 * US, -1)};
        CHECK_EQ(0, sp__ext_mems_add(&m, in, 2));
        sp__alloc_fail_at(n);
        int rc = sp__collect_ext_mems(r, &m, &start, &stop, &map);
        sp__alloc_fail_at(0);
        CHECK_EQ(-1, rc);
        sp__ext_mems_fini(&m);
        sp__result_free(r);
    }
}

int main(void)
{
    RUN_TEST(test_ext_mems_add_copies_cuts_and_shares_places);
    RUN_TEST(test_ext_mems_add_is_all_or_nothing);
    RUN_TEST(test_ext_mems_merge_by_time_and_count_out_of_window);
    RUN_TEST(test_ext_mems_are_charged_to_the_added_range_around_them);
    RUN_TEST(test_ext_mems_odd_places_are_counted);
    RUN_TEST(test_ext_mems_collect_fails_cleanly_without_memory);
    return TEST_SUMMARY();
}
