/*
 * Unit tests of the kernel ELF helpers (harness/util/kelf.h): the trim the
 * initramfs builder stores a kexec kernel with (zeros out of the file, the
 * data intact, idempotent), the .bss tail cut out of the memory kexec loads
 * exactly when the section headers say that the tail is the kernel's own
 * .bss/.brk/.init.scratch, and the memory end the agent places the initrd
 * above, which the cut must not change.
 */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness/util/kelf.h"
#include "tests/unit/tap.h"

/* the ELF header of an x86-64 executable, program headers right after it */
static Elf64_Ehdr exec_header(unsigned phnum, uint64_t shoff, unsigned shnum, unsigned shstrndx)
{
	Elf64_Ehdr eh;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_entry = 0x1000000;
	eh.e_phoff = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = (uint16_t)phnum;
	eh.e_shoff = shoff;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = (uint16_t)shnum;
	eh.e_shstrndx = (uint16_t)shstrndx;
	return eh;
}

/* an ELF64 executable: two PT_LOAD segments whose data ends in zeros (a
 * kernel's .bss), a PT_NOTE inside the first, section headers at the end */
static size_t make_kernel_elf(unsigned char *buf, size_t cap)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[3];
	memset(buf, 0, cap);
	eh = exec_header(3, 0x9000, 2, 1);
	memset(ph, 0, sizeof(ph));
	ph[0] = (Elf64_Phdr){ PT_LOAD, PF_R | PF_X, 0x2000, 0xffffffff81000000ull, 0x1000000,
			      0x3000, 0x3000, 0x200000 };
	ph[1] = (Elf64_Phdr){ PT_LOAD, PF_R | PF_W, 0x5000, 0xffffffff81400000ull, 0x1400000,
			      0x4000, 0x10000, 0x200000 };
	ph[2] = (Elf64_Phdr){ PT_NOTE, 0, 0x2100, 0xffffffff81000100ull, 0x1000100, 0x20, 0x20,
			      4 };
	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + sizeof(eh), ph, sizeof(ph));
	for (size_t i = 0; i < 0x2800; i++) /* segment 0: data, then 0x800 zeros */
		buf[0x2000 + i] = (unsigned char)(i % 251 + 1);
	for (size_t i = 0; i < 0x20; i++)
		buf[0x2100 + i] = (unsigned char)(0xa0 + i);
	for (size_t i = 0; i < 0x1001; i++) /* segment 1: 0x1001 bytes, then zeros */
		buf[0x5000 + i] = (unsigned char)(i % 7 + 1);
	memset(buf + 0x9000, 0x55, 128); /* "section headers" */
	return 0x9000 + 128 <= cap ? 0x9000 + 128 : 0;
}

static Elf64_Phdr phdr_of(const char *buf, int i)
{
	Elf64_Phdr ph;
	memcpy(&ph, buf + 64 + (size_t)i * sizeof(ph), sizeof(ph));
	return ph;
}

TEST(trim_drops_zeros_keeps_data)
{
	static unsigned char in[0xa000];
	size_t len = make_kernel_elf(in, sizeof(in));
	struct strbuf out = STRBUF_INIT;
	Elf64_Ehdr eh;
	Elf64_Phdr a, b, n;

	CHECK(len > 0);
	CHECK(kelf_trim(in, len, &out) == 0);
	CHECK(out.len < len);
	memcpy(&eh, out.buf, sizeof(eh));
	CHECK(eh.e_phoff == 64 && eh.e_phnum == 3 && eh.e_entry == 0x1000000);
	CHECK(eh.e_shoff == 0 && eh.e_shnum == 0 && eh.e_shstrndx == 0);
	a = phdr_of(out.buf, 0);
	b = phdr_of(out.buf, 1);
	n = phdr_of(out.buf, 2);
	/* the trailing zeros are gone from the file, the memory size stays */
	CHECK(a.p_type == PT_LOAD && a.p_filesz == 0x2800 && a.p_memsz == 0x3000);
	CHECK(b.p_type == PT_LOAD && b.p_filesz == 0x1001 && b.p_memsz == 0x10000);
	CHECK(a.p_paddr == 0x1000000 && b.p_paddr == 0x1400000);
	/* page-aligned offsets congruent to the addresses, data intact */
	CHECK(a.p_offset % 4096 == a.p_vaddr % 4096 && b.p_offset % 4096 == b.p_vaddr % 4096);
	CHECK(a.p_align == 4096 && b.p_align == 4096);
	CHECK(a.p_offset + a.p_filesz <= out.len && b.p_offset + b.p_filesz <= out.len);
	CHECK(!memcmp(out.buf + a.p_offset, in + 0x2000, 0x2800));
	CHECK(!memcmp(out.buf + b.p_offset, in + 0x5000, 0x1001));
	/* the note is copied */
	CHECK(n.p_type == PT_NOTE && n.p_filesz == 0x20 && n.p_offset + 0x20 <= out.len);
	CHECK(!memcmp(out.buf + n.p_offset, in + 0x2100, 0x20));
	/* trimming again changes nothing more */
	struct strbuf again = STRBUF_INIT;
	CHECK(kelf_trim((const unsigned char *)out.buf, out.len, &again) == 0);
	CHECK(again.len == out.len && !memcmp(again.buf, out.buf, out.len));
	strbuf_release(&again);

	/* not for us: a script, an ELF32, a segment past the end of the file */
	strbuf_reset(&out);
	CHECK(kelf_trim((const unsigned char *)"#!/bin/sh\n", 10, &out) == -1);
	CHECK(out.len == 0);
	in[EI_CLASS] = ELFCLASS32;
	CHECK(kelf_trim(in, len, &out) == -1);
	in[EI_CLASS] = ELFCLASS64;
	CHECK(kelf_trim(in, 0x6000, &out) == -1);
	CHECK(out.len == 0);
	strbuf_release(&out);
}

/*
 * A kernel-like ELF64 with real section headers: segment 0 holds .text
 * (0x3000 at 0x1000000), segment 1 .data (0x1800 at 0x1400000, then zeros)
 * followed by the sections `tail` names, each 0x2000 long from 0x1402000
 * (the first at 0x1402000 + bss_off), and a .shstrtab. The segment's memory
 * size covers them all. Returns the file's length.
 */
struct sec {
	const char *name;
	uint32_t type;
};
static size_t make_sectioned(unsigned char *buf, size_t cap, const struct sec *tail, int ntail,
			     uint64_t bss_off)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[2];
	Elf64_Shdr sh[8];
	char strtab[256];
	size_t stl = 1, nsh = 0;
	const uint64_t base1 = 0x1400000, tail0 = base1 + 0x2000 + bss_off;
	uint64_t end1 = tail0 + (uint64_t)ntail * 0x2000;

	memset(buf, 0, cap);
	memset(sh, 0, sizeof(sh));
	strtab[0] = '\0';
#define NAME(s) (stl += strlen(s) + 1, memcpy(strtab + stl - strlen(s) - 1, s, strlen(s) + 1), \
		 (uint32_t)(stl - strlen(s) - 1))
	sh[++nsh] = (Elf64_Shdr){ NAME(".text"), SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR,
				  0xffffffff81000000ull, 0x1000, 0x3000, 0, 0, 4096, 0 };
	sh[++nsh] = (Elf64_Shdr){ NAME(".data"), SHT_PROGBITS, SHF_ALLOC | SHF_WRITE,
				  0xffffffff80000000ull + base1, 0x4000, 0x1800, 0, 0, 4096, 0 };
	for (int i = 0; i < ntail; i++)
		sh[++nsh] = (Elf64_Shdr){ NAME(tail[i].name), tail[i].type, SHF_ALLOC | SHF_WRITE,
					  0xffffffff80000000ull + tail0 + (uint64_t)i * 0x2000,
					  0x4000 + 0x2000 + bss_off + (uint64_t)i * 0x2000,
					  0x2000, 0, 0, 4096, 0 };
	sh[++nsh] = (Elf64_Shdr){ NAME(".shstrtab"), SHT_STRTAB, 0, 0, 0x10000, 0, 0, 0, 1, 0 };
#undef NAME
	sh[nsh].sh_size = stl;
	eh = exec_header(2, 0x11000, (unsigned)nsh + 1, (unsigned)nsh);
	ph[0] = (Elf64_Phdr){ PT_LOAD, PF_R | PF_X, 0x1000, 0xffffffff81000000ull, 0x1000000,
			      0x3000, 0x3000, 0x1000 };
	/* like Debian's vmlinux: the file covers the whole tail (zeros) */
	ph[1] = (Elf64_Phdr){ PT_LOAD, PF_R | PF_W, 0x4000, 0xffffffff80000000ull + base1, base1,
			      end1 - base1, end1 - base1, 0x1000 };
	memcpy(buf, &eh, sizeof(eh));
	memcpy(buf + sizeof(eh), ph, sizeof(ph));
	for (size_t i = 0; i < 0x3000; i++)
		buf[0x1000 + i] = (unsigned char)(i % 13 + 1);
	for (size_t i = 0; i < 0x1800; i++)
		buf[0x4000 + i] = (unsigned char)(i % 11 + 1);
	memcpy(buf + 0x10000, strtab, stl);
	memcpy(buf + 0x11000, sh, (nsh + 1) * sizeof(Elf64_Shdr));
	return 0x11000 + (nsh + 1) * sizeof(Elf64_Shdr) <= cap ? 0x11000 + (nsh + 1) * sizeof(Elf64_Shdr)
							       : 0;
}

TEST(trim_cuts_the_kernels_bss)
{
	static unsigned char in[0x12000];
	const struct sec tail[] = { { ".bss", SHT_NOBITS }, { ".brk", SHT_NOBITS },
				    { ".init.scratch", SHT_PROGBITS } };
	size_t len = make_sectioned(in, sizeof(in), tail, 3, 0);
	struct strbuf out = STRBUF_INIT, again = STRBUF_INIT;
	uint64_t end_in, end_out;
	Elf64_Ehdr eh;
	Elf64_Phdr a, b, u;

	CHECK(len > 0);
	CHECK(kelf_trim(in, len, &out) == 0);
	memcpy(&eh, out.buf, sizeof(eh));
	CHECK(eh.e_phnum == 3 && eh.e_shnum == 0);
	a = phdr_of(out.buf, 0);
	b = phdr_of(out.buf, 1);
	u = phdr_of(out.buf, 2);
	CHECK(a.p_type == PT_LOAD && a.p_memsz == 0x3000 && a.p_filesz == 0x3000);
	/* segment 1 now ends where .bss begins; its data is intact */
	CHECK(b.p_type == PT_LOAD && b.p_memsz == 0x2000 && b.p_filesz == 0x1800);
	CHECK(!memcmp(out.buf + b.p_offset, in + 0x4000, 0x1800));
	/* the tail is described, not loaded */
	CHECK(u.p_type == KELF_PT_UNLOADED && u.p_filesz == 0 && u.p_paddr == 0x1402000 &&
	      u.p_vaddr == 0xffffffff81402000ull && u.p_memsz == 0x6000);
	CHECK(u.p_offset <= out.len);
	/* the memory the kernel occupies is the same before and after */
	CHECK(kelf_mem_end(in, len, &end_in) == 1 && end_in == 0x1408000);
	CHECK(kelf_mem_end((const unsigned char *)out.buf, out.len, &end_out) == 1);
	CHECK(end_out == end_in);
	/* trimming again changes nothing */
	CHECK(kelf_trim((const unsigned char *)out.buf, out.len, &again) == 0);
	CHECK(again.len == out.len && !memcmp(again.buf, out.buf, out.len));

	/* .bss not on a page boundary: the cut starts at the next page */
	len = make_sectioned(in, sizeof(in), tail, 3, 0x800);
	CHECK(kelf_trim(in, len, &out) == 0);
	b = phdr_of(out.buf, 1);
	u = phdr_of(out.buf, 2);
	CHECK(b.p_memsz == 0x3000 && u.p_paddr == 0x1403000 && u.p_memsz == 0x5800);
	CHECK(kelf_mem_end((const unsigned char *)out.buf, out.len, &end_out) == 1 &&
	      end_out == 0x1408800);

	strbuf_release(&out);
	strbuf_release(&again);
}

TEST(trim_keeps_what_it_does_not_know)
{
	static unsigned char in[0x12000];
	/* a section after .bss that the kernel does not clear: nothing cut */
	const struct sec other[] = { { ".bss", SHT_NOBITS }, { ".data.late", SHT_PROGBITS } };
	/* no .bss at all */
	const struct sec nobss[] = { { ".brk", SHT_NOBITS } };
	struct strbuf out = STRBUF_INIT;
	size_t len;
	Elf64_Ehdr eh;

	len = make_sectioned(in, sizeof(in), other, 2, 0);
	CHECK(kelf_trim(in, len, &out) == 0);
	memcpy(&eh, out.buf, sizeof(eh));
	CHECK(eh.e_phnum == 2 && phdr_of(out.buf, 1).p_memsz == 0x6000);

	len = make_sectioned(in, sizeof(in), nobss, 1, 0);
	CHECK(kelf_trim(in, len, &out) == 0);
	memcpy(&eh, out.buf, sizeof(eh));
	CHECK(eh.e_phnum == 2 && phdr_of(out.buf, 1).p_memsz == 0x4000);

	/* a section-name table pointing outside the file: no cut, no crash */
	{
		const struct sec tail[] = { { ".bss", SHT_NOBITS } };
		Elf64_Shdr st;
		len = make_sectioned(in, sizeof(in), tail, 1, 0);
		memcpy(&eh, in, sizeof(eh));
		memcpy(&st, in + eh.e_shoff + (size_t)eh.e_shstrndx * sizeof(st), sizeof(st));
		st.sh_offset = 0xfffffff0;
		memcpy(in + eh.e_shoff + (size_t)eh.e_shstrndx * sizeof(st), &st, sizeof(st));
		CHECK(kelf_trim(in, len, &out) == 0);
		memcpy(&eh, out.buf, sizeof(eh));
		CHECK(eh.e_phnum == 2 && phdr_of(out.buf, 1).p_memsz == 0x4000);
	}
	strbuf_release(&out);
}

TEST(mem_end)
{
	static unsigned char in[0x12000];
	const struct sec tail[] = { { ".bss", SHT_NOBITS } };
	size_t len = make_sectioned(in, sizeof(in), tail, 1, 0);
	struct strbuf out = STRBUF_INIT;
	char path[] = "/tmp/test_kelf.XXXXXX";
	uint64_t end = 1;
	int fd;

	/* not an ELF64 (a bzImage starts with the real-mode boot sector) */
	CHECK(kelf_mem_end((const unsigned char *)"MZ\xea\x07", 4, &end) == 0 && end == 0);
	/* program headers past the buffer */
	CHECK(kelf_mem_end(in, 80, &end) == -1);
	/* the file form reads the trimmed kernel's headers */
	CHECK(kelf_trim(in, len, &out) == 0);
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK(write(fd, out.buf, out.len) == (ssize_t)out.len);
	close(fd);
	CHECK(kelf_mem_end_file(path, &end) == 1 && end == 0x1404000);
	unlink(path);
	CHECK(kelf_mem_end_file(path, &end) == 0 && end == 0);
	strbuf_release(&out);
}

int main(void)
{
	RUN(trim_drops_zeros_keeps_data);
	RUN(trim_cuts_the_kernels_bss);
	RUN(trim_keeps_what_it_does_not_know);
	RUN(mem_end);
	return tap_done();
}
