/*
 * The one setup of the handler that asks a program to stop: SIGINT, SIGTERM
 * and SIGHUP go to `handler` (no SA_RESTART: a blocking call returns EINTR,
 * so the loop that waits sees the request), and with SIGSTOP_IGNORE_PIPE a
 * write to a closed pipe or socket fails with EPIPE instead of killing the
 * program. Used by the agent, a session's controller and the native
 * workloads that clean up after themselves (sl-netpair, sl-pgbench).
 * sigaction cannot fail for these signals, so nothing is returned.
 */
#ifndef SL_UTIL_SIGSTOP_H
#define SL_UTIL_SIGSTOP_H

#define SIGSTOP_IGNORE_PIPE 1u

void sigstop_catch(void (*handler)(int), unsigned flags);

#endif
