"""The benches' rules (tests/bench_common.py, issue 41): a run whose load average is above
1 prints its figures but no verdict and exits 0; a quiet run judges and fails on a miss;
a command is printed so that a user can paste it (thread variables set or unset as the
run had them); attnviz's side is timed as fresh processes and a failing one stops the
bench with its command; PyTorch's configurations include each thread count."""
import contextlib, io, os, shlex, subprocess
import bench_common as bc


def finish_with(load, checks, others=None):
    """(exit status, printed text) of a Session whose load is `load` before and after, and
    whose other processes kept `others` cores busy (default: `load`)."""
    real, real_snap, real_settle = bc.load1, bc.cpu_snapshot, bc.settle
    bc.load1 = lambda: load
    bc.settle = lambda: None   # (settle is tested by itself below)
    ticks = iter([(0.0, 0.0, 0.0), (10.0, 10.0 * (load if others is None else others) + 7.0, 7.0)])
    bc.cpu_snapshot = lambda: next(ticks)
    try:
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            ses = bc.Session("test")
            for cond, what in checks:
                ses.check(cond, what)
            status = ses.finish()
    finally:
        bc.load1, bc.cpu_snapshot, bc.settle = real, real_snap, real_settle
    return status, text.getvalue()


def test_a_bench_waits_for_the_load_to_settle():
    """settle() reads the load until it is under SETTLE_LOAD (here the fourth reading),
    sleeping between readings, and says how long it waited; it gives up after
    SETTLE_SECONDS however busy the machine stays."""
    real_load, real_sleep, real_clock = bc.load1, bc.time.sleep, bc.time.monotonic
    clock = [0.0]
    bc.time.sleep = lambda s: clock.__setitem__(0, clock[0] + s)
    bc.time.monotonic = lambda: clock[0]
    try:
        loads = iter([1.4, 1.0, 0.7, 0.5, 0.1])
        bc.load1 = lambda: next(loads)
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            bc.settle()
        assert next(loads) == 0.1 and "waited 15 s for the load to settle under 0.6" in text.getvalue(), text.getvalue()
        clock[0] = 0.0
        bc.load1 = lambda: 3.0
        with contextlib.redirect_stdout(io.StringIO()):
            bc.settle()
        assert bc.SETTLE_SECONDS <= clock[0] < bc.SETTLE_SECONDS + 10, clock[0]
    finally:
        bc.load1, bc.time.sleep, bc.time.monotonic = real_load, real_sleep, real_clock


def test_busy_machine_gives_no_verdict():
    status, text = finish_with(2.5, [(False, "slower than PyTorch")])
    assert status == 0, text
    assert "load 2.50: figures are noisy, no verdict" in text, text
    assert "MISS" not in text and "ok  " not in text, text
    assert "load average (1 minute) before: 2.50" in text and "after: 2.50" in text, text


def test_the_bench_own_load_is_not_held_against_it():
    # the load average after counts the bench's own two threads; only others' cores are judged
    status, text = finish_with(0.3, [(True, "met")], others=0.1)
    assert status == 0 and "ok   met" in text and "busy while the bench ran: 0.10" in text, text
    status, text = finish_with(0.3, [(True, "met")], others=1.6)
    assert status == 0 and "load 1.60: figures are noisy, no verdict" in text, text


def test_others_cores_from_proc_stat():
    a = bc.cpu_snapshot()
    sum(i * i for i in range(2_000_000))   # this process's own work is not others'
    b = bc.cpu_snapshot()
    assert 0.0 <= bc.others_cores(a, b) < 2.5
    assert bc.others_cores((0, 0, 0), (2.0, 3.0, 1.0)) == 1.0


def test_quiet_machine_judges():
    status, text = finish_with(0.4, [(True, "the first limit"), (False, "the second limit")])
    assert status == 1, text
    assert "ok   the first limit" in text and "MISS the second limit" in text, text
    assert "no verdict" not in text, text
    status, text = finish_with(1.0, [(True, "met")])   # 1.0 itself is not above 1
    assert status == 0 and "ok   met" in text, text


def test_printed_command_runs_as_printed(tmp):
    env = bc.thread_env(2)
    del env["OPENBLAS_NUM_THREADS"]
    probe = os.path.join(tmp, "say.sh")
    with open(probe, "w") as f:
        f.write('#!/bin/sh\necho "$OMP_NUM_THREADS|${OPENBLAS_NUM_THREADS-unset}|$1"\n')
    os.chmod(probe, 0o755)
    line = bc.shell([probe, "it's a \"text\""], env)
    # pasted into a shell whose environment has the variable set, the run still has it unset
    r = subprocess.run(line, shell=True, capture_output=True, text=True,
                       env=dict(os.environ, OPENBLAS_NUM_THREADS="7", OMP_NUM_THREADS="5"))
    assert r.stdout.strip() == "2|unset|it's a \"text\"", (line, r.stdout, r.stderr)


def test_fresh_processes_are_timed_and_a_failure_stops_the_bench(tmp):
    marks = os.path.join(tmp, "marks")
    argv = ["/bin/sh", "-c", f"echo x >> {shlex.quote(marks)}; echo done"]
    walls, peak, out = bc.time_processes(argv, 3, warm=2)
    assert len(walls) == 3 and all(0 < w < 10 for w in walls), walls
    assert open(marks).read().count("x") == 5          # 2 untimed + 3 timed processes
    assert out.strip() == "done" and peak > 0
    try:
        bc.time_processes(["/bin/sh", "-c", "echo broken >&2; exit 3"], 1)
    except SystemExit as e:
        assert "exit 3" in str(e.code) and "broken" in str(e.code), e.code
    else:
        raise AssertionError("a failing command did not stop the bench")


def test_torch_configurations_and_summary():
    labels = [k for k, _, _ in bc.torch_configs([1, 2])]
    assert labels[:2] == ["1 thread", "2 threads"], labels
    for key, n, env in bc.torch_configs([1, 2]):
        assert env["OMP_NUM_THREADS"] == str(n)
    assert bc.fmt([0.3, 0.1, 0.2]) == "best 0.100 s, median 0.200 s (3 runs)"
    assert bc.faster({"a": [3, 1, 3], "b": [2, 2, 2]}) == "b"      # by median, not by best
