/* npy.h — the one reader of NumPy's .npy arrays (numpy.save) and .npz
 * archives (numpy.savez, savez_compressed: a zip of .npy members, stored or
 * deflated), as float32, for `attnviz view`.
 *
 * .npy (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
 *   "\x93NUMPY", major, minor, header length (2 bytes in 1.0, 4 in 2.0 and
 *   3.0, little-endian), then a Python dict literal
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with
 *   spaces, then the data.  Read: descr '<f4', '<f8' (and '>' byte orders),
 *   C order, 0 to NPY_MAX_DIMS dimensions.  Every size read from the file is
 *   checked (core/sizes.h) before use; a file shorter than its shape says is
 *   named "truncated".  float64 values outside float32's range are refused
 *   (they would become infinities); NaN is kept (the caller decides).
 * .npz: the zip's central directory (zip64 sizes too) lists the members; each
 *   member "NAME.npy", stored (method 0) or deflated (8, zlib's inflate), its
 *   CRC-32 checked, becomes array NAME.  Members that are not .npy are refused.
 *
 * Ownership: an NpyArray owns its name and data (npy_free); npz_parse gives a
 * malloc'd list, freed with npz_free.  Errors: -1 and one line in err. */
#ifndef ATTNVIZ_NPY_H
#define ATTNVIZ_NPY_H
#include <stddef.h>

#define NPY_MAX_DIMS 8
/* What one array (or an archive's members together) may hold: 2^28 floats, 1 GB. */
#define NPY_MAX_FLOATS ((size_t)1 << 28)
#define NPZ_MAX_MEMBERS 4096

typedef struct {
    char *name;                 /* NULL for a lone .npy */
    int ndim;
    long shape[NPY_MAX_DIMS];
    size_t numel;
    float *data;                /* (numel) row-major */
} NpyArray;

/* One .npy file's n bytes.  `what` names it in messages (the path).  0, or -1. */
int npy_parse(NpyArray *out, const unsigned char *buf, size_t n, const char *what, char *err, size_t errlen);
void npy_free(NpyArray *a);

/* A .npz archive's n bytes: *out gets *n_out arrays, in the zip's order.  0, or -1. */
int npz_parse(NpyArray **out, int *n_out, const unsigned char *buf, size_t n, const char *what, char *err,
              size_t errlen);
void npz_free(NpyArray *a, int n);

#endif
