"""Generation speed: attnviz's greedy decoding of stories260K with its KV cache beside
PyTorch's greedy decoding of the same model with a KV cache, measured in the same run
(make bench).

  attnviz  `attnviz generate ... --steps N --no-pictures --trace none`: its printed
           tokens/s, the wall time of the N steps that write a token (each reads one
           token, computes its query row in every layer and head, keeps every head's
           row, and chooses the next token with its top 5); the prompt's other tokens
           are read before the clock starts
  PyTorch  the llama2.c architecture written here in torch (float32, 1 thread, which
           is faster than 2 on this machine), eval and no_grad, a preallocated
           (L, P, Hkv·D) cache: the prompt but its last token read first, then the
           clock runs over the same N steps (one token in, argmax out)

Both write the same ids (checked).  The machine has 2 shared cores, often busy: the
ratio is of CPU time (the process's, over the same steps), the wall-clock figures are
printed beside it; each figure is the best of REPEAT runs.  Skips with a reason when ../shared/models/stories260K is absent.
Usage: bench_generate.py [STEPS]"""
import os, re, subprocess, sys, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import llama_ref as ref

ROOT = os.path.dirname(HERE)
ATTNVIZ = os.environ.get("ATTNVIZ", os.path.join(ROOT, "build", "attnviz"))
STORIES = os.path.normpath(os.path.join(ROOT, "..", "shared", "models", "stories260K"))
PROMPT = "Once upon a time"
REPEAT = 3


def attnviz_run(steps):
    args = [ATTNVIZ, "generate", "--model", os.path.join(STORIES, "stories260K.bin"), "--tokenizer",
            os.path.join(STORIES, "tok512.bin"), PROMPT, "--steps", str(steps), "--no-pictures", "--trace", "none"]
    r = subprocess.run(args, capture_output=True, text=True, check=True)
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


def torch_run(steps):
    import torch
    torch.set_num_threads(1)
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


def main():
    if not os.path.exists(os.path.join(STORIES, "stories260K.bin")):
        print(f"skip: {STORIES} is absent (the real stories260K weights)")
        return 0
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    a = max(attnviz_run(steps) for _ in range(REPEAT))
    n = a[2]                                  # tokens attnviz wrote (it stops at end of text)
    p = max(torch_run(n) for _ in range(REPEAT))
    want = ref.encode(*ref.read_tok(os.path.join(STORIES, "tok512.bin"), 512), PROMPT)
    r = subprocess.run([ATTNVIZ, "generate", "--model", os.path.join(STORIES, "stories260K.bin"), "--tokenizer",
                        os.path.join(STORIES, "tok512.bin"), PROMPT, "--steps", str(n), "--no-pictures",
                        "--out", os.path.join(ROOT, "build", "bench-generate")], capture_output=True, text=True)
    import json
    tr = json.load(open(os.path.join(ROOT, "build", "bench-generate", "trace.json")))
    same = [s["id"] for s in tr["generation"]["steps"]] == p[2]
    print(f"generate stories260K greedy, {n} tokens after \"{PROMPT}\" ({len(want)} prompt tokens), CPU time: "
          f"attnviz {a[0]:.0f} tokens/s (every head's row kept), PyTorch {p[0]:.0f} tokens/s "
          f"(1 thread, KV cache), ratio {a[0] / p[0]:.1f}x; wall clock: {a[1]:.0f} and {p[1]:.0f}; "
          f"same tokens: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
