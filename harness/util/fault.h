/*
 * Fault points for the tests (docs/testing.md "Fault points"): a named
 * place in the code where a crash is worth testing (a commit written and
 * the work after it not done yet). When the environment's SCHEDLAB_FAULT
 * names the point, the process kills itself there with SIGKILL, as a
 * power cut, the OOM killer or `kill -9` would; otherwise nothing
 * happens. The points: nightly-judged (harness/orchestrate/robot_act.c,
 * the judgement and its hook calls committed, nothing after).
 */
#ifndef SL_UTIL_FAULT_H
#define SL_UTIL_FAULT_H

void fault_point(const char *point);

#endif
