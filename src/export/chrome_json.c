/* chrome_json.c: writes a result as Chrome-trace JSON in Kineto's dialect
 * (trace-format.md), which Perfetto, chrome://tracing, the TensorBoard plugin
 * and HTA read. Names are escaped and repaired, so any bytes give valid JSON;
 * times are microseconds with exactly three decimals after the base time, so
 * nanosecond order survives. The file streams out through sp__out, so memory
 * stays bounded by the flush size, not the trace size. GPU records and op
 * supplements are written by json_gpu.c, which relies on the External id
 * rule kept here: every host event but instants and counters takes the next
 * id, in write order.
 *
 * A host line carries only the args that tell a reader something
 * (trace-format.md §6): "External id" only where the file links records by
 * it (a span with CUDA calls or device records, and collectives), "Event
 * Type" only where stepprof's loader could not tell the type from cat and
 * name (json_kineto.c's rule, the one it applies to torch's traces), and no
 * "args" at all when nothing is left. */
#include "export.h"
#include "json_comm.h"
#include "json_escape.h"
#include "json_gpu.h"
#include "json_heads.h"
#include "json_kineto.h"
#include "json_python.h"
#include "perfetto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUARTER_NS (7889238ll * 1000000000ll)

/* `"Event Type":"<type>"}},` and a newline: how every host line ends. */
typedef struct line_tail {
    char text[48];
    size_t len;
} line_tail;

typedef struct writer {
    sp__out *out;
    sp__buf *b;
    const sp_result *r;
    int64_t base_ns;
    uint64_t next_external_id;
    sp__json_heads heads; /* heads.count 0: every line is rendered in full */
    uint8_t *typed;       /* name id -> 1: its cached head's type needs "Event Type" */
    int write_ids;        /* 1: the file links records by External id */
    sp__buf scratch;      /* a head being rendered */
    char track[48];       /* `<tid>,"ts":` of the thread being written */
    size_t track_len;
    line_tail tails[SP_EVENT_TYPE_COUNT];
    int plugin_durations; /* 1: durations the TensorBoard plugin nests right */
    const sp__event *events; /* the thread being written */
    struct plugin_range *open; /* its open ranges, for plugin_durations */
    size_t open_count, open_cap;
    const int32_t *comm_of; /* the thread's events' collective records (json_comm.c), or NULL */
    sp__json_py py; /* Python ids of the PythonOp ranges (json_python.c) */
} writer;

/* The TensorBoard plugin nests host ranges with doubles: a range B is inside
 * A when ts_B < ts_A + dur_A, and must then end by ts_A + dur_A, else it logs
 * "ranges on the same thread should not intersect" and drops B. Late in the
 * base time's quarter (ts above about 4.4e12 us) a double's step is about
 * 1 ns, so the rounded sum ts_A + dur_A can exceed the ts of a sibling B that
 * starts exactly where A ends, or the sum of A's parent (found by
 * tests/compat in train_mlp's traces). So in files named for the plugin
 * (*.pt.trace.json[.gz]) each range's dur is cut by the fewest ns (at most
 * 3) that keep the double sum of its ts and dur at or below both the double
 * of its end written as a ts and its parent's sum, and never past its
 * parent's written end: nesting then holds for the plugin's doubles and for
 * exact ns alike. The text <us>.<3 digits> of ns reads back as the double
 * nearest ns / 1000, which is what the division below gives, so C and Python
 * agree. Other file names keep exact durations (stepprof's loader restores
 * them to the ns). Ranges are written in pre-order, so the open ancestors of
 * a range are a stack. */
typedef struct plugin_range {
    int32_t index;  /* in the thread's events */
    int64_t end_ns; /* written end, relative to the base time */
    double sum;     /* the plugin's ts + dur */
} plugin_range;

static int64_t plugin_dur(writer *w, const sp__event *e, int64_t ts_ns)
{
    while (w->open_count && w->open[w->open_count - 1].index != e->parent) w->open_count--;
    int64_t end = ts_ns + (e->end_ns - e->start_ns);
    volatile double limit = (double)end / 1000.0;
    if (w->open_count) {
        const plugin_range *parent = &w->open[w->open_count - 1];
        if (parent->end_ns < end) end = parent->end_ns;
        if (parent->sum < limit) limit = parent->sum;
    }
    int64_t dur = end > ts_ns ? end - ts_ns : 0;
    volatile double t = (double)ts_ns / 1000.0, sum = t + (double)dur / 1000.0;
    for (int64_t cut = 1; cut <= 3 && cut <= dur && sum > limit; cut++) {
        sum = t + (double)(dur - cut) / 1000.0;
        if (sum <= limit) dur -= cut;
    }
    if (w->open_count == w->open_cap) {
        size_t cap = w->open_cap ? w->open_cap * 2 : 64;
        plugin_range *grown = sp__realloc(w->open, sizeof *grown * cap);
        if (!grown) return dur; /* this range's children go unclamped: exact times */
        w->open = grown;
        w->open_cap = cap;
    }
    w->open[w->open_count++] = (plugin_range){(int32_t)(e - w->events), ts_ns + dur, t + (double)dur / 1000.0};
    return dur;
}

/* The dur written for host range e, whose ts relative to the base is ts_ns. */
static int64_t dur_of(writer *w, const sp__event *e, int64_t ts_ns)
{
    return w->plugin_durations ? plugin_dur(w, e, ts_ns) : e->end_ns - e->start_ns;
}

int64_t sp__base_time_ns(void)
{
    static _Atomic int64_t base;
    int64_t b = atomic_load(&base);
    if (b == 0) {
        int64_t now = sp__clock_real_now();
        b = now / QUARTER_NS * QUARTER_NS;
        int64_t expected = 0;
        if (!atomic_compare_exchange_strong(&base, &expected, b)) b = expected;
    }
    return b;
}

/* Appends v in decimal. Hand-written because printf was the exporter's
 * largest cost (docs/performance.md). */
void sp__json_put_u64(sp__buf *b, uint64_t v)
{
    if (sp__buf_reserve(b, 20) != 0) return;
    b->len = (size_t)(sp__json_u64_at(b->data + b->len, v) - b->data);
}

/* Writes v in decimal at p; returns the end. */
char *sp__json_u64_at(char *p, uint64_t v)
{
    char digits[20];
    char *d = digits + sizeof digits;
    do {
        *--d = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    size_t n = (size_t)(digits + sizeof digits - d);
    memcpy(p, d, n);
    return p + n;
}

/* Writes ns as microseconds with three decimals at p (clamped at 0). */
static char *us_at(char *p, int64_t ns)
{
    if (ns < 0) ns = 0;
    p = sp__json_u64_at(p, (uint64_t)ns / 1000);
    unsigned frac = (unsigned)((uint64_t)ns % 1000);
    p[0] = '.';
    p[1] = (char)('0' + frac / 100);
    p[2] = (char)('0' + frac / 10 % 10);
    p[3] = (char)('0' + frac % 10);
    return p + 4;
}

#define put_u64 sp__json_put_u64

static char *text_at(char *p, const char *text, size_t len)
{
    memcpy(p, text, len);
    return p + len;
}

/* Appends `,"key":` then ns as microseconds with exactly three decimals
 * (negative values are clamped to 0, trace-format.md §3). */
void sp__json_put_time(sp__buf *b, const char *key, int64_t ns)
{
    if (ns < 0) ns = 0;
    sp__buf_puts(b, ",\"");
    sp__buf_puts(b, key);
    sp__buf_puts(b, "\":");
    put_u64(b, (uint64_t)ns / 1000);
    unsigned frac = (unsigned)((uint64_t)ns % 1000);
    char tail[4] = {'.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10), (char)('0' + frac % 10)};
    sp__buf_append(b, tail, sizeof tail);
}

static void put_time(writer *w, const char *key, int64_t ns) { sp__json_put_time(w->b, key, ns); }

/* Appends `,"pid":<pid>,"tid":<tid>`. */
/* Appends `,"pid":<pid>,"tid":` (the tid follows). */
static void put_pid(writer *w)
{
    sp__buf_puts(w->b, ",\"pid\":");
    if (w->r->meta.pid < 0) sp__buf_putc(w->b, '-');
    put_u64(w->b, (uint64_t)(w->r->meta.pid < 0 ? -w->r->meta.pid : w->r->meta.pid));
    sp__buf_puts(w->b, ",\"tid\":");
}

static void put_track(writer *w, uint64_t tid)
{
    put_pid(w);
    put_u64(w->b, tid);
}

static void put_str(writer *w, const char *s) { sp__json_put_string(w->b, s, strlen(s)); }

static const char *const collectives[] = {"nccl:all_reduce", "nccl:broadcast", "nccl:reduce",
                                          "nccl:all_gather", "nccl:reduce_scatter", "gloo:all_reduce",
                                          "gloo:broadcast", "gloo:reduce", "gloo:all_gather",
                                          "gloo:reduce_scatter"};

static int is_collective(const char *name)
{
    for (size_t i = 0; i < sizeof collectives / sizeof *collectives; i++)
        if (strcmp(name, collectives[i]) == 0) return 1;
    return 0;
}

static const char *category(const sp__event *e, const char *name)
{
    switch (e->type) {
    case SP_EVENT_OPERATOR:
    case SP_EVENT_DATALOADER:
        return "cpu_op";
    case SP_EVENT_COMMUNICATION:
        return is_collective(name) ? "cpu_op" : "user_annotation";
    case SP_EVENT_PYTHON_OP:
        return "python_function";
    case SP_EVENT_BACKWARD:
        /* torch's autograd engine range around each node (stepprof types it
         * Backward for paddle's Overview): an op to Kineto and its viewers. */
        return strncmp(name, "autograd::engine::evaluate_function: ", 37) == 0 ? "cpu_op"
                                                                              : "user_annotation";
    default:
        return "user_annotation";
    }
}

int sp__json_event_is_op(const sp_result *r, const sp__event *e)
{
    const char *name = sp__result_name(r, e->name);
    return strcmp(category(e, name ? name : ""), "cpu_op") == 0;
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The JSON spelling of a recorded name (trace-format.md §6), into out
 * unescaped: paddle's "ProfileStep#N" becomes torch's "ProfilerStep#N",
 * and a Dataloader range gets the enumerate(DataLoader)#...__next__ form
 * the plugin looks for. The step names are reserved: the TensorBoard plugin
 * and HTA take every event whose name starts with "ProfilerStep" for a step,
 * so a user's range or instant of another type named "ProfilerStep#..." or
 * "ProfileStep#..." is written with the prefix "user:" (docs/viewers.md,
 * "Reserved names"). */
static void written_name(sp__buf *out, const sp__event *e, const char *name)
{
    size_t len = strlen(name);
    if (e->type == SP_EVENT_PROFILE_STEP && starts_with(name, "ProfileStep#")) {
        sp__buf_puts(out, "ProfilerStep#");
        sp__buf_append(out, name + 12, len - 12);
        return;
    }
    if (e->type != SP_EVENT_PROFILE_STEP &&
        (starts_with(name, "ProfilerStep") || starts_with(name, "ProfileStep#"))) {
        sp__buf_puts(out, "user:");
        sp__buf_append(out, name, len);
        return;
    }
    int wrapped = e->type == SP_EVENT_DATALOADER &&
                  !(starts_with(name, "enumerate(DataLoader)#") && len >= 9 &&
                    strcmp(name + len - 9, ".__next__") == 0);
    if (wrapped) sp__buf_puts(out, "enumerate(DataLoader)#");
    sp__buf_append(out, name, len);
    if (wrapped) sp__buf_puts(out, ".__next__");
}

static int renamed(const sp__event *e, const char *name)
{
    return e->type == SP_EVENT_PROFILE_STEP || e->type == SP_EVENT_DATALOADER ||
           starts_with(name, "ProfilerStep") || starts_with(name, "ProfileStep#");
}

static void put_event_name(sp__buf *out, const sp__event *e, const char *name)
{
    if (!renamed(e, name)) {
        sp__json_put_string(out, name, strlen(name));
        return;
    }
    sp__buf b;
    sp__buf_init(&b);
    written_name(&b, e, name);
    sp__json_put_string(out, b.data ? b.data : "", b.len);
    if (b.failed) out->failed = 1;
    sp__buf_fini(&b);
}

/* Whether range e (not an instant) needs its "Event Type": 0 when the
 * loader gives a range of its cat and written name that type without one
 * (load_json.c: the kineto rule, else Operator for cpu_op, PythonOp for
 * python_function, UserDefined otherwise). Communication ranges keep it:
 * the merge finds collectives by it. On no memory: 1, the safe answer. */
static int needs_type(const sp__event *e, const char *name)
{
    if ((e->flags & SP_EVENT_FLAG_INSTANT) || e->type == SP_EVENT_COMMUNICATION) return 1;
    const char *cat = category(e, name);
    sp_event_type fallback = strcmp(cat, "cpu_op") == 0            ? SP_EVENT_OPERATOR
                             : strcmp(cat, "python_function") == 0 ? SP_EVENT_PYTHON_OP
                                                                   : SP_EVENT_USER_DEFINED;
    if (!renamed(e, name)) return sp__kineto_type(cat, name, fallback) != (sp_event_type)e->type;
    sp__buf b;
    sp__buf_init(&b);
    written_name(&b, e, name);
    int needed = b.failed || sp__kineto_type(cat, sp__buf_cstr(&b), fallback) != (sp_event_type)e->type;
    sp__buf_fini(&b);
    return needed;
}

void sp__json_put_event_name(sp__buf *b, const sp_result *r, const sp__event *e)
{
    put_event_name(b, e, sp__result_name(r, e->name));
}

static void put_metadata(writer *w, const char *what, int64_t pid, uint64_t tid, const char *key,
                         const char *text, int64_t number)
{
    sp__buf_printf(w->b, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%lld,\"tid\":%llu", what,
                   (long long)pid, (unsigned long long)tid);
    put_time(w, "ts", w->r->span_start_ns - w->base_ns);
    sp__buf_printf(w->b, ",\"args\":{\"%s\":", key);
    if (text)
        put_str(w, text);
    else
        sp__buf_printf(w->b, "%lld", (long long)number);
    sp__buf_puts(w->b, "}},\n");
}

static void put_tracks(writer *w)
{
    const sp_result *r = w->r;
    int64_t pid = r->meta.pid;
    put_metadata(w, "process_name", pid, 0, "name", r->meta.process_name, 0);
    put_metadata(w, "process_labels", pid, 0, "labels", "CPU", 0);
    put_metadata(w, "process_sort_index", pid, 0, "sort_index", NULL, pid);
    for (size_t i = 0; i < r->thread_count; i++) {
        const sp__thread *t = &r->threads[i];
        sp__buf label;
        sp__buf_init(&label);
        sp__buf_printf(&label, "thread %llu (%s)", (unsigned long long)t->tid,
                       sp__result_name(r, t->name));
        put_metadata(w, "thread_name", pid, t->tid, "name", sp__buf_cstr(&label), 0);
        if (label.failed) w->b->failed = 1;
        sp__buf_fini(&label);
        put_metadata(w, "thread_sort_index", pid, t->tid, "sort_index", NULL, (int64_t)t->tid);
    }
}

/* Renders `{"ph":..,"cat":..,"name":..,"pid":N,"tid":` for e into the cache,
 * and notes whether its type needs "Event Type"; NULL if it cannot be kept. */
static const char *render_head(writer *w, const sp__event *e, uint8_t key, size_t *len)
{
    const char *name = sp__result_name(w->r, e->name);
    int instant = (e->flags & SP_EVENT_FLAG_INSTANT) != 0;
    sp__buf *out = w->b;
    w->b = &w->scratch;
    w->scratch.len = 0;
    sp__buf_puts(w->b, instant ? "{\"ph\":\"i\",\"cat\":\"" : "{\"ph\":\"X\",\"cat\":\"");
    sp__buf_puts(w->b, category(e, name));
    sp__buf_puts(w->b, instant ? "\",\"s\":\"t\",\"name\":" : "\",\"name\":");
    put_event_name(w->b, e, name);
    put_pid(w); /* the tid is written per thread */
    w->b = out;
    if (w->scratch.failed) return NULL;
    sp__json_head_store(&w->heads, e->name, key, w->scratch.data, w->scratch.len);
    w->typed[e->name] = (uint8_t)needs_type(e, name);
    return sp__json_head_find(&w->heads, e->name, key, len);
}

/* Whether host range e carries its External id (see the file's comment). */
static int writes_id(const writer *w, const sp__event *e)
{
    return w->write_ids || e->type == SP_EVENT_COMMUNICATION;
}

/* Ends a line whose args began at args_at (`,"args":{` and pieces that each
 * end in a comma): with "Event Type" when typed, else without the last
 * comma, or without args at all when there are none. */
static void end_line(writer *w, size_t args_at, int typed, const sp__event *e)
{
    sp__buf *b = w->b;
    if (typed) {
        const line_tail *tail = &w->tails[e->type < SP_EVENT_TYPE_COUNT ? e->type : 0];
        sp__buf_append(b, tail->text, tail->len);
        return;
    }
    if (b->failed) return;
    if (b->len == args_at + 9) {
        b->len = args_at;
        sp__buf_puts(b, "},\n");
    } else {
        b->len--; /* the last piece's comma */
        sp__buf_puts(b, "}},\n");
    }
}

/* A host range or instant from its cached head: a few copies and three
 * numbers, no escaping or lookups (docs/performance.md). 0 if not done. */
static int put_event_fast(writer *w, const sp__event *e)
{
    uint8_t key = sp__json_head_key(e->type, (e->flags & SP_EVENT_FLAG_INSTANT) != 0);
    size_t head_len;
    const char *head = sp__json_head_find(&w->heads, e->name, key, &head_len);
    if (!head && !(head = render_head(w, e, key, &head_len))) return 0;
    const line_tail *tail = &w->tails[e->type < SP_EVENT_TYPE_COUNT ? e->type : 0];
    static const char dur[] = ",\"dur\":", ext[] = ",\"args\":{\"External id\":",
                      args[] = ",\"args\":{";
    /* head, track, ts, dur, id: 3 numbers of at most 24 bytes each */
    if (sp__buf_reserve(w->b, head_len + w->track_len + sizeof dur + sizeof ext + tail->len + 80))
        return 1; /* failed is sticky: the file is reported bad */
    int typed = w->typed[e->name];
    char *p = text_at(w->b->data + w->b->len, head, head_len);
    p = text_at(p, w->track, w->track_len);
    p = us_at(p, e->start_ns - w->base_ns);
    if (e->flags & SP_EVENT_FLAG_INSTANT) {
        p = text_at(p, args, sizeof args - 1); /* instants always carry their type */
    } else {
        p = text_at(p, dur, sizeof dur - 1);
        p = us_at(p, dur_of(w, e, e->start_ns - w->base_ns));
        ++w->next_external_id; /* numbered whether written or not: json_gpu.c counts them */
        if (writes_id(w, e)) {
            p = text_at(p, ext, sizeof ext - 1);
            p = sp__json_u64_at(p, w->next_external_id);
            if (!typed) {
                p = text_at(p, "}},\n", 4);
                w->b->len = (size_t)(p - w->b->data);
                return 1;
            }
            *p++ = ',';
        } else if (typed) {
            p = text_at(p, args, sizeof args - 1);
        } else {
            p = text_at(p, "},\n", 3);
            w->b->len = (size_t)(p - w->b->data);
            return 1;
        }
    }
    p = text_at(p, tail->text, tail->len);
    w->b->len = (size_t)(p - w->b->data);
    return 1;
}

/* A Python call (PythonOp) from its cached head, then its Python ids
 * (json_python.c): with_stack spans hold millions of them. 0 if not done. */
static int put_python_fast(writer *w, const sp__thread *t, const sp__event *e, size_t index)
{
    uint8_t key = sp__json_head_key(e->type, 0);
    size_t head_len;
    const char *head = sp__json_head_find(&w->heads, e->name, key, &head_len);
    if (!head && !(head = render_head(w, e, key, &head_len))) return 0;
    static const char dur[] = ",\"dur\":", args[] = ",\"args\":{";
    if (sp__buf_reserve(w->b, head_len + w->track_len + sizeof dur + sizeof args + 48))
        return 1; /* failed is sticky: the file is reported bad */
    char *p = text_at(w->b->data + w->b->len, head, head_len);
    p = text_at(p, w->track, w->track_len);
    p = us_at(p, e->start_ns - w->base_ns);
    p = text_at(p, dur, sizeof dur - 1);
    p = us_at(p, dur_of(w, e, e->start_ns - w->base_ns));
    size_t args_at = (size_t)(p - w->b->data);
    p = text_at(p, args, sizeof args - 1);
    w->b->len = (size_t)(p - w->b->data);
    sp__json_py_args(&w->py, w->b, w->r, t, index);
    end_line(w, args_at, w->typed[e->name], e);
    return 1;
}

/* A host event; op >= 0 names the op supplement whose args it carries
 * (those lines are rendered in full). */
static void put_event(writer *w, const sp__thread *t, const sp__event *e, int32_t op)
{
    size_t index = (size_t)(e - t->events);
    int32_t comm = w->comm_of ? w->comm_of[index] : -1;
    int python = w->py.active && !(e->flags & SP_EVENT_FLAG_INSTANT) &&
                 (e->type == SP_EVENT_PYTHON_OP || sp__json_py_has_stack(&w->py, t, index));
    if (op < 0 && comm < 0 && !python && !(e->flags & (SP_EVENT_FLAG_COUNTER | SP_EVENT_FLAG_SAMPLES)) &&
        w->heads.count && put_event_fast(w, e))
        return;
    if (op < 0 && python && e->type == SP_EVENT_PYTHON_OP && w->heads.count &&
        put_python_fast(w, t, e, index))
        return;
    const char *name = sp__result_name(w->r, e->name);
    if (e->flags & SP_EVENT_FLAG_COUNTER) {
        sp__buf_puts(w->b, "{\"ph\":\"C\",\"name\":");
        put_str(w, name);
        sp__buf_printf(w->b, ",\"pid\":%lld,\"tid\":%llu", (long long)w->r->meta.pid,
                       (unsigned long long)t->tid);
        put_time(w, "ts", e->start_ns - w->base_ns);
        sp__buf_puts(w->b, ",\"args\":{");
        put_str(w, name);
        sp__buf_putc(w->b, ':');
        sp__json_put_double(w->b, e->value);
        sp__buf_puts(w->b, "}},\n");
        return;
    }
    int instant = (e->flags & SP_EVENT_FLAG_INSTANT) != 0;
    sp__buf_puts(w->b, instant ? "{\"ph\":\"i\",\"cat\":\"" : "{\"ph\":\"X\",\"cat\":\"");
    sp__buf_puts(w->b, category(e, name));
    sp__buf_puts(w->b, instant ? "\",\"s\":\"t\",\"name\":" : "\",\"name\":");
    put_event_name(w->b, e, name);
    put_track(w, t->tid);
    put_time(w, "ts", e->start_ns - w->base_ns);
    if (!instant) put_time(w, "dur", dur_of(w, e, e->start_ns - w->base_ns));
    size_t args_at = w->b->len;
    sp__buf_puts(w->b, ",\"args\":{");
    if (python && e->type == SP_EVENT_PYTHON_OP) {
        sp__json_py_args(&w->py, w->b, w->r, t, index); /* Kineto gives them no External id */
    } else if (!instant) {
        ++w->next_external_id;
        if (writes_id(w, e)) {
            sp__buf_puts(w->b, "\"External id\":");
            put_u64(w->b, w->next_external_id);
            sp__buf_putc(w->b, ',');
        }
        if (op >= 0) sp__json_put_op_args(w->b, w->r, t, (size_t)op);
        if (e->flags & SP_EVENT_FLAG_SAMPLES)
            sp__buf_printf(w->b, "\"num_samples\":%.0f,", e->value);
        if (comm >= 0) sp__json_put_comm_args(w->b, w->r, &t->comms[comm]);
        if (python && strcmp(category(e, name), "cpu_op") == 0 &&
            (op < 0 || !*sp__result_name(w->r, t->ops[op].callstack)))
            sp__json_py_call_stack(w->b, w->r, t, index); /* one Call stack at most */
    }
    end_line(w, args_at, needs_type(e, name), e);
}

/* "Place(gpu:3)" -> device 3, type 1 (CUDA); anything else -> -1, 0 (CPU). */
static void place_device(const char *place, long *id, int *type)
{
    const char *gpu = strstr(place, "gpu:");
    char *end;
    long n = gpu ? strtol(gpu + 4, &end, 10) : -1;
    *id = gpu && end != gpu + 4 && n >= 0 ? n : -1;
    *type = *id >= 0;
}

/* An allocator event (trace-format.md §6 "[memory]"); reserved-memory
 * changes get their own name (§8) so they do not count as allocations. */
static void put_memory(writer *w, const sp__thread *t, const sp__mem_event *m)
{
    long device;
    int device_type;
    place_device(sp__result_name(w->r, m->place), &device, &device_type);
    int reserved = m->type == SP_MEM_RESERVED_ALLOCATE || m->type == SP_MEM_RESERVED_FREE;
    sp__buf_printf(w->b, "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"%s\","
                         "\"pid\":%lld,\"tid\":%llu",
                   reserved ? "[reserved memory]" : "[memory]", (long long)w->r->meta.pid,
                   (unsigned long long)t->tid);
    put_time(w, "ts", m->ts_ns - w->base_ns);
    sp__buf_printf(w->b,
                   ",\"args\":{\"Addr\":%llu,\"Bytes\":%lld,\"Total Allocated\":%llu,"
                   "\"Total Reserved\":%llu,\"Device Id\":%ld,\"Device Type\":%d}},\n",
                   (unsigned long long)m->addr, (long long)m->bytes,
                   (unsigned long long)m->current_allocated, (unsigned long long)m->current_reserved,
                   device, device_type);
}

static void put_span_marker(writer *w)
{
    const sp_result *r = w->r;
    sp__buf_puts(w->b, "{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\","
                       "\"pid\":\"Spans\",\"tid\":\"PyTorch Profiler\"");
    put_time(w, "ts", r->span_start_ns - w->base_ns);
    put_time(w, "dur", r->span_end_ns - r->span_start_ns);
    sp__buf_puts(w->b, ",\"args\":{\"Op count\":0}},\n");
    sp__buf_puts(w->b, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"Record Window End\",\"pid\":\"\",\"tid\":\"\"");
    put_time(w, "ts", r->span_end_ns - w->base_ns);
    sp__buf_puts(w->b, "}\n");
}

static void put_header(writer *w, const char *path)
{
    const sp_result *r = w->r;
    const char *backend = sp__dist_backend(r);
    (void)path;
    sp__buf_puts(w->b, "{\"schemaVersion\":1,\"deviceProperties\":");
    sp__json_put_device_props(w->b, r);
    /* A space after each colon: HTA finds the rank with "rank":\s+(\d+),
     * the first match in the file, so "rank" precedes "local_rank". */
    sp__buf_puts(w->b, ",\n\"distributedInfo\":{");
    if (backend) sp__buf_printf(w->b, "\"backend\": \"%s\", ", backend);
    sp__buf_printf(w->b, "\"rank\": %lld, \"world_size\": %lld", (long long)r->meta.rank,
                   (long long)r->meta.world_size);
    sp__buf_printf(w->b, ", \"local_rank\": %lld, \"local_world_size\": %lld, \"hostname\": ",
                   (long long)r->meta.local_rank, (long long)r->meta.local_world_size);
    put_str(w, r->meta.hostname);
    sp__buf_puts(w->b, ", \"job\": ");
    put_str(w, r->meta.job);
    sp__buf_printf(w->b, "},\n\"stepprof_version\":\"%s\",\"span_indx\":%u,\n\"ExtraInfo\":{",
                   SP_VERSION_STRING, r->span_index);
    /* Every digit a double needs (%.17g), not paddle's %f: with six
     * decimals a reloaded trace printed 35.38% where the live span printed
     * 35.37%. Still a number string, as paddle's readers expect. */
    sp__buf_printf(w->b, "\"System Cpu Utilization\":\"%.17g\",\"Process Cpu Utilization\":\"%.17g\"",
                   r->meta.cpu_system, r->meta.cpu_process);
    for (size_t i = 0; i < r->thread_count; i++) {
        char tid[24];
        snprintf(tid, sizeof tid, "%llu", (unsigned long long)r->threads[i].tid);
        sp__buf_puts(w->b, ",");
        put_str(w, tid);
        sp__buf_putc(w->b, ':');
        put_str(w, sp__result_name(r, r->threads[i].name));
    }
    sp__buf_puts(w->b, "},\n\"stepprof_counters\":{");
    for (int c = 0; c < SP_COUNTER_COUNT; c++)
        sp__buf_printf(w->b, "%s\"%s\":%llu", c ? "," : "", sp_counter_name((sp_counter_kind)c),
                       (unsigned long long)r->counters[c]);
    sp__buf_puts(w->b, "},\n");
    /* Which threads the cap dropped events on (stepprof's loader reads it). */
    const char *sep = "\"stepprof_thread_drops\":{";
    for (size_t i = 0; i < r->thread_count; i++) {
        if (!r->threads[i].dropped) continue;
        sp__buf_printf(w->b, "%s\"%llu\":%llu", sep, (unsigned long long)r->threads[i].tid,
                       (unsigned long long)r->threads[i].dropped);
        sep = ",";
    }
    if (*sep == ',') sp__buf_puts(w->b, "},\n");
    /* torch's flags as Kineto writes them: the integer 1 when on. The cap's
     * policy is stepprof's own key and keeps its string "1". */
    if (r->meta.record_shapes) sp__buf_puts(w->b, "\"record_shapes\":1,");
    if (r->meta.profile_memory) sp__buf_puts(w->b, "\"profile_memory\":1,");
    if (r->meta.with_stack) sp__buf_puts(w->b, "\"with_stack\":1,");
    if (r->meta.with_flops) sp__buf_puts(w->b, "\"with_flops\":1,");
    if (r->meta.overwrite_oldest) sp__buf_puts(w->b, "\"overwrite_oldest\":\"1\",");
    sp__buf_printf(w->b, "\"displayTimeUnit\":\"ms\",\"baseTimeNanoseconds\":%lld,\n\"traceEvents\":[\n",
                   (long long)w->base_ns);
}

/* The per-type line ends, and the head cache (left empty, so every line is
 * rendered in full, if it gets no memory). */
static void prepare_lines(writer *w)
{
    for (int t = 0; t < SP_EVENT_TYPE_COUNT; t++) {
        line_tail *tail = &w->tails[t];
        int n = snprintf(tail->text, sizeof tail->text, "\"Event Type\":\"%s\"}},\n",
                         sp_event_type_name((sp_event_type)t));
        tail->len = n > 0 && (size_t)n < sizeof tail->text ? (size_t)n : 0;
    }
    sp__buf_init(&w->scratch);
    w->typed = w->r->names.count ? sp__alloc(w->r->names.count) : NULL;
    if (!w->typed || sp__json_heads_init(&w->heads, w->r->names.count) != 0) w->heads.count = 0;
}

/* One thread's events, with its runtime calls merged in start order when it
 * has any (json_gpu.c), then its memory events. */
static void put_thread(writer *w, sp__json_gpu *g, size_t i)
{
    const sp__thread *t = &w->r->threads[i];
    w->events = t->events;
    w->open_count = 0;
    if (sp__json_py_thread(&w->py, t) != 0) w->b->failed = 1;
    char *p = sp__json_u64_at(w->track, t->tid);
    p = text_at(p, ",\"ts\":", 6);
    w->track_len = (size_t)(p - w->track);
    const int32_t *ops = sp__json_gpu_thread(g, i);
    int32_t *comm_of = sp__json_comm_index(t);
    w->comm_of = comm_of;
    if (t->runtime_count == 0 && !ops) {
        for (size_t j = 0; j < t->count; j++) {
            put_event(w, t, &t->events[j], -1);
            sp__out_maybe_flush(w->out);
        }
    } else {
        for (size_t j = 0; j < t->count; j++) {
            if (t->runtime_count) sp__json_put_runtimes_until(g, i, &t->events[j]);
            put_event(w, t, &t->events[j], ops ? ops[j] : -1);
            sp__out_maybe_flush(w->out);
        }
        sp__json_put_runtimes_rest(g, i);
    }
    w->comm_of = NULL;
    sp__free(comm_of);
    for (size_t j = 0; j < t->mem_count; j++) {
        put_memory(w, t, &t->mems[j]);
        sp__out_maybe_flush(w->out);
    }
}

static int ends_with(const char *s, const char *suffix);

static sp_status write_trace(const sp_result *r, const char *path, int gzip)
{
    writer w = {0};
    w.plugin_durations = ends_with(path, ".pt.trace.json") || ends_with(path, ".pt.trace.json.gz");
    w.write_ids = r->device_count > 0;
    for (size_t i = 0; i < r->thread_count; i++)
        if (r->threads[i].runtime_count) w.write_ids = 1;
    sp__json_gpu g;
    sp_status s = sp__out_open(&w.out, path, gzip);
    if (s != SP_OK) return s;
    w.b = sp__out_buf(w.out);
    w.r = r;
    w.base_ns = sp__base_time_ns();
    prepare_lines(&w);
    if (sp__json_gpu_init(&g, r, w.out, w.base_ns, &w.heads) != 0) {
        sp__json_heads_fini(&w.heads);
        sp__buf_fini(&w.scratch);
        sp__free(w.open);
        sp__free(w.typed);
        sp__out_abort(w.out);
        return sp__fail(SP_ENOMEM, "export: no memory for the GPU records of %s", path);
    }
    put_header(&w, path);
    put_tracks(&w);
    sp__json_put_gpu_tracks(&g);
    for (size_t i = 0; i < r->thread_count; i++) put_thread(&w, &g, i);
    sp__json_put_device_tracks(&g);
    put_span_marker(&w);
    sp__buf_puts(w.b, "],\n\"traceName\":");
    put_str(&w, path);
    sp__buf_puts(w.b, "}\n");
    sp__json_gpu_fini(&g);
    sp__json_heads_fini(&w.heads);
    sp__buf_fini(&w.scratch);
    sp__free(w.open);
    sp__free(w.typed);
    sp__json_py_fini(&w.py);
    return sp__out_commit(w.out);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

sp_status sp__export(const sp_result *r, const char *path, sp_format format)
{
    if (!r) return sp__fail(SP_ENODATA, "export: no result to write");
    if (!path || !*path) return sp__fail(SP_EINVAL, "export: empty output path");
    switch (format) {
    case SP_FORMAT_AUTO:
        if (ends_with(path, ".pftrace")) return sp__export_perfetto(r, path);
        return write_trace(r, path, ends_with(path, ".gz"));
    case SP_FORMAT_JSON:
        return write_trace(r, path, 0);
    case SP_FORMAT_JSON_GZ:
        return write_trace(r, path, 1);
    case SP_FORMAT_PROTOBUF:
        return sp__export_protobuf(r, path);
    case SP_FORMAT_PERFETTO:
        return sp__export_perfetto(r, path);
    }
    return sp__fail(SP_EINVAL, "export: unknown format %d", (int)format);
}

sp_status sp_result_export(const sp_result *r, const char *path, sp_format format)
{
    return sp__export(r, path, format);
}
