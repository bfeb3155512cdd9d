"""Runs tests/examples/mpi_colls (every wrapped collective, on MPI_COMM_WORLD
and on split, duplicated and named communicators) with 4 Open MPI ranks and
libstepprof_mpi.so preloaded, and checks what each rank's trace says of
each call: its range, collective, process group, group size, the bytes this
rank sends (docs/c-api.md, "MPI programs") and its seq on its communicator.
Run again with STEPPROF_MPI_RECORDS=4, each rank describes its first four
collectives only, keeps the rest as bare ranges, and says so twice on
stderr: once when the buffer fills, once at exit with the count.

usage: mpi_colls_check.py MPIRUN PROGRAM WRAPPER OUTDIR   (no arguments: MPI
was not found at configure time; the test is skipped, exit 77)."""
import glob
import json
import os
import shutil
import sys

from mpi_check import RANKS, SKIP, fail
from mpi_plain_check import run


def expected(r):
    w, n = "MPI_COMM_WORLD", RANKS
    half = f"comm0@{r % 2}"
    again = f"comm1@{0 if r < n // 2 else n // 2}"
    return [
        ("MPI_Barrier", "barrier", w, n, 0, 0),
        ("MPI_Reduce", "reduce", w, n, 10 * 4, 1),
        ("MPI_Allgather", "allgather", w, n, 3 * 8, 2),
        ("MPI_Allgather", "allgather", w, n, 2 * 4, 3),  # in place: recvcount
        ("MPI_Gather", "gather", w, n, 5, 4),
        ("MPI_Scatter", "scatter", w, n, 4 * 4, 5),
        ("MPI_Alltoall", "alltoall", w, n, 2 * 4 * n, 6),
        ("MPI_Reduce_scatter_block", "reduce_scatter", w, n, 3 * 4 * n, 7),
        ("MPI_Allreduce", "allreduce", half, n // 2, 4, 0),
        ("MPI_Bcast", "broadcast", "grads", n, 7, 0),
        ("MPI_Allreduce", "allreduce", again, n // 2, 4, 0),
    ]


def main(argv):
    if len(argv) != 5 or not argv[1] or not os.path.exists(argv[2]):
        print("skipped: Open MPI (mpicc, mpirun) was not found when the build was configured; "
              "install it with `sh scripts/ensure-deps.sh mpi` and reconfigure")
        return SKIP
    mpirun, exe, wrapper, out = argv[1:]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    run(mpirun, exe, wrapper, out)
    check(out, expected)
    shutil.rmtree(out)
    os.makedirs(out)
    said = run(mpirun, exe, wrapper, out, ["STEPPROF_MPI_RECORDS=4"]).splitlines()
    bare = (None,) * 5
    check(out, lambda r: expected(r)[:4] + [(e[0],) + bare for e in expected(r)[4:]])
    full = [s for s in said if "stepprof_mpi: more than 4 collectives in one span" in s]
    count = [s for s in said
             if "stepprof_mpi: 7 collectives were not described (over 4 per span)" in s]
    if len(full) != RANKS or len(count) != RANKS:
        fail("with STEPPROF_MPI_RECORDS=4, want one line when the buffer fills and one at exit "
             "per rank:\n" + "\n".join(said))
    print(f"ok: {RANKS} ranks, {len(expected(0))} collectives each, as described; capped at 4")
    return 0


def check(out, want_of):
    for r in range(RANKS):
        paths = glob.glob(os.path.join(out, f"*_rank{r}_time_*.paddle_trace.json"))
        if len(paths) != 1:
            fail(f"rank {r}: {len(paths)} traces in {out}")
        with open(paths[0]) as f:
            trace = json.load(f)
        got = [(e["name"], e["args"].get("Collective name"), e["args"].get("Process Group Name"),
                e["args"].get("Group size"), e["args"].get("bytes"), e["args"].get("seq"))
               for e in sorted(trace["traceEvents"], key=lambda e: e.get("ts", 0))
               if e.get("ph") == "X" and e.get("name", "").startswith("MPI_")]
        want = want_of(r)
        if got != want:
            fail(f"rank {r}:\n got  {got}\n want {want}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
