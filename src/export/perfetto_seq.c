/* perfetto_seq.c: how the .pftrace writer (perfetto.c) puts bytes out:
 * packets on the current sequence (the common ones written straight into
 * the output), names, categories and annotation names interned once per
 * sequence, debug annotations, the heap of ends still to write, the lanes
 * that keep a track's slices nested, and the descriptors of tracks
 * described on first use. A sequence's timestamps never go back: every
 * packet is written at or after the one before it. */
#include "perfetto_seq.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const annotation_names[] = {
#define PF__ANN_TEXT(id, text) text,
    PF_ANNOTATION_LIST(PF__ANN_TEXT)
#undef PF__ANN_TEXT
};

void *sp__pf_grow(pw *w, void *p, size_t *cap, size_t size)
{
    size_t n = *cap ? *cap * 2 : 16;
    void *q = sp__realloc(p, n * size);
    if (!q) {
        w->failed = 1;
        return NULL;
    }
    *cap = n;
    return q;
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Appends field 1 of the Trace holding the packet body (te and interned
 * are fields of it when given). ts < 0: no timestamp. */
void sp__pf_put_packet(pw *w, int64_t ts, const sp__buf *body_extra)
{
    uint64_t delta = 0;
    if (ts >= 0) {
        if (ts < w->last_ns) ts = w->last_ns; /* never, by construction; a delta is unsigned */
        delta = (uint64_t)(ts - w->last_ns);
        w->last_ns = ts;
    }
    size_t te_len = w->te.len, in_len = w->interned.len, extra = body_extra ? body_extra->len : 0;
    size_t body = 1 + varint_len(w->seq) + extra;
    if (ts >= 0) body += 1 + varint_len(delta);
    if (te_len) body += 1 + varint_len(te_len) + te_len;
    if (in_len) body += 1 + varint_len(in_len) + in_len;
    if (sp__buf_reserve(w->b, body + 1 + SP__PB_VARINT_MAX) != 0) return;
    uint8_t *p = (uint8_t *)w->b->data + w->b->len;
    *p++ = (PF_TRACE_PACKET << 3) | SP__PB_LEN;
    p = sp__pb_varint_at(p, body);
    if (ts >= 0) p = sp__pb_uint_at(p, PF_PACKET_TIMESTAMP, delta);
    p = sp__pb_uint_at(p, PF_PACKET_SEQUENCE_ID, w->seq);
    if (in_len) p = sp__pb_bytes_at(p, PF_PACKET_INTERNED_DATA, w->interned.data, in_len);
    if (te_len) p = sp__pb_bytes_at(p, PF_PACKET_TRACK_EVENT, w->te.data, te_len);
    if (extra) {
        memcpy(p, body_extra->data, extra);
        p += extra;
    }
    w->b->len = (size_t)((char *)p - w->b->data);
    w->te.len = 0;
    w->interned.len = 0;
}

/* The common packet, a TrackEvent of under 128 bytes (te) with nothing
 * interned, written straight into the output: most events are two of
 * these, so they skip the general path's buffers. */
void sp__pf_put_small_packet(pw *w, int64_t ts, const uint8_t *te, size_t te_len)
{
    if (w->interned.len || te_len >= 128) {
        sp__buf_append(&w->te, te, te_len);
        sp__pf_put_packet(w, ts, NULL);
        return;
    }
    if (ts < w->last_ns) ts = w->last_ns;
    uint64_t delta = (uint64_t)(ts - w->last_ns);
    w->last_ns = ts;
    sp__buf *b = w->b;
    if (b->cap - b->len < 64 + te_len && sp__buf_reserve(b, 64 + te_len) != 0) return;
    uint8_t *start = (uint8_t *)b->data + b->len, *p = start + 2; /* the length fits a byte */
    p = sp__pb_uint_at(p, PF_PACKET_TIMESTAMP, delta);
    p = sp__pb_uint_at(p, PF_PACKET_SEQUENCE_ID, w->seq);
    *p++ = (PF_PACKET_TRACK_EVENT << 3) | SP__PB_LEN;
    *p++ = (uint8_t)te_len;
    memcpy(p, te, te_len);
    p += te_len;
    size_t body = (size_t)(p - start) - 2;
    if (body >= 128) { /* a long delta: the length takes two bytes */
        memmove(start + 3, start + 2, body);
        start[1] = (uint8_t)(body | 0x80);
        start[2] = (uint8_t)(body >> 7);
        p++;
    } else {
        start[1] = (uint8_t)body;
    }
    start[0] = (PF_TRACE_PACKET << 3) | SP__PB_LEN;
    b->len = (size_t)((char *)p - b->data);
}

static void intern(pw *w, uint32_t field, uint32_t iid, const char *text, size_t len)
{
    sp__buf *m = &w->ann;
    m->len = 0;
    sp__pb_put_uint(m, PF_INTERNED_IID, iid);
    sp__pb_put_bytes(m, PF_INTERNED_NAME, text, len);
    sp__pb_put_bytes(&w->interned, field, m->data, m->len);
}

static int spelling(uint8_t type, const char *name)
{
    size_t len = strlen(name);
    if (type == SP_EVENT_CUDA_RUNTIME) return AS_RUNTIME;
    if (type == SP_EVENT_PROFILE_STEP) return strncmp(name, "ProfileStep#", 12) == 0 ? AS_STEP : AS_RECORDED;
    if (strncmp(name, "ProfilerStep", 12) == 0 || strncmp(name, "ProfileStep#", 12) == 0) return AS_RESERVED;
    if (type == SP_EVENT_DATALOADER &&
        !(strncmp(name, "enumerate(DataLoader)#", 22) == 0 && len >= 9 &&
          strcmp(name + len - 9, ".__next__") == 0))
        return AS_DATALOADER;
    return AS_RECORDED;
}

/* The length of a runtime call's name without its _vNNNN suffix. */
size_t sp__pf_runtime_len(const char *name)
{
    size_t n = strlen(name);
    const char *v = strrchr(name, '_');
    size_t digits = v && v[1] == 'v' ? strspn(v + 2, "0123456789") : 0;
    return digits && v[2 + digits] == '\0' ? (size_t)(v - name) : n;
}

static void intern_spelled(pw *w, uint32_t iid, int how, const char *name)
{
    if (how == AS_RECORDED || how == AS_RUNTIME || how == AS_ANNOTATION) {
        intern(w, how == AS_ANNOTATION ? PF_INTERNED_ANNOTATION_STRINGS : PF_INTERNED_NAMES, iid,
               name, how == AS_RUNTIME ? sp__pf_runtime_len(name) : strlen(name));
        return;
    }
    sp__buf s;
    sp__buf_init(&s);
    if (how == AS_STEP) {
        sp__buf_puts(&s, "ProfilerStep#");
        sp__buf_puts(&s, name + 12);
    } else if (how == AS_DATALOADER) {
        sp__buf_puts(&s, "enumerate(DataLoader)#");
        sp__buf_puts(&s, name);
        sp__buf_puts(&s, ".__next__");
    } else {
        sp__buf_puts(&s, "user:");
        sp__buf_puts(&s, name);
    }
    if (s.failed) w->failed = 1;
    intern(w, PF_INTERNED_NAMES, iid, s.data ? s.data : "", s.len);
    sp__buf_fini(&s);
}

/* The iid of name id under cache slot class cls (its spelling, how,
 * depends only on the name for a class), interned on first use in the
 * sequence. */
static uint32_t spelled_iid(pw *w, uint32_t id, int cls, int how)
{
    size_t slot = (size_t)cls * w->r->names.count + id;
    if (id < w->r->names.count && w->name_iid[slot]) return w->name_iid[slot];
    uint32_t iid = how == AS_ANNOTATION ? w->next_str_iid++ : w->next_iid++;
    intern_spelled(w, iid, how, sp__result_name(w->r, id));
    if (id < w->r->names.count) {
        if (w->used_count == w->used_cap) {
            uint32_t *u = sp__pf_grow(w, w->used, &w->used_cap, sizeof *u);
            if (!u) return iid;
            w->used = u;
        }
        w->used[w->used_count++] = (uint32_t)slot;
        w->name_iid[slot] = iid;
    }
    return iid;
}

/* The cache slot class of an event type: the types whose names may be
 * spelled otherwise have their own. */
static int class_of(uint8_t type)
{
    switch (type) {
    case SP_EVENT_PROFILE_STEP:
        return AS_STEP;
    case SP_EVENT_DATALOADER:
        return AS_DATALOADER;
    case SP_EVENT_CUDA_RUNTIME:
        return AS_RUNTIME;
    default:
        return AS_RECORDED;
    }
}

/* The iid of name id for an event of this type. */
uint32_t sp__pf_name_iid(pw *w, uint32_t id, uint8_t type)
{
    int cls = class_of(type);
    uint32_t cached = id < w->r->names.count ? w->name_iid[(size_t)cls * w->r->names.count + id] : 0;
    if (cached) return cached;
    return spelled_iid(w, id, cls, spelling(type, sp__result_name(w->r, id)));
}

/* The iid of a name that is no recorded name (a copy's or a memset's, as
 * the JSON gives it), from a small per-sequence cache under key. */
uint32_t sp__pf_display_iid(pw *w, uint32_t key, const char *text)
{
    for (size_t k = 0; k < w->display_count; k++)
        if (w->display[k].key == key) return w->display[k].iid;
    uint32_t iid = w->next_iid++;
    intern(w, PF_INTERNED_NAMES, iid, text, strlen(text));
    if (w->display_count < sizeof w->display / sizeof *w->display)
        w->display[w->display_count++] = (struct display){key, iid};
    return iid;
}

uint32_t sp__pf_fixed_name_iid(pw *w, int reserved)
{
    if (!w->fixed_iid[reserved]) {
        w->fixed_iid[reserved] = w->next_iid++;
        const char *n = reserved ? PF_NAME_RESERVED : PF_NAME_MEMORY;
        intern(w, PF_INTERNED_NAMES, w->fixed_iid[reserved], n, strlen(n));
    }
    return w->fixed_iid[reserved];
}

/* Category iid: an event type's name, or memory (SP_EVENT_TYPE_COUNT). */
uint32_t sp__pf_cat_iid(pw *w, unsigned type)
{
    if (type > SP_EVENT_TYPE_COUNT) type = SP_EVENT_TYPE_COUNT;
    if (!w->cat_iid[type]) {
        w->cat_iid[type] = type + 1;
        const char *n = type == SP_EVENT_TYPE_COUNT ? PF_CATEGORY_MEMORY
                                                    : sp_event_type_name((sp_event_type)type);
        intern(w, PF_INTERNED_CATEGORIES, type + 1, n, strlen(n));
    }
    return w->cat_iid[type];
}

static void ann_name(pw *w, pf_annotation a)
{
    if (!w->ann_done[a]) {
        w->ann_done[a] = 1;
        intern(w, PF_INTERNED_ANNOTATION_NAMES, (uint32_t)a + 1, annotation_names[a],
               strlen(annotation_names[a]));
    }
}

void sp__pf_put_ann_uint(pw *w, pf_annotation a, uint64_t v)
{
    ann_name(w, a);
    uint8_t m[2 * (SP__PB_VARINT_MAX + 1)];
    uint8_t *p = sp__pb_uint_at(m, PF_ANN_NAME_IID, (uint64_t)a + 1);
    p = sp__pb_uint_at(p, PF_ANN_UINT, v);
    sp__pb_put_bytes(&w->te, PF_TE_DEBUG_ANNOTATIONS, m, (size_t)(p - m));
}

void sp__pf_put_ann_int(pw *w, pf_annotation a, int64_t v)
{
    ann_name(w, a);
    uint8_t m[2 * (SP__PB_VARINT_MAX + 1)];
    uint8_t *p = sp__pb_uint_at(m, PF_ANN_NAME_IID, (uint64_t)a + 1);
    p = sp__pb_uint_at(p, PF_ANN_INT, (uint64_t)v);
    sp__pb_put_bytes(&w->te, PF_TE_DEBUG_ANNOTATIONS, m, (size_t)(p - m));
}

void sp__pf_put_ann_double(pw *w, pf_annotation a, double v)
{
    ann_name(w, a);
    uint8_t m[SP__PB_VARINT_MAX + 12];
    uint8_t *p = sp__pb_uint_at(m, PF_ANN_NAME_IID, (uint64_t)a + 1);
    p = sp__pb_double_at(p, PF_ANN_DOUBLE, v);
    sp__pb_put_bytes(&w->te, PF_TE_DEBUG_ANNOTATIONS, m, (size_t)(p - m));
}

void sp__pf_put_ann_str(pw *w, pf_annotation a, const char *s)
{
    ann_name(w, a);
    sp__buf *m = &w->ann;
    m->len = 0;
    sp__pb_put_uint(m, PF_ANN_NAME_IID, (uint64_t)a + 1);
    sp__pb_put_str(m, PF_ANN_STRING, s);
    sp__pb_put_bytes(&w->te, PF_TE_DEBUG_ANNOTATIONS, m->data, m->len);
}

/* The recorded name as an annotation, when the name shown differs. */
void sp__pf_put_ann_recorded(pw *w, uint32_t id)
{
    ann_name(w, PF_A_RECORDED);
    uint32_t iid = spelled_iid(w, id, AS_ANNOTATION, AS_ANNOTATION);
    uint8_t m[2 * (SP__PB_VARINT_MAX + 2)];
    uint8_t *p = sp__pb_uint_at(m, PF_ANN_NAME_IID, (uint64_t)PF_A_RECORDED + 1);
    p = sp__pb_uint_at(p, PF_ANN_STRING_IID, iid);
    sp__pb_put_bytes(&w->te, PF_TE_DEBUG_ANNOTATIONS, m, (size_t)(p - m));
}

/* The TrackEvent head: type, then name and category unless 0. */
void sp__pf_te_head(pw *w, unsigned type, uint32_t name, uint32_t cat, uint64_t track)
{
    if (sp__buf_reserve(&w->te, 4 * (SP__PB_VARINT_MAX + 2)) != 0) return;
    uint8_t *p = (uint8_t *)w->te.data + w->te.len;
    p = sp__pb_uint_at(p, PF_TE_TYPE, type);
    if (name) p = sp__pb_uint_at(p, PF_TE_NAME_IID, name);
    if (cat) p = sp__pb_uint_at(p, PF_TE_CATEGORY_IIDS, cat);
    if (track) p = sp__pb_uint_at(p, PF_TE_TRACK_UUID, track);
    w->te.len = (size_t)((char *)p - w->te.data);
}

/* ---- pending ends: a binary min-heap on (end, -order) ---- */

static int before(const pending *a, const pending *b)
{
    return a->end_ns < b->end_ns || (a->end_ns == b->end_ns && a->order > b->order);
}

void sp__pf_heap_push(pw *w, int64_t end_ns, uint64_t track)
{
    if (w->heap_count == w->heap_cap) {
        pending *h = sp__pf_grow(w, w->heap, &w->heap_cap, sizeof *h);
        if (!h) return;
        w->heap = h;
    }
    size_t i = w->heap_count++;
    pending v = {end_ns, ++w->order, track};
    while (i > 0 && before(&v, &w->heap[(i - 1) / 2])) {
        w->heap[i] = w->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    w->heap[i] = v;
}

static pending heap_pop(pw *w)
{
    pending top = w->heap[0], v = w->heap[--w->heap_count];
    size_t i = 0, n = w->heap_count;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && before(&w->heap[c + 1], &w->heap[c])) c++;
        if (!before(&w->heap[c], &v)) break;
        w->heap[i] = w->heap[c];
        i = c;
    }
    if (n) w->heap[i] = v;
    return top;
}

/* Writes every end at or before t (all with t = INT64_MAX). */
void sp__pf_flush_ends(pw *w, int64_t t)
{
    while (w->heap_count && w->heap[0].end_ns <= t) {
        pending p = heap_pop(w);
        uint8_t te[2 + 1 + SP__PB_VARINT_MAX], *q = te;
        q = sp__pb_uint_at(q, PF_TE_TYPE, PF_TYPE_SLICE_END);
        if (p.track) q = sp__pb_uint_at(q, PF_TE_TRACK_UUID, p.track);
        sp__pf_put_small_packet(w, p.end_ns, te, (size_t)(q - te));
    }
}

/* The lane (from first) where [start, end] nests in the open ranges. */
unsigned sp__pf_pick_lane(pw *w, unsigned first, int64_t start, int64_t end)
{
    for (unsigned k = first; k < first + PF_LANES; k++) {
        lane *l = &w->lanes[k];
        while (l->count && l->ends[l->count - 1] <= start) l->count--;
        if (k + 1 < first + PF_LANES && l->count && l->ends[l->count - 1] < end) continue;
        if (l->count == l->cap) {
            int64_t *e = sp__pf_grow(w, l->ends, &l->cap, sizeof *e);
            if (!e) return k;
            l->ends = e;
        }
        l->ends[l->count++] = end;
        return k;
    }
    return first;
}

/* ---- sequences ---- */

/* Starts sequence seq: clears the incremental state, declares the
 * incremental clock from t0 and the default track. */
void sp__pf_begin_sequence(pw *w, uint32_t seq, int64_t t0, uint64_t track)
{
    for (size_t i = 0; i < w->used_count; i++) w->name_iid[w->used[i]] = 0;
    w->used_count = 0;
    w->next_iid = 1;
    w->next_str_iid = 1;
    w->display_count = 0;
    memset(w->cat_iid, 0, sizeof w->cat_iid);
    memset(w->ann_done, 0, sizeof w->ann_done);
    memset(w->fixed_iid, 0, sizeof w->fixed_iid);
    for (size_t k = 0; k < 2 * PF_LANES; k++) w->lanes[k].count = 0;
    w->described = 0;
    w->seq = seq;
    w->last_ns = t0 < 0 ? 0 : t0;
    sp__buf body, clock, m;
    sp__buf_init(&body);
    sp__buf_init(&clock);
    sp__buf_init(&m);
    sp__pb_put_uint(&body, PF_PACKET_SEQUENCE_FLAGS, PF_SEQ_INCREMENTAL_STATE_CLEARED);
    sp__pb_put_uint(&clock, PF_CLOCK_ID, PF_CLOCK_SEQUENCE);
    sp__pb_put_uint(&clock, PF_CLOCK_TIMESTAMP, (uint64_t)w->last_ns);
    sp__pb_put_uint(&clock, PF_CLOCK_INCREMENTAL, 1);
    sp__pb_put_bytes(&m, PF_SNAPSHOT_CLOCKS, clock.data, clock.len);
    clock.len = 0;
    sp__pb_put_uint(&clock, PF_CLOCK_ID, PF_CLOCK_BOOTTIME);
    sp__pb_put_uint(&clock, PF_CLOCK_TIMESTAMP, (uint64_t)w->last_ns);
    sp__pb_put_bytes(&m, PF_SNAPSHOT_CLOCKS, clock.data, clock.len);
    sp__pb_put_bytes(&body, PF_PACKET_CLOCK_SNAPSHOT, m.data, m.len);
    m.len = clock.len = 0;
    sp__pb_put_uint(&clock, PF_TE_DEFAULTS_TRACK_UUID, track);
    sp__pb_put_uint(&m, PF_DEFAULTS_CLOCK_ID, PF_CLOCK_SEQUENCE);
    sp__pb_put_bytes(&m, PF_DEFAULTS_TRACK_EVENT, clock.data, clock.len);
    sp__pb_put_bytes(&body, PF_PACKET_DEFAULTS, m.data, m.len);
    if (body.failed || clock.failed || m.failed) w->failed = 1;
    sp__pf_put_packet(w, -1, &body);
    sp__buf_fini(&body);
    sp__buf_fini(&clock);
    sp__buf_fini(&m);
}

/* A packet holding one track descriptor, on the current sequence. */
void sp__pf_put_track(pw *w, uint64_t uuid, uint64_t parent, const char *name, int counter_bytes)
{
    sp__buf d, body;
    sp__buf_init(&d);
    sp__buf_init(&body);
    sp__pb_put_uint(&d, PF_TRACK_UUID, uuid);
    if (parent) sp__pb_put_uint(&d, PF_TRACK_PARENT, parent);
    if (name) sp__pb_put_str(&d, PF_TRACK_NAME, name);
    if (counter_bytes >= 0) {
        uint8_t c[4], *p = c;
        if (counter_bytes) p = sp__pb_uint_at(p, PF_COUNTER_UNIT, PF_UNIT_SIZE_BYTES);
        sp__pb_put_bytes(&d, PF_TRACK_COUNTER, c, (size_t)(p - c));
    }
    sp__pb_put_bytes(&body, PF_PACKET_TRACK_DESCRIPTOR, d.data, d.len);
    if (d.failed || body.failed) w->failed = 1;
    sp__pf_put_packet(w, -1, &body);
    sp__buf_fini(&d);
    sp__buf_fini(&body);
}

/* Lane k (not 0) of thread i, or of the GPU stream being written when i
 * is SIZE_MAX, described on first use: most traces need none, and empty
 * tracks would clutter a viewer. Returns its uuid. */
uint64_t sp__pf_lane_track(pw *w, size_t i, unsigned k)
{
    uint64_t uuid = i == SIZE_MAX ? w->lane_base + k : PF_LANE_UUID(i, k);
    if (!(w->described & (1u << k))) {
        w->described |= 1u << k;
        char name[64];
        if (i == SIZE_MAX)
            snprintf(name, sizeof name, "stream %u (overlapping %u)", w->stream, k);
        else if (k < PF_LANES)
            snprintf(name, sizeof name, "overlapping ranges %u", k);
        else
            snprintf(name, sizeof name, k == PF_LANES ? "CUDA API" : "CUDA API (overlapping %u)", k - PF_LANES);
        sp__pf_put_track(w, uuid, i == SIZE_MAX ? w->lane_base : PF_THREAD_UUID(i), name, -1);
    }
    return uuid;
}

/* The counter track of name id on thread i, described on first use. */
uint64_t sp__pf_counter_track_of(pw *w, size_t i, uint32_t name)
{
    for (size_t k = 0; k < w->counter_count; k++)
        if (w->counters[k].name == name) return w->counters[k].uuid;
    uint64_t uuid = w->next_uuid++;
    sp__pf_put_track(w, uuid, PF_THREAD_UUID(i), sp__result_name(w->r, name), 0);
    counter_track *c = sp__realloc(w->counters, sizeof *c * (w->counter_count + 1));
    if (!c) {
        w->failed = 1;
        return uuid;
    }
    w->counters = c;
    w->counters[w->counter_count++] = (counter_track){name, uuid};
    return uuid;
}

/* The allocated and reserved counter tracks of a memory place. */
uint64_t sp__pf_place_tracks_of(pw *w, uint32_t place)
{
    for (size_t k = 0; k < w->place_count; k++)
        if (w->places[k].place == place) return w->places[k].uuid;
    uint64_t uuid = w->next_uuid;
    w->next_uuid += 2;
    const char *name = sp__result_name(w->r, place);
    sp__buf n;
    sp__buf_init(&n);
    sp__buf_printf(&n, "%s allocated", name);
    sp__pf_put_track(w, uuid, PF_PROC_UUID, sp__buf_cstr(&n), 1);
    n.len = 0;
    sp__buf_printf(&n, "%s reserved", name);
    sp__pf_put_track(w, uuid + 1, PF_PROC_UUID, sp__buf_cstr(&n), 1);
    if (n.failed) w->failed = 1;
    sp__buf_fini(&n);
    place_tracks *p = sp__realloc(w->places, sizeof *p * (w->place_count + 1));
    if (!p) {
        w->failed = 1;
        return uuid;
    }
    w->places = p;
    w->places[w->place_count++] = (place_tracks){place, uuid};
    return uuid;
}
