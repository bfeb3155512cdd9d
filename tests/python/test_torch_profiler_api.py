"""stepprof.torch_profiler speaks torch.profiler's API: the seeds' torch
examples run with only the import changed, and each run is compared with
torch.profiler's own run of the same loop: the trace files and their
ProfilerStep#N steps, the handler calls, and the table's headers for every
sort key. Rows are never compared (which operators a span holds depends on
the operator capture, not on this API), so these tests hold with and
without it."""
import gzip
import inspect
import json
import os
import re
import warnings

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the torch API tests need it")
import torch.profiler  # noqa: E402

import stepprof.torch_profiler as tp  # noqa: E402
from stepprof.profiler import StepprofWarning  # noqa: E402

SORT_KEYS = ["cpu_time", "cuda_time", "xpu_time", "device_time", "cpu_time_total",
             "cuda_time_total", "xpu_time_total", "device_time_total", "self_cpu_time_total",
             "self_cuda_time_total", "self_xpu_time_total", "self_device_time_total",
             "cpu_memory_usage", "cuda_memory_usage", "xpu_memory_usage", "device_memory_usage",
             "self_cpu_memory_usage", "self_cuda_memory_usage", "self_xpu_memory_usage",
             "self_device_memory_usage", "count", "privateuse1_time_total", None]


@pytest.fixture(scope="module")
def mlp():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(4, 8)

    def train(_batch=None):
        opt.zero_grad()
        with tp.record_function("forward"):
            loss = model(x).sum()
        loss.backward()
        opt.step()
    return model, x, train


def trace_files(d):
    return sorted(os.path.join(d, f) for f in os.listdir(d)) if os.path.isdir(d) else []


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def step_names(trace):
    return sorted({e["name"] for e in trace["traceEvents"]
                   if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")})


def headers(table):
    """The header cells of a key_averages().table() text."""
    lines = table.split("\n")
    i = next(i for i, line in enumerate(lines) if line.startswith("-"))
    return re.split(r"\s{2,}", lines[i + 1].strip())


# ---- the seeds' examples, with only the import changed -----------------------

def seed_002_context_manager(profiler, log_dir, train):
    """The seed's first example (ResNet in the seed; the MLP here)."""
    train_loader = range(100)
    with profiler.profile(
            schedule=profiler.schedule(wait=1, warmup=1, active=3, repeat=1),
            on_trace_ready=profiler.tensorboard_trace_handler(log_dir),
            record_shapes=True,
            profile_memory=True,
            with_stack=True
    ) as prof:
        for step, batch_data in enumerate(train_loader):
            prof.step()  # Need to call this at each step to notify profiler of steps' boundary.
            if step >= 1 + 1 + 3:
                break
            train(batch_data)
    return prof


def seed_002_start_stop(profiler, log_dir, train):
    """The seed's non-context-manager form."""
    train_loader = range(100)
    prof = profiler.profile(
        schedule=profiler.schedule(wait=1, warmup=1, active=3, repeat=1),
        on_trace_ready=profiler.tensorboard_trace_handler(log_dir),
        record_shapes=True,
        with_stack=True)
    prof.start()
    for step, batch_data in enumerate(train_loader):
        prof.step()
        if step >= 1 + 1 + 3:
            break
        train(batch_data)
    prof.stop()
    return prof


@pytest.mark.parametrize("example", [seed_002_context_manager, seed_002_start_stop])
def test_seed_002_examples_write_the_same_traces_as_torch(example, tmp_path, mlp):
    _, _, train = mlp
    theirs = example(torch.profiler, str(tmp_path / "torch"), train)
    prof = example(tp, str(tmp_path / "stepprof"), train)
    want, got = trace_files(str(tmp_path / "torch")), trace_files(str(tmp_path / "stepprof"))
    assert len(got) == len(want) == 1
    assert got[0].endswith(".pt.trace.json")
    assert step_names(load(got[0])) == step_names(load(want[0])) == \
        ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"]
    assert prof.step_num == theirs.step_num == 6


def seed_002_trace_handler(profiler, out_dir, model, inputs, sort_by_keyword):
    """The seed's custom trace_handler: a table and export_chrome_trace
    named by step_num, from inside on_trace_ready."""
    tables = []
    activities = [profiler.ProfilerActivity.CPU]

    def trace_handler(p):
        output = p.key_averages().table(sort_by=sort_by_keyword, row_limit=10)
        tables.append(output)
        p.export_chrome_trace(os.path.join(out_dir, "trace_" + str(p.step_num) + ".json"))

    with profiler.profile(
        activities=activities,
        schedule=torch.profiler.schedule(
            wait=1,
            warmup=1,
            active=2),
        on_trace_ready=trace_handler
    ) as p:
        for idx in range(8):
            model(inputs)
            p.step()
    return tables


@pytest.mark.parametrize("sort_by_keyword", ["self_cpu_time_total", "self_cuda_time_total"])
def test_seed_002_trace_handler_as_torch(sort_by_keyword, tmp_path, mlp):
    model, x, _ = mlp
    (tmp_path / "torch").mkdir()
    (tmp_path / "stepprof").mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want_tables = seed_002_trace_handler(torch.profiler, str(tmp_path / "torch"), model, x,
                                             sort_by_keyword)
    got_tables = seed_002_trace_handler(tp, str(tmp_path / "stepprof"), model, x,
                                        sort_by_keyword)
    assert sorted(os.listdir(tmp_path / "stepprof")) == sorted(os.listdir(tmp_path / "torch")) \
        == ["trace_4.json", "trace_8.json"]
    assert len(got_tables) == len(want_tables) == 2
    for got, want in zip(got_tables, want_tables):
        assert headers(got) == headers(want)
    trace = load(str(tmp_path / "stepprof" / "trace_8.json"))
    assert step_names(trace) == ["ProfilerStep#6", "ProfilerStep#7"]


def seed_004(profiler, log_dir):
    """The seed's SimpleNet example (smaller images), torch's own schedule
    and handler objects passed to the profile as they are."""
    class SimpleNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.seq = torch.nn.Sequential(
                torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(),
                torch.nn.Conv2d(4, 8, 3, padding=1), torch.nn.ReLU(),
                torch.nn.AdaptiveAvgPool2d(1))

        def forward(self, x):
            return self.seq(x)

    model = SimpleNet()
    x = torch.randn(2, 3, 8, 8)
    optimizer = torch.optim.Adam(model.parameters())
    with profiler.profile(
        activities=[
            torch.profiler.ProfilerActivity.CPU,   # torch's own enum member
        ],
        schedule=torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1),
        on_trace_ready=torch.profiler.tensorboard_trace_handler(log_dir),
        record_shapes=True,
        with_stack=True
    ) as prof:
        for step in range(5):
            optimizer.zero_grad()
            y = model(x)
            loss = y.mean()
            loss.backward()
            optimizer.step()
            prof.step()
    return prof


def test_seed_004_with_torchs_schedule_and_handler(tmp_path):
    seed_004(torch.profiler, str(tmp_path / "torch"))
    prof = seed_004(tp, str(tmp_path / "stepprof"))
    want, got = trace_files(str(tmp_path / "torch")), trace_files(str(tmp_path / "stepprof"))
    assert len(got) == len(want) == 1
    assert re.search(r"\.\d+\.pt\.trace\.json$", got[0])
    trace = load(got[0])
    assert step_names(trace) == step_names(load(want[0])) == \
        ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"]
    assert trace["record_shapes"] == 1 and trace["with_stack"] == 1
    assert headers(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))[0] \
        == "Name"


# ---- the table: every torch sort key, torch's headers -------------------------

def run_loop(profiler, train, **kwargs):
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU], **kwargs) as prof:
        for _ in range(3):
            train()
            prof.step()
    return prof


@pytest.mark.parametrize("options", [{}, {"profile_memory": True}, {"record_shapes": True},
                                     {"with_stack": True}])
def test_every_sort_key_gives_torchs_headers(options, mlp):
    _, _, train = mlp
    theirs = run_loop(torch.profiler, train, **options).key_averages()
    ours = run_loop(tp, train, **options).key_averages()
    for key in SORT_KEYS:
        want = theirs.table(sort_by=key, row_limit=5)
        got = ours.table(sort_by=key, row_limit=5)
        assert headers(got) == headers(want), key
        assert got.rstrip("\n").split("\n")[-1].startswith("Self CPU time total: ")


def test_sort_keys_order_the_rows(mlp):
    _, _, train = mlp
    prof = run_loop(tp, train)
    table = prof.key_averages().table(sort_by="count", row_limit=-1)
    assert "ProfilerStep*" in table and "forward" in table
    with pytest.raises(AttributeError):
        prof.key_averages().table(sort_by="no_such_key")
    assert prof.key_averages().table(row_limit=0).count("\n") == 5  # 3 rules, header, footer
    averages = {a.key: a for a in prof.key_averages()}
    # the 4th step runs from the last step() to stop(), as under torch's schedules
    assert averages["forward"].count == 3 and averages["ProfilerStep*"].count == 4
    assert averages["ProfilerStep*"].cpu_time_total >= averages["forward"].cpu_time_total > 0


def test_table_header_and_top_level_rows(mlp):
    _, _, train = mlp
    prof = run_loop(tp, train)
    table = prof.key_averages().table(header="My header", top_level_events_only=True)
    lines = table.split("\n")
    assert lines[1] == "My header"
    assert lines[0] == lines[2] == "=" * (len(lines[4]) - 2)
    assert lines[3] == "This report only display top-level ops statistics"
    rows = [line.split()[0] for line in lines[7:] if line and not line.startswith(("-", "Self"))]
    assert rows == ["ProfilerStep*"]  # forward is always inside a step


def test_table_name_width_and_time_unit_as_torch(mlp):
    _, _, train = mlp
    theirs = run_loop(torch.profiler, train).key_averages()
    ours = run_loop(tp, train).key_averages()
    for unit in ("s", "ms", "us"):
        for averages in (theirs, ours):
            footer = averages.table(time_unit=unit).rstrip("\n").split("\n")[-1]
            assert re.fullmatch(r"Self CPU time total: \d+\.\d{3}" + unit, footer), footer
    # a narrow name column: both 10 wide, names cut to 7 + "..."
    for averages in (theirs, ours):
        first = averages.table(max_name_column_width=10).split("\n")[0]
        assert first.startswith("-" * 10 + "  -")
    assert "Profile...  " in ours.table(max_name_column_width=10)
    # None: as wide as the longest name + 4, whatever the span holds
    wide = ours.table(max_name_column_width=None)
    longest = max(len(a.key) for a in ours)
    assert wide.split("\n")[0].startswith("-" * (longest + 4) + "  -")


# ---- objects, arguments, events, files ----------------------------------------

def test_enums_match_torchs():
    for member in torch.profiler.ProfilerActivity.__members__.values():
        assert tp.ProfilerActivity[member.name].value == int(member.value)
    for member in torch.profiler.ProfilerAction:
        assert tp.ProfilerAction[member.name].value == member.value
    assert tp.ProfilerActivity.CPU in tp.supported_activities()


def test_schedule_gives_torchs_actions():
    ours = tp.schedule(wait=2, warmup=1, active=2, repeat=2, skip_first=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.profiler.schedule(wait=2, warmup=1, active=2, repeat=2, skip_first=1)
    assert [ours(s).name for s in range(14)] == [theirs(s).name for s in range(14)]


def test_every_torch_constructor_argument_is_accepted():
    params = inspect.signature(torch.profiler.profile.__init__).parameters
    kwargs = {name: p.default for name, p in params.items()
              if name != "self" and p.kind == p.KEYWORD_ONLY}
    assert {"activities", "schedule", "on_trace_ready", "record_shapes", "profile_memory",
            "with_stack", "with_flops", "with_modules", "experimental_config",
            "execution_trace_observer", "acc_events", "custom_trace_id_callback"} <= set(kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", StepprofWarning)
        prof = tp.profile(**kwargs)
    assert prof.step_num == 0 and prof.current_action == tp.ProfilerAction.RECORD
    with pytest.warns(StepprofWarning, match="no_such_option"):
        tp.profile(no_such_option=1)
    with pytest.warns(StepprofWarning, match="MTIA"):
        tp.profile(activities=[tp.ProfilerActivity.CPU, tp.ProfilerActivity.MTIA])
    with pytest.warns(StepprofWarning, match="deprecated"):
        tp.profile(use_cuda=False)


def test_user_schedules_and_handlers(mlp, tmp_path):
    _, _, train = mlp
    seen = []

    def my_schedule(step):  # torch's enum, as a torch user's function returns it
        return torch.profiler.ProfilerAction.RECORD_AND_SAVE if step % 2 else \
            torch.profiler.ProfilerAction.RECORD

    for profiler in (torch.profiler, tp):
        with profiler.profile(schedule=my_schedule,
                              on_trace_ready=lambda p: seen.append(p.step_num)) as p:
            for _ in range(4):
                train()
                p.step()
    # R&S at steps 1 and 3 (delivered by the step() after them); step 4
    # records and is delivered at stop, under both.
    assert seen == [2, 4, 4] * 2

    def bad_schedule(step):
        return torch.profiler.ProfilerAction.DEVICE_STOPPED

    prof = tp.profile(schedule=bad_schedule)
    with pytest.raises(ValueError, match="DEVICE_STOPPED"):
        prof.start()
    with pytest.raises(TypeError):
        tp.profile(schedule=3)


def test_events_fields(mlp):
    _, _, train = mlp
    prof = run_loop(tp, train)
    events = prof.events()
    steps = [e for e in events if e.name.startswith("ProfilerStep#")]
    forwards = [e for e in events if e.name == "forward"]
    assert [e.name for e in steps] == [f"ProfilerStep#{i}" for i in range(4)]
    assert len(forwards) == 3
    for e in forwards:
        assert e.cpu_parent is not None and e.cpu_parent.name.startswith("ProfilerStep#")
        assert e in e.cpu_parent.cpu_children
        assert e.count == 1 and e.cpu_time_total > 0
        assert e.cpu_time_total == pytest.approx(e.end_us - e.start_us)
        assert 0 <= e.start_us < e.end_us
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total
        assert e.key == e.name and e.device_time_total == 0
    assert [e.id for e in events] == list(range(len(events)))


def test_export_chrome_trace_with_metadata(mlp, tmp_path):
    _, _, train = mlp
    prof = run_loop(tp, train)
    prof.add_metadata("run", 'name with "quotes"')
    prof.add_metadata_json("config", '{"lr": 0.01, "layers": [8, 16]}')
    with pytest.warns(StepprofWarning, match="not valid JSON"):
        prof.add_metadata_json("broken", "{nope")
    for name in ("plain.json", "packed.json.gz", "w.pt.trace.json"):
        path = str(tmp_path / name)
        prof.export_chrome_trace(path)
        trace = load(path)
        assert trace["run"] == 'name with "quotes"'
        assert trace["config"] == {"lr": 0.01, "layers": [8, 16]}
        assert trace["broken"] == "{nope"
        assert trace["traceName"] == path
        assert step_names(trace) == [f"ProfilerStep#{i}" for i in range(4)]
    assert sorted(os.listdir(tmp_path)) == ["packed.json.gz", "plain.json", "w.pt.trace.json"]
    with open(str(tmp_path / "packed.json.gz"), "rb") as f:
        assert f.read(2) == b"\x1f\x8b"


def test_metadata_reaches_handler_traces(mlp, tmp_path):
    _, _, train = mlp
    for handler in (torch.profiler.tensorboard_trace_handler(str(tmp_path / "torch_h")),
                    tp.tensorboard_trace_handler(str(tmp_path / "ours_h"), use_gzip=True)):
        with tp.profile(schedule=tp.schedule(wait=0, warmup=1, active=1, repeat=1),
                        on_trace_ready=handler) as prof:
            prof.add_metadata("k", "v")
            for _ in range(2):
                train()
                prof.step()
    for d, suffix in (("torch_h", ".pt.trace.json"), ("ours_h", ".pt.trace.json.gz")):
        files = trace_files(str(tmp_path / d))
        assert len(files) == 1 and files[0].endswith(suffix)
        assert load(files[0])["k"] == "v"


def test_export_stacks_folded(mlp, tmp_path):
    _, _, train = mlp
    path = str(tmp_path / "stacks.txt")
    with pytest.raises(AssertionError):  # torch's: stacks need with_stack
        run_loop(tp, train).export_stacks(path, "self_cpu_time_total")
    prof = run_loop(tp, train, with_stack=True)
    prof.export_stacks(path, "self_cpu_time_total")
    with open(path) as f:
        lines = f.read().splitlines()
    assert lines and all(re.fullmatch(r"[^ ;]+(;[^ ;]+)* \d+", line) for line in lines)
    assert any(re.search(r"\(\d+\):_train;nn.Module:_Sequential_0;", line) for line in lines)
    with pytest.raises(ValueError):
        prof.export_stacks(path, "wall_time")
    with pytest.raises(ValueError):
        prof.export_memory_timeline(str(tmp_path / "mem.html"))


def test_import_does_not_load_torch_and_no_span_is_an_error(tmp_path):
    import subprocess
    import sys
    code = "import sys, stepprof.torch_profiler; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
    prof = tp.profile()
    with pytest.raises(RuntimeError, match="no span"):
        prof.export_chrome_trace(str(tmp_path / "t.json"))
    assert prof.key_averages().table() == "" and prof.events() == []


def test_trace_id_preset_metadata_and_toggle(mlp, tmp_path):
    _, _, train = mlp
    prof = tp.profile(custom_trace_id_callback=lambda: "run-7")
    assert prof.get_trace_id() == "run-7"
    prof.set_custom_trace_id_callback(lambda: "run-8")
    assert prof.get_trace_id() == "run-8"
    prof.preset_metadata_json("preset", "[1, 2]")
    with prof:
        train()
        with pytest.warns(StepprofWarning, match="whole span"):
            prof.toggle_collection_dynamic(False, [tp.ProfilerActivity.CPU])
    path = str(tmp_path / "t.json")
    prof.export_chrome_trace(path)
    assert load(path)["preset"] == [1, 2]


def test_stop_in_warmup_says_nothing_as_torch(tmp_path):
    """torch says nothing when stopped in a warm-up step (nothing saved);
    paddle's dialect warns there, the torch dialect does not."""
    import warnings
    import stepprof.torch_profiler as tp
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prof = tp.profile(schedule=tp.schedule(wait=0, warmup=2, active=1), on_trace_ready=None)
        prof.start()
        prof.step()
        prof.stop()
    assert [str(w.message) for w in caught if "state transition" in str(w.message)] == []
    assert prof.step_num == 1
