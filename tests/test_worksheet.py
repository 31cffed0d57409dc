"""`attnviz worksheet`: the answers equal NumPy's attention (float64) computed from
the json's own q, k, v and mask, and `attnviz steps` on the same matrices; the
same seed gives the same files; the A4 page and the pictures are there; bad
options get one line and a non-zero exit, with nothing written."""
import hashlib, json, math, os
import numpy as np
from helpers import run, run_ok, run_err, load_json, files_under, png_content

def sheet(tmp, *args, name="ws"):
    out = os.path.join(tmp, name)
    run_ok("worksheet", *args, "--out", out)
    return out, load_json(os.path.join(out, "worksheet.json"))

def numpy_attention(q, k, v, mask):
    q, k, v = (np.array(x, dtype=np.float64) for x in (q, k, v))
    scores = q @ k.T
    scaled = scores / math.sqrt(q.shape[1])
    masked = scaled.copy()
    if mask is not None:
        masked[np.array(mask) == 0] = -np.inf
    e = np.exp(masked - masked.max(axis=1, keepdims=True))
    w = e / e.sum(axis=1, keepdims=True)
    return scores, scaled, w, w @ v

def close(name, got, want, tol=1e-6):
    got, want = np.array(got, dtype=np.float64), np.asarray(want)
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    err = np.abs(got - want).max()
    assert err <= tol, f"{name}: max difference {err:.3g} > {tol}\ngot  {got}\nwant {want}"

def test_worksheet_answers_equal_numpy(tmp):
    for args in [(), ("--mask", "causal"), ("--size", "8", "--seed", "99"), ("--size", "1"),
                 ("--size", "5", "--mask", "causal", "--lang", "vi", "--seed", "4294967295")]:
        _, ws = sheet(tmp, *args)
        assert len(ws["exercises"]) == 2, args
        for ex in ws["exercises"]:
            n = len(ex["q"])
            assert len(ex["k"]) == n and len(ex["v"]) == n and len(ex["q"][0]) == ex["d_k"] == 4
            assert all(x == int(x) and -1 <= x <= 1 for r in ex["q"] + ex["k"] for x in r), "Q, K: integers -1..1"
            assert all(x == int(x) and 0 <= x <= 3 for r in ex["v"] for x in r), "V: integers 0..3"
            assert (ex["mask"] is not None) == ("causal" in args)
            scores, scaled, w, out = numpy_attention(ex["q"], ex["k"], ex["v"], ex["mask"])
            a = ex["answers"]
            close("scores", a["scores"], scores, 0)
            close("scaled", a["scaled"], scaled, 0)
            close("weights", a["weights"], w)
            close("output", a["output"], out, 1e-5)

def test_worksheet_agrees_with_steps(tmp):
    _, ws = sheet(tmp, "--size", "4", "--mask", "causal", "--seed", "7")
    for i, ex in enumerate(ws["exercises"]):
        out = os.path.join(tmp, f"steps{i}")
        run_ok("steps", "--q", json.dumps(ex["q"]), "--k", json.dumps(ex["k"]), "--v", json.dumps(ex["v"]),
               "--mask", "causal", "--out", out, "--quiet")
        h = load_json(os.path.join(out, "trace.json"))["maps"][0]["heads"][0]
        for step in ("scores", "scaled", "weights", "output"):
            assert h[step] == ex["answers"][step], f"exercise {i + 1}: {step} differs from attnviz steps"

def test_worksheet_files_and_page(tmp):
    out, ws = sheet(tmp, "--size", "3", "--mask", "causal")
    assert files_under(out) == [".attnviz-files", "key.png", "worksheet.html", "worksheet.json", "worksheet.png"]
    for png in ("worksheet.png", "key.png"):
        with open(os.path.join(out, png), "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    html = open(os.path.join(out, "worksheet.html"), encoding="utf-8").read()
    assert "@page{size:A4" in html and "break-before:page" in html
    sheet_part, key_part = html.split('<section class="key">')
    assert 'class="blank"></td>' in sheet_part, "the worksheet's answer cells are empty boxes"
    assert 'class="blank"' not in key_part, "the key fills every box"
    # the key shows the weights to 2 decimals: the first exercise's last row
    last = ws["exercises"][0]["answers"]["weights"][-1]
    for x in last:
        assert f"<td>{x:.2f}</td>" in key_part, (x, "not in the key")
    assert "<td></td>" not in sheet_part.replace('class="blank"', "")

def test_worksheet_vietnamese_and_deterministic(tmp):
    a, _ = sheet(tmp, "--lang", "vi", "--seed", "3", name="a")
    b, _ = sheet(tmp, "--lang", "vi", "--seed", "3", name="b")
    c, _ = sheet(tmp, "--lang", "vi", "--seed", "4", name="c")
    digest = lambda d, f: hashlib.sha256(png_content(open(os.path.join(d, f), "rb").read())).hexdigest()
    for f in ("worksheet.png", "key.png", "worksheet.html", "worksheet.json"):
        assert digest(a, f) == digest(b, f), f"{f} differs for the same seed"
    assert digest(a, "worksheet.json") != digest(c, "worksheet.json"), "another seed, other exercises"
    html = open(os.path.join(a, "worksheet.html"), encoding="utf-8").read()
    assert '<html lang="vi">' in html and "Tính attention bằng tay" in html and "đáp án" in html
    assert "Exercise" not in html

def test_worksheet_bad_options(tmp):
    out = os.path.join(tmp, "bad")
    for args, words in [(("--size", "0"), "1..8"), (("--size", "9"), "1..8"), (("--size", "x"), "--size"),
                        (("--lang", "fr"), "en or vi"), (("--mask", "padding"), "none or causal"),
                        (("--seed", "-1"), "--seed"), (("--frobnicate",), "unknown option"), (("--size",), "--size")]:
        r = run_err("worksheet", *args, "--out", out)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert len(lines) == 1 and words in lines[0], (args, r.stderr)
        assert not os.path.exists(out), f"{args}: something was written"


def test_worksheet_and_compare_read_options_like_every_command(tmp):
    for cmd, opt in [("worksheet", "--seed"), ("compare", "--model2")]:
        r = run_ok(cmd, "--help")
        assert "usage: attnviz " + cmd in r.stdout and run_ok(cmd, "-h").stdout == r.stdout
        r = run(cmd, "--frobnicate")
        assert r.returncode == 2 and r.stderr.strip() == \
            f"attnviz: error: unknown option '--frobnicate' for {cmd} (see attnviz {cmd} --help)", r.stderr
        r = run(cmd, opt)
        assert r.returncode == 2 and f"{opt} needs a value (see attnviz {cmd} --help)" in r.stderr, r.stderr
    assert run_ok("worksheet", "--size=2", "--seed=5", "--out=" + os.path.join(tmp, "eq"),
                  "--quiet").stdout == ""

def test_worksheet_says_why_step_3_is_missing(tmp):
    """Without a mask the steps read 1, 2, 4, 5, as in `steps` and the step strips;
    each exercise says step 3 is skipped (page and PNG), in English and Vietnamese,
    and a masked sheet has step 3 and no such line."""
    lines = {"en": "step 3 (mask) is skipped: no mask in this exercise",
             "vi": "bước 3 (mặt nạ) được bỏ qua: bài này không có mặt nạ"}
    steps = {"en": ["1. scores", "2. scaled", "4. weights", "5. output"],
             "vi": ["1. điểm", "2. chia tỉ lệ", "4. trọng số", "5. đầu ra"]}
    widths = {}
    for lang in ("en", "vi"):
        out, ws = sheet(tmp, "--lang", lang, "--seed", "5", name=lang)
        html = open(os.path.join(out, "worksheet.html"), encoding="utf-8").read()
        n = len(ws["exercises"])
        assert html.count(lines[lang]) == 2 * n, (lang, html.count(lines[lang]))   # sheet and key, each exercise
        # the line comes before the steps it explains
        first = html.index(lines[lang])
        assert first < html.index(steps[lang][0]), lang
        pos = [html.index(s) for s in steps[lang]]
        assert pos == sorted(pos), (lang, pos)
        assert "3. masked" not in html and "3. che" not in html
        widths[lang] = png_size(os.path.join(out, "worksheet.png"))[0]
    out, _ = sheet(tmp, "--seed", "5", "--mask", "causal", name="masked")
    html = open(os.path.join(out, "worksheet.html"), encoding="utf-8").read()
    assert "3. masked" in html and lines["en"] not in html
    # the PNG gets the same line under each heading (render_sheet draws a heading's
    # second line: test_slide_fit.c's slide_sheet_heading_note), so it is wide enough
    # for it: about 620 px of text at 15 px
    assert widths["en"] >= 660 and widths["vi"] >= 660, widths


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
