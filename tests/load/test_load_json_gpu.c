/* test_load_json_gpu.c: the GPU records of stepprof's own Chrome-trace JSON
 * read back (load_json.c, json_cuda.c). A result built by hand (runtime and
 * driver calls inside host ranges on two threads, kernels, a memcpy, a
 * memset, an unattributed kernel, device properties) is exported and
 * loaded: the records come back with their detail, each attributed to the
 * call and host range that launched it, and the summary of the loaded
 * result is the live one, character for character. Corrupt GPU events are
 * skipped and counted (load_skipped), never a crash. */
#include "export.h"
#include "fixture.h"
#include "stepprof/stepprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/sp_load_json_gpu_XXXXXX";
static char path[300];

static sp__device_props h100(uint32_t id)
{
    sp__device_props p = {0};
    p.id = id;
    snprintf(p.name, sizeof p.name, "Test GPU %u", id);
    p.total_global_mem = 85899345920ull;
    p.compute_major = 9;
    p.max_threads_per_block = 1024;
    p.max_threads_per_sm = 2048;
    p.regs_per_block = 65536;
    p.regs_per_sm = 65536;
    p.warp_size = 32;
    p.shared_per_block = 49152;
    p.shared_per_sm = 233472;
    p.shared_per_block_optin = 232448;
    p.num_sms = 132;
    return p;
}

static void set_kernel(sp_result *r, uint32_t grid, uint32_t block, uint32_t regs, uint32_t shared)
{
    r->devices[r->device_count - 1].detail.kernel =
        (sp__kernel_detail){{grid, 2, 1}, {block, 1, 1}, regs, shared, 0, 0, 0, 0, 0};
}

/* Two steps on a main thread and a worker; times from a base 1 ms back. */
static sp_result *gpu_result(void)
{
    sp_result *r = sp__result_new();
    int64_t s0 = sp__base_time_ns() + 1000000;
    r->span_start_ns = s0;
    r->span_end_ns = s0 + 400000;
    r->meta.pid = 4321;
    snprintf(r->meta.process_name, sizeof r->meta.process_name, "train");
    const fixture_range main_ranges[] = {
        {"ProfileStep#1", SP_EVENT_PROFILE_STEP, s0 + 10, s0 + 100000},
        {"forward", SP_EVENT_FORWARD, s0 + 100, s0 + 50000},
        {"matmul", SP_EVENT_OPERATOR, s0 + 200, s0 + 5000},
        {"add", SP_EVENT_OPERATOR, s0 + 6000, s0 + 9000},
        {"ProfileStep#2", SP_EVENT_PROFILE_STEP, s0 + 100000, s0 + 300000},
        {"backward", SP_EVENT_BACKWARD, s0 + 100100, s0 + 200000},
    };
    const fixture_range worker_ranges[] = {
        {"worker_op", SP_EVENT_OPERATOR, s0 + 100, s0 + 1000},
    };
    fixture_add_thread(r, 4321, "main", main_ranges, sizeof main_ranges / sizeof *main_ranges);
    fixture_add_thread(r, 4400, "worker", worker_ranges, 1);
    sp__thread *m = &r->threads[0], *w = &r->threads[1];
    fixture_add_runtime(r, m, "cudaLaunchKernel_v7000", s0 + 400, s0 + 410, 1);
    fixture_add_runtime(r, m, "cudaMemcpyAsync_v3020", s0 + 6100, s0 + 6200, 2);
    fixture_add_runtime(r, m, "cudaMemsetAsync_v3020", s0 + 6300, s0 + 6350, 3);
    fixture_add_runtime(r, m, "cuLaunchKernel", s0 + 60100, s0 + 60200, 4);
    m->runtimes[3].driver = 1;
    m->runtimes[3].cbid = 307;
    fixture_add_runtime(r, m, "cudaLaunchKernel_v7000", s0 + 100200, s0 + 100210, 6);
    fixture_add_runtime(r, m, "cudaDeviceSynchronize_v3020", s0 + 150000, s0 + 160000, 7);
    fixture_add_runtime(r, w, "cudaLaunchKernel_v7000", s0 + 150, s0 + 160, 5);

    fixture_add_device(r, "gemm_kernel", SP_EVENT_KERNEL, s0 + 1000, s0 + 2000, 0, 7, 1);
    set_kernel(r, 165, 256, 96, 16384);
    fixture_add_device(r, "MEMCPY_HtoD", SP_EVENT_MEMCPY, s0 + 7000, s0 + 8000, 0, 7, 2);
    r->devices[r->device_count - 1].bytes = 1000000;
    r->devices[r->device_count - 1].detail.copy = (sp__copy_detail){0, 0, 2}; /* Pageable -> Device */
    fixture_add_device(r, "MEMSET", SP_EVENT_MEMSET, s0 + 8000, s0 + 8500, 0, 7, 3);
    r->devices[r->device_count - 1].bytes = 4096;
    r->devices[r->device_count - 1].detail.set = (sp__set_detail){2, 0}; /* Device */
    fixture_add_device(r, "nccl_kernel", SP_EVENT_KERNEL, s0 + 61000, s0 + 62000, 1, 13, 4);
    set_kernel(r, 1, 512, 0, 0);
    fixture_add_device(r, "worker_kernel", SP_EVENT_KERNEL, s0 + 2000, s0 + 2100, 0, 9, 5);
    set_kernel(r, 264, 64, 32, 0);
    fixture_add_device(r, "gemm_kernel", SP_EVENT_KERNEL, s0 + 101000, s0 + 103000, 0, 7, 6);
    set_kernel(r, 165, 256, 96, 16384);
    fixture_add_device(r, "lost_kernel", SP_EVENT_KERNEL, s0 + 63000, s0 + 63100, 1, 13, 99);
    set_kernel(r, 1, 32, 0, 0);

    r->device_props = sp__alloc(sizeof *r->device_props * 2);
    CHECK(r->device_props != NULL);
    if (r->device_props) {
        r->device_props[0] = h100(0);
        r->device_props[1] = h100(1);
        r->device_prop_count = 2;
    }
    CHECK_EQ(0, sp__attribute(r));
    return r;
}

static char *summary_text(const sp_result *r)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    CHECK(mem != NULL);
    if (!mem) return NULL;
    CHECK_OK(sp_result_summary(r, NULL, mem));
    fclose(mem);
    return text;
}

/* The name of the host range that launched device record d, or "". */
static const char *launcher_range(const sp_result *r, const sp__device_rec *d)
{
    if (d->thread < 0 || d->runtime < 0) return "";
    const sp__thread *t = &r->threads[d->thread];
    int32_t host = t->runtimes[d->runtime].host;
    return host >= 0 ? sp__result_name(r, t->events[host].name) : "(thread root)";
}

static const sp__device_rec *by_correlation(const sp_result *r, uint32_t corr)
{
    for (size_t i = 0; i < r->device_count; i++)
        if (r->devices[i].correlation == corr) return &r->devices[i];
    return NULL;
}

static size_t count_type(const sp_result *r, sp_event_type type)
{
    size_t n = 0;
    for (size_t i = 0; i < r->device_count; i++) n += r->devices[i].type == type;
    return n;
}

static void test_load_json_gpu_round_trip(void)
{
    sp_result *live = gpu_result();
    snprintf(path, sizeof path, "%s/gpu.json", dir);
    CHECK_OK(sp__export(live, path, SP_FORMAT_JSON));
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    if (!r) {
        sp_result_release(live);
        return;
    }
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_LOAD_SKIPPED));
    CHECK_EQ(live->device_count, r->device_count);
    CHECK_EQ((size_t)5, count_type(r, SP_EVENT_KERNEL));
    CHECK_EQ((size_t)1, count_type(r, SP_EVENT_MEMCPY));
    CHECK_EQ((size_t)1, count_type(r, SP_EVENT_MEMSET));
    CHECK_EQ((size_t)2, r->thread_count);
    CHECK_EQ(live->threads[0].runtime_count, r->threads[0].runtime_count);
    CHECK_EQ(live->threads[1].runtime_count, r->threads[1].runtime_count);

    /* Each record comes back with its detail and its launching range. */
    for (size_t i = 0; i < live->device_count; i++) {
        const sp__device_rec *a = &live->devices[i];
        const sp__device_rec *b = by_correlation(r, a->correlation);
        CHECK(b != NULL);
        if (!b) continue;
        CHECK_STR_EQ(sp__result_name(live, a->name), sp__result_name(r, b->name));
        CHECK_EQ(a->start_ns, b->start_ns);
        CHECK_EQ(a->end_ns, b->end_ns);
        CHECK_EQ(a->device, b->device);
        CHECK_EQ(a->stream, b->stream);
        CHECK_EQ(a->context, b->context);
        CHECK_U64_EQ(a->bytes, b->bytes);
        CHECK_EQ(a->thread, b->thread);
        CHECK_STR_EQ(launcher_range(live, a), launcher_range(r, b));
        if (a->type == SP_EVENT_KERNEL)
            CHECK(memcmp(&a->detail.kernel, &b->detail.kernel, sizeof a->detail.kernel) == 0);
        else
            CHECK(memcmp(&a->detail, &b->detail, sizeof a->detail.copy) == 0);
    }
    CHECK_STR_EQ("matmul", launcher_range(r, by_correlation(r, 1)));
    CHECK_STR_EQ("add", launcher_range(r, by_correlation(r, 2)));
    CHECK_STR_EQ("worker_op", launcher_range(r, by_correlation(r, 5)));
    CHECK_STR_EQ("backward", launcher_range(r, by_correlation(r, 6)));
    CHECK_EQ(-1, by_correlation(r, 99)->thread); /* no call launched it */

    /* Calls keep their kind and cbid; the name loses its _vNNNN. */
    const sp__runtime *drv = &r->threads[0].runtimes[3];
    CHECK_STR_EQ("cuLaunchKernel", sp__result_name(r, drv->name));
    CHECK_EQ(1, drv->driver);
    CHECK_EQ(307u, drv->cbid);
    CHECK_STR_EQ("cudaLaunchKernel", sp__result_name(r, r->threads[0].runtimes[0].name));
    CHECK_EQ(0, r->threads[0].runtimes[0].driver);

    CHECK_EQ((size_t)2, r->device_prop_count);
    if (r->device_prop_count == 2)
        CHECK(memcmp(&live->device_props[1], &r->device_props[1], sizeof *r->device_props) == 0);

    /* Every table, the Overview and Kernel Summary included, as live. */
    char *want = summary_text(live), *got = summary_text(r);
    CHECK(want && strstr(want, "Kernel Summary") && strstr(want, "gemm_kernel"));
    CHECK_STR_EQ(want ? want : "", got ? got : "");
    free(want);
    free(got);
    sp_result_release(r);
    sp_result_release(live);
    unlink(path);
}

static void write_text(const char *text)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void test_load_json_gpu_corrupt_records_counted(void)
{
    snprintf(path, sizeof path, "%s/corrupt.json", dir);
    write_text(
        "{\"deviceProperties\":[{\"id\":0,\"name\":\"G\",\"numSms\":10},{\"name\":\"no id\"},7],\n"
        "\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op\",\"pid\":1,\"tid\":2,\"ts\":10,\"dur\":50},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":2,"
        "\"ts\":20,\"dur\":1,\"args\":{\"cbid\":211,\"correlation\":5}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"good\",\"pid\":0,\"tid\":7,\"ts\":30,\"dur\":2,"
        "\"args\":{\"device\":0,\"stream\":7,\"correlation\":5,\"grid\":[1,2,3],\"block\":[4,5,6]}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"no_corr\",\"pid\":0,\"tid\":7,\"ts\":30,\"dur\":2,"
        "\"args\":{\"device\":0}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"corr_str\",\"pid\":0,\"tid\":7,\"ts\":30,\"dur\":2,"
        "\"args\":{\"correlation\":\"5\"}},\n"
        "{\"ph\":\"X\",\"cat\":\"cuda_driver\",\"name\":\"cuLaunch\",\"pid\":1,\"tid\":2,\"ts\":20,"
        "\"dur\":1,\"args\":{\"correlation\":{}}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"bad_grid\",\"pid\":0,\"tid\":7,\"ts\":30,\"dur\":2,"
        "\"args\":{\"correlation\":5,\"grid\":[\"a\",1,1]}},\n"
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\",\"pid\":0,"
        "\"tid\":7,\"ts\":30,\"dur\":2,\"args\":{\"correlation\":5,\"bytes\":\"x\"}},\n"
        "{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset\",\"pid\":\"0\",\"tid\":7,\"ts\":30,"
        "\"dur\":2,\"args\":{\"correlation\":5}},\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"neg_corr\",\"pid\":0,\"tid\":7,\"ts\":30,\"dur\":2,"
        "\"args\":{\"correlation\":-1,\"grid\":7}}\n"
        "]}");
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    if (!r) return;
    CHECK_EQ((size_t)1, r->device_count);
    CHECK_EQ((size_t)1, r->thread_count);
    if (r->thread_count == 1) CHECK_EQ((size_t)1, r->threads[0].runtime_count);
    /* 7 events and 2 device properties (no id; not an object) */
    CHECK_U64_EQ(9, sp_result_counter(r, SP_COUNTER_LOAD_SKIPPED));
    if (r->device_count == 1) {
        const sp__device_rec *d = &r->devices[0];
        CHECK_STR_EQ("good", sp__result_name(r, d->name));
        CHECK_STR_EQ("op", launcher_range(r, d));
        CHECK_EQ(3u, d->detail.kernel.grid[2]);
        CHECK_EQ(4u, d->detail.kernel.block[0]);
    }
    CHECK_EQ((size_t)1, r->device_prop_count);
    if (r->device_prop_count == 1) CHECK_EQ(10u, r->device_props[0].num_sms);
    sp_result_release(r);
    unlink(path);
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    RUN_TEST(test_load_json_gpu_round_trip);
    RUN_TEST(test_load_json_gpu_corrupt_records_counted);
    rmdir(dir);
    return TEST_SUMMARY();
}
