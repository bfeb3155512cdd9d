/* table_torch.c: the torch-style table of semantics.md §6.11, laid out as
 * torch's profiler_util._build_table does: every column right-aligned and
 * followed by two spaces (so table lines carry two trailing spaces), a dash
 * separator above and below the header and after the rows, then the footer
 * lines. Nodes are grouped by name in an open-addressing hash table whose
 * groups own a copy of their name; everything is freed before returning.
 *
 * Decisions where the reference leaves room:
 * - Device ranges (Kernel, Memcpy, Memset) are not host ranges and are
 *   skipped; their time reaches the table through the nodes' gpu fields.
 * - Widths and the 52-character cut count UTF-8 code points, as Python's
 *   len() and str.format do, after control characters are made visible
 *   (sp__fmt_name); the name width is taken over all groups, and
 *   the percentages are of the sum over all groups, before row_limit (torch).
 * - A range that is the only child of a range of the same name is merged
 *   into it, as torch's EventList._remove_dup_nodes does (is_dup).
 * - Times are converted to microseconds (ns / 1000.0) before formatting, as
 *   torch keeps them; percentages are computed from the ns sums directly. */
#include "table_torch.h"
#include "table.h"

#include <stdlib.h>
#include <string.h>

#define NAME_MAX_WIDTH 55 /* torch's max_name_column_width */
#define NAME_CUT 52       /* names of NAME_CUT+ code points: cut + "..." */
#define COL_WIDTH 12      /* torch's DEFAULT_COLUMN_WIDTH */

typedef struct group {
    char *name; /* owned, NUL-terminated JSON spelling */
    size_t len;
    uint64_t hash;
    int64_t self_cpu, cpu, self_gpu, gpu, count;
    int64_t first_start, first_end; /* first occurrence: (start asc, end desc, */
    size_t first_thread, first_node; /*  thread asc, node asc) */
    double key;                      /* the sort key */
} group;

typedef struct groups {
    group *g;
    size_t n, cap;
    uint32_t *slots; /* group index + 1; 0 = empty; nslots a power of 2 */
    size_t nslots;
} groups;

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The name torch's key_averages groups by: the JSON spelling (as
 * chrome_json.c writes it), then "ProfilerStep#..." -> "ProfilerStep*". */
static void torch_name(sp__buf *b, const sp__event *e, const char *name)
{
    size_t len = strlen(name);
    b->len = 0;
    if (starts_with(name, "ProfilerStep#") ||
        (e->type == SP_EVENT_PROFILE_STEP && starts_with(name, "ProfileStep#"))) {
        sp__buf_puts(b, "ProfilerStep*");
    } else if (e->type == SP_EVENT_DATALOADER &&
               !(starts_with(name, "enumerate(DataLoader)#") && len >= 9 &&
                 strcmp(name + len - 9, ".__next__") == 0)) {
        sp__buf_puts(b, "enumerate(DataLoader)#");
        sp__buf_puts(b, name);
        sp__buf_puts(b, ".__next__");
    } else {
        sp__buf_puts(b, name);
    }
}

static uint64_t fnv1a(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static int rehash(groups *gs, size_t nslots)
{
    uint32_t *slots = sp__alloc(sizeof *slots * nslots);
    if (!slots) return -1;
    for (size_t i = 0; i < gs->n; i++) {
        size_t s = (size_t)gs->g[i].hash & (nslots - 1);
        while (slots[s]) s = (s + 1) & (nslots - 1);
        slots[s] = (uint32_t)(i + 1);
    }
    sp__free(gs->slots);
    gs->slots = slots;
    gs->nslots = nslots;
    return 0;
}

/* The group of name (len bytes), created on first use; NULL on OOM. */
static group *lookup(groups *gs, const char *name, size_t len)
{
    if ((gs->n + 1) * 2 > gs->nslots && rehash(gs, gs->nslots ? gs->nslots * 2 : 64) != 0)
        return NULL;
    uint64_t h = fnv1a(name, len);
    size_t s = (size_t)h & (gs->nslots - 1);
    for (; gs->slots[s]; s = (s + 1) & (gs->nslots - 1)) {
        group *g = &gs->g[gs->slots[s] - 1];
        if (g->hash == h && g->len == len && memcmp(g->name, name, len) == 0) return g;
    }
    if (gs->n == gs->cap) {
        size_t cap = gs->cap ? gs->cap * 2 : 32;
        group *g = sp__realloc(gs->g, sizeof *g * cap);
        if (!g) return NULL;
        gs->g = g;
        gs->cap = cap;
    }
    group *g = &gs->g[gs->n];
    memset(g, 0, sizeof *g);
    g->name = sp__alloc(len + 1);
    if (!g->name) return NULL;
    memcpy(g->name, name, len);
    g->len = len;
    g->hash = h;
    g->first_thread = SIZE_MAX;
    gs->slots[s] = (uint32_t)(++gs->n);
    return g;
}

static int earlier(int64_t start, int64_t end, size_t t, size_t i, const group *g)
{
    if (g->first_thread == SIZE_MAX) return 1;
    if (start != g->first_start) return start < g->first_start;
    if (end != g->first_end) return end > g->first_end;
    if (t != g->first_thread) return t < g->first_thread;
    return i < g->first_node;
}

/* torch's EventList drops a range that is the only child of a range of the
 * same name (an op that re-enters the dispatcher under its own name, as
 * aten::mean does), its children going to the parent: the parent's row keeps
 * one call and its total, and takes the child's self time (the caller adds
 * it, as parent and child share the group). */
static int is_dup(const sp__model *m, const sp__thread_model *tm, const sp__node *n, const char *raw)
{
    if (n->parent < 0) return 0;
    const sp__node *p = &tm->nodes[n->parent];
    if (p->first_child != (int32_t)(n - tm->nodes) || n->next_sibling != -1) return 0;
    const char *parent = sp__result_name(m->result, tm->thread->events[p->event].name);
    return raw && parent && strcmp(raw, parent) == 0;
}

static int collect_groups(const sp__model *m, groups *gs)
{
    sp__buf name;
    sp__buf_init(&name);
    int rc = 0;
    for (size_t t = 0; t < m->thread_count && rc == 0; t++) {
        const sp__thread_model *tm = &m->threads[t];
        for (size_t i = 0; i < tm->count; i++) {
            const sp__node *n = &tm->nodes[i];
            const sp__event *e = &tm->thread->events[n->event];
            if (e->type == SP_EVENT_KERNEL || e->type == SP_EVENT_MEMCPY ||
                e->type == SP_EVENT_MEMSET)
                continue; /* device ranges: not host ranges */
            const char *raw = sp__result_name(m->result, e->name);
            torch_name(&name, e, raw ? raw : "");
            group *g = name.failed ? NULL : lookup(gs, sp__buf_cstr(&name), name.len);
            if (!g) {
                rc = -1;
                break;
            }
            g->self_cpu += n->self_cpu;
            g->self_gpu += n->self_gpu;
            if (is_dup(m, tm, n, raw)) continue;
            g->cpu += n->cpu;
            g->gpu += n->gpu;
            g->count++;
            if (earlier(e->start_ns, e->end_ns, t, i, g)) {
                g->first_start = e->start_ns;
                g->first_end = e->end_ns;
                g->first_thread = t;
                g->first_node = i;
            }
        }
    }
    sp__buf_fini(&name);
    return rc;
}

/* Descending key, then first occurrence (Python's stable sort, reverse). */
static int by_key(const void *pa, const void *pb)
{
    const group *a = pa, *b = pb;
    if (a->key != b->key) return a->key > b->key ? -1 : 1;
    if (a->first_thread == b->first_thread && a->first_node == b->first_node) return 0;
    return earlier(a->first_start, a->first_end, a->first_thread, a->first_node, b) ? -1 : 1;
}

static size_t u8len(const char *s)
{
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* torch's _format_time, from ns. */
static void fmt_time(char *out, size_t size, double ns)
{
    double us = ns / 1000.0;
    if (us >= 1e6)
        snprintf(out, size, "%.3fs", us / 1e6);
    else if (us >= 1e3)
        snprintf(out, size, "%.3fms", us / 1e3);
    else
        snprintf(out, size, "%.3fus", us);
}

/* torch's _format_time_share: "NaN" when the total is 0. */
static void fmt_share(char *out, size_t size, int64_t part, int64_t total)
{
    if (total == 0)
        snprintf(out, size, "NaN");
    else
        snprintf(out, size, "%.2f%%", (double)part * 100.0 / (double)total);
}

static void put_cell(sp__buf *out, const char *s, size_t width)
{
    for (size_t n = u8len(s); n < width; n++) sp__buf_putc(out, ' ');
    sp__buf_puts(out, s);
    sp__buf_puts(out, "  ");
}

static void put_sep(sp__buf *out, size_t name_width, size_t ncols)
{
    for (size_t c = 0; c < ncols; c++) {
        for (size_t i = 0, w = c ? COL_WIDTH : name_width; i < w; i++) sp__buf_putc(out, '-');
        sp__buf_puts(out, "  ");
    }
    sp__buf_putc(out, '\n');
}

static void put_row(sp__buf *out, const char *const *cells, size_t ncols, size_t name_width)
{
    for (size_t c = 0; c < ncols; c++) put_cell(out, cells[c], c ? COL_WIDTH : name_width);
    sp__buf_putc(out, '\n');
}

/* Sort key of g for sort_by index k (see the table in sp__torch_table). */
static double sort_key(const group *g, int k)
{
    switch (k) {
    case 0: return (double)g->self_cpu;
    case 1: return (double)g->cpu;
    case 2: return g->count ? (double)g->cpu / (double)g->count : 0.0;
    default: return (double)g->count;
    }
}

static void render(const groups *gs, int row_limit, sp__buf *out)
{
    int64_t sum_self_cpu = 0, sum_self_gpu = 0;
    size_t name_width = 0;
    int has_gpu = 0;
    for (size_t i = 0; i < gs->n; i++) {
        const group *g = &gs->g[i];
        sum_self_cpu += g->self_cpu;
        sum_self_gpu += g->self_gpu;
        has_gpu |= g->gpu > 0 || g->self_gpu > 0;
        char shown[SP__NAME_CELL_BYTES];
        sp__fmt_name(shown, sizeof shown, "", g->name, NAME_CUT - 1, NAME_CUT);
        size_t len = u8len(shown);
        if (len > name_width) name_width = len;
    }
    name_width = name_width + 4 < NAME_MAX_WIDTH ? name_width + 4 : NAME_MAX_WIDTH;
    static const char *const head[] = {"Name", "Self CPU %", "Self CPU", "CPU total %",
                                       "CPU total", "CPU time avg", "Self CUDA", "Self CUDA %",
                                       "CUDA total", "CUDA time avg", "# of Calls"};
    const char *cells[11];
    size_t ncols = has_gpu ? 11 : 7;
    for (size_t c = 0; c < 6; c++) cells[c] = head[c];
    for (size_t c = 6; c < ncols; c++) cells[c] = head[has_gpu ? c : c + 4];
    put_sep(out, name_width, ncols);
    put_row(out, cells, ncols, name_width);
    put_sep(out, name_width, ncols);

    char text[11][64], name[SP__NAME_CELL_BYTES];
    for (size_t c = 0; c < ncols; c++) cells[c] = text[c];
    cells[0] = name;
    for (size_t i = 0; i < gs->n && (row_limit < 0 || i < (size_t)row_limit); i++) {
        const group *g = &gs->g[i];
        /* torch's cut (52 code points and more: the first 52 + "...") by
         * the rule every table shares, which also makes control characters
         * visible. */
        sp__fmt_name(name, sizeof name, "", g->name, NAME_CUT - 1, NAME_CUT);
        fmt_share(text[1], sizeof text[1], g->self_cpu, sum_self_cpu);
        fmt_time(text[2], sizeof text[2], (double)g->self_cpu);
        fmt_share(text[3], sizeof text[3], g->cpu, sum_self_cpu);
        fmt_time(text[4], sizeof text[4], (double)g->cpu);
        fmt_time(text[5], sizeof text[5], (double)g->cpu / (double)g->count);
        size_t c = 6;
        if (has_gpu) {
            fmt_time(text[c++], sizeof text[0], (double)g->self_gpu);
            fmt_share(text[c++], sizeof text[0], g->self_gpu, sum_self_gpu);
            fmt_time(text[c++], sizeof text[0], (double)g->gpu);
            fmt_time(text[c++], sizeof text[0], (double)g->gpu / (double)g->count);
        }
        snprintf(text[c], sizeof text[c], "%lld", (long long)g->count);
        put_row(out, cells, ncols, name_width);
    }
    put_sep(out, name_width, ncols);
    fmt_time(text[0], sizeof text[0], (double)sum_self_cpu);
    sp__buf_printf(out, "Self CPU time total: %s\n", text[0]);
    if (has_gpu) {
        fmt_time(text[0], sizeof text[0], (double)sum_self_gpu);
        sp__buf_printf(out, "Self CUDA time total: %s\n", text[0]);
    }
}

int sp__torch_table(const sp__model *m, const char *sort_by, int row_limit, sp__buf *out)
{
    static const char *const keys[] = {"self_cpu_time_total", "cpu_time_total", "cpu_time_avg",
                                       "count", "cpu_time"};
    int k = -1;
    for (int i = 0; i < 5 && k < 0; i++)
        if (!sort_by || strcmp(sort_by, keys[i]) == 0) k = i == 4 ? 2 : i;
    if (k < 0) return -2;
    if (!m || m->failed) return -1;
    groups gs;
    memset(&gs, 0, sizeof gs);
    int rc = collect_groups(m, &gs);
    if (rc == 0 && gs.n > 0) {
        for (size_t i = 0; i < gs.n; i++) gs.g[i].key = sort_key(&gs.g[i], k);
        qsort(gs.g, gs.n, sizeof *gs.g, by_key);
        render(&gs, row_limit, out);
        if (out->failed) rc = -1;
    }
    for (size_t i = 0; i < gs.n; i++) sp__free(gs.g[i].name);
    sp__free(gs.g);
    sp__free(gs.slots);
    return rc;
}
