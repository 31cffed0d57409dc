"""attnviz.py — attention weights from a notebook drawn by `attnviz view`.

One file, NumPy only (PyTorch optional).  `make install` puts it in
PREFIX/share/attnviz/python/; add that folder to sys.path, or copy the file
beside your notebook.

    import attnviz
    _, w = mha(x, x, x, need_weights=True, average_attn_weights=False)
    attnviz.show(w, ["the", "cat", "sat"])            # the page, inline in Jupyter

show() accepts
  - a NumPy array or a torch tensor: (layers, heads, queries, keys),
    (heads, queries, keys) or (queries, keys) — maps layer.0, layer.1, …;
  - the tuple a Hugging Face model returns with output_attentions=True: one
    (batch, heads, queries, keys) tensor per layer (batch item `batch`);
  - a Hugging Face output object (or dict) with encoder_attentions,
    decoder_attentions, cross_attentions: maps encoder.L.self,
    decoder.L.masked_self, decoder.L.cross (queries= gives the decoder's tokens);
  - a dict {map id: (batch, heads, queries, keys), (heads, queries, keys) or
    (queries, keys)}; ids such as "encoder.0.self", "decoder.0.masked_self",
    "decoder.0.cross" are drawn as that kind, and a tuple under "NAME" gives
    maps NAME.0, NAME.1, ….
It writes the weights as float32 safetensors, runs `attnviz view` (the
program: $ATTNVIZ, else `attnviz` on PATH), and returns a View whose
_repr_html_ is an iframe of the page it wrote.  Errors of attnviz (bad shapes,
rows that do not sum to 1) are raised as AttnvizError with its one line.
"""
import json
import os
import shutil
import struct
import subprocess

import numpy as np

__all__ = ["show", "save_safetensors", "View", "AttnvizError"]


class AttnvizError(RuntimeError):
    """attnviz refused the input: its one-line message."""


def _array(x, batch=None):
    """A float32 NumPy array of x (torch tensors detached and moved to the CPU)."""
    if hasattr(x, "detach"):
        x = x.detach().float().cpu().numpy()
    a = np.asarray(x, dtype=np.float32)
    return a[batch] if batch is not None else a


# A Hugging Face encoder-decoder's outputs, and the maps they become.
_HF_NAMES = {"encoder_attentions": "encoder.{}.self", "decoder_attentions": "decoder.{}.masked_self",
             "cross_attentions": "decoder.{}.cross"}


def _hf_outputs(out):
    """{map id pattern: tuple} of a Hugging Face output object (or a dict with those keys), or None."""
    get = out.get if isinstance(out, dict) else lambda k: getattr(out, k, None)
    found = {pat: get(k) for k, pat in _HF_NAMES.items() if get(k) is not None}
    if not found and not isinstance(out, (dict, tuple, list)) and getattr(out, "attentions", None) is not None:
        found = {"layer.{}": out.attentions}
    return found or None


def _maps(attentions, batch):
    """{map id: float32 array} from any accepted form."""
    hf = _hf_outputs(attentions) if not hasattr(attentions, "shape") else None
    if hf:
        return {pat.format(l): _array(t, batch if np.ndim(_array(t)) == 4 else None)
                for pat, layers in hf.items() for l, t in enumerate(layers)}
    if isinstance(attentions, dict):
        out = {}
        for name, v in attentions.items():
            if isinstance(v, (tuple, list)):
                for l, t in enumerate(v):
                    out[f"{name}.{l}"] = _array(t, batch if np.ndim(_array(t)) == 4 else None)
            else:   # a 4-D value is (batch, heads, queries, keys): one model's output for one map
                a = _array(v)
                out[str(name)] = a[batch] if a.ndim == 4 else a
        return out
    if isinstance(attentions, (tuple, list)):   # a Hugging Face model's attentions
        return {f"layer.{l}": _array(t, batch if np.ndim(_array(t)) == 4 else None) for l, t in enumerate(attentions)}
    a = _array(attentions)
    if a.ndim == 4:
        return {f"layer.{l}": a[l] for l in range(a.shape[0])}
    return {"layer.0": a}


def save_safetensors(path, arrays):
    """Writes {name: array} as float32 safetensors (the format's header, then the data)."""
    header, chunks, off = {}, [], 0
    for name, a in arrays.items():
        raw = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        chunks.append(raw)
        off += len(raw)
    h = json.dumps(header).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(chunks))


class View:
    """What show() wrote: .dir, .page (index.html), .trace (trace.json)."""

    def __init__(self, out, stdout):
        self.dir = out
        self.page = os.path.join(out, "index.html")
        self.trace = os.path.join(out, "trace.json")
        self.stdout = stdout

    def _repr_html_(self):
        src = os.path.relpath(self.page).replace(os.sep, "/")
        return (f'<iframe src="{src}" width="100%" height="720" style="border:1px solid #ccc"></iframe>'
                f'<p><a href="{src}" target="_blank">{src}</a></p>')

    def __repr__(self):
        return f"attnviz.View({self.page!r})"


def _program():
    exe = os.environ.get("ATTNVIZ") or shutil.which("attnviz")
    if not exe:
        raise AttnvizError("the attnviz program was not found: install it (make install) or set $ATTNVIZ")
    return exe


def _tokens_file(path, tokens):
    with open(path, "w", encoding="utf-8") as f:
        json.dump([str(t) for t in tokens], f, ensure_ascii=False)
    return path


def show(attentions, tokens, keys=None, out=None, queries=None, batch=0, causal=False, scores=False):
    """Draws attention weights with `attnviz view`; returns a View (inline page in Jupyter).

    tokens: the query tokens (a list of strings, or one space-separated string);
    keys: the keys' tokens when they differ; queries: {map id: tokens} for maps
    with their own queries (a decoder's); out: the folder (default attnviz_view/,
    written again by each call); causal, scores: attnviz view's --causal, --scores.
    """
    out = out or "attnviz_view"
    split = lambda t: t.split() if isinstance(t, str) else list(t)
    maps = _maps(attentions, batch)
    work = out.rstrip("/\\") + ".input"
    os.makedirs(work, exist_ok=True)
    weights = os.path.join(work, "attention.safetensors")
    save_safetensors(weights, maps)
    cmd = [_program(), "view", weights, "--tokens", _tokens_file(os.path.join(work, "tokens.json"), split(tokens)),
           "--out", out]
    if keys is not None:
        cmd += ["--keys", _tokens_file(os.path.join(work, "keys.json"), split(keys))]
    for i, (name, toks) in enumerate((queries or {}).items()):
        cmd += ["--queries-of", f"{name}=" + _tokens_file(os.path.join(work, f"queries-{i}.json"), split(toks))]
    cmd += ["--causal"] * bool(causal) + ["--scores"] * bool(scores)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise AttnvizError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"attnviz exited {r.returncode}")
    return View(out, r.stdout)


if __name__ == "__main__":   # a check without a notebook: python3 attnviz.py
    rng = np.random.default_rng(0)
    w = rng.random((2, 3, 4, 4)).astype(np.float32)
    v = show(w / w.sum(-1, keepdims=True), "the cat sat down", out="attnviz_view")
    print(v.stdout, end="")
    print(v._repr_html_())
