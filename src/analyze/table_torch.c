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
 *   torch keeps them; percentages are computed from the ns sums directly.
 * - Memory is the signed bytes of the Allocate and Free events charged to a
 *   range (attribute.c), as torch's *_memory_usage: self for the range's
 *   own, total with its descendants'; a place "Place(gpu...)" is device
 *   memory, any other CPU memory. Its columns appear, as torch's with
 *   profile_memory, when the result was recorded with profile_memory; the
 *   memory sort keys work either way (all 0 without memory events: rows in
 *   first-occurrence order, as torch's stable sort leaves them). */
#include "table_torch.h"
#include "table.h"

#include <stdlib.h>
#include <string.h>

#define COL_WIDTH 12      /* torch's DEFAULT_COLUMN_WIDTH */

typedef struct group {
    /* owned: the NUL-terminated JSON spelling, then (grouping by input
     * shapes) the NUL-terminated shapes, as torch's str(input_shapes) */
    char *name;
    const char *shapes; /* in name's allocation; "" when not grouping by them */
    size_t len;         /* of the whole key, both NULs but the last included */
    uint64_t hash;
    int64_t self_cpu, cpu, self_gpu, gpu, count;
    int64_t self_cpu_mem, cpu_mem, self_dev_mem, dev_mem; /* bytes */
    uint64_t flops; /* the FLOPs of its own runs (op supplements) */
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

/* The group of key (len bytes: a name, or a name, a NUL and its shapes),
 * created on first use; NULL on OOM. */
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
    g->name[len] = '\0';
    g->shapes = g->name + strlen(g->name);
    if (g->shapes < g->name + len) g->shapes++; /* past the name's NUL */
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

/* Memory charged to each node of tm: mem[4 * i + k] with k = self CPU,
 * total CPU, self device, total device. NULL with *failed clear when the
 * thread has no memory events; NULL with *failed set when out of memory. */
static int64_t *node_memory(const sp__model *m, const sp__thread_model *tm, int *failed)
{
    const sp__thread *th = tm->thread;
    *failed = 0;
    if (th->mem_count == 0 || tm->count == 0) return NULL;
    int64_t *mem = sp__alloc(sizeof *mem * 4 * tm->count);
    int32_t *node_of = sp__alloc(sizeof *node_of * (th->count ? th->count : 1));
    if (!mem || !node_of) {
        sp__free(mem);
        sp__free(node_of);
        *failed = 1;
        return NULL;
    }
    for (size_t e = 0; e < th->count; e++) node_of[e] = -1;
    for (size_t i = 0; i < tm->count; i++) node_of[tm->nodes[i].event] = (int32_t)i;
    for (size_t k = 0; k < th->mem_count; k++) {
        const sp__mem_event *me = &th->mems[k];
        if (me->type > 1 || me->host < 0 || (size_t)me->host >= th->count) continue;
        int32_t n = node_of[me->host];
        if (n < 0) continue;
        const char *place = sp__result_name(m->result, me->place);
        int dev = place && starts_with(place, "Place(gpu") ? 2 : 0;
        mem[4 * (size_t)n + (size_t)dev] += me->bytes;
        for (int32_t p = n; p >= 0; p = tm->nodes[p].parent)
            mem[4 * (size_t)p + (size_t)dev + 1] += me->bytes;
    }
    sp__free(node_of);
    return mem;
}

/* The FLOPs each node of tm ran itself (op supplements on it, with_flops),
 * or NULL with *failed clear when none has any; NULL with *failed set when
 * out of memory. */
static uint64_t *node_flops(const sp__model *m, const sp__thread_model *tm, int *failed)
{
    const sp__thread *th = tm->thread;
    *failed = 0;
    int any = 0;
    for (size_t k = 0; k < th->op_count; k++) any |= th->ops[k].flops > 0;
    if (!any || tm->count == 0) return NULL;
    uint64_t *flops = sp__alloc(sizeof *flops * tm->count);
    int32_t *node_of = sp__alloc(sizeof *node_of * (th->count ? th->count : 1));
    if (!flops || !node_of) {
        sp__free(flops);
        sp__free(node_of);
        *failed = 1;
        return NULL;
    }
    for (size_t e = 0; e < th->count; e++) node_of[e] = -1;
    for (size_t i = 0; i < tm->count; i++) node_of[tm->nodes[i].event] = (int32_t)i;
    for (size_t k = 0; k < th->op_count; k++) {
        int32_t h = th->ops[k].host;
        if (h < 0 || (size_t)h >= th->count || node_of[h] < 0) continue;
        flops[node_of[h]] += th->ops[k].flops;
    }
    (void)m;
    sp__free(node_of);
    return flops;
}

/* The op record of each node of tm whose shapes its row takes, -1 for
 * none: the first (in time order) of those attached to the node or to a
 * node merged into it (is_dup). A record's time comes from another clock
 * than the ranges', so of an op nested in one of its own name (aten::mean
 * in aten::mean) both records may land on either range; the first record
 * of the pair is the outer op's whichever range it landed on, and the
 * outer op is the one torch keeps. NULL with *failed set when out of
 * memory, NULL with *failed clear when the thread has none. */
static int32_t *node_ops(const sp__model *m, const sp__thread_model *tm, int *failed)
{
    const sp__thread *th = tm->thread;
    *failed = 0;
    if (th->op_count == 0 || tm->count == 0) return NULL;
    int32_t *ops = sp__alloc(sizeof *ops * tm->count);
    int32_t *node_of = sp__alloc(sizeof *node_of * (th->count ? th->count : 1));
    if (!ops || !node_of) {
        sp__free(ops);
        sp__free(node_of);
        *failed = 1;
        return NULL;
    }
    for (size_t e = 0; e < th->count; e++) node_of[e] = -1;
    for (size_t i = 0; i < tm->count; i++) {
        node_of[tm->nodes[i].event] = (int32_t)i;
        ops[i] = -1;
    }
    for (size_t k = 0; k < th->op_count; k++) {
        int32_t h = th->ops[k].host;
        if (h >= 0 && (size_t)h < th->count && node_of[h] >= 0 && ops[node_of[h]] < 0)
            ops[node_of[h]] = (int32_t)k;
    }
    for (size_t i = tm->count; i-- > 0;) { /* children first: a chain's first climbs to its top */
        const sp__node *n = &tm->nodes[i];
        const char *raw = sp__result_name(m->result, th->events[n->event].name);
        if (ops[i] < 0 || !is_dup(m, tm, n, raw)) continue;
        int32_t *top = &ops[n->parent];
        if (*top < 0 || ops[i] < *top) *top = ops[i];
    }
    sp__free(node_of);
    return ops;
}

/* Appends torch's str(input_shapes) of op record k of result thread t
 * ("[[16, 32], [64], []]": one list per input, an input that is not a
 * tensor as []), read through the public accessors so that the Python
 * package, which reads them the same way, spells them alike; "[]" for
 * k < 0. */
static void put_shapes(sp__buf *b, const sp_result *r, size_t t, int32_t k)
{
    sp_op_record op;
    sp__buf_putc(b, '[');
    if (k >= 0 && sp_result_op(r, t, (size_t)k, &op) == SP_OK) {
        for (size_t j = 0; j < op.input_count; j++) {
            sp_op_input in;
            if (sp_result_op_input(r, t, (size_t)k, j, &in) != SP_OK) break;
            sp__buf_puts(b, j ? ", [" : "[");
            for (size_t d = 0; d < in.rank; d++)
                sp__buf_printf(b, d ? ", %lld" : "%lld", (long long)in.dims[d]);
            sp__buf_putc(b, ']');
        }
    }
    sp__buf_putc(b, ']');
}

static int collect_groups(const sp__model *m, groups *gs, int by_shapes)
{
    sp__buf name;
    sp__buf_init(&name);
    int rc = 0;
    for (size_t t = 0; t < m->thread_count && rc == 0; t++) {
        const sp__thread_model *tm = &m->threads[t];
        int failed, flops_failed = 0, ops_failed = 0;
        int64_t *mem = node_memory(m, tm, &failed);
        uint64_t *flops = failed ? NULL : node_flops(m, tm, &flops_failed);
        int32_t *ops = failed || flops_failed || !by_shapes ? NULL : node_ops(m, tm, &ops_failed);
        if (failed || flops_failed || ops_failed) {
            sp__free(mem);
            sp__free(flops);
            rc = -1;
            break;
        }
        size_t rt = (size_t)(tm->thread - m->result->threads); /* its index in the result */
        for (size_t i = 0; i < tm->count; i++) {
            const sp__node *n = &tm->nodes[i];
            const sp__event *e = &tm->thread->events[n->event];
            if (e->type == SP_EVENT_KERNEL || e->type == SP_EVENT_MEMCPY ||
                e->type == SP_EVENT_MEMSET)
                continue; /* device ranges: not host ranges */
            if (e->type == SP_EVENT_PYTHON_OP)
                continue; /* Python calls: torch's key_averages leaves them out */
            const char *raw = sp__result_name(m->result, e->name);
            torch_name(&name, e, raw ? raw : "");
            if (by_shapes) {
                /* A range merged into its parent (is_dup) counts in the
                 * parent's group: the shapes of the range it merges into. */
                const sp__node *kept = n;
                while (is_dup(m, tm, kept, raw)) kept = &tm->nodes[kept->parent];
                sp__buf_putc(&name, '\0');
                put_shapes(&name, m->result, rt, ops ? ops[kept - tm->nodes] : -1);
            }
            group *g = name.failed ? NULL : lookup(gs, sp__buf_cstr(&name), name.len);
            if (!g) {
                rc = -1;
                break;
            }
            g->self_cpu += n->self_cpu;
            g->self_gpu += n->self_gpu;
            if (mem) {
                g->self_cpu_mem += mem[4 * i];
                g->self_dev_mem += mem[4 * i + 2];
            }
            if (is_dup(m, tm, n, raw)) continue;
            g->cpu += n->cpu;
            g->gpu += n->gpu;
            if (mem) {
                g->cpu_mem += mem[4 * i + 1];
                g->dev_mem += mem[4 * i + 3];
            }
            if (flops) g->flops += flops[i];
            g->count++;
            if (earlier(e->start_ns, e->end_ns, t, i, g)) {
                g->first_start = e->start_ns;
                g->first_end = e->end_ns;
                g->first_thread = t;
                g->first_node = i;
            }
        }
        sp__free(mem);
        sp__free(flops);
        sp__free(ops);
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

/* torch's _format_time, from ns; with unit "s", "ms" or "us", torch's
 * override_time_unit (that unit for every time). */
static void fmt_time(char *out, size_t size, double ns, const char *unit)
{
    double us = ns / 1000.0;
    if (unit && strcmp(unit, "s") == 0)
        snprintf(out, size, "%.3fs", us / 1e6);
    else if (unit && strcmp(unit, "ms") == 0)
        snprintf(out, size, "%.3fms", us / 1e3);
    else if (unit && strcmp(unit, "us") == 0)
        snprintf(out, size, "%.3fus", us);
    else if (us >= 1e6)
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

static void put_sep(sp__buf *out, const size_t *widths, size_t ncols)
{
    for (size_t c = 0; c < ncols; c++) {
        for (size_t i = 0; i < widths[c]; i++) sp__buf_putc(out, '-');
        sp__buf_puts(out, "  ");
    }
    sp__buf_putc(out, '\n');
}

static void put_row(sp__buf *out, const char *const *cells, size_t ncols, const size_t *widths)
{
    for (size_t c = 0; c < ncols; c++) put_cell(out, cells[c], widths[c]);
    sp__buf_putc(out, '\n');
}

/* The sort keys: torch's FunctionEventAvg attributes that a table can be
 * sorted by (torch spells the device "cuda", "xpu" or "privateuse1" and
 * reads the attribute with "device" in its place, as key_of does), plus
 * stepprof's "cpu_time_avg" and "none" (no key: first-occurrence order,
 * torch's sort_by=None). */
enum {
    K_SELF_CPU, K_CPU, K_CPU_AVG, K_COUNT, K_SELF_DEV, K_DEV, K_DEV_AVG, K_CPU_MEM,
    K_SELF_CPU_MEM, K_DEV_MEM, K_SELF_DEV_MEM, K_NONE
};

static const struct {
    const char *name;
    int key;
} sort_keys[] = {
    {"self_cpu_time_total", K_SELF_CPU},
    {"cpu_time_total", K_CPU},
    {"cpu_time_avg", K_CPU_AVG},
    {"cpu_time", K_CPU_AVG},
    {"count", K_COUNT},
    {"self_device_time_total", K_SELF_DEV},
    {"device_time_total", K_DEV},
    {"device_time", K_DEV_AVG},
    {"cpu_memory_usage", K_CPU_MEM},
    {"self_cpu_memory_usage", K_SELF_CPU_MEM},
    {"device_memory_usage", K_DEV_MEM},
    {"self_device_memory_usage", K_SELF_DEV_MEM},
    {"none", K_NONE},
};

/* The key of sort_by, or -1. The device spellings are replaced first, as
 * torch's _build_table does with str.replace (so "cuda_time_total" and
 * "device_time_total" are one key). */
static int key_of(const char *sort_by)
{
    if (!sort_by) return K_SELF_CPU;
    static const char *const devices[] = {"privateuse1", "cuda", "xpu"};
    char name[64];
    size_t o = 0;
    for (const char *s = sort_by; *s;) {
        size_t i = 0, n = 0;
        for (; i < sizeof devices / sizeof *devices; i++)
            if (starts_with(s, devices[i])) break;
        const char *piece = i < 3 ? "device" : s;
        n = i < 3 ? 6 : 1;
        if (o + n >= sizeof name) return -1;
        memcpy(name + o, piece, n);
        o += n;
        s += i < 3 ? strlen(devices[i]) : 1;
    }
    name[o] = '\0';
    for (size_t i = 0; i < sizeof sort_keys / sizeof *sort_keys; i++)
        if (strcmp(name, sort_keys[i].name) == 0) return sort_keys[i].key;
    return -1;
}

/* Sort key of g for key k. */
static double sort_key(const group *g, int k)
{
    double n = g->count ? (double)g->count : 1.0;
    switch (k) {
    case K_SELF_CPU: return (double)g->self_cpu;
    case K_CPU: return (double)g->cpu;
    case K_CPU_AVG: return (double)g->cpu / n;
    case K_COUNT: return (double)g->count;
    case K_SELF_DEV: return (double)g->self_gpu;
    case K_DEV: return (double)g->gpu;
    case K_DEV_AVG: return (double)g->gpu / n;
    case K_CPU_MEM: return (double)g->cpu_mem;
    case K_SELF_CPU_MEM: return (double)g->self_cpu_mem;
    case K_DEV_MEM: return (double)g->dev_mem;
    case K_SELF_DEV_MEM: return (double)g->self_dev_mem;
    default: return 0.0;
    }
}

/* torch's _format_memory. */
static void fmt_memory(char *out, size_t size, int64_t bytes)
{
    const double kb = 1024.0, mb = kb * 1024.0, gb = mb * 1024.0;
    double a = bytes < 0 ? -(double)bytes : (double)bytes;
    if (a >= gb)
        snprintf(out, size, "%.2f GB", (double)bytes / gb);
    else if (a >= mb)
        snprintf(out, size, "%.2f MB", (double)bytes / mb);
    else if (a >= kb)
        snprintf(out, size, "%.2f KB", (double)bytes / kb);
    else
        snprintf(out, size, "%lld B", (long long)bytes);
}

#define MAX_COLS 17 /* name, 5 CPU, 4 device, 4 memory, calls, shapes, FLOPs */

/* How a table is laid out beyond its rows. */
typedef struct layout {
    int row_limit, with_memory;
    size_t max_width;       /* of the name column; SIZE_MAX: none */
    size_t cut_above, keep; /* names of more than cut_above code points: keep + "..." */
    size_t shapes_max;      /* of the Input Shapes column; SIZE_MAX: none */
    const char *time_unit;  /* NULL: torch's automatic units */
} layout;

/* Returns 0, or -1 when the name cell could not be allocated. */
static int render(const groups *gs, const layout *lay, sp__buf *out)
{
    int64_t sum_self_cpu = 0, sum_self_gpu = 0;
    size_t name_width = 0, longest = 0;
    int has_gpu = 0, has_dev_mem = 0;
    uint64_t least_flops = 0; /* the smallest positive group FLOPs: the column's unit */
    const char *unit = lay->time_unit;
    for (size_t i = 0; i < gs->n; i++)
        if (gs->g[i].len > longest) longest = gs->g[i].len;
    /* A cut or visible name takes at most 4 bytes per input byte (control
     * characters as escapes) plus "..." (SP__NAME_CELL_BYTES's rule). */
    size_t name_bytes = 4 * longest + 16;
    char *name = sp__alloc(name_bytes);
    if (!name) return -1;
    /* torch's Input Shapes column: when some row has a non-empty list, as
     * wide as the longest + 4 (at most shapes_max), each cut to that. */
    size_t shapes_width = 0;
    int has_shapes = 0;
    for (size_t i = 0; i < gs->n; i++) {
        const char *sh = gs->g[i].shapes;
        has_shapes |= *sh && strcmp(sh, "[]") != 0;
        if (strlen(sh) + 4 > shapes_width) shapes_width = strlen(sh) + 4;
    }
    if (shapes_width > lay->shapes_max) shapes_width = lay->shapes_max;
    char *shapes = has_shapes ? sp__alloc(shapes_width + 1) : NULL;
    if (has_shapes && !shapes) {
        sp__free(name);
        return -1;
    }
    for (size_t i = 0; i < gs->n; i++) {
        const group *g = &gs->g[i];
        sum_self_cpu += g->self_cpu;
        sum_self_gpu += g->self_gpu;
        has_gpu |= g->gpu > 0 || g->self_gpu > 0;
        has_dev_mem |= g->self_dev_mem > 0;
        if (g->flops && (!least_flops || g->flops < least_flops)) least_flops = g->flops;
        sp__fmt_name(name, name_bytes, "", g->name, lay->cut_above, lay->keep);
        size_t len = u8len(name);
        if (len > name_width) name_width = len;
    }
    has_dev_mem &= lay->with_memory;
    name_width = name_width + 4 < lay->max_width ? name_width + 4 : lay->max_width;
    int with_memory = lay->with_memory, row_limit = lay->row_limit;
    /* torch's column order: CPU times, device times, memory, calls. */
    const char *cells[MAX_COLS];
    size_t ncols = 0;
    static const char *const cpu_head[] = {"Name", "Self CPU %", "Self CPU", "CPU total %",
                                           "CPU total", "CPU time avg"};
    static const char *const gpu_head[] = {"Self CUDA", "Self CUDA %", "CUDA total",
                                           "CUDA time avg"};
    static const char *const mem_head[] = {"CPU Mem", "Self CPU Mem", "CUDA Mem", "Self CUDA Mem"};
    for (size_t c = 0; c < 6; c++) cells[ncols++] = cpu_head[c];
    for (size_t c = 0; has_gpu && c < 4; c++) cells[ncols++] = gpu_head[c];
    for (size_t c = 0; with_memory && c < (has_dev_mem ? 4u : 2u); c++) cells[ncols++] = mem_head[c];
    cells[ncols++] = "# of Calls";
    size_t widths[MAX_COLS], shapes_col = MAX_COLS;
    if (has_shapes) {
        shapes_col = ncols;
        cells[ncols++] = "Input Shapes";
    }
    /* torch's auto_scale_flops: the unit of the smallest positive count. */
    static const char *const flops_head[] = {"Total FLOPs", "Total KFLOPs", "Total MFLOPs",
                                             "Total GFLOPs", "Total TFLOPs", "Total PFLOPs"};
    int flops_unit = 0;
    double flops_scale = 1.0;
    if (least_flops) {
        while (flops_unit < 5 && (double)least_flops / flops_scale >= 1000.0) {
            flops_unit++;
            flops_scale *= 1000.0;
        }
        cells[ncols++] = flops_head[flops_unit];
    }
    for (size_t c = 0; c < ncols; c++)
        widths[c] = c == 0 ? name_width : c == shapes_col ? shapes_width : COL_WIDTH;
    put_sep(out, widths, ncols);
    put_row(out, cells, ncols, widths);
    put_sep(out, widths, ncols);

    char text[MAX_COLS][64];
    for (size_t c = 0; c < ncols; c++) cells[c] = text[c];
    cells[0] = name;
    for (size_t i = 0; i < gs->n && (row_limit < 0 || i < (size_t)row_limit); i++) {
        const group *g = &gs->g[i];
        /* torch's cut (by default 52 code points and more: the first 52 +
         * "...") by the rule every table shares, which also makes control
         * characters visible. */
        sp__fmt_name(name, name_bytes, "", g->name, lay->cut_above, lay->keep);
        fmt_share(text[1], sizeof text[1], g->self_cpu, sum_self_cpu);
        fmt_time(text[2], sizeof text[2], (double)g->self_cpu, unit);
        fmt_share(text[3], sizeof text[3], g->cpu, sum_self_cpu);
        fmt_time(text[4], sizeof text[4], (double)g->cpu, unit);
        fmt_time(text[5], sizeof text[5], (double)g->cpu / (double)g->count, unit);
        size_t c = 6;
        if (has_gpu) {
            fmt_time(text[c++], sizeof text[0], (double)g->self_gpu, unit);
            fmt_share(text[c++], sizeof text[0], g->self_gpu, sum_self_gpu);
            fmt_time(text[c++], sizeof text[0], (double)g->gpu, unit);
            fmt_time(text[c++], sizeof text[0], (double)g->gpu / (double)g->count, unit);
        }
        if (with_memory) {
            fmt_memory(text[c++], sizeof text[0], g->cpu_mem);
            fmt_memory(text[c++], sizeof text[0], g->self_cpu_mem);
            if (has_dev_mem) {
                fmt_memory(text[c++], sizeof text[0], g->dev_mem);
                fmt_memory(text[c++], sizeof text[0], g->self_dev_mem);
            }
        }
        snprintf(text[c++], sizeof text[0], "%lld", (long long)g->count);
        if (has_shapes) {
            snprintf(shapes, shapes_width + 1, "%s", g->shapes);
            cells[c++] = shapes;
        }
        if (least_flops) {
            if (g->flops)
                snprintf(text[c], sizeof text[0], "%8.3f", (double)g->flops / flops_scale);
            else
                snprintf(text[c], sizeof text[0], "--");
        }
        put_row(out, cells, ncols, widths);
    }
    put_sep(out, widths, ncols);
    fmt_time(text[0], sizeof text[0], (double)sum_self_cpu, unit);
    sp__buf_printf(out, "Self CPU time total: %s\n", text[0]);
    if (has_gpu) {
        fmt_time(text[0], sizeof text[0], (double)sum_self_gpu, unit);
        sp__buf_printf(out, "Self CUDA time total: %s\n", text[0]);
    }
    sp__free(name);
    sp__free(shapes);
    return 0;
}

void sp__torch_table_opts_init(sp__torch_table_opts *o)
{
    o->sort_by = NULL;
    o->row_limit = 100;
    o->max_name_width = 55;
    o->time_unit = NULL;
    o->by_input_shapes = 0;
    o->max_shapes_width = 80;
}

int sp__torch_table(const sp__model *m, const char *sort_by, int row_limit, sp__buf *out)
{
    sp__torch_table_opts o;
    sp__torch_table_opts_init(&o);
    o.sort_by = sort_by;
    o.row_limit = row_limit;
    return sp__torch_table_with(m, &o, out);
}

int sp__torch_table_with(const sp__model *m, const sp__torch_table_opts *o, sp__buf *out)
{
    int k = key_of(o->sort_by);
    if (k < 0) return -2;
    if (!m || m->failed) return -1;
    /* torch: width min(longest + 4, W), names of W - 3 code points and more
     * cut to W - 3 + "..."; no W: neither. */
    layout lay = {.row_limit = o->row_limit,
                  .with_memory = m->result && m->result->meta.profile_memory,
                  .max_width = SIZE_MAX,
                  .cut_above = SIZE_MAX,
                  .keep = SIZE_MAX,
                  .shapes_max = o->max_shapes_width < 0 ? SIZE_MAX : (size_t)o->max_shapes_width,
                  .time_unit = o->time_unit};
    if (o->max_name_width > 0) {
        size_t w = o->max_name_width < 4 ? 4 : (size_t)o->max_name_width;
        lay.max_width = w;
        lay.cut_above = w - 4;
        lay.keep = w - 3;
    }
    groups gs;
    memset(&gs, 0, sizeof gs);
    int rc = collect_groups(m, &gs, o->by_input_shapes);
    if (rc == 0 && gs.n > 0) {
        for (size_t i = 0; i < gs.n; i++) gs.g[i].key = sort_key(&gs.g[i], k);
        qsort(gs.g, gs.n, sizeof *gs.g, by_key);
        if (render(&gs, &lay, out) != 0 || out->failed) rc = -1;
    }
    for (size_t i = 0; i < gs.n; i++) sp__free(gs.g[i].name);
    sp__free(gs.g);
    sp__free(gs.slots);
    return rc;
}
