/* fuzz_model_config.c — libFuzzer harness for attnviz's model config JSON
 * (model/model.h: model_config_from_json, read by model-init --config and by
 * the checkpoint loader): 0 with a config that passes model_config_validate,
 * or -1 with a message.  Seeds: tests/fuzz/model_config/. */
#include "model/model.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 1 << 16) return 0;
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    ModelConfig c;
    char err[256];
    if (model_config_from_json(&c, text, err, sizeof err) == 0 && model_config_validate(&c, err, sizeof err) != 0)
        abort();   /* a config read without complaint must be a valid one */
    free(text);
    return 0;
}
