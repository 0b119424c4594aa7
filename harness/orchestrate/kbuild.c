/*
 * Kernel variants: validation of variant specs (pure, used by plan.c) and the
 * build step `schedlab run` performs before a session starts. The build is
 * kernels/build-variant.sh (merge_config.sh, olddefconfig, the check that every
 * requested option survived, make, the cache keyed by source and fragments),
 * run here through the child-process module with its progress lines passed on
 * to stderr; its last stdout line is the kernel folder. See kbuild.h and
 * docs/kernels.md.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/orchestrate/kbuild.h"
#include "harness/orchestrate/kgit.h"
#include "harness/util/proc.h"

static const char *const spec_keys[] = { "variant", "base", "source", "series", "image", "git",
					 "ref", "patches", "fetch", "dirty", "commit", "describe",
					 NULL };

/* "6.12": Debian's linux-source-<series> as the source (build-variant.sh
 * --series); digits, one dot, digits */
static int series_ok(const char *s)
{
	int dots = 0, digits = 0;
	for (const char *p = s; p && *p; p++) {
		if (*p == '.') {
			if (!digits || dots++)
				return 0;
			digits = 0;
		} else if (*p >= '0' && *p <= '9') {
			digits++;
		} else {
			return 0;
		}
	}
	return s && dots == 1 && digits > 0 && strlen(s) < 8;
}
static const char *const bases[] = { "minimal", "distro", NULL };

static int is_dir(const char *p)
{
	struct stat st;
	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

const char *kbuild_kernels_dir(void)
{
	static char dir[PATH_MAX];
	static int done;
	if (done)
		return dir[0] ? dir : NULL;
	done = 1;
	const char *env = getenv("SCHEDLAB_KERNELS_DIR");
	char exe[PATH_MAX], cand[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *rel[] = { "/../kernels", "/../../kernels", NULL };
	if (env && *env) {
		snprintf(dir, sizeof(dir), "%s", env);
		return dir;
	}
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = 0;
		for (int i = 0; rel[i]; i++) {
			snprintf(cand, sizeof(cand), "%s%s/fragments", exe, rel[i]);
			if (is_dir(cand) && realpath(cand, dir)) {
				dir[strlen(dir) - strlen("/fragments")] = 0;
				return dir;
			}
		}
	}
	if (is_dir("kernels/fragments") && realpath("kernels", dir))
		return dir;
	dir[0] = 0;
	return NULL;
}

/* ------------------------------------------------------------------ pure */

static int valid_symbol(const char *s, size_t len)
{
	if (len <= 7 || strncmp(s, "CONFIG_", 7))
		return 0;
	for (size_t i = 7; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return 1;
}

int kbuild_fragment_parse(const char *text, const char *name, json_t **out, struct strbuf *err)
{
	json_t *o = json_object();
	int lineno = 0;
	const char *p = text;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char *line = xmalloc(len + 1);
		memcpy(line, p, len);
		line[len] = 0;
		p += len + (e ? 1 : 0);
		lineno++;
		size_t l = strlen(line);
		while (l && (line[l - 1] == ' ' || line[l - 1] == '\t' || line[l - 1] == '\r'))
			line[--l] = 0;
		const char *eq = strchr(line, '=');
		int ok = 1;
		if (!strncmp(line, "# CONFIG_", 9)) {
			const char *sym = line + 2, *sp = strchr(sym, ' ');
			if (sp && !strcmp(sp, " is not set") && valid_symbol(sym, (size_t)(sp - sym))) {
				char *s = xmalloc((size_t)(sp - sym) + 1);
				memcpy(s, sym, (size_t)(sp - sym));
				s[sp - sym] = 0;
				json_object_set_new(o, s, json_string("n"));
				free(s);
			} else {
				ok = 0;
			}
		} else if (!line[0] || line[0] == '#') {
			/* comment or blank */
		} else if (eq && valid_symbol(line, (size_t)(eq - line)) && eq[1]) {
			line[eq - line] = 0;
			json_object_set_new(o, line, json_string(eq + 1));
		} else {
			ok = 0;
		}
		if (!ok) {
			/* the line itself is not shown: a fragment path may name any
			   file the user can read (issue 33: the first line of a file
			   was printed) */
			strbuf_addf(err, "fragment %s, line %d: expected CONFIG_X=value, \"# CONFIG_X "
				    "is not set\", a comment or a blank line", name, lineno);
			free(line);
			json_decref(o);
			return -1;
		}
		free(line);
	}
	*out = o;
	return 0;
}

int kbuild_merge(const char *const *names, json_t *const *frags, size_t n, json_t **out,
		 struct strbuf *err)
{
	json_t *m = json_object(), *from = json_object();
	for (size_t i = 0; i < n; i++) {
		const char *sym;
		json_t *v;
		json_object_foreach(frags[i], sym, v) {
			json_t *old = json_object_get(m, sym);
			if (old && !json_equal(old, v)) {
				size_t j = (size_t)json_integer_value(json_object_get(from, sym));
				strbuf_addf(err, "fragments %s and %s conflict on %s (%s vs %s)",
					    names[j], names[i], sym, json_string_value(old),
					    json_string_value(v));
				json_decref(m);
				json_decref(from);
				return -1;
			}
			json_object_set(m, sym, v);
			json_object_set_new(from, sym, json_integer((json_int_t)i));
		}
	}
	json_decref(from);
	*out = m;
	return 0;
}

static int in_list(const char *const *l, const char *s)
{
	for (; *l; l++)
		if (!strcmp(*l, s))
			return 1;
	return 0;
}

static int fragment_name_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return 0;
	return 1;
}

/* the file a fragment entry names: kdir/fragments/NAME.config, or a path */
static char *fragment_file(const char *kdir, const char *f)
{
	if (strchr(f, '/'))
		return xstrdup(f);
	return xstrfmt("%s/fragments/%s.config", kdir ? kdir : "kernels", f);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void known_fragments(const char *kdir, struct strbuf *sb)
{
	struct strvec av = STRVEC_INIT;
	char *pat = xstrfmt("%s/fragments", kdir ? kdir : "kernels");
	/* readdir, sorted */
	DIR *d = opendir(pat);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d))) {
			size_t l = strlen(de->d_name);
			if (l > 7 && !strcmp(de->d_name + l - 7, ".config")) {
				char *n = xstrdup(de->d_name);
				n[l - 7] = 0;
				strvec_push(&av, n);
				free(n);
			}
		}
		closedir(d);
	}
	qsort(av.v, av.nr, sizeof(*av.v), cmp_str);
	for (size_t i = 0; i < av.nr; i++)
		strbuf_addf(sb, "%s%s", i ? " " : "", av.v[i]);
	if (!av.nr)
		strbuf_addf(sb, "none: no %s", pat);
	strvec_clear(&av);
	free(pat);
}

int kbuild_spec_check(const json_t *spec, const char *path, const char *kdir,
		      struct strbuf *err)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)spec, key, v) {
		if (!in_list(spec_keys, key)) {
			strbuf_addf(err, "%s.%s: unknown key (valid: variant, base, source, image; "
				    "for a kernel from git: git, ref, patches, fetch, dirty)",
				    path, key);
			return -1;
		}
	}
	int from_git = kgit_is_git(spec);
	if (!from_git)
		for (const char *const *g = spec_keys + 5; *g; g++) /* from "git" on */
			if (json_object_get(spec, *g)) {
				strbuf_addf(err, "%s.%s: only for a kernel from git (\"git\": DIR, "
					    "\"ref\": REF)", path, *g);
				return -1;
			}
	if (from_git && kgit_spec_check(spec, path, err))
		return -1;
	json_t *var = json_object_get(spec, "variant");
	if (from_git && (!var || (json_is_array(var) && !json_array_size(var)))) {
		/* a git kernel may be the base config alone */
	} else if (!json_is_array(var) || !json_array_size(var)) {
		strbuf_addf(err, "%s.variant: must be a non-empty array of fragment names "
			    "(e.g. [\"hz1000\", \"sched_mc_off\"])", path);
		return -1;
	}
	v = json_object_get(spec, "base");
	if (v && (!json_is_string(v) || !in_list(bases, json_string_value(v)))) {
		strbuf_addf(err, "%s.base: must be \"minimal\" (qemu guests) or \"distro\" "
			    "(a distribution config)", path);
		return -1;
	}
	v = json_object_get(spec, "series");
	if (v && (!json_is_string(v) || !series_ok(json_string_value(v)))) {
		strbuf_addf(err, "%s.series: must be a kernel series like \"6.12\" (Debian's "
			    "linux-source-<series> as the source)", path);
		return -1;
	}
	if (v && (json_object_get(spec, "source") || from_git)) {
		strbuf_addf(err, "%s.series: only for Debian's source; a kernel from \"source\" or "
			    "\"git\" has its own version", path);
		return -1;
	}
	v = json_object_get(spec, "source");
	if (v && (!json_is_string(v) || !json_string_length(v))) {
		strbuf_addf(err, "%s.source: must be the path of a kernel source tree", path);
		return -1;
	}
	if (v) {
		char *mk = xstrfmt("%s/scripts/kconfig/merge_config.sh", json_string_value(v));
		int ok = access(mk, R_OK) == 0;
		free(mk);
		if (!ok) {
			strbuf_addf(err, "%s.source: %s is not a kernel source tree (no "
				    "scripts/kconfig/merge_config.sh)", path, json_string_value(v));
			return -1;
		}
	}
	v = json_object_get(spec, "image");
	if (v && (!json_is_string(v) || !json_string_length(v))) {
		strbuf_addf(err, "%s.image: must be a kernel folder (set by schedlab run)", path);
		return -1;
	}

	size_t n = json_array_size(var), i;
	const char **names = xcalloc(n ? n : 1, sizeof(*names));
	json_t **frags = xcalloc(n ? n : 1, sizeof(*frags));
	json_t *merged = NULL, *f;
	int ret = -1;
	json_array_foreach(var, i, f) {
		const char *name = json_string_value(f);
		if (!name || (!strchr(name, '/') && !fragment_name_ok(name))) {
			strbuf_addf(err, "%s.variant[%zu]: must be a fragment name (letters, digits, "
				    "_ and -) or the path of a .config fragment", path, i);
			goto out;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(names[j], name)) {
				strbuf_addf(err, "%s.variant[%zu]: fragment %s is listed twice", path,
					    i, name);
				goto out;
			}
		names[i] = name;
		char *file = fragment_file(kdir, name);
		struct strbuf text = STRBUF_INIT, e = STRBUF_INIT;
		struct stat fst;
		if (strchr(name, '/') && !stat(file, &fst) && !S_ISREG(fst.st_mode)) {
			/* a FIFO would block the read, a device never end */
			strbuf_addf(err, "%s.variant[%zu]: fragment %s: not a regular file", path, i,
				    file);
			free(file);
			goto out;
		}
		if (strbuf_read_file(&text, file, 1 << 20) < 0) {
			if (strchr(name, '/'))
				strbuf_addf(err, "%s.variant[%zu]: fragment %s: %s", path, i, file,
					    strerror(errno));
			else {
				strbuf_addf(err, "%s.variant[%zu]: unknown fragment \"%s\" (known: ",
					    path, i, name);
				known_fragments(kdir, err);
				strbuf_addch(err, ')');
			}
			free(file);
			strbuf_release(&text);
			goto out;
		}
		free(file);
		int bad = kbuild_fragment_parse(text.buf, name, &frags[i], &e);
		strbuf_release(&text);
		if (bad) {
			strbuf_addf(err, "%s.variant[%zu]: %s", path, i, e.buf);
			strbuf_release(&e);
			goto out;
		}
		strbuf_release(&e);
	}
	struct strbuf e = STRBUF_INIT;
	if (kbuild_merge(names, frags, n, &merged, &e)) {
		strbuf_addf(err, "%s.variant: %s", path, e.buf);
		strbuf_release(&e);
		goto out;
	}
	strbuf_release(&e);
	ret = 0;
out:
	for (i = 0; i < n; i++)
		json_decref(frags[i]);
	json_decref(merged);
	free(frags);
	free(names);
	return ret;
}

char *kbuild_label(const json_t *spec)
{
	struct strbuf sb = STRBUF_INIT;
	const char *base = json_string_value(json_object_get(spec, "base"));
	if (kgit_is_git(spec)) {
		const char *commit = json_string_value(json_object_get(spec, "commit"));
		const char *desc = json_string_value(json_object_get(spec, "describe"));
		size_t np = json_array_size(json_object_get(spec, "patches"));
		if (commit)
			strbuf_addf(&sb, "git:%.12s(%s)", commit, desc ? desc : "");
		else
			strbuf_addf(&sb, "git:%s@%s%s", json_string_value(json_object_get(spec, "git")),
				    json_string_value(json_object_get(spec, "ref")),
				    np ? "+patches" : "");
		strbuf_addf(&sb, ":%s", base ? base : "minimal");
		size_t i;
		json_t *f;
		json_array_foreach(json_object_get(spec, "variant"), i, f)
			strbuf_addf(&sb, "%s%s", i ? "+" : ":",
				    json_string_value(f) ? json_string_value(f) : "?");
		return strbuf_detach(&sb, NULL);
	}
	strbuf_addf(&sb, "variant:%s:", base ? base : "minimal");
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(spec, "variant"), i, f)
		strbuf_addf(&sb, "%s%s", i ? "+" : "", json_string_value(f) ? json_string_value(f) : "?");
	const char *src = json_string_value(json_object_get(spec, "source"));
	const char *series = json_string_value(json_object_get(spec, "series"));
	if (src)
		strbuf_addf(&sb, "@%s", src);
	else if (series)
		strbuf_addf(&sb, "@linux-source-%s", series);
	return strbuf_detach(&sb, NULL);
}

void kbuild_argv(const json_t *spec, const char *script, struct strvec *argv)
{
	kbuild_argv_tree(spec, script, NULL, NULL, NULL, argv);
}

void kbuild_argv_tree(const json_t *spec, const char *script, const char *tree,
		      const char *source_id, const char *tag, struct strvec *argv)
{
	const char *base = json_string_value(json_object_get(spec, "base"));
	const char *src = tree ? tree : json_string_value(json_object_get(spec, "source"));
	const char *series = json_string_value(json_object_get(spec, "series"));
	strvec_push(argv, script);
	strvec_push(argv, "--base");
	strvec_push(argv, base ? base : "minimal");
	if (series && !src) {
		strvec_push(argv, "--series");
		strvec_push(argv, series);
	}
	if (src) {
		strvec_push(argv, "--source");
		strvec_push(argv, src);
	}
	if (source_id) {
		/* a git kernel: its identity, and one kept build tree per
		 * checkout so that the next commit rebuilds what changed */
		strvec_push(argv, "--source-id");
		strvec_push(argv, source_id);
		strvec_push(argv, "--keep-tree");
	}
	if (tag) {
		strvec_push(argv, "--tag");
		strvec_push(argv, tag);
	}
	/* fragment names after "--": a path could start with '-' */
	strvec_push(argv, "--");
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(spec, "variant"), i, f)
		strvec_push(argv, json_string_value(f));
}

/* ------------------------------------------------------------- the build */

int kbuild_build(const json_t *spec, const char *path, int quiet, volatile int *abort_flag,
		 char **folder, struct strbuf *err)
{
	const char *kdir = kbuild_kernels_dir();
	if (!kdir) {
		strbuf_addstr(err, "kernel variants: cannot find the kernels/ folder (set "
			      "SCHEDLAB_KERNELS_DIR)");
		return -1;
	}
	char *script = xstrfmt("%s/build-variant.sh", kdir);
	struct strvec av = STRVEC_INIT;
	char *tree = NULL, *source_id = NULL, *tag = NULL;
	int lock_fd = -1;
	if (kgit_is_git(spec)) {
		/* the checkout stays locked until the build has read it */
		if (kgit_prepare(spec, path ? path : "matrix.kernel", quiet, abort_flag, &tree,
				 &source_id, &lock_fd, err)) {
			free(script);
			return -1;
		}
		tag = kgit_release_tag(json_string_value(json_object_get(spec, "commit")),
				       source_id);
	}
	kbuild_argv_tree(spec, script, tree, source_id, tag, &av);
	struct child c = CHILD_INIT;
	c.argv = strvec_argv(&av);
	c.in = PROC_NULL;
	c.out = PROC_PIPE;
	c.err = quiet ? PROC_PIPE : PROC_INHERIT;
	c.new_pgrp = 1;
	struct strbuf out = STRBUF_INIT, eout = STRBUF_INIT;
	struct proc_result res;
	int ret = -1;
	/* a distro build takes hours; the minimal one about 5 min on 2 cores */
	const struct proc_io io = { .timeout_s = 6 * 3600.0, .out = &out, .errout = &eout,
				    .err_max = 8192, .abort_fd = -1, .abort_flag = abort_flag };
	if (proc_exec(&c, &io, &res, err))
		goto out;
	if (res.exit_code != 0) {
		char *label = kbuild_label(spec);
		strbuf_addf(err, "kernel %s: build-variant.sh %s", label,
			    res.timed_out ? "timed out"
			    : res.exit_code < 0 ? "was killed" : "failed");
		if (res.exit_code == 4 && !res.timed_out)
			ret = -2;
		if (res.exit_code > 0)
			strbuf_addf(err, " (exit %d%s)", res.exit_code,
				    res.exit_code == 3 ? ": a requested option did not survive "
				    "olddefconfig or fragments conflict"
				    : res.exit_code == 4 ? ": the kernel did not compile" : "");
		strbuf_trim(&eout);
		if (eout.len)
			strbuf_addf(err, ":\n%s", eout.buf);
		free(label);
		goto out;
	}
	strbuf_trim(&out);
	const char *last = strrchr(out.buf, '\n');
	last = last ? last + 1 : out.buf;
	char *kj = xstrfmt("%s/kernel.json", last);
	int ok = *last == '/' && access(kj, R_OK) == 0;
	free(kj);
	if (!ok) {
		strbuf_addf(err, "build-variant.sh printed no kernel folder (\"%s\")", last);
		goto out;
	}
	*folder = xstrdup(last);
	ret = 0;
out:
	if (lock_fd >= 0)
		close(lock_fd);
	free(tree);
	free(source_id);
	free(tag);
	strbuf_release(&out);
	strbuf_release(&eout);
	strvec_clear(&av);
	free(script);
	return ret;
}
