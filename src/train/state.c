/* state.c — the training state file beside a checkpoint, for --resume (see state.h). */
#include "train/state.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int write_all(FILE *f, const void *p, size_t n) { return fwrite(p, 1, n, f) == n ? 0 : -1; }

int train_state_save(const char *path, const Adam *a, long step, uint64_t seed, long total_steps,
                     char *err, size_t errlen) {
    char hdr[1024];
    size_t bytes = a->n * sizeof(float);
    int n = snprintf(hdr, sizeof hdr,
        "{\"__metadata__\":{\"format\":\"attnviz-train-state\",\"version\":\"1\",\"step\":\"%ld\","
        "\"num_params\":\"%zu\",\"seed\":\"%llu\",\"total_steps\":\"%ld\",\"adam_t\":\"%ld\"},"
        "\"adam.m\":{\"dtype\":\"F32\",\"shape\":[%zu],\"data_offsets\":[0,%zu]},"
        "\"adam.v\":{\"dtype\":\"F32\",\"shape\":[%zu],\"data_offsets\":[%zu,%zu]}}",
        step, a->n, (unsigned long long)seed, total_steps, a->t, a->n, bytes, a->n, bytes, 2 * bytes);
    if (n < 0 || (size_t)n + 8 >= sizeof hdr) { errmsg_set(err, errlen, "state header too long"); return -1; }
    while (n % 8) hdr[n++] = ' ';
    hdr[n] = '\0';
    AtomicFile af;
    if (atomic_open(&af, path, err, errlen)) return -1;
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)(((uint64_t)n >> (8 * i)) & 0xff);
    /* floats are written in host order; attnviz targets little-endian hosts
     * (the checkpoint module converts; the state file is a local resume aid) */
    int bad = write_all(af.f, len8, 8) || write_all(af.f, hdr, (size_t)n) ||
              write_all(af.f, a->m, bytes) || write_all(af.f, a->v, bytes);
    if (bad) {
        errmsg_set(err, errlen, "cannot write %s: %s", path, strerror(errno));
        atomic_abort(&af);
        return -1;
    }
    return atomic_commit(&af, err, errlen);
}

static long meta_long(const cJSON *meta, const char *key, int *ok) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(meta, key);
    if (!cJSON_IsString(it)) { *ok = 0; return 0; }
    char *end;
    long v = strtol(it->valuestring, &end, 10);
    if (*end || end == it->valuestring) *ok = 0;
    return v;
}

int train_state_load(const char *path, Adam *a, long *step, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) { errmsg_set(err, errlen, "cannot open training state %s: %s (it is written beside the checkpoint)", path, strerror(errno)); return -1; }
    int rc = -1;
    char *hdr = NULL;
    cJSON *root = NULL;
    unsigned char len8[8];
    if (fread(len8, 1, 8, f) != 8) { errmsg_set(err, errlen, "%s: truncated", path); goto done; }
    uint64_t n = 0;
    for (int i = 0; i < 8; i++) n |= (uint64_t)len8[i] << (8 * i);
    if (n == 0 || n > 65536) { errmsg_set(err, errlen, "%s: not a training-state file (header length %llu)", path, (unsigned long long)n); goto done; }
    hdr = malloc(n + 1);
    if (!hdr || fread(hdr, 1, n, f) != n) { errmsg_set(err, errlen, "%s: truncated header", path); goto done; }
    hdr[n] = '\0';
    root = cJSON_Parse(hdr);
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "__metadata__");
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(meta, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(meta, "version");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "attnviz-train-state")) {
        errmsg_set(err, errlen, "%s: not an attnviz training-state file", path); goto done;
    }
    if (!cJSON_IsString(ver) || strcmp(ver->valuestring, "1")) {
        errmsg_set(err, errlen, "%s: training-state version %s, this attnviz reads 1", path,
               cJSON_IsString(ver) ? ver->valuestring : "?"); goto done;
    }
    int ok = 1;
    long st = meta_long(meta, "step", &ok), np = meta_long(meta, "num_params", &ok), t = meta_long(meta, "adam_t", &ok);
    if (!ok || st < 0 || np < 0 || t < 0) { errmsg_set(err, errlen, "%s: bad metadata", path); goto done; }
    if ((size_t)np != a->n) {
        errmsg_set(err, errlen, "%s holds %ld optimizer values but the model has %zu parameters (state of another model?)", path, np, a->n);
        goto done;
    }
    size_t bytes = a->n * sizeof(float);
    if (fread(a->m, 1, bytes, f) != bytes || fread(a->v, 1, bytes, f) != bytes) {
        errmsg_set(err, errlen, "%s: truncated data", path); goto done;
    }
    a->t = t;
    *step = st;
    rc = 0;
done:
    cJSON_Delete(root);
    free(hdr);
    fclose(f);
    return rc;
}
