/* throughput_text.c: the Throughput Summary that `stepprof summary` (and
 * sp_result_summary with opts.throughput) prints after paddle's tables: the
 * figures of throughput.h as a table of the same layout (table.h), an
 * unknown figure as "unknown", and a note saying where FLOPs and the peak
 * came from and why any figure is unknown (semantics.md §10). */
#include "throughput_text.h"
#include "table.h"

#include <stdio.h>

static void cell(char *out, size_t size, double v, const char *fmt, double scale)
{
    if (v < 0)
        snprintf(out, size, "unknown");
    else
        snprintf(out, size, fmt, v * scale);
}

static void row(sp__table *tb, const char *name, const sp__tput_stat *s, const char *fmt,
                double scale)
{
    char med[64], mean[64];
    cell(med, sizeof med, s->median, fmt, scale);
    cell(mean, sizeof mean, s->mean, fmt, scale);
    const char *cells[] = {name, med, mean};
    sp__table_row(tb, cells);
}

static void time_row(sp__table *tb, const sp__tput_stat *s, const char *unit)
{
    char med[64] = "unknown", mean[64] = "unknown";
    if (s->median >= 0) sp__fmt_time(med, sizeof med, s->median, unit);
    if (s->mean >= 0) sp__fmt_time(mean, sizeof mean, s->mean, unit);
    const char *cells[] = {"Step time", med, mean};
    sp__table_row(tb, cells);
}

/* Appends "<what>: unknown: <why>." */
static void unknown(sp__table *tb, const char *what, const char *why)
{
    char line[512];
    snprintf(line, sizeof line, "%s: unknown: %s.", what, why);
    sp__table_text(tb, line);
}

static void peak_note(sp__table *tb, const sp__throughput *t)
{
    char line[512];
    if (t->peak_given)
        snprintf(line, sizeof line, "Peak: %.2f TFLOP/s, given.", t->peak_flops / 1e12);
    else if (t->peak_flops > 0)
        snprintf(line, sizeof line, "Peak: %.2f TFLOP/s: %zu x %s (table row %s, dense BF16/FP16).",
                 t->peak_flops / 1e12, t->peak_devices, t->device_name, t->peak_row);
    else if (t->device_name[0])
        snprintf(line, sizeof line, "Peak: unknown: %s: %s.", t->peak_unknown, t->device_name);
    else
        snprintf(line, sizeof line, "Peak: unknown: %s.", t->peak_unknown ? t->peak_unknown : "");
    sp__table_text(tb, line);
}

static void notes(sp__table *tb, const sp__throughput *t)
{
    sp__table_text(tb, "Note:");
    if (t->samples_unknown) unknown(tb, "Samples/s", t->samples_unknown);
    if (t->tokens_unknown && t->tokens_unknown != t->samples_unknown)
        unknown(tb, "Tokens/s", t->tokens_unknown);
    if (t->flops_source == SP__TPUT_FLOPS_GIVEN)
        sp__table_text(tb, "FLOPs per step: given.");
    else if (t->flops_source == SP__TPUT_FLOPS_RECORDED)
        sp__table_text(
            tb, "FLOPs per step: recorded (with_flops), the operator records of each step summed.");
    else if (t->flops_unknown)
        unknown(tb, "FLOPs per step", t->flops_unknown);
    peak_note(tb, t);
    if (t->mfu_unknown && t->mfu_unknown != t->flops_unknown && t->mfu_unknown != t->peak_unknown)
        unknown(tb, "MFU", t->mfu_unknown);
    if (t->mfu.mean > 1 || t->mfu.median > 1)
        sp__table_text(tb, "MFU above 100%: the FLOPs per step or the peak is wrong.");
    sp__table_text(tb,
                   "Median: over the steps that have the figure. Mean: for a rate, its total over "
                   "those steps' total time; otherwise the plain mean.");
}

int sp__throughput_render(const sp__throughput *t, const char *time_unit, sp__buf *out)
{
    sp__table *tb = sp__table_new(3);
    if (!tb) return -1;
    sp__table_column(tb, 0, 24, 1);
    sp__table_column(tb, 1, 15, 1);
    sp__table_column(tb, 2, 15, 1);
    size_t with = 0;
    for (size_t i = 0; i < t->step_count; i++)
        with += t->steps[i].num_samples >= 0;
    char line[128];
    sp__table_title(tb, "Throughput Summary");
    snprintf(line, sizeof line, "Steps: %zu recorded, %zu with num_samples", t->step_count, with);
    sp__table_text(tb, line);
    snprintf(line, sizeof line, "Time unit: %s", time_unit ? time_unit : "ms");
    sp__table_text(tb, line);
    sp__table_separator(tb);
    const char *head[] = {"Figure", "Median", "Mean"};
    sp__table_header(tb, head);
    sp__table_separator(tb);
    time_row(tb, &t->step_ns, time_unit);
    row(tb, "Samples/s", &t->samples_per_s, "%.2f", 1);
    row(tb, "Tokens/s", &t->tokens_per_s, "%.2f", 1);
    row(tb, "FLOPs per step", &t->flops, "%.3e", 1);
    row(tb, "Achieved TFLOP/s", &t->flops_per_s, "%.2f", 1e-12);
    row(tb, "MFU (%)", &t->mfu, "%.2f", 100);
    sp__table_separator(tb);
    notes(tb, t);
    sp__table_dashes(tb);
    sp__table_blank(tb);
    sp__table_blank(tb);
    int failed = sp__table_failed(tb);
    sp__table_render(tb, out);
    sp__table_free(tb);
    return failed ? -1 : 0;
}
