/*
 * The error rate of verdicts on sides paired by seed (docs/statistics.md
 * "Paired by seed"), by simulation: `make bench-paired` prints the table
 * the doc shows. Each trial draws n seeds; seed r gives both sides the same
 * perturbation e_r ~ N(0, s_seed) (what a seeded start does to every
 * kernel alike) and each side its own response u ~ N(0, s_own) (how the
 * kernels differ in their answer to the seed):
 *
 *     a_r = 100 exp(e_r + u_ar),   b_r = 100 (1 + delta) exp(e_r + u_br),
 *
 * optionally rounded to whole units (a latency in microseconds: ties and
 * exact data). The verdict is what compare makes of one metric: the
 * verdict with the seeds (or without, for the unpaired column), then
 * compare's Benjamini-Hochberg step, which for one metric keeps a better or
 * worse only when its p <= 0.05. An error is a better or worse when delta
 * is 0 (no change) or lies within the 2% threshold (+1%); the power column
 * is "worse" at +10%. Deterministic: a fixed seed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/stats.h"
#include "analysis/verdict.h"

static double gauss(struct stats_rng *r)
{
	double u = (stats_rng_next(r) >> 11) * 0x1.0p-53, v = (stats_rng_next(r) >> 11) * 0x1.0p-53;
	return sqrt(-2.0 * log(u + 1e-300)) * cos(2 * M_PI * v);
}

/* 1 when compare would say better or worse */
static int decides(const double *a, const double *b, const int64_t *seeds, size_t n, int paired)
{
	struct verdict_options o;
	struct verdict v;
	verdict_options_default(&o, VERDICT_LOWER_IS_BETTER);
	o.resamples = 2000;
	if (paired)
		o.seed_a = o.seed_b = seeds;
	if (verdict_compare(a, n, b, n, &o, &v))
		return 0;
	return (v.kind == VERDICT_BETTER || v.kind == VERDICT_WORSE) && v.p <= 0.05;
}

int main(int argc, char **argv)
{
	int trials = argc > 1 ? atoi(argv[1]) : 2000;
	static const size_t ns[] = { 3, 6, 10 };
	static const double sseed[] = { 0.0, 0.05, 0.3 };
	static const double sown[] = { 0.002, 0.02 };
	static const double deltas[] = { 0.0, 0.01, 0.10 };
	struct stats_rng rng;
	stats_rng_seed(&rng, 20261207);
	printf("# %d trials a cell; threshold 2%%, level 0.95; an error: better/worse at "
	       "+0%% or +1%%; power: worse at +10%%\n", trials);
	printf("| n | seed sd | own sd | grid | paired: error at 0 / +1%% | power at +10%% | "
	       "unpaired: error at 0 / +1%% | power at +10%% |\n|---|---|---|---|---|---|---|---|\n");
	double *a = malloc(16 * sizeof(double)), *b = malloc(16 * sizeof(double));
	int64_t seeds[16];
	for (int grid = 0; grid < 2; grid++)
		for (size_t in = 0; in < sizeof(ns) / sizeof(ns[0]); in++)
			for (size_t is = 0; is < sizeof(sseed) / sizeof(sseed[0]); is++)
				for (size_t io = 0; io < sizeof(sown) / sizeof(sown[0]); io++) {
					size_t n = ns[in];
					double rate[2][3] = { { 0 } };
					for (size_t id = 0; id < 3; id++)
						for (int t = 0; t < trials; t++) {
							for (size_t r = 0; r < n; r++) {
								double e = sseed[is] * gauss(&rng);
								a[r] = 100 * exp(e + sown[io] * gauss(&rng));
								b[r] = 100 * (1 + deltas[id]) *
								       exp(e + sown[io] * gauss(&rng));
								if (grid) {
									a[r] = round(a[r] / 5);
									b[r] = round(b[r] / 5);
								}
								seeds[r] = (int64_t)r + 1;
							}
							for (int p = 0; p < 2; p++)
								rate[p][id] += decides(a, b, seeds, n, !p);
						}
					printf("| %zu | %.3g | %.3g | %s |", n, sseed[is], sown[io],
					       grid ? "1/20" : "-");
					for (int p = 0; p < 2; p++)
						printf(" %.3f / %.3f | %.3f |", rate[p][0] / trials,
						       rate[p][1] / trials, rate[p][2] / trials);
					printf("\n");
					fflush(stdout);
				}
	free(a);
	free(b);
	return 0;
}
