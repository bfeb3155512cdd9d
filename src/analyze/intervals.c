/* intervals.c: span lists for the summary tables (semantics.md §5.3; the
 * geometry is written down in intervals.h). Every operation sorts at most
 * once and is linear after that. A list of a few sorted runs is merged run
 * by run; anything else gets an LSD radix sort on the key
 * bytes (glibc qsort took 1.6 s for 10 million spans, an introsort 0.9 s),
 * with an in-place heap sort when its buffer cannot be had, so nothing here
 * fails for want of sort memory and the worst case stays O(n log n). The set
 * operations build their result in a fresh array and install it in `out`
 * last, so `out` may alias an input. */
#include "intervals.h"
#include "sys.h"

#include <string.h>

#define SORT_SMALL 64 /* below this, insertion sort without a buffer */

/* Order by start, then end, so equal spans end up adjacent for distinct(). */
static int span_less(sp__span x, sp__span y)
{
    return x.start < y.start || (x.start == y.start && x.end < y.end);
}

static void insertion_sort(sp__span *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        sp__span x = v[i];
        size_t j = i;
        for (; j > 0 && span_less(x, v[j - 1]); j--) v[j] = v[j - 1];
        v[j] = x;
    }
}

static void sift_down(sp__span *v, size_t root, size_t n)
{
    for (size_t child; (child = 2 * root + 1) < n; root = child) {
        if (child + 1 < n && span_less(v[child], v[child + 1])) child++;
        if (!span_less(v[root], v[child])) return;
        sp__span t = v[root];
        v[root] = v[child];
        v[child] = t;
    }
}

/* In place and O(n log n) worst case: the fallback when no buffer is left. */
static void heap_sort(sp__span *v, size_t n)
{
    for (size_t i = n / 2; i-- > 0;) sift_down(v, i, n);
    for (size_t i = n; i-- > 1;) {
        sp__span t = v[0];
        v[0] = v[i];
        v[i] = t;
        sift_down(v, 0, i);
    }
}

/* Byte `pass & 7` of end (passes 0-7) or start (8-15), sign bit flipped so
 * that unsigned byte order is signed order. */
static unsigned digit(sp__span x, int pass)
{
    uint64_t k = (uint64_t)(pass < 8 ? x.end : x.start) ^ (UINT64_C(1) << 63);
    return (unsigned)(k >> (8 * (pass & 7))) & 0xff;
}

/* LSD radix sort, stable, one histogram pass plus one scatter per byte that
 * is not the same in every span (timestamps of one run share their top bytes).
 * Sorts by start, or by (start, end) with by_end. tmp holds n spans. */
static void radix_sort(sp__span *v, sp__span *tmp, size_t n, int by_end)
{
    size_t count[16][256] = {{0}};
    int first = by_end ? 0 : 8;
    for (size_t i = 0; i < n; i++)
        for (int p = first; p < 16; p++) count[p][digit(v[i], p)]++;
    sp__span *src = v, *dst = tmp, *t;
    for (int p = first; p < 16; p++) {
        size_t *c = count[p], sum = 0;
        if (c[digit(v[0], p)] == n) continue;
        for (int d = 0; d < 256; d++) {
            size_t here = c[d];
            c[d] = sum;
            sum += here;
        }
        for (size_t i = 0; i < n; i++) dst[c[digit(src[i], p)]++] = src[i];
        t = src, src = dst, dst = t;
    }
    if (src != v) memcpy(v, src, n * sizeof *v);
}

enum order { BY_START, BY_START_END, MERGED };

/* BY_START is enough for merging; MERGED also means strictly apart. */
static int in_order(const sp__span *v, size_t n, enum order how)
{
    for (size_t i = 1; i < n; i++) {
        if (how == MERGED ? v[i].start <= v[i - 1].end
            : how == BY_START_END ? span_less(v[i], v[i - 1])
                                  : v[i].start < v[i - 1].start)
            return 0;
    }
    return 1;
}

static int before(sp__span x, sp__span y, int by_end)
{
    return by_end ? span_less(x, y) : x.start < y.start;
}

/* Where the sorted run starting at i ends. */
static size_t run_end(const sp__span *v, size_t i, size_t n, int by_end)
{
    while (++i < n && !before(v[i], v[i - 1], by_end)) {}
    return i;
}

/* Lists that are a few sorted runs back to back (the per-thread pieces of a
 * cross-thread union, the two inputs of sp__spans_union) are merged run by
 * run, linear per level, instead of radix sorted. 0 if v has too many runs. */
#define FEW_RUNS 16
static int merge_runs(sp__span *v, sp__span *tmp, size_t n, int by_end)
{
    size_t bounds[FEW_RUNS + 1], runs = 0;
    for (size_t i = 0; i < n; i = run_end(v, i, n, by_end)) {
        if (runs == FEW_RUNS) return 0;
        bounds[runs++] = i;
    }
    bounds[runs] = n;
    sp__span *src = v, *dst = tmp, *t;
    while (runs > 1) {
        size_t out = 0;
        for (size_t r = 0; r < runs; r += 2) {
            size_t lo = bounds[r], mid = bounds[r + 1 < runs ? r + 1 : runs];
            size_t hi = bounds[r + 2 <= runs ? r + 2 : runs], i = lo, j = mid, k = lo;
            while (i < mid && j < hi) dst[k++] = before(src[j], src[i], by_end) ? src[j++] : src[i++];
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
            bounds[out++] = lo;
        }
        bounds[out] = n;
        runs = out;
        t = src, src = dst, dst = t;
    }
    if (src != v) memcpy(v, src, n * sizeof *v);
    return 1;
}

/* Never fails: without memory for the radix buffer it falls back to heap_sort. */
static void sort_spans(sp__span *v, size_t n, int by_end)
{
    if (in_order(v, n, by_end ? BY_START_END : BY_START)) return;
    sp__span *tmp = n < SORT_SMALL ? NULL : sp__alloc(n * sizeof *tmp);
    if (tmp && merge_runs(v, tmp, n, by_end)) {
        sp__free(tmp);
        return;
    }
    if (tmp) radix_sort(v, tmp, n, by_end);
    else if (n < SORT_SMALL) insertion_sort(v, n);
    else heap_sort(v, n);
    sp__free(tmp);
}

/* Merges spans already sorted by start, in place; returns the new count. */
static size_t merge_sorted(sp__span *v, size_t n)
{
    if (n == 0) return 0;
    size_t k = 0;
    for (size_t i = 1; i < n; i++) {
        if (v[i].start > v[k].end) v[++k] = v[i];
        else if (v[i].end > v[k].end) v[k].end = v[i].end; /* touching joins */
    }
    return k + 1;
}

void sp__spans_init(sp__spans *s) { memset(s, 0, sizeof *s); }

void sp__spans_fini(sp__spans *s)
{
    sp__free(s->v);
    sp__spans_init(s);
}

void sp__spans_add(sp__spans *s, int64_t start, int64_t end)
{
    if (s->failed) return;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        sp__span *v = NULL;
        if (s->cap <= SIZE_MAX / 2 / sizeof *v) v = sp__realloc(s->v, cap * sizeof *v);
        if (!v) {
            s->failed = 1;
            return;
        }
        s->v = v, s->cap = cap;
    }
    s->v[s->n++] = (sp__span){start, end < start ? start : end};
}

void sp__spans_reserve(sp__spans *s, size_t n)
{
    if (s->failed || n <= s->cap - s->n) return;
    sp__span *v = NULL;
    if (n <= SIZE_MAX / sizeof *v - s->n) v = sp__realloc(s->v, (s->n + n) * sizeof *v);
    if (!v) {
        s->failed = 1;
        return;
    }
    s->v = v, s->cap = s->n + n;
}

void sp__spans_merge(sp__spans *s)
{
    sort_spans(s->v, s->n, 0);
    s->n = merge_sorted(s->v, s->n);
}

/* Installs res (n spans in cap slots) as out's contents, or, with rc != 0,
 * empties out and marks it failed. Runs after the inputs were last read. */
static int finish(sp__spans *out, sp__span *res, size_t n, size_t cap, int rc)
{
    sp__free(out->v);
    if (rc != 0) sp__free(res);
    out->v = rc ? NULL : res;
    out->n = rc ? 0 : n;
    out->cap = rc ? 0 : cap;
    out->failed = rc != 0;
    return rc;
}

/* A merged, read-only view of a list: the list itself when it is already
 * merged, else a merged copy in `owned` (which the caller frees). */
typedef struct view {
    const sp__span *v;
    size_t n;
    sp__span *owned;
} view;

static int view_merged(view *w, const sp__spans *in)
{
    *w = (view){in->v, in->n, NULL};
    if (in_order(in->v, in->n, MERGED)) return 0;
    w->owned = sp__alloc(in->n * sizeof *w->owned);
    if (!w->owned) return -1;
    memcpy(w->owned, in->v, in->n * sizeof *w->owned);
    sort_spans(w->owned, in->n, 0);
    w->n = merge_sorted(w->owned, in->n);
    w->v = w->owned;
    return 0;
}

int sp__spans_union(sp__spans *out, const sp__spans *a, const sp__spans *b)
{
    size_t na = a->n, nb = b->n, n = 0;
    sp__span *res = NULL;
    if (a->failed || b->failed || na > SIZE_MAX / sizeof *res - nb) goto fail;
    if ((n = na + nb) == 0) return finish(out, NULL, 0, 0, 0);
    if (!(res = sp__alloc(n * sizeof *res))) goto fail;
    if (na) memcpy(res, a->v, na * sizeof *res); /* v may be NULL when n == 0 */
    if (nb) memcpy(res + na, b->v, nb * sizeof *res);
    sort_spans(res, n, 0);
    return finish(out, res, merge_sorted(res, n), n, 0);
fail:
    return finish(out, res, 0, 0, -1);
}

/* Shared frame of intersect and subtract: merged views of both inputs, a
 * result array of na + nb slots (enough for either sweep), then `sweep`. */
typedef size_t (*sweep_fn)(sp__span *res, const view *a, const view *b);

static int set_op(sp__spans *out, const sp__spans *a, const sp__spans *b, sweep_fn sweep)
{
    view wa = {0}, wb = {0};
    sp__span *res = NULL;
    size_t n = 0, cap = 0;
    int rc = -1;
    if (a->failed || b->failed) goto done;
    if (view_merged(&wa, a) != 0 || view_merged(&wb, b) != 0) goto done;
    cap = wa.n + wb.n; /* each at most the input's count, so no overflow */
    if (cap && !(res = sp__alloc(cap * sizeof *res))) goto done;
    n = sweep(res, &wa, &wb);
    rc = 0;
done:
    sp__free(wa.owned);
    sp__free(wb.owned);
    return finish(out, res, n, cap, rc);
}

/* Pieces of positive length where both lists are active. Each step retires
 * the span that ends first, so pieces come out sorted and strictly apart. */
static size_t sweep_intersect(sp__span *res, const view *a, const view *b)
{
    size_t i = 0, j = 0, k = 0;
    while (i < a->n && j < b->n) {
        sp__span x = a->v[i], y = b->v[j];
        int64_t lo = x.start > y.start ? x.start : y.start;
        int64_t hi = x.end < y.end ? x.end : y.end;
        if (lo < hi) res[k++] = (sp__span){lo, hi};
        if (x.end < y.end) i++;
        else j++;
    }
    return k;
}

/* Cuts b's positive spans out of each span of a. A b span that reaches past
 * the end of a span of a is kept (j not advanced): it may cut the next one. */
static size_t sweep_subtract(sp__span *res, const view *a, const view *b)
{
    size_t j = 0, k = 0;
    for (size_t i = 0; i < a->n; i++) {
        int64_t cur = a->v[i].start, end = a->v[i].end;
        if (cur == end) { /* a point: kept unless a span of b contains it */
            while (j < b->n && b->v[j].end < cur) j++;
            if (j == b->n || b->v[j].start > cur) res[k++] = a->v[i];
            continue;
        }
        while (j < b->n && b->v[j].end <= cur) j++;
        for (; j < b->n && b->v[j].start < end; j++) {
            sp__span y = b->v[j];
            if (y.start == y.end) continue; /* a point of b removes nothing */
            if (y.start > cur) res[k++] = (sp__span){cur, y.start};
            if (y.end >= end) {
                cur = end;
                break;
            }
            cur = y.end;
        }
        if (cur < end) res[k++] = (sp__span){cur, end};
    }
    return k;
}

int sp__spans_intersect(sp__spans *out, const sp__spans *a, const sp__spans *b)
{
    return set_op(out, a, b, sweep_intersect);
}

int sp__spans_subtract(sp__spans *out, const sp__spans *a, const sp__spans *b)
{
    return set_op(out, a, b, sweep_subtract);
}

int64_t sp__spans_length(const sp__spans *s)
{
    uint64_t total = 0; /* never above INT64_MAX */
    for (size_t i = 0; i < s->n; i++) {
        if (s->v[i].end <= s->v[i].start) continue;
        uint64_t d = (uint64_t)s->v[i].end - (uint64_t)s->v[i].start; /* exact mod 2^64 */
        if (d > (uint64_t)INT64_MAX - total) return INT64_MAX;
        total += d;
    }
    return (int64_t)total;
}

size_t sp__spans_distinct(const sp__spans *s)
{
    const sp__span *v = s->v;
    sp__span *copy = NULL;
    size_t count = 0;
    if (!in_order(v, s->n, BY_START_END)) {
        if (!(copy = sp__alloc(s->n * sizeof *copy))) return SIZE_MAX;
        memcpy(copy, v, s->n * sizeof *copy);
        sort_spans(copy, s->n, 1);
        v = copy;
    }
    for (size_t i = 0; i < s->n; i++)
        if (i == 0 || v[i].start != v[i - 1].start || v[i].end != v[i - 1].end) count++;
    sp__free(copy);
    return count;
}
