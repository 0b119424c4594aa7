/*
 * fmt_num (numfmt.h): the one way a number is printed for a person.
 */
#include "harness/util/numfmt.h"

#include <math.h>
#include <stdio.h>

void fmt_num(char *buf, size_t n, double v)
{
	if (!isfinite(v))
		snprintf(buf, n, "-");
	else if (fabs(v) >= 1e4 && fabs(v) < 1e12)
		snprintf(buf, n, "%.0f", v);
	else
		snprintf(buf, n, "%.4g", v);
}
