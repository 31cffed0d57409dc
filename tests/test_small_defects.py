"""The small defects of issue 27, each with its test: --no-pictures names only what
it wrote; steps --out FILE is refused before the work; info is a readable summary
with the knock-out table as a table; an unknown --model lists the shipped models; an
over-long input gets a short error saying how to fix it; the GPT-2 lines view keeps
its "query" caption whole and its Vietnamese caption names no encoder; the README's
user part stays short."""
import json, os, re
from helpers import ROOT, run, run_ok, run_err
import hf_fixtures as hf


def pngs(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".png"))


def test_no_pictures_names_only_what_it_wrote(tmp):
    out = os.path.join(tmp, "o")
    r = run_ok("run", "--no-pictures", "--out", out, "the cat sat on the mat .")
    last = r.stdout.strip().splitlines()[-1]
    assert pngs(out) == [], pngs(out)
    assert last.startswith("trace.json and index.html (no pictures: --no-pictures) in "), last
    assert "pictures," not in last
    r = run_ok("run", "--no-pictures", "--trace", "none", "--out", os.path.join(tmp, "n"), "i am happy .")
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("index.html (no pictures") and "no trace.json" in last, last
    assert not os.path.exists(os.path.join(tmp, "n", "trace.json"))
    r = run_ok("run", "--out", os.path.join(tmp, "p"), "i am happy .")   # the default still names the pictures
    assert r.stdout.strip().splitlines()[-1].startswith("pictures, trace.json and index.html in ")


def test_steps_out_file_refused_before_the_work(tmp):
    f = os.path.join(tmp, "notes.txt")
    open(f, "w").write("mine\n")
    r = run_err("steps", "--q", "[[1,2,3]]", "--k", "[[2,1,0],[1,2,3]]", "--out", f)
    assert r.stdout == "", "the tables were printed before --out was checked:\n" + r.stdout
    assert "is a file, not a folder" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert open(f).read() == "mine\n"
    r = run_err("run", "--out", f, "the cat sat on the mat .")
    assert r.stdout == "" and "is a file, not a folder" in r.stderr
    r = run_err("demo", "--out", f)
    assert r.stdout == "" and "is a file, not a folder" in r.stderr


def test_info_is_a_summary_with_the_ablation_table(tmp):
    r = run_ok("info")
    lines = r.stdout.splitlines()
    assert "{" not in r.stdout, "JSON left in the summary"
    assert all(len(l) <= 132 for l in lines), max(lines, key=len)
    for key in ("parameters:", "trained:", "taught heads:", "held out:", "coreference:", "knock-outs:", "shipped models"):
        assert any(l.startswith(key) for l in lines), key
    # the table, against the JSON that --verbose prints as stored (an independent reading)
    v = run_ok("info", "--verbose").stdout
    assert "tensors:" in v and "tok_emb" in v and "tok_emb" not in r.stdout
    text = v[v.index("eval_ablation: ") + len("eval_ablation: "):]
    abl, _ = json.JSONDecoder().raw_decode(text)
    head = lines.index(next(l for l in lines if l.strip().startswith("head knocked out")))
    rows = lines[head + 1:head + 2 + len(abl["ablation"])]
    def cells(x):
        b = x["pronoun_accuracy_by_language"]
        return [x["pronoun_accuracy"], b["fr"], b["vi"], x["translation_exact_match"]["fr"],
                x["translation_exact_match"]["vi"]]
    want = [("none (the whole model)", cells(abl["baseline"]))] + \
           [(f'{a["map"]} head {a["head"]}', cells(a)) for a in abl["ablation"]]
    assert len(rows) == len(want)
    for row, (name, nums) in zip(rows, want):
        assert row.strip().startswith(name), (row, name)
        got = [float(x) for x in row.split()[-5:]]
        assert all(abs(g - n) <= 0.0005 + 1e-9 for g, n in zip(got, nums)), (row, nums)
    u = run_ok("info", "--model", "untaught").stdout
    assert "taught heads: none" in u


def test_unknown_model_lists_the_shipped_ones(tmp):
    for cmd in (["run", "--out", os.path.join(tmp, "o"), "--model", "nosuchname", "hi ."],
                ["info", "--model", "nosuchname"], ["demo", "--out", os.path.join(tmp, "d"), "--model", "nosuchname"]):
        r = run_err(*cmd)
        err = r.stderr.strip()
        assert len(err.splitlines()) == 1 and len(err) < 220, err
        assert "no model 'nosuchname'" in err and "taught, untaught" in err, err
    assert not os.path.exists(os.path.join(tmp, "o")) and not os.path.exists(os.path.join(tmp, "d"))


def test_over_long_input_short_error_with_the_fix(tmp):
    text = " ".join(["word"] * 3500)
    r = run_err("run", "--out", os.path.join(tmp, "o"), text)
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and len(err) < 250, (len(err), err[:300])
    assert "3500 tokens" in err and "at most 63" in err and "split it" in err and err.endswith(")"), err
    d = os.path.join(tmp, "gpt2")
    hf.write_gpt2_dir(d)
    r = run_err("run", "--model", d, "--out", os.path.join(tmp, "g"), text)
    err = r.stderr.strip()
    assert len(err) < 250 and "at most" in err and "shorten" in err, err


def test_gpt2_lines_view_caption_whole_and_no_encoder_in_vietnamese(tmp):
    from test_pictures_fit import read_rgb
    d, out = os.path.join(tmp, "gpt2"), os.path.join(tmp, "o")
    hf.write_gpt2_dir(d)
    run_ok("run", "--model", d, "--out", out, "The animal didn't cross the street because it was too tired")
    lines = [f for f in pngs(out) if f.startswith("lines.")]
    assert lines
    for f in lines:
        px = read_rgb(os.path.join(out, f))
        ink = (px < 200).any(axis=2)
        cols = ink.any(axis=0).nonzero()[0]
        assert cols.min() >= 20, f"{f}: ink at x = {cols.min()}: a caption runs off the left edge"
    html = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    assert "head của encoder" not in html
    # every foreign model gets the pronoun report of the Llama family: every head linking it to the same word
    assert "mọi head nối nó với cùng từ đó" in html


def test_readme_user_part_stays_short():
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    user = readme[:readme.index("## Building and testing")]
    assert "MALLOC_MMAP_THRESHOLD_" not in readme and "perf record" not in readme
    assert len(readme.splitlines()) < 380
    for doc in ("own-model.md", "own-model.vi.md"):
        text = open(os.path.join(ROOT, "docs", doc), encoding="utf-8").read()
        assert "MALLOC_MMAP_THRESHOLD_" in text and "bench_train.py" in text, doc
    assert "--slide" in user
