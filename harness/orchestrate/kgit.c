/*
 * Kernels from git: spec validation, ref resolution, schedlab's own clone and
 * the patch series (see kgit.h). Every git command runs through the
 * child-process module with an argv array and `git -C DIR`; nothing here ever
 * writes to the user's repository or working tree (the clone is made with
 * `git clone --shared` into the cache and only read from DIR).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/orchestrate/kgit.h"
#include "harness/util/proc.h"
#include "harness/util/sha256.h"

static const char *const dirty_modes[] = { "refuse", "ignore", NULL };

int kgit_is_git(const json_t *spec)
{
	return json_is_object(spec) && json_object_get(spec, "git") != NULL;
}

static int is_dir(const char *p)
{
	struct stat st;
	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

static int is_hex(const char *s, size_t len)
{
	if (strlen(s) != len)
		return 0;
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s) || isupper((unsigned char)*s))
			return 0;
	return 1;
}

/* ------------------------------------------------------------------ pure */

int kgit_ref_ok(const char *ref, struct strbuf *why)
{
	if (!ref || !*ref) {
		strbuf_addstr(why, "is empty");
		return -1;
	}
	if (*ref == '-') {
		strbuf_addstr(why, "starts with '-' (it would be read as an option)");
		return -1;
	}
	for (const char *s = ref; *s; s++)
		if (isspace((unsigned char)*s) || iscntrl((unsigned char)*s)) {
			strbuf_addstr(why, "contains whitespace or a control character");
			return -1;
		}
	if (strlen(ref) > 255) {
		strbuf_addstr(why, "is longer than 255 characters");
		return -1;
	}
	return 0;
}

int kgit_spec_check(const json_t *spec, const char *path, struct strbuf *err)
{
	json_t *v = json_object_get(spec, "git");
	if (!json_is_string(v) || !json_string_length(v)) {
		strbuf_addf(err, "%s.git: must be the folder of a git repository of a kernel",
			    path);
		return -1;
	}
	/* a built kernel (a stored plan being resumed) needs neither the
	 * repository nor the patch files any more */
	int built = json_object_get(spec, "image") != NULL;
	if (!built && !is_dir(json_string_value(v))) {
		strbuf_addf(err, "%s.git: %s is not a folder", path, json_string_value(v));
		return -1;
	}
	if (json_object_get(spec, "source")) {
		strbuf_addf(err, "%s: \"git\" and \"source\" exclude each other (a git kernel is "
			    "built from a checkout of its own)", path);
		return -1;
	}
	v = json_object_get(spec, "ref");
	struct strbuf why = STRBUF_INIT;
	if (!v) {
		strbuf_addf(err, "%s.ref: missing: a commit-ish of the repository (a branch, a "
			    "tag, a commit id, origin/sched/core)", path);
		return -1;
	}
	if (!json_is_string(v) || kgit_ref_ok(json_string_value(v), &why)) {
		strbuf_addf(err, "%s.ref: must be a commit-ish (a branch, a tag, a commit id)%s%s",
			    path, why.len ? ": it " : "", why.buf);
		strbuf_release(&why);
		return -1;
	}
	strbuf_release(&why);
	v = json_object_get(spec, "patches");
	if (v && !json_is_array(v)) {
		strbuf_addf(err, "%s.patches: must be an array of patch files (applied in order)",
			    path);
		return -1;
	}
	size_t i;
	json_t *f;
	json_array_foreach(v, i, f) {
		const char *pf = json_string_value(f);
		struct stat st;
		if (!pf || !*pf) {
			strbuf_addf(err, "%s.patches[%zu]: must be the path of a patch file", path, i);
			return -1;
		}
		if (built)
			continue;
		if (stat(pf, &st) || access(pf, R_OK)) {
			strbuf_addf(err, "%s.patches[%zu]: %s: %s", path, i, pf, strerror(errno));
			return -1;
		}
		if (!S_ISREG(st.st_mode)) {
			strbuf_addf(err, "%s.patches[%zu]: %s is not a file", path, i, pf);
			return -1;
		}
		if (st.st_size > KGIT_PATCH_MAX) {
			strbuf_addf(err, "%s.patches[%zu]: %s is %lld bytes; a patch may be at most "
				    "%d bytes (64 MiB)", path, i, pf, (long long)st.st_size,
				    KGIT_PATCH_MAX);
			return -1;
		}
	}
	v = json_object_get(spec, "fetch");
	if (v && !json_is_boolean(v)) {
		strbuf_addf(err, "%s.fetch: must be true (git fetch in the repository first) or "
			    "false", path);
		return -1;
	}
	v = json_object_get(spec, "dirty");
	if (v) {
		int ok = 0;
		for (const char *const *d = dirty_modes; *d && json_is_string(v); d++)
			ok |= !strcmp(*d, json_string_value(v));
		if (!ok) {
			strbuf_addf(err, "%s.dirty: must be \"refuse\" (default: a repository with "
				    "uncommitted changes on the requested commit is refused) or "
				    "\"ignore\" (build the commit without them)", path);
			return -1;
		}
	}
	v = json_object_get(spec, "commit");
	if (v && (!json_is_string(v) || !is_hex(json_string_value(v), 40))) {
		strbuf_addf(err, "%s.commit: must be a full commit id, 40 lowercase hex digits "
			    "(set by schedlab run)", path);
		return -1;
	}
	v = json_object_get(spec, "describe");
	if (v && !json_is_string(v)) {
		strbuf_addf(err, "%s.describe: must be a string (set by schedlab run)", path);
		return -1;
	}
	return 0;
}

char *kgit_source_id(const char *commit, const struct strbuf *patches, size_t n)
{
	if (!n)
		return xstrfmt("git %s", commit);
	struct sha256 h;
	unsigned char d[32];
	char hex[65];
	sha256_init(&h);
	for (size_t i = 0; i < n; i++) {
		char len[48];
		int l = snprintf(len, sizeof(len), "patch %zu\n", patches[i].len);
		sha256_update(&h, len, (size_t)l);
		sha256_update(&h, patches[i].buf, patches[i].len);
	}
	sha256_final(&h, d);
	sha256_hex(d, hex);
	return xstrfmt("git %s patches %zu %s", commit, n, hex);
}

char *kgit_describe(const char *git_describe, const char *commit, size_t npatches)
{
	struct strbuf sb = STRBUF_INIT;
	if (git_describe && *git_describe)
		strbuf_addstr(&sb, git_describe);
	else
		strbuf_addf(&sb, "%.12s", commit ? commit : "?");
	if (npatches)
		strbuf_addf(&sb, "+%zu patch%s", npatches, npatches == 1 ? "" : "es");
	return strbuf_detach(&sb, NULL);
}

char *kgit_release_tag(const char *commit, const char *source_id)
{
	const char *p = source_id ? strstr(source_id, " patches ") : NULL;
	if (p && (p = strchr(p + 9, ' ')))
		return xstrfmt("g%.12sp%.8s", commit, p + 1);
	return xstrfmt("g%.12s", commit);
}

/* ----------------------------------------------------------------- git */

/*
 * What every git command of schedlab runs with, before its arguments: no
 * fsmonitor program (git status would start it), no hooks, no credential
 * helper, no ext:: transport (a command line of its own). Command-line
 * settings win over the repository's.
 */
static const char *const git_safe_config[] = {
	"core.fsmonitor=false", "core.hooksPath=/dev/null", "credential.helper=",
	"protocol.ext.allow=never", NULL,
};

/*
 * Settings of a repository's own configuration (.git/config, its includes,
 * a worktree's config) under which git runs a program: "*" stands for any
 * subsection. A repository that sets one is refused (kgit_repo_check):
 * schedlab only reads the repository (docs/kernels.md) and runs no program
 * it names.
 */
static const char *const git_program_keys[] = {
	"core.fsmonitor", "core.hookspath", "core.sshcommand", "core.gitproxy", "core.askpass",
	"core.pager", "core.editor", "core.alternaterefscommand", "credential.helper",
	"credential.*.helper", "diff.external", "diff.*.command", "diff.*.textconv",
	"filter.*.clean", "filter.*.smudge", "filter.*.process", "merge.*.driver",
	"remote.*.uploadpack", "remote.*.receivepack", "uploadpack.packobjectshook",
	"gpg.program", "gpg.*.program", "sequence.editor", "pager.*", "alias.*",
	"submodule.*.update", NULL,
};

/* does config key `key` ("section[.sub].name", section and name lowercase)
 * match `pat` ("section.name" or "section.*.name"; "section.*": any key of
 * the section) */
static int key_matches(const char *key, const char *pat)
{
	const char *pdot = strchr(pat, '.'), *kdot = strchr(key, '.');
	if (!pdot || !kdot || pdot - pat != kdot - key || strncasecmp(key, pat, (size_t)(pdot - pat)))
		return 0;
	const char *prest = pdot + 1, *krest = kdot + 1;
	if (!strcmp(prest, "*"))
		return 1;
	const char *klast = strrchr(krest, '.');
	if (!strncmp(prest, "*.", 2))
		return klast && !strcasecmp(klast + 1, prest + 2);
	return !klast && !strcasecmp(krest, prest);
}

/* run git with `args` (after "git"), stdout in *out (trimmed, or as it is
 * with raw_out); -1 with
 * "git ARGS...: <stderr>" in err when it cannot start or fails */
static int git_raw(const char *const *args, double timeout_s, volatile int *abort_flag,
		   struct strbuf *out, int raw_out, struct strbuf *raw, struct strbuf *err)
{
	struct strvec av = STRVEC_INIT;
	strvec_push(&av, "git");
	/* the repository is only read: settings that would make git run a
	 * program the repository names are overridden for every command
	 * (kgit_repo_check refuses a repository that sets the others) */
	for (const char *const *o = git_safe_config; *o; o++) {
		strvec_push(&av, "-c");
		strvec_push(&av, *o);
	}
	size_t first_arg = av.nr;
	strvec_pushv(&av, args);
	struct child c = CHILD_INIT;
	c.argv = strvec_argv(&av);
	c.in = PROC_NULL;
	c.out = PROC_PIPE;
	c.err = PROC_PIPE;
	c.new_pgrp = 1;
	/* no pager, no prompt for a password on fetch (a nightly has no
	 * terminal), messages in English (they are quoted to the user) */
	const char *env[] = { "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "LC_ALL=C", NULL };
	c.env = env;
	struct strbuf o = STRBUF_INIT, e = STRBUF_INIT;
	struct proc_result res;
	int ret = -1;
	const struct proc_io io = { .timeout_s = timeout_s, .out = &o, .errout = &e, .err_max = 8192,
				    .abort_fd = -1, .abort_flag = abort_flag };
	if (proc_exec(&c, &io, &res, err))
		goto out;
	if (res.exit_code != 0) {
		strbuf_addstr(err, "git");
		for (size_t i = first_arg; i < av.nr; i++)
			strbuf_addf(err, " %s", av.v[i]);
		strbuf_trim(&e);
		if (raw)
			strbuf_addstr(raw, e.buf);
		strbuf_addf(err, ": %s", res.timed_out ? "timed out"
			    : e.len ? e.buf : res.exit_code < 0 ? "killed" : "failed");
		goto out;
	}
	ret = 0;
	if (out && raw_out) {
		strbuf_add(out, o.buf, o.len);
	} else if (out) {
		strbuf_trim(&o);
		strbuf_addstr(out, o.buf);
	}
out:
	strbuf_release(&o);
	strbuf_release(&e);
	strvec_clear(&av);
	return ret;
}

static int git(const char *const *args, double timeout_s, volatile int *abort_flag,
	       struct strbuf *out, struct strbuf *err)
{
	return git_raw(args, timeout_s, abort_flag, out, 0, NULL, err);
}

int kgit_git(const char *const *args, double timeout_s, volatile int *abort_flag,
	     struct strbuf *out, struct strbuf *err)
{
	return git(args, timeout_s, abort_flag, out, err);
}

int kgit_program_key(const char *key)
{
	for (const char *const *p = git_program_keys; *p; p++)
		if (key_matches(key, *p))
			return 1;
	return 0;
}

int kgit_repo_check(const char *dir, const char *path, volatile int *abort_flag,
		    struct strbuf *err)
{
	const char *a[] = { "-C", dir, "config", "--list", "--show-scope", "--includes", "-z",
			    NULL };
	struct strbuf out = STRBUF_INIT, e = STRBUF_INIT;
	if (git_raw(a, 60, abort_flag, &out, 1, NULL, &e)) {
		strbuf_addf(err, "%s.git: cannot read the configuration of %s (%s)", path, dir,
			    e.buf);
		strbuf_release(&out);
		strbuf_release(&e);
		return -1;
	}
	int ret = 0;
	/* records: SCOPE NUL KEY [NL VALUE] NUL */
	const char *p = out.buf, *end = out.buf + out.len;
	while (p < end) {
		const char *scope = p;
		p += strlen(p) + 1;
		if (p >= end)
			break;
		const char *kv = p;
		p += strlen(p) + 1;
		if (strcmp(scope, "local") && strcmp(scope, "worktree"))
			continue;
		const char *nl = strchr(kv, '\n');
		char *key = xstrfmt("%.*s", nl ? (int)(nl - kv) : (int)strlen(kv), kv);
		if (kgit_program_key(key)) {
			strbuf_addf(err, "%s.git: the configuration of %s sets %s, which makes git "
				    "run a program; schedlab only reads a repository and runs no "
				    "program it names (remove the setting, or use a clone without "
				    "it; docs/kernels.md)", path, dir, key);
			ret = -1;
		}
		free(key);
		if (ret)
			break;
	}
	strbuf_release(&out);
	strbuf_release(&e);
	return ret;
}

/* a path made absolute (realpath), or a copy when it does not resolve */
static char *abs_path(const char *p)
{
	char buf[PATH_MAX];
	return realpath(p, buf) ? xstrdup(buf) : xstrdup(p);
}

int kgit_resolve(json_t *spec, const char *path, int quiet, volatile int *abort_flag,
		 struct strbuf *err)
{
	if (json_object_get(spec, "commit"))
		return 0;
	char *dir = abs_path(json_string_value(json_object_get(spec, "git")));
	const char *ref = json_string_value(json_object_get(spec, "ref"));
	const char *dirty = json_string_value(json_object_get(spec, "dirty"));
	struct strbuf out = STRBUF_INIT, e = STRBUF_INIT;
	char *spec_ref = NULL, *commit = NULL;
	int ret = -1;
	struct strbuf why = STRBUF_INIT;
	if (kgit_ref_ok(ref, &why)) {
		strbuf_addf(err, "%s.ref: it %s", path, why.buf);
		goto out;
	}
	{
		const char *a[] = { "-C", dir, "rev-parse", "--git-dir", NULL };
		if (git(a, 60, abort_flag, NULL, &e)) {
			strbuf_addf(err, "%s.git: %s is not a git repository (%s)", path, dir, e.buf);
			goto out;
		}
	}
	if (kgit_repo_check(dir, path, abort_flag, err))
		goto out;
	if (json_is_true(json_object_get(spec, "fetch"))) {
		if (!quiet)
			fprintf(stderr, "%s: git fetch in %s\n", path, dir);
		const char *a[] = { "-C", dir, "fetch", "--quiet", NULL };
		if (git(a, 1800, abort_flag, NULL, &e)) {
			strbuf_addf(err, "%s.fetch: %s", path, e.buf);
			goto out;
		}
	}
	spec_ref = xstrfmt("%s^{commit}", ref);
	{
		const char *a[] = { "-C", dir, "rev-parse", "--verify", "--quiet",
				    "--end-of-options", spec_ref, NULL };
		if (git(a, 60, abort_flag, &out, &e) || !is_hex(out.buf, 40)) {
			strbuf_addf(err, "%s.ref: \"%s\" is not a commit in %s", path, ref, dir);
			if (e.len && !strstr(e.buf, "rev-parse --verify --quiet"))
				strbuf_addf(err, " (%s)", e.buf);
			goto out;
		}
		commit = strbuf_detach(&out, NULL);
	}
	/* a dirty tree whose HEAD is the commit: the user may think they test
	 * their edits, which a build of the commit would not contain */
	{
		const char *wt[] = { "-C", dir, "rev-parse", "--is-inside-work-tree", NULL };
		const char *h[] = { "-C", dir, "rev-parse", "--verify", "--quiet", "HEAD", NULL };
		const char *st[] = { "-C", dir, "status", "--porcelain", "--untracked-files=no",
				     NULL };
		struct strbuf head = STRBUF_INIT, changes = STRBUF_INIT;
		strbuf_reset(&e);
		/* a bare repository has no working tree to be dirty */
		int same = !git(wt, 60, abort_flag, &head, &e) && !strcmp(head.buf, "true");
		strbuf_reset(&head);
		strbuf_reset(&e);
		same = same && !git(h, 60, abort_flag, &head, &e) && !strcmp(head.buf, commit);
		strbuf_reset(&e);
		if (same && git(st, 300, abort_flag, &changes, &e)) {
			strbuf_addf(err, "%s.git: %s", path, e.buf);
			strbuf_release(&head);
			strbuf_release(&changes);
			goto out;
		}
		if (same && changes.len) {
			size_t nl = 0;
			for (const char *s = changes.buf; *s; s++)
				nl += *s == '\n';
			const char *first = changes.buf;
			const char *eol = strchr(first, '\n');
			int flen = eol ? (int)(eol - first) : (int)strlen(first);
			if (!dirty || !strcmp(dirty, "refuse")) {
				strbuf_addf(err, "%s: %s has uncommitted changes (%zu file%s, e.g. "
					    "\"%.*s\") and \"%s\" is its HEAD: a kernel built from "
					    "the commit would not contain them. Commit or stash "
					    "them, give them as a patch (git diff > my.patch; "
					    "\"patches\": [\"my.patch\"]), or set \"dirty\": "
					    "\"ignore\" to build the commit as committed", path, dir,
					    nl + 1, nl ? "s" : "", flen, first, ref);
				strbuf_release(&head);
				strbuf_release(&changes);
				goto out;
			}
			fprintf(stderr, "%s: warning: %s has uncommitted changes (%zu file%s); "
				"building %.12s as committed, without them (\"dirty\": \"ignore\")\n",
				path, dir, nl + 1, nl ? "s" : "", commit);
		}
		strbuf_release(&head);
		strbuf_release(&changes);
	}
	/* describe: the nearest tag when there is one, else the short id */
	strbuf_reset(&e);
	strbuf_reset(&out);
	{
		const char *a[] = { "-C", dir, "describe", "--tags", "--always", "--abbrev=12",
				    commit, NULL };
		if (git(a, 120, abort_flag, &out, &e))
			strbuf_reset(&out);
	}
	json_t *patches = json_object_get(spec, "patches");
	size_t i, np = json_array_size(patches);
	json_t *f;
	json_array_foreach(patches, i, f) {
		char *ap = abs_path(json_string_value(f));
		json_array_set_new(patches, i, json_string(ap));
		free(ap);
	}
	char *desc = kgit_describe(out.buf, commit, np);
	json_object_set_new(spec, "git", json_string(dir));
	json_object_set_new(spec, "commit", json_string(commit));
	json_object_set_new(spec, "describe", json_string(desc));
	if (!quiet)
		fprintf(stderr, "%s: %s in %s is %s (%s)\n", path, ref, dir, commit, desc);
	free(desc);
	ret = 0;
out:
	free(dir);
	free(spec_ref);
	free(commit);
	strbuf_release(&why);
	strbuf_release(&out);
	strbuf_release(&e);
	return ret;
}

static char *cache_root(struct strbuf *err)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (x && *x)
		return xstrfmt("%s/schedlab", x);
	if (home && *home)
		return xstrfmt("%s/.cache/schedlab", home);
	strbuf_addstr(err, "git kernels: neither XDG_CACHE_HOME nor HOME is set");
	return NULL;
}

static int mkdirs(const char *p)
{
	char *s = xstrdup(p);
	for (char *q = s + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = 0;
		if (mkdir(s, 0755) && errno != EEXIST) {
			free(s);
			return -1;
		}
		*q = '/';
	}
	int r = mkdir(s, 0755) && errno != EEXIST ? -1 : 0;
	free(s);
	return r;
}

int kgit_prepare(const json_t *spec, const char *path, int quiet, volatile int *abort_flag,
		 char **tree, char **source_id, int *lock_fd, struct strbuf *err)
{
	const char *dir = json_string_value(json_object_get(spec, "git"));
	const char *commit = json_string_value(json_object_get(spec, "commit"));
	const char *desc = json_string_value(json_object_get(spec, "describe"));
	json_t *patches = json_object_get(spec, "patches");
	size_t np = json_array_size(patches), i;
	struct strbuf *texts = xcalloc(np ? np : 1, sizeof(*texts));
	struct strbuf e = STRBUF_INIT;
	char *root = NULL, *clone = NULL, *lockp = NULL, *tmp = NULL;
	int fd = -1, ret = -1;
	*lock_fd = -1;
	if (!dir || !commit) {
		strbuf_addf(err, "%s: the git kernel was not resolved to a commit", path);
		goto out;
	}
	if (kgit_repo_check(dir, path, abort_flag, err))
		goto out;
	json_t *f;
	json_array_foreach(patches, i, f) {
		strbuf_init(&texts[i], 0);
		if (strbuf_read_file(&texts[i], json_string_value(f), KGIT_PATCH_MAX + 1u) < 0) {
			strbuf_addf(err, "%s.patches[%zu]: %s: %s", path, i, json_string_value(f),
				    strerror(errno));
			goto out;
		}
		/* the whole patch is hashed into the kernel's identity: one that
		 * grew past the limit since the plan was checked is refused, not
		 * hashed in part */
		if (texts[i].len > KGIT_PATCH_MAX) {
			strbuf_addf(err, "%s.patches[%zu]: %s is over %d bytes (64 MiB), the most a "
				    "patch may have", path, i, json_string_value(f), KGIT_PATCH_MAX);
			goto out;
		}
	}
	if (!(root = cache_root(err)))
		goto out;
	/* one clone per repository, named by the repository's path */
	char hex[65];
	sha256_hex_of(dir, strlen(dir), hex);
	hex[16] = 0;
	clone = xstrfmt("%s/git/%s", root, hex);
	lockp = xstrfmt("%s/git/%s.lock", root, hex);
	char *gdir = xstrfmt("%s/git", root);
	int bad = mkdirs(gdir);
	free(gdir);
	if (bad || (fd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		strbuf_addf(err, "git kernels: %s: %s", lockp, strerror(errno));
		goto out;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		if (!quiet)
			fprintf(stderr, "%s: another schedlab uses %s; waiting for it\n", path, clone);
		if (flock(fd, LOCK_EX)) {
			strbuf_addf(err, "git kernels: locking %s: %s", lockp, strerror(errno));
			goto out;
		}
	}
	if (!is_dir(clone)) {
		tmp = xstrfmt("%s.tmp.%ld", clone, (long)getpid());
		if (!quiet)
			fprintf(stderr, "%s: cloning %s into %s (shared objects)\n", path, dir, clone);
		const char *a[] = { "clone", "--quiet", "--shared", "--no-checkout", "--", dir, tmp,
				    NULL };
		if (git(a, 1800, abort_flag, NULL, &e)) {
			strbuf_addf(err, "%s.git: %s", path, e.buf);
			goto out;
		}
		if (rename(tmp, clone)) {
			strbuf_addf(err, "git kernels: rename %s: %s", tmp, strerror(errno));
			goto out;
		}
	}
	if (!quiet)
		fprintf(stderr, "%s: checking out %.12s (%s) in %s\n", path, commit, desc ? desc : "",
			clone);
	{
		/* the commit is 40 hex digits (kgit_spec_check), not an option */
		const char *co[] = { "-C", clone, "checkout", "--quiet", "--force", "--detach",
				     commit, "--", NULL };
		const char *cl[] = { "-C", clone, "clean", "--quiet", "-d", "--force", NULL };
		if (git(co, 1800, abort_flag, NULL, &e) || git(cl, 600, abort_flag, NULL, &e)) {
			strbuf_addf(err, "%s: %s", path, e.buf);
			goto out;
		}
	}
	json_array_foreach(patches, i, f) {
		const char *pf = json_string_value(f);
		const char *a[] = { "-C", clone, "apply", "--index", "--whitespace=nowarn", "--",
				    pf, NULL };
		struct strbuf raw = STRBUF_INIT;
		strbuf_reset(&e);
		if (git_raw(a, 600, abort_flag, NULL, 0, &raw, &e)) {
			strbuf_addf(err, "%s.patches[%zu]: %s does not apply on %.12s (%s)%s; "
				    "git apply says:\n%s", path, i, pf, commit, desc ? desc : "",
				    i ? " after the patches before it" : "", raw.len ? raw.buf : e.buf);
			strbuf_release(&raw);
			goto out;
		}
		strbuf_release(&raw);
	}
	*tree = clone;
	clone = NULL;
	*source_id = kgit_source_id(commit, texts, np);
	*lock_fd = fd;
	fd = -1;
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	for (i = 0; i < np; i++)
		strbuf_release(&texts[i]);
	free(texts);
	free(root);
	free(clone);
	free(lockp);
	free(tmp);
	strbuf_release(&e);
	return ret;
}
