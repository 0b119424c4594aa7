/*
 * Change-point detection: E-divisive means with a Student's t stop rule,
 * run on overlapping windows and merged over the whole series (the scheme of
 * Hunter / Apache Otava, written from its description; see changepoint.h and
 * docs/statistics.md). Everything here is deterministic and allocation is
 * local to each call except the result array handed to the caller.
 */
#include "analysis/changepoint.h"
#include "analysis/stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void cp_options_default(struct cp_options *o)
{
	o->window = CP_DEFAULT_WINDOW;
	o->max_pvalue = CP_DEFAULT_PVALUE;
	o->min_magnitude = CP_DEFAULT_MAGNITUDE;
}

/*
 * q(tau) = xy/(x+y) * (2/(xy) C - 2/x^2 Wx - 2/y^2 Wy) with x = tau,
 * y = n - tau, C the sum of |a - b| across the split, Wx and Wy the sums of
 * |a - b| over unordered pairs inside each side (the V-statistic form of the
 * energy divergence: it is >= 0 and its expectation under "no change" does
 * not depend on tau, so short edge segments are not favoured). The sums are
 * updated as tau moves one point from the right to the left: O(n^2).
 */
void cp_qhat(const double *x, size_t n, double *q)
{
	double cross = 0.0, wx = 0.0, wy = 0.0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			wy += fabs(x[i] - x[j]);
	for (size_t tau = 0; tau < n; tau++) {
		double lx = (double)tau, ly = (double)(n - tau);
		if (tau == 0) {
			q[tau] = 0.0;
		} else {
			double c = cross * 2.0 / (lx * ly);
			double a = 2.0 * wx / (lx * lx);
			double b = 2.0 * wy / (ly * ly);
			q[tau] = lx * ly / (lx + ly) * (c - a - b);
		}
		double col = 0.0, row = 0.0;
		for (size_t i = 0; i < tau; i++)
			col += fabs(x[i] - x[tau]);
		for (size_t j = tau + 1; j < n; j++)
			row += fabs(x[tau] - x[j]);
		cross += row - col;
		wx += col;
		wy -= row;
	}
}

static double magnitude(double before, double after)
{
	if (before == after)
		return 0.0;
	if (before == 0.0 || after == 0.0)
		return INFINITY;
	return fmax(fabs(after / before - 1.0), fabs(before / after - 1.0));
}

/* the robust sd of distances res[0..n) from a median, mad their median */
static double robust_sd(const double *res, size_t n, double mad)
{
	double sd = 1.4826 * mad;
	return sd > 0.0 ? sd : 1.2533 * stats_mean(res, n);
}

/* index of the value of x[0..n) farthest from med (the first such) */
static size_t farthest(const double *x, size_t n, double med)
{
	size_t at = 0;
	for (size_t i = 1; i < n; i++)
		if (fabs(x[i] - med) > fabs(x[at] - med))
			at = i;
	return at;
}

/* mean and sum of squared deviations of x[0..n) without x[skip] */
static void mean_ss_without(const double *x, size_t n, size_t skip, double *mean,
			    double *ss)
{
	double m = 0.0, q = 0.0;
	for (size_t i = 0; i < n; i++)
		if (i != skip)
			m += x[i];
	m /= (double)(n - 1);
	for (size_t i = 0; i < n; i++)
		if (i != skip)
			q += (x[i] - m) * (x[i] - m);
	*mean = m;
	*ss = q;
}

/*
 * The values of l[0..nl) and r[0..nr) that are not outliers, into buf (left
 * then right, *kl and *kr of them). Each side has one candidate, its value
 * farthest from the side's median; it is an outlier when it lies more than
 * CP_OUTLIER_SDS standard deviations from the mean of the rest of its side,
 * the sd pooled from both sides without their candidates. Needs
 * CP_OUTLIER_MIN_POINTS points in all (a steadier sd); else nothing is
 * left out.
 */
static int keep_inliers(const double *l, size_t nl, const double *r, size_t nr,
			double *buf, size_t *kl, size_t *kr)
{
	size_t il = nl, ir = nr; /* none */
	if (nl + nr >= CP_OUTLIER_MIN_POINTS && nl >= 3 && nr >= 3) {
		double ml, mr, al, ar, ssl, ssr;
		if (stats_median(l, nl, &ml) || stats_median(r, nr, &mr)) {
			errno = ENOMEM;
			return -1;
		}
		size_t cl = farthest(l, nl, ml), cr = farthest(r, nr, mr);
		mean_ss_without(l, nl, cl, &al, &ssl);
		mean_ss_without(r, nr, cr, &ar, &ssr);
		double sd = sqrt((ssl + ssr) / (double)(nl + nr - 4));
		if (fabs(l[cl] - al) > CP_OUTLIER_SDS * sd)
			il = cl;
		if (fabs(r[cr] - ar) > CP_OUTLIER_SDS * sd)
			ir = cr;
	}
	*kl = *kr = 0;
	for (size_t i = 0; i < nl; i++)
		if (i != il)
			buf[(*kl)++] = l[i];
	for (size_t j = 0; j < nr; j++)
		if (j != ir)
			buf[*kl + (*kr)++] = r[j];
	return 0;
}

int cp_stats(const double *x, size_t lo, size_t index, size_t hi,
	     struct change_point *cp)
{
	if (!x || !cp || !(lo < index && index < hi)) {
		errno = EINVAL;
		return -1;
	}
	const double *l = x + lo, *r = x + index;
	size_t nl = index - lo, nr = hi - index;
	memset(cp, 0, sizeof(*cp));
	cp->index = index;
	cp->n_before = nl;
	cp->n_after = nr;
	cp->pvalue = 1.0;
	/* outliers left out of the means, sds and the t test: a single one
	 * neither makes a change point (at the edge of a short segment) nor
	 * hides one (by inflating the variance of its side) */
	double *buf = NULL;
	size_t kl = nl, kr = nr;
	if (nl >= CP_MIN_SEGMENT && nr >= CP_MIN_SEGMENT) {
		buf = malloc((nl + nr) * sizeof(*buf));
		if (!buf || keep_inliers(l, nl, r, nr, buf, &kl, &kr)) {
			free(buf);
			errno = ENOMEM;
			return -1;
		}
		l = buf;
		r = buf + kl;
	}
	cp->mean_before = stats_mean(l, kl);
	cp->mean_after = stats_mean(r, kr);
	cp->sd_before = kl > 1 ? stats_sd(l, kl) : 0.0;
	cp->sd_after = kr > 1 ? stats_sd(r, kr) : 0.0;
	cp->rel_change = cp->mean_before != 0.0
				 ? cp->mean_after / cp->mean_before - 1.0
				 : NAN;
	cp->magnitude = magnitude(cp->mean_before, cp->mean_after);
	/* a side of fewer than CP_MIN_SEGMENT points, counted without its
	 * outlier, is no regime: p = 1 */
	if (buf && kl >= CP_MIN_SEGMENT && kr >= CP_MIN_SEGMENT) {
		struct stats_ttest t;
		if (stats_student_t(l, kl, r, kr, &t)) {
			free(buf);
			return -1;
		}
		cp->pvalue = t.p;
	}
	free(buf);
	return 0;
}

/*
 * Best split of x[a..b): index in (a, b) and its q, or q = -INFINITY; both
 * parts keep CP_MIN_SEGMENT points. q is computed on the segment with its
 * outliers clipped to CP_OUTLIER_SDS robust sds from its median, so that a
 * single extreme value does not outweigh a real step. w: 2 (b - a) doubles.
 */
static int best_split(const double *x, size_t a, size_t b, double *q,
		      double *w, size_t *idx, double *qval)
{
	*idx = a;
	*qval = -INFINITY;
	size_t len = b - a;
	if (len < 2 * CP_MIN_SEGMENT)
		return 0;
	double med, mad, *res = w + len;
	if (stats_median(x + a, len, &med))
		return -1;
	for (size_t i = 0; i < len; i++)
		res[i] = fabs(x[a + i] - med);
	if (stats_median(res, len, &mad))
		return -1;
	double limit = CP_OUTLIER_SDS * robust_sd(res, len, mad);
	for (size_t i = 0; i < len; i++)
		w[i] = fmin(fmax(x[a + i], med - limit), med + limit);
	cp_qhat(w, len, q);
	for (size_t t = CP_MIN_SEGMENT; t + CP_MIN_SEGMENT <= len; t++) {
		if (q[t] > *qval) { /* first maximum wins */
			*qval = q[t];
			*idx = a + t;
		}
	}
	/* all values equal: nothing divides this segment */
	if (!(*qval > 0.0))
		*qval = -INFINITY;
	return 0;
}

int cp_edivisive(const double *x, size_t n, double max_p, size_t **idx,
		 size_t *nidx)
{
	if (!x || !idx || !nidx || !(max_p > 0.0 && max_p <= 1.0)) {
		errno = EINVAL;
		return -1;
	}
	*idx = NULL;
	*nidx = 0;
	if (n < 3)
		return 0;
	/* bounds[0..k+1]: 0, change points in order, n; segment s is
	 * [bounds[s], bounds[s+1]) with its best candidate cidx[s], cq[s] */
	size_t *bounds = malloc((n + 1) * sizeof(*bounds));
	size_t *cidx = malloc(n * sizeof(*cidx));
	double *cq = malloc(n * sizeof(*cq));
	double *q = malloc(n * sizeof(*q));
	double *w = malloc(2 * n * sizeof(*w));
	if (!bounds || !cidx || !cq || !q || !w) {
		free(bounds);
		free(cidx);
		free(cq);
		free(q);
		free(w);
		errno = ENOMEM;
		return -1;
	}
	size_t nb = 2;
	bounds[0] = 0;
	bounds[1] = n;
	int rc = best_split(x, 0, n, q, w, &cidx[0], &cq[0]);
	while (rc == 0) {
		size_t best = 0;
		for (size_t s = 1; s + 1 < nb; s++)
			if (cq[s] > cq[best])
				best = s;
		if (cq[best] == -INFINITY)
			break;
		struct change_point cp;
		if (cp_stats(x, bounds[best], cidx[best], bounds[best + 1],
			     &cp)) {
			rc = -1;
			break;
		}
		if (!(cp.pvalue <= max_p))
			break;
		/* split segment `best` in two */
		size_t at = cidx[best];
		memmove(bounds + best + 2, bounds + best + 1,
			(nb - best - 1) * sizeof(*bounds));
		bounds[best + 1] = at;
		memmove(cidx + best + 1, cidx + best,
			(nb - 1 - best) * sizeof(*cidx));
		memmove(cq + best + 1, cq + best,
			(nb - 1 - best) * sizeof(*cq));
		nb++;
		if (best_split(x, bounds[best], bounds[best + 1], q, w,
			       &cidx[best], &cq[best]) ||
		    best_split(x, bounds[best + 1], bounds[best + 2], q, w,
			       &cidx[best + 1], &cq[best + 1])) {
			errno = ENOMEM;
			rc = -1;
		}
	}
	if (rc)
		errno = ENOMEM;
	free(cidx);
	free(cq);
	free(q);
	free(w);
	if (rc == 0 && nb > 2) {
		*nidx = nb - 2;
		memmove(bounds, bounds + 1, *nidx * sizeof(*bounds));
		*idx = bounds;
	} else {
		free(bounds);
	}
	return rc;
}

/* bounds of change point i among cps[0..k) in a series of n points */
static size_t lo_of(const struct change_point *cps, size_t i)
{
	return i == 0 ? 0 : cps[i - 1].index;
}

static size_t hi_of(const struct change_point *cps, size_t k, size_t i,
		    size_t n)
{
	return i + 1 >= k ? n : cps[i + 1].index;
}

int cp_detect(const double *x, size_t n, const struct cp_options *o,
	      struct change_point **out, size_t *nout)
{
	struct cp_options def;
	if (!o) {
		cp_options_default(&def);
		o = &def;
	}
	size_t window = o->window ? o->window : CP_DEFAULT_WINDOW;
	if (!x || !out || !nout || window < 2 ||
	    !(o->max_pvalue > 0.0 && o->max_pvalue < 1.0) ||
	    !(o->min_magnitude >= 0.0)) {
		errno = EINVAL;
		return -1;
	}
	*out = NULL;
	*nout = 0;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i])) {
			errno = EINVAL;
			return -1;
		}
	if (n < 3)
		return 0;

	/* 1+2: E-divisive per window with a relaxed threshold (Otava's rule:
	 * 10 p below 0.05, 2 p below 0.5) so that borderline points survive
	 * until the merge judges them on the whole series */
	double p = o->max_pvalue;
	double split_p = p < 0.05 ? 10.0 * p : (p < 0.5 ? 2.0 * p : p);
	size_t *all = NULL, nall = 0, step = window / 2;
	for (size_t start = 0; start < n;) {
		size_t end = start + window < n ? start + window : n;
		size_t *idx, k;
		if (cp_edivisive(x + start, end - start, split_p, &idx, &k)) {
			free(all);
			return -1;
		}
		if (k) {
			size_t *grown = realloc(all, (nall + k) * sizeof(*all));
			if (!grown) {
				free(idx);
				free(all);
				errno = ENOMEM;
				return -1;
			}
			all = grown;
			for (size_t i = 0; i < k; i++)
				all[nall++] = idx[i] + start;
		}
		size_t last = k ? idx[k - 1] + start : 0;
		free(idx);
		start = last > start + step ? last : start + step;
	}
	if (nall == 0)
		return 0;

	/* statistics of every candidate between its neighbours */
	struct change_point *cps = malloc(nall * sizeof(*cps));
	if (!cps) {
		free(all);
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < nall; i++) {
		size_t lo = i == 0 ? 0 : all[i - 1];
		size_t hi = i + 1 == nall ? n : all[i + 1];
		if (cp_stats(x, lo, all[i], hi, &cps[i])) {
			free(all);
			free(cps);
			return -1;
		}
	}
	free(all);

	/* 3: merge, weakest first */
	size_t k = nall;
	while (k > 0) {
		size_t w = 0;
		for (size_t i = 1; i < k; i++)
			if (cps[i].pvalue > cps[w].pvalue)
				w = i;
		if (cps[w].pvalue < o->max_pvalue) {
			w = 0;
			for (size_t i = 1; i < k; i++)
				if (cps[i].magnitude < cps[w].magnitude)
					w = i;
			if (cps[w].magnitude > o->min_magnitude)
				break;
		}
		memmove(cps + w, cps + w + 1, (k - w - 1) * sizeof(*cps));
		k--;
		/* the neighbours on both sides now span the removed point */
		for (size_t i = w ? w - 1 : 0; i <= w && i < k; i++) {
			if (cp_stats(x, lo_of(cps, i), cps[i].index,
				     hi_of(cps, k, i, n), &cps[i])) {
				free(cps);
				return -1;
			}
		}
	}
	if (k == 0) {
		free(cps);
		return 0;
	}
	*out = cps;
	*nout = k;
	return 0;
}

int cp_detect_censored(const double *x, const unsigned char *censored, size_t n,
		       const struct cp_options *o, struct change_point **out, size_t *nout)
{
	if (!censored)
		return cp_detect(x, n, o, out, nout);
	if (!x || !out || !nout) {
		errno = EINVAL;
		return -1;
	}
	*out = NULL;
	*nout = 0;
	struct change_point *all = NULL;
	size_t nall = 0;
	for (size_t lo = 0; lo < n;) {
		if (censored[lo]) {
			lo++;
			continue;
		}
		size_t hi = lo;
		while (hi < n && !censored[hi])
			hi++;
		/* the values of a stretch are finite whatever the censored ones are */
		struct change_point *cps;
		size_t k;
		if (cp_detect(x + lo, hi - lo, o, &cps, &k)) {
			free(all);
			return -1;
		}
		if (k) {
			struct change_point *grown = realloc(all, (nall + k) * sizeof(*all));
			if (!grown) {
				free(cps);
				free(all);
				errno = ENOMEM;
				return -1;
			}
			all = grown;
			for (size_t i = 0; i < k; i++) {
				all[nall] = cps[i];
				all[nall++].index += lo;
			}
		}
		free(cps);
		lo = hi;
	}
	*out = all;
	*nout = nall;
	return 0;
}
