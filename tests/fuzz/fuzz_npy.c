/* fuzz_npy.c — libFuzzer harness for the .npy and .npz readers (core/npy.h)
 * that `attnviz view` reads attention weights with: any bytes as a .npy file
 * and as a .npz archive.
 *
 * Each returns 0 or -1 with a one-line message, never reads outside the
 * bytes (ASan), and what parses is consistent: at most NPY_MAX_DIMS
 * dimensions, numel the product of the shape and within NPY_MAX_FLOATS,
 * every value readable, each .npz member named.  Seeds: tests/fuzz/npy/. */
#include "core/npy.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(const NpyArray *a, int named) {
    size_t n = 1;
    if (a->ndim < 0 || a->ndim > NPY_MAX_DIMS || !a->data || (named && !a->name)) abort();
    for (int d = 0; d < a->ndim; d++) {
        if (a->shape[d] < 0) abort();
        n *= (size_t)a->shape[d];
    }
    if (n != a->numel || n > NPY_MAX_FLOATS) abort();
    volatile float sink = 0;
    for (size_t i = 0; i < n; i++) sink += a->data[i];   /* every value is there */
    (void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char err[512] = "";
    NpyArray a;
    if (npy_parse(&a, data, size, "fuzz.npy", err, sizeof err) == 0) {
        check(&a, 0);
        npy_free(&a);
    } else if (!err[0] || strchr(err, '\n')) {
        abort();
    }
    NpyArray *z = NULL;
    int n = 0;
    err[0] = '\0';
    if (npz_parse(&z, &n, data, size, "fuzz.npz", err, sizeof err) == 0) {
        if (n < 1 || n > NPZ_MAX_MEMBERS) abort();
        for (int i = 0; i < n; i++) check(&z[i], 1);
        npz_free(z, n);
    } else if (!err[0] || z || n) {
        abort();
    }
    return 0;
}
