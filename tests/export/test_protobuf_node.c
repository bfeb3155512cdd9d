/* test_protobuf_node.c: the hand-written host node sizer and packer
 * (protobuf_node.c) against protobuf-c itself. Each message the writer fills
 * is built with its optional fields set and unset in every combination (or,
 * for the kernel detail's 17 fields, each alone, all, none and a spread of
 * mixtures), with values at the varint boundaries, negative ids, the largest
 * integers, NaN and -0.0, NULL, empty and long strings; the size and every
 * byte must equal protobuf_c_message_get_packed_size and
 * protobuf_c_message_pack. */
#include "check.h"
#include "protobuf.h"

#include <math.h>
#include <stdlib.h>

static unsigned compared; /* nodes compared, so a loop that ran nothing fails */

/* Compares one node; reports the first difference only, so that a broken
 * field does not print thousands of lines. Returns 0 when the node differs. */
static int same_as_protobuf_c(const sp__pb_host_node *n, const char *what, unsigned mask)
{
    compared++;
    size_t want = protobuf_c_message_get_packed_size(&n->base);
    size_t got = sp__pb_host_node_size(n);
    if (want != got) {
        CHECK_FAIL_("%s, mask %#x: size %zu, protobuf-c says %zu", what, mask, got, want);
        return 0;
    }
    uint8_t *a = malloc(want + 1), *b = malloc(want + 1);
    if (!a || !b) {
        CHECK(a && b);
        free(a);
        free(b);
        return 0;
    }
    size_t packed = protobuf_c_message_pack(&n->base, a);
    size_t wrote = sp__pb_host_node_pack(n, b);
    int same = packed == want && wrote == want && memcmp(a, b, want) == 0;
    if (!same) {
        size_t at = 0;
        while (at < want && a[at] == b[at])
            at++;
        CHECK_FAIL_("%s, mask %#x: wrote %zu bytes, protobuf-c %zu; first difference at byte %zu",
                    what, mask, wrote, packed, at);
    }
    free(a);
    free(b);
    return same;
}

/* Values at the edges of varint lengths, and the largest. */
static const uint64_t edges[] = {
    0, 1, 127, 128, 16383, 16384, UINT32_MAX, (uint64_t)1 << 35, (uint64_t)INT64_MAX, UINT64_MAX};
#define EDGE(i) edges[(i) % (sizeof edges / sizeof edges[0])]

static char long_name[20000];
static const char *string_of(unsigned i)
{
    static const char *const strings[] = {"", "matmul", long_name + sizeof long_name - 301,
                                          long_name};
    return strings[i % 4];
}

static void init_long_name(void)
{
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
}

static void test_pb_node_host_every_field_subset(void)
{
    init_long_name();
    int ok = 1;
    for (unsigned mask = 0; ok && mask < (1u << 11); mask++) {
        sp__pb_host_node node = PADDLE__PLATFORM__HOST_TRACE_EVENT_NODE_PROTO__INIT;
        sp__pb_host h = PADDLE__PLATFORM__HOST_TRACE_EVENT_PROTO__INIT;
        static const int64_t ids[] = {0, 1, -1, INT64_MIN, INT64_MAX, 300};
        node.has_id = mask & 1, node.id = ids[mask % 6];
        node.has_parentid = !!(mask & 2), node.parentid = ids[(mask / 6 + 2) % 6];
        h.name = mask & 4 ? (char *)string_of(mask >> 3) : NULL;
        h.has_type = !!(mask & 8), h.type = (uint32_t)EDGE(mask);
        h.has_start_ns = !!(mask & 16), h.start_ns = EDGE(mask + 1);
        h.has_end_ns = !!(mask & 32), h.end_ns = EDGE(mask + 2);
        h.has_process_id = !!(mask & 64), h.process_id = EDGE(mask + 3);
        h.has_thread_id = !!(mask & 128), h.thread_id = EDGE(mask + 4);
        h.has_stepprof_flags = !!(mask & 256), h.stepprof_flags = (uint32_t)EDGE(mask + 5);
        static const double values[] = {0.0, -0.0, 1.5, -1e300, NAN, INFINITY};
        h.has_stepprof_value = !!(mask & 512), h.stepprof_value = values[mask % 6];
        h.has_stepprof_type = !!(mask & 1024), h.stepprof_type = (uint32_t)EDGE(mask + 6);
        node.host_trace_event = &h;
        ok = same_as_protobuf_c(&node, "host", mask);
        node.host_trace_event = NULL;
        ok = ok && same_as_protobuf_c(&node, "host, no event", mask);
    }
    CHECK_EQ(2 << 11, compared);
}

static void fill_kernel(Paddle__Platform__KernelEventInfoProto *k, unsigned mask)
{
    *k = (Paddle__Platform__KernelEventInfoProto)PADDLE__PLATFORM__KERNEL_EVENT_INFO_PROTO__INIT;
    protobuf_c_boolean *has[] = {&k->has_block_x,
                                 &k->has_block_y,
                                 &k->has_block_z,
                                 &k->has_grid_x,
                                 &k->has_grid_y,
                                 &k->has_grid_z,
                                 &k->has_dynamic_shared_memory,
                                 &k->has_static_shared_memory,
                                 &k->has_registers_per_thread,
                                 &k->has_local_memory_per_thread,
                                 &k->has_local_memory_total};
    uint32_t *u32[] = {&k->block_x,
                       &k->block_y,
                       &k->block_z,
                       &k->grid_x,
                       &k->grid_y,
                       &k->grid_z,
                       &k->dynamic_shared_memory,
                       &k->static_shared_memory,
                       &k->registers_per_thread,
                       &k->local_memory_per_thread,
                       &k->local_memory_total};
    for (unsigned i = 0; i < 11; i++)
        *has[i] = !!(mask & 1u << i), *u32[i] = (uint32_t)EDGE(mask + i);
    k->has_queued = !!(mask & 1u << 11), k->queued = EDGE(mask + 11);
    k->has_submitted = !!(mask & 1u << 12), k->submitted = EDGE(mask + 12);
    k->has_completed = !!(mask & 1u << 13), k->completed = EDGE(mask + 13);
    k->has_blocks_per_sm = !!(mask & 1u << 14), k->blocks_per_sm = (float)mask / 7.0f;
    k->has_warps_per_sm = !!(mask & 1u << 15), k->warps_per_sm = -0.0f;
    k->has_occupancy = !!(mask & 1u << 16), k->occupancy = mask & 1 ? NAN : 1.0f;
}

/* One host node holding two runtime calls: the first with device records
 * of every detail kind (and a kind whose message is missing), the second
 * with none and no event. */
static int runtime_node_matches(unsigned rt_mask, unsigned dev_mask, unsigned kernel_mask)
{
    sp__pb_runtime rt = PADDLE__PLATFORM__CUDA_RUNTIME_TRACE_EVENT_PROTO__INIT;
    rt.name = rt_mask & 1 ? (char *)string_of(rt_mask >> 1) : NULL;
    rt.has_start_ns = !!(rt_mask & 2), rt.start_ns = EDGE(rt_mask);
    rt.has_end_ns = !!(rt_mask & 4), rt.end_ns = EDGE(rt_mask + 1);
    rt.has_process_id = !!(rt_mask & 8), rt.process_id = EDGE(rt_mask + 2);
    rt.has_thread_id = !!(rt_mask & 16), rt.thread_id = EDGE(rt_mask + 3);
    rt.has_correlation_id = !!(rt_mask & 32), rt.correlation_id = (uint32_t)EDGE(rt_mask + 4);
    rt.has_callback_id = !!(rt_mask & 64), rt.callback_id = (uint32_t)EDGE(rt_mask + 5);
    rt.has_stepprof_driver = !!(rt_mask & 128), rt.stepprof_driver = (uint32_t)EDGE(rt_mask + 6);

    Paddle__Platform__KernelEventInfoProto kernel;
    fill_kernel(&kernel, kernel_mask);
    Paddle__Platform__MemcpyEventInfoProto copy = PADDLE__PLATFORM__MEMCPY_EVENT_INFO_PROTO__INIT;
    copy.has_num_bytes = dev_mask & 1, copy.num_bytes = EDGE(dev_mask);
    copy.copy_kind = dev_mask & 2 ? (char *)string_of(dev_mask) : NULL;
    copy.src_kind = dev_mask & 4 ? (char *)string_of(dev_mask + 1) : NULL;
    copy.dst_kind = dev_mask & 8 ? (char *)string_of(dev_mask + 2) : NULL;
    Paddle__Platform__MemsetEventInfoProto set = PADDLE__PLATFORM__MEMSET_EVENT_INFO_PROTO__INIT;
    set.has_num_bytes = !!(dev_mask & 16), set.num_bytes = EDGE(dev_mask + 3);
    set.memory_kind = dev_mask & 32 ? (char *)string_of(dev_mask + 3) : NULL;
    set.has_value = !!(dev_mask & 64), set.value = (uint32_t)EDGE(dev_mask + 4);

    enum { KINDS = 5 };
    sp__pb_device devs[KINDS];
    sp__pb_device_node dev_nodes[KINDS];
    sp__pb_device_node *dev_ptrs[KINDS];
    for (unsigned d = 0; d < KINDS; d++) {
        sp__pb_device *e = &devs[d];
        *e = (sp__pb_device)PADDLE__PLATFORM__DEVICE_TRACE_EVENT_PROTO__INIT;
        unsigned m = dev_mask ^ d * 0x55;
        e->name = m & 1 ? (char *)string_of(m + d) : NULL;
        e->has_type = !!(m & 2), e->type = (uint32_t)EDGE(m);
        e->has_start_ns = !!(m & 4), e->start_ns = EDGE(m + 1);
        e->has_end_ns = !!(m & 8), e->end_ns = EDGE(m + 2);
        e->has_device_id = !!(m & 16), e->device_id = EDGE(m + 3);
        e->has_context_id = !!(m & 32), e->context_id = EDGE(m + 4);
        e->has_stream_id = !!(m & 64), e->stream_id = EDGE(m + 5);
        e->has_correlation_id = !!(m & 128), e->correlation_id = (uint32_t)EDGE(m + 6);
        e->has_stepprof_index = !!(m & 256), e->stepprof_index = EDGE(m + 7);
        if (d == 1) {
            e->detail_info_case =
                PADDLE__PLATFORM__DEVICE_TRACE_EVENT_PROTO__DETAIL_INFO_KERNEL_INFO;
            e->kernel_info = &kernel;
        } else if (d == 2) {
            e->detail_info_case =
                PADDLE__PLATFORM__DEVICE_TRACE_EVENT_PROTO__DETAIL_INFO_MEMCPY_INFO;
            e->memcpy_info = &copy;
        } else if (d == 3) {
            e->detail_info_case =
                PADDLE__PLATFORM__DEVICE_TRACE_EVENT_PROTO__DETAIL_INFO_MEMSET_INFO;
            e->memset_info = &set;
        } else if (d == 4) { /* the case set, its message missing: protobuf-c writes nothing */
            e->detail_info_case =
                PADDLE__PLATFORM__DEVICE_TRACE_EVENT_PROTO__DETAIL_INFO_KERNEL_INFO;
            e->kernel_info = NULL;
        }
        dev_nodes[d] = (sp__pb_device_node)PADDLE__PLATFORM__DEVICE_TRACE_EVENT_NODE_PROTO__INIT;
        dev_nodes[d].device_event = dev_mask & 512 && d == 0 ? NULL : e;
        dev_ptrs[d] = &dev_nodes[d];
    }
    sp__pb_runtime_node rt_nodes[2] = {PADDLE__PLATFORM__CUDA_RUNTIME_TRACE_EVENT_NODE_PROTO__INIT,
                                       PADDLE__PLATFORM__CUDA_RUNTIME_TRACE_EVENT_NODE_PROTO__INIT};
    rt_nodes[0].runtime_trace_event = &rt;
    rt_nodes[0].n_device_nodes = KINDS;
    rt_nodes[0].device_nodes = dev_ptrs;
    sp__pb_runtime_node *rt_ptrs[2] = {&rt_nodes[0], &rt_nodes[1]};
    sp__pb_host_node node = PADDLE__PLATFORM__HOST_TRACE_EVENT_NODE_PROTO__INIT;
    node.has_id = node.has_parentid = 1;
    node.id = 7, node.parentid = -1;
    node.n_runtime_nodes = 2;
    node.runtime_nodes = rt_ptrs;
    char what[64];
    snprintf(what, sizeof what, "runtime %#x, kernel %#x, device", rt_mask, kernel_mask);
    return same_as_protobuf_c(&node, what, dev_mask);
}

static void test_pb_node_runtimes_and_devices(void)
{
    init_long_name();
    compared = 0;
    int ok = 1;
    for (unsigned rt_mask = 0; ok && rt_mask < (1u << 8); rt_mask++)
        ok = runtime_node_matches(rt_mask, rt_mask * 3u & 0x3ff, 0x1ffff);
    for (unsigned dev_mask = 0; ok && dev_mask < (1u << 10); dev_mask++)
        ok = runtime_node_matches(0xff, dev_mask, (1u << 17) - 1 - dev_mask);
    for (unsigned bit = 0; ok && bit < 17; bit++)
        ok = runtime_node_matches(0xff, 0x3ff, 1u << bit);
    for (unsigned i = 0; ok && i < 256; i++)
        ok = runtime_node_matches(i, 0x1ff, i * 2654435761u & 0x1ffff);
    CHECK_EQ(256 + 1024 + 17 + 256, compared);
}

static void test_pb_node_mem_every_field_subset(void)
{
    init_long_name();
    compared = 0;
    int ok = 1;
    for (unsigned mask = 0; ok && mask < (1u << 11); mask++) {
        sp__pb_mem e = PADDLE__PLATFORM__MEM_TRACE_EVENT_PROTO__INIT;
        e.has_timestamp_ns = mask & 1, e.timestamp_ns = EDGE(mask);
        e.has_type = !!(mask & 2), e.type = (uint32_t)EDGE(mask + 1);
        e.has_addr = !!(mask & 4), e.addr = EDGE(mask + 2);
        e.has_process_id = !!(mask & 8), e.process_id = EDGE(mask + 3);
        e.has_thread_id = !!(mask & 16), e.thread_id = EDGE(mask + 4);
        static const int64_t bytes[] = {0, -1, 4096, -4096, INT64_MIN, INT64_MAX};
        e.has_increase_bytes = !!(mask & 32), e.increase_bytes = bytes[mask % 6];
        e.place = mask & 64 ? (char *)string_of(mask) : NULL;
        e.has_current_allocated = !!(mask & 128), e.current_allocated = EDGE(mask + 5);
        e.has_current_reserved = !!(mask & 256), e.current_reserved = EDGE(mask + 6);
        e.has_peak_allocated = !!(mask & 512), e.peak_allocated = EDGE(mask + 7);
        e.has_peak_reserved = !!(mask & 1024), e.peak_reserved = EDGE(mask + 8);
        sp__pb_mem_node mem_nodes[2] = {PADDLE__PLATFORM__MEM_TRACE_EVENT_NODE_PROTO__INIT,
                                        PADDLE__PLATFORM__MEM_TRACE_EVENT_NODE_PROTO__INIT};
        mem_nodes[0].mem_event = &e; /* the second has no event */
        sp__pb_mem_node *ptrs[2] = {&mem_nodes[0], &mem_nodes[1]};
        sp__pb_host_node node = PADDLE__PLATFORM__HOST_TRACE_EVENT_NODE_PROTO__INIT;
        node.n_mem_nodes = 2;
        node.mem_nodes = ptrs;
        ok = same_as_protobuf_c(&node, "mem", mask);
    }
    CHECK_EQ(1 << 11, compared);
}

/* Op supplements go through protobuf-c inside the hand-packed node. */
static void test_pb_node_op_supplements_and_every_list(void)
{
    init_long_name();
    sp__pb_op op = PADDLE__PLATFORM__OPERATOR_SUPPLEMENT_EVENT_PROTO__INIT;
    op.has_timestamp_ns = op.has_process_id = op.has_thread_id = op.has_op_id = 1;
    op.timestamp_ns = UINT64_MAX, op.process_id = 1234, op.thread_id = 128, op.op_id = 0;
    op.op_type = long_name;
    op.callstack = (char *)"";
    sp__pb_op_node op_nodes[3] = {PADDLE__PLATFORM__OPERATOR_SUPPLEMENT_EVENT_NODE_PROTO__INIT,
                                  PADDLE__PLATFORM__OPERATOR_SUPPLEMENT_EVENT_NODE_PROTO__INIT,
                                  PADDLE__PLATFORM__OPERATOR_SUPPLEMENT_EVENT_NODE_PROTO__INIT};
    op_nodes[0].op_supplement_event = &op;
    op_nodes[2].op_supplement_event = &op;
    sp__pb_op_node *op_ptrs[3] = {&op_nodes[0], &op_nodes[1], &op_nodes[2]};
    sp__pb_mem mem = PADDLE__PLATFORM__MEM_TRACE_EVENT_PROTO__INIT;
    mem.place = (char *)"";
    sp__pb_mem_node mem_node = PADDLE__PLATFORM__MEM_TRACE_EVENT_NODE_PROTO__INIT;
    mem_node.mem_event = &mem;
    sp__pb_mem_node *mem_ptrs[1] = {&mem_node};
    sp__pb_runtime_node rt_node = PADDLE__PLATFORM__CUDA_RUNTIME_TRACE_EVENT_NODE_PROTO__INIT;
    sp__pb_runtime_node *rt_ptrs[1] = {&rt_node};
    sp__pb_host h = PADDLE__PLATFORM__HOST_TRACE_EVENT_PROTO__INIT;
    h.name = (char *)"";
    sp__pb_host_node node = PADDLE__PLATFORM__HOST_TRACE_EVENT_NODE_PROTO__INIT;
    node.has_id = 1, node.id = INT64_MIN;
    node.host_trace_event = &h;
    node.n_runtime_nodes = 1, node.runtime_nodes = rt_ptrs;
    node.n_mem_nodes = 1, node.mem_nodes = mem_ptrs;
    node.n_op_supplement_nodes = 3, node.op_supplement_nodes = op_ptrs;
    compared = 0;
    CHECK(same_as_protobuf_c(&node, "every list", 0));
    sp__pb_host_node empty = PADDLE__PLATFORM__HOST_TRACE_EVENT_NODE_PROTO__INIT;
    CHECK(same_as_protobuf_c(&empty, "empty node", 0));
    CHECK_EQ(0, sp__pb_host_node_size(&empty));
    CHECK_EQ(2, compared);
}

int main(void)
{
    RUN_TEST(test_pb_node_host_every_field_subset);
    RUN_TEST(test_pb_node_runtimes_and_devices);
    RUN_TEST(test_pb_node_mem_every_field_subset);
    RUN_TEST(test_pb_node_op_supplements_and_every_list);
    return TEST_SUMMARY();
}
