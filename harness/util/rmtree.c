/*
 * rm_tree: a folder and everything below it, with nftw (rmtree.h).
 */
#include "harness/util/rmtree.h"

#include <ftw.h>
#include <stdio.h>

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(p);
	return 0;
}

void rm_tree(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
