/*
 * The target table, the default agent-backed hooks shared by all targets,
 * the small helpers they share (plan-object fields with defaults, the agent
 * binary, a boot's kernel parameters, reaping a transport child, draining
 * its stderr) and parsing of --target SPEC strings.
 */
#include "harness/util/cmdline.h"
#include "harness/targets/target.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/agent/sysinfo.h"
#include "harness/util/proc.h"

static const struct target_ops *const targets[] = {
	&local_target,
	&qemu_target,
	&ssh_target,
	&lava_target,
	NULL,
};

const struct target_ops *target_find(const char *name)
{
	for (const struct target_ops *const *t = targets; *t; t++)
		if (!strcmp((*t)->name, name))
			return *t;
	return NULL;
}

const char *target_names(void)
{
	static char buf[128];
	if (!buf[0])
		for (const struct target_ops *const *t = targets; *t; t++) {
			if (t != targets)
				strncat(buf, ", ", sizeof(buf) - strlen(buf) - 1);
			strncat(buf, (*t)->name, sizeof(buf) - strlen(buf) - 1);
		}
	return buf;
}

const struct target_ops *const *target_all(void)
{
	return targets;
}

json_t *target_conf_resolve(const struct target_ops *ops, const json_t *conf, const char *path,
			    struct strbuf *err)
{
	char *what = xstrfmt("the %s target", ops->name);
	json_t *out = opts_resolve(ops->options, conf, path, what, 1, err);
	free(what);
	return out;
}

int target_check_registry(struct strbuf *err)
{
	for (const struct target_ops *const *t = targets; *t; t++) {
		const struct target_ops *o = *t;
		if (!o->name || !o->check || !o->open || !o->boot || !o->close || !o->sysinfo ||
		    !o->exec || !o->knob_set || !o->knob_restore ||
		    !o->options || !o->doc) {
			strbuf_addf(err, "target %s: missing a required hook", o->name ? o->name : "?");
			return -1;
		}
		/* the batch hooks come together */
		int nb = !!o->batch_slots + !!o->batch_submit + !!o->batch_wait + !!o->batch_collect +
			 !!o->batch_orphan;
		if (nb && nb != 5) {
			strbuf_addf(err, "target %s: batch_slots, batch_submit, batch_wait, "
				    "batch_collect and batch_orphan come together", o->name);
			return -1;
		}
	}
	return 0;
}

void boot_info_init(struct boot_info *bi)
{
	memset(bi, 0, sizeof(*bi));
	bi->clock_shift = -1;
	strbuf_init(&bi->console, 0);
}

void boot_info_release(struct boot_info *bi)
{
	json_decref(bi->sysinfo);
	strbuf_release(&bi->console);
	memset(bi, 0, sizeof(*bi));
}

static int need_agent(struct target *t, struct strbuf *err)
{
	if (!t->agent) {
		strbuf_addstr(err, "target is not connected (no agent)");
		return -1;
	}
	return 0;
}

int target_agent_sysinfo(struct target *t, json_t **out, struct strbuf *err)
{
	if (need_agent(t, err))
		return -1;
	return agent_call(t->agent, "sysinfo", NULL, 60, out, err) ? -1 : 0;
}

int target_agent_exec(struct target *t, json_t *req, double timeout_s, json_t **out,
		      struct strbuf *err)
{
	if (need_agent(t, err)) {
		json_decref(req);
		return -1;
	}
	/* the agent enforces the run's own timeout; allow for load warm-up and
	 * the transfer of the result on top of it */
	double scale = t->wall_per_s > 1 ? t->wall_per_s : 1;
	if (t->exec_settle_s > 0)
		json_object_set_new(req, "settle_s", json_real(t->exec_settle_s));
	if (t->exec_align_s > 0)
		json_object_set_new(req, "align_s", json_real(t->exec_align_s));
	return agent_call(t->agent, "exec", req, timeout_s * scale + 60, out, err);
}

int target_agent_knob_set(struct target *t, const char *path, const char *value, json_t **out,
			  struct strbuf *err)
{
	if (need_agent(t, err))
		return -1;
	return agent_call(t->agent, "knob_set", json_pack("{s:s,s:s}", "path", path, "value", value),
			  30, out, err);
}

int target_agent_knob_restore(struct target *t, struct strbuf *err)
{
	if (need_agent(t, err))
		return -1;
	return agent_call(t->agent, "knob_restore", json_pack("{s:i}", "keep", t->knob_keep), 30, NULL,
			  err) ? -1 : 0;
}

int target_preempt_known(const char *mode)
{
	return !strcmp(mode, "none") || !strcmp(mode, "voluntary") || !strcmp(mode, "full") ||
	       !strcmp(mode, "lazy") || !strcmp(mode, "laziest");
}

const char *target_agent_binary(const struct target *t)
{
	const char *path = json_string_value(json_object_get(t->conf, "agent"));
	if (path)
		return path;
	return t->agent_path ? t->agent_path : target_default_agent_path();
}

void target_boot_params(const struct target *t, const struct boot_spec *b, struct strbuf *cl)
{
	const char *append = json_string_value(json_object_get(t->conf, "append"));
	if (b->preempt && *b->preempt)
		strbuf_addf(cl, " preempt=%s", b->preempt);
	if (append && *append)
		strbuf_addf(cl, " %s", append);
	if (b->cmdline && *b->cmdline)
		strbuf_addf(cl, " %s", b->cmdline);
}

int target_runtime_possible(int same_rest, const char *preempt, const json_t *si,
			    struct strbuf *why)
{
	if (!same_rest) {
		strbuf_addstr(why, "the kernel or its other parameters change too");
		return 0;
	}
	if (!preempt)
		return 1; /* back to the mode the kernel booted with */
	json_t *dyn = sysinfo_value(si, "preempt_dynamic");
	if (!json_is_true(dyn)) {
		const char *build = sysinfo_str(si, "preempt_build");
		strbuf_addf(why, "the running kernel is %s PREEMPT_DYNAMIC (preemption model "
			    "\"%s\")", json_is_false(dyn) ? "built without" : "not known to have",
			    build ? build : "unknown");
		return 0;
	}
	const char *cur = sysinfo_str(si, "preempt");
	if (!cur) {
		const char *e = json_string_value(json_object_get(json_object_get(si, "preempt"),
								  "error"));
		strbuf_addf(why, "/sys/kernel/debug/sched/preempt cannot be used: %s",
			    e ? e : "unknown mode");
		return 0;
	}
	json_t *modes = sysinfo_value(si, "preempt_modes");
	size_t i;
	json_t *m;
	json_array_foreach(modes, i, m)
		if (json_is_string(m) && !strcmp(json_string_value(m), preempt))
			return 1;
	strbuf_addf(why, "preempt=%s is not offered by the running kernel (it offers:", preempt);
	json_array_foreach(modes, i, m)
		strbuf_addf(why, " %s", json_is_string(m) ? json_string_value(m) : "?");
	strbuf_addch(why, ')');
	return 0;
}

int target_runtime_plan_check(const struct boot_spec *b, size_t n, const char *default_kernel,
			      struct strbuf *why)
{
	const char *k0 = n && b[0].kernel ? b[0].kernel : default_kernel;
	for (size_t i = 1; i < n; i++) {
		const char *k = b[i].kernel ? b[i].kernel : default_kernel;
		if ((k || k0) && (!k || !k0 || strcmp(k, k0))) {
			strbuf_addf(why, "boot configuration %zu has kernel %s, boot configuration 1 "
				    "%s", i + 1, k ? k : "(the target's)", k0 ? k0 : "(the target's)");
			return -1;
		}
		if (!cmdline_same_but_preempt(b[i].cmdline, b[0].cmdline)) {
			strbuf_addf(why, "boot configuration %zu has cmdline \"%s\", boot "
				    "configuration 1 \"%s\"", i + 1, b[i].cmdline ? b[i].cmdline : "",
				    b[0].cmdline ? b[0].cmdline : "");
			return -1;
		}
	}
	return 0;
}

void target_reap_within(struct child *c, double seconds)
{
	int st;
	double end = now_mono() + seconds;
	while (now_mono() < end) {
		if (waitpid(c->pid, &st, WNOHANG) == c->pid) {
			c->pid = -1;
			break;
		}
		usleep(20000);
	}
}

void target_drain_tail(int fd, struct strbuf *tail, size_t max)
{
	char buf[4096];
	ssize_t n;
	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		strbuf_add(tail, buf, (size_t)n);
		strbuf_tail(tail, max);
	}
}

int conf_choice(json_t *obj, const char *name, const char *def, const char *const *allowed,
		const char *prefix, struct strbuf *err)
{
	int ok = 0;
	if (!json_object_get(obj, name))
		json_object_set_new(obj, name, json_string(def));
	const char *s = json_string_value(json_object_get(obj, name));
	for (size_t i = 0; s && allowed[i]; i++)
		ok |= !strcmp(s, allowed[i]);
	if (ok)
		return 0;
	strbuf_addf(err, "%s%s: must be one of", prefix, name);
	for (size_t i = 0; allowed[i]; i++)
		strbuf_addf(err, "%s \"%s\"", i ? "," : "", allowed[i]);
	return -1;
}

int conf_check_keys(const json_t *obj, const char *const *valid, const char *path,
		    const char *what, struct strbuf *err)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)obj, key, v) {
		const char *const *k = valid;
		while (*k && strcmp(*k, key))
			k++;
		if (*k)
			continue;
		strbuf_addf(err, "%s%s%s: unknown key%s%s (valid: ", path, *path ? "." : "", key,
			    what ? " for " : "", what ? what : "");
		for (k = valid; *k; k++)
			strbuf_addf(err, "%s%s", k == valid ? "" : ", ", *k);
		strbuf_addch(err, ')');
		return -1;
	}
	return 0;
}

int target_batch(const struct target_ops *ops, const json_t *conf)
{
	return ops && ops->batch_submit && (!ops->batch_on || ops->batch_on(conf));
}

int target_clock_virtual(const json_t *target)
{
	const char *clock = json_string_value(json_object_get(target, "clock"));
	return clock && !strcmp(clock, "virtual");
}

json_t *target_spec_parse(const char *spec, struct strbuf *err)
{
	if (!strcmp(spec, "local"))
		return json_pack("{s:s}", "type", "local");
	if (spec[0] == '{') {
		/* a plan's "target" object as it is, e.g. a qemu guest with a
		 * virtual clock: {"type":"qemu","clock":"virtual"} */
		json_error_t je;
		json_t *o = json_loads(spec, JSON_REJECT_DUPLICATES, &je);
		if (!o || !json_is_object(o)) {
			if (o)
				strbuf_addf(err, "\"%s\": a target object must be a JSON object", spec);
			else
				strbuf_addf(err, "\"%s\": not a JSON object: %s at character %d", spec,
					    je.text, je.position);
			json_decref(o);
			return NULL;
		}
		if (!json_is_string(json_object_get(o, "type"))) {
			strbuf_addf(err, "\"%s\": the target object needs \"type\" (local, qemu, "
				    "ssh, lava)", spec);
			json_decref(o);
			return NULL;
		}
		return o;
	}
	if (!strncmp(spec, "qemu:", 5))
		return json_pack("{s:s,s:s}", "type", "qemu", "kernel", spec + 5);
	if (!strcmp(spec, "qemu"))
		return json_pack("{s:s}", "type", "qemu");
	if (!strncmp(spec, "ssh://", 6)) {
		const char *h = spec + 6;
		json_t *o = json_pack("{s:s}", "type", "ssh");
		const char *at = strchr(h, '@');
		if (at) {
			json_object_set_new(o, "user", json_stringn(h, (size_t)(at - h)));
			h = at + 1;
		}
		const char *colon = strrchr(h, ':');
		if (colon) {
			char *end;
			long port = strtol(colon + 1, &end, 10);
			if (*end || port <= 0 || port > 65535) {
				strbuf_addf(err, "\"%s\": the port must be a number in 1..65535", spec);
				json_decref(o);
				return NULL;
			}
			json_object_set_new(o, "port", json_integer(port));
			json_object_set_new(o, "host", json_stringn(h, (size_t)(colon - h)));
		} else {
			json_object_set_new(o, "host", json_string(h));
		}
		return o;
	}
	strbuf_addf(err, "\"%s\": unknown target spec (valid: local, qemu:KERNEL, "
		    "ssh://[user@]host[:port], or a plan's target object in JSON)", spec);
	return NULL;
}

const char *target_default_agent_path(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("SCHEDLAB_AGENT");
	if (env && *env)
		return env;
	if (!path[0]) {
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
		if (n <= 0) {
			snprintf(path, sizeof(path), "schedlab-agent");
			return path;
		}
		path[n] = '\0';
		char *slash = strrchr(path, '/');
		snprintf(slash + 1, sizeof(path) - (size_t)(slash + 1 - path), "schedlab-agent");
	}
	return path;
}
