/* test_roundtrip.c: a result saved and loaded again prints exactly the same
 * tables as the live one. Results come from the fixture (several threads,
 * nesting, names with odd bytes, instants, counter samples, memory events,
 * runtime calls, kernels, an unattributed kernel, drops and counters) and
 * from a real recorded span. Every view, sorted two ways, merged and per
 * thread, plus torch's table and every event's fields, are compared byte for
 * byte: .pb for everything, .json for CPU-only data. */
#include "fixture.h"
#include "load.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define US 1000ll
#define T0 1795000000000000000ll

static char dir[] = "/tmp/sp_roundtrip_XXXXXX";

static char *path_of(const char *name)
{
    static char path[4][256];
    static int i;
    i = (i + 1) % 4;
    snprintf(path[i], sizeof path[i], "%s/%s", dir, name);
    return path[i];
}

/* Event flags the JSON cannot carry (UNCLOSED) are masked when set. */
static unsigned flag_mask = ~0u;

/* Every table of a result as one text. */
static char *all_tables(const sp_result *r)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    CHECK(f != NULL);
    if (!f) return NULL;
    static const sp_sorted_key sorts[] = {SP_SORTED_CPU_TOTAL, SP_SORTED_GPU_AVG};
    for (int s = 0; s < 2; s++)
        for (int sep = 0; sep < 2; sep++)
            for (int detail = 0; detail < 2; detail++) {
                sp_summary_options o;
                sp_summary_options_init(&o);
                o.sorted_by = sorts[s];
                o.thread_sep = sep;
                o.op_detail = detail;
                o.time_unit = "us";
                CHECK_OK(sp_result_summary(r, &o, f));
            }
    CHECK_OK(sp_result_table_torch(r, NULL, -1, f));
    CHECK_OK(sp_result_table_torch(r, "count", 5, f));
    /* The events themselves, flags and values included. */
    int64_t s0, s1;
    sp_result_span(r, &s0, &s1);
    fprintf(f, "span %u %lld %lld\n", sp_result_span_index(r), (long long)s0, (long long)s1);
    for (int c = 0; c < SP_COUNTER_COUNT; c++) fprintf(f, "%llu ", (unsigned long long)sp_result_counter(r, c));
    for (size_t t = 0; t < sp_result_thread_count(r); t++) {
        sp_thread_info ti;
        CHECK_OK(sp_result_thread(r, t, &ti));
        fprintf(f, "\nthread %llu %s %zu %llu\n", (unsigned long long)ti.tid, ti.name, ti.event_count,
                (unsigned long long)ti.dropped);
        for (size_t i = 0; i < ti.event_count; i++) {
            sp_event_info e;
            CHECK_OK(sp_result_event(r, t, i, &e));
            fprintf(f, "%s|%d|%u|%lld|%lld|%lld|%u|%.17g\n", e.name, (int)e.type, e.flags & flag_mask, (long long)e.start_ns,
                    (long long)e.end_ns, (long long)e.parent, e.depth, e.value);
        }
    }
    fclose(f);
    return text;
}

static void check_same(const sp_result *live, const sp_result *loaded)
{
    char *a = all_tables(live), *b = all_tables(loaded);
    CHECK(a && b);
    if (a && b && strcmp(a, b) != 0) {
        /* Show the first differing line. */
        const char *p = a, *q = b;
        while (*p && *p == *q) p++, q++;
        while (p > a && p[-1] != '\n') p--, q--;
        fprintf(stderr, "first difference:\nlive:   %.200s\nloaded: %.200s\n", p, q);
        CHECK(0);
    }
    free(a);
    free(b);
}

static sp_result *load(const char *path)
{
    sp_result *r = NULL;
    CHECK_OK(sp_result_load(path, NULL, &r));
    return r;
}

/* Two host threads with nesting, odd names, marks and memory; GPU work
 * when gpu is set. */
static sp_result *fixture_result(int gpu)
{
    sp_result *r = sp__result_new();
    r->span_start_ns = T0;
    r->span_end_ns = T0 + 3000 * US;
    r->span_index = 7;
    r->meta.pid = 4321;
    snprintf(r->meta.process_name, sizeof r->meta.process_name, "train");
    r->meta.cpu_process = 0.4375;
    r->meta.cpu_system = 0.8125;
    r->meta.profile_memory = 1;
    const fixture_range main_ranges[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, T0 + 0, T0 + 1000 * US},
        {"DataLoader", SP_EVENT_DATALOADER, T0 + 10 * US, T0 + 200 * US},
        {"forward", SP_EVENT_FORWARD, T0 + 210 * US, T0 + 600 * US},
        {"matmul", SP_EVENT_OPERATOR, T0 + 220 * US, T0 + 400 * US},
        {"matmul compute", SP_EVENT_OPERATOR_INNER, T0 + 230 * US, T0 + 390 * US},
        {"launch", SP_EVENT_DYGRAPH_KERNEL_LAUNCH, T0 + 240 * US, T0 + 250 * US},
        {"relu", SP_EVENT_OPERATOR, T0 + 410 * US, T0 + 500 * US},
        {"backward", SP_EVENT_BACKWARD, T0 + 610 * US, T0 + 900 * US},
        {"relu_grad", SP_EVENT_OPERATOR, T0 + 620 * US, T0 + 700 * US},
        {"sgd", SP_EVENT_OPTIMIZATION, T0 + 910 * US, T0 + 990 * US},
        {"ProfileStep#1", SP_EVENT_PROFILE_STEP, T0 + 1000 * US, T0 + 2000 * US},
        {"DataLoader", SP_EVENT_DATALOADER, T0 + 1010 * US, T0 + 1100 * US},
        {"forward", SP_EVENT_FORWARD, T0 + 1110 * US, T0 + 1500 * US},
        {"matmul", SP_EVENT_OPERATOR, T0 + 1120 * US, T0 + 1300 * US},
        {"python op", SP_EVENT_PYTHON_OP, T0 + 1510 * US, T0 + 1600 * US},
        {"static launch", SP_EVENT_STATIC_KERNEL_LAUNCH, T0 + 1520 * US, T0 + 1530 * US},
    };
    fixture_add_thread(r, 100, "main", main_ranges, sizeof main_ranges / sizeof *main_ranges);
    const fixture_range worker_ranges[] = {
        {"load_batch", SP_EVENT_USER_DEFINED, T0 + 5 * US, T0 + 800 * US},
        {"decode", SP_EVENT_PYTHON_USER_DEFINED, T0 + 100 * US, T0 + 300 * US},
        {"overlaps decode", SP_EVENT_USER_DEFINED, T0 + 200 * US, T0 + 900 * US},
        {"comm", SP_EVENT_COMMUNICATION, T0 + 1000 * US, T0 + 1200 * US},
    };
    fixture_add_thread(r, 200, "load_worker_0", worker_ranges, 4);
    r->counters[SP_COUNTER_OVERLAP] = 1;
    /* Names with odd bytes: quotes, control characters, invalid UTF-8. */
    sp__thread *w = &r->threads[1];
    static const char odd[] = "we\"ird\\na\tme \x01\xff\xfe end";
    sp__event *e = &w->events[3];
    e->name = sp__names_from_bytes(&r->names, odd, sizeof odd - 1);
    r->counters[SP_COUNTER_INVALID_UTF8] = 1;
    /* An instant and a counter sample, appended in start order and renested. */
    sp__thread *m = &r->threads[0];
    sp__event *grown = sp__realloc(m->events, sizeof *grown * (m->count + 2));
    CHECK(grown != NULL);
    m->events = grown;
    m->events[m->count++] = (sp__event){T0 + 1700 * US, T0 + 1700 * US, sp__names_from_ptr(&r->names, "mark"),
                                        SP_EVENT_USER_DEFINED, SP_EVENT_FLAG_INSTANT, 0, -1, 0, 0};
    m->events[m->count++] = (sp__event){T0 + 1800 * US, T0 + 1800 * US, sp__names_from_ptr(&r->names, "queue depth"),
                                        SP_EVENT_USER_DEFINED, SP_EVENT_FLAG_COUNTER, 0, -1, 0, 0.1 + 0.2};
    m->cap = m->count;
    m->events[9].flags |= SP_EVENT_FLAG_UNCLOSED; /* sgd */
    r->counters[SP_COUNTER_UNCLOSED_RANGES] = 1;
    sp__tree_build(m->events, m->count);
    /* Memory: peaks are running maxima, as the JSON reader rebuilds them. */
    fixture_add_mem(r, m, T0 + 230 * US, SP_MEM_ALLOCATE, "Place(cpu)", 0x1000, 4096, 4096, 8192, 4096, 8192);
    fixture_add_mem(r, m, T0 + 420 * US, SP_MEM_ALLOCATE, "Place(cpu)", 0x2000, 1024, 5120, 8192, 5120, 8192);
    fixture_add_mem(r, m, T0 + 620 * US, SP_MEM_FREE, "Place(cpu)", 0x1000, -4096, 1024, 8192, 5120, 8192);
    fixture_add_mem(r, m, T0 + 2500 * US, SP_MEM_RESERVED_FREE, "Place(cpu)", 0, -4096, 1024, 4096, 5120, 8192);
    fixture_add_mem(r, w, T0 + 150 * US, SP_MEM_ALLOCATE, "Place(cpu)", 0x3000, 64, 1088, 4096, 5120, 8192);
    r->threads[1].dropped = 3;
    r->counters[SP_COUNTER_HOST_DROPPED] = 3;
    if (gpu) {
        fixture_add_mem(r, m, T0 + 2600 * US, SP_MEM_ALLOCATE, "Place(gpu:0)", 0x7f00, 1 << 20, 1 << 20, 2 << 20,
                        1 << 20, 2 << 20);
        fixture_add_runtime(r, m, "cudaLaunchKernel_v7000", T0 + 241 * US, T0 + 245 * US, 11);
        fixture_add_runtime(r, m, "cudaMemcpyAsync_v3020", T0 + 420 * US, T0 + 430 * US, 12);
        fixture_add_runtime(r, m, "cuLaunchKernel", T0 + 1125 * US, T0 + 1130 * US, 13);
        m->runtimes[2].driver = 1;
        fixture_add_runtime(r, &r->threads[1], "cudaLaunchKernel_v7000", T0 + 1010 * US, T0 + 1020 * US, 14);
        fixture_add_device(r, "gemm_kernel", SP_EVENT_KERNEL, T0 + 300 * US, T0 + 700 * US, 0, 7, 11);
        fixture_add_device(r, "MEMCPY_HtoD", SP_EVENT_MEMCPY, T0 + 710 * US, T0 + 720 * US, 0, 7, 12);
        r->devices[1].bytes = 65536;
        fixture_add_device(r, "triton_kernel", SP_EVENT_KERNEL, T0 + 1200 * US, T0 + 1250 * US, 0, 8, 13);
        fixture_add_device(r, "ncclAllReduce", SP_EVENT_KERNEL, T0 + 1030 * US, T0 + 1190 * US, 0, 9, 14);
        fixture_add_device(r, "MEMSET", SP_EVENT_MEMSET, T0 + 1260 * US, T0 + 1261 * US, 0, 7, 15);
        fixture_add_device(r, "orphan_kernel", SP_EVENT_KERNEL, T0 + 1300 * US, T0 + 1400 * US, 0, 7, 99);
    }
    /* Op supplements: shapes and dtypes (one without inputs), and a call stack. */
    fixture_add_op(r, m, T0 + 225 * US, "matmul", "train.py:10;model.py:42",
                   "X:float32:8x16|Y:float32:16x4|bias:float16:");
    fixture_add_op(r, m, T0 + 415 * US, "relu", "", "");
    fixture_add_op(r, m, T0 + 1121 * US, "matmul", "", "X:int64:2x3x4");
    if (gpu) {
        sp__device_rec *k = &r->devices[0];
        k->detail.kernel = (sp__kernel_detail){{128, 2, 1}, {256, 1, 1}, 40, 4096, 1024, 8, 512, 0, 0};
        r->devices[1].detail.copy = (sp__copy_detail){0, 1, 2}; /* HtoD, Pinned -> Device */
        r->devices[4].detail.set = (sp__set_detail){2, 7};      /* Device, value 7 */
        r->device_props = sp__alloc(sizeof *r->device_props);
        CHECK(r->device_props != NULL);
        if (r->device_props) {
            r->device_prop_count = 1;
            r->device_props[0] = (sp__device_props){.id = 0, .name = "NVIDIA H100 80GB HBM3",
                                                    .total_global_mem = 85028487168ULL,
                                                    .compute_major = 9, .compute_minor = 0,
                                                    .max_threads_per_block = 1024,
                                                    .max_threads_per_sm = 2048,
                                                    .regs_per_block = 65536, .regs_per_sm = 65536,
                                                    .warp_size = 32, .shared_per_block = 49152,
                                                    .shared_per_sm = 233472,
                                                    .shared_per_block_optin = 232448,
                                                    .num_sms = 132, .max_blocks_per_sm = 32};
        }
    }
    CHECK_EQ(0, sp__attribute(r));
    return r;
}

/* Every op supplement as text: its host event, time, type, call stack and
 * inputs, so results with different name ids compare. */
static char *render_ops(const sp_result *r)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    for (size_t i = 0; i < r->thread_count; i++) {
        const sp__thread *t = &r->threads[i];
        for (size_t k = 0; k < t->op_count; k++) {
            const sp__op_supplement *o = &t->ops[k];
            fprintf(f, "%llu %d %lld %s [%s] %llu:", (unsigned long long)t->tid, o->host, (long long)o->ts_ns,
                    sp__result_name(r, o->op_type), sp__result_name(r, o->callstack),
                    (unsigned long long)o->op_id);
            const uint64_t *w = t->op_words + o->words;
            for (int pass = 0; pass < 2; pass++) {
                uint64_t keys = *w++;
                for (uint64_t key = 0; key < keys; key++) {
                    fprintf(f, " %s(", sp__result_name(r, (uint32_t)*w++));
                    uint64_t n = *w++;
                    for (uint64_t j = 0; j < n; j++) {
                        if (pass == 1) {
                            fprintf(f, " %s", sp__result_name(r, (uint32_t)*w++));
                            continue;
                        }
                        uint64_t rank = *w++;
                        fputs(" [", f);
                        for (uint64_t d = 0; d < rank; d++) fprintf(f, "%s%llu", d ? "x" : "", (unsigned long long)*w++);
                        fputs("]", f);
                    }
                    fputs(")", f);
                }
                fputs(pass == 0 ? " |" : "\n", f);
            }
        }
    }
    fclose(f);
    return text;
}

static void test_roundtrip_pb_keeps_every_table(void)
{
    sp_result *live = fixture_result(1);
    const char *path = path_of("fixture.pb");
    CHECK_OK(sp_result_export_protobuf(live, path));
    sp_result *loaded = load(path);
    if (loaded) check_same(live, loaded);
    /* Saved again, the file is the same byte for byte. */
    const char *again = path_of("again.pb");
    if (loaded) CHECK_OK(sp_result_export_protobuf(loaded, again));
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", path, again);
    CHECK_EQ(0, system(cmd));
    /* sp_result_export with SP_FORMAT_PROTOBUF writes the same file. */
    const char *via_export = path_of("via_export.pb");
    CHECK_OK(sp_result_export(live, via_export, SP_FORMAT_PROTOBUF));
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", path, via_export);
    CHECK_EQ(0, system(cmd));
    /* GPU records came back attributed as before. */
    if (loaded) {
        CHECK_EQ(live->device_count, loaded->device_count);
        for (size_t d = 0; d < live->device_count && d < loaded->device_count; d++) {
            CHECK_EQ(live->devices[d].thread, loaded->devices[d].thread);
            CHECK_EQ(live->devices[d].runtime, loaded->devices[d].runtime);
            CHECK_EQ(live->devices[d].bytes, loaded->devices[d].bytes);
        }
        CHECK_EQ(1, loaded->threads[0].runtimes[2].driver);
        CHECK_EQ(5, loaded->threads[0].mem_count);
        /* Launch details, copy and memset kinds, device properties. */
        const sp__kernel_detail *k = &loaded->devices[0].detail.kernel;
        CHECK_EQ(128, k->grid[0]);
        CHECK_EQ(2, k->grid[1]);
        CHECK_EQ(256, k->block[0]);
        CHECK_EQ(40, k->registers);
        CHECK_EQ(4096, k->static_shared);
        CHECK_EQ(1024, k->dynamic_shared);
        CHECK_EQ(8, k->local_per_thread);
        CHECK_EQ(512, k->local_total);
        CHECK_EQ(0, loaded->devices[1].detail.copy.copy_kind);
        CHECK_EQ(1, loaded->devices[1].detail.copy.src_kind);
        CHECK_EQ(2, loaded->devices[1].detail.copy.dst_kind);
        CHECK_EQ(2, loaded->devices[4].detail.set.memory_kind);
        CHECK_EQ(7, loaded->devices[4].detail.set.value);
        CHECK_EQ(1, loaded->device_prop_count);
        if (loaded->device_prop_count == 1)
            CHECK_EQ(0, memcmp(&live->device_props[0], &loaded->device_props[0], sizeof *live->device_props));
        /* Op supplements: shapes, dtypes and call stacks, on the same host events. */
        char *a = render_ops(live), *b = render_ops(loaded);
        CHECK(strstr(a, "matmul [train.py:10;model.py:42] 1: X( [8x16]) Y( [16x4]) bias( []) | X( float32) Y( float32) bias( float16)") != NULL);
        CHECK_STR_EQ(a, b);
        free(a);
        free(b);
    }
    sp_result_release(loaded);
    sp_result_release(live);
}

static void test_roundtrip_json_keeps_cpu_tables(void)
{
    sp_result *live = fixture_result(0);
    const char *formats[] = {"fixture.json", "fixture.json.gz"};
    for (int i = 0; i < 2; i++) {
        const char *path = path_of(formats[i]);
        CHECK_OK(sp_result_export(live, path, SP_FORMAT_AUTO));
        sp_result *loaded = load(path);
        if (!loaded) continue;
        /* Drop counts per thread come back (stepprof_thread_drops), and the
         * summary names the thread that lost them. */
        CHECK_EQ(live->threads[1].dropped, loaded->threads[1].dropped);
        char *text = all_tables(loaded);
        CHECK(text && strstr(text, "Dropped events by thread id: 200=3\n") != NULL);
        free(text);
        flag_mask = ~(unsigned)SP_EVENT_FLAG_UNCLOSED;
        check_same(live, loaded);
        flag_mask = ~0u;
        sp_result_release(loaded);
    }
    sp_result_release(live);
}

/* A .pftrace keeps every table but the op supplements' (not carried):
 * GPU records, runtime calls, memory, marks, odd names, drops, counters. */
/* A device record's detail compared field by field: the union's padding
 * and the bytes past the record's own member are not data (a compound
 * literal may leave them as it likes). */
static int same_detail(const sp__device_rec *a, const sp__device_rec *b)
{
    if (a->type != b->type) return 0;
    if (a->type == SP_EVENT_KERNEL) {
        const sp__kernel_detail *x = &a->detail.kernel, *y = &b->detail.kernel;
        return memcmp(x->grid, y->grid, sizeof x->grid) == 0 && memcmp(x->block, y->block, sizeof x->block) == 0 &&
               x->registers == y->registers && x->static_shared == y->static_shared &&
               x->dynamic_shared == y->dynamic_shared && x->local_per_thread == y->local_per_thread &&
               x->local_total == y->local_total && x->queued_ns == y->queued_ns &&
               x->submitted_ns == y->submitted_ns;
    }
    if (a->type == SP_EVENT_MEMCPY)
        return a->detail.copy.copy_kind == b->detail.copy.copy_kind &&
               a->detail.copy.src_kind == b->detail.copy.src_kind &&
               a->detail.copy.dst_kind == b->detail.copy.dst_kind;
    return a->detail.set.memory_kind == b->detail.set.memory_kind && a->detail.set.value == b->detail.set.value;
}

static void test_roundtrip_pftrace_keeps_tables(void)
{
    sp_result *live = fixture_result(1);
    const char *path = path_of("fixture.pftrace");
    CHECK_OK(sp_result_export(live, path, SP_FORMAT_AUTO));
    sp_result *loaded = load(path);
    if (loaded) {
        check_same(live, loaded);
        CHECK_EQ(live->device_count, loaded->device_count);
        for (size_t d = 0; d < live->device_count && d < loaded->device_count; d++) {
            CHECK_EQ(live->devices[d].thread, loaded->devices[d].thread);
            CHECK_EQ(live->devices[d].runtime, loaded->devices[d].runtime);
            CHECK_EQ(live->devices[d].bytes, loaded->devices[d].bytes);
            CHECK(same_detail(&live->devices[d], &loaded->devices[d]));
        }
        CHECK_EQ(1, loaded->threads[0].runtimes[2].driver);
        CHECK_EQ(5, loaded->threads[0].mem_count);
        CHECK_EQ(live->threads[1].dropped, loaded->threads[1].dropped);
        CHECK_EQ(1, loaded->device_prop_count);
        if (loaded->device_prop_count == 1)
            CHECK_EQ(0, memcmp(&live->device_props[0], &loaded->device_props[0], sizeof *live->device_props));
        /* Saved again, the file is the same byte for byte. */
        const char *again = path_of("again.pftrace");
        CHECK_OK(sp_result_export(loaded, again, SP_FORMAT_PERFETTO));
        char cmd[600];
        snprintf(cmd, sizeof cmd, "cmp -s %s %s", path, again);
        CHECK_EQ(0, system(cmd));
    }
    sp_result_release(loaded);
    sp_result_release(live);
}

/* CPU utilisation at a rounding edge: 35.37496% prints 35.37; six decimals
 * of the fraction (0.353750) would load back as 35.375 and print 35.38. */
static void test_roundtrip_json_keeps_cpu_utilization_digits(void)
{
    sp_result *live = fixture_result(0);
    live->meta.cpu_process = 0.3537496;
    const char *path = path_of("cpu_edge.json");
    CHECK_OK(sp_result_export(live, path, SP_FORMAT_JSON));
    sp_result *loaded = load(path);
    if (loaded) {
        CHECK(loaded->meta.cpu_process == live->meta.cpu_process);
        flag_mask = ~(unsigned)SP_EVENT_FLAG_UNCLOSED;
        check_same(live, loaded);
        flag_mask = ~0u;
        sp_result_release(loaded);
    }
    sp_result_release(live);
}

/* A span recorded for real: nested ranges, copied names, instants,
 * counters, memory events, two threads. */
static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++) {
        sp_range_begin(SP_EVENT_USER_DEFINED, "load_batch");
        sp_range_begin_copy(SP_EVENT_PYTHON_USER_DEFINED, "decode \xc3\x28", 9);
        sp_range_end();
        sp_range_end();
    }
    return NULL;
}

#include <pthread.h>

/* ProfileStep events whose num_samples is n (-1: those with none). */
static int steps_with_samples(const sp_result *r, double n)
{
    int found = 0;
    for (size_t t = 0; t < sp_result_thread_count(r); t++) {
        sp_thread_info ti;
        CHECK_OK(sp_result_thread(r, t, &ti));
        for (size_t i = 0; i < ti.event_count; i++) {
            sp_event_info e;
            CHECK_OK(sp_result_event(r, t, i, &e));
            if (e.type != SP_EVENT_PROFILE_STEP) continue;
            int has = (e.flags & SP_EVENT_FLAG_SAMPLES) != 0;
            if (n < 0 ? !has : has && e.value == n) found++;
        }
    }
    return found;
}

static void test_roundtrip_recorded_span(void)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.profile_memory = true;
    sp_profiler *p;
    CHECK_OK(sp_profiler_create(&o, &p));
    CHECK_OK(sp_profiler_start(p));
    for (int step = 0; step < 3; step++) {
        pthread_t th;
        pthread_create(&th, NULL, worker, NULL);
        sp_range_begin(SP_EVENT_DATALOADER, "DataLoader");
        sp_range_end();
        sp_range_begin(SP_EVENT_FORWARD, "forward");
        sp_range_begin(SP_EVENT_OPERATOR, "matmul");
        sp_mem_info mi = {0x1000, 256, 256, 512, 256, 512};
        sp_memory_event(SP_MEM_ALLOCATE, "Place(cpu)", &mi);
        sp_instant(SP_EVENT_USER_DEFINED, "checkpoint");
        sp_counter("loss", 0.5 / (step + 1));
        sp_range_end();
        sp_range_end();
        pthread_join(th, NULL);
        CHECK_OK(sp_profiler_step(p, 32));
    }
    sp_range_begin(SP_EVENT_BACKWARD, "left open");
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *live = sp_profiler_result(p);
    CHECK(live != NULL);
    if (live) {
        /* Steps 0..2 keep the num_samples given at their step(); step 3,
         * closed by stop(), has none. The comparison below then checks that
         * both kinds survive each format. */
        CHECK_EQ(steps_with_samples(live, 32), 3);
        CHECK_EQ(steps_with_samples(live, -1), 1);
        const char *pb = path_of("recorded.pb"), *json = path_of("recorded.json");
        CHECK_OK(sp_result_export_protobuf(live, pb));
        CHECK_OK(sp_result_export(live, json, SP_FORMAT_JSON));
        const char *gz = path_of("recorded.json.gz"), *pf = path_of("recorded.pftrace");
        CHECK_OK(sp_result_export(live, gz, SP_FORMAT_JSON_GZ));
        CHECK_OK(sp_result_export(live, pf, SP_FORMAT_AUTO));
        sp_result *a = load(pb), *b = load(json), *c = load(gz), *d = load(pf);
        if (a) check_same(live, a);
        if (d) check_same(live, d);
        sp_result_release(d);
        /* The JSON lacks only per-thread drop counts (none here). */
        flag_mask = ~(unsigned)SP_EVENT_FLAG_UNCLOSED;
        if (b) check_same(live, b);
        if (c) check_same(live, c);
        flag_mask = ~0u;
        sp_result_release(a);
        sp_result_release(b);
        sp_result_release(c);
    }
    sp_range_end();
    sp_profiler_destroy(p);
}

static void test_load_paddle_file(void)
{
    sp_result *r = load(SP_SOURCE_DIR "/tests/data/paddle_cpu_tiny.paddle_trace.pb");
    CHECK(r != NULL);
    if (!r) return;
    CHECK_EQ(1, sp_result_thread_count(r));
    sp_thread_info ti;
    CHECK_OK(sp_result_thread(r, 0, &ti));
    CHECK_EQ(86, ti.event_count);
    sp_event_info e;
    CHECK_OK(sp_result_event(r, 0, 0, &e));
    CHECK_STR_EQ("ProfileStep#1", e.name);
    CHECK_EQ(SP_EVENT_PROFILE_STEP, e.type);
    CHECK_EQ(-1, e.parent);
    char *text = all_tables(r);
    CHECK(text && strstr(text, "Overview Summary") && strstr(text, "Operator Summary"));
    free(text);
    /* stepprof's own save of it loads to the same tables and supplements
     * (paddle 3.3's dygraph mode writes none; test_roundtrip_pb covers them). */
    char *ops = render_ops(r);
    const char *path = path_of("paddle_again.pb");
    CHECK_OK(sp_result_export_protobuf(r, path));
    sp_result *again = load(path);
    if (again) check_same(r, again);
    char *ops_again = again ? render_ops(again) : NULL;
    if (ops_again) CHECK_STR_EQ(ops, ops_again);
    free(ops);
    free(ops_again);
    sp_result_release(again);
    sp_result_release(r);
}

static void test_load_empty_result(void)
{
    sp_result *live = sp__result_new();
    const char *pb = path_of("empty.pb"), *json = path_of("empty.json");
    CHECK_OK(sp_result_export_protobuf(live, pb));
    CHECK_OK(sp_result_export(live, json, SP_FORMAT_JSON));
    sp_result *a = load(pb), *b = load(json);
    if (a) check_same(live, a);
    if (b) CHECK_EQ(0, sp_result_thread_count(b));
    sp_result_release(a);
    sp_result_release(b);
    sp_result_release(live);
}

static void test_load_errors_name_the_file(void)
{
    sp_result *r = (sp_result *)1;
    CHECK_EQ(SP_EINVAL, sp_result_load(NULL, NULL, &r));
    CHECK_EQ(SP_EIO, sp_result_load(path_of("missing.pb"), NULL, &r));
    CHECK(r == NULL);
    CHECK(strstr(sp_last_error(), "missing.pb") != NULL);
    const char *bad = path_of("bad.json");
    FILE *f = fopen(bad, "w");
    fputs("{\"traceEvents\":[{\"ph\":\"X\",}]}", f);
    fclose(f);
    CHECK_EQ(SP_EFORMAT, sp_result_load(bad, NULL, &r));
    CHECK(strstr(sp_last_error(), "bad.json") != NULL);
    CHECK(strstr(sp_last_error(), "at byte 26") != NULL);
    const char *empty = path_of("empty");
    f = fopen(empty, "w");
    fclose(f);
    CHECK_EQ(SP_EFORMAT, sp_result_load(empty, NULL, &r));
    CHECK(strstr(sp_last_error(), "empty file") != NULL);
    const char *junk = path_of("junk.pb");
    f = fopen(junk, "w");
    fputs("PK\x03\x04 this is a zip file", f);
    fclose(f);
    CHECK_EQ(SP_EFORMAT, sp_result_load(junk, NULL, &r));
    CHECK(strstr(sp_last_error(), "junk.pb") != NULL);
}

/* One thread of depth ranges, each inside the one before (issue 17: every
 * tree walk of the exporters and loaders is iterative). */
static sp_result *deep_result(size_t depth)
{
    sp__builder b;
    CHECK_EQ(0, sp__builder_init(&b));
    sp__thread *t = sp__builder_thread(&b, 7);
    uint32_t name = sp__names_from_bytes(&b.r->names, "nest", 4);
    for (size_t i = 0; t && i < depth; i++) {
        sp__event *e = sp__builder_event(&b, t);
        if (!e) break;
        e->type = SP_EVENT_USER_DEFINED;
        e->name = name;
        e->start_ns = T0 + (int64_t)i * US;
        e->end_ns = T0 + (int64_t)(2 * depth - i) * US;
    }
    b.r->span_start_ns = T0;
    b.r->span_end_ns = T0 + (int64_t)(2 * depth) * US;
    sp_result *r = NULL;
    CHECK_OK(sp__builder_finish(&b, 0, "deep", &r));
    return r;
}

/* Checks the loaded result: one thread, every range at its depth. */
static void check_deep(const sp_result *r, size_t depth)
{
    CHECK_EQ((size_t)1, sp_result_thread_count(r));
    sp_thread_info ti;
    CHECK_OK(sp_result_thread(r, 0, &ti));
    CHECK_EQ(depth, ti.event_count);
    sp_event_info e;
    CHECK_OK(sp_result_event(r, 0, depth - 1, &e));
    CHECK_EQ((uint32_t)(depth - 1), e.depth);
    CHECK_EQ((int64_t)(depth - 2), e.parent);
}

static void test_roundtrip_depth_1m(void)
{
    const size_t depth = 1000000;
    sp_result *r = deep_result(depth);
    if (!r) return;
    check_deep(r, depth);
    static const struct {
        const char *name;
        sp_format format;
    } files[] = {{"deep.pb", SP_FORMAT_PROTOBUF},
                 {"deep.json", SP_FORMAT_JSON},
                 {"deep.pftrace", SP_FORMAT_PERFETTO}};
    for (size_t i = 0; i < 3; i++) {
        const char *path = path_of(files[i].name);
        CHECK_OK(sp_result_export(r, path, files[i].format));
        sp_result *back = NULL;
        CHECK_OK(sp_result_load(path, NULL, &back));
        if (back) check_deep(back, depth);
        sp_result_release(back);
        unlink(path);
    }
    sp_result_release(r);
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    RUN_TEST(test_roundtrip_pb_keeps_every_table);
    RUN_TEST(test_roundtrip_json_keeps_cpu_tables);
    RUN_TEST(test_roundtrip_json_keeps_cpu_utilization_digits);
    RUN_TEST(test_roundtrip_pftrace_keeps_tables);
    RUN_TEST(test_roundtrip_recorded_span);
    RUN_TEST(test_load_paddle_file);
    RUN_TEST(test_load_empty_result);
    RUN_TEST(test_load_errors_name_the_file);
    RUN_TEST(test_roundtrip_depth_1m);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return TEST_SUMMARY();
}
