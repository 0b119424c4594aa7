/*
 * Options as data (fio's fio_options[], git's OPT_*): one struct param_spec
 * per key of a JSON object (a workload's parameters, a plan's top level, a
 * target's keys) with its name, type, default, bounds and help. The one
 * table checks the object (unknown keys named with the valid ones, wrong
 * types and ranges named by JSON path), fills the defaults, and writes the
 * help text and the docs' tables (`schedlab help workloads|plan|targets`;
 * tests/unit/test_opts.c checks that the docs' tables are the code's).
 *
 * The workloads' tables (workloads/workload.h) were the first; the plan
 * (harness/orchestrate/plan.c) and the targets (harness/targets/) use the
 * same code, which lives here because both of those layers may include it.
 */
#ifndef SL_OPTS_H
#define SL_OPTS_H

#include <jansson.h>
#include <stddef.h>

#include "harness/util/strbuf.h"

enum param_type {
	PT_INT,    /* JSON integer in [min, max] */
	PT_REAL,    /* JSON number in [min, max] */
	PT_BOOL,
	PT_STR,    /* non-empty string on one line (validated by .value if needed) */
	PT_ENUM,   /* one of .choices */
	PT_OBJECT, /* an object, checked by .value (a workload's "load") */
	PT_JSON,   /* any JSON value: .value or the caller checks it */
};

/* flags of a key */
#define PF_INTERNAL 1u /* accepted, written by schedlab itself: not named in the
			* unknown-key message's list of valid keys */

struct param_spec {
	const char *name;
	enum param_type type;
	const char *def;            /* default as JSON text; NULL: optional, no default */
	double min, max;            /* PT_INT / PT_REAL */
	const char *const *choices; /* PT_ENUM, NULL-terminated */
	const char *help;
	/* the default as the docs say it when .def is NULL ("required", "none",
	 * "what the plan's workloads run"); NULL: "none" */
	const char *def_doc;
	/* the type as the docs say it when the type's own name says too little
	 * ("integer or object", "array of strings"); NULL: from .type */
	const char *kind;
	unsigned flags;             /* PF_* */
	/* a further check of a value that passed the type's (or, for PT_JSON
	 * and PT_OBJECT, the whole check): returns the value to store (a new
	 * reference: json_incref(v) when it is kept as it is), or NULL with
	 * the message in err; `path` is the key's JSON path ("target.user") */
	json_t *(*value)(json_t *v, const char *path, struct strbuf *err);
};
#define PARAM_END { NULL, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, 0, NULL }

/*
 * Check `obj` against `specs` and return a new object with every default
 * filled in, or NULL with the message in err. `path` is the JSON path of obj
 * ("workloads[1]", "target"; "" for a plan's top level: keys are then named
 * alone). `what` (or NULL) names the object in the unknown-key message
 * ("PATH.KEY: unknown key for WHAT (valid: ...)"). `typed`: obj has a "type"
 * key that the caller checked (a workload, a target), kept as it is and
 * named first among the valid keys.
 */
json_t *opts_resolve(const struct param_spec *specs, const json_t *obj, const char *path,
		     const char *what, int typed, struct strbuf *err);
/* a workload object ("type" already checked): opts_resolve(specs, obj, path,
 * NULL, 1, err) */
json_t *params_resolve(const struct param_spec *specs, const json_t *obj, const char *path,
		       struct strbuf *err);
/* the spec of `name` in specs, or NULL */
const struct param_spec *params_find(const struct param_spec *specs, const char *name);

/* typed getters for a resolved object (defaults filled in) */
long long param_int(const json_t *p, const char *name);
double param_num(const json_t *p, const char *name);
int param_bool(const json_t *p, const char *name);
const char *param_str(const json_t *p, const char *name);

/* append a human-readable table of the specs (for --help) */
void params_describe(const struct param_spec *specs, struct strbuf *out);
/* append the specs as the docs' Markdown table: | key | type | default |
 * meaning |, one row a key (the same text params_describe prints) */
void params_markdown(const struct param_spec *specs, struct strbuf *out);

#endif
