/*
 * The summary of a scheduler trace (analysis/trace.h): a line parser for
 * the four sched events, per-task state to tell wakeup latencies from
 * preemptions, and exact nearest-rank percentiles. Two passes: the first
 * checks every line and finds the last timestamp, the second counts what
 * falls into the window before it.
 */
#include "analysis/trace.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum ev_kind { EV_NONE, EV_LOST, EV_OTHER, EV_SWITCH, EV_WAKING, EV_WAKEUP, EV_MIGRATE };

struct ev {
	enum ev_kind kind;
	double ts;
	int pid, next_pid;          /* subject (woken / migrated / prev), next of a switch */
	char comm[17], next_comm[17];
	int runnable;               /* switch: prev_state R or R+ */
	long lost;
};

static void seterr(char *err, size_t errlen, size_t line, const char *fmt, ...)
{
	char msg[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "line %zu: %s", line, msg);
}

/* integer value of " key=" in [s, e); -1 when absent or not a number */
static int int_field(const char *s, const char *e, const char *key, long *out)
{
	size_t kl = strlen(key);
	for (const char *p = s; p + kl < e; p++) {
		if ((p == s || p[-1] == ' ') && !strncmp(p, key, kl) && p[kl] == '=') {
			char *end;
			errno = 0;
			long v = strtol(p + kl + 1, &end, 10);
			if (errno || end == p + kl + 1 || (end < e && *end != ' '))
				return -1;
			*out = v;
			return 0;
		}
	}
	return -1;
}

/* comm of "key=COMM next_key=" in [s, e): up to the next " next_key=" */
static int comm_field(const char *s, const char *e, const char *key, const char *next,
		      char *out, size_t outlen)
{
	size_t kl = strlen(key), nl = strlen(next);
	const char *p = s;
	if ((size_t)(e - s) <= kl || strncmp(p, key, kl) || p[kl] != '=')
		return -1;
	p += kl + 1;
	for (const char *q = p; q + nl + 1 < e; q++)
		if (*q == ' ' && !strncmp(q + 1, next, nl) && q[1 + nl] == '=') {
			size_t n = (size_t)(q - p);
			if (n >= outlen)
				n = outlen - 1;
			memcpy(out, p, n);
			out[n] = 0;
			return 0;
		}
	return -1;
}

/* one line [s, e) -> ev; 1 skip, 0 ok, -1 error (message in err) */
static int parse_line(const char *s, const char *e, size_t lineno, struct ev *ev, char *err,
		      size_t errlen)
{
	memset(ev, 0, sizeof(*ev));
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	if (s == e || *s == '#')
		return 1;
	if (e - s > 4096) {
		seterr(err, errlen, lineno, "line longer than 4096 bytes");
		return -1;
	}
	char buf[4100];
	memcpy(buf, s, (size_t)(e - s));
	buf[e - s] = 0;
	long lost;
	int cpu;
	if (sscanf(buf, "CPU:%d [LOST %ld EVENTS]", &cpu, &lost) == 2) {
		ev->kind = EV_LOST;
		ev->lost = lost;
		return 0;
	}
	/* the first " [NNN] " ends "COMM-PID" */
	char *b = NULL;
	for (char *p = buf; (p = strstr(p, " [")); p++) {
		char *q = p + 2;
		while (isdigit((unsigned char)*q))
			q++;
		if (q > p + 2 && q[0] == ']' && q[1] == ' ') {
			b = q + 2;
			break;
		}
	}
	if (!b) {
		seterr(err, errlen, lineno, "not a trace line (no \"[CPU]\" after the task): %.60s", buf);
		return -1;
	}
	/* FLAGS then TIMESTAMP: */
	while (*b && *b != ' ')
		b++;
	char *end;
	errno = 0;
	ev->ts = strtod(b, &end);
	if (errno || end == b || *end != ':' || ev->ts < 0) {
		seterr(err, errlen, lineno, "no timestamp after the flags");
		return -1;
	}
	char *name = end + 1;
	while (*name == ' ')
		name++;
	char *colon = strchr(name, ':');
	if (!colon) {
		seterr(err, errlen, lineno, "no event name");
		return -1;
	}
	*colon = 0;
	char *f = colon + 1;
	while (*f == ' ')
		f++;
	char *fe = f + strlen(f);
	while (fe > f && (fe[-1] == '\r' || fe[-1] == ' '))
		*--fe = 0;
	long pid, npid, x;
	if (!strcmp(name, "sched_switch")) {
		char *arrow = strstr(f, " ==> ");
		char *st = NULL;
		if (!arrow || comm_field(f, arrow, "prev_comm", "prev_pid", ev->comm, sizeof(ev->comm)) ||
		    int_field(f, arrow, "prev_pid", &pid) ||
		    comm_field(arrow + 5, fe, "next_comm", "next_pid", ev->next_comm,
			       sizeof(ev->next_comm)) ||
		    int_field(arrow + 5, fe, "next_pid", &npid) || pid < 0 || npid < 0 ||
		    pid > 0x7fffffff || npid > 0x7fffffff ||
		    !(st = strstr(f, " prev_state=")) || st > arrow) {
			seterr(err, errlen, lineno, "sched_switch without prev_comm, prev_pid, "
				"prev_state, \" ==> \", next_comm and next_pid");
			return -1;
		}
		st += strlen(" prev_state=");
		ev->kind = EV_SWITCH;
		ev->pid = (int)pid;
		ev->next_pid = (int)npid;
		ev->runnable = st[0] == 'R' && (st[1] == ' ' || (st[1] == '+' && st[2] == ' '));
		return 0;
	}
	int waking = !strcmp(name, "sched_waking"), wakeup = !strcmp(name, "sched_wakeup"),
	    mig = !strcmp(name, "sched_migrate_task");
	if (!waking && !wakeup && !mig) {
		ev->kind = EV_OTHER;
		return 0;
	}
	if (comm_field(f, fe, "comm", "pid", ev->comm, sizeof(ev->comm)) ||
	    int_field(f, fe, "pid", &pid) || pid < 0 || pid > 0x7fffffff ||
	    (mig && int_field(f, fe, "dest_cpu", &x))) {
		seterr(err, errlen, lineno, "%s without comm and pid%s", name,
		       mig ? " and dest_cpu" : "");
		return -1;
	}
	ev->kind = waking ? EV_WAKING : wakeup ? EV_WAKEUP : EV_MIGRATE;
	ev->pid = (int)pid;
	return 0;
}

static struct trace_task *task_of(struct trace_summary *s, int pid, const char *comm)
{
	/* linear probe over a small open table would be faster; traces of a
	   run hold hundreds of tasks, so a sorted search is not needed */
	for (size_t i = s->ntasks; i-- > 0;)
		if (s->tasks[i].pid == pid) {
			if (comm && *comm)
				snprintf(s->tasks[i].comm, sizeof(s->tasks[i].comm), "%s", comm);
			return &s->tasks[i];
		}
	if (s->ntasks >= TRACE_MAX_TASKS)
		return NULL;
	if (s->ntasks == s->atasks) {
		s->atasks = s->atasks ? 2 * s->atasks : 64;
		s->tasks = realloc(s->tasks, s->atasks * sizeof(*s->tasks));
		if (!s->tasks)
			abort();
	}
	struct trace_task *t = &s->tasks[s->ntasks++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	snprintf(t->comm, sizeof(t->comm), "%s", comm ? comm : "");
	t->waking_ts = t->wakeup_ts = -1;
	t->sleeping = -1;
	return t;
}

static void add_lat(struct trace_task *t, double us)
{
	if (t->nlat == t->alat) {
		t->alat = t->alat ? 2 * t->alat : 16;
		t->lat_us = realloc(t->lat_us, t->alat * sizeof(double));
		if (!t->lat_us)
			abort();
	}
	t->lat_us[t->nlat++] = us;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* nearest rank on sorted v */
static double rank(const double *v, size_t n, double p)
{
	if (!n)
		return 0;
	size_t k = (size_t)(p / 100.0 * (double)n + 0.999999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

static int busiest_first(const void *a, const void *b)
{
	const struct trace_task *x = a, *y = b;
	if (x->wakeups != y->wakeups)
		return x->wakeups < y->wakeups ? 1 : -1;
	return x->pid - y->pid;
}

static int step(struct trace_summary *s, const struct ev *ev, double from)
{
	int in = ev->ts >= from;
	if (in) {
		if (!s->events)
			s->first_ts = ev->ts;
		s->events++;
	}
	struct trace_task *t, *n;
	switch (ev->kind) {
	case EV_SWITCH:
		/* both first, then the pointers: a new task may move the array */
		if (!task_of(s, ev->pid, ev->comm) || !(n = task_of(s, ev->next_pid, ev->next_comm)))
			return -1;
		t = task_of(s, ev->pid, NULL);
		t->sleeping = !ev->runnable;
		t->waking_ts = t->wakeup_ts = -1;
		if (in && ev->runnable && ev->pid) {
			t->preemptions++;
			s->preemptions++;
		}
		if (in) {
			n->switches++;
			s->switches++;
		}
		double w = n->waking_ts >= 0 ? n->waking_ts : n->wakeup_ts;
		if (w >= 0 && in && ev->next_pid) {
			add_lat(n, (ev->ts - w) * 1e6);
			n->wakeups++;
			s->wakeups++;
		}
		n->sleeping = 0;
		n->waking_ts = n->wakeup_ts = -1;
		break;
	case EV_WAKING:
	case EV_WAKEUP:
		if (!(t = task_of(s, ev->pid, ev->comm)))
			return -1;
		if (t->sleeping == 0)
			break;  /* running or runnable: no wakeup from sleep */
		if (ev->kind == EV_WAKING && t->waking_ts < 0)
			t->waking_ts = ev->ts;
		if (ev->kind == EV_WAKEUP && t->wakeup_ts < 0)
			t->wakeup_ts = ev->ts;
		break;
	case EV_MIGRATE:
		if (!(t = task_of(s, ev->pid, ev->comm)))
			return -1;
		if (in) {
			t->migrations++;
			s->migrations++;
		}
		break;
	case EV_LOST:
		if (in)
			s->lost += (size_t)ev->lost;
		break;
	case EV_OTHER:
		if (in)
			s->other++;
		break;
	case EV_NONE:
		break;
	}
	return 0;
}

int trace_parse(const char *text, size_t len, double window_s, struct trace_summary *s,
		char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	if (len > TRACE_MAX_TEXT) {
		snprintf(err, errlen, "trace of %zu bytes, more than the %u allowed", len,
			 TRACE_MAX_TEXT);
		return -1;
	}
	double last = -1;
	for (int pass = 0; pass < 2; pass++) {
		const char *p = text, *end = text + len;
		size_t lineno = 0;
		double from = pass && window_s > 0 ? last - window_s : -1;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			const char *le = nl ? nl : end;
			struct ev ev;
			lineno++;
			int r = parse_line(p, le, lineno, &ev, err, errlen);
			if (r < 0) {
				trace_summary_release(s);
				return -1;
			}
			if (!r && ev.kind != EV_LOST) {
				if (!pass && ev.ts > last)
					last = ev.ts;
				if (!pass && ev.ts + 1.0 < last) {
					seterr(err, errlen, lineno, "timestamp %.6f is more than a second "
					       "before an earlier line's %.6f", ev.ts, last);
					return -1;
				}
			}
			if (!r && pass && step(s, &ev, from)) {
				trace_summary_release(s);
				snprintf(err, errlen, "more than %d tasks in the trace", TRACE_MAX_TASKS);
				return -1;
			}
			p = nl ? nl + 1 : end;
		}
		s->lines = lineno;
	}
	s->last_ts = last < 0 ? 0 : last;
	s->window_s = window_s;
	s->span_s = s->events ? s->last_ts - s->first_ts : 0;
	size_t nall = 0;
	for (size_t i = 0; i < s->ntasks; i++)
		nall += s->tasks[i].nlat;
	double *all = malloc((nall ? nall : 1) * sizeof(double));
	if (!all)
		abort();
	size_t k = 0;
	for (size_t i = 0; i < s->ntasks; i++) {
		struct trace_task *t = &s->tasks[i];
		if (t->nlat)
			qsort(t->lat_us, t->nlat, sizeof(double), cmp_double);
		t->lat_p50_us = rank(t->lat_us, t->nlat, 50);
		t->lat_p99_us = rank(t->lat_us, t->nlat, 99);
		t->lat_max_us = t->nlat ? t->lat_us[t->nlat - 1] : 0;
		if (t->nlat)
			memcpy(all + k, t->lat_us, t->nlat * sizeof(double));
		k += t->nlat;
	}
	qsort(all, nall, sizeof(double), cmp_double);
	s->lat_p50_us = rank(all, nall, 50);
	s->lat_p99_us = rank(all, nall, 99);
	s->lat_max_us = nall ? all[nall - 1] : 0;
	free(all);
	if (s->ntasks)
		qsort(s->tasks, s->ntasks, sizeof(*s->tasks), busiest_first);
	return 0;
}

void trace_summary_release(struct trace_summary *s)
{
	for (size_t i = 0; i < s->ntasks; i++)
		free(s->tasks[i].lat_us);
	free(s->tasks);
	s->tasks = NULL;
	s->ntasks = s->atasks = 0;
}

json_t *trace_summary_json(const struct trace_summary *s, size_t max_tasks)
{
	json_t *tasks = json_array();
	for (size_t i = 0; i < s->ntasks && i < max_tasks; i++) {
		const struct trace_task *t = &s->tasks[i];
		if (!t->switches && !t->wakeups && !t->migrations)
			continue;
		json_array_append_new(tasks, json_pack("{s:i,s:s,s:I,s:I,s:I,s:I,s:f,s:f,s:f}",
			"pid", t->pid, "comm", t->comm, "switches", (json_int_t)t->switches,
			"preemptions", (json_int_t)t->preemptions, "migrations",
			(json_int_t)t->migrations, "wakeups", (json_int_t)t->wakeups,
			"lat_p50_us", t->lat_p50_us, "lat_p99_us", t->lat_p99_us,
			"lat_max_us", t->lat_max_us));
	}
	return json_pack("{s:f,s:f,s:I,s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:I,s:o}",
		"window_s", s->window_s, "span_s", s->span_s, "events", (json_int_t)s->events,
		"switches", (json_int_t)s->switches, "preemptions", (json_int_t)s->preemptions,
		"migrations", (json_int_t)s->migrations, "wakeups", (json_int_t)s->wakeups,
		"lat_p50_us", s->lat_p50_us, "lat_p99_us", s->lat_p99_us, "lat_max_us",
		s->lat_max_us, "lost", (json_int_t)s->lost, "tasks", tasks);
}
