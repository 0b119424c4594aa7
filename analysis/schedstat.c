/*
 * /proc/schedstat parser and deltas; field meanings in schedstat.h.
 */
#include "analysis/schedstat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int schedstat_parse(const char *text, struct schedstat *out)
{
	memset(out, 0, sizeof(*out));
	if (!text || sscanf(text, "version %d", &out->version) != 1)
		return -1;
	if (out->version < 15 || out->version > 17)
		return -1;
	const char *p = text;
	while ((p = strstr(p, "\ncpu"))) {
		p += 4;
		unsigned long long v[9];
		int cpu;
		if (sscanf(p, "%d %llu %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) != 10)
			return -1;
		out->ncpus++;
		out->total.yld_count += v[0];
		out->total.sched_count += v[2];
		out->total.sched_goidle += v[3];
		out->total.ttwu_count += v[4];
		out->total.ttwu_local += v[5];
		out->total.rq_cpu_time += v[6];
		out->total.run_delay += v[7];
		out->total.pcount += v[8];
	}
	return out->ncpus ? 0 : -1;
}

int schedstat_delta(const struct schedstat *b, const struct schedstat *a,
		    struct schedstat_delta *d)
{
	if (a->version != b->version || a->total.ttwu_count < b->total.ttwu_count ||
	    a->total.ttwu_local < b->total.ttwu_local || a->total.run_delay < b->total.run_delay ||
	    a->total.sched_count < b->total.sched_count)
		return -1;
	double ttwu = (double)(a->total.ttwu_count - b->total.ttwu_count);
	d->ttwu_count = ttwu;
	d->ttwu_local_pct = ttwu > 0 ? 100.0 * (double)(a->total.ttwu_local - b->total.ttwu_local) / ttwu
				     : NAN;
	d->run_delay_ms = (double)(a->total.run_delay - b->total.run_delay) / 1e6;
	d->sched_count = (double)(a->total.sched_count - b->total.sched_count);
	return 0;
}
