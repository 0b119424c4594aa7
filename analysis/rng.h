/*
 * The one pseudo-random generator: xoshiro256** (Blackman and Vigna) with
 * its state filled by splitmix64 from one 64-bit value, so that the same
 * seed gives the same stream on every platform. Not for cryptography.
 * analysis/stats.h (stats_rng: resampling, permutations) and the native
 * workloads (workloads/native/libnative.h: nat_rng, think times) draw
 * from it, each with its own seeding.
 */
#ifndef SL_ANALYSIS_RNG_H
#define SL_ANALYSIS_RNG_H

#include <stdint.h>

/* fill the four words of state s from x through splitmix64 */
void rng_fill(uint64_t s[4], uint64_t x);
/* the next 64 bits of the stream of state s */
uint64_t rng_next(uint64_t s[4]);

#endif
