"""CLI tests of `attnviz corpus`: options, errors, output files."""
import os
from helpers import run, run_ok, run_err

def test_corpus_help():
    r = run_ok("corpus", "--help")
    assert "--seed" in r.stdout and "--heldout" in r.stdout and "--out" in r.stdout

def test_corpus_bad_options(tmp):
    for args in (["--train", "abc"], ["--train", "-5"], ["--heldout-share", "0"],
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
    for name in ("train.tsv", "heldout.tsv", "vocab.txt"):
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
