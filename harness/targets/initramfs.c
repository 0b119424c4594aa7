/*
 * The initramfs builder of the qemu target (see initramfs.h for the layout,
 * the cache and the kexec self-archive). A build runs in three steps:
 *   1. collect a manifest: directories, busybox and its applet links, the
 *      binaries and the libraries `ldd` lists for each dynamic one, the extra
 *      files, /init, /etc/passwd; sorted by path so parents come first and
 *      the archive is byte-for-byte reproducible (mtime 0, uid 0);
 *   2. hash the manifest including every file's bytes (SHA-256);
 *   3. on a cache miss write the newc archive to <hash>.cpio.tmp.<pid> in the
 *      cache folder and rename it into place.
 * Step 1 is collect(): mf_skeleton, add_binaries (each with add_libs),
 * add_busybox (applet links where no binary took the name), add_extra_files,
 * then /init. Child processes (ldd, busybox --list) go through
 * harness/util/proc.h.
 */
#include "harness/targets/initramfs.h"
#include "harness/util/sha256.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/util/proc.h"

/* ------------------------------------------------------------------ */
/* newc cpio writer                                                     */

void cpio_out_init_mem(struct cpio_out *o, struct strbuf *mem)
{
	memset(o, 0, sizeof(*o));
	o->mem = mem;
	o->fd = -1;
	o->next_ino = 1;
}

void cpio_out_init_fd(struct cpio_out *o, int fd)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->next_ino = 1;
}

static void cpio_emit(struct cpio_out *o, const void *data, size_t len)
{
	const char *p = data;

	o->off += len;
	if (o->mem) {
		strbuf_add(o->mem, data, len);
		return;
	}
	while (len && !o->error) {
		ssize_t n = write(o->fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			o->error = errno;
			return;
		}
		p += n, len -= (size_t)n;
	}
}

static void cpio_pad4(struct cpio_out *o)
{
	static const char zero[4];
	if (o->off % 4)
		cpio_emit(o, zero, 4 - o->off % 4);
}

static void cpio_header(struct cpio_out *o, const char *name, unsigned mode, uint64_t size,
			unsigned rmaj, unsigned rmin)
{
	char hdr[111];
	size_t namesize = strlen(name) + 1;
	int isdir = (mode & S_IFMT) == S_IFDIR;
	int istrailer = !strcmp(name, "TRAILER!!!");

	snprintf(hdr, sizeof(hdr),
		 "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		 istrailer ? 0 : o->next_ino++, mode, 0u, 0u, isdir ? 2u : 1u, 0u,
		 (unsigned)size, 0u, 0u, rmaj, rmin, (unsigned)namesize, 0u);
	cpio_emit(o, hdr, 110);
	cpio_emit(o, name, namesize);
	cpio_pad4(o);
}

void cpio_add(struct cpio_out *o, const char *name, unsigned mode, const void *data,
	      size_t len, unsigned rdev_major, unsigned rdev_minor)
{
	cpio_header(o, name, mode, len, rdev_major, rdev_minor);
	if (len)
		cpio_emit(o, data, len);
	cpio_pad4(o);
}

void cpio_finish(struct cpio_out *o)
{
	static const char zero[512];
	cpio_add(o, "TRAILER!!!", 0, NULL, 0, 0, 0);
	if (o->off % 512)
		cpio_emit(o, zero, 512 - o->off % 512);
}

/* ------------------------------------------------------------------ */
/* ELF and ldd                                                          */

int initramfs_elf_is_dynamic(const unsigned char *buf, size_t len)
{
	uint64_t phoff;
	unsigned phentsize, phnum, i;
	int is64;

	if (len < EI_NIDENT || memcmp(buf, ELFMAG, SELFMAG))
		return -1;
	if (buf[EI_DATA] != ELFDATA2LSB)
		return -1;
	is64 = buf[EI_CLASS] == ELFCLASS64;
	if (is64) {
		Elf64_Ehdr eh;
		if (len < sizeof(eh))
			return -1;
		memcpy(&eh, buf, sizeof(eh));
		phoff = eh.e_phoff, phentsize = eh.e_phentsize, phnum = eh.e_phnum;
		if (phentsize < sizeof(Elf64_Phdr))
			return -1;
	} else if (buf[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr eh;
		if (len < sizeof(eh))
			return -1;
		memcpy(&eh, buf, sizeof(eh));
		phoff = eh.e_phoff, phentsize = eh.e_phentsize, phnum = eh.e_phnum;
		if (phentsize < sizeof(Elf32_Phdr))
			return -1;
	} else {
		return -1;
	}
	if (phoff > len || (uint64_t)phentsize * phnum > len - phoff)
		return -1;
	for (i = 0; i < phnum; i++) {
		const unsigned char *ph = buf + phoff + (uint64_t)i * phentsize;
		uint32_t type;
		memcpy(&type, ph, sizeof(type)); /* p_type is first in both classes */
		if (type == PT_INTERP)
			return 1;
	}
	return 0;
}

int initramfs_parse_ldd(const char *out, struct strvec *libs, struct strbuf *err)
{
	const char *p = out;

	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		char *line = xmalloc(n + 1), *s, *arrow;
		memcpy(line, p, n);
		line[n] = '\0';
		p += n + (eol ? 1 : 0);

		s = line + strspn(line, " \t");
		arrow = strstr(s, "=>");
		if (arrow) {
			char *t = arrow + 2;
			t += strspn(t, " \t");
			if (!strncmp(t, "not found", 9)) {
				size_t k = (size_t)(arrow - s);
				while (k && (s[k - 1] == ' ' || s[k - 1] == '\t'))
					k--;
				s[k] = '\0';
				strbuf_addf(err, "library %s not found", s);
				free(line);
				return -1;
			}
			if (*t == '/') {
				t[strcspn(t, " \t(")] = '\0';
				strvec_push(libs, t);
			}
			/* "=> (0x...)" or empty: nothing on disk (vdso) */
		} else if (*s == '/') {
			s[strcspn(s, " \t(")] = '\0';
			strvec_push(libs, s);
		}
		/* linux-vdso.so.1 (0x..), "statically linked", blank lines */
		free(line);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* /init                                                                */

void initramfs_init_script(const struct initramfs_spec *spec, int self_archive,
			   struct strbuf *o)
{
	const char *tty = spec->agent_tty ? spec->agent_tty : "/dev/ttyS1";

	strbuf_addf(o,
		    "#!/bin/sh\n"
		    "# /init of a schedlab initramfs (builder version %d), generated by\n"
		    "# harness/targets/initramfs.c; see docs/qemu.md\n"
		    "export PATH=/bin HOME=/root TERM=dumb\n"
		    "mount -t proc proc /proc\n"
		    "mount -t sysfs sysfs /sys\n"
		    "mount -t devtmpfs devtmpfs /dev\n"
		    "mkdir -p /dev/pts /dev/shm\n"
		    "mount -t devpts devpts /dev/pts\n"
		    "mount -t tmpfs tmpfs /dev/shm\n"
		    "mount -t debugfs debugfs /sys/kernel/debug\n"
		    "mount -t tmpfs tmpfs /tmp\n"
		    "mount -t tmpfs tmpfs /run\n"
		    "ln -sf /proc/self/fd /dev/fd\n"
		    "hostname schedlab-guest\n"
		    "echo \"schedlab-init: up at $(cut -d' ' -f1 /proc/uptime) s\"\n",
		    INITRAMFS_BUILDER_VERSION);
	if (self_archive)
		strbuf_addstr(o,
			      "# an initrd for kexec: this very root filesystem, re-archived\n"
			      "# (-xdev leaves out the mounts above)\n"
			      "(cd / && find . -xdev | sed -e '/^\\.$/d' -e 's,^\\./,,' "
			      "-e '\\,^boot/initrd\\.cpio,d' |\n"
			      "\tcpio -o -H newc >/boot/initrd.cpio.tmp 2>/dev/null) &&\n"
			      "\tmv /boot/initrd.cpio.tmp /boot/initrd.cpio ||\n"
			      "\techo \"schedlab-init: cannot write /boot/initrd.cpio\"\n"
			      "echo \"schedlab-init: initrd for kexec ready at "
			      "$(cut -d' ' -f1 /proc/uptime) s\"\n");
	if (spec->extra_init)
		strbuf_addf(o, "# extra setup (initramfs_spec.extra_init)\n%s\n", spec->extra_init);
	if (spec->init_cmd) {
		strbuf_addf(o,
			    "# stand-in for the agent (initramfs_spec.init_cmd)\n"
			    "%s\n"
			    "echo \"schedlab-init: init_cmd exited with status $?\"\n"
			    "poweroff -f\n",
			    spec->init_cmd);
		return;
	}
	strbuf_addf(o,
		    "if ! command -v schedlab-agent >/dev/null; then\n"
		    "\techo \"schedlab-init: no schedlab-agent in the initramfs\"\n"
		    "\tpoweroff -f\n"
		    "fi\n"
		    "echo \"schedlab-init: starting schedlab-agent --tty %s\"\n"
		    "schedlab-agent --tty %s\n"
		    "echo \"schedlab-init: agent exited with status $?\"\n"
		    "poweroff -f\n",
		    tty, tty);
}

/* ------------------------------------------------------------------ */
/* manifest                                                             */

struct entry {
	char *dst;                /* relative, no leading slash */
	unsigned mode;            /* type and permission bits */
	char *src;                /* host file (S_IFREG from disk), or NULL */
	struct strbuf data;       /* inline bytes (script, symlink target) */
	unsigned rmaj, rmin;
};

struct manifest {
	struct entry *e;
	size_t nr, alloc;
};

static struct entry *mf_find(struct manifest *m, const char *dst)
{
	for (size_t i = 0; i < m->nr; i++)
		if (!strcmp(m->e[i].dst, dst))
			return &m->e[i];
	return NULL;
}

static struct entry *mf_new(struct manifest *m, const char *dst, unsigned mode)
{
	struct entry *e;

	if (m->nr == m->alloc) {
		m->alloc = m->alloc ? 2 * m->alloc : 64;
		m->e = xrealloc(m->e, m->alloc * sizeof(*m->e));
	}
	e = &m->e[m->nr++];
	memset(e, 0, sizeof(*e));
	e->dst = xstrdup(dst);
	e->mode = mode;
	strbuf_init(&e->data, 0);
	return e;
}

static void mf_release(struct manifest *m)
{
	for (size_t i = 0; i < m->nr; i++) {
		free(m->e[i].dst);
		free(m->e[i].src);
		strbuf_release(&m->e[i].data);
	}
	free(m->e);
	memset(m, 0, sizeof(*m));
}

/* guest path -> manifest path: no leading '/', /sbin, /usr/bin, /usr/sbin -> bin */
static char *guest_path(const char *p)
{
	static const char *const merged[] = { "usr/sbin/", "usr/bin/", "sbin/" };
	while (*p == '/')
		p++;
	for (size_t i = 0; i < sizeof(merged) / sizeof(merged[0]); i++)
		if (!strncmp(p, merged[i], strlen(merged[i])))
			return xstrfmt("bin/%s", p + strlen(merged[i]));
	return xstrdup(p);
}

static int mf_dirs(struct manifest *m, const char *dst, struct strbuf *err)
{
	char *tmp = xstrdup(dst), *slash;
	int rc = 0;

	for (slash = strchr(tmp, '/'); slash; slash = strchr(slash + 1, '/')) {
		struct entry *e;
		*slash = '\0';
		e = mf_find(m, tmp);
		if (!e)
			mf_new(m, tmp, S_IFDIR | 0755);
		else if ((e->mode & S_IFMT) != S_IFDIR) {
			strbuf_addf(err, "initramfs: /%s is needed as a folder for /%s", tmp, dst);
			rc = -1;
			break;
		}
		*slash = '/';
	}
	free(tmp);
	return rc;
}

static int mf_dir(struct manifest *m, const char *dst, struct strbuf *err)
{
	struct entry *e = mf_find(m, dst);
	if (e)
		return (e->mode & S_IFMT) == S_IFDIR ? 0 : -1;
	if (mf_dirs(m, dst, err))
		return -1;
	mf_new(m, dst, S_IFDIR | 0755);
	return 0;
}

static int mf_inline(struct manifest *m, const char *dst, unsigned mode, const char *data,
		     size_t len, struct strbuf *err)
{
	struct entry *e;
	if (mf_find(m, dst)) {
		strbuf_addf(err, "initramfs: /%s added twice", dst);
		return -1;
	}
	if (mf_dirs(m, dst, err))
		return -1;
	e = mf_new(m, dst, mode);
	strbuf_add(&e->data, data, len);
	return 0;
}

/*
 * A host file at dst. `same_ok`: adding the same source again is fine
 * (libraries shared by several binaries); a different source is an error.
 */
static int mf_file(struct manifest *m, const char *dst, const char *src, unsigned perm,
		   int same_ok, struct strbuf *err)
{
	struct stat st;
	struct entry *e = mf_find(m, dst);

	if (e) {
		if (same_ok && e->src && !strcmp(e->src, src))
			return 0;
		strbuf_addf(err, "initramfs: /%s would be both %s and %s", dst,
			    e->src ? e->src : "(generated)", src);
		return -1;
	}
	if (stat(src, &st) < 0) {
		strbuf_addf(err, "initramfs: %s: %s", src, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		strbuf_addf(err, "initramfs: %s is not a regular file", src);
		return -1;
	}
	if (mf_dirs(m, dst, err))
		return -1;
	e = mf_new(m, dst, S_IFREG | (perm ? perm : (st.st_mode & 07777)));
	e->src = xstrdup(src);
	return 0;
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->dst, ((const struct entry *)b)->dst);
}

/* read the first bytes of a file (ELF headers) */
static ssize_t read_head(const char *path, unsigned char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	if (fd < 0)
		return -1;
	n = read(fd, buf, len);
	close(fd);
	return n;
}

/* the libraries of one binary (nothing for static ones and scripts) */
static int add_libs(struct manifest *m, const char *bin, struct strbuf *err)
{
	static unsigned char head[65536];
	ssize_t n = read_head(bin, head, sizeof(head));
	const char *argv[] = { "ldd", bin, NULL };
	struct strbuf out = STRBUF_INIT, errout = STRBUF_INIT;
	struct strvec libs = STRVEC_INIT;
	struct proc_result res;
	int dyn, rc = -1;

	if (n < 0) {
		strbuf_addf(err, "initramfs: %s: %s", bin, strerror(errno));
		return -1;
	}
	if (n < SELFMAG || memcmp(head, ELFMAG, SELFMAG))
		return 0; /* a script */
	dyn = initramfs_elf_is_dynamic(head, (size_t)n);
	if (dyn == 0)
		return 0;
	if (proc_capture(argv, 60, &out, &errout, &res, err) < 0)
		goto out;
	if (res.exit_code != 0) {
		if (strstr(out.buf, "not a dynamic executable") ||
		    strstr(errout.buf, "not a dynamic executable")) {
			rc = 0;
			goto out;
		}
		strbuf_trim(&errout);
		strbuf_addf(err, "initramfs: ldd %s failed (status %d): %s", bin, res.exit_code,
			    errout.buf);
		goto out;
	}
	if (initramfs_parse_ldd(out.buf, &libs, err) < 0) {
		struct strbuf msg = STRBUF_INIT;
		strbuf_addf(&msg, " (needed by %s)", bin);
		strbuf_addstr(err, msg.buf);
		strbuf_release(&msg);
		goto out;
	}
	for (size_t i = 0; i < libs.nr; i++) {
		char *dst = guest_path(libs.v[i]);
		int r = mf_file(m, dst, libs.v[i], 0, 1, err);
		free(dst);
		if (r < 0)
			goto out;
	}
	rc = 0;
out:
	strbuf_release(&out);
	strbuf_release(&errout);
	strvec_clear(&libs);
	return rc;
}

static char *resolve_binary(const char *name, struct strbuf *err)
{
	char *p;
	if (strchr(name, '/')) {
		if (access(name, X_OK) < 0) {
			strbuf_addf(err, "initramfs: %s: %s", name, strerror(errno));
			return NULL;
		}
		return xstrdup(name);
	}
	p = proc_which(name);
	if (!p)
		strbuf_addf(err, "initramfs: %s not found in PATH", name);
	return p;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static int tty_ok(const char *s)
{
	if (!*s || *s != '/')
		return 0;
	for (; *s; s++)
		if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') ||
		      ('0' <= *s && *s <= '9') || strchr("/_.-", *s)))
			return 0;
	return 1;
}

/* the fixed part: top folders, the merged-/usr links, /dev/console,
 * /etc/passwd and /etc/group */
static void mf_skeleton(struct manifest *m, struct strbuf *err)
{
	static const char *const dirs[] = { "bin", "dev", "etc", "lib", "mnt", "proc", "root",
					    "run", "sys", "tmp", "usr", "var" };
	const char *p;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		mf_dir(m, dirs[i], err);
	mf_inline(m, "sbin", S_IFLNK | 0777, "bin", 3, err);
	mf_inline(m, "usr/bin", S_IFLNK | 0777, "../bin", 6, err);
	mf_inline(m, "usr/sbin", S_IFLNK | 0777, "../bin", 6, err);
	mf_inline(m, "dev/console", S_IFCHR | 0600, NULL, 0, err);
	mf_find(m, "dev/console")->rmaj = 5;
	mf_find(m, "dev/console")->rmin = 1;
	p = "root:x:0:0:root:/root:/bin/sh\n";
	mf_inline(m, "etc/passwd", S_IFREG | 0644, p, strlen(p), err);
	p = "root:x:0:\n";
	mf_inline(m, "etc/group", S_IFREG | 0644, p, strlen(p), err);
}

/* spec->binaries into /bin with their libraries */
static int add_binaries(const struct initramfs_spec *spec, struct manifest *m,
			struct strbuf *err)
{
	for (size_t i = 0; spec->binaries && spec->binaries[i]; i++) {
		char *path = resolve_binary(spec->binaries[i], err), *dst;
		int r;
		if (!path)
			return -1;
		dst = xstrfmt("bin/%s", base_name(path));
		r = mf_file(m, dst, path, 0, 0, err);
		if (!r)
			r = add_libs(m, path, err);
		free(dst);
		free(path);
		if (r < 0)
			return -1;
	}
	return 0;
}

/* busybox and a link for each applet it lists that no binary took */
static int add_busybox(const struct initramfs_spec *spec, struct manifest *m,
		       struct strbuf *err)
{
	struct strbuf out = STRBUF_INIT, errout = STRBUF_INIT;
	struct proc_result res;
	char *busybox;
	int rc = -1;

	busybox = resolve_binary(spec->busybox ? spec->busybox : "busybox", err);
	if (!busybox)
		goto out;
	if (mf_file(m, "bin/busybox", busybox, 0755, 0, err) || add_libs(m, busybox, err))
		goto out;
	{
		const char *argv[] = { busybox, "--list", NULL };
		if (proc_capture(argv, 30, &out, &errout, &res, err) < 0)
			goto out;
		if (res.exit_code != 0 || !out.len) {
			strbuf_addf(err, "initramfs: %s --list failed (status %d)", busybox,
				    res.exit_code);
			goto out;
		}
	}
	for (char *line = out.buf, *next; *line; line = next) {
		char *dst;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		/* never link busybox over itself (LAB-NOTES: /init fails with -40) */
		if (!*line || strchr(line, '/') || !strcmp(line, "busybox") ||
		    !strcmp(line, "linuxrc"))
			continue;
		dst = xstrfmt("bin/%s", line);
		if (!mf_find(m, dst))
			mf_inline(m, dst, S_IFLNK | 0777, "busybox", 7, err);
		free(dst);
	}
	rc = 0;
out:
	free(busybox);
	strbuf_release(&out);
	strbuf_release(&errout);
	return rc;
}

/* spec->files; *self_archive is set when /boot/vmlinuz is among them */
static int add_extra_files(const struct initramfs_spec *spec, struct manifest *m,
			   int *self_archive, struct strbuf *err)
{
	for (size_t i = 0; i < spec->nr_files; i++) {
		const struct initramfs_file *f = &spec->files[i];
		char *dst;
		int r;
		if (!f->src || !f->dst || f->dst[0] != '/') {
			strbuf_addf(err, "initramfs: extra file %zu needs a source and an "
					 "absolute destination", i);
			return -1;
		}
		dst = guest_path(f->dst);
		r = mf_file(m, dst, f->src, f->mode, 0, err);
		if (!r && !strcmp(dst, "boot/vmlinuz"))
			*self_archive = 1;
		free(dst);
		if (r < 0)
			return -1;
	}
	return 0;
}

static int collect(const struct initramfs_spec *spec, struct manifest *m, struct strbuf *err)
{
	struct strbuf script = STRBUF_INIT;
	int self_archive = 0, rc = -1;

	if (spec->agent_tty && !tty_ok(spec->agent_tty)) {
		strbuf_addf(err, "initramfs: bad agent tty '%s'", spec->agent_tty);
		return -1;
	}
	mf_skeleton(m, err);
	/* the binaries first, so that they win over busybox applets */
	if (add_binaries(spec, m, err) < 0 || add_busybox(spec, m, err) < 0 ||
	    add_extra_files(spec, m, &self_archive, err) < 0)
		goto out;
	if (spec->self_archive)
		self_archive = spec->self_archive > 0;
	if (self_archive && mf_dir(m, "boot", err) < 0)
		goto out;

	initramfs_init_script(spec, self_archive, &script);
	if (mf_inline(m, "init", S_IFREG | 0755, script.buf, script.len, err) < 0)
		goto out;
	qsort(m->e, m->nr, sizeof(*m->e), entry_cmp);
	rc = 0;
out:
	strbuf_release(&script);
	return rc;
}

/* ------------------------------------------------------------------ */
/* hashing and writing                                                  */

static int hash_file(struct sha256 *s, const char *path, uint64_t *size, struct strbuf *err)
{
	static char buf[1 << 16];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	*size = 0;
	if (fd < 0) {
		strbuf_addf(err, "initramfs: %s: %s", path, strerror(errno));
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		sha256_update(s, buf, (size_t)n);
		*size += (uint64_t)n;
	}
	if (n < 0)
		strbuf_addf(err, "initramfs: reading %s: %s", path, strerror(errno));
	close(fd);
	return n < 0 ? -1 : 0;
}

static int mf_hash(struct manifest *m, char hex[65], struct strbuf *err)
{
	struct sha256 s;
	unsigned char d[32];
	char tmp[64];

	sha256_init(&s);
	snprintf(tmp, sizeof(tmp), "schedlab-initramfs %d\n", INITRAMFS_BUILDER_VERSION);
	sha256_update(&s, tmp, strlen(tmp));
	for (size_t i = 0; i < m->nr; i++) {
		struct entry *e = &m->e[i];
		uint64_t size = e->data.len;
		sha256_update(&s, e->dst, strlen(e->dst) + 1);
		snprintf(tmp, sizeof(tmp), "%o %u %u\n", e->mode, e->rmaj, e->rmin);
		sha256_update(&s, tmp, strlen(tmp));
		if (e->src) {
			if (hash_file(&s, e->src, &size, err) < 0)
				return -1;
		} else {
			sha256_update(&s, e->data.buf, e->data.len);
		}
		snprintf(tmp, sizeof(tmp), "\n%llu\n", (unsigned long long)size);
		sha256_update(&s, tmp, strlen(tmp));
	}
	sha256_final(&s, d);
	sha256_hex(d, hex);
	return 0;
}

static int write_file_entry(struct cpio_out *o, const struct entry *e, struct strbuf *err)
{
	static char buf[1 << 16];
	int fd = open(e->src, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint64_t left;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0) {
		strbuf_addf(err, "initramfs: %s: %s", e->src, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if ((uint64_t)st.st_size > 0xffffffffu) {
		strbuf_addf(err, "initramfs: %s is too large for newc", e->src);
		close(fd);
		return -1;
	}
	cpio_header(o, e->dst, e->mode, (uint64_t)st.st_size, 0, 0);
	for (left = (uint64_t)st.st_size; left; left -= (uint64_t)n) {
		n = read(fd, buf, left < sizeof(buf) ? left : sizeof(buf));
		if (n <= 0) {
			strbuf_addf(err, "initramfs: %s changed while being archived", e->src);
			close(fd);
			return -1;
		}
		cpio_emit(o, buf, (size_t)n);
	}
	close(fd);
	cpio_pad4(o);
	return 0;
}

static int mkdir_p(const char *path, struct strbuf *err)
{
	char *tmp = xstrdup(path);
	for (char *s = tmp + 1;; s++) {
		if (*s == '/' || !*s) {
			char c = *s;
			*s = '\0';
			if (mkdir(tmp, 0755) < 0 && errno != EEXIST) {
				strbuf_addf(err, "initramfs: mkdir %s: %s", tmp, strerror(errno));
				free(tmp);
				return -1;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(tmp);
	return 0;
}

static int default_cache_dir(struct strbuf *dir, struct strbuf *err)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (x && *x)
		strbuf_addf(dir, "%s/schedlab/initramfs", x);
	else if (home && *home)
		strbuf_addf(dir, "%s/.cache/schedlab/initramfs", home);
	else {
		strbuf_addstr(err, "initramfs: neither XDG_CACHE_HOME nor HOME is set");
		return -1;
	}
	return 0;
}

/*
 * Keep the INITRAMFS_CACHE_KEEP most recently used archives of the cache
 * folder (a hit refreshes the mtime); older ones go. Errors are ignored: the
 * cache is only a cache.
 */
#define INITRAMFS_CACHE_KEEP 6

struct cached {
	char *path;
	struct timespec mtime;
};

static int cached_cmp(const void *a, const void *b)
{
	const struct cached *x = a, *y = b;
	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? 1 : -1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? 1 : -1;
	return 0;
}

static void prune_cache(const char *dir)
{
	DIR *d = opendir(dir);
	struct cached *c = NULL;
	size_t n = 0, alloc = 0, i;
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		struct stat st;
		char *p;
		if (len != 64 + 5 || strcmp(de->d_name + 64, ".cpio"))
			continue;
		p = xstrfmt("%s/%s", dir, de->d_name);
		if (stat(p, &st) < 0) {
			free(p);
			continue;
		}
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 16;
			c = xrealloc(c, alloc * sizeof(*c));
		}
		c[n].path = p;
		c[n++].mtime = st.st_mtim;
	}
	closedir(d);
	if (n)
		qsort(c, n, sizeof(*c), cached_cmp);
	for (i = 0; i < n; i++) {
		if (i >= INITRAMFS_CACHE_KEEP)
			unlink(c[i].path);
		free(c[i].path);
	}
	free(c);
}

int initramfs_build(const struct initramfs_spec *spec, char *out_path, size_t out_len,
		    struct strbuf *err)
{
	struct manifest m = { 0 };
	struct strbuf dir = STRBUF_INIT, path = STRBUF_INIT, tmp = STRBUF_INIT;
	struct cpio_out o;
	char hex[65];
	int fd = -1, rc = -1;

	if (collect(spec, &m, err) < 0 || mf_hash(&m, hex, err) < 0)
		goto out;
	if (spec->cache_dir)
		strbuf_addstr(&dir, spec->cache_dir);
	else if (default_cache_dir(&dir, err) < 0)
		goto out;
	strbuf_addf(&path, "%s/%s.cpio", dir.buf, hex);
	if (path.len + 1 > out_len) {
		strbuf_addf(err, "initramfs: path %s too long", path.buf);
		goto out;
	}
	if (access(path.buf, R_OK) == 0) {
		utimensat(AT_FDCWD, path.buf, NULL, 0); /* most recently used */
		memcpy(out_path, path.buf, path.len + 1);
		rc = 0;
		goto out;
	}
	if (mkdir_p(dir.buf, err) < 0)
		goto out;
	strbuf_addf(&tmp, "%s.tmp.%d", path.buf, (int)getpid());
	fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		strbuf_addf(err, "initramfs: %s: %s", tmp.buf, strerror(errno));
		goto out;
	}
	cpio_out_init_fd(&o, fd);
	for (size_t i = 0; i < m.nr && !o.error; i++) {
		struct entry *e = &m.e[i];
		if (e->src) {
			if (write_file_entry(&o, e, err) < 0)
				goto out;
		} else {
			cpio_add(&o, e->dst, e->mode, e->data.buf, e->data.len, e->rmaj, e->rmin);
		}
	}
	cpio_finish(&o);
	if (o.error || fsync(fd) < 0 || close(fd) < 0) {
		strbuf_addf(err, "initramfs: writing %s: %s", tmp.buf,
			    strerror(o.error ? o.error : errno));
		fd = -1;
		goto out;
	}
	fd = -1;
	if (rename(tmp.buf, path.buf) < 0) {
		strbuf_addf(err, "initramfs: rename to %s: %s", path.buf, strerror(errno));
		goto out;
	}
	memcpy(out_path, path.buf, path.len + 1);
	prune_cache(dir.buf);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0 && tmp.len)
		unlink(tmp.buf);
	mf_release(&m);
	strbuf_release(&dir);
	strbuf_release(&path);
	strbuf_release(&tmp);
	return rc;
}
