/* trace_bin.h — the compact binary form of a Trace (docs/trace-format.md,
 * "The binary trace"), for long texts and big models, where printing every
 * number as JSON text takes many times longer than computing it.
 *
 * Layout (all integers little-endian), version 3:
 *   8 bytes   "ATVZTRCB"
 *   4 bytes   version, 3
 *   4 bytes   0 (reserved)
 *   8 bytes   H, where the header starts (from the start of the file)
 *   8 bytes   N, the header length
 *   zero bytes up to byte 64, where the data starts
 *   the data: each matrix row-major, little-endian float32 (−∞ as −∞), each
 *             mask one byte a cell; O counts from byte 64 and is a multiple
 *             of 64
 *   N bytes   at H, JSON: the members of trace.json, every matrix replaced by
 *             {"offset": O, "shape": [rows, cols]} (float32) and every mask by
 *             {"offset": O, "shape": [Tq, Tk], "dtype": "u8"} (or null); a
 *             square weights or norm_weighted matrix with only +0.0 above its
 *             diagonal (a causal map's) has "layout": "lower" and is written
 *             as its lower triangle: row i's first i + 1 cells, rows in order
 * The header comes last so that a long text's maps can be written one layer
 * at a time as the forward pass makes them (trace_bin_begin, _add_map, _end)
 * and the members only known at the end (images, importance) still go in.
 * NumPy reads a matrix as np.memmap(path, "<f4", "r", 64 + O, shape),
 * a lower triangle of n rows as the n(n+1)/2 floats there, put into
 * np.zeros((n, n))[np.tril_indices(n)].  GPT-2 on 512 tokens: 77 MB.
 *
 * Ownership: nothing is kept; the file is written atomically (core/fileio.h).
 * The header is built with cJSON; so are the cJSON forms of a map below. */
#ifndef ATTNVIZ_TRACE_BIN_H
#define ATTNVIZ_TRACE_BIN_H
#include <stddef.h>
#include "core/fileio.h"
#include "trace/trace.h"

#define TRACE_BIN_MAGIC "ATVZTRCB"
#define TRACE_BIN_VERSION 3
#define TRACE_BIN_DATA 64    /* where the data starts */
#define TRACE_BIN_ALIGN 64

/* Writes t in the binary form to path, atomically; refuses (-1) a trace with a
 * non-finite number other than a masked cell's −∞ (trace_check_finite), as
 * trace_write_json does.  0, or -1 with a message in err. */
int trace_write_bin(const Trace *t, const char *path, char *err, size_t errlen);

/* How trace_write_bin_with writes: weights_f16 1 writes every head's weights
 * as half precision (IEEE 754 binary16, little-endian, "dtype": "f16", each
 * value rounded to the nearest half, ties to even): half the bytes, and a
 * weight in [0, 1] off by at most 2^-12 (2.44e-4; 2^-25 under 2^-14); the
 * other matrices stay float32 (scores can pass f16's 65504). */
typedef struct {
    int weights_f16;
} TraceBinOptions;

/* trace_write_bin with options (NULL: the defaults, float32 throughout). */
int trace_write_bin_with(const Trace *t, const char *path, const TraceBinOptions *o, char *err, size_t errlen);

/* A trace.bin written one map at a time, atomically (core/fileio.h): begin,
 * add each map once its heads are complete (it may be freed after), end with
 * the trace whose other members (model, tokens, sections, images) go into the
 * header.  Each call 0, or -1 with err; after a failed add the caller
 * calls trace_bin_abort (the target is left as it was); a failed end has
 * aborted by itself.  abort accepts a zeroed, ended or aborted writer. */
typedef struct {
    AtomicFile af;
    struct cJSON *maps;  /* the maps written so far, their matrices as slots */
    size_t next;         /* offset of the next matrix from the data start   */
    int weights_f16;
    int failed;
    float *tri;          /* room to gather a lower triangle                  */
    size_t tri_cap;      /* floats                                           */
} TraceBinWriter;

int trace_bin_begin(TraceBinWriter *w, const char *path, const TraceBinOptions *o, char *err, size_t errlen);
int trace_bin_add_map(TraceBinWriter *w, const TraceMap *m, char *err, size_t errlen);
int trace_bin_end(TraceBinWriter *w, const Trace *t, char *err, size_t errlen);
void trace_bin_abort(TraceBinWriter *w);
/* Reads back head `head` of the map-th map written so far into out (Tq × Tk
 * floats, a lower triangle's upper cells 0, f16 widened): what the file holds,
 * for a view that needs a whole head after the maps were freed.  0, or -1 with err. */
int trace_bin_read_weights(TraceBinWriter *w, int map, int head, float *out, char *err, size_t errlen);

/* 1 when path names a binary trace (it ends in ".bin"), else 0. */
int trace_path_is_bin(const char *path);

/* The same maps as cJSON values with every matrix inline (the form `attnviz
 * forward` writes for the bundled model): trace_map_cjson gives {"id", "d_k",
 * "queries", "keys", "mask" (rows of 0/1, or null), "heads": [{one member per
 * matrix the head holds, named and ordered as trace_head_parts}]};
 * trace_matrix_cjson one rows × cols matrix as rows of numbers (non-finite
 * cells null).  The caller cJSON_Deletes them; NULL out of memory. */
struct cJSON *trace_map_cjson(const TraceMap *m);
struct cJSON *trace_matrix_cjson(const float *x, int rows, int cols);

#endif
