"""Training speed of attnviz beside PyTorch, same model, same batches, same run.

    bench_train.py ATTNVIZ_BINARY [WORKDIR]      (make bench-train runs it)

Two shapes (encoder-decoder, post-norm, vocabulary 611), issue 13's:
    small  d_model  96, 4 heads, 3+2 layers, d_ff  256   (the shipped model before issue 12)
    large  d_model 256, 8 heads, 4+4 layers, d_ff 1024
Batch 64; source lengths 10..14 (mean 12), target lengths 9..13 (mean 11), padded
to 14 and 13 and masked (the rule is bench_len in src/cli/forward.c, repeated in
lengths() below).  One training step on both sides: forward, cross-entropy with
label smoothing 0.05 over the non-pad target positions, backward, gradient-norm
clip 1, Adam (0.9, 0.98, 1e-9).  No dropout.
PyTorch side: python3-torch's nn.Transformer (batch_first, ReLU, post-norm, no
final LayerNorm, like attnviz), nn.Embedding·√d_model + sinusoidal PE, a separate
nn.Linear output projection, key-padding and causal masks.
Tokens counted the same way on both sides: per step Σ source lengths + Σ target
lengths (non-pad positions) = 64·(12+11) = 1472; tokens/s = that / step time.
Each measurement is a fresh process (warm-up steps not timed), ROUNDS times (env
BENCH_ROUNDS, default 3), and the median counts; a configuration's runs all run one after
the other, never alternating with the other side's (tests/bench_common.py), and the load
average is printed before and after (above 1: the figures are noisy).
Threads: "1 thread" = OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=1 for attnviz and
torch.set_num_threads(1); "2 threads" = 2 for attnviz, and PyTorch at its best
of 1 and 2 threads.  Both sides run with GOMP_SPINCOUNT=10000 (attnviz's default,
see src/cli/main.c; on a shared 2-core machine the libgomp default of 300,000
spins made two threads slower than one for both).  Peak resident memory is each process's ru_maxrss (wait4),
PyTorch's includes the Python interpreter and the torch library.
PyTorch with its memory kept: PyTorch frees its tensors after every step and glibc's
malloc hands large blocks back to the kernel, so the next step takes page faults on
fresh memory (on the 2-core VM of issue 13, 15% of PyTorch's profile).  The bench
also runs PyTorch with MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_ and
MALLOC_TOP_PAD_ set so the freed memory stays in the process, and prints the ratios
against that PyTorch too (a setting of glibc, not of PyTorch; attnviz allocates
once and takes no page faults a step, so the setting does not change it).
"""
import os, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common as bc

SHAPES = {
    "small": dict(d_model=96, heads=4, enc=3, dec=2, d_ff=256, steps=40),
    "large": dict(d_model=256, heads=8, enc=4, dec=4, d_ff=1024, steps=8),
}
VOCAB, BATCH, SRC_MEAN, TGT_MEAN, WARMUP = 611, 64, 12, 11, 3
TORCH_PY = "/usr/bin/python3"


def lengths(B, mean, phase):
    """bench_len of src/cli/forward.c: mean exactly `mean`, spread ±2."""
    out = []
    for b in range(B):
        dev = (b // 2 + phase) % 3
        out.append(max(1, mean + (dev if b % 2 else -dev)))
    return out


# ------------------------------------------------------------- PyTorch worker

def torch_worker(shape, threads):
    import math
    import torch
    import torch.nn as nn
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    s = SHAPES[shape]
    C, H, F, V = s["d_model"], s["heads"], s["d_ff"], VOCAB

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, C)
            enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(C, H, F, dropout=0.0, batch_first=True), s["enc"])
            dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(C, H, F, dropout=0.0, batch_first=True), s["dec"])
            self.tr = nn.Transformer(C, H, custom_encoder=enc, custom_decoder=dec, batch_first=True)
            self.out = nn.Linear(C, V)
            pe = torch.zeros(64, C)
            pos = torch.arange(64, dtype=torch.float64).unsqueeze(1)
            div = torch.pow(10000.0, torch.arange(0, C, 2, dtype=torch.float64) / C)
            pe[:, 0::2] = torch.sin(pos / div).float()
            pe[:, 1::2] = torch.cos(pos / div).float()
            self.register_buffer("pe", pe)

        def forward(self, src, tgt, src_pad, tgt_pad, causal):
            x = self.emb(src) * math.sqrt(C) + self.pe[: src.shape[1]]
            y = self.emb(tgt) * math.sqrt(C) + self.pe[: tgt.shape[1]]
            h = self.tr(x, y, tgt_mask=causal, src_key_padding_mask=src_pad,
                        tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
            return self.out(h)

    sl, tl = lengths(BATCH, SRC_MEAN, 0), lengths(BATCH, TGT_MEAN, 1)
    S, T = SRC_MEAN + 2, TGT_MEAN + 2
    g = torch.Generator().manual_seed(7)
    src = torch.randint(0, V, (BATCH, S), generator=g)
    tgt = torch.randint(0, V, (BATCH, T), generator=g)
    y = torch.randint(0, V, (BATCH, T), generator=g)
    src_pad = torch.arange(S).unsqueeze(0) >= torch.tensor(sl).unsqueeze(1)
    tgt_pad = torch.arange(T).unsqueeze(0) >= torch.tensor(tl).unsqueeze(1)
    y[tgt_pad] = -100
    causal = nn.Transformer.generate_square_subsequent_mask(T)
    model = Seq2Seq()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    lossf = nn.CrossEntropyLoss(label_smoothing=0.05, ignore_index=-100)
    ntok = sum(sl) + sum(tl)

    def step():
        opt.zero_grad(set_to_none=True)
        logits = model(src, tgt, src_pad, tgt_pad, causal)
        loss = lossf(logits.reshape(-1, V), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    for _ in range(WARMUP):
        step()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(s["steps"]):
        step()
    dt = (time.perf_counter() - t0) / s["steps"]
    cpu = (time.process_time() - c0) / s["steps"]
    print(f"train_bench tokens_per_step {ntok} step_ms {dt * 1e3:.4f} tokens_per_s {ntok / dt:.1f} "
          f"cpu_ms {cpu * 1e3:.4f}")


# ------------------------------------------------------------------- driver

def measure(argv, env):
    """Runs argv: (tokens/s, CPU ms a step, peak RSS MiB; the last from wait4's rusage)."""
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = p.stdout.read()
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"bench_train: {' '.join(argv)} failed:\n{err}")
    line = [l for l in out.splitlines() if l.startswith("train_bench ")][-1].split()
    return (float(line[line.index("tokens_per_s") + 1]), float(line[line.index("cpu_ms") + 1]),
            ru.ru_maxrss / 1024.0)


def thread_env(n):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = env["OPENBLAS_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(n)
    # attnviz sets this itself (src/cli/main.c); PyTorch's libgomp gets the same
    env.setdefault("GOMP_SPINCOUNT", "10000")
    return env


KEEP_MEMORY = {"MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "4294967295",
               "MALLOC_TOP_PAD_": "268435456"}


def keep_memory(env):
    return dict(env, **KEEP_MEMORY)


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else 0.5 * (xs[len(xs) // 2 - 1] + xs[len(xs) // 2])


def model_file(attnviz, work, shape):
    s = SHAPES[shape]
    path = os.path.join(work, f"bench-{shape}.safetensors")
    cfg = ('{"arch":"encoder-decoder","vocab_size":%d,"d_model":%d,"n_heads":%d,"d_ff":%d,'
           '"n_enc_layers":%d,"n_dec_layers":%d,"max_len":64,"norm":"post"}'
           % (VOCAB, s["d_model"], s["heads"], s["d_ff"], s["enc"], s["dec"]))
    subprocess.run([attnviz, "model-init", "--config", cfg, "--out", path], check=True,
                   stdout=subprocess.DEVNULL)
    return path


def bench_shape(ses, attnviz, work, shape, rounds):
    s = SHAPES[shape]
    path = model_file(attnviz, work, shape)
    me = [attnviz, "forward", "--model", path, "--bench", str(s["steps"]), "--batch", str(BATCH),
          "--len", str(SRC_MEAN), "--tgt-len", str(TGT_MEAN)]
    them = lambda n: [TORCH_PY, os.path.abspath(__file__), "--torch-worker", shape, str(n)]
    runs = (("a1", me, thread_env(1)), ("t1", them(1), thread_env(1)),
            ("a2", me, thread_env(2)), ("t2", them(2), thread_env(2)),
            ("k1", them(1), keep_memory(thread_env(1))), ("k2", them(2), keep_memory(thread_env(2))))
    r = {key: [] for key, _, _ in runs}
    cpu = {"a1": [], "t1": [], "k1": []}
    mem = {"a": 0.0, "t": 0.0}
    print(f"{shape}: d_model {s['d_model']}, {s['heads']} heads, {s['enc']}+{s['dec']} layers, "
          f"d_ff {s['d_ff']}, vocab {VOCAB}, batch {BATCH}, {rounds} rounds (median tokens/s)")
    for key, argv, env in runs:   # one configuration's runs together, each side alone
        print(f"    $ {bc.shell(argv, env)}" + ("  (glibc MALLOC_* settings, below)" if key[0] == "k" else ""))
        for _ in range(rounds):
            tps, cpu_ms, rss = measure(argv, env)
            r[key].append(tps)
            if key in cpu:
                cpu[key].append(cpu_ms)
            if key[0] in mem:
                mem[key[0]] = max(mem[key[0]], rss)
    a1, t1, a2 = median(r["a1"]), median(r["t1"]), median(r["a2"])
    t2 = max(t1, median(r["t2"]))          # PyTorch at its best thread setting
    k1 = median(r["k1"])
    k2 = max(k1, median(r["k2"]))
    print(f"  1 thread   attnviz {a1:8.0f}  pytorch {t1:8.0f}  ratio {a1 / t1:.2f}x")
    print(f"  2 threads  attnviz {a2:8.0f}  pytorch {t2:8.0f}  ratio {a2 / t2:.2f}x"
          f"   (pytorch 1 thread {t1:.0f}, 2 threads {median(r['t2']):.0f})")
    print(f"  pytorch with its memory kept (glibc MALLOC_* settings): 1 thread {k1:.0f}  ratio {a1 / k1:.2f}x;"
          f"  best {k2:.0f}  ratio {a2 / k2:.2f}x")
    ca, ct, ck = median(cpu["a1"]), median(cpu["t1"]), median(cpu["k1"])
    print(f"  1 thread, CPU time a step (steadier when the machine is shared): attnviz {ca:.1f} ms  "
          f"pytorch {ct:.1f} ms  ratio {ct / ca:.2f}x  (memory kept: {ck:.1f} ms, {ck / ca:.2f}x)")
    print(f"  peak resident memory  attnviz {mem['a']:.0f} MiB  pytorch {mem['t']:.0f} MiB")
    for n, a, t in ((1, a1, t1), (2, a2, t2)):
        ses.record(f"train {shape} {n} thread{'s' * (n > 1)} tokens/s", None,
                   bc.shell([os.path.relpath(x) if os.path.isabs(x) else x for x in me], thread_env(n)),
                   attnviz=round(a), pytorch=round(t), ratio=round(a / t, 2))
    return a1 / t1, a2 / t2, a1 / k1, a2 / k2


def blas_core():
    """The kernel set OpenBLAS picks in this environment (OPENBLAS_CORETYPE, if set, decides)."""
    import ctypes
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        name = lib.openblas_get_corename().decode()
    except (OSError, AttributeError):
        return "unknown (libopenblas.so.0 not loadable)"
    pinned = os.environ.get("OPENBLAS_CORETYPE")
    return name + (f" (OPENBLAS_CORETYPE={pinned} in the environment)" if pinned else " (detected)")


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "--torch-worker":
        torch_worker(sys.argv[2], int(sys.argv[3]))
        return
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    attnviz = os.path.abspath(sys.argv[1])
    work = sys.argv[2] if len(sys.argv) > 2 else "build/bench-train"
    os.makedirs(work, exist_ok=True)
    rounds = int(os.environ.get("BENCH_ROUNDS", "3"))
    shapes = os.environ.get("BENCH_SHAPES", "small,large").split(",")
    ses = bc.Session("train: attnviz beside PyTorch, each alone", "train")
    print("training tokens/s (source + target non-pad tokens per step / step time), "
          "attnviz vs PyTorch, each configuration's runs together")
    print(f"OpenBLAS kernels (both sides, the same library): {blas_core()}")
    ratios = {sh: bench_shape(ses, attnviz, work, sh, rounds) for sh in shapes}
    print("ratios (attnviz / PyTorch): " +
          ", ".join(f"{sh} {r[0]:.2f}x 1 thread, {r[1]:.2f}x 2 threads" for sh, r in ratios.items()))
    print("ratios (attnviz / PyTorch with its memory kept): " +
          ", ".join(f"{sh} {r[2]:.2f}x 1 thread, {r[3]:.2f}x 2 threads" for sh, r in ratios.items()))
    ses.finish()


if __name__ == "__main__":
    main()
