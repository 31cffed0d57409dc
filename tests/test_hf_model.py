"""GPT-2 and BERT folders (Hugging Face layout): the forward pass against independent
PyTorch references (tests/hf_fixtures.py), the loader's tolerance of real files and its
errors.  Tiny random checkpoints: 2 layers, 4 heads, d 64, the real vocabularies."""
import json, os
import numpy as np
from helpers import run, run_ok, run_err, load_json
import hf_fixtures as hf

IDS_GPT2 = [464, 5044, 1422, 470, 3272, 262, 4675, 780, 340, 373, 1165, 10032]   # "The animal didn't cross ..."
IDS_BERT = [101, 1996, 4111, 2134, 1005, 1056, 103, 1996, 2395, 2138, 2009, 2001, 2205, 5458, 1012, 102]


def forward(d, ids, tmp, steps=False):
    out, lg = os.path.join(tmp, "trace.json"), os.path.join(tmp, "logits.f32")
    args = ["forward", "--model", d, "--src", " ".join(map(str, ids)), "--out", out, "--logits", lg]
    run_ok(*args, *(["--steps"] if steps else []))
    return load_json(out), np.fromfile(lg, dtype="<f4").reshape(len(ids), -1)


def compare(trace, logits, ref_atts, ref_logits, kind, tol_w, tol_l):
    maps = trace["maps"]
    assert [m["id"] for m in maps] == [f"{'decoder' if kind == 'masked_self' else 'encoder'}.{l}.{kind}"
                                       for l in range(len(ref_atts))], [m["id"] for m in maps]
    worst = 0.0
    for l, m in enumerate(maps):
        for h, head in enumerate(m["heads"]):
            got = np.array(head["weights"], dtype=np.float64)
            diff = np.abs(got - ref_atts[l][h]).max()
            worst = max(worst, diff)
            assert diff <= tol_w, f"{m['id']} head {h}: max |Δweight| {diff:.3g} > {tol_w}\n" \
                                  f"first row got {got[1][:4]} want {ref_atts[l][h][1][:4]}"
    dl = np.abs(logits - ref_logits).max()
    assert dl <= tol_l, f"max |Δlogit| {dl:.3g} > {tol_l}; first got {logits[0][:4]} want {ref_logits[0][:4]}"
    return worst, dl


def test_gpt2_forward_matches_reference_f32_and_f16(tmp):
    for dtype in ("F32", "F16"):
        d = os.path.join(tmp, dtype)
        w = hf.write_gpt2_dir(d, dtype=dtype)
        trace, logits = forward(d, IDS_GPT2, tmp)
        atts, ref = hf.gpt2_reference(w, IDS_GPT2, dtype=dtype)
        compare(trace, logits, atts, ref, "masked_self", 1e-5, 1e-4)
        m = trace["maps"][0]
        assert m["mask"][0][1] == 0 and m["mask"][1][0] == 1, "GPT-2's mask must be causal"
        assert trace["model"]["family"] == "gpt2" and trace["model"]["dtype"] == dtype


def test_bert_forward_matches_reference_f32_and_f16(tmp):
    for dtype in ("F32", "F16"):
        d = os.path.join(tmp, dtype)
        w = hf.write_bert_dir(d, dtype=dtype)
        trace, logits = forward(d, IDS_BERT, tmp)
        atts, ref = hf.bert_reference(w, IDS_BERT, dtype=dtype)
        compare(trace, logits, atts, ref, "self", 1e-5, 1e-4)
        assert trace["model"]["family"] == "bert"


def test_bf16_and_steps(tmp):
    w = hf.write_gpt2_dir(tmp, dtype="BF16")
    trace, logits = forward(tmp, IDS_GPT2[:6], tmp, steps=True)
    atts, ref = hf.gpt2_reference(w, IDS_GPT2[:6], dtype="BF16")
    compare(trace, logits, atts, ref, "masked_self", 1e-5, 1e-4)
    head = trace["maps"][1]["heads"][2]
    assert head["masked"][0][1] is None and len(head["output"][0]) == 16, "steps are kept with --steps"
