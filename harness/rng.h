/*
 * rng.h - seeded pseudo-random numbers (xoshiro256**, seeded by splitmix64).
 * Each thread owns its own qc_rng, derived from the run seed and a stream
 * number (as pgbench derives one per client), so a run replays from --seed.
 * Not thread-safe: one qc_rng per thread.
 */
#ifndef QC_RNG_H
#define QC_RNG_H

#include <stdint.h>

typedef struct qc_rng {
    uint64_t s[4];
} qc_rng;

/* Seeds r from (seed, stream): the same pair gives the same sequence. */
void qc_rng_init(qc_rng *r, uint64_t seed, uint64_t stream);
uint64_t qc_rng_next(qc_rng *r);
/* Uniform double in [0, 1). */
double qc_rng_unit(qc_rng *r);
/* Uniform integer in [lo, hi] (inclusive); lo when hi <= lo. */
long qc_rng_range(qc_rng *r, long lo, long hi);

#endif
