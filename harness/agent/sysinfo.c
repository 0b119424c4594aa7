/*
 * sysinfo collection on the target (see sysinfo.h). Sources, in order of
 * preference, are recorded per field:
 *   kernel release/version   uname(2)
 *   cmdline                  /proc/cmdline
 *   preempt, preempt_modes   /sys/kernel/debug/sched/preempt (debugfs; the agent
 *                            mounts it when it is not mounted)
 *   hz, sched_mc, preempt_build, schedstats_config
 *                            /proc/config.gz, /boot/config-<release>,
 *                            /lib/modules/<release>/config
 *   schedstats               /proc/schedstat (+ its version line)
 *   sched_features           /sys/kernel/debug/sched/features
 *   sched_tunables           entries of /sys/kernel/debug/sched/
 *   cpu_model                /proc/cpuinfo; cpus_online /sys/devices/system/cpu/online
 *   llc_groups               /sys/devices/system/cpu/cpuN/cache/indexM/shared_cpu_list
 *   sched_domains            /sys/kernel/debug/sched/domains/ (else /proc/sys/kernel/
 *                            sched_domain/) with /proc/schedstat's spans: one string,
 *                            "cpu0-1: MC{0-1}* DIE{0-3}; ..." (sched_domains.h)
 *   cpufreq_governor         .../cpu0/cpufreq/scaling_governor
 *   cpuidle_driver/governor  /sys/devices/system/cpu/cpuidle/
 *   boot_id                  /proc/sys/kernel/random/boot_id
 *   tracers                  available_tracers in /sys/kernel/tracing, else in
 *                            /sys/kernel/debug/tracing (debugfs mounts tracefs there)
 * sysinfo_collect reads them in that spirit one group at a time
 * (collect_uname, collect_files, collect_cpu_model, collect_preempt,
 * collect_config, collect_schedstats, collect_features, collect_tunables,
 * then the LLC groups), so the field order of the object stays fixed.
 */
#include "harness/agent/sysinfo.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "harness/agent/sched_domains.h"
#include "harness/agent/scx.h"
#include "harness/util/proc.h"
#include "harness/util/cpulist.h"

static void set_field(json_t *si, const char *name, json_t *value, const char *source)
{
	json_object_set_new(si, name, json_pack("{s:o,s:s}", "value", value ? value : json_null(),
						"source", source));
}

static void set_unknown(json_t *si, const char *name, const char *why)
{
	json_object_set_new(si, name, json_pack("{s:n,s:s,s:s}", "value", "source", "unknown",
						"error", why));
}

static int read_small(const char *root, const char *path, struct strbuf *out, struct strbuf *why)
{
	char *full = xstrfmt("%s%s", root, path);
	strbuf_reset(out);
	int r = strbuf_read_file(out, full, 1 << 20);
	if (r)
		strbuf_addf(why, "%s: %s", path, strerror(errno));
	else
		strbuf_trim(out);
	free(full);
	return r;
}

int sysinfo_parse_preempt(const char *text, char *cur, size_t curlen, json_t **modes)
{
	json_t *m = json_array();
	int found = 0;
	const char *p = text;
	cur[0] = '\0';
	while (*p) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		const char *s = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		size_t n = (size_t)(p - s);
		int paren = n >= 2 && s[0] == '(' && s[n - 1] == ')';
		if (paren) {
			s++;
			n -= 2;
		}
		char tok[32];
		if (n == 0 || n >= sizeof(tok))
			continue;
		memcpy(tok, s, n);
		tok[n] = '\0';
		json_array_append_new(m, json_string(tok));
		if (paren) {
			snprintf(cur, curlen, "%s", tok);
			found = 1;
		}
	}
	if (modes)
		*modes = m;
	else
		json_decref(m);
	return found ? 0 : -1;
}

const char *sysinfo_config_value(const char *config, const char *name, char *buf, size_t len)
{
	size_t nl = strlen(name);
	const char *p = config;
	while (p && *p) {
		if (!strncmp(p, "CONFIG_", 7) && !strncmp(p + 7, name, nl) && p[7 + nl] == '=') {
			const char *v = p + 8 + nl;
			size_t k = strcspn(v, "\n");
			if (k && v[0] == '"' && v[k - 1] == '"' && k >= 2) {
				v++;
				k -= 2;
			}
			if (k >= len)
				k = len - 1;
			memcpy(buf, v, k);
			buf[k] = '\0';
			return buf;
		}
		if (!strncmp(p, "# CONFIG_", 9) && !strncmp(p + 9, name, nl) &&
		    !strncmp(p + 9 + nl, " is not set", 11)) {
			snprintf(buf, len, "n");
			return buf;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

json_t *sysinfo_llc_groups(const char *root)
{
	json_t *groups = json_array();
	char *cpudir = xstrfmt("%s/sys/devices/system/cpu", root);
	DIR *d = opendir(cpudir);
	if (!d) {
		free(cpudir);
		return groups;
	}
	struct dirent *de;
	int maxlevel = -1;
	struct strvec lists = STRVEC_INIT;
	struct strbuf sb = STRBUF_INIT;
	/* two passes over cpus: find the highest cache level, then its groups */
	for (int pass = 0; pass < 2; pass++) {
		rewinddir(d);
		while ((de = readdir(d))) {
			if (strncmp(de->d_name, "cpu", 3) || !isdigit((unsigned char)de->d_name[3]))
				continue;
			for (int idx = 0; idx < 8; idx++) {
				char *p = xstrfmt("%s/%s/cache/index%d/level", cpudir, de->d_name, idx);
				strbuf_reset(&sb);
				int r = strbuf_read_file(&sb, p, 64);
				free(p);
				if (r)
					break;
				int level = atoi(sb.buf);
				if (pass == 0) {
					if (level > maxlevel)
						maxlevel = level;
					continue;
				}
				if (level != maxlevel)
					continue;
				p = xstrfmt("%s/%s/cache/index%d/shared_cpu_list", cpudir, de->d_name, idx);
				strbuf_reset(&sb);
				r = strbuf_read_file(&sb, p, 4096);
				free(p);
				if (r)
					continue;
				strbuf_trim(&sb);
				int dup = 0;
				for (size_t i = 0; i < lists.nr; i++)
					if (!strcmp(lists.v[i], sb.buf))
						dup = 1;
				if (!dup)
					strvec_push(&lists, sb.buf);
			}
		}
	}
	closedir(d);
	/* sort for a stable order */
	for (size_t i = 0; i < lists.nr; i++)
		for (size_t j = i + 1; j < lists.nr; j++)
			if (atoi(lists.v[j]) < atoi(lists.v[i])) {
				const char *t = lists.v[i];
				lists.v[i] = lists.v[j];
				lists.v[j] = t;
			}
	for (size_t i = 0; i < lists.nr; i++)
		json_array_append_new(groups, json_string(lists.v[i]));
	strvec_clear(&lists);
	strbuf_release(&sb);
	free(cpudir);
	return groups;
}

static void read_config(const char *root, const char *release, struct strbuf *cfg,
			char *source, size_t slen, struct strbuf *why)
{
	if (!*root) {
		const char *gz = "/proc/config.gz";
		if (access(gz, R_OK) == 0 && proc_which("gzip")) {
			const char *argv[] = { "gzip", "-dc", gz, NULL };
			struct strbuf e = STRBUF_INIT, perr = STRBUF_INIT;
			struct proc_result res;
			if (!proc_capture(argv, 10, cfg, &e, &res, &perr) && res.exit_code == 0 &&
			    cfg->len) {
				snprintf(source, slen, "%s", gz);
				strbuf_release(&e);
				strbuf_release(&perr);
				return;
			}
			strbuf_reset(cfg);
			strbuf_release(&e);
			strbuf_release(&perr);
		}
	}
	const char *cands[] = { "/boot/config-%s", "/lib/modules/%s/config", "/boot/config" };
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		char *p = xstrfmt(cands[i], release);
		struct strbuf w = STRBUF_INIT;
		if (!read_small(root, p, cfg, &w)) {
			snprintf(source, slen, "%s", p);
			free(p);
			strbuf_release(&w);
			return;
		}
		free(p);
		strbuf_release(&w);
	}
	strbuf_addf(why, "no kernel config: /proc/config.gz, /boot/config-%s and "
		    "/lib/modules/%s/config are absent or unreadable", release, release);
	source[0] = '\0';
}

static void ensure_debugfs(const char *root)
{
	if (*root)
		return;
	struct stat st;
	if (stat("/sys/kernel/debug/sched", &st) == 0)
		return;
	/* best effort; failure shows up as unknown fields with the reason */
	mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
}

/* a field that is the trimmed content of one file */
static void file_field(const char *root, json_t *si, const char *field, const char *path)
{
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
	if (!read_small(root, path, &sb, &why))
		set_field(si, field, json_string(sb.buf), path);
	else
		set_unknown(si, field, why.buf);
	strbuf_release(&sb);
	strbuf_release(&why);
}

/* kernel release, version, hostname (and arch): uname(2), or below a fake
 * root the /proc/sys/kernel files; the release goes to release[] */
static void collect_uname(const char *root, json_t *si, char *release, size_t rlen)
{
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
	struct utsname u;
	if (*root) {
		if (!read_small(root, "/proc/sys/kernel/osrelease", &sb, &why)) {
			snprintf(release, rlen, "%s", sb.buf);
			set_field(si, "kernel_release", json_string(sb.buf), "/proc/sys/kernel/osrelease");
		} else {
			set_unknown(si, "kernel_release", why.buf);
		}
		strbuf_release(&sb);
		strbuf_release(&why);
		file_field(root, si, "kernel_version", "/proc/sys/kernel/version");
		file_field(root, si, "hostname", "/proc/sys/kernel/hostname");
	} else if (uname(&u) == 0) {
		snprintf(release, rlen, "%s", u.release);
		set_field(si, "kernel_release", json_string(u.release), "uname");
		set_field(si, "kernel_version", json_string(u.version), "uname");
		set_field(si, "hostname", json_string(u.nodename), "uname");
		set_field(si, "arch", json_string(u.machine), "uname");
	}
}

/* the one-file fields, and ncpus counted from cpus_online */
static void collect_files(const char *root, json_t *si)
{
	file_field(root, si, "cmdline", "/proc/cmdline");
	file_field(root, si, "boot_id", "/proc/sys/kernel/random/boot_id");
	file_field(root, si, "cpus_online", "/sys/devices/system/cpu/online");
	file_field(root, si, "cpufreq_governor",
		   "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
	file_field(root, si, "cpuidle_driver", "/sys/devices/system/cpu/cpuidle/current_driver");
	file_field(root, si, "cpuidle_governor",
		   "/sys/devices/system/cpu/cpuidle/current_governor_ro");
	if (!json_string_value(sysinfo_value(si, "cpuidle_governor")))
		file_field(root, si, "cpuidle_governor",
			   "/sys/devices/system/cpu/cpuidle/current_governor");
	const char *online = sysinfo_str(si, "cpus_online");
	if (online && cpulist_count(online) > 0)
		set_field(si, "ncpus", json_integer(cpulist_count(online)),
			  "/sys/devices/system/cpu/online");
	else
		set_unknown(si, "ncpus", "cpus_online unknown");
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* sched_ext (docs/sched_ext.md): the kernel's state ("disabled" between
 * runs; unknown without sched_ext) and the schedulers the agent can start
 * (SCX_DIR, scx.h) */
static void collect_sched_ext(const char *root, json_t *si)
{
	file_field(root, si, "sched_ext", "/sys/kernel/sched_ext/state");
	const char *dir = getenv("SCHEDLAB_SCX_DIR");
	dir = dir && *dir ? dir : SCX_DIR;
	DIR *d = opendir(dir);
	if (!d) {
		set_unknown(si, "sched_ext_schedulers", "no schedulers here (" SCX_DIR ")");
		return;
	}
	struct strvec names = STRVEC_INIT;
	struct dirent *de;
	while ((de = readdir(d)))
		if (scx_name_ok(de->d_name))
			strvec_push(&names, de->d_name);
	closedir(d);
	qsort(names.v, names.nr, sizeof(*names.v), cmp_name);
	json_t *a = json_array();
	for (size_t i = 0; i < names.nr; i++)
		json_array_append_new(a, json_string(names.v[i]));
	set_field(si, "sched_ext_schedulers", a, dir);
	strvec_clear(&names);
}

static void collect_cpu_model(const char *root, json_t *si)
{
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
	if (!read_small(root, "/proc/cpuinfo", &sb, &why)) {
		const char *m = strstr(sb.buf, "model name");
		if (m && (m = strchr(m, ':'))) {
			m++;
			while (*m == ' ' || *m == '\t')
				m++;
			size_t k = strcspn(m, "\n");
			char *model = xstrfmt("%.*s", (int)k, m);
			set_field(si, "cpu_model", json_string(model), "/proc/cpuinfo");
			free(model);
		} else {
			set_unknown(si, "cpu_model", "/proc/cpuinfo has no model name");
		}
	} else {
		set_unknown(si, "cpu_model", why.buf);
	}
	strbuf_release(&sb);
	strbuf_release(&why);
}

/* the runtime preempt mode and the modes on offer */
static void collect_preempt(const char *root, json_t *si)
{
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
	if (!read_small(root, "/sys/kernel/debug/sched/preempt", &sb, &why)) {
		char cur[32];
		json_t *modes;
		if (!sysinfo_parse_preempt(sb.buf, cur, sizeof(cur), &modes)) {
			set_field(si, "preempt", json_string(cur), "/sys/kernel/debug/sched/preempt");
			set_field(si, "preempt_modes", modes, "/sys/kernel/debug/sched/preempt");
		} else {
			json_decref(modes);
			set_unknown(si, "preempt", "/sys/kernel/debug/sched/preempt: no (current) mode");
			set_unknown(si, "preempt_modes", "/sys/kernel/debug/sched/preempt: unparsable");
		}
	} else {
		set_unknown(si, "preempt", why.buf);
		set_unknown(si, "preempt_modes", why.buf);
	}
	strbuf_release(&sb);
	strbuf_release(&why);
}

/* the fields read from a kernel config text found at csrc */
static void config_fields(json_t *si, const char *cfg, const char *csrc)
{
	char v[64];
	if (sysinfo_config_value(cfg, "HZ", v, sizeof(v)))
		set_field(si, "hz", json_integer(atoll(v)), csrc);
	else
		set_unknown(si, "hz", "CONFIG_HZ not in the kernel config");
	const char *mc = sysinfo_config_value(cfg, "SCHED_MC", v, sizeof(v));
	set_field(si, "sched_mc", json_integer(mc && !strcmp(mc, "y")), csrc);
	const char *dyn = sysinfo_config_value(cfg, "PREEMPT_DYNAMIC", v, sizeof(v));
	int is_dyn = dyn && !strcmp(dyn, "y");
	const char *model = "unknown";
	static const char *const opts[][2] = {
		{ "PREEMPT_RT", "rt" }, { "PREEMPT_LAZY", "lazy" }, { "PREEMPT", "full" },
		{ "PREEMPT_VOLUNTARY", "voluntary" }, { "PREEMPT_NONE", "none" },
	};
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		const char *x = sysinfo_config_value(cfg, opts[i][0], v, sizeof(v));
		if (x && !strcmp(x, "y")) {
			model = opts[i][1];
			break;
		}
	}
	set_field(si, "preempt_build", json_string(model), csrc);
	set_field(si, "preempt_dynamic", json_boolean(is_dyn), csrc);
	const char *ss = sysinfo_config_value(cfg, "SCHEDSTATS", v, sizeof(v));
	set_field(si, "schedstats_config", json_boolean(ss && !strcmp(ss, "y")), csrc);
	/* a stable fingerprint of the config: FNV-1a over the whole file */
	unsigned long long h = 1469598103934665603ULL;
	for (const char *p = cfg; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	char hex[32];
	snprintf(hex, sizeof(hex), "%016llx", h);
	set_field(si, "config_hash", json_string(hex), csrc);
}

/* hz, sched_mc, preempt_build, ... from the kernel config, or why not */
static void collect_config(const char *root, const char *release, json_t *si)
{
	static const char *const fields[] = { "hz", "sched_mc", "preempt_build",
					      "preempt_dynamic", "schedstats_config",
					      "config_hash" };
	struct strbuf cfg = STRBUF_INIT, why = STRBUF_INIT;
	char csrc[300];
	read_config(root, release, &cfg, csrc, sizeof(csrc), &why);
	if (csrc[0])
		config_fields(si, cfg.buf, csrc);
	else
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			set_unknown(si, fields[i], why.buf);
	strbuf_release(&cfg);
	strbuf_release(&why);
}

static void collect_schedstats(const char *root, json_t *si)
{
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
	if (!read_small(root, "/proc/schedstat", &sb, &why)) {
		int ver = 0;
		sscanf(sb.buf, "version %d", &ver);
		set_field(si, "schedstats", json_true(), "/proc/schedstat");
		set_field(si, "schedstat_version", json_integer(ver), "/proc/schedstat");
	} else {
		set_field(si, "schedstats", json_false(), "/proc/schedstat");
		set_unknown(si, "schedstat_version", why.buf);
	}
	strbuf_release(&sb);
	strbuf_release(&why);
}

static void collect_features(const char *root, json_t *si)
{
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
	if (!read_small(root, "/sys/kernel/debug/sched/features", &sb, &why)) {
		json_t *f = json_array();
		char *save, *tok = strtok_r(sb.buf, " \n", &save);
		for (; tok; tok = strtok_r(NULL, " \n", &save))
			json_array_append_new(f, json_string(tok));
		set_field(si, "sched_features", f, "/sys/kernel/debug/sched/features");
	} else {
		set_unknown(si, "sched_features", why.buf);
	}
	strbuf_release(&sb);
	strbuf_release(&why);
}

/* the ftrace tracers the kernel offers (rtla needs timerlat, osnoise) */
static void collect_tracers(const char *root, json_t *si)
{
	static const char *const paths[] = { "/sys/kernel/tracing/available_tracers",
					      "/sys/kernel/debug/tracing/available_tracers" };
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
	size_t i;
	for (i = 0; i < 2; i++) {
		strbuf_reset(&why);
		if (!read_small(root, paths[i], &sb, &why))
			break;
	}
	if (i < 2) {
		json_t *t = json_array();
		char *save, *tok = strtok_r(sb.buf, " \n", &save);
		for (; tok; tok = strtok_r(NULL, " \n", &save))
			json_array_append_new(t, json_string(tok));
		set_field(si, "tracers", t, paths[i]);
	} else {
		set_unknown(si, "tracers", why.buf);
	}
	strbuf_release(&sb);
	strbuf_release(&why);
}

/* tunables available under debugfs sched */
static void collect_tunables(const char *root, json_t *si)
{
	char *sd = xstrfmt("%s/sys/kernel/debug/sched", root);
	DIR *d = opendir(sd);
	if (d) {
		json_t *t = json_array();
		struct dirent *de;
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.' || !strcmp(de->d_name, "features") ||
			    !strcmp(de->d_name, "preempt") || !strcmp(de->d_name, "debug") ||
			    !strcmp(de->d_name, "domains") || !strcmp(de->d_name, "numa_balancing"))
				continue;
			json_array_append_new(t, json_string(de->d_name));
		}
		closedir(d);
		set_field(si, "sched_tunables", t, "/sys/kernel/debug/sched/");
	} else {
		set_unknown(si, "sched_tunables", strerror(errno));
	}
	free(sd);
}

/* the sched domains the kernel built, one string (sched_domains.h) */
static void collect_domains(const char *root, json_t *si)
{
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
	const char *src = NULL;
	if (!sched_domains_read(root, &sb, &src, &why))
		set_field(si, "sched_domains", json_string(sb.buf), src);
	else
		set_unknown(si, "sched_domains", why.buf);
	strbuf_release(&sb);
	strbuf_release(&why);
}

json_t *sysinfo_collect(const char *root)
{
	json_t *si = json_object();
	char release[256] = "";
	ensure_debugfs(root);
	collect_uname(root, si, release, sizeof(release));
	collect_files(root, si);
	collect_sched_ext(root, si);
	collect_cpu_model(root, si);
	collect_preempt(root, si);
	collect_config(root, release, si);
	collect_schedstats(root, si);
	collect_features(root, si);
	collect_tunables(root, si);
	collect_tracers(root, si);
	set_field(si, "llc_groups", sysinfo_llc_groups(root),
		  "/sys/devices/system/cpu/cpu*/cache/index*/shared_cpu_list");
	collect_domains(root, si);
	return si;
}

/* what each field's value must be when an agent sends it: s string,
 * i integer, b boolean, S array of strings (null: unknown, with "error") */
static const struct {
	const char *name;
	char type;
} field_types[] = {
	{ "arch", 's' }, { "config_hash", 's' }, { "cpu_model", 's' }, { "hostname", 's' },
	{ "kernel_release", 's' }, { "kernel_version", 's' }, { "preempt", 's' },
	{ "preempt_build", 's' }, { "cmdline", 's' }, { "boot_id", 's' }, { "cpus_online", 's' },
	{ "cpufreq_governor", 's' }, { "sched_domains", 's' }, { "cpuidle_driver", 's' }, { "cpuidle_governor", 's' },
	{ "hz", 'i' }, { "ncpus", 'i' }, { "sched_mc", 'i' }, { "schedstat_version", 'i' },
	{ "preempt_dynamic", 'b' }, { "schedstats", 'b' }, { "schedstats_config", 'b' },
	{ "preempt_modes", 'S' }, { "sched_features", 'S' }, { "sched_tunables", 'S' },
	{ "llc_groups", 'S' }, { "tracers", 'S' }, { "sched_ext", 's' },
	{ "sched_ext_schedulers", 'S' },
};

int sysinfo_check(const json_t *si, struct strbuf *err)
{
	if (!json_is_object(si)) {
		strbuf_addstr(err, "agent sysinfo: untrusted reply: not an object");
		return -1;
	}
	for (size_t i = 0; i < sizeof(field_types) / sizeof(field_types[0]); i++) {
		json_t *f = json_object_get(si, field_types[i].name);
		if (!f)
			continue;
		json_t *v = json_is_object(f) ? json_object_get(f, "value") : NULL;
		int ok = json_is_object(f);
		if (ok && v && !json_is_null(v)) {
			switch (field_types[i].type) {
			case 's': ok = json_is_string(v); break;
			case 'i': ok = json_is_integer(v); break;
			case 'b': ok = json_is_boolean(v); break;
			case 'S': {
				size_t k;
				json_t *e;
				ok = json_is_array(v);
				json_array_foreach(v, k, e) if (!json_is_string(e)) ok = 0;
				break;
			}
			}
		}
		if (!ok) {
			static const char *const what[] = { ['s'] = "a string", ['i'] = "an integer",
							     ['b'] = "true or false",
							     ['S'] = "an array of strings" };
			strbuf_addf(err, "agent sysinfo: untrusted reply: %s must be "
				    "{\"value\": %s or null, \"source\": ...}", field_types[i].name,
				    what[(unsigned char)field_types[i].type]);
			return -1;
		}
	}
	/* the one field with a grammar of its own: parsed before it is kept */
	const char *sd = sysinfo_str(si, "sched_domains");
	struct strbuf why = STRBUF_INIT;
	if (sd && sched_domains_parse(sd, &why) < 0) {
		strbuf_addf(err, "agent sysinfo: untrusted reply: sched_domains: %s", why.buf);
		strbuf_release(&why);
		return -1;
	}
	strbuf_release(&why);
	return 0;
}

json_t *sysinfo_value(const json_t *si, const char *field)
{
	json_t *f = json_object_get(si, field);
	return f ? json_object_get(f, "value") : NULL;
}

const char *sysinfo_str(const json_t *si, const char *field)
{
	return json_string_value(sysinfo_value(si, field));
}

long long sysinfo_int(const json_t *si, const char *field, long long dflt)
{
	json_t *v = sysinfo_value(si, field);
	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_boolean(v))
		return json_is_true(v);
	return dflt;
}
