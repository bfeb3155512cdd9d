/* perfetto.c: writes a result as a Perfetto trace (.pftrace): a stream of
 * TracePackets holding TrackEvents, the format torch writes since 2026 and
 * Perfetto's UI and trace processor read natively, with no JSON importer in
 * the way. The layout (docs/trace-format.md, "Perfetto traces"):
 *
 * - sequence 1 describes the tracks (the process, one per thread with its
 *   ThreadDescriptor, one per GPU device and stream) and carries stepprof's
 *   metadata events, with absolute timestamps;
 * - each thread, then each GPU (device, stream), is a sequence of its own:
 *   its first packet clears the incremental state and declares, in a
 *   ClockSnapshot, a sequence-scoped incremental clock (id 64) that every
 *   later packet's timestamp is a delta of (TracePacketDefaults), with its
 *   track as the default track, so an event costs a few bytes. Names and
 *   categories are interned once per sequence, in the packet that first
 *   uses them.
 *
 * Ranges become SLICE_BEGIN / SLICE_END pairs. A sequence's packets must be
 * in time order (a delta is unsigned), so ends wait in a heap and go out
 * before the first begin at or after them. A track's slices must nest (an
 * END closes the innermost open slice), so a range that partially
 * overlaps an open one goes to another lane: a child track of the thread.
 * The file streams out through sp__out: memory is bounded by the name
 * tables and the deepest nesting, not by the trace. */
#include "perfetto_seq.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_host_event(pw *w, size_t i, const sp__event *e)
{
    sp__pf_flush_ends(w, e->start_ns);
    uint32_t cat = sp__pf_cat_iid(w, e->type);
    if (e->flags & SP_EVENT_FLAG_COUNTER) {
        uint64_t track = sp__pf_counter_track_of(w, i, e->name);
        sp__pf_te_head(w, PF_TYPE_COUNTER, 0, cat, track);
        sp__pb_put_double(&w->te, PF_TE_DOUBLE_COUNTER_VALUE, e->value);
        sp__pf_put_packet(w, e->start_ns, NULL);
        return;
    }
    uint32_t name = sp__pf_name_iid(w, e->name, e->type);
    uint64_t track = 0;
    if (!(e->flags & SP_EVENT_FLAG_INSTANT)) {
        unsigned k = sp__pf_pick_lane(w, 0, e->start_ns, e->end_ns);
        if (k) track = sp__pf_lane_track(w, i, k);
        sp__pf_heap_push(w, e->end_ns, track);
    }
    unsigned type = e->flags & SP_EVENT_FLAG_INSTANT ? PF_TYPE_INSTANT : PF_TYPE_SLICE_BEGIN;
    if (!(e->flags & (SP_EVENT_FLAG_SAMPLES | PF_KEPT_FLAGS))) {
        uint8_t te[4 * (SP__PB_VARINT_MAX + 2)], *q = te;
        q = sp__pb_uint_at(q, PF_TE_TYPE, type);
        q = sp__pb_uint_at(q, PF_TE_NAME_IID, name);
        q = sp__pb_uint_at(q, PF_TE_CATEGORY_IIDS, cat);
        if (track) q = sp__pb_uint_at(q, PF_TE_TRACK_UUID, track);
        sp__pf_put_small_packet(w, e->start_ns, te, (size_t)(q - te));
        return;
    }
    sp__pf_te_head(w, type, name, cat, track);
    if (e->flags & SP_EVENT_FLAG_SAMPLES) sp__pf_put_ann_double(w, PF_A_NUM_SAMPLES, e->value);
    if (e->flags & PF_KEPT_FLAGS) sp__pf_put_ann_uint(w, PF_A_FLAGS, e->flags & PF_KEPT_FLAGS);
    sp__pf_put_packet(w, e->start_ns, NULL);
}

/* A runtime call on its thread's lanes for calls; launched says whether a
 * device record points back at it (its correlation is then a flow id). */
static void put_runtime(pw *w, size_t i, const sp__runtime *rt, int launched)
{
    sp__pf_flush_ends(w, rt->start_ns);
    unsigned k = sp__pf_pick_lane(w, PF_LANES, rt->start_ns, rt->end_ns);
    uint64_t track = sp__pf_lane_track(w, i, k);
    sp__pf_te_head(w, PF_TYPE_SLICE_BEGIN, sp__pf_name_iid(w, rt->name, SP_EVENT_CUDA_RUNTIME),
            sp__pf_cat_iid(w, SP_EVENT_CUDA_RUNTIME), track);
    sp__pf_put_ann_uint(w, PF_A_CORRELATION, rt->correlation);
    sp__pf_put_ann_uint(w, PF_A_CBID, rt->cbid);
    if (rt->driver) sp__pf_put_ann_uint(w, PF_A_DRIVER, 1);
    const char *name = sp__result_name(w->r, rt->name);
    if (sp__pf_runtime_len(name) != strlen(name)) sp__pf_put_ann_recorded(w, rt->name);
    if (launched) sp__pb_put_fixed64(&w->te, PF_TE_FLOW_IDS, rt->correlation + 1ull);
    sp__pf_put_packet(w, rt->start_ns, NULL);
    sp__pf_heap_push(w, rt->end_ns, track);
}

static void put_mem(pw *w, const sp__mem_event *m)
{
    sp__pf_flush_ends(w, m->ts_ns);
    int reserved = m->type == SP_MEM_RESERVED_ALLOCATE || m->type == SP_MEM_RESERVED_FREE;
    uint64_t tracks = sp__pf_place_tracks_of(w, m->place);
    sp__pf_te_head(w, PF_TYPE_INSTANT, sp__pf_fixed_name_iid(w, reserved), sp__pf_cat_iid(w, SP_EVENT_TYPE_COUNT), 0);
    sp__pf_put_ann_uint(w, PF_A_ADDR, m->addr);
    sp__pf_put_ann_int(w, PF_A_MEM_BYTES, m->bytes);
    sp__pf_put_ann_str(w, PF_A_PLACE, sp__result_name(w->r, m->place));
    sp__pf_put_ann_uint(w, PF_A_MEM_TYPE, m->type);
    sp__pf_put_ann_uint(w, PF_A_PEAK_ALLOCATED, m->peak_allocated);
    sp__pf_put_ann_uint(w, PF_A_PEAK_RESERVED, m->peak_reserved);
    sp__pb_put_uint(&w->te, PF_TE_EXTRA_COUNTER_TRACKS, tracks);
    sp__pb_put_uint(&w->te, PF_TE_EXTRA_COUNTER_TRACKS, tracks + 1);
    sp__pb_put_uint(&w->te, PF_TE_EXTRA_COUNTER_VALUES, m->current_allocated);
    sp__pb_put_uint(&w->te, PF_TE_EXTRA_COUNTER_VALUES, m->current_reserved);
    sp__pf_put_packet(w, m->ts_ns, NULL);
}

/* One thread's sequence: its events, runtime calls and memory events
 * merged in time order (at equal times in that order). */
static void put_thread(pw *w, size_t i, const uint8_t *launched)
{
    const sp__thread *t = &w->r->threads[i];
    int64_t t0 = w->r->span_start_ns;
    if (t->count && t->events[0].start_ns < t0) t0 = t->events[0].start_ns;
    if (t->runtime_count && t->runtimes[0].start_ns < t0) t0 = t->runtimes[0].start_ns;
    if (t->mem_count && t->mems[0].ts_ns < t0) t0 = t->mems[0].ts_ns;
    sp__pf_begin_sequence(w, (uint32_t)(2 + i), t0, PF_THREAD_UUID(i));
    w->counter_count = 0;
    size_t e = 0, rt = 0, m = 0;
    while (e < t->count || rt < t->runtime_count || m < t->mem_count) {
        int64_t te = e < t->count ? t->events[e].start_ns : INT64_MAX;
        int64_t tr = rt < t->runtime_count ? t->runtimes[rt].start_ns : INT64_MAX;
        int64_t tm = m < t->mem_count ? t->mems[m].ts_ns : INT64_MAX;
        if (te <= tr && te <= tm) {
            put_host_event(w, i, &t->events[e++]);
        } else if (tr <= tm) {
            put_runtime(w, i, &t->runtimes[rt], launched && launched[rt]);
            rt++;
        } else {
            put_mem(w, &t->mems[m++]);
        }
        sp__out_maybe_flush(w->out);
    }
    sp__pf_flush_ends(w, INT64_MAX);
    sp__out_maybe_flush(w->out);
}

/* ---- GPU streams ---- */

typedef struct stream_key {
    uint32_t device, stream;
    uint64_t uuid;
} stream_key;

/* A device record; its index among the result's keeps their order, which
 * the streams' grouping loses. */
static void put_device_rec(pw *w, const sp__device_rec *d, size_t index)
{
    sp__pf_flush_ends(w, d->start_ns);
    unsigned k = sp__pf_pick_lane(w, 0, d->start_ns, d->end_ns);
    uint64_t track = k ? sp__pf_lane_track(w, SIZE_MAX, k) : 0;
    int recorded_differs = 0;
    uint32_t name;
    if (d->type == SP_EVENT_KERNEL) {
        name = sp__pf_name_iid(w, d->name, d->type);
    } else {
        char text[96], recorded[48];
        if (d->type == SP_EVENT_MEMCPY) {
            const sp__copy_detail *c = &d->detail.copy;
            snprintf(text, sizeof text, "Memcpy %s (%s -> %s)", sp__gpu_copy_kind_name(c->copy_kind),
                     sp__gpu_memory_kind_name(c->src_kind), sp__gpu_memory_kind_name(c->dst_kind));
            snprintf(recorded, sizeof recorded, "MEMCPY_%s", sp__gpu_copy_kind_name(c->copy_kind));
        } else {
            snprintf(text, sizeof text, "Memset (%s)", sp__gpu_memory_kind_name(d->detail.set.memory_kind));
            snprintf(recorded, sizeof recorded, "MEMSET");
        }
        uint32_t key = d->type == SP_EVENT_MEMCPY
                           ? 1u << 24 | (uint32_t)d->detail.copy.copy_kind << 16 |
                                 (uint32_t)d->detail.copy.src_kind << 8 | d->detail.copy.dst_kind
                           : 2u << 24 | d->detail.set.memory_kind;
        name = sp__pf_display_iid(w, key, text);
        recorded_differs = strcmp(recorded, sp__result_name(w->r, d->name)) != 0;
    }
    sp__pf_te_head(w, PF_TYPE_SLICE_BEGIN, name, sp__pf_cat_iid(w, d->type), track);
    if (recorded_differs) sp__pf_put_ann_recorded(w, d->name);
    sp__pf_put_ann_uint(w, PF_A_CORRELATION, d->correlation);
    sp__pf_put_ann_uint(w, PF_A_DEVICE, d->device);
    sp__pf_put_ann_uint(w, PF_A_CONTEXT, d->context);
    sp__pf_put_ann_uint(w, PF_A_STREAM, d->stream);
    sp__pf_put_ann_uint(w, PF_A_INDEX, index);
    if (d->type == SP_EVENT_KERNEL) {
        const sp__kernel_detail *kd = &d->detail.kernel;
        char text[64];
        snprintf(text, sizeof text, "%u,%u,%u", kd->grid[0], kd->grid[1], kd->grid[2]);
        sp__pf_put_ann_str(w, PF_A_GRID, text);
        snprintf(text, sizeof text, "%u,%u,%u", kd->block[0], kd->block[1], kd->block[2]);
        sp__pf_put_ann_str(w, PF_A_BLOCK, text);
        sp__pf_put_ann_uint(w, PF_A_REGISTERS, kd->registers);
        sp__pf_put_ann_uint(w, PF_A_STATIC_SHARED, kd->static_shared);
        sp__pf_put_ann_uint(w, PF_A_DYNAMIC_SHARED, kd->dynamic_shared);
        sp__pf_put_ann_uint(w, PF_A_LOCAL_PER_THREAD, kd->local_per_thread);
        sp__pf_put_ann_uint(w, PF_A_LOCAL_TOTAL, kd->local_total);
        if (kd->queued_ns) sp__pf_put_ann_uint(w, PF_A_QUEUED, kd->queued_ns);
        if (kd->submitted_ns) sp__pf_put_ann_uint(w, PF_A_SUBMITTED, kd->submitted_ns);
    } else if (d->type == SP_EVENT_MEMCPY) {
        sp__pf_put_ann_uint(w, PF_A_BYTES, d->bytes);
        sp__pf_put_ann_uint(w, PF_A_COPY_KIND, d->detail.copy.copy_kind);
        sp__pf_put_ann_uint(w, PF_A_SRC_KIND, d->detail.copy.src_kind);
        sp__pf_put_ann_uint(w, PF_A_DST_KIND, d->detail.copy.dst_kind);
    } else {
        sp__pf_put_ann_uint(w, PF_A_BYTES, d->bytes);
        sp__pf_put_ann_uint(w, PF_A_MEMORY_KIND, d->detail.set.memory_kind);
        sp__pf_put_ann_uint(w, PF_A_VALUE, d->detail.set.value);
    }
    if (d->thread >= 0) sp__pb_put_fixed64(&w->te, PF_TE_TERMINATING_FLOW_IDS, d->correlation + 1ull);
    sp__pf_put_packet(w, d->start_ns, NULL);
    sp__pf_heap_push(w, d->end_ns, track);
}

/* The distinct (device, stream) pairs of the device records; NULL with
 * *n 0 when there are none. */
static stream_key *stream_keys(pw *w, size_t *n)
{
    stream_key *keys = NULL;
    size_t count = 0, cap = 0;
    for (size_t d = 0; d < w->r->device_count; d++) {
        const sp__device_rec *rec = &w->r->devices[d];
        size_t k = 0;
        while (k < count && (keys[k].device != rec->device || keys[k].stream != rec->stream)) k++;
        if (k < count) continue;
        if (count == cap) {
            stream_key *g = sp__pf_grow(w, keys, &cap, sizeof *g);
            if (!g) break;
            keys = g;
        }
        keys[count++] = (stream_key){rec->device, rec->stream, 0};
    }
    *n = count;
    return keys;
}

/* Describes the GPU tracks (on sequence 1): one per device, a child per
 * stream (whose lanes for overlapping records are described when used).
 * Stream k is base + k * PF_LANES, its lanes follow it; device d is
 * base + n * PF_LANES + d. */
static void put_gpu_tracks(pw *w, stream_key *keys, size_t n)
{
    char name[64];
    uint64_t base = w->next_uuid, devices = base + (uint64_t)n * PF_LANES;
    uint32_t max_device = 0;
    for (size_t k = 0; k < n; k++) {
        size_t first = 0;
        while (first < k && keys[first].device != keys[k].device) first++;
        if (first == k) {
            snprintf(name, sizeof name, "GPU %u", keys[k].device);
            sp__pf_put_track(w, devices + keys[k].device, 0, name, -1);
        }
        if (keys[k].device > max_device) max_device = keys[k].device;
        keys[k].uuid = base + (uint64_t)k * PF_LANES;
        snprintf(name, sizeof name, "stream %u", keys[k].stream);
        sp__pf_put_track(w, keys[k].uuid, devices + keys[k].device, name, -1);
    }
    w->next_uuid = devices + (uint64_t)max_device + 1;
}

static void put_streams(pw *w, const stream_key *keys, size_t n, uint32_t first_seq)
{
    for (size_t k = 0; k < n; k++) {
        int64_t t0 = w->r->span_start_ns;
        for (size_t d = 0; d < w->r->device_count; d++) {
            const sp__device_rec *rec = &w->r->devices[d];
            if (rec->device == keys[k].device && rec->stream == keys[k].stream && rec->start_ns < t0)
                t0 = rec->start_ns;
        }
        sp__pf_begin_sequence(w, first_seq + (uint32_t)k, t0, keys[k].uuid);
        w->lane_base = keys[k].uuid;
        w->stream = keys[k].stream;
        for (size_t d = 0; d < w->r->device_count; d++) {
            const sp__device_rec *rec = &w->r->devices[d];
            if (rec->device == keys[k].device && rec->stream == keys[k].stream) {
                put_device_rec(w, rec, d);
                sp__out_maybe_flush(w->out);
            }
        }
        sp__pf_flush_ends(w, INT64_MAX);
        sp__out_maybe_flush(w->out);
    }
}

/* ---- the file ---- */

static void put_descriptors(pw *w)
{
    const sp_result *r = w->r;
    sp__buf d, sub, body;
    sp__buf_init(&d);
    sp__buf_init(&sub);
    sp__buf_init(&body);
    /* the first packet: PF_FIRST_PACKET_BODY, then the process */
    sp__pb_put_uint(&body, PF_PACKET_SEQUENCE_ID, 1);
    sp__pb_put_uint(&body, PF_PACKET_SEQUENCE_FLAGS, PF_SEQ_INCREMENTAL_STATE_CLEARED);
    sp__pb_put_uint(&sub, PF_PROCESS_PID, (uint64_t)r->meta.pid);
    sp__pb_put_str(&sub, PF_PROCESS_NAME, r->meta.process_name);
    sp__pb_put_uint(&d, PF_TRACK_UUID, PF_PROC_UUID);
    sp__pb_put_bytes(&d, PF_TRACK_PROCESS, sub.data, sub.len);
    sp__pb_put_bytes(&body, PF_PACKET_TRACK_DESCRIPTOR, d.data, d.len);
    sp__pb_put_bytes(w->b, PF_TRACE_PACKET, body.data, body.len);
    for (size_t i = 0; i < r->thread_count; i++) {
        const sp__thread *t = &r->threads[i];
        d.len = sub.len = body.len = 0;
        sp__pb_put_uint(&sub, PF_THREAD_PID, (uint64_t)r->meta.pid);
        sp__pb_put_uint(&sub, PF_THREAD_TID, t->tid);
        sp__pb_put_str(&sub, PF_THREAD_NAME, sp__result_name(r, t->name));
        sp__pb_put_uint(&d, PF_TRACK_UUID, PF_THREAD_UUID(i));
        sp__pb_put_uint(&d, PF_TRACK_PARENT, PF_PROC_UUID);
        sp__pb_put_bytes(&d, PF_TRACK_THREAD, sub.data, sub.len);
        sp__pb_put_bytes(&body, PF_PACKET_TRACK_DESCRIPTOR, d.data, d.len);
        sp__pf_put_packet(w, -1, &body);
    }
    if (d.failed || sub.failed || body.failed) w->failed = 1;
    sp__buf_fini(&d);
    sp__buf_fini(&sub);
    sp__buf_fini(&body);
}

static void pw_fini(pw *w)
{
    sp__buf_fini(&w->te);
    sp__buf_fini(&w->interned);
    sp__buf_fini(&w->ann);
    sp__free(w->name_iid);
    sp__free(w->used);
    sp__free(w->heap);
    for (size_t k = 0; k < 2 * PF_LANES; k++) sp__free(w->lanes[k].ends);
    sp__free(w->places);
    sp__free(w->counters);
}

/* Per thread, which runtime calls a device record points back at. */
static uint8_t **launched_calls(pw *w)
{
    const sp_result *r = w->r;
    uint8_t **l = sp__alloc(sizeof *l * (r->thread_count ? r->thread_count : 1));
    if (!l) return NULL;
    for (size_t d = 0; d < r->device_count; d++) {
        const sp__device_rec *rec = &r->devices[d];
        if (rec->thread < 0 || (size_t)rec->thread >= r->thread_count) continue;
        const sp__thread *t = &r->threads[rec->thread];
        if (rec->runtime < 0 || (size_t)rec->runtime >= t->runtime_count) continue;
        if (!l[rec->thread] && !(l[rec->thread] = sp__alloc(t->runtime_count))) {
            w->failed = 1;
            continue;
        }
        l[rec->thread][rec->runtime] = 1;
    }
    return l;
}

sp_status sp__export_perfetto(const sp_result *r, const char *path)
{
    if (!r) return sp__fail(SP_ENODATA, "export: no result to write");
    pw w;
    memset(&w, 0, sizeof w);
    w.r = r;
    sp_status s = sp__out_open(&w.out, path, 0);
    if (s != SP_OK) return s;
    w.b = sp__out_buf(w.out);
    sp__buf_init(&w.te);
    sp__buf_init(&w.interned);
    sp__buf_init(&w.ann);
    w.name_iid = sp__alloc(sizeof *w.name_iid * (SPELLINGS * (size_t)r->names.count + 1));
    w.next_uuid = (uint64_t)1 << 40;
    uint8_t **launched = w.name_iid ? launched_calls(&w) : NULL;
    size_t nkeys = 0;
    stream_key *keys = launched ? stream_keys(&w, &nkeys) : NULL;
    if (!w.name_iid || !launched) w.failed = 1;
    if (!w.failed) {
        w.seq = 1;
        put_descriptors(&w);
        put_gpu_tracks(&w, keys, nkeys);
        sp__perfetto_put_metadata(w.b, r, PF_PROC_UUID);
        for (size_t i = 0; i < r->thread_count; i++) put_thread(&w, i, launched[i]);
        put_streams(&w, keys, nkeys, (uint32_t)(2 + r->thread_count));
    }
    if (launched)
        for (size_t i = 0; i < r->thread_count; i++) sp__free(launched[i]);
    sp__free(launched);
    sp__free(keys);
    int failed = w.failed || w.te.failed || w.interned.failed || w.ann.failed;
    pw_fini(&w);
    if (failed) {
        sp__out_abort(w.out);
        return sp__fail(SP_ENOMEM, "export: out of memory writing %s", path);
    }
    return sp__out_commit(w.out);
}
