/* perfetto_seq.h: the machinery of the .pftrace writer (perfetto_seq.c)
 * that perfetto.c drives: packets, interning, debug annotations, pending
 * ends, lanes, sequences and track descriptors. Private to src/export. */
#ifndef SP_EXPORT_PERFETTO_SEQ_H
#define SP_EXPORT_PERFETTO_SEQ_H

#include "export.h"
#include "pb_wire.h"
#include "perfetto.h"

/* Lanes per thread for ranges, then for runtime calls; a range that fits
 * in no lane goes to the last, where it may close the wrong slice in a
 * viewer (the times written stay its own). */
#define PF_LANES 8
#define PF_PROC_UUID 1
#define PF_THREAD_UUID(i) (((uint64_t)(i) + 1) << 5)
#define PF_LANE_UUID(i, lane) (PF_THREAD_UUID(i) | (uint64_t)(lane))

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
    lane lanes[2 * PF_LANES];
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

void *sp__pf_grow(pw *w, void *p, size_t *cap, size_t size);

/* Appends field 1 of the Trace holding the packet body (te and interned
 * are fields of it when given). ts < 0: no timestamp. */
void sp__pf_put_packet(pw *w, int64_t ts, const sp__buf *body_extra);

/* The common packet, a TrackEvent of under 128 bytes (te) with nothing
 * interned, written straight into the output: most events are two of
 * these, so they skip the general path's buffers. */
void sp__pf_put_small_packet(pw *w, int64_t ts, const uint8_t *te, size_t te_len);

/* The iid of name id for an event of this type. */
uint32_t sp__pf_name_iid(pw *w, uint32_t id, uint8_t type);

/* The iid of a name that is no recorded name (a copy's or a memset's, as
 * the JSON gives it), from a small per-sequence cache under key. */
uint32_t sp__pf_display_iid(pw *w, uint32_t key, const char *text);

uint32_t sp__pf_fixed_name_iid(pw *w, int reserved);

/* Category iid: an event type's name, or memory (SP_EVENT_TYPE_COUNT). */
uint32_t sp__pf_cat_iid(pw *w, unsigned type);

void sp__pf_put_ann_uint(pw *w, pf_annotation a, uint64_t v);

void sp__pf_put_ann_int(pw *w, pf_annotation a, int64_t v);

void sp__pf_put_ann_double(pw *w, pf_annotation a, double v);

void sp__pf_put_ann_str(pw *w, pf_annotation a, const char *s);

/* The recorded name as an annotation, when the name shown differs. */
void sp__pf_put_ann_recorded(pw *w, uint32_t id);

/* The TrackEvent head: type, then name and category unless 0. */
void sp__pf_te_head(pw *w, unsigned type, uint32_t name, uint32_t cat, uint64_t track);

void sp__pf_heap_push(pw *w, int64_t end_ns, uint64_t track);

/* Writes every end at or before t (all with t = INT64_MAX). */
void sp__pf_flush_ends(pw *w, int64_t t);

/* The lane (from first) where [start, end] nests in the open ranges. */
unsigned sp__pf_pick_lane(pw *w, unsigned first, int64_t start, int64_t end);

/* Starts sequence seq: clears the incremental state, declares the
 * incremental clock from t0 and the default track. */
void sp__pf_begin_sequence(pw *w, uint32_t seq, int64_t t0, uint64_t track);

/* A packet holding one track descriptor, on the current sequence. */
void sp__pf_put_track(pw *w, uint64_t uuid, uint64_t parent, const char *name, int counter_bytes);

/* Lane k (not 0) of thread i, or of the GPU stream being written when i
 * is SIZE_MAX, described on first use: most traces need none, and empty
 * tracks would clutter a viewer. Returns its uuid. */
uint64_t sp__pf_lane_track(pw *w, size_t i, unsigned k);

/* The counter track of name id on thread i, described on first use. */
uint64_t sp__pf_counter_track_of(pw *w, size_t i, uint32_t name);

/* The allocated and reserved counter tracks of a memory place. */
uint64_t sp__pf_place_tracks_of(pw *w, uint32_t place);

/* The length of a runtime call's name without its _vNNNN suffix. */
size_t sp__pf_runtime_len(const char *name);

#endif
