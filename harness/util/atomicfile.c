/*
 * write_file_atomic (atomicfile.h): mkstemp beside the target, write,
 * fsync, fchmod, rename.
 */
#include "harness/util/atomicfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int write_file_atomic(const char *path, const void *buf, size_t len, mode_t mode,
		      struct strbuf *err)
{
	const char *slash = strrchr(path, '/');
	char *tmp = slash ? xstrfmt("%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1)
			  : xstrfmt(".%s.XXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		strbuf_addf(err, "%s: cannot create a file beside it: %s", path, strerror(errno));
		free(tmp);
		return -1;
	}
	const char *p = buf;
	size_t left = len;
	int e = 0;
	while (left && !e) {
		ssize_t k = write(fd, p, left);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			e = k < 0 ? errno : EIO;
		else {
			p += k;
			left -= (size_t)k;
		}
	}
	if (!e && (fchmod(fd, mode) || fsync(fd)))
		e = errno;
	if (close(fd) && !e)
		e = errno;
	if (!e && rename(tmp, path))
		e = errno;
	if (e) {
		strbuf_addf(err, "%s: write error: %s", path, strerror(e));
		unlink(tmp);
	}
	free(tmp);
	return e ? -1 : 0;
}
