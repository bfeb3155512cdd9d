/* test_memory.c: memory events end to end: sp_memory_event records only
 * while a profile_memory profiler records, lands on its thread attached to
 * the innermost enclosing range, survives a bad call as a counted misuse, and
 * is written to the trace as [memory] / [reserved memory] instants that the
 * structural checker accepts. */
#include "check.h"
#include "collect.h"
#include "stepprof/stepprof.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sp_profiler *begin(int profile_memory)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.profile_memory = profile_memory;
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    CHECK_OK(sp_profiler_start(p));
    return p;
}

static void allocate_inside_an_op(void)
{
    sp_mem_info grow = {0x1000, 4096, 4096, 8192, 4096, 8192};
    sp_mem_info reserve = {0x1000, 8192, 4096, 8192, 4096, 8192};
    sp_mem_info release = {0x1000, -4096, 0, 8192, 4096, 8192};
    sp_range_begin(SP_EVENT_OPERATOR, "matmul");
    sp_memory_event(SP_MEM_RESERVED_ALLOCATE, "Place(gpu:0)", &reserve);
    sp_memory_event(SP_MEM_ALLOCATE, "Place(gpu:0)", &grow);
    sp_range_end();
    sp_memory_event(SP_MEM_FREE, "Place(gpu:0)", &release);
    sp_memory_event((sp_mem_event_type)9, "Place(cpu)", &grow); /* misuse */
    sp_memory_event(SP_MEM_ALLOCATE, "Place(cpu)", NULL);        /* misuse */
}

static void test_memory_events_recorded_and_attached(void)
{
    sp_profiler *p = begin(1);
    allocate_inside_an_op();
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    CHECK_EQ(1, r->thread_count);
    const sp__thread *t = &r->threads[0];
    CHECK_EQ(3, t->mem_count);
    CHECK_U64_EQ(2, sp_result_counter(r, SP_COUNTER_MISUSE));
    if (t->mem_count == 3) {
        CHECK_EQ(SP_MEM_RESERVED_ALLOCATE, t->mems[0].type);
        CHECK_STR_EQ("matmul", sp__result_name(r, t->events[t->mems[0].host].name));
        CHECK_EQ(4096, t->mems[1].bytes);
        CHECK_STR_EQ("Place(gpu:0)", sp__result_name(r, t->mems[1].place));
        CHECK_EQ(-4096, t->mems[2].bytes);
        CHECK_STR_EQ("ProfileStep#0", sp__result_name(r, t->events[t->mems[2].host].name));
    }
    /* The Memory Summary of the recorded span: matmul allocated 4096 on gpu:0 */
    static char text[1 << 14];
    FILE *f = fmemopen(text, sizeof text, "w");
    sp_summary_options so;
    sp_summary_options_init(&so);
    so.views = 1u << SP_VIEW_MEMORY;
    CHECK_OK(sp_result_summary(r, &so, f));
    fclose(f);
    CHECK(strstr(text, "Memory Summary - Place(gpu:0)") != NULL);
    CHECK(strstr(text, "matmul") != NULL);
    CHECK(strstr(text, "Peak Allocated Memory: 4096") != NULL);
    char path[] = "/tmp/stepprof-memory-XXXXXX.json";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    close(fd);
    CHECK_OK(sp_profiler_export(p, path, SP_FORMAT_JSON));
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s -B %s/tests/trace/tracecheck.py %s --expect-name '[memory]' "
             "--expect-name '[reserved memory]' >/dev/null && grep -q "
             "'\"Addr\":4096,\"Bytes\":-4096,\"Total Allocated\":0,\"Total Reserved\":8192,"
             "\"Device Id\":0,\"Device Type\":1' %s",
             SP_PYTHON, SP_SOURCE_DIR, path, path);
    CHECK_EQ(0, system(cmd));
    unlink(path);
    sp_profiler_destroy(p);
}

static void test_memory_events_need_profile_memory(void)
{
    sp_profiler *p = begin(0);
    allocate_inside_an_op();
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    CHECK_EQ(0, r->threads[0].mem_count);
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_MISUSE)); /* not even looked at */
    sp_profiler_destroy(p);
    sp_mem_info any = {1, 1, 1, 1, 1, 1};
    sp_memory_event(SP_MEM_ALLOCATE, "Place(cpu)", &any); /* no profiler: a no-op */
}

int main(void)
{
    RUN_TEST(test_memory_events_recorded_and_attached);
    RUN_TEST(test_memory_events_need_profile_memory);
    return TEST_SUMMARY();
}
