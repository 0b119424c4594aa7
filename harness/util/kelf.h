/*
 * An x86-64 kernel's ELF vmlinux as kexec carries it inside a VM. The
 * initramfs builder on the controller (harness/targets/initramfs.c) stores
 * the kernel trimmed (kelf_trim); the agent in the guest
 * (harness/agent/agent.c) reads back how much memory that kernel occupies
 * (kelf_mem_end) to keep the initrd kexec loads clear of it. Both sides
 * must agree on the one program header type defined here.
 */
#ifndef SL_KELF_H
#define SL_KELF_H

#include <stddef.h>
#include <stdint.h>

#include "harness/util/strbuf.h"

/*
 * A program header in the OS-specific range (PT_LOOS..PT_HIOS) for memory
 * the kernel occupies that the file does not load: its .bss, .brk and
 * .init.scratch, which the kernel clears itself (clear_bss) or uses as a
 * work area, cut off the end of their PT_LOAD segment by kelf_trim.
 * p_paddr/p_vaddr/p_memsz say where; p_filesz is 0. Loaders that do not
 * know the type ignore it, as they ignore PT_NOTE.
 */
#define KELF_PT_UNLOADED 0x6c530001u

/*
 * A little-endian ELF64 executable in buf, rewritten into out:
 *  - the zero bytes at the end of every PT_LOAD segment are left out of the
 *    file (p_filesz shrinks; p_memsz stays: a loader zero-fills the rest);
 *  - when buf has section headers naming ".bss", and everything from .bss to
 *    the end of its PT_LOAD segment is .bss, .brk or .init.scratch (a Linux
 *    x86 kernel's layout), that tail is cut from the segment's p_memsz too
 *    and described by a KELF_PT_UNLOADED header instead: a kernel clears
 *    those itself, as it must after the bzImage's decompressor, which never
 *    zeroes them, and kexec then need not copy them (21 of 58 MB for
 *    Debian's 6.1);
 *  - segments at page-aligned offsets congruent to their addresses, other
 *    program headers' data (notes) copied, no section headers.
 * Trimming the result again gives the same bytes. -1 when buf is not such
 * a file (out untouched).
 */
int kelf_trim(const unsigned char *buf, size_t len, struct strbuf *out);

/*
 * The highest physical address an ELF64 kernel occupies: the end of its
 * PT_LOAD and KELF_PT_UNLOADED headers. 1 with *end set for an ELF64, 0 for
 * anything else (a bzImage), -1 for an ELF64 whose program headers lie
 * outside len. buf holds at least the ELF header; the program headers are
 * read from it when they lie inside len.
 */
int kelf_mem_end(const unsigned char *buf, size_t len, uint64_t *end);

/* the same for a file: 1, 0 (not an ELF64, or unreadable), -1 */
int kelf_mem_end_file(const char *path, uint64_t *end);

#endif
