/*
 * Kernel variants (issue 6): a plan's matrix.kernel may name a variant,
 *   {"variant": ["hz1000", "sched_mc_off"], "base": "minimal", "source": DIR}
 * instead of a kernel folder, or a kernel from git ({"git": DIR, "ref": REF,
 * "patches": [...], ...}, harness/orchestrate/kgit.h). Before a session starts, `schedlab run` builds
 * each variant (or finds it in the cache) with kernels/build-variant.sh, run
 * through the child-process module, and puts the folder it printed into the
 * spec as "image", so the stored plan and the boot rows name the built kernel.
 * docs/kernels.md describes the recipe and the cache.
 *
 * The pure half (no files but the fragments, no children): spec validation,
 * fragment parsing and merging with conflict detection, the label, the
 * script's argv. It serves plan validation (plan.c), so that a misspelt
 * fragment or two fragments that disagree (hz100 with hz1000) are bad input
 * at plan time, exit 2, before anything is built.
 */
#ifndef SL_KBUILD_H
#define SL_KBUILD_H

#include <jansson.h>

#include "harness/util/strbuf.h"

/*
 * The kernels/ folder (fragments, base configs, build-variant.sh):
 * $SCHEDLAB_KERNELS_DIR, else kernels/ next to the executable's folder
 * (bin/../kernels, build/tests/../../kernels), else ./kernels. NULL when none
 * has a fragments/ folder. Static storage.
 */
const char *kbuild_kernels_dir(void);

/*
 * Parse one config fragment's text into an object {"CONFIG_X": "y"|"n"|value}
 * ("# CONFIG_X is not set" gives "n"; later lines win). -1 with a message
 * naming `name` and the line on anything else than comments, blank lines and
 * the two forms.
 */
int kbuild_fragment_parse(const char *text, const char *name, json_t **out, struct strbuf *err);

/*
 * Merge parsed fragments in order into one object; two fragments that set one
 * option to different values conflict: -1 with "fragments A and B conflict on
 * CONFIG_X (a vs b)". `names` and `frags` have n entries.
 */
int kbuild_merge(const char *const *names, json_t *const *frags, size_t n, json_t **out,
		 struct strbuf *err);

/*
 * Validate a variant spec object at JSON path `path` ("matrix.kernel[1]"):
 * keys variant (non-empty array of distinct fragment names from
 * `kdir`/fragments, or paths of .config files), base ("minimal" default, or
 * "distro"), source (an existing folder), image (set by `schedlab run`). The
 * fragments are read, parsed and merged, so conflicts are found here.
 */
int kbuild_spec_check(const json_t *spec, const char *path, const char *kdir,
		      struct strbuf *err);

/* "variant:minimal:hz1000+sched_mc_off" (malloc'd); a spec that failed the
 * check gives whatever it can */
char *kbuild_label(const json_t *spec);

/* the argv of build-variant.sh for a spec (script path first; the fragments
 * after "--") */
void kbuild_argv(const json_t *spec, const char *script, struct strvec *argv);
/* the same with a source tree, a source identity for the cache key (with it
 * --keep-tree: one build tree kept per checkout) and a release tag (git
 * kernels: schedlab's checkout, kgit_source_id, kgit_release_tag); NULL
 * leaves each out */
void kbuild_argv_tree(const json_t *spec, const char *script, const char *tree,
		      const char *source_id, const char *tag, struct strvec *argv);

/*
 * Build one variant spec (or find it in the cache) with
 * kernels/build-variant.sh; the kernel folder it printed in *folder
 * (malloc'd). A git kernel (kgit.h, already resolved) is checked out and
 * patched in schedlab's own clone first; `path` ("matrix.kernel[0]") names
 * the spec in messages. The script's progress lines go to stderr unless `quiet` (then
 * only a failure's tail is shown). `abort_flag` (Ctrl-C) stops the build.
 * -1 with a message; -2 (also with a message) when the recipe ran and the
 * kernel did not build (build-variant.sh exit 4: make failed), which
 * `schedlab bisect` tells from other failures: such a commit is skipped.
 */
int kbuild_build(const json_t *spec, const char *path, int quiet, volatile int *abort_flag,
		 char **folder, struct strbuf *err);

#endif
