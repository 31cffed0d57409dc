"""CLI tests of `attnviz corpus`: options, errors, output files."""
import os
from helpers import run, run_ok, run_err

def test_corpus_help():
    r = run_ok("corpus", "--help")
    assert "--seed" in r.stdout and "--heldout" in r.stdout and "--out" in r.stdout
    assert "--heldout-frames" in r.stdout and "--grammar-share" in r.stdout

def test_corpus_bad_options(tmp):
    for args in (["--train", "abc"], ["--train", "-5"], ["--heldout-share", "0"], ["--grammar-share", "1.5"],
                 ["--grammar-share", "x"], ["--heldout-frames", "-1"],
                 ["--seed", "-1"], ["--bogus", "1"], ["--train"], ["extra"]):
        r = run_err("corpus", *args, "--out", tmp)
        assert r.stderr.strip().splitlines()[-1].startswith("attnviz: error:"), r.stderr
    r = run_err("corpus", "--data", os.path.join(tmp, "nope"), "--out", tmp)
    assert "nouns.txt" in r.stderr
    assert not os.path.exists(os.path.join(tmp, "train.tsv"))

def test_corpus_writes_files_deterministically(tmp):
    a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    r = run_ok("corpus", "--seed", "5", "--train", "2000", "--heldout", "100", "--out", a)
    assert "vocabulary" in r.stdout and "wino_cross" in r.stdout
    run_ok("corpus", "--seed", "5", "--train", "2000", "--heldout", "100", "--out", b)
    for name in ("train.tsv", "heldout.tsv", "heldout-frames.tsv", "vocab.txt"):
        with open(os.path.join(a, name), "rb") as f1, open(os.path.join(b, name), "rb") as f2:
            assert f1.read() == f2.read(), name
    with open(os.path.join(a, "train.tsv"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert len(lines) == 2000
    assert all(len(l.split("\t")) == 6 for l in lines)
    with open(os.path.join(a, "vocab.txt"), encoding="utf-8") as f:
        voc = f.read().splitlines()
    assert voc[:6] == ["<pad>", "<unk>", "<bos>", "<eos>", "<2fr>", "<2vi>"]
    assert len(voc) == len(set(voc))
    assert not [n for n in os.listdir(a) if ".tmp" in n]


# ---- the grammar's pairs (issue 12): checked against the lexicon files ----
import atexit, re, shutil, tempfile
from helpers import ROOT

DATA = os.path.join(ROOT, "samples", "corpus")
_CACHE = {}


def _fields(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.lstrip().startswith("#"):
                yield line.split()


def lexicon():
    """An independent reader of nouns, adjectives, verbs and names."""
    if "lex" in _CACHE:
        return _CACHE["lex"]
    nouns, verbs, adjs, names = {}, {}, {}, {}
    # keyed by their first English token ("ice_cream" → "ice"); forms lists every whole form
    forms = []
    for f in _fields("nouns.txt"):
        n = {"sg": f[0], "pl": f[1], "fr": (f[2], f[3]), "fem": f[4] == "f", "vi": f[5].split("_"),
             "classes": f[6].split(",")}
        for k, w in ((0, f[0]), (1, f[1])):
            if w != "-":
                nouns.setdefault(w.split("_")[0], []).append((n, k))
                forms.append((w.split("_"), "N", f[0] if f[0] != "-" else f[1]))
    for f in _fields("adjectives.txt"):
        adjs[f[0]] = f
    for f in _fields("verbs.txt"):
        stem = f[7][:-1]
        pp = f[5]
        fr = set(f[4].split("|")) | {pp, pp + "e", pp + "s", pp + "es", f[7], stem + "ont",
                                     "a", "ont", "est", "sont", stem + "ai", stem + "as", stem + "ons",
                                     "ai", "as", "avons", "suis", "es", "sommes"}
        v = {"base": f[0], "fr": fr, "vi": f[8].split("_") + ["đã"], "pp": {pp, pp + "e", pp + "s", pp + "es"}}
        for w in (f[0], f[1], f[2]):
            verbs.setdefault(w.split("_")[0], []).append(v)
            forms.append((w.split("_"), "V", f[0]))
    for w in adjs:
        forms.append((w.split("_"), "A", w))
    for f in _fields("names.txt"):
        names[f[0]] = f[1]
        forms.append(([f[0]], "P", f[0]))
    _CACHE["forms"] = forms
    _CACHE["lex"] = (nouns, verbs, adjs, names)
    return _CACHE["lex"]


def read_tsv(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            lang, src, tgt, al, co, ident = line.rstrip("\n").split("\t")
            pairs = lambda s: [tuple(map(int, x.split("-"))) for x in s.split()] if s != "-" else []
            out.append({"lang": lang, "src": src.split(), "tgt": tgt.split(), "align": pairs(al),
                        "coref": pairs(co), "id": ident})
    return out


def grammar_corpus():
    """One corpus for the grammar tests (generated once per test run)."""
    if "corpus" not in _CACHE:
        d = tempfile.mkdtemp(prefix="attnviz-grammar-")
        atexit.register(shutil.rmtree, d, True)
        run_ok("corpus", "--seed", "11", "--train", "24000", "--heldout", "2000", "--heldout-frames", "2000",
               "--out", d, cwd=ROOT)
        _CACHE["corpus"] = {n: read_tsv(os.path.join(d, n + ".tsv")) for n in ("train", "heldout", "heldout-frames")}
        with open(os.path.join(d, "vocab.txt"), encoding="utf-8") as f:
            _CACHE["vocab"] = set(f.read().split("\n"))
    return _CACHE["corpus"]


def combo_key(src):
    """The held-out key (src/corpus/splits.c splits_combo_text): first noun or name,
    then first verb or adjective after it, then first noun or name (lemmas;
    the longest lexicon form that starts at a token)."""
    lexicon()
    if "first" not in _CACHE:
        _CACHE["first"] = {}
        for f in _CACHE["forms"]:
            _CACHE["first"].setdefault(f[0][0], []).append(f)
    got, want, i = [], ("NP", "VA", "NP"), 0
    while i < len(src) and len(got) < 3:
        best = None
        for toks, cat, lemma in _CACHE["first"].get(src[i], ()):
            if cat in want[len(got)] and src[i:i + len(toks)] == toks and (not best or len(toks) > len(best[0])):
                best = (toks, lemma)
        if best:
            got.append(best[1])
            i += len(best[0])
        else:
            i += 1
    return "|".join(got + ["-"] * (3 - len(got)))


def test_grammar_heldout_frames_never_in_train():
    c = grammar_corpus()
    train_frames = {p["id"] for p in c["train"] if p["id"].startswith("g.")}
    held_frames = {p["id"] for p in c["heldout-frames"]}
    assert len(c["heldout-frames"]) == 2000
    assert held_frames and all(re.fullmatch(r"g\.[a-z0-9._-]+", f) for f in held_frames), held_frames
    assert not held_frames & train_frames, held_frames & train_frames
    assert len(train_frames) > 300, len(train_frames)
    # every single rule value still occurs in training
    for k in range(4):
        held_vals = {f.split(".")[1 + k] for f in held_frames}
        train_vals = {f.split(".")[1 + k] for f in train_frames}
        assert held_vals <= train_vals, (k, held_vals - train_vals)
    # held-out word combinations come from training frames
    g_held = [p for p in c["heldout"] if p["id"].startswith("g.")]
    assert len(g_held) > 1000
    assert {p["id"] for p in g_held} <= train_frames


def test_grammar_heldout_combinations_never_in_train():
    c = grammar_corpus()
    held = {combo_key(p["src"]) for p in c["heldout"] if p["id"].startswith("g.")}
    assert len(held) > 50
    leaks = [(combo_key(p["src"]), " ".join(p["src"])) for p in c["train"]
             if p["id"].startswith("g.") and combo_key(p["src"]) in held]
    assert not leaks, leaks[:5]


def test_grammar_alignments_are_translations():
    nouns, verbs, adjs, names = lexicon()
    c = grammar_corpus()
    checked, bad = {"noun": 0, "verb": 0, "copy": 0}, []
    for p in c["train"] + c["heldout-frames"]:
        if not p["id"].startswith("g."):
            continue
        fr = p["lang"] == "fr"
        for t, s in p["align"]:
            w, x = p["src"][s], p["tgt"][t]
            if w in names or w.isdigit():
                checked["copy"] += 1
                ok = x == w
            elif w in nouns and w not in verbs:
                checked["noun"] += 1
                ok = any((x == n["fr"][k] or x in n["fr"][k].split("_")) if fr else x in n["vi"]
                         for n, k in nouns[w]) or x in ("au", "aux", "du", "des")
            elif w in verbs and w not in nouns and w not in adjs:
                checked["verb"] += 1
                ok = any(x in (v["fr"] if fr else v["vi"]) for v in verbs[w])
            else:
                continue
            if not ok:
                bad.append((w, x, " ".join(p["src"]), " ".join(p["tgt"])))
        # every name or number of the target is a copy of one in the source
        for t, x in enumerate(p["tgt"]):
            if x in names or x.isdigit():
                assert any(tt == t and p["src"][s] == x for tt, s in p["align"]), (x, p)
    assert not bad, bad[:5]
    assert min(checked.values()) > 300, checked
    # names and numbers are not in the vocabulary; every other token is
    voc = _CACHE["vocab"]
    assert not [n for n in names if n in voc]
    assert not [w for w in voc if w.isdigit()]


PRON = {"he": ("s", "m"), "him": ("s", "m"), "his": ("s", "m"), "she": ("s", "f"), "her": ("s", "f"),
        "it": ("s", None), "its": ("s", None), "they": ("p", None), "them": ("p", None), "their": ("p", None)}


def _fits(pron, w, nouns, names):
    """Does the word w (a noun or a name) fit the English pronoun?"""
    num, gender = PRON[pron]
    if w in names:
        if names[w] == "city":
            return num == "s" and gender is None
        return num == "s" and gender == names[w]
    for n, k in nouns.get(w, []):
        human = "person" in n["classes"]
        if (num == "p") != (k == 1):
            continue
        if num == "p":
            return True
        if gender is None:
            return not human
        return human and ("neutral" in n["classes"] or n["fem"] == (gender == "f"))
    return False


DETS = {"the", "a", "an", "my", "your", "our", "his", "her", "its", "their"}


def _noun_at(src, i, nouns, verbs, names):
    """Is src[i] a noun or a name?  A word that is also a verb ("leaves") only
    after a determiner, a number or an adjective."""
    w = src[i]
    if w in names:
        return True
    if w not in nouns:
        return False
    if w not in verbs:
        return True
    prev = src[i - 1] if i else ""
    return prev in DETS or prev.isdigit() or prev in lexicon()[2]


def test_grammar_antecedents_agree_and_are_unique():
    nouns, verbs, adjs, names = lexicon()
    c = grammar_corpus()
    kinds = {"ana": 0, "cata": 0, "across": 0}
    bad = []
    for p in c["train"] + c["heldout"] + c["heldout-frames"]:
        if not p["id"].startswith("g."):
            continue
        src = p["src"]
        for pi, ai in p["coref"]:
            pron, ante = src[pi], src[ai]
            kind = "across" if any(w in ".?" for w in src[min(pi, ai):max(pi, ai)]) else "cata" if ai > pi else "ana"
            kinds[kind] += 1
            ok = pron in PRON and (ante in names or ante in nouns) and _fits(pron, ante, nouns, names)
            # the only noun or name of the whole input that fits the pronoun
            cands = [w for i, w in enumerate(src) if _noun_at(src, i, nouns, verbs, names) and _fits(pron, w, nouns, names)]
            ok = ok and len(cands) == 1
            # the French pronoun aligned to it agrees with the antecedent
            if ok and p["lang"] == "fr":
                x = [p["tgt"][t] for t, s in p["align"] if s == pi]
                num, gender = PRON[pron]
                if ante in names:
                    fem = names[ante] == "f"
                else:
                    n, k = nouns[ante][0]
                    fem = n["fem"] if (gender is None or "neutral" not in n["classes"]) else gender == "f"
                    if gender is not None:
                        fem = gender == "f"
                if pron in ("his", "her", "its", "their") and x and x[0] in ("son", "sa", "ses", "leur", "leurs"):
                    want = {"leur", "leurs"} if num == "p" else {"son", "sa", "ses"}
                elif x and x[0] in ("le", "la", "l'", "les"):     # object clitic
                    want = {"les"} if num == "p" else {"la" if fem else "le", "l'"}
                    ok = pron in ("him", "her", "it", "them")
                else:
                    want = {("elles" if fem else "ils") if num == "p" else ("elle" if fem else "il")}
                    ok = pron in ("he", "she", "it", "they")
                ok = ok and bool(x) and x[0] in want
            if ok and p["lang"] == "vi":
                x = [p["tgt"][t] for t, s in p["align"] if s == pi]
                ok = bool(x) and x[0] in ("nó", "chúng", "họ", "anh", "cô", "của")
            if not ok:
                bad.append((pi, ai, " ".join(src), " ".join(p["tgt"])))
    assert not bad, bad[:5]
    assert all(v > 500 for v in kinds.values()), kinds


def _find(pairs, pred):
    return [p for p in pairs if pred(p)]


def test_grammar_renderings():
    c = grammar_corpus()
    g = [p for p in c["train"] if p["id"].startswith("g.")]
    fr = [p for p in g if p["lang"] == "fr"]
    vi = [p for p in g if p["lang"] == "vi"]
    # a feminine object clitic with participle agreement: "... l' a mangée ."
    nouns, verbs, adjs, names = lexicon()
    fem_clitic = 0
    for p in fr:
        s, t = p["src"], p["tgt"]
        for i in range(len(t) - 2):
            if t[i] in ("l'", "la", "les") and t[i + 1] in ("a", "ont"):
                pp = t[i + 3] if t[i + 2] == "pas" else t[i + 2]
                if not any(pp in v["pp"] for vs in verbs.values() for v in vs):
                    continue         # "ils ne l' ont pas ." : avoir, the verb itself
                # the antecedent of the English object pronoun decides the ending
                obj = [ai for pi, ai in p["coref"] if s[pi] in ("it", "her", "him", "them")]
                if not obj:
                    continue
                a = s[obj[0]]
                fem = names.get(a) == "f" if a in names else nouns[a][0][0]["fem"]
                if s[[pi for pi, ai in p["coref"] if ai == obj[0]][0]] in ("her",):
                    fem = True
                if s[[pi for pi, ai in p["coref"] if ai == obj[0]][0]] in ("him",):
                    fem = False
                assert pp.endswith("e") == fem or pp.endswith("es") == fem, (pp, " ".join(s), " ".join(t))
                fem_clitic += fem
    assert fem_clitic > 10, fem_clitic
    # du / au: "goes to the market" → "va au marché"
    assert _find(fr, lambda p: "au" in p["tgt"] and "to" in p["src"])
    # a Vietnamese plural with những
    assert _find(vi, lambda p: p["src"][:1] == ["the"] and p["src"][1] in nouns and nouns[p["src"][1]][0][1] == 1
                 and p["tgt"][0] == "những")
    # questions: est-ce que … ? / có … không ? / đã … chưa ?
    for p in g:
        if ".q." in p["id"] and p["id"].endswith(".one"):
            if p["lang"] == "fr":
                assert p["tgt"][:2] in (["est-ce", "que"], ["est-ce", "qu'"]) and p["tgt"][-1] == "?", p
            else:
                assert p["tgt"][-2] in ("không", "chưa") and p["tgt"][-1] == "?", p
    # negated future: won't → ne … pas / sẽ không
    for p in g:
        if "won't" in p["src"]:
            if p["lang"] == "fr":
                assert ("ne" in p["tgt"] or "n'" in p["tgt"]) and "pas" in p["tgt"], p
            else:
                assert "sẽ" in p["tgt"] and "không" in p["tgt"], p



def test_translation_is_a_function_of_the_english():
    """Grammar and templates agree: the same English never gets two translations
    when one of them is the grammar's (templates alone keep today's "they" →
    ils / elles, a choice the English does not make)."""
    c = grammar_corpus()
    seen, clash = {}, []
    for name in ("train", "heldout", "heldout-frames"):
        for p in c[name]:
            k = (p["lang"], " ".join(p["src"]))
            t = " ".join(p["tgt"])
            first = seen.setdefault(k, (t, p["id"]))
            if first[0] != t and (first[1].startswith("g.") or p["id"].startswith("g.")):
                clash.append((k, seen[k], (t, p["id"])))
    assert not clash, clash[:5]


def test_grammar_english_tells_present_from_past():
    """A verb whose past is its base form (read, cut) appears without an
    auxiliary only where the English is unambiguous: "he read" (present would be
    "reads"), so its French is the third-person-singular passé composé (a lu,
    n' a pas lu…), never a present ("they read" → lisent?) nor a plural or first
    or second person past ("they read" → ont lu?)."""
    nouns, verbs, adjs, names = lexicon()
    same = {}
    for f in _fields("verbs.txt"):
        if f[0] == f[2] and "_" not in f[0]:
            same.setdefault(f[0], set()).update({f[5], f[5] + "e", f[5] + "s", f[5] + "es"})
    assert same, "the lexicon has no verb whose past is its base form (read, cut): test it another way"
    aux = {"do", "don't", "does", "doesn't", "did", "didn't", "will", "won't"}
    bad, seen = [], 0
    for name in ("train", "heldout", "heldout-frames"):
        for p in grammar_corpus()[name]:
            if p["lang"] != "fr" or not p["id"].startswith("g."):
                continue
            src, tgt = p["src"], p["tgt"]
            for w, pps in same.items():
                # English: the verb with no auxiliary earlier in its clause
                bare = 0
                for i, x in enumerate(src):
                    if x != w:
                        continue
                    k = i - 1
                    while k >= 0 and src[k] not in aux and src[k] not in {",", ".", "?"}:
                        k -= 1
                    bare += k < 0 or src[k] not in aux
                # French: its participle after "a" (a lu, a pas lu, les a lus)
                third_past = sum(1 for j, y in enumerate(tgt) if y in pps and "a" in tgt[max(0, j - 2):j])
                seen += bare
                if bare > third_past:
                    bad.append((" ".join(src), " ".join(tgt)))
    assert seen > 50, seen
    assert not bad, bad[:5]


def test_grammar_every_noun_is_used():
    """Nouns are picked to even out their use: in 24,000 pairs every noun of the
    lexicon appears (singular or plural), none much rarer than the median."""
    nouns, verbs, adjs, names = lexicon()
    count = {}
    for p in grammar_corpus()["train"]:
        if p["id"].startswith("g."):
            for w in p["src"]:
                count[w] = count.get(w, 0) + 1
    per = {}
    for f in _fields("nouns.txt"):
        if "_" in f[0] + f[1] or f[0] == "-":     # toppings: plural, templates only
            continue
        per[f[0] if f[0] != "-" else f[1]] = sum(count.get(f[k], 0) for k in (0, 1) if f[k] != "-")
    vals = sorted(per.values())
    median = vals[len(vals) // 2]
    rare = sorted((n, u) for n, u in per.items() if u < median / 10)
    assert not rare, (median, rare[:10])


TINY = {
    "nouns.txt": "cat cats chat chats m con_mèo animal\n"
                 "mouse mice souris souris f con_chuột animal\n"
                 "boy boys garçon garçons m cậu_bé person\n"
                 "market markets marché marchés m chợ place,dest\n",
    "adjectives.txt": "hungry affamé đói animal,person\n",
    "verbs.txt": "eat eats ate manger mange|manges|mange|mangeons|mangez|mangent mangé a mangera ăn intr - - - s:animal|person\n"
                 "chase chases chased chasser chasse|chasses|chasse|chassons|chassez|chassent chassé a chassera đuổi tr - - - s:animal|person,o:animal|person\n"
                 "go goes went aller vais|vas|va|allons|allez|vont allé e ira đi dest to à đến s:animal|person,d:dest\n"
                 "give gives gave donner donne|donnes|donne|donnons|donnez|donnent donné a donnera đưa ditr to à cho s:person,o:animal,r:person\n",
    "names.txt": "paul m\nparis city\n",
    "words.txt": "# none\n",
    "templates.txt": "template t\nweight 1\nslot X noun animal sg\nen {X.det} {X} .\nfr {X.det} {X} .\nvi {X} .\n",
}


def tiny_corpus(tmp, n_train, n_frames):
    """Grammar pairs only, over the TINY lexicon: train, held-out and (when
    n_frames) held-out-frame pairs together."""
    data, out = os.path.join(tmp, "tiny"), os.path.join(tmp, "out")
    os.makedirs(data)
    for name, text in TINY.items():
        with open(os.path.join(data, name), "w", encoding="utf-8") as f:
            f.write(text)
    run_ok("corpus", "--data", data, "--out", out, "--grammar-share", "1", "--train", n_train, "--heldout", 200,
           "--heldout-frames", n_frames, "--lesson-copies", 0)
    splits = ("train", "heldout", "heldout-frames") if n_frames else ("train", "heldout")
    return [p for n in splits for p in read_tsv(os.path.join(out, n + ".tsv"))]

def test_grammar_hand_written_renderings(tmp):
    """On a lexicon of four nouns and four verbs, sentences written by hand
    come out verbatim (whole pairs, or a fragment of a longer one)."""
    pairs = tiny_corpus(tmp, 40000, 2000)
    whole = {}
    for p in pairs:
        whole.setdefault((p["lang"], " ".join(p["src"])), " ".join(p["tgt"]))
    want = [
        ("fr", "the cat won't eat .", "le chat ne mangera pas ."),          # negated future
        ("vi", "the cat won't eat .", "con mèo sẽ không ăn ."),
        ("fr", "does the cat eat ?", "est-ce que le chat mange ?"),          # questions
        ("vi", "does the cat eat ?", "con mèo có ăn không ?"),
        ("vi", "did the cat eat ?", "con mèo đã ăn chưa ?"),
        ("fr", "the mice are hungry .", "les souris sont affamées ."),       # agreement
        ("vi", "the mice are hungry .", "những con chuột đói ."),            # plural with những
        ("fr", "the cat goes to the market .", "le chat va au marché ."),    # à le → au
        ("vi", "the cat goes to the market .", "con mèo đi đến chợ ."),
    ]
    missing = [(l, s, t, whole.get((l, s))) for l, s, t in want if whole.get((l, s)) != t]
    assert not missing, missing
    # fragments: object relative and feminine object clitic, participle agreement
    # with the preceding object.  "it" can only be the mouse when a pronoun of the
    # pair refers to the (singular) mouse: it is then the one singular non-person.
    def about_mouse(p):
        return any(p["src"][a] == "mouse" for _, a in p["coref"])
    frag = [("fr", "the mouse that the cat chased", "la souris que le chat a chassée", lambda p: True),
            ("vi", "the mouse that the cat chased", "con chuột mà con mèo đã đuổi", lambda p: True),
            ("fr", "chased it", ("l' a chassée", "l' ont chassée", "l' ai chassée", "l' as chassée", "l' avons chassée"), about_mouse),
            ("fr", "when it", "quand elle", about_mouse),
            ("fr", "goes to paris", "va à paris", lambda p: True),                  # names copied
            ("vi", "goes to paris", "đi đến paris", lambda p: True)]
    for lang, s, t, keep in frag:
        hits = [p for p in pairs if p["lang"] == lang and f" {s} " in " " + " ".join(p["src"]) + " " and keep(p)]
        assert hits, (lang, s)
        alts = t if isinstance(t, tuple) else (t,)
        bad = [(" ".join(p["src"]), " ".join(p["tgt"])) for p in hits if not any(a in " ".join(p["tgt"]) for a in alts)]
        assert not bad, bad[:3]


def test_grammar_persons_and_adjuncts(tmp):
    """i / you / we as subjects (three tenses, an avoir verb and an être verb),
    me / us as object clitics, a question with you and a verb adjunct with the
    du contraction, on the tiny lexicon: written by hand, found verbatim."""
    pairs = tiny_corpus(tmp, 60000, 0)
    whole = {(p["lang"], " ".join(p["src"])): " ".join(p["tgt"]) for p in pairs}
    for lang, s, t in [("fr", "do you eat ?", "est-ce que tu manges ?"), ("vi", "do you eat ?", "bạn có ăn không ?")]:
        assert whole.get((lang, s)) == t, (lang, s, whole.get((lang, s)))
    AUX = {"do", "does", "did", "will", "don't", "doesn't", "didn't", "won't", "am", "are", "were", "was"}
    frag = [("fr", "i eat", "je mange"), ("fr", "i ate", "j' ai mangé"), ("fr", "i will eat", "je mangerai"),
            ("fr", "you eat", "tu manges"), ("fr", "you ate", "tu as mangé"), ("fr", "you will eat", "tu mangeras"),
            ("fr", "we eat", "nous mangeons"), ("fr", "we ate", "nous avons mangé"),
            ("fr", "we will eat", "nous mangerons"),
            ("fr", "i go to", "je vais"), ("fr", "i went to", "je suis allé"), ("fr", "i will go to", "j' irai"),
            ("fr", "you go to", "tu vas"), ("fr", "you went to", "tu es allé"), ("fr", "you will go to", "tu iras"),
            ("fr", "we go to", "nous allons"), ("fr", "we went to", "nous sommes allés"),
            ("fr", "we will go to", "nous irons"),
            ("fr", "i am hungry", "je suis affamé"), ("fr", "we were hungry", "nous étions affamés"),
            ("fr", "you were hungry", "tu étais affamé"), ("vi", "i am hungry", "tôi đói"),
            ("fr", "chased me", ("m' a chassé", "m' ont chassé", "m' as chassé")),
            ("fr", "chased us", ("nous a chassés", "nous ont chassés", "nous as chassés")),
            ("fr", "didn't chase me", ("ne m' a pas chassé", "ne m' ont pas chassé", "ne m' as pas chassé")),
            ("vi", "chased me", "đã đuổi tôi"),
            ("vi", "i ate", "tôi đã ăn"), ("vi", "we will eat", "chúng tôi sẽ ăn"), ("vi", "you went to", "bạn đã đi đến"),
            ("fr", "ate near the market", "mangé près du marché"), ("vi", "ate near the market", "ăn gần chợ")]
    for lang, s, t in frag:
        hits = []
        for p in pairs:
            src = " " + " ".join(p["src"]) + " "
            i = src.find(f" {s} ")
            if p["lang"] == lang and i >= 0 and src[:i].split()[-1:] != [] and src[:i].split()[-1] in AUX:
                continue
            if p["lang"] == lang and i >= 0:
                hits.append(p)
        assert hits, (lang, s)
        alts = t if isinstance(t, tuple) else (t,)
        bad = [(" ".join(p["src"]), " ".join(p["tgt"])) for p in hits if not any(a in " ".join(p["tgt"]) for a in alts)]
        assert not bad, (t, bad[:3])
