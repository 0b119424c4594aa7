/*
 * Kernels from git (issue 13): a matrix.kernel entry
 *   {"git": DIR, "ref": REF, "patches": [FILE...], "variant": [...],
 *    "base": "minimal", "fetch": false, "dirty": "refuse"}
 * names a commit of a kernel repository plus a patch series instead of a
 * source tree. At session start `schedlab run` resolves REF once to a full
 * commit id (kgit_resolve) and writes it into the spec as "commit", with a
 * short "describe" (`git describe` and the patch count); the stored plan, the
 * boot rows and the results view carry both, and every later step (build,
 * resume) uses the id, never the name, so a branch that moves while a session
 * runs cannot mix two kernels in it.
 *
 * The build (kgit_prepare) never touches the user's working tree: schedlab
 * keeps its own clone per repository ($CACHE/git/<hash of DIR>, `git clone
 * --shared`, so it costs no object copies), checks the commit out there,
 * applies the patches in order with `git apply --index` (one that does not
 * apply stops the session naming the patch, the file and git's message), and
 * hands the tree to kernels/build-variant.sh with a source identity made of
 * the commit and the patches' content (kgit_source_id): with the base, the
 * fragments and the compiler (added by the script) it is the cache key.
 * A user tree with uncommitted changes whose HEAD is the requested commit is
 * refused unless the spec says "dirty": "ignore" (the changes would silently
 * not be in the kernel). All git commands go through the child-process
 * module as argv arrays; refs are user input: one starting with '-' is
 * refused and `--end-of-options` separates it from git's options.
 *
 * The pure half (spec validation, the source id, describe strings, the
 * release tag) is unit-tested in tests/unit/test_kgit.c; the rest by
 * tests/e2e/t0610-kernel-git-qemu.sh. docs/kernels.md has the user's view.
 */
#ifndef SL_KGIT_H
#define SL_KGIT_H

#include <jansson.h>

#include "harness/util/strbuf.h"

/* the largest patch file accepted (all of it is hashed into the kernel's
 * identity, kgit_source_id) */
#define KGIT_PATCH_MAX (64 << 20)

/* does a kernel spec name a git kernel (has "git")? */
int kgit_is_git(const json_t *spec);

/*
 * Validate the git keys of a spec at JSON path `path` (git, ref, patches,
 * fetch, dirty, commit, describe; the variant keys are kbuild.c's): DIR an
 * existing folder, REF a non-empty commit-ish not starting with '-' and
 * without whitespace or control characters, patches readable files, commit 40
 * hex digits. -1 with a message naming the key and what is valid.
 */
int kgit_spec_check(const json_t *spec, const char *path, struct strbuf *err);

/*
 * A repository's own configuration (local and worktree scope, includes
 * followed) must not name a program git would run (core.fsmonitor, hooks,
 * filters, diff drivers, credential helpers, upload-pack, ssh commands...;
 * the list is in kgit.c): -1 with a message naming `path`.git and the key.
 * Every git command schedlab runs also overrides the ones it can
 * (core.fsmonitor, core.hooksPath, credential.helper, protocol.ext.allow).
 */
int kgit_repo_check(const char *dir, const char *path, volatile int *abort_flag,
		    struct strbuf *err);
/* is a config key ("filter.lfs.smudge") one under which git runs a program? */
int kgit_program_key(const char *key);

/* is `ref` acceptable as a commit-ish given to git? 0, or -1 with the reason */
int kgit_ref_ok(const char *ref, struct strbuf *why);

/*
 * The source identity that stands for the tree in the cache key:
 * "git COMMIT" without patches, else "git COMMIT patches N SHA256" where the
 * hash covers every patch's length and content in order (not its name: the
 * same series renamed is the same kernel; reordered or edited is not).
 * malloc'd.
 */
char *kgit_source_id(const char *commit, const struct strbuf *patches, size_t n);

/*
 * The short description stored with every result: `git describe` output
 * (or the 12-digit id) and the patch count: "v6.1-3-g0123456789ab",
 * "v6.1-3-g0123456789ab+2 patches", "+1 patch". malloc'd.
 */
char *kgit_describe(const char *git_describe, const char *commit, size_t npatches);

/*
 * The tag that goes into the kernel release (LOCALVERSION) so that the running
 * kernel names its commit: "g" and 12 digits of the id, and "p" with 8 digits
 * of the patches' hash when there are patches ("g0123456789abp89abcdef").
 * `source_id` is kgit_source_id's result. malloc'd.
 */
char *kgit_release_tag(const char *commit, const char *source_id);

/*
 * Resolve the spec's ref (after `git fetch` when "fetch" is true), check the
 * user's tree for uncommitted changes, make the paths absolute and set
 * "commit" and "describe" in the spec. A spec that already has "commit" (a
 * stored plan, a resumed session) is left alone. `path` names the spec in
 * messages. Progress lines on stderr unless `quiet`. -1 with a message.
 */
int kgit_resolve(json_t *spec, const char *path, int quiet, volatile int *abort_flag,
		 struct strbuf *err);

/*
 * Check the resolved commit out in schedlab's own clone of the repository
 * and apply the patches; the clone's folder in *tree and the source identity
 * in *source_id (both malloc'd). `*lock_fd` is an open file locked with
 * flock() that keeps other schedlab processes out of the clone until the
 * caller has built from it and closed it. -1 with a message.
 */
int kgit_prepare(const json_t *spec, const char *path, int quiet, volatile int *abort_flag,
		 char **tree, char **source_id, int *lock_fd, struct strbuf *err);

/* run git with `args` (after "git"; argv, never a shell), stdout in *out
 * trimmed (NULL: not wanted); -1 with "git ARGS: <git's message>" in err */
int kgit_git(const char *const *args, double timeout_s, volatile int *abort_flag,
	     struct strbuf *out, struct strbuf *err);

#endif
