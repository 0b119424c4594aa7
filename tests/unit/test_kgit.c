/*
 * Unit tests of the pure half of harness/orchestrate/kgit.c (kernels from
 * git, issue 13): spec validation through kbuild_spec_check with errors that
 * name the key (git, ref, patches, fetch, dirty, commit; keys only for git
 * kernels refused on a variant), refs that git could read as options, the
 * source identity in the cache key (commit + the patches' content in order,
 * not their names), the describe strings stored with results, the release
 * tag, labels and the build script's argv for a git kernel; a repository
 * whose configuration names a program (core.fsmonitor, filters, hooks,
 * credential helpers, upload-pack...) is refused by kgit_resolve with the
 * key named and the program never run (real git, a marker file). Checkout
 * and patches with real git are tested by tests/e2e/t0610-kernel-git-qemu.sh.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/orchestrate/kbuild.h"
#include "harness/orchestrate/kgit.h"
#include "tests/unit/tap.h"

static char tmpdir[] = "/tmp/test_kgit.XXXXXX";

static char *spec_err(const char *json)
{
	json_error_t je;
	json_t *s = json_loads(json, 0, &je);
	struct strbuf err = STRBUF_INIT;
	if (!s)
		strbuf_addf(&err, "(bad test json: %s)", je.text);
	else if (!kbuild_spec_check(s, "matrix.kernel[0]", kbuild_kernels_dir(), &err))
		strbuf_addstr(&err, "(accepted)");
	json_decref(s);
	return strbuf_detach(&err, NULL);
}

#define SPEC_ERR(needle, ...)                                 \
	do {                                                  \
		char *j_ = xstrfmt(__VA_ARGS__);              \
		char *m_ = spec_err(j_);                      \
		CHECK_CONTAINS(m_, needle);                   \
		free(m_);                                     \
		free(j_);                                     \
	} while (0)

TEST(spec_validation)
{
	const char *d = tmpdir;
	char *patch = xstrfmt("%s/a.patch", d);
	FILE *f = fopen(patch, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("diff --git a/x b/x\n", f);
		fclose(f);
	}
	SPEC_ERR("(accepted)", "{\"git\": \"%s\", \"ref\": \"main\"}", d);
	SPEC_ERR("(accepted)", "{\"git\": \"%s\", \"ref\": \"origin/sched/core\", \"variant\": "
		 "[\"hz1000\"], \"base\": \"minimal\", \"patches\": [\"%s\"], \"fetch\": true, "
		 "\"dirty\": \"ignore\"}", d, patch);
	SPEC_ERR("(accepted)", "{\"git\": \"%s\", \"ref\": \"v6.1\", \"variant\": []}", d);
	SPEC_ERR("matrix.kernel[0].ref: missing", "{\"git\": \"%s\"}", d);
	SPEC_ERR("matrix.kernel[0].ref: must be a commit-ish (a branch, a tag, a commit id): it "
		 "starts with '-'", "{\"git\": \"%s\", \"ref\": \"--upload-pack=x\"}", d);
	SPEC_ERR("ref: must be a commit-ish", "{\"git\": \"%s\", \"ref\": \"\"}", d);
	SPEC_ERR("contains whitespace", "{\"git\": \"%s\", \"ref\": \"a b\"}", d);
	SPEC_ERR("ref: must be a commit-ish", "{\"git\": \"%s\", \"ref\": 7}", d);
	/* a patch over 64 MiB was hashed only in part: refused, the limit named */
	char *big = xstrfmt("%s/big.patch", d);
	if (truncate(big, 0) && errno != ENOENT)
		CHECK(0);
	FILE *bf = fopen(big, "w");
	if (bf) {
		fclose(bf);
		CHECK(truncate(big, (64 << 20) + 1) == 0);
	}
	SPEC_ERR("matrix.kernel[0].patches[0]: ", "{\"git\": \"%s\", \"ref\": \"main\", "
		 "\"patches\": [\"%s\"]}", d, big);
	SPEC_ERR("is 67108865 bytes; a patch may be at most 67108864 bytes (64 MiB)",
		 "{\"git\": \"%s\", \"ref\": \"main\", \"patches\": [\"%s\"]}", d, big);
	unlink(big);
	free(big);
	SPEC_ERR("matrix.kernel[0].git: /nonexistent/x is not a folder",
		 "{\"git\": \"/nonexistent/x\", \"ref\": \"main\"}");
	SPEC_ERR("matrix.kernel[0].git: must be the folder", "{\"git\": 1, \"ref\": \"main\"}");
	SPEC_ERR("\"git\" and \"source\" exclude each other",
		 "{\"git\": \"%s\", \"ref\": \"main\", \"source\": \"%s\"}", d, d);
	SPEC_ERR("matrix.kernel[0].patches[1]: /nonexistent.patch: No such file",
		 "{\"git\": \"%s\", \"ref\": \"main\", \"patches\": [\"%s\", \"/nonexistent.patch\"]}",
		 d, patch);
	SPEC_ERR("matrix.kernel[0].patches[0]: ", "{\"git\": \"%s\", \"ref\": \"main\", "
		 "\"patches\": [\"%s\"]}", d, d);
	SPEC_ERR("is not a file", "{\"git\": \"%s\", \"ref\": \"main\", \"patches\": [\"%s\"]}", d, d);
	SPEC_ERR("matrix.kernel[0].patches: must be an array",
		 "{\"git\": \"%s\", \"ref\": \"main\", \"patches\": \"%s\"}", d, patch);
	SPEC_ERR("matrix.kernel[0].fetch: must be true", "{\"git\": \"%s\", \"ref\": \"main\", "
		 "\"fetch\": \"yes\"}", d);
	SPEC_ERR("matrix.kernel[0].dirty: must be \"refuse\"", "{\"git\": \"%s\", \"ref\": \"main\", "
		 "\"dirty\": \"use\"}", d);
	SPEC_ERR("matrix.kernel[0].commit: must be a full commit id",
		 "{\"git\": \"%s\", \"ref\": \"main\", \"commit\": \"abc\"}", d);
	SPEC_ERR("(accepted)", "{\"git\": \"%s\", \"ref\": \"main\", \"commit\": "
		 "\"0123456789abcdef0123456789abcdef01234567\", \"describe\": \"v1\"}", d);
	SPEC_ERR("matrix.kernel[0].variant[0]: unknown fragment \"hz7\"",
		 "{\"git\": \"%s\", \"ref\": \"main\", \"variant\": [\"hz7\"]}", d);
	SPEC_ERR("matrix.kernel[0].bogus: unknown key (valid: variant, base, source, image; for a "
		 "kernel from git: git, ref, patches, fetch, dirty)",
		 "{\"git\": \"%s\", \"ref\": \"main\", \"bogus\": 1}", d);
	/* git keys on a variant without "git" */
	SPEC_ERR("matrix.kernel[0].ref: only for a kernel from git",
		 "{\"variant\": [\"hz1000\"], \"ref\": \"main\"}");
	SPEC_ERR("matrix.kernel[0].patches: only for a kernel from git",
		 "{\"variant\": [\"hz1000\"], \"patches\": []}");
	/* a built kernel (a stored plan) needs neither the repository nor the
	 * patches any more */
	SPEC_ERR("(accepted)", "{\"git\": \"/gone\", \"ref\": \"main\", \"patches\": [\"/gone.patch\"], "
		 "\"commit\": \"0123456789abcdef0123456789abcdef01234567\", \"image\": \"/k\"}");
	unlink(patch);
	free(patch);
}

TEST(ref_ok)
{
	const char *good[] = { "main", "origin/sched/core", "v6.1", "HEAD~3", "a1b2c3", "tip/sched/core",
			       "HEAD^{commit}", NULL };
	const char *bad[] = { "", "-x", "--output=/tmp/x", "a\tb", "a\nb", NULL };
	for (int i = 0; good[i]; i++) {
		struct strbuf why = STRBUF_INIT;
		CHECK(kgit_ref_ok(good[i], &why) == 0);
		strbuf_release(&why);
	}
	for (int i = 0; bad[i]; i++) {
		struct strbuf why = STRBUF_INIT;
		CHECK(kgit_ref_ok(bad[i], &why) == -1);
		CHECK(why.len > 0);
		strbuf_release(&why);
	}
}

static char *sid(const char *commit, const char *const *texts, size_t n)
{
	struct strbuf p[4] = { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT };
	for (size_t i = 0; i < n; i++) {
		strbuf_init(&p[i], 0);
		strbuf_addstr(&p[i], texts[i]);
	}
	char *r = kgit_source_id(commit, p, n);
	for (size_t i = 0; i < n; i++)
		strbuf_release(&p[i]);
	return r;
}

TEST(source_id)
{
	const char *c = "0123456789abcdef0123456789abcdef01234567";
	const char *c2 = "1123456789abcdef0123456789abcdef01234567";
	char *a = sid(c, NULL, 0);
	CHECK_STR(a, "git 0123456789abcdef0123456789abcdef01234567");
	const char *ab[] = { "patch A\n", "patch B\n" }, *ba[] = { "patch B\n", "patch A\n" };
	const char *ab2[] = { "patch A\n", "patch B!\n" }, *joined[] = { "patch A\npatch B\n", "" };
	char *x = sid(c, ab, 2), *y = sid(c, ab, 2), *z = sid(c, ba, 2), *w = sid(c, ab2, 2);
	char *v = sid(c2, ab, 2), *j = sid(c, joined, 2), *one = sid(c, ab, 1);
	CHECK(!strncmp(x, "git 0123456789abcdef0123456789abcdef01234567 patches 2 ", 55));
	CHECK(strlen(x) == 55 + 64);
	CHECK_STR(x, y);               /* same commit, same series: same kernel */
	CHECK(strcmp(x, z) != 0);      /* order matters */
	CHECK(strcmp(x, w) != 0);      /* content matters */
	CHECK(strcmp(x, v) != 0);      /* the commit matters */
	CHECK(strcmp(x, j) != 0);      /* patch boundaries matter */
	CHECK(strcmp(x, one) != 0);
	CHECK(strcmp(a, one) != 0);
	free(a);
	free(x);
	free(y);
	free(z);
	free(w);
	free(v);
	free(j);
	free(one);
}

TEST(describe_and_tag)
{
	const char *c = "0123456789abcdef0123456789abcdef01234567";
	char *d = kgit_describe("v6.1-3-g0123456789ab", c, 0);
	CHECK_STR(d, "v6.1-3-g0123456789ab");
	free(d);
	d = kgit_describe("v6.1-3-g0123456789ab", c, 2);
	CHECK_STR(d, "v6.1-3-g0123456789ab+2 patches");
	free(d);
	d = kgit_describe("", c, 1);
	CHECK_STR(d, "0123456789ab+1 patch");
	free(d);
	d = kgit_describe(NULL, c, 0);
	CHECK_STR(d, "0123456789ab");
	free(d);
	char *t = kgit_release_tag(c, "git 0123456789abcdef0123456789abcdef01234567");
	CHECK_STR(t, "g0123456789ab");
	free(t);
	t = kgit_release_tag(c, "git 0123456789abcdef0123456789abcdef01234567 patches 2 "
				"89abcdef00000000000000000000000000000000000000000000000000000000");
	CHECK_STR(t, "g0123456789abp89abcdef");
	free(t);
}

TEST(label_and_argv)
{
	json_t *s = json_pack("{s:s, s:s, s:[s], s:[s]}", "git", "/src/linux", "ref", "sched/core",
			      "variant", "hz1000", "patches", "/p/1.patch");
	char *l = kbuild_label(s);
	CHECK_STR(l, "git:/src/linux@sched/core+patches:minimal:hz1000");
	free(l);
	json_object_set_new(s, "commit", json_string("0123456789abcdef0123456789abcdef01234567"));
	json_object_set_new(s, "describe", json_string("v6.1-1-g0123456789ab+1 patch"));
	l = kbuild_label(s);
	CHECK_STR(l, "git:0123456789ab(v6.1-1-g0123456789ab+1 patch):minimal:hz1000");
	free(l);
	struct strvec av = STRVEC_INIT;
	kbuild_argv_tree(s, "b.sh", "/cache/git/x", "git 0123 patches 1 ff", "g0123", &av);
	const char *want[] = { "b.sh", "--base", "minimal", "--source", "/cache/git/x",
			       "--source-id", "git 0123 patches 1 ff", "--keep-tree", "--tag",
			       "g0123", "--", "hz1000", NULL };
	CHECK(av.nr == 12);
	for (size_t i = 0; i < av.nr && want[i]; i++)
		CHECK_STR(av.v[i], want[i]);
	strvec_clear(&av);
	json_decref(s);
}

/* a repository with one commit in tmpdir/NAME; then `config` run in it
 * (a shell line of the test's own) */
static char *make_repo(const char *name, const char *config)
{
	char *dir = xstrfmt("%s/%s", tmpdir, name);
	char *cmd = xstrfmt("set -e; git init -q '%s'; cd '%s'; echo a > f; git add f; "
			    "git -c user.name=t -c user.email=t@t commit -qm one; %s",
			    dir, dir, config);
	if (system(cmd))
		printf("#   setup failed: %s\n", cmd);
	free(cmd);
	return dir;
}

static int marker_exists(void)
{
	char *m = xstrfmt("%s/marker", tmpdir);
	int r = access(m, F_OK) == 0;
	unlink(m);
	free(m);
	return r;
}

/* kgit_resolve of a repository configured with `config`: the message */
static char *resolve_err(const char *name, const char *config, int fetch)
{
	char *dir = make_repo(name, config);
	json_t *spec = json_pack("{s:s,s:s,s:b}", "git", dir, "ref", "HEAD", "fetch", fetch);
	struct strbuf err = STRBUF_INIT;
	if (!kgit_resolve(spec, "matrix.kernel[0]", 1, NULL, &err))
		strbuf_addf(&err, "(accepted: %s)",
			    json_string_value(json_object_get(spec, "commit")));
	json_decref(spec);
	free(dir);
	return strbuf_detach(&err, NULL);
}

TEST(repository_config_runs_nothing)
{
	/* a plain repository resolves (the control) */
	char *m = resolve_err("plain", "true", 0);
	CHECK_CONTAINS(m, "(accepted: ");
	free(m);
	static const struct { const char *name, *config, *key; int fetch; } cases[] = {
		{ "fsmonitor", "git config core.fsmonitor \"$PWD/../hook\"", "core.fsmonitor", 0 },
		{ "filter", "echo 'f filter=x' > .gitattributes; "
			    "git config filter.x.clean \"$PWD/../hook\"; "
			    "git config filter.x.smudge \"$PWD/../hook\"", "filter.x.clean", 0 },
		{ "hooks", "git config core.hooksPath \"$PWD/..\"", "core.hookspath", 0 },
		{ "credential", "git config credential.helper \"!$PWD/../hook\"",
		  "credential.helper", 0 },
		{ "textconv", "git config diff.x.textconv \"$PWD/../hook\"", "diff.x.textconv", 0 },
		{ "included", "printf '[core]\\n\\tfsmonitor = %s/../hook\\n' \"$PWD\" > "
			      "../inc.cfg; git config include.path \"$PWD/../inc.cfg\"",
		  "core.fsmonitor", 0 },
		{ "uploadpack", "git remote add origin \"$PWD\"; "
				"git config remote.origin.uploadpack \"$PWD/../hook; git-upload-pack\"",
		  "remote.origin.uploadpack", 1 },
		{ "sshcommand", "git config core.sshCommand \"$PWD/../hook\"", "core.sshcommand",
		  0 },
	};
	char *hook = xstrfmt("%s/hook", tmpdir);
	FILE *h = fopen(hook, "w");
	if (h) {
		fprintf(h, "#!/bin/sh\ntouch '%s/marker'\n", tmpdir);
		fclose(h);
	}
	chmod(hook, 0755);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		m = resolve_err(cases[i].name, cases[i].config, cases[i].fetch);
		char *want = xstrfmt("sets %s, which makes git run a program", cases[i].key);
		CHECK_CONTAINS(m, want);
		CHECK_CONTAINS(m, "matrix.kernel[0].git: the configuration of ");
		if (marker_exists()) {
			printf("#   %s: the repository's program ran\n", cases[i].name);
			CHECK(0);
		}
		free(want);
		free(m);
	}
	/* every git command overrides what it can, also past the check: a
	 * status in a repository with an fsmonitor runs no program */
	char *dir = make_repo("fsmonitor2", "git config core.fsmonitor \"$PWD/../hook\"; "
				"echo b > f");
	const char *st[] = { "-C", dir, "status", "--porcelain", NULL };
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	CHECK(kgit_git(st, 60, NULL, &out, &err) == 0);
	CHECK_CONTAINS(out.buf, "M f");
	CHECK(!marker_exists());
	strbuf_release(&out);
	strbuf_release(&err);
	free(dir);
	free(hook);
	m = xstrfmt("rm -rf '%s'/*", tmpdir);
	if (system(m))
		printf("#   cleanup failed\n");
	free(m);
	CHECK(kgit_program_key("filter.lfs.process"));
	CHECK(kgit_program_key("FILTER.Lfs.SMUDGE"));
	CHECK(kgit_program_key("remote.a.b.uploadpack"));
	CHECK(!kgit_program_key("core.filemode"));
	CHECK(!kgit_program_key("remote.origin.url"));
	CHECK(!kgit_program_key("filter.smudge"));
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(spec_validation);
	RUN(ref_ok);
	RUN(source_id);
	RUN(describe_and_tag);
	RUN(label_and_argv);
	RUN(repository_config_runs_nothing);
	rmdir(tmpdir);
	return tap_done();
}
