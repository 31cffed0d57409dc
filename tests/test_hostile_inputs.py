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


# ---- tokenizer.json parts that cost without bound ----

def _tokenizer_dir(tmp, name, normalizer=None, pre_tokenizer=None, added=()):
    """A tiny WordLevel tokenizer.json in tmp/name (only a tokenizer: enough for tokenize)."""
    d = os.path.join(tmp, name)
    os.makedirs(d)
    tok = {"version": "1.0", "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "a": 1, "b": 2}, "unk_token": "[UNK]"},
           "added_tokens": [{"id": 3 + i, "content": c, "special": False, "normalized": True}
                            for i, c in enumerate(added)]}
    if normalizer:
        tok["normalizer"] = normalizer
    if pre_tokenizer:
        tok["pre_tokenizer"] = pre_tokenizer
    with open(os.path.join(d, "tokenizer.json"), "w") as f:
        json.dump(tok, f)
    return d


def _sanitized():
    """1 when the binary under test is make sanitize's (it carries AddressSanitizer's runtime)."""
    with open(ATTNVIZ, "rb") as f:
        return b"__asan_init" in f.read()


def _bounded(args, input, seconds, mem_mb=2048):
    """attnviz under a memory cap (address space) and a time limit: its result, wall seconds and CPU seconds
    (under make sanitize's build: no cap, and the seconds divided by 10, its slowdown)."""
    import resource, time

    def cap():   # AddressSanitizer reserves terabytes of shadow address space: its build (make sanitize) runs uncapped
        if not _sanitized():
            resource.setrlimit(resource.RLIMIT_AS, (mem_mb << 20, mem_mb << 20))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    r = subprocess.run([ATTNVIZ, *args], input=input, capture_output=True, text=True, timeout=seconds, preexec_fn=cap)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    slow = 10.0 if _sanitized() else 1.0   # -O1 with AddressSanitizer: the bounds are for the real build
    return r, (time.monotonic() - t0) / slow, cpu / slow


def _one_error_line(r):
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert r.returncode == 1 and len(lines) == 1 and lines[0].startswith("attnviz: error:"), r.stderr
    return lines[0]


def test_a_normalizer_bomb_is_refused_at_load(tmp):
    """Five nested Replace normalizers that each multiply the text by 1000 (1 byte -> 10^15): at load,
    normalizing the added token "a", memory grew to 9.4 GB and an int capacity wrapped to 0. Now the first
    part that grows a text past 8x + 256 bytes is refused by name, at once, in little memory."""
    bomb = {"type": "Sequence", "normalizers": [{"type": "Sequence", "normalizers": [
        {"type": "Replace", "pattern": {"String": "a"}, "content": "a" * 1000}] * 5}]}
    d = _tokenizer_dir(tmp, "bomb", normalizer=bomb, added=["a"])
    r, wall, _ = _bounded(["tokenize", "--model", d], "a\n", 60, mem_mb=1024)
    line = _one_error_line(r)
    assert "tokenizer.json: normalizer.normalizers[0].normalizers[0]: refused" in line and "1000" in line, line
    assert wall < 5 and r.stdout == "", (wall, r.stdout[:200])


def test_a_pre_tokenizer_chain_may_not_grow_the_text_without_bound(tmp):
    """ByteLevel doubles some bytes; twelve of them in a Sequence would grow a text 4096-fold. The text is
    checked after every part; the message names the one that passed the limit."""
    pre = {"type": "Sequence", "pretokenizers": [{"type": "ByteLevel", "add_prefix_space": False,
                                                  "use_regex": False}] * 12}
    d = _tokenizer_dir(tmp, "bl", pre_tokenizer=pre)
    r, wall, _ = _bounded(["tokenize", "--model", d], "\u00e9" * 1000 + "\n", 60, mem_mb=1024)
    line = _one_error_line(r)
    assert "cannot tokenize the text: pre_tokenizer.pretokenizers[" in line and "refused" in line, line
    assert wall < 5, wall


def test_a_pathological_regex_costs_bounded_time(tmp):
    """(?:a?){N}a{N}c backtracks 2^N steps at each place of a run of a's. At N = 19, just under PCRE2's
    old per-match limit, it cost 9 ms a character (10,000 characters: over a minute and a half, with a
    silently different split when the limit was reached). Now a text has a budget of steps (1M + 256 a byte):
    the crafted pattern is refused in well under a second with one line; a cheap pattern on the same
    10,000 characters still splits them all."""
    text = "a" * 10000 + "\n"
    for n in (19, 14):
        pre = {"type": "Split", "pattern": {"Regex": "(?:a?){%d}a{%d}c|." % (n, n)}, "behavior": "Isolated",
               "invert": False}
        d = _tokenizer_dir(tmp, f"re{n}", pre_tokenizer=pre)
        r, wall, _ = _bounded(["tokenize", "--model", d], text, 60)
        line = _one_error_line(r)
        assert "pre_tokenizer: refused: its regex backtracks too much" in line, line
        assert wall < 5 and r.stdout == "", wall
    pre = {"type": "Split", "pattern": {"Regex": "(?:a?){4}a{4}c|."}, "behavior": "Isolated", "invert": False}
    d = _tokenizer_dir(tmp, "cheap", pre_tokenizer=pre)
    r, wall, _ = _bounded(["tokenize", "--model", d], text, 60)
    assert r.returncode == 0 and r.stdout.split() == ["1"] * 10000, r.stderr
    assert wall < 5, wall


def test_a_long_run_of_spaces_still_splits_with_llama3s_pattern(tmp):
    """Llama 3's \\s*[\\r\\n]+ backtracks over a whole run of spaces at its first place: one costly
    place is within the budget (50,000 spaces)."""
    pat = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
           r"\s*[\r\n]+|\s+(?!\S)|\s+")
    d = _tokenizer_dir(tmp, "l3", pre_tokenizer={"type": "Split", "pattern": {"Regex": pat},
                                                 "behavior": "Isolated", "invert": False})
    r, wall, _ = _bounded(["tokenize", "--model", d, "--tokens"], " " * 50000 + "a\n", 60)
    assert r.returncode == 0, r.stderr
    assert wall < 5, wall


def test_100000_added_tokens_load_in_linear_time(tmp):
    """Each added token was looked up by scanning the ones before it: 100,000 took 26 s of CPU."""
    d = os.path.join(tmp, "many")
    os.makedirs(d)
    tok = {"version": "1.0", "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "a": 1}, "unk_token": "[UNK]"},
           "added_tokens": [{"id": 2 + i, "content": f"<t{i}>", "special": True} for i in range(100000)]}
    with open(os.path.join(d, "tokenizer.json"), "w") as f:
        json.dump(tok, f)
    r, _, cpu = _bounded(["tokenize", "--model", d], "<t7><t99999>\n", 60)
    assert r.returncode == 0 and r.stdout.split() == ["9", "100001"], (r.stdout, r.stderr)
    assert cpu < 1.5, f"{cpu:.2f} s of CPU"


# ---- a model file that is something else ----

def test_a_shard_that_links_to_a_secret_is_not_echoed(tmp):
    """A safetensors shard may be a symlink to any file the user can read (/etc/shadow): its first 8 bytes
    were printed as the 'header length'. The message now says what is wrong without them. A FIFO as the
    shard is refused at once (opened without blocking, checked to be a regular file)."""
    from hf_fixtures import write_gpt2_dir
    d = os.path.join(tmp, "m")
    write_gpt2_dir(d, V=300, P=16)
    secret = os.path.join(tmp, "secret")
    content = b"root:$6$salt$hash:19000:0:99999:7:::\n"
    with open(secret, "wb") as f:
        f.write(content)
    os.remove(os.path.join(d, "model.safetensors"))
    os.symlink(secret, os.path.join(d, "model.safetensors"))
    r = subprocess.run([ATTNVIZ, "info", "--model", d], capture_output=True, text=True, timeout=20)
    line = _one_error_line(r)
    as_number = str(int.from_bytes(b"root:$6$", "little"))
    assert f"impossible for a {len(content)}-byte file" in line and as_number not in line, line
    os.remove(os.path.join(d, "model.safetensors"))
    os.mkfifo(os.path.join(d, "model.safetensors"))
    r = subprocess.run([ATTNVIZ, "info", "--model", d], capture_output=True, text=True, timeout=10)
    assert r.returncode == 1 and "not a regular file" in r.stderr, r.stderr


def test_a_shard_name_with_a_newline_is_one_line(tmp):
    """A weight_map entry of model.safetensors.index.json holding a newline was quoted into the message,
    which then took two lines (found by fuzz_folder). Such a name is refused and nothing is echoed."""
    from hf_fixtures import write_gpt2_dir
    d = os.path.join(tmp, "m")
    write_gpt2_dir(d, V=300, P=16)
    os.remove(os.path.join(d, "model.safetensors"))
    with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
        json.dump({"weight_map": {"wte.weight": "model-1.safetensors\nattnviz: fake second line"}}, f)
    r = subprocess.run([ATTNVIZ, "info", "--model", d], capture_output=True, text=True, timeout=20)
    line = _one_error_line(r)
    assert "not a plain file name" in line and "fake" not in line, line


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
    r = _run_env(["run", *m, "--max-memory", "100K", "--out", out, text], {})
    assert r.returncode == 1 and "102 kB is free under --max-memory" in r.stderr and not os.path.exists(out), r.stderr
    r = _run_env(["run", *m, "--max-memory", "2X", "--out", out, text], {})
    assert r.returncode == 2 and "not a size" in r.stderr, r.stderr
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


def test_a_cut_short_json_file_says_so_and_where(tmp):
    """A vocab.json or config.json cut short (a download stopped half way) is named as
    not valid JSON with the byte where reading stopped, not as 'not a JSON object'; the
    run writes nothing."""
    from hf_fixtures import write_gpt2_dir
    d = os.path.join(tmp, "cut")
    write_gpt2_dir(d)
    with open(os.path.join(d, "vocab.json"), "w") as f:
        f.write('{"a": 0, "b": 1, "ab')
    with open(os.path.join(d, "merges.txt"), "w") as f:
        f.write("#version: 0.2\na b\n")
    r = run_err("tokenize", "--model", d, input="ab\n")
    assert "vocab.json is not valid JSON (cut short or damaged at byte 18)" in r.stderr, r.stderr
    with open(os.path.join(d, "config.json")) as f:
        cfg = f.read()
    with open(os.path.join(d, "config.json"), "w") as f:
        f.write(cfg[:40])
    out = os.path.join(tmp, "out")
    r = run_err("run", "--model", d, "--out", out, "ab")
    assert "config.json is not valid JSON (cut short or damaged at byte" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not os.path.exists(out)
