/* load_pb.c: reads paddle's NodeTreesProto (trace-format.md §11), as
 * written by stepprof's protobuf.c or by paddle.profiler's export_protobuf.
 *
 * The file is one message whose bulk is field 3 (thread trees), each mostly
 * field 2 (host nodes). Those two levels are walked here, straight from the
 * file through a small buffer; each host node is read into memory alone and
 * unpacked by protobuf-c, turned into result events and freed. Every other
 * field of the two levels is copied aside and unpacked by protobuf-c at the
 * end (NodeTreesProto and ThreadNodeTreeProto without their bulk). So memory
 * stays near that of the result, and the file is never held whole.
 *
 * Hostile input: every length is checked against what is left of its
 * enclosing message (and so of the file) before anything is allocated or
 * read; varints longer than 10 bytes, wire types 3, 4, 6 and 7 and a
 * message that ends inside a field are errors naming the byte offset. The
 * schema has no recursive message, so nesting is bounded by it. A file
 * written by stepprof begins with stepprof_begin and ends with stepprof_end
 * (the number of thread trees): one cut short, even between two fields,
 * is an error; paddle's files have neither and load as they are. */
#include "load.h"
#include "protobuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define READ_BYTES ((size_t)1 << 16)
#define PROGRESS_BYTES ((uint64_t)4 << 20)
#define MAX_RANKS 4096 /* a merged trace's ranks read back one by one */

typedef struct reader {
    FILE *f;
    const char *path;
    unsigned char buf[READ_BYTES];
    size_t pos, len;
    uint64_t offset; /* file offset of buf[pos] */
    uint64_t size;   /* file size */
    uint64_t next_progress;
    const sp_load_options *opts;
    sp_status status; /* first error */
} reader;

/* Records the first error; later ones are consequences. */
static int bad(reader *rd, sp_status code, const char *what)
{
    if (rd->status == SP_OK) {
        if (code == SP_EFORMAT)
            rd->status = sp__fail(code, "%s: not a valid protobuf trace: %s at byte %llu", rd->path,
                                  what, (unsigned long long)rd->offset);
        else
            rd->status = sp__fail(code, "%s: %s", rd->path, what);
    }
    return -1;
}

static int fill(reader *rd)
{
    if (rd->pos < rd->len) return 0;
    rd->pos = 0;
    rd->len = fread(rd->buf, 1, sizeof rd->buf, rd->f);
    if (rd->len == 0)
        return ferror(rd->f) ? bad(rd, SP_EIO, strerror(errno)) : bad(rd, SP_EFORMAT, "file ends inside a field");
    if (rd->opts->progress && rd->offset >= rd->next_progress) {
        rd->opts->progress(rd->offset, rd->size, rd->opts->progress_user);
        rd->next_progress = rd->offset + PROGRESS_BYTES;
    }
    return 0;
}

static int read_byte(reader *rd, uint8_t *out)
{
    if (fill(rd) != 0) return -1;
    *out = rd->buf[rd->pos++];
    rd->offset++;
    return 0;
}

static int read_varint(reader *rd, uint64_t end, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        uint8_t byte;
        if (rd->offset >= end) return bad(rd, SP_EFORMAT, "message ends inside a varint");
        if (read_byte(rd, &byte) != 0) return -1;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return bad(rd, SP_EFORMAT, "varint longer than 10 bytes");
}

static int read_bytes(reader *rd, void *dst, size_t n)
{
    unsigned char *d = dst;
    while (n > 0) {
        if (fill(rd) != 0) return -1;
        size_t part = rd->len - rd->pos < n ? rd->len - rd->pos : n;
        if (d) {
            memcpy(d, rd->buf + rd->pos, part);
            d += part;
        }
        rd->pos += part;
        rd->offset += part;
        n -= part;
    }
    return 0;
}

static int seek_to(reader *rd, uint64_t offset)
{
    if (offset >= rd->offset - rd->pos && offset <= rd->offset - rd->pos + rd->len) {
        rd->pos = (size_t)(offset - (rd->offset - rd->pos));
        rd->offset = offset;
        return 0;
    }
    if (fseeko(rd->f, (off_t)offset, SEEK_SET) != 0) return bad(rd, SP_EIO, strerror(errno));
    rd->pos = rd->len = 0;
    rd->offset = offset;
    return 0;
}

/* Reads a field's key: its number and wire type. */
static int read_key(reader *rd, uint64_t end, uint32_t *field, unsigned *wire)
{
    uint64_t key;
    if (read_varint(rd, end, &key) != 0) return -1;
    *field = (uint32_t)(key >> 3);
    *wire = (unsigned)(key & 7);
    if ((key >> 3) == 0 || (key >> 3) > 0x1fffffff) return bad(rd, SP_EFORMAT, "invalid field number");
    return 0;
}

/* Reads a length-delimited field's length, checked against end. */
static int read_length(reader *rd, uint64_t end, uint64_t *len)
{
    if (read_varint(rd, end, len) != 0) return -1;
    if (*len > end - rd->offset) return bad(rd, SP_EFORMAT, "length runs past the end of its message");
    return 0;
}

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

/* Copies the value of a field (key already read) into keep, re-encoded
 * with its key, or skips it when keep is NULL. */
static int copy_field(reader *rd, uint64_t end, uint32_t field, unsigned wire, sp__buf *keep)
{
    uint64_t v, len;
    if (keep) put_varint(keep, ((uint64_t)field << 3) | wire);
    switch (wire) {
    case 0:
        if (read_varint(rd, end, &v) != 0) return -1;
        if (keep) put_varint(keep, v);
        return 0;
    case 1:
    case 5:
        len = wire == 1 ? 8 : 4;
        if (len > end - rd->offset) return bad(rd, SP_EFORMAT, "message ends inside a fixed-size field");
        break;
    case 2:
        if (read_length(rd, end, &len) != 0) return -1;
        if (keep) put_varint(keep, len);
        break;
    default:
        return bad(rd, SP_EFORMAT, "unsupported wire type");
    }
    if (!keep) return read_bytes(rd, NULL, (size_t)len);
    if (sp__buf_reserve(keep, (size_t)len) != 0) return bad(rd, SP_ENOMEM, "out of memory");
    if (read_bytes(rd, keep->data + keep->len, (size_t)len) != 0) return -1;
    keep->len += (size_t)len;
    return 0;
}

typedef struct loader {
    reader rd;
    sp__builder b;
    sp__buf node;      /* one host node's bytes */
    sp__buf head;      /* a thread tree's fields other than host nodes */
    sp__buf top;       /* the root's fields other than thread trees */
    int64_t min_ns, max_ns; /* extent of the events, for files without a span */
    int64_t pid;
    int have_pid;
    const sp__pb_sink *sink; /* host and memory events go here, or NULL */
    /* A merged trace's ranks (trace-format.md §13): list only reads the
     * root's stepprof_ranks into ranks; filter keeps only_rank's threads
     * and takes its root fields from its stepprof_ranks entry. */
    int list, filter;
    int64_t only_rank;
    int64_t *ranks;
    size_t n_ranks;
} loader;

static const char *text(const char *s) { return s ? s : ""; }

static uint32_t name_id(loader *l, const char *s)
{
    s = text(s);
    return sp__names_from_bytes(&l->b.r->names, s, strlen(s));
}

static void extend(loader *l, int64_t start, int64_t end)
{
    if (start < l->min_ns) l->min_ns = start;
    if (end > l->max_ns) l->max_ns = end;
}

static int64_t clamp_end(uint64_t start, uint64_t end) { return (int64_t)(end < start ? start : end); }

static void add_device(loader *l, const sp__pb_device *d)
{
    if (!d || !d->has_type || (d->type != SP_EVENT_KERNEL && d->type != SP_EVENT_MEMCPY && d->type != SP_EVENT_MEMSET))
        return;
    sp__device_rec *rec = sp__builder_device(&l->b, d->has_stepprof_index ? d->stepprof_index : UINT64_MAX);
    if (!rec) return;
    rec->start_ns = (int64_t)d->start_ns;
    rec->end_ns = clamp_end(d->start_ns, d->end_ns);
    rec->name = name_id(l, d->name);
    rec->type = (uint8_t)d->type;
    rec->device = (uint32_t)d->device_id;
    rec->context = (uint32_t)d->context_id;
    rec->stream = (uint32_t)d->stream_id;
    rec->correlation = d->correlation_id;
    if (d->detail_info_case == PADDLE__PLATFORM__DEVICE_TRACE_EVENT_PROTO__DETAIL_INFO_KERNEL_INFO && d->kernel_info) {
        const Paddle__Platform__KernelEventInfoProto *k = d->kernel_info;
        sp__kernel_detail *kd = &rec->detail.kernel;
        kd->block[0] = k->block_x, kd->block[1] = k->block_y, kd->block[2] = k->block_z;
        kd->grid[0] = k->grid_x, kd->grid[1] = k->grid_y, kd->grid[2] = k->grid_z;
        kd->dynamic_shared = k->dynamic_shared_memory;
        kd->static_shared = k->static_shared_memory;
        kd->registers = k->registers_per_thread;
        kd->local_per_thread = k->local_memory_per_thread;
        kd->local_total = k->local_memory_total;
        kd->queued_ns = k->queued;
        kd->submitted_ns = k->submitted;
    } else if (d->detail_info_case == PADDLE__PLATFORM__DEVICE_TRACE_EVENT_PROTO__DETAIL_INFO_MEMCPY_INFO && d->memcpy_info) {
        rec->bytes = d->memcpy_info->num_bytes;
        rec->detail.copy.copy_kind = (uint8_t)sp__gpu_copy_kind_parse(d->memcpy_info->copy_kind);
        rec->detail.copy.src_kind = (uint8_t)sp__gpu_memory_kind_parse(d->memcpy_info->src_kind);
        rec->detail.copy.dst_kind = (uint8_t)sp__gpu_memory_kind_parse(d->memcpy_info->dst_kind);
    } else if (d->detail_info_case == PADDLE__PLATFORM__DEVICE_TRACE_EVENT_PROTO__DETAIL_INFO_MEMSET_INFO && d->memset_info) {
        rec->bytes = d->memset_info->num_bytes;
        rec->detail.set.memory_kind = (uint8_t)sp__gpu_memory_kind_parse(d->memset_info->memory_kind);
        rec->detail.set.value = d->memset_info->value;
    }
}

static void add_runtime(loader *l, sp__thread *t, const sp__pb_runtime_node *node, int on_root)
{
    const sp__pb_runtime *e = node->runtime_trace_event;
    for (size_t i = 0; i < node->n_device_nodes; i++)
        if (node->device_nodes[i]) add_device(l, node->device_nodes[i]->device_event);
    if (!e) return;
    /* The holder of device records without a runtime call is no call. */
    if (on_root && strcmp(text(e->name), SP__PB_UNATTRIBUTED) == 0 && e->start_ns == e->end_ns) return;
    sp__runtime *rt = sp__builder_runtime(&l->b, t);
    if (!rt) return;
    rt->start_ns = (int64_t)e->start_ns;
    rt->end_ns = clamp_end(e->start_ns, e->end_ns);
    rt->name = name_id(l, e->name);
    rt->correlation = e->correlation_id;
    rt->cbid = e->callback_id;
    rt->driver = e->stepprof_driver ? 1 : 0;
}

static void add_mem(loader *l, sp__thread *t, const sp__pb_mem *e)
{
    if (l->sink) {
        if (e && l->sink->mem) {
            sp_mem_info info = {.addr = e->addr,
                                .bytes = e->increase_bytes,
                                .current_allocated = e->current_allocated,
                                .current_reserved = e->current_reserved,
                                .peak_allocated = e->peak_allocated,
                                .peak_reserved = e->peak_reserved};
            l->sink->mem(l->sink->user, t->tid, e->type, text(e->place), (int64_t)e->timestamp_ns,
                         &info);
        }
        return;
    }
    if (!e || e->type > SP_MEM_RESERVED_FREE) {
        l->b.r->counters[SP_COUNTER_MISUSE]++;
        return;
    }
    sp__mem_event *m = sp__builder_mem(&l->b, t);
    if (!m) return;
    m->ts_ns = (int64_t)e->timestamp_ns;
    m->type = (uint8_t)e->type;
    m->place = name_id(l, e->place);
    m->addr = e->addr;
    m->bytes = e->increase_bytes;
    m->current_allocated = e->current_allocated;
    m->current_reserved = e->current_reserved;
    m->peak_allocated = e->peak_allocated;
    m->peak_reserved = e->peak_reserved;
}

/* Encodes an op supplement's inputs as collect.h lays them out. */
static void add_op(loader *l, sp__thread *t, const sp__pb_op *e)
{
    if (!e) return;
    sp__builder *b = &l->b;
    sp__op_supplement *op = sp__builder_op(b, t);
    if (!op) return;
    op->ts_ns = (int64_t)e->timestamp_ns;
    op->op_type = name_id(l, e->op_type);
    op->callstack = name_id(l, e->callstack);
    op->op_id = e->op_id;
    op->flops = e->has_stepprof_flops ? e->stepprof_flops : 0;
    const Paddle__Platform__OperatorSupplementEventProto__InputShapeProto *shapes = e->input_shapes;
    size_t keys = shapes ? shapes->n_key : 0;
    sp__builder_op_word(b, t, keys);
    for (size_t k = 0; k < keys; k++) {
        sp__builder_op_word(b, t, name_id(l, shapes->key[k]));
        const Paddle__Platform__OperatorSupplementEventProto__InputShapeProto__ShapeVector *v =
            k < shapes->n_shape_vecs ? shapes->shape_vecs[k] : NULL;
        size_t n = v ? v->n_shapes : 0;
        sp__builder_op_word(b, t, n);
        for (size_t i = 0; i < n; i++) {
            size_t rank = v->shapes[i] ? v->shapes[i]->n_size : 0;
            sp__builder_op_word(b, t, rank);
            for (size_t d = 0; d < rank; d++) sp__builder_op_word(b, t, v->shapes[i]->size[d]);
        }
    }
    const Paddle__Platform__OperatorSupplementEventProto__DtypeProto *dtypes = e->dtypes;
    keys = dtypes ? dtypes->n_key : 0;
    sp__builder_op_word(b, t, keys);
    for (size_t k = 0; k < keys; k++) {
        sp__builder_op_word(b, t, name_id(l, dtypes->key[k]));
        const Paddle__Platform__OperatorSupplementEventProto__DtypeProto__DtypeVector *v =
            k < dtypes->n_dtype_vecs ? dtypes->dtype_vecs[k] : NULL;
        size_t n = v ? v->n_dtype : 0;
        sp__builder_op_word(b, t, n);
        for (size_t i = 0; i < n; i++) sp__builder_op_word(b, t, name_id(l, v->dtype[i]));
    }
}

static void add_host_node(loader *l, sp__thread *t, const sp__pb_host_node *node)
{
    int root = node->has_parentid && node->parentid == -1;
    const sp__pb_host *h = node->host_trace_event;
    if (!root && h && l->sink) {
        l->sink->event(l->sink->user, t->tid, h->type, text(h->name), (int64_t)h->start_ns,
                       (int64_t)h->end_ns);
    } else if (!root && h) {
        sp__event *e = sp__builder_event(&l->b, t);
        if (!e) return;
        unsigned type = h->type;
        if (h->has_stepprof_type && h->stepprof_type < SP_EVENT_TYPE_COUNT) type = h->stepprof_type;
        if (type >= SP_EVENT_TYPE_COUNT) type = SP_EVENT_USER_DEFINED;
        e->type = (uint8_t)type;
        e->name = name_id(l, h->name);
        e->start_ns = (int64_t)h->start_ns;
        e->end_ns = clamp_end(h->start_ns, h->end_ns);
        e->flags = (uint8_t)(h->stepprof_flags & (SP_EVENT_FLAG_INSTANT | SP_EVENT_FLAG_COUNTER | SP_EVENT_FLAG_UNCLOSED));
        if (e->flags & SP_EVENT_FLAG_COUNTER) e->value = h->stepprof_value;
        /* A step's num_samples, kept only where it is a count (a hand-made
         * file may say anything). */
        if ((h->stepprof_flags & SP_EVENT_FLAG_SAMPLES) && type == SP_EVENT_PROFILE_STEP &&
            h->has_stepprof_value && h->stepprof_value >= 0 &&
            h->stepprof_value <= SP__STEP_SAMPLES_MAX) {
            e->flags |= SP_EVENT_FLAG_SAMPLES;
            e->value = h->stepprof_value;
        }
        extend(l, e->start_ns, e->end_ns);
        if (!l->have_pid && h->has_process_id) {
            l->pid = (int64_t)h->process_id;
            l->have_pid = 1;
        }
    }
    for (size_t i = 0; i < node->n_runtime_nodes; i++)
        if (node->runtime_nodes[i]) add_runtime(l, t, node->runtime_nodes[i], root);
    for (size_t i = 0; i < node->n_mem_nodes; i++)
        if (node->mem_nodes[i]) add_mem(l, t, node->mem_nodes[i]->mem_event);
    for (size_t i = 0; i < node->n_op_supplement_nodes; i++)
        if (node->op_supplement_nodes[i]) add_op(l, t, node->op_supplement_nodes[i]->op_supplement_event);
}

static int read_host_node(loader *l, sp__thread *t, uint64_t len)
{
    reader *rd = &l->rd;
    l->node.len = 0;
    if (sp__buf_reserve(&l->node, (size_t)len) != 0) return bad(rd, SP_ENOMEM, "out of memory");
    uint64_t at = rd->offset;
    if (read_bytes(rd, l->node.data, (size_t)len) != 0) return -1;
    sp__pb_host_node *node = (sp__pb_host_node *)protobuf_c_message_unpack(
        &paddle__platform__host_trace_event_node_proto__descriptor, &sp__pb_allocator, (size_t)len,
        (const uint8_t *)l->node.data);
    if (!node) {
        rd->offset = at;
        return bad(rd, SP_EFORMAT, "invalid host node");
    }
    add_host_node(l, t, node);
    protobuf_c_message_free_unpacked(&node->base, &sp__pb_allocator);
    return l->b.failed ? bad(rd, SP_ENOMEM, "out of memory") : 0;
}

/* A thread tree (field 3, the key and length already read, ending at end).
 * A first pass collects its small fields (thread id and stepprof's), a
 * second reads the host nodes into the thread of that id. */
static int read_thread_tree(loader *l, uint64_t end)
{
    reader *rd = &l->rd;
    uint64_t start = rd->offset;
    l->head.len = 0;
    while (rd->offset < end) {
        uint32_t field;
        unsigned wire;
        if (read_key(rd, end, &field, &wire) != 0) return -1;
        int skip = field == SP__PB_THREAD_HOST_NODES && wire == 2;
        if (copy_field(rd, end, field, wire, skip ? NULL : &l->head) != 0) return -1;
    }
    if (l->head.failed) return bad(rd, SP_ENOMEM, "out of memory");
    sp__pb_thread *head = (sp__pb_thread *)protobuf_c_message_unpack(
        &paddle__platform__thread_node_tree_proto__descriptor, &sp__pb_allocator, l->head.len,
        (const uint8_t *)(l->head.data ? l->head.data : ""));
    if (!head) {
        rd->offset = start;
        return bad(rd, SP_EFORMAT, "invalid thread tree");
    }
    if (l->filter && (head->has_stepprof_rank ? head->stepprof_rank : 0) != l->only_rank) {
        protobuf_c_message_free_unpacked(&head->base, &sp__pb_allocator);
        return seek_to(rd, end); /* another rank's thread */
    }
    sp__thread *t = sp__builder_thread(&l->b, head->thread_id);
    if (t && head->stepprof_thread_name) t->name = name_id(l, head->stepprof_thread_name);
    if (t) t->dropped += head->stepprof_dropped;
    protobuf_c_message_free_unpacked(&head->base, &sp__pb_allocator);
    if (!t) return bad(rd, SP_ENOMEM, "out of memory");
    size_t thread = (size_t)(t - l->b.r->threads);
    if (seek_to(rd, start) != 0) return -1;
    while (rd->offset < end) {
        uint32_t field;
        unsigned wire;
        if (read_key(rd, end, &field, &wire) != 0) return -1;
        if (field != SP__PB_THREAD_HOST_NODES || wire != 2) {
            if (copy_field(rd, end, field, wire, NULL) != 0) return -1;
            continue;
        }
        uint64_t len;
        if (read_length(rd, end, &len) != 0) return -1;
        if (read_host_node(l, &l->b.r->threads[thread], len) != 0) return -1;
    }
    return 0;
}

static void restore_header(loader *l, const sp__pb_trees *m, int *keep_counters)
{
    sp_result *r = l->b.r;
    r->span_index = m->span_indx;
    for (size_t i = 0; i < m->n_extra_info; i++) {
        const sp__pb_extra *x = m->extra_info[i];
        if (!x || !x->key || !x->value) continue;
        if (strcmp(x->key, "System Cpu Utilization") == 0) r->meta.cpu_system = strtod(x->value, NULL);
        if (strcmp(x->key, "Process Cpu Utilization") == 0) r->meta.cpu_process = strtod(x->value, NULL);
    }
    if (m->has_stepprof_cpu_process) r->meta.cpu_process = m->stepprof_cpu_process;
    if (m->has_stepprof_cpu_system) r->meta.cpu_system = m->stepprof_cpu_system;
    r->span_start_ns = m->has_stepprof_span_start_ns ? m->stepprof_span_start_ns : l->min_ns;
    r->span_end_ns = m->has_stepprof_span_end_ns ? m->stepprof_span_end_ns : l->max_ns;
    if (r->span_start_ns > r->span_end_ns) r->span_start_ns = r->span_end_ns = 0; /* no events */
    r->meta.pid = m->has_stepprof_pid ? m->stepprof_pid : l->pid;
    if (m->stepprof_process_name)
        snprintf(r->meta.process_name, sizeof r->meta.process_name, "%s", m->stepprof_process_name);
    uint32_t o = m->stepprof_options;
    r->meta.record_shapes = (o & SP__PB_OPT_RECORD_SHAPES) != 0;
    r->meta.profile_memory = (o & SP__PB_OPT_PROFILE_MEMORY) != 0;
    r->meta.with_flops = (o & SP__PB_OPT_WITH_FLOPS) != 0;
    r->meta.with_stack = (o & SP__PB_OPT_WITH_STACK) != 0;
    r->meta.overwrite_oldest = (o & SP__PB_OPT_OVERWRITE_OLDEST) != 0;
    if (m->n_device_property) {
        r->device_props = sp__alloc(sizeof *r->device_props * m->n_device_property);
        if (!r->device_props) l->b.failed = 1;
    }
    for (size_t i = 0; r->device_props && i < m->n_device_property; i++) {
        const sp__pb_device_prop *p = m->device_property[i];
        if (!p) continue;
        sp__device_props *d = &r->device_props[r->device_prop_count++];
        memset(d, 0, sizeof *d);
        d->id = p->id;
        snprintf(d->name, sizeof d->name, "%s", text(p->name));
        d->total_global_mem = p->total_global_memory;
        d->compute_major = p->compute_major;
        d->compute_minor = p->compute_minor;
        d->max_threads_per_block = p->max_threads_per_block;
        d->max_threads_per_sm = p->max_threads_per_multiprocessor;
        d->regs_per_block = p->regs_per_block;
        d->regs_per_sm = p->regs_per_multiprocessor;
        d->warp_size = p->warp_size;
        d->shared_per_block = p->shared_memory_per_block;
        d->shared_per_sm = p->shared_memory_per_multiprocessor;
        d->num_sms = p->sm_count;
        d->shared_per_block_optin = p->shared_memory_per_block_optin;
        d->max_blocks_per_sm = p->stepprof_max_blocks_per_sm;
    }
    *keep_counters = m->n_stepprof_counters > 0;
    for (size_t i = 0; i < m->n_stepprof_counters; i++) {
        const sp__pb_counter *c = m->stepprof_counters[i];
        for (int k = 0; c && c->name && k < SP_COUNTER_COUNT; k++)
            if (strcmp(c->name, sp_counter_name((sp_counter_kind)k)) == 0) r->counters[k] = c->value;
    }
    if (sp__pb_read_dist(&l->b, m) != 0) l->b.failed = 1;
}

/* The ranks of a merged trace's root, in file order. */
static sp_status list_ranks(loader *l, const sp__pb_trees *m)
{
    if (!m->n_stepprof_ranks) return SP_OK;
    /* Each rank costs a read of the file: a hostile list must not. */
    if (m->n_stepprof_ranks > MAX_RANKS)
        return sp__fail(SP_EFORMAT, "%s: not a valid protobuf trace: %zu ranks (at most %d)", l->rd.path,
                        m->n_stepprof_ranks, MAX_RANKS);
    l->ranks = sp__alloc(sizeof *l->ranks * m->n_stepprof_ranks);
    if (!l->ranks) return sp__fail(SP_ENOMEM, "out of memory loading %s", l->rd.path);
    for (size_t i = 0; i < m->n_stepprof_ranks; i++)
        if (m->stepprof_ranks[i] && m->stepprof_ranks[i]->has_rank) {
            int64_t r = m->stepprof_ranks[i]->rank;
            size_t k = 0;
            while (k < l->n_ranks && l->ranks[k] != r)
                k++;
            if (k == l->n_ranks) l->ranks[l->n_ranks++] = r; /* each rank once */
        }
    return SP_OK;
}

/* only_rank's own root fields, unpacked; NULL when the file has none. */
static sp__pb_trees *rank_header(loader *l, const sp__pb_trees *m)
{
    for (size_t i = 0; i < m->n_stepprof_ranks; i++) {
        const Paddle__Platform__StepprofRankProto *e = m->stepprof_ranks[i];
        if (!e || !e->has_rank || e->rank != l->only_rank || !e->has_header) continue;
        return (sp__pb_trees *)protobuf_c_message_unpack(&paddle__platform__node_trees_proto__descriptor,
                                                         &sp__pb_allocator, e->header.len,
                                                         e->header.data ? e->header.data : (const uint8_t *)"");
    }
    return NULL;
}

static sp_status load(loader *l, sp_result **out)
{
    reader *rd = &l->rd;
    uint64_t end = rd->size;
    uint64_t trees = 0, said_trees = 0;
    int begun = 0, ended = 0;
    while (rd->offset < end) {
        uint32_t field;
        unsigned wire;
        if (ended) return bad(rd, SP_EFORMAT, "data after the end marker (stepprof_end)"), rd->status;
        if (read_key(rd, end, &field, &wire) != 0) return rd->status;
        if (field == SP__PB_TREES_THREAD_TREES && wire == 2) {
            uint64_t len;
            if (read_length(rd, end, &len) != 0) return rd->status;
            if (l->list ? seek_to(rd, rd->offset + len) != 0 : read_thread_tree(l, rd->offset + len) != 0)
                return rd->status;
            trees++;
        } else if (field == SP__PB_TREES_STEPPROF_BEGIN && wire == 0) {
            uint64_t v;
            if (read_varint(rd, end, &v) != 0) return rd->status;
            begun = 1;
        } else if (field == SP__PB_TREES_STEPPROF_END && wire == 0) {
            if (read_varint(rd, end, &said_trees) != 0) return rd->status;
            ended = 1;
        } else if (copy_field(rd, end, field, wire, &l->top) != 0) {
            return rd->status;
        }
    }
    /* A file that stepprof began must be whole (nodetree.proto's guard);
     * paddle's files carry no guard. */
    if (begun && !ended)
        return sp__fail(SP_EFORMAT, "%s: truncated protobuf trace: the file ends after %llu bytes and %llu "
                        "thread trees, without its end marker", rd->path, (unsigned long long)rd->size,
                        (unsigned long long)trees);
    if (ended && said_trees != trees)
        return sp__fail(SP_EFORMAT, "%s: not a valid protobuf trace: %llu thread trees, the end marker says %llu",
                        rd->path, (unsigned long long)trees, (unsigned long long)said_trees);
    if (l->top.failed) return bad(rd, SP_ENOMEM, "out of memory"), rd->status;
    sp__pb_trees *m = (sp__pb_trees *)protobuf_c_message_unpack(
        &paddle__platform__node_trees_proto__descriptor, &sp__pb_allocator, l->top.len,
        (const uint8_t *)(l->top.data ? l->top.data : ""));
    if (!m) return sp__fail(SP_EFORMAT, "%s: not a valid protobuf trace: invalid root fields", rd->path);
    if (m->version && strncmp(m->version, "1.", 2) != 0) {
        sp_status s = sp__fail(SP_EFORMAT, "%s: unsupported NodeTreesProto version \"%.32s\"", rd->path, m->version);
        protobuf_c_message_free_unpacked(&m->base, &sp__pb_allocator);
        return s;
    }
    if (l->list) {
        sp_status st = list_ranks(l, m);
        protobuf_c_message_free_unpacked(&m->base, &sp__pb_allocator);
        return st;
    }
    if (!m->version && l->b.r->thread_count == 0) {
        protobuf_c_message_free_unpacked(&m->base, &sp__pb_allocator);
        return sp__fail(SP_EFORMAT, "%s: not a protobuf trace: no version and no thread trees", rd->path);
    }
    sp__pb_trees *own = NULL;
    if (l->filter) {
        own = rank_header(l, m);
        if (!own) {
            protobuf_c_message_free_unpacked(&m->base, &sp__pb_allocator);
            return sp__fail(SP_EFORMAT, "%s: no root fields for rank %lld in the merged trace", rd->path,
                            (long long)l->only_rank);
        }
    }
    int keep_counters;
    restore_header(l, own ? own : m, &keep_counters);
    if (own) protobuf_c_message_free_unpacked(&own->base, &sp__pb_allocator);
    protobuf_c_message_free_unpacked(&m->base, &sp__pb_allocator);
    if (rd->opts->progress) rd->opts->progress(rd->size, rd->size, rd->opts->progress_user);
    return sp__builder_finish(&l->b, keep_counters, rd->path, out);
}

sp_status sp__load_pb(FILE *f, const char *path, const sp_load_options *opts, sp_result **out)
{
    return sp__load_pb_to(f, path, opts, NULL, out);
}

/* How run() reads: everything, a merged trace's rank list, or one rank. */
typedef struct pb_mode {
    int list, filter;
    int64_t rank;
    int64_t *ranks; /* list: out */
    size_t n_ranks;
} pb_mode;

static sp_status run(FILE *f, const char *path, const sp_load_options *opts, const sp__pb_sink *sink,
                     pb_mode *mode, sp_result **out);

sp_status sp__load_pb_to(FILE *f, const char *path, const sp_load_options *opts,
                         const sp__pb_sink *sink, sp_result **out)
{
    pb_mode all = {0};
    return run(f, path, opts, sink, &all, out);
}

sp_status sp__load_pb_ranks(FILE *f, const char *path, const sp_load_options *opts, sp_result ***out,
                            size_t *count)
{
    *out = NULL;
    *count = 0;
    pb_mode list = {.list = 1};
    sp_status s = run(f, path, opts, NULL, &list, NULL);
    if (s != SP_OK || list.n_ranks == 0) {
        sp__free(list.ranks);
        return s;
    }
    sp_result **v = sp__alloc(sizeof *v * list.n_ranks);
    if (!v) s = sp__fail(SP_ENOMEM, "out of memory loading %s", path);
    size_t k = 0;
    for (size_t i = 0; s == SP_OK && i < list.n_ranks; i++) {
        pb_mode one = {.filter = 1, .rank = list.ranks[i]};
        if (fseeko(f, 0, SEEK_SET) != 0) {
            s = sp__fail(SP_EIO, "%s: cannot read: %s", path, strerror(errno));
            break;
        }
        s = run(f, path, opts, NULL, &one, &v[k]);
        if (s == SP_OK) k++;
    }
    sp__free(list.ranks);
    if (s != SP_OK) {
        for (size_t i = 0; i < k; i++)
            sp_result_release(v[i]);
        sp__free(v);
        return s;
    }
    *out = v;
    *count = k;
    return SP_OK;
}

static sp_status run(FILE *f, const char *path, const sp_load_options *opts, const sp__pb_sink *sink,
                     pb_mode *mode, sp_result **out)
{
    loader *l = sp__alloc(sizeof *l);
    if (!l) return sp__fail(SP_ENOMEM, "out of memory loading %s", path);
    l->rd.path = path;
    l->rd.opts = opts;
    l->rd.f = f;
    l->sink = sink;
    l->list = mode->list;
    l->filter = mode->filter;
    l->only_rank = mode->rank;
    l->ranks = NULL;
    l->n_ranks = 0;
    l->min_ns = INT64_MAX;
    l->max_ns = INT64_MIN;
    sp__buf_init(&l->node);
    sp__buf_init(&l->head);
    sp__buf_init(&l->top);
    sp_status s;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        s = sp__fail(SP_EIO, "%s: not a regular file", path);
    } else if (sp__builder_init(&l->b) != 0) {
        s = sp__fail(SP_ENOMEM, "out of memory loading %s", path);
    } else {
        l->rd.size = (uint64_t)st.st_size;
        s = load(l, out);
        if (s != SP_OK || l->list) sp__builder_fini(&l->b);
    }
    mode->ranks = l->ranks;
    mode->n_ranks = l->n_ranks;
    sp__buf_fini(&l->node);
    sp__buf_fini(&l->head);
    sp__buf_fini(&l->top);
    sp__free(l);
    return s;
}
