/*
 * The worst value and the MAD outlier rule of outlier.h (the evidence
 * triggers' selection logic; docs/metrics.md states the rule).
 */
#include "analysis/outlier.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats.h"

long outlier_worst(const double *x, size_t n, int lower_better)
{
	long w = -1;
	for (size_t i = 0; i < n; i++)
		if (w < 0 || (lower_better ? x[i] > x[w] : x[i] < x[w]))
			w = (long)i;
	return w;
}

int outlier_mad(const double *x, size_t n, int lower_better, double k, unsigned char *flag,
		struct outlier_rule *r)
{
	r->n = n;
	r->median = r->mad = r->limit = NAN;
	if (!(k > 0) || (n && (!x || !flag))) {
		errno = EINVAL;
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (isnan(x[i])) {
			errno = EINVAL;
			return -1;
		}
		flag[i] = 0;
	}
	if (!n)
		return 0;
	double *dev = malloc(n * sizeof(double));
	if (!dev)
		return -1;
	if (stats_median(x, n, &r->median)) {
		free(dev);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		dev[i] = fabs(x[i] - r->median);
	int rc = stats_median(dev, n, &r->mad);
	free(dev);
	if (rc)
		return -1;
	if (n < OUTLIER_MIN_N)
		return 0;
	double allowed = fmax(k * OUTLIER_MAD_SCALE * r->mad, OUTLIER_MIN_REL * fabs(r->median));
	r->limit = lower_better ? r->median + allowed : r->median - allowed;
	int nf = 0;
	for (size_t i = 0; i < n; i++)
		if (lower_better ? x[i] > r->limit : x[i] < r->limit) {
			flag[i] = 1;
			nf++;
		}
	return nf;
}
