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
 * - GPU rows: none yet. Device records are not collected, so no device is
 *   "seen"; the GPU tracer will add "GPU<id>" = GPUSum[id][Kernel] / T in
 *   ascending id here.
 * - The columns do not grow (Paddle's fixed 30 and 20): a longer cell
 *   overflows as in Python's str.format. */
#include "summary.h"

#include <stdio.h>

static const char *const device_note[] = {
    "Note:",
    "CPU(Process) Utilization = Current process CPU time over all cpu cores / elapsed time, so "
    "max utilization can be reached 100% * number of cpu cores.",
    "CPU(System) Utilization = All processes CPU time over all cpu cores(busy time) / (busy "
    "time + idle time).",
    "GPU Utilization = Current process GPU time / elapsed time.",
};

static void device_row(sp__table *t, const char *name, double fraction)
{
    char pct[64];
    sp__fmt_ratio(pct, sizeof pct, fraction, 1.0);
    const char *cells[2] = {name, pct};
    sp__table_row(t, cells);
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
    device_row(t, "CPU(Process)", r ? r->meta.cpu_process : 0.0);
    device_row(t, "CPU(System)", r ? r->meta.cpu_system : 0.0);
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
