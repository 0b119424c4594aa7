/*
 * The commands' shared layer (see options.h and cmd.h): option tables run
 * through getopt_long, value checks with one message per kind, and the
 * helpers every command uses (errors, --format, the compare job that
 * `compare` and `check` share, the final check of stdout), and main's
 * opening of the command's database by its setup flags (cmd_db).
 */
#include "harness/util/numfmt.h"
#include "harness/util/tag.h"
#include "harness/cli/options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/verdict.h"
#include "db/db.h"
#include "harness/cli/cmd.h"
#include "harness/util/strbuf.h"
#include "harness/results/compare.h"
#include "harness/util/strbuf.h"

void cmd_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "schedlab %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int parse_format(const char *cmd, const char *s, enum out_format *out, unsigned allowed)
{
	static const char *const names[] = { [FMT_TABLE] = "table", [FMT_CSV] = "csv",
					      [FMT_JSON] = "json" };
	struct strbuf valid = STRBUF_INIT;
	for (unsigned f = 0; f < sizeof(names) / sizeof(names[0]); f++) {
		if (!(allowed & (1u << f)))
			continue;
		if (!strcmp(s, names[f])) {
			*out = (enum out_format)f;
			strbuf_release(&valid);
			return 0;
		}
		strbuf_addf(&valid, "%s%s", valid.len ? "|" : "", names[f]);
	}
	cmd_error(cmd, "--format %s: must be one of %s", s, valid.buf);
	strbuf_release(&valid);
	return -1;
}

struct db *cmd_db(struct cmd_ctx *c, int ro)
{
	if (c->db)
		return c->db;
	enum db_mode mode = DB_READONLY;
	if (!ro && (c->flags & CMD_DB_RW))
		mode = c->db_existing ? DB_READWRITE_EXISTING : DB_READWRITE;
	char *msg = NULL;
	if (db_open(c->dbpath, mode, &c->db, &msg)) {
		cmd_error(c->name, "%s", msg ? msg : c->dbpath); /* it names the file */
		free(msg);
		c->db = NULL;
	}
	return c->db;
}

int cmd_compare_job(struct cmd_ctx *c, const char *a, const char *b,
		    const struct cmp_options *o, int hists, struct compare_job *job)
{
	struct strbuf err = STRBUF_INIT;
	int bad = compare_job_run(c->db, a, b, o, hists, job, &err);
	if (bad)
		cmd_error(c->name, "%s", err.buf);
	strbuf_release(&err);
	if (bad)
		return 2;
	for (size_t i = 0; i < job->r.warnings.nr; i++)
		cmd_error(c->name, "warning: %s", job->r.warnings.v[i]);
	return 0;
}

int cmd_finish(int rc)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "schedlab: error writing to stdout: %s\n", strerror(errno));
		return rc ? rc : 2;
	}
	return rc;
}

int cli_valid_tag(const char *t)
{
	return tag_valid(t);
}

/* a real number in the open interval (lo, hi), the whole argument */
static int open_interval(const char *arg, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(arg, &end);
	if (end == arg || *end || !(v > lo && v < hi))
		return -1;
	*out = v;
	return 0;
}

static void choices_text(const char *const *l, struct strbuf *sb)
{
	for (size_t i = 0; l[i]; i++)
		strbuf_addf(sb, "%s%s", i == 0 ? "" : l[i + 1] ? ", " : " or ", l[i]);
}

/* one option's value into its destination; 0, or 2 after the message */
static int take_value(const char *cmd, const struct cli_opt *o, const char *arg, int argc,
		      char **argv)
{
	char *end;
	switch (o->kind) {
	case CLI_STRING:
		*(const char **)o->dst = arg;
		return 0;
	case CLI_FLAG:
		*(int *)o->dst = 1;
		return 0;
	case CLI_FORMAT:
		return parse_format(cmd, arg, o->dst, (unsigned)o->max) ? 2 : 0;
	case CLI_DATE:
		if (!date_arg_valid(arg)) {
			cmd_error(cmd, "--%s %s: expected " DATE_ARG_FORMAT, o->name, arg);
			return 2;
		}
		*(const char **)o->dst = arg;
		return 0;
	case CLI_PERCENT: {
		double v;
		if (open_interval(arg, -HUGE_VAL, HUGE_VAL, &v) || !verdict_threshold_valid(v)) {
			cmd_error(cmd, "--%s %s: must be a percentage in (0, 1000)", o->name, arg);
			return 2;
		}
		*(double *)o->dst = v;
		return 0;
	}
	case CLI_PROB:
		if (open_interval(arg, 0, 1, o->dst)) {
			cmd_error(cmd, "--%s %s: must be a probability in (0, 1)", o->name, arg);
			return 2;
		}
		return 0;
	case CLI_SIZE: {
		errno = 0;
		long v = strtol(arg, &end, 10);
		if (end == arg || *end || errno || v < o->min || v > o->max) {
			cmd_error(cmd, "--%s %s: must be an integer in [%ld, %ld]", o->name, arg,
				  o->min, o->max);
			return 2;
		}
		*(size_t *)o->dst = (size_t)v;
		return 0;
	}
	case CLI_CHOICE:
		for (int i = 0; o->choices[i]; i++)
			if (!strcmp(arg, o->choices[i])) {
				*(int *)o->dst = i;
				return 0;
			}
		struct strbuf sb = STRBUF_INIT;
		choices_text(o->choices, &sb);
		cmd_error(cmd, "--%s %s: must be %s", o->name, arg, sb.buf);
		strbuf_release(&sb);
		return 2;
	case CLI_CALL:
		return o->fn(o->ctx, arg, argc, argv, &optind);
	}
	return 2;
}

int cli_parse(const char *cmd, const char *usage, const struct cli_opt *opts, int argc,
	      char **argv, int *first)
{
	size_t n = 0;
	while (opts[n].name)
		n++;
	struct option *lo = xcalloc(n + 2, sizeof(*lo));
	for (size_t i = 0; i < n; i++) {
		int arg = opts[i].kind == CLI_FLAG ? 0
			  : opts[i].kind == CLI_CALL ? opts[i].takes_arg
						     : 1;
		lo[i] = (struct option){ opts[i].name, arg ? required_argument : no_argument, NULL,
					 256 + (int)i };
	}
	lo[n] = (struct option){ "help", no_argument, NULL, 'h' };
	int c, rc = CLI_OK;
	optind = 1;
	while (rc == CLI_OK && (c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			rc = CLI_HELP;
		} else if (c >= 256 && c < 256 + (int)n) {
			rc = take_value(cmd, &opts[c - 256], optarg, argc, argv);
		} else {
			fputs(usage, stderr);
			rc = 2;
		}
	}
	free(lo);
	*first = optind;
	return rc;
}

int cli_parse_exit(int rc)
{
	return rc == CLI_HELP ? cmd_finish(0) : rc;
}

int cli_no_args(const char *cmd, int argc, char **argv, int first)
{
	if (first == argc)
		return 0;
	cmd_error(cmd, "unexpected argument '%s'", argv[first]);
	return 2;
}
