/* json_take.c: adds one trace event, as json_event.c read it, to the
 * result being built: a host range or instant (its type from args "Event
 * Type", else from its cat and name as Kineto's are told), a CUDA record
 * (json_cuda.c), an event of paddle's dialect (json_paddle.c), a memory
 * event, a counter sample, a process or thread name, or the span marker.
 * The usual event, a host range, is told by its phase and a cat already
 * classified when read, before any other path is tried. */
#include "json_kineto.h"
#include "json_load.h"

#include <stdio.h>
#include <string.h>

static int starts_with(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    return strlen(s) >= n && memcmp(s, prefix, n) == 0;
}

/* The recorded name of a host range from its JSON spelling. */
static uint32_t recorded_name(sp__jloader *l, sp_event_type type, const char *name)
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

/* The thread of tid; the last one asked for is kept, since events come in
 * runs of one thread. Threads only move (never go) while the file is read,
 * so an index stays valid. */
static sp__thread *thread_of(sp__jloader *l, uint64_t tid)
{
    if (l->have_last_thread && l->last_tid == tid) return &l->b.r->threads[l->last_thread];
    sp__thread *t = sp__builder_thread(&l->b, tid);
    if (t) {
        l->last_tid = tid;
        l->last_thread = (size_t)(t - l->b.r->threads);
        l->have_last_thread = 1;
    }
    return t;
}

/* The slot for a range's (cat, Event Type, name), or NULL when they are too
 * long to keep; *hit says whether it holds them. The key is the bytes
 * read, which decide the type and name (sp__paddle_type, sp__kineto_type
 * and recorded_name read them as C strings, a function of the bytes). */
static sp__jname_slot *name_slot(sp__jloader *l, int *hit)
{
    const sp__jevent *e = &l->ev;
    size_t n = e->name.len, tn = e->event_type.len;
    *hit = 0;
    if (n > SP__JNAME_MAX || tn > SP__JTYPE_MAX) return NULL;
    const unsigned char *s = (const unsigned char *)sp__jload_str(&e->name);
    unsigned h = (unsigned)n * 7u + (unsigned)tn * 17u + (unsigned)e->cat_id * 3u;
    if (n) h += s[0] + s[n - 1] * 31u + s[n / 2] * 131u;
    if (tn) h += (unsigned char)e->event_type.data[tn - 1] * 11u;
    sp__jname_slot *slot = &l->name_slots[(h ^ h >> 6) & (SP__JNAME_SLOTS - 1)];
    *hit = slot->used && slot->name_len == n && slot->type_len == tn &&
           slot->cat_id == (uint8_t)e->cat_id && memcmp(slot->name, s, n) == 0 &&
           memcmp(slot->event_type, sp__jload_str(&e->event_type), tn) == 0;
    return slot;
}

/* The type of a range of stepprof's or Kineto's cats: its "Event Type"
 * (paddle's names), else what its cat and name say. */
static sp_event_type range_type(const sp__jevent *e)
{
    sp_event_type fallback = e->cat_id == SP__JCAT_CPU_OP            ? SP_EVENT_OPERATOR
                             : e->cat_id == SP__JCAT_PYTHON_FUNCTION ? SP_EVENT_PYTHON_OP
                                                                     : SP_EVENT_USER_DEFINED;
    sp_event_type type = sp__paddle_type(sp__jload_str(&e->event_type)); /* paddle's names */
    if (type == SP_EVENT_TYPE_COUNT)
        type = e->event_type.len
                   ? fallback
                   : sp__kineto_type(sp__jload_str(&e->cat), sp__jload_str(&e->name), fallback);
    return type;
}

/* type: the event's type (from args "Event Type" or cat), or -1 to take
 * it from them as stepprof writes them. */
static int add_range(sp__jloader *l, int instant, int type_from_cat)
{
    sp__jevent *e = &l->ev;
    /* The cache is asked only for the cats whose text cat_id gives whole. */
    int hit = 0,
        cacheable = type_from_cat < 0 && e->cat_id != SP__JCAT_OTHER && e->cat_id != SP__JCAT_TRACE;
    sp__jname_slot *slot = cacheable ? name_slot(l, &hit) : NULL;
    sp_event_type type = hit ? (sp_event_type)slot->type : range_type(e);
    int exact = 0;
    int64_t start = e->ts, end = instant ? e->ts : sp__jload_sat_add(e->ts, e->dur > 0 ? e->dur : 0);
    if (type_from_cat >= 0) {
        type = (sp_event_type)type_from_cat;
        e->name.len = sp__paddle_name_len(sp__jload_str(&e->name));
        sp__buf_cstr(&e->name);
        exact = sp__paddle_times(&l->pclock, &e->pa, e->ts, e->dur, &start, &end);
        sp__paddle_host_seen(&l->pclock, (uint64_t)e->tid, start, end);
    }
    sp__thread *t = thread_of(l, (uint64_t)e->tid);
    sp__event *ev = t ? sp__builder_event(&l->b, t) : NULL;
    if (!ev) return sp__jload_nomem(l);
    ev->type = (uint8_t)type;
    if (hit) {
        ev->name = slot->id;
    } else {
        ev->name = recorded_name(l, type, sp__jload_str(&e->name));
        if (slot && !l->b.failed && !l->b.r->names.failed) {
            *slot = (sp__jname_slot){.id = ev->name,
                                     .used = 1,
                                     .cat_id = (uint8_t)e->cat_id,
                                     .type = (uint8_t)type,
                                     .name_len = (uint8_t)e->name.len,
                                     .type_len = (uint8_t)e->event_type.len};
            memcpy(slot->name, sp__jload_str(&e->name), e->name.len);
            memcpy(slot->event_type, sp__jload_str(&e->event_type), e->event_type.len);
        }
    }
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
        return sp__jload_nomem(l);
    return 0;
}

/* An event of paddle's dialect (sp__paddle_kind): a host range, a
 * CudaRuntime call, a Kernel, Memcpy or Memset record, a memory event. */
static int add_paddle(sp__jloader *l, const char *ph, const char *cat, const char *name)
{
    sp__jevent *e = &l->ev;
    sp_event_type type = sp__paddle_type(cat);
    int64_t start, end;
    switch (sp__paddle_kind(l->paddle, ph, cat, name)) {
    case SP__PADDLE_RANGE:
        return add_range(l, 0, (int)type);
    case SP__PADDLE_GPU: {
        uint32_t id =
            sp__names_from_bytes(&l->b.r->names, sp__jload_str(&e->name), sp__paddle_name_len(sp__jload_str(&e->name)));
        if (sp__paddle_times(&l->pclock, &e->pa, e->ts, e->dur, &start, &end) && e->dur >= 0)
            end = sp__jload_sat_add(start, e->dur); /* dur is exact; device records do not nest */
        int rc = type == SP_EVENT_CUDA_RUNTIME
                     ? sp__paddle_add_runtime(&l->b, &e->pa, (uint64_t)e->tid, id, start, end)
                     : sp__paddle_add_device(&l->b, &e->pa, type, e->pid, e->tid, id, start, end);
        return rc != 0 ? sp__jload_nomem(l) : 0;
    }
    case SP__PADDLE_MEMORY:
        if (sp__paddle_add_mem(&l->b, &l->pclock, &e->pa, (uint64_t)e->tid, e->ts,
                               sp__paddle_mem_type(cat)) != 0)
            return sp__jload_nomem(l);
        return 0;
    default:
        l->skipped++; /* a type or memory event type this reader does not know */
        return 0;
    }
}

/* A runtime or driver call, kernel, memcpy or memset of stepprof's (and
 * Kineto's) cats; one whose args cannot make a record is skipped and
 * counted. */
static int add_cuda(sp__jloader *l, const char *ph, const char *cat, const char *name)
{
    sp__jevent *e = &l->ev;
    int driver;
    sp_event_type type = sp__cuda_type(ph, cat, &driver);
    int64_t end = sp__jload_sat_add(e->ts, e->dur > 0 ? e->dur : 0);
    int rc = sp__cuda_add(&l->b, &e->ca, type, driver, e->pid, e->tid, name, e->ts, end);
    if (rc < 0) return sp__jload_nomem(l);
    l->skipped += (uint64_t)rc;
    return 0;
}

static int add_counter(sp__jloader *l)
{
    sp__jevent *e = &l->ev;
    sp__thread *t = sp__builder_thread(&l->b, (uint64_t)e->tid);
    sp__event *ev = t ? sp__builder_event(&l->b, t) : NULL;
    if (!ev) return sp__jload_nomem(l);
    ev->type = SP_EVENT_USER_DEFINED;
    ev->name = sp__names_from_bytes(&l->b.r->names, sp__jload_str(&e->name), e->name.len);
    ev->start_ns = ev->end_ns = e->ts;
    ev->flags = SP_EVENT_FLAG_COUNTER;
    ev->value = e->has_first_value ? e->first_value : 0;
    return 0;
}

static int add_memory(sp__jloader *l, int reserved)
{
    sp__jevent *e = &l->ev;
    char place[48];
    if (e->device_type == 1 && e->device_id >= 0)
        snprintf(place, sizeof place, "Place(gpu:%lld)", (long long)e->device_id);
    else
        snprintf(place, sizeof place, "Place(cpu)");
    uint32_t id = sp__names_from_bytes(&l->b.r->names, place, strlen(place));
    sp__jplace_peak *p = NULL;
    for (size_t i = 0; i < l->peak_count; i++)
        if (l->peaks[i].place == id) p = &l->peaks[i];
    if (!p) {
        sp__jplace_peak *grown = sp__realloc(l->peaks, sizeof *grown * (l->peak_count + 1));
        if (!grown) return sp__jload_nomem(l);
        l->peaks = grown;
        p = &grown[l->peak_count++];
        *p = (sp__jplace_peak){id, 0, 0};
    }
    if ((uint64_t)e->total_allocated > p->allocated) p->allocated = (uint64_t)e->total_allocated;
    if ((uint64_t)e->total_reserved > p->reserved) p->reserved = (uint64_t)e->total_reserved;
    sp__thread *t = sp__builder_thread(&l->b, (uint64_t)e->tid);
    sp__mem_event *m = t ? sp__builder_mem(&l->b, t) : NULL;
    if (!m) return sp__jload_nomem(l);
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
static int add_thread_label(sp__jloader *l)
{
    sp__jevent *e = &l->ev;
    sp__thread *t = sp__builder_thread(&l->b, (uint64_t)e->tid);
    if (!t) return sp__jload_nomem(l);
    const char *label = sp__jload_str(&e->arg_name);
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

static int event_kind(sp__jloader *l, const char *ph, const char *cat, const char *name)
{
    const sp__jevent *e = &l->ev;
    if (e->ph.len == 1 && ph[0] == 'X' &&
        (e->cat_id == SP__JCAT_CPU_OP || e->cat_id == SP__JCAT_USER_ANNOTATION ||
         e->cat_id == SP__JCAT_PYTHON_FUNCTION))
        return RANGE; /* the usual event, first */
    if (strcmp(ph, "M") == 0) {
        if (strcmp(name, "process_name") == 0) return META_PROCESS;
        return strcmp(name, "thread_name") == 0 ? META_THREAD : SKIP;
    }
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

int sp__jload_take(sp__jloader *l)
{
    sp__jevent *e = &l->ev;
    const char *ph = sp__jload_str(&e->ph), *cat = sp__jload_str(&e->cat), *name = sp__jload_str(&e->name);
    l->have_events = 1;
    if (e->cat_id == SP__JCAT_TRACE && strcmp(name, "PyTorch Profiler (0)") == 0) {
        if (!e->has_ts) {
            l->skipped++; /* the span marker without its time */
            return 0;
        }
        l->have_span = 1;
        l->span_start = e->ts;
        l->span_end = sp__jload_sat_add(e->ts, e->has_dur && e->dur > 0 ? e->dur : 0);
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
            snprintf(l->b.r->meta.process_name, sizeof l->b.r->meta.process_name, "%s", sp__jload_str(&e->arg_name));
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
