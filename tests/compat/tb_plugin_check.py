"""tb_plugin_check.py: loads stepprof trace directories with the TensorBoard
PyTorch-profiler plugin's own code (torch_tb_profiler 0.4.x) and checks what
it makes of them. Run with the compat venv's python (make compat does).

For each run directory it does what the plugin's server does when a run
appears under --logdir: RunLoader(name, dir, cache).load(), which parses
every *.pt.trace.json[.gz] in a worker process, builds a RunProfile per
(worker, span) and a distributed profile when every worker has collectives.
It then checks, per profile:
  - the views: Overview, Operator, Trace always; Memory when the file holds
    [memory] events; Kernel when it holds kernels;
  - each step's breakdown (Kernel, Memcpy, Memset, Communication, Runtime,
    DataLoader, CPU Exec, Other) sums to the step's Total, and every
    ProfilerStep# of the file is a step (the plugin may drop a trailing step
    with fewer kernels, trace-format.md §10.2; stepprof's fixtures avoid that);
  - no event rejected: each file is parsed again in this process
    (RunProfileData.parse + RunGenerator, the same calls) with the plugin's
    logger captured; any warning or error fails the check, and the op trees
    must hold every cpu_op of the file;
  - with GPU records: GPU utilization in the GPU summary and the trace's
    "GPU <id> Utilization" counters.
Prints one line per (run, worker, span) naming the views, and exits 1 on a
failed check.

Usage: tb_plugin_check.py [--expect-workers N] [--gpu] RUN_DIR..."""
import argparse
import gzip
import json
import logging
import os
import sys
import tempfile

from torch_tb_profiler import consts, io, utils
from torch_tb_profiler.profiler.data import RunProfileData
from torch_tb_profiler.profiler.event_parser import ProfileRole
from torch_tb_profiler.profiler.loader import RunLoader
from torch_tb_profiler.profiler.run_generator import RunGenerator

failures = []


def fail(msg):
    failures.append(msg)
    print('  FAIL: ' + msg)


class Capture(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(record.getMessage())


def read_trace(path):
    data = open(path, 'rb').read()
    if path.endswith('.gz'):
        data = gzip.decompress(data)
    return json.loads(data)


def count_ops(node):
    """Operator nodes below node (the plugin's tree holds cpu_op events as
    OperatorNode, ProfilerStep# as ProfilerStepNode)."""
    from torch_tb_profiler.profiler.node import ProfilerStepNode, OperatorNode
    n = 0
    for child in node.children:
        if isinstance(child, OperatorNode) and not isinstance(child, ProfilerStepNode):
            n += 1
        n += count_ops(child)
    return n


def check_file(run_dir, fname, worker, span, gpu_expected):
    """Parses one file in this process as the loader's worker process does,
    with the plugin's logger captured."""
    path = os.path.join(run_dir, fname)
    trace = read_trace(path)
    events = trace['traceEvents']
    cats = {}
    for e in events:
        if e.get('ph') == 'X':
            cats[e.get('cat')] = cats.get(e.get('cat'), 0) + 1
    file_steps = [e for e in events if e.get('ph') == 'X' and str(e.get('name', '')).startswith('ProfilerStep#')]
    file_ops = [e for e in events if e.get('ph') == 'X' and e.get('cat') == 'cpu_op'
                and not e['name'].startswith('ProfilerStep#')]
    has_mem = any(e.get('ph') == 'i' and e.get('name') == '[memory]' for e in events)
    has_kernel = cats.get('kernel', 0) > 0

    capture = Capture()
    logger = utils.get_logger()
    logger.addHandler(capture)
    try:
        with tempfile.TemporaryDirectory() as cache_dir:
            data = RunProfileData.parse(worker, span, path, cache_dir)
            profile = RunGenerator(worker, span, data).generate_run_profile()
    finally:
        logger.removeHandler(capture)
    for msg in capture.records:
        fail('%s: plugin logged: %s' % (fname, msg[:300]))

    views = [v.display_name for v in profile.views]
    need = ['Overview', 'Operator', 'Trace'] + (['Memory'] if has_mem else []) + (['Kernel'] if has_kernel else [])
    for v in need:
        if v not in views:
            fail('%s: no %s view (views: %s)' % (fname, v, views))
    if gpu_expected and not has_kernel:
        fail('%s: GPU records expected, the file has no kernel events' % fname)

    # Steps: every ProfilerStep# is a step, and its parts add up to it.
    if len(data.steps_costs) != len(file_steps):
        fail('%s: %d ProfilerStep# events, the plugin made %d steps (%s)'
             % (fname, len(file_steps), len(data.steps_costs), data.steps_names))
    parts = [r for r in ProfileRole if r != ProfileRole.Total]
    for name, costs in zip(data.steps_names, data.steps_costs):
        total = costs.costs[ProfileRole.Total]
        s = sum(costs.costs[r] for r in parts)
        if abs(s - total) > max(1e-6 * total, 0.002):  # us; allow for float sums
            fail('%s: step %s breakdown %.3f us != step time %.3f us' % (fname, name, s, total))
        if total <= 0:
            fail('%s: step %s has no time' % (fname, name))
    avg = data.avg_costs.costs
    breakdown = ', '.join('%s %.0f' % (r.name, avg[r]) for r in parts if avg[r])

    # No event rejected: every cpu_op is a node of an op tree.
    tree_ops = sum(count_ops(root) for root in data.tid2tree.values())
    if tree_ops != len(file_ops):
        fail('%s: %d cpu_op events in the file, %d in the plugin\'s op trees' % (fname, len(file_ops), tree_ops))

    gpu = ''
    if has_kernel:
        gpu_ids = sorted(data.gpu_metrics_parser.gpu_ids)
        util = [data.gpu_metrics_parser.gpu_utilization[i] for i in gpu_ids]
        if not gpu_ids or any(u is None or u <= 0 for u in util):
            fail('%s: no GPU utilization (gpu ids %s, utilization %s)' % (fname, gpu_ids, util))
        summary = json.dumps(profile.gpu_summary) if profile.gpu_summary else ''
        if 'GPU Utilization' not in summary:
            fail('%s: GPU summary without GPU Utilization: %s' % (fname, summary[:200]))
        if not any('Utilization' in m for m in (profile.gpu_metrics or [])):
            fail('%s: no GPU utilization counters for the trace view' % fname)
        if not profile.kernel_table or not profile.kernel_table.get('data', {}).get('rows'):
            fail('%s: empty kernel table' % fname)
        gpu = '; GPU %s utilization %s, %d kernel rows' % (
            gpu_ids, ['%.1f%%' % (100 * u) for u in util if u is not None],
            len(profile.kernel_table['data']['rows']) if profile.kernel_table else 0)
    print('  %s span %s: views %s; %d steps, avg step %.0f us (%s); %d ops in trees, %d events by cat %s%s'
          % (worker, span, ', '.join(views), len(data.steps_costs), avg[ProfileRole.Total], breakdown,
             tree_ops, sum(cats.values()), dict(sorted(cats.items())), gpu))
    return views


def check_run(run_dir, expect_workers, gpu_expected):
    name = os.path.basename(os.path.normpath(run_dir))
    print('tensorboard plugin: run %s (%s)' % (name, run_dir))
    files = sorted(f for f in os.listdir(run_dir) if consts.WORKER_PATTERN.match(f))
    ignored = sorted(f for f in os.listdir(run_dir) if f not in files)
    if ignored:
        fail('%s: files the plugin ignores: %s' % (name, ignored))
    if not files:
        fail('%s: no *.pt.trace.json files' % name)
        return
    # The server's path: RunLoader over the whole directory, one process per file.
    cache = io.Cache(tempfile.mkdtemp(prefix='tbcache'))
    run = RunLoader(name, run_dir, cache).load()
    # 'All' is the plugin's pseudo-worker of the Distributed view.
    workers = [w for w in run.workers if w != 'All']
    views = [v.display_name for v in run.views]
    dist = [p for p in run.get_profiles() if p.worker == 'All']
    print('  RunLoader: workers %s; views %s; spans %s%s' % (
        workers, views, run.get_spans(),
        '; Distributed view: overlap and wait of %d steps'
        % (len(dist[0].steps_to_overlap['data']) - 1) if dist else ''))
    if len(run.get_profiles()) < len(files):
        fail('%s: %d files, RunLoader produced %d profiles (a file failed to load)'
             % (name, len(files), len(run.get_profiles())))
    if expect_workers is not None and len(workers) != expect_workers:
        fail('%s: %d workers, expected %d' % (name, len(workers), expect_workers))
    spans_by_worker = {}
    for f in files:
        m = consts.WORKER_PATTERN.match(f)
        worker, span = m.group(1), m.group(2)
        spans_by_worker.setdefault(worker, []).append(span[1:] if span else None)
    for worker, spans in sorted(spans_by_worker.items()):
        if worker not in workers:
            fail('%s: worker %s of file names not among RunLoader workers %s' % (name, worker, workers))
        for i, span in enumerate(sorted(s for s in spans if s is not None) or [None], 1):
            f = [x for x in files if x.startswith(worker + '.') and (span is None or ('.' + span + '.') in x)][0]
            check_file(run_dir, f, worker, str(i) if span else None, gpu_expected)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--expect-workers', type=int)
    ap.add_argument('--gpu', action='store_true', help='the run holds GPU records')
    ap.add_argument('dirs', nargs='+')
    a = ap.parse_args()
    for d in a.dirs:
        check_run(d, a.expect_workers, a.gpu)
    if failures:
        print('tensorboard plugin: %d check(s) failed' % len(failures))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
