"""The speed figures in the docs are the last quiet bench's (issue 41): `make bench-hf`,
`make bench-pictures`, `make bench-train`, `make bench-generate` and `make bench-long` record a run that got
a verdict in docs/bench/NAME.json (tests/bench_common.py); docs/own-model.md and its
Vietnamese twin must quote each recorded figure as it is (seconds to the millisecond,
ratios to the hundredth), with the record's date and commit. A figure edited by hand, or
a bench re-run without the docs following, fails here."""
import json, os
from helpers import ROOT, skip

RECORDS = os.path.join(ROOT, "docs", "bench")
DOCS = {"en": os.path.join(ROOT, "docs", "own-model.md"), "vi": os.path.join(ROOT, "docs", "own-model.vi.md")}


def record(name):
    path = os.path.join(RECORDS, f"{name}.json")
    if not os.path.exists(path):
        skip(f"docs/bench/{name}.json is absent (no quiet `make bench` run recorded)")
    with open(path) as f:
        return json.load(f)


def fmt(x, digits, lang):
    s = f"{x:.{digits}f}"
    return s.replace(".", ",") if lang == "vi" else s


def quoted(name, figures):
    """{lang: [the texts the docs must hold]} for one record: its date and commit, and
    each figure as figures(F, lang) formats it."""
    r = record(name)
    return {lang: [r["date"], r["commit"]] + figures(r["figures"], lang) for lang in DOCS}


def hf_figures(F, lang):
    out = []
    for shape in ("GPT-2-small", "SmolLM2-135M"):
        out.append(fmt(F[f"{shape} 64 PyTorch forward"]["median"], 3, lang) + " s")
        for what in ("forward --src", "run --no-pictures --trace weights", "run"):
            f = F[f"{shape} 64 {what}"]
            out += [fmt(f["median"], 3, lang) + " s", fmt(f["ratio"], 2, lang) + "×"]
        if f"{shape} 64 run / forward --src" in F:
            out.append(fmt(F[f"{shape} 64 run / forward --src"]["ratio"], 2, lang) + "×")
        for what, key in ((f"{shape} 64 run / forward --src, in turn", "ratio"),
                          (f"{shape} 64 bench / PyTorch by itself", "value")):
            if what in F:
                out.append(fmt(F[what][key], 2, lang) + "×")
        if f"{shape} 512 forward --src" in F:
            out.append(fmt(F[f"{shape} 512 PyTorch forward"]["median"], 3, lang) + " s")
            f = F[f"{shape} 512 forward --src"]
            out += [fmt(f["median"], 3, lang) + " s", fmt(f["ratio"], 2, lang) + "×"]
    return out


def pictures_figures(F, lang):
    return [fmt(F["attnviz a picture"]["median"] * 1e3, 1, lang) + " ms",
            fmt(F["PyTorch + matplotlib a heatmap"]["median"] * 1e3, 1, lang) + " ms",
            fmt(F["ratio"]["value"], 0, lang) + "×"]


def train_figures(F, lang):
    out = []
    for shape in ("small", "large"):
        for n in ("1 thread", "2 threads"):
            f = F[f"train {shape} {n} tokens/s"]
            out += [str(f["attnviz"]), str(f["pytorch"]), fmt(f["ratio"], 2, lang) + "×"]
    return out


def generate_figures(F, lang):
    out = []
    for n in ("1 thread", "2 threads"):
        f = F[f"tokens/s {n}"]
        out += [str(f["attnviz"]), str(f["pytorch"]), fmt(f["ratio"], 2, lang) + "×"]
    return out


def long_figures(F, lang):
    out = []
    for name, T in (("SmolLM2-135M", 2000), ("GPT-2-small", 400)):
        f = F[f"{name} {T} PyTorch forward"]
        out += [fmt(f["median"], 3, lang) + " s", fmt(f["peak_gb"], 2, lang) + " GB"]
        if f"{name} {T} PyTorch forward 2 threads" in F:
            out.append(fmt(F[f"{name} {T} PyTorch forward 2 threads"]["median"], 3, lang) + " s")
        for n in ("1 thread", "2 threads"):
            f = F[f"{name} {T} run {n}"]
            out += [fmt(f["median"], 3, lang) + " s", fmt(f["ratio"], 2, lang) + "×", fmt(f["peak_gb"], 2, lang) + " GB"]
        if f"{name} {T} page" in F:
            out.append(f"{F[f'{name} {T} page']['open_ms']} ms")
    return out


def check(name, figures):
    want = quoted(name, figures)
    for lang, path in DOCS.items():
        text = open(path, encoding="utf-8").read()
        missing = [w for w in want[lang] if w not in text]
        assert not missing, f"{os.path.relpath(path, ROOT)} does not quote docs/bench/{name}.json: {missing}"


def test_docs_quote_the_model_folders_bench():
    check("hf", hf_figures)


def test_docs_quote_the_pictures_bench():
    check("pictures", pictures_figures)


def test_docs_quote_the_training_bench():
    check("train", train_figures)


def test_docs_quote_the_generate_bench():
    check("generate", generate_figures)


def test_docs_quote_the_long_text_bench():
    check("long", long_figures)


def test_the_records_come_from_quiet_runs():
    """Every record says it got a verdict: load before and others' cores at most 1."""
    names = [f[:-5] for f in os.listdir(RECORDS) if f.endswith(".json")] if os.path.isdir(RECORDS) else []
    if not names:
        skip("docs/bench holds no record")
    for n in names:
        r = record(n)
        assert r["load_before"] <= 1.0 and r["others_cores"] <= 1.0, (n, r["load_before"], r["others_cores"])
        assert r["figures"], n
