/* report.c: sp_result_report, the self-contained HTML page. The page is the
 * style, one JSON object (the data of the result and of the baseline) and
 * the script that draws it. A Content-Security-Policy that allows nothing
 * but the inline style and script keeps the page from ever reaching the
 * network, whatever it holds. */
#include "report.h"

#include "export.h"
#include "json_escape.h"
#include "ranks.h"
#include "throughput.h"

#include <string.h>

void sp_report_options_init(sp_report_options *o)
{
    if (o) memset(o, 0, sizeof *o);
}

/* One result's model, diagnosis and throughput. */
typedef struct analysed {
    sp__model m;
    sp__diagnosis d;
    sp__throughput t;
    int built, diagnosed, measured;
} analysed;

static int analyse(analysed *a, const sp_result *r, const sp__tput_opts *o)
{
    memset(a, 0, sizeof *a);
    a->built = 1;
    if (sp__model_build(&a->m, r) != 0) return -1;
    a->diagnosed = 1;
    if (sp__diagnose(&a->m, &a->d) != 0) return -1;
    a->measured = 1;
    return sp__throughput_build(r, o, &a->t) == 0 ? 0 : -1;
}

static void analysed_fini(analysed *a)
{
    if (a->measured) sp__throughput_fini(&a->t);
    if (a->diagnosed) sp__diagnosis_fini(&a->d);
    if (a->built) sp__model_fini(&a->m);
}

/* Copies JSON text into the page with '<', '>' and '&' as \u escapes. They
 * occur only inside strings, where the escape reads back as the same
 * character, so the object is unchanged for JSON.parse while "</script>" or
 * "<!--" can never appear in the page. */
static void put_script_safe(sp__buf *out, const sp__buf *json)
{
    size_t run = 0;
    for (size_t i = 0; i < json->len; i++) {
        char c = json->data[i];
        if (c != '<' && c != '>' && c != '&') continue;
        sp__buf_append(out, json->data + run, i - run);
        sp__buf_printf(out, "\\u%04x", (unsigned)c);
        run = i + 1;
    }
    sp__buf_append(out, json->data + run, json->len - run);
}

static void put_html_text(sp__buf *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': sp__buf_puts(out, "&lt;"); break;
        case '>': sp__buf_puts(out, "&gt;"); break;
        case '&': sp__buf_puts(out, "&amp;"); break;
        case '"': sp__buf_puts(out, "&quot;"); break;
        case '\'': sp__buf_puts(out, "&#39;"); break;
        default: sp__buf_putc(out, *s);
        }
    }
}

static const char *page_title(const sp_result *r, const sp_report_options *o)
{
    if (o->title && *o->title) return o->title;
    if (r->meta.process_name[0]) return r->meta.process_name;
    return "stepprof report";
}

/* The cross-rank tables, or null with fewer than two ranks. */
static void put_ranks(sp__buf *b, const sp__ranks *x)
{
    if (!x || x->nrows < 2) {
        sp__buf_puts(b, "null");
        return;
    }
    sp__buf_puts(b, "{\"ids\": [");
    for (size_t i = 0; i < x->nrows; i++)
        sp__buf_printf(b, "%s%lld", i ? ", " : "", (long long)x->rows[i].rank);
    sp__buf_puts(b, "], \"tables\": [");
    static const char *const views[SP__RANKS_TABLES] = {"Ranks", "Collectives", "Stragglers"};
    for (int k = 0; k < SP__RANKS_TABLES; k++) {
        sp__table *t = sp__ranks_table(x, k, "ms");
        if (!t || sp__table_failed(t)) b->failed = 1;
        if (t) {
            if (k) sp__buf_puts(b, ",\n  ");
            sp__report_table(b, views[k], t);
        }
        sp__table_free(t);
    }
    sp__buf_printf(b, "], \"stragglers\": %zu}", x->nstrag);
}

static void put_data(sp__buf *b, const sp_result *r, const sp_report_options *o, analysed *run,
                     analysed *base, const sp__ranks *ranks, const char *title)
{
    sp__buf_puts(b, "{\"generator\": \"stepprof " SP_VERSION_STRING "\", \"title\": ");
    sp__json_put_string(b, title, strlen(title));
    sp__buf_puts(b, ",\n\"run\": ");
    sp__report_data(b, r, &run->m, &run->d, &run->t, o->source);
    sp__buf_puts(b, ",\n\"baseline\": ");
    if (o->baseline)
        sp__report_data(b, o->baseline, &base->m, &base->d, &base->t, o->baseline_source);
    else
        sp__buf_puts(b, "null");
    sp__buf_puts(b, ",\n\"ranks\": ");
    put_ranks(b, ranks);
    sp__buf_puts(b, "}\n");
}

/* Checks opts->ranks and analyses them; *built tells whether x holds
 * something to free. */
static sp_status analyse_ranks(const sp_report_options *o, sp__ranks *x, int *built)
{
    *built = 0;
    if (o->rank_count < 2 || !o->ranks) return SP_OK;
    int64_t *ids = sp__alloc(sizeof *ids * o->rank_count);
    if (!ids) return sp__fail(SP_ENOMEM, "out of memory");
    sp_status s = SP_OK;
    for (size_t i = 0; i < o->rank_count && s == SP_OK; i++)
        if (!o->ranks[i]) s = sp__fail(SP_EINVAL, "sp_result_report: rank result %zu is NULL", i);
    if (s == SP_OK && o->rank_ids)
        memcpy(ids, o->rank_ids, sizeof *ids * o->rank_count);
    else if (s == SP_OK)
        sp__ranks_default_ids(o->ranks, o->rank_count, ids);
    for (size_t i = 0; i < o->rank_count && s == SP_OK; i++)
        for (size_t j = 0; j < i && s == SP_OK; j++)
            if (ids[j] == ids[i])
                s = sp__fail(SP_EINVAL, "sp_result_report: rank %lld is given twice", (long long)ids[i]);
    if (s == SP_OK) {
        if (sp__ranks_build(o->ranks, ids, o->rank_count, x) != 0)
            s = sp__fail(SP_ENOMEM, "out of memory analysing the ranks for the report");
        else
            *built = 1;
    }
    sp__free(ids);
    return s;
}

static void put_page(sp__buf *page, const sp__buf *data, const char *title)
{
    sp__buf_puts(page,
                 "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                 "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                 "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
                 "<meta name=\"generator\" content=\"stepprof " SP_VERSION_STRING "\">\n<title>");
    put_html_text(page, title);
    sp__buf_puts(page, " - stepprof report</title>\n<style>\n");
    sp__buf_puts(page, sp__report_css);
    sp__buf_puts(page, "</style>\n</head><body>\n<noscript><p>This report draws its tables and "
                       "charts with JavaScript: allow scripts for this file to see them.</p></noscript>\n"
                       "<div id=\"app\"></div>\n"
                       "<script type=\"application/json\" id=\"sp-data\">");
    put_script_safe(page, data);
    sp__buf_puts(page, "</script>\n<script>\n");
    sp__buf_puts(page, sp__report_js);
    sp__buf_puts(page, "</script>\n</body></html>\n");
}

sp_status sp_result_report(const sp_result *r, const sp_report_options *opts, const char *path)
{
    sp_report_options defaults;
    sp_report_options_init(&defaults);
    if (!opts) opts = &defaults;
    if (!r || !path || !*path) return sp__fail(SP_EINVAL, "sp_result_report: result and path are required");
    analysed run, base;
    memset(&run, 0, sizeof run);
    memset(&base, 0, sizeof base);
    sp__ranks ranks;
    int ranked = 0;
    sp__tput_opts tput = {opts->tokens_per_sample, opts->flops_per_step, opts->peak_tflops};
    char why[160];
    if (sp__tput_opts_check(&tput, why, sizeof why)) return sp__fail(SP_EINVAL, "sp_result_report: %s", why);
    sp_status s = analyse_ranks(opts, &ranks, &ranked);
    if (s == SP_OK && (analyse(&run, r, &tput) != 0 || (opts->baseline && analyse(&base, opts->baseline, &tput) != 0)))
        s = sp__fail(SP_ENOMEM, "out of memory analysing the result for the report");
    const char *title = page_title(r, opts);
    sp__buf data;
    sp__buf_init(&data);
    if (s == SP_OK) put_data(&data, r, opts, &run, &base, ranked ? &ranks : NULL, title);
    analysed_fini(&run);
    analysed_fini(&base);
    if (ranked) sp__ranks_fini(&ranks);
    if (s == SP_OK && data.failed) s = sp__fail(SP_ENOMEM, "out of memory writing the report");
    sp__out *out = NULL;
    if (s == SP_OK) s = sp__out_open(&out, path, 0);
    if (s == SP_OK) {
        sp__buf *page = sp__out_buf(out);
        put_page(page, &data, title);
        if (page->failed) {
            sp__out_abort(out);
            s = sp__fail(SP_ENOMEM, "out of memory writing the report");
        } else {
            s = sp__out_commit(out);
        }
    }
    sp__buf_fini(&data);
    return s;
}
