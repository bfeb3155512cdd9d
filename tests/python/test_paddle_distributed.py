"""paddle.distributed on CPU under stepprof.profiler: two ranks started by
paddle.distributed.launch (gloo) each write a trace whose distributedInfo
names its rank of 2, its local rank, the host, the gloo backend and one job
(the launcher's PADDLE_MASTER) shared by both. paddle's CPU collectives
pass through no host tracer event, so they are not in the trace."""
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
