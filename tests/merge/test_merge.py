"""test_merge.py: `stepprof merge` end to end on synthetic rank files (make_ranks.py).

Run by ctest as: test_merge.py STEPPROF_BINARY WORK_DIR. Checks the merged
layout (one process per rank, in rank order, every event), the clock alignment
(a known 500 us shift recovered to within 20 us; none applied without one) and
each kind of bad input. Deterministic: the files are generated from a seed and
nothing is timed.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_ranks  # noqa: E402

CLI = None
WORK = None


def run(*args):
    p = subprocess.run([CLI, "merge", *args], capture_output=True, text=True, check=False)
    return p.returncode, p.stdout, p.stderr


def fresh(name, *gen_args):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    make_ranks.main([d, *gen_args])
    return d


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def source_events(path):
    return load(path)["traceEvents"]


def files(d, n=4, ext=".json"):
    return [os.path.join(d, f"rank{r}{ext}") for r in range(n)]


def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")


def replaced(ev):
    return ev.get("ph") == "M" and ev.get("name") in ("process_name", "process_sort_index")


def rank_of(pid):
    return pid if pid < 1000 else (pid - 1000) // 100


def test_four_ranks():
    d = fresh("four", "--ranks", "4", "--steps", "20", "--gpu")
    out = os.path.join(d, "job.json")
    rc, so, se = run(*files(d), "-o", out)
    check(rc == 0, f"merge of 4 ranks exits 0, got {rc}: {se}")
    m = load(out)
    evs = m["traceEvents"]
    names = [(e["pid"], e["args"]["name"]) for e in evs if e.get("name") == "process_name"]
    host_names = [n for p, n in names if p < 1000]
    check(host_names == [f"rank {r} (vm-a, pid {4000 + r})" for r in range(4)],
          f"one host process per rank, in rank order: {host_names}")
    check([p for p, n in names if p >= 1000] == [1000 + 100 * r for r in range(4)],
          f"GPU rows at 1000 + 100*rank + device: {names}")
    sort = {e["pid"]: e["args"]["sort_index"] for e in evs if e.get("name") == "process_sort_index"}
    check(all(sort[p] == rank_of(p) for p in sort) and len(sort) == 8, f"sort index = rank: {sort}")
    meta = m["stepprof_merge"]
    check([r["rank"] for r in meta["ranks"]] == [0, 1, 2, 3], "stepprof_merge lists the ranks in order")
    check(meta["aligned"] is False and "one host" in meta["reason"], f"same host: no alignment: {meta}")
    # Every event of every rank, once, in its rank's processes, with ts untouched.
    seen_ids = {}
    for r, path in enumerate(files(d)):
        src = [e for e in source_events(path) if not replaced(e)]
        got = [e for e in evs if not replaced(e) and isinstance(e.get("pid"), int) and rank_of(e["pid"]) == r]
        check(len(got) == len(src) == meta["ranks"][r]["events"],
              f"rank {r}: {len(got)} events merged, {len(src)} in its file, {meta['ranks'][r]['events']} counted")
        for a, b in zip(src, got):
            check(a["name"] == b["name"] and a.get("ts") == b.get("ts") and a.get("args") == b.get("args"),
                  f"rank {r}: event copied as it was: {a} vs {b}")
            if "id" in b:
                seen_ids.setdefault((b["ph"], b["id"]), set()).add(r)
    check(seen_ids and all(len(v) == 1 for v in seen_ids.values()), "flow ids do not collide across ranks")
    check(len([e for e in evs if e.get("name") == "PyTorch Profiler (0)"]) == 4, "string pids join their rank")
    # The rest of the tool reads the merged file.
    p = subprocess.run([CLI, "info", out], capture_output=True, text=True, check=False)
    check(p.returncode == 0, f"stepprof info reads the merged trace: {p.stderr}")
    # Read back as ranks: the cross-rank summary of the merge is the one of
    # the rank files, line for line (one host: no clock moved).
    merged = subprocess.run([CLI, "summary", out], capture_output=True, text=True, check=False)
    own = subprocess.run([CLI, "summary", *files(d)], capture_output=True, text=True, check=False)
    check(merged.returncode == 0 and own.returncode == 0, f"summaries exit 0: {merged.stderr} {own.stderr}")
    check("Cross-rank Summary" in merged.stdout, f"a merged trace summarizes as ranks: {merged.stdout[:500]}")
    rows = [ln.split()[0] for ln in merged.stdout.split("Cross-rank Summary")[1].splitlines()[5:9]]
    check(rows == ["0", "1", "2", "3"], f"a row per rank: {rows}")
    check(merged.stdout == own.stdout, "the merge summarizes as its rank files do:\n%s\n---\n%s"
          % (merged.stdout, own.stdout))
    # One rank of the merge is what its own file was: counters (a drop
    # included), thread names and devices survive the round trip.
    rewrite(files(d)[2], '"deviceProperties":[],', '"deviceProperties":[],"stepprof_counters":{"host_dropped": 7},'
            '"ExtraInfo":{"4002": "rank2-main"},')
    rc, so, se = run(*files(d), "-o", out)
    check(rc == 0, se)
    for r, path in enumerate(files(d)):
        one = subprocess.run([CLI, "summary", "--rank", str(r), out], capture_output=True, text=True, check=False)
        alone = subprocess.run([CLI, "summary", path], capture_output=True, text=True, check=False)
        check(one.returncode == 0 and one.stdout == alone.stdout,
              f"rank {r} of the merge summarizes as its file: {one.stderr}\n{one.stdout}\n---\n{alone.stdout}")
    one = subprocess.run([CLI, "summary", "--rank", "2", out], capture_output=True, text=True, check=False)
    check("host_dropped=7" in one.stdout, f"a rank's drops survive the merge: {one.stdout[-400:]}")
    p = subprocess.run([CLI, "summary", "--rank", "9", out], capture_output=True, text=True, check=False)
    check(p.returncode == 1 and "no rank 9" in p.stderr, f"a rank the merge lacks: {p.returncode} {p.stderr}")
    page = os.path.join(d, "job.html")
    p = subprocess.run([CLI, "report", out, "-o", page], capture_output=True, text=True, check=False)
    check(p.returncode == 0, f"stepprof report reads the merged trace: {p.stderr}")
    with open(page, encoding="utf-8") as fh:
        check('"ranks": {"ids": [0, 1, 2, 3]' in fh.read(), "the report of a merge shows its ranks")


def test_gzip_both_ways():
    d = fresh("gz", "--ranks", "2", "--steps", "5", "--gzip")
    out = os.path.join(d, "job.json.gz")
    rc, so, se = run(*files(d, 2, ".json.gz"), "-o", out)
    check(rc == 0, f"gzip in and out: {se}")
    with open(out, "rb") as f:
        check(f.read(2) == b"\x1f\x8b", "a .json.gz output is gzip")
    check(len(load(out)["stepprof_merge"]["ranks"]) == 2, "gzip output parses")


def ends(m, rank):
    return [e["ts"] + e["dur"] for e in m["traceEvents"]
            if e.get("pid") == rank and e.get("args", {}).get("Event Type") == "Communication"]


def test_align_recovers_shift():
    d = fresh("shift", "--ranks", "4", "--steps", "40", "--shift", "2:500")
    out = os.path.join(d, "job.json")
    rc, so, se = run("--align", *files(d), "-o", out)
    check(rc == 0, f"--align exits 0: {se}")
    m = load(out)["stepprof_merge"]
    off = m["ranks"][2]["offset_ns"]
    check(abs(off + 500000) <= 20000, f"rank 2's 500 us shift recovered to 20 us: offset {off} ns")
    check(all(abs(m["ranks"][r]["offset_ns"]) <= 20000 for r in (1, 3)), f"the others barely move: {m['ranks']}")
    check(m["aligned"] is True and m["residual_ns"]["max"] < 20000, f"aligned, residual small: {m}")
    check("rank 2: clock offset -4" in so or "rank 2: clock offset -50" in so, f"the offset is printed: {so}")
    check("residual" in so, "the residual is printed")
    merged = load(out)
    for a, b in zip(ends(merged, 0), ends(merged, 2)):
        check(abs(a - b) <= 20, f"all-reduce ends line up after alignment: {a} vs {b}")
    # Without --align the ranks claim one host: left alone, the shift stays.
    rc, so, se = run(*files(d), "-o", out)
    m = load(out)["stepprof_merge"]
    check(rc == 0 and all(r["offset_ns"] == 0 for r in m["ranks"]), "one host: no offset without --align")


def test_no_shift_applies_none():
    d = fresh("noshift", "--ranks", "4", "--steps", "40")
    out = os.path.join(d, "job.json")
    rc, so, se = run(*files(d), "-o", out)
    check(rc == 0, se)
    merged = load(out)
    m = merged["stepprof_merge"]
    check(all(r["offset_ns"] == 0 and r["drift_ppm"] == 0 for r in m["ranks"]), f"no shift applied: {m}")
    src = [e for e in source_events(files(d)[2]) if "ts" in e and not replaced(e)]
    got = [e for e in merged["traceEvents"] if e.get("pid") == 2 and not replaced(e)]
    check([e["ts"] for e in src if e.get("pid") != "Spans" and e.get("pid") != ""] ==
          [e["ts"] for e in got if e["name"] not in ("PyTorch Profiler (0)", "Record Window End")],
          "timestamps untouched")
    rc, so, se = run("--align", *files(d), "-o", out)
    m = load(out)["stepprof_merge"]
    check(all(abs(r["offset_ns"]) <= 20000 for r in m["ranks"]), f"--align without a shift: ~0: {m['ranks']}")


def test_hosts_aligned_automatically():
    d = fresh("hosts", "--ranks", "4", "--steps", "30", "--hosts", "a,a,b,b", "--shift", "2:500",
              "--shift", "3:500", "--no-seq")
    out = os.path.join(d, "job.json")
    rc, so, se = run(*files(d), "-o", out)
    check(rc == 0, se)
    m = load(out)["stepprof_merge"]
    offs = [r["offset_ns"] for r in m["ranks"]]
    check(offs[0] == 0 and offs[1] == 0, f"the reference host is left alone: {offs}")
    check(offs[2] == offs[3] and abs(offs[2] + 500000) <= 20000, f"one offset for host b: {offs}")
    check("host b (ranks 2, 3): clock offset" in so, f"per-host offset printed: {so}")
    rc, so, se = run("--no-align", *files(d), "-o", out)
    m = load(out)["stepprof_merge"]
    check(rc == 0 and not m["aligned"] and all(r["offset_ns"] == 0 for r in m["ranks"]), "--no-align")


def rewrite(path, old, new):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    check(old in text, f"{old} in {path}")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace(old, new))


def test_no_collectives():
    d = fresh("nocoll", "--ranks", "2", "--steps", "5", "--hosts", "a,b")
    for p in files(d, 2):
        rewrite(p, '"Event Type":"Communication"', '"Event Type":"Operator"')
    out = os.path.join(d, "job.json")
    rc, so, se = run(*files(d, 2), "-o", out)
    check(rc == 0, se)
    check("no collectives to align on" in se, f"says so: {se}")
    m = load(out)["stepprof_merge"]
    check(not m["aligned"] and m["reason"] == "no collectives to align on" and m["residual_ns"] is None, f"{m}")


def test_bad_inputs():
    d = fresh("bad", "--ranks", "4", "--steps", "10")
    out = os.path.join(d, "job.json")
    f = files(d)
    # Different world sizes: refused, unless forced.
    w = os.path.join(d, "world.json")
    shutil.copy(f[3], w)
    rewrite(w, '"world_size": 4', '"world_size": 8')
    rc, so, se = run(f[0], f[1], f[2], w, "-o", out)
    check(rc == 1 and "world size" in se and not os.path.exists(out), f"world sizes: {rc} {se}")
    rc, so, se = run("--force", f[0], f[1], f[2], w, "-o", out)
    check(rc == 0 and "world size" in se, f"world sizes forced: {rc} {se}")
    os.remove(out)
    # Duplicate ranks: refused, naming both files.
    dup = os.path.join(d, "dup.json")
    shutil.copy(f[1], dup)
    rc, so, se = run(*f, dup, "-o", out)
    check(rc == 1 and "rank 1 appears twice" in se and "dup.json" in se, f"duplicate: {rc} {se}")
    rc, so, se = run("--force", *f, dup, "-o", out)
    check(rc == 1 and not os.path.exists(out), "a duplicate rank is refused even with --force")
    # A missing rank: merged without it, and said.
    rc, so, se = run(f[0], f[1], f[3], "-o", out)
    m = load(out)["stepprof_merge"]
    check(rc == 0 and "rank 2" in se and "warning" in se, f"missing rank reported: {se}")
    check([r["rank"] for r in m["ranks"]] == [0, 1, 3], "the others merged")
    # Different jobs: refused unless forced, never mixed silently.
    job = os.path.join(d, "job3.json")
    shutil.copy(f[3], job)
    rewrite(job, '"job": "job-1"', '"job": "job-2"')
    os.remove(out)
    rc, so, se = run(f[0], f[1], f[2], job, "-o", out)
    check(rc == 1 and "different jobs" in se and not os.path.exists(out), f"jobs: {rc} {se}")
    rc, so, se = run("--force", f[0], f[1], f[2], job, "-o", out)
    check(rc == 0 and "different jobs" in se, f"jobs forced, still said: {se}")
    # No job on one side is not a different job.
    nojob = os.path.join(d, "nojob.json")
    shutil.copy(f[3], nojob)
    rewrite(nojob, '"job": "job-1"', '"job": ""')
    rc, so, se = run(f[0], f[1], f[2], nojob, "-o", out)
    check(rc == 0, f"an unknown job merges: {se}")


def test_cut_files():
    d = fresh("cut", "--ranks", "4", "--steps", "10")
    f = files(d)
    out = os.path.join(d, "job.json")
    with open(f[3], "rb") as fh:
        data = fh.read()
    n_src = len([e for e in source_events(f[3]) if not replaced(e)])
    cut = os.path.join(d, "cut3.json")
    with open(cut, "wb") as fh:
        fh.write(data[: len(data) * 2 // 3])  # mid-event, as a crash leaves it
    rc, so, se = run(f[0], f[1], f[2], cut, "-o", out)
    check(rc == 0 and "cut short" in se and "cut3.json" in se, f"cut file reported: {rc} {se}")
    m = load(out)
    got = m["stepprof_merge"]["ranks"][3]["events"]
    check(0 < got < n_src, f"rank 3 merged up to its last complete event: {got} of {n_src}")
    check(len([e for e in m["traceEvents"] if e.get("pid") == 3 and not replaced(e)]) == got, "counted as written")
    gz = os.path.join(d, "cut3.json.gz")
    with open(gz, "wb") as fh:
        fh.write(gzip.compress(data)[: len(data) // 10])
    rc, so, se = run(f[0], f[1], f[2], gz, "-o", out)
    check(rc == 0 and "cut short" in se, f"cut gzip reported: {rc} {se}")
    head = os.path.join(d, "head3.json")
    with open(head, "wb") as fh:
        fh.write(data[:60])  # cut inside the header: nothing to merge
    rc, so, se = run(f[0], f[1], f[2], head, "-o", out)
    check(rc == 1 and "head3.json" in se, f"a file cut in its header is refused: {rc} {se}")


def test_kineto_key_order():
    # Kineto may write distributedInfo after the events and baseTimeNanoseconds last.
    d = fresh("kineto", "--ranks", "2", "--steps", "10", "--hosts", "a,b", "--shift", "1:300")
    f = files(d, 2)
    src = load(f[1])
    moved = {"schemaVersion": 1, "traceEvents": src["traceEvents"],
             "distributedInfo": src["distributedInfo"], "baseTimeNanoseconds": src["baseTimeNanoseconds"]}
    with open(f[1], "w", encoding="utf-8") as fh:
        json.dump(moved, fh)
    out = os.path.join(d, "job.json")
    rc, so, se = run(f[1], f[0], "-o", out)
    check(rc == 0, se)
    m = load(out)["stepprof_merge"]
    check([r["rank"] for r in m["ranks"]] == [0, 1], f"ordered by the rank found after the events: {m}")
    check(abs(m["ranks"][1]["offset_ns"] + 300000) <= 20000, f"aligned: {m['ranks'][1]}")


def test_diverged_collective_reported():
    d = fresh("diverged", "--ranks", "2", "--steps", "10", "--hosts", "a,b")
    f = files(d, 2)
    with open(f[1], encoding="utf-8") as fh:
        text = fh.read()
    i = text.index('"Collective name":"allreduce"')
    text = text[:i] + '"Collective name":"broadcast"' + text[i + len('"Collective name":"allreduce"'):]
    with open(f[1], "w", encoding="utf-8") as fh:
        fh.write(text)
    rc, so, se = run(*f, "-o", os.path.join(d, "job.json"))
    check(rc == 0 and "rank 1: 1 collectives differ in name" in se, f"a diverged collective is reported: {se}")
    check("(on 9 collectives)" in so, f"and left out of the alignment: {so}")


def test_usage_and_formats():
    d = fresh("use", "--ranks", "2", "--steps", "3")
    f = files(d, 2)
    rc, so, se = run(*f)
    check(rc == 2 and "-o" in se, "no output is a usage error")
    rc, so, se = run("--align", "--no-align", *f, "-o", os.path.join(d, "x.json"))
    check(rc == 2, "--align with --no-align is a usage error")
    pb = os.path.join(d, "x.pb")
    rc, so, se = run(*f, "-o", pb)
    check(rc == 0 and "wrote " + pb in so, f".pb output: {rc} {so} {se}")
    merged = subprocess.run([CLI, "summary", pb], capture_output=True, text=True, check=False).stdout
    own = subprocess.run([CLI, "summary", *f], capture_output=True, text=True, check=False).stdout
    check("Cross-rank Summary" in merged and merged == own, f"a merged .pb reads back as its ranks:\n{merged}")
    for r, path in enumerate(f):
        one = subprocess.run([CLI, "summary", "--rank", str(r), pb], capture_output=True, text=True, check=False)
        alone = subprocess.run([CLI, "summary", path], capture_output=True, text=True, check=False)
        check(one.returncode == 0 and one.stdout == alone.stdout, f"rank {r} of the .pb is its file: {one.stderr}")
    p = subprocess.run([CLI, "info", pb], capture_output=True, text=True, check=False)
    check(p.returncode == 0, f"stepprof info reads the merged .pb as one process: {p.stderr}")
    rc, so, se = run(*f, "-o", f[0])
    check(rc == 1 and "overwrite" in se, f"output over an input: {se}")
    notjson = os.path.join(d, "x.pb")
    with open(notjson, "wb") as fh:
        fh.write(b"\x0a\x03abc")
    rc, so, se = run(f[0], notjson, "-o", os.path.join(d, "y.json"))
    check(rc == 1 and "not a Chrome-trace JSON" in se, f"protobuf input: {se}")


def main():
    global CLI, WORK
    CLI, WORK = sys.argv[1], sys.argv[2]
    os.makedirs(WORK, exist_ok=True)
    tests = [v for k, v in sorted(globals().items()) if k.startswith("test_")]
    for t in tests:
        t()
        print(f"ok {t.__name__}")


if __name__ == "__main__":
    main()
