/*
 * The ssh target's workload bundle: programs + libraries + loader resolved
 * with initramfs_resolve, a MANIFEST whose SHA-256 names the bundle, and
 * the ustar stream that carries it over ssh. bundle.h describes the layout
 * and how the agent runs the programs.
 */
#include "harness/targets/bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/targets/initramfs.h"
#include "harness/targets/pgfiles.h"
#include "harness/util/proc.h"
#include "harness/util/sha256.h"

void bundle_init(struct bundle *b)
{
	memset(b, 0, sizeof(*b));
	b->tools = json_object();
}

void bundle_release(struct bundle *b)
{
	for (size_t i = 0; i < b->nr; i++) {
		free(b->f[i].dst);
		free(b->f[i].src);
		strbuf_release(&b->f[i].data);
	}
	free(b->f);
	json_decref(b->tools);
	free(b->loader);
	free(b->loader_src);
	memset(b, 0, sizeof(*b));
}

static struct bundle_file *find(struct bundle *b, const char *dst)
{
	for (size_t i = 0; i < b->nr; i++)
		if (!strcmp(b->f[i].dst, dst))
			return &b->f[i];
	return NULL;
}

static struct bundle_file *add(struct bundle *b, const char *dst)
{
	if (b->nr == b->alloc) {
		b->alloc = b->alloc ? 2 * b->alloc : 32;
		b->f = xrealloc(b->f, b->alloc * sizeof(*b->f));
	}
	struct bundle_file *f = &b->f[b->nr++];
	memset(f, 0, sizeof(*f));
	f->dst = xstrdup(dst);
	strbuf_init(&f->data, 0);
	return f;
}

static int hash_path(const char *path, char hex[65], uint64_t *size, struct strbuf *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;
	if (fd < 0) {
		strbuf_addf(err, "bundle: %s: %s", path, strerror(errno));
		return -1;
	}
	r = sha256_fd(fd, hex, size);
	if (r < 0)
		strbuf_addf(err, "bundle: reading %s: %s", path, strerror(errno));
	close(fd);
	return r;
}

/* a relative path of plain names, fit for the tar name field and a shell word */
static int dst_ok(const char *dst)
{
	if (!*dst || *dst == '/' || strlen(dst) >= 100 || strstr(dst, "//"))
		return 0;
	for (const char *p = dst; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("/._+-", *p)))
			return 0;
	return strcmp(dst, "..") && strncmp(dst, "../", 3) && !strstr(dst, "/../") &&
	       !strstr(dst, "/./") && strncmp(dst, "./", 2);
}

int bundle_add_file(struct bundle *b, const char *dst, const char *src, struct strbuf *err)
{
	char hex[65];
	uint64_t size;
	if (!dst_ok(dst)) {
		strbuf_addf(err, "bundle: %s: not a usable file name in the bundle", dst);
		return -1;
	}
	if (hash_path(src, hex, &size, err) < 0)
		return -1;
	struct bundle_file *f = find(b, dst);
	if (f) {
		if (!strcmp(f->sha256, hex))
			return 0;
		strbuf_addf(err, "bundle: %s would be both %s and %s (different files)", dst,
			    f->src ? f->src : "(generated)", src);
		return -1;
	}
	f = add(b, dst);
	f->src = xstrdup(src);
	f->size = size;
	memcpy(f->sha256, hex, sizeof(hex));
	b->bytes += size;
	return 0;
}

int bundle_add_data(struct bundle *b, const char *dst, const char *data, size_t len,
		    struct strbuf *err)
{
	unsigned char d[32];
	struct sha256 s;
	if (!dst_ok(dst) || find(b, dst)) {
		strbuf_addf(err, "bundle: %s: not a usable file name, or added twice", dst);
		return -1;
	}
	struct bundle_file *f = add(b, dst);
	strbuf_add(&f->data, data, len);
	f->size = len;
	sha256_init(&s);
	sha256_update(&s, data, len);
	sha256_final(&s, d);
	sha256_hex(d, f->sha256);
	b->bytes += len;
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* a resolved program's libraries into lib/, its loader too (one loader for
 * the whole bundle) */
static int add_libs(struct bundle *b, const struct initramfs_prog *p, struct strbuf *err)
{
	for (size_t i = 0; i < p->libs.nr; i++) {
		char *ld = xstrfmt("lib/%s", base_name(p->libs.v[i]));
		int r = bundle_add_file(b, ld, p->libs.v[i], err);
		free(ld);
		if (r < 0)
			return -1;
	}
	if (!p->interp)
		return 0;
	char *ld = xstrfmt("lib/%s", base_name(p->interp));
	if (b->loader && strcmp(b->loader, ld)) {
		strbuf_addf(err, "bundle: %s uses the loader %s, another program %s", p->path,
			    p->interp, b->loader);
		free(ld);
		return -1;
	}
	if (!find(b, ld) && bundle_add_file(b, ld, p->interp, err) < 0) {
		free(ld);
		return -1;
	}
	if (!b->loader) {
		b->loader = ld;
		b->loader_src = xstrdup(p->interp);
	} else {
		free(ld);
	}
	return 0;
}

int bundle_add_program(struct bundle *b, const char *name, struct strbuf *err)
{
	struct initramfs_prog p;
	int rc = -1;
	if (initramfs_resolve(name, "bundle", &p, err) < 0)
		return -1;
	const char *base = base_name(p.path);
	char *dst = xstrfmt("bin/%s", base);
	if (bundle_add_file(b, dst, p.path, err) < 0 || add_libs(b, &p, err) < 0)
		goto out;
	json_object_set_new(b->tools, base, json_string(p.interp ? "dynamic" : "static"));
	rc = 0;
out:
	free(dst);
	initramfs_prog_release(&p);
	return rc;
}

int bundle_add_pg(struct bundle *b, struct strbuf *err)
{
	struct pg_files pf = { STRVEC_INIT, STRVEC_INIT };
	int rc = -1;
	if (b->pg)
		return 0;
	if (pg_files_collect(&pf, "bundle", err) < 0)
		goto out;
	for (const char *const *v = pg_programs; *v; v++) {
		struct initramfs_prog p;
		if (initramfs_resolve(*v, "bundle", &p, err) < 0)
			goto out;
		char *dst = xstrfmt(BUNDLE_PG_BIN "/%s.real", base_name(*v));
		int r = bundle_add_file(b, dst, p.path, err) < 0 || add_libs(b, &p, err) < 0;
		if (!r && !p.interp) {
			strbuf_addf(err, "bundle: %s is not a dynamic program (its wrapper runs it "
				    "through the loader)", p.path);
			r = 1;
		}
		free(dst);
		initramfs_prog_release(&p);
		if (r)
			goto out;
	}
	/* the data files keep Debian's paths under pg/ */
	for (size_t i = 0; i < pf.paths.nr; i++) {
		char *dst = xstrfmt("pg%s", pf.dsts.v[i]);
		int r = bundle_add_file(b, dst, pf.paths.v[i], err);
		free(dst);
		if (r < 0)
			goto out;
	}
	b->pg = 1;
	rc = 0;
out:
	pg_files_release(&pf);
	return rc;
}

void bundle_pg_wrapper(const struct bundle *b, const char *name, struct strbuf *out)
{
	strbuf_addf(out,
		    "#!/bin/sh\n"
		    "# PostgreSQL's %s from a schedlab workload bundle (harness/targets/bundle.h):\n"
		    "# %s.real beside this script, through the bundle's loader and libraries.\n"
		    "case $0 in\n"
		    "*/" BUNDLE_PG_BIN "/%s) B=${0%%/" BUNDLE_PG_BIN "/%s} ;;\n"
		    "*) echo \"%s: run it by its path in the bundle\" >&2; exit 127 ;;\n"
		    "esac\n"
		    "exec \"$B/%s\" --library-path \"$B/lib\" --inhibit-cache%s \"$0.real\" \"$@\"\n",
		    name, name, name, name, name, b->loader ? b->loader : "lib/ld.so",
		    b->argv0 ? " --argv0 \"$0\"" : "");
}

unsigned bundle_file_mode(const char *dst)
{
	if (!strncmp(dst, "bin/", 4))
		return 0700;
	if (!strncmp(dst, "lib/", 4))
		return 0755;
	if (!strncmp(dst, BUNDLE_PG_BIN "/", strlen(BUNDLE_PG_BIN) + 1))
		return 0755;
	if (!strncmp(dst, "pg/", 3))
		return 0644;
	return 0600;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct bundle_file *)a)->dst, ((const struct bundle_file *)b)->dst);
}

void bundle_manifest(struct bundle *b, struct strbuf *out, char hash[65])
{
	unsigned char d[32];
	struct sha256 s;
	qsort(b->f, b->nr, sizeof(*b->f), file_cmp);
	for (size_t i = 0; i < b->nr; i++)
		if (strcmp(b->f[i].dst, "MANIFEST"))
			strbuf_addf(out, "%s  %s\n", b->f[i].sha256, b->f[i].dst);
	sha256_init(&s);
	sha256_update(&s, out->buf, out->len);
	sha256_final(&s, d);
	sha256_hex(d, hash);
}

void bundle_json_text(const struct bundle *b, struct strbuf *out)
{
	json_t *j = json_pack("{s:i,s:s?,s:b,s:O}", "version", BUNDLE_VERSION, "loader", b->loader,
			      "argv0", b->argv0, "tools", b->tools);
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	strbuf_addstr(out, s);
	strbuf_addch(out, '\n');
	free(s);
	json_decref(j);
}

int bundle_finish(struct bundle *b, int probe_argv0, struct strbuf *err)
{
	struct strbuf t = STRBUF_INIT;
	int rc = -1;
	if (probe_argv0 && b->loader_src) {
		const char *argv[] = { b->loader_src, "--help", NULL };
		struct strbuf out = STRBUF_INIT, eo = STRBUF_INIT, e = STRBUF_INIT;
		struct proc_result res;
		b->argv0 = proc_capture(argv, 10, &out, &eo, &res, &e) == 0 &&
			   strstr(out.buf, "--argv0") != NULL;
		strbuf_release(&out);
		strbuf_release(&eo);
		strbuf_release(&e);
	}
	/* PostgreSQL's wrappers, which depend on the loader and its --argv0 */
	for (const char *const *v = pg_programs; b->pg && *v; v++) {
		const char *name = base_name(*v);
		char *dst = xstrfmt(BUNDLE_PG_BIN "/%s", name);
		int r;
		strbuf_reset(&t);
		bundle_pg_wrapper(b, name, &t);
		r = bundle_add_data(b, dst, t.buf, t.len, err);
		free(dst);
		if (r < 0)
			goto out;
	}
	strbuf_reset(&t);
	bundle_json_text(b, &t);
	if (bundle_add_data(b, "bundle.json", t.buf, t.len, err) < 0)
		goto out;
	strbuf_reset(&t);
	bundle_manifest(b, &t, b->hash);
	if (bundle_add_data(b, "MANIFEST", t.buf, t.len, err) < 0)
		goto out;
	rc = 0;
out:
	strbuf_release(&t);
	return rc;
}

int bundle_tar_header(unsigned char h[512], const char *name, unsigned mode, uint64_t size,
		      char type)
{
	unsigned sum = 0;
	if (strlen(name) >= 100 || size > 077777777777ULL)
		return -1;
	memset(h, 0, 512);
	memcpy(h, name, strlen(name));
	snprintf((char *)h + 100, 8, "%07o", mode & 07777);
	snprintf((char *)h + 108, 8, "%07o", 0);
	snprintf((char *)h + 116, 8, "%07o", 0);
	snprintf((char *)h + 124, 12, "%011llo", (unsigned long long)size);
	snprintf((char *)h + 136, 12, "%011o", 0);
	h[156] = (unsigned char)type;
	memcpy(h + 257, "ustar", 6); /* with its NUL */
	memcpy(h + 263, "00", 2);
	memcpy(h + 265, "root", 4);
	memcpy(h + 297, "root", 4);
	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	h[155] = ' ';
	return 0;
}

static int write_all(int fd, const void *buf, size_t len, struct strbuf *err)
{
	const char *p = buf;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			strbuf_addf(err, "bundle: sending the archive: %s", strerror(errno));
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

static int write_entry(const struct bundle_file *f, int fd, struct strbuf *err)
{
	static unsigned char buf[1 << 16];
	unsigned char h[512];
	uint64_t left = f->size;
	if (bundle_tar_header(h, f->dst, bundle_file_mode(f->dst), f->size, '0') < 0) {
		strbuf_addf(err, "bundle: %s does not fit a tar header", f->dst);
		return -1;
	}
	if (write_all(fd, h, 512, err) < 0)
		return -1;
	if (!f->src) {
		if (write_all(fd, f->data.buf, f->data.len, err) < 0)
			return -1;
	} else {
		int in = open(f->src, O_RDONLY | O_CLOEXEC);
		if (in < 0) {
			strbuf_addf(err, "bundle: %s: %s", f->src, strerror(errno));
			return -1;
		}
		while (left) {
			ssize_t n = read(in, buf, left < sizeof(buf) ? left : sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				strbuf_addf(err, "bundle: %s changed while it was sent", f->src);
				close(in);
				return -1;
			}
			if (write_all(fd, buf, (size_t)n, err) < 0) {
				close(in);
				return -1;
			}
			left -= (uint64_t)n;
		}
		close(in);
	}
	memset(h, 0, sizeof(h));
	size_t pad = (512 - f->size % 512) % 512;
	return pad ? write_all(fd, h, pad, err) : 0;
}

void bundle_dirs(const struct bundle *b, struct strvec *dirs)
{
	for (size_t i = 0; i < b->nr; i++)
		for (const char *s = strchr(b->f[i].dst, '/'); s; s = strchr(s + 1, '/')) {
			char *d = xstrdup(b->f[i].dst);
			d[s - b->f[i].dst + 1] = '\0';
			size_t j;
			for (j = 0; j < dirs->nr && strcmp(dirs->v[j], d); j++)
				;
			if (j == dirs->nr)
				strvec_push(dirs, d);
			free(d);
		}
	qsort(dirs->v, dirs->nr, sizeof(*dirs->v), str_cmp);
}

uint64_t bundle_tar_size(const struct bundle *b)
{
	struct strvec dirs = STRVEC_INIT;
	bundle_dirs(b, &dirs);
	uint64_t n = 512 * (uint64_t)dirs.nr + 1024; /* the folders, the end */
	strvec_clear(&dirs);
	for (size_t i = 0; i < b->nr; i++)
		n += 512 + (b->f[i].size + 511) / 512 * 512;
	return n;
}

int bundle_write_tar(const struct bundle *b, int fd, struct strbuf *err)
{
	unsigned char h[1024];
	struct strvec dirs = STRVEC_INIT;
	int rc = -1;
	/* every folder first, parents before children, so that none is made
	   by tar with the umask's mode (0700 under the ssh script's 077) */
	bundle_dirs(b, &dirs);
	for (size_t i = 0; i < dirs.nr; i++) {
		if (bundle_tar_header(h, dirs.v[i], strcmp(dirs.v[i], "bin/") ? 0755 : 0700, 0,
				      '5') < 0) {
			strbuf_addf(err, "bundle: %s does not fit a tar header", dirs.v[i]);
			goto out;
		}
		if (write_all(fd, h, 512, err) < 0)
			goto out;
	}
	for (size_t i = 0; i < b->nr; i++)
		if (write_entry(&b->f[i], fd, err) < 0)
			goto out;
	memset(h, 0, sizeof(h));
	rc = write_all(fd, h, sizeof(h), err);
out:
	strvec_clear(&dirs);
	return rc;
}

json_t *bundle_request(const struct bundle *b, const char *remote_dir)
{
	return json_pack("{s:s,s:s?,s:b,s:O}", "dir", remote_dir, "loader", b->loader, "argv0",
			 b->argv0, "tools", b->tools);
}
