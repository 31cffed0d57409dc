"""`make install PREFIX=…`: the installed binary finds its data (the shipped
models and the corpus lexicon) under PREFIX/share/attnviz from any folder."""
import os, subprocess
from helpers import ROOT, ATTNVIZ


def test_make_install_then_run_from_another_folder(tmp):
    prefix = os.path.join(tmp, "pfx")
    build = os.path.relpath(os.path.dirname(ATTNVIZ), ROOT)
    r = subprocess.run(["make", "-s", "-C", ROOT, "install", "PREFIX=" + prefix, "BUILD=" + build],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    exe = os.path.join(prefix, "bin", "attnviz")
    elsewhere = os.path.join(tmp, "elsewhere")
    os.makedirs(elsewhere)
    r = subprocess.run([exe, "corpus", "--out", "c", "--train", "200", "--heldout", "20"], cwd=elsewhere,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    for f in ("train.tsv", "heldout.tsv", "vocab.txt"):
        assert os.path.getsize(os.path.join(elsewhere, "c", f)) > 0
    r = subprocess.run([exe, "info"], cwd=elsewhere, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert os.path.join(prefix, "share", "attnviz", "models", "attnviz-en-fr-vi.safetensors") in r.stdout
    assert os.path.join(prefix, "share", "attnviz", "models", "attnviz-en-fr-vi-untaught.safetensors") in r.stdout
    r = subprocess.run([exe, "run", "--model", "untaught", "--out", "o", "--no-pictures", "i am happy ."],
                       cwd=elsewhere, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
