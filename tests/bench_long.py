"""Long texts beside PyTorch (make bench-long; issue 42; docs/own-model.md quotes the record).

Two shapes, the folders of tests/bench_hf.py (build/bench-hf/, random weights):
  SmolLM2-135M  30 layers x 9 heads on a text of exactly 2,000 tokens
  GPT-2-small   12 layers x 12 heads on a text of exactly 400 tokens
Each side alone, in processes of its own, never alternating (tests/bench_common.py):
  PyTorch  the same architecture in torch (bench_hf.py's worker), float32, every layer's
           attention weights returned (output_attentions=True), at 1 thread and at 2
           (torch and every BLAS pool at n), each in one warm process of its own: 2 untimed
           forwards, then BENCH_LONG_RUNS timed ones (default 1); its peak memory (wait4)
  attnviz  the command a user types, with its default options (pictures, trace.bin, the
           page): run --model DIR --quiet --out D "TEXT", fresh processes after one
           untimed, at 1 thread and at the default threads; peak memory
and the page run wrote opened in Debian's Chromium (tests/page_browser.js): how long it
takes to open and draw, and a hover over the passage.
Limits (issue 42): run with its default threads (every processor) no slower than PyTorch's
forward at its fastest thread count (each measured alone), in at most 2 GB; the page
opens in under 3 s and a hover redraws in under 50 ms.  The load average is printed before and after; above 1 the figures get no verdict.
Usage: bench_long.py   (exit status 1 when a limit is missed)"""
import json, os, shutil, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_common as bc
import bench_hf as bh

ATTNVIZ = bh.ATTNVIZ
RUNS = int(os.environ.get("BENCH_LONG_RUNS", "1"))
ARUNS = int(os.environ.get("BENCH_LONG_ATTNVIZ_RUNS", "2"))
GB = 2 ** 30


def page_open(out):
    """Opens out/index.html in Chromium: (ms to open and draw, a hover's redraw ms), or None."""
    node = shutil.which("node")
    chrome = next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)
    npm = os.path.join(bc.ROOT, "build", "npm", "node_modules")
    if not node or not chrome or not os.path.exists(os.path.join(npm, "puppeteer-core")):
        return None
    hover = ("(() => { const t = document.getElementById('av-passage-text'), n = t.children.length;"
             " const s = t.querySelector('[data-i=\"' + (n - 5) + '\"]');"
             " s.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));"
             " return +t.getAttribute('data-ms'); })()")
    cfg = {"page": os.path.join(out, "index.html"), "npm": npm, "chromium": chrome, "shots": None,
           "probe": [{"eval": "attnvizPage.state.tab"}, {"eval": hover}]}
    r = subprocess.run([node, os.path.join(HERE, "page_browser.js"), json.dumps(cfg)], capture_output=True,
                       text=True, timeout=600, cwd=os.path.join(bc.ROOT, "build", "npm"))
    if r.returncode != 0:
        sys.exit(f"bench: page_browser.js failed: {r.stderr.strip()[-1000:]}")
    res = json.loads(r.stdout.strip().splitlines()[-1])
    return res["open_ms"], res["probe"][1], res["probe"][0]


def one(ses, kind, name, d, words, filler, T, maps):
    text, ids = bh.text_of(d, words, filler, T)
    out = os.path.join(bh.BASE, f"{name}-{T}-long.out")
    clean = lambda: shutil.rmtree(out, ignore_errors=True)
    print(f"{name}, {T} tokens, {maps} maps of {T} x {T}:")
    torch_by = {}   # PyTorch at each thread count, each in a process of its own; its best is the yardstick
    for n in bh.THREADS:
        envn = bc.thread_env(n)
        argv = bh.torch_argv(kind, d, n, RUNS, ids)
        print(f"    $ {bc.shell(argv[:-1] + [f'<the {T} ids>'], envn)}")
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, env=envn, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _, status, ru = os.wait4(p.pid, 0)
        so, se = p.stdout.read(), p.stderr.read()
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"bench: {bc.shell(argv, envn)} failed:\n{se.strip()}")
        times = [float(x) for x in [l for l in so.splitlines() if l.startswith("torch_bench ")][-1].split()[1:]]
        peak = ru.ru_maxrss * 1024
        torch_by[n] = (times, peak)
        print(f"    {'PyTorch forward, every map (own process)':<46} {bc.label(n)}: {bc.fmt(times)}; "
              f"peak {peak / GB:.2f} GB (the whole process: {time.perf_counter() - t0:.0f} s)")
        ses.record(f"{name} {T} PyTorch forward" + ("" if n == 1 else f" {bc.label(n)}"), times, config=bc.label(n),
                   peak_gb=round(peak / GB, 2))
    tn = min(torch_by, key=lambda n: statistics.median(torch_by[n][0]))
    torch_s, torch_peak = torch_by[tn]
    print(f"    PyTorch's fastest here: {bc.label(tn)} (the yardstick below)")
    cmd = [ATTNVIZ, "run", "--model", d, "--quiet", "--out", out, text]
    shown = bc.shell([a if len(a) < 60 else f"<the {T} tokens>" for a in cmd])
    res = {}
    for n in bh.THREADS:
        env = bc.thread_env(n)
        print(f"    $ {bc.shell(cmd, env)[:160]}…")
        walls, peak, _ = bc.time_processes(cmd, ARUNS, env, before=clean)
        res[n] = (walls, peak)
        r = statistics.median(walls) / statistics.median(torch_s)
        print(f"    {'attnviz run (pictures, trace.bin, page)':<46} {bc.label(n)}: {bc.fmt(walls)}; "
              f"peak {peak / GB:.2f} GB; ratio to PyTorch ({bc.label(tn)}), medians: {r:.2f}")
        ses.record(f"{name} {T} run {bc.label(n)}", walls, shown, config=bc.label(n), ratio=round(r, 2),
                   peak_gb=round(peak / GB, 2))
    # the verdict: run as a user types it, with its default threads (every processor), against PyTorch
    # at its fastest thread count; the other counts are printed too
    nd = max(res)
    rd = statistics.median(res[nd][0]) / statistics.median(torch_s)
    ses.check(rd <= 1.0, f"{name} {T} tokens: run with its default threads ({bc.label(nd)}) no slower than "
                         f"PyTorch's forward at its fastest ({bc.label(tn)}: {rd:.2f})")
    ses.check(max(p for _, p in res.values()) <= 2 * GB,
              f"{name} {T} tokens: run in at most 2 GB ({max(p for _, p in res.values()) / GB:.2f} GB)")
    clean()
    subprocess.run(cmd, env=bc.thread_env(max(bh.THREADS)), capture_output=True, check=True)
    size = os.path.getsize(os.path.join(out, "trace.bin"))
    page = os.path.getsize(os.path.join(out, "index.html"))
    print(f"    trace.bin {size / 2**20:.0f} MB; index.html {page / 2**20:.1f} MB")
    opened = page_open(out)
    if opened:
        ms, hover, tab = opened
        print(f"    the page in Chromium: opens and draws in {ms} ms on its {tab} tab; a hover redraws in {hover} ms")
        ses.record(f"{name} {T} page", None, open_ms=ms, hover_ms=hover, page_mb=round(page / 2**20, 1))
        ses.check(ms < 3000 and hover < 50, f"{name} {T} tokens: the page opens in under 3 s ({ms} ms) and a hover "
                                            f"redraws in under 50 ms ({hover} ms)")
    else:
        print("    (no node, Chromium or puppeteer-core: the page is not timed; make deps installs them)")
    clean()


def main():
    ses = bc.Session("Long texts: attnviz run beside PyTorch's forward returning every map", "long")
    print(f"method: each side alone; PyTorch at each of threads {bh.THREADS}, each in one warm process (2 untimed forwards, "
          f"{RUNS} timed: BENCH_LONG_RUNS); attnviz run with its default options, {ARUNS} fresh processes "
          f"after one untimed (BENCH_LONG_ATTNVIZ_RUNS), at threads {bh.THREADS}; peak memory from wait4")
    # SmolLM2's folder has one word per id (w3 w4 …: bench_hf.py), GPT-2's the real vocabulary
    smol = [f"w{3 + (i * 7919) % 49000}" for i in range(2100)]
    one(ses, "smollm2", "SmolLM2-135M", bh.llama_dir("smollm2-135m", bh.SMOLLM2, "F32"), smol, "w100", 2000, 270)
    one(ses, "gpt2", "GPT-2-small", bh.gpt2_dir(), bh.GPT2_WORDS * 8, "the", 400, 144)
    return ses.finish()


if __name__ == "__main__":
    sys.exit(main())
