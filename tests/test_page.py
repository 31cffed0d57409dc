"""The interactive index.html (src/render/page.h, src/render/assets/page.js): the
numbers it embeds equal trace.json's, it asks for nothing outside its folder, and in
Debian's Chromium (driven by puppeteer-core, tests/page_browser.js) hovering "it"
draws the trace's weights, pinning, switching layer and head, the model view, the
heatmap's read-out and the step-through Q·Kᵀ → ÷√d_k → +mask → softmax → ·V all
show the trace's numbers, with no network request and no console error.  Runs on
the own model, a GPT-2 folder (tiny, random; 512 tokens for the timing), the real
stories260K (when ../shared has it) and the demo's page.  Set ATTNVIZ_PAGE_SHOTS=DIR
to keep the screenshots."""
import json, os, re, shutil, subprocess
import numpy as np
from helpers import ROOT, run_ok, load_json, skip
import hf_fixtures as hf

SENTENCE = "the animal didn't cross the street because it was too tired ."
NPM = os.path.join(ROOT, "build", "npm", "node_modules")
SCRIPT = os.path.join(ROOT, "tests", "page_browser.js")
STORIES = os.path.normpath(os.path.join(ROOT, "..", "shared", "models", "stories260K"))
FULL = ["scores", "scaled", "masked", "weights", "output"]


def page_data(path):
    """The JSON data blocks embedded in an index.html."""
    html = open(path, encoding="utf-8").read()
    return [json.loads(b) for b in re.findall(
        r'<script type="application/json" class="attnviz-data" id="attnviz-data-\d+">(.*?)</script>', html, re.S)]


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
    check_in_browser(tmp, label="generation", page=path, trace=os.path.join(out, "trace.json"), query="l'",
                     stages=["mask", "weights"], missing_note=1,
                     generation={"steps": 4, "step": 2, "strongest": int(np.argmax(row))})


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
    res = check_in_browser(tmp, label="gpt2", page=os.path.join(out, "index.html"), trace=os.path.join(out, "trace.json"),
                           steps_trace=os.path.join(steps, "trace.json"), query="it",
                           stages=stages_of(st, m0["id"], pd["focus"]["head"], True))
    assert res["stages"] == FULL, res   # the strip's head keeps its steps on the page


def test_page_512_tokens_stay_smooth(tmp):
    browser()
    d, out = os.path.join(tmp, "gpt2"), os.path.join(tmp, "out")
    hf.write_gpt2_dir(d, weights=hf.gpt2_weights(P=600))
    text = " ".join(["The animal didn't cross the street because it was too tired."] * 40)
    run_ok("run", "--model", d, "--out", out, "--no-pictures", text, timeout=300)
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
