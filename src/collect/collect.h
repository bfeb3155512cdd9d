/* collect.h: what the collect stage offers the stages after it (analyze,
 * export): the layout of a collected result. A result is immutable once
 * built and reference-counted, so exporters on a writer thread can hold it
 * while the profiler moves on. */
#ifndef SP_COLLECT_H
#define SP_COLLECT_H

#include "gpu.h"
#include "names.h"
#include "record.h"
#include "sys.h"

#include <stdatomic.h>
#include <stdint.h>

typedef struct sp__event {
    int64_t start_ns;
    int64_t end_ns;
    uint32_t name;   /* id in the result's names */
    uint8_t type;    /* sp_event_type */
    uint8_t flags;   /* SP_EVENT_FLAG_* */
    uint16_t reserved;
    int32_t parent;  /* index in the thread's events, -1 for none */
    uint32_t depth;
    double value;    /* counter samples */
} sp__event;

/* A CUDA runtime or driver API call (CUPTI RUNTIME / DRIVER record), kept
 * on the host thread that made it. */
typedef struct sp__runtime {
    int64_t start_ns;
    int64_t end_ns;
    uint32_t name;        /* id in the result's names, e.g. "cudaLaunchKernel_v7000" */
    uint32_t correlation; /* shared with the device records it launched */
    uint32_t cbid;
    uint8_t driver;       /* 1 for a driver API call */
    int32_t host;         /* attribution: the range the call was made in (below), -1 = thread root */
    int64_t external_ns;  /* the start of that range, from its external correlation id; 0: unknown,
                           * so the innermost host event containing start */
} sp__runtime;

/* A device activity record: a kernel, a memcpy or a memset. */
typedef struct sp__device_rec {
    int64_t start_ns;
    int64_t end_ns;
    uint32_t name;        /* id in the result's names (demangled kernel name, "MEMCPY_HtoD") */
    uint8_t type;         /* SP_EVENT_KERNEL, SP_EVENT_MEMCPY or SP_EVENT_MEMSET */
    uint32_t device, context, stream, correlation;
    uint64_t bytes;       /* memcpy / memset size */
    /* attribution: the runtime call that launched it, thread -1 = unattributed */
    int32_t thread;       /* index in the result's threads */
    int32_t runtime;      /* index in that thread's runtimes */
    sp__device_detail detail; /* by type: kernel launch, copy kinds, memset kind */
} sp__device_rec;

/* A memory event (semantics.md §4): an allocation or free reported by an
 * allocator while profile_memory is on, kept on the thread that reported it. */
typedef struct sp__mem_event {
    int64_t ts_ns;
    uint8_t type;   /* sp_mem_event_type: Allocate, Free, ReservedAllocate, ReservedFree */
    uint32_t place; /* id in the result's names, e.g. "Place(gpu:0)", "Place(cpu)" */
    uint64_t addr;
    int64_t bytes;  /* signed change: negative for frees */
    uint64_t current_allocated, current_reserved, peak_allocated, peak_reserved;
    int32_t host;   /* attribution: innermost host event containing ts_ns, -1 = thread root */
} sp__mem_event;

/* An operator supplement (paddle's OperatorSupplementEvent): the input
 * shapes, dtypes and call stack of an op, kept on the thread that ran it.
 * Its inputs are encoded in the thread's op_words from `words` on:
 *   shapes: nkeys, then per key: key name id, nshapes, then per shape:
 *           rank, dims...;
 *   dtypes: nkeys, then per key: key name id, ndtypes, dtype name ids...
 * sp__op_inputs_* (result.c) read them back. */
typedef struct sp__op_supplement {
    int64_t ts_ns;
    uint32_t op_type;   /* id in the result's names */
    uint32_t callstack; /* id in the result's names; frames joined by ";", "" for none */
    uint64_t op_id;
    size_t words;       /* offset in the thread's op_words */
    int32_t host;       /* attribution: innermost host event containing ts_ns, -1 = thread root */
    uint64_t flops;     /* from sp_profiler_add_op_info (or a stepprof .pb); 0 = unknown */
} sp__op_supplement;

/* The largest step num_samples a result keeps (SP_EVENT_FLAG_SAMPLES):
 * 2^53, below which every integer is exact in the event's double. A larger
 * or negative count read from a file is left out, as unknown. */
#define SP__STEP_SAMPLES_MAX 9007199254740992.0

/* What a collective did (sp_profiler_add_comm_info, the torch adapter, or
 * a loaded file's args), kept on the thread that ran it beside the
 * Communication range it describes: the range records stay small, and only
 * collectives pay for this. */
typedef struct sp__comm {
    int64_t ts_ns;       /* inside its range, in none of its children */
    uint32_t collective; /* id in the result's names: "allreduce"; "" when not given */
    uint32_t group;      /* id in the result's names: the process group, "" when not given */
    int64_t group_size;  /* ranks in the group, 0 when unknown */
    int64_t bytes;       /* what this rank sends, -1 when unknown */
    int64_t seq;         /* index among this rank's collectives of the group, -1 when unknown */
    int32_t host;        /* the innermost Communication range containing ts_ns, -1: none */
} sp__comm;

/* Instants and counter samples: zero-length marks that get a parent but are
 * never a parent. */
static inline int sp__event_is_mark(const sp__event *e)
{
    return (e->flags & (SP_EVENT_FLAG_INSTANT | SP_EVENT_FLAG_COUNTER)) != 0;
}

typedef struct sp__thread {
    uint64_t tid;
    uint32_t name;   /* id in the result's names */
    uint64_t dropped;
    sp__event *events;
    size_t count;
    size_t cap;
    sp__runtime *runtimes; /* sorted by start; attributed by sp__attribute */
    size_t runtime_count;
    sp__mem_event *mems;   /* in time order; attributed by sp__attribute */
    size_t mem_count;
    sp__op_supplement *ops; /* in time order; attributed by sp__attribute */
    size_t op_count;
    uint64_t *op_words;     /* the ops' encoded inputs */
    size_t op_word_count;
    sp__comm *comms;        /* in time order; attributed by sp__attribute */
    size_t comm_count;
} sp__thread;

/* The longest distributed backend name kept, with its NUL. */
#define SP__DIST_BACKEND_MAX 32
/* The longest host name and job id kept, without the NUL. */
#define SP__DIST_HOST_MAX 255
#define SP__DIST_JOB_MAX 127

/* Metadata copied from the profiler's options and the process. */
typedef struct sp__span_meta {
    int record_shapes, profile_memory, with_flops, with_stack;
    int overwrite_oldest; /* the cap's policy: drops are the oldest events */
    int64_t pid;
    char process_name[64];
    /* CPU utilisation over the span (semantics.md §8), as fractions. */
    double cpu_process, cpu_system;
    /* The distributed backend the program named (sp_profiler_set_dist_backend),
     * else the launcher's (STEPPROF_DIST_BACKEND, PADDLE_DISTRI_BACKEND), or
     * "": then the writers guess it from the devices (sp__dist_backend). */
    char dist_backend[SP__DIST_BACKEND_MAX];
    /* Where the span ran (dist.c): filled when it is collected, read back
     * by the loaders; local_world_size 0 while a loader has not seen it. */
    int64_t rank, world_size, local_rank, local_world_size;
    char hostname[SP__DIST_HOST_MAX + 1]; /* "" when unknown */
    char job[SP__DIST_JOB_MAX + 1];       /* the launcher's job id, "" when unknown */
} sp__span_meta;

/* Fills m's rank fields from the launcher's environment and the host name;
 * named_backend (sp_profiler_set_dist_backend's, may be NULL or "") comes
 * before the environment's backend. */
void sp__dist_meta_fill(sp__span_meta *m, const char *named_backend);
/* Gives the rank fields a loaded file left out their defaults: rank 0 of 1,
 * the local rank and size those of the world. */
void sp__dist_meta_default(sp__span_meta *m);
/* The rank and world size of the launcher's environment (RANK, WORLD_SIZE,
 * OMPI_COMM_WORLD_*, PMI_*, PADDLE_TRAINER_ID / PADDLE_TRAINERS_NUM, then
 * LOCAL_RANK / LOCAL_WORLD_SIZE); 0 of 1 by default. Returns 1 if a rank
 * variable was set. */
int sp__dist_info(long *rank, long *world_size);
/* Whether s is a backend name distributedInfo may hold: 1 to
 * SP__DIST_BACKEND_MAX - 1 of letters, digits, '_', '-', ':' and ',' (so
 * "cpu:gloo,cuda:nccl" is one), nothing that JSON would have to escape. */
int sp__dist_backend_ok(const char *s);
/* distributedInfo's backend for r, or NULL for a world of one: the backend
 * the result names, else the one torch and paddle pick by default for the
 * devices the span traced (dist.c). Borrowed from r or static. */
const char *sp__dist_backend(const sp_result *r);

struct sp_result {
    _Atomic int refs;
    int64_t span_start_ns, span_end_ns;
    uint32_t span_index;
    uint64_t counters[SP_COUNTER_COUNT];
    sp__thread *threads; /* ascending tid */
    size_t thread_count;
    sp__device_rec *devices; /* every device record of the span */
    size_t device_count;
    sp__device_props *device_props; /* every visible CUDA device, in id order */
    size_t device_prop_count;
    sp__names names;
    sp__span_meta meta;
};

/* Ranges measured by another tracer (sp_profiler_add_events), held by the
 * profiler until its span is collected (external.c). Names live in one
 * byte buffer; an event refers to its name by offset, so growing the buffer
 * never leaves a dangling pointer. */
typedef struct sp__ext_event {
    uint64_t tid;
    int64_t start_ns, end_ns; /* CLOCK_REALTIME, as given */
    size_t name_off;
    uint32_t name_len;
    uint8_t type;
    uint8_t name_cut; /* the name was longer than SP__EXT_NAME_MAX */
} sp__ext_event;

/* Memory events measured by another tracer (sp_profiler_add_memory_events),
 * held with the external ranges until their span is collected
 * (external_mem.c). Places live in one byte buffer, referred to by offset. */
typedef struct sp__ext_mem {
    uint64_t tid;
    int64_t ts_ns; /* CLOCK_REALTIME, as given */
    size_t place_off;
    uint32_t place_len;
    uint8_t type;      /* sp_mem_event_type, checked by the caller */
    uint8_t place_cut; /* the place was longer than SP__EXT_NAME_MAX */
    sp_mem_info info;
} sp__ext_mem;

typedef struct sp__ext_mems {
    sp__ext_mem *mems;
    size_t count, cap;
    sp__buf places;
} sp__ext_mems;

void sp__ext_mems_init(sp__ext_mems *m);
void sp__ext_mems_fini(sp__ext_mems *m);
/* Forgets the events, keeping the memory for the next span. */
void sp__ext_mems_clear(sp__ext_mems *m);
/* Appends n events, copying their places (cut at SP__EXT_NAME_MAX bytes):
 * all of them, or none on failure. Types must be checked by the caller.
 * Returns 0 or -1 (out of memory). */
int sp__ext_mems_add(sp__ext_mems *m, const sp_external_mem_event *events, size_t n);
/* Moves the memory events into r's threads (a missing thread is added),
 * merged by time with the memory events there (at equal times the thread's
 * own first, then the added ones in the order given), before attribution.
 * Times go onto the span's time line as the external ranges' do
 * (sp__external_time); events outside r's span are counted as
 * out_of_window. Cut or repaired places are counted in names_cut and
 * invalid_utf8. Returns 0 or -1 (out of memory). */
int sp__collect_ext_mems(sp_result *r, const sp__ext_mems *m, const sp__sync *start,
                         const sp__sync *stop, const sp__tick_map *map);

/* Operator information from sp_profiler_add_op_info (external_ops.c), kept
 * as the events are: texts in one byte buffer by offset, each op's inputs a
 * run of `inputs`, their dims a run of `dims`. */
typedef struct sp__ext_text {
    size_t off;
    uint32_t len;
    uint8_t cut; /* longer than SP__EXT_NAME_MAX */
} sp__ext_text;

typedef struct sp__ext_input {
    sp__ext_text key, dtype;
    size_t dims_off;
    uint32_t rank;
} sp__ext_input;

typedef struct sp__ext_op {
    uint64_t tid;
    int64_t time_ns; /* CLOCK_REALTIME, as given */
    sp__ext_text op_type, callstack;
    uint64_t flops;
    size_t first_input, input_count;
} sp__ext_op;

typedef struct sp__ext_ops {
    sp__ext_op *ops;
    size_t count, cap;
    sp__ext_input *inputs;
    size_t input_count, input_cap;
    int64_t *dims;
    size_t dim_count, dim_cap;
    sp__buf text;
} sp__ext_ops;

void sp__ext_ops_init(sp__ext_ops *x);
void sp__ext_ops_fini(sp__ext_ops *x);
void sp__ext_ops_clear(sp__ext_ops *x);
/* Appends n ops, copying their texts (cut at SP__EXT_NAME_MAX bytes) and
 * dims: all of them, or none on failure. Arguments must be checked by the
 * caller. Returns 0 or -1 (out of memory). */
int sp__ext_ops_add(sp__ext_ops *x, const sp_op_info *ops, size_t n);

/* Collectives from sp_profiler_add_comm_info (external_comm.c): texts in
 * one byte buffer by offset, as the ops'. */
typedef struct sp__ext_comm {
    uint64_t tid;
    int64_t time_ns; /* CLOCK_REALTIME, as given */
    sp__ext_text collective, group;
    int64_t group_size, bytes, seq;
} sp__ext_comm;

typedef struct sp__ext_comms {
    sp__ext_comm *comms;
    size_t count, cap;
    sp__buf text;
} sp__ext_comms;

void sp__ext_comms_init(sp__ext_comms *x);
void sp__ext_comms_fini(sp__ext_comms *x);
void sp__ext_comms_clear(sp__ext_comms *x);
/* Appends n collectives, copying their texts (cut at SP__EXT_NAME_MAX
 * bytes): all of them, or none on failure. A tid of 0 or a time of 0 must
 * have been filled in by the caller. Returns 0 or -1 (out of memory). */
int sp__ext_comms_add(sp__ext_comms *x, const sp_comm_info *comms, size_t n);
/* Moves the added collectives into r's threads (a missing thread is
 * added), each thread's in time order after any it had; times as
 * sp__collect_external's, those outside the span counted as out_of_window.
 * Call before sp__attribute. Returns 0 or -1 (out of memory). */
int sp__collect_external_comms(sp_result *r, const sp__ext_comms *x, const sp__sync *start,
                               const sp__sync *stop, const sp__tick_map *map);

typedef struct sp__external {
    sp__ext_event *events;
    size_t count, cap;
    sp__buf names;
    sp__ext_mems mems; /* sp_profiler_add_memory_events */
    sp__ext_ops ops; /* sp_profiler_add_op_info's */
    sp__ext_comms comms; /* sp_profiler_add_comm_info's */
} sp__external;

void sp__external_init(sp__external *x);
void sp__external_fini(sp__external *x);
/* Forgets the events, keeping the memory for the next span. */
void sp__external_clear(sp__external *x);
/* Appends n events, copying their names (cut at SP__EXT_NAME_MAX bytes): all
 * of them, or none on failure. Types must be checked by the caller. Returns
 * 0 or -1 (out of memory). */
#define SP__EXT_NAME_MAX 4096
int sp__external_add(sp__external *x, const sp_external_event *events, size_t n);

/* Moves the external ranges into r's threads (a missing thread is added),
 * before the nesting pass. CLOCK_REALTIME times go onto the span's time line
 * through its start and stop sync points (sp__external_time). Ranges that
 * start outside r's span are counted as out_of_window; ends past the span
 * are cut at its end. Cut or repaired names are counted in names_cut and
 * invalid_utf8, as recorded names are. Then the memory events join their
 * threads (sp__collect_ext_mems). Returns 0 or -1 (out of memory). */
int sp__collect_external(sp_result *r, const sp__external *x, const sp__sync *start,
                         const sp__sync *stop, const sp__tick_map *map);

/* Moves the added op information into r's threads as op supplements (a
 * missing thread is added), each thread's in time order after any it had;
 * times as sp__collect_external's. Ops outside r's span are counted as
 * out_of_window, cut or repaired texts as names are. Call before
 * sp__attribute. Returns 0 or -1 (out of memory). */
int sp__collect_external_ops(sp_result *r, const sp__ext_ops *x, const sp__sync *start,
                             const sp__sync *stop, const sp__tick_map *map);

/* A CLOCK_REALTIME time read during the span [start, stop] on the span's
 * time line (map): the realtime clock is interpolated between the two sync
 * points, and the tick time found is mapped as the host events are. When
 * the realtime clock jumped during the span (its rate is off the tick
 * clock's by more than 1%), only the offset at stop is used. */
int64_t sp__external_time(int64_t real_ns, const sp__sync *start, const sp__sync *stop,
                          const sp__tick_map *map);

/* A span ended but not yet collected: what the thread that ends it must
 * take at once (the GPU records, the stop sync point, the external data),
 * so that the drain and the build can run later, on another thread, while
 * the next span records. */
typedef struct sp__span_end {
    sp__sync start, stop;
    sp__span_meta meta;
    sp__external external; /* moved from the profiler's (has_external) */
    int has_external;
    sp__gpu_batch gpu;
    sp__count_marks counts; /* each thread's drops at the stop */
    int has_counts;
    uint64_t orphan_dropped; /* events of threads without a buffer, up to the stop */
} sp__span_end;

/* Ends the span that began at `start`, on the thread that ends it: takes the
 * GPU batch, the stop sync point, and external's contents (external may be
 * NULL; it is left empty, ready for the next span), and marks the buffers
 * drained at the stop. */
void sp__collect_span_end(sp__span_end *e, const sp__sync *start, const sp__span_meta *meta,
                          sp__external *external);

/* Builds e's result, on any thread but in order with every other drain and
 * discard: drains every thread's records up to e's stop (later ones stay,
 * for the next span), converts ticks to CLOCK_REALTIME ns and builds each
 * thread's nesting. External ranges join their threads first. Frees e's
 * parts. On success *out is a result with one reference. */
sp_status sp__collect_span_build(sp__span_end *e, sp_result **out);

/* Frees the parts of a span end that will not be built. */
void sp__span_end_free(sp__span_end *e);

/* Both of the above at once. */
sp_status sp__collect_span(const sp__sync *start, const sp__span_meta *meta,
                           sp__external *external, sp_result **out);

/* Records saved rather than drained (a crash dump, src/load/load_dump.c),
 * decoded by the same code as a live span (span.c). */
typedef uint32_t (*sp__static_name_fn)(void *ctx, sp__names *names, uint64_t ptr);

typedef struct sp__saved_thread {
    sp__tbuf tb;           /* tid, name, span_dropped, span_misuse, read_ticks (base) */
    const sp__word *words; /* whole events only: the caller checks their sizes */
    size_t count;
} sp__saved_thread;

typedef struct sp__saved_span {
    sp__tick_map map;
    uint64_t start_ticks, end_ticks; /* ranges still open are closed at end_ticks */
    sp__span_meta meta;
    sp__saved_thread *threads;
    size_t thread_count;
    uint64_t orphan_dropped;
    /* Gives the name id of a static name pointer of the saved process; it is
     * never dereferenced. */
    sp__static_name_fn name_of;
    void *name_ctx;
} sp__saved_span;

/* Builds a result from saved records as sp__collect_span does from live
 * ones: open ranges closed at end_ticks, flagged UNCLOSED and counted; times
 * clamped to [0, 2^62] ns whatever the records hold. */
sp_status sp__collect_saved(const sp__saved_span *s, sp_result **out);

/* Cuts the thread's ranges that partially overlap a ProfileStep range at
 * the step's boundary (tree.c), appending the later pieces: call before
 * sp__tree_build, which sorts them into place. Returns the number of ranges
 * cut (the split_ranges counter). */
uint64_t sp__tree_split_at_steps(sp__thread *t);

/* Builds parent, depth and overlap flags of one thread's events, sorting
 * them by (start asc, end desc). Returns the number of partial overlaps. */
/* qsort order of nesting: start ascending, end descending, ranges before
 * marks at equal intervals. */
int sp__event_order(const void *a, const void *b);
uint64_t sp__tree_build(sp__event *events, size_t count);

/* The warning a scheduler deserves when a profiler adopts it (ready == 0),
 * or NULL (semantics.md §2.1, §2.3). */
const char *sp__scheduler_warning(const sp_scheduler *s);

/* GPU attribution (semantics.md §5.1 steps 2, 3 and 6): sorts each thread's
 * runtime records, attaches each to the innermost host range that contains
 * its start (counting those that end after that range: straddling_runtime),
 * and links each device record to its runtime call by correlation id (a
 * duplicate id: the last runtime wins, counted; no runtime: unattributed,
 * counted, kept). Memory events and op supplements attach to the innermost
 * host range containing their time (§5.1 step 7). Idempotent. Returns 0 or
 * -1 (out of memory). */
int sp__attribute(sp_result *r);

/* Moves a GPU recorder batch into r (gpu_records.c): API calls to their
 * threads (sorted by tid already; a missing thread is added), device records
 * and properties to r, the batch's drop counts to r's counters; records that
 * start outside r's span are counted as out_of_window. Times in ticks go
 * through map. Call before sp__attribute. Returns 0 or -1 (out of memory). */
int sp__collect_gpu(sp_result *r, const sp__gpu_batch *b, const sp__tick_map *map);

/* Result construction helpers (result.c). */
/* The thread with this tid, added (threads kept in tid order) if absent;
 * NULL when out of memory. */
sp__thread *sp__result_thread(sp_result *r, uint64_t tid);
sp_result *sp__result_new(void);
void sp__result_free(sp_result *r);
const char *sp__result_name(const sp_result *r, uint32_t id);
/* The properties of CUDA device id, or NULL when the result has none. */
const sp__device_props *sp__result_device_props(const sp_result *r, uint32_t id);

#endif
