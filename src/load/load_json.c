/* load_json.c: reads stepprof's own Chrome-trace JSON (trace-format.md
 * §1-8, plain or gzip) back into a result, so that the tables and the CLI
 * work on a .json too. The file is parsed as a stream (json_lex.c): one
 * event at a time goes into the result builder, so memory stays near that
 * of the result whatever the file's size.
 *
 * What comes back: host ranges (cat cpu_op / user_annotation /
 * python_function; the type from
 * args "Event Type", the recorded name from the JSON spelling: ProfilerStep#N
 * -> ProfileStep#N, enumerate(DataLoader)#X.__next__ -> X), instants,
 * counter samples, memory events ([memory] / [reserved memory]), thread
 * names, the span (the "PyTorch Profiler (0)" marker), span index, CPU
 * utilisation and stepprof_counters; and the CUDA records (cuda_runtime /
 * cuda_driver calls, kernel, gpu_memcpy and gpu_memset records, which are
 * Kineto's cats too, and deviceProperties) through json_cuda.c, attributed
 * by correlation as for paddle's. Times are exact: ts and dur are read as
 * decimal microseconds with three decimals, not through a double. What the
 * JSON does not carry is not restored: a runtime call's _vNNNN suffix and
 * the other fields json_cuda.c lists, a memory event's peaks become running
 * maxima of its place's totals and its place "Place(cpu)" or
 * "Place(gpu:N)", per-thread drop counts are 0.
 *
 * Paddle's own chrome trace (trace-format.md §10.3) loads too, told apart
 * by its content, event by event: its cat is the event type's name
 * ("Operator", "ProfileStep", "PythonUserDefined"...), its tids are strings
 * ("6689(Python)" and "6689(C++)", both thread 6689) and its names end in
 * "[<dur> ms]", which is cut off. Its exact times, [memory] events and CUDA
 * records (CudaRuntime calls, Kernel, Memcpy and Memset) come through
 * json_paddle.c. In a file seen to be paddle's (a "<tid>(Python)" tid, a
 * string span index), an event of a cat it does not know is skipped and
 * counted. An event whose pid, tid, ts or dur holds a value of the wrong
 * type (a string or an object where a number belongs) is skipped and
 * counted (load_skipped), never dropped in silence. */
#include "json_cuda.h"
#include "json_kineto.h"
#include "json_dist.h"
#include "json_lex.h"
#include "json_paddle.h"
#include "load.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PROGRESS_BYTES ((uint64_t)4 << 20)

/* a + b, saturated: hostile files may hold any numbers (the builder then
 * clamps times into range). */
static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t sum;
    if (__builtin_add_overflow(a, b, &sum)) return b > 0 ? INT64_MAX : INT64_MIN;
    return sum;
}

/* The fields of one trace event that matter here. */
typedef struct event {
    sp__buf ph, cat, name, s, event_type, arg_name, first_key;
    int64_t pid, tid, ts, dur;
    int has_pid, has_tid, has_ts, has_dur, has_first_value;
    int bad_type;  /* pid, tid, ts or dur held a value of the wrong type */
    int paddle_tid; /* the tid was paddle's "<tid>(Python)" or "<tid>(C++)" */
    double first_value;
    int64_t addr, bytes, total_allocated, total_reserved, device_id, device_type;
    int64_t num_samples; /* a ProfileStep's args "num_samples"; -1 = none */
    sp__paddle_args pa;
    sp__cuda_args ca;
    sp__comm_args comm;
} event;

typedef struct place_peak {
    uint32_t place;
    uint64_t allocated, reserved;
} place_peak;

typedef struct thread_name {
    uint64_t tid;
    uint32_t name;
} thread_name;

typedef struct jloader {
    sp__jlex lx;
    sp__builder b;
    const sp_load_options *opts;
    uint64_t total_bytes, next_progress;
    event ev;
    int64_t base_ns;
    int have_span, have_counters, have_pid, have_events;
    int paddle; /* the file is in paddle's dialect (§10.3), seen from its content */
    sp__paddle_clock pclock;
    uint64_t skipped; /* events skipped for a field of the wrong type */
    int64_t span_start, span_end;
    place_peak *peaks;
    size_t peak_count;
    thread_name *names; /* ExtraInfo's tid -> name, applied at the end */
    size_t name_count;
    char key[40];
} jloader;

static int nomem(jloader *l)
{
    if (l->lx.status == SP_OK) l->lx.status = sp__fail(SP_ENOMEM, "out of memory loading %s", l->lx.path);
    return -1;
}

static void copy_tok(sp__buf *dst, const sp__buf *tok)
{
    dst->len = 0;
    sp__buf_append(dst, tok->data ? tok->data : "", tok->len);
    sp__buf_cstr(dst);
}

static const char *str(sp__buf *b) { return b->len ? b->data : ""; }

/* Sets l->key from the token just read (cut; longer keys never match) and
 * reads the ':' after it. */
static int key_from_tok(jloader *l)
{
    size_t n = l->lx.tok.len < sizeof l->key - 1 ? l->lx.tok.len : sizeof l->key - 1;
    memcpy(l->key, l->lx.tok.data ? l->lx.tok.data : "", n);
    l->key[n] = '\0';
    if (l->lx.tok.len >= sizeof l->key) l->key[0] = '\0';
    return sp__jlex_expect(&l->lx, ':');
}

/* Reads an object key into l->key and the ':' after it. */
static int read_key(jloader *l)
{
    if (sp__jlex_string(&l->lx) != 0) return -1;
    return key_from_tok(l);
}

static int read_string_into(jloader *l, sp__buf *dst)
{
    if (sp__jlex_peek(&l->lx) != '"') return sp__jlex_error(&l->lx, "string expected");
    if (sp__jlex_string(&l->lx) != 0) return -1;
    copy_tok(dst, &l->lx.tok);
    return dst->failed ? nomem(l) : 0;
}

/* A JSON number's text as an integer; one with a fraction or exponent is
 * rounded, one past INT64_MAX read as unsigned (ids are written so). */
static int64_t int_of_number(const char *t)
{
    if (strpbrk(t, ".eE")) {
        double d = strtod(t, NULL);
        return d >= 9.2e18 ? INT64_MAX : d <= -9.2e18 ? INT64_MIN : (int64_t)llround(d);
    }
    long long v = strtoll(t, NULL, 10);
    if (v == LLONG_MAX && strcmp(t, "9223372036854775807") != 0)
        v = (long long)strtoull(t, NULL, 10);
    return v;
}

/* An integer value; a number with a fraction or exponent is rounded. A
 * string or other value is skipped and *ok set to 0 (and the event marked
 * as holding a value of the wrong type, unless the value is null). */
static int read_int(jloader *l, int64_t *out, int *ok)
{
    int c = sp__jlex_peek(&l->lx);
    if (c != '-' && (c < '0' || c > '9')) {
        *ok = 0;
        if (c != 'n') l->ev.bad_type = 1;
        return sp__jlex_skip(&l->lx);
    }
    if (sp__jlex_number(&l->lx) != 0) return -1;
    *out = int_of_number(l->lx.tok.data);
    *ok = 1;
    return 0;
}

/* Microseconds as written by stepprof ("<us>.<3 digits>") to exact ns;
 * other spellings through a double. */
static int read_us(jloader *l, int64_t *out, int *ok)
{
    int c = sp__jlex_peek(&l->lx);
    if (c != '-' && (c < '0' || c > '9')) {
        *ok = 0;
        if (c != 'n') l->ev.bad_type = 1;
        return sp__jlex_skip(&l->lx);
    }
    if (sp__jlex_number(&l->lx) != 0) return -1;
    const char *t = l->lx.tok.data;
    const char *p = t;
    int neg = *p == '-';
    if (neg) p++;
    size_t int_digits = strspn(p, "0123456789");
    int exact = int_digits <= 15 && !strpbrk(p, "eE");
    if (exact) {
        int64_t us = 0, frac = 0;
        for (size_t i = 0; i < int_digits; i++) us = us * 10 + (p[i] - '0');
        p += int_digits;
        if (*p == '.') {
            p++;
            for (int i = 0; i < 3; i++) frac = frac * 10 + (p[0] >= '0' && p[0] <= '9' ? (p++)[0] - '0' : 0);
        }
        int64_t ns = us * 1000 + frac;
        *out = neg ? -ns : ns;
    } else {
        double d = strtod(t, NULL) * 1000.0;
        *out = d >= 9.2e18 ? INT64_MAX : d <= -9.2e18 ? INT64_MIN : (int64_t)llround(d);
    }
    *ok = 1;
    return 0;
}

/* A tid: an integer, or paddle's string "<tid>(Python)" / "<tid>(C++)",
 * whose leading digits are the tid. Any other string is of the wrong type. */
static int read_tid(jloader *l)
{
    event *e = &l->ev;
    if (sp__jlex_peek(&l->lx) != '"') return read_int(l, &e->tid, &e->has_tid);
    if (sp__jlex_string(&l->lx) != 0) return -1;
    const char *t = l->lx.tok.data ? l->lx.tok.data : "";
    size_t digits = strspn(t, "0123456789");
    if (digits == 0 || digits > 19 || (t[digits] != '\0' && t[digits] != '(')) {
        e->bad_type = 1;
        return 0;
    }
    e->tid = (int64_t)strtoull(t, NULL, 10);
    e->has_tid = 1;
    e->paddle_tid = t[digits] == '(' &&
                    (strcmp(t + digits, "(Python)") == 0 || strcmp(t + digits, "(C++)") == 0);
    if (e->paddle_tid) l->paddle = 1;
    return 0;
}

static int read_args(jloader *l)
{
    event *e = &l->ev;
    sp__jlex *lx = &l->lx;
    if (sp__jlex_peek(lx) != '{') return sp__jlex_skip(lx);
    sp__jlex_expect(lx, '{');
    if (sp__jlex_peek(lx) == '}') return sp__jlex_expect(lx, '}');
    int more = 1;
    while (more == 1) {
        if (sp__jlex_string(lx) != 0) return -1;
        int first = !e->has_first_value && e->first_key.len == 0;
        if (first) copy_tok(&e->first_key, &lx->tok);
        if (key_from_tok(l) != 0) return -1;
        int ok = 0;
        int64_t v = 0;
        int c = sp__jlex_peek(lx);
        int taken = c == '-' || (c >= '0' && c <= '9') ? 0 : sp__cuda_arg_other(&e->ca, lx, l->key);
        if (taken < 0) return -1;
        if (taken) {
            more = sp__jlex_next(lx, '}');
            continue;
        }
        if (strcmp(l->key, "Event Type") == 0) {
            if (read_string_into(l, &e->event_type) != 0) return -1;
        } else if (strcmp(l->key, "name") == 0 && c == '"') {
            if (read_string_into(l, &e->arg_name) != 0) return -1;
        } else if (c == '"') {
            if (sp__jlex_string(lx) != 0) return -1;
            if (sp__paddle_arg_string(&e->pa, l->key, lx->tok.data ? lx->tok.data : "",
                                      lx->tok.len) != 0 ||
                sp__comm_arg_string(&e->comm, l->key, lx->tok.data ? lx->tok.data : "",
                                    lx->tok.len) != 0)
                return nomem(l);
        } else if (first && (c == '-' || (c >= '0' && c <= '9'))) {
            if (sp__jlex_number(lx) != 0) return -1;
            e->first_value = strtod(lx->tok.data, NULL);
            e->has_first_value = 1;
            const char *k = str(&e->first_key);
            if (strcmp(k, "Addr") == 0) e->addr = (int64_t)strtoull(lx->tok.data, NULL, 10);
            if (strcmp(k, "num_samples") == 0 && e->first_value >= 0)
                e->num_samples = int_of_number(lx->tok.data);
            sp__paddle_arg_number(&e->pa, l->key, int_of_number(lx->tok.data));
            sp__cuda_arg_number(&e->ca, l->key, int_of_number(lx->tok.data));
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            if (read_int(l, &v, &ok) != 0) return -1;
            sp__paddle_arg_number(&e->pa, l->key, v);
            sp__cuda_arg_number(&e->ca, l->key, v);
            sp__comm_arg_number(&e->comm, l->key, v);
            if (strcmp(l->key, "Addr") == 0) e->addr = v;
            else if (strcmp(l->key, "Bytes") == 0) e->bytes = v;
            else if (strcmp(l->key, "Total Allocated") == 0) e->total_allocated = v;
            else if (strcmp(l->key, "Total Reserved") == 0) e->total_reserved = v;
            else if (strcmp(l->key, "Device Id") == 0) e->device_id = v;
            else if (strcmp(l->key, "Device Type") == 0) e->device_type = v;
            else if (strcmp(l->key, "num_samples") == 0 && ok && v >= 0) e->num_samples = v;
        } else if (sp__jlex_skip(lx) != 0) {
            return -1;
        }
        more = sp__jlex_next(lx, '}');
    }
    return more < 0 ? -1 : 0;
}

static void reset_event(event *e)
{
    e->ph.len = e->cat.len = e->name.len = e->s.len = e->event_type.len = 0;
    e->arg_name.len = e->first_key.len = 0;
    e->has_pid = e->has_tid = e->has_ts = e->has_dur = e->has_first_value = 0;
    e->bad_type = e->paddle_tid = 0;
    sp__paddle_args_reset(&e->pa);
    sp__cuda_args_reset(&e->ca);
    sp__comm_args_reset(&e->comm);
    e->pid = e->tid = e->ts = e->dur = 0;
    e->addr = e->bytes = e->total_allocated = e->total_reserved = e->device_id = e->device_type = 0;
    e->first_value = 0;
    e->num_samples = -1;
}

static int read_event(jloader *l)
{
    event *e = &l->ev;
    sp__jlex *lx = &l->lx;
    reset_event(e);
    if (sp__jlex_peek(lx) != '{') return sp__jlex_error(lx, "trace event object expected");
    sp__jlex_expect(lx, '{');
    if (sp__jlex_peek(lx) == '}') return sp__jlex_expect(lx, '}');
    int more = 1;
    while (more == 1) {
        if (read_key(l) != 0) return -1;
        const char *k = l->key;
        int rc;
        if (strcmp(k, "ph") == 0) rc = read_string_into(l, &e->ph);
        else if (strcmp(k, "cat") == 0) rc = read_string_into(l, &e->cat);
        else if (strcmp(k, "name") == 0) rc = read_string_into(l, &e->name);
        else if (strcmp(k, "s") == 0) rc = read_string_into(l, &e->s);
        else if (strcmp(k, "pid") == 0) rc = read_int(l, &e->pid, &e->has_pid);
        else if (strcmp(k, "tid") == 0) rc = read_tid(l);
        else if (strcmp(k, "ts") == 0) rc = read_us(l, &e->ts, &e->has_ts);
        else if (strcmp(k, "dur") == 0) rc = read_us(l, &e->dur, &e->has_dur);
        else if (strcmp(k, "args") == 0) rc = read_args(l);
        else rc = sp__jlex_skip(lx);
        if (rc != 0) return -1;
        more = sp__jlex_next(lx, '}');
    }
    return more < 0 ? -1 : 0;
}

static int starts_with(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    return strlen(s) >= n && memcmp(s, prefix, n) == 0;
}

/* The recorded name of a host range from its JSON spelling. */
static uint32_t recorded_name(jloader *l, sp_event_type type, const char *name)
{
    size_t len = strlen(name);
    sp__names *names = &l->b.r->names;
    if (type == SP_EVENT_PROFILE_STEP && starts_with(name, "ProfilerStep#")) {
        sp__buf b;
        sp__buf_init(&b);
        sp__buf_puts(&b, "ProfileStep#");
        sp__buf_puts(&b, name + 13);
        uint32_t id = sp__names_from_bytes(names, b.data ? b.data : "", b.len);
        if (b.failed) l->b.failed = 1;
        sp__buf_fini(&b);
        return id;
    }
    static const char prefix[] = "enumerate(DataLoader)#", suffix[] = ".__next__";
    if (type == SP_EVENT_DATALOADER && starts_with(name, prefix) && len >= sizeof prefix + sizeof suffix - 2 &&
        strcmp(name + len - (sizeof suffix - 1), suffix) == 0)
        return sp__names_from_bytes(names, name + sizeof prefix - 1, len - (sizeof prefix - 1) - (sizeof suffix - 1));
    return sp__names_from_bytes(names, name, len);
}

/* type: the event's type (from args "Event Type" or cat), or -1 to take
 * it from them as stepprof writes them. */
static int add_range(jloader *l, int instant, int type_from_cat)
{
    event *e = &l->ev;
    const char *cat = str(&e->cat);
    sp_event_type fallback = strcmp(cat, "cpu_op") == 0            ? SP_EVENT_OPERATOR
                             : strcmp(cat, "python_function") == 0 ? SP_EVENT_PYTHON_OP
                                                                   : SP_EVENT_USER_DEFINED;
    sp_event_type type = sp__paddle_type(str(&e->event_type)); /* paddle's names */
    if (type == SP_EVENT_TYPE_COUNT) type = e->event_type.len ? fallback : sp__kineto_type(cat, str(&e->name), fallback);
    int exact = 0;
    int64_t start = e->ts, end = instant ? e->ts : sat_add(e->ts, e->dur > 0 ? e->dur : 0);
    if (type_from_cat >= 0) {
        type = (sp_event_type)type_from_cat;
        e->name.len = sp__paddle_name_len(str(&e->name));
        sp__buf_cstr(&e->name);
        exact = sp__paddle_times(&l->pclock, &e->pa, e->ts, e->dur, &start, &end);
        sp__paddle_host_seen(&l->pclock, (uint64_t)e->tid, start, end);
    }
    sp__thread *t = sp__builder_thread(&l->b, (uint64_t)e->tid);
    sp__event *ev = t ? sp__builder_event(&l->b, t) : NULL;
    if (!ev) return nomem(l);
    ev->type = (uint8_t)type;
    ev->name = recorded_name(l, type, str(&e->name));
    ev->start_ns = start;
    ev->end_ns = end;
    if (instant) ev->flags = SP_EVENT_FLAG_INSTANT;
    if (type == SP_EVENT_PROFILE_STEP && !instant && e->num_samples >= 0 &&
        (double)e->num_samples <= SP__STEP_SAMPLES_MAX) {
        ev->flags |= SP_EVENT_FLAG_SAMPLES;
        ev->value = (double)e->num_samples;
    }
    if (exact) sp__paddle_keep_length(ev, e->dur);
    if (type == SP_EVENT_COMMUNICATION && !instant &&
        sp__comm_args_add(&l->b, t, &e->comm, start) != 0)
        return nomem(l);
    return 0;
}

/* An event of paddle's dialect (sp__paddle_kind): a host range, a
 * CudaRuntime call, a Kernel, Memcpy or Memset record, a memory event. */
static int add_paddle(jloader *l, const char *ph, const char *cat, const char *name)
{
    event *e = &l->ev;
    sp_event_type type = sp__paddle_type(cat);
    int64_t start, end;
    switch (sp__paddle_kind(l->paddle, ph, cat, name)) {
    case SP__PADDLE_RANGE:
        return add_range(l, 0, (int)type);
    case SP__PADDLE_GPU: {
        uint32_t id =
            sp__names_from_bytes(&l->b.r->names, str(&e->name), sp__paddle_name_len(str(&e->name)));
        if (sp__paddle_times(&l->pclock, &e->pa, e->ts, e->dur, &start, &end) && e->dur >= 0)
            end = sat_add(start, e->dur); /* dur is exact; device records do not nest */
        int rc = type == SP_EVENT_CUDA_RUNTIME
                     ? sp__paddle_add_runtime(&l->b, &e->pa, (uint64_t)e->tid, id, start, end)
                     : sp__paddle_add_device(&l->b, &e->pa, type, e->pid, e->tid, id, start, end);
        return rc != 0 ? nomem(l) : 0;
    }
    case SP__PADDLE_MEMORY:
        if (sp__paddle_add_mem(&l->b, &l->pclock, &e->pa, (uint64_t)e->tid, e->ts,
                               sp__paddle_mem_type(cat)) != 0)
            return nomem(l);
        return 0;
    default:
        l->skipped++; /* a type or memory event type this reader does not know */
        return 0;
    }
}

/* A runtime or driver call, kernel, memcpy or memset of stepprof's (and
 * Kineto's) cats; one whose args cannot make a record is skipped and
 * counted. */
static int add_cuda(jloader *l, const char *ph, const char *cat, const char *name)
{
    event *e = &l->ev;
    int driver;
    sp_event_type type = sp__cuda_type(ph, cat, &driver);
    int64_t end = sat_add(e->ts, e->dur > 0 ? e->dur : 0);
    int rc = sp__cuda_add(&l->b, &e->ca, type, driver, e->pid, e->tid, name, e->ts, end);
    if (rc < 0) return nomem(l);
    l->skipped += (uint64_t)rc;
    return 0;
}

static int add_counter(jloader *l)
{
    event *e = &l->ev;
    sp__thread *t = sp__builder_thread(&l->b, (uint64_t)e->tid);
    sp__event *ev = t ? sp__builder_event(&l->b, t) : NULL;
    if (!ev) return nomem(l);
    ev->type = SP_EVENT_USER_DEFINED;
    ev->name = sp__names_from_bytes(&l->b.r->names, str(&e->name), e->name.len);
    ev->start_ns = ev->end_ns = e->ts;
    ev->flags = SP_EVENT_FLAG_COUNTER;
    ev->value = e->has_first_value ? e->first_value : 0;
    return 0;
}

static int add_memory(jloader *l, int reserved)
{
    event *e = &l->ev;
    char place[48];
    if (e->device_type == 1 && e->device_id >= 0)
        snprintf(place, sizeof place, "Place(gpu:%lld)", (long long)e->device_id);
    else
        snprintf(place, sizeof place, "Place(cpu)");
    uint32_t id = sp__names_from_bytes(&l->b.r->names, place, strlen(place));
    place_peak *p = NULL;
    for (size_t i = 0; i < l->peak_count; i++)
        if (l->peaks[i].place == id) p = &l->peaks[i];
    if (!p) {
        place_peak *grown = sp__realloc(l->peaks, sizeof *grown * (l->peak_count + 1));
        if (!grown) return nomem(l);
        l->peaks = grown;
        p = &grown[l->peak_count++];
        *p = (place_peak){id, 0, 0};
    }
    if ((uint64_t)e->total_allocated > p->allocated) p->allocated = (uint64_t)e->total_allocated;
    if ((uint64_t)e->total_reserved > p->reserved) p->reserved = (uint64_t)e->total_reserved;
    sp__thread *t = sp__builder_thread(&l->b, (uint64_t)e->tid);
    sp__mem_event *m = t ? sp__builder_mem(&l->b, t) : NULL;
    if (!m) return nomem(l);
    m->ts_ns = e->ts;
    m->type = (uint8_t)(reserved ? (e->bytes < 0 ? SP_MEM_RESERVED_FREE : SP_MEM_RESERVED_ALLOCATE)
                                 : (e->bytes < 0 ? SP_MEM_FREE : SP_MEM_ALLOCATE));
    m->place = id;
    m->addr = (uint64_t)e->addr;
    m->bytes = e->bytes;
    m->current_allocated = (uint64_t)e->total_allocated;
    m->current_reserved = (uint64_t)e->total_reserved;
    m->peak_allocated = p->allocated;
    m->peak_reserved = p->reserved;
    return 0;
}

/* "thread <tid> (<name>)" -> name, and paddle's "thread <tid>:<name>(Python)"
 * or "...(C++)" -> name, unless ExtraInfo names the thread. */
static int add_thread_label(jloader *l)
{
    event *e = &l->ev;
    sp__thread *t = sp__builder_thread(&l->b, (uint64_t)e->tid);
    if (!t) return nomem(l);
    const char *label = str(&e->arg_name);
    const char *open = strstr(label, " (");
    size_t len = strlen(label);
    const char *colon = e->paddle_tid ? strchr(label, ':') : NULL;
    const char *paren = strrchr(label, '(');
    if (colon && paren && paren > colon && len > 0 && label[len - 1] == ')')
        t->name = sp__names_from_bytes(&l->b.r->names, colon + 1, (size_t)(paren - (colon + 1)));
    else if (open && len > 0 && label[len - 1] == ')')
        t->name = sp__names_from_bytes(&l->b.r->names, open + 2, (size_t)(label + len - 1 - (open + 2)));
    return 0;
}

/* What take_event does with an event. */
enum { SKIP, META_PROCESS, META_THREAD, RANGE, CUDA, PADDLE, INSTANT, MEMORY, RESERVED, COUNTER };

static int event_kind(jloader *l, const char *ph, const char *cat, const char *name)
{
    if (strcmp(ph, "M") == 0) {
        if (strcmp(name, "process_name") == 0) return META_PROCESS;
        return strcmp(name, "thread_name") == 0 ? META_THREAD : SKIP;
    }
    if (strcmp(ph, "X") == 0 && (strcmp(cat, "cpu_op") == 0 || strcmp(cat, "user_annotation") == 0 ||
                                 strcmp(cat, "python_function") == 0))
        return RANGE;
    int driver;
    if (sp__cuda_type(ph, cat, &driver) != SP_EVENT_TYPE_COUNT) return CUDA;
    if (sp__paddle_kind(l->paddle, ph, cat, name) != SP__PADDLE_NONE) return PADDLE;
    if (strcmp(ph, "i") == 0 && strcmp(cat, "cpu_instant_event") == 0) {
        if (strcmp(name, "[memory]") == 0) return MEMORY;
        return strcmp(name, "[reserved memory]") == 0 ? RESERVED : SKIP;
    }
    if (strcmp(ph, "i") == 0 && strcmp(cat, "user_annotation") == 0) return INSTANT;
    if (strcmp(ph, "C") == 0) return COUNTER;
    return SKIP; /* flows, gpu_user_annotation and others are not restored */
}

static int take_event(jloader *l)
{
    event *e = &l->ev;
    const char *ph = str(&e->ph), *cat = str(&e->cat), *name = str(&e->name);
    l->have_events = 1;
    if (strcmp(cat, "Trace") == 0 && strcmp(name, "PyTorch Profiler (0)") == 0) {
        if (!e->has_ts) {
            l->skipped++; /* the span marker without its time */
            return 0;
        }
        l->have_span = 1;
        l->span_start = e->ts;
        l->span_end = sat_add(e->ts, e->has_dur && e->dur > 0 ? e->dur : 0);
        return 0;
    }
    int kind = event_kind(l, ph, cat, name);
    if (kind == SKIP) return 0;
    /* An event of a kind that is restored, but without a usable pid, tid or
     * ts (missing, or of the wrong type; or a dur of the wrong type). */
    int meta = kind == META_PROCESS || kind == META_THREAD;
    if (e->bad_type || !e->has_pid || !e->has_tid || (!e->has_ts && !meta)) {
        l->skipped++;
        return 0;
    }
    switch (kind) {
    case META_PROCESS:
        if (!l->have_pid) {
            l->have_pid = 1;
            l->b.r->meta.pid = e->pid;
            snprintf(l->b.r->meta.process_name, sizeof l->b.r->meta.process_name, "%s", str(&e->arg_name));
        }
        return 0;
    case META_THREAD:
        return l->have_pid && e->pid == l->b.r->meta.pid ? add_thread_label(l) : 0;
    case RANGE:
        return add_range(l, 0, -1);
    case CUDA:
        return add_cuda(l, ph, cat, name);
    case PADDLE:
        return add_paddle(l, ph, cat, name);
    case INSTANT:
        return add_range(l, 1, -1);
    case MEMORY:
    case RESERVED:
        return add_memory(l, kind == RESERVED);
    default:
        return add_counter(l);
    }
}

static int read_events(jloader *l)
{
    sp__jlex *lx = &l->lx;
    if (sp__jlex_expect(lx, '[') != 0) return -1;
    if (sp__jlex_peek(lx) == ']') return sp__jlex_expect(lx, ']');
    int more = 1;
    while (more == 1) {
        if (read_event(l) != 0 || take_event(l) != 0) return -1;
        if (l->b.failed) return nomem(l);
        more = sp__jlex_next(lx, ']');
    }
    return more < 0 ? -1 : 0;
}

static int read_counters(jloader *l)
{
    sp__jlex *lx = &l->lx;
    if (sp__jlex_peek(lx) != '{') return sp__jlex_skip(lx);
    sp__jlex_expect(lx, '{');
    l->have_counters = 1;
    if (sp__jlex_peek(lx) == '}') return sp__jlex_expect(lx, '}');
    int more = 1;
    while (more == 1) {
        if (read_key(l) != 0) return -1;
        int64_t v = 0;
        int ok = 0;
        if (read_int(l, &v, &ok) != 0) return -1;
        for (int c = 0; ok && c < SP_COUNTER_COUNT; c++)
            if (strcmp(l->key, sp_counter_name((sp_counter_kind)c)) == 0) l->b.r->counters[c] = (uint64_t)v;
        more = sp__jlex_next(lx, '}');
    }
    return more < 0 ? -1 : 0;
}

/* "stepprof_thread_drops": {"<tid>": events the cap dropped on it}. */
static int read_thread_drops(jloader *l)
{
    sp__jlex *lx = &l->lx;
    if (sp__jlex_peek(lx) != '{') return sp__jlex_skip(lx);
    sp__jlex_expect(lx, '{');
    if (sp__jlex_peek(lx) == '}') return sp__jlex_expect(lx, '}');
    int more = 1;
    while (more == 1) {
        if (read_key(l) != 0) return -1;
        char *end;
        unsigned long long tid = strtoull(l->key, &end, 10);
        int is_tid = l->key[0] >= '0' && l->key[0] <= '9' && *end == '\0';
        int64_t v = 0;
        int ok = 0;
        if (read_int(l, &v, &ok) != 0) return -1;
        if (is_tid && ok && v > 0) {
            sp__thread *t = sp__builder_thread(&l->b, tid);
            if (!t) return nomem(l);
            t->dropped = (uint64_t)v;
        }
        more = sp__jlex_next(lx, '}');
    }
    return more < 0 ? -1 : 0;
}

static int read_extra_info(jloader *l)
{
    sp__jlex *lx = &l->lx;
    sp_result *r = l->b.r;
    if (sp__jlex_peek(lx) != '{') return sp__jlex_skip(lx);
    sp__jlex_expect(lx, '{');
    if (sp__jlex_peek(lx) == '}') return sp__jlex_expect(lx, '}');
    int more = 1;
    while (more == 1) {
        if (read_key(l) != 0) return -1;
        char key[sizeof l->key];
        memcpy(key, l->key, sizeof key);
        if (sp__jlex_peek(lx) != '"') {
            if (sp__jlex_skip(lx) != 0) return -1;
        } else {
            if (sp__jlex_string(lx) != 0) return -1;
            const char *v = lx->tok.data;
            char *end;
            unsigned long long tid = strtoull(key, &end, 10);
            if (strcmp(key, "System Cpu Utilization") == 0) {
                r->meta.cpu_system = strtod(v, NULL);
            } else if (strcmp(key, "Process Cpu Utilization") == 0) {
                r->meta.cpu_process = strtod(v, NULL);
            } else if (key[0] >= '0' && key[0] <= '9' && *end == '\0') {
                thread_name *n = sp__realloc(l->names, sizeof *n * (l->name_count + 1));
                if (!n) return nomem(l);
                l->names = n;
                n[l->name_count++] = (thread_name){tid, sp__names_from_bytes(&r->names, v, lx->tok.len)};
            }
        }
        more = sp__jlex_next(lx, '}');
    }
    return more < 0 ? -1 : 0;
}

/* A torch flag: the integer 1 as Kineto (and stepprof since issue 17) writes
 * it, or the string "1" of older stepprof files. */
static int read_flag(jloader *l, int *flag)
{
    int c = sp__jlex_peek(&l->lx);
    if (c == '-' || (c >= '0' && c <= '9')) {
        if (sp__jlex_number(&l->lx) != 0) return -1;
        *flag = strcmp(sp__buf_cstr(&l->lx.tok), "1") == 0;
        return 0;
    }
    if (c != '"') return sp__jlex_skip(&l->lx);
    if (sp__jlex_string(&l->lx) != 0) return -1;
    *flag = strcmp(l->lx.tok.data, "1") == 0;
    return 0;
}

static int read_top(jloader *l)
{
    sp__jlex *lx = &l->lx;
    sp_result *r = l->b.r;
    int c = sp__jlex_peek(lx);
    if (c == '[') return read_events(l); /* the array form: events only */
    if (c != '{') return sp__jlex_error(lx, c < 0 ? "empty file" : "'{' or '[' expected");
    sp__jlex_expect(lx, '{');
    int seen_events = 0;
    if (sp__jlex_peek(lx) == '}') return sp__jlex_expect(lx, '}');
    int more = 1;
    while (more == 1) {
        if (read_key(l) != 0) return -1;
        int rc, ok = 0;
        int64_t v = 0;
        if (strcmp(l->key, "traceEvents") == 0) {
            rc = read_events(l);
            seen_events = 1;
        } else if (strcmp(l->key, "deviceProperties") == 0) {
            rc = sp__cuda_read_props(lx, r, &l->skipped);
        } else if (strcmp(l->key, "distributedInfo") == 0) {
            rc = sp__json_read_dist(lx, r);
        } else if (strcmp(l->key, "stepprof_counters") == 0) {
            rc = read_counters(l);
        } else if (strcmp(l->key, "ExtraInfo") == 0) {
            rc = read_extra_info(l);
        } else if (strcmp(l->key, "stepprof_thread_drops") == 0) {
            rc = read_thread_drops(l);
        } else if (strcmp(l->key, "span_index") == 0 && sp__jlex_peek(lx) == '"') {
            rc = sp__jlex_string(lx); /* paddle 3.3's key, a string */
            if (rc == 0) r->span_index = (uint32_t)strtoul(lx->tok.data, NULL, 10);
            l->paddle = 1;
        } else if (strcmp(l->key, "span_indx") == 0 && sp__jlex_peek(lx) == '"') {
            rc = sp__jlex_string(lx); /* paddle writes it as a string */
            if (rc == 0) r->span_index = (uint32_t)strtoul(lx->tok.data, NULL, 10);
            l->paddle = 1;
        } else if (strcmp(l->key, "span_indx") == 0) {
            rc = read_int(l, &v, &ok);
            if (ok) r->span_index = (uint32_t)v;
        } else if (strcmp(l->key, "baseTimeNanoseconds") == 0) {
            rc = read_int(l, &v, &ok);
            if (ok) l->base_ns = v;
        } else if (strcmp(l->key, "record_shapes") == 0) {
            rc = read_flag(l, &r->meta.record_shapes);
        } else if (strcmp(l->key, "profile_memory") == 0) {
            rc = read_flag(l, &r->meta.profile_memory);
        } else if (strcmp(l->key, "with_flops") == 0) {
            rc = read_flag(l, &r->meta.with_flops);
        } else if (strcmp(l->key, "with_stack") == 0) {
            rc = read_flag(l, &r->meta.with_stack);
        } else if (strcmp(l->key, "overwrite_oldest") == 0) {
            rc = read_flag(l, &r->meta.overwrite_oldest);
        } else {
            rc = sp__jlex_skip(lx);
        }
        if (rc != 0) return -1;
        more = sp__jlex_next(lx, '}');
    }
    if (more < 0) return -1;
    if (!seen_events) return sp__jlex_error(lx, "no \"traceEvents\" in the trace");
    return 0;
}

/* Times were read relative to the base time, which may come after them. */
static void rebase(jloader *l)
{
    sp_result *r = l->b.r;
    int64_t base = l->base_ns;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < r->thread_count; i++) {
        sp__thread *t = &r->threads[i];
        for (size_t k = 0; k < t->count; k++) {
            t->events[k].start_ns = sat_add(t->events[k].start_ns, base);
            t->events[k].end_ns = sat_add(t->events[k].end_ns, base);
            if (t->events[k].start_ns < lo) lo = t->events[k].start_ns;
            if (t->events[k].end_ns > hi) hi = t->events[k].end_ns;
        }
        for (size_t k = 0; k < t->mem_count; k++) t->mems[k].ts_ns = sat_add(t->mems[k].ts_ns, base);
        for (size_t k = 0; k < t->comm_count; k++)
            t->comms[k].ts_ns = sat_add(t->comms[k].ts_ns, base);
        for (size_t k = 0; k < t->runtime_count; k++) {
            t->runtimes[k].start_ns = sat_add(t->runtimes[k].start_ns, base);
            t->runtimes[k].end_ns = sat_add(t->runtimes[k].end_ns, base);
        }
    }
    for (size_t d = 0; d < r->device_count; d++) {
        r->devices[d].start_ns = sat_add(r->devices[d].start_ns, base);
        r->devices[d].end_ns = sat_add(r->devices[d].end_ns, base);
    }
    if (l->have_span) {
        r->span_start_ns = sat_add(l->span_start, base);
        r->span_end_ns = sat_add(l->span_end, base);
    } else if (lo <= hi) {
        r->span_start_ns = lo;
        r->span_end_ns = hi;
    }
}

static void on_refill(void *user, uint64_t offset)
{
    jloader *l = user;
    if (!l->opts->progress || offset < l->next_progress) return;
    l->opts->progress(offset, l->total_bytes, l->opts->progress_user);
    l->next_progress = offset + PROGRESS_BYTES;
}

static void events_fini(event *e)
{
    sp__buf_fini(&e->ph);
    sp__buf_fini(&e->cat);
    sp__buf_fini(&e->name);
    sp__buf_fini(&e->s);
    sp__buf_fini(&e->event_type);
    sp__buf_fini(&e->arg_name);
    sp__buf_fini(&e->first_key);
    sp__paddle_args_fini(&e->pa);
    sp__comm_args_fini(&e->comm);
}

sp_status sp__load_json(FILE *f, const char *path, const sp_load_options *opts, sp_result **out)
{
    jloader *l = sp__alloc(sizeof *l);
    if (!l) return sp__fail(SP_ENOMEM, "out of memory loading %s", path);
    l->opts = opts;
    struct stat st;
    if (fstat(fileno(f), &st) == 0) l->total_bytes = (uint64_t)st.st_size;
    sp_status s = sp__jlex_open(&l->lx, f, path);
    if (s != SP_OK) {
        sp__free(l);
        return s;
    }
    if (l->lx.gzip) l->total_bytes = 0; /* progress counts uncompressed bytes */
    l->lx.on_refill = on_refill;
    l->lx.user = l;
    if (sp__builder_init(&l->b) != 0) {
        s = sp__fail(SP_ENOMEM, "out of memory loading %s", path);
    } else if (read_top(l) != 0) {
        s = l->lx.status != SP_OK ? l->lx.status : sp__fail(SP_EFORMAT, "%s: not a valid JSON trace", path);
    } else if (sp__jlex_peek(&l->lx) >= 0) {
        sp__jlex_error(&l->lx, "text after the trace");
        s = l->lx.status;
    } else if (l->lx.status != SP_OK) {
        s = l->lx.status; /* a read error or corrupt gzip at the end */
    } else {
        for (size_t i = 0; i < l->name_count; i++) {
            sp__thread *t = sp__builder_thread(&l->b, l->names[i].tid);
            if (t) t->name = l->names[i].name;
        }
        sp__paddle_finish(&l->b, &l->pclock);
        rebase(l);
        if (opts->progress) opts->progress(l->lx.offset, l->total_bytes ? l->total_bytes : l->lx.offset, opts->progress_user);
        s = sp__builder_finish(&l->b, l->have_counters, path, out);
        if (s == SP_OK) {
            /* What this load skipped or cut, on top of the file's counters. */
            (*out)->counters[SP_COUNTER_LOAD_SKIPPED] += l->skipped;
            (*out)->counters[SP_COUNTER_TRAILING_BYTES] += l->lx.trailing_bytes;
            (*out)->counters[SP_COUNTER_NAMES_CUT] += l->lx.strings_cut;
        }
    }
    if (s != SP_OK) sp__builder_fini(&l->b);
    sp__jlex_close(&l->lx);
    events_fini(&l->ev);
    sp__paddle_clock_fini(&l->pclock);
    sp__free(l->peaks);
    sp__free(l->names);
    sp__free(l);
    return s;
}
