/* load_pftrace.h: what the two halves of the .pftrace reader share: the
 * wire and sequence side (load_pftrace.c) and the side that turns closed
 * slices, memory instants and metadata events into the result
 * (load_pftrace_records.c). Private to src/load. */
#ifndef SP_LOAD_PFTRACE_H
#define SP_LOAD_PFTRACE_H

#include "load.h"
#include "pb_wire.h"
#include "perfetto.h"

/* A cursor over bytes [p, end). */
typedef struct cur {
    const uint8_t *p, *end;
} cur;

/* An interned table of one sequence: iid -> text, with a cached meaning
 * (the event type of a category, the annotation of a name). */
typedef struct entry {
    char *text;
    int meaning;
} entry;

typedef struct table {
    entry *e;
    size_t cap;
} table;

typedef struct seq {
    int used;
    int64_t last_ns;
    int incremental;
    uint64_t track;
    table names, cats, anns, strs;
} seq;

/* What a GPU record or runtime call carries beyond a host range. */
typedef struct gpu_args {
    uint64_t ann[PF_A_COUNT];
    uint64_t have; /* bit per annotation read */
    char grid[32], block[32];
} gpu_args;

/* An open slice: host ranges take this much, so a million nested ranges
 * stay small; GPU records and runtime calls keep their args on the
 * track's second stack (full set). */
typedef struct slice {
    int64_t start;
    uint32_t name;
    uint8_t type; /* sp_event_type */
    uint8_t flags;
    uint8_t full;
    double value;
} slice;

typedef struct track {
    uint64_t uuid, parent, tid;
    int is_thread;
    uint32_t name; /* in the result's names; counter tracks' */
    slice *open;
    size_t depth, cap;
    gpu_args *args; /* the open slices' with full set, innermost last */
    size_t args_depth, args_cap;
} track;

typedef struct loader {
    const char *path;
    sp__builder b;
    seq *seqs; /* by sequence id */
    track *tracks;
    size_t track_count, track_cap, last_track;
    int have_meta, have_counters;
    sp_status status;
} loader;

/* A TrackEvent's fields. */
typedef struct tevent {
    uint64_t type, track, name_iid;
    int has_track, has_name, has_cat;
    int cat; /* the category's meaning, -1 unknown */
    cur name, cat_text;
    double counter;
    uint64_t extra_values[2];
    size_t extra_count;
    gpu_args s; /* annotations land here */
    cur anns; /* the event's bytes, for metadata events' annotations */
} tevent;

/* The next field: its number, wire type, and value (a varint or fixed's
 * value in *v, a length-delimited field's bytes in *sub). */
int sp__pft_next_field(cur *c, uint32_t *field, unsigned *wire, uint64_t *v, cur *sub);

sp_status sp__pft_bad(loader *l, const char *what);

sp_status sp__pft_nomem(loader *l);

/* The thread a track belongs to (itself or an ancestor with a thread
 * descriptor); NULL for GPU and process tracks. */
track *sp__pft_thread_of(loader *l, track *t);

/* A closed slice becomes a host range, a runtime call or a device record. */
sp_status sp__pft_close_slice(loader *l, track *tr, const slice *sl, const gpu_args *s, int64_t end);

sp_status sp__pft_read_metadata(loader *l, const tevent *te, int device);

sp_status sp__pft_add_mem(loader *l, track *tr, const tevent *te, int64_t ts);

/* The recorded name of a host event from its spelling in the file (as the
 * JSON loader restores it). */
uint32_t sp__pft_recorded_name(loader *l, int type, cur n);

#endif
