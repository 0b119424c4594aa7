/*
 * The kernel CPU list format ("0-3,8,10-11"); see cpulist.h.
 */
#include "harness/util/cpulist.h"

#include <ctype.h>
#include <stdlib.h>

static int number(const char **p, long *out)
{
	char *end;
	if (!isdigit((unsigned char)**p))
		return -1;
	*out = strtol(*p, &end, 10);
	*p = end;
	return 0;
}

int cpulist_parse(const char *s, unsigned char *set, int max)
{
	const char *p = s;
	int n = 0;
	while (*p && !isspace((unsigned char)*p)) {
		long a, b;
		if (number(&p, &a))
			return -1;
		b = a;
		if (*p == '-') {
			p++;
			if (number(&p, &b) || b < a)
				return -1;
		}
		if (a < 0 || b >= max)
			return -1;
		for (long c = a; c <= b; c++)
			if (!set[c]) {
				set[c] = 1;
				n++;
			}
		if (*p == ',')
			p++;
		else if (*p && !isspace((unsigned char)*p))
			return -1;
	}
	while (isspace((unsigned char)*p))
		p++;
	return *p ? -1 : n;
}

int cpulist_first(const char *s)
{
	long a;
	const char *p = s;
	while (isspace((unsigned char)*p))
		p++;
	if (number(&p, &a))
		return -1;
	return (int)a;
}
