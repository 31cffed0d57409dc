/* safetensors.h — the one reader and writer of safetensors files: the own
 * checkpoints (model/checkpoint.h), the training state, and the files of
 * Hugging Face folders (save_pretrained), one file or a sharded set.
 *
 * Format (https://github.com/huggingface/safetensors):
 *   8 bytes   N, the header length, unsigned little-endian
 *   N bytes   JSON: { "__metadata__": { "KEY": "VALUE", ... }, "NAME": { "dtype": "F32",
 *             "shape": [...], "data_offsets": [begin, end] }, ... }, padded with
 *             spaces (this writer pads to a multiple of 8)
 *   the data, little-endian; offsets are relative to the end of the header.
 * A sharded checkpoint is a folder with model.safetensors.index.json, whose
 * "weight_map" names the shard file of every tensor.
 *
 * Reading.  Opening reads only the headers and checks every entry before any
 * data is used: the header length against the file and a limit, one JSON
 * object followed by nothing but spaces, __metadata__ (at most once) a map of
 * strings to strings, every tensor with a dtype, a shape of integers and
 * integer data_offsets [begin, end] inside the data (a truncated file is named
 * as such), end - begin = numel · element size for every dtype safetensors
 * defines, no name twice, no two tensors overlapping.  Other dtypes are listed
 * but cannot be read.  Data is read on demand with pread, converted to float32
 * from F32, F16, BF16 or F64 (refused beyond float32's range).  The metadata of the first file is kept, in header
 * order.
 *
 * Writing.  safetensors_write takes named tensors (dtype, shape, data in host
 * order) and metadata pairs and writes, atomically (core/fileio.h: a temporary
 * renamed onto the path, nothing left on error), the header
 *   {"__metadata__":{pairs in order},"NAME":{"dtype":…,"shape":[…],"data_offsets":[b,e]},…}
 * in the tensors' order (cJSON's unformatted print), padded with spaces to a
 * multiple of 8, then the tensors back to back in that order.  It refuses what
 * the reader refuses (a name or key twice, an unknown dtype).
 *
 * Errors: -1 and one line in err (core/errmsg.h).  safetensors_close releases
 * everything and accepts a zeroed or half-opened set. */
#ifndef ATTNVIZ_SAFETENSORS_H
#define ATTNVIZ_SAFETENSORS_H
#include <stddef.h>

#define ST_MAX_DIMS 8
/* The header limit of safetensors_open and safetensors_open_dir: real
 * checkpoints have tens to hundreds of kB; 16 MB bounds the JSON parse of a
 * hostile header to about 600 MB of memory (cJSON ~40× the text). */
#define ST_MAX_HEADER (16u * 1024u * 1024u)

typedef struct {
    char *name;
    char dtype[12];            /* "F32", "F16", "BF16", "I64", …            */
    int ndim;
    long shape[ST_MAX_DIMS];
    size_t numel;
    int file;                  /* index into SafeTensors.paths               */
    size_t begin, end;         /* absolute byte offsets in that file         */
} StTensor;

typedef struct {
    int n_files;
    char **paths;              /* (n_files) the files, as opened             */
    int *fds;                  /* (n_files) open descriptors, -1 when closed */
    void **maps;               /* (n_files) read-only mappings, or NULL      */
    size_t *map_len;           /* (n_files)                                  */
    StTensor *t;               /* (n) every tensor of every file             */
    int n, cap;
    char **meta_key;           /* (n_meta) the first file's __metadata__,    */
    char **meta_value;         /* (n_meta)   in header order                 */
    int n_meta;
} SafeTensors;

/* One .safetensors file, its header at most ST_MAX_HEADER bytes.  0, or -1 with err. */
int safetensors_open(SafeTensors *st, const char *path, char *err, size_t errlen);
/* The same with another header limit (bytes; 0 means ST_MAX_HEADER). */
int safetensors_open_limit(SafeTensors *st, const char *path, size_t max_header, char *err, size_t errlen);

/* A Hugging Face folder: DIR/model.safetensors, or the shards listed by
 * DIR/model.safetensors.index.json.  0, or -1 with err. */
int safetensors_open_dir(SafeTensors *st, const char *dir, char *err, size_t errlen);

/* The tensor called name, or NULL. */
const StTensor *safetensors_find(const SafeTensors *st, const char *name);

/* The __metadata__ value of key, or NULL (valid until safetensors_close). */
const char *safetensors_meta(const SafeTensors *st, const char *key);
/* The __metadata__ as one JSON object text, {"KEY":"VALUE",…} in header order
 * ("{}" when there is none); malloc'd, the caller frees.  NULL when out of memory. */
char *safetensors_meta_json(const SafeTensors *st);

/* Bytes per element of a dtype attnviz reads (F32 4, F16 2, BF16 2, F64 8), else 0. */
int safetensors_dtype_size(const char *dtype);

/* Reads tensor t into out (t->numel floats), converting F16/BF16.  0, or -1. */
int safetensors_read_f32(const SafeTensors *st, const StTensor *t, float *out, char *err, size_t errlen);
/* Rows row .. row + n_rows - 1 of tensor t (a row: numel / shape[0] elements)
 * into out, converted like safetensors_read_f32.  0, or -1 with err. */
int safetensors_read_rows_f32(const SafeTensors *st, const StTensor *t, size_t row, size_t n_rows, float *out,
                              char *err, size_t errlen);

/* Tensor t in place, when it is float32 and 4-byte aligned: a pointer into
 * its file mapped read-only (the whole file is mapped, and its pages
 * populated, on first use; valid until safetensors_close).  NULL otherwise,
 * or when mapping fails (then read it with safetensors_read_f32). */
const float *safetensors_map_f32(SafeTensors *st, const StTensor *t);

/* One half-precision value to float (exact). */
float safetensors_f16_to_f32(unsigned short h);
float safetensors_bf16_to_f32(unsigned short h);
/* A float rounded to the nearest half-precision value, ties to even (as
 * NumPy's astype(float16)): past 65504 infinity, below 2^-24 zero. */
unsigned short safetensors_f32_to_f16(float f);

void safetensors_close(SafeTensors *st);

/* ---- writing ---- */

/* One tensor to write. */
typedef struct {
    const char *name;
    const char *dtype;         /* any dtype safetensors defines: "F32", "F16", "BF16", "I64", … */
    int ndim;                  /* 0 (a scalar) … ST_MAX_DIMS                 */
    long shape[ST_MAX_DIMS];
    const void *data;          /* numel elements in host byte order (may be NULL when numel is 0) */
} StWriteTensor;

/* Writes the n tensors t, in that order, and the metadata meta (NULL, or a
 * NULL-terminated list key, value, key, value, …; the list also ends at a key
 * whose value is NULL; no __metadata__ is written when it holds no pair) to
 * path, atomically.  0, or -1 with err. */
int safetensors_write(const char *path, const StWriteTensor *t, int n, const char *const *meta, char *err,
                      size_t errlen);

#endif
