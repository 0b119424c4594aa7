/*
 * Helpers shared by the native workloads bin/sl-pingpong and bin/sl-jbb:
 * clocks and absolute sleeps, a seeded PRNG with exponential draws (Poisson
 * arrivals), option parsing that names the bad option and the valid range,
 * per-thread scheduling settings, a calibrated CPU spin and a pointer-chasing
 * working set (per-request "work"), LLC groups from sysfs, per-task
 * migration and context-switch counters, shared memory for --procs, and JSON
 * output through jansson.
 *
 * Everything here returns 0 / -1 (or a value) and prints nothing except the
 * nat_err() messages; the programs decide exit codes (0 ok, 1 runtime
 * failure, 2 bad arguments).
 */
#ifndef SL_LIBNATIVE_H
#define SL_LIBNATIVE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "analysis/hist.h"

extern const char *nat_prog;          /* program name for messages */
void nat_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- time ---------------------------------------------------------------- */
uint64_t nat_now_ns(void);                  /* CLOCK_MONOTONIC */
void nat_sleep_until_ns(uint64_t t);        /* absolute, CLOCK_MONOTONIC, restarts on EINTR */
void nat_sleep_ns(uint64_t d);

/* A cheaper reading of CLOCK_MONOTONIC's time line for hot paths. Where the
 * kernel's clocksource is the TSC (the kernel then trusts it to be constant
 * and synchronised across CPUs, and the vDSO reads it too), nat_fast_ns is
 * rdtsc scaled by a factor measured against CLOCK_MONOTONIC over 20 ms in
 * nat_fastclock_init, with the origin of that measurement: about 8 ns against
 * the vDSO's 19 here, because it skips the vDSO's sequence-count loop and
 * ordering fence. Elsewhere (another clocksource, not x86-64, or mode
 * NAT_CLOCK_MONOTONIC) it is nat_now_ns. The two time lines agree at init
 * and drift apart only as fast as NTP changes its slew (parts per million);
 * nat_fastclock_drift_ns says how far they went. Sleep on it with
 * nat_fast_sleep_until, which never wakes before the fast clock's t. */
enum nat_clock_mode { NAT_CLOCK_AUTO, NAT_CLOCK_MONOTONIC };
extern const char *const nat_clock_names[];   /* "auto", "monotonic" (modes) */
struct nat_fastclock {
	int tsc;                 /* 1: rdtsc in use */
	uint64_t base_tsc, base_ns;
	uint64_t mult;           /* ns per TSC tick, 32.32 fixed point */
};
extern struct nat_fastclock nat_fc;
/* set the clock up (call once, before threads or forks); returns the source
 * in use, "tsc" or "monotonic" */
const char *nat_fastclock_init(int mode);
/* 0 when the TSC was in use and the kernel no longer has it as its
 * clocksource (its watchdog found it unstable during the run: stamps taken
 * on different CPUs may then disagree), else 1 */
int nat_fastclock_still_valid(void);
/* tests only: read the clocksource from path instead of sysfs (NULL: sysfs) */
void nat_fastclock_source_path(const char *path);
uint64_t nat_fastclock_tsc_khz(void);         /* 0 unless the TSC is in use */
int64_t nat_fastclock_drift_ns(void);         /* CLOCK_MONOTONIC - nat_fast_ns, now */
void nat_fast_sleep_until(uint64_t t);
#if defined(__x86_64__)
/* a TSC reading on the fast clock's time line (nat_fc.tsc set) */
static inline uint64_t nat_tsc_to_ns(uint64_t tsc)
{
	return nat_fc.base_ns +
	       (uint64_t)(((unsigned __int128)(tsc - nat_fc.base_tsc) * nat_fc.mult) >> 32);
}

static inline uint64_t nat_fast_ns(void)
{
	return nat_fc.tsc ? nat_tsc_to_ns(__builtin_ia32_rdtsc()) : nat_now_ns();
}
#else
static inline uint64_t nat_fast_ns(void)
{
	return nat_now_ns();
}
#endif

/* ---- PRNG: analysis/rng.h's generator, seeded from seed and stream ----- */
struct nat_rng { uint64_t s[4]; };
void nat_rng_seed(struct nat_rng *r, uint64_t seed, uint64_t stream);
uint64_t nat_rng_next(struct nat_rng *r);
double nat_rng_unit(struct nat_rng *r);           /* (0, 1] */
double nat_rng_exp(struct nat_rng *r, double mean); /* exponential draw */

/* ---- options: each prints "<prog>: <opt>: ..." and returns -1 on error -- */
int nat_parse_long(const char *opt, const char *val, long min, long max, long *out);
int nat_parse_double(const char *opt, const char *val, double min, double max, double *out);
/* index of val in the NULL-terminated choices */
int nat_parse_enum(const char *opt, const char *val, const char *const *choices, int *out);
/* comma-separated list of integers in [min, max]; returns the count (<= maxn) */
int nat_parse_long_list(const char *opt, const char *val, long min, long max, long *out,
			int maxn);

/* ---- the command line: one table of options for getopt_long ------------------
 * (as perf's parse-options): each entry names the option, its short letter,
 * the kind and range of its value and where it goes; nat_parse_opts builds
 * getopt_long's tables from it and prints the messages of the nat_parse_*
 * above, "needs a value", "unknown option" and "unexpected argument". */
enum nat_opt_kind {
	NAT_OPT_LONG,     /* long *, in [min, max] */
	NAT_OPT_INT,      /* int *, in [min, max] */
	NAT_OPT_ULLONG,   /* unsigned long long *, in [min, max] (a seed) */
	NAT_OPT_DOUBLE,   /* double *, in [min, max] */
	NAT_OPT_ENUM,     /* int *, the index of the value in choices */
	NAT_OPT_LIST,     /* long * of up to maxn values in [min, max]; their count to *count */
	NAT_OPT_STRING,   /* const char *: the argument itself */
	NAT_OPT_FLAG,     /* int *, set to 1; takes no value */
};
struct nat_opt {
	const char *name;               /* without the leading "--" */
	char short_name;                /* 0: none */
	enum nat_opt_kind kind;
	void *out;
	double min, max;
	const char *const *choices;     /* NAT_OPT_ENUM */
	int maxn, *count;               /* NAT_OPT_LIST */
	/* optional: a further check of the value just stored; -1 after nat_err */
	int (*check)(const char *val);
};
/* an option with a number in [lo, hi] (NAT_OPT_LONG, _INT, _ULLONG, _DOUBLE) */
#define NAT_OPT_NUM(n, s, k, o, lo, hi) \
	{ .name = (n), .short_name = (s), .kind = (k), .out = (o), .min = (lo), .max = (hi) }
/* parse argv by opts (ended by an entry with a NULL name): 0 to go on, 1
 * when --help was asked for (usage(stdout) printed), -1 after nat_err */
int nat_parse_opts(int argc, char **argv, const struct nat_opt *opts, void (*usage)(FILE *));

/* ---- running other programs -------------------------------------------------- */
/* exec argv (never returns on success; -1 with errno when it cannot): a
 * bare name listed in the workload bundle named by $SCHEDLAB_BUNDLE (the
 * ssh target's, harness/targets/bundle.h: the agent sets it) runs from the
 * bundle as the agent runs its tools, a dynamic one through the bundled
 * loader; anything else is looked up in PATH */
int nat_exec_tool(char **argv);

/* ---- scheduling ------------------------------------------------------------ */
enum nat_policy { NP_OTHER, NP_BATCH, NP_IDLE, NP_FIFO, NP_RR };
extern const char *const nat_policy_names[];      /* "other", "batch", "idle", "fifo", "rr" */
/* apply to the calling thread; nice only for other/batch/idle */
int nat_apply_sched(int policy, int priority, int nice);
/* check policy/priority/nice are consistent; -1 with a message */
int nat_check_sched(int policy, int priority, int nice);
pid_t nat_gettid(void);
int nat_cpu(void);                                  /* sched_getcpu(), 0 on failure */
/* the same for hot paths: the CPU the kernel wrote into the thread's rseq
 * area (glibc 2.35 registers one) without a call, else nat_cpu() */
#if defined(__has_include)
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#define NAT_HAVE_RSEQ 1
#endif
#endif
static inline int nat_cpu_fast(void)
{
#ifdef NAT_HAVE_RSEQ
	if (__rseq_size) {
		const struct rseq *r =
			(const struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
		int c = (int)*(const volatile uint32_t *)&r->cpu_id;
		if (c >= 0)
			return c;
	}
#endif
	return nat_cpu();
}
int nat_online_cpus(void);

/* ---- work ------------------------------------------------------------------ */
/* spin iterations per microsecond on an idle CPU (best of several tries) */
double nat_calibrate_spin(void);
void nat_spin(uint64_t loops);
/* a working set of `bytes`, visited in a seeded random cyclic order of cache
 * lines (pointer chasing defeats the prefetcher, so cache affinity shows) */
struct nat_wset { uint32_t *line; size_t nlines; uint32_t pos; };
int nat_wset_init(struct nat_wset *w, size_t bytes, uint64_t seed);
void nat_wset_free(struct nat_wset *w);
/* visit every line once (read and write one word per line) */
void nat_wset_touch(struct nat_wset *w);

/* ---- topology -------------------------------------------------------------- */
/* llc[c] = the lowest CPU sharing CPU c's last-level cache, for c < max; -1
 * for CPUs not present. Returns the number of distinct LLC groups, or -1 when
 * sysfs has no cache information (then llc[c] = 0 for every CPU). llc_bytes
 * (optional) gets the LLC size and llc_share (optional) how many CPUs share it. */
int nat_llc_groups(int *llc, int max, uint64_t *llc_bytes, int *llc_share);

/* ---- per-task counters ----------------------------------------------------- */
/* a PERF_COUNT_SW_CPU_MIGRATIONS counter on task `tid` (any process); -1 when
 * perf events are unavailable */
int nat_perf_migrations_open(pid_t tid);
int nat_perf_read(int fd, uint64_t *v);
/* se.nr_migrations and nr_(in)voluntary_switches from /proc/<tid>/sched
 * (CONFIG_SCHED_DEBUG kernels), read by analysis/tasksched.c's parser; -1
 * when that file is missing or its text is refused there. Reading it
 * costs the task nothing, unlike a perf counter, which adds work to every
 * context switch of the task it watches. */
int nat_task_sched(pid_t tid, uint64_t *migr, uint64_t *vol, uint64_t *invol);
/*
 * Wakeup-placement evidence: append every task's whole /proc/<tid>/sched to
 * `path`, each after a line "@@ PHASE TID" ("@@ PHASE TID error WHY" when it
 * cannot be read). PHASE "start" creates the file with its first line
 * "schedlab-task-sched 1"; "end" appends. The file stops with "@@ truncated"
 * at NAT_SCHED_DUMP_MAX bytes. analysis/tasksched.h parses it. Called by the
 * main thread at the window's start and end, never by a measured task.
 */
#define NAT_SCHED_FILE_MAX (64 * 1024)
#define NAT_SCHED_DUMP_MAX (16L << 20)
int nat_sched_dump(const char *path, const char *phase, const pid_t *tids, int n);
/* the thread ids of this process (/proc/self/task), at most max; -1 on error */
int nat_self_tids(pid_t *out, int max);
/* voluntary/nonvoluntary_ctxt_switches of a task from /proc/<tid>/status */
int nat_task_csw(pid_t tid, uint64_t *vol, uint64_t *invol);

/* ---- memory shared across fork (for --procs) ------------------------------- */
void *nat_shm_alloc(size_t bytes);                  /* zeroed; NULL on failure */
/* a HIST_LOGLIN histogram of ns (sub_bits NAT_HIST_SUB, up to 2^NAT_HIST_POW ns)
 * whose counts live in `counts` (nat_hist_shared_bytes() of shared memory),
 * so that a forked child can record into it; h itself should be shared too */
#define NAT_HIST_SUB 7
#define NAT_HIST_POW 40
#define NAT_HIST_BUCKETS (((size_t)1 << NAT_HIST_SUB) * (size_t)(1 + NAT_HIST_POW - NAT_HIST_SUB))
size_t nat_hist_shared_bytes(void);
int nat_hist_init_in(struct hist *h, void *counts);

/* Recording on a hot path. nat_lat_add is a few instructions and no floating
 * point: the sample's bucket count goes straight into the histogram's counts
 * (which may be shared memory), while the sample count, overflow, min and max
 * are kept as integers in the recorder. After the run, nat_lat_finish adds
 * them into the histogram, which then holds exactly what hist_record on every
 * sample would have left there (the conversion to double is monotonic, so the
 * extremes agree). h must be a NAT_HIST histogram (nat_hist_init_in) that
 * nobody records into otherwise while r is in use. */
struct nat_lat {
	uint64_t *counts;
	uint64_t n, overflow, min, max;
};
void nat_lat_init(struct nat_lat *r, struct hist *h);
void nat_lat_finish(const struct nat_lat *r, struct hist *h);
static inline void nat_lat_add(struct nat_lat *r, uint64_t v)
{
	size_t b = hist_loglin_index(NAT_HIST_SUB, v);
	if (b < NAT_HIST_BUCKETS)
		r->counts[b]++;
	else
		r->overflow++;
	r->n++;
	if (v < r->min)
		r->min = v;
	if (v > r->max)
		r->max = v;
}

/* ---- output ---------------------------------------------------------------- */
/* percentile p of a ns histogram, in us, into obj[key] (null when empty);
 * returns the value (NAN when empty) */
double nat_json_pct_us(json_t *obj, const char *key, const struct hist *h, double p);
/* print obj (indented) and a newline on stdout; -1 on a write error */
int nat_json_print(json_t *obj);

/* ---- the phases every native program has ------------------------------------
 * (as perf bench's programs share theirs): the start, which names the
 * program and reads its options, and the report, one JSON object that opens
 * with the program, the output's format and its configuration and is
 * printed once whole. */

/* nat_prog = prog, then parse(argc, argv) (0 go on, 1 --help done, -1 after
 * nat_err): -1 to go on, else the exit status (0 after --help, 2 for a bad
 * option) */
int nat_main_start(const char *prog, int (*parse)(int, char **), int argc, char **argv);
/* a report: {"tool": tool, "format": 1, "config": config (taken)} */
json_t *nat_report_new(const char *tool, json_t *config);
/* print the report (nat_json_print) and release it: 0, or 1 on a write error */
int nat_report_print(json_t *report);

#endif
