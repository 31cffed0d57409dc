"""Labelled heatmaps of every head: attnviz beside PyTorch + matplotlib, each alone
(make bench-pictures, part of make bench; docs/own-model.md quotes the figures;
tests/bench_common.py says how each side is timed).

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
              the figure is (forward + the HEADS pictures) / HEADS, in a /usr/bin/python3
              process of its own (one untimed round, then BENCH_RUNS timed ones)
All of matplotlib's runs of a thread count first, then attnviz's (BENCH_RUNS fresh
processes after one untimed), at each of BENCH_THREADS (default 1,2); best and median
printed, the ratio of medians at each side's faster count.  Limit (issue 29): attnviz at
least 50x faster per labelled heatmap; judged only when the load average before and after
is at most 1.  Usage: bench_pictures.py   (exit 1 when missed)"""
import os, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_hf
import bench_common as bc

ATTNVIZ = bench_hf.ATTNVIZ
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
THREADS = [int(x) for x in os.environ.get("BENCH_THREADS", "1,2").split(",")]
HEADS = 12
TEXT = ("The animal didn't cross the street because it was too tired, so the farmer carried it home "
        "before the rain")


def attnviz_argv(d, out):
    return [ATTNVIZ, "run", "--model", d, "--out", out, "--max-pictures", "144", "--quiet", TEXT]


def count_pngs(out):
    pngs = sum(1 for _, _, fs in os.walk(out) for f in fs if f.endswith(".png"))
    heads = sum(1 for _, _, fs in os.walk(out) for f in fs if ".h" in f and f.endswith(".png"))
    return pngs, heads


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


def matplotlib_worker(d, threads, n):
    """In a process of its own: one untimed round, then n timed ones (seconds a heatmap)."""
    import torch
    torch.set_num_threads(threads)
    p = bench_hf.read_safetensors(os.path.join(d, "model.safetensors"))
    ids, labels = tokens_of(d)
    with tempfile.TemporaryDirectory() as tmp:
        out = [matplotlib_round(p, ids, labels, tmp) for _ in range(1 + n)][1:]
    bc.torch_report(out)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--worker":
        matplotlib_worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return 0
    ses = bc.Session("labelled heatmaps: attnviz beside PyTorch + matplotlib, each alone", "pictures")
    d = bench_hf.gpt2_dir()
    ids, _ = tokens_of(d)
    m, a = {}, {}
    for n in THREADS:
        argv, env = [bc.TORCH_PY, os.path.abspath(__file__), "--worker", d, str(n), str(RUNS)], bc.thread_env(n)
        print(f"    $ {bc.shell(argv, env)}")
        m[n] = bc.torch_child(argv, env)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")
        argv = attnviz_argv(d, out)
        for n in THREADS:
            env = bc.thread_env(n)
            print(f"    $ {bc.shell(argv, env)}")
            walls, _, _ = bc.time_processes(argv, RUNS, env, before=lambda: shutil.rmtree(out, ignore_errors=True))
            pngs, heads = count_pngs(out)
            a[n] = [w / pngs for w in walls]
    print(f"GPT-2-small shape, {len(ids)} tokens, labelled heatmaps: attnviz {pngs} PNGs a run ({heads} per-head "
          f"heatmaps); matplotlib {__import__('matplotlib').__version__}: PyTorch forward + {HEADS} heatmaps")
    for n in THREADS:
        print(f"  {n} thread{'s' * (n > 1)}: attnviz a picture {bc.fmt([x * 1e3 for x in a[n]], 'ms')}; "
              f"matplotlib a heatmap {bc.fmt([x * 1e3 for x in m[n]], 'ms')}")
    an = min(a, key=lambda n: statistics.median(a[n]))
    mn = min(m, key=lambda n: statistics.median(m[n]))
    ratio = statistics.median(m[mn]) / statistics.median(a[an])
    print(f"  ratio       attnviz ({an}) {ratio:.0f}x faster per labelled heatmap than matplotlib ({mn}), medians")
    ses.record("attnviz a picture", a[an], bc.shell([x.replace(d, "build/bench-hf/gpt2-small") for x in argv]),
               config=bc.label(an), pictures=pngs, heatmaps=heads)
    ses.record("PyTorch + matplotlib a heatmap", m[mn], config=bc.label(mn))
    ses.record("ratio", ratio)
    ses.check(ratio >= 50, f"at least 50x faster per labelled heatmap ({ratio:.0f}x)")
    return ses.finish()


if __name__ == "__main__":
    sys.exit(main())
