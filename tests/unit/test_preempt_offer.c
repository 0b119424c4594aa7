/*
 * Unit tests of harness/agent/preempt_offer.c: the preemption modes a
 * kernel offers, decided from its config by the Kconfig rules of 6.1,
 * 6.13 and 7.0, on the fixtures of tests/data/kconfig/ (6.1, 6.1-rt,
 * 6.13, 6.13-rt, a 7.0-like x86 config; 6.12 and 6.12-rt are the real
 * /boot/config-* of Debian's linux-image-6.12.118+deb12-amd64 and -rt-amd64) and on small inline configs for the
 * corners (non-dynamic builds, an unknown version, no model at all).
 * And the effective model of a booted kernel (preempt_effective_*): the
 * exact /sys/kernel/debug/sched/preempt texts of 6.1, 6.13 and 7.0, RT or
 * not, parsed as the agent parses them (sysinfo_parse_preempt), and a whole
 * sysinfo_collect of a fake root (its debugfs file, uname -v and config)
 * for an RT kernel in lazy: stored as rt-lazy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/agent/preempt_offer.h"
#include "harness/agent/sysinfo.h"
#include "harness/util/strbuf.h"
#include "tests/unit/tap.h"

static unsigned offer_of_file(const char *name, struct preempt_offer *o)
{
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
	char path[4096];
	snprintf(path, sizeof(path), "%s/kconfig/%s", testdata_dir(), name);
	if (strbuf_read_file(&sb, path, 1 << 20)) {
		printf("#   cannot read %s\n", path);
		tap_cur_failed = 1;
		return 0;
	}
	int rc = preempt_offer_decide(sb.buf, NULL, o, &why);
	CHECK(rc == 0);
	strbuf_release(&sb);
	strbuf_release(&why);
	return o->modes;
}

static char *describe(const struct preempt_offer *o)
{
	struct strbuf sb = STRBUF_INIT;
	preempt_offer_describe(o, &sb);
	return strbuf_detach(&sb, NULL);
}

TEST(debian_6_1_dynamic)
{
	struct preempt_offer o;
	CHECK(offer_of_file("6.1.config", &o) == (PM_NONE | PM_VOLUNTARY | PM_FULL));
	CHECK(o.dynamic && !o.rt && !o.lazy_arch && o.built == PM_VOLUNTARY);
	CHECK(o.major == 6 && o.minor == 1);
	CHECK(!preempt_offer_has(&o, "lazy"));
	char *d = describe(&o);
	CHECK_STR(d, "none, voluntary, full (PREEMPT_DYNAMIC, built voluntary; Linux 6.1)");
	free(d);
}

TEST(rt_6_1_only_full)
{
	struct preempt_offer o;
	CHECK(offer_of_file("6.1-rt.config", &o) == PM_FULL);
	CHECK(o.rt && !o.dynamic);
	CHECK(!preempt_offer_has(&o, "none") && !preempt_offer_has(&o, "voluntary"));
	CHECK(preempt_offer_has(&o, "full"));
	char *d = describe(&o);
	CHECK_STR(d, "full (PREEMPT_RT, no PREEMPT_DYNAMIC: only its built model, full; "
		     "Linux 6.1)");
	free(d);
}

TEST(lazy_6_13)
{
	struct preempt_offer o;
	CHECK(offer_of_file("6.13.config", &o) == (PM_NONE | PM_VOLUNTARY | PM_FULL | PM_LAZY));
	CHECK(o.built == PM_VOLUNTARY && o.major == 6 && o.minor == 13);
	CHECK(preempt_offer_has(&o, "lazy"));
}

TEST(rt_6_13_dynamic_full_lazy)
{
	struct preempt_offer o;
	CHECK(offer_of_file("6.13-rt.config", &o) == (PM_FULL | PM_LAZY));
	CHECK(o.rt && o.dynamic && o.built == PM_FULL);
}

/* Debian's 6.12 (bookworm-security): PREEMPT_DYNAMIC, built voluntary,
 * no lazy model (no ARCH_HAS_PREEMPT_LAZY: lazy came in 6.13) */
TEST(debian_6_12_dynamic)
{
	struct preempt_offer o;
	CHECK(offer_of_file("6.12.config", &o) == (PM_NONE | PM_VOLUNTARY | PM_FULL));
	CHECK(o.dynamic && !o.rt && !o.lazy_arch && !o.laziest && o.built == PM_VOLUNTARY);
	CHECK(o.major == 6 && o.minor == 12);
	CHECK(!preempt_offer_has(&o, "lazy") && !preempt_offer_has(&o, "laziest"));
	char *d = describe(&o);
	CHECK_STR(d, "none, voluntary, full (PREEMPT_DYNAMIC, built voluntary; Linux 6.12)");
	free(d);
}

/* Debian's 6.12 RT: PREEMPT_RT with PREEMPT_DYNAMIC and the RT patch set's
 * lazy models backported (ARCH_HAS_PREEMPT_LAZY, PREEMPT_LAZY=y, "#
 * CONFIG_PREEMPT_LAZIEST is not set"): full, lazy and laziest, built lazy,
 * which is what a boot without preempt= runs */
TEST(debian_6_12_rt_full_lazy_laziest)
{
	struct preempt_offer o;
	CHECK(offer_of_file("6.12-rt.config", &o) == (PM_FULL | PM_LAZY | PM_LAZIEST));
	CHECK(o.rt && o.dynamic && o.lazy_arch && o.laziest && o.built == PM_LAZY);
	CHECK(preempt_offer_has(&o, "laziest") && !preempt_offer_has(&o, "voluntary"));
	char *d = describe(&o);
	CHECK_STR(d, "full, lazy, laziest (PREEMPT_RT, PREEMPT_DYNAMIC, built lazy; Linux 6.12)");
	free(d);
	/* built laziest, and laziest without the lazy architecture support */
	struct strbuf why = STRBUF_INIT;
	CHECK(!preempt_offer_decide("CONFIG_ARCH_HAS_PREEMPT_LAZY=y\nCONFIG_PREEMPT_LAZIEST=y\n"
				    "CONFIG_PREEMPT_RT=y\n", "6.12.0", &o, &why));
	CHECK(o.built == PM_LAZIEST && o.modes == PM_LAZIEST);
	CHECK(!preempt_offer_decide("# CONFIG_PREEMPT_LAZIEST is not set\nCONFIG_PREEMPT=y\n"
				    "CONFIG_PREEMPT_DYNAMIC=y\n", "6.12.0", &o, &why));
	CHECK(o.modes == (PM_NONE | PM_VOLUNTARY | PM_FULL));
	CHECK(preempt_mode_bit("laziest") == PM_LAZIEST);
	strbuf_release(&why);
}

TEST(x86_7_0_full_lazy)
{
	struct preempt_offer o;
	CHECK(offer_of_file("7.0.config", &o) == (PM_FULL | PM_LAZY));
	CHECK(o.built == PM_LAZY && o.major == 7);
	CHECK(!preempt_offer_has(&o, "voluntary") && !preempt_offer_has(&o, "none"));
	char *d = describe(&o);
	CHECK_STR(d, "full, lazy (PREEMPT_DYNAMIC, built lazy; Linux 7.0)");
	free(d);
}

/* 7.0 on an architecture with preemption but no lazy: voluntary stays, none goes */
TEST(arch_without_lazy_7_0)
{
	struct preempt_offer o;
	struct strbuf why = STRBUF_INIT;
	CHECK(!preempt_offer_decide("# Linux/foo 7.0.0 Kernel Configuration\n"
				    "CONFIG_PREEMPT_VOLUNTARY=y\nCONFIG_PREEMPT_DYNAMIC=y\n",
				    NULL, &o, &why));
	CHECK(o.modes == (PM_VOLUNTARY | PM_FULL));
	strbuf_release(&why);
}

/* a build without PREEMPT_DYNAMIC offers its built model only */
TEST(non_dynamic_builds)
{
	static const struct { const char *cfg; unsigned built; } cases[] = {
		{ "CONFIG_PREEMPT_NONE=y\n", PM_NONE },
		{ "CONFIG_PREEMPT_VOLUNTARY=y\n# CONFIG_PREEMPT_DYNAMIC is not set\n", PM_VOLUNTARY },
		{ "CONFIG_PREEMPT=y\n", PM_FULL },
		{ "CONFIG_PREEMPT_LAZY=y\nCONFIG_ARCH_HAS_PREEMPT_LAZY=y\n", PM_LAZY },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct preempt_offer o;
		struct strbuf why = STRBUF_INIT;
		CHECK(!preempt_offer_decide(cases[i].cfg, "6.13.0", &o, &why));
		CHECK(o.modes == cases[i].built && o.built == cases[i].built && !o.dynamic);
		strbuf_release(&why);
	}
}

/* the version from the release when the header has none; unknown: no 7.0 rule */
TEST(version_from_release_or_unknown)
{
	static const char cfg[] = "CONFIG_ARCH_HAS_PREEMPT_LAZY=y\nCONFIG_PREEMPT_VOLUNTARY=y\n"
				  "CONFIG_PREEMPT_DYNAMIC=y\n";
	struct preempt_offer o;
	struct strbuf why = STRBUF_INIT;
	CHECK(!preempt_offer_decide(cfg, "7.0.0-rc1-amd64", &o, &why));
	CHECK(o.major == 7 && o.modes == (PM_FULL | PM_LAZY));
	CHECK(!preempt_offer_decide(cfg, NULL, &o, &why));
	CHECK(o.major == 0 && o.modes == (PM_NONE | PM_VOLUNTARY | PM_FULL | PM_LAZY));
	char *d = describe(&o);
	CHECK_CONTAINS(d, "version unknown");
	free(d);
	strbuf_release(&why);
}

TEST(no_model)
{
	struct preempt_offer o;
	struct strbuf why = STRBUF_INIT;
	CHECK(preempt_offer_decide("CONFIG_HZ=250\n", NULL, &o, &why) == -1);
	CHECK_CONTAINS(why.buf, "no preemption model");
	CHECK(preempt_mode_bit("lazy") == PM_LAZY && preempt_mode_bit("rt") == 0);
	strbuf_release(&why);
}

/* the effective model of a kernel whose preempt file reads `text` (NULL:
 * none), "MODE MODEL" or "MODE -" */
static char *effective(const char *text, const char *built, int dynamic, int rt)
{
	char cur[32] = "";
	if (text) {
		json_t *modes = NULL;
		CHECK(sysinfo_parse_preempt(text, cur, sizeof(cur), &modes) == 0);
		json_decref(modes);
	}
	struct preempt_effective e;
	preempt_effective_of(text ? cur : NULL, built, dynamic, rt, &e);
	return xstrfmt("%s %s", e.mode ? e.mode : "-", e.model ? e.model : "-");
}

#define EFF(text, built, dyn, rt, want)                              \
	do {                                                         \
		char *got_ = effective(text, built, dyn, rt);        \
		CHECK_STR(got_, want);                               \
		free(got_);                                          \
	} while (0)

/* the texts sched_dynamic_show() prints (kernel/sched/debug.c, 6.13 and
 * 7.0: each mode and a space, the current one in parentheses, none and
 * voluntary skipped on RT and, from 7.0, with ARCH_HAS_PREEMPT_LAZY) */
TEST(effective_from_the_preempt_file)
{
	/* 6.1 (Debian, dynamic, voluntary by default) */
	EFF("none (voluntary) full \n", "voluntary", 1, 0, "voluntary voluntary");
	/* 6.13 x86, booted preempt=lazy or switched at run time */
	EFF("none voluntary full (lazy) \n", "full", 1, 0, "lazy lazy");
	EFF("none voluntary (full) lazy \n", "full", 1, 0, "full full");
	/* 6.13 RT with PREEMPT_DYNAMIC: full and lazy are the RT models */
	EFF("(full) lazy \n", "rt", 1, 1, "full rt");
	EFF("full (lazy) \n", "rt", 1, 1, "lazy rt-lazy");
	/* 7.0 x86, not RT: the same text, lazy its default */
	EFF("full (lazy) \n", "lazy", 1, 0, "lazy lazy");
	EFF("(full) lazy \n", "lazy", 1, 0, "full full");
	/* Debian's 6.12 RT (the RT patch set's laziest): booted without
	 * preempt= it runs lazy; switched to laziest or full */
	EFF("full (lazy) laziest \n", "rt", 1, 1, "lazy rt-lazy");
	EFF("full lazy (laziest) \n", "rt", 1, 1, "laziest rt-laziest");
	EFF("(full) lazy laziest \n", "rt", 1, 1, "full rt");
	/* a mode this code does not know is not taken for one it knows */
	EFF("full lazy (lazier) \n", "lazy", 1, 0, "- -");
}

TEST(effective_without_a_preempt_file)
{
	/* Debian's 6.1 RT kernel: no PREEMPT_DYNAMIC, no file: its built model */
	EFF(NULL, "rt", 0, 1, "full rt");
	/* non-dynamic builds of each model */
	EFF(NULL, "none", 0, 0, "none none");
	EFF(NULL, "lazy", 0, 0, "lazy lazy");
	EFF(NULL, "lazy", 0, 1, "lazy rt-lazy");
	/* a dynamic kernel whose file could not be read, or nothing known */
	EFF(NULL, "full", 1, 0, "- -");
	EFF(NULL, "unknown", 0, 0, "- -");
	EFF(NULL, "rt", -1, 1, "- -");
	CHECK_STR(preempt_model_mode("rt"), "full");
	CHECK_STR(preempt_model_mode("rt-lazy"), "lazy");
	CHECK_STR(preempt_model_mode("rt-laziest"), "laziest");
	CHECK_STR(preempt_model_mode("lazy"), "lazy");
	CHECK(preempt_model_mode(NULL) == NULL);
}

static void put_file(const char *root, const char *rel, const char *text)
{
	char *path = xstrfmt("%s%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	free(path);
}

/* what the agent reports of a fake 6.13 RT kernel booted preempt=lazy: the
 * debugfs file, uname -v and the config (the fixture) read below a root */
static json_t *fake_rt_root(char *base, const char *version, int with_config)
{
	CHECK(mkdtemp(base) != NULL);
	put_file(base, "/proc/sys/kernel/osrelease", "6.13.0-rt\n");
	put_file(base, "/proc/sys/kernel/version", version);
	put_file(base, "/proc/cmdline", "console=ttyS0 preempt=lazy\n");
	put_file(base, "/sys/kernel/debug/sched/preempt", "full (lazy) \n");
	if (with_config) {
		struct strbuf cfg = STRBUF_INIT;
		char path[4096];
		snprintf(path, sizeof(path), "%s/kconfig/6.13-rt.config", testdata_dir());
		CHECK(strbuf_read_file(&cfg, path, 1 << 20) == 0);
		put_file(base, "/boot/config-6.13.0-rt", cfg.buf);
		strbuf_release(&cfg);
	}
	return sysinfo_collect(base);
}

static void rm_root(const char *base)
{
	char *cmd = xstrfmt("rm -rf '%s'", base);
	CHECK(system(cmd) == 0);
	free(cmd);
}

TEST(effective_rt_lazy_from_a_fake_root)
{
	char base[] = "/tmp/sl-preempt-XXXXXX";
	json_t *si = fake_rt_root(base, "#1 SMP PREEMPT_RT Sun Dec  6 02:00:00 UTC 2026\n", 1);
	CHECK_STR(sysinfo_str(si, "preempt"), "lazy");
	CHECK_STR(sysinfo_str(si, "preempt_build"), "rt");
	struct preempt_effective e;
	preempt_effective_sysinfo(si, &e);
	CHECK_STR(e.mode, "lazy");
	CHECK_STR(e.model, "rt-lazy");
	json_decref(si);
	rm_root(base);

	/* no config to read: uname -v alone says PREEMPT_RT */
	char base2[] = "/tmp/sl-preempt-XXXXXX";
	si = fake_rt_root(base2, "#1 SMP PREEMPT_RT Sun Dec  6 02:00:00 UTC 2026\n", 0);
	preempt_effective_sysinfo(si, &e);
	CHECK_STR(e.model, "rt-lazy");
	json_decref(si);
	rm_root(base2);

	/* the same file on a kernel that is not RT (7.0 x86): lazy */
	char base3[] = "/tmp/sl-preempt-XXXXXX";
	si = fake_rt_root(base3, "#1 SMP PREEMPT_DYNAMIC Sun Dec  6 02:00:00 UTC 2026\n", 0);
	preempt_effective_sysinfo(si, &e);
	CHECK_STR(e.model, "lazy");
	json_decref(si);
	rm_root(base3);
}

/* a config file that is no config is refused naming why, never waited on
 * (issue 41: a FIFO, a folder and random bytes were taken for "unknown") */
TEST(of_file_refuses_what_is_no_config)
{
	char dir[] = "/tmp/sl-offer-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char *fifo = xstrfmt("%s/fifo", dir), *sub = xstrfmt("%s/sub", dir),
	     *rnd = xstrfmt("%s/rand", dir), *none = xstrfmt("%s/none", dir);
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK(mkdir(sub, 0700) == 0);
	FILE *f = fopen(rnd, "w");
	CHECK(f != NULL);
	for (int i = 0; i < 4096; i++)
		fputc((i * 131 + 7) & 0xff, f); /* bytes with NULs, no CONFIG_ line */
	fclose(f);
	struct preempt_offer o;
	struct strbuf why = STRBUF_INIT;
	CHECK(preempt_offer_of_file(none, NULL, &o, &why) == 0);
	CHECK(why.len == 0);
	CHECK(preempt_offer_of_file(fifo, NULL, &o, &why) == -1);
	CHECK_CONTAINS(why.buf, "/fifo is a FIFO, not a kernel config");
	strbuf_reset(&why);
	CHECK(preempt_offer_of_file(sub, NULL, &o, &why) == -1);
	CHECK_CONTAINS(why.buf, "/sub is a folder, not a kernel config");
	strbuf_reset(&why);
	CHECK(preempt_offer_of_file(rnd, NULL, &o, &why) == -1);
	CHECK_CONTAINS(why.buf, "/rand is not a kernel config: it is not text");
	strbuf_reset(&why);
	f = fopen(rnd, "w");
	fputs("CONFIG_HZ=250\n", f);
	fclose(f);
	CHECK(preempt_offer_of_file(rnd, NULL, &o, &why) == -1);
	CHECK_CONTAINS(why.buf, "/rand is not a kernel config: the config names no preemption model");
	strbuf_reset(&why);
	char cfg61[4096];
	snprintf(cfg61, sizeof(cfg61), "%s/kconfig/6.1.config", testdata_dir());
	CHECK(preempt_offer_of_file(cfg61, NULL, &o, &why) == 1);
	CHECK(o.modes == (PM_NONE | PM_VOLUNTARY | PM_FULL));
	unlink(fifo);
	rmdir(sub);
	unlink(rnd);
	rmdir(dir);
	free(fifo);
	free(sub);
	free(rnd);
	free(none);
	strbuf_release(&why);
}

int main(void)
{
	RUN(of_file_refuses_what_is_no_config);
	RUN(debian_6_1_dynamic);
	RUN(rt_6_1_only_full);
	RUN(lazy_6_13);
	RUN(rt_6_13_dynamic_full_lazy);
	RUN(debian_6_12_dynamic);
	RUN(debian_6_12_rt_full_lazy_laziest);
	RUN(x86_7_0_full_lazy);
	RUN(arch_without_lazy_7_0);
	RUN(non_dynamic_builds);
	RUN(version_from_release_or_unknown);
	RUN(no_model);
	RUN(effective_from_the_preempt_file);
	RUN(effective_without_a_preempt_file);
	RUN(effective_rt_lazy_from_a_fake_root);
	return tap_done();
}
