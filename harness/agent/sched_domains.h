/*
 * The sched domains a kernel built, as one readable value: sysinfo's field
 * "sched_domains" (sysinfo.c collects it on the target; the controller
 * checks it with sched_domains_parse before it is stored, since it comes
 * from the agent). docs/virtual-time.md, "Topology", shows what a qemu
 * topology gives.
 *
 * Format: entries "cpuLIST: LEVEL LEVEL ..." joined by "; ", one per set of
 * CPUs whose levels read the same (LIST in the kernel's CPU list format),
 * ordered by their first CPU; a LEVEL is the domain's name and, when
 * /proc/schedstat gives it, its span in braces, with "*" after the CPU's
 * LLC domain (the widest one whose flags say it shares the last-level
 * cache: SD_SHARE_PKG_RESOURCES, SD_SHARE_LLC from 6.10); "none" for a CPU
 * without domains (one CPU, or an isolated one). Example, 2 sockets of 2
 * cores on 6.1:
 *   cpu0-1: MC{0-1}* DIE{0-3}; cpu2-3: MC{2-3}* DIE{0-3}
 *
 * Sources: names and flags from /sys/kernel/debug/sched/domains/cpuN/
 * domainM/{name,flags} (5.13+, debugfs), else /proc/sys/kernel/
 * sched_domain/cpuN/domainM/ (older kernels); spans from /proc/schedstat's
 * domainM lines (a hex mask; from version 17 after the domain's name).
 */
#ifndef SL_SCHED_DOMAINS_H
#define SL_SCHED_DOMAINS_H

#include "harness/util/strbuf.h"

/* the longest value the agent sends and the controller takes */
#define SCHED_DOMAINS_MAX 8192

/* read below root ("" on a real machine) into out; the source (the
 * directory the names came from) into source; -1 with why */
int sched_domains_read(const char *root, struct strbuf *out, const char **source,
		       struct strbuf *why);

/* the value as sched_domains_read writes it: the number of entries, or -1
 * with why (over SCHED_DOMAINS_MAX, or not of the format) */
int sched_domains_parse(const char *text, struct strbuf *why);

/* a /proc/schedstat cpumask ("3", "ff,00000001") as a CPU list into out;
 * -1 when malformed or past 4096 CPUs */
int sched_domains_mask_list(const char *mask, struct strbuf *out);

#endif
