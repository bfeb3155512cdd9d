/* perfetto_meta.c: the metadata events of a .pftrace: what the JSON keeps
 * in its header (the span, where it ran, the options, the counters, the
 * device properties) as debug annotations of instants on the process
 * track, so Perfetto's UI shows them as the events' args and stepprof's
 * reader (load_pftrace.c) restores them. Written once, so names are plain
 * strings, not interned. */
#include "pb_wire.h"
#include "perfetto.h"

#include <stdio.h>

typedef struct meta {
    sp__buf *te;  /* the TrackEvent */
    sp__buf ann;  /* one annotation */
} meta;

static void ann_uint(meta *m, const char *name, uint64_t v)
{
    m->ann.len = 0;
    sp__pb_put_str(&m->ann, PF_ANN_NAME, name);
    sp__pb_put_uint(&m->ann, PF_ANN_UINT, v);
    sp__pb_put_bytes(m->te, PF_TE_DEBUG_ANNOTATIONS, m->ann.data, m->ann.len);
}

static void ann_int(meta *m, const char *name, int64_t v)
{
    m->ann.len = 0;
    sp__pb_put_str(&m->ann, PF_ANN_NAME, name);
    sp__pb_put_uint(&m->ann, PF_ANN_INT, (uint64_t)v);
    sp__pb_put_bytes(m->te, PF_TE_DEBUG_ANNOTATIONS, m->ann.data, m->ann.len);
}

static void ann_double(meta *m, const char *name, double v)
{
    m->ann.len = 0;
    sp__pb_put_str(&m->ann, PF_ANN_NAME, name);
    sp__pb_put_double(&m->ann, PF_ANN_DOUBLE, v);
    sp__pb_put_bytes(m->te, PF_TE_DEBUG_ANNOTATIONS, m->ann.data, m->ann.len);
}

static void ann_str(meta *m, const char *name, const char *v)
{
    m->ann.len = 0;
    sp__pb_put_str(&m->ann, PF_ANN_NAME, name);
    sp__pb_put_str(&m->ann, PF_ANN_STRING, v);
    sp__pb_put_bytes(m->te, PF_TE_DEBUG_ANNOTATIONS, m->ann.data, m->ann.len);
}

/* Starts an instant named name at ts on track. */
static void begin_instant(sp__buf *te, const char *name, uint64_t track)
{
    te->len = 0;
    sp__pb_put_uint(te, PF_TE_TYPE, PF_TYPE_INSTANT);
    sp__pb_put_str(te, PF_TE_NAME, name);
    sp__pb_put_str(te, PF_TE_CATEGORIES, PF_CATEGORY_STEPPROF);
    sp__pb_put_uint(te, PF_TE_TRACK_UUID, track);
}

static void put(sp__buf *out, sp__buf *packet, const sp__buf *te, int64_t ts)
{
    packet->len = 0;
    sp__pb_put_uint(packet, PF_PACKET_TIMESTAMP, (uint64_t)(ts < 0 ? 0 : ts));
    sp__pb_put_uint(packet, PF_PACKET_SEQUENCE_ID, 1);
    sp__pb_put_bytes(packet, PF_PACKET_TRACK_EVENT, te->data, te->len);
    sp__pb_put_bytes(out, PF_TRACE_PACKET, packet->data, packet->len);
}

static void put_span(meta *m, const sp_result *r)
{
    const sp__span_meta *s = &r->meta;
    ann_str(m, "stepprof_version", SP_VERSION_STRING);
    ann_int(m, "span_start_ns", r->span_start_ns);
    ann_int(m, "span_end_ns", r->span_end_ns);
    ann_uint(m, "span_index", r->span_index);
    ann_int(m, "pid", s->pid);
    ann_str(m, "process_name", s->process_name);
    ann_double(m, "cpu_process", s->cpu_process);
    ann_double(m, "cpu_system", s->cpu_system);
    ann_int(m, "rank", s->rank);
    ann_int(m, "world_size", s->world_size);
    ann_int(m, "local_rank", s->local_rank);
    ann_int(m, "local_world_size", s->local_world_size);
    ann_str(m, "hostname", s->hostname);
    ann_str(m, "job", s->job);
    ann_str(m, "dist_backend", s->dist_backend);
    ann_uint(m, "record_shapes", (uint64_t)s->record_shapes);
    ann_uint(m, "profile_memory", (uint64_t)s->profile_memory);
    ann_uint(m, "with_stack", (uint64_t)s->with_stack);
    ann_uint(m, "with_flops", (uint64_t)s->with_flops);
    ann_uint(m, "overwrite_oldest", (uint64_t)s->overwrite_oldest);
    char key[96];
    for (int c = 0; c < SP_COUNTER_COUNT; c++) {
        snprintf(key, sizeof key, "counter %s", sp_counter_name((sp_counter_kind)c));
        ann_uint(m, key, r->counters[c]);
    }
    for (size_t i = 0; i < r->thread_count; i++) {
        if (!r->threads[i].dropped) continue;
        snprintf(key, sizeof key, "dropped %llu", (unsigned long long)r->threads[i].tid);
        ann_uint(m, key, r->threads[i].dropped);
    }
}

static void put_props(meta *m, const sp__device_props *p)
{
    ann_uint(m, "id", p->id);
    ann_str(m, "name", p->name);
    ann_uint(m, "total_global_mem", p->total_global_mem);
    ann_uint(m, "compute_major", p->compute_major);
    ann_uint(m, "compute_minor", p->compute_minor);
    ann_uint(m, "max_threads_per_block", p->max_threads_per_block);
    ann_uint(m, "max_threads_per_sm", p->max_threads_per_sm);
    ann_uint(m, "regs_per_block", p->regs_per_block);
    ann_uint(m, "regs_per_sm", p->regs_per_sm);
    ann_uint(m, "warp_size", p->warp_size);
    ann_uint(m, "shared_per_block", p->shared_per_block);
    ann_uint(m, "shared_per_sm", p->shared_per_sm);
    ann_uint(m, "shared_per_block_optin", p->shared_per_block_optin);
    ann_uint(m, "num_sms", p->num_sms);
    ann_uint(m, "max_blocks_per_sm", p->max_blocks_per_sm);
}

void sp__perfetto_put_metadata(sp__buf *out, const sp_result *r, uint64_t track)
{
    sp__buf te, packet;
    sp__buf_init(&te);
    sp__buf_init(&packet);
    meta m = {&te, {0}};
    sp__buf_init(&m.ann);
    begin_instant(&te, PF_NAME_METADATA, track);
    put_span(&m, r);
    put(out, &packet, &te, r->span_start_ns);
    for (size_t d = 0; d < r->device_prop_count; d++) {
        begin_instant(&te, PF_NAME_DEVICE, track);
        put_props(&m, &r->device_props[d]);
        put(out, &packet, &te, r->span_start_ns);
    }
    if (te.failed || packet.failed || m.ann.failed) out->failed = 1;
    sp__buf_fini(&te);
    sp__buf_fini(&packet);
    sp__buf_fini(&m.ann);
}
