/*
 * Fault points (fault.h): SIGKILL of this process where SCHEDLAB_FAULT
 * names the point, or a delay where it names a delay point.
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

unsigned fault_delay_ms(const char *point)
{
	const char *f = getenv("SCHEDLAB_FAULT"), *ms = getenv("SCHEDLAB_FAULT_MS");
	if (!f || !point || strcmp(f, point))
		return 0;
	long v = ms ? strtol(ms, NULL, 10) : 20000;
	return v > 0 && v < 3600000 ? (unsigned)v : 20000;
}
