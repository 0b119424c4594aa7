/*
 * newc cpio archives (the format of a Linux initramfs): a writer to memory
 * or a file descriptor, and the "carry" archive that lets a system kexec
 * into itself again. Used by the initramfs builder on the controller
 * (harness/targets/initramfs.c) and by the agent's kexec inside a guest
 * (harness/agent/agent.c), which must write byte for byte the same thing.
 *
 * Entries have uid 0, mtime 0 and sequential inode numbers, so equal input
 * gives equal bytes.
 */
#ifndef SL_CPIO_H
#define SL_CPIO_H

#include <stddef.h>
#include <stdint.h>

#include "harness/util/strbuf.h"

struct cpio_out {
	struct strbuf *mem;       /* append here when non-NULL, else write to fd */
	int fd;
	uint64_t off;             /* bytes emitted so far */
	unsigned next_ino;
	int error;                /* errno of the first failed write, 0 ok */
};
void cpio_out_init_mem(struct cpio_out *o, struct strbuf *mem);
void cpio_out_init_fd(struct cpio_out *o, int fd);
/* raw bytes (file data written in pieces after cpio_header) */
void cpio_emit(struct cpio_out *o, const void *data, size_t len);
/* pad what was emitted to a multiple of 4 with NUL bytes */
void cpio_pad4(struct cpio_out *o);
/* one header (110 bytes), the NUL-terminated name and its padding; the
 * caller then emits size bytes of data and cpio_pad4() */
void cpio_header(struct cpio_out *o, const char *name, unsigned mode, uint64_t size,
		 unsigned rdev_major, unsigned rdev_minor);
/* mode includes the type bits (S_IFREG, S_IFDIR, S_IFLNK, S_IFCHR); for a
   symlink data is the target; rdev only for device nodes */
void cpio_add(struct cpio_out *o, const char *name, unsigned mode, const void *data,
	      size_t len, unsigned rdev_major, unsigned rdev_minor);
/* the TRAILER!!! entry; then pad to a 512-byte multiple like GNU cpio */
void cpio_finish(struct cpio_out *o);

/*
 * The carry archive: write to out_fd a newc archive holding the folders of
 * `name` (relative, e.g. "boot/initrd.img") and the file `name` with the
 * bytes of in_fd, then those bytes again. Unpacked by the kernel as an
 * initramfs, that gives the system of the archive in in_fd (plain or
 * compressed; it comes last, so a compressed stream may run to the end) plus
 * the file itself at /name: a kexec from there can build the same initrd
 * again. in_fd is read from offset 0 twice. -1 with a message on an I/O error.
 */
int cpio_write_carry(int out_fd, const char *name, int in_fd, struct strbuf *err);

#endif
