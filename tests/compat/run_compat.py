"""run_compat.py: the viewer compatibility suite (make compat). Writes
stepprof traces and has the viewers' own code open them:
  - runs/demo        train_mlp --workers 0 (the demo)
  - runs/workers4    train_mlp --workers 4 (five recording threads)
  - runs/gpu         make_gpu_trace: synthetic kernels, copies, memsets,
                     memory events, an nccl:all_reduce, device properties
  - runs/gpu_gz      the same written as .pt.trace.json.gz (stepprof's gzip
                     writer, read through each viewer's own gzip reading)
  - runs/ranks4      4 train_mlp processes, RANK=0..3, WORLD_SIZE=4, one dir
  - runs/gpu_ranks4  4 make_gpu_trace processes, RANK=0..3, WORLD_SIZE=4
  - runs/gpu_overlap4  the same with --overlap: each rank's all-reduce kernel
                     overlaps computation by a known share (0, 1/3, 2/3, 1)
  - runs/torch_pair  a torch loop under torch.profiler and stepprof at once
                     (with the project's Python, when it has torch)
then runs tb_plugin_check.py (TensorBoard plugin), hta_check.py (HTA),
torch_pair_check.py (both on torch's trace and stepprof's of one run) and
catapult_check.py (the plugin's trace viewer in headless Chromium, skipped
with a message when Chromium is missing) and prints, per viewer, the views it
produced. Exit 0 when every check passed (a skipped viewer does not fail).

Run with the compat venv's python: run_compat.py --build BUILD --out OUT."""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
HTA_NOISE = ('Parsed ', 'Overall parsing', 'leaving ', 'Rounding down ns', '  df.loc[', '  kernel_t_df.melt')


def trace_name(worker):
    return '%s.%019d.pt.trace.json' % (worker, time.time_ns())


def make_traces(build, runs):
    train = os.path.join(build, 'examples', 'train_mlp')
    gpu = os.path.join(build, 'tests', 'compat', 'make_gpu_trace')
    for exe in (train, gpu):
        if not os.path.exists(exe):
            sys.exit('compat: %s is missing; build stepprof first (cmake --build %s)' % (exe, build))
    shutil.rmtree(runs, ignore_errors=True)
    os.makedirs(runs)
    quiet = dict(stdout=subprocess.DEVNULL, check=True)
    env = {k: v for k, v in os.environ.items()
           if k not in ('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'OMPI_COMM_WORLD_RANK', 'OMPI_COMM_WORLD_SIZE',
                        'PMI_RANK', 'PMI_SIZE')}
    subprocess.run([train, '--workers', '0', '--out', os.path.join(runs, 'demo')], env=env, **quiet)
    subprocess.run([train, '--workers', '4', '--out', os.path.join(runs, 'workers4')], env=env, **quiet)
    os.makedirs(os.path.join(runs, 'gpu'))
    subprocess.run([gpu, os.path.join(runs, 'gpu', trace_name(socket.gethostname() + '_4242'))], env=env, **quiet)
    os.makedirs(os.path.join(runs, 'gpu_gz'))
    subprocess.run([gpu, os.path.join(runs, 'gpu_gz', trace_name(socket.gethostname() + '_4242') + '.gz')],
                   env=env, **quiet)
    # Four ranks at once, as a launcher would start them: the files land in
    # one directory, each named by the default worker of its process.
    procs = [subprocess.Popen([train, '--workers', '0', '--out', os.path.join(runs, 'ranks4')],
                              env=dict(env, RANK=str(r), WORLD_SIZE='4', LOCAL_RANK=str(r)),
                              stdout=subprocess.DEVNULL) for r in range(4)]
    if any(p.wait() != 0 for p in procs):
        sys.exit('compat: a train_mlp rank failed')
    os.makedirs(os.path.join(runs, 'gpu_ranks4'))
    for r in range(4):
        subprocess.run([gpu, os.path.join(runs, 'gpu_ranks4', trace_name('%s_rank%d_%d' % (socket.gethostname(), r, 4000 + r)))],
                       env=dict(env, RANK=str(r), WORLD_SIZE='4'), **quiet)
    os.makedirs(os.path.join(runs, 'gpu_overlap4'))
    for r in range(4):
        subprocess.run([gpu, os.path.join(runs, 'gpu_overlap4', trace_name('%s_rank%d_%d' % (socket.gethostname(), r, 5000 + r))),
                        '3', '--overlap'],
                       env=dict(env, RANK=str(r), WORLD_SIZE='4'), **quiet)
    # Our own structural checker first (trace-format.md), so a viewer failure
    # below is the viewer's reading, not a malformed file.
    files = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(runs) for f in fs)
    r = subprocess.run([sys.executable, '-B', os.path.join(HERE, '..', 'trace', 'tracecheck.py')] + files,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    print('== tracecheck: %d traces%s' % (len(files), '' if r.returncode == 0 else ': FAILED'))
    if r.returncode != 0:
        print(r.stdout.decode('utf-8', 'replace'))
        sys.exit('compat: tracecheck rejected a trace')


def torch_pair(build, pair):
    """tests/python/torch_mlp.py under both profilers at once, with the
    project's Python (make test-python installs torch and stepprof there),
    then torch_pair_check.py on the two traces. 77 when that Python lacks
    torch."""
    python = os.path.join(build, 'python-venv', 'bin', 'python')
    probe = subprocess.run([python, '-c', 'import torch, stepprof._torch_adapter'],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) if os.path.exists(python) else None
    if probe is None or probe.returncode != 0:
        print('  skipped: %s has no torch or no stepprof torch adapter (make test-python installs both)' % python)
        return 77
    shutil.rmtree(pair, ignore_errors=True)
    mlp = os.path.join(HERE, '..', 'python', 'torch_mlp.py')
    r = subprocess.run([python, mlp, 'both', '--tb', pair, '--steps', '7', '--active', '4', '--width', '16',
                        '--out', pair],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        print(r.stderr.decode('utf-8', 'replace')[-2000:])
        print('  FAIL: torch_mlp.py both failed')
        return 1
    return run_checker('torch_pair_check.py', [pair], HTA_NOISE + ('If the trace file',))[0]


def run_checker(script, args, noise=()):
    r = subprocess.run([sys.executable, '-W', 'ignore', os.path.join(HERE, script)] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = r.stdout.decode('utf-8', 'replace')
    lines = [l for l in out.splitlines() if not l.startswith(noise)]
    print('\n'.join(lines))
    return r.returncode, lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', required=True, help='stepprof build directory')
    ap.add_argument('--out', required=True, help='output directory (traces, screenshots)')
    a = ap.parse_args()
    t0 = time.time()
    runs = os.path.join(a.out, 'runs')
    make_traces(a.build, runs)
    d = lambda name: os.path.join(runs, name)  # noqa: E731
    one = lambda name: os.path.join(d(name), sorted(os.listdir(d(name)))[0])  # noqa: E731
    results = {}

    print('== TensorBoard plugin (torch_tb_profiler)')
    rc = [run_checker('tb_plugin_check.py', ['--expect-workers', '1', d('demo'), d('workers4')])[0],
          run_checker('tb_plugin_check.py', ['--gpu', '--expect-workers', '1', d('gpu')])[0],
          run_checker('tb_plugin_check.py', ['--gpu', '--expect-workers', '1', d('gpu_gz')])[0],
          run_checker('tb_plugin_check.py', ['--expect-workers', '4', d('ranks4')])[0],
          run_checker('tb_plugin_check.py', ['--gpu', '--expect-workers', '4', d('gpu_ranks4')])[0]]
    results['TensorBoard plugin'] = max(rc)

    print('== HTA (HolisticTraceAnalysis)')
    rc = [run_checker('hta_check.py', ['--ranks', '0', d('demo'), d('workers4')], HTA_NOISE)[0],
          run_checker('hta_check.py', ['--gpu', '--ranks', '0', d('gpu')], HTA_NOISE)[0],
          run_checker('hta_check.py', ['--gpu', '--ranks', '0', d('gpu_gz')], HTA_NOISE)[0],
          run_checker('hta_check.py', ['--ranks', '0,1,2,3', d('ranks4')], HTA_NOISE)[0],
          run_checker('hta_check.py', ['--gpu', '--ranks', '0,1,2,3', d('gpu_ranks4')], HTA_NOISE)[0],
          run_checker('hta_check.py', ['--gpu', '--ranks', '0,1,2,3', '--overlap', os.path.join(a.build, 'stepprof'),
                                       '--expect-overlap', '0,33.33,66.67,100', d('gpu_overlap4')], HTA_NOISE)[0]]
    results['HTA'] = max(rc)

    print('== torch.profiler and stepprof on one torch run (the plugin and HTA on both traces)')
    results['torch pair'] = torch_pair(a.build, d('torch_pair'))

    print('== catapult (trace_viewer_full.html of the plugin) in headless Chromium')
    rc, _ = run_checker('catapult_check.py', ['--out', a.out,
                                              '--trace', 'demo', one('demo'),
                                              '--trace', 'workers4', one('workers4'),
                                              '--trace', 'gpu', one('gpu'),
                                              '--trace', 'ranks4_rank0', one('ranks4')]
                         + (['--trace', 'torch_stepprof', one('torch_pair/stepprof')]
                            if results['torch pair'] == 0 else []))
    results['catapult'] = rc

    print('== compat summary (%.0f s)' % (time.time() - t0))
    for viewer, rc in results.items():
        print('  %-20s %s' % (viewer, {0: 'ok', 77: 'SKIPPED (see above)'}.get(rc, 'FAILED')))
    print('  Perfetto             not run: its trace processor is a download from Google, unreachable here '
          '(docs/viewers.md)')
    return 1 if any(rc not in (0, 77) for rc in results.values()) else 0


if __name__ == '__main__':
    sys.exit(main())
