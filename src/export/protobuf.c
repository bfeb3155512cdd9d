/* protobuf.c: writes a result as paddle's NodeTreesProto (trace-format.md
 * §11), the format of paddle.profiler's export_protobuf, so that paddle's
 * load_profiler_result and stepprof's loader read it back.
 *
 * The file streams out through sp__out: the root message's small fields are
 * packed by protobuf-c as one NodeTreesProto without thread trees, then each
 * thread tree is appended as field 3, itself a ThreadNodeTreeProto header
 * followed by its host nodes (field 2). Protobuf merges repeated fields
 * that appear apart, so readers see one message. Each node is built twice,
 * once to size its thread's tree and once to write it, so memory stays
 * bounded by one node, not the trace; host nodes are sized and packed by
 * hand (protobuf_node.c), the same bytes as protobuf-c's without its
 * reflection, which made the save several times its write() floor.
 *
 * Host nodes are written in pre-order (the result's event order): id =
 * event index + 1, parentid = parent's id, the root (id 0, parentid -1)
 * first. Paddle writes breadth-first; its reader rebuilds the tree from the
 * ids, so any order is read alike. Every field paddle declares required is
 * written, stepprof's additions only when they differ from the default. */
#include "export.h"
#include "occupancy.h"
#include "out_behind.h"
#include "protobuf.h"

#include <stdlib.h>
#include <string.h>

static void *pb_alloc(void *data, size_t size)
{
    (void)data;
    return sp__alloc(size ? size : 1);
}

static void pb_free(void *data, void *ptr)
{
    (void)data;
    sp__free(ptr);
}

ProtobufCAllocator sp__pb_allocator = {pb_alloc, pb_free, NULL};

/* Per-thread lists of the items attached to each host node: items of node k
 * (0 = the root, k = event k - 1) are order[offsets[k] .. offsets[k + 1]). */
typedef struct index {
    uint32_t *offsets;
    uint32_t *order;
} index;

typedef struct writer {
    sp__out *out;
    sp__buf *b;
    const sp_result *r;
    const sp__thread *t; /* thread being written, NULL for the synthetic thread 0 */
    uint64_t tid;
    index runtimes, mems, ops;
    uint32_t *dev_offsets, *dev_order; /* devices of each runtime of the thread */
    uint32_t *unattributed;            /* device indexes without a runtime call */
    size_t unattributed_count;
    int root_has_unattributed;
    int has_children; /* some node of the thread has runtime, memory or op records */
    size_t node_max;  /* the thread's largest host node, in bytes */
    int has_rank;     /* a merged trace's: its thread trees are tagged with rank */
    int64_t rank;
    /* scratch messages of one node, reused */
    sp__pb_runtime_node *rt_nodes;
    sp__pb_runtime *rts;
    sp__pb_runtime_node **rt_ptrs;
    size_t rt_cap;
    sp__pb_mem_node *mem_nodes;
    sp__pb_mem *mem_events;
    sp__pb_mem_node **mem_ptrs;
    size_t mem_cap;
    sp__pb_device_node *dev_nodes;
    sp__pb_device *devs;
    sp__pb_device_node **dev_ptrs;
    Paddle__Platform__KernelEventInfoProto *kernels;
    Paddle__Platform__MemcpyEventInfoProto *memcpys;
    Paddle__Platform__MemsetEventInfoProto *memsets;
    size_t dev_cap;
    sp__pb_scratch scratch; /* one node's op supplements */
    sp__pb_op_node **op_ptrs;
    size_t op_cap;
    sp__pb_host_node node; /* the host node being written, and its event */
    sp__pb_host host;
    int failed;
} writer;

static void put_varint(sp__buf *b, uint64_t v)
{
    char bytes[10];
    size_t n = 0;
    while (v >= 0x80) {
        bytes[n++] = (char)(v | 0x80);
        v >>= 7;
    }
    bytes[n++] = (char)v;
    sp__buf_append(b, bytes, n);
}

static uint8_t *store_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static size_t varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static void put_message(writer *w, const ProtobufCMessage *m, size_t size)
{
    if (sp__buf_reserve(w->b, size) != 0) return;
    w->b->len += protobuf_c_message_pack(m, (uint8_t *)w->b->data + w->b->len);
}

/* Buckets n items by key (-1 = the root) into nodes + 1 lists. */
static int build_index(index *ix, size_t nodes, size_t n, const void *items, size_t stride,
                       size_t key_offset)
{
    ix->offsets = sp__alloc(sizeof *ix->offsets * (nodes + 3));
    ix->order = sp__alloc(sizeof *ix->order * (n ? n : 1));
    if (!ix->offsets || !ix->order) return -1;
    const char *base = items;
    for (size_t i = 0; i < n; i++) {
        int32_t key;
        memcpy(&key, base + i * stride + key_offset, sizeof key);
        size_t k = key < 0 || (size_t)key >= nodes ? 0 : (size_t)key + 1;
        ix->offsets[k + 2]++;
    }
    for (size_t k = 2; k < nodes + 3; k++) ix->offsets[k] += ix->offsets[k - 1];
    for (size_t i = 0; i < n; i++) {
        int32_t key;
        memcpy(&key, base + i * stride + key_offset, sizeof key);
        size_t k = key < 0 || (size_t)key >= nodes ? 0 : (size_t)key + 1;
        ix->order[ix->offsets[k + 1]++] = (uint32_t)i;
    }
    return 0;
}

static void free_index(index *ix)
{
    sp__free(ix->offsets);
    sp__free(ix->order);
    memset(ix, 0, sizeof *ix);
}

/* Grows the scratch arrays: *cap items of each size in sizes. */
static int grow(size_t *cap, size_t need, void **arrays[], const size_t sizes[], size_t count)
{
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 8;
    while (n < need) n *= 2;
    for (size_t i = 0; i < count; i++) {
        void *p = sp__realloc(*arrays[i], sizes[i] * n);
        if (!p) return -1;
        *arrays[i] = p;
    }
    *cap = n;
    return 0;
}

static void fill_device(writer *w, size_t slot, size_t d)
{
    const sp__device_rec *dev = &w->r->devices[d];
    sp__pb_device *e = &w->devs[slot];
    *e = (sp__pb_device)PADDLE__PLATFORM__DEVICE_TRACE_EVENT_PROTO__INIT;
    e->name = (char *)sp__result_name(w->r, dev->name);
    e->has_type = e->has_start_ns = e->has_end_ns = e->has_device_id = 1;
    e->has_context_id = e->has_stream_id = e->has_correlation_id = 1;
    e->type = dev->type;
    e->start_ns = (uint64_t)dev->start_ns;
    e->end_ns = (uint64_t)dev->end_ns;
    e->device_id = dev->device;
    e->context_id = dev->context;
    e->stream_id = dev->stream;
    e->correlation_id = dev->correlation;
    e->has_stepprof_index = 1;
    e->stepprof_index = d;
    /* detail_info is set only for kernels, memcpys and memsets, as paddle does. */
    if (dev->type == SP_EVENT_KERNEL) {
        Paddle__Platform__KernelEventInfoProto *k = &w->kernels[slot];
        *k = (Paddle__Platform__KernelEventInfoProto)PADDLE__PLATFORM__KERNEL_EVENT_INFO_PROTO__INIT;
        k->has_block_x = k->has_block_y = k->has_block_z = 1;
        k->has_grid_x = k->has_grid_y = k->has_grid_z = 1;
        k->has_dynamic_shared_memory = k->has_static_shared_memory = 1;
        k->has_registers_per_thread = k->has_local_memory_per_thread = 1;
        k->has_local_memory_total = k->has_queued = k->has_submitted = k->has_completed = 1;
        k->has_blocks_per_sm = k->has_warps_per_sm = k->has_occupancy = 1;
        const sp__kernel_detail *kd = &dev->detail.kernel;
        k->block_x = kd->block[0], k->block_y = kd->block[1], k->block_z = kd->block[2];
        k->grid_x = kd->grid[0], k->grid_y = kd->grid[1], k->grid_z = kd->grid[2];
        k->dynamic_shared_memory = kd->dynamic_shared;
        k->static_shared_memory = kd->static_shared;
        k->registers_per_thread = kd->registers;
        k->local_memory_per_thread = kd->local_per_thread;
        k->local_memory_total = kd->local_total;
        k->queued = kd->queued_ns;
        k->submitted = kd->submitted_ns;
        k->completed = (uint64_t)dev->end_ns;
        double blocks, warps, occupancy;
        (void)sp__kernel_occupancy(sp__result_device_props(w->r, dev->device), kd, &blocks, &warps, &occupancy);
        k->blocks_per_sm = (float)blocks;
        k->warps_per_sm = (float)warps;
        k->occupancy = (float)occupancy;
        e->detail_info_case = PADDLE__PLATFORM__DEVICE_TRACE_EVENT_PROTO__DETAIL_INFO_KERNEL_INFO;
        e->kernel_info = k;
    } else if (dev->type == SP_EVENT_MEMCPY) {
        Paddle__Platform__MemcpyEventInfoProto *m = &w->memcpys[slot];
        *m = (Paddle__Platform__MemcpyEventInfoProto)PADDLE__PLATFORM__MEMCPY_EVENT_INFO_PROTO__INIT;
        m->has_num_bytes = 1;
        m->num_bytes = dev->bytes;
        m->copy_kind = (char *)sp__gpu_copy_kind_name(dev->detail.copy.copy_kind);
        m->src_kind = (char *)sp__gpu_memory_kind_name(dev->detail.copy.src_kind);
        m->dst_kind = (char *)sp__gpu_memory_kind_name(dev->detail.copy.dst_kind);
        e->detail_info_case = PADDLE__PLATFORM__DEVICE_TRACE_EVENT_PROTO__DETAIL_INFO_MEMCPY_INFO;
        e->memcpy_info = m;
    } else if (dev->type == SP_EVENT_MEMSET) {
        Paddle__Platform__MemsetEventInfoProto *m = &w->memsets[slot];
        *m = (Paddle__Platform__MemsetEventInfoProto)PADDLE__PLATFORM__MEMSET_EVENT_INFO_PROTO__INIT;
        m->has_num_bytes = m->has_value = 1;
        m->num_bytes = dev->bytes;
        m->memory_kind = (char *)sp__gpu_memory_kind_name(dev->detail.set.memory_kind);
        m->value = dev->detail.set.value;
        e->detail_info_case = PADDLE__PLATFORM__DEVICE_TRACE_EVENT_PROTO__DETAIL_INFO_MEMSET_INFO;
        e->memset_info = m;
    }
    w->dev_nodes[slot] = (sp__pb_device_node)PADDLE__PLATFORM__DEVICE_TRACE_EVENT_NODE_PROTO__INIT;
    w->dev_nodes[slot].device_event = e;
    w->dev_ptrs[slot] = &w->dev_nodes[slot];
}

static int reserve_devices(writer *w, size_t need)
{
    void **arrays[] = {(void **)&w->dev_nodes, (void **)&w->devs, (void **)&w->dev_ptrs,
                       (void **)&w->kernels, (void **)&w->memcpys, (void **)&w->memsets};
    const size_t sizes[] = {sizeof *w->dev_nodes, sizeof *w->devs, sizeof *w->dev_ptrs,
                            sizeof *w->kernels, sizeof *w->memcpys, sizeof *w->memsets};
    return grow(&w->dev_cap, need, arrays, sizes, 6);
}

/* Fills the runtime nodes of host node k (0 = root); devices are numbered
 * across all of them in the shared scratch arrays. */
static int fill_runtimes(writer *w, size_t k, size_t *count)
{
    size_t extra = k == 0 && w->root_has_unattributed ? 1 : 0;
    size_t n = 0, devices = extra ? w->unattributed_count : 0;
    if (w->t && w->t->runtime_count) {
        n = w->runtimes.offsets[k + 1] - w->runtimes.offsets[k];
        for (size_t j = w->runtimes.offsets[k]; j < w->runtimes.offsets[k + 1]; j++) {
            uint32_t rt = w->runtimes.order[j];
            devices += w->dev_offsets[rt + 1] - w->dev_offsets[rt];
        }
    }
    void **arrays[] = {(void **)&w->rt_nodes, (void **)&w->rts, (void **)&w->rt_ptrs};
    const size_t sizes[] = {sizeof *w->rt_nodes, sizeof *w->rts, sizeof *w->rt_ptrs};
    if (grow(&w->rt_cap, n + extra, arrays, sizes, 3) != 0 || reserve_devices(w, devices) != 0)
        return -1;
    size_t slot = 0;
    for (size_t i = 0; i < n + extra; i++) {
        sp__pb_runtime *e = &w->rts[i];
        sp__pb_runtime_node *node = &w->rt_nodes[i];
        *e = (sp__pb_runtime)PADDLE__PLATFORM__CUDA_RUNTIME_TRACE_EVENT_PROTO__INIT;
        *node = (sp__pb_runtime_node)PADDLE__PLATFORM__CUDA_RUNTIME_TRACE_EVENT_NODE_PROTO__INIT;
        e->has_start_ns = e->has_end_ns = e->has_process_id = e->has_thread_id = 1;
        e->has_correlation_id = e->has_callback_id = 1;
        e->process_id = (uint64_t)w->r->meta.pid;
        e->thread_id = w->tid;
        size_t first = slot;
        if (i < n) {
            uint32_t idx = w->runtimes.order[w->runtimes.offsets[k] + i];
            const sp__runtime *rt = &w->t->runtimes[idx];
            e->name = (char *)sp__result_name(w->r, rt->name);
            e->start_ns = (uint64_t)rt->start_ns;
            e->end_ns = (uint64_t)rt->end_ns;
            e->correlation_id = rt->correlation;
            e->callback_id = rt->cbid;
            if (rt->driver) {
                e->has_stepprof_driver = 1;
                e->stepprof_driver = 1;
            }
            for (uint32_t j = w->dev_offsets[idx]; j < w->dev_offsets[idx + 1]; j++)
                fill_device(w, slot++, w->dev_order[j]);
        } else {
            e->name = (char *)SP__PB_UNATTRIBUTED;
            e->start_ns = e->end_ns = (uint64_t)w->r->span_start_ns;
            for (size_t j = 0; j < w->unattributed_count; j++) fill_device(w, slot++, w->unattributed[j]);
        }
        node->runtime_trace_event = e;
        node->n_device_nodes = slot - first;
        node->device_nodes = slot > first ? &w->dev_ptrs[first] : NULL;
        w->rt_ptrs[i] = node;
    }
    *count = n + extra;
    return 0;
}

static int fill_mems(writer *w, size_t k, size_t *count)
{
    size_t n = 0;
    if (w->t && w->t->mem_count) n = w->mems.offsets[k + 1] - w->mems.offsets[k];
    void **arrays[] = {(void **)&w->mem_nodes, (void **)&w->mem_events, (void **)&w->mem_ptrs};
    const size_t sizes[] = {sizeof *w->mem_nodes, sizeof *w->mem_events, sizeof *w->mem_ptrs};
    if (grow(&w->mem_cap, n, arrays, sizes, 3) != 0) return -1;
    for (size_t i = 0; i < n; i++) {
        const sp__mem_event *m = &w->t->mems[w->mems.order[w->mems.offsets[k] + i]];
        sp__pb_mem *e = &w->mem_events[i];
        *e = (sp__pb_mem)PADDLE__PLATFORM__MEM_TRACE_EVENT_PROTO__INIT;
        e->has_timestamp_ns = e->has_type = e->has_addr = e->has_process_id = 1;
        e->has_thread_id = e->has_increase_bytes = e->has_current_allocated = 1;
        e->has_current_reserved = e->has_peak_allocated = e->has_peak_reserved = 1;
        e->timestamp_ns = (uint64_t)m->ts_ns;
        e->type = m->type;
        e->addr = m->addr;
        e->process_id = (uint64_t)w->r->meta.pid;
        e->thread_id = w->tid;
        e->increase_bytes = m->bytes;
        e->place = (char *)sp__result_name(w->r, m->place);
        e->current_allocated = m->current_allocated;
        e->current_reserved = m->current_reserved;
        e->peak_allocated = m->peak_allocated;
        e->peak_reserved = m->peak_reserved;
        w->mem_nodes[i] = (sp__pb_mem_node)PADDLE__PLATFORM__MEM_TRACE_EVENT_NODE_PROTO__INIT;
        w->mem_nodes[i].mem_event = e;
        w->mem_ptrs[i] = &w->mem_nodes[i];
    }
    *count = n;
    return 0;
}

static int fill_ops(writer *w, size_t k, size_t *count)
{
    size_t n = 0;
    sp__pb_scratch_reset(&w->scratch);
    if (w->t && w->t->op_count) n = w->ops.offsets[k + 1] - w->ops.offsets[k];
    void **arrays[] = {(void **)&w->op_ptrs};
    const size_t sizes[] = {sizeof *w->op_ptrs};
    if (grow(&w->op_cap, n, arrays, sizes, 1) != 0) return -1;
    for (size_t i = 0; i < n; i++) {
        const sp__op_supplement *op = &w->t->ops[w->ops.order[w->ops.offsets[k] + i]];
        w->op_ptrs[i] = sp__pb_fill_op(&w->scratch, w->r, w->t, op, w->tid);
        if (!w->op_ptrs[i]) return -1;
    }
    *count = n;
    return 0;
}

/* Builds host node k (0 = root, else event k - 1) in w->node. The two
 * messages were set up once (writer_init); every field that varies is
 * assigned here, so a node costs no clearing of whole structs. */
static int fill_node(writer *w, size_t k)
{
    sp__pb_host_node *node = &w->node;
    sp__pb_host *h = &w->host;
    node->id = (int64_t)k;
    if (k == 0) {
        node->parentid = -1;
        h->name = (char *)SP__PB_ROOT_NAME;
        h->type = SP_EVENT_USER_DEFINED;
        h->start_ns = 0;
        h->end_ns = UINT64_MAX;
        h->process_id = h->thread_id = 0;
        h->has_stepprof_flags = h->has_stepprof_value = h->has_stepprof_type = 0;
    } else {
        const sp__event *e = &w->t->events[k - 1];
        node->parentid = e->parent < 0 ? 0 : (int64_t)e->parent + 1;
        h->name = (char *)sp__result_name(w->r, e->name);
        h->type = e->type;
        /* paddle's enum ends at 14; stepprof_type keeps the exact type */
        h->has_stepprof_type = e->type > SP_EVENT_PYTHON_USER_DEFINED;
        if (h->has_stepprof_type) {
            h->type = SP_EVENT_OPERATOR_INNER;
            h->stepprof_type = e->type;
        }
        h->start_ns = (uint64_t)e->start_ns;
        h->end_ns = (uint64_t)e->end_ns;
        h->process_id = (uint64_t)w->r->meta.pid;
        h->thread_id = w->tid;
        uint32_t flags = e->flags & (SP_EVENT_FLAG_INSTANT | SP_EVENT_FLAG_COUNTER |
                                     SP_EVENT_FLAG_UNCLOSED | SP_EVENT_FLAG_SAMPLES);
        h->has_stepprof_flags = flags != 0;
        h->stepprof_flags = flags;
        h->has_stepprof_value = (e->flags & (SP_EVENT_FLAG_COUNTER | SP_EVENT_FLAG_SAMPLES)) != 0;
        h->stepprof_value = h->has_stepprof_value ? e->value : 0;
    }
    if (!w->has_children) { /* most threads: a CPU-only host tree */
        node->n_runtime_nodes = node->n_mem_nodes = node->n_op_supplement_nodes = 0;
        node->runtime_nodes = NULL;
        node->mem_nodes = NULL;
        node->op_supplement_nodes = NULL;
        return 0;
    }
    if (fill_runtimes(w, k, &node->n_runtime_nodes) != 0) return -1;
    node->runtime_nodes = node->n_runtime_nodes ? w->rt_ptrs : NULL;
    if (fill_mems(w, k, &node->n_mem_nodes) != 0) return -1;
    node->mem_nodes = node->n_mem_nodes ? w->mem_ptrs : NULL;
    if (fill_ops(w, k, &node->n_op_supplement_nodes) != 0) return -1;
    node->op_supplement_nodes = node->n_op_supplement_nodes ? w->op_ptrs : NULL;
    return 0;
}

/* The size of the current thread's host nodes as field 2 entries, or
 * SIZE_MAX on failure; notes the largest node for write_nodes. */
static size_t size_nodes(writer *w, size_t nodes)
{
    size_t total = 0;
    w->node_max = 0;
    for (size_t k = 0; k < nodes; k++) {
        if (fill_node(w, k) != 0) return SIZE_MAX;
        size_t n = sp__pb_host_node_size(&w->node);
        if (n > w->node_max) w->node_max = n;
        total += 1 + varint_size(n) + n;
    }
    return total;
}

/* What a host node without children takes beyond its name's bytes: ids,
 * times, pid, tid, type, flags and value with their keys, two lengths. */
#define CHILDLESS_NODE_FIXED 128

/* Writes nodes from .. to - 1 (those size_nodes measured, where it ran);
 * returns the bytes written, or SIZE_MAX on failure. Each node is packed
 * behind a one-byte length and moved on when it turns out longer, which
 * costs less than sizing it again. */
static size_t write_nodes(writer *w, size_t from, size_t to)
{
    size_t total = 0;
    for (size_t k = from; k < to; k++) {
        if (fill_node(w, k) != 0) return SIZE_MAX;
        /* Unsized (one pass): a childless node's bound from its name. */
        size_t room = w->node_max ? w->node_max : strlen(w->host.name) + CHILDLESS_NODE_FIXED;
        if (sp__buf_reserve(w->b, 1 + 10 + room) != 0) return SIZE_MAX;
        uint8_t *p = (uint8_t *)w->b->data + w->b->len, *body = p + 2;
        size_t n = sp__pb_host_node_pack(&w->node, body);
        if (n >= 0x80) memmove(p + 1 + varint_size(n), body, n);
        p[0] = (SP__PB_THREAD_HOST_NODES << 3) | 2;
        size_t head = (size_t)(store_varint(p + 1, n) - p);
        w->b->len += head + n;
        total += head + n;
        sp__out_maybe_flush(w->out);
    }
    return total;
}

/* The buffer room one call of sp__pb_plain_pack fills, so that the output
 * goes to the file in writes of about FLUSH_BYTES (out.c), as the floor's. */
#define PLAIN_CHUNK ((size_t)1 << 18)

/* The nodes of a thread without child records: the root, and any node
 * whose name is too long for protobuf_plain.c, through fill_node; every
 * other straight from its event. Returns the bytes written, or SIZE_MAX. */
static size_t write_plain_nodes(writer *w, size_t nodes)
{
    size_t total = write_nodes(w, 0, 1);
    if (total == SIZE_MAX || nodes < 2) return total;
    sp__pb_plain c;
    if (sp__pb_plain_init(&c, w->r, w->t, w->tid) != 0) return SIZE_MAX;
    for (size_t k = 1; k < nodes;) {
        if (sp__buf_reserve(w->b, PLAIN_CHUNK) != 0) {
            total = SIZE_MAX;
            break;
        }
        uint8_t *start = (uint8_t *)w->b->data + w->b->len, *p = start;
        size_t next = sp__pb_plain_pack(&c, k, nodes, &p, start + PLAIN_CHUNK);
        w->b->len += (size_t)(p - start);
        total += (size_t)(p - start);
        if (next == k) { /* a name too long for the chunk's bound */
            size_t n = write_nodes(w, k, k + 1);
            if (n == SIZE_MAX) {
                total = SIZE_MAX;
                break;
            }
            total += n;
            next = k + 1;
        }
        k = next;
        sp__out_maybe_flush(w->out);
    }
    sp__pb_plain_fini(&c);
    return total;
}

/* Links each device record to its runtime call's slot (per thread). */
static int index_devices(writer *w)
{
    size_t n = w->t ? w->t->runtime_count : 0;
    sp__free(w->dev_offsets);
    sp__free(w->dev_order);
    w->dev_offsets = sp__alloc(sizeof *w->dev_offsets * (n + 2));
    w->dev_order = sp__alloc(sizeof *w->dev_order * (w->r->device_count + 1));
    if (!w->dev_offsets || !w->dev_order) return -1;
    if (n == 0) return 0;
    int32_t thread = (int32_t)(w->t - w->r->threads);
    for (size_t d = 0; d < w->r->device_count; d++) {
        const sp__device_rec *dev = &w->r->devices[d];
        if (dev->thread == thread && dev->runtime >= 0 && (size_t)dev->runtime < n)
            w->dev_offsets[dev->runtime + 2]++;
    }
    for (size_t k = 2; k < n + 2; k++) w->dev_offsets[k] += w->dev_offsets[k - 1];
    for (size_t d = 0; d < w->r->device_count; d++) {
        const sp__device_rec *dev = &w->r->devices[d];
        if (dev->thread == thread && dev->runtime >= 0 && (size_t)dev->runtime < n)
            w->dev_order[w->dev_offsets[dev->runtime + 1]++] = (uint32_t)d;
    }
    return 0;
}

/* A thread tree whose nodes have no children, written in one pass: its
 * length goes out as a five-byte varint (padded with continuation bytes,
 * which every protobuf reader accepts) that is patched in once the nodes
 * are written, so they are not sized first. Five bytes hold 2^35 - 1. */
static int put_thread_one_pass(writer *w, const sp__pb_thread *head, size_t head_size, size_t nodes)
{
    put_varint(w->b, (SP__PB_TREES_THREAD_TREES << 3) | 2);
    uint64_t at = sp__out_tell(w->out);
    sp__buf_append(w->b, "\x80\x80\x80\x80\x00", 5);
    put_message(w, &head->base, head_size);
    w->node_max = 0;
    size_t body = write_plain_nodes(w, nodes);
    if (body == SIZE_MAX || w->b->failed) return -1;
    uint64_t len = head_size + body;
    if (len >> 35) return -1;
    uint8_t pad[5];
    for (int i = 0; i < 4; i++)
        pad[i] = (uint8_t)(((len >> (7 * i)) & 0x7f) | 0x80);
    pad[4] = (uint8_t)((len >> 28) & 0x7f);
    return sp__out_patch(w->out, at, pad, sizeof pad);
}

/* Writes one ThreadNodeTreeProto as field 3 of the root message. */
static int put_thread(writer *w, const sp__thread *t, uint64_t tid)
{
    w->t = t;
    w->tid = tid;
    w->root_has_unattributed = tid == 0 && w->unattributed_count > 0;
    w->has_children =
        w->root_has_unattributed || (t && (t->runtime_count || t->mem_count || t->op_count));
    size_t events = t ? t->count : 0;
    if (events > UINT32_MAX - 2) return -1;
    if (t && t->runtime_count &&
        build_index(&w->runtimes, events, t->runtime_count, t->runtimes, sizeof *t->runtimes,
                    offsetof(sp__runtime, host)) != 0)
        return -1;
    if (t && t->mem_count &&
        build_index(&w->mems, events, t->mem_count, t->mems, sizeof *t->mems,
                    offsetof(sp__mem_event, host)) != 0)
        return -1;
    if (t && t->op_count &&
        build_index(&w->ops, events, t->op_count, t->ops, sizeof *t->ops,
                    offsetof(sp__op_supplement, host)) != 0)
        return -1;
    if (index_devices(w) != 0) return -1;
    sp__pb_thread head = PADDLE__PLATFORM__THREAD_NODE_TREE_PROTO__INIT;
    head.has_thread_id = 1;
    head.thread_id = tid;
    head.has_stepprof_rank = w->has_rank;
    head.stepprof_rank = w->rank;
    if (t) {
        head.stepprof_thread_name = (char *)sp__result_name(w->r, t->name);
        if (t->dropped) {
            head.has_stepprof_dropped = 1;
            head.stepprof_dropped = t->dropped;
        }
    }
    size_t head_size = protobuf_c_message_get_packed_size(&head.base);
    if (!w->has_children) { /* most threads: one pass, the length patched in */
        int rc = put_thread_one_pass(w, &head, head_size, events + 1);
        free_index(&w->runtimes);
        free_index(&w->mems);
        free_index(&w->ops);
        return rc;
    }
    size_t body = size_nodes(w, events + 1);
    if (body == SIZE_MAX) return -1;
    put_varint(w->b, (SP__PB_TREES_THREAD_TREES << 3) | 2);
    put_varint(w->b, head_size + body);
    put_message(w, &head.base, head_size);
    /* The passes build the same nodes; a difference would corrupt the file. */
    if (write_nodes(w, 0, events + 1) != body) return -1;
    free_index(&w->runtimes);
    free_index(&w->mems);
    free_index(&w->ops);
    return 0;
}

static int collect_unattributed(writer *w)
{
    const sp_result *r = w->r;
    w->unattributed = sp__alloc(sizeof *w->unattributed * (r->device_count + 1));
    if (!w->unattributed) return -1;
    for (size_t d = 0; d < r->device_count; d++) {
        const sp__device_rec *dev = &r->devices[d];
        int32_t t = dev->thread;
        if (t < 0 || (size_t)t >= r->thread_count || dev->runtime < 0 ||
            (size_t)dev->runtime >= r->threads[t].runtime_count)
            w->unattributed[w->unattributed_count++] = (uint32_t)d;
    }
    return 0;
}

/* The root message without thread trees: version, span index, extra info
 * (paddle's CPU utilisation keys), device properties and stepprof's fields. */
static int put_header(writer *w, const uint64_t *counter_values)
{
    const sp_result *r = w->r;
    if (!counter_values) counter_values = r->counters;
    sp__pb_trees m = PADDLE__PLATFORM__NODE_TREES_PROTO__INIT;
    m.version = (char *)SP__PB_VERSION;
    m.has_span_indx = 1;
    m.span_indx = r->span_index;
    char cpu[2][32];
    snprintf(cpu[0], sizeof cpu[0], "%f", r->meta.cpu_system);
    snprintf(cpu[1], sizeof cpu[1], "%f", r->meta.cpu_process);
    sp__pb_extra extra[2] = {PADDLE__PLATFORM__EXTRA_INFO_MAP__INIT, PADDLE__PLATFORM__EXTRA_INFO_MAP__INIT};
    extra[0].key = (char *)"System Cpu Utilization";
    extra[0].value = cpu[0];
    extra[1].key = (char *)"Process Cpu Utilization";
    extra[1].value = cpu[1];
    sp__pb_extra *extra_ptrs[2] = {&extra[0], &extra[1]};
    m.n_extra_info = 2;
    m.extra_info = extra_ptrs;
    m.has_stepprof_span_start_ns = m.has_stepprof_span_end_ns = 1;
    m.stepprof_span_start_ns = r->span_start_ns;
    m.stepprof_span_end_ns = r->span_end_ns;
    sp__pb_counter counters[SP_COUNTER_COUNT];
    sp__pb_counter *counter_ptrs[SP_COUNTER_COUNT];
    for (int c = 0; c < SP_COUNTER_COUNT; c++) {
        counters[c] = (sp__pb_counter)PADDLE__PLATFORM__STEPPROF_COUNTER_PROTO__INIT;
        counters[c].name = (char *)sp_counter_name((sp_counter_kind)c);
        counters[c].has_value = 1;
        counters[c].value = counter_values[c];
        counter_ptrs[c] = &counters[c];
    }
    m.n_stepprof_counters = SP_COUNTER_COUNT;
    m.stepprof_counters = counter_ptrs;
    m.has_stepprof_pid = 1;
    m.stepprof_pid = r->meta.pid;
    char process_name[sizeof r->meta.process_name + 1];
    memcpy(process_name, r->meta.process_name, sizeof r->meta.process_name);
    process_name[sizeof r->meta.process_name] = '\0';
    m.stepprof_process_name = process_name;
    m.has_stepprof_options = 1;
    m.stepprof_options = (r->meta.record_shapes ? SP__PB_OPT_RECORD_SHAPES : 0) |
                         (r->meta.profile_memory ? SP__PB_OPT_PROFILE_MEMORY : 0) |
                         (r->meta.with_flops ? SP__PB_OPT_WITH_FLOPS : 0) |
                         (r->meta.with_stack ? SP__PB_OPT_WITH_STACK : 0) |
                         (r->meta.overwrite_oldest ? SP__PB_OPT_OVERWRITE_OLDEST : 0);
    m.has_stepprof_cpu_process = m.has_stepprof_cpu_system = 1;
    m.stepprof_cpu_process = r->meta.cpu_process;
    m.stepprof_cpu_system = r->meta.cpu_system;
    sp__pb_scratch_reset(&w->scratch);
    sp__pb_device_prop **props = sp__pb_scratch_alloc(&w->scratch, sizeof *props * r->device_prop_count);
    if (!props) return -1;
    for (size_t i = 0; i < r->device_prop_count; i++)
        if (!(props[i] = sp__pb_fill_device_prop(&w->scratch, &r->device_props[i]))) return -1;
    m.n_device_property = r->device_prop_count;
    m.device_property = r->device_prop_count ? props : NULL;
    if (sp__pb_fill_dist(&w->scratch, r, &m) != 0) return -1;
    put_message(w, &m.base, protobuf_c_message_get_packed_size(&m.base));
    sp__pb_scratch_reset(&w->scratch);
    return 0;
}

/* The messages fill_node reuses for every node: paddle's required fields
 * are always present, stepprof's own set per node. */
static void writer_init_node(writer *w)
{
    w->node = (sp__pb_host_node)PADDLE__PLATFORM__HOST_TRACE_EVENT_NODE_PROTO__INIT;
    w->host = (sp__pb_host)PADDLE__PLATFORM__HOST_TRACE_EVENT_PROTO__INIT;
    w->node.has_id = w->node.has_parentid = 1;
    w->node.host_trace_event = &w->host;
    w->host.has_type = w->host.has_start_ns = w->host.has_end_ns = 1;
    w->host.has_process_id = w->host.has_thread_id = 1;
}

static void writer_fini(writer *w)
{
    free_index(&w->runtimes);
    free_index(&w->mems);
    free_index(&w->ops);
    sp__pb_scratch_fini(&w->scratch);
    sp__free(w->op_ptrs);
    sp__free(w->dev_offsets);
    sp__free(w->dev_order);
    sp__free(w->unattributed);
    sp__free(w->rt_nodes);
    sp__free(w->rts);
    sp__free(w->rt_ptrs);
    sp__free(w->mem_nodes);
    sp__free(w->mem_events);
    sp__free(w->mem_ptrs);
    sp__free(w->dev_nodes);
    sp__free(w->devs);
    sp__free(w->dev_ptrs);
    sp__free(w->kernels);
    sp__free(w->memcpys);
    sp__free(w->memsets);
}

/* Every thread tree of w->r (and the synthetic thread 0 that holds its
 * unattributed device records), counted in *trees. */
static int put_trees(writer *w, uint64_t *trees)
{
    const sp_result *r = w->r;
    if (collect_unattributed(w) != 0) return -1;
    int has_thread0 = 0;
    for (size_t i = 0; i < r->thread_count; i++, (*trees)++) {
        if (r->threads[i].tid == 0) has_thread0 = 1;
        if (put_thread(w, &r->threads[i], r->threads[i].tid) != 0) return -1;
    }
    if (!has_thread0 && w->unattributed_count > 0) {
        if (put_thread(w, NULL, 0) != 0) return -1;
        (*trees)++;
    }
    return 0;
}

/* A rank's entry of stepprof_ranks: its rank and its root fields, packed
 * as its own file's would be. */
static int put_rank_entry(writer *w, int64_t rank)
{
    sp__buf *keep = w->b, header;
    sp__buf_init(&header);
    w->b = &header;
    int rc = put_header(w, NULL);
    w->b = keep;
    if (rc != 0 || header.failed) {
        sp__buf_fini(&header);
        return -1;
    }
    size_t body = 1 + varint_size((uint64_t)rank) + 1 + varint_size(header.len) + header.len;
    put_varint(w->b, ((uint64_t)SP__PB_TREES_STEPPROF_RANKS << 3) | 2);
    put_varint(w->b, body);
    put_varint(w->b, 1 << 3);
    put_varint(w->b, (uint64_t)rank);
    put_varint(w->b, (2 << 3) | 2);
    put_varint(w->b, header.len);
    sp__buf_append(w->b, header.data, header.len);
    sp__buf_fini(&header);
    return 0;
}

sp_status sp__export_protobuf_ranks(const sp_result *const *rs, size_t n, const char *path)
{
    if (!rs || n == 0 || !rs[0]) return sp__fail(SP_ENODATA, "export: no result to write");
    if (!path || !*path) return sp__fail(SP_EINVAL, "export: empty output path");
    sp__out *out;
    sp_status s = sp__out_open(&out, path, 0);
    if (s != SP_OK) return s;
    sp__out_write_behind(out);
    sp__buf *b = sp__out_buf(out);
    put_varint(b, (uint64_t)SP__PB_TREES_STEPPROF_BEGIN << 3);
    put_varint(b, 1);
    /* The root is the lowest rank's, its counters every rank's: a reader
     * that takes the file as one process (paddle's) misses no drop. */
    uint64_t sums[SP_COUNTER_COUNT] = {0};
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < SP_COUNTER_COUNT; c++)
            sums[c] += rs[i]->counters[c];
    uint64_t trees = 0;
    int failed = 0;
    for (size_t i = 0; !failed && i <= n; i++) {
        writer w = {0};
        w.out = out;
        w.b = b;
        w.r = rs[i < n ? i : 0];
        writer_init_node(&w);
        if (i == n) {
            failed = put_header(&w, sums) != 0;
        } else {
            w.has_rank = 1;
            w.rank = rs[i]->meta.rank;
            failed = put_rank_entry(&w, w.rank) != 0 || put_trees(&w, &trees) != 0;
        }
        writer_fini(&w);
    }
    put_varint(b, (uint64_t)SP__PB_TREES_STEPPROF_END << 3);
    put_varint(b, trees);
    if (failed) {
        sp__out_abort(out);
        return sp__fail(SP_ENOMEM, "out of memory writing %s", path);
    }
    return sp__out_commit(out);
}

sp_status sp__export_protobuf(const sp_result *r, const char *path)
{
    if (!r) return sp__fail(SP_ENODATA, "export: no result to write");
    if (!path || !*path) return sp__fail(SP_EINVAL, "export: empty output path");
    writer w = {0};
    w.r = r;
    writer_init_node(&w);
    sp_status s = sp__out_open(&w.out, path, 0);
    if (s != SP_OK) return s;
    sp__out_write_behind(w.out);
    w.b = sp__out_buf(w.out);
    /* The truncation guard (nodetree.proto): begin first, end last. */
    put_varint(w.b, (uint64_t)SP__PB_TREES_STEPPROF_BEGIN << 3);
    put_varint(w.b, 1);
    uint64_t trees = 0;
    int failed = put_header(&w, NULL) != 0 || put_trees(&w, &trees) != 0;
    put_varint(w.b, (uint64_t)SP__PB_TREES_STEPPROF_END << 3);
    put_varint(w.b, trees);
    writer_fini(&w);
    if (failed) {
        sp__out_abort(w.out);
        return sp__fail(SP_ENOMEM, "out of memory writing %s", path);
    }
    return sp__out_commit(w.out);
}

sp_status sp_result_export_protobuf(const sp_result *r, const char *path)
{
    return sp__export_protobuf(r, path);
}
