/* summary.c: prints the summary tables of a result in paddle's order
 * (semantics.md §6), preceded by the note for a span without ProfileStep
 * time and followed by the span's non-zero counters. Each table is built as
 * data first (table.c) and only then rendered. */
#include "summary.h"

#include <string.h>

void sp_summary_options_init(sp_summary_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->sorted_by = SP_SORTED_CPU_TOTAL;
    o->op_detail = true;
    o->time_unit = "ms";
}

static const struct {
    int view;
    sp__table_fn fn;
} tables[] = {
    {SP__VIEW_DEVICE, sp__summary_device},
    {SP__VIEW_OVERVIEW, sp__summary_overview},
    {SP__VIEW_MODEL, sp__summary_model},
    {SP__VIEW_DISTRIBUTED, sp__summary_distributed},
    {SP__VIEW_OPERATOR, sp__summary_operator},
    {SP__VIEW_KERNEL, sp__summary_kernel},
    {SP__VIEW_MEMORY_MANIPULATION, sp__summary_memory_manipulation},
    {SP__VIEW_UDF, sp__summary_userdefined},
};

static int known_unit(const char *u)
{
    return u && (!strcmp(u, "s") || !strcmp(u, "ms") || !strcmp(u, "us") || !strcmp(u, "ns"));
}

static size_t event_count(const sp_result *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->thread_count; i++) n += r->threads[i].count;
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
}

/* Renders the selected tables of r into out; returns a status. */
static sp_status render(const sp_result *r, const sp__summary_opts *o, unsigned views, sp__buf *out)
{
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
        sp__table_free(t);
    }
    sp__model_fini(&m);
    if (s == SP_OK) put_counters(r, out);
    return s;
}

sp_status sp_result_summary(const sp_result *r, const sp_summary_options *opts, FILE *out)
{
    sp_summary_options defaults;
    sp_summary_options_init(&defaults);
    if (!opts) opts = &defaults;
    if (!r || !out) return sp__fail(SP_EINVAL, "sp_result_summary: result and output are required");
    if (!known_unit(opts->time_unit))
        return sp__fail(SP_EINVAL, "time_unit must be one of s, ms, us, ns");
    if ((unsigned)opts->sorted_by > SP_SORTED_GPU_MIN)
        return sp__fail(SP_EINVAL, "unknown sorted_by key %d", (int)opts->sorted_by);
    if (opts->views >> 9) return sp__fail(SP_EINVAL, "unknown summary view bits 0x%x", opts->views);
    sp__summary_opts o = {(int)opts->sorted_by, opts->op_detail, opts->thread_sep, opts->time_unit};
    sp__buf text;
    sp__buf_init(&text);
    sp_status s = render(r, &o, opts->views, &text);
    if (s == SP_OK && text.failed) s = sp__fail(SP_ENOMEM, "out of memory printing the summary");
    if (s == SP_OK && text.len && fwrite(text.data, 1, text.len, out) != text.len)
        s = sp__fail(SP_EIO, "cannot write the summary");
    sp__buf_fini(&text);
    return s;
}
