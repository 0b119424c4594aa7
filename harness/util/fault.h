/*
 * Fault points for the tests (docs/testing.md "Fault points"): a named
 * place in the code where a crash is worth testing (a commit written and
 * the work after it not done yet). When the environment's SCHEDLAB_FAULT
 * names the point, the process kills itself there with SIGKILL, as a
 * power cut, the OOM killer or `kill -9` would; otherwise nothing
 * happens. The points: nightly-judged (harness/orchestrate/robot_act.c,
 * the judgement and its hook calls committed, nothing after).
 *
 * A delay point makes a step slow instead, reproducibly: fault_delay_ms
 * is SCHEDLAB_FAULT_MS (default 20000) when SCHEDLAB_FAULT names the
 * point, else 0. The points: serve-slow-page (harness/serve/serve.c: a
 * heavy page, /report, /compare, /trend, /bisect/N, waits that long before
 * it is built, or until its time budget stops it).
 */
#ifndef SL_UTIL_FAULT_H
#define SL_UTIL_FAULT_H

void fault_point(const char *point);
unsigned fault_delay_ms(const char *point);

#endif
