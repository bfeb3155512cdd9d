"""make_ranks.py: writes one Chrome-trace file per rank of a synthetic data-parallel
job, in stepprof's format (docs/trace-format.md): distributedInfo with rank, world
size, host and job, and per step a ProfilerStep, a forward operator and an all-reduce
typed as Communication with its process group and seq. The merge tests and
bench/bench_merge.py use it.

Every rank leaves step s's all-reduce at one true instant plus a small jitter
(seeded, so the files are the same on every run); --shift R:US adds US
microseconds to rank R's timestamps only, as a clock that runs ahead would.

    make_ranks.py DIR --ranks 4 [--steps 50] [--ops 2] [--host NAME | --hosts A,B,..]
                  [--shift R:US ...] [--job ID] [--gpu] [--gzip] [--no-seq]
"""
import argparse
import gzip
import os
import random

BASE_NS = 1790857026000000000  # a baseTimeNanoseconds as stepprof writes them
STEP_US = 1000.0


def us(v):
    """ts/dur text as stepprof writes them: microseconds with three decimals."""
    return f"{v:.3f}"


def rank_events(rank, world, steps, ops, shift_us, jitter, gpu, seq):
    """Yields the event lines of one rank, in stepprof's order."""
    pid = 4000 + rank
    t0 = 1_000_000.0 + shift_us
    yield f'{{"ph":"M","name":"process_name","pid":{pid},"tid":0,"ts":{us(t0)},"args":{{"name":"train"}}}}'
    yield f'{{"ph":"M","name":"process_labels","pid":{pid},"tid":0,"ts":{us(t0)},"args":{{"labels":"CPU"}}}}'
    yield f'{{"ph":"M","name":"process_sort_index","pid":{pid},"tid":0,"ts":{us(t0)},"args":{{"sort_index":{pid}}}}}'
    yield (f'{{"ph":"M","name":"thread_name","pid":{pid},"tid":{pid},"ts":{us(t0)},'
           f'"args":{{"name":"thread {pid} (train)"}}}}')
    if gpu:
        yield f'{{"ph":"M","name":"process_name","pid":0,"tid":0,"ts":{us(t0)},"args":{{"name":"GPU 0"}}}}'
        yield f'{{"ph":"M","name":"process_labels","pid":0,"tid":0,"ts":{us(t0)},"args":{{"labels":"GPU 0"}}}}'
    ext = 0
    corr = 0
    for s in range(steps):
        start = t0 + s * STEP_US
        ext += 1
        yield (f'{{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{s}","pid":{pid},"tid":{pid},'
               f'"ts":{us(start)},"dur":{us(STEP_US - 10)},"args":{{"External id":{ext},"Event Type":"ProfileStep"}}}}')
        op_us = 600.0 / max(ops, 1)
        for k in range(ops):
            ext += 1
            yield (f'{{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":{pid},"tid":{pid},'
                   f'"ts":{us(start + 1 + k * op_us)},"dur":{us(op_us - 1)},'
                   f'"args":{{"External id":{ext},"Event Type":"Forward"}}}}')
            if gpu and k == 0:
                corr += 1
                yield (f'{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":{pid},"tid":{pid},'
                       f'"ts":{us(start + 2)},"dur":{us(3)},"args":{{"External id":{ext},"cbid":211,"correlation":{corr}}}}}')
                yield f'{{"ph":"s","cat":"ac2g","name":"ac2g","id":{corr},"pid":{pid},"tid":{pid},"ts":{us(start + 2)}}}'
                yield (f'{{"ph":"X","cat":"kernel","name":"sgemm","pid":0,"tid":7,"ts":{us(start + 6)},"dur":{us(50)},'
                       f'"args":{{"External id":{ext},"device":0,"stream":7,"correlation":{corr}}}}}')
                yield f'{{"ph":"f","cat":"ac2g","name":"ac2g","id":{corr},"pid":0,"tid":7,"ts":{us(start + 6)},"bp":"e"}}'
        # All ranks leave the all-reduce together (true time), each seen on its own clock.
        end = 1_000_000.0 + s * STEP_US + 900.0 + jitter[s] + shift_us
        begin = start + 620.0 + rank * 7.0
        ext += 1
        seq_arg = f',"seq":{s}' if seq else ""
        yield (f'{{"ph":"X","cat":"cpu_op","name":"gloo:all_reduce","pid":{pid},"tid":{pid},'
               f'"ts":{us(begin)},"dur":{us(end - begin)},"args":{{"External id":{ext},'
               f'"Collective name":"allreduce","Process Group Name":"0","Group size":{world},'
               f'"bytes":4096{seq_arg},"Event Type":"Communication"}}}}')
    span_end = t0 + steps * STEP_US
    yield (f'{{"ph":"X","cat":"Trace","name":"PyTorch Profiler (0)","pid":"Spans","tid":"PyTorch Profiler",'
           f'"ts":{us(t0)},"dur":{us(span_end - t0)},"args":{{"Op count":0}}}}')
    yield f'{{"ph":"i","s":"g","name":"Record Window End","pid":"","tid":"","ts":{us(span_end)}}}'


def write_rank(path, rank, world, host, job, steps, ops, shift_us, gpu, seq, seed):
    rng = random.Random(seed * 1000 + rank)
    jitter = [rng.uniform(-3.0, 3.0) for _ in range(steps)]
    head = (f'{{"schemaVersion":1,"deviceProperties":[],\n'
            f'"distributedInfo":{{"backend": "gloo", "rank": {rank}, "world_size": {world}, '
            f'"local_rank": {rank}, "local_world_size": {world}, "hostname": "{host}", "job": "{job}"}},\n'
            f'"stepprof_version":"0.1.0","span_indx":0,\n'
            f'"displayTimeUnit":"ms","baseTimeNanoseconds":{BASE_NS},\n"traceEvents":[\n')
    opener = gzip.open if path.endswith(".gz") else open
    n = 0
    with opener(path, "wt", encoding="utf-8") as f:
        f.write(head)
        first = True
        for line in rank_events(rank, world, steps, ops, shift_us, jitter, gpu, seq):
            f.write(line if first else ",\n" + line)
            first = False
            n += 1
        f.write(f'\n],\n"traceName":"{os.path.basename(path)}"}}\n')
    return n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--world", type=int, default=0, help="world size written (default: --ranks)")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--ops", type=int, default=2, help="forward operators per step")
    ap.add_argument("--host", default="vm-a")
    ap.add_argument("--hosts", default="", help="comma-separated host per rank")
    ap.add_argument("--job", default="job-1")
    ap.add_argument("--shift", action="append", default=[], help="R:US, rank R's clock ahead by US")
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--no-seq", action="store_true", help="leave seq out (the reader counts)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    os.makedirs(a.dir, exist_ok=True)
    shifts = {int(r): float(v) for r, v in (s.split(":") for s in a.shift)}
    hosts = a.hosts.split(",") if a.hosts else [a.host] * a.ranks
    total = 0
    for r in range(a.ranks):
        name = f"rank{r}.json" + (".gz" if a.gzip else "")
        total += write_rank(os.path.join(a.dir, name), r, a.world or a.ranks, hosts[r], a.job, a.steps,
                            a.ops, shifts.get(r, 0.0), a.gpu, not a.no_seq, a.seed)
    if argv is None:
        print(total)


if __name__ == "__main__":
    main()
