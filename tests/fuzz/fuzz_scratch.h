/* fuzz_scratch.h — scratch files for libFuzzer harnesses whose parser reads
 * paths: one folder per process under $TMPDIR, removed at exit. */
#ifndef ATTNVIZ_FUZZ_SCRATCH_H
#define ATTNVIZ_FUZZ_SCRATCH_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_dir[512];

static void fuzz_scratch_cleanup(void) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_dir);
    if (fuzz_dir[0]) (void)!system(cmd);
}

/* The scratch folder (created on first use). */
static const char *fuzz_scratch(void) {
    if (!fuzz_dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/attnviz-fuzz-XXXXXX", tmp ? tmp : "/tmp");
        if (!mkdtemp(fuzz_dir)) abort();
        atexit(fuzz_scratch_cleanup);
    }
    return fuzz_dir;
}

/* Writes n bytes to scratch/name; its path into path. */
static void fuzz_write(const char *name, const uint8_t *data, size_t n, char *path, size_t len) {
    snprintf(path, len, "%s/%s", fuzz_scratch(), name);
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (n) fwrite(data, 1, n, f);
    fclose(f);
}

/* The k-th part (0-based) of data split at NUL bytes, as a pointer and length;
 * an empty part when there are fewer. */
static void fuzz_part(const uint8_t *data, size_t size, int k, const uint8_t **p, size_t *n) {
    size_t start = 0;
    for (int i = 0; i < k; i++) {
        const uint8_t *z = memchr(data + start, 0, size - start);
        if (!z) { *p = data + size; *n = 0; return; }
        start = (size_t)(z - data) + 1;
    }
    const uint8_t *z = memchr(data + start, 0, size - start);
    *p = data + start;
    *n = z ? (size_t)(z - (data + start)) : size - start;
}
#endif
