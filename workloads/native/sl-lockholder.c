/*
 * sl-lockholder: lock-holder preemption as a small static program. N threads
 * (by default twice the online CPUs, so that some always wait for a CPU)
 * take one userspace spinlock in a loop and, inside the critical section,
 * enter the kernel in a chosen way: page faults on fresh memory (--enter
 * fault: pages of a private mapping that madvise(MADV_DONTNEED) emptied after
 * the previous hold), a short system call (--enter syscall: getppid), or not
 * at all (--enter none); then --cs-us of CPU work. A holder switched out
 * inside the critical section keeps every waiter spinning: what PostgreSQL's
 * pgbench showed when a backend holding a spinlock was preempted in a page
 * fault (issue 30, docs/workloads-native.md).
 *
 * The lock is a test-and-test-and-set byte. --lock tts-yield waits as
 * PostgreSQL's s_lock() does (src/backend/storage/lmgr/s_lock.c): test the
 * lock, spin with a CPU pause (SPIN_DELAY, "rep; nop") for up to
 * spins_per_delay tries, then block: s_lock sleeps with pg_usleep, first
 * 1 ms, growing by a random factor between 1x and 2x up to 1 s and then
 * wrapping back to 1 ms, and adapts spins_per_delay between 10 and 1000
 * (its default is 100). Here --spins is fixed (default 100, PostgreSQL's
 * starting value), and the block is sched_yield() with --delay-us 0 (the
 * default: the waiter stays runnable) or s_lock's growing sleep starting at
 * --delay-us. --lock spin never blocks.
 *
 * Measured per hold, on the stamp clock (below): the wait (from the
 * first test to the acquisition), the hold (acquisition to release) into
 * log-linear ns histograms, the time spent in the spin loop (from the
 * first failed test to the acquisition or the block, leaving out the gaps
 * in which the spinner was not on a CPU, see SPIN_GAP_NS), and
 * whether the holder was switched out involuntarily inside the critical
 * section: --detect getrusage reads the thread's ru_nivcsw with
 * getrusage(RUSAGE_THREAD) right after the acquisition and right after the
 * release and counts the holds whose count changed (the first read is a
 * system call inside every hold, in every mode); --detect rseq writes a
 * sentinel into the thread's rseq area (cpu_id_start, which glibc registers
 * and never reads) after the acquisition and counts the holds in which the
 * kernel rewrote it: it does so on every switch-out, migration or signal
 * delivery to the thread, and nothing in a hold here sleeps or takes a
 * signal, so it is a switch-out; no system call is added to the hold. (A
 * kernel built with CONFIG_DEBUG_RSEQ kills a thread that writes that
 * field: getrusage is the default.)
 *
 * The rseq time-slice extension (a holder asks the kernel for a short
 * extension of its slice, prctl PR_RSEQ_SLICE_EXTENSION, 7.0 and later) is
 * only detected and reported: "unavailable" with the kernel's answer when
 * the prctl is unknown (6.1), "available, not used" otherwise.
 *
 * The run ends with its window: a waiter gives up when the window ends,
 * and CPU work longer than 1 ms (--cs-us, --think-us) looks at the end
 * after each millisecond; a hold cut so is released and not counted.
 *
 * Output is one JSON object on stdout; the metrics are defined in
 * docs/workloads-native.md.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workloads/native/libnative.h"

#define MAX_THREADS 4096
/* the kernel selftests' values (tools/testing/selftests/rseq/slice_test.c) */
#ifndef PR_RSEQ_SLICE_EXTENSION
#define PR_RSEQ_SLICE_EXTENSION 79
#define PR_RSEQ_SLICE_EXTENSION_GET 1
#define PR_RSEQ_SLICE_EXT_ENABLE 0x01
#endif

enum lockmode { L_TTS_YIELD, L_SPIN };
static const char *const lock_names[] = { "tts-yield", "spin", NULL };
enum entermode { E_FAULT, E_SYSCALL, E_NONE };
static const char *const enter_names[] = { "fault", "syscall", "none", NULL };
enum detect { D_GETRUSAGE, D_RSEQ };
static const char *const detect_names[] = { "getrusage", "rseq", NULL };

struct opts {
	double duration_s, cs_us, think_us;
	long threads, spins, delay_us, entries;
	int lock, enter, detect, clock;
};
static struct opts O = { .duration_s = 5, .cs_us = 2, .spins = 100, .entries = 4 };

struct worker {
	pthread_t th;
	int idx, failed;
	struct hist hold, wait;
	struct nat_lat hold_rec, wait_rec;
	uint64_t holds, preempted, spin_ns, backoffs;
	uint64_t nivcsw, nvcsw, minflt, majflt; /* RUSAGE_THREAD deltas over the thread's loop */
	char *region;                     /* --enter fault: the pages to fault */
	char pad[64];
};

static struct worker *workers;
static _Alignas(64) atomic_uchar lock_byte;
static _Alignas(64) atomic_int go, stop_flag;
static size_t page_size;
static uint64_t cs_loops, think_loops;
/* about 1 ms of nat_spin: CPU work longer than this (a critical section or
 * a think time of --cs-us 1000000) looks at stop_flag after each chunk */
static uint64_t chunk_loops;

/*
 * The stamps. A hold must not enter the kernel to read a clock, so on
 * x86-64 every stamp is the raw TSC scaled by a factor measured against
 * CLOCK_MONOTONIC at the start, also where the kernel does not use the TSC
 * as its clocksource: in a qemu/TCG guest (clocksource hpet) clock_gettime
 * is a system call, which would put a kernel entry into every hold and
 * every spin. Stamps taken on different CPUs (a thread migrated within a
 * hold) may then disagree by the TSCs' skew; a difference below zero counts
 * as 0. Elsewhere (not x86-64, or a TSC that does not advance) the stamps
 * are nat_now_ns (the vDSO where the clocksource has one).
 */
static uint64_t stamp_mult;   /* ns per tick, 32.32 fixed point; 0: nat_now_ns */
static uint64_t stamp_base;

static const char *stamp_init(void)
{
#if defined(__x86_64__)
	uint64_t t0 = __builtin_ia32_rdtsc(), n0 = nat_now_ns();
	nat_sleep_ns(20000000);
	uint64_t t1 = __builtin_ia32_rdtsc(), n1 = nat_now_ns();
	if (t1 > t0 && n1 > n0 && (t1 - t0) >= (n1 - n0) / 1000) {
		stamp_mult = (uint64_t)(((unsigned __int128)(n1 - n0) << 32) / (t1 - t0));
		stamp_base = t1;
		return "tsc";
	}
#endif
	return "monotonic";
}

static inline uint64_t stamp(void)
{
#if defined(__x86_64__)
	if (stamp_mult) {
		uint64_t t = __builtin_ia32_rdtsc();
		return t > stamp_base ? (uint64_t)(((unsigned __int128)(t - stamp_base) *
						    stamp_mult) >> 32)
				      : 0;
	}
#endif
	return nat_now_ns();
}

static inline uint64_t since(uint64_t a, uint64_t b)
{
	return b > a ? b - a : 0;
}

static inline void cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("isb" ::: "memory");
#else
	__asm__ volatile("" ::: "memory");
#endif
}

static inline int try_lock(void)
{
	return !atomic_load_explicit(&lock_byte, memory_order_relaxed) &&
	       !atomic_exchange_explicit(&lock_byte, 1, memory_order_acquire);
}

/* s_lock's block: sched_yield, or a sleep growing by a random 1x..2x up to
 * 1 s, then back to the first delay */
static void backoff(struct nat_rng *r, uint64_t *cur_us)
{
	if (!O.delay_us) {
		sched_yield();
		return;
	}
	if (!*cur_us)
		*cur_us = (uint64_t)O.delay_us;
	nat_sleep_ns(*cur_us * 1000);
	*cur_us += (uint64_t)((double)*cur_us * nat_rng_unit(r) + 0.5);
	if (*cur_us > 1000000)
		*cur_us = (uint64_t)O.delay_us;
}

/* A gap between two clock readings of the spin loop longer than this is
 * time the spinner was not on a CPU (switched out, or its vCPU was): it is
 * not spinning and is left out of spin_ns. One iteration (a pause, a test,
 * a clock reading) takes well under a microsecond even under qemu/TCG. */
#define SPIN_GAP_NS 50000

/* take the lock (0); adds the time spent in the spin loop (on a CPU) and
 * the blocks. -1 without the lock when the window ended while waiting: a
 * waiter stops with the window, it does not wait for its turn (64 threads
 * each waiting for a hold of 1 s ran 32 s past a window of 0.05 s) */
static int acquire(struct worker *w, struct nat_rng *r)
{
	if (try_lock())
		return 0;
	uint64_t last = stamp(), cur_us = 0, spun = 0;
	long spins = 0;
	for (;;) {
		cpu_pause();
		int got = try_lock();
		uint64_t now = stamp();
		if (since(last, now) < SPIN_GAP_NS)
			spun += since(last, now);
		last = now;
		if (got)
			break;
		if (atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
			w->spin_ns += spun;
			return -1;
		}
		if (O.lock == L_TTS_YIELD && ++spins >= O.spins) {
			w->backoffs++;
			backoff(r, &cur_us);
			spins = 0;
			last = stamp();
		}
	}
	w->spin_ns += spun;
	return 0;
}

/* loops of CPU work in chunks of chunk_loops, -1 as soon as the window
 * ended (stop_flag) between two of them: work of 1 ms or less is one call,
 * with no look at the flag inside it */
static int work(uint64_t loops)
{
	while (loops > chunk_loops) {
		nat_spin(chunk_loops);
		loops -= chunk_loops;
		if (atomic_load_explicit(&stop_flag, memory_order_relaxed))
			return -1;
	}
	nat_spin(loops);
	return 0;
}

static inline void release(void)
{
	atomic_store_explicit(&lock_byte, 0, memory_order_release);
}

#ifdef NAT_HAVE_RSEQ
static inline volatile uint32_t *rseq_cpu_id_start(void)
{
	struct rseq *rs = (struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
	return (volatile uint32_t *)&rs->cpu_id_start;
}
#define RSEQ_SENTINEL 0xfffffff0u
#endif

/* 0, or -1 when the window ended inside the CPU work (longer than 1 ms) */
static int critical_section(struct worker *w)
{
	if (O.enter == E_FAULT) {
		for (long i = 0; i < O.entries; i++)
			((volatile char *)w->region)[(size_t)i * page_size] = 1;
	} else if (O.enter == E_SYSCALL) {
		for (long i = 0; i < O.entries; i++)
			(void)syscall(SYS_getppid);
	}
	return work(cs_loops);
}

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ull + (uint64_t)tv->tv_usec * 1000ull;
}

static void *worker_thread(void *p)
{
	struct worker *w = p;
	struct nat_rng r;
	struct rusage ru0, ru1, a, b;
	nat_rng_seed(&r, 1, (uint64_t)w->idx + 1);
	nat_lat_init(&w->hold_rec, &w->hold);
	nat_lat_init(&w->wait_rec, &w->wait);
	while (!atomic_load_explicit(&go, memory_order_acquire))
		nat_sleep_ns(1000000);
	getrusage(RUSAGE_THREAD, &ru0);
	while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) {
		int preempted = 0;
		uint64_t t0 = stamp();
		if (acquire(w, &r))
			break;
		uint64_t t1 = stamp();
#ifdef NAT_HAVE_RSEQ
		if (O.detect == D_RSEQ)
			*rseq_cpu_id_start() = RSEQ_SENTINEL;
		else
#endif
			getrusage(RUSAGE_THREAD, &a);
		if (critical_section(w)) {
			/* cut by the window's end: not a whole hold, not counted */
			release();
			break;
		}
#ifdef NAT_HAVE_RSEQ
		if (O.detect == D_RSEQ)
			preempted = *rseq_cpu_id_start() != RSEQ_SENTINEL;
#endif
		uint64_t t2 = stamp();
		release();
		if (O.detect == D_GETRUSAGE) {
			getrusage(RUSAGE_THREAD, &b);
			preempted = b.ru_nivcsw != a.ru_nivcsw;
		}
		w->holds++;
		w->preempted += (uint64_t)preempted;
		nat_lat_add(&w->wait_rec, since(t0, t1));
		nat_lat_add(&w->hold_rec, since(t1, t2));
		if (O.enter == E_FAULT &&
		    madvise(w->region, (size_t)O.entries * page_size, MADV_DONTNEED)) {
			nat_err("madvise(MADV_DONTNEED): %s", strerror(errno));
			w->failed = 1;
			break;
		}
		if (think_loops && work(think_loops))
			break;
	}
	getrusage(RUSAGE_THREAD, &ru1);
	w->nivcsw = (uint64_t)(ru1.ru_nivcsw - ru0.ru_nivcsw);
	w->nvcsw = (uint64_t)(ru1.ru_nvcsw - ru0.ru_nvcsw);
	w->minflt = (uint64_t)(ru1.ru_minflt - ru0.ru_minflt);
	w->majflt = (uint64_t)(ru1.ru_majflt - ru0.ru_majflt);
	return NULL;
}

static void usage(FILE *f)
{
	fputs(
"usage: sl-lockholder [options]\n"
"  N threads take one userspace spinlock and enter the kernel inside the\n"
"  critical section; reports acquisitions/s, hold and wait times, the time\n"
"  waiters spun and how often a holder was switched out inside it.\n"
"  -d, --duration S     measurement window in seconds (default 5)\n"
"  -t, --threads N      threads (default 0: twice the online CPUs)\n"
"  -l, --lock MODE      tts-yield (PostgreSQL s_lock: spin, then block) or spin\n"
"      --spins N        tts-yield: pause-spins before each block (default 100)\n"
"      --delay-us N     tts-yield: 0 blocks with sched_yield (default), else a\n"
"                       sleep starting at N us and growing as s_lock's\n"
"  -e, --enter MODE     inside the critical section: fault (page faults on fresh\n"
"                       memory, default), syscall (getppid) or none\n"
"  -n, --entries N      pages faulted or system calls made per hold (default 4)\n"
"  -c, --cs-us US       CPU work inside the critical section, us (default 2)\n"
"      --think-us US    CPU work between holds, us (default 0)\n"
"      --detect HOW     holder switch-outs: getrusage (default) or rseq\n"
"      --clock MODE     auto (the raw TSC on x86-64) or monotonic\n"
"  -h, --help           this text\n", f);
}

static int parse_opts(int argc, char **argv)
{
	const struct nat_opt opts[] = {
		NAT_OPT_NUM("duration", 'd', NAT_OPT_DOUBLE, &O.duration_s, 0.05, 86400),
		NAT_OPT_NUM("threads", 't', NAT_OPT_LONG, &O.threads, 0, MAX_THREADS),
		{ .name = "lock", .short_name = 'l', .kind = NAT_OPT_ENUM, .out = &O.lock,
		  .choices = lock_names },
		NAT_OPT_NUM("spins", 0, NAT_OPT_LONG, &O.spins, 1, 100000000),
		NAT_OPT_NUM("delay-us", 0, NAT_OPT_LONG, &O.delay_us, 0, 1000000),
		{ .name = "enter", .short_name = 'e', .kind = NAT_OPT_ENUM, .out = &O.enter,
		  .choices = enter_names },
		NAT_OPT_NUM("entries", 'n', NAT_OPT_LONG, &O.entries, 1, 1024),
		NAT_OPT_NUM("cs-us", 'c', NAT_OPT_DOUBLE, &O.cs_us, 0, 1000000),
		NAT_OPT_NUM("think-us", 0, NAT_OPT_DOUBLE, &O.think_us, 0, 1000000),
		{ .name = "detect", .kind = NAT_OPT_ENUM, .out = &O.detect,
		  .choices = detect_names },
		{ .name = "clock", .kind = NAT_OPT_ENUM, .out = &O.clock,
		  .choices = nat_clock_names },
		{ .name = NULL },
	};
	int r = nat_parse_opts(argc, argv, opts, usage);
	if (r)
		return r;
	if (O.enter == E_NONE && O.cs_us <= 0) {
		nat_err("--cs-us: an empty critical section (--enter none and --cs-us 0); "
			"give it work or a kernel entry");
		return -1;
	}
	if (O.lock == L_SPIN && O.delay_us) {
		nat_err("--delay-us: only used with --lock tts-yield");
		return -1;
	}
#ifndef NAT_HAVE_RSEQ
	if (O.detect == D_RSEQ) {
		nat_err("--detect rseq: this build has no <sys/rseq.h>; use getrusage");
		return -1;
	}
#endif
	return 0;
}

/* whether --detect rseq can work: glibc registered an rseq area */
static int rseq_registered(void)
{
#ifdef NAT_HAVE_RSEQ
	if (!__rseq_size)
		return 0;
	const struct rseq *rs =
		(const struct rseq *)((char *)__builtin_thread_pointer() + __rseq_offset);
	return (int32_t)rs->cpu_id >= 0;
#else
	return 0;
#endif
}

/* the rseq time-slice extension: "available, not used" or "unavailable",
 * with the kernel's answer in detail */
static const char *slice_ext(char *detail, size_t n)
{
	errno = 0;
	int r = prctl(PR_RSEQ_SLICE_EXTENSION, PR_RSEQ_SLICE_EXTENSION_GET, 0, 0, 0);
	if (r < 0) {
		snprintf(detail, n, "prctl(PR_RSEQ_SLICE_EXTENSION, GET): %s", strerror(errno));
		return "unavailable";
	}
	snprintf(detail, n, "prctl(PR_RSEQ_SLICE_EXTENSION, GET) = %#x (%s); "
		 "sl-lockholder does not request extensions", r,
		 r & PR_RSEQ_SLICE_EXT_ENABLE ? "enabled" : "not enabled");
	return "available, not used";
}

static json_t *config_json(long nthreads, double spin_per_us, const char *clock)
{
	return json_pack("{s:f,s:I,s:s,s:I,s:I,s:s,s:I,s:f,s:f,s:s,s:i,s:f,s:s,s:I}",
			 "duration_s", O.duration_s, "threads", (json_int_t)nthreads,
			 "lock", lock_names[O.lock], "spins", (json_int_t)O.spins,
			 "delay_us", (json_int_t)O.delay_us, "enter", enter_names[O.enter],
			 "entries", (json_int_t)O.entries, "cs_us", O.cs_us,
			 "think_us", O.think_us, "detect", detect_names[O.detect],
			 "online_cpus", nat_online_cpus(), "spin_per_us", spin_per_us,
			 "clock", clock, "page_size", (json_int_t)page_size);
}

static json_t *jnum_or_null(int ok, double v)
{
	return ok ? json_real(v) : json_null();
}

static int report(long n, double window_s, double cpu_s, json_t *config)
{
	struct hist hold, wait;
	uint64_t holds = 0, preempted = 0, spin_ns = 0, backoffs = 0, nivcsw = 0, nvcsw = 0,
		 minflt = 0, majflt = 0;
	hist_init_loglin(&hold, NAT_HIST_SUB, NAT_HIST_POW);
	hist_init_loglin(&wait, NAT_HIST_SUB, NAT_HIST_POW);
	for (long i = 0; i < n; i++) {
		struct worker *w = &workers[i];
		nat_lat_finish(&w->hold_rec, &w->hold);
		nat_lat_finish(&w->wait_rec, &w->wait);
		hist_merge(&hold, &w->hold);
		hist_merge(&wait, &w->wait);
		holds += w->holds, preempted += w->preempted, spin_ns += w->spin_ns;
		backoffs += w->backoffs, nivcsw += w->nivcsw, nvcsw += w->nvcsw;
		minflt += w->minflt, majflt += w->majflt;
	}
	char detail[200];
	const char *ext = slice_ext(detail, sizeof(detail));
	json_t *o = nat_report_new("sl-lockholder", config);
	json_object_set_new(o, "window_s", json_real(window_s));
	json_object_set_new(o, "holds", json_integer((json_int_t)holds));
	json_object_set_new(o, "acq_per_s", json_real((double)holds / window_s));
	nat_json_pct_us(o, "hold_p50_us", &hold, 50);
	nat_json_pct_us(o, "hold_p99_us", &hold, 99);
	json_object_set_new(o, "hold_max_us", jnum_or_null(hold.total > 0, hold.max / 1000));
	nat_json_pct_us(o, "wait_p50_us", &wait, 50);
	nat_json_pct_us(o, "wait_p99_us", &wait, 99);
	json_object_set_new(o, "wait_max_us", jnum_or_null(wait.total > 0, wait.max / 1000));
	json_object_set_new(o, "spin_s", json_real((double)spin_ns / 1e9));
	json_object_set_new(o, "cpu_s", json_real(cpu_s));
	json_object_set_new(o, "spin_cpu_pct",
			    jnum_or_null(cpu_s > 0, 100.0 * (double)spin_ns / 1e9 / cpu_s));
	json_object_set_new(o, "backoffs", json_integer((json_int_t)backoffs));
	json_object_set_new(o, "holder_preemptions", json_integer((json_int_t)preempted));
	json_object_set_new(o, "holder_preempt_pct",
			    jnum_or_null(holds > 0, 100.0 * (double)preempted / (double)holds));
	json_object_set_new(o, "ivcsw", json_integer((json_int_t)nivcsw));
	json_object_set_new(o, "vcsw", json_integer((json_int_t)nvcsw));
	json_object_set_new(o, "minflt_per_hold",
			    jnum_or_null(holds > 0, (double)minflt / (double)holds));
	json_object_set_new(o, "majflt_per_hold",
			    jnum_or_null(holds > 0, (double)majflt / (double)holds));
	/* both: the kernel counts a fault it had to retry (FAULT_FLAG_TRIED)
	 * as major, also for anonymous memory */
	json_object_set_new(o, "faults_per_hold",
			    jnum_or_null(holds > 0, (double)(minflt + majflt) / (double)holds));
	json_object_set_new(o, "rseq_slice_ext", json_string(ext));
	json_object_set_new(o, "rseq_slice_ext_detail", json_string(detail));
	json_object_set_new(o, "hist", json_pack("{s:o,s:o}", "hold_ns", hist_to_json(&hold),
						 "wait_ns", hist_to_json(&wait)));
	hist_free(&hold);
	hist_free(&wait);
	return nat_report_print(o);
}

static double cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)tv_ns(&ru.ru_utime) / 1e9 + (double)tv_ns(&ru.ru_stime) / 1e9;
}

int main(int argc, char **argv)
{
	int r = nat_main_start("sl-lockholder", parse_opts, argc, argv);
	if (r >= 0)
		return r;
	long n = O.threads ? O.threads : 2L * nat_online_cpus();
	if (n > MAX_THREADS)
		n = MAX_THREADS;
	if (O.detect == D_RSEQ && !rseq_registered()) {
		nat_err("--detect rseq: no rseq area is registered for this thread (glibc "
			"older than 2.35, the kernel lacks rseq, or GLIBC_TUNABLES "
			"glibc.pthread.rseq=0); use --detect getrusage");
		return 1;
	}
	long ps = sysconf(_SC_PAGESIZE);
	page_size = ps > 0 ? (size_t)ps : 4096;
	const char *clock = O.clock == NAT_CLOCK_MONOTONIC ? "monotonic" : stamp_init();
	double spin_per_us = nat_calibrate_spin();
	cs_loops = (uint64_t)llround(spin_per_us * O.cs_us);
	think_loops = (uint64_t)llround(spin_per_us * O.think_us);
	chunk_loops = (uint64_t)llround(spin_per_us * 1000);
	if (!chunk_loops)
		chunk_loops = 1;
	workers = calloc((size_t)n, sizeof(*workers));
	if (!workers) {
		nat_err("out of memory");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		struct worker *w = &workers[i];
		w->idx = (int)i;
		void *counts = calloc(1, nat_hist_shared_bytes()),
		     *counts2 = calloc(1, nat_hist_shared_bytes());
		if (!counts || !counts2 || nat_hist_init_in(&w->hold, counts) ||
		    nat_hist_init_in(&w->wait, counts2)) {
			nat_err("out of memory");
			return 1;
		}
		if (O.enter == E_FAULT) {
			w->region = mmap(NULL, (size_t)O.entries * page_size, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (w->region == MAP_FAILED) {
				nat_err("mmap: %s", strerror(errno));
				return 1;
			}
			/* every touch one small-page fault: without this, a region
			 * that merged with a neighbour (a thread's stack) into a
			 * VMA spanning 2 MiB could be folded into a transparent
			 * huge page (THP "always", as Debian's kernel has it, and
			 * khugepaged), and a hold would then find its pages there */
			if (madvise(w->region, (size_t)O.entries * page_size, MADV_NOHUGEPAGE) &&
			    errno != EINVAL) {
				nat_err("madvise(MADV_NOHUGEPAGE): %s", strerror(errno));
				return 1;
			}
		}
	}
	long started = 0;
	for (; started < n; started++) {
		int e = pthread_create(&workers[started].th, NULL, worker_thread, &workers[started]);
		if (e) {
			nat_err("cannot start thread %ld of %ld: %s", started + 1, n, strerror(e));
			break;
		}
	}
	nat_sleep_ns(20000000);           /* let them reach the start line */
	double cpu0 = cpu_seconds();
	uint64_t t0 = nat_now_ns();
	atomic_store(&go, 1);
	if (started == n)
		nat_sleep_ns((uint64_t)(O.duration_s * 1e9));
	atomic_store(&stop_flag, 1);
	for (long i = 0; i < started; i++)
		pthread_join(workers[i].th, NULL);
	double window_s = (double)(nat_now_ns() - t0) / 1e9;
	double cpu_s = cpu_seconds() - cpu0;
	if (started < n)
		return 1;
	for (long i = 0; i < n; i++)
		if (workers[i].failed)
			return 1;
	return report(n, window_s, cpu_s, config_json(n, spin_per_us, clock));
}
