"""`attnviz tokenize --model DIR` and `run --model DIR` with a folder's tokenizer.json
(src/family/hf_file.c): the real folders in ../shared/hf against the ids Python
`transformers` 4.57.1 gave (../shared/hf/oracle) and against Hugging Face's own library
(the npm package `tokenizers`, run by node through tests/test_tokjson.py's helpers) on
hundreds of strings; special-token text; the tokens put around a text by the
post-processor or by tokenizer_config.json; display tokens; folders with only
tokenizer files; a tiny random GPT-2 and BERT with the real tokenizer.json; broken files.
Tests that need ../shared print "skipped: …" and return when it is absent."""
import json, os, shutil
import numpy as np
from helpers import run, run_ok, run_err, load_json, validate_trace
import hf_fixtures as hf
import test_tokjson as tj

ORACLES = [("openai-community__gpt2", "gpt2"), ("TinyLlama__TinyLlama-1.1B-Chat-v1.0", "tinyllama-1.1b-chat-v1.0"),
           ("BAAI__bge-small-en-v1.5", "bert-base-uncased")]   # bge-small has bert-base-uncased's vocabulary


def real_folders():
    """The folders of ../shared/hf that ship a tokenizer.json (at least gpt2, BERT, TinyLlama)."""
    if not tj.shared("gpt2", "tokenizer.json"):
        return []
    out = sorted(d for d in os.listdir(tj.HF) if os.path.exists(os.path.join(tj.HF, d, "tokenizer.json")))
    assert {"gpt2", "bert-base-uncased", "tinyllama-1.1b-chat-v1.0"} <= set(out), out
    return out


def ids(d, texts, *opts):
    """attnviz tokenize --json on texts: one list of ids per text."""
    r = run_ok("tokenize", "--model", d, "--json", *opts, input=tj.lines_of(texts), timeout=300)
    lines = r.stdout.split("\n")
    assert len(lines) == len(texts) + 1 and lines[-1] == "", (len(lines), len(texts))
    return [[int(x) for x in l.split()] for l in lines[:-1]]


def tokens(d, text, *opts):
    return run_ok("tokenize", "--model", d, "--tokens", *opts, input=text + "\n").stdout.rstrip("\n").split(" | ")


def test_tokenize_real_folders_match_transformers_ids():
    """gpt2, TinyLlama and bge-small (bert-base-uncased's file): the 30 oracle texts give the
    ids `transformers` gave, special tokens included (TinyLlama's <s>, BERT's [CLS] … [SEP]),
    straight from the folders (no weights; TinyLlama's config.json is a Llama one)."""
    if not real_folders() or not tj.shared("oracle", "inputs.json"):
        return
    bd = tj._byte_decoder()
    with open(os.path.join(tj.HF, "oracle", "openai-community__gpt2.json"), encoding="utf-8") as f:
        entries = json.load(f)["entries"]
    texts = {k: bytes(bd[c] for c in "".join(e["tokens"])).decode("utf-8") for k, e in entries.items()}
    for oracle_name, folder in ORACLES:
        with open(os.path.join(tj.HF, "oracle", oracle_name + ".json"), encoding="utf-8") as f:
            want = json.load(f)["entries"]
        keys = sorted(want)
        assert len(keys) == 30
        got = ids(os.path.join(tj.HF, folder), [texts[k] for k in keys])
        bad = [k for k, g in zip(keys, got) if g != want[k]["input_ids"]]
        assert not bad, f"{folder}: ids differ from {oracle_name} on {bad}: {texts[bad[0]]!r}"


def test_tokenize_real_folders_match_the_library():
    """Every real folder with a tokenizer.json, 400 strings (English, French, Vietnamese,
    CJK, emoji, whitespace runs, digits, special-token text): the default ids are the
    library's with the post-processor, --no-special's its ids without."""
    texts = tj.corpus(400, seed=27)
    for name in real_folders():
        d = os.path.join(tj.HF, name)
        want = tj.oracle(os.path.join(d, "tokenizer.json"), texts)
        for opts, key in (((), "with_special"), (("--no-special",), "ids")):
            got = ids(d, texts, *opts)
            bad = [(t, g, w[key]) for t, g, w in zip(texts, got, want) if g != w[key]]
            assert not bad, (f"{name} {opts}: {len(bad)} of {len(texts)} differ; first {bad[0][0]!r}\n"
                             f" got  {bad[0][1]}\n want {bad[0][2]}")
        assert sum(len(w["ids"]) for w in want) > 5000


def test_tokenize_special_tokens_and_display():
    """<|endoftext|> in GPT-2 text is one token (50256), BERT gets [CLS] … [SEP] from its
    template, TinyLlama <s>; display tokens as the pictures show them."""
    if not real_folders():
        return
    g, b, l = (os.path.join(tj.HF, n) for n in ("gpt2", "bert-base-uncased", "tinyllama-1.1b-chat-v1.0"))
    assert ids(g, ["<|endoftext|>", "Hello <|endoftext|> world"]) == [[50256], [15496, 220, 50256, 995]]
    assert tokens(g, "Hello <|endoftext|> it") == ["Hello", " ", "<|endoftext|>", "it"]   # "Ġit" → "it"
    assert ids(b, ["hello [MASK]"]) == [[101, 7592, 103, 102]]
    assert ids(b, ["hello [MASK]"], "--no-special") == [[7592, 103]]
    assert tokens(b, "Unaffable [MASK]") == ["[CLS]", "una", "##ffa", "##ble", "[MASK]", "[SEP]"]
    assert ids(l, ["Lily", "</s>"]) == [[1, 365, 2354], [1, 2]]
    assert ids(l, ["Lily"], "--no-special") == [[365, 2354]]
    assert tokens(l, "Lily had") == ["<s>", "L", "ily", "had"]                 # "▁had" → "had"
    # byte fallback: the four bytes of an emoji are no character each, so they are spelled
    r = run_ok("tokenize", "--model", l, "--tokens", "--no-special", "--json", input=json.dumps("a😀") + "\n")
    assert r.stdout == "a | <0xF0> | <0x9F> | <0x98> | <0x80>\n", r.stdout
    r = run_ok("tokenize", "--model", l, "--tokens", "--no-special", "--json", input=json.dumps("a\nb\tc") + "\n")
    assert r.stdout == "a | <0x0A> | b | <0x09> | c\n", r.stdout                 # control characters: spelled
    r = run_ok("tokenize", "--model", g, "--tokens", "--json", input=json.dumps("a\n\nb") + "\n")
    assert r.stdout == "a | Ċ | Ċ | b\n", r.stdout
    r = run_ok("tokenize", "--model", g, "--tokens", "--json", input=json.dumps("😀 it") + "\n")
    assert r.stdout == "ðŁĺ | Ģ | it\n", r.stdout                              # GPT-2's byte pieces: spelled


def write_tokenizer_folder(d, name, config=None):
    """A folder holding only name's tokenizer.json (+ tokenizer_config.json when given)."""
    os.makedirs(d)
    shutil.copyfile(os.path.join(tj.HF, name, "tokenizer.json"), os.path.join(d, "tokenizer.json"))
    if config is not None:
        with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
            json.dump(config, f)
    return d


def test_tokenizer_config_where_transformers_reads_it(tmp):
    """transformers' Llama and Gemma tokenizer classes rebuild the post-processor from
    tokenizer_config.json (add_bos_token true, add_eos_token false unless said); other
    classes keep tokenizer.json's (Llama 3's PreTrainedTokenizerFast), and add_bos_token /
    add_eos_token add bos_token / eos_token only where it puts nothing."""
    if not real_folders():
        return
    lily = [365, 2354]
    cases = [(None, [1] + lily),                                            # the template: <s>
             ({"tokenizer_class": "LlamaTokenizerFast"}, [1] + lily),
             ({"tokenizer_class": "LlamaTokenizer", "add_bos_token": False}, lily),
             ({"tokenizer_class": "LlamaTokenizer", "add_eos_token": True}, [1] + lily + [2]),
             ({"tokenizer_class": "PreTrainedTokenizerFast"}, [1] + lily),
             ({"tokenizer_class": "LlamaTokenizerFast", "add_bos_token": True, "bos_token": {"content": "</s>"}},
              [2] + lily),
             ({"add_bos_token": False, "add_eos_token": True, "eos_token": {"content": "</s>"}}, [1] + lily + [2]),
             ({"tokenizer_class": "PreTrainedTokenizerFast", "add_bos_token": True, "bos_token": "</s>"}, [1] + lily)]
    for i, (config, want) in enumerate(cases):
        d = write_tokenizer_folder(os.path.join(tmp, f"llama{i}"), "tinyllama-1.1b-chat-v1.0", config)
        assert ids(d, ["Lily"]) == [want], (config, want)
        assert ids(d, ["Lily"], "--no-special") == [lily], config
    # GPT-2's ByteLevel post-processor adds nothing; add_bos_token puts bos_token first
    d = write_tokenizer_folder(os.path.join(tmp, "gpt2bos"), "gpt2", {"add_bos_token": True, "bos_token": "<|endoftext|>"})
    assert ids(d, ["it"]) == [[50256, 270]]
    r = run_ok("tokenize", "--model", d, "--tokens", input="it\n")
    assert r.stdout == "<|endoftext|> | it\n"
    # a bos_token the vocabulary lacks, or none at all: one line naming the file
    for i, config in enumerate(({"add_bos_token": True, "bos_token": "<nope>"}, {"add_bos_token": True, "bos_token": None})):
        d = write_tokenizer_folder(os.path.join(tmp, f"bad{i}"), "gpt2", config)
        r = run_err("tokenize", "--model", d, input="it\n")
        assert "tokenizer_config.json" in r.stderr and "bos_token" in r.stderr and r.stdout == "", r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


def test_tokenize_folders_without_weights_or_config(tmp):
    """tokenizer.json alone, vocab.json + merges.txt alone, vocab.txt alone; an empty folder
    says what it needs."""
    hf.write_gpt2_dir(os.path.join(tmp, "g"), weights=hf.gpt2_weights(C=8, H=2, L=1, P=8))
    hf.write_bert_dir(os.path.join(tmp, "b"), weights=hf.bert_weights(C=8, H=2, L=1, P=8, F=8, mlm=False))
    for name, keep in (("g", ("vocab.json", "merges.txt")), ("b", ("vocab.txt",))):
        d = os.path.join(tmp, name + "-vocab")
        os.makedirs(d)
        for k in keep:
            shutil.copyfile(os.path.join(tmp, name, k), os.path.join(d, k))
        assert ids(d, ["the cat"]) == ids(os.path.join(tmp, name), ["the cat"])
    assert ids(os.path.join(tmp, "b-vocab"), ["the cat"]) == [[101, 1996, 4937, 102]]
    assert ids(os.path.join(tmp, "b-vocab"), ["the cat"], "--no-special") == [[1996, 4937]]
    assert ids(os.path.join(tmp, "g-vocab"), ["the cat"]) == [[1169, 3797]]
    os.makedirs(os.path.join(tmp, "empty"))
    r = run_err("tokenize", "--model", os.path.join(tmp, "empty"), input="x\n")
    assert "tokenizer.json" in r.stderr and "vocab.txt" in r.stderr, r.stderr
    r = run_err("tokenize", input="x\n")
    assert "tokenize needs --model DIR: a folder with tokenizer.json, or GPT-2/BERT vocabulary files" in r.stderr
    r = run_ok("tokenize", "--help")
    assert "tokenizer.json" in r.stdout and "--no-special" in r.stdout
    if real_folders():
        d = write_tokenizer_folder(os.path.join(tmp, "tl"), "tinyllama-1.1b-chat-v1.0")
        assert ids(d, ["Lily"]) == [[1, 365, 2354]]


def top5(stdout, what):
    """[(token, probability)] of the line 'what “a” 0.123, …' that run prints."""
    line = [l for l in stdout.splitlines() if what in l][0]
    parts = line.split("“")[1:]
    return [(p.split("”")[0], float(p.split("”")[1].strip(" ,"))) for p in parts]


def softmax_top(logits, k=5):
    p = np.exp(logits - logits.max())
    p /= p.sum()
    top = np.argsort(-p, kind="stable")[:k]
    return top, p[top]


def test_run_gpt2_folder_with_real_tokenizer_json(tmp):
    """A tiny random GPT-2 with the real tokenizer.json: run reads the text with the ids the
    library gives (<|endoftext|> one token), and its next-token candidates are the PyTorch
    reference's on those ids."""
    if not hf.real_tokenizer_json("gpt2"):
        return
    d, out = os.path.join(tmp, "g"), os.path.join(tmp, "out")
    w = hf.write_gpt2_dir(d, weights=hf.gpt2_weights(C=32, H=4, L=2, P=64), real_tokenizer=True)
    text = "The animal didn't cross the street<|endoftext|> because it was too tired"
    want = tj.oracle(os.path.join(d, "tokenizer.json"), [text])[0]["with_special"]
    assert 50256 in want
    assert ids(d, [text]) == [want]
    r = run_ok("run", "--model", d, "--out", out, text)
    trace = load_json(os.path.join(out, "trace.json"))
    validate_trace(trace)
    toks = trace["target_tokens"]
    assert len(toks) == len(want) and "<|endoftext|>" in toks and toks[:3] == ["The", "animal", "didn"], toks
    _, logits = hf.gpt2_reference(w, want)
    top, p = softmax_top(logits[-1])
    vocab = json.load(open(os.path.join(d, "vocab.json"), encoding="utf-8"))
    names = {v: k for k, v in vocab.items()}
    got = top5(r.stdout, "next token:")
    assert [names[int(t)].replace("\u0120", " ").strip() for t in top] == [g[0].strip() for g in got], (got, top)
    assert np.allclose(p, [g[1] for g in got], atol=2e-3), (p, got)


def test_run_bert_folder_with_real_tokenizer_json(tmp):
    """A tiny random BERT with the real tokenizer.json: [CLS] … [SEP] from the template, the
    [MASK] filled as the PyTorch reference fills it on the library's ids."""
    if not hf.real_tokenizer_json("bert-base-uncased"):
        return
    d, out = os.path.join(tmp, "b"), os.path.join(tmp, "out")
    w = hf.write_bert_dir(d, weights=hf.bert_weights(C=32, H=4, L=2, P=64, F=64), real_tokenizer=True)
    os.remove(os.path.join(d, "vocab.txt"))        # tokenizer.json is the tokenizer: vocab.txt is not needed
    text = "The animal didn't cross the [MASK] because it was too tired."
    want = tj.oracle(os.path.join(d, "tokenizer.json"), [text])[0]["with_special"]
    r = run_ok("run", "--model", d, "--out", out, text)
    toks = load_json(os.path.join(out, "trace.json"))["source_tokens"]
    assert toks[0] == "[CLS]" and toks[-1] == "[SEP]" and len(toks) == len(want), toks
    pos = toks.index("[MASK]")
    _, logits = hf.bert_reference(w, want)
    top, p = softmax_top(logits[pos])
    spell = {v: k for k, v in json.load(open(os.path.join(d, "tokenizer.json"), encoding="utf-8"))["model"]["vocab"].items()}
    got = top5(r.stdout, "[MASK] at")
    assert [spell[int(t)] for t in top] == [g[0] for g in got], (got, top)
    assert np.allclose(p, [g[1] for g in got], atol=2e-3)
    r = run_ok("info", "--model", d)
    assert "tokenizer.json: WordPiece" in r.stdout, r.stdout


def test_broken_tokenizer_json_is_one_line(tmp):
    """A broken tokenizer.json (or tokenizer_config.json) in a folder: one line naming the
    file, exit != 0, nothing printed or written; it is not silently replaced by the
    vocabulary files beside it."""
    if not hf.real_tokenizer_json("gpt2"):
        return
    d = os.path.join(tmp, "g")
    hf.write_gpt2_dir(d, weights=hf.gpt2_weights(C=8, H=2, L=1, P=16), real_tokenizer=True)
    path = os.path.join(d, "tokenizer.json")
    with open(path, "rb") as f:
        blob = f.read()
    t = json.loads(blob)
    t["model"]["merges"][5] = "a b c"
    for data, needle in ((blob[: len(blob) // 3], "not valid JSON"), (json.dumps(t).encode(), "model.merges[5]")):
        with open(path, "wb") as f:
            f.write(data)
        for args in (("tokenize", "--model", d), ("run", "--model", d, "--out", os.path.join(tmp, "out"), "hi"),
                     ("info", "--model", d)):
            r = run(*args, input="hi\n")
            lines = r.stderr.strip().splitlines()
            assert r.returncode not in (0,) and r.returncode > 0 and r.stdout == "", (args, r.returncode, r.stdout)
            assert len(lines) == 1 and path in lines[0] and needle in lines[0], (args, r.stderr)
            assert not os.path.exists(os.path.join(tmp, "out"))
    with open(path, "wb") as f:
        f.write(blob)
    with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
        f.write("{nope")
    r = run_err("tokenize", "--model", d, input="hi\n")
    assert "tokenizer_config.json" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    # a tokenizer.json larger than the model: a token past its embeddings stops the run
    d = os.path.join(tmp, "small")
    hf.write_gpt2_dir(d, weights=hf.gpt2_weights(C=8, H=2, L=1, P=16, V=1000), real_tokenizer=True)
    out = os.path.join(tmp, "out")
    run_ok("run", "--model", d, "--out", out, "The the")
    r = run_err("run", "--model", d, "--out", os.path.join(tmp, "out2"), "The animal")
    assert "\"animal\" has id 5044" in r.stderr and "1000" in r.stderr and "vocab_size" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(tmp, "out2"))


def test_tokenize_the_translator_gives_its_vocabulary_ids(tmp):
    """tokenize --model taught: the translator's words and ids, checked against the
    vocabulary stored in the checkpoint's own metadata, and against what run's trace
    says the model read at each position (source_read)."""
    import json, os
    from helpers import read_safetensors
    model = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "samples", "models",
                         "attnviz-en-fr-vi.safetensors")
    vocab = json.loads(read_safetensors(model)[0]["vocab"])
    text = "The animal didn't cross the street because it was too zorblax ."
    ids = [int(x) for x in run_ok("tokenize", "--model", model, input=text + "\n").stdout.split()]
    toks = run_ok("tokenize", "--model", model, "--tokens", input=text + "\n").stdout.strip().split(" | ")
    out = os.path.join(tmp, "o")
    run_ok("run", "--model", model, "--no-pictures", "--out", out, text)
    read = json.load(open(os.path.join(out, "trace.json")))["source_read"]
    assert len(ids) == len(toks) == len(read), (ids, toks, read)
    assert [vocab[i] for i in ids] == read, ([vocab[i] for i in ids], read)
    assert toks[-1] == "<eos>" and vocab[ids[toks.index("zorblax")]] == "<unk>"
    no = run_ok("tokenize", "--model", model, "--no-special", input=text + "\n").stdout.split()
    assert [int(x) for x in no] == ids[:-1]
