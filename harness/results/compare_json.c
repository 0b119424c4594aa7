/*
 * The comparison as the JSON document `schedlab compare --format json`
 * prints (compare.h: compare_job_json), shared with `schedlab serve`'s
 * compare page so that both say the same of every row.
 */
#include "harness/results/compare.h"

#include <math.h>
#include <stdlib.h>

static const char *better_name(enum sel_better b)
{
	return b == SEL_BETTER_LOWER ? "lower" : b == SEL_BETTER_HIGHER ? "higher" : "none";
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *compare_job_json(const struct compare_job *job, const char *sa, const char *sb)
{
	json_t *rows = json_array(), *dims = json_array(), *warn = json_array();
	for (int d = 0; d < SEL_NDIMS; d++)
		if (job->r.diff_mask & (1u << d))
			json_array_append_new(dims, json_string(sel_dim_name(d)));
	for (size_t i = 0; i < job->r.warnings.nr; i++)
		json_array_append_new(warn, json_string(job->r.warnings.v[i]));
	for (size_t i = 0; i < job->r.nrows; i++) {
		const struct cmp_row *row = &job->r.rows[i];
		json_t *o = json_object();
		json_object_set_new(o, "workload", json_string(row->workload));
		json_object_set_new(o, "series", json_string(job->r.pairs[row->pair].label));
		json_object_set_new(o, "metric", json_string(row->metric));
		json_object_set_new(o, "unit", json_string(row->unit));
		json_object_set_new(o, "better", json_string(better_name(row->better)));
		if (row->kind == CMP_HIST) {
			json_object_set_new(o, "kind", json_string("histogram"));
			json_object_set_new(o, "percentile", json_real(row->pct));
			json_object_set_new(o, "runs_a", json_integer((json_int_t)row->a_runs));
			json_object_set_new(o, "runs_b", json_integer((json_int_t)row->b_runs));
			json_object_set_new(o, "samples_a",
					    json_integer((json_int_t)row->a_samples));
			json_object_set_new(o, "samples_b",
					    json_integer((json_int_t)row->b_samples));
			json_object_set_new(o, "a", jnum(row->ha));
			json_object_set_new(o, "b", jnum(row->hb));
			json_object_set_new(o, "a_lower_bound", json_boolean(row->ha_overflow));
			json_object_set_new(o, "b_lower_bound", json_boolean(row->hb_overflow));
			json_object_set_new(o, "change_pct", jnum(row->change_pct));
		} else {
			char *verdict = compare_verdict_text(row);
			json_object_set_new(o, "kind", json_string("metric"));
			json_object_set_new(o, "centre",
					    json_string(compare_centre_name(row->centre)));
			json_object_set_new(o, "n_a", json_integer((json_int_t)row->v.n_a));
			json_object_set_new(o, "n_b", json_integer((json_int_t)row->v.n_b));
			json_object_set_new(o, "a", jnum(row->v.centre_a));
			json_object_set_new(o, "b", jnum(row->v.centre_b));
			json_object_set_new(o, "change_pct", jnum(row->v.change_pct));
			json_object_set_new(o, "ci_lo_pct", jnum(row->v.ci_lo_pct));
			json_object_set_new(o, "ci_hi_pct", jnum(row->v.ci_hi_pct));
			json_object_set_new(o, "ci_level", jnum(row->v.level));
			json_object_set_new(o, "p", jnum(row->v.p));
			json_object_set_new(o, "p_exact", json_boolean(row->v.mwu_exact));
			/* exact data (docs/statistics.md): the values' shape, and the
			 * rank test's p when p is the exact data's */
			json_object_set_new(o, "exact_data",
					    row->v.exact ? json_string(row->v.exact == VERDICT_EXACT_NEAR
										? "near"
										: "identical")
							 : json_null());
			json_object_set_new(o, "p_mwu", jnum(row->v.p_mwu));
			/* paired by seed (docs/statistics.md): the pairs, and whether
			 * the verdict is the sign rule's (every seed agreeing) */
			json_object_set_new(o, "seed_pairs", json_integer((json_int_t)row->v.paired));
			json_object_set_new(o, "sign_rule", json_boolean(row->v.sign_rule));
			/* censored values: how many per side, the smallest bound, and
			 * whether change_pct is a bound ("at_least", "at_most") */
			json_object_set_new(o, "censored_a", json_integer((json_int_t)row->v.censored_a));
			json_object_set_new(o, "censored_b", json_integer((json_int_t)row->v.censored_b));
			json_object_set_new(o, "bound", jnum(row->v.bound));
			json_object_set_new(o, "change_bound",
					    row->v.change_bound
						    ? json_string(row->v.change_bound > 0 ? "at_least"
											 : "at_most")
						    : json_null());
			json_object_set_new(o, "verdict",
					    row->has_verdict
						    ? json_string(verdict_kind_name(row->v.kind))
						    : json_null());
			json_object_set_new(o, "verdict_text", json_string(verdict));
			json_object_set_new(o, "reason",
					    row->has_verdict && row->v.reason
						    ? json_string(row->v.reason)
						    : json_null());
			json_object_set_new(o, "reps_needed",
					    row->has_verdict &&
							    row->v.kind == VERDICT_INCONCLUSIVE &&
							    row->v.reps_needed
						    ? json_integer((json_int_t)row->v.reps_needed)
						    : json_null());
			if (row->has_noise)
				json_object_set_new(
					o, "noise_floor",
					json_pack("{s:o,s:o,s:o,s:o}", "cv_a", jnum(row->nf.cv_a),
						  "cv_b", jnum(row->nf.cv_b), "cv_all",
						  jnum(row->nf.cv_all), "half_width_pct",
						  jnum(row->nf.half_width_pct)));
			free(verdict);
		}
		json_array_append_new(rows, o);
	}
	json_t *doc = json_pack("{s:i,s:s,s:s,s:s,s:f,s:o,s:b,s:o,s:o}", "schedlab_format", 1,
				"command", "compare", "a", sa, "b", sb, "threshold_pct",
				job->r.threshold_pct, "compared", dims, "same_configuration",
				job->r.diff_mask == 0, "warnings", warn, "rows", rows);
	return doc;
}
