/* table_kernel.c: the Kernel Summary (semantics.md §6.6): one row per full
 * kernel name over every Kernel record of the span (attributed, attached to
 * a thread root, or unattributed), sorted by sorted_by, ratio = item total
 * / sum over all kernels.
 *
 * Decisions:
 * - Paddle prints this table only when it has kernel items
 *   (`if statistic_data.event_summary.kernel_items:` in _build_table), so a
 *   span without kernels prints nothing, not an empty table (*out NULL).
 * - Items are every SP_EVENT_KERNEL record of r->devices, whatever its
 *   attribution (thread -1 included), grouped by the full name TEXT (not
 *   the id, so a loaded result with duplicate strings still groups).
 * - Sort: GPUAvg -> avg desc, GPUMax -> max desc, GPUMin -> min asc, any
 *   other key (CPU keys and GPUTotal) -> total desc. Ties keep the order in
 *   which each name first appears in r->devices (a stable sort of the items
 *   in first-seen order). Avg compares total / calls as doubles.
 * - Display name: Paddle's match of (.+?)(<.*>)(\(.*\)) against the start
 *   of the name: the prefix up to and including the LAST '>' that is
 *   immediately followed by '(' with a ')' somewhere after it, provided a
 *   '<' precedes that '>' at index >= 1; otherwise the full name. Then a
 *   name longer than 90 code points becomes its first 87 code points +
 *   "..." (lengths in UTF-8 code points, as table.h counts them).
 * - Columns: "Name" 90 (does not grow: names are cut to fit), "Calls" 6
 *   and "GPU Total / Avg / Max / Min / Ratio(%)" 40, both growing.
 * - Ratio denominator 0 (only zero-length kernels) prints 0.00; a record
 *   with end < start counts as length 0.
 * Cost: O(n log n) in the number of device records (a sort by name), one
 * temporary array of n entries and one of the items. */
#include "summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct kern {
    const char *name;
    size_t index; /* position in r->devices */
    int64_t dur;
} kern;

typedef struct item {
    const char *name;
    size_t first; /* index of the first record with this name */
    int64_t calls, total, max, min;
    int key; /* sorted_by, copied for the comparator */
} item;

static int cmp_kern(const void *a, const void *b)
{
    const kern *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

static double avg_of(const item *i) { return i->calls > 0 ? (double)i->total / (double)i->calls : 0; }

static int cmp_item(const void *a, const void *b)
{
    const item *x = a, *y = b;
    switch (x->key) {
    case SP__SORT_GPU_AVG: {
        double ax = avg_of(x), ay = avg_of(y);
        if (ax != ay) return ax > ay ? -1 : 1;
        break;
    }
    case SP__SORT_GPU_MAX:
        if (x->max != y->max) return x->max > y->max ? -1 : 1;
        break;
    case SP__SORT_GPU_MIN:
        if (x->min != y->min) return x->min < y->min ? -1 : 1;
        break;
    default:
        if (x->total != y->total) return x->total > y->total ? -1 : 1;
        break;
    }
    return x->first < y->first ? -1 : x->first > y->first;
}

static const char *unit_of(const sp__summary_opts *o)
{
    static const char *const units[] = {"s", "ms", "us", "ns"};
    for (size_t i = 0; o->time_unit && i < 4; i++)
        if (strcmp(o->time_unit, units[i]) == 0) return units[i];
    return "ms";
}

/* Writes the display name of full name s into out (SP__NAME_CELL_BYTES). */
static void display_name(char *out, size_t size, const char *s)
{
    size_t len = strlen(s), keep = len;
    /* index of the first '<' at >= 1 and of the last ')' */
    size_t lt = 0, rp = 0;
    int have_lt = 0, have_rp = 0;
    for (size_t i = 1; i < len && !have_lt; i++)
        if (s[i] == '<') lt = i, have_lt = 1;
    for (size_t i = len; i-- > 0;)
        if (s[i] == ')') {
            rp = i, have_rp = 1;
            break;
        }
    if (have_lt && have_rp)
        for (size_t j = len - 1; j > lt; j--)
            if (s[j] == '>' && j + 1 < len && s[j + 1] == '(' && rp >= j + 2) {
                keep = j + 1;
                break;
            }
    /* made visible, then cut to 87 code points + "..." when longer than 90
     * code points (sp__fmt_name, the rule of every table) */
    sp__fmt_name_n(out, size, "", s, keep, 90, 87);
}

static sp__table *render(const item *items, size_t n, int64_t sum, const char *unit)
{
    static const char *const head[] = {"Name", "Calls", "GPU Total / Avg / Max / Min / Ratio(%)"};
    char line[32], calls[32], gpu[256], name[SP__NAME_CELL_BYTES];
    sp__table *t = sp__table_new(3);
    if (!t) return NULL;
    sp__table_column(t, 0, 90, 0);
    sp__table_column(t, 1, 6, 1);
    sp__table_column(t, 2, 40, 1);
    snprintf(line, sizeof line, "Time unit: %s", unit);
    sp__table_title(t, "Kernel Summary");
    sp__table_text(t, line);
    sp__table_separator(t);
    sp__table_header(t, head);
    sp__table_separator(t);
    for (size_t i = 0; i < n; i++) {
        const item *s = &items[i];
        snprintf(calls, sizeof calls, "%lld", (long long)s->calls);
        sp__fmt_composite(gpu, sizeof gpu, (double)s->total, s->calls, (double)s->max,
                          (double)s->min, (double)s->total, (double)sum, unit);
        display_name(name, sizeof name, s->name);
        const char *cells[] = {name, calls, gpu};
        sp__table_row(t, cells);
    }
    sp__table_separator(t);
    sp__table_blank(t);
    sp__table_blank(t);
    return t;
}

int sp__summary_kernel(const sp__model *m, const sp__summary_opts *o, sp__table **out)
{
    *out = NULL;
    if (m->failed) return -1;
    const sp_result *r = m->result;
    if (!r) return 0;
    size_t nk = 0;
    for (size_t i = 0; i < r->device_count; i++)
        if (r->devices[i].type == SP_EVENT_KERNEL) nk++;
    if (nk == 0) return 0;

    kern *k = sp__alloc(sizeof *k * nk);
    item *items = sp__alloc(sizeof *items * nk);
    int rc = -1;
    if (!k || !items) goto done;
    nk = 0;
    for (size_t i = 0; i < r->device_count; i++) {
        const sp__device_rec *d = &r->devices[i];
        if (d->type != SP_EVENT_KERNEL) continue;
        int64_t dur = d->end_ns > d->start_ns ? d->end_ns - d->start_ns : 0;
        k[nk++] = (kern){sp__result_name(r, d->name), i, dur};
    }
    qsort(k, nk, sizeof *k, cmp_kern);
    size_t n = 0;
    int64_t sum = 0;
    for (size_t i = 0; i < nk; i++) {
        if (n == 0 || strcmp(items[n - 1].name, k[i].name) != 0)
            items[n++] = (item){k[i].name, k[i].index, 0, 0, k[i].dur, k[i].dur, o->sorted_by};
        item *it = &items[n - 1];
        it->calls++;
        it->total += k[i].dur;
        if (k[i].dur > it->max) it->max = k[i].dur;
        if (k[i].dur < it->min) it->min = k[i].dur;
        sum += k[i].dur;
    }
    qsort(items, n, sizeof *items, cmp_item);
    *out = render(items, n, sum, unit_of(o));
    if (*out && !sp__table_failed(*out)) {
        rc = 0;
    } else {
        sp__table_free(*out);
        *out = NULL;
    }
done:
    sp__free(k);
    sp__free(items);
    return rc;
}
