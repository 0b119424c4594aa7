/*
 * A kernel's ELF vmlinux trimmed for carrying, and how much memory it
 * occupies; see kelf.h. Pure byte work on a buffer, apart from
 * kelf_mem_end_file's read of the headers.
 */
#include "harness/util/kelf.h"

#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE 4096u
#define EHSIZE 64u
#define PHENTSIZE 56u
#define SHENTSIZE 64u

static uint64_t rd64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void wr64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		p[i] = (unsigned char)v;
}

static unsigned rd16(const unsigned char *p)
{
	return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static int is_elf64(const unsigned char *buf, size_t len)
{
	return len >= EHSIZE && !memcmp(buf, ELFMAG, SELFMAG) && buf[EI_CLASS] == ELFCLASS64 &&
	       buf[EI_DATA] == ELFDATA2LSB;
}

/* the name of section header sh, or NULL when it does not lie in buf */
static const char *section_name(const unsigned char *buf, size_t len, const unsigned char *sh,
				const unsigned char *strtab_sh)
{
	uint64_t off = rd64(strtab_sh + 24), size = rd64(strtab_sh + 32), name = rd32(sh);
	if (off > len || size > len - off || name >= size || !memchr(buf + off + name, 0, size - name))
		return NULL;
	return (const char *)buf + off + name;
}

/*
 * The offset into PT_LOAD header `seg` (of phnum at ph) from which the
 * segment holds only .bss, .brk and .init.scratch, page-aligned; 0 when
 * there is no such tail or the section headers do not say so.
 */
static uint64_t nobits_tail(const unsigned char *buf, size_t len, const unsigned char *ph,
			    unsigned phnum, unsigned *seg)
{
	static const char *const cleared[] = { ".bss", ".brk", ".init.scratch" };
	uint64_t shoff = rd64(buf + 40), bss = 0, cut;
	unsigned shnum = rd16(buf + 60), shstrndx = rd16(buf + 62);
	const unsigned char *strtab;
	int found = 0;

	if (!shoff || rd16(buf + 58) != SHENTSIZE || !shnum || shstrndx >= shnum ||
	    shoff > len || (uint64_t)shnum * SHENTSIZE > len - shoff)
		return 0;
	strtab = buf + shoff + (uint64_t)shstrndx * SHENTSIZE;
	for (unsigned i = 0; i < shnum; i++) {
		const unsigned char *sh = buf + shoff + (uint64_t)i * SHENTSIZE;
		const char *name = section_name(buf, len, sh, strtab);
		if (name && !strcmp(name, ".bss") && (rd64(sh + 8) & SHF_ALLOC)) {
			bss = rd64(sh + 16);
			found = 1;
			break;
		}
	}
	if (!found)
		return 0;
	for (*seg = 0; *seg < phnum; (*seg)++) {
		const unsigned char *p = ph + (size_t)*seg * PHENTSIZE;
		uint64_t va = rd64(p + 16), memsz = rd64(p + 40);
		if (rd32(p) == PT_LOAD && bss >= va && bss - va < memsz)
			break;
	}
	if (*seg == phnum)
		return 0;
	{
		const unsigned char *p = ph + (size_t)*seg * PHENTSIZE;
		uint64_t va = rd64(p + 16), memsz = rd64(p + 40);
		cut = (bss - va + PAGE - 1) / PAGE * PAGE;
		if (cut >= memsz)
			return 0;
		/* every allocated section from .bss to the segment's end is one
		   the kernel clears or scratches itself */
		for (unsigned i = 0; i < shnum; i++) {
			const unsigned char *sh = buf + shoff + (uint64_t)i * SHENTSIZE;
			uint64_t addr = rd64(sh + 16), size = rd64(sh + 32);
			const char *name;
			size_t k;
			if (!(rd64(sh + 8) & SHF_ALLOC) || !size || addr + size <= va + cut ||
			    addr >= va + memsz)
				continue;
			name = section_name(buf, len, sh, strtab);
			for (k = 0; name && k < sizeof(cleared) / sizeof(cleared[0]); k++)
				if (!strcmp(name, cleared[k]))
					break;
			if (!name || k == sizeof(cleared) / sizeof(cleared[0]) || addr < bss)
				return 0;
		}
	}
	return cut;
}

int kelf_trim(const unsigned char *buf, size_t len, struct strbuf *out)
{
	struct strbuf o = STRBUF_INIT;
	unsigned char *ph;
	uint64_t phoff, cut;
	unsigned phnum, nout, loads = 0, seg = 0;

	if (!is_elf64(buf, len) || rd16(buf + 54) != PHENTSIZE)
		return -1;
	phoff = rd64(buf + 32);
	phnum = rd16(buf + 56);
	if (!phnum || phoff < EHSIZE || phoff > len || (uint64_t)phnum * PHENTSIZE > len - phoff)
		return -1;
	/* every segment's data must lie in the file */
	for (unsigned i = 0; i < phnum; i++) {
		const unsigned char *p = buf + phoff + (uint64_t)i * PHENTSIZE;
		uint64_t off = rd64(p + 8), filesz = rd64(p + 32), memsz = rd64(p + 40);
		if (off > len || filesz > len - off)
			return -1;
		if (rd32(p) == PT_LOAD) {
			if (filesz > memsz)
				return -1;
			loads++;
		}
	}
	if (!loads)
		return -1;
	/* the program headers to write: the input's, and one for a cut tail */
	ph = malloc(((size_t)phnum + 1) * PHENTSIZE);
	if (!ph)
		return -1;
	memcpy(ph, buf + phoff, (size_t)phnum * PHENTSIZE);
	nout = phnum;
	cut = nobits_tail(buf, len, buf + phoff, phnum, &seg);
	if (cut) {
		unsigned char *p = ph + (size_t)seg * PHENTSIZE, *u = ph + (size_t)phnum * PHENTSIZE;
		memset(u, 0, PHENTSIZE);
		u[0] = KELF_PT_UNLOADED & 0xff;
		u[1] = KELF_PT_UNLOADED >> 8 & 0xff;
		u[2] = KELF_PT_UNLOADED >> 16 & 0xff;
		u[3] = KELF_PT_UNLOADED >> 24 & 0xff;
		wr64(u + 16, rd64(p + 16) + cut);        /* p_vaddr */
		wr64(u + 24, rd64(p + 24) + cut);        /* p_paddr */
		wr64(u + 40, rd64(p + 40) - cut);        /* p_memsz */
		wr64(u + 48, 1);                         /* p_align */
		wr64(p + 40, cut);
		if (rd64(p + 32) > cut)
			wr64(p + 32, cut);
		nout++;
	}
	/* the ELF header and the program headers right after it */
	strbuf_add(&o, buf, EHSIZE);
	strbuf_add(&o, ph, (size_t)nout * PHENTSIZE);
	wr64((unsigned char *)o.buf + 32, EHSIZE);        /* e_phoff */
	wr64((unsigned char *)o.buf + 40, 0);             /* e_shoff: no sections */
	o.buf[56] = (char)(nout & 0xff);                  /* e_phnum */
	o.buf[57] = (char)(nout >> 8);
	memset(o.buf + 58, 0, 6);                          /* e_shentsize, e_shnum, e_shstrndx */
	for (unsigned i = 0; i < nout; i++) {
		unsigned char *p = (unsigned char *)o.buf + EHSIZE + (size_t)i * PHENTSIZE;
		int load = rd32(p) == PT_LOAD;
		uint64_t off = rd64(p + 8), vaddr = rd64(p + 16), filesz = rd64(p + 32);
		uint64_t align = rd64(p + 48);
		while (load && filesz && !buf[off + filesz - 1])
			filesz--;
		if (load) {
			/* offset congruent to the address modulo the page */
			while (o.len % PAGE != vaddr % PAGE)
				strbuf_addch(&o, '\0');
			if (align > PAGE)
				align = PAGE;
		} else {
			while (align > 1 && align <= PAGE && o.len % align)
				strbuf_addch(&o, '\0');
		}
		p = (unsigned char *)o.buf + EHSIZE + (size_t)i * PHENTSIZE; /* o.buf moved */
		wr64(p + 8, o.len);
		wr64(p + 32, filesz);
		wr64(p + 48, align);
		strbuf_add(&o, buf + off, (size_t)filesz);
	}
	free(ph);
	strbuf_reset(out);
	strbuf_add(out, o.buf, o.len);
	strbuf_release(&o);
	return 0;
}

int kelf_mem_end(const unsigned char *buf, size_t len, uint64_t *end)
{
	uint64_t phoff;
	unsigned phnum;

	*end = 0;
	if (!is_elf64(buf, len))
		return 0;
	phoff = rd64(buf + 32);
	phnum = rd16(buf + 56);
	if (rd16(buf + 54) != PHENTSIZE || phoff > len || (uint64_t)phnum * PHENTSIZE > len - phoff)
		return -1;
	for (unsigned i = 0; i < phnum; i++) {
		const unsigned char *p = buf + phoff + (uint64_t)i * PHENTSIZE;
		uint64_t paddr = rd64(p + 24), memsz = rd64(p + 40);
		uint32_t type = rd32(p);
		if ((type == PT_LOAD || type == KELF_PT_UNLOADED) && paddr + memsz > *end)
			*end = paddr + memsz;
	}
	return 1;
}

int kelf_mem_end_file(const char *path, uint64_t *end)
{
	unsigned char h[EHSIZE + 64 * PHENTSIZE];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	*end = 0;
	if (fd < 0)
		return 0;
	n = pread(fd, h, sizeof(h), 0);
	close(fd);
	return n > 0 ? kelf_mem_end(h, (size_t)n, end) : 0;
}
