"""Sizes a foreign model's files give are checked before anything is allocated
(family/stack.h, core/sizes.h): a config.json whose numbers multiply past the
limits, or past a size_t, gives one error line naming the file, never a heap
overflow.  The first case is the crafted GPT-2 config that overran the heap of
the loader before the stack (n_embd 131072, n_layer 300000, n_inner 58378083,
n_positions 99572001, vocab_size 1, with a small safetensors file)."""
import json, os, subprocess
from helpers import ATTNVIZ, write_safetensors
import numpy as np

CRAFTED = {"model_type": "gpt2", "n_embd": 131072, "n_head": 1, "n_layer": 300000, "n_inner": 58378083,
           "n_positions": 99572001, "vocab_size": 1}


def folder(tmp, name, config):
    d = os.path.join(tmp, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(config, f)
    write_safetensors(os.path.join(d, "model.safetensors"), {"format": "pt"},
                      {"transformer.wte.weight": np.zeros((1, 8), np.float32),
                       "transformer.wpe.weight": np.zeros((4, 8), np.float32)})
    return d


def one_error_line(args, *words):
    r = subprocess.run([ATTNVIZ, *args], capture_output=True, text=True, timeout=60)
    lines = r.stderr.strip().splitlines()
    assert r.returncode != 0 and r.returncode < 128, (r.returncode, r.stderr)   # an error, not a signal
    assert len(lines) == 1 and lines[0].startswith("attnviz: error: "), r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def test_crafted_gpt2_config_is_one_error_line(tmp):
    d = folder(tmp, "crafted", CRAFTED)
    one_error_line(["info", "--model", d], "config.json", "300000 layers")
    one_error_line(["forward", "--model", d, "--src", "0", "--out", os.path.join(tmp, "t.json")], "config.json")


def test_sizes_past_the_limits_are_one_error_line(tmp):
    cases = {
        "gpt2-2-layers": dict(CRAFTED, n_layer=2, n_head=1024),                 # every product checked
        "gpt2-wide": dict(CRAFTED, n_layer=2, n_embd=1024000, n_head=1000, n_inner=99999999, n_positions=99999999),
        "bert": {"model_type": "bert", "hidden_size": 65536, "num_attention_heads": 64, "num_hidden_layers": 2,
                 "intermediate_size": 99999999, "max_position_embeddings": 512, "vocab_size": 99999999},
        "llama": {"architectures": ["LlamaForCausalLM"], "hidden_size": 1000000000, "num_attention_heads": 1,
                  "num_hidden_layers": 1, "intermediate_size": 1000000000, "vocab_size": 1000000000,
                  "head_dim": 2},
    }
    for name, cfg in cases.items():
        d = folder(tmp, name, cfg)
        one_error_line(["info", "--model", d], "config.json", "billion weights")
