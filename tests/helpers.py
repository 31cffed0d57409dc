"""Shared helpers for the Python tests: run the attnviz binary, read its outputs."""
import json, os, subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ATTNVIZ = os.environ.get("ATTNVIZ", os.path.join(ROOT, "build", "attnviz"))

def run(*args, input=None, timeout=120, cwd=None):
    """Runs attnviz with args; returns CompletedProcess (text, never raises on exit code)."""
    return subprocess.run([ATTNVIZ, *map(str, args)], input=input, capture_output=True,
                          text=True, timeout=timeout, cwd=cwd)

def run_ok(*args, **kw):
    r = run(*args, **kw)
    assert r.returncode == 0, f"attnviz {' '.join(map(str,args))} exited {r.returncode}\nstderr: {r.stderr}"
    return r

def run_err(*args, **kw):
    """Runs a command that must fail: non-zero exit, one short line on stderr, no crash."""
    r = run(*args, **kw)
    assert r.returncode not in (0,), f"expected failure: attnviz {args}\nstdout: {r.stdout[:500]}"
    assert r.returncode > 0, f"crashed with signal {-r.returncode}: attnviz {args}"
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) >= 1, f"no error message for attnviz {args}"
    assert "error" in lines[-1].lower() or "attnviz" in lines[-1], f"unclear error: {r.stderr}"
    return r

def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)

def schema():
    return load_json(os.path.join(ROOT, "docs", "trace.schema.json"))

def validate_trace(trace):
    """Validates a trace dict against docs/trace.schema.json (jsonschema package)."""
    import jsonschema
    jsonschema.validate(trace, schema())

def files_under(d):
    out = []
    for root, _, names in os.walk(d):
        out += [os.path.relpath(os.path.join(root, n), d) for n in names]
    return sorted(out)
