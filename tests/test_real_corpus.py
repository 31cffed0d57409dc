"""`attnviz corpus --real DIR` (issue 24): real sentence pairs (the Tatoeba
Project's, as manythings.org packages them) read strictly, split by English
sentence with every reference kept, mixed into train.tsv with the grammar's
pairs; the vocabulary by frequency; sources without their final punctuation;
`make model` without the data.  Most checks run on small files written here;
the last one reads ../shared/data/tatoeba and says it is skipped when absent."""
import os, re, subprocess
from helpers import ROOT, run, run_ok, run_err, skip

TATOEBA = os.path.join(ROOT, "..", "shared", "data", "tatoeba")
ATTRIB = "CC-BY 2.0 (France) Attribution: tatoeba.org #1 (a) & #2 (b)"

SUBJ = [("I", "Je", "Tôi"), ("You", "Tu", "Bạn"), ("We", "Nous", "Chúng tôi")]
VERB = [("see", ("vois", "vois", "voyons"), "thấy"), ("like", ("aime", "aimes", "aimons"), "thích"),
        ("want", ("veux", "veux", "voulons"), "muốn")]
OBJ = [("the cat", "le chat", "con mèo"), ("the dog", "le chien", "con chó"), ("Tom", "Tom", "Tom"),
       ("the old house", "la vieille maison", "ngôi nhà cũ"), ("the red car", "la voiture rouge", "chiếc xe đỏ"),
       ("Mary", "Mary", "Mary"), ("my friend", "mon ami", "bạn tôi")]


def fake_pairs():
    """(English, French, Vietnamese) sentences, each English sentence once or
    twice in French (a second translation), all of it written by rule."""
    out = []
    for si, (s, sf, sv) in enumerate(SUBJ):
        for v, vf, vv in VERB:
            for o, of, ov in OBJ:
                out.append((f"{s} {v} {o}.", f"{sf} {vf[si]} {of}.", f"{sv} {vv} {ov}."))
    return out


def write_fake(d, extra_fr=(), extra_vi=()):
    os.makedirs(d, exist_ok=True)
    pairs = fake_pairs()
    with open(os.path.join(d, "fra-eng.tsv"), "w", encoding="utf-8") as f:
        for i, (e, fr, _) in enumerate(pairs):
            f.write(f"{e}\t{fr}\n")
            if i % 3 == 0:   # a second translation of the same English sentence
                f.write(f"{e}\t{fr[:-1]} !\n")
            f.write(f"{e[:-1]}?\t{fr[:-1]} ?\n")
        f.write("I see " + "the cat and " * 20 + "the dog.\tJe vois " + "le chat et " * 20 + "le chien.\n")
        for line in extra_fr:
            f.write(line + "\n")
    with open(os.path.join(d, "vie-eng.tsv"), "w", encoding="utf-8") as f:
        for e, _, vi in pairs:
            f.write(f"{e}\t{vi}\t{ATTRIB}\n")
        for line in extra_vi:
            f.write(line + "\n")
    return d


def read(path):
    with open(path, encoding="utf-8") as f:
        return [l.rstrip("\n").split("\t") for l in f if l.strip()]


def strip_end(src):
    return src[:-2] if src.endswith((" .", " !", " ?")) else src


SMALL = ["--train", "300", "--heldout", "20", "--heldout-frames", "20", "--real-test", "6,4", "--real-valid", "3,2"]


def test_real_pairs_split_by_english_sentence(tmp):
    data = write_fake(os.path.join(tmp, "data"))
    out = os.path.join(tmp, "c")
    r = run_ok("corpus", "--real", data, "--out", out, *SMALL, "--min-count", "2")
    assert "real fr: " in r.stdout and "real vi: " in r.stdout and "1 too long" in r.stdout, r.stdout
    test, valid, train = (read(os.path.join(out, n)) for n in ("real-test.tsv", "real-valid.tsv", "train.tsv"))
    for rows in (test, valid):
        assert all(len(x) == 6 and x[3] == "-" and x[4] == "-" and x[5] == "t." + x[0] for x in rows)
    real_train = [x for x in train if x[5].startswith("t.")]
    assert real_train and len(real_train) + 300 == len(train)
    # every English sentence in one split; the English held out in either language trains neither
    held = {x[1] for x in test + valid}
    assert not held & {strip_end(x[1]) for x in real_train} and not held & {x[1] for x in real_train}
    for lang, n_test, n_valid in (("fr", 6, 3), ("vi", 4, 2)):
        assert len({x[1] for x in test if x[0] == lang}) == n_test
        assert len({x[1] for x in valid if x[0] == lang}) == n_valid
    assert not {(x[0], x[1]) for x in test} & {(x[0], x[1]) for x in valid}
    # every reference kept: each tested English sentence with all its translations
    src = [l.split("\t") for l in open(os.path.join(data, "fra-eng.tsv"), encoding="utf-8").read().splitlines()]
    tested = {x[1] for x in test if x[0] == "fr"}
    want = sum(1 for e, _ in src if " ".join(re.findall(r"\w+|[^\w\s]", e.lower())) in tested)
    assert len([x for x in test if x[0] == "fr"]) == want > 6
    # the Vietnamese pairs are written 3 times each (--real-vi-copies)
    vi = [x for x in real_train if x[0] == "vi"]
    assert vi and all(sum(1 for y in vi if strip_end(y[1]) == strip_end(x[1])) % 3 == 0 for x in vi)
    # the long pair is left out everywhere
    assert not any(len(x[1].split()) > 30 for x in train + test + valid)
    # names are copied, never vocabulary words; words used at least --min-count times are in
    vocab = set(open(os.path.join(out, "vocab.txt"), encoding="utf-8").read().split("\n"))
    assert "tom" not in vocab and "mary" not in vocab
    assert {"voyons", "vieille", "thích", "see", "want"} <= vocab
    # same options, same bytes
    out2 = os.path.join(tmp, "c2")
    run_ok("corpus", "--real", data, "--out", out2, *SMALL, "--min-count", "2")
    for n in ("train.tsv", "real-test.tsv", "real-valid.tsv", "vocab.txt"):
        assert open(os.path.join(out, n), "rb").read() == open(os.path.join(out2, n), "rb").read(), n


def test_real_sources_lose_their_final_punctuation(tmp):
    data = write_fake(os.path.join(tmp, "data"))
    out = os.path.join(tmp, "c")
    r = run_ok("corpus", "--real", data, "--out", out, *SMALL, "--unpunctuated", "0.5")
    m = re.search(r"unpunctuated: (\d+) of (\d+) training sources", r.stdout)
    assert m and 0.35 < int(m.group(1)) / int(m.group(2)) < 0.6, r.stdout
    train = read(os.path.join(out, "train.tsv"))
    bare = [x for x in train if not x[1].endswith((" .", " !", " ?"))]
    assert any(x[5].startswith("t.") for x in bare) and any(x[5].startswith("g.") for x in bare)
    assert all(x[2].endswith((".", "!", "?")) for x in bare)   # the target keeps it
    for x in bare:   # no alignment points at the removed token
        n = len(x[1].split())
        assert x[3] == "-" or all(int(p.split("-")[1]) < n for p in x[3].split())
    # training reads it (every target word known or copied)
    run_ok("train", "--corpus", out, "--out", os.path.join(tmp, "m.safetensors"), "--steps", "2", "--d-model", "16",
           "--heads", "2", "--layers", "1", "--d-ff", "16", "--eval-limit", "0", "--quiet")
    # without --real nothing is unpunctuated (the grammar corpus of before)
    r = run_ok("corpus", "--out", os.path.join(tmp, "g"), "--train", "200", "--heldout", "20", "--heldout-frames", "20")
    assert "unpunctuated" not in r.stdout
    assert all(x[1].endswith((" .", " ?")) for x in read(os.path.join(tmp, "g", "train.tsv")))


def test_real_files_are_read_strictly(tmp):
    cases = [
        (["just one column"], "fra-eng.tsv:", "2 or 3 tab-separated columns"),
        (["a\tb\tc\td"], "fra-eng.tsv:", "got 4"),
        (["\tLe chat."], "fra-eng.tsv:", "empty English"),
        (["The cat.\t"], "fra-eng.tsv:", "empty French"),
        (["The cat\x01.\tLe chat."], "fra-eng.tsv:", "control character"),
    ]
    n_lines = sum(1 for _ in open(write_fake(os.path.join(tmp, "probe")) + "/fra-eng.tsv", encoding="utf-8"))
    for k, (extra, where, what) in enumerate(cases):
        data = write_fake(os.path.join(tmp, f"d{k}"), extra_fr=extra)
        r = run_err("corpus", "--real", data, "--out", os.path.join(tmp, f"o{k}"), *SMALL)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and f"{where}{n_lines + 1}:" in lines[0] and what in lines[0], (extra, r.stderr)
        assert not os.path.exists(os.path.join(tmp, f"o{k}", "train.tsv"))
    data = write_fake(os.path.join(tmp, "bad-utf8"))
    with open(os.path.join(data, "vie-eng.tsv"), "ab") as f:
        f.write(b"The cat.\tcon m\xe8o.\n")
    n_vi = sum(1 for _ in open(os.path.join(data, "vie-eng.tsv"), "rb"))
    r = run_err("corpus", "--real", data, "--out", os.path.join(tmp, "o"), *SMALL)
    assert f"vie-eng.tsv:{n_vi}: invalid UTF-8" in r.stderr, r.stderr
    os.remove(os.path.join(data, "vie-eng.tsv"))
    r = run_err("corpus", "--real", data, "--out", os.path.join(tmp, "o"), *SMALL)
    assert "vie-eng.tsv" in r.stderr and "manythings.org/anki" in r.stderr and "vie-eng.zip" in r.stderr, r.stderr
    r = run_err("corpus", "--real-test", "5,5", "--out", os.path.join(tmp, "o"))
    assert "--real" in r.stderr
    for bad in ("5", "5,x", "-1,2"):
        run_err("corpus", "--real", data, "--real-test", bad, "--out", os.path.join(tmp, "o"))


def test_make_model_without_data_says_what_to_download(tmp):
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}   # as a user types it,
    r = subprocess.run(["make", "-s", "--no-print-directory", "-C", ROOT, "model",        # not inside make test's make
                        "DATA=" + os.path.join(tmp, "none")], capture_output=True, text=True, timeout=60, env=env)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert r.returncode != 0 and len(lines) == 1, r.stderr
    for want in ("fra-eng.zip", "vie-eng.zip", "manythings.org/anki", "tatoeba.org"):
        assert want in lines[0], lines[0]
    assert r.stdout.strip() == "", r.stdout   # nothing built, nothing run


def test_real_corpus_from_tatoeba(tmp):
    if not all(os.path.exists(os.path.join(TATOEBA, f)) for f in ("fra-eng.tsv", "vie-eng.tsv")):
        skip(f"{TATOEBA} is absent (fra-eng.tsv, vie-eng.tsv from manythings.org/anki; see ../shared/data/README.md)")
    out = os.path.join(tmp, "c")
    r = run_ok("corpus", "--real", TATOEBA, "--out", out, timeout=300)
    m = re.search(r"vocabulary: (\d+) tokens; words of the real training pairs in it: English (\d+), French (\d+), "
                  r"Vietnamese (\d+)", r.stdout)
    assert m, r.stdout
    V, en, fr, vi = map(int, m.groups())
    assert en >= 8000 and fr >= 5000 and vi >= 1000 and V <= 20000, r.stdout
    # the shipped shape (d_model 128, separate tok_emb and out.w) stays under 30 MB
    rest = 2241404 - 2 * 128 * 4348 - 4348       # every other parameter of the shipped model
    assert 4 * (2 * 128 * V + V + rest) < 30e6
    test, valid = read(os.path.join(out, "real-test.tsv")), read(os.path.join(out, "real-valid.tsv"))
    for lang, n_test, n_valid in (("fr", 2000, 1000), ("vi", 500, 250)):
        assert len({x[1] for x in test if x[0] == lang}) == n_test
        assert len({x[1] for x in valid if x[0] == lang}) == n_valid
    held = {x[1] for x in test + valid}
    train = [x for x in read(os.path.join(out, "train.tsv")) if x[5].startswith("t.")]
    assert not held & {x[1] for x in train}
    assert len(train) > 100000 and sum(1 for x in train if x[0] == "vi") > 10000


# ---- eval on the real test split: chrF computed here from its definition ----

def chrf_counts(hyp, ref):
    """Per order n = 1..6: (hypothesis n-grams, reference n-grams, shared n-grams with
    min counts), over the code points with every white space removed (Popović 2015)."""
    from collections import Counter
    h, r = "".join(hyp.split()), "".join(ref.split())
    out = []
    for n in range(1, 7):
        ch = Counter(h[i:i + n] for i in range(len(h) - n + 1))
        cr = Counter(r[i:i + n] for i in range(len(r) - n + 1))
        out.append((sum(ch.values()), sum(cr.values()), sum(min(c, cr[g]) for g, c in ch.items())))
    return out


def chrf_of(counts, beta=2.0):
    """chrF from summed counts: mean precision and recall over the orders where both
    sides have n-grams, then the F-score with recall weighted beta² times."""
    ps, rs = [], []
    for nh, nr, m in counts:
        if nh > 0 and nr > 0:
            ps.append(m / nh)
            rs.append(m / nr)
    if not ps:
        return 0.0
    p, r = sum(ps) / len(ps), sum(rs) / len(rs)
    return 100 * (1 + beta ** 2) * p * r / (beta ** 2 * p + r) if p + r > 0 else 0.0


def test_chrf_by_hand():
    # "ab" against "abc": orders 1 and 2; P = (2/2 + 1/1)/2 = 1, R = (2/3 + 1/2)/2 = 7/12
    assert abs(chrf_of(chrf_counts("a b", "abc")) - 100 * 5 * (7 / 12) / (4 + 7 / 12)) < 1e-9
    assert chrf_of(chrf_counts("xyz", "abc")) == 0.0 and chrf_of(chrf_counts("", "abc")) == 0.0


def test_eval_reports_chrf_on_real_sentences(tmp):
    import json
    data = write_fake(os.path.join(tmp, "data"))
    c = os.path.join(tmp, "c")
    run_ok("corpus", "--real", data, "--out", c, *SMALL)
    m = os.path.join(tmp, "m.safetensors")
    run_ok("train", "--corpus", c, "--out", m, "--steps", "250", "--d-model", "32", "--heads", "2", "--layers", "2",
           "--d-ff", "64", "--batch", "32", "--lr", "3e-3", "--warmup", "30", "--quiet", "--eval-limit", "0", timeout=300)
    r = run_ok("eval", "--model", m, "--corpus", c, "--json", "--outputs", timeout=300)
    j = json.loads(r.stdout)
    outs = j["outputs"]["real-test"]
    groups = {}   # (lang, English) → references, in the order of their first lines
    for lang, src, tgt, *_ in read(os.path.join(c, "real-test.tsv")):
        groups.setdefault((lang, src), []).append(tgt)
    assert len(outs) == len(groups) == 10
    total = {"fr": [[0, 0, 0] for _ in range(6)], "vi": [[0, 0, 0] for _ in range(6)]}
    exact = {"fr": 0, "vi": 0}
    for ((lang, src), refs), hyp in zip(groups.items(), outs):
        best, best_f = None, -1.0
        for ref in refs:   # the best reference by sentence-level chrF, the first of equals
            cnt = chrf_counts(hyp, ref)
            f = chrf_of(cnt)
            if f > best_f:
                best, best_f = cnt, f
        for n in range(6):
            for k in range(3):
                total[lang][n][k] += best[n][k]
        exact[lang] += hyp in refs
    for lang, n_sent in (("fr", 6), ("vi", 4)):
        got = j["real_test"][lang]
        assert got["sentences"] == n_sent and got["references"] == sum(len(v) for k, v in groups.items() if k[0] == lang)
        assert abs(got["chrf"] - chrf_of(total[lang])) < 1e-3, (lang, got, chrf_of(total[lang]))
        assert abs(got["exact_match"] - exact[lang] / n_sent) < 1e-4
    assert j["real_test"]["fr"]["chrf"] > 0
    # the text report, and --write-metadata keeps the figures
    r = run_ok("eval", "--model", m, "--corpus", c, timeout=300)
    assert re.search(r"real sentences \(.*real-test\.tsv: 6 fr \+ 4 vi English sentences", r.stdout), r.stdout
    assert re.search(r"fr\s+chrF\s+[0-9.]+\s+exact match", r.stdout), r.stdout
    run_ok("eval", "--model", m, "--corpus", c, "--write-metadata", timeout=300)
    from helpers import read_safetensors
    meta, _ = read_safetensors(m)
    assert json.loads(meta["eval_real_test"])["fr"]["sentences"] == 6
    # --split measures one split: no real sentences then
    r = run_ok("eval", "--model", m, "--corpus", c, "--split", "heldout", timeout=300)
    assert "real sentences" not in r.stdout


def test_french_share_sets_the_languages_of_the_composed_pairs(tmp):
    """--french-share P: of the training pairs after the lessons (which come in both
    languages), floor(n P) - floor(k P) are French (an even spread, counted by hand
    here), and 0.5 keeps the alternating corpus of before byte for byte."""
    base = ["--train", "1000", "--heldout", "20", "--heldout-frames", "20", "--lesson-copies", "0"]
    run_ok("corpus", "--out", os.path.join(tmp, "half"), *base)
    run_ok("corpus", "--out", os.path.join(tmp, "half2"), *base, "--french-share", "0.5")
    a, b = (open(os.path.join(tmp, d, "train.tsv"), encoding="utf-8").read() for d in ("half", "half2"))
    assert a == b
    train = read(os.path.join(tmp, "half", "train.tsv"))
    assert sum(x[0] == "fr" for x in train) == 500
    run_ok("corpus", "--out", os.path.join(tmp, "fr"), *base, "--french-share", "0.65")
    train = read(os.path.join(tmp, "fr", "train.tsv"))
    assert len(train) == 1000 and sum(x[0] == "fr" for x in train) == 650
    # evenly spread: every 20 consecutive pairs hold 13 French ones
    langs = [x[0] for x in train]
    assert all(langs[i:i + 20].count("fr") == 13 for i in range(0, 1000, 20))
    r = run_err("corpus", "--out", os.path.join(tmp, "bad"), *base, "--french-share", "1.5")
    assert "--french-share 1.5" in r.stderr and len(r.stderr.strip().splitlines()) == 1
