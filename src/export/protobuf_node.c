/* protobuf_node.c: sizes and packs one host node (HostTraceEventNodeProto
 * with the runtime, device and memory messages under it) by hand, for the
 * protobuf writer (protobuf.c). A thread's tree is one length-delimited
 * field, so the writer sizes every node once to learn the tree's length
 * before it writes them; through protobuf-c's reflection tables, sizing and
 * packing were most of the save's time outside write().
 *
 * The bytes are exactly protobuf-c's (test_pb_node.c compares both with
 * protobuf-c on every field set and unset): fields in number order; an
 * optional scalar when its has_ flag is set; a string or message when its
 * pointer is set, "" included; a oneof member when it is the case and its
 * pointer is set; no unknown fields (the writer never keeps any). Op
 * supplements, written only with record_shapes and a few per node, still go
 * through protobuf-c. */
#include "protobuf.h"

#include <string.h>

/* Every field number here is below 2048, so its tag takes one or two bytes. */
#define TAG_BYTES(number) ((number) < 16 ? (size_t)1 : (size_t)2)

enum { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_I32 = 5 };

static inline size_t varint_bytes(uint64_t v)
{
    /* 7 bits a byte: 1 + floor(h / 7) for the highest set bit h, which
     * (h * 9 + 73) / 64 equals for every h up to 63. */
    size_t high = (size_t)(63 ^ __builtin_clzll(v | 1));
    return (high * 9 + 73) / 64;
}

static inline size_t opt_varint(int has, unsigned number, uint64_t v)
{
    return has ? TAG_BYTES(number) + varint_bytes(v) : 0;
}

static inline size_t opt_fixed(int has, unsigned number, size_t bytes)
{
    return has ? TAG_BYTES(number) + bytes : 0;
}

static inline size_t len_field(unsigned number, size_t n)
{
    return TAG_BYTES(number) + varint_bytes(n) + n;
}

static inline size_t opt_string(unsigned number, const char *s)
{
    return s ? len_field(number, strlen(s)) : 0;
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint8_t *put_tag(uint8_t *p, unsigned number, unsigned wire)
{
    return put_varint(p, (uint64_t)number << 3 | wire);
}

static inline uint8_t *pack_varint(uint8_t *p, int has, unsigned number, uint64_t v)
{
    return has ? put_varint(put_tag(p, number, WIRE_VARINT), v) : p;
}

/* Little-endian, whatever the host's order, as the wire wants. */
static inline uint8_t *pack_fixed64(uint8_t *p, int has, unsigned number, double v)
{
    if (!has) return p;
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    p = put_tag(p, number, WIRE_I64);
    for (int i = 0; i < 8; i++)
        *p++ = (uint8_t)(bits >> (8 * i));
    return p;
}

static inline uint8_t *pack_fixed32(uint8_t *p, int has, unsigned number, float v)
{
    if (!has) return p;
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    p = put_tag(p, number, WIRE_I32);
    for (int i = 0; i < 4; i++)
        *p++ = (uint8_t)(bits >> (8 * i));
    return p;
}

static inline uint8_t *pack_len(uint8_t *p, unsigned number, size_t n)
{
    return put_varint(put_tag(p, number, WIRE_LEN), n);
}

static inline uint8_t *pack_string(uint8_t *p, unsigned number, const char *s)
{
    if (!s) return p;
    size_t n = strlen(s);
    p = pack_len(p, number, n);
    memcpy(p, s, n);
    return p + n;
}

/* ---- HostTraceEventProto ---- */

static size_t host_size(const sp__pb_host *h)
{
    return opt_string(1, h->name) + opt_varint(h->has_type, 2, h->type) +
           opt_varint(h->has_start_ns, 3, h->start_ns) + opt_varint(h->has_end_ns, 4, h->end_ns) +
           opt_varint(h->has_process_id, 5, h->process_id) +
           opt_varint(h->has_thread_id, 6, h->thread_id) +
           opt_varint(h->has_stepprof_flags, 100, h->stepprof_flags) +
           opt_fixed(h->has_stepprof_value, 101, 8) +
           opt_varint(h->has_stepprof_type, 102, h->stepprof_type);
}

static uint8_t *host_pack(const sp__pb_host *h, uint8_t *p)
{
    p = pack_string(p, 1, h->name);
    p = pack_varint(p, h->has_type, 2, h->type);
    p = pack_varint(p, h->has_start_ns, 3, h->start_ns);
    p = pack_varint(p, h->has_end_ns, 4, h->end_ns);
    p = pack_varint(p, h->has_process_id, 5, h->process_id);
    p = pack_varint(p, h->has_thread_id, 6, h->thread_id);
    p = pack_varint(p, h->has_stepprof_flags, 100, h->stepprof_flags);
    p = pack_fixed64(p, h->has_stepprof_value, 101, h->stepprof_value);
    return pack_varint(p, h->has_stepprof_type, 102, h->stepprof_type);
}

/* ---- CudaRuntimeTraceEventProto ---- */

static size_t runtime_size(const sp__pb_runtime *e)
{
    return opt_string(1, e->name) + opt_varint(e->has_start_ns, 2, e->start_ns) +
           opt_varint(e->has_end_ns, 3, e->end_ns) +
           opt_varint(e->has_process_id, 4, e->process_id) +
           opt_varint(e->has_thread_id, 5, e->thread_id) +
           opt_varint(e->has_correlation_id, 6, e->correlation_id) +
           opt_varint(e->has_callback_id, 7, e->callback_id) +
           opt_varint(e->has_stepprof_driver, 100, e->stepprof_driver);
}

static uint8_t *runtime_pack(const sp__pb_runtime *e, uint8_t *p)
{
    p = pack_string(p, 1, e->name);
    p = pack_varint(p, e->has_start_ns, 2, e->start_ns);
    p = pack_varint(p, e->has_end_ns, 3, e->end_ns);
    p = pack_varint(p, e->has_process_id, 4, e->process_id);
    p = pack_varint(p, e->has_thread_id, 5, e->thread_id);
    p = pack_varint(p, e->has_correlation_id, 6, e->correlation_id);
    p = pack_varint(p, e->has_callback_id, 7, e->callback_id);
    return pack_varint(p, e->has_stepprof_driver, 100, e->stepprof_driver);
}

/* ---- the device record's detail: kernel, memcpy, memset ---- */

static size_t kernel_size(const Paddle__Platform__KernelEventInfoProto *k)
{
    return opt_varint(k->has_block_x, 1, k->block_x) + opt_varint(k->has_block_y, 2, k->block_y) +
           opt_varint(k->has_block_z, 3, k->block_z) + opt_varint(k->has_grid_x, 4, k->grid_x) +
           opt_varint(k->has_grid_y, 5, k->grid_y) + opt_varint(k->has_grid_z, 6, k->grid_z) +
           opt_varint(k->has_dynamic_shared_memory, 7, k->dynamic_shared_memory) +
           opt_varint(k->has_static_shared_memory, 8, k->static_shared_memory) +
           opt_varint(k->has_registers_per_thread, 9, k->registers_per_thread) +
           opt_varint(k->has_local_memory_per_thread, 10, k->local_memory_per_thread) +
           opt_varint(k->has_local_memory_total, 11, k->local_memory_total) +
           opt_varint(k->has_queued, 12, k->queued) +
           opt_varint(k->has_submitted, 13, k->submitted) +
           opt_varint(k->has_completed, 14, k->completed) + opt_fixed(k->has_blocks_per_sm, 15, 4) +
           opt_fixed(k->has_warps_per_sm, 16, 4) + opt_fixed(k->has_occupancy, 17, 4);
}

static uint8_t *kernel_pack(const Paddle__Platform__KernelEventInfoProto *k, uint8_t *p)
{
    p = pack_varint(p, k->has_block_x, 1, k->block_x);
    p = pack_varint(p, k->has_block_y, 2, k->block_y);
    p = pack_varint(p, k->has_block_z, 3, k->block_z);
    p = pack_varint(p, k->has_grid_x, 4, k->grid_x);
    p = pack_varint(p, k->has_grid_y, 5, k->grid_y);
    p = pack_varint(p, k->has_grid_z, 6, k->grid_z);
    p = pack_varint(p, k->has_dynamic_shared_memory, 7, k->dynamic_shared_memory);
    p = pack_varint(p, k->has_static_shared_memory, 8, k->static_shared_memory);
    p = pack_varint(p, k->has_registers_per_thread, 9, k->registers_per_thread);
    p = pack_varint(p, k->has_local_memory_per_thread, 10, k->local_memory_per_thread);
    p = pack_varint(p, k->has_local_memory_total, 11, k->local_memory_total);
    p = pack_varint(p, k->has_queued, 12, k->queued);
    p = pack_varint(p, k->has_submitted, 13, k->submitted);
    p = pack_varint(p, k->has_completed, 14, k->completed);
    p = pack_fixed32(p, k->has_blocks_per_sm, 15, k->blocks_per_sm);
    p = pack_fixed32(p, k->has_warps_per_sm, 16, k->warps_per_sm);
    return pack_fixed32(p, k->has_occupancy, 17, k->occupancy);
}

static size_t memcpy_size(const Paddle__Platform__MemcpyEventInfoProto *m)
{
    return opt_varint(m->has_num_bytes, 1, m->num_bytes) + opt_string(2, m->copy_kind) +
           opt_string(3, m->src_kind) + opt_string(4, m->dst_kind);
}

static uint8_t *memcpy_pack(const Paddle__Platform__MemcpyEventInfoProto *m, uint8_t *p)
{
    p = pack_varint(p, m->has_num_bytes, 1, m->num_bytes);
    p = pack_string(p, 2, m->copy_kind);
    p = pack_string(p, 3, m->src_kind);
    return pack_string(p, 4, m->dst_kind);
}

static size_t memset_size(const Paddle__Platform__MemsetEventInfoProto *m)
{
    return opt_varint(m->has_num_bytes, 1, m->num_bytes) + opt_string(2, m->memory_kind) +
           opt_varint(m->has_value, 3, m->value);
}

static uint8_t *memset_pack(const Paddle__Platform__MemsetEventInfoProto *m, uint8_t *p)
{
    p = pack_varint(p, m->has_num_bytes, 1, m->num_bytes);
    p = pack_string(p, 2, m->memory_kind);
    return pack_varint(p, m->has_value, 3, m->value);
}

/* ---- DeviceTraceEventProto and its node ---- */

/* The packed size of the set oneof member (0 when none), and its field. */
static size_t detail_size(const sp__pb_device *e, unsigned *number)
{
    *number = (unsigned)e->detail_info_case;
    switch (e->detail_info_case) {
    case PADDLE__PLATFORM__DEVICE_TRACE_EVENT_PROTO__DETAIL_INFO_KERNEL_INFO:
        return e->kernel_info ? kernel_size(e->kernel_info) : SIZE_MAX;
    case PADDLE__PLATFORM__DEVICE_TRACE_EVENT_PROTO__DETAIL_INFO_MEMCPY_INFO:
        return e->memcpy_info ? memcpy_size(e->memcpy_info) : SIZE_MAX;
    case PADDLE__PLATFORM__DEVICE_TRACE_EVENT_PROTO__DETAIL_INFO_MEMSET_INFO:
        return e->memset_info ? memset_size(e->memset_info) : SIZE_MAX;
    default:
        return SIZE_MAX;
    }
}

static size_t device_size(const sp__pb_device *e)
{
    unsigned number;
    size_t detail = detail_size(e, &number);
    return opt_string(1, e->name) + opt_varint(e->has_type, 2, e->type) +
           opt_varint(e->has_start_ns, 3, e->start_ns) + opt_varint(e->has_end_ns, 4, e->end_ns) +
           opt_varint(e->has_device_id, 5, e->device_id) +
           opt_varint(e->has_context_id, 6, e->context_id) +
           opt_varint(e->has_stream_id, 7, e->stream_id) +
           opt_varint(e->has_correlation_id, 8, e->correlation_id) +
           (detail == SIZE_MAX ? 0 : len_field(number, detail)) +
           opt_varint(e->has_stepprof_index, 100, e->stepprof_index);
}

static uint8_t *device_pack(const sp__pb_device *e, uint8_t *p)
{
    p = pack_string(p, 1, e->name);
    p = pack_varint(p, e->has_type, 2, e->type);
    p = pack_varint(p, e->has_start_ns, 3, e->start_ns);
    p = pack_varint(p, e->has_end_ns, 4, e->end_ns);
    p = pack_varint(p, e->has_device_id, 5, e->device_id);
    p = pack_varint(p, e->has_context_id, 6, e->context_id);
    p = pack_varint(p, e->has_stream_id, 7, e->stream_id);
    p = pack_varint(p, e->has_correlation_id, 8, e->correlation_id);
    unsigned number;
    size_t detail = detail_size(e, &number);
    if (detail != SIZE_MAX) {
        p = pack_len(p, number, detail);
        if (number == PADDLE__PLATFORM__DEVICE_TRACE_EVENT_PROTO__DETAIL_INFO_KERNEL_INFO)
            p = kernel_pack(e->kernel_info, p);
        else if (number == PADDLE__PLATFORM__DEVICE_TRACE_EVENT_PROTO__DETAIL_INFO_MEMCPY_INFO)
            p = memcpy_pack(e->memcpy_info, p);
        else
            p = memset_pack(e->memset_info, p);
    }
    return pack_varint(p, e->has_stepprof_index, 100, e->stepprof_index);
}

static size_t device_node_size(const sp__pb_device_node *n)
{
    return n->device_event ? len_field(1, device_size(n->device_event)) : 0;
}

static uint8_t *device_node_pack(const sp__pb_device_node *n, uint8_t *p)
{
    if (!n->device_event) return p;
    p = pack_len(p, 1, device_size(n->device_event));
    return device_pack(n->device_event, p);
}

/* ---- CudaRuntimeTraceEventNodeProto ---- */

static size_t runtime_node_size(const sp__pb_runtime_node *n)
{
    size_t size = n->runtime_trace_event ? len_field(1, runtime_size(n->runtime_trace_event)) : 0;
    for (size_t i = 0; i < n->n_device_nodes; i++)
        size += len_field(2, device_node_size(n->device_nodes[i]));
    return size;
}

static uint8_t *runtime_node_pack(const sp__pb_runtime_node *n, uint8_t *p)
{
    if (n->runtime_trace_event) {
        p = pack_len(p, 1, runtime_size(n->runtime_trace_event));
        p = runtime_pack(n->runtime_trace_event, p);
    }
    for (size_t i = 0; i < n->n_device_nodes; i++) {
        p = pack_len(p, 2, device_node_size(n->device_nodes[i]));
        p = device_node_pack(n->device_nodes[i], p);
    }
    return p;
}

/* ---- MemTraceEventProto and its node ---- */

static size_t mem_size(const sp__pb_mem *e)
{
    return opt_varint(e->has_timestamp_ns, 1, e->timestamp_ns) +
           opt_varint(e->has_type, 2, e->type) + opt_varint(e->has_addr, 3, e->addr) +
           opt_varint(e->has_process_id, 4, e->process_id) +
           opt_varint(e->has_thread_id, 5, e->thread_id) +
           opt_varint(e->has_increase_bytes, 6, (uint64_t)e->increase_bytes) +
           opt_string(7, e->place) + opt_varint(e->has_current_allocated, 8, e->current_allocated) +
           opt_varint(e->has_current_reserved, 9, e->current_reserved) +
           opt_varint(e->has_peak_allocated, 10, e->peak_allocated) +
           opt_varint(e->has_peak_reserved, 11, e->peak_reserved);
}

static uint8_t *mem_pack(const sp__pb_mem *e, uint8_t *p)
{
    p = pack_varint(p, e->has_timestamp_ns, 1, e->timestamp_ns);
    p = pack_varint(p, e->has_type, 2, e->type);
    p = pack_varint(p, e->has_addr, 3, e->addr);
    p = pack_varint(p, e->has_process_id, 4, e->process_id);
    p = pack_varint(p, e->has_thread_id, 5, e->thread_id);
    p = pack_varint(p, e->has_increase_bytes, 6, (uint64_t)e->increase_bytes);
    p = pack_string(p, 7, e->place);
    p = pack_varint(p, e->has_current_allocated, 8, e->current_allocated);
    p = pack_varint(p, e->has_current_reserved, 9, e->current_reserved);
    p = pack_varint(p, e->has_peak_allocated, 10, e->peak_allocated);
    return pack_varint(p, e->has_peak_reserved, 11, e->peak_reserved);
}

static size_t mem_node_size(const sp__pb_mem_node *n)
{
    return n->mem_event ? len_field(1, mem_size(n->mem_event)) : 0;
}

static uint8_t *mem_node_pack(const sp__pb_mem_node *n, uint8_t *p)
{
    if (!n->mem_event) return p;
    p = pack_len(p, 1, mem_size(n->mem_event));
    return mem_pack(n->mem_event, p);
}

/* ---- HostTraceEventNodeProto ---- */

size_t sp__pb_host_node_size(const sp__pb_host_node *n)
{
    /* int64 ids go out as their two's-complement uint64: -1 takes 10 bytes. */
    size_t size = opt_varint(n->has_id, 1, (uint64_t)n->id) +
                  opt_varint(n->has_parentid, 2, (uint64_t)n->parentid);
    if (n->host_trace_event) size += len_field(3, host_size(n->host_trace_event));
    for (size_t i = 0; i < n->n_runtime_nodes; i++)
        size += len_field(4, runtime_node_size(n->runtime_nodes[i]));
    for (size_t i = 0; i < n->n_mem_nodes; i++)
        size += len_field(5, mem_node_size(n->mem_nodes[i]));
    for (size_t i = 0; i < n->n_op_supplement_nodes; i++)
        size += len_field(6, protobuf_c_message_get_packed_size(&n->op_supplement_nodes[i]->base));
    return size;
}

size_t sp__pb_host_node_pack(const sp__pb_host_node *n, uint8_t *out)
{
    uint8_t *p = out;
    p = pack_varint(p, n->has_id, 1, (uint64_t)n->id);
    p = pack_varint(p, n->has_parentid, 2, (uint64_t)n->parentid);
    if (n->host_trace_event) {
        /* Packed behind a one-byte length, moved on in the rare case that
         * the event takes 128 bytes or more: sizing it again costs more. */
        *p++ = 3 << 3 | WIRE_LEN;
        uint8_t *body = p + 1, *end = host_pack(n->host_trace_event, body);
        size_t len = (size_t)(end - body);
        if (len >= 0x80) memmove(p + varint_bytes(len), body, len);
        p = put_varint(p, len) + len;
    }
    for (size_t i = 0; i < n->n_runtime_nodes; i++) {
        p = pack_len(p, 4, runtime_node_size(n->runtime_nodes[i]));
        p = runtime_node_pack(n->runtime_nodes[i], p);
    }
    for (size_t i = 0; i < n->n_mem_nodes; i++) {
        p = pack_len(p, 5, mem_node_size(n->mem_nodes[i]));
        p = mem_node_pack(n->mem_nodes[i], p);
    }
    for (size_t i = 0; i < n->n_op_supplement_nodes; i++) {
        const ProtobufCMessage *op = &n->op_supplement_nodes[i]->base;
        p = pack_len(p, 6, protobuf_c_message_get_packed_size(op));
        p += protobuf_c_message_pack(op, p);
    }
    return (size_t)(p - out);
}
