/* report_timeline.c: the report's one-step timeline (docs/report.md §2):
 * the events of the median step, threads and GPU streams as lanes. A range
 * that crosses the step's edges is cut to them. Past
 * SP__REPORT_TIMELINE_EVENTS events the longest are kept, and past
 * SP__REPORT_LANES lanes the busiest; the data counts what was left out. */
#include "report.h"

#include "json_escape.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

size_t sp__report_median_step(const sp__steps *s)
{
    /* Order by length then number without sorting a copy: the median is
     * the step with (n - 1) / 2 steps before it in that order. */
    size_t want = (s->n - 1) / 2;
    for (size_t i = 0; i < s->n; i++) {
        int64_t li = s->v[i].end_ns - s->v[i].start_ns;
        size_t before = 0;
        for (size_t j = 0; j < s->n; j++) {
            int64_t lj = s->v[j].end_ns - s->v[j].start_ns;
            if (lj < li || (lj == li && (s->v[j].number < s->v[i].number ||
                                         (s->v[j].number == s->v[i].number && j < i))))
                before++;
        }
        if (before == want) return i;
    }
    return 0;
}

typedef struct tl_event {
    int64_t start, dur; /* from the step's start, cut to the step */
    uint32_t name;      /* id in the result's names */
    uint32_t lane;
    uint32_t depth;
    uint8_t type;
} tl_event;

typedef struct tl_lane {
    char label[320];
    int gpu;
    int64_t busy;
    int keep;
} tl_lane;

static int by_dur_desc(const void *a, const void *b)
{
    const tl_event *x = a, *y = b;
    if (x->dur != y->dur) return x->dur > y->dur ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int by_lane_start(const void *a, const void *b)
{
    const tl_event *x = a, *y = b;
    if (x->lane != y->lane) return x->lane < y->lane ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->dur != y->dur) return x->dur > y->dur ? -1 : 1;
    return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static int lane_by_busy(const void *a, const void *b)
{
    const tl_lane *x = *(tl_lane *const *)a, *y = *(tl_lane *const *)b;
    if (x->busy != y->busy) return x->busy > y->busy ? -1 : 1;
    return x < y ? -1 : x > y;
}

typedef struct timeline {
    tl_event *ev;
    size_t n, cap;
    tl_lane *lanes;
    size_t nlanes, lanes_cap;
    int failed;
} timeline;

static void add_event(timeline *t, int64_t s, int64_t e, int64_t a, int64_t z, uint32_t name,
                      uint32_t lane, uint32_t depth, uint8_t type)
{
    /* A range that only touches the step belongs to its neighbour. */
    if (e > s ? e <= a || s >= z : s < a || s > z) return;
    if (s < a) s = a;
    if (e > z) e = z;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        tl_event *v = sp__realloc(t->ev, sizeof *v * cap);
        if (!v) {
            t->failed = 1;
            return;
        }
        t->ev = v;
        t->cap = cap;
    }
    t->ev[t->n++] = (tl_event){s - a, e - s, name, lane, depth, type};
    t->lanes[lane].busy += depth == 0 ? e - s : 0;
}

static tl_lane *add_lane(timeline *t)
{
    if (t->nlanes == t->lanes_cap) {
        size_t cap = t->lanes_cap ? t->lanes_cap * 2 : 16;
        tl_lane *v = sp__realloc(t->lanes, sizeof *v * cap);
        if (!v) {
            t->failed = 1;
            return NULL;
        }
        t->lanes = v;
        t->lanes_cap = cap;
    }
    tl_lane *l = &t->lanes[t->nlanes++];
    memset(l, 0, sizeof *l);
    return l;
}

/* Lanes: each thread, then each (device, stream) with records in the step. */
static void gather(timeline *t, const sp_result *r, int64_t a, int64_t z)
{
    for (size_t i = 0; i < r->thread_count && !t->failed; i++) {
        const sp__thread *th = &r->threads[i];
        tl_lane *l = add_lane(t);
        if (!l) return;
        const char *name = sp__result_name(r, th->name);
        snprintf(l->label, sizeof l->label, "%.256s%stid %llu", name, *name ? ", " : "",
                 (unsigned long long)th->tid);
        uint32_t lane = (uint32_t)(t->nlanes - 1);
        for (size_t k = 0; k < th->count; k++) {
            const sp__event *e = &th->events[k];
            if (e->start_ns > z) break;
            if (sp__event_is_mark(e)) continue;
            add_event(t, e->start_ns, e->end_ns, a, z, e->name, lane, e->depth, e->type);
        }
    }
    size_t first_gpu = t->nlanes;
    for (size_t i = 0; i < r->device_count && !t->failed; i++) {
        const sp__device_rec *d = &r->devices[i];
        if (d->end_ns <= a || d->start_ns >= z) continue;
        size_t lane;
        char label[64];
        snprintf(label, sizeof label, "GPU %u, stream %u", d->device, d->stream);
        for (lane = first_gpu; lane < t->nlanes; lane++)
            if (strcmp(t->lanes[lane].label, label) == 0) break;
        if (lane == t->nlanes) {
            tl_lane *l = add_lane(t);
            if (!l) return;
            memcpy(l->label, label, sizeof label);
            l->gpu = 1;
        }
        add_event(t, d->start_ns, d->end_ns, a, z, d->name, (uint32_t)lane, 0, d->type);
    }
}

/* Keeps the SP__REPORT_LANES busiest lanes and the longest
 * SP__REPORT_TIMELINE_EVENTS events of those; returns how many events
 * the dropped lanes had. */
static size_t trim(timeline *t)
{
    size_t used = 0;
    for (size_t i = 0; i < t->nlanes; i++)
        t->lanes[i].keep = 0;
    for (size_t i = 0; i < t->n; i++)
        t->lanes[t->ev[i].lane].keep = 1;
    tl_lane **order = sp__alloc(sizeof *order * (t->nlanes ? t->nlanes : 1));
    if (!order) {
        t->failed = 1;
        return 0;
    }
    for (size_t i = 0; i < t->nlanes; i++)
        if (t->lanes[i].keep) order[used++] = &t->lanes[i];
    qsort(order, used, sizeof *order, lane_by_busy);
    for (size_t i = SP__REPORT_LANES; i < used; i++)
        order[i]->keep = 0;
    sp__free(order);
    size_t k = 0, gone = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (t->lanes[t->ev[i].lane].keep)
            t->ev[k++] = t->ev[i];
        else
            gone++;
    }
    t->n = k;
    if (t->n > SP__REPORT_TIMELINE_EVENTS) {
        qsort(t->ev, t->n, sizeof *t->ev, by_dur_desc);
        t->n = SP__REPORT_TIMELINE_EVENTS;
    }
    if (t->n) qsort(t->ev, t->n, sizeof *t->ev, by_lane_start);
    return gone;
}

/* The names the kept events use, each once, in first use; ev's name becomes
 * its index there. */
static void put_names(sp__buf *b, timeline *t, const sp_result *r)
{
    uint32_t *slot = sp__alloc(sizeof *slot * ((size_t)r->names.count + 1));
    if (!slot) {
        b->failed = 1;
        return;
    }
    memset(slot, 0, sizeof *slot * ((size_t)r->names.count + 1));
    uint32_t next = 0;
    sp__buf_puts(b, ", \"names\": [");
    for (size_t i = 0; i < t->n; i++) {
        uint32_t id = t->ev[i].name < r->names.count ? t->ev[i].name : r->names.count;
        if (!slot[id]) {
            const char *s = sp__result_name(r, t->ev[i].name);
            if (next) sp__buf_puts(b, ", ");
            sp__json_put_string(b, s, strlen(s));
            slot[id] = ++next;
        }
        t->ev[i].name = slot[id] - 1;
    }
    sp__buf_puts(b, "]");
    sp__free(slot);
}

static void put_lanes(sp__buf *b, const timeline *t)
{
    sp__buf_puts(b, ",\n  \"lanes\": [");
    const char *sep = "";
    size_t i = 0;
    for (size_t lane = 0; lane < t->nlanes; lane++) {
        if (!t->lanes[lane].keep) continue;
        sp__buf_printf(b, "%s{\"name\": ", sep);
        sp__json_put_string(b, t->lanes[lane].label, strlen(t->lanes[lane].label));
        sp__buf_printf(b, ", \"gpu\": %s, \"events\": [", t->lanes[lane].gpu ? "true" : "false");
        const char *esep = "";
        for (; i < t->n && t->ev[i].lane == lane; i++) {
            const tl_event *e = &t->ev[i];
            sp__buf_printf(b, "%s[%" PRId64 ", %" PRId64 ", %u, %u, %u]", esep, e->start, e->dur,
                           e->depth, e->name, e->type);
            esep = ", ";
        }
        sp__buf_puts(b, "]}");
        sep = ",\n   ";
    }
    sp__buf_puts(b, "]");
}

void sp__report_timeline(sp__buf *b, const sp__model *m, const sp__steps *s)
{
    if (s->n == 0) {
        sp__buf_puts(b, "\"timeline\": null");
        return;
    }
    const sp__step *st = &s->v[sp__report_median_step(s)];
    timeline t;
    memset(&t, 0, sizeof t);
    gather(&t, m->result, st->start_ns, st->end_ns);
    size_t total = t.n;
    size_t gone = t.failed ? 0 : trim(&t);
    if (t.failed) {
        b->failed = 1;
    } else {
        size_t lanes_kept = 0;
        for (size_t i = 0; i < t.nlanes; i++)
            lanes_kept += (size_t)t.lanes[i].keep;
        sp__buf_printf(b, "\"timeline\": {\"step\": %" PRId64 ", \"start_ns\": %" PRId64 ", \"dur_ns\": %" PRId64
                          ", \"events_total\": %zu, \"events_shown\": %zu, \"events_in_lanes_left_out\": %zu"
                          ", \"lanes_shown\": %zu, \"types\": [",
                       st->number, st->start_ns - s->v[0].start_ns, st->end_ns - st->start_ns, total, t.n,
                       gone, lanes_kept);
        for (int k = 0; k < SP_EVENT_TYPE_COUNT; k++)
            sp__buf_printf(b, "%s\"%s\"", k ? ", " : "", sp_event_type_name((sp_event_type)k));
        sp__buf_puts(b, "]");
        put_names(b, &t, m->result);
        put_lanes(b, &t);
        sp__buf_puts(b, "}");
    }
    sp__free(t.ev);
    sp__free(t.lanes);
}
