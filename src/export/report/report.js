/* report.js: draws stepprof's HTML report (docs/report.md) from the JSON
 * object in #sp-data. Every figure is computed by the C library; this
 * script only lays it out. It never sets HTML from data: names reach the
 * page through textContent and SVG text nodes only. */
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('sp-data').textContent);
  var run = data.run, base = data.baseline;
  var app = document.getElementById('app');
  var SVGNS = 'http://www.w3.org/2000/svg';
  var PHASE_COLORS = ['#e4a11b', '#3b7dd8', '#8e5cc4', '#2a9d8f', '#d1495b', '#9aa0a6'];
  var TYPE_COLORS = {
    Operator: '#3b7dd8', Dataloader: '#e4a11b', ProfileStep: '#8d99ae', CudaRuntime: '#6d4c41',
    Kernel: '#2e7d32', Memcpy: '#00838f', Memset: '#00acc1', UserDefined: '#f57c00',
    OperatorInner: '#7fa7e8', Forward: '#5c8fe0', Backward: '#8e5cc4', Optimization: '#2a9d8f',
    Communication: '#d1495b', PythonOp: '#9575cd', PythonUserDefined: '#ffb74d'
  };

  function el(tag, attrs) {
    var e = document.createElement(tag);
    setAttrs(e, attrs);
    for (var i = 2; i < arguments.length; i++) add(e, arguments[i]);
    return e;
  }
  function sv(tag, attrs) {
    var e = document.createElementNS(SVGNS, tag);
    setAttrs(e, attrs);
    for (var i = 2; i < arguments.length; i++) add(e, arguments[i]);
    return e;
  }
  function setAttrs(e, attrs) {
    if (!attrs) return;
    Object.keys(attrs).forEach(function (k) {
      var v = attrs[k];
      if (v === undefined || v === null) return;
      if (k === 'text') e.textContent = String(v);
      else if (k === 'class') e.setAttribute('class', v);
      else e.setAttribute(k, String(v));
    });
  }
  function add(parent, kid) {
    if (kid === undefined || kid === null || kid === false) return;
    if (Array.isArray(kid)) kid.forEach(function (k) { add(parent, k); });
    else parent.appendChild(typeof kid === 'string' ? document.createTextNode(kid) : kid);
  }
  function tip(node, text) { node.appendChild(sv('title', {text: text})); return node; }

  function fmtNs(ns) {
    var a = Math.abs(ns);
    if (!isFinite(ns)) return '-';
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (a >= 1e6) return (ns / 1e6).toFixed(2) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(2) + ' us';
    return Math.round(ns) + ' ns';
  }
  function fmtBytes(b) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(1) : String(b)) + ' ' + u[i];
  }
  function pct(x) { return (100 * x).toFixed(1) + '%'; }
  /* The change from a to b, as "+12.3%", and its class (up = slower). */
  function change(a, b) {
    if (!isFinite(a) || !isFinite(b)) return null;
    if (a === 0) return b === 0 ? {text: '0.0%', cls: ''} : {text: 'new', cls: 'up'};
    var c = (b - a) / Math.abs(a) * 100;
    return {text: (c >= 0 ? '+' : '') + c.toFixed(1) + '%', cls: c > 0.05 ? 'up' : c < -0.05 ? 'down' : ''};
  }
  function changeSpan(a, b) {
    var c = change(a, b);
    return c ? el('span', {class: c.cls, text: c.text}) : '';
  }
  function niceStep(max, n) {
    if (!(max > 0)) return 1;
    var raw = max / n, mag = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / mag;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
  }
  function section(id, title) {
    var s = el('section', {id: id}, el('h2', {text: title}));
    app.appendChild(s);
    return s;
  }

  /* ---- header ---- */
  function header() {
    var h = el('header', null, el('h1', {text: data.title}),
      el('div', {class: 'sub', text: 'stepprof report' + (base ? ', compared with a baseline' : '') +
        ' \u00b7 ' + data.generator}));
    var st = run.steps;
    var items = [
      ['File', run.source], ['Program', run.program || '(unnamed)'], ['PID', run.pid],
      ['Host', run.hostname || 'not recorded'],
      ['Rank', run.world_size > 1 ? run.rank + ' of ' + run.world_size + (run.backend ? ' (' + run.backend + ')' : '') +
        (run.job ? ', job ' + run.job : '') : 'one process'],
      ['Span', '#' + run.span_index + ', ' + fmtNs(run.span_ns)],
      ['Steps', st ? st.list.length + ' (' + st.list[0][0] + ' to ' + st.list[st.list.length - 1][0] + ')' : 'none'],
      ['Threads', run.threads], ['Host events', run.host_events], ['GPU records', run.gpu_records],
      ['Devices', run.devices.length ? run.devices.map(function (d) {
        return 'GPU ' + d.id + ': ' + d.name; }).join(', ') :
        run.gpu_records ? 'GPU (no device properties recorded)' : 'CPU only'],
      ['Options', run.options.length ? run.options.join(', ') : 'none']
    ];
    if (data.ranks) items.splice(1, 0, ['Ranks', data.ranks.ids.length + ': ' + data.ranks.ids.join(', ') +
      ' (the page shows the first; the Ranks section compares them all)']);
    if (base) items.push(['Baseline', (base.source || base.program || 'baseline') +
      (base.steps ? ', ' + base.steps.list.length + ' steps' : ', no steps')]);
    var meta = el('div', {class: 'meta', id: 'meta'});
    items.forEach(function (it) {
      if (it[1] === null || it[1] === undefined) return;
      meta.appendChild(el('div', {title: String(it[1])}, el('b', {text: it[0]}), String(it[1])));
    });
    h.appendChild(meta);
    var counters = el('div', {class: 'counters', id: 'counters'}, el('b', {text: 'Counters: '}));
    var bad = Object.keys(run.counters).filter(function (k) { return run.counters[k] > 0; });
    if (!bad.length) counters.appendChild(el('span', {class: 'chip', text: 'all zero: nothing dropped or repaired'}));
    bad.forEach(function (k) {
      counters.appendChild(el('span', {class: 'chip bad', 'data-counter': k, text: k + ' = ' + run.counters[k]}));
    });
    h.appendChild(counters);
    if (run.missing.length) {
      h.appendChild(el('ul', {class: 'missing', id: 'missing'}, run.missing.map(function (m) {
        return el('li', {text: m});
      })));
    }
    app.appendChild(h);
  }

  /* ---- diagnosis ---- */
  function diagnosis() {
    var s = section('diagnosis', 'Diagnosis');
    var d = run.diagnosis;
    if (!d) { s.appendChild(el('p', {class: 'note', text: 'No diagnosis: it needs recorded steps.'})); return; }
    d.verdicts.forEach(function (v) {
      s.appendChild(el('div', {class: 'verdict' + (v.id === 'no_dominant_bottleneck' ? ' none' : ''),
        'data-rule': v.id},
        el('h3', {text: v.title}), el('div', {text: v.evidence}),
        el('div', {class: 'rec'}, el('b', {text: 'Recommendation: '}), v.recommendation)));
    });
  }

  /* ---- ranks ---- */
  function ranksSection() {
    if (!data.ranks) return;
    var s = section('ranks', 'Ranks');
    s.appendChild(el('p', {class: 'note', text: 'One row per rank of the job: each figure a mean per step ' +
      '(time unit ms). A straggler is the rank the others waited for in a collective.'}));
    data.ranks.tables.forEach(function (t) { s.appendChild(renderTable(t, null)); });
  }

  /* ---- step breakdown ---- */
  function stepsSection() {
    var s = section('steps', 'Step breakdown');
    var st = run.steps;
    if (!st) { s.appendChild(el('p', {class: 'note', text: 'No steps were recorded.'})); return; }
    var list = st.list, n = list.length, np = st.phases.length;
    var W = 1160, H = 260, L = 60, B = 28, T = 14, gpuH = st.has_gpu ? 16 : 0;
    var max = 0;
    list.forEach(function (r) {
      var sum = 0;
      for (var p = 0; p < np; p++) sum += r[3 + p];
      max = Math.max(max, r[2], sum);
    });
    var plotH = H - B - T - gpuH, y = function (v) { return plotH * v / (max || 1); };
    var bw = (W - L) / n, svg = sv('svg', {width: W, height: H, id: 'step-chart', 'data-steps': n,
      viewBox: '0 0 ' + W + ' ' + H});
    var axis = sv('g', {class: 'axis'});
    var step = niceStep(max, 5);
    for (var v = 0; v <= max; v += step) {
      var yy = T + plotH - y(v);
      axis.appendChild(sv('line', {x1: L, x2: W, y1: yy, y2: yy}));
      axis.appendChild(sv('text', {x: L - 4, y: yy + 4, 'text-anchor': 'end', text: fmtNs(v)}));
    }
    svg.appendChild(axis);
    list.forEach(function (r, i) {
      var x = L + i * bw, acc = 0, g = sv('g', {class: 'step-bar', 'data-step': r[0]});
      var lines = ['step ' + r[0] + ': ' + fmtNs(r[2])];
      for (var p = 0; p < np; p++) {
        var h = y(r[3 + p]);
        if (h > 0) {
          g.appendChild(sv('rect', {x: x + 0.5, y: T + plotH - y(acc) - h, width: Math.max(bw - 1, 0.5), height: h,
            fill: PHASE_COLORS[p]}));
        }
        acc += r[3 + p];
        if (r[3 + p] > 0) lines.push(st.phases[p] + ': ' + fmtNs(r[3 + p]));
      }
      if (st.has_gpu && r[10] >= 0) {
        lines.push('GPU idle: ' + fmtNs(r[10]));
        g.appendChild(sv('rect', {x: x + 0.5, y: H - B - gpuH + 3, width: Math.max(bw - 1, 0.5),
          height: Math.max(gpuH - 4, 1), fill: '#d32f2f', opacity: Math.min(1, r[10] / (r[2] || 1)).toFixed(3)}));
      }
      tip(g, lines.join('\n'));
      svg.appendChild(g);
      if (r[0] === st.slowest) {
        svg.appendChild(sv('rect', {class: 'slowest', x: x, y: T + plotH - y(Math.max(r[2], acc)) - 1,
          width: Math.max(bw, 2), height: y(Math.max(r[2], acc)) + 1, id: 'slowest-step'}));
        svg.appendChild(sv('text', {x: Math.min(x + bw / 2, W - 60), y: T - 3, 'text-anchor': 'middle',
          text: 'slowest: step ' + r[0]}));
      }
      if (n <= 40 || i % Math.ceil(n / 40) === 0)
        svg.appendChild(sv('text', {x: x + bw / 2, y: H - 8, 'text-anchor': 'middle', text: String(r[0])}));
    });
    var my = T + plotH - y(st.mean_ns);
    svg.appendChild(tip(sv('line', {class: 'meanline', x1: L, x2: W, y1: my, y2: my}), 'mean ' + fmtNs(st.mean_ns)));
    s.appendChild(legend(st.phases.concat(st.has_gpu ? ['GPU idle (shade: share of the step)'] : []),
      PHASE_COLORS.slice(0, np).concat(['#d32f2f'])));
    s.appendChild(el('div', {class: 'scroll'}, svg));
    s.appendChild(stepStats(st, base && base.steps));
  }
  function legend(names, colors) {
    return el('div', {class: 'legend'}, names.map(function (nm, i) {
      return el('span', {style: '--c:' + colors[i], text: nm});
    }));
  }
  function phaseMeans(st) {
    var n = st.list.length, m = [];
    for (var p = 0; p < st.phases.length; p++) {
      var sum = 0;
      st.list.forEach(function (r) { sum += r[3 + p]; });
      m.push(sum / n);
    }
    if (st.has_gpu) {
      var idle = 0;
      st.list.forEach(function (r) { idle += r[10]; });
      m.push(idle / n);
    }
    return m;
  }
  function stepStats(st, bst) {
    var rows = [['Step time, median', st.median_ns, bst && bst.median_ns],
      ['Step time, mean', st.mean_ns, bst && bst.mean_ns],
      ['Step time, std. dev.', st.stdev_ns, bst && bst.stdev_ns]];
    var m = phaseMeans(st), bm = bst ? phaseMeans(bst) : [];
    st.phases.concat(st.has_gpu ? ['GPU idle'] : []).forEach(function (p, i) {
      rows.push([p + ', mean per step', m[i], bst ? bm[i] : undefined, m[i] / (st.mean_ns || 1)]);
    });
    var head = ['', 'this run', 'share'];
    if (bst) head.push('baseline', 'change');
    var t = el('table', {class: 'stats', id: 'step-stats'}, el('tr', null, head.map(function (h) {
      return el('th', {text: h});
    })));
    rows.forEach(function (r) {
      var tr = el('tr', null, el('td', {text: r[0]}), el('td', {text: fmtNs(r[1])}),
        el('td', {text: r[3] === undefined ? '' : pct(r[3])}));
      if (bst) tr.appendChild(el('td', {text: r[2] === undefined ? '-' : fmtNs(r[2])}));
      if (bst) tr.appendChild(el('td', null, r[2] === undefined ? '' : changeSpan(r[2], r[1])));
      t.appendChild(tr);
    });
    return t;
  }

  /* ---- throughput ---- */
  function fmtRate(v, kind) {
    if (v === undefined || v === null || v < 0) return '-';
    if (kind === 'mfu') return (100 * v).toFixed(2) + '%';
    if (kind === 'flops') return (v / 1e12).toFixed(3) + ' TFLOP/s';
    return v >= 100 ? v.toFixed(1) : v.toFixed(3);
  }
  function throughputSection() {
    var s = section('throughput', 'Throughput');
    var t = run.throughput, bt = base && base.throughput;
    if (!t) { s.appendChild(el('p', {class: 'note', text: 'No steps were recorded.'})); return; }
    var metrics = [['samples_per_s', 'Samples/s', 'rate'], ['tokens_per_s', 'Tokens/s', 'rate'],
      ['flops_per_s', 'FLOP/s', 'flops'], ['mfu', 'MFU', 'mfu']];
    var head = ['', 'median per step', 'mean'];
    if (bt) head.push('baseline median', 'change');
    head.push('');
    var table = el('table', {class: 'stats', id: 'throughput-stats'}, el('tr', null, head.map(function (h) {
      return el('th', {text: h});
    })));
    metrics.forEach(function (m) {
      var st = t[m[0]], tr = el('tr', null, el('td', {text: m[1]}), el('td', {text: fmtRate(st.median, m[2])}),
        el('td', {text: fmtRate(st.mean, m[2])}));
      if (bt) {
        var b = bt[m[0]];
        tr.appendChild(el('td', {text: fmtRate(b.median, m[2])}));
        tr.appendChild(el('td', null, b.median >= 0 && st.median >= 0 ? changeSpan(st.median, b.median) : ''));
      }
      tr.appendChild(el('td', {class: 'note', text: st.unknown ? st.unknown + '.' : ''}));
      table.appendChild(tr);
    });
    s.appendChild(table);
    if (t.peak_flops > 0)
      s.appendChild(el('p', {class: 'note', text: 'Peak for MFU: ' + fmtRate(t.peak_flops, 'flops') +
        (t.peak_row ? ' (' + t.peak_row + ')' : '') + '.'}));
    var known = t.steps.filter(function (r) { return r[1] >= 0; });
    if (known.length) {
      var W = 1160, H = 120, L = 60, B = 20, max = 0, n = t.steps.length, bw = (W - L) / n;
      known.forEach(function (r) { max = Math.max(max, r[1]); });
      var svg = sv('svg', {width: W, height: H, id: 'throughput-chart', viewBox: '0 0 ' + W + ' ' + H});
      svg.appendChild(sv('text', {x: L - 4, y: 12, 'text-anchor': 'end', text: fmtRate(max, 'rate')}));
      svg.appendChild(sv('text', {x: L - 4, y: H - B, 'text-anchor': 'end', text: '0'}));
      t.steps.forEach(function (r, i) {
        if (r[1] < 0) return;
        var h = (H - B - 6) * r[1] / (max || 1);
        svg.appendChild(tip(sv('rect', {x: L + i * bw + 0.5, y: H - B - h, width: Math.max(bw - 1, 0.5), height: h,
          fill: '#2a9d8f'}), 'step ' + r[0] + ': ' + fmtRate(r[1], 'rate') + ' samples/s'));
      });
      s.appendChild(el('p', {class: 'note', text: 'Samples/s per step:'}));
      s.appendChild(el('div', {class: 'scroll'}, svg));
    }
  }

  /* ---- top operators and kernels ---- */
  function barChart(id, title, rows, baseRows) {
    var box = el('div', null, el('h3', {text: title}));
    if (!rows.length) { box.appendChild(el('p', {class: 'note', text: 'None recorded.'})); return box; }
    var baseBy = {};
    (baseRows || []).forEach(function (r) { baseBy[r[0]] = r; });
    var W = 560, rowH = base ? 26 : 20, L = 210, H = rows.length * rowH + 6;
    var max = 0;
    rows.forEach(function (r) { max = Math.max(max, r[1], baseBy[r[0]] ? baseBy[r[0]][1] : 0); });
    var svg = sv('svg', {width: W, height: H, id: id, viewBox: '0 0 ' + W + ' ' + H});
    rows.forEach(function (r, i) {
      var y0 = 3 + i * rowH, w = (W - L - 80) * r[1] / (max || 1);
      var label = r[0].length > 34 ? r[0].slice(0, 33) + '\u2026' : r[0];
      svg.appendChild(tip(sv('text', {x: L - 6, y: y0 + 12, 'text-anchor': 'end', text: label}), r[0]));
      svg.appendChild(tip(sv('rect', {x: L, y: y0 + 2, width: Math.max(w, 1), height: 12, fill: '#3b7dd8',
        'data-name': r[0], 'data-ns': r[1]}), r[0] + ': ' + fmtNs(r[1]) + ' in ' + r[2] + ' calls'));
      svg.appendChild(sv('text', {x: L + Math.max(w, 1) + 4, y: y0 + 12, text: fmtNs(r[1])}));
      var b = baseBy[r[0]];
      if (base) {
        var bw = b ? (W - L - 80) * b[1] / (max || 1) : 0;
        svg.appendChild(tip(sv('rect', {x: L, y: y0 + 15, width: Math.max(bw, b ? 1 : 0), height: 5,
          fill: '#9aa0a6'}), 'baseline: ' + (b ? fmtNs(b[1]) : 'absent')));
      }
    });
    box.appendChild(svg);
    return box;
  }
  function topSection() {
    var s = section('top', 'Top operators and kernels');
    s.appendChild(el('div', {class: 'charts'},
      barChart('top-ops', 'Operators (outermost), host time', run.top_ops, base && base.top_ops),
      barChart('top-kernels', 'Kernels, GPU time', run.top_kernels, base && base.top_kernels)));
    if (base) s.appendChild(el('p', {class: 'note', text: 'Grey bars: the baseline.'}));
  }

  /* ---- GPU utilisation ---- */
  function gpuSection() {
    var s = section('gpu', 'GPU utilisation');
    var u = run.gpu_util;
    if (!u) { s.appendChild(el('p', {class: 'note', text: 'No kernels were recorded.'})); return; }
    var W = 1160, H = 140, L = 60, B = 22, n = u.busy.length, bw = (W - L) / n;
    var svg = sv('svg', {width: W, height: H, id: 'gpu-util', viewBox: '0 0 ' + W + ' ' + H});
    [0, 0.5, 1].forEach(function (v) {
      var yy = 6 + (H - B - 6) * (1 - v);
      svg.appendChild(sv('line', {class: 'axis', x1: L, x2: W, y1: yy, y2: yy, stroke: '#d9dee6'}));
      svg.appendChild(sv('text', {x: L - 4, y: yy + 4, 'text-anchor': 'end', text: (v * 100) + '%'}));
    });
    var d = 'M' + L + ' ' + (H - B);
    u.busy.forEach(function (b, i) {
      var yy = 6 + (H - B - 6) * (1 - b);
      d += ' L' + (L + i * bw).toFixed(1) + ' ' + yy.toFixed(1) + ' L' + (L + (i + 1) * bw).toFixed(1) + ' ' + yy.toFixed(1);
    });
    d += ' L' + W + ' ' + (H - B) + ' Z';
    svg.appendChild(sv('path', {d: d, fill: '#2e7d32', opacity: 0.75}));
    svg.appendChild(sv('text', {x: L, y: H - 6, text: '0'}));
    svg.appendChild(sv('text', {x: W, y: H - 6, 'text-anchor': 'end', text: fmtNs(u.bin_ns * n)}));
    var mean = u.busy.reduce(function (a, b) { return a + b; }, 0) / n;
    s.appendChild(el('p', {class: 'note', text: 'Share of each ' + fmtNs(u.bin_ns) +
      ' in which some kernel ran, from the first step\u2019s start. Mean: ' + pct(mean) + '.'}));
    s.appendChild(el('div', {class: 'scroll'}, svg));
  }

  /* ---- one-step timeline ---- */
  function timelineSection() {
    var s = section('timeline', 'Timeline of the median step');
    var tl = run.timeline;
    if (!tl) { s.appendChild(el('p', {class: 'note', text: 'No steps, so no step to show.'})); return; }
    var note = 'Step ' + tl.step + ' (' + fmtNs(tl.dur_ns) + '), the median step: ' + tl.events_shown + ' events';
    if (tl.events_shown < tl.events_total)
      note += ' of ' + tl.events_total + ' (the ' + (tl.events_total - tl.events_shown) +
        ' shortest, or those of the quietest lanes, are left out)';
    s.appendChild(el('p', {class: 'note', text: note + '. Wheel or +/- to zoom, drag to pan.'}));
    var ctl = el('div', {class: 'tl-controls'});
    var LBL = 190, ROW = 13, W = 1160;
    var lanes = tl.lanes.map(function (l) {
      var depth = 0;
      l.events.forEach(function (e) { depth = Math.max(depth, e[2]); });
      return {name: l.name, events: l.events, h: (depth + 1) * ROW + 8};
    });
    var H = 4;
    lanes.forEach(function (l) { l.y = H; H += l.h; });
    H = Math.max(H, 30);
    var svg = sv('svg', {width: W, height: H, id: 'tl-svg', viewBox: '0 0 ' + W + ' ' + H});
    var evg = sv('g'), lab = sv('g');
    lanes.forEach(function (l, i) {
      lab.appendChild(sv('rect', {x: 0, y: l.y - 2, width: W, height: l.h, fill: i % 2 ? '#fafbfd' : '#fff'}));
      var name = l.name.length > 30 ? l.name.slice(0, 29) + '\u2026' : l.name;
      lab.appendChild(tip(sv('text', {class: 'tl-lane-label', x: 4, y: l.y + 10, text: name}), l.name));
    });
    svg.appendChild(lab);
    svg.appendChild(evg);
    svg.appendChild(sv('line', {x1: LBL - 2, x2: LBL - 2, y1: 0, y2: H, stroke: '#d9dee6'}));
    var view = {a: 0, b: Math.max(tl.dur_ns, 1)};
    var scale = sv('text', {x: W - 4, y: H - 3, 'text-anchor': 'end'});
    svg.appendChild(scale);
    function draw() {
      while (evg.firstChild) evg.removeChild(evg.firstChild);
      var k = (W - LBL) / (view.b - view.a), drawn = 0, labels = 0;
      lanes.forEach(function (l) {
        l.events.forEach(function (e) {
          if (e[0] > view.b || e[0] + e[1] < view.a) return;
          var x0 = LBL + (Math.max(e[0], view.a) - view.a) * k;
          var x1 = LBL + (Math.min(e[0] + e[1], view.b) - view.a) * k;
          var name = tl.names[e[3]], type = tl.types[e[4]] || 'Other';
          var r = sv('rect', {class: 'tl-ev', x: x0.toFixed(2), y: l.y + e[2] * ROW, width: Math.max(x1 - x0, 0.6).toFixed(2),
            height: ROW - 2, fill: TYPE_COLORS[type] || '#888'});
          tip(r, name + '\n' + type + ', ' + fmtNs(e[1]) + ' at +' + fmtNs(e[0]));
          evg.appendChild(r);
          drawn++;
          if (x1 - x0 > 50 && labels < 600) {
            var chars = Math.floor((x1 - x0 - 4) / 6);
            evg.appendChild(sv('text', {class: 'tl-name', x: (x0 + 2).toFixed(2), y: l.y + e[2] * ROW + 9,
              text: name.length > chars ? name.slice(0, Math.max(chars - 1, 1)) + '\u2026' : name}));
            labels++;
          }
        });
      });
      svg.setAttribute('data-drawn', drawn);
      scale.textContent = 'view: ' + fmtNs(view.a) + ' to ' + fmtNs(view.b) + ' of the step';
    }
    function zoom(f, at) {
      var span = view.b - view.a, c = view.a + span * at;
      var ns = Math.min(Math.max(span * f, 100), Math.max(tl.dur_ns, 1));
      view.a = Math.max(0, c - ns * at);
      view.b = Math.min(Math.max(tl.dur_ns, 1), view.a + ns);
      view.a = Math.max(0, view.b - ns);
      draw();
    }
    ctl.appendChild(el('button', {type: 'button', id: 'tl-in', text: '+'}));
    ctl.appendChild(el('button', {type: 'button', id: 'tl-out', text: '\u2212'}));
    ctl.appendChild(el('button', {type: 'button', id: 'tl-reset', text: 'Whole step'}));
    ctl.children[0].addEventListener('click', function () { zoom(0.5, 0.5); });
    ctl.children[1].addEventListener('click', function () { zoom(2, 0.5); });
    ctl.children[2].addEventListener('click', function () { view.a = 0; view.b = Math.max(tl.dur_ns, 1); draw(); });
    var wrap = el('div', {class: 'tl-wrap'}, svg);
    function atX(ev) {
      var box = svg.getBoundingClientRect();
      var x = (ev.clientX - box.left) * W / (box.width || W);
      return Math.min(Math.max((x - LBL) / (W - LBL), 0), 1);
    }
    wrap.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      zoom(ev.deltaY > 0 ? 1.25 : 0.8, atX(ev));
    }, {passive: false});
    var drag = null;
    wrap.addEventListener('mousedown', function (ev) { drag = {x: ev.clientX, a: view.a, b: view.b}; wrap.classList.add('drag'); });
    window.addEventListener('mouseup', function () { drag = null; wrap.classList.remove('drag'); });
    window.addEventListener('mousemove', function (ev) {
      if (!drag) return;
      var box = svg.getBoundingClientRect();
      var dt = (ev.clientX - drag.x) * W / (box.width || W) * (drag.b - drag.a) / (W - LBL);
      var span = drag.b - drag.a, a = Math.min(Math.max(drag.a - dt, 0), Math.max(tl.dur_ns, 1) - span);
      view.a = a; view.b = a + span;
      draw();
    });
    s.appendChild(ctl);
    s.appendChild(wrap);
    var used = {};
    lanes.forEach(function (l) { l.events.forEach(function (e) { used[tl.types[e[4]]] = 1; }); });
    var names = Object.keys(used).sort();
    s.appendChild(legend(names, names.map(function (t) { return TYPE_COLORS[t] || '#888'; })));
    draw();
  }

  /* ---- memory ---- */
  function memorySection() {
    var s = section('memory', 'Memory');
    var mem = run.memory;
    if (!mem) { s.appendChild(el('p', {class: 'note', text: 'Memory was not profiled (profile_memory off, or no allocator reported).'})); return; }
    var W = 1160, H = 200, L = 80, B = 22, T = 8, tmin = Infinity, tmax = -Infinity, vmax = 0;
    mem.forEach(function (p) {
      p.points.forEach(function (q) {
        tmin = Math.min(tmin, q[0]); tmax = Math.max(tmax, q[0]); vmax = Math.max(vmax, q[1], q[2]);
      });
    });
    if (!(tmax > tmin)) tmax = tmin + 1;
    var svg = sv('svg', {width: W, height: H, id: 'memory-chart', viewBox: '0 0 ' + W + ' ' + H});
    var colors = ['#3b7dd8', '#d1495b', '#2a9d8f', '#8e5cc4', '#e4a11b'];
    var x = function (t) { return L + (W - L - 10) * (t - tmin) / (tmax - tmin); };
    var y = function (v) { return T + (H - B - T) * (1 - v / (vmax || 1)); };
    [0, 0.5, 1].forEach(function (f) {
      svg.appendChild(sv('line', {x1: L, x2: W, y1: y(vmax * f), y2: y(vmax * f), stroke: '#d9dee6'}));
      svg.appendChild(sv('text', {x: L - 4, y: y(vmax * f) + 4, 'text-anchor': 'end', text: fmtBytes(Math.round(vmax * f))}));
    });
    var names = [];
    mem.forEach(function (p, i) {
      var c = colors[i % colors.length], alloc = '', res = '', peak = 0;
      p.points.forEach(function (q) {
        alloc += (alloc ? ' ' : '') + x(q[0]).toFixed(1) + ',' + y(q[1]).toFixed(1);
        res += (res ? ' ' : '') + x(q[0]).toFixed(1) + ',' + y(q[2]).toFixed(1);
        peak = Math.max(peak, q[1]);
      });
      svg.appendChild(sv('polyline', {points: res, fill: 'none', stroke: c, 'stroke-dasharray': '4 3', opacity: 0.6}));
      svg.appendChild(tip(sv('polyline', {points: alloc, fill: 'none', stroke: c, 'stroke-width': 1.5}),
        p.place + ': peak allocated ' + fmtBytes(peak)));
      names.push(p.place + ' (peak ' + fmtBytes(peak) + ', ' + p.events + ' events)');
    });
    svg.appendChild(sv('text', {x: L, y: H - 6, text: fmtNs(tmin)}));
    svg.appendChild(sv('text', {x: W, y: H - 6, 'text-anchor': 'end', text: fmtNs(tmax)}));
    s.appendChild(legend(names, colors));
    s.appendChild(el('p', {class: 'note', text: 'Solid: allocated; dashed: reserved. Time from the first step\u2019s start.'}));
    s.appendChild(el('div', {class: 'scroll'}, svg));
  }

  /* ---- summary tables ---- */
  function number(cell) {
    var t = cell.trim();
    if (t === '-' || t === '') return -Infinity;
    var v = parseFloat(t);
    return isNaN(v) ? null : v;
  }
  /* Rows of a body in blocks: a row and the indented rows under it move
   * together, so sorting keeps each operator's inner rows below it. */
  function sortBody(tbody, col, dir) {
    var blocks = [];
    Array.prototype.forEach.call(tbody.rows, function (tr) {
      if (tr.classList.contains('group') || tr.classList.contains('cut')) return;
      var first = tr.cells[0].textContent;
      if (/^\s/.test(first) && blocks.length && !/^\s/.test(blocks[blocks.length - 1][0].cells[0].textContent)) {
        blocks[blocks.length - 1].push(tr);
      } else {
        blocks.push([tr]);
      }
    });
    var keyed = blocks.map(function (b, i) {
      var c = b[0].cells[col] ? b[0].cells[col].getAttribute('data-v') : '';
      return {b: b, i: i, n: number(c), s: c};
    });
    keyed.sort(function (p, q) {
      var r;
      if (p.n !== null && q.n !== null) r = p.n < q.n ? -1 : p.n > q.n ? 1 : 0;
      else r = p.s < q.s ? -1 : p.s > q.s ? 1 : 0;
      return r * dir || p.i - q.i;
    });
    var tail = Array.prototype.filter.call(tbody.rows, function (tr) { return tr.classList.contains('cut'); });
    keyed.forEach(function (k) { k.b.forEach(function (tr) { tbody.appendChild(tr); }); });
    tail.forEach(function (tr) { tbody.appendChild(tr); });
  }
  function makeSortable(table) {
    var ths = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(ths, function (th, col) {
      th.addEventListener('click', function () {
        var dir = th.getAttribute('aria-sort') === 'descending' ? 1 : -1;
        Array.prototype.forEach.call(ths, function (o) { o.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', dir < 0 ? 'descending' : 'ascending');
        Array.prototype.forEach.call(table.tBodies, function (b) { sortBody(b, col, dir); });
      });
    });
  }
  function tableKey(view, section, first) { return view + '\u0001' + section + '\u0001' + first; }
  function baselineRows() {
    var rows = {};
    if (!base) return rows;
    base.tables.forEach(function (t) {
      var sec = 0;
      t.lines.forEach(function (ln) {
        if (ln[0] === 'header') sec++;
        if (ln[0] === 'row') rows[tableKey(t.view, sec, ln[1])] = ln.slice(1);
      });
    });
    return rows;
  }
  function renderTable(t, baseBy) {
    var box = el('div', {class: 'sp-table', 'data-view': t.view});
    var table = null, body = null, ncols = 0, notes = null, sec = 0, titled = false;
    t.lines.forEach(function (ln) {
      var kind = ln[0];
      if (kind === 'title') {
        var text = ln[1].replace(/^-+|-+$/g, '');
        if (!titled) { box.appendChild(el('h3', {text: text})); titled = true; return; }
        if (table) {
          body = el('tbody');
          body.appendChild(el('tr', {class: 'group'}, el('td', {colspan: ncols, text: text})));
          table.appendChild(body);
        } else {
          box.appendChild(el('h4', {text: text}));
        }
      } else if (kind === 'text') {
        if (/^Note:/.test(ln[1])) {
          notes = el('pre');
          box.appendChild(el('details', null, el('summary', {text: 'Note'}), notes));
        } else if (notes) {
          notes.appendChild(document.createTextNode(ln[1] + '\n'));
        } else {
          box.appendChild(el('p', {class: 'note', text: ln[1]}));
        }
      } else if (kind === 'header') {
        sec++;
        ncols = ln.length - 1;
        table = el('table', {class: 'sp'});
        var tr = el('tr');
        ln.slice(1).forEach(function (c) { tr.appendChild(el('th', {text: c, title: 'click to sort'})); });
        table.appendChild(el('thead', null, tr));
        body = el('tbody');
        table.appendChild(body);
        box.appendChild(el('div', {class: 'scroll'}, table));
        makeSortable(table);
      } else if (kind === 'row') {
        if (!table) {
          ncols = ln.length - 1;
          table = el('table', {class: 'sp'});
          body = el('tbody');
          table.appendChild(body);
          box.appendChild(el('div', {class: 'scroll'}, table));
        }
        var compare = base && baseBy !== null;
        var was = compare ? baseBy[tableKey(t.view, sec, ln[1])] : undefined;
        var row = el('tr');
        ln.slice(1).forEach(function (c, i) {
          var td = el('td', {'data-v': c, text: c});
          if (compare && i > 0) {
            if (!was) {
              if (i === 1) td.appendChild(el('span', {class: 'was', text: 'not in the baseline'}));
            } else {
              var a = number(was[i]), b = number(c);
              if (a !== null && b !== null && isFinite(a) && isFinite(b) && was[i] !== c) {
                var ch = change(a, b);
                td.appendChild(el('span', {class: 'was ' + (ch ? ch.cls : ''),
                  text: 'was ' + was[i].split(' / ')[0] + (ch ? ' (' + ch.text + ')' : '')}));
              }
            }
          }
          row.appendChild(td);
        });
        body.appendChild(row);
      } else if (kind === 'cut') {
        body.appendChild(el('tr', {class: 'cut'}, el('td', {colspan: ncols,
          text: ln[1] + ' more rows are not shown here: `stepprof summary` prints them all.'})));
      }
    });
    return box;
  }
  function tablesSection() {
    var s = section('tables', 'Summary tables');
    s.appendChild(el('p', {class: 'note', text: 'The tables of `stepprof summary` (time unit ms; click a column to sort).' +
      (base ? ' Under each figure that changed: the baseline\u2019s, and the change.' : '')}));
    if (!run.tables.length) { s.appendChild(el('p', {class: 'note', text: 'No tables: nothing was recorded.'})); return; }
    var baseBy = baselineRows();
    run.tables.forEach(function (t) { s.appendChild(renderTable(t, baseBy)); });
  }

  header();
  diagnosis();
  ranksSection();
  stepsSection();
  throughputSection();
  topSection();
  gpuSection();
  timelineSection();
  memorySection();
  tablesSection();
  document.body.setAttribute('data-ready', '1');
})();
