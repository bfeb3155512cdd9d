/* steps.c: the per-step breakdown of steps.h. Every figure is built once as
 * one merged span list over the whole result, then read step by step with
 * a binary search, so the cost is linear in events plus steps x log spans.
 *
 * Decisions:
 * - Waits ("sync"): CUDA runtime or driver calls whose name contains
 *   "Synchronize" (any case), blocking copies (a name starting with
 *   "cudaMemcpy" or "cuMemcpy" without "Async"), and host ranges whose name
 *   is "item", ends in "::item" or contains "_local_scalar_dense" (torch's
 *   .item()), or contains "synchronize" (paddle and loaded traces keep some
 *   runtime calls as host events).
 * - Communication: the host ranges and GPU kernels of the Distributed
 *   Summary (semantics.md §6.4); exposed is the part when no computation
 *   kernel runs.
 * - GPU idle leaves out Dataloader time: a GPU that waits for data is the
 *   data loader's verdict, not the launch path's. */
#include "steps.h"

#include "summary.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const phase_names[SP__PHASE_COUNT] = {
    "Dataloader", "Forward", "Backward", "Optimization", "Communication", "Other"};

const char *sp__phase_name(int phase)
{
    return phase >= 0 && phase < SP__PHASE_COUNT ? phase_names[phase] : "";
}

int64_t sp__spans_within(const sp__spans *s, int64_t start, int64_t end)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->v[mid].end <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t sum = 0;
    for (size_t i = lo; i < s->n && s->v[i].start < end; i++) {
        int64_t a = s->v[i].start > start ? s->v[i].start : start;
        int64_t b = s->v[i].end < end ? s->v[i].end : end;
        if (b > a) sum += b - a;
    }
    return sum;
}

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t k = 0;
        while (k < n && hay[k] && tolower((unsigned char)hay[k]) == needle[k])
            k++;
        if (k == n) return 1;
    }
    return 0;
}

static int is_blocking_copy(const char *name)
{
    return (strncmp(name, "cudaMemcpy", 10) == 0 || strncmp(name, "cuMemcpy", 8) == 0) &&
           !contains_nocase(name, "async");
}

static int is_wait_name(const char *name)
{
    size_t n = strlen(name);
    return contains_nocase(name, "synchronize") || strcmp(name, "item") == 0 ||
           (n >= 6 && strcmp(name + n - 6, "::item") == 0) ||
           strstr(name, "_local_scalar_dense") != NULL;
}

/* The waits of the result, merged (see the decisions above). */
static int wait_spans(const sp__model *m, sp__spans *out)
{
    const sp_result *r = m->result;
    for (size_t t = 0; r && t < r->thread_count; t++) {
        const sp__thread *th = &r->threads[t];
        for (size_t k = 0; k < th->runtime_count; k++) {
            const char *name = sp__result_name(r, th->runtimes[k].name);
            if (name && (contains_nocase(name, "synchronize") || is_blocking_copy(name)))
                sp__spans_add(out, th->runtimes[k].start_ns, th->runtimes[k].end_ns);
        }
        for (size_t k = 0; k < th->count; k++) {
            const sp__event *e = &th->events[k];
            if (sp__event_is_mark(e) || e->type == SP_EVENT_PROFILE_STEP) continue;
            const char *name = sp__result_name(r, e->name);
            if (name && is_wait_name(name)) sp__spans_add(out, e->start_ns, e->end_ns);
        }
    }
    sp__spans_merge(out);
    return out->failed ? -1 : 0;
}

/* The step number from "ProfileStep#N" (or any name ending "#N"), else -1. */
static int64_t step_number(const char *name)
{
    const char *hash = name ? strrchr(name, '#') : NULL;
    if (!hash || !isdigit((unsigned char)hash[1])) return -1;
    char *end;
    long long v = strtoll(hash + 1, &end, 10);
    return *end == '\0' ? (int64_t)v : -1;
}

static int by_start(const void *pa, const void *pb)
{
    const sp__step *a = pa, *b = pb;
    if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns ? -1 : 1;
    return a->end_ns < b->end_ns ? -1 : a->end_ns > b->end_ns;
}

static int is_step(const sp__event *e)
{
    return e->type == SP_EVENT_PROFILE_STEP && !sp__event_is_mark(e) && !(e->flags & SP_EVENT_FLAG_SPLIT_CONT);
}

int sp__steps_collect(const sp_result *r, sp__steps *s)
{
    memset(s, 0, sizeof *s);
    size_t n = 0;
    for (size_t t = 0; r && t < r->thread_count; t++)
        for (size_t k = 0; k < r->threads[t].count; k++)
            n += is_step(&r->threads[t].events[k]);
    if (n == 0) return 0;
    s->v = sp__alloc(sizeof *s->v * n);
    if (!s->v) return -1;
    for (size_t t = 0; t < r->thread_count; t++)
        for (size_t k = 0; k < r->threads[t].count; k++) {
            const sp__event *e = &r->threads[t].events[k];
            if (!is_step(e)) continue;
            sp__step *st = &s->v[s->n++];
            memset(st, 0, sizeof *st);
            st->start_ns = e->start_ns;
            st->end_ns = e->end_ns > e->start_ns ? e->end_ns : e->start_ns;
            st->number = step_number(sp__result_name(r, e->name));
            st->num_samples = (e->flags & SP_EVENT_FLAG_SAMPLES) && e->value >= 0 &&
                                      e->value <= SP__STEP_SAMPLES_MAX
                                  ? e->value
                                  : -1;
        }
    qsort(s->v, s->n, sizeof *s->v, by_start);
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].number < 0) s->v[i].number = (int64_t)i;
    return 0;
}

ptrdiff_t sp__steps_at(const sp__steps *s, int64_t t)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->v[mid].start_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) return -1;
    const sp__step *st = &s->v[lo - 1];
    return t < st->end_ns ? (ptrdiff_t)(lo - 1) : -1;
}

enum { L_HOST_COMM, L_COMM, L_COMP, L_EXPOSED, L_KNOWN, L_BUSY, L_BUSY_DL, L_WAIT, L_TMP, L_COUNT };

static void fill(const sp__model *m, sp__steps *s, sp__spans *l)
{
    static const int types[4] = {SP_EVENT_DATALOADER, SP_EVENT_FORWARD, SP_EVENT_BACKWARD,
                                 SP_EVENT_OPTIMIZATION};
    for (size_t i = 0; i < s->n; i++) {
        sp__step *st = &s->v[i];
        int64_t a = st->start_ns, b = st->end_ns, len = b - a;
        for (int p = 0; p < 4; p++)
            st->phase_ns[p] = sp__spans_within(&m->cpu_ranges[types[p]], a, b);
        st->phase_ns[SP__PHASE_COMMUNICATION] = sp__spans_within(&l[L_HOST_COMM], a, b);
        st->phase_ns[SP__PHASE_OTHER] = len - sp__spans_within(&l[L_KNOWN], a, b);
        st->busy_ns = sp__spans_within(&l[L_BUSY], a, b);
        st->idle_ns = s->has_gpu ? len - sp__spans_within(&l[L_BUSY_DL], a, b) : 0;
        st->kernel_ns = sp__spans_within(&m->gpu_ranges[0], a, b);
        st->runtime_ns = sp__spans_within(&m->cpu_ranges[SP_EVENT_CUDA_RUNTIME], a, b);
        st->sync_ns = sp__spans_within(&l[L_WAIT], a, b);
        st->comm_ns = sp__spans_within(&l[L_COMM], a, b);
        st->exposed_comm_ns = sp__spans_within(&l[L_EXPOSED], a, b);
    }
    const sp_result *r = m->result;
    for (size_t d = 0; d < r->device_count; d++) {
        const sp__device_rec *dev = &r->devices[d];
        if (dev->type != SP_EVENT_KERNEL) continue;
        ptrdiff_t i = sp__steps_at(s, dev->start_ns);
        if (i < 0) continue;
        s->v[i].kernels++;
        s->v[i].short_kernels += dev->end_ns - dev->start_ns < SP__SHORT_KERNEL_NS;
    }
}

int sp__steps_build(const sp__model *m, sp__steps *s)
{
    memset(s, 0, sizeof *s);
    if (m->failed) return -1;
    if (sp__steps_collect(m->result, s) != 0) return -1;
    if (s->n == 0) return 0;
    s->has_gpu = m->result->device_count > 0;
    sp__spans l[L_COUNT];
    for (int i = 0; i < L_COUNT; i++)
        sp__spans_init(&l[i]);
    int rc = -1;
    if (sp__summary_cpu_comm(m, &l[L_HOST_COMM]) != 0) goto done;
    if (sp__summary_gpu_split(m, &l[L_TMP], &l[L_COMP]) != 0) goto done;
    if (sp__spans_union(&l[L_COMM], &l[L_HOST_COMM], &l[L_TMP]) != 0) goto done;
    if (sp__spans_subtract(&l[L_EXPOSED], &l[L_COMM], &l[L_COMP]) != 0) goto done;
    if (sp__spans_union(&l[L_KNOWN], &m->cpu_ranges[SP_EVENT_DATALOADER],
                        &m->cpu_ranges[SP_EVENT_FORWARD]) != 0 ||
        sp__spans_union(&l[L_KNOWN], &l[L_KNOWN], &m->cpu_ranges[SP_EVENT_BACKWARD]) != 0 ||
        sp__spans_union(&l[L_KNOWN], &l[L_KNOWN], &m->cpu_ranges[SP_EVENT_OPTIMIZATION]) != 0 ||
        sp__spans_union(&l[L_KNOWN], &l[L_KNOWN], &l[L_HOST_COMM]) != 0)
        goto done;
    if (sp__spans_union(&l[L_BUSY], &m->gpu_ranges[0], &m->gpu_ranges[1]) != 0 ||
        sp__spans_union(&l[L_BUSY], &l[L_BUSY], &m->gpu_ranges[2]) != 0 ||
        sp__spans_union(&l[L_BUSY_DL], &l[L_BUSY], &m->cpu_ranges[SP_EVENT_DATALOADER]) != 0)
        goto done;
    if (wait_spans(m, &l[L_WAIT]) != 0) goto done;
    fill(m, s, l);
    rc = 0;
done:
    for (int i = 0; i < L_COUNT; i++)
        sp__spans_fini(&l[i]);
    if (rc != 0) sp__steps_fini(s);
    return rc;
}

void sp__steps_fini(sp__steps *s)
{
    sp__free(s->v);
    memset(s, 0, sizeof *s);
}

/* 1 where names[id] equals name, for every id of the result. */
static uint8_t *name_matches(const sp_result *r, const char *name)
{
    uint8_t *match = sp__alloc(r->names.count ? r->names.count : 1);
    if (!match) return NULL;
    for (uint32_t id = 0; id < r->names.count; id++)
        match[id] = strcmp(sp__names_get(&r->names, id), name) == 0;
    return match;
}

/* The ranges (kernels, or host ranges) named `name`, merged; *found is set
 * when there is at least one. */
static int named_spans(const sp__model *m, const char *name, int kernels, sp__spans *out,
                       int *found)
{
    const sp_result *r = m->result;
    uint8_t *match = name_matches(r, name);
    *found = 0;
    if (!match) return -1;
    if (kernels) {
        for (size_t d = 0; d < r->device_count; d++) {
            const sp__device_rec *dev = &r->devices[d];
            if (dev->type == SP_EVENT_KERNEL && dev->name < r->names.count && match[dev->name]) {
                sp__spans_add(out, dev->start_ns, dev->end_ns);
                *found = 1;
            }
        }
    } else {
        for (size_t t = 0; t < r->thread_count; t++)
            for (size_t k = 0; k < r->threads[t].count; k++) {
                const sp__event *e = &r->threads[t].events[k];
                if (sp__event_is_mark(e) || e->type == SP_EVENT_PROFILE_STEP) continue;
                if (e->name < r->names.count && match[e->name]) {
                    sp__spans_add(out, e->start_ns, e->end_ns);
                    *found = 1;
                }
            }
    }
    sp__free(match);
    sp__spans_merge(out);
    return out->failed ? -1 : 0;
}

int sp__steps_metric(const sp__model *m, const sp__steps *s, const char *metric, double *values,
                     int *found)
{
    *found = 1;
    if (strcmp(metric, "step") == 0) {
        for (size_t i = 0; i < s->n; i++)
            values[i] = (double)(s->v[i].end_ns - s->v[i].start_ns);
        return 0;
    }
    if (strncmp(metric, "phase:", 6) == 0) {
        const char *p = metric + 6;
        for (int ph = 0; ph < SP__PHASE_COUNT; ph++)
            if (strcasecmp(p, phase_names[ph]) == 0) {
                for (size_t i = 0; i < s->n; i++)
                    values[i] = (double)s->v[i].phase_ns[ph];
                return 0;
            }
        for (int type = 0; type < SP_EVENT_TYPE_COUNT; type++)
            if (strcasecmp(p, sp_event_type_name((sp_event_type)type)) == 0 &&
                type != SP_EVENT_KERNEL && type != SP_EVENT_MEMCPY && type != SP_EVENT_MEMSET) {
                for (size_t i = 0; i < s->n; i++)
                    values[i] = (double)sp__spans_within(&m->cpu_ranges[type], s->v[i].start_ns,
                                                         s->v[i].end_ns);
                return 0;
            }
        return 1;
    }
    int kernels = strncmp(metric, "kernel:", 7) == 0;
    if (!kernels && strncmp(metric, "op:", 3) != 0) return 1;
    const char *name = metric + (kernels ? 7 : 3);
    if (*name == '\0') return 1;
    sp__spans spans;
    sp__spans_init(&spans);
    int rc = named_spans(m, name, kernels, &spans, found);
    for (size_t i = 0; rc == 0 && i < s->n; i++)
        values[i] = (double)sp__spans_within(&spans, s->v[i].start_ns, s->v[i].end_ns);
    sp__spans_fini(&spans);
    return rc;
}
