/*
 * libFuzzer target: the parsers of tool output (cyclictest JSON and text,
 * hackbench, perf bench sched messaging and pipe, stress-ng YAML and text,
 * rtla timerlat and osnoise text) and every registered workload's parse
 * hook fed the input as stdout and as each result file. The first byte
 * picks the parser (modulo 16): 0-7 one of the parsers (case 7 also runs
 * pgbench's report, result and explain parsers and its transaction-log
 * reader), 8 sockperf's summary and full-log readers, 15 stress-ng's parse
 * hook (tests/data/fuzz/parsers/stressng-no-stressor starts with 15, so that
 * it stays put when a workload is added), 9-14 a registered workload's
 * parse hook, workload_all()[byte % the number of workloads].
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/native/pgbench_log.h"
#include "workloads/parsers.h"
#include "workloads/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	char *text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = 0;
	struct metric_set ms;
	struct strbuf err = STRBUF_INIT;
	double a, b;
	struct perfbench_result pr;
	metric_set_init(&ms);
	switch (data[0] % 16) {
	case 0: cyclictest_parse_result(text, text, 200, &ms, &err); break;
	case 1: hackbench_parse_text(text, &a); break;
	case 2: stressng_parse_yaml(text, &a, &b); break;
	case 3: stressng_parse_text(text, "cpu", &a, &b); break;
	case 4: timerlat_parse_hist(text, 200, &ms, &err); break;
	case 5: osnoise_parse_top(text, &ms, &err); break;
	case 6: perfbench_parse("pipe", text, &pr, &err); break;
	case 7:
		perfbench_parse("messaging", text, &pr, &err);
		perfbench_explain(text, text, &err);
		{
			struct pgbench_report rep;
			struct hist h;
			struct pglog_stats st = { 0 };
			uint64_t lineno = 0;
			pgbench_parse_report(text, &rep, &err);
			pgbench_parse_result(text, &ms, &err);
			pgbench_explain(text, &err);
			if (!pglog_hist_init(&h)) {
				size_t used = pglog_feed(text, size - 1, 0, &h, &st, &lineno);
				pglog_feed(text + used, size - 1 - used, 1, &h, &st, &lineno);
				hist_free(&h);
			}
		}
		break;
	case 8: {
		struct sockperf_result sr;
		struct hist h;
		sockperf_parse_summary(text, &sr, &err);
		if (!sockperf_parse_full_log(text, &h, &err))
			hist_free(&h);
		break;
	}
	default: {
		const struct workload_ops *const *all = workload_all();
		size_t n = 0;
		while (all[n])
			n++;
		/* 15: stress-ng's hook always, so that a saved input of it does
		   not move when a workload is added; else by the byte */
		const struct workload_ops *w = data[0] % 16 == 15 ? workload_find("stress-ng")
								   : all[data[0] % n];
		if (!w || !w->parse)
			break;
		json_t *params = json_object();
		json_t *files = json_object();
		/* the input as every file a driver could look for */
		static const char *const fnames[] = { "cyclictest.json", "stress-ng.yaml",
						      "sl-pingpong.json", "sl-jbb.json",
						      "schedlab-extra.json", "sl-pgbench.json",
						      "sockperf-full.csv" };
		for (size_t i = 0; i < sizeof(fnames) / sizeof(fnames[0]); i++)
			json_object_set_new(files, fnames[i], json_string(text));
		struct wl_output wo = { .out = text, .err = "", .files = files };
		w->parse(params, &wo, &ms, &err);
		json_decref(files);
		json_decref(params);
	}
	}
	metric_set_release(&ms);
	strbuf_release(&err);
	free(text);
	return 0;
}
