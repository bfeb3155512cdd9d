"""hta_check.py: loads stepprof trace directories with Holistic Trace Analysis
(HolisticTraceAnalysis 0.5.x) and checks what it makes of them. Run with the
compat venv's python (make compat does).

For each directory: TraceAnalysis(trace_dir=DIR) reads every *.json / *.gz
in it, one file per rank, the rank found in the raw text by the regex
"rank":\\s+(\\d+) (distributedInfo); the ranks must be the expected ones,
each file's events must be in HTA's data frame (every X event but the
`Trace` span marker, kernels all of them) and its iterations must be the
file's ProfilerStep# numbers (the last one is dropped by HTA unless
include_last_profiler_step; we pass True). With --gpu, the temporal
breakdown (idle / compute / non-compute time per rank) and the kernel
breakdown (by kernel type and by kernel) must run and cover every rank.

Usage: hta_check.py [--ranks 0,1,2,3] [--gpu] DIR..."""
import argparse
import gzip
import json
import logging
import os
import re
import sys

from hta.trace_analysis import TraceAnalysis

failures = []


def fail(msg):
    failures.append(msg)
    print('  FAIL: ' + msg)


def read_trace(path):
    data = open(path, 'rb').read()
    if path.endswith('.gz'):
        data = gzip.decompress(data)
    return json.loads(data)


def check_dir(d, ranks_expected, gpu):
    print('HTA: %s' % d)
    files = sorted(f for f in os.listdir(d) if f.endswith('.json') or f.endswith('.gz'))
    ta = TraceAnalysis(trace_dir=d, include_last_profiler_step=True)
    ranks = sorted(ta.t.get_ranks())
    print('  ranks %s (from distributedInfo), %d files' % (ranks, len(files)))
    if ranks_expected is not None and ranks != ranks_expected:
        fail('%s: ranks %s, expected %s' % (d, ranks, ranks_expected))
    for rank in ranks:
        path = ta.t.trace_files[rank]
        trace = read_trace(path)
        events = trace['traceEvents']
        x = [e for e in events if e.get('ph') == 'X' and e.get('cat') != 'Trace']
        kernels = [e for e in x if e.get('cat') == 'kernel']
        steps = sorted(int(re.match(r'ProfilerStep\s*#\s*(\d+)', e['name']).group(1))
                       for e in x if e['name'].startswith('ProfilerStep#'))
        if trace.get('distributedInfo', {}).get('rank') != rank:
            fail('%s: HTA says rank %d, the file\'s distributedInfo says %s'
                 % (path, rank, trace.get('distributedInfo')))
        df = ta.t.get_trace(rank)
        sym = ta.t.symbol_table
        cat_id = sym.sym_index.get('kernel')
        df_kernels = int((df['cat'] == cat_id).sum()) if cat_id is not None else 0
        iters = sorted(int(i) for i in df['iteration'].unique() if i >= 0)
        print('  rank %d: %d events in the data frame (%d X events in the file), %d kernels, '
              'iterations %s' % (rank, len(df), len(x), df_kernels, iters))
        if len(df) < len(x):
            fail('%s: HTA kept %d of %d X events' % (path, len(df), len(x)))
        if df_kernels != len(kernels):
            fail('%s: HTA kept %d of %d kernels' % (path, df_kernels, len(kernels)))
        if iters != steps:
            fail('%s: HTA iterations %s, file steps %s' % (path, iters, steps))
    if not gpu:
        return
    tb = ta.get_temporal_breakdown(visualize=False)
    print('  temporal breakdown:\n' + '\n'.join('    ' + l for l in tb.to_string().splitlines()))
    if sorted(int(r) for r in tb['rank']) != ranks:
        fail('%s: temporal breakdown ranks %s' % (d, list(tb['rank'])))
    if not (tb['compute_time(us)'] > 0).all():
        fail('%s: temporal breakdown without compute time' % d)
    by_type, by_kernel = ta.get_gpu_kernel_breakdown(visualize=False)
    print('  kernel breakdown by type:\n' + '\n'.join('    ' + l for l in by_type.to_string().splitlines()))
    print('  kernel breakdown: %d (kernel, rank) rows, kernels %s'
          % (len(by_kernel), sorted(by_kernel['name'].unique())))
    if len(by_type) == 0 or len(by_kernel) == 0:
        fail('%s: empty kernel breakdown' % d)
    if sorted(int(r) for r in by_kernel['rank'].unique()) != ranks:
        fail('%s: kernel breakdown ranks %s' % (d, sorted(by_kernel['rank'].unique())))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--ranks', help='comma-separated expected ranks')
    ap.add_argument('--gpu', action='store_true')
    ap.add_argument('dirs', nargs='+')
    a = ap.parse_args()
    logging.getLogger().setLevel(logging.WARNING)
    ranks = [int(r) for r in a.ranks.split(',')] if a.ranks else None
    for d in a.dirs:
        try:
            check_dir(d, ranks, a.gpu)
        except Exception as ex:  # an HTA exception is a failed check, not a crash
            import traceback
            traceback.print_exc()
            fail('%s: %s: %s' % (d, type(ex).__name__, ex))
    if failures:
        print('HTA: %d check(s) failed' % len(failures))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
