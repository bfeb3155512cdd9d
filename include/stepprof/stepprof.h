/* stepprof.h: the public interface of stepprof, a profiler for deep-learning
 * training and inference loops.
 *
 * A program marks typed ranges (Dataloader, Forward, Backward, operators,
 * user ranges) on any thread and calls sp_profiler_step() once per
 * iteration. A scheduler decides which steps are recorded; each recorded
 * span is collected into an sp_result and handed to an on_trace_ready
 * handler, which usually writes Chrome-trace JSON.
 *
 * Recording is process-wide, as with paddle's RecordEvent or NVTX: the range
 * calls take no profiler argument, so code deep in a library can mark ranges
 * without a handle. Whichever profiler currently holds the tracers receives
 * them. While no profiler is started, a range call costs one load and one
 * branch (see "Costs when not recording" below for a started profiler).
 *
 * Conventions used by every declaration below:
 *  - Calls that can fail return sp_status (SP_OK == 0); the message for the
 *    calling thread's last failure is sp_last_error(). A failed call changes
 *    nothing and never runs a callback.
 *  - Hot-path calls return nothing: misuse and full buffers are counted in the
 *    result (sp_result_counter) instead.
 *  - "Threads:" says who may call; without that line a call is not
 *    thread-safe.
 *  - Returned pointers are borrowed unless the text says otherwise.
 *  - The library never aborts, exits or prints; warnings go to the log
 *    callback of the options (stderr by default). */
#ifndef STEPPROF_STEPPROF_H
#define STEPPROF_STEPPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SP_API __attribute__((visibility("default")))
#else
#define SP_API
#endif

#define SP_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */

#define SP_STATUS_LIST(X)                                                      \
    X(SP_OK, 0, "success")                                                     \
    X(SP_EINVAL, -1, "invalid argument")                                       \
    X(SP_ENOMEM, -2, "out of memory")                                          \
    X(SP_EIO, -3, "input/output error")                                        \
    X(SP_ESTATE, -4, "not allowed in the profiler's current state")            \
    X(SP_EBUSY, -5, "another profiler holds the tracers")                      \
    X(SP_ENODATA, -6, "no result to act on")                                   \
    X(SP_ENOTSUP, -7, "not supported")                                         \
    X(SP_EFORMAT, -8, "malformed input file")

typedef enum sp_status {
#define SP__STATUS_ENUM(name, value, text) name = value,
    SP_STATUS_LIST(SP__STATUS_ENUM)
#undef SP__STATUS_ENUM
} sp_status;

/* Returns a static description of a status code ("invalid argument").
 * Threads: any. */
SP_API const char *sp_status_str(sp_status status);

/* Returns the message of the calling thread's most recent failed call, or ""
 * if none failed. Valid until the thread's next stepprof call.
 * Threads: any; each thread sees its own message. */
SP_API const char *sp_last_error(void);

/* ------------------------------------------------------------------------ */
/* Enumerations (numeric values are part of the API, as in paddle.profiler)  */

#define SP_EVENT_TYPE_LIST(X)                                                  \
    X(SP_EVENT_OPERATOR, 0, "Operator")                                        \
    X(SP_EVENT_DATALOADER, 1, "Dataloader")                                    \
    X(SP_EVENT_PROFILE_STEP, 2, "ProfileStep")                                 \
    X(SP_EVENT_CUDA_RUNTIME, 3, "CudaRuntime")                                 \
    X(SP_EVENT_KERNEL, 4, "Kernel")                                            \
    X(SP_EVENT_MEMCPY, 5, "Memcpy")                                            \
    X(SP_EVENT_MEMSET, 6, "Memset")                                            \
    X(SP_EVENT_USER_DEFINED, 7, "UserDefined")                                 \
    X(SP_EVENT_OPERATOR_INNER, 8, "OperatorInner")                             \
    X(SP_EVENT_FORWARD, 9, "Forward")                                          \
    X(SP_EVENT_BACKWARD, 10, "Backward")                                       \
    X(SP_EVENT_OPTIMIZATION, 11, "Optimization")                               \
    X(SP_EVENT_COMMUNICATION, 12, "Communication")                             \
    X(SP_EVENT_PYTHON_OP, 13, "PythonOp")                                      \
    X(SP_EVENT_PYTHON_USER_DEFINED, 14, "PythonUserDefined")                   \
    X(SP_EVENT_DYGRAPH_KERNEL_LAUNCH, 15, "DygraphKernelLaunch")               \
    X(SP_EVENT_STATIC_KERNEL_LAUNCH, 16, "StaticKernelLaunch")

/* TracerEventType of paddle.profiler. */
typedef enum sp_event_type {
#define SP__EVENT_ENUM(name, value, text) name = value,
    SP_EVENT_TYPE_LIST(SP__EVENT_ENUM)
#undef SP__EVENT_ENUM
    SP_EVENT_TYPE_COUNT
} sp_event_type;

/* Returns the paddle name of an event type ("Forward"), or "Unknown".
 * Threads: any. */
SP_API const char *sp_event_type_name(sp_event_type type);

/* ProfilerState of paddle.profiler. */
typedef enum sp_state {
    SP_STATE_CLOSED = 0,
    SP_STATE_READY = 1,
    SP_STATE_RECORD = 2,
    SP_STATE_RECORD_AND_RETURN = 3
} sp_state;

/* ProfilerTarget bits for sp_options.targets. */
enum {
    SP_TARGET_CPU = 1u << 0,
    SP_TARGET_GPU = 1u << 1,
    SP_TARGET_XPU = 1u << 2,
    SP_TARGET_CUSTOM_DEVICE = 1u << 3
};

/* Counts of events that were lost, repaired or rejected in one span. Each is
 * printed under the summary, and the trace's "stepprof_counters" holds all
 * of them in this order (docs/trace-format.md §2). unclosed_ranges counts
 * begins whose end never came within the span; unmatched_ends, ends with no
 * open begin; clock_mismatch, CUDA calls that their range's external
 * correlation id places in that range but whose GPU-clock time falls outside
 * it (the GPU clock disagrees with the host's); split_ranges, ranges open
 * across a step boundary that were cut at it (SP_EVENT_FLAG_SPLIT). load_skipped
 * and trailing_bytes are set by sp_result_load: events of a JSON file
 * skipped because their pid, tid, ts or dur held a value of the wrong type,
 * and bytes after the end of the data, which were ignored: after a gzip
 * stream (not a further gzip member), or after the last complete pass of a
 * streamed crash dump (a pass cut short by a kill or a full disk). A loaded
 * file's strings over 64 KiB are cut and counted as names_cut. */
#define SP_COUNTER_LIST(X)                                                     \
    X(SP_COUNTER_HOST_DROPPED, "host_dropped")                                 \
    X(SP_COUNTER_CUPTI_DROPPED, "cupti_dropped")                               \
    X(SP_COUNTER_DISCARDED_RECORDS, "discarded_records")                       \
    X(SP_COUNTER_ZERO_TIMESTAMP, "zero_timestamp")                             \
    X(SP_COUNTER_OUT_OF_WINDOW, "out_of_window")                               \
    X(SP_COUNTER_UNATTRIBUTED, "unattributed")                                 \
    X(SP_COUNTER_OVERLAP, "overlap")                                           \
    X(SP_COUNTER_STRADDLING_RUNTIME, "straddling_runtime")                     \
    X(SP_COUNTER_DUPLICATE_CORRELATION, "duplicate_correlation")               \
    X(SP_COUNTER_NAMES_CUT, "names_cut")                                       \
    X(SP_COUNTER_INVALID_UTF8, "invalid_utf8")                                 \
    X(SP_COUNTER_MISUSE, "misuse")                                             \
    X(SP_COUNTER_UNCLOSED_RANGES, "unclosed_ranges")                           \
    X(SP_COUNTER_UNMATCHED_ENDS, "unmatched_ends")                             \
    X(SP_COUNTER_CLOCK_MISMATCH, "clock_mismatch")                             \
    X(SP_COUNTER_SPLIT_RANGES, "split_ranges")                                 \
    X(SP_COUNTER_LOAD_SKIPPED, "load_skipped")                                 \
    X(SP_COUNTER_TRAILING_BYTES, "trailing_bytes")

typedef enum sp_counter_kind {
#define SP__COUNTER_ENUM(name, text) name,
    SP_COUNTER_LIST(SP__COUNTER_ENUM)
#undef SP__COUNTER_ENUM
    SP_COUNTER_COUNT
} sp_counter_kind;

/* Returns the trace key of a counter ("host_dropped"), or "unknown".
 * Threads: any. */
SP_API const char *sp_counter_name(sp_counter_kind counter);

/* ------------------------------------------------------------------------ */
/* Recording ranges (the hot path)                                           */
/*
 * Every range call acts on the calling thread. Ranges nest: sp_range_end()
 * closes the innermost open range of the thread. A range is recorded only
 * while some profiler is READY or RECORD; otherwise the call costs one load
 * and one branch, or a few ns while a started profiler's timer runs (below).
 *
 * Names come in two kinds:
 *  - sp_range_begin(type, name): the pointer is stored, not the text, so the
 *    string must stay unchanged until every result of the span is released
 *    (string literals and other static strings). Cost: one clock read and two
 *    stores into the thread's buffer; never allocates once the thread's
 *    buffer is warm, never locks.
 *  - sp_range_begin_copy(type, name, len): the len bytes are copied, so the
 *    caller may free or reuse the buffer as soon as the call returns. Any bytes
 *    are accepted; names over 4096 bytes are cut (counted as names_cut), a
 *    NUL byte inside the name becomes U+FFFD (counted as names_cut too) and
 *    invalid UTF-8 is replaced by U+FFFD when the span is collected (counted).
 *
 * Costs when not recording: every call is one load and one branch, with or
 * without a started profiler (CLOSED steps, timer_only). The benchmark timer
 * of a started profiler times Dataloader ranges: a begin of that type calls
 * into the library (a few ns), and while one is open on the timer's thread
 * every begin and end calls in too, so that the library sees where it ends.
 *
 * A NULL name records "(null)". An out-of-range type records UserDefined and
 * counts a misuse. When the memory cap is reached, new events are dropped (or
 * the oldest overwritten: sp_options.overwrite_oldest) and counted exactly
 * (host_dropped); the end of a range whose begin was kept is never dropped,
 * so kept ranges stay correctly nested.
 *
 * Threads: any; each thread records into its own buffer. A range must end on
 * the thread that began it. From a signal handler: a call that interrupts
 * another recording call of its thread is dropped and counted (host_dropped),
 * a range begun and ended in that handler whole; a call that interrupts
 * anything else records as usual (when its thread needs a new chunk, that
 * allocates, so a handler that may interrupt malloc should not record). */

/* Internal: bit 0 is set while a profiler holds the tracers in READY or
 * RECORD; bit 1 while a benchmark timer runs (it times Dataloader ranges);
 * bit 2 while GPU tracing tags CUDA calls with the range that made them;
 * bit 3 while a Dataloader range the timer times is open. Bit 1 alone
 * sends only Dataloader begins to the library; any other bit sends every
 * begin and end. Read by the inline functions below; never write it. */
SP_API extern int sp__host_active;

SP_API void sp__range_begin(sp_event_type type, const char *name);
SP_API void sp__range_begin_copy(sp_event_type type, const char *name, size_t len);
SP_API void sp__range_end(void);
SP_API void sp__instant(sp_event_type type, const char *name);
SP_API void sp__counter(const char *name, double value);

/* __builtin_expect returns long: the cast keeps -Wconversion quiet in the
 * code of users, which includes this header. The header compiles clean as
 * C11 and as C++17 with -Wall -Wextra -Wconversion -Wsign-conversion
 * -pedantic, and a test holds it to that. */
#if defined(__GNUC__) || defined(__clang__)
#define SP__EXPECT_FALSE(x) ((int)__builtin_expect(!!(x), 0))
#else
#define SP__EXPECT_FALSE(x) ((int)!!(x))
#endif

static inline int sp__active_bits(void)
{
#if defined(__GNUC__) || defined(__clang__)
    return __atomic_load_n(&sp__host_active, __ATOMIC_RELAXED);
#else
    return sp__host_active;
#endif
}

/* Any bit: the library may want range begins. */
static inline int sp__is_active(void) { return SP__EXPECT_FALSE(sp__active_bits() != 0); }

/* Whether the library wants a begin of this type: any bit for a Dataloader
 * range, any bit but the timer's for the others. With a constant type this
 * folds to one mask test. */
static inline int sp__wants_begin(sp_event_type type)
{
    return SP__EXPECT_FALSE(sp__active_bits() & (type == SP_EVENT_DATALOADER ? ~0 : ~2));
}

/* Whether the library wants range ends: any bit but the timer's. */
static inline int sp__wants_end(void) { return SP__EXPECT_FALSE(sp__active_bits() & ~2); }

/* Bit 0: events are being recorded. */
static inline int sp__is_recording(void) { return SP__EXPECT_FALSE(sp__active_bits() & 1); }

/* Opens a range named by a static string (see above). */
static inline void sp_range_begin(sp_event_type type, const char *name)
{
    if (sp__wants_begin(type)) sp__range_begin(type, name);
}

/* Opens a range whose name (len bytes, no terminator needed) is copied. */
static inline void sp_range_begin_copy(sp_event_type type, const char *name, size_t len)
{
    if (sp__wants_begin(type)) sp__range_begin_copy(type, name, len);
}

/* Closes the innermost open range of the calling thread. An end with no open
 * range in the span is discarded and counted as unmatched_ends. */
static inline void sp_range_end(void)
{
    if (sp__wants_end()) sp__range_end();
}

/* Records a zero-length event named by a static string. */
static inline void sp_instant(sp_event_type type, const char *name)
{
    if (sp__is_recording()) sp__instant(type, name);
}

/* Records a counter sample (a value over time, e.g. queue depth), named by a
 * static string. Non-finite values are written as 0 and counted as misuse. */
static inline void sp_counter(const char *name, double value)
{
    if (sp__is_recording()) sp__counter(name, value);
}

/* TracerMemEventType of paddle.profiler. */
typedef enum sp_mem_event_type {
    SP_MEM_ALLOCATE = 0,
    SP_MEM_FREE = 1,
    SP_MEM_RESERVED_ALLOCATE = 2,
    SP_MEM_RESERVED_FREE = 3
} sp_mem_event_type;

/* What an allocator knows at an allocation or free. */
typedef struct sp_mem_info {
    uint64_t addr;
    int64_t bytes;              /* signed change: negative for a free */
    uint64_t current_allocated; /* after this event, on this place */
    uint64_t current_reserved;
    uint64_t peak_allocated;
    uint64_t peak_reserved;
} sp_mem_info;

SP_API void sp__memory_event(sp_mem_event_type type, const char *place, const sp_mem_info *info);

/* Reports an allocation or free to the profiler (for the Memory Summary and
 * the trace's [memory] events). Recorded only while a profiler created with
 * profile_memory records; otherwise one load and one branch. place names the
 * memory, as paddle spells it ("Place(gpu:0)", "Place(cpu)"), and must be a
 * static string like a range name. An unknown type or a NULL info counts a
 * misuse and records nothing.
 * Threads: any; the event belongs to the calling thread. */
static inline void sp_memory_event(sp_mem_event_type type, const char *place, const sp_mem_info *info)
{
    if (sp__is_recording()) sp__memory_event(type, place, info);
}

/* Returns non-zero while ranges are being recorded (READY or RECORD).
 * Threads: any. */
static inline int sp_is_recording(void) { return sp__is_recording(); }

/* Returns the raw timestamp that range calls use (TSC ticks, or
 * CLOCK_MONOTONIC_RAW nanoseconds where there is no invariant TSC). Only
 * meaningful as an argument of sp_range_add.
 * Threads: any. */
SP_API uint64_t sp_clock_ticks(void);

/* Records a complete range measured by the caller with sp_clock_ticks(), for
 * ranges that cannot be bracketed by begin/end (ended out of order, measured
 * elsewhere). The name is copied. Ranges that partially overlap others are
 * kept and counted as overlap when the span is collected. Ticks no span can
 * hold are moved and the call counted as misuse: a begin or end before the
 * span's start moves to the start, one more than 2^36 ticks (20 to 70 s)
 * ahead of the clock moves to now, and an end before its begin moves to the
 * begin (zero length).
 * Threads: any; the range belongs to the calling thread. */
SP_API void sp_range_add(sp_event_type type, const char *name, size_t len,
                         uint64_t begin_ticks, uint64_t end_ticks);

/* Scoped range for C (GCC and Clang): opens a range now and closes it when
 * the enclosing block is left, by any path. The name must be static.
 * If the begin did not reach the library (nothing recording), leaving the
 * block sends no end, so a scope that straddles the start of recording
 * stays balanced.
 *
 *     { SP_SCOPE(SP_EVENT_FORWARD, "forward"); model_forward(m, x); }
 */
static inline void sp__scope_close(int *was_active)
{
    if (*was_active) sp_range_end();
}
#define SP__CONCAT2(a, b) a##b
#define SP__CONCAT(a, b) SP__CONCAT2(a, b)
#define SP_SCOPE(type, name)                                                   \
    __attribute__((cleanup(sp__scope_close), unused)) int SP__CONCAT(sp__scope_, __LINE__) = \
        (sp_range_begin((type), (name)), sp__wants_begin(type))

/* ------------------------------------------------------------------------ */
/* Schedulers                                                                */

typedef sp_state (*sp_schedule_fn)(int64_t step, void *user);

typedef enum sp_scheduler_form {
    SP_SCHEDULER_DEFAULT = 0, /* every step RECORD, one span returned at stop */
    SP_SCHEDULER_CYCLE,       /* make_scheduler(closed, ready, record, ...) */
    SP_SCHEDULER_TORCH,       /* schedule(wait, warmup, active, ...) */
    SP_SCHEDULER_CUSTOM       /* a user function */
} sp_scheduler_form;

/* A scheduler maps a step number (>= 0) to a state. It is a plain value:
 * fill it with one of the constructors below; a zeroed struct is the default
 * scheduler. The fields are public only so that it can live on the stack. */
typedef struct sp_scheduler {
    sp_scheduler_form form;
    int64_t closed, ready, record, repeat, skip_first, skip_first_wait;
    sp_schedule_fn fn;
    void *user;
} sp_scheduler;

/* paddle's make_scheduler(closed, ready, record, repeat, skip_first): after
 * skip_first CLOSED steps, cycles of closed CLOSED, ready READY and record
 * recorded steps, the last of which is RECORD_AND_RETURN; repeat cycles, or
 * forever when repeat is 0.
 * Errors: SP_EINVAL "Invalid profiler scheduler arguments: <which one is
 * wrong>" (such as "record (0) must be greater than 0") unless closed >= 0,
 * ready >= 0, record > 0, repeat >= 0 and skip_first >= 0.
 * A scheduler with ready == 0 makes the profiler warn once when created.
 * Threads: any. */
SP_API sp_status sp_scheduler_make(sp_scheduler *out, int64_t closed, int64_t ready,
                                   int64_t record, int64_t repeat, int64_t skip_first);

/* paddle's (start, end) tuple: records steps [start, end) once; step start-1
 * is READY. start is clamped to 0.
 * Errors: SP_EINVAL unless end > start ("Invalid profiler scheduler
 * arguments: end (5) must be greater than start (5)").
 * Threads: any. */
SP_API sp_status sp_scheduler_range(sp_scheduler *out, int64_t start, int64_t end);

/* torch.profiler.schedule(wait, warmup, active, repeat, skip_first,
 * skip_first_wait): the same arithmetic as sp_scheduler_make with torch's
 * names; with skip_first_wait non-zero the first cycle has no wait phase.
 * Errors: as sp_scheduler_make.
 * Threads: any. */
SP_API sp_status sp_scheduler_torch(sp_scheduler *out, int64_t wait, int64_t warmup,
                                    int64_t active, int64_t repeat, int64_t skip_first,
                                    int64_t skip_first_wait);

/* A user function. It is called on the thread that calls start/step, once
 * per step; any sequence of states is legal (improper ones are warned about).
 * A return value outside sp_state counts as CLOSED.
 * Errors: SP_EINVAL if fn is NULL.
 * Threads: any. */
SP_API sp_status sp_scheduler_custom(sp_scheduler *out, sp_schedule_fn fn, void *user);

/* Returns the state a scheduler gives for a step (CLOSED for step < 0).
 * Threads: any, if the custom function allows it. */
SP_API sp_state sp_scheduler_state(const sp_scheduler *sched, int64_t step);

/* ------------------------------------------------------------------------ */
/* Profiler                                                                  */

typedef struct sp_profiler sp_profiler;
typedef struct sp_result sp_result;

typedef enum sp_log_level { SP_LOG_INFO = 0, SP_LOG_WARNING = 1, SP_LOG_ERROR = 2 } sp_log_level;

/* Receives the library's warnings, one message per call, without a newline.
 * The default writes "stepprof: warning: <message>" lines to stderr. */
typedef void (*sp_log_fn)(sp_log_level level, const char *message, void *user);

/* Called when a span's result is ready (paddle's on_trace_ready): in the
 * step() that follows the last recorded step, in stop(), and in destroy or at
 * exit for a profiler never stopped. The handler runs on the thread that
 * called step/stop; sp_profiler_result(prof) is the new result. In step() the
 * span is still being collected on the profiler's background thread: reading
 * its result (sp_profiler_result, sp_profiler_export) waits for that, while
 * the built-in handlers queue their export behind it. Reading calls
 * on prof (result, trace_path, export, step_info) are allowed. start, step
 * and stop on prof fail with SP_EBUSY ("...: called from on_trace_ready; ..."),
 * are counted by sp_profiler_misuse_count and change nothing. destroy on prof
 * is deferred: prof is destroyed when the step/stop/destroy call that ran the
 * handler returns (prof stays valid until then). */
typedef void (*sp_trace_ready_fn)(sp_profiler *prof, void *user);

/* An on_trace_ready handler with its data. The profiler owns `user` once it
 * is passed to sp_profiler_create: it calls release(user) (if non-NULL) at
 * destroy, or at once if create fails. */
typedef struct sp_trace_handler {
    sp_trace_ready_fn fn;
    void *user;
    void (*release)(void *user);
} sp_trace_handler;

/* What sp_options.span_hook is told about a span. */
typedef enum sp_span_event {
    SP_SPAN_BEGIN = 0,   /* the span starts recording */
    SP_SPAN_COLLECT = 1, /* the span is about to be collected */
    SP_SPAN_DISCARD = 2  /* the span ends without a result */
} sp_span_event;

/* The default cap on event-buffer memory over all threads. */
#define SP_DEFAULT_BUFFER_CAP ((size_t)512 << 20)

typedef struct sp_options {
    /* SP_TARGET_* bits. 0 means the default: CPU, plus GPU when the process
     * has already loaded the CUDA driver (a CPU-only program never loads
     * CUPTI). SP_TARGET_GPU traces kernels, copies, memsets and CUDA API
     * calls through CUPTI, loaded at run time. Targets that are not available
     * are removed with one warning line at creation, saying why; the CPU is
     * still recorded. */
    unsigned targets;
    /* Zeroed: every step recorded, one span returned at stop. */
    sp_scheduler scheduler;
    /* fn NULL: the default, paddle's export_chrome_tracing("./profiler_log/").
     * To export nothing, use sp_handler_none(). */
    sp_trace_handler on_trace_ready;
    /* Only the benchmark timer runs; range calls record nothing. */
    bool timer_only;
    /* Accepted for paddle/torch compatibility; recorded in the trace
     * metadata. Shapes and stacks are recorded by later versions. */
    bool record_shapes;
    /* Record sp_memory_event calls (Memory Summary, [memory] trace events). */
    bool profile_memory;
    bool with_stack;
    bool with_flops;
    /* Cap on event-buffer memory over all threads, in bytes; 0 means
     * SP_DEFAULT_BUFFER_CAP. The cap holds to within one buffer chunk
     * (at most 1 MiB); values below 64 KiB are raised to 64 KiB. At the cap
     * new events are dropped and counted, but never the end of a kept range
     * nor a ProfileStep: steps then take small chunks past the cap (a few
     * hundred steps per 16 KiB). */
    size_t buffer_cap_bytes;
    /* Warnings go here; NULL means stderr. */
    sp_log_fn log;
    void *log_user;
    /* Reports meant for the user's terminal (the Perf Summary printed at
     * stop) go here, as complete lines; NULL means stdout. */
    void (*report)(const char *text, void *user);
    void *report_user;
    /* Crash safety (docs/reliability.md): while this profiler records a
     * span, a crash signal (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL) or an
     * exit() without sp_profiler_stop saves the span's raw records as a crash
     * dump at crash_path, which sp_result_load and `stepprof summary|convert|
     * info` read as a normal result (ranges open at the crash end there,
     * flagged SP_EVENT_FLAG_UNCLOSED). The handlers are installed at the
     * first start and chain to the handlers installed before them: after the
     * dump the previous handler runs (or the default action), so the process
     * still dies or dumps core as it would have. Default off. */
    bool save_on_crash;
    /* The dump's path; NULL means "stepprof_crash.<pid>.spdump" in the
     * current directory. Written only at a crash (through a temporary file
     * beside it, removed at stop). Its directory is created at start if
     * missing (like mkdir -p); if it cannot be created or written, start
     * fails with SP_EIO. Must stay valid while the profiler exists. */
    const char *crash_path;
    /* Streaming mode of save_on_crash (ignored without it): while a span is
     * recorded, the dump at crash_path is kept up to date about once a
     * second by a background thread, which appends what every thread has
     * recorded since its last pass and fsyncs. After a SIGKILL (or a power
     * loss) the file holds the span up to the last pass, so at most about a
     * second of events is lost; it loads like any crash dump (sp_result_load,
     * the CLI), ranges still open ending at the last pass. A crash or exit()
     * replaces it with a complete dump as without streaming; when the span
     * is collected or discarded the file is removed. The recording threads
     * are never blocked by it. Default off. */
    bool stream_to_disk;
    /* What happens at the buffer cap. false (the default): new events are
     * dropped, so the span keeps its beginning. true: ring-style, the oldest
     * buffer chunk over all threads (at most 1 MiB) is reused for new
     * events, so the span keeps its end, as a flight recorder does. Either
     * way every lost event is counted as dropped on the thread that recorded
     * or would have recorded it (host_dropped, sp_thread_info.dropped), and
     * the trace metadata records the policy ("overwrite_oldest"). Kept
     * ranges stay nested; an end whose begin was overwritten is skipped
     * without counting as unmatched (in a crash dump it does count). A new
     * event is still dropped when no chunk can be reused: every thread's
     * data is in the chunk it is writing, the profiler is collecting, or
     * the oldest chunks hold a span still awaiting its collection on the
     * background thread (that span stays whole). */
    bool overwrite_oldest;
    /* Follows the spans, so that another tracer can run beside each one
     * (the Python package runs paddle's host tracer this way). Called with
     * SP_SPAN_BEGIN when a span starts recording (after its start sync
     * point, before its first ProfileStep range opens), with
     * SP_SPAN_COLLECT just before the span is collected (after its last
     * ProfileStep range closed; sp_profiler_add_events works there), and
     * with SP_SPAN_DISCARD when it ends uncollected (RECORD -> CLOSED or
     * READY). Each BEGIN is followed by exactly one COLLECT or DISCARD. It
     * runs on the thread that called start, step, stop or destroy. It may
     * not drive its own profiler: start, step and stop fail there with
     * SP_EBUSY (counted in sp_profiler_misuse_count), and destroy is done
     * when the call that ran the hook returns. NULL (the default): none. */
    void (*span_hook)(sp_profiler *prof, sp_span_event event, void *user);
    void *span_hook_user;
    /* Throughput rows of the Perf Summary printed at stop (docs/semantics.md
     * §7), over the same steps 11 to N: with tokens_per_sample, "tokens/s"
     * (ips x it; only when every step gave num_samples); with flops_per_step,
     * "TFLOP/s" (FLOPs / batch_cost); with both it and peak_tflops (the
     * hardware's peak TFLOP/s), "MFU (%)". 0 (the default) means not given,
     * and with none given the Perf Summary is paddle's text exactly. A value
     * must otherwise be finite, above 0 and at most 1e12, 1e30 and 1e9 in
     * turn, else create fails with SP_EINVAL. */
    double tokens_per_sample, flops_per_step, peak_tflops;
} sp_options;

/* Fills opts with the defaults. Always call it before setting fields, so that
 * fields added in later versions get their defaults when the program is
 * rebuilt against the new header. Before version 1.0 a new field changes
 * sp_options' size: a program built against an older header must be rebuilt
 * (docs/c-api.md, "Versions").
 * Threads: any. */
SP_API void sp_options_init(sp_options *opts);

/* Creates a profiler in state CLOSED with step number 0 and asks the
 * scheduler for step 0. Several profilers may exist at once; only one holds
 * the tracers at a time (a second one that wants to record gets SP_EBUSY from
 * the call that tried, and behaves as CLOSED until the holder lets go).
 * opts may be NULL for the defaults. The options are copied.
 * fork(): the child starts with recording off and no buffers of the parent.
 * A profiler created before the fork is inert in the child: start, step,
 * stop and export return SP_ESTATE there; create a new one in the child to
 * profile it (docs/reliability.md, "fork").
 * Errors: SP_EINVAL (NULL out, invalid scheduler), SP_ENOMEM.
 * Threads: any. */
SP_API sp_status sp_profiler_create(const sp_options *opts, sp_profiler **out);

/* Destroys a profiler. If it was started and never stopped, it is stopped
 * first as by stop() (without the Perf Summary): a span being recorded is
 * collected and passed to on_trace_ready, and one warning line says so and
 * names the trace file. Pending exports are finished. NULL does nothing.
 * Called from prof's own on_trace_ready, the destroy is deferred until the
 * call that ran the handler returns. Results retained with sp_result_retain
 * stay valid.
 * At exit() (or a return from main), every profiler that was started and
 * never stopped is stopped the same way (the line begins "at exit:"), and
 * every profiler's pending exports are finished; the profilers are not
 * freed. This does not happen in a forked child for its parent's profilers,
 * nor after _exit() or a crash (see save_on_crash).
 * Threads: not concurrently with any other call on prof. */
SP_API void sp_profiler_destroy(sp_profiler *prof);

/* Starts profiling: starts the benchmark timer (which times this thread's
 * outermost Dataloader ranges as reader cost and the time between steps as
 * batch cost; timers of nested profilers stack), applies the transition from
 * CLOSED to the scheduler's state for step 0, and opens "ProfileStep#0".
 * After stop, start restarts the profiler as paddle's does: the step number
 * keeps counting, the scheduler is asked for the step reached (N), a new
 * span begins if that state records, and "ProfileStep#N" opens.
 * Errors: SP_ESTATE if started and not yet stopped; SP_EBUSY if another
 * profiler holds the tracers (this profiler then behaves as CLOSED and
 * retries at its next transition), or if called from prof's own
 * on_trace_ready; SP_EIO if save_on_crash's directory cannot be created or
 * written (nothing changes).
 * Threads: the thread that will call step and stop. */
SP_API sp_status sp_profiler_start(sp_profiler *prof);

/* Ends step N and begins step N+1: closes "ProfileStep#N", asks the
 * scheduler for N+1, runs the transition (which may collect a span and call
 * on_trace_ready), then opens "ProfileStep#N+1". num_samples is the batch
 * size, or -1 if unknown: the benchmark timer uses it, and a recorded step
 * keeps it (SP_EVENT_FLAG_SAMPLES) for the throughput figures.
 * Errors: SP_ESTATE if not started or already stopped (counted as misuse),
 * SP_EBUSY as for start (also from on_trace_ready), SP_ENOMEM if a span could
 * not be collected (it is lost; the previous result stays).
 * Threads: the thread that called start. */
SP_API sp_status sp_profiler_step(sp_profiler *prof, int64_t num_samples);

/* Stops profiling: closes the open step; if the state is RECORD or
 * RECORD_AND_RETURN, collects the span and calls on_trace_ready; READY warns
 * and discards. Waits until the built-in exporters have written every file.
 * If more than 10 steps were timed, sends the benchmark Perf Summary (steps
 * 11 and later) to the report callback, also with timer_only.
 * Errors: SP_ESTATE if not started or stopped twice; SP_EBUSY if called from
 * prof's own on_trace_ready (nothing changes); SP_ENOMEM if the span
 * could not be collected; SP_EIO (or SP_ENOMEM) if a built-in handler could
 * not write a span's file or create its directory (the message names it).
 * Threads: the thread that called start. */
SP_API sp_status sp_profiler_stop(sp_profiler *prof);

/* paddle's step_info(unit): the benchmark timer's averages since the
 * previous call (" reader_cost: 0.51946 s batch_cost: 0.66077 s ips: 6.054
 * images/s"; empty before any step), then resets those averages. unit NULL
 * means "samples". The text is written to buf (always NUL-terminated, cut to
 * size - 1 bytes).
 * Errors: SP_EINVAL (NULL prof or buf, size 0), SP_ESTATE before start.
 * Threads: the thread that called start. */
SP_API sp_status sp_profiler_step_info(sp_profiler *prof, const char *unit, char *buf, size_t size);

/* Returns the current state. Threads: any. */
SP_API sp_state sp_profiler_state(const sp_profiler *prof);

/* Returns the current step number. Threads: any. */
SP_API int64_t sp_profiler_step_num(const sp_profiler *prof);

/* Returns the most recent span's result, or NULL if none was collected.
 * A span that step() ended is collected on the profiler's background
 * thread; this waits until it is. Borrowed: valid until the next span is
 * collected or the profiler is destroyed; sp_result_retain keeps it longer.
 * Threads: the thread that calls step/stop. */
SP_API const sp_result *sp_profiler_result(const sp_profiler *prof);

/* Returns the path of the file that a built-in handler chose for the most
 * recent span (written once stop() or destroy returns), or NULL if none.
 * Borrowed: valid until the next span is collected or the profiler is
 * destroyed.
 * Threads: the thread that calls step/stop. */
SP_API const char *sp_profiler_trace_path(const sp_profiler *prof);

/* Returns how many times the profiler's API was misused outside a span (for
 * example step after stop). Threads: any. */
SP_API uint64_t sp_profiler_misuse_count(const sp_profiler *prof);

/* Zero-code profiling (docs/c-api.md, "Zero-code profiling"): when
 * STEPPROF_STEPS=START:END is set, the library creates and starts a profiler
 * at load, recording steps [START, END) into STEPPROF_OUT (a directory,
 * default ./profiler_log/). The first profiler the program creates itself
 * takes its place, with the environment's schedule, targets and files.
 * sp_step ends a step of that environment's profiler, for a program that
 * marks ranges but makes no profiler of its own: it does what
 * sp_profiler_step does for it. It does nothing when the environment made no
 * profiler, or once the program's own profiler took its place (that one
 * counts its own sp_profiler_step calls); then it costs one load.
 * Threads: the thread that runs the loop; calls are serialized. */
SP_API void sp_step(int64_t num_samples);

/* A range that another tracer measured (paddle's host tracer, ...), to be
 * added to a span with sp_profiler_add_events. Times are CLOCK_REALTIME
 * nanoseconds, the clock of paddle's tracer and of the result. */
typedef struct sp_external_event {
    uint64_t tid; /* the OS thread id of the thread it ran on */
    sp_event_type type;
    const char *name; /* name_len bytes, copied; need not be terminated */
    size_t name_len;
    int64_t start_ns; /* CLOCK_REALTIME */
    int64_t end_ns;
} sp_external_event;

/* Adds ranges measured outside stepprof to the span being recorded. They
 * join the result when the span is collected: each goes to the thread of its
 * tid (a thread with no range of its own gets an entry) and nests with the
 * ranges there. Their times are moved onto the span's time line through the
 * span's start and stop sync points, so they line up with stepprof's own
 * ranges even while NTP slews CLOCK_REALTIME. A range that starts outside
 * the span is dropped and counted as out_of_window; one that ends after the
 * span is cut at its end, one that ends before it starts has length 0;
 * names are cut at 4096 bytes. Ranges added to a span that is then
 * discarded (RECORD -> CLOSED or READY) are dropped with it.
 * Errors: SP_EINVAL (NULL profiler, NULL events with count > 0, an unknown
 * type, SP_EVENT_PROFILE_STEP (steps are the profiler's own), or a NULL name
 * with name_len > 0: nothing is added), SP_ESTATE (the profiler records no
 * span now, READY included), SP_EBUSY (called from on_trace_ready),
 * SP_ENOMEM (nothing is added).
 * Cost: one copy of each event and name; nothing is converted until the
 * span is collected. The copies are not counted against buffer_cap_bytes.
 * Threads: the thread that drives the profiler (start, step, stop), or
 * span_hook; never concurrently with those calls, destroy, or itself. */
SP_API sp_status sp_profiler_add_events(sp_profiler *prof, const sp_external_event *events,
                                        size_t count);

/* An allocation or free that another tracer measured (paddle's memory
 * recorder, ...), to be added to a span with sp_profiler_add_memory_events.
 * The time is CLOCK_REALTIME nanoseconds, as for sp_external_event. */
typedef struct sp_external_mem_event {
    uint64_t tid; /* the OS thread id of the thread that allocated or freed */
    sp_mem_event_type type;
    const char *place; /* place_len bytes, copied ("Place(cpu)"); need not be terminated */
    size_t place_len;
    int64_t ts_ns; /* CLOCK_REALTIME */
    sp_mem_info info;
} sp_external_mem_event;

/* Adds memory events measured outside stepprof to the span being recorded,
 * as if sp_memory_event had reported them: when the span is collected each
 * goes to the thread of its tid (a thread with none of its own gets an
 * entry), in time order among that thread's memory events, and is charged to
 * the innermost range containing its time, so they feed the Memory Summary
 * and the trace's [memory] events. Times are moved onto the span's time line
 * exactly as sp_profiler_add_events moves ranges' times, so an event and the
 * range that was open when it happened stay nested. An event whose time lies
 * outside the span is dropped and counted as out_of_window; places are cut
 * at 4096 bytes (counted in names_cut) and invalid UTF-8 in them is repaired
 * (counted in invalid_utf8). They are added whether or not the profiler was
 * created with profile_memory: that option decides whether sp_memory_event
 * records, which costs on the hot path; a caller of this function has
 * decided already. Events added to a span that is then discarded are
 * dropped with it.
 * Errors: SP_EINVAL (NULL profiler, NULL events with count > 0, an unknown
 * type, or a NULL place with place_len > 0: nothing is added), SP_ESTATE
 * (the profiler records no span now, READY included), SP_EBUSY (called from
 * on_trace_ready), SP_ENOMEM (nothing is added).
 * Cost: one copy of each event and place (a place equal to the previous
 * event's is stored once); nothing is converted until the span is
 * collected. The copies are not counted against buffer_cap_bytes.
 * Threads: as sp_profiler_add_events. */
SP_API sp_status sp_profiler_add_memory_events(sp_profiler *prof,
                                               const sp_external_mem_event *events, size_t count);

/* One input tensor of an operator, for sp_op_info. */
typedef struct sp_op_input {
    const char *key; /* key_len bytes, copied: the op's name for the input ("X", "Y") */
    size_t key_len;
    const int64_t *dims; /* rank sizes, copied; a negative size is kept (an unknown dim) */
    size_t rank;         /* at most SP_OP_RANK_MAX; NULL dims need rank 0 */
    const char *dtype;   /* dtype_len bytes, copied ("float32"); may be empty */
    size_t dtype_len;
} sp_op_input;

#define SP_OP_RANK_MAX 64

/* What another tracer recorded about one operator run (paddle's op info
 * recorder: input shapes and dtypes, call stack), with its FLOPs, for
 * sp_profiler_add_op_info. Inputs with the same key one after another are
 * one key's list, in order, as paddle's input_shapes holds them. */
typedef struct sp_op_info {
    uint64_t tid;        /* the OS thread id of the thread it ran on */
    int64_t time_ns;     /* CLOCK_REALTIME, inside the op's range and in none of its children */
    const char *op_type; /* op_type_len bytes, copied ("matmul") */
    size_t op_type_len;
    const sp_op_input *inputs; /* input_count entries */
    size_t input_count;
    const char *callstack; /* callstack_len bytes, copied; frames joined by ";"; may be empty */
    size_t callstack_len;
    uint64_t flops; /* the op's FLOPs, 0 when unknown */
} sp_op_info;

/* Adds operator information measured outside stepprof to the span being
 * recorded (the Python package adds paddle's with record_shapes or
 * with_flops). When the span is collected each op's time goes onto the
 * span's time line as sp_profiler_add_events' times do, and the op is
 * attached to the innermost range of its thread containing that time: the
 * trace writes its inputs as that range's "Input Dims" and "Input type"
 * args (and "Call stack"), the Operator Summary adds its flops to the
 * range's row (docs/semantics.md §6.5), and the .pb export keeps them. An op
 * whose time lies outside the span is dropped and counted as out_of_window;
 * names, dtypes and call stacks are cut at 4096 bytes (counted in
 * names_cut); invalid UTF-8 is repaired (counted in invalid_utf8). Ops added
 * to a span that is then discarded are dropped with it.
 * Errors: SP_EINVAL (NULL profiler, NULL ops with count > 0, NULL inputs
 * with input_count > 0, a NULL text with a length > 0, NULL dims with
 * rank > 0, rank > SP_OP_RANK_MAX: nothing is added), SP_ESTATE (the
 * profiler records no span now), SP_EBUSY (called from on_trace_ready),
 * SP_ENOMEM (nothing is added).
 * Cost: one copy of each op; nothing is converted until the span is
 * collected. The copies are not counted against buffer_cap_bytes.
 * Threads: as sp_profiler_add_events. */
SP_API sp_status sp_profiler_add_op_info(sp_profiler *prof, const sp_op_info *ops, size_t count);

/* What one collective did, for sp_profiler_add_comm_info: it describes the
 * SP_EVENT_COMMUNICATION range (begun with sp_range_begin as any range) of
 * thread tid that contains time_ns. */
typedef struct sp_comm_info {
    uint64_t tid;           /* the OS thread id of the range's thread; 0: the calling thread */
    int64_t time_ns;        /* CLOCK_REALTIME inside the range; 0: now */
    const char *collective; /* collective_len bytes, copied: "allreduce", "broadcast"... */
    size_t collective_len;
    const char *group;      /* group_len bytes, copied: the process group ("0"); may be empty */
    size_t group_len;
    int64_t group_size;     /* ranks in the group; 0 when unknown */
    int64_t bytes;          /* what this rank sends in it; -1 when unknown */
    int64_t seq;            /* its index among this rank's collectives of the group, from 0;
                               -1 when unknown (readers then count them) */
} sp_comm_info;

/* Describes collectives of the span being recorded: each is attached, when
 * the span is collected, to the innermost SP_EVENT_COMMUNICATION range of
 * its thread containing its time (none: it is dropped), and the trace
 * writes it as that range's args "Collective name", "Process Group Name",
 * "Group size", "bytes" and "seq" (docs/trace-format.md); the .pb keeps
 * them, and loading reads them back. Call it while the range is open, with
 * tid and time_ns 0, or later with the range's thread and a time inside it.
 * Times outside the span are counted as out_of_window; texts are cut and
 * repaired as sp_profiler_add_op_info's.
 *
 *     sp_range_begin(SP_EVENT_COMMUNICATION, "MPI_Allreduce");
 *     sp_comm_info c = {0, 0, "allreduce", 9, "world", 5, size, bytes, seq};
 *     sp_profiler_add_comm_info(prof, &c, 1);
 *     MPI_Allreduce(...);
 *     sp_range_end();
 *
 * Errors: SP_EINVAL (NULL profiler, NULL comms with count > 0, a NULL text
 * with a length > 0: nothing is added), SP_ESTATE (the profiler records no
 * span now), SP_EBUSY (called from on_trace_ready), SP_ENOMEM (nothing is
 * added).
 * Cost: a copy of each record, kept off the range buffers, so ranges that
 * are not collectives pay nothing.
 * Threads: as sp_profiler_add_events. */
SP_API sp_status sp_profiler_add_comm_info(sp_profiler *prof, const sp_comm_info *comms,
                                           size_t count);

/* Names the distributed backend of the run ("gloo", "nccl", "mpi", ...) for
 * the trace's distributedInfo (docs/trace-format.md section 2, item 3), which
 * otherwise takes it from STEPPROF_DIST_BACKEND or PADDLE_DISTRI_BACKEND, or
 * guesses it from the devices traced. It holds for every span collected
 * after the call, the one being recorded included; the rank and world size
 * still come from the launcher's environment, and a run of one process
 * still writes no backend. NULL or "" forgets the name. The Python package
 * calls it with torch.distributed's backend once the process group exists.
 * Errors: SP_EINVAL (NULL profiler, or a backend that is not 1 to 31
 * letters, digits, '_', '-', ':' or ',': nothing changes), and the
 * refusals of sp_profiler_add_events before its arguments (SP_EBUSY from
 * on_trace_ready).
 * Threads: as sp_profiler_add_events. */
SP_API sp_status sp_profiler_set_dist_backend(sp_profiler *prof, const char *backend);

/* A process-wide span hook, for a library that records beside stepprof but
 * has no profiler of its own and cannot set a profiler's options (an MPI or
 * NCCL wrapper, LD_PRELOAD'ed into an unmodified program). Every profiler
 * of the process calls it as it calls its own sp_options.span_hook, right
 * after that one: SP_SPAN_BEGIN when a span starts recording, then
 * SP_SPAN_COLLECT just before the span is collected or SP_SPAN_DISCARD when
 * it ends uncollected, on the thread that drives that profiler. There the
 * hook may hand records over with sp_profiler_add_comm_info, _add_events,
 * _add_op_info and _set_dist_backend; it may not drive the profiler (as
 * span_hook). Hooks run in the order added, for spans that start after the
 * call. A hook cannot be removed: fn and user must stay valid until the
 * process exits (add it from a library that is never unloaded).
 * Errors: SP_EINVAL (fn NULL), SP_ENOMEM (SP_COLLECT_HOOK_MAX hooks are
 * already added). Adding the same fn and user again does nothing.
 * Threads: any, also from a library constructor. */
#define SP_COLLECT_HOOK_MAX 8
typedef void (*sp_collect_hook_fn)(sp_profiler *prof, sp_span_event event, void *user);
SP_API sp_status sp_collect_hook_add(sp_collect_hook_fn fn, void *user);

typedef enum sp_format {
    SP_FORMAT_AUTO = 0, /* from the path: ".gz" -> JSON_GZ, ".pftrace" ->
                           PERFETTO, otherwise JSON */
    SP_FORMAT_JSON,     /* Chrome-trace JSON (Kineto dialect) */
    SP_FORMAT_JSON_GZ,  /* the same, gzip-compressed */
    SP_FORMAT_PROTOBUF, /* paddle's NodeTreesProto (.paddle_trace.pb), as
                           sp_result_export_protobuf writes it; never chosen by
                           AUTO when exporting */
    SP_FORMAT_PERFETTO  /* Perfetto's protobuf trace (.pftrace): TrackEvents
                           with interned names and incremental timestamps
                           (docs/trace-format.md, "Perfetto traces") */
} sp_format;

/* Writes the most recent result to path (paddle's Profiler.export). The file
 * is written to a temporary name and renamed, so readers never see a partial
 * file; an existing file is replaced. Repeatable.
 * Errors: SP_ENODATA if no span was collected, SP_EINVAL, SP_EIO.
 * Threads: the thread that calls step/stop. */
SP_API sp_status sp_profiler_export(sp_profiler *prof, const char *path, sp_format format);

/* ------------------------------------------------------------------------ */
/* Ready-made on_trace_ready handlers                                        */

/* paddle's export_chrome_tracing(dir_name, worker_name). dir_name is a
 * DIRECTORY, created if missing (not a file prefix); each span goes to
 * "<dir_name>/<worker>_time_<YYYY_MM_DD_HH_MM_SS_ffffff>.paddle_trace.json".
 * worker_name NULL means "host_<hostname>pid_<pid>". Characters other than
 * letters, digits, '.', '-' and '_' in the worker name become '_'.
 * Files are written on a background thread; stop() waits for them.
 * Errors: SP_EINVAL (NULL out or dir_name), SP_ENOMEM. A directory that
 * cannot be created is reported when the first span is written.
 * Threads: any. */
SP_API sp_status sp_handler_chrome_tracing(sp_trace_handler *out, const char *dir_name,
                                           const char *worker_name);

/* torch's tensorboard_trace_handler(dir_name, worker_name, use_gzip): each
 * span goes to "<dir_name>/<worker>.<ns>.pt.trace.json[.gz]", ns being epoch
 * nanoseconds padded to 19 digits, the form the TensorBoard plugin reads.
 * worker_name NULL means "<hostname>_<pid>". A worker name ending in
 * ".<digits>" gets a '_' appended, since the plugin would read the digits as
 * a span number. Otherwise as sp_handler_chrome_tracing.
 * Threads: any. */
SP_API sp_status sp_handler_tensorboard(sp_trace_handler *out, const char *dir_name,
                                        const char *worker_name, bool use_gzip);

/* A handler that does nothing, for profiling without writing files.
 * Threads: any. */
SP_API sp_trace_handler sp_handler_none(void);

/* ------------------------------------------------------------------------ */
/* Results                                                                   */
/*
 * A result holds one collected span: per-thread events with their nesting,
 * counters and metadata. Times are integer nanoseconds on CLOCK_REALTIME. */

/* Flags of sp_event_info. */
enum {
    SP_EVENT_FLAG_INSTANT = 1u << 0,  /* zero-length mark */
    SP_EVENT_FLAG_COUNTER = 1u << 1,  /* counter sample; value is set */
    SP_EVENT_FLAG_UNCLOSED = 1u << 2, /* never ended: closed at span end */
    SP_EVENT_FLAG_OVERLAP = 1u << 3,  /* partially overlapped a range it is not nested in */
    /* A piece of a range that was open across a step boundary: it is cut at
     * the boundary of each ProfileStep range it partially overlaps, so that
     * ranges nest in the trace (docs/design.md, "Ranges open across a step").
     * Every piece has SPLIT; every piece but the first also SPLIT_CONT (so a
     * count of calls can skip those). Counted once per range as split_ranges. */
    SP_EVENT_FLAG_SPLIT = 1u << 4,
    SP_EVENT_FLAG_SPLIT_CONT = 1u << 5,
    /* A ProfileStep range whose num_samples was given (sp_profiler_step's
     * argument >= 0): value holds it. Without the flag the step's sample
     * count is unknown, which is not the same as 0. */
    SP_EVENT_FLAG_SAMPLES = 1u << 6
};

typedef struct sp_thread_info {
    uint64_t tid;          /* OS thread id */
    const char *name;      /* thread name (borrowed from the result) */
    size_t event_count;    /* events of this thread in the result */
    uint64_t dropped;      /* events dropped at the memory cap */
} sp_thread_info;

typedef struct sp_event_info {
    const char *name;      /* recorded name, valid UTF-8 (borrowed) */
    sp_event_type type;
    uint32_t flags;        /* SP_EVENT_FLAG_* */
    int64_t start_ns;
    int64_t end_ns;
    int64_t parent;        /* index of the enclosing range in this thread, -1 for none */
    uint32_t depth;        /* 0 for outermost */
    double value;          /* counter value; num_samples with SP_EVENT_FLAG_SAMPLES; else 0 */
} sp_event_info;

/* Number of threads that recorded in the span, in ascending tid order.
 * Threads: any (a result is immutable). */
SP_API size_t sp_result_thread_count(const sp_result *result);

/* Describes thread i. Errors: SP_EINVAL if i is out of range.
 * Threads: any. */
SP_API sp_status sp_result_thread(const sp_result *result, size_t i, sp_thread_info *out);

/* Describes event i of thread t. Events are ordered by start time, longer
 * first at equal starts, so a parent precedes its children.
 * Errors: SP_EINVAL if t or i is out of range.
 * Threads: any. */
SP_API sp_status sp_result_event(const sp_result *result, size_t t, size_t i,
                                 sp_event_info *out);

/* What the result keeps of one operator run (sp_profiler_add_op_info, the
 * torch adapter with record_shapes or with_flops, or a loaded .pb), read
 * back with sp_result_op. Texts are borrowed from the result. */
typedef struct sp_op_record {
    int64_t time_ns;       /* on the span's time line */
    int64_t event;         /* the range of its thread it is attached to (index as
                              for sp_result_event): the range named op_type that
                              starts nearest time_ns, else the innermost range
                              containing time_ns; -1 for none */
    const char *op_type;   /* "matmul"; "" when not given */
    const char *callstack; /* frames joined by ";", "" for none */
    uint64_t flops;        /* 0 when unknown */
    size_t input_count;    /* read each with sp_result_op_input */
} sp_op_record;

/* Number of operator records of thread t, in time order (0 for a t out of
 * range). A range has at most one record in the trace's args ("Input Dims"):
 * the last of those whose event is that range.
 * Threads: any. */
SP_API size_t sp_result_op_count(const sp_result *result, size_t t);

/* Describes operator record i of thread t.
 * Errors: SP_EINVAL if t or i is out of range.
 * Threads: any. */
SP_API sp_status sp_result_op(const sp_result *result, size_t t, size_t i, sp_op_record *out);

/* Describes input j of operator record i of thread t, in the order the
 * inputs were given, filling the struct sp_profiler_add_op_info takes: key,
 * dims (rank sizes) and dtype, each borrowed from the result (key and dtype
 * are also NUL-terminated). An input that was given without dims has rank 0
 * and NULL dims; a torch input that is not a tensor has rank 0 and the
 * dtype torch's profiler gives it ("Scalar", "TensorList", or "").
 * Errors: SP_EINVAL if t, i or j is out of range.
 * Threads: any. */
SP_API sp_status sp_result_op_input(const sp_result *result, size_t t, size_t i, size_t j,
                                    sp_op_input *out);

/* One allocation or free of a result, read back with sp_result_mem_event. */
typedef struct sp_mem_event_info {
    int64_t ts_ns; /* on the span's time line */
    sp_mem_event_type type;
    const char *place; /* "Place(cpu)", "Place(gpu:0)" (borrowed) */
    sp_mem_info info;  /* as reported: bytes negative for a free */
    int64_t event;     /* the innermost range of its thread containing ts_ns
                          (index as for sp_result_event), -1 for none */
} sp_mem_event_info;

/* Number of memory events of thread t (profile_memory, or added with
 * sp_profiler_add_memory_events), in time order; 0 for a t out of range.
 * Threads: any. */
SP_API size_t sp_result_mem_event_count(const sp_result *result, size_t t);

/* Describes memory event i of thread t.
 * Errors: SP_EINVAL if t or i is out of range.
 * Threads: any. */
SP_API sp_status sp_result_mem_event(const sp_result *result, size_t t, size_t i,
                                     sp_mem_event_info *out);

/* Returns a counter of the span (see SP_COUNTER_LIST). Threads: any. */
SP_API uint64_t sp_result_counter(const sp_result *result, sp_counter_kind counter);

/* The span's recording window (tracer start to tracer stop).
 * Threads: any. */
SP_API void sp_result_span(const sp_result *result, int64_t *start_ns, int64_t *end_ns);

/* The process-wide index of the span, counting from 0. Threads: any. */
SP_API uint32_t sp_result_span_index(const sp_result *result);

/* Where a result's span ran, as a distributed job's launcher and host told
 * the process when the span was collected (or as a loaded file says); the
 * variables read are listed in docs/trace-format.md, distributedInfo.
 * Texts are borrowed from the result (or static). */
typedef struct sp_dist_info {
    int64_t rank;             /* RANK, OMPI_COMM_WORLD_RANK, PMI_RANK...; 0 by default */
    int64_t world_size;       /* 1 in a single process */
    int64_t local_rank;       /* on its host (LOCAL_RANK and the like), else rank */
    int64_t local_world_size; /* processes on its host (LOCAL_WORLD_SIZE...), else world_size */
    const char *hostname;     /* the recording host's name, "" when unknown */
    const char *backend;      /* "gloo", "nccl", "mpi"...; "" when world_size is 1 */
    const char *job;          /* the launcher's job id (docs/trace-format.md), "" when unknown */
} sp_dist_info;

/* Describes where the span of result ran; a NULL result gives rank 0 of 1
 * with empty texts. Threads: any. */
SP_API void sp_result_dist_info(const sp_result *result, sp_dist_info *out);

/* Writes a result to path; see sp_profiler_export.
 * Errors: SP_ENODATA if result is NULL, SP_EINVAL, SP_ENOMEM, SP_EIO.
 * Threads: any. */
SP_API sp_status sp_result_export(const sp_result *result, const char *path, sp_format format);

/* Writes a result as paddle's NodeTreesProto (docs/trace-format.md §11), the
 * format of paddle.profiler's export_protobuf: paddle's load_profiler_result
 * reads it, and sp_result_load reads it back with everything it holds
 * (stepprof's additions are optional fields paddle skips). The file is
 * written to a temporary name and renamed. Memory stays bounded by one
 * event node, whatever the trace's size.
 * Errors: SP_ENODATA if result is NULL, SP_EINVAL (empty path), SP_ENOMEM,
 * SP_EIO.
 * Threads: any. */
SP_API sp_status sp_result_export_protobuf(const sp_result *result, const char *path);

/* Progress of a long load: bytes read so far of total (0 when unknown,
 * e.g. gzip input). */
typedef void (*sp_progress_fn)(uint64_t done_bytes, uint64_t total_bytes, void *user);

typedef struct sp_load_options {
    /* SP_FORMAT_AUTO (the default) tells the format from the file's first
     * bytes: gzip -> JSON_GZ, '{' or '[' -> JSON, a crash dump's magic
     * (save_on_crash) -> the dump, the first packet of a .pftrace stepprof
     * wrote -> PERFETTO (also any other file named *.pftrace, which is then
     * refused with SP_EFORMAT), otherwise PROTOBUF. */
    sp_format format;
    /* Called every few megabytes and at the end; NULL for none. */
    sp_progress_fn progress;
    void *progress_user;
} sp_load_options;

/* Fills opts with the defaults. Threads: any. */
SP_API void sp_load_options_init(sp_load_options *opts);

/* Reads a saved result: a NodeTreesProto file written by stepprof or by
 * paddle.profiler's export_protobuf, a Chrome-trace JSON file (plain or
 * gzip) written by stepprof or by paddle.profiler, or a crash dump
 * (save_on_crash). path may name a pipe, a FIFO or /dev/stdin: the file is
 * opened once, and input that is not a regular file is copied into an
 * anonymous temporary file first. The result is
 * accepted by every table and exporter as a live one is. The protobuf keeps
 * everything, input shapes, dtypes, call stacks, kernel launch details and
 * device properties included. What the JSON cannot carry is lost: it keeps
 * host ranges, instants, counter samples, memory events (peaks become
 * running maxima, places become "Place(cpu)" / "Place(gpu:N)") and the span's
 * counters and per-thread drop counts, not GPU records. The JSON is parsed as a stream, so memory stays near
 * that of the result. A .pftrace (SP_FORMAT_PERFETTO) keeps what the JSON
 * keeps and the GPU records, runtime calls, device properties and memory
 * peaks, not op supplements, collectives' details or Python call ids; only
 * stepprof's own .pftrace files are read. Times outside [0, 2^62] ns are clamped and non-finite
 * counter values become 0, so any file gives a result the tables can use.
 * opts may be NULL for the defaults.
 * On success *out holds one reference (owned: pair with sp_result_release).
 * Errors: SP_EINVAL (NULL path or out, unknown format), SP_EIO (cannot open
 * or read; the message names the file), SP_EFORMAT (the content is not a
 * valid file of that format: truncated, corrupt, nested too deep, a
 * crash dump that saved no event; the message names the file and the byte
 * offset), SP_ENOMEM. What a load skipped or ignored is counted in the
 * result (load_skipped, trailing_bytes, names_cut).
 * Threads: any. */
SP_API sp_status sp_result_load(const char *path, const sp_load_options *opts, sp_result **out);

/* Keeps a result alive past the profiler's next span or its destruction.
 * Returns result (owned: pair with sp_result_release). Threads: any. */
SP_API sp_result *sp_result_retain(const sp_result *result);

/* Releases a retained result. NULL does nothing. Threads: any. */
SP_API void sp_result_release(sp_result *result);

/* ------------------------------------------------------------------------ */
/* Merging the ranks of a job                                                */

/* How sp_trace_merge treats the ranks' clocks. */
typedef enum sp_merge_align {
    SP_MERGE_ALIGN_AUTO = 0, /* align hosts on collectives; ranks of one host share a clock */
    SP_MERGE_ALIGN_FORCE,    /* align every rank, even ranks that name one host */
    SP_MERGE_ALIGN_OFF       /* leave every clock as it is */
} sp_merge_align;

/* A line of what the merge did (offsets, residuals) or found (a missing
 * rank, a file cut short); warning is 1 for the latter. */
typedef void (*sp_merge_log_fn)(void *ctx, int warning, const char *line);

typedef struct sp_merge_options {
    sp_merge_align align;
    int drift;           /* 1: solve a clock drift per host as well (least squares) */
    int force;           /* 1: merge traces of different jobs or world sizes */
    sp_merge_log_fn log; /* NULL for none */
    void *log_ctx;
} sp_merge_options;

/* Fills opts with the defaults (AUTO, no drift, no force, no log).
 * Threads: any. */
SP_API void sp_merge_options_init(sp_merge_options *opts);

/* Merges the Chrome-trace files of a job's ranks (stepprof's or Kineto's,
 * .json or .json.gz, one file per rank) into one trace at out_path (.json,
 * .json.gz for a name ending in ".gz", or .pb: paddle's NodeTreesProto
 * with each thread tree tagged with its rank, which is built from the JSON
 * merge read back as ranks, so it holds every rank's result in memory
 * once): one process per rank, in rank
 * order, each rank's clock shifted onto the lowest rank's by the ends of
 * their matched collectives (docs/trace-format.md §13 gives the layout and
 * the solve). Each file is read twice as a stream and the output is written
 * an event at a time, so memory holds two ranks' collectives, never a
 * trace, whatever the number of ranks. The output appears atomically.
 * A file cut short (a crash) is merged up to its last complete event, and
 * a missing rank is merged without; both are logged as warnings.
 * Errors: SP_EINVAL (no paths, NULL out_path, out_path among the inputs),
 * SP_ENOTSUP (an input that is not JSON or not a regular file), SP_EIO, SP_ENOMEM, SP_EFORMAT (a file that is not a trace; two
 * files of one rank; without force, different non-empty jobs, different
 * world sizes or a rank outside its world). The message names the files.
 * opts may be NULL for the defaults.
 * Threads: any. */
SP_API sp_status sp_trace_merge(const char *const *paths, size_t n_paths, const char *out_path,
                                const sp_merge_options *opts);

/* Reads a trace as its ranks' results. A trace that sp_trace_merge wrote
 * gives one result per rank it holds, in rank order, each with that rank's
 * events (on the merged clock), its GPU rows as devices again and its rank
 * metadata (sp_result_dist_info); any other file gives one result, as
 * sp_result_load does. On success *out holds an array of *count results
 * (owned: pair with sp_results_release). Events that name no rank of the
 * merge are counted in the first result's load_skipped. Errors: those of
 * sp_result_load. Threads: any. */
SP_API sp_status sp_result_load_ranks(const char *path, const sp_load_options *opts,
                                      sp_result ***out, size_t *count);

/* Releases the results of sp_result_load_ranks and their array. NULL
 * does nothing. Threads: any. */
SP_API void sp_results_release(sp_result **results, size_t count);

/* ------------------------------------------------------------------------ */
/* Summary tables                                                            */

/* paddle.profiler SortedKeys: how the Operator, Kernel and UserDefined
 * tables are sorted. */
typedef enum sp_sorted_key {
    SP_SORTED_CPU_TOTAL = 0,
    SP_SORTED_CPU_AVG = 1,
    SP_SORTED_CPU_MAX = 2,
    SP_SORTED_CPU_MIN = 3,
    SP_SORTED_GPU_TOTAL = 4,
    SP_SORTED_GPU_AVG = 5,
    SP_SORTED_GPU_MAX = 6,
    SP_SORTED_GPU_MIN = 7
} sp_sorted_key;

/* paddle.profiler SummaryView; sp_summary_options.views is a bitmask of
 * (1u << view). */
typedef enum sp_summary_view {
    SP_VIEW_DEVICE = 0,
    SP_VIEW_OVERVIEW = 1,
    SP_VIEW_MODEL = 2,
    SP_VIEW_DISTRIBUTED = 3,
    SP_VIEW_KERNEL = 4,
    SP_VIEW_OPERATOR = 5,
    SP_VIEW_MEMORY = 6,
    SP_VIEW_MEMORY_MANIPULATION = 7,
    SP_VIEW_UDF = 8
} sp_summary_view;

/* When sp_result_summary prints the Throughput Summary (docs/semantics.md
 * §10: step time, samples/s, tokens/s, FLOPs per step, achieved FLOP/s and
 * MFU, per step's median and over all steps). */
typedef enum sp_throughput_mode {
    SP_THROUGHPUT_OFF = 0,  /* never: paddle's tables only (the default) */
    SP_THROUGHPUT_AUTO = 1, /* when some step has num_samples, or a figure below is given */
    SP_THROUGHPUT_ON = 2    /* always (a figure that cannot be known says why) */
} sp_throughput_mode;

typedef struct sp_summary_options {
    sp_sorted_key sorted_by; /* default SP_SORTED_CPU_TOTAL */
    bool op_detail;          /* default true: inner rows under each operator */
    bool thread_sep;         /* default false: all threads merged */
    const char *time_unit;   /* "s", "ms" (default), "us" or "ns" */
    unsigned views;          /* bits (1u << SP_VIEW_*); 0 means every view */
    /* The Throughput Summary, printed after the tables and before the
     * counters. Each figure below is 0 when not given; given, it must be
     * finite, above 0 and at most 1e12, 1e30 and 1e9 in turn. */
    sp_throughput_mode throughput; /* default SP_THROUGHPUT_OFF */
    double tokens_per_sample;      /* tokens/s = samples/s x this */
    double flops_per_step;         /* FLOPs of one step, instead of the with_flops records' */
    double peak_tflops;            /* the hardware's peak TFLOP/s, instead of the GPU table */
} sp_summary_options;

/* Fills opts with paddle's summary() defaults. Threads: any. */
SP_API void sp_summary_options_init(sp_summary_options *opts);

/* Prints paddle's summary tables of a result to out, in paddle's order
 * (Device, Overview, Model, Distributed, Operator, Kernel, Memory
 * Manipulation, UserDefined, Memory), then a "Counters:" line if any counter
 * of the span is non-zero. A span without events prints one notice line
 * instead. A table without data in this span (no kernels, no memory events,
 * a single Model item, no communication) is left out, as paddle does.
 * With opts.throughput, the Throughput Summary follows the tables.
 * opts may be NULL for the defaults.
 * Errors: SP_EINVAL (NULL result or out, unknown time unit, sort key, view
 * bits or throughput mode, a throughput figure out of range), SP_ENOMEM,
 * SP_EIO (write error).
 * Threads: any (a result is immutable). */
SP_API sp_status sp_result_summary(const sp_result *result, const sp_summary_options *opts, FILE *out);

/* Prints torch's key_averages().table(sort_by, row_limit) for a result: host
 * ranges grouped by their trace name (ProfilerStep#N as "ProfilerStep*"),
 * with Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, the CUDA
 * columns when there is device time, CPU Mem and Self CPU Mem (and the CUDA
 * ones when there is device memory) when the span was recorded with
 * profile_memory, and # of Calls. sort_by is one of torch's keys:
 * "self_cpu_time_total" (NULL), "cpu_time_total", "cpu_time" (average; also
 * "cpu_time_avg"), "count", "self_device_time_total", "device_time_total",
 * "device_time", "cpu_memory_usage", "self_cpu_memory_usage",
 * "device_memory_usage", "self_device_memory_usage", where "device" may be
 * spelled "cuda", "xpu" or "privateuse1" as in torch; or "none" for no key
 * (first-occurrence order, torch's sort_by=None). Rows sort descending, ties
 * in first-occurrence order; a key without data (no device time, no memory
 * events) is 0 for every row, which leaves that order.
 * row_limit < 0 prints every row (torch's default is 100).
 * Errors: SP_EINVAL (NULL result or out, unknown sort_by), SP_ENOMEM, SP_EIO.
 * Threads: any. */
SP_API sp_status sp_result_table_torch(const sp_result *result, const char *sort_by, int row_limit,
                                       FILE *out);

/* One summary table as data, for programs that show tables their own way
 * (the Python package, the CLI, an HTML report) without parsing text. A
 * table is a list of lines; header and row lines have one cell per column,
 * title and text lines have their text in column 0. */
typedef struct sp_summary_table sp_summary_table;

typedef enum sp_line_kind {
    SP_LINE_TITLE = 0,     /* the table's title (or a "Thread: ..." group title) */
    SP_LINE_TEXT = 1,      /* a line of text: "Time unit: ms", notes */
    SP_LINE_SEPARATOR = 2, /* dashes under each column */
    SP_LINE_HEADER = 3,    /* column names */
    SP_LINE_ROW = 4,       /* data */
    SP_LINE_DASHES = 5,    /* a full-width line of dashes */
    SP_LINE_BLANK = 6
} sp_line_kind;

/* Builds the table of one view (SP_VIEW_*) of a result. *out is NULL when
 * that view prints no table for this result (for example the Model Summary
 * with a single item, or views whose data is not recorded yet).
 * Owned: free with sp_summary_table_destroy.
 * Errors: SP_EINVAL (as sp_result_summary, or an unknown view), SP_ENOMEM.
 * Threads: any. */
SP_API sp_status sp_result_summary_table(const sp_result *result, sp_summary_view view,
                                         const sp_summary_options *opts, sp_summary_table **out);

/* Frees a table; NULL does nothing. Threads: any. */
SP_API void sp_summary_table_destroy(sp_summary_table *table);

/* The number of lines and columns of a table. Threads: any. */
SP_API size_t sp_summary_table_lines(const sp_summary_table *table);
SP_API size_t sp_summary_table_columns(const sp_summary_table *table);

/* The kind of a line (SP_LINE_BLANK when out of range). Threads: any. */
SP_API sp_line_kind sp_summary_table_line_kind(const sp_summary_table *table, size_t line);

/* A cell's text ("" when out of range). Borrowed: valid until the table is
 * destroyed. Threads: any. */
SP_API const char *sp_summary_table_cell(const sp_summary_table *table, size_t line, size_t column);

/* ---- Diagnosis and the regression gate (docs/diagnose.md) ---- */

typedef enum sp_diagnose_format {
    SP_DIAGNOSE_TEXT = 0, /* for people: one paragraph per verdict */
    SP_DIAGNOSE_JSON = 1  /* one JSON object (docs/diagnose.md §3) */
} sp_diagnose_format;

/* Prints the verdicts on a result's steps: dataloader-, launch-, sync-,
 * communication- or optimizer-bound, slow steps, or "no dominant
 * bottleneck", each with its evidence (the numbers and the steps they come
 * from) and a recommendation. The rules and their thresholds are those of
 * docs/diagnose.md §2.
 * Errors: SP_EINVAL (NULL result or out, unknown format), SP_ENODATA (the
 * result has no step, i.e. no ProfileStep range: nothing is written),
 * SP_ENOMEM, SP_EIO (write error).
 * Threads: any (a result is immutable). */
SP_API sp_status sp_result_diagnose(const sp_result *result, sp_diagnose_format format, FILE *out);

/* What sp_result_compare_steps found. Times are medians of per-step values. */
typedef struct sp_step_comparison {
    size_t base_steps, new_steps; /* steps (ProfileStep ranges) of each */
    double base_median_ns, new_median_ns;
    double change;   /* new_median / base_median - 1; HUGE_VAL when only NEW has time */
    double p_value;  /* one-sided Mann-Whitney U: how likely NEW's steps are this much
                        slower by chance; 1 when not tested */
    bool tested;     /* both have 3 steps or more, so the spread test ran */
    bool regression; /* change > threshold and (p_value < 0.01, or not tested) */
} sp_step_comparison;

/* Compares one metric's per-step values of two results (BASE and NEW) and
 * says whether NEW regressed by more than threshold (0.05 for 5%). metric:
 * "step" or NULL (step time), "phase:NAME" (Dataloader, Forward, Backward,
 * Optimization, Communication, Other, or any host event type), "op:NAME"
 * (host ranges of that name) or "kernel:NAME" (kernels of that name); each
 * step's value is the merged time of those ranges inside the step.
 * Deterministic: the same two results always give the same answer.
 * Errors: SP_EINVAL (NULL argument, negative threshold, unknown metric),
 * SP_ENODATA (a result without steps, or a metric found in neither),
 * SP_ENOMEM.
 * Threads: any. */
SP_API sp_status sp_result_compare_steps(const sp_result *base, const sp_result *changed,
                                         const char *metric, double threshold,
                                         sp_step_comparison *out);

/* ---- Many ranks (semantics.md §6.10) ---- */

/* Prints the cross-rank summary of a distributed job from one result per
 * rank: per rank the step time split into compute, communication, overlap,
 * exposed communication and idle (means per step); per collective its calls,
 * time and the ranks' wait; and the stragglers: the rank that made the
 * others wait in a collective, the phase of the step where it fell behind,
 * by how much, and in which steps. Collectives are matched across ranks by
 * their order, and waits are read from their durations, so the ranks need
 * no common clock. When the collectives carry records (sp_profiler_add_comm_info,
 * torch's), an operation is the collectives of one process group and seq.
 * ranks[i] is the rank of results[i]; NULL takes each result's own rank
 * (sp_result_dist_info), or their positions when two say the same rank;
 * time_unit is "s", "ms" (NULL), "us" or "ns".
 * Errors: SP_EINVAL (NULL or empty input, a rank given twice, an unknown
 * unit), SP_ENOMEM, SP_EIO.
 * Threads: any (results are immutable). */
SP_API sp_status sp_results_rank_summary(const sp_result *const *results, const int64_t *ranks,
                                         size_t count, const char *time_unit, FILE *out);

/* ---- The HTML report (docs/report.md) ---- */

typedef struct sp_report_options {
    /* A second result to compare with: every figure of the report is shown
     * beside the baseline's, with its change. NULL (the default): none. */
    const sp_result *baseline;
    /* The report's title; NULL (the default): the program's name. */
    const char *title;
    /* What the result came from ("run.json"), shown in the header; NULL:
     * nothing shown. The same for the baseline. */
    const char *source, *baseline_source;
    /* A distributed job's ranks, for the cross-rank section (as
     * sp_results_rank_summary prints it): one result per rank, the report's
     * own result among them, and their ranks (NULL: as sp_results_rank_summary
     * takes them). With fewer than two (the default: none) the section is
     * left out. */
    const sp_result *const *ranks;
    const int64_t *rank_ids;
    size_t rank_count;
    /* The throughput section's inputs, as sp_summary_options' (0: not
     * given): tokens per sample, FLOPs per step and the peak TFLOP/s. */
    double tokens_per_sample, flops_per_step, peak_tflops;
} sp_report_options;

/* Fills opts with the defaults. Threads: any. */
SP_API void sp_report_options_init(sp_report_options *opts);

/* Writes one self-contained HTML page about result to path: no network,
 * no external script, style or font; charts are inline SVG. It holds the
 * diagnosis, the per-step breakdown, the summary tables (the same cells as
 * sp_result_summary with default options, sortable), the top operators and
 * kernels, GPU utilisation over time, the median step's events as a
 * zoomable timeline, the memory curve, throughput (samples/s, tokens/s,
 * FLOP/s and MFU per step, where known), and with opts->ranks the
 * cross-rank tables of sp_results_rank_summary. A result with no steps, no host
 * events or no GPU records still gets a page, which says what is missing.
 * Every recorded name is escaped, so no name can inject markup or script.
 * The page holds aggregates and one step's events (at most a fixed number,
 * the shortest left out and counted), not every event, so its size does not
 * grow with the trace. The file is written to a temporary name and renamed.
 * Errors: SP_EINVAL (NULL result or path, a NULL rank result, a rank given
 * twice, a throughput input out of range), SP_ENOMEM, SP_EIO.
 * Threads: any (results are immutable). */
SP_API sp_status sp_result_report(const sp_result *result, const sp_report_options *opts,
                                  const char *path);

#ifdef __cplusplus
}
#endif

#endif /* STEPPROF_STEPPROF_H */
