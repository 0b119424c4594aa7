/*
 * pgbench's per-transaction log (`pgbench --log`), read into a latency
 * histogram, kept pure (no files, no processes) so that it is unit tested on
 * captured logs (tests/data/pgbench-15/); bin/sl-pgbench is its user.
 *
 * One line per transaction (PostgreSQL 15 docs, "Per-Transaction Logging"):
 *   client_id transaction_no time script_no time_epoch time_us [schedule_lag] [retries]
 * time is the transaction's latency in microseconds, or the word "failed"
 * (a serialization or deadlock failure that was not retried, PG 15) or
 * "skipped" (--rate with --latency-limit). Latencies go into a HIST_LOGLIN
 * histogram of microseconds (sub_bits PGLOG_HIST_SUB: at most 0.8% relative
 * error, up to 2^PGLOG_HIST_POW us, about 4.8 hours).
 */
#ifndef SL_PGBENCH_LOG_H
#define SL_PGBENCH_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/hist.h"

#define PGLOG_HIST_SUB 7
#define PGLOG_HIST_POW 34

struct pglog_stats {
	uint64_t done;       /* transactions with a latency (into the histogram) */
	uint64_t failed;     /* "failed" */
	uint64_t skipped;    /* "skipped" */
	uint64_t bad_lines;  /* lines that are none of these (counted, not fatal) */
	uint64_t first_bad;  /* 1-based line number of the first of them (0: none) */
};

/* a HIST_LOGLIN histogram of the geometry above; -1 on allocation failure */
int pglog_hist_init(struct hist *h);
/*
 * Add the complete lines of text[0..len) to h and st; returns how many bytes
 * were consumed (a last line without '\n' is left for the next call unless
 * `final`, when it is read too). `lineno` counts lines across calls.
 */
size_t pglog_feed(const char *text, size_t len, int final, struct hist *h, struct pglog_stats *st,
		  uint64_t *lineno);

#endif
