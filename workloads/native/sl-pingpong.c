/*
 * sl-pingpong: the microservice wakeup chain (DeathStarBench's pattern of
 * "sleep -> wakeup -> sleep" between services) as a small static program.
 *
 * A lane is a client and a chain of stages called RPC style: the client calls
 * stage 0, stage s does its work and calls stage s+1, ..., and every stage
 * replies to its caller once its callees replied. The last stage has
 * --fanout K replicas that its caller calls in parallel (ComposePost style)
 * and waits for. Each call and each reply is one wakeup through the chosen
 * mechanism (futex, pipe, eventfd, unix socket); the request itself travels
 * in shared memory. --concurrency C runs C independent lanes: closed loop
 * (each client sends its next request when the previous one returned) or,
 * with --rate R, open loop (each lane a Poisson stream of rate R/C; latency
 * from the scheduled send time so that falling behind shows as latency).
 * Stages are threads, or processes with --procs.
 *
 * Measurements come from a window [t0, t1) after --warmup; all latencies are
 * recorded in ns in log-linear histograms (analysis/hist.h: sub_bits 7, at
 * most 0.4% relative error) and reported in us. The metrics are defined in
 * docs/workloads-native.md; output is one JSON object on stdout.
 *
 * The hot path holds only what the measurement needs, so that a round trip
 * costs little more than `perf bench sched pipe` (bench/pingpong-vs-perf.sh):
 * a task reads the clock (nat_fast_ns: the TSC where the kernel's clocksource
 * is tsc, else the vDSO) and its CPU (rseq) once when a wait returns;
 * that stamp is the wakee's side of the wakeup and, when the task does
 * nothing but bookkeeping on its own cache lines before its next wake call,
 * the waker's side of that call too (else the call reads the clock again):
 * one clock read per hop in a closed loop without work. Whether a message
 * was there before the wait is read from the sender's message count, not a
 * clock. Latencies go into the histograms' counts through nat_lat_add (no
 * floating point; totals and extremes are set after the run), and a wakeup
 * is noted, reading the sender's line, only once the task's next wake call
 * is out. docs/workloads-native.md, "Cost of the instrumentation", has the
 * details and figures.
 */
#include <errno.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workloads/native/libnative.h"

#define MAX_CPUS 4096
#define OP_REQ 1
#define OP_QUIT 2

enum mech { M_FUTEX, M_PIPE, M_EVENTFD, M_UNIX };
static const char *const mech_names[] = { "futex", "pipe", "eventfd", "unix", NULL };

struct opts {
	int stages, fanout, concurrency, mech, procs;
	double duration_s, warmup_s, rate;
	long work_us, wss_kb;
	unsigned long long seed;
	int policy, priority, nice;
	int clock;                   /* --clock: enum nat_clock_mode */
	const char *sched_out;       /* --sched-out: placement evidence dump */
};

/* One direction of a caller -> callee edge, written only by the task that
 * sends that way, on a cache line of its own: nothing a task does between a
 * clock read and the wake call that uses it waits for a line the other task
 * wrote (on separate CPUs such a miss would count as wakeup latency). */
struct side {
	_Atomic uint32_t posted;     /* messages sent this way (the futex word) */
	uint32_t taken;              /* messages this side's owner took the other way */
	uint64_t t[2];               /* message m: the sender's clock read for its wake */
	int cpu[2];                  /* call, and its CPU, in slot m & 1 */
	int op;                      /* requests: OP_REQ or OP_QUIT (the fd mechanisms
				      * also carry it in the message) */
	uint64_t id;                 /* requests: the request */
} __attribute__((aligned(64)));

/* a caller -> callee edge in shared memory; one request outstanding at most */
struct hop {
	struct side req;             /* written by the caller */
	struct side rep;             /* written by the callee */
	int rfd[2], wfd[2];          /* [0] requests, [1] replies (pipe, eventfd,
				      * unix); read-only once set up */
} __attribute__((aligned(64)));

/* per thread (client or stage instance), in shared memory; what every
 * wakeup touches comes first (two cache lines) */
struct epstat {
	struct nat_lat wake_rec;     /* wakeup latency, ns, recorded into wake;
				      * wake_rec.n is the number of wakeups */
	uint64_t same_cpu, cross_llc, nowait;
	uint64_t observed_migr;
	int last_cpu;
	pid_t tid;
	int failed;
	struct hist wake;            /* read after the run */
} __attribute__((aligned(64)));

/* per lane, client side; what every request touches comes first (one line) */
struct lanestat {
	struct nat_lat req_rec;      /* request latency, ns, recorded into req */
	uint64_t sent, completed, in_flight, scheduled, backlog;
	struct hist req;             /* read after the run */
} __attribute__((aligned(64)));

struct shared {
	_Atomic int ready, go, abort, done;  /* done: end counters read */
	uint64_t t0, t1;             /* measurement window, CLOCK_MONOTONIC ns */
	double spin_per_us;
	int llc[MAX_CPUS];
};

static struct opts O;
static const char *clock_src = "monotonic";  /* the clock stamps are read from */
static struct shared *S;
static struct hop *hops;         /* lanes * actors */
static struct epstat *eps;       /* lanes * (actors + 1); index actors is the client */
static struct lanestat *lanes;
static int actors;               /* stage instances per lane: (stages - 1) + fanout */

/* ---- channels ------------------------------------------------------------ */

/* a clock read and the CPU it was taken on (t == 0: none yet, or stale) */
struct stamp { uint64_t t; int cpu; };

static inline struct stamp stamp_now(void)
{
	return (struct stamp){ nat_fast_ns(), nat_cpu_fast() };
}

static long futex(_Atomic uint32_t *w, int op, uint32_t val)
{
	return syscall(SYS_futex, (uint32_t *)w, op | (O.procs ? 0 : FUTEX_PRIVATE_FLAG), val,
		       NULL, NULL, 0);
}

static int full_io(int fd, void *buf, size_t n, int wr)
{
	size_t done = 0;
	while (done < n) {
		/* syscall(2), not read/write: those are cancellation points, and
		 * glibc wraps them in pthread_enable/disable_asynccancel in a
		 * threaded program (5% of a pinned round trip here); no thread
		 * is ever cancelled */
		ssize_t r = syscall(wr ? SYS_write : SYS_read, fd, (char *)buf + done, n - done);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

/* send message m = posted + 1 through s (the sender's own side): the stamp
 * into slot m & 1, then the count, then the wake call. Slots alternate so
 * that the receiver may read message m's stamp after its next send: the
 * sender cannot reach message m + 2 before that. */
static int send_msg(struct side *s, int wfd, struct stamp w, int op)
{
	uint32_t m = atomic_load_explicit(&s->posted, memory_order_relaxed) + 1;
	s->t[m & 1] = w.t;
	s->cpu[m & 1] = w.cpu;
	s->op = op;
	atomic_store_explicit(&s->posted, m, memory_order_release);
	switch (O.mech) {
	case M_FUTEX:
		futex(&s->posted, FUTEX_WAKE, 1);
		return 0;
	case M_EVENTFD: {
		uint64_t e = (uint64_t)op;
		return full_io(wfd, &e, sizeof(e), 1);
	}
	default: {                   /* pipe and unix socket: an int, like perf bench */
		int v = op;
		return full_io(wfd, &v, sizeof(v), 1);
	}
	}
}

/* a message was sent through `from` that `me`'s owner has not taken: called
 * just before take_msg, it says whether the sender's wake call (and its clock
 * read, which precede the count) came before the receiver started waiting */
static inline int msg_pending(const struct side *from, const struct side *me)
{
	return atomic_load_explicit(&from->posted, memory_order_acquire) != me->taken;
}

/* take the next message sent through `from`, waiting for it (me: the
 * receiver's own side); its op, or -1 */
static int take_msg(const struct side *from, struct side *me, int rfd)
{
	int op;
	uint64_t e;
	switch (O.mech) {
	case M_FUTEX:
		for (;;) {
			uint32_t w = atomic_load_explicit(&from->posted, memory_order_acquire);
			if (w != me->taken)
				break;
			if (futex((_Atomic uint32_t *)&from->posted, FUTEX_WAIT, w) &&
			    errno != EAGAIN && errno != EINTR)
				return -1;
		}
		op = from->op;       /* on the line the wait just read */
		break;
	case M_EVENTFD:              /* the sum of what was written since the last
				      * read: a quit may follow a request that a
				      * failed caller left unanswered (1 + 2) */
		if (full_io(rfd, &e, sizeof(e), 0))
			return -1;
		op = e >= OP_QUIT ? OP_QUIT : (int)e;
		break;
	default:
		if (full_io(rfd, &op, sizeof(op), 0))
			return -1;
		break;
	}
	me->taken++;
	return op;
}

static int chan_init(struct hop *h)
{
	int a[2], b[2];
	switch (O.mech) {
	case M_FUTEX:
		return 0;
	case M_PIPE:
		if (pipe(a))
			return -1;
		if (pipe(b))
			return -1;
		h->rfd[0] = a[0], h->wfd[0] = a[1];
		h->rfd[1] = b[0], h->wfd[1] = b[1];
		return 0;
	case M_EVENTFD:
		h->rfd[0] = h->wfd[0] = eventfd(0, 0);
		h->rfd[1] = h->wfd[1] = eventfd(0, 0);
		return h->rfd[0] < 0 || h->rfd[1] < 0 ? -1 : 0;
	default:
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, a))
			return -1;
		h->wfd[0] = a[0], h->rfd[0] = a[1];
		h->wfd[1] = a[1], h->rfd[1] = a[0];
		return 0;
	}
}

/* ---- wakeup bookkeeping --------------------------------------------------- */

static inline int in_window(uint64_t t)
{
	return t >= S->t0 && t < S->t1;
}

/* the wakee ran at t_run on cpu after its wait (pending: the message had
 * been posted before it started waiting); t_wake and waker_cpu are the
 * waker's stamp for its wake call */
static inline void note_wakeup(struct epstat *e, int pending, uint64_t t_wake, int waker_cpu,
			       uint64_t t_run, int cpu)
{
	if (e->last_cpu >= 0 && cpu != e->last_cpu && in_window(t_run))
		e->observed_migr++;
	e->last_cpu = cpu;
	if (!in_window(t_wake))
		return;
	if (pending) {               /* the message was there before we waited */
		e->nowait++;
		return;
	}
	nat_lat_add(&e->wake_rec, t_run > t_wake ? t_run - t_wake : 0);
	if (cpu == waker_cpu)
		e->same_cpu++;
	if (cpu < MAX_CPUS && waker_cpu < MAX_CPUS && S->llc[cpu] != S->llc[waker_cpu])
		e->cross_llc++;
}

/* a wakeup to note: message m sent through `from`, taken by a task that ran
 * at `run`; pending: it was sent before the task started waiting */
struct wk {
	const struct side *from;     /* NULL: nothing held */
	uint32_t m;
	int pending;
	struct stamp run;
};

static inline void note(struct epstat *e, struct wk *w)
{
	if (!w->from)
		return;
	note_wakeup(e, w->pending, w->from->t[w->m & 1], w->from->cpu[w->m & 1], w->run.t,
		    w->run.cpu);
	w->from = NULL;
}

/* call callees [first, first+n) of a lane. *st: the caller's stamp from
 * when its own wait returned, if it did nothing since but bookkeeping on its
 * own lines (t == 0 otherwise); the first call uses it as its wake time
 * instead of reading the clock again. *held: a wakeup the caller has not
 * noted yet (noting reads the sender's line), noted once the first call is
 * out. */
static int call_send(struct hop *lh, struct epstat *e, int first, int n, int op, uint64_t id,
		     const struct stamp *st, struct wk *held)
{
	for (int i = first; i < first + n; i++) {
		struct hop *h = &lh[i];
		h->req.id = id;
		if (send_msg(&h->req, h->wfd[0], i == first && st->t ? *st : stamp_now(), op))
			return -1;
		note(e, held);
	}
	return 0;
}

/* wait for the replies of callees [first, first+n): *st becomes the stamp
 * taken after the last one, and *held that reply's wakeup, to be noted
 * after the caller's next wake call */
static int call_wait(struct hop *lh, struct epstat *e, int first, int n, struct stamp *st,
		     struct wk *held)
{
	for (int i = first; i < first + n; i++) {
		struct hop *h = &lh[i];
		int pending = msg_pending(&h->rep, &h->req);
		if (take_msg(&h->rep, &h->req, h->rfd[1]) < 0)
			return -1;
		*st = stamp_now();
		note(e, held);
		*held = (struct wk){ &h->rep, h->req.taken, pending, *st };
	}
	return 0;
}

/* both: a call and its replies (only the call for OP_QUIT) */
static int call(struct hop *lh, struct epstat *e, int first, int n, int op, uint64_t id,
		struct stamp *st, struct wk *held)
{
	if (call_send(lh, e, first, n, op, id, st, held))
		return -1;
	return op == OP_QUIT ? 0 : call_wait(lh, e, first, n, st, held);
}

/* callees of actor a (-1: the client) */
static void callees(int a, int *first, int *n)
{
	int s = a + 1;                       /* the stage being called */
	*first = s;
	*n = s == O.stages - 1 ? O.fanout : (s < O.stages - 1 ? 1 : 0);
}

/* ---- stage instances ---------------------------------------------------------- */

struct actor_arg { int lane, a; };

static void wait_go(void)
{
	while (!atomic_load(&S->go) && !atomic_load(&S->abort))
		nat_sleep_ns(100000);
}

static int actor_run(int lane, int a)
{
	struct hop *lh = &hops[(size_t)lane * actors];
	struct hop *in = &lh[a];
	struct epstat *e = &eps[(size_t)lane * (actors + 1) + a];
	struct nat_wset ws;
	int first, n;
	int rc = 0;

	e->tid = nat_gettid();
	e->last_cpu = -1;
	callees(a, &first, &n);
	if (nat_apply_sched(O.policy, O.priority, O.nice) ||
	    nat_wset_init(&ws, (size_t)O.wss_kb * 1024, O.seed * 1000003 + (uint64_t)lane * 1000 + (uint64_t)a)) {
		e->failed = 1;
		atomic_store(&S->abort, 1);
		atomic_fetch_add(&S->ready, 1);
		return -1;
	}
	uint64_t loops = (uint64_t)llround(S->spin_per_us * (double)O.work_us);
	int work = loops || ws.nlines;
	struct wk held = { 0 };
	atomic_fetch_add(&S->ready, 1);
	for (;;) {
		int pending = msg_pending(&in->req, &in->rep);
		int op = take_msg(&in->req, &in->rep, in->rfd[0]);
		if (op < 0) {
			rc = -1;
			break;
		}
		struct stamp st = stamp_now();
		if (op == OP_QUIT) {
			st.t = 0;
			if (n)
				call(lh, e, first, n, OP_QUIT, 0, &st, &held);
			break;
		}
		struct wk rq = { &in->req, in->rep.taken, pending, st };
		if (work || n) {             /* the next wake call reads the clock anew */
			note(e, &rq);
			nat_wset_touch(&ws);
			nat_spin(loops);
			st.t = 0;
		}
		if (n && call(lh, e, first, n, OP_REQ, in->req.id, &st, &held)) {
			rc = -1;
			break;
		}
		if (send_msg(&in->rep, in->wfd[1], st.t ? st : stamp_now(), 1)) {
			rc = -1;
			break;
		}
		note(e, &rq);
		note(e, &held);
	}
	nat_wset_free(&ws);
	if (rc)
		e->failed = 1;
	return rc;
}

static void *actor_thread(void *p)
{
	struct actor_arg *aa = p;
	actor_run(aa->lane, aa->a);
	return NULL;
}

/* ---- clients --------------------------------------------------------------------- */

/* a client's request whose completion is counted once the next call is out
 * (so that nothing but the send stands between the stamp and the call) */
struct done { uint64_t ts, td; int counted; };

static void count_done(struct lanestat *ls, struct done *d)
{
	if (d->counted) {
		if (d->td < S->t1) {
			ls->completed++;
			nat_lat_add(&ls->req_rec, d->td - d->ts);
		} else {
			ls->in_flight++;
		}
	}
	d->counted = 0;
}

static void *client_thread(void *p)
{
	int lane = (int)(intptr_t)p;
	struct hop *lh = &hops[(size_t)lane * actors];
	struct epstat *e = &eps[(size_t)lane * (actors + 1) + actors];
	struct lanestat *ls = &lanes[lane];
	struct nat_rng rng;
	int first, n;
	uint64_t id = 0;

	e->tid = nat_gettid();
	e->last_cpu = -1;
	callees(-1, &first, &n);
	nat_rng_seed(&rng, O.seed, (uint64_t)lane + 1);
	if (nat_apply_sched(O.policy, O.priority, O.nice)) {
		e->failed = 1;
		atomic_store(&S->abort, 1);
	}
	atomic_fetch_add(&S->ready, 1);
	wait_go();
	if (atomic_load(&S->abort))
		goto quit;

	double mean_gap_ns = O.rate > 0 ? 1e9 * O.concurrency / O.rate : 0;
	uint64_t sched = S->t0 > (uint64_t)(O.warmup_s * 1e9) ? S->t0 - (uint64_t)(O.warmup_s * 1e9)
							    : 0;
	/* closed loop: the stamp taken when a reply arrived is the completion
	 * time of that request and the send time (and first wake time) of the
	 * next; between them only the checks for the window's end and abort */
	struct stamp st = { 0, 0 };
	struct wk held = { 0 };
	struct done prev = { 0, 0, 0 };
	for (;;) {
		uint64_t ts;
		if (mean_gap_ns > 0) {
			sched += (uint64_t)nat_rng_exp(&rng, mean_gap_ns);
			if (sched >= S->t1)
				break;
			st = stamp_now();
			if (st.t >= S->t1) {     /* behind: count what was due */
				if (in_window(sched))
					ls->backlog++, ls->scheduled++;
				continue;
			}
			if (in_window(sched))
				ls->scheduled++;
			if (st.t < sched) {      /* early: sleep, then the call reads the clock */
				nat_fast_sleep_until(sched);
				st.t = 0;
			}
			ts = sched;
		} else {
			if (!st.t)
				st = stamp_now();
			ts = st.t;
			if (ts >= S->t1)
				break;
		}
		if (call_send(lh, e, first, n, OP_REQ, ++id, &st, &held)) {
			e->failed = 1;
			atomic_store(&S->abort, 1);
			break;
		}
		count_done(ls, &prev);
		prev = (struct done){ ts, 0, in_window(ts) };
		if (prev.counted)
			ls->sent++;
		if (call_wait(lh, e, first, n, &st, &held)) {
			e->failed = 1;
			atomic_store(&S->abort, 1);
			break;
		}
		prev.td = st.t;
		if (atomic_load_explicit(&S->abort, memory_order_relaxed))
			break;
	}
	count_done(ls, &prev);
quit:
	/* stay alive until the end-of-window counters of every task are read */
	while (!atomic_load(&S->done))
		nat_sleep_ns(200000);
	st.t = 0;
	call(lh, e, first, n, OP_QUIT, 0, &st, &held);
	return NULL;
}

/* ---- options ------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
"usage: sl-pingpong [options]\n"
"A client calls a chain of stages RPC style; every call and reply is a wakeup.\n"
"  -s, --stages N        stages in the chain, 1..32 (default 1)\n"
"  -k, --fanout K        replicas of the last stage, called in parallel, 1..16 (default 1)\n"
"  -c, --concurrency C   independent lanes (client + chain each), 1..256 (default 1)\n"
"  -m, --mechanism M     futex, pipe, eventfd or unix (default pipe)\n"
"  -P, --procs           stages are processes (default: threads)\n"
"  -r, --rate R          open loop: R requests/s in total, Poisson arrivals\n"
"                        (default 0: closed loop)\n"
"  -d, --duration S      measurement window in seconds, 0.05..86400 (default 5)\n"
"  -w, --warmup S        unmeasured time before the window, 0..3600 (default 0.5)\n"
"  -u, --work-us U       CPU work per request in each stage, us, 0..1000000 (default 10)\n"
"  -W, --wss-kb KB       working set each stage touches per request, KiB,\n"
"                        0..1048576 (default 64)\n"
"      --policy P        other, batch, idle, fifo or rr (default other)\n"
"      --priority N      1..99 with fifo/rr\n"
"      --nice N          -20..19 (default 0)\n"
"      --seed N          seed for arrivals and working-set order (default 1)\n"
"      --sched-out FILE  write every task's /proc/<tid>/sched at the window's start\n"
"                        and end into FILE (wakeup-placement evidence)\n"
"      --clock MODE      auto (default): stamps from the TSC where the kernel's\n"
"                        clocksource is tsc, scaled to CLOCK_MONOTONIC; monotonic:\n"
"                        clock_gettime always (config.clock says which was used)\n"
"  -h, --help            this text\n"
"Output: one JSON object on stdout (metrics in docs/workloads-native.md).\n");
}

static int parse_opts(int argc, char **argv)
{
	const struct nat_opt opts[] = {
		NAT_OPT_NUM("stages", 's', NAT_OPT_INT, &O.stages, 1, 32),
		NAT_OPT_NUM("fanout", 'k', NAT_OPT_INT, &O.fanout, 1, 16),
		NAT_OPT_NUM("concurrency", 'c', NAT_OPT_INT, &O.concurrency, 1, 256),
		{ .name = "mechanism", .short_name = 'm', .kind = NAT_OPT_ENUM, .out = &O.mech,
		  .choices = mech_names },
		{ .name = "procs", .short_name = 'P', .kind = NAT_OPT_FLAG, .out = &O.procs },
		NAT_OPT_NUM("rate", 'r', NAT_OPT_DOUBLE, &O.rate, 0, 1e7),
		NAT_OPT_NUM("duration", 'd', NAT_OPT_DOUBLE, &O.duration_s, 0.05, 86400),
		NAT_OPT_NUM("warmup", 'w', NAT_OPT_DOUBLE, &O.warmup_s, 0, 3600),
		NAT_OPT_NUM("work-us", 'u', NAT_OPT_LONG, &O.work_us, 0, 1000000),
		NAT_OPT_NUM("wss-kb", 'W', NAT_OPT_LONG, &O.wss_kb, 0, 1048576),
		{ .name = "policy", .kind = NAT_OPT_ENUM, .out = &O.policy,
		  .choices = nat_policy_names },
		NAT_OPT_NUM("priority", 0, NAT_OPT_INT, &O.priority, 1, 99),
		NAT_OPT_NUM("nice", 0, NAT_OPT_INT, &O.nice, -20, 19),
		NAT_OPT_NUM("seed", 0, NAT_OPT_ULLONG, &O.seed, 0, 0x7fffffffL),
		{ .name = "sched-out", .kind = NAT_OPT_STRING, .out = &O.sched_out },
		{ .name = "clock", .kind = NAT_OPT_ENUM, .out = &O.clock,
		  .choices = nat_clock_names },
		{ .name = NULL },
	};
	O = (struct opts){ .stages = 1, .fanout = 1, .concurrency = 1, .mech = M_PIPE,
			   .duration_s = 5, .warmup_s = 0.5, .work_us = 10, .wss_kb = 64,
			   .seed = 1 };
	int rc = nat_parse_opts(argc, argv, opts, usage);
	if (rc)
		return rc;
	if (nat_check_sched(O.policy, O.priority, O.nice))
		return -1;
	return 0;
}

/* ---- setup, measurement, report ----------------------------------------------------------- */

/* per task counters read by the main thread at t0 and t1: from
 * /proc/<tid>/sched when the kernel has it (migrations and both kinds of
 * context switches), else context switches from /proc/<tid>/status and the
 * migrations the task itself observed between its wakeups */
struct task_counters { uint64_t m0, m1, v0, v1, i0, i1; int sched_ok, csw_ok; };

static void snapshot(struct task_counters *tc, int ntasks, const struct epstat *e, int end)
{
	for (int i = 0; i < ntasks; i++) {
		uint64_t m = 0, v = 0, iv = 0;
		int sok = !nat_task_sched(e[i].tid, &m, &v, &iv);
		int cok = sok || !nat_task_csw(e[i].tid, &v, &iv);
		if (!end) {
			tc[i].m0 = m, tc[i].v0 = v, tc[i].i0 = iv;
			tc[i].sched_ok = sok, tc[i].csw_ok = cok;
		} else {
			tc[i].m1 = m, tc[i].v1 = v, tc[i].i1 = iv;
			tc[i].sched_ok &= sok, tc[i].csw_ok &= cok;
		}
	}
}

/* --sched-out: every task's /proc/<tid>/sched (a failure is only said:
 * the run then has no placement evidence, and its parser says why) */
static void sched_dump(const char *phase, int ntasks, const struct epstat *e)
{
	pid_t *t = O.sched_out ? calloc((size_t)ntasks, sizeof(*t)) : NULL;
	for (int i = 0; t && i < ntasks; i++)
		t[i] = e[i].tid;
	if (t)
		nat_sched_dump(O.sched_out, phase, t, ntasks);
	free(t);
}

static json_t *config_json(int llc_groups)
{
	json_t *c = json_pack("{s:i,s:i,s:i,s:s,s:s,s:f,s:f,s:f,s:I,s:I,s:I,s:s,s:i,s:i}",
			      "stages", O.stages, "fanout", O.fanout, "concurrency", O.concurrency,
			      "mechanism", mech_names[O.mech], "tasks", O.procs ? "procs" : "threads",
			      "rate", O.rate, "duration_s", O.duration_s, "warmup_s", O.warmup_s,
			      "work_us", (json_int_t)O.work_us, "wss_kb", (json_int_t)O.wss_kb,
			      "seed", (json_int_t)O.seed, "policy", nat_policy_names[O.policy],
			      "priority", O.priority, "nice", O.nice);
	json_object_set_new(c, "loop", json_string(O.rate > 0 ? "open" : "closed"));
	json_object_set_new(c, "llc_groups", llc_groups > 0 ? json_integer(llc_groups) : json_null());
	json_object_set_new(c, "spin_loops_per_us", json_real(S->spin_per_us));
	json_object_set_new(c, "clock", json_string(clock_src));
	json_object_set_new(c, "tsc_khz", nat_fc.tsc ? json_integer((json_int_t)nat_fastclock_tsc_khz())
						    : json_null());
	return c;
}

/* shared memory (the window, the edges, the tasks' and lanes' counters and
 * histograms), the LLC groups, the channels, the clock and the spin
 * calibration; -1 after nat_err */
static int setup(int L, int ntasks, int *llc_groups)
{
	size_t hb = nat_hist_shared_bytes();
	S = nat_shm_alloc(sizeof(*S));
	hops = nat_shm_alloc(sizeof(struct hop) * (size_t)L * (size_t)actors);
	eps = nat_shm_alloc(sizeof(struct epstat) * (size_t)ntasks);
	lanes = nat_shm_alloc(sizeof(struct lanestat) * (size_t)L);
	char *hmem = nat_shm_alloc(hb * (size_t)(ntasks + L));
	if (!S || !hops || !eps || !lanes || !hmem) {
		nat_err("cannot allocate shared memory: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < ntasks; i++) {
		nat_hist_init_in(&eps[i].wake, hmem + hb * (size_t)i);
		nat_lat_init(&eps[i].wake_rec, &eps[i].wake);
	}
	for (int i = 0; i < L; i++) {
		nat_hist_init_in(&lanes[i].req, hmem + hb * (size_t)(ntasks + i));
		nat_lat_init(&lanes[i].req_rec, &lanes[i].req);
	}
	*llc_groups = nat_llc_groups(S->llc, MAX_CPUS, NULL, NULL);
	for (int i = 0; i < L * actors; i++)
		if (chan_init(&hops[i])) {
			nat_err("cannot create %s channels: %s (lower --concurrency or raise "
				"the open-file limit)", mech_names[O.mech], strerror(errno));
			return -1;
		}
	clock_src = nat_fastclock_init(O.clock);
	S->spin_per_us = O.work_us ? nat_calibrate_spin() : 0;
	return 0;
}

/* the tasks main starts: threads (the stages without --procs, the clients)
 * and processes (the stages with --procs) */
struct tasks {
	pthread_t *th;
	pid_t *kids;
	struct actor_arg *aa;
	int nth, nkids;
};

/* start every stage instance and every client; -1 after nat_err (the ones
 * started are in *t) */
static int start_tasks(struct tasks *t, int L)
{
	for (int l = 0; l < L; l++)
		for (int a = 0; a < actors; a++) {
			if (O.procs) {
				pid_t p = fork();
				if (p == 0)
					_exit(actor_run(l, a) ? 1 : 0);
				if (p < 0) {
					nat_err("fork: %s", strerror(errno));
					atomic_store(&S->abort, 1);
					return -1;
				}
				t->kids[t->nkids++] = p;
			} else {
				t->aa[t->nth] = (struct actor_arg){ l, a };
				if (pthread_create(&t->th[t->nth], NULL, actor_thread, &t->aa[t->nth])) {
					nat_err("cannot create a thread");
					return -1;
				}
				t->nth++;
			}
		}
	for (int l = 0; l < L; l++) {
		if (pthread_create(&t->th[t->nth], NULL, client_thread, (void *)(intptr_t)l)) {
			nat_err("cannot create a thread");
			return -1;
		}
		t->nth++;
	}
	return 0;
}

/* wait (30 s at most) until every task is ready; -1 when one failed or
 * they were late */
static int wait_ready(int ntasks)
{
	uint64_t deadline = nat_now_ns() + 30000000000ull;
	while (atomic_load(&S->ready) < ntasks && nat_now_ns() < deadline)
		nat_sleep_ns(200000);
	if (atomic_load(&S->ready) < ntasks || atomic_load(&S->abort)) {
		if (!atomic_load(&S->abort))
			nat_err("the stages did not start within 30 s");
		return -1;
	}
	return 0;
}

/* the measurement: the window after the warmup, the tasks' counters (and
 * --sched-out) at its start and end */
static void measure(struct task_counters *tc, int ntasks)
{
	S->t0 = nat_fast_ns() + (uint64_t)(O.warmup_s * 1e9) + 1000000;
	S->t1 = S->t0 + (uint64_t)(O.duration_s * 1e9);
	atomic_store(&S->go, 1);
	nat_fast_sleep_until(S->t0);
	snapshot(tc, ntasks, eps, 0);
	sched_dump("start", ntasks, eps);
	nat_fast_sleep_until(S->t1);
	snapshot(tc, ntasks, eps, 1);
	sched_dump("end", ntasks, eps);
}

/* end every task (killed when rc says the run failed) and wait for it: the
 * run's status, 1 when it or a task failed */
static int stop_tasks(struct tasks *t, int ntasks, int rc)
{
	atomic_store(&S->done, 1);
	atomic_store(&S->go, 1);
	for (int i = 0; i < t->nth; i++)
		pthread_join(t->th[i], NULL);
	for (int i = 0; i < t->nkids; i++) {
		int st;
		if (rc)
			kill(t->kids[i], SIGKILL);
		while (waitpid(t->kids[i], &st, 0) < 0 && errno == EINTR)
			;
		if (!rc && (!WIFEXITED(st) || WEXITSTATUS(st)))
			rc = 1;
	}
	for (int i = 0; i < ntasks && !rc; i++)
		if (eps[i].failed)
			rc = 1;
	if (rc) {
		if (!atomic_load(&S->abort))
			nat_err("a stage failed");
		return 1;
	}
	return 0;
}

/* what the report says, summed over the lanes and the tasks */
struct totals {
	struct hist req, wake;
	uint64_t sent, completed, in_flight, scheduled, backlog;
	uint64_t wakeups, same, cross, nowait, observed, migr, vol, invol;
	int csw_ok, sched_ok;
};

/* sum the lanes' and the tasks' counters and merge their histograms */
static void sum_totals(struct totals *T, const struct task_counters *tc, int L, int ntasks)
{
	*T = (struct totals){ .csw_ok = 1, .sched_ok = 1 };
	hist_init_loglin(&T->req, NAT_HIST_SUB, NAT_HIST_POW);
	hist_init_loglin(&T->wake, NAT_HIST_SUB, NAT_HIST_POW);
	for (int l = 0; l < L; l++) {
		nat_lat_finish(&lanes[l].req_rec, &lanes[l].req);
		hist_merge(&T->req, &lanes[l].req);
		T->sent += lanes[l].sent, T->completed += lanes[l].completed;
		T->in_flight += lanes[l].in_flight, T->scheduled += lanes[l].scheduled;
		T->backlog += lanes[l].backlog;
	}
	for (int i = 0; i < ntasks; i++) {
		nat_lat_finish(&eps[i].wake_rec, &eps[i].wake);
		hist_merge(&T->wake, &eps[i].wake);
		T->wakeups += eps[i].wake_rec.n, T->same += eps[i].same_cpu;
		T->cross += eps[i].cross_llc;
		T->nowait += eps[i].nowait, T->observed += eps[i].observed_migr;
		T->migr += tc[i].m1 - tc[i].m0;
		T->vol += tc[i].v1 - tc[i].v0, T->invol += tc[i].i1 - tc[i].i0;
		T->csw_ok &= tc[i].csw_ok;
		T->sched_ok &= tc[i].sched_ok;
	}
}

/* the metrics of the report (docs/workloads-native.md) into o */
static void report_metrics(json_t *o, const struct totals *T)
{
	double win = O.duration_s;
	uint64_t completed = T->completed, wakeups = T->wakeups;
	uint64_t migr = T->sched_ok ? T->migr : T->observed;
	json_object_set_new(o, "requests_sent", json_integer((json_int_t)T->sent));
	json_object_set_new(o, "requests_completed", json_integer((json_int_t)completed));
	json_object_set_new(o, "requests_in_flight", json_integer((json_int_t)T->in_flight));
	if (O.rate > 0) {
		json_object_set_new(o, "requests_scheduled", json_integer((json_int_t)T->scheduled));
		json_object_set_new(o, "requests_backlog", json_integer((json_int_t)T->backlog));
		json_object_set_new(o, "offered_rps", json_real(O.rate));
	}
	json_object_set_new(o, "rps", json_real((double)completed / win));
	nat_json_pct_us(o, "req_p50_us", &T->req, 50);
	nat_json_pct_us(o, "req_p99_us", &T->req, 99);
	nat_json_pct_us(o, "req_p999_us", &T->req, 99.9);
	json_object_set_new(o, "req_max_us", T->req.total ? json_real(T->req.max / 1000) : json_null());
	json_object_set_new(o, "wakeups", json_integer((json_int_t)wakeups));
	json_object_set_new(o, "wakeups_nowait", json_integer((json_int_t)T->nowait));
	nat_json_pct_us(o, "wakeup_p50_us", &T->wake, 50);
	nat_json_pct_us(o, "wakeup_p99_us", &T->wake, 99);
	json_object_set_new(o, "wakeup_max_us",
			    T->wake.total ? json_real(T->wake.max / 1000) : json_null());
	json_object_set_new(o, "same_cpu_wakeup_pct",
			    wakeups ? json_real(100.0 * (double)T->same / (double)wakeups) : json_null());
	json_object_set_new(o, "cross_llc_wakeup_pct",
			    wakeups ? json_real(100.0 * (double)T->cross / (double)wakeups) : json_null());
	json_object_set_new(o, "migrations", json_integer((json_int_t)migr));
	json_object_set_new(o, "migrations_source", json_string(T->sched_ok ? "sched" : "observed"));
	json_object_set_new(o, "migrations_per_kreq",
			    completed ? json_real(1000.0 * (double)migr / (double)completed)
				      : json_null());
	if (T->csw_ok && completed) {
		json_object_set_new(o, "csw_per_req",
				    json_real((double)(T->vol + T->invol) / (double)completed));
		json_object_set_new(o, "vcsw_per_req", json_real((double)T->vol / (double)completed));
		json_object_set_new(o, "ivcsw_per_req", json_real((double)T->invol / (double)completed));
	} else {
		json_object_set_new(o, "csw_per_req", json_null());
		json_object_set_new(o, "vcsw_per_req", json_null());
		json_object_set_new(o, "ivcsw_per_req", json_null());
	}
	json_object_set_new(o, "hist", json_pack("{s:o,s:o}", "request_ns", hist_to_json(&T->req),
						 "wakeup_ns", hist_to_json(&T->wake)));
}

/* the report on stdout: the exit status (1 when it could not be written or
 * the TSC stopped being the clocksource) */
static int report(const struct task_counters *tc, int L, int ntasks, int llc_groups)
{
	struct totals T;
	sum_totals(&T, tc, L, ntasks);
	int64_t drift = nat_fastclock_drift_ns();
	int clock_valid = nat_fastclock_still_valid();
	json_t *o = nat_report_new("sl-pingpong", config_json(llc_groups));
	json_object_set_new(o, "window_s", json_real(O.duration_s));
	/* how far the stamps' clock went from CLOCK_MONOTONIC over the run */
	json_object_set_new(o, "clock_drift_us", json_real((double)drift / 1000));
	json_object_set_new(o, "clock_valid", json_boolean(clock_valid));
	report_metrics(o, &T);
	int rc = nat_report_print(o);
	if (!clock_valid) {
		/* the output stays (it is the run's record), the run fails */
		nat_err("the kernel stopped using the TSC as its clocksource during the run "
			"(its watchdog found it unstable), so stamps taken on different CPUs may "
			"disagree; run again, or with --clock monotonic");
		rc = 1;
	}
	hist_free(&T.req);
	hist_free(&T.wake);
	return rc;
}

int main(int argc, char **argv)
{
	int r = nat_main_start("sl-pingpong", parse_opts, argc, argv);
	if (r >= 0)
		return r;
	actors = O.stages - 1 + O.fanout;
	int L = O.concurrency, per = actors + 1, ntasks = L * per;
	int llc_groups;
	if (setup(L, ntasks, &llc_groups))
		return 1;
	struct tasks t = {
		.th = calloc((size_t)ntasks, sizeof(pthread_t)),
		.kids = calloc((size_t)ntasks, sizeof(pid_t)),
		.aa = calloc((size_t)ntasks, sizeof(struct actor_arg)),
	};
	struct task_counters *tc = calloc((size_t)ntasks, sizeof(*tc));
	if (!t.th || !t.kids || !t.aa || !tc) {
		nat_err("out of memory");
		return 1;
	}
	int rc = start_tasks(&t, L) || wait_ready(ntasks) ? 1 : 0;
	if (!rc)
		measure(tc, ntasks);
	if (stop_tasks(&t, ntasks, rc))
		return 1;
	return report(tc, L, ntasks, llc_groups);
}
