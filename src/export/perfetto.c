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
#include "export.h"
#include "pb_wire.h"
#include "perfetto.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lanes per thread for ranges, then for runtime calls; a range that fits
 * in no lane goes to the last, where it may close the wrong slice in a
 * viewer (the times written stay its own). */
#define LANES 8
#define PROC_UUID 1
#define THREAD_UUID(i) (((uint64_t)(i) + 1) << 5)
#define LANE_UUID(i, lane) (THREAD_UUID(i) | (uint64_t)(lane))

static const char *const annotation_names[] = {
#define PF__ANN_TEXT(id, text) text,
    PF_ANNOTATION_LIST(PF__ANN_TEXT)
#undef PF__ANN_TEXT
};

/* A range whose end is still to be written. */
typedef struct pending {
    int64_t end_ns;
    uint64_t order; /* later begins end first at equal times */
    uint64_t track; /* 0: the sequence's default track */
} pending;

typedef struct lane {
    int64_t *ends; /* the open ranges' ends, innermost last */
    size_t count, cap;
} lane;

typedef struct place_tracks {
    uint32_t place;
    uint64_t uuid; /* allocated; uuid + 1: reserved */
} place_tracks;

typedef struct counter_track {
    uint32_t name;
    uint64_t uuid;
} counter_track;

typedef struct pw {
    const sp_result *r;
    sp__out *out;
    sp__buf *b;
    sp__buf te;       /* the TrackEvent being built */
    sp__buf interned; /* InternedData to send with the next event packet */
    sp__buf ann;      /* one debug annotation being built */
    uint32_t seq;
    int64_t last_ns;
    uint64_t order;
    /* interning, per sequence: iid per (name id, spelling) and per category */
    uint32_t *name_iid; /* SPELLINGS * names.count, 0: not interned yet */
    uint32_t *used;     /* the name_iid slots set in this sequence */
    size_t used_count, used_cap;
    uint32_t next_iid, next_str_iid;
    struct display {
        uint32_t key, iid;
    } display[64];
    size_t display_count;
    uint32_t cat_iid[SP_EVENT_TYPE_COUNT + 2];
    uint8_t ann_done[PF_A_COUNT];
    uint32_t fixed_iid[2]; /* "[memory]", "[reserved memory]" */
    pending *heap;
    size_t heap_count, heap_cap;
    lane lanes[2 * LANES];
    place_tracks *places;
    size_t place_count;
    counter_track *counters; /* this thread's */
    size_t counter_count;
    uint64_t next_uuid;
    uint64_t lane_base; /* the GPU stream being written: its lanes are lane_base + lane */
    uint32_t stream;    /* and its number */
    uint32_t described; /* bit per lane of this sequence's track described so far */
    int failed; /* out of memory */
} pw;

static void *grow(pw *w, void *p, size_t *cap, size_t size)
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
static void put_packet(pw *w, int64_t ts, const sp__buf *body_extra)
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
static void put_small_packet(pw *w, int64_t ts, const uint8_t *te, size_t te_len)
{
    if (w->interned.len || te_len >= 128) {
        sp__buf_append(&w->te, te, te_len);
        put_packet(w, ts, NULL);
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

/* The spellings of a recorded name in the file: the JSON's (trace-format.md
 * §6 and §7), so Perfetto shows what torch's traces show. */
enum {
    AS_RECORDED,    /* most names */
    AS_STEP,        /* ProfileStep#N -> ProfilerStep#N */
    AS_DATALOADER,  /* X -> enumerate(DataLoader)#X.__next__ */
    AS_RESERVED,    /* a step's name taken by another type: "user:" before it */
    AS_RUNTIME,     /* a runtime call without its _vNNNN suffix */
    AS_ANNOTATION,  /* as recorded, as an interned annotation string */
    SPELLINGS
};

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
static size_t runtime_len(const char *name)
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
               name, how == AS_RUNTIME ? runtime_len(name) : strlen(name));
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
            uint32_t *u = grow(w, w->used, &w->used_cap, sizeof *u);
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
static inline uint32_t name_iid(pw *w, uint32_t id, uint8_t type)
{
    int cls = class_of(type);
    uint32_t cached = id < w->r->names.count ? w->name_iid[(size_t)cls * w->r->names.count + id] : 0;
    if (cached) return cached;
    return spelled_iid(w, id, cls, spelling(type, sp__result_name(w->r, id)));
}

/* The iid of a name that is no recorded name (a copy's or a memset's, as
 * the JSON gives it), from a small per-sequence cache under key. */
static uint32_t display_iid(pw *w, uint32_t key, const char *text)
{
    for (size_t k = 0; k < w->display_count; k++)
        if (w->display[k].key == key) return w->display[k].iid;
    uint32_t iid = w->next_iid++;
    intern(w, PF_INTERNED_NAMES, iid, text, strlen(text));
    if (w->display_count < sizeof w->display / sizeof *w->display)
        w->display[w->display_count++] = (struct display){key, iid};
    return iid;
}

static uint32_t fixed_name_iid(pw *w, int reserved)
{
    if (!w->fixed_iid[reserved]) {
        w->fixed_iid[reserved] = w->next_iid++;
        const char *n = reserved ? PF_NAME_RESERVED : PF_NAME_MEMORY;
        intern(w, PF_INTERNED_NAMES, w->fixed_iid[reserved], n, strlen(n));
    }
    return w->fixed_iid[reserved];
}

/* Category iid: an event type's name, or memory (SP_EVENT_TYPE_COUNT). */
static inline uint32_t cat_iid(pw *w, unsigned type)
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

static void put_ann_uint(pw *w, pf_annotation a, uint64_t v)
{
    ann_name(w, a);
    uint8_t m[2 * (SP__PB_VARINT_MAX + 1)];
    uint8_t *p = sp__pb_uint_at(m, PF_ANN_NAME_IID, (uint64_t)a + 1);
    p = sp__pb_uint_at(p, PF_ANN_UINT, v);
    sp__pb_put_bytes(&w->te, PF_TE_DEBUG_ANNOTATIONS, m, (size_t)(p - m));
}

static void put_ann_int(pw *w, pf_annotation a, int64_t v)
{
    ann_name(w, a);
    uint8_t m[2 * (SP__PB_VARINT_MAX + 1)];
    uint8_t *p = sp__pb_uint_at(m, PF_ANN_NAME_IID, (uint64_t)a + 1);
    p = sp__pb_uint_at(p, PF_ANN_INT, (uint64_t)v);
    sp__pb_put_bytes(&w->te, PF_TE_DEBUG_ANNOTATIONS, m, (size_t)(p - m));
}

static void put_ann_double(pw *w, pf_annotation a, double v)
{
    ann_name(w, a);
    uint8_t m[SP__PB_VARINT_MAX + 12];
    uint8_t *p = sp__pb_uint_at(m, PF_ANN_NAME_IID, (uint64_t)a + 1);
    p = sp__pb_double_at(p, PF_ANN_DOUBLE, v);
    sp__pb_put_bytes(&w->te, PF_TE_DEBUG_ANNOTATIONS, m, (size_t)(p - m));
}

static void put_ann_str(pw *w, pf_annotation a, const char *s)
{
    ann_name(w, a);
    sp__buf *m = &w->ann;
    m->len = 0;
    sp__pb_put_uint(m, PF_ANN_NAME_IID, (uint64_t)a + 1);
    sp__pb_put_str(m, PF_ANN_STRING, s);
    sp__pb_put_bytes(&w->te, PF_TE_DEBUG_ANNOTATIONS, m->data, m->len);
}

/* The recorded name as an annotation, when the name shown differs. */
static void put_ann_recorded(pw *w, uint32_t id)
{
    ann_name(w, PF_A_RECORDED);
    uint32_t iid = spelled_iid(w, id, AS_ANNOTATION, AS_ANNOTATION);
    uint8_t m[2 * (SP__PB_VARINT_MAX + 2)];
    uint8_t *p = sp__pb_uint_at(m, PF_ANN_NAME_IID, (uint64_t)PF_A_RECORDED + 1);
    p = sp__pb_uint_at(p, PF_ANN_STRING_IID, iid);
    sp__pb_put_bytes(&w->te, PF_TE_DEBUG_ANNOTATIONS, m, (size_t)(p - m));
}

/* The TrackEvent head: type, then name and category unless 0. */
static void te_head(pw *w, unsigned type, uint32_t name, uint32_t cat, uint64_t track)
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

static void heap_push(pw *w, int64_t end_ns, uint64_t track)
{
    if (w->heap_count == w->heap_cap) {
        pending *h = grow(w, w->heap, &w->heap_cap, sizeof *h);
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
static void flush_ends(pw *w, int64_t t)
{
    while (w->heap_count && w->heap[0].end_ns <= t) {
        pending p = heap_pop(w);
        uint8_t te[2 + 1 + SP__PB_VARINT_MAX], *q = te;
        q = sp__pb_uint_at(q, PF_TE_TYPE, PF_TYPE_SLICE_END);
        if (p.track) q = sp__pb_uint_at(q, PF_TE_TRACK_UUID, p.track);
        put_small_packet(w, p.end_ns, te, (size_t)(q - te));
    }
}

/* The lane (from first) where [start, end] nests in the open ranges. */
static unsigned pick_lane(pw *w, unsigned first, int64_t start, int64_t end)
{
    for (unsigned k = first; k < first + LANES; k++) {
        lane *l = &w->lanes[k];
        while (l->count && l->ends[l->count - 1] <= start) l->count--;
        if (k + 1 < first + LANES && l->count && l->ends[l->count - 1] < end) continue;
        if (l->count == l->cap) {
            int64_t *e = grow(w, l->ends, &l->cap, sizeof *e);
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
static void begin_sequence(pw *w, uint32_t seq, int64_t t0, uint64_t track)
{
    for (size_t i = 0; i < w->used_count; i++) w->name_iid[w->used[i]] = 0;
    w->used_count = 0;
    w->next_iid = 1;
    w->next_str_iid = 1;
    w->display_count = 0;
    memset(w->cat_iid, 0, sizeof w->cat_iid);
    memset(w->ann_done, 0, sizeof w->ann_done);
    memset(w->fixed_iid, 0, sizeof w->fixed_iid);
    for (size_t k = 0; k < 2 * LANES; k++) w->lanes[k].count = 0;
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
    put_packet(w, -1, &body);
    sp__buf_fini(&body);
    sp__buf_fini(&clock);
    sp__buf_fini(&m);
}

/* A packet holding one track descriptor, on the current sequence. */
static void put_track(pw *w, uint64_t uuid, uint64_t parent, const char *name, int counter_bytes)
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
    put_packet(w, -1, &body);
    sp__buf_fini(&d);
    sp__buf_fini(&body);
}

/* Lane k (not 0) of thread i, or of the GPU stream being written when i
 * is SIZE_MAX, described on first use: most traces need none, and empty
 * tracks would clutter a viewer. Returns its uuid. */
static uint64_t lane_track(pw *w, size_t i, unsigned k)
{
    uint64_t uuid = i == SIZE_MAX ? w->lane_base + k : LANE_UUID(i, k);
    if (!(w->described & (1u << k))) {
        w->described |= 1u << k;
        char name[64];
        if (i == SIZE_MAX)
            snprintf(name, sizeof name, "stream %u (overlapping %u)", w->stream, k);
        else if (k < LANES)
            snprintf(name, sizeof name, "overlapping ranges %u", k);
        else
            snprintf(name, sizeof name, k == LANES ? "CUDA API" : "CUDA API (overlapping %u)", k - LANES);
        put_track(w, uuid, i == SIZE_MAX ? w->lane_base : THREAD_UUID(i), name, -1);
    }
    return uuid;
}

/* The counter track of name id on thread i, described on first use. */
static uint64_t counter_track_of(pw *w, size_t i, uint32_t name)
{
    for (size_t k = 0; k < w->counter_count; k++)
        if (w->counters[k].name == name) return w->counters[k].uuid;
    uint64_t uuid = w->next_uuid++;
    put_track(w, uuid, THREAD_UUID(i), sp__result_name(w->r, name), 0);
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
static uint64_t place_tracks_of(pw *w, uint32_t place)
{
    for (size_t k = 0; k < w->place_count; k++)
        if (w->places[k].place == place) return w->places[k].uuid;
    uint64_t uuid = w->next_uuid;
    w->next_uuid += 2;
    const char *name = sp__result_name(w->r, place);
    sp__buf n;
    sp__buf_init(&n);
    sp__buf_printf(&n, "%s allocated", name);
    put_track(w, uuid, PROC_UUID, sp__buf_cstr(&n), 1);
    n.len = 0;
    sp__buf_printf(&n, "%s reserved", name);
    put_track(w, uuid + 1, PROC_UUID, sp__buf_cstr(&n), 1);
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

static void put_host_event(pw *w, size_t i, const sp__event *e)
{
    flush_ends(w, e->start_ns);
    uint32_t cat = cat_iid(w, e->type);
    if (e->flags & SP_EVENT_FLAG_COUNTER) {
        uint64_t track = counter_track_of(w, i, e->name);
        te_head(w, PF_TYPE_COUNTER, 0, cat, track);
        sp__pb_put_double(&w->te, PF_TE_DOUBLE_COUNTER_VALUE, e->value);
        put_packet(w, e->start_ns, NULL);
        return;
    }
    uint32_t name = name_iid(w, e->name, e->type);
    uint64_t track = 0;
    if (!(e->flags & SP_EVENT_FLAG_INSTANT)) {
        unsigned k = pick_lane(w, 0, e->start_ns, e->end_ns);
        if (k) track = lane_track(w, i, k);
        heap_push(w, e->end_ns, track);
    }
    unsigned type = e->flags & SP_EVENT_FLAG_INSTANT ? PF_TYPE_INSTANT : PF_TYPE_SLICE_BEGIN;
    if (!(e->flags & (SP_EVENT_FLAG_SAMPLES | PF_KEPT_FLAGS))) {
        uint8_t te[4 * (SP__PB_VARINT_MAX + 2)], *q = te;
        q = sp__pb_uint_at(q, PF_TE_TYPE, type);
        q = sp__pb_uint_at(q, PF_TE_NAME_IID, name);
        q = sp__pb_uint_at(q, PF_TE_CATEGORY_IIDS, cat);
        if (track) q = sp__pb_uint_at(q, PF_TE_TRACK_UUID, track);
        put_small_packet(w, e->start_ns, te, (size_t)(q - te));
        return;
    }
    te_head(w, type, name, cat, track);
    if (e->flags & SP_EVENT_FLAG_SAMPLES) put_ann_double(w, PF_A_NUM_SAMPLES, e->value);
    if (e->flags & PF_KEPT_FLAGS) put_ann_uint(w, PF_A_FLAGS, e->flags & PF_KEPT_FLAGS);
    put_packet(w, e->start_ns, NULL);
}

/* A runtime call on its thread's lanes for calls; launched says whether a
 * device record points back at it (its correlation is then a flow id). */
static void put_runtime(pw *w, size_t i, const sp__runtime *rt, int launched)
{
    flush_ends(w, rt->start_ns);
    unsigned k = pick_lane(w, LANES, rt->start_ns, rt->end_ns);
    uint64_t track = lane_track(w, i, k);
    te_head(w, PF_TYPE_SLICE_BEGIN, name_iid(w, rt->name, SP_EVENT_CUDA_RUNTIME),
            cat_iid(w, SP_EVENT_CUDA_RUNTIME), track);
    put_ann_uint(w, PF_A_CORRELATION, rt->correlation);
    put_ann_uint(w, PF_A_CBID, rt->cbid);
    if (rt->driver) put_ann_uint(w, PF_A_DRIVER, 1);
    const char *name = sp__result_name(w->r, rt->name);
    if (runtime_len(name) != strlen(name)) put_ann_recorded(w, rt->name);
    if (launched) sp__pb_put_fixed64(&w->te, PF_TE_FLOW_IDS, rt->correlation + 1ull);
    put_packet(w, rt->start_ns, NULL);
    heap_push(w, rt->end_ns, track);
}

static void put_mem(pw *w, const sp__mem_event *m)
{
    flush_ends(w, m->ts_ns);
    int reserved = m->type == SP_MEM_RESERVED_ALLOCATE || m->type == SP_MEM_RESERVED_FREE;
    uint64_t tracks = place_tracks_of(w, m->place);
    te_head(w, PF_TYPE_INSTANT, fixed_name_iid(w, reserved), cat_iid(w, SP_EVENT_TYPE_COUNT), 0);
    put_ann_uint(w, PF_A_ADDR, m->addr);
    put_ann_int(w, PF_A_MEM_BYTES, m->bytes);
    put_ann_str(w, PF_A_PLACE, sp__result_name(w->r, m->place));
    put_ann_uint(w, PF_A_MEM_TYPE, m->type);
    put_ann_uint(w, PF_A_PEAK_ALLOCATED, m->peak_allocated);
    put_ann_uint(w, PF_A_PEAK_RESERVED, m->peak_reserved);
    sp__pb_put_uint(&w->te, PF_TE_EXTRA_COUNTER_TRACKS, tracks);
    sp__pb_put_uint(&w->te, PF_TE_EXTRA_COUNTER_TRACKS, tracks + 1);
    sp__pb_put_uint(&w->te, PF_TE_EXTRA_COUNTER_VALUES, m->current_allocated);
    sp__pb_put_uint(&w->te, PF_TE_EXTRA_COUNTER_VALUES, m->current_reserved);
    put_packet(w, m->ts_ns, NULL);
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
    begin_sequence(w, (uint32_t)(2 + i), t0, THREAD_UUID(i));
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
    flush_ends(w, INT64_MAX);
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
    flush_ends(w, d->start_ns);
    unsigned k = pick_lane(w, 0, d->start_ns, d->end_ns);
    uint64_t track = k ? lane_track(w, SIZE_MAX, k) : 0;
    int recorded_differs = 0;
    uint32_t name;
    if (d->type == SP_EVENT_KERNEL) {
        name = name_iid(w, d->name, d->type);
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
        name = display_iid(w, key, text);
        recorded_differs = strcmp(recorded, sp__result_name(w->r, d->name)) != 0;
    }
    te_head(w, PF_TYPE_SLICE_BEGIN, name, cat_iid(w, d->type), track);
    if (recorded_differs) put_ann_recorded(w, d->name);
    put_ann_uint(w, PF_A_CORRELATION, d->correlation);
    put_ann_uint(w, PF_A_DEVICE, d->device);
    put_ann_uint(w, PF_A_CONTEXT, d->context);
    put_ann_uint(w, PF_A_STREAM, d->stream);
    put_ann_uint(w, PF_A_INDEX, index);
    if (d->type == SP_EVENT_KERNEL) {
        const sp__kernel_detail *kd = &d->detail.kernel;
        char text[64];
        snprintf(text, sizeof text, "%u,%u,%u", kd->grid[0], kd->grid[1], kd->grid[2]);
        put_ann_str(w, PF_A_GRID, text);
        snprintf(text, sizeof text, "%u,%u,%u", kd->block[0], kd->block[1], kd->block[2]);
        put_ann_str(w, PF_A_BLOCK, text);
        put_ann_uint(w, PF_A_REGISTERS, kd->registers);
        put_ann_uint(w, PF_A_STATIC_SHARED, kd->static_shared);
        put_ann_uint(w, PF_A_DYNAMIC_SHARED, kd->dynamic_shared);
        put_ann_uint(w, PF_A_LOCAL_PER_THREAD, kd->local_per_thread);
        put_ann_uint(w, PF_A_LOCAL_TOTAL, kd->local_total);
        if (kd->queued_ns) put_ann_uint(w, PF_A_QUEUED, kd->queued_ns);
        if (kd->submitted_ns) put_ann_uint(w, PF_A_SUBMITTED, kd->submitted_ns);
    } else if (d->type == SP_EVENT_MEMCPY) {
        put_ann_uint(w, PF_A_BYTES, d->bytes);
        put_ann_uint(w, PF_A_COPY_KIND, d->detail.copy.copy_kind);
        put_ann_uint(w, PF_A_SRC_KIND, d->detail.copy.src_kind);
        put_ann_uint(w, PF_A_DST_KIND, d->detail.copy.dst_kind);
    } else {
        put_ann_uint(w, PF_A_BYTES, d->bytes);
        put_ann_uint(w, PF_A_MEMORY_KIND, d->detail.set.memory_kind);
        put_ann_uint(w, PF_A_VALUE, d->detail.set.value);
    }
    if (d->thread >= 0) sp__pb_put_fixed64(&w->te, PF_TE_TERMINATING_FLOW_IDS, d->correlation + 1ull);
    put_packet(w, d->start_ns, NULL);
    heap_push(w, d->end_ns, track);
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
            stream_key *g = grow(w, keys, &cap, sizeof *g);
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
 * Stream k is base + k * LANES, its lanes follow it; device d is
 * base + n * LANES + d. */
static void put_gpu_tracks(pw *w, stream_key *keys, size_t n)
{
    char name[64];
    uint64_t base = w->next_uuid, devices = base + (uint64_t)n * LANES;
    uint32_t max_device = 0;
    for (size_t k = 0; k < n; k++) {
        size_t first = 0;
        while (first < k && keys[first].device != keys[k].device) first++;
        if (first == k) {
            snprintf(name, sizeof name, "GPU %u", keys[k].device);
            put_track(w, devices + keys[k].device, 0, name, -1);
        }
        if (keys[k].device > max_device) max_device = keys[k].device;
        keys[k].uuid = base + (uint64_t)k * LANES;
        snprintf(name, sizeof name, "stream %u", keys[k].stream);
        put_track(w, keys[k].uuid, devices + keys[k].device, name, -1);
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
        begin_sequence(w, first_seq + (uint32_t)k, t0, keys[k].uuid);
        w->lane_base = keys[k].uuid;
        w->stream = keys[k].stream;
        for (size_t d = 0; d < w->r->device_count; d++) {
            const sp__device_rec *rec = &w->r->devices[d];
            if (rec->device == keys[k].device && rec->stream == keys[k].stream) {
                put_device_rec(w, rec, d);
                sp__out_maybe_flush(w->out);
            }
        }
        flush_ends(w, INT64_MAX);
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
    sp__pb_put_uint(&d, PF_TRACK_UUID, PROC_UUID);
    sp__pb_put_bytes(&d, PF_TRACK_PROCESS, sub.data, sub.len);
    sp__pb_put_bytes(&body, PF_PACKET_TRACK_DESCRIPTOR, d.data, d.len);
    sp__pb_put_bytes(w->b, PF_TRACE_PACKET, body.data, body.len);
    for (size_t i = 0; i < r->thread_count; i++) {
        const sp__thread *t = &r->threads[i];
        d.len = sub.len = body.len = 0;
        sp__pb_put_uint(&sub, PF_THREAD_PID, (uint64_t)r->meta.pid);
        sp__pb_put_uint(&sub, PF_THREAD_TID, t->tid);
        sp__pb_put_str(&sub, PF_THREAD_NAME, sp__result_name(r, t->name));
        sp__pb_put_uint(&d, PF_TRACK_UUID, THREAD_UUID(i));
        sp__pb_put_uint(&d, PF_TRACK_PARENT, PROC_UUID);
        sp__pb_put_bytes(&d, PF_TRACK_THREAD, sub.data, sub.len);
        sp__pb_put_bytes(&body, PF_PACKET_TRACK_DESCRIPTOR, d.data, d.len);
        put_packet(w, -1, &body);
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
    for (size_t k = 0; k < 2 * LANES; k++) sp__free(w->lanes[k].ends);
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
        sp__perfetto_put_metadata(w.b, r, PROC_UUID);
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
