/*
 * Trend series: one value per session (the median of its repetitions of a
 * metric) in time order, with the change points of analysis/changepoint.h.
 * Shared by `schedlab trend` (one group of one series) and `schedlab report`
 * (which follows one configuration across kernels and so passes the groups
 * of several series at once). Reads the session tags from the database;
 * prints nothing.
 */
#ifndef SL_TREND_H
#define SL_TREND_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "analysis/changepoint.h"
#include "db/db.h"
#include "harness/results/select.h"
#include "harness/util/strbuf.h"

struct trend_point {
	int64_t session;
	char *tag;               /* NULL when the session has none */
	const char *started_at;  /* earliest run of the session (points into the groups) */
	size_t n;                /* repetitions */
	double value;            /* their median */
	double *vals;            /* the repetitions' values */
	unsigned char *cens;     /* per value: 1 when it is a lower bound */
	size_t ncensored;        /* how many are */
	int bound;               /* 1: the median is only a lower bound */
	size_t alloc;
	const char *kernel;      /* kernel release of the first group holding it */
	const char *model;       /* its effective preemption model (trend_build_models),
				    else NULL */
};

struct trend {
	struct trend_point *pt;  /* ordered by started_at, then session */
	size_t np;
	struct change_point *cps;
	size_t ncp;
	long *cpat;              /* per point: index into cps or -1 */
	int finite;              /* 0: non-finite values, no detection was run */
	size_t nbound;           /* points that are bounds */
	/* changes of the effective preemption model (trend_build_models): the
	 * first point of each new model; change points are sought on each side
	 * of a break, never across it */
	size_t *breaks;
	size_t nbreaks;
};

/*
 * Build the trend of groups[0..ngroups) (values of one metric; a session
 * found in several groups has its values pooled) and run change-point
 * detection with o when there are at least 3 finite points; points whose
 * median is only a bound (censored values, docs/statistics.md) split the
 * series and are never a side of a change point. kernels[i]
 * (may be NULL) labels the points of groups[i]. -1 with a message in err
 * when detection fails.
 */
int trend_build(struct db *db, const struct sel_group *const *groups, const char *const *kernels,
		size_t ngroups, const struct cp_options *o, struct trend *t, struct strbuf *err);
/* the same, models[i] (may be NULL) the effective preemption model of the
 * points of groups[i]: one configuration whose kernel's default mode moved
 * (voluntary -> lazy) is one trend with a break where the model changes */
int trend_build_models(struct db *db, const struct sel_group *const *groups,
		       const char *const *kernels, const char *const *models, size_t ngroups,
		       const struct cp_options *o, struct trend *t, struct strbuf *err);
void trend_free(struct trend *t);

/*
 * The whole of `schedlab trend` but its printing, shared with `schedlab
 * serve`'s trend page (harness/results/trend_job.c): load metric W.M of the
 * selection `where` (since: NULL or a date), check that it is one series
 * (or one configuration across changes of its preemption model: nightly
 * sessions only, trend_joinable), build the trend. 0 done; -1 bad input or
 * no results (message in err); 1 the selection holds several series (they
 * are in job->set for the caller to list; no trend built).
 */
struct trend_job {
	struct sample_set set;
	struct trend tr;
	int built;
	int joined;        /* several series: one configuration across model changes */
	size_t nkernels;   /* joined: distinct kernels (from git) */
	const char *better;  /* "lower", "higher", "none" */
};
int trend_job_run(struct db *db, const char *metric, const char *where, const char *since,
		  const struct cp_options *o, struct trend_job *job, struct strbuf *err);
void trend_job_free(struct trend_job *job);
/* several series of a nightly configuration that are one (they differ in the
 * effective preemption model alone, no session holds two, every session is
 * tagged nightly-*) */
int trend_joinable(struct db *db, const struct sample_set *s);
/* "voluntary -> lazy": the models of the points in the order of the breaks
 * (malloc'd) */
char *trend_models_text(const struct trend *tr);
/* a kernel from git: its commits are one kernel to a trend (as to the robot) */
int trend_series_from_git(const struct sel_series *se);
/* at break i the kernel changed too (not one from git): 1 */
int trend_kernel_changed(const struct trend *tr, size_t i);
/* "6.1.0-57-rt-amd64 -> 6.12.118+deb12-rt-amd64": the kernels of the points
 * in order of the breaks where they changed (malloc'd) */
char *trend_kernels_text(const struct trend *tr);
/* the document `schedlab trend --format json` prints (schedlab_format 1) */
json_t *trend_job_json(const struct trend_job *job, const char *metric,
		       const struct cp_options *o);

#endif
