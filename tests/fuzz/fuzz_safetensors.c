/* fuzz_safetensors.c — libFuzzer harness for the Hugging Face safetensors
 * reader (model/safetensors.h): any bytes as a .safetensors file.  Opening
 * returns 0 or -1 with a message; every tensor it lists reads (or is refused)
 * without reading outside the file.  Seeds: tests/fuzz/safetensors/. */
#include "core/safetensors.h"
#include "fuzz_scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[600], err[512];
    fuzz_write("model.safetensors", data, size, path, sizeof path);
    SafeTensors st;
    memset(&st, 0, sizeof st);
    if (safetensors_open(&st, path, err, sizeof err) == 0) {
        for (int i = 0; i < st.n; i++) {
            const StTensor *t = &st.t[i];
            if (!safetensors_dtype_size(t->dtype) || t->numel > (1u << 16)) continue;
            float *out = malloc((t->numel ? t->numel : 1) * sizeof *out);
            if (out) (void)safetensors_read_f32(&st, t, out, err, sizeof err);
            free(out);
            (void)safetensors_map_f32(&st, t);
        }
    }
    safetensors_close(&st);
    return 0;
}
