"""Output folders that don't collide (issue 15): a command's default folder is
its own, a folder holds one output at a time (what an earlier run wrote and the
new one does not is removed; the user's own files stay), messages name only
files written."""
import os
from helpers import run_ok, files_under

TIRED = "the animal didn't cross the street because it was too tired ."


def test_steps_leaves_no_earlier_example_behind(tmp):
    out = os.path.join(tmp, "s")
    run_ok("steps", "--scores", "[[0.1,0.2],[0.3,0.4]]", "--mask", "causal", "--out", out)
    assert os.path.exists(os.path.join(out, "steps-3-masked.png"))
    run_ok("steps", "--scores", "[[0.1,0.2],[0.3,0.4]]", "--out", out)
    assert not os.path.exists(os.path.join(out, "steps-3-masked.png")), files_under(out)


def test_batch_after_single_leaves_only_its_own_files(tmp):
    out = os.path.join(tmp, "o")
    run_ok("run", "--out", out, TIRED)
    open(os.path.join(out, "notes.txt"), "w").write("mine")
    r = run_ok("run", "--batch", "--out", out, "i am happy .", "the cat sat on the mat .")
    top = sorted(f for f in os.listdir(out) if not f.startswith("."))
    assert top == ["index.html", "notes.txt", "sentence-1", "sentence-2"], top
    assert "trace.json" not in r.stdout.splitlines()[-1].split(" in ")[0], r.stdout
    assert "one folder per sentence" in r.stdout
    run_ok("run", "--out", out, "i am happy .")
    assert not os.path.exists(os.path.join(out, "sentence-1")), files_under(out)
    assert open(os.path.join(out, "notes.txt")).read() == "mine"


def test_run_after_demo_keeps_the_lesson(tmp):
    run_ok("demo", "--quiet", cwd=tmp, timeout=180)
    lesson = open(os.path.join(tmp, "output", "index.html"), encoding="utf-8").read()
    run_ok("run", "--quiet", TIRED, cwd=tmp)
    assert open(os.path.join(tmp, "output", "index.html"), encoding="utf-8").read() == lesson
    assert os.path.exists(os.path.join(tmp, "output", "run", "index.html"))
    assert os.path.exists(os.path.join(tmp, "output", "p1-qk-steps.png"))


def test_a_forged_list_cannot_remove_files_outside(tmp):
    out = os.path.join(tmp, "o")
    run_ok("run", "--out", out, "i am happy .")
    victim = os.path.join(tmp, "victim.txt")
    open(victim, "w").write("keep")
    with open(os.path.join(out, ".attnviz-files"), "a") as f:
        f.write("../victim.txt\n/etc/hostname\n")
    run_ok("run", "--out", out, "the cat sat on the mat .")
    assert os.path.exists(victim)
