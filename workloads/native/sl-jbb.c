/*
 * sl-jbb: a SPECjbb2015-like (MultiJVM) load in one small static program,
 * reporting max-jOPS and critical-jOPS as SPECjbb2015 defines them.
 *
 * Groups (like the JVMs of MultiJVM) each own an in-memory data set sized to
 * exceed a core's share of the last-level cache, a backend worker pool per
 * tier (--tiers; a transaction passes through every tier's pool in turn,
 * handed over through a queue, i.e. a wakeup) and open-loop injector threads
 * that send transactions with Poisson arrivals. Transactions are a mix of
 * short lookups, medium updates under a striped lock and long scans.
 * Response time is measured from the scheduled send time, so a backend (or
 * an injector) that falls behind shows as latency.
 *
 * The run: (1) the high-bound injection rate (HBIR) is measured by keeping
 * the backend saturated for --hbir-ms; (2) the RT curve ramps the injection
 * rate from --start-pct of HBIR in steps of --step-pct (1%, as SPECjbb does),
 * each step a settle period and a measurement window, until the first step
 * whose achieved rate falls short of the injected rate by more than
 * --tolerance-pct. SPECjbb ramps from 1% with minutes per step; to fit a run
 * into --duration (60 s on 2 CPUs by default) sl-jbb starts at --start-pct
 * and sizes the windows from the time budget (docs/workloads-native.md).
 * The metric arithmetic is in workloads/native/jbb_metrics.c; output is JSON on stdout.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workloads/native/jbb_metrics.h"
#include "workloads/native/libnative.h"

#define MAX_GROUPS 64
#define MAX_TIERS 4
#define MAX_STEPS 2000
#define QCAP (1u << 16)
#define NSTRIPES 64
#define REC_WORDS 8                   /* 64-byte records */
#define LOOKUP_RECS 256
#define UPDATE_RECS 512
#define SCAN_RECS 131072

enum { TX_LOOKUP, TX_UPDATE, TX_SCAN, TX_N };
static const char *const tx_names[TX_N] = { "lookup", "update", "scan" };

struct opts {
	double duration_s, scale, start_pct, step_pct, tolerance_pct;
	long groups, workers, injectors, tiers, data_mb, settle_ms, measure_ms, hbir_ms;
	long mix[TX_N];
	long nice[MAX_GROUPS];
	int nnice;
	long rr_group, rr_priority;
	unsigned long long seed;
	const char *sched_out;       /* --sched-out: placement evidence dump */
};

struct req {
	uint64_t sched;               /* scheduled send time, ns */
	uint32_t type, rnd;
};

struct queue {
	pthread_mutex_t mu;
	pthread_cond_t nonempty;
	struct req *ring;
	uint32_t head, tail;          /* head - tail = depth */
	int waiters;
};

struct wstats {                   /* per worker of the last tier */
	pthread_mutex_t mu;
	int step;                     /* the step these counts belong to */
	struct hist h;                /* response time, ns */
	uint64_t completed;           /* in the window of `step` */
	uint64_t total;               /* whole run */
};

struct group {
	int id;
	uint64_t *data;               /* nrec records of REC_WORDS words */
	size_t nrec;
	pthread_mutex_t stripe[NSTRIPES];
	struct queue q[MAX_TIERS];
	_Atomic uint64_t injected, dropped;   /* whole run */
};

struct worker {
	struct group *g;
	int tier, idx;
	struct wstats st;
	pthread_t th;
	int failed;
};

struct injector {
	struct group *g;
	int idx;
	struct nat_rng rng;
	pthread_t th;
};

static struct opts O;
static struct group *groups;
static struct worker *workers;
static struct injector *injectors;
static int nworkers, ninjectors;

/* run state shared with the threads */
static _Atomic int mode;          /* 0 idle, 1 saturate (HBIR), 2 paced */
static _Atomic int stop_inj, stop_work;
static _Atomic double rate_per_injector;   /* paced mode, requests/s */
static _Atomic int cur_step = -1;
static _Atomic uint64_t win0, win1;        /* measurement window of cur_step */
static _Atomic uint64_t win_injected, win_dropped;
static _Atomic uint64_t sat_completed;     /* completions while saturating */
static _Atomic int start_failed;

/* ---- queues ---------------------------------------------------------------- */

static int queue_init(struct queue *q)
{
	q->ring = calloc(QCAP, sizeof(*q->ring));
	if (!q->ring)
		return -1;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->nonempty, NULL);
	return 0;
}

/* -1 when full */
static int queue_push(struct queue *q, const struct req *r)
{
	pthread_mutex_lock(&q->mu);
	if (q->head - q->tail >= QCAP) {
		pthread_mutex_unlock(&q->mu);
		return -1;
	}
	q->ring[q->head++ % QCAP] = *r;
	if (q->waiters)
		pthread_cond_signal(&q->nonempty);
	pthread_mutex_unlock(&q->mu);
	return 0;
}

/* -1 when told to stop */
static int queue_pop(struct queue *q, struct req *r)
{
	pthread_mutex_lock(&q->mu);
	while (q->head == q->tail) {
		if (atomic_load(&stop_work)) {
			pthread_mutex_unlock(&q->mu);
			return -1;
		}
		q->waiters++;
		pthread_cond_wait(&q->nonempty, &q->mu);
		q->waiters--;
	}
	if (atomic_load(&stop_work)) {
		pthread_mutex_unlock(&q->mu);
		return -1;
	}
	*r = q->ring[q->tail++ % QCAP];
	pthread_mutex_unlock(&q->mu);
	return 0;
}

static uint32_t queue_depth(struct queue *q)
{
	pthread_mutex_lock(&q->mu);
	uint32_t d = q->head - q->tail;
	pthread_mutex_unlock(&q->mu);
	return d;
}

/* ---- transactions ---------------------------------------------------------------- */

static uint64_t xs(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* the share of transaction `r` that tier `tier` of `tiers` executes */
static uint64_t run_txn(struct group *g, const struct req *r, int tier)
{
	uint64_t s = ((uint64_t)r->rnd << 20) ^ (uint64_t)(tier + 1) * 0x9e3779b97f4a7c15ull ^ 88172645463325252ull;
	uint64_t acc = 0;
	size_t n = g->nrec;
	int T = (int)O.tiers;
	switch (r->type) {
	case TX_LOOKUP:
		for (int i = 0; i < LOOKUP_RECS / T; i++) {
			const uint64_t *rec = g->data + (xs(&s) % n) * REC_WORDS;
			acc += rec[0] ^ rec[3];
		}
		break;
	case TX_UPDATE: {
		size_t per = n / NSTRIPES, st = xs(&s) % NSTRIPES;
		pthread_mutex_lock(&g->stripe[st]);
		for (int i = 0; i < UPDATE_RECS / T; i++) {
			uint64_t *rec = g->data + (st * per + xs(&s) % per) * REC_WORDS;
			rec[1] += 1;
			rec[2] ^= rec[1];
			acc += rec[2];
		}
		pthread_mutex_unlock(&g->stripe[st]);
		break;
	}
	default: {
		size_t len = SCAN_RECS / (size_t)T, start = xs(&s) % (n > len ? n - len : 1);
		for (size_t i = 0; i < len && start + i < n; i++)
			acc += g->data[(start + i) * REC_WORDS + 4];
		break;
	}
	}
	return acc;
}

static void record_completion(struct worker *w, const struct req *r)
{
	uint64_t t = nat_now_ns();
	int step = atomic_load(&cur_step);
	uint64_t a = atomic_load(&win0), b = atomic_load(&win1);
	w->st.total++;
	if (atomic_load_explicit(&mode, memory_order_relaxed) == 1)
		atomic_fetch_add_explicit(&sat_completed, 1, memory_order_relaxed);
	if (step < 0 || t < a || t >= b)
		return;
	pthread_mutex_lock(&w->st.mu);
	if (w->st.step != step) {
		hist_reset(&w->st.h);
		w->st.completed = 0;
		w->st.step = step;
	}
	hist_record(&w->st.h, t > r->sched ? t - r->sched : 0);
	w->st.completed++;
	pthread_mutex_unlock(&w->st.mu);
}

static void *worker_thread(void *p)
{
	struct worker *w = p;
	struct group *g = w->g;
	long nice = O.nnice == 1 ? O.nice[0] : (g->id < O.nnice ? O.nice[g->id] : 0);
	int rr = O.rr_group == g->id;
	if (nat_apply_sched(rr ? NP_RR : NP_OTHER, rr ? (int)O.rr_priority : 0, rr ? 0 : (int)nice)) {
		w->failed = 1;
		atomic_store(&start_failed, 1);
	}
	volatile uint64_t sink = 0;
	struct req r;
	while (!queue_pop(&g->q[w->tier], &r)) {
		sink += run_txn(g, &r, w->tier);
		if (w->tier + 1 < O.tiers) {
			/* hand over to the next tier; its queue cannot be fuller than
			 * ours was, but stay safe and retry when it is */
			while (queue_push(&g->q[w->tier + 1], &r) && !atomic_load(&stop_work))
				nat_sleep_ns(100000);
		} else {
			record_completion(w, &r);
		}
	}
	(void)sink;
	return NULL;
}

/* ---- injectors ------------------------------------------------------------------ */

static void inject(struct injector *in, uint64_t sched)
{
	struct req r = { .sched = sched };
	uint64_t x = nat_rng_next(&in->rng);
	uint32_t pick = (uint32_t)(x % 100);
	r.type = pick < O.mix[0] ? TX_LOOKUP : pick < O.mix[0] + O.mix[1] ? TX_UPDATE : TX_SCAN;
	r.rnd = (uint32_t)(x >> 32);
	int in_win = sched >= atomic_load(&win0) && sched < atomic_load(&win1);
	if (queue_push(&in->g->q[0], &r)) {
		atomic_fetch_add(&in->g->dropped, 1);
		if (in_win)
			atomic_fetch_add(&win_dropped, 1);
		return;
	}
	atomic_fetch_add(&in->g->injected, 1);
	if (in_win)
		atomic_fetch_add(&win_injected, 1);
}

static void *injector_thread(void *p)
{
	struct injector *in = p;
	uint64_t next = 0;
	uint32_t limit = (uint32_t)(64 * O.workers);
	while (!atomic_load(&stop_inj)) {
		int m = atomic_load(&mode);
		if (m == 0) {
			nat_sleep_ns(1000000);
			next = 0;
			continue;
		}
		if (m == 1) {                   /* saturate: keep the first queue topped up */
			while (queue_depth(&in->g->q[0]) < limit && !atomic_load(&stop_inj))
				inject(in, nat_now_ns());
			nat_sleep_ns(50000);
			next = 0;
			continue;
		}
		double rate = atomic_load(&rate_per_injector);
		uint64_t now = nat_now_ns();
		if (!next)
			next = now;
		next += (uint64_t)nat_rng_exp(&in->rng, 1e9 / rate);
		if (next > now)
			nat_sleep_until_ns(next);
		inject(in, next);          /* late or not, latency counts from `next` */
	}
	return NULL;
}

/* ---- options ------------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
"usage: sl-jbb [options]\n"
"A SPECjbb2015-like run: HBIR search, then an RT curve in steps of 1%% of HBIR.\n"
"  -d, --duration S      time budget of the whole run, s, 2..86400 (default 60)\n"
"  -g, --groups G        groups (like MultiJVM's JVMs), 1..64 (default 2)\n"
"  -w, --workers W       backend workers per group and tier, 1..1024\n"
"                        (default: scale x 2 x online CPUs / groups, at least 1)\n"
"  -i, --injectors I     injector threads per group, 1..64 (default 1)\n"
"  -t, --tiers T         backend tiers a transaction passes through, 1..4 (default 1)\n"
"  -D, --data-mb M       data set per group, MiB, 1..65536\n"
"                        (default: 4 x the LLC share of one CPU, 8..256)\n"
"  -x, --mix L,U,S       percent of lookups, updates, scans (default 60,30,10)\n"
"  -S, --scale F         workers per CPU relative to the default, 0.1..64 (default 1)\n"
"      --start-pct P     first RT-curve step, %% of HBIR, 1..100 (default 50)\n"
"      --step-pct P      RT-curve step, %% of HBIR, 0.1..10 (default 1)\n"
"      --tolerance-pct P a step fails when achieved < injected x (1 - P/100),\n"
"                        0..50 (default 5)\n"
"      --hbir-ms MS      HBIR measurement, 50..600000 (default: 8%% of the\n"
"                        duration, 300..5000)\n"
"      --settle-ms MS    settle time per step, 0..600000 (default: from the budget)\n"
"      --measure-ms MS   measurement window per step, 20..600000 (default: from the budget)\n"
"      --nice N[,N...]   nice of each group's workers (one value: all groups)\n"
"      --rr-group G      run group G's workers SCHED_RR (0-based; default none)\n"
"      --rr-priority P   SCHED_RR priority, 1..99 (default 10)\n"
"      --seed N          seed of arrivals and transaction choice (default 1)\n"
"      --sched-out FILE  write every thread's /proc/<tid>/sched after the threads\n"
"                        start and at the end into FILE (wakeup-placement evidence)\n"
"  -h, --help            this text\n"
"Output: one JSON object on stdout (metrics in docs/workloads-native.md).\n");
}

/* --mix: three percentages adding up to 100 */
static int mix_count;
static int check_mix(const char *val)
{
	if (mix_count != TX_N || O.mix[0] + O.mix[1] + O.mix[2] != 100) {
		nat_err("--mix: '%s' must be three percentages (lookups,updates,scans) "
			"adding up to 100", val);
		return -1;
	}
	return 0;
}

static int parse_opts(int argc, char **argv)
{
	const struct nat_opt opts[] = {
		NAT_OPT_NUM("duration", 'd', NAT_OPT_DOUBLE, &O.duration_s, 2, 86400),
		NAT_OPT_NUM("groups", 'g', NAT_OPT_LONG, &O.groups, 1, MAX_GROUPS),
		NAT_OPT_NUM("workers", 'w', NAT_OPT_LONG, &O.workers, 1, 1024),
		NAT_OPT_NUM("injectors", 'i', NAT_OPT_LONG, &O.injectors, 1, 64),
		NAT_OPT_NUM("tiers", 't', NAT_OPT_LONG, &O.tiers, 1, MAX_TIERS),
		NAT_OPT_NUM("data-mb", 'D', NAT_OPT_LONG, &O.data_mb, 1, 65536),
		{ .name = "mix", .short_name = 'x', .kind = NAT_OPT_LIST, .out = O.mix, .min = 0,
		  .max = 100, .maxn = TX_N, .count = &mix_count, .check = check_mix },
		NAT_OPT_NUM("scale", 'S', NAT_OPT_DOUBLE, &O.scale, 0.1, 64),
		NAT_OPT_NUM("start-pct", 0, NAT_OPT_DOUBLE, &O.start_pct, 1, 100),
		NAT_OPT_NUM("step-pct", 0, NAT_OPT_DOUBLE, &O.step_pct, 0.1, 10),
		NAT_OPT_NUM("tolerance-pct", 0, NAT_OPT_DOUBLE, &O.tolerance_pct, 0, 50),
		NAT_OPT_NUM("hbir-ms", 0, NAT_OPT_LONG, &O.hbir_ms, 50, 600000),
		NAT_OPT_NUM("settle-ms", 0, NAT_OPT_LONG, &O.settle_ms, 0, 600000),
		NAT_OPT_NUM("measure-ms", 0, NAT_OPT_LONG, &O.measure_ms, 20, 600000),
		{ .name = "nice", .kind = NAT_OPT_LIST, .out = O.nice, .min = -20, .max = 19,
		  .maxn = MAX_GROUPS, .count = &O.nnice },
		NAT_OPT_NUM("rr-group", 0, NAT_OPT_LONG, &O.rr_group, 0, MAX_GROUPS - 1),
		NAT_OPT_NUM("rr-priority", 0, NAT_OPT_LONG, &O.rr_priority, 1, 99),
		NAT_OPT_NUM("seed", 0, NAT_OPT_ULLONG, &O.seed, 0, 0x7fffffffL),
		{ .name = "sched-out", .kind = NAT_OPT_STRING, .out = &O.sched_out },
		{ .name = NULL },
	};
	O = (struct opts){ .duration_s = 60, .scale = 1, .start_pct = 50, .step_pct = 1,
			   .tolerance_pct = 5, .groups = 2, .injectors = 1, .tiers = 1,
			   .mix = { 60, 30, 10 }, .nnice = 1, .rr_group = -1, .rr_priority = 10,
			   .seed = 1, .settle_ms = -1, .measure_ms = -1, .hbir_ms = -1 };
	int rc = nat_parse_opts(argc, argv, opts, usage);
	if (rc)
		return rc;
	if (O.nnice > 1 && O.nnice != O.groups) {
		nat_err("--nice: %d values given for %ld groups (give one, or one per group)",
			O.nnice, O.groups);
		return -1;
	}
	if (O.rr_group >= O.groups) {
		nat_err("--rr-group: %ld is not a group (groups are 0..%ld)", O.rr_group,
			O.groups - 1);
		return -1;
	}
	return 0;
}

/* ---- the run ------------------------------------------------------------------------ */

static void step_stats(int step, struct hist *h, uint64_t *completed)
{
	hist_reset(h);
	*completed = 0;
	for (int i = 0; i < nworkers; i++) {
		struct worker *w = &workers[i];
		if (w->tier != O.tiers - 1)
			continue;
		pthread_mutex_lock(&w->st.mu);
		if (w->st.step == step) {
			hist_merge(h, &w->st.h);
			*completed += w->st.completed;
		}
		pthread_mutex_unlock(&w->st.mu);
	}
}

static double pct_ms(const struct hist *h, double p)
{
	double v;
	return hist_percentile(h, p, &v) == HIST_EMPTY ? NAN : v / 1e6;
}

static json_t *jnum(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

/* one step of the curve at pct % of hbir: settle, then measure; -1 when the
 * deadline (monotonic ns) does not leave time for it */
static int run_step(int k, double pct, double hbir, double settle_s, double measure_s,
		    uint64_t deadline, struct hist *h, struct jbb_step *st)
{
	double ir = pct / 100.0 * hbir;
	uint64_t now = nat_now_ns();
	if (now + (uint64_t)((settle_s + measure_s) * 1e9) > deadline)
		return -1;
	atomic_store(&win_injected, 0);
	atomic_store(&win_dropped, 0);
	uint64_t a = now + (uint64_t)(settle_s * 1e9), b = a + (uint64_t)(measure_s * 1e9);
	atomic_store(&win1, 0);      /* close the window while moving it */
	atomic_store(&win0, a);
	atomic_store(&win1, b);
	atomic_store(&cur_step, k);
	atomic_store(&rate_per_injector, ir / (double)ninjectors);
	nat_sleep_until_ns(b + 2000000);
	uint64_t done;
	step_stats(k, h, &done);
	*st = (struct jbb_step){
		.pct = pct, .ir = ir,
		.injected = (double)(atomic_load(&win_injected) + atomic_load(&win_dropped)) /
			    measure_s,
		.achieved = (double)done / measure_s,
		.p99_ms = pct_ms(h, 99),
	};
	if (isnan(st->p99_ms))
		st->p99_ms = INFINITY;
	st->ok = jbb_step_pass(st->injected, st->achieved, O.tolerance_pct);
	return 0;
}

static json_t *step_json(const struct jbb_step *st, const struct hist *h, const char *phase)
{
	return json_pack("{s:f,s:f,s:f,s:f,s:I,s:o,s:o,s:o,s:o,s:b,s:s}", "pct", st->pct,
			 "ir_jops", st->ir, "injected_jops", st->injected, "achieved_jops",
			 st->achieved, "dropped", (json_int_t)atomic_load(&win_dropped), "p50_ms",
			 jnum(pct_ms(h, 50)), "p90_ms", jnum(pct_ms(h, 90)), "p99_ms",
			 jnum(pct_ms(h, 99)), "max_ms", jnum(h->total ? h->max / 1e6 : NAN), "ok",
			 st->ok, "phase", phase);
}

static int setup(uint64_t *data_bytes_out, int *llc_share_out, uint64_t *llc_bytes_out)
{
	int ncpu = nat_online_cpus();
	static int llc[4096];
	uint64_t llc_bytes = 0;
	int share = 1;
	nat_llc_groups(llc, 4096, &llc_bytes, &share);
	*llc_share_out = share;
	*llc_bytes_out = llc_bytes;
	if (!O.workers) {
		long w = lround(O.scale * 2.0 * ncpu / (double)O.groups);
		O.workers = w < 1 ? 1 : w;
	}
	uint64_t bytes = (uint64_t)O.data_mb << 20;
	if (!O.data_mb) {
		bytes = llc_bytes ? 4 * llc_bytes / (uint64_t)(share > 0 ? share : 1) : 0;
		if (bytes < (8u << 20))
			bytes = 8u << 20;
		if (bytes > (256u << 20))
			bytes = 256u << 20;
	}
	*data_bytes_out = bytes;
	groups = calloc((size_t)O.groups, sizeof(*groups));
	nworkers = (int)(O.groups * O.tiers * O.workers);
	ninjectors = (int)(O.groups * O.injectors);
	workers = calloc((size_t)nworkers, sizeof(*workers));
	injectors = calloc((size_t)ninjectors, sizeof(*injectors));
	if (!groups || !workers || !injectors)
		return -1;
	for (int g = 0; g < O.groups; g++) {
		struct group *gr = &groups[g];
		gr->id = g;
		gr->nrec = bytes / (REC_WORDS * 8);
		if (gr->nrec < SCAN_RECS + NSTRIPES)
			gr->nrec = SCAN_RECS + NSTRIPES;
		if (posix_memalign((void **)&gr->data, 64, gr->nrec * REC_WORDS * 8))
			return -1;
		for (size_t i = 0; i < gr->nrec * REC_WORDS; i++)
			gr->data[i] = i * 2654435761u;
		for (int s = 0; s < NSTRIPES; s++)
			pthread_mutex_init(&gr->stripe[s], NULL);
		for (int t = 0; t < O.tiers; t++)
			if (queue_init(&gr->q[t]))
				return -1;
	}
	int k = 0;
	for (int g = 0; g < O.groups; g++)
		for (int t = 0; t < O.tiers; t++)
			for (int i = 0; i < O.workers; i++, k++) {
				struct worker *w = &workers[k];
				w->g = &groups[g], w->tier = t, w->idx = i;
				pthread_mutex_init(&w->st.mu, NULL);
				w->st.step = -1;
				if (hist_init_loglin(&w->st.h, NAT_HIST_SUB, NAT_HIST_POW))
					return -1;
			}
	k = 0;
	for (int g = 0; g < O.groups; g++)
		for (int i = 0; i < O.injectors; i++, k++) {
			injectors[k].g = &groups[g];
			injectors[k].idx = i;
			nat_rng_seed(&injectors[k].rng, O.seed, (uint64_t)k + 1);
		}
	return 0;
}

/* wait (at most max_ms) until every queue is empty */
static void drain(int max_ms)
{
	for (int i = 0; i < max_ms / 5; i++) {
		uint32_t d = 0;
		for (int g = 0; g < O.groups; g++)
			for (int t = 0; t < O.tiers; t++)
				d += queue_depth(&groups[g].q[t]);
		if (!d)
			break;
		nat_sleep_ns(5000000);
	}
}

/* --sched-out: every thread's /proc/<tid>/sched (a failure is only said:
 * the run then has no placement evidence, and its parser says why) */
static void sched_dump(const char *phase)
{
	int max = nworkers + ninjectors + 8;
	pid_t *t = O.sched_out ? calloc((size_t)max, sizeof(*t)) : NULL;
	int n = t ? nat_self_tids(t, max) : -1;
	if (n > 0)
		nat_sched_dump(O.sched_out, phase, t, n);
	free(t);
}

/* what a run finds, phase by phase, for the report */
struct run {
	uint64_t t_start, deadline;          /* monotonic ns */
	uint64_t data_bytes, llc_bytes;
	int llc_share;
	double hbir, hbir_s, settle_s, measure_s;
	double start;                        /* the curve's first step, % of HBIR */
	int k;                               /* the last step's number */
	struct hist h;                       /* a step's response times */
	json_t *curve;                       /* every step run, as run */
	size_t nsteps;                       /* steps[]: the RT curve, ascending */
	int ramp_complete;
};

static struct jbb_step steps[MAX_STEPS];

/* start the workers and the injectors; -1 after nat_err */
static int start_threads(void)
{
	for (int i = 0; i < nworkers; i++)
		if (pthread_create(&workers[i].th, NULL, worker_thread, &workers[i])) {
			nat_err("cannot create worker threads");
			return -1;
		}
	for (int i = 0; i < ninjectors; i++)
		if (pthread_create(&injectors[i].th, NULL, injector_thread, &injectors[i])) {
			nat_err("cannot create injector threads");
			return -1;
		}
	return 0;
}

/* (1) HBIR: the backend kept saturated; a quarter of the time to warm up;
 * -1 after nat_err when nothing completed */
static int measure_hbir(struct run *R)
{
	R->hbir_s = O.hbir_ms > 0 ? O.hbir_ms / 1000.0 : fmin(5, fmax(0.3, 0.08 * O.duration_s));
	atomic_store(&mode, 1);
	nat_sleep_ns((uint64_t)(R->hbir_s * 0.25e9));
	uint64_t c0 = atomic_load(&sat_completed), t0 = nat_now_ns();
	nat_sleep_ns((uint64_t)(R->hbir_s * 0.75e9));
	uint64_t c1 = atomic_load(&sat_completed), t1 = nat_now_ns();
	R->hbir = (double)(c1 - c0) / ((double)(t1 - t0) / 1e9);
	atomic_store(&mode, 0);
	drain(1000);   /* the saturation backlog, before pacing starts */
	if (!(R->hbir > 0)) {
		nat_err("no transaction completed while measuring HBIR");
		return -1;
	}
	return 0;
}

/* (2) the RT curve: the windows sized from the time left, then steps from
 * --start-pct up to the first that fails (or the deadline) */
static void rt_curve(struct run *R)
{
	uint64_t now0 = nat_now_ns();
	double budget = now0 < R->deadline ? (double)(R->deadline - now0) / 1e9 : 0;
	double expect = (100.0 - O.start_pct) / O.step_pct + 10;
	double per_step = budget / expect;
	R->measure_s = O.measure_ms >= 0 ? O.measure_ms / 1000.0 : fmax(0.05, 0.75 * per_step);
	R->settle_s = O.settle_ms >= 0 ? O.settle_ms / 1000.0 : fmax(0.02, 0.25 * per_step);
	atomic_store(&rate_per_injector, O.start_pct / 100.0 * R->hbir / (double)ninjectors);
	atomic_store(&mode, 2);
	double pct;
	R->start = pct = O.start_pct;
	R->k = 0;
	for (; R->k < MAX_STEPS; R->k++, pct += O.step_pct) {
		struct jbb_step st;
		if (run_step(R->k, pct, R->hbir, R->settle_s, R->measure_s, R->deadline, &R->h, &st))
			break;                   /* out of time before the first failure */
		/* the very first step failed: HBIR was too optimistic; probe at
		 * half the rate (coarse search down), outside the RT curve */
		int probe = !st.ok && R->nsteps == 0 && R->start / 2 >= O.step_pct;
		json_array_append_new(R->curve, step_json(&st, &R->h, probe ? "probe" : "rt-curve"));
		if (probe) {
			R->start /= 2;
			pct = R->start - O.step_pct;
			atomic_store(&rate_per_injector, R->start / 100.0 * R->hbir / (double)ninjectors);
			drain(2000);
			continue;
		}
		steps[R->nsteps++] = st;
		if (!st.ok) {
			R->ramp_complete = 1;
			break;
		}
	}
}

/* (3) the curve starts at start_pct, not at 1% as SPECjbb's does: an SLA
 * that no step met may well be met at a lower rate. With time left,
 * probe at halving rates below the start until every SLA is met; passing
 * probes join the curve in front (lower rates, ascending), so max_jops
 * is unchanged and critical_jops stays <= max_jops. */
static void sla_probes(struct run *R)
{
	struct jbb_step low[16];
	size_t nlow = 0;
	int passed = 0;
	for (size_t i = 0; i < R->nsteps && steps[i].ok; i++)
		passed++;
	for (double lp = R->start / 2; passed && lp >= 1 && nlow < 16 && R->k + 1 < MAX_STEPS;
	     lp /= 2) {
		int unmet = 0;
		for (int s2 = 0; s2 < JBB_NSLA; s2++) {
			int met = 0;
			for (size_t i = 0; i < nlow; i++)
				met |= low[i].p99_ms <= jbb_sla_ms[s2];
			for (int i = 0; i < passed; i++)
				met |= steps[i].p99_ms <= jbb_sla_ms[s2];
			unmet |= !met;
		}
		if (!unmet)
			break;
		drain(2000);
		struct jbb_step st;
		if (run_step(++R->k, lp, R->hbir, R->settle_s, R->measure_s, R->deadline, &R->h, &st))
			break;
		json_array_append_new(R->curve, step_json(&st, &R->h, "sla-probe"));
		if (st.ok)
			low[nlow++] = st;
	}
	if (nlow) {
		/* ascending rates: the lowest probe first */
		memmove(steps + nlow, steps, R->nsteps * sizeof(*steps));
		for (size_t i = 0; i < nlow; i++)
			steps[i] = low[nlow - 1 - i];
		R->nsteps += nlow;
	}
}

/* stop the injectors, then wake and stop the workers; -1 when a worker
 * failed */
static int stop_threads(void)
{
	atomic_store(&mode, 0);
	atomic_store(&stop_inj, 1);
	for (int i = 0; i < ninjectors; i++)
		pthread_join(injectors[i].th, NULL);
	atomic_store(&stop_work, 1);
	for (int g = 0; g < O.groups; g++)
		for (int t = 0; t < O.tiers; t++) {
			pthread_mutex_lock(&groups[g].q[t].mu);
			pthread_cond_broadcast(&groups[g].q[t].nonempty);
			pthread_mutex_unlock(&groups[g].q[t].mu);
		}
	for (int i = 0; i < nworkers; i++)
		pthread_join(workers[i].th, NULL);
	int rc = 0;
	for (int i = 0; i < nworkers; i++)
		if (workers[i].failed)
			rc = -1;
	return rc;
}

/* the report's "config": the options as used, the sizes chosen */
static json_t *config_json(const struct run *R)
{
	json_t *nice = json_array();
	for (int i = 0; i < O.nnice; i++)
		json_array_append_new(nice, json_integer(O.nice[i]));
	return json_pack("{s:f,s:I,s:I,s:I,s:I,s:I,s:[I,I,I],s:f,s:f,s:f,s:f,s:f,s:f,s:f,"
			 "s:o,s:I,s:I,s:I,s:I,s:i}",
			 "duration_s", O.duration_s, "groups", (json_int_t)O.groups,
			 "workers", (json_int_t)O.workers, "injectors", (json_int_t)O.injectors,
			 "tiers", (json_int_t)O.tiers,
			 "data_mb", (json_int_t)(R->data_bytes >> 20),
			 "mix", (json_int_t)O.mix[0], (json_int_t)O.mix[1], (json_int_t)O.mix[2],
			 "scale", O.scale, "start_pct", O.start_pct, "step_pct", O.step_pct,
			 "tolerance_pct", O.tolerance_pct, "hbir_s", R->hbir_s,
			 "settle_s", R->settle_s, "measure_s", R->measure_s, "nice", nice,
			 "rr_group", (json_int_t)O.rr_group, "rr_priority", (json_int_t)O.rr_priority,
			 "seed", (json_int_t)O.seed, "llc_kb", (json_int_t)(R->llc_bytes >> 10),
			 "llc_share", R->llc_share);
}

/* the report on stdout (the metrics of the curve, the request counts, every
 * step): the exit status */
static int report(struct run *R)
{
	struct jbb_result res;
	jbb_summarise(steps, R->nsteps, &res);
	uint64_t injected = 0, dropped = 0, completed = 0, in_flight = 0;
	for (int g = 0; g < O.groups; g++) {
		injected += atomic_load(&groups[g].injected);
		dropped += atomic_load(&groups[g].dropped);
		for (int t = 0; t < O.tiers; t++)
			in_flight += queue_depth(&groups[g].q[t]);
	}
	for (int i = 0; i < nworkers; i++)
		completed += workers[i].st.total;

	json_t *o = nat_report_new("sl-jbb", config_json(R));
	json_object_set_new(o, "hbir_jops", json_real(R->hbir));
	json_object_set_new(o, "max_jops", json_real(res.max_jops));
	json_object_set_new(o, "critical_jops", json_real(res.critical_jops));
	for (int k = 0; k < JBB_NSLA; k++) {
		char key[32];
		snprintf(key, sizeof(key), "sla_%dms_jops", (int)jbb_sla_ms[k]);
		json_object_set_new(o, key, json_real(res.sla_jops[k]));
	}
	json_object_set_new(o, "steps_passed", json_integer((json_int_t)res.passed));
	json_object_set_new(o, "ramp_complete", json_boolean(R->ramp_complete));
	json_object_set_new(o, "requests_injected", json_integer((json_int_t)injected));
	json_object_set_new(o, "requests_completed", json_integer((json_int_t)completed));
	json_object_set_new(o, "requests_in_flight", json_integer((json_int_t)in_flight));
	json_object_set_new(o, "requests_dropped", json_integer((json_int_t)dropped));
	json_object_set_new(o, "run_s", json_real((double)(nat_now_ns() - R->t_start) / 1e9));
	json_object_set_new(o, "transactions", json_pack("[s,s,s]", tx_names[0], tx_names[1],
							 tx_names[2]));
	json_object_set_new(o, "steps", R->curve);
	return nat_report_print(o);
}

int main(int argc, char **argv)
{
	int r = nat_main_start("sl-jbb", parse_opts, argc, argv);
	if (r >= 0)
		return r;
	struct run R = { .t_start = nat_now_ns() };
	R.deadline = R.t_start + (uint64_t)(O.duration_s * 1e9) - 200000000ull;
	if (setup(&R.data_bytes, &R.llc_share, &R.llc_bytes)) {
		nat_err("cannot allocate the data set or queues (lower --data-mb or --groups)");
		return 1;
	}
	if (start_threads())
		return 1;
	int rc = 0;
	hist_init_loglin(&R.h, NAT_HIST_SUB, NAT_HIST_POW);
	R.curve = json_array();
	nat_sleep_ns(20000000);              /* let the threads apply their settings */
	if (atomic_load(&start_failed)) {
		rc = 1;
	} else {
		sched_dump("start");
		if (measure_hbir(&R)) {
			rc = 1;
		} else {
			rt_curve(&R);
			sla_probes(&R);
			sched_dump("end");
		}
	}
	if (stop_threads() || rc) {
		json_decref(R.curve);
		return 1;
	}
	return report(&R);
}
