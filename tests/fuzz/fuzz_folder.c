/* fuzz_folder.c — libFuzzer harness for a model folder as the loader reads
 * it (family/hf_file.h: hf_file_load): the fuzzed config.json, sharded index
 * and tokenizer_config.json TOGETHER with a small valid safetensors file and
 * tokenizer.json, so a crafted config meets real tensors (where a config
 * whose sizes disagreed with the tensors once overran the heap).  Covers the
 * GPT-2/BERT and Llama-family config readers (hf_config.c, llama_config.c,
 * stack_config.c), model.safetensors.index.json (core/safetensors.c) and
 * tokenizer_config.json (hf_file.c).
 *
 * The input split at NUL bytes (fuzz_part): 0 config.json; 1 the index (when
 * not empty the tensors are the shard model-00001-of-00001.safetensors and
 * there is no model.safetensors); 2 tokenizer_config.json (absent when
 * empty).  The tensors hold a 1-layer Llama (model.*, C 8, 2 heads of 4,
 * F 16, V 16, Qwen 2's q/k/v biases) and a 1-layer GPT-2 (C 8, F 32, V 16, 16 positions), all 0.01.
 * What loads must have sane sizes and run a forward pass on 2 tokens under
 * ASan; else the loader says why in one line.  Seeds: tests/fuzz/folder/. */
#include "family/hf_file.h"
#include "family/stack.h"
#include "core/safetensors.h"
#include "fuzz_scratch.h"

#define N_MAX 24

static char tensors[600];   /* the safetensors file, written once */

static void add(StWriteTensor *t, int *n, const char *name, long a, long b, const float *ones) {
    t[*n] = (StWriteTensor){.name = name, .dtype = "F32", .ndim = b ? 2 : 1, .data = ones};
    t[*n].shape[0] = a;
    t[*n].shape[1] = b;
    (*n)++;
}

static void write_tensors(void) {
    static float v[32 * 32];
    for (int i = 0; i < 32 * 32; i++) v[i] = 0.01f;
    StWriteTensor t[N_MAX * 2];
    int n = 0;
    add(t, &n, "model.embed_tokens.weight", 16, 8, v);
    add(t, &n, "model.layers.0.input_layernorm.weight", 8, 0, v);
    add(t, &n, "model.layers.0.self_attn.q_proj.weight", 8, 8, v);
    add(t, &n, "model.layers.0.self_attn.k_proj.weight", 8, 8, v);
    add(t, &n, "model.layers.0.self_attn.v_proj.weight", 8, 8, v);
    add(t, &n, "model.layers.0.self_attn.o_proj.weight", 8, 8, v);
    add(t, &n, "model.layers.0.self_attn.q_proj.bias", 8, 0, v);   /* Qwen 2's */
    add(t, &n, "model.layers.0.self_attn.k_proj.bias", 8, 0, v);
    add(t, &n, "model.layers.0.self_attn.v_proj.bias", 8, 0, v);
    add(t, &n, "model.layers.0.post_attention_layernorm.weight", 8, 0, v);
    add(t, &n, "model.layers.0.mlp.gate_proj.weight", 16, 8, v);
    add(t, &n, "model.layers.0.mlp.up_proj.weight", 16, 8, v);
    add(t, &n, "model.layers.0.mlp.down_proj.weight", 8, 16, v);
    add(t, &n, "model.norm.weight", 8, 0, v);
    add(t, &n, "lm_head.weight", 16, 8, v);
    add(t, &n, "wte.weight", 16, 8, v);
    add(t, &n, "wpe.weight", 16, 8, v);
    add(t, &n, "h.0.ln_1.weight", 8, 0, v);
    add(t, &n, "h.0.ln_1.bias", 8, 0, v);
    add(t, &n, "h.0.attn.c_attn.weight", 8, 24, v);
    add(t, &n, "h.0.attn.c_attn.bias", 24, 0, v);
    add(t, &n, "h.0.attn.c_proj.weight", 8, 8, v);
    add(t, &n, "h.0.attn.c_proj.bias", 8, 0, v);
    add(t, &n, "h.0.ln_2.weight", 8, 0, v);
    add(t, &n, "h.0.ln_2.bias", 8, 0, v);
    add(t, &n, "h.0.mlp.c_fc.weight", 8, 32, v);
    add(t, &n, "h.0.mlp.c_fc.bias", 32, 0, v);
    add(t, &n, "h.0.mlp.c_proj.weight", 32, 8, v);
    add(t, &n, "h.0.mlp.c_proj.bias", 8, 0, v);
    add(t, &n, "ln_f.weight", 8, 0, v);
    add(t, &n, "ln_f.bias", 8, 0, v);
    char err[512];
    snprintf(tensors, sizeof tensors, "%s/tensors.safetensors.keep", fuzz_scratch());
    if (safetensors_write(tensors, t, n, NULL, err, sizeof err) != 0) { fprintf(stderr, "%s\n", err); abort(); }
}

static const char TOKENIZER[] =
    "{\"version\":\"1.0\",\"model\":{\"type\":\"WordLevel\",\"unk_token\":\"<unk>\",\"vocab\":{\"<unk>\":0,"
    "\"<s>\":1,\"</s>\":2,\"a\":3,\"b\":4}},\"pre_tokenizer\":{\"type\":\"Whitespace\"}}";

/* dir/name: a copy of the tensors (a symlink would also do, but the loader
 * must read a regular file through any name). */
static void put_tensors(const char *dir, const char *name) {
    char path[700], cmd[1500];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (link(tensors, path) != 0) {
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", tensors, path);
        if (system(cmd) != 0) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 1 << 16) return 0;
    if (!tensors[0]) write_tensors();
    const char *dir = fuzz_scratch();
    char path[700], err[512];
    static const char *const names[] = {"config.json", "model.safetensors", "model.safetensors.index.json",
                                        "model-00001-of-00001.safetensors", "tokenizer_config.json"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    const uint8_t *p;
    size_t n;
    fuzz_part(data, size, 0, &p, &n);
    fuzz_write("config.json", p, n, path, sizeof path);
    fuzz_part(data, size, 1, &p, &n);
    if (n) {
        fuzz_write("model.safetensors.index.json", p, n, path, sizeof path);
        put_tensors(dir, "model-00001-of-00001.safetensors");
    } else put_tensors(dir, "model.safetensors");
    fuzz_part(data, size, 2, &p, &n);
    if (n) fuzz_write("tokenizer_config.json", p, n, path, sizeof path);
    fuzz_write("tokenizer.json", (const uint8_t *)TOKENIZER, sizeof TOKENIZER - 1, path, sizeof path);

    HfFile f;
    int rc = hf_file_load(&f, dir, err, sizeof err);
    if (getenv("FUZZ_VERBOSE")) fprintf(stderr, "%s\n", rc == 0 ? "loaded" : err);   /* to check the seeds */
    if (rc == 0) {
        const StackConfig *c = &f.m.c;
        if (c->n_layer < 1 || c->n_head < 1 || c->d_model < 1 || c->n_vocab < 1) abort();
        int ids[2] = {1, 3};
        if (c->n_vocab > 3 && c->n_pos >= 2 && c->n_layer <= 4 && c->d_model <= 64)
            (void)stack_model_forward(&f.m, ids, 2, 2, NULL, NULL, NULL, err, sizeof err);
        hf_file_free(&f);
    } else if (!err[0] || strchr(err, '\n')) abort();   /* one line that says why */
    return 0;
}
