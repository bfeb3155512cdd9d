/* report_series.c: the report's chart series (docs/report.md §2): the
 * operators and kernels that took the most time, GPU utilisation over
 * time, and the memory curve of each place. Times are on the report's time
 * line: nanoseconds from the first step's start (the span's start without
 * steps), as the step list's. */
#include "report.h"

#include "json_escape.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int64_t sp__report_origin(const sp__model *m, const sp__steps *s)
{
    return s->n ? s->v[0].start_ns : m->result->span_start_ns;
}

typedef struct named_time {
    const char *name;
    int64_t ns, gpu_ns, calls;
} named_time;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const named_time *)a)->name, ((const named_time *)b)->name);
}

static int by_time_desc(const void *a, const void *b)
{
    const named_time *x = a, *y = b;
    if (x->ns != y->ns) return x->ns > y->ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Sums v's entries of the same name and writes the SP__REPORT_TOP longest
 * as [name, ns, calls, gpu_ns]. */
static void put_top(sp__buf *b, const char *member, named_time *v, size_t n)
{
    qsort(v, n, sizeof *v, by_name);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && strcmp(v[k - 1].name, v[i].name) == 0) {
            v[k - 1].ns += v[i].ns;
            v[k - 1].gpu_ns += v[i].gpu_ns;
            v[k - 1].calls += v[i].calls;
        } else {
            v[k++] = v[i];
        }
    }
    qsort(v, k, sizeof *v, by_time_desc);
    sp__buf_printf(b, "\"%s\": [", member);
    for (size_t i = 0; i < k && i < SP__REPORT_TOP; i++) {
        sp__buf_puts(b, i ? ", [" : "[");
        sp__json_put_string(b, v[i].name, strlen(v[i].name));
        sp__buf_printf(b, ", %" PRId64 ", %" PRId64 ", %" PRId64 "]", v[i].ns, v[i].calls, v[i].gpu_ns);
    }
    sp__buf_puts(b, "],\n ");
}

/* Outermost operators (an operator inside another is part of its time),
 * by the same call rule as the Operator Summary: a range cut at step
 * boundaries counts once, whole. */
static void put_top_ops(sp__buf *b, const sp__model *m)
{
    size_t n = 0;
    for (size_t t = 0; t < m->thread_count; t++)
        n += m->threads[t].count;
    named_time *v = sp__alloc(sizeof *v * (n ? n : 1));
    if (!v) {
        b->failed = 1;
        return;
    }
    size_t k = 0;
    for (size_t t = 0; t < m->thread_count; t++) {
        const sp__thread_model *tm = &m->threads[t];
        const sp__event *ev = tm->thread->events;
        for (size_t i = 0; i < tm->count; i++) {
            const sp__node *node = &tm->nodes[i];
            if (ev[node->event].type != SP_EVENT_OPERATOR) continue;
            if (node->parent >= 0 && ev[tm->nodes[node->parent].event].type == SP_EVENT_OPERATOR)
                continue;
            sp__node call;
            int64_t start, end;
            if (!sp__model_call(tm, node, &call, &start, &end)) continue;
            v[k++] = (named_time){sp__result_name(m->result, ev[node->event].name), call.cpu, call.ggpu, 1};
        }
    }
    put_top(b, "top_ops", v, k);
    sp__free(v);
}

static void put_top_kernels(sp__buf *b, const sp_result *r)
{
    named_time *v = sp__alloc(sizeof *v * (r->device_count ? r->device_count : 1));
    if (!v) {
        b->failed = 1;
        return;
    }
    size_t k = 0;
    for (size_t i = 0; i < r->device_count; i++) {
        const sp__device_rec *d = &r->devices[i];
        if (d->type != SP_EVENT_KERNEL) continue;
        int64_t ns = d->end_ns - d->start_ns;
        v[k++] = (named_time){sp__result_name(r, d->name), ns, ns, 1};
    }
    put_top(b, "top_kernels", v, k);
    sp__free(v);
}

/* The share of each of SP__REPORT_UTIL_BINS equal bins of the steps (the
 * span without steps) in which some kernel ran. */
static void put_gpu_util(sp__buf *b, const sp__model *m, const sp__steps *s)
{
    const sp__spans *k = &m->gpu_ranges[0];
    if (k->n == 0) {
        sp__buf_puts(b, "\"gpu_util\": null,\n ");
        return;
    }
    int64_t origin = sp__report_origin(m, s);
    int64_t end = s->n ? s->v[s->n - 1].end_ns : m->result->span_end_ns;
    int64_t bins = SP__REPORT_UTIL_BINS;
    if (end - origin < bins) bins = end - origin > 0 ? end - origin : 1;
    int64_t width = end > origin ? (end - origin + bins - 1) / bins : 1;
    sp__buf_printf(b, "\"gpu_util\": {\"bin_ns\": %" PRId64 ", \"busy\": [", width);
    for (int64_t i = 0; i < bins; i++) {
        int64_t a = origin + i * width;
        double share = (double)sp__spans_within(k, a, a + width) / (double)width;
        sp__buf_printf(b, "%s%.4f", i ? ", " : "", share);
    }
    sp__buf_puts(b, "]},\n ");
}

typedef struct mem_point {
    const char *place;
    int64_t ts;
    uint64_t allocated, reserved;
    size_t seq; /* keeps equal times in the order they were recorded */
} mem_point;

static int by_place_time(const void *a, const void *b)
{
    const mem_point *x = a, *y = b;
    int c = strcmp(x->place, y->place);
    if (c) return c;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* One place's points, at most SP__REPORT_MEMORY_POINTS: when there are
 * more, each bucket of consecutive points keeps the one with the most
 * allocated, so the peak is never lost. */
static void put_place(sp__buf *b, const mem_point *p, size_t n, int64_t origin)
{
    sp__buf_puts(b, "{\"place\": ");
    sp__json_put_string(b, p[0].place, strlen(p[0].place));
    sp__buf_printf(b, ", \"events\": %zu, \"points\": [", n);
    size_t per = (n + SP__REPORT_MEMORY_POINTS - 1) / SP__REPORT_MEMORY_POINTS;
    for (size_t i = 0; i < n; i += per) {
        size_t best = i;
        for (size_t j = i + 1; j < i + per && j < n; j++)
            if (p[j].allocated > p[best].allocated) best = j;
        sp__buf_printf(b, "%s[%" PRId64 ", %" PRIu64 ", %" PRIu64 "]", i ? ", " : "", p[best].ts - origin,
                       p[best].allocated, p[best].reserved);
    }
    sp__buf_puts(b, "]}");
}

static void put_memory(sp__buf *b, const sp__model *m, const sp__steps *s)
{
    const sp_result *r = m->result;
    size_t n = 0;
    for (size_t t = 0; t < r->thread_count; t++)
        n += r->threads[t].mem_count;
    if (n == 0) {
        sp__buf_puts(b, "\"memory\": null,\n ");
        return;
    }
    mem_point *p = sp__alloc(sizeof *p * n);
    if (!p) {
        b->failed = 1;
        return;
    }
    size_t k = 0;
    for (size_t t = 0; t < r->thread_count; t++)
        for (size_t i = 0; i < r->threads[t].mem_count; i++) {
            const sp__mem_event *e = &r->threads[t].mems[i];
            p[k] = (mem_point){sp__result_name(r, e->place), e->ts_ns, e->current_allocated,
                               e->current_reserved, k};
            k++;
        }
    qsort(p, n, sizeof *p, by_place_time);
    int64_t origin = sp__report_origin(m, s);
    sp__buf_puts(b, "\"memory\": [");
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && strcmp(p[j].place, p[i].place) == 0)
            j++;
        if (i) sp__buf_puts(b, ", ");
        put_place(b, p + i, j - i, origin);
        i = j;
    }
    sp__buf_puts(b, "],\n ");
    sp__free(p);
}

void sp__report_series(sp__buf *b, const sp__model *m, const sp__steps *s)
{
    put_top_ops(b, m);
    put_top_kernels(b, m->result);
    put_gpu_util(b, m, s);
    put_memory(b, m, s);
}
