/*
 * Fault points (fault.h): SIGKILL of this process where SCHEDLAB_FAULT
 * names the point.
 */
#include "harness/util/fault.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

void fault_point(const char *point)
{
	const char *f = getenv("SCHEDLAB_FAULT");
	if (f && point && !strcmp(f, point))
		raise(SIGKILL);
}
