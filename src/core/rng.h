/* rng.h — the one source of random numbers: seeded, the same on every platform,
 * so every picture, corpus and training run can be reproduced bit for bit.
 *
 * Rng is xorshift64* (Vigna 2016): the stream for weight initialisation,
 * dropout masks and the demo's sampled experiments.  splitmix64 (Steele et al.
 * 2014) is the mixer that turns a seed or a key into well-spread bits; the
 * corpus and the training data order draw from it directly (changing either
 * would change the shipped model that `make model` reproduces).
 *
 * The small functions are inline: dropout draws one number per activation. */
#ifndef ATTNVIZ_RNG_H
#define ATTNVIZ_RNG_H
#include <stdint.h>

typedef struct {
    uint64_t s;        /* xorshift64* state, never 0                     */
    int has_spare;     /* rng_normal draws pairs: the second one waits   */
    double spare;
} Rng;

/* A generator started from state s (0 is replaced by 1). */
static inline Rng rng_from_state(uint64_t s) { Rng r = {s ? s : 1, 0, 0.0}; return r; }

/* xorshift64*: the next 64 random bits. */
static inline uint64_t rng_next(Rng *r) {
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1DULL;
}

/* Uniform float in [0, 1), 24 random bits. */
static inline float rng_float(Rng *r) { return (float)(rng_next(r) >> 40) * (1.0f / 16777216.0f); }

/* Uniform double in (0, 1), 53 random bits, never 0 or 1. */
static inline double rng_double(Rng *r) { return ((rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

/* Standard normal (Marsaglia's polar method on rng_double). */
double rng_normal(Rng *r);

/* splitmix64: advances *state and returns 64 well-mixed bits. */
static inline uint64_t rng_splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform integer in [0, n) from the splitmix64 stream (n > 0). */
static inline int rng_splitmix_below(uint64_t *state, int n) {
    return (int)((rng_splitmix64(state) >> 11) % (uint64_t)n);
}

#endif
