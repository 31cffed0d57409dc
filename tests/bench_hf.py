"""Speed of foreign-model folders beside PyTorch in the same run (make bench-hf;
docs/own-model.md quotes the figures).  Folders with random weights are saved once in
build/bench-hf/ in the Hugging Face layout:

  gpt2-small     GPT-2-small shape: 12 layers x 12 heads, d 768, vocabulary 50257, F32
  smollm2-135m   SmolLM2-135M shape (its published config.json, written here):
                 Llama, 30 layers x 9 heads (3 key/value heads), d 576, vocabulary 49152, F32
  qwen2.5-0.5b   Qwen2.5-0.5B shape (../shared/hf/qwen2.5-0.5b/config.json when present):
                 24 layers x 14 heads, vocabulary 151936, 494M parameters, BF16

Measured, on the same random token ids for both sides:
  attnviz  one process `attnviz forward --model DIR --src IDS --out trace.bin` (the
           compact binary trace, docs/trace-format.md): load + forward + every map's
           weights written; wall time and peak memory (ru_maxrss of a fresh child)
  PyTorch  the same architecture written here in torch (float32), every layer's attention
           weights returned: the forward alone, weights already in memory
Both sides run at one and at two threads (attnviz: OMP_NUM_THREADS and
OPENBLAS_NUM_THREADS; PyTorch: torch.set_num_threads), and each is taken at its faster
count (BENCH_THREADS=N runs attnviz at N only; BENCH_TORCH_THREADS likewise PyTorch).
Each shape and length runs ROUNDS times (BENCH_ROUNDS, default 3), every configuration
once a round, alternating; the figures are medians.  The 0.5B BF16 folder: load time (attnviz's
--timing) and peak memory of a 64-token forward.

Limits checked (issue 29): attnviz / PyTorch <= 1 at both shapes and both lengths; the
0.5B BF16 folder loads in under 1 s and its 64-token forward stays under 3 GB.
Usage: bench_hf.py [--quick]   (--quick: 64 tokens only; exit status 1 when a limit is missed)"""
import json, math, os, platform, statistics, struct, subprocess, sys, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hf_fixtures as hf
import llama_ref as ref

ROOT = os.path.dirname(HERE)
ATTNVIZ = os.environ.get("ATTNVIZ", os.path.join(ROOT, "build", "attnviz"))
BASE = os.path.join(ROOT, "build", "bench-hf")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
# Thread counts tried on each side; each side is taken at its faster one.
THREADS = [int(x) for x in os.environ.get("BENCH_THREADS", "1,2").split(",")]
TORCH_THREADS = [int(x) for x in os.environ.get("BENCH_TORCH_THREADS", "1,2").split(",")]

GPT2 = dict(C=768, H=12, L=12, V=50257, P=1024)
# HuggingFaceTB/SmolLM2-135M config.json (Apache-2.0), as published.
SMOLLM2 = {"architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
           "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "silu", "hidden_size": 576,
           "initializer_range": 0.041666666666666664, "intermediate_size": 1536, "is_llama_config": True,
           "max_position_embeddings": 8192, "model_type": "llama", "num_attention_heads": 9,
           "num_hidden_layers": 30, "num_key_value_heads": 3, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
           "rope_interleaved": False, "rope_scaling": None, "rope_theta": 100000, "tie_word_embeddings": True,
           "torch_dtype": "bfloat16", "transformers_version": "4.40.1", "use_cache": True, "vocab_size": 49152}
QWEN_SIZES = dict(hidden_size=896, intermediate_size=4864, num_attention_heads=14, num_hidden_layers=24,
                  num_key_value_heads=2, vocab_size=151936, max_position_embeddings=32768)


def gpt2_dir():
    d = os.path.join(BASE, "gpt2-small")
    if os.path.exists(os.path.join(d, "model.safetensors")):
        return d
    os.makedirs(d, exist_ok=True)
    C, L, V, P = GPT2["C"], GPT2["L"], GPT2["V"], GPT2["P"]
    rng = np.random.default_rng(0)
    r = lambda *s, sd=0.02: (rng.standard_normal(s, dtype=np.float32) * sd)
    w = {"wte.weight": r(V, C), "wpe.weight": r(P, C, sd=0.01), "ln_f.weight": np.ones(C, np.float32),
         "ln_f.bias": np.zeros(C, np.float32)}
    for l in range(L):
        p = f"h.{l}."
        w.update({p + "ln_1.weight": np.ones(C, np.float32), p + "ln_1.bias": np.zeros(C, np.float32),
                  p + "attn.c_attn.weight": r(C, 3 * C), p + "attn.c_attn.bias": np.zeros(3 * C, np.float32),
                  p + "attn.c_proj.weight": r(C, C), p + "attn.c_proj.bias": np.zeros(C, np.float32),
                  p + "ln_2.weight": np.ones(C, np.float32), p + "ln_2.bias": np.zeros(C, np.float32),
                  p + "mlp.c_fc.weight": r(C, 4 * C), p + "mlp.c_fc.bias": np.zeros(4 * C, np.float32),
                  p + "mlp.c_proj.weight": r(4 * C, C), p + "mlp.c_proj.bias": np.zeros(C, np.float32)})
    hf.write_gpt2_dir(d, weights=w, H=GPT2["H"])
    return d


def llama_dir(name, cfg, dtype):
    d = os.path.join(BASE, name)
    if not os.path.exists(os.path.join(d, "model.safetensors")):
        ref.write_big_hf_dir(d, cfg, dtype=dtype, seed=0)
    return d


def qwen_config():
    cfg = ref.real_config("qwen2.5-0.5b") or dict(ref.FALLBACK["qwen2.5-0.5b"], hidden_act="silu", **QWEN_SIZES)
    return dict(cfg, **QWEN_SIZES)


def as_read_from_disk(d, ids):
    """Drops the folder's files from the page cache and runs attnviz once, so that the folder is
    cached as a user's first run after a reboot leaves it; returns that first run's wall time.
    The state of the cache changes what a first touch of the mapped weights costs: attnviz
    asks for 2 MB pages on its weights (MADV_HUGEPAGE), so a file it reads from the disk is
    cached in 2 MB folios, mapped 2 MB a fault; a file copied by cp or cat is cached in 4 kB
    pages, mapped 64 kB a fault and unmapped page by page at exit (on this machine 50 ms
    against 5 ms for GPT-2-small's 487 MB); one this script wrote a tensor at a time, in
    pieces of various sizes.  huge_share() says which state
    the runs met.  PyTorch's copy of the weights is read after this run."""
    for f in sorted(os.listdir(d)):
        fd = os.open(os.path.join(d, f), os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return attnviz_run(d, ids)[0]


def huge_share(path):
    """The share of a file the kernel maps in 2 MB pages when it is mapped and touched
    (FilePmdMapped over Rss of the mapping in /proc/self/smaps)."""
    m = np.memmap(path, dtype=np.uint8, mode="r")
    int(m[::4096].sum())   # touch every page
    at, rss, pmd, inside = m.ctypes.data, 0, 0, False
    with open("/proc/self/smaps") as f:
        for line in f:
            first = line.split()[0]
            if "-" in first and not first.endswith(":"):
                lo, hi = (int(x, 16) for x in first.split("-"))
                inside = lo <= at < hi
            elif inside and first == "Rss:":
                rss = int(line.split()[1])
            elif inside and first == "FilePmdMapped:":
                pmd = int(line.split()[1])
    del m
    return pmd / rss if rss else 0.0


def read_safetensors(path):
    """{name: float32 torch tensor} of an F32 file (copied out of the file's pages)."""
    import torch
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)
    out = {}
    for k, e in header.items():
        if k == "__metadata__":
            continue
        assert e["dtype"] == "F32", e["dtype"]
        a, b = e["data_offsets"]
        out[k.removeprefix("transformer.").removeprefix("model.")] = torch.from_numpy(
            np.frombuffer(data[a:b], dtype=np.float32).reshape(e["shape"]).copy())
    return out


def torch_gpt2(p, ids):
    """Every layer's (H, T, T) attention weights and the last position's logits."""
    import torch
    C, H, L = GPT2["C"], GPT2["H"], GPT2["L"]
    T = len(ids)
    ids = torch.tensor(ids)
    x = p["wte.weight"][ids] + p["wpe.weight"][:T]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    atts = []
    ln = torch.nn.functional.layer_norm
    for l in range(L):
        g = lambda n: p[f"h.{l}.{n}"]
        h = ln(x, (C,), g("ln_1.weight"), g("ln_1.bias"), 1e-5)
        q, k, v = (h @ g("attn.c_attn.weight") + g("attn.c_attn.bias")).split(C, dim=1)
        q, k, v = (z.reshape(T, H, C // H).transpose(0, 1) for z in (q, k, v))
        s = (q @ k.transpose(1, 2) / math.sqrt(C // H)).masked_fill(~causal, float("-inf"))
        a = torch.softmax(s, -1)
        atts.append(a)
        x = x + (a @ v).transpose(0, 1).reshape(T, C) @ g("attn.c_proj.weight") + g("attn.c_proj.bias")
        h = ln(x, (C,), g("ln_2.weight"), g("ln_2.bias"), 1e-5)
        h = torch.nn.functional.gelu(h @ g("mlp.c_fc.weight") + g("mlp.c_fc.bias"), approximate="tanh")
        x = x + h @ g("mlp.c_proj.weight") + g("mlp.c_proj.bias")
    x = ln(x, (C,), p["ln_f.weight"], p["ln_f.bias"], 1e-5)
    return atts, x[-1] @ p["wte.weight"].T


def torch_llama(p, cfg, ids):
    """Llama (rotate-half RoPE, grouped-query attention, SwiGLU): every layer's (H, T, T)
    attention weights and the last position's logits."""
    import torch
    C, H, Hkv, L = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["num_hidden_layers"]
    D, eps, T = C // H, cfg["rms_norm_eps"], len(ids)
    ids = torch.tensor(ids)
    inv = 1.0 / cfg["rope_theta"] ** (torch.arange(0, D, 2, dtype=torch.float32) / D)
    ang = torch.arange(T, dtype=torch.float32)[:, None] * inv[None]
    cos, sin = torch.cat([ang.cos(), ang.cos()], -1), torch.cat([ang.sin(), ang.sin()], -1)
    rot = lambda z: z * cos + torch.cat([-z[..., D // 2:], z[..., :D // 2]], -1) * sin
    rms = lambda z, w: z * torch.rsqrt(z.pow(2).mean(-1, keepdim=True) + eps) * w
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    x = p["embed_tokens.weight"][ids]
    atts = []
    for l in range(L):
        g = lambda n: p[f"layers.{l}.{n}"]
        h = rms(x, g("input_layernorm.weight"))
        q = (h @ g("self_attn.q_proj.weight").T).reshape(T, H, D).transpose(0, 1)
        k = (h @ g("self_attn.k_proj.weight").T).reshape(T, Hkv, D).transpose(0, 1)
        v = (h @ g("self_attn.v_proj.weight").T).reshape(T, Hkv, D).transpose(0, 1)
        q, k = rot(q), rot(k)
        k, v = k.repeat_interleave(H // Hkv, 0), v.repeat_interleave(H // Hkv, 0)
        a = torch.softmax((q @ k.transpose(1, 2) / math.sqrt(D)).masked_fill(~causal, float("-inf")), -1)
        atts.append(a)
        x = x + (a @ v).transpose(0, 1).reshape(T, C) @ g("self_attn.o_proj.weight").T
        h = rms(x, g("post_attention_layernorm.weight"))
        x = x + (torch.nn.functional.silu(h @ g("mlp.gate_proj.weight").T) * (h @ g("mlp.up_proj.weight").T)) \
            @ g("mlp.down_proj.weight").T
    x = rms(x, p["norm.weight"])
    return atts, x[-1] @ p["embed_tokens.weight"].T


def torch_forward_seconds(fn, ids, n_layers, threads=1):
    import torch
    torch.set_num_threads(threads)
    with torch.no_grad():
        t = time.perf_counter()
        atts, logits = fn(ids)
        s = time.perf_counter() - t
    assert len(atts) == n_layers and logits.dim() == 1
    return s


def attnviz_run(d, ids, out=None, threads=1):
    """(wall seconds, peak RSS bytes, the --timing line) of one attnviz process."""
    args = [ATTNVIZ, "forward", "--model", d, "--src", " ".join(map(str, ids)), "--timing"]
    if out:
        args += ["--out", out]
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far: measure in a fresh child.
    code = ("import resource,subprocess,sys,time;t=time.perf_counter();"
            "r=subprocess.run(sys.argv[1:],capture_output=True,text=True);w=time.perf_counter()-t;"
            "print(w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode);"
            "print(r.stdout.strip() or r.stderr.strip())")
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True, env=env)
    first, line = r.stdout.split("\n", 1)
    wall, rss, rc = first.split()
    assert rc == "0", line
    return float(wall), int(rss) * 1024, line.strip()


def machine():
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{model}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, {platform.python_version()}"


def compare(name, d, fn, n_layers, n_maps, V, T, rng):
    """Medians of ROUNDS alternating runs at each thread count; ratio of the two sides
    each at its faster count."""
    ids = rng.integers(0, V, T).tolist()
    out = os.path.join(BASE, f"{name}-{T}.trace.bin")
    attnviz_run(d, ids, out)   # the timed runs start warm
    torch_forward_seconds(fn, ids, n_layers)
    a = {n: [] for n in THREADS}
    lines = {n: [] for n in THREADS}
    rss = []
    p = {n: [] for n in TORCH_THREADS}
    for _ in range(ROUNDS):
        for n in sorted(set(THREADS) | set(TORCH_THREADS)):
            if n in a:
                w, m, line = attnviz_run(d, ids, out, n)
                a[n].append(w); rss.append(m); lines[n].append(line)
            if n in p:
                p[n].append(torch_forward_seconds(fn, ids, n_layers, n))
    size = os.path.getsize(out)
    os.remove(out)
    am = {n: statistics.median(v) for n, v in a.items()}
    pm = {n: statistics.median(v) for n, v in p.items()}
    an, pn = min(am, key=am.get), min(pm, key=pm.get)
    runs = lambda v: ", ".join(f"{x:.3f}" for x in v)
    best_line = lines[an][a[an].index(am[an])] if am[an] in a[an] else lines[an][0]
    print(f"  {T:4d} tokens, {n_maps} maps: attnviz " + "; ".join(
        f"{n} thread{'s' * (n > 1)} {am[n]:.3f} s (runs {runs(a[n])})" for n in sorted(am)) +
        f"; peak {max(rss) / 2**20:.0f} MB; trace.bin {size / 2**20:.0f} MB; [{best_line}]")
    print(f"              PyTorch forward " + "; ".join(
        f"{n} thread{'s' * (n > 1)} {pm[n]:.3f} s (runs {runs(p[n])})" for n in sorted(pm)) +
        f"   ratio attnviz ({an}) / PyTorch ({pn}) {am[an] / pm[pn]:.2f}")
    return am[an] / pm[pn]


def main():
    import torch
    torch.set_num_threads(1)
    quick = "--quick" in sys.argv
    lengths = (64,) if quick else (64, 512)
    env_threads = {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS") if k in os.environ}
    print(f"machine: {machine()}")
    print(f"threads: PyTorch {TORCH_THREADS} (torch {torch.__version__}; BENCH_TORCH_THREADS); attnviz {THREADS} "
          f"(OpenMP and OpenBLAS; BENCH_THREADS){' ' + str(env_threads) if env_threads else ''}; each side at its "
          f"faster count; medians of {ROUNDS} alternating runs")
    rng = np.random.default_rng(1)
    ok = True
    checks = []
    print("model folders: as attnviz's first run after a reboot leaves them in the page cache (as_read_from_disk); "
          "the share of the weights the kernel mapped in 2 MB pages is given after each shape")
    d = gpt2_dir()
    first = as_read_from_disk(d, rng.integers(0, GPT2["V"], 64).tolist())
    p = read_safetensors(os.path.join(d, "model.safetensors"))
    print("GPT-2-small shape (12 layers x 12 heads, d 768, vocabulary 50257, F32): "
          "attnviz load + forward + trace.bin of every map, PyTorch forward alone")
    for T in lengths:
        r = compare("gpt2-small", d, lambda ids: torch_gpt2(p, ids), 12, 144, GPT2["V"], T, rng)
        checks.append((r <= 1.0, f"GPT-2-small {T} tokens: attnviz no slower than PyTorch's forward ({r:.2f})"))
    print(f"  first run, weights read from the disk: {first:.2f} s; weights mapped in 2 MB pages: "
          f"{huge_share(os.path.join(d, 'model.safetensors')):.0%}")
    del p
    d = llama_dir("smollm2-135m", SMOLLM2, "F32")
    first = as_read_from_disk(d, rng.integers(0, SMOLLM2["vocab_size"], 64).tolist())
    p = read_safetensors(os.path.join(d, "model.safetensors"))
    print("SmolLM2-135M shape (30 layers x 9 heads, 3 key/value heads, d 576, vocabulary 49152, F32):")
    for T in lengths:
        r = compare("smollm2-135m", d, lambda ids: torch_llama(p, SMOLLM2, ids), 30, 270, SMOLLM2["vocab_size"], T,
                    rng)
        checks.append((r <= 1.0, f"SmolLM2-135M {T} tokens: attnviz no slower than PyTorch's forward ({r:.2f})"))
    print(f"  first run, weights read from the disk: {first:.2f} s; weights mapped in 2 MB pages: "
          f"{huge_share(os.path.join(d, 'model.safetensors')):.0%}")
    del p
    cfg = qwen_config()
    d = llama_dir("qwen2.5-0.5b-bf16", cfg, "BF16")
    ids = rng.integers(0, cfg["vocab_size"], 64).tolist()
    as_read_from_disk(d, ids)
    runs = [attnviz_run(d, ids) for _ in range(ROUNDS)]
    loads = [float(r[2].split()[1]) / 1e3 for r in runs]
    walls = [r[0] for r in runs]
    peak = max(r[1] for r in runs)
    load = statistics.median(loads)
    print(f"Qwen2.5-0.5B shape, BF16 (494M parameters, 988 MB file), 64 tokens, 336 maps: load {load:.3f} s "
          f"(runs {', '.join(f'{x:.3f}' for x in loads)}), load + forward {statistics.median(walls):.2f} s, "
          f"peak {peak / 2**20:.0f} MB  [{runs[0][2]}]")
    checks.append((load < 1.0, f"0.5B BF16 folder loads in under 1 s ({load:.3f} s)"))
    checks.append((peak < 3 * 2**30, f"0.5B BF16 folder, 64-token forward under 3 GB ({peak / 2**30:.2f} GB)"))
    for cond, what in checks:
        print(f"  {'ok  ' if cond else 'MISS'} {what}")
        ok &= cond
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
