/*
 * schedlab plan: validate a plan and print its expansion: the boot
 * configurations, the execution order (boots and runs, interleaved and
 * shuffled with the seed) and an estimated duration. With --check it also
 * asks the target whether every boot configuration can be honoured.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/cli/cmd.h"
#include "harness/cli/options.h"
#include "harness/orchestrate/plan.h"
#include "harness/orchestrate/session.h"
#include "harness/orchestrate/session_batch.h"
#include "harness/targets/target.h"

static const char usage_text[] =
	"usage: schedlab plan PLAN.json [--target SPEC] [--check] [--format table|json] [--lava-job]\n"
	"\n"
	"Validates PLAN.json and prints the boot configurations, the runs in execution\n"
	"order and an estimated duration. Nothing is run.\n"
	"  --target SPEC   override the plan's target (local, qemu:KERNEL, ssh://host)\n"
	"  --check         also ask the target whether it can honour every boot\n"
	"                  configuration (connects to it; `run` always does this)\n"
	"  --format F      table (default) or json\n"
	"  --lava-job      print the LAVA job of the first boot (lava target), for review;\n"
	"                  its initramfs is built\n"
	"Exit status: 0 valid, 2 invalid (the message names file:line:column or the\n"
	"JSON path of the problem).\n";

/* the pairs left out as impossible ("matrix.impossible": "drop"), and the
 * kernels whose offer is decided only once they are built */
static void print_offer_notes(const struct plan *p, FILE *f)
{
	for (size_t i = 0; i < p->offer_notes.nr; i++)
		fprintf(f, "  %s\n", p->offer_notes.v[i]);
	int said = -1;
	for (size_t i = 0; i < p->nboots; i++) {
		const json_t *k = plan_kernel_spec(p, p->boots[i].kernel_index);
		if (!p->boots[i].preempt || !json_is_object(k) || json_object_get(k, "image") ||
		    p->boots[i].kernel_index <= said)
			continue;
		said = p->boots[i].kernel_index;
		fprintf(f, "  note: %s is not built yet: the preemption modes asked of it are "
			"checked against its config once it is (schedlab run)\n", p->boots[i].kernel);
	}
}

static void print_table(const struct plan *p)
{
	printf("plan: %s (%s)\n", p->name, p->path);
	printf("target: %s   switch: %s   order: %s   repetitions: %d   seed: %llu\n",
	       json_string_value(json_object_get(p->target, "type")), p->switch_method, p->order,
	       p->repetitions, (unsigned long long)p->seed);
	if (target_clock_virtual(p->target))
		printf("clock: virtual (icount shift %lld: the guest's time counts its "
		       "instructions; docs/virtual-time.md)\n",
		       (long long)json_integer_value(json_object_get(p->target, "icount_shift")));
	if (p->until_decided) {
		printf("repetitions until decided: min %d, max %d, alpha %g (%s spending, %s "
		       "boundaries), threshold %g%%; looks at ",
		       p->seq.min, p->seq.max, p->seq.alpha, seq_spending_name(p->seq.spending),
		       seq_boundary_name(p->seq.boundary), p->seq.threshold_pct);
		if (p->seq_metrics.nr)
			for (size_t i = 0; i < p->seq_metrics.nr; i++)
				printf("%s%s", i ? ", " : "", p->seq_metrics.v[i]);
		else
			printf("each workload's primary metric");
		printf(" (docs/statistics.md)\n");
		if (p->seq_max_wall_s > 0)
			printf("wall-time cap: no round starts after %g s (%.1f min); the rest are "
			       "stored as not run\n", p->seq_max_wall_s, p->seq_max_wall_s / 60);
	}
	if (p->ntargets > 1) {
		printf("lab of %zu targets, run in parallel, one session each:\n", p->ntargets);
		for (size_t i = 0; i < p->ntargets; i++) {
			char *t = json_dumps(json_array_get(p->targets, i), JSON_COMPACT | JSON_SORT_KEYS);
			printf("  T%zu  %s\n", i + 1, t);
			free(t);
		}
	}
	printf("\nboot configurations (%zu):\n", p->nboots);
	for (size_t i = 0; i < p->nboots; i++)
		printf("  B%zu  kernel=%s preempt=%s cmdline=%s\n", i + 1,
		       p->boots[i].kernel ? p->boots[i].kernel : "(default)",
		       p->boots[i].preempt ? p->boots[i].preempt : "(as booted)",
		       *p->boots[i].cmdline ? p->boots[i].cmdline : "(none)");
	print_offer_notes(p, stdout);
	printf("\nknob sets (%zu):\n", json_array_size(p->knobs));
	for (size_t i = 0; i < json_array_size(p->knobs); i++) {
		char *l = knob_label(json_array_get(p->knobs, i));
		printf("  K%zu  %s\n", i + 1, l);
		free(l);
	}
	printf("\nworkloads (%zu):\n", p->nwl);
	for (size_t i = 0; i < p->nwl; i++) {
		char *s = json_dumps(p->wl[i].params, JSON_COMPACT | JSON_SORT_KEYS);
		printf("  W%zu  %s\n", i + 1, s);
		free(s);
	}
	printf("\nexecution order (%zu boots, %zu runs):\n", p->nvisits, plan_run_count(p));
	size_t seq = 0;
	for (size_t v = 0; v < p->nvisits; v++) {
		printf("  boot %zu: B%d (round %d)\n", v + 1, p->visits[v].cfg + 1,
		       p->visits[v].round + 1);
		for (size_t r = 0; r < p->visits[v].nruns; r++) {
			const struct plan_run *pr = &p->visits[v].runs[r];
			if (pr->traced)
				printf("    %4zu  W%d %-10s K%d traced (evidence, when %s)\n", ++seq,
				       pr->wl + 1, p->wl[pr->wl].ops->name, pr->knob + 1,
				       evidence_when_name(p->wl[pr->wl].when));
			else
				printf("    %4zu  W%d %-10s K%d rep %d\n", ++seq, pr->wl + 1,
				       p->wl[pr->wl].ops->name, pr->knob + 1, pr->rep + 1);
		}
	}
	double est = plan_estimate_s(p);
	printf("\nestimated duration: %.0f s (%.1f min)\n", est, est / 60);
}

static void print_json(const struct plan *p)
{
	json_t *boots = json_array(), *order = json_array();
	for (size_t i = 0; i < p->nboots; i++)
		json_array_append_new(boots, json_pack("{s:s?,s:s?,s:s}", "kernel", p->boots[i].kernel,
						       "preempt", p->boots[i].preempt, "cmdline",
						       p->boots[i].cmdline));
	for (size_t v = 0; v < p->nvisits; v++) {
		json_t *runs = json_array();
		for (size_t r = 0; r < p->visits[v].nruns; r++) {
			const struct plan_run *pr = &p->visits[v].runs[r];
			json_t *run = json_pack("{s:i,s:s,s:i,s:i}", "workload", pr->wl, "type",
						p->wl[pr->wl].ops->name, "knobs", pr->knob, "rep",
						pr->rep);
			if (pr->traced)
				json_object_set_new(run, "evidence",
						    json_string(evidence_when_name(p->wl[pr->wl].when)));
			json_array_append_new(runs, run);
		}
		json_array_append_new(order, json_pack("{s:i,s:i,s:o}", "boot", p->visits[v].cfg,
						       "round", p->visits[v].round, "runs", runs));
	}
	json_t *wl = json_array();
	for (size_t i = 0; i < p->nwl; i++)
		json_array_append(wl, p->wl[i].params);
	json_t *doc = json_pack("{s:i,s:s,s:O,s:s,s:s,s:i,s:I,s:o,s:O,s:o,s:o,s:f,s:I}",
				"schedlab_format", 1, "name", p->name, "target", p->target,
				"switch", p->switch_method, "order", p->order, "repetitions",
				p->repetitions, "seed", (json_int_t)p->seed, "boots", boots,
				"knobs", p->knobs, "workloads", wl, "execution", order,
				"estimated_s", plan_estimate_s(p), "runs",
				(json_int_t)plan_run_count(p));
	if (p->dropped)
		json_object_set(doc, "dropped_impossible", p->dropped);
	if (p->until_decided) {
		json_t *ms = json_array();
		for (size_t i = 0; i < p->seq_metrics.nr; i++)
			json_array_append_new(ms, json_string(p->seq_metrics.v[i]));
		json_object_set_new(doc, "until_decided",
				    json_pack("{s:i,s:i,s:f,s:f,s:s,s:s,s:o}", "min", p->seq.min, "max",
					      p->seq.max, "alpha", p->seq.alpha, "threshold_pct",
					      p->seq.threshold_pct, "spending",
					      seq_spending_name(p->seq.spending), "boundaries",
					      seq_boundary_name(p->seq.boundary), "metrics", ms));
	}
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(doc);
}

int cmd_plan(int argc, char **argv, struct cmd_ctx *ctx)
{
	const char *target = NULL;
	int check = 0, lava_job = 0;
	enum out_format fmt = FMT_TABLE;
	const struct cli_opt opts[] = {
		CLI_STR("target", &target), CLI_BOOL("check", &check), CLI_FORMAT(&fmt, 0),
		CLI_BOOL("lava-job", &lava_job), CLI_END,
	};
	int first, prc = cli_parse("plan", usage_text, opts, argc, argv, &first);
	if (prc != CLI_OK)
		return cli_parse_exit(prc);
	if (first != argc - 1) {
		cmd_error("plan", "expected one plan file");
		fputs(usage_text, stderr);
		return 2;
	}
	struct plan p;
	struct strbuf err = STRBUF_INIT;
	if (plan_load(argv[first], &p, &err)) {
		fprintf(stderr, "%s\n", err.buf);
		plan_release(&p);
		strbuf_release(&err);
		return 2;
	}
	if (target) {
		json_t *t = target_spec_parse(target, &err);
		if (!t || plan_set_target(&p, t, &err)) {
			cmd_error("plan", "--target %s", err.buf);
			json_decref(t);
			plan_release(&p);
			strbuf_release(&err);
			return 2;
		}
		json_decref(t);
	}
	int rc = 0;
	if (check) {
		struct session_opts so = { .quiet = 1 };
		if (session_preflight(&p, &so, &err)) {
			fprintf(stderr, "%s\n", err.buf);
			rc = 2;
		}
	}
	if (lava_job && !rc) {
		struct session_opts so = { .quiet = 1 };
		json_t *job = NULL;
		if (session_batch_job(&p, &so, &job, &err)) {
			cmd_error("plan", "--lava-job: %s", err.buf);
			rc = 2;
		} else {
			/* JSON is YAML: what LAVA gets, indented for reading */
			json_dumpf(job, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			putchar('\n');
		}
		json_decref(job);
	} else if (fmt == FMT_JSON)
		print_json(&p);
	else
		print_table(&p);
	plan_release(&p);
	strbuf_release(&err);
	return cmd_finish(rc);
}
