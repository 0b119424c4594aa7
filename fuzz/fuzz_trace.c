/*
 * libFuzzer target: scheduler traces, untrusted text from the target
 * (analysis/trace.c, the file schedlab-trace.txt of a traced run). The
 * input is parsed over its whole length and over a short window, and the
 * summary made into JSON.
 */
#include <stdint.h>
#include <stdlib.h>

#include "analysis/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	struct trace_summary s;
	for (int w = 0; w < 2; w++) {
		if (trace_parse((const char *)data, size, w ? 0.001 : 0, &s, err, sizeof(err)))
			continue;
		json_t *j = trace_summary_json(&s, 5);
		json_decref(j);
		trace_summary_release(&s);
	}
	return 0;
}
