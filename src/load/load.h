/* load.h: the load stage, which reads saved results (load_pb.c, load_json.c,
 * load_dump.c)
 * back into sp_result, and what it offers the API layer and the CLI. A
 * loaded result is built as the collector builds a live one (threads by
 * ascending tid, events in start order with their nesting from
 * sp__tree_build, GPU and memory attribution from sp__attribute), so every
 * table and exporter takes it alike. */
#ifndef SP_LOAD_H
#define SP_LOAD_H

#include "collect.h"

#include <stdio.h>

/* Builds a result from events handed over in any order. Threads are found
 * by tid; a tid seen twice (two thread trees) gives one thread. */
/* Capacities of one thread's arrays (events use sp__thread.cap). */
typedef struct sp__thread_caps {
    size_t runtimes, mems, ops, op_words, comms;
} sp__thread_caps;

typedef struct sp__builder {
    sp_result *r;
    size_t threads_cap;
    sp__thread_caps *caps; /* per thread */
    size_t devices_cap;
    uint64_t *dev_order;   /* stepprof_index of each device record, or its arrival */
    size_t dev_order_cap;
    int32_t *by_tid;       /* open-addressing table of thread indexes, -1 empty */
    size_t by_tid_mask;
    int failed;
} sp__builder;

int sp__builder_init(sp__builder *b);
/* Frees everything, the result included (after a failure). */
void sp__builder_fini(sp__builder *b);
/* The thread with this tid, added if new; NULL when out of memory. */
sp__thread *sp__builder_thread(sp__builder *b, uint64_t tid);
/* Appends an event (parent and depth are filled in by sp__builder_finish). */
sp__event *sp__builder_event(sp__builder *b, sp__thread *t);
sp__runtime *sp__builder_runtime(sp__builder *b, sp__thread *t);
sp__mem_event *sp__builder_mem(sp__builder *b, sp__thread *t);
/* Appends an op supplement whose encoded inputs (collect.h) start at the
 * thread's current op_word_count; sp__builder_op_word appends to them. */
sp__op_supplement *sp__builder_op(sp__builder *b, sp__thread *t);
void sp__builder_op_word(sp__builder *b, sp__thread *t, uint64_t word);
/* The rank metadata and collective records of a .pb's root (pb_dist.c);
 * 0, or -1 when out of memory. */
struct Paddle__Platform__NodeTreesProto;
int sp__pb_read_dist(sp__builder *b, const struct Paddle__Platform__NodeTreesProto *m);
/* A collective's record on t (host -1, unknowns -1); NULL when out of memory. */
sp__comm *sp__builder_comm(sp__builder *b, sp__thread *t);
/* order: the record's original position when known (sorting key). */
sp__device_rec *sp__builder_device(sp__builder *b, uint64_t order);
/* Sorts and nests; restores the live result's invariants. keep_counters:
 * the file carried the span's counters (r->counters already set), so the
 * ones recomputed here are not kept. On success the result moves to *out. */
sp_status sp__builder_finish(sp__builder *b, int keep_counters, const char *path, sp_result **out);

/* Readers (opts already defaulted; format resolved). f is the file, open at
 * its start, a regular file (load.c copies a pipe's bytes into one first),
 * closed by the caller; path names it in messages. */
sp_status sp__load_pb(FILE *f, const char *path, const sp_load_options *opts, sp_result **out);
/* Where sp__load_pb_to sends a .pb's host events and memory events instead
 * of into the result: raw, as paddle wrote them (paddle's type numbers, the
 * name's bytes uncut and unrepaired, valid only during the call), with the
 * OS thread id of the thread tree they hang in; a tree's root is no event.
 * mem may be NULL (memory events left out). The Python package hands
 * paddle's events over this way (python/_stepprof/paddle_pb.c). */
typedef struct sp__pb_sink {
    void *user;
    void (*event)(void *user, uint64_t tid, uint32_t type, const char *name, int64_t start_ns,
                  int64_t end_ns);
    void (*mem)(void *user, uint64_t tid, uint32_t type, const char *place, int64_t ts_ns,
                const sp_mem_info *info);
} sp__pb_sink;
/* sp__load_pb with a sink; the result (without the sink's events) is
 * built and must be released. */
sp_status sp__load_pb_to(FILE *f, const char *path, const sp_load_options *opts,
                         const sp__pb_sink *sink, sp_result **out);
/* A merged trace's .pb (trace-format.md §13) as one result per rank, in
 * file order; *count 0 (nothing loaded) for a file that holds no ranks. */
sp_status sp__load_pb_ranks(FILE *f, const char *path, const sp_load_options *opts, sp_result ***out,
                            size_t *count);
/* Stepprof's own Perfetto traces (load_pftrace.c); sp__is_pftrace tells
 * one from the file's first n bytes. */
int sp__is_pftrace(const unsigned char *head, size_t n);
sp_status sp__load_pftrace(FILE *f, const char *path, const sp_load_options *opts, sp_result **out);
sp_status sp__load_json(FILE *f, const char *path, const sp_load_options *opts, sp_result **out);
/* Crash dumps (load_dump.c, src/record/crash.h): sp__is_dump tells one from
 * the file's first n bytes; sp__load_dump reads it. */
int sp__is_dump(const unsigned char *head, size_t n);
sp_status sp__load_dump(FILE *f, const char *path, const sp_load_options *opts, sp_result **out);

#endif
