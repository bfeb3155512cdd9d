"""prof.export_memory_timeline(path, device): a span's allocations and
frees (profile_memory) in the three forms torch's _memory_profiler writes,
chosen by the path's suffix as torch chooses:

- ".html": a page with the plot of memory in use over time, stacked by
  category. torch embeds a matplotlib PNG; this page holds an inline SVG
  drawn here, so nothing beyond the standard library is needed.
- ".json" (or any other suffix) and ".json.gz": [times, sizes], times in
  us (the span's CLOCK_REALTIME, as torch's), sizes one list of 9 byte
  counts per time: 0, then the bytes in use of each of torch's categories
  in its order (PARAMETER, OPTIMIZER_STATE, INPUT, TEMPORARY, ACTIVATION,
  GRADIENT, AUTOGRAD_DETAIL, None).
- ".raw.json.gz": the raw points [time_ns, action, bytes, category]: action
  torch's Action value (1 PREEXISTING, 2 CREATE, 3 INCREMENT_VERSION,
  4 DESTROY), bytes negative for what goes, category the index in that
  order (no 0 prefix).

torch puts each tensor in a category by analysing the autograd graph;
stepprof does not, so every byte is in category None ("Unknown": index 7
of the raw points, the last of each sizes list). The points are those torch
makes for an allocation it cannot tie to a tensor: an allocation is
CREATE, a free DESTROY, a free of memory allocated before the span
PREEXISTING at time -1 (and DESTROY), a second allocation at a live address
INCREMENT_VERSION (its size out, then in)."""
import gzip
import json
import re
import warnings

from . import _core

__all__ = ["export"]

CATEGORIES = ("PARAMETER", "OPTIMIZER_STATE", "INPUT", "TEMPORARY", "ACTIVATION", "GRADIENT",
              "AUTOGRAD_DETAIL", None)
COLORS = ("darkgreen", "goldenrod", "black", "mediumpurple", "red", "mediumblue", "royalblue",
          "grey")  # torch's, by category
UNKNOWN = CATEGORIES.index(None)
PREEXISTING, CREATE, INCREMENT_VERSION, DESTROY = 1, 2, 3, 4


def place_of(device):
    """stepprof's place for torch's device string ("cpu", "cuda:N"; "cuda"
    is cuda:0). Raises ValueError for another device."""
    text = str(device)
    m = re.fullmatch(r"cuda(?::(\d+))?", text)
    if m:
        return f"Place(gpu:{int(m.group(1) or 0)})"
    if text in ("cpu", "cpu:0"):
        return "Place(cpu)"
    raise ValueError(f"export_memory_timeline(device={device!r}): stepprof records the memory of "
                     f"'cpu' and 'cuda:N'")


def points(result, place):
    """torch's timeline points [(time_ns, action, bytes)] of a result's
    Allocate and Free events at place, every thread's, in torch's order
    (time, then action); and the peaks (allocated, reserved) seen there."""
    events = []
    peaks = [0, 0]
    for t in range(len(result.threads)):
        for m in result.memory_events(t):
            if m.place != place or m.type not in ("Allocate", "Free"):
                continue
            events.append(m)
            peaks[0] = max(peaks[0], m.peak_allocated)
            peaks[1] = max(peaks[1], m.peak_reserved)
    events.sort(key=lambda m: m.ts_ns)  # stable: a thread's own order at equal times
    out, live = [], set()
    for m in events:
        size = abs(m.bytes)
        if m.type == "Allocate":
            out.append((m.ts_ns, INCREMENT_VERSION if m.addr in live else CREATE, size))
            live.add(m.addr)
        else:
            out.append((m.ts_ns, DESTROY, size))
            if m.addr in live:
                live.discard(m.addr)
            else:
                out.append((-1, PREEXISTING, size))
    out.sort(key=lambda p: (p[0], p[1]))
    return out, peaks


def raw(pts):
    """The .raw.json.gz list, as torch's export_memory_timeline_raw."""
    out = []
    for t, action, size in pts:
        if action == INCREMENT_VERSION:
            out += [[t, action, -size, UNKNOWN], [t, action, size, UNKNOWN]]
        else:
            out.append([t, action, -size if action == DESTROY else size, UNKNOWN])
    return out


def coalesce(pts):
    """[times, sizes] as torch's _coalesce_timeline: one entry per distinct
    time (us), each the bytes in use by category after that time; the
    pre-existing points' -1 becomes the first positive time."""
    times, sizes, first = [], [], -1
    for t, action, size in pts:
        if t != -1:
            t = int(t / 1000)
        if first == -1 or 0 < t < first:
            first = t
        if not times or t != times[-1]:
            times.append(t)
            sizes.append(sizes[-1].copy() if sizes else [0] * (len(CATEGORIES) + 1))
        if action != INCREMENT_VERSION:  # out and in again: no change
            sizes[-1][UNKNOWN + 1] += -size if action == DESTROY else size
    return [first if t < 0 else t for t in times], sizes


def _svg(times, sizes, peaks, width=1000, height=600):
    """The stacked plot as SVG: time (ms from the first point) across,
    memory (GB) up, one band per category with bytes, torch's colours."""
    left, right, top, bottom = 80, 20, 70, 60
    pw, ph = width - left - right, height - top - bottom
    t0 = min(times)
    xs = [(t - t0) / 1e3 for t in times]
    stacked = []
    for row in sizes:
        acc, cum = 0, []
        for v in row:
            acc += v
            cum.append(acc / 1024 ** 3)
        stacked.append(cum)
    x_max = max(xs) or 1.0
    y_max = max(max(c) for c in stacked) or 1.0

    def x(v):
        return left + pw * v / x_max

    def y(v):
        return top + ph - ph * v / y_max

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="12">',
             f'<text x="{width / 2}" y="20" text-anchor="middle">Max memory allocated: '
             f'{peaks[0] / 1024 ** 3:.2f} GiB</text>',
             f'<text x="{width / 2}" y="38" text-anchor="middle">Max memory reserved: '
             f'{peaks[1] / 1024 ** 3:.2f} GiB</text>']
    for i, color in enumerate(COLORS):
        if not any(row[i + 1] for row in sizes):
            continue
        upper = " ".join(f"{x(a):.2f},{y(c[i + 1]):.2f}" for a, c in zip(xs, stacked))
        lower = " ".join(f"{x(a):.2f},{y(c[i]):.2f}" for a, c in zip(reversed(xs),
                                                                     reversed(stacked)))
        parts.append(f'<polygon points="{upper} {lower}" fill="{color}" fill-opacity="0.7"/>')
    parts.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" '
                 f'stroke="black"/>')
    for k in range(6):
        xv, yv = x_max * k / 5, y_max * k / 5
        parts.append(f'<text x="{x(xv):.2f}" y="{top + ph + 16}" text-anchor="middle">'
                     f'{xv:.3g}</text>')
        parts.append(f'<text x="{left - 6}" y="{y(yv) + 4:.2f}" text-anchor="end">{yv:.3g}</text>')
    parts.append(f'<text x="{left + pw / 2}" y="{height - 15}" text-anchor="middle">Time (ms)'
                 f'</text>')
    parts.append(f'<text transform="translate(20,{top + ph / 2}) rotate(-90)" '
                 f'text-anchor="middle">Memory (GB)</text>')
    for i, (name, color) in enumerate(zip(CATEGORIES, COLORS)):
        ly = top + 10 + 16 * i
        parts.append(f'<rect x="{width - right - 150}" y="{ly}" width="12" height="12" '
                     f'fill="{color}" fill-opacity="0.7"/>')
        parts.append(f'<text x="{width - right - 132}" y="{ly + 10}">{name or "Unknown"}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def html(times, sizes, peaks):
    """torch's page (title and layout), with the plot as inline SVG."""
    body = (_svg(times, sizes, peaks) if times else
            "<p>No memory events for this device in the span.</p>")
    return f"""<html>
<head><meta charset="utf-8" /><title>GPU Memory Timeline HTML</title></head>
<body>
  {body}
</body>
</html>"""


def export(result, path, device):
    """Writes result's memory timeline at device to path, the form chosen
    by path's suffix as torch's; warns (StepprofWarning) when the span has
    no memory event there, and writes the empty form."""
    place = place_of(device)
    pts, peaks = points(result, place)
    if not pts:
        warnings.warn(f"export_memory_timeline(): the span has no memory events on {device} "
                      f"(profile_memory=True records torch's allocations while stepprof's capture "
                      f"of torch is active); {path} shows none", _core.StepprofWarning,
                      stacklevel=3)
    path = str(path)
    if path.endswith(".html"):
        with open(path, "w", encoding="utf-8") as f:
            f.write(html(*coalesce(pts), peaks))
        return
    data = raw(pts) if path.endswith("raw.json.gz") else coalesce(pts)
    data = list(data)
    if path.endswith(".gz"):
        with gzip.open(path, "wt") as f:
            json.dump(data, f)
    else:
        with open(path, "w") as f:
            json.dump(data, f)
