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

With --overlap STEPPROF, HTA's comm/compute overlap (get_comm_comp_overlap:
the share of communication kernel time that overlaps computation kernels)
must agree within 5 points, per rank, with stepprof's cross-rank summary
(Overlap / Communication) of the rank files, and of their merge by
`stepprof merge` read back as ranks; --expect-overlap gives the known
answers (percent, one per rank), so a check that agrees on nothing fails.

Usage: hta_check.py [--ranks 0,1,2,3] [--gpu] [--overlap STEPPROF
                    [--expect-overlap 0,33.3,...]] DIR..."""
import argparse
import gzip
import json
import logging
import os
import re
import subprocess
import sys
import tempfile

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


def stepprof_overlap(stepprof, files):
    """Rank -> 100 x Overlap / Communication from `stepprof summary FILES`."""
    out = subprocess.run([stepprof, 'summary'] + files, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, check=True).stdout.decode('utf-8', 'replace')
    lines = out.splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith('Rank '))
    cols = lines[head].split()
    comm, over = cols.index('Communication'), cols.index('Overlap')
    shares = {}
    for l in lines[head + 2:]:
        if l.startswith('---'):
            break
        v = l.split()
        shares[int(v[0])] = 100.0 * float(v[over]) / float(v[comm]) if float(v[comm]) else 0.0
    return shares


def check_overlap(d, stepprof, expected):
    ta = TraceAnalysis(trace_dir=d, include_last_profiler_step=True)
    df = ta.get_comm_comp_overlap(visualize=False)
    hta = {int(r): float(p) for r, p in zip(df['rank'], df['comp_comm_overlap_pctg'])}
    files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith('.json'))
    own = stepprof_overlap(stepprof, files)
    with tempfile.TemporaryDirectory() as tmp:
        job = os.path.join(tmp, 'job.json')
        subprocess.run([stepprof, 'merge'] + files + ['-o', job], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        merged = stepprof_overlap(stepprof, [job])
    print('  comm/compute overlap %, rank: HTA / stepprof (rank files) / stepprof (merged)')
    fmt = lambda v: '-' if v is None else '%.2f' % v  # noqa: E731
    for rank in sorted(hta):
        print('    %d: %.2f / %s / %s' % (rank, hta[rank], fmt(own.get(rank)), fmt(merged.get(rank))))
    if sorted(hta) != sorted(own) or sorted(own) != sorted(merged):
        fail('%s: ranks differ: HTA %s, stepprof %s, merged %s' % (d, sorted(hta), sorted(own), sorted(merged)))
        return
    for rank in sorted(hta):
        for what, v in (('rank files', own[rank]), ('merged trace', merged[rank])):
            if abs(v - hta[rank]) > 5:
                fail('%s: rank %d overlap: HTA %.2f%%, stepprof (%s) %.2f%%' % (d, rank, hta[rank], what, v))
        if expected is not None and abs(own[rank] - expected[rank]) > 1:
            fail('%s: rank %d overlap %.2f%%, the trace was made with %.2f%%' % (d, rank, own[rank], expected[rank]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--ranks', help='comma-separated expected ranks')
    ap.add_argument('--gpu', action='store_true')
    ap.add_argument('--overlap', metavar='STEPPROF', help='compare comm/compute overlap with this stepprof')
    ap.add_argument('--expect-overlap', help='comma-separated known overlap percent per rank')
    ap.add_argument('dirs', nargs='+')
    a = ap.parse_args()
    logging.getLogger().setLevel(logging.WARNING)
    ranks = [int(r) for r in a.ranks.split(',')] if a.ranks else None
    for d in a.dirs:
        try:
            check_dir(d, ranks, a.gpu)
            if a.overlap:
                check_overlap(d, a.overlap, [float(x) for x in a.expect_overlap.split(',')]
                              if a.expect_overlap else None)
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
