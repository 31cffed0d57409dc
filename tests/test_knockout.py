"""Knock-outs, head importance, rollout and norm-weighted attention, checked
against independent truth:
  - `--ablate MAP.H` equals an edit of the checkpoint made here in Python
    (the head's columns of W_V and its slice of b_V set to 0);
  - an `eval --ablation` row equals `eval` on that edited checkpoint;
  - rollout and norm-weighted attention equal a NumPy computation from the
    float64 PyTorch reference model of test_model_ref.py;
  - the importance of a head whose W_O rows are zero is exactly 0."""
import json, os, shutil, struct
import numpy as np
from helpers import (ROOT, run, run_ok, run_err, load_json, read_safetensors, write_safetensors,
                     validate_trace)
from test_model_ref import reference, pad
# The shipped models' corpus: `attnviz corpus` with its defaults (seed 1).
OLD_CORPUS = []

TAUGHT = os.path.join(ROOT, "samples", "models", "attnviz-en-fr-vi.safetensors")
UNTAUGHT = os.path.join(ROOT, "samples", "models", "attnviz-en-fr-vi-untaught.safetensors")
TIRED = "the animal didn't cross the street because it was too tired ."


def shape(path=TAUGHT):
    """(d_k, number of attention maps' heads over all maps) of a checkpoint: the
    tests follow the shipped model's size instead of hard-coding it."""
    meta, _ = read_safetensors(path)
    c = json.loads(meta["config"])
    return c["d_k"], (c["n_enc_layers"] + 2 * c["n_dec_layers"]) * c["n_heads"]


def edit_out_heads(src, dst, heads, D):
    """Copies checkpoint src to dst with each (map, head) zeroed in W_V and b_V:
    weights·(x W_V + b_V) is then 0 for that head, since each weights row sums to 1."""
    meta, P = read_safetensors(src)
    for map_id, h in heads:
        stack, layer, kind = map_id.split(".")
        name = {"self": "enc.self", "masked_self": "dec.self", "cross": "dec.cross"}[kind]
        l = int(layer)
        P[name + ".wv"][l][:, h * D:(h + 1) * D] = 0
        P[name + ".bv"][l][h * D:(h + 1) * D] = 0
    write_safetensors(dst, meta, P)


def softmax(z):
    z = np.asarray(z, dtype=np.float64)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def assert_close(name, got, want, atol=1e-5):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    d = np.abs(got - want)
    if d.size and d.max() > atol:
        i = np.unravel_index(np.argmax(d), d.shape)
        raise AssertionError(f"{name}: at {i} got {got[i]:.9g}, want {want[i]:.9g}; max |diff| {d.max():.3g}")


def test_ablate_equals_weight_edit_forward(tmp):
    """Every weight matrix and every output probability agree within 1e-5."""
    heads = [("encoder.2.self", 0), ("decoder.1.cross", 2), ("decoder.0.masked_self", 1)]
    edited = os.path.join(tmp, "edited.safetensors")
    D, n_heads_all = shape()
    edit_out_heads(TAUGHT, edited, heads, D)
    ids = ["--src", "10 11 12 13 14 15 3;20 21 22 3", "--tgt", "6 30 31 32 33;6 40 41"]
    spec = ",".join(f"{m}.{h}" for m, h in heads)
    a, b = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
    run_ok("forward", "--model", TAUGHT, "--ablate", spec, "--out", a, *ids)
    run_ok("forward", "--model", edited, "--out", b, *ids)
    A, B = load_json(a), load_json(b)
    plain = os.path.join(tmp, "p.json")
    run_ok("forward", "--model", TAUGHT, "--out", plain, *ids)
    P = load_json(plain)
    n = 0
    for ia, ib, ip in zip(A["items"], B["items"], P["items"]):
        for ma, mb in zip(ia["maps"], ib["maps"]):
            assert ma["id"] == mb["id"]
            for h, (ha, hb) in enumerate(zip(ma["heads"], mb["heads"])):
                assert_close(f"{ma['id']} head {h} weights", ha["weights"], hb["weights"])
                n += 1
    for k, (la, lb) in enumerate(zip(A["logits"], B["logits"])):
        assert_close(f"item {k} probabilities", softmax(la), softmax(lb))
    assert n == 2 * n_heads_all
    # the knock-out changes something downstream (else the test could not fail)
    diff = np.abs(softmax(A["logits"][0]) - softmax(P["logits"][0])).max()
    assert diff > 1e-3, f"knocking out three heads changed no probability ({diff})"


def test_run_ablate_equals_weight_edit(tmp):
    """run --ablate: same translation and trace weights as the edited checkpoint;
    the trace, titles and PNG text chunks name the knocked-out head."""
    edited = os.path.join(tmp, "edited.safetensors")
    edit_out_heads(TAUGHT, edited, [("encoder.2.self", 0)], shape()[0])
    a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    ra = run_ok("run", "--model", TAUGHT, "--ablate", "encoder.2.self.0", "--out", a, TIRED)
    rb = run_ok("run", "--model", edited, "--out", b, TIRED)
    ta, tb = load_json(os.path.join(a, "trace.json")), load_json(os.path.join(b, "trace.json"))
    validate_trace(ta)
    assert ta["ablated"] == [{"map": "encoder.2.self", "head": 0, "mode": "zero"}]
    assert tb["ablated"] == []
    assert ta["target_tokens"] == tb["target_tokens"]
    assert ra.stdout.splitlines()[1] == rb.stdout.splitlines()[1]      # the translation line
    assert "knocked out: encoder.2.self.0" in ra.stdout
    for ma, mb in zip(ta["maps"], tb["maps"]):
        for h in range(len(ma["heads"])):
            assert_close(f"{ma['id']} head {h}", ma["heads"][h]["weights"], mb["heads"][h]["weights"])
    png = open(os.path.join(a, "encoder.2.self.h0.png"), "rb").read()
    assert b"Knocked out" in png and b"encoder.2.self.0" in png
    assert b"Knocked out" not in open(os.path.join(b, "encoder.2.self.h0.png"), "rb").read()


def test_ablate_bad_input(tmp):
    out = os.path.join(tmp, "o")
    for bad, why in [("encoder.9.self.0", "no map encoder.9.self"), ("encoder.2.self.7", "head 7"),
                     ("encoder.2.self", "MAP.HEAD"), ("decoder.0.cross.x", "MAP.HEAD"), ("", "")]:
        r = run_err("run", "--model", TAUGHT, "--ablate", bad, "--out", out, TIRED)
        assert why in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not os.path.exists(out) or os.listdir(out) == []


def test_eval_ablation_row_equals_edited_checkpoint(tmp):
    corpus = os.path.join(tmp, "corpus")
    run_ok("corpus", "--out", corpus, *OLD_CORPUS, cwd=ROOT)
    r = run_ok("eval", "--model", TAUGHT, "--corpus", corpus, "--ablation", "--json", "--limit", "96", timeout=600)
    ab = json.loads(r.stdout)
    assert "knock-outs [" in r.stderr                      # the progress bar
    D, n_heads_all = shape()
    assert len(ab["ablation"]) == n_heads_all
    keys = ["pronoun_accuracy", "pronoun_accuracy_by_language", "translation_exact_match"]
    base = json.loads(run_ok("eval", "--model", TAUGHT, "--corpus", corpus, "--json", "--limit", "96", timeout=600).stdout)
    for k in keys:
        assert ab["baseline"][k] == base[k], k
    falls = [ab["baseline"]["pronoun_accuracy"] - row["pronoun_accuracy"] for row in ab["ablation"]]
    assert falls == sorted(falls, reverse=True), "most harmful first"
    for map_id, h in [("encoder.2.self", 0), ("decoder.0.cross", 2)]:
        row = next(x for x in ab["ablation"] if x["map"] == map_id and x["head"] == h)
        edited = os.path.join(tmp, "edited.safetensors")
        edit_out_heads(TAUGHT, edited, [(map_id, h)], D)
        e = json.loads(run_ok("eval", "--model", edited, "--corpus", corpus, "--json", "--limit", "96", timeout=600).stdout)
        for k in keys:
            assert row[k] == e[k], f"{map_id}.{h} {k}: ablation {row[k]} vs edited checkpoint {e[k]}"
        g = json.loads(run_ok("eval", "--model", TAUGHT, "--ablate", f"{map_id}.{h}", "--corpus", corpus, "--json",
                              "--limit", "96", timeout=600).stdout)
        assert g["ablated"] == [{"map": map_id, "head": h, "mode": "zero"}]
        for k in keys:
            assert g[k] == e[k], k
    # the model card's claim, on all 2,000 held-out pairs: knocking out the taught
    # coreference head costs at least 15 points of French pronoun accuracy (20 on the
    # model card's corpus), as the table stored by eval --ablation --write-metadata says
    full = json.loads(run_ok("eval", "--model", TAUGHT, "--corpus", corpus, "--json", timeout=600).stdout)
    cut = json.loads(run_ok("eval", "--model", TAUGHT, "--ablate", "encoder.2.self.0", "--corpus", corpus,
                            "--json", timeout=600).stdout)
    fr0, fr1 = full["pronoun_accuracy_by_language"]["fr"], cut["pronoun_accuracy_by_language"]["fr"]
    assert fr0 - fr1 >= 0.15, (fr0, fr1)
    stored = json.loads(read_safetensors(TAUGHT)[0]["eval_ablation"])
    row = next(x for x in stored["ablation"] if x["map"] == "encoder.2.self" and x["head"] == 0)
    assert abs(row["pronoun_accuracy_by_language"]["fr"] - fr1) < 0.01, (row, fr1)


def random_model(tmp, seed=5):
    cfg = {"arch": "encoder-decoder", "vocab_size": 13, "d_model": 16, "n_heads": 4, "d_ff": 24,
           "n_enc_layers": 3, "n_dec_layers": 2, "max_len": 12, "norm": "post"}
    base = os.path.join(tmp, "init.safetensors")
    run_ok("model-init", "--config", json.dumps(cfg), "--seed", seed, "--out", base)
    meta, P = read_safetensors(base)
    rng = np.random.default_rng(seed)
    for name in P:
        if name.endswith((".b", ".bq", ".bk", ".bv", ".bo", ".b1", ".b2")):
            P[name] = rng.normal(0, 0.3, P[name].shape).astype(np.float32)
    path = os.path.join(tmp, "model.safetensors")
    write_safetensors(path, meta, P)
    return cfg, meta, P, path


def test_rollout_and_norm_weighted_match_reference(tmp):
    import torch
    cfg, meta, P, path = random_model(tmp)
    SRC, TGT = [[6, 7, 8, 9, 10], [11, 12, 6]], [[2, 7, 8, 9], [2, 12]]
    out = os.path.join(tmp, "f.json")
    run_ok("forward", "--model", path, "--out", out, "--src", "6 7 8 9 10;11 12 6", "--tgt", "2 7 8 9;2 12")
    got = load_json(out)
    src, src_len = pad(SRC)
    tgt, tgt_len = pad(TGT)
    maps, _ = reference(cfg, P, src, src_len, tgt, tgt_len)
    C, H = cfg["d_model"], cfg["n_heads"]
    D = C // H
    for b in range(2):
        # rollout: Ã = ½·mean_h A + ½·I, rows renormalised, multiplied through the layers
        R = None
        for l in range(cfg["n_enc_layers"]):
            A = maps[f"encoder.{l}.self"]["weights"][b].numpy().mean(axis=0)
            At = 0.5 * A + 0.5 * np.eye(A.shape[0])
            At = At / At.sum(axis=1, keepdims=True)
            R = At if R is None else At @ R
            assert_close(f"item {b} rollout layer {l}", got["items"][b]["rollout"][l], R)
    # norm-weighted: α_ij ‖(x_j W_V^h + b_V^h) W_O^h‖ with the reference's weights α,
    # rebuilding each attention's key/value input layer by layer (post-norm).
    F = torch.nn.functional
    captured = {}
    T_ = {k: torch.tensor(v, dtype=torch.float64) for k, v in P.items()}
    import math
    def pe(n):
        out = torch.zeros(n, C, dtype=torch.float64)
        for pos in range(n):
            for i in range(0, C, 2):
                a = pos / (10000 ** (i / C))
                out[pos, i] = math.sin(a)
                if i + 1 < C:
                    out[pos, i + 1] = math.cos(a)
        return out
    def lin(x, name, l, w, b):
        return x @ T_[f"{name}.{w}"][l] + T_[f"{name}.{b}"][l]
    def ln(x, name, l):
        return F.layer_norm(x, (C,), T_[name + ".w"][l], T_[name + ".b"][l], eps=1e-5)
    def attn(xq, xkv, name, l, map_id):
        Wt = maps[map_id]["weights"]                       # (B, H, Tq, Tk) from the reference
        v = lin(xkv, name, l, "wv", "bv")                   # (B, Tk, C)
        wo = T_[f"{name}.wo"][l]                            # (C, C) (in, out)
        fn = torch.stack([torch.linalg.norm(v[:, :, h * D:(h + 1) * D] @ wo[h * D:(h + 1) * D], dim=-1)
                          for h in range(H)], dim=1)        # (B, H, Tk)
        captured[map_id] = Wt * fn[:, :, None, :]
        out = (Wt @ v.view(v.shape[0], v.shape[1], H, D).transpose(1, 2)).transpose(1, 2).reshape(xq.shape)
        return lin(out, name, l, "wo", "bo")
    def ffn(x, name, l):
        return lin(torch.relu(lin(x, name, l, "w1", "b1")), name, l, "w2", "b2")
    x = T_["tok_emb"][torch.tensor(src)] * math.sqrt(C) + pe(len(src[0]))
    for l in range(cfg["n_enc_layers"]):
        x = ln(x + attn(x, x, "enc.self", l, f"encoder.{l}.self"), "enc.ln1", l)
        x = ln(x + ffn(x, "enc.ffn", l), "enc.ln2", l)
    enc = x
    y = T_["tok_emb"][torch.tensor(tgt)] * math.sqrt(C) + pe(len(tgt[0]))
    for l in range(cfg["n_dec_layers"]):
        y = ln(y + attn(y, y, "dec.self", l, f"decoder.{l}.masked_self"), "dec.ln1", l)
        y = ln(y + attn(y, enc, "dec.cross", l, f"decoder.{l}.cross"), "dec.ln2", l)
        y = ln(y + ffn(y, "dec.ffn", l), "dec.ln3", l)
    n = 0
    for b in range(2):
        for m in got["items"][b]["maps"]:
            for h, head in enumerate(m["heads"]):
                assert_close(f"item {b} {m['id']} head {h} norm_weighted", head["norm_weighted"],
                             captured[m["id"]][b, h].numpy(), atol=1e-4)
                n += 1
    assert n == 2 * (3 + 2 + 2) * 4


def test_importance_of_a_head_with_zero_wo_rows_is_exactly_zero(tmp):
    """A head whose rows of W_O are zero adds nothing, so knocking it out changes no
    log-probability: its importance is exactly 0, and other heads' are not all 0."""
    meta, P = read_safetensors(TAUGHT)
    D, n_heads_all = shape()
    P["enc.self.wo"][1][0 * D:1 * D, :] = 0        # encoder.1.self head 0
    P["dec.cross.wo"][0][3 * D:4 * D, :] = 0       # decoder.0.cross head 3
    path = os.path.join(tmp, "m.safetensors")
    write_safetensors(path, meta, P)
    out = os.path.join(tmp, "o")
    r = run_ok("run", "--model", path, "--importance", "--out", out, TIRED)
    assert "knock-outs: Δ log p of “il”" in r.stdout, r.stdout
    t = load_json(os.path.join(out, "trace.json"))
    validate_trace(t)
    imp = t["importance"]
    assert imp["targets"][imp["pronoun_target"]] == "il" and imp["pronoun_source"] == 7
    rows = {(x["map"], x["head"]): x for x in imp["heads"]}
    assert len(rows) == n_heads_all
    for key in [("encoder.1.self", 0), ("decoder.0.cross", 3)]:
        assert all(d == 0 for d in rows[key]["delta_log_p"]), (key, rows[key]["delta_log_p"])
        assert rows[key]["summary"] == 0
    assert any(abs(d) > 1e-3 for x in imp["heads"] for d in x["delta_log_p"])
    for f in ("importance.png", "importance.tokens.png", "explain.7-it.png"):
        assert f in t["images"] and os.path.exists(os.path.join(out, f))


def test_importance_matches_knockout_rescoring(tmp):
    """Δ log p of one head = log p(y) with --ablate minus without, from forward's logits."""
    out = os.path.join(tmp, "o")
    run_ok("run", "--model", TAUGHT, "--importance", "--out", out, TIRED)
    t = load_json(os.path.join(out, "trace.json"))
    vocab = read_safetensors(TAUGHT)[0]
    words = json.loads(vocab["vocab"]) if isinstance(vocab.get("vocab"), str) else vocab["vocab"]
    ids = {w: i for i, w in enumerate(words)}
    src = [ids[w] for w in t["source_tokens"]]
    tgt = [ids[w] for w in t["target_tokens"]]
    targets = tgt[1:] + [ids["<eos>"]]
    def logp(extra):
        f = os.path.join(tmp, "f.json")
        run_ok("forward", "--model", TAUGHT, "--out", f, "--src", " ".join(map(str, src)),
               "--tgt", " ".join(map(str, tgt)), *extra)
        z = np.asarray(load_json(f)["logits"][0], dtype=np.float64)
        z = z - z.max(axis=1, keepdims=True)
        lp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        return lp[np.arange(len(targets)), targets]
    base = logp([])
    assert_close("base log p", t["importance"]["base_log_p"], base, atol=1e-4)
    row = next(x for x in t["importance"]["heads"] if x["map"] == "decoder.1.cross" and x["head"] == 0)
    assert_close("delta of decoder.1.cross.0", row["delta_log_p"], logp(["--ablate", "decoder.1.cross.0"]) - base,
                 atol=1e-4)


def test_shipped_model_names(tmp):
    r = run_ok("info", "--model", "untaught")
    assert "attnviz-en-fr-vi-untaught.safetensors" in r.stdout
    assert "shipped models" in r.stdout and "taught" in r.stdout
    assert "supervised_heads" not in r.stdout.split("shipped models")[0] or "[]" in r.stdout
    r = run_ok("run", "--model", "untaught", "--out", os.path.join(tmp, "u"), TIRED)
    assert "not taught" in r.stdout and "TAUGHT" not in r.stdout
    r = run_ok("run", "--model", "taught", "--out", os.path.join(tmp, "t"), TIRED)
    assert "TAUGHT with gold antecedents" in r.stdout


def test_untaught_model_translates_pronouns_without_a_coreference_head(tmp):
    """The model card's claim about the untaught model, on the first 400 held-out pairs:
    pronouns nearly as right as the taught model's (0.980 against 0.997 on the card's
    2,000), and its best encoder head links a pronoun to its antecedent well under the
    taught head's 0.96 (0.63 on the card's 2,000)."""
    corpus = os.path.join(tmp, "corpus")
    run_ok("corpus", "--out", corpus, *OLD_CORPUS, cwd=ROOT)
    j = json.loads(run_ok("eval", "--model", "untaught", "--corpus", corpus, "--json", "--limit", "400").stdout)
    t = json.loads(run_ok("eval", "--model", "taught", "--corpus", corpus, "--json", "--limit", "400").stdout)
    assert j["pronoun_accuracy"] >= 0.95 and j["translation_exact_match"]["fr"] >= 0.8, j
    assert j["coreference_head"]["accuracy"] < 0.7, j["coreference_head"]
    assert t["coreference_head"]["accuracy"] - j["coreference_head"]["accuracy"] > 0.3, (t, j)
    meta = read_safetensors(UNTAUGHT)[0]
    assert "--supervise-coref 0 " in meta["train_options"] and "--supervise-align 0 " in meta["train_options"]


def test_ablate_on_a_gpt2_folder_equals_zeroed_rows_of_w_o(tmp):
    """--ablate on a foreign model means what it means on the translator: the head's
    output is replaced by zeros before W_O. The independent check: the same folder with
    that head's rows of attn.c_proj.weight (GPT-2's W_O, stored (in, out)) set to zero.
    Every map (layer 1 sees layer 0's changed output) and the next-token line agree."""
    import hf_fixtures as hf
    w = hf.gpt2_weights(C=64, H=4, L=2)
    D, head = 16, 2
    edited = {k: v.copy() for k, v in w.items()}
    edited["h.0.attn.c_proj.weight"][head * D:(head + 1) * D, :] = 0
    a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    hf.write_gpt2_dir(a, weights=w)
    hf.write_gpt2_dir(b, weights=edited)
    text = "The animal didn't cross the street because it was too tired"
    ra = run_ok("run", "--model", a, "--ablate", f"decoder.0.masked_self.{head}", "--no-pictures",
                "--out", os.path.join(tmp, "oa"), text)
    rb = run_ok("run", "--model", b, "--no-pictures", "--out", os.path.join(tmp, "ob"), text)
    rp = run_ok("run", "--model", a, "--no-pictures", "--out", os.path.join(tmp, "op"), text)
    A, B, P = (load_json(os.path.join(tmp, o, "trace.json")) for o in ("oa", "ob", "op"))
    for ma, mb in zip(A["maps"], B["maps"]):
        for h, (ha, hb) in enumerate(zip(ma["heads"], mb["heads"])):
            assert_close(f"{ma['id']} head {h} weights", ha["weights"], hb["weights"])
    nxt = lambda r: next(l for l in r.stdout.splitlines() if "next token:" in l)
    assert nxt(ra) == nxt(rb), (nxt(ra), nxt(rb))
    assert A["ablated"] == [{"map": "decoder.0.masked_self", "head": head, "mode": "zero"}]
    assert "knocked out: decoder.0.masked_self.2" in ra.stdout
    # the knock-out changes layer 1 (else the test could not fail)
    diff = max(abs(x - y) for x, y in zip(np.ravel(A["maps"][1]["heads"][0]["weights"]),
                                          np.ravel(P["maps"][1]["heads"][0]["weights"])))
    assert diff > 1e-4, f"knocking out a head changed nothing downstream ({diff})"
