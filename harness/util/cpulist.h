/*
 * The kernel's CPU list format ("0-3,8,10-11", as in sysfs shared_cpu_list
 * and /sys/devices/system/cpu/online): the one parser of it. Pure, so it is
 * unit tested; sysinfo counts online CPUs with it and the native workloads
 * group CPUs by last-level cache with it.
 *
 * Syntax: comma-separated items, each a number or a range A-B with A <= B;
 * leading and trailing whitespace (a sysfs file's newline) is allowed, an
 * empty list is valid and holds no CPU.
 */
#ifndef SL_CPULIST_H
#define SL_CPULIST_H

/* Call fn(a, b, ctx) for every range in the list, in order (a single CPU is
 * a range a..a). Returns 0, -1 when the text is malformed, or the first
 * non-zero value fn returned. */
int cpulist_ranges(const char *s, int (*fn)(long a, long b, void *ctx), void *ctx);

/* Set set[c] = 1 for every CPU c in the list (set has `max` entries, zeroed
 * by the caller). Returns the number of distinct CPUs in the list, or -1
 * when the text is malformed or names a CPU >= max. */
int cpulist_parse(const char *s, unsigned char *set, int max);

/* the number of CPUs the list names (ranges summed), -1 when malformed */
int cpulist_count(const char *s);

/* the first CPU in the list, or -1 when empty or malformed */
int cpulist_first(const char *s);

#endif
