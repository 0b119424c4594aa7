/*
 * Unit tests of the initramfs builder's pure parts (harness/targets/initramfs.h): the
 * SHA-256 used for the cache key (FIPS 180-4 test vectors, streamed in odd
 * chunks), the newc cpio writer (parsed back field by field: magic, mode,
 * sizes, name padding, data padding, trailer, 512-byte end), the ldd output
 * parser, the ELF PT_INTERP check, the generated /init text, the programs
 * a qemu guest gets for a plan (qemu_guest_tools), the carry archive (harness/util/cpio.h), the spec's
 * cache key and the index files that let a build skip ldd and hashing; and the
 * cache shared by processes (cache_spares_held: an archive one process holds
 * outlives another's builds and prunes; a small archive of busybox-static and
 * an /init built for real). The build of a guest's archive (ldd, the agent,
 * qemu) is covered by tests/e2e/t0500-qemu-boot.sh, a guest booted while
 * other archives are built by t0505-qemu-initramfs-cache.sh.
 */
#include <elf.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/util/sha256.h"
#include "harness/targets/initramfs.h"
#include "harness/targets/target.h"
#include "harness/util/rmtree.h"
#include "tests/unit/tap.h"

/* sha256_hex_of: the one-call form (used for names and cache keys) */
static void hash_str(const char *s, char hex[65])
{
	sha256_hex_of(s, strlen(s), hex);
}

TEST(sha256_vectors)
{
	char hex[65];
	hash_str("", hex);
	CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	hash_str("abc", hex);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	hash_str("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", hex);
	CHECK_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(sha256_streamed)
{
	/* one million 'a' in chunks of 1, 63, 64, 65, ... bytes */
	static char a[1000];
	struct sha256 h;
	unsigned char d[32];
	char hex[65];
	size_t left = 1000000, step = 1;

	memset(a, 'a', sizeof(a));
	sha256_init(&h);
	while (left) {
		size_t n = step < left ? step : left;
		sha256_update(&h, a, n);
		left -= n;
		step = step * 7 % 997 + 1;
	}
	sha256_final(&h, d);
	sha256_hex(d, hex);
	CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

	/* the same million bytes through a file: sha256_fd reads to the end */
	FILE *f = tmpfile();
	uint64_t size = 0;
	CHECK(f != NULL);
	if (!f)
		return;
	for (int i = 0; i < 1000; i++)
		fwrite(a, 1, sizeof(a), f);
	fflush(f);
	rewind(f);
	CHECK(sha256_fd(fileno(f), hex, &size) == 0);
	CHECK(size == 1000000);
	CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	CHECK(sha256_fd(-1, hex, NULL) == -1);   /* a read error is an error */
	fclose(f);
}

/* a newc entry parsed back */
struct ent {
	char name[256];
	unsigned mode, nlink, rmaj, rmin, ino;
	const char *data;
	size_t size;
};

static unsigned hex8(const char *p)
{
	char b[9];
	memcpy(b, p, 8);
	b[8] = '\0';
	return (unsigned)strtoul(b, NULL, 16);
}

/* parse the entry at *off; 0 ok, -1 malformed */
static int parse_one(const char *buf, size_t len, size_t *off, struct ent *e)
{
	size_t p = *off, namesize;
	if (p + 110 > len || memcmp(buf + p, "070701", 6))
		return -1;
	e->ino = hex8(buf + p + 6);
	e->mode = hex8(buf + p + 14);
	e->nlink = hex8(buf + p + 38);
	e->size = hex8(buf + p + 54);
	e->rmaj = hex8(buf + p + 78);
	e->rmin = hex8(buf + p + 86);
	namesize = hex8(buf + p + 94);
	if (hex8(buf + p + 102) != 0 || namesize == 0 || namesize > sizeof(e->name))
		return -1;
	p += 110;
	if (p + namesize > len || buf[p + namesize - 1] != '\0')
		return -1;
	memcpy(e->name, buf + p, namesize);
	p += namesize;
	while (p % 4) {
		if (buf[p] != '\0')
			return -1;
		p++;
	}
	if (p + e->size > len)
		return -1;
	e->data = buf + p;
	p += e->size;
	while (p % 4) {
		if (buf[p] != '\0')
			return -1;
		p++;
	}
	*off = p;
	return 0;
}

TEST(cpio_roundtrip)
{
	struct strbuf mem = STRBUF_INIT;
	struct cpio_out o;
	struct ent e;
	size_t off = 0;

	cpio_out_init_mem(&o, &mem);
	cpio_add(&o, "bin", S_IFDIR | 0755, NULL, 0, 0, 0);
	cpio_add(&o, "bin/x", S_IFREG | 0755, "hello", 5, 0, 0);       /* odd size: padding */
	cpio_add(&o, "bin/sh", S_IFLNK | 0777, "busybox", 7, 0, 0);
	cpio_add(&o, "dev/console", S_IFCHR | 0600, NULL, 0, 5, 1);
	cpio_add(&o, "abcd", S_IFREG | 0644, "1234", 4, 0, 0);        /* name needs no pad */
	cpio_finish(&o);
	CHECK(o.error == 0);
	CHECK(o.off == mem.len);
	CHECK(mem.len % 512 == 0);

	CHECK(parse_one(mem.buf, mem.len, &off, &e) == 0);
	CHECK_STR(e.name, "bin");
	CHECK(e.mode == (S_IFDIR | 0755) && e.nlink == 2 && e.size == 0 && e.ino == 1);

	CHECK(parse_one(mem.buf, mem.len, &off, &e) == 0);
	CHECK_STR(e.name, "bin/x");
	CHECK(e.mode == (S_IFREG | 0755) && e.nlink == 1 && e.size == 5 && e.ino == 2);
	CHECK(e.size == 5 && !memcmp(e.data, "hello", 5));

	CHECK(parse_one(mem.buf, mem.len, &off, &e) == 0);
	CHECK_STR(e.name, "bin/sh");
	CHECK(e.mode == (S_IFLNK | 0777) && e.size == 7 && !memcmp(e.data, "busybox", 7));

	CHECK(parse_one(mem.buf, mem.len, &off, &e) == 0);
	CHECK_STR(e.name, "dev/console");
	CHECK(e.mode == (S_IFCHR | 0600) && e.rmaj == 5 && e.rmin == 1 && e.size == 0);

	CHECK(parse_one(mem.buf, mem.len, &off, &e) == 0);
	CHECK_STR(e.name, "abcd");
	CHECK(e.size == 4 && !memcmp(e.data, "1234", 4));

	CHECK(parse_one(mem.buf, mem.len, &off, &e) == 0);
	CHECK_STR(e.name, "TRAILER!!!");
	CHECK(e.ino == 0 && e.size == 0);
	/* only zero padding after the trailer */
	for (; off < mem.len; off++)
		if (mem.buf[off]) {
			CHECK(!"non-zero byte after the trailer");
			break;
		}
	strbuf_release(&mem);
}

TEST(cpio_header_layout)
{
	struct strbuf mem = STRBUF_INIT;
	struct cpio_out o;

	cpio_out_init_mem(&o, &mem);
	cpio_add(&o, "init", S_IFREG | 0755, "#!/bin/sh\n", 10, 0, 0);
	/* 110 header + "init\0" = 115, padded to 116; 10 data bytes padded to 12 */
	CHECK(mem.len == 128);
	CHECK(!memcmp(mem.buf, "070701" "00000001" "000081ED" "00000000" "00000000" "00000001"
			       "00000000" "0000000A",
		      6 + 7 * 8));
	CHECK(!memcmp(mem.buf + 110, "init\0\0", 6));
	CHECK(!memcmp(mem.buf + 116, "#!/bin/sh\n\0\0", 12));
	strbuf_release(&mem);
}

TEST(ldd_parse)
{
	const char *out =
		"\tlinux-vdso.so.1 (0x00007ffd5a1f0000)\n"
		"\tlibrt.so.1 => /lib/x86_64-linux-gnu/librt.so.1 (0x00007fb3a32fb000)\n"
		"\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007fb3a3107000)\n"
		"\t/lib64/ld-linux-x86-64.so.2 (0x00007fb3a3329000)\n"
		"\tlibfoo.so => /usr/lib/x86_64-linux-gnu/libfoo.so\n";
	struct strvec libs = STRVEC_INIT;
	struct strbuf err = STRBUF_INIT;

	CHECK(initramfs_parse_ldd(out, &libs, &err) == 0);
	CHECK(libs.nr == 4);
	if (libs.nr == 4) {
		CHECK_STR(libs.v[0], "/lib/x86_64-linux-gnu/librt.so.1");
		CHECK_STR(libs.v[1], "/lib/x86_64-linux-gnu/libc.so.6");
		CHECK_STR(libs.v[2], "/lib64/ld-linux-x86-64.so.2");
		CHECK_STR(libs.v[3], "/usr/lib/x86_64-linux-gnu/libfoo.so");
	}
	strvec_clear(&libs);

	CHECK(initramfs_parse_ldd("\tstatically linked\n", &libs, &err) == 0);
	CHECK(libs.nr == 0);

	CHECK(initramfs_parse_ldd("\tlibc.so.6 => /lib/libc.so.6 (0x1)\n"
				  "\tlibJudy.so.1 => not found\n",
				  &libs, &err) == -1);
	CHECK_CONTAINS(err.buf, "library libJudy.so.1 not found");
	strvec_clear(&libs);
	strbuf_release(&err);
}

/* glibc's dlopen()ed libgcc_s.so.1 is carried next to libc.so.6, once */
TEST(dlopen_companions)
{
	struct strvec libs = STRVEC_INIT, extra = STRVEC_INIT;

	strvec_push(&libs, "/lib/x86_64-linux-gnu/libjson-c.so.5");
	strvec_push(&libs, "/lib/x86_64-linux-gnu/libc.so.6");
	strvec_push(&libs, "/lib64/ld-linux-x86-64.so.2");
	initramfs_dlopen_companions(&libs, &extra);
	CHECK(extra.nr == 1);
	if (extra.nr == 1)
		CHECK_STR(extra.v[0], "/lib/x86_64-linux-gnu/libgcc_s.so.1");
	initramfs_dlopen_companions(&libs, &extra);     /* not twice */
	CHECK(extra.nr == 1);
	strvec_clear(&extra);

	strvec_push(&libs, "/lib/x86_64-linux-gnu/libgcc_s.so.1"); /* linked already */
	initramfs_dlopen_companions(&libs, &extra);
	CHECK(extra.nr == 0);
	strvec_clear(&libs);

	strvec_push(&libs, "/lib/x86_64-linux-gnu/libc.so.6.bak"); /* not libc */
	strvec_push(&libs, "libc.so.6");                          /* no directory */
	initramfs_dlopen_companions(&libs, &extra);
	CHECK(extra.nr == 0);
	strvec_clear(&libs);
	strvec_clear(&extra);
}

/* a minimal little-endian ELF64 with the given program header types */
static size_t make_elf(unsigned char *buf, const uint32_t *types, int n)
{
	Elf64_Ehdr eh;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_phoff = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = (Elf64_Half)n;
	memcpy(buf, &eh, sizeof(eh));
	for (int i = 0; i < n; i++) {
		Elf64_Phdr ph;
		memset(&ph, 0, sizeof(ph));
		ph.p_type = types[i];
		memcpy(buf + sizeof(eh) + i * sizeof(ph), &ph, sizeof(ph));
	}
	return sizeof(eh) + (size_t)n * sizeof(Elf64_Phdr);
}

TEST(elf_interp)
{
	unsigned char buf[1024];
	const uint32_t dyn[] = { PT_PHDR, PT_INTERP, PT_LOAD, PT_DYNAMIC };
	const uint32_t stat[] = { PT_LOAD, PT_LOAD, PT_NOTE, PT_TLS };
	size_t n;

	n = make_elf(buf, dyn, 4);
	CHECK(initramfs_elf_is_dynamic(buf, n) == 1);
	CHECK(initramfs_elf_is_dynamic(buf, n - 1) == -1);   /* truncated headers */
	n = make_elf(buf, stat, 4);
	CHECK(initramfs_elf_is_dynamic(buf, n) == 0);
	CHECK(initramfs_elf_is_dynamic((const unsigned char *)"#!/bin/sh\n", 10) == -1);
	CHECK(initramfs_elf_is_dynamic(buf, 3) == -1);
}

TEST(init_script)
{
	struct initramfs_spec s;
	struct strbuf o = STRBUF_INIT;

	memset(&s, 0, sizeof(s));
	initramfs_init_script(&s, &o);
	CHECK(!strncmp(o.buf, "#!/bin/sh\n", 10));
	CHECK_CONTAINS(o.buf, "mount -t proc proc /proc\n");
	CHECK_CONTAINS(o.buf, "mount -t sysfs sysfs /sys\n");
	CHECK_CONTAINS(o.buf, "mount -t devtmpfs devtmpfs /dev\n");
	CHECK_CONTAINS(o.buf, "mount -t debugfs debugfs /sys/kernel/debug\n");
	CHECK_CONTAINS(o.buf, "mount -t devpts devpts /dev/pts\n");
	CHECK_CONTAINS(o.buf, "mount -t tmpfs tmpfs /tmp\n");
	CHECK_CONTAINS(o.buf, "export PATH=/bin");
	CHECK_CONTAINS(o.buf, "\nschedlab-agent --tty /dev/ttyS1\n");
	CHECK_CONTAINS(o.buf, "poweroff -f\n");
	/* nothing is re-archived in the guest: kexec uses the carried copy */
	CHECK(!strstr(o.buf, "cpio"));

	strbuf_reset(&o);
	s.agent_tty = "/dev/ttyS2";
	s.carry = "/boot/initrd.img";
	initramfs_init_script(&s, &o);
	CHECK_CONTAINS(o.buf, "schedlab-agent --tty /dev/ttyS2\n");
	CHECK(!strstr(o.buf, "cpio"));

	/* batch mode: requests from a file, frames on the console */
	strbuf_reset(&o);
	s.agent_batch = "/etc/schedlab/requests.jsonl";
	initramfs_init_script(&s, &o);
	CHECK_CONTAINS(o.buf, "\nschedlab-agent --batch /etc/schedlab/requests.jsonl\n");
	CHECK_CONTAINS(o.buf, "dmesg -n 1\n");
	CHECK_CONTAINS(o.buf, "echo \"schedlab-batch: end status $?\"\npoweroff -f\n");
	CHECK(!strstr(o.buf, "--tty"));
	s.agent_batch = NULL;

	strbuf_reset(&o);
	s.init_cmd = "cat /sys/kernel/debug/sched/preempt";
	initramfs_init_script(&s, &o);
	CHECK_CONTAINS(o.buf, "\ncat /sys/kernel/debug/sched/preempt\n");
	CHECK(!strstr(o.buf, "schedlab-agent --tty"));
	CHECK_CONTAINS(o.buf, "poweroff -f\n");
	strbuf_release(&o);
}

/* qemu_guest_tools for a target object (JSON text) and the plan's tools */
static void guest_tools(const char *conf, const char *const *plan, const char *hosts,
			const char *natives, int all)
{
	json_t *c = json_loads(conf, 0, NULL);
	struct strvec h = STRVEC_INIT, n = STRVEC_INIT;
	struct strbuf hs = STRBUF_INIT, ns = STRBUF_INIT;
	int all_natives = -1;
	qemu_guest_tools(c, plan, &h, &n, &all_natives);
	for (size_t i = 0; i < h.nr; i++)
		strbuf_addf(&hs, "%s%s", i ? " " : "", h.v[i]);
	for (size_t i = 0; i < n.nr; i++)
		strbuf_addf(&ns, "%s%s", i ? " " : "", n.v[i]);
	CHECK_STR(hs.buf, hosts);
	CHECK_STR(ns.buf, natives);
	CHECK(all_natives == all);
	strvec_clear(&h);
	strvec_clear(&n);
	strbuf_release(&hs);
	strbuf_release(&ns);
	json_decref(c);
}

TEST(guest_tools_from_the_plan)
{
	static const char *const ab[] = { "cyclictest", "hackbench", "sl-pingpong", NULL };
	static const char *const hb[] = { "hackbench", NULL };
	/* the plan's tools: host programs and the sl-* ones apart; no stress-ng */
	guest_tools("{\"switch\": \"reboot\"}", ab, "cyclictest hackbench", "sl-pingpong", 0);
	/* kexec only when switching by kexec */
	guest_tools("{\"switch\": \"kexec\"}", hb, "hackbench kexec", "", 0);
	/* the plan's own "tools" win (kexec added once), with every sl-* */
	guest_tools("{\"switch\": \"kexec\", \"tools\": [\"stress-ng\"]}", hb, "stress-ng kexec", "",
		    1);
	guest_tools("{\"switch\": \"kexec\", \"tools\": [\"kexec\", \"/x/y\"]}", hb, "kexec /x/y",
		    "", 1);
	/* no plan (schedlab sysinfo, tests): the defaults */
	guest_tools("{\"switch\": \"auto\"}", NULL, "cyclictest hackbench stress-ng", "", 1);
}

/* the carry archive: the folders, the file, the trailer, the file again */
TEST(carry_archive)
{
	char in_path[] = "/tmp/sl-carry-in-XXXXXX", out_path[] = "/tmp/sl-carry-out-XXXXXX";
	int in = mkstemp(in_path), out = mkstemp(out_path);
	struct strbuf got = STRBUF_INIT, err = STRBUF_INIT;
	const char payload[] = "\x02\x21\x4c\x18 not really lz4, 37 bytes";
	size_t plen = sizeof(payload) - 1, off = 0;
	struct ent e;

	CHECK(in >= 0 && out >= 0);
	CHECK(write(in, payload, plen) == (ssize_t)plen);
	CHECK(cpio_write_carry(out, "boot/x/initrd.img", in, &err) == 0);
	CHECK(strbuf_read_file(&got, out_path, 0) == 0);
	CHECK(parse_one(got.buf, got.len, &off, &e) == 0);
	CHECK_STR(e.name, "boot");
	CHECK((e.mode & S_IFMT) == S_IFDIR);
	CHECK(parse_one(got.buf, got.len, &off, &e) == 0);
	CHECK_STR(e.name, "boot/x");
	CHECK(parse_one(got.buf, got.len, &off, &e) == 0);
	CHECK_STR(e.name, "boot/x/initrd.img");
	CHECK(e.mode == (S_IFREG | 0644) && e.size == plen && !memcmp(e.data, payload, plen));
	CHECK(parse_one(got.buf, got.len, &off, &e) == 0);
	CHECK_STR(e.name, "TRAILER!!!");
	while (off % 512)
		CHECK(got.buf[off++] == '\0');
	/* then the archive itself, last, so that a compressed stream runs to the end */
	CHECK(got.len == off + plen && !memcmp(got.buf + off, payload, plen));

	/* the same input gives the same bytes (host and guest must agree) */
	struct strbuf again = STRBUF_INIT;
	CHECK(ftruncate(out, 0) == 0 && lseek(out, 0, SEEK_SET) == 0);
	CHECK(cpio_write_carry(out, "boot/x/initrd.img", in, &err) == 0);
	CHECK(strbuf_read_file(&again, out_path, 0) == 0);
	CHECK(again.len == got.len && !memcmp(again.buf, got.buf, got.len));
	strbuf_release(&again);
	close(in);
	close(out);
	unlink(in_path);
	unlink(out_path);
	strbuf_release(&got);
	strbuf_release(&err);
}

static void key_of(const struct initramfs_spec *s, const char *path, char hex[65])
{
	initramfs_spec_key(s, path, NULL, hex);
}

TEST(spec_key)
{
	static const char *const b1[] = { "ab", "c", NULL }, *const b2[] = { "a", "bc", NULL };
	struct initramfs_file f = { "/k/vmlinux", "/boot/vmlinux", 0644, 1 };
	struct initramfs_spec s;
	char k0[65], k[65];

	memset(&s, 0, sizeof(s));
	s.binaries = b1;
	key_of(&s, "/usr/bin:/bin", k0);
	CHECK(strlen(k0) == 64);
	key_of(&s, "/usr/bin:/bin", k);
	CHECK_STR(k, k0); /* stable */
	s.cache_dir = "/elsewhere";
	key_of(&s, "/usr/bin:/bin", k);
	CHECK_STR(k, k0); /* where the cache is does not matter */
	s.cache_dir = NULL;
	/* every field that shapes the archive changes the key */
#define CHANGED(stmt, undo)                                                            \
	do {                                                                           \
		stmt;                                                                  \
		key_of(&s, "/usr/bin:/bin", k);                                        \
		CHECK(strcmp(k, k0) != 0);                                             \
		undo;                                                                  \
	} while (0)
	CHANGED(s.binaries = b2, s.binaries = b1); /* no ambiguity at boundaries */
	CHANGED(s.busybox = "/bin/busybox", s.busybox = NULL);
	CHANGED((s.files = &f, s.nr_files = 1), (s.files = NULL, s.nr_files = 0));
	CHANGED(s.agent_tty = "/dev/ttyS2", s.agent_tty = NULL);
	CHANGED(s.agent_batch = "/etc/schedlab/requests.jsonl", s.agent_batch = NULL);
	CHANGED(s.init_cmd = "true", s.init_cmd = NULL);
	CHANGED(s.init_cmd = "", s.init_cmd = NULL); /* "" is not NULL */
	CHANGED(s.extra_init = "true", s.extra_init = NULL);
	CHANGED(s.compress = INITRAMFS_LZ4, s.compress = INITRAMFS_PLAIN);
	CHANGED(s.carry = "/boot/initrd.img", s.carry = NULL);
#undef CHANGED
	s.files = &f;
	s.nr_files = 1;
	key_of(&s, "/usr/bin:/bin", k0);
	f.elf_trim = 0;
	key_of(&s, "/usr/bin:/bin", k);
	CHECK(strcmp(k, k0) != 0);
	f.elf_trim = 1;
	key_of(&s, "/bin:/usr/bin", k); /* names resolve through PATH */
	CHECK(strcmp(k, k0) != 0);
	initramfs_spec_key(&s, "/usr/bin:/bin", "/opt/lib", k); /* and libraries through this */
	CHECK(strcmp(k, k0) != 0);
}

TEST(index_files)
{
	char dir[] = "/tmp/sl-index-XXXXXX";
	struct strbuf idx = STRBUF_INIT, name = STRBUF_INIT;
	char *a, *b, *missing;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	a = xstrfmt("%s/a", dir);
	b = xstrfmt("%s/b c", dir); /* a space in a path */
	missing = xstrfmt("%s/missing", dir);
	f = fopen(a, "w");
	fputs("aaa", f);
	fclose(f);
	f = fopen(b, "w");
	fputs("bbb", f);
	fclose(f);
	strbuf_addstr(&idx, "schedlab-initramfs-index 1\narchive 0123.cpio.lz4\n");
	CHECK(initramfs_index_add(&idx, a) == 0);
	CHECK(initramfs_index_add(&idx, b) == 0);
	CHECK(initramfs_index_add(&idx, missing) == 0);
	CHECK(initramfs_index_add(&idx, "/tmp/new\nline") == -1);
	CHECK_CONTAINS(idx.buf, "\n- ");
	CHECK(initramfs_index_valid(idx.buf, &name) == 1);
	CHECK_STR(name.buf, "0123.cpio.lz4");

	/* a changed file, a file that appeared, a file that went: stale */
	f = fopen(a, "a");
	fputs("!", f);
	fclose(f);
	CHECK(initramfs_index_valid(idx.buf, &name) == 0);
	strbuf_reset(&idx);
	strbuf_addstr(&idx, "schedlab-initramfs-index 1\narchive x.cpio\n");
	initramfs_index_add(&idx, a);
	initramfs_index_add(&idx, missing);
	CHECK(initramfs_index_valid(idx.buf, &name) == 1);
	f = fopen(missing, "w");
	fclose(f);
	CHECK(initramfs_index_valid(idx.buf, &name) == 0);
	unlink(missing);
	CHECK(initramfs_index_valid(idx.buf, &name) == 1);
	unlink(a);
	CHECK(initramfs_index_valid(idx.buf, &name) == 0);

	/* malformed: another magic, no archive line, a folder in the name, junk */
	CHECK(initramfs_index_valid("schedlab-initramfs-index 2\narchive x\n", &name) == 0);
	CHECK(initramfs_index_valid("schedlab-initramfs-index 1\n", &name) == 0);
	CHECK(initramfs_index_valid("schedlab-initramfs-index 1\narchive ../x\n", &name) == 0);
	CHECK(initramfs_index_valid("schedlab-initramfs-index 1\narchive x\nF 1 2\n", &name) == 0);
	CHECK(initramfs_index_valid("schedlab-initramfs-index 1\narchive x\nX /a\n", &name) == 0);
	CHECK(initramfs_index_valid("", &name) == 0);

	unlink(b);
	rmdir(dir);
	free(a);
	free(b);
	free(missing);
	strbuf_release(&idx);
	strbuf_release(&name);
}

/* a small archive of its own (busybox and an /init echoing tag) in dir */
static int build_small(const char *dir, const char *tag, char *out, size_t len, int *hold)
{
	struct initramfs_spec s;
	struct strbuf err = STRBUF_INIT;
	char *cmd = xstrfmt("echo %s", tag);
	memset(&s, 0, sizeof(s));
	s.busybox = "/bin/busybox";
	s.init_cmd = cmd;
	s.cache_dir = dir;
	int r = initramfs_build(&s, out, len, hold, &err);
	if (r)
		printf("#   build %s: %s\n", tag, err.buf);
	free(cmd);
	strbuf_release(&err);
	return r;
}

static int count_archives(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;
	while (d && (de = readdir(d)))
		n += strlen(de->d_name) > 5 && !strcmp(de->d_name + strlen(de->d_name) - 5, ".cpio");
	if (d)
		closedir(d);
	return n;
}

/*
 * One cache folder, two processes: this one holds an archive (a guest is
 * about to boot it, or boots it again) while a child builds 8 others, more
 * than the 6 the cache keeps, each build pruning. The held archive, the
 * oldest of all, stays; once released, the next build removes it.
 */
TEST(cache_spares_held)
{
	char dir[] = "/tmp/sl-initramfs-cache.XXXXXX", held[4096], p[4096];
	int hold = 7, st = -1;
	CHECK(access("/bin/busybox", X_OK) == 0); /* busybox-static: make test installs it */
	if (!mkdtemp(dir))
		return;
	CHECK(build_small(dir, "held", held, sizeof(held), &hold) == 0);
	CHECK(hold >= 0);
	/* the oldest, the first to go when it may */
	struct timespec old[2] = { { 1, 0 }, { 1, 0 } };
	CHECK(utimensat(AT_FDCWD, held, old, 0) == 0);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int bad = 0;
		for (int i = 0; i < 8; i++) {
			char tag[32];
			snprintf(tag, sizeof(tag), "other %d", i);
			bad |= build_small(dir, tag, p, sizeof(p), NULL) != 0;
		}
		fflush(stdout);
		_exit(bad);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(access(held, R_OK) == 0);
	CHECK(count_archives(dir) == 7); /* the 6 most recent, and the held one */
	/* found again by a build of its spec, which holds it too */
	int again = -1;
	CHECK(build_small(dir, "held", p, sizeof(p), &again) == 0);
	CHECK_STR(p, held);
	initramfs_release(&again);
	CHECK(again == -1);
	initramfs_release(&hold);
	CHECK(hold == -1);
	CHECK(utimensat(AT_FDCWD, held, old, 0) == 0);
	CHECK(build_small(dir, "after", p, sizeof(p), NULL) == 0);
	CHECK(access(held, F_OK) != 0); /* no longer held: pruned */
	CHECK(count_archives(dir) == 6);
	rm_tree(dir);
}

int main(void)
{
	RUN(sha256_vectors);
	RUN(sha256_streamed);
	RUN(cpio_roundtrip);
	RUN(cpio_header_layout);
	RUN(ldd_parse);
	RUN(dlopen_companions);
	RUN(elf_interp);
	RUN(init_script);
	RUN(guest_tools_from_the_plan);
	RUN(carry_archive);
	RUN(spec_key);
	RUN(index_files);
	RUN(cache_spares_held);
	return tap_done();
}
