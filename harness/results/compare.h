/*
 * The A/B comparison behind `schedlab compare` and `schedlab check`, as pure
 * computation on two loaded sample sets (select.h): which dimensions of the
 * series identity tell A from B, which series of A is compared with which
 * series of B, and per (workload, metric) the verdict of analysis/verdict.h;
 * plus merged-histogram percentiles for latency histograms. The commands
 * load, call this, then format; nothing here prints.
 *
 * Series separation (docs/analysis.md): a dimension whose values on side A
 * and side B have nothing in common (preempt: {none} vs {full}) is what is
 * being compared; every other dimension is identity, and a series of A is
 * compared only with the series of B that has the same identity. A side
 * with several series per identity (two params of a workload, two preempt
 * modes on one side) gives several comparison rows, labelled, never a pool.
 *
 * Centre per metric (CMP_CENTRE_AUTO): the harmonic mean for rates (metric
 * `rps`, names ending in `_per_s` or `_jops`, units ending in `/s`), which
 * keeps a slow repetition from being averaged away and equals total work
 * over total time for runs of equal work; the median for everything else.
 * A rate with a value <= 0 falls back to the median.
 */
#ifndef SL_COMPARE_H
#define SL_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "analysis/stats.h"
#include "analysis/verdict.h"
#include "harness/results/select.h"
#include "harness/util/strbuf.h"

enum cmp_centre_mode { CMP_CENTRE_AUTO = 0, CMP_CENTRE_MEDIAN, CMP_CENTRE_MEAN, CMP_CENTRE_HMEAN };

struct cmp_options {
	double threshold_pct;        /* noise threshold, default 2 */
	enum cmp_centre_mode centre;
	const char *metric;          /* only this metric (name or workload.metric) */
	unsigned resamples;          /* 0: default */
	uint64_t seed;               /* 0: default */
	/* the workload parameter that sets its histogram's range, named in the
	 * advice of a verdict on censored values (the caller knows the
	 * workloads; NULL function or result: no parameter to name) */
	const char *(*range_param)(const char *workload);
	/* where the values come from (analysis/verdict.h): DETERMINISTIC when
	 * the caller knows both sides ran on a virtual clock; UNKNOWN (the
	 * default) judges exact data from the values alone */
	enum verdict_source source;
};
void cmp_options_default(struct cmp_options *o);

/* the fewest repetitions a side `check` and the nightly robot judge: 3, a
 * complete separation of fewer or identical repeats of fewer being too
 * likely by chance (docs/statistics.md); 2 for a deterministic source,
 * whose repeats show whether it repeats itself */
#define CMP_MIN_REPS 3
#define CMP_MIN_REPS_DETERMINISTIC 2
size_t compare_min_reps(const struct cmp_options *o);

/* the centre used for a metric */
enum stats_centre compare_centre_for(const char *metric, const char *unit,
				     enum cmp_centre_mode mode);
const char *compare_centre_name(enum stats_centre c);   /* median, mean, hmean */

/* one series of A compared with one of B */
struct cmp_pair {
	size_t a, b;                 /* series indexes into the two sets */
	char *label;                 /* what tells it from other pairs of its workload */
	char *workload;              /* the run workload (points into set A) */
};

enum cmp_row_kind { CMP_METRIC = 0, CMP_HIST = 1 };

struct cmp_row {
	enum cmp_row_kind kind;
	size_t pair;
	const char *workload, *metric, *unit;   /* point into the sets / hist names */
	enum sel_better better;
	/* CMP_METRIC */
	enum stats_centre centre;
	struct verdict v;
	int has_verdict;             /* 0 for better = none */
	int has_noise;               /* A/A comparison: noise floor below */
	const char *range_param;     /* cmp_options.range_param of the workload */
	struct noise_floor nf;
	/* CMP_HIST: percentile pct of the merged histograms */
	double pct;
	double ha, hb;               /* NAN when empty or incompatible */
	int ha_overflow, hb_overflow;  /* value is a lower bound (overflow) */
	size_t a_runs, b_runs;
	uint64_t a_samples, b_samples;
	double change_pct;           /* CMP_HIST: 100 (hb / ha - 1) */
};

struct cmp_result {
	unsigned diff_mask;          /* bit 1 << dim: dimensions that tell A from B */
	unsigned label_mask;         /* the ones to name (sel_label_mask) */
	struct cmp_pair *pairs;
	size_t npairs;
	struct cmp_row *rows;
	size_t nrows;
	struct strvec warnings;      /* for stderr: mixing, unmatched series */
	struct strvec names;         /* histogram names the CMP_HIST rows point to */
	double threshold_pct;
};

/*
 * Compare A against B. Rows point into a, b: free the result first. Fails
 * (-1, message in err) on bad options or memory; "nothing in common" is a
 * result with no rows.
 */
int compare_sets(const struct sample_set *a, const struct sample_set *b,
		 const struct cmp_options *o, struct cmp_result *r, struct strbuf *err);
/* add p50/p99/p99.9 rows for histograms present on both sides of a pair */
void compare_add_hists(struct cmp_result *r, size_t pair, const struct sel_hist *ha,
		       size_t nha, const struct sel_hist *hb, size_t nhb);
/* order: pairs as computed (workload, label), metric rows by effect size
 * (|change|, undefined last), histogram rows after them */
void compare_sort(struct cmp_result *r);
void cmp_result_free(struct cmp_result *r);

/* the identity value of a series for display (machine name, kernel release
 * with a short config hash, ...); malloc'd */
char *sel_series_dim_text(const struct sel_series *s, enum sel_dim d);

/* the verdict text: "better", "worse", "no change",
 * "inconclusive: need ~N repetitions" or "-" (no direction), with " (exact
 * data)" after a verdict read off exact data; on censored
 * values (docs/statistics.md) "worse, at least +X%" or "inconclusive: beyond
 * the histogram range (>= B unit) in N of M runs; raise ..."; malloc'd */
char *compare_verdict_text(const struct cmp_row *row);

/* a row's p-value as printed: "exact" for a difference read off exact data
 * of a deterministic source, "-" when there is none, else the number (%.2g,
 * below 0.001 as %.0e) */
void compare_p_text(char *buf, size_t n, const struct cmp_row *row);

/*
 * The whole pipeline of compare and check, and the one function here that
 * reads the database: parse both selectors (-1 with the message: bad input),
 * load, compare, add merged histograms (when hists), sort.
 */
struct compare_job {
	struct sample_set a, b;
	struct cmp_result r;
};
int compare_job_run(struct db *db, const char *sel_a, const char *sel_b,
		    const struct cmp_options *o, int hists, struct compare_job *job,
		    struct strbuf *err);
void compare_job_free(struct compare_job *job);

/* the document `schedlab compare --format json` prints (schedlab_format 1;
 * harness/results/compare_json.c): selectors sa and sb, every row */
json_t *compare_job_json(const struct compare_job *job, const char *sa, const char *sb);

#endif
