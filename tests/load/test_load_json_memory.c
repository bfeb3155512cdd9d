/* test_load_json_memory.c: allocator events of a chrome trace come back as memory
 * events of the right kind (load_json.c, trace-format.md §6 and §8):
 * "[memory]" is Allocate or Free, "[reserved memory]" is ReservedAllocate
 * or ReservedFree (by the sign of Bytes), on the place that Device Type and
 * Device Id name, with their address, size, totals and running peaks; and a
 * result with all four kinds keeps them through a JSON save and load; and
 * \u escapes decode to UTF-8 of every length. */
#include "fixture.h"
#include "load.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define US 1000ll
#define T0 1795000000000000000ll

static char dir[] = "/tmp/sp_load_json_XXXXXX";

static const char trace[] =
    "{\"schemaVersion\":1,\"baseTimeNanoseconds\":1795000000000000000,\"traceEvents\":[\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#0\",\"pid\":5,\"tid\":7,\"ts\":1.000,"
    "\"dur\":100.000,\"args\":{\"Event Type\":\"ProfileStep\"}},\n"
    "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":5,\"tid\":7,"
    "\"ts\":10.000,\"args\":{\"Addr\":4096,\"Bytes\":64,\"Total Allocated\":64,\"Total Reserved\":0,"
    "\"Device Id\":-1,\"Device Type\":0}},\n"
    "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"[reserved memory]\",\"pid\":5,"
    "\"tid\":7,\"ts\":20.000,\"args\":{\"Addr\":8192,\"Bytes\":4096,\"Total Allocated\":0,"
    "\"Total Reserved\":4096,\"Device Id\":1,\"Device Type\":1}},\n"
    "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"[reserved memory]\",\"pid\":5,"
    "\"tid\":7,\"ts\":30.000,\"args\":{\"Addr\":8192,\"Bytes\":-1024,\"Total Allocated\":0,"
    "\"Total Reserved\":3072,\"Device Id\":1,\"Device Type\":1}},\n"
    "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":5,\"tid\":7,"
    "\"ts\":40.000,\"args\":{\"Addr\":4096,\"Bytes\":-64,\"Total Allocated\":0,\"Total Reserved\":0,"
    "\"Device Id\":-1,\"Device Type\":0}}\n"
    "]}\n";

static void test_load_json_memory_and_reserved_memory(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/memory.json", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(trace, f);
    fclose(f);
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    if (!r) return;
    CHECK_EQ(1, r->thread_count);
    const sp__thread *t = &r->threads[0];
    CHECK_EQ(7, t->tid);
    CHECK_EQ(4, t->mem_count);
    static const struct {
        int64_t ts_us;
        int type;
        const char *place;
        uint64_t addr;
        int64_t bytes;
        uint64_t allocated, reserved, peak_allocated, peak_reserved;
    } want[] = {
        {10, SP_MEM_ALLOCATE, "Place(cpu)", 4096, 64, 64, 0, 64, 0},
        {20, SP_MEM_RESERVED_ALLOCATE, "Place(gpu:1)", 8192, 4096, 0, 4096, 0, 4096},
        {30, SP_MEM_RESERVED_FREE, "Place(gpu:1)", 8192, -1024, 0, 3072, 0, 4096},
        {40, SP_MEM_FREE, "Place(cpu)", 4096, -64, 0, 0, 64, 0},
    };
    for (size_t i = 0; i < 4 && i < t->mem_count; i++) {
        const sp__mem_event *m = &t->mems[i];
        CHECK_EQ(T0 + want[i].ts_us * US, m->ts_ns);
        CHECK_EQ(want[i].type, m->type);
        CHECK_STR_EQ(want[i].place, sp__result_name(r, m->place));
        CHECK_EQ(want[i].addr, m->addr);
        CHECK_EQ(want[i].bytes, m->bytes);
        CHECK_EQ(want[i].allocated, m->current_allocated);
        CHECK_EQ(want[i].reserved, m->current_reserved);
        CHECK_EQ(want[i].peak_allocated, m->peak_allocated);
        CHECK_EQ(want[i].peak_reserved, m->peak_reserved);
    }
    sp_result_release(r);
}

static void test_load_json_memory_kinds_survive_a_save(void)
{
    sp_result *live = sp__result_new();
    live->span_start_ns = T0;
    live->span_end_ns = T0 + 1000 * US;
    live->meta.profile_memory = 1;
    const fixture_range ranges[] = {{"ProfileStep#0", SP_EVENT_PROFILE_STEP, T0, T0 + 1000 * US}};
    fixture_add_thread(live, 3, "main", ranges, 1);
    sp__thread *m = &live->threads[0];
    fixture_add_mem(live, m, T0 + 10 * US, SP_MEM_ALLOCATE, "Place(cpu)", 0x10, 100, 100, 0, 100, 0);
    fixture_add_mem(live, m, T0 + 20 * US, SP_MEM_RESERVED_ALLOCATE, "Place(gpu:0)", 0x20, 512, 100, 512, 100, 512);
    fixture_add_mem(live, m, T0 + 30 * US, SP_MEM_RESERVED_FREE, "Place(gpu:0)", 0x20, -512, 100, 0, 100, 512);
    fixture_add_mem(live, m, T0 + 40 * US, SP_MEM_FREE, "Place(cpu)", 0x10, -100, 0, 0, 100, 512);
    CHECK_EQ(0, sp__attribute(live));
    char path[256];
    snprintf(path, sizeof path, "%s/kinds.json", dir);
    CHECK_OK(sp_result_export(live, path, SP_FORMAT_JSON));
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    if (r) {
        CHECK_EQ(1, r->thread_count);
        CHECK_EQ(4, r->threads[0].mem_count);
        for (size_t i = 0; i < 4 && i < r->threads[0].mem_count; i++) {
            const sp__mem_event *a = &m->mems[i], *b = &r->threads[0].mems[i];
            CHECK_EQ(a->type, b->type);
            CHECK_EQ(a->bytes, b->bytes);
            CHECK_EQ(a->addr, b->addr);
            CHECK_EQ(a->ts_ns, b->ts_ns);
            CHECK_STR_EQ(sp__result_name(live, a->place), sp__result_name(r, b->place));
            CHECK_EQ(a->current_reserved, b->current_reserved);
        }
    }
    sp_result_release(r);
    sp_result_release(live);
}

/* \u escapes decode to UTF-8 of one, two, three and four bytes (json_lex.c). */
static void test_load_json_unicode_escapes(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/escapes.json", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("{\"traceEvents\":[\n"
          "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\\u0041\\u00e9\\u07ff\\u0800\\u4e2d\\ud83d\\ude00\","
          "\"pid\":5,\"tid\":7,\"ts\":1.000,\"dur\":2.000,\"args\":{\"Event Type\":\"Operator\"}}\n]}\n",
          f);
    fclose(f);
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    if (!r) return;
    sp_event_info e;
    CHECK_OK(sp_result_event(r, 0, 0, &e));
    CHECK_STR_EQ("aA\xc3\xa9\xdf\xbf\xe0\xa0\x80\xe4\xb8\xad\xf0\x9f\x98\x80", e.name);
    sp_result_release(r);
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    RUN_TEST(test_load_json_memory_and_reserved_memory);
    RUN_TEST(test_load_json_memory_kinds_survive_a_save);
    RUN_TEST(test_load_json_unicode_escapes);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return TEST_SUMMARY();
}
