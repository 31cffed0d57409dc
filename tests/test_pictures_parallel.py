"""Per-head heatmaps drawn side by side (src/pipeline/pictures.c every_head: an OpenMP
loop over the list of heads, each job writing its own PNG; render/font.c keeps its
FreeType faces per thread): the same files — PNGs to the chunk and the pixel
(helpers.png_content), everything else to the byte — and the same page and trace as
drawn on one thread, and the cap on heatmaps per run kept."""
import hashlib, os, re, subprocess
from helpers import ATTNVIZ, load_json, png_content
import hf_fixtures as hf

HEAD = re.compile(r"^decoder\.\d+\.masked_self\.h\d+\.png$")
TEXT = "The cat sat on the mat because it was tired and warm ."


def run_with_threads(d, out, threads, *extra):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    r = subprocess.run([ATTNVIZ, "run", "--model", d, "--out", out, *extra, TEXT], capture_output=True, text=True,
                       env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    files = {}
    for root, _, names in os.walk(out):
        for n in names:
            with open(os.path.join(root, n), "rb") as f:
                data = png_content(f.read()).replace(out.encode(), b"OUT")   # the page shows the command line
            if n == ".attnviz-files":   # a PNG's listed hash follows its deflate bytes (png_content): names only
                data = b"\n".join(l.split(b" ", 2)[-1] for l in data.splitlines())
            files[os.path.relpath(os.path.join(root, n), out)] = hashlib.sha256(data).hexdigest()
    return files, r.stdout


def test_parallel_heatmaps_same_bytes_and_cap(tmp):
    d = os.path.join(tmp, "gpt2")
    hf.write_gpt2_dir(d, C=32, H=4, L=3, P=64)
    one, _ = run_with_threads(d, os.path.join(tmp, "one"), 1, "--max-pictures", "0")
    two, _ = run_with_threads(d, os.path.join(tmp, "two"), 2, "--max-pictures", "0")
    four, _ = run_with_threads(d, os.path.join(tmp, "four"), 4, "--max-pictures", "0")
    heads = sorted(f for f in one if HEAD.match(f))
    assert len(heads) == 12, heads
    assert one == two == four, [f for f in one if one.get(f) != two.get(f) or one.get(f) != four.get(f)]
    # the cap: the first 5 heads in map and head order, the rest counted on the page
    capped, out = run_with_threads(d, os.path.join(tmp, "cap"), 2, "--max-pictures", "5")
    got = sorted(f for f in capped if HEAD.match(f))
    assert got == sorted(["decoder.0.masked_self.h0.png", "decoder.0.masked_self.h1.png",
                          "decoder.0.masked_self.h2.png", "decoder.0.masked_self.h3.png",
                          "decoder.1.masked_self.h0.png"]), got
    with open(os.path.join(tmp, "cap", "index.html"), encoding="utf-8") as f:
        assert "7 more heads were not drawn: at most 5 heatmaps per run" in f.read()
    trace = load_json(os.path.join(tmp, "cap", "trace.json"))
    assert [i for i in trace["images"] if HEAD.match(i)] == got   # listed in map and head order
