/*
 * Plan loading, validation and expansion; the rules are in plan.h and
 * docs/plan-format.md.
 */
#include "harness/agent/knobs.h"
#include "harness/agent/scx.h"
#include "harness/agent/preempt_offer.h"
#include "harness/orchestrate/plan.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "analysis/outlier.h"
#include "harness/orchestrate/kbuild.h"
#include "harness/targets/target.h"

static const char *const lab_keys[] = { "id", "target", "targets", "label", NULL };
static const char *const matrix_keys[] = { "kernel", "preempt", "cmdline", "knobs",
					   "scheduler", "impossible", NULL };
static const char *const impossible_values[] = { "refuse", "drop", NULL };
static const char *const knob_keys[] = { "sched_features", "tunables", "sysctl", NULL };
static const char *const preempt_modes[] = { "none", "voluntary", "full", "lazy", "laziest",
					     NULL };
static const char *const switch_methods[] = { "auto", "runtime", "reboot", "kexec", NULL };
static const char *const orders[] = { "interleaved", "sequential", NULL };

/* a plan's name: printed by plan, sessions and query, so one line */
static json_t *name_value(json_t *v, const char *path, struct strbuf *err)
{
	for (const char *c = json_string_value(v); *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			strbuf_addf(err, "%s: must not contain control characters (a newline, a tab, "
				    "an escape sequence: the name is printed by plan, sessions and "
				    "query)", path);
			return NULL;
		}
	return json_incref(v);
}

/* the plan's top level (docs/plan-format.md's first table is written from
 * it: `schedlab help plan`); "target", "targets", "repetitions", "matrix",
 * "workloads" and "lab" have structure of their own, checked below */
const struct param_spec plan_options[] = {
	{ "name", PT_STR, "\"unnamed\"", .value = name_value,
	  .help = "stored with the session; one line, no control characters" },
	{ "target", PT_JSON, .kind = "string or object", .def_doc = "`\"local\"`",
	  .help = "`\"local\"`, a spec string (`\"qemu:KERNEL\"`, `\"ssh://user@host:port\"`) or "
		  "an object with `\"type\"` (see below)" },
	{ "targets", PT_JSON, .kind = "array",
	  .help = "a lab: a non-empty array of targets, each written like `target`; one session "
		  "per target, run in parallel (see Labs below). Not together with `target`" },
	{ "switch", PT_ENUM, "\"auto\"", .choices = switch_methods,
	  .help = "how boot configurations are reached: `runtime`, `reboot`, `kexec`; `auto` lets "
		  "the target choose (qemu and ssh: `runtime` when only the preempt mode changes "
		  "and the kernel can switch it; docs/qemu.md, docs/ssh.md)" },
	{ "repetitions", PT_JSON, "1", .kind = "integer 1..100000 or object",
	  .help = "how many times every (boot, knobs, workload) combination runs; or an object "
		  "for sequential repetitions (below)" },
	{ "seed", PT_INT, "1", 0, (double)LLONG_MAX,
	  .help = "seeds the shuffles of the execution order and each repetition's perturbation: "
		  "repetition r of every configuration runs under `plan_rep_seed(seed, r)` (0 .. "
		  "2^32 - 1, the same on every configuration and host), carried to the agent and "
		  "stored as `run.seed`; the agent mixes it into the kernel's entropy pool and spins "
		  "a seeded number of loop iterations before the run (docs/virtual-time.md \"Seeds\"); "
		  "`compare` pairs the sides' runs by it (docs/statistics.md \"Paired by seed\")" },
	{ "order", PT_ENUM, "\"interleaved\"", .choices = orders,
	  .help = "`interleaved`: every round visits each boot configuration once and runs each "
		  "knobs x workload pair once, both orders shuffled per round; `sequential`: plan "
		  "order, repetitions back to back" },
	{ "schedstat", PT_BOOL, "true",
	  .help = "turn `kernel.sched_schedstats` on for each run (restored after it) and record "
		  "/proc/schedstat deltas per run when the kernel has them; the native workloads' "
		  "wakeup-placement evidence (`placement`, docs/metrics.md) needs it" },
	{ "matrix", PT_JSON, .kind = "object", .def_doc = "one boot as the target is",
	  .help = "the boot configurations (kernel x preempt x cmdline) and the knob sets: its "
		  "keys in the next table" },
	{ "workloads", PT_JSON, .kind = "array of objects", .def_doc = "required",
	  .help = "workload objects, each with `\"type\"` (`schedlab help workloads`)" },
	{ "lab", PT_JSON, .kind = "object", .flags = PF_INTERNAL,
	  .help = "written by schedlab into the stored plan of each member of a lab (`id`, "
		  "`target`, `targets`, `label`); not taken from a plan file with `targets`" },
	PARAM_END,
};

uint64_t plan_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * The seed of repetition rep (plan.h): a 32-bit bijection (lowbias32, Chris
 * Wellons' hash prospector) of the plan seed's splitmix64 word plus rep, so
 * that the repetitions of one plan never share a seed, and no
 * configuration, host or clock goes into it.
 */
int64_t plan_rep_seed(uint64_t plan_seed, int rep)
{
	uint64_t st = plan_seed;
	uint32_t x = (uint32_t)plan_rand(&st) + (uint32_t)rep;
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return (int64_t)x;
}

static void shuffle(int *a, size_t n, uint64_t *st)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(plan_rand(st) % i);
		int t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

static int in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return 1;
	return 0;
}

static void list_text(const char *const *list, struct strbuf *err)
{
	for (const char *const *l = list; *l; l++)
		strbuf_addf(err, "%s%s", l == list ? "" : ", ", *l);
}

static int check_keys(const json_t *obj, const char *const *valid, const char *path,
		      struct strbuf *err)
{
	return conf_check_keys(obj, valid, path, NULL, err);
}

/* a matrix dimension: absent, a string, or an array of strings */
/*
 * matrix.kernel: a string, an object or an array of them. A string is a kernel
 * folder or image; an object is a variant spec (harness/orchestrate/kbuild.h), validated
 * here against the fragments in kernels/fragments/, and stands in the boots as
 * its "image" once `schedlab run` has built it, as its label until then.
 */
static int kernel_list(const json_t *v, struct strvec *out, struct strbuf *err)
{
	if (!v)
		return 0;
	if (!json_is_array(v) || !json_array_size(v)) {
		if (!json_is_string(v) && !json_is_object(v)) {
			strbuf_addstr(err, "matrix.kernel: must be a kernel folder, a variant "
				      "object ({\"variant\": [\"hz1000\"]}) or a non-empty array "
				      "of them");
			return -1;
		}
	}
	size_t n = json_is_array(v) ? json_array_size(v) : 1;
	for (size_t i = 0; i < n; i++) {
		const json_t *k = json_is_array(v) ? json_array_get(v, i) : v;
		char path[64];
		snprintf(path, sizeof(path), "matrix.kernel[%zu]", i);
		if (json_is_string(k) && json_string_length(k)) {
			strvec_push(out, json_string_value(k));
		} else if (json_is_object(k)) {
			if (kbuild_spec_check(k, path, kbuild_kernels_dir(), err))
				return -1;
			const char *img = json_string_value(json_object_get(k, "image"));
			if (img) {
				strvec_push(out, img);
			} else {
				char *label = kbuild_label(k);
				strvec_push(out, label);
				free(label);
			}
		} else {
			strbuf_addf(err, "%s: must be a kernel folder (string) or a variant object "
				    "({\"variant\": [...], \"base\": \"minimal\"})", path);
			return -1;
		}
	}
	return 0;
}

int plan_set_kernel_image(struct plan *p, size_t index, const char *image, struct strbuf *err)
{
	json_t *m = json_object_get(p->root, "matrix");
	json_t *ks = json_object_get(m, "kernel");
	json_t *k = json_is_array(ks) ? json_array_get(ks, index) : index ? NULL : ks;
	if (!json_is_object(k)) {
		strbuf_addf(err, "matrix.kernel[%zu]: not a variant object", index);
		return -1;
	}
	json_object_set_new(k, "image", json_string(image));
	for (size_t b = 0; b < p->nboots; b++) {
		if (p->boots[b].kernel_index != (int)index)
			continue;
		free((char *)p->boots[b].kernel);
		p->boots[b].kernel = xstrdup(image);
	}
	return 0;
}

const json_t *plan_kernel_spec(const struct plan *p, int index)
{
	json_t *ks = json_object_get(json_object_get(p->root, "matrix"), "kernel");
	if (index < 0)
		return NULL;
	return json_is_array(ks) ? json_array_get(ks, (size_t)index) : index ? NULL : ks;
}

void plan_set_kernel_label(struct plan *p, size_t index)
{
	const json_t *k = plan_kernel_spec(p, (int)index);
	if (!json_is_object(k) || json_object_get(k, "image"))
		return;
	char *label = kbuild_label(k);
	for (size_t b = 0; b < p->nboots; b++) {
		if (p->boots[b].kernel_index != (int)index)
			continue;
		free((char *)p->boots[b].kernel);
		p->boots[b].kernel = xstrdup(label);
	}
	free(label);
}

static int string_list(const json_t *v, const char *path, struct strvec *out,
		       const char *const *allowed, struct strbuf *err)
{
	if (!v)
		return 0;
	if (json_is_string(v)) {
		strvec_push(out, json_string_value(v));
	} else if (json_is_array(v) && json_array_size(v)) {
		size_t i;
		json_t *e;
		json_array_foreach(v, i, e) {
			if (!json_is_string(e)) {
				strbuf_addf(err, "%s[%zu]: must be a string", path, i);
				return -1;
			}
			strvec_push(out, json_string_value(e));
		}
	} else {
		strbuf_addf(err, "%s: must be a string or a non-empty array of strings", path);
		return -1;
	}
	for (size_t i = 0; allowed && i < out->nr; i++) {
		if (!in_list(allowed, out->v[i])) {
			strbuf_addf(err, "%s[%zu]: \"%s\" is not valid (valid: ", path, i, out->v[i]);
			list_text(allowed, err);
			strbuf_addch(err, ')');
			return -1;
		}
	}
	return 0;
}

int cmdline_check(const char *c, const char *path, struct strbuf *err)
{
	if (strlen(c) > PLAN_CMDLINE_MAX) {
		strbuf_addf(err, "%s: %zu characters; the kernel takes a command line of at most "
			    "2048 (and its own parameters come first): at most %d here", path,
			    strlen(c), PLAN_CMDLINE_MAX);
		return -1;
	}
	if (strstr(c, "  ") || *c == ' ' || (*c && c[strlen(c) - 1] == ' ')) {
		strbuf_addf(err, "%s: parameters are separated by single spaces (no leading, "
			    "trailing or double spaces: an empty parameter)", path);
		return -1;
	}
	for (const char *p = c; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch == ' ')
			continue;
		if (!isalnum(ch) && !strchr("_-.,=:/+@[]", ch)) {
			strbuf_addf(err, "%s: character '%s%c' is not allowed in kernel parameters "
				    "(letters, digits, _-.,=:/+@[] and single spaces; no quotes)",
				    path, ch == '\n' ? "\\" : "", ch == '\n' ? 'n' : ch);
			return -1;
		}
	}
	const char *p = c;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!strncmp(p, "preempt=", 8)) {
			strbuf_addf(err, "%s: set preempt= with matrix.preempt, not in cmdline", path);
			return -1;
		}
		if (*p == '=') {
			strbuf_addf(err, "%s: a parameter must not start with '='", path);
			return -1;
		}
		while (*p && *p != ' ')
			p++;
	}
	return 0;
}

static int name_ok(const char *s, int upper)
{
	if (!*s || strlen(s) > 64)
		return 0;
	for (const char *p = s; *p; p++) {
		if (upper ? !(isupper((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_')
			  : !(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_'))
			return 0;
	}
	return 1;
}

/* a scheduler tunable: a file below /sys/kernel/debug/sched/ by its
 * relative name, a name_ok segment or up to four joined by '/' for the
 * files in its folders (6.12's per-CPU fair_server/cpu0/runtime, the
 * sched domains' domains/cpu0/domain0/imbalance_pct): no empty, '.' or
 * '..' segment can be written (name_ok allows no '.') */
static int tunable_name_ok(const char *s)
{
	if (!*s || strlen(s) > 64)
		return 0;
	int segs = 0;
	for (const char *p = s;; segs++) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		char seg[65];
		if (!n || n >= sizeof(seg))
			return 0;
		memcpy(seg, p, n);
		seg[n] = '\0';
		if (!name_ok(seg, 0))
			return 0;
		if (!slash)
			break;
		p = slash + 1;
	}
	return segs < 4;
}

static int value_ok(const json_t *v)
{
	if (json_is_integer(v))
		return 1;
	if (!json_is_string(v))
		return 0;
	const char *s = json_string_value(v);
	if (!*s || strlen(s) > 256)
		return 0;
	for (const char *p = s; *p; p++)
		if (!isprint((unsigned char)*p))
			return 0;
	return 1;
}

int knob_object_check(const json_t *knob, const char *path, struct strbuf *err)
{
	if (!json_is_object(knob)) {
		strbuf_addf(err, "%s: must be an object like {\"sched_features\": [\"NO_TTWU_QUEUE\"]}",
			    path);
		return -1;
	}
	if (check_keys(knob, knob_keys, path, err))
		return -1;
	json_t *f = json_object_get(knob, "sched_features");
	if (f) {
		size_t i;
		json_t *e;
		if (!json_is_array(f)) {
			strbuf_addf(err, "%s.sched_features: must be an array of feature names", path);
			return -1;
		}
		json_array_foreach(f, i, e) {
			if (!json_is_string(e) || !name_ok(json_string_value(e), 1)) {
				strbuf_addf(err, "%s.sched_features[%zu]: must be a feature name like "
					    "\"TTWU_QUEUE\" or \"NO_TTWU_QUEUE\"", path, i);
				return -1;
			}
		}
	}
	static const char *const objs[] = { "tunables", "sysctl" };
	for (int k = 0; k < 2; k++) {
		json_t *o = json_object_get(knob, objs[k]);
		if (!o)
			continue;
		if (!json_is_object(o)) {
			strbuf_addf(err, "%s.%s: must be an object of name: value", path, objs[k]);
			return -1;
		}
		const char *key;
		json_t *v;
		json_object_foreach(o, key, v) {
			if (k ? !name_ok(key, 0) : !tunable_name_ok(key)) {
				strbuf_addf(err, "%s.%s.%s: not a valid %s name (lowercase letters, "
					    "digits, _%s)", path, objs[k], key,
					    k ? "sysctl (kernel.*)" : "scheduler tunable",
					    k ? "" : "; a file in a folder of sched/ as "
						     "fair_server/cpu0/runtime");
				return -1;
			}
			if (!value_ok(v)) {
				strbuf_addf(err, "%s.%s.%s: value must be an integer or a printable "
					    "string", path, objs[k], key);
				return -1;
			}
			char *kp = xstrfmt("%s%s", k ? "/proc/sys/kernel/" : "/sys/kernel/debug/sched/",
					   key);
			const char *why = knob_denied(kp);
			free(kp);
			if (why) {
				strbuf_addf(err, "%s.%s.%s: schedlab never writes this knob: %s "
					    "(docs/reliability.md)", path, objs[k], key, why);
				return -1;
			}
		}
	}
	return 0;
}

int knobs_to_writes(const json_t *knob, json_t **writes, struct strbuf *err)
{
	json_t *w = json_array();
	json_t *f = json_object_get(knob, "sched_features");
	size_t i;
	json_t *e;
	json_array_foreach(f, i, e)
		json_array_append_new(w, json_pack("{s:s,s:s}", "path",
						   "/sys/kernel/debug/sched/features", "value",
						   json_string_value(e)));
	static const struct { const char *key, *dir; } objs[] = {
		{ "tunables", "/sys/kernel/debug/sched/" },
		{ "sysctl", "/proc/sys/kernel/" },
	};
	for (int k = 0; k < 2; k++) {
		const char *key;
		json_t *v;
		json_object_foreach(json_object_get(knob, objs[k].key), key, v) {
			char *path = xstrfmt("%s%s", objs[k].dir, key);
			char *val = json_is_integer(v) ? xstrfmt("%lld", (long long)json_integer_value(v))
						       : xstrdup(json_string_value(v));
			json_array_append_new(w, json_pack("{s:s,s:s}", "path", path, "value", val));
			free(path);
			free(val);
		}
	}
	(void)err;
	*writes = w;
	return 0;
}

char *knob_label(const json_t *knob)
{
	if (!json_object_size(knob))
		return xstrdup("default");
	char *s = json_dumps(knob, JSON_COMPACT | JSON_SORT_KEYS);
	char *r = xstrdup(s);
	free(s);
	return r;
}

static int expand(struct plan *p)
{
	size_t nk = json_array_size(p->knobs);
	size_t inner = nk * p->nwl;
	int *cfg = xcalloc(p->nboots, sizeof(int));
	int *in = xcalloc(inner, sizeof(int));
	uint64_t st = p->seed;
	int interleaved = !strcmp(p->order, "interleaved");
	p->nvisits = interleaved ? p->nboots * (size_t)p->repetitions : p->nboots;
	p->visits = xcalloc(p->nvisits, sizeof(*p->visits));
	size_t v = 0;
	if (interleaved) {
		for (int r = 0; r < p->repetitions; r++) {
			for (size_t i = 0; i < p->nboots; i++)
				cfg[i] = (int)i;
			shuffle(cfg, p->nboots, &st);
			for (size_t b = 0; b < p->nboots; b++) {
				struct plan_visit *vi = &p->visits[v++];
				vi->cfg = cfg[b];
				vi->round = r;
				vi->nruns = inner;
				vi->runs = xcalloc(inner, sizeof(*vi->runs));
				for (size_t i = 0; i < inner; i++)
					in[i] = (int)i;
				shuffle(in, inner, &st);
				for (size_t i = 0; i < inner; i++)
					vi->runs[i] = (struct plan_run){ in[i] / (int)p->nwl,
									 in[i] % (int)p->nwl, r, 0 };
			}
		}
	} else {
		for (size_t b = 0; b < p->nboots; b++) {
			struct plan_visit *vi = &p->visits[v++];
			vi->cfg = (int)b;
			vi->round = 0;
			vi->nruns = inner * (size_t)p->repetitions;
			vi->runs = xcalloc(vi->nruns, sizeof(*vi->runs));
			size_t k = 0;
			for (int r = 0; r < p->repetitions; r++)
				for (size_t i = 0; i < inner; i++)
					vi->runs[k++] = (struct plan_run){ (int)(i / p->nwl),
									   (int)(i % p->nwl), r, 0 };
		}
	}
	/* evidence: one traced run per knobs x workload with "evidence", at
	   the end of each configuration's last visit (after its repetitions) */
	size_t ntr = 0;
	for (size_t w = 0; w < p->nwl; w++)
		ntr += p->wl[w].evidence ? nk : 0;
	for (size_t b = 0; ntr && b < p->nboots; b++) {
		struct plan_visit *last = NULL;
		for (size_t i = 0; i < p->nvisits; i++)
			if (p->visits[i].cfg == (int)b)
				last = &p->visits[i];
		if (!last)
			continue;
		last->runs = xrealloc(last->runs, (last->nruns + ntr) * sizeof(*last->runs));
		for (size_t kn = 0; kn < nk; kn++)
			for (size_t w = 0; w < p->nwl; w++)
				if (p->wl[w].evidence)
					last->runs[last->nruns++] = (struct plan_run){
						(int)kn, (int)w, p->repetitions, 1 };
	}
	free(cfg);
	free(in);
	return 0;
}

/* a plan's "target" value (or one of "targets"): "local", a spec string or
 * an object -> a target object (new reference); NULL with a message naming `path` */
static json_t *target_value(const json_t *v, const char *path, struct strbuf *err)
{
	if (json_is_object(v))
		return json_incref((json_t *)v);
	if (!json_is_string(v)) {
		strbuf_addf(err, "%s: must be \"local\", a target spec string or an object "
			    "with \"type\"", path);
		return NULL;
	}
	struct strbuf e = STRBUF_INIT;
	json_t *t = target_spec_parse(json_string_value(v), &e);
	if (!t)
		strbuf_addf(err, "%s: %s", path, e.buf);
	strbuf_release(&e);
	return t;
}

/* validate a target object with its type's check; the plan's "switch" is
 * handed to targets that switch by booting. Errors name `path`
 * ("target.host", "targets[1].host"). */
static json_t *resolve_target(const struct plan *p, const json_t *tobj, const char *path,
			      const struct target_ops **ops, struct strbuf *err)
{
	const char *type = json_string_value(json_object_get(tobj, "type"));
	if (!json_is_object(tobj) || !type) {
		strbuf_addf(err, "%s.type: missing (valid: %s)", path, target_names());
		return NULL;
	}
	const struct target_ops *t = target_find(type);
	if (!t) {
		strbuf_addf(err, "%s.type: unknown target \"%s\" (valid: %s)", path, type,
			    target_names());
		return NULL;
	}
	/* which target a switch error is about, when there are several */
	char where[80] = "";
	if (strcmp(path, "target"))
		snprintf(where, sizeof(where), " of %s", path);
	const char *sw = p->switch_method ? p->switch_method : "auto";
	json_t *conf = json_deep_copy(tobj);
	int boots = (t->caps & TCAP_PREEMPT_BOOT) != 0;
	if (!strcmp(sw, "runtime") && !(t->caps & TCAP_PREEMPT_RUNTIME)) {
		strbuf_addf(err, "switch: the %s target%s cannot switch at run time (valid: "
			    "auto, reboot, kexec)", type, where);
		json_decref(conf);
		return NULL;
	} else if (strcmp(sw, "auto") && strcmp(sw, "runtime") && !boots) {
		strbuf_addf(err, "switch: the %s target%s cannot %s (valid: auto, runtime)", type,
			    where, sw);
		json_decref(conf);
		return NULL;
	} else if (strcmp(sw, "auto") && boots && !json_object_get(conf, "switch")) {
		json_object_set_new(conf, "switch", json_string(sw));
	}
	json_t *resolved = t->check(conf, path, err);
	json_decref(conf);
	if (resolved)
		*ops = t;
	return resolved;
}

/* the "lab" marker of a lab member's stored plan */
static int lab_check(const json_t *lab, struct strbuf *err)
{
	if (!json_is_object(lab)) {
		strbuf_addstr(err, "lab: must be an object {\"id\": ..., \"target\": N} (written "
			      "by schedlab for the sessions of a lab)");
		return -1;
	}
	if (check_keys(lab, lab_keys, "lab", err))
		return -1;
	json_t *id = json_object_get(lab, "id");
	if (!json_is_string(id) || !json_string_length(id)) {
		strbuf_addstr(err, "lab.id: must be a non-empty string");
		return -1;
	}
	static const char *const ints[] = { "target", "targets" };
	for (int i = 0; i < 2; i++) {
		json_t *n = json_object_get(lab, ints[i]);
		if (n && (!json_is_integer(n) || json_integer_value(n) < 0)) {
			strbuf_addf(err, "lab.%s: must be a non-negative integer", ints[i]);
			return -1;
		}
	}
	json_t *l = json_object_get(lab, "label");
	if (l && !json_is_string(l)) {
		strbuf_addstr(err, "lab.label: must be a string");
		return -1;
	}
	return 0;
}

/* an integer member of the repetitions object (absent: keep *out) */
static int rep_int(const json_t *o, const char *key, int lo, int hi, int *out, struct strbuf *e)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
		strbuf_addf(e, "repetitions.%s: must be an integer from %d to %d", key, lo, hi);
		return -1;
	}
	*out = (int)json_integer_value(v);
	return 0;
}

static int rep_real(const json_t *o, const char *key, double *out, struct strbuf *e)
{
	json_t *v = json_object_get(o, key);
	if (!v)
		return 0;
	if (!json_is_number(v)) {
		strbuf_addf(e, "repetitions.%s: must be a number", key);
		return -1;
	}
	*out = json_number_value(v);
	return 0;
}

/* "repetitions": {"min", "max", "until", "metrics", "threshold_pct",
 * "alpha", "spending", "boundaries", "max_wall_s"}; the metric names are checked against
 * the workloads later (check_seq_metrics). Without "boundaries", a plan
 * file gets the exact design and the key is written into it (so the plan
 * its session stores names it); a stored plan without the key was run
 * before the key existed, with the Bonferroni design, and keeps it. */
static int validate_until_decided(struct plan *p, const json_t *o, struct strbuf *e)
{
	static const char *const keys[] = { "min", "max", "until", "metrics", "threshold_pct",
					    "alpha", "spending", "boundaries", "max_wall_s", NULL };
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)o, key, v) {
		size_t i = 0;
		while (keys[i] && strcmp(keys[i], key))
			i++;
		if (!keys[i]) {
			strbuf_addf(e, "repetitions.%s: unknown key (valid: min, max, until, metrics, "
				       "threshold_pct, alpha, spending, boundaries, max_wall_s)", key);
			return -1;
		}
	}
	const char *until = json_string_value(json_object_get(o, "until"));
	if (!until || strcmp(until, "decided")) {
		strbuf_addstr(e, "repetitions.until: must be \"decided\" (an object form of "
				 "repetitions means sequential repetitions; a fixed count is an integer)");
		return -1;
	}
	seq_design_default(&p->seq);
	if (!json_object_get(o, "max")) {
		strbuf_addstr(e, "repetitions.max: missing (the most rounds to run, e.g. 30)");
		return -1;
	}
	if (rep_int(o, "min", 2, 100000, &p->seq.min, e) ||
	    rep_int(o, "max", 2, 100000, &p->seq.max, e) ||
	    rep_real(o, "threshold_pct", &p->seq.threshold_pct, e) ||
	    rep_real(o, "alpha", &p->seq.alpha, e))
		return -1;
	if (!json_object_get(o, "min") && p->seq.min > p->seq.max)
		p->seq.min = p->seq.max;
	v = json_object_get(o, "max_wall_s");
	if (v && (!json_is_number(v) || !(json_number_value(v) >= 1) ||
		  json_number_value(v) > 31 * 86400)) {
		strbuf_addstr(e, "repetitions.max_wall_s: must be a number of seconds, 1 to 2678400 "
				 "(31 days): no round starts after the session ran this long");
		return -1;
	}
	p->seq_max_wall_s = v ? json_number_value(v) : 0;
	v = json_object_get(o, "spending");
	if (v) {
		const char *s = json_string_value(v);
		if (!s || (strcmp(s, "pocock") && strcmp(s, "obrien-fleming"))) {
			strbuf_addstr(e, "repetitions.spending: must be \"pocock\" or \"obrien-fleming\"");
			return -1;
		}
		p->seq.spending = strcmp(s, "pocock") ? SEQ_OBF : SEQ_POCOCK;
	}
	v = json_object_get(o, "boundaries");
	if (v) {
		const char *s = json_string_value(v);
		if (!s || (strcmp(s, "exact") && strcmp(s, "bonferroni"))) {
			strbuf_addstr(e, "repetitions.boundaries: must be \"exact\" (exact "
					 "group-sequential boundaries, with a futility stop) or "
					 "\"bonferroni\" (each look at its share of alpha)");
			return -1;
		}
		p->seq.boundary = strcmp(s, "exact") ? SEQ_BONFERRONI : SEQ_EXACT;
	} else if (p->user_file) {
		p->seq.boundary = SEQ_EXACT;
		json_object_set_new((json_t *)o, "boundaries", json_string("exact"));
	} else {
		p->seq.boundary = SEQ_BONFERRONI;
	}
	const char *why;
	if (seq_design_check(&p->seq, &why)) {
		strbuf_addf(e, "repetitions: %s", why);
		return -1;
	}
	v = json_object_get(o, "metrics");
	if (v) {
		size_t i;
		json_t *m;
		if (!json_is_array(v) || !json_array_size(v)) {
			strbuf_addstr(e, "repetitions.metrics: must be a non-empty array of "
					 "\"WORKLOAD.METRIC\" strings");
			return -1;
		}
		json_array_foreach(v, i, m) {
			const char *s = json_string_value(m);
			const char *dot = s ? strchr(s, '.') : NULL;
			if (!dot || dot == s || !dot[1]) {
				strbuf_addf(e, "repetitions.metrics[%zu]: must be \"WORKLOAD.METRIC\" "
					       "(e.g. \"hackbench.time_s\")", i);
				return -1;
			}
			strvec_push(&p->seq_metrics, s);
		}
	}
	p->until_decided = 1;
	p->repetitions = p->seq.max;
	return 0;
}

/* with sequential repetitions: interleaved order, and metrics that name
 * workloads of the plan */
static int check_until_decided(struct plan *p, struct strbuf *e)
{
	if (!p->until_decided)
		return 0;
	for (size_t i = 0; i < p->nwl; i++)
		if (p->wl[i].evidence) {
			strbuf_addf(e, "workloads[%zu].evidence: not with sequential repetitions "
				    "(the last round is not known in advance); use a fixed "
				    "\"repetitions\"", i);
			return -1;
		}
	if (strcmp(p->order, "interleaved")) {
		strbuf_addstr(e, "repetitions: sequential repetitions need \"order\": "
				 "\"interleaved\" (a round visits every configuration)");
		return -1;
	}
	for (size_t i = 0; i < p->seq_metrics.nr; i++) {
		const char *s = p->seq_metrics.v[i];
		size_t n = (size_t)(strchr(s, '.') - s);
		size_t w = 0;
		while (w < p->nwl && (strlen(p->wl[w].ops->name) != n ||
				      strncmp(p->wl[w].ops->name, s, n)))
			w++;
		if (w == p->nwl) {
			strbuf_addf(e, "repetitions.metrics[%zu]: \"%.*s\" is not a workload of "
				       "this plan", i, (int)n, s);
			return -1;
		}
		if (!workload_metric_known(p->wl[w].ops, s + n + 1)) {
			strbuf_addf(e, "repetitions.metrics[%zu]: \"%s\" is not a metric of %s "
				       "(valid: ", i, s + n + 1, p->wl[w].ops->name);
			workload_metric_names(p->wl[w].ops, e);
			strbuf_addstr(e, "; \"*\" stands for a task name or CPU number, "
					 "docs/metrics.md)");
			return -1;
		}
	}
	return 0;
}

int plan_set_until_decided(struct plan *p, struct strbuf *err)
{
	if (p->until_decided)
		return 0;
	if (p->repetitions < 2) {
		strbuf_addf(err, "--until-decided: the plan has %d repetition; give it at least 2 "
			    "(the most rounds to run)", p->repetitions);
		return -1;
	}
	json_t *o = json_pack("{s:i,s:i,s:s,s:s}", "min", p->repetitions < 3 ? p->repetitions : 3,
			      "max", p->repetitions, "until", "decided", "boundaries", "exact");
	json_object_set_new(p->root, "repetitions", o);
	struct strbuf e = STRBUF_INIT;
	int rc = validate_until_decided(p, o, &e) || check_until_decided(p, &e);
	if (rc)
		strbuf_addf(err, "--until-decided: %s", e.buf);
	strbuf_release(&e);
	return rc ? -1 : 0;
}

/* name, repetitions, seed, schedstat, order and switch from the top level
 * resolved by plan_options (defaults filled in) */
static int validate_settings(struct plan *p, const json_t *top, struct strbuf *e)
{
	p->name = xstrdup(param_str(top, "name"));
	json_t *v = json_object_get(top, "repetitions");
	if (json_is_object(v)) {
		if (validate_until_decided(p, v, e))
			return -1;
	} else if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		   json_integer_value(v) > 100000) {
		strbuf_addstr(e, "repetitions: must be a positive integer, or an object "
				 "{\"min\": N, \"max\": M, \"until\": \"decided\"} (docs/plan-format.md)");
		return -1;
	} else {
		p->repetitions = (int)json_integer_value(v);
	}
	p->seed = (uint64_t)param_int(top, "seed");
	p->schedstat = param_bool(top, "schedstat");
	p->order = xstrdup(param_str(top, "order"));
	p->switch_method = xstrdup(param_str(top, "switch"));
	return 0;
}

/* a lab's "targets": every member resolved; the first stands in p->target */
static int validate_lab_targets(struct plan *p, const json_t *vs, struct strbuf *e)
{
	if (!json_is_array(vs) || !json_array_size(vs)) {
		strbuf_addstr(e, "targets: must be a non-empty array of targets (each "
			      "\"local\", a target spec string or an object with \"type\")");
		return -1;
	}
	p->targets = json_array();
	size_t ti;
	json_t *te;
	json_array_foreach(vs, ti, te) {
		char path[64];
		const struct target_ops *ops;
		snprintf(path, sizeof(path), "targets[%zu]", ti);
		json_t *tobj = target_value(te, path, e);
		json_t *res = tobj ? resolve_target(p, tobj, path, &ops, e) : NULL;
		json_decref(tobj);
		if (!res)
			return -1;
		json_array_append_new(p->targets, res);
		if (!ti) {
			p->target = json_incref(res);
			p->tops = ops;
		}
	}
	p->ntargets = json_array_size(p->targets);
	return 0;
}

/* "target" (default local), or a lab of "targets"; and the "lab" marker */
static int validate_targets(struct plan *p, struct strbuf *e)
{
	json_t *v = json_object_get(p->root, "target");
	json_t *vs = json_object_get(p->root, "targets");
	json_t *lab = json_object_get(p->root, "lab");
	if (v && vs) {
		strbuf_addstr(e, "target, targets: a plan names either one \"target\" or a lab "
			      "of \"targets\", not both");
		return -1;
	}
	if (vs) {
		if (lab) {
			strbuf_addstr(e, "lab: written by schedlab into the stored plan of each "
				      "member of a lab (with \"target\"); not valid with \"targets\"");
			return -1;
		}
		if (validate_lab_targets(p, vs, e))
			return -1;
	} else {
		json_t *tobj = v ? target_value(v, "target", e) : json_pack("{s:s}", "type", "local");
		if (!tobj)
			return -1;
		int bad = plan_set_target(p, tobj, e);
		json_decref(tobj);
		if (bad)
			return -1;
	}
	return lab ? lab_check(lab, e) : 0;
}

/* matrix.knobs: every knob object valid; [{}] when absent */
static int validate_knobs(struct plan *p, const json_t *m, struct strbuf *e)
{
	json_t *knobs = json_object_get(m, "knobs");
	if (knobs && (!json_is_array(knobs) || !json_array_size(knobs))) {
		strbuf_addstr(e, "matrix.knobs: must be a non-empty array of knob objects "
			      "({} for none)");
		return -1;
	}
	p->knobs = knobs ? json_deep_copy(knobs) : json_pack("[{}]");
	size_t i;
	json_t *k;
	json_array_foreach(p->knobs, i, k) {
		char path[64];
		snprintf(path, sizeof(path), "matrix.knobs[%zu]", i);
		if (knob_object_check(k, path, e))
			return -1;
	}
	return 0;
}

/*
 * matrix.scheduler (docs/sched_ext.md): "eevdf", the kernel's own class, or
 * scx_NAME, a sched_ext scheduler of the kernel's build. A run dimension:
 * every knob object is repeated once per scheduler with the scheduler as
 * its "scheduler" key, so that the scheduler travels with the run's knobs
 * into the store (results' scheduler column reads it) and into the agent's
 * request (engine_build_request). The kernels are checked in check_schedulers.
 */
static int validate_schedulers(struct plan *p, const json_t *m, struct strbuf *e)
{
	struct strvec sv = STRVEC_INIT;
	int ret = -1;
	if (string_list(json_object_get(m, "scheduler"), "matrix.scheduler", &sv, NULL, e))
		goto out;
	for (size_t i = 0; i < sv.nr; i++) {
		if (strcmp(sv.v[i], SCX_BUILTIN) && !scx_name_ok(sv.v[i])) {
			strbuf_addf(e, "matrix.scheduler[%zu]: \"%s\" is no scheduler: \"%s\" (the "
				    "kernel's own class) or scx_NAME, a sched_ext scheduler the kernel's "
				    "build has (docs/sched_ext.md)", i, sv.v[i], SCX_BUILTIN);
			goto out;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(sv.v[i], sv.v[j])) {
				strbuf_addf(e, "matrix.scheduler[%zu]: \"%s\" is listed twice", i,
					    sv.v[i]);
				goto out;
			}
	}
	if (sv.nr) {
		json_t *nk = json_array(), *k;
		size_t i;
		json_array_foreach(p->knobs, i, k)
			for (size_t j = 0; j < sv.nr; j++) {
				json_t *c = json_deep_copy(k);
				json_object_set_new(c, "scheduler", json_string(sv.v[j]));
				json_array_append_new(nk, c);
			}
		json_decref(p->knobs);
		p->knobs = nk;
	}
	ret = 0;
out:
	strvec_clear(&sv);
	return ret;
}

/* the boot configurations: kernel x preempt x cmdline (an empty dimension
 * counts once); the product was checked against PLAN_MAX_BOOTS */
static void make_boots(struct plan *p, const struct strvec *kernels,
		       const struct strvec *preempts, const struct strvec *cmdlines)
{
	size_t nk = kernels->nr ? kernels->nr : 1, np = preempts->nr ? preempts->nr : 1,
	       nc = cmdlines->nr ? cmdlines->nr : 1;
	p->nboots = nk * np * nc;
	p->boots = xcalloc(p->nboots, sizeof(*p->boots));
	size_t b = 0;
	for (size_t a = 0; a < nk; a++)
		for (size_t c = 0; c < np; c++)
			for (size_t d = 0; d < nc; d++) {
				p->boots[b].kernel = kernels->nr ? xstrdup(kernels->v[a]) : NULL;
				p->boots[b].kernel_index = kernels->nr ? (int)a : -1;
				p->boots[b].preempt = preempts->nr ? xstrdup(preempts->v[c]) : NULL;
				p->boots[b].cmdline = xstrdup(cmdlines->nr ? cmdlines->v[d] : "");
				b++;
			}
}

/* "matrix": its dimensions, knobs, and the boot configurations */
static int validate_matrix(struct plan *p, struct strbuf *e)
{
	struct strvec kernels = STRVEC_INIT, preempts = STRVEC_INIT, cmdlines = STRVEC_INIT;
	int ret = -1;
	json_t *m = json_object_get(p->root, "matrix");
	if (m && !json_is_object(m)) {
		strbuf_addstr(e, "matrix: must be an object");
		goto out;
	}
	/* "dropped": what schedlab run wrote into the stored plan (below) */
	json_t *mk = m && json_object_get(m, "dropped") ? json_copy(m) : json_incref(m);
	json_object_del(mk, "dropped");
	int badkey = m && check_keys(mk, matrix_keys, "matrix", e);
	json_decref(mk);
	if (badkey)
		goto out;
	if (kernel_list(json_object_get(m, "kernel"), &kernels, e) ||
	    string_list(json_object_get(m, "preempt"), "matrix.preempt", &preempts, preempt_modes,
			e) ||
	    string_list(json_object_get(m, "cmdline"), "matrix.cmdline", &cmdlines, NULL, e))
		goto out;
	for (size_t i = 0; i < cmdlines.nr; i++) {
		char path[64];
		snprintf(path, sizeof(path), "matrix.cmdline[%zu]", i);
		if (cmdline_check(cmdlines.v[i], path, e))
			goto out;
	}
	if (validate_knobs(p, m, e) || validate_schedulers(p, m, e))
		goto out;
	json_t *imp = json_object_get(m, "impossible");
	if (imp && (!json_is_string(imp) || !in_list(impossible_values, json_string_value(imp)))) {
		strbuf_addstr(e, "matrix.impossible: must be \"refuse\" (the default: a plan that asks "
			      "a kernel for a preemption mode it does not offer is refused) or "
			      "\"drop\" (those kernel x preempt pairs are left out, with a note)");
		goto out;
	}
	p->drop_impossible = imp && !strcmp(json_string_value(imp), "drop");
	double nk = kernels.nr ? (double)kernels.nr : 1, np = preempts.nr ? (double)preempts.nr : 1,
	       nc = cmdlines.nr ? (double)cmdlines.nr : 1;
	if (nk * np * nc > PLAN_MAX_BOOTS) {
		strbuf_addf(e, "matrix: expands to %.0f kernels x %.0f preempt modes x %.0f cmdlines "
			    "= %.0f boot configurations; the limit is %d boots (docs/plan-format.md)",
			    nk, np, nc, nk * np * nc, PLAN_MAX_BOOTS);
		goto out;
	}
	make_boots(p, &kernels, &preempts, &cmdlines);
	ret = 0;
out:
	strvec_clear(&kernels);
	strvec_clear(&preempts);
	strvec_clear(&cmdlines);
	return ret;
}

int plan_kernel_offer(const char *spec, struct preempt_offer *o, char *src, size_t srclen,
		      struct strbuf *why)
{
	struct stat st;
	if (!spec || stat(spec, &st) || !S_ISDIR(st.st_mode))
		return 0; /* an image file, or no such folder: the target says */
	/* only regular files are read (a FIFO would block the plan for ever) */
	char *kj = xstrfmt("%s/kernel.json", spec);
	struct strbuf text = STRBUF_INIT, e = STRBUF_INIT;
	const char *no;
	json_t *j = strbuf_read_regular(&text, kj, 1 << 20, &no) ? NULL
		    : json_loads(text.buf, 0, NULL);
	free(kj);
	strbuf_reset(&text);
	const char *cf = json_string_value(json_object_get(j, "config"));
	const char *rel = json_string_value(json_object_get(j, "release"));
	char *cfg = xstrfmt("%s/%s", spec, cf ? cf : "config");
	int rc = 0;
	/* a config that is there but is none (a FIFO, never waited on; a
	 * folder; random bytes) is refused naming why, not taken for unknown */
	if (!strchr(cf ? cf : "", '/')) {
		rc = preempt_offer_of_file(cfg, rel, o, &e);
		if (rc == 1)
			snprintf(src, srclen, "%s", cfg);
		else if (rc < 0 && why)
			strbuf_addf(why, "kernel %s: %s", spec, e.buf);
	}
	strbuf_release(&text);
	strbuf_release(&e);
	free(cfg);
	json_decref(j);
	return rc;
}

/* the kernel folder a boot configuration boots, when it is known before
 * anything is built: a folder of matrix.kernel, a built variant's "image",
 * or (one target) the target's "kernel" */
static const char *boot_kernel_path(const struct plan *p, const struct plan_boot *b)
{
	if (b->kernel_index < 0)
		return p->targets ? NULL : json_string_value(json_object_get(p->target, "kernel"));
	const json_t *k = plan_kernel_spec(p, b->kernel_index);
	return json_is_string(k) ? json_string_value(k)
				 : json_string_value(json_object_get(k, "image"));
}

/* 1 when the config file at path sets CONFIG_SCHED_CLASS_EXT=y, 0 when it
 * does not, -1 when it cannot be read */
static int config_has_scx(const char *path)
{
	struct strbuf t = STRBUF_INIT;
	const char *no;
	if (strbuf_read_regular(&t, path, 16 << 20, &no)) {
		strbuf_release(&t);
		return -1;
	}
	int has = !strncmp(t.buf, "CONFIG_SCHED_CLASS_EXT=y\n", 25) ||
		  strstr(t.buf, "\nCONFIG_SCHED_CLASS_EXT=y\n") != NULL;
	strbuf_release(&t);
	return has;
}

/* the schedulers of a kernel folder's build (kernels/build-scx.sh:
 * scx/schedulers), as one line "scx_a, scx_b" into out; -1 when none */
static int kernel_schedulers(const char *dir, struct strbuf *out)
{
	struct strbuf t = STRBUF_INIT;
	const char *no;
	char *list = xstrfmt("%s/scx/schedulers", dir);
	int rc = strbuf_read_regular(&t, list, 1 << 16, &no) ? -1 : 0;
	for (char *n = rc ? NULL : strtok(t.buf, "\n"); n; n = strtok(NULL, "\n"))
		strbuf_addf(out, "%s%s", out->len ? ", " : "", n);
	free(list);
	strbuf_release(&t);
	return rc || !out->len ? -1 : 0;
}

/*
 * Every kernel a scx_* scheduler runs on: a folder (an image file or a
 * variant not yet built cannot tell) whose config has sched_ext and whose
 * build has that scheduler; refused before anything runs, naming the ones
 * the build has.
 */
static int check_schedulers(const struct plan *p, struct strbuf *e)
{
	struct strvec sv = STRVEC_INIT;
	json_t *m = json_object_get(p->root, "matrix");
	int ret = -1;
	if (string_list(json_object_get(m, "scheduler"), "matrix.scheduler", &sv, NULL, e))
		goto out;
	for (size_t b = 0; b < p->nboots; b++) {
		const char *path = boot_kernel_path(p, &p->boots[b]);
		for (size_t i = 0; i < sv.nr; i++) {
			if (!strcmp(sv.v[i], SCX_BUILTIN))
				continue;
			struct stat st;
			if (!path || stat(path, &st) || !S_ISDIR(st.st_mode)) {
				strbuf_addf(e, "matrix.scheduler[%zu]: %s needs a kernel folder with "
					    "sched_ext and its schedulers built (make -C kernels scx "
					    "SERIES=7.3: kernels/out/debian-7.3); kernel %s is none",
					    i, sv.v[i], path ? path : "(the target's default)");
				goto out;
			}
			struct preempt_offer o;
			char cfg[4096];
			int has = plan_kernel_offer(path, &o, cfg, sizeof(cfg), NULL) == 1
					  ? config_has_scx(cfg) : -1;
			if (has != 1) {
				strbuf_addf(e, "matrix.scheduler[%zu]: kernel %s has no sched_ext "
					    "(%s): %s cannot run on it (Debian's Linux 7.3 has it: make "
					    "-C kernels debian SERIES=7.3)", i, path,
					    has < 0 ? "its config is not readable"
						    : "CONFIG_SCHED_CLASS_EXT=y is not in its config",
					    sv.v[i]);
				goto out;
			}
			struct strbuf have = STRBUF_INIT;
			int built = !kernel_schedulers(path, &have);
			char *exe = xstrfmt("%s/scx/%s", path, sv.v[i]);
			int ok = built && access(exe, X_OK) == 0;
			free(exe);
			if (!ok) {
				if (built)
					strbuf_addf(e, "matrix.scheduler[%zu]: kernel %s's build has no %s; "
						    "it has %s, and eevdf", i, path, sv.v[i], have.buf);
				else
					strbuf_addf(e, "matrix.scheduler[%zu]: kernel %s has no schedulers "
						    "built (%s/scx/schedulers): make -C kernels scx", i,
						    path, path);
				strbuf_release(&have);
				goto out;
			}
			strbuf_release(&have);
		}
	}
	ret = 0;
out:
	strvec_clear(&sv);
	return ret;
}

static void free_boot(struct plan_boot *b)
{
	free((char *)b->kernel);
	free((char *)b->preempt);
	free((char *)b->cmdline);
}

/* the boot configurations asking a kernel for a mode it does not offer:
 * refused (-1) or left out; the number left out */
/* a stored plan's matrix.dropped: [{"kernel": INDEX, "preempt": MODE}], the
 * pairs its session left out (index -1: the target's kernel); -1 when not
 * in that form */
static int stored_dropped(const json_t *d, const struct plan_boot *b, struct strbuf *e)
{
	size_t i;
	json_t *x;
	int hit = 0;
	json_array_foreach(d, i, x) {
		json_t *k = json_object_get(x, "kernel");
		const char *pm = json_string_value(json_object_get(x, "preempt"));
		if (!json_is_integer(k) || !pm) {
			strbuf_addf(e, "matrix.dropped[%zu]: must be {\"kernel\": INDEX, \"preempt\": "
				    "MODE} (written by schedlab run into the plan it stores)", i);
			return -1;
		}
		hit |= json_integer_value(k) == b->kernel_index && b->preempt &&
		       !strcmp(pm, b->preempt);
	}
	return hit;
}

static int apply_offers(struct plan *p, struct strbuf *e)
{
	size_t n = p->nboots, bad = 0;
	char *why_of = xcalloc(n ? n : 1, 1);
	struct strvec lines = STRVEC_INIT;
	json_t *m = json_object_get(p->root, "matrix");
	/* a stored plan keeps what its session decided: the same boot
	   configurations whatever its kernels' configs say by now */
	json_t *stored = p->offers_stored ? json_object_get(m, "dropped") : NULL;
	for (size_t i = 0; i < n; i++) {
		const struct plan_boot *b = &p->boots[i];
		const char *path = b->preempt ? boot_kernel_path(p, b) : NULL;
		struct preempt_offer o;
		char src[4096];
		if (stored) {
			int hit = stored_dropped(stored, b, e);
			if (hit < 0) {
				free(why_of);
				return -1;
			}
			if (!hit)
				continue;
			why_of[i] = 1;
			bad++;
			continue;
		}
		int known = path ? plan_kernel_offer(path, &o, src, sizeof(src), e) : 0;
		if (known < 0) {
			free(why_of);
			strvec_clear(&lines);
			return -1;
		}
		if (known != 1 || preempt_offer_has(&o, b->preempt))
			continue;
		why_of[i] = 1;
		bad++;
		/* one line per kernel x preempt pair (cmdlines repeat it) */
		int seen = 0;
		for (size_t k = 0; k < i && !seen; k++)
			seen = why_of[k] && p->boots[k].kernel_index == b->kernel_index &&
			       !strcmp(p->boots[k].preempt, b->preempt);
		if (seen)
			continue;
		struct strbuf l = STRBUF_INIT, offers = STRBUF_INIT;
		preempt_offer_describe(&o, &offers);
		strbuf_addf(&l, "kernel %s, preempt=%s: it offers %s, from %s", path, b->preempt,
			    offers.buf, src);
		strvec_push(&lines, l.buf);
		if (p->drop_impossible) {
			struct strbuf ms = STRBUF_INIT;
			preempt_offer_modes(o.modes, &ms);
			if (!p->dropped)
				p->dropped = json_array();
			json_array_append_new(p->dropped,
					      json_pack("{s:s,s:s,s:s}", "kernel", path, "preempt",
							b->preempt, "offers", ms.buf));
			strbuf_release(&ms);
			/* into the plan the session stores (--resume, lab members) */
			json_t *d = json_object_get(m, "dropped");
			if (!d)
				json_object_set_new(m, "dropped", d = json_array());
			json_array_append_new(d, json_pack("{s:i,s:s}", "kernel", b->kernel_index,
							   "preempt", b->preempt));
		}
		strbuf_release(&l);
		strbuf_release(&offers);
	}
	int ret = (int)bad;
	if (!bad)
		goto out;
	if (stored && bad < n) {
		struct strbuf l = STRBUF_INIT;
		strbuf_addf(&l, "note: %zu boot configuration%s left out as impossible when the "
			    "session was planned (matrix.dropped), %zu left", bad, bad == 1 ? "" : "s",
			    n - bad);
		strvec_push(&p->offer_notes, l.buf);
		strbuf_release(&l);
		goto drop;
	}
	if (!p->drop_impossible || bad == n) {
		strbuf_addf(e, "matrix: %zu of %zu boot configurations %s a kernel for a preemption "
			    "mode it does not offer (decided from the kernel's config, docs/kernels.md "
			    "\"What a kernel offers\"):", bad, n, bad == 1 ? "asks" : "ask");
		for (size_t i = 0; i < lines.nr; i++)
			strbuf_addf(e, "\n  %s", lines.v[i]);
		strbuf_addstr(e, bad == n ? "\nnothing would be left to run"
				 : "\nleave such pairs out with \"matrix\": {\"impossible\": \"drop\"} "
				   "(docs/plan-format.md)");
		ret = -1;
		goto out;
	}
	for (size_t i = 0; i < lines.nr; i++) {
		struct strbuf l = STRBUF_INIT;
		strbuf_addf(&l, "note: left out (matrix.impossible \"drop\"): %s", lines.v[i]);
		strvec_push(&p->offer_notes, l.buf);
		strbuf_release(&l);
	}
	struct strbuf l = STRBUF_INIT;
	strbuf_addf(&l, "note: %zu boot configuration%s left out as impossible, %zu left",
		    bad, bad == 1 ? "" : "s", n - bad);
	strvec_push(&p->offer_notes, l.buf);
	strbuf_release(&l);
drop:;
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		if (why_of[i])
			free_boot(&p->boots[i]);
		else
			p->boots[w++] = p->boots[i];
	}
	p->nboots = w;
out:
	free(why_of);
	strvec_clear(&lines);
	return ret;
}

const char *evidence_when_name(enum evidence_when w)
{
	return w == EVIDENCE_WORST ? "worst" : w == EVIDENCE_FLAGGED ? "flagged" : "always";
}

/* "workloads": each of a known type, its parameters resolved and checked */
/*
 * A workload's "evidence": {"trace_s", "events", "buffer_kb", "max_kb",
 * "when", "outlier_k"} -> the resolved object (new reference, defaults
 * filled in; without "when" and "outlier_k", which go to wl), or NULL with
 * a message naming PATH.evidence.KEY and what is valid.
 */
static json_t *evidence_resolve(const json_t *v, const char *path, struct plan_workload *wl,
				struct strbuf *e)
{
	static const char *const keys[] = { "trace_s", "events", "buffer_kb", "max_kb", "when",
					    "outlier_k", NULL };
	if (!json_is_object(v)) {
		strbuf_addf(e, "%s.evidence: must be an object like {\"trace_s\": 5}", path);
		return NULL;
	}
	const char *key;
	json_t *x;
	json_object_foreach((json_t *)v, key, x) {
		int known = 0;
		for (int i = 0; keys[i]; i++)
			known |= !strcmp(key, keys[i]);
		if (!known) {
			strbuf_addf(e, "%s.evidence.%s: unknown key (valid: trace_s, events, "
				    "buffer_kb, max_kb, when, outlier_k)", path, key);
			return NULL;
		}
	}
	json_t *r = json_object();
	x = json_object_get(v, "trace_s");
	if (x && (!json_is_number(x) || json_number_value(x) <= 0 ||
		  json_number_value(x) > 600)) {
		strbuf_addf(e, "%s.evidence.trace_s: must be a number of seconds in (0, 600]", path);
		goto bad;
	}
	json_object_set_new(r, "trace_s", json_real(x ? json_number_value(x) : 5));
	static const char *const def_events[] = EVIDENCE_EVENTS;
	static const char *const known_events[] = { "sched_switch", "sched_waking",
						    "sched_wakeup", "sched_wakeup_new",
						    "sched_migrate_task", NULL };
	json_t *evs = json_array();
	json_object_set_new(r, "events", evs);
	x = json_object_get(v, "events");
	if (!x) {
		for (size_t i = 0; i < sizeof(def_events) / sizeof(def_events[0]); i++)
			json_array_append_new(evs, json_string(def_events[i]));
	} else if (!json_is_array(x) || !json_array_size(x)) {
		strbuf_addf(e, "%s.evidence.events: must be a non-empty array of sched event "
			    "names (sched_switch, sched_waking, sched_wakeup, sched_wakeup_new, "
			    "sched_migrate_task)", path);
		goto bad;
	} else {
		size_t i;
		json_t *n;
		int has_switch = 0;
		json_array_foreach(x, i, n) {
			const char *s = json_string_value(n);
			int ok = 0;
			for (int j = 0; s && known_events[j]; j++)
				ok |= !strcmp(s, known_events[j]);
			if (!ok) {
				strbuf_addf(e, "%s.evidence.events[%zu]: unknown event (valid: "
					    "sched_switch, sched_waking, sched_wakeup, "
					    "sched_wakeup_new, sched_migrate_task)", path, i);
				goto bad;
			}
			has_switch |= !strcmp(s, "sched_switch");
			json_array_append_new(evs, json_string(s));
		}
		if (!has_switch) {
			strbuf_addf(e, "%s.evidence.events: must include sched_switch (every "
				    "summary figure needs it)", path);
			goto bad;
		}
	}
	static const struct { const char *key; long long def, lo, hi; } ints[] = {
		{ "buffer_kb", 8192, 64, 1 << 20 },    /* per CPU, kernel buffer_size_kb */
		{ "max_kb", 16384, 16, 16384 },        /* the text kept with the run */
	};
	for (size_t i = 0; i < 2; i++) {
		x = json_object_get(v, ints[i].key);
		if (x && (!json_is_integer(x) || json_integer_value(x) < ints[i].lo ||
			  json_integer_value(x) > ints[i].hi)) {
			strbuf_addf(e, "%s.evidence.%s: must be an integer from %lld to %lld", path,
				    ints[i].key, ints[i].lo, ints[i].hi);
			goto bad;
		}
		json_object_set_new(r, ints[i].key,
				    json_integer(x ? json_integer_value(x) : ints[i].def));
	}
	/* "extra_run" is what "always" was called before the triggers */
	x = json_object_get(v, "when");
	const char *w = x ? json_string_value(x) : "always";
	if (w && (!strcmp(w, "always") || !strcmp(w, "extra_run")))
		wl->when = EVIDENCE_ALWAYS;
	else if (w && !strcmp(w, "worst"))
		wl->when = EVIDENCE_WORST;
	else if (w && !strcmp(w, "flagged"))
		wl->when = EVIDENCE_FLAGGED;
	else {
		strbuf_addf(e, "%s.evidence.when: must be \"always\" (a traced run in every "
			    "configuration), \"worst\" (the same, naming the configuration's worst "
			    "untraced run) or \"flagged\" (only where a run is an outlier or failed)",
			    path);
		goto bad;
	}
	x = json_object_get(v, "outlier_k");
	if (x && wl->when != EVIDENCE_FLAGGED) {
		strbuf_addf(e, "%s.evidence.outlier_k: only with \"when\": \"flagged\" (it sets "
			    "the outlier rule that flags a run)", path);
		goto bad;
	}
	if (x && (!json_is_number(x) || !(json_number_value(x) > 0) ||
		  json_number_value(x) > 100)) {
		strbuf_addf(e, "%s.evidence.outlier_k: must be a number in (0, 100] (a run is an "
			    "outlier beyond median + k * 1.4826 * MAD, docs/metrics.md)", path);
		goto bad;
	}
	wl->outlier_k = x ? json_number_value(x) : OUTLIER_K_DEFAULT;
	return r;
bad:
	json_decref(r);
	return NULL;
}

/* one run's estimated time within PLAN_MAX_RUN_S; past it the error names
 * the numeric keys the plan gave (what makes the run long) and the cap */
static int check_run_time(const struct plan_workload *w, const json_t *given, const char *path,
			  struct strbuf *e)
{
	double est = w->ops->estimate_s(w->params);
	if (est <= PLAN_MAX_RUN_S)
		return 0;
	strbuf_addf(e, "%s: one run of %s is estimated at %.0f s, above the cap of %d s (%d h) "
		       "on one run's time", path, w->ops->name, est, PLAN_MAX_RUN_S,
		    PLAN_MAX_RUN_S / 3600);
	int n = 0;
	for (const struct param_spec *s = w->ops->params; s && s->name; s++) {
		json_t *v = json_object_get(given, s->name);
		if ((s->type != PT_INT && s->type != PT_REAL) || !json_is_number(v))
			continue;
		strbuf_addf(e, "%s%s.%s %.15g", n++ ? ", " : ": lower ", path, s->name,
			    json_number_value(v));
	}
	return -1;
}

static int validate_workloads(struct plan *p, struct strbuf *e)
{
	json_t *wls = json_object_get(p->root, "workloads");
	if (!wls) {
		strbuf_addf(e, "workloads: missing (a non-empty array of workload objects; types: %s)",
			    workload_names());
		return -1;
	}
	if (!json_is_array(wls) || !json_array_size(wls)) {
		strbuf_addf(e, "workloads: must be a non-empty array of workload objects (types: %s)",
			    workload_names());
		return -1;
	}
	p->nwl = json_array_size(wls);
	p->wl = xcalloc(p->nwl, sizeof(*p->wl));
	size_t i;
	json_t *k;
	json_array_foreach(wls, i, k) {
		char path[64];
		snprintf(path, sizeof(path), "workloads[%zu]", i);
		const char *type = json_string_value(json_object_get(k, "type"));
		if (!json_is_object(k)) {
			strbuf_addf(e, "%s: must be an object with \"type\"", path);
			return -1;
		}
		if (!type) {
			strbuf_addf(e, "%s.type: missing (valid: %s)", path, workload_names());
			return -1;
		}
		p->wl[i].ops = workload_find(type);
		if (!p->wl[i].ops) {
			strbuf_addf(e, "%s.type: unknown workload \"%s\" (valid: %s)", path, type,
				    workload_names());
			return -1;
		}
		json_t *ev = json_object_get(k, "evidence");
		if (ev) {
			p->wl[i].evidence = evidence_resolve(ev, path, &p->wl[i], e);
			if (!p->wl[i].evidence)
				return -1;
			json_t *copy = json_copy(k);
			json_object_del(copy, "evidence");
			p->wl[i].params = params_resolve(p->wl[i].ops->params, copy, path, e);
			json_decref(copy);
		} else {
			p->wl[i].params = params_resolve(p->wl[i].ops->params, k, path, e);
		}
		if (!p->wl[i].params)
			return -1;
		if (p->wl[i].ops->check && p->wl[i].ops->check(p->wl[i].params, path, e))
			return -1;
		if (check_run_time(&p->wl[i], k, path, e))
			return -1;
	}
	return 0;
}

/* "worst" and "flagged" decide a traced run from its configuration's runs
 * stored before it, in the same boot: a target that hands every run of a
 * boot over at once (lava: batch_submit) has none of them yet */
static int check_evidence_target(const struct plan *p, struct strbuf *e)
{
	for (size_t i = 0; i < p->nwl; i++) {
		if (!p->wl[i].evidence || p->wl[i].when == EVIDENCE_ALWAYS)
			continue;
		size_t nt = p->targets ? p->ntargets : 1;
		for (size_t t = 0; t < nt; t++) {
			const json_t *to = p->targets ? json_array_get(p->targets, t) : p->target;
			const struct target_ops *ops =
				target_find(json_string_value(json_object_get(to, "type")));
			if (target_batch(ops, to)) {
				strbuf_addf(e, "workloads[%zu].evidence.when: \"%s\" is not possible on "
					    "the %s target (it runs a boot's runs in one batch, so the "
					    "runs a trigger looks at are not known before the traced run "
					    "is sent); use \"always\"", i, evidence_when_name(p->wl[i].when),
					    ops->name);
				return -1;
			}
		}
	}
	return 0;
}

/* a workload that runs only on some targets (workload_ops.targets) is
 * refused on the others, naming what they lack */
static int check_workload_targets(const struct plan *p, struct strbuf *e)
{
	for (size_t i = 0; i < p->nwl; i++) {
		const struct workload_ops *w = p->wl[i].ops;
		if (!w || !w->targets)
			continue;
		size_t nt = p->targets ? p->ntargets : 1;
		for (size_t t = 0; t < nt; t++) {
			const json_t *to = p->targets ? json_array_get(p->targets, t) : p->target;
			const char *type = json_string_value(json_object_get(to, "type"));
			if (workload_runs_on(w, type))
				continue;
			strbuf_addf(e, "workloads[%zu]: %s cannot run on the %s target yet: %s", i,
				    w->name, type ? type : "?", w->targets_why ? w->targets_why : "");
			return -1;
		}
	}
	return 0;
}

/*
 * The size of the expansion, before it is allocated: at most PLAN_MAX_BOOTS
 * boots (visits of a boot configuration) and PLAN_MAX_RUNS runs. Counted in
 * doubles (exact far beyond the limits; the product of the dimensions of a
 * 16 MiB plan overflows 64 bits).
 */
static int check_size(const struct plan *p, struct strbuf *e)
{
	double nb = (double)p->nboots, nk = (double)json_array_size(p->knobs),
	       nw = (double)p->nwl, nr = (double)p->repetitions;
	int interleaved = !strcmp(p->order, "interleaved");
	double visits = interleaved ? nb * nr : nb;
	double ntr = 0;
	for (size_t w = 0; w < p->nwl; w++)
		ntr += p->wl[w].evidence ? 1 : 0;
	double runs = nb * nk * nw * nr + nb * nk * ntr;
	if (visits > PLAN_MAX_BOOTS) {
		strbuf_addf(e, "matrix: expands to %.0f boot configurations x %.0f repetitions = "
			    "%.0f boots; the limit is %d boots (docs/plan-format.md)", nb, nr, visits,
			    PLAN_MAX_BOOTS);
		return -1;
	}
	if (runs > PLAN_MAX_RUNS) {
		strbuf_addf(e, "matrix: expands to %.0f boot configurations x %.0f knob sets x %.0f "
			    "workloads x %.0f repetitions = %.0f runs; the limit is %d runs "
			    "(docs/plan-format.md)", nb, nk, nw, nr, runs, PLAN_MAX_RUNS);
		return -1;
	}
	return 0;
}

/*
 * Keys of a kernel object that `schedlab run` writes into the plan it stores
 * (the commit a git ref resolved to, its description, the folder a variant
 * was built into): a plan file may not set them, or a made-up commit would be
 * built and stored under another ref's name and "image" would skip the
 * checks of the repository and the patches. A stored plan (run --resume, a
 * lab member, a bisection's session) is loaded with plan_load_string and
 * keeps them.
 */
static int check_internal_keys(const json_t *root, struct strbuf *e)
{
	static const char *const internal[] = { "commit", "describe", "image", NULL };
	if (json_object_get(json_object_get(root, "matrix"), "dropped")) {
		strbuf_addstr(e, "matrix.dropped: set by schedlab run in the plan it stores (the "
			      "kernel x preempt pairs left out by \"impossible\": \"drop\"), not in "
			      "a plan file; remove it");
		return -1;
	}
	const json_t *ks = json_object_get(json_object_get(root, "matrix"), "kernel");
	size_t n = json_is_array(ks) ? json_array_size(ks) : 1;
	for (size_t i = 0; i < n; i++) {
		const json_t *k = json_is_array(ks) ? json_array_get(ks, i) : ks;
		if (!json_is_object(k))
			continue;
		for (const char *const *key = internal; *key; key++)
			if (json_object_get(k, *key)) {
				strbuf_addf(e, "matrix.kernel[%zu].%s: set by schedlab run in the "
					    "plan it stores (the resolved commit, its description, "
					    "the built kernel), not in a plan file; remove it (a git "
					    "kernel is named by \"ref\", docs/kernels.md)", i, *key);
				return -1;
			}
	}
	return 0;
}

/* the whole plan, in the order the errors are reported; then the expansion.
 * `file`: a plan file the user wrote (not a stored plan) */
static int validate(struct plan *p, const char *file, int user, struct strbuf *err)
{
	struct strbuf e = STRBUF_INIT;
	json_t *top = NULL;
	int ret = -1;
	p->offers_stored = !user && json_object_get(json_object_get(p->root, "matrix"), "dropped");
	p->user_file = user;
	if (!json_is_object(p->root))
		strbuf_addstr(&e, "the plan must be a JSON object");
	else if ((top = opts_resolve(plan_options, p->root, "", NULL, 0, &e)) &&
		 !(user && check_internal_keys(p->root, &e)) && !validate_settings(p, top, &e) &&
		 !validate_targets(p, &e) && !validate_matrix(p, &e) && !validate_workloads(p, &e) &&
		 !check_until_decided(p, &e) && !check_evidence_target(p, &e) &&
		 !check_workload_targets(p, &e) && !check_schedulers(p, &e) &&
		 apply_offers(p, &e) >= 0 && !check_size(p, &e))
		ret = expand(p);
	if (!ret)
		plan_tools(p, &p->tools);
	if (ret)
		strbuf_addf(err, "%s: %s", file, e.buf);
	json_decref(top);
	strbuf_release(&e);
	return ret;
}

int plan_check_offers(struct plan *p, struct strbuf *err)
{
	struct strbuf e = STRBUF_INIT;
	int n = apply_offers(p, &e);
	if (n < 0) {
		strbuf_addf(err, "%s: %s", p->path, e.buf);
		strbuf_release(&e);
		return -1;
	}
	strbuf_release(&e);
	if (n > 0) { /* fewer boot configurations: the execution order again */
		for (size_t i = 0; i < p->nvisits; i++)
			free(p->visits[i].runs);
		free(p->visits);
		p->visits = NULL;
		p->nvisits = 0;
		expand(p);
	}
	return 0;
}

int plan_set_target(struct plan *p, json_t *tobj, struct strbuf *err)
{
	if (p->targets) {
		strbuf_addf(err, "cannot replace the %zu targets of a lab plan (\"targets\"); "
			    "name the machines in the plan", p->ntargets);
		return -1;
	}
	const struct target_ops *t;
	json_t *resolved = resolve_target(p, tobj, "target", &t, err);
	if (!resolved)
		return -1;
	json_t *old = p->target;
	const struct target_ops *old_ops = p->tops;
	p->target = resolved;
	p->tops = t;
	struct strbuf e = STRBUF_INIT;
	if (check_evidence_target(p, &e)) {
		strbuf_addf(err, "%s: %s", p->path, e.buf);
		strbuf_release(&e);
		p->target = old;
		p->tops = old_ops;
		json_decref(resolved);
		return -1;
	}
	strbuf_release(&e);
	json_decref(old);
	/* the target's kernel is the one of boots without matrix.kernel */
	return plan_check_offers(p, err);
}

const json_t *plan_lab_target(const struct plan *p, size_t index)
{
	return p->targets ? json_array_get(p->targets, index) : index ? NULL : p->target;
}

int plan_lab_member(const struct plan *lab, size_t index, const char *id, const char *label,
		    struct plan *out, struct strbuf *err)
{
	const json_t *member = plan_lab_target(lab, index);
	memset(out, 0, sizeof(*out));
	if (!member || !lab->targets) {
		strbuf_addf(err, "%s: targets[%zu]: no such member of a lab", lab->path, index);
		return -1;
	}
	json_t *root = json_deep_copy(lab->root);
	json_object_del(root, "targets");
	json_object_set_new(root, "target", json_deep_copy(member));
	json_object_set_new(root, "lab", json_pack("{s:s,s:I,s:I,s:s}", "id", id, "target",
						   (json_int_t)index, "targets",
						   (json_int_t)lab->ntargets, "label", label));
	char *text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	int r = plan_load_string(text, lab->path, out, err);
	free(text);
	return r;
}

static int load_text(const char *text, const char *name, int user, struct plan *p,
		     struct strbuf *err)
{
	memset(p, 0, sizeof(*p));
	json_error_t jerr;
	p->path = xstrdup(name);
	p->root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	if (!p->root) {
		strbuf_addf(err, "%s:%d:%d: %s", name, jerr.line, jerr.column, jerr.text);
		plan_release(p);
		return -1;
	}
	if (validate(p, name, user, err)) {
		plan_release(p); /* a failed load owns nothing (releasing again is harmless) */
		return -1;
	}
	return 0;
}

int plan_load_string(const char *text, const char *name, struct plan *p, struct strbuf *err)
{
	return load_text(text, name, 0, p, err);
}

int plan_load(const char *path, struct plan *p, struct strbuf *err)
{
	struct strbuf sb = STRBUF_INIT;
	struct stat st;
	memset(p, 0, sizeof(*p));
	/* a FIFO or a device would be waited on or read forever: only a
	 * regular file (after symlinks), opened without blocking */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		strbuf_addf(err, "%s: cannot read: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	if (!S_ISREG(st.st_mode)) {
		strbuf_addf(err, "%s: cannot read: %s (a plan is a JSON file)", path,
			    S_ISDIR(st.st_mode) ? "a folder" : S_ISFIFO(st.st_mode) ? "a FIFO"
			    : "not a regular file");
		return -1;
	}
	if (st.st_size > PLAN_MAX_BYTES) {
		strbuf_addf(err, "%s: the plan is too large (%lld bytes; the limit is %d bytes, "
			    "16 MiB)", path, (long long)st.st_size, PLAN_MAX_BYTES);
		return -1;
	}
	if (strbuf_read_file(&sb, path, PLAN_MAX_BYTES + 1)) {
		strbuf_addf(err, "%s: cannot read: %s", path, strerror(errno));
		return -1;
	}
	if (sb.len > PLAN_MAX_BYTES) {
		strbuf_addf(err, "%s: the plan is too large (more than %d bytes, 16 MiB)", path,
			    PLAN_MAX_BYTES);
		strbuf_release(&sb);
		return -1;
	}
	int r = load_text(sb.buf, path, 1, p, err);
	strbuf_release(&sb);
	return r;
}

void plan_release(struct plan *p)
{
	free(p->path);
	free(p->name);
	free(p->switch_method);
	free(p->order);
	json_decref(p->root);
	json_decref(p->target);
	json_decref(p->targets);
	json_decref(p->knobs);
	for (size_t i = 0; i < p->nboots; i++)
		free_boot(&p->boots[i]);
	free(p->boots);
	strvec_clear(&p->offer_notes);
	json_decref(p->dropped);
	for (size_t i = 0; i < p->nwl; i++) {
		json_decref(p->wl[i].params);
		json_decref(p->wl[i].evidence);
	}
	free(p->wl);
	for (size_t i = 0; i < p->nvisits; i++)
		free(p->visits[i].runs);
	free(p->visits);
	strvec_clear(&p->seq_metrics);
	strvec_clear(&p->tools);
	memset(p, 0, sizeof(*p));
}

/* the tools of ops (.tool and .also_tools) and of every load among params,
 * into tools (unsorted) */
static void workload_tools(const struct workload_ops *ops, const json_t *params,
			   struct strvec *tools, int depth)
{
	if (!ops || depth > 4)
		return;
	if (ops->tool)
		strvec_push(tools, ops->tool);
	for (const char *const *t = ops->also_tools; t && *t; t++)
		strvec_push(tools, *t);
	for (const struct param_spec *s = ops->params; s && s->name; s++) {
		const json_t *load = json_object_get(params, s->name);
		if (s->value != wl_load_value || !json_is_object(load))
			continue;
		workload_tools(workload_find(json_string_value(json_object_get(load, "type"))), load,
			       tools, depth + 1);
	}
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void plan_tools(const struct plan *p, struct strvec *out)
{
	struct strvec all = STRVEC_INIT;
	for (size_t i = 0; i < p->nwl; i++)
		workload_tools(p->wl[i].ops, p->wl[i].params, &all, 0);
	if (all.nr)
		qsort(all.v, all.nr, sizeof(*all.v), str_cmp);
	for (size_t i = 0; i < all.nr; i++)
		if (!i || strcmp(all.v[i], all.v[i - 1]))
			strvec_push(out, all.v[i]);
	strvec_clear(&all);
}

size_t plan_run_count(const struct plan *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nvisits; i++)
		n += p->visits[i].nruns;
	return n;
}

double plan_estimate_s(const struct plan *p)
{
	double t = 0;
	const char *type = json_string_value(json_object_get(p->target, "type"));
	double boot_s = !type || !strcmp(type, "local") ? 0.2 : !strcmp(type, "qemu") ? 8 : 60;
	t += boot_s * (double)p->nvisits;
	for (size_t i = 0; i < p->nvisits; i++)
		for (size_t r = 0; r < p->visits[i].nruns; r++) {
			const struct plan_workload *w = &p->wl[p->visits[i].runs[r].wl];
			t += w->ops->estimate_s(w->params) + 0.3;
			if (json_object_get(w->params, "load"))
				t += 1; /* load warm-up */
		}
	return t * plan_clock_factor(p->target);
}

double plan_clock_factor(const json_t *target)
{
	/* a virtual clock (docs/virtual-time.md): the guest's seconds are
	 * instructions; at shift 0 a busy one took about 4.3 host seconds
	 * under TCG on a quiet host, and each step of the shift halves the
	 * instructions (shift 2: 1.1, measured 1.6-2.3 on a loaded host) */
	if (!target_clock_virtual(target))
		return 1;
	int shift = (int)json_integer_value(json_object_get(target, "icount_shift"));
	double f = 4.3 / (double)(1 << (shift < 6 ? shift : 6));
	return f > 0.5 ? f : 0.5;
}
