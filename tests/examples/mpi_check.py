"""Runs examples/mpi_allreduce with 4 Open MPI ranks and checks each rank's
trace: distributedInfo names its rank of 4, its local rank, the host, the
"mpi" backend and one job shared by all ranks; every MPI_Allreduce is a
Communication range whose args give the collective, group, bytes and seq,
and the same call has the same seq on every rank. Then `stepprof merge` joins
the four files: every rank is a process of the merged trace, every
all-reduce (by seq) is on every rank and the merge matched them all; and
`stepprof summary` of the merge is the one of the four files, with six
operations matched on every rank.

usage: mpi_check.py MPIRUN EXAMPLE OUTDIR STEPPROF   (no arguments: MPI was
not found at configure time, and the test is skipped, exit 77)."""
import json
import os
import shutil
import subprocess
import sys

SKIP = 77
RANKS = 4


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def main(argv):
    if len(argv) != 5 or not argv[1] or not os.path.exists(argv[2]):
        print("skipped: Open MPI (mpicc, mpirun) was not found when the build was configured; "
              "install it with `sh scripts/ensure-deps.sh mpi` and reconfigure")
        return SKIP
    mpirun, exe, out, cli = argv[1], argv[2], argv[3], argv[4]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    env = dict(os.environ)
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "TORCHELASTIC_RUN_ID",
              "SLURM_JOB_ID", "MASTER_ADDR", "MASTER_PORT", "STEPPROF_DIST_BACKEND"):
        env.pop(k, None)
    cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(RANKS), exe, out]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=120)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}")
    host = os.uname().nodename
    jobs, seqs = set(), {}
    for r in range(RANKS):
        path = os.path.join(out, f"rank{r}.json")
        with open(path) as f:
            raw = f.read()
        trace = json.loads(raw)
        info = trace["distributedInfo"]
        want = {"backend": "mpi", "rank": r, "world_size": RANKS, "local_rank": r,
                "local_world_size": RANKS, "hostname": host}
        for k, v in want.items():
            if info.get(k) != v:
                fail(f"{path}: distributedInfo[{k!r}] is {info.get(k)!r}, want {v!r}")
        if not info.get("job"):
            fail(f"{path}: no job id (OMPI_MCA_ess_base_jobid)")
        jobs.add(info["job"])
        if f'"rank": {r},' not in raw.split('"local_rank"')[0]:
            fail(f"{path}: HTA's \"rank\": regex would not find rank {r} first")
        comms = [e for e in trace["traceEvents"]
                 if e.get("ph") == "X" and e.get("name") == "MPI_Allreduce"]
        if len(comms) != 6:
            fail(f"{path}: {len(comms)} MPI_Allreduce ranges, want 6")
        for e in comms:
            a = e["args"]
            want = {"Event Type": "Communication", "Collective name": "allreduce",
                    "Process Group Name": "MPI_COMM_WORLD", "Group size": RANKS, "bytes": 4096 * 4}
            for k, v in want.items():
                if a.get(k) != v:
                    fail(f"{path}: MPI_Allreduce at {e['ts']}: {k!r} is {a.get(k)!r}, want {v!r}")
        seqs[r] = [e["args"]["seq"] for e in sorted(comms, key=lambda e: e["ts"])]
    if len(jobs) != 1:
        fail(f"the ranks name different jobs: {jobs}")
    if any(s != seqs[0] for s in seqs.values()) or seqs[0] != list(range(6)):
        fail(f"seq differs between ranks or is not 0..5: {seqs}")
    check_merge(cli, [os.path.join(out, f"rank{r}.json") for r in range(RANKS)], out,
                {"MPI_Allreduce"}, 6)
    print(f"ok: {RANKS} ranks, job {jobs.pop()}, seq {seqs[0]} on every rank; merged and summarized")
    return 0


def check_merge(cli, files, out, names, calls):
    """`stepprof merge` of the rank files: every rank's collectives (ranges
    named in names, calls per rank, seq 0..calls-1) matched with rank 0's and
    on every rank of the merge; its cross-rank summary is the files'."""
    job = os.path.join(out, "job.json")
    p = subprocess.run([cli, "merge", *reversed(files), "-o", job], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=120)
    if p.returncode != 0:
        fail(f"stepprof merge exited {p.returncode}:\n{p.stdout}")
    if f"({calls * (RANKS - 1)} pairs)" not in p.stdout:
        fail(f"the merge did not match every collective of every rank with rank 0's:\n{p.stdout}")
    with open(job) as f:
        merged = json.load(f)
    ranks = [r["rank"] for r in merged["stepprof_merge"]["ranks"]]
    if ranks != list(range(RANKS)):
        fail(f"merged ranks {ranks}")
    by_seq = {}
    for e in merged["traceEvents"]:
        if e.get("ph") == "X" and e.get("name") in names:
            by_seq.setdefault(e["args"]["seq"], set()).add(e["pid"])
    if sorted(by_seq) != list(range(calls)) or any(v != set(range(RANKS)) for v in by_seq.values()):
        fail(f"each collective on every rank of the merge: {by_seq}")
    own = subprocess.run([cli, "summary", *files], stdout=subprocess.PIPE, text=True, timeout=120)
    back = subprocess.run([cli, "summary", job], stdout=subprocess.PIPE, text=True, timeout=120)
    if own.returncode or back.returncode or own.stdout != back.stdout:
        fail(f"summary of the merge differs from the rank files':\n{back.stdout}\n---\n{own.stdout}")
    if f"{calls} operations matched on every rank" not in own.stdout:
        fail(f"the cross-rank summary did not match the collectives:\n{own.stdout}")

if __name__ == "__main__":
    sys.exit(main(sys.argv))
