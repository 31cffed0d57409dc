/* page.js — the interactive views of index.html (src/render/page.h).
 * Reads the traces embedded as <script type="application/json" class="attnviz-data">
 * and draws, with no network and no library: a head view, a model view, a
 * heatmap, the step-through of one head for one query, a generation
 * timeline when a trace has one, and a long text's passage (page_passage.js).  Long inputs are drawn on canvases.
 * Tests read what is drawn from data attributes and window.attnvizPage. */
(function () {
  'use strict';
  var app = document.getElementById('attnviz-app');
  if (!app) return;
  var blocks = document.querySelectorAll('script.attnviz-data');
  var sets = [];
  /* A matrix as the C side embeds it, {rows, cols, f32: base64 of its float32
     bytes, little-endian}, back into rows of numbers (non-finite: null); with
     lower: true, row r holds its first r + 1 values and the rest are 0 (a
     causal map's weights). */
  function matrixOf(x) {
    if (!x || typeof x.f32 !== 'string') return x;
    var s = atob(x.f32), u = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
    var dv = new DataView(u.buffer), rows = [];
    for (var r = 0, at = 0; r < x.rows; r++) {
      var row = new Array(x.cols), n = x.lower ? r + 1 : x.cols;
      for (var c = 0; c < x.cols; c++) {
        if (c >= n) { row[c] = 0; continue; }
        var v = dv.getFloat32(at, true);
        at += 4;
        row[c] = isFinite(v) ? v : null;
      }
      rows.push(row);
    }
    return rows;
  }
  var PARTS = ['weights', 'scores', 'scaled', 'masked', 'output'];
  for (var b = 0; b < blocks.length; b++) {
    var set = JSON.parse(blocks[b].textContent);
    (set.maps || []).forEach(function (m) {
      (m.heads || []).forEach(function (hd) {
        PARTS.forEach(function (k) { if (hd[k]) hd[k] = matrixOf(hd[k]); });
      });
    });
    sets.push(set);
  }
  var PAGE = (function () {
    var b = document.getElementById('attnviz-page');
    return b ? JSON.parse(b.textContent) : { colormaps: {} };
  })();
  /* The colour maps exactly as the PNGs draw them (render_cmap_rgb, written
     into the page by the C side): n colours at evenly spaced positions 0 … 1. */
  var CMAPS = {};
  Object.keys(PAGE.colormaps || {}).forEach(function (name) {
    var hex = PAGE.colormaps[name], t = [];
    for (var i = 0; i + 6 <= hex.length; i += 6)
      t.push([parseInt(hex.substr(i, 2), 16), parseInt(hex.substr(i + 2, 2), 16), parseInt(hex.substr(i + 4, 2), 16)]);
    CMAPS[name] = t;
  });
  /* Okabe & Ito's colour-blind-safe palette (yellow left out: too pale on white),
     then five more of Paul Tol's; more heads than that get evenly spaced hues. */
  var PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000',
                 '#882255', '#44AA99', '#999933', '#332288', '#AA4499'];
  var S = { set: 0, map: 0, heads: [0], pinned: [], hover: null, query: 0, stage: 0, tab: 'head', genStep: 0 };

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  /* Head h of a map with n heads: a colour no other head of it has. */
  function headColour(h, n) {
    if (n <= PALETTE.length) return PALETTE[h];
    var hue = 360 * h / n, light = h % 2 ? 62 : 38;   /* neighbours differ in lightness too */
    return 'hsl(' + hue.toFixed(1) + ',80%,' + light + '%)';
  }
  function data() { return sets[S.set]; }
  function map() { return data().maps[S.map]; }
  function headOf(m, h) { return m.heads[h]; }
  function fmt(x) {
    if (x === null) return '−∞';
    if (x === undefined) return '';
    if (Math.abs(x) >= 1e5) return x.toExponential(3).replace(/-/g, '−');
    var t = x.toFixed(4);
    return (t === '-0.0000' ? '0.0000' : t).replace('-', '−');
  }
  /* Where value v sits on the scale [vmin, vmax] of a map, as render_cmap_position
     does: the diverging map keeps 0 at its white centre. */
  function position(cmap, v, vmin, vmax) {
    if (v !== v) return 0.5;
    var t;
    if (cmap === 'diverging' && vmin < 0 && vmax > 0) t = v < 0 ? 0.5 - 0.5 * (v / vmin) : 0.5 + 0.5 * (v / vmax);
    else if (!(vmax > vmin)) return cmap === 'diverging' ? 0.5 : 0;
    else t = (v - vmin) / (vmax - vmin);
    return t < 0 ? 0 : t > 1 ? 1 : t;
  }
  function cmapAt(cmap, t) {
    var tab = CMAPS[cmap];
    if (!tab || !tab.length) { var g = Math.round(255 * (1 - t)); return [g, g, g]; }
    return tab[Math.round((t > 1 ? 1 : t < 0 || t !== t ? 0 : t) * (tab.length - 1))];
  }
  /* A weight's colour: viridis on 0 … 1, as every heatmap PNG. */
  function colour(v) { return cmapAt('viridis', position('viridis', v, 0, 1)); }
  /* Black or white on a cell, whichever contrasts more (WCAG; render's cmap_text_on). */
  function textOn(c) {
    function lin(x) { x /= 255; return x <= 0.04045 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); }
    return 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]) > 0.179 ? '#000' : '#fff';
  }
  /* Tick values of a colour bar h px tall (render/colorbar.c's rule): 0, 0.25 … 1
     (0.5 steps below 120 px) on the weight scale, else a round step, about one per 36 px. */
  function niceStep(range, target) {
    var raw = range / target, p = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * p;
  }
  function barTicks(vmin, vmax, h) {
    var target = Math.max(2, Math.min(6, Math.floor(h / 36))), ticks, step;
    for (;; target++) {
      step = vmin === 0 && vmax === 1 ? (h >= 120 ? 0.25 : 0.5) : niceStep(vmax - vmin, target);
      ticks = [];
      for (var k = Math.ceil(vmin / step - 1e-9); k * step <= vmax + step * 1e-9; k++) ticks.push(k * step);
      if (ticks.length >= 3 || target >= 12) break;
    }
    var dec = 0;
    while (dec < 6 && Math.abs(step * Math.pow(10, dec) - Math.round(step * Math.pow(10, dec))) > 1e-6 * Math.pow(10, dec)) dec++;
    return ticks.map(function (v) {
      var t = (Math.abs(v) < step * 1e-6 ? 0 : v).toFixed(dec);
      if (t.indexOf('.') >= 0) t = t.replace(/0+$/, '').replace(/\.$/, '');
      return { v: v, text: (t === '-0' ? '0' : t).replace('-', '−') };
    });
  }
  /* The colour bar of the PNGs: vmax at the top, a grey frame, ticks and labels
     to the right.  Returns the width it took. */
  function drawColourBar(g, x, y, w, h, cmap, vmin, vmax, font) {
    for (var j = 0; j < h; j++) {
      var c = cmapAt(cmap, position(cmap, vmax - (vmax - vmin) * j / (h - 1), vmin, vmax));
      g.fillStyle = 'rgb(' + c.join(',') + ')';
      g.fillRect(x, y + j, w, 1);
    }
    g.strokeStyle = '#8A8A8A'; g.lineWidth = 1;
    g.strokeRect(x - 0.5, y - 0.5, w + 1, h + 1);
    g.font = font + 'px "DejaVu Sans", Verdana, sans-serif';
    g.textAlign = 'left'; g.textBaseline = 'middle';
    var wide = 0;
    barTicks(vmin, vmax, h).forEach(function (t) {
      var ty = y + Math.round((vmax - t.v) / (vmax - vmin) * (h - 1));
      g.fillStyle = '#444'; g.fillRect(x + w, ty, 5, 1);
      g.fillStyle = '#000'; g.fillText(t.text, x + w + 9, ty + 0.5);
      wide = Math.max(wide, g.measureText(t.text).width);
    });
    return w + 9 + wide;
  }
  /* A small horizontal legend of a colour map for a line of text. */
  function legend(cmap, lo, hi, what) {
    var wrap = el('span', { 'class': 'av-legend-wrap' });
    wrap.appendChild(document.createTextNode(lo + ' '));
    var cv = el('canvas', { 'class': 'av-legend', width: 160, height: 16, 'data-cmap': cmap, 'aria-label': what });
    var g = cv.getContext('2d');
    for (var i = 0; i < 160; i++) {
      var c = cmapAt(cmap, i / 159);
      g.fillStyle = 'rgb(' + c.join(',') + ')';
      g.fillRect(i, 0, 1, 16);
    }
    wrap.appendChild(cv);
    wrap.appendChild(document.createTextNode(' ' + hi));
    return wrap;
  }
  function visible(m, q, k) { return !m.mask || m.mask[q].charAt(k) === '1'; }
  function mapTitle(m) {
    var kinds = { self: 'self-attention', masked_self: 'masked self-attention', cross: 'cross-attention' };
    if (m.stack === 'custom') return m.id;
    return m.stack + ' layer ' + m.layer + ' · ' + (kinds[m.kind] || m.kind);
  }
  function setupCanvas(cv, w, h) {
    var r = window.devicePixelRatio || 1;
    cv.width = Math.round(w * r); cv.height = Math.round(h * r);
    cv.style.width = w + 'px'; cv.style.height = h + 'px';
    var g = cv.getContext('2d');
    g.setTransform(r, 0, 0, r, 0, 0);
    return g;
  }

  /* ---- the frame: choosers, head buttons, tabs ---- */
  var ui = {};
  function buildFrame() {
    app.appendChild(el('h2', { id: 'views' }, 'Interactive views'));
    var bar = el('div', { 'class': 'av-bar' });
    if (sets.length > 1) {
      ui.set = el('select', { id: 'av-set', 'aria-label': 'trace' });
      sets.forEach(function (d, i) { ui.set.appendChild(el('option', { value: i }, d.name)); });
      var l0 = el('label', {}, 'Trace '); l0.appendChild(ui.set); bar.appendChild(l0);
      ui.set.addEventListener('change', function () { chooseSet(+ui.set.value); });
    }
    ui.map = el('select', { id: 'av-map', 'aria-label': 'layer' });
    var l1 = el('label', {}, 'Layer '); l1.appendChild(ui.map); bar.appendChild(l1);
    ui.map.addEventListener('change', function () { chooseMap(+ui.map.value, null); });
    app.appendChild(bar);
    var hb = el('div', { 'class': 'av-bar' });
    hb.appendChild(el('span', { 'class': 'av-label' }, 'Heads (click to show or hide):'));
    ui.heads = el('div', { 'class': 'av-heads', id: 'av-heads' });
    hb.appendChild(ui.heads);
    var all = el('button', { type: 'button', id: 'av-all' }, 'All');
    all.addEventListener('click', function () { S.heads = map().heads.map(function (_, i) { return i; }); refresh(); });
    hb.appendChild(all);
    app.appendChild(hb);
    ui.notes = el('div', { id: 'av-notes' });
    app.appendChild(ui.notes);
    ui.tabs = el('div', { 'class': 'av-tabs', role: 'tablist' });
    app.appendChild(ui.tabs);
    ui.panels = {};
    [['head', 'Head view'], ['model', 'Model view'], ['heatmap', 'Heatmap'], ['diff', 'Difference B − A'], ['steps', 'Step-through'],
     ['generation', 'Generation'], ['passage', 'Passage'], ['downloads', 'Downloads']].forEach(function (t) {
      var btn = el('button', { type: 'button', role: 'tab', id: 'av-tab-' + t[0], 'aria-selected': 'false' }, t[1]);
      btn.addEventListener('click', function () { chooseTab(t[0]); });
      ui.tabs.appendChild(btn);
      var p = el('div', { 'class': 'av-panel', role: 'tabpanel', id: 'av-' + t[0], hidden: '' });
      app.appendChild(p);
      ui.panels[t[0]] = p;
    });
  }

  function fillMaps() {
    ui.map.textContent = '';
    data().maps.forEach(function (m, i) { ui.map.appendChild(el('option', { value: i }, mapTitle(m) + '  (' + m.id + ')')); });
    ui.map.value = S.map;
  }
  function fillHeads() {
    var m = map();
    ui.heads.textContent = '';
    m.heads.forEach(function (hd, i) {
      var on = S.heads.indexOf(i) >= 0;
      var btn = el('button', { type: 'button', 'class': 'av-head', 'data-head': i, 'aria-pressed': on ? 'true' : 'false' },
                   'h' + hd.head);
      btn.style.borderColor = headColour(i, m.heads.length);
      if (on) btn.style.background = headColour(i, m.heads.length);
      btn.addEventListener('click', function () {
        var at = S.heads.indexOf(i);
        if (at >= 0) S.heads.splice(at, 1); else S.heads.push(i);
        S.heads.sort(function (a, c) { return a - c; });
        refresh();
      });
      ui.heads.appendChild(btn);
    });
  }
  function fillNotes() {
    var d = data(), n = [];
    ui.notes.textContent = '';
    if (d.maps_left_out > 0)
      n.push(d.maps_left_out + ' map(s) of this trace are left out of the page to keep it small; ' +
             (d.trace_file ? d.trace_file + ' has them.' : 'the pictures show them.'));
    if (d.steps_left_out && d.maps.some(function (m) { return m.heads.length; }))
      n.push('The step matrices (Q·Kᵀ, ÷√d_k, +mask, ·V) are left out of the page to keep it small.');
    n.forEach(function (t) { ui.notes.appendChild(el('p', { 'class': 'av-note' }, t)); });
  }

  /* Opens trace i where its focus says: the head the pictures' step strip shows,
     the query token they are about (pinned). */
  function chooseSet(i) {
    var f = sets[i].focus || { map: 0, head: 0, query: -1 };
    S.set = i; S.pinned = []; S.hover = null; S.stage = 0; S.genStep = 0;
    S.map = f.map < sets[i].maps.length ? f.map : 0;
    S.heads = map().heads.length ? [f.head < map().heads.length ? f.head : 0] : [];
    var q = f.query >= 0 && f.query < map().queries.length ? f.query : -1;
    S.query = q >= 0 ? q : 0;
    if (q >= 0) S.pinned = [{ side: 'q', i: q }];   /* the focus token's links, from the start */
    if (ui.set) ui.set.value = i;
    fillMaps(); fillNotes(); refresh();
  }
  function chooseMap(i, head) {
    var old = map();
    S.map = i;
    var m = map();
    if (head !== null) S.heads = [head];
    S.heads = S.heads.filter(function (h) { return h < m.heads.length; });
    if (!S.heads.length && m.heads.length) S.heads = [0];
    if (old.queries.length !== m.queries.length || old.keys.length !== m.keys.length) { S.pinned = []; S.hover = null; }
    if (S.query >= m.queries.length) S.query = 0;
    ui.map.value = i;
    refresh();
  }
  function chooseTab(t) {
    S.tab = t;
    for (var k in ui.panels) {
      var on = k === t;
      ui.panels[k].hidden = !on;
      document.getElementById('av-tab-' + k).setAttribute('aria-selected', on ? 'true' : 'false');
    }
    drawTab();
  }
  function refresh() { fillHeads(); drawTab(); }
  function drawTab() {
    ({ head: drawHeadView, model: drawModelView, heatmap: drawHeatmap, diff: drawDiff, steps: drawSteps,
       generation: drawGeneration, passage: drawPassage, downloads: drawDownloads })[S.tab]();
  }

  /* ---- head view: queries left, keys right, links in head colours ---- */
  var hv = {};
  function headGeometry(m) {
    var n = Math.max(m.queries.length, m.keys.length);
    var rh = n > 200 ? 14 : n > 60 ? 20 : 34;
    var w = Math.max(300, Math.min(1000, (ui.panels.head.clientWidth || 800) - 8));
    var narrow = w < 600;   /* a phone: room for the weights beside the keys */
    return { rh: rh, font: Math.round(rh * 0.68), w: w, h: n * rh + 16, top: 8,
             xl: w * (narrow ? 0.34 : 0.36), xr: w * (narrow ? 0.5 : 0.64) };
  }
  function activeTokens() {
    var a = S.pinned.slice();
    if (S.hover && !a.some(function (p) { return p.side === S.hover.side && p.i === S.hover.i; })) a.push(S.hover);
    return a;
  }
  /* Weights of the links of token t in head h: a query's row, or a key's column. */
  function linkWeights(m, h, t) {
    var W = m.heads[h].weights;
    if (t.side === 'q') return W[t.i].slice();
    return W.map(function (row) { return row[t.i]; });
  }
  function drawHeadView() {
    var p = ui.panels.head, m = map();
    if (!hv.canvas) {
      p.appendChild(el('p', { 'class': 'av-hint' },
        'Left: the tokens that ask (queries). Right: the tokens they look at (keys). Point at or tap a token ' +
        'to see its links; click it to pin it (several at once); click again to unpin. Keys: ↑ ↓ and Enter.'));
      hv.status = el('p', { 'class': 'av-readout', id: 'av-head-status' });
      p.appendChild(hv.status);
      hv.scroll = el('div', { 'class': 'av-scroll' });
      hv.canvas = el('canvas', { id: 'av-head-canvas', tabindex: '0', 'aria-label': 'head view' });
      hv.scroll.appendChild(hv.canvas);
      p.appendChild(hv.scroll);
      hv.canvas.addEventListener('mousemove', function (e) { headPointer(e, false); });
      hv.canvas.addEventListener('mouseleave', function () { if (S.hover) { S.hover = null; drawHeadView(); } });
      hv.canvas.addEventListener('click', function (e) { headPointer(e, true); });
      hv.canvas.addEventListener('keydown', headKey);
    }
    var G = headGeometry(m);
    hv.G = G;
    var g = setupCanvas(hv.canvas, G.w, G.h);
    g.fillStyle = '#fff'; g.fillRect(0, 0, G.w, G.h);
    var act = activeTokens(), links = [], drawn = 0;
    var n = Math.max(m.queries.length, m.keys.length);
    var showAll = !act.length && n <= 64;
    g.lineCap = 'round';
    S.heads.forEach(function (h, hi) {
      var off = (hi - (S.heads.length - 1) / 2) * Math.min(3, G.rh / 8);
      g.strokeStyle = headColour(h, m.heads.length);
      var draws = act.length ? act : showAll ? m.queries.map(function (_, i) { return { side: 'q', i: i }; }) : [];
      draws.forEach(function (t) {
        var ws = linkWeights(m, h, t);
        if (act.length) links.push({ side: t.side, token: t.i, head: m.heads[h].head, index: h, weights: ws });
        ws.forEach(function (w, j) {
          if (!(w > 0.005)) return;
          var qi = t.side === 'q' ? t.i : j, kj = t.side === 'q' ? j : t.i;
          g.globalAlpha = showAll ? Math.min(0.6, w * 0.6) : Math.min(1, 0.15 + w);
          g.lineWidth = showAll ? 1 + 2 * w : 1.5 + 6 * w;
          g.beginPath();
          g.moveTo(G.xl + 8, G.top + (qi + 0.5) * G.rh + off);
          g.lineTo(G.xr - 8, G.top + (kj + 0.5) * G.rh + off);
          g.stroke();
          drawn++;
        });
      });
    });
    g.globalAlpha = 1;
    drawTokens(g, m, G, act);
    hv.canvas.setAttribute('data-links', JSON.stringify(links));
    hv.canvas.setAttribute('data-drawn', drawn);
    hv.canvas.setAttribute('data-pinned', JSON.stringify(S.pinned));
    hv.canvas.setAttribute('data-map', m.id);
    hv.canvas.setAttribute('data-heads', JSON.stringify(S.heads.map(function (h) { return m.heads[h].head; })));
    headStatus(m, act);
  }
  function drawTokens(g, m, G, act) {
    g.font = 'bold ' + G.font + 'px "DejaVu Sans", Verdana, sans-serif';
    g.textBaseline = 'middle';
    var one = act.length === 1 && S.heads.length === 1 ? act[0] : null;
    var ws = one ? linkWeights(m, S.heads[0], one) : null;
    g.save();
    g.font = Math.round(G.font * 0.8) + 'px "DejaVu Sans Mono", monospace';
    var wroom = G.rh >= 20 ? g.measureText('0.00').width + 14 : 4;   /* the weights beside the tokens */
    g.restore();
    [['q', m.queries, G.xl, 'right'], ['k', m.keys, G.xr, 'left']].forEach(function (c) {
      g.textAlign = c[3];
      var room = (c[0] === 'q' ? G.xl : G.w - G.xr) - wroom - 10;   /* a longer token ends in "…" */
      c[1].forEach(function (whole, i) {
        var y = G.top + (i + 0.5) * G.rh, tok = fitText(g, whole, room);
        var pinned = S.pinned.some(function (p) { return p.side === c[0] && p.i === i; });
        var hov = S.hover && S.hover.side === c[0] && S.hover.i === i;
        var tw = g.measureText(tok).width + 10, x0 = c[3] === 'right' ? c[2] - tw : c[2];
        if (pinned || hov) {
          g.fillStyle = pinned ? '#000' : '#dde8f5';
          g.fillRect(x0, y - G.rh / 2 + 1, tw, G.rh - 2);
        }
        g.fillStyle = pinned ? '#fff' : '#000';
        g.fillText(tok, c[3] === 'right' ? c[2] - 5 : c[2] + 5, y);
        if (ws && c[0] !== one.side && G.rh >= 20) {   /* the weight beside each token it links to */
          g.save();
          g.fillStyle = '#000';
          g.font = Math.round(G.font * 0.8) + 'px "DejaVu Sans Mono", monospace';
          g.fillText(ws[i].toFixed(2), c[3] === 'right' ? x0 - 6 : x0 + tw + 6, y);
          g.restore();
        }
      });
    });
  }
  function headStatus(m, act) {
    if (!act.length) { hv.status.textContent = 'Point at a token.'; return; }
    var t = act[act.length - 1], toks = t.side === 'q' ? m.queries : m.keys;
    var others = t.side === 'q' ? m.keys : m.queries;
    var parts = S.heads.map(function (h) {
      var ws = linkWeights(m, h, t), best = 0;
      ws.forEach(function (w, j) { if (w > ws[best]) best = j; });
      return 'h' + m.heads[h].head + ' → “' + others[best] + '” ' + ws[best].toFixed(2);
    });
    hv.status.textContent = (t.side === 'q' ? '“' + toks[t.i] + '” looks at: ' : 'who looks at “' + toks[t.i] + '”: ') +
      parts.join(' · ');
  }
  function headPointer(e, click) {
    var G = hv.G, m = map(), r = hv.canvas.getBoundingClientRect();
    var x = e.clientX - r.left, y = e.clientY - r.top;
    var side = x < G.w / 2 ? 'q' : 'k', i = Math.floor((y - G.top) / G.rh);
    var n = side === 'q' ? m.queries.length : m.keys.length;
    var t = i >= 0 && i < n ? { side: side, i: i } : null;
    if (click) {
      if (!t) return;
      var at = -1;
      S.pinned.forEach(function (p, k) { if (p.side === t.side && p.i === t.i) at = k; });
      if (at >= 0) S.pinned.splice(at, 1); else S.pinned.push(t);
      if (t.side === 'q') S.query = t.i;
      drawHeadView();
      return;
    }
    if ((t && S.hover && t.side === S.hover.side && t.i === S.hover.i) || (!t && !S.hover)) return;
    S.hover = t;
    drawHeadView();
  }

  /* Keyboard (a presenter's remote): ↑/↓ move along the queries, Enter or Space pins. */
  function headKey(e) {
    var n = map().queries.length, t = S.hover && S.hover.side === 'q' ? S.hover.i : -1;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      S.hover = { side: 'q', i: Math.max(0, Math.min(n - 1, t + (e.key === 'ArrowDown' ? 1 : t < 0 ? n : -1))) };
    } else if ((e.key === 'Enter' || e.key === ' ') && t >= 0) {
      var at = -1;
      S.pinned.forEach(function (p, k) { if (p.side === 'q' && p.i === t) at = k; });
      if (at >= 0) S.pinned.splice(at, 1); else S.pinned.push({ side: 'q', i: t });
      S.query = t;
    } else return;
    e.preventDefault();
    drawHeadView();
  }

  /* ---- model view: every map × every head, thumbnails; click one to open it ---- */
  var mv = { job: 0 };
  function drawThumb(cv, m, h, size) {
    var g = cv.getContext('2d'), W = m.heads[h].weights, Tq = m.queries.length, Tk = m.keys.length;
    var img = g.createImageData(size, size);
    for (var py = 0; py < size; py++) {
      var q0 = Math.floor(py * Tq / size), q1 = Math.max(q0 + 1, Math.floor((py + 1) * Tq / size));
      for (var px = 0; px < size; px++) {
        var k0 = Math.floor(px * Tk / size), k1 = Math.max(k0 + 1, Math.floor((px + 1) * Tk / size)), v = 0, seen = 0;
        for (var q = q0; q < q1; q++) for (var k = k0; k < k1; k++) {
          if (!visible(m, q, k)) continue;
          seen = 1;
          if (W[q][k] > v) v = W[q][k];
        }
        var c = seen ? colour(v) : [190, 190, 190], o = 4 * (py * size + px);   /* grey: masked, as the PNGs */
        img.data[o] = c[0]; img.data[o + 1] = c[1]; img.data[o + 2] = c[2]; img.data[o + 3] = 255;
      }
    }
    g.putImageData(img, 0, 0);
  }
  function drawModelView() {
    var p = ui.panels.model, d = data();
    p.textContent = '';
    p.appendChild(el('p', { 'class': 'av-hint' },
      'Every layer (rows) and head (columns); bright yellow = strong weight, dark purple = none (each pixel ' +
      'the strongest cell it covers; grey, masked), the colours of the PNGs. Click a picture to open it in the heatmap. Weight: '));
    p.lastChild.appendChild(legend('viridis', '0', '1', 'weight 0 to 1, viridis'));
    var nh = 0;
    d.maps.forEach(function (m) { nh = Math.max(nh, m.heads.length); });
    var grid = el('div', { 'class': 'av-model', id: 'av-model-grid' });
    grid.style.gridTemplateColumns = 'minmax(5em, max-content) repeat(' + nh + ', minmax(36px, 110px))';
    grid.appendChild(el('span'));
    for (var h = 0; h < nh; h++) grid.appendChild(el('span', { 'class': 'av-collab' }, 'head ' + h));
    var todo = [];
    d.maps.forEach(function (m, mi) {
      grid.appendChild(el('span', { 'class': 'av-rowlab' }, m.id));
      for (var hh = 0; hh < nh; hh++) {
        if (hh >= m.heads.length) { grid.appendChild(el('span')); continue; }
        var T = Math.max(m.queries.length, m.keys.length), size = Math.max(16, Math.min(96, T * 4));
        var cv = el('canvas', { width: size, height: size, 'data-map': mi, 'data-head': hh,
                                title: m.id + ' head ' + m.heads[hh].head, 'aria-label': m.id + ' head ' + m.heads[hh].head });
        if (mi === S.map && S.heads.indexOf(hh) >= 0) cv.className = 'av-current';
        cv.addEventListener('click', function (e) {
          var t = e.currentTarget;
          chooseMap(+t.getAttribute('data-map'), +t.getAttribute('data-head'));
          chooseTab('heatmap');
        });
        grid.appendChild(cv);
        todo.push([cv, m, hh, size]);
      }
    });
    p.appendChild(grid);
    var job = ++mv.job, i = 0;
    (function chunk() {   /* a few thumbnails per frame: the page stays responsive */
      if (job !== mv.job) return;
      var t0 = performance.now();
      while (i < todo.length && performance.now() - t0 < 12) { drawThumb.apply(null, todo[i]); i++; }
      grid.setAttribute('data-drawn', i);
      if (i < todo.length) requestAnimationFrame(chunk);
    })();
  }

  /* ---- matrices: one head's weights (Heatmap) or B − A (Difference) ---- */
  /* The frame of a matrix view in panel p: hint (a text and a legend), title,
     read-out line, a scrolling canvas. */
  function matrixView(p, id, hint, leg) {
    var v = {};
    p.appendChild(el('p', { 'class': 'av-hint' }, hint));
    p.lastChild.appendChild(leg);
    v.title = el('p', { 'class': 'av-stage' });
    p.appendChild(v.title);
    v.note = el('p', { 'class': 'av-note', hidden: '' });
    p.appendChild(v.note);
    v.readout = el('p', { 'class': 'av-readout', id: 'av-' + id + '-readout' }, 'Point at a cell.');
    p.appendChild(v.readout);
    v.scroll = el('div', { 'class': 'av-scroll' });
    v.canvas = el('canvas', { id: 'av-' + id + '-canvas', 'aria-label': id });
    v.scroll.appendChild(v.canvas);
    p.appendChild(v.scroll);
    return v;
  }
  /* A label that fits w px at the context's font: whole, or cut with "…" (never
     silently); the read-out line always names the whole token. */
  function fitText(g, t, w) {
    if (g.measureText(t).width <= w) return t;
    var a = Array.from(t);
    while (a.length > 1 && g.measureText(a.join('') + '…').width > w) a.pop();
    return a.join('') + '…';
  }
  /* Paints spec = { rows, cols: labels, value(q, k), shown(q, k), cmap, vmin, vmax,
     text(v): a cell's number } into view v, with the PNGs' colours and colour bar. */
  function paintMatrix(v, spec, width) {
    var Tq = spec.rows.length, Tk = spec.cols.length, font = '"DejaVu Sans", Verdana, sans-serif';
    if (!Tq || !Tk) { setupCanvas(v.canvas, 1, 1); v.G = { cell: 1, lab: 0, top: 0, Tq: 0, Tk: 0 }; return v.G; }
    var g = v.canvas.getContext('2d');
    g.font = '16px ' + font;
    function widest(ls) { var w = 0; ls.forEach(function (t) { w = Math.max(w, g.measureText(t).width); }); return w; }
    var bar = 100, rowW = Tq <= 80 ? widest(spec.rows) : 0, colW = Tk <= 80 ? widest(spec.cols) : 0;
    var lab = rowW ? Math.min(Math.ceil(rowW) + 14, Math.round(width * 0.4)) : 0;
    var cell = Math.max(Tk > 1000 ? 1 : 2, Math.min(44, Math.floor((width - lab - bar) / Tk)));
    if (cell < 10) { lab = 0; colW = 0; }
    var top = colW ? Math.min(Math.ceil(colW * 0.87) + 14, 260) : 0;
    var right = Math.max(bar, colW ? Math.min(colW, 260 / 0.87) * 0.5 + 10 : 0);
    var bh = Math.max(120, Math.min(cell * Tq, 500));
    var W = lab + cell * Tk + right + 4, H = top + Math.max(cell * Tq, bh) + 4;
    var G = { cell: cell, lab: lab, top: top, Tq: Tq, Tk: Tk };
    g = setupCanvas(v.canvas, W, H);
    g.fillStyle = '#fff'; g.fillRect(0, 0, W, H);
    var img = g.createImageData(Tk, Tq);
    for (var q = 0; q < Tq; q++) for (var k = 0; k < Tk; k++) {
      var c = spec.shown(q, k) ? cmapAt(spec.cmap, position(spec.cmap, spec.value(q, k), spec.vmin, spec.vmax))
                               : [190, 190, 190], o = 4 * (q * Tk + k);
      img.data[o] = c[0]; img.data[o + 1] = c[1]; img.data[o + 2] = c[2]; img.data[o + 3] = 255;
    }
    var off = document.createElement('canvas');
    off.width = Tk; off.height = Tq;
    off.getContext('2d').putImageData(img, 0, 0);
    g.imageSmoothingEnabled = false;
    g.drawImage(off, lab, top, cell * Tk, cell * Tq);
    var fs = Math.max(11, Math.min(16, Math.round(cell * 0.6)));
    g.font = fs + 'px ' + font;
    g.fillStyle = '#000'; g.textBaseline = 'middle';
    if (lab) { g.textAlign = 'right';
      spec.rows.forEach(function (t, i) { g.fillText(fitText(g, t, lab - 10), lab - 6, top + (i + 0.5) * cell); }); }
    if (top) { g.textAlign = 'left';
      spec.cols.forEach(function (t, i) {
        g.save(); g.translate(lab + (i + 0.5) * cell, top - 6); g.rotate(-Math.PI / 3);
        g.fillText(fitText(g, t, (top - 12) / 0.87), 0, 0); g.restore();
      }); }
    if (cell >= 34 && Tq * Tk <= 400) {   /* the numbers themselves, when they fit */
      g.textAlign = 'center'; g.font = Math.round(cell * 0.3) + 'px "DejaVu Sans Mono", monospace';
      for (q = 0; q < Tq; q++) for (k = 0; k < Tk; k++) {
        var x = spec.value(q, k), t = spec.shown(q, k) ? spec.text(x) : '';
        if (!t) continue;
        g.fillStyle = textOn(cmapAt(spec.cmap, position(spec.cmap, x, spec.vmin, spec.vmax)));
        g.fillText(t, lab + (k + 0.5) * cell, top + (q + 0.5) * cell);
      }
    }
    var bx = lab + cell * Tk + 14;
    drawColourBar(g, bx, top, 16, bh, spec.cmap, spec.vmin, spec.vmax, 13);
    v.G = G;
    v.canvas.setAttribute('data-cmap', spec.cmap);
    v.canvas.setAttribute('data-scale', spec.vmin + ' ' + spec.vmax);
    v.canvas.setAttribute('data-bar', JSON.stringify({ x: bx, y: top, w: 16, h: bh }));
    return G;
  }
  function matrixCell(v, e) {
    var G = v.G, r = v.canvas.getBoundingClientRect();
    var k = Math.floor((e.clientX - r.left - G.lab) / G.cell), q = Math.floor((e.clientY - r.top - G.top) / G.cell);
    return q >= 0 && q < G.Tq && k >= 0 && k < G.Tk ? { q: q, k: k } : null;
  }
  function panelWidth(p) { return Math.max(280, Math.min(1100, (p.clientWidth || 900) - 10)); }

  var hm = null;
  function drawHeatmap() {
    var p = ui.panels.heatmap, m = map(), h = S.heads.length ? S.heads[0] : 0;
    if (!hm) {
      hm = matrixView(p, 'heat', 'Rows: queries; columns: keys. Point at a cell for its weight; click a row to step ' +
        'through it. Grey: masked (may not be seen). The colours of the PNGs: ', legend('viridis', '0', '1', 'weight 0 to 1, viridis'));
      hm.canvas.addEventListener('mousemove', heatPointer);
      hm.canvas.addEventListener('click', function (e) {
        var c = matrixCell(hm, e);
        if (c) { S.query = c.q; S.stage = 0; chooseTab('steps'); }
      });
    }
    hm.title.textContent = mapTitle(m) + ' — head ' + (m.heads[h] ? m.heads[h].head : '?') +
      (S.heads.length > 1 ? ' (the first head chosen)' : '');
    if (!m.heads[h]) return;
    var W = m.heads[h].weights;
    paintMatrix(hm, { rows: m.queries, cols: m.keys, cmap: 'viridis', vmin: 0, vmax: 1,
                      value: function (q, k) { return W[q][k]; }, shown: function (q, k) { return visible(m, q, k); },
                      text: function (x) { return x < 0.005 ? '' : x.toFixed(2).replace(/^0/, ''); } }, panelWidth(p));
    hm.canvas.setAttribute('data-map', m.id);
    hm.canvas.setAttribute('data-head', m.heads[h].head);
  }
  function heatPointer(e) {
    var c = matrixCell(hm, e), m = map(), h = S.heads.length ? S.heads[0] : 0;
    if (!c || !m.heads[h]) return;
    var v = m.heads[h].weights[c.q][c.k];
    hm.readout.setAttribute('data-q', c.q); hm.readout.setAttribute('data-k', c.k); hm.readout.setAttribute('data-value', v);
    hm.readout.textContent = 'query “' + m.queries[c.q] + '” (' + c.q + ') → key “' + m.keys[c.k] + '” (' + c.k + '): ' +
      (visible(m, c.q, c.k) ? 'weight ' + fmt(v) : 'masked (weight 0)');
  }

  /* ---- difference (a comparison's page): B − A of the head shown ---- */
  var CMP = PAGE.compare && sets[PAGE.compare.a] && sets[PAGE.compare.b] ? PAGE.compare : null;
  var dv = null;
  /* The current map and head on both sides: { a, b, h, same }, or null. */
  function diffPair() {
    var id = map().id, h = S.heads.length ? S.heads[0] : 0;
    function find(i) { return (sets[i].maps || []).filter(function (x) { return x.id === id; })[0]; }
    var a = find(CMP.a), b = find(CMP.b);
    if (!a || !b || !a.heads[h] || !b.heads[h]) return null;
    return { a: a, b: b, h: h, same: a.queries.length === b.queries.length && a.keys.length === b.keys.length };
  }
  function pairLabels(x, y) { return x.map(function (t, i) { return t === y[i] ? t : t + '/' + y[i]; }); }
  function drawDiff() {
    var p = ui.panels.diff, S0 = CMP.scale;
    if (!dv) {
      dv = matrixView(p, 'diff', 'B − A, cell by cell at the same positions (a/b: the two sides’ words differ): ' +
        'red, B puts more weight; blue, A puts more; white, the same. One scale ±' + S0.toFixed(2) +
        ' for every head, as the .diff.png pictures: ', legend('diverging', '−' + S0.toFixed(2), '+' + S0.toFixed(2),
        'B − A, diverging'));
      dv.canvas.addEventListener('mousemove', diffPointer);
    }
    var P = diffPair(), m = map();
    dv.title.textContent = mapTitle(m) + ' — head ' + (P ? P.a.heads[P.h].head : '?') + ': B − A';
    dv.note.hidden = !!(P && P.same);
    dv.scroll.hidden = !(P && P.same);
    if (!P || !P.same) {
      dv.note.textContent = P ? 'No difference for ' + m.id + ': A is ' + P.a.queries.length + '×' + P.a.keys.length +
        ', B is ' + P.b.queries.length + '×' + P.b.keys.length + ', so a cell of one has no cell of the other.'
        : 'B has no ' + m.id + ' head ' + (S.heads[0] || 0) + ': no difference to draw.';
      setupCanvas(dv.canvas, 1, 1);
      dv.canvas.removeAttribute('data-map');
      return;
    }
    var A = P.a.heads[P.h].weights, B = P.b.heads[P.h].weights;
    paintMatrix(dv, { rows: pairLabels(P.a.queries, P.b.queries), cols: pairLabels(P.a.keys, P.b.keys),
                      cmap: 'diverging', vmin: -S0, vmax: S0,
                      value: function (q, k) { return B[q][k] - A[q][k]; },
                      shown: function (q, k) { return visible(P.a, q, k) || visible(P.b, q, k); },
                      text: function (x) { return Math.abs(x) < 0.005 ? '' : (x > 0 ? '+' : '−') + Math.abs(x).toFixed(2).replace(/^0/, ''); } },
               panelWidth(p));
    dv.canvas.setAttribute('data-map', m.id);
    dv.canvas.setAttribute('data-head', P.a.heads[P.h].head);
  }
  function diffPointer(e) {
    var P = diffPair(), c = P && P.same ? matrixCell(dv, e) : null;
    if (!c) return;
    var a = P.a.heads[P.h].weights[c.q][c.k], b = P.b.heads[P.h].weights[c.q][c.k];
    dv.readout.setAttribute('data-q', c.q); dv.readout.setAttribute('data-k', c.k);
    dv.readout.setAttribute('data-value', b - a);
    dv.readout.textContent = 'query “' + pairLabels(P.a.queries, P.b.queries)[c.q] + '” → key “' +
      pairLabels(P.a.keys, P.b.keys)[c.k] + '”: A ' + fmt(a) + ', B ' + fmt(b) + ', B − A ' + (b - a >= 0 ? '+' : '') + fmt(b - a);
  }

  /* ---- step-through: Q·Kᵀ → ÷√d_k → +mask → softmax → ·V ---- */
  function stagesOf(m, hd) {
    var q = S.query, st = [], dk = m.d_k, sc = m.score_scale > 0 ? m.score_scale : 1 / Math.sqrt(dk);
    if (hd.scores) st.push({ key: 'scores', name: 'Q·Kᵀ', row: hd.scores[q],
      text: 'score = q · k: the query vector of “' + m.queries[q] + '” times each key vector (d_k = ' + dk + ' numbers each).' });
    if (hd.scaled) st.push({ key: 'scaled', name: '÷ √d_k', row: hd.scaled[q], prev: hd.scores ? hd.scores[q] : null,
      text: m.scaled ? (m.score_scale > 0 ? 'each score × ' + fmt(sc) + ' (this model’s scale).'
                                          : 'each score ÷ √' + dk + ' = ÷ ' + fmt(Math.sqrt(dk)) + ', so the softmax does not saturate.')
                     : 'this model does not scale (scaled = false): the scores go on unchanged.' });
    if (hd.masked) st.push({ key: 'masked', name: '+ mask', row: hd.masked[q], prev: hd.scaled ? hd.scaled[q] : null,
      text: 'keys this query may not see get ' + (m.mask_fill === '-inf' ? '−∞' : fmt(m.mask_fill)) +
            (m.mask ? '' : ' (this attention has no mask: nothing changes)') + '.' });
    else if (m.mask) st.push({ key: 'mask', name: '+ mask', row: null,
      text: 'the mask: which keys this query may see (the trace has no masked scores for this head).' });
    st.push({ key: 'weights', name: 'softmax', row: hd.weights[q], prev: hd.masked ? hd.masked[q] : null,
      text: 'weight = e^x ÷ Σ e^x over the keys it may see: every weight ≥ 0, and they sum to 1.' });
    if (hd.output) st.push({ key: 'output', name: '· V', row: hd.output[q], vector: true,
      text: 'the output: Σ weight × value vector, ' + hd.output[q].length + ' numbers (this head’s share of the next layer).' });
    return st;
  }
  var sv = {};
  function drawSteps() {
    var p = ui.panels.steps, m = map(), h = S.heads.length ? S.heads[0] : 0, hd = m.heads[h];
    p.textContent = '';
    if (!hd) return;
    var bar = el('div', { 'class': 'av-bar' });
    var qs = el('select', { id: 'av-query', 'aria-label': 'query' });
    m.queries.forEach(function (t, i) { qs.appendChild(el('option', { value: i }, i + ': ' + t)); });
    qs.value = S.query;
    qs.addEventListener('change', function () { S.query = +qs.value; drawSteps(); });
    var lq = el('label', {}, 'Query '); lq.appendChild(qs); bar.appendChild(lq);
    var prev = el('button', { type: 'button', id: 'av-prev' }, '◀ Previous');
    var next = el('button', { type: 'button', id: 'av-next' }, 'Next ▶');
    prev.addEventListener('click', function () { stepBy(-1); });
    next.addEventListener('click', function () { stepBy(1); });
    bar.appendChild(prev); bar.appendChild(next);
    p.appendChild(bar);
    var st = stagesOf(m, hd);
    sv.n = st.length;
    if (S.stage >= st.length) S.stage = st.length - 1;
    var s = st[S.stage];
    st.forEach(function (x, i) { if (i) x.prevName = st[i - 1].name; });
    if (!hd.scores || !hd.scaled || !hd.masked || !hd.output)
      p.appendChild(el('p', { 'class': 'av-note', id: 'av-steps-missing' },
        'This trace holds ' + (hd.scores ? 'some of the steps' : 'only the attention weights') + ' of ' + m.id +
        ' head ' + hd.head + ' (a weights-only trace; `attnviz run --trace steps` records Q·Kᵀ, ÷√d_k, +mask and ·V ' +
        'for every head). Stepping through what it has: ' + st.map(function (x) { return x.name; }).join(' → ') + '.'));
    p.appendChild(el('p', { 'class': 'av-stage', id: 'av-stage' },
      'Step ' + (S.stage + 1) + ' of ' + st.length + ': ' + s.name + ' — ' + mapTitle(m) + ', head ' + hd.head +
      ', query “' + m.queries[S.query] + '”'));
    p.appendChild(el('p', { 'class': 'av-formula' }, st.map(function (x, i) {
      return i === S.stage ? '[' + x.name + ']' : x.name; }).join('  →  ')));
    p.appendChild(el('p', {}, s.text));
    p.appendChild(stepTable(m, hd, s));
    p.setAttribute('data-stage', s.key);
    p.setAttribute('data-query', S.query);
    p.setAttribute('data-head', hd.head);
    prev.disabled = S.stage === 0;
    next.disabled = S.stage === st.length - 1;
  }
  /* A stage's colours, as the step strip PNG (stepview.c) draws its panel: the
     weights on viridis 0 … 1; the others on the diverging map, ±max|finite value|
     over the whole matrix (masked cells left out of the masked scores). */
  function stageScale(m, hd, s) {
    if (s.key === 'weights') return { cmap: 'viridis', vmin: 0, vmax: 1 };
    var big = 0;
    (hd[s.key] || [s.row]).forEach(function (row, q) {
      row.forEach(function (v, k) {
        if (v === null || !isFinite(v) || (s.key === 'masked' && !visible(m, q, k))) return;
        big = Math.max(big, Math.abs(v));
      });
    });
    return { cmap: 'diverging', vmin: -(big || 1), vmax: big || 1 };
  }
  function stepTable(m, hd, s) {
    var t = el('table', { 'class': 'av-steps', id: 'av-step-table' }), q = S.query;
    var head = el('tr');
    [s.vector ? 'dimension' : 'key', s.prev ? 'before: ' + s.prevName : null, s.row ? s.name : 'may see', ''].forEach(function (c) {
      if (c !== null) head.appendChild(el('th', {}, c)); });
    t.appendChild(head);
    var n = s.vector ? s.row.length : m.keys.length, big = 0, sc = s.row ? stageScale(m, hd, s) : null;
    if (s.row) s.row.forEach(function (v) { if (v !== null && Math.abs(v) > big) big = Math.abs(v); });
    for (var j = 0; j < n; j++) {
      var tr = el('tr', { 'data-index': j });
      tr.appendChild(el('td', {}, s.vector ? String(j) : j + ': ' + m.keys[j]));
      if (s.prev) tr.appendChild(el('td', { 'class': 'av-before' }, fmt(s.prev[j])));
      if (s.row) {
        var v = s.row[j];
        var td = el('td', { 'class': 'av-value', 'data-value': v === null ? '-inf' : String(v) }, fmt(v));
        var c = v === null ? [190, 190, 190] : cmapAt(sc.cmap, position(sc.cmap, v, sc.vmin, sc.vmax));
        td.style.background = 'rgb(' + c.join(',') + ')';   /* the step strip's colour of the number */
        td.style.color = textOn(c);
        tr.appendChild(td);
        var bc = el('td', { 'class': 'av-barcell' });
        if (v !== null && big > 0) {
          var span = el('span', { 'class': v < 0 ? 'av-bar-neg' : 'av-bar-pos' });
          span.style.background = 'rgb(' + c.join(',') + ')';
          span.style.width = (100 * Math.abs(v) / big).toFixed(1) + '%';
          bc.appendChild(span);
        }
        tr.appendChild(bc);
      } else {
        tr.appendChild(el('td', { 'class': 'av-value', 'data-value': visible(m, q, j) ? '1' : '0' },
                          visible(m, q, j) ? 'yes' : 'no: −∞'));
        tr.appendChild(el('td'));
      }
      t.appendChild(tr);
    }
    if (s.key === 'weights') {
      var sum = 0;
      s.row.forEach(function (v) { sum += v; });
      var tf = el('tr');
      tf.appendChild(el('td', {}, 'sum'));
      if (s.prev) tf.appendChild(el('td'));
      tf.appendChild(el('td', { id: 'av-sum' }, fmt(sum)));
      t.appendChild(tf);
    }
    return t;
  }
  function stepBy(d) {
    var n = sv.n || 1, to = Math.max(0, Math.min(n - 1, S.stage + d));
    if (to === S.stage) return;
    S.stage = to;
    drawSteps();
  }
  /* ← → step the step-through, and the generation (↑ ↓ too: its rows) */
  document.addEventListener('keydown', function (e) {
    if ((S.tab !== 'steps' && S.tab !== 'generation') || e.altKey || e.ctrlKey || e.metaKey) return;
    var tag = (e.target && e.target.tagName) || '';
    if (tag === 'SELECT' || tag === 'INPUT' || tag === 'TEXTAREA') return;
    var by = S.tab === 'steps' ? stepBy : genBy;
    var d = { ArrowRight: 1, ArrowLeft: -1 }[e.key] || (S.tab === 'generation' ? { ArrowDown: 1, ArrowUp: -1 }[e.key] : 0);
    if (d) { by(d); e.preventDefault(); }
  });

  /* ---- generation timeline (a trace's "generation" section, when present) ---- */
  /* Reads what it can of steps[] = {token, rows or maps or attention: {map id: row | rows per head}};
     returns null when the section has no steps it understands. */
  function genSteps(gen) {
    var steps = gen && (Array.isArray(gen.steps) ? gen.steps : Array.isArray(gen) ? gen : null);
    if (!steps || !steps.length) return null;
    return steps.map(function (s, i) {
      var rows = s.rows || s.maps || s.attention || {};
      var tok = s.token !== undefined ? s.token : s.text !== undefined ? s.text : s.piece !== undefined ? s.piece : '#' + i;
      return { token: typeof tok === 'string' ? tok : JSON.stringify(tok), rows: rows, keys: s.keys || null,
               query: typeof s.query === 'string' ? s.query : undefined };
    });
  }
  function genRow(rows, id, head) {
    var r = Array.isArray(rows) ? null : rows[id];
    if (Array.isArray(rows)) rows.forEach(function (x) { if (x && x.map === id) r = x; });
    if (r && !Array.isArray(r)) r = r.heads || r.weights || r.rows || null;
    if (!Array.isArray(r) || !r.length) return null;
    if (Array.isArray(r[0])) r = r[Math.min(head, r.length - 1)];
    if (r && !Array.isArray(r) && (r.weights || r.row)) r = r.weights || r.row;
    return Array.isArray(r) && typeof r[0] === 'number' ? r : null;
  }
  var gv = null;
  function drawGeneration() {
    var p = ui.panels.generation, gs = genSteps(data().generation);
    if (!gs) { p.textContent = ''; gv = null; return; }
    var ids = {};
    gs.forEach(function (s) {
      if (Array.isArray(s.rows)) s.rows.forEach(function (x) { if (x && x.map) ids[x.map] = 1; });
      else for (var k in s.rows) ids[k] = 1;
    });
    var idl = Object.keys(ids), cur = idl.indexOf(map().id) >= 0 ? map().id : idl[0];
    var m = data().maps.filter(function (x) { return x.id === cur; })[0] || map();
    var hi = S.heads.length ? S.heads[0] : 0, head = m.heads[hi] ? m.heads[hi].head : hi;
    if (!gv) {
      p.textContent = '';
      gv = matrixView(p, 'gen', 'Each written token (rows: the token read → the token written) and the tokens it ' +
        'could see (columns): only the new row is computed each step; the keys before it come from the KV cache. ' +
        'Click a token below, or step with ← → (↑ ↓). The colours of the PNGs: ', legend('viridis', '0', '1', 'weight 0 to 1, viridis'));
      gv.steps = el('div', { 'class': 'av-timeline', id: 'av-gen-steps' });
      p.insertBefore(gv.steps, gv.title);
      gv.canvas.addEventListener('click', function (e) {
        var c = matrixCell(gv, e);
        if (c) { S.genStep = c.q; drawGeneration(); }
      });
    }
    gv.steps.textContent = '';
    gs.forEach(function (s, i) {
      var b = el('button', { type: 'button', 'aria-pressed': i === S.genStep ? 'true' : 'false' }, s.token);
      b.addEventListener('click', function () { S.genStep = i; drawGeneration(); });
      gv.steps.appendChild(b);
    });
    var rows = gs.map(function (s) { return cur ? genRow(s.rows, cur, head) : null; });
    var Tk = 0;
    rows.forEach(function (r) { if (r && r.length > Tk) Tk = r.length; });
    gv.title.textContent = (cur ? mapTitle(m) + ' — head ' + head : '') + ' · the generation, step by step';
    gv.note.hidden = !!Tk;
    gv.note.textContent = 'The generation section holds no rows this page can read.';
    if (!Tk) { setupCanvas(gv.canvas, 1, 1); gv.readout.textContent = ''; return; }
    /* the tokens of the keys: the map's keys (prompt, then what was written) */
    var keys = [];
    for (var j = 0; j < Tk; j++) keys.push(gs[0].keys && gs[0].keys[j] !== undefined ? gs[0].keys[j] :
                                           m.keys[j] !== undefined ? m.keys[j] : String(j));
    var labels = gs.map(function (s) { return (s.query !== undefined ? s.query + ' → ' : '') + s.token; });
    var G = paintMatrix(gv, { rows: labels, cols: keys, cmap: 'viridis', vmin: 0, vmax: 1,
      value: function (q, k) { return rows[q] ? rows[q][k] : 0; },
      shown: function (q, k) { return !!rows[q] && k < rows[q].length; },
      text: function (x) { return x < 0.005 ? '' : x.toFixed(2).replace(/^0/, ''); } }, panelWidth(p));
    var g = gv.canvas.getContext('2d');
    g.strokeStyle = '#D55E00'; g.lineWidth = 3;
    g.strokeRect(G.lab, G.top + S.genStep * G.cell, G.cell * Tk, G.cell);
    gv.canvas.setAttribute('data-step', S.genStep);
    gv.canvas.setAttribute('data-map', cur);
    gv.canvas.setAttribute('data-head', head);
    gv.canvas.setAttribute('data-rows', JSON.stringify(labels));
    gv.canvas.setAttribute('data-cols', JSON.stringify(keys));
    var r = rows[S.genStep], s = gs[S.genStep];
    if (!r) { gv.readout.textContent = 'no row for this step'; return; }
    var order = r.map(function (_, k) { return k; }).sort(function (x, y) { return r[y] - r[x]; }).slice(0, 3);
    gv.readout.setAttribute('data-strongest', order[0]);
    gv.readout.textContent = 'step ' + S.genStep + ': ' + (s.query !== undefined ? 'reading “' + s.query + '”, ' : '') +
      'it wrote “' + s.token + '”, looking most at ' + order.map(function (k) {
        return '“' + keys[k] + '” ' + r[k].toFixed(2); }).join(', ');
  }
  function genBy(d) {
    var gs = genSteps(data().generation);
    if (!gs) return;
    var to = Math.max(0, Math.min(gs.length - 1, S.genStep + d));
    if (to === S.genStep) return;
    S.genStep = to;
    drawGeneration();
  }

  /* ---- passage: a long text's whole text (page_passage.js) ---- */
  var drawPassage = window.attnvizPassage ? window.attnvizPassage({
    el: el, colour: colour, textOn: textOn, legend: legend, state: S,
    data: data, panel: function () { return ui.panels.passage; } }) : function () {};

  function drawDownloads() {
    var p = ui.panels.downloads, d = data();
    p.textContent = '';
    var ul = el('ul', { 'class': 'av-downloads' });
    if (d.trace_file) {
      var li = el('li'); li.appendChild(el('a', { href: d.trace_file, download: '' }, d.trace_file + ' (every number)'));
      ul.appendChild(li);
    }
    (d.images || []).forEach(function (f) {
      var l = el('li'); l.appendChild(el('a', { href: f, download: '' }, f)); ul.appendChild(l);
    });
    p.appendChild(el('p', { 'class': 'av-hint' }, 'The pictures and numbers beside this page, to save for slides.'));
    p.appendChild(ul);
  }

  /* ---- start ---- */
  if (!sets.length || !sets.some(function (d) { return d.maps.length; })) {
    app.appendChild(el('p', { 'class': 'av-note' }, 'This page has no attention maps to show; the pictures are below.'));
    return;
  }
  buildFrame();
  var first = 0;
  while (!sets[first].maps.length) first++;
  document.getElementById('av-tab-generation').hidden = !sets.some(function (d) { return genSteps(d.generation); });
  document.getElementById('av-tab-passage').hidden = !sets.some(function (d) { return d.passage; });
  var resizeT = 0;
  window.addEventListener('resize', function () { clearTimeout(resizeT); resizeT = setTimeout(drawTab, 150); });
  document.getElementById('av-tab-diff').hidden = !CMP;
  /* a comparison opens on its difference, a generation on its timeline */
  S.tab = CMP ? 'diff' : genSteps(sets[first].generation) ? 'generation' : sets[first].passage ? 'passage' : 'head';
  for (var k in ui.panels) ui.panels[k].hidden = k !== S.tab;
  document.getElementById('av-tab-' + S.tab).setAttribute('aria-selected', 'true');
  chooseSet(first);

  function reveal(cv, x, y) {
    var sc = cv.parentElement;
    sc.scrollIntoView({ block: 'start' });
    sc.scrollTop = Math.max(0, y - sc.clientHeight / 2);
    sc.scrollLeft = Math.max(0, x - sc.clientWidth / 2);
    var r = cv.getBoundingClientRect();
    return { x: r.left + x, y: r.top + y };
  }

  /* For tests and for a teacher's console: the state and where tokens are drawn. */
  window.attnvizPage = {
    sets: sets,
    state: S,
    /* Where token i of a side ('q' left, 'k' right) is drawn, in the viewport,
       after scrolling it into view. */
    tokenPoint: function (side, i) {
      var G = hv.G;
      return reveal(hv.canvas, side === 'q' ? G.xl - 20 : G.xr + 20, G.top + (i + 0.5) * G.rh);
    },
    cellPoint: function (q, k) {
      var G = hm.G;
      return reveal(hm.canvas, G.lab + (k + 0.5) * G.cell, G.top + (q + 0.5) * G.cell);
    },
    /* The cell geometry of a matrix view ('heat', 'diff', 'gen'): label
       column width, top margin, cell size, in CSS pixels of its canvas. */
    geometry: function (v) { var x = { heat: hm, diff: dv, gen: gv }[v]; return x && x.G; },
    headColour: headColour,
    chooseSet: chooseSet, chooseMap: chooseMap, chooseTab: chooseTab
  };
})();
