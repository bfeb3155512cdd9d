/* json_paddle.h: what paddle.profiler's own chrome trace (trace-format.md
 * §10.3) adds to the JSON reader (load_json.c): the args that hold its exact
 * times, its memory events and its CUDA records, and how they become a
 * result's ranges, memory events, runtime calls and device records. */
#ifndef SP_JSON_PADDLE_H
#define SP_JSON_PADDLE_H

#include "load.h"

/* The args of one paddle event that matter. */
typedef struct sp__paddle_args {
    int has_start, has_end;   /* "start_time" / "end_time": "<us>.<3 digits> us" */
    int64_t start_ns, end_ns; /* from the file's first event, exact */
    int64_t correlation, device, context, stream, bytes, registers, shared;
    int has_device;
    int64_t addr, increase_bytes, current_allocated, current_reserved, peak_allocated,
        peak_reserved;
    sp__buf place;
} sp__paddle_args;

/* The file-wide state: the base that turns start_time into absolute time,
 * and the last host range read, which paddle writes right before its
 * memory events. */
typedef struct sp__paddle_mem_fix sp__paddle_mem_fix;

typedef struct sp__paddle_clock {
    int have_base;
    int64_t base_ns;   /* the first range's ts - start_time */
    int64_t latest_ns; /* the latest such base: the closest to the true one */
    int have_last;
    uint64_t last_tid;
    int64_t last_start, last_end;
    sp__paddle_mem_fix *fixes; /* memory events to move into their range */
    size_t fix_count, fix_cap;
} sp__paddle_clock;

void sp__paddle_args_reset(sp__paddle_args *a);
void sp__paddle_args_fini(sp__paddle_args *a);
/* Takes a numeric or string arg by key; unknown keys are ignored. Returns
 * -1 only when out of memory. */
void sp__paddle_arg_number(sp__paddle_args *a, const char *key, int64_t v);
int sp__paddle_arg_string(sp__paddle_args *a, const char *key, const char *v, size_t len);

/* A range's start and end in ns on the file's clock: from start_time /
 * end_time when they agree with ts (which paddle writes in whole
 * microseconds, too coarse to keep nesting), else ts and ts + dur. Returns
 * 1 when they came from start_time / end_time. */
int sp__paddle_times(sp__paddle_clock *c, const sp__paddle_args *a, int64_t ts_ns, int64_t dur_ns,
                     int64_t *start, int64_t *end);
/* The exact length (dur) of a range whose times came from start_time /
 * end_time, kept in its value until sp__paddle_finish. */
void sp__paddle_keep_length(sp__event *ev, int64_t dur_ns);
/* Notes a host range, so that the memory events after it land inside it. */
void sp__paddle_host_seen(sp__paddle_clock *c, uint64_t tid, int64_t start, int64_t end);

/* At the end of the file, before sp__builder_finish: moves every time
 * taken from start_time onto the best base the file gave, and each memory
 * event into the range written before it. */
void sp__paddle_finish(sp__builder *b, sp__paddle_clock *c);
void sp__paddle_clock_fini(sp__paddle_clock *c);

/* What an event of paddle's dialect is, by its ph, cat (a TracerEventType
 * or TracerMemEventType name) and name; in_paddle_file: the file was seen
 * to be paddle's, so an X of a cat not known here is paddle's too. */
enum { SP__PADDLE_NONE, SP__PADDLE_RANGE, SP__PADDLE_GPU, SP__PADDLE_MEMORY, SP__PADDLE_UNKNOWN };
int sp__paddle_kind(int in_paddle_file, const char *ph, const char *cat, const char *name);
/* The TracerEventType named cat (stepprof's type names are paddle's), or
 * SP_EVENT_TYPE_COUNT. */
sp_event_type sp__paddle_type(const char *cat);
/* The length of name without paddle's "[<dur> <unit>]" at its end. */
size_t sp__paddle_name_len(const char *name);

/* The memory event type of a [memory] event's cat, or -1 for none. */
int sp__paddle_mem_type(const char *cat);
/* Adds a [memory] event of thread tid at ts_ns (whole microseconds).
 * Returns -1 when out of memory. */
int sp__paddle_add_mem(sp__builder *b, sp__paddle_clock *c, const sp__paddle_args *a, uint64_t tid,
                       int64_t ts_ns, int type);
/* Adds a CudaRuntime call of thread tid, or a Kernel / Memcpy / Memset record
 * of device `pid` and stream `tid`; name is the id of the name without its
 * "[<dur> ms]". Returns -1 when out of memory. */
int sp__paddle_add_runtime(sp__builder *b, const sp__paddle_args *a, uint64_t tid, uint32_t name,
                           int64_t start, int64_t end);
int sp__paddle_add_device(sp__builder *b, const sp__paddle_args *a, sp_event_type type, int64_t pid,
                          int64_t tid, uint32_t name, int64_t start, int64_t end);

#endif
