/* rng.h: the demo's own small random number generator (splitmix64), shared
 * by the data loader and the weight initialisation. The demo does not use
 * rand() so that the data, the initial weights and therefore the printed loss
 * curve are the same on every machine and every run. Each stream is seeded
 * from (seed, stream number), so a batch is a pure function of its index and
 * comes out the same whichever worker thread makes it. */
#ifndef TRAIN_MLP_RNG_H
#define TRAIN_MLP_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct rng {
    uint64_t state;
} rng;

/* The splitmix64 finaliser: a bijection that scatters nearby inputs. */
static inline uint64_t rng_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Mixing the stream number before combining it keeps the streams of
 * neighbouring batches far apart in the splitmix sequence. */
static inline rng rng_stream(uint64_t seed, uint64_t stream)
{
    rng r = {rng_mix(seed ^ rng_mix(stream + 1))};
    return r;
}

static inline uint64_t rng_next(rng *r)
{
    r->state += 0x9E3779B97F4A7C15ull;
    return rng_mix(r->state);
}

/* Uniform in (0, 1]: never 0, so logf() below stays finite. */
static inline float rng_uniform(rng *r)
{
    return (float)((rng_next(r) >> 40) + 1) * (1.0f / 16777216.0f);
}

/* Standard normal by Box-Muller. Only the cosine half is used: simpler, and
 * the loader wants the CPU cost anyway. */
static inline float rng_gauss(rng *r)
{
    float u1 = rng_uniform(r), u2 = rng_uniform(r);
    return sqrtf(-2.0f * logf(u1)) * cosf(6.2831853f * u2);
}

#endif /* TRAIN_MLP_RNG_H */
