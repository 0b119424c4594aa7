/*
 * Unit tests of harness/agent/sysinfo.c against fake /proc, /sys and /boot trees
 * made with mkdtemp: every collected field with its source, unknown fields
 * as {"value": null, "source": "unknown", "error": ...}, the kernel config
 * lookup order, LLC groups from cache/indexN, and the pure parsers
 * (sysinfo_parse_preempt, sysinfo_config_value).
 * The sched features and /proc/schedstat come from
 * tests/data/guest-debian-6.1-snapshot.txt; the sched domains
 * (harness/agent/sched_domains.c) from tests/data/sched-domains-*.txt, a
 * sealed 4-vCPU qemu guest's debugfs files and /proc/schedstat (Debian's
 * 6.1, qemu 10.0, "topology" {"sockets": 2, "cores": 2} and {"dies": 2,
 * "cores": 2}).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/util/strbuf.h"
#include "harness/agent/sched_domains.h"
#include "harness/agent/sysinfo.h"
#include "tests/unit/tap.h"

static char base[64];   /* mkdtemp directory holding the fake roots */

#define RELEASE "6.1.0-57-amd64"

static const char *const config_text =
	"#\n# Automatically generated file; DO NOT EDIT.\n#\n"
	"CONFIG_LOCALVERSION=\"-amd64\"\n"
	"CONFIG_HZ_250=y\n"
	"CONFIG_HZ=250\n"
	"CONFIG_SCHED_MC=y\n"
	"# CONFIG_PREEMPT_NONE is not set\n"
	"CONFIG_PREEMPT_VOLUNTARY=y\n"
	"# CONFIG_PREEMPT is not set\n"
	"CONFIG_PREEMPT_BUILD=y\n"
	"CONFIG_PREEMPT_DYNAMIC=y\n"
	"CONFIG_SCHEDSTATS=y\n";
/* FNV-1a 64 of config_text without its final newline (computed separately) */
#define CONFIG_HASH "398f50e2b33d85ba"

static void mkdirs(const char *path)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	}
	mkdir(p, 0755);
	free(p);
}

static void put(const char *root, const char *rel, const char *content)
{
	char *p = xstrfmt("%s%s", root, rel);
	char *dir = xstrdup(p);
	*strrchr(dir, '/') = '\0';
	mkdirs(dir);
	free(dir);
	FILE *f = fopen(p, "w");
	if (!f) {
		printf("#   cannot create %s: %s\n", p, strerror(errno));
		exit(1);
	}
	fputs(content, f);
	fclose(f);
	free(p);
}

static char *slurp(const char *name)
{
	return testdata_slurp(name);
}

/* the text between "=== NAME\n" and the next "===" line of the snapshot */
static char *section(const char *snap, const char *name)
{
	char *hdr = xstrfmt("=== %s\n", name);
	const char *p = strstr(snap, hdr);
	char *r = xstrdup("");
	if (p) {
		free(r);
		p += strlen(hdr);
		const char *e = strstr(p, "\n===");
		r = xstrfmt("%.*s\n", (int)(e ? e - p : (long)strlen(p)), p);
	}
	free(hdr);
	return r;
}

static void put_cache(const char *root, int cpu, int idx, int level, const char *shared)
{
	char *rel = xstrfmt("/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu, idx);
	char *lv = xstrfmt("%d\n", level);
	put(root, rel, lv);
	free(rel);
	free(lv);
	rel = xstrfmt("/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu, idx);
	char *sh = xstrfmt("%s\n", shared);
	put(root, rel, sh);
	free(rel);
	free(sh);
}

/* a 2-CPU Debian guest */
static char *make_full_root(void)
{
	char *root = xstrfmt("%s/full", base);
	char *snap = slurp("guest-debian-6.1-snapshot.txt");
	char *feat = section(snap, "features"), *ss = section(snap, "schedstat-after");
	put(root, "/proc/cmdline", "BOOT_IMAGE=/boot/vmlinuz-" RELEASE " root=/dev/vda1 ro quiet\n");
	put(root, "/proc/sys/kernel/osrelease", RELEASE "\n");
	put(root, "/proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1\n");
	put(root, "/proc/sys/kernel/hostname", "vm\n");
	put(root, "/proc/sys/kernel/random/boot_id", "3f2b1c9e-6d1a-4c55-9a55-1f0e2d3c4b5a\n");
	put(root, "/proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\n"
				   "model name\t: QEMU Virtual CPU version 2.5+\nflags\t\t: fpu\n\n"
				   "processor\t: 1\nmodel name\t: QEMU Virtual CPU version 2.5+\n");
	put(root, "/proc/schedstat", ss);
	put(root, "/sys/kernel/debug/sched/preempt", "none (voluntary) full \n");
	put(root, "/sys/kernel/debug/sched/features", feat);
	put(root, "/sys/kernel/debug/sched/migration_cost_ns", "500000\n");
	put(root, "/sys/kernel/debug/sched/latency_ns", "24000000\n");
	put(root, "/sys/kernel/debug/sched/debug", "");
	char *domains = xstrfmt("%s/sys/kernel/debug/sched/domains", root);
	mkdirs(domains);   /* a directory: not a tunable */
	free(domains);
	put(root, "/boot/config-" RELEASE, config_text);
	put(root, "/sys/devices/system/cpu/online", "0-1\n");
	put(root, "/sys/devices/system/cpu/cpuidle/current_driver", "acpi_idle\n");
	put(root, "/sys/devices/system/cpu/cpuidle/current_governor", "menu\n");
	for (int cpu = 0; cpu < 2; cpu++) {
		char own[16];
		snprintf(own, sizeof(own), "%d", cpu);
		put_cache(root, cpu, 0, 1, own);
		put_cache(root, cpu, 1, 1, own);
		put_cache(root, cpu, 2, 2, own);
		put_cache(root, cpu, 3, 3, "0-1");
	}
	free(snap);
	free(feat);
	free(ss);
	return root;
}

static char *field_text(const json_t *si, const char *name)
{
	return json_dumps(json_object_get(si, name), JSON_COMPACT | JSON_SORT_KEYS);
}

static void check_field(const json_t *si, const char *name, const char *expect)
{
	char *s = field_text(si, name);
	CHECK_STR(s, expect);
	free(s);
}

TEST(collect_full_root)
{
	char *root = make_full_root();
	json_t *si = sysinfo_collect(root);
	check_field(si, "kernel_release",
		    "{\"source\":\"/proc/sys/kernel/osrelease\",\"value\":\"" RELEASE "\"}");
	check_field(si, "kernel_version", "{\"source\":\"/proc/sys/kernel/version\","
					  "\"value\":\"#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1\"}");
	check_field(si, "hostname", "{\"source\":\"/proc/sys/kernel/hostname\",\"value\":\"vm\"}");
	check_field(si, "cmdline", "{\"source\":\"/proc/cmdline\",\"value\":"
				   "\"BOOT_IMAGE=/boot/vmlinuz-" RELEASE " root=/dev/vda1 ro quiet\"}");
	check_field(si, "boot_id", "{\"source\":\"/proc/sys/kernel/random/boot_id\","
				   "\"value\":\"3f2b1c9e-6d1a-4c55-9a55-1f0e2d3c4b5a\"}");
	check_field(si, "cpus_online",
		    "{\"source\":\"/sys/devices/system/cpu/online\",\"value\":\"0-1\"}");
	check_field(si, "ncpus", "{\"source\":\"/sys/devices/system/cpu/online\",\"value\":2}");
	check_field(si, "cpu_model",
		    "{\"source\":\"/proc/cpuinfo\",\"value\":\"QEMU Virtual CPU version 2.5+\"}");
	check_field(si, "preempt",
		    "{\"source\":\"/sys/kernel/debug/sched/preempt\",\"value\":\"voluntary\"}");
	check_field(si, "preempt_modes", "{\"source\":\"/sys/kernel/debug/sched/preempt\","
					 "\"value\":[\"none\",\"voluntary\",\"full\"]}");
	check_field(si, "hz", "{\"source\":\"/boot/config-" RELEASE "\",\"value\":250}");
	check_field(si, "sched_mc", "{\"source\":\"/boot/config-" RELEASE "\",\"value\":1}");
	check_field(si, "preempt_build",
		    "{\"source\":\"/boot/config-" RELEASE "\",\"value\":\"voluntary\"}");
	check_field(si, "preempt_dynamic", "{\"source\":\"/boot/config-" RELEASE "\",\"value\":true}");
	check_field(si, "schedstats_config",
		    "{\"source\":\"/boot/config-" RELEASE "\",\"value\":true}");
	check_field(si, "config_hash",
		    "{\"source\":\"/boot/config-" RELEASE "\",\"value\":\"" CONFIG_HASH "\"}");
	check_field(si, "schedstats", "{\"source\":\"/proc/schedstat\",\"value\":true}");
	check_field(si, "schedstat_version", "{\"source\":\"/proc/schedstat\",\"value\":15}");
	check_field(si, "llc_groups", "{\"source\":\"/sys/devices/system/cpu/cpu*/cache/index*/"
				      "shared_cpu_list\",\"value\":[\"0-1\"]}");
	check_field(si, "cpuidle_driver",
		    "{\"source\":\"/sys/devices/system/cpu/cpuidle/current_driver\","
		    "\"value\":\"acpi_idle\"}");
	/* current_governor_ro is absent: the writable file is the fallback */
	check_field(si, "cpuidle_governor",
		    "{\"source\":\"/sys/devices/system/cpu/cpuidle/current_governor\","
		    "\"value\":\"menu\"}");
	/* the snapshot's 27 features, in order */
	json_t *f = sysinfo_value(si, "sched_features");
	CHECK(json_array_size(f) == 27);
	CHECK_STR(json_string_value(json_array_get(f, 0)), "GENTLE_FAIR_SLEEPERS");
	CHECK_STR(json_string_value(json_array_get(f, 10)), "TTWU_QUEUE");
	CHECK_STR(json_string_value(json_array_get(f, 26)), "BASE_SLICE");
	CHECK_STR(json_string_value(json_object_get(json_object_get(si, "sched_features"), "source")),
		  "/sys/kernel/debug/sched/features");
	/* tunables: files under debugfs sched except features, preempt, debug, domains */
	json_t *t = sysinfo_value(si, "sched_tunables");
	CHECK(json_array_size(t) == 2);
	int mc = 0, lat = 0;
	size_t i;
	json_t *e;
	json_array_foreach(t, i, e) {
		mc += !strcmp(json_string_value(e), "migration_cost_ns");
		lat += !strcmp(json_string_value(e), "latency_ns");
	}
	CHECK(mc == 1 && lat == 1);
	json_decref(si);
	free(root);
}

/* the ftrace tracers (the rtla workloads' capability): tracefs first, then
 * debugfs's tracing/; neither: unknown with the reason (no tracefs) */
TEST(tracers)
{
	char *root = make_full_root();
	json_t *si = sysinfo_collect(root);
	check_field(si, "tracers", "{\"error\":\"/sys/kernel/debug/tracing/available_tracers: "
				   "No such file or directory\",\"source\":\"unknown\",\"value\":null}");
	json_decref(si);
	put(root, "/sys/kernel/debug/tracing/available_tracers", "function nop\n");
	si = sysinfo_collect(root);
	check_field(si, "tracers", "{\"source\":\"/sys/kernel/debug/tracing/available_tracers\","
				   "\"value\":[\"function\",\"nop\"]}");
	json_decref(si);
	put(root, "/sys/kernel/tracing/available_tracers", "timerlat osnoise nop\n");
	si = sysinfo_collect(root);
	check_field(si, "tracers", "{\"source\":\"/sys/kernel/tracing/available_tracers\","
				   "\"value\":[\"timerlat\",\"osnoise\",\"nop\"]}");
	struct strbuf err = STRBUF_INIT;
	CHECK(sysinfo_check(si, &err) == 0);
	json_decref(si);
	/* an agent's reply with tracers of the wrong type is refused */
	si = json_loads("{\"tracers\": {\"value\": [1], \"source\": \"x\"}}", 0, NULL);
	CHECK(sysinfo_check(si, &err) == -1);
	CHECK_CONTAINS(err.buf, "tracers must be");
	json_decref(si);
	strbuf_release(&err);
	free(root);
}

TEST(missing_file_is_unknown_with_reason)
{
	char *root = make_full_root();
	json_t *si = sysinfo_collect(root);
	check_field(si, "cpufreq_governor",
		    "{\"error\":\"/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor: "
		    "No such file or directory\",\"source\":\"unknown\",\"value\":null}");
	CHECK(sysinfo_str(si, "cpufreq_governor") == NULL);
	CHECK(json_is_null(sysinfo_value(si, "cpufreq_governor")));
	json_decref(si);
	free(root);
}

TEST(accessors)
{
	char *root = make_full_root();
	json_t *si = sysinfo_collect(root);
	CHECK(sysinfo_int(si, "hz", -1) == 250);
	CHECK(sysinfo_int(si, "ncpus", -1) == 2);
	CHECK(sysinfo_int(si, "preempt_dynamic", -1) == 1);   /* booleans as 0/1 */
	CHECK(sysinfo_int(si, "cpufreq_governor", -7) == -7); /* unknown: the default */
	CHECK(sysinfo_int(si, "no_such_field", -9) == -9);
	CHECK(sysinfo_int(si, "hostname", -3) == -3);         /* a string is no integer */
	CHECK_STR(sysinfo_str(si, "preempt"), "voluntary");
	CHECK(sysinfo_str(si, "hz") == NULL);
	CHECK(sysinfo_str(si, "no_such_field") == NULL);
	CHECK(sysinfo_value(si, "no_such_field") == NULL);
	json_decref(si);
	free(root);
}

/* almost nothing there: every field says why it is unknown */
/* sched_ext: the state file's word, and the schedulers of SCHEDLAB_SCX_DIR
 * (names scx_*, sorted); without sched_ext the state is unknown */
TEST(sched_ext_fields)
{
	char *root = xstrfmt("%s/scx", base);
	put(root, "/sys/kernel/sched_ext/state", "disabled\n");
	put(root, "/dir/scx_simple", "x");
	put(root, "/dir/scx_central", "x");
	put(root, "/dir/lib/libc.so.6", "x");
	char *dir = xstrfmt("%s/dir", root);
	setenv("SCHEDLAB_SCX_DIR", dir, 1);
	json_t *si = sysinfo_collect(root);
	check_field(si, "sched_ext",
		    "{\"source\":\"/sys/kernel/sched_ext/state\",\"value\":\"disabled\"}");
	char *want = xstrfmt("{\"source\":\"%s\",\"value\":[\"scx_central\",\"scx_simple\"]}", dir);
	check_field(si, "sched_ext_schedulers", want);
	struct strbuf err = STRBUF_INIT;
	CHECK(sysinfo_check(si, &err) == 0);
	strbuf_release(&err);
	json_decref(si);
	free(want);
	unsetenv("SCHEDLAB_SCX_DIR");
	char *bare = xstrfmt("%s/noscx", base);
	put(bare, "/proc/cmdline", "quiet\n");
	si = sysinfo_collect(bare);
	check_field(si, "sched_ext",
		    "{\"error\":\"/sys/kernel/sched_ext/state: No such file or directory\","
		    "\"source\":\"unknown\",\"value\":null}");
	json_decref(si);
	free(bare);
	free(dir);
	free(root);
}

TEST(collect_empty_root)
{
	char *root = xstrfmt("%s/empty", base);
	put(root, "/proc/cmdline", "quiet\n");
	json_t *si = sysinfo_collect(root);
	check_field(si, "cmdline", "{\"source\":\"/proc/cmdline\",\"value\":\"quiet\"}");
	check_field(si, "kernel_release",
		    "{\"error\":\"/proc/sys/kernel/osrelease: No such file or directory\","
		    "\"source\":\"unknown\",\"value\":null}");
	check_field(si, "ncpus", "{\"error\":\"cpus_online unknown\",\"source\":\"unknown\","
				 "\"value\":null}");
	check_field(si, "preempt",
		    "{\"error\":\"/sys/kernel/debug/sched/preempt: No such file or directory\","
		    "\"source\":\"unknown\",\"value\":null}");
	check_field(si, "hz", "{\"error\":\"no kernel config: /proc/config.gz, /boot/config- and "
			      "/lib/modules//config are absent or unreadable\",\"source\":\"unknown\","
			      "\"value\":null}");
	check_field(si, "config_hash", "{\"error\":\"no kernel config: /proc/config.gz, "
				       "/boot/config- and /lib/modules//config are absent or "
				       "unreadable\",\"source\":\"unknown\",\"value\":null}");
	/* no /proc/schedstat is a fact (schedstats off), its version is unknown */
	check_field(si, "schedstats", "{\"source\":\"/proc/schedstat\",\"value\":false}");
	check_field(si, "schedstat_version",
		    "{\"error\":\"/proc/schedstat: No such file or directory\",\"source\":\"unknown\","
		    "\"value\":null}");
	check_field(si, "sched_tunables",
		    "{\"error\":\"No such file or directory\",\"source\":\"unknown\",\"value\":null}");
	check_field(si, "cpuidle_governor",
		    "{\"error\":\"/sys/devices/system/cpu/cpuidle/current_governor: No such file or "
		    "directory\",\"source\":\"unknown\",\"value\":null}");
	json_t *llc = sysinfo_value(si, "llc_groups");
	CHECK(json_is_array(llc) && json_array_size(llc) == 0);
	/* every field is {"value", "source"} (+ "error" exactly when unknown) */
	const char *k;
	json_t *v;
	int bad = 0;
	json_object_foreach(si, k, v) {
		const char *src = json_string_value(json_object_get(v, "source"));
		int unknown = src && !strcmp(src, "unknown");
		if (!src || !json_object_get(v, "value") ||
		    (unknown != (json_object_get(v, "error") != NULL)) ||
		    (unknown && !json_is_null(json_object_get(v, "value"))))
			bad++;
	}
	CHECK(bad == 0);
	json_decref(si);
	free(root);
}

TEST(config_lookup_order_and_unparsable_preempt)
{
	char *root = xstrfmt("%s/modules", base);
	put(root, "/proc/sys/kernel/osrelease", "6.12.0\n");
	/* no /boot/config-6.12.0: /lib/modules/<release>/config is next */
	put(root, "/lib/modules/6.12.0/config", "CONFIG_HZ=1000\n# CONFIG_SCHED_MC is not set\n"
						"CONFIG_PREEMPT=y\nCONFIG_PREEMPT_VOLUNTARY=y\n");
	put(root, "/boot/config", "CONFIG_HZ=100\n");
	put(root, "/sys/kernel/debug/sched/preempt", "full\n");
	json_t *si = sysinfo_collect(root);
	check_field(si, "hz", "{\"source\":\"/lib/modules/6.12.0/config\",\"value\":1000}");
	check_field(si, "sched_mc", "{\"source\":\"/lib/modules/6.12.0/config\",\"value\":0}");
	/* PREEMPT is checked before PREEMPT_VOLUNTARY */
	check_field(si, "preempt_build",
		    "{\"source\":\"/lib/modules/6.12.0/config\",\"value\":\"full\"}");
	check_field(si, "preempt_dynamic",
		    "{\"source\":\"/lib/modules/6.12.0/config\",\"value\":false}");
	check_field(si, "schedstats_config",
		    "{\"source\":\"/lib/modules/6.12.0/config\",\"value\":false}");
	check_field(si, "preempt", "{\"error\":\"/sys/kernel/debug/sched/preempt: no (current) "
				   "mode\",\"source\":\"unknown\",\"value\":null}");
	json_decref(si);
	/* without it, the release-less /boot/config */
	char *p = xstrfmt("%s/lib/modules/6.12.0/config", root);
	unlink(p);
	free(p);
	si = sysinfo_collect(root);
	check_field(si, "hz", "{\"source\":\"/boot/config\",\"value\":100}");
	check_field(si, "preempt_build", "{\"source\":\"/boot/config\",\"value\":\"unknown\"}");
	json_decref(si);
	free(root);
}

TEST(llc_groups_sorted_distinct)
{
	char *root = xstrfmt("%s/llc", base);
	/* two L3 domains plus one far away: 0-1, 2-3, 10-11 */
	static const struct { int cpu; const char *l3; } c[] = {
		{ 11, "10-11" }, { 3, "2-3" }, { 0, "0-1" }, { 10, "10-11" }, { 1, "0-1" }, { 2, "2-3" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char own[16];
		snprintf(own, sizeof(own), "%d", c[i].cpu);
		put_cache(root, c[i].cpu, 0, 1, own);
		put_cache(root, c[i].cpu, 1, 2, own);
		put_cache(root, c[i].cpu, 2, 3, c[i].l3);
	}
	put(root, "/sys/devices/system/cpu/online", "0-3,10-11\n");
	put(root, "/sys/devices/system/cpu/cpufreq/policy0/scaling_governor", "x\n"); /* not a cpuN */
	json_t *g = sysinfo_llc_groups(root);
	char *s = json_dumps(g, JSON_COMPACT);
	CHECK_STR(s, "[\"0-1\",\"2-3\",\"10-11\"]");
	free(s);
	json_decref(g);
	json_t *si = sysinfo_collect(root);
	CHECK(sysinfo_int(si, "ncpus", -1) == 6);
	json_decref(si);
	/* no cpu directory at all: an empty list */
	g = sysinfo_llc_groups("/nonexistent-root");
	CHECK(json_is_array(g) && json_array_size(g) == 0);
	json_decref(g);
	free(root);
}

TEST(parse_preempt)
{
	char cur[32];
	json_t *m = NULL;
	CHECK(sysinfo_parse_preempt("none (voluntary) full ", cur, sizeof(cur), &m) == 0);
	CHECK_STR(cur, "voluntary");
	char *s = json_dumps(m, JSON_COMPACT);
	CHECK_STR(s, "[\"none\",\"voluntary\",\"full\"]");
	free(s);
	json_decref(m);
	CHECK(sysinfo_parse_preempt("(none) voluntary full lazy\n", cur, sizeof(cur), &m) == 0);
	CHECK_STR(cur, "none");
	CHECK(json_array_size(m) == 4);
	CHECK_STR(json_string_value(json_array_get(m, 3)), "lazy");
	json_decref(m);
	CHECK(sysinfo_parse_preempt("none voluntary (full)", cur, sizeof(cur), NULL) == 0);
	CHECK_STR(cur, "full");
	/* no current choice */
	CHECK(sysinfo_parse_preempt("none voluntary full", cur, sizeof(cur), &m) == -1);
	CHECK_STR(cur, "");
	CHECK(json_array_size(m) == 3);
	json_decref(m);
	CHECK(sysinfo_parse_preempt("", cur, sizeof(cur), &m) == -1);
	CHECK(json_array_size(m) == 0);
	json_decref(m);
	/* "()" is no mode */
	CHECK(sysinfo_parse_preempt("() full", cur, sizeof(cur), &m) == -1);
	CHECK(json_array_size(m) == 1);
	json_decref(m);
	/* a short buffer truncates, it does not overflow */
	char small[4];
	CHECK(sysinfo_parse_preempt("none (voluntary)", small, sizeof(small), NULL) == 0);
	CHECK_STR(small, "vol");
}

TEST(config_value)
{
	char v[64];
	CHECK_STR(sysinfo_config_value(config_text, "HZ", v, sizeof(v)), "250");
	CHECK_STR(sysinfo_config_value(config_text, "HZ_250", v, sizeof(v)), "y");
	CHECK_STR(sysinfo_config_value(config_text, "SCHED_MC", v, sizeof(v)), "y");
	CHECK_STR(sysinfo_config_value(config_text, "PREEMPT_DYNAMIC", v, sizeof(v)), "y");
	CHECK_STR(sysinfo_config_value(config_text, "PREEMPT_VOLUNTARY", v, sizeof(v)), "y");
	CHECK_STR(sysinfo_config_value(config_text, "PREEMPT", v, sizeof(v)), "n");
	CHECK_STR(sysinfo_config_value(config_text, "PREEMPT_NONE", v, sizeof(v)), "n");
	CHECK_STR(sysinfo_config_value(config_text, "LOCALVERSION", v, sizeof(v)), "-amd64");
	CHECK(sysinfo_config_value(config_text, "PREEMPT_B", v, sizeof(v)) == NULL); /* a prefix */
	CHECK(sysinfo_config_value(config_text, "NUMA", v, sizeof(v)) == NULL);
	CHECK(sysinfo_config_value(config_text, "H", v, sizeof(v)) == NULL);
	CHECK(sysinfo_config_value("", "HZ", v, sizeof(v)) == NULL);
	CHECK(sysinfo_config_value(NULL, "HZ", v, sizeof(v)) == NULL);
	/* the first line, and no trailing newline */
	CHECK_STR(sysinfo_config_value("CONFIG_NR_CPUS=64", "NR_CPUS", v, sizeof(v)), "64");
	/* truncated to the buffer */
	char s3[3];
	CHECK_STR(sysinfo_config_value(config_text, "LOCALVERSION", s3, sizeof(s3)), "-a");
	/* a commented line that is not "is not set" */
	CHECK(sysinfo_config_value("# CONFIG_FOO=y\n", "FOO", v, sizeof(v)) == NULL);
}

/* a fake root from a sched-domains testdata file: "=== PATH" lines, each
 * followed by that file's content, up to "=== END" */
static char *domains_root(const char *name, const char *file)
{
	char *root = xstrfmt("%s/%s", base, name);
	char *text = slurp(file);
	CHECK(text != NULL);
	for (const char *p = text ? strstr(text, "=== ") : NULL; p;) {
		const char *nl = strchr(p, '\n');
		if (!nl)
			break;
		char *path = xstrfmt("%.*s", (int)(nl - p - 4), p + 4);
		const char *body = nl + 1, *next = strstr(body, "\n=== ");
		if (strcmp(path, "END")) {
			char *content = xstrfmt("%.*s\n", (int)(next ? next - body : (long)strlen(body)),
						body);
			put(root, path, content);
			free(content);
		}
		free(path);
		p = next ? next + 1 : NULL;
	}
	free(text);
	return root;
}

static void check_domains(const char *root, int rc, const char *value, const char *source)
{
	struct strbuf out = STRBUF_INIT, why = STRBUF_INIT;
	const char *src = NULL;
	CHECK(sched_domains_read(root, &out, &src, &why) == rc);
	CHECK_STR(rc ? why.buf : out.buf, value);
	if (!rc)
		CHECK_STR(src, source);
	strbuf_release(&out);
	strbuf_release(&why);
}

/* what a guest built, read from its files: two LLCs from two sockets, one
 * from two dies (qemu64's LLC is the socket on 6.1: docs/virtual-time.md) */
TEST(sched_domains_from_a_guest)
{
	struct strbuf why = STRBUF_INIT;
	char *s = domains_root("sd-sockets", "sched-domains-debian-6.1-sockets2-cores2.txt");
	char *d = domains_root("sd-dies", "sched-domains-debian-6.1-dies2-cores2.txt");
	static const char two[] = "cpu0-1: MC{0-1}* DIE{0-3}; cpu2-3: MC{2-3}* DIE{0-3}";
	check_domains(s, 0, two, "/sys/kernel/debug/sched/domains");
	check_domains(d, 0, "cpu0-3: MC{0-3}*", "/sys/kernel/debug/sched/domains");
	CHECK(sched_domains_parse(two, &why) == 2);
	CHECK(sched_domains_parse("cpu0-3: MC{0-3}*", &why) == 1);
	CHECK_STR(why.buf, "");
	/* in sysinfo, as the agent sends it, and as the controller takes it */
	json_t *si = sysinfo_collect(s);
	check_field(si, "sched_domains", "{\"source\":\"/sys/kernel/debug/sched/domains\","
					 "\"value\":\"cpu0-1: MC{0-1}* DIE{0-3}; cpu2-3: MC{2-3}* "
					 "DIE{0-3}\"}");
	CHECK(sysinfo_check(si, &why) == 0);
	json_decref(si);
	/* without spans (no schedstat domain lines) the CPUs read the same */
	put(s, "/proc/schedstat", "version 15\ntimestamp 1\ncpu0 0 0\n");
	check_domains(s, 0, "cpu0-3: MC* DIE", "/sys/kernel/debug/sched/domains");
	/* schedstat version 17 names the domain before its mask */
	put(s, "/proc/schedstat", "version 17\ntimestamp 1\ncpu0 0 0\ndomain0 MC 3 0 0\n"
				  "domain1 PKG f 0\ncpu1 0\ndomain0 MC 3 0\ndomain1 PKG f 0\n"
				  "cpu2 0\ndomain0 MC c 0\ndomain1 PKG f 0\ncpu3 0\ndomain0 MC c 0\n"
				  "domain1 PKG f 0\n");
	check_domains(s, 0, two, "/sys/kernel/debug/sched/domains");
	/* older kernels: /proc/sys/kernel/sched_domain, flags a number there */
	char *o = xstrfmt("%s/sd-old", base);
	put(o, "/proc/sys/kernel/sched_domain/cpu0/domain0/name", "MC\n");
	put(o, "/proc/sys/kernel/sched_domain/cpu0/domain0/flags", "4655\n");
	put(o, "/proc/sys/kernel/sched_domain/cpu1/domain0/name", "MC\n");
	put(o, "/proc/schedstat", "version 15\ncpu0 1\ndomain0 3 0\ncpu1 1\ndomain0 3 0\n");
	check_domains(o, 0, "cpu0-1: MC{0-1}", "/proc/sys/kernel/sched_domain");
	/* one CPU: no domain at all */
	char *one = xstrfmt("%s/sd-one", base);
	char *dir = xstrfmt("%s/sys/kernel/debug/sched/domains/cpu0", one);
	mkdirs(dir);
	check_domains(one, 0, "cpu0: none", "/sys/kernel/debug/sched/domains");
	CHECK(sched_domains_parse("cpu0: none", &why) == 1);
	/* a name that is no name: unknown, never stored as found */
	put(o, "/proc/sys/kernel/sched_domain/cpu1/domain0/name", "M C\n");
	check_domains(o, -1, "/proc/sys/kernel/sched_domain/cpu1/domain0/name: not a domain's "
			     "name (capitals, digits, _)", NULL);
	/* neither directory */
	check_domains(base, -1, "/sys/kernel/debug/sched/domains: No such file or directory; "
				"/proc/sys/kernel/sched_domain: absent too (debugfs not mounted, "
				"or a kernel without CONFIG_SCHED_DEBUG)", NULL);
	strbuf_release(&why);
	free(s), free(d), free(o), free(one), free(dir);
}

/* what an agent sends is parsed before it is stored: malformed and
 * oversized values are refused; schedstat masks as CPU lists */
TEST(sched_domains_malformed)
{
	static const char *const good[] = { "cpu0: none", "cpu0,4: SMT{0,4} MC{0-7}* NUMA{0-15}",
					    "cpu0-1: MC DIE", "cpu0: CLS_2{0}" };
	static const char *const bad[] = {
		"", "cpu: MC", "cpu0 MC", "cpu0: ", "cpu0: MC{}", "cpu0: MC{0-1", "cpu0: MC{1-0}",
		"cpu0: MC{0}x", "cpu0: MC;cpu1: MC", "cpu0: mc", "cpu0: Mc", "cpu0: MC; ", "cpu0: MC  DIE", "cpu0: 1MC",
		"cpu0: ABCDEFGHIJKLMNOPQ", "cpu0: MC\n", "cpu0: <b>", "cpu0: none DIE",
		"cpux: MC", "cpu0: MC{0-1}**", "CPU0: MC", " cpu0: MC",
	};
	struct strbuf why = STRBUF_INIT, l = STRBUF_INIT;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(sched_domains_parse(good[i], &why) == 1);
	CHECK_STR(why.buf, "");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strbuf_reset(&why);
		if (sched_domains_parse(bad[i], &why) != -1)
			printf("#   accepted: \"%s\"\n", bad[i]);
		CHECK(why.len > 0);
	}
	strbuf_reset(&why);
	CHECK(sched_domains_parse("cpu0: MC  DIE", &why) == -1);
	CHECK_STR(why.buf, "not \"cpuLIST: NAME{LIST} ...; ...\" (at byte 9)");
	/* longer than SCHED_DOMAINS_MAX, even when well formed */
	struct strbuf big = STRBUF_INIT;
	for (int c = 0; big.len <= SCHED_DOMAINS_MAX; c++)
		strbuf_addf(&big, "%scpu%d: MC{%d}", c ? "; " : "", c, c);
	strbuf_reset(&why);
	CHECK(sched_domains_parse(big.buf, &why) == -1);
	CHECK_CONTAINS(why.buf, "more than 8192");
	/* in an agent's sysinfo reply */
	json_t *si = json_pack("{s:{s:s,s:s}}", "sched_domains", "value", "cpu0: MC{0-1",
			       "source", "x");
	strbuf_reset(&why);
	CHECK(sysinfo_check(si, &why) == -1);
	CHECK_CONTAINS(why.buf, "agent sysinfo: untrusted reply: sched_domains: not ");
	json_decref(si);
	/* masks */
	static const char *const masks[][2] = { { "3", "0-1" }, { "f", "0-3" }, { "c", "2-3" },
						{ "5", "0,2" }, { "ff,00000001", "0,32-39" },
						{ "0", "" }, { "A", "1,3" } };
	for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		CHECK(sched_domains_mask_list(masks[i][0], &l) == 0);
		CHECK_STR(l.buf, masks[i][1]);
	}
	CHECK(sched_domains_mask_list("xyz", &l) == -1);
	CHECK(sched_domains_mask_list(",", &l) == -1);
	CHECK(sched_domains_mask_list("1,", &l) == -1);
	CHECK(sched_domains_mask_list("", &l) == -1);
	strbuf_release(&big);
	strbuf_release(&why);
	strbuf_release(&l);
}

int main(void)
{
	snprintf(base, sizeof(base), "/tmp/sl-test-sysinfo-XXXXXX");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(collect_full_root);
	RUN(tracers);
	RUN(missing_file_is_unknown_with_reason);
	RUN(accessors);
	RUN(collect_empty_root);
	RUN(sched_ext_fields);
	RUN(config_lookup_order_and_unparsable_preempt);
	RUN(llc_groups_sorted_distinct);
	RUN(parse_preempt);
	RUN(config_value);
	RUN(sched_domains_from_a_guest);
	RUN(sched_domains_malformed);
	char *cmd = xstrfmt("rm -rf '%s'", base);
	if (system(cmd))
		printf("# cleanup of %s failed\n", base);
	free(cmd);
	return tap_done();
}
