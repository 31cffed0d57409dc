"""`attnviz compare`: the lesson's tired/wide pair (its largest difference, read
from the traces, not assumed), difference matrices equal to B − A of the two
traces' weights, the three kinds of comparison (two sentences, two models,
--ablate), two GPT-2 folders, sentences of different lengths, and bad inputs
(one line, exit != 0, nothing written)."""
import os
import numpy as np
from helpers import run, run_ok, run_err, load_json, validate_trace
import hf_fixtures as hf

TIRED = "the animal didn't cross the street because it was too tired ."
WIDE = "the animal didn't cross the street because it was too wide ."


def compare(tmp, *args, name="cmp"):
    out = os.path.join(tmp, name)
    r = run_ok("compare", "--out", out, *args)
    c = load_json(os.path.join(out, "compare.json"))
    a, b = (load_json(os.path.join(out, f)) for f in ("trace-a.json", "trace-b.json"))
    validate_trace(a)
    validate_trace(b)
    return r, out, c, a, b


def weights(trace, map_id, head):
    m = [m for m in trace["maps"] if m["id"] == map_id][0]
    return m, np.array(m["heads"][head]["weights"], dtype=np.float64)


def check_diffs(c, a, b):
    """Every difference matrix is B − A of the traces' weights; max_abs, row and col are its largest cell."""
    assert c["heads"], "no head compared"
    scale = 0
    for h in c["heads"]:
        _, wa = weights(a, h["map"], h["head"])
        _, wb = weights(b, h["map"], h["head"])
        d = np.array(h["diff"], dtype=np.float64)
        assert d.shape == wa.shape == wb.shape == (h["rows"], h["cols"])
        err = np.abs(d - (wb - wa)).max()
        assert err <= 1e-7, f"{h['map']} head {h['head']}: diff differs from B − A by {err}"
        r, k = np.unravel_index(np.argmax(np.abs(d)), d.shape)
        assert abs(abs(d[r, k]) - h["max_abs"]) <= 1e-7 and abs(d[h["row"], h["col"]]) == np.abs(d).max()
        scale = max(scale, np.abs(d).max())
    assert abs(c["scale"] - scale) <= 1e-7


def test_compare_tired_wide(tmp):
    r, out, c, a, b = compare(tmp, TIRED, WIDE)
    check_diffs(c, a, b)
    assert c["not_compared"] == ""
    # the largest difference of the taught coreference head is on "it"'s row: animal → street
    h = [h for h in c["heads"] if h["map"] == "encoder.2.self" and h["head"] == 0][0]
    assert h["query_a"] == h["query_b"] == "it", h
    d = np.array(h["diff"])
    m, _ = weights(a, "encoder.2.self", 0)
    it = m["queries"].index("it")
    assert h["row"] == it
    assert d[it, m["keys"].index("animal")] < -0.9 and d[it, m["keys"].index("street")] > 0.9, d[it]
    # and it is the largest of the whole comparison (ties at |Δ| ≈ 1 broken by trace order)
    best = max(c["heads"], key=lambda x: x["max_abs"])
    assert abs(h["max_abs"] - best["max_abs"]) <= 1e-6, (h["max_abs"], best["map"], best["head"], best["max_abs"])
    first = [l for l in r.stdout.splitlines() if l.startswith("  ") and " head " in l][0]
    assert first.split()[:3] == ["encoder.2.self", "head", "0"] and "“it” (7)" in first, first
    files = set(os.listdir(out))
    for mp in a["maps"]:
        for k in range(len(mp["heads"])):
            assert f"{mp['id']}.h{k}.png" in files and f"{mp['id']}.h{k}.diff.png" in files
    assert "lines.7-it.png" in files and "index.html" in files
    html = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    for f in ("lines.7-it.png", "encoder.2.self.h0.diff.png", "trace-a.json", "trace-b.json", "compare.json"):
        assert f in html, f
    png = open(os.path.join(out, "encoder.2.self.h0.diff.png"), "rb").read()
    assert "difference B − A".encode() in png and b"tired ." in png and b"wide ." in png   # text chunks
    assert "one scale for every head: ±1.00" in html or "±1.00" in html
    assert "tired/wide" in r.stdout, "labels a/b where the words differ"


def test_compare_two_models_and_ablate(tmp):
    s = "the cat sat on the mat because it was tired ."
    r, out, c, a, b = compare(tmp, "--model", "taught", "--model2", "untaught", s, name="models")
    check_diffs(c, a, b)
    assert a["source_tokens"] == b["source_tokens"]
    assert any(h["map"].startswith("encoder") for h in c["heads"])
    r, out, c, a, b = compare(tmp, "--ablate", "encoder.2.self.0", TIRED, name="ablate")
    check_diffs(c, a, b)
    assert "ablated" in b and "encoder.2.self" in str(b["ablated"]), b.get("ablated")
    assert "knocked out" in c["b"]["label"]


def test_compare_different_lengths(tmp):
    r, out, c, a, b = compare(tmp, TIRED, "the dog didn't cross the road because it was so very tired .",
                              name="lengths")
    assert "encoder.0.self (A 13×13, B 14×14)" in c["not_compared"], c["not_compared"]
    assert not any(h["map"].startswith("encoder") for h in c["heads"])
    assert "not compared" in r.stdout
    files = set(os.listdir(out))
    assert "encoder.0.self.h0.png" in files and "encoder.0.self.h0.diff.png" not in files
    check_diffs(c, a, b) if c["heads"] else None


def test_compare_gpt2_folders(tmp):
    d1, d2 = os.path.join(tmp, "g1"), os.path.join(tmp, "g2")
    hf.write_gpt2_dir(d1, seed=1)
    hf.write_gpt2_dir(d2, seed=2)
    s = "The animal didn't cross the street because it was too tired"
    r, out, c, a, b = compare(tmp, "--model", d1, "--model2", d2, s, name="gpt2")
    check_diffs(c, a, b)
    assert len(c["heads"]) == 2 * 4
    r, out, c, a, b = compare(tmp, "--model", d1, s, s.replace("tired", "wide"), name="gpt2s")
    check_diffs(c, a, b)
    assert any(f.startswith("lines.") and f.endswith("-it.png") for f in os.listdir(out))
    r = run_ok("compare", "--model", d1, "--query", "zebra", "--out", os.path.join(tmp, "q"), s, s)
    assert "--query 'zebra'" in r.stderr and not any(f.startswith("lines.") for f in os.listdir(os.path.join(tmp, "q")))
    r = run_err("compare", "--model", d1, "--to", "vi", "--out", os.path.join(tmp, "vi"), s, s)
    assert "--to" in r.stderr and not os.path.exists(os.path.join(tmp, "vi"))


def test_compare_bad_inputs(tmp):
    out = os.path.join(tmp, "bad")
    cases = [((TIRED,), "two sentences"), ((TIRED, WIDE, "x y ."), "at most two"),
             (("--model2", "untaught", TIRED, WIDE), "two sentences"),
             (("--model2", "untaught", "--ablate", "encoder.2.self.0", TIRED), "not both"),
             (("--ablate", "encoder.9.self.0", TIRED), "--ablate"), (("--to", "de", TIRED, WIDE), "fr or vi"),
             (("--model", "nosuchmodel", TIRED, WIDE), "nosuchmodel"), (("--frob", TIRED, WIDE), "unknown option"),
             (("--model2", os.path.join(tmp), TIRED), "no config.json")]
    for args, words in cases:
        r = run_err("compare", "--out", out, *args)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        assert len(lines) == 1 and words in lines[0], (args, r.stderr)
        assert not os.path.exists(out), f"{args}: something was written"
