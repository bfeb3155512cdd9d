/* table_device.c: the Device Summary (semantics.md §6.1), the first table of
 * every summary. It reads only the CPU utilisation fractions the collector
 * stored in the result's metadata (§8) and, once device records exist, one
 * row per GPU. It is always printed, with no "Time unit" line, and keeps
 * Paddle's layout byte for byte: the note is three lines with no blank line
 * before the closing dashes.
 *
 * Decisions:
 * - The percentages are 100 x the stored fraction via sp__fmt_ratio, so a
 *   NaN or infinite fraction (a broken loaded result) prints "0.00", and a
 *   process fraction above 1 (several busy cores) prints above 100.
 * - A model built from a NULL result prints 0.00 for both CPU rows.
 * - GPU rows: one "GPU<id>" per device id that any device record (kernel,
 *   memcpy or memset, attributed or not: §9) names, in ascending id, as
 *   Paddle keys its GPU time ranges by every device record; the value is
 *   100 x (length of the union of that device's kernel intervals over all
 *   streams) / T, so a device with only memcpy/memset records prints 0.00,
 *   and T == 0 prints 0.00. Kernels are grouped by a sort of (device,
 *   start), O(n log n), and each device's union is merged once.
 * - The columns do not grow (Paddle's fixed 30 and 20): a longer cell
 *   overflows as in Python's str.format. */
#include "summary.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const device_note[] = {
    "Note:",
    "CPU(Process) Utilization = Current process CPU time over all cpu cores / elapsed time, so "
    "max utilization can be reached 100% * number of cpu cores.",
    "CPU(System) Utilization = All processes CPU time over all cpu cores(busy time) / (busy "
    "time + idle time).",
    "GPU Utilization = Current process GPU time / elapsed time.",
};

static void device_row(sp__table *t, const char *name, double num, double den)
{
    char pct[64];
    sp__fmt_ratio(pct, sizeof pct, num, den);
    const char *cells[2] = {name, pct};
    sp__table_row(t, cells);
}

/* One device record reduced to what the GPU rows need; kernel == 0 for a
 * memcpy/memset (it only makes its device "seen"). */
typedef struct dev_span {
    uint32_t device;
    int kernel;
    int64_t start, end;
} dev_span;

static int cmp_dev_span(const void *a, const void *b)
{
    const dev_span *x = a, *y = b;
    if (x->device != y->device) return x->device < y->device ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return 0;
}

/* Adds the GPU<id> rows. Returns 0 or -1 (out of memory). */
static int gpu_rows(sp__table *t, const sp__model *m)
{
    const sp_result *r = m->result;
    if (!r || r->device_count == 0) return 0;
    dev_span *v = sp__alloc(sizeof *v * r->device_count);
    if (!v) return -1;
    for (size_t i = 0; i < r->device_count; i++) {
        const sp__device_rec *d = &r->devices[i];
        v[i] = (dev_span){d->device, d->type == SP_EVENT_KERNEL, d->start_ns, d->end_ns};
    }
    qsort(v, r->device_count, sizeof *v, cmp_dev_span);
    sp__spans s;
    sp__spans_init(&s);
    int rc = 0;
    for (size_t i = 0; i < r->device_count && rc == 0;) {
        size_t j = i;
        s.n = 0;
        for (; j < r->device_count && v[j].device == v[i].device; j++)
            if (v[j].kernel) sp__spans_add(&s, v[j].start, v[j].end);
        if (s.failed) {
            rc = -1;
            break;
        }
        sp__spans_merge(&s);
        char name[32];
        snprintf(name, sizeof name, "GPU%u", (unsigned)v[i].device);
        device_row(t, name, (double)sp__spans_length(&s), (double)m->T);
        i = j;
    }
    sp__spans_fini(&s);
    sp__free(v);
    return rc;
}

/* Always sets *out to a table; returns -1 (and *out NULL) only on OOM or
 * when m is a failed build. o is unused: the table has no time cells. */
int sp__summary_device(const sp__model *m, const sp__summary_opts *o, sp__table **out)
{
    static const char *const header[2] = {"Device", "Utilization (%)"};
    (void)o;
    *out = NULL;
    if (m->failed) return -1;
    sp__table *t = sp__table_new(2);
    if (!t) return -1;
    sp__table_column(t, 0, 30, 0);
    sp__table_column(t, 1, 20, 0);

    sp__table_title(t, "Device Summary");
    sp__table_separator(t);
    sp__table_header(t, header);
    sp__table_separator(t);
    const sp_result *r = m->result;
    device_row(t, "CPU(Process)", r ? r->meta.cpu_process : 0.0, 1.0);
    device_row(t, "CPU(System)", r ? r->meta.cpu_system : 0.0, 1.0);
    if (gpu_rows(t, m) != 0) {
        sp__table_free(t);
        return -1;
    }
    sp__table_separator(t);
    for (size_t i = 0; i < sizeof device_note / sizeof device_note[0]; i++)
        sp__table_text(t, device_note[i]);
    sp__table_dashes(t);
    sp__table_blank(t);
    sp__table_blank(t);

    if (sp__table_failed(t)) {
        sp__table_free(t);
        return -1;
    }
    *out = t;
    return 0;
}
