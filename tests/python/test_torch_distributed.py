"""torch.distributed under stepprof.profiler: a real 4-rank gloo DDP loop
(tests/python/ddp_mlp.py, started by torchrun) writes one trace per rank.
Each names its rank, world size, local rank and size, host, backend and
torchrun's job; its all-reduces are Communication ranges carrying the
collective, the process group, the bytes and a seq that is the same on
every rank for the same collective, on the range where gloo runs it; and the .json.gz and .pb copies load
back with the same metadata and collectives."""
import os
import socket
import subprocess
import sys

import pytest

from conftest import load_trace

HERE = os.path.dirname(os.path.abspath(__file__))
RANKS = 4


def comm_ranges(trace):
    return sorted((e for e in trace["traceEvents"]
                   if e.get("ph") == "X" and e.get("args", {}).get("Event Type") == "Communication"
                   and "Collective name" in e["args"]), key=lambda e: e["ts"])


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    pytest.importorskip("torch", reason="torch is not installed")
    import torch.distributed as dist
    if not dist.is_available():
        pytest.skip("this torch has no torch.distributed")
    out = tmp_path_factory.mktemp("ddp")
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                        "MASTER_PORT", "TORCHELASTIC_RUN_ID")}
    env["OMP_NUM_THREADS"] = "1"
    r = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                        "--nproc_per_node", str(RANKS), os.path.join(HERE, "ddp_mlp.py"), str(out)],
                       env=env, cwd=str(out), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    return out, {rank: load_trace(str(out / f"rank{rank}.json")) for rank in range(RANKS)}


def test_torch_distributed_each_rank_names_itself(traces):
    _, by_rank = traces
    jobs = set()
    for rank, trace in by_rank.items():
        info = trace["distributedInfo"]
        assert list(info) == ["backend", "rank", "world_size", "local_rank", "local_world_size",
                              "hostname", "job"], info
        assert info["backend"] == "gloo"
        assert (info["rank"], info["world_size"]) == (rank, RANKS)
        assert (info["local_rank"], info["local_world_size"]) == (rank, RANKS)
        assert info["hostname"] == socket.gethostname()
        jobs.add(info["job"])
    assert len(jobs) == 1 and "" not in jobs, jobs  # torchrun's run id, the same for all


def test_torch_distributed_allreduces_are_typed_collectives(traces):
    _, by_rank = traces
    seqs = {}
    for rank, trace in by_rank.items():
        comms = comm_ranges(trace)
        allreduces = [e for e in comms if e["args"]["Collective name"] == "allreduce"]
        assert len(allreduces) >= 3, [e["name"] for e in comms]  # one bucket a step at least
        # The record is on the work's range (gloo's worker thread: where the
        # collective runs and ends), not on the operator that queued it.
        ops = [e for e in trace["traceEvents"] if e.get("ph") == "X"
               and e["name"] == "c10d::allreduce_"]
        assert ops and all(e["args"]["Event Type"] == "Communication"
                           and "Collective name" not in e["args"] for e in ops), ops[:2]
        for e in allreduces:
            a = e["args"]
            assert e["name"] == "gloo:all_reduce"
            assert e["tid"] not in {o["tid"] for o in ops}, e
            assert a["Process Group Name"] == "0", a  # the default group
            assert a["Group size"] == RANKS, a
            assert a["bytes"] > 0 and a["bytes"] % 4 == 0, a  # float32 gradients
            assert isinstance(a["seq"], int) and a["seq"] >= 0, a
        seqs[rank] = [(e["args"]["seq"], e["args"]["bytes"]) for e in allreduces]
        assert len({s for s, _ in seqs[rank]}) == len(seqs[rank]), seqs[rank]  # distinct
    # The same collective has the same seq (and size) on every rank.
    assert all(s == seqs[0] for s in seqs.values()), seqs


def comm_args(trace):
    keys = ("Collective name", "Process Group Name", "Group size", "bytes", "seq")
    return [(e["name"], tuple(e["args"].get(k) for k in keys)) for e in comm_ranges(trace)]


def test_torch_distributed_copies_load_back(traces, tmp_path):
    """The .json.gz and .pb copies hold the same metadata and collectives:
    `stepprof info` prints the rank line, and converted back to JSON they
    give the same distributedInfo and collective args."""
    out, by_rank = traces
    cli = os.path.join(HERE, "..", "..", "build", "stepprof")
    if not os.path.exists(cli):
        pytest.skip("no build/stepprof (cmake --build build) to read the copies back")
    for suffix in ("json.gz", "pb"):
        for rank in (0, RANKS - 1):
            path = str(out / f"rank{rank}.{suffix}")
            r = subprocess.run([cli, "info", path], capture_output=True, text=True, timeout=60)
            assert r.returncode == 0, r.stderr
            want = (f"rank: {rank} of {RANKS} (local {rank} of {RANKS}), "
                    f"host: {socket.gethostname()}, backend: gloo, job: "
                    f"{by_rank[rank]['distributedInfo']['job']}\n")
            assert want in r.stdout, r.stdout
            back = str(tmp_path / f"back{rank}.{suffix}.json")
            r = subprocess.run([cli, "convert", path, "-o", back], capture_output=True, text=True,
                               timeout=60)
            assert r.returncode == 0, r.stderr
            again = load_trace(back)
            assert again["distributedInfo"] == by_rank[rank]["distributedInfo"]
            assert comm_args(again) == comm_args(by_rank[rank])
