/*
 * The report behind `schedlab report` (docs/reports.md): compute first, then
 * render. report_build() reads the database (read-only) into a struct
 * report: the sessions in scope, the A/B comparisons (harness/results/compare.h,
 * the same rows as `schedlab compare`), merged latency histograms per
 * configuration (harness/results/select.h, hist_merge), per-metric trends over
 * sessions with change points (harness/results/trend.h) and the sysinfo of every
 * boot involved (report.c). Renderers turn it into one self-contained HTML
 * page with inline SVG charts, no network, works from file:// (report_html.c),
 * or into the one-screen text summary the nightly script prints
 * (report_summary.c).
 *
 * Every text that comes from the database (plans, tags, kernels, command
 * lines, tool output, sysinfo) goes through html_esc() (harness/util/html.h),
 * the one HTML escaping function, the same as serve's site; nothing from the
 * database is placed inside <script>.
 */
#ifndef SL_REPORT_H
#define SL_REPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "db/db.h"
#include "harness/results/compare.h"
#include "harness/results/select.h"
#include "harness/util/html.h"
#include "harness/util/strbuf.h"
#include "harness/results/trend.h"

enum report_mode {
	REPORT_SESSION = 0,   /* one session: its configurations against each other */
	REPORT_COMPARE = 1,   /* selector A against selector B */
	REPORT_SINCE = 2,     /* everything since a date: trends */
};

struct report_options {
	enum report_mode mode;
	const char *session;  /* REPORT_SESSION: id or "last" */
	const char *a, *b;    /* REPORT_COMPARE: selectors */
	const char *since;    /* REPORT_SINCE: YYYY-MM-DD[THH:MM:SS] */
	const char *title;    /* NULL: derived from the scope */
	const char *dbpath;   /* shown in the page */
	struct cmp_options cmp;
	struct cp_options cp;
	size_t max_curves;    /* per latency chart (0: 8) */
	size_t max_boots;     /* sysinfo entries (0: 50) */
	size_t history;       /* trends: sessions before and after the scope (default 60 each) */
	size_t max_points;    /* trends: sessions at most, thinned beyond (default 400; 0: 400) */
};
#define REPORT_HISTORY_DEFAULT 60
#define REPORT_MAX_POINTS_DEFAULT 400
void report_options_default(struct report_options *o);

/* one A/B: compare_job_run(a, b) */
struct report_cmp {
	char *a, *b;          /* the selectors */
	char *label_a, *label_b;  /* short configuration labels */
	struct compare_job job;
};

/* a traced run of a comparison's side (plan key "evidence"): its trace
 * summary, shown under the comparison it belongs to */
struct report_trace {
	char *label;          /* "A vs B: A: hackbench, run 3" */
	json_t *summary;      /* schedlab-trace.json, parsed */
};

/* one configuration's merged histogram */
struct report_curve {
	char *label;          /* configuration label ("A: preempt=full") */
	int side;             /* 0, or 'A' / 'B' in compare mode */
	struct sel_hist h;    /* owned */
};

/* one latency chart: (run workload, params, histogram name) */
struct report_dist {
	char *workload, *params_label, *name, *unit;
	struct report_curve *curves;
	size_t ncurves;
	size_t omitted;       /* configurations left out (max_curves) */
};

/* the history of one metric of one configuration (across kernels) */
struct report_trend {
	char *workload, *metric, *unit, *config;
	enum sel_better better;
	size_t key;           /* configuration index into report.configs */
	struct trend t;
	double *band_lo, *band_hi;   /* per point: its segment's noise band */
};

/* the sysinfo of a group of boots that share it (boot_id aside) */
struct report_boot {
	char *machine;
	json_t *sysinfo;      /* as stored (boot_id included: the first boot's) */
	char *boots;          /* "session 3: boots 7, 8, 9; session 4: ..." */
	char *method, *accel, *status;
	char *clock;          /* "virtual, shift N"; NULL for a real clock */
	char *qemu;           /* a qemu boot's emulator version; NULL otherwise */
	char *first_at;       /* booted_at of the first boot */
	size_t nboots;
};

/*
 * The sessions the trends draw from (docs/reports.md, "Trends"): given n
 * sessions in time order, scope[i] 1 for those in the report's scope, keep
 * every session in scope, the `history` latest others that started before
 * the last one in scope and the `history` earliest after it (none in a
 * nightly report, whose candidate is the newest session). When that makes
 * more than max_points sessions, only every k-th of them is kept, counted
 * from the newest (the newest is always kept), k the smallest that leaves
 * at most max_points.
 */
struct report_window {
	size_t history, max_points; /* the bounds applied */
	size_t candidates;    /* sessions offered (n) */
	size_t scope;         /* of them in scope */
	size_t available;     /* others before the last in scope */
	size_t before;        /* of those chosen (at most history) */
	size_t later;         /* others after the last in scope */
	size_t after;         /* of those chosen (at most history) */
	size_t every;         /* 1, or k: only every k-th chosen session kept */
	size_t shown;         /* sessions kept: at most max_points */
};
void report_window_pick(const unsigned char *scope, size_t n, size_t history, size_t max_points,
			unsigned char *keep, struct report_window *w);

struct report_session {
	int64_t id;
	char *name, *tag, *target, *version, *status, *started_at, *finished_at, *plan_path;
};

/* an alert of the regression robot (docs/alerts.md) on a plan in scope */
struct report_alert {
	int64_t id, group_id, bad_session, fixed_session;
	char *status, *kind, *metric, *series, *culprit, *range;
	double change_pct, ci_lo, ci_hi, p;
};

struct report {
	enum report_mode mode;
	char *title, *scope, *generated_at, *dbpath;
	struct report_session *sessions;
	size_t nsessions;
	struct report_cmp *cmps;
	size_t ncmps;
	struct report_dist *dists;
	size_t ndists;
	struct report_trend *trends;
	size_t ntrends;
	struct strvec configs;    /* trend configuration labels */
	struct report_boot *boots;
	size_t nboots, boots_omitted;
	struct strvec notes;      /* shown near the top (and on stderr by the command) */
	struct report_window window;  /* the sessions the trends draw from */
	char *window_text;        /* that, said in a sentence (the Trends section) */
	struct report_trace *traces;  /* traced runs of the comparisons' sides */
	size_t ntraces;
	struct strvec kernel_labels; /* owns the trend points' git kernel labels */
	/* the robot's alerts on the plans in scope: open ones, and those
	   raised or fixed by a session in scope */
	struct report_alert *alerts;
	size_t nalerts;
	/* internal: the sets the curves and trends were computed from */
	struct sample_set scope_set, history;
	int history_loaded;
	unsigned *trend_key_series;  /* per configuration: representative series in history */
};

/* -1 with a message in err for bad input (selector, unknown session,
 * nothing selected); r is freed on failure */
int report_build(struct db *db, const struct report_options *o, struct report *r,
		 struct strbuf *err);
void report_free(struct report *r);

/* the page: a complete HTML document */
void report_render_html(const struct report *r, struct strbuf *out);
/* the one-screen text summary (regressions, their confidence and the change
 * point in the history where each starts); returns the number of regressions */
size_t report_render_summary(const struct report *r, FILE *out);

/* `report --bisect ID|last`: the page of a stored bisection
 * (report_bisect.c); -1 with a message */
int report_bisect_html(struct db *db, const char *spec, struct strbuf *out, struct strbuf *err);

/* ---- for the renderers (report_html.c, report_summary.c) ---- */

/* 1 when a relative change rel is worse for a metric where b is better, 0
 * when better, -1 when the metric has no better direction */
int report_worse_dir(enum sel_better b, double rel);
/* the trend of workload.metric whose configuration is the one of series s
 * (every dimension but the kernel), or NULL */
const struct report_trend *report_trend_for(const struct report *r,
					    const struct sel_series *s, const char *workload,
					    const char *metric);

#endif
