/* added_events.h: what the tests of the calls that add another tracer's
 * data to a span (sp_profiler_add_events, _add_memory_events,
 * _add_op_info) share: that tracer's clock, and a profiler that writes
 * nothing and says nothing, so each test reads only the result. */
#ifndef SP_TESTS_ADDED_EVENTS_H
#define SP_TESTS_ADDED_EVENTS_H

#include "check.h"
#include "stepprof/stepprof.h"

#include <time.h>

/* CLOCK_REALTIME now, in ns: the clock the added data is measured on. */
static inline int64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void quiet(sp_log_level level, const char *message, void *user)
{
    (void)level, (void)message, (void)user;
}

/* A profiler with no handler and no log, created from opts as given (the
 * caller's sp_options_init'ed options, or NULL for the defaults). */
static inline sp_profiler *make_quiet(const sp_options *opts)
{
    sp_options o;
    if (opts)
        o = *opts;
    else
        sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.log = quiet;
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    return p;
}

#endif
