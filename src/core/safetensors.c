/* safetensors.c — see safetensors.h. */
#include "core/safetensors.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include <cJSON.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define ST_MAX_INDEX  (64u * 1024u * 1024u)
/* Largest integer a JSON double holds exactly (2^53): the bound of data_offsets. */
#define ST_MAX_OFFSET 9007199254740992.0
#define ST_MAX_DIM    1e12

/* ------------------------------------------------------------ bytes, dtypes */

static int host_is_little_endian(void) {
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* Reverses the bytes of each of the n elements of es bytes at p. */
static void swap_bytes(void *p, size_t n, int es) {
    unsigned char *b = p;
    for (size_t i = 0; i < n; i++, b += es)
        for (int k = 0; k < es / 2; k++) {
            unsigned char t = b[k];
            b[k] = b[es - 1 - k];
            b[es - 1 - k] = t;
        }
}

int safetensors_dtype_size(const char *dtype) {
    if (!strcmp(dtype, "F32")) return 4;
    if (!strcmp(dtype, "F16") || !strcmp(dtype, "BF16")) return 2;
    if (!strcmp(dtype, "F64")) return 8;
    return 0;
}

/* Element size of every dtype safetensors defines (the float ones attnviz
 * reads and the buffers that may sit beside them); 0 for any other name. */
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

unsigned short safetensors_f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000, a = x & 0x7fffffffu;
    if (a >= 0x7f800000u) return (unsigned short)(sign | 0x7c00 | (a > 0x7f800000u ? 0x200 : 0));   /* inf, NaN */
    if (a >= 0x477ff000u) return (unsigned short)(sign | 0x7c00);   /* ≥ 65520 rounds to infinity */
    if (a < 0x38800000u) {   /* under 2^-14: a subnormal half, the float times 2^24 rounded to even */
        float v;
        memcpy(&v, &a, sizeof v);
        return (unsigned short)(sign | (uint32_t)lrintf(v * 16777216.0f));
    }
    uint32_t h = ((a >> 23) - 127 + 15) << 10 | (a & 0x7fffff) >> 13, rest = a & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;   /* a carry into the exponent is right */
    return (unsigned short)(sign | h);
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

/* -------------------------------------------------------------- the header */

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

/* A JSON number that is a whole number in [0, max]. */
static int json_uint(const cJSON *it, double max, uint64_t *out) {
    if (!cJSON_IsNumber(it)) return -1;
    double v = it->valuedouble;
    if (!(v >= 0 && v <= max) || v != (double)(uint64_t)v) return -1;
    *out = (uint64_t)v;
    return 0;
}

/* "[2, 3]" */
static void shape_text(char *buf, size_t n, int ndim, const long *shape) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < ndim && k < n; d++) k += (size_t)snprintf(buf + k, n - k, "%s%ld", d ? ", " : "", shape[d]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorts names[0..n) and returns one that appears twice, or NULL. */
static const char *repeated_name(const char **names, size_t n) {
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 1; i < n; i++)
        if (!strcmp(names[i], names[i - 1])) return names[i];
    return NULL;
}

/* One header entry → t (name and file set by the caller): dtype, shape and
 * data_offsets inside the data_size bytes starting at data_start.  0, or -1 with err. */
static int parse_entry(StTensor *t, const cJSON *e, size_t data_start, uint64_t data_size, const char *path,
                       char *err, size_t errlen) {
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    if (!cJSON_IsObject(e) || !cJSON_IsString(dt) || !cJSON_IsArray(sh) || !cJSON_IsArray(off))
        return errmsg_set(err, errlen, "%s: tensor \"%s\": its header entry needs dtype, shape and data_offsets", path,
                          t->name);
    snprintf(t->dtype, sizeof t->dtype, "%s", dt->valuestring);
    t->ndim = cJSON_GetArraySize(sh);
    if (t->ndim > ST_MAX_DIMS)
        return errmsg_set(err, errlen, "%s: tensor \"%s\" has %d dimensions (at most %d)", path, t->name, t->ndim,
                          ST_MAX_DIMS);
    t->numel = 1;
    for (int d = 0; d < t->ndim; d++) {
        uint64_t v;
        if (json_uint(cJSON_GetArrayItem(sh, d), ST_MAX_DIM, &v) || (v && t->numel > SIZE_MAX / v))
            return errmsg_set(err, errlen, "%s: tensor \"%s\" has a bad shape (whole numbers up to 10^12 expected)",
                              path, t->name);
        t->shape[d] = (long)v;
        t->numel *= (size_t)v;
    }
    uint64_t b0, b1;
    if (cJSON_GetArraySize(off) != 2 || json_uint(cJSON_GetArrayItem(off, 0), ST_MAX_OFFSET, &b0) ||
        json_uint(cJSON_GetArrayItem(off, 1), ST_MAX_OFFSET, &b1))
        return errmsg_set(err, errlen, "%s: tensor \"%s\" has no valid data_offsets [begin, end]", path, t->name);
    if (b1 < b0 || b1 > data_size)
        return errmsg_set(err, errlen, "%s: tensor \"%s\" data_offsets [%llu, %llu] lie outside the %llu data bytes "
                          "(truncated or damaged file)", path, t->name, (unsigned long long)b0,
                          (unsigned long long)b1, (unsigned long long)data_size);
    t->begin = data_start + (size_t)b0;
    t->end = data_start + (size_t)b1;
    int es = any_dtype_size(t->dtype);
    if (es && (t->numel > SIZE_MAX / (size_t)es || t->numel * (size_t)es != t->end - t->begin)) {
        char s[200];
        shape_text(s, sizeof s, t->ndim, t->shape);
        return errmsg_set(err, errlen, "%s: tensor \"%s\" holds %llu bytes, its shape %s and dtype %s need %.0f", path,
                          t->name, (unsigned long long)(b1 - b0), s, t->dtype, (double)t->numel * es);
    }
    return 0;
}

/* __metadata__ (entry m of file): once, an object of strings, no key twice;
 * the first file's is kept in st.  0, or -1 with err. */
static int keep_meta(SafeTensors *st, int file, const cJSON *m, int *seen, const char *path, char *err,
                     size_t errlen) {
    if ((*seen)++) return errmsg_set(err, errlen, "%s: __metadata__ appears twice in the header", path);
    if (!cJSON_IsObject(m)) return errmsg_set(err, errlen, "%s: __metadata__ is not an object of strings", path);
    int n = cJSON_GetArraySize(m), k = 0;
    const char **keys = malloc((size_t)(n ? n : 1) * sizeof *keys);
    if (!keys) return errmsg_set(err, errlen, "out of memory reading %s", path);
    for (const cJSON *it = m->child; it; it = it->next) {
        if (!cJSON_IsString(it)) {
            free(keys);
            return errmsg_set(err, errlen, "%s: __metadata__ value \"%s\" is not a string", path, it->string);
        }
        keys[k++] = it->string;
    }
    const char *twice = repeated_name(keys, (size_t)k);
    int rc = twice ? errmsg_set(err, errlen, "%s: __metadata__ key \"%s\" appears twice", path, twice) : 0;
    free(keys);
    if (rc || file != 0 || n == 0) return rc;
    st->meta_key = calloc((size_t)n, sizeof *st->meta_key);
    st->meta_value = calloc((size_t)n, sizeof *st->meta_value);
    if (!st->meta_key || !st->meta_value) return errmsg_set(err, errlen, "out of memory reading %s", path);
    st->n_meta = n;   /* close frees what is copied, the rest is NULL */
    k = 0;
    for (const cJSON *it = m->child; it; it = it->next, k++) {
        st->meta_key[k] = strdup(it->string);
        st->meta_value[k] = strdup(it->valuestring);
        if (!st->meta_key[k] || !st->meta_value[k]) return errmsg_set(err, errlen, "out of memory reading %s", path);
    }
    return 0;
}

static int cmp_span(const void *a, const void *b) {
    const StTensor *x = *(const StTensor *const *)a, *y = *(const StTensor *const *)b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end < y->end ? -1 : x->end > y->end);
}

/* The tensors of one file, st->t[first..n): no name twice, no two sharing a byte. */
static int check_layout(const SafeTensors *st, int first, const char *path, char *err, size_t errlen) {
    size_t n = (size_t)(st->n - first);
    if (n < 2) return 0;
    const char **names = malloc(n * sizeof *names);
    const StTensor **by = malloc(n * sizeof *by);
    int rc = 0;
    if (!names || !by) rc = errmsg_set(err, errlen, "out of memory reading %s", path);
    for (size_t i = 0; rc == 0 && i < n; i++) { names[i] = st->t[first + i].name; by[i] = &st->t[first + i]; }
    const char *twice = rc ? NULL : repeated_name(names, n);
    if (twice) rc = errmsg_set(err, errlen, "%s: tensor \"%s\" appears twice in the header (damaged file)", path, twice);
    if (rc == 0) qsort(by, n, sizeof *by, cmp_span);
    const StTensor *far = NULL;   /* of the non-empty tensors so far, the one ending last */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (by[i]->end == by[i]->begin) continue;
        if (far && by[i]->begin < far->end)
            rc = errmsg_set(err, errlen, "%s: tensors \"%s\" and \"%s\" overlap in the file", path, far->name,
                            by[i]->name);
        far = by[i];
    }
    free(names);
    free(by);
    return rc;
}

/* Every entry of the header object j of file: metadata and tensors.  0, or -1 with err. */
static int add_entries(SafeTensors *st, int file, const cJSON *j, size_t data_start, uint64_t data_size,
                       char *err, size_t errlen) {
    const char *path = st->paths[file];
    int first = st->n, seen_meta = 0, rc = 0;
    for (const cJSON *e = j->child; e && rc == 0; e = e->next) {
        if (!strcmp(e->string, "__metadata__")) {
            rc = keep_meta(st, file, e, &seen_meta, path, err, errlen);
            continue;
        }
        StTensor t = {0};
        t.file = file;
        t.name = strdup(e->string);
        if (!t.name) return errmsg_set(err, errlen, "out of memory reading %s", path);
        rc = parse_entry(&t, e, data_start, data_size, path, err, errlen);
        if (rc == 0 && add_tensor(st, &t) != 0) rc = errmsg_set(err, errlen, "out of memory reading %s", path);
        if (rc != 0) free(t.name);
    }
    return rc ? rc : check_layout(st, first, path, err, errlen);
}

/* Reads len bytes at off of fd into buf, in pieces (pread may return less). */
static int read_at(int fd, void *buf, size_t len, size_t off) {
    unsigned char *p = buf;
    while (len > 0) {
        ssize_t r = pread(fd, p, len, (off_t)off);
        if (r <= 0) return -1;
        p += r; off += (size_t)r; len -= (size_t)r;
    }
    return 0;
}

/* The n header bytes as one JSON object followed by nothing but spaces, or NULL with err. */
static cJSON *parse_header(const char *hdr, size_t n, const char *path, char *err, size_t errlen) {
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(hdr, n, &end, 0);
    if (!j) { errmsg_set(err, errlen, "%s: the header is not valid JSON (damaged file?)", path); return NULL; }
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        errmsg_set(err, errlen, "%s: the header is not a JSON object", path);
        return NULL;
    }
    size_t at = end && end >= hdr && end <= hdr + n ? (size_t)(end - hdr) : n;
    while (at < n && hdr[at] == ' ') at++;
    if (at < n) {
        cJSON_Delete(j);
        errmsg_set(err, errlen, "%s: the header goes on after its JSON object (byte %zu of %zu is 0x%02x, where only "
                   "spaces may pad it): damaged file, or not a safetensors file", path, at, n, (unsigned char)hdr[at]);
        return NULL;
    }
    return j;
}

/* Reads the header of file (already open) and adds its metadata and tensors. */
static int read_header(SafeTensors *st, int file, size_t max_header, char *err, size_t errlen) {
    const char *path = st->paths[file];
    int fd = st->fds[file];
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) return errmsg_set(err, errlen, "%s is not a regular file", path);
    uint64_t fsize = (uint64_t)sb.st_size, n = 0;
    if (fsize < 8)
        return errmsg_set(err, errlen, "%s is too short (%llu bytes) to be a safetensors file", path,
                          (unsigned long long)fsize);
    unsigned char len8[8];
    if (read_at(fd, len8, 8, 0) != 0) return errmsg_set(err, errlen, "cannot read %s: %s", path, strerror(errno));
    for (int i = 7; i >= 0; i--) n = n << 8 | len8[i];
    if (n > max_header && n <= fsize - 8)
        return errmsg_set(err, errlen, "%s: the header is too long; the limit is %zu bytes (%.3g MB)", path, max_header,
                          (double)max_header / (1 << 20));
    if (n < 2 || n > fsize - 8 || n > max_header)   /* n is not echoed: the file may be anything (a symlink to /etc/shadow) */
        return errmsg_set(err, errlen, "%s: the header length is impossible for a %llu-byte file (not a safetensors "
                          "file, or truncated)", path, (unsigned long long)fsize);
    char *hdr = malloc(n + 1);
    if (!hdr) return errmsg_set(err, errlen, "out of memory reading %s", path);
    if (read_at(fd, hdr, n, 8) != 0) { free(hdr); return errmsg_set(err, errlen, "cannot read %s", path); }
    hdr[n] = '\0';
    cJSON *j = parse_header(hdr, n, path, err, errlen);
    free(hdr);
    if (!j) return -1;
    int rc = add_entries(st, file, j, 8 + (size_t)n, fsize - 8 - n, err, errlen);
    cJSON_Delete(j);
    return rc;
}

/* ------------------------------------------------------------------ opening */

/* Opens path as file number st->n_files and reads its header. */
static int open_one(SafeTensors *st, const char *path, size_t max_header, char *err, size_t errlen) {
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
    st->fds[i] = file_open_regular(path, err, errlen);   /* a FIFO or device never hangs the open */
    st->n_files++;
    if (st->fds[i] < 0) return -1;
    if (!st->paths[i]) return errmsg_set(err, errlen, "out of memory");
    return read_header(st, i, max_header, err, errlen);
}

int safetensors_open_limit(SafeTensors *st, const char *path, size_t max_header, char *err, size_t errlen) {
    memset(st, 0, sizeof *st);
    if (open_one(st, path, max_header ? max_header : ST_MAX_HEADER, err, errlen) != 0) {
        safetensors_close(st);
        return -1;
    }
    return 0;
}

int safetensors_open(SafeTensors *st, const char *path, char *err, size_t errlen) {
    return safetensors_open_limit(st, path, ST_MAX_HEADER, err, errlen);
}

/* A file name in the folder: not empty, no "/", no control character (a
 * message naming it stays one line). */
static int plain_name(const char *s) {
    if (!*s) return 0;
    for (; *s; s++)
        if (*s == '/' || (unsigned char)*s < 0x20 || *s == 0x7F) return 0;
    return 1;
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
        if (!cJSON_IsString(e) || !plain_name(e->valuestring)) {   /* names are not echoed: they may hold newlines */
            rc = errmsg_set(err, errlen, "%s: a weight_map entry is not a plain file name (no \"/\", no control "
                            "characters)", index_path);
            break;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->valuestring);
        int seen = 0;
        for (int f = 0; f < st->n_files && !seen; f++) seen = !strcmp(st->paths[f], path);
        if (!seen) rc = open_one(st, path, ST_MAX_HEADER, err, errlen);
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
        rc = open_one(st, path, ST_MAX_HEADER, err, errlen);
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

/* ------------------------------------------------------------------ reading */

const StTensor *safetensors_find(const SafeTensors *st, const char *name) {
    for (int i = 0; i < st->n; i++)
        if (!strcmp(st->t[i].name, name)) return &st->t[i];
    return NULL;
}

const char *safetensors_meta(const SafeTensors *st, const char *key) {
    for (int i = 0; i < st->n_meta; i++)
        if (!strcmp(st->meta_key[i], key)) return st->meta_value[i];
    return NULL;
}

char *safetensors_meta_json(const SafeTensors *st) {
    cJSON *o = cJSON_CreateObject();
    int ok = o != NULL;
    for (int i = 0; ok && i < st->n_meta; i++) ok = cJSON_AddStringToObject(o, st->meta_key[i], st->meta_value[i]) != NULL;
    char *txt = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return txt;
}

/* n halves (F16 or BF16 bits) to floats.  BF16 is the top half of a float32,
 * so its loop is a shift the compiler vectorises. */
static void halves_to_f32(float *restrict out, const unsigned short *restrict half, size_t n, int bf) {
    if (bf) {
        for (size_t i = 0; i < n; i++) {
            uint32_t u = (uint32_t)half[i] << 16;
            memcpy(&out[i], &u, 4);
        }
        return;
    }
    for (size_t i = 0; i < n; i++) out[i] = safetensors_f16_to_f32(half[i]);
}

/* n float64 values at byte off of tensor t's file into out, rounded to float32
 * (a value beyond float32's range is refused: it would become an infinity). */
static int read_f64(const SafeTensors *st, const StTensor *t, size_t off, size_t n, float *out, char *err,
                    size_t errlen) {
    double d[1 << 12];
    for (size_t done = 0; done < n;) {
        size_t k = n - done < sizeof d / 8 ? n - done : sizeof d / 8;
        if (read_at(st->fds[t->file], d, k * 8, off + done * 8) != 0)
            return errmsg_set(err, errlen, "cannot read tensor %s from %s", t->name, st->paths[t->file]);
        if (!host_is_little_endian()) swap_bytes(d, k, 8);
        for (size_t i = 0; i < k; i++) {
            if (isfinite(d[i]) && fabs(d[i]) > FLT_MAX)
                return errmsg_set(err, errlen, "%s: tensor %s holds %g, beyond float32's range", st->paths[t->file],
                                  t->name, d[i]);
            out[done + i] = (float)d[i];
        }
        done += k;
    }
    return 0;
}

/* Elements first .. first + n - 1 of tensor t into out, as float32.  0, or -1 with err. */
static int read_span_f32(const SafeTensors *st, const StTensor *t, size_t first, size_t n, float *out, char *err,
                         size_t errlen) {
    int es = safetensors_dtype_size(t->dtype);
    if (!es)
        return errmsg_set(err, errlen, "%s: tensor %s has dtype %s; attnviz reads F32, F16, BF16 and F64",
                          st->paths[t->file], t->name, t->dtype);
    int fd = st->fds[t->file], le = host_is_little_endian();
    size_t off = t->begin + first * (size_t)es;
    if (es == 4) {   /* little-endian float32: straight into place */
        if (read_at(fd, out, n * 4, off) != 0)
            return errmsg_set(err, errlen, "cannot read tensor %s from %s", t->name, st->paths[t->file]);
        if (!le) swap_bytes(out, n, 4);
        return 0;
    }
    if (es == 8) return read_f64(st, t, off, n, out, err, errlen);
    /* Half precision: in pieces through a buffer on the stack, converted. */
    unsigned short half[1 << 15];
    int bf = !strcmp(t->dtype, "BF16");
    for (size_t done = 0; done < n;) {
        size_t k = n - done < (sizeof half / 2) ? n - done : sizeof half / 2;
        if (read_at(fd, half, k * 2, off + done * 2) != 0)
            return errmsg_set(err, errlen, "cannot read tensor %s from %s", t->name, st->paths[t->file]);
        if (!le) swap_bytes(half, k, 2);
        halves_to_f32(out + done, half, k, bf);
        done += k;
    }
    return 0;
}

int safetensors_read_f32(const SafeTensors *st, const StTensor *t, float *out, char *err, size_t errlen) {
    return read_span_f32(st, t, 0, t->numel, out, err, errlen);
}

int safetensors_read_rows_f32(const SafeTensors *st, const StTensor *t, size_t row, size_t n_rows, float *out,
                              char *err, size_t errlen) {
    size_t cols = t->ndim > 0 && t->shape[0] > 0 ? t->numel / (size_t)t->shape[0] : 0;
    if (t->ndim < 1 || row > (size_t)t->shape[0] || n_rows > (size_t)t->shape[0] - row)
        return errmsg_set(err, errlen, "%s: tensor %s has no rows %zu..%zu", st->paths[t->file], t->name, row,
                          row + n_rows);
    return read_span_f32(st, t, row * cols, n_rows * cols, out, err, errlen);
}

const float *safetensors_map_f32(SafeTensors *st, const StTensor *t) {
    if (strcmp(t->dtype, "F32") != 0 || t->begin % 4 != 0 || !host_is_little_endian()) return NULL;
    int f = t->file;
    if (!st->maps[f]) {
        struct stat sb;
        if (fstat(st->fds[f], &sb) != 0 || sb.st_size <= 0) return NULL;
        /* Pages come in as the forward first reads them (no MAP_POPULATE): a GPT-2
         * forward of 64 tokens reads 64 rows of the 154 MB embedding table, and
         * populating all 500 MB up front cost more CPU than the faults. */
        void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, st->fds[f], 0);
        if (p == MAP_FAILED) return NULL;
        /* Pages read from the disk through this mapping come into the page cache
         * 2 MB at a time, and later runs map them 2 MB a fault (a hint: ignored
         * where unsupported).  GPT-2-small's 487 MB, cached so: first touch of
         * every page 4 ms and unmapping 6 ms, against 50 and 55 ms cached in
         * small pages (tests/bench_hf.py, as_read_from_disk). */
        madvise(p, (size_t)sb.st_size, MADV_HUGEPAGE);
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
    for (int i = 0; i < st->n_meta; i++) { free(st->meta_key[i]); free(st->meta_value[i]); }
    free(st->paths); free(st->fds); free(st->maps); free(st->map_len); free(st->t);
    free(st->meta_key); free(st->meta_value);
    memset(st, 0, sizeof *st);
}

/* ------------------------------------------------------------------ writing */

/* What safetensors_write is given: names, dtypes, shapes, data, metadata keys;
 * bytes[k] gets the size of tensor k.  0, or -1 with err. */
static int check_write(const StWriteTensor *t, int n, const char *const *meta, size_t *bytes, const char *path,
                       char *err, size_t errlen) {
    double total = 0;
    for (int k = 0; k < n; k++) {
        const char *name = t[k].name ? t[k].name : "(null)";
        int es = t[k].dtype ? any_dtype_size(t[k].dtype) : 0;
        if (!t[k].name || !strcmp(t[k].name, "__metadata__"))
            return errmsg_set(err, errlen, "cannot write %s: tensor %d is named \"%s\"", path, k, name);
        if (!es)
            return errmsg_set(err, errlen, "cannot write %s: tensor \"%s\" has dtype %s, which safetensors does not "
                              "define", path, name, t[k].dtype ? t[k].dtype : "(none)");
        if (t[k].ndim < 0 || t[k].ndim > ST_MAX_DIMS)
            return errmsg_set(err, errlen, "cannot write %s: tensor \"%s\" has %d dimensions", path, name, t[k].ndim);
        double numel = 1;
        for (int d = 0; d < t[k].ndim; d++) {
            if (t[k].shape[d] < 0 || t[k].shape[d] > ST_MAX_DIM)
                return errmsg_set(err, errlen, "cannot write %s: tensor \"%s\" has a bad shape", path, name);
            numel *= (double)t[k].shape[d];
        }
        total += numel * es;
        if (total > ST_MAX_OFFSET || numel * es > (double)SIZE_MAX)
            return errmsg_set(err, errlen, "cannot write %s: the tensors hold more than 2^53 bytes", path);
        bytes[k] = (size_t)numel * (size_t)es;
        if (bytes[k] && !t[k].data)
            return errmsg_set(err, errlen, "cannot write %s: tensor \"%s\" has no data", path, name);
    }
    int n_meta = 0;
    while (meta && meta[2 * n_meta] && meta[2 * n_meta + 1]) n_meta++;
    size_t n_names = (size_t)(n > n_meta ? n : n_meta);
    const char **names = malloc((n_names ? n_names : 1) * sizeof *names);
    if (!names) return errmsg_set(err, errlen, "out of memory writing %s", path);
    for (int k = 0; k < n; k++) names[k] = t[k].name;
    const char *twice = repeated_name(names, (size_t)n);
    int rc = twice ? errmsg_set(err, errlen, "cannot write %s: tensor \"%s\" appears twice", path, twice) : 0;
    for (int k = 0; k < n_meta; k++) names[k] = meta[2 * k];
    twice = rc ? NULL : repeated_name(names, (size_t)n_meta);
    if (twice) rc = errmsg_set(err, errlen, "cannot write %s: metadata key \"%s\" appears twice", path, twice);
    free(names);
    return rc;
}

/* Appends the whole number v to array a. */
static int add_uint(cJSON *a, double v) {
    cJSON *x = cJSON_CreateNumber(v);
    return x && cJSON_AddItemToArray(a, x) ? 0 : -1;
}

/* The header text (cJSON_free it), or NULL when out of memory. */
static char *header_text(const StWriteTensor *t, int n, const size_t *bytes, const char *const *meta) {
    cJSON *root = cJSON_CreateObject();
    int ok = root != NULL;
    if (ok && meta && meta[0] && meta[1]) {
        cJSON *m = cJSON_AddObjectToObject(root, "__metadata__");
        ok = m != NULL;
        for (int i = 0; ok && meta[i] && meta[i + 1]; i += 2) ok = cJSON_AddStringToObject(m, meta[i], meta[i + 1]) != NULL;
    }
    size_t off = 0;
    for (int k = 0; ok && k < n; k++) {
        cJSON *o = cJSON_AddObjectToObject(root, t[k].name);
        ok = o && cJSON_AddStringToObject(o, "dtype", t[k].dtype);
        cJSON *sh = ok ? cJSON_AddArrayToObject(o, "shape") : NULL;
        ok = sh != NULL;
        for (int d = 0; ok && d < t[k].ndim; d++) ok = add_uint(sh, (double)t[k].shape[d]) == 0;
        cJSON *of = ok ? cJSON_AddArrayToObject(o, "data_offsets") : NULL;
        ok = of && add_uint(of, (double)off) == 0 && add_uint(of, (double)(off + bytes[k])) == 0;
        off += bytes[k];
    }
    char *txt = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    return txt;
}

/* bytes of data, elements of es bytes in host order, to f little-endian.  0, or -1. */
static int write_le(FILE *f, const void *data, size_t bytes, int es) {
    if (bytes == 0) return 0;
    if (es == 1 || host_is_little_endian()) return fwrite(data, 1, bytes, f) == bytes ? 0 : -1;
    unsigned char buf[1 << 12];   /* a multiple of every element size */
    const unsigned char *p = data;
    while (bytes > 0) {
        size_t k = bytes < sizeof buf ? bytes : sizeof buf;
        memcpy(buf, p, k);
        swap_bytes(buf, k / (size_t)es, es);
        if (fwrite(buf, 1, k, f) != k) return -1;
        p += k;
        bytes -= k;
    }
    return 0;
}

int safetensors_write(const char *path, const StWriteTensor *t, int n, const char *const *meta, char *err,
                      size_t errlen) {
    if (n < 0) return errmsg_set(err, errlen, "cannot write %s: %d tensors", path, n);
    size_t *bytes = calloc((size_t)(n ? n : 1), sizeof *bytes);
    char *hdr = NULL;
    int rc = -1;
    if (!bytes) return errmsg_set(err, errlen, "out of memory writing %s", path);
    if (check_write(t, n, meta, bytes, path, err, errlen)) goto done;
    hdr = header_text(t, n, bytes, meta);
    if (!hdr) { errmsg_set(err, errlen, "out of memory writing %s", path); goto done; }
    size_t hlen = strlen(hdr), padded = (hlen + 7) / 8 * 8;
    AtomicFile af;
    if (atomic_open(&af, path, err, errlen)) goto done;
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    int ok = fwrite(len8, 1, 8, af.f) == 8 && fwrite(hdr, 1, hlen, af.f) == hlen;
    for (size_t i = hlen; ok && i < padded; i++) ok = fputc(' ', af.f) != EOF;
    for (int k = 0; ok && k < n; k++) ok = write_le(af.f, t[k].data, bytes[k], any_dtype_size(t[k].dtype)) == 0;
    if (!ok) {
        errmsg_set(err, errlen, "cannot write %s: %s", path, strerror(errno));
        atomic_abort(&af);
        goto done;
    }
    rc = atomic_commit(&af, err, errlen);
done:
    cJSON_free(hdr);
    free(bytes);
    return rc;
}
