/*
 * Unit tests of the ssh target's workload bundle (harness/targets/bundle.h):
 * the MANIFEST text and the hash that names the bundle (independent of the
 * order files were added, changed by any byte or any move of a file), the
 * refusal of two different files at one place and of paths that are not
 * plain relative names, bundle.json, the ustar headers (checksum, octal
 * fields, magic) and the whole archive parsed back entry by entry with its
 * size predicted by bundle_tar_size, a real program resolved with its
 * libraries (libgcc_s, which glibc dlopen()s, among them) and loader (initramfs_resolve, shared with the initramfs
 * builder; ldd on this machine), and the agent's "bundle" request object.
 * PostgreSQL's part for the pgbench workload (bundle_add_pg): the pg/
 * layout (wrappers, NAME.real, modules, share files without manual pages
 * and foreign extensions, libpq and libicu in lib/), the wrapper text, the
 * modes and a folder header before every file in the archive; the archive
 * unpacked with tar and the wrappers run (`postgres -V`, `initdb -V`
 * through the bundled loader), a wrapper moved out of its place refusing.
 * Unpacking with busybox tar on a box is tests/e2e/t0720-ssh-bundle.sh.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/targets/bundle.h"
#include "harness/targets/initramfs.h"
#include "harness/targets/pgfiles.h"
#include "harness/util/proc.h"
#include "harness/util/rmtree.h"
#include "harness/util/sha256.h"
#include "tests/unit/tap.h"

static char tmpdir[] = "/tmp/test-bundle-XXXXXX";

static char *write_tmp(const char *name, const char *content)
{
	char *p = xstrfmt("%s/%s", tmpdir, name);
	FILE *f = fopen(p, "w");
	fputs(content, f);
	fclose(f);
	return p;
}

/* a bundle of the files a, b at the given places, in that order */
static void make(struct bundle *b, const char *da, const char *sa, const char *db, const char *sb)
{
	struct strbuf err = STRBUF_INIT;
	bundle_init(b);
	CHECK(bundle_add_file(b, da, sa, &err) == 0);
	CHECK(bundle_add_file(b, db, sb, &err) == 0);
	CHECK(bundle_finish(b, 0, &err) == 0);
	strbuf_release(&err);
}

TEST(manifest_and_hash)
{
	char *a = write_tmp("a", "alpha\n"), *b = write_tmp("b", "beta\n");
	char ha[65], hb[65], h[65];
	struct bundle x, y, z;
	struct strbuf m = STRBUF_INIT, want = STRBUF_INIT;

	make(&x, "bin/a", a, "lib/b", b);
	make(&y, "lib/b", b, "bin/a", a); /* other order: same bundle */
	CHECK_STR(x.hash, y.hash);
	sha256_hex_of("alpha\n", 6, ha);
	sha256_hex_of("beta\n", 5, hb);
	/* MANIFEST: sorted, sha256sum's format, bundle.json listed, itself not */
	for (size_t i = 0; i < x.nr; i++)
		if (!strcmp(x.f[i].dst, "MANIFEST"))
			strbuf_add(&m, x.f[i].data.buf, x.f[i].data.len);
	strbuf_addf(&want, "%s  bin/a\n", ha);
	CHECK(!strncmp(m.buf, want.buf, want.len));
	CHECK_CONTAINS(m.buf, "  bundle.json\n");
	strbuf_reset(&want);
	strbuf_addf(&want, "  bundle.json\n%s  lib/b\n", hb);
	CHECK_CONTAINS(m.buf, want.buf);
	CHECK(strstr(m.buf, "MANIFEST") == NULL);
	/* the hash is the MANIFEST's own SHA-256 (what the box checks) */
	sha256_hex_of(m.buf, m.len, h);
	CHECK_STR(x.hash, h);
	/* the same bytes elsewhere: another bundle */
	make(&z, "bin/a", a, "lib/c", b);
	CHECK(strcmp(x.hash, z.hash) != 0);
	bundle_release(&z);
	/* one byte changed: another bundle */
	free(write_tmp("b", "beta!\n"));
	make(&z, "bin/a", a, "lib/b", b);
	CHECK(strcmp(x.hash, z.hash) != 0);
	CHECK(x.bytes > 11 && z.bytes == x.bytes + 1);
	bundle_release(&x);
	bundle_release(&y);
	bundle_release(&z);
	strbuf_release(&m);
	strbuf_release(&want);
	free(a);
	free(b);
}

TEST(refusals)
{
	char *a = write_tmp("a", "alpha\n"), *c = write_tmp("c", "gamma\n");
	char *a2 = write_tmp("a2", "alpha\n");
	struct bundle b;
	struct strbuf err = STRBUF_INIT;
	bundle_init(&b);
	CHECK(bundle_add_file(&b, "lib/x.so", a, &err) == 0);
	CHECK(bundle_add_file(&b, "lib/x.so", a2, &err) == 0); /* same bytes: fine */
	CHECK(bundle_add_file(&b, "lib/x.so", c, &err) == -1);
	CHECK_CONTAINS(err.buf, "lib/x.so would be both");
	CHECK_CONTAINS(err.buf, c);
	static const char *const bad[] = { "../x", "/abs", "a b", "bin/../x", "", "x\ny",
					   "./x", "bin//x", "a'b", NULL };
	for (const char *const *p = bad; *p; p++) {
		strbuf_reset(&err);
		CHECK(bundle_add_file(&b, *p, a, &err) == -1);
		CHECK_CONTAINS(err.buf, "not a usable file name");
	}
	strbuf_reset(&err);
	CHECK(bundle_add_file(&b, "bin/missing", "/nonexistent/file", &err) == -1);
	CHECK_CONTAINS(err.buf, "/nonexistent/file");
	CHECK(b.nr == 1);
	bundle_release(&b);
	strbuf_release(&err);
	free(a);
	free(a2);
	free(c);
}

TEST(json_text)
{
	struct bundle b;
	struct strbuf t = STRBUF_INIT;
	bundle_init(&b);
	json_object_set_new(b.tools, "cyclictest", json_string("dynamic"));
	json_object_set_new(b.tools, "sl-jbb", json_string("static"));
	b.loader = xstrdup("lib/ld-linux-x86-64.so.2");
	b.argv0 = 1;
	bundle_json_text(&b, &t);
	CHECK_STR(t.buf, "{\"argv0\":true,\"loader\":\"lib/ld-linux-x86-64.so.2\",\"tools\":"
			 "{\"cyclictest\":\"dynamic\",\"sl-jbb\":\"static\"},\"version\":1}\n");
	json_t *r = bundle_request(&b, "/root/.cache/schedlab/bundle/abc");
	CHECK_STR(json_string_value(json_object_get(r, "dir")), "/root/.cache/schedlab/bundle/abc");
	CHECK_STR(json_string_value(json_object_get(r, "loader")), "lib/ld-linux-x86-64.so.2");
	CHECK(json_is_true(json_object_get(r, "argv0")));
	CHECK_STR(json_string_value(json_object_get(json_object_get(r, "tools"), "sl-jbb")), "static");
	json_decref(r);
	bundle_release(&b);
	strbuf_release(&t);
}

static unsigned long long oct(const unsigned char *p, size_t n)
{
	char buf[16];
	memcpy(buf, p, n);
	buf[n] = '\0';
	return strtoull(buf, NULL, 8);
}

static unsigned cksum(const unsigned char *h)
{
	unsigned s = 0;
	for (int i = 0; i < 512; i++)
		s += (i >= 148 && i < 156) ? ' ' : h[i];
	return s;
}

TEST(tar_header)
{
	unsigned char h[512];
	CHECK(bundle_tar_header(h, "bin/cyclictest", 0700, 123456, '0') == 0);
	CHECK_STR((char *)h, "bin/cyclictest");
	CHECK(oct(h + 100, 7) == 0700);
	CHECK(oct(h + 124, 11) == 123456);
	CHECK(h[156] == '0');
	CHECK(!memcmp(h + 257, "ustar\0" "00", 8));
	CHECK(oct(h + 148, 6) == cksum(h));
	CHECK(h[154] == '\0' && h[155] == ' ');
	char longname[120];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	CHECK(bundle_tar_header(h, longname, 0600, 1, '0') == -1);
}

TEST(tar_archive)
{
	char *a = write_tmp("a", "alpha\n"), *big = xstrfmt("%s/big", tmpdir);
	FILE *f = fopen(big, "w");
	for (int i = 0; i < 3000; i++)
		fputc('0' + i % 10, f);
	fclose(f);
	struct bundle b;
	make(&b, "bin/a", a, "lib/big", big);
	char *out = xstrfmt("%s/out.tar", tmpdir);
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	struct strbuf err = STRBUF_INIT, t = STRBUF_INIT;
	CHECK(bundle_write_tar(&b, fd, &err) == 0);
	close(fd);
	CHECK(strbuf_read_file(&t, out, 1 << 20) == 0);
	CHECK(t.len == bundle_tar_size(&b));
	CHECK(t.len % 512 == 0);
	/* walk the headers: two folders, every file with its bytes, two zero blocks */
	size_t off = 0, files = 0, dirs = 0;
	while (off + 512 <= t.len) {
		const unsigned char *h = (const unsigned char *)t.buf + off;
		int zero = 1;
		for (int i = 0; i < 512; i++)
			zero &= h[i] == 0;
		if (zero)
			break;
		CHECK(oct(h + 148, 6) == cksum(h));
		unsigned long long size = oct(h + 124, 11);
		if (h[156] == '5') {
			dirs++;
		} else {
			files++;
			if (!strcmp((const char *)h, "bin/a"))
				CHECK(size == 6 && !memcmp(h + 512, "alpha\n", 6));
			if (!strcmp((const char *)h, "lib/big"))
				CHECK(size == 3000 && h[512 + 2999] == '9');
			if (!strcmp((const char *)h, "MANIFEST"))
				CHECK(oct(h + 100, 7) == 0600);
			if (!strcmp((const char *)h, "bin/a"))
				CHECK(oct(h + 100, 7) == 0700);
		}
		off += 512 + (size + 511) / 512 * 512;
	}
	CHECK(dirs == 2);
	CHECK(files == 4); /* bin/a, lib/big, bundle.json, MANIFEST */
	CHECK(off + 1024 == t.len);
	bundle_release(&b);
	strbuf_release(&err);
	strbuf_release(&t);
	free(out);
	free(big);
	free(a);
}

TEST(program_with_libraries)
{
	struct bundle b;
	struct strbuf err = STRBUF_INIT, ip = STRBUF_INIT;
	unsigned char head[4096];
	int fd = open("/bin/sh", O_RDONLY);
	ssize_t n = read(fd, head, sizeof(head));
	close(fd);
	int dyn = initramfs_elf_interp(head, (size_t)n, &ip);
	if (dyn != 1) {
		printf("# skip: /bin/sh is not a dynamic ELF here\n");
		strbuf_release(&ip);
		return;
	}
	CHECK(ip.buf[0] == '/');
	CHECK_CONTAINS(ip.buf, "ld-");
	bundle_init(&b);
	CHECK(bundle_add_program(&b, "sh", &err) == 0);
	CHECK_STR(json_string_value(json_object_get(b.tools, "sh")), "dynamic");
	CHECK(b.loader != NULL);
	CHECK_STR(b.loader_src, ip.buf);
	int have_libc = 0, have_loader = 0, have_bin = 0, have_gcc = 0;
	for (size_t i = 0; i < b.nr; i++) {
		have_gcc |= !strcmp(b.f[i].dst, "lib/libgcc_s.so.1");
		have_libc |= !strncmp(b.f[i].dst, "lib/libc.so", 11);
		have_loader |= !strcmp(b.f[i].dst, b.loader);
		have_bin |= !strcmp(b.f[i].dst, "bin/sh");
	}
	CHECK(have_libc && have_loader && have_bin);
	/* what glibc dlopen()s comes along (initramfs_dlopen_companions) */
	if (access("/lib/x86_64-linux-gnu/libgcc_s.so.1", R_OK) == 0)
		CHECK(have_gcc);
	/* a second program with the same libraries adds only itself */
	size_t before = b.nr;
	CHECK(bundle_add_program(&b, "/bin/cat", &err) == 0);
	CHECK(b.nr >= before + 1);
	CHECK(bundle_finish(&b, 1, &err) == 0);
	CHECK(strlen(b.hash) == 64);
	/* glibc >= 2.33 loaders take --argv0 (Debian 12 has 2.36) */
	printf("# loader %s, --argv0 %s\n", b.loader_src, b.argv0 ? "yes" : "no");
	strbuf_reset(&err);
	CHECK(bundle_add_program(&b, "no-such-program-schedlab", &err) == -1);
	CHECK_CONTAINS(err.buf, "bundle: no-such-program-schedlab not found in PATH");
	bundle_release(&b);
	strbuf_release(&err);
	strbuf_release(&ip);
}

static const struct bundle_file *pg_find(const struct bundle *b, const char *dst)
{
	for (size_t i = 0; i < b->nr; i++)
		if (!strcmp(b->f[i].dst, dst))
			return &b->f[i];
	return NULL;
}

/* a program's stdout+stderr and exit code */
static int run_prog(const char *const *argv, struct strbuf *out)
{
	struct strbuf eo = STRBUF_INIT, e = STRBUF_INIT;
	struct proc_result res;
	int rc = proc_capture(argv, 60, out, &eo, &res, &e);
	strbuf_add(out, eo.buf, eo.len);
	strbuf_add(out, e.buf, e.len);
	strbuf_release(&eo);
	strbuf_release(&e);
	return rc < 0 ? -1 : res.exit_code;
}

TEST(postgresql_layout)
{
	struct bundle b;
	struct strbuf err = STRBUF_INIT, t = STRBUF_INIT;
	if (access(PG_BIN "/postgres", X_OK)) {
		printf("#   the pgbench bundle needs postgresql-15 (Debian) on this machine\n");
		CHECK(access(PG_BIN "/postgres", X_OK) == 0);
		return;
	}
	bundle_init(&b);
	CHECK(bundle_add_pg(&b, &err) == 0);
	CHECK_STR(err.buf, "");
	CHECK(b.pg == 1);
	static const char *const have[] = {
		BUNDLE_PG_BIN "/postgres.real", BUNDLE_PG_BIN "/initdb.real",
		BUNDLE_PG_BIN "/pgbench.real", "pg/usr/lib/postgresql/15/lib/plpgsql.so",
		"pg/usr/lib/postgresql/15/lib/dict_snowball.so",
		"pg/usr/share/postgresql/15/postgres.bki",
		"pg/usr/share/postgresql/15/postgresql.conf.sample",
		"pg/usr/share/postgresql/15/timezonesets/Default",
		"pg/usr/share/postgresql/15/extension/plpgsql.control",
		"lib/libpq.so.5", NULL };
	for (const char *const *v = have; *v; v++)
		if (!pg_find(&b, *v)) {
			printf("#   missing %s\n", *v);
			CHECK(pg_find(&b, *v) != NULL);
		}
	int icu = 0, foreign = 0, man = 0;
	for (size_t i = 0; i < b.nr; i++) {
		icu |= !strncmp(b.f[i].dst, "lib/libicudata.so", 17);
		foreign |= !strncmp(b.f[i].dst, "pg/usr/share/postgresql/15/extension/", 37) &&
			   strncmp(b.f[i].dst + 37, "plpgsql", 7);
		man |= !strncmp(b.f[i].dst, "pg/usr/share/postgresql/15/man/", 31);
	}
	CHECK(icu && !foreign && !man);
	CHECK(!pg_find(&b, BUNDLE_PG_BIN "/postgres")); /* the wrappers come with finish */
	CHECK(json_object_size(b.tools) == 0);          /* nothing the agent runs itself */
	CHECK(pg_share_wanted(PG_SHARE "/postgres.bki"));
	CHECK(!pg_share_wanted(PG_SHARE "/man/man1/psql.1.gz"));
	CHECK(!pg_share_wanted(PG_SHARE "/extension/hstore.control"));
	CHECK(pg_share_wanted(PG_SHARE "/extension/plpgsql--1.0.sql"));
	CHECK(!pg_share_wanted("/usr/share/postgresql/155/x"));

	CHECK(bundle_finish(&b, 1, &err) == 0);
	const struct bundle_file *w = pg_find(&b, BUNDLE_PG_BIN "/postgres");
	CHECK(w != NULL);
	if (w) {
		CHECK(!strncmp(w->data.buf, "#!/bin/sh\n", 10));
		CHECK_CONTAINS(w->data.buf,
			       "*/pg/usr/lib/postgresql/15/bin/postgres) "
			       "B=${0%/pg/usr/lib/postgresql/15/bin/postgres} ;;\n");
		strbuf_addf(&t, "exec \"$B/%s\" --library-path \"$B/lib\" --inhibit-cache%s "
			    "\"$0.real\" \"$@\"\n", b.loader, b.argv0 ? " --argv0 \"$0\"" : "");
		CHECK_CONTAINS(w->data.buf, t.buf);
	}
	CHECK(pg_find(&b, BUNDLE_PG_BIN "/initdb") && pg_find(&b, BUNDLE_PG_BIN "/pgbench"));
	/* without --argv0 the program's own path (NAME.real) says where share is */
	struct bundle nb = b;
	nb.argv0 = 0;
	strbuf_reset(&t);
	bundle_pg_wrapper(&nb, "initdb", &t);
	CHECK(!strstr(t.buf, "--argv0"));
	CHECK_CONTAINS(t.buf, "\"$0.real\" \"$@\"");

	CHECK(bundle_file_mode("bin/sl-pgbench") == 0700);
	CHECK(bundle_file_mode("lib/libc.so.6") == 0755);
	CHECK(bundle_file_mode(BUNDLE_PG_BIN "/postgres") == 0755);
	CHECK(bundle_file_mode(BUNDLE_PG_BIN "/postgres.real") == 0755);
	CHECK(bundle_file_mode("pg/usr/share/postgresql/15/postgres.bki") == 0644);
	CHECK(bundle_file_mode("MANIFEST") == 0600);

	/* the archive: every folder's header, 0755 (bin/ 0700), before its files */
	char *out = xstrfmt("%s/pg.tar", tmpdir);
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(bundle_write_tar(&b, fd, &err) == 0);
	close(fd);
	struct strbuf a = STRBUF_INIT;
	CHECK(strbuf_read_file(&a, out, 200 << 20) == 0);
	CHECK(a.len == bundle_tar_size(&b));
	struct strvec seen = STRVEC_INIT;
	size_t off = 0, bad_order = 0, bad_mode = 0, files = 0;
	while (off + 512 <= a.len && a.buf[off]) {
		const unsigned char *h = (const unsigned char *)a.buf + off;
		const char *name = (const char *)h;
		unsigned long long size = oct(h + 124, 11), mode = oct(h + 100, 7);
		/* its parent folder ("pg/usr/" for "pg/usr/lib/" and "pg/usr/x") was seen */
		size_t plen = strlen(name);
		if (plen && name[plen - 1] == '/')
			plen--;
		while (plen && name[plen - 1] != '/')
			plen--;
		int found = plen == 0;
		for (size_t i = 0; i < seen.nr && !found; i++)
			found = strlen(seen.v[i]) == plen && !strncmp(seen.v[i], name, plen);
		bad_order += !found;
		if (h[156] == '5') {
			bad_mode += mode != (strcmp(name, "bin/") ? 0755u : 0700u);
			strvec_push(&seen, name);
		} else {
			files++;
			bad_mode += mode != bundle_file_mode(name);
		}
		off += 512 + (size + 511) / 512 * 512;
	}
	CHECK(files == b.nr);
	CHECK(bad_order == 0);
	CHECK(bad_mode == 0);
	strvec_clear(&seen);
	strbuf_release(&a);

	/* unpacked, the wrappers run the bundled programs */
	char *dir = xstrfmt("%s/u", tmpdir);
	mkdir(dir, 0700);
	const char *tar[] = { "tar", "-x", "-f", out, "-C", dir, NULL };
	strbuf_reset(&t);
	CHECK(run_prog(tar, &t) == 0);
	char *pg = xstrfmt("%s/" BUNDLE_PG_BIN "/postgres", dir);
	char *idb = xstrfmt("%s/" BUNDLE_PG_BIN "/initdb", dir);
	const char *v1[] = { pg, "-V", NULL }, *v2[] = { idb, "-V", NULL };
	strbuf_reset(&t);
	CHECK(run_prog(v1, &t) == 0);
	CHECK_CONTAINS(t.buf, "postgres (PostgreSQL) 15");
	strbuf_reset(&t);
	CHECK(run_prog(v2, &t) == 0);
	CHECK_CONTAINS(t.buf, "initdb (PostgreSQL) 15");
	/* a wrapper out of its place says so */
	char *moved = xstrfmt("%s/postgres", dir);
	CHECK(rename(pg, moved) == 0);
	const char *v3[] = { moved, "-V", NULL };
	strbuf_reset(&t);
	CHECK(run_prog(v3, &t) == 127);
	CHECK_CONTAINS(t.buf, "postgres: run it by its path in the bundle");
	free(moved);
	free(pg);
	free(idb);
	free(dir);
	unlink(out);
	free(out);
	bundle_release(&b);
	strbuf_release(&err);
	strbuf_release(&t);
}

static void cleanup(void)
{
	rm_tree(tmpdir);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(manifest_and_hash);
	RUN(refusals);
	RUN(json_text);
	RUN(tar_header);
	RUN(tar_archive);
	RUN(program_with_libraries);
	RUN(postgresql_layout);
	cleanup();
	return tap_done();
}
