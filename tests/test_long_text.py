"""Long texts (issue 42; src/pipeline/longtext.h): past --long-from tokens (256 by default)
run hands each layer's maps to trace.bin as the forward pass makes them, pools them for the
pictures and the page, keeps the pronouns' rows whole for the links, and frees them.

Checked against independent truth: the streamed trace.bin against the whole trace written at
the end (the same bytes), the pooled maps on the page against NumPy pooling trace.bin's maps
by the documented rule, each head's summary against NumPy, the printed links against
trace.bin's rows, and the memory a streamed run takes against the whole maps' size."""
import json, os, re, subprocess, sys
import numpy as np
from helpers import ATTNVIZ, run_ok
import hf_fixtures as hf
import llama_ref as ref
from test_trace_bin import read_bin, view
from test_page import page_array

TEXT = "the animal did not cross the street because it was too tired and then it slept"


def gpt2(tmp, L=2, H=4, C=16, P=1024):
    d = os.path.join(tmp, f"g{L}x{H}")
    if not os.path.exists(d):
        hf.write_gpt2_dir(d, weights=hf.gpt2_weights(C=C, H=H, L=L, P=P), H=H)
    return d


def llama2c(tmp):
    """A llama2.c file with grouped-query attention and RoPE, and a byte tokenizer."""
    m, tok = os.path.join(tmp, "m.bin"), os.path.join(tmp, "tok.bin")
    ref.write_llama2c(m, V=300, P=96, L=2, H=4, Hkv=2)
    pieces = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [b"<0x%02X>" % b for b in range(256)] + [b"x%d" % i for i in range(41)]
    ref.write_tok(tok, pieces, [0.0] * len(pieces))
    return ["--model", m, "--tokenizer", tok]


def data_bytes(path):
    """trace.bin's data part (every matrix and mask as written) and its header."""
    header, start = read_bin(path)
    with open(path, "rb") as f:
        at = int.from_bytes(f.read(24)[16:24], "little")
        f.seek(start)
        return f.read(at - start), header


def test_streamed_trace_bin_holds_the_same_bytes_as_the_whole_trace(tmp):
    """At short lengths --long-from 1 streams every map; trace.bin's data is then the bytes
    the whole trace writes at the end (--long-from 0), bit for bit, f32 and f16, on GPT-2
    (learned positions, fused q|k|v) and a llama2.c file (RoPE, 2 key/value heads)."""
    for name, model, text in (("gpt2", ["--model", gpt2(tmp)], TEXT), ("llama2c", llama2c(tmp), "ab cd ef gh it ij kl")):
        for prec in ("f32", "f16"):
            outs = {}
            for mode in ("0", "1"):
                out = os.path.join(tmp, f"{name}-{prec}-{mode}")
                r = run_ok("run", *model, "--out", out, "--long-from", mode, "--trace-format", "bin",
                           "--trace-precision", prec, "--no-pictures", text)
                assert ("long text" in r.stdout) == (mode == "1"), r.stdout
                outs[mode] = data_bytes(os.path.join(out, "trace.bin"))
            (whole, hw), (streamed, hs) = outs["0"], outs["1"]
            assert len(whole) > 1000 and whole == streamed, (name, prec, len(whole), len(streamed))
            assert hw["maps"] == hs["maps"], (name, prec)
            assert "head_summary" in hs and "head_summary" not in hw


def pool(w, block):
    """The documented rule: a block's weight on another is the sum over the other's tokens,
    averaged over its own tokens (tests' own NumPy, from docs/trace-format.md)."""
    T = w.shape[0]
    n = (T + block - 1) // block
    out = np.zeros((n, n), np.float64)
    for Q in range(n):
        rows = w[Q * block:(Q + 1) * block].astype(np.float64)
        for K in range(n):
            out[Q, K] = rows[:, K * block:(K + 1) * block].sum(axis=1).mean()
    return out


def page_maps(path):
    html = open(path, encoding="utf-8").read()
    sets = [json.loads(b) for b in re.findall(
        r'<script type="application/json" class="attnviz-data" id="attnviz-data-\d+">(.*?)</script>', html, re.S)]
    maps = {}
    for d in sets:
        for m in d.get("maps", []):
            for h, hd in enumerate(m["heads"]):
                maps[(m["id"], h)] = (page_array(hd["weights"]), m)
    return maps


def test_long_text_pools_pictures_and_page_by_the_rule_and_sums_up_each_head(tmp):
    d = gpt2(tmp, L=3, H=4)
    text = " ".join([TEXT] * 20)        # 340 tokens: blocks of 3
    out = os.path.join(tmp, "o")
    r = run_ok("run", "--model", d, "--out", out, "--max-pictures", "2", text, timeout=300)
    m = re.search(r"long text \((\d+) tokens\).*blocks of (\d+) tokens", r.stdout)
    assert m, r.stdout
    T, block = int(m.group(1)), int(m.group(2))
    assert block == -(-T // 128) and T > 256, (T, block)
    files = set(os.listdir(out))
    assert {"trace.bin", "index.html", "grid.decoder.masked_self.png", "decoder.0.masked_self.h0.png",
            "head_summary.png"} <= files, files
    assert "trace.json" not in files
    header, start = read_bin(os.path.join(out, "trace.bin"))
    assert len(header["maps"]) == 3 and len(header["target_tokens"]) == T
    assert all(img in files for img in header["images"]) and "grid.decoder.masked_self.png" in header["images"]
    page = page_maps(os.path.join(out, "index.html"))
    summary = {(s["map"], s["head"]): s for s in header["head_summary"]["heads"]}
    worst = 0.0
    for mb in header["maps"]:
        for h, hd in enumerate(mb["heads"]):
            w = view(os.path.join(out, "trace.bin"), start, hd["weights"]).astype(np.float64)
            assert w.shape == (T, T) and hd["weights"]["layout"] == "lower"
            got, pm = page[(mb["id"], h)]
            want = pool(w, block)
            assert got.shape == want.shape and pm["queries"][1].startswith(f"{block}-{2 * block - 1} ")
            worst = max(worst, np.abs(got - want).max())
            assert np.allclose(got.sum(axis=1), 1, atol=1e-4)                  # a pooled row is still a distribution
            i = np.arange(T)[:, None]
            j = np.arange(T)[None, :]
            s = summary[(mb["id"], h)]
            ent = -(np.where(w > 0, w * np.log(np.where(w > 0, w, 1)), 0)).sum(axis=1).mean()
            assert abs(s["distance"] - (w * np.abs(i - j)).sum(axis=1).mean()) <= 1e-3 * max(1, s["distance"])
            assert abs(s["entropy"] - ent) <= 1e-3 * max(1, ent), (s, ent)
            assert abs(s["sink"] - w[:, 0].mean()) <= 1e-4
    assert worst < 1e-5, worst


def test_long_text_links_read_the_kept_rows(tmp):
    """A pronoun past 256 tokens: the printed link is trace.bin's row, weight and all."""
    d = gpt2(tmp, L=2, H=4)
    text = " ".join(["the farmer carried the box home"] * 50) + " because it was heavy"
    out = os.path.join(tmp, "o")
    r = run_ok("run", "--model", d, "--out", out, "--no-pictures", text, timeout=300)
    header, start = read_bin(os.path.join(out, "trace.bin"))
    lines = re.findall(r"  it \(position (\d+)\) → (\S+) \(position (\d+)\): (\S+) head (\d+), weight ([0-9.]+)", r.stdout)
    assert lines, r.stdout
    q, word, k, mid, h, weight = lines[0]
    q, k, h = int(q), int(k), int(h)
    assert q > 256 and header["target_tokens"][q] == "it" and header["target_tokens"][k] == word
    mb = next(m for m in header["maps"] if m["id"] == mid)
    w = view(os.path.join(out, "trace.bin"), start, mb["heads"][h]["weights"])
    assert f"{w[q, k]:.2f}" == weight, (w[q, k], weight)
    assert r.stdout.count(" → ") >= 1 and "(1981 characters)" not in r.stdout
    # with pictures, the per-head heatmaps are those of the links' heads (the grid shows every head)
    pics = os.path.join(tmp, "p")
    r2 = run_ok("run", "--model", d, "--out", pics, text, timeout=300)
    assert "heads not drawn as heatmaps: a long text draws its links' heads" in r2.stdout, r2.stdout
    named = set(re.findall(r": (decoder\.\d+\.masked_self) head (\d+), weight", r2.stdout))
    drawn = {(m.group(1), m.group(2)) for m in (re.fullmatch(r"(decoder\.\d+\.masked_self)\.h(\d+)\.png", f)
                                               for f in os.listdir(pics)) if m}
    assert drawn and drawn <= named, (drawn, named)
    assert "grid.decoder.masked_self.png" in os.listdir(pics)
    assert re.search(r"… \(\d+ characters\)\n", r.stdout), "a long text is echoed cut, with its length"


def peak_kb(*args):
    """The peak resident memory (KB) of one attnviz run, measured in a process of its own."""
    code = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True); "
            "assert r.returncode == 0, r.stderr; print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    r = subprocess.run([sys.executable, "-c", code, ATTNVIZ, *map(str, args)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    return int(r.stdout)


def test_streaming_bounds_memory_by_one_layer(tmp):
    """12 layers × 4 heads over 1,000 tokens: 192 MB of maps kept whole; streamed, about one
    layer's 16 MB.  The streamed run's peak stays under a third of the whole run's."""
    from helpers import skip
    with open(ATTNVIZ, "rb") as f:
        if b"__asan_init" in f.read():
            skip("AddressSanitizer's shadow memory swells every process's peak: memory is measured without it")
    d = gpt2(tmp, L=12, H=4, C=16)
    text = " ".join(["the cat"] * 500)
    whole = peak_kb("run", "--model", d, "--out", os.path.join(tmp, "w"), "--no-pictures", "--trace", "none",
                    "--long-from", "0", text)
    streamed = peak_kb("run", "--model", d, "--out", os.path.join(tmp, "s"), "--no-pictures", "--trace", "none", text)
    assert whole > 192 * 1024, whole
    assert streamed < whole / 3, (streamed, whole)


def test_the_numpy_recipe_of_trace_format_reads_a_long_text(tmp):
    """docs/trace-format.md's Python recipe, run as printed on a streamed trace.bin, gives
    the first map's first head as the test's own reader does."""
    doc = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "trace-format.md"),
               encoding="utf-8").read()
    recipe = doc.split("## The binary trace")[1].split("```python\n")[1].split("```")[0]
    d = gpt2(tmp)
    out = os.path.join(tmp, "o")
    run_ok("run", "--model", d, "--out", out, "--no-pictures", " ".join([TEXT] * 20), timeout=300)
    here = os.getcwd()
    os.chdir(out)
    try:
        env = {}
        exec(recipe, env)
    finally:
        os.chdir(here)
    header, start = read_bin(os.path.join(out, "trace.bin"))
    want = view(os.path.join(out, "trace.bin"), start, header["maps"][0]["heads"][0]["weights"])
    assert env["weights"].shape == want.shape and np.array_equal(np.asarray(env["weights"]), want)


HOVER = """(q => { const t = document.getElementById('av-passage-text');
  t.querySelector('[data-i="' + q + '"]').dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
  return { query: +t.getAttribute('data-query'), ms: +t.getAttribute('data-ms'),
           lit: [...t.querySelectorAll('.av-tok[data-w]')].map(s => [+s.getAttribute('data-i'), s.getAttribute('data-w'),
                                                                      s.style.background]),
           readout: document.getElementById('av-passage-readout').textContent }; })"""


def test_the_page_of_a_long_text_opens_on_its_passage_and_hovering_draws_links(tmp):
    """1,200 tokens through 12 layers: the page opens (under 3 s) on the Passage tab at the
    first pronoun; pointing at a token colours the 16 keys its row of the chosen head looks
    at most, which are trace.bin's 16 largest weights of that row, in the PNGs' colours."""
    from test_page import browser, check_in_browser
    browser()
    d = gpt2(tmp, L=12, H=4, C=16, P=1300)
    words = ("the farmer carried the heavy box home because it was raining and the road was long " * 80).split()
    out = os.path.join(tmp, "o")
    r = run_ok("run", "--model", d, "--out", out, "--no-pictures", " ".join(words[:1190]), timeout=600)
    m = re.search(r"long text \((\d+) tokens\)", r.stdout)
    assert m and int(m.group(1)) > 1000, r.stdout
    header, start = read_bin(os.path.join(out, "trace.bin"))
    link = re.search(r"  it \(position (\d+)\) → \S+ \(position \d+\): (\S+) head (\d+)", r.stdout)
    q0, mid, head = int(link.group(1)), link.group(2), int(link.group(3))
    q = max(i for i, t in enumerate(header["target_tokens"]) if t == "it")        # the last "it", far in
    res = check_in_browser(tmp, label="long", page=os.path.join(out, "index.html"), probe=[
        {"eval": "attnvizPage.state.tab"},
        {"eval": "+document.getElementById('av-passage-text').getAttribute('data-query')"},
        {"eval": HOVER + "(%d)" % q}])
    tab, opened, hover = res["probe"]
    assert tab == "passage" and opened == q0, (tab, opened, q0)
    assert res["open_ms"] < 3000, res["open_ms"]
    assert hover["query"] == q and hover["ms"] < 50, hover
    mb = next(x for x in header["maps"] if x["id"] == mid)
    row = view(os.path.join(out, "trace.bin"), start, mb["heads"][head]["weights"])[q, :q + 1]
    want = sorted(np.argsort(-row, kind="stable")[:16].tolist())
    assert sorted(i for i, _, _ in hover["lit"]) == want, (hover["lit"], want)
    for i, w, bg in hover["lit"]:
        assert w == ("<.01" if row[i] < 0.005 else f"{row[i]:.2f}".lstrip("0")), (i, w, row[i])
    assert f"in {mid} head {head} looks most at" in hover["readout"] and "16 strongest of" in hover["readout"]


def test_window_draws_part_of_a_long_text_whole(tmp):
    """--window FROM:TO: the page's maps are trace.bin's square of the window, the pictures
    say so; bad windows get one line and leave --out untouched."""
    from helpers import run_err
    d = gpt2(tmp, L=2, H=4)
    text = " ".join([TEXT] * 20)
    out = os.path.join(tmp, "o")
    r = run_ok("run", "--model", d, "--out", out, "--max-pictures", "1", "--window", "100:160", text, timeout=300)
    assert "the pictures and the page draw tokens 100-160 whole (--window)" in r.stdout, r.stdout
    header, start = read_bin(os.path.join(out, "trace.bin"))
    page = page_maps(os.path.join(out, "index.html"))
    for mb in header["maps"]:
        for h, hd in enumerate(mb["heads"]):
            full = view(os.path.join(out, "trace.bin"), start, hd["weights"])
            got, pm = page[(mb["id"], h)]
            assert np.array_equal(got, full[100:161, 100:161]), (mb["id"], h)
            assert pm["queries"] == header["target_tokens"][100:161]
    html = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    T = len(header["target_tokens"])
    assert f"tokens 100-160 of {T} at full resolution (--window)" in html
    for bad, said in (("5:3", "FROM:TO"), ("a:b", "FROM:TO"), (f"0:{T}", f"outside the text's {T} tokens"),
                      ("0:600", "outside"), ("10:600", "outside")):
        e = run_err("run", "--model", d, "--out", os.path.join(tmp, "bad"), "--window", bad, text)
        assert said in e.stderr and len(e.stderr.strip().splitlines()) == 1, e.stderr
        assert not os.path.exists(os.path.join(tmp, "bad"))
    e = run_err("run", "--out", os.path.join(tmp, "bad"), "--window", "0:3", "the cat sat on the mat .")
    assert "translator" in e.stderr, e.stderr


def test_long_text_links_count_words(tmp):
    """A subword model's long text: the links are in words, as a short text's (a word's
    weight on another is the sum over the other's pieces); the printed weight is the sum of
    trace.bin's row of the pronoun over the pieces of the word it names."""
    d = gpt2(tmp, L=2, H=4)
    text = " ".join(["The animal didn't cross the street because it was too tired ."] * 25)
    out = os.path.join(tmp, "o")
    r = run_ok("run", "--model", d, "--out", out, "--no-pictures", text, timeout=300)
    assert "links in words" in r.stdout and "long text" in r.stdout, r.stdout
    header, start = read_bin(os.path.join(out, "trace.bin"))
    toks = header["target_tokens"]
    word_of, first = [], []            # the test's own grouping: "'t" continues "didn"
    for i, t in enumerate(toks):
        if not (t == "'t" and i > 0 and toks[i - 1] == "didn"):
            first.append(i)
        word_of.append(len(first) - 1)
    found = re.findall(r"  it \(position (\d+)\) → (\S+) \(position (\d+)\): (\S+) head (\d+), weight ([0-9.]+)", r.stdout)
    assert found, r.stdout
    for q, word, k, mid, h, weight in found:                           # kept rows of a streamed text
        q, k, h = int(q), int(k), int(h)
        p = first[q]
        assert toks[p] == "it" and len(toks) > 256, (p, toks[p])
        mb = next(x for x in header["maps"] if x["id"] == mid)
        row = view(os.path.join(out, "trace.bin"), start, mb["heads"][h]["weights"])[p]
        got = sum(float(row[j]) for j in range(len(toks)) if word_of[j] == k)
        assert f"{got:.2f}" == weight, (got, weight, word)
