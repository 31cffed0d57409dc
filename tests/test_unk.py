"""Names, numbers and words outside training (issue 12): training maps a copyable
name to <unk>, the checkpoint records what training sources held, `run` copies
names through (Luong et al. 2015) and is honest about unknown words, and `eval`
reports exact match, pronoun accuracy (overall, cataphora, across sentences)
and language purity per split and language — checked against an independent
Python computation on a tiny model trained here (tests/unk_corpus.py)."""
import json, os, shutil
from helpers import run_ok, run_err, load_json, validate_trace
import unk_corpus as uc



def metadata(path):
    import struct
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(n))["__metadata__"]


def tiny(tmp, steps=400):
    d = uc.make_corpus(os.path.join(tmp, "corpus"))
    return d, uc.train_tiny(d, os.path.join(tmp, "m.safetensors"), steps)


def test_train_maps_names_and_records_the_sources(tmp):
    d, m = tiny(tmp, steps=20)
    meta = metadata(m)
    vocab = open(os.path.join(d, "vocab.txt"), encoding="utf-8").read().split("\n")[:-1]
    hexbits = meta["train_source_tokens"]
    assert len(hexbits) == (len(vocab) + 3) // 4
    known = {vocab[i] for i in range(len(vocab)) if (int(hexbits[i // 4], 16) >> (i % 4)) & 1}
    src, longest = set(), 0
    for line in open(os.path.join(d, "train.tsv"), encoding="utf-8"):
        words = line.split("\t")[1].split()
        longest = max(longest, len(words))
        src |= {w for w in words if w in vocab}
    assert known == src | {"<unk>", "<eos>"}, sorted(known ^ (src | {"<unk>", "<eos>"}))
    assert int(meta["train_max_source_len"]) == longest
    # a target word missing from the vocabulary that is no word of its source stops training
    bad = os.path.join(tmp, "bad")
    shutil.copytree(d, bad)
    with open(os.path.join(bad, "train.tsv"), "a", encoding="utf-8") as f:
        f.write(uc.pair("fr", "the cat sees alice .", "le chat voit zorro .") + "\n")
    n = sum(1 for _ in open(os.path.join(bad, "train.tsv"), encoding="utf-8"))
    r = run_err("train", "--corpus", bad, "--out", os.path.join(tmp, "b.safetensors"), "--steps", 2, *uc.TINY)
    assert f"train.tsv:{n}:" in r.stderr and "'zorro'" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def png_has(path, text):
    return text.encode("utf-8") in open(path, "rb").read()


def test_name_never_seen_in_training_is_copied(tmp):
    d, m = tiny(tmp)
    out = os.path.join(tmp, "run")
    r = run_ok("run", "--model", m, "--out", out, "the cat sees Zoe .")
    assert "→ fr: le chat voit Zoe ." in r.stdout, r.stdout          # as typed, not "zoe"
    assert "copied through: Zoe" in r.stdout and "outside" not in r.stdout, r.stdout
    assert r.stderr.strip() == "", r.stderr                           # a name is no warning
    t = load_json(os.path.join(out, "trace.json"))
    validate_trace(t)
    assert t["target_tokens"][4] == "<unk>"
    [c] = t["unk_copies"]
    assert (c["target"], c["source"], c["word"], c["map"], c["heads"]) == (4, 3, "Zoe", "decoder.1.cross", [0, 1])
    # the weight is the mean over the heads of the row that wrote the <unk>, from the trace's own numbers
    cross = next(mp for mp in t["maps"] if mp["id"] == "decoder.1.cross")
    mean = sum(h["weights"][c["target"] - 1][c["source"]] for h in cross["heads"]) / len(cross["heads"])
    assert abs(mean - c["weight"]) < 1e-5, (mean, c["weight"])
    assert png_has(os.path.join(out, "grid.decoder.cross.png"), f"<unk> copied from 'Zoe' (weight {c['weight']:.2f})")
    # Vietnamese too, and a number
    r = run_ok("run", "--model", m, "--to", "vi", "--out", out, "--no-pictures", "the bird sees Minh .")
    assert "→ vi: con chim thấy Minh ." in r.stdout, r.stdout
    # a sentence without <unk> has no copy
    r = run_ok("run", "--model", m, "--out", out, "--no-pictures", "the cat runs because it is tired .")
    assert load_json(os.path.join(out, "trace.json"))["unk_copies"] == []
    assert "copied" not in r.stdout and r.stderr.strip() == ""


def test_out_of_world_warning(tmp):
    d, m = tiny(tmp, steps=60)
    out = os.path.join(tmp, "run")
    # an unknown word that is no name: one warning line with its nearest known source words, exit 0
    r = run_ok("run", "--model", m, "--out", out, "the dig sees Zoe and 42 and the cat .")
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, r.stderr
    assert "'dig' (nearest: 'dog'" in lines[0] and "'and' (" in lines[0], lines[0]
    assert "zoe" not in lines[0].lower() and "42" not in lines[0], lines[0]   # names and numbers are no warning
    assert "copied through: Zoe, 42" in r.stdout, r.stdout
    assert "outside what the model was trained on: 2 words it never saw in training" in r.stdout, r.stdout
    assert png_has(os.path.join(out, "grid.encoder.self.png"), "outside what the model was trained on")
    assert png_has(os.path.join(out, "encoder.0.self.h0.png"), "Outside training")
    assert "outside what the model was trained on" in open(os.path.join(out, "index.html"), encoding="utf-8").read()
    # a capitalized first word is a name too ("Zoe sees the cat"); lowercase it is an unknown word
    r = run_ok("run", "--model", m, "--out", out, "--no-pictures", "Zoe sees the cat .")
    assert "copied through: Zoe" in r.stdout and r.stderr.strip() == "", (r.stdout, r.stderr)
    r = run_ok("run", "--model", m, "--out", out, "--no-pictures", "Where sees the cat .")
    assert "'where' (nearest:" in r.stderr and "copied through" not in r.stdout, (r.stdout, r.stderr)
    r = run_ok("run", "--model", m, "--out", out, "--no-pictures", "zoe sees the cat .")
    assert "'zoe' (nearest:" in r.stderr and "copied through" not in r.stdout, (r.stdout, r.stderr)
    # --quiet silences the warning
    r = run_ok("run", "--model", m, "--out", out, "--quiet", "the cat sees the dig .")
    assert r.stderr.strip() == "" and r.stdout.strip() == ""
    # longer than any training source, every word known: no warning, but outside
    long = "the cat runs because it is tired because it is tired because it is tired ."
    r = run_ok("run", "--model", m, "--out", out, "--no-pictures", long)
    assert r.stderr.strip() == ""
    assert "16 words, longer than any training sentence (9)" in r.stdout, r.stdout
    # only known words: no such line, no picture note
    r = run_ok("run", "--model", m, "--out", out, "because it is tired , the fish runs .")
    assert "outside" not in r.stdout and r.stderr.strip() == ""
    assert not png_has(os.path.join(out, "grid.encoder.self.png"), "outside")


def strip_metadata(src, dst, keys):
    """src with the metadata keys removed: a checkpoint as older versions wrote it."""
    import struct
    blob = open(src, "rb").read()
    n = struct.unpack("<Q", blob[:8])[0]
    h = json.loads(blob[8:8 + n])
    for k in keys:
        h["__metadata__"].pop(k, None)
    text = json.dumps(h).encode("utf-8")
    text += b" " * (-len(text) % 8)
    open(dst, "wb").write(struct.pack("<Q", len(text)) + text + blob[8 + n:])


def test_checkpoint_without_source_record_knows_every_word(tmp):
    """Older checkpoints (no train_source_tokens / train_max_source_len) still
    load: every vocabulary word counts as known and no length is checked."""
    d, m = tiny(tmp, steps=20)
    old = os.path.join(tmp, "old.safetensors")
    strip_metadata(m, old, ["train_source_tokens", "train_max_source_len"])
    out = os.path.join(tmp, "o")
    long = "the cat runs because it is tired because it is tired because it is tired ."
    # "chat" is a vocabulary word only French targets hold: unknown to the encoder
    r = run_ok("run", "--model", m, "--out", out, "--no-pictures", "the chat runs .")
    assert "'chat'" in r.stderr and "outside" in r.stdout
    r = run_ok("run", "--model", old, "--out", out, "--no-pictures", "the chat runs .")
    assert r.stderr.strip() == "" and "outside" not in r.stdout, (r.stdout, r.stderr)
    r = run_ok("run", "--model", old, "--out", out, "--no-pictures", long)
    assert "outside" not in r.stdout
    r = run_ok("run", "--model", old, "--out", out, "--no-pictures", "the cat sees the dig .")
    assert "'dig' (nearest: 'dog'" in r.stderr and "outside" in r.stdout


# ------------------------------------------------------------------ eval


def python_metrics(tsv, outputs, train_tsv, vocab):
    """The eval figures from the outputs, computed here from the TSVs alone."""
    targets = {"fr": set(), "vi": set()}
    for line in open(train_tsv, encoding="utf-8"):
        c = line.rstrip("\n").split("\t")
        targets[c[0]] |= {w for w in c[2].split() if w in vocab and not w.isdigit()}
    only = {"fr": targets["vi"] - targets["fr"], "vi": targets["fr"] - targets["vi"]}   # the OTHER's only
    lines = [l.rstrip("\n").split("\t") for l in open(tsv, encoding="utf-8") if l.strip()]
    assert len(lines) == len(outputs)
    res = {lang: {"n": 0, "exact": 0, "pron": [0, 0], "cata": [0, 0], "across": [0, 0], "pure": 0} for lang in only}
    impure = 0
    for c, out in zip(lines, outputs):
        lang, src, tgt, o = c[0], c[1].split(), c[2].split(), out.split()
        R = res[lang]
        R["n"] += 1
        R["exact"] += o == tgt
        align = [tuple(map(int, x.split("-"))) for x in c[3].split()] if c[3] != "-" else []
        for link in (c[4].split() if c[4] != "-" else []):
            p, a = map(int, link.split("-"))
            ts = [t for t, s in align if s == p and t < len(tgt)]
            if not ts:
                continue
            ok = all(t < len(o) and o[t] == tgt[t] for t in ts)
            R["pron"][0] += ok; R["pron"][1] += 1
            if a > p:
                R["cata"][0] += ok; R["cata"][1] += 1
            if any(src[j] in (".", "?") for j in range(min(a, p) + 1, max(a, p))):
                R["across"][0] += ok; R["across"][1] += 1
        pure = not any(w in only[lang] for w in o)
        R["pure"] += pure
        impure += not pure
    return res, impure


def check_split(got, mine):
    for lang, R in mine.items():
        g = got[lang]
        assert g["n"] == R["n"], (lang, g, R)
        if R["n"]:
            assert abs(g["exact_match"] - R["exact"] / R["n"]) < 1e-4, (lang, g, R)
            assert abs(g["language_purity"] - R["pure"] / R["n"]) < 1e-4, (lang, g, R)
        for key, mk in (("pronoun", "pron"), ("pronoun_cataphora", "cata"), ("pronoun_across", "across")):
            hit, total = R[mk]
            assert g[key]["n"] == total, (lang, key, g[key], R[mk])
            if total:
                assert abs(g[key]["accuracy"] - hit / total) < 1e-4, (lang, key, g[key], R[mk])
            else:
                assert g[key]["accuracy"] is None


def test_eval_splits_match_python(tmp):
    d, m = tiny(tmp)
    # the eval corpus: the same pairs, but its train.tsv holds "chat" only in a
    # Vietnamese target, so every French output with "chat" is impure by it
    e = os.path.join(tmp, "eval")
    shutil.copytree(d, e)
    kept = [l for l in open(os.path.join(d, "train.tsv"), encoding="utf-8")
            if not (l.startswith("fr\t") and " chat " in " " + l.split("\t")[2] + " ")]
    kept.append(uc.pair("vi", "the cat runs .", "con chat chạy .") + "\n")
    open(os.path.join(e, "train.tsv"), "w", encoding="utf-8").writelines(kept)
    j = json.loads(run_ok("eval", "--model", m, "--corpus", e, "--json", "--outputs").stdout)
    vocab = set(open(os.path.join(e, "vocab.txt"), encoding="utf-8").read().split("\n"))
    assert set(j["splits"]) == {"heldout", "heldout-frames"}
    total_impure = 0
    for split in ("heldout", "heldout-frames"):
        outs = j["outputs"][split]
        mine, impure = python_metrics(os.path.join(e, split + ".tsv"), outs, os.path.join(e, "train.tsv"), vocab)
        check_split(j["splits"][split], mine)
        total_impure += impure
    assert total_impure > 0, "the forced impure outputs were not counted"
    fr = j["splits"]["heldout"]["fr"]
    assert fr["language_purity"] < 1.0
    frames = j["splits"]["heldout-frames"]
    assert frames["fr"]["pronoun_cataphora"]["n"] > 0 and frames["fr"]["pronoun_across"]["n"] > 0
    assert frames["vi"]["pronoun_cataphora"]["n"] > 0 and frames["vi"]["pronoun_across"]["n"] > 0
    # names never seen in training come through the copy, lowercase as the TSV writes them
    held = j["outputs"]["heldout"]
    assert any("zoe" in o.split() for o in held) and any("minh" in o.split() for o in held), held
    # the first split's figures stay where the model card and test_eval read them
    assert abs(j["translation_exact_match"]["fr"] - fr["exact_match"]) < 1e-4
    # the plain table names both splits; --write-metadata keeps the old keys and adds eval_splits
    r = run_ok("eval", "--model", m, "--corpus", e)
    assert "held-out word combinations" in r.stdout and "held-out frames" in r.stdout, r.stdout
    run_ok("eval", "--model", m, "--corpus", e, "--write-metadata")
    meta = metadata(m)
    assert json.loads(meta["eval_heldout"])["pairs"] == j["pairs"]
    assert "coreference_head" in meta
    splits = json.loads(meta["eval_splits"])
    assert [s["split"] for s in splits] == ["heldout", "heldout-frames"]
    # --split alone measures one split; a corpus without train.tsv has no purity
    j1 = json.loads(run_ok("eval", "--model", m, "--corpus", e, "--split", "heldout-frames", "--json").stdout)
    assert list(j1["splits"]) == ["heldout-frames"]
    os.remove(os.path.join(e, "train.tsv"))
    j2 = json.loads(run_ok("eval", "--model", m, "--corpus", e, "--json").stdout)
    assert j2["splits"]["heldout"]["fr"]["language_purity"] is None
    run_err("eval", "--model", m, "--corpus", e, "--outputs")         # --outputs needs --json
    # eval --ablation keeps working on heldout.tsv
    run_ok("eval", "--model", m, "--corpus", e, "--ablation", "--json")
