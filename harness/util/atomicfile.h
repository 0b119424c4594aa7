/*
 * Writing a file so that a reader sees the old content or the new, never
 * half of it, and so that nothing planted in the folder is followed: the
 * bytes go to a fresh mkstemp file beside the target (O_EXCL, never a
 * symlink), are fsync'ed, and the file is renamed over the target.
 */
#ifndef SL_UTIL_ATOMICFILE_H
#define SL_UTIL_ATOMICFILE_H

#include <stddef.h>
#include <sys/types.h>

#include "harness/util/strbuf.h"

/* 0, or -1 with "PATH: what failed: why" in err (nothing left behind) */
int write_file_atomic(const char *path, const void *buf, size_t len, mode_t mode,
		      struct strbuf *err);

#endif
