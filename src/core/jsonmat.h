/* jsonmat.h — matrices from JSON: inline text ("[[1,2],[3,4]]") or a file path.
 *
 * The accepted form is a JSON array of rows, each an array of numbers, all rows
 * the same length, at least one row and one column; a flat array of numbers is
 * one row.  Every value must be finite as float32 (1e39 is refused).  Masks are
 * the same shape with 0/1 values only.  Errors return -1 with one line in err
 * saying what is wrong and where (row/column, or line:column of bad JSON). */
#ifndef ATTNVIZ_JSONMAT_H
#define ATTNVIZ_JSONMAT_H
#include <stddef.h>

typedef struct {
    int rows, cols;
    float *data;        /* (rows, cols) row-major, owned */
} JsonMat;

/* `arg` is inline JSON if it starts (after blanks) with '[', else a file path.
 * `what` names the matrix in messages ("--q").  0 ok, -1 error. */
int jsonmat_parse_arg(JsonMat *out, const char *arg, const char *what, char *err, size_t errlen);
/* Parses JSON text (not a path). */
int jsonmat_parse_text(JsonMat *out, const char *text, const char *what, char *err, size_t errlen);
/* Like jsonmat_parse_arg, but every value must be exactly 0 or 1. */
int jsonmat_parse_mask(JsonMat *out, const char *arg, const char *what, char *err, size_t errlen);
void jsonmat_free(JsonMat *m);

/* Reads a whole text file (refuses binary files and files over max_bytes).
 * Returns a NUL-terminated malloc'd buffer or NULL with a message. */
char *jsonmat_read_file(const char *path, size_t max_bytes, const char *what, char *err, size_t errlen);

#endif
