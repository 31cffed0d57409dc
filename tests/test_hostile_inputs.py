"""Hostile and careless inputs (issue 38): each gives one clear line on stderr and a
non-zero exit in bounded time, or succeeds where it should; nothing outside --out is
touched.  The output-folder cases live in test_output_folders.py."""
import json, os, re, shutil, subprocess
from helpers import ATTNVIZ, run, run_ok, run_err, skip

STORIES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "shared",
                       "models", "stories260K")


def _page_data(path):
    """Every JSON data block of an index.html, parsed (fails if a block was cut short)."""
    html = open(path, encoding="utf-8").read()
    return [json.loads(m.group(1)) for m in
            re.finditer(r'<script type="application/json" class="attnviz-data" id="[^"]*">(.*?)</script>', html, re.S)]


def test_generate_escapes_a_closing_tag_in_the_page(tmp):
    """Case 10: a prompt holding </script> is written into the page escaped, as run does."""
    if not os.path.exists(os.path.join(STORIES, "stories260K.bin")):
        skip(f"{STORIES} is absent (the real weights live in ../shared/models)")
    prompt = "Lily said </script><script>alert(1)</script>"
    out = os.path.join(tmp, "g")
    run_ok("generate", "--model", os.path.join(STORIES, "stories260K.bin"), "--tokenizer",
           os.path.join(STORIES, "tok512.bin"), "--steps", "3", "--out", out, prompt)
    blocks = _page_data(os.path.join(out, "index.html"))
    assert blocks and blocks[0]["generation"]["prompt"] == prompt


def test_a_fifo_where_a_file_should_be_does_not_hang(tmp):
    """Case 8: config.json or a --q file that is a FIFO: one line, at once."""
    d = os.path.join(tmp, "m")
    os.makedirs(d)
    os.mkfifo(os.path.join(d, "config.json"))
    r = subprocess.run([ATTNVIZ, "info", "--model", d], capture_output=True, text=True, timeout=10)
    assert r.returncode == 1 and "not a regular file" in r.stderr, r.stderr
    q = os.path.join(tmp, "q.json")
    os.mkfifo(q)
    r = subprocess.run([ATTNVIZ, "steps", "--q", q, "--k", "[[1]]", "--out", os.path.join(tmp, "o")],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode != 0 and "not a regular file" in r.stderr, r.stderr


def _stories():
    if not os.path.exists(os.path.join(STORIES, "stories260K.bin")):
        skip(f"{STORIES} is absent (the real weights live in ../shared/models)")
    return ["--model", os.path.join(STORIES, "stories260K.bin"), "--tokenizer", os.path.join(STORIES, "tok512.bin")]


def _run_env(args, env, timeout=60):
    return subprocess.run([ATTNVIZ, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **env})


def test_memory_is_checked_before_the_forward_pass(tmp):
    """Case 6: the maps' size is estimated from the tokens before any forward pass
    (5 layers x 8 heads x 32 tokens^2 x 4 bytes = 163,840 bytes for stories260K), and
    a run over the limit is refused with both figures and what helps; the generation's
    rows likewise. Nothing is written."""
    m = _stories()
    out = os.path.join(tmp, "o")
    text = "Lily had a red ball. She gave it to Tom and they played all day long in the sun."
    r = _run_env(["run", *m, "--out", out, text], {"ATTNVIZ_MAX_MEMORY": "100K"})
    assert r.returncode == 1 and "would take about 164 kB" in r.stderr and "102 kB is free" in r.stderr, r.stderr
    assert "shorter text" in r.stderr and not os.path.exists(out)
    r = _run_env(["run", *m, "--out", out, text], {"ATTNVIZ_MAX_MEMORY": "200K"})
    assert r.returncode == 0, r.stderr
    r = _run_env(["generate", *m, "--steps", "400", "--out", os.path.join(tmp, "g"), "Lily"],
                 {"ATTNVIZ_MAX_MEMORY": "1M"})
    assert r.returncode == 1 and "fewer --steps" in r.stderr and not os.path.exists(os.path.join(tmp, "g")), r.stderr


def test_a_tinyllama_shaped_folder_draws_its_grid(tmp):
    """Case 11: a TinyLlama-shaped folder (22 layers x 32 query heads, 4 key/value
    heads) on a 14-token sentence failed after the forward pass ("picture would be
    1703 x 51270 pixels"); its grid is now drawn with labels on the edges (and
    scaled to 3000 px)."""
    import llama_ref as L
    cfg = L.shrunk("tinyllama-1.1b-chat-v1.0", hidden_size=64, intermediate_size=96, num_attention_heads=32,
                   num_key_value_heads=4, num_hidden_layers=22, vocab_size=64, max_position_embeddings=128)
    cfg["head_dim"] = 2
    d = os.path.join(tmp, "tl")
    L.write_hf_dir(d, cfg, L.hf_weights(cfg))
    L.write_tiny_tokenizer(d, ["the", "animal", "did", "not", "cross", "street", "because", "it", "was", "too",
                               "tired", "."])
    out = os.path.join(tmp, "o")
    run_ok("run", "--model", d, "--out", out, "the animal did not cross the street because it was too tired .")
    import struct
    png = open(os.path.join(out, "grid.decoder.masked_self.png"), "rb").read()
    w, h = struct.unpack(">II", png[16:24])
    assert max(w, h) <= 3000 and min(w, h) > 100, (w, h)
