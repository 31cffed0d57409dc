"""References for the Llama family, written from the formats and the architectures
(not from attnviz's C code), in float64:

  llama2.c  a NumPy reader of the version-0 checkpoint and of tokenizer.bin, the
            encoder as /work/shared/models/README.md describes it, and the forward
            pass (RMSNorm, RoPE on consecutive pairs, grouped-query attention, SwiGLU);
  Hugging Face  tiny random checkpoints in the save_pretrained layout (shrunk copies
            of the real configs in /work/shared/hf/, or literal ones modelled on them)
            and a PyTorch forward pass of Llama, Mistral, Qwen2, Qwen3 and Gemma 3 as
            their papers and model cards describe them: RMSNorm (Gemma: 1 + w),
            rotate-half RoPE with default, linear and llama3 frequencies, repeated
            key/value heads, causal or sliding-window masks, SwiGLU / GeGLU.
Every forward returns per layer the (H, T, T) attention weights, the (T, V) logits
and per layer q, k before and after RoPE as (T, heads, D)."""
import copy, json, math, os, struct
import numpy as np
import hf_fixtures as hf

SHARED = "/work/shared"
STORIES = os.path.join(SHARED, "models", "stories260K")
HF_REAL = os.path.join(SHARED, "hf")


# ---- llama2.c: the checkpoint and the tokenizer ----

def read_llama2c(path):
    """(config dict, {name: float64 array}) of a version-0 llama2.c checkpoint."""
    with open(path, "rb") as f:
        blob = f.read()
    dim, hidden, L, H, Hkv, V, P = struct.unpack("<7i", blob[:28])
    cfg = {"dim": dim, "hidden": hidden, "L": L, "H": H, "Hkv": Hkv, "V": abs(V), "P": P, "shared": V > 0}
    D = dim // H
    kv = Hkv * D
    a = np.frombuffer(blob, dtype="<f4", offset=28).astype(np.float64)
    shapes = [("emb", (abs(V), dim)), ("rms_att", (L, dim)), ("wq", (L, dim, dim)), ("wk", (L, kv, dim)),
              ("wv", (L, kv, dim)), ("wo", (L, dim, dim)), ("rms_ffn", (L, dim)), ("w1", (L, hidden, dim)),
              ("w2", (L, dim, hidden)), ("w3", (L, hidden, dim)), ("rms_final", (dim,)), ("freq", (P, D))]
    if V < 0:
        shapes.append(("wcls", (-V, dim)))
    w, off = {}, 0
    for name, shape in shapes:
        n = int(np.prod(shape))
        w[name] = a[off:off + n].reshape(shape)
        off += n
    assert off == a.size, f"{path}: {a.size - off} floats left over"
    w["cls"] = w["emb"] if V > 0 else w["wcls"]
    return cfg, w


def read_tok(path, n):
    """(pieces as bytes, scores) of a tokenizer.bin with n tokens."""
    with open(path, "rb") as f:
        blob = f.read()
    off, pieces, scores = 4, [], []
    for _ in range(n):
        score, ln = struct.unpack("<fi", blob[off:off + 8])
        pieces.append(blob[off + 8:off + 8 + ln])
        scores.append(score)
        off += 8 + ln
    return pieces, scores


def encode(pieces, scores, text):
    """The encoder of the models README: BOS, a leading space piece, each character's
    piece or its UTF-8 bytes + 3, then merges of the best-scoring adjacent pair."""
    index = {}
    for i, p in enumerate(pieces):
        index.setdefault(p, i)
    ids = [1]
    if text:
        ids.append(index.get(b" ", 32 + 3))
    for ch in text:
        b = ch.encode("utf-8")
        ids += [index[b]] if b in index else [x + 3 for x in b]
    while True:
        best = None
        for i in range(len(ids) - 1):
            j = index.get(pieces[ids[i]] + pieces[ids[i + 1]])
            if j is not None and (best is None or scores[j] > scores[best[1]]):
                best = (i, j)
        if best is None:
            return ids
        i, j = best
        ids[i:i + 2] = [j]


def _rms(x, w, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def _softmax(s):
    s = s - s.max(-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(-1, keepdims=True)


def llama2c_forward(cfg, w, ids):
    """(atts [L × (H, T, T)], logits (T, V), qk [L × (q_pre, q_rot, k_pre, k_rot)])."""
    T, C, H, Hkv = len(ids), cfg["dim"], cfg["H"], cfg["Hkv"]
    D = C // H
    x = w["emb"][ids].copy()
    freq = 10000.0 ** (-np.arange(0, D, 2) / D)                   # (D/2)
    ang = np.arange(T)[:, None] * freq[None, :]                    # (T, D/2)
    cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]

    def rope(v):                                                   # (T, n, D): pairs (2i, 2i+1)
        a, b = v[..., 0::2], v[..., 1::2]
        out = np.empty_like(v)
        out[..., 0::2] = a * cos - b * sin
        out[..., 1::2] = a * sin + b * cos
        return out

    causal = np.tril(np.ones((T, T), dtype=bool))
    atts, qk = [], []
    for l in range(cfg["L"]):
        h = _rms(x, w["rms_att"][l], 1e-5)
        q = (h @ w["wq"][l].T).reshape(T, H, D)
        k = (h @ w["wk"][l].T).reshape(T, Hkv, D)
        v = (h @ w["wv"][l].T).reshape(T, Hkv, D)
        qr, kr = rope(q), rope(k)
        qk.append((q, qr, k, kr))
        a = np.empty((H, T, T))
        out = np.empty((T, H, D))
        for hh in range(H):
            kv = hh // (H // Hkv)
            s = qr[:, hh] @ kr[:, kv].T / math.sqrt(D)
            a[hh] = _softmax(np.where(causal, s, -np.inf))
            out[:, hh] = a[hh] @ v[:, kv]
        atts.append(a)
        x = x + out.reshape(T, C) @ w["wo"][l].T
        h = _rms(x, w["rms_ffn"][l], 1e-5)
        g = h @ w["w1"][l].T
        x = x + ((g / (1 + np.exp(-g))) * (h @ w["w3"][l].T)) @ w["w2"][l].T
    x = _rms(x, w["rms_final"], 1e-5)
    return atts, x @ w["cls"].T, qk


def write_llama2c(path, dim=16, hidden=24, L=2, H=4, Hkv=2, V=300, P=32, shared=True, seed=3, tail=b""):
    """A small random version-0 checkpoint; returns its bytes' length."""
    rng = np.random.default_rng(seed)
    D, kv = dim // H, Hkv * (dim // H)
    sizes = [V * dim, L * dim, L * dim * dim, L * kv * dim, L * kv * dim, L * dim * dim, L * dim,
             L * hidden * dim, L * dim * hidden, L * hidden * dim, dim, P * D] + ([] if shared else [V * dim])
    data = (rng.standard_normal(sum(sizes)) * 0.3).astype("<f4").tobytes()
    blob = struct.pack("<7i", dim, hidden, L, H, Hkv, V if shared else -V, P) + data + tail
    with open(path, "wb") as f:
        f.write(blob)
    return len(blob)


def write_tok(path, pieces, scores, max_len=None):
    with open(path, "wb") as f:
        f.write(struct.pack("<i", max_len if max_len is not None else max(len(p) for p in pieces)))
        for p, s in zip(pieces, scores):
            f.write(struct.pack("<fi", s, len(p)) + p)


# ---- Hugging Face folders: configs ----

def real_config(name):
    """The real config.json of /work/shared/hf/NAME, or None when it is absent."""
    p = os.path.join(HF_REAL, name, "config.json")
    if not os.path.exists(p):
        return None
    with open(p) as f:
        return json.load(f)


# Literal stand-ins with the real ones' quirks, used when /work/shared/hf is absent.
FALLBACK = {
    "tinyllama-1.1b-chat-v1.0": {"architectures": ["LlamaForCausalLM"], "attention_bias": False, "hidden_act": "silu",
                                 "model_type": "llama", "rms_norm_eps": 1e-05, "rope_scaling": None,
                                 "rope_theta": 10000.0, "tie_word_embeddings": False, "bos_token_id": 1},
    "llama-3.2-1b": {"architectures": ["LlamaForCausalLM"], "head_dim": 64, "mlp_bias": False, "model_type": "llama",
                     "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0,
                     "low_freq_factor": 1.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"},
                     "rope_theta": 500000.0, "tie_word_embeddings": True},
    "qwen2.5-0.5b": {"architectures": ["Qwen2ForCausalLM"], "max_window_layers": 24, "model_type": "qwen2",
                     "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768,
                     "tie_word_embeddings": True, "use_sliding_window": False, "use_mrope": False},
    "gemma-3-270m-it": {"_sliding_window_pattern": 6, "architectures": ["Gemma3ForCausalLM"], "head_dim": 256,
                        "hidden_activation": "gelu_pytorch_tanh", "model_type": "gemma3_text",
                        "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_local_base_freq": 10000.0,
                        "rope_scaling": None, "rope_theta": 1000000.0, "sliding_window": 512,
                        "attn_logit_softcapping": None, "final_logit_softcapping": None},
}


def shrunk(name, **sizes):
    """The real config of NAME (or its stand-in) with small sizes; other keys kept."""
    cfg = real_config(name) or copy.deepcopy(FALLBACK[name])
    cfg.update(sizes)
    if "layer_types" in cfg:   # keep the real pattern's kinds, as many as there are layers
        pattern = cfg.get("_sliding_window_pattern", 6)
        cfg["layer_types"] = ["full_attention" if (i + 1) % pattern == 0 else "sliding_attention"
                              for i in range(cfg["num_hidden_layers"])]
    return cfg


def qwen3_config(**sizes):
    """Qwen3-0.6B's config.json (its keys; no real copy here), shrunk."""
    cfg = {"architectures": ["Qwen3ForCausalLM"], "attention_bias": False, "hidden_act": "silu", "head_dim": 128,
           "max_position_embeddings": 40960, "max_window_layers": 28, "model_type": "qwen3", "rms_norm_eps": 1e-06,
           "rope_scaling": None, "rope_theta": 1000000, "sliding_window": None, "tie_word_embeddings": True,
           "use_sliding_window": False}
    cfg.update(sizes)
    return cfg


def mistral_config(**sizes):
    """Mistral-7B-v0.1's config.json keys (sliding_window 4096 there), shrunk."""
    cfg = {"architectures": ["MistralForCausalLM"], "hidden_act": "silu", "max_position_embeddings": 32768,
           "model_type": "mistral", "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 4096,
           "tie_word_embeddings": False}
    cfg.update(sizes)
    return cfg


# ---- Hugging Face folders: what the architecture means, read from a config ----

def arch_of(cfg):
    return cfg["architectures"][0]


def head_dim(cfg):
    d = cfg.get("head_dim")
    return d if d else cfg["hidden_size"] // cfg["num_attention_heads"]


def layer_kinds(cfg):
    """'full' or 'sliding' per layer, as each family's config class decides it."""
    a, L = arch_of(cfg), cfg["num_hidden_layers"]
    if cfg.get("layer_types") and a != "LlamaForCausalLM":
        return ["sliding" if t == "sliding_attention" else "full" for t in cfg["layer_types"]]
    if a == "MistralForCausalLM":
        return ["sliding" if cfg.get("sliding_window") else "full"] * L
    if a in ("Qwen2ForCausalLM", "Qwen3ForCausalLM"):
        on = cfg.get("use_sliding_window") and cfg.get("sliding_window")
        return ["sliding" if on and i >= cfg.get("max_window_layers", 28) else "full" for i in range(L)]
    if a == "Gemma3ForCausalLM":
        p = cfg.get("sliding_window_pattern", cfg.get("_sliding_window_pattern", 6))
        return ["full" if (i + 1) % p == 0 else "sliding" for i in range(L)]
    return ["full"] * L


def inv_freq(rope, D):
    """RoPE inverse frequencies (D/2) of {rope_theta, rope_type, factor, …}."""
    f = 1.0 / rope["rope_theta"] ** (np.arange(0, D, 2) / D)
    t = rope.get("rope_type", rope.get("type", "default"))
    if t == "linear":
        return f / rope["factor"]
    if t == "llama3":
        lo, hi, old = rope["low_freq_factor"], rope["high_freq_factor"], rope["original_max_position_embeddings"]
        wl = 2 * math.pi / f
        smooth = (old / wl - lo) / (hi - lo)
        mid = (1 - smooth) * f / rope["factor"] + smooth * f
        return np.where(wl < old / hi, f, np.where(wl > old / lo, f / rope["factor"], mid))
    assert t == "default", t
    return f


def ropes(cfg):
    """{'full': rope, 'sliding': rope} from rope_parameters, else rope_theta + rope_scaling."""
    gemma = arch_of(cfg) == "Gemma3ForCausalLM"
    theta = cfg.get("rope_theta", 1e6 if gemma else 1e4)
    full = dict(cfg.get("rope_scaling") or {}, rope_theta=theta)
    local = {"rope_theta": cfg.get("rope_local_base_freq", 1e4)} if gemma else full
    p = cfg.get("rope_parameters")
    if p and ("full_attention" in p or "sliding_attention" in p):
        return {"full": p.get("full_attention", full), "sliding": p.get("sliding_attention", local)}
    if p:
        return {"full": p, "sliding": local if gemma else p}
    return {"full": full, "sliding": local}


# ---- Hugging Face folders: random weights and the files ----

def hf_weights(cfg, seed=5):
    """{name: float32 array} in the save_pretrained layout (nn.Linear (out, in))."""
    rng = np.random.default_rng(seed)
    r = lambda *s, sd=0.25: (rng.standard_normal(s) * sd).astype(np.float32)
    a = arch_of(cfg)
    C, F, V, L = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"], cfg["num_hidden_layers"]
    H, Hkv, D = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"]), head_dim(cfg)
    gemma = a == "Gemma3ForCausalLM"
    qkv_bias = a == "Qwen2ForCausalLM" or cfg.get("attention_bias", False)
    o_bias = cfg.get("attention_bias", False) and a != "Qwen2ForCausalLM"
    norm = (lambda n: r(n, sd=0.2)) if gemma else (lambda n: 1 + r(n, sd=0.2))   # Gemma scales by 1 + w
    w = {"model.embed_tokens.weight": r(V, C, sd=0.5 if not gemma else 0.1), "model.norm.weight": norm(C)}
    if not cfg.get("tie_word_embeddings", gemma):
        w["lm_head.weight"] = r(V, C)
    for l in range(L):
        p = f"model.layers.{l}."
        w.update({p + "input_layernorm.weight": norm(C), p + "post_attention_layernorm.weight": norm(C),
                  p + "self_attn.q_proj.weight": r(H * D, C), p + "self_attn.k_proj.weight": r(Hkv * D, C),
                  p + "self_attn.v_proj.weight": r(Hkv * D, C), p + "self_attn.o_proj.weight": r(C, H * D),
                  p + "mlp.gate_proj.weight": r(F, C), p + "mlp.up_proj.weight": r(F, C),
                  p + "mlp.down_proj.weight": r(C, F)})
        if qkv_bias:
            for n, m in (("q", H), ("k", Hkv), ("v", Hkv)):
                w[p + f"self_attn.{n}_proj.bias"] = r(m * D, sd=0.3)
        if o_bias:
            w[p + "self_attn.o_proj.bias"] = r(C, sd=0.1)
        if cfg.get("mlp_bias"):
            for n, m in (("gate", F), ("up", F), ("down", C)):
                w[p + f"mlp.{n}_proj.bias"] = r(m, sd=0.1)
        if a in ("Qwen3ForCausalLM", "Gemma3ForCausalLM"):
            w[p + "self_attn.q_norm.weight"] = norm(D)
            w[p + "self_attn.k_norm.weight"] = norm(D)
        if gemma:
            w[p + "pre_feedforward_layernorm.weight"] = norm(C)
            w[p + "post_feedforward_layernorm.weight"] = norm(C)
    return w


def write_big_hf_dir(d, cfg, dtype="BF16", seed=0):
    """config.json and one model.safetensors of random weights at the config's real
    size (Qwen2.5-0.5B: 494M parameters, 988 MB in BF16), written one tensor at a
    time so the writer never holds more than the largest tensor, and a WordLevel
    tokenizer.json of one word per id ("w3", "w4", …).  Linear weights
    N(0, 0.02), norms 1 + N(0, 0.02), biases N(0, 0.02); the embedding N(0, 0.02)."""
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    names = _big_names(cfg)
    header, off = {}, 0
    for n, shape in names:
        size = int(np.prod(shape)) * (4 if dtype == "F32" else 2)
        header[n] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + size]}
        off += size
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    rng = np.random.default_rng(seed)
    path = os.path.join(d, "model.safetensors")
    with open(path + ".part", "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for n, shape in names:
            a = rng.standard_normal(shape, dtype=np.float32)
            a *= 0.02
            if "norm" in n:
                a += 1.0
            f.write(hf.half_bits(a, dtype))
            del a
    os.replace(path + ".part", path)
    write_tiny_tokenizer(d, [f"w{i}" for i in range(3, cfg["vocab_size"])])


def _big_names(cfg):
    """[(name, shape)] in hf_weights' order, from the config alone."""
    C, F, V, L = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"], cfg["num_hidden_layers"]
    H, Hkv, D = cfg["num_attention_heads"], cfg.get("num_key_value_heads", cfg["num_attention_heads"]), head_dim(cfg)
    a = arch_of(cfg)
    assert a in ("LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM"), a   # no per-head or sandwich norms
    qkv_bias = a == "Qwen2ForCausalLM" or cfg.get("attention_bias", False)
    out = [("model.embed_tokens.weight", (V, C)), ("model.norm.weight", (C,))]
    if not cfg.get("tie_word_embeddings", False):
        out.append(("lm_head.weight", (V, C)))
    for l in range(L):
        p = f"model.layers.{l}."
        out += [(p + "input_layernorm.weight", (C,)), (p + "post_attention_layernorm.weight", (C,)),
                (p + "self_attn.q_proj.weight", (H * D, C)), (p + "self_attn.k_proj.weight", (Hkv * D, C)),
                (p + "self_attn.v_proj.weight", (Hkv * D, C)), (p + "self_attn.o_proj.weight", (C, H * D)),
                (p + "mlp.gate_proj.weight", (F, C)), (p + "mlp.up_proj.weight", (F, C)),
                (p + "mlp.down_proj.weight", (C, F))]
        if qkv_bias:
            out += [(p + f"self_attn.{n}_proj.bias", (m * D,)) for n, m in (("q", H), ("k", Hkv), ("v", Hkv))]
    return out


def write_hf_dir(d, cfg, w, dtype="F32", shards=1):
    """config.json and model.safetensors (or `shards` files with the index)."""
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    if shards == 1:
        hf.write_safetensors(os.path.join(d, "model.safetensors"), w, dtype=dtype, metadata={"format": "pt"})
        return
    names = list(w)
    weight_map = {}
    for s in range(shards):
        part = {n: w[n] for n in names[s::shards]}
        fn = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        hf.write_safetensors(os.path.join(d, fn), part, dtype=dtype, metadata={"format": "pt"})
        weight_map.update({n: fn for n in part})
    with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f)


# ---- Hugging Face folders: a tokenizer.json small enough for a tiny vocabulary ----

def write_tiny_tokenizer(d, words, bos="<s>", post_processor=True, add_bos=None):
    """A WordLevel tokenizer.json over words (a Whitespace pre-tokenizer splits off "."), with
    <s>/</s> (or Gemma's <bos>/<eos>) at ids 0 and 1; the BOS from a TemplateProcessing
    post-processor, or from tokenizer_config.json's add_bos_token."""
    eos = "</s>" if bos == "<s>" else "<eos>"
    vocab = {bos: 0, eos: 1, "<unk>": 2}
    for wd in words:
        vocab.setdefault(wd, len(vocab))
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for i, t in enumerate((bos, eos))]
    tj = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
          "pre_tokenizer": {"type": "Whitespace"}, "decoder": None,
          "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"},
          "post_processor": {"type": "TemplateProcessing",
                             "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                             "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                             "special_tokens": {bos: {"id": bos, "ids": [0], "tokens": [bos]}}} if post_processor else None}
    with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tj, f)
    if add_bos is not None:
        with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
            json.dump({"add_bos_token": add_bos, "bos_token": bos, "eos_token": eos}, f)
    return vocab


# ---- Hugging Face folders: the forward pass in PyTorch, float64 ----

def hf_forward(cfg, w, ids, dtype="F32"):
    """(atts [L × (H, T, T)], logits (T, V), qk [L × (q_pre, q_rot, k_pre, k_rot)]) of a
    config dict and weights as stored in dtype (read back to float64)."""
    import torch
    p = {k: torch.tensor(hf.dequant(v, dtype)) for k, v in w.items()}
    a = arch_of(cfg)
    gemma = a == "Gemma3ForCausalLM"
    T, C, L = len(ids), cfg["hidden_size"], cfg["num_hidden_layers"]
    H, D = cfg["num_attention_heads"], head_dim(cfg)
    Hkv = cfg.get("num_key_value_heads", H)
    eps = cfg.get("rms_norm_eps", 1e-6)
    act_name = cfg.get("hidden_activation") or cfg.get("hidden_act") or ("gelu_pytorch_tanh" if gemma else "silu")
    act = {"silu": torch.nn.functional.silu,
           "gelu_pytorch_tanh": lambda u: torch.nn.functional.gelu(u, approximate="tanh")}[act_name]
    scale = cfg.get("query_pre_attn_scalar", 256) ** -0.5 if gemma else D ** -0.5

    def norm(x, wt):
        y = x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)
        return y * (1 + wt) if gemma else y * wt

    def lin(x, name):
        y = x @ p[name + ".weight"].T
        return y + p[name + ".bias"] if name + ".bias" in p else y

    def rotate_half(v):
        return torch.cat((-v[..., D // 2:], v[..., :D // 2]), -1)

    kinds, rp = layer_kinds(cfg), ropes(cfg)
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    cs = {}
    for kind in ("full", "sliding"):
        ang = pos * torch.tensor(inv_freq(rp[kind], D))[None, :]
        emb = torch.cat((ang, ang), -1)[:, None, :]                # (T, 1, D)
        cs[kind] = (emb.cos(), emb.sin())
    i, j = torch.arange(T)[:, None], torch.arange(T)[None, :]
    masks = {"full": j <= i, "sliding": (j <= i) & (i - j < (cfg.get("sliding_window") or 1 << 30))}
    x = p["model.embed_tokens.weight"][ids] * (math.sqrt(C) if gemma else 1.0)
    atts, qk = [], []
    for l in range(L):
        pre = f"model.layers.{l}."
        h = norm(x, p[pre + "input_layernorm.weight"])
        q = lin(h, pre + "self_attn.q_proj").reshape(T, H, D)
        k = lin(h, pre + "self_attn.k_proj").reshape(T, Hkv, D)
        v = lin(h, pre + "self_attn.v_proj").reshape(T, Hkv, D)
        if pre + "self_attn.q_norm.weight" in p:
            q, k = norm(q, p[pre + "self_attn.q_norm.weight"]), norm(k, p[pre + "self_attn.k_norm.weight"])
        cos, sin = cs[kinds[l]]
        qr, kr = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        qk.append(tuple(t.numpy() for t in (q, qr, k, kr)))
        krep = kr.repeat_interleave(H // Hkv, dim=1)               # kv head g serves query heads g·H/Hkv …
        vrep = v.repeat_interleave(H // Hkv, dim=1)
        s = torch.einsum("thd,shd->hts", qr, krep) * scale
        att = torch.softmax(s.masked_fill(~masks[kinds[l]], float("-inf")), -1)
        atts.append(att.numpy())
        o = lin(torch.einsum("hts,shd->thd", att, vrep).reshape(T, H * D), pre + "self_attn.o_proj")
        if gemma:
            o = norm(o, p[pre + "post_attention_layernorm.weight"])
        x = x + o
        h = norm(x, p[pre + ("pre_feedforward_layernorm.weight" if gemma else "post_attention_layernorm.weight")])
        f = lin(act(lin(h, pre + "mlp.gate_proj")) * lin(h, pre + "mlp.up_proj"), pre + "mlp.down_proj")
        if gemma:
            f = norm(f, p[pre + "post_feedforward_layernorm.weight"])
        x = x + f
    x = norm(x, p["model.norm.weight"])
    out = p.get("lm_head.weight", p["model.embed_tokens.weight"])
    logits = x @ out.T
    cap = cfg.get("final_logit_softcapping")
    if cap:
        logits = cap * torch.tanh(logits / cap)
    return atts, logits.numpy(), qk
