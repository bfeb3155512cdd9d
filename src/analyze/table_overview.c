/* table_overview.c: the Overview Summary (semantics.md §6.2): per event
 * type, the merged time of its ranges over all threads and its share of T.
 * Dataloader, Forward, Backward and Optimization take their figures from the
 * Model items (outermost ranges only), Communication from the merged host
 * communication ranges. The GPU rows sum device records per type over all
 * devices and streams, merged, and add a Communication row (the merged GPU
 * communication kernels of §6.4, counted by distinct range) when any exist. */
#include "summary.h"

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>


/* The GPU Communication row: distinct ranges and merged length of the GPU
 * communication kernels (*calls 0 when there are none). Returns 0 or -1. */
static int gpu_comm_row(const sp__model *m, int64_t *calls, int64_t *time)
{
    sp__spans s;
    sp__spans_init(&s);
    *calls = *time = 0;
    int rc = sp__summary_gpu_comm(m, &s);
    if (rc == 0 && s.n > 0) {
        size_t distinct = sp__spans_distinct(&s);
        if (distinct == SIZE_MAX) {
            rc = -1;
        } else {
            sp__spans_merge(&s);
            *calls = (int64_t)distinct;
            *time = sp__spans_length(&s);
        }
    }
    sp__spans_fini(&s);
    return rc;
}

typedef struct overview_row {
    int type;
    int64_t calls, time;
} overview_row;

static int by_time_desc(const void *pa, const void *pb)
{
    const overview_row *a = pa, *b = pb;
    if (a->time != b->time) return a->time > b->time ? -1 : 1;
    return a->type - b->type;
}

static int is_host_type(int type)
{
    return type != SP_EVENT_KERNEL && type != SP_EVENT_MEMCPY && type != SP_EVENT_MEMSET;
}

/* Fills rows with every host type present; returns the count or -1. */
static int collect_rows(const sp__model *m, overview_row *rows)
{
    sp__model_item items[SP__ITEM_COUNT];
    if (sp__summary_model_items(m, items) != 0) return -1;
    sp__spans comm;
    sp__spans_init(&comm);
    if (sp__summary_cpu_comm(m, &comm) != 0) return -1;
    int n = 0;
    for (int type = 0; type < SP_EVENT_TYPE_COUNT; type++) {
        if (!is_host_type(type) || m->calls[type] == 0) continue;
        overview_row r = {type, m->calls[type], m->cpu_sum[type]};
        int item = type == SP_EVENT_DATALOADER     ? SP__ITEM_DATALOADER
                   : type == SP_EVENT_FORWARD      ? SP__ITEM_FORWARD
                   : type == SP_EVENT_BACKWARD     ? SP__ITEM_BACKWARD
                   : type == SP_EVENT_OPTIMIZATION ? SP__ITEM_OPTIMIZATION
                                                   : -1;
        if (item >= 0) {
            r.calls = items[item].calls;
            r.time = items[item].cpu_total;
        }
        if (type == SP_EVENT_COMMUNICATION) {
            /* As every host row, only the ranges and the time inside the
             * steps (model.h). */
            size_t kept = 0;
            for (size_t i = 0; i < comm.n; i++) {
                int counts;
                sp__model_in_steps(m, comm.v[i].start, comm.v[i].end, &counts);
                if (counts) comm.v[kept++] = comm.v[i];
            }
            comm.n = kept;
            r.calls = (int64_t)sp__spans_distinct(&comm);
            if (sp__model_clip_to_steps(m, &comm) != 0) {
                sp__spans_fini(&comm);
                return -1;
            }
            r.time = sp__spans_length(&comm);
        }
        rows[n++] = r;
    }
    sp__spans_fini(&comm);
    qsort(rows, (size_t)n, sizeof *rows, by_time_desc);
    return n;
}

static void add_row(sp__table *t, const char *name, int indent, int64_t calls, int64_t time,
                    const sp__model *m, const char *unit)
{
    char label[64], c[32], tm[64], ratio[32];
    snprintf(label, sizeof label, "%s%s", indent ? "  " : "", name);
    snprintf(c, sizeof c, "%lld", (long long)calls);
    sp__fmt_time(tm, sizeof tm, (double)time, unit);
    sp__fmt_ratio(ratio, sizeof ratio, (double)time, (double)m->T);
    const char *cells[] = {label, c, tm, ratio};
    sp__table_row(t, cells);
}

static const char *const note[] = {
    "Note:",
    "In this table, We sum up all collected events in terms of event type.",
    "The time of events collected on host are presented as CPU Time, and as GPU Time if on device.",
    "Events with different types may overlap or inclusion, e.g. Operator includes OperatorInner, "
    "so the sum of ratios is not 100%.",
    "The time of events in the same type with overlap will not calculate twice, and all time is "
    "summed after merged.",
    "Example:",
    "Thread 1:",
    "  Operator: |___________|     |__________|",
    "Thread 2:",
    "  Operator:   |____________|     |___|",
    "After merged:",
    "  Result:   |______________|  |__________|",
    "",
};

int sp__summary_overview(const sp__model *m, const sp__summary_opts *o, sp__table **out)
{
    overview_row rows[SP_EVENT_TYPE_COUNT];
    *out = NULL;
    int64_t comm_calls, comm_time;
    int n = collect_rows(m, rows);
    if (n < 0) return -1;
    if (gpu_comm_row(m, &comm_calls, &comm_time) != 0) return -1;
    sp__table *t = sp__table_new(4);
    if (!t) return -1;
    for (size_t c = 0; c < 4; c++) sp__table_column(t, c, 25, 0);
    char unit_line[32];
    snprintf(unit_line, sizeof unit_line, "Time unit: %s", o->time_unit);
    const char *cpu_header[] = {"Event Type", "Calls", "CPU Time", "Ratio (%)"};
    const char *gpu_header[] = {"", "Calls", "GPU Time", "Ratio (%)"};
    sp__table_title(t, "Overview Summary");
    sp__table_text(t, unit_line);
    sp__table_separator(t);
    sp__table_header(t, cpu_header);
    sp__table_separator(t);
    for (int i = 0; i < n; i++)
        add_row(t, sp_event_type_name((sp_event_type)rows[i].type), i > 0, rows[i].calls,
                rows[i].time, m, o->time_unit);
    sp__table_separator(t);
    sp__table_header(t, gpu_header);
    sp__table_separator(t);
    /* Kernel, Memcpy and Memset over all devices and streams, then the GPU
     * communication kernels of §6.4 (also counted in the Kernel row). */
    static const char *const gpu_names[] = {"Kernel", "Memcpy", "Memset"};
    for (int g = 0; g < 3; g++)
        if (m->gpu_calls[g] > 0) add_row(t, gpu_names[g], 1, m->gpu_calls[g], m->gpu_sum[g], m, o->time_unit);
    if (comm_calls > 0) add_row(t, "Communication", 1, comm_calls, comm_time, m, o->time_unit);
    sp__table_separator(t);
    for (size_t i = 0; i < sizeof note / sizeof *note; i++) sp__table_text(t, note[i]);
    sp__table_dashes(t);
    sp__table_blank(t);
    sp__table_blank(t);
    *out = t;
    return sp__table_failed(t) ? -1 : 0;
}
