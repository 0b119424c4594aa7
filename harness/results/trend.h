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

#endif
