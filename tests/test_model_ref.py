"""The model's forward pass against an independent PyTorch re-implementation.

For each architecture / norm placement, `attnviz model-init` writes a random
checkpoint; this test reads it with plain struct/json, makes every bias and
LayerNorm parameter random too (so a swapped gain/bias or a missing bias shows),
writes the result back as safetensors with its own writer (so the C loader reads
a file it did not write), runs `attnviz forward` on a padded batch of 2, and
compares every attention map of every layer and head (weights, and the steps
Q·Kᵀ, ÷√d_k, +mask, ·V), the masks and the logits with a float64 PyTorch model
written from the lesson's formulas."""
import json, math, os, struct
import numpy as np
from helpers import run_ok, run_err, load_json, read_safetensors, write_safetensors

ATOL, RTOL = 1e-4, 1e-4


# ---------------------------------------------------------------- safetensors

# ------------------------------------------------------------ reference model

def reference(cfg, P, src, src_len, tgt, tgt_len):
    """Returns (maps {id: dict(weights, scores, scaled, masked, output, mask)}, logits)."""
    import torch
    F = torch.nn.functional
    C, H = cfg["d_model"], cfg["n_heads"]
    D = C // H
    pre = cfg["norm"] == "pre"
    T = {k: torch.tensor(v, dtype=torch.float64) for k, v in P.items()}
    maps = {}

    def pe(n):
        out = torch.zeros(n, C, dtype=torch.float64)
        for pos in range(n):
            for i in range(0, C, 2):
                angle = pos / (10000 ** (i / C))
                out[pos, i] = math.sin(angle)
                if i + 1 < C:
                    out[pos, i + 1] = math.cos(angle)
        return out

    def embed(tok):
        tok = torch.tensor(tok)
        return T["tok_emb"][tok] * math.sqrt(C) + pe(tok.shape[1])

    def layernorm(x, name, l):
        return F.layer_norm(x, (C,), T[name + ".w"][l], T[name + ".b"][l], eps=1e-5)

    def linear(x, name, l, w, b):
        return x @ T[f"{name}.{w}"][l] + T[f"{name}.{b}"][l]

    def mha(xq, xkv, name, l, mask, map_id):
        B, Tq, _ = xq.shape
        Tk = xkv.shape[1]
        q = linear(xq, name, l, "wq", "bq").view(B, Tq, H, D).transpose(1, 2)
        k = linear(xkv, name, l, "wk", "bk").view(B, Tk, H, D).transpose(1, 2)
        v = linear(xkv, name, l, "wv", "bv").view(B, Tk, H, D).transpose(1, 2)
        scores = q @ k.transpose(-1, -2)
        scaled = scores / math.sqrt(D)
        masked = scaled.masked_fill(mask[:, None] == 0, float("-inf"))
        weights = torch.softmax(masked, dim=-1)
        weights = torch.nan_to_num(weights, nan=0.0)  # fully masked row: zeros
        out = weights @ v                               # (B, H, Tq, D)
        maps[map_id] = dict(scores=scores, scaled=scaled, masked=masked, weights=weights,
                            output=out, mask=mask)
        concat = out.transpose(1, 2).reshape(B, Tq, C)
        return linear(concat, name, l, "wo", "bo")

    def ffn(x, name, l):
        h = torch.relu(linear(x, name, l, "w1", "b1"))
        return linear(h, name, l, "w2", "b2")

    def sublayer(x, ln_name, l, f):
        if pre:
            return x + f(layernorm(x, ln_name, l))
        return layernorm(x + f(x), ln_name, l)

    def key_mask(lens, Tq, Tk, causal=False):
        m = torch.zeros(len(lens), Tq, Tk, dtype=torch.int64)
        for b, n in enumerate(lens):
            m[b, :, :n] = 1
        if causal:
            m = m * torch.tril(torch.ones(Tq, Tk, dtype=torch.int64))
        return m

    enc_out = None
    if cfg["arch"] != "decoder-only":
        S = len(src[0])
        x = embed(src)
        m = key_mask(src_len, S, S)
        for l in range(cfg["n_enc_layers"]):
            x = sublayer(x, "enc.ln1", l, lambda y: mha(y, y, "enc.self", l, m, f"encoder.{l}.self"))
            x = sublayer(x, "enc.ln2", l, lambda y: ffn(y, "enc.ffn", l))
        if pre:
            x = layernorm(x, "enc.lnf", 0)
        enc_out = final = x
    if cfg["arch"] != "encoder-only":
        Tt = len(tgt[0])
        x = embed(tgt)
        ms = key_mask(tgt_len, Tt, Tt, causal=True)
        for l in range(cfg["n_dec_layers"]):
            x = sublayer(x, "dec.ln1", l,
                         lambda y: mha(y, y, "dec.self", l, ms, f"decoder.{l}.masked_self"))
            if enc_out is not None:
                mc = key_mask(src_len, Tt, enc_out.shape[1])
                x = sublayer(x, "dec.ln2", l,
                             lambda y: mha(y, enc_out, "dec.cross", l, mc, f"decoder.{l}.cross"))
            x = sublayer(x, "dec.ln3", l, lambda y: ffn(y, "dec.ffn", l))
        if pre:
            x = layernorm(x, "dec.lnf", 0)
        final = x
    logits = final @ T["out.w"] + T["out.b"]
    return maps, logits


# ------------------------------------------------------------------- helpers

def pad(rows):
    n = max(len(r) for r in rows)
    return [r + [0] * (n - len(r)) for r in rows], [len(r) for r in rows]


def close(name, got, want):
    got = np.array([[np.nan if v is None else v for v in row] for row in got], dtype=np.float64) \
        if isinstance(got, list) else got
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    inf = np.isinf(want)
    assert np.array_equal(np.isnan(got), inf), f"{name}: -inf cells differ\n{got}\n{want}"
    g, w = got[~inf], want[~inf]
    diff = np.abs(g - w)
    bad = diff > ATOL + RTOL * np.abs(w)
    if bad.any():
        i = int(np.argmax(bad))
        raise AssertionError(f"{name}: element {i} is {g[i]:.9g}, expected {w[i]:.9g}; "
                             f"max |diff| {diff.max():.3g} over {diff.size} values")
    return float(diff.max()) if diff.size else 0.0


def check_config(tmp, cfg, seed, src_rows=None, tgt_rows=None):
    base = os.path.join(tmp, "init.safetensors")
    run_ok("model-init", "--config", json.dumps(cfg), "--seed", seed, "--out", base)
    meta, P = read_safetensors(base)
    assert meta["format"] == "attnviz-model" and meta["version"] == "1"
    rng = np.random.default_rng(seed)
    for name in P:  # random biases and LayerNorm parameters
        if name.endswith((".b", ".bq", ".bk", ".bv", ".bo", ".b1", ".b2")):
            P[name] = rng.normal(0, 0.3, P[name].shape).astype(np.float32)
        elif name.endswith(".w") and ".ln" in name:
            P[name] = (1 + rng.normal(0, 0.3, P[name].shape)).astype(np.float32)
    path = os.path.join(tmp, "model.safetensors")
    write_safetensors(path, meta, P)

    args = ["forward", "--model", path, "--out", os.path.join(tmp, "f.json"), "--steps"]
    src = src_len = tgt = tgt_len = None
    if cfg["arch"] != "decoder-only":
        src, src_len = pad(src_rows)
        args += ["--src", ";".join(" ".join(map(str, r)) for r in src_rows)]
    if cfg["arch"] != "encoder-only":
        tgt, tgt_len = pad(tgt_rows)
        args += ["--tgt", ";".join(" ".join(map(str, r)) for r in tgt_rows)]
    run_ok(*args)
    got = load_json(os.path.join(tmp, "f.json"))
    maps, logits = reference(cfg, P, src, src_len, tgt, tgt_len)

    n_enc = cfg["n_enc_layers"] if cfg["arch"] != "decoder-only" else 0
    n_dec = cfg["n_dec_layers"] if cfg["arch"] != "encoder-only" else 0
    expect_ids = [f"encoder.{l}.self" for l in range(n_enc)]
    for l in range(n_dec):
        expect_ids.append(f"decoder.{l}.masked_self")
        if cfg["arch"] == "encoder-decoder":
            expect_ids.append(f"decoder.{l}.cross")
    worst = 0.0
    B = len(got["items"])
    assert B == len(src_rows or tgt_rows)
    for b in range(B):
        ids = [m["id"] for m in got["items"][b]["maps"]]
        assert ids == expect_ids, f"maps {ids} != {expect_ids}"
        for m in got["items"][b]["maps"]:
            ref = maps[m["id"]]
            assert m["d_k"] == cfg["d_model"] // cfg["n_heads"]
            assert np.array_equal(np.array(m["mask"]), ref["mask"][b].numpy()), m["id"] + " mask"
            assert len(m["heads"]) == cfg["n_heads"]
            for h, head in enumerate(m["heads"]):
                for step in ("weights", "scores", "scaled", "masked", "output"):
                    worst = max(worst, close(f"item {b} {m['id']} head {h} {step}",
                                             head[step], ref[step][b, h].numpy()))
                w = np.array(head["weights"])
                assert np.allclose(w.sum(axis=1), 1, atol=1e-5), "rows of weights must sum to 1"
                assert np.all(w[np.array(m["mask"]) == 0] == 0), "masked cells must be exactly 0"
    for b in range(B):
        worst = max(worst, close(f"logits item {b}", got["logits"][b], logits[b].numpy()))
    return got


SRC = [[6, 7, 8, 9, 10], [11, 12, 6]]      # item 1 padded: <pad> keys must be masked
TGT = [[2, 7, 8, 9], [2, 12]]


def cfg_of(arch, norm, enc=2, dec=2):
    return {"arch": arch, "vocab_size": 13, "d_model": 16, "n_heads": 4, "d_ff": 24,
            "n_enc_layers": enc, "n_dec_layers": dec, "max_len": 12, "norm": norm}


def test_encoder_decoder_postnorm(tmp):
    got = check_config(tmp, cfg_of("encoder-decoder", "post"), 3, SRC, TGT)
    cross = got["items"][1]["maps"][3]
    assert cross["id"] == "decoder.0.cross"
    assert cross["keys"][3:] == ["<pad>", "<pad>"], cross["keys"]
    assert all(row[3:] == [0, 0] for row in cross["mask"])


def test_encoder_decoder_prenorm(tmp):
    check_config(tmp, cfg_of("encoder-decoder", "pre"), 4, SRC, TGT)


def test_encoder_only_postnorm(tmp):
    check_config(tmp, cfg_of("encoder-only", "post", 2, 0), 5, SRC, None)


def test_encoder_only_prenorm(tmp):
    check_config(tmp, cfg_of("encoder-only", "pre", 3, 0), 6, SRC, None)


def test_decoder_only_postnorm(tmp):
    check_config(tmp, cfg_of("decoder-only", "post", 0, 2), 7, None, TGT)


def test_decoder_only_prenorm(tmp):
    check_config(tmp, cfg_of("decoder-only", "pre", 0, 3), 8, None, [[3, 4, 5, 6, 7, 8], [9]])


def test_model_c_written_file_reads_back(tmp):
    """The C writer's file: layout, shapes, metadata, padding of the header."""
    cfg = cfg_of("encoder-decoder", "pre", 1, 1)
    path = os.path.join(tmp, "m.safetensors")
    run_ok("model-init", "--config", json.dumps(cfg), "--seed", 9, "--out", path)
    blob = open(path, "rb").read()
    (n,) = struct.unpack("<Q", blob[:8])
    assert n % 8 == 0 and 8 + n <= len(blob)
    meta, P = read_safetensors(path)
    conf = json.loads(meta["config"])
    assert conf["d_model"] == 16 and conf["norm"] == "pre" and conf["arch"] == "encoder-decoder"
    vocab = json.loads(meta["vocab"])
    assert len(vocab) == 13 and vocab[0] == "<pad>"
    assert P["tok_emb"].shape == (13, 16) and P["enc.self.wq"].shape == (1, 16, 16)
    assert P["dec.ffn.w1"].shape == (1, 16, 24) and P["out.w"].shape == (16, 13)
    assert "enc.lnf.w" in P and "dec.lnf.b" in P
    total = sum(a.size for a in P.values())
    assert conf["parameters"] == total
    assert len(blob) == 8 + n + 4 * total
    info = run_ok("info", "--model", path).stdout
    assert f"parameters:   {total}" in info, info
    # same seed, same bytes; another seed, other bytes
    path2 = os.path.join(tmp, "m2.safetensors")
    run_ok("model-init", "--config", json.dumps(cfg), "--seed", 9, "--out", path2)
    assert open(path2, "rb").read() == blob
    run_ok("model-init", "--config", json.dumps(cfg), "--seed", 10, "--out", path2)
    assert open(path2, "rb").read() != blob


def test_model_bad_inputs_fail_cleanly(tmp):
    run_err("model-init", "--config", '{"arch":"encoder-decoder"}', "--out", os.path.join(tmp, "x"))
    bad = cfg_of("encoder-decoder", "post")
    bad["n_heads"] = 5
    r = run_err("model-init", "--config", json.dumps(bad), "--out", os.path.join(tmp, "x"))
    assert "multiple" in r.stderr
    assert not os.path.exists(os.path.join(tmp, "x"))
    r = run_err("info", "--model", os.path.join(tmp, "missing.safetensors"))
    path = os.path.join(tmp, "m.safetensors")
    run_ok("model-init", "--config", json.dumps(cfg_of("encoder-decoder", "post")), "--out", path)
    run_err("forward", "--model", path, "--src", "1 2 99", "--tgt", "1", "--out", os.path.join(tmp, "f.json"))
