/*
 * The initramfs builder of the qemu target: one newc cpio archive (written
 * here, uncompressed; the kernel unpacks plain cpio and skips gunzip under
 * TCG) holding busybox-static with its applet links, the agent and the
 * workload binaries with every shared library `ldd` says they need (and the
 * dynamic loader), optional extra files (the kernel for kexec inside the
 * guest) and a generated /init script.
 *
 * Layout in the guest: everything executable in /bin (sbin, usr/bin and
 * usr/sbin are symlinks to it; a given binary wins over a busybox applet of
 * the same name), libraries at the absolute paths ldd printed, proc, sys,
 * dev, dev/pts, sys/kernel/debug, tmp and run mounted by /init.
 *
 * Kexec inside the guest needs an initrd file, and an archive cannot contain
 * itself: when a kernel is put in /boot/vmlinuz, /init re-archives its own
 * root filesystem (find / -xdev | cpio -o -H newc, i.e. everything this
 * archive holds, without the mounted proc/sys/dev/tmp/run) into
 * /boot/initrd.cpio before it starts the agent, so `kexec -l /boot/vmlinuz
 * --initrd=/boot/initrd.cpio` boots the same system again, any number of
 * times (see docs/qemu.md).
 *
 * Archives are cached by content: the SHA-256 of the builder version and of
 * every entry (path, mode, bytes) names the file
 * ${XDG_CACHE_HOME:-$HOME/.cache}/schedlab/initramfs/<hash>.cpio, so a build
 * reads its inputs, hashes them and writes only when something changed. The
 * six most recently used archives are kept, older ones are deleted.
 *
 * The pure parts (newc headers, SHA-256, ldd output parsing, the /init text)
 * are exported for tests/unit/test_initramfs.c.
 */
#ifndef SL_INITRAMFS_H
#define SL_INITRAMFS_H

#include <stddef.h>
#include <stdint.h>

#include "harness/strbuf.h"

#define INITRAMFS_BUILDER_VERSION 1

/* an extra file: host path -> absolute path in the guest */
struct initramfs_file {
	const char *src;
	const char *dst;
	unsigned mode;            /* permission bits; 0 = those of src */
};

struct initramfs_spec {
	const char *busybox;               /* NULL: "busybox" from PATH; must exist */
	const char *const *binaries;       /* NULL-terminated host paths (or names
					      found in PATH), installed as /bin/<basename> */
	const struct initramfs_file *files; /* extra files, nr_files of them */
	size_t nr_files;
	const char *agent_tty;             /* NULL: /dev/ttyS1 */
	/*
	 * Test stand-in for the agent: when set, /init runs this shell command
	 * (a fixed string from code, never from a plan) instead of exec'ing
	 * schedlab-agent, and powers the machine off when it returns.
	 */
	const char *init_cmd;
	/* /init writes /boot/initrd.cpio (for kexec); default: when a file
	   goes to /boot/vmlinuz. 1 force on, -1 force off */
	int self_archive;
	const char *cache_dir;             /* NULL: the XDG cache folder above */
};

/*
 * Build (or find in the cache) the archive for spec; out_path receives its
 * path. -1 with a message on failure (a missing binary, a library ldd cannot
 * find, an unwritable cache).
 */
int initramfs_build(const struct initramfs_spec *spec, char *out_path, size_t out_len,
		    struct strbuf *err);

/* ---- pure parts ---- */

/* the text of /init for spec */
void initramfs_init_script(const struct initramfs_spec *spec, int self_archive,
			   struct strbuf *out);

/*
 * Parse `ldd` output: append every library path (the "=> /path" targets and
 * the loader line "/lib64/ld-...") to libs; linux-vdso and linux-gate are
 * skipped. -1 with a message naming the library when one is "not found".
 */
int initramfs_parse_ldd(const char *out, struct strvec *libs, struct strbuf *err);

/*
 * 1 when the ELF file in buf (at least its headers) has a PT_INTERP segment
 * (dynamically linked), 0 when it has none (static), -1 when buf is not an
 * ELF file we understand (a script: copied without libraries).
 */
int initramfs_elf_is_dynamic(const unsigned char *buf, size_t len);

/* newc: append one entry (header, NUL-terminated name, padding, data, padding) */
struct cpio_out {
	struct strbuf *mem;       /* append here when non-NULL, else write to fd */
	int fd;
	uint64_t off;             /* bytes emitted so far */
	unsigned next_ino;
	int error;                /* errno of the first failed write, 0 ok */
};
void cpio_out_init_mem(struct cpio_out *o, struct strbuf *mem);
void cpio_out_init_fd(struct cpio_out *o, int fd);
/* mode includes the type bits (S_IFREG, S_IFDIR, S_IFLNK, S_IFCHR); for a
   symlink data is the target; rdev only for device nodes */
void cpio_add(struct cpio_out *o, const char *name, unsigned mode, const void *data,
	      size_t len, unsigned rdev_major, unsigned rdev_minor);
/* the TRAILER!!! entry; then pad to a 512-byte multiple like GNU cpio */
void cpio_finish(struct cpio_out *o);

/* SHA-256 (FIPS 180-4), for the cache key */
struct sha256 {
	uint32_t h[8];
	uint64_t len;
	unsigned char buf[64];
	size_t nbuf;
};
void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, unsigned char out[32]);
/* lowercase hex of the digest into hex[65] */
void sha256_hex(const unsigned char d[32], char hex[65]);

#endif
