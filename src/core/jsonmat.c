/* jsonmat.c — see jsonmat.h.  Our own small parser (memory: the floats), and our checks. */
#include "core/jsonmat.h"
#include "core/errmsg.h"
#include "core/fileio.h"
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

/* A small parser of exactly what we accept (an array of rows of numbers, or
 * one flat row): memory is the floats themselves, 4 bytes a value, so a large
 * file costs its size plus its matrix (cJSON took ~40 bytes a value). */
typedef struct {
    const char *text, *p, *what;
    int mask;
    float *data; size_t n, cap;   /* values so far, row-major */
    int rows, cols;               /* cols: row 0's length once known (-1 before) */
    char *err; size_t errlen;
} MatParser;

static void skip_ws(MatParser *m) { while (*m->p == ' ' || *m->p == '\t' || *m->p == '\n' || *m->p == '\r') m->p++; }

static int bad_json(MatParser *m) {
    int line, col;
    where(m->text, m->p, &line, &col);
    return errmsg_set(m->err, m->errlen, "%s is not valid JSON (line %d, column %d); expected rows of numbers like "
                      "[[1,2],[3,4]]", m->what, line, col);
}

/* One JSON number at m->p into *x; -1 (message) when it is not one. */
static int parse_number(MatParser *m, double *x, int row, int col) {
    const char *q = m->p;
    if (*q == '"' || *q == '{' || *q == '[' || !strncmp(q, "true", 4) || !strncmp(q, "false", 5) || !strncmp(q, "null", 4))
        return errmsg_set(m->err, m->errlen, "%s: value at row %d, column %d is not a number", m->what, row, col);
    if (*q == '-') q++;
    if (*q == '0') q++;
    else if (*q >= '1' && *q <= '9') while (*q >= '0' && *q <= '9') q++;
    else { m->p = q; return bad_json(m); }
    if (*q == '.') { q++; if (!(*q >= '0' && *q <= '9')) { m->p = q; return bad_json(m); } while (*q >= '0' && *q <= '9') q++; }
    if (*q == 'e' || *q == 'E') {
        q++;
        if (*q == '+' || *q == '-') q++;
        if (!(*q >= '0' && *q <= '9')) { m->p = q; return bad_json(m); }
        while (*q >= '0' && *q <= '9') q++;
    }
    *x = strtod(m->p, NULL);
    m->p = q;
    return 0;
}

static int push_value(MatParser *m, double d, int row, int col) {
    float fv = (float)d;
    if (!isfinite(d) || !isfinite(fv))
        return errmsg_set(m->err, m->errlen, "%s: value at row %d, column %d is too large for float32 (|x| must be "
                          "below 3.4e38)", m->what, row, col);
    if (m->mask && !(d == 0.0 || d == 1.0))
        return errmsg_set(m->err, m->errlen, "%s: value at row %d, column %d is %g; a mask holds only 0 (masked) and "
                          "1 (may attend)", m->what, row, col, d);
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        float *nd = realloc(m->data, cap * sizeof *nd);
        if (!nd) return errmsg_set(m->err, m->errlen, "%s: out of memory (%zu values)", m->what, cap);
        m->data = nd; m->cap = cap;
    }
    m->data[m->n++] = fv;
    return 0;
}

/* One row "[x, y, …]" (m->p after its '['), as row number row. */
static int parse_row(MatParser *m, int row) {
    int j = 0;
    skip_ws(m);
    if (*m->p == ']') {
        if (row == 0) return errmsg_set(m->err, m->errlen, "%s: row 0 is empty (every row needs at least one number)", m->what);
    } else {
        for (;; j++) {
            double d;
            skip_ws(m);
            if (j >= JSONMAT_MAX_DIM)
                return errmsg_set(m->err, m->errlen, "%s has more than %d columns; at most %d rows and columns", m->what,
                                  JSONMAT_MAX_DIM, JSONMAT_MAX_DIM);
            if (parse_number(m, &d, row, j) || push_value(m, d, row, j)) return -1;
            skip_ws(m);
            if (*m->p == ',') { m->p++; continue; }
            if (*m->p == ']') { j++; break; }
            return bad_json(m);
        }
    }
    m->p++;
    if (row == 0) m->cols = j;
    else if (j != m->cols)
        return errmsg_set(m->err, m->errlen, "%s: row %d has %d values but row 0 has %d (rows must all be the same "
                          "length)", m->what, row, j, m->cols);
    return 0;
}

/* The rows of "[[…], […], …]" (m->p at the first inner '['). */
static int parse_rows(MatParser *m) {
    for (int i = 0;; i++) {
        skip_ws(m);
        if (*m->p != '[') {
            if (*m->p == '-' || (*m->p >= '0' && *m->p <= '9'))
                return errmsg_set(m->err, m->errlen, "%s: row %d is not an array (mix of rows and numbers?)", m->what, i);
            return bad_json(m);
        }
        if (i >= JSONMAT_MAX_DIM)
            return errmsg_set(m->err, m->errlen, "%s has more than %d rows; at most %d rows and columns", m->what,
                              JSONMAT_MAX_DIM, JSONMAT_MAX_DIM);
        m->p++;
        if (parse_row(m, i)) return -1;
        m->rows = i + 1;
        skip_ws(m);
        if (*m->p == ',') { m->p++; continue; }
        if (*m->p == ']') { m->p++; return 0; }
        return bad_json(m);
    }
}

static int parse_values(JsonMat *out, const char *text, const char *what, int mask,
                        char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    MatParser m = {.text = text, .p = text, .what = what, .mask = mask, .cols = -1, .err = err, .errlen = errlen};
    skip_ws(&m);
    if (!*m.p) return errmsg_set(err, errlen, "%s is empty (expected rows of numbers like [[1,2],[3,4]])", what);
    if (*m.p != '[') {
        if (strchr("{\"-0123456789tfn", *m.p))
            return errmsg_set(err, errlen, "%s must be a JSON array of rows, like [[1,2],[3,4]]", what);
        return bad_json(&m);
    }
    m.p++;
    skip_ws(&m);
    int rc = -1;
    if (*m.p == ']') {
        errmsg_set(err, errlen, "%s is an empty matrix (give at least one row with one number)", what);
    } else if (*m.p == '[') {
        rc = parse_rows(&m);
    } else {   /* a flat array of numbers is one row */
        rc = parse_row(&m, 0);
        m.rows = 1;
    }
    if (rc == 0) {
        skip_ws(&m);
        if (*m.p) rc = bad_json(&m);
    }
    if (rc != 0) { free(m.data); return -1; }
    out->data = m.data;
    out->rows = m.rows;
    out->cols = m.cols;
    return 0;
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
