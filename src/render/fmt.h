/* fmt.h — numbers as the pictures print them: cell values, tick labels, and
 * the tick step of an axis or colour bar.
 *
 * Output is UTF-8 with the typographic minus U+2212 ("−0.5") and "−∞", "+∞",
 * "NaN" for non-finite values, written into the caller's buffer (cut to
 * outlen like snprintf; 32 bytes always suffice).  Nothing allocates. */
#ifndef ATTNVIZ_RENDER_FMT_H
#define ATTNVIZ_RENDER_FMT_H
#include <stddef.h>

/* A cell value: 2 decimals below 10 (whole numbers from 2 without), 1 below
 * 100, integers up to 99999, then compact exponent ("−1e9"). */
void fmt_value(char *out, size_t outlen, float v);
/* A tick label: shortest form with the decimals the step needs ("0.25", "1",
 * "−10"); exponent form from 1e5. */
void fmt_tick(char *out, size_t outlen, double v, double step);
/* A round tick step (1, 2, 2.5 or 5 × 10^k) cutting range into about
 * `target` intervals; 1 for an empty range. */
double fmt_tick_step(double range, int target);

#endif
