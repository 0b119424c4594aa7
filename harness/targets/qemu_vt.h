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

/*
 * A qemu target's "topology": {"sockets", "dies", "cores", "threads"} for
 * qemu's -smp (docs/qemu.md). Every level is optional, an integer >= 1; an
 * absent level is 1, except that an absent "cores" (else an absent
 * "sockets") takes what makes the product equal cpus. *cpus is the
 * target's cpus, 0 when absent: then it becomes the product. vt: a virtual
 * clock (at most QEMU_VT_MAX_CPUS vCPUs). tcg: the guest runs under TCG (a
 * virtual clock always does), whose CPU model (qemu64: AMD, family 15, no
 * topoext) shows the guest no SMT siblings, so threads > 1 is refused
 * there rather than run as if it made an SMT level. v: the qemu's version, asked only
 * when dies > 1 (x86 qemu makes dies from 4.1 on); NULL when unknown, why
 * in probe_err. 0 with *t filled; -1 with the message (after prefix, which
 * names the plan file and "target.") in err. Pure.
 */
struct qemu_topology {
	long long sockets, dies, cores, threads;
};
#define QEMU_TOPO_DIES_MAJOR 4
#define QEMU_TOPO_DIES_MINOR 1
int qemu_topology_check(const json_t *topo, long long *cpus, int vt, int tcg,
			const struct qemu_version *v, const char *probe_err, const char *prefix,
			struct strbuf *err, struct qemu_topology *t);
/* whether a topology object asks for more than one die (then the check
 * wants the qemu's version) */
int qemu_topology_wants_dies(const json_t *topo);

#endif
