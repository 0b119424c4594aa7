/*
 * pgbench (PostgreSQL 15, Debian's postgresql-15) against a throw-away
 * server: the agent runs bin/sl-pgbench (workloads/native/sl-pgbench.c),
 * which makes the server in the run's directory (initdb, Unix socket only,
 * listen_addresses=''), initialises `scale`, runs pgbench for `duration_s`
 * with `clients` and `threads` in one `mode` (TPC-B-like, select-only, or
 * the plan's own `script`), stops the server and removes its files. The
 * server runs as `user` (default nobody) when the agent is root:
 * PostgreSQL refuses to run as root. It runs on every target: the qemu and
 * lava targets put PostgreSQL's files into the guest's initramfs, the ssh
 * target into its workload bundle (harness/targets/pgfiles.h, bundle.h).
 *
 * Metrics: tps, transactions and failed transactions and the latency
 * average from pgbench's report (its stdout, kept as the run's raw output:
 * "tps = X (without initial connection time)", "number of transactions
 * actually processed: N", "number of failed transactions: N (x%)",
 * "latency average = X ms"); the latency percentiles from the
 * per-transaction log (`pgbench --log`), which sl-pgbench reads into a
 * log-linear histogram of microseconds and returns as sl-pgbench.json
 * (stored as the histogram latency_us). The server's log (postgres.log),
 * initdb's and `pgbench -i`'s output come back as files too: a server that
 * does not start is a failed run whose message is the server's own FATAL
 * line.
 *
 * Every plan value that reaches argv is an integer or an enum formatted
 * here, a size checked below (shared_buffers: digits and a unit), a user
 * name checked to be a plain name, or an absolute directory; the custom
 * script travels as an input file, never in argv.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workloads/parsers.h"
#include "workloads/workload.h"

static const char *const modes[] = { "tpcb-like", "select-only", "script", NULL };
static const char *const huge_modes[] = { "off", "on", "try", NULL };

#define PGB_SCRIPT_FILE "pgbench-script.sql"
#define PGB_RESULT_FILE "sl-pgbench.json"

static const struct param_spec pgbench_params[] = {
	{ "duration_s", PT_INT, "10", 1, 86400, NULL, .help = "measured run time (pgbench's -T)" },
	{ "clients", PT_INT, "2", 1, 1000, NULL, .help = "client sessions (pgbench's -c)" },
	{ "threads", PT_INT, "1", 1, 1000, NULL,
	  .help = "pgbench worker threads, at most clients (pgbench's -j)" },
	{ "scale", PT_INT, "1", 1, 10000, NULL,
	  .help = "scale factor of `pgbench -i -s` (100,000 accounts each, about 15 MB)" },
	{ "mode", PT_ENUM, "\"tpcb-like\"", 0, 0, modes,
	  .help = "tpcb-like (pgbench's default), select-only (-S), or script (the plan's `script`)" },
	{ "script", PT_JSON, NULL, 0, 0, NULL,
	  .help = "mode script: a pgbench custom script (-f), its text or an array of its lines, e.g. "
	  "[\"\\\\set aid random(1, 100000 * :scale)\", \"SELECT abalance FROM "
	  "pgbench_accounts WHERE aid = :aid;\"]" },
	{ "shared_buffers", PT_STR, "\"128MB\"", 0, 0, NULL,
	  .help = "the server's shared_buffers (a number with kB, MB or GB, or 8 kB pages)" },
	{ "huge_pages", PT_ENUM, "\"off\"", 0, 0, huge_modes,
	  .help = "the server's huge_pages: on needs huge pages reserved (vm.nr_hugepages), else the "
	  "server does not start" },
	{ "fsync", PT_BOOL, "false", 0, 0, NULL,
	  .help = "the server's fsync (off by default: the question is CPU scheduling, not the disk)" },
	{ "user", PT_STR, "\"nobody\"", 0, 0, NULL,
	  .help = "the user the server and pgbench run as when the agent is root (PostgreSQL refuses "
	  "root); it needs an /etc/passwd entry" },
	{ "bindir", PT_STR, NULL, 0, 0, NULL,
	  .help = "where initdb, postgres and pgbench are on the target (default: the ssh target's "
	  "workload bundle, else /usr/lib/postgresql/15/bin, else /bin as in the qemu and "
	  "lava guests)" },
	PARAM_END,
};

/* the script's text: a string as is, an array of strings one a line;
 * 0, or -1 when it is neither (or empty) */
static int script_text(const json_t *v, struct strbuf *out)
{
	size_t i;
	json_t *e;
	if (json_is_string(v)) {
		strbuf_addstr(out, json_string_value(v));
		return json_string_length(v) ? 0 : -1;
	}
	if (!json_is_array(v) || !json_array_size(v))
		return -1;
	json_array_foreach(v, i, e) {
		if (!json_is_string(e) || strchr(json_string_value(e), '\n'))
			return -1;
		strbuf_addf(out, "%s\n", json_string_value(e));
	}
	return 0;
}

static int check(const json_t *p, const char *path, struct strbuf *err)
{
	const char *mode = param_str(p, "mode");
	const json_t *script = json_object_get(p, "script");
	const char *sb = param_str(p, "shared_buffers"), *user = param_str(p, "user");
	const char *bindir = param_str(p, "bindir");
	size_t i;

	if (param_int(p, "threads") > param_int(p, "clients")) {
		strbuf_addf(err, "%s.threads: %lld is more than clients (%lld): pgbench needs at "
			    "least one client per thread", path, param_int(p, "threads"),
			    param_int(p, "clients"));
		return -1;
	}
	if (!strcmp(mode, "script")) {
		struct strbuf t = STRBUF_INIT;
		int bad = !script || script_text(script, &t);
		strbuf_release(&t);
		if (bad) {
			strbuf_addf(err, "%s.script: mode \"script\" needs a pgbench script: its "
				    "text, or an array of its lines (one SQL statement or "
				    "\\set meta-command a line)", path);
			return -1;
		}
	}
	if (strcmp(mode, "script") && script) {
		strbuf_addf(err, "%s.script: only with \"mode\": \"script\" (mode is \"%s\")", path,
			    mode);
		return -1;
	}
	/* a size: digits, then optional blanks and letters (PostgreSQL checks
	 * the unit itself and its message is the run's error) */
	for (i = 0; isdigit((unsigned char)sb[i]); i++)
		;
	size_t digits = i;
	i += strspn(sb + i, " ");
	i += strspn(sb + i, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
	if (!digits || sb[i] || strlen(sb) > 32) {
		strbuf_addf(err, "%s.shared_buffers: \"%s\" is not a size (a number with kB, MB or "
			    "GB, such as \"128MB\")", path, sb);
		return -1;
	}
	if (!*user || strlen(user) > 32 || user[0] == '-' ||
	    user[strspn(user, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")]) {
		strbuf_addf(err, "%s.user: \"%s\" is not a user name (letters, digits, _ . -)", path,
			    user);
		return -1;
	}
	if (bindir && (bindir[0] != '/' || strpbrk(bindir, "\n\r") || strlen(bindir) > 200)) {
		strbuf_addf(err, "%s.bindir: \"%s\" must be an absolute directory", path, bindir);
		return -1;
	}
	return 0;
}

/* initdb and a server start (about 4 s here, more in a TCG guest), the
 * initialisation (about 0.3 s a scale unit), the run, the shutdown */
static double estimate(const json_t *p)
{
	return 5.0 + 0.4 * (double)param_int(p, "scale") + (double)param_int(p, "duration_s");
}

static int build(const json_t *p, struct wl_exec *ex, struct strbuf *err)
{
	const char *mode = param_str(p, "mode");
	strvec_push(&ex->argv, "sl-pgbench");
	strvec_pushf(&ex->argv, "--duration=%lld", param_int(p, "duration_s"));
	strvec_pushf(&ex->argv, "--clients=%lld", param_int(p, "clients"));
	strvec_pushf(&ex->argv, "--threads=%lld", param_int(p, "threads"));
	strvec_pushf(&ex->argv, "--scale=%lld", param_int(p, "scale"));
	strvec_pushf(&ex->argv, "--mode=%s", !strcmp(mode, "tpcb-like") ? "tpcb" :
			       !strcmp(mode, "select-only") ? "select" : "script");
	if (!strcmp(mode, "script")) {
		struct strbuf t = STRBUF_INIT;
		if (script_text(json_object_get(p, "script"), &t)) {
			strbuf_release(&t);
			strbuf_addstr(err, "pgbench: the script is neither text nor lines");
			return -1;
		}
		strvec_push(&ex->argv, "--script=" PGB_SCRIPT_FILE);
		ex->inputs = json_pack("{s:s}", PGB_SCRIPT_FILE, t.buf);
		strbuf_release(&t);
	}
	strvec_pushf(&ex->argv, "--shared-buffers=%s", param_str(p, "shared_buffers"));
	strvec_pushf(&ex->argv, "--huge-pages=%s", param_str(p, "huge_pages"));
	if (param_bool(p, "fsync"))
		strvec_push(&ex->argv, "--fsync");
	strvec_pushf(&ex->argv, "--user=%s", param_str(p, "user"));
	if (param_str(p, "bindir"))
		strvec_pushf(&ex->argv, "--bindir=%s", param_str(p, "bindir"));
	strvec_push(&ex->files, PGB_RESULT_FILE);
	strvec_push(&ex->files, "postgres.log");
	strvec_push(&ex->files, "initdb.txt");
	strvec_push(&ex->files, "pgbench-init.txt");
	ex->package = "postgresql-15";
	/* a TCG guest runs initdb and the initialisation 10-20 times slower */
	ex->timeout_s = (double)param_int(p, "duration_s") * 2 + 20 * estimate(p) + 120;
	return 0;
}

/* the number after `key` on the line starting with it (after blanks);
 * 0, or -1 when there is no such line or no number */
static int report_value(const char *text, const char *key, double *v)
{
	size_t n = strlen(key);
	for (const char *l = text; l && *l;) {
		const char *s = l + strspn(l, " \t");
		if (!strncmp(s, key, n)) {
			char *end;
			s += n;
			s += strspn(s, " \t");
			if (!(*s >= '0' && *s <= '9'))
				return -1;
			*v = strtod(s, &end);
			return end == s || !isfinite(*v) ? -1 : 0;
		}
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return -1;
}

int pgbench_parse_report(const char *text, struct pgbench_report *r, struct strbuf *err)
{
	memset(r, 0, sizeof(*r));
	r->failed = 0;
	r->lat_avg_ms = NAN;
	if (!text || !strstr(text, "transaction type:")) {
		strbuf_addstr(err, "pgbench: no report in its output (no \"transaction type:\" "
			      "line)");
		return -1;
	}
	if (report_value(text, "tps =", &r->tps)) {
		strbuf_addstr(err, "pgbench: no \"tps = <number> (without initial connection "
			      "time)\" line in its report");
		return -1;
	}
	if (report_value(text, "number of transactions actually processed:", &r->transactions)) {
		strbuf_addstr(err, "pgbench: no \"number of transactions actually processed: N\" "
			      "line in its report");
		return -1;
	}
	/* pgbench 15 prints it always; older ones did not have it */
	if (report_value(text, "number of failed transactions:", &r->failed))
		r->failed = NAN;
	if (report_value(text, "latency average =", &r->lat_avg_ms))
		r->lat_avg_ms = NAN;
	return 0;
}

int pgbench_parse_result(const char *json_text, struct metric_set *ms, struct strbuf *err)
{
	json_error_t je;
	json_t *o = json_text ? json_loads(json_text, 0, &je) : NULL;
	struct hist h;
	static const struct {
		const char *name;
		double p;
	} pcts[] = { { "lat_p50_us", 50 }, { "lat_p90_us", 90 }, { "lat_p99_us", 99 },
		     { "lat_p999_us", 99.9 } };

	if (!o) {
		strbuf_addf(err, "pgbench: %s %s", PGB_RESULT_FILE,
			    json_text ? "is not JSON" : "was not written (sl-pgbench ended early)");
		return -1;
	}
	if (hist_from_json(&h, json_object_get(o, "latency_us"))) {
		strbuf_addf(err, "pgbench: %s has no valid latency_us histogram", PGB_RESULT_FILE);
		json_decref(o);
		return -1;
	}
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
		metric_add_hist_pct(ms, pcts[i].name, &h, pcts[i].p, 1, "us");
		/* a bucket's midpoint can lie above the longest transaction
		 * (seen: p99 4866048 with max 4863567): no percentile exceeds
		 * the maximum, so it is capped there */
		struct metric *m = ms->nr ? &ms->m[ms->nr - 1] : NULL;
		if (m && !strcmp(m->name, pcts[i].name) && !m->censored && !isnan(h.max) &&
		    m->value > h.max)
			m->value = h.max;
	}
	if (h.total && !isnan(h.max))
		metric_add(ms, "lat_max_us", h.max, "us", BETTER_LOWER);
	json_int_t bad = json_integer_value(json_object_get(o, "bad_lines"));
	if (bad)
		metric_set_note(ms, "%lld lines of pgbench's transaction log were not transaction "
				"lines and were left out", (long long)bad);
	json_t *v;
	if ((v = json_object_get(o, "init_s")) && json_is_number(v))
		metric_add(ms, "init_s", json_number_value(v), "s", BETTER_NONE);
	metric_add_hist(ms, "latency_us", "us", &h);
	json_decref(o);
	return 0;
}

static int parse(const json_t *p, const struct wl_output *out, struct metric_set *ms,
		 struct strbuf *err)
{
	struct pgbench_report r;
	if (pgbench_parse_report(out->out, &r, err))
		return -1;
	metric_add(ms, "tps", r.tps, "tps", BETTER_HIGHER);
	metric_add(ms, "transactions", r.transactions, "count", BETTER_HIGHER);
	if (!isnan(r.failed))
		metric_add(ms, "failed_transactions", r.failed, "count", BETTER_LOWER);
	if (!isnan(r.lat_avg_ms))
		metric_add(ms, "lat_avg_us", r.lat_avg_ms * 1000.0, "us", BETTER_LOWER);
	return pgbench_parse_result(json_string_value(json_object_get(out->files, PGB_RESULT_FILE)),
				    ms, err);
}

/* the last line of text that starts with prefix (without its newline) */
static int last_line(const char *text, const char *prefix, struct strbuf *msg)
{
	const char *best = NULL;
	size_t n = strlen(prefix);
	for (const char *l = text; l && *l;) {
		if (!strncmp(l, prefix, n))
			best = l;
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	if (!best)
		return 0;
	strbuf_add(msg, best, strcspn(best, "\n"));
	return 1;
}

int pgbench_explain(const char *err_text, struct strbuf *msg)
{
	if (!err_text)
		return 0;
	/* sl-pgbench's own reason (it quotes the server's FATAL line) */
	if (last_line(err_text, "sl-pgbench: ", msg))
		return 1;
	if (last_line(err_text, "pgbench: error: ", msg) ||
	    last_line(err_text, "pgbench: fatal: ", msg))
		return 1;
	return 0;
}

static int explain(const json_t *p, const struct wl_output *out, struct strbuf *msg)
{
	return pgbench_explain(out->err, msg);
}

static const char *const metric_names[] = {
	"tps", "transactions", "failed_transactions", "lat_avg_us", "lat_p50_us", "lat_p90_us",
	"lat_p99_us", "lat_p999_us", "lat_max_us", "init_s", NULL,
};

const struct workload_ops pgbench_workload = {
	.name = "pgbench",
	.summary = "PostgreSQL's pgbench against a throw-away server (tps, latency percentiles); "
		   "on every target: qemu and lava guests and the ssh bundle carry PostgreSQL",
	.tool = "sl-pgbench",
	.package = "postgresql-15",
	.primary = "tps",
	.metrics = metric_names,
	.params = pgbench_params,
	.check = check,
	.estimate_s = estimate,
	.build = build,
	.parse = parse,
	.explain = explain,
};
