/*
 * Linear and log-linear histograms; the bucket geometry and its error bound
 * are described in hist.h.
 */
#include "analysis/hist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int alloc_counts(struct hist *h, size_t n)
{
	h->counts = calloc(n ? n : 1, sizeof(uint64_t));
	if (!h->counts)
		return -1;
	h->nbuckets = n;
	h->overflow = h->total = 0;
	h->min = h->max = NAN;
	return 0;
}

int hist_init_linear(struct hist *h, size_t nbuckets)
{
	memset(h, 0, sizeof(*h));
	h->scheme = HIST_LINEAR;
	return alloc_counts(h, nbuckets);
}

int hist_init_loglin(struct hist *h, int sub_bits, int max_pow2)
{
	memset(h, 0, sizeof(*h));
	if (sub_bits < 1 || sub_bits > 10 || max_pow2 <= sub_bits || max_pow2 > 62)
		return -1;
	h->scheme = HIST_LOGLIN;
	h->sub_bits = sub_bits;
	/* 2^s unit buckets, then 2^s buckets for each octave s..max_pow2-1 */
	size_t n = ((size_t)1 << sub_bits) * (size_t)(1 + max_pow2 - sub_bits);
	return alloc_counts(h, n);
}

void hist_free(struct hist *h)
{
	free(h->counts);
	h->counts = NULL;
	h->nbuckets = 0;
}

void hist_reset(struct hist *h)
{
	memset(h->counts, 0, h->nbuckets * sizeof(uint64_t));
	h->overflow = h->total = 0;
	h->min = h->max = NAN;
}

size_t hist_bucket_of(const struct hist *h, uint64_t v)
{
	if (h->scheme == HIST_LINEAR)
		return v < h->nbuckets ? (size_t)v : h->nbuckets;
	size_t idx = hist_loglin_index(h->sub_bits, v);
	return idx < h->nbuckets ? idx : h->nbuckets;
}

double hist_bucket_lo(const struct hist *h, size_t i)
{
	if (h->scheme == HIST_LINEAR)
		return (double)i;
	size_t sub = (size_t)1 << h->sub_bits;
	if (i < sub)
		return (double)i;
	size_t octave = i / sub, off = i % sub;
	int k = (int)octave + h->sub_bits - 1;
	return ldexp((double)(sub + off), k - h->sub_bits);
}

double hist_bucket_hi(const struct hist *h, size_t i)
{
	if (h->scheme == HIST_LINEAR)
		return (double)i + 1;
	size_t sub = (size_t)1 << h->sub_bits;
	if (i < sub)
		return (double)i + 1;
	int k = (int)(i / sub) + h->sub_bits - 1;
	return hist_bucket_lo(h, i) + ldexp(1.0, k - h->sub_bits);
}

double hist_bucket_value(const struct hist *h, size_t i)
{
	if (h->scheme == HIST_LINEAR || i < ((size_t)1 << h->sub_bits))
		return (double)i;
	return (hist_bucket_lo(h, i) + hist_bucket_hi(h, i)) / 2;
}

void hist_record_n(struct hist *h, uint64_t v, uint64_t n)
{
	if (!n)
		return;
	size_t b = hist_bucket_of(h, v);
	if (b >= h->nbuckets)
		h->overflow += n;
	else
		h->counts[b] += n;
	h->total += n;
	if (isnan(h->min) || (double)v < h->min)
		h->min = (double)v;
	if (isnan(h->max) || (double)v > h->max)
		h->max = (double)v;
}

void hist_record(struct hist *h, uint64_t v)
{
	hist_record_n(h, v, 1);
}

void hist_add_overflow(struct hist *h, uint64_t n)
{
	h->overflow += n;
	h->total += n;
}

static int same_geometry(const struct hist *a, const struct hist *b)
{
	return a->scheme == b->scheme && a->sub_bits == b->sub_bits &&
	       a->nbuckets == b->nbuckets;
}

int hist_merge(struct hist *dst, const struct hist *src)
{
	if (!same_geometry(dst, src))
		return -1;
	for (size_t i = 0; i < dst->nbuckets; i++)
		dst->counts[i] += src->counts[i];
	dst->overflow += src->overflow;
	dst->total += src->total;
	if (!isnan(src->min) && (isnan(dst->min) || src->min < dst->min))
		dst->min = src->min;
	if (!isnan(src->max) && (isnan(dst->max) || src->max > dst->max))
		dst->max = src->max;
	return 0;
}

int hist_copy(struct hist *dst, const struct hist *src)
{
	*dst = *src;
	dst->counts = malloc((src->nbuckets ? src->nbuckets : 1) * sizeof(uint64_t));
	if (!dst->counts)
		return -1;
	memcpy(dst->counts, src->counts, src->nbuckets * sizeof(uint64_t));
	return 0;
}

enum hist_pct hist_percentile(const struct hist *h, double p, double *out)
{
	if (h->total == 0) {
		*out = NAN;
		return HIST_EMPTY;
	}
	if (p < 0)
		p = 0;
	if (p > 100)
		p = 100;
	uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->total);
	if (rank < 1)
		rank = 1;
	uint64_t seen = 0;
	for (size_t i = 0; i < h->nbuckets; i++) {
		seen += h->counts[i];
		if (seen >= rank) {
			*out = hist_bucket_value(h, i);
			return HIST_OK;
		}
	}
	*out = hist_range_end(h);
	return HIST_IN_OVERFLOW;
}

double hist_range_end(const struct hist *h)
{
	return h->nbuckets ? hist_bucket_hi(h, h->nbuckets - 1) : 0;
}

double hist_overflow_fraction(const struct hist *h)
{
	return h->total ? (double)h->overflow / (double)h->total : 0;
}

double hist_mean(const struct hist *h)
{
	double sum = 0;
	uint64_t n = 0;
	for (size_t i = 0; i < h->nbuckets; i++) {
		sum += hist_bucket_value(h, i) * (double)h->counts[i];
		n += h->counts[i];
	}
	return n ? sum / (double)n : NAN;
}

json_t *hist_to_json(const struct hist *h)
{
	json_t *b = json_array();
	for (size_t i = 0; i < h->nbuckets; i++)
		if (h->counts[i])
			json_array_append_new(b, json_pack("[II]", (json_int_t)i,
							   (json_int_t)h->counts[i]));
	json_t *j = json_pack("{s:s,s:i,s:I,s:o,s:I,s:I}",
			      "scheme", h->scheme == HIST_LINEAR ? "linear" : "loglin",
			      "sub_bits", h->sub_bits, "nbuckets", (json_int_t)h->nbuckets,
			      "buckets", b, "overflow", (json_int_t)h->overflow,
			      "total", (json_int_t)h->total);
	if (!isnan(h->min))
		json_object_set_new(j, "min", json_real(h->min));
	if (!isnan(h->max))
		json_object_set_new(j, "max", json_real(h->max));
	return j;
}

int hist_from_json(struct hist *h, const json_t *j)
{
	const char *scheme;
	int sub = 0;
	json_int_t n, ovf = 0, total = 0;
	json_t *b;
	if (json_unpack((json_t *)j, "{s:s,s?i,s:I,s:o,s?I,s?I}", "scheme", &scheme,
			"sub_bits", &sub, "nbuckets", &n, "buckets", &b, "overflow", &ovf,
			"total", &total) || !json_is_array(b) || n < 0 || n > (1 << 24))
		return -1;
	/* an unknown scheme or a sub_bits hist_init_loglin would refuse is corrupt */
	if (strcmp(scheme, "linear") && (strcmp(scheme, "loglin") || sub < 1 || sub > 10))
		return -1;
	memset(h, 0, sizeof(*h));
	h->scheme = !strcmp(scheme, "linear") ? HIST_LINEAR : HIST_LOGLIN;
	h->sub_bits = sub;
	if (alloc_counts(h, (size_t)n))
		return -1;
	size_t i;
	json_t *e;
	uint64_t sum = 0;
	json_array_foreach(b, i, e) {
		json_int_t idx, c;
		if (json_unpack(e, "[II]", &idx, &c) || idx < 0 || idx >= n || c < 0 ||
		    c > HIST_COUNT_MAX || (sum += (uint64_t)c) > HIST_COUNT_MAX) {
			hist_free(h);
			return -1;
		}
		h->counts[idx] += (uint64_t)c;
	}
	/* totals are stored input too: in range, and not fewer than counted */
	if (ovf < 0 || ovf > HIST_COUNT_MAX || total < 0 || total > HIST_COUNT_MAX ||
	    (total && (uint64_t)total < sum + (uint64_t)ovf)) {
		hist_free(h);
		return -1;
	}
	h->overflow = (uint64_t)ovf;
	h->total = total ? (uint64_t)total : sum + h->overflow;
	json_t *mn = json_object_get(j, "min"), *mx = json_object_get(j, "max");
	h->min = mn ? json_number_value(mn) : NAN;
	h->max = mx ? json_number_value(mx) : NAN;
	return 0;
}
