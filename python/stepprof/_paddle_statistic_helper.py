"""stepprof.profiler.statistic_helper: the interval helpers paddle's
statistic_helper offers (sum_ranges, merge_self_ranges, merge_ranges,
intersection_ranges, subtract_ranges), for scripts that post-process event
times. A range is a (start, end) pair with start <= end; results are sorted,
disjoint and exclude empty ranges. Registered as the submodule
stepprof.profiler.statistic_helper."""

__all__ = ["sum_ranges", "merge_self_ranges", "merge_ranges", "intersection_ranges",
           "subtract_ranges"]


def sum_ranges(ranges):
    """The total length of ranges (overlaps counted once per range)."""
    return sum(end - start for start, end in ranges)


def merge_self_ranges(src_ranges, is_sorted=False):
    """The union of src_ranges as sorted disjoint ranges (touching ones join)."""
    ranges = list(src_ranges) if is_sorted else sorted(src_ranges)
    out = []
    for start, end in ranges:
        if end <= start:
            continue
        if out and start <= out[-1][1]:
            if end > out[-1][1]:
                out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def merge_ranges(range_list1, range_list2, is_sorted=False):
    """The union of two lists of ranges."""
    return merge_self_ranges(list(range_list1) + list(range_list2))


def intersection_ranges(range_list1, range_list2, is_sorted=False):
    """Where both lists of ranges cover."""
    a, b = merge_self_ranges(range_list1), merge_self_ranges(range_list2)
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if start < end:
            out.append((start, end))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def subtract_ranges(range_list1, range_list2, is_sorted=False):
    """What range_list1 covers and range_list2 does not."""
    a, b = merge_self_ranges(range_list1), merge_self_ranges(range_list2)
    out, j = [], 0
    for start, end in a:
        while j < len(b) and b[j][1] <= start:
            j += 1
        k, cur = j, start
        while k < len(b) and b[k][0] < end:
            if b[k][0] > cur:
                out.append((cur, b[k][0]))
            cur = max(cur, b[k][1])
            k += 1
        if cur < end:
            out.append((cur, end))
    return out
