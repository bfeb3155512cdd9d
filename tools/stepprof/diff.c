/* diff.c: `stepprof diff A B`, the before/after comparison of the paddle
 * guide's case study: time per phase (the Overview's event types:
 * Dataloader, Forward, Backward, Optimization, ...) and per operator, B minus
 * A, largest change first. The numbers come from the summary tables as data
 * (sp_result_summary_table), so they are the ones `summary` prints.
 * With --fail-above it is a regression gate: the library judges the per-step
 * distributions (sp_result_compare_steps) and the tool prints the verdict
 * and the biggest movers, and exits 1 on a regression. */
#include "cli.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char diff_help[] =
    "usage: stepprof diff [OPTIONS] A B\n"
    "\n"
    "Compares two saved results (before and after a change): CPU time per\n"
    "phase (event type, from the Overview) and per operator (from the Operator\n"
    "Summary), B - A, largest absolute change first.\n"
    "\n"
    "options:\n"
    "  --time-unit UNIT   s, ms (default), us or ns\n"
    "  --per-step         divide each time by the result's number of steps\n"
    "                     (ProfileStep calls), for runs of different lengths\n"
    "  --limit N          at most N operator rows (default 20; 0 for all)\n"
    "  --fail-above PCT   regression gate: exit 1 when B is slower than A by more\n"
    "                     than PCT percent (5% or 5) in the median per step, and\n"
    "                     a one-sided Mann-Whitney U test on the steps finds B's\n"
    "                     steps slower (p < 0.01; below 3 steps a side the\n"
    "                     medians alone decide). Prints the verdict and the\n"
    "                     biggest movers per step instead of the tables.\n"
    "  --metric METRIC    what the gate compares: step (default, step time),\n"
    "                     op:NAME, kernel:NAME or phase:NAME (phase:Dataloader)\n"
    "\n"
    "An option's value may also be joined to it: --time-unit=us, --limit=5.\n"
    "Exit codes: 0 no regression (or no gate), 1 a regression or a bad file,\n"
    "2 wrong usage.\n";

typedef struct row {
    char *name;
    double a, b;   /* time, ns */
    double calls_a, calls_b;
} row;

typedef struct rows {
    row *items;
    size_t count;
} rows;

static row *find_or_add(rows *rs, const char *name)
{
    for (size_t i = 0; i < rs->count; i++)
        if (strcmp(rs->items[i].name, name) == 0) return &rs->items[i];
    row *grown = realloc(rs->items, sizeof *grown * (rs->count + 1));
    if (!grown) return NULL;
    rs->items = grown;
    row *r = &grown[rs->count];
    memset(r, 0, sizeof *r);
    r->name = strdup(name);
    if (!r->name) return NULL;
    rs->count++;
    return r;
}

static void free_rows(rows *rs)
{
    for (size_t i = 0; i < rs->count; i++) free(rs->items[i].name);
    free(rs->items);
}

/* Adds the rows of one view's table: name (column 0, leading spaces
 * dropped), calls and CPU time (the first number of the "CPU Time" or
 * "CPU Total..." column) in ns. */
static int add_table(const sp_result *r, sp_summary_view view, rows *rs, int side)
{
    sp_summary_options opts;
    sp_summary_options_init(&opts);
    opts.time_unit = "ns";
    opts.op_detail = false;
    opts.views = 1u << view;
    sp_summary_table *t;
    if (sp_result_summary_table(r, view, &opts, &t) != SP_OK) return -1;
    if (!t) return 0;
    size_t lines = sp_summary_table_lines(t), cols = sp_summary_table_columns(t);
    long calls_col = -1, time_col = -1;
    int in_block = 0;
    for (size_t l = 0; l < lines; l++) {
        sp_line_kind kind = sp_summary_table_line_kind(t, l);
        if (kind == SP_LINE_HEADER) {
            if (in_block) break; /* only the first block (the Overview's host part) */
            for (size_t c = 0; c < cols; c++) {
                const char *h = sp_summary_table_cell(t, l, c);
                if (strcmp(h, "Calls") == 0) calls_col = (long)c;
                if (time_col < 0 && strncmp(h, "CPU T", 5) == 0) time_col = (long)c;
            }
            in_block = 1;
            continue;
        }
        if (kind != SP_LINE_ROW || time_col < 0) continue;
        const char *name = sp_summary_table_cell(t, l, 0);
        while (*name == ' ') name++;
        row *rw = find_or_add(rs, name);
        if (!rw) {
            sp_summary_table_destroy(t);
            return -1;
        }
        double v = strtod(sp_summary_table_cell(t, l, (size_t)time_col), NULL);
        double calls = calls_col >= 0 ? strtod(sp_summary_table_cell(t, l, (size_t)calls_col), NULL) : 0;
        if (side == 0) {
            rw->a += v;
            rw->calls_a += calls;
        } else {
            rw->b += v;
            rw->calls_b += calls;
        }
    }
    sp_summary_table_destroy(t);
    return 0;
}

static int by_change(const void *pa, const void *pb)
{
    const row *a = pa, *b = pb;
    double x = fabs(a->b - a->a), y = fabs(b->b - b->a);
    if (x != y) return x > y ? -1 : 1;
    return strcmp(a->name, b->name);
}

static double steps_of(const rows *phases, int side)
{
    for (size_t i = 0; i < phases->count; i++)
        if (strcmp(phases->items[i].name, "ProfileStep") == 0)
            return side == 0 ? phases->items[i].calls_a : phases->items[i].calls_b;
    return 0;
}

static void print_rows(const char *title, rows *rs, const char *unit, double scale, double div_a,
                       double div_b, size_t limit)
{
    qsort(rs->items, rs->count, sizeof *rs->items, by_change);
    size_t width = 24;
    for (size_t i = 0; i < rs->count && (limit == 0 || i < limit); i++)
        if (strlen(rs->items[i].name) > width) width = strlen(rs->items[i].name);
    if (width > 60) width = 60;
    printf("%s\n", title);
    char ha[32], hb[32], hd[32];
    snprintf(ha, sizeof ha, "A (%s)", unit);
    snprintf(hb, sizeof hb, "B (%s)", unit);
    snprintf(hd, sizeof hd, "B - A (%s)", unit);
    printf("%-*s  %10s  %10s  %14s  %14s  %14s  %9s\n", (int)width, "Name", "Calls A", "Calls B", ha, hb, hd,
           "Change");
    for (size_t i = 0; i < rs->count && (limit == 0 || i < limit); i++) {
        const row *r = &rs->items[i];
        double a = r->a / div_a / scale, b = r->b / div_b / scale;
        char change[32];
        if (r->a > 0)
            snprintf(change, sizeof change, "%+.1f%%", (r->b / div_b - r->a / div_a) / (r->a / div_a) * 100.0);
        else
            snprintf(change, sizeof change, "%s", r->b > 0 ? "new" : "-");
        printf("%-*.*s  %10.0f  %10.0f  %14.3f  %14.3f  %+14.3f  %9s\n", (int)width, (int)width, r->name,
               r->calls_a, r->calls_b, a, b, b - a, change);
    }
    if (limit && rs->count > limit) printf("(%zu more rows; --limit 0 prints all)\n", rs->count - limit);
    printf("\n");
}

typedef struct mover {
    const row *r;
    const char *kind;
    double a, b; /* per step, ns */
} mover;

static int by_mover_change(const void *pa, const void *pb)
{
    const mover *a = pa, *b = pb;
    double x = fabs(a->b - a->a), y = fabs(b->b - b->a);
    if (x != y) return x > y ? -1 : 1;
    return strcmp(a->r->name, b->r->name);
}

/* name with control bytes as '?', cut to fit out (names from a trace may
 * hold newlines or escape sequences; the library keeps them valid UTF-8). */
static const char *printable(const char *name, char *out, size_t size)
{
    size_t n = 0;
    for (; name[n] && n + 1 < size; n++)
        out[n] = (unsigned char)name[n] < 0x20 || name[n] == 0x7f ? '?' : name[n];
    out[n] = '\0';
    return out;
}

/* The rows of phases and operators whose time per step changed most. */
static int print_movers(const rows *phases, const rows *ops, double steps_a, double steps_b,
                        const char *unit, double scale, size_t limit)
{
    mover *m = malloc(sizeof *m * (phases->count + ops->count + 1));
    if (!m) return -1;
    size_t n = 0;
    for (int k = 0; k < 2; k++) {
        const rows *rs = k ? ops : phases;
        for (size_t i = 0; i < rs->count; i++) {
            const row *r = &rs->items[i];
            if (!k && strcmp(r->name, "ProfileStep") == 0) continue;
            m[n++] = (mover){r, k ? "op" : "phase", r->a / steps_a, r->b / steps_b};
        }
    }
    qsort(m, n, sizeof *m, by_mover_change);
    size_t width = 24;
    for (size_t i = 0; i < n && i < limit; i++)
        if (strlen(m[i].r->name) > width) width = strlen(m[i].r->name);
    if (width > 60) width = 60;
    printf("Biggest movers (time per step, mean)\n");
    char ha[32], hb[32], hd[32];
    snprintf(ha, sizeof ha, "A (%s)", unit);
    snprintf(hb, sizeof hb, "B (%s)", unit);
    snprintf(hd, sizeof hd, "B - A (%s)", unit);
    printf("%-5s  %-*s  %12s  %12s  %12s  %8s\n", "Kind", (int)width, "Name", ha, hb, hd, "Change");
    for (size_t i = 0; i < n && i < limit; i++) {
        char change[32];
        if (m[i].a > 0)
            snprintf(change, sizeof change, "%+.1f%%", (m[i].b / m[i].a - 1) * 100);
        else
            snprintf(change, sizeof change, "%s", m[i].b > 0 ? "new" : "-");
        char name[256];
        printf("%-5s  %-*.*s  %12.3f  %12.3f  %+12.3f  %8s\n", m[i].kind, (int)width, (int)width,
               printable(m[i].r->name, name, sizeof name), m[i].a / scale, m[i].b / scale,
               (m[i].b - m[i].a) / scale, change);
    }
    free(m);
    return 0;
}

/* Prints the gate's verdict; returns CLI_OK, or 1 on a regression. */
static int print_gate(const sp_step_comparison *c, const char *metric, double threshold,
                      const char *unit, double scale)
{
    printf("Gate: %s, median per step %.3f %s -> %.3f %s (",
           strcmp(metric, "step") ? metric : "step time", c->base_median_ns / scale, unit,
           c->new_median_ns / scale, unit);
    if (isinf(c->change))
        printf("new");
    else
        printf("%+.1f%%", c->change * 100);
    printf("), threshold %+.1f%%\n", threshold * 100);
    if (c->tested)
        printf("Spread: Mann-Whitney U, one-sided p = %.2g over %zu and %zu steps: %s\n",
               c->p_value, c->base_steps, c->new_steps,
               c->p_value < 0.01 ? "B's steps are slower" : "within noise");
    else
        printf("Spread: not tested (%zu and %zu steps; the test needs 3 a side): medians alone\n",
               c->base_steps, c->new_steps);
    printf("Result: %s\n\n", c->regression ? "REGRESSION" : "pass");
    return c->regression ? 1 : CLI_OK;
}

/* "5%", "5" or "2.5%": a percentage as a fraction; -1 when malformed. */
static double parse_percent(const char *v)
{
    char *end;
    double x = strtod(v, &end);
    if (end == v || (*end == '%' ? end[1] != '\0' : *end != '\0') || !(x >= 0) || isinf(x))
        return -1;
    return x / 100;
}

static int valid_metric(const char *m)
{
    if (strcmp(m, "step") == 0) return 1;
    const char *prefixes[] = {"op:", "kernel:", "phase:"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(prefixes[i]);
        if (strncmp(m, prefixes[i], n) == 0 && m[n] != '\0') return 1;
    }
    return 0;
}

int cli_diff(int argc, char **argv)
{
    const char *files[2] = {NULL, NULL}, *unit = "ms", *metric = NULL;
    double threshold = -1;
    int per_step = 0;
    long limit = 20;
    size_t nfiles = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        if (cli_is_help(a)) {
            fputs(diff_help, stdout);
            return CLI_OK;
        }
        if (cli_option(argc, argv, &i, "--limit", &v)) {
            if (!v) return cli_missing_value("diff", "--limit", "N");
            char *end;
            limit = strtol(v, &end, 10);
            if (*v == '\0' || *end != '\0' || limit < 0)
                return cli_usage_error("diff", "bad --limit '%s': a number of rows, 0 for all", v);
        } else if (cli_option(argc, argv, &i, "--time-unit", &v)) {
            if (!v) return cli_missing_value("diff", "--time-unit", "UNIT");
            if (strcmp(v, "s") && strcmp(v, "ms") && strcmp(v, "us") && strcmp(v, "ns"))
                return cli_usage_error("diff", "unknown time unit '%s' (s, ms, us or ns)", v);
            unit = v;
        } else if (cli_option(argc, argv, &i, "--fail-above", &v)) {
            if (!v) return cli_missing_value("diff", "--fail-above", "PCT");
            threshold = parse_percent(v);
            if (threshold < 0)
                return cli_usage_error("diff", "bad --fail-above '%s': a percentage such as 5%%",
                                       v);
        } else if (cli_option(argc, argv, &i, "--metric", &v)) {
            if (!v) return cli_missing_value("diff", "--metric", "METRIC");
            if (!valid_metric(v))
                return cli_usage_error("diff",
                                       "bad --metric '%s': step, op:NAME, kernel:NAME or "
                                       "phase:NAME",
                                       v);
            metric = v;
        } else if (strcmp(a, "--per-step") == 0) {
            per_step = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            static const char *const flags[] = {"--per-step", NULL};
            return cli_unknown_option("diff", a, flags);
        } else if (nfiles == 2) {
            return cli_usage_error("diff", "two files expected, got a third: '%s'", a);
        } else {
            files[nfiles++] = a;
        }
    }
    if (nfiles != 2) return cli_usage_error("diff", "two files A and B expected");
    if (metric && threshold < 0) return cli_usage_error("diff", "--metric needs --fail-above");
    double scale = strcmp(unit, "s") == 0 ? 1e9 : strcmp(unit, "ms") == 0 ? 1e6 : strcmp(unit, "us") == 0 ? 1e3 : 1;
    sp_result *r[2] = {NULL, NULL};
    int rc = cli_load(files[0], &r[0]);
    if (rc == CLI_OK) rc = cli_load(files[1], &r[1]);
    rows phases = {0}, ops = {0};
    for (int side = 0; rc == CLI_OK && side < 2; side++)
        if (add_table(r[side], SP_VIEW_OVERVIEW, &phases, side) != 0 ||
            add_table(r[side], SP_VIEW_OPERATOR, &ops, side) != 0) {
            fprintf(stderr, "stepprof: %s: %s\n", files[side], sp_last_error());
            rc = CLI_BAD_INPUT;
        }
    sp_step_comparison cmp;
    int gate = threshold >= 0;
    if (rc == CLI_OK && gate) {
        if (!metric) metric = "step";
        sp_status st = sp_result_compare_steps(r[0], r[1], metric, threshold, &cmp);
        if (st != SP_OK) {
            fprintf(stderr, "stepprof: diff %s %s: %s\n", files[0], files[1], sp_last_error());
            rc = st == SP_EINVAL ? CLI_USAGE : CLI_BAD_INPUT;
        } else {
            printf("A: %s\nB: %s\n", files[0], files[1]);
            for (int side = 0; side < 2; side++) {
                uint64_t lost = sp_result_counter(r[side], SP_COUNTER_HOST_DROPPED) +
                                sp_result_counter(r[side], SP_COUNTER_CUPTI_DROPPED) +
                                sp_result_counter(r[side], SP_COUNTER_DISCARDED_RECORDS);
                if (lost)
                    printf("Caution: %c dropped %llu events or records; its steps miss them\n",
                           side ? 'B' : 'A', (unsigned long long)lost);
            }
            int verdict = print_gate(&cmp, metric, threshold, unit, scale);
            if (print_movers(&phases, &ops, (double)cmp.base_steps, (double)cmp.new_steps, unit,
                             scale, 5) != 0) {
                fprintf(stderr, "stepprof: out of memory\n");
                rc = CLI_BAD_INPUT;
            } else {
                rc = verdict;
            }
        }
    }
    if (rc == CLI_OK && !gate) {
        double div_a = 1, div_b = 1;
        if (per_step) {
            div_a = steps_of(&phases, 0);
            div_b = steps_of(&phases, 1);
            if (div_a <= 0 || div_b <= 0) {
                fprintf(stderr, "stepprof: --per-step: %s has no ProfileStep ranges\n", div_a <= 0 ? files[0] : files[1]);
                rc = CLI_BAD_INPUT;
            }
        }
        if (rc == CLI_OK) {
            printf("A: %s\nB: %s\n%s\n\n", files[0], files[1], per_step ? "times per step" : "total times");
            print_rows("Phases (Overview)", &phases, unit, scale, div_a, div_b, 0);
            print_rows("Operators", &ops, unit, scale, div_a, div_b, (size_t)limit);
        }
    }
    free_rows(&phases);
    free_rows(&ops);
    sp_result_release(r[0]);
    sp_result_release(r[1]);
    if (fflush(stdout) != 0) rc = CLI_BAD_INPUT;
    return rc;
}
