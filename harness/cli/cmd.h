/*
 * Subcommands. Each lives in harness/cli/cmd_<name>.c and is listed in
 * commands[] in harness/cli/main.c with its setup flags, in two phases:
 *
 *   int cmd_<name>_parse(int argc, char **argv, struct cmd_ctx *c)
 *           the options (cli_parse, which answers --help) and every check
 *           of them, stored in the command's own file-static struct;
 *           returns CMD_GO to go on, or the exit code (--help 0, bad
 *           usage 2, the message printed);
 *   int cmd_<name>(struct cmd_ctx *c)
 *           the work, with c->db open as the flags ask; its exit code.
 *
 * A command without a database (plan, sysinfo, agent) is its parse alone:
 * it works there and returns its exit code, never CMD_GO. Exit codes:
 * 0 success, 1 a finding (failed runs, a regression), 2 bad input or usage
 * (or a setup error), 130 interrupted (run, bisect, nightly, alerts bisect);
 * a command may add its own above 2, named in its usage text (check
 * --require-decided 4; nightly 3 runs failed, 4 its hook failed).
 *
 * The flags are the preconditions main prepares between the two phases, as
 * git.c's RUN_SETUP: CMD_DB_RO or CMD_DB_RW say the command works on the
 * database of --db (c->dbpath, DEFAULT_DB until its CLI_DB(&c->dbpath)
 * option says otherwise). main opens it once parse has said CMD_GO, so
 * that `--help` and a command refused for its options open and create
 * nothing, and closes it after the work; no command opens it (cmd_db is
 * main's: check-layers refuses a call in cmd_*.c). What parse may say
 * about it, in c:
 *   flags        narrowed to CMD_DB_RO for a verb that only reads (alerts
 *                list), or chosen (serve: read-write only with a token);
 *   db_existing  the file must exist (read-write is never a new file):
 *                work that continues what is stored (--resume), or a
 *                command that never makes one (alerts, nightly, serve);
 *   before_db    a step that must come before the database is opened for
 *                the work, with c->db the store read-only when its file
 *                exists and is not empty (else NULL), so that a bad one is
 *                refused first and nothing is written or migrated: run's
 *                kernel builds and preflight (a new file only once they
 *                pass), nightly's run (its child makes the file), alerts'
 *                checks of a move; it returns CMD_GO or the exit code.
 *
 * Checklist for a new command:
 *   1. harness/cli/cmd_<name>.c with a usage text, its options as a
 *      `struct cli_opt` table run through cli_parse() (options.h), which
 *      answers `--help`; CLI_DB(&c->dbpath) if it has a database, and then
 *      a parse and a work function as above (the parsed options in a
 *      file-static struct between them);
 *   2. declare it here and add it to commands[] in main.c with its flags;
 *   3. document it in README.md and docs/, and add a test under tests/e2e/;
 *      one with a database goes into t0110's list too (--help and a refused
 *      option make no file).
 */
#ifndef SL_CMD_H
#define SL_CMD_H

#include <stdio.h>

#include "harness/results/format.h"

struct db;

/* the setup flags of commands[] */
enum {
	CMD_DB_RO = 1 << 0, /* reads the database of --db: opened read-only */
	CMD_DB_RW = 1 << 1, /* writes it: created when absent (unless db_existing) */
};

/* parse's answer to go on: no exit code, nor a cli_parse result */
#define CMD_GO (-2)

/* what main hands to a command */
struct cmd_ctx {
	const char *name;   /* the command, for messages */
	unsigned flags;     /* its CMD_* flags (parse may narrow them) */
	const char *dbpath; /* --db: DEFAULT_DB, or the command's CLI_DB option */
	int db_existing;    /* set by parse: never a new file */
	int (*before_db)(struct cmd_ctx *c); /* set by parse, see above */
	struct db *db;      /* opened and closed by main */
};

/* main's alone: the command's database opened into c->db, read-only when
 * `ro` or the flags say CMD_DB_RO, else read-write (created when absent
 * unless c->db_existing); NULL after printing why, naming the file */
struct db *cmd_db(struct cmd_ctx *c, int ro);

int cmd_plan(int argc, char **argv, struct cmd_ctx *c);
int cmd_sysinfo(int argc, char **argv, struct cmd_ctx *c);
int cmd_agent(int argc, char **argv, struct cmd_ctx *c);

int cmd_run_parse(int argc, char **argv, struct cmd_ctx *c);
int cmd_run(struct cmd_ctx *c);
int cmd_sessions_parse(int argc, char **argv, struct cmd_ctx *c);
int cmd_sessions(struct cmd_ctx *c);
int cmd_query_parse(int argc, char **argv, struct cmd_ctx *c);
int cmd_query(struct cmd_ctx *c);
int cmd_compare_parse(int argc, char **argv, struct cmd_ctx *c);
int cmd_compare(struct cmd_ctx *c);
int cmd_trend_parse(int argc, char **argv, struct cmd_ctx *c);
int cmd_trend(struct cmd_ctx *c);
int cmd_check_parse(int argc, char **argv, struct cmd_ctx *c);
int cmd_check(struct cmd_ctx *c);
int cmd_report_parse(int argc, char **argv, struct cmd_ctx *c);
int cmd_report(struct cmd_ctx *c);
int cmd_export_parse(int argc, char **argv, struct cmd_ctx *c);
int cmd_export(struct cmd_ctx *c);
int cmd_bisect_parse(int argc, char **argv, struct cmd_ctx *c);
int cmd_bisect(struct cmd_ctx *c);
int cmd_nightly_parse(int argc, char **argv, struct cmd_ctx *c);
int cmd_nightly(struct cmd_ctx *c);
int cmd_alerts_parse(int argc, char **argv, struct cmd_ctx *c);
int cmd_alerts(struct cmd_ctx *c);
int cmd_serve_parse(int argc, char **argv, struct cmd_ctx *c);
int cmd_serve(struct cmd_ctx *c);

/* shared helpers (harness/cli/options.c) */
#define DEFAULT_DB "schedlab.db"
/* parse "table|csv|json"; -1 on error (message printed) */
/* FMT_ALLOW bits of the formats a command writes */
#define FMT_ALLOW(f) (1u << (f))
int parse_format(const char *cmd, const char *s, enum out_format *out, unsigned allowed);
/* print "schedlab CMD: msg" to stderr */
void cmd_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* compare and check: the comparison of selectors a and b in the command's
 * database (c->db), its warnings printed; 0, or 2 after printing why */
struct cmp_options;
struct compare_job;
int cmd_compare_job(struct cmd_ctx *c, const char *a, const char *b,
		    const struct cmp_options *o, int hists, struct compare_job *job);
/* check stdout for write errors before exit; returns rc or 2 */
int cmd_finish(int rc);

#endif
