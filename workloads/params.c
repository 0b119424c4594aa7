/*
 * Workload parameters as data: validation of a plan's workload object
 * against a driver's param_spec table, defaults, typed getters, and the
 * human-readable description used by --help and the docs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/workload.h"

static const struct param_spec *spec_find(const struct param_spec *specs, const char *name)
{
	for (; specs && specs->name; specs++)
		if (!strcmp(specs->name, name))
			return specs;
	return NULL;
}

static void valid_keys(const struct param_spec *specs, struct strbuf *err)
{
	strbuf_addstr(err, "type");
	for (; specs && specs->name; specs++)
		strbuf_addf(err, ", %s", specs->name);
}

static void range_text(const struct param_spec *s, struct strbuf *err)
{
	const char *what = s->type == PT_INT ? "integer" : "number";
	if (s->min == 1 && s->type == PT_INT)
		strbuf_addf(err, "must be a positive integer");
	else if (s->min == 0)
		strbuf_addf(err, "must be a non-negative %s", what);
	else {
		strbuf_addf(err, "must be %s %s in [%.15g, %.15g]", s->type == PT_INT ? "an" : "a", what,
			    s->min, s->max);
		return;
	}
	/* the bound is always named, in full ("%g" would print 1e+09) */
	strbuf_addf(err, " no larger than %.15g", s->max);
}

static int check_value(const struct param_spec *s, json_t *v, const char *path,
		       json_t **out, struct strbuf *err)
{
	switch (s->type) {
	case PT_INT:
		if (!json_is_integer(v) || (double)json_integer_value(v) < s->min ||
		    (double)json_integer_value(v) > s->max) {
			strbuf_addf(err, "%s.%s: ", path, s->name);
			range_text(s, err);
			return -1;
		}
		break;
	case PT_NUM:
		if (!json_is_number(v) || json_number_value(v) < s->min ||
		    json_number_value(v) > s->max) {
			strbuf_addf(err, "%s.%s: ", path, s->name);
			range_text(s, err);
			return -1;
		}
		break;
	case PT_BOOL:
		if (!json_is_boolean(v)) {
			strbuf_addf(err, "%s.%s: must be true or false", path, s->name);
			return -1;
		}
		break;
	case PT_STR:
		if (!json_is_string(v) || !json_string_length(v) ||
		    strchr(json_string_value(v), '\n')) {
			strbuf_addf(err, "%s.%s: must be a non-empty string on one line", path,
				    s->name);
			return -1;
		}
		break;
	case PT_ENUM: {
		const char *str = json_string_value(v);
		int ok = 0;
		for (const char *const *c = s->choices; str && c && *c; c++)
			if (!strcmp(*c, str))
				ok = 1;
		if (!ok) {
			strbuf_addf(err, "%s.%s: must be one of ", path, s->name);
			for (const char *const *c = s->choices; c && *c; c++)
				strbuf_addf(err, "%s\"%s\"", c == s->choices ? "" : ", ", *c);
			return -1;
		}
		break;
	}
	case PT_LOAD: {
		char *sub = xstrfmt("%s.%s", path, s->name);
		const char *type = json_string_value(json_object_get(v, "type"));
		const struct workload_ops *w = type ? workload_find(type) : NULL;
		if (!json_is_object(v)) {
			strbuf_addf(err, "%s: must be an object like {\"type\": \"stress-ng\"}", sub);
		} else if (!type) {
			strbuf_addf(err, "%s.type: missing (valid load types:", sub);
			for (const struct workload_ops *const *a = workload_all(); *a; a++)
				if ((*a)->can_be_load)
					strbuf_addf(err, " %s", (*a)->name);
			strbuf_addch(err, ')');
		} else if (!w || !w->can_be_load) {
			strbuf_addf(err, "%s.type: \"%s\" cannot be used as load (valid:", sub, type);
			for (const struct workload_ops *const *a = workload_all(); *a; a++)
				if ((*a)->can_be_load)
					strbuf_addf(err, " %s", (*a)->name);
			strbuf_addch(err, ')');
		} else {
			json_t *r = params_resolve(w->params, v, sub, err);
			if (r && w->check && w->check(r, sub, err)) {
				json_decref(r);
				r = NULL;
			}
			free(sub);
			if (!r)
				return -1;
			*out = r;
			return 0;
		}
		free(sub);
		return -1;
	}
	case PT_JSON:
		break;
	}
	*out = json_incref(v);
	return 0;
}

json_t *params_resolve(const struct param_spec *specs, const json_t *obj, const char *path,
		       struct strbuf *err)
{
	if (!json_is_object(obj)) {
		strbuf_addf(err, "%s: must be an object", path);
		return NULL;
	}
	json_t *res = json_object();
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)obj, key, v) {
		if (!strcmp(key, "type")) {
			json_object_set(res, "type", v);
			continue;
		}
		const struct param_spec *s = spec_find(specs, key);
		if (!s) {
			strbuf_addf(err, "%s.%s: unknown key (valid: ", path, key);
			valid_keys(specs, err);
			strbuf_addch(err, ')');
			json_decref(res);
			return NULL;
		}
		json_t *val = NULL;
		if (check_value(s, v, path, &val, err)) {
			json_decref(res);
			return NULL;
		}
		json_object_set_new(res, key, val);
	}
	for (const struct param_spec *s = specs; s && s->name; s++) {
		if (json_object_get(res, s->name) || !s->def)
			continue;
		json_t *d = json_loads(s->def, JSON_DECODE_ANY, NULL);
		if (!d) {
			strbuf_addf(err, "internal error: bad default for %s", s->name);
			json_decref(res);
			return NULL;
		}
		json_object_set_new(res, s->name, d);
	}
	return res;
}

double wl_estimate_duration(const json_t *p)
{
	return (double)param_int(p, "duration_s") + 0.5;
}

long long param_int(const json_t *p, const char *name)
{
	json_t *v = json_object_get(p, name);
	return json_is_integer(v) ? json_integer_value(v) : (long long)json_number_value(v);
}

double param_num(const json_t *p, const char *name)
{
	return json_number_value(json_object_get(p, name));
}

int param_bool(const json_t *p, const char *name)
{
	return json_is_true(json_object_get(p, name));
}

const char *param_str(const json_t *p, const char *name)
{
	return json_string_value(json_object_get(p, name));
}

void params_describe(const struct param_spec *specs, struct strbuf *out)
{
	static const char *const tn[] = { "int", "number", "bool", "string", "enum", "load",
				       "json" };
	for (const struct param_spec *s = specs; s && s->name; s++) {
		strbuf_addf(out, "  %-14s %-6s ", s->name, tn[s->type]);
		if (s->type == PT_INT || s->type == PT_NUM)
			strbuf_addf(out, "[%.15g..%.15g] ", s->min, s->max);
		if (s->type == PT_ENUM) {
			strbuf_addch(out, '{');
			for (const char *const *c = s->choices; c && *c; c++)
				strbuf_addf(out, "%s%s", c == s->choices ? "" : "|", *c);
			strbuf_addstr(out, "} ");
		}
		strbuf_addf(out, "%s", s->help ? s->help : "");
		if (s->def)
			strbuf_addf(out, " (default %s)", s->def);
		strbuf_addch(out, '\n');
	}
}
