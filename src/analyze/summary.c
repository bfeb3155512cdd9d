/* summary.c: prints the summary tables of a result in paddle's order
 * (semantics.md §6), preceded by the note for a span without ProfileStep
 * time and followed by the span's non-zero counters. Each table is built as
 * data first (table.c) and only then rendered. */
#include "summary.h"
#include "table_torch.h"
#include "throughput_text.h"

#include <string.h>

void sp_summary_options_init(sp_summary_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->sorted_by = SP_SORTED_CPU_TOTAL;
    o->op_detail = true;
    o->time_unit = "ms";
}

/* Each table, and the line printed in its place when the caller asked for
 * its view by name (views != 0) and the span has nothing for it; with every
 * view (views == 0) such a table is left out silently, as paddle does. */
static const struct {
    int view;
    sp__table_fn fn;
    const char *empty;
} tables[] = {
    {SP__VIEW_DEVICE, sp__summary_device, NULL},
    {SP__VIEW_OVERVIEW, sp__summary_overview, NULL},
    {SP__VIEW_MODEL, sp__summary_model,
     "Model Summary: not printed: the span has fewer than two of ProfileStep, Dataloader, "
     "Forward, Backward and Optimization."},
    {SP__VIEW_DISTRIBUTED, sp__summary_distributed,
     "Distribution Summary: not printed: the span has no communication."},
    {SP__VIEW_OPERATOR, sp__summary_operator,
     "Operator Summary: not printed: the span has no Operator ranges."},
    {SP__VIEW_KERNEL, sp__summary_kernel, "Kernel Summary: not printed: the span has no kernels."},
    {SP__VIEW_MEMORY_MANIPULATION, sp__summary_memory_manipulation,
     "Memory Manipulation Summary: not printed: the span has no memcpy or memset ranges."},
    {SP__VIEW_UDF, sp__summary_userdefined,
     "UserDefined Summary: not printed: the span has no user-defined ranges."},
    {SP__VIEW_MEMORY, sp__summary_memory,
     "Memory Summary: not printed: the span has no memory events."},
};

static int known_unit(const char *u)
{
    return u && (!strcmp(u, "s") || !strcmp(u, "ms") || !strcmp(u, "us") || !strcmp(u, "ns"));
}

static size_t event_count(const sp_result *r)
{
    size_t n = r->device_count;
    for (size_t i = 0; i < r->thread_count; i++)
        n += r->threads[i].count + r->threads[i].runtime_count + r->threads[i].mem_count;
    return n;
}

static void put_counters(const sp_result *r, sp__buf *out)
{
    int any = 0;
    for (int c = 0; c < SP_COUNTER_COUNT; c++) {
        if (!r->counters[c]) continue;
        sp__buf_printf(out, "%s%s=%llu", any ? ", " : "Counters: ", sp_counter_name((sp_counter_kind)c),
                       (unsigned long long)r->counters[c]);
        any = 1;
    }
    if (any) sp__buf_putc(out, '\n');
    /* Where the cap dropped events, which threads lost them (issue 9). */
    any = 0;
    const char *head = r->meta.overwrite_oldest ? "Dropped events by thread id (the oldest, overwritten): "
                                                : "Dropped events by thread id: ";
    for (size_t i = 0; i < r->thread_count; i++) {
        const sp__thread *t = &r->threads[i];
        if (!t->dropped) continue;
        sp__buf_printf(out, "%s%llu=%llu", any ? ", " : head,
                       (unsigned long long)t->tid, (unsigned long long)t->dropped);
        any = 1;
    }
    if (any) sp__buf_putc(out, '\n');
}

/* The Throughput Summary when opts ask for it (sp_throughput_mode). */
static sp_status put_throughput(const sp_result *r, const sp_summary_options *opts, sp__buf *out)
{
    if (opts->throughput == SP_THROUGHPUT_OFF) return SP_OK;
    sp__tput_opts to = {opts->tokens_per_sample, opts->flops_per_step, opts->peak_tflops};
    sp__throughput t;
    int rc = sp__throughput_build(r, &to, &t);
    int given = to.tokens_per_sample > 0 || to.flops_per_step > 0 || to.peak_tflops > 0;
    int samples = 0;
    for (size_t i = 0; rc == 0 && i < t.step_count; i++)
        samples |= t.steps[i].num_samples >= 0;
    if (rc == 0 && (opts->throughput == SP_THROUGHPUT_ON || given || samples))
        rc = sp__throughput_render(&t, opts->time_unit, out);
    sp__throughput_fini(&t);
    return rc == 0 ? SP_OK : sp__fail(SP_ENOMEM, "out of memory building the throughput summary");
}

/* Renders the selected tables of r into out; returns a status. */
static sp_status render(const sp_result *r, const sp__summary_opts *o,
                        const sp_summary_options *opts, sp__buf *out)
{
    unsigned views = opts->views;
    if (event_count(r) == 0) {
        sp__buf_puts(out, "No events were recorded in this span: there is nothing to summarize.\n");
        put_counters(r, out);
        return SP_OK;
    }
    sp__model m;
    if (sp__model_build(&m, r) != 0) {
        sp__model_fini(&m);
        return sp__fail(SP_ENOMEM, "out of memory building the summary");
    }
    if (m.T_is_fallback)
        sp__buf_puts(out, "Note: no ProfileStep in this span; ratios are relative to the recorded window.\n");
    sp_status s = SP_OK;
    for (size_t i = 0; i < sizeof tables / sizeof *tables && s == SP_OK; i++) {
        if (views && !(views & (1u << tables[i].view))) continue;
        sp__table *t = NULL;
        if (tables[i].fn(&m, o, &t) != 0) s = sp__fail(SP_ENOMEM, "out of memory building the summary");
        if (t) sp__table_render(t, out);
        else if (s == SP_OK && views && tables[i].empty) sp__buf_printf(out, "%s\n", tables[i].empty);
        sp__table_free(t);
    }
    sp__model_fini(&m);
    if (s == SP_OK) s = put_throughput(r, opts, out);
    if (s == SP_OK) put_counters(r, out);
    return s;
}

/* Checks the public options and converts them. */
static sp_status check_options(const sp_summary_options *opts, sp__summary_opts *o)
{
    if (!known_unit(opts->time_unit))
        return sp__fail(SP_EINVAL, "time_unit must be one of s, ms, us, ns");
    if ((unsigned)opts->sorted_by > SP_SORTED_GPU_MIN)
        return sp__fail(SP_EINVAL, "unknown sorted_by key %d", (int)opts->sorted_by);
    if (opts->views >> 9) return sp__fail(SP_EINVAL, "unknown summary view bits 0x%x", opts->views);
    if ((unsigned)opts->throughput > SP_THROUGHPUT_ON)
        return sp__fail(SP_EINVAL, "unknown throughput mode %d", (int)opts->throughput);
    sp__tput_opts to = {opts->tokens_per_sample, opts->flops_per_step, opts->peak_tflops};
    char msg[160];
    if (sp__tput_opts_check(&to, msg, sizeof msg)) return sp__fail(SP_EINVAL, "%s", msg);
    *o = (sp__summary_opts){(int)opts->sorted_by, opts->op_detail, opts->thread_sep, opts->time_unit};
    return SP_OK;
}

sp_status sp_result_summary_table(const sp_result *r, sp_summary_view view,
                                  const sp_summary_options *opts, sp_summary_table **out)
{
    sp_summary_options defaults;
    sp_summary_options_init(&defaults);
    if (!opts) opts = &defaults;
    if (!r || !out) return sp__fail(SP_EINVAL, "sp_result_summary_table: result and out are required");
    *out = NULL;
    if ((unsigned)view > SP_VIEW_UDF) return sp__fail(SP_EINVAL, "unknown summary view %d", (int)view);
    sp__summary_opts o;
    sp_status s = check_options(opts, &o);
    if (s != SP_OK) return s;
    sp__table_fn fn = NULL;
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++)
        if (tables[i].view == (int)view) fn = tables[i].fn;
    if (!fn || event_count(r) == 0) return SP_OK;
    sp__model m;
    sp__table *t = NULL;
    if (sp__model_build(&m, r) != 0 || fn(&m, &o, &t) != 0) s = sp__fail(SP_ENOMEM, "out of memory");
    sp__model_fini(&m);
    if (s != SP_OK) {
        sp__table_free(t);
        return s;
    }
    *out = (sp_summary_table *)t;
    return SP_OK;
}

/* The public line kinds are the internal ones, value for value. */
_Static_assert((int)SP_LINE_TITLE == (int)SP__LINE_TITLE && (int)SP_LINE_TEXT == (int)SP__LINE_TEXT &&
                   (int)SP_LINE_SEPARATOR == (int)SP__LINE_SEPARATOR &&
                   (int)SP_LINE_HEADER == (int)SP__LINE_HEADER && (int)SP_LINE_ROW == (int)SP__LINE_ROW &&
                   (int)SP_LINE_DASHES == (int)SP__LINE_DASHES && (int)SP_LINE_BLANK == (int)SP__LINE_BLANK,
               "sp_line_kind must mirror sp__line_kind");

void sp_summary_table_destroy(sp_summary_table *t) { sp__table_free((sp__table *)t); }
size_t sp_summary_table_lines(const sp_summary_table *t) { return sp__table_lines((const sp__table *)t); }
size_t sp_summary_table_columns(const sp_summary_table *t) { return sp__table_ncols((const sp__table *)t); }

sp_line_kind sp_summary_table_line_kind(const sp_summary_table *t, size_t line)
{
    return (sp_line_kind)sp__table_line_kind((const sp__table *)t, line);
}

const char *sp_summary_table_cell(const sp_summary_table *t, size_t line, size_t column)
{
    return sp__table_cell((const sp__table *)t, line, column);
}

sp_status sp_result_summary(const sp_result *r, const sp_summary_options *opts, FILE *out)
{
    sp_summary_options defaults;
    sp_summary_options_init(&defaults);
    if (!opts) opts = &defaults;
    if (!r || !out) return sp__fail(SP_EINVAL, "sp_result_summary: result and output are required");
    sp__summary_opts o;
    sp_status check = check_options(opts, &o);
    if (check != SP_OK) return check;
    sp__buf text;
    sp__buf_init(&text);
    sp_status s = render(r, &o, opts, &text);
    if (s == SP_OK && text.failed) s = sp__fail(SP_ENOMEM, "out of memory printing the summary");
    if (s == SP_OK && text.len && fwrite(text.data, 1, text.len, out) != text.len)
        s = sp__fail(SP_EIO, "cannot write the summary");
    sp__buf_fini(&text);
    return s;
}

sp_status sp_result_table_torch(const sp_result *r, const char *sort_by, int row_limit, FILE *out)
{
    sp__torch_table_opts o;
    sp__torch_table_opts_init(&o);
    o.sort_by = sort_by;
    o.row_limit = row_limit;
    return sp__result_table_torch_with(r, &o, out);
}

sp_status sp__result_table_torch_with(const sp_result *r, const sp__torch_table_opts *o, FILE *out)
{
    if (!r || !out || !o)
        return sp__fail(SP_EINVAL, "sp_result_table_torch: result and output are required");
    const char *sort_by = o->sort_by;
    sp__model m;
    sp__buf text;
    sp__buf_init(&text);
    sp_status s = SP_OK;
    if (sp__model_build(&m, r) != 0) {
        s = sp__fail(SP_ENOMEM, "out of memory building the table");
    } else {
        int rc = sp__torch_table_with(&m, o, &text);
        if (rc == -2) s = sp__fail(SP_EINVAL, "unknown sort_by '%s'", sort_by);
        else if (rc != 0 || text.failed) s = sp__fail(SP_ENOMEM, "out of memory building the table");
    }
    sp__model_fini(&m);
    if (s == SP_OK && text.len && fwrite(text.data, 1, text.len, out) != text.len)
        s = sp__fail(SP_EIO, "cannot write the table");
    sp__buf_fini(&text);
    return s;
}
