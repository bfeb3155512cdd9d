/* merge.h: the stream merge of per-rank Chrome-trace files into one trace
 * (sp_trace_merge; docs/trace-format.md §13). merge.c drives it: a look at
 * each file's header for its rank, a first pass over each file that keeps
 * only its collectives' ends, the clock solve (merge_align.c), and a second
 * pass that rewrites the events one at a time (merge_write.c) with the
 * reader of merge_read.c. Memory holds one file's collectives plus the
 * reference rank's, and a few numbers per rank, never a trace. */
#ifndef SP_MERGE_H
#define SP_MERGE_H

#include "json_lex.h"
#include "sys.h"

#include <stdint.h>

/* One event, as far as the merge reads it. The *_at/_end offsets are where
 * a value's text lies in the tee (sp__jlex_tee), when one is set. */
typedef struct mg_event {
    char ph;
    int gpu_cat;      /* cat is a device record's (kernel, gpu_memcpy, ...) */
    int process_meta; /* 1 process_name, 2 process_sort_index, 3 process_labels */
    int gpu_meta;     /* a process_name or process_labels naming a GPU */
    int pid_kind;     /* 0 absent, 1 integer, 2 another value */
    int64_t pid;
    size_t pid_at, pid_end;
    int has_ts, has_dur, has_id;
    int64_t ts_ns, dur_ns, id;
    size_t ts_at, ts_end, id_at, id_end;
    int comm;       /* args "Event Type": "Communication" */
    uint64_t group; /* hash of args "Process Group Name" ("" when absent) */
    int64_t seq;    /* args "seq", -1 when absent */
    uint64_t coll;  /* hash of args "Collective name", 0 when absent */
} mg_event;

/* A file's header keys (distributedInfo, baseTimeNanoseconds), with
 * the defaults of docs/trace-format.md §13 for what is absent. */
typedef struct mg_header {
    int has_dist, has_base, has_rank; /* has_rank: distributedInfo names a rank (a merged trace does not) */
    long rank, world_size, local_rank, local_world_size;
    char hostname[256], job[256], backend[64];
    int64_t base_ns;
    /* When not NULL (kept across sp__merge_read), the header look appends
     * here, as `"key":value` pairs joined by commas, the verbatim keys a
     * rank's result is restored from (mg_kept_key): its counters, device
     * properties, thread names, options. */
    sp__buf *keep;
} mg_header;

/* Whether a top-level key is one the merge keeps per rank (mg_header.keep). */
int sp__merge_kept_key(const char *key, size_t len);
/* The most bytes kept per rank; a file with more keeps none and says so. */
#define MG_KEEP_MAX ((size_t)4 << 20)

/* Per-event callback of mg_read: returns 0 to go on, 1 to stop reading
 * events (the reader then returns at once), -1 on error. */
typedef int (*mg_event_fn)(void *ctx, sp__jlex *lx);

/* sp__merge_read: stop at traceEvents once distributedInfo is known (skipping
 * the events only to look for it after them); stop after the events. */
enum { MG_HEADER_ONLY = 1, MG_EVENTS_ONLY = 2 };
/* With MG_HEADER_ONLY: stop at traceEvents even without distributedInfo
 * (a look that must not cost a pass over the events). */
enum { MG_STOP_AT_EVENTS = 4 };

/* Reads the file open in lx: its header keys into h and each element of
 * traceEvents through on_event (NULL skips them). *in_events is set once the
 * events began, so that an error after it is a file cut short, not a bad
 * one (cut after its events, a file lost only trailing keys). 0, or -1 with the error in
 * lx->status. */
int sp__merge_read(sp__jlex *lx, mg_header *h, int flags, mg_event_fn on_event, void *ctx,
                   int *in_events);
/* A key of an object that sp__merge_read_dist does not know, in lx->tok:
 * 1 when the callback read its value, 0 to have it skipped, -1 on error. */
typedef int (*mg_key_fn)(void *ctx, sp__jlex *lx);
/* Reads a distributedInfo object (or one with its keys, such as a merged
 * trace's rank entry) into h's rank fields; other keys go to other (may be
 * NULL). 0, or -1 with the error in lx->status. */
int sp__merge_read_dist(sp__jlex *lx, mg_header *h, mg_key_fn other, void *ctx);
/* Reads one event object; 0, or -1 with the error in lx->status. */
int sp__merge_read_event(sp__jlex *lx, mg_event *ev);
/* The same, through the fast path of merge_scan.c where it can. */
int sp__merge_next_event(sp__jlex *lx, mg_event *ev);
/* sp__merge_next_event that also leaves the event's text in text (its
 * offsets in ev are relative to it). */
int sp__merge_next_event_text(sp__jlex *lx, mg_event *ev, sp__buf *text);
/* The fast path alone: reads the event at [start, end) if it lies whole
 * there in a form it knows; its length, or 0 (nothing read). */
size_t sp__merge_scan_event(const unsigned char *start, const unsigned char *end, mg_event *ev);
/* Microseconds as JSON number text -> nanoseconds, rounded. 0 on success. */
int sp__merge_us_to_ns(const char *text, int64_t *ns);
uint64_t sp__merge_hash(const char *s, size_t len);

/* One collective of one rank: absolute ns (base time added). */
typedef struct mg_coll {
    uint64_t group, coll;
    int64_t seq, start_ns, end_ns;
} mg_coll;

typedef struct mg_colls {
    mg_coll *v;
    size_t n, cap;
} mg_colls;

int sp__merge_colls_push(mg_colls *c, const mg_coll *x); /* 0, -1 out of memory */
void sp__merge_colls_free(mg_colls *c);
/* Numbers missing seqs by their order of start within each group, then
 * sorts by (group, seq) for matching. */
void sp__merge_colls_key(mg_colls *c);

/* A rank's ends against the reference rank's: d = ref end - this end, ns. */
typedef struct mg_fit {
    uint64_t matched, mismatched; /* pairs; pairs whose Collective names differ */
    double median_ns;             /* of d */
    double n, st, sd, stt, std;   /* least-squares sums: t in s from t0, d in ns */
} mg_fit;

/* Matches c against ref (both keyed); fills fit. t0_ns anchors t. 0, or -1
 * out of memory. */
int sp__merge_fit(const mg_colls *ref, const mg_colls *c, int64_t t0_ns, mg_fit *fit);
/* The shift (ns) a clock model adds at absolute time t_ns. */
double sp__merge_shift(double offset_ns, double drift_ppm, int64_t t0_ns, int64_t t_ns);
/* |d - shift| of every matched pair: their median and max. 0 when none. */
int sp__merge_residual(const mg_colls *ref, const mg_colls *c, double offset_ns, double drift_ppm,
                       int64_t t0_ns, uint64_t *n, double *median_ns, double *max_ns);
double sp__merge_median(double *v, size_t n); /* sorts v */

#define MG_MAX_PIDS 64 /* distinct integer pids told apart per file; more map to the rank */

/* One input file: what the header look and the first pass learnt, the
 * clock model solved for it, and what the second pass wrote. */
typedef struct mg_rank {
    const char *path;
    mg_header h;
    int n_pids;
    int64_t pids[MG_MAX_PIDS]; /* integer pids in order of appearance */
    char pid_gpu[MG_MAX_PIDS]; /* ...and whether each is a device row */
    int has_host_pid;
    int64_t host_pid; /* the first pid that is not a device's */
    uint64_t events;  /* complete events (first pass) */
    int cut;          /* the file ends early or is corrupt after its header */
    int has_ts_min;
    int64_t ts_min_ns; /* relative to h.base_ns */
    size_t domain;     /* index of its clock domain (host) */
    mg_fit fit;
    double offset_ns, drift_ppm;
    int64_t t0_ns;
    uint64_t res_n;
    double res_median_ns, res_max_ns;
    uint64_t written; /* events written (second pass) */
    sp__buf keys;     /* the header's kept keys (mg_header.keep) */
    int keys_cut;     /* they were over MG_KEEP_MAX: none kept */
} mg_rank;

typedef struct mg_result {
    int aligned;
    char reason[256];
    uint64_t residual_n;
    double residual_median_ns, residual_max_ns;
} mg_result;

/* merge_write.c: the output's pieces. Each event is preceded by
 * sp__merge_put_sep (a ",\n" after the first). */
void sp__merge_put_head(sp__buf *out, const mg_rank *ref, long world_size, int64_t base_out_ns);
void sp__merge_put_sep(sp__buf *out, int *first);
void sp__merge_put_processes(sp__buf *out, int *first, const mg_rank *r, int64_t base_out_ns);
/* text[0..len) is the event ev was read from (offsets relative to text). */
void sp__merge_put_event(sp__buf *out, const char *text, const mg_event *ev, size_t len,
                         const mg_rank *r, int64_t base_out_ns);
void sp__merge_put_tail(sp__buf *out, const mg_rank *ranks, size_t n, const mg_result *res,
                        const char *out_path);
int64_t sp__merge_gpu_pid(const mg_rank *r, int64_t device);
/* An event's new ts (ns from base_out_ns) for its ts_ns in its file. */
int64_t sp__merge_new_ts(const mg_rank *r, int64_t base_out_ns, int64_t ts_ns);

#endif
