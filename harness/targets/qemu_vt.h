/*
 * Which qemu the qemu target runs, and what it can do (issue 49).
 *
 * A virtual clock on more than one vCPU needs qemu >= 8.1: qemu 7.2's icount
 * round robin gives CPU 0 the whole budget and a 2-vCPU guest hangs in its
 * CPU bring-up ("ensure fairness with icount", qemu 8.1; docs/virtual-time.md).
 * `make -C kernels qemu` (kernels/qemu-vt.sh) provides one: the system's
 * when it is new enough, else Debian 13's behind a wrapper at a fixed path
 * under the cache, which is where this module looks for it. A plan's own
 * "qemu" key always wins.
 *
 * The version is asked once per binary and process (`BINARY -version`) and
 * recorded with every boot (boot.qemu_version): a series of one qemu is
 * never pooled with another's (docs/analysis.md).
 */
#ifndef SL_QEMU_VT_H
#define SL_QEMU_VT_H

#include <jansson.h>

#include "harness/util/strbuf.h"

/* the oldest qemu that runs a virtual clock on more than one vCPU, and how
 * many vCPUs a virtual clock admits (every vCPU takes its turn in one host
 * thread: a guest second costs N times the host time) */
#define QEMU_VT_MIN_MAJOR 8
#define QEMU_VT_MIN_MINOR 1
#define QEMU_VT_MAX_CPUS 8

struct qemu_version {
	int major, minor, micro;
	char text[32];          /* "10.0.13" */
};

/* the first line of `qemu-system-x86_64 -version` ("QEMU emulator version
 * 10.0.13 (Debian 1:10.0.13+ds-0+deb13u1)") into *v; -1 when it is not one */
int qemu_version_parse(const char *text, struct qemu_version *v);
int qemu_version_at_least(const struct qemu_version *v, int major, int minor);

/* ${XDG_CACHE_HOME:-$HOME/.cache}/schedlab/qemu-vt/qemu-system-x86_64, the
 * wrapper kernels/qemu-vt.sh writes (malloc'd); NULL when neither is set */
char *qemu_vt_provided_path(void);

/*
 * The qemu a checked target object runs (malloc'd): its "qemu" key; else,
 * on a virtual clock, the provided qemu when it is there; else the system's
 * qemu-system-x86_64. *fallback (when non-NULL) is set to 1 when a virtual
 * clock falls back to the system's because the provided one is missing.
 */
char *qemu_vt_binary(const json_t *conf, int *fallback);

/* `BINARY -version`, parsed; the answer is kept per binary for the
 * process. -1 with the reason in err when it does not run or answer */
int qemu_version_probe(const char *binary, struct qemu_version *v, struct strbuf *err);

/*
 * May a virtual clock run `cpus` vCPUs with this qemu? v is its version
 * (NULL: unknown, why in probe_err), binary what runs, fallback as
 * qemu_vt_binary says. 0 yes; -1 with the message (after prefix, which
 * names the plan's key) in err: the version, and `make -C kernels qemu`.
 */
int qemu_vt_admit(long long cpus, const struct qemu_version *v, const char *probe_err,
		  const char *binary, int fallback, const char *prefix, struct strbuf *err);

#endif
