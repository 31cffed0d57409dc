/* safetensors.c — see safetensors.h. */
#include "core/safetensors.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Headers of real checkpoints are tens to hundreds of kB; 16 MB bounds the JSON
 * parse of a hostile one to about 600 MB of memory (cJSON ~40× the text). */
#define ST_MAX_HEADER (16u * 1024u * 1024u)
#define ST_MAX_INDEX  (64u * 1024u * 1024u)

int safetensors_dtype_size(const char *dtype) {
    if (!strcmp(dtype, "F32")) return 4;
    if (!strcmp(dtype, "F16") || !strcmp(dtype, "BF16")) return 2;
    return 0;
}

/* Element sizes of the dtypes that may sit beside the weights (buffers). */
static int any_dtype_size(const char *dtype) {
    static const struct { const char *name; int size; } tab[] = {
        {"F64", 8}, {"I64", 8}, {"U64", 8}, {"I32", 4}, {"U32", 4}, {"I16", 2}, {"U16", 2},
        {"I8", 1}, {"U8", 1}, {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
    int s = safetensors_dtype_size(dtype);
    if (s) return s;
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (!strcmp(dtype, tab[i].name)) return tab[i].size;
    return 0;
}

float safetensors_f16_to_f32(unsigned short h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) {
        if (man == 0) bits = sign;
        else {                                   /* subnormal: normalise */
            int e = -1;
            do { e++; man <<= 1; } while (!(man & 0x400));
            bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ff) << 13;
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | man << 13;
    } else {
        bits = sign | (exp + 127 - 15) << 23 | man << 13;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

float safetensors_bf16_to_f32(unsigned short h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static int add_tensor(SafeTensors *st, StTensor *t) {
    if (st->n == st->cap) {
        int cap = st->cap ? st->cap * 2 : 256;
        StTensor *nt = realloc(st->t, (size_t)cap * sizeof *nt);
        if (!nt) return -1;
        st->t = nt;
        st->cap = cap;
    }
    st->t[st->n++] = *t;
    return 0;
}

/* One header entry → t (name set by the caller).  0, or -1 with err. */
static int parse_entry(StTensor *t, const cJSON *e, size_t data_start, size_t file_size, const char *path,
                       char *err, size_t errlen) {
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    if (!cJSON_IsString(dt) || !cJSON_IsArray(sh) || !cJSON_IsArray(off) || cJSON_GetArraySize(off) != 2)
        return errmsg_set(err, errlen, "%s: tensor %s: header entry needs dtype, shape and data_offsets", path, t->name);
    snprintf(t->dtype, sizeof t->dtype, "%s", dt->valuestring);
    t->ndim = cJSON_GetArraySize(sh);
    if (t->ndim > ST_MAX_DIMS) return errmsg_set(err, errlen, "%s: tensor %s has %d dimensions", path, t->name, t->ndim);
    t->numel = 1;
    for (int d = 0; d < t->ndim; d++) {
        const cJSON *x = cJSON_GetArrayItem(sh, d);
        if (!cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble > 1e12)
            return errmsg_set(err, errlen, "%s: tensor %s has a bad shape", path, t->name);
        t->shape[d] = (long)x->valuedouble;
        t->numel *= (size_t)t->shape[d];
    }
    double b = cJSON_GetArrayItem(off, 0)->valuedouble, en = cJSON_GetArrayItem(off, 1)->valuedouble;
    if (b < 0 || en < b || en > 1e15)
        return errmsg_set(err, errlen, "%s: tensor %s has bad data_offsets", path, t->name);
    t->begin = data_start + (size_t)b;
    t->end = data_start + (size_t)en;
    if (t->end > file_size)
        return errmsg_set(err, errlen, "%s is truncated: tensor %s ends at byte %zu but the file has %zu bytes",
                          path, t->name, t->end, file_size);
    int es = any_dtype_size(t->dtype);
    if (es && t->end - t->begin != t->numel * (size_t)es)
        return errmsg_set(err, errlen, "%s: tensor %s holds %zu bytes, its shape and dtype %s need %zu", path, t->name,
                          t->end - t->begin, t->dtype, t->numel * (size_t)es);
    return 0;
}

/* Reads the header of path (already open as fd) and adds its tensors. */
static int read_header(SafeTensors *st, int file, char *err, size_t errlen) {
    const char *path = st->paths[file];
    int fd = st->fds[file];
    struct stat sb;
    unsigned char len8[8];
    if (fstat(fd, &sb) != 0 || pread(fd, len8, 8, 0) != 8)
        return errmsg_set(err, errlen, "%s is not a safetensors file (shorter than its 8-byte header length)", path);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | len8[i];
    if (n > ST_MAX_HEADER && 8 + n <= (uint64_t)sb.st_size)
        return errmsg_set(err, errlen, "%s: the header is %llu bytes; the limit is %u (16 MB)", path,
                          (unsigned long long)n, ST_MAX_HEADER);
    if (n < 2 || n > ST_MAX_HEADER || 8 + n > (uint64_t)sb.st_size)
        return errmsg_set(err, errlen, "%s is not a safetensors file or is truncated (header length %llu, file %lld bytes)",
                          path, (unsigned long long)n, (long long)sb.st_size);
    char *hdr = malloc(n + 1);
    if (!hdr) return errmsg_set(err, errlen, "out of memory reading %s", path);
    if (pread(fd, hdr, n, 8) != (ssize_t)n) { free(hdr); return errmsg_set(err, errlen, "cannot read %s", path); }
    hdr[n] = '\0';
    cJSON *j = cJSON_Parse(hdr);
    free(hdr);
    if (!cJSON_IsObject(j)) { cJSON_Delete(j); return errmsg_set(err, errlen, "%s: the header is not a JSON object", path); }
    int rc = 0;
    for (const cJSON *e = j->child; e && rc == 0; e = e->next) {
        if (!strcmp(e->string, "__metadata__")) continue;
        StTensor t = {0};
        t.file = file;
        t.name = strdup(e->string);
        if (!t.name) { rc = errmsg_set(err, errlen, "out of memory"); break; }
        rc = parse_entry(&t, e, 8 + (size_t)n, (size_t)sb.st_size, path, err, errlen);
        if (rc == 0 && add_tensor(st, &t) != 0) rc = errmsg_set(err, errlen, "out of memory");
        if (rc != 0) free(t.name);
    }
    cJSON_Delete(j);
    return rc;
}

/* Opens path as file number st->n_files and reads its header. */
static int open_one(SafeTensors *st, const char *path, char *err, size_t errlen) {
    char **np = realloc(st->paths, (size_t)(st->n_files + 1) * sizeof *np);
    if (!np) return errmsg_set(err, errlen, "out of memory");
    st->paths = np;
    int *nf = realloc(st->fds, (size_t)(st->n_files + 1) * sizeof *nf);
    if (!nf) return errmsg_set(err, errlen, "out of memory");
    st->fds = nf;
    void **nm = realloc(st->maps, (size_t)(st->n_files + 1) * sizeof *nm);
    if (!nm) return errmsg_set(err, errlen, "out of memory");
    st->maps = nm;
    size_t *nl = realloc(st->map_len, (size_t)(st->n_files + 1) * sizeof *nl);
    if (!nl) return errmsg_set(err, errlen, "out of memory");
    st->map_len = nl;
    int i = st->n_files;
    st->maps[i] = NULL;
    st->map_len[i] = 0;
    st->paths[i] = strdup(path);
    st->fds[i] = open(path, O_RDONLY);
    st->n_files++;
    if (!st->paths[i]) return errmsg_set(err, errlen, "out of memory");
    if (st->fds[i] < 0) return errmsg_set(err, errlen, "cannot open %s: %s", path, strerror(errno));
    return read_header(st, i, err, errlen);
}

int safetensors_open(SafeTensors *st, const char *path, char *err, size_t errlen) {
    memset(st, 0, sizeof *st);
    if (open_one(st, path, err, errlen) != 0) { safetensors_close(st); return -1; }
    return 0;
}

/* The shard files named by an index's weight_map, each once, in order of appearance. */
static int open_shards(SafeTensors *st, const char *dir, const char *index_path, char *err, size_t errlen) {
    char *text = file_read_all(index_path, ST_MAX_INDEX, NULL, err, errlen);
    if (!text) return -1;
    cJSON *j = cJSON_Parse(text);
    free(text);
    const cJSON *wm = cJSON_GetObjectItemCaseSensitive(j, "weight_map");
    if (!cJSON_IsObject(wm)) {
        cJSON_Delete(j);
        return errmsg_set(err, errlen, "%s has no \"weight_map\" object", index_path);
    }
    int rc = 0;
    for (const cJSON *e = wm->child; e && rc == 0; e = e->next) {
        if (!cJSON_IsString(e) || strchr(e->valuestring, '/')) {
            rc = errmsg_set(err, errlen, "%s: weight_map entry %s is not a file name", index_path, e->string);
            break;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->valuestring);
        int seen = 0;
        for (int f = 0; f < st->n_files && !seen; f++) seen = !strcmp(st->paths[f], path);
        if (!seen) rc = open_one(st, path, err, errlen);
    }
    cJSON_Delete(j);
    return rc;
}

int safetensors_open_dir(SafeTensors *st, const char *dir, char *err, size_t errlen) {
    memset(st, 0, sizeof *st);
    char path[4096];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    int rc;
    if (access(path, F_OK) == 0) {
        rc = open_one(st, path, err, errlen);
    } else {
        snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
        if (access(path, F_OK) != 0)
            return errmsg_set(err, errlen, "%s has no model.safetensors (nor model.safetensors.index.json); save the "
                              "model with save_pretrained(DIR) (safetensors is its default)", dir);
        rc = open_shards(st, dir, path, err, errlen);
    }
    if (rc != 0) safetensors_close(st);
    return rc;
}

const StTensor *safetensors_find(const SafeTensors *st, const char *name) {
    for (int i = 0; i < st->n; i++)
        if (!strcmp(st->t[i].name, name)) return &st->t[i];
    return NULL;
}

/* Reads len bytes at off of file f into buf, in pieces (pread may return less). */
static int read_at(const SafeTensors *st, int f, void *buf, size_t len, size_t off) {
    unsigned char *p = buf;
    while (len > 0) {
        ssize_t r = pread(st->fds[f], p, len, (off_t)off);
        if (r <= 0) return -1;
        p += r; off += (size_t)r; len -= (size_t)r;
    }
    return 0;
}

int safetensors_read_f32(const SafeTensors *st, const StTensor *t, float *out, char *err, size_t errlen) {
    int es = safetensors_dtype_size(t->dtype);
    if (!es)
        return errmsg_set(err, errlen, "%s: tensor %s has dtype %s; attnviz reads F32, F16 and BF16",
                          st->paths[t->file], t->name, t->dtype);
    if (es == 4) {   /* little-endian float32: straight into place */
        if (read_at(st, t->file, out, t->numel * 4, t->begin) != 0)
            return errmsg_set(err, errlen, "cannot read tensor %s from %s", t->name, st->paths[t->file]);
        return 0;
    }
    /* Half precision: read into the second half of out, convert forwards. */
    unsigned short *half = (unsigned short *)(out + t->numel) - t->numel;
    if (read_at(st, t->file, half, t->numel * 2, t->begin) != 0)
        return errmsg_set(err, errlen, "cannot read tensor %s from %s", t->name, st->paths[t->file]);
    int bf = !strcmp(t->dtype, "BF16");
    for (size_t i = 0; i < t->numel; i++) {
        unsigned short h = half[i];   /* read before out[i] (bytes 4i..4i+3) can overwrite it */
        out[i] = bf ? safetensors_bf16_to_f32(h) : safetensors_f16_to_f32(h);
    }
    return 0;
}

const float *safetensors_map_f32(SafeTensors *st, const StTensor *t) {
    if (strcmp(t->dtype, "F32") != 0 || t->begin % 4 != 0) return NULL;
    int f = t->file;
    if (!st->maps[f]) {
        struct stat sb;
        if (fstat(st->fds[f], &sb) != 0 || sb.st_size <= 0) return NULL;
        void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, st->fds[f], 0);
        if (p == MAP_FAILED) return NULL;
        st->maps[f] = p;
        st->map_len[f] = (size_t)sb.st_size;
    }
    return (const float *)((const unsigned char *)st->maps[f] + t->begin);
}

void safetensors_close(SafeTensors *st) {
    if (!st) return;
    for (int f = 0; f < st->n_files; f++) {
        if (st->fds && st->fds[f] >= 0) close(st->fds[f]);
        if (st->maps && st->maps[f]) munmap(st->maps[f], st->map_len[f]);
        free(st->paths[f]);
    }
    for (int i = 0; i < st->n; i++) free(st->t[i].name);
    free(st->paths); free(st->fds); free(st->maps); free(st->map_len); free(st->t);
    memset(st, 0, sizeof *st);
}
