/*
 * A/B comparison of two sample sets: series pairing, verdicts per metric,
 * merged-histogram percentiles, ordering. Pure: no database, no printing;
 * see compare.h for the rules.
 */
#include "harness/results/compare.h"
#include "harness/util/numfmt.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cmp_options_default(struct cmp_options *o)
{
	memset(o, 0, sizeof(*o));
	o->threshold_pct = VERDICT_DEFAULT_THRESHOLD_PCT;
	o->centre = CMP_CENTRE_AUTO;
}

size_t compare_min_reps(const struct cmp_options *o)
{
	return o && o->source == VERDICT_SOURCE_DETERMINISTIC ? CMP_MIN_REPS_DETERMINISTIC
							      : CMP_MIN_REPS;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

enum stats_centre compare_centre_for(const char *metric, const char *unit,
				     enum cmp_centre_mode mode)
{
	switch (mode) {
	case CMP_CENTRE_MEDIAN: return STATS_MEDIAN;
	case CMP_CENTRE_MEAN: return STATS_MEAN;
	case CMP_CENTRE_HMEAN: return STATS_HMEAN;
	case CMP_CENTRE_AUTO: break;
	}
	if (!strcmp(metric, "rps") || ends_with(metric, "_per_s") || ends_with(metric, "_jops") ||
	    (unit && ends_with(unit, "/s")))
		return STATS_HMEAN;
	return STATS_MEDIAN;
}

const char *compare_centre_name(enum stats_centre c)
{
	switch (c) {
	case STATS_MEDIAN: return "median";
	case STATS_MEAN: return "mean";
	case STATS_HMEAN: return "hmean";
	}
	return "?";
}

/* a traced run's series: its params carry the "evidence" object */
static int series_traced(const struct sel_series *s)
{
	return strstr(s->dim[DIM_PARAMS], "\"evidence\":") != NULL;
}

/* the note for a traced series that has no traced counterpart: what its
 * trace says (the trace_* metrics, median over its runs), and which runs */
static void trace_note(struct cmp_result *r, const char *side, const struct sample_set *s,
		       size_t i)
{
	static const char *const show[] = { "trace_wakeup_lat_p50_us", "trace_wakeup_lat_p99_us",
					    "trace_wakeup_lat_max_us", "trace_preemptions",
					    "trace_migrations", "trace_switches", NULL };
	struct strbuf sb = STRBUF_INIT, runs = STRBUF_INIT;
	for (const char *const *m = show; *m; m++)
		for (size_t g = 0; g < s->ngroups; g++) {
			const struct sel_group *gr = &s->groups[g];
			if (gr->series != i || strcmp(gr->metric, *m) || !gr->n)
				continue;
			char num[32];
			fmt_num(num, sizeof(num), gr->value[gr->n - 1]);
			strbuf_addf(&sb, " %s=%s", *m + strlen("trace_"), num);
			if (!runs.len)
				for (size_t k = 0; k < gr->n; k++)
					strbuf_addf(&runs, "%s%lld", k ? "," : "",
						    (long long)gr->run_id[k]);
		}
	strvec_pushf(&r->warnings, "traced run (evidence) in %s, not compared: %s:%s (run %s; "
		     "the trace is its file schedlab-trace.txt, the busiest tasks "
		     "schedlab-trace.json)", side, s->series[i].dim[DIM_WORKLOAD],
		     sb.len ? sb.buf : " no trace metrics", runs.len ? runs.buf : "?");
	strbuf_release(&sb);
	strbuf_release(&runs);
}

char *sel_series_dim_text(const struct sel_series *s, enum sel_dim d)
{
	switch (d) {
	case DIM_MACHINE:
		return xstrdup(*s->machine ? s->machine : s->dim[DIM_MACHINE]);
	case DIM_KERNEL:
		if (s->kernel_label)
			return xstrfmt("%s (%s, %.12s)", s->kernel_describe, s->kernel_release,
				       s->kernel_commit);
		if (*s->config_hash)
			return xstrfmt("%s (config %.8s)", s->kernel_release, s->config_hash);
		return xstrdup(s->kernel_release);
	default:
		return xstrdup(*s->dim[d] ? s->dim[d] : "(none)");
	}
}

/* ---- pairing ---------------------------------------------------------- */

static int value_in(const struct sample_set *s, enum sel_dim d, const char *v)
{
	for (size_t i = 0; i < s->nseries; i++)
		if (!strcmp(s->series[i].dim[d], v))
			return 1;
	return 0;
}

static unsigned diff_dims(const struct sample_set *a, const struct sample_set *b)
{
	unsigned mask = 0;
	if (!a->nseries || !b->nseries)
		return 0;
	for (int d = 0; d < SEL_NDIMS; d++) {
		if (d == DIM_WORKLOAD)
			continue;
		int common = 0;
		for (size_t i = 0; i < a->nseries && !common; i++)
			common = value_in(b, d, a->series[i].dim[d]);
		if (!common)
			mask |= 1u << d;
	}
	return mask;
}

/* distinct display values of dim d in a set, ", "-joined; count in *n */
static char *distinct_text(const struct sample_set *s, enum sel_dim d, size_t *n)
{
	struct strbuf sb = STRBUF_INIT;
	*n = 0;
	for (size_t i = 0; i < s->nseries; i++) {
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(s->series[j].dim[d], s->series[i].dim[d]);
		if (seen)
			continue;
		char *t = sel_series_dim_text(&s->series[i], d);
		if (strlen(t) > 60)
			strcpy(t + 57, "...");
		strbuf_addf(&sb, "%s%s", (*n)++ ? ", " : "", t);
		free(t);
	}
	return strbuf_detach(&sb, NULL);
}

static void warn_mixed(struct cmp_result *r, const char *side, const struct sample_set *s)
{
	size_t n;
	char *t = distinct_text(s, DIM_MACHINE, &n);
	if (n > 1)
		strvec_pushf(&r->warnings,
			     "side %s mixes %zu machines (%s); add machine=NAME (or machine_id=) "
			     "to its selector",
			     side, n, t);
	free(t);
	/* what a guest's values are measured by: never one series across it */
	static const struct {
		enum sel_dim d;
		const char *what, *why;
	} bases[] = {
		{ DIM_CLOCK, "clocks",
		  "a virtual clock counts instructions (docs/virtual-time.md), so its values "
		  "are not the real clock's; add clock=real or clock=virtual to its selector" },
		{ DIM_QEMU, "qemu versions",
		  "another emulator is another series (a virtual clock's values move with it, "
		  "docs/virtual-time.md); add qemu_version=VERSION to its selector" },
	};
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		t = distinct_text(s, bases[i].d, &n);
		if (n > 1)
			strvec_pushf(&r->warnings, "side %s mixes %zu %s (%s): %s", side, n,
				     bases[i].what, t, bases[i].why);
		free(t);
	}
	t = distinct_text(s, DIM_KERNEL, &n);
	if (n > 1) {
		int same_release = 1;
		for (size_t i = 1; i < s->nseries; i++)
			same_release &= !strcmp(s->series[i].kernel_release,
						s->series[0].kernel_release);
		strvec_pushf(&r->warnings,
			     "side %s mixes %zu kernels (%s); add %s to its selector", side, n, t,
			     !same_release ? "kernel_release=RELEASE" : "config_hash=HASH");
	}
	free(t);
}

/* label of pair p: the dimensions in which it differs from the other pairs
 * of its workload */
static char *pair_label(const struct cmp_result *r, size_t p, const struct sample_set *a,
			const struct sample_set *b)
{
	const struct cmp_pair *pp = &r->pairs[p];
	const struct sel_series *sa = &a->series[pp->a], *sb = &b->series[pp->b];
	struct strbuf out = STRBUF_INIT;
	for (int d = 0; d < SEL_NDIMS; d++) {
		if (d == DIM_WORKLOAD ||
		    ((r->diff_mask & ~r->label_mask) & (1u << d)))
			continue;
		int varies = 0;
		const char **others = xcalloc(r->npairs * 2 + 1, sizeof(char *));
		size_t no = 0;
		for (size_t q = 0; q < r->npairs; q++) {
			if (q == p || strcmp(r->pairs[q].workload, pp->workload))
				continue;
			const struct sel_series *qa = &a->series[r->pairs[q].a],
						*qb = &b->series[r->pairs[q].b];
			if (strcmp(qa->dim[d], sa->dim[d]) || strcmp(qb->dim[d], sb->dim[d]))
				varies = 1;
			others[no++] = qa->dim[d];
			if (r->diff_mask & (1u << d))
				others[no++] = qb->dim[d];
		}
		if (varies) {
			char *va, *vb = NULL;
			if (d == DIM_PARAMS || d == DIM_KNOBS) {
				va = sel_json_label(sa->dim[d], others, no);
				if (r->diff_mask & (1u << d))
					vb = sel_json_label(sb->dim[d], others, no);
				if (!*va) {
					free(va);
					va = xstrdup("{}");
				}
				strbuf_addf(&out, "%s%s%s%s%s", out.len ? "; " : "",
					    d == DIM_KNOBS ? "knobs " : "", va, vb ? " vs " : "",
					    vb ? vb : "");
			} else {
				va = sel_series_dim_text(sa, d);
				if (r->diff_mask & (1u << d))
					vb = sel_series_dim_text(sb, d);
				strbuf_addf(&out, "%s%s=%s%s%s", out.len ? "; " : "", sel_dim_name(d),
					    va, vb ? " vs " : "", vb ? vb : "");
			}
			free(va);
			free(vb);
		}
		free(others);
	}
	return strbuf_detach(&out, NULL);
}

/*
 * Many metrics are compared at once (a cyclictest run alone has seven with a
 * direction), so a verdict must also survive the multiplicity: the
 * p-values of all metric rows (the Mann-Whitney p, or p_exact for a difference
 * read off exact data: verdict.h) are put through Benjamini-Hochberg
 * at q = 1 - level (5%). A row whose CI says better/worse but whose p does
 * not pass becomes inconclusive, with the repetitions per side needed before
 * even a complete separation of the two sides could pass (two-sided exact
 * p of a complete separation with n a side is 2 / C(2n, n)). With no real
 * difference this keeps the chance of any "better"/"worse" in the whole
 * comparison at about 5%, instead of about 5% per metric.
 */
static size_t reps_for_p(double alpha)
{
	for (size_t n = 2; n < 200; n++) {
		double c = 1; /* C(2n, n) */
		for (size_t k = 1; k <= n; k++)
			c = c * (double)(n + k) / (double)k;
		if (2.0 / c <= alpha)
			return n;
	}
	return 200;
}

static int cmp_p(const void *x, const void *y)
{
	double a = (*(const struct cmp_row *const *)x)->v.p;
	double b = (*(const struct cmp_row *const *)y)->v.p;
	return a < b ? -1 : a > b;
}

static void apply_fdr(struct cmp_result *r, double q)
{
	struct cmp_row **t = xcalloc(r->nrows + 1, sizeof(*t));
	size_t m = 0;
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].kind == CMP_METRIC && r->rows[i].has_verdict &&
		    !r->rows[i].v.insufficient)
			t[m++] = &r->rows[i];
	qsort(t, m, sizeof(*t), cmp_p);
	size_t pass = 0; /* the largest k with p_(k) <= k q / m */
	for (size_t k = 1; k <= m; k++)
		if (!isnan(t[k - 1]->v.p) && t[k - 1]->v.p <= (double)k * q / (double)m)
			pass = k;
	for (size_t k = pass; k < m; k++) {
		struct verdict *v = &t[k]->v;
		if (v->kind != VERDICT_BETTER && v->kind != VERDICT_WORSE)
			continue;
		v->kind = VERDICT_INCONCLUSIVE;
		v->reason = "not significant across the metrics compared (Benjamini-Hochberg)";
		/* exact data: the repetitions at which identical sides could pass;
		   paired by seed: the seeds at which all agreeing could */
		size_t need = v->sign_rule ? verdict_sign_reps(q / (double)m)
			      : v->exact  ? verdict_exact_reps(q / (double)m)
					  : reps_for_p(q / (double)m);
		size_t have = v->sign_rule ? v->paired : v->n_a > v->n_b ? v->n_a : v->n_b;
		if (need <= have)
			need = have + 1;
		if (v->reps_needed < need)
			v->reps_needed = need;
	}
	free(t);
}

struct row_job {
	const struct sel_group *ga, *gb;
	struct verdict_options vo;
	struct cmp_row row;
	int failed;
};

struct job_queue {
	struct row_job *jobs;
	size_t n;
	size_t next; /* taken with __atomic_fetch_add */
};

static void *job_worker(void *arg)
{
	struct job_queue *q = arg;
	for (;;) {
		size_t k = __atomic_fetch_add(&q->next, 1, __ATOMIC_RELAXED);
		if (k >= q->n)
			return NULL;
		struct row_job *j = &q->jobs[k];
		j->failed = verdict_compare_censored(j->ga->value, j->ga->ncensored ? j->ga->censored : NULL,
						     j->ga->n, j->gb->value,
						     j->gb->ncensored ? j->gb->censored : NULL,
						     j->gb->n, &j->vo, &j->row.v) != 0;
	}
}

/*
 * The bootstrap's indices depend on the two sizes, the resamples and the
 * seed, not on the values, and the rank test's exact null distribution on
 * the sizes: the metrics of a series pair (every metric of its runs) draw
 * the same indices and test against the same distribution. Both are kept
 * once for each such key that two or more rows share (the draws at most
 * 256 MB in all) and used by every row of it: the same intervals and p,
 * without the random stream's and the distribution's cost a row (half the
 * CPU of a month against a month, 500 rows). The jobs point at them.
 */
struct kept {
	struct stats_boot_draws **draws;
	struct stats_mwu_null **nulls;
	size_t ndraws, nnulls;
};

static int same_key(const struct row_job *x, const struct row_job *y)
{
	unsigned rx = x->vo.resamples ? x->vo.resamples : STATS_BOOT_RESAMPLES;
	unsigned ry = y->vo.resamples ? y->vo.resamples : STATS_BOOT_RESAMPLES;
	return x->ga->n == y->ga->n && x->gb->n == y->gb->n && rx == ry &&
	       x->vo.seed == y->vo.seed;
}

static void share_kept(struct row_job *jobs, size_t n, struct kept *k)
{
	memset(k, 0, sizeof(*k));
	size_t bytes = 0;
	char *done = xcalloc(n + 1, 1);
	for (size_t i = 0; i < n; i++) {
		const struct row_job *j = &jobs[i];
		size_t na = j->ga->n, nb = j->gb->n, same = 0;
		if (done[i] || na < 2 || nb < 2)
			continue;
		for (size_t o = i; o < n; o++)
			if (same_key(&jobs[o], j)) {
				done[o] = 1;
				same++;
			}
		if (same < 2)
			continue;
		unsigned rs = j->vo.resamples ? j->vo.resamples : STATS_BOOT_RESAMPLES;
		size_t size = (size_t)rs * (na + nb) * sizeof(uint16_t);
		/* NULL when not possible: each row then does its own */
		struct stats_boot_draws *d = bytes + size <= ((size_t)256 << 20)
						     ? stats_boot_draws_new(na, nb, rs, j->vo.seed)
						     : NULL;
		struct stats_mwu_null *z = stats_mwu_null_new(na, nb);
		if (d) {
			bytes += size;
			k->draws = xrealloc(k->draws, (k->ndraws + 1) * sizeof(*k->draws));
			k->draws[k->ndraws++] = d;
		}
		if (z) {
			k->nulls = xrealloc(k->nulls, (k->nnulls + 1) * sizeof(*k->nulls));
			k->nulls[k->nnulls++] = z;
		}
		for (size_t o = i; o < n; o++)
			if (same_key(&jobs[o], j)) {
				jobs[o].vo.draws = d;
				jobs[o].vo.mwu_null = z;
			}
	}
	free(done);
}

static void kept_free(struct kept *k)
{
	for (size_t i = 0; i < k->ndraws; i++)
		stats_boot_draws_free(k->draws[i]);
	for (size_t i = 0; i < k->nnulls; i++)
		stats_mwu_null_free(k->nulls[i]);
	free(k->draws);
	free(k->nulls);
}

/* the bootstraps dominate a large comparison: spread them over the CPUs */
static void run_jobs(struct row_job *jobs, size_t n)
{
	struct job_queue q = { jobs, n, 0 };
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nthreads = ncpu > 1 ? (size_t)ncpu : 1;
	if (nthreads > 8)
		nthreads = 8;
	if (nthreads > n / 16)
		nthreads = n / 16; /* not worth a thread for a few rows */
	pthread_t tid[8];
	size_t started = 0;
	for (size_t i = 0; i < nthreads; i++)
		if (!pthread_create(&tid[started], NULL, job_worker, &q))
			started++;
	job_worker(&q);
	for (size_t i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
}

static void push_row(struct cmp_result *r, size_t *alloc, const struct cmp_row *row)
{
	if (r->nrows == *alloc) {
		*alloc = *alloc ? 2 * *alloc : 32;
		r->rows = xrealloc(r->rows, *alloc * sizeof(*r->rows));
	}
	r->rows[r->nrows++] = *row;
}

static int metric_selected(const struct cmp_options *o, const struct sel_group *g)
{
	if (!o->metric)
		return 1;
	const char *dot = strchr(o->metric, '.');
	if (!dot)
		return !strcmp(g->metric, o->metric);
	return strlen(g->workload) == (size_t)(dot - o->metric) &&
	       !strncmp(g->workload, o->metric, (size_t)(dot - o->metric)) &&
	       !strcmp(g->metric, dot + 1);
}

static int all_positive(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!(x[i] > 0))
			return 0;
	return 1;
}

/* the pairs of series to compare (a traced series, "evidence" in its
 * params, only with another traced one: tracing perturbs the run it
 * watches); a_used and b_used count each series' pairs */
static void pair_series(struct cmp_result *r, const struct sample_set *a,
			const struct sample_set *b, unsigned same, char *a_used, char *b_used)
{
	size_t palloc = 0;
	for (size_t i = 0; i < a->nseries; i++)
		for (size_t j = 0; j < b->nseries; j++) {
			if (!sel_series_match(&a->series[i], &b->series[j], same))
				continue;
			if (series_traced(&a->series[i]) != series_traced(&b->series[j])) {
				char *pl = sel_json_label(a->series[i].dim[DIM_PARAMS], NULL, 0);
				strvec_pushf(&r->warnings, "traced runs (evidence) are not compared "
					     "with untraced runs: %s %s", a->series[i].dim[DIM_WORKLOAD],
					     pl);
				free(pl);
				continue;
			}
			if (r->npairs == palloc) {
				palloc = palloc ? 2 * palloc : 8;
				r->pairs = xrealloc(r->pairs, palloc * sizeof(*r->pairs));
			}
			struct cmp_pair *p = &r->pairs[r->npairs++];
			p->a = i;
			p->b = j;
			p->label = NULL;
			p->workload = a->series[i].dim[DIM_WORKLOAD];
			a_used[i]++;
			b_used[j]++;
		}
	for (size_t p = 0; p < r->npairs; p++)
		r->pairs[p].label = pair_label(r, p, a, b);
}

/* several series of one side against one identity: say so */
static void warn_several(struct cmp_result *r, const struct sample_set *a,
			 const struct sample_set *b)
{
	for (int d = 0; d < SEL_NDIMS; d++) {
		if (!(r->diff_mask & (1u << d)))
			continue;
		for (int side = 0; side < 2; side++) {
			const struct sample_set *s = side ? b : a;
			size_t n;
			char *t = distinct_text(s, (enum sel_dim)d, &n);
			if (n > 1)
				strvec_pushf(&r->warnings,
					     "side %s holds %zu values of %s (%s): each is compared "
					     "on its own row; add %s=VALUE to narrow it",
					     side ? "B" : "A", n, sel_dim_name(d), t, sel_dim_key(d));
			free(t);
		}
	}
}

/* the series of side s (other: the other side) with no partner; not listed
 * when the other side is empty (the caller says that selector matches
 * nothing) */
static void warn_unpaired(struct cmp_result *r, int side, const struct sample_set *s,
			  const struct sample_set *other, const char *used)
{
	if (!other->nseries)
		return;
	/* the dimensions with several values on this side (counted once) */
	unsigned several = 0;
	for (size_t i = 0; i < s->nseries && !several; i++)
		several = !used[i] && !series_traced(&s->series[i]);
	for (int d = 0; several && d < SEL_NDIMS; d++) {
		size_t n;
		if (d == DIM_WORKLOAD || d == DIM_PARAMS)
			continue;
		free(distinct_text(s, (enum sel_dim)d, &n));
		if (n > 1)
			several |= 2u << d;
	}
	for (size_t i = 0; i < s->nseries; i++) {
		if (used[i])
			continue;
		if (series_traced(&s->series[i])) {
			trace_note(r, side ? "B" : "A", s, i);
			continue;
		}
		char *pl = sel_json_label(s->series[i].dim[DIM_PARAMS], NULL, 0);
		struct strbuf which = STRBUF_INIT;
		/* what tells this series from the side's others */
		for (int d = 0; d < SEL_NDIMS; d++) {
			if (several & (2u << d)) {
				char *t = sel_series_dim_text(&s->series[i], (enum sel_dim)d);
				strbuf_addf(&which, " %s=%s", sel_dim_key((enum sel_dim)d), t);
				free(t);
			}
		}
		strvec_pushf(&r->warnings, "only in %s, not compared: %s %s%s",
			     side ? "B" : "A", s->series[i].dim[DIM_WORKLOAD], pl,
			     which.len ? which.buf : "");
		strbuf_release(&which);
		free(pl);
	}
}

/* the row of metric group ga (pair p) against gb, its verdict still to do */
static void row_job_init(struct row_job *j, size_t p, const struct sel_group *ga,
			 const struct sel_group *gb, const struct cmp_options *o)
{
	memset(j, 0, sizeof(*j));
	j->ga = ga;
	j->gb = gb;
	struct cmp_row *row = &j->row;
	row->kind = CMP_METRIC;
	row->pair = p;
	row->workload = ga->workload;
	row->metric = ga->metric;
	row->unit = ga->unit;
	row->better = ga->better;
	row->has_verdict = ga->better != SEL_BETTER_NONE;
	row->range_param = o->range_param ? o->range_param(ga->workload) : NULL;
	row->centre = compare_centre_for(ga->metric, ga->unit, o->centre);
	if (row->centre == STATS_HMEAN &&
	    (!all_positive(ga->value, ga->n) || !all_positive(gb->value, gb->n)))
		row->centre = STATS_MEDIAN;
	row->pct = NAN;
	row->ha = row->hb = row->change_pct = NAN;
	verdict_options_default(&j->vo, ga->better == SEL_BETTER_HIGHER
						? VERDICT_HIGHER_IS_BETTER
						: VERDICT_LOWER_IS_BETTER);
	j->vo.threshold_pct = o->threshold_pct;
	j->vo.centre = row->centre;
	j->vo.source = o->source;
	if (o->resamples)
		j->vo.resamples = o->resamples;
	if (o->seed)
		j->vo.seed = o->seed;
}

/* 1 when a group's values come from runs of two or more seeds */
static int several_seeds(const struct sel_group *g)
{
	for (size_t i = 1; g->seed && i < g->n; i++)
		if (g->seed[i] != g->seed[0])
			return 1;
	return 0;
}

/* the metric pairs of every series pair, one job each; their number */
static size_t collect_row_jobs(const struct cmp_result *r, const struct sample_set *a,
			       const struct sample_set *b, const struct cmp_options *o,
			       struct row_job **jobs_out)
{
	struct row_job *jobs = NULL;
	size_t njobs = 0, jalloc = 0;
	for (size_t p = 0; p < r->npairs; p++) {
		const struct cmp_pair *pp = &r->pairs[p];
		for (size_t gi = 0; gi < a->ngroups; gi++) {
			const struct sel_group *ga = &a->groups[gi];
			if (ga->series != pp->a || !metric_selected(o, ga))
				continue;
			const struct sel_group *gb = NULL;
			for (size_t gj = 0; gj < b->ngroups && !gb; gj++)
				if (b->groups[gj].series == pp->b &&
				    !strcmp(b->groups[gj].workload, ga->workload) &&
				    !strcmp(b->groups[gj].metric, ga->metric))
					gb = &b->groups[gj];
			if (!gb)
				continue;
			if (njobs == jalloc) {
				jalloc = jalloc ? 2 * jalloc : 64;
				jobs = xrealloc(jobs, jalloc * sizeof(*jobs));
			}
			row_job_init(&jobs[njobs++], p, ga, gb, o);
			/* the sides paired by seed (docs/statistics.md "Paired by
			 * seed") */
			jobs[njobs - 1].vo.seed_a = ga->seed;
			jobs[njobs - 1].vo.seed_b = gb->seed;
			/* two series of a virtual clock: a deterministic source
			 * (docs/virtual-time.md), as long as their repeats are
			 * repeats: runs under different seeds differ by design */
			if (!strncmp(a->series[pp->a].dim[DIM_CLOCK], "virtual", 7) &&
			    !strncmp(b->series[pp->b].dim[DIM_CLOCK], "virtual", 7) &&
			    !several_seeds(ga) && !several_seeds(gb))
				jobs[njobs - 1].vo.source = VERDICT_SOURCE_DETERMINISTIC;
		}
	}
	*jobs_out = jobs;
	return njobs;
}

/* the finished jobs' rows into r, in order; -1 when one failed */
static int keep_rows(struct cmp_result *r, struct row_job *jobs, size_t njobs,
		     struct strbuf *err)
{
	size_t ralloc = 0;
	for (size_t k = 0; k < njobs; k++) {
		struct row_job *j = &jobs[k];
		if (j->failed) {
			strbuf_addf(err, "%s.%s: the comparison failed", j->ga->workload, j->ga->metric);
			return -1;
		}
		j->row.change_pct = j->row.v.change_pct;
		if (!r->diff_mask && j->ga->n >= 2 && j->gb->n >= 2 && !j->ga->ncensored &&
		    !j->gb->ncensored &&
		    !verdict_noise_floor_from(j->ga->value, j->ga->n, j->gb->value, j->gb->n,
					      &j->row.v, &j->row.nf))
			j->row.has_noise = 1;
		push_row(r, &ralloc, &j->row);
	}
	return 0;
}

int compare_sets(const struct sample_set *a, const struct sample_set *b,
		 const struct cmp_options *o, struct cmp_result *r, struct strbuf *err)
{
	struct cmp_options def;
	if (!o) {
		cmp_options_default(&def);
		o = &def;
	}
	memset(r, 0, sizeof(*r));
	r->warnings = (struct strvec)STRVEC_INIT;
	r->names = (struct strvec)STRVEC_INIT;
	if (!(o->threshold_pct > 0) || !isfinite(o->threshold_pct)) {
		strbuf_addf(err, "threshold must be a positive percentage");
		return -1;
	}
	r->threshold_pct = o->threshold_pct;
	r->diff_mask = diff_dims(a, b);
	const struct sample_set *ab[2] = { a, b };
	r->label_mask = sel_label_mask(r->diff_mask, ab, 2);
	unsigned same = ((1u << SEL_NDIMS) - 1) & ~r->diff_mask;

	warn_mixed(r, "A", a);
	warn_mixed(r, "B", b);
	char *a_used = xcalloc(a->nseries + 1, 1), *b_used = xcalloc(b->nseries + 1, 1);
	pair_series(r, a, b, same, a_used, b_used);
	warn_several(r, a, b);
	warn_unpaired(r, 0, a, b, a_used);
	warn_unpaired(r, 1, b, a, b_used);
	free(a_used);
	free(b_used);

	/* rows: collect the metric pairs, compute their verdicts (independent,
	 * each with its own seeded random stream, so in parallel and still
	 * deterministic), then keep them in order */
	struct row_job *jobs;
	size_t njobs = collect_row_jobs(r, a, b, o, &jobs);
	struct kept kept;
	share_kept(jobs, njobs, &kept);
	run_jobs(jobs, njobs);
	int bad = keep_rows(r, jobs, njobs, err);
	kept_free(&kept);
	free(jobs);
	if (bad) {
		cmp_result_free(r);
		return -1;
	}
	apply_fdr(r, 0.05);
	return 0;
}

void compare_add_hists(struct cmp_result *r, size_t pair, const struct sel_hist *ha,
		       size_t nha, const struct sel_hist *hb, size_t nhb)
{
	static const double pcts[] = { 50, 99, 99.9 };
	size_t alloc = r->nrows;   /* grow from the exact size */
	for (size_t i = 0; i < nha; i++) {
		const struct sel_hist *b = NULL;
		for (size_t j = 0; j < nhb && !b; j++)
			if (!strcmp(hb[j].name, ha[i].name))
				b = &hb[j];
		if (!b)
			continue;
		strvec_push(&r->names, ha[i].name);
		const char *name = r->names.v[r->names.nr - 1];
		strvec_push(&r->names, ha[i].unit);
		const char *unit = r->names.v[r->names.nr - 1];
		for (size_t k = 0; k < sizeof(pcts) / sizeof(pcts[0]); k++) {
			struct cmp_row row;
			memset(&row, 0, sizeof(row));
			row.kind = CMP_HIST;
			row.pair = pair;
			row.workload = r->pairs[pair].workload;
			row.metric = name;
			row.unit = unit;
			row.better = SEL_BETTER_LOWER;
			row.pct = pcts[k];
			row.a_runs = ha[i].nruns;
			row.b_runs = b->nruns;
			row.a_samples = ha[i].h.total;
			row.b_samples = b->h.total;
			row.ha = row.hb = row.change_pct = NAN;
			double v;
			enum hist_pct pr;
			if (!ha[i].incompatible) {
				pr = hist_percentile(&ha[i].h, pcts[k], &v);
				if (pr != HIST_EMPTY)
					row.ha = v;
				row.ha_overflow = pr == HIST_IN_OVERFLOW;
			}
			if (!b->incompatible) {
				pr = hist_percentile(&b->h, pcts[k], &v);
				if (pr != HIST_EMPTY)
					row.hb = v;
				row.hb_overflow = pr == HIST_IN_OVERFLOW;
			}
			if (row.ha > 0 && isfinite(row.hb))
				row.change_pct = 100.0 * (row.hb / row.ha - 1.0);
			push_row(r, &alloc, &row);
		}
	}
}

static int row_cmp(const void *x, const void *y)
{
	const struct cmp_row *a = x, *b = y;
	if (a->pair != b->pair)
		return a->pair < b->pair ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->kind == CMP_HIST) {
		int c = strcmp(a->metric, b->metric);
		if (c)
			return c;
		return a->pct < b->pct ? -1 : a->pct > b->pct;
	}
	/* by the size of the change on the log ratio, as the threshold
	 * (a halving as large as a doubling); -100% is the largest */
	int na = !isfinite(a->change_pct), nb = !isfinite(b->change_pct);
	double ea = na ? 0 : a->change_pct <= -100 ? INFINITY : fabs(log1p(a->change_pct / 100));
	double eb = nb ? 0 : b->change_pct <= -100 ? INFINITY : fabs(log1p(b->change_pct / 100));
	if (na != nb)
		return na - nb;
	if (!na && ea != eb)
		return ea > eb ? -1 : 1;
	int c = strcmp(a->workload, b->workload);
	return c ? c : strcmp(a->metric, b->metric);
}

void compare_sort(struct cmp_result *r)
{
	if (r->nrows)
		qsort(r->rows, r->nrows, sizeof(*r->rows), row_cmp);
}

void cmp_result_free(struct cmp_result *r)
{
	for (size_t i = 0; i < r->npairs; i++)
		free(r->pairs[i].label);
	free(r->pairs);
	free(r->rows);
	strvec_clear(&r->warnings);
	strvec_clear(&r->names);
	memset(r, 0, sizeof(*r));
}

char *compare_verdict_text(const struct cmp_row *row)
{
	if (row->kind == CMP_HIST || !row->has_verdict)
		return xstrdup("-");
	const struct verdict *v = &row->v;
	if (v->censored_a || v->censored_b) {
		char bound[32], change[32];
		fmt_num(bound, sizeof(bound), v->bound);
		if ((v->kind == VERDICT_BETTER || v->kind == VERDICT_WORSE) && v->change_bound)
			return xstrfmt("%s, at least %+.1f%%", verdict_kind_name(v->kind),
				       v->change_pct);
		const char *where = row->range_param ? "beyond the histogram range"
						     : "beyond the measured range";
		char *why = xstrfmt("%s (>= %s %s) in %zu of %zu runs", where, bound, row->unit,
				    v->censored_a + v->censored_b, v->n_a + v->n_b);
		char *advice = row->range_param
				       ? xstrfmt("; raise %s's %s", row->workload, row->range_param)
				       : xstrdup("");
		char *t;
		if (v->change_bound && v->reps_needed) {
			snprintf(change, sizeof(change), "%+.1f%%", v->change_pct);
			t = xstrfmt("inconclusive: need ~%zu repetitions for %s %s (%s)",
				    v->reps_needed, v->change_bound > 0 ? "at least" : "at most",
				    change, why);
		} else if (v->insufficient) {
			t = xstrfmt("inconclusive: need ~%zu repetitions; %s%s", v->reps_needed, why,
				    advice);
		} else {
			t = xstrfmt("inconclusive: %s%s", why, advice);
		}
		free(why);
		free(advice);
		return t;
	}
	if (row->v.exact && row->v.kind != VERDICT_INCONCLUSIVE)
		return xstrfmt("%s (exact data)", verdict_kind_name(row->v.kind));
	if (row->v.sign_rule && row->v.kind != VERDICT_INCONCLUSIVE)
		return xstrfmt("%s (every seed agrees: %zu pairs)", verdict_kind_name(row->v.kind),
			       row->v.paired);
	if (row->v.sign_rule && row->v.reps_needed && row->v.reps_needed <= 1000)
		return xstrfmt("inconclusive: every seed agrees, need %zu seeds a side",
			       row->v.reps_needed);
	if (row->v.kind == VERDICT_INCONCLUSIVE) {
		/* beyond a few hundred the estimate only says "too noisy": the
		 * spread, not the sample size, is the problem */
		if (row->v.reps_needed > 1000)
			return xstrdup("inconclusive: too noisy (need > 1000 repetitions)");
		if (row->v.reps_needed)
			return xstrfmt("inconclusive: need ~%zu repetitions", row->v.reps_needed);
		return xstrdup("inconclusive");
	}
	return xstrdup(verdict_kind_name(row->v.kind));
}

void compare_p_text(char *buf, size_t n, const struct cmp_row *row)
{
	double p = row->v.p;
	if (row->v.exact && row->v.deterministic && row->v.kind != VERDICT_NO_CHANGE)
		snprintf(buf, n, "exact");
	else if (!isfinite(p))
		snprintf(buf, n, "-");
	else if (p < 0.001)
		snprintf(buf, n, "%.0e", p);
	else
		snprintf(buf, n, "%.2g", p);
}

/* ---- the pipeline ----------------------------------------------------- */

static void run_ids_of(const struct sample_set *s, size_t series, int64_t **ids, size_t *n)
{
	*ids = NULL;
	*n = 0;
	for (size_t g = 0; g < s->ngroups; g++) {
		if (s->groups[g].series != series)
			continue;
		*ids = xrealloc(*ids, (*n + s->groups[g].n) * sizeof(int64_t));
		for (size_t k = 0; k < s->groups[g].n; k++) {
			size_t j = 0;
			while (j < *n && (*ids)[j] != s->groups[g].run_id[k])
				j++;
			if (j == *n)
				(*ids)[(*n)++] = s->groups[g].run_id[k];
		}
	}
}

int compare_job_run(struct db *db, const char *sel_a, const char *sel_b,
		    const struct cmp_options *o, int hists, struct compare_job *job,
		    struct strbuf *err)
{
	memset(job, 0, sizeof(*job));
	struct selector sa, sb;
	if (select_from_text(db, sel_a, &sa, err))
		return -1;
	if (select_from_text(db, sel_b, &sb, err)) {
		select_free(&sa);
		return -1;
	}
	int rc = select_load(db, &sa, NULL, &job->a, err);
	if (!rc)
		rc = select_load(db, &sb, NULL, &job->b, err);
	select_free(&sa);
	select_free(&sb);
	if (!rc)
		rc = compare_sets(&job->a, &job->b, o, &job->r, err);
	for (size_t p = 0; !rc && hists && p < job->r.npairs; p++) {
		int64_t *ia, *ib;
		size_t na, nb, nha = 0, nhb = 0;
		struct sel_hist *ha = NULL, *hb = NULL;
		run_ids_of(&job->a, job->r.pairs[p].a, &ia, &na);
		run_ids_of(&job->b, job->r.pairs[p].b, &ib, &nb);
		rc = select_load_hists(db, ia, na, &ha, &nha, err);
		if (!rc)
			rc = select_load_hists(db, ib, nb, &hb, &nhb, err);
		if (!rc && o && o->metric) {
			/* --metric may name a histogram (NAME or WORKLOAD.NAME) */
			const char *m = o->metric, *dot = strchr(m, '.');
			const char *wl = job->r.pairs[p].workload;
			if (dot && (strlen(wl) != (size_t)(dot - m) || strncmp(wl, m, (size_t)(dot - m))))
				nha = 0;
			const char *name = dot ? dot + 1 : m;
			size_t keep = 0;
			for (size_t i = 0; i < nha; i++)
				if (!strcmp(ha[i].name, name))
					keep = i + 1;
			if (keep)
				compare_add_hists(&job->r, p, ha + keep - 1, 1, hb, nhb);
		} else if (!rc) {
			compare_add_hists(&job->r, p, ha, nha, hb, nhb);
		}
		sel_hists_free(ha, nha);
		sel_hists_free(hb, nhb);
		free(ia);
		free(ib);
	}
	if (rc) {
		compare_job_free(job);
		return -1;
	}
	compare_sort(&job->r);
	return 0;
}

void compare_job_free(struct compare_job *job)
{
	cmp_result_free(&job->r);
	sample_set_free(&job->a);
	sample_set_free(&job->b);
}
