/* npz.c — see npy.h: NumPy's .npz archives, a zip of .npy members.  The zip
 * is read from its central directory (the end record at most 64 kB + 22 bytes
 * from the end); each member is found through its local header, inflated with
 * zlib when deflated, and checked against its CRC-32. */
#include "core/npy.h"
#include "core/errmsg.h"
#include "core/sizes.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define ZIP_EOCD 0x06054b50u
#define ZIP_CENTRAL 0x02014b50u
#define ZIP_LOCAL 0x04034b50u

static unsigned rd16(const unsigned char *p) { return p[0] | (unsigned)p[1] << 8; }
static uint32_t rd32(const unsigned char *p) { return rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const unsigned char *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* One member as the central directory lists it. */
typedef struct {
    char name[256];
    unsigned method;
    uint32_t crc;
    uint64_t csize, usize, local;
} ZipEntry;

/* Zip64's extra field (id 1) replaces the sizes and offset given as 0xFFFFFFFF, in that order. */
static int zip64_extra(ZipEntry *e, const unsigned char *x, size_t xn) {
    uint64_t *want[3] = {&e->usize, &e->csize, &e->local};
    while (xn >= 4) {
        unsigned id = rd16(x), len = rd16(x + 2);
        if (len > xn - 4) return -1;
        if (id == 1) {
            size_t at = 4;
            for (int k = 0; k < 3; k++) {
                if (*want[k] != 0xFFFFFFFFu) continue;
                if (at + 8 > 4 + (size_t)len) return -1;
                *want[k] = rd64(x + at);
                at += 8;
            }
            return 0;
        }
        x += 4 + len;
        xn -= 4 + len;
    }
    return 0;
}

/* Central directory entry at p (n bytes left): fills e, *used its length.  0, or -1. */
static int central_entry(ZipEntry *e, const unsigned char *p, size_t n, size_t *used) {
    if (n < 46 || rd32(p) != ZIP_CENTRAL) return -1;
    size_t nl = rd16(p + 28), xl = rd16(p + 30), cl = rd16(p + 32);
    if (46 + nl + xl + cl > n || nl == 0 || nl >= sizeof e->name) return -1;
    memset(e, 0, sizeof *e);
    e->method = rd16(p + 10);
    e->crc = rd32(p + 16);
    e->csize = rd32(p + 20);
    e->usize = rd32(p + 24);
    e->local = rd32(p + 42);
    memcpy(e->name, p + 46, nl);
    if (memchr(e->name, '\0', nl)) return -1;
    *used = 46 + nl + xl + cl;
    return zip64_extra(e, p + 46 + nl, xl);
}

/* The member's data: a pointer into buf (stored) or an inflated malloc'd copy (*owned). */
static const unsigned char *member_bytes(const ZipEntry *e, const unsigned char *buf, size_t n, unsigned char **owned,
                                         const char *what, char *err, size_t errlen) {
    *owned = NULL;
    size_t at, end;
    if (e->local > n || n - e->local < 30 || rd32(buf + e->local) != ZIP_LOCAL ||
        !size_add(&at, (size_t)e->local + 30, (size_t)rd16(buf + e->local + 26) + rd16(buf + e->local + 28)) ||
        e->csize > SIZE_MAX || !size_add(&end, at, (size_t)e->csize) || end > n) {
        errmsg_set(err, errlen, "%s is truncated or damaged: member %s runs past the end of the file", what, e->name);
        return NULL;
    }
    if (e->usize > NPY_MAX_FLOATS * 8 + (1u << 20)) {
        errmsg_set(err, errlen, "%s: member %s is too large (%llu bytes)", what, e->name, (unsigned long long)e->usize);
        return NULL;
    }
    /* deflate expands at most 1032-fold: a larger size is a lie, refused before it is allocated */
    if ((e->method == 0 && e->csize != e->usize) || (e->method == 8 && e->usize / 1032 > e->csize + 1)) {
        errmsg_set(err, errlen, "%s: member %s is damaged (its sizes disagree)", what, e->name);
        return NULL;
    }
    const unsigned char *data = buf + at;
    if (e->method == 8) {
        unsigned char *out = malloc(e->usize ? (size_t)e->usize : 1);
        if (!out) { errmsg_set(err, errlen, "out of memory"); return NULL; }
        z_stream z = {0};
        int ok = inflateInit2(&z, -MAX_WBITS) == Z_OK;
        z.next_in = (unsigned char *)data;
        z.avail_in = (uInt)e->csize;
        z.next_out = out;
        z.avail_out = (uInt)e->usize;
        ok = ok && e->csize <= UINT32_MAX && inflate(&z, Z_FINISH) == Z_STREAM_END && z.total_out == e->usize;
        inflateEnd(&z);
        if (!ok) { free(out); errmsg_set(err, errlen, "%s: member %s does not inflate (damaged or truncated)", what, e->name); return NULL; }
        data = *owned = out;
    } else if (e->method != 0) {
        errmsg_set(err, errlen, "%s: member %s uses zip method %u; attnviz reads stored and deflated members", what,
                   e->name, e->method);
        return NULL;
    }
    if (crc32(0L, data, (uInt)e->usize) != e->crc) {
        free(*owned);
        *owned = NULL;
        errmsg_set(err, errlen, "%s: member %s fails its CRC-32 check (damaged file)", what, e->name);
        return NULL;
    }
    return data;
}

/* The end of central directory record: where the directory starts and how many entries. */
static int find_directory(const unsigned char *buf, size_t n, size_t *dir, size_t *count, const char *what, char *err,
                          size_t errlen) {
    for (size_t back = 22; back <= n && back <= 22 + 65535; back++) {
        const unsigned char *p = buf + n - back;
        if (rd32(p) != ZIP_EOCD) continue;
        *count = rd16(p + 10);
        *dir = rd32(p + 16);
        if (*dir > n - back) break;
        return 0;
    }
    return errmsg_set(err, errlen, "%s is not a .npz archive, or is truncated (no zip directory at its end; write it "
                      "with numpy.savez)", what);
}

/* Member e as array NAME (e's name without ".npy"). */
static int read_member(NpyArray *a, const ZipEntry *e, const unsigned char *buf, size_t n, const char *what, char *err,
                       size_t errlen) {
    size_t nl = strlen(e->name);
    if (nl < 5 || strcmp(e->name + nl - 4, ".npy") != 0)
        return errmsg_set(err, errlen, "%s: member %s is not a .npy array", what, e->name);
    unsigned char *owned;
    const unsigned char *data = member_bytes(e, buf, n, &owned, what, err, errlen);
    if (!data) return -1;
    char label[600];
    snprintf(label, sizeof label, "%s, member %s", what, e->name);
    int rc = npy_parse(a, data, (size_t)e->usize, label, err, errlen);
    free(owned);
    if (rc == 0 && !(a->name = strndup(e->name, nl - 4))) { npy_free(a); return errmsg_set(err, errlen, "out of memory"); }
    return rc;
}

int npz_parse(NpyArray **out, int *n_out, const unsigned char *buf, size_t n, const char *what, char *err,
              size_t errlen) {
    *out = NULL;
    *n_out = 0;
    size_t dir = 0, count = 0, total = 0;
    if (find_directory(buf, n, &dir, &count, what, err, errlen)) return -1;
    if (count == 0) return errmsg_set(err, errlen, "%s holds no array", what);
    if (count > NPZ_MAX_MEMBERS) return errmsg_set(err, errlen, "%s holds more than %d arrays", what, NPZ_MAX_MEMBERS);
    NpyArray *a = calloc(count, sizeof *a);
    if (!a) return errmsg_set(err, errlen, "out of memory");
    for (size_t i = 0; i < count; i++) {
        ZipEntry e;
        size_t used;
        if (central_entry(&e, buf + dir, n - dir, &used) != 0) {
            npz_free(a, (int)i);
            return errmsg_set(err, errlen, "%s is truncated or damaged: its zip directory breaks at entry %zu", what, i);
        }
        dir += used;
        if (read_member(&a[i], &e, buf, n, what, err, errlen) || !size_add(&total, total, a[i].numel) ||
            total > NPY_MAX_FLOATS) {
            if (a[i].data) errmsg_set(err, errlen, "%s holds more than %zu values", what, NPY_MAX_FLOATS);
            npz_free(a, (int)i + 1);
            return -1;
        }
    }
    *out = a;
    *n_out = (int)count;
    return 0;
}

void npz_free(NpyArray *a, int n) {
    for (int i = 0; a && i < n; i++) npy_free(&a[i]);
    free(a);
}
