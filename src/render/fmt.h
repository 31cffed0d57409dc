/* fmt.h — numbers as the pictures print them: cell values, tick labels, and
 * the tick step of an axis or colour bar; a text cut to its buffer that
 * says so (fmt_fit); a white-space token made visible (fmt_visible_token).
 *
 * Output is UTF-8 with the typographic minus U+2212 ("−0.5") and "−∞", "+∞",
 * "NaN" for non-finite values, written into the caller's buffer (cut to
 * outlen like snprintf; 32 bytes always suffice).  Nothing allocates. */
#ifndef ATTNVIZ_RENDER_FMT_H
#define ATTNVIZ_RENDER_FMT_H
#include <stddef.h>

/* One number format for every cell of a picture, chosen from its values:
 *   all whole numbers (the lesson's scores 4, 14)   → integers;
 *   any |v| ≥ 99999.5                                → exponent form ("−1e9");
 *   otherwise a fixed number of decimals: 2 below 10, 1 below 100, 0 above,
 *   raised (up to 3) while a value that is not 0 or ±1 would print as one
 *   (0.0031 → "0.003", 0.9969 → "0.997", never "0.00" or "1.00").
 * A value still too close to 0 or ±1 at 3 decimals prints as "≈0.000",
 * "≈1.000", and exactly ±1 as "1" (not "1.000"), so no picture shows a
 * non-zero weight as 0 or a weight below 1 as 1, and "1" means exactly 1.
 * Values with mask[k] == 0 and non-finite ones are left out of the choice. */
typedef struct { int decimals, exponent; } FmtCells;

FmtCells fmt_cells_choose(const float *values, long n, const unsigned char *mask);
void fmt_cell(const FmtCells *f, char *out, size_t outlen, float v);

/* A tick label: shortest form with the decimals the step needs ("0.25", "1",
 * "−10"); exponent form from 1e5. */
void fmt_tick(char *out, size_t outlen, double v, double step);
/* A round tick step (1, 2, 2.5 or 5 × 10^k) cutting range into about
 * `target` intervals; 1 for an empty range. */
double fmt_tick_step(double range, int target);

/* After `written = snprintf(buf, n, ...)`: when the text did not fit
 * (written >= n, or written < 0), ends what buf holds with "…" on a UTF-8
 * character boundary, so a cut title or caption never passes for whole.
 * Returns 1 if the text was cut, 0 if buf holds it all (then buf is untouched).
 * Below 4 bytes there is no room for "…": the text is only cut at a boundary.
 *
 *     fmt_fit(title, sizeof title, snprintf(title, sizeof title, "%s → %s", a, b)); */
int fmt_fit(char *buf, size_t n, int written);

/* A token made of white space only, as a label that can be seen: each space
 * "␣", newline "↵", tab "⇥", carriage return "\r" (into buf, cut to n);
 * any other token is returned as it is (buf untouched).  " " → "␣", "\n\n" →
 * "↵↵", "the" → "the". */
const char *fmt_visible_token(const char *tok, char *buf, size_t n);

#endif
