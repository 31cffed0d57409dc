/* jsonmat.c — see jsonmat.h.  Parsing by cJSON; the checks are ours. */
#include "core/jsonmat.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define JSONMAT_MAX_FILE (64u << 20)
#define JSONMAT_MAX_DIM 4096

void jsonmat_free(JsonMat *m) {
    if (!m) return;
    free(m->data);
    m->data = NULL;
    m->rows = m->cols = 0;
}

char *jsonmat_read_file(const char *path, size_t max_bytes, const char *what, char *err, size_t errlen) {
    /* the argument was not inline JSON: say so when it is not a usable file either */
    struct stat st;
    if (stat(path, &st) != 0) {
        errmsg_set(err, errlen, "%s: cannot read '%s': %s (give inline JSON like [[1,2],[3,4]] or an existing file)",
                   what, path, strerror(errno));
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        errmsg_set(err, errlen, "%s: '%s' is a folder, not a JSON file", what, path);
        return NULL;
    }
    if ((size_t)st.st_size > max_bytes) {
        errmsg_set(err, errlen, "%s: '%s' is too large (%lld bytes; at most %zu)", what, path,
                   (long long)st.st_size, max_bytes);
        return NULL;
    }
    char why[512];
    size_t n = 0;
    char *buf = file_read_all(path, max_bytes, &n, why, sizeof why);
    if (!buf) { errmsg_set(err, errlen, "%s: %s", what, why); return NULL; }
    if (memchr(buf, '\0', n)) {
        free(buf);
        errmsg_set(err, errlen, "%s: '%s' is a binary file, not JSON text", what, path);
        return NULL;
    }
    return buf;
}

static void where(const char *text, const char *at, int *line, int *col) {
    *line = 1; *col = 1;
    for (const char *p = text; p < at && *p; p++) {
        if (*p == '\n') { (*line)++; *col = 1; } else (*col)++;
    }
}

static int parse_values(JsonMat *out, const char *text, const char *what, int mask,
                        char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        int line = 1, col = 1;
        if (at) where(text, at, &line, &col);
        const char *p = text;
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
        if (!*p)
            errmsg_set(err, errlen, "%s is empty (expected rows of numbers like [[1,2],[3,4]])", what);
        else
            errmsg_set(err, errlen, "%s is not valid JSON (line %d, column %d); expected rows of numbers like [[1,2],[3,4]]",
                       what, line, col);
        return -1;
    }
    int rc = -1;
    if (!cJSON_IsArray(root)) {
        errmsg_set(err, errlen, "%s must be a JSON array of rows, like [[1,2],[3,4]]", what);
        goto cleanup;
    }
    int rows = cJSON_GetArraySize(root);
    if (rows == 0) {
        errmsg_set(err, errlen, "%s is an empty matrix (give at least one row with one number)", what);
        goto cleanup;
    }
    /* A flat array of numbers is one row. */
    int flat = !cJSON_IsArray(cJSON_GetArrayItem(root, 0));
    int cols = flat ? rows : cJSON_GetArraySize(cJSON_GetArrayItem(root, 0));
    if (flat) rows = 1;
    if (cols == 0) {
        errmsg_set(err, errlen, "%s: row 0 is empty (every row needs at least one number)", what);
        goto cleanup;
    }
    if (rows > JSONMAT_MAX_DIM || cols > JSONMAT_MAX_DIM) {
        errmsg_set(err, errlen, "%s is %d×%d; at most %d rows and columns", what, rows, cols, JSONMAT_MAX_DIM);
        goto cleanup;
    }
    out->data = malloc((size_t)rows * cols * sizeof(float));
    if (!out->data) { errmsg_set(err, errlen, "%s: out of memory", what); goto cleanup; }
    out->rows = rows; out->cols = cols;
    for (int i = 0; i < rows; i++) {
        const cJSON *row = flat ? root : cJSON_GetArrayItem(root, i);
        if (!cJSON_IsArray(row)) {
            errmsg_set(err, errlen, "%s: row %d is not an array (mix of rows and numbers?)", what, i);
            goto cleanup;
        }
        if (cJSON_GetArraySize(row) != cols) {
            errmsg_set(err, errlen, "%s: row %d has %d values but row 0 has %d (rows must all be the same length)",
                       what, i, cJSON_GetArraySize(row), cols);
            goto cleanup;
        }
        for (int j = 0; j < cols; j++) {
            const cJSON *x = cJSON_GetArrayItem(row, j);
            if (!cJSON_IsNumber(x)) {
                errmsg_set(err, errlen, "%s: value at row %d, column %d is not a number", what, i, j);
                goto cleanup;
            }
            double d = x->valuedouble;
            float fv = (float)d;
            if (!isfinite(d) || !isfinite(fv)) {
                errmsg_set(err, errlen, "%s: value at row %d, column %d is too large for float32 (|x| must be below 3.4e38)",
                           what, i, j);
                goto cleanup;
            }
            if (mask && !(d == 0.0 || d == 1.0)) {
                errmsg_set(err, errlen, "%s: value at row %d, column %d is %g; a mask holds only 0 (masked) and 1 (may attend)",
                           what, i, j, d);
                goto cleanup;
            }
            out->data[(size_t)i * cols + j] = fv;
        }
    }
    rc = 0;
cleanup:
    cJSON_Delete(root);
    if (rc != 0) jsonmat_free(out);
    return rc;
}

int jsonmat_parse_text(JsonMat *out, const char *text, const char *what, char *err, size_t errlen) {
    return parse_values(out, text, what, 0, err, errlen);
}

static int parse_arg(JsonMat *out, const char *arg, const char *what, int mask, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    const char *p = arg;
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    if (*p == '[' || *p == '\0' || *p == '{')
        return parse_values(out, arg, what, mask, err, errlen);
    char *text = jsonmat_read_file(arg, JSONMAT_MAX_FILE, what, err, errlen);
    if (!text) return -1;
    char label[256];
    snprintf(label, sizeof label, "%s (file %s)", what, arg);
    int rc = parse_values(out, text, label, mask, err, errlen);
    free(text);
    return rc;
}

int jsonmat_parse_arg(JsonMat *out, const char *arg, const char *what, char *err, size_t errlen) {
    return parse_arg(out, arg, what, 0, err, errlen);
}

int jsonmat_parse_mask(JsonMat *out, const char *arg, const char *what, char *err, size_t errlen) {
    return parse_arg(out, arg, what, 1, err, errlen);
}
