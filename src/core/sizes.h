/* sizes.h — products and sums of sizes read from a file, checked before use.
 *
 * A size that comes from a file (a config's widths, a header's counts) is
 * untrusted until every product and sum made of it is known not to wrap:
 * size_t arithmetic wraps silently, and a wrapped count allocates a small
 * block that the real count then overruns.  Every loader of family/ computes
 * its counts through these two (stb_image's mad3sizes_valid, SQLite's
 * sqlite3MulInt64) and compares the result with its limits before it
 * allocates.
 *
 *   size_mul(&n, a, b)   n = a·b; 0 (n untouched) when it would wrap
 *   size_add(&n, a, b)   n = a + b; 0 when it would wrap
 *   size_mul3(&n, a, b, c)  n = a·b·c
 * Each returns 1 when the result is exact.  Header only, no state. */
#ifndef ATTNVIZ_SIZES_H
#define ATTNVIZ_SIZES_H
#include <stddef.h>
#include <stdint.h>

static inline int size_mul(size_t *out, size_t a, size_t b) {
    if (b && a > SIZE_MAX / b) return 0;
    *out = a * b;
    return 1;
}

static inline int size_add(size_t *out, size_t a, size_t b) {
    if (a > SIZE_MAX - b) return 0;
    *out = a + b;
    return 1;
}

static inline int size_mul3(size_t *out, size_t a, size_t b, size_t c) {
    size_t ab;
    return size_mul(&ab, a, b) && size_mul(out, ab, c);
}

#endif
