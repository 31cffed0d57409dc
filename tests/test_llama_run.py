"""`attnviz run/info/tokenize` on the Llama family (phase 2 of issue 25): stories260K's
real llama2.c weights (`--model FILE.bin --tokenizer TOK.bin`, skipped with a reason when
../shared is absent) and tiny random Hugging Face folders of Llama, Qwen2, Qwen3 and
Gemma 3 written here with a tokenizer.json (TinyLlama's real one when ../shared has it).
What is checked: every picture, the trace against docs/trace.schema.json, kv_heads and
score_scale, q and k before and after RoPE in the trace against the independent
references of tests/llama_ref.py, the next token against them, the BOS each tokenizer
says, the printed She → Lily report against the trace, `info`, and bad input: one line on
stderr, exit != 0, no output folder."""
import json, os, re, shutil
import numpy as np
from helpers import ROOT, run, run_ok, run_err, load_json, validate_trace, png_content
import llama_ref as ref
import hf_fixtures as hf

STORIES = os.path.normpath(os.path.join(ROOT, "..", "shared", "models", "stories260K"))
SENTENCE = "Lily had a red ball. She gave it to Tom."
TOL = 1e-4
# what a content-word link leaves out, as src/pipeline/links.c does (referents_function_word)
FUNCTION_WORDS = set("""the a an my your his her hers its our their theirs this that these those i you he she it we they
me him us them who which with to in on under near behind front of at for from by about into and but so because when while
although or if too is are am was were be been do does did don't doesn't didn't won't isn't aren't wasn't weren't couldn't
will would can could has have had not no very there here what where how why i'm it's he's she's they're we're you're one
two three four five six seven eight nine ten many some all""".split())


def have_stories():
    if os.path.exists(os.path.join(STORIES, "stories260K.bin")):
        return True
    print(f"     skip: {STORIES} is absent (the real stories260K weights)")
    return False


def stories_args():
    return ["--model", os.path.join(STORIES, "stories260K.bin"), "--tokenizer", os.path.join(STORIES, "tok512.bin")]


def content_link(m, h, q):
    """(key, weight) of head h's strongest link from row q to a word that can be an antecedent."""
    toks, row = m["keys"], m["heads"][h]["weights"][q]
    best = None
    for j, w in enumerate(row):
        t = toks[j]
        if j == q or (m["mask"] and not m["mask"][q][j]) or re.fullmatch(r"<.*>|\[.*\]", t) \
                or re.fullmatch(r"[^\w\s]+", t) or t.lower() in FUNCTION_WORDS:
            continue
        if best is None or w > row[best]:
            best = j
    return (best, row[best]) if best is not None else (None, None)


def rope_of(trace, layer, head):
    hd = trace["maps"][layer]["heads"][head]
    return [np.array(hd[k], dtype=np.float64) for k in ("q", "q_rotated", "k", "k_rotated")]


# ---- stories260K: the "done when" ----

def test_stories260k_run_done_when(tmp):
    if not have_stories():
        return
    out = os.path.join(tmp, "out")
    r = run_ok("run", *stories_args(), "--out", out, "--pieces", SENTENCE)   # the report in tokens
    files = set(os.listdir(out))
    assert {f"decoder.{l}.masked_self.h{h}.png" for l in range(5) for h in range(8)} <= files, files
    assert {"grid.decoder.masked_self.png", "index.html", "trace.json"} <= files
    assert any(f.startswith("steps.decoder.") for f in files) and any(f.endswith("-she.png") for f in files), files   # file names lowercase (issue 39)
    trace = load_json(os.path.join(out, "trace.json"))
    validate_trace(trace)
    toks = trace["target_tokens"]
    cfg, w = ref.read_llama2c(os.path.join(STORIES, "stories260K.bin"))
    pieces, scores = ref.read_tok(os.path.join(STORIES, "tok512.bin"), cfg["V"])
    ids = ref.encode(pieces, scores, SENTENCE)
    assert toks[0] == "<s>" and len(toks) == len(ids), toks
    atts, logits, qk = ref.llama2c_forward(cfg, w, ids)
    for l, m in enumerate(trace["maps"]):
        assert m["id"] == f"decoder.{l}.masked_self" and m["kv_heads"] == 4 and "score_scale" not in m, m["id"]
        for h, hd in enumerate(m["heads"]):
            d = np.abs(np.array(hd["weights"]) - atts[l][h]).max()
            assert d <= TOL, f"{m['id']} head {h}: max |Δweight| {d:.3g}"
            assert "q_rotated" not in hd, "--trace weights keeps no RoPE matrices"
    # the next token, as the reference's logits rank it
    line = [l for l in r.stdout.splitlines() if "next token:" in l][0]
    best = pieces[int(np.argmax(logits[-1]))].decode().strip()
    assert line.split("“")[1].split("”")[0] == best, (line, best)
    # the She → Lily report: every head it names, with its weight, from the trace
    q, lily = toks.index("She"), toks.index("Lily")
    want = sorted(((m["id"], h, content_link(m, h, q)[1]) for m in trace["maps"] for h in range(8)
                   if content_link(m, h, q)[0] == lily and content_link(m, h, q)[1] >= 0.1), key=lambda x: -x[2])
    assert want, "no head of stories260K links She to Lily"
    said = r.stdout.split(f"She (position {q}) → Lily (position {lily}): ")[1]
    listed = said.split("\n")[1].split("):")[1]
    got = re.findall(r"(decoder\.\d\.masked_self) head (\d) (\d\.\d\d)", listed)
    assert [(a, int(b), float(c)) for a, b, c in got] == [(a, b, round(c, 2)) for a, b, c in want], (got, want)
    assert said.startswith(f"{want[0][0]} head {want[0][1]}, weight {want[0][2]:.2f}"), said[:80]
    page = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    assert "K/V head" in page and "Attention sink" in page and "RoPE" in page
    assert f"{len(want)} of 40 heads put at least 0.1 of “She”" in page


# "Lily had a red ball. She gave it to Tom. Then Tom said" in stories260K's pieces, grouped into words by
# hand from its tokens (<s> Lily had a r ed b all . She g a ve it to T om . The n T om said)
STORY = "Lily had a red ball. She gave it to Tom. Then Tom said"
STORY_WORDS = [("<s>", [0]), ("Lily", [1]), ("had", [2]), ("a", [3]), ("red", [4, 5]), ("ball", [6, 7]), (".", [8]),
               ("She", [9]), ("gave", [10, 11, 12]), ("it", [13]), ("to", [14]), ("Tom", [15, 16]), (".", [17]),
               ("Then", [18, 19]), ("Tom", [20, 21]), ("said", [22])]


def word_maps(atts):
    """Each layer's heads merged into STORY_WORDS: summed over a key word's pieces, averaged over a query
    word's pieces (G·A·Gᵀ with G's rows 1/|query word| on its pieces, then summed columns)."""
    T = sum(len(p) for _, p in STORY_WORDS)
    avg, tot = np.zeros((len(STORY_WORDS), T)), np.zeros((len(STORY_WORDS), T))
    for k, (_, p) in enumerate(STORY_WORDS):
        avg[k, p], tot[k, p] = 1.0 / len(p), 1.0
    return [np.einsum("qi,hij,kj->hqk", avg, np.asarray(a, dtype=np.float64), tot) for a in atts]


def test_stories260k_pronoun_report_in_words_equals_numpy(tmp):
    """The default report names words ("it → gave"), not pieces ("ve"); every head and weight it
    lists is NumPy's merge of the reference's maps (words grouped by hand)."""
    if not have_stories():
        return
    out = os.path.join(tmp, "out")
    r = run_ok("run", *stories_args(), "--out", out, STORY)
    words = [w for w, _ in STORY_WORDS]
    assert "  words (16): " + " ".join(words) + "\n" in r.stdout, r.stdout
    assert "sum over the other's pieces, averaged over its own pieces" in r.stdout
    cfg, w = ref.read_llama2c(os.path.join(STORIES, "stories260K.bin"))
    pieces, scores = ref.read_tok(os.path.join(STORIES, "tok512.bin"), cfg["V"])
    ids = ref.encode(pieces, scores, STORY)
    assert len(ids) == 23, ids
    merged = word_maps(ref.llama2c_forward(cfg, w, ids)[0])
    n = len(words)
    mask = [[1 if j <= i else 0 for j in range(n)] for i in range(n)]
    for q, name in ((7, "She"), (9, "it")):
        links = [(l, h) + content_link({"keys": words, "mask": mask, "heads": [{"weights": merged[l][h]}]}, 0, q)
                 for l in range(5) for h in range(8)]
        best = max(wt for _, _, _, wt in links)
        key = [k for _, _, k, wt in links if wt == best][0]
        line = [x for x in r.stdout.splitlines() if x.startswith(f"  {name} (position {q}) → ")][0]
        said = re.match(r"  \S+ \(position \d+\) → (\S+) \(position (\d+)\): decoder\.(\d)\.masked_self head (\d), "
                        r"weight (\d\.\d\d)", line)
        assert said and said[1] == words[key] and int(said[2]) == key, (line, words[key])
        l, h = int(said[3]), int(said[4])
        assert abs(merged[l][h][q][key] - best) <= 1e-3 and abs(float(said[5]) - best) <= 0.006, (line, best)
        want = {(f"decoder.{l}.masked_self", h, round(float(wt), 2)) for l, h, k, wt in links if k == key and wt >= 0.1}
        listed = r.stdout.split(line)[1].split("\n")[1]
        got = {(a, int(b), float(c)) for a, b, c in re.findall(r"(decoder\.\d\.masked_self) head (\d) (\d\.\d\d)", listed)}
        assert got == want, (got ^ want)
    assert "→ gave (position 8)" in r.stdout and "→ ve " not in r.stdout and "“ve”" not in r.stdout
    png = open(os.path.join(out, "lines.9-it.png"), "rb").read()
    assert "“it” → “gave”".encode() in png and b"in words" in png
    page = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    assert "In words, not pieces: a word&#39;s weight on another is the sum over the other&#39;s pieces" in page


def test_stories260k_pieces_keeps_the_report_in_tokens(tmp):
    """--pieces: today's report, positions and files in tokens ("it → ve"), no word line."""
    if not have_stories():
        return
    out = os.path.join(tmp, "out")
    r = run_ok("run", *stories_args(), "--out", out, "--pieces", STORY)
    assert "words (" not in r.stdout and "links in words" not in r.stdout
    assert "  it (position 13) → ve (position 12): decoder.3.masked_self head 5, weight 0.98\n" in r.stdout, r.stdout
    assert "  She (position 9) → Lily (position 1): decoder.2.masked_self head 6, weight 0.41" in r.stdout
    files = set(os.listdir(out))
    assert {"lines.13-it.png", "lines.9-she.png"} <= files and "lines.9-it.png" not in files, files
    assert b"in words" not in open(os.path.join(out, "lines.13-it.png"), "rb").read()


def test_stories260k_rope_in_the_trace_matches_the_reference(tmp):
    if not have_stories():
        return
    out = os.path.join(tmp, "out")
    run_ok("run", *stories_args(), "--out", out, "--trace", "steps", "--no-pictures", SENTENCE)
    trace = load_json(os.path.join(out, "trace.json"))
    validate_trace(trace)
    cfg, w = ref.read_llama2c(os.path.join(STORIES, "stories260K.bin"))
    pieces, scores = ref.read_tok(os.path.join(STORIES, "tok512.bin"), cfg["V"])
    _, _, qk = ref.llama2c_forward(cfg, w, ref.encode(pieces, scores, SENTENCE))
    for layer, head in ((0, 0), (3, 5), (4, 7)):
        kv = head // 2
        got = rope_of(trace, layer, head)
        want = [qk[layer][0][:, head], qk[layer][1][:, head], qk[layer][2][:, kv], qk[layer][3][:, kv]]
        for name, g, e in zip(("q", "q_rotated", "k", "k_rotated"), got, want):
            d = np.abs(g - e).max()
            assert d <= TOL, f"layer {layer} head {head} {name}: max |Δ| {d:.3g}"
        assert np.allclose(got[1][0], got[0][0]), "position 0 is not turned"
        # the rotation keeps every pair's length (llama2.c: pairs 2i, 2i+1)
        n0, n1 = (got[0][:, 0::2] ** 2 + got[0][:, 1::2] ** 2), (got[1][:, 0::2] ** 2 + got[1][:, 1::2] ** 2)
        assert np.allclose(n0, n1, rtol=1e-4, atol=1e-6)


def test_stories260k_info_and_tokenize():
    if not have_stories():
        return
    r = run_ok("info", *stories_args())
    for s in ("family:       llama2.c", "layers:       5", "heads:        8 query, 4 key/value",
              "heads 0–1 share K/V head 0", "head size:    8", "RoPE:         base 10000, no scaling",
              "window:       none", "vocabulary:   512 tokens", "parameters:   260032"):
        assert s in r.stdout, (s, r.stdout)
    j = json.loads(run_ok("info", *stories_args(), "--json").stdout)
    assert (j["n_heads"], j["n_kv_heads"], j["d_k"], j["rope_theta"], j["parameters"]) == (8, 4, 8, 10000, 260032), j
    cfg, _ = ref.read_llama2c(os.path.join(STORIES, "stories260K.bin"))
    pieces, scores = ref.read_tok(os.path.join(STORIES, "tok512.bin"), cfg["V"])
    ids = run_ok("tokenize", *stories_args(), input=SENTENCE + "\n").stdout.split()
    assert [int(x) for x in ids] == ref.encode(pieces, scores, SENTENCE), "tokenize gives the ids run reads, BOS first"
    ids = run_ok("tokenize", *stories_args(), "--no-special", input=SENTENCE + "\n").stdout.split()
    assert [int(x) for x in ids] == ref.encode(pieces, scores, SENTENCE)[1:], "--no-special leaves the BOS out"


# ---- tiny random Hugging Face folders of every family ----

WORDS = ["Lily", "had", "a", "red", "ball", ".", "She", "gave", "it", "to", "Tom", "and", "he", "smiled"]


def tiny_tokenizer(d, **kw):
    return ref.write_tiny_tokenizer(d, WORDS, **kw)


def folders():
    """(name, config, tokenizer options, BOS expected) of each family, shrunk."""
    l32 = ref.shrunk("llama-3.2-1b", hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                     intermediate_size=96, num_hidden_layers=2, vocab_size=300, max_position_embeddings=64)
    qw2 = ref.shrunk("qwen2.5-0.5b", hidden_size=48, num_attention_heads=6, num_key_value_heads=2,
                     intermediate_size=80, num_hidden_layers=2, vocab_size=300, max_position_embeddings=64)
    qw3 = ref.qwen3_config(hidden_size=48, num_attention_heads=4, num_key_value_heads=4, head_dim=16,
                           intermediate_size=80, num_hidden_layers=2, vocab_size=300)
    gem = ref.shrunk("gemma-3-270m-it", hidden_size=64, num_attention_heads=4, num_key_value_heads=1, head_dim=16,
                     intermediate_size=96, num_hidden_layers=3, vocab_size=300, max_position_embeddings=64,
                     sliding_window=4, query_pre_attn_scalar=24, _sliding_window_pattern=3)
    return [("llama", l32, {}, True),                                          # the post-processor's <s>
            ("qwen2", qw2, {"post_processor": False}, False),                  # Qwen: no BOS at all
            ("qwen3", qw3, {"post_processor": False, "add_bos": False}, False),  # add_bos_token false, as Qwen3's
            ("gemma3", gem, {"bos": "<bos>", "post_processor": False, "add_bos": True}, True)]


def write_folder(tmp, name, cfg, tok):
    d = os.path.join(tmp, name)
    w = ref.hf_weights(cfg)
    ref.write_hf_dir(d, cfg, w)
    return d, w, tiny_tokenizer(d, **tok)


def test_hf_folders_of_every_family_run(tmp):
    text = "Lily had a red ball. She gave it to Tom."
    for name, cfg, tok, bos in folders():
        d, w, vocab = write_folder(tmp, name, cfg, tok)
        ids = ([0] if bos else []) + [vocab[t] for t in text.replace(".", " .").split()]
        out = os.path.join(tmp, name + ".out")
        r = run_ok("run", "--model", d, "--out", out, "--trace", "steps", text)
        trace = load_json(os.path.join(out, "trace.json"))
        validate_trace(trace)
        H, Hkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
        assert trace["target_tokens"][0] == ("<s>" if name == "llama" else "<bos>" if bos else "Lily"), \
            (name, trace["target_tokens"])
        assert len(trace["target_tokens"]) == len(ids)
        atts, logits, qk = ref.hf_forward(cfg, w, ids)
        for l, m in enumerate(trace["maps"]):
            assert m.get("kv_heads", H) == Hkv and (Hkv == H) == ("kv_heads" not in m), (name, m.get("kv_heads"))
            if name == "gemma3":
                assert abs(m["score_scale"] - 24 ** -0.5) < 1e-7, m.get("score_scale")
            else:
                assert "score_scale" not in m
            for h, hd in enumerate(m["heads"]):
                assert np.abs(np.array(hd["weights"]) - atts[l][h]).max() <= TOL, (name, l, h)
        layer, head = len(trace["maps"]) - 1, H - 1
        kv = head // (H // Hkv)
        want = [qk[layer][0][:, head], qk[layer][1][:, head], qk[layer][2][:, kv], qk[layer][3][:, kv]]
        for what, g, e in zip(("q", "q_rotated", "k", "k_rotated"), rope_of(trace, layer, head), want):
            assert np.abs(g - e).max() <= TOL, f"{name} layer {layer} head {head}: {what}"
        inv = {v: k for k, v in vocab.items()}
        line = [l for l in r.stdout.splitlines() if "next token:" in l][0]
        assert line.split("“")[1].split("”")[0] == inv.get(int(np.argmax(logits[-1])), "?") \
            or int(np.argmax(logits[-1])) >= len(vocab), (name, line)
        files = set(os.listdir(out))
        assert "grid.decoder.masked_self.png" in files and any(f.startswith("steps.") for f in files), files
        page = open(os.path.join(out, "index.html"), encoding="utf-8").read()
        assert ("share K/V head" in page) == (Hkv < H), name
        assert "RoPE" in page and "Attention sink" in page, name


def test_info_and_tokenize_of_a_folder(tmp):
    name, cfg, tok, _ = folders()[3]
    d, w, vocab = write_folder(tmp, name, cfg, tok)
    r = run_ok("info", "--model", d)
    for s in ("family:       gemma3 (Gemma3ForCausalLM)", "heads:        4 query, 1 key/value (all share one",
              "head size:    16", "RoPE:         base 1e+06", "window:       4 tokens on 2 of 3 layers",
              "vocabulary:   300 tokens (tokenizer.json: WordLevel)", f"parameters:   {sum(v.size for v in w.values())}"):
        assert s in r.stdout, (s, r.stdout)
    j = json.loads(run_ok("info", "--model", d, "--json").stdout)
    assert j["family"] == "gemma3" and j["n_kv_heads"] == 1 and j["sliding_window"] == 4, j
    os.remove(os.path.join(d, "model.safetensors"))   # tokenize needs no weights
    words = [vocab[t] for t in ("Lily", "had", "a", "ball", ".")]
    got = run_ok("tokenize", "--model", d, input="Lily had a ball.\n").stdout.split()
    assert [int(x) for x in got] == [vocab["<bos>"]] + words, got   # add_bos_token: <bos> first, as run reads it
    got = run_ok("tokenize", "--model", d, "--no-special", input="Lily had a ball.\n").stdout.split()
    assert [int(x) for x in got] == words, got


def test_tinyllama_real_tokenizer(tmp):
    real = os.path.join(ref.HF_REAL, "tinyllama-1.1b-chat-v1.0")
    oracle = os.path.join(ref.HF_REAL, "oracle", "TinyLlama__TinyLlama-1.1B-Chat-v1.0.json")
    if not os.path.exists(os.path.join(real, "tokenizer.json")) or not os.path.exists(oracle):
        print(f"     skip: {real} is absent (TinyLlama's real tokenizer.json)")
        return
    cfg = ref.shrunk("tinyllama-1.1b-chat-v1.0", hidden_size=32, num_attention_heads=4, num_key_value_heads=1,
                     intermediate_size=48, num_hidden_layers=1, vocab_size=32000, max_position_embeddings=256)
    d = os.path.join(tmp, "tl")
    ref.write_hf_dir(d, cfg, ref.hf_weights(cfg))
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(real, f), d)
    entries = load_json(oracle)["entries"]
    for key in ("ascii_simple", "ascii_punct", "zh_mixed_en", "emoji_bmp"):
        e = entries[key]
        text = e["decoded_skip_special"]
        out = os.path.join(tmp, key)
        run_ok("run", "--model", d, "--out", out, "--no-pictures", text)
        toks = load_json(os.path.join(out, "trace.json"))["target_tokens"]
        assert toks[0] == "<s>" and len(toks) == len(e["input_ids"]), (key, toks, e["tokens"])
        ids = [int(x) for x in run_ok("tokenize", "--model", d, input=text + "\n").stdout.split()]
        assert ids == e["input_ids"], (key, ids, e["input_ids"])
        ids = [int(x) for x in run_ok("tokenize", "--model", d, "--no-special", input=text + "\n").stdout.split()]
        assert [1] + ids == e["input_ids"], (key, ids, e["input_ids"])


# ---- bad input: one line, exit != 0, nothing written ----

def one_line_error(*args, **kw):
    r = run_err(*args, **kw)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("attnviz: error: "), r.stderr
    return lines[0]


def test_bad_input(tmp):
    good = os.path.join(tmp, "m.bin")
    n = ref.write_llama2c(good, V=300)
    tok = os.path.join(tmp, "tok.bin")
    pieces = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [b"<0x%02X>" % b for b in range(256)] + [b"x%d" % i for i in range(41)]
    ref.write_tok(tok, pieces, [0.0] * len(pieces))
    out = os.path.join(tmp, "out")
    run_ok("run", "--model", good, "--tokenizer", tok, "--out", out, "--no-pictures", "ab")   # the good pair works
    shutil.rmtree(out)
    cut = os.path.join(tmp, "cut.bin")
    with open(good, "rb") as f, open(cut, "wb") as g:
        g.write(f.read()[:n - 40])
    d, _, _ = write_folder(tmp, "llama", folders()[0][1], {})
    notok = os.path.join(tmp, "notok")
    shutil.copytree(d, notok)
    os.remove(os.path.join(notok, "tokenizer.json"))
    phi = os.path.join(tmp, "phi")
    shutil.copytree(d, phi)
    cfg = load_json(os.path.join(phi, "config.json"))
    cfg["architectures"], cfg["model_type"] = ["Phi3ForCausalLM"], "phi3"
    json.dump(cfg, open(os.path.join(phi, "config.json"), "w"))
    small = os.path.join(tmp, "small.bin")
    ref.write_tok(small, pieces[:100], [0.0] * 100)
    cases = [
        (["--model", good], ["m.bin", "--tokenizer"]),                                  # a .bin without its tokenizer
        (["--model", good, "--tokenizer", os.path.join(tmp, "absent.bin")], ["absent.bin"]),
        (["--model", cut, "--tokenizer", tok], ["cut.bin", "truncated"]),
        (["--model", good, "--tokenizer", small], ["small.bin", "300"]),
        (["--model", d, "--tokenizer", tok], ["--tokenizer", "folder"]),                # --tokenizer with a folder
        (["--tokenizer", tok], ["--tokenizer", "llama2.c"]),                            # --tokenizer alone
        (["--model", notok], ["tokenizer.json"]),
        (["--model", phi], ["Phi3ForCausalLM", "config.json"]),
    ]
    for args, words in cases:
        for cmd in ("run", "info"):
            extra = ["--out", out, "one sentence"] if cmd == "run" else []
            line = one_line_error(cmd, *args, *extra)
            assert all(wd in line for wd in words), (cmd, args, line)
            assert not os.path.exists(out), f"{cmd} {args} left {out}"
    line = one_line_error("tokenize", "--model", good, input="a\n")
    assert "--tokenizer" in line, line


def test_step_strip_of_a_second_pass_up_to_its_layer(tmp):
    """`run` on a folder draws the step strip from a second pass that stops at the
    focus head's layer (pipeline/hf_run.c): its pictures and the prediction must be
    those of `--trace steps`, where one whole pass keeps every head's steps."""
    text = "Lily had a red ball. She gave it to Tom."
    name, cfg, tok, _ = folders()[0]
    d, _, _ = write_folder(tmp, name, cfg, tok)
    g = os.path.join(tmp, "gpt2")
    hf.write_gpt2_dir(g)
    for model, last in ((d, cfg["num_hidden_layers"] - 1), (g, 1)):
        for focus in ("decoder.0.masked_self.1", f"decoder.{last}.masked_self.2"):
            outs, said = [], []
            for trace in ("weights", "steps"):
                out = os.path.join(tmp, f"strip-{trace}")
                shutil.rmtree(out, ignore_errors=True)
                r = run_ok("run", "--model", model, "--out", out, "--focus", focus, "--trace", trace, text)
                said.append(r.stdout.replace(out, "OUT"))
                outs.append({f: png_content(open(os.path.join(out, f), "rb").read()) for f in os.listdir(out)
                             if f.endswith(".png")})
            assert any(f.startswith("steps.") for f in outs[0]), sorted(outs[0])
            assert outs[0] == outs[1], (model, focus, [f for f in outs[0] if outs[0][f] != outs[1].get(f)])
            assert said[0] == said[1], (model, focus)
