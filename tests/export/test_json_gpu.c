/* test_json_gpu.c: checks the GPU part of the Chrome-trace JSON writer
 * (src/export/json_gpu.c, trace-format.md §2, §5-8) on a result built by
 * hand: two threads with cpu_op and user ranges, runtime and driver calls
 * inside them, kernels, a memcpy and a memset with their detail, an
 * unattributed kernel, a graph-like launch with several device records for
 * one correlation, device properties and op supplements. Each file is handed
 * to tests/trace/tracecheck.py (structure, flows, args.device == pid, kernel
 * args), then its lines are compared exactly: times are fixed offsets from
 * the base time, so every line is known in advance. */
#include "export.h"
#include "fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Offsets in ns from the span start; the span starts 1 ms after the base
 * time, so an offset x is written as ts (1000000 + x) / 1000 us. */
static int64_t span0;

static char *read_file(const char *path)
{
    struct stat st;
    FILE *f = fopen(path, "rb");
    char *data = f && fstat(fileno(f), &st) == 0 ? malloc((size_t)st.st_size + 1) : NULL;
    size_t n = data ? fread(data, 1, (size_t)st.st_size, f) : 0;
    if (f) fclose(f);
    if (data) data[n] = '\0';
    return data;
}

static int tracecheck(const char *file)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "out=$('%s' -B '%s/tests/trace/tracecheck.py' '%s' 2>&1) || "
             "{ printf '%%s\\n' \"$out\" >&2; exit 1; }",
             SP_PYTHON, SP_SOURCE_DIR, file);
    int rc = system(cmd);
    return rc != -1 && WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static size_t count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

/* Checks that line occurs exactly once in text; returns its offset. */
#define CHECK_LINE(text, line) check_line(__FILE__, __LINE__, text, line)
static long check_line(const char *file, int at, const char *text, const char *line)
{
    size_t n = count(text, line);
    if (n != 1) CHECK_FAIL_("%s:%d: expected once, found %zu times: %s", file, at, n, line);
    const char *p = strstr(text, line);
    return p ? (long)(p - text) : -1;
}

static sp__device_props h100(uint32_t id)
{
    sp__device_props p = {0};
    p.id = id;
    snprintf(p.name, sizeof p.name, "Test \"GPU\" %u", id);
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

static uint32_t nm(sp_result *r, const char *s)
{
    return sp__names_from_ptr(&r->names, s);
}

/* Appends an op supplement of op op_type at ts to thread t: shapes and
 * dtypes of two keys X (one tensor) and Y (two tensors), encoded as
 * collect.h documents. */
static void add_op(sp_result *r, sp__thread *t, int64_t ts, uint64_t dim0, const char *stack,
                   const char *op_type)
{
    uint64_t w[] = {2,
                    nm(r, "X"),
                    1,
                    2,
                    dim0,
                    256, /* X: [dim0, 256] */
                    nm(r, "Y"),
                    2,
                    2,
                    256,
                    512,
                    1,
                    (uint64_t)-1, /* Y: [256, 512], [-1] */
                    2,
                    nm(r, "X"),
                    1,
                    nm(r, "float"),
                    nm(r, "Y"),
                    2,
                    nm(r, "float"),
                    nm(r, "c10::Half")};
    size_t n = sizeof w / sizeof *w;
    uint64_t *words = sp__realloc(t->op_words, sizeof *words * (t->op_word_count + n));
    sp__op_supplement *ops = sp__realloc(t->ops, sizeof *ops * (t->op_count + 1));
    CHECK(words && ops);
    if (words) t->op_words = words;
    if (ops) t->ops = ops;
    if (!words || !ops) return;
    memcpy(words + t->op_word_count, w, sizeof w);
    t->ops[t->op_count++] =
        (sp__op_supplement){span0 + ts, nm(r, op_type), nm(r, stack), 7, t->op_word_count, -2, 0};
    t->op_word_count += n;
}

static sp__device_rec *add_device(sp_result *r, const char *name, sp_event_type type, int64_t start,
                                  int64_t end, uint32_t device, uint32_t stream, uint32_t corr)
{
    fixture_add_device(r, name, type, span0 + start, span0 + end, device, stream, corr);
    return &r->devices[r->device_count - 1];
}

static void set_kernel(sp__device_rec *d, uint32_t grid, uint32_t block, uint32_t regs,
                       uint32_t shared)
{
    d->detail.kernel =
        (sp__kernel_detail){{grid, 1, 1}, {block, 1, 1}, regs, shared, 0, 0, 0, 0, 0};
}

static sp_result *gpu_result(void)
{
    sp_result *r = sp__result_new();
    span0 = sp__base_time_ns() + 1000000;
    r->span_start_ns = span0;
    r->span_end_ns = span0 + 200000;
    r->meta.pid = 4321;
    snprintf(r->meta.process_name, sizeof r->meta.process_name, "train");
    const fixture_range main_ranges[] = {
        {"ProfileStep#1", SP_EVENT_PROFILE_STEP, span0 + 10, span0 + 100000},      /* id 1 */
        {"forward", SP_EVENT_FORWARD, span0 + 100, span0 + 50000},                 /* id 2 */
        {"matmul", SP_EVENT_OPERATOR, span0 + 200, span0 + 5000},                  /* id 3 */
        {"matmul_inner", SP_EVENT_OPERATOR_INNER, span0 + 300, span0 + 4000},      /* id 4 */
        {"add", SP_EVENT_OPERATOR, span0 + 6000, span0 + 9000},                    /* id 5 */
        {"nccl:all_reduce", SP_EVENT_COMMUNICATION, span0 + 60000, span0 + 70000}, /* id 6 */
    };
    const fixture_range worker_ranges[] = {
        {"worker_op", SP_EVENT_OPERATOR, span0 + 100, span0 + 1000}, /* id 7 */
    };
    fixture_add_thread(r, 4321, "main", main_ranges, sizeof main_ranges / sizeof *main_ranges);
    fixture_add_thread(r, 4400, "worker", worker_ranges, 1);
    sp__thread *m = &r->threads[0], *w = &r->threads[1];
    fixture_add_runtime(r, m, "cudaLaunchKernel_v7000", span0 + 400, span0 + 410, 1);
    fixture_add_runtime(r, m, "cudaMemcpyAsync_v3020", span0 + 6100, span0 + 6200, 2);
    fixture_add_runtime(r, m, "cudaMemsetAsync_v3020", span0 + 6300, span0 + 6350, 3);
    fixture_add_runtime(r, m, "cuLaunchKernel", span0 + 60100, span0 + 60200, 4);
    m->runtimes[3].driver = 1;
    m->runtimes[3].cbid = 307;
    fixture_add_runtime(r, m, "cudaGraphLaunch_v10000", span0 + 80000, span0 + 80100, 5);
    fixture_add_runtime(r, m, "cudaLaunchKernel_v7000", span0 + 150000, span0 + 150010, 6);
    fixture_add_runtime(r, m, "cudaDeviceSynchronize_v3020", span0 + 160000, span0 + 160500, 7);
    /* Starts with the step and lasts longer: written before it. */
    fixture_add_runtime(r, m, "cudaStreamSynchronize_v3020", span0 + 10, span0 + 200000, 9);
    fixture_add_runtime(r, w, "cudaLaunchKernel_v7000", span0 + 150, span0 + 160, 8);

    set_kernel(add_device(r, "gemm_kernel", SP_EVENT_KERNEL, 1000, 2000, 0, 7, 1), 165, 256, 96,
               16384);
    sp__device_rec *d = add_device(r, "MEMCPY_HtoD", SP_EVENT_MEMCPY, 7000, 8000, 0, 7, 2);
    d->bytes = 1000000;
    d->detail.copy = (sp__copy_detail){0, 0, 2}; /* HtoD, Pageable -> Device */
    d = add_device(r, "MEMSET", SP_EVENT_MEMSET, 8000, 8000, 0, 7, 3);
    d->bytes = 4096;
    d->detail.set = (sp__set_detail){2, 0}; /* Device */
    set_kernel(add_device(r, "nccl_kernel", SP_EVENT_KERNEL, 61000, 62000, 1, 13, 4), 1, 512, 0, 0);
    /* One graph launch, three records: the first has no duration, the
     * earliest with one is on stream 8. */
    set_kernel(add_device(r, "graph_k0", SP_EVENT_KERNEL, 90000, 90000, 0, 7, 5), 132, 128, 0, 0);
    set_kernel(add_device(r, "graph_k2", SP_EVENT_KERNEL, 91000, 91100, 0, 7, 5), 132, 128, 0, 0);
    set_kernel(add_device(r, "graph_k1", SP_EVENT_KERNEL, 90500, 90600, 0, 8, 5), 132, 128, 0, 0);
    set_kernel(add_device(r, "root_kernel", SP_EVENT_KERNEL, 150100, 150200, 0, 7, 6), 1, 32, 0, 0);
    set_kernel(add_device(r, "lost_kernel", SP_EVENT_KERNEL, 63000, 63100, 1, 13, 99), 1, 32, 0, 0);
    set_kernel(add_device(r, "worker_kernel", SP_EVENT_KERNEL, 2000, 2100, 0, 9, 8), 264, 64, 0, 0);

    add_op(r, m, 250, 64, "old.py(1)", "matmul"); /* on matmul, replaced by: */
    /* on matmul (the last wins), though its time lies in matmul_inner: an op
     * names its range, and a time from another clock can err into a child */
    add_op(r, m, 350, 128, "train.py(10);model.py(3)", "matmul");
    add_op(r, m, 6500, 32, "", "add");             /* on add: no Call stack */
    add_op(r, m, 150, 16, "fwd.py(1)", "forward"); /* on forward: not a cpu_op */

    r->device_props = sp__alloc(sizeof *r->device_props * 2);
    CHECK(r->device_props != NULL);
    if (r->device_props) {
        r->device_props[0] = h100(0);
        r->device_props[1] = h100(1);
        r->device_props[1].num_sms = 0; /* unknown: metrics are 0, never infinite */
        r->device_prop_count = 2;
    }
    CHECK_EQ(0, sp__attribute(r));
    return r;
}

/* Exports r to a temporary file and returns its text (free it), after the
 * structural checker accepted it. */
static char *export_text(const sp_result *r)
{
    char path[] = "/tmp/sp_json_gpu_XXXXXX.json";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    if (fd < 0) return NULL;
    close(fd);
    CHECK_EQ(SP_OK, sp__export(r, path, SP_FORMAT_JSON));
    CHECK_EQ(0, tracecheck(path));
    char *text = read_file(path);
    CHECK(text != NULL);
    remove(path);
    return text;
}

static void test_json_gpu_device_properties_in_id_order(void)
{
    sp_result *r = gpu_result();
    char *text = export_text(r);
    if (text) {
        CHECK_LINE(text, "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"Test "
                         "\\\"GPU\\\" 0\",\"totalGlobalMem\":85899345920,\"computeMajor\":9,"
                         "\"computeMinor\":0,\"maxThreadsPerBlock\":1024,"
                         "\"maxThreadsPerMultiprocessor\":2048,\"regsPerBlock\":65536,"
                         "\"warpSize\":32,\"sharedMemPerBlock\":49152,\"numSms\":132,"
                         "\"regsPerMultiprocessor\":65536,\"sharedMemPerBlockOptin\":232448,"
                         "\"sharedMemPerMultiprocessor\":233472},\n {\"id\":1,");
        CHECK_LINE(text, "\"numSms\":0,\"regsPerMultiprocessor\":65536,\"sharedMemPerBlockOptin\":"
                         "232448,\"sharedMemPerMultiprocessor\":233472}],\n\"distributedInfo\"");
    }
    free(text);
    sp__result_free(r);
}

static void test_json_gpu_track_metadata(void)
{
    sp_result *r = gpu_result();
    char *text = export_text(r);
    if (text) {
        long gpu0 =
            CHECK_LINE(text, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"tid\":0,"
                             "\"ts\":1000.000,\"args\":{\"name\":\"GPU 0\"}},\n"
                             "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":0,\"tid\":0,"
                             "\"ts\":1000.000,\"args\":{\"labels\":\"GPU 0\"}},\n"
                             "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":0,"
                             "\"tid\":0,\"ts\":1000.000,\"args\":{\"sort_index\":268435456}},\n"
                             "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":0,\"tid\":7,"
                             "\"ts\":1000.000,\"args\":{\"name\":\"stream 7\"}},\n"
                             "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":0,"
                             "\"tid\":7,\"ts\":1000.000,\"args\":{\"sort_index\":7}},\n");
        long gpu1 = CHECK_LINE(text, "\"pid\":1,\"tid\":0,\"ts\":1000.000,\"args\":{\"sort_index\":"
                                     "268435457}},\n");
        CHECK_LINE(text, "\"pid\":0,\"tid\":8,\"ts\":1000.000,\"args\":{\"name\":\"stream 8\"}}");
        CHECK_LINE(text, "\"pid\":0,\"tid\":9,\"ts\":1000.000,\"args\":{\"name\":\"stream 9\"}}");
        CHECK_LINE(text, "\"pid\":1,\"tid\":13,\"ts\":1000.000,\"args\":{\"name\":\"stream 13\"}}");
        CHECK_EQ(3, count(text, "\"name\":\"process_sort_index\",\"pid\":")); /* host, 0, 1 */
        CHECK(gpu0 < gpu1);
        CHECK(gpu1 < strstr(text, "\"ph\":\"X\"") - text);
    }
    free(text);
    sp__result_free(r);
}

static void test_json_gpu_runtime_records(void)
{
    sp_result *r = gpu_result();
    char *text = export_text(r);
    if (text) {
        const char *h = "\"pid\":4321,\"tid\":4321,";
        char line[512];
        snprintf(line, sizeof line,
                 "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",%s"
                 "\"ts\":1000.400,\"dur\":0.010,\"args\":{\"External id\":3,\"cbid\":211,"
                 "\"correlation\":1}},\n"
                 "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":1,%s\"ts\":1000.400},\n",
                 h, h);
        long launch = CHECK_LINE(text, line);
        /* In start order between the host ranges: after matmul_inner (which
         * starts at 300), before add (6000). */
        CHECK(strstr(text, "\"name\":\"matmul_inner\"") - text < launch);
        CHECK(launch < strstr(text, "\"name\":\"add\"") - text);
        CHECK_LINE(text, "{\"ph\":\"X\",\"cat\":\"cuda_driver\",\"name\":\"cuLaunchKernel\","
                         "\"pid\":4321,\"tid\":4321,\"ts\":1060.100,\"dur\":0.100,\"args\":"
                         "{\"External id\":6,\"cbid\":307,\"correlation\":4}},\n");
        /* Not inside an op: no External id. No device record: no flow. */
        CHECK_LINE(text,
                   "\"name\":\"cudaGraphLaunch\",\"pid\":4321,\"tid\":4321,"
                   "\"ts\":1080.000,\"dur\":0.100,\"args\":{\"cbid\":211,\"correlation\":5}}");
        CHECK_LINE(text, "\"name\":\"cudaDeviceSynchronize\",\"pid\":4321,\"tid\":4321,"
                         "\"ts\":1160.000,\"dur\":0.500,\"args\":{\"cbid\":211,\"correlation\":7}},"
                         "\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"worker_op\"");
        /* Same start as the step, longer: first on its thread. */
        long sync = CHECK_LINE(text, "\"name\":\"cudaStreamSynchronize\",\"pid\":4321,\"tid\":4321,"
                                     "\"ts\":1000.010,\"dur\":199.990,");
        CHECK(sync < strstr(text, "\"name\":\"ProfilerStep#1\"") - text);
        /* The worker's call carries the worker's op id, numbered after main's. */
        CHECK_LINE(text, "\"name\":\"worker_op\",\"pid\":4321,\"tid\":4400,\"ts\":1000.100,"
                         "\"dur\":0.900,\"args\":{\"External id\":7}}");
        CHECK_LINE(text,
                   "\"name\":\"cudaLaunchKernel\",\"pid\":4321,\"tid\":4400,\"ts\":1000.150,"
                   "\"dur\":0.010,\"args\":{\"External id\":7,\"cbid\":211,\"correlation\":8}}");
        CHECK_EQ(0, count(text, "_v7000") + count(text, "_v3020") + count(text, "_v10000"));
    }
    free(text);
    sp__result_free(r);
}

static void test_json_gpu_device_records_exact_args(void)
{
    sp_result *r = gpu_result();
    char *text = export_text(r);
    if (text) {
        CHECK_LINE(text,
                   "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm_kernel\",\"pid\":0,"
                   "\"tid\":7,\"ts\":1001.000,\"dur\":1.000,\"args\":{\"External id\":3,"
                   "\"queued\":0,\"device\":0,\"context\":1,\"stream\":7,\"correlation\":1,"
                   "\"registers per thread\":96,\"shared memory\":16384,\"blocks per SM\":1.25,"
                   "\"warps per SM\":10.0,\"grid\":[165,1,1],\"block\":[256,1,1],"
                   "\"est. achieved occupancy %\":16}},\n"
                   "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":1,\"pid\":0,"
                   "\"tid\":7,\"ts\":1001.000,\"bp\":\"e\"},\n");
        CHECK_LINE(text,
                   "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> "
                   "Device)\",\"pid\":0,\"tid\":7,\"ts\":1007.000,\"dur\":1.000,\"args\":"
                   "{\"External id\":5,\"device\":0,\"context\":1,\"stream\":7,"
                   "\"correlation\":2,\"bytes\":1000000,\"memory bandwidth (GB/s)\":1000.0}},\n"
                   "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":2,");
        /* Zero duration: bandwidth 0, and no flow. */
        CHECK_LINE(text, "{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\","
                         "\"pid\":0,\"tid\":7,\"ts\":1008.000,\"dur\":0.000,\"args\":"
                         "{\"External id\":5,\"device\":0,\"context\":1,\"stream\":7,"
                         "\"correlation\":3,\"bytes\":4096,\"memory bandwidth (GB/s)\":0.0}},\n");
        /* Device 1 reports no SM count: every metric is 0. */
        CHECK_LINE(text, "\"name\":\"nccl_kernel\",\"pid\":1,\"tid\":13,\"ts\":1061.000,"
                         "\"dur\":1.000,\"args\":{\"External id\":6,\"queued\":0,\"device\":1,"
                         "\"context\":1,\"stream\":13,\"correlation\":4,\"registers per thread\":0,"
                         "\"shared memory\":0,\"blocks per SM\":0.0,\"warps per SM\":0.0,"
                         "\"grid\":[1,1,1],\"block\":[512,1,1],\"est. achieved occupancy %\":0}}");
        /* Unattributed: no External id, no flow. */
        CHECK_LINE(text, "\"name\":\"lost_kernel\",\"pid\":1,\"tid\":13,\"ts\":1063.000,"
                         "\"dur\":0.100,\"args\":{\"queued\":0,\"device\":1,");
        CHECK_LINE(text, "\"name\":\"worker_kernel\",\"pid\":0,\"tid\":9,\"ts\":1002.000,"
                         "\"dur\":0.100,\"args\":{\"External id\":7,\"queued\":0,\"device\":0,"
                         "\"context\":1,\"stream\":9,\"correlation\":8,\"registers per thread\":0,"
                         "\"shared memory\":0,\"blocks per SM\":2.0,\"warps per SM\":4.0,");
        /* Attributed to the thread root: no External id, but a flow. */
        CHECK_LINE(text, "\"name\":\"root_kernel\",\"pid\":0,\"tid\":7,\"ts\":1150.100,"
                         "\"dur\":0.100,\"args\":{\"queued\":0,");
    }
    free(text);
    sp__result_free(r);
}

static void test_json_gpu_flows_one_pair_per_correlation(void)
{
    sp_result *r = gpu_result();
    char *text = export_text(r);
    if (text) {
        static const unsigned with_flow[] = {1, 2, 4, 5, 6, 8};
        for (size_t i = 0; i < sizeof with_flow / sizeof *with_flow; i++) {
            char s[96], f[96];
            snprintf(s, sizeof s, "{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":%u,",
                     with_flow[i]);
            snprintf(f, sizeof f, "{\"ph\":\"f\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":%u,",
                     with_flow[i]);
            CHECK_EQ(1, count(text, s));
            CHECK_EQ(1, count(text, f));
        }
        CHECK_EQ(6, count(text, "\"ph\":\"s\""));
        CHECK_EQ(6, count(text, "\"ph\":\"f\""));
        CHECK_EQ(6, count(text, "\"bp\":\"e\""));
        CHECK_EQ(6, count(text, ",\"bp\":\"e\"},\n"));
        /* The graph launch: its flow ends on the earliest record with a
         * duration (stream 8), right after it; the others carry correlation 5. */
        CHECK_LINE(text, "\"name\":\"graph_k1\",\"pid\":0,\"tid\":8,\"ts\":1090.500,\"dur\":0.100,"
                         "\"args\":{\"queued\":0,\"device\":0,\"context\":1,\"stream\":8,"
                         "\"correlation\":5,");
        CHECK_LINE(text, "\"est. achieved occupancy %\":6}},\n{\"ph\":\"f\",\"cat\":\"ac2g\","
                         "\"name\":\"ac2g\",\"id\":5,\"pid\":0,\"tid\":8,\"ts\":1090.500,"
                         "\"bp\":\"e\"},\n");
        CHECK_LINE(text, "\"name\":\"graph_k0\",\"pid\":0,\"tid\":7,\"ts\":1090.000,\"dur\":0.000,"
                         "\"args\":{\"queued\":0,\"device\":0,\"context\":1,\"stream\":7,"
                         "\"correlation\":5,");
        CHECK_LINE(text, "\"name\":\"graph_k2\",\"pid\":0,\"tid\":7,\"ts\":1091.000,\"dur\":0.100,"
                         "\"args\":{\"queued\":0,\"device\":0,\"context\":1,\"stream\":7,"
                         "\"correlation\":5,");
        /* Start on the host at the runtime call, right after it. */
        CHECK_LINE(text, "\"correlation\":5}},\n{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\","
                         "\"id\":5,\"pid\":4321,\"tid\":4321,\"ts\":1080.000},\n");
    }
    free(text);
    sp__result_free(r);
}

static void test_json_gpu_track_order(void)
{
    sp_result *r = gpu_result();
    char *text = export_text(r);
    if (text) {
        /* device 0: stream 7 in start order, then 8, then 9; then device 1 */
        static const char *const order[] = {
            "\"name\":\"gemm_kernel\"",        "\"name\":\"Memcpy HtoD",
            "\"name\":\"Memset (Device)\"",    "\"name\":\"graph_k0\"",
            "\"name\":\"graph_k2\"",           "\"name\":\"root_kernel\"",
            "\"name\":\"graph_k1\"",           "\"name\":\"worker_kernel\"",
            "\"name\":\"nccl_kernel\"",        "\"name\":\"lost_kernel\"",
            "\"cat\":\"gpu_user_annotation\"", "\"cat\":\"Trace\""};
        long last = strstr(text, "\"tid\":4400,\"ts\":1000.150") - text;
        for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
            const char *p = strstr(text, order[i]);
            CHECK(p != NULL);
            if (!p) continue;
            if (p - text <= last) CHECK_FAIL_("out of order: %s", order[i]);
            last = p - text;
        }
    }
    free(text);
    sp__result_free(r);
}

static void test_json_gpu_user_annotations(void)
{
    sp_result *r = gpu_result();
    char *text = export_text(r);
    if (text) {
        const char *a = "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":";
        char line[512];
        /* gemm_kernel's launch lies in matmul_inner (a user range in an op). */
        snprintf(line, sizeof line,
                 "%s\"matmul_inner\",\"pid\":0,\"tid\":7,\"ts\":1000.999,"
                 "\"dur\":1.002,\"args\":{\"External id\":4}},\n",
                 a);
        long inner = CHECK_LINE(text, line);
        /* The graph's kernels on stream 7 (one of no duration) and 8. */
        snprintf(line, sizeof line,
                 "%s\"ProfilerStep#1\",\"pid\":0,\"tid\":7,\"ts\":1089.999,"
                 "\"dur\":1.102,\"args\":{\"External id\":1}},\n",
                 a);
        long step7 = CHECK_LINE(text, line);
        snprintf(line, sizeof line,
                 "%s\"ProfilerStep#1\",\"pid\":0,\"tid\":8,\"ts\":1090.499,"
                 "\"dur\":0.102,\"args\":{\"External id\":1}},\n",
                 a);
        long step8 = CHECK_LINE(text, line);
        /* nccl:all_reduce is a cpu_op: its kernel's user range is the step. */
        snprintf(line, sizeof line,
                 "%s\"ProfilerStep#1\",\"pid\":1,\"tid\":13,\"ts\":1060.999,"
                 "\"dur\":1.002,\"args\":{\"External id\":1}},\n",
                 a);
        long step13 = CHECK_LINE(text, line);
        CHECK(inner < step7 && step7 < step8 && step8 < step13);
        /* Memcpy and memset make none; nor do kernels outside user ranges
         * (root_kernel, worker_kernel) or unattributed ones. */
        CHECK_EQ(4, count(text, a));
    }
    free(text);
    sp__result_free(r);
}

static void test_json_gpu_op_supplements(void)
{
    sp_result *r = gpu_result();
    char *text = export_text(r);
    if (text) {
        CHECK_LINE(text,
                   "\"name\":\"matmul\",\"pid\":4321,\"tid\":4321,\"ts\":1000.200,"
                   "\"dur\":4.800,\"args\":{\"External id\":3,\"Input Dims\":[[128,256],"
                   "[256,512],[-1]],\"Input type\":[\"float\",\"float\",\"c10::Half\"],"
                   "\"Call stack\":\"train.py(10);model.py(3)\"}},\n");
        CHECK_LINE(text, "\"name\":\"add\",\"pid\":4321,\"tid\":4321,\"ts\":1006.000,"
                         "\"dur\":3.000,\"args\":{\"External id\":5,\"Input Dims\":[[32,256],"
                         "[256,512],[-1]],\"Input type\":[\"float\",\"float\",\"c10::Half\"]}},\n");
        CHECK_LINE(text,
                   "\"name\":\"forward\",\"pid\":4321,\"tid\":4321,\"ts\":1000.100,"
                   "\"dur\":49.900,\"args\":{\"External id\":2,\"Event Type\":\"Forward\"}},\n");
        CHECK_EQ(0, count(text, "old.py") + count(text, "fwd.py") + count(text, "[64,256]"));
    }
    free(text);
    sp__result_free(r);
}

/* Every failed allocation along the way fails the export cleanly. */
static void test_json_gpu_out_of_memory(void)
{
    sp_result *r = gpu_result();
    char dir[] = "/tmp/sp_json_gpu_oom_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[128];
    snprintf(path, sizeof path, "%s/t.json", dir);
    int done = 0;
    for (uint64_t nth = 1; nth < 200 && !done; nth++) {
        sp__alloc_fail_at(nth);
        sp_status s = sp__export(r, path, SP_FORMAT_JSON);
        uint64_t made = sp__alloc_fail_at(0);
        if (s == SP_OK) {
            done = made < nth; /* no allocation failed */
            if (!done) CHECK_EQ(0, tracecheck(path));
        } else {
            CHECK(s == SP_ENOMEM || s == SP_EIO);
            CHECK(access(path, F_OK) != 0);
        }
        remove(path);
    }
    CHECK(done);
    rmdir(dir);
    sp__result_free(r);
}

int main(void)
{
    RUN_TEST(test_json_gpu_device_properties_in_id_order);
    RUN_TEST(test_json_gpu_track_metadata);
    RUN_TEST(test_json_gpu_runtime_records);
    RUN_TEST(test_json_gpu_device_records_exact_args);
    RUN_TEST(test_json_gpu_flows_one_pair_per_correlation);
    RUN_TEST(test_json_gpu_track_order);
    RUN_TEST(test_json_gpu_user_annotations);
    RUN_TEST(test_json_gpu_op_supplements);
    RUN_TEST(test_json_gpu_out_of_memory);
    return TEST_SUMMARY();
}
