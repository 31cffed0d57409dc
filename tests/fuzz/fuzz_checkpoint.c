/* fuzz_checkpoint.c — libFuzzer harness for the checkpoint loader
 * (model/checkpoint.h: the safetensors container through core/safetensors.h,
 * then metadata, config, vocabulary, tensors).
 *
 * Any bytes as a .safetensors file: checkpoint_load returns 0 or -1 with a
 * message, never crashes, leaks or reads out of bounds.  The loader reads a
 * path, so each input is written to one scratch file per process (in $TMPDIR).
 * Seed corpus: tests/fuzz/checkpoint/ (tiny models written by model-init). */
#include "model/checkpoint.h"
#include "model/model.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char path[512];
    if (!path[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/attnviz-fuzz-checkpoint-%d.safetensors", tmp ? tmp : "/tmp", (int)getpid());
    }
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    if (size) fwrite(data, 1, size, f);
    fclose(f);
    Model m;
    char **vocab = NULL, *meta = NULL, err[512];
    int n_vocab = 0;
    if (checkpoint_load(path, &m, &vocab, &n_vocab, &meta, err, sizeof err) == 0) {
        checkpoint_free_vocab(vocab, n_vocab);
        free(meta);
        model_free(&m);
    }
    unlink(path);
    return 0;
}
