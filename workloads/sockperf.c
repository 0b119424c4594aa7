/*
 * sockperf (Debian's sockperf 3.7): network request/response round trips
 * over loopback, a server and its client started together by bin/sl-netpair
 * (workloads/native/sl-netpair.c), which picks a free port, waits for the
 * server and stops it after the client.
 *
 * Why sockperf and not tbench (docs/plan-format.md, "sockperf"): it measures exactly the
 * wakeup chain a request/response pays (send, the server woken to reply,
 * the client woken by the reply) and prints a latency distribution (and,
 * with --full-log, every round trip), where tbench prints only a throughput
 * per second of its file-server emulation and mixes in the page cache.
 *
 *   mode ping-pong   one message in flight: each is sent when the previous
 *                    reply came back (a closed loop; mps 0 = as fast as it can)
 *   mode under-load  messages sent at mps per second whatever the replies
 *                    (an open loop), every reply_every-th one answered and
 *                    timed
 *
 * The client always runs with --full-rtt, so every latency is a full round
 * trip (sockperf's default prints half of it). Metrics come from sockperf's
 * own summary (its percentiles, from every timed message of the valid
 * window); with "full_log" the per-message log (sockperf-full.csv) comes
 * back too, is kept with the run, and its round trips make the histogram
 * rtt_ns (log-linear), so repetitions merge losslessly. It is off by
 * default for its size: one line per timed message, about 40 bytes, and
 * ping-pong on loopback does 20k-200k a second (11.5 MB for a 5 s UDP run
 * here). A log over the agent's 32 MiB per file stays on the target, and
 * the run is stored with sockperf's summary and a note saying so.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/parsers.h"
#include "workloads/workload.h"

static const char *const modes[] = { "ping-pong", "under-load", NULL };
static const char *const protocols[] = { "udp", "tcp", NULL };

static const struct param_spec sockperf_params[] = {
	{ "mode", PT_ENUM, "\"ping-pong\"", 0, 0, modes,
	  .help = "ping-pong (one message in flight) or under-load (mps messages a second, every "
	  "reply_every-th timed)" },
	{ "protocol", PT_ENUM, "\"udp\"", 0, 0, protocols, .help = "UDP or TCP over 127.0.0.1" },
	{ "duration_s", PT_INT, "5", 1, 3600, NULL,
	  .help = "length of the test in seconds (sockperf's -t; its first 0.4 s are warm-up)" },
	{ "msg_size", PT_INT, "64", 14, 65000, NULL, .help = "message size in bytes (sockperf's -m)" },
	{ "mps", PT_INT, "0", 0, 10000000, NULL,
	  .help = "messages a second (sockperf's --mps); 0: as fast as it can (ping-pong only)" },
	{ "reply_every", PT_INT, "100", 1, 1000000, NULL,
	  .help = "under-load: the server answers every Nth message (sockperf's --reply-every)" },
	{ "full_log", PT_BOOL, "false", 0, 0, NULL,
	  .help = "bring back and keep every round trip (sockperf's --full-log), making the histogram "
	  "rtt_ns: about 40 bytes each, 11 MB for 5 s of ping-pong on loopback" },
	PARAM_END,
};

static int ping_pong(const json_t *p)
{
	return !strcmp(param_str(p, "mode"), "ping-pong");
}

static int check(const json_t *p, const char *path, struct strbuf *err)
{
	if (!ping_pong(p) && param_int(p, "mps") == 0) {
		strbuf_addf(err, "%s.mps: mode \"under-load\" needs a rate, 1..10000000 messages a "
			    "second (0, as fast as it can, is for ping-pong)", path);
		return -1;
	}
	return 0;
}

/* the test, sockperf's start, the server's and the stop of it */
static double estimate(const json_t *p)
{
	return (double)param_int(p, "duration_s") + 1.0;
}

static void push_common(struct strvec *v, const json_t *p)
{
	strvec_push(v, "-i");
	strvec_push(v, "127.0.0.1");
	strvec_push(v, "-p");
	strvec_push(v, "{port}");
	if (!strcmp(param_str(p, "protocol"), "tcp"))
		strvec_push(v, "--tcp");
}

static int build(const json_t *p, struct wl_exec *ex, struct strbuf *err)
{
	struct strvec *v = &ex->argv;
	strvec_push(v, "sl-netpair");
	strvec_push(v, "--proto");
	strvec_push(v, param_str(p, "protocol"));
	strvec_push(v, "--ready");
	strvec_push(v, "PORT =");       /* "[ 0] IP = 127.0.0.1 PORT = N # UDP" */
	strvec_push(v, "--log");
	strvec_push(v, "sockperf-server.log");
	strvec_push(v, "--");
	strvec_push(v, "sockperf");
	strvec_push(v, "server");
	push_common(v, p);
	strvec_push(v, "--");
	strvec_push(v, "sockperf");
	strvec_push(v, param_str(p, "mode"));
	push_common(v, p);
	strvec_push(v, "-t");
	strvec_pushf(v, "%lld", param_int(p, "duration_s"));
	strvec_push(v, "-m");
	strvec_pushf(v, "%lld", param_int(p, "msg_size"));
	if (param_int(p, "mps"))
		strvec_pushf(v, "--mps=%lld", param_int(p, "mps"));
	if (!ping_pong(p))
		strvec_pushf(v, "--reply-every=%lld", param_int(p, "reply_every"));
	strvec_push(v, "--full-rtt");
	if (param_bool(p, "full_log")) {
		strvec_push(v, "--full-log");
		strvec_push(v, "sockperf-full.csv");
		strvec_push(&ex->files, "sockperf-full.csv");
	}
	strvec_push(&ex->files, "sockperf-server.log");
	ex->package = "sockperf";
	ex->timeout_s = estimate(p) * 3 + 60;
	return 0;
}

/* the number after `key` on the first line holding it (blanks skipped), or NAN */
static double after_key(const char *text, const char *key)
{
	const char *s = strstr(text, key);
	if (!s)
		return NAN;
	s += strlen(key);
	s += strspn(s, " \t");
	if (!(*s >= '0' && *s <= '9'))
		return NAN;
	char *end;
	double v = strtod(s, &end);
	return end == s || !isfinite(v) ? NAN : v;
}

int sockperf_parse_summary(const char *raw, struct sockperf_result *r, struct strbuf *err)
{
	static const struct {
		const char *key;
		size_t off;
	} pct[] = {
		/* in the order sockperf prints them, so that the first one
		   missing from a cut output is the one named */
		{ "---> <MAX> observation =", offsetof(struct sockperf_result, max_us) },
		{ "---> percentile 99.990 =", offsetof(struct sockperf_result, p9999_us) },
		{ "---> percentile 99.900 =", offsetof(struct sockperf_result, p999_us) },
		{ "---> percentile 99.000 =", offsetof(struct sockperf_result, p99_us) },
		{ "---> percentile 90.000 =", offsetof(struct sockperf_result, p90_us) },
		{ "---> percentile 50.000 =", offsetof(struct sockperf_result, p50_us) },
		{ "---> <MIN> observation =", offsetof(struct sockperf_result, min_us) },
	};
	char *text = rtla_strip_escapes(raw);
	int ret = -1;
	memset(r, 0, sizeof(*r));
	const char *valid = strstr(text, "[Valid Duration]");
	if (!valid) {
		strbuf_addstr(err, "sockperf printed no \"[Valid Duration]\" line (no statistics: "
			      "did the test end early?)");
		goto out;
	}
	r->valid_s = after_key(valid, "RunTime=");
	r->sent = after_key(valid, "SentMessages=");
	r->received = after_key(valid, "ReceivedMessages=");
	r->avg_us = after_key(valid, "avg-rtt=");
	r->stddev_us = after_key(valid, "(std-dev=");
	r->dropped = after_key(valid, "# dropped messages =");
	r->observations = after_key(valid, "Total ");
	if (isnan(r->valid_s) || isnan(r->sent) || isnan(r->received) || r->valid_s <= 0) {
		strbuf_addstr(err, "sockperf's \"[Valid Duration]\" line lacks RunTime=, "
			      "SentMessages= or ReceivedMessages=");
		goto out;
	}
	if (isnan(r->avg_us)) {
		strbuf_addstr(err, "sockperf printed no \"avg-rtt=\" (is --full-rtt in effect? "
			      "sockperf 3.7 prints avg-rtt with it)");
		goto out;
	}
	if (isnan(r->observations) || r->observations < 1) {
		strbuf_addstr(err, "sockperf printed no \"Total N observations\" line, or no "
			      "observation at all");
		goto out;
	}
	for (size_t i = 0; i < sizeof(pct) / sizeof(pct[0]); i++) {
		double v = after_key(valid, pct[i].key);
		if (isnan(v)) {
			strbuf_addf(err, "sockperf printed no \"%s\" line", pct[i].key);
			goto out;
		}
		*(double *)((char *)r + pct[i].off) = v;
	}
	ret = 0;
out:
	free(text);
	return ret;
}

int sockperf_parse_full_log(const char *csv, struct hist *h, struct strbuf *err)
{
	const char *l = strstr(csv, "packet, txTime(sec), rxTime(sec), rtt(usec)");
	if (!l) {
		strbuf_addstr(err, "sockperf-full.csv: no \"packet, txTime(sec), rxTime(sec), "
			      "rtt(usec)\" header");
		return -1;
	}
	if (hist_init_loglin(h, 7, 40))
		return -1;
	/* strtod, not sscanf: glibc's sscanf measures the whole rest of the
	   text on every call, quadratic over a log of a million lines */
	for (l = strchr(l, '\n'); l && *++l; l = strchr(l, '\n')) {
		char *end;
		const char *f = l;
		int ok = 1;
		for (int i = 0; i < 3 && ok; i++) {  /* packet, txTime, rxTime */
			strtod(f, &end);
			ok = end != f && *end == ',';
			f = end + 1;
		}
		double rtt = ok ? strtod(f, &end) : NAN;
		if (ok && end != f && isfinite(rtt) && rtt >= 0 && rtt < 1e12)
			hist_record(h, (uint64_t)llround(rtt * 1000.0));
		else if (*l != '-' && *l != '\n')  /* the closing "-----" line */
			break;
	}
	return 0;
}

static int parse(const json_t *p, const struct wl_output *out, struct metric_set *ms,
		 struct strbuf *err)
{
	struct sockperf_result r;
	if (sockperf_parse_summary(out->out, &r, err))
		return -1;
	metric_add(ms, "rtt_avg_us", r.avg_us, "us", BETTER_LOWER);
	if (!isnan(r.stddev_us))
		metric_add(ms, "rtt_stddev_us", r.stddev_us, "us", BETTER_LOWER);
	metric_add(ms, "rtt_min_us", r.min_us, "us", BETTER_LOWER);
	metric_add(ms, "rtt_p50_us", r.p50_us, "us", BETTER_LOWER);
	metric_add(ms, "rtt_p90_us", r.p90_us, "us", BETTER_LOWER);
	metric_add(ms, "rtt_p99_us", r.p99_us, "us", BETTER_LOWER);
	metric_add(ms, "rtt_p999_us", r.p999_us, "us", BETTER_LOWER);
	metric_add(ms, "rtt_p9999_us", r.p9999_us, "us", BETTER_LOWER);
	metric_add(ms, "rtt_max_us", r.max_us, "us", BETTER_LOWER);
	metric_add(ms, "observations", r.observations, "count", BETTER_NONE);
	metric_add(ms, "msgs_per_s", r.sent / r.valid_s, "msgs/s", BETTER_HIGHER);
	if (!isnan(r.dropped))
		metric_add(ms, "dropped", r.dropped, "count", BETTER_LOWER);
	if (!param_bool(p, "full_log"))
		return 0;
	const json_t *csv = json_object_get(out->files, "sockperf-full.csv");
	if (!json_is_string(csv)) {
		metric_set_note(ms, "no histogram rtt_ns: sockperf's full log did not come back "
				"(a log over 32 MiB stays on the target: a shorter duration_s, or "
				"full_log false)");
		return 0;
	}
	struct hist h;
	if (sockperf_parse_full_log(json_string_value(csv), &h, err))
		return -1;
	metric_add_hist(ms, "rtt_ns", "ns", &h);
	return 0;
}

static int explain(const json_t *p, const struct wl_output *out, struct strbuf *msg)
{
	const char *e = out->err ? out->err : "";
	if (strstr(e, "cannot run sockperf")) {
		strbuf_addstr(msg, "sockperf is not installed on the target (the Debian package "
			      "sockperf)");
		return 1;
	}
	const char *s = strstr(e, "sl-netpair: ");
	if (s && (strstr(s, "before it was ready") || strstr(s, "did not print"))) {
		const char *end = strchrnul(s, '\n');
		strbuf_addf(msg, "%.*s", (int)(end - s), s);
		return 1;
	}
	return 0;
}

static const char *const metric_names[] = {
	"rtt_avg_us", "rtt_stddev_us", "rtt_min_us", "rtt_p50_us", "rtt_p90_us", "rtt_p99_us",
	"rtt_p999_us", "rtt_p9999_us", "rtt_max_us", "observations", "msgs_per_s", "dropped",
	NULL,
};
static const char *const also[] = { "sockperf", NULL };

const struct workload_ops sockperf_workload = {
	.name = "sockperf",
	.summary = "sockperf request/response round trips over loopback (UDP or TCP): "
		   "rtt percentiles",
	.tool = "sl-netpair",
	.package = "sockperf",
	.also_tools = also,
	.primary = "rtt_p50_us",
	.metrics = metric_names,
	.params = sockperf_params,
	.check = check,
	.estimate_s = estimate,
	.build = build,
	.parse = parse,
	.explain = explain,
};
