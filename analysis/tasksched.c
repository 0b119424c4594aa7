/*
 * /proc/<pid>/sched parser and the window sums of a native workload's dump;
 * the formats and the rules for untrusted text are in tasksched.h.
 */
#include "analysis/tasksched.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const field_names[TS_NFIELDS] = {
	[TS_NR_MIGRATIONS] = "se.nr_migrations",
	[TS_NR_SWITCHES] = "nr_switches",
	[TS_NR_VOLUNTARY] = "nr_voluntary_switches",
	[TS_NR_INVOLUNTARY] = "nr_involuntary_switches",
	[TS_SUM_EXEC] = "se.sum_exec_runtime",
	[TS_WAKEUPS] = "nr_wakeups",
	[TS_WAKEUPS_SYNC] = "nr_wakeups_sync",
	[TS_WAKEUPS_MIGRATE] = "nr_wakeups_migrate",
	[TS_WAKEUPS_LOCAL] = "nr_wakeups_local",
	[TS_WAKEUPS_REMOTE] = "nr_wakeups_remote",
	[TS_WAKEUPS_AFFINE] = "nr_wakeups_affine",
	[TS_WAKEUPS_AFFINE_ATTEMPTS] = "nr_wakeups_affine_attempts",
	[TS_WAKEUPS_PASSIVE] = "nr_wakeups_passive",
	[TS_WAKEUPS_IDLE] = "nr_wakeups_idle",
	[TS_WAIT_SUM] = "wait_sum",
	[TS_WAIT_COUNT] = "wait_count",
	[TS_WAIT_MAX] = "wait_max",
	[TS_IOWAIT_SUM] = "iowait_sum",
	[TS_IOWAIT_COUNT] = "iowait_count",
};

const char *task_sched_field_name(enum ts_field f)
{
	return (unsigned)f < TS_NFIELDS ? field_names[f] : "?";
}

int task_sched_field_is_time(enum ts_field f)
{
	return f == TS_SUM_EXEC || f == TS_WAIT_SUM || f == TS_WAIT_MAX || f == TS_IOWAIT_SUM;
}

static void seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* the field a key names, after the prefixes older kernels print; -1 if none */
static int field_of(const char *key)
{
	static const char *const prefixes[] = { "se.statistics.", "stats.", NULL };
	for (int f = 0; f < TS_NFIELDS; f++)
		if (!strcmp(key, field_names[f]))
			return f;
	for (const char *const *p = prefixes; *p; p++) {
		size_t n = strlen(*p);
		if (strncmp(key, *p, n))
			continue;
		for (int f = 0; f < TS_NFIELDS; f++)
			if (!strcmp(key + n, field_names[f]))
				return f;
	}
	return -1;
}

/* a field name's characters: "mm->numa_scan_seq", and since uclamp
 * "effective uclamp.min" (a space inside; 7.3's Debian kernel prints it,
 * tests/data/task-sched-debian-7.3-pingpong.txt) */
static int key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-' || c == '>' || c == ' ';
}

/*
 * A value "123" or "123.456789" (times: ms). Into *out as a count, or for a
 * time as ns (the fraction has at most 9 digits). 0, or -1 with why.
 */
static int parse_value(const char *s, int is_time, uint64_t *out, const char **why)
{
	if (*s == '-') {
		*why = "negative value";
		return -1;
	}
	const char *p = s;
	uint64_t whole = 0;
	if (*p < '0' || *p > '9') {
		*why = "not a number";
		return -1;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (whole > (UINT64_MAX - d) / 10) {
			*why = "value out of range";
			return -1;
		}
		whole = whole * 10 + d;
	}
	uint64_t frac = 0;
	int fd = 0;
	if (*p == '.') {
		if (!is_time) {
			*why = "a count with a fraction";
			return -1;
		}
		p++;
		if (*p < '0' || *p > '9') {
			*why = "not a number";
			return -1;
		}
		for (; *p >= '0' && *p <= '9'; p++) {
			if (++fd > 9) {
				*why = "more than 9 decimals";
				return -1;
			}
			frac = frac * 10 + (uint64_t)(*p - '0');
		}
	}
	if (*p) {
		*why = "not a number";
		return -1;
	}
	if (is_time) {
		for (; fd < 6; fd++)
			frac *= 10;          /* ms fraction -> ns */
		for (; fd > 6; fd--)
			frac /= 10;          /* below a ns: dropped */
		if (whole > (UINT64_MAX - frac) / 1000000) {
			*why = "value out of range";
			return -1;
		}
		whole = whole * 1000000 + frac;
	}
	*out = whole;
	return 0;
}

/* "name (pid, #threads: N)": 0 when the line is the header */
static int parse_header(const char *line, struct task_sched *out)
{
	const char *lp = strrchr(line, '(');
	int pid, thr, n = -1;
	if (!lp || lp == line || lp[-1] != ' ' ||
	    sscanf(lp, "(%d, #threads: %d)%n", &pid, &thr, &n) != 2 || n < 0 || lp[n] ||
	    pid < 0 || thr < 0)
		return -1;
	size_t cl = (size_t)(lp - 1 - line);
	if (cl >= sizeof(out->comm))
		cl = sizeof(out->comm) - 1;
	memcpy(out->comm, line, cl);
	out->comm[cl] = 0;
	out->pid = pid;
	out->threads = thr;
	return 0;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = 0;
	return s;
}

/* one line (NUL-terminated, no newline); lineno for messages */
static int parse_line(char *line, int lineno, int *seen_header, struct task_sched *out,
		      char *err, size_t errlen)
{
	char *t = trim(line);
	if (!*t)
		return 0;
	if (!*seen_header) {
		*seen_header = 1;
		if (!parse_header(t, out))
			return 0;
	}
	if (strspn(t, "-") == strlen(t))
		return 0;                    /* the dashes under the header */
	char *colon = strchr(t, ':');
	if (!colon) {
		/* "current_node=0, numa_group_id=0", "numa_faults node=0 ..." */
		if (strchr(t, '=') && strspn(t, "abcdefghijklmnopqrstuvwxyz0123456789_=, ") ==
					      strlen(t))
			return 0;
		seterr(err, errlen, "line %d: not a \"name : value\" line", lineno);
		return -1;
	}
	*colon = 0;
	char *key = trim(t), *val = trim(colon + 1);
	size_t kl = strlen(key);
	if (!kl || kl > 64) {
		seterr(err, errlen, "line %d: %s field name", lineno, kl ? "overlong" : "empty");
		return -1;
	}
	for (size_t i = 0; i < kl; i++)
		if (!key_char(key[i])) {
			seterr(err, errlen, "line %d: invalid character in a field name", lineno);
			return -1;
		}
	int f = field_of(key);
	if (f < 0)
		return 0;                    /* a field this parser does not use */
	if (task_sched_has(out, f)) {
		seterr(err, errlen, "line %d: %s: given twice", lineno, key);
		return -1;
	}
	const char *why = NULL;
	if (parse_value(val, task_sched_field_is_time(f), &out->v[f], &why)) {
		seterr(err, errlen, "line %d: %s: %s", lineno, key, why);
		return -1;
	}
	out->present |= 1u << f;
	return 0;
}

int task_sched_parse(const char *text, size_t len, struct task_sched *out, char *err,
		     size_t errlen)
{
	memset(out, 0, sizeof(*out));
	out->pid = out->threads = -1;
	if (!text) {
		seterr(err, errlen, "no text");
		return -1;
	}
	if (len > TASK_SCHED_MAX_TEXT) {
		seterr(err, errlen, "%zu bytes: more than the %d a sched file may have", len,
		       TASK_SCHED_MAX_TEXT);
		return -1;
	}
	char line[TASK_SCHED_MAX_LINE + 1];
	int lineno = 0, seen_header = 0;
	size_t i = 0;
	while (i < len) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t ll = nl ? (size_t)(nl - (text + i)) : len - i;
		lineno++;
		if (ll > TASK_SCHED_MAX_LINE) {
			seterr(err, errlen, "line %d: longer than %d bytes", lineno,
			       TASK_SCHED_MAX_LINE);
			return -1;
		}
		if (memchr(text + i, 0, ll)) {
			seterr(err, errlen, "line %d: contains a NUL byte", lineno);
			return -1;
		}
		memcpy(line, text + i, ll);
		line[ll] = 0;
		if (parse_line(line, lineno, &seen_header, out, err, errlen))
			return -1;
		i += ll + (nl ? 1 : 0);
	}
	return 0;
}

/* ---- dumps ---------------------------------------------------------------- */

struct snap {
	int tid;
	int phase;                  /* 0 start, 1 end */
	struct task_sched ts;
};

static int cmp_snap(const void *a, const void *b)
{
	const struct snap *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->phase - y->phase;
}

/* the next line [*pos, end of line) as a pointer and length; advances *pos */
static const char *next_line(const char *text, size_t len, size_t *pos, size_t *ll)
{
	if (*pos >= len)
		return NULL;
	const char *s = text + *pos;
	const char *nl = memchr(s, '\n', len - *pos);
	*ll = nl ? (size_t)(nl - s) : len - *pos;
	*pos += *ll + (nl ? 1 : 0);
	return s;
}

enum ts_dump_status task_sched_dump_sum(const char *text, size_t len, struct task_sched_sum *sum,
					char *err, size_t errlen)
{
	static const char magic[] = "schedlab-task-sched 1";
	memset(sum, 0, sizeof(*sum));
	size_t pos = 0, ll;
	const char *l = text ? next_line(text, len, &pos, &ll) : NULL;
	if (!l || ll != sizeof(magic) - 1 || memcmp(l, magic, ll)) {
		seterr(err, errlen, "line 1: not a task-sched dump (expected \"%s\")", magic);
		return TS_DUMP_BAD;
	}
	struct snap *s = NULL;
	size_t ns = 0, as = 0;
	enum ts_dump_status st = TS_DUMP_OK;
	int lineno = 1;
	while (st == TS_DUMP_OK && pos < len) {
		l = next_line(text, len, &pos, &ll);
		lineno++;
		int hdr_line = lineno;
		char hdr[TASK_SCHED_MAX_LINE + 1];
		if (ll > TASK_SCHED_MAX_LINE || ll < 3 || memcmp(l, "@@ ", 3) ||
		    memchr(l, 0, ll)) {
			seterr(err, errlen, "line %d: expected \"@@ start|end TID\"", lineno);
			st = TS_DUMP_BAD;
			break;
		}
		memcpy(hdr, l, ll);
		hdr[ll] = 0;
		if (!strcmp(hdr, "@@ truncated")) {
			seterr(err, errlen, "the dump was cut at its size limit (too many tasks)");
			st = TS_DUMP_ABSENT;
			break;
		}
		char phase[8];
		int tid, n = -1;
		if (sscanf(hdr, "@@ %7s %d%n", phase, &tid, &n) != 2 || n < 0 || tid <= 0 ||
		    (strcmp(phase, "start") && strcmp(phase, "end")) ||
		    (hdr[n] && strncmp(hdr + n, " error ", 7))) {
			seterr(err, errlen, "line %d: expected \"@@ start|end TID\"", lineno);
			st = TS_DUMP_BAD;
			break;
		}
		if (hdr[n]) {
			seterr(err, errlen, "/proc/%d/sched (%s of the window): %.200s", tid, phase,
			       hdr + n + 7);
			st = TS_DUMP_ABSENT;
			break;
		}
		/* the body: up to the next "@@ " line */
		size_t body = pos, bend = pos;
		int blines = 0;
		while (bend < len) {
			if (len - bend >= 3 && !memcmp(text + bend, "@@ ", 3))
				break;
			const char *nl = memchr(text + bend, '\n', len - bend);
			bend = nl ? (size_t)(nl - text) + 1 : len;
			blines++;
		}
		if (bend == body) {
			seterr(err, errlen, "/proc/%d/sched (%s of the window) was empty", tid, phase);
			st = TS_DUMP_ABSENT;
			break;
		}
		if (ns == as) {
			if (ns >= 2 * (size_t)TASK_SCHED_MAX_TASKS) {
				seterr(err, errlen, "line %d: more than %d tasks", lineno,
				       TASK_SCHED_MAX_TASKS);
				st = TS_DUMP_BAD;
				break;
			}
			as = as ? 2 * as : 16;
			struct snap *ns2 = realloc(s, as * sizeof(*s));
			if (!ns2) {
				seterr(err, errlen, "out of memory");
				st = TS_DUMP_BAD;
				break;
			}
			s = ns2;
		}
		struct snap *cur = &s[ns];
		cur->tid = tid;
		cur->phase = !strcmp(phase, "end");
		char e2[200];
		if (task_sched_parse(text + body, bend - body, &cur->ts, e2, sizeof(e2))) {
			/* "line N" of the task's file -> of the dump */
			int bl;
			if (sscanf(e2, "line %d:", &bl) == 1)
				seterr(err, errlen, "line %d (task %d, %s): %s", hdr_line + bl, tid,
				       phase, strchr(e2, ':') + 2);
			else
				seterr(err, errlen, "line %d (task %d, %s): %s", hdr_line, tid,
				       phase, e2);
			st = TS_DUMP_BAD;
			break;
		}
		ns++;
		lineno += blines;
		pos = bend;
	}
	if (st == TS_DUMP_OK && ns)
		qsort(s, ns, sizeof(*s), cmp_snap);
	sum->present = ns ? (1u << TS_NFIELDS) - 1 : 0;
	for (size_t i = 0; st == TS_DUMP_OK && i < ns; i++) {
		if (i + 1 < ns && s[i].tid == s[i + 1].tid && s[i].phase == s[i + 1].phase) {
			seterr(err, errlen, "task %d: two %s snapshots", s[i].tid,
			       s[i].phase ? "end" : "start");
			st = TS_DUMP_BAD;
			break;
		}
		const struct snap *a = NULL, *b;
		if (s[i].phase == 0) {
			if (i + 1 >= ns || s[i + 1].tid != s[i].tid) {
				seterr(err, errlen, "task %d has no end snapshot (it exited inside "
				       "the window)", s[i].tid);
				st = TS_DUMP_ABSENT;
				break;
			}
			a = &s[i];
			b = &s[++i];
		} else {
			b = &s[i];
			sum->nborn++;
		}
		uint32_t pr = b->ts.present & (a ? a->ts.present : ~0u);
		sum->present &= pr;
		for (int f = 0; f < TS_NFIELDS && st == TS_DUMP_OK; f++) {
			if (!((pr >> f) & 1))
				continue;
			uint64_t v0 = a ? a->ts.v[f] : 0, v1 = b->ts.v[f];
			if (f == TS_WAIT_MAX) {
				if (v1 > sum->v[f])
					sum->v[f] = v1;
				continue;
			}
			if (v1 < v0) {
				seterr(err, errlen, "task %d: %s went backwards", s[i].tid,
				       field_names[f]);
				st = TS_DUMP_BAD;
			} else if (sum->v[f] > UINT64_MAX - (v1 - v0)) {
				seterr(err, errlen, "%s: the sum overflows", field_names[f]);
				st = TS_DUMP_BAD;
			} else {
				sum->v[f] += v1 - v0;
			}
		}
		sum->ntasks++;
	}
	free(s);
	if (st == TS_DUMP_OK && !sum->ntasks) {
		seterr(err, errlen, "the dump holds no task");
		st = TS_DUMP_ABSENT;
	}
	if (st != TS_DUMP_OK)
		memset(sum, 0, sizeof(*sum));
	return st;
}
