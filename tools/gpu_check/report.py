"""report.py: the writer of docs/gpu-verification.md for tools/gpu_check/gpu_check.py.

A run of `make gpu-check` becomes one dated section: a line on the machine
(GPU, driver, CUDA, torch, the libcupti loaded), a line of totals, and a
table check | figure | verdict. The section goes on top of the earlier
ones, which are kept byte for byte; the file's head (the text before the
first dated section, "## YYYY-MM-DD...") stays as it is. Pure functions on
strings, so tests/tools/test_gpu_check.py checks the exact markdown without
a GPU. Standard library only.
"""
import re

PASS, FAIL, SKIP = "pass", "fail", "skipped"
DATED = re.compile(r"^## \d{4}-\d{2}-\d{2}", re.M)


class Result:
    """One check's outcome: its name (what was checked), the figure it
    measured (text), and its verdict: PASS, FAIL or SKIP with why."""

    def __init__(self, name, verdict, figure="", why=""):
        if verdict not in (PASS, FAIL, SKIP):
            raise ValueError(f"unknown verdict {verdict!r}")
        if verdict == SKIP and not why:
            raise ValueError(f"{name}: a skipped check must say why")
        self.name, self.verdict, self.figure, self.why = name, verdict, figure, why

    def __repr__(self):
        return f"Result({self.name!r}, {self.verdict!r}, {self.figure!r}, {self.why!r})"


def cell(text):
    """Text fit for one table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def verdict_text(r):
    if r.verdict == PASS:
        return "pass"
    if r.verdict == FAIL:
        return "**fail**" + (f": {r.why}" if r.why else "")
    return f"skipped: {r.why}"


def section(date, machine, results, note=""):
    """The markdown of one run. date: "YYYY-MM-DD"; machine: a dict with
    gpu, driver, cuda, torch, cupti, commit, seconds (missing keys read
    "unknown"), as markdown; note: an optional paragraph (a run cut short says so)."""
    m = {k: machine.get(k) or "unknown" for k in
         ("gpu", "driver", "cuda", "torch", "cupti", "commit", "seconds")}
    counts = {v: sum(1 for r in results if r.verdict == v) for v in (PASS, FAIL, SKIP)}
    lines = [
        f"## {date}: `make gpu-check` on {m['gpu']}",
        "",
        f"Machine: {m['gpu']}, driver {m['driver']}, CUDA {m['cuda']}, torch {m['torch']}, "
        f"CUPTI {m['cupti']}. stepprof {m['commit']}.",
        "",
        f"{len(results)} checks in {m['seconds']} s: {counts[PASS]} passed, "
        f"{counts[FAIL]} failed, {counts[SKIP]} skipped.",
        "",
    ]
    if note:
        lines += [" ".join(note.split()), ""]
    lines += ["| check | figure | verdict |", "|---|---|---|"]
    for r in results:
        lines.append(f"| {cell(r.name)} | {cell(r.figure) or '-'} | {cell(verdict_text(r))} |")
    return "\n".join(lines) + "\n"


def insert(doc, new_section):
    """doc with new_section placed before its first dated section (after
    the head), or at its end when it has none; the rest is kept as it is."""
    m = DATED.search(doc)
    if not m:
        head = doc if doc.endswith("\n") or not doc else doc + "\n"
        return head + ("\n" if head and not head.endswith("\n\n") else "") + new_section
    return doc[:m.start()] + new_section + "\n" + doc[m.start():]
