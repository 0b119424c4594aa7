/*
 * A folder that only this user controls, for what schedlab writes and later
 * trusts (the robot's narrowed plans, serve's bisection records and logs):
 * on a shared lab box another local user must not be able to plant a file
 * there, replace the folder, or redirect a path into it.
 *
 * Two ways of holding one:
 *
 *  - by descriptor (privdir_open, privdir_check, privdir_openat): the
 *    folder is opened once (O_NOFOLLOW), and every later use goes through
 *    that descriptor (openat, renameat) after its owner and mode are looked
 *    at again (fstat), so a folder swapped or chmod'ed after the start is
 *    noticed and nothing is read from a folder that was not checked;
 *
 *  - by path (privdir_path_safe), for a path handed to a child process
 *    that opens it again: the path made canonical (realpath: no symlink
 *    left in it) and every folder on it, from / down, owned by this user
 *    or root and writable by no one else (a sticky folder such as /tmp
 *    excepted above the last one: there nobody else may rename or remove
 *    what this user owns), so no other user can change what the path
 *    names between the check and the child's open.
 *
 * `forbid` is the mode bits the folder itself must not have: 077 for a
 * folder whose files are private (logs), 022 for one that others may read
 * but not write.
 */
#ifndef SL_UTIL_PRIVDIR_H
#define SL_UTIL_PRIVDIR_H

#include <stddef.h>
#include <sys/types.h>

#include "harness/util/strbuf.h"

/* open `path` as a folder of this user's without group/other bits `forbid`,
 * made (0700) first when missing and `create`: 0 with *dfd, 1 when it is
 * missing and !create (*dfd -1), -1 with "PATH: why" in err (a symlink is
 * refused, not followed) */
int privdir_open(const char *path, int create, mode_t forbid, int *dfd, struct strbuf *err);

/* look again at an open folder (owner, mode, not removed): 0, or -1 with
 * "PATH: why" in err; `path` names it in the message only */
int privdir_check(int dfd, const char *path, mode_t forbid, struct strbuf *err);

/* openat(dfd, name) of a regular file this user owns that no one else may
 * write, never through a symlink (O_NOFOLLOW; O_CREAT with `mode` allowed
 * in `flags`): the descriptor, or -1 with why in err (errno kept: ENOENT
 * when it does not exist) */
int privdir_openat(int dfd, const char *dirpath, const char *name, int flags, mode_t mode,
		   struct strbuf *err);

/* the file `name` in the folder replaced whole (a fresh O_EXCL file beside
 * it, fsync'ed, renameat over it; mode 0600): 0, or -1 with why in err */
int privdir_write(int dfd, const char *dirpath, const char *name, const void *buf, size_t len,
		  struct strbuf *err);

/* `path` as above for a child process: 0 with the canonical path in *canon
 * (malloc'd; NULL canon: not wanted), or -1 with what would let another
 * user change it in err */
int privdir_path_safe(const char *path, mode_t forbid, char **canon, struct strbuf *err);

#endif
