/*
 * libFuzzer target: plan loading, validation and expansion from text
 * (plan_load_string), the path every plan file takes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness/orchestrate/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	struct plan p;
	struct strbuf err = STRBUF_INIT;
	memset(&p, 0, sizeof(p));
	if (plan_load_string(text, "fuzz.json", &p, &err) == 0)
		plan_release(&p);
	else
		plan_release(&p);
	strbuf_release(&err);
	free(text);
	return 0;
}
