"""How every bench times and what it prints (bench_hf, bench_pictures, bench_generate,
bench_train), so that a figure holds up:

- each side is timed in processes of its own: attnviz as N fresh processes of the command
  a user types, PyTorch as one /usr/bin/python3 child that loads its weights, warms up and
  times N calls in its own warm process (it prints best and median);
- one side's runs of a configuration all run before the other side's, never alternating,
  so neither side's process shares the two cores with the other's;
- each thread count is a configuration of its own (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS,
  MKL_NUM_THREADS = N for both sides, and torch.set_num_threads(N)), and each is printed;
- the date, the machine, the 1-minute load average (/proc/loadavg) before and after and the
  exact commands are printed, and the cores that other processes used while the bench ran
  (the machine's busy CPU time in /proc/stat, steal included, less the bench's own and its
  children's); the load after counts the bench's own processes too, so the load judged is
  the larger of the load before and the others' cores.  When it is above LOAD_LIMIT the
  figures are printed but no verdict: a busy machine slows the two sides unequally.
- each bench first waits (at most 3 minutes) for the 1-minute load to fall under 0.6, so
  one started right after another does not read the one before as load;
- a quiet run (a verdict given) records its figures in docs/bench/NAME.json (date, commit,
  machine, loads, the commands and every figure, Session.record); the docs' tables quote
  that file and tests/test_bench_docs.py fails when they differ.  A noisy run records
  nothing.
"""
import json, os, platform, shlex, statistics, subprocess, sys, tempfile, time

TORCH_PY = "/usr/bin/python3"
LOAD_LIMIT = 1.0


def load1():
    """The 1-minute load average."""
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def cpu_snapshot():
    """(wall seconds, the machine's busy CPU seconds, this process's and its waited-for
    children's CPU seconds)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    busy = sum(v[:8]) - v[3] - v[4]   # user nice system idle iowait irq softirq steal: all but idle and iowait
    t = os.times()
    return time.monotonic(), busy / os.sysconf("SC_CLK_TCK"), t.user + t.system + t.children_user + t.children_system


def others_cores(start, end):
    """Cores other processes kept busy on average between two cpu_snapshot()s."""
    wall = end[0] - start[0]
    return max(0.0, ((end[1] - start[1]) - (end[2] - start[2])) / wall) if wall > 0 else 0.0


def machine():
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{model}, {os.cpu_count()} processors, Python {platform.python_version()}"


def thread_env(n, base=None):
    """The environment of a process at n threads (both sides get the same variables)."""
    env = dict(os.environ if base is None else base)
    env["OMP_NUM_THREADS"] = env["OPENBLAS_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(n)
    return env


THREAD_KEYS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def shell(argv, env=None, keys=THREAD_KEYS):
    """argv as a user would type it, with the thread variables that differ from the shell's."""
    if env is None:
        return " ".join(shlex.quote(a) for a in argv)
    unset = [k for k in keys if k not in env]
    pre = ["env"] + [f"-u {k}" for k in unset] if unset else []
    pre += [f"{k}={env[k]}" for k in keys if k in env]
    return " ".join(pre + [shlex.quote(a) for a in argv])


def short(x, n=160):
    return x if len(x) <= n else x[:n - 1] + "…"


SETTLE_LOAD, SETTLE_SECONDS = 0.6, 180


def settle():
    """Waits (at most SETTLE_SECONDS) for the 1-minute load to fall under SETTLE_LOAD: it
    decays over minutes, so a bench started right after another (make bench runs them one
    after the other) would otherwise read the one before as load and give no verdict."""
    t0 = time.monotonic()
    while load1() > SETTLE_LOAD and time.monotonic() - t0 < SETTLE_SECONDS:
        time.sleep(5)
    if time.monotonic() - t0 >= 5:
        print(f"(waited {time.monotonic() - t0:.0f} s for the load to settle under {SETTLE_LOAD})")


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORDS = os.path.join(ROOT, "docs", "bench")


def commit():
    """The checkout's commit, "+changes" when src/ or tests/ differ from it; "?" without git."""
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "src", "tests", "Makefile"],
                               capture_output=True, text=True).stdout.strip()
        return head + ("+changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "?"


class Session:
    """One bench's header, its commands, its verdict and, when quiet, its record."""

    def __init__(self, title, name=None):
        settle()
        self.commit = commit()   # the tree the binary was built from: read at the start
        self.load_before = load1()
        self.cpu_start = cpu_snapshot()
        self.name = name
        self.date = time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())
        print(f"== {title}")
        print(f"date: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}; machine: {machine()}")
        print(f"load average (1 minute) before: {self.load_before:.2f}")
        self.checks = []
        self.figures = {}
        self.commands = {}

    def check(self, cond, what):
        self.checks.append((cond, what))

    def record(self, key, seconds=None, command=None, **more):
        """A figure for the record: seconds (a list of runs: best and median kept, or one
        value), the command that gave it, other members as they are."""
        f = dict(more)
        if isinstance(seconds, (list, tuple)):
            f.update(best=round(min(seconds), 4), median=round(statistics.median(seconds), 4), runs=len(seconds))
        elif seconds is not None:
            f["value"] = round(seconds, 4)
        if command:
            f["command"] = command.replace(ROOT + "/", "")
        self.figures[key] = f

    def save(self, load, others):
        if not self.name:
            return
        os.makedirs(RECORDS, exist_ok=True)
        path = os.path.join(RECORDS, f"{self.name}.json")
        rec = {"bench": self.name, "date": self.date, "commit": self.commit, "machine": machine(),
               "load_before": round(self.load_before, 2), "others_cores": round(others, 2),
               "figures": self.figures}
        with open(path + ".tmp", "w") as f:
            json.dump(rec, f, indent=1, ensure_ascii=False)
            f.write("\n")
        os.replace(path + ".tmp", path)
        print(f"recorded in {os.path.relpath(path, ROOT)} (the docs quote it; tests/test_bench_docs.py checks them)")

    def finish(self):
        """Prints the load after and the verdict; the exit status (0 when noisy or met)."""
        after = load1()
        others = others_cores(self.cpu_start, cpu_snapshot())
        print(f"load average (1 minute) after: {after:.2f} (the bench's own processes included)")
        print(f"cores other processes kept busy while the bench ran: {others:.2f}")
        load = max(self.load_before, others)
        if load > LOAD_LIMIT:
            print(f"load {load:.2f}: figures are noisy, no verdict")
            for _, what in self.checks:
                print(f"  (not judged) {what}")
            if self.name:
                print(f"nothing recorded (docs/bench/{self.name}.json keeps the last quiet run)")
            return 0
        ok = True
        for cond, what in self.checks:
            print(f"  {'ok  ' if cond else 'MISS'} {what}")
            ok &= cond
        self.save(load, others)
        return 0 if ok else 1


def time_processes(argv, n, env=None, warm=1, before=None, stdin=None):
    """Wall seconds of n fresh processes of argv (warm untimed ones first, so the files are
    in the page cache); before(), when given, runs untimed before each (e.g. to remove an
    output folder).  Returns (seconds, the largest peak RSS in bytes (wait4), last stdout)."""
    walls, peak, out = [], 0, ""
    for k in range(warm + n):
        if before:
            before()
        with tempfile.TemporaryFile("w+") as o, tempfile.TemporaryFile("w+") as e, \
                tempfile.TemporaryFile("w+") as i:
            if stdin is not None:
                i.write(stdin)
                i.seek(0)
            t = time.perf_counter()
            p = subprocess.Popen(argv, env=env, stdin=i, stdout=o, stderr=e)
            _, status, ru = os.wait4(p.pid, 0)
            w = time.perf_counter() - t
            p.returncode = os.waitstatus_to_exitcode(status)
            o.seek(0)
            e.seek(0)
            if p.returncode != 0:
                sys.exit(f"bench: {shell(argv, env)} failed ({p.returncode}):\n{e.read().strip()}")
            if k >= warm:
                walls.append(w)
                peak = max(peak, ru.ru_maxrss * 1024)
                out = o.read()
    return walls, peak, out


def stats(xs):
    return min(xs), statistics.median(xs)


def fmt(xs, unit="s"):
    """'best 0.123 s, median 0.130 s (5 runs)'."""
    b, m = stats(xs)
    return f"best {b:.3f} {unit}, median {m:.3f} {unit} ({len(xs)} run{'s' * (len(xs) != 1)})"


def torch_child(argv, env):
    """Runs a PyTorch worker (/usr/bin/python3 ...) that prints a line 'torch_bench <seconds>...'
    of its timed calls; returns the seconds."""
    r = subprocess.run(argv, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bench: {shell(argv, env)} failed:\n{r.stderr.strip()}")
    line = [l for l in r.stdout.splitlines() if l.startswith("torch_bench ")][-1]
    return [float(x) for x in line.split()[1:]]


def torch_report(seconds):
    """The worker's last line: every timed call's seconds."""
    print("torch_bench " + " ".join(f"{s:.6f}" for s in seconds), flush=True)


def label(n):
    return f"{n} thread{'s' * (n != 1)}"


def torch_configs(threads):
    """PyTorch's configurations, [(label, torch.set_num_threads count, environment)]: each
    count with every pool at it, and, when 1 is among them on a machine of several
    processors, torch at 1 with OpenBLAS at its default (its own threads over every
    processor: Debian's torch calls the pthreads OpenBLAS), which was PyTorch's fastest on
    the 2-vCPU machine; the verdict takes PyTorch's fastest of them all."""
    out = [(label(n), n, thread_env(n)) for n in threads]
    if 1 in threads and (os.cpu_count() or 1) > 1:
        env = thread_env(1)
        del env["OPENBLAS_NUM_THREADS"]
        out.append(("1 thread, OpenBLAS default", 1, env))
    return out


def faster(runs):
    """The key of runs ({label: seconds}) with the smallest median."""
    return min(runs, key=lambda k: statistics.median(runs[k]))
