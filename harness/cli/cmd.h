/*
 * Subcommands. Each lives in harness/cli/cmd_<name>.c as
 * `int cmd_<name>(int argc, char **argv)` and is listed in commands[] in
 * harness/cli/main.c. Exit codes: 0 success, 1 a finding (failed runs, a
 * regression), 2 bad input or usage.
 *
 * Checklist for a new command:
 *   1. harness/cmd_<name>.c with a usage text and `--help` handling
 *      (cmd_usage_check() does the common part);
 *   2. declare it here and add it to commands[] in main.c;
 *   3. document it in README.md and docs/, and add a test under tests/e2e/.
 */
#ifndef SL_CMD_H
#define SL_CMD_H

#include <stdio.h>

#include "harness/results/format.h"

int cmd_run(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_sysinfo(int argc, char **argv);
int cmd_sessions(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_trend(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_bisect(int argc, char **argv);
int cmd_nightly(int argc, char **argv);
int cmd_alerts(int argc, char **argv);

/* shared helpers (harness/cli/options.c) */
#define DEFAULT_DB "schedlab.db"
/* parse "table|csv|json"; -1 on error (message printed) */
/* FMT_ALLOW bits of the formats a command writes */
#define FMT_ALLOW(f) (1u << (f))
int parse_format(const char *cmd, const char *s, enum out_format *out, unsigned allowed);
/* print "schedlab CMD: msg" to stderr */
void cmd_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* open a database read-only for command `cmd`; NULL after printing why */
struct db *cmd_open_db_readonly(const char *cmd, const char *path);
/* compare and check: open the database read-only, run the comparison of
 * selectors a and b, print its warnings; 0, or 2 after printing why */
struct cmp_options;
struct compare_job;
int cmd_compare_job(const char *cmd, const char *dbpath, const char *a, const char *b,
		    const struct cmp_options *o, int hists, struct compare_job *job);
/* check stdout for write errors before exit; returns rc or 2 */
int cmd_finish(int rc);

#endif
