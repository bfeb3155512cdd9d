/* add_external.c: the calls that add what another tracer measured (paddle's
 * host tracer, memory recorder and op info recorder, ...) to the span a
 * profiler records, and what the program's framework knows of the run
 * (sp_profiler_set_dist_backend). Each checks every argument before copying
 * anything, so a refused call adds nothing; the copies wait in the
 * profiler's sp__external until the span is collected
 * (src/collect/external*.c). */
#define _GNU_SOURCE /* syscall */
#include "api.h"
#include "collect.h"

#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

sp_status sp_profiler_add_events(sp_profiler *p, const sp_external_event *events, size_t count)
{
    static const char fn[] = "sp_profiler_add_events";
    sp_status s = sp__profiler_may_add(p, fn);
    if (s != SP_OK) return s;
    if (count > 0 && !events) return sp__fail(SP_EINVAL, "%s: events is NULL", fn);
    for (size_t i = 0; i < count; i++) {
        if ((unsigned)events[i].type >= SP_EVENT_TYPE_COUNT)
            return sp__fail(SP_EINVAL, "%s: event %zu has unknown type %d", fn, i,
                            (int)events[i].type);
        if (events[i].type == SP_EVENT_PROFILE_STEP)
            return sp__fail(SP_EINVAL, "%s: event %zu is a ProfileStep; steps are the "
                                       "profiler's own (sp_profiler_step)", fn, i);
        if (!events[i].name && events[i].name_len > 0)
            return sp__fail(SP_EINVAL, "%s: event %zu has a NULL name", fn, i);
    }
    if ((s = sp__profiler_span_open(p, fn)) != SP_OK) return s;
    if (sp__external_add(sp__profiler_external(p), events, count) != 0)
        return sp__fail(SP_ENOMEM, "out of memory adding %zu events", count);
    return SP_OK;
}

sp_status sp_profiler_add_memory_events(sp_profiler *p, const sp_external_mem_event *events,
                                        size_t count)
{
    static const char fn[] = "sp_profiler_add_memory_events";
    sp_status s = sp__profiler_may_add(p, fn);
    if (s != SP_OK) return s;
    if (count > 0 && !events) return sp__fail(SP_EINVAL, "%s: events is NULL", fn);
    for (size_t i = 0; i < count; i++) {
        if ((unsigned)events[i].type > SP_MEM_RESERVED_FREE)
            return sp__fail(SP_EINVAL, "%s: event %zu has unknown type %d", fn, i,
                            (int)events[i].type);
        if (!events[i].place && events[i].place_len > 0)
            return sp__fail(SP_EINVAL, "%s: event %zu has a NULL place", fn, i);
    }
    if ((s = sp__profiler_span_open(p, fn)) != SP_OK) return s;
    if (sp__ext_mems_add(&sp__profiler_external(p)->mems, events, count) != 0)
        return sp__fail(SP_ENOMEM, "out of memory adding %zu memory events", count);
    return SP_OK;
}

/* The first bad argument of an op, or NULL. */
static const char *bad_op(const sp_op_info *o)
{
    if (!o->op_type && o->op_type_len) return "a NULL op_type";
    if (!o->callstack && o->callstack_len) return "a NULL callstack";
    if (!o->inputs && o->input_count) return "NULL inputs";
    for (size_t k = 0; k < o->input_count; k++) {
        const sp_op_input *in = &o->inputs[k];
        if (!in->key && in->key_len) return "an input with a NULL key";
        if (!in->dtype && in->dtype_len) return "an input with a NULL dtype";
        if (in->rank > SP_OP_RANK_MAX) return "an input whose rank is over SP_OP_RANK_MAX";
        if (!in->dims && in->rank) return "an input with NULL dims";
    }
    return NULL;
}

sp_status sp_profiler_add_op_info(sp_profiler *p, const sp_op_info *ops, size_t count)
{
    static const char fn[] = "sp_profiler_add_op_info";
    sp_status s = sp__profiler_may_add(p, fn);
    if (s != SP_OK) return s;
    if (count > 0 && !ops) return sp__fail(SP_EINVAL, "%s: ops is NULL", fn);
    for (size_t i = 0; i < count; i++) {
        const char *why = bad_op(&ops[i]);
        if (why) return sp__fail(SP_EINVAL, "%s: op %zu has %s", fn, i, why);
    }
    if ((s = sp__profiler_span_open(p, fn)) != SP_OK) return s;
    if (sp__ext_ops_add(&sp__profiler_external(p)->ops, ops, count) != 0)
        return sp__fail(SP_ENOMEM, "out of memory adding %zu ops", count);
    return SP_OK;
}

/* Fills a zero tid with the calling thread's and a zero time with now. */
static sp_comm_info comm_filled(const sp_comm_info *c)
{
    sp_comm_info f = *c;
    if (f.tid == 0) f.tid = (uint64_t)syscall(SYS_gettid);
    if (f.time_ns == 0) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        f.time_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    }
    return f;
}

sp_status sp_profiler_add_comm_info(sp_profiler *p, const sp_comm_info *comms, size_t count)
{
    static const char fn[] = "sp_profiler_add_comm_info";
    sp_status s = sp__profiler_may_add(p, fn);
    if (s != SP_OK) return s;
    if (count > 0 && !comms) return sp__fail(SP_EINVAL, "%s: comms is NULL", fn);
    for (size_t i = 0; i < count; i++) {
        if ((!comms[i].collective && comms[i].collective_len) ||
            (!comms[i].group && comms[i].group_len))
            return sp__fail(SP_EINVAL, "%s: collective %zu has a NULL text with a length", fn, i);
    }
    if ((s = sp__profiler_span_open(p, fn)) != SP_OK) return s;
    sp_comm_info one[16];
    sp__ext_comms *x = &sp__profiler_external(p)->comms;
    size_t before = x->count;
    for (size_t i = 0; i < count; i += 16) {
        size_t n = count - i < 16 ? count - i : 16;
        for (size_t k = 0; k < n; k++)
            one[k] = comm_filled(&comms[i + k]);
        if (sp__ext_comms_add(x, one, n) != 0) {
            x->count = before; /* all or nothing; the texts left behind are unused */
            return sp__fail(SP_ENOMEM, "out of memory adding %zu collectives", count);
        }
    }
    return SP_OK;
}

sp_status sp_profiler_set_dist_backend(sp_profiler *p, const char *backend)
{
    static const char fn[] = "sp_profiler_set_dist_backend";
    sp_status s = sp__profiler_may_add(p, fn);
    if (s != SP_OK) return s;
    char *kept = sp__profiler_dist_backend(p);
    if (!backend || !*backend) {
        kept[0] = '\0';
        return SP_OK;
    }
    if (!sp__dist_backend_ok(backend))
        return sp__fail(SP_EINVAL, "%s: '%.64s' is not a backend name (1 to %d letters, digits, "
                                   "'_', '-', ':' or ',')", fn, backend, SP__DIST_BACKEND_MAX - 1);
    memcpy(kept, backend, strlen(backend) + 1);
    return SP_OK;
}
