/*
 * The kernel CPU list format ("0-3,8,10-11"); see cpulist.h.
 */
#include "harness/util/cpulist.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>

static int number(const char **p, long *out)
{
	char *end;
	if (!isdigit((unsigned char)**p))
		return -1;
	*out = strtol(*p, &end, 10);
	if (*out == LONG_MAX)
		return -1;
	*p = end;
	return 0;
}

int cpulist_ranges(const char *s, int (*fn)(long a, long b, void *ctx), void *ctx)
{
	const char *p = s;
	while (isspace((unsigned char)*p))
		p++;
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
		int rc = fn(a, b, ctx);
		if (rc)
			return rc;
		if (*p == ',')
			p++;
		else if (*p && !isspace((unsigned char)*p))
			return -1;
	}
	while (isspace((unsigned char)*p))
		p++;
	return *p ? -1 : 0;
}

struct set_ctx {
	unsigned char *set;
	int max, n;
};

static int set_range(long a, long b, void *vctx)
{
	struct set_ctx *c = vctx;
	if (b >= c->max)
		return -1;
	for (long i = a; i <= b; i++)
		if (!c->set[i]) {
			c->set[i] = 1;
			c->n++;
		}
	return 0;
}

int cpulist_parse(const char *s, unsigned char *set, int max)
{
	struct set_ctx c = { set, max, 0 };
	return cpulist_ranges(s, set_range, &c) ? -1 : c.n;
}

static int count_range(long a, long b, void *vn)
{
	long *n = vn;
	if (b - a + 1 > INT_MAX - *n)
		return -1;
	*n += b - a + 1;
	return 0;
}

int cpulist_count(const char *s)
{
	long n = 0;
	return cpulist_ranges(s, count_range, &n) ? -1 : (int)n;
}

static int first_range(long a, long b, void *vfirst)
{
	*(long *)vfirst = a;
	return 1; /* stop at the first range */
}

int cpulist_first(const char *s)
{
	long first = -1;
	int rc = cpulist_ranges(s, first_range, &first);
	return rc == 1 && first <= INT_MAX ? (int)first : -1;
}
