/*
 * The commands' shared options layer: one table per command describes its
 * options (name, kind, where the value goes, allowed range), and
 * cli_parse() runs getopt_long over it, checks every value and prints the
 * error that names the option and what would be valid. `--help`/`-h` is
 * implied for every command. The kinds that several commands share live
 * here once: --db, --format, --since (a date), --threshold (a percentage),
 * --p (a probability), --window (an integer range), --centre (a choice).
 *
 *   static const char usage[] = "usage: schedlab sessions [--db FILE] ...";
 *   static struct { enum out_format fmt; } args;   (from parse to the work)
 *
 *   int cmd_sessions_parse(int argc, char **argv, struct cmd_ctx *c)
 *   {
 *           args.fmt = FMT_TABLE;
 *           const struct cli_opt opts[] = {
 *                   CLI_DB(&c->dbpath), CLI_FORMAT(&args.fmt, 1), CLI_END,
 *           };
 *           int first, rc = cli_parse("sessions", usage, opts, argc, argv, &first);
 *           if (rc != CLI_OK)
 *                   return cli_parse_exit(rc);    (--help: 0; refused: 2)
 *           if (cli_no_args("sessions", argc, argv, first))
 *                   return 2;
 *           return CMD_GO;                        (main opens c->db now)
 *   }
 *
 *   int cmd_sessions(struct cmd_ctx *c)          (c->db open; main closes it)
 *   ...
 *
 * --db goes into c->dbpath, where main looks when it opens the database
 * (cmd.h): a local variable there would silently ignore --db. What the
 * work needs of the options goes into the command's file-static struct:
 * parse's locals are gone when the work begins.
 *
 * Messages go to stderr as "schedlab CMD: ..." (cmd_error); nothing here
 * exits.
 */
#ifndef SL_CLI_OPTIONS_H
#define SL_CLI_OPTIONS_H

#include <stddef.h>

#include "harness/util/tag.h"
#include "harness/results/format.h"

enum cli_kind {
	CLI_STRING,   /* const char **dst = the argument */
	CLI_FLAG,     /* int *dst = 1, no argument */
	CLI_FORMAT,   /* enum out_format *dst; .max = the FMT_ALLOW bits */
	CLI_DATE,     /* const char **dst; YYYY-MM-DD[THH:MM:SS] */
	CLI_PERCENT,  /* double *dst in (0, 1000): a noise threshold in % */
	CLI_PROB,     /* double *dst in (0, 1) */
	CLI_SIZE,     /* size_t *dst, an integer in [.min, .max] */
	CLI_CHOICE,   /* int *dst = index of the argument in .choices */
	CLI_CALL,     /* .fn(ctx, arg, argc, argv, &optind): 0 ok, else the exit code */
};

struct cli_opt {
	const char *name; /* long option, without "--"; NULL ends the table */
	enum cli_kind kind;
	void *dst;
	long min, max;
	const char *const *choices; /* CLI_CHOICE: NULL-terminated */
	int (*fn)(void *ctx, const char *arg, int argc, char **argv, int *optind);
	void *ctx;
	int takes_arg;              /* CLI_CALL: 1 when it takes an argument */
};

#define CLI_DB(p)            { "db", CLI_STRING, (p), 0, 0, NULL, NULL, NULL, 1 }
/* `which`: the formats the command writes, FMT_ALLOW(FMT_TABLE) | ... */
#define CLI_FORMAT_OF(p, which) { "format", CLI_FORMAT, (p), 0, (long)(which), NULL, NULL, NULL, 1 }
/* table|json, and csv too when csv is 1 */
#define CLI_FORMAT(p, csv) \
	CLI_FORMAT_OF(p, FMT_ALLOW(FMT_TABLE) | FMT_ALLOW(FMT_JSON) | ((csv) ? FMT_ALLOW(FMT_CSV) : 0))
#define CLI_STR(n, p)        { (n), CLI_STRING, (p), 0, 0, NULL, NULL, NULL, 1 }
#define CLI_BOOL(n, p)       { (n), CLI_FLAG, (p), 0, 0, NULL, NULL, NULL, 0 }
#define CLI_SINCE(p)         { "since", CLI_DATE, (p), 0, 0, NULL, NULL, NULL, 1 }
#define CLI_PERCENT_OF(n, p) { (n), CLI_PERCENT, (p), 0, 0, NULL, NULL, NULL, 1 }
#define CLI_PROB_OF(n, p)    { (n), CLI_PROB, (p), 0, 0, NULL, NULL, NULL, 1 }
#define CLI_THRESHOLD(p)     CLI_PERCENT_OF("threshold", (p))
#define CLI_PVALUE(p)        CLI_PROB_OF("p", (p))
#define CLI_RANGE(n, p, lo, hi) { (n), CLI_SIZE, (p), (lo), (hi), NULL, NULL, NULL, 1 }
#define CLI_ONE_OF(n, p, l)  { (n), CLI_CHOICE, (p), 0, 0, (l), NULL, NULL, 1 }
#define CLI_FN(n, f, c, arg) { (n), CLI_CALL, NULL, 0, 0, NULL, (f), (c), (arg) }
#define CLI_END              { NULL, 0, NULL, 0, 0, NULL, NULL, NULL, 0 }

/* cli_parse results besides an exit code (2 = bad usage, message printed) */
#define CLI_OK   0
#define CLI_HELP (-1) /* --help: the usage text is on stdout */

/*
 * Parse argv[1..] (argv[0] is the command's name, as getopt reports it)
 * against `opts`. On CLI_OK the positional arguments start at argv[*first].
 * On a bad value: the message naming the option and what is valid, and 2;
 * an unknown option: getopt's message, the usage on stderr, and 2.
 */
int cli_parse(const char *cmd, const char *usage, const struct cli_opt *opts, int argc,
	      char **argv, int *first);
/* the exit code for a cli_parse result that is not CLI_OK */
int cli_parse_exit(int rc);
/* no positional arguments allowed: 0, else "unexpected argument 'X'" and 2 */
int cli_no_args(const char *cmd, int argc, char **argv, int first);
/* a session tag (run --tag, nightly --tag): 1 to 64 letters, digits, '.',
 * '_' or '-', not "." or "..": it becomes a file name (nightly's report
 * TAG.html in --out-dir), so never a path, a newline or a control character */
#define CLI_TAG_MAX TAG_MAX
int cli_valid_tag(const char *t);

#endif
