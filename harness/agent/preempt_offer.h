/*
 * What a kernel offers: the preemption modes a boot with preempt=MODE gets on
 * a kernel, decided from its config alone (pure: a config text in, a set of
 * modes out), so that a plan is checked before anything boots
 * (harness/orchestrate/plan.c, docs/kernels.md "What a kernel offers").
 *
 * The rules follow kernel/Kconfig.preempt and sched_dynamic_mode():
 *
 *   not PREEMPT_DYNAMIC   only the built model (preempt= is not even a
 *                         parameter); PREEMPT_NONE -> none, PREEMPT_VOLUNTARY
 *                         -> voluntary, PREEMPT -> full, PREEMPT_LAZY -> lazy,
 *                         PREEMPT_RT (6.1: a member of the choice) -> full;
 *                         PREEMPT_LAZY counts only with ARCH_HAS_PREEMPT_LAZY
 *                         (the 6.1 RT patch set's PREEMPT_LAZY is another
 *                         option: Debian's 6.1 RT kernel offers full)
 *   PREEMPT_DYNAMIC       none, voluntary, full (6.1-6.12)
 *     + lazy              with ARCH_HAS_PREEMPT_LAZY (6.13: "sched: Add Lazy
 *                         preemption model"; Debian's 6.12 RT kernel has it
 *                         backported with the RT patch set)
 *     + laziest           with ARCH_HAS_PREEMPT_LAZY where the config has
 *                         PREEMPT_LAZIEST (set or "is not set": the RT patch
 *                         set's "sched: Add laziest preempt model", in
 *                         Debian's 6.12 RT kernel, never upstream)
 *     - none, voluntary   with PREEMPT_RT (6.13 took RT out of the choice and
 *                         allowed it with PREEMPT_DYNAMIC: full and lazy)
 *     - none              from 7.0 (PREEMPT_NONE needs ARCH_NO_PREEMPT, which
 *                         rules out PREEMPT_DYNAMIC)
 *     - voluntary         from 7.0 with ARCH_HAS_PREEMPT_LAZY ("sched: Further
 *                         restrict the preemption modes": x86, arm64, s390,
 *                         powerpc, riscv, loongarch offer only full and lazy)
 *
 * The version comes from the config's header ("# Linux/x86 7.0.0 Kernel
 * Configuration"), else from the release given; unknown, the 7.0 rules are
 * not applied and the offer says so.
 */
#ifndef SL_PREEMPT_OFFER_H
#define SL_PREEMPT_OFFER_H

#include <jansson.h>

#include "harness/util/strbuf.h"

enum {
	PM_NONE = 1,
	PM_VOLUNTARY = 2,
	PM_FULL = 4,
	PM_LAZY = 8,
	PM_LAZIEST = 16,
};

struct preempt_offer {
	unsigned modes;        /* PM_* a boot with preempt=MODE gets */
	unsigned built;        /* the PM_* of the build's model (the default mode) */
	int dynamic;           /* CONFIG_PREEMPT_DYNAMIC=y */
	int rt;                /* CONFIG_PREEMPT_RT=y */
	int lazy_arch;         /* CONFIG_ARCH_HAS_PREEMPT_LAZY=y */
	int laziest;           /* the RT patch set's PREEMPT_LAZIEST exists */
	int major, minor;      /* the kernel version; 0.0 unknown */
};

/* decide from a .config text (`release`, may be NULL: "6.1.0-57-amd64", for
 * the version when the header lacks it); -1 naming why when the config names
 * no preemption model */
int preempt_offer_decide(const char *config, const char *release, struct preempt_offer *o,
			 struct strbuf *why);
/* the same from the config file at `path` (a kernel folder's): 1 decided;
 * 0 when there is no such file (nothing known: the target says); -1 naming
 * why in `why` when the file is there but is no kernel config: not a
 * regular file (a FIFO, never waited on; a folder; a device), larger than
 * 16 MiB, not text, or naming no preemption model */
int preempt_offer_of_file(const char *path, const char *release, struct preempt_offer *o,
			  struct strbuf *why);
/* PM_* of "none", "voluntary", "full", "lazy", "laziest"; 0 for anything else */
unsigned preempt_mode_bit(const char *mode);
/* does the kernel offer `mode`? */
int preempt_offer_has(const struct preempt_offer *o, const char *mode);
/* "full, lazy" */
void preempt_offer_modes(unsigned modes, struct strbuf *sb);
/* "full, lazy (PREEMPT_RT, PREEMPT_DYNAMIC, built full; Linux 6.13)" */
void preempt_offer_describe(const struct preempt_offer *o, struct strbuf *sb);

/*
 * The effective model of a booted kernel (docs/kernels.md "The effective
 * model"): `mode` is what a plan's preempt= is checked against (none,
 * voluntary, full, lazy), `model` what is stored as boot.preempt and so
 * results.preempt: the mode, except on a PREEMPT_RT kernel, where full is
 * "rt", lazy "rt-lazy" and laziest "rt-laziest" (6.12-rt, 6.13 on: an RT kernel with PREEMPT_DYNAMIC
 * offers full and lazy, and /sys/kernel/debug/sched/preempt prints the
 * same "(full) lazy " as a non-RT 7.0 kernel: only the config or uname -v
 * tells them apart). NULL: cannot be told.
 *
 * From upstream kernel/sched/debug.c sched_dynamic_show(): the modes from
 * index i = IS_ENABLED(CONFIG_PREEMPT_RT) * 2 (6.13; 7.0 adds "||
 * IS_ENABLED(CONFIG_ARCH_HAS_PREEMPT_LAZY)") of { "none", "voluntary",
 * "full", "lazy" }, lazy only with ARCH_HAS_PREEMPT_LAZY, the current one
 * in parentheses, each followed by a space: "none voluntary (full) lazy \n"
 * (6.13 x86), "(full) lazy \n" (6.13 RT; 7.0 x86, RT or not). A kernel
 * without PREEMPT_DYNAMIC has no such file and runs its built model.
 */
struct preempt_effective {
	const char *mode;
	const char *model;
};
/* cur: the (current) choice of /sys/kernel/debug/sched/preempt or NULL;
 * built: sysinfo's preempt_build ("none".."lazy", "rt", NULL or
 * "unknown"); dynamic: 1, 0, or -1 unknown; rt: PREEMPT_RT */
void preempt_effective_of(const char *cur, const char *built, int dynamic, int rt,
			  struct preempt_effective *e);
/* the same from a sysinfo object (preempt, preempt_build, preempt_dynamic;
 * PREEMPT_RT from preempt_build "rt" or a "PREEMPT_RT" word in
 * kernel_version, which is uname -v: "#1 SMP PREEMPT_RT ...") */
void preempt_effective_sysinfo(const json_t *si, struct preempt_effective *e);
/* the mode of a stored model: "rt" -> "full", "rt-lazy" -> "lazy",
 * "rt-laziest" -> "laziest", else
 * the model itself */
const char *preempt_model_mode(const char *model);

#endif
