/*
 * The initramfs builder of the qemu target (see initramfs.h for the layout,
 * the cache and the carried copy for kexec). A build runs in four steps:
 *   0. the spec's key names an index file; when every host file it lists is
 *      unchanged, its archive is the answer and nothing else runs;
 *   1. collect a manifest: directories, busybox and its applet links, the
 *      binaries and the libraries `ldd` lists for each dynamic one, the extra
 *      files, /init, /etc/passwd; sorted by path so parents come first and
 *      the archive is byte-for-byte reproducible (mtime 0, uid 0);
 *   2. hash the manifest including every file's bytes and the output
 *      options (SHA-256);
 *   3. on a cache miss write the archive (newc in memory, then LZ4, then the
 *      carry wrapper) to <name>.tmp.<pid> in the cache folder and link it
 *      into place; then write the index of step 0 and prune the cache.
 * Whatever archive a build answers with, it holds it first (a shared flock,
 * hold_archive; given to the caller as initramfs_build's hold), so that
 * the pruning of other processes leaves it alone.
 * Step 1 is collect(): mf_skeleton, add_binaries (each resolved by
 * initramfs_resolve, which the ssh target's workload bundle shares, then
 * add_libs),
 * add_busybox (applet links where no binary took the name), add_extra_files,
 * then /init. Child processes (ldd, busybox --list) go through
 * harness/util/proc.h.
 */
#include "harness/targets/initramfs.h"
#include "harness/targets/lz4.h"
#include "harness/util/sha256.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/util/kelf.h"
#include "harness/util/proc.h"

/* ------------------------------------------------------------------ */
/* ELF and ldd                                                          */

/* the PT_INTERP segment of the ELF in buf: 1 with its file range, 0 when
 * there is none, -1 when buf is not an ELF we understand */
static int find_interp(const unsigned char *buf, size_t len, uint64_t *off, uint64_t *size)
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
		if (type != PT_INTERP)
			continue;
		if (is64) {
			Elf64_Phdr p;
			memcpy(&p, ph, sizeof(p));
			*off = p.p_offset, *size = p.p_filesz;
		} else {
			Elf32_Phdr p;
			memcpy(&p, ph, sizeof(p));
			*off = p.p_offset, *size = p.p_filesz;
		}
		return 1;
	}
	return 0;
}

int initramfs_elf_is_dynamic(const unsigned char *buf, size_t len)
{
	uint64_t off, size;
	return find_interp(buf, len, &off, &size);
}

int initramfs_elf_interp(const unsigned char *buf, size_t len, struct strbuf *out)
{
	uint64_t off = 0, size = 0;
	int r = find_interp(buf, len, &off, &size);
	if (r != 1)
		return r;
	if (off > len || size > len - off || size < 2 || buf[off] != '/')
		return -1;
	strbuf_add(out, (const char *)buf + off, strnlen((const char *)buf + off, size));
	return 1;
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

void initramfs_dlopen_companions(const struct strvec *libs, struct strvec *extra)
{
	for (size_t i = 0; i < libs->nr; i++) {
		const char *p = libs->v[i], *slash = strrchr(p, '/');
		if (!slash || strcmp(slash + 1, "libc.so.6"))
			continue;
		char *gcc = xstrfmt("%.*s/libgcc_s.so.1", (int)(slash - p), p);
		int seen = 0;
		for (size_t k = 0; k < libs->nr; k++)
			seen |= !strcmp(libs->v[k], gcc);
		for (size_t k = 0; k < extra->nr; k++)
			seen |= !strcmp(extra->v[k], gcc);
		if (!seen)
			strvec_push(extra, gcc);
		free(gcc);
	}
}

/* ------------------------------------------------------------------ */
/* /init                                                                */

void initramfs_init_script(const struct initramfs_spec *spec, struct strbuf *o)
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
		    "ip link set lo up\n"
		    "read -r up idle </proc/uptime\n"
		    "echo \"schedlab-init: up at $up s\"\n",
		    INITRAMFS_BUILDER_VERSION);
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
	if (spec->agent_batch) {
		/* kernel messages off the console while frames are written */
		strbuf_addf(o,
			    "dmesg -n 1\n"
			    "echo \"schedlab-init: starting schedlab-agent --batch %s\"\n"
			    "schedlab-agent --batch %s\n"
			    "echo \"schedlab-batch: end status $?\"\n"
			    "poweroff -f\n",
			    spec->agent_batch, spec->agent_batch);
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
	int trim;                 /* src is an ELF to store trimmed (elf_trim) */
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
	if (len) /* a device node has no data (NULL) */
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

/* the libraries of one binary (nothing for static ones and scripts) and its
 * loader (PT_INTERP) */
static int find_libs(const char *bin, const char *who, struct strvec *libs, char **interp,
		     struct strbuf *err)
{
	static unsigned char head[65536];
	ssize_t n = read_head(bin, head, sizeof(head));
	const char *argv[] = { "ldd", bin, NULL };
	struct strbuf out = STRBUF_INIT, errout = STRBUF_INIT, ip = STRBUF_INIT;
	struct strvec extra = STRVEC_INIT;
	struct proc_result res;
	int dyn, rc = -1;

	if (n < 0) {
		strbuf_addf(err, "%s: %s: %s", who, bin, strerror(errno));
		return -1;
	}
	if (n < SELFMAG || memcmp(head, ELFMAG, SELFMAG))
		return 0; /* a script */
	dyn = initramfs_elf_interp(head, (size_t)n, &ip);
	if (dyn == 0)
		return 0;
	if (dyn == 1)
		*interp = strbuf_detach(&ip, NULL);
	if (proc_capture(argv, 60, &out, &errout, &res, err) < 0)
		goto out;
	if (res.exit_code != 0) {
		if (strstr(out.buf, "not a dynamic executable") ||
		    strstr(errout.buf, "not a dynamic executable")) {
			rc = 0;
			goto out;
		}
		strbuf_trim(&errout);
		strbuf_addf(err, "%s: ldd %s failed (status %d): %s", who, bin, res.exit_code,
			    errout.buf);
		goto out;
	}
	if (initramfs_parse_ldd(out.buf, libs, err) < 0) {
		strbuf_addf(err, " (needed by %s)", bin);
		goto out;
	}
	/* what glibc dlopen()s (libgcc_s), when this host has it */
	initramfs_dlopen_companions(libs, &extra);
	for (size_t i = 0; i < extra.nr; i++)
		if (access(extra.v[i], R_OK) == 0)
			strvec_push(libs, extra.v[i]);
	rc = 0;
out:
	strbuf_release(&out);
	strbuf_release(&errout);
	strbuf_release(&ip);
	strvec_clear(&extra);
	return rc;
}

static char *resolve_binary(const char *name, const char *who, struct strbuf *err)
{
	char *p;
	if (strchr(name, '/')) {
		if (access(name, X_OK) < 0) {
			strbuf_addf(err, "%s: %s: %s", who, name, strerror(errno));
			return NULL;
		}
		return xstrdup(name);
	}
	p = proc_which(name);
	if (!p)
		strbuf_addf(err, "%s: %s not found in PATH", who, name);
	return p;
}

int initramfs_resolve(const char *name, const char *who, struct initramfs_prog *p,
		      struct strbuf *err)
{
	memset(p, 0, sizeof(*p));
	p->path = resolve_binary(name, who, err);
	if (!p->path)
		return -1;
	if (find_libs(p->path, who, &p->libs, &p->interp, err) < 0) {
		initramfs_prog_release(p);
		return -1;
	}
	return 0;
}

void initramfs_prog_release(struct initramfs_prog *p)
{
	free(p->path);
	free(p->interp);
	strvec_clear(&p->libs);
	memset(p, 0, sizeof(*p));
}

/* a resolved program's libraries into the manifest, at the paths ldd printed */
static int add_libs(struct manifest *m, const struct initramfs_prog *p, struct strbuf *err)
{
	for (size_t i = 0; i < p->libs.nr; i++) {
		char *dst = guest_path(p->libs.v[i]);
		int r = mf_file(m, dst, p->libs.v[i], 0, 1, err);
		free(dst);
		if (r < 0)
			return -1;
	}
	return 0;
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
 * /etc/passwd and /etc/group (root, and nobody for PostgreSQL) */
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
	/* nobody: the user the pgbench workload's PostgreSQL runs as (it
	 * refuses root, and initdb needs a passwd entry for its uid) */
	p = "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n";
	mf_inline(m, "etc/passwd", S_IFREG | 0644, p, strlen(p), err);
	p = "root:x:0:\nnogroup:x:65534:\n";
	mf_inline(m, "etc/group", S_IFREG | 0644, p, strlen(p), err);
}

/* spec->binaries into /bin with their libraries */
static int add_binaries(const struct initramfs_spec *spec, struct manifest *m,
			struct strbuf *err)
{
	for (size_t i = 0; spec->binaries && spec->binaries[i]; i++) {
		struct initramfs_prog p;
		char *dst;
		int r;
		if (initramfs_resolve(spec->binaries[i], "initramfs", &p, err) < 0)
			return -1;
		dst = xstrfmt("bin/%s", base_name(p.path));
		r = mf_file(m, dst, p.path, 0, 0, err);
		if (!r)
			r = add_libs(m, &p, err);
		free(dst);
		initramfs_prog_release(&p);
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
	struct initramfs_prog p;
	const char *busybox;
	int rc = -1;

	if (initramfs_resolve(spec->busybox ? spec->busybox : "busybox", "initramfs", &p, err) < 0)
		return -1;
	busybox = p.path;
	if (mf_file(m, "bin/busybox", busybox, 0755, 0, err) || add_libs(m, &p, err))
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
	initramfs_prog_release(&p);
	strbuf_release(&out);
	strbuf_release(&errout);
	return rc;
}

/* spec->files */
static int add_extra_files(const struct initramfs_spec *spec, struct manifest *m,
			   struct strbuf *err)
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
		if (!r)
			mf_find(m, dst)->trim = f->elf_trim;
		free(dst);
		if (r < 0)
			return -1;
	}
	return 0;
}

static int collect(const struct initramfs_spec *spec, struct manifest *m, struct strbuf *err)
{
	struct strbuf script = STRBUF_INIT;
	int rc = -1;

	if (spec->agent_tty && !tty_ok(spec->agent_tty)) {
		strbuf_addf(err, "initramfs: bad agent tty '%s'", spec->agent_tty);
		return -1;
	}
	if (spec->agent_batch && !tty_ok(spec->agent_batch)) {
		strbuf_addf(err, "initramfs: bad batch file path '%s'", spec->agent_batch);
		return -1;
	}
	if (spec->carry && (spec->carry[0] != '/' || !spec->carry[1] || strchr(spec->carry, '\n'))) {
		strbuf_addf(err, "initramfs: the carried copy needs an absolute path, not '%s'",
			    spec->carry);
		return -1;
	}
	mf_skeleton(m, err);
	/* the binaries first, so that they win over busybox applets */
	if (add_binaries(spec, m, err) < 0 || add_busybox(spec, m, err) < 0 ||
	    add_extra_files(spec, m, err) < 0)
		goto out;
	if (spec->carry) {
		char *dst = guest_path(spec->carry);
		int taken = mf_find(m, dst) != NULL;
		if (taken)
			strbuf_addf(err, "initramfs: /%s is both a file and the carried copy", dst);
		free(dst);
		if (taken)
			goto out;
	}
	initramfs_init_script(spec, &script);
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

/* the output options that change the bytes written, for both keys */
static void hash_options(struct sha256 *s, const struct initramfs_spec *spec)
{
	char tmp[64];
	snprintf(tmp, sizeof(tmp), "compress %d carry %d\n", (int)spec->compress, !!spec->carry);
	sha256_update(s, tmp, strlen(tmp));
	if (spec->carry)
		sha256_update(s, spec->carry, strlen(spec->carry) + 1);
}

static int mf_hash(struct manifest *m, const struct initramfs_spec *spec, char hex[65],
		   struct strbuf *err)
{
	struct sha256 s;
	unsigned char d[32];
	char tmp[64];

	sha256_init(&s);
	snprintf(tmp, sizeof(tmp), "schedlab-initramfs %d\n", INITRAMFS_BUILDER_VERSION);
	sha256_update(&s, tmp, strlen(tmp));
	hash_options(&s, spec);
	for (size_t i = 0; i < m->nr; i++) {
		struct entry *e = &m->e[i];
		uint64_t size = e->data.len;
		sha256_update(&s, e->dst, strlen(e->dst) + 1);
		snprintf(tmp, sizeof(tmp), "%o %u %u%s\n", e->mode, e->rmaj, e->rmin,
			 e->trim ? " trim" : "");
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

/* a host file as one entry; an elf_trim file trimmed when it is an ELF64 */
static int write_file_entry(struct cpio_out *o, const struct entry *e, struct strbuf *err)
{
	struct strbuf data = STRBUF_INIT, trimmed = STRBUF_INIT;
	const struct strbuf *out = &data;
	int rc = -1;

	if (strbuf_read_file(&data, e->src, 0)) {
		strbuf_addf(err, "initramfs: %s: %s", e->src, strerror(errno));
		goto done;
	}
	if (e->trim && !kelf_trim((const unsigned char *)data.buf, data.len, &trimmed))
		out = &trimmed;
	if ((uint64_t)out->len > 0xffffffffu) {
		strbuf_addf(err, "initramfs: %s is too large for newc", e->src);
		goto done;
	}
	cpio_add(o, e->dst, e->mode, out->buf, out->len, 0, 0);
	rc = 0;
done:
	strbuf_release(&data);
	strbuf_release(&trimmed);
	return rc;
}

/* ------------------------------------------------------------------ */
/* the spec's key and the index                                         */

static void key_str(struct sha256 *s, const char *v)
{
	char tmp[32];
	if (!v) {
		sha256_update(s, "N;", 2);
		return;
	}
	snprintf(tmp, sizeof(tmp), "S%zu:", strlen(v));
	sha256_update(s, tmp, strlen(tmp));
	sha256_update(s, v, strlen(v));
}

static void key_num(struct sha256 *s, long long v)
{
	char tmp[32];
	snprintf(tmp, sizeof(tmp), "I%lld;", v);
	sha256_update(s, tmp, strlen(tmp));
}

void initramfs_spec_key(const struct initramfs_spec *spec, const char *path_env,
			const char *ld_library_path, char hex[65])
{
	struct sha256 s;
	unsigned char d[32];
	size_t n = 0;

	sha256_init(&s);
	key_str(&s, "schedlab-initramfs-spec");
	key_num(&s, INITRAMFS_BUILDER_VERSION);
	key_str(&s, spec->busybox);
	while (spec->binaries && spec->binaries[n])
		n++;
	key_num(&s, spec->binaries ? (long long)n : -1);
	for (size_t i = 0; i < n; i++)
		key_str(&s, spec->binaries[i]);
	key_num(&s, (long long)spec->nr_files);
	for (size_t i = 0; i < spec->nr_files; i++) {
		key_str(&s, spec->files[i].src);
		key_str(&s, spec->files[i].dst);
		key_num(&s, spec->files[i].mode);
		key_num(&s, spec->files[i].elf_trim);
	}
	key_str(&s, spec->agent_tty);
	if (spec->agent_batch) { /* absent: the keys of before stay valid */
		key_str(&s, "agent_batch");
		key_str(&s, spec->agent_batch);
	}
	key_str(&s, spec->init_cmd);
	key_str(&s, spec->extra_init);
	key_num(&s, spec->compress);
	key_str(&s, spec->carry);
	key_str(&s, path_env);
	key_str(&s, ld_library_path);
	sha256_final(&s, d);
	sha256_hex(d, hex);
}

#define INDEX_MAGIC "schedlab-initramfs-index 1\n"

int initramfs_index_add(struct strbuf *idx, const char *path)
{
	struct stat st;
	if (strchr(path, '\n'))
		return -1;
	if (stat(path, &st) < 0) {
		strbuf_addf(idx, "- %s\n", path);
		return 0;
	}
	strbuf_addf(idx, "F %lld %lld.%09ld %lld.%09ld %llu %llu %s\n", (long long)st.st_size,
		    (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec,
		    st.st_ctim.tv_nsec, (unsigned long long)st.st_ino,
		    (unsigned long long)st.st_dev, path);
	return 0;
}

int initramfs_index_valid(const char *text, struct strbuf *archive)
{
	struct strbuf now = STRBUF_INIT;
	const char *p, *eol, *path;
	int ok = 1;

	if (strncmp(text, INDEX_MAGIC, strlen(INDEX_MAGIC)))
		return 0;
	p = text + strlen(INDEX_MAGIC);
	if (strncmp(p, "archive ", 8) || !(eol = strchr(p, '\n')) || eol == p + 8)
		return 0;
	strbuf_reset(archive);
	strbuf_add(archive, p + 8, (size_t)(eol - p - 8));
	if (strchr(archive->buf, '/'))
		ok = 0;
	for (p = eol + 1; ok && *p; p = eol + 1) {
		eol = strchr(p, '\n');
		if (!eol || (p[0] != 'F' && p[0] != '-') || p[1] != ' ') {
			ok = 0;
			break;
		}
		/* the path is the last field: after 6 fields for "F", 1 for "-" */
		path = p + 2;
		for (int f = p[0] == 'F' ? 5 : 0; f > 0 && path < eol; f--) {
			path = memchr(path, ' ', (size_t)(eol - path));
			if (!path)
				break;
			path++;
		}
		if (!path || path >= eol) {
			ok = 0;
			break;
		}
		char *pth = xmalloc((size_t)(eol - path) + 1);
		memcpy(pth, path, (size_t)(eol - path));
		pth[eol - path] = '\0';
		strbuf_reset(&now);
		initramfs_index_add(&now, pth);
		ok = now.len == (size_t)(eol - p + 1) && !memcmp(now.buf, p, now.len);
		free(pth);
	}
	strbuf_release(&now);
	return ok;
}

/* ------------------------------------------------------------------ */
/* the cache folder                                                     */

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

static const char *const suffixes[] = { ".cpio", ".cpio.lz4", ".carry.cpio", ".carry.cpio.lz4" };

static const char *archive_suffix(const struct initramfs_spec *spec)
{
	return suffixes[(spec->carry ? 2 : 0) + (spec->compress == INITRAMFS_LZ4)];
}

/* <64 hex digits><one of suffixes> */
static int archive_name(const char *name)
{
	size_t len = strlen(name);
	if (len <= 64 || strspn(name, "0123456789abcdef") != 64)
		return 0;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (!strcmp(name + 64, suffixes[i]))
			return 1;
	return 0;
}

/*
 * Keep the INITRAMFS_CACHE_KEEP most recently used archives of the cache
 * folder (a hit refreshes the mtime); older ones go, and so do index files
 * that name an archive no longer there. An archive a process holds
 * (initramfs_build's hold: a shared flock on the archive, for as long as a
 * guest may read it) is never removed, however old: it is removed only
 * under an exclusive flock taken without waiting, and only when the name
 * still names the inode locked. Errors are ignored: the cache is only a
 * cache.
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

/* does path (still) name the file open as fd? */
static int names_fd(const char *path, int fd)
{
	struct stat a, b;
	return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* remove the archive at path unless a process holds it (a shared flock) */
static void remove_unheld(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	/* a holder's shared lock, or another pruner's exclusive one: leave it */
	if (flock(fd, LOCK_EX | LOCK_NB) == 0 && names_fd(path, fd))
		unlink(path);
	close(fd); /* releases the flock */
}

static void prune_index(const char *dir)
{
	char *idir = xstrfmt("%s/index", dir);
	DIR *d = opendir(idir);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		struct strbuf text = STRBUF_INIT;
		char *p, *nl, *a = NULL;
		if (de->d_name[0] == '.')
			continue;
		p = xstrfmt("%s/%s", idir, de->d_name);
		if (!strbuf_read_file(&text, p, 1 << 20) && (nl = strstr(text.buf, "\narchive "))) {
			char *name = nl + 9, *end = strchr(name, '\n');
			if (end)
				*end = '\0';
			a = xstrfmt("%s/%s", dir, name);
		}
		if (!a || access(a, F_OK) < 0)
			unlink(p);
		free(a);
		free(p);
		strbuf_release(&text);
	}
	if (d)
		closedir(d);
	free(idir);
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
		struct stat st;
		char *p;
		if (!archive_name(de->d_name))
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
			remove_unheld(c[i].path);
		free(c[i].path);
	}
	free(c);
	prune_index(dir);
}

/*
 * Hold the archive at path: open it and take a shared flock, then check
 * that the name still names the file locked (a pruner removes a file only
 * under an exclusive lock, so once this holds, the name stays). 1 with the
 * descriptor in *fd, 0 when the archive is gone (pruned meanwhile: build it
 * again), -1 with a message.
 */
static int hold_archive(const char *path, int *fd, struct strbuf *err)
{
	int f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0) {
		if (errno == ENOENT)
			return 0;
		strbuf_addf(err, "initramfs: %s: %s", path, strerror(errno));
		return -1;
	}
	/* a pruner holds its exclusive lock only while it unlinks */
	while (flock(f, LOCK_SH) < 0) {
		if (errno != EINTR) {
			strbuf_addf(err, "initramfs: locking %s: %s", path, strerror(errno));
			close(f);
			return -1;
		}
	}
	if (!names_fd(path, f)) {
		close(f);
		return 0;
	}
	*fd = f;
	return 1;
}

void initramfs_release(int *hold)
{
	if (*hold >= 0)
		close(*hold); /* releases the flock */
	*hold = -1;
}

/* ------------------------------------------------------------------ */
/* building                                                             */

/* write all of buf to a new file path; -1 with a message */
static int write_new(const char *path, const char *buf, size_t len, struct strbuf *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	struct cpio_out o;
	if (fd < 0) {
		strbuf_addf(err, "initramfs: %s: %s", path, strerror(errno));
		return -1;
	}
	cpio_out_init_fd(&o, fd);
	cpio_emit(&o, buf, len);
	if (o.error || fsync(fd) < 0) {
		strbuf_addf(err, "initramfs: writing %s: %s", path,
			    strerror(o.error ? o.error : errno));
		close(fd);
		return -1;
	}
	if (close(fd) < 0) {
		strbuf_addf(err, "initramfs: writing %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* the archive of m as spec says (compressed, carried) into tmp */
static int write_archive(const struct initramfs_spec *spec, struct manifest *m, const char *tmp,
			 struct strbuf *err)
{
	struct strbuf plain = STRBUF_INIT, packed = STRBUF_INIT;
	const struct strbuf *z = &plain;
	struct cpio_out o;
	char *ztmp = NULL;
	int rc = -1, zfd = -1, fd = -1;

	cpio_out_init_mem(&o, &plain);
	for (size_t i = 0; i < m->nr; i++) {
		struct entry *e = &m->e[i];
		if (e->src) {
			if (write_file_entry(&o, e, err) < 0)
				goto out;
		} else {
			cpio_add(&o, e->dst, e->mode, e->data.buf, e->data.len, e->rmaj, e->rmin);
		}
	}
	cpio_finish(&o);
	if (spec->compress == INITRAMFS_LZ4) {
		lz4_legacy_compress(plain.buf, plain.len, &packed);
		strbuf_release(&plain);
		z = &packed;
	}
	if (!spec->carry) {
		rc = write_new(tmp, z->buf, z->len, err);
		goto out;
	}
	/* the carry archive reads the system archive from a file */
	ztmp = xstrfmt("%s.z", tmp);
	if (write_new(ztmp, z->buf, z->len, err) < 0)
		goto out;
	zfd = open(ztmp, O_RDONLY | O_CLOEXEC);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (zfd < 0 || fd < 0) {
		strbuf_addf(err, "initramfs: %s: %s", zfd < 0 ? ztmp : tmp, strerror(errno));
		goto out;
	}
	if (cpio_write_carry(fd, spec->carry + 1, zfd, err) < 0)
		goto out;
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		strbuf_addf(err, "initramfs: writing %s: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (zfd >= 0)
		close(zfd);
	if (ztmp)
		unlink(ztmp);
	free(ztmp);
	strbuf_release(&plain);
	strbuf_release(&packed);
	return rc;
}

/* the index of spec: every host file the archive was made from */
static void write_index(const char *dir, const char *key, const char *archive,
			const struct manifest *m)
{
	struct strbuf idx = STRBUF_INIT, err = STRBUF_INIT;
	char *idir = xstrfmt("%s/index", dir), *path = NULL, *tmp = NULL;
	int ok = 1;

	strbuf_addf(&idx, INDEX_MAGIC "archive %s\n", archive);
	/* ldd resolves through the loader's cache */
	ok &= initramfs_index_add(&idx, "/etc/ld.so.cache") == 0;
	for (size_t i = 0; ok && i < m->nr; i++)
		if (m->e[i].src)
			ok &= initramfs_index_add(&idx, m->e[i].src) == 0;
	if (ok && mkdir_p(idir, &err) == 0) {
		path = xstrfmt("%s/%s", idir, key);
		tmp = xstrfmt("%s.tmp.%d", path, (int)getpid());
		if (write_new(tmp, idx.buf, idx.len, &err) < 0 || rename(tmp, path) < 0)
			unlink(tmp);
	}
	free(idir);
	free(path);
	free(tmp);
	strbuf_release(&idx);
	strbuf_release(&err);
}

/* step 0: the archive named by a valid index of key, into path */
static int index_lookup(const char *dir, const char *key, struct strbuf *path)
{
	struct strbuf text = STRBUF_INIT, name = STRBUF_INIT;
	char *ipath = xstrfmt("%s/index/%s", dir, key);
	int hit = 0;

	if (!strbuf_read_file(&text, ipath, 1 << 20) && initramfs_index_valid(text.buf, &name) &&
	    archive_name(name.buf)) {
		strbuf_reset(path);
		strbuf_addf(path, "%s/%s", dir, name.buf);
		hit = access(path->buf, R_OK) == 0;
	}
	free(ipath);
	strbuf_release(&text);
	strbuf_release(&name);
	return hit;
}

/*
 * Put the archive written to tmp in place at path. A link, not a rename: when
 * another process published the same archive meanwhile, its file stays (and
 * with it the locks of those who hold it) and ours goes. A rename where the
 * file system has no links.
 */
static int publish(const char *tmp, const char *path, struct strbuf *err)
{
	if (link(tmp, path) == 0 || errno == EEXIST) {
		unlink(tmp);
		return 0;
	}
	if (rename(tmp, path) == 0)
		return 0;
	strbuf_addf(err, "initramfs: rename to %s: %s", path, strerror(errno));
	return -1;
}

/* how often a build starts again when the archive it found or wrote was
 * pruned before it could hold it (each time, 6 newer archives came) */
#define INITRAMFS_HOLD_TRIES 5

int initramfs_build(const struct initramfs_spec *spec, char *out_path, size_t out_len,
		    int *hold, struct strbuf *err)
{
	struct manifest m = { 0 };
	struct strbuf dir = STRBUF_INIT, path = STRBUF_INIT, tmp = STRBUF_INIT;
	char hex[65], key[65], *name = NULL;
	int rc = -1, fd = -1, r = 0;

	if (hold)
		*hold = -1;
	if (spec->cache_dir)
		strbuf_addstr(&dir, spec->cache_dir);
	else if (default_cache_dir(&dir, err) < 0)
		goto out;
	initramfs_spec_key(spec, getenv("PATH"), getenv("LD_LIBRARY_PATH"), key);
	for (int tries = 0; tries < INITRAMFS_HOLD_TRIES; tries++) {
		if (index_lookup(dir.buf, key, &path) && (r = hold_archive(path.buf, &fd, err)))
			goto held;
		if (!name) {
			if (collect(spec, &m, err) < 0 || mf_hash(&m, spec, hex, err) < 0)
				goto out;
			name = xstrfmt("%s%s", hex, archive_suffix(spec));
		}
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/%s", dir.buf, name);
		if ((r = hold_archive(path.buf, &fd, err))) {
			if (r > 0)
				write_index(dir.buf, key, name, &m);
			goto held;
		}
		if (mkdir_p(dir.buf, err) < 0)
			goto out;
		strbuf_reset(&tmp);
		strbuf_addf(&tmp, "%s.tmp.%d", path.buf, (int)getpid());
		if (write_archive(spec, &m, tmp.buf, err) < 0 || publish(tmp.buf, path.buf, err) < 0)
			goto out;
		strbuf_reset(&tmp);
		if ((r = hold_archive(path.buf, &fd, err))) {
			if (r > 0) {
				write_index(dir.buf, key, name, &m);
				prune_cache(dir.buf); /* never what this process holds */
			}
			goto held;
		}
	}
	strbuf_addf(err, "initramfs: %s was removed %d times before it could be used (the cache "
			 "folder %s is pruned by other processes)",
		    path.buf, INITRAMFS_HOLD_TRIES, dir.buf);
	goto out;
held:
	if (r < 0)
		goto out;
	if (path.len + 1 > out_len) {
		strbuf_addf(err, "initramfs: path %s too long", path.buf);
		goto out;
	}
	futimens(fd, NULL); /* most recently used */
	memcpy(out_path, path.buf, path.len + 1);
	rc = 0;
out:
	if (rc < 0 && tmp.len)
		unlink(tmp.buf);
	if (rc == 0 && hold)
		*hold = fd;
	else if (fd >= 0)
		close(fd);
	free(name);
	mf_release(&m);
	strbuf_release(&dir);
	strbuf_release(&path);
	strbuf_release(&tmp);
	return rc;
}
