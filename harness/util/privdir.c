/*
 * A folder only this user controls (privdir.h): held by descriptor and
 * looked at again at each use, or a path checked from / down for a child
 * that opens it again.
 */
#include "harness/util/privdir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* what is wrong with a folder of these attributes, in err; 0 when nothing */
static int judge_dir(const struct stat *st, const char *path, mode_t forbid, struct strbuf *err)
{
	if (!S_ISDIR(st->st_mode)) {
		strbuf_addf(err, "%s: not a folder (a link is not followed)", path);
		return -1;
	}
	if (st->st_uid != geteuid()) {
		strbuf_addf(err, "%s: owned by uid %u, not by this user (uid %u): another user "
				 "could plant files there; use a folder of your own",
			    path, (unsigned)st->st_uid, (unsigned)geteuid());
		return -1;
	}
	if (st->st_mode & forbid) {
		strbuf_addf(err, "%s: mode %04o lets other users %s it; chmod %s it", path,
			    (unsigned)(st->st_mode & 07777),
			    forbid & 044 ? "into" : "write into",
			    forbid & 044 ? "700" : "go-w");
		return -1;
	}
	if (st->st_nlink == 0) {
		strbuf_addf(err, "%s: the folder was removed", path);
		return -1;
	}
	return 0;
}

int privdir_open(const char *path, int create, mode_t forbid, int *dfd, struct strbuf *err)
{
	*dfd = -1;
	if (create && mkdir(path, 0700) && errno != EEXIST) {
		strbuf_addf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT && !create)
			return 1;
		if (errno == ELOOP || errno == ENOTDIR)
			strbuf_addf(err, "%s: not a folder (a link is not followed)", path);
		else
			strbuf_addf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (privdir_check(fd, path, forbid, err)) {
		close(fd);
		return -1;
	}
	*dfd = fd;
	return 0;
}

int privdir_check(int dfd, const char *path, mode_t forbid, struct strbuf *err)
{
	struct stat st;
	if (fstat(dfd, &st)) {
		strbuf_addf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	return judge_dir(&st, path, forbid, err);
}

int privdir_openat(int dfd, const char *dirpath, const char *name, int flags, mode_t mode,
		   struct strbuf *err)
{
	int fd = openat(dfd, name, flags | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | O_NONBLOCK, mode);
	if (fd < 0) {
		int e = errno;
		strbuf_addf(err, "%s/%s: %s", dirpath, name,
			    e == ELOOP ? "a symlink, not followed" : strerror(e));
		errno = e;
		return -1;
	}
	struct stat st;
	const char *why = NULL;
	if (fstat(fd, &st))
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (st.st_uid != geteuid())
		why = "not written by this user";
	else if (st.st_mode & 022)
		why = "other users may write it";
	if (why) {
		strbuf_addf(err, "%s/%s: %s; refused (remove it)", dirpath, name, why);
		close(fd);
		errno = EPERM;
		return -1;
	}
	/* O_NONBLOCK was only for the open (a FIFO planted earlier) */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int privdir_write(int dfd, const char *dirpath, const char *name, const void *buf, size_t len,
		  struct strbuf *err)
{
	char tmp[NAME_MAX + 1];
	int fd = -1;
	for (int i = 0; i < 100 && fd < 0; i++) {
		unsigned r = 0;
		int rf = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
		if (rf >= 0) {
			if (read(rf, &r, sizeof(r)) < 0)
				r = 0;
			close(rf);
		}
		snprintf(tmp, sizeof(tmp), ".%.200s.%08x.%d", name, r ^ (unsigned)getpid(), i);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		strbuf_addf(err, "%s/%s: cannot create a file beside it: %s", dirpath, name,
			    strerror(errno));
		return -1;
	}
	int e = 0;
	for (size_t off = 0; off < len && !e;) {
		ssize_t n = write(fd, (const char *)buf + off, len - off);
		if (n < 0 && errno != EINTR)
			e = errno;
		else if (n > 0)
			off += (size_t)n;
	}
	if (!e && fsync(fd))
		e = errno;
	if (close(fd) && !e)
		e = errno;
	if (!e && renameat(dfd, tmp, dfd, name))
		e = errno;
	if (e) {
		unlinkat(dfd, tmp, 0);
		strbuf_addf(err, "%s/%s: write error: %s", dirpath, name, strerror(e));
		return -1;
	}
	return 0;
}

int privdir_path_safe(const char *path, mode_t forbid, char **canon, struct strbuf *err)
{
	char *real = realpath(path, NULL);
	if (!real) {
		strbuf_addf(err, "%s: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (stat(real, &st)) {
		strbuf_addf(err, "%s: %s", path, strerror(errno));
		free(real);
		return -1;
	}
	if (judge_dir(&st, path, forbid, err)) {
		free(real);
		return -1;
	}
	/* every folder above it, from the nearest up to / */
	char *up = xstrdup(real);
	int rc = 0;
	for (char *slash; rc == 0 && (slash = strrchr(up, '/'));) {
		if (slash == up)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(up, &st)) {
			strbuf_addf(err, "%s: %s", up, strerror(errno));
			rc = -1;
		} else if (st.st_uid != 0 && st.st_uid != geteuid()) {
			strbuf_addf(err, "%s: the folder %s above it is owned by uid %u, who could "
					 "replace it; use a folder whose parents are this user's or "
					 "root's", path, up, (unsigned)st.st_uid);
			rc = -1;
		} else if ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)) {
			strbuf_addf(err, "%s: the folder %s above it (mode %04o) lets other users "
					 "replace it; use a folder whose parents only their owner may "
					 "write (or sticky, as /tmp)", path, up,
				    (unsigned)(st.st_mode & 07777));
			rc = -1;
		}
		if (!strcmp(up, "/"))
			break;
	}
	free(up);
	if (rc || !canon)
		free(real);
	else
		*canon = real;
	return rc;
}
