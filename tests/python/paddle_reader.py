"""paddle.io.DataLoader under a profiler, for test_paddle_reader.py (run in a
subprocess: each run gets a fresh paddle). argv: the profiler ("paddle" or
"stepprof"), the mode ("timer" or "full") and the DataLoader's num_workers.
Prints one JSON line after "=== result ===": the step_info string, the
Perf Summary printed at stop, the Dataloader and ProfileStep events of the
recorded span (full mode) and the batches seen.

The load time has a floor that holds on any machine: with num_workers=0,
the dataset's __getitem__ waits for a gate that a Hook of this script opens
in paddle's before_reader (after the profiler's own hooks ran), then sleeps
SLEEP_S. So every load, from the timer's before_reader to its after_reader,
lasts at least SLEEP_S. With workers (other processes) there is no gate."""
import contextlib
import io
import json
import sys
import threading
import time

import paddle

WHO, MODE, WORKERS = sys.argv[1], sys.argv[2], int(sys.argv[3])
if WHO == "paddle":
    import paddle.profiler as profiler
else:
    import stepprof.profiler as profiler

SLEEP_S = 0.004
BATCHES = 14
RECORD = (2, 14)  # steps 2..13: the batches fetched in them are 2..13
gate = threading.Semaphore(0)


class Slow(paddle.io.Dataset):
    def __getitem__(self, i):
        if WORKERS == 0:
            assert gate.acquire(timeout=60), "the gate hook never ran"
        time.sleep(SLEEP_S)
        return [float(i)]

    def __len__(self):
        return BATCHES


class Gate(paddle.profiler.timer.Hook):
    def before_reader(self, benchmark):
        gate.release()


def count(result, kind):
    """Events of a type in a result: stepprof's, or paddle's event tree."""
    if WHO == "stepprof":
        return sum(1 for t in range(len(result.threads)) for e in result.events(t)
                   if int(e.type) == int(kind))
    n, stack = 0, [root for root in result.get_data().values()]
    while stack:
        node = stack.pop()
        n += node.type == kind
        stack.extend(node.children_node)
    return n


def main():
    loader = paddle.io.DataLoader(Slow(), batch_size=1, num_workers=WORKERS)
    prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], scheduler=RECORD,
                             timer_only=MODE == "timer", on_trace_ready=lambda p: None)
    prof.start()
    hooks = paddle.profiler.timer.benchmark().hooks
    hooks["test_gate"] = Gate()  # after the profiler's own hooks
    hooks_running = list(hooks)
    seen = 0
    for x in loader:
        seen += 1
        prof.step(1)
    info = prof.step_info()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        prof.stop()
    del paddle.profiler.timer.benchmark().hooks["test_gate"]
    res = {"info": info, "perf": out.getvalue(), "batches": seen, "hooks_running": hooks_running,
           "hooks_after": list(paddle.profiler.timer.benchmark().hooks)}
    if MODE == "full":
        result = prof.get_result() if WHO == "stepprof" else prof.profiler_result
        types = profiler.TracerEventType if WHO == "stepprof" else paddle.base.core.TracerEventType
        res["dataloader"] = count(result, types.Dataloader)
        res["profile_steps"] = count(result, types.ProfileStep)
    print("=== result ===")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
