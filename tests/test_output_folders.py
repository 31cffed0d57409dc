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
    r = run_ok("run", "--batch", "--force", "--out", out, "i am happy .", "the cat sat on the mat .")
    top = sorted(f for f in os.listdir(out) if not f.startswith("."))
    assert top == ["index.html", "notes.txt", "sentence-1", "sentence-2"], top
    assert "trace.json" not in r.stdout.splitlines()[-1].split(" in ")[0], r.stdout
    assert "one folder per sentence" in r.stdout
    run_ok("run", "--force", "--out", out, "i am happy .")
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


# ---- hostile and careless output folders (issue 38: 2, 4, 5, 9, 11) ----
import signal, subprocess, time
from helpers import ATTNVIZ, run, run_err


def _tree(d):
    """{relative path: bytes or 'link->target'} of everything under d, links not followed."""
    out = {}
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(root, n)
            rel = os.path.relpath(p, d)
            if os.path.islink(p):
                out[rel] = "link->" + os.readlink(p)
            elif os.path.isfile(p):
                out[rel] = open(p, "rb").read()
    return out


def test_a_planted_list_and_link_cannot_delete_outside(tmp):
    """A cloned folder holds output/run/.attnviz-files naming h/secret and a link
    output/run/h -> a folder outside: the run writes, and the secret stays."""
    outside = os.path.join(tmp, "ssh")
    os.makedirs(outside)
    open(os.path.join(outside, "secret"), "w").write("key")
    clone = os.path.join(tmp, "clone")
    out = os.path.join(clone, "output", "run")
    os.makedirs(out)
    os.symlink(outside, os.path.join(out, "h"))
    for header in ("", "attnviz-files 2\n3 0000000000000000 h/secret\n"):
        with open(os.path.join(out, ".attnviz-files"), "w") as f:
            f.write(header + "h/secret\n")
        r = run("run", "--force", "i am happy .", cwd=clone)
        assert r.returncode == 0, r.stderr
        assert open(os.path.join(outside, "secret")).read() == "key"
        assert os.path.islink(os.path.join(out, "h"))


def test_a_list_cannot_delete_a_file_attnviz_did_not_write(tmp):
    """A forged list naming the user's own file in --out: it is not what attnviz
    wrote (size and hash differ), so it stays."""
    out = os.path.join(tmp, "o")
    run_ok("run", "--out", out, "i am happy .")
    mine = os.path.join(out, "mine.txt")
    open(mine, "w").write("my notes")
    with open(os.path.join(out, ".attnviz-files"), "a") as f:
        f.write("8 0123456789abcdef mine.txt\n")
    run_ok("run", "--force", "--out", out, "the cat sat on the mat .")
    assert open(mine).read() == "my notes"


def test_a_folder_of_other_files_is_refused_without_force(tmp):
    out = os.path.join(tmp, "docs")
    os.makedirs(out)
    open(os.path.join(out, "thesis.txt"), "w").write("x")
    r = run_err("run", "--out", out, "i am happy .")
    assert "holds files attnviz did not write (thesis.txt)" in r.stderr and "--force" in r.stderr, r.stderr
    assert sorted(os.listdir(out)) == ["thesis.txt"]
    run_ok("run", "--force", "--out", out, "i am happy .")
    assert open(os.path.join(out, "thesis.txt")).read() == "x"
    r = run_err("run", "--out", out, "the cat sat on the mat .")   # thesis.txt is still not attnviz's
    assert "thesis.txt" in r.stderr, r.stderr


def test_root_and_home_are_refused(tmp):
    for d in ("/", "/."):
        r = run_err("run", "--out", d, "i am happy .")
        assert "root folder" in r.stderr, r.stderr
    home = os.path.join(tmp, "home")
    os.makedirs(home)
    r = subprocess.run([ATTNVIZ, "run", "--out", home, "i am happy ."], capture_output=True, text=True,
                       env={**os.environ, "HOME": home}, timeout=120)
    assert r.returncode != 0 and "home folder" in r.stderr, r.stderr
    assert os.listdir(home) == []


def test_a_failed_commit_leaves_the_folder_as_it_was(tmp):
    """trace.json is a non-empty folder in --out: the run fails, every earlier
    file is exactly as it was (the pictures moved before the failure go back)."""
    out = os.path.join(tmp, "o")
    run_ok("run", "--out", out, "i am happy .")
    os.remove(os.path.join(out, "trace.json"))
    os.makedirs(os.path.join(out, "trace.json", "x"))
    manifest = os.path.join(out, ".attnviz-files")
    lines = open(manifest).read().splitlines()
    open(manifest, "w").write("\n".join(l for l in lines if not l.endswith(" trace.json")) + "\n")
    before = _tree(out)
    r = run_err("run", "--out", out, "the cat sat on the mat .")   # refused: trace.json is not attnviz's
    assert "did not write (trace.json)" in r.stderr, r.stderr
    assert _tree(out) == before
    r = run_err("run", "--force", "--out", out, "the cat sat on the mat .")   # checked before any file moves
    assert "trace.json is a folder where attnviz writes a file" in r.stderr, r.stderr
    assert _tree(out) == before


def test_a_dangling_link_out_is_refused_before_the_work(tmp):
    out = os.path.join(tmp, "o")
    os.symlink(os.path.join(tmp, "nowhere"), out)
    r = run_err("run", "--out", out, "i am happy .")
    assert "link that leads nowhere" in r.stderr, r.stderr


def test_sigterm_removes_the_staging_folder_and_the_next_run_removes_stale_ones(tmp):
    """A run killed while it writes leaves no staging folder; one left by a
    process that is gone (kill -9) is removed by the next run into the folder."""
    out = os.path.join(tmp, "o")
    run_ok("run", "--out", out, "i am happy .")
    p = subprocess.Popen([ATTNVIZ, "run", "--out", out, "--max-pictures", "0",
                          "the animal didn't cross the street because it was too tired ."],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(400):   # until its staging folder exists
        if any(n.startswith(".attnviz-tmp-") for n in os.listdir(out)):
            break
        time.sleep(0.005)
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=30)
    assert not any(n.startswith(".attnviz-tmp-") for n in os.listdir(out)), os.listdir(out)
    stale = os.path.join(out, ".attnviz-tmp-ABCDEF")
    os.makedirs(stale)
    dead = subprocess.Popen(["true"]); dead.wait()
    open(os.path.join(stale, ".attnviz-stage"), "w").write(f"attnviz-stage {dead.pid}\n")
    run_ok("run", "--out", out, "i am happy .")
    assert not os.path.exists(stale)


def list_hash(data):
    """The list's hash (core/outdir.h), written here from its description: the file in
    whole 64 KB chunks; in each, 8-byte little-endian words w: h = (h ^ w) * 0x100000001b3,
    h ^= h >> 29 (64 bits), then the chunk's last bytes b: h = (h ^ b) * 0x100000001b3."""
    M, h = (1 << 64) - 1, 0xcbf29ce484222325
    for c in range(0, max(len(data), 1), 65536):
        chunk = data[c:c + 65536]
        words = len(chunk) // 8 * 8
        for i in range(0, words, 8):
            h = ((h ^ int.from_bytes(chunk[i:i + 8], "little")) * 0x100000001b3) & M
            h ^= h >> 29
        for b in chunk[words:]:
            h = ((h ^ b) * 0x100000001b3) & M
    return h


def test_the_list_holds_each_files_size_and_hash(tmp):
    """Every line of .attnviz-files: the file's size and the hash above, computed here
    from the bytes on disk (the page is over 64 KB: chunks and tails are exercised)."""
    out = os.path.join(tmp, "o")
    run_ok("run", "--out", out, TIRED)
    lines = open(os.path.join(out, ".attnviz-files"), "rb").read().decode().splitlines()
    assert lines[0] == "attnviz-files 3", lines[0]
    assert len(lines) > 5
    for line in lines[1:]:
        size, h, name = line.split(" ", 2)
        data = open(os.path.join(out, name), "rb").read()
        assert int(size) == len(data) and int(h, 16) == list_hash(data), name
    assert any(int(l.split()[0]) > 65536 for l in lines[1:])


def test_an_earlier_version_2_list_still_removes_what_it_wrote(tmp):
    """A folder an attnviz before the word hash wrote (list version 2, FNV-1a of the
    bytes): what it listed and the new run does not write is removed; the user's own
    file, listed with a wrong hash, stays."""
    from test_bad_inputs import fnv1a64
    out = os.path.join(tmp, "o")
    os.makedirs(out)
    files = {"trace.json": b'{"earlier": true}\n', "grid.encoder.self.png": b"earlier grid"}
    listed = ["attnviz-files 2"] + [f"{len(d)} {fnv1a64(d):016x} {n}" for n, d in files.items()]
    open(os.path.join(out, "notes.txt"), "w").write("mine")
    listed.append(f"4 {fnv1a64(b'other'):016x} notes.txt")
    for n, d in files.items():
        open(os.path.join(out, n), "wb").write(d)
    open(os.path.join(out, ".attnviz-files"), "w").write("\n".join(listed) + "\n")
    run_ok("run", "--force", "--no-pictures", "--trace", "none", "--out", out, TIRED)
    assert not os.path.exists(os.path.join(out, "trace.json"))
    assert not os.path.exists(os.path.join(out, "grid.encoder.self.png"))
    assert open(os.path.join(out, "notes.txt")).read() == "mine"
