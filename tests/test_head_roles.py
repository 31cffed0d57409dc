"""`attnviz run --head-roles` (issue 26, item 3): every score of trace.json's head_roles
against an independent computation.  The text scores (previous_token, first_token,
local, entropy) are recomputed with NumPy from the trace's own recorded weights; the
probe scores (duplicate_token, induction) from an independent forward pass of the
recorded probe_input: the PyTorch references of tests/hf_fixtures.py for GPT-2 and BERT,
tests/llama_ref.py's NumPy llama2.c for stories260K (skipped with a reason when
../shared is absent), and for the bundled encoder–decoder a second `attnviz run` of the
probe's words as sentence and --target.  Also: the picture, the page, the printed summary,
the schema, and bad values (a probe that cannot fit the context: one line, exit != 0,
nothing written)."""
import os
import numpy as np
from helpers import ROOT, run_ok, run_err, load_json, validate_trace
import hf_fixtures as hf
import llama_ref as ref

TOL = 1e-4
WINDOW = 2
STORIES = os.path.normpath(os.path.join(ROOT, "..", "shared", "models", "stories260K"))


def text_scores(m, h, n_real=None):
    """previous, first, local, entropy of head h of trace map m, written from the definitions."""
    W = np.array(m["heads"][h]["weights"], dtype=np.float64)
    mask = np.array(m["mask"], dtype=bool) if m.get("mask") else np.ones(W.shape, dtype=bool)
    T = min(W.shape) if n_real is None else n_real
    while T > 1 and not mask[:T, T - 1].any():          # padding keys no row may see
        T -= 1
    prev, first, local, ent = [], [], [], []
    for t in range(1, T):
        row, vis = W[t, :T], mask[t, :T]
        prev.append(row[t - 1])
        first.append(row[0])
        local.append(sum(row[j] for j in range(T) if vis[j] and abs(j - t) <= WINDOW))
        p = row[vis & (row > 0)]
        if vis.sum() > 1:
            ent.append(-(p * np.log(p)).sum() / np.log(vis.sum()))
    return np.mean(prev), np.mean(first), np.mean(local), np.mean(ent)


def probe_scores(att, offset, n):
    """duplicate, induction of one head's (T, T) probe weights."""
    rows = [offset + n + i for i in range(n)]
    dup = np.mean([att[t, offset + i] for i, t in enumerate(rows)])
    ind = np.mean([att[t, offset + i + 1] for i, t in enumerate(rows)])
    return dup, ind


def check_tables(trace, probe_atts, n_real=None):
    """Every score of every table against the recomputation; probe_atts(table) → [L × (H, T, T)]."""
    hr = trace["head_roles"]
    maps = {m["id"]: m for m in trace["maps"]}
    n = hr["probe_length"]
    assert len(hr["probe_ids"]) == n == len(set(hr["probe_ids"])) == len(hr["probe_tokens"])
    worst = 0.0
    for tb in hr["tables"]:
        off, seq = tb["probe_offset"], tb["probe_input"]
        assert seq[off:off + 2 * n] == hr["probe_ids"] * 2, "the probe is the random tokens twice"
        atts = probe_atts(tb)
        for l in range(tb["layers"]):
            m = maps[f"{tb['stack']}.{l}.{tb['kind']}"]
            for h in range(tb["heads"]):
                want = text_scores(m, h, n_real) + probe_scores(atts[l][h], off, n)
                got = [tb[k][l][h] for k in ("previous_token", "first_token", "local", "entropy", "duplicate_token",
                                             "induction")]
                diff = np.abs(np.array(got) - np.array(want)).max()
                worst = max(worst, diff)
                assert diff < TOL, f"{m['id']} head {h}: got {got}, want {want}"
                assert tb["role"][l][h] == role_of(hr["thresholds"], *want), (m["id"], h, tb["role"][l][h], want)
    return worst


def role_of(th, prev, first, local, ent, dup, ind):
    named = [(v, k) for v, k in ((prev, "previous_token"), (first, "first_token"), (dup, "duplicate_token"),
                                 (ind, "induction")) if v >= th[k]]
    if named:
        return max(named, key=lambda x: x[0])[1]
    if local >= th["local"]:
        return "local"
    return "diffuse" if ent >= th["diffuse"] else "focused"


def check_outputs(out, stdout):
    trace = load_json(os.path.join(out, "trace.json"))
    validate_trace(trace)
    assert "head_roles.png" in trace["images"] and os.path.getsize(os.path.join(out, "head_roles.png")) > 1000
    page = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    assert 'src="head_roles.png"' in page and "induction ≥ 0.40" in page
    assert "head roles" in stdout and "induction (named at >= 0.40):" in stdout
    return trace


def test_head_roles_gpt2_fixture(tmp):
    d, out = os.path.join(tmp, "gpt2"), os.path.join(tmp, "out")
    w = hf.write_gpt2_dir(d)
    r = run_ok("run", "--model", d, "--out", out, "--head-roles", "--probe-seed", "7",
               "The animal didn't cross the street because it was too tired")
    trace = check_outputs(out, r.stdout)
    hr = trace["head_roles"]
    assert hr["seed"] == 7 and hr["probe_length"] == 20 and 50256 not in hr["probe_ids"]
    tb = hr["tables"][0]
    assert (tb["stack"], tb["kind"], tb["probe_offset"]) == ("decoder", "masked_self", 0)   # GPT-2: no BOS
    assert len(tb["probe_input"]) == 40
    worst = check_tables(trace, lambda tb: hf.gpt2_reference(w, tb["probe_input"])[0])
    print(f"     GPT-2 fixture: max |Δ| {worst:.2e}; roles {[tb['role'][l] for l in range(2)]}")
    # the same seed draws the same probe; another seed another one
    r2 = run_ok("run", "--model", d, "--out", os.path.join(tmp, "o2"), "--head-roles", "--probe-seed", "7",
                "--no-pictures", "hello there")
    assert load_json(os.path.join(tmp, "o2", "trace.json"))["head_roles"]["probe_ids"] == hr["probe_ids"]
    run_ok("run", "--model", d, "--out", os.path.join(tmp, "o3"), "--head-roles", "--no-pictures", "hello there")
    assert load_json(os.path.join(tmp, "o3", "trace.json"))["head_roles"]["probe_ids"] != hr["probe_ids"]


def test_head_roles_bert_fixture(tmp):
    d, out = os.path.join(tmp, "bert"), os.path.join(tmp, "out")
    w = hf.write_bert_dir(d)
    r = run_ok("run", "--model", d, "--out", out, "--head-roles", "--probe-length", "6", "the cat sat on the [MASK] .")
    trace = check_outputs(out, r.stdout)
    tb = trace["head_roles"]["tables"][0]
    assert (tb["stack"], tb["kind"], tb["probe_offset"]) == ("encoder", "self", 1)
    assert tb["probe_input"][0] == 101 and tb["probe_input"][-1] == 102 and len(tb["probe_input"]) == 14  # [CLS] … [SEP]
    assert all(i >= 999 for i in trace["head_roles"]["probe_ids"]), "no [PAD], [unused], [CLS] … in the probe"
    check_tables(trace, lambda tb: hf.bert_reference(w, tb["probe_input"])[0])


def test_head_roles_stories260k(tmp):
    if not os.path.exists(os.path.join(STORIES, "stories260K.bin")):
        print(f"     skip: {STORIES} is absent (the real stories260K weights)")
        return
    out = os.path.join(tmp, "out")
    r = run_ok("run", "--model", os.path.join(STORIES, "stories260K.bin"), "--tokenizer",
               os.path.join(STORIES, "tok512.bin"), "--out", out, "--head-roles", "Lily had a red ball. She")
    trace = check_outputs(out, r.stdout)
    cfg, w = ref.read_llama2c(os.path.join(STORIES, "stories260K.bin"))
    tb = trace["head_roles"]["tables"][0]
    assert tb["probe_input"][0] == 1 and tb["probe_offset"] == 1, "BOS <s> first"
    assert all(i > 258 for i in trace["head_roles"]["probe_ids"]), "no <unk>, <s>, </s> or byte tokens"
    worst = check_tables(trace, lambda tb: ref.llama2c_forward(cfg, w, tb["probe_input"])[0])
    for key in ("previous_token", "first_token", "induction"):
        v = np.array(tb[key])
        l, h = np.unravel_index(np.argmax(v), v.shape)
        print(f"     stories260K {key}: layer {l} head {h} {v[l, h]:.3f}")
    print(f"     stories260K: max |Δ| {worst:.2e}")


def test_head_roles_bundled_encoder_decoder(tmp):
    out = os.path.join(tmp, "out")
    r = run_ok("run", "--out", out, "--head-roles", "--probe-length", "8", "the cat sat on the mat .")
    trace = check_outputs(out, r.stdout)
    hr = trace["head_roles"]
    assert [(t["stack"], t["kind"], t["probe_offset"]) for t in hr["tables"]] == \
        [("encoder", "self", 0), ("decoder", "masked_self", 1)]
    # the probe's maps from a second run: its words as the sentence and as the decoder's --target
    words = " ".join(hr["probe_tokens"] * 2)
    run_ok("run", "--out", os.path.join(tmp, "probe"), "--no-pictures", "--target", words, words)
    pt = load_json(os.path.join(tmp, "probe", "trace.json"))
    assert pt["source_tokens"][:16] == hr["probe_tokens"] * 2
    pmaps = {m["id"]: m for m in pt["maps"]}

    def atts(tb):
        return [np.array([hd["weights"] for hd in pmaps[f"{tb['stack']}.{l}.{tb['kind']}"]["heads"]])
                for l in range(tb["layers"])]
    check_tables(trace, atts)


def test_head_roles_probe_must_fit_the_context(tmp):
    d = os.path.join(tmp, "gpt2")
    hf.write_gpt2_dir(d, P=7)                                    # 7 positions: not even 2 × 4 probe tokens
    out = os.path.join(tmp, "out")
    r = run_err("run", "--model", d, "--out", out, "--head-roles", "hello")
    assert len(r.stderr.strip().splitlines()) == 1 and "reads at most 7" in r.stderr, r.stderr
    assert not os.path.exists(out)
    hf.write_gpt2_dir(os.path.join(tmp, "g64"), P=64)
    r = run_err("run", "--model", os.path.join(tmp, "g64"), "--out", out, "--head-roles", "--probe-length", "40", "hello")
    assert "2 × 40" in r.stderr and "at most 32 tokens" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not os.path.exists(out)
    r = run_err("run", "--model", d, "--out", out, "--probe-length", "4", "hello")
    assert "--head-roles" in r.stderr
    for bad in ("0", "1", "x"):
        run_err("run", "--model", d, "--out", out, "--head-roles", "--probe-length", bad, "hello")
    assert not os.path.exists(out)


def test_head_roles_llama_family_folders(tmp):
    words = ["Lily", "had", "a", "red", "ball", ".", "She", "gave", "it", "to", "Tom", "and", "he", "smiled"]
    llama = ref.shrunk("llama-3.2-1b", hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                       intermediate_size=96, num_hidden_layers=2, vocab_size=300, max_position_embeddings=64)
    qwen2 = ref.shrunk("qwen2.5-0.5b", hidden_size=48, num_attention_heads=6, num_key_value_heads=2,
                       intermediate_size=80, num_hidden_layers=2, vocab_size=300, max_position_embeddings=64)
    for name, cfg, tok, bos in (("llama", llama, {}, True), ("qwen2", qwen2, {"post_processor": False}, False)):
        d, out = os.path.join(tmp, name), os.path.join(tmp, name + "-out")
        w = ref.hf_weights(cfg)
        ref.write_hf_dir(d, cfg, w)
        vocab = ref.write_tiny_tokenizer(d, words, **tok)
        r = run_ok("run", "--model", d, "--out", out, "--head-roles", "--probe-length", "6", "Lily had a red ball. She")
        trace = check_outputs(out, r.stdout)
        tb = trace["head_roles"]["tables"][0]
        assert tb["probe_offset"] == int(bos) and (tb["probe_input"][0] == vocab["<s>"]) == bos
        assert all(i > 2 for i in trace["head_roles"]["probe_ids"]), "no <s>, </s>, <unk>"
        check_tables(trace, lambda tb: ref.hf_forward(cfg, w, tb["probe_input"])[0])
    # 14 ordinary words: a probe of 20 different ones cannot be drawn
    out = os.path.join(tmp, "x")
    r = run_err("run", "--model", os.path.join(tmp, "llama"), "--out", out, "--head-roles", "Lily had a red ball")
    assert "ordinary tokens" in r.stderr and len(r.stderr.strip().splitlines()) == 1 and not os.path.exists(out), r.stderr
