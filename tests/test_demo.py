"""`attnviz demo` end to end: every picture of the lesson in order, index.html, the
traces, the √d_k numbers against an independent numpy computation, determinism,
bad input, and the page loaded in headless Chromium (no console errors, every
image loaded).  Uses a small random checkpoint from model-init (independent of
the shipped model) plus a synthetic training-snapshot file; the shipped model is
tried too when present."""
import atexit, json, os, re, shutil, subprocess, tempfile
import numpy as np
from helpers import ROOT, run, run_ok, run_err, load_json, validate_trace, files_under, png_content

EXPECTED = [
    "p1-qk-steps.png", "p1-3x3-steps.png",
    "p2-sqrtdk-std.png", "p2-sqrtdk-peaked.png", "p2-sqrtdk-gradient.png", "p2-sqrtdk-table.png",
    "p3-causal-mask.png", "p3-masked-softmax.png", "p3-decoder-masked.png", "p3-padding-batch.png",
    "p3-fill-causal.png", "p3-fill-fully-masked.png",
    "p4-split-concat.png", "p4-heads.png",
    "p5-three-kinds.png",
    "p6-coref-tired-lines.png", "p6-coref-tired-heatmap.png", "p6-coref-wide-lines.png",
    "p6-coref-wide-heatmap.png",
    "p7-pe-matrix.png", "p7-pe-similarity.png",
    "p8-vi-decoder-hoc.png", "p8-vi-lines-hoc.png",
    "p9-training-snapshots.png",
]
# part 10 (does attention explain?) compares the shipped taught and untaught models
P10 = ["p10-taught-head.png", "p10-taught-knockout.png", "p10-untaught-maps.png", "p10-untaught-knockout.png"]
UNTAUGHT = os.path.join(ROOT, "samples", "models", "attnviz-en-fr-vi-untaught.safetensors")

WORDS = ("the animal didn't cross street because it was too tired wide . cat sat on mat "
         "she ate pizza with mushrooms i go to school am happy l' le la n' a pas traversé "
         "rue parce qu' il elle était trop fatigué large chat je vais à école tôi đi học").split()
SPECIALS = ["<pad>", "<unk>", "<bos>", "<eos>", "<2fr>", "<2vi>"]
CORE_TIRED = "the animal didn't cross the street because it was too tired ."
CORE_WIDE = "the animal didn't cross the street because it was too wide ."

_cache = {}


def _scratch():
    d = tempfile.mkdtemp(prefix="attnviz-demo-")
    atexit.register(shutil.rmtree, d, True)
    return d


def write_snapshots(model_path, n_layers=2, n_heads=4, steps=(0, 10, 20)):
    """A synthetic snapshot file in attnviz train's format (loss of step 0 = bare nan,
    as train writes it)."""
    sents = []
    for text in (CORE_TIRED, CORE_WIDE):
        toks = text.replace(" .", " .").split() + ["<eos>"]
        sents.append({"text": text, "source_tokens": toks})
    parts = []
    for k, step in enumerate(steps):
        ss = []
        for s in sents:
            n = len(s["source_tokens"])
            rng = np.random.default_rng(step + n)
            maps = []
            for l in range(n_layers):
                heads = []
                for h in range(n_heads):
                    w = rng.random((n, n)) + np.eye(n) * k
                    w /= w.sum(1, keepdims=True)
                    heads.append({"head": h, "weights": np.round(w, 5).tolist()})
                maps.append({"id": f"encoder.{l}.self", "stack": "encoder", "layer": l, "kind": "self",
                             "d_k": 8, "heads": heads})
            ss.append({"maps": maps})
        loss = "nan" if step == 0 else "%.4f" % (5.0 / (1 + k))
        parts.append('{"step": %d, "loss": %s, "lr": 0, "sentences": %s}' % (step, loss, json.dumps(ss)))
    text = ('{"format": "attnviz-snapshots", "version": 1, "model": {}, "sentences": %s, "snapshots": [%s]}\n'
            % (json.dumps(sents), ",\n".join(parts)))
    path = model_path[: -len(".safetensors")] + ".snapshots.json"
    open(path, "w", encoding="utf-8").write(text)
    return path


def make_model(tmp, snapshots=True):
    vocab = SPECIALS + WORDS
    vp = os.path.join(tmp, "vocab.txt")
    open(vp, "w", encoding="utf-8").write("\n".join(vocab) + "\n")
    cfg = {"arch": "encoder-decoder", "vocab_size": len(vocab), "d_model": 32, "n_heads": 4,
           "d_ff": 64, "n_enc_layers": 2, "n_dec_layers": 2, "max_len": 64, "norm": "post"}
    mp = os.path.join(tmp, "m.safetensors")
    run_ok("model-init", "--config", json.dumps(cfg), "--vocab", vp, "--out", mp, "--seed", "7")
    if snapshots:
        write_snapshots(mp)
    return mp


def demo_once():
    """Runs the demo once for the tests that only read its output."""
    if "out" not in _cache:
        d = _scratch()
        mp = make_model(d)
        out = os.path.join(d, "out")
        r = run_ok("demo", "--model", mp, "--out", out, timeout=120)
        _cache.update(model=mp, out=out, stdout=r.stdout, stderr=r.stderr)
    return _cache


def page_images(html):
    return re.findall(r'<img src="([^"]+)"', html)


def test_demo_writes_every_picture_in_order():
    c = demo_once()
    out = c["out"]
    files = files_under(out)
    for name in EXPECTED:
        assert name in files, f"missing {name}; have {files}"
        data = open(os.path.join(out, name), "rb").read()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{name} is not a PNG"
        assert len(data) > 5000, f"{name} is suspiciously small ({len(data)} bytes)"
    html = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    imgs = page_images(html)
    assert imgs == EXPECTED, f"page order differs:\n{imgs}\nexpected\n{EXPECTED}"
    for href in re.findall(r'(?:src|href)="([^"]+)"', html):
        assert not re.match(r"[a-z]+://", href), f"page refers to the network: {href}"
        assert os.path.exists(os.path.join(out, href)), f"index.html refers to missing {href}"
    # the pictures need no script; the interactive views above them (render/page.h,
    # tests/test_page.py) are inline scripts, nothing loaded from a file
    assert not re.search(r"<script[^>]*\bsrc=", html, re.I), "the page loads a script file"
    # every figure: English caption, Vietnamese caption, the command
    figs = re.findall(r"<figure>(.*?)</figure>", html, re.S)
    assert len(figs) == len(EXPECTED)
    for f in figs:
        assert '<span class="vi" lang="vi">' in f and '<code class="cmd">attnviz ' in f, f[:300]
    # parts in lesson order
    heads = re.findall(r'<h2 id="(p\d)[^"]*">', html)
    assert [h for i, h in enumerate(heads) if h not in heads[:i]] == [f"p{i}" for i in range(1, 10)], heads
    # summary with the time taken
    assert re.search(r"demo: %d pictures, \d+ trace files and index.html in .* \(\d+\.\d+ s\)" % len(EXPECTED),
                     c["stdout"]), c["stdout"][-600:]


def test_demo_traces_validate():
    out = demo_once()["out"]
    traces = [f for f in files_under(out) if f.endswith(".json")]
    assert len(traces) >= 8, traces
    for f in traces:
        t = load_json(os.path.join(out, f))
        validate_trace(t)
        for img in t["images"]:
            assert os.path.exists(os.path.join(out, img)), f"{f} lists missing {img}"
    # the lesson's numbers, recomputed (not the notes' slips)
    t1 = load_json(os.path.join(out, "p1.trace.json"))
    qk = next(m for m in t1["maps"] if m["id"] == "lesson.qk")["heads"][0]
    assert qk["scores"] == [[4, 14]]
    w = np.exp(np.array([4, 14]) / np.sqrt(3)); w /= w.sum()
    assert np.allclose(qk["weights"][0], w, atol=1e-6)
    assert np.allclose(qk["output"][0], w @ np.array([[1, 2], [3, 4]]), atol=1e-5)
    t3 = load_json(os.path.join(out, "p3.trace.json"))
    causal = next(m for m in t3["maps"] if m["id"] == "lesson.causal3x3")["heads"][0]["weights"]
    assert np.allclose(causal[1][:2], [0.47502, 0.52498], atol=1e-4), causal[1]
    assert np.allclose(causal[2], [0.30061, 0.33222, 0.36717], atol=1e-4), causal[2]
    full = {m["id"]: m for m in t3["maps"]}
    assert full["fill.fully_masked.-inf"]["heads"][0]["weights"][0] == [0, 0, 0]
    for f in ("-10000", "-1e9"):
        assert np.allclose(full["fill.fully_masked." + f]["heads"][0]["weights"][0], [1 / 3] * 3, atol=1e-6)
        assert full["fill.causal." + f]["heads"][0]["weights"] == full["fill.causal.-inf"]["heads"][0]["weights"]
    # padding: sentence 2 of the batch has <pad> keys, masked
    tp = load_json(os.path.join(out, "p3-padding.trace.json"))
    enc = next(m for m in tp["maps"] if m["id"] == "encoder.0.self")
    pads = [j for j, k in enumerate(enc["keys"]) if k == "<pad>"]
    assert pads, enc["keys"]
    for row, wrow in zip(enc["mask"], enc["heads"][0]["weights"]):
        for j in pads:
            assert row[j] == 0 and wrow[j] == 0


def test_demo_sqrt_dk_matches_numpy():
    """The printed √d_k table against an independent numpy experiment (another RNG)."""
    rows = {}
    for line in demo_once()["stdout"].splitlines():
        m = re.match(r"\s*(16|64|256|512)\s+" + r"\s+".join([r"([-+0-9.e]+)"] * 6) + r"\s*$", line)
        if m:
            rows[int(m.group(1))] = [float(x) for x in m.groups()[1:]]
    assert sorted(rows) == [16, 64, 256, 512], demo_once()["stdout"][:800]
    rng = np.random.default_rng(12345)
    n, keys = 2000, 8
    for d, (std_raw, std_sc, max_raw, max_sc, jac_raw, jac_sc) in rows.items():
        q = rng.standard_normal((n, 1, d))
        k = rng.standard_normal((n, keys, d))
        s = (q * k).sum(-1)
        ref = {}
        for name, x in (("raw", s), ("scaled", s / np.sqrt(d))):
            p = np.exp(x - x.max(1, keepdims=True)); p /= p.sum(1, keepdims=True)
            J = p[:, :, None] * np.eye(keys) - p[:, :, None] * p[:, None, :]
            ref[name] = (x.std(), p.max(1).mean(), np.sqrt((J ** 2).sum((1, 2))).mean(),
                         p.max(1).std() / np.sqrt(n), np.sqrt((J ** 2).sum((1, 2))).std() / np.sqrt(n))
        # std of the scores: √d_k raw, 1 scaled (standard error of a std ≈ std/√(2·16000))
        assert abs(std_raw / np.sqrt(d) - 1) < 0.04 and abs(ref["raw"][0] / np.sqrt(d) - 1) < 0.04, (d, std_raw)
        assert abs(std_sc - 1) < 0.04, (d, std_sc)
        for name, mx, jac in (("raw", max_raw, jac_raw), ("scaled", max_sc, jac_sc)):
            _, rmx, rjac, se_mx, se_jac = ref[name]
            tol_mx, tol_jac = 5 * np.sqrt(2) * se_mx + 1e-3, 5 * np.sqrt(2) * se_jac + 1e-4
            assert abs(mx - rmx) < tol_mx, f"d_k={d} {name} max weight {mx} vs numpy {rmx} (tol {tol_mx})"
            assert abs(jac - rjac) < tol_jac, f"d_k={d} {name} Jacobian {jac} vs numpy {rjac} (tol {tol_jac})"
    # the lesson's claims, as numbers: unscaled gets peaked and flat, scaled does not
    assert rows[512][2] > 0.9 and rows[512][3] < 0.45
    assert rows[512][4] < rows[16][4] / 2 and abs(rows[512][5] - rows[16][5]) < 0.05


def test_demo_is_deterministic(tmp):
    c = demo_once()
    out2 = os.path.join(tmp, "again")
    run_ok("demo", "--model", c["model"], "--out", out2, "--quiet", timeout=120)
    a, b = files_under(c["out"]), files_under(out2)
    assert a == b, set(a) ^ set(b)
    for f in a:
        x = png_content(open(os.path.join(c["out"], f), "rb").read())   # the same pixels (helpers.png_content)
        y = png_content(open(os.path.join(out2, f), "rb").read())
        assert x == y, f"{f} differs between two runs"


def test_demo_bad_input(tmp):
    mp = make_model(tmp, snapshots=False)
    afile = os.path.join(tmp, "afile")
    open(afile, "w").write("x")
    cases = [
        (["demo", "--model", mp, "--out", afile], "afile"),
        (["demo", "--model", mp, "--frobnicate"], "--frobnicate"),
        (["demo", "--model", mp, "extra"], "extra"),
        (["demo", "--model", os.path.join(tmp, "nope.safetensors"), "--out", os.path.join(tmp, "o")], "nope"),
        (["demo", "--model"], "--model"),
    ]
    for args, word in cases:
        r = run_err(*args)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert len(lines) == 1 and lines[0].startswith("attnviz: error: "), (args, r.stderr)
        assert word in lines[0], (args, r.stderr)
    assert not os.path.exists(os.path.join(tmp, "o", "index.html"))


def test_demo_without_snapshots_skips_part9(tmp):
    mp = make_model(tmp, snapshots=False)
    out = os.path.join(tmp, "out")
    r = run_ok("demo", "--model", mp, "--out", out, "--quiet")
    assert "part 9 skipped" in r.stderr and "warning" in r.stderr, r.stderr
    html = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    assert page_images(html) == EXPECTED[:-1]
    assert 'id="p9"' in html and "skipped" in html
    assert r.stdout == "", "--quiet prints nothing on success"


def test_demo_help():
    r = run_ok("demo", "--help")
    assert "usage: attnviz demo" in r.stdout


def test_demo_shipped_model(tmp):
    from helpers import ATTNVIZ
    shipped = os.environ.get("ATTNVIZ_MODEL") or os.path.join(ROOT, "samples", "models", "attnviz-en-fr-vi.safetensors")
    # The shipped model is part of the repository: its absence is a failure.
    assert os.path.exists(shipped), f"no shipped model at {shipped}"
    out = os.path.join(tmp, "out")
    r = run_ok("demo", "--out", out, timeout=120)
    html = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    assert page_images(html) == EXPECTED + P10
    m = re.search(r"\((\d+\.\d+) s\)", r.stdout)
    assert m and float(m.group(1)) < 15, r.stdout[-300:]
    # part 10 quotes what eval --ablation measured (the checkpoints' metadata), not prose
    from helpers import read_safetensors
    text = re.sub(r"<[^>]+>", "", html)
    for path, key in [(shipped, ("encoder.2.self", 0)), (UNTAUGHT, None)]:
        ab = json.loads(read_safetensors(path)[0]["eval_ablation"])
        row = ab["ablation"][0] if key is None else next(
            x for x in ab["ablation"] if (x["map"], x["head"]) == key)
        fr0 = ab["baseline"]["pronoun_accuracy_by_language"]["fr"]
        fr1 = row["pronoun_accuracy_by_language"]["fr"]
        want = ("from %.2f to %.2f" if key else "%.2f → %.2f") % (fr0, fr1)
        assert want in text, (want, path)
        if key is None:
            assert "%s head %d" % (row["map"], row["head"]) in text
            vi0 = ab["baseline"]["pronoun_accuracy_by_language"]["vi"]
            vi1 = row["pronoun_accuracy_by_language"]["vi"]
            assert "%.2f → %.2f in Vietnamese" % (vi0, vi1) in text, (vi0, vi1)
    assert "Jain &amp; Wallace 2019" in html and "Wiegreffe &amp; Pinter 2019" in html


def test_demo_part10_needs_the_taught_model(tmp):
    out = os.path.join(tmp, "out")
    r = run_ok("demo", "--model", "untaught", "--out", out, "--quiet", timeout=120)
    assert "part 10 skipped" in r.stderr, r.stderr
    html = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    assert not [i for i in page_images(html) if i.startswith("p10-")]


# ------------------------------------------------------------------ the page in Chromium

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--enable-logging=stderr", "--v=0", "--virtual-time-budget=10000"]

# Added only to a test copy of the page: after the load event, writes how many
# images there are and which did not load into the DOM, which --dump-dom prints.
PROBE = """<script>
window.addEventListener('load', function () {
  var imgs = document.images, bad = [];
  for (var i = 0; i < imgs.length; i++)
    if (!imgs[i].complete || imgs[i].naturalWidth === 0) bad.push(imgs[i].getAttribute('src'));
  var r = document.createElement('pre');
  r.textContent = 'ATTNVIZ-PROBE images=' + imgs.length + ' broken=[' + bad.join(',') + ']';
  document.body.appendChild(r);
});
</script>"""


def chromium():
    for name in ("chromium", "chromium-browser"):
        p = shutil.which(name)
        if p:
            return p
    return None


def load_page(browser, path):
    """Returns (dom, console lines) of path loaded in headless Chromium."""
    prof = tempfile.mkdtemp(prefix="attnviz-chromium-")
    try:
        r = subprocess.run([browser, *CHROMIUM_FLAGS, "--user-data-dir=" + prof, "--dump-dom",
                            "file://" + os.path.abspath(path)], capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(prof, ignore_errors=True)
    console = [l for l in r.stderr.splitlines() if ":CONSOLE" in l]
    return r.stdout, console


def probe(browser, folder):
    """Loads a probed copy of folder/index.html; returns (n_images, broken list, console)."""
    html = open(os.path.join(folder, "index.html"), encoding="utf-8").read()
    html = html.replace('loading="lazy"', 'loading="eager"').replace("</body>", PROBE + "</body>")
    path = os.path.join(folder, "_probe.html")
    open(path, "w", encoding="utf-8").write(html)
    dom, console = load_page(browser, path)
    os.remove(path)
    m = re.search(r"ATTNVIZ-PROBE images=(\d+) broken=\[([^\]]*)\]", dom)
    assert m, "the probe did not run: " + dom[-500:]
    return int(m.group(1)), [b for b in m.group(2).split(",") if b], console


def test_demo_page_in_chromium(tmp):
    browser = chromium()
    if not browser:
        # `make deps` installs it; only a developer without it may skip, never CI.
        assert not os.environ.get("CI"), "chromium is not installed (make deps installs it)"
        print("skipped: chromium is not installed (apt-get install chromium)")
        return
    out = demo_once()["out"]
    # The page itself, untouched: it loads and logs nothing to the console.
    dom, console = load_page(browser, os.path.join(out, "index.html"))
    assert "<figure>" in dom, dom[:500]
    assert console == [], "console messages:\n" + "\n".join(console)
    # Every image loads (probe copy).
    n, broken, console = probe(browser, out)
    assert n == len(EXPECTED) and broken == [], (n, broken)
    assert console == [], console
    # The check really fails on a broken copy: one picture missing.
    copy = os.path.join(tmp, "broken")
    shutil.copytree(out, copy)
    os.remove(os.path.join(copy, "p6-coref-tired-lines.png"))
    n, broken, _ = probe(browser, copy)
    assert broken == ["p6-coref-tired-lines.png"], broken
