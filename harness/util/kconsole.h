/*
 * What of a kernel console goes into a lost run's or a failed boot's error:
 * the last lines, and before them the first kernel report of the text (a
 * soft lockup, an RCU stall, a hung task, a BUG, an oops, a WARNING, a
 * panic) when the tail no longer shows its first line. A stall report's
 * header and its stack come out dozens of lines apart, so a tail alone
 * keeps a backtrace without saying what it is. Pure, so it is unit tested.
 */
#ifndef SL_KCONSOLE_H
#define SL_KCONSOLE_H

#include <stddef.h>
#include "harness/util/strbuf.h"

/* the offset in text[0..len) of the first line that starts a kernel report
 * (after an optional "[ 12.345678] " timestamp), or -1 when there is none */
long kconsole_first_report(const char *text, size_t len);

/* Append to out: when the first kernel report starts before the last
 * tail_lines lines, "--- first kernel report ---\n" and up to report_lines
 * of it, then "--- last lines ---\n"; then the last tail_lines lines.
 * Nothing is appended for an empty text. */
void kconsole_excerpt(const char *text, size_t len, int tail_lines, int report_lines,
		      struct strbuf *out);

#endif
