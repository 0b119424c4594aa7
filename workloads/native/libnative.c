/*
 * Shared helpers of the native workloads (sl-pingpong, sl-jbb); the contract
 * of each is in libnative.h. Linked statically into every bin/sl-* binary.
 */
#include "workloads/native/libnative.h"

#include "analysis/rng.h"
#include "analysis/tasksched.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "harness/util/cpulist.h"

const char *nat_prog = "sl";

void nat_err(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", nat_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- time ---------------------------------------------------------------- */

uint64_t nat_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void nat_sleep_until_ns(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

void nat_sleep_ns(uint64_t d)
{
	nat_sleep_until_ns(nat_now_ns() + d);
}

const char *const nat_clock_names[] = { "auto", "monotonic", NULL };
struct nat_fastclock nat_fc;

#define CLOCKSOURCE_SYSFS "/sys/devices/system/clocksource/clocksource0/current_clocksource"
static const char *clocksource_path = CLOCKSOURCE_SYSFS;

void nat_fastclock_source_path(const char *path)
{
	clocksource_path = path ? path : CLOCKSOURCE_SYSFS;
}

#if defined(__x86_64__)
/* one (tsc, CLOCK_MONOTONIC) pair: the clock read between two rdtsc, the
 * tightest bracket of a few tries (an interrupt in between widens it) */
static void tsc_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 8; i++) {
		uint64_t a = __builtin_ia32_rdtsc();
		uint64_t n = nat_now_ns();
		uint64_t b = __builtin_ia32_rdtsc();
		if (b > a && b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = n;
		}
	}
}

static int clocksource_is_tsc(void)
{
	char buf[32] = "";
	FILE *f = fopen(clocksource_path, "r");
	if (!f)
		return 0;
	int ok = fgets(buf, sizeof(buf), f) && !strcmp(buf, "tsc\n");
	fclose(f);
	return ok;
}
#endif

const char *nat_fastclock_init(int mode)
{
	nat_fc = (struct nat_fastclock){ 0 };
#if defined(__x86_64__)
	if (mode != NAT_CLOCK_AUTO || !clocksource_is_tsc())
		return "monotonic";
	uint64_t t0 = 0, n0 = 0, t1 = 0, n1 = 0;
	tsc_pair(&t0, &n0);
	nat_sleep_ns(20000000);
	tsc_pair(&t1, &n1);
	/* a TSC that does not advance, or runs under 1 MHz or over 100 GHz, is
	 * not one to measure with */
	if (t1 <= t0 || n1 <= n0 || (t1 - t0) < (n1 - n0) / 1000 || (t1 - t0) > (n1 - n0) * 100)
		return "monotonic";
	nat_fc.mult = (uint64_t)(((unsigned __int128)(n1 - n0) << 32) / (t1 - t0));
	nat_fc.base_tsc = t1;
	nat_fc.base_ns = n1;
	nat_fc.tsc = 1;
	return "tsc";
#else
	(void)mode;
	return "monotonic";
#endif
}

int nat_fastclock_still_valid(void)
{
#if defined(__x86_64__)
	return !nat_fc.tsc || clocksource_is_tsc();
#else
	return 1;
#endif
}

uint64_t nat_fastclock_tsc_khz(void)
{
	/* mult = 2^32 ns per tick: kHz = 1e6 * 2^32 / mult */
	return nat_fc.tsc && nat_fc.mult ? (uint64_t)((1000000ull << 32) / nat_fc.mult) : 0;
}

int64_t nat_fastclock_drift_ns(void)
{
#if defined(__x86_64__)
	if (nat_fc.tsc) {
		uint64_t t = 0, n = 0;
		tsc_pair(&t, &n);
		return (int64_t)(n - nat_tsc_to_ns(t));
	}
#endif
	return 0;
}

void nat_fast_sleep_until(uint64_t t)
{
	uint64_t now;
	while ((now = nat_fast_ns()) < t)
		nat_sleep_ns(t - now);
}

/* ---- PRNG (analysis/rng.c) ------------------------------------------------- */

void nat_rng_seed(struct nat_rng *r, uint64_t seed, uint64_t stream)
{
	rng_fill(r->s, seed * 0x2545f4914f6cdd1dull + stream * 0x9e3779b97f4a7c15ull + 1);
}

uint64_t nat_rng_next(struct nat_rng *r)
{
	return rng_next(r->s);
}

double nat_rng_unit(struct nat_rng *r)
{
	return ((double)(nat_rng_next(r) >> 11) + 1.0) * 0x1.0p-53;
}

double nat_rng_exp(struct nat_rng *r, double mean)
{
	return -mean * log(nat_rng_unit(r));
}

/* ---- options ----------------------------------------------------------------- */

int nat_parse_long(const char *opt, const char *val, long min, long max, long *out)
{
	char *end;
	errno = 0;
	long v = val ? strtol(val, &end, 10) : 0;
	if (!val || !*val || *end || errno || v < min || v > max) {
		nat_err("%s: '%s' is not an integer in [%ld, %ld]", opt, val ? val : "", min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int nat_parse_double(const char *opt, const char *val, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double v = val ? strtod(val, &end) : 0;
	if (!val || !*val || *end || errno || !(v >= min && v <= max)) {
		nat_err("%s: '%s' is not a number in [%g, %g]", opt, val ? val : "", min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int nat_parse_enum(const char *opt, const char *val, const char *const *choices, int *out)
{
	for (int i = 0; choices[i]; i++)
		if (val && !strcmp(val, choices[i])) {
			*out = i;
			return 0;
		}
	char list[256] = "";
	for (int i = 0; choices[i]; i++) {
		if (i)
			strncat(list, ", ", sizeof(list) - strlen(list) - 1);
		strncat(list, choices[i], sizeof(list) - strlen(list) - 1);
	}
	nat_err("%s: '%s' is not one of: %s", opt, val ? val : "", list);
	return -1;
}

int nat_parse_long_list(const char *opt, const char *val, long min, long max, long *out,
			int maxn)
{
	int n = 0;
	const char *p = val ? val : "";
	for (;;) {
		char *end;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (end == p || errno || v < min || v > max || (*end && *end != ',')) {
			nat_err("%s: '%s' is not a comma-separated list of integers in [%ld, %ld]",
				opt, val ? val : "", min, max);
			return -1;
		}
		if (n == maxn) {
			nat_err("%s: '%s' has more than %d values", opt, val, maxn);
			return -1;
		}
		out[n++] = v;
		if (!*end)
			return n;
		p = end + 1;
	}
}

#define NAT_OPTS_MAX 64

/* one value of option o; 0 or -1 after nat_err */
static int opt_value(const struct nat_opt *o, const char *val)
{
	char opt[80];
	long v;
	int n;
	snprintf(opt, sizeof(opt), "--%s", o->name);
	switch (o->kind) {
	case NAT_OPT_LONG:
		return nat_parse_long(opt, val, (long)o->min, (long)o->max, o->out);
	case NAT_OPT_INT:
		if (nat_parse_long(opt, val, (long)o->min, (long)o->max, &v))
			return -1;
		*(int *)o->out = (int)v;
		return 0;
	case NAT_OPT_ULLONG:
		if (nat_parse_long(opt, val, (long)o->min, (long)o->max, &v))
			return -1;
		*(unsigned long long *)o->out = (unsigned long long)v;
		return 0;
	case NAT_OPT_DOUBLE:
		return nat_parse_double(opt, val, o->min, o->max, o->out);
	case NAT_OPT_ENUM:
		return nat_parse_enum(opt, val, o->choices, o->out);
	case NAT_OPT_LIST:
		n = nat_parse_long_list(opt, val, (long)o->min, (long)o->max, o->out, o->maxn);
		if (n < 0)
			return -1;
		*o->count = n;
		return 0;
	case NAT_OPT_STRING:
		*(const char **)o->out = val;
		return 0;
	case NAT_OPT_FLAG:
		*(int *)o->out = 1;
		return 0;
	}
	return -1;
}

int nat_parse_opts(int argc, char **argv, const struct nat_opt *opts, void (*usage)(FILE *))
{
	struct option lo[NAT_OPTS_MAX + 2];
	char so[2 * NAT_OPTS_MAX + 4] = ":";
	size_t n = 0, sn = 1;
	for (; opts[n].name && n < NAT_OPTS_MAX; n++) {
		int arg = opts[n].kind != NAT_OPT_FLAG;
		/* getopt_long returns the short letter, or 256 + the entry */
		lo[n] = (struct option){ opts[n].name, arg, NULL,
					 opts[n].short_name ? opts[n].short_name : 256 + (int)n };
		if (opts[n].short_name) {
			so[sn++] = opts[n].short_name;
			if (arg)
				so[sn++] = ':';
		}
	}
	lo[n] = (struct option){ "help", 0, NULL, 'h' };
	lo[n + 1] = (struct option){ NULL, 0, NULL, 0 };
	so[sn++] = 'h';
	so[sn] = 0;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		const struct nat_opt *o = NULL;
		if (c >= 256)
			o = &opts[c - 256];
		for (size_t i = 0; !o && c != 'h' && c != ':' && c != '?' && i < n; i++)
			if (opts[i].short_name == c)
				o = &opts[i];
		if (o) {
			if (opt_value(o, optarg) || (o->check && o->check(optarg)))
				return -1;
		} else if (c == 'h') {
			usage(stdout);
			return 1;
		} else if (c == ':') {
			nat_err("%s: needs a value (see --help)", argv[optind - 1]);
			return -1;
		} else {
			nat_err("unknown option '%s' (see --help)", argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		nat_err("unexpected argument '%s' (see --help)", argv[optind]);
		return -1;
	}
	return 0;
}

/* ---- scheduling --------------------------------------------------------------- */

const char *const nat_policy_names[] = { "other", "batch", "idle", "fifo", "rr", NULL };

pid_t nat_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

int nat_cpu(void)
{
	int c = sched_getcpu();
	return c < 0 ? 0 : c;
}

int nat_online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

int nat_check_sched(int policy, int priority, int nice)
{
	if ((policy == NP_FIFO || policy == NP_RR) && (priority < 1 || priority > 99)) {
		nat_err("--priority: must be in [1, 99] with --policy %s (got %d)",
			nat_policy_names[policy], priority);
		return -1;
	}
	if (policy != NP_FIFO && policy != NP_RR && priority != 0) {
		nat_err("--priority: only valid with --policy fifo or rr (got policy %s)",
			nat_policy_names[policy]);
		return -1;
	}
	if ((policy == NP_FIFO || policy == NP_RR) && nice != 0) {
		nat_err("--nice: has no effect with --policy %s; leave it at 0",
			nat_policy_names[policy]);
		return -1;
	}
	return 0;
}

int nat_apply_sched(int policy, int priority, int nice)
{
	static const int pol[] = { SCHED_OTHER, SCHED_BATCH, SCHED_IDLE, SCHED_FIFO, SCHED_RR };
	struct sched_param sp = { .sched_priority = priority };
	if (policy != NP_OTHER || priority) {
		if (sched_setscheduler(0, pol[policy], &sp)) {
			nat_err("cannot set scheduling policy %s priority %d: %s",
				nat_policy_names[policy], priority, strerror(errno));
			return -1;
		}
	}
	if (nice && setpriority(PRIO_PROCESS, (id_t)nat_gettid(), nice)) {
		nat_err("cannot set nice %d: %s", nice, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- work ------------------------------------------------------------------- */

void nat_spin(uint64_t loops)
{
	uint64_t x = 1;
	for (uint64_t i = 0; i < loops; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
}

double nat_calibrate_spin(void)
{
	double best = 0;
	uint64_t loops = 200000;
	for (int i = 0; i < 7; i++) {
		uint64_t t0 = nat_now_ns();
		nat_spin(loops);
		uint64_t dt = nat_now_ns() - t0;
		if (dt < 500000) {           /* aim for about 1 ms per try */
			loops *= 2;
			i--;
			if (loops > (1ull << 34))
				break;
			continue;
		}
		double r = (double)loops / ((double)dt / 1000.0);
		if (r > best)
			best = r;
	}
	return best > 0 ? best : 100;
}

int nat_wset_init(struct nat_wset *w, size_t bytes, uint64_t seed)
{
	memset(w, 0, sizeof(*w));
	if (bytes < 64)
		return 0;
	size_t n = bytes / 64;
	if (n > UINT32_MAX)
		return -1;
	if (posix_memalign((void **)&w->line, 64, n * 64))
		return -1;
	w->nlines = n;
	/* Sattolo's algorithm: a random single cycle through every line */
	uint32_t *perm = malloc(n * sizeof(uint32_t));
	if (!perm) {
		free(w->line);
		w->line = NULL;
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	struct nat_rng r;
	nat_rng_seed(&r, seed, 77);
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = nat_rng_next(&r) % i;
		uint32_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	/* line perm[i] points to perm[i+1]; the first word of each line is the link */
	for (size_t i = 0; i < n; i++) {
		uint32_t *l = w->line + perm[i] * 16;
		memset(l, 0, 64);
		l[0] = perm[(i + 1) % n];
	}
	free(perm);
	return 0;
}

void nat_wset_free(struct nat_wset *w)
{
	free(w->line);
	memset(w, 0, sizeof(*w));
}

void nat_wset_touch(struct nat_wset *w)
{
	uint32_t p = w->pos;
	for (size_t i = 0; i < w->nlines; i++) {
		uint32_t *l = w->line + (size_t)p * 16;
		l[1]++;
		p = l[0];
	}
	w->pos = p;
}

/* ---- topology ----------------------------------------------------------------- */

static int read_small(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t got = fread(buf, 1, n - 1, f);
	fclose(f);
	buf[got] = 0;
	return 0;
}

static uint64_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end == 'K')
		v <<= 10;
	else if (*end == 'M')
		v <<= 20;
	return v;
}

int nat_llc_groups(int *llc, int max, uint64_t *llc_bytes, int *llc_share)
{
	char path[256], buf[4096];
	int groups = 0, found = 0;
	unsigned char *seen = calloc((size_t)max, 1);
	if (!seen)
		return -1;
	if (llc_bytes)
		*llc_bytes = 0;
	if (llc_share)
		*llc_share = 1;
	/* only probe the possible CPUs (a few, not `max`) */
	unsigned char *possible = calloc((size_t)max, 1);
	if (!possible || read_small("/sys/devices/system/cpu/possible", buf, sizeof(buf)) ||
	    cpulist_parse(buf, possible, max) <= 0) {
		int n = nat_online_cpus();
		for (int c = 0; possible && c < max && c < n; c++)
			possible[c] = 1;
	}
	for (int c = 0; c < max; c++) {
		llc[c] = -1;
		if (!possible || !possible[c])
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", c);
		if (access(path, F_OK))
			continue;
		llc[c] = 0;
		int best_level = -1;
		char best_list[sizeof(buf)] = "";
		uint64_t best_size = 0;
		for (int i = 0; i < 16; i++) {
			snprintf(path, sizeof(path),
				 "/sys/devices/system/cpu/cpu%d/cache/index%d/level", c, i);
			if (read_small(path, buf, sizeof(buf)))
				break;
			int level = atoi(buf);
			snprintf(path, sizeof(path),
				 "/sys/devices/system/cpu/cpu%d/cache/index%d/type", c, i);
			if (read_small(path, buf, sizeof(buf)) || !strncmp(buf, "Instruction", 11))
				continue;
			if (level <= best_level)
				continue;
			snprintf(path, sizeof(path),
				 "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", c, i);
			if (read_small(path, buf, sizeof(buf)))
				continue;
			best_level = level;
			snprintf(best_list, sizeof(best_list), "%s", buf);
			snprintf(path, sizeof(path),
				 "/sys/devices/system/cpu/cpu%d/cache/index%d/size", c, i);
			best_size = read_small(path, buf, sizeof(buf)) ? 0 : parse_size(buf);
		}
		if (best_level < 0)
			continue;
		int first = cpulist_first(best_list);
		if (first < 0 || first >= max)
			continue;
		found++;
		llc[c] = first;
		if (!seen[first]) {
			seen[first] = 1;
			groups++;
		}
		if (c == 0 || (llc_bytes && !*llc_bytes)) {
			unsigned char *set = calloc((size_t)max, 1);
			int n = set ? cpulist_parse(best_list, set, max) : -1;
			free(set);
			if (llc_bytes)
				*llc_bytes = best_size;
			if (llc_share && n > 0)
				*llc_share = n;
		}
	}
	free(seen);
	free(possible);
	if (!found) {
		for (int c = 0; c < max; c++)
			if (llc[c] < 0)
				llc[c] = 0;
		return -1;
	}
	return groups;
}

/* ---- per-task counters -------------------------------------------------------------- */

int nat_perf_migrations_open(pid_t tid)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_CPU_MIGRATIONS;
	a.exclude_hv = 1;
	long fd = syscall(SYS_perf_event_open, &a, tid, -1, -1, 0);
	return fd < 0 ? -1 : (int)fd;
}

int nat_perf_read(int fd, uint64_t *v)
{
	return read(fd, v, sizeof(*v)) == (ssize_t)sizeof(*v) ? 0 : -1;
}

/* the whole of /proc/<tid>/sched (at most NAT_SCHED_FILE_MAX bytes) into
 * buf; its length, or -1 with errno */
static ssize_t read_sched_file(pid_t tid, char *buf, size_t max)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/sched", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	while (n < max) {
		ssize_t r = read(fd, buf + n, max - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	return (ssize_t)n;
}

/* the fields through analysis/tasksched.c, the parser of the dumps too */
int nat_task_sched(pid_t tid, uint64_t *migr, uint64_t *vol, uint64_t *invol)
{
	char *buf = malloc(NAT_SCHED_FILE_MAX);
	if (!buf)
		return -1;
	ssize_t len = read_sched_file(tid, buf, NAT_SCHED_FILE_MAX);
	struct task_sched t;
	int rc = len < 0 || task_sched_parse(buf, (size_t)len, &t, NULL, 0) ? -1 : 0;
	free(buf);
	if (rc || !task_sched_has(&t, TS_NR_MIGRATIONS) || !task_sched_has(&t, TS_NR_VOLUNTARY) ||
	    !task_sched_has(&t, TS_NR_INVOLUNTARY))
		return -1;
	*migr = t.v[TS_NR_MIGRATIONS];
	*vol = t.v[TS_NR_VOLUNTARY];
	*invol = t.v[TS_NR_INVOLUNTARY];
	return 0;
}

int nat_sched_dump(const char *path, const char *phase, const pid_t *tids, int n)
{
	int first = !strcmp(phase, "start");
	FILE *f = fopen(path, first ? "we" : "ae");
	if (!f) {
		nat_err("%s: %s", path, strerror(errno));
		return -1;
	}
	static char buf[NAT_SCHED_FILE_MAX];
	long size = first ? 0 : ftell(f);
	if (first)
		fputs("schedlab-task-sched 1\n", f);
	for (int i = 0; i < n; i++) {
		ssize_t len = read_sched_file(tids[i], buf, sizeof(buf));
		if (size >= 0 && size + (len > 0 ? len : 0) + 64 > NAT_SCHED_DUMP_MAX) {
			fputs("@@ truncated\n", f);
			break;
		}
		if (len < 0) {
			size += fprintf(f, "@@ %s %d error %s\n", phase, (int)tids[i],
					strerror(errno));
			continue;
		}
		size += fprintf(f, "@@ %s %d\n", phase, (int)tids[i]);
		size += (long)fwrite(buf, 1, (size_t)len, f);
		if (len && buf[len - 1] != '\n')
			size += fputc('\n', f) == EOF ? 0 : 1;
	}
	if (fclose(f)) {
		nat_err("%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int nat_self_tids(pid_t *out, int max)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) && n < max) {
		char *end;
		long v = strtol(de->d_name, &end, 10);
		if (end != de->d_name && !*end && v > 0)
			out[n++] = (pid_t)v;
	}
	closedir(d);
	return n;
}

int nat_task_csw(pid_t tid, uint64_t *vol, uint64_t *invol)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int got = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;
		if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1) {
			*vol = v;
			got |= 1;
		} else if (sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1) {
			*invol = v;
			got |= 2;
		}
	}
	fclose(f);
	return got == 3 ? 0 : -1;
}

/* ---- shared memory -------------------------------------------------------------------- */

void *nat_shm_alloc(size_t bytes)
{
	void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

size_t nat_hist_shared_bytes(void)
{
	return NAT_HIST_BUCKETS * sizeof(uint64_t);
}

int nat_hist_init_in(struct hist *h, void *counts)
{
	struct hist tmp;
	if (hist_init_loglin(&tmp, NAT_HIST_SUB, NAT_HIST_POW))
		return -1;
	free(tmp.counts);
	tmp.counts = counts;
	memset(counts, 0, tmp.nbuckets * sizeof(uint64_t));
	*h = tmp;
	return 0;
}

void nat_lat_init(struct nat_lat *r, struct hist *h)
{
	*r = (struct nat_lat){ .counts = h->counts, .min = UINT64_MAX };
}

void nat_lat_finish(const struct nat_lat *r, struct hist *h)
{
	if (!r->n)
		return;
	h->overflow += r->overflow;
	h->total += r->n;
	if (isnan(h->min) || (double)r->min < h->min)
		h->min = (double)r->min;
	if (isnan(h->max) || (double)r->max > h->max)
		h->max = (double)r->max;
}

/* ---- output ------------------------------------------------------------------------------- */

double nat_json_pct_us(json_t *obj, const char *key, const struct hist *h, double p)
{
	double v;
	enum hist_pct r = hist_percentile(h, p, &v);
	if (r == HIST_EMPTY) {
		json_object_set_new(obj, key, json_null());
		return NAN;
	}
	v /= 1000.0;
	json_object_set_new(obj, key, json_real(v));
	return v;
}

int nat_json_print(json_t *obj)
{
	if (json_dumpf(obj, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) ||
	    fputc('\n', stdout) == EOF || fflush(stdout) || ferror(stdout)) {
		nat_err("cannot write the results to stdout");
		return -1;
	}
	return 0;
}

/* ---- the phases every program has ------------------------------------------------------- */

int nat_main_start(const char *prog, int (*parse)(int, char **), int argc, char **argv)
{
	nat_prog = prog;
	int r = parse(argc, argv);
	if (r)
		return r > 0 ? 0 : 2;
	return -1;
}

json_t *nat_report_new(const char *tool, json_t *config)
{
	json_t *o = json_object();
	json_object_set_new(o, "tool", json_string(tool));
	json_object_set_new(o, "format", json_integer(1));
	json_object_set_new(o, "config", config);
	return o;
}

int nat_report_print(json_t *report)
{
	int rc = nat_json_print(report) ? 1 : 0;
	json_decref(report);
	return rc;
}

/* ---- running other programs ----------------------------------------------------- */

int nat_exec_tool(char **argv)
{
	const char *dir = getenv("SCHEDLAB_BUNDLE");
	if (!dir || dir[0] != '/' || strchr(argv[0], '/') || !*argv[0]) {
		execvp(argv[0], argv);
		return -1;
	}
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/bundle.json", dir);
	json_t *b = json_load_file(path, 0, NULL);
	const char *kind = json_string_value(json_object_get(json_object_get(b, "tools"), argv[0]));
	const char *ld = json_string_value(json_object_get(b, "loader"));
	if (!kind || (!strcmp(kind, "dynamic") && (!ld || ld[0] == '/' || strstr(ld, "..")))) {
		json_decref(b);
		execvp(argv[0], argv);     /* not bundled: the box's own */
		return -1;
	}
	char prog[PATH_MAX], loader[PATH_MAX], lib[PATH_MAX];
	snprintf(prog, sizeof(prog), "%s/bin/%s", dir, argv[0]);
	if (strcmp(kind, "dynamic")) {
		json_decref(b);
		execv(prog, argv);
		return -1;
	}
	snprintf(loader, sizeof(loader), "%s/%s", dir, ld);
	snprintf(lib, sizeof(lib), "%s/lib", dir);
	size_t n = 0;
	while (argv[n])
		n++;
	/* the agent's way (resolve_tool): argv[0] stays the tool's name */
	char **v = calloc(n + 8, sizeof(*v));
	if (!v) {
		json_decref(b);
		errno = ENOMEM;
		return -1;
	}
	size_t k = 0;
	v[k++] = argv[0];
	v[k++] = "--library-path";
	v[k++] = lib;
	v[k++] = "--inhibit-cache";
	if (json_is_true(json_object_get(b, "argv0"))) {
		v[k++] = "--argv0";
		v[k++] = argv[0];
	}
	v[k++] = prog;
	for (size_t i = 1; i < n; i++)
		v[k++] = argv[i];
	v[k] = NULL;
	json_decref(b);
	execv(loader, v);
	int e = errno;
	free(v);
	errno = e;
	return -1;
}
