/* page_browser.js — drives index.html in Debian's Chromium (puppeteer-core) the
 * way a teacher would, and checks what it draws against the trace.
 * Called by tests/test_page.py:  node tests/page_browser.js '<json config>'
 * config: page (index.html), trace (trace.json the numbers come from),
 *   steps_trace (a --trace steps trace of the same input, for the step-through;
 *   default: trace), set (the page's data set to open, by name; default: the
 *   first), query (token to hover, e.g. "it"), stages (the step-through's
 *   expected stage keys), missing_note (1: the "weights only" note must show),
 *   shots (folder for screenshots, or null), timing (1: measure redraws),
 *   phone (1: a phone-sized run too), chromium, npm (build/npm/node_modules).
 *   probe: a list of steps instead of the walk-through above, each one of
 *     {tab: name}                click that tab
 *     {key: name}                press that key (the page's body has the focus)
 *     {click: selector}          click the element
 *     {shot: file}               a screenshot of the views into cfg.shots
 *     {eval: expression}         its value (JSON) is added to the results' probe
 *     {wait: expression}         wait until it is true
 *     {pixels: view, cells: [[q, k] …]}   the drawn colour at the centre of each
 *                                cell of a matrix view (heat, diff, gen), read
 *                                back from its canvas, and of its colour bar's
 *                                top and bottom rows: {cells: [[r, g, b] …],
 *                                bar_top, bar_bottom, cmap, scale}
 *     {thumb: [map, head], at: [x, y]}   the colour of a model view thumbnail's pixel
 * The results say how long the page took to open and draw its views (open_ms).
 * Every request that is not a file:// of the page's own folder is refused and
 * fails the run, as does any console error.  Prints one JSON line of results;
 * exits 1 with the first difference on stderr. */
'use strict';
const path = require('path');
const fs = require('fs');
const cfg = JSON.parse(process.argv[2]);
const puppeteer = require(path.join(cfg.npm, 'puppeteer-core'));

function fail(msg) { throw new Error(msg); }
function close(a, b) { return Math.abs(a - b) <= 2e-6 + 1e-5 * Math.abs(b); }
function compareRow(got, want, what) {
  if (!Array.isArray(got) || got.length !== want.length)
    fail(`${what}: ${got && got.length} values on the page, ${want.length} in the trace`);
  let worst = 0;
  for (let i = 0; i < want.length; i++) {
    if (want[i] === null) { if (got[i] !== null) fail(`${what}[${i}]: page ${got[i]}, trace −∞`); continue; }
    if (!close(got[i], want[i])) fail(`${what}[${i}]: page ${got[i]}, trace ${want[i]} (first difference)`);
    worst = Math.max(worst, Math.abs(got[i] - want[i]));
  }
  return worst;
}
/* The number a cell shows ("0.1234", "−∞", "1.234e−5") as a float, null for −∞. */
function shown(text) {
  if (text === '−∞') return null;
  return Number(text.replace(/−/g, '-'));
}

/* One step of cfg.probe (see the top): its result, or null. */
async function probeStep(page, step) {
  if (step.tab) { await page.click('#av-tab-' + step.tab); return null; }
  if (step.key) { await page.evaluate(() => document.activeElement && document.activeElement.blur()); await page.keyboard.press(step.key); return null; }
  if (step.click) { await page.click(step.click); return null; }
  if (step.shot) {
    if (cfg.shots) {
      await page.evaluate(() => document.getElementById('views').scrollIntoView());
      await page.screenshot({ path: path.join(cfg.shots, step.shot) });
    }
    return null;
  }
  if (step.eval) return page.evaluate(step.eval);
  if (step.wait) { await page.waitForFunction(step.wait, { timeout: 20000 }); return null; }
  if (step.thumb) return page.evaluate((m, h, at) => {
    const cv = document.querySelector(`#av-model-grid canvas[data-map="${m}"][data-head="${h}"]`);
    return Array.from(cv.getContext('2d').getImageData(at[0], at[1], 1, 1).data.slice(0, 3));
  }, step.thumb[0], step.thumb[1], step.at);
  if (step.pixels) return page.evaluate((view, cells) => {
    const cv = document.getElementById('av-' + view + '-canvas'), G = attnvizPage.geometry && attnvizPage.geometry(view);
    const r = cv.width / parseFloat(cv.style.width), g = cv.getContext('2d');
    const px = (x, y) => Array.from(g.getImageData(Math.floor(x * r), Math.floor(y * r), 1, 1).data.slice(0, 3));
    /* a cell's centre on the canvas (a page without geometry(): from cellPoint, the heatmap's) */
    const centre = c => {
      if (G) return [G.lab + (c[1] + 0.5) * G.cell, G.top + (c[0] + 0.5) * G.cell];
      const p = attnvizPage.cellPoint(c[0], c[1]), b = cv.getBoundingClientRect();
      return [p.x - b.left, p.y - b.top];
    };
    const bar = JSON.parse(cv.getAttribute('data-bar'));
    return { cells: cells.map(c => px(...centre(c))),
             bar_top: bar && px(bar.x + bar.w / 2, bar.y), bar_bottom: bar && px(bar.x + bar.w / 2, bar.y + bar.h - 1),
             cmap: cv.getAttribute('data-cmap'), scale: (cv.getAttribute('data-scale') || '').split(' ').map(Number) };
  }, step.pixels, step.cells);
  fail('unknown probe step ' + JSON.stringify(step));
}

async function main() {
  const results = { checks: 0, max_diff: 0 };
  const browser = await puppeteer.launch({ executablePath: cfg.chromium, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'] });
  const errors = [], refused = [];
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    const pageFile = path.resolve(cfg.page);
    const own = 'file://' + path.dirname(pageFile) + '/';
    page.on('console', m => { if (m.type() === 'error') errors.push('console error: ' + m.text()); });
    page.on('pageerror', e => errors.push('page error: ' + e.message));
    await page.setRequestInterception(true);
    page.on('request', r => {
      const u = decodeURI(r.url());
      if (u.startsWith(own)) r.continue();
      else { refused.push(u); r.abort(); }
    });
    const opening = Date.now();
    await page.goto('file://' + pageFile, { waitUntil: 'load' });
    if (!await page.evaluate(() => !!window.attnvizPage)) fail('the page did not start (no window.attnvizPage)');
    results.open_ms = Date.now() - opening;   /* from asking for the page to its views drawn */

    const trace = cfg.probe ? null : JSON.parse(fs.readFileSync(cfg.trace, 'utf8'));
    const stepsTrace = cfg.steps_trace ? JSON.parse(fs.readFileSync(cfg.steps_trace, 'utf8')) : trace;
    walk: {   /* the teacher's walk-through, unless a probe replaces it */
    if (cfg.probe) {
      results.probe = [];
      for (const step of cfg.probe) results.probe.push(await probeStep(page, step));
      break walk;
    }
    if (cfg.set) {
      const ok = await page.evaluate(name => {
        const i = attnvizPage.sets.findIndex(d => d.name === name);
        if (i >= 0) attnvizPage.chooseSet(i);
        return i >= 0;
      }, cfg.set);
      if (!ok) fail(`no data set ${cfg.set} on the page`);
    }
    /* from the head view with nothing pinned (the page opens with its focus token pinned) */
    await page.click('#av-tab-head');
    await page.evaluate(() => { attnvizPage.state.pinned.length = 0; attnvizPage.chooseTab('head'); });
    const state = () => page.evaluate(() => {
      const S = attnvizPage.state, m = attnvizPage.sets[S.set].maps[S.map];
      return { set: S.set, map: S.map, id: m.id, heads: S.heads.map(h => m.heads[h].head), query: S.query };
    });
    const traceMap = id => trace.maps.find(m => m.id === id) || fail(`map ${id} is not in the trace`);
    const traceHead = (m, h) => m.heads.find(x => x.head === h) || fail(`${m.id} head ${h} is not in the trace`);
    const attr = (sel, name) => page.$eval(sel, (e, n) => e.getAttribute(n), name);
    const links = async () => JSON.parse(await attr('#av-head-canvas', 'data-links'));
    const tokenPoint = (side, i) => page.evaluate((s, k) => attnvizPage.tokenPoint(s, k), side, i);

    /* ---- head view: hover the query, its links equal the trace's weights ---- */
    let st = await state();
    let M = traceMap(st.id);
    const qi = M.queries.indexOf(cfg.query);
    if (qi < 0) fail(`“${cfg.query}” is not a query of ${M.id}`);
    let p = await tokenPoint('q', qi);
    await page.mouse.move(p.x, p.y);
    await page.waitForFunction(i => JSON.parse(document.getElementById('av-head-canvas').getAttribute('data-links'))
      .some(l => l.side === 'q' && l.token === i), {}, qi);
    let L = await links();
    for (const h of st.heads) {
      const l = L.find(x => x.side === 'q' && x.token === qi && x.head === h) || fail(`no links of head ${h} drawn`);
      results.max_diff = Math.max(results.max_diff,
        compareRow(l.weights, traceHead(M, h).weights[qi], `${M.id} head ${h} links of “${cfg.query}”`));
      results.checks++;
    }
    const drawn = +await attr('#av-head-canvas', 'data-drawn');
    const strong = st.heads.reduce((n, h) => n + traceHead(M, h).weights[qi].filter(w => w > 0.005).length, 0);
    if (drawn !== strong) fail(`${drawn} links drawn, the trace has ${strong} weights above 0.005`);
    results.hover = { map: M.id, heads: st.heads, query: qi, drawn: drawn };
    const status = await page.$eval('#av-head-status', e => e.textContent);
    if (!status.includes(cfg.query)) fail(`the head view's line does not name “${cfg.query}”: ${status}`);

    /* pin it, leave, the links stay; pin its strongest key too (several at once) */
    await page.mouse.click(p.x, p.y);
    await page.mouse.move(2, 2);
    L = await links();
    if (!L.some(l => l.side === 'q' && l.token === qi)) fail('the pinned token lost its links when the pointer left');
    const h0 = st.heads[0], row = traceHead(M, h0).weights[qi];
    const kj = row.indexOf(Math.max(...row));
    p = await tokenPoint('k', kj);
    await page.mouse.click(p.x, p.y);
    await page.mouse.move(2, 2);
    const pinned = JSON.parse(await attr('#av-head-canvas', 'data-pinned'));
    if (pinned.length !== 2) fail(`2 tokens pinned expected, the page has ${JSON.stringify(pinned)}`);
    L = await links();
    const col = L.find(l => l.side === 'k' && l.token === kj && l.head === h0) || fail('no links of the pinned key');
    compareRow(col.weights, traceHead(M, h0).weights.map(r => r[kj]), `${M.id} head ${h0} links into key ${kj}`);
    results.checks += 2;
    if (cfg.shots) {
      await page.evaluate(() => document.getElementById('views').scrollIntoView());
      await page.screenshot({ path: path.join(cfg.shots, 'head-view.png') });
    }

    /* ---- another layer and head, hover again ---- */
    const maps = await page.evaluate(() => attnvizPage.sets[attnvizPage.state.set].maps.map(m => m.id));
    let other = -1;
    maps.forEach((id, i) => { if (i !== st.map && traceMap(id).queries[qi] === cfg.query) other = i; });
    if (other < 0) fail('no second map with the query to switch to');
    await page.select('#av-map', String(other));
    const nh = traceMap(maps[other]).heads.length;
    const want = nh > 1 ? 1 : 0;
    if (!(await state()).heads.includes(want)) await page.click(`#av-heads button[data-head="${want}"]`);
    for (const h of (await state()).heads) if (h !== want) await page.click(`#av-heads button[data-head="${h}"]`);
    st = await state();
    if (st.id !== maps[other] || st.heads.join() !== String(want)) fail(`switching gave ${JSON.stringify(st)}`);
    M = traceMap(st.id);
    await page.evaluate(() => { attnvizPage.state.pinned.length = 0; });
    p = await tokenPoint('q', qi);
    await page.mouse.move(p.x, p.y - 3);
    await page.mouse.move(p.x, p.y);
    await page.waitForFunction((i, h) => JSON.parse(document.getElementById('av-head-canvas').getAttribute('data-links'))
      .some(l => l.side === 'q' && l.token === i && l.head === h), {}, qi, want);
    L = await links();
    compareRow(L.find(l => l.head === want && l.token === qi).weights, traceHead(M, want).weights[qi],
               `${M.id} head ${want} links of “${cfg.query}” after switching`);
    results.switched = { map: M.id, head: want };
    results.checks++;

    /* ---- model view: every thumbnail drawn; click one opens it in the heatmap ---- */
    await page.click('#av-tab-model');
    const nThumbs = await page.$$eval('#av-model-grid canvas', c => c.length);
    const t0 = Date.now();
    await page.waitForFunction(n => +document.getElementById('av-model-grid').getAttribute('data-drawn') === n, {}, nThumbs);
    results.model_view = { thumbnails: nThumbs, ms: Date.now() - t0 };
    const want2 = trace.maps.reduce((n, m) => n + m.heads.length, 0);
    if (!cfg.set && nThumbs !== want2) fail(`${nThumbs} thumbnails, the trace has ${want2} heads`);
    if (cfg.shots) {
      await page.evaluate(() => document.getElementById('views').scrollIntoView());
      await page.screenshot({ path: path.join(cfg.shots, 'model-view.png') });
    }
    const lastMap = maps.length - 1, lastHead = traceMap(maps[lastMap]).heads.length - 1;
    await page.evaluate((m, h) => document.querySelector(`#av-model-grid canvas[data-map="${m}"][data-head="${h}"]`)
      .scrollIntoView({ block: 'center' }), lastMap, lastHead);
    await page.click(`#av-model-grid canvas[data-map="${lastMap}"][data-head="${lastHead}"]`);
    if (await page.$eval('#av-heatmap', e => e.hidden)) fail('clicking a thumbnail did not open the heatmap');
    if (await attr('#av-heat-canvas', 'data-map') !== maps[lastMap] ||
        +await attr('#av-heat-canvas', 'data-head') !== traceMap(maps[lastMap]).heads[lastHead].head)
      fail('the heatmap does not show the thumbnail clicked');

    /* ---- heatmap: the value under the pointer ---- */
    M = traceMap(maps[lastMap]);
    const Hm = M.heads[lastHead], cq = M.queries.length - 1, ck = 0;
    p = await page.evaluate((q, k) => attnvizPage.cellPoint(q, k), cq, ck);
    await page.mouse.move(p.x, p.y);
    const v = +await attr('#av-heat-readout', 'data-value');
    if (+await attr('#av-heat-readout', 'data-q') !== cq || +await attr('#av-heat-readout', 'data-k') !== ck)
      fail('the heatmap read out another cell than the one under the pointer');
    if (!close(v, Hm.weights[cq][ck])) fail(`heatmap cell (${cq}, ${ck}): page ${v}, trace ${Hm.weights[cq][ck]}`);
    results.checks++;
    if (cfg.shots) {
      await page.evaluate(() => document.getElementById('av-tab-heatmap').scrollIntoView());
      await page.screenshot({ path: path.join(cfg.shots, 'heatmap.png') });
    }

    /* ---- step-through of the focus head, query cfg.query ---- */
    await page.evaluate(() => attnvizPage.chooseSet(attnvizPage.state.set));
    await page.click('#av-tab-steps');
    st = await state();
    await page.select('#av-query', String(qi));
    const SM = stepsTrace.maps.find(m => m.id === st.id), SH = SM.heads.find(x => x.head === st.heads[0]);
    await page.focus('#av-next');
    for (let i = 0; i < 8; i++) await page.keyboard.press('ArrowLeft');
    const seen = [];
    for (let i = 0; ; i++) {
      const stage = await attr('#av-steps', 'data-stage');
      seen.push(stage);
      const cells = await page.$$eval('#av-step-table td.av-value', c => c.map(e => [e.getAttribute('data-value'), e.textContent]));
      const got = cells.map(c => c[0] === '-inf' ? null : Number(c[0]));
      if (stage === 'mask') {
        const m = SM.mask[qi];
        compareRow(got, m.map(Number), `mask of row ${qi}`);
      } else {
        if (!SH[stage]) fail(`the page shows ${stage}, the steps trace has none for ${SM.id} head ${SH.head}`);
        results.max_diff = Math.max(results.max_diff, compareRow(got, SH[stage][qi], `${SM.id} head ${SH.head} ${stage} row ${qi}`));
        cells.forEach((c, j) => {
          const t = shown(c[1]), w = SH[stage][qi][j];
          if (w === null ? t !== null : Math.abs(t - w) > 1e-4 + 1e-3 * Math.abs(w))
            fail(`${stage}[${j}] is shown as “${c[1]}”, the trace has ${w}`);
        });
      }
      results.checks++;
      if (cfg.shots && stage === 'weights') {
        await page.evaluate(() => document.getElementById('av-tab-steps').scrollIntoView());
        await page.screenshot({ path: path.join(cfg.shots, 'step-through.png') });
      }
      if (await page.$eval('#av-next', b => b.disabled)) break;
      if (i % 2) await page.click('#av-next');
      else { await page.focus('#av-next'); await page.keyboard.press('ArrowRight'); }
    }
    if (JSON.stringify(seen) !== JSON.stringify(cfg.stages))
      fail(`the step-through went ${seen.join(' → ')}, expected ${cfg.stages.join(' → ')}`);
    await page.click('#av-prev');
    if (await attr('#av-steps', 'data-stage') !== seen[seen.length - 2 >= 0 ? seen.length - 2 : 0]) fail('Previous did not step back');
    const note = await page.$('#av-steps-missing');
    if (!!note !== !!cfg.missing_note) fail(`the "weights only" note is ${note ? 'shown' : 'absent'}`);
    results.stages = seen;

    /* ---- the keyboard (a presenter's remote): ↓ to the query, Enter pins it ---- */
    await page.click('#av-tab-head');
    await page.evaluate(() => { attnvizPage.chooseSet(attnvizPage.state.set); attnvizPage.state.pinned.length = 0; });
    await page.focus('#av-head-canvas');
    for (let i = 0; i <= qi; i++) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    st = await state();
    M = traceMap(st.id);
    if (!JSON.parse(await attr('#av-head-canvas', 'data-pinned')).some(t => t.side === 'q' && t.i === qi))
      fail('↓ and Enter did not pin the query');
    L = await links();
    compareRow(L.find(l => l.side === 'q' && l.token === qi && l.head === st.heads[0]).weights,
               traceHead(M, st.heads[0]).weights[qi], `${M.id} links of “${cfg.query}” pinned by keyboard`);
    results.checks++;

    /* ---- generation timeline: shown only when a data set has one ---- */
    const genHidden = await page.$eval('#av-tab-generation', e => e.hidden);
    if (genHidden === !!cfg.generation) fail(`the Generation tab is ${genHidden ? 'hidden' : 'shown'}`);
    if (cfg.generation) {
      await page.click('#av-tab-generation');
      const steps = await page.$$('#av-gen-steps button');
      if (steps.length !== cfg.generation.steps) fail(`${steps.length} generation steps shown, ${cfg.generation.steps} in the trace`);
      await steps[cfg.generation.step].click();
      const line = await page.$eval('#av-gen-readout', e => e.textContent);
      if (!line.includes(`looking most at “${cfg.generation.strongest}” `)) fail(`generation step read-out: ${line}`);
      if (!await page.$('#av-gen-canvas')) fail('no generation map drawn');
      if (cfg.shots) {
        await page.evaluate(() => document.getElementById('av-tab-generation').scrollIntoView());
        await page.screenshot({ path: path.join(cfg.shots, 'generation.png') });
      }
      results.checks++;
    }

    /* ---- long inputs stay smooth: the head view's redraw under the pointer ---- */
    if (cfg.timing) {
      await page.click('#av-tab-head');
      results.redraw_ms = await page.evaluate(() => {
        const cv = document.getElementById('av-head-canvas'), r = cv.getBoundingClientRect(), n = 40, times = [];
        for (let i = 0; i < n; i++) {
          const t = performance.now();
          cv.dispatchEvent(new MouseEvent('mousemove', { clientX: r.left + 30, clientY: r.top + 10 + i * (r.height - 20) / n, bubbles: true }));
          times.push(performance.now() - t);
        }
        times.sort((a, b) => a - b);
        return { median: +times[n >> 1].toFixed(2), max: +times[n - 1].toFixed(2), tokens: attnvizPage.sets[0].maps[0].queries.length };
      });
    }

    /* ---- a phone: tap a token to pin it; nothing wider than the screen ---- */
    if (cfg.phone) {
      await page.setViewport({ width: 390, height: 844, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
      await page.reload({ waitUntil: 'load' });
      if (cfg.set) await page.evaluate(name => attnvizPage.chooseSet(attnvizPage.sets.findIndex(d => d.name === name)), cfg.set);
      await page.evaluate(() => { attnvizPage.state.pinned.length = 0; attnvizPage.chooseTab('head'); });
      p = await tokenPoint('q', qi);
      await page.touchscreen.tap(p.x, p.y);
      const pin = JSON.parse(await attr('#av-head-canvas', 'data-pinned'));
      if (!pin.some(t => t.side === 'q' && t.i === qi)) fail('tapping a token on a phone did not pin it');
      const wide = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
      if (wide[0] > wide[1] + 1) fail(`on a phone the page is ${wide[0]} px wide for a ${wide[1]} px screen`);
      if (cfg.shots) {
        await page.evaluate(() => document.getElementById('views').scrollIntoView());
        await page.screenshot({ path: path.join(cfg.shots, 'phone.png') });
      }
      results.checks++;
    }
    }
  } finally {
    await browser.close();
  }
  if (refused.length) fail(`the page asked for ${refused.length} thing(s) outside its folder: ${refused.slice(0, 3).join(', ')}`);
  if (errors.length) fail(errors.slice(0, 3).join(' | '));
  console.log(JSON.stringify(results));
}

main().catch(e => { console.error('page check failed: ' + e.message); process.exit(1); });
