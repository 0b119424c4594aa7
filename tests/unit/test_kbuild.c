/*
 * Unit tests of the pure half of harness/orchestrate/kbuild.c and of variant specs in
 * plans: fragment parsing (both line forms, comments, bad lines named with
 * fragment and line), merging with conflict detection, spec validation
 * against the shipped kernels/fragments/ (unknown names listed, duplicates,
 * bases, sources, conflicting fragments such as hz100 + hz1000), labels, the
 * build script's argv, every shipped fragment and base parsing cleanly, and
 * plan integration (a variant boot carries its label until built, then the
 * image, in the boots and in the plan JSON that gets stored).
 * The build itself and its cache key (kernels/build-variant.sh) are tested
 * by tests/e2e/t0600-kernel-variants-qemu.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/orchestrate/kbuild.h"
#include "harness/orchestrate/plan.h"
#include "tests/unit/tap.h"

static json_t *parse(const char *text)
{
	json_t *o = NULL;
	struct strbuf err = STRBUF_INIT;
	if (kbuild_fragment_parse(text, "t", &o, &err))
		printf("#   unexpected: %s\n", err.buf);
	strbuf_release(&err);
	return o;
}

TEST(fragment_forms)
{
	json_t *o = parse("# a comment\n\nCONFIG_HZ_1000=y\n# CONFIG_HZ_250 is not set\n"
			  "CONFIG_HZ=1000\nCONFIG_LOCALVERSION=\"-x\"\nCONFIG_HZ=250  \n");
	CHECK(o != NULL);
	CHECK_STR(json_string_value(json_object_get(o, "CONFIG_HZ_1000")), "y");
	CHECK_STR(json_string_value(json_object_get(o, "CONFIG_HZ_250")), "n");
	CHECK_STR(json_string_value(json_object_get(o, "CONFIG_HZ")), "250"); /* later wins */
	CHECK_STR(json_string_value(json_object_get(o, "CONFIG_LOCALVERSION")), "\"-x\"");
	CHECK(json_object_size(o) == 4);
	json_decref(o);
}

TEST(fragment_bad_lines)
{
	const char *bad[] = { "HZ=1000\n", "CONFIG_HZ\n", "CONFIG_HZ=\n", "# CONFIG_HZ is set\n",
			      "CONFIG_H Z=1\n", "CONFIG_=y\n", NULL };
	for (int i = 0; bad[i]; i++) {
		struct strbuf err = STRBUF_INIT;
		json_t *o = NULL;
		CHECK(kbuild_fragment_parse(bad[i], "frag", &o, &err) == -1);
		CHECK(o == NULL);
		CHECK_CONTAINS(err.buf, "fragment frag, line 1");
		strbuf_release(&err);
	}
	struct strbuf err = STRBUF_INIT;
	json_t *o = NULL;
	CHECK(kbuild_fragment_parse("CONFIG_A=y\n\nbogus\n", "x", &o, &err) == -1);
	CHECK_CONTAINS(err.buf, "line 3");
	/* the line is not echoed: a fragment path may name any file */
	CHECK(!strstr(err.buf, "bogus"));
	strbuf_release(&err);
}

TEST(merge_conflicts)
{
	json_t *a = parse("CONFIG_HZ=1000\nCONFIG_SMP=y\n");
	json_t *b = parse("CONFIG_SMP=y\n# CONFIG_SCHED_MC is not set\n");
	json_t *c = parse("CONFIG_SCHED_MC=y\n");
	const char *names[] = { "hz1000", "sched_mc_off", "sched_mc_on" };
	json_t *fr[] = { a, b, c };
	json_t *m = NULL;
	struct strbuf err = STRBUF_INIT;
	CHECK(kbuild_merge(names, fr, 2, &m, &err) == 0);
	CHECK(json_object_size(m) == 3);
	CHECK_STR(json_string_value(json_object_get(m, "CONFIG_SCHED_MC")), "n");
	json_decref(m);
	m = NULL;
	CHECK(kbuild_merge(names, fr, 3, &m, &err) == -1);
	CHECK(m == NULL);
	CHECK_CONTAINS(err.buf, "fragments sched_mc_off and sched_mc_on conflict on "
				"CONFIG_SCHED_MC (n vs y)");
	strbuf_release(&err);
	json_decref(a);
	json_decref(b);
	json_decref(c);
}

static char *spec_err(const char *json)
{
	json_t *s = json_loads(json, 0, NULL);
	struct strbuf err = STRBUF_INIT;
	if (!kbuild_spec_check(s, "matrix.kernel[0]", kbuild_kernels_dir(), &err))
		strbuf_addstr(&err, "(accepted)");
	json_decref(s);
	return strbuf_detach(&err, NULL);
}

#define SPEC_ERR(json, needle)                      \
	do {                                        \
		char *m_ = spec_err(json);          \
		CHECK_CONTAINS(m_, needle);         \
		free(m_);                           \
	} while (0)

TEST(spec_validation)
{
	CHECK(kbuild_kernels_dir() != NULL);
	SPEC_ERR("{\"variant\": [\"hz1000\", \"sched_mc_off\"]}", "(accepted)");
	SPEC_ERR("{\"variant\": [\"hz250\"], \"base\": \"distro\"}", "(accepted)");
	SPEC_ERR("{\"variant\": [\"preempt_dynamic_full\", \"schedstats\", \"hz300\", "
		 "\"sched_mc_on\"]}", "(accepted)");
	SPEC_ERR("{\"variant\": [\"hz1000\", \"bogus\"]}",
		 "matrix.kernel[0].variant[1]: unknown fragment \"bogus\" (known: hz100 hz1000");
	SPEC_ERR("{\"variant\": [\"hz1000\", \"bogus\"]}", "sched_mc_off");
	SPEC_ERR("{\"variant\": [\"hz100\", \"hz1000\"]}",
		 "matrix.kernel[0].variant: fragments hz100 and hz1000 conflict on CONFIG_HZ");
	SPEC_ERR("{\"variant\": [\"preempt_dynamic_none\", \"preempt_dynamic_full\"]}",
		 "conflict on CONFIG_PREEMPT");
	SPEC_ERR("{\"variant\": [\"hz1000\", \"hz1000\"]}", "variant[1]: fragment hz1000 is listed twice");
	SPEC_ERR("{\"variant\": []}", "matrix.kernel[0].variant: must be a non-empty array");
	SPEC_ERR("{\"variant\": \"hz1000\"}", "must be a non-empty array");
	SPEC_ERR("{}", "matrix.kernel[0].variant: must be a non-empty array");
	SPEC_ERR("{\"variant\": [\"../hz\"]}", "fragment ../hz: ");
	SPEC_ERR("{\"variant\": [\"hz 1000\"]}", "variant[0]: must be a fragment name");
	SPEC_ERR("{\"variant\": [7]}", "variant[0]: must be a fragment name");
	SPEC_ERR("{\"variant\": [\"hz1000\"], \"base\": \"tiny\"}",
		 "matrix.kernel[0].base: must be \"minimal\"");
	SPEC_ERR("{\"variant\": [\"hz1000\"], \"source\": \"/nonexistent\"}",
		 "matrix.kernel[0].source: /nonexistent is not a kernel source tree");
	SPEC_ERR("{\"variant\": [\"hz1000\"], \"hz\": 1}", "matrix.kernel[0].hz: unknown key");
	SPEC_ERR("{\"variant\": [\"hz1000\"], \"series\": \"6.12\"}", "(accepted)");
	SPEC_ERR("{\"variant\": [\"hz1000\"], \"series\": \"6.12.1\"}",
		 "matrix.kernel[0].series: must be a kernel series like \"6.12\"");
	SPEC_ERR("{\"variant\": [\"hz1000\"], \"series\": \"6\"}", "series: must be");
	SPEC_ERR("{\"variant\": [\"hz1000\"], \"series\": 6.12}", "series: must be");
	SPEC_ERR("{\"variant\": [\"hz1000\"], \"series\": \"6.12\", \"source\": \"/src\"}",
		 "matrix.kernel[0].series: only for Debian's source");
	SPEC_ERR("{\"variant\": [\"hz1000\"], \"image\": 3}", "matrix.kernel[0].image: must be");
}

TEST(shipped_fragments_parse)
{
	const char *names[] = { "hz100", "hz250", "hz300", "hz1000", "sched_mc_on", "sched_mc_off",
				"preempt_dynamic_none", "preempt_dynamic_voluntary",
				"preempt_dynamic_full", "schedstats", "tracing", "sched_ext", NULL };
	const char *kdir = kbuild_kernels_dir();
	for (int i = 0; names[i]; i++) {
		char *path = xstrfmt("%s/fragments/%s.config", kdir, names[i]);
		struct strbuf t = STRBUF_INIT, err = STRBUF_INIT;
		CHECK(strbuf_read_file(&t, path, 1 << 20) == 0);
		json_t *o = NULL;
		CHECK(kbuild_fragment_parse(t.buf, names[i], &o, &err) == 0);
		CHECK(json_object_size(o) > 0);
		if (!strncmp(names[i], "hz", 2))
			CHECK_STR(json_string_value(json_object_get(o, "CONFIG_HZ")), names[i] + 2);
		json_decref(o);
		strbuf_release(&t);
		strbuf_release(&err);
		free(path);
	}
	const char *bases[] = { "base-minimal", "base-distro", NULL };
	for (int i = 0; bases[i]; i++) {
		char *path = xstrfmt("%s/%s.config", kdir, bases[i]);
		struct strbuf t = STRBUF_INIT, err = STRBUF_INIT;
		CHECK(strbuf_read_file(&t, path, 1 << 20) == 0);
		json_t *o = NULL;
		CHECK(kbuild_fragment_parse(t.buf, bases[i], &o, &err) == 0);
		if (err.len)
			printf("#   %s\n", err.buf);
		json_decref(o);
		strbuf_release(&t);
		strbuf_release(&err);
		free(path);
	}
}

TEST(label_and_argv)
{
	json_t *s = json_loads("{\"variant\": [\"hz1000\", \"sched_mc_off\"]}", 0, NULL);
	char *l = kbuild_label(s);
	CHECK_STR(l, "variant:minimal:hz1000+sched_mc_off");
	free(l);
	struct strvec av = STRVEC_INIT;
	kbuild_argv(s, "/k/build-variant.sh", &av);
	CHECK(av.nr == 6);
	CHECK_STR(av.v[0], "/k/build-variant.sh");
	CHECK_STR(av.v[1], "--base");
	CHECK_STR(av.v[2], "minimal");
	CHECK_STR(av.v[3], "--");
	CHECK_STR(av.v[4], "hz1000");
	CHECK_STR(av.v[5], "sched_mc_off");
	CHECK(av.v[6] == NULL);
	strvec_clear(&av);
	json_decref(s);

	s = json_loads("{\"variant\": [\"hz250\"], \"base\": \"distro\", \"source\": \"/src/linux\"}",
		       0, NULL);
	l = kbuild_label(s);
	CHECK_STR(l, "variant:distro:hz250@/src/linux");
	free(l);
	kbuild_argv(s, "b.sh", &av);
	CHECK(av.nr == 7);
	CHECK_STR(av.v[2], "distro");
	CHECK_STR(av.v[3], "--source");
	CHECK_STR(av.v[4], "/src/linux");
	CHECK_STR(av.v[5], "--");
	CHECK_STR(av.v[6], "hz250");
	strvec_clear(&av);
	json_decref(s);

	/* Debian's linux-source-6.12 */
	s = json_loads("{\"variant\": [\"sched_ext\"], \"series\": \"6.12\"}", 0, NULL);
	l = kbuild_label(s);
	CHECK_STR(l, "variant:minimal:sched_ext@linux-source-6.12");
	free(l);
	kbuild_argv(s, "b.sh", &av);
	CHECK(av.nr == 7);
	CHECK_STR(av.v[3], "--series");
	CHECK_STR(av.v[4], "6.12");
	CHECK_STR(av.v[5], "--");
	CHECK_STR(av.v[6], "sched_ext");
	strvec_clear(&av);
	json_decref(s);
}

TEST(plan_variants)
{
	const char *text =
		"{\"target\": {\"type\": \"qemu\"},"
		" \"matrix\": {\"kernel\": [\"kernels/out/debian\","
		"   {\"variant\": [\"hz1000\", \"sched_mc_off\"]}],"
		"   \"preempt\": [\"none\", \"full\"]},"
		" \"workloads\": [{\"type\": \"pingpong\", \"duration_s\": 1}]}";
	struct plan p;
	memset(&p, 0, sizeof(p));
	struct strbuf err = STRBUF_INIT;
	int r = plan_load_string(text, "p.json", &p, &err);
	/* the qemu target checks its default kernel (kernels/out/debian) at
	 * plan time; without one imported there is nothing to test here */
	if (r && strstr(err.buf, "target.kernel")) {
		printf("# plan_variants: no kernels/out/debian; the target check refused first\n");
		strbuf_release(&err);
		return;
	}
	CHECK(r == 0);
	if (r) {
		printf("#   %s\n", err.buf);
		strbuf_release(&err);
		return;
	}
	CHECK(p.nboots == 4);
	CHECK_STR(p.boots[0].kernel, "kernels/out/debian");
	CHECK(p.boots[0].kernel_index == 0);
	CHECK_STR(p.boots[2].kernel, "variant:minimal:hz1000+sched_mc_off");
	CHECK(p.boots[3].kernel_index == 1);
	CHECK(plan_set_kernel_image(&p, 1, "/cache/abc", &err) == 0);
	CHECK_STR(p.boots[2].kernel, "/cache/abc");
	CHECK_STR(p.boots[3].kernel, "/cache/abc");
	CHECK_STR(p.boots[0].kernel, "kernels/out/debian");
	json_t *k = json_array_get(json_object_get(json_object_get(p.root, "matrix"), "kernel"), 1);
	CHECK_STR(json_string_value(json_object_get(k, "image")), "/cache/abc");
	CHECK(plan_set_kernel_image(&p, 0, "/x", &err) == -1);
	CHECK_CONTAINS(err.buf, "matrix.kernel[0]: not a variant object");

	/* the stored plan (with "image") loads again and names the image */
	char *stored = json_dumps(p.root, JSON_COMPACT);
	struct plan q;
	memset(&q, 0, sizeof(q));
	strbuf_reset(&err);
	CHECK(plan_load_string(stored, "stored", &q, &err) == 0);
	CHECK(q.nboots == 4 && !strcmp(q.boots[2].kernel, "/cache/abc"));
	plan_release(&q);
	free(stored);
	plan_release(&p);

	memset(&p, 0, sizeof(p));
	strbuf_reset(&err);
	CHECK(plan_load_string("{\"target\": {\"type\": \"qemu\"}, \"matrix\": {\"kernel\": "
			       "[{\"variant\": [\"hz100\", \"hz300\"]}]}, \"workloads\": "
			       "[{\"type\": \"pingpong\"}]}", "c.json", &p, &err) == -1);
	if (!strstr(err.buf, "target.kernel"))
		CHECK_CONTAINS(err.buf, "c.json: matrix.kernel[0].variant: fragments hz100 and "
					"hz300 conflict");
	plan_release(&p);
	strbuf_release(&err);
}

int main(void)
{
	RUN(fragment_forms);
	RUN(fragment_bad_lines);
	RUN(merge_conflicts);
	RUN(spec_validation);
	RUN(shipped_fragments_parse);
	RUN(label_and_argv);
	RUN(plan_variants);
	return tap_done();
}
