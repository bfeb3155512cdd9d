"""catapult_check.py: opens stepprof traces in catapult's trace viewer (the
trace_viewer_full.html bundled with torch_tb_profiler, the plugin's Trace
view) in headless Chromium, and takes a screenshot of each as evidence.

The plugin's own page (trace_embedding.html) loads the bundle with an HTML
import and the webcomponents.js polyfill from a CDN; Chromium dropped HTML
imports and custom elements v0, and the CDN is not reachable from test
machines. So this script writes a page that inlines the bundle (what an HTML
import would have done) after Debian's custom-elements-v0 polyfill
(libjs-webcomponentsjs-custom-element-v0), embeds the trace text, and runs
the same import as trace_embedding.html: tr.importer.Import(model) on the
trace, then a tr-ui-timeline-view showing the model. The page writes its
verdict into <pre id="verdict">: import errors and warnings (model
.importWarnings), the number of processes, threads and slices, and the
track names. --dump-dom gives the verdict; --screenshot the picture.

Needs Debian's chromium and libjs-webcomponentsjs-custom-element-v0; without
them it says so and exits 77 (skipped).

Usage: catapult_check.py --out DIR [--name NAME TRACE]..."""
import argparse
import gzip
import html
import json
import os
import re
import shutil
import subprocess
import sys

POLYFILL = '/usr/lib/javascript/webcomponentsjs-custom-element-v0/CustomElements.js'

PAGE_SCRIPT = r"""
<script>
'use strict';
window.__hideTraceViewerPolyfillWarning = true;
function sp_verdict(v) {
  const pre = document.createElement('pre');
  pre.id = 'verdict';
  pre.textContent = 'VERDICT ' + JSON.stringify(v);
  pre.style.display = 'none';
  document.body.appendChild(pre);
}
function sp_run() {
  const v = {errors: (window.sp_early || []).slice(0, 5), warnings: []};
  try {
    const text = document.getElementById('trace-data').textContent;
    const model = window.sp_model = new tr.Model();
    const i = new tr.importer.Import(model);
    i.importTraces([text]);
    for (const w of model.importWarnings) v.warnings.push(w.type + ': ' + w.message);
    const procs = Object.values(model.processes);
    v.processes = procs.map(p => p.userFriendlyName);
    v.threads = 0; v.slices = 0; v.flows = model.flowEvents.length;
    v.tracks = [];
    for (const p of procs) for (const t of Object.values(p.threads)) {
      v.threads++; v.slices += t.sliceGroup.length;
      v.tracks.push(p.pid + '/' + t.userFriendlyName + ': ' + t.sliceGroup.length);
    }
  } catch (e) {
    v.errors.push(String(e && e.stack || e));
  }
  v.imported = true;
  sp_verdict(v);
  try {
    const viewer = document.createElement('tr-ui-timeline-view');
    const container = document.createElement('track-view-container');
    container.id = 'track_view_container';
    viewer.track_view_container = container;
    Polymer.dom(viewer).appendChild(container);
    viewer.id = 'trace-viewer';
    viewer.globalMode = true;
    viewer.style.width = '100%'; viewer.style.height = '100%';
    Polymer.dom(document.body).appendChild(viewer);
    viewer.model = window.sp_model;
    viewer.viewTitle = document.title;
    sp_verdict({shown: true});
  } catch (e) {
    sp_verdict({shown: false, error: String(e && e.stack || e)});
  }
}
if (window.CustomElements && !window.CustomElements.ready)
  document.addEventListener('WebComponentsReady', sp_run);
else
  document.addEventListener('DOMContentLoaded', () => setTimeout(sp_run, 0));
</script>
"""


def read_text(path):
    data = open(path, 'rb').read()
    if path.endswith('.gz'):
        data = gzip.decompress(data)
    return data.decode('utf-8')


def find_chromium():
    for name in ('chromium', 'chromium-browser', 'google-chrome'):
        p = shutil.which(name)
        if p:
            return p
    return None


def make_page(bundle, trace_path, title, page):
    text = read_text(trace_path)
    json.loads(text)  # our own sanity check: the viewer gets valid JSON
    with open(page, 'w') as f:
        f.write('<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>%s</title>\n' % html.escape(title))
        f.write('<style>html,body{margin:0;padding:0;width:100%;height:100%;overflow:hidden}</style>\n')
        f.write('<script>window.addEventListener("error", e => { (window.sp_early = window.sp_early || [])'
                '.push(String(e.message)); });\n'
                # What the HTML-imports polyfill provided: the script being run.
                'if (!("_currentScript" in document)) Object.defineProperty(document, "_currentScript", '
                '{configurable: true, get() { return document.currentScript; }});\n'
                # Shadow DOM v0, which the viewer's overlays use, as far as they need it.
                'if (!Element.prototype.createShadowRoot) Element.prototype.createShadowRoot = '
                'function () { try { return this.attachShadow({mode: "open"}); } catch (e) { '
                'const d = document.createElement("div"); this.appendChild(d); return d; } };</script>\n')
        f.write('<script src="CustomElements.js"></script>\n')
        f.write(bundle)
        f.write('\n<script type="application/json" id="trace-data">')
        f.write(text.replace('</', '<\\/'))  # keeps </script> inside strings harmless; JSON reads \/ as /
        f.write('</script>\n')
        f.write(PAGE_SCRIPT)
        f.write('</head><body></body></html>\n')


def chromium_args(chrome):
    return [chrome, '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
            '--no-first-run', '--allow-file-access-from-files', '--hide-scrollbars',
            '--virtual-time-budget=20000', '--window-size=1400,800']


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    ap.add_argument('--bundle', help='trace_viewer_full.html (default: the one torch_tb_profiler ships)')
    ap.add_argument('--trace', nargs=2, action='append', metavar=('NAME', 'TRACE'), required=True)
    a = ap.parse_args()
    chrome = find_chromium()
    if not chrome or not os.path.exists(POLYFILL):
        print('catapult: SKIPPED: needs Debian packages chromium and libjs-webcomponentsjs-custom-element-v0 '
              '(apt-get install -y chromium libjs-webcomponentsjs-custom-element-v0)')
        return 77
    bundle_path = a.bundle
    if not bundle_path:
        import torch_tb_profiler
        bundle_path = os.path.join(os.path.dirname(torch_tb_profiler.__file__), 'static', 'trace_viewer_full.html')
    bundle = open(bundle_path, encoding='utf-8').read()
    os.makedirs(a.out, exist_ok=True)
    shutil.copy(POLYFILL, os.path.join(a.out, 'CustomElements.js'))
    failed = 0
    for name, trace in a.trace:
        page = os.path.abspath(os.path.join(a.out, 'catapult_%s.html' % name))
        shot = os.path.abspath(os.path.join(a.out, 'catapult_%s.png' % name))
        make_page(bundle, trace, name, page)
        # Headless Chromium on a loaded 2-core machine sometimes returns the
        # DOM before the page has run: try up to three times.
        for attempt in range(3):
            r = subprocess.run(chromium_args(chrome) + ['--dump-dom', 'file://' + page],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=180)
            dom = r.stdout.decode('utf-8', 'replace')
            verdicts = [json.loads(html.unescape(x)) for x in re.findall(r'VERDICT (\{.*?\})</pre>', dom, re.S)]
            v = next((x for x in verdicts if x.get('imported')), None)
            shown = next((x for x in verdicts if 'shown' in x), None)
            if v and shown:
                break
        if not v:
            print('catapult: %s: FAIL: no verdict from the page (chromium exit %d)\n%s'
                  % (name, r.returncode, r.stderr.decode('utf-8', 'replace')[-2000:]))
            failed += 1
            continue
        ok = not v['errors'] and not v['warnings'] and v.get('slices', 0) > 0
        view = 'timeline view shown' if shown and shown['shown'] else \
            'timeline view FAILED: %s' % (shown['error'][:500] if shown else 'did not finish')
        ok = ok and 'FAILED' not in view
        for attempt in range(3):  # a blank page (taken before the first paint) is a few KB
            subprocess.run(chromium_args(chrome) + ['--screenshot=' + shot, 'file://' + page],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=180)
            if os.path.exists(shot) and os.path.getsize(shot) > 20000:
                break
        print('catapult: %s: %s: %d processes %s, %d threads, %d slices, %d flows; import errors %s, '
              'warnings %s; %s; screenshot %s'
              % (name, 'ok' if ok else 'FAIL', len(v.get('processes', [])), v.get('processes'),
                 v.get('threads', 0), v.get('slices', 0), v.get('flows', 0), v['errors'] or 'none',
                 v['warnings'] or 'none', view, shot if os.path.exists(shot) else '(none taken)'))
        if not ok:
            failed += 1
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
