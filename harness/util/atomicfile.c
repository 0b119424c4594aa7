/*
 * struct outfile (atomicfile.h): an output path the user names, written
 * safely. What is at the path decides: nothing or a regular file gets a
 * fresh mkstemp file beside it that is fsync'ed and renamed over it (the
 * old file's mode and owner kept); a symlink is followed; a character
 * device is written through; a directory, FIFO, block device or socket is
 * refused before anything is written.
 */
#include "harness/util/atomicfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* the link chain from `path` followed by hand to the name that does not
 * exist yet (a dangling symlink: the file it names is created); NULL with
 * the reason in err */
static char *follow_dangling(const char *path, struct strbuf *err)
{
	char *cur = xstrdup(path);
	for (int hops = 0; hops < 40; hops++) {
		char link[4096];
		ssize_t n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0) {
			strbuf_addf(err, "%s: cannot follow the symlink: %s", path, strerror(errno));
			free(cur);
			return NULL;
		}
		link[n] = '\0';
		char *next;
		const char *slash = strrchr(cur, '/');
		if (link[0] == '/' || !slash)
			next = xstrdup(link);
		else
			next = xstrfmt("%.*s/%s", (int)(slash - cur), cur, link);
		free(cur);
		cur = next;
		struct stat st;
		if (lstat(cur, &st)) {
			if (errno == ENOENT)
				return cur;
			strbuf_addf(err, "%s: the symlink leads to %s: %s", path, cur, strerror(errno));
			free(cur);
			return NULL;
		}
		if (!S_ISLNK(st.st_mode))
			break;	/* appeared meanwhile: let the caller look again */
	}
	strbuf_addf(err, "%s: cannot follow the symlink: %s", path, strerror(ELOOP));
	free(cur);
	return NULL;
}

/* why a file of this type is refused, or NULL when it may be written */
static const char *refused_type(mode_t m)
{
	if (S_ISDIR(m))
		return "is a directory: name a file (inside it, if you like)";
	if (S_ISFIFO(m))
		return "is a FIFO: refused, a FIFO blocks until a reader comes "
		       "(write to standard output and pipe that instead)";
	if (S_ISBLK(m))
		return "is a block device: refused, it would be overwritten";
	if (S_ISSOCK(m))
		return "is a socket: refused";
	if (!S_ISREG(m) && !S_ISCHR(m))
		return "is not a regular file or a character device: refused";
	return NULL;
}

static int open_through(struct outfile *o, struct strbuf *err)
{
	int fd = open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || !(o->fp = fdopen(fd, "w"))) {
		strbuf_addf(err, "%s: %s", o->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return 0;
}

static int open_beside(struct outfile *o, struct strbuf *err)
{
	const char *slash = strrchr(o->path, '/');
	o->tmp = slash ? xstrfmt("%.*s/.%s.XXXXXX", (int)(slash - o->path), o->path, slash + 1)
		       : xstrfmt(".%s.XXXXXX", o->path);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		strbuf_addf(err, "%s: cannot create a file beside it: %s", o->path, strerror(errno));
		return -1;
	}
	if (!(o->fp = fdopen(fd, "w"))) {
		strbuf_addf(err, "%s: %s", o->path, strerror(errno));
		close(fd);
		unlink(o->tmp);
		return -1;
	}
	return 0;
}

static void outfile_release(struct outfile *o)
{
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
}

/* what `path` names once symlinks are followed, into o->path and *st
 * (*exists 0: nothing there yet, st unset), refused types turned away:
 * 0, or -1 with the reason in err and o released */
static int outfile_resolve(struct outfile *o, const char *path, struct stat *st, int *exists,
			   struct strbuf *err)
{
	memset(o, 0, sizeof(*o));
	*exists = 1;
	if (!*path) {
		strbuf_addstr(err, "empty output path");
		return -1;
	}
	if (lstat(path, st)) {
		if (errno != ENOENT) {
			strbuf_addf(err, "%s: %s", path, strerror(errno));
			return -1;
		}
		*exists = 0;
		o->path = xstrdup(path);
	} else if (S_ISLNK(st->st_mode)) {
		if (!stat(path, st)) {
			/* a regular file is replaced where it is, not the link;
			   anything else is named by what it is (a pipe behind
			   /dev/stdout has no name: the link's then) */
			o->path = realpath(path, NULL);
			if (!o->path && S_ISREG(st->st_mode)) {
				strbuf_addf(err, "%s: %s", path, strerror(errno));
				return -1;
			}
			if (!o->path)
				o->path = xstrdup(path);
		} else if (errno == ENOENT) {
			if (!(o->path = follow_dangling(path, err)))
				return -1;
			*exists = 0;
		} else {
			strbuf_addf(err, "%s: %s", path, strerror(errno));
			return -1;
		}
	} else {
		o->path = xstrdup(path);
	}
	const char *why = *exists ? refused_type(st->st_mode) : NULL;
	if (!why && *exists && S_ISREG(st->st_mode) && access(o->path, W_OK)) {
		/* renaming over a file the user may not write would defeat its
		   protection: refuse as a plain open would */
		strbuf_addf(err, "%s: %s", o->path, strerror(errno));
		outfile_release(o);
		return -1;
	}
	if (why) {
		if (strcmp(o->path, path))
			strbuf_addf(err, "%s: the symlink leads to %s, which %s", path, o->path, why);
		else
			strbuf_addf(err, "%s %s", path, why);
		outfile_release(o);
		return -1;
	}
	return 0;
}

int outfile_check(const char *path, struct strbuf *err)
{
	struct outfile o;
	struct stat st;
	int exists;
	if (outfile_resolve(&o, path, &st, &exists, err))
		return -1;
	outfile_release(&o);
	return 0;
}

int outfile_open(struct outfile *o, const char *path, struct strbuf *err)
{
	struct stat st;
	int exists, rc;
	if (outfile_resolve(o, path, &st, &exists, err))
		return -1;
	if (!exists) {
		mode_t um = umask(0);
		umask(um);
		o->mode = 0666 & ~um;
		rc = open_beside(o, err);
	} else if (S_ISCHR(st.st_mode)) {
		rc = open_through(o, err);
	} else {
		o->mode = st.st_mode & 07777;
		o->uid = st.st_uid;
		o->gid = st.st_gid;
		o->keep_owner = st.st_uid != geteuid() || st.st_gid != getegid();
		rc = open_beside(o, err);
	}
	if (rc)
		outfile_release(o);
	return rc;
}

int outfile_commit(struct outfile *o, struct strbuf *err)
{
	/* a write that failed earlier left its errno (ENOSPC, EIO...) */
	int e = ferror(o->fp) ? (errno ? errno : EIO) : 0;
	if (!e && fflush(o->fp))
		e = errno ? errno : EIO;
	if (o->tmp) {
		int fd = fileno(o->fp);
		/* the owner first: chown clears set-id bits that fchmod puts back;
		   a user who may not give the file away keeps it as their own */
		if (!e && o->keep_owner && fchown(fd, o->uid, o->gid) && errno != EPERM)
			e = errno;
		if (!e && fchmod(fd, o->mode))
			e = errno;
		if (!e && fsync(fd))
			e = errno;
	}
	if (fclose(o->fp) && !e)
		e = errno;
	o->fp = NULL;
	if (o->tmp) {
		if (!e && rename(o->tmp, o->path))
			e = errno;
		if (e)
			unlink(o->tmp);
	}
	if (e)
		strbuf_addf(err, "%s: write error: %s", o->path, strerror(e));
	outfile_release(o);
	return e ? -1 : 0;
}

void outfile_abort(struct outfile *o)
{
	if (o->fp)
		fclose(o->fp);
	if (o->tmp)
		unlink(o->tmp);
	outfile_release(o);
}

int outfile_write(const char *path, const void *buf, size_t len, struct strbuf *err)
{
	struct outfile o;
	if (outfile_open(&o, path, err))
		return -1;
	if (len)
		fwrite(buf, 1, len, o.fp);
	return outfile_commit(&o, err);
}
