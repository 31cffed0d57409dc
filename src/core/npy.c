/* npy.c — see npy.h: NumPy's .npy arrays. */
#include "core/npy.h"
#include "core/errmsg.h"
#include "core/sizes.h"
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPY_MAX_HEADER (1u << 20)

typedef struct {
    int elem;          /* 4 or 8 */
    int big;           /* 1: big-endian */
    int fortran;
    int ndim;
    long shape[NPY_MAX_DIMS];
} NpyHeader;

/* The value after 'key': in the header dict h, or NULL. */
static const char *dict_value(const char *h, const char *key) {
    char quoted[32];
    for (int q = 0; q < 2; q++) {
        snprintf(quoted, sizeof quoted, q ? "\"%s\"" : "'%s'", key);
        const char *p = strstr(h, quoted);
        if (!p) continue;
        p += strlen(quoted);
        while (*p == ' ') p++;
        if (*p != ':') return NULL;
        p++;
        while (*p == ' ') p++;
        return p;
    }
    return NULL;
}

static int parse_descr(NpyHeader *hd, const char *h, const char *what, char *err, size_t errlen) {
    const char *v = dict_value(h, "descr");
    if (!v || (*v != '\'' && *v != '"')) return errmsg_set(err, errlen, "%s: the .npy header has no 'descr'", what);
    char d[16];
    size_t k = 0;
    for (v++; *v && *v != '\'' && *v != '"' && k + 1 < sizeof d; v++) d[k++] = *v;
    d[k] = '\0';
    if (!strcmp(d, "<f4") || !strcmp(d, "<f8") || !strcmp(d, ">f4") || !strcmp(d, ">f8")) {
        hd->big = d[0] == '>';
        hd->elem = d[2] - '0';
        return 0;
    }
    return errmsg_set(err, errlen, "%s: dtype '%s'; attnviz reads float32 and float64 arrays (.astype('float32'))",
                      what, d);
}

static int parse_shape(NpyHeader *hd, const char *h, const char *what, char *err, size_t errlen) {
    const char *v = dict_value(h, "shape");
    if (!v || *v != '(') return errmsg_set(err, errlen, "%s: the .npy header has no 'shape'", what);
    for (v++;;) {
        while (*v == ' ') v++;
        if (*v == ')') return 0;
        if (!isdigit((unsigned char)*v)) return errmsg_set(err, errlen, "%s: the .npy header's shape is not a tuple "
                                                            "of sizes", what);
        if (hd->ndim == NPY_MAX_DIMS)
            return errmsg_set(err, errlen, "%s: more than %d dimensions", what, NPY_MAX_DIMS);
        errno = 0;
        char *end;
        long x = strtol(v, &end, 10);
        if (errno || x > (long)NPY_MAX_FLOATS)
            return errmsg_set(err, errlen, "%s: a dimension of the shape is too large", what);
        hd->shape[hd->ndim++] = x;
        v = end;
        while (*v == ' ') v++;
        if (*v == ',') v++;
        else if (*v != ')') return errmsg_set(err, errlen, "%s: the .npy header's shape is not a tuple", what);
    }
}

static int parse_header(NpyHeader *hd, const char *h, const char *what, char *err, size_t errlen) {
    memset(hd, 0, sizeof *hd);
    if (parse_descr(hd, h, what, err, errlen) || parse_shape(hd, h, what, err, errlen)) return -1;
    const char *f = dict_value(h, "fortran_order");
    if (!f || (strncmp(f, "False", 5) && strncmp(f, "True", 4)))
        return errmsg_set(err, errlen, "%s: the .npy header has no 'fortran_order'", what);
    if (*f == 'T')
        return errmsg_set(err, errlen, "%s: the array is in Fortran order; save np.ascontiguousarray(a)", what);
    return 0;
}

/* The header's text (NUL-terminated, malloc'd) and where the data begins. */
static char *header_text(const unsigned char *buf, size_t n, size_t *data_at, const char *what, char *err,
                         size_t errlen) {
    if (n < 10 || memcmp(buf, "\x93NUMPY", 6) != 0) {
        errmsg_set(err, errlen, "%s is not a .npy file (no \\x93NUMPY magic; write it with numpy.save)", what);
        return NULL;
    }
    int major = buf[6];
    size_t hl, start;
    if (major == 1) { hl = buf[8] | (size_t)buf[9] << 8; start = 10; }
    else if ((major == 2 || major == 3) && n >= 12) {
        hl = buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        start = 12;
    } else {
        errmsg_set(err, errlen, "%s: .npy format version %d is not known to attnviz", what, major);
        return NULL;
    }
    if (hl > NPY_MAX_HEADER || !size_add(data_at, start, hl) || *data_at > n) {
        errmsg_set(err, errlen, "%s is truncated: its header runs past the end of the file", what);
        return NULL;
    }
    char *h = malloc(hl + 1);
    if (!h) { errmsg_set(err, errlen, "out of memory"); return NULL; }
    memcpy(h, buf + start, hl);
    h[hl] = '\0';
    if (strlen(h) != hl) { free(h); errmsg_set(err, errlen, "%s: the .npy header holds a NUL byte", what); return NULL; }
    return h;
}

/* Converts numel elements at p (elem bytes each, byte order big) to floats. */
static int convert(float *out, const unsigned char *p, size_t numel, const NpyHeader *hd, const char *what, char *err,
                   size_t errlen) {
    for (size_t i = 0; i < numel; i++, p += hd->elem) {
        unsigned char b[8];
        for (int k = 0; k < hd->elem; k++) b[k] = hd->big ? p[hd->elem - 1 - k] : p[k];
        if (hd->elem == 4) { memcpy(&out[i], b, 4); continue; }
        double d;
        memcpy(&d, b, 8);
        if (isfinite(d) && fabs(d) > FLT_MAX)
            return errmsg_set(err, errlen, "%s: value %g at element %zu is beyond float32's range", what, d, i);
        out[i] = (float)d;
    }
    return 0;
}

int npy_parse(NpyArray *out, const unsigned char *buf, size_t n, const char *what, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    size_t at, numel = 1, bytes;
    char *h = header_text(buf, n, &at, what, err, errlen);
    if (!h) return -1;
    NpyHeader hd;
    int rc = parse_header(&hd, h, what, err, errlen);
    free(h);
    if (rc) return -1;
    for (int d = 0; d < hd.ndim; d++)
        if (!size_mul(&numel, numel, (size_t)hd.shape[d]) || numel > NPY_MAX_FLOATS)
            return errmsg_set(err, errlen, "%s: the array holds more than %zu values", what, NPY_MAX_FLOATS);
    if (!size_mul(&bytes, numel, (size_t)hd.elem) || bytes > n - at)
        return errmsg_set(err, errlen, "%s is truncated: its shape needs %zu bytes of data, the file has %zu", what,
                          numel * (size_t)hd.elem, n - at);
    out->data = malloc((numel ? numel : 1) * sizeof(float));
    if (!out->data) return errmsg_set(err, errlen, "out of memory");
    out->ndim = hd.ndim;
    out->numel = numel;
    memcpy(out->shape, hd.shape, sizeof hd.shape);
    if (convert(out->data, buf + at, numel, &hd, what, err, errlen)) { npy_free(out); return -1; }
    return 0;
}

void npy_free(NpyArray *a) {
    if (!a) return;
    free(a->name);
    free(a->data);
    memset(a, 0, sizeof *a);
}
