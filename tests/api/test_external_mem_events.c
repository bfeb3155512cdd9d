/* test_external_mem_events.c: sp_profiler_add_memory_events on a live
 * profiler: allocations another tracer measured reach the span's Memory
 * Summary, charged to the range (recorded or added) that was open when they
 * happened, and its [memory] trace events; bad arguments are refused with
 * nothing added, calls outside a span get SP_ESTATE, and events outside the
 * span are counted as out_of_window. */
#include "added_events.h"
#include "check.h"
#include "stepprof/stepprof.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static sp_profiler *make(void) { return make_quiet(NULL); }

static sp_external_mem_event mem(uint64_t tid, sp_mem_event_type type, int64_t ts, int64_t bytes,
                                 uint64_t peak)
{
    return (sp_external_mem_event){
        .tid = tid,
        .type = type,
        .place = "Place(cpu)",
        .place_len = 10,
        .ts_ns = ts,
        .info = {
            .addr = 0xabc0, .bytes = bytes, .peak_allocated = peak, .peak_reserved = peak * 2}};
}

/* The row of the Memory Summary named `name` (kind "Allocated" or
 * "Reserved"), as its cells joined by '|', or "" when missing. */
static const char *memory_row(sp_summary_table *t, const char *name, const char *kind)
{
    static char out[512];
    out[0] = 0;
    for (size_t l = 0; t && l < sp_summary_table_lines(t); l++) {
        if (sp_summary_table_line_kind(t, l) != SP_LINE_ROW) continue;
        if (strcmp(sp_summary_table_cell(t, l, 0), name) != 0) continue;
        if (strcmp(sp_summary_table_cell(t, l, 1), kind) != 0) continue;
        for (size_t c = 2; c < sp_summary_table_columns(t); c++) {
            strncat(out, sp_summary_table_cell(t, l, c), sizeof out - strlen(out) - 2);
            if (c + 1 < sp_summary_table_columns(t)) strcat(out, "|");
        }
    }
    return out;
}

static int table_has_text(sp_summary_table *t, const char *text)
{
    for (size_t l = 0; t && l < sp_summary_table_lines(t); l++)
        if (strcmp(sp_summary_table_cell(t, l, 0), text) == 0) return 1;
    return 0;
}

static void test_memory_events_reach_the_memory_summary_and_trace(void)
{
    sp_profiler *p = make();
    CHECK_OK(sp_profiler_start(p));
    int64_t a = realtime_ns();
    sp_range_begin(SP_EVENT_FORWARD, "forward");
    usleep(2000);
    sp_range_end();
    int64_t b = realtime_ns();
    uint64_t me = (uint64_t)gettid();
    /* An operator added beside them, in the middle of the span. */
    int64_t mid = a + (b - a) / 2;
    sp_external_event op = {me, SP_EVENT_OPERATOR, "matmul dygraph",
                            14, mid - 100000,      mid + 100000};
    CHECK_OK(sp_profiler_add_events(p, &op, 1));
    sp_external_mem_event ev[] = {
        mem(me, SP_MEM_ALLOCATE, mid, 4096, 4096),
        mem(me, SP_MEM_ALLOCATE, mid + 1000, 512, 4608),
        mem(me, SP_MEM_FREE, mid + 2000, -512, 4608),
        mem(me, SP_MEM_RESERVED_ALLOCATE, mid + 3000, 8192, 4608),
        mem(me, SP_MEM_ALLOCATE, a - 60000000000ll, 1, 1), /* a minute before the span */
    };
    CHECK_OK(sp_profiler_add_memory_events(p, ev, 5));
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    CHECK(r != NULL);
    if (!r) return;
    CHECK_EQ(1, sp_result_counter(r, SP_COUNTER_OUT_OF_WINDOW));
    sp_summary_table *t = NULL;
    CHECK_OK(sp_result_summary_table(r, SP_VIEW_MEMORY, NULL, &t));
    CHECK(t != NULL);
    CHECK(table_has_text(t, "Peak Allocated Memory: 4608"));
    CHECK(table_has_text(t, "Peak Reserved Memory: 9216"));
    CHECK_STR_EQ("2|1|4608|512|4096", memory_row(t, "matmul dygraph", "Allocated"));
    CHECK_STR_EQ("1|0|8192|0|8192", memory_row(t, "matmul dygraph", "Reserved"));
    sp_summary_table_destroy(t);
    /* sp_result_mem_event gives each back, in time order, with its range. */
    size_t th = SIZE_MAX;
    sp_thread_info ti;
    for (size_t i = 0; sp_result_thread(r, i, &ti) == SP_OK; i++)
        if (ti.tid == me) th = i;
    CHECK(th != SIZE_MAX);
    CHECK_U64_EQ(4, sp_result_mem_event_count(r, th));
    static const int64_t bytes[] = {4096, 512, -512, 8192};
    static const sp_mem_event_type types[] = {SP_MEM_ALLOCATE, SP_MEM_ALLOCATE, SP_MEM_FREE,
                                              SP_MEM_RESERVED_ALLOCATE};
    int64_t last = INT64_MIN;
    for (size_t i = 0; i < 4; i++) {
        sp_mem_event_info m;
        CHECK_OK(sp_result_mem_event(r, th, i, &m));
        CHECK_EQ(types[i], m.type);
        CHECK_EQ(bytes[i], m.info.bytes);
        CHECK_U64_EQ(0xabc0, m.info.addr);
        CHECK_STR_EQ("Place(cpu)", m.place);
        CHECK(m.ts_ns >= last);
        last = m.ts_ns;
        sp_event_info e;
        CHECK(m.event >= 0 && sp_result_event(r, th, (size_t)m.event, &e) == SP_OK);
        CHECK_STR_EQ("matmul dygraph", m.event >= 0 ? e.name : "");
    }
    sp_mem_event_info m;
    CHECK_U64_EQ(4608, sp_result_mem_event(r, th, 1, &m) == SP_OK ? m.info.peak_allocated : 0);
    CHECK_EQ(SP_EINVAL, sp_result_mem_event(r, th, 4, &m));
    CHECK_EQ(SP_EINVAL, sp_result_mem_event(r, sp_result_thread_count(r), 0, &m));
    CHECK_EQ(SP_EINVAL, sp_result_mem_event(r, th, 0, NULL));
    CHECK_U64_EQ(0, sp_result_mem_event_count(r, sp_result_thread_count(r)));
    CHECK_U64_EQ(0, sp_result_mem_event_count(NULL, 0));
    /* The trace holds them as [memory] / [reserved memory] events. */
    char path[] = "/tmp/sp_test_ext_mem_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    CHECK_OK(sp_result_export(r, path, SP_FORMAT_JSON));
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    static char text[1 << 20];
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = 0;
    if (f) fclose(f);
    unlink(path);
    int count = 0;
    for (const char *s = text; (s = strstr(s, "\"name\":\"[memory]\"")) != NULL; s++)
        count++;
    CHECK_EQ(3, count);
    CHECK(strstr(text, "\"name\":\"[reserved memory]\"") != NULL);
    CHECK(strstr(text, "\"Bytes\":-512") != NULL);
    sp_profiler_destroy(p);
}

static void test_memory_events_refused_with_bad_arguments(void)
{
    sp_profiler *p = make();
    sp_external_mem_event ev = mem(1, SP_MEM_ALLOCATE, realtime_ns(), 1, 1);
    CHECK_EQ(SP_ESTATE, sp_profiler_add_memory_events(p, &ev, 1));
    CHECK_OK(sp_profiler_start(p));
    ev = mem((uint64_t)gettid(), SP_MEM_ALLOCATE, realtime_ns(), 1, 1); /* in ProfileStep#0 */
    CHECK_EQ(SP_EINVAL, sp_profiler_add_memory_events(NULL, &ev, 1));
    CHECK_EQ(SP_EINVAL, sp_profiler_add_memory_events(p, NULL, 1));
    CHECK_OK(sp_profiler_add_memory_events(p, NULL, 0));
    sp_external_mem_event bad[2] = {ev, ev};
    bad[1].type = (sp_mem_event_type)4;
    CHECK_EQ(SP_EINVAL, sp_profiler_add_memory_events(p, bad, 2));
    CHECK(strstr(sp_last_error(), "event 1 has unknown type 4") != NULL);
    bad[1].type = (sp_mem_event_type)-1;
    CHECK_EQ(SP_EINVAL, sp_profiler_add_memory_events(p, bad, 2));
    sp_external_mem_event noplace = ev;
    noplace.place = NULL;
    CHECK_EQ(SP_EINVAL, sp_profiler_add_memory_events(p, &noplace, 1));
    noplace.place_len = 0; /* no place at all: an empty one */
    noplace.info.bytes = 77;
    CHECK_OK(sp_profiler_add_memory_events(p, &noplace, 1));
    CHECK_OK(sp_profiler_stop(p));
    /* Only the empty-place event reached the result: the refused calls
     * added nothing (ev's allocation of 1 byte would show as a row). */
    sp_summary_table *t = NULL;
    CHECK_OK(sp_result_summary_table(sp_profiler_result(p), SP_VIEW_MEMORY, NULL, &t));
    CHECK(t != NULL);
    CHECK_STR_EQ("1|0|77|0|77", memory_row(t, "ProfileStep#0", "Allocated"));
    sp_summary_table_destroy(t);
    CHECK_EQ(SP_ESTATE, sp_profiler_add_memory_events(p, &ev, 1));
    sp_profiler_destroy(p);
}

int main(void)
{
    RUN_TEST(test_memory_events_reach_the_memory_summary_and_trace);
    RUN_TEST(test_memory_events_refused_with_bad_arguments);
    return TEST_SUMMARY();
}
