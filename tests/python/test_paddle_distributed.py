"""paddle.distributed on CPU under stepprof.profiler: two ranks started by
paddle.distributed.launch (gloo) each write a trace whose distributedInfo
names its rank of 2, its local rank, the host, the gloo backend and one job
(the launcher's PADDLE_MASTER) shared by both. paddle's CPU collectives
pass through no host tracer event; stepprof wraps paddle.distributed's
functions while a span records (python/stepprof/_paddle_comm.py), so each
all_reduce is a Communication range with its collective, group, size,
bytes and seq, the same seq on both ranks, and the cross-rank summary
matches them."""
import json
import os
import socket
import subprocess
import sys

import pytest

SCRIPT = """\
import sys
import paddle
import paddle.distributed as dist
import stepprof.profiler as sp

paddle.set_device("cpu")
dist.init_parallel_env()
x = paddle.ones([64])
with sp.Profiler(scheduler=(1, 3), on_trace_ready=None) as p:
    for _ in range(4):
        dist.all_reduce(x)
        p.step()
p.export(f"{sys.argv[1]}/rank{dist.get_rank()}.json")
"""


def test_paddle_distributed_ranks_name_themselves(tmp_path):
    pytest.importorskip("paddle", reason="paddle is not installed")
    (tmp_path / "pd.py").write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PADDLE_") and k not in (
               "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
               "TORCHELASTIC_RUN_ID", "OMPI_MCA_ess_base_jobid", "SLURM_JOB_ID")}
    r = subprocess.run([sys.executable, "-m", "paddle.distributed.launch", "--nproc_per_node", "2",
                        "pd.py", str(tmp_path)], cwd=str(tmp_path), env=env, capture_output=True,
                       text=True, timeout=300)
    logs = "".join((tmp_path / "log" / f).read_text() for f in os.listdir(tmp_path / "log")
                   if f.startswith("workerlog")) if (tmp_path / "log").is_dir() else ""
    assert r.returncode == 0, (r.stderr[-3000:], logs[-3000:])
    jobs = set()
    for rank in (0, 1):
        with open(tmp_path / f"rank{rank}.json") as f:
            info = json.load(f)["distributedInfo"]
        assert info == {"backend": "gloo", "rank": rank, "world_size": 2, "local_rank": rank,
                        "local_world_size": 2, "hostname": socket.gethostname(),
                        "job": info["job"]}, info
        jobs.add(info["job"])
    assert len(jobs) == 1 and "" not in jobs, jobs
    seqs = []
    for rank in (0, 1):
        with open(tmp_path / f"rank{rank}.json") as f:
            events = json.load(f)["traceEvents"]
        comms = sorted((e for e in events if e.get("ph") == "X" and e.get("name") == "all_reduce"),
                       key=lambda e: e["ts"])
        assert len(comms) == 2, comms  # steps 1 and 2 recorded, one all_reduce each
        for e in comms:
            a = e["args"]
            assert (a.get("Event Type"), a.get("Collective name"), a.get("Process Group Name"),
                    a.get("Group size"), a.get("bytes")) == ("Communication", "allreduce", "0", 2,
                                                              64 * 4), a
        seqs.append([e["args"]["seq"] for e in comms])
    assert seqs[0] == seqs[1] == [0, 1], seqs
    cli = os.path.join(os.path.dirname(__file__), "..", "..", "build", "stepprof")
    out = subprocess.run([cli, "summary", str(tmp_path / "rank0.json"), str(tmp_path / "rank1.json")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "2 operations matched on every rank (by process group and seq)" in out.stdout, out.stdout
