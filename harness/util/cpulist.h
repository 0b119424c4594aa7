/*
 * Parsing of the kernel's CPU list format ("0-3,8,10-11", as in sysfs
 * shared_cpu_list and /sys/devices/system/cpu/online). Pure, so it is unit
 * tested; the native workloads use it to group CPUs by last-level cache.
 */
#ifndef SL_CPULIST_H
#define SL_CPULIST_H

/* Set set[c] = 1 for every CPU c in the list (set has `max` entries, zeroed
 * by the caller). Returns the number of CPUs in the list, or -1 when the
 * text is malformed or names a CPU >= max. Trailing whitespace is allowed. */
int cpulist_parse(const char *s, unsigned char *set, int max);

/* the lowest CPU in the list, or -1 when empty or malformed */
int cpulist_first(const char *s);

#endif
