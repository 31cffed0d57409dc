/* page_passage.js — the Passage tab of index.html (src/render/page.h): a long
 * text's whole text, scrollable, from its "passage" section (pipeline/longtext.h:
 * for a few heads, each row's strongest keys and their weights).  Pointing at a
 * token colours the keys its row of the chosen head looks at most, in the PNGs'
 * colours, the weight under each; a click pins it.  Loaded before page.js, which
 * calls window.attnvizPassage(api) with its helpers and state and gets back the
 * tab's draw function.  Tests read data-query, data-ms and data-w. */
window.attnvizPassage = function (api) {
  'use strict';
  var el = api.el, colour = api.colour, textOn = api.textOn, legend = api.legend, S = api.state, data = api.data;
  var pv = null;
  function passageHead(ps) { return ps.heads[Math.min(S.passageHead || 0, ps.heads.length - 1)]; }
  function drawPassage() {
    var p = api.panel(), ps = data().passage;
    if (!ps || !ps.heads || !ps.heads.length) { p.textContent = ''; pv = null; return; }
    if (!pv || pv.ps !== ps) {
      p.textContent = '';
      pv = { ps: ps, lit: [] };
      p.appendChild(el('p', { 'class': 'av-hint' }, 'The whole text. Point at a token (or click to pin it): the ' +
        ps.k + ' tokens its row of the chosen head looks at most are coloured by their weight, the weight under each; ' +
        'every weight is in the trace file. Colours of the PNGs: ')).appendChild(legend('viridis', '0', '1', 'weight 0 to 1, viridis'));
      pv.bar = el('div', { 'class': 'av-timeline', id: 'av-passage-heads' });
      p.appendChild(pv.bar);
      pv.readout = el('div', { 'class': 'av-readout', id: 'av-passage-readout', 'aria-live': 'polite' });
      p.appendChild(pv.readout);
      pv.text = el('div', { 'class': 'av-passage av-scroll', id: 'av-passage-text' });
      pv.spans = ps.tokens.map(function (t, i) {
        var s = el('span', { 'class': 'av-tok', 'data-i': i }, t);
        pv.text.appendChild(s);
        pv.text.appendChild(document.createTextNode(' '));
        return s;
      });
      pv.text.addEventListener('mouseover', function (e) {
        var i = e.target.getAttribute && e.target.getAttribute('data-i');
        if (i !== null && i !== undefined && S.passagePin === undefined) passageShow(+i);
      });
      pv.text.addEventListener('click', function (e) {
        var i = e.target.getAttribute && e.target.getAttribute('data-i');
        if (i === null || i === undefined) return;
        S.passagePin = S.passagePin === +i ? undefined : +i;
        passageShow(+i);
      });
      p.appendChild(pv.text);
    }
    pv.bar.textContent = '';
    ps.heads.forEach(function (hd, k) {
      var b = el('button', { type: 'button', 'aria-pressed': k === (S.passageHead || 0) ? 'true' : 'false' },
                 hd.map + ' h' + hd.head + ': ' + hd.label);
      b.addEventListener('click', function () { S.passageHead = k; drawPassage(); });
      pv.bar.appendChild(b);
    });
    var q = S.passageQuery !== undefined ? S.passageQuery : ps.query > 0 && ps.query < ps.tokens.length ? ps.query : 0;
    passageShow(q);
    if (S.passageQuery === q && !pv.shown) { pv.shown = 1; pv.text.scrollTop = Math.max(0, pv.spans[q].offsetTop - 80); }
  }
  function passageShow(i) {
    var ps = pv.ps, hd = passageHead(ps), t0 = performance.now();
    pv.lit.forEach(function (s) { s.style.background = ''; s.style.color = ''; s.style.outline = ''; s.removeAttribute('data-w'); });
    pv.lit = [];
    var top = hd.top[i] || [], w = hd.w[i] || [];
    top.forEach(function (j, r) {
      var s = pv.spans[j], c = colour(w[r]);
      s.style.background = 'rgb(' + c.join(',') + ')';
      s.style.color = textOn(c);
      s.setAttribute('data-w', w[r] < 0.005 ? '<.01' : w[r].toFixed(2).replace(/^0/, ''));
      pv.lit.push(s);
    });
    var me = pv.spans[i];
    me.style.outline = '3px solid #D55E00';
    pv.lit.push(me);
    S.passageQuery = i;
    var keys = hd.map.indexOf('masked') >= 0 ? i + 1 : ps.tokens.length;
    pv.readout.textContent = '“' + ps.tokens[i] + '” (' + i + ') in ' + hd.map + ' head ' + hd.head + ' looks most at ' +
      top.slice(0, 3).map(function (j, r) {
        return '“' + ps.tokens[j] + '” (' + j + ') ' + (w[r] >= 0.01 ? w[r].toFixed(2) : w[r].toPrecision(2)); }).join(', ') +
      ' — the ' + top.length + ' strongest of ' + keys + ' keys coloured' + (S.passagePin !== undefined ? ' (pinned: click again to free)' : '');
    pv.text.setAttribute('data-query', i);
    pv.text.setAttribute('data-ms', (performance.now() - t0).toFixed(2));
  }
  return drawPassage;
};
