"""test_autorun.py: the decisions stepprof._autorun makes before it starts
the injected profiler, in process (the runs themselves are in
test_zero_code.py): which Python is a distributed launcher's own process,
read from the interpreter's arguments."""
import sys

import pytest

from stepprof import _autorun


@pytest.mark.parametrize("argv, name", [
    (["python", "-m", "torch.distributed.run", "--standalone", "train.py"], "torch.distributed.run"),
    (["python", "-u", "-X", "dev", "-mtorch.distributed.launch", "train.py"],
     "torch.distributed.launch"),
    (["python", "/venv/bin/torchrun", "--nproc_per_node", "2", "train.py"], "torchrun"),
    (["python", "-W", "ignore", "-B", "train.py", "-m", "torchrun"], "train.py"),
    (["python", "-c", "import torchrun"], ""),
    (["python"], ""),
])
def test_autorun_main_name_reads_the_interpreter_arguments(monkeypatch, argv, name):
    monkeypatch.setattr(sys, "orig_argv", argv, raising=False)
    assert _autorun._main_name() == name

