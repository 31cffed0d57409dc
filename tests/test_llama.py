"""The Llama family (src/family/llama*.c, src/tokenize/llama2c_tok.c) against independent
references (tests/llama_ref.py): stories260K's real weights and tokenizer against a NumPy
reader written from the format, and tiny random Hugging Face checkpoints of every family
(shrunk copies of the real configs in /work/shared/hf) against PyTorch, F32 and BF16; and
the bad inputs, each one line naming what and where.

These tests reach the C code through the unit-test binary's command mode
(tests/llama_dump.c); the commands that read these models (`run`, `info`, `tokenize`)
are tested in tests/test_llama_run.py:
  test_unit --llama-dump MODEL [--tokenizer TOK] [--steps] --out DIR (--ids "…" | --text …)
  test_unit --llama2c-encode TOK.bin   (JSON strings on stdin → id lists)"""
import json, os, subprocess
import numpy as np
from helpers import ROOT, load_json
import llama_ref as ref
import hf_fixtures as hf

TEST_UNIT = os.environ.get("TEST_UNIT", os.path.join(ROOT, "build", "test_unit"))
SENTENCE = "Lily had a red ball. She gave it to Tom."
TOL = 1e-4


def unit(*args, input=None):
    return subprocess.run([TEST_UNIT, *map(str, args)], input=input, capture_output=True, text=True, timeout=300)


def dump(model, out, ids=None, text=None, tok=None, steps=False):
    """(info, trace, logits (T, V), qk [L × (q_pre, q_rot, k_pre, k_rot) as (T, heads, D)])."""
    args = ["--llama-dump", model, "--out", out]
    args += ["--tokenizer", tok] if tok else []
    args += ["--text", text] if text is not None else ["--ids", " ".join(map(str, ids))]
    args += ["--steps"] if steps else []
    r = unit(*args)
    assert r.returncode == 0, f"test_unit {' '.join(args)}: {r.stderr}"
    info = json.loads(r.stdout)
    m, T = info["model"], len(info["ids"])
    logits = np.fromfile(os.path.join(out, "logits.f32"), dtype="<f4").reshape(T, m["vocab_size"])
    flat = np.fromfile(os.path.join(out, "qk.f32"), dtype="<f4")
    H, Hkv, D = m["n_heads"], m["n_kv_heads"], m["d_k"]
    qk, off = [], 0
    for _ in range(m["n_layers"]):
        four = []
        for heads in (H, H, Hkv, Hkv):
            four.append(flat[off:off + T * heads * D].reshape(T, heads, D))
            off += T * heads * D
        qk.append(four)
    assert off == flat.size
    return info, load_json(os.path.join(out, "trace.json")), logits, qk


def dump_error(model, *extra):
    """The one line a bad model gives, without the 'error: ' prefix."""
    r = unit("--llama-dump", model, "--ids", "1 2 3", *extra)
    assert r.returncode == 1, f"expected failure for {model}: {r.returncode}\n{r.stdout}\n{r.stderr}"
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0][len("error: "):]


def compare(what, trace, logits, qk, ref_atts, ref_logits, ref_qk, kinds=None, window=None, tol=TOL):
    """Every head's weights, every logit, q and k before and after RoPE within tol."""
    maps = trace["maps"]
    assert [m["id"] for m in maps] == [f"decoder.{l}.masked_self" for l in range(len(ref_atts))], [m["id"] for m in maps]
    worst = 0.0
    for l, m in enumerate(maps):
        assert len(m["heads"]) == ref_atts[l].shape[0], f"{what}: {m['id']} has {len(m['heads'])} heads"
        for h, head in enumerate(m["heads"]):
            got = np.array(head["weights"], dtype=np.float64)
            d = np.abs(got - ref_atts[l][h]).max()
            worst = max(worst, d)
            assert d <= tol, f"{what}: {m['id']} head {h}: max |Δweight| {d:.3g}\n got {got[-1][:5]}\n want {ref_atts[l][h][-1][:5]}"
        if kinds:   # the mask the trace shows is the layer's: causal, or the window
            T = len(m["mask"])
            want = [[int(j <= i and (kinds[l] == "full" or i - j < window)) for j in range(T)] for i in range(T)]
            assert m["mask"] == want, f"{what}: {m['id']} mask is not the {kinds[l]} layer's"
        for n, (got, exp) in enumerate(zip(qk[l], ref_qk[l])):
            d = np.abs(got - exp).max()
            assert d <= tol, f"{what}: layer {l} {['q before RoPE', 'q after', 'k before', 'k after'][n]}: max |Δ| {d:.3g}"
    d = np.abs(logits - ref_logits).max()
    assert d <= tol, f"{what}: max |Δlogit| {d:.3g}; last row got {logits[-1][:4]} want {ref_logits[-1][:4]}"
    return worst, d


def have_stories():
    if os.path.exists(os.path.join(ref.STORIES, "stories260K.bin")):
        return True
    print(f"     skip: {ref.STORIES} is absent (the real stories260K weights)")
    return False


# ---- stories260K: real weights, real tokenizer ----

def test_stories260k_every_head_and_logits_match_numpy(tmp):
    if not have_stories():
        return
    model, tok = os.path.join(ref.STORIES, "stories260K.bin"), os.path.join(ref.STORIES, "tok512.bin")
    cfg, w = ref.read_llama2c(model)
    pieces, scores = ref.read_tok(tok, cfg["V"])
    ids = ref.encode(pieces, scores, SENTENCE)
    info, trace, logits, qk = dump(model, tmp, text=SENTENCE, tok=tok)
    assert info["ids"] == ids, f"C encodes {info['ids']}\nthe README's rules give {ids}"
    assert "".join(info["tokens"]) == "\n<s>\n" + SENTENCE, info["tokens"]   # decoding gives the text back
    atts, ref_logits, ref_qk = ref.llama2c_forward(cfg, w, ids)
    m = info["model"]
    assert (m["n_heads"], m["n_kv_heads"], m["d_k"], m["n_layers"], m["parameters"]) == (8, 4, 8, 5, 260032), m
    compare("stories260K", trace, logits, qk, atts, ref_logits, ref_qk)
    assert np.argmax(logits[-1]) == np.argmax(ref_logits[-1])


def test_stories260k_tokenizer_matches_the_readme_rules(tmp):
    if not have_stories():
        return
    tok = os.path.join(ref.STORIES, "tok512.bin")
    pieces, scores = ref.read_tok(tok, 512)
    strings = ["", " ", "Once upon a time", SENTENCE, "  two  spaces\tand\ttabs\n\nnewlines ",
               "L'été dernier, Zoë a mangé une crème brûlée à Paris.", "Tiếng Việt có dấu: người, đường, nghĩa.",
               "日本語のテキストと中文混合", "emoji 🙂👍🏽 and 🇻🇳 flags", "digits 0123456789 3.14159 1,000,000",
               "line\u2028separator and no\u00a0break space", "<s> </s> <unk> <0x41> are text here",
               "tabs\t\t and \r\n windows", "a" * 200, "The cat sat. " * 40]
    rng = np.random.default_rng(7)
    for _ in range(200):   # random mixes of the characters above
        strings.append("".join(rng.choice(list("abc xyzLily.,!?é ệ日🙂\t\n0123")) for _ in range(rng.integers(1, 40))))
    r = unit("--llama2c-encode", tok, input="".join(json.dumps(s) + "\n" for s in strings))
    assert r.returncode == 0, r.stderr
    got = [json.loads(l) for l in r.stdout.splitlines()]
    assert len(got) == len(strings)
    for s, g in zip(strings, got):
        assert g == ref.encode(pieces, scores, s), f"{s!r}: C {g} != reference {ref.encode(pieces, scores, s)}"


def test_llama2c_tokenizer_merges_by_score_and_byte_fallback(tmp):
    """A tokenizer written here: merges pick the highest score, the leftmost of equals;
    characters without a piece fall back to bytes + 3; the first of two equal pieces wins."""
    pieces = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [b"<0x%02X>" % b for b in range(256)]
    merges = [(b" ", 0.0), (b"a", -1.0), (b"b", -1.0), (b"ab", -2.0), (b"ba", -2.0), (b" a", -5.0),
              (b"aba", -3.0), (b"\xc3\xa9", -1.0), (b"abab", -0.5), (b"b", -9.0)]
    pieces += [p for p, _ in merges]
    scores = [0.0] * 259 + [s for _, s in merges]
    path = os.path.join(tmp, "tok.bin")
    ref.write_tok(path, pieces, scores)
    strings = ["ab", "abab", "ba ab", "aba", "babab", "é", "ée", "日", "", "a b a b", "abababab"]
    r = unit("--llama2c-encode", path, input="".join(json.dumps(s) + "\n" for s in strings))
    assert r.returncode == 0, r.stderr
    got = [json.loads(l) for l in r.stdout.splitlines()]
    for s, g in zip(strings, got):
        assert g == ref.encode(pieces, scores, s), f"{s!r}: C {g} != reference {ref.encode(pieces, scores, s)}"
    assert got[7] == [1, 259, 0xE6 + 3, 0x97 + 3, 0xA5 + 3], got[7]   # 日: " " then its three bytes
    assert got[8] == [1], got[8]                                      # empty text: BOS only


def test_llama2c_random_checkpoints_tied_and_untied(tmp):
    """Random version-0 files: shared classifier, and the classifier after the legacy table."""
    for shared, H, Hkv in ((True, 4, 2), (False, 4, 1), (False, 2, 2)):
        path = os.path.join(tmp, f"m{int(shared)}{H}{Hkv}.bin")
        ref.write_llama2c(path, H=H, Hkv=Hkv, shared=shared, seed=H + Hkv)
        cfg, w = ref.read_llama2c(path)
        ids = list(np.random.default_rng(1).integers(0, cfg["V"], 11))
        out = os.path.join(tmp, os.path.basename(path) + ".out")
        os.makedirs(out)
        info, trace, logits, qk = dump(path, out, ids=ids)
        assert info["model"]["tied_embeddings"] is shared
        atts, ref_logits, ref_qk = ref.llama2c_forward(cfg, w, ids)
        compare(path, trace, logits, qk, atts, ref_logits, ref_qk)


# ---- Hugging Face families: tiny random checkpoints, PyTorch references ----

IDS = [5, 17, 250, 3, 99, 42, 42, 7, 180, 64, 0, 211]


def families():
    """(name, config) of every family, shrunk from the real config with its quirks."""
    tl = ref.shrunk("tinyllama-1.1b-chat-v1.0", hidden_size=64, num_attention_heads=8, num_key_value_heads=1,
                    intermediate_size=96, num_hidden_layers=2, vocab_size=300, max_position_embeddings=64)
    tl_linear = dict(tl, rope_scaling={"type": "linear", "factor": 2.0})
    l32 = ref.shrunk("llama-3.2-1b", hidden_size=64, num_attention_heads=4, num_key_value_heads=1, head_dim=16,
                     intermediate_size=128, num_hidden_layers=2, vocab_size=300, max_position_embeddings=64)
    l32_new = {k: v for k, v in l32.items() if k not in ("rope_theta", "rope_scaling")}
    l32_new["rope_parameters"] = dict(l32["rope_scaling"], rope_theta=l32["rope_theta"])
    l32_bias = dict(l32, attention_bias=True, mlp_bias=True, tie_word_embeddings=False)
    # llama3 scaling whose three bands show at 12 positions: wavelengths 6.3 (between
    # 16/4 and 16/1: smoothed), 20 and longer (÷ factor)
    l32_short = dict(l32, rope_theta=10000.0, rope_scaling=dict(l32["rope_scaling"], factor=4.0,
                     original_max_position_embeddings=16))
    qw2 = ref.shrunk("qwen2.5-0.5b", hidden_size=48, num_attention_heads=6, num_key_value_heads=2,
                     intermediate_size=80, num_hidden_layers=2, vocab_size=300, max_position_embeddings=64)
    qw2_window = dict(qw2, use_sliding_window=True, max_window_layers=1, sliding_window=5)
    qw3 = ref.qwen3_config(hidden_size=48, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                           intermediate_size=80, num_hidden_layers=2, vocab_size=300)
    mis = ref.mistral_config(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, intermediate_size=96,
                             num_hidden_layers=2, vocab_size=300, sliding_window=5)
    gem = ref.shrunk("gemma-3-270m-it", hidden_size=64, num_attention_heads=4, num_key_value_heads=1, head_dim=16,
                     intermediate_size=96, num_hidden_layers=3, vocab_size=300, max_position_embeddings=64,
                     sliding_window=4, query_pre_attn_scalar=24, _sliding_window_pattern=3)
    gem_new = {k: v for k, v in gem.items() if k not in ("rope_theta", "rope_local_base_freq", "rope_scaling")}
    gem_new["rope_parameters"] = {"full_attention": {"rope_type": "linear", "factor": 4.0, "rope_theta": 1e6},
                                  "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}
    gem_cap = dict(gem, final_logit_softcapping=3.0)
    return [("tinyllama", tl), ("tinyllama-linear-rope", tl_linear), ("llama-3.2", l32),
            ("llama-3.2-rope_parameters", l32_new), ("llama-3.2-biases", l32_bias),
            ("llama-3.2-short-context", l32_short), ("qwen2.5", qw2),
            ("qwen2.5-window", qw2_window), ("qwen3", qw3), ("mistral", mis), ("gemma3", gem),
            ("gemma3-rope_parameters", gem_new), ("gemma3-softcap", gem_cap)]


def check_family(tmp, name, cfg, dtype, shards=1, steps=False):
    d = os.path.join(tmp, f"{name}-{dtype}")
    w = ref.hf_weights(cfg)
    ref.write_hf_dir(d, cfg, w, dtype=dtype, shards=shards)
    out = d + ".out"
    os.makedirs(out)
    info, trace, logits, qk = dump(d, out, ids=IDS, steps=steps)
    atts, ref_logits, ref_qk = ref.hf_forward(cfg, w, IDS, dtype=dtype)
    kinds = ref.layer_kinds(cfg)
    compare(f"{name} {dtype}", trace, logits, qk, atts, ref_logits, ref_qk, kinds, cfg.get("sliding_window"))
    assert info["model"]["dtype"] == dtype and info["model"]["n_kv_heads"] == cfg["num_key_value_heads"]
    return info, trace, logits


def test_every_family_f32_and_bf16_matches_pytorch(tmp):
    seen = {}
    for name, cfg in families():
        for dtype in ("F32", "BF16"):
            info, trace, logits = check_family(tmp, name, cfg, dtype)
            seen[(name, dtype)] = logits
    # the same model written with rope_parameters (newer transformers) reads the same
    assert np.array_equal(seen[("llama-3.2", "F32")], seen[("llama-3.2-rope_parameters", "F32")])
    kinds = ref.layer_kinds(dict(families())["gemma3"])
    assert kinds == ["sliding", "sliding", "full"], kinds


def test_sharded_f16_folder_and_steps(tmp):
    fam = dict(families())
    check_family(tmp, "tinyllama-sharded", fam["tinyllama"], "F32", shards=3)
    check_family(tmp, "qwen2.5-sharded", fam["qwen2.5"], "F16", shards=2)
    check_family(tmp, "gemma3-f16", fam["gemma3"], "F16")
    info, trace, _ = check_family(tmp, "gemma3-steps", fam["gemma3"], "F32", steps=True)
    head = trace["maps"][2]["heads"][1]
    scores, scaled = np.array(head["scores"]), np.array(head["scaled"])
    assert np.allclose(scaled, scores * 24 ** -0.5, atol=1e-6), "Gemma 3 scales by query_pre_attn_scalar^-1/2"
    assert head["masked"][0][1] is None and len(head["output"][0]) == 16


def _unaligned_copy(src, dst):
    """src's model.safetensors with two more spaces of header: every tensor then starts
    2 bytes past a multiple of 4, so no float32 tensor can be used where it lies."""
    import shutil, struct
    shutil.copytree(src, dst)
    with open(os.path.join(src, "model.safetensors"), "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header, data = f.read(n), f.read()
    with open(os.path.join(dst, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", n + 2) + header + b"  " + data)


def test_mapped_copied_and_converted_weights_give_the_same_bits(tmp):
    """float32 used where it lies in the file (mapped), the same file with every tensor
    unaligned (copied), and the weights as BF16 / F16 converted layer by layer when first
    needed, against float32 files of NumPy's dequantised values: the same logits, q/k and
    attention weights to the bit."""
    fam = dict(families())
    for name in ("qwen2.5", "llama-3.2-biases", "gemma3"):
        cfg = fam[name]
        w = ref.hf_weights(cfg)
        got = {}
        for dtype in ("F32", "BF16", "F16"):
            d = os.path.join(tmp, f"bits-{name}-{dtype}")
            ref.write_hf_dir(d, cfg, w, dtype=dtype)
            f32 = os.path.join(tmp, f"bits-{name}-{dtype}-as-f32")   # NumPy's conversion, stored as F32
            ref.write_hf_dir(f32, cfg, {k: hf.dequant(v, dtype).astype(np.float32) for k, v in w.items()})
            copied = f32 + "-unaligned"
            _unaligned_copy(f32, copied)
            for kind, folder in ((dtype, d), ("mapped", f32), ("copied", copied)):
                out = folder + ".out"
                os.makedirs(out)
                info, trace, logits, qk = dump(folder, out, ids=IDS)
                got[kind] = (logits, np.concatenate([a.ravel() for four in qk for a in four]),
                             [h for m in trace["maps"] for h in m["heads"]])
            for kind in (dtype, "copied"):
                for i, what in enumerate(("logits", "q and k", "attention weights")):
                    same = np.array_equal(got[kind][i], got["mapped"][i]) if i < 2 else got[kind][i] == got["mapped"][i]
                    assert same, f"{name}: {what} of the {kind} weights differ from the mapped float32 ones"


# ---- bad inputs: one line naming what and where ----

def test_bad_llama2c_files(tmp):
    good = os.path.join(tmp, "good.bin")
    n = ref.write_llama2c(good)
    with open(good, "rb") as f:
        blob = f.read()

    def bad(name, data):
        p = os.path.join(tmp, name)
        with open(p, "wb") as f:
            f.write(data)
        return p, dump_error(p)

    p, e = bad("cut.bin", blob[:n - 100])
    assert p in e and "truncated" in e and f"{n - 100} bytes" in e, e
    p, e = bad("long.bin", blob + b"\0" * 8)
    assert p in e and f"{n + 8} bytes" in e, e
    p, e = bad("header.bin", blob[:20])
    assert p in e and "28-byte header" in e, e
    import struct
    p, e = bad("heads.bin", struct.pack("<7i", 16, 24, 2, 3, 1, 300, 32) + blob[28:])
    assert p in e and "dim is not a multiple of n_heads" in e and "dim 16" not in e, e   # no file bytes as numbers
    p, e = bad("kv.bin", struct.pack("<7i", 16, 24, 2, 4, 3, 300, 32) + blob[28:])
    assert p in e and "not a multiple of n_kv_heads" in e, e
    p, e = bad("zero.bin", struct.pack("<7i", 16, 0, 2, 4, 2, 300, 32) + blob[28:])
    assert p in e and "hidden_dim must be positive" in e, e
    p, e = bad("v1.bin", struct.pack("<Ii", 0x616b3432, 1) + blob[8:])
    assert p in e and "newer llama2.c export" in e, e
    e = dump_error(os.path.join(tmp, "absent.bin"))
    assert "absent.bin" in e, e
    # a tokenizer that does not fit the model
    tok = os.path.join(tmp, "tok.bin")
    ref.write_tok(tok, [b"<unk>", b"a", b"b"], [0.0, 0.0, 0.0])
    e = dump_error(good, "--tokenizer", tok, "--text", "ab")
    assert tok in e and "holds 3 tokens" in e and "300" in e, e
    with open(tok, "rb") as f:
        t = f.read()
    with open(tok, "wb") as f:
        f.write(t[:-1])
    r = unit("--llama2c-encode", tok, input='"a"\n')
    assert r.returncode == 1 and tok in r.stderr and "truncated" in r.stderr, r.stderr


def test_bad_hf_folders(tmp):
    fam = dict(families())
    base = fam["qwen3"]
    w = ref.hf_weights(base)

    def folder(name, cfg, weights=None):
        d = os.path.join(tmp, name)
        ref.write_hf_dir(d, cfg, weights if weights is not None else w)
        return d, os.path.join(d, "config.json")

    d, c = folder("arch", dict(base, architectures=["Phi3ForCausalLM"]))
    e = dump_error(d)
    assert c in e and "architectures" in e and "Phi3ForCausalLM" in e, e
    d, c = folder("missing", {k: v for k, v in base.items() if k != "hidden_size"})
    e = dump_error(d)
    assert c in e and '"hidden_size" is missing' in e, e
    d, c = folder("heads", dict(base, num_key_value_heads=3))
    e = dump_error(d)
    assert c in e and "num_key_value_heads" in e and "3" in e, e
    d, c = folder("yarn", dict(base, rope_scaling={"rope_type": "yarn", "factor": 4.0}))
    e = dump_error(d)
    assert c in e and "rope_scaling" in e and "yarn" in e, e
    d, c = folder("llama3-half", dict(base, rope_scaling={"rope_type": "llama3", "factor": 8.0}))
    e = dump_error(d)
    assert c in e and "low_freq_factor" in e, e
    d, c = folder("negative", dict(base, intermediate_size=-4))
    e = dump_error(d)
    assert c in e and "intermediate_size" in e, e
    d, c = folder("types", dict(fam["gemma3"], layer_types=["full_attention"]))
    e = dump_error(d)
    assert c in e and "layer_types" in e, e
    d, _ = folder("no-k", base, {k: v for k, v in w.items() if k != "model.layers.1.self_attn.k_proj.weight"})
    e = dump_error(d)
    assert d in e and "model.layers.1.self_attn.k_proj.weight is missing" in e and "[32, 48]" in e, e
    bad = dict(w)
    bad["model.layers.0.self_attn.q_norm.weight"] = np.ones(12, np.float32)
    d, _ = folder("shape", base, bad)
    e = dump_error(d)
    assert d in e and "q_norm.weight has shape [12]" in e and "[16]" in e, e
    untied = dict(base, tie_word_embeddings=False)
    d, _ = folder("no-head", untied)
    e = dump_error(d)
    assert d in e and "lm_head.weight is missing" in e, e
    os.makedirs(os.path.join(tmp, "empty"))
    e = dump_error(os.path.join(tmp, "empty"))
    assert "config.json" in e, e
