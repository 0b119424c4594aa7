/*
 * Latency histograms: the one representation used for cyclictest's per-thread
 * histograms, the native workloads' latencies, merged runs and percentiles.
 *
 * Two bucket schemes, both dense arrays of counts:
 *
 *  HIST_LINEAR  bucket i holds values in [i, i+1) of the unit (cyclictest's
 *               -h N gives 1 us buckets 0..N-1). Exact to the unit.
 *
 *  HIST_LOGLIN  log-linear buckets as in HdrHistogram and fio's "plat" stats:
 *               values below 2^s (s = sub_bits) get one bucket per unit; every
 *               further power-of-two range [2^k, 2^(k+1)) is split into 2^s
 *               equal buckets of width 2^(k-s). A value is reported as the
 *               midpoint of its bucket, so the relative error of any reported
 *               value, and of any percentile, is at most 2^-(s+1) (s=5: 1.6%;
 *               s=7: 0.4%). Recording is O(1) with no floating point.
 *
 * Samples beyond the last bucket are counted in `overflow` (their values are
 * unknown: cyclictest only reports how many there were). A percentile whose
 * rank falls into the overflow is reported as HIST_IN_OVERFLOW with the
 * overflow's lower bound, never as a silently too-low number.
 *
 * Merging is lossless for histograms of the same scheme and geometry: counts
 * add. Percentiles of several runs are always taken from the merge, never by
 * averaging per-run percentiles.
 */
#ifndef SL_HIST_H
#define SL_HIST_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

enum hist_scheme { HIST_LINEAR = 1, HIST_LOGLIN = 2 };

/* the most samples a histogram holds (2^53: exact in a double, far from
 * uint64 overflow); parsers refuse counts beyond it */
#define HIST_COUNT_MAX (1LL << 53)

struct hist {
	enum hist_scheme scheme;
	int sub_bits;          /* HIST_LOGLIN only */
	size_t nbuckets;
	uint64_t *counts;
	uint64_t overflow;     /* samples beyond the last bucket */
	uint64_t total;        /* every sample, overflow included */
	double min, max;       /* exact extremes when known (NAN otherwise) */
};

enum hist_pct { HIST_OK = 0, HIST_IN_OVERFLOW = 1, HIST_EMPTY = 2 };

int hist_init_linear(struct hist *h, size_t nbuckets);
/* log-linear covering [0, 2^max_pow2) */
int hist_init_loglin(struct hist *h, int sub_bits, int max_pow2);
void hist_free(struct hist *h);
void hist_reset(struct hist *h);

size_t hist_bucket_of(const struct hist *h, uint64_t v);   /* nbuckets if beyond */
/* the HIST_LOGLIN bucket of v for sub_bits s, unbounded (the caller compares
 * it with nbuckets); inline for hot paths that record without hist_record */
static inline size_t hist_loglin_index(int s, uint64_t v)
{
	uint64_t sub = (uint64_t)1 << s;
	if (v < sub)
		return (size_t)v;
	int k = 63 - __builtin_clzll(v);          /* v in [2^k, 2^(k+1)) */
	return (size_t)(k - s + 1) * (size_t)sub + (size_t)((v >> (k - s)) - sub);
}
double hist_bucket_lo(const struct hist *h, size_t i);
double hist_bucket_hi(const struct hist *h, size_t i);
/* the value a bucket stands for: lo for HIST_LINEAR, midpoint for HIST_LOGLIN */
double hist_bucket_value(const struct hist *h, size_t i);

void hist_record(struct hist *h, uint64_t v);
void hist_record_n(struct hist *h, uint64_t v, uint64_t n);
void hist_add_overflow(struct hist *h, uint64_t n);
/* -1 when schemes or geometry differ */
int hist_merge(struct hist *dst, const struct hist *src);
int hist_copy(struct hist *dst, const struct hist *src);

/* p in [0, 100]. Nearest-rank definition: the smallest bucket value such that
 * at least p% of all samples (overflow included) are at or below it. */
enum hist_pct hist_percentile(const struct hist *h, double p, double *out);
double hist_mean(const struct hist *h);   /* of in-range samples; NAN if none */
/* the upper end of the range: the lower bound of every overflow sample (the
 * value a percentile in the overflow is reported as) */
double hist_range_end(const struct hist *h);
/* overflow / total (0 when empty) */
double hist_overflow_fraction(const struct hist *h);
/* a histogram is called out as too small for its data (progress line,
 * report) when more than this share of its samples is in the overflow */
#define HIST_OVERFLOW_WARN 0.001

/* storage form: {"scheme":"linear"|"loglin","sub_bits":s,"nbuckets":n,
 *  "buckets":[[index,count],...] (non-zero only),"overflow":o,"total":t,
 *  "min":x,"max":y} */
json_t *hist_to_json(const struct hist *h);
int hist_from_json(struct hist *h, const json_t *j);

#endif
