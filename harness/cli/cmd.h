/*
 * Subcommands. Each lives in harness/cli/cmd_<name>.c as
 * `int cmd_<name>(int argc, char **argv, struct cmd_ctx *c)` and is listed
 * in commands[] in harness/cli/main.c with its setup flags. Exit codes:
 * 0 success, 1 a finding (failed runs, a regression), 2 bad input or usage.
 *
 * The flags are the preconditions main prepares once, as git.c's RUN_SETUP:
 * CMD_DB_RO or CMD_DB_RW say the command works on the database of --db
 * (c->dbpath, DEFAULT_DB until its CLI_DB(&c->dbpath) option says
 * otherwise); the command asks for it with cmd_db(c, existing) once its
 * options are checked, so that
 * `--help` and a command refused for its options open nothing, and main
 * closes it after the command returns.
 *
 * Checklist for a new command:
 *   1. harness/cli/cmd_<name>.c with a usage text, its options as a
 *      `struct cli_opt` table run through cli_parse() (options.h), which
 *      answers `--help`; CLI_DB(&c->dbpath) if it has a database;
 *   2. declare it here and add it to commands[] in main.c with its flags;
 *   3. document it in README.md and docs/, and add a test under tests/e2e/.
 */
#ifndef SL_CMD_H
#define SL_CMD_H

#include <stdio.h>

#include "harness/results/format.h"

struct db;

/* the setup flags of commands[] */
enum {
	CMD_DB_RO = 1 << 0, /* reads the database of --db: opened read-only */
	CMD_DB_RW = 1 << 1, /* writes it: created when absent (see cmd_db) */
};

/* what main hands to a command */
struct cmd_ctx {
	const char *name;   /* the command, for messages */
	unsigned flags;     /* its CMD_* flags */
	const char *dbpath; /* --db: DEFAULT_DB, or the command's CLI_DB option */
	struct db *db;      /* opened by cmd_db, closed by main */
};

/* the command's database, opened on the first call by its flag (read-only
 * for CMD_DB_RO; read-write for CMD_DB_RW, created when absent unless
 * `existing`: work that continues what is stored, such as --resume, never
 * makes a new file); NULL after printing why (the command exits 2) */
struct db *cmd_db(struct cmd_ctx *c, int existing);

int cmd_run(int argc, char **argv, struct cmd_ctx *c);
int cmd_plan(int argc, char **argv, struct cmd_ctx *c);
int cmd_sysinfo(int argc, char **argv, struct cmd_ctx *c);
int cmd_sessions(int argc, char **argv, struct cmd_ctx *c);
int cmd_query(int argc, char **argv, struct cmd_ctx *c);
int cmd_agent(int argc, char **argv, struct cmd_ctx *c);
int cmd_compare(int argc, char **argv, struct cmd_ctx *c);
int cmd_trend(int argc, char **argv, struct cmd_ctx *c);
int cmd_check(int argc, char **argv, struct cmd_ctx *c);
int cmd_report(int argc, char **argv, struct cmd_ctx *c);
int cmd_export(int argc, char **argv, struct cmd_ctx *c);
int cmd_bisect(int argc, char **argv, struct cmd_ctx *c);
int cmd_nightly(int argc, char **argv, struct cmd_ctx *c);
int cmd_alerts(int argc, char **argv, struct cmd_ctx *c);
int cmd_serve(int argc, char **argv, struct cmd_ctx *c);

/* shared helpers (harness/cli/options.c) */
#define DEFAULT_DB "schedlab.db"
/* parse "table|csv|json"; -1 on error (message printed) */
/* FMT_ALLOW bits of the formats a command writes */
#define FMT_ALLOW(f) (1u << (f))
int parse_format(const char *cmd, const char *s, enum out_format *out, unsigned allowed);
/* print "schedlab CMD: msg" to stderr */
void cmd_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* compare and check: the comparison of selectors a and b in the command's
 * database, its warnings printed; 0, or 2 after printing why */
struct cmp_options;
struct compare_job;
int cmd_compare_job(struct cmd_ctx *c, const char *a, const char *b,
		    const struct cmp_options *o, int hists, struct compare_job *job);
/* check stdout for write errors before exit; returns rc or 2 */
int cmd_finish(int rc);

#endif
