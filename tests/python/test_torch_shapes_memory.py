"""stepprof.torch_profiler against torch.profiler on the same loop: input
shapes (events(), key_averages(group_by_input_shape=True) and its table's
Input Shapes column) and export_memory_timeline's three forms, which must
load as torch's do and hold the same shape of data. Both profilers run in
this process, one after the other, on one small MLP; rows are compared as
(name, shapes, calls) sets, never by time."""
import gzip
import json
import re
import warnings
import xml.etree.ElementTree as ET

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the torch shape and "
                                            "memory tests need it")
import torch.profiler  # noqa: E402

import stepprof.torch_profiler as tp  # noqa: E402
from stepprof import _torch_capture  # noqa: E402
from stepprof.profiler import StepprofWarning  # noqa: E402


@pytest.fixture(scope="module")
def train():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 32), torch.randint(0, 10, (16,))

    def step():
        with torch.profiler.record_function("my_loss"):
            loss = torch.nn.functional.cross_entropy(model(x), y).mean()  # aten::mean in itself
        opt.zero_grad()
        loss.backward()
        opt.step()
    step()  # torch's first-call work stays out of both spans
    if _torch_capture.adapter() is None:
        pytest.skip("stepprof's torch adapter is not usable here (see its warning): no operators "
                    "are captured")
    return step


def run(module, step, steps=2, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecations, stepprof's notes
        with module.profile(activities=[module.ProfilerActivity.CPU], **options) as prof:
            for _ in range(steps):
                step()
    return prof


def rows(averages):
    return {(e.key, str(e.input_shapes), e.count) for e in averages
            if not e.key.startswith("ProfilerStep")}  # stepprof's spans always have steps


def table_rows(text):
    """{(name, shapes, calls)} of a table with an Input Shapes column, made
    with max_name_column_width=None (names uncut)."""
    lines = text.splitlines()
    header = lines[1]
    assert header.rstrip().endswith("Input Shapes")
    out = set()
    for line in lines[3:]:
        if line.startswith("-"):
            break
        cells = re.split(r"\s{2,}", line.strip())
        if not cells[0].startswith("ProfilerStep"):
            out.add((cells[0], cells[-1], int(cells[-2])))
    return out


def test_key_averages_grouped_by_input_shape_as_torch(train):
    ours = run(tp, train, record_shapes=True)
    theirs = run(torch.profiler, train, record_shapes=True)
    mine = ours.key_averages(group_by_input_shape=True)
    want = rows(theirs.key_averages(group_by_input_shape=True))
    got = rows(mine)
    assert got == want, (sorted(want - got), sorted(got - want))
    # An operator has a row per shape (the two Linear layers).
    assert len([r for r in got if r[0] == "aten::addmm"]) >= 2
    # aten::mean re-enters itself: merged, with the outer call's shapes, as torch.
    assert [r for r in got if r[0] == "aten::mean"] == [("aten::mean", "[[], []]", 2)]
    # The table groups alike, and prints torch's column as torch does.
    text = mine.table(sort_by="count", row_limit=-1, max_name_column_width=None)
    assert table_rows(text) == {(k, s, c) for k, s, c in got}
    torch_text = theirs.key_averages(group_by_input_shape=True).table(sort_by="count",
                                                                      row_limit=-1)
    assert text.splitlines()[1].split() == torch_text.splitlines()[1].split()
    # Without the option: one row per name, no column, input_shapes "" as torch's.
    plain = ours.key_averages()
    assert "Input Shapes" not in plain.table(row_limit=-1)
    assert all(e.input_shapes == "" for e in plain)
    assert len({e.key for e in plain}) == len(plain)


def test_events_carry_torch_input_shapes(train):
    ours = run(tp, train, steps=1, record_shapes=True)
    theirs = run(torch.profiler, train, steps=1, record_shapes=True)

    def shapes(events):
        out = {}
        for e in events:
            out.setdefault(e.name, set()).add(str(e.input_shapes))
        return out
    mine, want = shapes(ours.events()), shapes(theirs.events())
    for name in ("aten::linear", "aten::addmm", "aten::relu", "aten::t", "my_loss"):
        assert mine[name] == want[name], name
    assert mine["aten::linear"] == {"[[16, 32], [64, 32], [64]]", "[[16, 64], [10, 64], [10]]"}
    # Without record_shapes every event's list is empty, as torch's.
    assert all(e.input_shapes == [] for e in run(tp, train, steps=1).events())


def test_table_shapes_column_width(train):
    ours = run(tp, train, steps=1, record_shapes=True)
    text = ours.key_averages(group_by_input_shape=True).table(row_limit=-1,
                                                              max_shapes_column_width=10)
    head = text.splitlines()[1]
    assert head.endswith("# of Calls  Input Shapes  ")
    cells = [re.split(r"\s{2,}", line.strip())[-1] for line in text.splitlines()[3:-2]]
    assert cells and max(len(c) for c in cells) <= 10
    assert "[[16, 32]," in cells  # aten::linear's, cut to 10


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def test_memory_timeline_forms_load_as_torchs(train, tmp_path):
    ours = run(tp, train, profile_memory=True)
    theirs = run(torch.profiler, train, profile_memory=True, record_shapes=True, with_stack=True)
    for suffix in (".json", ".json.gz", ".raw.json.gz", ".html"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # torch's deprecation
            theirs.export_memory_timeline(str(tmp_path / ("torch" + suffix)), device="cpu")
        with warnings.catch_warnings():
            warnings.simplefilter("error", StepprofWarning)  # there are events: no warning
            ours.export_memory_timeline(str(tmp_path / ("sp" + suffix)), device="cpu")

    for suffix in (".json", ".json.gz"):
        want, got = load(str(tmp_path / ("torch" + suffix))), load(str(tmp_path / ("sp" + suffix)))
        assert len(got) == len(want) == 2
        times, sizes = got
        assert times and len(times) == len(sizes)
        assert all(isinstance(t, int) for t in times) and times == sorted(times)
        assert all(len(row) == len(want[1][0]) == 9 and row[0] == 0 for row in sizes)
        assert all(v == 0 for row in sizes for v in row[1:8])  # every byte: category None
        # times in us on the same clock as torch's (CLOCK_REALTIME)
        assert abs(times[0] - want[0][0]) < 120e6
        # what the step allocates comes back: the timeline rises and falls
        assert max(row[8] for row in sizes) > 0
    raw_want, raw = load(str(tmp_path / "torch.raw.json.gz")), load(str(tmp_path / "sp.raw.json.gz"))
    assert raw and all(len(p) == len(raw_want[0]) == 4 for p in raw)
    assert {p[1] for p in raw} <= {1, 2, 3, 4} and 2 in {p[1] for p in raw}
    assert {p[3] for p in raw} == {7}
    assert all((p[2] < 0) == (p[1] == 4) for p in raw if p[1] != 3)
    assert [p[0] for p in raw] == sorted(p[0] for p in raw)
    # The coalesced sizes are the running sum of the raw points.
    total = sum(p[2] for p in raw)
    times, sizes = load(str(tmp_path / "sp.json"))
    assert sizes[-1][8] == total
    page = (tmp_path / "sp.html").read_text()
    assert page.startswith("<html>") and "<title>GPU Memory Timeline HTML</title>" in page
    assert "<svg" in page and "<polygon" in page and "Max memory allocated" in page
    assert "<img" not in page and "Unknown" in page
    svg = page[page.index("<svg"):page.index("</svg>") + 6]
    ET.fromstring(svg)  # well-formed, so a browser draws it


def test_memory_timeline_needs_profile_memory_and_warns_when_empty(train, tmp_path):
    prof = run(tp, train, steps=1)
    with pytest.raises(ValueError, match="profile_memory=True required"):
        prof.export_memory_timeline(str(tmp_path / "m.json"))
    prof = run(tp, train, steps=1, profile_memory=True)
    with pytest.warns(StepprofWarning, match="no memory events on cuda:3"):
        prof.export_memory_timeline(str(tmp_path / "m.json"), device="cuda:3")
    assert load(str(tmp_path / "m.json")) == [[], []]
    with pytest.warns(StepprofWarning):
        prof.export_memory_timeline(str(tmp_path / "m.raw.json.gz"), device="cuda:3")
    assert load(str(tmp_path / "m.raw.json.gz")) == []
    with pytest.warns(StepprofWarning):
        prof.export_memory_timeline(str(tmp_path / "m.html"), device="cuda:3")
    assert "No memory events" in (tmp_path / "m.html").read_text()
    with pytest.raises(ValueError, match="'cpu' and 'cuda:N'"):
        prof.export_memory_timeline(str(tmp_path / "m.json"), device="xpu:0")
    fresh = tp.profile(profile_memory=True)
    with pytest.raises(RuntimeError, match="no span"):
        fresh.export_memory_timeline(str(tmp_path / "m.json"))
