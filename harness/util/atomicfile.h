/*
 * Writing a file so that a reader sees the old content or the new, never
 * half of it, and so that nothing planted in the folder is followed: the
 * bytes go to a fresh mkstemp file beside the target (O_EXCL, never a
 * symlink), are fsync'ed, and the file is renamed over the target.
 *
 * An output path the user names (`report --out`, `export --out`) goes
 * through struct outfile, which decides by what is at the path:
 *   nothing             a new regular file (0666 less the umask), atomically
 *   a regular file      replaced atomically, keeping its mode (and, as root,
 *                       its owner)
 *   a symlink           followed: what it points at is treated as above (a
 *                       dangling link creates its target)
 *   a character device  written through (/dev/null, /dev/stdout on a tty),
 *                       never replaced; a write error such as ENOSPC on
 *                       /dev/full is reported
 *   anything else       refused before a byte is written: a directory, a
 *                       FIFO (it would block until a reader comes; use
 *                       stdout and a pipe), a block device, a socket
 */
#ifndef SL_UTIL_ATOMICFILE_H
#define SL_UTIL_ATOMICFILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "harness/util/strbuf.h"

struct outfile {
	FILE *fp;	/* write here between open and commit */
	char *path;	/* the file that is replaced or written (links followed) */
	char *tmp;	/* the mkstemp file beside it; NULL when written through */
	mode_t mode;
	uid_t uid;
	gid_t gid;
	int keep_owner;
};

/* the checks of outfile_open without creating or opening anything, for a
 * command that works a while before it writes: 0, or -1 with the reason */
int outfile_check(const char *path, struct strbuf *err);
/* 0 with o->fp open, or -1 with "PATH: why" in err (nothing created) */
int outfile_open(struct outfile *o, const char *path, struct strbuf *err);
/* flush, fsync and rename into place (or finish writing through): 0, or
 * -1 with the error in err and the temporary file removed; o is released
 * either way */
int outfile_commit(struct outfile *o, struct strbuf *err);
/* give up: the temporary file removed, the target untouched */
void outfile_abort(struct outfile *o);
/* outfile_open + one buffer + outfile_commit */
int outfile_write(const char *path, const void *buf, size_t len, struct strbuf *err);

#endif
