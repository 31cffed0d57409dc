/* safetensors.h — reading tensors from safetensors files written by others
 * (Hugging Face's save_pretrained), one file or a sharded set.
 *
 * Format (https://github.com/huggingface/safetensors):
 *   8 bytes   N, the header length, unsigned little-endian
 *   N bytes   JSON: { "__metadata__": {...}, "NAME": { "dtype": "F32",
 *             "shape": [...], "data_offsets": [begin, end] }, ... }
 *   the data; offsets are relative to the end of the header.
 * A sharded checkpoint is a folder with model.safetensors.index.json, whose
 * "weight_map" names the shard file of every tensor.
 *
 * Opening reads only the headers and checks every entry: known fields, offsets
 * inside the file (a truncated file is named as such), end - begin = numel ·
 * element size for the dtypes attnviz reads (F32, F16, BF16).  Other dtypes
 * (I64 buffers such as position_ids) are listed but cannot be read.  Data is
 * read on demand with pread, converted to float32.
 *
 * Errors: -1 and one line in err (core/errmsg.h).  safetensors_close releases
 * everything and accepts a zeroed or half-opened set. */
#ifndef ATTNVIZ_SAFETENSORS_H
#define ATTNVIZ_SAFETENSORS_H
#include <stddef.h>

#define ST_MAX_DIMS 8

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
} SafeTensors;

/* One .safetensors file.  0, or -1 with err. */
int safetensors_open(SafeTensors *st, const char *path, char *err, size_t errlen);

/* A Hugging Face folder: DIR/model.safetensors, or the shards listed by
 * DIR/model.safetensors.index.json.  0, or -1 with err. */
int safetensors_open_dir(SafeTensors *st, const char *dir, char *err, size_t errlen);

/* The tensor called name, or NULL. */
const StTensor *safetensors_find(const SafeTensors *st, const char *name);

/* Bytes per element of a dtype attnviz reads (F32 4, F16 2, BF16 2), else 0. */
int safetensors_dtype_size(const char *dtype);

/* Reads tensor t into out (t->numel floats), converting F16/BF16.  0, or -1. */
int safetensors_read_f32(const SafeTensors *st, const StTensor *t, float *out, char *err, size_t errlen);

/* Tensor t in place, when it is float32 and 4-byte aligned: a pointer into
 * its file mapped read-only (the whole file is mapped, and its pages
 * populated, on first use; valid until safetensors_close).  NULL otherwise,
 * or when mapping fails (then read it with safetensors_read_f32). */
const float *safetensors_map_f32(SafeTensors *st, const StTensor *t);

/* One half-precision value to float (exact). */
float safetensors_f16_to_f32(unsigned short h);
float safetensors_bf16_to_f32(unsigned short h);

void safetensors_close(SafeTensors *st);

#endif
