"""The compact binary trace (src/trace/trace_bin.c, docs/trace-format.md "The binary
trace"), read here from its documented layout alone with NumPy, against the JSON trace
of the same forward pass: every member, every matrix and mask to the bit (JSON's
the shortest text that round-trips float32; its null is −∞)."""
import json, os, struct
import numpy as np
from helpers import run_ok, run_err, load_json
import hf_fixtures as hf
import llama_ref as ref

MATRICES = ("weights", "scores", "scaled", "masked", "output", "q", "q_rotated", "k", "k_rotated")


def read_bin(path):
    """(header, data start) by the documented layout; matrices as np.memmap."""
    with open(path, "rb") as f:
        magic, version, reserved, at, n = struct.unpack("<8sIIQQ", f.read(32))
        assert magic == b"ATVZTRCB" and version == 3 and reserved == 0, (magic, version, reserved)
        assert f.read(32) == b"\0" * 32
        assert at % 64 == 0 and at >= 64, at
        f.seek(at)
        header = json.loads(f.read(n))
        assert f.read() == b"", "bytes after the header"
    return header, 64


def view(path, start, slot, dtype="<f4"):
    assert slot["offset"] % 64 == 0, slot
    if slot.get("dtype") == "f16":      # half precision, little-endian
        dtype = "<f2"
    if slot.get("layout") == "lower":   # row i's first i + 1 cells, the rest +0.0
        n = slot["shape"][0]
        assert slot["shape"] == [n, n] and dtype in ("<f4", "<f2"), slot
        full = np.zeros((n, n), np.float32 if dtype == "<f4" else np.float16)
        full[np.tril_indices(n)] = np.memmap(path, dtype=dtype, mode="r", offset=start + slot["offset"],
                                             shape=(n * (n + 1) // 2,))
        return full
    return np.memmap(path, dtype=dtype, mode="r", offset=start + slot["offset"], shape=tuple(slot["shape"]))


def as_float(rows):
    return np.array([[-np.inf if v is None else v for v in r] for r in rows], dtype=np.float32)


def check_same(js, path):
    b, start = read_bin(path)
    assert b["format"] == "attnviz-trace-bin" and b["version"] == 3
    for k in ("model", "source_tokens", "target_tokens", "images"):
        assert b[k] == js[k], k
    assert len(b["maps"]) == len(js["maps"]) > 0
    n = 0
    for mb, mj in zip(b["maps"], js["maps"]):
        for k in mj:
            if k not in ("mask", "heads"):
                assert mb[k] == mj[k], (mj["id"], k)
        if mj["mask"] is None:
            assert mb["mask"] is None, mj["id"]
        else:
            assert np.array_equal(view(path, start, mb["mask"], "u1"), np.array(mj["mask"], np.uint8))
        for hb, hj in zip(mb["heads"], mj["heads"]):
            assert set(hb) == set(hj), (set(hb), set(hj))
            for k in MATRICES:
                if k in hj:
                    # a causal map's weights go as their lower triangle, every other matrix whole
                    assert (hb[k].get("layout") == "lower") == (k == "weights" and mj["kind"] == "masked_self"
                                                                and len(mj["queries"]) > 1), \
                        (mj["id"], k, hb[k])
                    got, want = view(path, start, hb[k]), as_float(hj[k])
                    assert got.tobytes() == want.tobytes(), f"{mj['id']} head {hj['head']} {k} differs"
                    n += 1
    return n


def test_binary_trace_holds_the_json_trace_bit_for_bit(tmp):
    d = os.path.join(tmp, "gpt2")
    hf.write_gpt2_dir(d, C=32, H=4, L=2, P=64)
    ids = "464 3290 318 257 1332 13 632 11"
    for steps in ([], ["--steps"]):
        j, b = os.path.join(tmp, "t.json"), os.path.join(tmp, "t.bin")
        run_ok("forward", "--model", d, "--src", ids, "--out", j, *steps)
        run_ok("forward", "--model", d, "--src", ids, "--out", b, *steps)
        n = check_same(load_json(j), b)
        assert n == (2 * 4 * (5 if steps else 1)), n
    # BERT sees both ways: its weights go whole; one token: a 1 x 1 map, whole
    d = os.path.join(tmp, "bert")
    hf.write_bert_dir(d)
    for ids in ("101 7592 2088 102", "101"):
        j, b = os.path.join(tmp, "b.json"), os.path.join(tmp, "b.bin")
        run_ok("forward", "--model", d, "--src", ids, "--out", j)
        run_ok("forward", "--model", d, "--src", ids, "--out", b)
        assert check_same(load_json(j), b) > 0
    j, b = os.path.join(tmp, "g1.json"), os.path.join(tmp, "g1.bin")
    run_ok("forward", "--model", os.path.join(tmp, "gpt2"), "--src", "464", "--out", j)
    run_ok("forward", "--model", os.path.join(tmp, "gpt2"), "--src", "464", "--out", b)
    assert check_same(load_json(j), b) == 8
    # a Llama-family folder: grouped key/value heads, RoPE matrices with --steps
    cfg = ref.shrunk("qwen2.5-0.5b", hidden_size=48, num_attention_heads=6, num_key_value_heads=2,
                     intermediate_size=80, num_hidden_layers=2, vocab_size=300, max_position_embeddings=64)
    d = os.path.join(tmp, "qwen")
    ref.write_hf_dir(d, cfg, ref.hf_weights(cfg), dtype="BF16")
    ref.write_tiny_tokenizer(d, [f"w{i}" for i in range(3, 300)])
    j, b = os.path.join(tmp, "q.json"), os.path.join(tmp, "q.bin")
    run_ok("forward", "--model", d, "--src", "5 17 250 3 99 42", "--out", j, "--steps")
    run_ok("forward", "--model", d, "--src", "5 17 250 3 99 42", "--out", b, "--steps")
    assert check_same(load_json(j), b) == 2 * 6 * 9
    # nothing half-written where the folder is missing
    r = run_err("forward", "--model", d, "--src", "5 17", "--out", os.path.join(tmp, "no", "x.bin"))
    assert "x.bin" in r.stderr and not os.path.exists(os.path.join(tmp, "no"))


def test_run_writes_trace_bin_past_16_mb_of_json_and_halves_it_with_f16(tmp):
    """run, the maps kept whole (--long-from 0; a long text streams to trace.bin anyway:
    test_long_text.py): trace.json up to about 16 MB of JSON, trace.bin past it (said in one line,
    with how to read it); --trace-format bin on a short text; --trace-precision f16
    writes the weights as NumPy's float16 of the float32 weights, bit for bit (so each
    within 2^-12 of it), the rest float32."""
    d = os.path.join(tmp, "gpt2")
    hf.write_gpt2_dir(d, C=32, H=4, L=2, P=1024)
    long = " ".join(["the cat sat on the mat because it was tired ."] * 60)   # 660 tokens
    out = os.path.join(tmp, "long")
    r = run_ok("run", "--model", d, "--no-pictures", "--long-from", "0", "--out", out, long)   # kept whole
    assert "trace.bin, not trace.json" in r.stdout and "docs/trace-format.md" in r.stdout, r.stdout
    assert "trace.bin and index.html" in r.stdout
    assert sorted(os.listdir(out)) == [".attnviz-files", "index.html", "trace.bin"]
    assert 'href="trace.bin"' in open(os.path.join(out, "index.html"), encoding="utf-8").read()
    b, start = read_bin(os.path.join(out, "trace.bin"))
    assert len(b["maps"]) == 2 and b["maps"][0]["heads"][0]["weights"]["shape"] == [660, 660]
    short = "the animal didn't cross the street because it was too tired ."
    j, f32, f16 = (os.path.join(tmp, x) for x in ("j", "b32", "b16"))
    run_ok("run", "--model", d, "--no-pictures", "--out", j, short)
    assert os.path.exists(os.path.join(j, "trace.json")) and not os.path.exists(os.path.join(j, "trace.bin"))
    run_ok("run", "--model", d, "--no-pictures", "--trace-format", "bin", "--out", f32, short)
    run_ok("run", "--model", d, "--no-pictures", "--trace-precision", "f16", "--out", f16, short)
    js = load_json(os.path.join(j, "trace.json"))
    assert check_same(js, os.path.join(f32, "trace.bin")) == 8
    h, s16 = read_bin(os.path.join(f16, "trace.bin"))
    worst = 0.0
    for mh, mj in zip(h["maps"], js["maps"]):
        for hh, hj in zip(mh["heads"], mj["heads"]):
            assert hh["weights"]["dtype"] == "f16"
            got = view(os.path.join(f16, "trace.bin"), s16, hh["weights"])
            want = as_float(hj["weights"])
            assert got.tobytes() == want.astype(np.float16).tobytes(), mj["id"]
            worst = max(worst, float(np.abs(got.astype(np.float32) - want).max()))
    assert 0 < worst <= 2.0 ** -12, worst
    assert os.path.getsize(os.path.join(f16, "trace.bin")) < os.path.getsize(os.path.join(f32, "trace.bin"))
    for bad, said in ((["--trace-format", "json", "--trace-precision", "f16"], "f16"),
                      (["--trace-format", "xml"], "auto, json or bin"), (["--trace-precision", "f8"], "f32 or f16")):
        r = run_err("run", "--model", d, *bad, "--out", os.path.join(tmp, "bad"), short)
        assert said in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert not os.path.exists(os.path.join(tmp, "bad"))
