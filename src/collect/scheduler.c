/* scheduler.c: the step -> state functions of semantics.md §2. Schedulers
 * are plain values, so a profiler copies them and no scheduler owns memory. */
#include "collect.h"

#include <string.h>

#define INVALID "Invalid profiler scheduler arguments"

/* Checks a cycle's arguments, named as the caller's API names them (paddle's
 * closed/ready/record or torch's wait/warmup/active), and fills *out. The
 * message keeps paddle's words and says which argument was wrong. */
static sp_status make_cycle(sp_scheduler *out, int64_t closed, int64_t ready, int64_t record,
                            int64_t repeat, int64_t skip_first, const char *const names[3])
{
    const int64_t values[3] = {closed, ready, record};
    if (!out) return sp__fail(SP_EINVAL, INVALID ": the scheduler to fill is NULL");
    for (int k = 0; k < 2; k++)
        if (values[k] < 0)
            return sp__fail(SP_EINVAL, INVALID ": %s (%lld) must be >= 0", names[k],
                            (long long)values[k]);
    if (record <= 0)
        return sp__fail(SP_EINVAL, INVALID ": %s (%lld) must be greater than 0", names[2],
                        (long long)record);
    if (repeat < 0)
        return sp__fail(SP_EINVAL, INVALID ": repeat (%lld) must be >= 0 (0 repeats forever)",
                        (long long)repeat);
    if (skip_first < 0)
        return sp__fail(SP_EINVAL, INVALID ": skip_first (%lld) must be >= 0",
                        (long long)skip_first);
    /* The cycle length must not overflow the step arithmetic. */
    for (int k = 0; k < 3; k++)
        if (values[k] > INT64_MAX / 4)
            return sp__fail(SP_EINVAL, INVALID ": %s (%lld) must be at most %lld", names[k],
                            (long long)values[k], (long long)(INT64_MAX / 4));
    memset(out, 0, sizeof *out);
    out->form = SP_SCHEDULER_CYCLE;
    out->closed = closed;
    out->ready = ready;
    out->record = record;
    out->repeat = repeat;
    out->skip_first = skip_first;
    return SP_OK;
}

sp_status sp_scheduler_make(sp_scheduler *out, int64_t closed, int64_t ready, int64_t record,
                            int64_t repeat, int64_t skip_first)
{
    static const char *const names[3] = {"closed", "ready", "record"};
    return make_cycle(out, closed, ready, record, repeat, skip_first, names);
}

sp_status sp_scheduler_range(sp_scheduler *out, int64_t start, int64_t end)
{
    if (!out) return sp__fail(SP_EINVAL, INVALID ": the scheduler to fill is NULL");
    if (end <= start)
        return sp__fail(SP_EINVAL, INVALID ": end (%lld) must be greater than start (%lld)",
                        (long long)end, (long long)start);
    if (start < 0) start = 0;
    if (end <= start)
        return sp__fail(SP_EINVAL,
                        INVALID ": end (%lld) must be greater than 0 (steps are numbered from 0)",
                        (long long)end);
    if (start >= 1) return sp_scheduler_make(out, start - 1, 1, end - start, 1, 0);
    return sp_scheduler_make(out, 0, 0, end, 1, 0);
}

sp_status sp_scheduler_torch(sp_scheduler *out, int64_t wait, int64_t warmup, int64_t active,
                             int64_t repeat, int64_t skip_first, int64_t skip_first_wait)
{
    static const char *const names[3] = {"wait", "warmup", "active"};
    sp_status s = make_cycle(out, wait, warmup, active, repeat, skip_first, names);
    if (s != SP_OK) return s;
    out->form = SP_SCHEDULER_TORCH;
    out->skip_first_wait = skip_first_wait != 0;
    return SP_OK;
}

sp_status sp_scheduler_custom(sp_scheduler *out, sp_schedule_fn fn, void *user)
{
    if (!out) return sp__fail(SP_EINVAL, INVALID ": the scheduler to fill is NULL");
    if (!fn) return sp__fail(SP_EINVAL, INVALID ": the scheduler function is NULL");
    memset(out, 0, sizeof *out);
    out->form = SP_SCHEDULER_CUSTOM;
    out->fn = fn;
    out->user = user;
    return SP_OK;
}

sp_state sp_scheduler_state(const sp_scheduler *s, int64_t step)
{
    if (!s || step < 0) return SP_STATE_CLOSED;
    switch (s->form) {
    case SP_SCHEDULER_DEFAULT:
        return SP_STATE_RECORD;
    case SP_SCHEDULER_CUSTOM: {
        sp_state st = s->fn(step, s->user);
        return (unsigned)st <= SP_STATE_RECORD_AND_RETURN ? st : SP_STATE_CLOSED;
    }
    case SP_SCHEDULER_CYCLE:
    case SP_SCHEDULER_TORCH:
        break;
    default:
        return SP_STATE_CLOSED;
    }
    if (step < s->skip_first) return SP_STATE_CLOSED;
    int64_t n = step - s->skip_first;
    /* Skipping the first wait shifts the cycle; near INT64_MAX the shift
     * would overflow, and such steps are past any real run anyway. */
    if (s->skip_first_wait) {
        if (n > INT64_MAX - s->closed) return SP_STATE_CLOSED;
        n += s->closed;
    }
    int64_t period = s->closed + s->ready + s->record;
    if (s->repeat > 0 && n / period >= s->repeat) return SP_STATE_CLOSED;
    int64_t m = n % period;
    if (m < s->closed) return SP_STATE_CLOSED;
    if (m < s->closed + s->ready) return SP_STATE_READY;
    if (m < period - 1) return SP_STATE_RECORD;
    return SP_STATE_RECORD_AND_RETURN;
}

/* Returns the warning a scheduler deserves when a profiler adopts it, or
 * NULL (semantics.md §2.1, §2.3). */
const char *sp__scheduler_warning(const sp_scheduler *s)
{
    if (s->form == SP_SCHEDULER_CYCLE && s->ready == 0)
        return "Profiler will record data after enabling profiler immediately, some data "
               "collected at the beginning of profiling may be 'noisy' because of overhead.";
    if (s->form == SP_SCHEDULER_TORCH && s->ready == 0)
        return "Profiler won't be using warmup, this can skew profiler results";
    return NULL;
}
