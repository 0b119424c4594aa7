/*
 * Unit tests of harness/agent/preempt_offer.c: the preemption modes a
 * kernel offers, decided from its config by the Kconfig rules of 6.1,
 * 6.13 and 7.0, on the fixtures of tests/data/kconfig/ (6.1, 6.1-rt,
 * 6.13, 6.13-rt, a 7.0-like x86 config) and on small inline configs for the
 * corners (non-dynamic builds, an unknown version, no model at all).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/agent/preempt_offer.h"
#include "harness/util/strbuf.h"
#include "tests/unit/tap.h"

static unsigned offer_of_file(const char *name, struct preempt_offer *o)
{
	struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
	char path[256];
	snprintf(path, sizeof(path), "tests/data/kconfig/%s", name);
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

int main(void)
{
	RUN(debian_6_1_dynamic);
	RUN(rt_6_1_only_full);
	RUN(lazy_6_13);
	RUN(rt_6_13_dynamic_full_lazy);
	RUN(x86_7_0_full_lazy);
	RUN(arch_without_lazy_7_0);
	RUN(non_dynamic_builds);
	RUN(version_from_release_or_unknown);
	RUN(no_model);
	return tap_done();
}
