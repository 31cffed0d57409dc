"""A small hand-made corpus in the format of `attnviz corpus` (docs/spec: 6 TAB
columns lang, source, target, align, coref, id; vocab.txt without names), with
names that are copied (<unk> on both sides), and a tiny model trained on it.

Used by tests/test_unk.py and tests/test_schema.py until the grammar corpus
lands: it has names in training and unseen names in the held-out files,
pronouns after their antecedent, before it (cataphora) and in the next
sentence (across)."""
import os
from helpers import run_ok

SPECIALS = ["<pad>", "<unk>", "<bos>", "<eos>", "<2fr>", "<2vi>"]
ANIMALS = [("cat", "chat", "mèo"), ("dog", "chien", "chó"), ("bird", "oiseau", "chim"),
           ("horse", "cheval", "ngựa"), ("fish", "poisson", "cá")]
TRAIN_NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"]
HELDOUT_NAMES = ["zoe", "minh"]


def pair(lang, src, tgt, align="-", coref="-", ident="t"):
    return f"{lang}\t{src}\t{tgt}\t{align}\t{coref}\t{ident}"


def sees_name(a, name, lang):
    """the ANIMAL sees NAME ."""
    en, fr, vi = a
    if lang == "fr":
        return pair("fr", f"the {en} sees {name} .", f"le {fr} voit {name} .", "0-0 1-1 2-2 3-3 4-4", "-", "g.sees")
    return pair("vi", f"the {en} sees {name} .", f"con {vi} thấy {name} .", "1-1 2-2 3-3 4-4", "-", "g.sees")


def name_sees(a, name, lang):
    """NAME sees the ANIMAL ."""
    en, fr, vi = a
    if lang == "fr":
        return pair("fr", f"{name} sees the {en} .", f"{name} voit le {fr} .", "0-0 1-1 2-2 3-3 4-4", "-", "g.names")
    return pair("vi", f"{name} sees the {en} .", f"{name} thấy con {vi} .", "0-0 1-1 3-3 4-4", "-", "g.names")


def after(a, lang):
    """the ANIMAL runs because it is tired .   (pronoun 4 → antecedent 1)"""
    en, fr, vi = a
    if lang == "fr":
        return pair("fr", f"the {en} runs because it is tired .", f"le {fr} court parce qu' il est fatigué .",
                    "0-0 1-1 2-2 3-3 4-3 5-4 6-5 7-6 8-7", "4-1", "g.after")
    return pair("vi", f"the {en} runs because it is tired .", f"con {vi} chạy vì nó mệt .",
                "1-1 2-2 3-3 4-4 5-6 6-7", "4-1", "g.after")


def before(a, lang):
    """because it is tired , the ANIMAL runs .   (cataphora: pronoun 1 → antecedent 6)"""
    en, fr, vi = a
    if lang == "fr":
        return pair("fr", f"because it is tired , the {en} runs .", f"parce qu' il est fatigué , le {fr} court .",
                    "0-0 1-0 2-1 3-2 4-3 5-4 6-5 7-6 8-7 9-8", "1-6", "g.before")
    return pair("vi", f"because it is tired , the {en} runs .", f"vì nó mệt , con {vi} chạy .",
                "0-0 1-1 2-3 3-4 5-6 6-7 7-8", "1-6", "g.before")


def across(a, lang):
    """the ANIMAL runs . it is tired .   (across sentences: pronoun 4 → antecedent 1)"""
    en, fr, vi = a
    if lang == "fr":
        return pair("fr", f"the {en} runs . it is tired .", f"le {fr} court . il est fatigué .",
                    "0-0 1-1 2-2 3-3 4-4 5-5 6-6 7-7", "4-1", "g.across")
    return pair("vi", f"the {en} runs . it is tired .", f"con {vi} chạy . nó mệt .",
                "1-1 2-2 3-3 4-4 5-6 6-7", "4-1", "g.across")


def lines_for(names, animals, frames=(sees_name, name_sees)):
    out = []
    for lang in ("fr", "vi"):
        for a in animals:
            for n in names:
                for f in frames:
                    out.append(f(a, n, lang))
            for f in (after, before, across):
                out.append(f(a, lang))
    return out


def vocab_of(lines, names):
    seen, words = set(SPECIALS), list(SPECIALS)
    for line in lines:
        cols = line.split("\t")
        for w in (cols[1] + " " + cols[2]).split():
            if w not in seen and w not in names:
                seen.add(w)
                words.append(w)
    return words


def write(d, train, heldout, frames=None, names=TRAIN_NAMES + HELDOUT_NAMES):
    os.makedirs(d, exist_ok=True)
    for name, lines in (("train.tsv", train), ("heldout.tsv", heldout), ("heldout-frames.tsv", frames)):
        if lines is not None:
            with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
    with open(os.path.join(d, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab_of(train + heldout + (frames or []), names)) + "\n")


def make_corpus(d):
    """train: every frame with the training names; heldout: the unseen names in
    known frames; heldout-frames: the pronoun frames (cataphora, across) again."""
    train = lines_for(TRAIN_NAMES, ANIMALS)
    heldout = [sees_name(a, n, lang) for lang in ("fr", "vi") for a in ANIMALS[:3] for n in HELDOUT_NAMES]
    heldout += [after(a, lang) for lang in ("fr", "vi") for a in ANIMALS[:2]]
    frames = [f(a, lang) for lang in ("fr", "vi") for a in ANIMALS for f in (before, across)]
    write(d, train, heldout, frames)
    return d


TINY = ["--d-model", 32, "--heads", 2, "--layers", 2, "--d-ff", 64, "--batch", 32, "--lr", 3e-3,
        "--warmup", 30, "--quiet", "--eval-limit", 0]


def train_tiny(corpus, out, steps=400):
    """A tiny model trained on corpus (a few seconds on one core)."""
    run_ok("train", "--corpus", corpus, "--out", out, "--steps", steps, "--seed", 3, *TINY, timeout=600)
    return out
