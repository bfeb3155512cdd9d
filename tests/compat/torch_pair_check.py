"""torch_pair_check.py: the viewers on torch's own trace and on stepprof's
trace of the same run. tests/python/torch_mlp.py (run with the project's
Python, which has torch) profiles one training loop with torch.profiler and
stepprof.profiler at once, each writing its trace with its
tensorboard_trace_handler into PAIR/torch and PAIR/stepprof. Here, with the
compat venv's viewers:
  - the TensorBoard plugin's Overview: every category's share of the inner
    steps (all but the first and the last, where each profiler's start and
    stop fall in the other's steps) within 5 percentage points of torch's.
    torch 2 writes the DataLoader's range as a user_annotation, which the
    plugin does not count as DataLoader; stepprof writes a cpu_op, so that
    the plugin shows DataLoader time. Where torch's trace has no DataLoader
    time, the shares are compared on a copy of stepprof's trace with that
    range spelled as torch spells it;
  - its Operator view: the same operators with the same calls;
  - HTA: the same iterations and as many events in its data frame as the
    file holds, on both.
Exits 1 on a failed check.

Usage: torch_pair_check.py PAIR"""
import json
import os
import sys
import tempfile

from hta.trace_analysis import TraceAnalysis
from torch_tb_profiler.profiler.data import RunProfileData
from torch_tb_profiler.profiler.event_parser import ProfileRole
from torch_tb_profiler.profiler.run_generator import RunGenerator

failures = []


def fail(msg):
    failures.append(msg)
    print('  FAIL: ' + msg)


def trace_file(d):
    files = [f for f in os.listdir(d) if f.endswith('.pt.trace.json')]
    if len(files) != 1:
        sys.exit('torch_pair_check: %s: expected one .pt.trace.json, found %s' % (d, files))
    return os.path.join(d, files[0])


def plugin_views(path):
    """(overview shares in %, {operator: calls}) as the plugin makes them.
    The shares are those of the steps between the first and the last: when
    both profilers run at once, each one's start lies in the other's first
    step and each one's stop and trace writing in the other's last, which
    on a loaded machine moves those steps' shares by more than the
    tolerance; the inner steps are the same for both."""
    with tempfile.TemporaryDirectory() as cache:
        data = RunProfileData.parse('worker0', None, path, cache)
        profile = RunGenerator('worker0', None, data).generate_run_profile()
    inner = data.steps_costs[1:-1]
    if not inner:
        sys.exit('torch_pair_check: %s: fewer than 3 steps (%s)' % (path, data.steps_names))
    total = sum(c.costs[ProfileRole.Total] for c in inner)
    shares = {r.name: 100.0 * sum(c.costs[r] for c in inner) / total
              for r in ProfileRole if r != ProfileRole.Total}
    ops = {row['name']: row['calls'] for row in profile.operation_table_by_name['data']}
    return shares, ops


def as_torch_spells_dataloader(path):
    """A copy of the trace at path whose DataLoader ranges are
    user_annotation, as torch 2 writes them."""
    with open(path) as f:
        trace = json.load(f)
    for e in trace['traceEvents']:
        if e.get('ph') == 'X' and str(e.get('name', '')).startswith('enumerate(DataLoader)'):
            e['cat'] = 'user_annotation'
    out = os.path.join(tempfile.mkdtemp(prefix='torchpair'), os.path.basename(path))
    with open(out, 'w') as f:
        json.dump(trace, f)
    return out


def hta_view(d):
    """(iterations, events in HTA's frame, X events in the file) of a directory."""
    analyzer = TraceAnalysis(trace_dir=d, include_last_profiler_step=True)
    df = analyzer.t.get_trace(0)
    with open(trace_file(d)) as f:
        events = json.load(f)['traceEvents']
    x_events = sum(1 for e in events if e.get('ph') == 'X' and e.get('cat') != 'Trace')
    iterations = sorted(int(i) for i in df['iteration'].unique() if i >= 0)
    return iterations, len(df), x_events


def main():
    pair = sys.argv[1]
    theirs_dir, ours_dir = os.path.join(pair, 'torch'), os.path.join(pair, 'stepprof')
    print('torch and stepprof on one run: %s' % pair)
    (t_shares, t_ops), (s_shares, s_ops) = plugin_views(trace_file(theirs_dir)), plugin_views(trace_file(ours_dir))
    print('  plugin Overview, %% of the step: torch %s' % {k: round(v, 1) for k, v in t_shares.items() if v})
    print('                                 stepprof %s' % {k: round(v, 1) for k, v in s_shares.items() if v})
    # torch 2 writes the DataLoader's range as a user_annotation, which the
    # plugin does not count (its time goes to the ops inside and Other);
    # stepprof writes the cpu_op the plugin counts as DataLoader
    # (docs/trace-format.md). The shares are compared on stepprof's trace
    # with that one range spelled as torch spells it.
    dataloader = s_shares['DataLoader']
    if t_shares['DataLoader'] == 0.0 and dataloader:
        s_shares = plugin_views(as_torch_spells_dataloader(trace_file(ours_dir)))[0]
        print('  stepprof, DataLoader as torch spells it: %s'
              % {k: round(v, 1) for k, v in s_shares.items() if v})
    for role in t_shares:
        if abs(t_shares[role] - s_shares[role]) > 5.0:
            fail('Overview %s: stepprof %.1f%%, torch %.1f%% (more than 5 points apart)'
                 % (role, s_shares[role], t_shares[role]))
    if s_ops != t_ops:
        fail('Operator view differs: only torch %s, only stepprof %s, other calls %s' % (
            sorted(set(t_ops) - set(s_ops)), sorted(set(s_ops) - set(t_ops)),
            {k: (t_ops[k], s_ops[k]) for k in set(t_ops) & set(s_ops) if t_ops[k] != s_ops[k]}))
    print('  plugin Operator view: %d operators, %d calls, %s' % (
        len(s_ops), sum(s_ops.values()), 'the same as torch\'s' if s_ops == t_ops else 'DIFFERENT'))
    t_hta, s_hta = hta_view(theirs_dir), hta_view(ours_dir)
    print('  HTA: torch iterations %s, %d of %d events; stepprof iterations %s, %d of %d events'
          % (t_hta + s_hta))
    if s_hta[0] != t_hta[0] or not s_hta[0]:
        fail('HTA iterations: stepprof %s, torch %s' % (s_hta[0], t_hta[0]))
    if s_hta[1] != s_hta[2]:
        fail('HTA kept %d of stepprof\'s %d events' % (s_hta[1], s_hta[2]))
    if failures:
        print('torch pair: %d check(s) failed' % len(failures))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
