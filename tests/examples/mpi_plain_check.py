"""Runs examples/mpi_plain, an MPI program without stepprof, with 4 Open MPI
ranks and libstepprof_mpi.so preloaded (STEPPROF_STEPS=0:1: the whole run,
written at exit), and checks each rank's trace: the wrapper's MPI_ symbols
won over libmpi's (every collective is a Communication range), each
MPI_Allreduce and MPI_Bcast carries the collective, group, group size, bytes
and seq, the same call has the same seq on every rank, and distributedInfo
names the rank, the host, one job and the "mpi" backend. Then `stepprof
merge` matches every collective of every rank, and `stepprof summary` of the
merge is the one of the four files, with all eight operations matched.

usage: mpi_plain_check.py MPIRUN EXAMPLE WRAPPER OUTDIR STEPPROF   (no
arguments: MPI was not found at configure time; the test is skipped, exit 77)."""
import glob
import json
import os
import shutil
import subprocess
import sys

from mpi_check import RANKS, SKIP, check_merge, fail

# examples/mpi_plain: 6 iterations, each an MPI_Allreduce of 2048 floats, and
# an MPI_Bcast of one double after iterations 2 and 5.
CALLS = ["MPI_Allreduce"] * 3 + ["MPI_Bcast"] + ["MPI_Allreduce"] * 3 + ["MPI_Bcast"]
ARGS = {"MPI_Allreduce": ("allreduce", 2048 * 4), "MPI_Bcast": ("broadcast", 8)}


def run(mpirun, exe, wrapper, out, extra=()):
    """Runs exe on RANKS ranks with the wrapper and the zero-code variables,
    plus extra (NAME=VALUE, passed with -x); returns its output, which must
    say nothing of the wrapper's unless extra is given."""
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("STEPPROF_") or k in (
                "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "TORCHELASTIC_RUN_ID",
                "SLURM_JOB_ID", "MASTER_ADDR", "MASTER_PORT", "LD_PRELOAD"):
            del env[k]
    cmd = [mpirun, "--allow-run-as-root", "--oversubscribe", "-np", str(RANKS),
           "-x", f"LD_PRELOAD={wrapper}", "-x", "STEPPROF_STEPS=0:1", "-x", "STEPPROF_RANKS=all",
           "-x", f"STEPPROF_OUT={out}"]
    for setting in extra:
        cmd += ["-x", setting]
    cmd.append(exe)
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=120)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}")
    if not extra and "stepprof_mpi:" in p.stdout:
        fail(f"the wrapper complained:\n{p.stdout}")
    return p.stdout


def check_rank(out, r, host):
    paths = glob.glob(os.path.join(out, f"*_rank{r}_time_*.paddle_trace.json"))
    if len(paths) != 1:
        fail(f"rank {r}: {len(paths)} traces in {out}: {os.listdir(out)}")
    path = paths[0]
    with open(path) as f:
        trace = json.load(f)
    info = trace["distributedInfo"]
    want = {"backend": "mpi", "rank": r, "world_size": RANKS, "local_rank": r,
            "local_world_size": RANKS, "hostname": host}
    for k, v in want.items():
        if info.get(k) != v:
            fail(f"{path}: distributedInfo[{k!r}] is {info.get(k)!r}, want {v!r}")
    comms = sorted((e for e in trace["traceEvents"]
                    if e.get("ph") == "X" and e.get("name", "").startswith("MPI_")),
                   key=lambda e: e["ts"])
    if [e["name"] for e in comms] != CALLS:
        fail(f"{path}: MPI ranges {[e['name'] for e in comms]}, want {CALLS} (is the wrapper's "
             f"MPI_Allreduce the one the program calls?)")
    for e in comms:
        coll, nbytes = ARGS[e["name"]]
        want = {"Event Type": "Communication", "Collective name": coll,
                "Process Group Name": "MPI_COMM_WORLD", "Group size": RANKS, "bytes": nbytes}
        for k, v in want.items():
            if e["args"].get(k) != v:
                fail(f"{path}: {e['name']} at {e['ts']}: {k!r} is {e['args'].get(k)!r}, want {v!r}")
    return path, info.get("job"), [e["args"].get("seq") for e in comms]


def main(argv):
    if len(argv) != 6 or not argv[1] or not os.path.exists(argv[2]):
        print("skipped: Open MPI (mpicc, mpirun) was not found when the build was configured; "
              "install it with `sh scripts/ensure-deps.sh mpi` and reconfigure")
        return SKIP
    mpirun, exe, wrapper, out, cli = argv[1:]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    run(mpirun, exe, wrapper, out)
    host = os.uname().nodename
    files, jobs, seqs = [], set(), {}
    for r in range(RANKS):
        path, job, seqs[r] = check_rank(out, r, host)
        files.append(path)
        jobs.add(job)
    if len(jobs) != 1 or not all(jobs):
        fail(f"the ranks name different jobs, or none: {jobs}")
    if any(s != list(range(len(CALLS))) for s in seqs.values()):
        fail(f"seq differs between ranks or is not 0..{len(CALLS) - 1}: {seqs}")
    check_merge(cli, files, out, ARGS, len(CALLS))
    print(f"ok: {RANKS} ranks, {len(CALLS)} collectives each, seq 0..{len(CALLS) - 1} on every "
          "rank; merged and summarized")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
