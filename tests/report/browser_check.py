"""browser_check.py: stepprof's HTML report in a real browser (headless
Chromium from Debian, driven by cdp.py).

  browser_check.py --cli STEPPROF --train-mlp TRAIN_MLP --cases DIR --out DIR [--screenshot PNG]

- Every page test_report.c wrote in --cases (no steps, one step, drops,
  GPU records only, 10,000 threads, a 30,000-event step, nothing at all,
  names made to inject script) draws itself with zero console errors, and
  no name ran as script or became markup.
- The demo's report (train_mlp, as `make demo` runs it) shows in its tables
  the same cells as `stepprof summary` prints; clicking a column sorts the
  rows by it, both ways; the timeline draws every event of the median
  step, as counted here from the trace itself; the step chart has a bar per
  step and marks the slowest.
- The demo against a baseline run shows the baseline's figures.
With --screenshot, the demo's report is photographed (docs/img/report.png).
Exit 77 (skipped) without Chromium, saying how to install it."""
import argparse
import decimal
import glob
import json
import os
import re
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL: ' + what)
    return cond


def page_errors(b, path):
    b.open(path)
    ready = b.evaluate("document.body.getAttribute('data-ready')")
    errors = b.errors()
    check(ready == '1', '%s: the script did not finish (data-ready %r)' % (path, ready))
    check(not errors, '%s: console errors: %s' % (path, errors))


def check_cases(b, cases):
    pages = sorted(glob.glob(os.path.join(cases, '*.html')))
    check(len(pages) >= 9, 'expected the pages of test_report.c in %s, found %d' % (cases, len(pages)))
    for page in pages:
        page_errors(b, page)
        name = os.path.basename(page)[:-5]
        scripts = b.evaluate('document.scripts.length')
        check(scripts == 2, '%s: %s script elements' % (name, scripts))
        missing = b.evaluate("Array.from(document.querySelectorAll('#missing li')).map(e => e.textContent)")
        if name == 'hostile':
            check(b.evaluate('typeof window.sp_pwned') == 'undefined', 'hostile: a name ran as script')
            check(b.evaluate("document.querySelectorAll('img, [onerror], #app script').length") == 0,
                  'hostile: a name became markup')
            check(b.evaluate("Array.from(document.querySelectorAll('b')).every(e => e.textContent !== 'thread')"),
                  'hostile: a thread name became markup')
            text = b.evaluate('document.body.innerText')
            check('</script><script>window.sp_pwned = 1</script>' in text,
                  'hostile: the script-like name is not shown as text')
            check(b.evaluate('document.title') == '</title><script>alert(1)</script> - stepprof report',
                  'hostile: the title is not the program name as text')
            labels = b.evaluate("Array.from(document.querySelectorAll('#tl-svg text title')).map(e => e.textContent)")
            check('<b>thread</b> "seven", tid 7' in labels, 'hostile: the thread lane label: %r' % labels[:3])
        elif name == 'empty':
            check(any('No events were recorded' in m for m in missing), 'empty: says nothing was recorded')
            check(b.evaluate("document.querySelectorAll('table.sp').length") == 0, 'empty: no tables')
        elif name == 'no_steps':
            check(any('No steps' in m for m in missing), 'no_steps: says there are no steps')
            check(b.evaluate("document.getElementById('tl-svg')") is None, 'no_steps: no timeline')
        elif name == 'gpu_only':
            check(any('only GPU records' in m for m in missing), 'gpu_only: says there are only GPU records')
            check(b.evaluate("!!document.getElementById('gpu-util')"), 'gpu_only: GPU utilisation drawn')
        elif name == 'drops':
            chips = b.evaluate("Array.from(document.querySelectorAll('.chip.bad')).map(e => e.textContent)")
            check('host_dropped = 12' in chips, 'drops: the dropped counter is shown in red: %r' % chips)
        elif name == 'threads_10k':
            lanes = b.evaluate("document.querySelectorAll('.tl-lane-label').length")
            check(lanes == 64, 'threads_10k: %s lanes, expected the 64 busiest' % lanes)
        elif name == 'big_step':
            check(b.evaluate("document.getElementById('tl-svg').getAttribute('data-drawn')") == '20000',
                  'big_step: the timeline draws the 20,000 events kept')
        elif name == 'ranks':
            views = b.evaluate("Array.from(document.querySelectorAll('#ranks .sp-table')).map(e => e.dataset.view)")
            check(views == ['Ranks', 'Collectives', 'Stragglers'], 'ranks: the cross-rank tables: %r' % views)
            row = b.evaluate("Array.from(document.querySelectorAll('.sp-table[data-view=Stragglers] tbody tr'))"
                             ".map(tr => Array.from(tr.cells).map(td => td.textContent))")
            check(len(row) == 1 and row[0][:3] == ['2', 'Dataloader', '3'] and row[0][5] == '#0, #3, #6',
                  'ranks: the straggler row names rank 2, Dataloader, steps #0, #3, #6: %r' % row)
        elif name == 'full':
            check(b.evaluate("document.querySelectorAll('#step-chart .step-bar').length") == 10, 'full: 10 step bars')
            check(b.evaluate("document.querySelectorAll('#memory-chart polyline').length") == 2,
                  'full: the memory curve (allocated, reserved)')
            check(b.evaluate("document.querySelectorAll('#top-kernels rect').length") == 1, 'full: one kernel bar')


def run_demo(train_mlp, out, workers):
    d = os.path.join(out, 'demo%d' % workers)
    r = subprocess.run([train_mlp, '--workers', str(workers), '--out', d], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=600)
    m = re.search(r'trace: (\S+)', r.stdout)
    if r.returncode != 0 or not m:
        sys.exit('train_mlp failed (%d): %s' % (r.returncode, r.stdout))
    return m.group(1)


def summary_rows(cli, trace):
    """The cells of every line of `stepprof summary` (columns are two or more
    spaces apart; a cell's own spaces are single)."""
    text = subprocess.run([cli, 'summary', trace], stdout=subprocess.PIPE, text=True, check=True).stdout
    return {tuple(re.split(r'\s{2,}', line.strip())) for line in text.splitlines() if line.strip()}


def median_step_events(trace):
    """The events the timeline must draw, counted from the trace: complete
    events on host threads that overlap the median step (a range that only
    touches it belongs to its neighbour), in ns as stepprof wrote them."""
    with open(trace) as f:  # exact decimals: a double loses the ns of a ts in us
        events = json.load(f, parse_float=decimal.Decimal)['traceEvents']
    # Not the "PyTorch Profiler (0)" span (cat Trace) Kineto's readers expect: no thread recorded it.
    ns = [(int(e['ts'] * 1000), int(e.get('dur', 0) * 1000), e) for e in events
          if e.get('ph') == 'X' and e.get('cat') != 'Trace']
    steps = []
    for ts, dur, e in ns:
        m = re.fullmatch(r'Profiler?Step#(\d+)', e['name'])
        if m:
            steps.append((dur, int(m.group(1)), ts))
    steps.sort()
    dur, number, start = steps[(len(steps) - 1) // 2]
    end = start + dur
    n = 0
    for ts, d, e in ns:
        if d > 0 and ts < end and ts + d > start:
            n += 1
        elif d == 0 and start <= ts <= end:
            n += 1
    return number, n


def check_demo(b, cli, trace, out, screenshot):
    page = os.path.join(out, 'demo.html')
    subprocess.run([cli, 'report', trace, '-o', page], check=True, stdout=subprocess.DEVNULL)
    page_errors(b, page)
    # Every row of every table is a line of `stepprof summary`.
    rows = b.evaluate("Array.from(document.querySelectorAll('table.sp tbody tr:not(.group):not(.cut)'))"
                      ".map(tr => Array.from(tr.cells).map(td => td.getAttribute('data-v').trim()))")
    text_rows = summary_rows(cli, trace)
    check(len(rows) >= 20, 'demo: %d table rows' % len(rows))
    for r in rows:
        check(tuple(r) in text_rows, 'demo: row %r is not a line of stepprof summary' % (r,))
    # Sorting: the Operator table by Calls, descending then ascending.
    op = "document.querySelector('.sp-table[data-view=Operator] table')"
    calls_col = b.evaluate("Array.from(%s.tHead.rows[0].cells).findIndex(th => th.textContent === 'Calls')" % op)
    check(calls_col == 1, 'demo: the Operator table has a Calls column (%s)' % calls_col)
    read = ("Array.from(%s.tBodies).flatMap(tb => Array.from(tb.rows)).filter(tr => !tr.classList.contains('group'))"
            ".map(tr => parseFloat(tr.cells[%d].textContent))" % (op, calls_col))
    for want in ('descending', 'ascending'):
        b.click('.sp-table[data-view=Operator] th', calls_col)
        got = b.evaluate(read)
        check(got == sorted(got, reverse=(want == 'descending')) and len(set(got)) > 1,
              'demo: Operator rows %s by Calls after a click: %r' % (want, got))
        check(b.evaluate("%s.tHead.rows[0].cells[%d].getAttribute('aria-sort')" % (op, calls_col)) == want,
              'demo: the Calls header says %s' % want)
    # The timeline draws every event of the median step.
    number, count = median_step_events(trace)
    tl = b.evaluate("[document.getElementById('tl-svg').getAttribute('data-drawn'),"
                    " document.querySelector('#timeline .note').textContent]")
    check(tl[0] == str(count), 'demo: timeline drew %s events, the trace has %d in step %d' % (tl[0], count, number))
    check(tl[1].startswith('Step %d ' % number), 'demo: the timeline is of step %d: %r' % (number, tl[1]))
    b.click('#tl-in')
    zoomed = int(b.evaluate("document.getElementById('tl-svg').getAttribute('data-drawn')"))
    check(0 < zoomed <= count, 'demo: zooming in draws a part of the step (%d of %d)' % (zoomed, count))
    bars = b.evaluate("document.querySelectorAll('#step-chart .step-bar').length")
    check(bars == 10, 'demo: %s step bars, expected 10 (steps 10..19)' % bars)
    check(b.evaluate("!!document.getElementById('slowest-step')"), 'demo: the slowest step is marked')
    check(b.evaluate("document.querySelectorAll('.verdict').length") >= 1, 'demo: the diagnosis is shown')
    meta = b.evaluate("document.getElementById('meta').textContent")
    check('Host' + socket.gethostname() in meta and 'Rankone process' in meta,
          'demo: the header names the host and the single process: %r' % meta)
    rate = b.evaluate("document.querySelector('#throughput-stats tr:nth-child(2) td:nth-child(2)').textContent")
    check(re.fullmatch(r'\d+(\.\d+)?', rate or '') is not None and float(rate) > 0,
          'demo: samples/s is shown (the demo passes its batch to step()): %r' % rate)
    check(b.evaluate("document.querySelectorAll('#throughput-chart rect').length") == 10,
          'demo: a samples/s bar per step')
    if screenshot:
        b.open(page)
        b.screenshot(screenshot, max_height=1500)
        print('screenshot: ' + screenshot)
    return page


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cli', required=True)
    ap.add_argument('--train-mlp', required=True)
    ap.add_argument('--cases', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--screenshot')
    a = ap.parse_args()
    chrome = cdp.find_chromium()
    if not chrome:
        print('report browser check: SKIPPED: needs Debian\'s chromium (apt-get install -y chromium)')
        return 77
    os.makedirs(a.out, exist_ok=True)
    base_trace = run_demo(a.train_mlp, a.out, 4)
    trace = run_demo(a.train_mlp, a.out, 0)
    with cdp.Browser(chrome) as b:
        check_cases(b, a.cases)
        check_demo(b, a.cli, trace, a.out, a.screenshot)
        page = os.path.join(a.out, 'demo_vs_workers4.html')
        subprocess.run([a.cli, 'report', trace, '--baseline', base_trace, '-o', page], check=True,
                       stdout=subprocess.DEVNULL)
        page_errors(b, page)
        was = b.evaluate("document.querySelectorAll('.sp-table .was').length")
        check(was > 10, 'baseline: %s figures show the baseline\'s' % was)
        check(b.evaluate("document.querySelectorAll('#step-stats th').length") == 5,
              'baseline: the step figures have baseline and change columns')
    print('report browser check: %s' % ('FAILED (%d)' % len(failures) if failures else 'ok'))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
