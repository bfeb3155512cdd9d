/* test_intervals.c: checks the span toolkit of intervals.c against the
 * geometry written in intervals.h: hand-made cases with the expected spans
 * written out, then 10,000 random small lists compared with a brute-force
 * model that marks every unit cell [t, t + 1] and every integer point of a
 * small range, plus the length identities, idempotence, allocation failure
 * (run under the sanitizer build for leaks) and saturation on huge spans. */
#include "check.h"
#include "sys.h"

#include "../../src/analyze/intervals.h"

#include <stdint.h>
#include <string.h>

#define RANGE 200 /* random coordinates lie in 0..RANGE */

/* Builds a list from n (start, end) pairs. */
static void make(sp__spans *s, const int64_t *pairs, size_t n)
{
    sp__spans_init(s);
    for (size_t i = 0; i < n; i++) sp__spans_add(s, pairs[2 * i], pairs[2 * i + 1]);
}

/* 1 if s holds exactly the n spans of `pairs`, in order; prints s otherwise. */
static int equals(const sp__spans *s, const int64_t *pairs, size_t n)
{
    int same = s->n == n;
    for (size_t i = 0; same && i < n; i++)
        same = s->v[i].start == pairs[2 * i] && s->v[i].end == pairs[2 * i + 1];
    if (!same) {
        fprintf(stderr, "  got %zu spans:", s->n);
        for (size_t i = 0; i < s->n; i++)
            fprintf(stderr, " [%" PRId64 ",%" PRId64 "]", s->v[i].start, s->v[i].end);
        fprintf(stderr, "\n");
    }
    return same;
}

static int same_spans(const sp__spans *x, const sp__spans *y)
{
    if (x->n != y->n) return 0;
    for (size_t i = 0; i < x->n; i++)
        if (x->v[i].start != y->v[i].start || x->v[i].end != y->v[i].end) return 0;
    return 1;
}

/* Merged means sorted and strictly apart, each span well formed. */
static int is_merged(const sp__spans *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].end < s->v[i].start || (i && s->v[i].start <= s->v[i - 1].end)) return 0;
    return 1;
}

#define N(pairs) (sizeof(pairs) / sizeof(pairs)[0] / 2)

static void test_intervals_merge_touching(void)
{
    static const int64_t in[] = {0, 5, 5, 10, 10, 10, 20, 30, 30, 31};
    static const int64_t want[] = {0, 10, 20, 31};
    sp__spans s;
    make(&s, in, N(in));
    sp__spans_merge(&s);
    CHECK(equals(&s, want, N(want)));
    sp__spans_fini(&s);
}

static void test_intervals_merge_contained(void)
{
    static const int64_t in[] = {0, 10, 2, 3, 4, 10, 0, 1, 9, 9};
    static const int64_t want[] = {0, 10};
    sp__spans s;
    make(&s, in, N(in));
    sp__spans_merge(&s);
    CHECK(equals(&s, want, N(want)));
    sp__spans_fini(&s);
}

static void test_intervals_merge_disjoint(void)
{
    static const int64_t in[] = {20, 30, 0, 5, 6, 7};
    static const int64_t want[] = {0, 5, 6, 7, 20, 30};
    sp__spans s;
    make(&s, in, N(in));
    sp__spans_merge(&s);
    CHECK(equals(&s, want, N(want)));
    sp__spans_fini(&s);
}

static void test_intervals_merge_zero_length(void)
{
    /* [5,5] alone stays; [3,3] twice is one point; [10,10] and [4,4] touch
     * their neighbours and vanish; [40,40] at the start of [40,50] too. */
    static const int64_t in[] = {5, 5, 3, 3, 3, 3, 10, 10, 10, 20, 0, 4, 4, 4, 40, 40, 40, 50};
    static const int64_t want[] = {0, 4, 5, 5, 10, 20, 40, 50};
    sp__spans s;
    make(&s, in, N(in));
    sp__spans_merge(&s);
    CHECK(equals(&s, want, N(want)));
    sp__spans_fini(&s);
}

static void test_intervals_merge_unsorted(void)
{
    static const int64_t in[] = {50, 60, 10, 20, 15, 55, 0, 1, -7, -3};
    static const int64_t want[] = {-7, -3, 0, 1, 10, 60};
    sp__spans s;
    make(&s, in, N(in));
    sp__spans_merge(&s);
    CHECK(equals(&s, want, N(want)));
    sp__spans_fini(&s);
}

static void test_intervals_merge_empty(void)
{
    sp__spans s, out;
    sp__spans_init(&s);
    sp__spans_init(&out);
    sp__spans_merge(&s);
    CHECK_EQ(0, s.n);
    CHECK_EQ(0, sp__spans_length(&s));
    CHECK_EQ(0, sp__spans_distinct(&s));
    CHECK_OK(sp__spans_union(&out, &s, &s));
    CHECK_EQ(0, out.n);
    CHECK_OK(sp__spans_intersect(&out, &s, &s));
    CHECK_EQ(0, out.n);
    CHECK_OK(sp__spans_subtract(&out, &s, &s));
    CHECK_EQ(0, out.n);
    sp__spans_fini(&out);
    sp__spans_fini(&s);
}

static void test_intervals_add_clamps_reversed_span(void)
{
    sp__spans s;
    sp__spans_init(&s);
    sp__spans_add(&s, 10, 5);
    CHECK_EQ(1, s.n);
    CHECK_EQ(10, s.v[0].start);
    CHECK_EQ(10, s.v[0].end);
    sp__spans_fini(&s);
}

static void test_intervals_union_hand_cases(void)
{
    static const int64_t a_in[] = {20, 30, 0, 10, 60, 60};
    static const int64_t b_in[] = {5, 25, 40, 50, 30, 30, 70, 70};
    static const int64_t want[] = {0, 30, 40, 50, 60, 60, 70, 70};
    sp__spans a, b, out;
    make(&a, a_in, N(a_in));
    make(&b, b_in, N(b_in));
    sp__spans_init(&out);
    CHECK_OK(sp__spans_union(&out, &a, &b));
    CHECK(equals(&out, want, N(want)));
    CHECK_OK(sp__spans_union(&a, &a, &b)); /* out may be an input */
    CHECK(equals(&a, want, N(want)));
    sp__spans_fini(&a);
    sp__spans_fini(&b);
    sp__spans_fini(&out);
}

static void test_intervals_intersect_hand_cases(void)
{
    /* Touching at 30 and at 50, and the points, give no piece. */
    static const int64_t a_in[] = {0, 10, 20, 30, 50, 60, 70, 70, 80, 90};
    static const int64_t b_in[] = {8, 9, 5, 25, 30, 50, 70, 71, 85, 85};
    static const int64_t want[] = {5, 10, 20, 25};
    sp__spans a, b, out;
    make(&a, a_in, N(a_in));
    make(&b, b_in, N(b_in));
    sp__spans_init(&out);
    CHECK_OK(sp__spans_intersect(&out, &a, &b));
    CHECK(equals(&out, want, N(want)));
    CHECK_OK(sp__spans_intersect(&out, &b, &a)); /* symmetric */
    CHECK(equals(&out, want, N(want)));
    CHECK_OK(sp__spans_intersect(&b, &a, &b));
    CHECK(equals(&b, want, N(want)));
    sp__spans_fini(&a);
    sp__spans_fini(&b);
    sp__spans_fini(&out);
}

static void test_intervals_subtract_hand_cases(void)
{
    /* b merges to [3,6] [8,22] [29,40] [45,45]. The point [40,40] of a lies
     * in [29,40] and goes; [50,50] stays; the point [45,45] of b and the
     * touch at [60,60]/[60,70] cut nothing. */
    static const int64_t a_in[] = {20, 30, 0, 10, 40, 40, 50, 50, 60, 70};
    static const int64_t b_in[] = {5, 6, 3, 5, 8, 22, 29, 40, 45, 45, 55, 60, 65, 65};
    static const int64_t want[] = {0, 3, 6, 8, 22, 29, 50, 50, 60, 70};
    static const int64_t b_minus_a[] = {10, 20, 30, 40, 45, 45, 55, 60};
    sp__spans a, b, out;
    make(&a, a_in, N(a_in));
    make(&b, b_in, N(b_in));
    sp__spans_init(&out);
    CHECK_OK(sp__spans_subtract(&out, &a, &b));
    CHECK(equals(&out, want, N(want)));
    CHECK_OK(sp__spans_subtract(&out, &b, &a));
    CHECK(equals(&out, b_minus_a, N(b_minus_a)));
    CHECK_OK(sp__spans_subtract(&a, &a, &b));
    CHECK(equals(&a, want, N(want)));
    sp__spans_fini(&a);
    sp__spans_fini(&b);
    sp__spans_fini(&out);
}

static void test_intervals_subtract_span_covering_several(void)
{
    /* One span of b cuts the end of one span of a and the start of the next. */
    static const int64_t a_in[] = {0, 10, 20, 30, 40, 50};
    static const int64_t b_in[] = {5, 25, 35, 36};
    static const int64_t want[] = {0, 5, 25, 30, 40, 50};
    sp__spans a, b, out;
    make(&a, a_in, N(a_in));
    make(&b, b_in, N(b_in));
    sp__spans_init(&out);
    CHECK_OK(sp__spans_subtract(&out, &a, &b));
    CHECK(equals(&out, want, N(want)));
    sp__spans_fini(&a);
    sp__spans_fini(&b);
    sp__spans_fini(&out);
}

/* ---- brute-force model over 0..RANGE ---- */

/* cell[t]: [t, t + 1] is covered; pt[p]: point p is covered (closed sets). */
typedef struct model {
    unsigned char cell[RANGE], pt[RANGE + 1];
} model;

static void model_of(model *m, const sp__spans *s)
{
    memset(m, 0, sizeof *m);
    for (size_t i = 0; i < s->n; i++) {
        for (int64_t t = s->v[i].start; t < s->v[i].end; t++) m->cell[t] = 1;
        for (int64_t p = s->v[i].start; p <= s->v[i].end; p++) m->pt[p] = 1;
    }
}

static int lone_point(const model *m, int p)
{
    return m->pt[p] && !(p > 0 && m->cell[p - 1]) && !(p < RANGE && m->cell[p]);
}

/* The connected pieces of a model: runs of cells and lone points. */
static void pieces_of(sp__spans *out, const model *m)
{
    out->n = 0;
    for (int p = 0; p <= RANGE; p++) {
        if (p < RANGE && m->cell[p]) {
            int q = p;
            while (q < RANGE && m->cell[q]) q++;
            sp__spans_add(out, p, q);
            p = q;
        } else if (lone_point(m, p)) {
            sp__spans_add(out, p, p);
        }
    }
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(uint64_t bound)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state % bound;
}

static void random_list(sp__spans *s)
{
    s->n = 0;
    size_t n = rnd(8);
    for (size_t i = 0; i < n; i++) {
        int64_t start = (int64_t)rnd(RANGE + 1);
        int64_t len = rnd(4) == 0 ? 0 : 1 + (int64_t)rnd(40);
        sp__spans_add(s, start, start + len > RANGE ? RANGE : start + len);
    }
}

static size_t brute_distinct(const sp__spans *s)
{
    size_t count = 0;
    for (size_t i = 0; i < s->n; i++) {
        size_t j = 0;
        while (j < i && (s->v[j].start != s->v[i].start || s->v[j].end != s->v[i].end)) j++;
        count += j == i;
    }
    return count;
}

static void test_intervals_random_against_brute_force(void)
{
    sp__spans a, b, ma, mb, out, want;
    model xa, xb, x;
    sp__spans *lists[] = {&a, &b, &ma, &mb, &out, &want};
    for (size_t i = 0; i < 6; i++) sp__spans_init(lists[i]);
    for (int iter = 0; iter < 10000; iter++) {
        int bad = 0;
        random_list(&a);
        random_list(&b);
        model_of(&xa, &a);
        model_of(&xb, &b);
        CHECK_EQ(brute_distinct(&a), sp__spans_distinct(&a));

        sp__spans_union(&ma, &a, &a); /* merged copies */
        sp__spans_union(&mb, &b, &b);
        sp__spans_merge(&a);
        bad |= !same_spans(&a, &ma);
        sp__spans_merge(&a); /* idempotent */
        bad |= !same_spans(&a, &ma);
        pieces_of(&want, &xa);
        bad |= !same_spans(&ma, &want);

        for (int t = 0; t <= RANGE; t++) {
            if (t < RANGE) x.cell[t] = xa.cell[t] | xb.cell[t];
            x.pt[t] = xa.pt[t] | xb.pt[t];
        }
        CHECK_OK(sp__spans_union(&out, &a, &b));
        pieces_of(&want, &x);
        bad |= !same_spans(&out, &want) || !is_merged(&out);
        int64_t len_union = sp__spans_length(&out);

        for (int t = 0; t <= RANGE; t++) {
            if (t < RANGE) x.cell[t] = xa.cell[t] & xb.cell[t];
            x.pt[t] = (t > 0 && x.cell[t - 1]) || (t < RANGE && x.cell[t]);
        }
        CHECK_OK(sp__spans_intersect(&out, &a, &b));
        pieces_of(&want, &x);
        bad |= !same_spans(&out, &want) || !is_merged(&out);
        int64_t len_inter = sp__spans_length(&out);

        for (int t = 0; t < RANGE; t++) x.cell[t] = xa.cell[t] & !xb.cell[t];
        for (int t = 0; t <= RANGE; t++)
            x.pt[t] = (t > 0 && x.cell[t - 1]) || (t < RANGE && x.cell[t]) ||
                      (lone_point(&xa, t) && !xb.pt[t]);
        CHECK_OK(sp__spans_subtract(&out, &a, &b));
        pieces_of(&want, &x);
        bad |= !same_spans(&out, &want) || !is_merged(&out);
        int64_t len_sub = sp__spans_length(&out);

        int64_t len_a = sp__spans_length(&ma), len_b = sp__spans_length(&mb);
        CHECK_EQ(len_a + len_b - len_inter, len_union);
        CHECK_EQ(len_a - len_inter, len_sub);
        if (bad) {
            CHECK_FAIL_("random case %d differs from the brute-force model", iter);
            break;
        }
    }
    for (size_t i = 0; i < 6; i++) sp__spans_fini(lists[i]);
}

static void test_intervals_large_sort_with_duplicates(void)
{
    /* 200,000 spans over 100 starts and 10 lengths: heavy ties for the sort. */
    enum { n = 200000 };
    static unsigned char seen[100][10];
    sp__spans s, m;
    sp__spans_init(&s);
    sp__spans_init(&m);
    memset(seen, 0, sizeof seen);
    size_t distinct = 0;
    for (int i = 0; i < n; i++) {
        int start = (int)rnd(100), len = (int)rnd(10);
        distinct += !seen[start][len];
        seen[start][len] = 1;
        sp__spans_add(&s, start * 20, start * 20 + len);
    }
    CHECK_EQ(distinct, sp__spans_distinct(&s));
    CHECK_OK(sp__spans_union(&m, &s, &s));
    sp__spans_merge(&s);
    CHECK(same_spans(&s, &m));
    CHECK(is_merged(&s));
    /* Descending and all-equal inputs, the classic quicksort traps. */
    s.n = 0;
    for (int i = n; i > 0; i--) sp__spans_add(&s, i * 2, i * 2 + 1);
    sp__spans_merge(&s);
    CHECK_EQ(n, s.n);
    CHECK(is_merged(&s));
    s.n = 0;
    for (int i = 0; i < n; i++) sp__spans_add(&s, 7, 7 + (i % 13));
    CHECK_EQ(13, sp__spans_distinct(&s));
    sp__spans_merge(&s);
    CHECK_EQ(1, s.n);
    CHECK_EQ(19, s.v[0].end);
    sp__spans_fini(&s);
    sp__spans_fini(&m);
}

/* Lists made of a few sorted runs back to back (how the model unions its
 * threads) are merged run by run; from 17 runs on they are radix sorted. The
 * answer must not depend on the path: compare with the same spans added in
 * reverse order (one descending list, always radix sorted). */
static void test_intervals_few_sorted_runs(void)
{
    for (int runs = 1; runs <= 20; runs++) {
        sp__spans s, rev;
        sp__spans_init(&s);
        sp__spans_init(&rev);
        for (int r = 0; r < runs; r++) {
            int64_t t = (int64_t)rnd(50);
            for (int i = 0, len = 100 + (int)rnd(200); i < len; i++) {
                t += (int64_t)rnd(30);
                sp__spans_add(&s, t, t + (int64_t)rnd(40));
            }
        }
        for (size_t i = s.n; i-- > 0;) sp__spans_add(&rev, s.v[i].start, s.v[i].end);
        CHECK_EQ(sp__spans_distinct(&rev), sp__spans_distinct(&s));
        sp__spans_merge(&s);
        sp__spans_merge(&rev);
        CHECK(is_merged(&s));
        CHECK(same_spans(&s, &rev));
        sp__spans_fini(&s);
        sp__spans_fini(&rev);
    }
}

static void test_intervals_distinct(void)
{
    static const int64_t in[] = {5, 9, 1, 2, 5, 9, 5, 8, 1, 2, 3, 3, 3, 3};
    sp__spans s;
    make(&s, in, N(in));
    CHECK_EQ(4, sp__spans_distinct(&s));
    CHECK_EQ(7, s.n); /* the list itself is not changed */
    CHECK_EQ(5, s.v[0].start);
    sp__spans_merge(&s);
    CHECK_EQ(3, sp__spans_distinct(&s)); /* [1,2] [3,3] [5,9] */
    sp__spans_fini(&s);
}

typedef int (*set_op)(sp__spans *out, const sp__spans *a, const sp__spans *b);

/* Runs op once to learn how many allocations it makes and what it returns,
 * then once more per allocation with that one failing. Each run must either
 * return -1 with out empty and failed (its old contents freed: the sanitizer
 * build checks for leaks), or, when only a sort buffer failed and heap sort
 * took over, give the same result. Counts both kinds of run. */
static void fail_each_allocation(set_op op, const sp__spans *a, const sp__spans *b,
                                 int *failures, int *fallbacks)
{
    sp__spans want, out;
    sp__spans_init(&want);
    sp__alloc_fail_at(0);
    CHECK_OK(op(&want, a, b));
    uint64_t made = sp__alloc_fail_at(0);
    *failures = *fallbacks = 0;
    for (uint64_t k = 1; k <= made; k++) {
        sp__spans_init(&out);
        sp__spans_add(&out, 1, 2);
        sp__alloc_fail_at(k);
        int rc = op(&out, a, b);
        sp__alloc_fail_at(0);
        if (rc == 0) {
            ++*fallbacks;
            CHECK(!out.failed);
            CHECK(same_spans(&out, &want));
        } else {
            ++*failures;
            CHECK_EQ(-1, rc);
            CHECK(out.failed);
            CHECK_EQ(0, out.n);
            CHECK(out.v == NULL);
        }
        sp__spans_fini(&out);
    }
    sp__spans_fini(&want);
}

static void test_intervals_allocation_failure_small(void)
{
    /* Unmerged, so intersect and subtract copy both inputs; too short to
     * need a sort buffer. */
    static const int64_t a_in[] = {20, 30, 0, 10};
    static const int64_t b_in[] = {25, 26, 5, 6};
    sp__spans a, b, empty;
    int failures, fallbacks;
    make(&a, a_in, N(a_in));
    make(&b, b_in, N(b_in));
    sp__spans_init(&empty);
    fail_each_allocation(sp__spans_union, &a, &b, &failures, &fallbacks);
    CHECK_EQ(1, failures); /* the result */
    CHECK_EQ(0, fallbacks);
    fail_each_allocation(sp__spans_intersect, &a, &b, &failures, &fallbacks);
    CHECK_EQ(3, failures); /* two merged copies and the result */
    fail_each_allocation(sp__spans_subtract, &a, &b, &failures, &fallbacks);
    CHECK_EQ(3, failures);
    fail_each_allocation(sp__spans_union, &empty, &empty, &failures, &fallbacks);
    CHECK_EQ(0, failures + fallbacks); /* allocates nothing */

    sp__alloc_fail_at(1);
    CHECK_U64_EQ(SIZE_MAX, sp__spans_distinct(&a));
    sp__alloc_fail_at(0);
    CHECK_EQ(2, sp__spans_distinct(&a));
    sp__spans_fini(&a);
    sp__spans_fini(&b);
}

static void test_intervals_allocation_failure_falls_back_to_heap_sort(void)
{
    sp__spans a, b, s;
    int failures, fallbacks;
    sp__spans_init(&a);
    sp__spans_init(&b);
    for (int i = 0; i < 1000; i++) {
        int64_t start = (int64_t)rnd(20000) - 10000;
        sp__spans_add(&a, start, start + (int64_t)rnd(30));
        start = (int64_t)rnd(20000) - 10000;
        sp__spans_add(&b, start, start + (rnd(3) ? (int64_t)rnd(30) : 0));
    }
    fail_each_allocation(sp__spans_union, &a, &b, &failures, &fallbacks);
    CHECK_EQ(1, failures);
    CHECK_EQ(1, fallbacks); /* the sort buffer */
    fail_each_allocation(sp__spans_intersect, &a, &b, &failures, &fallbacks);
    CHECK_EQ(3, failures);
    CHECK_EQ(2, fallbacks);
    fail_each_allocation(sp__spans_subtract, &a, &b, &failures, &fallbacks);
    CHECK_EQ(3, failures);
    CHECK_EQ(2, fallbacks);

    /* merge never fails: with no buffer it heap-sorts in place. */
    sp__spans_init(&s);
    CHECK_OK(sp__spans_union(&s, &a, &a));
    size_t want = sp__spans_distinct(&a);
    sp__alloc_fail_at(1);
    CHECK_U64_EQ(SIZE_MAX, sp__spans_distinct(&a)); /* its copy */
    sp__alloc_fail_at(2);
    CHECK_EQ(want, sp__spans_distinct(&a)); /* its sort buffer */
    sp__alloc_fail_at(1);
    sp__spans_merge(&a);
    sp__alloc_fail_at(0);
    CHECK(same_spans(&s, &a));
    /* Disjoint spans in shuffled order: any misplaced one shows. */
    s.n = 0;
    for (int i = 0; i < 1000; i++) sp__spans_add(&s, 3 * i, 3 * i + 1);
    for (size_t i = s.n - 1; i > 0; i--) {
        size_t j = rnd(i + 1);
        sp__span t = s.v[i];
        s.v[i] = s.v[j];
        s.v[j] = t;
    }
    sp__alloc_fail_at(1);
    sp__spans_merge(&s);
    sp__alloc_fail_at(0);
    CHECK_EQ(1000, s.n);
    int in_place = 1;
    for (size_t i = 0; i < s.n; i++) in_place &= s.v[i].start == 3 * (int64_t)i;
    CHECK(in_place);
    sp__spans_fini(&s);
    sp__spans_fini(&a);
    sp__spans_fini(&b);
}

static void test_intervals_failed_list_is_sticky(void)
{
    /* A list that could not grow drops the span, stays failed, and taints
     * every set operation that reads it. */
    static const int64_t a_in[] = {0, 10};
    sp__spans a, s, out;
    make(&a, a_in, N(a_in));
    sp__spans_init(&s);
    sp__spans_init(&out);
    sp__alloc_fail_at(1);
    sp__spans_add(&s, 1, 2);
    sp__alloc_fail_at(0);
    CHECK(s.failed);
    CHECK_EQ(0, s.n);
    sp__spans_add(&s, 3, 4);
    CHECK_EQ(0, s.n);
    CHECK_EQ(-1, sp__spans_union(&out, &a, &s));
    CHECK(out.failed);
    CHECK_EQ(-1, sp__spans_subtract(&out, &s, &a));
    CHECK_EQ(-1, sp__spans_intersect(&out, &a, &s));
    CHECK_EQ(0, out.n);
    CHECK_OK(sp__spans_intersect(&out, &a, &a)); /* a success clears failed */
    CHECK(!out.failed);
    CHECK_EQ(1, out.n);
    sp__spans_fini(&s);
    CHECK(!s.failed);
    sp__spans_fini(&out);
    sp__spans_fini(&a);
}

static void test_intervals_sort_signed_keys(void)
{
    /* Starts across the whole int64 range, in a list long enough for the
     * radix sort: each start must come out as one span ending at its
     * longest end, in signed order. */
    static const int64_t starts[] = {INT64_MAX - 9, 100, INT64_MIN, -100, (int64_t)1 << 40,
                                     0, -((int64_t)1 << 40), -((int64_t)1 << 62)};
    static const int order[] = {2, 7, 6, 3, 5, 1, 4, 0};
    int64_t longest[8] = {0};
    unsigned char seen[8][10] = {{0}};
    size_t distinct = 0;
    sp__spans s;
    sp__spans_init(&s);
    for (int i = 0; i < 5000; i++) {
        int k = (int)rnd(8), len = (int)rnd(10);
        if (len > longest[k]) longest[k] = len;
        distinct += !seen[k][len];
        seen[k][len] = 1;
        sp__spans_add(&s, starts[k], starts[k] + len);
    }
    CHECK_EQ(distinct, sp__spans_distinct(&s));
    sp__spans_merge(&s);
    CHECK_EQ(8, s.n);
    for (size_t i = 0; i < 8 && i < s.n; i++) {
        CHECK_EQ(starts[order[i]], s.v[i].start);
        CHECK_EQ(starts[order[i]] + longest[order[i]], s.v[i].end);
    }
    sp__spans_fini(&s);
}

static void test_intervals_length_saturates(void)
{
    sp__spans s;
    sp__spans_init(&s);
    sp__spans_add(&s, INT64_MIN, -1); /* exactly INT64_MAX */
    CHECK_EQ(INT64_MAX, sp__spans_length(&s));
    sp__spans_add(&s, 0, 1);
    CHECK_EQ(INT64_MAX, sp__spans_length(&s));
    s.n = 0;
    sp__spans_add(&s, INT64_MIN, INT64_MAX); /* 2^64 - 1 */
    CHECK_EQ(INT64_MAX, sp__spans_length(&s));
    s.n = 0;
    sp__spans_add(&s, 0, INT64_MAX / 2 + 1);
    sp__spans_add(&s, -(INT64_MAX / 2) - 1, 0);
    CHECK_EQ(INT64_MAX, sp__spans_length(&s));
    sp__spans_merge(&s); /* one span of 2^63 */
    CHECK_EQ(1, s.n);
    CHECK_EQ(INT64_MAX, sp__spans_length(&s));
    s.n = 0;
    sp__spans_add(&s, 0, 3);
    sp__spans_add(&s, 10, 10);
    sp__spans_add(&s, 20, 24);
    CHECK_EQ(7, sp__spans_length(&s));
    sp__spans_fini(&s);
}

int main(void)
{
    RUN_TEST(test_intervals_merge_touching);
    RUN_TEST(test_intervals_merge_contained);
    RUN_TEST(test_intervals_merge_disjoint);
    RUN_TEST(test_intervals_merge_zero_length);
    RUN_TEST(test_intervals_merge_unsorted);
    RUN_TEST(test_intervals_merge_empty);
    RUN_TEST(test_intervals_add_clamps_reversed_span);
    RUN_TEST(test_intervals_union_hand_cases);
    RUN_TEST(test_intervals_intersect_hand_cases);
    RUN_TEST(test_intervals_subtract_hand_cases);
    RUN_TEST(test_intervals_subtract_span_covering_several);
    RUN_TEST(test_intervals_random_against_brute_force);
    RUN_TEST(test_intervals_large_sort_with_duplicates);
    RUN_TEST(test_intervals_few_sorted_runs);
    RUN_TEST(test_intervals_distinct);
    RUN_TEST(test_intervals_allocation_failure_small);
    RUN_TEST(test_intervals_allocation_failure_falls_back_to_heap_sort);
    RUN_TEST(test_intervals_failed_list_is_sticky);
    RUN_TEST(test_intervals_sort_signed_keys);
    RUN_TEST(test_intervals_length_saturates);
    return TEST_SUMMARY();
}
