"""Issue 14: one table of bad inputs.  For each case: a non-zero exit, exactly one
line on stderr ("attnviz: error: …") that says what is wrong, and the output
folder byte for byte as it was before (an earlier run's files untouched, nothing
new: no partial pictures, no staging folder, no empty folder).

Each case names the items of the issue it covers (1 non-finite, 2 atomic output,
3 arguments first, 4 limits, 5 checkpoint loader, 6 messages)."""
import json, os, resource, shutil, struct, subprocess
from helpers import ATTNVIZ, ROOT, read_safetensors, write_safetensors

MODEL = os.path.join(ROOT, "samples", "models", "attnviz-en-fr-vi.safetensors")
SENT = "the cat sat on the mat ."


def snapshot(d):
    """Every file and folder under d (hidden ones too) with its bytes; None if d is absent."""
    if not os.path.lexists(d):
        return None
    out = {}
    for root, dirs, names in os.walk(d):
        for n in dirs:
            out[os.path.relpath(os.path.join(root, n), d) + "/"] = b""
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, d)] = f.read()
    return out


def attnviz(args, fsize=None, timeout=300):
    def limit():
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    args = [a if isinstance(a, bytes) else str(a) for a in args]
    return subprocess.run([ATTNVIZ, *args], capture_output=True, timeout=timeout, preexec_fn=limit)


# ------------------------------------------------------------------ fixtures

def fnv1a64(data):
    """FNV-1a 64 (Fowler, Noll, Vo), written from its definition: the hash the list keeps."""
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def earlier_run(out):
    """An output folder holding an earlier run's files (which no failure may touch),
    listed in .attnviz-files as attnviz lists what it wrote."""
    os.makedirs(out, exist_ok=True)
    listed = ["attnviz-files 2"]
    for name, data in (("trace.json", b'{"earlier": true}\n'), ("steps-strip.png", b"earlier picture"),
                       ("index.html", b"<p>earlier</p>"), ("encoder.0.self.h0.png", b"earlier heatmap")):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        listed.append(f"{len(data)} {fnv1a64(data):016x} {name}")
    with open(os.path.join(out, ".attnviz-files"), "w") as f:
        f.write("\n".join(listed) + "\n")


def small_corpus(tmp):
    d = os.path.join(tmp, "corpus")
    if not os.path.isdir(d):
        # templates only: a small vocabulary, fast tiny trainings
        r = attnviz(["corpus", "--train", 300, "--heldout", 30, "--grammar-share", "0", "--heldout-frames", 0, "--out", d])
        assert r.returncode == 0, r.stderr
    return d


def corpus_with(tmp, name, fix):
    """A copy of the small corpus whose NAME.tsv has its first line changed by fix(columns)."""
    src = small_corpus(tmp)
    d = os.path.join(tmp, "corpus-bad-" + name + str(len(os.listdir(tmp))))
    shutil.copytree(src, d)
    p = os.path.join(d, name + ".tsv")
    with open(p, encoding="utf-8") as f:
        lines = f.read().split("\n")
    cols = lines[0].split("\t")
    fix(cols)
    lines[0] = "\t".join(cols)
    with open(p, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return d


def tiny_model_args(corpus, out):
    return ["train", "--corpus", corpus, "--out", out, "--steps", 3, "--batch", 8, "--d-model", 8, "--heads", 1,
            "--layers", 1, "--d-ff", 8, "--eval-limit", 5, "--quiet"]


def changed_model(tmp, name, change_meta=None, change_tensors=None):
    meta, tensors = read_safetensors(MODEL)
    if change_meta:
        change_meta(meta)
    if change_tensors:
        change_tensors(tensors)
    p = os.path.join(tmp, name + ".safetensors")
    write_safetensors(p, meta, tensors)
    return p


def raw_header_model(tmp, name, header_bytes, data=b""):
    p = os.path.join(tmp, name + ".safetensors")
    with open(p, "wb") as f:
        f.write(struct.pack("<Q", len(header_bytes)) + header_bytes + data)
    return p


def duplicate_tensor_model(tmp):
    """The shipped model with one tensor named twice in the header (json.dumps cannot write that)."""
    with open(MODEL, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    name = "tok_emb"
    dup = json.dumps({name: header[name]})[1:-1]
    text = json.dumps(header)
    text = text[:-1] + ", " + dup + "}"
    h = text.encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return raw_header_model(tmp, "dup", h, blob[8 + n:])


def config_model(tmp, name, **changes):
    def fix(meta):
        cfg = json.loads(meta["config"])
        cfg.update(changes)
        meta["config"] = json.dumps(cfg)
    return changed_model(tmp, name, change_meta=fix)


def swapped_specials_model(tmp):
    def fix(meta):
        v = json.loads(meta["vocab"])
        v[0], v[1] = v[1], v[0]
        meta["vocab"] = json.dumps(v)
    return changed_model(tmp, "specials", change_meta=fix)


def huge_embedding_model(tmp):
    def fix(t):
        t["tok_emb"][:] = 3e38
    return changed_model(tmp, "huge", change_tensors=fix)


def huge_tensor_model(tmp, name, index=None):
    def fix(t):
        if index is None:
            t[name][:] = 3e38
        else:
            t[name][index] = 3e38
    return changed_model(tmp, "huge-" + name + str(index), change_tensors=fix)


def gpt2_dir(tmp):
    """A tiny random GPT-2 folder (tests/hf_fixtures.py), made once."""
    import hf_fixtures
    d = os.path.join(tmp, "gpt2")
    if not os.path.isdir(d):
        hf_fixtures.write_gpt2_dir(d, C=16, H=2, L=1, P=32)
    return d


def gpt2_dir_big_header(tmp):
    d = os.path.join(tmp, "gpt2-big-header")
    if not os.path.isdir(d):
        shutil.copytree(gpt2_dir(tmp), d)
        with open(os.path.join(d, "model.safetensors"), "wb") as f:
            f.write(struct.pack("<Q", 100 << 20) + b"{")
            f.truncate((100 << 20) + 64)
    return d


def sparse_file(tmp, name, size, head=b""):
    p = os.path.join(tmp, name)
    with open(p, "wb") as f:
        f.write(head)
        f.truncate(size)
    return p


def big_header_file(tmp):
    p = os.path.join(tmp, "bighdr.safetensors")
    with open(p, "wb") as f:
        f.write(struct.pack("<Q", 100 << 20) + b"{")
        f.truncate((100 << 20) + 64)
    return p


def dangling(tmp):
    p = os.path.join(tmp, "dangling.safetensors")
    if not os.path.lexists(p):
        os.symlink(os.path.join(tmp, "nowhere", "x"), p)
    return p


KB = 1024

# (name, issue items, args given (tmp, out), expected words in the error line, RLIMIT_FSIZE or None)
CASES = [
    # 1. non-finite numbers are never silent
    ("steps 2e19 overflows", "1", lambda t, o: ["steps", "--q", "[[2e19]]", "--k", "[[2e19],[1]]", "--v", "[[1],[2]]",
                                                "--out", o], ["step 1", "infinity"], None),
    ("steps 3e38 overflows", "1", lambda t, o: ["steps", "--q", "[[3e38]]", "--k", "[[3e38],[1]]", "--v", "[[1],[2]]",
                                                "--out", o], ["step 1"], None),
    ("run with 3e38 in the embedding", "1",
     lambda t, o: ["run", "--model", huge_embedding_model(t), "--out", o, SENT], ["encoder's input", "non-finite"], None),
    ("run with 3e38 in a decoder feed-forward", "1",
     lambda t, o: ["run", "--model", huge_tensor_model(t, "dec.ffn.w1"), "--out", o, SENT],
     ["from decoder layer", "(feed-forward)"], None),   # which layer first overflows depends on the weights
    ("run with 3e38 in one encoder weight", "1",
     lambda t, o: ["run", "--model", huge_tensor_model(t, "enc.ffn.w2", 1), "--out", o, SENT], ["non-finite"], None),
    # 2. atomic output: disk full (ulimit -f) or a model that cannot read the sentence
    ("steps, disk full", "2", lambda t, o: ["steps", "--scores", "[[1,2],[3,4]]", "--mask", "causal", "--out", o],
     ["cannot write"], 8 * KB),
    ("run, disk full", "2", lambda t, o: ["run", "--out", o, SENT], ["cannot write"], 64 * KB),
    ("run --batch, disk full", "2", lambda t, o: ["run", "--batch", "--out", o, SENT, "i am happy ."],
     ["cannot write"], 64 * KB),
    ("demo, disk full", "2", lambda t, o: ["demo", "--out", o], ["cannot write"], 64 * KB),
    ("corpus, disk full", "2", lambda t, o: ["corpus", "--train", 2000, "--heldout", 50, "--out", o],
     ["cannot write"], 16 * KB),
    ("train, disk full", "2", lambda t, o: tiny_model_args(small_corpus(t), os.path.join(o, "m.safetensors")),
     ["cannot write"], 1 * KB),
    ("run on a GPT-2 folder, disk full", "2",
     lambda t, o: ["run", "--model", gpt2_dir(t), "--out", o, "The animal didn't cross the street because it"],
     ["cannot write"], 64 * KB),
    ("run on a GPT-2 folder with a 100 MB safetensors header", "4",
     lambda t, o: ["run", "--model", gpt2_dir_big_header(t), "--out", o, "The animal"], ["the limit is"], None),
    ("run on a GPT-2 folder, bad --focus", "3",
     lambda t, o: ["run", "--model", gpt2_dir(t), "--focus", "decoder.99.masked_self.0", "--out", o, "The animal"],
     ["--focus"], None),
    ("run, model too short for the sentence", "2",
     lambda t, o: ["run", "--model", config_model(t, "short", max_len=4), "--out", o, SENT], ["at most 3"], None),
    # 3. arguments checked before the work
    ("run --focus that is no map", "3", lambda t, o: ["run", "--focus", "encoder.9.self.0", "--out", o, SENT],
     ["--focus", "no map"], None),
    ("run --focus huge", "3,6", lambda t, o: ["run", "--focus", "99999999999.0", "--out", o, SENT],
     ["--focus"], None),
    ("train --out a folder", "3", lambda t, o: tiny_model_args(small_corpus(t), o), ["is a folder"], None),
    ("train --out a dangling symlink", "3", lambda t, o: tiny_model_args(small_corpus(t), dangling(t)),
     ["symbolic link to nothing"], None),
    ("train, a bad held-out line", "3",
     lambda t, o: tiny_model_args(corpus_with(t, "heldout", lambda c: c.__setitem__(3, "0-x")),
                                  os.path.join(o, "m.safetensors")), ["heldout.tsv:1"], None),
    ("train, an alignment out of range", "3",
     lambda t, o: tiny_model_args(corpus_with(t, "train", lambda c: c.__setitem__(3, "999-0")),
                                  os.path.join(o, "m.safetensors")), ["train.tsv:1"], None),
    ("train, an antecedent out of range", "3",
     lambda t, o: tiny_model_args(corpus_with(t, "train", lambda c: c.__setitem__(4, "0-999")),
                                  os.path.join(o, "m.safetensors")), ["train.tsv:1"], None),
    ("corpus --data missing", "3", lambda t, o: ["corpus", "--data", os.path.join(t, "nope"), "--out",
                                                  os.path.join(o, "new")], ["--data"], None),
    # 4. limits stated and checked before the work
    ("steps, a 65 MB matrix file", "4", lambda t, o: ["steps", "--scores", sparse_file(t, "big.json", 65 << 20, b"[[1"),
                                                       "--out", o], ["too large", "at most"], None),
    ("steps, more keys than the pictures hold", "4",
     lambda t, o: ["steps", "--scores", "[" + ",".join(["0"] * 2049) + "]", "--out", o], ["at most 2048"], None),
    ("run, a 100 MB safetensors header", "4", lambda t, o: ["run", "--model", big_header_file(t), "--out", o, SENT],
     ["the limit is"], None),
    # 5. the checkpoint loader
    ("a tensor named twice", "5", lambda t, o: ["run", "--model", duplicate_tensor_model(t), "--out", o, SENT],
     ["appears twice"], None),
    ("max_len 1", "5", lambda t, o: ["run", "--model", config_model(t, "len1", max_len=1), "--out", o, SENT],
     ["max_len"], None),
    ("special tokens out of place", "5", lambda t, o: ["run", "--model", swapped_specials_model(t), "--out", o, SENT],
     ["special token"], None),
    # 6. messages
    ("info --model without its value", "6", lambda t, o: ["info", "--model"], ["--model needs a value"], None),
    ("train --resume followed by a flag", "6", lambda t, o: ["train", "--resume", "--steps", 5], ["--resume needs a value"],
     None),
    ("run --target over the model's limit", "6",
     lambda t, o: ["run", "--target", " ".join(["le"] * 70), "--out", o, SENT], ["has 70 tokens", "at most 63"], None),
    ("a long message is cut between UTF-8 characters", "6",
     lambda t, o: ["run", "--to", "vi", "--target", " ".join(["nước"] * 200), "--out", o, SENT], ["has 200 tokens"],
     None),
    ("invalid UTF-8 is escaped", "6", lambda t, o: ["steps", "--mask", b"\xff\xfe", "--scores", "[[1]]", "--out", o],
     ["\\xFF\\xFE"], None),
]


def test_bad_inputs_table(tmp):
    failures = []
    for name, items, make_args, words, fsize in CASES:
        out = os.path.join(tmp, "out-" + str(CASES.index((name, items, make_args, words, fsize))))
        earlier_run(out)
        args = make_args(tmp, out)
        before = snapshot(out)
        r = attnviz(args, fsize=fsize)
        err = r.stderr.decode("utf-8")   # must be valid UTF-8 even for bad input
        lines = [l for l in err.splitlines() if l.strip()]
        why = []
        if r.returncode <= 0:
            why.append(f"exit {r.returncode}")
        if len(lines) != 1 or not lines[0].startswith("attnviz: error: "):
            why.append(f"stderr is not one error line: {err!r}")
        elif not all(w in lines[0] for w in words):
            why.append(f"error line lacks {words}: {lines[0]!r}")
        after = snapshot(out)
        if after != before:
            new = sorted(set(after or {}) - set(before or {}))
            gone = sorted(set(before or {}) - set(after or {}))
            why.append(f"output folder changed: new {new[:5]}, gone {gone[:5]}")
        if why:
            failures.append(f"[{items}] {name}: " + "; ".join(why))
    assert not failures, "\n".join(failures)


def test_nothing_new_when_the_folder_did_not_exist(tmp):
    """A failing run into a folder that does not exist leaves no folder (nor its parents)."""
    out = os.path.join(tmp, "a", "b", "c")
    r = attnviz(["run", "--out", out, SENT], fsize=64 * KB)
    assert r.returncode == 1, r.stderr
    assert not os.path.exists(os.path.join(tmp, "a")), os.listdir(tmp)
    r = attnviz(["corpus", "--data", os.path.join(tmp, "nope"), "--out", out])
    assert r.returncode == 1 and not os.path.exists(os.path.join(tmp, "a"))


def test_success_keeps_other_files_and_leaves_no_staging(tmp):
    out = os.path.join(tmp, "out")
    earlier_run(out)
    with open(os.path.join(out, "notes.txt"), "w") as f:
        f.write("mine")
    r = attnviz(["steps", "--scores", "[[1,2],[3,4]]", "--out", out, "--quiet"])
    assert r.returncode == 1 and b"did not write (notes.txt)" in r.stderr, r.stderr   # not attnviz's: refused
    r = attnviz(["steps", "--scores", "[[1,2],[3,4]]", "--out", out, "--quiet", "--force"])
    assert r.returncode == 0, r.stderr
    names = os.listdir(out)
    assert "notes.txt" in names   # the user's file stays; the earlier run's heatmap, listed and unchanged, goes
    assert "encoder.0.self.h0.png" not in names, names
    assert not [n for n in names if "tmp" in n], names
    assert not [n for n in os.listdir(tmp) if "tmp" in n]
    with open(os.path.join(out, "trace.json")) as f:
        assert json.load(f)["format"] == "attnviz-trace"


def test_train_checkpoint_is_written_before_its_eval(tmp):
    """A held-out file that goes bad during training (here: unreadable as a folder)
    cannot lose the training: the checkpoint is saved before the quick eval."""
    d = small_corpus(tmp)
    m = os.path.join(tmp, "m.safetensors")
    r = attnviz(tiny_model_args(d, m))
    assert r.returncode == 0, r.stderr
    assert os.path.exists(m) and os.path.exists(m + ".state")


def test_positive_mask_fill_works_with_a_warning(tmp):
    r = attnviz(["steps", "--scores", "[[1,2],[3,4]]", "--mask", "causal", "--mask-fill", "1e30", "--out", tmp,
                 "--quiet"])
    assert r.returncode == 0, r.stderr
    assert b"positive" in r.stderr
    with open(os.path.join(tmp, "trace.json")) as f:
        t = json.load(f)
    w = t["maps"][0]["heads"][0]["weights"]
    assert all(abs(sum(row) - 1) < 1e-5 for row in w)


def test_masked_minus_inf_is_the_only_null(tmp):
    r = attnviz(["steps", "--scores", "[[1,2],[3,4]]", "--mask", "causal", "--out", tmp, "--quiet"])
    assert r.returncode == 0, r.stderr
    with open(os.path.join(tmp, "trace.json")) as f:
        h = json.load(f)["maps"][0]["heads"][0]
    assert h["masked"][0][1] is None
    for k in ("weights", "scores"):
        assert all(x is not None for row in h[k] for x in row)


def test_run_quiet_silences_warnings(tmp):
    r = attnviz(["run", "--quiet", "--query", "zebra", "--out", tmp, SENT])
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    r = attnviz(["run", "--query", "zebra", "--out", tmp, SENT])
    assert b"warning" in r.stderr


def test_focus_is_checked_before_the_model_runs(tmp):
    r = attnviz(["run", "--focus", "encoder.9.self.0", "--out", os.path.join(tmp, "o"), SENT])
    assert r.returncode == 1 and r.stdout == b"", r.stdout   # no translation printed: refused first
    assert not os.path.exists(os.path.join(tmp, "o"))
