/* table_memory.c: the Memory Summary of semantics.md §6.9, called by the
 * summary driver. Every non-root host node except OperatorInner collects
 * memory records: an Operator takes those of its direct children (in start
 * order) and then its own under the op's name; any other node takes its own
 * under its name. Allocate/Free feed the "Allocated" item of (place, name),
 * ReservedAllocate/ReservedFree its "Reserved" item; per place the peaks are
 * the max of peak_allocated / peak_reserved over the records visited.
 *
 * Decisions:
 * - Nodes are visited in §5.4 first-seen order (sp__model_visit, threads in
 *   ascending tid), each node's records in time order; places print in the
 *   order their first record is visited (Paddle's dict order). Items with the
 *   same increase keep that first-seen order (Python's stable sort).
 * - Records attributed to the thread root (host < 0, -2 "unset" included),
 *   or to an event without a node, are not visited: they make no item and do
 *   not count towards the peaks (Paddle skips the root node entirely). So do
 *   records of an OperatorInner that is not a direct child of an Operator,
 *   and records of unknown type (> 3).
 * - One sp__table holds every place's table in sequence (title, the two
 *   peak lines, separator, header, separator, rows, two blanks); a place
 *   prints when it has any item. Columns are fixed (Name 50, Type 12, the
 *   rest 15): longer numbers overflow, as Paddle's format strings do, but
 *   names are made visible and cut to the 50 (place names in the title to
 *   90) by sp__fmt_name, the rule of every table.
 * - *out is NULL when no record is visited at all; -1 only on OOM.
 * Items are found through an open-addressing hash on (place, name, kind);
 * each thread's records are bucketed by node once (counting sort). */
#include "summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mitem {
    uint32_t place; /* index in ctx.places */
    uint32_t name;  /* id in the result's names */
    int kind;       /* 0 Allocated, 1 Reserved */
    int64_t alloc_count, free_count, alloc_size, free_size;
    size_t seen; /* first-seen order */
} mitem;

typedef struct mplace {
    uint32_t name;
    uint64_t peak_allocated, peak_reserved;
} mplace;

typedef struct ctx {
    const sp__model *m;
    mplace *places;
    size_t nplaces, cap_places;
    mitem *items;
    size_t nitems, cap_items;
    size_t *hash; /* item index + 1; 0 = empty */
    size_t hash_cap;
    /* Records of the current thread bucketed by node: first[node] ..
     * first[node + 1] index into order[]. */
    const sp__thread_model *cur;
    size_t *first;
    uint32_t *order;
    int failed;
} ctx;

/* Buckets the records of thread t by node, keeping time order. */
static int bucket_thread(ctx *c, const sp__thread_model *t)
{
    const sp__thread *th = t->thread;
    sp__free(c->first);
    sp__free(c->order);
    c->first = NULL;
    c->order = NULL;
    c->cur = t;
    c->first = sp__alloc((t->count + 1) * sizeof *c->first);
    if (!c->first) return -1;
    memset(c->first, 0, (t->count + 1) * sizeof *c->first);
    if (!th || th->mem_count == 0) return 0;
    c->order = sp__alloc(th->mem_count * sizeof *c->order);
    if (!c->order) return -1;
    int32_t *node = sp__alloc(th->mem_count * sizeof *node);
    if (!node) return -1;
    for (size_t k = 0; k < th->mem_count; k++) {
        int32_t h = th->mems[k].host;
        node[k] = h >= 0 ? sp__model_node_of(t, h) : -1;
        if (node[k] >= 0) c->first[node[k] + 1]++;
    }
    for (size_t i = 0; i < t->count; i++) c->first[i + 1] += c->first[i];
    /* Fill using first[] as cursors, then shift back. */
    for (size_t k = 0; k < th->mem_count; k++)
        if (node[k] >= 0) c->order[c->first[node[k]]++] = (uint32_t)k;
    for (size_t i = t->count; i > 0; i--) c->first[i] = c->first[i - 1];
    c->first[0] = 0;
    sp__free(node);
    return 0;
}

static mplace *find_place(ctx *c, uint32_t name, uint32_t *index)
{
    for (size_t i = 0; i < c->nplaces; i++)
        if (c->places[i].name == name) {
            *index = (uint32_t)i;
            return &c->places[i];
        }
    if (c->nplaces == c->cap_places) {
        size_t ncap = c->cap_places ? c->cap_places * 2 : 4;
        mplace *np = sp__realloc(c->places, ncap * sizeof *np);
        if (!np) return NULL;
        c->places = np;
        c->cap_places = ncap;
    }
    c->places[c->nplaces] = (mplace){name, 0, 0};
    *index = (uint32_t)c->nplaces;
    return &c->places[c->nplaces++];
}

static size_t hash_of(uint32_t place, uint32_t name, int kind)
{
    uint64_t h = ((uint64_t)name << 1 | (uint64_t)kind) * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)place * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 29));
}

static int grow_hash(ctx *c)
{
    size_t ncap = c->hash_cap ? c->hash_cap * 2 : 64;
    size_t *nh = sp__alloc(ncap * sizeof *nh);
    if (!nh) return -1;
    memset(nh, 0, ncap * sizeof *nh);
    for (size_t i = 0; i < c->nitems; i++) {
        const mitem *it = &c->items[i];
        size_t s = hash_of(it->place, it->name, it->kind) & (ncap - 1);
        while (nh[s]) s = (s + 1) & (ncap - 1);
        nh[s] = i + 1;
    }
    sp__free(c->hash);
    c->hash = nh;
    c->hash_cap = ncap;
    return 0;
}

static mitem *find_item(ctx *c, uint32_t place, uint32_t name, int kind)
{
    if ((c->nitems + 1) * 2 > c->hash_cap && grow_hash(c) != 0) return NULL;
    size_t s = hash_of(place, name, kind) & (c->hash_cap - 1);
    while (c->hash[s]) {
        mitem *it = &c->items[c->hash[s] - 1];
        if (it->place == place && it->name == name && it->kind == kind) return it;
        s = (s + 1) & (c->hash_cap - 1);
    }
    if (c->nitems == c->cap_items) {
        size_t ncap = c->cap_items ? c->cap_items * 2 : 16;
        mitem *ni = sp__realloc(c->items, ncap * sizeof *ni);
        if (!ni) return NULL;
        c->items = ni;
        c->cap_items = ncap;
    }
    mitem *it = &c->items[c->nitems];
    memset(it, 0, sizeof *it);
    it->place = place;
    it->name = name;
    it->kind = kind;
    it->seen = c->nitems;
    c->hash[s] = ++c->nitems;
    return it;
}

/* Adds the records of node `node` of the current thread under `name`. */
static void add_node_records(ctx *c, size_t node, uint32_t name)
{
    const sp__thread *th = c->cur->thread;
    for (size_t j = c->first[node]; j < c->first[node + 1] && !c->failed; j++) {
        const sp__mem_event *me = &th->mems[c->order[j]];
        if (me->type > 3) continue;
        uint32_t pi;
        mplace *p = find_place(c, me->place, &pi);
        if (!p) { c->failed = 1; return; }
        if (me->peak_allocated > p->peak_allocated) p->peak_allocated = me->peak_allocated;
        if (me->peak_reserved > p->peak_reserved) p->peak_reserved = me->peak_reserved;
        mitem *it = find_item(c, pi, name, me->type >= 2);
        if (!it) { c->failed = 1; return; }
        if (me->type == 0 || me->type == 2) {
            it->alloc_count++;
            it->alloc_size += me->bytes;
        } else {
            it->free_count++;
            it->free_size -= me->bytes;
        }
    }
}

static void visit(void *vc, const sp__thread_model *t, const sp__node *n)
{
    ctx *c = vc;
    if (c->failed || !t->thread || t->thread->mem_count == 0) return;
    if (c->cur != t && bucket_thread(c, t) != 0) {
        c->failed = 1;
        return;
    }
    const sp__event *e = &t->thread->events[n->event];
    if (e->type == SP_EVENT_OPERATOR_INNER) return;
    if (e->type == SP_EVENT_OPERATOR)
        for (int32_t ch = n->first_child; ch >= 0 && !c->failed; ch = t->nodes[ch].next_sibling)
            add_node_records(c, (size_t)ch, e->name);
    if (!c->failed) add_node_records(c, (size_t)(n - t->nodes), e->name);
}

static int cmp_item(const void *a, const void *b)
{
    const mitem *x = *(const mitem *const *)a, *y = *(const mitem *const *)b;
    int64_t ix = x->alloc_size - x->free_size, iy = y->alloc_size - y->free_size;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    if (ix != iy) return ix > iy ? -1 : 1;
    return x->seen < y->seen ? -1 : (x->seen > y->seen);
}

static sp__table *render(const ctx *c)
{
    static const char *const head[] = {"Name",      "Type",      "Allocation Count",
                                       "Free Count", "Allocation Size", "Free Size",
                                       "Increased Size"};
    const mitem **rows = sp__alloc(c->nitems * sizeof *rows);
    if (!rows) return NULL;
    sp__table *t = sp__table_new(7);
    if (!t) {
        sp__free(rows);
        return NULL;
    }
    sp__table_column(t, 0, 50, 0);
    sp__table_column(t, 1, 12, 0);
    for (size_t k = 2; k < 7; k++) sp__table_column(t, k, 15, 0);
    for (size_t p = 0; p < c->nplaces; p++) {
        size_t n = 0;
        for (size_t i = 0; i < c->nitems; i++)
            if (c->items[i].place == p) rows[n++] = &c->items[i];
        if (n == 0) continue;
        qsort(rows, n, sizeof *rows, cmp_item);
        char line[SP__NAME_CELL_BYTES + 32], name[SP__NAME_CELL_BYTES];
        sp__fmt_name(name, sizeof name, "", sp__result_name(c->m->result, c->places[p].name), 90, 87);
        snprintf(line, sizeof line, "Memory Summary - %s", name);
        sp__table_title(t, line);
        snprintf(line, sizeof line, "Peak Allocated Memory: %llu",
                 (unsigned long long)c->places[p].peak_allocated);
        sp__table_text(t, line);
        snprintf(line, sizeof line, "Peak Reserved Memory: %llu",
                 (unsigned long long)c->places[p].peak_reserved);
        sp__table_text(t, line);
        sp__table_separator(t);
        sp__table_header(t, head);
        sp__table_separator(t);
        for (size_t i = 0; i < n; i++) {
            const mitem *it = rows[i];
            char v[5][24];
            snprintf(v[0], sizeof v[0], "%lld", (long long)it->alloc_count);
            snprintf(v[1], sizeof v[1], "%lld", (long long)it->free_count);
            snprintf(v[2], sizeof v[2], "%lld", (long long)it->alloc_size);
            snprintf(v[3], sizeof v[3], "%lld", (long long)it->free_size);
            snprintf(v[4], sizeof v[4], "%lld", (long long)(it->alloc_size - it->free_size));
            sp__fmt_name(name, sizeof name, "", sp__result_name(c->m->result, it->name), 50, 47);
            const char *cells[] = {name,
                                   it->kind ? "Reserved" : "Allocated", v[0], v[1], v[2], v[3],
                                   v[4]};
            sp__table_row(t, cells);
        }
        sp__table_blank(t);
        sp__table_blank(t);
    }
    sp__free(rows);
    return t;
}

int sp__summary_memory(const sp__model *m, const sp__summary_opts *o, sp__table **out)
{
    ctx c = {.m = m};
    (void)o;
    *out = NULL;
    if (m->failed || !m->result) return 0;
    sp__model_visit(m, visit, &c);
    int rc = c.failed ? -1 : 0;
    if (!c.failed && c.nitems > 0) {
        *out = render(&c);
        if (!*out || sp__table_failed(*out)) {
            sp__table_free(*out);
            *out = NULL;
            rc = -1;
        }
    }
    sp__free(c.first);
    sp__free(c.order);
    sp__free(c.hash);
    sp__free(c.items);
    sp__free(c.places);
    return rc;
}
