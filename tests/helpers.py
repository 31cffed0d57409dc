"""Shared helpers for the Python tests: run the attnviz binary, read its outputs."""
import json, os, struct, subprocess, zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ATTNVIZ = os.environ.get("ATTNVIZ", os.path.join(ROOT, "build", "attnviz"))

class Skipped(Exception):
    """Raised by skip(): the test runner prints "skip" and the reason, and counts it apart."""


def skip(why):
    raise Skipped(why)


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

def png_text(path):
    """The tEXt/iTXt/zTXt chunks of a PNG, decoded (the title is one of them)."""
    import struct, zlib
    data, out, i = open(path, "rb").read(), [], 8
    while i < len(data):
        n, kind = struct.unpack(">I4s", data[i:i + 8])
        body = data[i + 8:i + 8 + n]
        if kind in (b"tEXt", b"iTXt"):
            out.append(body.decode("utf-8", "replace"))
        elif kind == b"zTXt":
            key, _, rest = body.partition(b"\0")
            out.append(key.decode() + zlib.decompress(rest[1:]).decode("utf-8", "replace"))
        i += 12 + n
    return "\n".join(out)


def png_content(data):
    """A PNG's content, compared instead of its bytes: every chunk but the image
    data as written, then the image data inflated (the filtered rows).  ISA-L's
    level-1 deflate may pick another of two equally long matches (seen about once
    in 700 pictures drawn on two threads: a distance 2 shorter, the same pixels),
    so two PNGs of the same picture can differ in the compressed bytes alone.
    An output folder's list (.attnviz-files: "SIZE HASH NAME" lines, the hash of
    each file's bytes) is reduced to its names for the same reason.  Anything
    else is returned as it is."""
    if data.startswith((b"attnviz-files 2\n", b"attnviz-files 3\n")):
        return b"\n".join(l.split(b" ", 2)[-1] for l in data.splitlines()) + b"\n"
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return data
    out, idat, i = [data[:8]], [], 8
    while i + 8 <= len(data):
        n, kind = struct.unpack(">I", data[i:i + 4])[0], data[i + 4:i + 8]
        if kind == b"IDAT":
            idat.append(data[i + 8:i + 8 + n])
        else:
            out.append(data[i:i + 12 + n])
        i += 12 + n
    assert i == len(data), "PNG with a truncated chunk"
    return b"".join(out) + b"IDAT-inflated" + zlib.decompress(b"".join(idat))


def files_under(d):
    out = []
    for root, _, names in os.walk(d):
        out += [os.path.relpath(os.path.join(root, n), d) for n in names]
    return sorted(out)


# ---------------------------------------------------------------- safetensors
# A second implementation of the format (8-byte little-endian header length,
# JSON header, raw little-endian data), independent of the C loader.

def read_safetensors(path):
    import numpy as np
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    meta = header.pop("__metadata__")
    tensors = {}
    for name, info in header.items():
        assert info["dtype"] == "F32", name
        b, e = info["data_offsets"]
        arr = np.frombuffer(data[b:e], dtype="<f4").reshape(info["shape"])
        tensors[name] = arr.copy()
    return meta, tensors


def write_safetensors(path, meta, tensors, order=None):
    import numpy as np
    names = order or sorted(tensors)  # a different order than the C writer's
    header = {"__metadata__": meta}
    chunks, off = [], 0
    for name in names:
        raw = np.ascontiguousarray(tensors[name], dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape),
                        "data_offsets": [off, off + len(raw)]}
        chunks.append(raw)
        off += len(raw)
    h = json.dumps(header).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(chunks))


