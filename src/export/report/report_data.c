/* report_data.c: the JSON object of one result in the report
 * (docs/report.md §2): what the header shows, what is missing, the
 * per-step breakdown, the diagnosis and the summary tables, then the
 * series and the timeline of report_series.c and report_timeline.c.
 *
 * The tables are built by the same functions, with the same default
 * options, as `stepprof summary` prints, so every cell is the same text. */
#include "report.h"

#include "json_escape.h"
#include "summary.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void put_str(sp__buf *b, const char *s) { sp__json_put_string(b, s, s ? strlen(s) : 0); }

static size_t host_event_count(const sp_result *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->thread_count; i++)
        n += r->threads[i].count;
    return n;
}

static void put_header(sp__buf *b, const sp_result *r, const char *source)
{
    sp__buf_puts(b, "{\"source\": ");
    if (source) put_str(b, source);
    else sp__buf_puts(b, "null");
    sp__buf_puts(b, ", \"program\": ");
    put_str(b, r->meta.process_name);
    sp__buf_printf(b, ", \"pid\": %" PRId64 ", \"span_index\": %u, \"span_ns\": %" PRId64
                      ", \"threads\": %zu, \"host_events\": %zu, \"gpu_records\": %zu",
                   r->meta.pid, r->span_index, r->span_end_ns - r->span_start_ns, r->thread_count,
                   host_event_count(r), r->device_count);
    sp_dist_info dist;
    sp_result_dist_info(r, &dist);
    sp__buf_printf(b, ",\n \"rank\": %" PRId64 ", \"world_size\": %" PRId64 ", \"hostname\": ", dist.rank,
                   dist.world_size);
    put_str(b, dist.hostname);
    sp__buf_puts(b, ", \"backend\": ");
    put_str(b, dist.backend);
    sp__buf_puts(b, ", \"job\": ");
    put_str(b, dist.job);
    sp__buf_puts(b, ",\n \"options\": [");
    const char *sep = "";
    const struct {
        int on;
        const char *name;
    } flags[] = {{r->meta.record_shapes, "record_shapes"},
                 {r->meta.profile_memory, "profile_memory"},
                 {r->meta.with_stack, "with_stack"},
                 {r->meta.with_flops, "with_flops"}};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
        if (!flags[i].on) continue;
        sp__buf_printf(b, "%s\"%s\"", sep, flags[i].name);
        sep = ", ";
    }
    sp__buf_puts(b, "],\n \"devices\": [");
    for (size_t i = 0; i < r->device_prop_count; i++) {
        const sp__device_props *p = &r->device_props[i];
        sp__buf_printf(b, "%s{\"id\": %u, \"name\": ", i ? ", " : "", p->id);
        put_str(b, p->name);
        sp__buf_printf(b, ", \"memory\": %" PRIu64 ", \"sms\": %u, \"compute\": \"%u.%u\"}",
                       p->total_global_mem, p->num_sms, p->compute_major, p->compute_minor);
    }
    sp__buf_puts(b, "],\n \"counters\": {");
    for (int c = 0; c < SP_COUNTER_COUNT; c++)
        sp__buf_printf(b, "%s\"%s\": %" PRIu64, c ? ", " : "", sp_counter_name((sp_counter_kind)c),
                       r->counters[c]);
    sp__buf_puts(b, "}");
}

/* What the page cannot show, said once in the header. */
static void put_missing(sp__buf *b, const sp_result *r, const sp__model *m, const sp__steps *s)
{
    sp__buf_puts(b, ",\n \"missing\": [");
    const char *sep = "";
#define MISSING(text)                                                                              \
    do {                                                                                           \
        sp__buf_printf(b, "%s\"%s\"", sep, text);                                                  \
        sep = ", ";                                                                                \
    } while (0)
    if (host_event_count(r) == 0 && r->device_count == 0)
        MISSING("No events were recorded in this span: there is nothing to show.");
    else if (host_event_count(r) == 0)
        MISSING("No host events: only GPU records, so there are no steps, phases or operators.");
    if (s->n == 0 && host_event_count(r) > 0)
        MISSING("No steps (no ProfileStep ranges): no step breakdown, diagnosis or timeline; the "
                "tables' ratios are of the recorded window.");
    else if (s->n == 1)
        MISSING("One step only: no spread, and the slow-step rule needs 5 steps.");
    if (r->device_count == 0) MISSING("No GPU records: no kernels, GPU time or GPU utilisation.");
    if (m->T_is_fallback && s->n > 0)
        MISSING("Every step has zero length: ratios are of the recorded window.");
    uint64_t dropped = r->counters[SP_COUNTER_HOST_DROPPED] + r->counters[SP_COUNTER_CUPTI_DROPPED];
    if (dropped)
        sp__buf_printf(b, "%s\"%" PRIu64 " events were dropped (see the counters): every figure "
                          "misses them.\"",
                       sep, dropped);
#undef MISSING
    sp__buf_puts(b, "]");
}

static double stdev_ns(const sp__steps *s, double mean)
{
    if (s->n < 2) return 0;
    double sum = 0;
    for (size_t i = 0; i < s->n; i++) {
        double d = (double)(s->v[i].end_ns - s->v[i].start_ns) - mean;
        sum += d * d;
    }
    return sqrt(sum / (double)(s->n - 1));
}

/* One row per step: number, start (from the first step's), length, the
 * phases of steps.h, then GPU busy and idle (-1 without a GPU). */
static void put_steps(sp__buf *b, const sp__diagnosis *d)
{
    const sp__steps *s = &d->steps;
    sp__buf_puts(b, ",\n \"steps\": ");
    if (s->n == 0) {
        sp__buf_puts(b, "null");
        return;
    }
    sp__buf_puts(b, "{\"phases\": [");
    for (int p = 0; p < SP__PHASE_COUNT; p++)
        sp__buf_printf(b, "%s\"%s\"", p ? ", " : "", sp__phase_name(p));
    size_t slowest = 0;
    int64_t total = 0;
    for (size_t i = 0; i < s->n; i++) {
        int64_t len = s->v[i].end_ns - s->v[i].start_ns;
        total += len;
        if (len > s->v[slowest].end_ns - s->v[slowest].start_ns) slowest = i;
    }
    double mean = (double)total / (double)s->n;
    sp__buf_printf(b, "], \"has_gpu\": %s, \"median_ns\": %" PRId64 ", \"mean_ns\": %.0f, \"stdev_ns\": %.0f"
                      ", \"slowest\": %" PRId64 ", \"median_step\": %" PRId64 ",\n  \"list\": [",
                   s->has_gpu ? "true" : "false", d->median_ns, mean, stdev_ns(s, mean),
                   s->v[slowest].number, s->v[sp__report_median_step(s)].number);
    for (size_t i = 0; i < s->n; i++) {
        const sp__step *st = &s->v[i];
        sp__buf_printf(b, "%s[%" PRId64 ", %" PRId64 ", %" PRId64, i ? ",\n   " : "", st->number,
                       st->start_ns - s->v[0].start_ns, st->end_ns - st->start_ns);
        for (int p = 0; p < SP__PHASE_COUNT; p++)
            sp__buf_printf(b, ", %" PRId64, st->phase_ns[p]);
        if (s->has_gpu)
            sp__buf_printf(b, ", %" PRId64 ", %" PRId64 "]", st->busy_ns, st->idle_ns);
        else
            sp__buf_puts(b, ", -1, -1]");
    }
    sp__buf_puts(b, "]}");
}

static const char *const line_kinds[] = {"title", "text", "separator", "header", "row", "dashes", "blank"};

/* A table as its lines: ["kind", cells...]. Separators, dash and blank
 * lines only draw text tables and are left out. Past SP__REPORT_TABLE_ROWS
 * rows in a section (the rows after a header or a title line), the rest
 * are counted in a ["cut", n] line. */
void sp__report_table(sp__buf *b, const char *view, const sp__table *t)
{
    sp__buf_puts(b, "{\"view\": ");
    put_str(b, view);
    sp__buf_puts(b, ", \"lines\": [");
    const char *sep = "";
    size_t rows = 0, cut = 0, ncols = sp__table_ncols(t);
    for (size_t i = 0; i < sp__table_lines(t); i++) {
        sp__line_kind k = sp__table_line_kind(t, i);
        if (k == SP__LINE_SEPARATOR || k == SP__LINE_DASHES || k == SP__LINE_BLANK) continue;
        if (k == SP__LINE_ROW && rows >= SP__REPORT_TABLE_ROWS) {
            cut++;
            continue;
        }
        if (k != SP__LINE_ROW) {
            if (cut) sp__buf_printf(b, "%s[\"cut\", %zu]", sep, cut);
            rows = cut = 0;
        } else {
            rows++;
        }
        sp__buf_printf(b, "%s[\"%s\"", sep, line_kinds[k]);
        size_t n = k == SP__LINE_HEADER || k == SP__LINE_ROW ? ncols : 1;
        for (size_t c = 0; c < n; c++) {
            sp__buf_puts(b, ", ");
            put_str(b, sp__table_cell(t, i, c));
        }
        sp__buf_putc(b, ']');
        sep = ",\n   ";
    }
    if (cut) sp__buf_printf(b, "%s[\"cut\", %zu]", sep, cut);
    sp__buf_puts(b, "]}");
}

/* The tables `stepprof summary` prints, in its order and with its default
 * options; a table the span has nothing for is left out. */
static void put_tables(sp__buf *b, const sp_result *r, const sp__model *m)
{
    static const struct {
        const char *view;
        sp__table_fn fn;
    } views[] = {
        {"Device", sp__summary_device},
        {"Overview", sp__summary_overview},
        {"Model", sp__summary_model},
        {"Distributed", sp__summary_distributed},
        {"Operator", sp__summary_operator},
        {"Kernel", sp__summary_kernel},
        {"MemoryManipulation", sp__summary_memory_manipulation},
        {"UserDefined", sp__summary_userdefined},
        {"Memory", sp__summary_memory},
    };
    sp__summary_opts o = {SP__SORT_CPU_TOTAL, 1, 0, "ms"};
    sp__buf_puts(b, ",\n \"tables\": [");
    const char *sep = "";
    size_t events = r->device_count;
    for (size_t i = 0; i < r->thread_count; i++)
        events += r->threads[i].count + r->threads[i].runtime_count + r->threads[i].mem_count;
    /* As sp_result_summary: an empty span has no table at all. */
    for (size_t i = 0; events > 0 && i < sizeof views / sizeof *views; i++) {
        sp__table *t = NULL;
        if (views[i].fn(m, &o, &t) != 0) b->failed = 1;
        if (!t) continue;
        sp__buf_puts(b, sep);
        sp__report_table(b, views[i].view, t);
        sp__table_free(t);
        sep = ",\n  ";
    }
    sp__buf_puts(b, "]");
}

static void put_stat(sp__buf *b, const char *name, const sp__tput_stat *st, const char *why)
{
    sp__buf_printf(b, "\"%s\": {\"median\": ", name);
    sp__json_put_double(b, st->median);
    sp__buf_puts(b, ", \"mean\": ");
    sp__json_put_double(b, st->mean);
    sp__buf_printf(b, ", \"count\": %zu, \"unknown\": ", st->count);
    if (why)
        put_str(b, why);
    else
        sp__buf_puts(b, "null");
    sp__buf_puts(b, "}");
}

/* Samples/s, tokens/s, FLOP/s and MFU over the steps and per step (-1 for
 * unknown, with the reason), as the Throughput Summary has them. */
static void put_throughput(sp__buf *b, const sp__throughput *t)
{
    sp__buf_puts(b, ",\n \"throughput\": ");
    if (t->step_count == 0) {
        sp__buf_puts(b, "null");
        return;
    }
    sp__buf_puts(b, "{");
    put_stat(b, "samples_per_s", &t->samples_per_s, t->samples_unknown);
    sp__buf_puts(b, ", ");
    put_stat(b, "tokens_per_s", &t->tokens_per_s, t->tokens_unknown);
    sp__buf_puts(b, ", ");
    put_stat(b, "flops_per_s", &t->flops_per_s, t->flops_unknown);
    sp__buf_puts(b, ", ");
    put_stat(b, "mfu", &t->mfu, t->mfu_unknown ? t->mfu_unknown : t->peak_unknown);
    sp__buf_puts(b, ", \"peak_flops\": ");
    sp__json_put_double(b, t->peak_flops);
    sp__buf_puts(b, ", \"peak_row\": ");
    put_str(b, t->peak_given ? "given" : t->peak_row);
    sp__buf_puts(b, ",\n  \"steps\": [");
    for (size_t i = 0; i < t->step_count; i++) {
        const sp__tput_step *st = &t->steps[i];
        sp__buf_printf(b, "%s[%" PRId64 ", ", i ? ", " : "", st->number);
        const double v[] = {st->samples_per_s, st->tokens_per_s, st->flops_per_s, st->mfu};
        for (size_t k = 0; k < 4; k++) {
            if (k) sp__buf_puts(b, ", ");
            sp__json_put_double(b, v[k]);
        }
        sp__buf_putc(b, ']');
    }
    sp__buf_puts(b, "]}");
}

void sp__report_data(sp__buf *b, const sp_result *r, const sp__model *m, const sp__diagnosis *d,
                     const sp__throughput *t, const char *source)
{
    put_header(b, r, source);
    put_missing(b, r, m, &d->steps);
    put_steps(b, d);
    put_throughput(b, t);
    sp__buf_puts(b, ",\n \"diagnosis\": ");
    if (d->steps.n > 0)
        sp__diagnosis_json(b, d, r);
    else
        sp__buf_puts(b, "null");
    put_tables(b, r, m);
    sp__buf_puts(b, ",\n ");
    sp__report_series(b, m, &d->steps);
    sp__buf_puts(b, "\n ");
    sp__report_timeline(b, m, &d->steps);
    sp__buf_puts(b, "}");
}
