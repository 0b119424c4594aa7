/*
 * Options as data (opts.h): the check of a JSON object against a table of
 * param_spec, its defaults, typed getters, and the help text and docs'
 * tables written from the same table.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/util/opts.h"

const struct param_spec *params_find(const struct param_spec *specs, const char *name)
{
	for (; specs && specs->name; specs++)
		if (!strcmp(specs->name, name))
			return specs;
	return NULL;
}

static void valid_keys(const struct param_spec *specs, int typed, struct strbuf *err)
{
	int first = 1;
	if (typed) {
		strbuf_addstr(err, "type");
		first = 0;
	}
	for (; specs && specs->name; specs++) {
		if (specs->flags & PF_INTERNAL)
			continue;
		strbuf_addf(err, "%s%s", first ? "" : ", ", specs->name);
		first = 0;
	}
}

/* no upper bound worth naming: any JSON integer */
static int unbounded(const struct param_spec *s)
{
	return s->max >= (double)LLONG_MAX;
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
	if (!unbounded(s))
		strbuf_addf(err, " no larger than %.15g", s->max);
}

static void choices_text(const struct param_spec *s, struct strbuf *err)
{
	for (const char *const *c = s->choices; c && *c; c++)
		strbuf_addf(err, "%s\"%s\"", c == s->choices ? "" : ", ", *c);
}

/* v checked by its type; *out the value to store (new reference) */
static int check_value(const struct param_spec *s, json_t *v, const char *kpath,
		       json_t **out, struct strbuf *err)
{
	switch (s->type) {
	case PT_INT:
		if (!json_is_integer(v) || (double)json_integer_value(v) < s->min ||
		    (double)json_integer_value(v) > s->max) {
			strbuf_addf(err, "%s: ", kpath);
			range_text(s, err);
			return -1;
		}
		break;
	case PT_REAL:
		if (!json_is_number(v) || json_number_value(v) < s->min ||
		    json_number_value(v) > s->max) {
			strbuf_addf(err, "%s: ", kpath);
			range_text(s, err);
			return -1;
		}
		break;
	case PT_BOOL:
		if (!json_is_boolean(v)) {
			strbuf_addf(err, "%s: must be true or false", kpath);
			return -1;
		}
		break;
	case PT_STR:
		if (!json_is_string(v) || !json_string_length(v) ||
		    strchr(json_string_value(v), '\n')) {
			strbuf_addf(err, "%s: must be a non-empty string on one line", kpath);
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
			strbuf_addf(err, "%s: must be one of ", kpath);
			choices_text(s, err);
			return -1;
		}
		break;
	}
	case PT_OBJECT:
		if (!json_is_object(v) && !s->value) {
			strbuf_addf(err, "%s: must be an object", kpath);
			return -1;
		}
		break;
	case PT_JSON:
		break;
	}
	*out = s->value ? s->value(v, kpath, err) : json_incref(v);
	return *out ? 0 : -1;
}

static char *key_path(const char *path, const char *key)
{
	return *path ? xstrfmt("%s.%s", path, key) : xstrdup(key);
}

json_t *opts_resolve(const struct param_spec *specs, const json_t *obj, const char *path,
		     const char *what, int typed, struct strbuf *err)
{
	if (!json_is_object(obj)) {
		strbuf_addf(err, "%s: must be an object", *path ? path : "the object");
		return NULL;
	}
	json_t *res = json_object();
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)obj, key, v) {
		if (typed && !strcmp(key, "type")) {
			json_object_set(res, "type", v);
			continue;
		}
		const struct param_spec *s = params_find(specs, key);
		char *kp = key_path(path, key);
		json_t *val = NULL;
		if (!s) {
			strbuf_addf(err, "%s: unknown key%s%s (valid: ", kp, what ? " for " : "",
				    what ? what : "");
			valid_keys(specs, typed, err);
			strbuf_addch(err, ')');
		}
		int bad = !s || check_value(s, v, kp, &val, err);
		free(kp);
		if (bad) {
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

json_t *params_resolve(const struct param_spec *specs, const json_t *obj, const char *path,
		       struct strbuf *err)
{
	return opts_resolve(specs, obj, path, NULL, 1, err);
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

static const char *const type_names[] = { "int", "number", "bool", "string", "enum", "object",
					  "json" };

void params_describe(const struct param_spec *specs, struct strbuf *out)
{
	for (const struct param_spec *s = specs; s && s->name; s++) {
		strbuf_addf(out, "  %-14s %-6s ", s->name, s->kind ? s->kind : type_names[s->type]);
		if (s->type == PT_INT || s->type == PT_REAL) {
			if (unbounded(s))
				strbuf_addf(out, "[%.15g..] ", s->min);
			else
				strbuf_addf(out, "[%.15g..%.15g] ", s->min, s->max);
		}
		if (s->type == PT_ENUM) {
			strbuf_addch(out, '{');
			for (const char *const *c = s->choices; c && *c; c++)
				strbuf_addf(out, "%s%s", c == s->choices ? "" : "|", *c);
			strbuf_addstr(out, "} ");
		}
		strbuf_addf(out, "%s", s->help ? s->help : "");
		if (s->def)
			strbuf_addf(out, " (default %s)", s->def);
		else if (s->def_doc)
			strbuf_addf(out, " (default: %s)", s->def_doc);
		strbuf_addch(out, '\n');
	}
}

/* text into a Markdown table cell: a '|' would end the cell */
static void md_cell(struct strbuf *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|')
			strbuf_addch(out, '\\');
		strbuf_addch(out, *s);
	}
}

void params_markdown(const struct param_spec *specs, struct strbuf *out)
{
	static const char *const md_types[] = { "integer", "number", "boolean", "string", "",
						"object", "JSON" };
	strbuf_addstr(out, "| key | type | default | meaning |\n|---|---|---|---|\n");
	for (const struct param_spec *s = specs; s && s->name; s++) {
		strbuf_addf(out, "| `%s` | ", s->name);
		if (s->kind)
			md_cell(out, s->kind);
		else if (s->type == PT_ENUM)
			for (const char *const *c = s->choices; c && *c; c++)
				strbuf_addf(out, "%s`%s`", c == s->choices ? "" : ", ", *c);
		else
			strbuf_addstr(out, md_types[s->type]);
		if ((s->type == PT_INT || s->type == PT_REAL) && !s->kind) {
			if (unbounded(s))
				strbuf_addf(out, ", at least %.15g", s->min);
			else
				strbuf_addf(out, " %.15g..%.15g", s->min, s->max);
		}
		strbuf_addstr(out, " | ");
		if (s->def) {
			strbuf_addch(out, '`');
			md_cell(out, s->def);
			strbuf_addch(out, '`');
		} else {
			md_cell(out, s->def_doc ? s->def_doc : "none");
		}
		strbuf_addstr(out, " | ");
		md_cell(out, s->help);
		strbuf_addstr(out, " |\n");
	}
}
