/*
 * SIGINT, SIGTERM and SIGHUP to one handler (sigstop.h).
 */
#include "harness/util/sigstop.h"

#include <signal.h>
#include <string.h>

void sigstop_catch(void (*handler)(int), unsigned flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (flags & SIGSTOP_IGNORE_PIPE)
		signal(SIGPIPE, SIG_IGN);
}
