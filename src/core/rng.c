/* rng.c — see rng.h. */
#include "core/rng.h"
#include <math.h>

double rng_normal(Rng *r) {
    if (r->has_spare) { r->has_spare = 0; return r->spare; }
    double u, v, s;
    do {
        u = 2 * rng_double(r) - 1;
        v = 2 * rng_double(r) - 1;
        s = u * u + v * v;
    } while (s >= 1 || s == 0);
    double f = sqrt(-2 * log(s) / s);
    r->spare = v * f;
    r->has_spare = 1;
    return u * f;
}
