/* test_pb_wire.c: the .pb file against paddle's schema and across a round
 * trip, checked without trusting the generated protobuf-c code that both the
 * writer and the loader use (a wrong field number in nodetree.proto would
 * round-trip fine and still break paddle's load_profiler_result).
 *
 * - A tiny result, saved: a minimal tag walker written here decodes the
 *   bytes and checks field numbers, wire types and values at known places,
 *   taken from paddle's NodeTreesProto (paddle/fluid/platform/profiler/dump/
 *   nodetree.proto): host node id 1, parentid 2, host_trace_event 3,
 *   runtime_nodes 4, mem_nodes 5, op_supplement_nodes 6; event types
 *   Operator 0, ProfileStep 2, Kernel 4; memory types Allocate 0,
 *   ReservedAllocate 2; and so on.
 * - The same file's paddle part (root fields below 100, stepprof's own start
 *   at 100 and hold counters that other changes add to) is compared byte for
 *   byte with tests/golden/pb_tiny.pb (SP_UPDATE_GOLDEN=1 rewrites it, as
 *   `make golden` does; review the diff).
 * - GPU records whose kernels overlap on different devices, contexts and
 *   streams come back field by field after save and load, and their tables
 *   are the same. */
#include "fixture.h"
#include "load.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define US 1000ll
#define T0 1795000000000000000ll

static char dir[] = "/tmp/sp_pb_wire_XXXXXX";

/* ---- a minimal protobuf wire walker ---- */

typedef struct msg {
    const uint8_t *p;
    size_t n;
} msg;

enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_I32 = 5 };

static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return 0;
    }
    return -1;
}

/* One field of m: its number, wire type, value (varint, fixed) or bytes
 * (LEN), and where it began and ended. Returns 0, or -1 at the end or on
 * malformed input. */
typedef struct field {
    uint32_t number;
    int wire;
    uint64_t value;
    msg bytes;
    const uint8_t *begin, *end;
} field;

static int next_field(const uint8_t **p, const uint8_t *end, field *f)
{
    if (*p >= end) return -1;
    f->begin = *p;
    uint64_t tag;
    if (read_varint(p, end, &tag) != 0) return -1;
    f->number = (uint32_t)(tag >> 3);
    f->wire = (int)(tag & 7);
    f->bytes = (msg){NULL, 0};
    switch (f->wire) {
    case WIRE_VARINT:
        if (read_varint(p, end, &f->value) != 0) return -1;
        break;
    case WIRE_I64:
        if (end - *p < 8) return -1;
        memcpy(&f->value, *p, 8);
        *p += 8;
        break;
    case WIRE_I32: {
        if (end - *p < 4) return -1;
        uint32_t v;
        memcpy(&v, *p, 4);
        f->value = v;
        *p += 4;
        break;
    }
    case WIRE_LEN:
        if (read_varint(p, end, &f->value) != 0 || f->value > (uint64_t)(end - *p)) return -1;
        f->bytes = (msg){*p, (size_t)f->value};
        *p += f->value;
        break;
    default: return -1;
    }
    f->end = *p;
    return 0;
}

/* The nth (from 0) occurrence of field `number` in m; checks that every
 * occurrence has wire type `wire`. Returns 1 if found. */
static int get(msg m, uint32_t number, int nth, int wire, field *out)
{
    const uint8_t *p = m.p, *end = m.p + m.n;
    field f;
    int seen = 0;
    while (next_field(&p, end, &f) == 0) {
        if (f.number != number) continue;
        if (f.wire != wire) {
            fprintf(stderr, "field %u: wire type %d, want %d\n", number, f.wire, wire);
            return 0;
        }
        if (seen++ == nth) {
            *out = f;
            return 1;
        }
    }
    fprintf(stderr, "field %u #%d not found\n", number, nth);
    return 0;
}

/* Walks m to its end; 0 if it is well formed. */
static int well_formed(msg m)
{
    const uint8_t *p = m.p, *end = m.p + m.n;
    field f;
    while (p < end)
        if (next_field(&p, end, &f) != 0) return -1;
    return 0;
}

static uint64_t varint_of(msg m, uint32_t number)
{
    field f;
    return get(m, number, 0, WIRE_VARINT, &f) ? f.value : UINT64_MAX - 1;
}

static msg sub_of(msg m, uint32_t number, int nth)
{
    field f;
    return get(m, number, nth, WIRE_LEN, &f) ? f.bytes : (msg){NULL, 0};
}

static int str_is(msg m, uint32_t number, const char *want)
{
    msg s = sub_of(m, number, 0);
    int ok = s.p && s.n == strlen(want) && memcmp(s.p, want, s.n) == 0;
    if (!ok) fprintf(stderr, "field %u is \"%.*s\", want \"%s\"\n", number, (int)s.n, s.p ? (const char *)s.p : "", want);
    return ok;
}

static int count_of(msg m, uint32_t number)
{
    const uint8_t *p = m.p, *end = m.p + m.n;
    field f;
    int n = 0;
    while (next_field(&p, end, &f) == 0) n += f.number == number;
    return n;
}

/* ---- fixtures ---- */

static char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) *size = (size_t)n;
    return buf;
}

/* One thread "main" (tid 100): ProfileStep#0 > matmul (Operator), a
 * ReservedAllocate in the step, a launch in matmul with its kernel on
 * device 0, context 5, stream 7, and matmul's op supplement. */
static sp_result *tiny_result(void)
{
    sp_result *r = sp__result_new();
    r->span_start_ns = T0;
    r->span_end_ns = T0 + 1000 * US;
    r->span_index = 3;
    r->meta.pid = 77;
    snprintf(r->meta.process_name, sizeof r->meta.process_name, "tiny");
    r->meta.cpu_process = 0.5;
    r->meta.cpu_system = 0.25;
    const fixture_range ranges[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, T0, T0 + 1000 * US},
        {"matmul", SP_EVENT_OPERATOR, T0 + 100 * US, T0 + 500 * US},
    };
    fixture_add_thread(r, 100, "main", ranges, 2);
    sp__thread *m = &r->threads[0];
    fixture_add_mem(r, m, T0 + 50 * US, SP_MEM_RESERVED_ALLOCATE, "Place(gpu:0)", 0xabc0, 4096, 0, 4096, 0, 4096);
    fixture_add_runtime(r, m, "cudaLaunchKernel_v7000", T0 + 200 * US, T0 + 210 * US, 11);
    fixture_add_device(r, "gemm", SP_EVENT_KERNEL, T0 + 300 * US, T0 + 400 * US, 0, 7, 11);
    r->devices[0].context = 5;
    r->devices[0].detail.kernel = (sp__kernel_detail){{64, 2, 1}, {128, 1, 1}, 32, 0, 0, 0, 0, 0, 0};
    fixture_add_op(r, m, T0 + 110 * US, "matmul", "", "X:float32:8x16");
    CHECK_EQ(0, sp__attribute(r));
    return r;
}

static char *save(const sp_result *r, const char *name, size_t *size)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK_OK(sp_result_export_protobuf(r, path));
    char *bytes = slurp(path, size);
    CHECK(bytes != NULL);
    return bytes;
}

/* ---- tests ---- */

static void test_pb_wire_field_numbers_match_paddle(void)
{
    sp_result *r = tiny_result();
    size_t size = 0;
    char *bytes = save(r, "tiny.pb", &size);
    sp_result_release(r);
    if (!bytes) return;
    msg root = {(const uint8_t *)bytes, size};
    CHECK_EQ(0, well_formed(root));
    /* NodeTreesProto: version 1, span_indx 2, thread_trees 3, extra_info 4. */
    CHECK(str_is(root, 1, "1.0.2"));
    CHECK_EQ(3, varint_of(root, 2));
    CHECK_EQ(1, count_of(root, 3));
    CHECK_EQ(2, count_of(root, 4));
    msg extra = sub_of(root, 4, 0);
    CHECK(str_is(extra, 1, "System Cpu Utilization"));
    CHECK(str_is(extra, 2, "0.250000"));
    extra = sub_of(root, 4, 1);
    CHECK(str_is(extra, 1, "Process Cpu Utilization"));
    CHECK(str_is(extra, 2, "0.500000"));
    /* ThreadNodeTreeProto: thread_id 1, host_nodes 2 (root, step, matmul). */
    msg tree = sub_of(root, 3, 0);
    CHECK_EQ(0, well_formed(tree));
    CHECK_EQ(100, varint_of(tree, 1));
    CHECK_EQ(3, count_of(tree, 2));
    /* HostTraceEventNodeProto: id 1, parentid 2 (int64: -1 is ten bytes). */
    msg node0 = sub_of(tree, 2, 0), node1 = sub_of(tree, 2, 1), node2 = sub_of(tree, 2, 2);
    CHECK_EQ(0, varint_of(node0, 1));
    CHECK_U64_EQ(UINT64_MAX, varint_of(node0, 2));
    CHECK_EQ(1, varint_of(node1, 1));
    CHECK_EQ(0, varint_of(node1, 2));
    CHECK_EQ(2, varint_of(node2, 1));
    CHECK_EQ(1, varint_of(node2, 2));
    /* HostTraceEventProto (field 3): name 1, type 2, start 3, end 4, pid 5, tid 6. */
    msg step = sub_of(node1, 3, 0);
    CHECK(str_is(step, 1, "ProfileStep#0"));
    CHECK_EQ(2, varint_of(step, 2)); /* ProfileStep */
    CHECK_U64_EQ(T0, varint_of(step, 3));
    CHECK_U64_EQ(T0 + 1000 * US, varint_of(step, 4));
    CHECK_EQ(77, varint_of(step, 5));
    CHECK_EQ(100, varint_of(step, 6));
    msg op = sub_of(node2, 3, 0);
    CHECK(str_is(op, 1, "matmul"));
    CHECK_EQ(0, varint_of(op, 2)); /* Operator */
    CHECK_U64_EQ(T0 + 100 * US, varint_of(op, 3));
    CHECK_U64_EQ(T0 + 500 * US, varint_of(op, 4));
    /* mem_nodes 5 on the step: MemTraceEventNodeProto.mem_event 1 ->
     * timestamp_ns 1, type 2, addr 3, pid 4, tid 5, increase_bytes 6,
     * place 7, current_allocated 8, current_reserved 9, peaks 10, 11. */
    CHECK_EQ(1, count_of(node1, 5));
    CHECK_EQ(0, count_of(node2, 5));
    msg mem = sub_of(sub_of(node1, 5, 0), 1, 0);
    CHECK_U64_EQ(T0 + 50 * US, varint_of(mem, 1));
    CHECK_EQ(2, varint_of(mem, 2)); /* ReservedAllocate */
    CHECK_EQ(0xabc0, varint_of(mem, 3));
    CHECK_EQ(77, varint_of(mem, 4));
    CHECK_EQ(100, varint_of(mem, 5));
    CHECK_EQ(4096, varint_of(mem, 6));
    CHECK(str_is(mem, 7, "Place(gpu:0)"));
    CHECK_EQ(0, varint_of(mem, 8));
    CHECK_EQ(4096, varint_of(mem, 9));
    CHECK_EQ(0, varint_of(mem, 10));
    CHECK_EQ(4096, varint_of(mem, 11));
    /* runtime_nodes 4 on matmul: CudaRuntimeTraceEventNodeProto:
     * runtime_trace_event 1 (name 1, start 2, end 3, pid 4, tid 5,
     * correlation_id 6, callback_id 7), device_nodes 2. */
    CHECK_EQ(1, count_of(node2, 4));
    CHECK_EQ(0, count_of(node1, 4));
    msg rt_node = sub_of(node2, 4, 0);
    msg rt = sub_of(rt_node, 1, 0);
    CHECK(str_is(rt, 1, "cudaLaunchKernel_v7000"));
    CHECK_U64_EQ(T0 + 200 * US, varint_of(rt, 2));
    CHECK_U64_EQ(T0 + 210 * US, varint_of(rt, 3));
    CHECK_EQ(77, varint_of(rt, 4));
    CHECK_EQ(100, varint_of(rt, 5));
    CHECK_EQ(11, varint_of(rt, 6));
    CHECK_EQ(211, varint_of(rt, 7));
    /* DeviceTraceEventNodeProto.device_event 1: name 1, type 2, start 3,
     * end 4, device_id 5, context_id 6, stream_id 7, correlation_id 8,
     * kernel_info 9 (block_x 1, block_y 2, block_z 3, grid_x 4, ...). */
    CHECK_EQ(1, count_of(rt_node, 2));
    msg dev = sub_of(sub_of(rt_node, 2, 0), 1, 0);
    CHECK(str_is(dev, 1, "gemm"));
    CHECK_EQ(4, varint_of(dev, 2)); /* Kernel */
    CHECK_U64_EQ(T0 + 300 * US, varint_of(dev, 3));
    CHECK_U64_EQ(T0 + 400 * US, varint_of(dev, 4));
    CHECK_EQ(0, varint_of(dev, 5));
    CHECK_EQ(5, varint_of(dev, 6));
    CHECK_EQ(7, varint_of(dev, 7));
    CHECK_EQ(11, varint_of(dev, 8));
    msg kernel = sub_of(dev, 9, 0);
    CHECK_EQ(128, varint_of(kernel, 1));
    CHECK_EQ(1, varint_of(kernel, 2));
    CHECK_EQ(64, varint_of(kernel, 4));
    CHECK_EQ(2, varint_of(kernel, 5));
    CHECK_EQ(32, varint_of(kernel, 9));
    /* op_supplement_nodes 6: op_supplement_event 1 -> timestamp_ns 1,
     * op_type 2, pid 3, tid 4. */
    CHECK_EQ(1, count_of(node2, 6));
    msg sup = sub_of(sub_of(node2, 6, 0), 1, 0);
    CHECK_U64_EQ(T0 + 110 * US, varint_of(sup, 1));
    CHECK(str_is(sup, 2, "matmul"));
    CHECK_EQ(77, varint_of(sup, 3));
    CHECK_EQ(100, varint_of(sup, 4));
    free(bytes);
}

/* The paddle part of the tiny result's file (root fields below 100, in
 * file order) is byte for byte tests/golden/pb_tiny.pb. */
static void test_pb_wire_golden_bytes(void)
{
    sp_result *r = tiny_result();
    size_t size = 0;
    char *bytes = save(r, "golden.pb", &size);
    sp_result_release(r);
    if (!bytes) return;
    char *paddle = malloc(size + 1);
    size_t n = 0;
    const uint8_t *p = (const uint8_t *)bytes, *end = p + size;
    field f;
    while (paddle && next_field(&p, end, &f) == 0)
        if (f.number < 100) {
            memcpy(paddle + n, f.begin, (size_t)(f.end - f.begin));
            n += (size_t)(f.end - f.begin);
        }
    CHECK(p == end);
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/golden/pb_tiny.pb", SP_SOURCE_DIR);
    if (getenv("SP_UPDATE_GOLDEN")) {
        FILE *out = fopen(path, "wb");
        CHECK(out != NULL);
        if (out) {
            CHECK_EQ(n, fwrite(paddle, 1, n, out));
            fclose(out);
        }
    } else {
        size_t golden_size = 0;
        char *golden = slurp(path, &golden_size);
        CHECK(golden != NULL);
        if (golden) {
            CHECK_EQ(golden_size, n);
            size_t at = 0;
            while (at < n && at < golden_size && golden[at] == paddle[at]) at++;
            if (at < n || n != golden_size)
                fprintf(stderr, "pb_tiny.pb: first difference at byte %zu (SP_UPDATE_GOLDEN=1 rewrites it)\n", at);
            CHECK(n == golden_size && memcmp(golden, paddle, n) == 0);
        }
        free(golden);
    }
    free(paddle);
    free(bytes);
}

/* Kernels overlapping on two devices, two contexts and three streams, each
 * with its own correlation id, launched from two threads. */
static sp_result *overlap_result(void)
{
    sp_result *r = sp__result_new();
    r->span_start_ns = T0;
    r->span_end_ns = T0 + 2000 * US;
    r->meta.pid = 9;
    const fixture_range main_ranges[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, T0, T0 + 2000 * US},
        {"matmul", SP_EVENT_OPERATOR, T0 + 100 * US, T0 + 400 * US},
        {"conv", SP_EVENT_OPERATOR, T0 + 500 * US, T0 + 900 * US},
    };
    fixture_add_thread(r, 100, "main", main_ranges, 3);
    const fixture_range side_ranges[] = {
        {"allreduce", SP_EVENT_COMMUNICATION, T0 + 150 * US, T0 + 950 * US},
    };
    fixture_add_thread(r, 200, "side", side_ranges, 1);
    sp__thread *m = &r->threads[0], *s = &r->threads[1];
    fixture_add_runtime(r, m, "cudaLaunchKernel_v7000", T0 + 110 * US, T0 + 120 * US, 21);
    fixture_add_runtime(r, m, "cudaLaunchKernel_v7000", T0 + 510 * US, T0 + 520 * US, 22);
    fixture_add_runtime(r, m, "cudaMemcpyAsync_v3020", T0 + 530 * US, T0 + 540 * US, 23);
    fixture_add_runtime(r, s, "cudaLaunchKernel_v7000", T0 + 160 * US, T0 + 170 * US, 31);
    m->runtimes[1].cbid = 13;
    s->runtimes[0].cbid = 17;
    /* device, context, stream, correlation all differ between overlapping records. */
    fixture_add_device(r, "gemm", SP_EVENT_KERNEL, T0 + 200 * US, T0 + 800 * US, 0, 7, 21);
    fixture_add_device(r, "conv_kernel", SP_EVENT_KERNEL, T0 + 600 * US, T0 + 1000 * US, 0, 13, 22);
    fixture_add_device(r, "MEMCPY_DtoD", SP_EVENT_MEMCPY, T0 + 650 * US, T0 + 660 * US, 1, 14, 23);
    fixture_add_device(r, "ncclAllReduceKernel", SP_EVENT_KERNEL, T0 + 250 * US, T0 + 1200 * US, 1, 3, 31);
    r->devices[0].context = 1;
    r->devices[1].context = 2;
    r->devices[2].context = 6;
    r->devices[3].context = 4;
    r->devices[2].bytes = 1 << 20;
    CHECK_EQ(0, sp__attribute(r));
    return r;
}

static char *tables(const sp_result *r)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    CHECK(f != NULL);
    if (!f) return NULL;
    for (int sep = 0; sep < 2; sep++) {
        sp_summary_options o;
        sp_summary_options_init(&o);
        o.thread_sep = sep;
        o.time_unit = "us";
        o.sorted_by = SP_SORTED_GPU_TOTAL;
        CHECK_OK(sp_result_summary(r, &o, f));
    }
    fclose(f);
    return text;
}

static void test_pb_wire_gpu_records_keep_every_field(void)
{
    sp_result *live = overlap_result();
    char path[256];
    snprintf(path, sizeof path, "%s/overlap.pb", dir);
    CHECK_OK(sp_result_export_protobuf(live, path));
    sp_result *loaded = NULL;
    CHECK_OK(sp_result_load(path, NULL, &loaded));
    if (!loaded) {
        sp_result_release(live);
        return;
    }
    /* Every record was attributed to its launch before saving. */
    for (size_t d = 0; d < live->device_count; d++) CHECK(live->devices[d].runtime >= 0);
    CHECK_EQ(live->device_count, loaded->device_count);
    for (size_t d = 0; d < live->device_count && d < loaded->device_count; d++) {
        const sp__device_rec *a = &live->devices[d], *b = &loaded->devices[d];
        CHECK_STR_EQ(sp__result_name(live, a->name), sp__result_name(loaded, b->name));
        CHECK_EQ(a->type, b->type);
        CHECK_EQ(a->start_ns, b->start_ns);
        CHECK_EQ(a->end_ns, b->end_ns);
        CHECK_EQ(a->device, b->device);
        CHECK_EQ(a->context, b->context);
        CHECK_EQ(a->stream, b->stream);
        CHECK_EQ(a->correlation, b->correlation);
        CHECK_EQ(a->bytes, b->bytes);
        CHECK_EQ(a->thread, b->thread);
        CHECK_EQ(a->runtime, b->runtime);
    }
    CHECK_EQ(live->thread_count, loaded->thread_count);
    for (size_t t = 0; t < live->thread_count && t < loaded->thread_count; t++) {
        const sp__thread *a = &live->threads[t], *b = &loaded->threads[t];
        CHECK_EQ(a->tid, b->tid);
        CHECK_EQ(a->runtime_count, b->runtime_count);
        for (size_t i = 0; i < a->runtime_count && i < b->runtime_count; i++) {
            const sp__runtime *x = &a->runtimes[i], *y = &b->runtimes[i];
            CHECK_STR_EQ(sp__result_name(live, x->name), sp__result_name(loaded, y->name));
            CHECK_EQ(x->start_ns, y->start_ns);
            CHECK_EQ(x->end_ns, y->end_ns);
            CHECK_EQ(x->correlation, y->correlation);
            CHECK_EQ(x->cbid, y->cbid);
            CHECK_EQ(x->host, y->host);
        }
    }
    /* The values themselves, not just live == loaded. */
    CHECK_EQ(13, loaded->devices[1].stream);
    CHECK_EQ(2, loaded->devices[1].context);
    CHECK_EQ(22, loaded->devices[1].correlation);
    CHECK_EQ(1, loaded->devices[3].device);
    CHECK_EQ(4, loaded->devices[3].context);
    CHECK_EQ(3, loaded->devices[3].stream);
    CHECK_EQ(1, loaded->devices[3].thread);
    char *a = tables(live), *b = tables(loaded);
    CHECK(a && b);
    if (a && b) CHECK_STR_EQ(a, b);
    free(a);
    free(b);
    sp_result_release(loaded);
    sp_result_release(live);
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    RUN_TEST(test_pb_wire_field_numbers_match_paddle);
    RUN_TEST(test_pb_wire_golden_bytes);
    RUN_TEST(test_pb_wire_gpu_records_keep_every_field);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return TEST_SUMMARY();
}
