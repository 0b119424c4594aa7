/*
 * libFuzzer target: stored histograms read back (hist_from_json) and used
 * the way reports use them (percentiles, a merge with themselves).
 */
#include <stdint.h>

#include "analysis/hist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *j = json_loadb((const char *)data, size, 0, NULL);
	if (!j)
		return 0;
	struct hist h, c;
	if (hist_from_json(&h, j) == 0) {
		double v;
		(void)hist_percentile(&h, 50, &v);
		(void)hist_percentile(&h, 99.9, &v);
		(void)hist_percentile(&h, 100, &v);
		if (hist_from_json(&c, j) == 0) {
			hist_merge(&h, &c);
			hist_free(&c);
		}
		json_t *back = hist_to_json(&h);
		json_decref(back);
		hist_free(&h);
	}
	json_decref(j);
	return 0;
}
