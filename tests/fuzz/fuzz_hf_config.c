/* fuzz_hf_config.c — libFuzzer harness for config.json reading
 * (family/hf_config.h): any bytes as DIR/config.json; 0 with sane numbers
 * or -1 with a message.  Seeds: tests/fuzz/hf_config/. */
#include "family/hf_config.h"
#include "fuzz_scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[600], err[512];
    fuzz_write("config.json", data, size, path, sizeof path);
    StackConfig c;
    if (hf_config_load(&c, fuzz_scratch(), err, sizeof err) == 0) {
        if (c.n_layer < 1 || c.n_head < 1 || c.d_model < 1 || c.n_vocab < 1) abort();
    }
    return 0;
}
