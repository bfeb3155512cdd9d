/* json_load.h: the state the Chrome-trace JSON reader shares between its
 * files: load_json.c reads the top-level object and finishes the result,
 * json_event.c reads one trace event's fields, json_take.c turns an event
 * into ranges, records and samples. Keys and the few cats and phases that
 * pick a path are told apart by length and bytes as they are read, so no
 * event pays a chain of strcmp calls. */
#ifndef SP_LOAD_JSON_LOAD_H
#define SP_LOAD_JSON_LOAD_H

#include "json_cuda.h"
#include "json_dist.h"
#include "json_lex.h"
#include "json_paddle.h"
#include "load.h"

/* The cats that decide an event's path, known when the cat is read. */
typedef enum sp__jcat {
    SP__JCAT_OTHER,
    SP__JCAT_CPU_OP,
    SP__JCAT_USER_ANNOTATION,
    SP__JCAT_PYTHON_FUNCTION,
    SP__JCAT_TRACE,
} sp__jcat;

/* The fields of one trace event that matter here. */
typedef struct sp__jevent {
    sp__buf ph, cat, name, s, event_type, arg_name, first_key;
    sp__jcat cat_id;
    int64_t pid, tid, ts, dur;
    int has_pid, has_tid, has_ts, has_dur, has_first_value;
    int bad_type;     /* pid, tid, ts or dur held a value of the wrong type */
    int paddle_tid;   /* the tid was paddle's "<tid>(Python)" or "<tid>(C++)" */
    int helpers_used; /* pa, ca or comm may differ from their reset state */
    double first_value;
    int64_t addr, bytes, total_allocated, total_reserved, device_id, device_type;
    int64_t num_samples; /* a ProfileStep's args "num_samples"; -1 = none */
    sp__paddle_args pa;
    sp__cuda_args ca;
    sp__comm_args comm;
} sp__jevent;

typedef struct sp__jplace_peak {
    uint32_t place;
    uint64_t allocated, reserved;
} sp__jplace_peak;

typedef struct sp__jthread_name {
    uint64_t tid;
    uint32_t name;
} sp__jthread_name;

/* A host range's type and recorded name, as add_range (json_take.c) works
 * them out from its cat, its "Event Type" and its JSON name; kept for the
 * last names seen, since a trace repeats a few hundred names a million
 * times and working them out (the type tables, the name's hash and its
 * lookup) cost more than the rest of taking the event. */
#define SP__JNAME_SLOTS 64
#define SP__JNAME_MAX 46 /* longer names are not kept here */
#define SP__JTYPE_MAX 22 /* nor longer "Event Type"s */
typedef struct sp__jname_slot {
    uint32_t id;
    uint8_t used, cat_id, type, name_len, type_len;
    char name[SP__JNAME_MAX], event_type[SP__JTYPE_MAX];
} sp__jname_slot;

typedef struct sp__jloader {
    sp__jlex lx;
    sp__builder b;
    const sp_load_options *opts;
    uint64_t total_bytes, next_progress;
    sp__jevent ev;
    int64_t base_ns;
    int have_span, have_counters, have_pid, have_events;
    int paddle; /* the file is in paddle's dialect (§10.3), seen from its content */
    sp__paddle_clock pclock;
    uint64_t skipped; /* events skipped for a field of the wrong type */
    int64_t span_start, span_end;
    sp__jplace_peak *peaks;
    size_t peak_count;
    sp__jthread_name *names; /* ExtraInfo's tid -> name, applied at the end */
    size_t name_count;
    char key[40]; /* the last key read (cut; longer keys never match) */
    uint64_t last_tid; /* the tid of threads[last_thread], when have_last_thread */
    size_t last_thread;
    int have_last_thread;
    sp__jname_slot name_slots[SP__JNAME_SLOTS];
} sp__jloader;

static inline int sp__jload_nomem(sp__jloader *l)
{
    if (l->lx.status == SP_OK)
        l->lx.status = sp__fail(SP_ENOMEM, "out of memory loading %s", l->lx.path);
    return -1;
}

static inline const char *sp__jload_str(const sp__buf *b)
{
    return b->len ? b->data : "";
}

/* a + b, saturated: hostile files may hold any numbers (the builder then
 * clamps times into range). */
static inline int64_t sp__jload_sat_add(int64_t a, int64_t b)
{
    int64_t sum;
    if (__builtin_add_overflow(a, b, &sum)) return b > 0 ? INT64_MAX : INT64_MIN;
    return sum;
}

/* Reads an object key into l->key and the ':' after it. */
int sp__jload_key(sp__jloader *l);
/* An integer value; a number with a fraction or exponent is rounded. A
 * string or other value is skipped and *ok set to 0 (and the event marked
 * as holding a value of the wrong type, unless the value is null). */
int sp__jload_int(sp__jloader *l, int64_t *out, int *ok);
/* A JSON number's text (len bytes, not NUL-terminated) as an integer; one with
 * a fraction or exponent is rounded, one past INT64_MAX read as unsigned
 * (ids are written so). */
int64_t sp__jload_int_of(const char *t, size_t len);
/* Reads one trace event's object into l->ev. */
int sp__jload_event(sp__jloader *l);
void sp__jload_event_fini(sp__jevent *e);
/* Adds the event in l->ev to the result, or skips (and maybe counts) it. */
int sp__jload_take(sp__jloader *l);

#endif
