"""The interactive index.html (src/render/page.h, src/render/assets/page.js): the
numbers it embeds equal trace.json's, it asks for nothing outside its folder, and in
Debian's Chromium (driven by puppeteer-core, tests/page_browser.js) hovering "it"
draws the trace's weights, pinning, switching layer and head, the model view, the
heatmap's read-out and the step-through Q·Kᵀ → ÷√d_k → +mask → softmax → ·V all
show the trace's numbers, with no network request and no console error.  Runs on
the own model, a GPT-2 folder (tiny, random; 512 tokens for the timing), the real
stories260K (when ../shared has it) and the demo's page.  Set ATTNVIZ_PAGE_SHOTS=DIR
to keep the screenshots."""
import base64, json, os, re, shutil, subprocess
import numpy as np
from helpers import ROOT, run_ok, load_json, skip
import hf_fixtures as hf

SENTENCE = "the animal didn't cross the street because it was too tired ."
NPM = os.path.join(ROOT, "build", "npm", "node_modules")
SCRIPT = os.path.join(ROOT, "tests", "page_browser.js")
STORIES = os.path.normpath(os.path.join(ROOT, "..", "shared", "models", "stories260K"))
FULL = ["scores", "scaled", "masked", "weights", "output"]


def page_array(x):
    """A matrix as the page embeds it ({rows, cols, f32: base64 of little-endian float32};
    with lower: true only each row's first r + 1 values, the rest 0) as a NumPy array."""
    a = np.frombuffer(base64.b64decode(x["f32"], validate=True), dtype="<f4")
    R, C = x["rows"], x["cols"]
    if not x.get("lower"):
        assert a.size == R * C, (a.size, R, C)
        return a.reshape(R, C)
    assert R == C and a.size == R * (R + 1) // 2, (a.size, R, C)
    out = np.zeros((R, C), dtype="<f4")
    out[np.tril_indices(R)] = a   # row-major order, as the page writes them
    return out


def page_matrix(x):
    """page_array as rows of numbers, non-finite values as None (what page.js makes of it)."""
    return [[float(v) if np.isfinite(v) else None for v in row] for row in page_array(x)]


def page_data(path):
    """The JSON data blocks embedded in an index.html, matrices read back as rows."""
    html = open(path, encoding="utf-8").read()
    sets = [json.loads(b) for b in re.findall(
        r'<script type="application/json" class="attnviz-data" id="attnviz-data-\d+">(.*?)</script>', html, re.S)]
    for d in sets:
        for m in d.get("maps", []):
            for hd in m["heads"]:
                for k in FULL:
                    if k in hd:
                        hd[k] = page_matrix(hd[k])
    return sets


def browser():
    """(node, chromium), or skip with the reason."""
    node = shutil.which("node")
    chrome = next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)
    if not node or not chrome:
        skip(f"the page's browser tests need node and chromium ({'node' if not node else 'chromium'} is absent; "
             "make deps installs both)")
    assert os.path.exists(os.path.join(NPM, "puppeteer-core", "package.json")), \
        "build/npm/node_modules/puppeteer-core is missing: run `make deps`"
    return node, chrome


def check_in_browser(tmp, **cfg):
    node, chrome = browser()
    shots = os.environ.get("ATTNVIZ_PAGE_SHOTS")
    if shots:
        shots = os.path.join(shots, cfg.pop("label", "page"))
        os.makedirs(shots, exist_ok=True)
    cfg.pop("label", None)
    cfg.update(chromium=chrome, npm=NPM, shots=shots)
    r = subprocess.run([node, SCRIPT, json.dumps(cfg)], capture_output=True, text=True, timeout=300,
                       cwd=os.path.join(ROOT, "build", "npm"))
    assert r.returncode == 0, f"page_browser.js: {r.stderr.strip()[-2000:]}\n{r.stdout[-500:]}"
    res = json.loads(r.stdout.strip().splitlines()[-1])
    print("     page:", r.stdout.strip().splitlines()[-1])
    return res


def stages_of(trace, map_id, head, page_has_steps):
    """The stages the step-through must show for one head."""
    m = next(x for x in trace["maps"] if x["id"] == map_id)
    hd = next(x for x in m["heads"] if x["head"] == head)
    if page_has_steps:
        return [s for s in FULL if s in hd]
    return (["mask"] if m["mask"] is not None else []) + ["weights"]


def test_page_embeds_the_trace_and_nothing_outside(tmp):
    out = os.path.join(tmp, "o")
    run_ok("run", "--out", out, SENTENCE)
    t = load_json(os.path.join(out, "trace.json"))
    html = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    [d] = page_data(os.path.join(out, "index.html"))
    assert d["trace_file"] == "trace.json" and d["images"] == t["images"] and d["maps_left_out"] == 0
    assert d["source_tokens"] == t["source_tokens"] and d["target_tokens"] == t["target_tokens"]
    worst = 0.0
    for pm, tm in zip(d["maps"], t["maps"], strict=True):
        assert (pm["id"], pm["queries"], pm["keys"], pm["d_k"]) == (tm["id"], tm["queries"], tm["keys"], tm["d_k"])
        want_mask = None if tm["mask"] is None else ["".join(str(v) for v in r) for r in tm["mask"]]
        assert pm["mask"] == want_mask, pm["id"]
        for ph, th in zip(pm["heads"], tm["heads"], strict=True):
            a, b = np.array(ph["weights"]), np.array(th["weights"])
            worst = max(worst, float(np.abs(a - b).max()))
            assert np.allclose(a, b, rtol=1e-5, atol=1e-6), (pm["id"], ph["head"])
    print(f"     embedded weights: max |page − trace| = {worst:.2e} over {len(d['maps'])} maps")
    # the focus head (the step strip's) keeps its steps on the page; no other head does
    steps = [(m["id"], h["head"]) for m in d["maps"] for h in m["heads"] if "scores" in h]
    assert len(steps) == 1 and f"steps.{steps[0][0]}.h{steps[0][1]}.png" in t["images"], steps
    assert (d["maps"][d["focus"]["map"]]["id"], d["focus"]["head"]) == steps[0]
    assert d["maps"][d["focus"]["map"]]["queries"][d["focus"]["query"]] == "it"
    # nothing fetched: no external src/href, no script or style from a file
    for ref in re.findall(r'(?:src|href)="([^"]+)"', html):
        assert not re.match(r"[a-z]+:", ref) and os.path.exists(os.path.join(out, ref)), ref
    assert not re.search(r"<script[^>]*\bsrc=|<link\b|@import|url\(", html), "the page loads a file"
    # --trace none: no trace.json, the page still has every number
    out2 = os.path.join(tmp, "none")
    run_ok("run", "--out", out2, "--trace", "none", "--no-pictures", SENTENCE)
    [d2] = page_data(os.path.join(out2, "index.html"))
    assert d2["trace_file"] is None and not os.path.exists(os.path.join(out2, "trace.json"))
    assert d2["maps"][0]["heads"][0]["weights"] == d["maps"][0]["heads"][0]["weights"]


def test_page_run_in_chromium(tmp):
    browser()
    out, steps = os.path.join(tmp, "run"), os.path.join(tmp, "steps")
    run_ok("run", "--out", out, SENTENCE)
    run_ok("run", "--out", steps, "--trace", "steps", SENTENCE)   # every head's steps: the truth to compare with
    [d] = page_data(os.path.join(out, "index.html"))
    fm = d["maps"][d["focus"]["map"]]
    st = load_json(os.path.join(steps, "trace.json"))
    res = check_in_browser(tmp, label="run", page=os.path.join(out, "index.html"),
                           trace=os.path.join(out, "trace.json"), steps_trace=os.path.join(steps, "trace.json"),
                           query="it", stages=stages_of(st, fm["id"], d["focus"]["head"], True), phone=1, timing=1)
    assert res["stages"] == FULL and res["hover"]["map"] == "encoder.2.self"
    # the page of a --trace steps run: every head steps through all five
    check_in_browser(tmp, label="run-steps", page=os.path.join(steps, "index.html"),
                     trace=os.path.join(steps, "trace.json"), query="it",
                     stages=stages_of(st, fm["id"], d["focus"]["head"], True))


def test_page_generation_timeline_in_chromium(tmp):
    """A trace with a "generation" section (the generate command's; here written
    into the page by hand, rows per head) gets the timeline; without one the tab
    stays hidden (every other test)."""
    browser()
    out = os.path.join(tmp, "run")
    run_ok("run", "--out", out, SENTENCE)
    path = os.path.join(out, "index.html")
    html = open(path, encoding="utf-8").read()
    rng = np.random.default_rng(5)
    steps = []
    for i, tok in enumerate(["le", "chat", "dort", "."]):
        rows = rng.random((4, i + 2))
        rows /= rows.sum(1, keepdims=True)
        steps.append({"token": tok, "rows": {"decoder.0.masked_self": rows.round(6).tolist()}})
    gen = {"steps": steps}
    m = re.search(r'(<script type="application/json" class="attnviz-data" id="attnviz-data-0">)(.*?)(</script>)', html, re.S)
    d = json.loads(m.group(2))
    d["generation"] = gen
    d["focus"] = {"map": [x["id"] for x in d["maps"]].index("decoder.0.masked_self"), "head": 2, "query": 0}
    html = html[:m.start(2)] + json.dumps(d) + html[m.end(2):]
    open(path, "w", encoding="utf-8").write(html)
    row = steps[2]["rows"]["decoder.0.masked_self"][2]
    keys = next(x for x in d["maps"] if x["id"] == "decoder.0.masked_self")["keys"]
    check_in_browser(tmp, label="generation", page=path, trace=os.path.join(out, "trace.json"), query="l'",
                     stages=["mask", "weights"], missing_note=1,
                     generation={"steps": 4, "step": 2, "strongest": keys[int(np.argmax(row))]})


def test_page_gpt2_folder_in_chromium(tmp):
    browser()
    d, out, steps = os.path.join(tmp, "gpt2"), os.path.join(tmp, "out"), os.path.join(tmp, "steps")
    hf.write_gpt2_dir(d)
    text = "The animal didn't cross the street because it was too tired"
    run_ok("run", "--model", d, "--out", out, text)
    run_ok("run", "--model", d, "--out", steps, "--trace", "steps", "--no-pictures", text)
    st = load_json(os.path.join(steps, "trace.json"))
    [pd] = page_data(os.path.join(out, "index.html"))
    m0 = pd["maps"][pd["focus"]["map"]]
    # a causal map's weights are embedded as their lower half, and read back as trace.json's numbers
    html = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    raw = json.loads(re.search(r'class="attnviz-data" id="attnviz-data-0">(.*?)</script>', html, re.S).group(1))
    tr = load_json(os.path.join(out, "trace.json"))
    assert len(raw["maps"]) == len(tr["maps"])
    for m, tm in zip(raw["maps"], tr["maps"]):
        for hd, th in zip(m["heads"], tm["heads"]):
            assert hd["weights"].get("lower") is True, (m["id"], hd["head"])
            assert np.array_equal(page_array(hd["weights"]), np.array(th["weights"], dtype="<f4"))
    res = check_in_browser(tmp, label="gpt2", page=os.path.join(out, "index.html"), trace=os.path.join(out, "trace.json"),
                           steps_trace=os.path.join(steps, "trace.json"), query="it",
                           stages=stages_of(st, m0["id"], pd["focus"]["head"], True))
    assert res["stages"] == FULL, res   # the strip's head keeps its steps on the page


def test_page_512_tokens_stay_smooth(tmp):
    browser()
    d, out = os.path.join(tmp, "gpt2"), os.path.join(tmp, "out")
    hf.write_gpt2_dir(d, weights=hf.gpt2_weights(P=600))
    text = " ".join(["The animal didn't cross the street because it was too tired."] * 40)
    # the browser check reads the numbers from trace.json: asked for, past the 16 MB that would make it trace.bin
    run_ok("run", "--model", d, "--out", out, "--no-pictures", "--trace-format", "json", text, timeout=300)
    t = load_json(os.path.join(out, "trace.json"))
    n = len(t["target_tokens"])
    assert n >= 500, n
    res = check_in_browser(tmp, label="gpt2-512", page=os.path.join(out, "index.html"),
                           trace=os.path.join(out, "trace.json"), query="it", missing_note=1,
                           stages=stages_of(t, t["maps"][0]["id"], 0, False), timing=1)
    print(f"     {n} tokens: head view redraw median {res['redraw_ms']['median']} ms, max {res['redraw_ms']['max']} ms; "
          f"model view {res['model_view']['thumbnails']} thumbnails in {res['model_view']['ms']} ms")
    assert res["redraw_ms"]["tokens"] == n and res["redraw_ms"]["median"] < 50, res["redraw_ms"]


def test_page_stories260k_in_chromium(tmp):
    if not os.path.exists(os.path.join(STORIES, "stories260K.bin")):
        skip(f"{STORIES} is absent (the real stories260K weights live in ../shared)")
    browser()
    out = os.path.join(tmp, "out")
    run_ok("run", "--model", os.path.join(STORIES, "stories260K.bin"), "--tokenizer",
           os.path.join(STORIES, "tok512.bin"), "--out", out, "--trace", "steps", "Lily had a red ball. She gave it to Tom.")
    t = load_json(os.path.join(out, "trace.json"))
    [pd] = page_data(os.path.join(out, "index.html"))
    m0 = pd["maps"][pd["focus"]["map"]]
    check_in_browser(tmp, label="stories260K", page=os.path.join(out, "index.html"),
                     trace=os.path.join(out, "trace.json"), query="She",
                     stages=stages_of(t, m0["id"], pd["focus"]["head"], True))


def test_page_demo_in_chromium(tmp):
    browser()
    out = os.path.join(tmp, "demo")
    run_ok("demo", "--out", out, "--quiet", timeout=300)
    data = page_data(os.path.join(out, "index.html"))
    traces = sorted(f for f in os.listdir(out) if f.endswith(".trace.json"))
    assert sorted(d["name"] for d in data) == traces
    for d in data:   # every trace of the lesson is on the page, number for number
        t = load_json(os.path.join(out, d["name"]))
        for pm, tm in zip(d["maps"], t["maps"], strict=True):
            for ph, th in zip(pm["heads"], tm["heads"], strict=True):
                assert np.allclose(np.array(ph["weights"]), np.array(th["weights"]), rtol=1e-5, atol=1e-6)
    t = load_json(os.path.join(out, "p6-tired.trace.json"))
    check_in_browser(tmp, label="demo", page=os.path.join(out, "index.html"), set="p6-tired.trace.json",
                     trace=os.path.join(out, "p6-tired.trace.json"), query="it", missing_note=1,
                     stages=stages_of(t, t["maps"][0]["id"], 0, False), phone=1)


def test_page_of_generate_and_compare_embeds_their_traces(tmp):
    """generate's and compare's index.html carry the same interactive views: the
    embedded data equal their trace files (generate: its generation steps too;
    compare: side A and side B), and nothing outside the folder is asked for."""
    g = os.path.join(tmp, "gpt2")
    hf.write_gpt2_dir(g)
    out = os.path.join(tmp, "gen")
    run_ok("generate", "--model", g, "--steps", 4, "--out", out, "The animal didn't cross")
    data = page_data(os.path.join(out, "index.html"))
    t = load_json(os.path.join(out, "trace.json"))
    assert len(data) == 1 and "generation" in data[0]
    assert [s["id"] for s in data[0]["generation"]["steps"]] == [s["id"] for s in t["generation"]["steps"]]
    m0 = t["maps"][0]
    np.testing.assert_allclose(np.array(data[0]["maps"][0]["heads"][0]["weights"], dtype=float),
                               np.array(m0["heads"][0]["weights"], dtype=float), atol=1e-6)
    out = os.path.join(tmp, "cmp")
    run_ok("compare", "--out", out, SENTENCE, SENTENCE.replace("tired", "wide"))
    html = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    assert "<script src=" not in html and "http://" not in html and "https://" not in html
    data = page_data(os.path.join(out, "index.html"))
    assert len(data) == 2
    for d, side in zip(data, ("a", "b")):
        t = load_json(os.path.join(out, f"trace-{side}.json"))
        assert [m["id"] for m in d["maps"]] == [m["id"] for m in t["maps"]]
        np.testing.assert_allclose(np.array(d["maps"][0]["heads"][1]["weights"], dtype=float),
                                   np.array(t["maps"][0]["heads"][1]["weights"], dtype=float), atol=1e-6)


# ---- one colour scale: the page draws the PNGs' colour maps (read back from Chromium's pixels) ----

# ColorBrewer RdBu (11 classes, Brewer 2002), dark blue → white → dark red: the diverging map
RDBU = ["#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7",
        "#fddbc7", "#f4a582", "#d6604d", "#b2182b", "#67001f"]


def viridis_rgb(w):
    """A weight's colour on viridis (the published table, matplotlib's), at the
    colour map's 256 steps."""
    from matplotlib import _cm_listed
    c = _cm_listed._viridis_data[int(round(min(max(w, 0.0), 1.0) * 255))]
    return [round(x * 255) for x in c]


def diverging_rgb(t):
    """Position t in [0, 1] on RdBu, linear between its eleven colours."""
    x = min(max(t, 0.0), 1.0) * 10
    i = min(int(x), 9)
    a, b = (np.array([int(h[j:j + 2], 16) for j in (1, 3, 5)], float) for h in RDBU[i:i + 2])
    return [round(v) for v in a + (b - a) * (x - i)]


def assert_colour(got, want, what, tol=2):
    assert max(abs(g - w) for g, w in zip(got, want)) <= tol, f"{what}: the page draws {got}, the PNGs' colour is {want}"


def probe(tmp, page, steps, label):
    """page_browser.js's probe: each step's result, in order."""
    return check_in_browser(tmp, label=label, page=page, probe=steps)["probe"]


STATE = """(() => { const S = attnvizPage.state, d = attnvizPage.sets[S.set], m = d.maps[S.map];
  return { tab: S.tab, set: d.name, map: m.id, head: m.heads[S.heads[0]].head, query: m.queries[S.query],
           pinned: S.pinned }; })()"""


def test_page_draws_the_pngs_colours(tmp):
    """The heatmap, the model view and the colour bar draw weight w in viridis's
    colour, as every PNG (weight 1 bright yellow, 0 dark purple): read back from
    the drawn pixels of the strongest and the weakest cell."""
    browser()
    out = os.path.join(tmp, "run")
    run_ok("run", "--out", out, SENTENCE)
    [d] = page_data(os.path.join(out, "index.html"))
    t = load_json(os.path.join(out, "trace.json"))
    fm = d["maps"][d["focus"]["map"]]
    W = np.array(next(m for m in t["maps"] if m["id"] == fm["id"])["heads"][d["focus"]["head"]]["weights"])
    strong = np.unravel_index(np.argmax(W), W.shape)
    weak = np.unravel_index(np.argmin(W), W.shape)
    assert W[strong] > 0.9 and W[weak] < 0.01, (W[strong], W[weak])
    T = max(W.shape)
    size = max(16, min(96, T * 4))   # a thumbnail's side: 4 px per cell here
    assert size == 4 * T and W.shape[0] == W.shape[1]
    res = probe(tmp, os.path.join(out, "index.html"), [
        {"tab": "heatmap"}, {"shot": "heatmap.png"},
        {"pixels": "heat", "cells": [list(map(int, strong)), list(map(int, weak))]},
        {"tab": "model"},
        {"wait": "+document.getElementById('av-model-grid').getAttribute('data-drawn') === "
                 "document.querySelectorAll('#av-model-grid canvas').length"},
        {"shot": "model-view.png"},
        {"thumb": [d["focus"]["map"], d["focus"]["head"]], "at": [4 * int(strong[1]) + 2, 4 * int(strong[0]) + 2]},
        {"thumb": [d["focus"]["map"], d["focus"]["head"]], "at": [4 * int(weak[1]) + 2, 4 * int(weak[0]) + 2]},
        {"eval": "Array.from(document.querySelectorAll('canvas.av-legend')).map(c => "
                 "[c.getAttribute('data-cmap'), Array.from(c.getContext('2d').getImageData(0, 8, 1, 1).data.slice(0, 3)), "
                 "Array.from(c.getContext('2d').getImageData(c.width - 1, 8, 1, 1).data.slice(0, 3))])"},
    ], "colours")
    px, thumb_strong, thumb_weak, legends = res[2], res[6], res[7], res[8]
    print(f"     strongest cell {tuple(map(int, strong))} w={W[strong]:.3f}: page {px['cells'][0]}, viridis "
          f"{viridis_rgb(W[strong])}; weakest w={W[weak]:.4f}: page {px['cells'][1]}, viridis {viridis_rgb(W[weak])}")
    assert_colour(px["cells"][0], viridis_rgb(W[strong]), "heatmap, strongest cell")
    assert_colour(px["cells"][1], viridis_rgb(W[weak]), "heatmap, weakest cell")
    assert px["cmap"] == "viridis" and px["scale"] == [0, 1] and px["bar_top"], px
    assert_colour(px["bar_top"], viridis_rgb(1.0), "colour bar at 1")
    assert_colour(px["bar_bottom"], viridis_rgb(0.0), "colour bar at 0")
    assert_colour(thumb_strong, viridis_rgb(W[strong]), "model view, strongest cell")
    assert_colour(thumb_weak, viridis_rgb(W[weak]), "model view, weakest cell")
    assert legends and all(l[0] == "viridis" for l in legends), legends
    for l in legends:   # the legends run from 0 to 1 on the same map
        assert_colour(l[1], viridis_rgb(0.0), "legend at 0")
        assert_colour(l[2], viridis_rgb(1.0), "legend at 1")


def test_page_compare_opens_on_the_largest_difference(tmp):
    """compare's page opens on the head whose B − A is largest (the summary's
    first line) and draws B − A on the diverging map of the .diff.png pictures,
    one symmetric scale ±max|Δ| over every head: the drawn pixels of the largest
    and the smallest |Δ| and the colour bar's ends."""
    browser()
    out = os.path.join(tmp, "cmp")
    run_ok("compare", "--out", out, SENTENCE, SENTENCE.replace("tired", "wide"))
    ta, tb = (load_json(os.path.join(out, f"trace-{s}.json")) for s in "ab")
    best, S = None, 0.0
    for ma in ta["maps"]:
        mb = next((m for m in tb["maps"] if m["id"] == ma["id"]), None)
        for ha, hb in zip(ma["heads"], mb["heads"] if mb else []):
            A, B = np.array(ha["weights"]), np.array(hb["weights"])
            if A.shape != B.shape:
                continue
            D = B - A
            S = max(S, float(np.abs(D).max()))
            if best is None or np.abs(D).max() > np.abs(best[2]).max():
                best = (ma["id"], ha["head"], D, ma["mask"])
    mid, head, D, mask = best
    big = np.unravel_index(np.argmax(np.abs(D)), D.shape)
    small = np.unravel_index(np.argmin(np.abs(D)), D.shape)
    res = probe(tmp, os.path.join(out, "index.html"), [
        {"eval": STATE}, {"shot": "difference.png"},
        {"pixels": "diff", "cells": [list(map(int, big)), list(map(int, small))]},
        {"eval": "document.getElementById('av-tab-diff').hidden"},
    ], "compare")
    st, px, hidden = res[0], res[2], res[3]
    print(f"     opens on {st['map']} head {st['head']} ({st['tab']}); largest Δ {D[big]:+.3f} at {tuple(map(int, big))}, "
          f"scale ±{S:.3f}: page {px['cells'][0]}")
    assert not hidden and st["tab"] == "diff" and (st["map"], st["head"]) == (mid, head), (st, mid, head)
    assert px["cmap"] == "diverging" and abs(px["scale"][1] - S) < 1e-4 and abs(px["scale"][0] + S) < 1e-4, px
    for cell, what in ((big, "largest"), (small, "smallest")):
        assert_colour(px["cells"][0 if what == "largest" else 1], diverging_rgb(0.5 + 0.5 * D[cell] / S),
                      f"difference, {what} |Δ| {D[cell]:+.4f}")
    assert_colour(px["bar_top"], diverging_rgb(1.0), "colour bar at +max")
    assert_colour(px["bar_bottom"], diverging_rgb(0.0), "colour bar at −max")
    # no map of equal shape (sentences of different lengths): no difference to open on
    out2 = os.path.join(tmp, "cmp-lengths")
    run_ok("compare", "--out", out2, "the dog is hungry .", "the big dog is very hungry .")
    st2, hidden2 = probe(tmp, os.path.join(out2, "index.html"), [
        {"eval": STATE}, {"eval": "document.getElementById('av-tab-diff').hidden"}], "compare-lengths")
    assert hidden2 and st2["tab"] == "head", (st2, hidden2)


# ---- where the page opens ----

def test_page_opens_on_the_pronoun_whatever_its_case(tmp):
    """A capitalised pronoun ("It" after a full stop, stories260K's "She") is the
    token the page opens on: chosen, pinned, its links drawn from the trace."""
    browser()
    cases = [("own", [], "The dog is hungry. It wants some food.", "It")]
    if os.path.exists(os.path.join(STORIES, "stories260K.bin")):
        cases.append(("stories260K", ["--model", os.path.join(STORIES, "stories260K.bin"), "--tokenizer",
                                      os.path.join(STORIES, "tok512.bin")], "Lily had a red ball. She was happy.", "She"))
    for label, model, text, word in cases:
        out = os.path.join(tmp, label)
        run_ok("run", *model, "--out", out, text)
        t = load_json(os.path.join(out, "trace.json"))
        st, links = probe(tmp, os.path.join(out, "index.html"), [
            {"eval": STATE}, {"eval": "JSON.parse(document.getElementById('av-head-canvas').getAttribute('data-links'))"},
            {"shot": "head-view.png"}], "open-" + label)[:2]
        m = next(x for x in t["maps"] if x["id"] == st["map"])
        q = m["queries"].index(word)
        print(f"     {label}: opens on “{st['query']}” ({st['map']} head {st['head']}, {st['tab']})")
        assert st["tab"] == "head" and st["query"] == word and st["pinned"] == [{"side": "q", "i": q}], st
        [l] = [x for x in links if x["side"] == "q" and x["token"] == q]
        w = next(h for h in m["heads"] if h["head"] == st["head"])["weights"][q]
        assert np.allclose(l["weights"], w, atol=2e-6), (l["weights"], w)


def test_page_generation_tab_words_head_and_keys(tmp):
    """generate's page opens on the Generation tab with the --head head; rows are
    labelled with the token read → the token written, columns with the tokens,
    the read-out names words (the strongest keys of the step's row), and ← → ↑ ↓
    step through the steps."""
    browser()
    g, out = os.path.join(tmp, "gpt2"), os.path.join(tmp, "gen")
    hf.write_gpt2_dir(g)
    run_ok("generate", "--model", g, "--steps", 4, "--head", "decoder.1.masked_self.2", "--out", out,
           "The animal didn't cross")
    t = load_json(os.path.join(out, "trace.json"))
    steps = t["generation"]["steps"]
    keys = next(m for m in t["maps"] if m["id"] == "decoder.1.masked_self")["keys"]
    gen = lambda e: {"eval": f"document.getElementById('av-gen-{e}')"}
    attrs = ("(() => { const c = document.getElementById('av-gen-canvas'); return { map: c.getAttribute('data-map'), "
             "head: +c.getAttribute('data-head'), step: +c.getAttribute('data-step'), rows: JSON.parse(c.getAttribute('data-rows')), "
             "cols: JSON.parse(c.getAttribute('data-cols')), readout: document.getElementById('av-gen-readout').textContent }; })()")
    res = probe(tmp, os.path.join(out, "index.html"), [
        {"eval": STATE}, {"eval": attrs}, {"shot": "generation.png"},
        {"key": "ArrowRight"}, {"eval": attrs}, {"key": "ArrowRight"}, {"key": "ArrowLeft"}, {"eval": attrs},
        {"key": "ArrowDown"}, {"key": "ArrowDown"}, {"eval": attrs}, {"key": "ArrowUp"}, {"eval": attrs},
    ], "generate")
    st, a0, a1, a1b, a2, a1c = res[0], res[1], res[4], res[7], res[10], res[12]
    assert st["tab"] == "generation" and (st["map"], st["head"]) == ("decoder.1.masked_self", 2), st
    assert (a0["map"], a0["head"]) == ("decoder.1.masked_self", 2), a0
    assert a0["rows"] == [f"{s['query']} → {s['token']}" for s in steps], a0["rows"]
    row_len = [len(s["rows"]["decoder.1.masked_self"][2]) for s in steps]
    assert a0["cols"] == keys[:max(row_len)], (a0["cols"], keys)
    for a, i in ((a0, 0), (a1, 1), (a1b, 1), (a2, 3), (a1c, 2)):
        row = steps[i]["rows"]["decoder.1.masked_self"][2]
        k = int(np.argmax(row))
        assert a["step"] == i, (a["step"], i)
        assert f"wrote “{steps[i]['token']}”" in a["readout"] and f"looking most at “{keys[k]}” {row[k]:.2f}" in a["readout"], \
            (i, a["readout"])
    print(f"     step 0: {a0['readout']}")


def test_page_every_head_its_own_colour(tmp):
    """A 12-head page gives its 12 head buttons 12 colours (h0 and h7 were one),
    and a 32-head model gets 32."""
    browser()
    g, out = os.path.join(tmp, "gpt2"), os.path.join(tmp, "out")
    hf.write_gpt2_dir(g, H=12, C=96)
    run_ok("run", "--model", g, "--out", out, "--no-pictures", "The animal didn't cross the street because it was tired")
    cols, many = probe(tmp, os.path.join(out, "index.html"), [
        {"click": "#av-all"},
        {"eval": "Array.from(document.querySelectorAll('#av-heads button')).map(b => getComputedStyle(b).borderTopColor)"},
        {"eval": "Array.from({ length: 32 }, (_, h) => { const c = document.createElement('canvas').getContext('2d'); "
                 "c.fillStyle = attnvizPage.headColour(h, 32); c.fillRect(0, 0, 1, 1); "
                 "return Array.from(c.getImageData(0, 0, 1, 1).data.slice(0, 3)).join(); })"},
        {"shot": "twelve-heads.png"}], "heads")[1:3]
    print(f"     12 heads: {len(set(cols))} colours; 32 heads: {len(set(many))} colours")
    assert len(cols) == 12 and len(set(cols)) == 12, cols
    assert len(set(many)) == 32, many


def test_page_labels_are_not_cut(tmp):
    """Long tokens ("<unk> Constantinopolitanization") fit in the heatmap's and the
    head view's label room (with the weights printed beside them): no ink on the
    canvases' edge columns or top row (a label running off the canvas)."""
    browser()
    out = os.path.join(tmp, "run")
    run_ok("run", "--out", out, "Constantinopolitanization visited the market because it was open .")
    [d] = page_data(os.path.join(out, "index.html"))
    longest = max((t for m in d["maps"] for t in m["queries"] + m["keys"]), key=len)
    edges = ("(() => { const c = document.getElementById('av-%s-canvas'), g = c.getContext('2d'); "
             "const ink = d => Array.from(d).some((v, i) => i %% 4 < 3 && v < 200); "
             "return { left: ink(g.getImageData(0, 0, 1, c.height).data), top: ink(g.getImageData(0, 0, c.width, 1).data), "
             "right: ink(g.getImageData(c.width - 1, 0, 1, c.height).data) }; })()")
    q = d["maps"][d["focus"]["map"]]["queries"].index(longest)
    res = probe(tmp, os.path.join(out, "index.html"), [
        {"tab": "heatmap"}, {"eval": edges % "heat"}, {"shot": "labels.png"},
        {"tab": "head"}, {"eval": f"(() => {{ attnvizPage.state.pinned = [{{ side: 'q', i: {q} }}]; "
                                  "attnvizPage.chooseTab('head'); return 0; })()"},
        {"eval": edges % "head"}, {"shot": "labels-head.png"}], "labels")
    print(f"     longest label “{longest}”: ink at the edges of the heatmap {res[1]}, of the head view {res[5]}")
    none = {"left": False, "top": False, "right": False}
    assert len(longest) > 20 and res[1] == none and res[5] == none, (res[1], res[5])


def test_page_step_through_colours_are_the_step_strips(tmp):
    """The step-through colours each number as the step strip PNG does: Q·Kᵀ on the
    diverging map, ±max|score| over the head's whole matrix (blue negative, red
    positive), the softmax weights on viridis."""
    browser()
    out = os.path.join(tmp, "steps")
    run_ok("run", "--out", out, "--trace", "steps", SENTENCE)
    t = load_json(os.path.join(out, "trace.json"))
    [d] = page_data(os.path.join(out, "index.html"))
    fm = t["maps"][d["focus"]["map"]]
    hd = next(h for h in fm["heads"] if h["head"] == d["focus"]["head"])
    q = d["focus"]["query"]
    cells = ("Array.from(document.querySelectorAll('#av-step-table td.av-value')).map(e => "
             "getComputedStyle(e).backgroundColor.match(/\\d+/g).slice(0, 3).map(Number))")
    res = probe(tmp, os.path.join(out, "index.html"), [
        {"tab": "steps"}, {"eval": "document.getElementById('av-steps').getAttribute('data-stage')"}, {"eval": cells},
        {"shot": "step-scores.png"}, {"key": "ArrowRight"}, {"key": "ArrowRight"}, {"key": "ArrowRight"},
        {"eval": "document.getElementById('av-steps').getAttribute('data-stage')"}, {"eval": cells}], "step-colours")
    assert (res[1], res[7]) == ("scores", "weights"), (res[1], res[7])
    S = float(np.abs(np.array(hd["scores"], dtype=float)).max())
    for j, (got, v) in enumerate(zip(res[2], hd["scores"][q])):
        assert_colour(got, diverging_rgb(0.5 + 0.5 * v / S), f"Q·Kᵀ[{j}] = {v:.3f} (scale ±{S:.3f})")
    for j, (got, w) in enumerate(zip(res[8], hd["weights"][q])):
        assert_colour(got, viridis_rgb(w), f"weight[{j}] = {w:.4f}")
    print(f"     {len(res[2])} scores on ±{S:.3f} and {len(res[8])} weights coloured as the step strip")
