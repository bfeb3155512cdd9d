/* intervals.h: the interval toolkit every summary table shares (semantics.md
 * §5.3, used by §6.0 and §6.4): a growable list of [start, end] spans in
 * int64 nanoseconds, merge, union, intersection, difference, total length and
 * the count of distinct spans. It never reads a clock and never prints; it
 * allocates only through sp__alloc, so tests can make any allocation fail.
 *
 * Geometry, decided where §5.3 leaves room:
 * - A list stands for the union of its spans as closed sets. Merging yields
 *   the connected pieces of that union: spans that overlap or touch
 *   (next.start <= cur.end) join, contained spans vanish, and a zero-length
 *   span survives only if no other span touches it.
 * - Lengths are measures: a span counts end - start, a point counts 0.
 * - Intersection keeps only pieces of positive length (Paddle's sweep: both
 *   lists active with positive overlap). Touching spans, and zero-length spans
 *   anywhere, give no piece.
 * - Difference a - b removes the positive-length spans of b from a. A
 *   zero-length span of b removes nothing; a zero-length span of merged a is
 *   kept unless some span of b contains it (b.start <= p <= b.end). Pieces
 *   cut from a positive span of a always have positive length.
 * So length(union) = length(A) + length(B) - length(intersect) and
 * length(a - b) = length(A) - length(intersect), where A and B are the merged
 * inputs (length() of an unmerged list counts overlaps twice).
 *
 * Threads: a list is used by one thread at a time; the operations read their
 * inputs only, so several threads may read one list at once. */
#ifndef SP_ANALYZE_INTERVALS_H
#define SP_ANALYZE_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

/* One span [start, end]; invariant end >= start. */
typedef struct sp__span {
    int64_t start, end;
} sp__span;

/* A growable list. Invariants: n <= cap; v holds cap slots (NULL when
 * cap == 0); every span has end >= start. `failed` is sticky like sp__buf's:
 * once an append could not grow the list, later appends are dropped too, and
 * union/intersect/subtract refuse the list (it is incomplete). */
typedef struct sp__spans {
    sp__span *v;
    size_t n, cap;
    int failed;
} sp__spans;

/* Makes an empty list; allocates nothing. */
void sp__spans_init(sp__spans *s);

/* Frees the spans and leaves s empty (and no longer failed), ready for reuse.
 * Safe on an initialised list any number of times. */
void sp__spans_fini(sp__spans *s);

/* Appends [start, end]; end < start is clamped to start. If the list cannot
 * grow, the span is dropped and s->failed is set. */
void sp__spans_add(sp__spans *s, int64_t start, int64_t end);

/* Makes room for n more spans at once, so that adding them never grows the
 * list piece by piece (each growth copies it). On failure sets s->failed. */
void sp__spans_reserve(sp__spans *s, size_t n);

/* Merges s in place (see the geometry above): afterwards the spans are sorted
 * by start and strictly separated (v[i].end < v[i + 1].start). Never fails
 * and leaves `failed` as it was. To sort 64 or more spans it borrows a buffer
 * of n spans (16n bytes) for a radix sort, linear in n; if that allocation
 * fails it heap-sorts in place instead, O(n log n). Input already sorted by
 * start takes one linear pass and no buffer. */
void sp__spans_merge(sp__spans *s);

/* out = a ∪ b, a ∩ b (positive-length pieces) or a - b. The inputs need not
 * be merged and are never changed: union sorts one concatenated copy, the
 * others merge a copy of an input only when it is not merged already. out
 * must be initialised, is overwritten, comes back merged with failed = 0, and
 * may be the same list as a or b. Return 0 on success. Return -1 when memory
 * ran out or an input has `failed` set: out is then empty (its old spans
 * freed) with out->failed set. */
int sp__spans_union(sp__spans *out, const sp__spans *a, const sp__spans *b);
int sp__spans_intersect(sp__spans *out, const sp__spans *a, const sp__spans *b);
int sp__spans_subtract(sp__spans *out, const sp__spans *a, const sp__spans *b);

/* Sum of end - start over the spans as they are (merge first for the length
 * of the covered time). Saturates at INT64_MAX instead of overflowing. */
int64_t sp__spans_length(const sp__spans *s);

/* Number of distinct (start, end) pairs, for call counts (§6.4). Allocates a
 * sorted copy unless s is already sorted by (start, end); returns SIZE_MAX if
 * that copy could not be allocated. */
size_t sp__spans_distinct(const sp__spans *s);

#endif
