/*
 * What the workloads add to the options as data of harness/util/opts.c: a
 * workload's "load" (another workload object, resolved with its own table)
 * and the estimate of a tool that runs for its duration_s.
 */
#include <stdlib.h>
#include <string.h>

#include "workloads/workload.h"

static void load_types(struct strbuf *err)
{
	for (const struct workload_ops *const *a = workload_all(); *a; a++)
		if ((*a)->can_be_load)
			strbuf_addf(err, " %s", (*a)->name);
	strbuf_addch(err, ')');
}

json_t *wl_load_value(json_t *v, const char *path, struct strbuf *err)
{
	const char *type = json_string_value(json_object_get(v, "type"));
	const struct workload_ops *w = type ? workload_find(type) : NULL;
	if (!json_is_object(v)) {
		strbuf_addf(err, "%s: must be an object like {\"type\": \"stress-ng\"}", path);
	} else if (!type) {
		strbuf_addf(err, "%s.type: missing (valid load types:", path);
		load_types(err);
	} else if (!w || !w->can_be_load) {
		strbuf_addf(err, "%s.type: \"%s\" cannot be used as load (valid:", path, type);
		load_types(err);
	} else {
		json_t *r = params_resolve(w->params, v, path, err);
		if (r && w->check && w->check(r, path, err)) {
			json_decref(r);
			r = NULL;
		}
		return r;
	}
	return NULL;
}

double wl_estimate_duration(const json_t *p)
{
	return (double)param_int(p, "duration_s") + 0.5;
}
