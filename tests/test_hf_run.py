"""`attnviz run/info --model DIR` on GPT-2 and BERT folders (Hugging Face layout): the
pictures and trace of the issue's "done when", predictions checked against the PyTorch
references, the loader's tolerance of real files (prefixes, gamma/beta, buffers, shards)
and its errors (one line, exit != 0, nothing written)."""
import json, os, shutil
import numpy as np
from helpers import run, run_ok, run_err, load_json, validate_trace
import hf_fixtures as hf

SENTENCE = "The animal didn't cross the street because it was too tired"


def ids_of(d, text):
    return [int(x) for x in run_ok("tokenize", "--model", d, input=text + "\n").stdout.split()]


def test_run_gpt2_folder_done_when(tmp):
    d, out = os.path.join(tmp, "gpt2"), os.path.join(tmp, "out")
    w = hf.write_gpt2_dir(d)
    r = run_ok("run", "--model", d, "--out", out, SENTENCE)
    files = set(os.listdir(out))
    assert "grid.decoder.masked_self.png" in files and "index.html" in files
    assert {f"decoder.{l}.masked_self.h{h}.png" for l in range(2) for h in range(4)} <= files
    assert any(f.startswith("lines.") and f.endswith("-it.png") for f in files), files
    trace = load_json(os.path.join(out, "trace.json"))
    validate_trace(trace)
    assert trace["target_tokens"][:3] == ["The", "animal", "didn"] and trace["source_tokens"] == []
    ids = ids_of(d, SENTENCE)
    assert len(ids) == len(trace["target_tokens"]) == 12
    _, logits = hf.gpt2_reference(w, ids)
    top = int(np.argmax(logits[-1]))
    assert " | it | " in run_ok("tokenize", "--model", d, "--tokens", input=SENTENCE + "\n").stdout
    line = [l for l in r.stdout.splitlines() if "next token:" in l][0]
    vocab = {v: k for k, v in json.load(open(os.path.join(d, "vocab.json"), encoding="utf-8")).items()}
    first = line.split("“")[1].split("”")[0]
    assert vocab[top].replace("\u0120", " ").strip() == first.strip(), (line, vocab[top])


def test_run_bert_folder_fills_mask(tmp):
    d, out = os.path.join(tmp, "bert"), os.path.join(tmp, "out")
    w = hf.write_bert_dir(d)
    text = "The animal didn't cross the [MASK] because it was too tired."
    r = run_ok("run", "--model", d, "--out", out, text)
    trace = load_json(os.path.join(out, "trace.json"))
    validate_trace(trace)
    toks = trace["source_tokens"]
    assert toks[0] == "[CLS]" and toks[-1] == "[SEP]" and "[MASK]" in toks
    assert [m["id"] for m in trace["maps"]] == ["encoder.0.self", "encoder.1.self"]
    assert trace["maps"][0]["mask"] is None, "one sentence, no padding: nothing is masked"
    assert "grid.encoder.self.png" in os.listdir(out)
    ids = ids_of(d, text)                       # what the model is given: [CLS] … [SEP]
    assert ids[0] == 101 and ids[-1] == 102
    _, logits = hf.bert_reference(w, ids)
    pos = toks.index("[MASK]")
    lines = hf.bert_vocab_lines()
    line = [l for l in r.stdout.splitlines() if "[MASK] at" in l][0]
    assert f"“{lines[int(np.argmax(logits[pos]))]}”" in line.split("→")[1].split(",")[0], line


def test_run_choices_and_trace_modes(tmp):
    d = os.path.join(tmp, "gpt2")
    hf.write_gpt2_dir(d)
    out = os.path.join(tmp, "a")
    run_ok("run", "--model", d, "--out", out, "--layers", "1", "--heads", "0,2", "--max-pictures", "1",
           "--trace", "none", SENTENCE)
    files = os.listdir(out)
    assert "trace.json" not in files
    heads = [f for f in files if f.startswith("decoder.") and ".q" not in f]
    assert heads == ["decoder.1.masked_self.h0.png"], files
    out = os.path.join(tmp, "b")
    run_ok("run", "--model", d, "--out", out, "--trace", "steps", "it was")
    t = load_json(os.path.join(out, "trace.json"))
    assert all(h.get("scores") is not None for m in t["maps"] for h in m["heads"])
    r = run_err("run", "--model", d, "--out", os.path.join(tmp, "c"), "--layers", "2", SENTENCE)
    assert "layers 0..1" in r.stderr
    run_err("run", "--model", d, "--out", os.path.join(tmp, "c"), "--layers", "x", SENTENCE)
    run_err("run", "--model", d, "--out", os.path.join(tmp, "c"), "--to", "vi", SENTENCE)


def weights_of(d, tmp, ids):
    out = os.path.join(tmp, "t.json")
    run_ok("forward", "--model", d, "--src", " ".join(map(str, ids)), "--out", out)
    return [h["weights"] for m in load_json(out)["maps"] for h in m["heads"]]


def test_loader_accepts_real_file_variants(tmp):
    ids = [464, 5044, 1422, 470, 3272]
    w = hf.gpt2_weights()
    base = weights_of(hf.write_gpt2_dir(os.path.join(tmp, "g0"), weights=w) and os.path.join(tmp, "g0"), tmp, ids)
    buffers = {"h.0.attn.bias": np.ones((1, 1, 128, 128), np.float32), "h.0.attn.masked_bias": np.array(-1e4, np.float32),
               "lm_head.weight": w["wte.weight"]}
    hf.write_gpt2_dir(os.path.join(tmp, "g1"), weights=w, prefix="", extra=buffers)
    assert weights_of(os.path.join(tmp, "g1"), tmp, ids) == base, "no prefix, buffers and lm_head ignored"
    # BERT: no "bert." prefix, LayerNorm gamma/beta, pooler, position_ids, NSP head
    bw = hf.bert_weights()
    bids = [101, 1996, 4111, 103, 102]
    b0 = weights_of(hf.write_bert_dir(os.path.join(tmp, "b0"), weights=bw) and os.path.join(tmp, "b0"), tmp, bids)
    renamed = {}
    for k, v in bw.items():
        k = k.removeprefix("bert.")
        if "LayerNorm" in k:
            k = k.replace(".weight", ".gamma").replace(".bias", ".beta")
        renamed[k] = v
    renamed.update({"pooler.dense.weight": np.zeros((64, 64), np.float32), "pooler.dense.bias": np.zeros(64, np.float32),
                    "cls.seq_relationship.weight": np.zeros((2, 64), np.float32),
                    "embeddings.position_ids": np.arange(128).reshape(1, 128)})
    d = os.path.join(tmp, "b1")
    hf.write_bert_dir(d, weights=bw)
    hf.write_safetensors(os.path.join(d, "model.safetensors"), renamed, dtypes={"embeddings.position_ids": "I64"})
    assert weights_of(d, tmp, bids) == b0, "gamma/beta, no prefix, buffers and unused heads"


def test_sharded_checkpoint(tmp):
    ids = [464, 5044, 1422, 470, 3272]
    w = hf.gpt2_weights()
    base = weights_of(hf.write_gpt2_dir(os.path.join(tmp, "g0"), weights=w) and os.path.join(tmp, "g0"), tmp, ids)
    d = os.path.join(tmp, "sh")
    hf.write_gpt2_dir(d, weights=w)
    os.remove(os.path.join(d, "model.safetensors"))
    names = sorted(w)
    parts = [names[: len(names) // 2], names[len(names) // 2:]]
    wm = {}
    for i, part in enumerate(parts):
        fn = f"model-{i + 1:05d}-of-00002.safetensors"
        hf.write_safetensors(os.path.join(d, fn), {"transformer." + k: w[k] for k in part}, dtype="BF16" if i else "F32")
        wm.update({"transformer." + k: fn for k in part})
    with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": wm}, f)
    got = weights_of(d, tmp, ids)
    assert len(got) == len(base) == 8
    assert max(np.abs(np.array(g) - np.array(b)).max() for g, b in zip(got, base)) < 0.05, "BF16 half ≈ F32"
    atts, _ = hf.gpt2_reference({k: (hf.dequant(v, "BF16").astype(np.float32) if k in parts[1] else v)
                                 for k, v in w.items()}, ids)
    assert np.abs(np.array(got[4]) - atts[1][0]).max() < 1e-5


def broken(tmp, name, edit):
    """A GPT-2 folder broken by edit(dir); returns (dir, out) with out not yet created."""
    d = os.path.join(tmp, name)
    hf.write_gpt2_dir(d, weights=hf.gpt2_weights(C=16, H=2, L=2, P=16))
    edit(d)
    return d, os.path.join(tmp, name + "-out")


def expect_error(d, out, *words):
    r = run_err("run", "--model", d, "--out", out, "it was")
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert not os.path.exists(out) or not os.listdir(out), f"something was written: {os.listdir(out)}"
    return lines[0]


def rewrite(d, change):
    """Rewrites model.safetensors with change(tensors) applied."""
    t = hf.read_all(os.path.join(d, "model.safetensors"))
    change(t)
    hf.write_safetensors(os.path.join(d, "model.safetensors"), t)


def test_loader_errors(tmp):
    d, out = broken(tmp, "missing", lambda d: rewrite(d, lambda t: t.pop("transformer.h.1.mlp.c_fc.bias")))
    expect_error(d, out, "h.1.mlp.c_fc.bias", "missing", "[64]")
    d, out = broken(tmp, "shape", lambda d: rewrite(d, lambda t: t.update({"transformer.h.0.attn.c_attn.weight":
                                                                           np.zeros((48, 16), np.float32)})))
    expect_error(d, out, "c_attn.weight", "[48, 16]", "[16, 48]")
    def unknown_dtype(d):
        t = hf.read_all(os.path.join(d, "model.safetensors"))
        hf.write_safetensors(os.path.join(d, "model.safetensors"), t, dtypes={"transformer.wpe.weight": "F99"})
    d, out = broken(tmp, "dtype", unknown_dtype)
    expect_error(d, out, "wpe.weight", "F99")
    def truncate(d):
        p = os.path.join(d, "model.safetensors")
        os.truncate(p, os.path.getsize(p) - 100)
    d, out = broken(tmp, "trunc", truncate)
    expect_error(d, out, "truncated")
    d, out = broken(tmp, "noweights", lambda d: os.remove(os.path.join(d, "model.safetensors")))
    expect_error(d, out, "model.safetensors")
    d, out = broken(tmp, "badjson", lambda d: open(os.path.join(d, "config.json"), "w").write("{nope"))
    expect_error(d, out, "config.json")
    d, out = broken(tmp, "phi", lambda d: open(os.path.join(d, "config.json"), "w").write('{"model_type": "phi3"}'))
    expect_error(d, out, "phi3", "gpt2, bert, llama")
    d, out = broken(tmp, "llama", lambda d: open(os.path.join(d, "config.json"), "w").write('{"model_type": "llama"}'))
    expect_error(d, out, "config.json", "is missing")   # read as a Llama config: it names the missing key
    def relative(d):
        p = os.path.join(d, "config.json")
        cfg = json.load(open(p))
        cfg["scale_attn_by_inverse_layer_idx"] = True
        json.dump(cfg, open(p, "w"))
    d, out = broken(tmp, "inverse", relative)
    expect_error(d, out, "scale_attn_by_inverse_layer_idx", "true")
    d, out = broken(tmp, "noconfig", lambda d: os.remove(os.path.join(d, "config.json")))
    expect_error(d, out, "config.json")
    expect_error(os.path.join(tmp, "absent"), os.path.join(tmp, "absent-out"))
    d, out = broken(tmp, "file", lambda d: None)
    expect_error(os.path.join(d, "model.safetensors"), out, "give the folder", f"--model {d}")
    d = os.path.join(tmp, "ok")
    hf.write_gpt2_dir(d, weights=hf.gpt2_weights(C=16, H=2, L=2, P=16))
    for text, words in (("\udcff abc", ("UTF-8",)), ("", ("no tokens",)), ("word " * 40, ("41 tokens", "at most 16"))):
        out = os.path.join(tmp, "sentence-out")
        r = run_err("run", "--model", d, "--out", out, text.encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape"))
        assert all(w in r.stderr for w in words), r.stderr
        assert not os.path.exists(out), "no folder for a sentence that did not go through"
    d, out = broken(tmp, "garbage", lambda d: open(os.path.join(d, "model.safetensors"), "wb").write(b"\xff" * 64))
    expect_error(d, out, "safetensors")


def test_info_folder(tmp):
    d = os.path.join(tmp, "g")
    w = hf.write_gpt2_dir(d, dtype="F16")
    r = run_ok("info", "--model", d)
    assert "family:       gpt2" in r.stdout and "dtype:        F16" in r.stdout
    assert f"parameters:   {sum(v.size for v in w.values())}" in r.stdout, r.stdout
    j = json.loads(run_ok("info", "--model", d, "--json").stdout)
    assert j["family"] == "gpt2" and j["n_heads"] == 4 and j["d_model"] == 64
    b = os.path.join(tmp, "b")
    hf.write_bert_dir(b, weights=hf.bert_weights(mlm=False))
    r = run_ok("info", "--model", b)
    assert "masked-LM:    no" in r.stdout and "uncased" in r.stdout
    r = run_ok("run", "--model", b, "--out", os.path.join(tmp, "o"), "a [MASK] b")
    assert "no masked-LM head" in r.stderr


def test_large_trace_is_announced(tmp):
    d = os.path.join(tmp, "g")
    hf.write_gpt2_dir(d, weights=hf.gpt2_weights(C=8, H=4, L=3, P=1024), H=4)
    text = " ".join(["the cat"] * 400)            # 800 tokens: 12 causal heads × 800² weights ≈ 55 MB of JSON
    out = os.path.join(tmp, "o")
    # by default a text past 256 tokens is streamed to trace.bin, said on stdout
    r = run_ok("run", "--model", d, "--out", os.path.join(tmp, "s"), "--no-pictures", text, timeout=300)
    assert "long text (800 tokens): each layer's maps went to trace.bin" in r.stdout and "blocks of 7 tokens" in r.stdout
    assert os.path.exists(os.path.join(tmp, "s", "trace.bin")) and not os.path.exists(os.path.join(tmp, "s", "trace.json"))
    # kept whole (--long-from 0), past 16 MB of JSON the trace goes to trace.bin, said with the JSON it spared
    r = run_ok("run", "--model", d, "--out", os.path.join(tmp, "b"), "--no-pictures", "--long-from", "0", text,
               timeout=300)
    assert "trace.bin, not trace.json: about" in r.stdout and not r.stderr.strip(), (r.stdout, r.stderr)
    spared = int(r.stdout.split("trace.bin, not trace.json: about ")[1].split(" MB")[0])
    assert os.path.exists(os.path.join(tmp, "b", "trace.bin")) and not os.path.exists(os.path.join(tmp, "b", "trace.json"))
    # asked for JSON, it is announced first, and the estimate holds
    r = run_ok("run", "--model", d, "--out", out, "--no-pictures", "--trace-format", "json", "--long-from", "0", text,
               timeout=300)
    assert "trace.json will be about" in r.stderr and "--trace none" in r.stderr, r.stderr
    mb = int(r.stderr.split("about ")[1].split(" MB")[0])
    size = os.path.getsize(os.path.join(out, "trace.json")) >> 20
    assert 0.75 * mb <= size <= 1.25 * mb and mb == spared, (mb, size, spared)
    r = run_ok("run", "--model", d, "--out", os.path.join(tmp, "p"), "--no-pictures", "--trace", "none", text)
    assert "trace.json will be" not in r.stderr and not os.path.exists(os.path.join(tmp, "p", "trace.json"))


def test_bert_batch_padding_mask(tmp):
    """--batch pads to the longest sentence with [PAD]; the padding mask hides the pads,
    so every real token's weights are those of the sentence run alone."""
    d = os.path.join(tmp, "bert")
    hf.write_bert_dir(d)
    short, long_ = "the cat [MASK] on the mat .", "it was too tired because the street was wide ."
    run_ok("run", "--model", d, "--out", os.path.join(tmp, "alone"), short)
    r = run_ok("run", "--model", d, "--out", os.path.join(tmp, "batch"), "--batch", short, long_)
    assert os.path.exists(os.path.join(tmp, "batch", "index.html"))
    alone = load_json(os.path.join(tmp, "alone", "trace.json"))
    padded = load_json(os.path.join(tmp, "batch", "sentence-1", "trace.json"))
    validate_trace(padded)
    n = len(alone["source_tokens"])
    assert padded["source_tokens"][n:] == ["[PAD]"] * (len(padded["source_tokens"]) - n) and len(padded["source_tokens"]) > n
    for ma, mp in zip(alone["maps"], padded["maps"]):
        assert mp["mask"][0] == [1] * n + [0] * (len(mp["mask"][0]) - n)
        for ha, hp in zip(ma["heads"], mp["heads"]):
            got = np.array(hp["weights"])[:n, :n]
            assert np.abs(got - np.array(ha["weights"])).max() < 1e-6
            assert np.abs(np.array(hp["weights"])[:, n:]).max() == 0
    assert r.stdout.count("[MASK] at 3") == 1


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def test_heatmap_of_512_tokens_stays_readable(tmp):
    d = os.path.join(tmp, "b")
    hf.write_bert_dir(d, weights=hf.bert_weights(C=16, H=2, L=1, P=512, F=32, mlm=False), H=2)
    out = os.path.join(tmp, "o")
    text = " ".join(["the cat sat on the mat ."] * 72)
    run_ok("run", "--model", d, "--out", out, "--max-pictures", "1", "--long-from", "0", text)
    assert len(load_json(os.path.join(out, "trace.json"))["source_tokens"]) == 506
    w, h = png_size(os.path.join(out, "encoder.0.self.h0.png"))
    assert 800 <= w <= 1600 and 800 <= h <= 1600, (w, h)      # 2 px per token, labels thinned, no values
    assert not os.path.exists(os.path.join(out, "encoder.0.self.h1.png")), "--max-pictures 1"
    assert os.path.exists(os.path.join(out, "grid.encoder.self.png"))
    # by default (past 256 tokens) the picture pools the 506 tokens in blocks of 4: 127 rows, and says so
    pooled = os.path.join(tmp, "p")
    r = run_ok("run", "--model", d, "--out", pooled, "--max-pictures", "1", text)
    assert "pool them in blocks of 4 tokens" in r.stdout, r.stdout
    w2, h2 = png_size(os.path.join(pooled, "encoder.0.self.h0.png"))
    assert 600 <= w2 <= 1600 and 600 <= h2 <= 1600, (w2, h2)
    page = open(os.path.join(pooled, "index.html"), encoding="utf-8").read()
    assert "506 tokens pooled in blocks of 4: a block&#39;s row is its tokens&#39; rows averaged" in page
