"""Generation speed: attnviz's greedy decoding of stories260K with its KV cache beside
PyTorch's greedy decoding of the same model with a KV cache (make bench-generate, part of
make bench; tests/bench_common.py says how each side is timed alone).

  attnviz  `attnviz generate ... --steps N --no-pictures --trace none`: its printed
           tokens/s, the wall time of the N steps that write a token (each reads one
           token, computes its query row in every layer and head, keeps every head's
           row, and chooses the next token with its top 5); the prompt's other tokens
           are read before the clock starts.  Then the whole commands a user types, as
           fresh processes (best and median): `generate ... --out D` (pictures, trace
           and page, the default) and `generate ... --no-pictures` (trace.json only)
  PyTorch  the llama2.c architecture written here in torch (float32), eval and no_grad,
           a preallocated (L, P, Hkv·D) cache, in /usr/bin/python3 processes of its own,
           all after attnviz's runs: the prompt but its last token read first, then the
           clock runs over the same N steps (one token in, argmax out)

Both write the same ids (checked, whatever the load).  The ratio is of CPU time (the
process's, over the same steps), the wall-clock figures are printed beside it; each is
the best of REPEAT runs, at each thread count of BENCH_THREADS (default 1,2) on both
sides.  The load average is printed before and after.  Skips with a reason when
../shared/models/stories260K is absent.
Usage: bench_generate.py [STEPS]"""
import os, re, shutil, subprocess, sys, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import llama_ref as ref
import bench_common as bc

ROOT = os.path.dirname(HERE)
ATTNVIZ = os.environ.get("ATTNVIZ", os.path.join(ROOT, "build", "attnviz"))
STORIES = os.path.normpath(os.path.join(ROOT, "..", "shared", "models", "stories260K"))
PROMPT = "Once upon a time"
REPEAT = int(os.environ.get("BENCH_RUNS", "3"))
THREADS = [int(x) for x in os.environ.get("BENCH_THREADS", "1,2").split(",")]


def generate_argv(steps, *more):
    return [ATTNVIZ, "generate", "--model", os.path.join(STORIES, "stories260K.bin"), "--tokenizer",
            os.path.join(STORIES, "tok512.bin"), PROMPT, "--steps", str(steps), *more]


def attnviz_run(steps, env):
    r = subprocess.run(generate_argv(steps, "--no-pictures", "--trace", "none"), capture_output=True, text=True,
                       check=True, env=env)
    tps = float(re.search(r"speed: ([0-9.]+) tokens/s", r.stdout).group(1))
    cpu = float(re.search(r"CPU time ([0-9.]+) tokens/s", r.stdout).group(1))
    n = int(re.search(r"written \((\d+) tokens", r.stdout).group(1))
    return cpu, tps, n


class Llama:
    """llama2.c's model in torch with a KV cache (one token per call)."""

    def __init__(self, torch, cfg, w, P):
        t = lambda a: torch.tensor(a, dtype=torch.float32)
        self.torch, self.cfg = torch, cfg
        self.w = {k: t(v) for k, v in w.items() if k != "freq"}
        C, H, Hkv = cfg["dim"], cfg["H"], cfg["Hkv"]
        D = C // H
        self.D, self.group = D, H // Hkv
        freq = 10000.0 ** (-np.arange(0, D, 2) / D)
        ang = np.arange(P)[:, None] * freq[None, :]
        self.cos, self.sin = t(np.cos(ang)), t(np.sin(ang))                 # (P, D/2)
        self.k = torch.zeros(cfg["L"], P, Hkv, D)
        self.v = torch.zeros(cfg["L"], P, Hkv, D)

    def rms(self, x, g):
        return x * self.torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-5) * g

    def rope(self, x, t):                                                   # (n, D), pairs (2i, 2i+1)
        a, b = x[:, 0::2], x[:, 1::2]
        c, s = self.cos[t], self.sin[t]
        return self.torch.stack((a * c - b * s, a * s + b * c), -1).reshape(x.shape)

    def step(self, tok, t):
        torch, w, cfg, D = self.torch, self.w, self.cfg, self.D
        x = w["emb"][tok]
        for l in range(cfg["L"]):
            h = self.rms(x, w["rms_att"][l])
            q = self.rope((w["wq"][l] @ h).view(cfg["H"], D), t)
            self.k[l, t] = self.rope((w["wk"][l] @ h).view(cfg["Hkv"], D), t)
            self.v[l, t] = (w["wv"][l] @ h).view(cfg["Hkv"], D)
            qg = q.view(cfg["Hkv"], self.group, D)                           # query heads by key/value head
            k = self.k[l, :t + 1].transpose(0, 1)                            # (Hkv, t+1, D)
            v = self.v[l, :t + 1].transpose(0, 1)
            att = torch.softmax(qg @ k.transpose(1, 2) / D ** 0.5, -1)        # (Hkv, group, t+1)
            x = x + w["wo"][l] @ (att @ v).reshape(-1)
            h = self.rms(x, w["rms_ffn"][l])
            x = x + w["w2"][l] @ (torch.nn.functional.silu(w["w1"][l] @ h) * (w["w3"][l] @ h))
        return w["cls"] @ self.rms(x, w["rms_final"])


def torch_run(steps, threads):
    """In the worker process: (CPU tokens/s, wall tokens/s, the ids written)."""
    import torch
    torch.set_num_threads(threads)
    cfg, w = ref.read_llama2c(os.path.join(STORIES, "stories260K.bin"))
    pieces, scores = ref.read_tok(os.path.join(STORIES, "tok512.bin"), cfg["V"])
    ids = ref.encode(pieces, scores, PROMPT)
    m = Llama(torch, cfg, w, cfg["P"])
    with torch.no_grad():
        for t, tok in enumerate(ids[:-1]):
            m.step(tok, t)
        out, tok, t = [], ids[-1], len(ids) - 1
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(steps):
            tok = int(torch.argmax(m.step(tok, t)))
            out.append(tok)
            t += 1
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
    return steps / dc, steps / dt, out


def torch_child(steps, threads):
    """One PyTorch run in a /usr/bin/python3 process of its own."""
    argv, env = [bc.TORCH_PY, os.path.abspath(__file__), "--torch-worker", str(steps), str(threads)], \
        bc.thread_env(threads)
    r = subprocess.run(argv, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bench_generate: {bc.shell(argv, env)} failed:\n{r.stderr.strip()}")
    cpu, wall, *ids = r.stdout.split()
    return float(cpu), float(wall), [int(x) for x in ids]


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--torch-worker":
        cpu, wall, ids = torch_run(int(sys.argv[2]), int(sys.argv[3]))
        print(cpu, wall, *ids)
        return 0
    if not os.path.exists(os.path.join(STORIES, "stories260K.bin")):
        print(f"skip: {STORIES} is absent (the real stories260K weights)")
        return 0
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    ses = bc.Session("generate: stories260K with a KV cache, attnviz beside PyTorch, each alone", "generate")
    out = os.path.join(ROOT, "build", "bench-generate")
    clean = lambda: shutil.rmtree(out, ignore_errors=True)
    a, cmds = {}, {}
    for n in THREADS:
        env = bc.thread_env(n)
        print(f"    $ {bc.shell(generate_argv(steps, '--no-pictures', '--trace', 'none'), env)}")
        a[n] = max(attnviz_run(steps, env) for _ in range(REPEAT))
    n_tok = a[THREADS[0]][2]                 # tokens attnviz wrote (it stops at end of text)
    for label, more in (("generate (pictures, trace, page: the default)", ("--out", out)),
                        ("generate --no-pictures (trace.json)", ("--no-pictures", "--out", out))):
        for n in THREADS:
            argv, env = generate_argv(n_tok, *more), bc.thread_env(n)
            print(f"    $ {bc.shell(argv, env)}")
            cmds[(label, n)] = bc.time_processes(argv, REPEAT, env, before=clean)[0]
    clean()
    r = subprocess.run(generate_argv(n_tok, "--no-pictures", "--out", out), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    import json
    with open(os.path.join(out, "trace.json")) as f:
        written = [s["id"] for s in json.load(f)["generation"]["steps"]]
    p = {}
    for n in THREADS:
        print(f"    $ {bc.shell([bc.TORCH_PY, os.path.abspath(__file__), '--torch-worker', str(n_tok), str(n)], bc.thread_env(n))}")
        p[n] = max(torch_child(n_tok, n) for _ in range(REPEAT))
    want = ref.encode(*ref.read_tok(os.path.join(STORIES, "tok512.bin"), 512), PROMPT)
    same = all(written == p[n][2] for n in THREADS)
    print(f"generate stories260K greedy, {n_tok} tokens after \"{PROMPT}\" ({len(want)} prompt tokens), "
          f"best of {REPEAT}; same tokens: {'yes' if same else 'NO'}")
    for n in THREADS:
        print(f"  {n} thread{'s' * (n > 1)}: CPU time: attnviz {a[n][0]:.0f} tokens/s (every head's row kept), "
              f"PyTorch {p[n][0]:.0f} tokens/s (KV cache), ratio {a[n][0] / p[n][0]:.1f}x; wall clock: "
              f"{a[n][1]:.0f} and {p[n][1]:.0f}")
    for (label, n), xs in cmds.items():
        print(f"  attnviz {label:<48} {n} thread{'s' * (n > 1)}: {bc.fmt(xs)}")
        ses.record(f"{label.split(' (')[0]} {bc.label(n)}", xs)
    for n in THREADS:
        ses.record(f"tokens/s {bc.label(n)}", None, attnviz=round(a[n][0]), pytorch=round(p[n][0]),
                   ratio=round(a[n][0] / p[n][0], 2), tokens=n_tok)
    ses.finish()
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
