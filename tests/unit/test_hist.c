/*
 * Unit tests of analysis/hist.c: nearest-rank percentiles of linear
 * histograms (including ranks that fall into the overflow and the empty
 * histogram), lossless merging, the log-linear bucket geometry and its
 * documented relative error bound 2^-(s+1), and the JSON storage form.
 * Every expected value is derived by hand from the samples recorded here.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "analysis/hist.h"
#include "tests/unit/tap.h"

/* 1, 2, 2, 3, 3, 3, 4, 4, 4, 4 into 1-unit buckets 0..9 */
static void fill_1234(struct hist *h)
{
	hist_init_linear(h, 10);
	for (uint64_t v = 1; v <= 4; v++)
		hist_record_n(h, v, v);
}

TEST(linear_percentiles_nearest_rank)
{
	struct hist h;
	double v;
	fill_1234(&h);
	CHECK(h.total == 10);
	CHECK(h.overflow == 0);
	/* rank = ceil(p/100 * 10); cumulative counts: b1=1 b2=3 b3=6 b4=10 */
	CHECK(hist_percentile(&h, 0, &v) == HIST_OK);   /* rank clamped to 1 */
	CHECK_NEAR(v, 1, 0);
	CHECK(hist_percentile(&h, 10, &v) == HIST_OK);  /* rank 1 */
	CHECK_NEAR(v, 1, 0);
	CHECK(hist_percentile(&h, 10.5, &v) == HIST_OK); /* rank 2 */
	CHECK_NEAR(v, 2, 0);
	CHECK(hist_percentile(&h, 30, &v) == HIST_OK);  /* rank 3 */
	CHECK_NEAR(v, 2, 0);
	CHECK(hist_percentile(&h, 31, &v) == HIST_OK);  /* rank 4 */
	CHECK_NEAR(v, 3, 0);
	CHECK(hist_percentile(&h, 50, &v) == HIST_OK);  /* rank 5 */
	CHECK_NEAR(v, 3, 0);
	CHECK(hist_percentile(&h, 60, &v) == HIST_OK);  /* rank 6 */
	CHECK_NEAR(v, 3, 0);
	CHECK(hist_percentile(&h, 61, &v) == HIST_OK);  /* rank 7 */
	CHECK_NEAR(v, 4, 0);
	CHECK(hist_percentile(&h, 100, &v) == HIST_OK); /* rank 10 */
	CHECK_NEAR(v, 4, 0);
	CHECK(hist_percentile(&h, 150, &v) == HIST_OK); /* clamped to 100 */
	CHECK_NEAR(v, 4, 0);
	CHECK(hist_percentile(&h, -5, &v) == HIST_OK);  /* clamped to 0 */
	CHECK_NEAR(v, 1, 0);
	hist_free(&h);
}

TEST(linear_min_max_mean)
{
	struct hist h;
	fill_1234(&h);
	CHECK_NEAR(h.min, 1, 0);
	CHECK_NEAR(h.max, 4, 0);
	/* (1 + 2*2 + 3*3 + 4*4) / 10 = 30 / 10 */
	CHECK_NEAR(hist_mean(&h), 3.0, 1e-12);
	hist_free(&h);
}

TEST(linear_bucket_geometry)
{
	struct hist h;
	hist_init_linear(&h, 10);
	CHECK(h.nbuckets == 10);
	CHECK(hist_bucket_of(&h, 0) == 0);
	CHECK(hist_bucket_of(&h, 9) == 9);
	CHECK(hist_bucket_of(&h, 10) == 10);   /* beyond: nbuckets */
	CHECK(hist_bucket_of(&h, 1000000) == 10);
	CHECK_NEAR(hist_bucket_lo(&h, 7), 7, 0);
	CHECK_NEAR(hist_bucket_hi(&h, 7), 8, 0);
	CHECK_NEAR(hist_bucket_value(&h, 7), 7, 0);
	hist_free(&h);
}

/* 8 samples of 5 in range, 2 beyond 10 buckets: ranks 9 and 10 are unknown */
TEST(percentile_in_overflow)
{
	struct hist h;
	double v;
	hist_init_linear(&h, 10);
	hist_record_n(&h, 5, 8);
	hist_record(&h, 20);
	hist_record(&h, 12);
	CHECK(h.total == 10);
	CHECK(h.overflow == 2);
	CHECK(h.counts[5] == 8);
	CHECK_NEAR(h.max, 20, 0);
	CHECK(hist_percentile(&h, 80, &v) == HIST_OK);          /* rank 8 */
	CHECK_NEAR(v, 5, 0);
	CHECK(hist_percentile(&h, 81, &v) == HIST_IN_OVERFLOW); /* rank 9 */
	CHECK_NEAR(v, 10, 0);  /* the overflow's lower bound, not 5 or 9 */
	CHECK(hist_percentile(&h, 100, &v) == HIST_IN_OVERFLOW);
	CHECK_NEAR(v, 10, 0);
	/* the mean is of in-range samples only */
	CHECK_NEAR(hist_mean(&h), 5, 0);
	hist_free(&h);
}

/* cyclictest-style: overflow known only as a count */
TEST(add_overflow_counts_in_total)
{
	struct hist h;
	double v;
	hist_init_linear(&h, 100);
	hist_record_n(&h, 30, 97);
	hist_add_overflow(&h, 3);
	CHECK(h.total == 100);
	CHECK(h.overflow == 3);
	CHECK_NEAR(h.max, 30, 0);   /* unknown overflow values do not move max */
	CHECK(hist_percentile(&h, 97, &v) == HIST_OK);
	CHECK_NEAR(v, 30, 0);
	CHECK(hist_percentile(&h, 97.01, &v) == HIST_IN_OVERFLOW);  /* rank 98 */
	CHECK_NEAR(v, 100, 0);
	hist_free(&h);
}

TEST(empty_histogram)
{
	struct hist h;
	double v = 0;
	hist_init_linear(&h, 10);
	CHECK(hist_percentile(&h, 50, &v) == HIST_EMPTY);
	CHECK(isnan(v));
	CHECK(isnan(hist_mean(&h)));
	CHECK(isnan(h.min) && isnan(h.max));
	/* only overflow: not empty, every percentile in the overflow */
	hist_add_overflow(&h, 1);
	CHECK(hist_percentile(&h, 1, &v) == HIST_IN_OVERFLOW);
	CHECK_NEAR(v, 10, 0);
	CHECK(isnan(hist_mean(&h)));
	hist_free(&h);
}

TEST(record_n_zero_is_noop)
{
	struct hist h;
	hist_init_linear(&h, 10);
	hist_record_n(&h, 3, 0);
	CHECK(h.total == 0);
	CHECK(h.counts[3] == 0);
	CHECK(isnan(h.min));
	hist_free(&h);
}

TEST(reset_clears_everything)
{
	struct hist h;
	fill_1234(&h);
	hist_record(&h, 99);
	hist_reset(&h);
	CHECK(h.total == 0 && h.overflow == 0);
	CHECK(h.nbuckets == 10);
	for (size_t i = 0; i < h.nbuckets; i++)
		CHECK(h.counts[i] == 0);
	CHECK(isnan(h.min) && isnan(h.max));
	hist_free(&h);
}

static const uint64_t set_a[] = { 1, 2, 2, 3, 50, 7, 7, 0 };
static const uint64_t set_b[] = { 3, 4, 9, 15, 9, 9, 8, 1, 30 };
#define NA (sizeof(set_a) / sizeof(set_a[0]))
#define NB (sizeof(set_b) / sizeof(set_b[0]))

TEST(merge_equals_recording_all)
{
	struct hist a, b, all;
	hist_init_linear(&a, 10);
	hist_init_linear(&b, 10);
	hist_init_linear(&all, 10);
	for (size_t i = 0; i < NA; i++) {
		hist_record(&a, set_a[i]);
		hist_record(&all, set_a[i]);
	}
	for (size_t i = 0; i < NB; i++) {
		hist_record(&b, set_b[i]);
		hist_record(&all, set_b[i]);
	}
	CHECK(hist_merge(&a, &b) == 0);
	CHECK(a.total == NA + NB);
	CHECK(a.total == all.total);
	CHECK(a.overflow == 3);   /* 50, 15, 30 */
	CHECK(a.overflow == all.overflow);
	for (size_t i = 0; i < 10; i++)
		CHECK(a.counts[i] == all.counts[i]);
	CHECK(a.counts[9] == 3);
	CHECK(a.counts[2] == 2);
	CHECK_NEAR(a.min, 0, 0);
	CHECK_NEAR(a.max, 50, 0);
	static const double ps[] = { 0, 10, 25, 50, 75, 82, 83, 90, 99, 100 };
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		double x, y;
		CHECK(hist_percentile(&a, ps[i], &x) == hist_percentile(&all, ps[i], &y));
		CHECK_NEAR(x, y, 0);
	}
	/* 17 samples; sorted in range: 0 1 1 2 2 3 3 4 7 7 8 9 9 9 | 15 30 50 */
	double x;
	CHECK(hist_percentile(&a, 50, &x) == HIST_OK);   /* rank 9 */
	CHECK_NEAR(x, 7, 0);
	CHECK(hist_percentile(&a, 82, &x) == HIST_OK);   /* rank ceil(13.94) = 14 */
	CHECK_NEAR(x, 9, 0);
	CHECK(hist_percentile(&a, 83, &x) == HIST_IN_OVERFLOW);  /* rank 15 */
	hist_free(&a);
	hist_free(&b);
	hist_free(&all);
}

TEST(merge_into_empty_takes_extremes)
{
	struct hist a, b;
	hist_init_linear(&a, 10);
	hist_init_linear(&b, 10);
	hist_record(&b, 4);
	hist_record(&b, 6);
	CHECK(hist_merge(&a, &b) == 0);
	CHECK_NEAR(a.min, 4, 0);
	CHECK_NEAR(a.max, 6, 0);
	/* merging an empty one changes nothing */
	hist_reset(&b);
	CHECK(hist_merge(&a, &b) == 0);
	CHECK(a.total == 2);
	CHECK_NEAR(a.min, 4, 0);
	CHECK_NEAR(a.max, 6, 0);
	hist_free(&a);
	hist_free(&b);
}

TEST(merge_different_geometry_fails)
{
	struct hist l10, l20, l8, g14, g23;
	hist_init_linear(&l10, 10);
	hist_init_linear(&l20, 20);
	hist_init_linear(&l8, 8);
	CHECK(hist_init_loglin(&g14, 1, 4) == 0);   /* 2 * (1 + 4 - 1) = 8 buckets */
	CHECK(hist_init_loglin(&g23, 2, 3) == 0);   /* 4 * (1 + 3 - 2) = 8 buckets */
	CHECK(g14.nbuckets == 8 && g23.nbuckets == 8);
	hist_record(&l20, 3);
	CHECK(hist_merge(&l10, &l20) == -1);
	CHECK(l10.total == 0);                      /* untouched on failure */
	CHECK(hist_merge(&l8, &g14) == -1);         /* same size, other scheme */
	CHECK(hist_merge(&g14, &l8) == -1);
	CHECK(hist_merge(&g14, &g23) == -1);        /* same size, other sub_bits */
	CHECK(hist_merge(&g14, &g14) == 0);         /* sanity: same geometry merges */
	hist_free(&l10);
	hist_free(&l20);
	hist_free(&l8);
	hist_free(&g14);
	hist_free(&g23);
}

TEST(copy_is_independent)
{
	struct hist a, c;
	fill_1234(&a);
	CHECK(hist_copy(&c, &a) == 0);
	CHECK(c.counts != a.counts);
	hist_record(&a, 1);
	CHECK(c.total == 10 && a.total == 11);
	CHECK(c.counts[1] == 1 && a.counts[1] == 2);
	hist_free(&a);
	hist_free(&c);
}

TEST(loglin_init_rejects_bad_geometry)
{
	struct hist h;
	CHECK(hist_init_loglin(&h, 0, 10) == -1);
	CHECK(hist_init_loglin(&h, 11, 20) == -1);
	CHECK(hist_init_loglin(&h, 5, 5) == -1);    /* max_pow2 must exceed sub_bits */
	CHECK(hist_init_loglin(&h, 5, 63) == -1);
	CHECK(hist_init_loglin(&h, 5, 62) == 0);
	CHECK(h.nbuckets == 32 * 58);
	hist_free(&h);
}

/* s = 2, covering [0, 32): 4 unit buckets, then [4,8) width 1, [8,16)
 * width 2, [16,32) width 4: 16 buckets */
TEST(loglin_bucket_bounds)
{
	struct hist h;
	CHECK(hist_init_loglin(&h, 2, 5) == 0);
	CHECK(h.nbuckets == 16);
	static const struct { uint64_t v; size_t b; double lo, hi, mid; } t[] = {
		{ 0, 0, 0, 1, 0 },     { 3, 3, 3, 4, 3 },
		{ 4, 4, 4, 5, 4.5 },   { 7, 7, 7, 8, 7.5 },
		{ 8, 8, 8, 10, 9 },    { 9, 8, 8, 10, 9 },
		{ 10, 9, 10, 12, 11 }, { 15, 11, 14, 16, 15 },
		{ 16, 12, 16, 20, 18 }, { 23, 13, 20, 24, 22 },
		{ 27, 14, 24, 28, 26 }, { 31, 15, 28, 32, 30 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t b = hist_bucket_of(&h, t[i].v);
		CHECK(b == t[i].b);
		if (b != t[i].b)
			printf("#   value %llu: bucket %zu, expected %zu\n",
			       (unsigned long long)t[i].v, b, t[i].b);
		CHECK_NEAR(hist_bucket_lo(&h, t[i].b), t[i].lo, 0);
		CHECK_NEAR(hist_bucket_hi(&h, t[i].b), t[i].hi, 0);
		CHECK_NEAR(hist_bucket_value(&h, t[i].b), t[i].mid, 0);
	}
	CHECK(hist_bucket_of(&h, 32) == 16);   /* beyond the range */
	CHECK(hist_bucket_of(&h, UINT64_MAX) == 16);
	hist_record(&h, 32);
	CHECK(h.overflow == 1);
	/* buckets tile the range: hi(i) == lo(i+1) */
	for (size_t i = 0; i + 1 < h.nbuckets; i++)
		CHECK(hist_bucket_hi(&h, i) == hist_bucket_lo(&h, i + 1));
	CHECK_NEAR(hist_bucket_hi(&h, 15), 32, 0);
	hist_free(&h);
}

/* every integer value of several octaves, both ends of every octave up to
 * 2^40: |reported - true| / true <= 2^-(s+1), and the bound is attained */
static void check_error_bound(int s)
{
	struct hist h;
	CHECK(hist_init_loglin(&h, s, 40) == 0);
	const double bound = ldexp(1.0, -(s + 1));
	double worst = 0;
	int bad = 0;
	for (uint64_t v = 1; v < ((uint64_t)1 << (s + 6)); v++) {
		size_t b = hist_bucket_of(&h, v);
		double rep = hist_bucket_value(&h, b);
		double e = fabs(rep - (double)v) / (double)v;
		if (!(v >= hist_bucket_lo(&h, b) && (double)v < hist_bucket_hi(&h, b)))
			bad++;
		if (e > bound)
			bad++;
		if (e > worst)
			worst = e;
	}
	for (int k = s; k < 40; k++) {
		uint64_t ends[2] = { (uint64_t)1 << k, ((uint64_t)1 << (k + 1)) - 1 };
		for (int i = 0; i < 2; i++) {
			size_t b = hist_bucket_of(&h, ends[i]);
			double e = fabs(hist_bucket_value(&h, b) - (double)ends[i]) / (double)ends[i];
			if (e > bound || b >= h.nbuckets)
				bad++;
			if (e > worst)
				worst = e;
		}
	}
	CHECK(bad == 0);
	CHECK_NEAR(worst, bound, 1e-15);   /* at v = 2^k: lo of a bucket of width 2^(k-s) */
	CHECK(hist_bucket_of(&h, (uint64_t)1 << 40) == h.nbuckets);
	hist_free(&h);
}

TEST(loglin_relative_error_bound_s5)
{
	check_error_bound(5);
}

TEST(loglin_relative_error_bound_s7)
{
	check_error_bound(7);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* percentiles of 20000 log-uniform values against the exact nearest-rank
 * percentile of the sorted samples */
TEST(loglin_percentile_error_bound)
{
	enum { N = 20000 };
	const int s = 5;
	uint64_t *vals = malloc(N * sizeof(*vals));
	struct hist h;
	CHECK(hist_init_loglin(&h, s, 40) == 0);
	uint64_t x = 88172645463325252ULL;
	for (int i = 0; i < N; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		int bits = 1 + (int)(x % 30);
		vals[i] = 1 + ((x >> 8) & (((uint64_t)1 << bits) - 1));
		hist_record(&h, vals[i]);
	}
	qsort(vals, N, sizeof(*vals), cmp_u64);
	CHECK(h.total == N && h.overflow == 0);
	CHECK_NEAR(h.min, (double)vals[0], 0);
	CHECK_NEAR(h.max, (double)vals[N - 1], 0);
	const double bound = ldexp(1.0, -(s + 1));
	static const double ps[] = { 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100 };
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		double rep;
		CHECK(hist_percentile(&h, ps[i], &rep) == HIST_OK);
		size_t rank = (size_t)ceil(ps[i] / 100.0 * N);
		double truth = (double)vals[rank - 1];
		CHECK(fabs(rep - truth) / truth <= bound);
		if (fabs(rep - truth) / truth > bound)
			printf("#   p%g: reported %g, true %g\n", ps[i], rep, truth);
	}
	free(vals);
	hist_free(&h);
}

TEST(json_round_trip_linear)
{
	struct hist h, r;
	hist_init_linear(&h, 10);
	hist_record_n(&h, 2, 3);
	hist_record(&h, 7);
	hist_record(&h, 42);
	json_t *j = hist_to_json(&h);
	CHECK_STR(json_string_value(json_object_get(j, "scheme")), "linear");
	CHECK(json_integer_value(json_object_get(j, "nbuckets")) == 10);
	CHECK(json_integer_value(json_object_get(j, "overflow")) == 1);
	CHECK(json_integer_value(json_object_get(j, "total")) == 5);
	CHECK_NEAR(json_number_value(json_object_get(j, "min")), 2, 0);
	CHECK_NEAR(json_number_value(json_object_get(j, "max")), 42, 0);
	char *s = json_dumps(json_object_get(j, "buckets"), JSON_COMPACT);
	CHECK_STR(s, "[[2,3],[7,1]]");   /* non-zero buckets only */
	free(s);
	CHECK(hist_from_json(&r, j) == 0);
	CHECK(r.scheme == HIST_LINEAR && r.nbuckets == 10);
	CHECK(r.total == 5 && r.overflow == 1);
	CHECK(r.counts[2] == 3 && r.counts[7] == 1 && r.counts[0] == 0);
	CHECK_NEAR(r.min, 2, 0);
	CHECK_NEAR(r.max, 42, 0);
	double a, b;
	CHECK(hist_percentile(&r, 90, &a) == HIST_IN_OVERFLOW);
	CHECK(hist_percentile(&h, 90, &b) == HIST_IN_OVERFLOW);
	CHECK_NEAR(a, b, 0);
	json_decref(j);
	hist_free(&h);
	hist_free(&r);
}

TEST(json_round_trip_loglin)
{
	struct hist h, r;
	CHECK(hist_init_loglin(&h, 3, 20) == 0);
	for (uint64_t v = 1; v < 1000000; v = v * 3 + 1)
		hist_record(&h, v);
	hist_record(&h, (uint64_t)1 << 21);   /* overflow */
	json_t *j = hist_to_json(&h);
	char *txt = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	j = json_loads(txt, 0, NULL);   /* through text, as stored */
	free(txt);
	CHECK(j != NULL);
	CHECK(hist_from_json(&r, j) == 0);
	CHECK(r.scheme == HIST_LOGLIN && r.sub_bits == 3 && r.nbuckets == h.nbuckets);
	CHECK(r.total == h.total && r.overflow == 1);
	int diff = 0;
	for (size_t i = 0; i < h.nbuckets; i++)
		diff += r.counts[i] != h.counts[i];
	CHECK(diff == 0);
	CHECK_NEAR(r.min, 1, 0);
	CHECK_NEAR(r.max, (double)((uint64_t)1 << 21), 0);
	CHECK(hist_merge(&r, &h) == 0);   /* same geometry after the round trip */
	json_decref(j);
	hist_free(&h);
	hist_free(&r);
}

/* stored histograms are read back as untrusted input: counts and totals
 * out of range, or a total below what the buckets hold, are refused */
TEST(json_counts_out_of_range)
{
	static const char *const bad[] = {
		"{\"scheme\":\"linear\",\"nbuckets\":4,\"buckets\":[[1,9223372036854775000],[2,9223372036854775000]]}",
		"{\"scheme\":\"linear\",\"nbuckets\":4,\"buckets\":[[1,5]],\"overflow\":-1}",
		"{\"scheme\":\"linear\",\"nbuckets\":4,\"buckets\":[[1,5]],\"total\":9223372036854775807}",
		"{\"scheme\":\"linear\",\"nbuckets\":4,\"buckets\":[[1,5]],\"overflow\":2,\"total\":6}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *j = json_loads(bad[i], 0, NULL);
		struct hist r;
		CHECK(j != NULL);
		CHECK(hist_from_json(&r, j) == -1);
		json_decref(j);
	}
	json_t *j = json_loads("{\"scheme\":\"linear\",\"nbuckets\":4,\"buckets\":[[1,5]],"
			       "\"overflow\":2,\"total\":7}", 0, NULL);
	struct hist r;
	CHECK(hist_from_json(&r, j) == 0);
	CHECK(r.total == 7);
	hist_free(&r);
	json_decref(j);
}

TEST(json_empty_and_invalid)
{
	struct hist h, r;
	hist_init_linear(&h, 5);
	json_t *j = hist_to_json(&h);
	CHECK(json_object_get(j, "min") == NULL);   /* unknown extremes are absent */
	CHECK(hist_from_json(&r, j) == 0);
	CHECK(r.total == 0 && r.nbuckets == 5);
	CHECK(isnan(r.min) && isnan(r.max));
	hist_free(&r);
	json_decref(j);
	hist_free(&h);

	/* total omitted: sum of buckets plus overflow */
	j = json_loads("{\"scheme\":\"linear\",\"nbuckets\":4,\"buckets\":[[1,2],[3,5]],"
		       "\"overflow\":1}", 0, NULL);
	CHECK(hist_from_json(&r, j) == 0);
	CHECK(r.total == 8);
	hist_free(&r);
	json_decref(j);

	static const char *const bad[] = {
		"{\"nbuckets\":4,\"buckets\":[]}",                                   /* no scheme */
		"{\"scheme\":\"linear\",\"buckets\":[]}",                            /* no nbuckets */
		"{\"scheme\":\"linear\",\"nbuckets\":4,\"buckets\":[[4,1]]}",        /* index out of range */
		"{\"scheme\":\"linear\",\"nbuckets\":4,\"buckets\":[[-1,1]]}",
		"{\"scheme\":\"linear\",\"nbuckets\":4,\"buckets\":[[1,-3]]}",       /* negative count */
		"{\"scheme\":\"linear\",\"nbuckets\":4,\"buckets\":[[1]]}",
		"{\"scheme\":\"linear\",\"nbuckets\":-1,\"buckets\":[]}",
		"{\"scheme\":\"linear\",\"nbuckets\":4,\"buckets\":{}}",
		"{\"scheme\":\"hdr\",\"nbuckets\":4,\"buckets\":[]}",            /* unknown scheme */
		"{\"scheme\":\"loglin\",\"sub_bits\":0,\"nbuckets\":4,\"buckets\":[]}",
		"{\"scheme\":\"loglin\",\"sub_bits\":40,\"nbuckets\":4,\"buckets\":[]}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		j = json_loads(bad[i], 0, NULL);
		CHECK(j != NULL);
		int rc = hist_from_json(&r, j);
		CHECK(rc == -1);
		if (rc == 0) {
			printf("#   accepted: %s\n", bad[i]);
			hist_free(&r);
		}
		json_decref(j);
	}
}

int main(void)
{
	RUN(linear_percentiles_nearest_rank);
	RUN(linear_min_max_mean);
	RUN(linear_bucket_geometry);
	RUN(percentile_in_overflow);
	RUN(add_overflow_counts_in_total);
	RUN(empty_histogram);
	RUN(record_n_zero_is_noop);
	RUN(reset_clears_everything);
	RUN(merge_equals_recording_all);
	RUN(merge_into_empty_takes_extremes);
	RUN(merge_different_geometry_fails);
	RUN(copy_is_independent);
	RUN(loglin_init_rejects_bad_geometry);
	RUN(loglin_bucket_bounds);
	RUN(loglin_relative_error_bound_s5);
	RUN(loglin_relative_error_bound_s7);
	RUN(loglin_percentile_error_bound);
	RUN(json_round_trip_linear);
	RUN(json_round_trip_loglin);
	RUN(json_empty_and_invalid);
	RUN(json_counts_out_of_range);
	return tap_done();
}
