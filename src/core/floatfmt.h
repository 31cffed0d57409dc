/* floatfmt.h — a float32 as decimal text, fast, for the JSON writers (the
 * trace, the page's data).
 *
 * float_format(x, P, out) writes the fewest significant digits (1 to P) that
 * read back (strtof) as x itself; when no P digits do, x rounded to P digits.
 * Laid out as printf's "%.Pg" lays out its digits: fixed notation for
 * exponents −4 ≤ X < P, else "d.ddde±XX"; no trailing zeros.  So P = 9 gives
 * the shortest text that keeps every float32 exactly (0.1f → "0.1", where
 * "%.9g" prints "0.100000001"), and P = 6 the digits of "%.6g".
 *
 * Digits are computed with exact integer arithmetic for |x| < 1e18: 64 bits
 * for most numbers below 2^24 (every attention weight above 1e-8), 128 bits
 * for the rest from 1e-10 up, 256 bits below (a trained model's weights reach
 * 1e-30 and the subnormals); larger values (and non-finite ones: "inf", "-inf", "nan")
 * go through snprintf, which gives the same text ten times slower.  −0
 * prints as "-0".
 * out holds at least FLOAT_FORMAT_MAX bytes; nothing allocates; thread-safe. */
#ifndef ATTNVIZ_FLOATFMT_H
#define ATTNVIZ_FLOATFMT_H

#define FLOAT_FORMAT_MAX 32

/* P from 1 to 9 (clamped).  Returns the text's length. */
int float_format(float x, int P, char *out);

#endif
