/*
 * libFuzzer target: the output-path writer (harness/util/atomicfile.c,
 * struct outfile) behind `report --out` and `export --out`. The input
 * builds a small scratch folder (regular files of several modes, folders,
 * FIFOs, symlinks to each other, dangling ones and loops) and then names
 * one path in it, which is written; afterwards the invariants must hold:
 * a FIFO or folder is still what it was (refused, never replaced and never
 * blocked on: the FIFO has no reader), a symlink is still a symlink, no
 * temporary file is left, and a file that was written holds the bytes.
 * The scratch folder is made anew for every input under TMPDIR.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/util/atomicfile.h"

static char root[256];

static void wipe(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char p[512];
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		struct stat st;
		if (!lstat(p, &st) && S_ISDIR(st.st_mode)) {
			wipe(p);
			rmdir(p);
		} else {
			unlink(p);
		}
	}
	if (d)
		closedir(d);
}

static int leftovers(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)))
		n += e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!root[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(root, sizeof(root), "%s/sl-fuzz-outfile-XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(root))
			abort();
	}
	wipe(root);
	/* names n0..n7; each input byte pair makes one of them */
	static const char *const names[] = { "n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7" };
	size_t i = 0;
	for (; i + 1 < size && i < 16; i += 2) {
		char p[512];
		const char *nm = names[data[i] & 7];
		snprintf(p, sizeof(p), "%s/%s", root, nm);
		const char *other = names[(data[i + 1] >> 3) & 7];
		struct stat seen;
		if (!lstat(p, &seen))
			continue;   /* made already: an fopen of a FIFO made before would block */
		switch (data[i + 1] & 7) {
		case 0: {
			/* made here, never followed: a chmod by name once went
			   through a symlink to /dev/null and left it 0600 */
			int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
			if (fd >= 0) {
				if (write(fd, "old", 3) != 3)
					abort();
				fchmod(fd, 0600 | ((data[i] >> 3) & 0066));
				close(fd);
			}
			break;
		}
		case 1: mkdir(p, 0755); break;
		case 2: mkfifo(p, 0644); break;
		case 3: symlink(other, p); break;                 /* relative, maybe a loop */
		case 4: {
			char abs[512];
			snprintf(abs, sizeof(abs), "%s/%s", root, other);
			symlink(abs, p);
			break;
		}
		case 5: symlink("nowhere/deeper", p); break;      /* dangling in a missing folder */
		case 6: symlink("/dev/null", p); break;
		default: break;
		}
	}
	const char *target = names[i < size ? data[i] & 7 : 0];
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, target);
	struct stat before, lbefore;
	int had = !stat(path, &before);
	int lhad = !lstat(path, &lbefore);
	const char *body = "<html>page</html>";
	struct strbuf err = STRBUF_INIT;
	int rc = outfile_write(path, body, strlen(body), &err);
	struct stat after, lafter;
	if (had && (S_ISFIFO(before.st_mode) || S_ISDIR(before.st_mode))) {
		/* refused, untouched */
		if (!rc || stat(path, &after) || ((after.st_mode ^ before.st_mode) & S_IFMT))
			abort();
	}
	if (lhad && S_ISLNK(lbefore.st_mode) && (lstat(path, &lafter) || !S_ISLNK(lafter.st_mode)))
		abort();   /* a symlink is followed, never replaced */
	if (!rc && (!had || S_ISREG(before.st_mode))) {
		char buf[64] = "";
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = '\0';
		if (strcmp(buf, body))
			abort();
		if (had && !stat(path, &after) && (after.st_mode & 07777) != (before.st_mode & 07777))
			abort();   /* the mode is kept */
	}
	if (rc && !err.len)
		abort();   /* a refusal says why */
	if (leftovers(root))
		abort();   /* no temporary file left beside it */
	strbuf_release(&err);
	return 0;
}
