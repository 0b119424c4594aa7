/*
 * libFuzzer target: wakeup-placement evidence, untrusted text from the
 * target (analysis/tasksched.c). The input is fed as one /proc/<pid>/sched
 * file and as a whole task-sched dump, then through the drivers' metric
 * builder (workloads/placement.c) as the run's task-sched.txt.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/tasksched.h"
#include "workloads/placement.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	struct task_sched t;
	struct task_sched_sum s;
	task_sched_parse((const char *)data, size, &t, err, sizeof(err));
	task_sched_dump_sum((const char *)data, size, &s, err, sizeof(err));
	json_t *files = json_object();
	json_object_set_new(files, PLACEMENT_FILE, json_stringn((const char *)data, size));
	if (json_object_get(files, PLACEMENT_FILE)) {
		struct wl_output wo = { .out = "", .err = "", .files = files };
		struct metric_set ms;
		metric_set_init(&ms);
		placement_parse(NULL, &wo, &ms);
		metric_set_release(&ms);
	}
	json_decref(files);
	return 0;
}
