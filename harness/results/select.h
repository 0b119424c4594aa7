/*
 * Selectors and series: the shared input side of `schedlab compare`, `trend`
 * and `check` (docs/analysis.md).
 *
 * A selector is "key=value" pairs joined by commas over the columns of the
 * `results` view (`preempt=full,workload=pingpong`, `session=12`). Keys are
 * checked against the view's actual columns; a value is compared for
 * equality with the column's text form (NULL reads as the empty string), it
 * may contain '=' after the first one, and a comma-separated piece that does
 * not start with `column=` continues the previous value (so JSON values such
 * as params={"groups":2,"loops":200} need no quoting beyond the shell's). A
 * key given twice matches either value. A parsed selector goes to the data
 * layer as a neutral struct db_where (select_where); db/results.c builds
 * the SQL, binding every value as a parameter, never pasting it into SQL text.
 *
 * Loading turns the matching rows into *series* (the comparability identity:
 * machine, kernel release + config hash, effective preempt mode, HZ,
 * SCHED_MC, command line, knobs, the clock, the qemu version, the run's
 * workload and its params) and
 * *groups* (one series x one metric's workload and name: the values of the
 * repetitions). Nothing here prints; errors go into a strbuf.
 */
#ifndef SL_SELECT_H
#define SL_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/hist.h"
#include "db/db.h"
#include "db/results.h"
#include "harness/util/strbuf.h"

/* the series identity, in display order */
enum sel_dim {
	DIM_MACHINE,     /* results.machine_id (fingerprint); shown as machine */
	DIM_KERNEL,      /* kernel_release + config_hash (+ kernel_commit) */
	DIM_PREEMPT,
	DIM_HZ,
	DIM_SCHED_MC,
	DIM_CMDLINE,
	DIM_KNOBS,
	DIM_CLOCK,       /* clock (+ clock_shift): "real" or "virtual, shift N" */
	DIM_QEMU,        /* qemu_version: a qemu guest's emulator, "" for other targets */
	DIM_SCHED,       /* scheduler: the run's matrix.scheduler, "" without one */
	DIM_WORKLOAD,    /* run_workload: the workload the run was for */
	DIM_PARAMS,
	SEL_NDIMS
};
/* short name ("machine", "kernel", ...) and the selector key that narrows it */
const char *sel_dim_name(enum sel_dim d);
const char *sel_dim_key(enum sel_dim d);

struct sel_term {
	char *key, *value;
};
struct selector {
	size_t n;
	struct sel_term *terms;
};

/* the columns of the results view (strvec of names) */
int select_columns(struct db *db, struct strvec *cols, struct strbuf *err);
/* parse "k=v,k=v" validating keys against cols; an empty text selects all */
int select_parse(const char *text, const struct strvec *cols, struct selector *sel,
		 struct strbuf *err);
void select_free(struct selector *sel);
/* select_columns() + select_parse() */
int select_from_text(struct db *db, const char *text, struct selector *sel,
		     struct strbuf *err);

/* ---- loaded samples --------------------------------------------------- */

struct sel_series {
	char *dim[SEL_NDIMS];   /* identity values, "" for NULL */
	char *machine;          /* machine name (display) */
	char *kernel_release, *config_hash;
	char *kernel_commit, *kernel_describe; /* a kernel from git, else "" */
	char *kernel_label;     /* git: "DESCRIBE (COMMIT)" when every row of the
				 * series has that one, else NULL */
	size_t nsessions;       /* distinct sessions with rows in this series */
};

enum sel_better { SEL_BETTER_NONE = 0, SEL_BETTER_LOWER = 1, SEL_BETTER_HIGHER = 2 };

/* one series x one (workload, metric): a value per run, in load order
 * (session, run started_at, run id) */
struct sel_group {
	size_t series;
	char *workload, *metric, *unit;
	enum sel_better better;
	size_t n, alloc;
	double *value;
	unsigned char *censored; /* 1: value[i] is a lower bound (results.censored) */
	size_t ncensored;        /* how many are */
	int64_t *run_id, *session;
	int64_t *seed;           /* run.seed of each value (-1: none); NULL: none
				  * known (a group made without select_load) */
	char **started_at;
};

struct sample_set {
	struct sel_series *series;
	size_t nseries;
	struct sel_group *groups;
	size_t ngroups;
	size_t nrows;
};

/* extra conditions beside the selector (NULL fields: none) */
struct sel_filter {
	const char *workload;   /* results.workload (the metric's workload) */
	const char *metric;
	const char *since;      /* results.started_at >= since (text comparison) */
	const int64_t *sessions;  /* results.session among sessions[0..nsessions); NULL: any */
	size_t nsessions;
};

/* sel and f as the data layer's selection (db/results.h); its texts point
 * into sel and f, which must outlive it */
void select_where(const struct selector *sel, const struct sel_filter *f, struct db_where *w);
void select_where_free(struct db_where *w);

/* load the rows of results matching sel (and f) into *out, grouped;
 * series and groups sorted (workload, series identity, metric) */
int select_load(struct db *db, const struct selector *sel, const struct sel_filter *f,
		struct sample_set *out, struct strbuf *err);
void sample_set_free(struct sample_set *s);

/* 1 when a and b have the same identity on every dimension of mask
 * (bit 1 << dim) */
/*
 * The dimensions of mask worth naming to a person: cmdline is left out when
 * preempt is in mask and the cmdlines of every series of the sets are the
 * same but for their preempt= words (booting with preempt=X is how the
 * mode was chosen: "preempt", not "preempt, cmdline").
 */
unsigned sel_label_mask(unsigned mask, const struct sample_set *const *sets, size_t nsets);
int sel_series_match(const struct sel_series *a, const struct sel_series *b,
		     unsigned mask);

/*
 * Short label of a params or knobs JSON object for display: its top-level
 * members as key=value joined by spaces, leaving out "type" and every key
 * whose value is the same in all of others[0..nothers) (so that only what
 * tells series apart is shown). A non-object is returned as is. malloc'd.
 */
char *sel_json_label(const char *json, const char *const *others, size_t nothers);

/* ---- histograms ------------------------------------------------------- */

/* a merged histogram of several runs */
struct sel_hist {
	char *name, *unit;
	size_t nruns;
	int incompatible;       /* 1: geometries differ, h holds the first only */
	struct hist h;
};
/* merge the histogram rows of the runs run_id[0..n) by name (losslessly,
 * hist_merge); *out sorted by name */
int select_load_hists(struct db *db, const int64_t *run_id, size_t n, struct sel_hist **out,
		      size_t *nout, struct strbuf *err);
void sel_hists_free(struct sel_hist *h, size_t n);

#endif
