"""Does this head matter, on every model: knock-outs (--ablate), importance by
knock-out (--importance) and direct logit attribution (--attribution) on GPT-2,
BERT, the Llama family and llama2.c files, and attribution on attnviz's own
post-norm translator.

The independent truths: a knock-out is the same model with that head's slice of
W_O set to zero (a copy of the file edited in NumPy, read by attnviz or by a
PyTorch reference written from the papers' equations); importance is the
log-probability of the predicted token with and without that head, computed in
PyTorch; attribution is recomputed in NumPy from the weights."""
import json, os, struct
import numpy as np
from helpers import ROOT, run_ok, run_err, load_json, validate_trace, read_safetensors
import hf_fixtures as hf
import llama_ref as ref

STORIES = ref.STORIES
LILY = "Lily had a red ball. She gave it to Tom. Then Tom said"
TOL = 1e-5


def have_stories():
    if os.path.exists(os.path.join(STORIES, "stories260K.bin")):
        return True
    print(f"     skip: {STORIES} is absent (the real stories260K weights)")
    return False


def stories_args(path=None):
    return ["--model", path or os.path.join(STORIES, "stories260K.bin"), "--tokenizer", os.path.join(STORIES, "tok512.bin")]


def next_line(r):
    return next(l for l in r.stdout.splitlines() if "next token:" in l)


def max_map_diff(A, B):
    worst = 0.0
    assert [m["id"] for m in A["maps"]] == [m["id"] for m in B["maps"]]
    for ma, mb in zip(A["maps"], B["maps"]):
        for ha, hb in zip(ma["heads"], mb["heads"]):
            worst = max(worst, float(np.abs(np.array(ha["weights"], float) - np.array(hb["weights"], float)).max()))
    return worst


def zero_wo_columns_llama2c(src, dst, layer, head):
    """A copy of a llama2.c checkpoint whose wo[layer] columns of head (its input
    dimensions head·D … head·D + D - 1; wo is stored [out, in]) are zero."""
    blob = bytearray(open(src, "rb").read())
    dim, hidden, L, H, Hkv, V, P = struct.unpack("<7i", blob[:28])
    D, kv = dim // H, Hkv * dim // H
    off = 28 + 4 * (abs(V) * dim + L * dim + L * dim * dim + 2 * L * kv * dim)   # emb, rms_att, wq, wk, wv
    wo = np.frombuffer(blob, dtype="<f4", count=L * dim * dim, offset=off).reshape(L, dim, dim).copy()
    wo[layer][:, head * D:(head + 1) * D] = 0
    blob[off:off + wo.nbytes] = wo.tobytes()
    open(dst, "wb").write(bytes(blob))


def test_stories260k_knockout_equals_zeroed_wo_columns(tmp):
    if not have_stories():
        return
    layer, head = 2, 6
    edited = os.path.join(tmp, "edited.bin")
    zero_wo_columns_llama2c(os.path.join(STORIES, "stories260K.bin"), edited, layer, head)
    oa, ob, op = (os.path.join(tmp, n) for n in ("a", "b", "p"))
    ra = run_ok("run", *stories_args(), "--ablate", f"decoder.{layer}.masked_self.{head}", "--no-pictures", "--out", oa, LILY)
    rb = run_ok("run", *stories_args(edited), "--no-pictures", "--out", ob, LILY)
    run_ok("run", *stories_args(), "--no-pictures", "--out", op, LILY)
    A, B, P = (load_json(os.path.join(o, "trace.json")) for o in (oa, ob, op))
    assert max_map_diff(A, B) <= TOL
    assert next_line(ra) == next_line(rb), (next_line(ra), next_line(rb))
    assert max_map_diff(A, P) > 1e-3, "the knock-out changed no later map (the test could not fail)"


def tiny_qwen3():
    return ref.qwen3_config(hidden_size=48, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                            intermediate_size=80, num_hidden_layers=2, vocab_size=300)


WORDS = ["Lily", "had", "a", "red", "ball", ".", "She", "gave", "it", "to", "Tom", "and", "he", "smiled"]
TEXT = "Lily had a red ball . She gave it to Tom and he"


def qwen3_folder(tmp):
    cfg = tiny_qwen3()
    d = os.path.join(tmp, "qwen3")
    w = ref.hf_weights(cfg, seed=7)
    ref.write_hf_dir(d, cfg, w)
    vocab = ref.write_tiny_tokenizer(d, WORDS, post_processor=False, add_bos=False)
    ids = [vocab[t] for t in TEXT.split()]
    return d, cfg, w, ids, vocab


def knocked(w, name, head, D):
    """w with the columns of one head zeroed in the (out, in) W_O called name."""
    e = {k: v.copy() for k, v in w.items()}
    e[name][:, head * D:(head + 1) * D] = 0
    return e


def check_maps(trace, atts):
    for l, m in enumerate(trace["maps"]):
        for h, hd in enumerate(m["heads"]):
            assert np.abs(np.array(hd["weights"]) - atts[l][h]).max() <= TOL, (m["id"], h)


def test_knockout_on_qwen3_and_bert_folders_equals_pytorch(tmp):
    d, cfg, w, ids, vocab = qwen3_folder(tmp)
    out = os.path.join(tmp, "q")
    r = run_ok("run", "--model", d, "--ablate", "decoder.0.masked_self.1", "--no-pictures", "--out", out, TEXT)
    trace = load_json(os.path.join(out, "trace.json"))
    validate_trace(trace)
    atts, logits, _ = ref.hf_forward(cfg, knocked(w, "model.layers.0.self_attn.o_proj.weight", 1, 16), ids)
    check_maps(trace, atts)
    base, logits0, _ = ref.hf_forward(cfg, w, ids)
    assert np.abs(atts[1] - base[1]).max() > 1e-3, "the knock-out changed nothing (the test could not fail)"
    inv = {v: k for k, v in vocab.items()}
    top = int(np.argmax(logits[-1]))
    if top in inv:
        assert f"“{inv[top]}”" in next_line(r).split(",")[0], (next_line(r), inv[top])
    # BERT: attention.output.dense is W_O (nn.Linear, stored (out, in))
    bd = os.path.join(tmp, "bert")
    wb = hf.bert_weights(C=64, H=4, L=2)
    hf.write_bert_dir(bd, weights=wb)
    text = "The animal didn't cross the [MASK] because it was too tired."
    out = os.path.join(tmp, "b")
    r = run_ok("run", "--model", bd, "--ablate", "encoder.0.self.3", "--no-pictures", "--out", out, text)
    trace = load_json(os.path.join(out, "trace.json"))
    bids = [int(x) for x in run_ok("tokenize", "--model", bd, input=text + "\n").stdout.split()]
    atts, logits = hf.bert_reference(knocked(wb, "bert.encoder.layer.0.attention.output.dense.weight", 3, 16), bids)
    check_maps(trace, atts)
    pos = trace["source_tokens"].index("[MASK]")
    line = next(l for l in r.stdout.splitlines() if "[MASK] at" in l)
    assert f"“{hf.bert_vocab_lines()[int(np.argmax(logits[pos]))]}”" in line.split("→")[1].split(",")[0], line


def log_softmax(z):
    z = np.asarray(z, float)
    return z - z.max() - np.log(np.exp(z - z.max()).sum())


def test_importance_of_a_head_equals_pytorch(tmp):
    """Δ log p of the predicted next token when one head is out, against PyTorch."""
    d, cfg, w, ids, vocab = qwen3_folder(tmp)
    out = os.path.join(tmp, "q")
    r = run_ok("run", "--model", d, "--importance", "--out", out, TEXT)
    trace = load_json(os.path.join(out, "trace.json"))
    validate_trace(trace)
    imp = trace["importance"]
    _, logits, _ = ref.hf_forward(cfg, w, ids)
    top = int(np.argmax(logits[-1]))
    assert imp["positions"] == [len(ids) - 1]
    assert abs(imp["base_log_p"][0] - log_softmax(logits[-1])[top]) <= 1e-4
    rows = {(h["map"], h["head"]): h for h in imp["heads"]}
    assert len(rows) == 2 * 4
    for layer, head in ((0, 1), (1, 3)):
        _, lk, _ = ref.hf_forward(cfg, knocked(w, f"model.layers.{layer}.self_attn.o_proj.weight", head, 16), ids)
        want = log_softmax(lk[-1])[top] - log_softmax(logits[-1])[top]
        got = rows[(f"decoder.{layer}.masked_self", head)]
        assert abs(got["summary"] - want) <= 1e-4 and abs(got["delta_log_p"][0] - want) <= 1e-4, (got, want)
    assert "importance.png" in os.listdir(out)
    assert "knock-outs: Δ log p of the predicted next token" in r.stdout
    # the terminal's five are the five lowest of the trace, lowest first
    lowest = sorted(imp["heads"], key=lambda h: h["summary"])[:5]
    listed = [l.split() for l in r.stdout.split("the 5 that cost most:\n")[1].splitlines()[:5]]
    assert [(x[0], int(x[2])) for x in listed] == [(h["map"], h["head"]) for h in lowest], listed


def test_importance_on_bert_scores_each_mask(tmp):
    bd = os.path.join(tmp, "bert")
    wb = hf.bert_weights(C=64, H=4, L=2)
    hf.write_bert_dir(bd, weights=wb)
    text = "The [MASK] didn't cross the [MASK] because it was too tired."
    out = os.path.join(tmp, "b")
    r = run_ok("run", "--model", bd, "--importance", "--out", out, text)
    imp = load_json(os.path.join(out, "trace.json"))["importance"]
    bids = [int(x) for x in run_ok("tokenize", "--model", bd, input=text + "\n").stdout.split()]
    _, base = hf.bert_reference(wb, bids)
    _, ko = hf.bert_reference(knocked(wb, "bert.encoder.layer.1.attention.output.dense.weight", 2, 16), bids)
    pos = [i for i, t in enumerate(bids) if t == 103]
    assert imp["positions"] == pos
    want = [log_softmax(ko[p])[int(np.argmax(base[p]))] - log_softmax(base[p])[int(np.argmax(base[p]))] for p in pos]
    got = next(h for h in imp["heads"] if h["map"] == "encoder.1.self" and h["head"] == 2)
    assert np.abs(np.array(got["delta_log_p"]) - want).max() <= 1e-4, (got, want)
    assert abs(got["summary"] - np.mean(want)) <= 1e-4
    assert "the [MASK] fillings (mean over" in r.stdout
    assert {"importance.png", "importance.tokens.png"} <= set(os.listdir(out))


def test_importance_keeps_ablated_heads_out_and_bad_heads_fail(tmp):
    d, cfg, w, ids, vocab = qwen3_folder(tmp)
    out = os.path.join(tmp, "q")
    run_ok("run", "--model", d, "--importance", "--ablate", "decoder.1.masked_self.0", "--no-pictures", "--out", out, TEXT)
    imp = load_json(os.path.join(out, "trace.json"))["importance"]
    row = next(h for h in imp["heads"] if h["map"] == "decoder.1.masked_self" and h["head"] == 0)
    assert row["summary"] is None
    _, base, _ = ref.hf_forward(cfg, knocked(w, "model.layers.1.self_attn.o_proj.weight", 0, 16), ids)
    assert abs(imp["base_log_p"][0] - log_softmax(base[-1]).max()) <= 1e-4
    for bad in ("decoder.7.masked_self.0", "decoder.0.masked_self.9", "decoder.0", "encoder.0.self.1"):
        r = run_err("run", "--model", d, "--importance", "--ablate", bad, "--out", os.path.join(tmp, "x"), TEXT)
        assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1, (bad, r.stderr)
    bd = os.path.join(tmp, "bert")
    hf.write_bert_dir(bd)
    r = run_err("run", "--model", bd, "--importance", "--out", os.path.join(tmp, "y"), "no mask here")
    assert len(r.stderr.strip().splitlines()) == 1 and "[MASK]" in r.stderr, r.stderr


# ---- direct logit attribution, recomputed from the weights ----

def share(v, g):
    return float(np.dot(v, g))


def attribution_llama2c(cfg, w, ids, pos, token):
    """{heads (L, H), mlp (L), embedding, bias, logit} of a llama2.c model, from the math:
    every part of the residual stream at pos dotted with rms_final ⊙ cls[token] / rms(x)."""
    T, C, H, Hkv, L = len(ids), cfg["dim"], cfg["H"], cfg["Hkv"], cfg["L"]
    D = C // H
    rms = lambda x, g: x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * g
    x = w["emb"][ids].copy()
    freq = 10000.0 ** (-np.arange(0, D, 2) / D)
    ang = np.arange(T)[:, None] * freq[None, :]
    cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]

    def rope(v):
        a, b = v[..., 0::2], v[..., 1::2]
        out = np.empty_like(v)
        out[..., 0::2], out[..., 1::2] = a * cos - b * sin, a * sin + b * cos
        return out

    causal = np.tril(np.ones((T, T), dtype=bool))
    heads, mlps, emb = np.zeros((L, H, C)), np.zeros((L, C)), x[pos].copy()
    for l in range(L):
        h = rms(x, w["rms_att"][l])
        q, k = rope((h @ w["wq"][l].T).reshape(T, H, D)), rope((h @ w["wk"][l].T).reshape(T, Hkv, D))
        v = (h @ w["wv"][l].T).reshape(T, Hkv, D)
        out = np.empty((T, H, D))
        for hh in range(H):
            kv = hh // (H // Hkv)
            s = np.where(causal, q[:, hh] @ k[:, kv].T / np.sqrt(D), -np.inf)
            a = np.exp(s - s.max(-1, keepdims=True))
            out[:, hh] = (a / a.sum(-1, keepdims=True)) @ v[:, kv]
            heads[l, hh] = out[pos, hh] @ w["wo"][l][:, hh * D:(hh + 1) * D].T
        x = x + out.reshape(T, C) @ w["wo"][l].T
        h = rms(x, w["rms_ffn"][l])
        g = h @ w["w1"][l].T
        f = ((g / (1 + np.exp(-g))) * (h @ w["w3"][l].T)) @ w["w2"][l].T
        mlps[l] = f[pos]
        x = x + f
    r = x[pos]
    g = w["rms_final"] * w["cls"][token] / np.sqrt((r * r).mean() + 1e-5)
    return {"heads": np.array([[share(heads[l, h], g) for h in range(H)] for l in range(L)]),
            "mlp": np.array([share(mlps[l], g) for l in range(L)]), "embedding": share(emb, g), "bias": 0.0,
            "logit": float(rms(x[pos], w["rms_final"]) @ w["cls"][token])}


def attribution_gpt2(w, ids, pos, token, H=4, eps=1e-5):
    """The same for GPT-2: LayerNorm's centring is linear, so each part is centred
    with its own mean; the biases of c_proj (attention) and ln_f go to bias."""
    def ln(x, g, b):
        mu = x.mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) * g + b
    W = {k: v.astype(np.float64) for k, v in w.items()}
    T = len(ids)
    x = W["wte.weight"][ids] + W["wpe.weight"][:T]
    C = x.shape[1]
    D, L = C // H, sum(1 for k in w if k.endswith("ln_1.weight"))
    gelu = lambda u: 0.5 * u * (1 + np.tanh(np.sqrt(2 / np.pi) * (u + 0.044715 * u ** 3)))
    causal = np.tril(np.ones((T, T), dtype=bool))
    heads, mlps, emb, attn_bias = np.zeros((L, H, C)), np.zeros((L, C)), x[pos].copy(), np.zeros(C)
    for l in range(L):
        p = lambda n: W[f"h.{l}.{n}"]
        qkv = ln(x, p("ln_1.weight"), p("ln_1.bias")) @ p("attn.c_attn.weight") + p("attn.c_attn.bias")
        q, k, v = (qkv[:, i * C:(i + 1) * C].reshape(T, H, D) for i in range(3))
        out = np.empty((T, H, D))
        for hh in range(H):
            s = np.where(causal, q[:, hh] @ k[:, hh].T / np.sqrt(D), -np.inf)
            a = np.exp(s - s.max(-1, keepdims=True))
            out[:, hh] = (a / a.sum(-1, keepdims=True)) @ v[:, hh]
            heads[l, hh] = out[pos, hh] @ p("attn.c_proj.weight")[hh * D:(hh + 1) * D, :]
        x = x + out.reshape(T, C) @ p("attn.c_proj.weight") + p("attn.c_proj.bias")
        attn_bias += p("attn.c_proj.bias")
        f = gelu(ln(x, p("ln_2.weight"), p("ln_2.bias")) @ p("mlp.c_fc.weight") + p("mlp.c_fc.bias")) \
            @ p("mlp.c_proj.weight") + p("mlp.c_proj.bias")
        mlps[l] = f[pos]
        x = x + f
    r = x[pos]
    sigma = np.sqrt(((r - r.mean()) ** 2).mean() + eps)
    u = W["ln_f.weight"] * W["wte.weight"][token]
    g = (u - u.mean()) / sigma
    return {"heads": np.array([[share(heads[l, h], g) for h in range(H)] for l in range(L)]),
            "mlp": np.array([share(mlps[l], g) for l in range(L)]), "embedding": share(emb, g),
            "bias": share(attn_bias, g) + float(W["ln_f.bias"] @ W["wte.weight"][token]),
            "logit": float(ln(r, W["ln_f.weight"], W["ln_f.bias"]) @ W["wte.weight"][token])}


def check_attribution(got, want, tol=1e-3):
    for k in ("logit", "embedding", "bias"):
        assert abs(got[k] - want[k]) <= tol, (k, got[k], want[k])
    assert np.abs(np.array(got["heads"]) - want["heads"]).max() <= tol, (got["heads"], want["heads"])
    assert np.abs(np.array(got["mlp"]) - want["mlp"]).max() <= tol, (got["mlp"], want["mlp"])
    parts = np.sum(got["heads"]) + np.sum(got["mlp"]) + got["embedding"] + got["bias"]
    assert abs(parts - got["logit"]) <= tol, (parts, got["logit"])


def test_attribution_on_stories260k_equals_numpy(tmp):
    if not have_stories():
        return
    cfg, w = ref.read_llama2c(os.path.join(STORIES, "stories260K.bin"))
    out = os.path.join(tmp, "o")
    r = run_ok("run", *stories_args(), "--attribution", "--out", out, LILY)
    trace = load_json(os.path.join(out, "trace.json"))
    validate_trace(trace)
    at = trace["attribution"]
    pieces, scores = ref.read_tok(os.path.join(STORIES, "tok512.bin"), cfg["V"])
    ids = ref.encode(pieces, scores, LILY)
    assert at["position"] == len(ids) - 1 and len(trace["target_tokens"]) == len(ids)
    _, logits, _ = ref.llama2c_forward(cfg, w, ids)
    assert at["token_id"] == int(np.argmax(logits[-1]))
    check_attribution(at, attribution_llama2c(cfg, w, ids, len(ids) - 1, at["token_id"]))
    assert "attribution.png" in trace["images"] and os.path.exists(os.path.join(out, "attribution.png"))
    assert f"attribution of “{at['token']}”" in r.stdout and "not a causal claim" in r.stdout
    # the terminal's top head is the trace's largest share
    l, h = np.unravel_index(int(np.argmax(at["heads"])), np.array(at["heads"]).shape)
    assert f"push it up most: decoder.{l}.masked_self head {h} " in r.stdout, r.stdout


def test_attribution_on_gpt2_with_biases_and_a_knockout_equals_numpy(tmp):
    w = hf.gpt2_weights(C=64, H=4, L=2)
    for k in list(w):   # biases that are not zero, so the bias term is tested
        if k.endswith(".bias"):
            w[k] = (np.random.default_rng(len(k)).standard_normal(w[k].shape) * 0.2).astype(np.float32)
    d = os.path.join(tmp, "gpt2")
    hf.write_gpt2_dir(d, weights=w)
    text = "The animal didn't cross the street because it"
    ids = [int(x) for x in run_ok("tokenize", "--model", d, input=text + "\n").stdout.split()]
    out = os.path.join(tmp, "o")
    run_ok("run", "--model", d, "--attribution", "--no-pictures", "--out", out, text)
    at = load_json(os.path.join(out, "trace.json"))["attribution"]
    want = attribution_gpt2(w, ids, len(ids) - 1, at["token_id"])
    assert abs(want["bias"]) > 1e-2, "the bias term is not exercised"
    check_attribution(at, want)
    # a knocked-out head adds nothing, and the rest is the edited model's
    out = os.path.join(tmp, "k")
    run_ok("run", "--model", d, "--attribution", "--ablate", "decoder.1.masked_self.2", "--no-pictures", "--out", out, text)
    ak = load_json(os.path.join(out, "trace.json"))["attribution"]
    e = {k: v.copy() for k, v in w.items()}
    e["h.1.attn.c_proj.weight"][2 * 16:3 * 16, :] = 0
    want = attribution_gpt2(e, ids, len(ids) - 1, ak["token_id"])
    assert ak["heads"][1][2] == 0
    check_attribution(ak, want)


def test_attribution_refusals(tmp):
    bd = os.path.join(tmp, "bert")
    hf.write_bert_dir(bd)
    r = run_err("run", "--model", bd, "--attribution", "--out", os.path.join(tmp, "x"), "the [MASK] was tired .")
    assert len(r.stderr.strip().splitlines()) == 1 and "--attribution" in r.stderr, r.stderr


def test_generate_attribution_of_the_first_written_token_equals_numpy(tmp):
    if not have_stories():
        return
    cfg, w = ref.read_llama2c(os.path.join(STORIES, "stories260K.bin"))
    pieces, scores = ref.read_tok(os.path.join(STORIES, "tok512.bin"), cfg["V"])
    prompt = "Once upon a time"
    ids = ref.encode(pieces, scores, prompt)
    out = os.path.join(tmp, "g")   # sampled: the token written need not be the most likely
    r = run_ok("generate", *stories_args(), "--attribution", "--steps", "3", "--temperature", "1.5", "--seed", "4",
               "--out", out, prompt)
    trace = load_json(os.path.join(out, "trace.json"))
    validate_trace(trace)
    at, step = trace["attribution"], trace["generation"]["steps"][0]
    assert at["step"] == 0 and at["position"] == len(ids) - 1 and at["token_id"] == step["id"]
    check_attribution(at, attribution_llama2c(cfg, w, ids, len(ids) - 1, at["token_id"]))
    assert "attribution.png" in trace["images"] and "attribution of" in r.stdout
    assert 'id="attribution"' in open(os.path.join(out, "index.html"), encoding="utf-8").read()


# ---- the translator: post-norm, two kinds of decoder heads ----

TAUGHT = os.path.join(ROOT, "samples", "models", "attnviz-en-fr-vi.safetensors")
TIRED = "The animal didn't cross the street because it was too tired"


def translator_attribution(path, src, tgt, pos, token):
    """The translator read in float64 from its checkpoint (model.h's equations:
    x = tok_emb·√C + PE, post-norm x ← LN(x + f(x)), logits = x·W_out + b_out), and
    the logit of token at decoder position pos split by walking its direction
    BACKWARDS: d starts as W_out's column of the token; a LayerNorm with its 1/σ
    frozen is the linear map g ⊙ (y − mean y)/σ (plus β), so d ← (g⊙d − mean(g⊙d))/σ
    and β·d joins the bias; each part is dotted with d where it enters the stream."""
    meta, P = read_safetensors(path)
    cfg = json.loads(meta["config"])
    P = {k: v.astype(np.float64) for k, v in P.items()}
    C, H = cfg["d_model"], cfg["n_heads"]
    D = C // H
    assert cfg["norm"] == "post"

    def pe(n):
        i = np.arange(C) - np.arange(C) % 2
        ang = np.arange(n)[:, None] / 10000.0 ** (i[None, :] / C)
        return np.where(np.arange(C)[None, :] % 2 == 0, np.sin(ang), np.cos(ang))

    def ln(x, name, l):
        mu = x.mean(-1, keepdims=True)
        rs = 1.0 / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5)
        return P[name + ".w"][l] * (x - mu) * rs + P[name + ".b"][l], rs[:, 0]

    def heads_out(xq, xkv, name, l, causal):
        q, k, v = (x @ P[f"{name}.w{n}"][l] + P[f"{name}.b{n}"][l] for x, n in ((xq, "q"), (xkv, "k"), (xkv, "v")))
        out = np.zeros((xq.shape[0], H, C))           # each head's output through its rows of W_O
        for h in range(H):
            s = q[:, h * D:(h + 1) * D] @ k[:, h * D:(h + 1) * D].T / np.sqrt(D)
            if causal:
                s = np.where(np.tril(np.ones(s.shape)) > 0, s, -np.inf)
            a = np.exp(s - s.max(1, keepdims=True))
            a /= a.sum(1, keepdims=True)
            out[:, h] = (a @ v[:, h * D:(h + 1) * D]) @ P[f"{name}.wo"][l][h * D:(h + 1) * D]
        return out, P[f"{name}.bo"][l]

    def ffn(x, name, l):
        return np.maximum(x @ P[name + ".w1"][l] + P[name + ".b1"][l], 0) @ P[name + ".w2"][l] + P[name + ".b2"][l]

    x = P["tok_emb"][src] * np.sqrt(C) + pe(len(src))
    for l in range(cfg["n_enc_layers"]):
        o, b = heads_out(x, x, "enc.self", l, False)
        x, _ = ln(x + o.sum(1) + b, "enc.ln1", l)
        x, _ = ln(x + ffn(x, "enc.ffn", l), "enc.ln2", l)
    enc = x
    y = P["tok_emb"][tgt] * np.sqrt(C) + pe(len(tgt))
    events = [("embedding", y[pos])]
    for l in range(cfg["n_dec_layers"]):
        for kind, name, kv, lnn in ((0, "dec.self", None, "dec.ln1"), (1, "dec.cross", enc, "dec.ln2")):
            o, b = heads_out(y, y if kv is None else kv, name, l, kv is None)
            events.append(("heads", kind, l, o[pos], b))
            y, rs = ln(y + o.sum(1) + b, lnn, l)
            events.append(("ln", lnn, l, rs[pos]))
        f = ffn(y, "dec.ffn", l)
        events.append(("mlp", l, f[pos]))
        y, rs = ln(y + f, "dec.ln3", l)
        events.append(("ln", "dec.ln3", l, rs[pos]))
    L = cfg["n_dec_layers"]
    d = P["out.w"][:, token].copy()
    want = {"heads": np.zeros((2, L, H)), "mlp": np.zeros(L), "bias": P["out.b"][token],
            "logit": float(y[pos] @ P["out.w"][:, token] + P["out.b"][token])}
    for e in reversed(events):
        if e[0] == "ln":
            want["bias"] += P[e[1] + ".b"][e[2]] @ d
            gd = P[e[1] + ".w"][e[2]] * d
            d = (gd - gd.mean()) * e[3]
        elif e[0] == "heads":
            want["heads"][e[1], e[2]] = e[3] @ d
            want["bias"] += e[4] @ d
        elif e[0] == "mlp":
            want["mlp"][e[1]] = e[2] @ d
        else:
            want["embedding"] = e[1] @ d
    return want


def translator_ids(trace):
    meta, _ = read_safetensors(TAUGHT)
    words = json.loads(meta["vocab"]) if isinstance(meta.get("vocab"), str) else meta["vocab"]
    ids = {w: i for i, w in enumerate(words)}
    return [ids[w] for w in trace["source_read"]], [ids[w] for w in trace["target_tokens"]]


def check_translator(at, trace, tol=1e-3):
    src, tgt = translator_ids(trace)
    want = translator_attribution(TAUGHT, src, tgt, at["position"], at["token_id"])
    got = dict(at, heads=[at["heads"], at["cross_heads"]])
    check_attribution(got, want, tol)
    return want


def test_attribution_on_the_translator_equals_numpy(tmp):
    """run --to vi: the word split is “nó”, the translation of “it” (the word
    --importance scores), each part within 1e-3 of the float64 reference, the
    parts adding up to the model's logit, which is the reference's."""
    out = os.path.join(tmp, "o")
    r = run_ok("run", "--model", TAUGHT, "--to", "vi", "--attribution", "--out", out, TIRED)
    trace = load_json(os.path.join(out, "trace.json"))
    validate_trace(trace)
    at = trace["attribution"]
    assert at["token"] == "nó" and trace["target_tokens"][at["position"] + 1] == "nó", at
    assert at["what"] == "the translation of “it”"
    assert np.array(at["heads"]).shape == np.array(at["cross_heads"]).shape == (2, 4)
    want = check_translator(at, trace)
    assert abs(want["bias"]) > 1e-2, "the bias part (b_O, every LayerNorm's β, b_out) is not exercised"
    assert "attribution.png" in trace["images"] and os.path.exists(os.path.join(out, "attribution.png"))
    assert "attribution of “nó” (the translation of “it”" in r.stdout and "every LayerNorm" in r.stdout, r.stdout
    shares = np.array([at["heads"], at["cross_heads"]])
    k, l, h = np.unravel_index(int(np.argmax(shares)), shares.shape)
    kind = ["masked_self", "cross"][k]
    assert f"push it up most: decoder.{l}.{kind} head {h} " in r.stdout, r.stdout
    page = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    assert 'id="attribution"' in page and "not a causal claim" in page


def test_attribution_on_the_translator_without_a_pronoun_and_with_a_knockout(tmp):
    """No pronoun: the first word written (French).  A knocked-out head's share is
    0 and the rest is still the reference of the model with that head out."""
    out = os.path.join(tmp, "o")
    run_ok("run", "--model", TAUGHT, "--attribution", "--ablate", "decoder.1.cross.0", "--no-pictures", "--out", out,
           "the cat is tired .")
    trace = load_json(os.path.join(out, "trace.json"))
    at = trace["attribution"]
    assert at["position"] == 0 and at["what"] == "the first word written" and at["cross_heads"][1][0] == 0
    meta, P = read_safetensors(TAUGHT)
    P["dec.cross.wo"][1][0:32, :] = 0        # the same model without decoder.1.cross head 0 (d_k 32)
    edited = os.path.join(tmp, "e.safetensors")
    from helpers import write_safetensors
    write_safetensors(edited, meta, P)
    src, tgt = translator_ids(trace)
    want = translator_attribution(edited, src, tgt, at["position"], at["token_id"])
    check_attribution(dict(at, heads=[at["heads"], at["cross_heads"]]), want)
    # a translation given (--target): its first word, said so
    out = os.path.join(tmp, "t")
    run_ok("run", "--model", TAUGHT, "--attribution", "--target", "le chat est fatigué .", "--no-pictures", "--out", out,
           "the cat is tired .")
    trace = load_json(os.path.join(out, "trace.json"))
    at = trace["attribution"]
    assert at["token"] == "le" and at["what"] == "the first word of the translation given", at
    check_translator(at, trace)


def test_generate_attribution_on_the_translator_equals_numpy(tmp):
    out = os.path.join(tmp, "g")
    r = run_ok("generate", "--model", TAUGHT, "--to", "vi", "--attribution", "--out", out, TIRED)
    trace = load_json(os.path.join(out, "trace.json"))
    validate_trace(trace)
    at = trace["attribution"]
    assert at["step"] == 0 and at["position"] == 0 and at["token"] == trace["target_tokens"][1]
    check_translator(at, trace)
    assert "attribution.png" in trace["images"] and f"attribution of “{at['token']}” (the first word written" in r.stdout
    assert 'id="attribution"' in open(os.path.join(out, "index.html"), encoding="utf-8").read()
