"""Pictures and printed lines say what they show (issue 15): the head drawn is
the head named, weak links and missing antecedents are said, --focus and
--query choose the head, taught heads are marked."""
import os, re
from helpers import ROOT, run_ok, load_json

def test_no_antecedent_is_said(tmp):
    out = os.path.join(tmp, "o")
    r = run_ok("run", "--out", out, "she ate the pizza with mushrooms .")
    assert "no antecedent in the sentence" in r.stdout, r.stdout
    assert "she → mushrooms" not in r.stdout
    t = load_json(os.path.join(out, "trace.json"))
    png = open(os.path.join(out, "lines.0-she.png"), "rb").read()
    assert "no antecedent".encode() in png          # the title chunk says it too
    html = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    assert "no antecedent" in html

def test_the_head_printed_is_the_head_drawn(tmp):
    out = os.path.join(tmp, "o")
    r = run_ok("run", "--out", out, "the animal didn't cross the street because it was too tired .")
    m = re.search(r"it \(position 7\) → (\w+) \(position \d+\): (\S+) head (\d+), weight ([0-9.]+)", r.stdout)
    assert m, r.stdout
    word, map_id, head, weight = m.group(1), m.group(2), int(m.group(3)), float(m.group(4))
    t = load_json(os.path.join(out, "trace.json"))
    mp = next(x for x in t["maps"] if x["id"] == map_id)
    row = mp["heads"][head]["weights"][7]
    k = max((j for j in range(len(row)) if j != 7 and not mp["keys"][j].startswith("<")), key=lambda j: row[j])
    assert mp["keys"][k] == word and abs(row[k] - weight) < 0.006
    png = open(os.path.join(out, "lines.7-it.png"), "rb").read()
    assert f"{map_id} head {head}".encode() in png and "TAUGHT".encode() in png
    assert "TAUGHT with gold antecedents" in r.stdout

def test_focus_and_query_choose_the_lines_head(tmp):
    out = os.path.join(tmp, "o")
    r = run_ok("run", "--out", out, "--query", "cat", "--focus", "0.3", "the cat sat on the mat .")
    assert "encoder.0.self head 3" in r.stdout and "the --focus head" in r.stdout, r.stdout
    assert "coreference head" not in r.stdout
    png = open(os.path.join(out, "lines.1-cat.png"), "rb").read()
    assert b"encoder.0.self head 3" in png
    assert os.path.exists(os.path.join(out, "encoder.0.self.h3.q1.png"))

def test_weak_link_is_said(tmp):
    out = os.path.join(tmp, "o")
    r = run_ok("run", "--model", "untaught", "--out", out, "the cat sat on the mat because it was tired .")
    lines = [l for l in r.stdout.splitlines() if l.strip().startswith("it (position")]
    assert lines, r.stdout
    w = float(re.search(r"weight ([0-9.]+)", lines[0]).group(1)) if "weight" in lines[0] else None
    if w is not None and w < 0.5:
        assert "weak link" in lines[0]
    if w is not None and w >= 0.5:
        assert "weak link" not in lines[0]
    assert "TAUGHT" not in r.stdout

def test_taught_heads_marked_in_grids_and_heatmaps(tmp):
    out = os.path.join(tmp, "o")
    run_ok("run", "--out", out, "the cat sat on the mat .")
    assert b"TAUGHT" in open(os.path.join(out, "encoder.2.self.h0.png"), "rb").read()
    assert b"TAUGHT" in open(os.path.join(out, "decoder.1.cross.h0.png"), "rb").read()
    assert b"TAUGHT" not in open(os.path.join(out, "decoder.1.cross.h1.png"), "rb").read()
    grid = open(os.path.join(out, "grid.decoder.cross.png"), "rb").read()
    assert "mat .\nthe cat sat on the mat . →".encode() in grid or "mat . →".encode() in grid
    assert b"outlined: a head training taught" in grid       # the title's second line

def test_unsure_words_are_said(tmp):
    """run names the written words whose probability (raw model, teacher-forced on
    its own translation) is below 0.2; the figures equal exp(base_log_p) of
    --importance's separate forward pass, and a sentence of the grammar has none."""
    import math
    out = os.path.join(tmp, "o")
    r = run_ok("run", "--importance", "--no-pictures", "--out", out, "Minh and Lan went to the market")
    line = next((l for l in r.stdout.splitlines() if l.strip().startswith("unsure:")), None)
    assert line, r.stdout
    imp = load_json(os.path.join(out, "trace.json"))["importance"]
    want = ["%s %.2f" % ("(end)" if w == "<eos>" else "'%s'" % w, math.exp(lp))
            for w, lp in zip(imp["targets"], imp["base_log_p"]) if math.exp(lp) < 0.2]
    assert want, imp
    assert line.strip().startswith("unsure: " + ", ".join(want[:6])), (line, want)
    for sentence in ("the dog is hungry .", "the girl found her shoes ."):
        r = run_ok("run", "--no-pictures", "--out", out, sentence)
        assert "unsure:" not in r.stdout, r.stdout
    r = run_ok("run", "--no-pictures", "--out", out, "--target", "le chien est affamé .", "Anna gave her brother a book")
    assert "unsure:" not in r.stdout, r.stdout       # a given translation: nothing was written
