/* test_tree.c: checks sp__tree_build (semantics.md §5.1 step 5) on event
 * arrays built by hand, in deliberately shuffled input order. Each event is
 * tagged with a letter in its name field; after the build the array is
 * rendered as four strings (sorted order, parent letters, depths, OVERLAP
 * flags) and compared with expectations derived by hand from the walk of
 * §5.1: pop every top whose end <= start, nest under a top that contains the
 * event, otherwise pop until one does and count an overlap. A last test
 * builds 100,000 random properly nested events and checks every link. */
#include "check.h"
#include "collect.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MARKS (SP_EVENT_FLAG_INSTANT | SP_EVENT_FLAG_COUNTER)

static sp__event ev(char id, int64_t start_ns, int64_t end_ns, uint8_t flags)
{
    sp__event e;
    memset(&e, 0, sizeof e);
    e.start_ns = start_ns;
    e.end_ns = end_ns;
    e.name = (uint32_t)(unsigned char)id;
    e.flags = flags;
    e.parent = 12345; /* must be overwritten */
    e.depth = 999;
    return e;
}

typedef struct tree_view {
    char order[64];   /* letters in sorted order */
    char parents[64]; /* parent's letter, '-' for none */
    char depths[64];  /* depth digit */
    char overlap[64]; /* 'O' if flagged OVERLAP, else '.' */
    uint64_t overlaps;
} tree_view;

/* Builds the tree and renders it. Also checks the invariants every result
 * must keep: a parent precedes its child and is never an instant or a
 * counter sample, and the mark flags are left alone. */
static tree_view build(sp__event *events, size_t n)
{
    tree_view v;
    memset(&v, 0, sizeof v);
    uint8_t marks_before[64] = {0};
    for (size_t i = 0; i < n && i < 64; i++) marks_before[events[i].name & 63] = events[i].flags & MARKS;
    v.overlaps = sp__tree_build(events, n);
    for (size_t i = 0; i < n && i < 63; i++) {
        const sp__event *e = &events[i];
        v.order[i] = (char)e->name;
        if (e->parent == -1) {
            v.parents[i] = '-';
        } else if (e->parent >= 0 && (size_t)e->parent < i) {
            v.parents[i] = (char)events[e->parent].name;
            CHECK_EQ(0, events[e->parent].flags & MARKS);
        } else {
            v.parents[i] = '?';
            CHECK_FAIL_("event %c has parent index %d at index %zu", (char)e->name,
                        (int)e->parent, i);
        }
        v.depths[i] = e->depth < 10 ? (char)('0' + e->depth) : '+';
        v.overlap[i] = (e->flags & SP_EVENT_FLAG_OVERLAP) ? 'O' : '.';
        CHECK_EQ(marks_before[e->name & 63], e->flags & MARKS);
    }
    return v;
}

#define CHECK_TREE(v, want_order, want_parents, want_depths, want_overlap, want_count) \
    do {                                                                       \
        CHECK_STR_EQ((want_order), (v).order);                                 \
        CHECK_STR_EQ((want_parents), (v).parents);                             \
        CHECK_STR_EQ((want_depths), (v).depths);                               \
        CHECK_STR_EQ((want_overlap), (v).overlap);                             \
        CHECK_EQ((want_count), (v).overlaps);                                  \
    } while (0)

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void test_tree_nesting_three_deep(void)
{
    sp__event e[] = {ev('C', 20, 30, 0), ev('A', 0, 100, 0), ev('B', 10, 90, 0)};
    tree_view v = build(e, COUNT(e));
    CHECK_TREE(v, "ABC", "-AB", "012", "...", 0);
    /* The events themselves are moved, not only relabelled. */
    CHECK_EQ(0, e[0].start_ns);
    CHECK_EQ(100, e[0].end_ns);
    CHECK_EQ(20, e[2].start_ns);
    CHECK_EQ(30, e[2].end_ns);
    CHECK_EQ(-1, e[0].parent);
    CHECK_EQ(0, e[1].parent);
    CHECK_EQ(1, e[2].parent);
}

static void test_tree_siblings(void)
{
    sp__event e[] = {ev('D', 50, 60, 0), ev('E', 200, 300, 0), ev('B', 10, 20, 0),
                     ev('A', 0, 100, 0), ev('C', 30, 40, 0), ev('F', 250, 260, 0)};
    tree_view v = build(e, COUNT(e));
    CHECK_TREE(v, "ABCDEF", "-AAA-E", "011101", "......", 0);
}

/* Equal starts: the longer range sorts first and is the parent. Equal ends
 * with different starts nest the other way round. */
static void test_tree_equal_start_longer_is_parent(void)
{
    sp__event e[] = {ev('B', 0, 50, 0), ev('C', 0, 20, 0), ev('A', 0, 100, 0)};
    tree_view v = build(e, COUNT(e));
    CHECK_TREE(v, "ABC", "-AB", "012", "...", 0);

    sp__event f[] = {ev('B', 50, 100, 0), ev('C', 80, 100, 0), ev('A', 0, 100, 0)};
    v = build(f, COUNT(f));
    CHECK_TREE(v, "ABC", "-AB", "012", "...", 0);
}

/* Identical intervals: tree.c keeps the event earlier in the input first,
 * because the collector gives events in begin order and an outer range
 * begins before the ranges inside it, so the earlier one becomes the parent. */
static void test_tree_identical_intervals_earlier_input_is_parent(void)
{
    sp__event e[] = {ev('A', 0, 10, 0), ev('B', 0, 10, 0)};
    tree_view v = build(e, COUNT(e));
    CHECK_TREE(v, "AB", "-A", "01", "..", 0);

    sp__event f[] = {ev('A', 5, 10, 0), ev('B', 5, 10, 0), ev('C', 5, 10, 0), ev('P', 0, 20, 0)};
    v = build(f, COUNT(f));
    CHECK_TREE(v, "PABC", "-PAB", "0123", "....", 0);

    /* The rule follows input position, not the name or any other field. */
    sp__event g[] = {ev('Z', 3, 7, 0), ev('Y', 3, 7, 0), ev('X', 3, 7, 0)};
    v = build(g, COUNT(g));
    CHECK_TREE(v, "ZYX", "-ZY", "012", "...", 0);
}

/* A zero-length range nests where it starts, but an event starting exactly
 * at a parent's end is not its child (the parent is popped first). */
static void test_tree_zero_length_ranges(void)
{
    sp__event e[] = {ev('G', 30, 30, 0), ev('C', 5, 5, 0),   ev('E', 20, 30, 0),
                     ev('A', 0, 10, 0),  ev('D', 10, 10, 0), ev('F', 22, 30, 0),
                     ev('B', 0, 0, 0)};
    tree_view v = build(e, COUNT(e));
    CHECK_TREE(v, "ABCDEFG", "-AA--E-", "0110010", ".......", 0);

    /* A zero-length range contains nothing, not even an identical one. */
    sp__event f[] = {ev('B', 5, 5, 0), ev('P', 0, 10, 0), ev('C', 5, 5, 0), ev('D', 5, 6, 0)};
    v = build(f, COUNT(f));
    CHECK_TREE(v, "PDBC", "-PDD", "0122", "....", 0);
}

static void test_tree_touching_siblings(void)
{
    sp__event e[] = {ev('C', 10, 20, 0), ev('E', 30, 40, 0), ev('A', 0, 30, 0),
                     ev('D', 20, 30, 0), ev('B', 0, 10, 0),  ev('F', 40, 40, 0)};
    tree_view v = build(e, COUNT(e));
    CHECK_TREE(v, "ABCDEF", "-AAA--", "011100", "......", 0);
}

/* A [0,10], B [5,15], C [6,8]: B partially overlaps A, is attached to the
 * root, flagged and counted; C nests in B. */
static void test_tree_partial_overlap(void)
{
    sp__event e[] = {ev('C', 6, 8, 0), ev('B', 5, 15, 0), ev('A', 0, 10, 0)};
    tree_view v = build(e, COUNT(e));
    CHECK_TREE(v, "ABC", "--B", "001", ".O.", 1);
    CHECK_EQ(SP_EVENT_FLAG_OVERLAP, e[1].flags);
    CHECK_EQ(0, e[0].flags);
    CHECK_EQ(0, e[2].flags);
}

/* E [32,60] overlaps D, C and B, which must all be popped, and nests in A;
 * H [75,120] overlaps G and A and goes to the root. */
static void test_tree_partial_overlap_pops_several_levels(void)
{
    sp__event e[] = {ev('F', 55, 58, 0), ev('D', 30, 35, 0), ev('H', 75, 120, 0),
                     ev('A', 0, 100, 0), ev('G', 70, 80, 0), ev('B', 10, 50, 0),
                     ev('E', 32, 60, 0), ev('C', 20, 40, 0), ev('I', 110, 115, 0)};
    tree_view v = build(e, COUNT(e));
    CHECK_TREE(v, "ABCDEFGHI", "-ABCAEA-H", "012312101", "....O..O.", 2);
}

/* Instants and counter samples get a parent but are never pushed: nothing
 * nests in them, even a mark with a duration, and a mark is never flagged as
 * an overlap. At equal intervals ranges sort before marks. */
static void test_tree_marks_never_become_parents(void)
{
    sp__event e[] = {
        ev('J', 95, 150, SP_EVENT_FLAG_COUNTER), ev('F', 40, 40, SP_EVENT_FLAG_INSTANT),
        ev('C', 10, 30, 0),                      ev('K', 200, 210, 0),
        ev('H', 60, 90, SP_EVENT_FLAG_INSTANT),  ev('D', 10, 10, SP_EVENT_FLAG_INSTANT),
        ev('A', 0, 100, 0),                      ev('G', 50, 50, SP_EVENT_FLAG_COUNTER),
        ev('I', 70, 80, 0),                      ev('B', 0, 0, SP_EVENT_FLAG_INSTANT),
        ev('E', 40, 40, 0),                      ev('L', 205, 205, SP_EVENT_FLAG_COUNTER),
        ev('M', 205, 205, SP_EVENT_FLAG_COUNTER)};
    tree_view v = build(e, COUNT(e));
    CHECK_TREE(v, "ABCDEFGHIJKLM", "-AACAAAAAA-KK", "0112111111011", ".............", 0);

    /* Marks alone: all at the root, none a parent. */
    sp__event f[] = {ev('B', 5, 5, SP_EVENT_FLAG_INSTANT), ev('A', 5, 5, SP_EVENT_FLAG_INSTANT),
                     ev('C', 6, 6, SP_EVENT_FLAG_COUNTER)};
    v = build(f, COUNT(f));
    CHECK_TREE(v, "BAC", "---", "000", "...", 0);

    /* A range and a mark with the same interval: the range sorts first even
     * when it comes earlier in the input, so the mark can nest in it. */
    sp__event g[] = {ev('R', 5, 5, 0),  ev('I', 5, 5, SP_EVENT_FLAG_INSTANT),
                     ev('S', 20, 30, 0), ev('M', 20, 30, SP_EVENT_FLAG_COUNTER),
                     ev('P', 0, 40, 0)};
    v = build(g, COUNT(g));
    CHECK_TREE(v, "PRISM", "-PPPS", "01112", ".....", 0);
}

static void test_tree_empty(void)
{
    CHECK_EQ(0, sp__tree_build(NULL, 0));
    sp__event e = ev('A', 1, 2, 0);
    CHECK_EQ(0, sp__tree_build(&e, 0));
    CHECK_EQ(12345, e.parent); /* count 0: nothing touched */
    CHECK_EQ(999, e.depth);
    sp__event one = ev('A', 1, 2, 0);
    tree_view v = build(&one, 1);
    CHECK_TREE(v, "A", "-", "0", ".", 0);
}

/* If sorting cannot get memory for its index it sorts in place (tree.c), so
 * the tree is the same; nothing is lost or crashes. */
static void test_tree_failed_allocation_keeps_events(void)
{
    sp__event e[] = {ev('B', 10, 90, 0), ev('A', 0, 100, 0), ev('C', 20, 30, 0),
                     ev('D', 40, 50, 0)};
    sp__alloc_fail_at(1);
    tree_view v = build(e, COUNT(e));
    sp__alloc_fail_at(0);
    CHECK_TREE(v, "ABCD", "-ABB", "0122", "....", 0);

    sp__event f[] = {ev('C', 20, 30, 0), ev('A', 0, 100, 0), ev('B', 10, 90, 0)};
    sp__alloc_fail_at(2);
    v = build(f, COUNT(f));
    sp__alloc_fail_at(0);
    CHECK_TREE(v, "ABC", "-AB", "012", "...", 0);

    /* The third allocation is the walk's stack: order is still sorted. */
    sp__event g[] = {ev('C', 20, 30, 0), ev('A', 0, 100, 0), ev('B', 10, 90, 0)};
    sp__alloc_fail_at(3);
    v = build(g, COUNT(g));
    sp__alloc_fail_at(0);
    CHECK_STR_EQ("ABC", v.order);
}

/* ---- 100,000 random properly nested events ---- */

#define RANDOM_EVENTS 100000

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

typedef struct gen {
    sp__event *events;
    int32_t *want_parent; /* by id (the name field) */
    size_t n, cap;
    uint32_t max_depth;
} gen;

static void add_event(gen *g, int64_t start, int64_t end, int32_t parent, uint32_t depth)
{
    uint32_t id = (uint32_t)g->n;
    sp__event e;
    memset(&e, 0, sizeof e);
    e.start_ns = start;
    e.end_ns = end;
    e.name = id;
    e.type = (uint8_t)(rnd() % SP_EVENT_TYPE_COUNT);
    e.parent = -7;
    e.depth = 77;
    g->events[g->n++] = e;
    g->want_parent[id] = parent;
    if (depth > g->max_depth) g->max_depth = depth;
}

/* Fills the range `id` = [lo, hi] with 0..3 children in equal slots. A child
 * may start at its slot's start and end at its slot's end, so children can
 * touch each other and share their parent's start or end, but a child is
 * never identical to its parent and never has zero length, so the expected
 * parent is unique whatever the input order. */
static void gen_children(gen *g, int32_t id, int64_t lo, int64_t hi, uint32_t depth)
{
    int64_t len = hi - lo;
    unsigned k = (unsigned)(rnd() % 4);
    if (k == 0 || len < 8 || depth > 60) return;
    int64_t w = len / k;
    for (unsigned j = 0; j < k && g->n < g->cap; j++) {
        int64_t slot_lo = lo + (int64_t)j * w;
        int64_t slot_hi = j + 1 == k ? hi : slot_lo + w;
        int64_t q = w / 4;
        int64_t s = slot_lo + (int64_t)(rnd() % (uint64_t)(q + 1));
        int64_t e = slot_hi - (int64_t)(rnd() % (uint64_t)(q + 1));
        if (k == 1 && s == lo && e == hi) e--; /* never identical */
        int32_t child = (int32_t)g->n;
        add_event(g, s, e, id, depth + 1);
        gen_children(g, child, s, e, depth + 1);
    }
}

static void test_tree_random_nested_100k(void)
{
    gen g = {0};
    g.cap = RANDOM_EVENTS;
    g.events = malloc(sizeof *g.events * g.cap);
    g.want_parent = malloc(sizeof *g.want_parent * g.cap);
    unsigned char *seen = calloc(g.cap, 1);
    CHECK(g.events && g.want_parent && seen);
    if (!g.events || !g.want_parent || !seen) goto done;

    int64_t t = 1700000000000000000; /* realistic CLOCK_REALTIME ns */
    while (g.n < g.cap) {
        int64_t len = 8 + (int64_t)(rnd() % (1u << 16));
        int32_t id = (int32_t)g.n;
        add_event(&g, t, t + len, -1, 0);
        gen_children(&g, id, t, t + len, 0);
        t += len + (int64_t)(rnd() % 3); /* 0: the next one touches */
    }
    CHECK_EQ(RANDOM_EVENTS, g.n);
    CHECK(g.max_depth >= 5);

    /* Shuffle (Fisher-Yates). */
    for (size_t i = g.n - 1; i > 0; i--) {
        size_t j = (size_t)(rnd() % (i + 1));
        sp__event tmp = g.events[i];
        g.events[i] = g.events[j];
        g.events[j] = tmp;
    }

    uint64_t overlaps = sp__tree_build(g.events, g.n);
    CHECK_EQ(0, overlaps);

    size_t bad_order = 0, bad_parent = 0, bad_range = 0, bad_depth = 0, bad_flags = 0,
           bad_ids = 0;
    for (size_t i = 0; i < g.n; i++) {
        const sp__event *e = &g.events[i];
        if (e->name >= g.cap || seen[e->name]++) bad_ids++;
        if (i > 0) {
            const sp__event *p = &g.events[i - 1];
            if (p->start_ns > e->start_ns ||
                (p->start_ns == e->start_ns && p->end_ns < e->end_ns))
                bad_order++;
        }
        if (e->flags != 0) bad_flags++;
        if (e->parent == -1) {
            if (e->depth != 0) bad_depth++;
            if (e->name < g.cap && g.want_parent[e->name] != -1) bad_parent++;
            continue;
        }
        if (e->parent < 0 || (size_t)e->parent >= i) {
            bad_parent++;
            continue;
        }
        const sp__event *p = &g.events[e->parent];
        if (e->name < g.cap && (int64_t)p->name != g.want_parent[e->name]) bad_parent++;
        if (e->start_ns < p->start_ns || e->end_ns > p->end_ns || e->start_ns >= p->end_ns)
            bad_range++;
        if (e->depth != p->depth + 1) bad_depth++;
    }
    CHECK_EQ(0, bad_ids);
    CHECK_EQ(0, bad_order);
    CHECK_EQ(0, bad_parent);
    CHECK_EQ(0, bad_range);
    CHECK_EQ(0, bad_depth);
    CHECK_EQ(0, bad_flags);
done:
    free(g.events);
    free(g.want_parent);
    free(seen);
}

int main(void)
{
    RUN_TEST(test_tree_nesting_three_deep);
    RUN_TEST(test_tree_siblings);
    RUN_TEST(test_tree_equal_start_longer_is_parent);
    RUN_TEST(test_tree_identical_intervals_earlier_input_is_parent);
    RUN_TEST(test_tree_zero_length_ranges);
    RUN_TEST(test_tree_touching_siblings);
    RUN_TEST(test_tree_partial_overlap);
    RUN_TEST(test_tree_partial_overlap_pops_several_levels);
    RUN_TEST(test_tree_marks_never_become_parents);
    RUN_TEST(test_tree_empty);
    RUN_TEST(test_tree_failed_allocation_keeps_events);
    RUN_TEST(test_tree_random_nested_100k);
    return TEST_SUMMARY();
}
