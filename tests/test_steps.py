"""`attnviz steps` end to end: the lesson's examples, agreement with an independent
numpy (float64) reference and PyTorch, the trace schema, and bad input."""
import json, math, os
import numpy as np
from helpers import run, run_ok, run_err, load_json, validate_trace, files_under, png_content

def steps(tmp, *args):
    out = os.path.join(tmp, "out")
    r = run_ok("steps", *args, "--out", out)
    trace = load_json(os.path.join(out, "trace.json"))
    validate_trace(trace)
    for img in trace["images"]:
        assert os.path.getsize(os.path.join(out, img)) > 0, img
    return r, trace, out

def mat(x):
    return json.dumps(np.asarray(x).tolist())

def reference(Q, K, V, mask, fill, scale=True):
    """Independent float64 attention.  fill=None means -inf; fully masked rows are zeros."""
    scores = Q @ K.T
    scaled = scores / math.sqrt(Q.shape[1]) if scale else scores.copy()
    masked = scaled.copy()
    if mask is not None:
        masked[mask == 0] = -np.inf if fill is None else fill
    w = np.zeros_like(masked)
    for i, row in enumerate(masked):
        if np.all(np.isneginf(row)):
            continue
        e = np.exp(row - row.max())
        w[i] = e / e.sum()
    return scores, scaled, masked, w, w @ V

def as_array(rows):
    return np.array([[(-np.inf if x is None else x) for x in r] for r in rows], dtype=np.float64)

def assert_rel(name, got, want, tol=1e-5):
    finite = np.isfinite(want)
    assert np.array_equal(np.isfinite(got), finite), f"{name}: -inf cells differ"
    scale = max(np.abs(want[finite]).max(initial=0), 1e-30)
    err = np.abs(got[finite] - want[finite]).max(initial=0) / scale
    assert err <= tol, f"{name}: relative error {err:.3g} > {tol}\ngot  {got}\nwant {want}"

def test_lesson_scores_4_14(tmp):
    r, trace, out = steps(tmp, "--q", "[[1,2,3]]", "--k", "[[2,1,0],[1,2,3]]")
    h = trace["maps"][0]["heads"][0]
    assert h["scores"] == [[4, 14]]
    assert abs(h["scaled"][0][0] - 4 / math.sqrt(3)) < 1e-6
    assert abs(h["weights"][0][0] - 1 / (1 + math.exp(10 / math.sqrt(3)))) < 1e-7
    lines = r.stdout.splitlines()
    i = next(n for n, l in enumerate(lines) if "scores = Q·Kᵀ" in l)
    assert lines[i + 2].split() == ["q0", "4", "14"], lines[i:i + 3]
    assert set(files_under(out)) - {".attnviz-files"} == {"trace.json", "steps-1-scores.png", "steps-2-scaled.png",
                                     "steps-4-weights.png", "steps-strip.png"}

def test_lesson_causal_3x3(tmp):
    r, trace, out = steps(tmp, "--scores", "[[0.1,0.2,0.3],[0.4,0.5,0.6],[0.7,0.8,0.9]]",
                          "--mask", "causal", "--tokens", "I,am,happy")
    m = trace["maps"][0]
    w = np.array(m["heads"][0]["weights"])
    e = np.exp([0.7, 0.8, 0.9])
    want = np.array([[1, 0, 0], [1 / (1 + math.e ** 0.1), 1 - 1 / (1 + math.e ** 0.1), 0], e / e.sum()])
    assert np.abs(w - want).max() < 1e-6, w
    assert m["mask"] == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    assert m["mask_fill"] == "-inf"
    assert m["heads"][0]["masked"][0][1] is None
    assert m["queries"] == ["I", "am", "happy"]
    assert "-inf" in r.stdout
    assert "steps-3-masked.png" in trace["images"]

def test_reference_no_mask(tmp):
    rng = np.random.default_rng(1)
    Q, K, V = rng.normal(size=(5, 8)), rng.normal(size=(7, 8)), rng.normal(size=(7, 3))
    check_against_reference(tmp, Q, K, V, None, None)

def test_reference_causal_minus_10000(tmp):
    rng = np.random.default_rng(2)
    Q, K, V = (rng.normal(size=(6, 16)) for _ in range(3))
    mask = np.tril(np.ones((6, 6), dtype=int))
    check_against_reference(tmp, Q, K, V, "causal", -10000.0, mask)

def test_reference_causal_minus_inf(tmp):
    rng = np.random.default_rng(3)
    Q, K, V = (rng.normal(size=(6, 4)) * 3 for _ in range(3))
    mask = np.tril(np.ones((6, 6), dtype=int))
    check_against_reference(tmp, Q, K, V, "causal", None, mask)

def test_reference_padding_minus_1e9(tmp):
    rng = np.random.default_rng(4)
    Q, K, V = rng.normal(size=(4, 8)), rng.normal(size=(6, 8)), rng.normal(size=(6, 5))
    mask = np.ones((4, 6), dtype=int)
    mask[:, 4:] = 0                                  # the last two keys are <pad>
    check_against_reference(tmp, Q, K, V, mat(mask), -1e9, mask)

def check_against_reference(tmp, Q, K, V, mask_arg, fill, mask=None):
    Q, K, V = (np.asarray(x, dtype=np.float32).astype(np.float64) for x in (Q, K, V))
    args = ["--q", mat(Q), "--k", mat(K), "--v", mat(V)]
    if mask_arg:
        args += ["--mask", mask_arg]
    if fill is not None:
        args += ["--mask-fill", repr(fill)]
    _, trace, _ = steps(tmp, *args)
    h = trace["maps"][0]["heads"][0]
    ref = reference(Q, K, V, mask, fill)
    for name, want in zip(["scores", "scaled", "masked", "weights", "output"], ref):
        if name == "masked" and mask is None:
            continue
        assert_rel(name, as_array(h[name]), want)
    w = np.array(h["weights"])
    assert np.abs(w.sum(axis=1) - 1).max() < 1e-6
    if mask is not None:
        assert np.all(w[mask == 0] == 0) or fill is not None
    # A second, independent implementation: PyTorch (Debian's python3-torch).
    try:
        import torch
    except ImportError:
        return
    q, k, v = (torch.tensor(x, dtype=torch.float64) for x in (Q, K, V))
    s = q @ k.T / math.sqrt(Q.shape[1])
    if mask is not None:
        s = s.masked_fill(torch.tensor(mask) == 0, float("-inf") if fill is None else fill)
    tw = torch.softmax(s, dim=-1)
    assert_rel("weights vs torch", w, tw.numpy())
    assert_rel("output vs torch", as_array(h["output"]), (tw @ v).numpy())

def test_no_scale_shows_bigger_scores(tmp):
    _, trace, _ = steps(tmp, "--q", "[[1,2,3]]", "--k", "[[2,1,0],[1,2,3]]", "--no-scale")
    h = trace["maps"][0]["heads"][0]
    assert h["scaled"] == [[4, 14]]
    assert trace["maps"][0]["scaled"] is False
    assert abs(h["weights"][0][0] - 1 / (1 + math.exp(10))) < 1e-9

def test_fully_masked_row_defined(tmp):
    r = run("steps", "--scores", "[[1,2],[3,4]]", "--mask", "[[1,1],[0,0]]", "--out", os.path.join(tmp, "o"))
    assert r.returncode == 0, r.stderr
    assert "every key masked" in r.stderr
    trace = load_json(os.path.join(tmp, "o", "trace.json"))
    validate_trace(trace)
    assert trace["maps"][0]["heads"][0]["weights"][1] == [0, 0]
    assert "nan" not in r.stdout.lower()

def test_utf8_tokens(tmp):
    _, trace, _ = steps(tmp, "--scores", "[[1,0,0],[0,1,0],[0,0,1]]", "--tokens", "tôi,đi,học")
    assert trace["maps"][0]["keys"] == ["tôi", "đi", "học"]

def test_same_input_same_bytes(tmp):
    a = os.path.join(tmp, "a"); b = os.path.join(tmp, "b")
    for d in (a, b):
        run_ok("steps", "--q", "[[1,2,3]]", "--k", "[[2,1,0],[1,2,3]]", "--v", "[[1,0],[0,1]]", "--out", d)
    for f in files_under(a):   # PNGs by their chunks and pixels (helpers.png_content)
        assert png_content(open(os.path.join(a, f), "rb").read()) == \
            png_content(open(os.path.join(b, f), "rb").read()), f

def test_file_inputs(tmp):
    p = os.path.join(tmp, "q.json")
    open(p, "w").write("[[1, 2, 3]]\n")
    _, trace, _ = steps(tmp, "--q", p, "--k", "[[2,1,0],[1,2,3]]")
    assert trace["maps"][0]["heads"][0]["scores"] == [[4, 14]]

BAD = [
    (["--q", "[[1,2", "--k", "[[1,2]]"], "not valid JSON"),
    (["--q", "[[1,2],[3]]", "--k", "[[1,2]]"], "same length"),
    (["--q", "[[1,2,3]]", "--k", "[[1,2]]"], "same width"),
    (["--q", "[[1,2]]", "--k", "[[1,2]]", "--v", "[[1],[2]]"], "one row per key"),
    (["--q", "[[1,\"a\"]]", "--k", "[[1,2]]"], "not a number"),
    (["--q", "[[1e39, 1]]", "--k", "[[1,2]]"], "too large"),
    (["--q", "[[1e999, 1]]", "--k", "[[1,2]]"], "too large"),
    (["--q", "[]", "--k", "[[1,2]]"], "empty"),
    (["--q", "[[]]", "--k", "[[1,2]]"], "empty"),
    (["--q", "", "--k", "[[1,2]]"], "empty"),
    (["--q", "{\"a\": 1}", "--k", "[[1,2]]"], "array of rows"),
    (["--scores", "[[1,2],[3,4]]", "--mask", "[[1,0]]"], "2×2"),
    (["--scores", "[[1,2],[3,4]]", "--mask", "[[1,0],[1,2]]"], "only 0"),
    (["--scores", "[[1,2],[3,4]]", "--mask", "sideways"], "not none, causal"),
    (["--scores", "[[1,2],[3,4]]", "--mask", "causal", "--mask-fill", "-lots"], "--mask-fill"),
    (["--scores", "[[1,2],[3,4]]", "--mask", "causal", "--mask-fill", "nan"], "--mask-fill"),
    (["--q", "/nonexistent/q.json", "--k", "[[1]]"], "cannot read"),
    (["--q", "[[1]]", "--k", "[[1]]", "--frobnicate"], "unknown option"),
    (["--scores", "[[1]]", "--q", "[[1]]"], "either --scores"),
    (["--q", "[[1]]"], "needs --q and --k"),
    (["--scores", "[[1,2]]", "--tokens", "a,b,c"], "3 labels"),
    (["--scores", "[[1,2]]", "--tokens", "a,\udcff"], "UTF-8"),
    (["--q", "[[1]]", "--k"], "needs a value"),
]

def test_bad_inputs(tmp):
    for i, (args, words) in enumerate(BAD):
        out = os.path.join(tmp, f"out{i}")
        try:
            r = run_err("steps", *args, "--out", out)
        except UnicodeEncodeError:
            # A lone surrogate cannot be passed through text mode: pass bytes.
            import subprocess
            from helpers import ATTNVIZ
            r = subprocess.run([ATTNVIZ, "steps", "--scores", "[[1,2]]", "--tokens", b"a,\xff",
                                "--out", out], capture_output=True, text=True)
            assert r.returncode > 0
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert len(lines) == 1, f"{args}: expected one line, got {r.stderr!r}"
        assert lines[0].startswith("attnviz: error: "), lines[0]
        assert words in lines[0], f"{args}: {lines[0]!r} lacks {words!r}"
        assert not os.path.exists(out), f"{args}: wrote {out}"

def test_binary_and_truncated_files(tmp):
    b = os.path.join(tmp, "bin.json"); open(b, "wb").write(b"\x89PNG\r\n\x1a\n\x00\x00\x01")
    t = os.path.join(tmp, "trunc.json"); open(t, "w").write("[[1, 2], [3,")
    d = os.path.join(tmp, "adir"); os.mkdir(d)
    for path, words in ((b, "binary"), (t, "not valid JSON"), (d, "folder")):
        out = os.path.join(tmp, "o")
        r = run_err("steps", "--q", path, "--k", "[[1,2]]", "--out", out)
        assert words in r.stderr, r.stderr
        assert not os.path.exists(out)

def test_unwritable_out(tmp):
    f = os.path.join(tmp, "afile"); open(f, "w").write("x")
    for out in (f, os.path.join(f, "sub")):
        r = run_err("steps", "--q", "[[1]]", "--k", "[[1]]", "--out", out)
        assert "--out" in r.stderr, r.stderr
    assert open(f).read() == "x"

def test_help_and_version():
    r = run_ok("steps", "--help")
    assert "--mask-fill" in r.stdout and "softmax" in r.stdout
    assert run_ok("--version").stdout.startswith("attnviz ")
    r = run_err("nosuchcommand")
    assert "unknown command" in r.stderr
