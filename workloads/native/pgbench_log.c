/*
 * pgbench's per-transaction log into a latency histogram (pgbench_log.h).
 * A line is split on blanks; only its third field matters, the others are
 * checked to be present and numeric so that a line of something else (an
 * aggregated log, a truncated write) is counted as bad, not as a latency.
 */
#include "workloads/native/pgbench_log.h"

#include <string.h>

int pglog_hist_init(struct hist *h)
{
	return hist_init_loglin(h, PGLOG_HIST_SUB, PGLOG_HIST_POW);
}

/* an unsigned decimal field at *p (then blanks skipped); -1 if none */
static int field_u64(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	if (s >= end || *s < '0' || *s > '9')
		return -1;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	if (s < end && *s != ' ' && *s != '\t' && *s != '\r')
		return -1;
	while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
		s++;
	*p = s;
	*v = x;
	return 0;
}

static int field_word(const char **p, const char *end, const char *w)
{
	size_t n = strlen(w);
	const char *s = *p;
	if ((size_t)(end - s) < n || memcmp(s, w, n))
		return -1;
	s += n;
	if (s < end && *s != ' ' && *s != '\t' && *s != '\r')
		return -1;
	while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
		s++;
	*p = s;
	return 0;
}

/* 0 latency (v set), 1 failed, 2 skipped, -1 not a log line; empty lines
 * are -2 (ignored) */
static int parse_line(const char *s, const char *end, uint64_t *v)
{
	uint64_t client, xact, script, epoch, us;
	int kind = 0;
	while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
		s++;
	if (s == end)
		return -2;
	if (field_u64(&s, end, &client) || field_u64(&s, end, &xact))
		return -1;
	if (!field_u64(&s, end, v))
		kind = 0;
	else if (!field_word(&s, end, "failed"))
		kind = 1;
	else if (!field_word(&s, end, "skipped"))
		kind = 2;
	else
		return -1;
	if (field_u64(&s, end, &script) || field_u64(&s, end, &epoch) ||
	    field_u64(&s, end, &us))
		return -1;
	/* optional schedule_lag and retries: numbers if present */
	for (int i = 0; i < 2 && s < end; i++) {
		uint64_t x;
		if (field_u64(&s, end, &x))
			return -1;
	}
	return s == end ? kind : -1;
}

size_t pglog_feed(const char *text, size_t len, int final, struct hist *h, struct pglog_stats *st,
		  uint64_t *lineno)
{
	size_t pos = 0;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		const char *end = nl ? nl : text + len;
		if (!nl && !final)
			break;
		uint64_t v = 0;
		++*lineno;
		switch (parse_line(text + pos, end, &v)) {
		case 0:
			hist_record(h, v);
			st->done++;
			break;
		case 1:
			st->failed++;
			break;
		case 2:
			st->skipped++;
			break;
		case -2:
			break;
		default:
			if (!st->bad_lines)
				st->first_bad = *lineno;
			st->bad_lines++;
		}
		pos = (size_t)(end - text) + (nl ? 1 : 0);
	}
	return pos;
}
