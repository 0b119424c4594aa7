/*
 * Unit tests of the one CPU-list parser (harness/util/cpulist.c): the
 * ranges, the bitmap used by the native workloads, the count sysinfo uses
 * for ncpus, and the malformed lists each of them must refuse.
 */
#include "harness/util/cpulist.h"
#include "tests/unit/tap.h"

TEST(parse_into_set)
{
	unsigned char set[16] = { 0 };
	CHECK(cpulist_parse("0-3,8,10-11\n", set, 16) == 7);
	CHECK(set[0] && set[3] && !set[4] && set[8] && set[11] && !set[12]);
	unsigned char s2[4] = { 0 };
	CHECK(cpulist_parse("0-4", s2, 4) == -1);
	CHECK(cpulist_parse("3-1", s2, 4) == -1);
	CHECK(cpulist_parse("1,,2", s2, 4) == -1);
	CHECK(cpulist_parse("x", s2, 4) == -1);
	CHECK(cpulist_parse("", s2, 4) == 0);
	unsigned char s3[8] = { 0 };
	CHECK(cpulist_parse("0-3,2-5", s3, 8) == 6); /* overlap counted once */
}

TEST(count)
{
	CHECK(cpulist_count("0-3,8") == 5);
	CHECK(cpulist_count("0") == 1);
	CHECK(cpulist_count("0-1\n") == 2);
	CHECK(cpulist_count("0-3,8-11") == 8);
	CHECK(cpulist_count("5,3,1") == 3);
	CHECK(cpulist_count("") == 0);
	CHECK(cpulist_count("3-1") == -1);
	CHECK(cpulist_count("a") == -1);
	CHECK(cpulist_count("1,,2") == -1);
	CHECK(cpulist_count("1 2") == -1);
	CHECK(cpulist_count("0-") == -1);
	CHECK(cpulist_count("-1") == -1);
	CHECK(cpulist_count("0-99999999999999999999") == -1);
	CHECK(cpulist_count("0-2147483646,0-2147483646") == -1); /* int overflow */
}

TEST(first)
{
	CHECK(cpulist_first("4-7\n") == 4);
	CHECK(cpulist_first(" 2,0") == 2);
	CHECK(cpulist_first("") == -1);
	CHECK(cpulist_first("x") == -1);
}

static int collect(long a, long b, void *ctx)
{
	long *v = ctx;
	v[v[0] * 2 + 1] = a;
	v[v[0] * 2 + 2] = b;
	v[0]++;
	return v[0] >= 3 ? 7 : 0;
}

TEST(ranges_in_order_and_early_stop)
{
	long v[9] = { 0 };
	CHECK(cpulist_ranges("1-2,5,9-10,12", collect, v) == 7);
	CHECK(v[0] == 3 && v[1] == 1 && v[2] == 2 && v[3] == 5 && v[4] == 5 && v[5] == 9);
}

int main(void)
{
	RUN(parse_into_set);
	RUN(count);
	RUN(first);
	RUN(ranges_in_order_and_early_stop);
	return tap_done();
}
