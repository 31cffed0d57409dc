"""docs/trace.schema.json describes what attnviz writes, no more: every real
trace validates, and every member the schema defines occurs in at least one
real trace (a schema field no trace holds is documentation of nothing)."""
import os
from helpers import ROOT, run_ok, load_json, validate_trace, schema
import llama_ref, unk_corpus

TIRED = "the animal didn't cross the street because it was too tired ."


def schema_members(node, path="", out=None):
    """Every 'properties' member of the schema as a dotted path (arrays as [])."""
    out = set() if out is None else out
    if isinstance(node, dict):
        if "$ref" in node:
            name = node["$ref"].split("/")[-1]
            if (path, name) not in SEEN:
                SEEN.add((path, name))
                schema_members(schema()["$defs"][name], path, out)
        for k, v in node.get("properties", {}).items():
            p = f"{path}.{k}" if path else k
            out.add(p)
            schema_members(v, p, out)
        if "items" in node:
            schema_members(node["items"], path + "[]", out)
        for alt in node.get("oneOf", []):
            schema_members(alt, path, out)
    return out


SEEN = set()


def trace_members(x, path="", out=None):
    out = set() if out is None else out
    if isinstance(x, dict):
        for k, v in x.items():
            p = f"{path}.{k}" if path else k
            out.add(p)
            trace_members(v, p, out)
    elif isinstance(x, list):
        for v in x:
            trace_members(v, path + "[]", out)
    return out


def test_schema_has_no_unused_fields(tmp):
    traces = []
    a = os.path.join(tmp, "a")
    run_ok("steps", "--q", "[[1,0],[0,1]]", "--k", "[[1,0],[0,1]]", "--v", "[[1,2],[3,4]]", "--mask", "causal",
           "--out", a)
    traces.append(load_json(os.path.join(a, "trace.json")))
    b = os.path.join(tmp, "b")
    run_ok("run", "--trace", "steps", "--importance", "--ablate", "decoder.0.cross.1", "--out", b, TIRED)
    traces.append(load_json(os.path.join(b, "trace.json")))
    # a name copied through (unk_copies), by a tiny model trained on names
    c = os.path.join(tmp, "c")
    model = unk_corpus.train_tiny(unk_corpus.make_corpus(os.path.join(tmp, "corpus")), os.path.join(tmp, "m.safetensors"))
    run_ok("run", "--model", model, "--no-pictures", "--out", c, "the cat sees Zoe .")
    traces.append(load_json(os.path.join(c, "trace.json")))
    assert traces[-1]["unk_copies"], "the tiny model copied no name"
    # an unknown word shown marked, and a loop the search stopped (issue 24), by the shipped model
    # … the first with the translator's attribution (masked-self and cross heads, issue 40), the second with
    # head roles (issue 26)
    for k, sentence in enumerate(("The zorblax is red.", "very very very very very very very")):
        d = os.path.join(tmp, f"u{k}")
        run_ok("run", "--no-pictures", "--out", d, sentence, *(["--head-roles"] if k else ["--attribution"]))
        traces.append(load_json(os.path.join(d, "trace.json")))
    assert traces[-2]["unknown_words"] and traces[-1]["decode"]["stop"] == "repeat" and traces[-1]["head_roles"]
    assert traces[-2]["attribution"]["cross_heads"] and traces[-2]["attribution"]["what"] == "the first word written"
    # grouped-query attention, Gemma 3's own score scale and RoPE's q and k: a tiny Gemma 3 folder
    g = os.path.join(tmp, "gemma")
    cfg = llama_ref.shrunk("gemma-3-270m-it", hidden_size=32, num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                           intermediate_size=48, num_hidden_layers=1, vocab_size=40, max_position_embeddings=32,
                           query_pre_attn_scalar=24)
    llama_ref.write_hf_dir(g, cfg, llama_ref.hf_weights(cfg))
    llama_ref.write_tiny_tokenizer(g, ["it", "was", "tired"], bos="<bos>", post_processor=False, add_bos=True)
    run_ok("run", "--model", g, "--trace", "steps", "--no-pictures", "--out", os.path.join(tmp, "d"), "it was tired")
    traces.append(load_json(os.path.join(tmp, "d", "trace.json")))
    # generation with a KV cache (issue 26): the same folder writes three tokens
    run_ok("generate", "--model", g, "--steps", "3", "--out", os.path.join(tmp, "e"), "it was")
    traces.append(load_json(os.path.join(tmp, "e", "trace.json")))
    # importance on a foreign model (its positions), attribution on run and generate (its step): a tiny Llama
    q = os.path.join(tmp, "llama")
    cfg = llama_ref.shrunk("llama-3.2-1b", hidden_size=32, num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                           intermediate_size=48, num_hidden_layers=1, vocab_size=40, max_position_embeddings=32)
    llama_ref.write_hf_dir(q, cfg, llama_ref.hf_weights(cfg))
    llama_ref.write_tiny_tokenizer(q, ["it", "was", "tired"])
    run_ok("run", "--model", q, "--importance", "--attribution", "--no-pictures", "--out", os.path.join(tmp, "f"),
           "it was tired")
    run_ok("generate", "--model", q, "--steps", "2", "--attribution", "--out", os.path.join(tmp, "g"), "it was")
    traces += [load_json(os.path.join(tmp, o, "trace.json")) for o in ("f", "g")]
    assert traces[-2]["importance"]["positions"] and traces[-1]["attribution"]["step"] == 0
    seen = set()
    for t in traces:
        validate_trace(t)
        trace_members(t, out=seen)
    SEEN.clear()
    declared = schema_members(schema())
    unused = sorted(declared - seen)
    assert not unused, f"the schema defines members no trace holds: {unused}"
