/*
 * fmt_num (numfmt.h): the one way a number is printed for a person; and
 * utc_now, the one way a moment is.
 */
#include "harness/util/numfmt.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "harness/util/strbuf.h"

void fmt_num(char *buf, size_t n, double v)
{
	if (!isfinite(v))
		snprintf(buf, n, "-");
	else if (fabs(v) >= 1e4 && fabs(v) < 1e12)
		snprintf(buf, n, "%.0f", v);
	else
		snprintf(buf, n, "%.4g", v);
}

char *utc_now(void)
{
	char buf[32];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return xstrdup(buf);
}

int date_arg_valid(const char *s)
{
	for (int i = 0; i < 10; i++) {
		if (i == 4 || i == 7) {
			if (s[i] != '-')
				return 0;
		} else if (!isdigit((unsigned char)s[i])) {
			return 0;
		}
	}
	return s[10] == 0 || s[10] == 'T' || s[10] == ' ';
}
