"""Labelled heatmaps of every head: attnviz beside PyTorch + matplotlib, in the same run
(make bench-pictures, part of make bench; docs/own-model.md quotes the figures).

The GPT-2-small-shaped folder of bench_hf.py (random F32 weights, GPT-2's vocabulary),
one sentence of TOKENS tokens:
  attnviz     `attnviz run --model DIR --max-pictures 144 --timing "…"`: load, forward,
              every picture of the page (144 per-head heatmaps with token labels, title,
              subtitle and colour bar, the model-view grids, the lines views) drawn over
              the processors (OpenMP, one PNG per job), trace.json, index.html; the
              figure is the whole process's wall time divided by the pictures written
  matplotlib  the same forward in PyTorch (bench_hf.torch_gpt2, one thread), then for
              HEADS heads a labelled heatmap as people draw one (imshow, viridis, token
              tick labels on both axes, title, colour bar, savefig PNG at 100 dpi, Agg);
              the figure is (forward + the HEADS pictures) / HEADS
Rounds alternate (BENCH_ROUNDS, default 3); medians.  Limit (issue 29): attnviz at least
50x faster per labelled heatmap.  Usage: bench_pictures.py   (exit 1 when missed)"""
import os, statistics, subprocess, sys, tempfile, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_hf

ATTNVIZ = bench_hf.ATTNVIZ
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
HEADS = 12
TEXT = ("The animal didn't cross the street because it was too tired, so the farmer carried it home "
        "before the rain")


def attnviz_round(d, out):
    t = time.perf_counter()
    r = subprocess.run([ATTNVIZ, "run", "--model", d, "--out", out, "--max-pictures", "144", "--timing", "--quiet",
                        TEXT], capture_output=True, text=True)
    wall = time.perf_counter() - t
    assert r.returncode == 0, r.stderr
    pngs = sum(1 for _, _, fs in os.walk(out) for f in fs if f.endswith(".png"))
    heads = sum(1 for _, _, fs in os.walk(out) for f in fs if ".h" in f and f.endswith(".png"))
    return wall, pngs, heads, r.stdout.strip().splitlines()[-1]


def tokens_of(d):
    """The sentence's tokens as GPT-2 reads them (attnviz tokenize), for both sides."""
    r = subprocess.run([ATTNVIZ, "tokenize", "--model", d], input=TEXT + "\n", capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    ids = [int(x) for x in r.stdout.split()]
    return ids, [f"t{i}" for i in ids]


def matplotlib_round(p, ids, labels, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import torch
    t = time.perf_counter()
    with torch.no_grad():
        atts, _ = bench_hf.torch_gpt2(p, ids)
    for k in range(HEADS):
        layer, head = divmod(k, 12)
        w = atts[layer][head].numpy()
        fig, ax = plt.subplots(figsize=(6, 6))
        im = ax.imshow(w, cmap="viridis", vmin=0, vmax=1)
        ax.set_xticks(range(len(labels)), labels=labels, rotation=90, fontsize=7)
        ax.set_yticks(range(len(labels)), labels=labels, fontsize=7)
        ax.set_xlabel("key")
        ax.set_ylabel("query")
        ax.set_title(f"decoder layer {layer} · masked self-attention · head {head}")
        fig.colorbar(im, ax=ax)
        fig.savefig(os.path.join(out, f"decoder.{layer}.masked_self.h{head}.png"), dpi=100)
        plt.close(fig)
    return (time.perf_counter() - t) / HEADS


def main():
    import torch
    torch.set_num_threads(1)
    d = bench_hf.gpt2_dir()
    p = bench_hf.read_safetensors(os.path.join(d, "model.safetensors"))
    ids, labels = tokens_of(d)
    a, m, line = [], [], ""
    with tempfile.TemporaryDirectory() as tmp:
        attnviz_round(d, os.path.join(tmp, "warm"))
        matplotlib_round(p, ids, labels, tmp)
        for k in range(ROUNDS):
            wall, pngs, heads, line = attnviz_round(d, os.path.join(tmp, f"a{k}"))
            a.append(wall / pngs)
            m.append(matplotlib_round(p, ids, labels, tmp))
    am, mm = statistics.median(a), statistics.median(m)
    print(f"machine: {bench_hf.machine()}")
    print(f"GPT-2-small shape, {len(ids)} tokens, labelled heatmaps (medians of {ROUNDS} alternating rounds):")
    print(f"  attnviz     {am * 1e3:.1f} ms a picture: one process, {pngs} PNGs ({heads} per-head heatmaps), "
          f"drawn on {os.environ.get('OMP_NUM_THREADS', os.cpu_count())} threads  [{line}]")
    print(f"  matplotlib  {mm * 1e3:.1f} ms a heatmap: PyTorch forward (1 thread) + {HEADS} heatmaps, matplotlib "
          f"{__import__('matplotlib').__version__} (one process)")
    ratio = mm / am
    print(f"  ratio       attnviz {ratio:.0f}x faster per labelled heatmap")
    ok = ratio >= 50
    print(f"  {'ok  ' if ok else 'MISS'} at least 50x faster per labelled heatmap ({ratio:.0f}x)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
