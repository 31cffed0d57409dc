"""`attnviz view` (src/pipeline/view.h, src/cli/view.c) and the notebook module
(src/python/attnviz.py): PyTorch's own attention weights — nn.MultiheadAttention
with need_weights=True, average_attn_weights=False, an encoder's self-attention
and a decoder's cross-attention — saved by the notebook module and as .npy, .npz (stored
and deflated), .safetensors and JSON: trace.json holds exactly PyTorch's numbers
(within 1e-6), the page embeds them and passes the browser checks of the other
pages; each bad input gets one line, a non-zero exit and leaves --out as it was."""
import json, os, subprocess, sys
import numpy as np
from helpers import ROOT, ATTNVIZ, run, run_ok, load_json, validate_trace, write_safetensors

SRC = "the animal didn't cross the street because it was tired".split()
TGT = "<2fr> l' animal n' a pas traversé".split()
MODULE = os.path.join(ROOT, "src", "python")
NOTEBOOK = os.path.join(ROOT, "samples", "notebooks", "attnviz_view.ipynb")


def torch_weights():
    """(encoder self (H, S, S), decoder cross (H, T, S)) from nn.MultiheadAttention, in float32."""
    import torch
    torch.manual_seed(7)
    E, H = 32, 4
    enc = torch.nn.MultiheadAttention(E, H, batch_first=True)
    cross = torch.nn.MultiheadAttention(E, H, batch_first=True)
    x, y = torch.randn(1, len(SRC), E) * 3, torch.randn(1, len(TGT), E) * 3
    with torch.no_grad():
        _, ws = enc(x, x, x, need_weights=True, average_attn_weights=False)
        _, wc = cross(y, x, x, need_weights=True, average_attn_weights=False)
    return ws[0].numpy(), wc[0].numpy()


def check_trace(out, want, kinds):
    """trace.json of out holds exactly want {map id: (H, Q, K)} (≤ 1e-6), valid against the schema."""
    t = load_json(os.path.join(out, "trace.json"))
    validate_trace(t)
    assert [m["id"] for m in t["maps"]] == list(want), [m["id"] for m in t["maps"]]
    worst = 0.0
    for m in t["maps"]:
        w = np.array([h["weights"] for h in m["heads"]], dtype=np.float64)
        assert w.shape == want[m["id"]].shape, m["id"]
        worst = max(worst, float(np.abs(w - want[m["id"]]).max()))
        assert m["kind"] == kinds[m["id"]], m
    assert worst <= 1e-6, worst
    return t


def view(tmp, name, *args):
    out = os.path.join(tmp, name)
    r = run_ok("view", *args, "--out", out)
    assert "computed outside attnviz" in r.stdout, r.stdout
    return out


def test_view_reads_pytorch_weights_in_every_format(tmp):
    ws, wc = torch_weights()
    both = {"encoder.0.self": ws, "decoder.0.cross": wc}
    kinds = {"encoder.0.self": "self", "decoder.0.cross": "cross"}
    src, q = " ".join(SRC), ["--queries-of", "decoder.0.cross=" + " ".join(TGT)]
    np.save(os.path.join(tmp, "enc.npy"), ws)
    np.save(os.path.join(tmp, "enc64.npy"), ws.astype(np.float64))
    np.savez(os.path.join(tmp, "both.npz"), **both)
    np.savez_compressed(os.path.join(tmp, "both-z.npz"), **both)
    write_safetensors(os.path.join(tmp, "both.safetensors"), {}, both, order=list(both))
    raw = [np.ascontiguousarray(both[k], dtype="<f8").tobytes() for k in both]   # F64, by hand
    head = {k: {"dtype": "F64", "shape": list(both[k].shape), "data_offsets": [sum(map(len, raw[:i])), sum(map(len, raw[:i + 1]))]}
            for i, k in enumerate(both)}
    h = json.dumps(head).encode()
    with open(os.path.join(tmp, "both64.safetensors"), "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h + b"".join(raw))
    with open(os.path.join(tmp, "both.json"), "w") as f:
        json.dump({k: v.tolist() for k, v in both.items()}, f)
    with open(os.path.join(tmp, "enc.json"), "w") as f:
        json.dump(ws.tolist(), f)
    check_trace(view(tmp, "npy", os.path.join(tmp, "enc.npy"), "--tokens", src), {"layer.0": ws}, {"layer.0": "custom"})
    with open(os.path.join(tmp, "tokens.txt"), "w") as f:   # one token a line: a token may hold a space
        f.write("\n".join(SRC[:-1] + [" tired"]) + "\n")
    out = view(tmp, "npy64", os.path.join(tmp, "enc64.npy"), "--tokens", os.path.join(tmp, "tokens.txt"))
    assert check_trace(out, {"layer.0": ws}, {"layer.0": "custom"})["maps"][0]["keys"][-1] == " tired"
    check_trace(view(tmp, "json1", os.path.join(tmp, "enc.json"), "--tokens", src), {"layer.0": ws}, {"layer.0": "custom"})
    for f in ("both.npz", "both-z.npz", "both.safetensors", "both64.safetensors", "both.json"):
        out = view(tmp, f.replace(".", "-"), os.path.join(tmp, f), "--tokens", src, *q)
        t = check_trace(out, both, kinds)
        cross = t["maps"][1]
        assert cross["queries"] == TGT and cross["keys"] == SRC and t["maps"][0]["queries"] == SRC
        assert cross["mask"] is None and t["maps"][0]["mask"] is None
    files = os.listdir(out)
    for want in ("grid.encoder.self.png", "grid.decoder.cross.png", "encoder.0.self.h3.png", "decoder.0.cross.h0.png", "lines.7-it.png",
                 "index.html"):
        assert want in files, files
    # a 4-D (layers, heads, queries, keys) array: maps layer.0 … layer.L-1
    four = np.stack([ws, ws[::-1]])
    np.save(os.path.join(tmp, "four.npy"), four)
    check_trace(view(tmp, "four", os.path.join(tmp, "four.npy"), "--tokens", src),
                {"layer.0": ws, "layer.1": ws[::-1]}, {"layer.0": "custom", "layer.1": "custom"})


def test_view_says_where_the_weights_come_from(tmp):
    ws, _ = torch_weights()
    np.save(os.path.join(tmp, "enc.npy"), ws)
    out = view(tmp, "o", os.path.join(tmp, "enc.npy"), "--tokens", " ".join(SRC))
    html = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    assert "computed outside attnviz" in html and "attnviz does not know the model" in html
    from PIL import Image
    for f in ("layer.0.h0.png", "grid.custom.custom.png"):
        text = " ".join(Image.open(os.path.join(out, f)).text.values())
        assert "computed outside attnviz" in text, (f, text)


def test_view_causal_and_padding_are_masked(tmp):
    """A decoder's masked self-attention (PyTorch's attn_mask) comes out with the
    causal mask; rows of zeros (a padded query) are masked; --causal checks."""
    import torch
    torch.manual_seed(1)
    T = len(TGT)
    mha = torch.nn.MultiheadAttention(16, 2, batch_first=True)
    y = torch.randn(1, T, 16)
    with torch.no_grad():
        _, w = mha(y, y, y, need_weights=True, average_attn_weights=False,
                   attn_mask=torch.triu(torch.ones(T, T, dtype=torch.bool), 1))
    w = w[0].numpy().copy()
    assert np.all(np.triu(w, 1) == 0)
    w[:, -1, :] = 0   # the last query is padding
    np.save(os.path.join(tmp, "dec.npy"), w)
    out = os.path.join(tmp, "o")
    r = run_ok("view", os.path.join(tmp, "dec.npy"), "--tokens", " ".join(TGT), "--causal", "--out", out)
    assert "causal: 1 map" in r.stdout and "padding: 1 row" in r.stdout, r.stdout
    m = load_json(os.path.join(out, "trace.json"))["maps"][0]
    want = np.tril(np.ones((T, T), dtype=int))
    want[-1] = 0
    assert np.array_equal(np.array(m["mask"]), want)
    html = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    assert "causal: no query sees a later key (hatched) · 1 row of zeros (padding) drawn as masked" in html
    assert "(window" not in html and "window 6" not in html   # a padded row is not a sliding window
    # --causal on a map with weight above the diagonal: refused
    full = np.full((2, T, T), 1.0 / T, dtype=np.float32)
    np.save(os.path.join(tmp, "full.npy"), full)
    r = run("view", os.path.join(tmp, "full.npy"), "--tokens", " ".join(TGT), "--causal", "--out", out + "2")
    assert r.returncode == 1 and "above the diagonal" in r.stderr and not os.path.exists(out + "2"), r.stderr


def test_view_scores_are_softmaxed_as_pytorch_does(tmp):
    rng = np.random.default_rng(3)
    s = rng.normal(size=(3, 5, 5)).astype(np.float32) * 4
    s[:, np.triu_indices(5, 1)[0], np.triu_indices(5, 1)[1]] = -np.inf
    np.save(os.path.join(tmp, "s.npy"), s)
    out = os.path.join(tmp, "o")
    run_ok("view", os.path.join(tmp, "s.npy"), "--tokens", "a b c d e", "--scores", "--out", out)
    import torch
    want = torch.softmax(torch.from_numpy(s), dim=-1).numpy()
    m = load_json(os.path.join(out, "trace.json"))["maps"][0]
    got = np.array([h["weights"] for h in m["heads"]])
    assert np.abs(got - want).max() <= 1e-6
    assert m["mask"] == np.tril(np.ones((5, 5), dtype=int)).tolist()
    masked = np.array([[[np.nan if v is None else v for v in row] for row in h["masked"]] for h in m["heads"]])
    assert np.array_equal(np.isnan(masked), np.isinf(s)) and np.allclose(masked[~np.isnan(masked)], s[np.isfinite(s)])


def bad_inputs(tmp):
    """(name, file, extra args, what stderr must say) for every refused input."""
    ws, _ = torch_weights()
    p = lambda n: os.path.join(tmp, n)
    neg, off, nan = ws.copy(), ws.copy(), ws.copy()
    neg[1, 3, 2] = -0.01
    off[2, 4] *= 0.99
    nan[0, 5, 1] = np.nan
    for n, a in (("neg.npy", neg), ("off.npy", off), ("nan.npy", nan), ("ok.npy", ws)):
        np.save(p(n), a)
    np.save(p("int.npy"), np.ones((2, 2), dtype=np.int32))
    np.save(p("1d.npy"), np.ones(4, dtype=np.float32))
    blob = open(p("ok.npy"), "rb").read()
    open(p("trunc.npy"), "wb").write(blob[:len(blob) - 9])
    open(p("head.npy"), "wb").write(blob[:40])
    np.savez(p("ok.npz"), a=ws)
    z = open(p("ok.npz"), "rb").read()
    open(p("trunc.npz"), "wb").write(z[:len(z) // 2])
    bad = bytearray(z)
    bad[200] ^= 0xFF
    open(p("crc.npz"), "wb").write(bytes(bad))
    np.savez_compressed(p("ok-z.npz"), a=ws)
    lie = bytearray(open(p("ok-z.npz"), "rb").read())
    at = lie.rindex(b"PK\x01\x02")                      # the central directory's entry:
    lie[at + 24:at + 28] = (0x80000000).to_bytes(4, "little")   # it claims 2 GB inflated
    open(p("lie.npz"), "wb").write(bytes(lie))
    write_safetensors(p("ok.safetensors"), {}, {"encoder.0.self": ws})
    st = open(p("ok.safetensors"), "rb").read()
    open(p("trunc.safetensors"), "wb").write(st[:len(st) - 100])
    open(p("trunc.json"), "w").write(json.dumps(ws.tolist())[:-20])
    open(p("ragged.json"), "w").write("[[0.5, 0.5], [1.0]]")
    np.savez(p("heads.npz"), **{"a": ws, "b": ws[:2]})
    for name, shape, order in (("huge.npy", "(268435456, 268435456, 268435456)", "False"), ("fortran.npy", "(2, 2)", "True")):
        hdr = "{'descr': '<f4', 'fortran_order': %s, 'shape': %s, }" % (order, shape)   # a header as numpy writes it
        hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
        open(p(name), "wb").write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() + b"\0" * 16)
    src = " ".join(SRC)
    return [
        ("sizes overflow", p("huge.npy"), ["--tokens", src], "the array holds more than 268435456 values"),
        ("fortran order", p("fortran.npy"), ["--tokens", "a b"], "Fortran order"),
        ("tokens", p("ok.npy"), ["--tokens", "the animal"], "map layer.0 has 10 queries but --tokens gives 2 tokens"),
        ("keys", p("ok.npy"), ["--tokens", src, "--keys", "a b c"], "map layer.0 has 10 keys but --keys gives 3"),
        ("negative", p("neg.npy"), ["--tokens", src], "map layer.0 head 1 row 3 (“cross”): weight -0.01 at key 2 is negative"),
        ("row sum", p("off.npy"), ["--tokens", src], "map layer.0 head 2 row 4 (“the”): the weights sum to 0.99"),
        ("nan", p("nan.npy"), ["--tokens", src], "map layer.0 head 0 row 5 (“street”): NaN at key 1"),
        ("dtype", p("int.npy"), ["--tokens", "a b"], "dtype '<i4'"),
        ("1-D", p("1d.npy"), ["--tokens", "a b"], "has shape (4)"),
        ("truncated npy", p("trunc.npy"), ["--tokens", src], "truncated"),
        ("truncated header", p("head.npy"), ["--tokens", src], "truncated"),
        ("truncated npz", p("trunc.npz"), ["--tokens", src], "truncated"),
        ("crc", p("crc.npz"), ["--tokens", src], "CRC-32"),
        ("size lie", p("lie.npz"), ["--tokens", src], "member a.npy is damaged (its sizes disagree)"),
        ("truncated safetensors", p("trunc.safetensors"), ["--tokens", src], "truncated"),
        ("truncated json", p("trunc.json"), ["--tokens", src], "not valid JSON (or is truncated)"),
        ("ragged json", p("ragged.json"), ["--tokens", "a b"], "rows of different lengths"),
        ("heads differ", p("heads.npz"), ["--tokens", src], "map b has 2 heads but map a has 4"),
        ("queries-of", p("ok.npz"), ["--tokens", src, "--queries-of", "nope=a b"], "--queries-of names map nope"),
        ("extension", p("ok.txt"), ["--tokens", src], "reads .npy, .npz, .safetensors and .json"),
        ("missing", p("none.npy"), ["--tokens", src], "cannot read"),
    ]


def snapshot(d):
    """{path below d: bytes} of every file under d."""
    out = {}
    for root, _, names in os.walk(d):
        for n in names:
            with open(os.path.join(root, n), "rb") as f:
                out[os.path.relpath(os.path.join(root, n), d)] = f.read()
    return out


def test_view_bad_inputs_one_line_and_out_untouched(tmp):
    out = os.path.join(tmp, "out")
    ws, _ = torch_weights()
    np.save(os.path.join(tmp, "good.npy"), ws)
    run_ok("view", os.path.join(tmp, "good.npy"), "--tokens", " ".join(SRC), "--out", out)
    before = snapshot(out)
    for name, path, args, says in bad_inputs(tmp):
        for target in (out, os.path.join(tmp, "fresh")):
            r = run("view", path, *args, "--out", target)
            lines = [l for l in r.stderr.splitlines() if l.strip()]
            assert r.returncode == 1 and len(lines) == 1 and lines[0].startswith("attnviz: error: "), (name, r.stderr)
            assert says in lines[0], (name, lines[0])
            assert not os.path.exists(os.path.join(tmp, "fresh")), name
        assert snapshot(out) == before, name
        print(f"     {name}: {lines[0][16:]}")
    r = run("view", os.path.join(tmp, "good.npy"), "--out", out)
    assert r.returncode == 2 and "--tokens" in r.stderr


def test_view_page_embeds_the_trace_and_passes_the_browser_checks(tmp):
    from test_page import page_data, check_in_browser, stages_of, browser
    ws, wc = torch_weights()
    np.savez(os.path.join(tmp, "both.npz"), **{"encoder.0.self": ws, "encoder.1.self": ws[::-1], "decoder.0.cross": wc})
    out = view(tmp, "o", os.path.join(tmp, "both.npz"), "--tokens", " ".join(SRC),
               "--queries-of", "decoder.0.cross=" + " ".join(TGT))
    t = load_json(os.path.join(out, "trace.json"))
    [d] = page_data(os.path.join(out, "index.html"))
    assert d["images"] == t["images"] and d["maps_left_out"] == 0
    for pm, tm in zip(d["maps"], t["maps"], strict=True):
        assert (pm["id"], pm["queries"], pm["keys"]) == (tm["id"], tm["queries"], tm["keys"])
        for ph, th in zip(pm["heads"], tm["heads"], strict=True):
            assert np.abs(np.array(ph["weights"]) - np.array(th["weights"])).max() <= 1e-6
    browser()
    check_in_browser(tmp, label="view", page=os.path.join(out, "index.html"), trace=os.path.join(out, "trace.json"),
                     query="it", missing_note=1, stages=stages_of(t, t["maps"][0]["id"], 0, False))


def run_module(tmp, code):
    env = dict(os.environ, ATTNVIZ=ATTNVIZ, PYTHONPATH=MODULE, PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def test_module_takes_tensors_hf_tuples_and_dicts(tmp):
    """attnviz.show with PyTorch tensors, a Hugging Face-style tuple (batch 2,
    item 1 chosen) and a dict of maps: the trace holds those numbers; the
    object's _repr_html_ is an iframe of the page; a bad input raises one line."""
    ws, wc = torch_weights()
    np.save(os.path.join(tmp, "ws.npy"), ws)
    np.save(os.path.join(tmp, "wc.npy"), wc)
    out = run_module(tmp, f"""
import numpy as np, torch, attnviz
ws, wc = torch.from_numpy(np.load('ws.npy')), torch.from_numpy(np.load('wc.npy'))
v = attnviz.show(ws.unsqueeze(0), {SRC!r}, out='a')
print(v._repr_html_())
hf = tuple(torch.stack([torch.rand_like(ws), ws]) for _ in range(2))     # (batch, heads, q, k) per layer
attnviz.show(hf, {" ".join(SRC)!r}, out='b', batch=1)
attnviz.show({{'encoder.0.self': ws, 'decoder.0.cross': wc}}, {SRC!r}, out='c', queries={{'decoder.0.cross': {TGT!r}}})
from types import SimpleNamespace   # an encoder-decoder's output, as Hugging Face returns it
sq = lambda *t: tuple(x.unsqueeze(0) for x in t)
hf2 = SimpleNamespace(encoder_attentions=sq(ws, ws), cross_attentions=sq(wc), decoder_attentions=None)
attnviz.show(hf2, {SRC!r}, out='e', queries={{'decoder.0.cross': {TGT!r}}})
try:
    attnviz.show(ws, ['too', 'few'], out='d')
except attnviz.AttnvizError as e:
    print('refused:', e)
""")
    assert '<iframe src="a/index.html"' in out, out
    assert "refused: attnviz: error: map layer.0 has 10 queries but --tokens gives 2 tokens" in out, out
    assert not os.path.exists(os.path.join(tmp, "d"))
    check_trace(os.path.join(tmp, "a"), {"layer.0": ws}, {"layer.0": "custom"})
    check_trace(os.path.join(tmp, "b"), {"layer.0": ws, "layer.1": ws}, {"layer.0": "custom", "layer.1": "custom"})
    check_trace(os.path.join(tmp, "c"), {"encoder.0.self": ws, "decoder.0.cross": wc},
                {"encoder.0.self": "self", "decoder.0.cross": "cross"})
    check_trace(os.path.join(tmp, "e"), {"encoder.0.self": ws, "encoder.1.self": ws, "decoder.0.cross": wc},
                {"encoder.0.self": "self", "encoder.1.self": "self", "decoder.0.cross": "cross"})


def test_sample_notebook_runs(tmp):
    """The sample notebook headless (jupyter nbconvert --execute) where Debian's
    python3-nbconvert and python3-ipykernel are installed; else its code cells
    run as one script, and the test says so."""
    nb = json.load(open(NOTEBOOK, encoding="utf-8"))
    env = dict(os.environ, ATTNVIZ=ATTNVIZ, PYTHONPATH=MODULE, PYTHONDONTWRITEBYTECODE="1")
    try:
        import nbconvert, ipykernel   # noqa: F401
        have = True
    except ImportError:
        have = False
    if have:   # a copy in tmp: the kernel runs in the notebook's folder and writes attnviz_view/ there
        copy = os.path.join(tmp, os.path.basename(NOTEBOOK))
        with open(copy, "w", encoding="utf-8") as f:
            json.dump(nb, f)
        r = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute", "--inplace",
                            "--ExecutePreprocessor.timeout=300", copy], capture_output=True, text=True, cwd=tmp,
                           env=env, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        done = json.load(open(copy, encoding="utf-8"))
        html = [o for c in done["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
                if "text/html" in o.get("data", {})]
        assert html and "<iframe" in "".join(html[-1]["data"]["text/html"]), "no inline page in the outputs"
        print("     the notebook ran headless (nbconvert --execute) and shows the page inline")
    else:
        code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp, env=env, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        print("     python3-nbconvert/python3-ipykernel are not installed: the notebook's cells ran as a script")
    t = load_json(os.path.join(tmp, "attnviz_view", "trace.json"))
    assert [m["id"] for m in t["maps"]] == ["encoder.0.self", "encoder.1.self"]


def test_make_install_installs_the_module(tmp):
    prefix = os.path.join(tmp, "pfx")
    build = os.path.relpath(os.path.dirname(ATTNVIZ), ROOT)
    r = subprocess.run(["make", "-s", "-C", ROOT, "install", "PREFIX=" + prefix, "BUILD=" + build],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lib = os.path.join(prefix, "share", "attnviz", "python")
    env = dict(os.environ, PATH=os.path.join(prefix, "bin") + os.pathsep + os.environ["PATH"], PYTHONPATH=lib)
    env.pop("ATTNVIZ", None)
    r = subprocess.run([sys.executable, os.path.join(lib, "attnviz.py")], capture_output=True, text=True, cwd=tmp,
                       env=env, timeout=120)
    assert r.returncode == 0 and "<iframe" in r.stdout, r.stderr
