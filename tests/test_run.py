"""`attnviz run` end to end on a small random checkpoint made by the project's own
model-init (independent of the shipped model): pictures, trace, masks, batches,
and bad input."""
import json, os, struct
import numpy as np
from helpers import run, run_ok, run_err, load_json, validate_trace, files_under, png_content

WORDS = ("the animal didn't cross street because it was too tired wide . cat sat on mat "
         "she ate pizza with mushrooms i go to school am happy l' le la n' a pas traversé "
         "rue parce qu' il elle était trop fatigué large chat tôi đi học").split()
SPECIALS = ["<pad>", "<unk>", "<bos>", "<eos>", "<2fr>", "<2vi>"]

def make_model(tmp, norm="post"):
    vocab = SPECIALS + WORDS
    vp = os.path.join(tmp, "vocab.txt")
    open(vp, "w", encoding="utf-8").write("\n".join(vocab) + "\n")
    cfg = {"arch": "encoder-decoder", "vocab_size": len(vocab), "d_model": 32, "n_heads": 4,
           "d_ff": 64, "n_enc_layers": 2, "n_dec_layers": 2, "max_len": 64, "norm": norm}
    mp = os.path.join(tmp, "m.safetensors")
    run_ok("model-init", "--config", json.dumps(cfg), "--vocab", vp, "--out", mp, "--seed", "7")
    return mp

def test_run_one_sentence(tmp):
    mp = make_model(tmp)
    out = os.path.join(tmp, "out")
    r = run_ok("run", "--model", mp, "--out", out,
               "The animal didn't cross the street because it was too tired.")
    assert "→ fr:" in r.stdout
    assert "it (position 7)" in r.stdout, r.stdout
    t = load_json(os.path.join(out, "trace.json"))
    validate_trace(t)
    # labels as typed, what the model read lowercased (issue 24)
    assert t["source_tokens"][:3] == ["The", "animal", "didn't"] and t["source_tokens"][-1] == "<eos>"
    assert t["source_read"][:3] == ["the", "animal", "didn't"] and t["source_read"][-1] == "<eos>"
    ids = [m["id"] for m in t["maps"]]
    assert ids == ["encoder.0.self", "encoder.1.self", "decoder.0.masked_self", "decoder.0.cross",
                   "decoder.1.masked_self", "decoder.1.cross"], ids
    for m in t["maps"]:
        assert len(m["heads"]) == 4 and m["d_k"] == 8
        w = np.array([h["weights"] for h in m["heads"]])
        assert np.abs(w.sum(axis=2) - 1).max() < 1e-5
        if m["kind"] == "masked_self":
            T = len(m["queries"])
            assert np.all(w[:, np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] == 0)
        assert "scores" not in m["heads"][0]          # only with --trace steps
    files = files_under(out)
    for img in t["images"]:
        assert img in files, img
    for want in ["index.html", "grid.encoder.self.png", "grid.decoder.masked_self.png",
                 "grid.decoder.cross.png", "encoder.1.self.h3.png", "decoder.0.cross.h0.png"]:
        assert want in files, want
    assert any(f.startswith("lines.7-it") for f in files), files
    assert any(f.startswith("steps.") for f in files), files
    html = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    for img in t["images"]:
        assert f'src="{img}"' in html, img

def test_run_pieces_leaves_the_translator_unchanged(tmp):
    """The translator's tokens are already words: --pieces changes no byte of what run prints or writes."""
    mp = make_model(tmp)
    outs, prints = [], []
    for extra in ([], ["--pieces"]):
        out = os.path.join(tmp, "out%d" % len(extra))
        prints.append(run_ok("run", "--model", mp, "--out", out, *extra,
                             "The animal didn't cross the street because it was too tired.").stdout.replace(out, "OUT"))
        outs.append({f: png_content(open(os.path.join(out, f), "rb").read()) for f in sorted(files_under(out))})
    assert prints[0] == prints[1] and "words (" not in prints[0]
    assert outs[0].keys() == outs[1].keys() and any(f.startswith("lines.7-it") for f in outs[0])
    for f in outs[0]:
        a, b = outs[0][f], outs[1][f]
        if f == ".attnviz-files":   # the folder's own list of what run wrote
            continue
        if f == "index.html":   # it names the command that made it
            a, b = a.replace(b" --pieces", b"").replace(b"out1", b"out0"), b.replace(b" --pieces", b"").replace(b"out1", b"out0")
        assert a == b, f
        assert b"in words" not in a, f


def test_run_trace_steps_and_focus(tmp):
    mp = make_model(tmp, norm="pre")
    out = os.path.join(tmp, "out")
    run_ok("run", "--model", mp, "--out", out, "--trace", "steps", "--focus", "decoder.1.cross.2",
           "--target", "le chat", "the cat sat on the mat .")
    t = load_json(os.path.join(out, "trace.json"))
    validate_trace(t)
    assert t["target_tokens"] == ["<2fr>", "le", "chat"]
    for m in t["maps"]:
        for h in m["heads"]:
            for k in ("scores", "scaled", "masked", "output"):
                assert k in h, (m["id"], k)
            s = np.array(h["scores"]); sc = np.array(h["scaled"])
            assert np.allclose(sc, s / np.sqrt(m["d_k"]), rtol=1e-5, atol=1e-6)
    assert "steps.decoder.1.cross.h2.png" in files_under(out)

def test_run_batch_padding(tmp):
    mp = make_model(tmp)
    out = os.path.join(tmp, "out")
    run_ok("run", "--model", mp, "--out", out, "--batch", "the cat sat on the mat .", "i am happy .")
    files = files_under(out)
    assert "index.html" in files and "sentence-1/trace.json" in files and "sentence-2/trace.json" in files
    t2 = load_json(os.path.join(out, "sentence-2", "trace.json"))
    validate_trace(t2)
    src = t2["source_tokens"]
    assert src[:5] == ["i", "am", "happy", ".", "<eos>"] and set(src[5:]) == {"<pad>"}, src
    enc = t2["maps"][0]
    mask = np.array(enc["mask"])
    for h in enc["heads"]:
        w = np.array(h["weights"])
        assert np.all(w[:, 5:] == 0), "a query attended to a <pad> key"
        assert np.abs(w.sum(axis=1) - 1).max() < 1e-5
    assert np.all(mask[:, 5:] == 0) and np.all(mask[:, :5] == 1)
    # Unbatched, the same sentence gives the same weights on the real tokens.
    out1 = os.path.join(tmp, "one")
    run_ok("run", "--model", mp, "--out", out1, "i am happy .")
    t1 = load_json(os.path.join(out1, "trace.json"))
    a = np.array(t1["maps"][0]["heads"][0]["weights"])
    b = np.array(enc["heads"][0]["weights"])[:5, :5]
    assert np.abs(a - b).max() < 1e-5

def test_run_bad_inputs(tmp):
    mp = make_model(tmp)
    broken = os.path.join(tmp, "broken.safetensors")
    open(broken, "wb").write(open(mp, "rb").read()[:100])
    cases = [
        (["run", "--model", mp, ""], "empty"),
        (["run", "--model", mp, "   "], "empty"),
        (["run", "--model", mp], "needs a sentence"),
        (["run", "--model", mp, "--to", "de", "hi"], "--to"),
        (["run", "--model", mp, "--frob", "hi"], "unknown option"),
        (["run", "--model", os.path.join(tmp, "nope.safetensors"), "hi"], "nope.safetensors"),
        (["run", "--model", broken, "hi"], "broken.safetensors"),
        (["run", "--model", mp, "--focus", "x.y", "the cat ."], "--focus"),
        (["run", "--model", mp, "--focus", "0.9", "the cat ."], "head 9"),
        (["run", "--model", mp, "--trace", "all", "the cat ."], "--trace"),
        (["run", "--model", mp, "--target", "le chat", "a", "b"], "--target"),
        (["run", "--model", mp, " ".join(["cat"] * 70)], "at most 63"),   # the model's true limit (max_len 64 less <eos>)
    ]
    for i, (args, words) in enumerate(cases):
        out = os.path.join(tmp, f"o{i}")
        r = run_err(*args, "--out", out)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert len(lines) == 1 and lines[0].startswith("attnviz: error: "), (args, r.stderr)
        assert words in lines[0], (args, lines[0])
        if "--focus" not in args:
            assert not os.path.exists(out), (args, files_under(out))

def test_run_invalid_utf8(tmp):
    import subprocess
    from helpers import ATTNVIZ
    mp = make_model(tmp)
    r = subprocess.run([ATTNVIZ, "run", "--model", mp, "--out", os.path.join(tmp, "o"), b"the cat \xff sat"],
                       capture_output=True)
    assert r.returncode > 0
    assert b"UTF-8" in r.stderr and r.stderr.count(b"\n") == 1, r.stderr
    assert not os.path.exists(os.path.join(tmp, "o"))

def test_run_unknown_words_warn(tmp):
    mp = make_model(tmp)
    r = run_ok("run", "--model", mp, "--out", os.path.join(tmp, "o"), "the zebra sat on the mat .")
    assert "warning" in r.stderr and "'zebra'" in r.stderr, r.stderr
    t = load_json(os.path.join(tmp, "o", "trace.json"))
    assert t["source_tokens"][1] == "<unk> zebra" and t["source_read"][1] == "<unk>"   # what it read, and what was typed

def test_run_translation_cap_is_the_models_max_len(tmp):
    """One sentence preparation for run and demo: a translation may be as long as
    the model can write (max_len - 1 words after the tag), not a fixed 47."""
    vocab = SPECIALS + ["the", "cat", "sat", "on", "mat", ".", "le", "chat"]
    vp = os.path.join(tmp, "vocab.txt")
    open(vp, "w", encoding="utf-8").write("\n".join(vocab) + "\n")
    for max_len in (20, 64):
        cfg = {"arch": "encoder-decoder", "vocab_size": len(vocab), "d_model": 32, "n_heads": 4,
               "d_ff": 64, "n_enc_layers": 2, "n_dec_layers": 2, "max_len": max_len, "norm": "post"}
        mp = os.path.join(tmp, f"m{max_len}.safetensors")
        # seed 3: an untrained model that never chooses <eos> on this sentence; since
        # issue 24 the search stops its loops (a repeated n-gram), so it ends within the cap
        run_ok("model-init", "--config", json.dumps(cfg), "--vocab", vp, "--out", mp, "--seed", "3")
        out = os.path.join(tmp, f"o{max_len}")
        run_ok("run", "--quiet", "--no-pictures", "--model", mp, "--out", out, "the cat sat .")
        t = load_json(os.path.join(out, "trace.json"))
        assert len(t["target_tokens"]) <= max_len, (max_len, len(t["target_tokens"]))
        assert t["decode"]["stop"] in ("repeat", "sentences", "length"), t["decode"]
        if t["decode"]["stop"] == "length":
            assert len(t["target_tokens"]) == max_len
        assert t["target_tokens"][0] == "<2fr>" and "<eos>" not in t["target_tokens"]
