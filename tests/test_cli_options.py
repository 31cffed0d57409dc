"""Every subcommand reads its options the same way (cli/common.c): --help,
--name VALUE and --name=VALUE, ranges checked, one message form for mistakes."""
from helpers import run, run_ok

COMMANDS = ["run", "steps", "demo", "corpus", "train", "eval", "info", "model-init", "forward", "tokenize", "generate", "compare", "worksheet", "view"]


def one_error_line(r):
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("attnviz: error: "), r.stderr
    return lines[0]


def test_every_command_has_help():
    for cmd in COMMANDS:
        r = run_ok(cmd, "--help")
        assert "usage: attnviz" in r.stdout, (cmd, r.stdout[:200])
        assert run_ok(cmd, "-h").stdout == r.stdout


def test_every_command_names_an_unknown_option_the_same_way():
    for cmd in COMMANDS:
        r = run(cmd, "--frobnicate")
        assert r.returncode == 2, (cmd, r.returncode, r.stderr)
        line = one_error_line(r)
        assert f"unknown option '--frobnicate' for {cmd} (see attnviz {cmd} --help)" in line, (cmd, line)


def test_a_missing_value_is_named():
    for cmd, opt in [("run", "--model"), ("steps", "--q"), ("demo", "--out"), ("corpus", "--out"),
                     ("train", "--corpus"), ("eval", "--model"), ("info", "--model"), ("model-init", "--config"),
                     ("forward", "--model"), ("train", "--steps"), ("eval", "--limit"), ("view", "--tokens")]:
        r = run(cmd, opt)
        assert r.returncode == 2, (cmd, opt, r.stderr)
        assert f"{opt} needs a value (see attnviz {cmd} --help)" in one_error_line(r), (cmd, opt, r.stderr)


def test_numbers_are_range_checked_with_the_range_in_the_message():
    for cmd, opt, bad, rng in [("train", "--lr", "99", "1e-08..10"), ("train", "--steps", "5x", "1..100000000"),
                               ("train", "--dropout", "-0.5", "0..1"), ("corpus", "--heldout-share", "0", "1..900"),
                               ("eval", "--limit", "0", "1..2147483647"), ("forward", "--bench", "x", "1..1000000")]:
        for form in ([opt, bad], [f"{opt}={bad}"]):
            r = run(cmd, *form)
            assert r.returncode == 2, (cmd, form, r.stderr)
            line = one_error_line(r)
            assert f"{opt} expects" in line and rng in line and f"'{bad}'" in line, (cmd, form, line)


def test_name_equals_value_is_accepted(tmp):
    out = f"{tmp}/c"
    r = run_ok("corpus", "--train=200", "--heldout=20", f"--out={out}", "--seed=3")
    assert "corpus: 200 train + 20 held-out pairs" in r.stdout, r.stdout
