/*
 * The initramfs builder of the qemu and lava targets (qemu boots it, a LAVA
 * job carries it; the ssh target's bundle, bundle.c, shares its resolution of
 * programs and libraries, initramfs_resolve): one newc cpio archive holding
 * busybox-static with its applet links, the agent and the workload binaries
 * with every shared library `ldd` says they need (and the dynamic loader),
 * optional extra files (the kernel for kexec inside the guest, the kernel
 * config) and a generated /init script. Plain, or compressed with LZ4 (the
 * legacy frame the kernel unpacks with CONFIG_RD_LZ4; harness/targets/lz4.h):
 * under TCG the kernel unpacks LZ4 as fast as a plain archive and a third of
 * the bytes move around (docs/qemu.md has the measurements).
 *
 * Layout in the guest: everything executable in /bin (sbin, usr/bin and
 * usr/sbin are symlinks to it; a given binary wins over a busybox applet of
 * the same name), libraries at the absolute paths ldd printed, proc, sys,
 * dev, dev/pts, sys/kernel/debug, tmp and run mounted by /init.
 *
 * Kexec inside the guest needs an initrd file, and the kernel frees the
 * initrd after unpacking it. With `carry` (e.g. "/boot/initrd.img") the
 * written file is the carry archive of harness/util/cpio.h: a small plain
 * cpio holding the system archive Z as the file `carry`, then Z itself. The
 * guest thus boots with its own archive at `carry`, and the agent's kexec
 * ("carry": true) writes the same carry archive from that file: the same
 * system again, any number of times, without re-archiving anything in the
 * guest. An extra file with elf_trim (the kernel's ELF vmlinux for kexec) is
 * stored trimmed by kelf_trim (harness/util/kelf.h): without the zero bytes
 * at the end of its PT_LOAD segments (66 MB -> 35 MB for Debian's 6.1),
 * which kexec's ELF loader fills from the segments' memory size, and with
 * its .bss, .brk and .init.scratch out of the memory kexec loads (58 MB ->
 * 37 MB), since the kernel clears them itself.
 *
 * Archives are cached by content: the SHA-256 of the builder version, the
 * output options and every entry (path, mode, bytes) names the file
 * ${XDG_CACHE_HOME:-$HOME/.cache}/schedlab/initramfs/<hash>.cpio (plain),
 * .cpio.lz4, or .carry.cpio / .carry.cpio.lz4. Finding that hash means
 * running ldd and busybox --list and reading every input, so a second key
 * skips it: the SHA-256 of the spec itself (initramfs_spec_key) names an
 * index file index/<key> listing every host file the archive was made from
 * with its size, times, inode and device, and the archive; when none of them
 * changed, the archive is used without reading anything (a few dozen
 * stat()s). The six most recently used archives are kept, older ones and
 * index files naming a deleted archive are removed, except an archive a
 * process holds (initramfs_build's hold, a shared flock): the cache is one
 * folder for every schedlab process of the user, and one's build must not
 * remove the archive another's guest is about to boot. An archive is
 * removed only under an exclusive flock, and published by link(), so that
 * the file a holder locked stays the file at its name.
 *
 * The pure parts (SHA-256, ldd output parsing, the /init text, ELF checks,
 * the spec key, the index format) are exported for
 * tests/unit/test_initramfs.c; the newc writer is harness/util/cpio.h.
 */
#ifndef SL_INITRAMFS_H
#define SL_INITRAMFS_H

#include <stddef.h>
#include <stdint.h>

#include "harness/util/cpio.h"
#include "harness/util/strbuf.h"

#define INITRAMFS_BUILDER_VERSION 6

enum initramfs_compress {
	INITRAMFS_PLAIN = 0,
	INITRAMFS_LZ4 = 1,
};

/* an extra file: host path -> absolute path in the guest */
struct initramfs_file {
	const char *src;
	const char *dst;
	unsigned mode;            /* permission bits; 0 = those of src */
	int elf_trim;             /* 1: a kernel's ELF64 vmlinux stored trimmed
				     (kelf_trim, harness/util/kelf.h: no trailing
				     zeros in the file, no .bss to load); other
				     files as they are */
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
	/*
	 * Batch mode (lab systems such as LAVA, docs/lab.md): the absolute
	 * guest path of a request file (given in files[]); /init then runs
	 * `schedlab-agent --batch PATH` with its frame lines on the console,
	 * prints "schedlab-batch: end status N" and powers off. NULL: the agent
	 * serves agent_tty. A fixed path from code, never a plan value.
	 */
	const char *agent_batch;
	/*
	 * Extra /init lines run after the mounts, before the agent starts: the
	 * qemu target's network and sshd setup ("ssh" option). A fixed text
	 * generated by code, never a plan value.
	 */
	const char *extra_init;
	enum initramfs_compress compress;
	/* absolute guest path of the carried copy of the archive (for kexec in
	   the guest), or NULL for none */
	const char *carry;
	const char *cache_dir;             /* NULL: the XDG cache folder above */
};

/*
 * Build (or find in the cache) the archive for spec; out_path receives its
 * path. -1 with a message on failure (a missing binary, a library ldd cannot
 * find, an unwritable cache).
 *
 * hold (may be NULL) receives a descriptor of the archive with a shared
 * flock on it: while it is open no process prunes the archive, however many
 * others are built meanwhile. Keep it for as long as anything may read the
 * file by its name (a qemu started or started again, a LAVA job that fetches
 * it), then initramfs_release(hold). -1 on failure. With NULL the archive is
 * held only while the build runs: fine for a look at the file, not for a
 * guest.
 */
int initramfs_build(const struct initramfs_spec *spec, char *out_path, size_t out_len,
		    int *hold, struct strbuf *err);

/* close a hold of initramfs_build (when *hold >= 0) and set it to -1 */
void initramfs_release(int *hold);

/* ---- pure parts ---- */

/* the text of /init for spec */
void initramfs_init_script(const struct initramfs_spec *spec, struct strbuf *out);

/*
 * Parse `ldd` output: append every library path (the "=> /path" targets and
 * the loader line "/lib64/ld-...") to libs; linux-vdso and linux-gate are
 * skipped. -1 with a message naming the library when one is "not found".
 */
int initramfs_parse_ldd(const char *out, struct strvec *libs, struct strbuf *err);

/*
 * Libraries a binary needs at run time that ldd cannot see because they are
 * dlopen()ed: glibc loads libgcc_s.so.1 (from its own directory) to unwind
 * for pthread_exit and cancellation (rt-app aborts without it: "libgcc_s.so.1
 * must be installed for pthread_exit to work"). Appends to extra the paths
 * for libs (an ldd list) that are in neither list yet; pure.
 */
void initramfs_dlopen_companions(const struct strvec *libs, struct strvec *extra);

/*
 * 1 when the ELF file in buf (at least its headers) has a PT_INTERP segment
 * (dynamically linked), 0 when it has none (static), -1 when buf is not an
 * ELF file we understand (a script: copied without libraries).
 */
int initramfs_elf_is_dynamic(const unsigned char *buf, size_t len);

/*
 * The dynamic loader an ELF file in buf (its headers and the PT_INTERP
 * string) asks for, appended to out: 1, or 0 for a static file, -1 when buf
 * is not an ELF file we understand or the string is not in buf.
 */
int initramfs_elf_interp(const unsigned char *buf, size_t len, struct strbuf *out);

/*
 * One program with what it needs to run on another machine: its path (a
 * bare name is looked up in PATH), every shared library ldd names (the
 * dynamic loader among them) with the ones glibc dlopen()s
 * (initramfs_dlopen_companions, when this host has them) and the loader itself (PT_INTERP; NULL for a
 * static program or a script). The initramfs builder and the ssh target's
 * workload bundle (harness/targets/bundle.h) both resolve programs with it;
 * `who` starts the messages ("initramfs", "bundle"). -1 with a message (not
 * found, ldd failed, a library not found); p is then empty.
 */
struct initramfs_prog {
	char *path;
	struct strvec libs;
	char *interp;
};
int initramfs_resolve(const char *name, const char *who, struct initramfs_prog *p,
		      struct strbuf *err);
void initramfs_prog_release(struct initramfs_prog *p);

/*
 * The spec's own cache key (hex SHA-256): builder version, every field of
 * spec except cache_dir, and the PATH and LD_LIBRARY_PATH values given
 * (which decide what names and ldd resolve to). Unambiguous: every string
 * is length-prefixed, a NULL differs from "".
 */
void initramfs_spec_key(const struct initramfs_spec *spec, const char *path_env,
			const char *ld_library_path, char hex[65]);

/*
 * Index files. initramfs_index_add appends the line of one host file
 * ("F size mtime ctime ino dev path", or "- path" when it does not exist);
 * -1 for a path with a newline (such a file is not indexed). A whole index
 * is "schedlab-initramfs-index 1\narchive NAME\n" and the lines of its
 * files. initramfs_index_valid returns 1 and the archive's file name when
 * every listed file is still as recorded, else 0 (changed, malformed).
 */
int initramfs_index_add(struct strbuf *idx, const char *path);
int initramfs_index_valid(const char *text, struct strbuf *archive);

#endif
